/*
 * sim_launch.c — kernel launches (<<<>>> through __cudaLaunchKernel, and
 * cudaLaunchKernel / ExC / Cooperative, each with its _ptsz twin), host
 * functions on a stream (cudaLaunchHostFunc), cudaFuncGetName, and the
 * kernel activity record that graph launches (sim_graph.c) share.
 *
 * A launch: enter the call; check the kernel and its configuration; on a
 * capturing stream hand over to sim_graph_add_kernel; otherwise run the host
 * body at once under the device-memory lock, spend launch_ns of host time,
 * place the kernel on its stream (no earlier than return + launch_latency_ns)
 * and emit its KERNEL / CONCURRENT_KERNEL record, ready when it ends, and
 * its truth line. Real-CUDA behaviours (docs/simcuda.md): a launch first
 * passes its device's launch queue (`queue_depth`), and each kernel's time
 * is drawn within +-exec_jitter_pct % of its cost from the `seed` sequence.
 *
 * Threads: application threads, any number; the host functions of a stream
 * run on that stream's worker thread (started with its first one, never
 * ended), each sleeping until its place on the timeline and holding its
 * stream until the function returns (what follows on the stream, and a
 * wait that covers it, waits for that return).
 * Locks: g_dev.mx around scheduling only, g_mem_mx around the host body.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sim_cudart.h"

/* How many jitter draws were made: the n-th kernel gets draw n of `seed`'s
 * sequence, so one program's run is reproducible. */
static _Atomic uint64_t g_jitter_draws;

/* splitmix64: a full-period mix of a counter, enough for uniform draws. */
static uint64_t sim_launch_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* ns drawn uniformly within +-exec_jitter_pct % (0: ns itself). */
static uint64_t sim_launch_jitter(uint64_t ns)
{
	if (!g_cfg.exec_jitter_pct || !ns)
		return ns;
	uint64_t n = atomic_fetch_add_explicit(&g_jitter_draws, 1, memory_order_relaxed);
	double u = (double)(sim_launch_mix(g_cfg.seed * 0x100000001b3ull + n) >> 11) / 9007199254740992.0;
	double f = 1.0 + (double)g_cfg.exec_jitter_pct / 100.0 * (2.0 * u - 1.0);
	return (uint64_t)((double)ns * f + 0.5);
}

uint64_t sim_launch_exec_ns(const struct sim_func *f, dim3 grid)
{
	uint64_t exec_ns = f->rule && f->rule->has_exec ? f->rule->exec_ns : g_cfg.exec_ns;
	if (f->rule && f->rule->exec_per_block_ns) /* work that grows with the grid */
		exec_ns += f->rule->exec_per_block_ns * ((uint64_t)grid.x * grid.y * grid.z - 1);
	return sim_launch_jitter(exec_ns);
}

void sim_launch_record(int concurrent, const struct sim_kernel_run *r)
{
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof k);
	k.kind = concurrent ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL : CUPTI_ACTIVITY_KIND_KERNEL;
	k.start = r->start;
	k.end = r->end;
	k.completed = r->end;
	k.deviceId = (uint32_t)r->device;
	k.contextId = SIM_CONTEXT_ID + (uint32_t)r->device;
	k.streamId = r->stream_id;
	k.gridX = (int32_t)r->grid.x, k.gridY = (int32_t)r->grid.y, k.gridZ = (int32_t)r->grid.z;
	k.blockX = (int32_t)r->block.x, k.blockY = (int32_t)r->block.y, k.blockZ = (int32_t)r->block.z;
	k.dynamicSharedMemory = (int32_t)r->shmem; /* the launch's arguments, and the function's attributes */
	k.staticSharedMemory = r->f->rule ? (int32_t)r->f->rule->static_smem : 0;
	k.registersPerThread = (uint16_t)(r->f->rule && r->f->rule->has_regs ? r->f->rule->regs : SIM_FUNC_REGS);
	k.correlationId = r->corr;
	k.gridId = r->grid_id;
	k.name = r->f->mangled;
	k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
	k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
	k.graphId = r->graph_id;
	k.graphNodeId = r->graph_node_id;
	simcupti_emit(&k, sizeof k, r->end, offsetof(CUpti_ActivityKernel10, start),
		      offsetof(CUpti_ActivityKernel10, end), offsetof(CUpti_ActivityKernel10, completed));
}

