/*
 * test_report_core.c — Criterion suite for the report's analysis core
 * (report/core/: analysis.c, verdict.c; report/util/: stats.c, map.c).
 * Every test builds a small synthetic timeline as record arrays (no trace
 * file), runs both passes and compares with the values the phase definitions
 * (docs/metrics.md) give for that timeline; the expected values are computed
 * in the test from the timeline's own constants. Runs on the test thread
 * only.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/core/analysis.h"
#include "report/util/fmt.h"
#include "report/outputs/output.h"
#include "report/util/map.h"
#include "report/util/stats.h"
#include "report/core/verdict.h"
#include "trace_builder.h"

/* --- record builders ------------------------------------------------------- */

static void marker(struct recs *t, uint8_t kind, uint32_t tid, uint64_t ts, uint32_t name)
{
	union gp_rec *r = rec_new(t);
	r->marker.type = GP_REC_MARKER;
	r->marker.kind = kind;
	r->marker.tid = tid;
	r->marker.ts = ts;
	r->marker.name = name;
}

/* Run both passes over t (in array order) and return the report. */
static struct gp_rep run(const struct recs *t, enum gp_group_by by)
{
	struct gp_an_config cfg = { .group_by = by };
	struct gp_an *an = gp_an_new(&cfg);
	cr_assert(an);
	for (int pass = 1; pass <= 2; pass++) {
		for (size_t i = 0; i < t->n;) {
			uint32_t ns = gp_rec_slots(&t->r[i]);
			int rc = pass == 1 ? gp_an_scan1(an, &t->r[i], ns) : gp_an_scan2(an, &t->r[i], ns);
			cr_assert_eq(rc, 0);
			i += ns;
		}
		if (pass == 1)
			cr_assert_eq(gp_an_prepare(an), 0);
	}
	struct gp_rep rep;
	memset(&rep, 0, sizeof rep);
	cr_assert_eq(gp_an_finish(an, &rep), 0);
	gp_an_free(an);
	return rep;
}

static const struct gp_rep_group *group(const struct gp_rep *rep, const char *name)
{
	for (size_t i = 0; i < rep->ngroups; i++)
		if (!strcmp(rep->groups[i].name, name))
			return &rep->groups[i];
	cr_assert_fail("no group %s", name);
	return NULL;
}

#define RT GP_REC_RUNTIME_API

/* --- join ------------------------------------------------------------------------ */

Test(report_core, kernel_joins_its_runtime_call)
{
	struct recs t = { .n = 0 };
	const uint64_t a0 = 1000, adur = 50, g0 = 1100, g1 = 1300;
	rec_string(&t, 1, "_Z7aten_mmPfi");
	rec_api(&t, RT, GP_API_LAUNCH, 11, a0, adur, 7);
	rec_kernel(&t, 3, g0, g1, 7, 1);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_assert_eq(rep.ngroups, 1);
	const struct gp_rep_group *g = group(&rep, "aten_mm");
	cr_expect_str_eq(g->long_name, "aten_mm(float*, int)");
	cr_expect_eq(g->count, 1);
	cr_expect_eq(g->launch_ns, adur);
	cr_expect_eq(g->queue_ns, g0 - (a0 + adur));
	cr_expect_eq(g->execute_ns, g1 - g0);
	cr_expect_eq(g->sync_ns, 0);
	cr_expect_eq(rep.ops_joined, 1);
	cr_expect_eq(rep.join_coverage, 1.0);
	gp_rep_free(&rep);
}

Test(report_core, join_is_independent_of_arrival_order)
{
	/* Same ops, GPU records before API records and strings last. */
	struct recs t = { .n = 0 };
	rec_kernel(&t, 1, 500, 900, 2, 9);
	rec_kernel(&t, 1, 100, 400, 1, 9);
	rec_api(&t, RT, GP_API_LAUNCH, 5, 90, 5, 2);
	rec_api(&t, RT, GP_API_LAUNCH, 5, 10, 20, 1);
	rec_string(&t, 9, "k");
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	const struct gp_rep_group *g = group(&rep, "k");
	cr_expect_eq(g->count, 2);
	cr_expect_eq(g->launch_ns, 20 + 5);
	cr_expect_eq(g->queue_ns, (100 - 30) + (500 - 95));
	cr_expect_eq(g->execute_ns, 300 + 400);
	cr_expect_eq(gp_hist_quantile(&g->exec, 0.5), 300);
	cr_expect_eq(gp_hist_quantile(&g->exec, 1.0), 400);
	gp_rep_free(&rep);
}

Test(report_core, equal_texts_under_different_ids_are_one_group)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "a_rather_long_kernel_name_that_needs_continuations");
	rec_string(&t, 2, "a_rather_long_kernel_name_that_needs_continuations");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
	rec_kernel(&t, 1, 20, 30, 1, 1);
	rec_api(&t, RT, GP_API_LAUNCH, 2, 0, 10, 2);
	rec_kernel(&t, 2, 40, 50, 2, 2);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_assert_eq(rep.ngroups, 1);
	cr_expect_eq(group(&rep, "a_rather_long_kernel_name_that_needs_continuations")->count, 2);
	gp_rep_free(&rep);
}

Test(report_core, hook_context_joins_through_external_correlation)
{
	/* hook op 100 (tid 4, inside NVTX range "aten::mm") -> CUPTI corr 7. */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "gemm");
	rec_string(&t, 2, "aten::mm");
	marker(&t, GP_MARK_PUSH, 4, 5, 2);
	rec_api(&t, GP_REC_HOOK_API, GP_API_LAUNCH, 4, 10, 40, 100);
	marker(&t, GP_MARK_POP, 4, 60, 0);
	rec_kernel(&t, 1, 70, 170, 7, 1);      /* GPU record before the API record */
	rec_api(&t, RT, GP_API_LAUNCH, 4, 12, 30, 7);
	rec_extcorr(&t, 7, 100);               /* ext corr last */
	struct gp_rep rep = run(&t, GP_GROUP_NVTX);
	cr_assert_eq(rep.ngroups, 1);
	const struct gp_rep_group *g = group(&rep, "aten::mm");
	cr_expect_eq(g->launch_ns, 30, "CUPTI API duration is the launch truth");
	cr_expect_eq(g->queue_ns, 70 - 42);
	cr_expect_eq(rep.hooks_unjoined, 0);
	gp_rep_free(&rep);
}

Test(report_core, memcpy_joins_runtime_record_by_runtime_corr)
{
	struct recs t = { .n = 0 };
	rec_api(&t, RT, GP_API_MEMCPY_ASYNC, 1, 0, 15, 20);
	rec_api(&t, GP_REC_DRIVER_API, GP_API_MEMCPY_ASYNC, 1, 2, 10, 21); /* nested driver call */
	rec_copy(&t, GP_REC_MEMCPY, 1, 1, 30, 100, 21, 20, 1);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	const struct gp_rep_group *g = group(&rep, "memcpy HtoD");
	cr_expect_eq(g->count, 1);
	cr_expect_eq(g->launch_ns, 15);
	cr_expect_eq(g->queue_ns, 30 - 15);
	cr_expect_eq(g->execute_ns, 100);
	cr_expect_eq(rep.host_api_ns, 15, "driver call inside a runtime call is not counted twice");
	gp_rep_free(&rep);
}

Test(report_core, op_without_api_record_is_reported)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "orphan");
	rec_kernel(&t, 1, 100, 200, 77, 1);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_expect_eq(rep.ops, 1);
	cr_expect_eq(rep.ops_no_api, 1);
	cr_expect_eq(rep.join_coverage, 0.0);
	cr_expect_eq(group(&rep, "orphan")->execute_ns, 100);
	gp_rep_free(&rep);
}

Test(report_core, graph_launch_host_cost_is_charged_once)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "node");
	rec_api(&t, RT, GP_API_GRAPH_LAUNCH, 1, 0, 80, 5);
	rec_kernel(&t, 1, 100, 150, 5, 1);
	rec_kernel(&t, 1, 150, 250, 5, 1);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	const struct gp_rep_group *g = group(&rep, "node");
	cr_expect_eq(g->count, 2);
	cr_expect_eq(g->launch_ns, 80);
	cr_expect_eq(g->execute_ns, 50 + 100);
	cr_expect_eq(g->queue_ns, (100 - 80) + (150 - 80));
	gp_rep_free(&rep);
}

Test(report_core, hook_only_mode_keeps_launch_and_says_so)
{
	struct recs t = { .n = 0 };
	rec_status(&t, GP_STATUS_CUPTI_UNAVAILABLE, 0);
	rec_api(&t, GP_REC_HOOK_API, GP_API_LAUNCH, 1, 0, 25, 1);
	rec_api(&t, GP_REC_HOOK_API, GP_API_LAUNCH, 1, 100, 35, 2);
	rec_api(&t, GP_REC_HOOK_API, GP_API_SYNC_DEVICE, 1, 200, 500, 3);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_expect(rep.cupti_unavailable);
	cr_expect_eq(rep.ops, 2);
	cr_expect_eq(rep.ops_no_gpu, 2);
	cr_expect_eq(rep.launch_ns, 25 + 35);
	cr_expect_eq(rep.execute_ns, 0);
	cr_expect_eq(rep.sync_unattributed_ns, 500, "no GPU times: the wait cannot be charged");
	cr_expect_eq(rep.host_api_ns, 25 + 35 + 500);
	gp_rep_free(&rep);
}

/* --- sync attribution --------------------------------------------------------------- */

/* metrics.md §3: a wait is split over the ops it waited for, each charged
 * from the previous one's end to its own, the last also the rest. */
