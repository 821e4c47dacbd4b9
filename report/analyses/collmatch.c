/*
 * collmatch.c — which NCCL collective of one rank is which of another's
 * (collmatch.h, docs/metrics.md §9 "Matching"), for the cross-rank analysis
 * (crossrank.c): two sequences of kept kernels, each a name and an end on
 * the wall clock, paired around kernels one side lost.
 *
 * First a coarse offset, from the lag (-GP_COLL_MAX_LAG..GP_COLL_MAX_LAG
 * kept kernels) whose place-by-place pairs of agreeing names end most
 * consistently; then the pairs themselves, the least-cost alignment of the
 * two sequences around that lag, which pays half a gap for a kernel left
 * without a partner and at most that for a pair that ends apart: a lost
 * kernel costs one unpaired kernel, not a shift of every later pair.
 *
 * Pure functions on the caller's arrays; any thread. Memory: the scratch
 * differences (one int64 per kernel) and the alignment's band, (na + 1) x
 * (2 x GP_COLL_MAX_LAG + 1) cells of 9 bytes, freed before returning.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/analyses/collmatch.h"
#include "report/util/clockmap.h"

#define GP_COLL_END_TOL 25000 /* ns: ends this close count as one collective's (coarse lag) */

static int gp_coll_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

int64_t gp_coll_quantile(int64_t *v, size_t n, double q)
{
	qsort(v, n, sizeof *v, gp_coll_cmp_i64);
	size_t k = (size_t)ceil(q * (double)n);
	return v[k ? k - 1 : 0];
}

int64_t gp_coll_absdiff(int64_t a, int64_t b)
{
	int64_t d = gp_clockmap_sub_sat(a, b);
	return d == INT64_MIN ? INT64_MAX : d < 0 ? -d : d;
}

/* Half the median gap between consecutive kept ends of ka[0..na): the
 * matching's unit (two ends further apart are no better a pair than none);
 * INT64_MAX when unknown. */
static int64_t gp_coll_half_gap(const struct gp_coll_end *ka, size_t na, int64_t *tmp)
{
	size_t m = 0;
	for (size_t i = 1; i < na; i++)
		tmp[m++] = gp_coll_absdiff(ka[i].end, ka[i - 1].end);
	if (!m)
		return INT64_MAX;
	int64_t g = gp_coll_quantile(tmp, m, 0.5) / 2;
	return g > 0 ? g : 1;
}

/* The densest cluster of d[0..m) (sorted here): the most values within
 * 2 x tol of each other. Returns how many, and their median in *at. */
static size_t gp_coll_cluster(int64_t *d, size_t m, int64_t tol, int64_t *at)
{
	qsort(d, m, sizeof *d, gp_coll_cmp_i64);
	size_t best = 0;
	for (size_t i = 0, k = 0; i < m; i++) {
		if (k < i)
			k = i;
		while (k + 1 < m && gp_coll_absdiff(d[k + 1], d[i]) <= 2 * tol)
			k++;
		if (k - i + 1 > best) {
			best = k - i + 1;
			*at = d[i + (k - i) / 2];
		}
	}
	return best;
}

/* The coarse offset (reference's end - this rank's end on the
 * wall clocks). For each lag in -GP_COLL_MAX_LAG..GP_COLL_MAX_LAG, the pairs
 * by place ka[k], kb[k + lag] whose names agree, and the densest cluster
 * of their differences (within 2 x GP_COLL_END_TOL of each other, or a
 * quarter of a gap when that is less: the ends of one collective agree to
 * the link latency, those of different ones only as well as the
 * collectives' spacing repeats). The lags whose cluster is the largest,
 * give or take 2 x GP_COLL_MAX_LAG (along a periodic run of collectives
 * every lag fits alike, but for the pairs shifted off the ends), and of
 * those lag 0 when both traces have as many NCCL kernels (nothing lost, as
 * far as they tell), else the one whose offset is nearest the wall
 * clocks'. A kernel lost mid-run splits a lag's pairs in two clusters: the
 * larger stands, so the lags on either side of the loss give one offset. Returns 0 and sets
 * *coarse and *lag, or -1 when no lag has enough pairs. */