/* Is the stream an API call means capturing a graph? */
static int sim_launch_capturing(struct sim_stream *s)
{
	pthread_mutex_lock(&g_dev.mx);
	int capturing = s->capture != NULL;
	pthread_mutex_unlock(&g_dev.mx);
	return capturing;
}

static cudaError_t sim_launch(const void *fn, dim3 grid, dim3 block, void **args, size_t shmem,
			      cudaStream_t st, int per_thread, const char *name, CUpti_CallbackId cbid,
			      CUpti_CallbackId drv_cbid)
{
	uint64_t entry = simcupti_now(); /* the function's lookup is the call's time too */
	struct sim_func *f = sim_register_find(fn);
	struct sim_call c;
	sim_call_enter_sym(&c, name, cbid, drv_cbid, f ? f->mangled : NULL);
	c.entry = entry;
	if (!f) {
		sim_timeline_spin_until(c.start + g_cfg.api_ns);
		return sim_call_exit(&c, cudaErrorInvalidDeviceFunction, 0);
	}
	sim_register_resolve(f); /* after driver start: the cost model is loaded */
	if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0) {
		sim_timeline_spin_until(c.start + g_cfg.api_ns);
		return sim_call_exit(&c, cudaErrorInvalidConfiguration, 0);
	}
	uint64_t launch_ns = f->rule && f->rule->has_launch ? f->rule->launch_ns : g_cfg.launch_ns;
	struct sim_stream *s = sim_timeline_stream_of(st, per_thread);
	if (sim_launch_capturing(s)) { /* a capturing stream records a graph node instead */
		sim_timeline_spin_until(c.start + launch_ns);
		/* nvcc's <<<>>> stubs pass an argument array on their own
		 * stack frame: only caller-owned arrays are kept */
		return sim_graph_add_kernel(&c, s, f, grid, block, shmem, name[0] == '_' ? NULL : args);
	}
	uint64_t exec_ns = sim_launch_exec_ns(f, grid);
	/* a full launch queue blocks the host before the launch's own cost */
	uint64_t t0 = sim_timeline_queue_admit(s->device, c.corr);
	if (!t0)
		t0 = c.start;
	if (f->body) { /* device code: one op at a time on device memory */
		pthread_mutex_lock(&g_mem_mx);
		f->body(grid, block, args);
		pthread_mutex_unlock(&g_mem_mx);
	}
	unsigned passes = simcupti_profiler_passes(s->device);
	if (passes) /* CUPTI's range profiler is on: kernel replay (sim_replay.c) */
		return sim_replay_launch(&c, f, s, grid, block, shmem, exec_ns, launch_ns, t0, passes);
	sim_timeline_spin_until(t0 + launch_ns);
	uint64_t end = simcupti_now();
	struct sim_kernel_run r = {.f = f, .stream_id = s->id, .corr = c.corr, .grid = grid, .block = block,
				   .shmem = shmem, .device = s->device};
	pthread_mutex_lock(&g_dev.mx);
	r.start = sim_timeline_schedule(s, end + g_cfg.launch_latency_ns, exec_ns, c.corr, &r.end);
	r.grid_id = ++g_dev.grid_id;
	pthread_mutex_unlock(&g_dev.mx);
	int ck = simcupti_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (ck || simcupti_enabled(CUPTI_ACTIVITY_KIND_KERNEL))
		sim_launch_record(ck, &r);
	sim_truth_kernel(f->mangled, s->id, r.start, r.end, c.corr);
	return sim_call_exit(&c, cudaSuccess, end);
}