Test(report_core, device_sync_split_over_the_ops_it_waited_for)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "short");
	rec_string(&t, 2, "long");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
	rec_kernel(&t, 1, 20, 300, 1, 1);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 10, 10, 2);
	rec_kernel(&t, 2, 25, 900, 2, 2);
	const uint64_t w0 = 30, w1 = 905;
	rec_api(&t, RT, GP_API_SYNC_DEVICE, 1, w0, (uint32_t)(w1 - w0), 3);
	rec_sync(&t, 4, UINT32_MAX, w0, w1, 3);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_expect_eq(group(&rep, "short")->sync_ns, 300 - w0, "waited for until it ended");
	cr_expect_eq(group(&rep, "long")->sync_ns, w1 - 300, "from the short one's end to the call's");
	cr_expect_eq(group(&rep, "short")->sync_calls, 1);
	cr_expect_eq(group(&rep, "long")->sync_calls, 1);
	cr_expect_eq(rep.sync_ns, w1 - w0, "the parts add up to the wait");
	cr_expect_eq(rep.sync_calls[GP_API_SYNC_DEVICE], 1);
	cr_expect_eq(rep.sync_unattributed_ns, 0);
	gp_rep_free(&rep);
}

/* A short op queued behind a long one ends last: it is charged only from
 * the long one's end (not "sync-bound" for the long one's wait). */
Test(report_core, short_op_ending_last_gets_only_its_own_part)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "train_step");
	rec_string(&t, 2, "log_metrics");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
	rec_kernel(&t, 1, 20, 300000, 1, 1);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 10, 10, 2);
	rec_kernel(&t, 1, 300000, 303000, 2, 2);
	const uint64_t w0 = 30, w1 = 305000;
	rec_api(&t, RT, GP_API_SYNC_DEVICE, 1, w0, (uint32_t)(w1 - w0), 3);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_expect_eq(group(&rep, "train_step")->sync_ns, 300000 - w0);
	cr_expect_eq(group(&rep, "log_metrics")->sync_ns, w1 - 300000);
	cr_expect_eq(rep.sync_ns, w1 - w0);
	gp_rep_free(&rep);
}

/* metrics.md §3, host callbacks: a callback's run (GP_REC_HOST_CALLBACK) is
 * an op and a candidate; the wait from the copy's end on is the callback's,
 * its run is its execute but no GPU busy time, and a record whose end would
 * wrap is no op at all. */
static void rec_hostcb(struct recs *t, uint64_t start, uint32_t dur, uint32_t op)
{
	union gp_rec *r = rec_new(t);
	r->hostcb.type = GP_REC_HOST_CALLBACK;
	r->hostcb.tid = 9;
	r->hostcb.start = start;
	r->hostcb.dur = dur;
	r->hostcb.op = op;
	r->hostcb.fn = 0x1000;
}

Test(report_core, wait_for_a_host_callback_is_the_callbacks)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "copy_like");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
	rec_kernel(&t, 1, 20, 300, 1, 1);
	rec_api(&t, RT, GP_API_HOST_FUNC, 1, 12, 6, 2);
	rec_hostcb(&t, 310, 3000, 5);
	rec_hostcb(&t, UINT64_MAX - 50, 100, 6); /* corrupt: ignored */
	const uint64_t w0 = 30, w1 = 3320;
	rec_api(&t, RT, GP_API_SYNC_DEVICE, 1, w0, (uint32_t)(w1 - w0), 3);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	const struct gp_rep_group *cb = group(&rep, "host callback");
	cr_expect_eq(group(&rep, "copy_like")->sync_ns, 300 - w0, "the copy: only until its own end");
	cr_expect_eq(cb->sync_ns, w1 - 300, "the callback: from the copy's end to the call's");
	cr_expect_eq(cb->count, 1, "the corrupt record is no op");
	cr_expect_eq(cb->execute_ns, 3000, "its run is its execute");
	cr_expect_eq(cb->launch_ns, 0);
	cr_expect_eq(rep.gpu_busy_ns, 280, "only the kernel is GPU time");
	cr_expect_eq(rep.sync_ns, w1 - w0);
	gp_rep_free(&rep);
}

/* Bounded: a wait keeps its GP_WAIT_CANDS latest-ending candidates; the
 * earlier ones merge into the first kept, charged from the wait's start. */
Test(report_core, split_keeps_the_latest_ending_candidates)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "early");
	rec_string(&t, 2, "late");
	const uint32_t n = 8 + 4; /* GP_WAIT_CANDS (analysis_int.h) and 4 more */
	for (uint32_t i = 0; i < n; i++) {
		rec_api(&t, RT, GP_API_LAUNCH, 1, i, 1, i + 1);
		rec_kernel(&t, 1, 100 + 1000 * i, 1000 * (i + 1), i + 1, i < 4 ? 1 : 2);
	}
	const uint64_t w0 = 100, w1 = 1000 * n + 50;
	rec_api(&t, RT, GP_API_SYNC_DEVICE, 1, w0, (uint32_t)(w1 - w0), n + 1);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	/* the 4 earliest merge into the 5th ("late"): all of it is "late"'s */
	cr_expect_eq(group(&rep, "early")->sync_ns, 0);
	cr_expect_eq(group(&rep, "late")->sync_ns, w1 - w0);
	cr_expect_eq(group(&rep, "late")->sync_calls, 1, "one wait, however many of its ops");
	gp_rep_free(&rep);
}

Test(report_core, stream_sync_only_sees_its_stream)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "on_s1");
	rec_string(&t, 2, "on_s2");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
	rec_kernel(&t, 1, 20, 300, 1, 1);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 10, 10, 2);
	rec_kernel(&t, 2, 25, 900, 2, 2);
	rec_api(&t, RT, GP_API_SYNC_STREAM, 1, 30, 275, 3); /* ends at 305 */
	rec_sync(&t, 3, 1, 30, 305, 3);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_expect_eq(group(&rep, "on_s1")->sync_ns, 275);
	cr_expect_eq(group(&rep, "on_s2")->sync_ns, 0);
	gp_rep_free(&rep);
}

Test(report_core, sync_with_nothing_outstanding)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "done_early");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
	rec_kernel(&t, 1, 20, 50, 1, 1);
	rec_api(&t, RT, GP_API_SYNC_DEVICE, 1, 100, 7, 2);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_expect_eq(group(&rep, "done_early")->sync_ns, 0);
	cr_expect_eq(rep.sync_unattributed_ns, 7);
	cr_expect_eq(rep.sync_unattributed_calls, 1);
	gp_rep_free(&rep);
}

Test(report_core, op_enqueued_during_the_wait_is_not_waited_for)
{
	/* thread 2 launches while thread 1 waits; its kernel ends inside W. */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "waited");
	rec_string(&t, 2, "later");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
	rec_kernel(&t, 1, 20, 500, 1, 1);
	rec_api(&t, RT, GP_API_SYNC_DEVICE, 1, 30, 700, 2);
	rec_api(&t, RT, GP_API_LAUNCH, 2, 100, 10, 3);
	rec_kernel(&t, 1, 500, 600, 3, 2);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_expect_eq(group(&rep, "waited")->sync_ns, 700);
	cr_expect_eq(group(&rep, "later")->sync_ns, 0);
	gp_rep_free(&rep);
}

Test(report_core, blocking_memcpy_splits_into_sync_launch_execute)
{
	/* a clock without error: the copy's return after its transfer is no
	 * offset here (docs/metrics.md §2, "The GPU's clock") */
	setenv("GPUPHASE_REPORT_GPU_CLOCK", "raw", 1);
	/* kernel K runs [100, 500]; cudaMemcpy called at 200 returns at 700;
	 * its copy runs [520, 600]. Sync part = 500 - 200 charged to K; the copy
	 * keeps launch = 500 - 80 - 300 and execute 80. */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "K");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 50, 20, 1);
	rec_kernel(&t, 7, 100, 500, 1, 1);
	rec_api(&t, RT, GP_API_MEMCPY_SYNC, 1, 200, 500, 2);
	rec_copy(&t, GP_REC_MEMCPY, 0, 7, 520, 80, 3, 2, 2);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	const struct gp_rep_group *k = group(&rep, "K"), *c = group(&rep, "memcpy DtoH");
	cr_expect_eq(k->sync_ns, 500 - 200);
	cr_expect_eq(c->execute_ns, 80);
	cr_expect_eq(c->launch_ns, 500 - 80 - (500 - 200));
	cr_expect_eq(c->sync_ns, 0);
	cr_expect_eq(rep.sync_calls[GP_API_MEMCPY_SYNC], 1);
	/* nothing counted twice: host time = launches + sync + own execution */
	cr_expect_eq(rep.host_api_ns, k->launch_ns + c->launch_ns + k->sync_ns + c->execute_ns);
	gp_rep_free(&rep);
}

Test(report_core, blocking_memcpy_with_idle_gpu_has_no_sync_part)
{
	struct recs t = { .n = 0 };
	rec_api(&t, RT, GP_API_MEMCPY_SYNC, 1, 200, 100, 2);
	rec_copy(&t, GP_REC_MEMCPY, 0, 7, 220, 60, 3, 2, 1);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	const struct gp_rep_group *c = group(&rep, "memcpy HtoD");
	cr_expect_eq(c->launch_ns, 100 - 60);
	cr_expect_eq(rep.sync_ns, 0);
	cr_expect_eq(rep.sync_calls[GP_API_MEMCPY_SYNC], 0);
	gp_rep_free(&rep);
}

/* --- window accounting ----------------------------------------------------------------- */

Test(report_core, gpu_busy_is_the_union_of_overlapping_streams)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	rec_kernel(&t, 1, 0 + 1000, 100 + 1000, 1, 1);
	rec_kernel(&t, 2, 50 + 1000, 150 + 1000, 2, 1);
	rec_kernel(&t, 1, 200 + 1000, 300 + 1000, 3, 1);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_expect_eq(rep.gpu_busy_ns, 150 + 100, "union of [0,100],[50,150],[200,300]");
	cr_expect_eq(rep.gpu_busy_sum_ns, 300);
	cr_expect_eq(rep.wall_ns, 300);
	cr_expect_eq(rep.gpu_idle_ns, 50);
	cr_expect_eq(rep.unattributed_ns, 50);
	gp_rep_free(&rep);
}