static int gp_coll_coarse(const struct gp_coll_end *ka, size_t na, const struct gp_coll_end *kb, size_t nb,
			  int same_count, int64_t half, int64_t *d, int64_t *coarse, int *lag)
{
	int64_t at[2 * GP_COLL_MAX_LAG + 1] = { 0 }, tol = half / 4 < GP_COLL_END_TOL ? half / 4 : GP_COLL_END_TOL;
	size_t fit[2 * GP_COLL_MAX_LAG + 1], best = 0;
	for (int l = -GP_COLL_MAX_LAG; l <= GP_COLL_MAX_LAG; l++) {
		size_t m = 0;
		for (size_t k = l < 0 ? (size_t)-l : 0; k < na && k + (size_t)l < nb; k++)
			if (!strcmp(ka[k].name, kb[k + (size_t)l].name))
				d[m++] = gp_clockmap_sub_sat(ka[k].end, kb[k + (size_t)l].end);
		size_t f = gp_coll_cluster(d, m, tol, &at[l + GP_COLL_MAX_LAG]);
		fit[l + GP_COLL_MAX_LAG] = f;
		if (f > best)
			best = f;
	}
	if (best < GP_COLL_MIN_PAIRS)
		return -1;
	int found = 0;
	for (int l = 0; l <= GP_COLL_MAX_LAG; l++) /* on equal distance, the lag nearest 0 */
		for (int s = -1; s <= 1; s += 2) {
			int x = s * l + GP_COLL_MAX_LAG;
			if (fit[x] < GP_COLL_MIN_PAIRS || fit[x] + 2 * GP_COLL_MAX_LAG < best)
				continue;
			if (!found || (gp_coll_absdiff(at[x], 0) < gp_coll_absdiff(*coarse, 0) &&
				       !(*lag == 0 && same_count))) {
				*coarse = at[x];
				*lag = s * l;
				found = 1;
			}
		}
	return 0;
}

/* Which kept kernel of the rank (kb) pairs with which of the reference
 * (ka): the alignment of the two sequences of least cost, as
 * sequence alignment does it. A pair costs how far its ends disagree once
 * the rank is moved by the coarse offset, at most half a gap (a pair whose
 * names differ: half a gap); a kernel left without a partner costs half a
 * gap. So a collective that one rank lost costs one kernel without a
 * partner instead of every later pair a period apart, while a collective
 * that one rank ended late (a stalled host) keeps its partner: leaving both
 * unpaired would cost more. Searched in a band of +-GP_COLL_MAX_LAG places
 * around the coarse lag (memory: (na + 1) x the band's width, a byte and
 * an int64 each). kp[x] gets the kb index paired with ka[x], or
 * GP_COLL_NONE. */