SIM_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
					  size_t sharedMem, cudaStream_t stream)
{
	return sim_launch(kernel, gridDim, blockDim, args, sharedMem, stream, 0,
			  "__cudaLaunchKernel", SIM_RT(__cudaLaunchKernel_v13000), SIM_DRV(cuLaunchKernel));
}

SIM_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
					       void **args, size_t sharedMem, cudaStream_t stream)
{
	return sim_launch(kernel, gridDim, blockDim, args, sharedMem, stream, 1,
			  "__cudaLaunchKernel_ptsz", SIM_RT(__cudaLaunchKernel_ptsz_v13000),
			  SIM_DRV(cuLaunchKernel_ptsz));
}

SIM_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
					size_t sharedMem, cudaStream_t stream)
{
	return sim_launch(func, gridDim, blockDim, args, sharedMem, stream, 0,
			  "cudaLaunchKernel", SIM_RT(cudaLaunchKernel_v7000), SIM_DRV(cuLaunchKernel));
}

SIM_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
					     size_t sharedMem, cudaStream_t stream)
{
	return sim_launch(func, gridDim, blockDim, args, sharedMem, stream, 1,
			  "cudaLaunchKernel_ptsz", SIM_RT(cudaLaunchKernel_ptsz_v7000),
			  SIM_DRV(cuLaunchKernel_ptsz));
}

SIM_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
	if (!config)
		return t_last_error = cudaErrorInvalidValue;
	return sim_launch(func, config->gridDim, config->blockDim, args,
			  config->dynamicSmemBytes, config->stream, 0, "cudaLaunchKernelExC",
			  SIM_RT(cudaLaunchKernelExC_v11060), SIM_DRV(cuLaunchKernelEx));
}

SIM_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
						void **args)
{
	if (!config)
		return t_last_error = cudaErrorInvalidValue;
	return sim_launch(func, config->gridDim, config->blockDim, args,
			  config->dynamicSmemBytes, config->stream, 1, "cudaLaunchKernelExC_ptsz",
			  SIM_RT(cudaLaunchKernelExC_ptsz_v11060), SIM_DRV(cuLaunchKernelEx_ptsz));
}

SIM_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim,
						   void **args, size_t sharedMem, cudaStream_t stream)
{
	return sim_launch(func, gridDim, blockDim, args, sharedMem, stream, 0,
			  "cudaLaunchCooperativeKernel", SIM_RT(cudaLaunchCooperativeKernel_v9000),
			  SIM_DRV(cuLaunchCooperativeKernel));
}

SIM_EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
							void **args, size_t sharedMem, cudaStream_t stream)
{
	return sim_launch(func, gridDim, blockDim, args, sharedMem, stream, 1,
			  "cudaLaunchCooperativeKernel_ptsz",
			  SIM_RT(cudaLaunchCooperativeKernel_ptsz_v9000),
			  SIM_DRV(cuLaunchCooperativeKernel_ptsz));
}

struct sim_hostfn {
	cudaHostFn_t fn;
	void *user;
	uint64_t at;
	struct sim_stream *s;
	uint32_t corr;
	const char *call;
	const void *sym; /* the program's function (a stream callback's, not its adapter) */
};

/* A stream's host-function worker, as CUDA runs callbacks on a thread of
 * its own that lives on: each host function at its place on the stream,
 * holding the stream until it returns (sim_timeline_hostfn_done), and when
 * it ran in the truth. At most one is handed over at a time (placing the
 * next waits until the stream is no longer held). Never ends: streams are
 * never freed. */
static void *sim_hostfn_main(void *arg)
{
	struct sim_stream *s = arg;
	for (;;) {
		pthread_mutex_lock(&g_dev.mx);
		while (!s->hostfn_next)
			pthread_cond_wait(&g_dev.hostfn_work, &g_dev.mx);
		struct sim_hostfn *h = s->hostfn_next;
		s->hostfn_next = NULL;
		pthread_mutex_unlock(&g_dev.mx);
		sim_timeline_wait_until(h->at);
		uint64_t start = simcupti_now();
		h->fn(h->user);
		uint64_t end = simcupti_now();
		sim_truth_hostfn(h->call, h->sym, s->id, start, end, h->corr);
		sim_timeline_hostfn_done(s, end, h->corr);
		free(h);
	}
	return NULL;
}

