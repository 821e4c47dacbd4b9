/*
 * test_report_cupti_cost.c — Criterion suite for CUPTI's own cost taken out
 * of the phases (report/core/cupti_cost.c, docs/metrics.md §3 "CUPTI's own
 * cost"): per call from CUPTI's INSTRUMENTATION overhead records (in either
 * order with the call's API record, and from a nested driver call's record),
 * or from the library's calibration record when the trace has none; the
 * raw launch beside the net one; blocking calls whose wait began with
 * CUPTI's cost; the library's own calibration calls left out. Every test
 * builds a small timeline as record arrays and compares with the values the
 * rules give for it. Runs on the test thread only.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "report/core/analysis.h"
#include "trace_builder.h"

/* CUPTI's INSTRUMENTATION time [start, start + ns] in call corr. */
static void instr(struct recs *t, uint64_t start, uint64_t ns, uint32_t corr)
{
	rec_overhead(t, GP_OVH_INSTRUMENTATION, 1, start, start + ns, corr);
}

static void calib(struct recs *t, uint8_t flags, uint32_t rt, uint32_t drv, uint32_t launch)
{
	union gp_rec *r = rec_new(t);
	r->calib.type = GP_REC_CALIBRATION;
	r->calib.flags = flags;
	r->calib.samples = 16;
	r->calib.start = 1;
	r->calib.dur = 500;
	r->calib.rt_ns = rt;
	r->calib.drv_ns = drv;
	r->calib.launch_ns = launch;
}

static struct gp_rep run(const struct recs *t)
{
	struct gp_an_config cfg = { .group_by = GP_GROUP_KERNEL };
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
#define DRV GP_REC_DRIVER_API

Test(report_cupti_cost, launch_is_net_of_its_instrumentation_record)
{
	/* two launches of 10 us, CUPTI spent 3 us at the entry of each */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	for (uint32_t i = 0; i < 2; i++) {
		uint64_t at = 1000 + i * 100000;
		instr(&t, at, 3000, i + 1);
		rec_api(&t, RT, GP_API_LAUNCH, 1, at, 10000, i + 1);
		rec_kernel(&t, 7, at + 20000, at + 30000, i + 1, 1);
	}
	struct gp_rep rep = run(&t);
	const struct gp_rep_group *k = group(&rep, "k");
	cr_expect_eq(k->launch_ns, 2 * (10000 - 3000));
	cr_expect_eq(k->launch_raw_ns, 2 * 10000);
	cr_expect_eq(rep.launch_ns, 2 * 7000);
	cr_expect_eq(rep.launch_raw_ns, 2 * 10000);
	cr_expect_eq(rep.cupti.source, 1);
	cr_expect_eq(rep.cupti.calls, 2);
	cr_expect_eq(rep.cupti.in_calls_ns, 6000);
	cr_expect_eq(rep.cupti.launch_ns, 6000);
	cr_expect_eq(rep.cupti.sync_ns, 0);
	gp_rep_free(&rep);
}

Test(report_cupti_cost, record_after_the_api_record_still_counts)
{
	/* the overhead record arrives after the call's API record (another
	 * buffer), before the kernel: the op has not been folded yet */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 1000, 10000, 1);
	instr(&t, 1000, 2500, 1);
	rec_kernel(&t, 7, 20000, 30000, 1, 1);
	struct gp_rep rep = run(&t);
	cr_expect_eq(group(&rep, "k")->launch_ns, 10000 - 2500);
	cr_expect_eq(rep.cupti.launch_ns, 2500);
	gp_rep_free(&rep);
}

Test(report_cupti_cost, nested_driver_call_record_goes_to_the_runtime_call)
{
	/* cudaLaunchKernel [1000, 11000] contains cuLaunchKernel [1500, 10500];
	 * CUPTI's record of the runtime layer has the runtime corr (1), the
	 * driver layer's the driver corr (2): both leave the launch */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	instr(&t, 1000, 500, 1);
	instr(&t, 1500, 2500, 2);
	rec_api(&t, DRV, GP_API_LAUNCH, 1, 1500, 9000, 2);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 1000, 10000, 1);
	rec_kernel(&t, 7, 20000, 30000, 1, 1);
	struct gp_rep rep = run(&t);
	const struct gp_rep_group *k = group(&rep, "k");
	cr_expect_eq(k->launch_ns, 10000 - 3000);
	cr_expect_eq(k->launch_raw_ns, 10000);
	cr_expect_eq(rep.api_unjoined, 0);
	gp_rep_free(&rep);
}

