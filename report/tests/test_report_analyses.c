/*
 * test_report_analyses.c — Criterion suite for the analyses (report/analyses/:
 * stages, host, trends, graphs) run by the pipeline on synthetic record arrays: the
 * cases the simcuda end-to-end test cannot produce on demand (a quiet host,
 * exact self-overhead arithmetic, a node captured before the trace began, a
 * decreasing drift). Expected values are computed from each timeline's own
 * constants. Runs on the test thread only.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gp_collector.h"
#include "report/analyses/registry.h"
#include "report/pipeline.h"
#include "trace_builder.h"

/* One launch (runtime record) and its kernel; returns the kernel record. */
static union gp_rec *launch(struct recs *t, uint64_t at, uint32_t dur, uint64_t exec, uint32_t corr, uint32_t name)
{
	rec_api(t, GP_REC_RUNTIME_API, GP_API_LAUNCH, 7, at, dur, corr);
	return rec_kernel(t, 13, at + dur + 1000, at + dur + 1000 + exec, corr, name);
}

static void host(struct recs *t, uint64_t ts, uint32_t interval_us, uint32_t busy_pm, uint64_t cupti_ns)
{
	union gp_rec *r = rec_new(t);
	r->host.type = GP_REC_HOST_SAMPLE;
	r->host.ncpu = 2;
	r->host.ts = ts;
	r->host.interval_us = interval_us;
	r->host.host_busy_pm = busy_pm;
	r->host.proc_cpu_pm = 500;
	r->host.cupti_ns = cupti_ns;
}

/* Run the pipeline with its analyses over the records and print their
 * sections (text); returns the malloc'd output. */
