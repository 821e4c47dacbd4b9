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
#include "rep.h"
#include "stats.h"
#include "strtab.h"

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

struct gp_an_config {
	enum gp_group_by group_by;
	/* optional sinks for exports: every joined op (after pass 2 folds it) and
	 * every blocking interval (at finish) */
	void (*on_op)(const struct gp_an_op *op, void *ctx);
	void (*on_wait)(const struct gp_an_wait *w, void *ctx);
	void *ctx;
	uint64_t evict_after_ns; /* join entries older than this are given up
	                            (0 = default 120 s of trace time)           */
	struct gp_strtab *strings; /* string table to fill (kept by the caller
	                              after gp_an_free), or NULL for the
	                              analyser's own                          */
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

#endif