Test(report_core, iterations_sum_their_ops)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	rec_iter(&t, 0, 1000);
	rec_iter(&t, 1, 2000);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 1100, 10, 1);
	rec_kernel(&t, 1, 1200, 1300, 1, 1);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 2100, 30, 2);
	rec_kernel(&t, 1, 2200, 2600, 2, 1);
	rec_api(&t, RT, GP_API_SYNC_DEVICE, 1, 2150, 500, 3);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_assert_eq(rep.niters, 2);
	cr_expect_eq(rep.iters[0].start, 1000);
	cr_expect_eq(rep.iters[0].end, 2000);
	cr_expect_eq(rep.iters[0].launch_ns, 10);
	cr_expect_eq(rep.iters[0].execute_ns, 100);
	cr_expect_eq(rep.iters[1].launch_ns, 30);
	cr_expect_eq(rep.iters[1].execute_ns, 400);
	cr_expect_eq(rep.iters[1].sync_ns, 500);
	cr_expect_eq(rep.iters[1].end, 2650, "last iteration ends with the trace");
	gp_rep_free(&rep);
}

/* --- the rule-of-thumb table --------------------------------------------------------------- */

Test(report_core, rule_of_thumb_verdicts)
{
	/* Three operators with launch / execute / sync (us) 820/450/1230,
	 * 150/3200/80 and 60/120/50, built as: launch call, kernel, then a
	 * device sync that waits for it. */
	static const struct { const char *name; uint64_t l, e, s; enum gp_verdict v; } ops[] = {
		{ "op_sync", 820, 450, 1230, GP_VERDICT_SYNC },
		{ "op_compute", 150, 3200, 80, GP_VERDICT_COMPUTE },
		{ "op_small", 60, 120, 50, GP_VERDICT_LAUNCH },
	};
	struct recs t = { .n = 0 };
	uint64_t now = 1000000;
	for (uint32_t i = 0; i < 3; i++) {
		const uint64_t us = 1000;
		rec_string(&t, i + 1, ops[i].name);
		uint64_t a0 = now, a1 = a0 + ops[i].l * us;
		/* the sync begins when the kernel is (sync) before its end */
		uint64_t g1 = a1 + ops[i].s * us, g0 = g1 - ops[i].e * us;
		if (g0 < a1) { /* execute longer than the sync: start at launch end, sync later */
			g0 = a1;
			g1 = g0 + ops[i].e * us;
		}
		rec_api(&t, RT, GP_API_LAUNCH, 1, a0, (uint32_t)(a1 - a0), 10 * i + 1);
		rec_kernel(&t, 1, g0, g1, 10 * i + 1, i + 1);
		uint64_t w1 = g1, w0 = w1 - ops[i].s * us;
		rec_api(&t, RT, GP_API_SYNC_DEVICE, 1, w0, (uint32_t)(w1 - w0), 10 * i + 2);
		now = w1 + 1000 * us;
	}
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	struct gp_thresholds th = GP_THRESHOLDS_DEFAULT;
	for (int i = 0; i < 3; i++) {
		const struct gp_rep_group *g = group(&rep, ops[i].name);
		cr_expect_eq(g->launch_ns, ops[i].l * 1000);
		cr_expect_eq(g->execute_ns, ops[i].e * 1000);
		cr_expect_eq(g->sync_ns, ops[i].s * 1000, "%s sync", ops[i].name);
		cr_expect_eq(gp_verdict_of(g->launch_ns, g->execute_ns, g->sync_ns, &th), ops[i].v, "%s", ops[i].name);
	}
	gp_rep_free(&rep);
}

Test(report_core, verdict_thresholds_are_configurable)
{
	struct gp_thresholds th = { 60.0, 20.0, 80.0, 1.0 };
	cr_expect_eq(gp_verdict_of(820, 450, 1230, &th), GP_VERDICT_LAUNCH);
	th = (struct gp_thresholds){ 30.0, 20.0, 95.0, 1.0 };
	cr_expect_eq(gp_verdict_of(150, 3200, 80, &th), GP_VERDICT_BALANCED);
	cr_expect_eq(gp_verdict_of(0, 0, 0, &th), GP_VERDICT_NONE);
	char buf[64];
	gp_verdict_reason(GP_VERDICT_SYNC, 820, 450, 1230, &th, buf, sizeof buf);
	cr_expect_str_eq(buf, "sync 49.2% > 30%");
}

/* --- merging ------------------------------------------------------------------------------------ */

Test(report_core, merge_two_ranks)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 1000, 10, 1);
	rec_kernel(&t, 1, 1020, 1120, 1, 1);
	struct gp_rep in[2] = { run(&t, GP_GROUP_KERNEL), run(&t, GP_GROUP_KERNEL) };
	struct gp_rep m;
	memset(&m, 0, sizeof m);
	cr_assert_eq(gp_rep_merge(&m, in, 2), 0);
	cr_expect_eq(m.nranks, 2);
	cr_expect_eq(group(&m, "k")->count, 2);
	cr_expect_eq(group(&m, "k")->execute_ns, 200);
	cr_expect_eq(m.wall_ns, 120);
	gp_rep_free(&m);
}

/* --- building blocks ------------------------------------------------------------------------------ */

Test(report_stats, hist_quantiles_exact_then_bucketed)
{
	struct gp_hist h;
	memset(&h, 0, sizeof h);
	for (uint64_t v = 1; v <= 100; v++)
		gp_hist_add(&h, v * 1000);
	cr_expect_eq(gp_hist_quantile(&h, 0.5), 50000);
	cr_expect_eq(gp_hist_quantile(&h, 0.99), 99000);
	for (uint64_t v = 101; v <= 10000; v++)
		gp_hist_add(&h, v * 1000);
	uint64_t p50 = gp_hist_quantile(&h, 0.5), p99 = gp_hist_quantile(&h, 0.99);
	cr_expect(p50 > 5000000 * 0.992 && p50 < 5000000 * 1.008, "p50 %lu", (unsigned long)p50);
	cr_expect(p99 > 9900000 * 0.992 && p99 < 9900000 * 1.008, "p99 %lu", (unsigned long)p99);
	cr_expect_eq(gp_hist_quantile(&h, 1.0), 10000000);
	cr_expect_eq(h.sum, 1000ULL * 10000 * 10001 / 2);
	gp_hist_free(&h);
}

/* Buckets are kept only over the range the samples fell in: the order the
 * samples come in, and merging, never change a quantile; a narrow
 * distribution keeps a few hundred counters, not GP_HIST_NBUCKETS. */
Test(report_stats, hist_buckets_cover_only_their_range)
{
	enum { N = 5000 };
	static uint64_t v[N];
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < N; i++) { /* 1 us .. 1 ms, xorshift */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		v[i] = 1000 + x % 999000;
	}
	struct gp_hist up, down, shuffled, lo, hi;
	memset(&up, 0, sizeof up), memset(&down, 0, sizeof down), memset(&shuffled, 0, sizeof shuffled);
	memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
	uint64_t *sorted = malloc(sizeof v);
	memcpy(sorted, v, sizeof v);
	qsort(sorted, N, sizeof *sorted, gp_stats_cmp_u64);
	for (int i = 0; i < N; i++) {
		gp_hist_add(&up, sorted[i]);
		gp_hist_add(&down, sorted[N - 1 - i]);
		gp_hist_add(&shuffled, v[i]);
		gp_hist_add(sorted[i] < 500000 ? &lo : &hi, sorted[i]); /* disjoint ranges */
	}
	cr_assert_eq(gp_hist_merge(&lo, &hi), 0);
	for (int k = 1; k < 100; k++) {
		double q = k / 100.0;
		uint64_t want = gp_hist_quantile(&up, q);
		cr_expect_eq(gp_hist_quantile(&down, q), want, "q %.2f", q);
		cr_expect_eq(gp_hist_quantile(&shuffled, q), want, "q %.2f", q);
		cr_expect_eq(gp_hist_quantile(&lo, q), want, "q %.2f", q);
		/* nearest rank within the buckets' 0.8 % */
		uint64_t exact = sorted[(size_t)ceil(q * N) - 1];
		cr_expect(want >= exact * 0.99 && want <= exact * 1.01, "q %.2f: %lu vs %lu", q, (unsigned long)want,
			  (unsigned long)exact);
	}
	/* 1 us .. 1 ms is 10 powers of two, 1280 buckets; a window grows by
	 * doubling: at most twice that, a third of all */
	cr_expect(up.blen <= 2 * 1280 + 64 && down.blen <= 2 * 1280 + 64 && shuffled.blen <= 2 * 1280 + 64,
		  "%u %u %u", up.blen, down.blen, shuffled.blen);
	/* the whole range, both ends */
	struct gp_hist wide;
	memset(&wide, 0, sizeof wide);
	for (int i = 0; i < 600; i++)
		gp_hist_add(&wide, i % 2 ? UINT64_MAX - (uint64_t)i : (uint64_t)i);
	cr_expect_eq(wide.blen, GP_HIST_NBUCKETS);
	cr_expect_eq(gp_hist_quantile(&wide, 0.25), 299); /* 298: the bucket [298, 300) */
	cr_expect_eq(gp_hist_bucket_add(&wide, GP_HIST_NBUCKETS, 1), -EINVAL);
	free(sorted);
	gp_hist_free(&up), gp_hist_free(&down), gp_hist_free(&shuffled), gp_hist_free(&lo), gp_hist_free(&hi);
	gp_hist_free(&wide);
}

