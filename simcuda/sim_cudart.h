/*
 * sim_cudart.h — the internal interface between the files of the simulated
 * libcudart.so.13 (docs/simcuda.md is the user's manual). Nothing here is
 * exported: the library's version script (cudart.map) exports cuda* and
 * __cuda* only, and every declaration below is hidden.
 *
 * The runtime, by concern:
 *   sim_timeline.c  the simulated device: its clock waits, the streams' queues
 *                   (tails), scheduling an op, the device lock and memory lock
 *   sim_call.c      the frame of every API call (enter/exit, API records and
 *                   callbacks, the last error), driver start and exit
 *   sim_truth_writer.c     the ground-truth file (SIMCUDA_TRUTH), one writer a line type
 *   sim_register.c  what nvcc registers before main (fat binaries, kernels,
 *                   __device__ variables), kernel lookup, launch configurations
 *   sim_launch.c    kernel launches and host functions
 *   sim_replay.c    a launch under CUPTI's range profiler: kernel replay
 *   sim_copy.c      copies and sets
 *   sim_memory.c    allocations and the memory kind of an address
 *   sim_stream.c    streams, events and the synchronizing calls
 *   sim_graph.c     CUDA graphs: capture, instantiate, launch
 *   sim_device.c    device count, versions, error names, reset, profiler
 *   sim_attributes.c  the device attribute table, cudaGetDeviceProperties (H200)
 *   sim_api_host.c  host registration, mapped memory, device flags, pointer queries
 *   sim_api_exec.c  function attributes, occupancy, stream callbacks, priorities
 *   sim_graph_build.c  explicit graph construction, clone, node queries, exec update
 *   sim_unsupported.c  the rest of libcudart.so.13: cudaErrorNotSupported, with
 *                   its stubs in sim_unsupported_stubs.c (list: gen-exports.sh)
 *   sim_config.c    the cost model (sim_config.h), a pure parser
 *
 * Model: one device, one primary context. "Device" memory is host memory, so
 * copies and sets move real bytes at call time; a kernel runs its host body
 * `simcuda_kernel_<plain name>` (looked up in the process with dlsym) at
 * launch time when one exists, and otherwise changes nothing. Times: every op
 * gets start = max(API return + launch_latency_ns, end of what it must follow
 * on the timeline) and end = start + its cost; waits really wait on CUPTI's
 * clock (simcupti_now()).
 *
 * Threads: application threads (any number) call every entry point, plus the
 * registration calls nvcc emits into static constructors before main(); a
 * detached thread per cudaLaunchHostFunc runs the host function.
 *
 * Locks: g_dev.mx guards the timeline (streams, events, graphs' node lists,
 * the registries of kernels, variables and allocations); it is never held
 * while waiting, spinning or calling out to CUPTI or the client. The truth
 * file has its own lock (sim_truth_writer.c). g_mem_mx is the device's memory:
 * every op that moves bytes in device memory at call time (a copy, a set, a
 * kernel's host body, also at graph launch) does so under it, whole, so ops
 * issued by several host threads at once are applied one after another as
 * the device would run them, never interleaved byte by byte (a data race the
 * real program does not have: its host threads never touch device memory).
 * It is a leaf lock: nothing else is taken while it is held.
 *
 * Invariant: a stream's tail_end only grows (except by a clock rebase, which
 * shifts every stored time by the same delta).
 */
#ifndef SIM_CUDART_H
#define SIM_CUDART_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>
#include <cupti.h>

#include "sim_config.h"
#include "sim_internal.h"

/* The runtime's entry points: exported (the version script picks them). */
#define SIM_EXPORT __attribute__((visibility("default")))
#define SIM_LEGACY_STREAM_ID 7u
#define SIM_INVALID 0xffffffffu
#define SIM_RT(x) CUPTI_RUNTIME_TRACE_CBID_##x
#define SIM_DRV(x) CUPTI_DRIVER_TRACE_CBID_##x

#pragma GCC visibility push(hidden)

/* ---- the device's state (sim_timeline.c) ------------------------------------- */