#define GP_COLL_BAND (2 * GP_COLL_MAX_LAG + 1)
static int gp_coll_align(const struct gp_coll_end *ka, size_t na, const struct gp_coll_end *kb, size_t nb, int lag,
			 int64_t coarse, int64_t half, uint32_t *kp)
{
	int64_t most = INT64_MAX / (int64_t)(2 * (na + nb) + 4); /* no sum of costs overflows */
	half = half < most ? half : most;
	int64_t *cost = malloc((na + 1) * GP_COLL_BAND * sizeof *cost);
	uint8_t *from = malloc((na + 1) * GP_COLL_BAND); /* 0 pair, 1 ka[x-1] alone, 2 kb[y-1] alone */
	if (!cost || !from) {
		free(cost);
		free(from);
		return -ENOMEM;
	}
	/* cell (x, w): ka[0..x) aligned with kb[0..y), y = x + lag + w - GP_COLL_MAX_LAG */
	for (size_t x = 0; x <= na; x++)
		for (int w = 0; w < GP_COLL_BAND; w++) {
			int64_t y = (int64_t)x + lag + w - GP_COLL_MAX_LAG, best = INT64_MAX;
			uint8_t how = 0;
			size_t c = x * GP_COLL_BAND + (size_t)w;
			if (y < 0 || y > (int64_t)nb) {
				cost[c] = INT64_MAX;
				continue;
			}
			if (!x && !y)
				best = 0;
			if (x && y) { /* ka[x-1] with kb[y-1]: the same w one row up */
				int64_t p = cost[c - GP_COLL_BAND];
				if (p != INT64_MAX) {
					const struct gp_coll_end *u = &ka[x - 1], *v = &kb[y - 1];
					int64_t pc = half;
					if (!strcmp(u->name, v->name)) {
						pc = gp_coll_absdiff(u->end, gp_clockmap_add_sat(v->end, coarse));
						pc = pc < half ? pc : half;
					}
					best = p + pc;
				}
			}
			if (x && w + 1 < GP_COLL_BAND && cost[c - GP_COLL_BAND + 1] != INT64_MAX &&
			    cost[c - GP_COLL_BAND + 1] + half < best) /* ka[x-1] alone: (x-1, y) */
				best = cost[c - GP_COLL_BAND + 1] + half, how = 1;
			if (y && w && cost[c - 1] != INT64_MAX && cost[c - 1] + half < best) /* kb[y-1] alone: (x, y-1) */
				best = cost[c - 1] + half, how = 2;
			cost[c] = best;
			from[c] = how;
		}
	/* the end: both sequences used up, the rest of one left alone */
	size_t bx = 0;
	int bw = -1;
	int64_t bc = INT64_MAX;
	for (size_t x = 0; x <= na; x++)
		for (int w = 0; w < GP_COLL_BAND; w++) {
			int64_t y = (int64_t)x + lag + w - GP_COLL_MAX_LAG, c = cost[x * GP_COLL_BAND + (size_t)w];
			if (c == INT64_MAX || (x != na && y != (int64_t)nb))
				continue;
			c += half * (int64_t)((na - x) + (nb - (size_t)y));
			if (c < bc)
				bc = c, bx = x, bw = w;
		}
	for (size_t x = 0; x < na; x++)
		kp[x] = GP_COLL_NONE;
	for (size_t x = bx; bw >= 0 && (x || lag + bw - GP_COLL_MAX_LAG);) {
		uint8_t how = from[x * GP_COLL_BAND + (size_t)bw];
		if (how == 0) {
			x--;
			kp[x] = (uint32_t)((int64_t)x + lag + bw - GP_COLL_MAX_LAG);
		} else if (how == 1) {
			x--, bw++;
		} else {
			bw--;
		}
	}
	free(cost);
	free(from);
	return 0;
}

int gp_coll_match(const struct gp_coll_end *ka, size_t na, const struct gp_coll_end *kb, size_t nb, int same_count,
		  uint32_t *kp, int *lag)
{
	size_t cap = (na > nb ? na : nb) + 1;
	int64_t *d = malloc(cap * sizeof *d);
	if (!d)
		return -ENOMEM;
	int64_t half = gp_coll_half_gap(ka, na, d), coarse = 0;
	int rc = 0;
	*lag = 0;
	if (half == INT64_MAX || gp_coll_coarse(ka, na, kb, nb, same_count, half, d, &coarse, lag) < 0) {
		*lag = 0; /* too few pairs to tell a lag: in place order */
		for (size_t x = 0; x < na; x++)
			kp[x] = x < nb ? (uint32_t)x : GP_COLL_NONE;
	} else {
		rc = gp_coll_align(ka, na, kb, nb, *lag, coarse, half, kp);
	}
	free(d);
	return rc;
}