Test(report_stats, sweep_union_matches_brute_force)
{
	/* random intervals, fed slightly out of order */
	srand(7);
	static uint8_t covered[200000];
	memset(covered, 0, sizeof covered);
	struct gp_sweep s;
	memset(&s, 0, sizeof s);
	uint64_t base = 0;
	for (int i = 0; i < 20000; i++) {
		base += (uint64_t)(rand() % 9);
		uint64_t a = base + (uint64_t)(rand() % 50), b = a + (uint64_t)(rand() % 30);
		if (b >= sizeof covered)
			break;
		for (uint64_t x = a; x < b; x++)
			covered[x] = 1;
		gp_sweep_add(&s, a, b);
	}
	uint64_t want = 0;
	for (size_t x = 0; x < sizeof covered; x++)
		want += covered[x];
	cr_expect_eq(gp_sweep_finish(&s), want);
	cr_expect_eq(s.late, 0);
	gp_sweep_free(&s);
}

Test(report_stats, map_matches_reference_under_deletes)
{
	struct gp_map m = { 0 };
	static uint64_t ref[4096];
	for (int i = 0; i < 4096; i++)
		ref[i] = UINT64_MAX;
	srand(3);
	for (int i = 0; i < 200000; i++) {
		uint64_t k = (uint64_t)(rand() % 4096);
		if (rand() % 3 == 0) {
			cr_assert_eq(gp_map_del(&m, k), ref[k] != UINT64_MAX);
			ref[k] = UINT64_MAX;
		} else {
			cr_assert_eq(gp_map_put(&m, k, (uint64_t)i), 0);
			ref[k] = (uint64_t)i;
		}
	}
	size_t live = 0;
	for (uint64_t k = 0; k < 4096; k++) {
		uint64_t *v = gp_map_get(&m, k);
		if (ref[k] == UINT64_MAX) {
			cr_assert_null(v);
		} else {
			cr_assert_not_null(v);
			cr_assert_eq(*v, ref[k]);
			live++;
		}
	}
	cr_expect_eq(m.count, live);
	gp_map_free(&m);
}

/* --- streaming join --------------------------------------------------------------------------- */

static int folded;
static void count_op(const struct gp_an_op *op, void *ctx)
{
	(void)op;
	(void)ctx;
	folded++;
}

Test(report_core, unhooked_call_is_folded_without_waiting_for_other_hooks)
{
	/* tid 1 has a pending hook (its CUPTI records are not here yet); a
	 * driver-launched kernel of the same thread with no hook (cuBLAS,
	 * Triton) must be folded as soon as its records are complete. */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "gemm_internal");
	rec_api(&t, GP_REC_HOOK_API, GP_API_LAUNCH, 1, 100, 50, 900);
	rec_api(&t, GP_REC_DRIVER_API, GP_API_LAUNCH, 1, 300, 10, 5);
	rec_kernel(&t, 1, 320, 420, 5, 1);
	struct gp_an_config cfg = { .on_op = count_op };
	struct gp_an *an = gp_an_new(&cfg);
	cr_assert(an);
	folded = 0;
	for (size_t i = 0; i < t.n; i += gp_rec_slots(&t.r[i]))
		cr_assert_eq(gp_an_scan1(an, &t.r[i], gp_rec_slots(&t.r[i])), 0);
	cr_assert_eq(gp_an_prepare(an), 0);
	for (size_t i = 0; i < t.n; i += gp_rec_slots(&t.r[i]))
		cr_assert_eq(gp_an_scan2(an, &t.r[i], gp_rec_slots(&t.r[i])), 0);
	cr_expect_eq(folded, 1, "folded before the end of the trace");
	struct gp_rep rep;
	memset(&rep, 0, sizeof rep);
	cr_assert_eq(gp_an_finish(an, &rep), 0);
	cr_expect_eq(rep.hooks_unjoined, 1);
	cr_expect_eq(group(&rep, "gemm_internal")->launch_ns, 10);
	gp_rep_free(&rep);
	gp_an_free(an);
}

Test(report_core, hook_joins_by_containment_without_external_correlation)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	rec_string(&t, 2, "step");
	marker(&t, GP_MARK_PUSH, 7, 50, 2);
	rec_api(&t, GP_REC_HOOK_API, GP_API_LAUNCH, 7, 100, 60, 300);
	marker(&t, GP_MARK_POP, 7, 200, 0);
	rec_api(&t, RT, GP_API_LAUNCH, 7, 110, 40, 9);
	rec_kernel(&t, 1, 170, 270, 9, 1);
	struct gp_rep rep = run(&t, GP_GROUP_NVTX);
	cr_assert_eq(rep.ngroups, 1);
	cr_expect_eq(group(&rep, "step")->count, 1);
	cr_expect_eq(rep.hooks_unjoined, 0);
	gp_rep_free(&rep);
}

/* --- the join by thread and time (traces of GPUPHASE_CUPTI lean, minimal) -- */

/* Both passes over t as a trace of CUPTI mode `mode`; *folded_after counts
 * the ops folded by the time record index `at` has been read in pass 2. */
static struct gp_rep run_mode(const struct recs *t, const char *mode, size_t at, int *folded_after,
			      enum gp_group_by by)
{
	struct gp_an_config cfg = { .group_by = by, .on_op = count_op };
	struct gp_an *an = gp_an_new(&cfg);
	cr_assert(an);
	folded = 0;
	for (size_t i = 0; i < t->n; i += gp_rec_slots(&t->r[i]))
		cr_assert_eq(gp_an_scan1(an, &t->r[i], gp_rec_slots(&t->r[i])), 0);
	cr_assert_eq(gp_an_prepare(an), 0);
	gp_an_set_cupti(an, mode);
	for (size_t i = 0; i < t->n; i += gp_rec_slots(&t->r[i])) {
		cr_assert_eq(gp_an_scan2(an, &t->r[i], gp_rec_slots(&t->r[i])), 0);
		if (i == at && folded_after)
			*folded_after = folded;
	}
	struct gp_rep rep;
	memset(&rep, 0, sizeof rep);
	cr_assert_eq(gp_an_finish(an, &rep), 0);
	gp_an_free(an);
	return rep;
}

/* A launch whose CUPTI records come before its hook (a ring drained after
 * CUPTI's buffer), on thread 7 inside NVTX range "step". */
static void late_hook_launch(struct recs *t)
{
	rec_string(t, 1, "k");
	rec_string(t, 2, "step");
	rec_api(t, RT, GP_API_LAUNCH, 7, 110, 40, 9);
	rec_kernel(t, 1, 170, 270, 9, 1);
	marker(t, GP_MARK_PUSH, 7, 50, 2);
	rec_api(t, GP_REC_HOOK_API, GP_API_LAUNCH, 7, 100, 60, 300);
	marker(t, GP_MARK_POP, 7, 200, 0);
}

Test(report_core, nested_join_waits_for_a_hook_written_after_cupti)
{
	struct recs t = { .n = 0 };
	late_hook_launch(&t);
	int before_hook = -1;
	struct gp_rep rep = run_mode(&t, "lean", 4, &before_hook, GP_GROUP_NVTX);
	cr_expect_eq(before_hook, 0, "the op waited for its thread's hook");
	cr_expect_eq(rep.hooks_unjoined, 0);
	cr_expect_eq(rep.ops_joined, 1);
	cr_assert_eq(rep.ngroups, 1);
	cr_expect_str_eq(rep.groups[0].name, "step", "the hook's context reached the op");
	cr_expect_eq(rep.groups[0].launch_ns, 40, "launch from the CUPTI record");
	gp_rep_free(&rep);
	/* a full-mode (or older) trace does not wait: without an external
	 * correlation the op is folded without its hook, as before */
	rep = run_mode(&t, "full", 4, &before_hook, GP_GROUP_NVTX);
	cr_expect_eq(before_hook, 1);
	cr_expect_eq(rep.hooks_unjoined, 1);
	gp_rep_free(&rep);
	rep = run_mode(&t, "full,extcorr=sync", 4, &before_hook, GP_GROUP_NVTX);
	cr_expect_eq(before_hook, 0, "extcorr other than all: joined by nesting");
	cr_expect_eq(rep.hooks_unjoined, 0);
	gp_rep_free(&rep);
}

Test(report_core, nested_join_stops_waiting_at_a_later_hook_of_the_thread)
{
	/* a launch no hook sees (cuBLAS' own cudart, Triton) on thread 7, whose
	 * hooks are not all read yet: it waits only until a top-level hook of
	 * the thread that starts after it is read, then folds without one */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "gemm_internal");
	rec_string(&t, 3, "k");
	rec_api(&t, GP_REC_DRIVER_API, GP_API_LAUNCH, 7, 110, 40, 9);
	rec_kernel(&t, 1, 170, 270, 9, 1);
	rec_api(&t, RT, GP_API_LAUNCH, 7, 510, 40, 11);
	rec_kernel(&t, 1, 570, 670, 11, 3);
	rec_api(&t, GP_REC_HOOK_API, GP_API_LAUNCH, 7, 500, 60, 301); /* index 6 */
	rec_api(&t, GP_REC_HOOK_API, GP_API_LAUNCH, 7, 900, 60, 302);
	int after = -1;
	/* a hook's joins finish at the record after it (its stack reference,
	 * when it has one): by index 7 */
	struct gp_rep rep = run_mode(&t, "minimal", 7, &after, GP_GROUP_KERNEL);
	cr_expect_eq(after, 2, "both folded once the later hook was read");
	cr_expect_eq(rep.ops_joined, 2);
	cr_expect_eq(rep.hooks_unjoined, 1, "the hook whose CUPTI records are not in the trace");
	cr_expect_eq(group(&rep, "gemm_internal")->launch_ns, 40);
	gp_rep_free(&rep);
}

Test(report_core, nested_join_counts_capture_time_launches_apart)
{
	struct recs t = { .n = 0 };
	rec_graph_node(&t, GP_GRAPH_CAPTURED, 1, 1001, 60)->graph.aux32 = 4;
	rec_api(&t, GP_REC_HOOK_API, GP_API_LAUNCH, 4, 0, 30, 60);
	rec_api(&t, RT, GP_API_LAUNCH, 4, 2, 25, 16); /* no external correlation */
	struct gp_rep rep = run_mode(&t, "lean", 0, NULL, GP_GROUP_KERNEL);
	cr_expect_eq(rep.ops, 0);
	cr_expect_eq(rep.launches_captured, 1);
	cr_expect_eq(rep.hooks_unjoined, 0);
	cr_expect_eq(rep.api_unjoined, 0, "its API record is the captured launch's");
	gp_rep_free(&rep);
}