struct sim_stream {
	uint32_t id;
	int device; /* the device it belongs to (0..devices-1) */
	int legacy, nonblocking, destroyed;
	uint64_t tail_end;  /* end of the last op on this stream */
	uint32_t tail_corr; /* its correlation id (the CUPTI record's) */
	struct sim_hostfn *hostfn_next; /* the host function its worker runs next */
	int hostfn_worker;              /* its worker thread exists (sim_launch.c) */
	uint32_t hostfn_pending; /* host functions placed on it that have not
	                            returned: the stream is held until they do
	                            (tail_end is then their start, not their end) */
	struct sim_graph *capture; /* graph being captured (sim_graph.c), under g_dev.mx */
	struct sim_stream *next;
};

struct sim_event {
	uint32_t id;
	unsigned flags;
	int recorded;
	uint64_t ts;   /* when the work before it finished */
	uint32_t corr; /* the op that finished last before it */
};

typedef void (*sim_body_fn)(dim3 grid, dim3 block, void **args);

/* A registered kernel (sim_register.c). */
struct sim_func {
	const void *host_fun;
	char *mangled, *plain;
	int resolved; /* body + rule looked up (under g_dev.mx) */
	sim_body_fn body;
	const struct sim_kernel_rule *rule;
	struct sim_func *next;
};

struct sim_alloc {
	void *p;
	size_t n;
	int pinned; /* 0 = device, 1 = cudaMallocHost/HostAlloc, 2 = a pinned (registered) range */
	struct sim_alloc *next;
};

/* A registered __device__ variable: its host shadow. */
struct sim_var {
	const void *host_var;
	size_t size;
	struct sim_var *next;
};

/* One op pending on a device (the launch queue, sim_timeline.c). */
struct sim_pending {
	uint64_t end;
	uint32_t corr;
};

struct sim_dev {
	pthread_mutex_t mx;
	pthread_cond_t hostfn_done; /* a host function returned (with mx) */
	pthread_cond_t hostfn_work; /* a host function was handed to a worker (with mx) */
	struct sim_stream legacy[SIM_MAX_DEVICES]; /* each device's legacy default stream */
	struct {                                    /* each device's pending ops: a min-heap by end */
		struct sim_pending *v;
		size_t n, cap;
	} queue[SIM_MAX_DEVICES];
	struct sim_stream *streams; /* all non-legacy streams, incl. per-thread */
	struct sim_func *funcs;
	struct sim_alloc *allocs;
	struct sim_var *vars;
	uint32_t next_stream_id, next_event_id;
	int64_t grid_id;
};

extern struct sim_dev g_dev;
/* The device's memory (see "Locks" above); leaf lock. */
extern pthread_mutex_t g_mem_mx;

struct sim_call;

/* Busy-wait until CUPTI's clock reaches t (host cost really spent). */
void sim_timeline_spin_until(uint64_t t);
/* Block until CUPTI's clock reaches t: sleep most of it, spin the end. */
void sim_timeline_wait_until(uint64_t t);
/* Wait until no host function holds s (its tail_end is then known).
 * Caller holds g_dev.mx (released while waiting). */
void sim_timeline_settle(struct sim_stream *s);
/* A host function placed on s (corr: its call's) returned at `end`: s's
 * tail moves there and waiters wake. Takes g_dev.mx. */
void sim_timeline_hostfn_done(struct sim_stream *s, uint64_t end, uint32_t corr);
static inline uint64_t sim_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}
/* CUPTI's rebase hook: shift every stored stream time by delta. */
void sim_timeline_rebase(int64_t delta);
/* A new stream on the list, on the calling thread's device; NULL when out of memory. */
struct sim_stream *sim_timeline_stream_new(int nonblocking);
/* The calling thread's current device (cudaSetDevice), and setting it
 * (0 or -EINVAL when dev is not below the `devices` key). */
int sim_timeline_device(void);
int sim_timeline_set_device(int dev);
/* Number of simulated devices (the `devices` key). */
int sim_timeline_device_count(void);
/* Device dev's legacy default stream. */
struct sim_stream *sim_timeline_legacy(int dev);
/* The stream an API call means. per_thread: the call is a _ptsz/_ptds twin. */
struct sim_stream *sim_timeline_stream_of(cudaStream_t st, int per_thread);
/* Earliest start on s by ordering, and the op that sets it. Caller holds g_dev.mx. */
uint64_t sim_timeline_deps(struct sim_stream *s, uint32_t *corr);
/* Latest end over every stream of the calling thread's device, and its op. Takes g_dev.mx. */
uint64_t sim_timeline_device_tail(uint32_t *corr);
/* The same for device dev. Takes g_dev.mx. */
uint64_t sim_timeline_dev_tail(int dev, uint32_t *corr);
/*
 * Launch-queue back-pressure (`queue_depth`): before an op that the host
 * enqueues without waiting for it (a launch, an async copy) goes on device
 * dev, block while queue_depth ops are pending there, each wait written by
 * sim_timeline_queue_waited. Returns when the wait ended, or 0 when there was
 * none. Does not hold g_dev.mx while waiting.
 */
