/*
 * sim_internal.h — the private interface between the two simcuda libraries.
 *
 * libcupti.so.13 owns everything CUPTI: the clock, correlation ids, the
 * activity buffers and their delivery thread, external correlation stacks
 * and the callback subscriber. libcudart.so.13 owns the simulated device
 * timeline and calls into libcupti through the functions below (exported
 * under the version node SIMCUDA_PRIVATE, never part of any real CUDA API).
 * Any thread may call any of them; each is thread-safe.
 *
 * simcuda's files (docs/simcuda.md "Sources"):
 *   libcupti.so.13 (sim_cupti_state.h: their shared state)
 *     sim_cupti.c           CUPTI's clock and ids, external correlation, API
 *                           and overhead records, last error, finalize
 *     sim_cupti_buffers.c   staging, client buffers, the delivery thread, flushes
 *     sim_cupti_kinds.c     activity kinds and per-cbid API record switches
 *     sim_cupti_callback.c  the callback API (one subscriber), callback names
 *     sim_profiler.c        the profiling API: Range Profiler, Profiler Host
 *   libcudart.so.13 (sim_cudart.h: their jobs, threads and locks)
 *     sim_timeline.c sim_call.c sim_truth_writer.c sim_register.c
 *     sim_launch.c sim_replay.c sim_copy.c sim_memory.c sim_stream.c
 *     sim_graph.c sim_graph_build.c sim_device.c sim_attributes.c
 *     sim_api_host.c sim_api_exec.c sim_unsupported.c
 *     sim_unsupported_stubs.c sim_config.c (the cost model, also linked by
 *     the in-process tests)
 *   $(B)/lib/libsimtruth.a, for tests
 *     sim_truth_reader.c    reads back what sim_truth_writer.c wrote
 *
 * Invariant: every timestamp passed in or out is on CUPTI's current clock
 * (simcupti_now()); when a client registers a timestamp callback the clock
 * changes and libcupti calls the rebase hook so the timeline follows.
 */
#ifndef SIM_INTERNAL_H
#define SIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <cupti.h>

#define SIM_NO_OFF 0xffffu

/* Now on CUPTI's clock (CLOCK_REALTIME ns, or the registered callback). */
uint64_t simcupti_now(void);
/* The last clock switch's delta, new clock minus old (0 before any): a time
 * taken before the switch is that far off the clock after it. */
int64_t simcupti_last_rebase(void);
/* Next correlation id (shared by runtime and driver calls); never 0. */
uint32_t simcupti_next_corr(void);
/* Thread id as CUPTI reports it (honours cuptiSetThreadIdType). */
uint32_t simcupti_thread_id(void);
/* Is activity kind k enabled? Cheap (one relaxed load). */
int simcupti_enabled(CUpti_ActivityKind k);
/*
 * Queue one activity record (copied). It becomes deliverable once the clock
 * reaches ready_at (0 = now). start_off/end_off/completed_off are the byte
 * offsets of its uint64 timestamps (SIM_NO_OFF if absent); a forced flush
 * delivers a not-yet-ready record with end (and completed) = 0, and start = 0
 * when it has not started, and never delivers it again.
 */
void simcupti_emit(const void *rec, size_t size, uint64_t ready_at,
		   unsigned start_off, unsigned end_off, unsigned completed_off);
/*
 * Record one API call: EXTERNAL_CORRELATION records for every kind with an id
 * pushed on this thread (if that kind is enabled), then the RUNTIME or DRIVER
 * record — only if `kind` is enabled and (for RUNTIME/DRIVER) not switched off
 * per cbid by cuptiActivityEnableRuntimeApi/DriverApi. Returns 1 when the
 * API record was written, else 0.
 */
int simcupti_emit_api(CUpti_ActivityKind kind, CUpti_CallbackId cbid,
		      uint64_t start, uint64_t end, uint32_t corr, uint32_t ret);
/*
 * Would an API record of this kind (RUNTIME or DRIVER) and cbid be produced?
 * The kind's switch, overridden per cbid by cuptiActivityEnableRuntimeApi /
 * DriverApi when those were called after it. Cheap (relaxed loads).
 */
int simcupti_api_traced(CUpti_ActivityKind kind, CUpti_CallbackId cbid);
/* External-correlation records that each API record of the calling thread
 * brings now: one per kind with a pushed id, 0 while the kind is off. */