/* --- graph launches and capture-time launches (the join) ------------------ */

static void graph_kernel(struct recs *t, uint64_t start, uint64_t end, uint32_t corr, uint32_t name)
{
	rec_kernel(t, 1, start, end, corr, name);
	t->r[t->n - 1].kernel.flags |= GP_OPF_GRAPH;
}

Test(report_core, graph_kernels_before_their_launch_record_all_join)
{
	/* CUPTI delivers a replay's kernels before the cudaGraphLaunch record
	 * (simcuda does, as CUPTI may), and the hook arrives last: every kernel
	 * joins the launch; its host time is charged once, to the first. */
	struct recs t = { .n = 0 };
	const uint64_t a0 = 10, adur = 80, aend = a0 + adur;
	const uint64_t k[4] = { 200, 250, 350, 400 };
	rec_string(&t, 1, "node");
	rec_string(&t, 2, "replay");
	graph_kernel(&t, k[0], k[1], 5, 1);
	graph_kernel(&t, k[1], k[2], 5, 1);
	graph_kernel(&t, k[2], k[3], 5, 1);
	rec_extcorr(&t, 5, 50);
	rec_api(&t, RT, GP_API_GRAPH_LAUNCH, 9, a0, (uint32_t)adur, 5);
	marker(&t, GP_MARK_PUSH, 4, 0, 2);
	rec_api(&t, GP_REC_HOOK_API, GP_API_GRAPH_LAUNCH, 4, 5, 100, 50);
	marker(&t, GP_MARK_POP, 4, 120, 0);
	graph_kernel(&t, k[3], k[3] + 10, 5, 1); /* after the join: context kept */
	struct gp_rep rep = run(&t, GP_GROUP_NVTX);
	cr_assert_eq(rep.ngroups, 1, "every kernel in the launch hook's NVTX range");
	const struct gp_rep_group *g = group(&rep, "replay");
	cr_expect_eq(g->count, 4);
	cr_expect_eq(g->no_api, 0);
	cr_expect_eq(rep.ops_joined, 4);
	cr_expect_eq(g->launch_ns, adur, "host cost once per launch");
	cr_expect_eq(g->queue_ns, (k[0] - aend) + (k[1] - aend) + (k[2] - aend) + (k[3] - aend));
	cr_expect_eq(g->execute_ns, (k[3] - k[0]) + 10);
	cr_expect_eq(rep.hooks_unjoined, 0);
	cr_expect_eq(rep.api_unjoined, 0);
	gp_rep_free(&rep);
}

Test(report_core, capture_time_launches_are_not_unjoined)
{
	/* a launch made during stream capture creates a graph node and runs
	 * nothing: its hook and API record are not "unjoined" */
	struct recs t = { .n = 0 };
	rec_graph_node(&t, GP_GRAPH_CAPTURED, 1, 1001, 60)->graph.aux32 = 4;
	rec_api(&t, GP_REC_HOOK_API, GP_API_LAUNCH, 4, 0, 30, 60);
	rec_extcorr(&t, 16, 60);
	rec_api(&t, RT, GP_API_LAUNCH, 9, 2, 25, 16);
	rec_api(&t, GP_REC_HOOK_API, GP_API_LAUNCH, 4, 100, 30, 61); /* an ordinary lost one */
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_expect_eq(rep.ops, 0);
	cr_expect_eq(rep.launches_captured, 1);
	cr_expect_eq(rep.hooks_unjoined, 1, "only the hook that was not a capture");
	cr_expect_eq(rep.api_unjoined, 0);
	gp_rep_free(&rep);
}

Test(report_core, blocking_copy_hook_joins_when_ext_corr_precedes_api)
{
	/* The first cudaMemcpy of a run: CUPTI writes the copy, then the ext
	 * corr of the runtime call before its API record; the CUPTI thread id
	 * is not known yet, so only the ext corr can join the hook. */
	struct recs t = { .n = 0 };
	rec_string(&t, 2, "load");
	marker(&t, GP_MARK_PUSH, 4, 0, 2);
	rec_api(&t, GP_REC_HOOK_API, GP_API_MEMCPY_SYNC, 4, 1, 100, 1);
	marker(&t, GP_MARK_POP, 4, 110, 0);
	rec_copy(&t, GP_REC_MEMCPY, 0, 7, 20, 30, 15, 14, 1);
	rec_extcorr(&t, 15, 1);
	rec_api(&t, GP_REC_DRIVER_API, GP_API_MEMCPY_SYNC, 9, 3, 90, 15);
	rec_extcorr(&t, 14, 1);
	rec_api(&t, RT, GP_API_MEMCPY_SYNC, 9, 2, 95, 14);
	struct gp_rep rep = run(&t, GP_GROUP_NVTX);
	cr_expect_eq(rep.hooks_unjoined, 0);
	cr_expect_eq(rep.ops_joined, 1);
	cr_assert_eq(rep.ngroups, 1);
	cr_expect_str_eq(rep.groups[0].name, "load", "the hook's NVTX range reached the op");
	cr_expect_eq(rep.groups[0].launch_ns, 95 - 30, "blocking copy: call minus its own execution");
	gp_rep_free(&rep);
}

Test(report_stats, dmap_matches_reference_with_colliding_ids)
{
	/* keys from a sliding window of dense ids plus stragglers that share
	 * direct slots (key + k * GP_DMAP_SLOTS): every operation must agree
	 * with a plain reference, whether the key sits in its slot or in the
	 * overflow map */
	struct gp_dmap d = { 0 };
	enum { NK = 4 * GP_DMAP_SLOTS };
	static uint64_t ref[NK];
	for (size_t i = 0; i < NK; i++)
		ref[i] = UINT64_MAX;
	srand(5);
	for (int i = 0; i < 400000; i++) {
		uint64_t base = (uint64_t)i / 8u % (NK - 64);
		uint64_t k = rand() % 4 == 0 ? (uint64_t)rand() % NK : base + (uint64_t)(rand() % 64);
		int op = rand() % 3;
		if (op == 0) {
			cr_assert_eq(gp_dmap_del(&d, k), ref[k] != UINT64_MAX);
			ref[k] = UINT64_MAX;
		} else if (op == 1) {
			cr_assert_eq(gp_dmap_put(&d, k, (uint64_t)i), 0);
			ref[k] = (uint64_t)i;
		} else {
			uint64_t *v = gp_dmap_get(&d, k);
			cr_assert_eq(v != NULL, ref[k] != UINT64_MAX);
			if (v)
				cr_assert_eq(*v, ref[k]);
		}
	}
	size_t live = 0;
	for (uint64_t k = 0; k < NK; k++) {
		uint64_t *v = gp_dmap_get(&d, k);
		if (ref[k] == UINT64_MAX) {
			cr_assert_null(v);
		} else {
			cr_assert_not_null(v);
			cr_assert_eq(*v, ref[k]);
			live++;
		}
	}
	cr_expect_eq(gp_dmap_count(&d), live);
	cr_expect_gt(d.over.count, 0, "the test reached the overflow map");
	cr_expect_eq(gp_dmap_put(&d, GP_MAP_EMPTY, 1), -EINVAL);
	gp_dmap_free(&d);
}

/* --- names from the profiled program through report/util/fmt.c ------------------ */

static char *fmt_to_str(void (*fn)(FILE *, const char *), const char *in)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof buf, "w");
	cr_assert(f);
	fn(f, in);
	fclose(f);
	return buf;
}

static void text_str(FILE *f, const char *s)
{
	gp_fmt_text_str(f, s);
}

Test(report_fmt, terminal_escapes_never_reach_text)
{
	/* ESC [ 2 J (clear screen), an OSC 52 clipboard write, a C1 CSI, a bell */
	char *o = fmt_to_str(text_str, "k\x1b[2J\x1b]52;c;aGk=\x07x\xc2\x9b" "1m");
	cr_assert_null(strchr(o, 0x1b));
	cr_assert_null(strchr(o, 0x07));
	cr_assert_null(strstr(o, "\xc2\x9b"));
	cr_assert_str_eq(o, "k\\x1b[2J\\x1b]52;c;aGk=\\x07x\\u009b1m"); /* visible, not acted on */
	cr_assert_str_eq(fmt_to_str(text_str, "a\nFORGED\r\tb"), "a\\nFORGED\\r\\tb"); /* no line of its own */
	cr_assert_str_eq(fmt_to_str(text_str, "gemm<\xce\xbb>"), "gemm<\xce\xbb>"); /* valid UTF-8 stays */
	cr_assert_str_eq(fmt_to_str(text_str, "a\xff" "b\xc3"), "a\xef\xbf\xbd" "b\xef\xbf\xbd");
}

Test(report_fmt, markdown_cell_stays_one_cell)
{
	cr_assert_str_eq(fmt_to_str(gp_fmt_md_str, "a|b\nc\r\td`e\x1b"), "a\\|b\\nc\\r\\td\\`e\\x1b");
}

Test(report_fmt, json_is_valid_utf8)
{
	cr_assert_str_eq(fmt_to_str(gp_fmt_json_str, "k\xff\xc0\x80\xed\xa0\x80\"\\\n\x7f\xe2\x82\xac"),
			 "\"k\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\\"\\\\\\u000a\\u007f\xe2\x82\xac\"");
}