uint64_t sim_timeline_queue_admit(int dev, uint32_t api_corr);
/* The one place a queue-full wait is reported (truth "sync" kind
 * "queue_full"); a CUPTI OVERHEAD record (COMMAND_BUFFER_FULL) for the same
 * interval belongs here too. */
void sim_timeline_queue_waited(uint32_t tid, uint64_t start, uint64_t end, uint32_t api_corr,
			       uint32_t waited_corr);
/*
 * Implicit synchronization (`implicit_sync`): the host waits until every op on
 * device dev has ended, and the wait is a truth "sync" line of the given kind
 * over [call start, end of the wait] naming the op it waited for. No line and
 * no wait when nothing is outstanding or the key is 0. Returns when the wait
 * ended, or c->start when there was none (the call's host cost follows it).
 */
uint64_t sim_timeline_implicit_sync(const struct sim_call *c, int dev, const char *kind);
/* Place an op of duration dur on s, not before `earliest`; returns its start,
 * *end its end; the op counts as pending on s's device until it ends (the
 * launch queue). Caller holds g_dev.mx. */
uint64_t sim_timeline_schedule(struct sim_stream *s, uint64_t earliest, uint64_t dur, uint32_t corr,
			       uint64_t *end);

/* ---- the API call frame, driver start (sim_call.c) ---------------------------- */

/* The cost model, loaded at driver start; read-only afterwards. */
extern struct sim_config g_cfg;
/* The calling thread's last error (cudaGetLastError). */
extern __thread cudaError_t t_last_error;

struct sim_call {
	const char *name;          /* runtime function name (truth, callbacks)   */
	CUpti_CallbackId cbid;     /* runtime cbid                                */
	CUpti_CallbackId drv_cbid; /* the driver call inside, 0 = none            */
	uint32_t corr, drv_corr;
	uint64_t start;     /* where the call's own work begins: after CUPTI's overhead */
	uint64_t api_start; /* the runtime call's start (its API record, truth line) */
	uint64_t drv_start;
	const char *symbol; /* kernel name for launches */
	uint64_t corr_data;
	/* CUPTI's overhead interval at entry, its truth line written at exit
	 * (outside the call's records, as CUPTI's own record writing is) */
	uint64_t ovh_start, ovh_end;
	uint32_t ovh_corr, ovh_tid;
	uint64_t entry; /* the runtime function's entry, before any of simcuda's work */
};

/* Enter a runtime call: driver start, correlation ids, enter callbacks.
 * symbol: the kernel name for launches (callback data), else NULL. */
void sim_call_enter_sym(struct sim_call *c, const char *name, CUpti_CallbackId cbid,
			CUpti_CallbackId drv_cbid, const char *symbol);
void sim_call_enter(struct sim_call *c, const char *name, CUpti_CallbackId cbid,
		    CUpti_CallbackId drv_cbid);
/* Leave a runtime call that ends at `end` (0 = now): API records, truth line,
 * exit callbacks, last error. Returns ret. */
cudaError_t sim_call_exit(struct sim_call *c, cudaError_t ret, uint64_t end);
/* Tell the subscriber about the primary context (RESOURCE domain). */
void sim_call_context_event(CUpti_CallbackId cbid);
/* Is the primary context alive (started, not yet torn down at exit)? */
int sim_call_context_alive(void);

