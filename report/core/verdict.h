/*
 * verdict.h — classify an operator (or the whole run) from its phase sums,
 * with the field's rule of thumb as default thresholds (ARCHITECTURE.md §4):
 * sync share > 30 % -> sync-bound, else launch share > 20 % -> launch-bound,
 * else execute share > 80 % -> compute-bound (transfer-bound for an
 * operator of copies and sets), else balanced. Shares are of
 * total = launch + execute + sync. Pure functions; any thread.
 */
#ifndef GP_REPORT_VERDICT_H
#define GP_REPORT_VERDICT_H

#include <stddef.h>
#include <stdint.h>

/* GP_VERDICT_TRANSFER: execute share > 80 % of an operator of copies and
 * sets only (gp_verdict_for_kinds): it transfers, it does not compute. */
enum gp_verdict { GP_VERDICT_NONE = 0, GP_VERDICT_SYNC, GP_VERDICT_LAUNCH, GP_VERDICT_COMPUTE, GP_VERDICT_BALANCED,
		  GP_VERDICT_MINOR, GP_VERDICT_TRANSFER };

struct gp_thresholds {
	double sync_pct, launch_pct, execute_pct; /* defaults 30, 20, 80 */
	double min_share_pct; /* an operator below this share of the run's
	                         launch + execute + sync gets no verdict (1) */
};

#define GP_THRESHOLDS_DEFAULT ((struct gp_thresholds){ 30.0, 20.0, 80.0, 1.0 })

/* The kinds of an operator's ops (rep.h's GP_GKIND_* are these values). */
#define GP_VERDICT_KIND_KERNEL 0x01u
#define GP_VERDICT_KIND_COPY   0x02u
#define GP_VERDICT_KIND_SET    0x04u
#define GP_VERDICT_KIND_GRAPH  0x08u
#define GP_VERDICT_KIND_OTHER  0x10u

/* What an operator is, for the advice that fits it:
 * kinds or-ed, mean bytes per op (copies, sets), whether the program
 * already replays CUDA graphs, and whether any of its copies used pageable
 * host memory (only then is pinned memory advised). */
enum gp_bound { GP_BOUND_NONE = 0, GP_BOUND_MEMORY, GP_BOUND_COMPUTE, GP_BOUND_LATENCY };
struct gp_verdict_op {
	unsigned kinds;
	uint64_t mean_bytes;
	int run_graphs;
	unsigned bound;      /* enum gp_bound: what its hardware counters say
	                        (metrics.md §21), GP_BOUND_NONE without them */
	int pageable;        /* some of its copies had a pageable host side (the
	                        trace's memory kinds); 0: pinned, device-side
	                        or unknown, and pinning is never advised     */
};

/* An operator's verdict: GP_VERDICT_MINOR when its total is below
 * th->min_share_pct of run_total (a single 10 us copy is not "launch-bound"),
 * else gp_verdict_of. */
enum gp_verdict gp_verdict_of_op(uint64_t launch, uint64_t execute, uint64_t sync, uint64_t run_total,
				 const struct gp_thresholds *t);
/* The advice for a verdict that fits the operator: copies are never told to
 * fuse kernels or use graphs (small ones: batch them, overlap; large ones:
 * bandwidth; pinned memory only when op->pageable says the trace saw
 * pageable host memory), and a program that replays graphs is never told to
 * use graphs; a kernel whose execute dominates is told what its counters say
 * limits it (memory: less traffic, fusion, access patterns; compute:
 * precision, tensor cores; latency: more parallelism). "" for none,
 * balanced, minor. */
const char *gp_verdict_advice_for(enum gp_verdict v, const struct gp_verdict_op *op);
/* Copies moving less than this per op on average are "small". */
#define GP_VERDICT_SMALL_COPY (64u * 1024u)

/* Verdict of the given sums; GP_VERDICT_NONE when total is 0. */
enum gp_verdict gp_verdict_of(uint64_t launch, uint64_t execute, uint64_t sync, const struct gp_thresholds *t);
/* "memory", "compute", "latency", or NULL for GP_BOUND_NONE. */
const char *gp_bound_name(unsigned bound);
/* v for an operator whose ops are of kinds (GP_VERDICT_KIND_* or-ed):
 * compute-bound becomes transfer-bound when they are copies and sets only. */
enum gp_verdict gp_verdict_for_kinds(enum gp_verdict v, unsigned kinds);
/* "sync-bound", "launch-bound", "compute-bound", "transfer-bound",
 * "balanced", "minor", "none". */
const char *gp_verdict_name(enum gp_verdict v);
/* The advice line for a verdict ("" for none/balanced). */
const char *gp_verdict_advice(enum gp_verdict v);
/* The numbers behind a verdict, e.g. "sync 49.2% > 30%". */
void gp_verdict_reason(enum gp_verdict v, uint64_t launch, uint64_t execute, uint64_t sync,
		       const struct gp_thresholds *t, char *buf, size_t n);

#endif