Test(report_fmt, csv_formula_is_defused)
{
	cr_assert_str_eq(fmt_to_str(gp_fmt_csv_str, "=HYPERLINK(\"http://x\",\"y\")"),
			 "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
	cr_assert_str_eq(fmt_to_str(gp_fmt_csv_str, "+1"), "\"'+1\"");
	cr_assert_str_eq(fmt_to_str(gp_fmt_csv_str, "@SUM(A1)"), "\"'@SUM(A1)\"");
	cr_assert_str_eq(fmt_to_str(gp_fmt_csv_str, "memcpy HtoD"), "memcpy HtoD");
	cr_assert_str_eq(fmt_to_str(gp_fmt_csv_str, "a,b"), "\"a,b\"");
	cr_assert_str_eq(fmt_to_str(gp_fmt_csv_str, "a\x1b[31m"), "a\\x1b[31m");
}

/* Every report format, end to end, on a kernel whose name a hostile or
 * broken program chose: a terminal escape, a pipe and a newline, a
 * spreadsheet formula, bytes that are not UTF-8. */
static char *report_as(const struct gp_rep *rep, enum gp_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert(f);
	struct gp_out_opts o = { .format = fmt, .th = GP_THRESHOLDS_DEFAULT, .outlier_factor = 1.5,
				 .straggler_pct = 10 };
	cr_assert_eq(gp_out_report(f, rep, &o), 0);
	fclose(f);
	return buf;
}

static int valid_utf8(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = gp_fmt_utf8_len(p);
		if (!n)
			return 0;
		p += n;
	}
	return 1;
}

Test(report_fmt, hostile_kernel_name_in_every_format)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "=HYPERLINK(\"http://x\")\x1b]0;pwned\x07|a\nb\xff");
	rec_api(&t, RT, GP_API_LAUNCH, 11, 1000, 50, 7);
	rec_kernel(&t, 3, 1100, 1300, 7, 1);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	for (enum gp_format fmt = GP_FMT_TEXT; fmt <= GP_FMT_JSON; fmt++) {
		char *out = report_as(&rep, fmt);
		cr_expect_null(strchr(out, 0x1b), "format %d: an escape reached the output", fmt);
		cr_expect_null(strchr(out, 0x07), "format %d: a bell reached the output", fmt);
		cr_expect(valid_utf8(out), "format %d: not UTF-8", fmt);
		if (fmt == GP_FMT_MARKDOWN) /* the row stays one line, the pipe one cell */
			cr_expect_not_null(strstr(out, "\\x1b]0;pwned\\x07\\|a\\nb\xef\xbf\xbd |"), "markdown row:\n%s", out);
		if (fmt == GP_FMT_CSV) {
			cr_expect_not_null(strstr(out, "\n\"'=HYPERLINK("), "csv: the formula is not defused:\n%s", out);
			cr_expect_null(strstr(out, "\n=HYPERLINK("));
		}
		if (fmt == GP_FMT_JSON)
			cr_expect_not_null(strstr(out, "\\u000ab\\ufffd"));
		free(out);
	}
	gp_rep_free(&rep);
}

/* Advice fits the operator: a copy is never told to fuse kernels or use
 * graphs, a program replaying graphs is never told to use graphs, and an
 * operator below the minimum share of the run gets no verdict. */
Test(report_core, advice_fits_the_operator)
{
	struct gp_thresholds th = GP_THRESHOLDS_DEFAULT;
	struct gp_verdict_op small_copy = { GP_VERDICT_KIND_COPY, 4096, 0, GP_BOUND_NONE, 1 };
	struct gp_verdict_op big_copy = { GP_VERDICT_KIND_COPY, 64u << 20, 0, GP_BOUND_NONE, 1 };
	struct gp_verdict_op set = { GP_VERDICT_KIND_SET, 256, 0, GP_BOUND_NONE, 0 };
	struct gp_verdict_op kernel = { GP_VERDICT_KIND_KERNEL, 0, 0, GP_BOUND_NONE, 0 };
	struct gp_verdict_op kernel_g = { GP_VERDICT_KIND_KERNEL, 0, 1, GP_BOUND_NONE, 0 };
	struct gp_verdict_op replay = { GP_VERDICT_KIND_KERNEL | GP_VERDICT_KIND_GRAPH, 0, 0, GP_BOUND_NONE, 0 };
	enum gp_verdict all[] = { GP_VERDICT_SYNC, GP_VERDICT_LAUNCH, GP_VERDICT_COMPUTE };
	for (size_t i = 0; i < 3; i++) {
		const struct gp_verdict_op *ops[] = { &small_copy, &big_copy, &set, &kernel_g, &replay };
		for (size_t k = 0; k < 5; k++) {
			const char *a = gp_verdict_advice_for(all[i], ops[k]);
			cr_expect(!strstr(a, "use CUDA graphs"), "%s / op %zu: %s", gp_verdict_name(all[i]), k, a);
			if (k < 3)
				cr_expect(!strstr(a, "fuse"), "a copy told to fuse: %s", a);
		}
	}
	cr_expect(strstr(gp_verdict_advice_for(GP_VERDICT_LAUNCH, &small_copy), "batch"));
	cr_expect(strstr(gp_verdict_advice_for(GP_VERDICT_COMPUTE, &big_copy), "bandwidth"));
	cr_expect(strstr(gp_verdict_advice_for(GP_VERDICT_LAUNCH, &kernel), "use CUDA graphs"));
	/* 10 us of a 100 ms run: minor, no advice */
	cr_expect_eq(gp_verdict_of_op(9000, 1000, 0, 100000000, &th), GP_VERDICT_MINOR);
	cr_expect_str_eq(gp_verdict_advice_for(GP_VERDICT_MINOR, &small_copy), "");
	cr_expect_eq(gp_verdict_of_op(9000, 1000, 0, 20000, &th), GP_VERDICT_LAUNCH);
	/* a copy transfers: its execute share makes it transfer-bound, never
	 * compute-bound; an operator with a kernel in it stays compute-bound */
	cr_expect_eq(gp_verdict_for_kinds(GP_VERDICT_COMPUTE, GP_VERDICT_KIND_COPY), GP_VERDICT_TRANSFER);
	cr_expect_eq(gp_verdict_for_kinds(GP_VERDICT_COMPUTE, GP_VERDICT_KIND_COPY | GP_VERDICT_KIND_SET),
		     GP_VERDICT_TRANSFER);
	cr_expect_eq(gp_verdict_for_kinds(GP_VERDICT_COMPUTE, GP_VERDICT_KIND_COPY | GP_VERDICT_KIND_KERNEL),
		     GP_VERDICT_COMPUTE);
	cr_expect_eq(gp_verdict_for_kinds(GP_VERDICT_COMPUTE, GP_VERDICT_KIND_KERNEL), GP_VERDICT_COMPUTE);
	cr_expect_eq(gp_verdict_for_kinds(GP_VERDICT_LAUNCH, GP_VERDICT_KIND_COPY), GP_VERDICT_LAUNCH);
	cr_expect_str_eq(gp_verdict_name(GP_VERDICT_TRANSFER), "transfer-bound");
	cr_expect(strstr(gp_verdict_advice_for(GP_VERDICT_TRANSFER, &big_copy), "bandwidth"));
	char why[80];
	gp_verdict_reason(GP_VERDICT_TRANSFER, 10, 950, 40, &th, why, sizeof why);
	cr_expect_str_eq(why, "transfer 95.0% > 80%");
}

/* Pinned memory is advised only for copies the trace saw pageable: never
 * for pinned ones, device-side ones or sets (metrics.md §5). */
Test(report_core, pinned_memory_advised_only_for_pageable_copies)
{
	enum gp_verdict all[] = { GP_VERDICT_SYNC, GP_VERDICT_LAUNCH, GP_VERDICT_TRANSFER };
	uint64_t sizes[] = { 4096, 64u << 20 };
	for (size_t i = 0; i < 3; i++)
		for (size_t s = 0; s < 2; s++) {
			struct gp_verdict_op pinned = { GP_VERDICT_KIND_COPY, sizes[s], 0, GP_BOUND_NONE, 0 };
			struct gp_verdict_op pageable = { GP_VERDICT_KIND_COPY, sizes[s], 0, GP_BOUND_NONE, 1 };
			struct gp_verdict_op set = { GP_VERDICT_KIND_SET, sizes[s], 0, GP_BOUND_NONE, 0 };
			const char *a = gp_verdict_advice_for(all[i], &pinned);
			cr_expect(*a && !strstr(a, "pinned"), "%s, %" PRIu64 " bytes, pinned: %s", gp_verdict_name(all[i]),
				  sizes[s], a);
			a = gp_verdict_advice_for(all[i], &set);
			cr_expect(*a && !strstr(a, "pinned"), "%s, a set: %s", gp_verdict_name(all[i]), a);
			a = gp_verdict_advice_for(all[i], &pageable);
			cr_expect(strstr(a, "pinned memory"), "%s, %" PRIu64 " bytes, pageable: %s",
				  gp_verdict_name(all[i]), sizes[s], a);
		}
}

/* --- the GPU's clock (metrics.md §2) ---------------------------------------------- */

Test(report_core, gpu_clock_offset_bounded_and_taken_out)
{
	/* CUPTI's GPU times 3000 ns late. Kernel K really runs [1500, 2500]
	 * (delivered [4500, 5500]) after its launch [1000, 1010]; a cudaMemcpy
	 * DtoH [2000, 3050] waits for it, then copies [3000, 3040] (delivered
	 * [6000, 6040]). Upper bound: min(4500 - 1000, 6000 - 2000) = 3500;
	 * lower: 6040 - 3050 = 2990, the estimate. Corrected, K runs [1510,
	 * 2510]: queue 500 (10 ns of the copy's return left), its wait 510. */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "K");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 1000, 10, 1);
	rec_kernel(&t, 7, 4500, 5500, 1, 1);
	rec_api(&t, RT, GP_API_MEMCPY_SYNC, 1, 2000, 1050, 2);
	rec_copy(&t, GP_REC_MEMCPY, 0, 7, 6000, 40, 3, 2, 2 /* DtoH */);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_assert_eq(rep.ngpu_clock, 1);
	const struct gp_rep_gpu_clock *c = &rep.gpu_clock[0];
	cr_expect(c->has_lo && c->has_hi && !c->raw);
	cr_expect_eq(c->lo_ns, 2990);
	cr_expect_eq(c->hi_ns, 3500);
	cr_expect_eq(c->offset_ns, 2990);
	cr_expect_eq(c->ops, 2);
	cr_expect_eq(c->waits, 1);
	const struct gp_rep_group *k = group(&rep, "K");
	cr_expect_eq(k->queue_ns, 500);
	cr_expect_eq(k->sync_ns, 510);
	cr_expect_eq(k->execute_ns, 1000);
	gp_rep_free(&rep);
	/* the control: left in, K's queue is 3490 and the copy waited for nothing
	 * it saw end (K "ended" after the call returned) */
	setenv("GPUPHASE_REPORT_GPU_CLOCK", "raw", 1);
	rep = run(&t, GP_GROUP_KERNEL);
	cr_assert_eq(rep.ngpu_clock, 1);
	cr_expect(rep.gpu_clock[0].raw);
	cr_expect_eq(group(&rep, "K")->queue_ns, 3490);
	gp_rep_free(&rep);
}