/* A plain API call: enter, spend api_ns, leave. */
#define SIM_SIMPLE(fname, cb, drv, ...)                                                  \
	do {                                                                              \
		struct sim_call c_;                                                       \
		sim_call_enter(&c_, fname, CUPTI_RUNTIME_TRACE_CBID_##cb, drv);                 \
		cudaError_t r_ = cudaSuccess;                                             \
		__VA_ARGS__;                                                              \
		sim_timeline_spin_until(c_.start + g_cfg.api_ns);                                \
		return sim_call_exit(&c_, r_, 0);                                              \
	} while (0)

/* ---- the ground truth (sim_truth_writer.c): one function a line type ------------------ */

/* Open SIMCUDA_TRUTH's path for writing; 0 or -errno. */
int sim_truth_open(const char *path);
void sim_truth_flush(void);
/* Stream `stream` belongs to device `device` (the ops' lines name streams). */
void sim_truth_stream(uint32_t stream, int device);
/* simcuda's own time in a call of `name` outside its truth interval (its
 * entry before start, its records, truth line and callbacks after end):
 * summed per name, written at each flush as "outside" lines. */
void sim_truth_outside_add(const char *name, uint64_t ns);
/* write_rt/write_drv: CUPTI's time writing the call's runtime/driver
 * records after `end` (0 when that layer wrote none); rec: the instant
 * after CUPTI's last look at its switches for the call (its runtime
 * record written or not), whatever they said. sim_truth_cupti_kind: a
 * switch flipped at t (simcupti_set_switch_hook). */
void sim_truth_api(const char *name, uint32_t tid, uint64_t start, uint64_t end, uint64_t rec, uint32_t corr,
		   uint64_t write_rt, uint64_t write_drv);
void sim_truth_cupti_kind(const char *kind, int cbid, int on, uint64_t t);
void sim_truth_kernel(const char *name, uint32_t stream, uint64_t start, uint64_t end, uint32_t corr);
/* A host function's run on its stream (corr: the enqueuing call's; fn: the
 * program's function, named by its object and offset). */
void sim_truth_hostfn(const char *call, const void *fn, uint32_t stream, uint64_t start, uint64_t end,
		      uint32_t corr);
/* A launch replayed `replay` times for CUPTI's range profiler (sim_replay.c). */
void sim_truth_kernel_replay(const char *name, uint32_t stream, uint64_t start, uint64_t end, uint32_t corr,
			     unsigned replay);
/* A kernel node of a launched graph: corr is the graph launch's. */
struct sim_truth_node {
	uint32_t graph, graph_orig, capture_corr;
	uint64_t node, node_orig;
};
void sim_truth_graph_kernel(const char *name, uint32_t stream, uint64_t start, uint64_t end,
			    uint32_t corr, const struct sim_truth_node *n);
/* CUPTI's own host time inside the API call api_corr (sim_call.c). */
void sim_truth_overhead(uint32_t tid, uint64_t start, uint64_t end, uint32_t api_corr);
/* CUPTI's clock error (simcupti_clock), written when its origin is set. */
void sim_truth_gpu_clock(int64_t offset_ns, double drift_ppm, uint64_t origin);
void sim_truth_sync(const char *kind, uint32_t tid, uint64_t start, uint64_t end, uint32_t api_corr,
		    uint32_t waited_corr);
void sim_truth_memset(uint32_t stream, uint64_t start, uint64_t end, uint32_t corr, uint32_t api_corr,
		      uint64_t bytes);
/* host_pageable: for a copy to or from the host, 1 when the host memory is
 * pageable, 0 when pinned; -1 otherwise (no "pageable" field). */
void sim_truth_memcpy(const char *kind, uint32_t stream, uint64_t start, uint64_t end, uint32_t corr,
		      uint32_t api_corr, uint64_t bytes, int host_pageable);
/* CUPTI as configured: whether its OVERHEAD kind can be enabled. */
void sim_truth_cupti_config(int overhead_records);

/* ---- registration (sim_register.c) -------------------------------------------- */

/* The kernel registered for a host stub or a cudaKernel_t; NULL if none. */
struct sim_func *sim_register_find(const void *p);
/* Look up f's host body and cost rule once (after the config is loaded). */
void sim_register_resolve(struct sim_func *f);
/* The host shadow of a __device__ symbol at offset, if count bytes fit; else NULL. */
char *sim_register_symbol(const void *symbol, size_t count, size_t offset);

/* ---- launches (sim_launch.c) --------------------------------------------------- */

/* One kernel run placed on the timeline, as its CUPTI record shows it. */
struct sim_kernel_run {
	const struct sim_func *f;
	uint32_t stream_id, corr;
	dim3 grid, block;
	size_t shmem;
	int64_t grid_id;
	uint64_t start, end;
	int device;        /* the device it ran on */
	uint32_t graph_id; /* graph launches: the executable's graph and node ids, else 0 */
	uint64_t graph_node_id;
};
/* A launch made while CUPTI's range profiler runs: kernel replay of `passes`
 * passes, the call returning after them (sim_replay.c). Takes over from
 * sim_launch() after the host body, ends the call. */
cudaError_t sim_replay_launch(struct sim_call *c, struct sim_func *f, struct sim_stream *s, dim3 grid,
			      dim3 block, size_t shmem, uint64_t exec_ns, uint64_t launch_ns, uint64_t t0,
			      unsigned passes);
/* Emit its KERNEL or CONCURRENT_KERNEL record (concurrent: which kind). */
void sim_launch_record(int concurrent, const struct sim_kernel_run *r);
/* Execution time of f over a grid, by the cost model, with its jitter
 * (exec_jitter_pct: one draw from the `seed` sequence per call). */
uint64_t sim_launch_exec_ns(const struct sim_func *f, dim3 grid);

/* ---- memory (sim_memory.c) ----------------------------------------------------- */

/* CUPTI memory kind of an address: DEVICE, PINNED or PAGEABLE. */
uint8_t sim_memory_kind(const void *p);

/* ---- the rest of the runtime API (docs/simcuda.md "Runtime API coverage") ----- */

/* Is the whole host range [p, p+n) page-locked (cudaMallocHost/HostAlloc, or
 * within a cudaHostRegister'ed range)? 1 or 0. Takes g_dev.mx and
 * sim_api_host.c's leaf lock in turn: call with neither held. */
int sim_host_is_pinned(const void *p, size_t n);
/* What a stub of an unimplemented function returns (sim_unsupported.c):
 * cudaErrorNotSupported, logged once per stub (*once). */
int sim_unsupported(const char *name, atomic_int *once);
/* The device's global memory in bytes (sim_attributes.c). */
size_t sim_attributes_global_mem(void);
/* A stream's priority (sim_api_exec.c): 0 unless created with one. */
int sim_exec_stream_priority(const struct sim_stream *s);
/* A host function on a stream, reported as the call `nm` (sim_launch.c);
 * sym: the program's function, for the truth. */
cudaError_t sim_launch_host_fn(cudaStream_t st, cudaHostFn_t fn, void *user, const void *sym, const char *nm,
			       CUpti_CallbackId cbid);

/* ---- graphs (sim_graph.c, sim_graph.h) ----------------------------------------- */

/* A copy or set as a graph node keeps it: rows of width bytes, or a set of
 * width elements of elem bytes (1, 2 or 4) to value a row. */
struct sim_gxfer {
	void *dst;
	const void *src;
	size_t dpitch, spitch, width, height;
	int is_set;
	unsigned value, elem;
};
/* Is s capturing a graph? */
int sim_graph_capturing(struct sim_stream *s);
/* The call c on capturing stream s becomes a memcpy/memset node; leaves c. */
cudaError_t sim_graph_add_xfer(struct sim_call *c, struct sim_stream *s, const struct sim_gxfer *x);
/* ... a host node; leaves c. */
cudaError_t sim_graph_add_host(struct sim_call *c, struct sim_stream *s, cudaHostFn_t fn, void *user);
/* cudaEventRecord of e on s while s captures: 1 (handled: e now stands for
 * s's capture point) or 0 (s is not capturing). */
int sim_graph_capture_record(struct sim_stream *s, struct sim_event *e);
/* cudaStreamWaitEvent(s, e) where e was recorded in a capture: s joins that
 * capture (or adds e's nodes to its dependencies); 1 if handled, else 0. */
int sim_graph_capture_wait(struct sim_stream *s, struct sim_event *e);

/* The launch stream s is capturing: add a kernel node, tell the subscriber,
 * leave the call. The launch's host cost has been spent by the caller. */
cudaError_t sim_graph_add_kernel(struct sim_call *c, struct sim_stream *s, struct sim_func *f, dim3 grid,
				 dim3 block, size_t shmem, void **args);

#pragma GCC visibility pop

#endif