int simcupti_ext_records(void);
/*
 * CUPTI's own host time on thread tid over [start, end], inside the API call
 * api_corr: one CUPTI_ACTIVITY_KIND_OVERHEAD record (CUpti_ActivityOverhead3,
 * object = the thread) when that kind is enabled. overhead_kind is a
 * CUpti_ActivityOverheadKind: CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION
 * (sim_call.c), or CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL for a launch
 * that waited for room in the device's queue (its overheadData then points
 * at a malloc'd CUpti_ActivityOverheadCommandBufferFullData the client
 * frees, as with real CUPTI). Writes no truth line: the caller does.
 */
void simcupti_overhead(uint32_t tid, int overhead_kind, uint64_t start, uint64_t end,
		       uint32_t api_corr);
/* The cost model's CUPTI keys (docs/simcuda.md "CUPTI"), handed over by the
 * runtime at driver start, before the injection runs. */
struct simcupti_params {
	uint64_t delivery_delay_ns;
	int64_t clock_offset_ns;
	double clock_drift_ppm;
	uint64_t buffer_records;
	int no_overhead_kind; /* refuse CUPTI_ACTIVITY_KIND_OVERHEAD (cupti_overhead_records 0) */
};
void simcupti_configure(const struct simcupti_params *p);
/* CUPTI's clock error as applied now: a GPU-side host time t is delivered as
 * t + *offset_ns + round((t - *origin) * *drift_ppm / 1e6) (the origin moves
 * with a timestamp callback's rebase). For the truth's "gpu_clock" line. */
void simcupti_clock(int64_t *offset_ns, double *drift_ppm, uint64_t *origin);
/* Call the subscriber's callback if (domain, cbid) is enabled. */
void simcupti_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		       const void *data);
/* Is (domain, cbid) enabled for the subscriber? */
int simcupti_callback_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
/* At exit: can the CUPTI lock be taken (within 1 s)? 0 when this thread
 * holds it (exit() from a signal handler on top of a simcuda call) or it
 * stays held: the exit handler then delivers no context-destroy event. */
int simcupti_lock_settles(void);
/* libcudart registers this: add delta to every stored timeline time. */
void simcupti_set_rebase_hook(void (*hook)(int64_t delta));
/* libcudart registers this: an activity kind (cbid -1) or a per-cbid API
 * switch (kind "RUNTIME"/"DRIVER", cbid >= 0) went on or off at t (CUPTI's
 * clock), for the truth's "cupti_kind" lines. Called under libcupti's lock;
 * at registration once for each switch already on. */
void simcupti_set_switch_hook(void (*hook)(const char *kind, int cbid, int on, uint64_t t));
/* The simulated context handle and ids (one device, one primary context). */
CUcontext simcupti_context(void);
/*
 * The range profiler (sim_profiler.c, docs/simcuda.md "Profiling API"):
 * kernel replay of the launches made while a range profiler is started.
 * simcupti_profiler_passes: the replay passes (>= 1) a kernel launched now
 * on device dev takes, 0 when the launch is not profiled. A profiled
 * launch then reports its work (one pass) with simcupti_profiler_range,
 * which records a range of the started session (or counts it dropped).
 */
struct simcupti_kernel_work {
	const char *name;            /* the kernel's mangled name            */
	int device;
	uint32_t corr;
	uint64_t pass_ns;            /* one pass's execution time            */
	uint64_t flops[3];           /* FP64, FP32, FP16 FLOPs               */
	uint64_t bytes;              /* DRAM bytes read + written            */
	uint64_t tensor_pct;         /* tensor pipe active, % of its peak    */
	double peak_gflops, peak_gbps; /* the device's (FP32, DRAM)          */
};
unsigned simcupti_profiler_passes(int dev);
void simcupti_profiler_range(const struct simcupti_kernel_work *w);
/* Simulated graph objects (sim_graph.c): a CUgraph points at a struct whose
 * first field is its uint32_t graph id, a CUgraphNode at one whose first field
 * is its uint64_t node id; cuptiGetGraphId / cuptiGetGraphNodeId read them. */
#define SIM_CONTEXT_ID 1u
#define SIM_DEVICE_ID 0u

#endif