static char *report(const struct recs *t)
{
	struct gp_pipeline_opts po = { .group_by = GP_GROUP_KERNEL, .what = GP_PIPE_ANALYSES, .outlier_factor = 1.5 };
	struct gp_pipeline *p = gp_pipeline_new(&po);
	cr_assert(p);
	char err[256];
	cr_assert_eq(gp_pipeline_add_records(p, "records", t->r, t->n, err, sizeof err), 0);
	struct gp_rep rep;
	cr_assert_eq(gp_pipeline_report(p, 0, 1, &rep), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct gp_analysis_style style = { .markdown = 0, .outlier_factor = 1.5 };
	cr_assert_eq(gp_analyses_text(f, gp_pipeline_analyses(p)[0], &rep, &style), 0);
	fclose(f);
	gp_pipeline_free(p);
	gp_rep_free(&rep);
	return buf;
}

#define T0 1000000000ull /* 1 s on the trace clock */
#define US 1000ull

/* 40 launches of 10 us host time, one every 100 us, under samples of given
 * busy per mille covering [T0, T0 + 4 ms]. */
static void launches_under(struct recs *t, uint32_t busy_pm)
{
	rec_string(t, 1, "_Z4stepv");
	for (uint32_t i = 0; i < 40; i++)
		launch(t, T0 + i * 100 * US, 10 * US, 50 * US, i + 1, 1);
	host(t, T0 + 2000 * US, 2000, busy_pm, 0);
	host(t, T0 + 4000 * US, 2000, busy_pm, 0);
}

Test(analyses, quiet_host_flags_nothing)
{
	static struct recs t;
	t.n = 0;
	launches_under(&t, 200);
	char *out = report(&t);
	cr_assert(strstr(out, "host CPU busy: mean 20.0%"), "%s", out);
	cr_assert(strstr(out, "host > 50% busy during 0.0% of the sampled time"), "%s", out);
	cr_assert_null(strstr(out, "launch numbers taken while the host"), "%s", out);
	free(out);
}

Test(analyses, busy_host_flags_launches)
{
	static struct recs t;
	t.n = 0;
	launches_under(&t, 900);
	char *out = report(&t);
	cr_assert(strstr(out, "host CPU busy: mean 90.0%"), "%s", out);
	/* every launch starts inside a busy sample interval */
	cr_assert(strstr(out, "warning: step: launch numbers taken while the host was > 50% busy (40 of 40 launch "
			      "calls, 100% of its launch time)"), "%s", out);
	free(out);
}

Test(analyses, self_overhead_arithmetic)
{
	static struct recs t;
	t.n = 0;
	rec_string(&t, 1, "_Z4stepv");
	/* measured again lower at a later sample (hostload.c): the last holds */
	rec_status(&t, GP_STATUS_HOOK_COST, 4000);
	rec_status(&t, GP_STATUS_HOOK_COST, 1000);
	for (uint32_t i = 0; i < 10; i++) {
		rec_api(&t, GP_REC_HOOK_API, GP_API_OTHER, 0, T0 + i * 100 * US, 1000, 100 + i);
	}
	launch(&t, T0, 10 * US, 50 * US, 1, 1);
	launch(&t, T0 + 999 * US, 10 * US, 50 * US, 2, 1);
	host(&t, T0 + 1000 * US, 1000, 100, 5000);
	char *out = report(&t);
	/* 10 x 1000 ns + 5000 ns = 15 us; the window is the trace's wall time */
	cr_assert(strstr(out, "self-overhead (estimate of the time the profiler added): 15.0us = 10 hooked calls x 1000ns + "
			      "CUPTI buffer time 5.0us"),
		  "%s", out);
	cr_assert_null(strstr(out, "exceeds 5%"), "%s", out);
	free(out);
}

Test(analyses, self_overhead_counts_cupti_in_calls)
{
	static struct recs t;
	t.n = 0;
	rec_string(&t, 1, "_Z4stepv");
	rec_status(&t, GP_STATUS_HOOK_COST, 1000);
	rec_status(&t, GP_STATUS_CUPTI_OVERHEAD, 1);
	launch(&t, T0, 10 * US, 50 * US, 1, 1);
	launch(&t, T0 + 999 * US, 10 * US, 50 * US, 2, 1);
	for (uint32_t i = 0; i < 2; i++) { /* 3 us of CUPTI inside each launch */
		uint64_t start = T0 + i * 999 * US + 100;
		rec_overhead(&t, GP_OVH_INSTRUMENTATION, 0, start, start + 3 * US, i + 1);
	}
	/* a queue wait is not CUPTI's cost */
	rec_overhead(&t, GP_OVH_COMMAND_BUFFER_FULL, 0, T0 + 999 * US + 4 * US, T0 + 999 * US + 6 * US, 2);
	host(&t, T0 + 1000 * US, 1000, 100, 5000);
	char *out = report(&t);
	/* no hooks; 5 us of buffer time + 6 us in calls */
	cr_assert(strstr(out, "self-overhead (estimate of the time the profiler added): 11.0us = 0 hooked calls x 1000ns + "
			      "CUPTI buffer time 5.0us + "
			      "CUPTI in calls 6.0us"),
		  "%s", out);
	free(out);
}

Test(analyses, self_overhead_counts_the_calibration)
{
	/* no overhead records: CUPTI's time in the calls is the calibration's
	 * estimate (400 ns a runtime call + 1500 ns a launch, for two
	 * launches), and the calibration's own 50 us is the profiler's too */
	static struct recs t;
	t.n = 0;
	rec_string(&t, 1, "_Z4stepv");
	rec_status(&t, GP_STATUS_HOOK_COST, 1000);
	union gp_rec *c = rec_new(&t);
	c->calib.type = GP_REC_CALIBRATION;
	c->calib.flags = GP_CALIBF_API | GP_CALIBF_LAUNCH;
	c->calib.start = T0 - 100 * US;
	c->calib.dur = 50 * US;
	c->calib.rt_ns = 400;
	c->calib.drv_ns = 300;
	c->calib.launch_ns = 1500;
	launch(&t, T0, 10 * US, 50 * US, 1, 1);
	launch(&t, T0 + 999 * US, 10 * US, 50 * US, 2, 1);
	host(&t, T0 + 1000 * US, 1000, 100, 5000);
	char *out = report(&t);
	cr_assert(strstr(out, "self-overhead (estimate of the time the profiler added): 58.8us = 0 hooked calls x 1000ns + "
			      "CUPTI buffer time 5.0us + CUPTI in calls 3.8us (calibrated) + the calibration 50.0us"),
		  "%s", out);
	free(out);
}

Test(analyses, decreasing_drift_and_no_tail)
{
	static struct recs t;
	t.n = 0;
	rec_string(&t, 1, "_Z4stepv");
	rec_string(&t, 2, "_Z4flatv");
	/* step: 200 us falling by 2 us per call; flat: 30 us always */
	for (uint32_t i = 0; i < 50; i++) {
		launch(&t, T0 + i * 1000 * US, 10 * US, (200 - 2 * i) * US, 2 * i + 1, 1);
		launch(&t, T0 + i * 1000 * US + 500 * US, 10 * US, 30 * US, 2 * i + 2, 2);
	}
	char *out = report(&t);
	/* slope -2 us, drift = -2 * 49 / mean(151) = -64.9 % */
	cr_assert(strstr(out, "step: -2.0us per call (-65% over 50 calls: fitted 200.0us -> 102.0us, R^2 1.00)"), "%s",
		  out);
	cr_assert_null(strstr(out, "flat:"), "%s", out);
	cr_assert_null(strstr(out, "long-tail"), "%s", out);
	free(out);
}

Test(analyses, graph_node_captured_before_trace)
{
	static struct recs t;
	t.n = 0;
	rec_string(&t, 1, "_Z4nodev");
	rec_api(&t, GP_REC_RUNTIME_API, GP_API_GRAPH_LAUNCH, 0, T0, 20 * US, 5);
	/* two replayed kernels of one launch; no capture/clone records */
	for (int k = 0; k < 2; k++) {
		uint64_t start = T0 + 30 * US + (uint64_t)k * 10 * US;
		rec_kernel(&t, 0, start, start + 10 * US, 5, 1)->kernel.flags = GP_OPF_GRAPH;
		rec_graph_node(&t, GP_GRAPH_OP, 9, 77 + (uint64_t)k, 5);
	}
	char *out = report(&t);
	cr_assert(strstr(out, "graph 9 (instantiated as graph 9): 1 launches, 2 nodes, 2 kernels;\n    cudaGraphLaunch "
			      "host time 20.0us (20.0us per launch, charged once per launch); GPU time 20.0us"), "%s", out);
	cr_assert(strstr(out, "(not captured in trace)"), "%s", out);
	free(out);
}

/*
 * A trace FILE (written by the collector, so it has blocks, CRCs and a
 * footer) whose records, after one real launch, carry all-ones ids of every
 * one-slot record type — graph node ids, marker ids, pcs, iteration numbers,
 * drop counts... (tests/fuzz/regressions/all-types-ff.in made the report say
 * "out of memory": a graph node id UINT64_MAX is the maps' reserved key).
 * gpuphase-report, run under a 1 GiB address-space limit, must give a
 * best-effort report: exit 0, the real kernel present, no "out of memory".
 */
Test(analyses, all_ones_fields_in_a_trace_file, .timeout = 60)
{
	char dir[] = "/tmp/gp_analyses_ffXXXXXX", path[256], outp[256], errp[256], bin[1024];
	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/ff.gpht", dir);
	snprintf(outp, sizeof outp, "%s/out", dir);
	snprintf(errp, sizeof errp, "%s/err", dir);
	const char *b = getenv("GP_BUILD");
	snprintf(bin, sizeof bin, "%s/bin/gpuphase-report", b && *b ? b : "build");
	struct gp_collector_config cfg = { .path = path, .flush_ms = 10, .clock_id = 4 };
	cr_assert_eq(gp_collector_start(&cfg), 0);
	uint32_t name = gp_collector_intern("_Z9real_stepv", 13);
	cr_assert(name);
	static struct recs t;
	t.n = 0;
	launch(&t, T0, 10 * US, 50 * US, 1, name);
	size_t nff = 0;
	for (int type = 1; type < GP_REC_TYPE_COUNT; type++) {
		union gp_rec r;
		memset(&r, 0xff, sizeof r);
		r.raw[0] = (uint8_t)type;
		if (gp_rec_slots(&r) != 1)
			continue; /* strings/stacks of 4 G bytes: the reader refuses those */
		*rec_new(&t) = r;
		nff++;
	}
	cr_assert(nff >= 15, "only %zu one-slot types", nff);
	for (size_t i = 0; i < t.n; i++)
		cr_assert_eq(gp_collector_emit(&t.r[i], 1), 0, "record %zu (type %u) not taken", i, t.r[i].raw[0]);
	gp_collector_stop();

	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		const char *san = getenv("GP_SAN");
		if (san && *san) { /* a sanitizer reserves terabytes of shadow: bound allocations instead */
			setenv("ASAN_OPTIONS", "detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb=1024", 1);
		} else {
			struct rlimit rl = { 1ull << 30, 1ull << 30 };
			setrlimit(RLIMIT_AS, &rl);
		}
		int fo = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fo < 0 || fe < 0)
			_exit(126);
		dup2(fo, 1);
		dup2(fe, 2);
		execl(bin, bin, "--format", "json", path, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	char out[1 << 16] = "", err[4096] = "";
	FILE *f = fopen(outp, "r");
	cr_assert(f);
	out[fread(out, 1, sizeof out - 1, f)] = 0;
	fclose(f);
	f = fopen(errp, "r");
	cr_assert(f);
	err[fread(err, 1, sizeof err - 1, f)] = 0;
	fclose(f);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status 0x%x, stderr:\n%s", bin, st, err);
	cr_assert_null(strstr(err, "out of memory"), "%s", err);
	cr_assert(strstr(out, "real_step"), "the real kernel is missing:\n%.2000s", out);
	unlink(path);
	unlink(outp);
	unlink(errp);
	rmdir(dir);
}

/* Ten iterations of launch + stream synchronize; in iteration 5 the kernel
 * waits 9 ms in the queue, so the host's synchronize blocks 9 ms: the
 * outlier is explained by its largest phase, sync, and not as "host code or
 * waits outside CUDA". With --top 1 only the longest outlier is listed. */
static void sync_iters(struct recs *t)
{
	rec_string(t, 1, "step_k");
	uint64_t at = T0;
	uint32_t corr = 1;
	for (int i = 0; i < 10; i++) {
		rec_iter(t, (uint64_t)i, at)->mark.tid = 7;
		uint64_t queue = i == 5 ? 9000 * US : 5 * US;
		rec_api(t, GP_REC_RUNTIME_API, GP_API_LAUNCH, 7, at, 5 * US, corr);
		uint64_t start = at + 5 * US + queue, end = start + 100 * US;
		rec_kernel(t, 13, start, end, corr++, 1);
		uint64_t wait = at + 6 * US; /* the synchronize call, released 1 us after the kernel */
		union gp_rec *s =
			rec_api(t, GP_REC_RUNTIME_API, GP_API_SYNC_STREAM, 7, wait, (uint32_t)(end + 1 * US - wait), corr);
		s->api.api_id = 131;
		rec_sync(t, 3, 13, wait, end + 1 * US, corr++);
		at = end + 1 * US + 20 * US;
	}
	rec_iter(t, 10, at)->mark.tid = 7;
}

Test(analyses, outlier_explained_by_sync)
{
	static struct recs t;
	t.n = 0;
	sync_iters(&t);
	char *out = report(&t);
	const char *line = strstr(out, "iteration 5:");
	cr_assert(line, "no outlier iteration 5 in:\n%s", out);
	const char *eol = strchr(line, '\n');
	char buf[512];
	snprintf(buf, sizeof buf, "%.*s", (int)(eol ? eol - line : 300), line);
	cr_expect(strstr(buf, "largest phase: sync +"), "not explained by sync: %s", buf);
	cr_expect(!strstr(buf, "host code"), "sync explained as host code: %s", buf);
	free(out);
}
