/*
 * analysis.h — the report's analysis core: join, phase attribution and
 * aggregation over record groups from any source (a trace file through
 * gp_reader, or arrays built by tests). No I/O here.
 *
 * Protocol (one analyser per trace; corr ids are per process):
 *   an = gp_an_new(&cfg);
 *   for every group: gp_an_scan1(an, rec, nslots);   pass 1
 *   gp_an_prepare(an);
 *   for every group, same order: gp_an_scan2(an, rec, nslots);   pass 2
 *   gp_an_finish(an, &rep);   fills a gp_rep (aggregates only)
 *
 * Analyses (analyses/registry.h) never read records: the core decodes each record
 * kind once and hands the decoded view (struct gp_an_rec) of the kinds they
 * asked for to cfg.on_rec, in pass order, after its own use of the record;
 * they read the rest through the accessors below.
 *
 * Pass 1 collects what is small and needed before ops are attributed:
 * strings, API names, devices, status, drops, host samples, stacks and
 * symbols, iteration marks. Pass 2 joins and folds every GPU op into
 * per-group and per-iteration sums as soon as its records are complete, and
 * charges each blocking interval to the op it waited for through bounded
 * buffers (the last 65536 ops, a 65536-op wait horizon). Memory grows with
 * distinct groups, strings, stacks and iterations plus the join lag, not
 * with the number of records. docs/metrics.md defines every number.
 *
 * Single-threaded. Errors: functions return 0 or -errno (-ENOMEM); nothing
 * here prints, exits or aborts.
 */
#ifndef GP_REPORT_ANALYSIS_H
#define GP_REPORT_ANALYSIS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gp_format.h"
#include "rep.h"
#include "report/util/stats.h"
#include "report/util/strtab.h"

enum gp_group_by { GP_GROUP_KERNEL = 0, GP_GROUP_NVTX, GP_GROUP_CALLSITE, GP_GROUP_STREAM, GP_GROUP_PHASE };

/* GP_OP_HOST_CALLBACK: a host function's run on its stream (GP_REC_HOST_CALLBACK):
 * gpu_start/gpu_end are its run on the host clock, never GPU busy time. */
enum gp_op_kind { GP_OP_KERNEL = 1, GP_OP_MEMCPY, GP_OP_MEMSET, GP_OP_HOOK_ONLY, GP_OP_HOST_CALLBACK };
/* A host callback op's corr: its enqueuing call's hook op id with this bit
 * set, apart from CUPTI's correlation ids (both count from 1), which the
 * waits match ops by. */
#define GP_OP_CORR_HOST_CALLBACK 0x80000000u

/* One joined GPU operation, handed to the optional op sink (exports). */
struct gp_an_op {
	uint8_t kind;          /* enum gp_op_kind                                */
	uint8_t device;
	uint8_t has_api;       /* launch phase measured                          */
	uint8_t has_gpu;       /* queue and execute measured                     */
	uint8_t has_hook;
	uint8_t api_class;     /* enum gp_api_class of the launching call        */
	uint8_t copy_kind;
	uint8_t pageable;      /* memcpy whose host side is pageable memory (the
	                          trace's GP_COPYF_PAGEABLE; 0: not pageable, or
	                          not a memcpy)                                 */
	uint8_t blocking;      /* the call returned only after this op ended (a
	                          blocking copy/set, an async copy on pageable
	                          memory): its execute leaves its launch (§2)    */
	uint8_t nvtx_phase;    /* --group-by phase only: an open NVTX range said backward (1) / optimizer (2) */
	uint32_t stream;       /* CUPTI stream id (hook stream handle if hook-only) */
	uint32_t corr;         /* join key (runtime corr; driver corr if none)   */
	uint32_t tid;          /* launching thread (0 = unknown)                 */
	uint32_t api_id, api_domain;
	uint64_t api_start, api_end;
	uint64_t gpu_start, gpu_end;
	uint64_t launch_ns, queue_ns, execute_ns; /* final: every wait in the call
	                          is out of launch (sync is per group, at the
	                          end, and per wait in the wait sink)       */
	uint64_t cupti_ns;     /* CUPTI's own cost at the call's entry (metrics.md
	                          §3): out of launch, or of the wait it began   */
	uint64_t launch_raw_ns; /* launch with that cost left in                */
	uint64_t bytes;
	int64_t iter;          /* iteration index, -1 = before the first mark    */
	uint32_t group;        /* index into the analyser's groups               */
	const char *name;      /* op name (short kernel name, "memcpy HtoD", ...) */
	const char *nvtx;      /* innermost NVTX range on the launching thread or NULL */
	const char *callsite;  /* innermost symbolised frame, or NULL            */
	const struct gp_rec_launch_cfg *launch_cfg; /* kernel: its launch
	                          configuration, or NULL (none in the trace)     */
};

