/*
 * test_report_crossrank.c — Criterion suite for the clock map (clockmap.c)
 * and the cross-rank analysis (analyses/crossrank.c) on synthetic ranks
 * whose true timeline is known: each rank's trace clock and wall clock are
 * the true time plus its own offsets, its collectives end together, one rank
 * arrives late. Expected values follow from those constants. The
 * end-to-end version on simcuda, with clocks really shifted, is
 * tests/e2e/test_multinode.sh. Runs on the test thread only.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/analyses/registry.h"
#include "report/util/clockmap.h"
#include "report/pipeline.h"
#include "trace_builder.h"

Test(clockmap, interpolates_between_pairs_and_holds_outside)
{
	struct gp_clockmap m = { 0 };
	struct gp_clock_pair a = { .raw = 1000, .realtime = 11000 }, b = { .raw = 3000, .realtime = 13100 };
	cr_assert_eq(gp_clockmap_add(&m, &b), 0); /* out of order: sort puts them right */
	cr_assert_eq(gp_clockmap_add(&m, &a), 0);
	gp_clockmap_sort(&m);
	cr_assert_eq(gp_clockmap_offset(&m, 0), 10000);     /* before: the first pair's */
	cr_assert_eq(gp_clockmap_offset(&m, 2000), 10050);  /* halfway: halfway */
	cr_assert_eq(gp_clockmap_offset(&m, 9000), 10100);  /* after: the last pair's */
	cr_assert_eq(gp_clockmap_wall(&m, 2000), 12050);
	/* another host whose wall clock is 507 further from its trace clock:
	 * its time t is t + 507 on a host whose offset is a flat 10000 */
	struct gp_clockmap o = { 0 }, flat = { 0 };
	struct gp_clock_pair c = { .raw = 500, .realtime = 11007 }, d = { .raw = 2500, .realtime = 13007 };
	struct gp_clock_pair e = { .raw = 0, .realtime = 10000 };
	gp_clockmap_add(&o, &c);
	gp_clockmap_add(&o, &d);
	gp_clockmap_sort(&o);
	gp_clockmap_add(&flat, &e);
	gp_clockmap_sort(&flat);
	cr_assert_eq(gp_clockmap_convert(&o, &flat, 1500), 1500 + 507);
	cr_assert_eq(gp_clockmap_convert(&flat, &o, 2007), 1500);
	gp_clockmap_free(&flat);
	gp_clockmap_free(&o);
	gp_clockmap_free(&m);
}

Test(clockmap, bounded_by_thinning)
{
	struct gp_clockmap m = { 0 };
	for (uint64_t i = 0; i < 3 * (uint64_t)GP_CLOCKMAP_MAX; i++) {
		struct gp_clock_pair p = { .raw = i * 1000, .realtime = i * 1000 + 5 };
		cr_assert_eq(gp_clockmap_add(&m, &p), 0);
	}
	gp_clockmap_sort(&m);
	cr_assert_leq(m.n, GP_CLOCKMAP_MAX);
	cr_assert_geq(m.n, GP_CLOCKMAP_MAX / 2);
	cr_assert_eq(gp_clockmap_offset(&m, 123456), 5);
	gp_clockmap_free(&m);
}

/* Pairs from a corrupt file: wrong numbers at worst, no overflow (UBSan
 * traps on one under make asan). */
Test(clockmap, corrupt_pairs_saturate)
{
	struct gp_clockmap m = { 0 }, o = { 0 };
	struct gp_clock_pair a = { .raw = 1, .realtime = UINT64_MAX / 2 + 7 }, b = { .raw = UINT64_MAX - 1, .realtime = 3 };
	struct gp_clock_pair c = { .raw = 5, .realtime = (uint64_t)INT64_MIN + 2 };
	gp_clockmap_add(&m, &a);
	gp_clockmap_add(&m, &b);
	gp_clockmap_sort(&m);
	gp_clockmap_add(&o, &c);
	gp_clockmap_sort(&o);
	for (uint64_t t = 0; t < 4; t++) {
		uint64_t x = t * (UINT64_MAX / 3);
		(void)gp_clockmap_wall(&m, x);
		(void)gp_clockmap_convert(&m, &o, x);
		(void)gp_clockmap_convert(&o, &m, x);
	}
	gp_clockmap_free(&m);
	gp_clockmap_free(&o);
}

/* ---- the analysis, on three synthetic ranks ---------------------------------------- */

#define S 1000000000ll
#define US 1000ll
#define ITERS 20