Test(report_cupti_cost, without_a_source_nothing_changes)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 1000, 10000, 1);
	rec_kernel(&t, 7, 20000, 30000, 1, 1);
	struct gp_rep rep = run(&t);
	cr_expect_eq(group(&rep, "k")->launch_ns, 10000);
	cr_expect_eq(group(&rep, "k")->launch_raw_ns, 10000);
	cr_expect_eq(rep.cupti.source, 0);
	cr_expect_eq(rep.cupti.in_calls_ns, 0);
	gp_rep_free(&rep);
}

Test(report_cupti_cost, calibration_is_the_deduction_without_records)
{
	/* per runtime layer 400 ns, per driver layer 300 ns, per launch 1500 ns
	 * more: a runtime launch with its driver call nested loses 400 + 300 +
	 * 1500; one without a driver record 400 + 1500; a cudaMemcpyAsync
	 * (runtime only) 400 */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	calib(&t, GP_CALIBF_API | GP_CALIBF_LAUNCH, 400, 300, 1500);
	rec_api(&t, DRV, GP_API_LAUNCH, 1, 1500, 9000, 2);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 1000, 10000, 1);
	rec_kernel(&t, 7, 20000, 30000, 1, 1);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 40000, 10000, 3);
	rec_kernel(&t, 7, 60000, 70000, 3, 1);
	rec_api(&t, RT, GP_API_MEMCPY_ASYNC, 1, 80000, 5000, 4);
	rec_copy(&t, GP_REC_MEMCPY, 0, 7, 90000, 1000, 5, 4, 2 /* DtoH */);
	struct gp_rep rep = run(&t);
	cr_expect_eq(rep.cupti.source, 2);
	cr_expect_eq(group(&rep, "k")->launch_ns, (10000 - 2200) + (10000 - 1900));
	cr_expect_eq(group(&rep, "memcpy DtoH")->launch_ns, 5000 - 400);
	cr_expect_eq(rep.cupti.launch_ns, 2200 + 1900 + 400);
	cr_expect_eq(rep.cupti.calibrated, 1);
	cr_expect_eq(rep.cupti.calib_launch_ns, 1500);
	gp_rep_free(&rep);
}

Test(report_cupti_cost, records_win_over_the_calibration)
{
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	calib(&t, GP_CALIBF_API | GP_CALIBF_LAUNCH, 400, 300, 1500);
	instr(&t, 1000, 3000, 1);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 1000, 10000, 1);
	rec_kernel(&t, 7, 20000, 30000, 1, 1);
	struct gp_rep rep = run(&t);
	cr_expect_eq(rep.cupti.source, 1);
	cr_expect_eq(group(&rep, "k")->launch_ns, 7000);
	gp_rep_free(&rep);
}

Test(report_cupti_cost, a_synchronize_waits_after_cuptis_cost)
{
	/* kernel ends at 50000; cudaDeviceSynchronize [10000, 51000] with 2 us
	 * of CUPTI at its entry: its wait is [12000, 51000], charged to the
	 * kernel; CUPTI's 2 us are out of the waits */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 1000, 5000, 1);
	rec_kernel(&t, 7, 8000, 50000, 1, 1);
	instr(&t, 10000, 2000, 2);
	rec_api(&t, RT, GP_API_SYNC_DEVICE, 1, 10000, 41000, 2);
	struct gp_rep rep = run(&t);
	cr_expect_eq(group(&rep, "k")->sync_ns, 41000 - 2000);
	cr_expect_eq(rep.cupti.sync_ns, 2000);
	cr_expect_eq(rep.cupti.launch_ns, 0);
	gp_rep_free(&rep);
}

Test(report_cupti_cost, a_synchronize_whose_record_comes_late)
{
	/* the same as above with CUPTI's record after the API record */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 1000, 5000, 1);
	rec_kernel(&t, 7, 8000, 50000, 1, 1);
	rec_api(&t, RT, GP_API_SYNC_DEVICE, 1, 10000, 41000, 2);
	instr(&t, 10000, 2000, 2);
	struct gp_rep rep = run(&t);
	cr_expect_eq(group(&rep, "k")->sync_ns, 41000 - 2000);
	cr_expect_eq(rep.cupti.sync_ns, 2000);
	gp_rep_free(&rep);
}

