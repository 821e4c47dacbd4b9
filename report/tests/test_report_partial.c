/*
 * test_report_partial.c — Criterion suite for partial results
 * (report/outputs/partial.h, report/util/codec.h): the encoding primitives
 * never read past their span and keep their first error; a gp_rep survives the file bit for bit (a
 * report read back writes the same bytes again), execute distributions in
 * both their forms; counts of record types this build does not know are
 * refused; gp_rep's layout is still the one the encoder knows; and a trace
 * with every analysis, written and read back through the pipeline, prints
 * the same report. Runs on the test thread only.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/analyses/registry.h"
#include "report/outputs/output.h"
#include "report/outputs/partial.h"
#include "report/pipeline.h"
#include "trace_builder.h"

Test(partial, layout_is_the_encoded_one)
{
	char why[512] = "";
	cr_assert(gp_partial_rep_layout_ok(why, sizeof why), "%s", why);
}

Test(partial, fields_round_trip)
{
	struct gp_pw w = { 0 };
	gp_pw_u8(&w, 0xab);
	gp_pw_u32(&w, 0xdeadbeef);
	gp_pw_u64(&w, UINT64_MAX - 1);
	gp_pw_i64(&w, INT64_MIN);
	gp_pw_f64(&w, -0.0);
	gp_pw_f64(&w, NAN);
	gp_pw_str(&w, NULL);
	gp_pw_str(&w, "");
	gp_pw_str(&w, "kernel<int>");
	cr_assert_eq(w.err, 0);
	struct gp_pr r;
	gp_pr_init(&r, w.b, w.n, 0);
	cr_assert_eq(gp_pr_u8(&r), 0xab);
	cr_assert_eq(gp_pr_u32(&r), 0xdeadbeef);
	cr_assert_eq(gp_pr_u64(&r), UINT64_MAX - 1);
	cr_assert_eq(gp_pr_i64(&r), INT64_MIN);
	double z = gp_pr_f64(&r);
	cr_assert(z == 0 && signbit(z));
	cr_assert(isnan(gp_pr_f64(&r)));
	int here = 1;
	cr_assert_null(gp_pr_strdup(&r, &here));
	cr_assert_eq(here, 0);
	char *s = gp_pr_strdup(&r, &here);
	cr_assert(here && s && !*s);
	free(s);
	s = gp_pr_strdup(&r, NULL);
	cr_assert_str_eq(s, "kernel<int>");
	free(s);
	gp_pr_done(&r, "the test");
	cr_assert_eq(r.err, 0, "%s", r.msg);
	/* one more read: past the end, zero, and the error stays the first */
	cr_assert_eq(gp_pr_u64(&r), 0);
	cr_assert_eq(r.err, -EPROTO);
	cr_assert(strstr(r.msg, "runs past the end"), "%s", r.msg);
	gp_pr_fail(&r, "second");
	cr_assert_null(strstr(r.msg, "second"));
	gp_pw_free(&w);
}

Test(partial, lengths_and_counts_are_never_trusted)
{
	unsigned char b[64];
	memset(b, 0xff, sizeof b);
	struct gp_pr r;
	/* a count that claims more elements than the bytes left */
	gp_pr_init(&r, b, 16, 100);
	b[7] = 0;
	cr_assert_eq(gp_pr_count(&r, 8, UINT64_MAX), 0);
	cr_assert_eq(r.err, -EPROTO);
	cr_assert(strstr(r.msg, "at byte 100: a count of 72057594037927935 elements overruns"), "%s", r.msg);
	/* above the format's bound */
	memset(b, 0, sizeof b);
	b[0] = 9;
	gp_pr_init(&r, b, 64, 0);
	cr_assert_eq(gp_pr_count(&r, 1, 8), 0);
	cr_assert(strstr(r.msg, "bound"), "%s", r.msg);
	/* a string longer than what is left, and one holding a NUL */
	b[0] = 200;
	gp_pr_init(&r, b, 64, 0);
	cr_assert_null(gp_pr_strdup(&r, NULL));
	cr_assert(strstr(r.msg, "string runs past the end"), "%s", r.msg);
	b[0] = 3;
	b[4] = 'a';
	b[5] = 0;
	b[6] = 'b';
	gp_pr_init(&r, b, 64, 0);
	cr_assert_null(gp_pr_strdup(&r, NULL));
	cr_assert(strstr(r.msg, "NUL"), "%s", r.msg);
	/* a sub-reader cannot reach beyond its span */
	gp_pr_init(&r, b, 64, 0);
	struct gp_pr sub;
	gp_pr_sub(&r, 8, &sub);
	gp_pr_u64(&sub);
	cr_assert_eq(sub.err, 0);
	gp_pr_u8(&sub);
	cr_assert_eq(sub.err, -EPROTO);
	gp_pr_sub(&r, 57, &sub);
	cr_assert_eq(r.err, -EPROTO);
}