/* One blocking interval after attribution (exports). */
struct gp_an_wait {
	uint8_t kind;          /* enum gp_api_class of the blocking call         */
	uint8_t attributed;    /* 1: charged to op `op_corr`                     */
	uint32_t tid, corr, op_corr, stream;
	uint64_t w0, w1;       /* the blocking part                               */
	uint64_t call_start, call_end;
	int32_t group;         /* group charged, -1 if none                      */
	uint32_t site;         /* the blocking call's call site as the report names
	                          it: a canonical string of gp_an_strings, or
	                          UINT32_MAX when it has none                    */
};

/* A GPU op record, decoded (GP_REC_KERNEL, GP_REC_MEMCPY, GP_REC_MEMSET). */
struct gp_an_gpu {
	uint8_t graph;         /* replayed by a graph launch                      */
	uint8_t end_missing;   /* the record says its end is unknown              */
	uint8_t device, copy_kind;
	uint8_t pageable;      /* memcpy with a pageable host side (GP_COPYF_PAGEABLE) */
	uint32_t key;          /* join key: corr, or a memcpy's runtime corr      */
	uint32_t stream;
	uint32_t name;         /* kernel name string id (0 for copies and sets)   */
	uint32_t cfg;          /* kernel: its GP_REC_LAUNCH_CFG id (0 = none)      */
	uint64_t start, end, bytes;
};

/* An API call, decoded (GP_REC_HOOK_API, GP_REC_RUNTIME_API,
 * GP_REC_DRIVER_API). */
struct gp_an_api {
	uint8_t api_class;     /* enum gp_api_class                               */
	uint8_t nested;        /* a hooked call made inside another one           */
	uint32_t api_id, corr, tid;
	uint64_t start, end;
};

/*
 * The view of one record group that analyses get (cfg.on_rec). `type` says
 * which member is valid. Names are trace string ids: resolve them with
 * gp_an_string / gp_an_canonical.
 */
struct gp_an_rec {
	uint8_t type;          /* GP_REC_*                                        */
	uint8_t pass;          /* 1 or 2                                          */
	union {
		struct gp_an_api api;
		struct gp_an_gpu gpu;
		struct {           /* GP_REC_HOST_SAMPLE                              */
			uint64_t ts, interval_ns, cupti_ns;
			uint32_t busy_pm, proc_pm; /* host busy, process CPU (per mille) */
		} host;
		struct {           /* GP_REC_STATUS                                   */
			uint8_t kind;  /* enum gp_status_kind                             */
			int64_t value;
			uint32_t detail; /* string id of its explanation, 0 = none        */
		} status;
		struct {           /* GP_REC_ITER, GP_REC_WINDOW                      */
			uint8_t kind;
			uint64_t ts;
			int64_t iter;
		} mark;
		struct {           /* GP_REC_MARKER                                   */
			uint64_t ts;
			uint8_t closed;        /* pass 1: a thread's outermost NVTX range
			                          ended here                          */
			uint32_t range_name;   /* ... its name (string id)            */
			uint64_t range_start;  /* ... its start                       */
		} marker;
		struct {           /* GP_REC_GRAPH_NODE                               */
			uint8_t kind;  /* enum gp_graph_kind                              */
			uint32_t graph;
			uint64_t node;
			uint32_t corr; /* CAPTURED: hook op id; OP: the kernel's corr      */
			uint32_t tid;  /* CAPTURED: capturing thread                       */
			uint64_t ts;   /* CAPTURED: capture time                           */
			uint32_t nvtx; /* CAPTURED, pass 2: the thread's innermost NVTX
			                  range then (canonical string, GP_STR_NONE) */
			uint32_t from_graph; /* CLONED: the graph cloned from             */
			uint64_t from_node;  /* CLONED: the node cloned from              */
		} graph;
		struct {           /* GP_REC_OVERHEAD: CUPTI's own time on a thread   */
			uint8_t kind;  /* enum gp_overhead_kind                           */
			uint32_t tid, corr;
			uint64_t start, end;
		} overhead;
		struct {           /* GP_REC_STACK_REF                                */
			uint32_t op, stack;
		} stack_ref;
		struct {           /* GP_REC_COUNTER: a hardware counter (pass 1)     */
			uint8_t metric; /* enum gp_counter_metric                         */
			uint8_t device;
			uint32_t op;   /* hook op id of the replayed launch, 0 = a peak    */
			uint32_t name; /* string id of the kernel name                     */
			uint32_t sample;
			double value;
		} counter;
	};
};