Test(report_core, gpu_clock_one_sided_bound_corrects_only_what_it_proves)
{
	/* no blocking copy: only the upper bound, 2000 - 1000 = 1000 > 0,
	 * so nothing is corrected; with the kernel delivered before its
	 * call began (upper bound -500), the times move by that much */
	for (int early = 0; early <= 1; early++) {
		struct recs t = { .n = 0 };
		rec_string(&t, 1, "K");
		rec_api(&t, RT, GP_API_LAUNCH, 1, 1000, 10, 1);
		rec_kernel(&t, 7, early ? 500 : 2000, early ? 1500 : 3000, 1, 1);
		struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
		cr_assert_eq(rep.ngpu_clock, 1);
		const struct gp_rep_gpu_clock *c = &rep.gpu_clock[0];
		cr_expect(!c->has_lo && c->has_hi);
		cr_expect_eq(c->hi_ns, early ? -500 : 1000);
		cr_expect_eq(c->offset_ns, early ? -500 : 0);
		cr_expect_eq(group(&rep, "K")->queue_ns, early ? 0 : 990);
		gp_rep_free(&rep);
	}
}

/* --- real-CUDA behaviours -------------------------------------------------------- */

Test(report_core, pageable_async_copy_waits_then_copies)
{
	/* a clock without error: the copy's return after its transfer is no
	 * offset here (docs/metrics.md §2, "The GPU's clock") */
	setenv("GPUPHASE_REPORT_GPU_CLOCK", "raw", 1);
	/* cudaMemcpyAsync from pageable memory: the call waits for the kernel
	 * (that kernel's sync), then copies (the copy's execute); the rest of
	 * the call is its launch. A pinned copy of the same shape does not. */
	for (int pageable = 0; pageable <= 1; pageable++) {
		struct recs t = { .n = 0 };
		rec_string(&t, 1, "k");
		rec_api(&t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
		rec_kernel(&t, 1, 20, 500, 1, 1);
		rec_api(&t, RT, GP_API_MEMCPY_ASYNC, 1, 30, pageable ? 530 : 10, 2);
		rec_copy(&t, GP_REC_MEMCPY, 1, 1, pageable ? 510 : 520, 40, 12, 2, 1);
		if (pageable)
			t.r[t.n - 1].copy.flags |= GP_COPYF_PAGEABLE;
		struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
		const struct gp_rep_group *k = group(&rep, "k"), *c = group(&rep, "memcpy HtoD");
		cr_expect_eq(k->sync_ns, pageable ? 500 - 30 : 0);
		cr_expect_eq(c->execute_ns, 40);
		cr_expect_eq(c->launch_ns, pageable ? 530 - 40 - 470 : 10);
		cr_expect_eq(c->pageable, (uint64_t)pageable);
		cr_expect_eq(rep.sync_calls[GP_API_MEMCPY_ASYNC], (uint64_t)pageable);
		gp_rep_free(&rep);
	}
}

Test(report_core, implicit_sync_charged_to_the_op_waited_for)
{
	/* cudaFree waits for the kernel, then frees: the wait (to the kernel's
	 * end) is the kernel's sync; a cudaFree with nothing outstanding is no
	 * sync call. */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
	rec_kernel(&t, 1, 20, 500, 1, 1);
	rec_api(&t, RT, GP_API_SYNC_IMPLICIT, 1, 30, 490, 2);
	rec_api(&t, RT, GP_API_SYNC_IMPLICIT, 1, 600, 10, 3);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_expect_eq(group(&rep, "k")->sync_ns, 500 - 30);
	cr_expect_eq(rep.sync_calls[GP_API_SYNC_IMPLICIT], 1);
	cr_expect_eq(rep.sync_unattributed_calls, 0);
	gp_rep_free(&rep);
}

Test(report_core, sync_call_site_when_cupti_records_come_before_the_hook)
{
	/* CUPTI's buffer (ext corr, API record) reached the trace before the
	 * hook's ring: the hook's stack still names the wait's call site. */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	union gp_rec *st = rec_new(&t);
	st->stack.type = GP_REC_STACK;
	st->stack.id = 5;
	st->stack.depth = 1;
	st->stack.pc[0] = 0x1234;
	rec_api(&t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
	rec_kernel(&t, 1, 20, 500, 1, 1);
	rec_extcorr(&t, 3, 77);
	rec_api(&t, RT, GP_API_SYNC_DEVICE, 1, 30, 480, 3);
	rec_api(&t, GP_REC_HOOK_API, GP_API_SYNC_DEVICE, 4, 29, 482, 77);
	union gp_rec *sr = rec_new(&t);
	sr->stack_ref.type = GP_REC_STACK_REF;
	sr->stack_ref.op = 77;
	sr->stack_ref.stack = 5;
	sr->stack_ref.tid = 4;
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_assert_eq(rep.ncallsites, 1);
	cr_expect_str_neq(rep.callsites[0].name, "(no stack)");
	cr_expect_eq(group(&rep, "k")->sync_ns, 480);
	gp_rep_free(&rep);
}

Test(report_core, gpu_clock_a_little_ahead_of_the_host_still_charges_the_wait)
{
	/* the kernel's end reads 3 us after the synchronize returned */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
	rec_kernel(&t, 1, 20, 3500, 1, 1);
	rec_api(&t, RT, GP_API_SYNC_DEVICE, 1, 30, 470, 2);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_expect_eq(group(&rep, "k")->sync_ns, 470);
	cr_expect_eq(rep.sync_unattributed_calls, 0);
	gp_rep_free(&rep);
}

/* --- call sites ------------------------------------------------------------------- */

static void stack2(struct recs *t, uint32_t id, uint64_t a, uint64_t b)
{
	union gp_rec *r = rec_new(t);
	r->stack.type = GP_REC_STACK;
	r->stack.id = id;
	r->stack.depth = 2;
	r->stack.pc[0] = a;
	r->stack.pc[1] = b;
}

static void symbol(struct recs *t, uint64_t pc, uint32_t name)
{
	union gp_rec *r = rec_new(t);
	r->symbol.type = GP_REC_SYMBOL;
	r->symbol.pc = pc;
	r->symbol.name = name;
}

static struct gp_an *scan1(const struct recs *t)
{
	struct gp_an_config cfg = { .group_by = GP_GROUP_KERNEL };
	struct gp_an *an = gp_an_new(&cfg);
	cr_assert(an);
	for (size_t i = 0; i < t->n;) {
		uint32_t ns = gp_rec_slots(&t->r[i]);
		cr_assert_eq(gp_an_scan1(an, &t->r[i], ns), 0);
		i += ns;
	}
	cr_assert_eq(gp_an_prepare(an), 0);
	return an;
}

Test(report_core, callsite_is_the_innermost_actionable_frame)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "app.py:3 (f)");
	rec_string(&t, 2, "cs_wait+0x9 (/x/libcs.so)");
	rec_string(&t, 3, "cudaDeviceSynchronize+0x10 (/x/libcudart.so.13)");
	rec_string(&t, 4, "main+0x5 (/x/prog)");
	stack2(&t, 1, GP_PC_PYFRAME | 1, 0x1000); /* Python frame first */
	stack2(&t, 2, 0x2000, 0x3000);            /* inside the runtime, then the program */
	symbol(&t, GP_PC_PYFRAME | 1, 1);
	symbol(&t, 0x1000, 2);
	symbol(&t, 0x2000, 3);
	symbol(&t, 0x3000, 4);
	struct gp_an *an = scan1(&t);
	char b[32], text[256];
	cr_expect_str_eq(gp_an_callsite(an, 1, b, sizeof b), "app.py:3 (f)");
	cr_expect_str_eq(gp_an_callsite(an, 2, b, sizeof b), "main+0x5 (/x/prog)");
	cr_assert(gp_an_stack_text(an, 1, text, sizeof text));
	cr_expect_str_eq(text, "app.py:3 (f)\ncs_wait+0x9 (/x/libcs.so)");
	gp_an_free(an);
}

/* The module record of this test program (path, bias, build id). */
static int self_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct gp_rec_module *m = arg;
	m->bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(uintptr_t)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
			const char *desc = p + sizeof *nh + ((nh->n_namesz + 3) & ~3u);
			if (nh->n_type == NT_GNU_BUILD_ID) {
				m->build_id_len = (uint8_t)(nh->n_descsz < 16 ? nh->n_descsz : 16);
				memcpy(m->build_id, desc, m->build_id_len);
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 1; /* the program is the first object */
}

static __attribute__((noinline)) int static_frame(int x)
{
	return x * 3 + 1;
}

