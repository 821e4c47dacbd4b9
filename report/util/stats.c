/*
 * stats.c — gp_hist and gp_sweep (see stats.h). Called by analysis.c on the
 * report thread. Memory: a histogram is at most GP_HIST_NBUCKETS counters —
 * only the range of buckets its samples fell in, which for one operator is
 * a few hundred (a report of hundreds of ranks holds one per operator and
 * rank); a sweep at most GP_SWEEP_DELAY intervals, whatever the number fed.
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

/* Make the bucket window [blo, blo + blen) hold bucket b: it grows to at
 * least twice its length (towards b), so that a histogram is reallocated a
 * few times only. 0 or -ENOMEM (the window kept). */
static int gp_hist_cover(struct gp_hist *h, unsigned b)
{
	if (h->buckets && b >= h->blo && b - h->blo < h->blen)
		return 0;
	unsigned lo = h->buckets ? (b < h->blo ? b : h->blo) : b;
	unsigned hi = h->buckets ? (b + 1 > h->blo + h->blen ? b + 1 : h->blo + h->blen) : b + 1;
	unsigned want = h->blen * 2 > 64 ? h->blen * 2 : 64;
	while (hi - lo < want && (lo > 0 || hi < GP_HIST_NBUCKETS)) {
		if (hi < GP_HIST_NBUCKETS && (!h->buckets || b >= h->blo || lo == 0))
			hi++; /* grow where the samples went (up, at first) */
		else
			lo--;
	}
	uint64_t *nb = calloc(hi - lo, sizeof *nb);
	if (!nb)
		return -ENOMEM;
	if (h->buckets)
		memcpy(nb + (h->blo - lo), h->buckets, h->blen * sizeof *nb);
	free(h->buckets);
	h->buckets = nb;
	h->blo = lo;
	h->blen = hi - lo;
	return 0;
}

static int gp_hist_spill(struct gp_hist *h)
{
	unsigned lo = GP_HIST_NBUCKETS, hi = 0;
	for (uint64_t i = 0; i < h->n && i < GP_HIST_EXACT; i++) {
		unsigned b = gp_hist_bucket(h->exact[i]);
		lo = b < lo ? b : lo;
		hi = b > hi ? b : hi;
	}
	if (gp_hist_cover(h, lo < GP_HIST_NBUCKETS ? lo : 0) || gp_hist_cover(h, hi))
		return -ENOMEM;
	for (uint64_t i = 0; i < h->n && i < GP_HIST_EXACT; i++)
		h->buckets[gp_hist_bucket(h->exact[i]) - h->blo]++;
	free(h->exact);
	h->exact = NULL;
	return 0;
}

int gp_hist_bucket_add(struct gp_hist *h, unsigned b, uint64_t count)
{
	if (b >= GP_HIST_NBUCKETS)
		return -EINVAL;
	if (gp_hist_cover(h, b))
		return -ENOMEM;
	h->buckets[b - h->blo] += count;
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
			rc = gp_hist_bucket_add(h, gp_hist_bucket(v), 1);
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
	if (src->buckets && src->blen &&
	    (gp_hist_cover(dst, src->blo) || gp_hist_cover(dst, src->blo + src->blen - 1)))
		return -ENOMEM;
	for (unsigned i = 0; src->buckets && i < src->blen; i++)
		dst->buckets[src->blo + i - dst->blo] += src->buckets[i];
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
	for (unsigned i = 0; i < h->blen; i++) {
		seen += h->buckets[i];
		if (seen >= rank) {
			uint64_t v = gp_hist_bucket_mid(h->blo + i);
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