/* Record types (bit 1u << GP_REC_*) and API classes (1u << GP_API_*)
 * whose views a consumer wants. */
#define GP_AN_TYPE(t) (1u << (t))
#define GP_AN_CLASS(c) (1u << (c))

struct gp_an_config {
	enum gp_group_by group_by;
	/* optional sinks for exports and analyses: every joined op, once, when
	 * its phases are final (the fold line, analysis_int.h: in arrival order,
	 * after any wait in its call was charged, so possibly after that wait's
	 * on_wait), and every blocking interval when it is charged */
	void (*on_op)(const struct gp_an_op *op, void *ctx);
	void (*on_wait)(const struct gp_an_wait *w, void *ctx);
	void *ctx;
	uint64_t evict_after_ns; /* join entries older than this are given up
	                            (0 = default 120 s of trace time)           */
	struct gp_strtab *strings; /* string table to fill (kept by the caller
	                              after gp_an_free), or NULL for the
	                              analyser's own                          */
	/* optional sink for the analyses: the view of every record whose type
	 * is in rec_types[pass - 1] */
	void (*on_rec)(const struct gp_an_rec *v, void *ctx);
	void *rec_ctx;
	uint32_t rec_types[2];
	uint32_t api_classes;  /* API views only of calls of these classes
	                          (GP_AN_CLASS bits; 0 = every class)       */
	int no_symbolize;      /* 1: never open the object files a trace names
	                          (symbolize.c); the capture's names only    */
};

struct gp_an;

struct gp_an *gp_an_new(const struct gp_an_config *cfg);
int gp_an_scan1(struct gp_an *an, const union gp_rec *rec, uint32_t nslots);
int gp_an_prepare(struct gp_an *an);
int gp_an_scan2(struct gp_an *an, const union gp_rec *rec, uint32_t nslots);
/* Fill rep (zeroed by the caller) with the aggregates; returns 0 or -ENOMEM.
 * The analyser may be freed afterwards; rep owns its memory. */
/* The capture was windowed (header `window` other than `all`): wall and
 * iterations are taken over the capture windows only (metrics.md §6). */
void gp_an_set_windowed(struct gp_an *an, int windowed);
/* The trace header's `cupti` mode (libgpuphase's GPUPHASE_CUPTI, e.g.
 * "lean", "full,extcorr=off"; NULL for traces that predate it): when its
 * hooks pushed no external correlation around every call, a hook joins its
 * CUPTI API record by thread and time nesting, and an API record waits for
 * a hook of its thread that may still come (join.c). Before pass 2. */
void gp_an_set_cupti(struct gp_an *an, const char *mode);
int gp_an_finish(struct gp_an *an, struct gp_rep *rep);
void gp_an_free(struct gp_an *an);

/* Text of string id (canonical), or NULL. Valid until gp_an_free, or while
 * cfg.strings lives. */
const char *gp_an_string(const struct gp_an *an, uint32_t id);
/* Canonical index (strtab.h) of string id, or GP_STR_NONE. */
uint32_t gp_an_canonical(const struct gp_an *an, uint32_t id);
/* The string table (cfg.strings or the analyser's own). */
struct gp_strtab *gp_an_strings(const struct gp_an *an);
/* The call site of stack id: its innermost actionable frame (the first
 * Python frame, else the first frame outside the CUDA libraries), named
 * from the module files when the report could read them, else by the
 * capture; "0x..." written into buf when unnamed; NULL when the stack is
 * unknown or empty. */
const char *gp_an_callsite(const struct gp_an *an, uint32_t stack, char *buf, size_t n);
/* The whole stack, one frame a line, innermost first (cut at n); 0 when
 * the stack is unknown. */