Test(report_core, native_names_from_the_file_only_with_its_build_id)
{
	if (!dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL)) {
		fprintf(stderr, "SKIP: report_core::native_names_from_the_file_only_with_its_build_id: "
				"libdw.so.1 not installed\n"); /* run-tests.sh counts it */
		cr_skip_test("libdw.so.1 not installed");
	}
	char exe[4096];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	cr_assert(k > 0);
	exe[k] = 0;
	struct gp_rec_module self = { .type = GP_REC_MODULE, .path = 2 };
	dl_iterate_phdr(self_module, &self);
	cr_assert(self.build_id_len, "the test program has no build id");
	cr_assert_eq(static_frame(1), 4);
	uint64_t pc = (uint64_t)(uintptr_t)static_frame + 4; /* a "return address" inside it */
	for (int good = 0; good <= 1; good++) {
		struct recs t = { .n = 0 };
		rec_string(&t, 1, "0x1234 (dladdr text)");
		rec_string(&t, 2, exe);
		stack2(&t, 1, pc, pc);
		symbol(&t, pc, 1);
		union gp_rec *r = rec_new(&t);
		r->module = self;
		if (!good)
			r->module.build_id[0] ^= 0xff; /* another build of the file */
		struct gp_an *an = scan1(&t);
		char b[32];
		const char *site = gp_an_callsite(an, 1, b, sizeof b);
		if (good)
			cr_expect(!strncmp(site, "static_frame", 12), "named %s", site);
		else
			cr_expect_str_eq(site, "0x1234 (dladdr text)");
		gp_an_free(an);
	}
}

Test(report_core, phase_from_any_open_nvtx_range)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	rec_string(&t, 2, "Optimizer.step#Adam.step");
	rec_string(&t, 3, "aten::_foreach_add_");
	rec_string(&t, 4, "MmBackward0");
	rec_string(&t, 5, "aten::mm");
	rec_string(&t, 6, "aten::addmm");
	/* optimizer: the outer range names it, the innermost is an aten op */
	marker(&t, GP_MARK_PUSH, 1, 0, 2);
	marker(&t, GP_MARK_PUSH, 1, 1, 3);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 2, 5, 1);
	marker(&t, GP_MARK_POP, 1, 8, 0);
	marker(&t, GP_MARK_POP, 1, 9, 0);
	rec_kernel(&t, 1, 10, 20, 1, 1);
	/* backward */
	marker(&t, GP_MARK_PUSH, 1, 30, 4);
	marker(&t, GP_MARK_PUSH, 1, 31, 5);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 32, 5, 2);
	marker(&t, GP_MARK_POP, 1, 38, 0);
	marker(&t, GP_MARK_POP, 1, 39, 0);
	rec_kernel(&t, 1, 40, 50, 2, 1);
	/* forward: a range that says neither */
	marker(&t, GP_MARK_PUSH, 1, 60, 6);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 61, 5, 3);
	marker(&t, GP_MARK_POP, 1, 68, 0);
	rec_kernel(&t, 1, 70, 80, 3, 1);
	/* nothing known */
	rec_api(&t, RT, GP_API_LAUNCH, 1, 90, 5, 4);
	rec_kernel(&t, 1, 100, 110, 4, 1);
	struct gp_rep rep = run(&t, GP_GROUP_PHASE);
	cr_expect_eq(group(&rep, "optimizer")->count, 1);
	cr_expect_eq(group(&rep, "backward")->count, 1);
	cr_expect_eq(group(&rep, "forward")->count, 1);
	cr_expect_eq(group(&rep, "(no phase)")->count, 1);
	gp_rep_free(&rep);
}

/* --- records in any order ---------------------------------------------------------- */

static void stack1(struct recs *t, uint32_t id, uint64_t pc)
{
	union gp_rec *r = rec_new(t);
	r->stack.type = GP_REC_STACK;
	r->stack.id = id;
	r->stack.depth = 1;
	r->stack.pc[0] = pc;
}

static void stackref(struct recs *t, uint32_t op, uint32_t stack, uint32_t tid)
{
	union gp_rec *r = rec_new(t);
	r->stack_ref.type = GP_REC_STACK_REF;
	r->stack_ref.op = op;
	r->stack_ref.stack = stack;
	r->stack_ref.tid = tid;
}

Test(report_core, sync_call_site_when_the_ext_corr_comes_between_the_hook_and_its_stack)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	stack1(&t, 5, 0x1234);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
	rec_kernel(&t, 1, 20, 500, 1, 1);
	rec_api(&t, GP_REC_HOOK_API, GP_API_SYNC_DEVICE, 4, 29, 482, 77);
	rec_extcorr(&t, 3, 77);
	rec_api(&t, RT, GP_API_SYNC_DEVICE, 1, 30, 480, 3);
	stackref(&t, 77, 5, 4);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_assert_eq(rep.ncallsites, 1);
	cr_expect_str_neq(rep.callsites[0].name, "(no stack)");
	gp_rep_free(&rep);
}

/* CUPTI's records of a cudaMemcpy, then its hook and the hook's stack: the
 * op the hook completes must fold with that stack, so the copy's wait keeps
 * its call site. ext: CUPTI's ext corr joins the hook (hook on thread 4);
 * else CUPTI lean, no external correlation: the hook is found by thread and
 * interval (the case that gave "(no stack)"). */
static void copy_hook_after_cupti(int ext)
{
	/* a clock without error: the copy's return after its transfer is no
	 * offset here (docs/metrics.md §2, "The GPU's clock") */
	setenv("GPUPHASE_REPORT_GPU_CLOCK", "raw", 1);
	uint32_t htid = ext ? 4 : 1;
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	stack1(&t, 5, 0x1234);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
	rec_kernel(&t, 1, 20, 500, 1, 1);
	rec_copy(&t, GP_REC_MEMCPY, 0, 1, 505, 10, 4, 3, 2);
	if (ext)
		rec_extcorr(&t, 3, 77);
	rec_api(&t, RT, GP_API_MEMCPY_SYNC, 1, 30, 490, 3);
	rec_api(&t, GP_REC_HOOK_API, GP_API_MEMCPY_SYNC, htid, 29, 492, 77);
	stackref(&t, 77, 5, htid);
	struct gp_rep rep = ext ? run(&t, GP_GROUP_KERNEL) : run_mode(&t, "lean", 0, NULL, GP_GROUP_KERNEL);
	cr_assert_eq(rep.ncallsites, 1);
	cr_expect_str_neq(rep.callsites[0].name, "(no stack)");
	cr_expect_eq(group(&rep, "k")->sync_ns, 470);
	gp_rep_free(&rep);
}

Test(report_core, blocking_copy_call_site_when_its_hook_comes_after_cupti)
{
	copy_hook_after_cupti(1);
}

Test(report_core, blocking_copy_call_site_when_its_hook_comes_after_cupti_without_ext_corr)
{
	copy_hook_after_cupti(0);
}

Test(report_core, two_devices_a_synchronize_is_not_charged_to_the_other_device_after_it_returned)
{
	/* device 0's kernel ends at 1000, its synchronize returns at 1003;
	 * device 1's kernel ends at 1008, inside the clock tolerance */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k0");
	rec_string(&t, 2, "k1");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
	rec_kernel(&t, 1, 20, 1000, 1, 1);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 12, 10, 2);
	union gp_rec *k = rec_new(&t);
	*k = (union gp_rec){ .kernel = { .type = GP_REC_KERNEL, .device = 1, .stream = 2, .start = 28, .end = 1008,
					 .corr = 2, .name = 2 } };
	rec_api(&t, RT, GP_API_SYNC_DEVICE, 1, 30, 973, 3);
	rec_api(&t, RT, GP_API_SYNC_DEVICE, 1, 1005, 5, 4);
	struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
	cr_expect_eq(group(&rep, "k0")->sync_ns, 973);
	cr_expect_eq(group(&rep, "k1")->sync_ns, 5); /* the next call: the tolerance reached into it */
	cr_expect_eq(rep.sync_unattributed_calls, 0);
	gp_rep_free(&rep);
}

static void overhead_full(struct recs *t, uint32_t corr, uint64_t start, uint64_t end)
{
	rec_overhead(t, GP_OVH_COMMAND_BUFFER_FULL, 1, start, end, corr);
}

static void status(struct recs *t, uint8_t kind)
{
	rec_status(t, kind, 1);
}

/* Launch a (ends at 1000) fills the queue; launch b's call [100, 1100]
 * waits on it [105, 1000] per CUPTI's record [105, 1090]. */
static void full_queue(struct recs *t, int order)
{
	rec_string(t, 1, "a");
	rec_string(t, 2, "b");
	status(t, GP_STATUS_CUPTI_OVERHEAD);
	if (order == 0) { /* the record after b's op folded */
		rec_api(t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
		rec_kernel(t, 1, 20, 1000, 1, 1);
		rec_api(t, RT, GP_API_LAUNCH, 1, 100, 1000, 2);
		rec_kernel(t, 1, 1100, 1200, 2, 2);
		overhead_full(t, 2, 105, 1090);
	} else { /* the record first, the op that freed the slot last */
		overhead_full(t, 2, 105, 1090);
		rec_api(t, RT, GP_API_LAUNCH, 1, 100, 1000, 2);
		rec_kernel(t, 1, 1100, 1200, 2, 2);
		rec_api(t, RT, GP_API_LAUNCH, 1, 0, 10, 1);
		rec_kernel(t, 1, 20, 1000, 1, 1);
	}
}

Test(report_core, queue_full_record_after_its_op_still_leaves_the_launch)
{
	for (int order = 0; order < 2; order++) {
		struct recs t = { .n = 0 };
		full_queue(&t, order);
		struct gp_rep rep = run(&t, GP_GROUP_KERNEL);
		cr_expect_eq(group(&rep, "a")->sync_ns, 895, "order %d", order);
		cr_expect_eq(group(&rep, "a")->sync_queue_ns, 895, "order %d", order);
		cr_expect_eq(group(&rep, "b")->launch_ns, 105, "order %d", order);
		cr_expect_eq(rep.launch_ns, 115, "order %d", order);
		cr_expect_eq(rep.queue_full_calls, 1, "order %d", order);
		cr_expect_eq(rep.waits_late, 0, "order %d", order);
		gp_rep_free(&rep);
	}
}