/* A per-trace report with every kind of table. */
static void fill(struct gp_rep *r)
{
	memset(r, 0, sizeof *r);
	r->path = strdup("rank3.gpht");
	r->nkv = 2;
	r->kv = calloc(2, sizeof *r->kv);
	r->kv[0].key = strdup("rank");
	r->kv[0].value = strdup("3");
	r->kv[1].key = strdup("host");
	r->kv[1].value = NULL;
	r->ndevices = 1;
	r->devices = calloc(1, sizeof *r->devices);
	r->devices[0] = strdup("0: NVIDIA H200 (cc 9.0, 132 SMs)");
	r->complete = 1;
	r->end_reason = -EFBIG;
	r->host_busy_pct = 12.5;
	r->proc_cpu_pct = -1;
	r->join_coverage = 1.0 / 3.0;
	r->rec_count[GP_REC_KERNEL] = 42;
	r->sync_kind_ns[GP_API_SYNC_DEVICE] = 7;
	r->wall_ns = 123456789;
	r->ngroups = 2;
	r->groups = calloc(2, sizeof *r->groups);
	r->groups[0].name = strdup("step_kernel");
	r->groups[0].long_name = strdup("step_kernel(float*)");
	r->groups[1].name = strdup("memcpy HtoD");
	for (uint64_t i = 0; i < 3; i++)
		gp_hist_add(&r->groups[0].exec, 1000 + i);
	for (uint64_t i = 0; i < 2000; i++) /* past GP_HIST_EXACT: buckets */
		gp_hist_add(&r->groups[1].exec, 100 + i * 37);
	r->groups[1].kinds = GP_GKIND_COPY;
	r->niters = 2;
	r->iters = calloc(2, sizeof *r->iters);
	r->iters[0] = (struct gp_rep_iter){ .iter = -1, .start = 5, .end = 9, .ops = 3 };
	r->iters[1] = (struct gp_rep_iter){ .iter = 0, .start = 9, .end = 20, .open = 1 };
	r->nwindows = 1;
	r->windows = calloc(1, sizeof *r->windows);
	r->windows[0] = (struct gp_rep_window){ .start = 1, .stop = 2, .open = 1, .ops = 4 };
	r->ncallsites = 1;
	r->callsites = calloc(1, sizeof *r->callsites);
	r->callsites[0].name = strdup("train.py:42");
	r->callsites[0].stack = strdup("train.py:42\nmain.py:7");
	r->callsites[0].calls = 3;
	r->group_by = GP_GROUP_CALLSITE;
}