/* rank r: trace clock = true + raw_off[r], wall clock = true + wall_off[r] */
static const int64_t raw_off[3] = { 5 * S, 3600 * S + 123456789, 17 * S + 42 };
static int64_t wall_off[3] = { 1700000000 * S, 1700000000 * S + 2500 * US, 1700000000 * S - 800 * US };
/* each iteration: a collective whose start is the rank's arrival (rank 2
 * last), ending together; the iteration ends some time after it */
static const int64_t arrive[3] = { 100 * US, 150 * US, 400 * US };
static const int64_t tail[3] = { 50 * US, 300 * US, 80 * US };

/* lost[r][i]: rank r's trace lacks iteration i's NCCL kernel (a CUPTI
 * drop, a trace cut off at its start) */
static int lost[3][ITERS];

static void rank_trace(struct recs *t, int r)
{
	rec_string(t, 1, "ncclDevKernel");
	for (int k = 0; k < 2; k++) { /* pairs at the true times 0.5 s and 3 s */
		union gp_rec *p = rec_new(t);
		int64_t tt = k ? 3 * S : S / 2;
		p->clock.type = GP_REC_CLOCK_PAIR;
		p->clock.kind = k ? GP_CLOCK_END : GP_CLOCK_START;
		p->clock.raw = (uint64_t)(tt + raw_off[r]);
		p->clock.realtime = (uint64_t)(tt + wall_off[r]);
		p->clock.width_ns = 40;
	}
	for (int i = 0; i < ITERS; i++) {
		int64_t base = S + i * 10000 * US; /* true time of iteration i */
		uint32_t corr = (uint32_t)i + 1;
		rec_api(t, GP_REC_RUNTIME_API, GP_API_LAUNCH, 7, (uint64_t)(base + raw_off[r]), 5000, corr);
		uint64_t start = (uint64_t)(base + arrive[r] + raw_off[r]), end = (uint64_t)(base + 500 * US + raw_off[r]);
		if (!lost[r][i])
			rec_kernel(t, 13, start, end, corr, 1); /* ending together */
		rec_iter(t, (uint64_t)i, (uint64_t)(base + 500 * US + tail[r] + raw_off[r]))->mark.tid = 7;
	}
}

/* The "crossrank" member of the job's JSON, as text. */
static char *job_json(void)
{
	struct gp_pipeline_opts po = { .group_by = GP_GROUP_KERNEL, .what = GP_PIPE_ANALYSES, .outlier_factor = 1.5 };
	struct gp_pipeline *p = gp_pipeline_new(&po);
	cr_assert(p);
	static struct recs t[3];
	char err[256];
	for (int r = 0; r < 3; r++) {
		t[r].n = 0;
		rank_trace(&t[r], r);
		cr_assert_eq(gp_pipeline_add_records(p, "rank", t[r].r, t[r].n, err, sizeof err), 0, "%s", err);
	}
	const struct gp_rep *reps[3] = { gp_pipeline_rep(p, 0), gp_pipeline_rep(p, 1), gp_pipeline_rep(p, 2) };
	struct gp_analysis_env env = { .outlier_factor = 1.5 };
	struct gp_analyses *job = NULL;
	cr_assert_eq(gp_analyses_job(gp_pipeline_analyses(p), reps, 3, &env, &job), 0);
	cr_assert(job && job->job && job->n == 1 && !strcmp(job->a[0]->name, "crossrank"));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct gp_analysis_style style = { 0 };
	gp_analyses_json(f, job, reps[0], &style);
	/* and a trace's own set says nothing of it */
	gp_analyses_json(f, gp_pipeline_analyses(p)[0], reps[0], &style);
	fclose(f);
	gp_analyses_free(job);
	gp_pipeline_free(p);
	return buf;
}

/* The n-th (0-based) integer value of "key" in s. */
static int64_t nth(const char *s, const char *key, int n)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\": ", key);
	for (const char *p = s; (p = strstr(p, k)); p += strlen(k))
		if (n-- == 0)
			return strtoll(p + strlen(k), NULL, 10);
	cr_assert_fail("no %s #%d in %s", key, n, s);
	return 0;
}