static void an_op_ending_during_cuptis_time_after_the_entry(int late)
{
	/* cudaStreamSynchronize [10000, 26000]; CUPTI's time in it is
	 * [10120, 20195] (the call's entry ran first); kernel K ended at
	 * 20150, during CUPTI's time: not waited for, although it ended after
	 * entry + cost (20075). The wait (16000 - 10075 ns) is charged to no
	 * op, whether the record comes before or after the API record */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "K");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 10, 50, 1);
	rec_kernel(&t, 7, 100, 20150, 1, 1);
	if (!late)
		instr(&t, 10120, 10075, 2);
	rec_api(&t, RT, GP_API_SYNC_STREAM, 1, 10000, 16000, 2);
	if (late)
		instr(&t, 10120, 10075, 2);
	struct gp_rep rep = run(&t);
	cr_expect_eq(group(&rep, "K")->sync_ns, 0);
	cr_expect_eq(rep.sync_unattributed_ns, 16000 - 10075);
	cr_expect_eq(rep.cupti.sync_ns, 10075);
	gp_rep_free(&rep);
}

Test(report_cupti_cost, an_op_that_ended_during_cuptis_time_was_not_waited_for)
{
	an_op_ending_during_cuptis_time_after_the_entry(0);
}

Test(report_cupti_cost, an_op_that_ended_during_cuptis_time_was_not_waited_for_late_record)
{
	an_op_ending_during_cuptis_time_after_the_entry(1);
}

Test(report_cupti_cost, a_blocking_copy_waits_after_cuptis_cost)
{
	/* a clock without error: the copy's return after its transfer is no
	 * offset here (docs/metrics.md §2, "The GPU's clock") */
	setenv("GPUPHASE_REPORT_GPU_CLOCK", "raw", 1);
	/* kernel K runs [100, 50000]; cudaMemcpy [20000, 70000] with 2 us of
	 * CUPTI at its entry waits for K from 22000 to 50000, then copies
	 * [60000, 65000]: K's sync 28000, the copy's launch the rest, CUPTI's
	 * time in neither; launch_raw keeps the rule without it (the wait from
	 * the call's entry) */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "K");
	rec_api(&t, RT, GP_API_LAUNCH, 1, 10, 50, 1);
	rec_kernel(&t, 7, 100, 50000, 1, 1);
	instr(&t, 20000, 2000, 2);
	rec_api(&t, RT, GP_API_MEMCPY_SYNC, 1, 20000, 50000, 2);
	rec_copy(&t, GP_REC_MEMCPY, 0, 7, 60000, 5000, 3, 2, 2 /* DtoH */);
	struct gp_rep rep = run(&t);
	const struct gp_rep_group *k = group(&rep, "K"), *c = group(&rep, "memcpy DtoH");
	cr_expect_eq(k->sync_ns, 50000 - 22000);
	cr_expect_eq(c->launch_ns, 50000 - 2000 - 5000 - 28000);
	cr_expect_eq(c->launch_raw_ns, 50000 - 5000 - 30000); /* = launch: CUPTI was in the wait */
	cr_expect_eq(rep.cupti.sync_ns, 2000);
	cr_expect_eq(rep.cupti.launch_ns, 0);
	/* nothing counted twice: host time = launches + sync + execution + CUPTI */
	cr_expect_eq(rep.host_api_ns, k->launch_ns + c->launch_ns + k->sync_ns + c->execute_ns +
					      rep.cupti.launch_ns + rep.cupti.sync_ns);
	gp_rep_free(&rep);
}

Test(report_cupti_cost, calibration_calls_are_left_out)
{
	/* the library's calibration: an external correlation GP_CALIB_EXT_ID on
	 * its calls, a kernel named GP_CALIB_KERNEL; the program's launch
	 * follows. Only the program's op is in the report. */
	struct recs t = { .n = 0 };
	rec_string(&t, 1, "k");
	rec_string(&t, 2, GP_CALIB_KERNEL);
	calib(&t, GP_CALIBF_API | GP_CALIBF_LAUNCH, 400, 300, 1500);
	rec_extcorr(&t, 90, GP_CALIB_EXT_ID);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 100, 900, 90);
	rec_kernel(&t, 7, 1100, 1200, 91, 2); /* its kernel under another corr */
	rec_api(&t, RT, GP_API_LAUNCH, 1, 1150, 800, 91);
	rec_api(&t, RT, GP_API_SYNC_STREAM, 1, 1300, 100, 92);
	rec_api(&t, RT, GP_API_LAUNCH, 1, 5000, 10000, 1);
	rec_kernel(&t, 7, 20000, 30000, 1, 1);
	struct gp_rep rep = run(&t);
	cr_expect_eq(rep.ngroups, 1);
	cr_expect_eq(rep.ops, 1);
	cr_expect_eq(rep.api_unjoined, 0);
	cr_expect_eq(rep.sync_unattributed_calls, 1); /* corr 92 had no ext corr: the program's */
	cr_expect_eq(group(&rep, "k")->launch_ns, 10000 - 1900);
	gp_rep_free(&rep);
}