Test(partial, a_report_survives_bit_for_bit)
{
	struct gp_rep a, b;
	fill(&a);
	struct gp_pw w1 = { 0 }, w2 = { 0 };
	gp_partial_rep_save(&w1, &a);
	cr_assert_eq(w1.err, 0);
	struct gp_pr r;
	gp_pr_init(&r, w1.b, w1.n, 0);
	cr_assert_eq(gp_partial_rep_load(&r, &b), 0, "%s", r.msg);
	gp_pr_done(&r, "the report");
	cr_assert_eq(r.err, 0, "%s", r.msg);
	gp_partial_rep_save(&w2, &b);
	cr_assert_eq(w1.n, w2.n);
	cr_assert_eq(memcmp(w1.b, w2.b, w1.n), 0);
	cr_assert_str_eq(b.kv[0].value, "3");
	cr_assert_null(b.kv[1].value);
	cr_assert_eq(b.join_coverage, 1.0 / 3.0);
	cr_assert_eq(b.groups[1].exec.n, 2000);
	cr_assert_not_null(b.groups[1].exec.buckets);
	cr_assert_eq(gp_hist_quantile(&b.groups[1].exec, 0.99), gp_hist_quantile(&a.groups[1].exec, 0.99));
	cr_assert_eq(gp_hist_quantile(&b.groups[0].exec, 0.5), 1001);
	cr_assert_eq(b.iters[0].iter, -1);
	cr_assert_eq(b.end_reason, -EFBIG);
	/* every prefix is refused with a message, never read past */
	for (size_t n = 0; n < w1.n; n++) {
		struct gp_rep c;
		gp_pr_init(&r, w1.b, n, 0);
		cr_assert_neq(gp_partial_rep_load(&r, &c), 0, "a prefix of %zu bytes was accepted", n);
		cr_assert(r.msg[0]);
	}
	gp_pw_free(&w1);
	gp_pw_free(&w2);
	gp_rep_free(&a);
	gp_rep_free(&b);
}

Test(partial, counts_of_unknown_record_types_are_refused)
{
	struct gp_rep a, b;
	fill(&a);
	struct gp_pw w = { 0 };
	gp_partial_rep_save(&w, &a);
	/* the record-type counts follow path, kv, ids, devices, flags, ...:
	 * find them by their length field and announce one more type */
	uint32_t n = GP_REC_TYPE_COUNT;
	unsigned char want[4] = { (unsigned char)n, (unsigned char)(n >> 8), 0, 0 };
	size_t at = 0;
	for (size_t i = 0; i + 4 + 8 * (size_t)n <= w.n; i++)
		if (!memcmp(w.b + i, want, 4) && w.b[i + 4 + 8 * GP_REC_KERNEL] == 42) {
			at = i;
			break;
		}
	cr_assert(at);
	struct gp_pw x = { 0 };
	gp_pw_bytes(&x, w.b, at);
	gp_pw_u32(&x, n + 1);
	gp_pw_bytes(&x, w.b + at + 4, 8 * (size_t)n);
	gp_pw_u64(&x, 5); /* a count of a type this build does not know */
	gp_pw_bytes(&x, w.b + at + 4 + 8 * (size_t)n, w.n - at - 4 - 8 * (size_t)n);
	struct gp_pr r;
	gp_pr_init(&r, x.b, x.n, 0);
	cr_assert_neq(gp_partial_rep_load(&r, &b), 0);
	cr_assert(strstr(r.msg, "record types this gpuphase-report does not know"), "%s", r.msg);
	/* and a zero count of it is fine */
	memset(x.b + at + 4 + 8 * (size_t)n, 0, 8);
	gp_pr_init(&r, x.b, x.n, 0);
	cr_assert_eq(gp_partial_rep_load(&r, &b), 0, "%s", r.msg);
	gp_rep_free(&b);
	gp_pw_free(&w);
	gp_pw_free(&x);
	gp_rep_free(&a);
}

/* ---- a trace through the pipeline, written and read back ------------------------- */

#define T0 1000000000ull
#define US 1000ull

/* 60 iterations of a launch, a drifting kernel and a device sync, under
 * busy host samples. */