Test(crossrank, recovers_offsets_wait_and_skew)
{
	char *j = job_json();
	int members = 0;
	for (const char *p = j; (p = strstr(p, "\"crossrank\"")); p++)
		members++;
	cr_assert_eq(members, 1, "a trace's own set printed the job analysis: %s", j);
	for (int r = 0; r < 3; r++) {
		/* the trace clock's offset to rank 0's, through the wall clocks and
		 * refined on the collectives: exact (the ends agree exactly) */
		cr_assert_eq(nth(j, "raw_offset_ns", r), raw_off[r] - raw_off[0], "rank %d: %s", r, j);
		/* from the pairs alone: off by the wall clocks' disagreement */
		cr_assert_eq(nth(j, "raw_offset_pairs_ns", r), raw_off[r] - raw_off[0] - (wall_off[r] - wall_off[0]));
		if (r) {
			cr_assert_eq(nth(j, "refinement_ns", r), wall_off[0] - wall_off[r]);
			cr_assert_eq(nth(j, "collectives_matched", r), ITERS);
			cr_assert_eq(nth(j, "residual_pairs_p50_ns", r), llabs(wall_off[r] - wall_off[0]));
			cr_assert_eq(nth(j, "residual_p50_ns", r), 0);
		}
		/* waited from its arrival to rank 2's, every iteration */
		cr_assert_eq(nth(j, "collective_wait_ns", r), ITERS * (arrive[2] - arrive[r]));
		cr_assert_eq(nth(j, "collectives_last", r), r == 2 ? ITERS : 0);
		cr_assert_eq(nth(j, "nccl_kernels", r), ITERS);
		/* iteration ends: rank 1 last by its tail, every iteration */
		cr_assert_eq(nth(j, "iterations_last", r), r == 1 ? ITERS - 1 : 0, "rank %d: %s", r, j);
		cr_assert_eq(nth(j, "iteration_late_mean_ns", r), tail[r] - tail[0]);
	}
	cr_assert_eq(nth(j, "spread_p50_ns", 0), tail[1] - tail[0]);
	cr_assert_eq(nth(j, "spread_max_ns", 0), tail[1] - tail[0]);
	cr_assert_eq(nth(j, "compared", 0), ITERS);
	free(j);
}

/* Kernels lost on one rank (its first three, as if its trace began later;
 * one mid-run on another): position alone would pair every later kernel
 * with the reference's next and move the rank by a whole period. Matching
 * by lag, then by nearest end, still finds the true offsets. */
Test(crossrank, survives_lost_collectives)
{
	memset(lost, 0, sizeof lost);
	lost[1][0] = lost[1][1] = lost[1][2] = 1;
	lost[2][10] = 1;
	char *j = job_json();
	memset(lost, 0, sizeof lost);
	for (int r = 1; r < 3; r++) {
		cr_assert_eq(nth(j, "raw_offset_ns", r), raw_off[r] - raw_off[0], "rank %d: %s", r, j);
		cr_assert_eq(nth(j, "refinement_ns", r), wall_off[0] - wall_off[r], "rank %d: %s", r, j);
		cr_assert_eq(nth(j, "residual_p50_ns", r), 0);
		cr_assert_eq(nth(j, "residual_p95_ns", r), 0, "rank %d: %s", r, j);
	}
	cr_assert_eq(nth(j, "collectives_matched", 1), ITERS - 3);
	cr_assert_eq(nth(j, "collectives_unmatched", 1), 3);
	cr_assert_eq(nth(j, "match_lag", 1), -3, "%s", j);
	cr_assert_eq(nth(j, "collectives_matched", 2), ITERS - 1);
	cr_assert_eq(nth(j, "collectives_unmatched", 2), 1);
	/* the wait: every collective of the reference met another rank's;
	 * rank 2 arrives last wherever it has the collective, rank 1 where not */
	cr_assert_eq(nth(j, "compared", 0), ITERS, "%s", j);
	cr_assert_eq(nth(j, "collectives_last", 2), ITERS - 1, "%s", j);
	cr_assert_eq(nth(j, "collectives_last", 1), 1, "%s", j);
	free(j);
}

/* Wall clocks further apart than half the collectives' spacing (rank 1's
 * 12 ms ahead, collectives every 10 ms) and nothing lost: every lag of a
 * periodic run fits alike, and as many kernels on both sides keep the
 * pairs in place order, as before matching looked at lags. */
Test(crossrank, far_wall_clocks_nothing_lost)
{
	int64_t keep = wall_off[1];
	wall_off[1] = wall_off[0] + 12000 * US;
	char *j = job_json();
	wall_off[1] = keep;
	cr_assert_eq(nth(j, "raw_offset_ns", 1), raw_off[1] - raw_off[0], "%s", j);
	cr_assert_eq(nth(j, "collectives_matched", 1), ITERS);
	cr_assert_eq(nth(j, "match_lag", 1), 0);
	free(j);
}