int gp_an_stack_text(const struct gp_an *an, uint32_t stack, char *out, size_t n);
/* The run's edges, known after pass 1 (trace-clock ns). */
struct gp_an_edges {
	uint64_t first_api;     /* first CUDA call (CUPTI runtime records when
	                           there are any, else hooks; UINT64_MAX = none) */
	uint64_t first_launch;  /* first kernel or graph launch (same sources)  */
	uint64_t last_kernel;   /* end of the last kernel with an end (0 = none) */
	uint64_t last_activity; /* latest end of a call, a GPU op or an NVTX
	                           marker                                      */
};
const struct gp_an_edges *gp_an_edges(const struct gp_an *an);
/* After gp_an_prepare: the capture windows of a windowed capture (metrics.md
 * §6), in start order, each closed (an open one ends at the next start or
 * the last record); *n = 0 and NULL when the whole run was captured. Valid
 * until gp_an_free (the window's ops/launch/execute sums fill in pass 2). */
const struct gp_rep_window *gp_an_capture_windows(const struct gp_an *an, size_t *n);
/* Record groups of a type seen in pass 1. */
uint64_t gp_an_record_count(const struct gp_an *an, unsigned type);
/* After gp_an_prepare: the start of each iteration (the first mark of each
 * iteration number, in time order): *starts and *nums malloc'd (the caller
 * frees them; NULL when there is none). Returns the count, 0 on ENOMEM. */
size_t gp_an_iteration_starts(const struct gp_an *an, uint64_t **starts, int64_t **nums);
/* What the trace's GP_REC_DEVICE record says of device d (known after pass
 * 1): 0 and *out filled, or -ENOENT when it has none for d. out->name is
 * its text (NULL when the string is missing), valid while the strings are. */
struct gp_an_device {
	const char *name;
	uint32_t cc_major, cc_minor, sm_count;
};
int gp_an_device(const struct gp_an *an, unsigned d, struct gp_an_device *out);
/* After pass 2: the launches replayed for hardware counters (their hook op
 * id has GP_REC_COUNTER records) that were left out of every aggregate,
 * and their GPU time (*ns may be NULL). */
uint64_t gp_an_replayed(const struct gp_an *an, uint64_t *ns);
/* Name of an API id of a given domain (GP_REC_*_API), or NULL. */
const char *gp_an_api_name(const struct gp_an *an, uint32_t domain, uint32_t api_id);

/* After gp_an_prepare: the earliest timestamp of the trace (time base for
 * exports) and whether the trace is hook-only (no CUPTI records). */
uint64_t gp_an_time_base(const struct gp_an *an);
int gp_an_hook_only(const struct gp_an *an);
/* After gp_an_prepare: the trace's clock pairs (clockmap.h), by time; empty
 * in a trace without GP_REC_CLOCK_PAIR. Valid until gp_an_free. */
struct gp_clockmap;
const struct gp_clockmap *gp_an_clockmap(const struct gp_an *an);
/* The OS tid of a CUPTI thread id when a join has shown it, else cupti_tid. */
uint32_t gp_an_os_tid(const struct gp_an *an, uint32_t cupti_tid);

/* Array growth for the core and the analyses: make *p hold need elements of
 * elem bytes (capacity doubles from 16). Returns 0 or -ENOMEM (*p kept). */
static inline int gp_an_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	void *np = realloc(*p, ncap * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}
/* Make a zero-filled array of *n elements hold index i (its length a power
 * of two from 16; the new elements zeroed): per-operator arrays of the
 * analyses, indexed by gp_an_op.group. Returns 0 or -ENOMEM (*p kept). */
static inline int gp_an_grow_zeroed(void **p, size_t *n, size_t i, size_t elem)
{
	if (i < *n)
		return 0;
	size_t nn = *n ? *n : 16;
	while (nn <= i)
		nn *= 2;
	char *np = realloc(*p, nn * elem);
	if (!np)
		return -ENOMEM;
	memset(np + *n * elem, 0, (nn - *n) * elem);
	*p = np;
	*n = nn;
	return 0;
}
#define GP_AN_GROW(arr, n, cap) ((n) < (cap) ? 0 : gp_an_grow((void **)&(arr), &(cap), (n) + 1, sizeof *(arr)))

#endif