static void timeline(struct recs *t)
{
	rec_string(t, 1, "_Z4stepv");
	for (uint32_t i = 0; i < 60; i++) {
		uint64_t at = T0 + i * 400 * US;
		rec_iter(t, i, at);
		rec_api(t, GP_REC_RUNTIME_API, GP_API_LAUNCH, 7, at + 10 * US, 10 * US, 2 * i + 1);
		uint64_t end = at + 30 * US + (50 + i * (i == 40 ? 20 : 2)) * US;
		rec_kernel(t, 13, at + 30 * US, end, 2 * i + 1, 1);
		rec_api(t, GP_REC_RUNTIME_API, GP_API_SYNC_DEVICE, 7, at + 25 * US, (uint32_t)(end - (at + 25 * US) + 2 * US),
			2 * i + 2);
	}
	for (uint32_t i = 1; i <= 12; i++) {
		union gp_rec *h = rec_new(t);
		h->host.type = GP_REC_HOST_SAMPLE;
		h->host.ncpu = 2;
		h->host.ts = T0 + i * 2000 * US;
		h->host.interval_us = 2000;
		h->host.host_busy_pm = i % 3 ? 800 : 100;
		h->host.proc_cpu_pm = 333;
	}
}

/* The whole report of pipeline p (text with each analysis, then json). */
static char *print(struct gp_pipeline *p, size_t n)
{
	struct gp_rep rep;
	cr_assert_eq(gp_pipeline_report(p, 0, n, &rep), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct gp_out_opts o = { .format = GP_FMT_TEXT, .th = GP_THRESHOLDS_DEFAULT, .outlier_factor = 1.5,
				 .straggler_pct = 10, .analyses = gp_pipeline_analyses(p), .ntraces = n };
	struct gp_analysis_style style = { .outlier_factor = 1.5 };
	cr_assert_eq(gp_out_report(f, &rep, &o), 0);
	for (size_t x = 0; x < n; x++)
		cr_assert_eq(gp_analyses_text(f, o.analyses[x], gp_out_trace_rep(&rep, &o, x), &style), 0);
	o.format = GP_FMT_JSON;
	cr_assert_eq(gp_out_report(f, &rep, &o), 0);
	fclose(f);
	gp_rep_free(&rep);
	return buf;
}

Test(partial, the_pipeline_prints_the_same_from_partials)
{
	static struct recs t;
	t.n = 0;
	timeline(&t);
	struct gp_pipeline_opts po = { .group_by = GP_GROUP_KERNEL, .what = GP_PIPE_ANALYSES, .outlier_factor = 1.5 };
	struct gp_pipeline *one = gp_pipeline_new(&po);
	char err[256];
	for (int k = 0; k < 2; k++)
		cr_assert_eq(gp_pipeline_add_records(one, "records", t.r, t.n, err, sizeof err), 0, "%s", err);
	char path[] = "/tmp/gp_partial_test.XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	FILE *f = fdopen(fd, "wb");
	struct gp_partial_opts o = { .group_by = GP_GROUP_KERNEL, .outlier_factor = 1.5 };
	struct gp_rep reps[2] = { *gp_pipeline_rep(one, 0), *gp_pipeline_rep(one, 1) };
	cr_assert_eq(gp_partial_write(f, &o, reps, gp_pipeline_analyses(one), 2, err, sizeof err), 0, "%s", err);
	fclose(f);
	struct gp_partial_opts back;
	cr_assert_eq(gp_partial_read_opts(path, &back, err, sizeof err), 0, "%s", err);
	cr_assert_eq(back.outlier_factor, 1.5);
	cr_assert_str_eq(back.whatif, "");
	struct gp_pipeline *merged = gp_pipeline_new(&po);
	cr_assert_eq(gp_pipeline_add_partial(merged, path, err, sizeof err), 0, "%s", err);
	cr_assert_eq(gp_pipeline_count(merged), 2);
	unlink(path);
	char *a = print(one, 2), *b = print(merged, 2);
	cr_assert(strstr(a, "Trends") && strstr(a, "Host conditions") && strstr(a, "What-if"), "%s", a);
	cr_assert_str_eq(a, b);
	free(a);
	free(b);
	gp_pipeline_free(one);
	gp_pipeline_free(merged);
}
