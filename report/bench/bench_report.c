/*
 * bench_report.c — `make bench` item for gpuphase-report (docs/performance.md,
 * "Report"). Single-threaded driver; prints bench lines:
 *
 *   bench: report_records_per_s R rec/s floor=F ratio=R/F
 *       gpuphase-report --format json over a synthetic trace of >= 50M
 *       records (R), against the floor F measured in the same run: reading
 *       the same file once with gp_reader and doing nothing else.
 *   bench: report_vs_python_chrome_json R rec/s floor=P ratio=R/P
 *       P: the same generator's trace (1M records) exported with
 *       --export chrome-trace and aggregated by a short Python 3 script
 *       (json.load, sum of dur per name), in trace records per second.
 *   bench: report_records_per_cpu_s R rec/s floor=F ratio=R/F
 *       the same two runs counted in CPU time (the report's user + system
 *       time, the floor's process CPU time): records per second per thread,
 *       which a loaded shared machine does not distort the way it does wall
 *       time.
 *   bench: report_peak_rss_small|big M MiB
 *       peak RSS of the report on a 5M- and on the 50M-record trace: memory
 *       follows distinct operators, not records.
 *   bench: report_json_vs_text_128k_ops J s floor=T ratio=J/T
 *       --format json (J) against --format text (T) over a trace with 131072
 *       distinct kernel names, best of 2 each: every output linear in the
 *       operators (target ratio <= 2).
 *
 * The traces are written once into $GP_BUILD/bench/ (kept between runs; the
 * file name carries the record count and the generator version) through
 * the collector's producer API, like libgpuphase writes them: per op a hook
 * record, the CUSTOM2 external correlation, the CUPTI runtime record and the
 * kernel record; every 10th op a stream synchronize (hook, ext corr, runtime
 * record, CUPTI sync record); an iteration mark every 100 ops; 64 kernel
 * names (131072 in the many-operators trace).
 *
 * Usage: bench_report [RECORDS]   (default 50000000)
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gp_collector.h"
#include "gp_reader.h"

#define GEN_VERSION 2
#define GP_BENCH_MANY_OPS 131072u /* distinct kernel names of the many-operators trace */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void emit(const union gp_rec *r)
{
	while (gp_collector_emit(r, 1) == -ENOBUFS)
		sched_yield(); /* the ring is full: let the writer drain (counted as a drop, re-sent) */
}

static int generate(const char *path, uint64_t records, uint32_t nnames)
{
	struct gp_kv kv[] = { { "cmdline", "bench_report synthetic trace" }, { "host", "bench" } };
	struct gp_collector_config cfg = { .path = path, .ring_records = 1u << 20, .flush_ms = 10,
					   .clock_id = 4, .kv = kv, .nkv = 2 };
	int rc = gp_collector_start(&cfg);
	if (rc) {
		fprintf(stderr, "bench_report: %s: cannot start the collector: %s\n", path, strerror(-rc));
		return -1;
	}
	uint32_t *names = malloc(nnames * sizeof *names);
	for (uint32_t i = 0; names && i < nnames; i++) {
		char buf[64];
		int n = nnames == 64 ? snprintf(buf, sizeof buf, "_Z14bench_kernel%02uPfS_i", i)
				     : snprintf(buf, sizeof buf, "bench_op_%06u", i);
		names[i] = gp_collector_intern(buf, (size_t)n);
	}
	if (!names) {
		gp_collector_stop();
		return -1;
	}
	uint64_t t = 1000000000ull, emitted = 0, op = 0, launches = 0;
	uint32_t corr = 1, tid = 4242, ctid = 77;
	union gp_rec r;
	while (emitted < records) {
		uint64_t hook_id = ++op;
		/* launch: hook, ext corr, CUPTI runtime record, kernel */
		memset(&r, 0, sizeof r);
		r.api.type = GP_REC_HOOK_API;
		r.api.class_flags = GP_API_LAUNCH;
		r.api.tid = tid;
		r.api.start = t;
		r.api.dur = 6000;
		r.api.corr = (uint32_t)hook_id;
		r.api.stream = 7;
		emit(&r);
		memset(&r, 0, sizeof r);
		r.extcorr.type = GP_REC_EXTCORR;
		r.extcorr.kind = 5;
		r.extcorr.corr = corr;
		r.extcorr.ext_id = hook_id;
		emit(&r);
		memset(&r, 0, sizeof r);
		r.api.type = GP_REC_RUNTIME_API;
		r.api.class_flags = GP_API_LAUNCH;
		r.api.api_id = 505;
		r.api.tid = ctid;
		r.api.start = t + 200;
		r.api.dur = 5000;
		r.api.corr = corr;
		emit(&r);
		memset(&r, 0, sizeof r);
		r.kernel.type = GP_REC_KERNEL;
		r.kernel.stream = 7;
		r.kernel.start = t + 9000;
		r.kernel.end = t + 9000 + 2000 + (op % 64) * 100;
		r.kernel.corr = corr;
		r.kernel.name = names[op % nnames];
		emit(&r);
		emitted += 4;
		corr++;
		t += 12000;
		if (op % 10 == 0) {
			uint64_t sid = ++op;
			memset(&r, 0, sizeof r);
			r.api.type = GP_REC_HOOK_API;
			r.api.class_flags = GP_API_SYNC_STREAM;
			r.api.tid = tid;
			r.api.start = t;
			r.api.dur = 9000;
			r.api.corr = (uint32_t)sid;
			r.api.stream = 7;
			emit(&r);
			memset(&r, 0, sizeof r);
			r.extcorr.type = GP_REC_EXTCORR;
			r.extcorr.kind = 5;
			r.extcorr.corr = corr;
			r.extcorr.ext_id = sid;
			emit(&r);
			memset(&r, 0, sizeof r);
			r.api.type = GP_REC_RUNTIME_API;
			r.api.class_flags = GP_API_SYNC_STREAM;
			r.api.api_id = 131;
			r.api.tid = ctid;
			r.api.start = t + 100;
			r.api.dur = 8000;
			r.api.corr = corr;
			emit(&r);
			memset(&r, 0, sizeof r);
			r.sync.type = GP_REC_SYNC;
			r.sync.sync_type = 3;
			r.sync.stream = 7;
			r.sync.start = t + 100;
			r.sync.end = t + 8100;
			r.sync.corr = corr;
			r.sync.event = UINT32_MAX;
			emit(&r);
			emitted += 4;
			corr++;
			t += 10000;
		}
		if (++launches % 100 == 0) {
			memset(&r, 0, sizeof r);
			r.mark.type = GP_REC_ITER;
			r.mark.tid = tid;
			r.mark.ts = t;
			r.mark.iter = launches / 100;
			emit(&r);
			emitted++;
		}
	}
	gp_collector_stop();
	free(names);
	return 0;
}