/* Hand h to its stream's worker, starting the worker the first time.
 * Caller holds g_dev.mx. 0, or an error of pthread_create. */
static int sim_hostfn_hand(struct sim_stream *s, struct sim_hostfn *h)
{
	if (!s->hostfn_worker) {
		pthread_t t;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		int rc = pthread_create(&t, &at, sim_hostfn_main, s);
		pthread_attr_destroy(&at);
		if (rc != 0)
			return rc;
		s->hostfn_worker = 1;
	}
	s->hostfn_next = h;
	pthread_cond_broadcast(&g_dev.hostfn_work);
	return 0;
}

static cudaError_t sim_host_func(cudaStream_t st, cudaHostFn_t fn, void *user, const void *sym, int per_thread,
				 const char *name, CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_call_enter(&c, name, cbid,
		       per_thread ? SIM_DRV(cuLaunchHostFunc_ptsz) : SIM_DRV(cuLaunchHostFunc));
	sim_timeline_spin_until(c.start + g_cfg.launch_ns);
	uint64_t end = simcupti_now();
	if (!fn)
		return sim_call_exit(&c, cudaErrorInvalidValue, end);
	if (sim_graph_capturing(sim_timeline_stream_of(st, per_thread))) /* a host node (sim_graph.c) */
		return sim_graph_add_host(&c, sim_timeline_stream_of(st, per_thread), fn, user);
	struct sim_hostfn *h = malloc(sizeof *h);
	if (!h)
		return sim_call_exit(&c, cudaErrorMemoryAllocation, end);
	struct sim_stream *s = sim_timeline_stream_of(st, per_thread);
	h->fn = fn;
	h->user = user;
	h->s = s;
	h->corr = c.corr;
	h->call = name;
	h->sym = sym;
	/* placed and marked pending before its worker can end it; placing
	 * settled the stream, so its worker holds nothing */
	pthread_mutex_lock(&g_dev.mx);
	uint64_t hend;
	h->at = sim_timeline_schedule(s, end + g_cfg.launch_latency_ns, 0, c.corr, &hend);
	s->hostfn_pending++;
	int rc = sim_hostfn_hand(s, h);
	if (rc != 0)
		s->hostfn_pending--; /* tail_end stays its start: an op of no length */
	pthread_mutex_unlock(&g_dev.mx);
	if (rc != 0) {
		free(h);
		return sim_call_exit(&c, cudaErrorMemoryAllocation, end);
	}
	return sim_call_exit(&c, cudaSuccess, end);
}

SIM_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	return sim_host_func(stream, fn, userData, (const void *)fn, 0, "cudaLaunchHostFunc",
			     SIM_RT(cudaLaunchHostFunc_v10000));
}

SIM_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	return sim_host_func(stream, fn, userData, (const void *)fn, 1, "cudaLaunchHostFunc_ptsz",
			     SIM_RT(cudaLaunchHostFunc_ptsz_v10000));
}

SIM_EXPORT cudaError_t cudaFuncGetName(const char **name, const void *func)
{
	struct sim_func *f = sim_register_find(func);
	SIM_SIMPLE("cudaFuncGetName", cudaFuncGetName_v12030, SIM_DRV(cuFuncGetName), {
		if (!name || !f)
			r_ = name ? cudaErrorInvalidDeviceFunction : cudaErrorInvalidValue;
		else
			*name = f->mangled;
	});
}

/* cudaStreamAddCallback (sim_api_exec.c) is a host function under its own name. */
cudaError_t sim_launch_host_fn(cudaStream_t st, cudaHostFn_t fn, void *user, const void *sym, const char *nm,
			       CUpti_CallbackId cbid)
{
	return sim_host_func(st, fn, user, sym, 0, nm, cbid);
}
