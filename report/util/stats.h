/*
 * stats.h — the report's two streaming statistics:
 *
 *  gp_hist:  a duration distribution in bounded memory: exact samples up to
 *            GP_HIST_EXACT values, then log-linear buckets (128 per power of
 *            two, relative error < 0.8 %); min, max and sum are always exact.
 *  gp_sweep: the length of the union of intervals fed in roughly ascending
 *            start order, through a bounded reorder buffer (GP_SWEEP_DELAY
 *            intervals kept sorted by start, inserted from the back, so an
 *            interval arriving d places late costs d moves). Intervals that
 *            arrive later than the buffer can absorb are counted in `late`
 *            and only their part past the swept point is added.
 *
 * Also the comparator and nearest-rank quantile of sorted arrays.
 * Single-threaded; used by the analysis core, rep.c and the analyses. docs/metrics.md states both exactly.
 */
#ifndef GP_REPORT_STATS_H
#define GP_REPORT_STATS_H

#include <stddef.h>
#include <stdint.h>

#define GP_HIST_EXACT 512u
#define GP_HIST_SUB_BITS 7u
#define GP_HIST_NBUCKETS ((64u - GP_HIST_SUB_BITS + 1u) << GP_HIST_SUB_BITS)

struct gp_hist {
	uint64_t n, sum, min, max;
	uint64_t *exact;   /* first min(n, GP_HIST_EXACT) samples, or NULL     */
	uint64_t *buckets; /* when n exceeds GP_HIST_EXACT: the counts of buckets
	                      blo .. blo + blen - 1 (the others are 0)          */
	uint32_t blo, blen;
};

/* Add one sample. Returns 0 or -ENOMEM (the sample still counts in n, sum,
 * min, max). */
int gp_hist_add(struct gp_hist *h, uint64_t v);
/* Add count samples to bucket b (0 .. GP_HIST_NBUCKETS - 1) without
 * touching n, sum, min, max: a histogram read back (partial results).
 * 0, -EINVAL (no such bucket) or -ENOMEM. */
int gp_hist_bucket_add(struct gp_hist *h, unsigned b, uint64_t count);
/* Merge src into dst (dst keeps its own storage). */
int gp_hist_merge(struct gp_hist *dst, const struct gp_hist *src);
/* Nearest-rank quantile q in [0,1]: the smallest recorded value v with at
 * least ceil(q*n) samples <= v (exact while n <= GP_HIST_EXACT, else the
 * bucket midpoint clamped to [min, max]). 0 when empty. */
uint64_t gp_hist_quantile(const struct gp_hist *h, double q);
void gp_hist_free(struct gp_hist *h);

#define GP_SWEEP_DELAY 16384u /* power of two */

struct gp_ival {
	uint64_t start, end;
};

struct gp_sweep {
	struct gp_ival *buf;  /* ring of GP_SWEEP_DELAY, sorted by start from head */
	size_t head, n;
	int open;             /* a current merged run exists               */
	uint64_t cur_s, cur_e;/* the current merged run                    */
	uint64_t total;       /* closed runs' length                       */
	uint64_t late;        /* intervals that started before the swept point */
};

/* Add [start, end) (end < start is treated as empty). 0 or -ENOMEM. */
int gp_sweep_add(struct gp_sweep *s, uint64_t start, uint64_t end);
/* Drain the buffer and return the union length; the sweep may not be added
 * to afterwards. */
uint64_t gp_sweep_finish(struct gp_sweep *s);
void gp_sweep_free(struct gp_sweep *s);

/* qsort comparator of uint64_t, ascending. */
int gp_stats_cmp_u64(const void *a, const void *b);
/* Nearest-rank quantile q of a sorted array (0 when empty). */
uint64_t gp_stats_nearest_rank(const uint64_t *v, size_t n, double q);

#endif