/* The trace file for `records` over nnames kernel names, generated when
 * missing. */
static int trace_for(const char *dir, uint64_t records, uint32_t nnames, char *path, size_t n)
{
	if (nnames == 64)
		snprintf(path, n, "%s/report_synth_v%d_%" PRIu64 ".gpht", dir, GEN_VERSION, records);
	else
		snprintf(path, n, "%s/report_synth_v%d_%" PRIu64 "_%u_names.gpht", dir, GEN_VERSION, records, nnames);
	struct stat st;
	if (stat(path, &st) == 0 && st.st_size > 0)
		return 0;
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
	double t0 = now_s();
	if (generate(tmp, records, nnames) || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	fprintf(stderr, "bench_report: generated %s in %.1f s\n", path, now_s() - t0);
	return 0;
}

/* Floor: read every block with the reader, touching each record's type.
 * Returns wall seconds; *cpu gets the CPU seconds. */
static double reader_floor(const char *path, uint64_t *records, double *cpu)
{
	char err[512];
	struct gp_reader *rd;
	if (gp_reader_open(path, &rd, err, sizeof err)) {
		fprintf(stderr, "bench_report: %s\n", err);
		return -1;
	}
	const union gp_rec *recs;
	size_t n;
	uint64_t count = 0, sum = 0;
	double t0 = now_s(), c0 = cpu_s();
	while (gp_reader_next_block(rd, &recs, &n, err, sizeof err) > 0) {
		for (size_t i = 0; i < n; i++)
			sum += recs[i].type;
		count += n;
	}
	double dt = now_s() - t0;
	*cpu = cpu_s() - c0;
	gp_reader_close(rd);
	*records = count;
	if (sum == 0)
		fprintf(stderr, "bench_report: empty trace?\n");
	return dt;
}

/* Run argv with stdout to /dev/null (or out); returns wall seconds, peak RSS
 * and (when cpu is not NULL) the child's user + system seconds. */
static double run(char *const argv[], const char *out, long *rss_kib, double *cpu)
{
	fflush(NULL); /* the child must not inherit unwritten output */
	double t0 = now_s();
	pid_t pid = fork();
	if (pid == 0) {
		if (!freopen(out ? out : "/dev/null", "w", stdout))
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench_report: %s failed\n", argv[0]);
		return -1;
	}
	if (rss_kib)
		*rss_kib = ru.ru_maxrss;
	if (cpu)
		*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
		       (double)ru.ru_stime.tv_usec / 1e6;
	return now_s() - t0;
}

static const char py_script[] =
	"import json, sys\n"
	"sums = {}\n"
	"for e in json.load(open(sys.argv[1]))['traceEvents']:\n"
	"    if e.get('ph') == 'X':\n"
	"        sums[e['name']] = sums.get(e['name'], 0) + e['dur']\n"
	"print(len(sums))\n";

/* JSON against text over GP_BENCH_MANY_OPS distinct operators, best of 2
 * each, in the same run: every output must be linear in the operators. */
static int bench_many_ops(char *report, char *trace)
{
	char *js[] = { report, "--format", "json", trace, NULL }, *tx[] = { report, "--format", "text", trace, NULL };
	double best_j = -1, best_t = -1;
	for (int k = 0; k < 2; k++) {
		double j = run(js, NULL, NULL, NULL), t = run(tx, NULL, NULL, NULL);
		if (j < 0 || t < 0)
			return 1;
		best_j = best_j < 0 || j < best_j ? j : best_j;
		best_t = best_t < 0 || t < best_t ? t : best_t;
	}
	printf("report: %u distinct operators: --format json %.2f s, --format text %.2f s\n", GP_BENCH_MANY_OPS,
	       best_j, best_t);
	printf("bench: report_json_vs_text_%uk_ops %.2f s floor=%.2f ratio=%.2f\n", GP_BENCH_MANY_OPS / 1024, best_j,
	       best_t, best_t > 0 ? best_j / best_t : 0);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t big_n = argc > 1 ? strtoull(argv[1], NULL, 10) : 50000000ull;
	const char *build = getenv("GP_BUILD") ? getenv("GP_BUILD") : "build";
	char dir[4096], report[4200], big[4200], small[4200], py[4200], chrome[4200], pyfile[4200], many[4200];
	snprintf(dir, sizeof dir, "%s/bench", build);
	snprintf(report, sizeof report, "%s/bin/gpuphase-report", build);
	mkdir(dir, 0755);
	if (trace_for(dir, big_n, 64, big, sizeof big) || trace_for(dir, 5000000ull, 64, small, sizeof small) ||
	    trace_for(dir, 1000000ull, 64, py, sizeof py) ||
	    trace_for(dir, GP_BENCH_MANY_OPS * 5ull, GP_BENCH_MANY_OPS, many, sizeof many))
		return 1;

	/* floor, best of 2 */
	uint64_t recs = 0;
	double floor_c, f2_c;
	double floor_s = reader_floor(big, &recs, &floor_c), f2 = reader_floor(big, &recs, &f2_c);
	if (floor_s < 0 || f2 < 0)
		return 1;
	if (f2 < floor_s)
		floor_s = f2;
	if (f2_c < floor_c)
		floor_c = f2_c;
	/* the report, best of 2 */
	long rss_big = 0, rss_small = 0;
	char *ra[] = { report, "--format", "json", big, NULL };
	double rep_c, r2_c;
	double rep_s = run(ra, NULL, &rss_big, &rep_c), r2 = run(ra, NULL, &rss_big, &r2_c);
	if (rep_s < 0 || r2 < 0)
		return 1;
	if (r2 < rep_s)
		rep_s = r2;
	if (r2_c < rep_c)
		rep_c = r2_c;
	char *rs[] = { report, "--format", "json", small, NULL };
	if (run(rs, NULL, &rss_small, NULL) < 0)
		return 1;
	double rate = (double)recs / rep_s, floor_rate = (double)recs / floor_s;
	printf("report: %" PRIu64 " records; reader floor %.2f s, report %.2f s (two passes + analysis)\n", recs,
	       floor_s, rep_s);
	printf("bench: report_records_per_s %.0f rec/s floor=%.0f ratio=%.3f\n", rate, floor_rate, rate / floor_rate);
	printf("report: CPU time: reader floor %.2f s, report %.2f s\n", floor_c, rep_c);
	if (floor_c > 0 && rep_c > 0)
		printf("bench: report_records_per_cpu_s %.0f rec/s floor=%.0f ratio=%.3f\n", (double)recs / rep_c,
		       (double)recs / floor_c, floor_c / rep_c);
	printf("bench: report_peak_rss_small %.1f MiB\n", (double)rss_small / 1024.0);
	printf("bench: report_peak_rss_big %.1f MiB\n", (double)rss_big / 1024.0);

	/* Python over the Chrome JSON export of the 1M-record trace */
	uint64_t py_recs = 0;
	double py_c;
	if (reader_floor(py, &py_recs, &py_c) < 0)
		return 1;
	snprintf(chrome, sizeof chrome, "%s/report_synth_1M.chrome.json", dir);
	snprintf(pyfile, sizeof pyfile, "%s/report_sum_by_name.py", dir);
	FILE *f = fopen(pyfile, "w");
	if (!f || fputs(py_script, f) < 0 || fclose(f)) {
		fprintf(stderr, "bench_report: cannot write %s\n", pyfile);
		return 1;
	}
	char *ex[] = { report, "--export", "chrome-trace", chrome, py, NULL };
	if (run(ex, NULL, NULL, NULL) < 0)
		return 1;
	char *pa[] = { "python3", pyfile, chrome, NULL };
	double py_s = run(pa, NULL, NULL, NULL);
	if (py_s < 0)
		return 1;
	double py_rate = (double)py_recs / py_s;
	printf("report: python3 json aggregation of %" PRIu64 " records (Chrome JSON) %.2f s\n", py_recs, py_s);
	printf("bench: report_vs_python_chrome_json %.0f rec/s floor=%.0f ratio=%.1f\n", rate, py_rate, rate / py_rate);
	unlink(chrome);
	return bench_many_ops(report, many);
}
