/*
 * rep.h — gp_rep, the report of one trace (filled by the analysis core's
 * gp_an_finish and the pipeline) or of several merged, and what is computed
 * from a report alone: merging, group totals, iteration statistics and rank
 * stragglers. Everything in a gp_rep is owned by it. Single-threaded.
 */
#ifndef GP_REPORT_REP_H
#define GP_REPORT_REP_H

#include <stddef.h>
#include <stdint.h>
#include "gp_format.h"
#include "stats.h"

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
	char *stack; /* the first stack seen there, one frame a line; may be NULL */
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

void gp_rep_free(struct gp_rep *rep);
/* Merge several per-trace reports into dst (groups by name, sums, hist
 * merge); dst->ranks takes ownership of the inputs. */
int gp_rep_merge(struct gp_rep *dst, struct gp_rep *src, size_t n);

/* launch + execute + sync of an operator. */
uint64_t gp_rep_group_total(const struct gp_rep_group *g);
/* Per-iteration p50 / p99 of durations (the open last iteration left out);
 * flags outliers, duration > factor * p50 with at least 3 closed ones
 * (outlier: array of niters, or NULL). */
void gp_rep_iter_stats(const struct gp_rep *rep, double factor, uint64_t *p50, uint64_t *p99, uint8_t *outlier);
/* A rank's own work: launch + execute, leaving out communication kernels
 * (names containing "nccl", any case), whose execution includes waiting. */
uint64_t gp_rep_rank_busy(const struct gp_rep *r);
/* Straggler flags per rank (array of nranks); returns the median busy. */
uint64_t gp_rep_stragglers(const struct gp_rep *rep, double pct, uint8_t *flag);

#endif
