/*
 * sim_replay.c — a kernel launch made while CUPTI's range profiler is
 * started (sim_profiler.c): kernel replay, as CUPTI's CUPTI_KernelReplay
 * runs it. The launch is serialized (its op starts once every op already
 * placed on its device has ended), runs `passes` times back to back (one
 * op on the timeline spanning every pass, one KERNEL record for it), and
 * the launch call returns only when the last pass has ended. Its work (the
 * cost-model rule's flops / bytes / tensor_pct, one pass's time) goes to
 * the profiler as one range; its truth line is a kernel line with
 * "replay": passes, so a test can tell replayed launches from the others.
 *
 * Called by sim_launch() (sim_launch.c) on the launching application
 * thread, after the kernel's host body ran. Locks: g_dev.mx around
 * scheduling only (as sim_launch.c).
 */
#include <pthread.h>
#include <string.h>

#include "sim_cudart.h"

cudaError_t sim_replay_launch(struct sim_call *c, struct sim_func *f, struct sim_stream *s, dim3 grid,
			      dim3 block, size_t shmem, uint64_t exec_ns, uint64_t launch_ns, uint64_t t0,
			      unsigned passes)
{
	sim_timeline_spin_until(t0 + launch_ns);
	uint64_t issued = simcupti_now();
	uint32_t dc;
	/* serialized: after everything already placed on the device */
	uint64_t idle = sim_timeline_dev_tail(s->device, &dc);
	struct sim_kernel_run r = {.f = f, .stream_id = s->id, .corr = c->corr, .grid = grid, .block = block,
				   .shmem = shmem, .device = s->device};
	uint64_t earliest = issued + g_cfg.launch_latency_ns;
	pthread_mutex_lock(&g_dev.mx);
	r.start = sim_timeline_schedule(s, earliest > idle ? earliest : idle, exec_ns * passes, c->corr, &r.end);
	r.grid_id = ++g_dev.grid_id;
	pthread_mutex_unlock(&g_dev.mx);
	int ck = simcupti_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (ck || simcupti_enabled(CUPTI_ACTIVITY_KIND_KERNEL))
		sim_launch_record(ck, &r);
	sim_truth_kernel_replay(f->mangled, s->id, r.start, r.end, c->corr, passes);
	const struct sim_kernel_rule *k = f->rule;
	struct simcupti_kernel_work w = {
		.name = f->mangled,
		.device = s->device,
		.corr = c->corr,
		.pass_ns = exec_ns,
		.flops = {k ? k->flops_fp64 : 0, k ? k->flops : 0, k ? k->flops_fp16 : 0},
		.bytes = k ? k->bytes : 0,
		.tensor_pct = k ? k->tensor_pct : 0,
		.peak_gflops = g_cfg.peak_gflops,
		.peak_gbps = g_cfg.peak_gbps,
	};
	simcupti_profiler_range(&w);
	sim_timeline_wait_until(r.end); /* the call returns after the replay */
	return sim_call_exit(c, cudaSuccess, simcupti_now());
}
