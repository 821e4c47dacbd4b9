/*
 * test_report_hashflood.c — no trace makes the report slower than linear
 * (report/util/map.h: the keyed hash). The attacker's keys are crafted against
 * the report's former, public, invertible hash: every key lands on the same
 * slot of any table up to 2^20 entries, which made inserting N of them take
 * N^2/2 probes (a 2.5 MB trace: 9 s). Each case times the crafted input
 * against a normal one of the same size in the same run (the best of three,
 * CPU time) and wants the ratio small: a quadratic map gives hundreds.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gp_collector.h"
#include "report/util/map.h"
#include "report/pipeline.h"

#define N_KEYS 60000u
#define MAX_RATIO 6.0

/* The inverse of the former hash k ^= k >> 33; k *= C; k ^= k >> 33
 * (xorshift by 33 of a 64-bit word is its own inverse). */
static uint64_t old_hash_inverse(uint64_t h)
{
	const uint64_t c = 0xff51afd7ed558ccdULL;
	uint64_t inv = c; /* Newton's iteration for c^-1 mod 2^64 */
	for (int i = 0; i < 6; i++)
		inv *= 2 - c * inv;
	h ^= h >> 33;
	h *= inv;
	h ^= h >> 33;
	return h;
}

static uint64_t crafted_key(uint64_t i)
{
	return old_hash_inverse((i + 1) << 20); /* low 20 bits of the old hash: 0 */
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

Test(hashflood, crafted_keys_are_crafted)
{
	/* the keys really do collide under the old hash */
	for (uint64_t i = 0; i < 100; i++) {
		uint64_t k = crafted_key(i);
		k ^= k >> 33;
		k *= 0xff51afd7ed558ccdULL;
		k ^= k >> 33;
		cr_assert_eq(k & ((1u << 20) - 1), 0);
	}
}

static double time_map(int crafted)
{
	double best = 1e9;
	for (int rep = 0; rep < 3; rep++) {
		struct gp_map m = { 0 };
		double t0 = cpu_now();
		for (uint64_t i = 0; i < N_KEYS; i++)
			cr_assert_eq(gp_map_put(&m, crafted ? crafted_key(i) : 0x400000 + i * 16, i), 0);
		for (uint64_t i = 0; i < N_KEYS; i++)
			cr_assert(gp_map_get(&m, crafted ? crafted_key(i) : 0x400000 + i * 16));
		double t = cpu_now() - t0;
		cr_assert_eq(m.count, N_KEYS);
		gp_map_free(&m);
		if (t < best)
			best = t;
	}
	return best;
}

Test(hashflood, map_is_linear_on_crafted_keys, .timeout = 120)
{
	double normal = time_map(0), crafted = time_map(1);
	double ratio = crafted / (normal > 1e-4 ? normal : 1e-4);
	cr_log_info("map: %u keys: normal %.4f s, crafted %.4f s, ratio %.2f\n", N_KEYS, normal, crafted, ratio);
	cr_assert(ratio < MAX_RATIO, "crafted keys took %.4f s against %.4f s (ratio %.1f)", crafted, normal, ratio);
}

/* A trace of N_KEYS symbol records (pc -> name): the pcs crafted or not. */
static double time_trace(int crafted)
{
	union gp_rec *r = calloc(N_KEYS + 1, sizeof *r);
	cr_assert(r);
	r[0].string.type = GP_REC_STRING;
	r[0].string.id = 1;
	r[0].string.len = 3;
	memcpy(r[0].string.text, "f+0", 3);
	for (uint64_t i = 0; i < N_KEYS; i++) {
		r[i + 1].symbol.type = GP_REC_SYMBOL;
		r[i + 1].symbol.name = 1;
		r[i + 1].symbol.pc = crafted ? crafted_key(i) : 0x400000 + i * 16;
	}
	double best = 1e9;
	for (int rep = 0; rep < 3; rep++) {
		struct gp_pipeline_opts po = { .group_by = GP_GROUP_KERNEL, .what = 0, .outlier_factor = 1.5 };
		struct gp_pipeline *p = gp_pipeline_new(&po);
		cr_assert(p);
		char err[256];
		double t0 = cpu_now();
		cr_assert_eq(gp_pipeline_add_records(p, "records", r, N_KEYS + 1, err, sizeof err), 0, "%s", err);
		double t = cpu_now() - t0;
		gp_pipeline_free(p);
		if (t < best)
			best = t;
	}
	free(r);
	return best;
}

Test(hashflood, report_is_linear_on_a_crafted_trace, .timeout = 120)
{
	double normal = time_trace(0), crafted = time_trace(1);
	double ratio = crafted / (normal > 1e-3 ? normal : 1e-3);
	cr_log_info("trace: %u symbols: normal %.4f s, crafted %.4f s, ratio %.2f\n", N_KEYS, normal, crafted, ratio);
	cr_assert(ratio < MAX_RATIO, "the crafted trace took %.4f s against %.4f s (ratio %.1f)", crafted, normal,
		  ratio);
}
