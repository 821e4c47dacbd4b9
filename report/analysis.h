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

#include <stddef.h>
#include <stdint.h>
#include "gp_format.h"
#include "stats.h"

enum gp_group_by { GP_GROUP_KERNEL = 0, GP_GROUP_NVTX, GP_GROUP_CALLSITE, GP_GROUP_STREAM };

enum gp_op_kind { GP_OP_KERNEL = 1, GP_OP_MEMCPY, GP_OP_MEMSET, GP_OP_HOOK_ONLY };

/* One joined GPU operation, handed to the optional op sink (exports). */
struct gp_an_op {
	uint8_t kind;          /* enum gp_op_kind                                */
	uint8_t device;
	uint8_t has_api;       /* launch phase measured                          */
	uint8_t has_gpu;       /* queue and execute measured                     */
	uint8_t has_hook;
	uint8_t api_class;     /* enum gp_api_class of the launching call        */
	uint8_t copy_kind;
	uint32_t stream;       /* CUPTI stream id (hook stream handle if hook-only) */
	uint32_t corr;         /* join key (runtime corr; driver corr if none)   */
	uint32_t tid;          /* launching thread (0 = unknown)                 */
	uint32_t api_id, api_domain;
	uint64_t api_start, api_end;
	uint64_t gpu_start, gpu_end;
	uint64_t launch_ns, queue_ns, execute_ns; /* sync is known only at the end */
	uint64_t bytes;
	int64_t iter;          /* iteration index, -1 = before the first mark    */
	uint32_t group;        /* index into the analyser's groups               */
	const char *name;      /* op name (short kernel name, "memcpy HtoD", ...) */
	const char *nvtx;      /* innermost NVTX range on the launching thread or NULL */
	const char *callsite;  /* innermost symbolised frame, or NULL            */
};

/* One blocking interval after attribution (exports). */
struct gp_an_wait {
	uint8_t kind;          /* enum gp_api_class of the blocking call         */
	uint8_t attributed;    /* 1: charged to op `op_corr`                     */
	uint32_t tid, corr, op_corr, stream;
	uint64_t w0, w1;       /* the blocking part                               */
	uint64_t call_start, call_end;
	int32_t group;         /* group charged, -1 if none                      */
};

struct gp_rep_group {
	char *name;            /* display key                                    */
	char *long_name;       /* demangled full name (kernel grouping) or = name */
	uint64_t count;
	uint64_t launch_ns, queue_ns, execute_ns, sync_ns;
	uint64_t no_api, no_gpu; /* ops whose launch / GPU times are missing     */
	uint64_t sync_calls;   /* blocking intervals charged to this group        */
	struct gp_hist exec;   /* execute distribution                           */
};

struct gp_rep_iter {
	int64_t iter;
	uint64_t start, end;   /* boundary marks (end = next mark or window end) */
	int open;              /* last iteration: ends at the window end, not at a mark */
	uint64_t ops;
	uint64_t launch_ns, queue_ns, execute_ns, sync_ns;
};

struct gp_rep_callsite {
	char *name;
	uint64_t calls, sync_ns;
};

struct gp_rep_kv {
	char *key, *value;
};

/* The aggregate result of one or more traces. Everything is owned. */
struct gp_rep {
	/* capture conditions */
	char *path;            /* trace file (or "N files")                       */
	struct gp_rep_kv *kv;  /* header key/values (host, cmdline, ...)           */
	size_t nkv;
	uint32_t clock_id, pid, version;
	char **devices;        /* "0: NVIDIA H200 (cc 9.0, 132 SMs)"              */
	size_t ndevices;
	int cupti_ok, cupti_unavailable, hooks_absent, clock_calibrated, size_cap, forked;
	int complete;          /* footer present (every input)                    */
	uint64_t truncated_bytes;
	int32_t end_reason;    /* footer: 0, or the -errno that stopped writing   */
	uint64_t write_errors, lost_after_stop; /* footer: why / what was lost   */
	double host_busy_pct, proc_cpu_pct; /* mean over host samples, -1 = none */
	double host_busy_max_pct;
	/* counts */
	uint64_t records;
	uint64_t rec_count[GP_REC_TYPE_COUNT];
	uint64_t dropped_ring, dropped_cupti, dropped_write, dropped_records;
	uint64_t ops, ops_joined, ops_no_api, ops_no_gpu, ops_end_missing;
	uint64_t hooks_unjoined, api_unjoined, evicted;
	uint64_t launches_captured; /* hooked launches made during stream capture
	                               (graph nodes, no GPU op of their own)    */
	double join_coverage;  /* ops_joined / ops (1 when no ops)                */
	/* window */
	uint64_t t_first, t_last, wall_ns;
	uint64_t gpu_busy_ns, gpu_idle_ns, gpu_busy_sum_ns, gpu_busy_late;
	uint64_t host_api_ns, covered_ns, unattributed_ns;
	uint64_t launch_ns, queue_ns, execute_ns, sync_ns;
	uint64_t sync_unattributed_ns, sync_unattributed_calls;
	uint64_t sync_calls[GP_API_CLASS_COUNT], sync_kind_ns[GP_API_CLASS_COUNT];
	/* tables */
	struct gp_rep_group *groups;
	size_t ngroups;
	struct gp_rep_iter *iters;
	size_t niters;
	struct gp_rep_callsite *callsites; /* sync call sites, by sync_ns desc */
	size_t ncallsites;
	/* multi-trace */
	struct gp_rep *ranks;  /* per-input reports (merged reports only)          */
	size_t nranks;
	int group_by;
};

struct gp_an_config {
	enum gp_group_by group_by;
	/* optional sinks for exports: every joined op (after pass 2 folds it) and
	 * every blocking interval (at finish) */
	void (*on_op)(const struct gp_an_op *op, void *ctx);
	void (*on_wait)(const struct gp_an_wait *w, void *ctx);
	void *ctx;
	uint64_t evict_after_ns; /* join entries older than this are given up
	                            (0 = default 120 s of trace time)           */
};

struct gp_an;

struct gp_an *gp_an_new(const struct gp_an_config *cfg);
int gp_an_scan1(struct gp_an *an, const union gp_rec *rec, uint32_t nslots);
int gp_an_prepare(struct gp_an *an);
int gp_an_scan2(struct gp_an *an, const union gp_rec *rec, uint32_t nslots);
/* Fill rep (zeroed by the caller) with the aggregates; returns 0 or -ENOMEM.
 * The analyser may be freed afterwards; rep owns its memory. */
int gp_an_finish(struct gp_an *an, struct gp_rep *rep);
void gp_an_free(struct gp_an *an);

/* Text of string id (canonical), or NULL. Valid until gp_an_free. */
const char *gp_an_string(const struct gp_an *an, uint32_t id);
/* Name of an API id of a given domain (GP_REC_*_API), or NULL. */
const char *gp_an_api_name(const struct gp_an *an, uint32_t domain, uint32_t api_id);

/* After gp_an_prepare: the earliest timestamp of the trace (time base for
 * exports) and whether the trace is hook-only (no CUPTI records). */
uint64_t gp_an_time_base(const struct gp_an *an);
int gp_an_hook_only(const struct gp_an *an);
/* The OS tid of a CUPTI thread id when a join has shown it, else cupti_tid. */
uint32_t gp_an_os_tid(const struct gp_an *an, uint32_t cupti_tid);

void gp_rep_free(struct gp_rep *rep);
/* Merge several per-trace reports into dst (groups by name, sums, hist
 * merge); dst->ranks takes ownership of the inputs. */
int gp_rep_merge(struct gp_rep *dst, struct gp_rep *src, size_t n);

#endif
