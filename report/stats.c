/*
 * stats.c — gp_hist and gp_sweep (see stats.h). Called by analysis.c on the
 * report thread. Memory: a histogram is at most GP_HIST_NBUCKETS counters; a
 * sweep at most GP_SWEEP_DELAY intervals, whatever the number fed.
 */
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static unsigned gp_hist_bucket(uint64_t v)
{
	if (v < (1u << GP_HIST_SUB_BITS))
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v);
	unsigned sub = (unsigned)(v >> (e - GP_HIST_SUB_BITS)) & ((1u << GP_HIST_SUB_BITS) - 1u);
	return ((e - GP_HIST_SUB_BITS + 1u) << GP_HIST_SUB_BITS) | sub;
}

/* Midpoint of bucket b. */
static uint64_t gp_hist_bucket_mid(unsigned b)
{
	if (b < (1u << GP_HIST_SUB_BITS))
		return b;
	unsigned e = (b >> GP_HIST_SUB_BITS) + GP_HIST_SUB_BITS - 1u;
	uint64_t sub = b & ((1u << GP_HIST_SUB_BITS) - 1u);
	uint64_t lo = (1ULL << e) | (sub << (e - GP_HIST_SUB_BITS));
	uint64_t width = 1ULL << (e - GP_HIST_SUB_BITS);
	return lo + width / 2u;
}

static int gp_hist_spill(struct gp_hist *h)
{
	h->buckets = calloc(GP_HIST_NBUCKETS, sizeof *h->buckets);
	if (!h->buckets)
		return -ENOMEM;
	for (uint64_t i = 0; i < h->n && i < GP_HIST_EXACT; i++)
		h->buckets[gp_hist_bucket(h->exact[i])]++;
	free(h->exact);
	h->exact = NULL;
	return 0;
}

int gp_hist_add(struct gp_hist *h, uint64_t v)
{
	int rc = 0;
	if (h->n == 0 || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->sum += v;
	if (!h->buckets && h->n < GP_HIST_EXACT) {
		if (!h->exact && !(h->exact = malloc(GP_HIST_EXACT * sizeof *h->exact)))
			rc = -ENOMEM;
		else
			h->exact[h->n] = v;
	} else {
		if (!h->buckets)
			rc = gp_hist_spill(h);
		if (!rc)
			h->buckets[gp_hist_bucket(v)]++;
	}
	h->n++;
	return rc;
}

int gp_hist_merge(struct gp_hist *dst, const struct gp_hist *src)
{
	int rc = 0;
	if (!src->n)
		return 0;
	if (!src->buckets && src->exact) {
		for (uint64_t i = 0; i < src->n; i++)
			if (gp_hist_add(dst, src->exact[i]))
				rc = -ENOMEM;
		return rc;
	}
	if (!dst->buckets && (rc = gp_hist_spill(dst)))
		return rc;
	for (unsigned b = 0; b < GP_HIST_NBUCKETS && src->buckets; b++)
		dst->buckets[b] += src->buckets[b];
	if (dst->n == 0 || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->sum += src->sum;
	dst->n += src->n;
	return 0;
}

static int gp_hist_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t gp_hist_quantile(const struct gp_hist *h, double q)
{
	if (!h->n)
		return 0;
	if (q <= 0)
		return h->min;
	if (q >= 1)
		return h->max;
	uint64_t rank = (uint64_t)ceil(q * (double)h->n);
	if (rank < 1)
		rank = 1;
	if (!h->buckets) {
		if (!h->exact)
			return h->min;
		uint64_t *tmp = malloc(h->n * sizeof *tmp);
		if (!tmp)
			return h->min;
		memcpy(tmp, h->exact, h->n * sizeof *tmp);
		qsort(tmp, h->n, sizeof *tmp, gp_hist_cmp);
		uint64_t v = tmp[rank - 1];
		free(tmp);
		return v;
	}
	uint64_t seen = 0;
	for (unsigned b = 0; b < GP_HIST_NBUCKETS; b++) {
		seen += h->buckets[b];
		if (seen >= rank) {
			uint64_t v = gp_hist_bucket_mid(b);
			return v < h->min ? h->min : v > h->max ? h->max : v;
		}
	}
	return h->max;
}

void gp_hist_free(struct gp_hist *h)
{
	free(h->exact);
	free(h->buckets);
	memset(h, 0, sizeof *h);
}

/* Feed one interval, in ascending start order, into the merged run. */
static void gp_sweep_take(struct gp_sweep *s, uint64_t a, uint64_t b)
{
	if (!s->open) {
		s->open = 1;
		s->cur_s = a;
		s->cur_e = b;
		return;
	}
	if (a < s->cur_s) {
		/* Arrived after the swept point: only what lies beyond the current
		 * run's end can be added without double counting. */
		s->late++;
		if (b > s->cur_e)
			s->cur_e = b;
		return;
	}
	if (a <= s->cur_e) {
		if (b > s->cur_e)
			s->cur_e = b;
		return;
	}
	s->total += s->cur_e - s->cur_s;
	s->cur_s = a;
	s->cur_e = b;
}

/* Take the earliest buffered interval into the merged run. */
static void gp_sweep_pop(struct gp_sweep *s)
{
	struct gp_ival top = s->buf[s->head];
	s->head = (s->head + 1) & (GP_SWEEP_DELAY - 1);
	s->n--;
	gp_sweep_take(s, top.start, top.end);
}

int gp_sweep_add(struct gp_sweep *s, uint64_t start, uint64_t end)
{
	const size_t mask = GP_SWEEP_DELAY - 1;
	if (end <= start)
		return 0;
	if (!s->buf && !(s->buf = malloc(GP_SWEEP_DELAY * sizeof *s->buf)))
		return -ENOMEM;
	if (s->n == GP_SWEEP_DELAY)
		gp_sweep_pop(s);
	size_t i = s->n;
	while (i > 0 && s->buf[(s->head + i - 1) & mask].start > start) {
		s->buf[(s->head + i) & mask] = s->buf[(s->head + i - 1) & mask];
		i--;
	}
	s->buf[(s->head + i) & mask] = (struct gp_ival){ start, end };
	s->n++;
	return 0;
}

uint64_t gp_sweep_finish(struct gp_sweep *s)
{
	while (s->n)
		gp_sweep_pop(s);
	if (s->open) {
		s->total += s->cur_e - s->cur_s;
		s->open = 0;
	}
	return s->total;
}

void gp_sweep_free(struct gp_sweep *s)
{
	free(s->buf);
	s->buf = NULL;
	s->n = s->head = 0;
}

int gp_stats_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t gp_stats_nearest_rank(const uint64_t *v, size_t n, double q)
{
	if (!n)
		return 0;
	size_t rank = (size_t)ceil(q * (double)n);
	if (rank < 1)
		rank = 1;
	return v[rank - 1];
}
