/*
 * collmatch.h — pairing the NCCL collectives of two ranks (collmatch.c)
 * around kernels one side lost: the cross-rank analysis's matching
 * (docs/metrics.md §9), and the small statistics it shares with it.
 */
#ifndef GP_REPORT_COLLMATCH_H
#define GP_REPORT_COLLMATCH_H

#include <stddef.h>
#include <stdint.h>

#define GP_COLL_NONE UINT32_MAX /* a kernel without a partner */
#define GP_COLL_MAX_LAG 8       /* kept kernels one rank may lack or have more at a time */
#define GP_COLL_MIN_PAIRS 3     /* pairs needed to tell an offset */

/* A kept collective kernel: its name (compared as text) and its end on the
 * wall clock (ns). */
struct gp_coll_end {
	const char *name;
	int64_t end;
};

/* Pairs kb[0..nb) with the reference's ka[0..na): kp[x] is the index in kb
 * of ka[x]'s partner, or GP_COLL_NONE. same_count: both traces saw as many
 * collectives (nothing lost, as far as they tell: lag 0 wins a tie). *lag
 * is the coarse lag in kept kernels (0, and place order, when too few
 * pairs tell one). Returns 0, or -ENOMEM. */
int gp_coll_match(const struct gp_coll_end *ka, size_t na, const struct gp_coll_end *kb, size_t nb, int same_count,
		  uint32_t *kp, int *lag);

/* |a - b|, held at INT64_MAX (times from a file may be anything). */
int64_t gp_coll_absdiff(int64_t a, int64_t b);
/* Nearest-rank quantile of v[0..n), sorted here. */
int64_t gp_coll_quantile(int64_t *v, size_t n, double q);

#endif
