/*
 * test_simcuda_e2e.c — Criterion suite running the nvcc-built examples on
 * simcuda (LD_LIBRARY_PATH=$GP_BUILD/simcuda):
 *   - each example passes its self-check under its shipped cost model and
 *     shows its documented profile in the ground truth;
 *   - a CUPTI client (sim_testclient.c, as CUDA_INJECTION64_PATH + LD_PRELOAD)
 *     gets InitializeInjection called, receives Kernel10 names and the
 *     runtime/driver/external correlation chains, on its own clock, matching
 *     the truth exactly; the example's stdout is unchanged by profiling;
 *   - a bad SIMCUDA_CONFIG gives the documented error and exit status 2.
 * Needs GP_BUILD and GP_SRC (set by make test).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/common/tcrit.h" /* Criterion, or its stand-in under TSan */
#include <cupti.h>

#include "simcuda/sim_truth_reader.h"

static char g_tmp[256];

static const char *env_or(const char *k, const char *d)
{
	const char *v = getenv(k);
	return v && *v ? v : d;
}

static void mk_tmp(void)
{
	snprintf(g_tmp, sizeof g_tmp, "/tmp/simcuda-e2e-%d", (int)getpid());
	cr_assert_eq(mkdir(g_tmp, 0700) == 0 || errno == EEXIST, 1);
}

static void rm_tmp(void)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
	if (system(cmd) != 0)
		cr_log_warn("could not remove %s", g_tmp);
}

TestSuite(simcuda_e2e, .init = mk_tmp, .fini = rm_tmp, .timeout = 120);

/*
 * Run build/examples/<ex> on simcuda with extra environment `env` (shell
 * words), stdout/stderr to <tmp>/<tag>.out/.err. Returns the exit status.
 */
static int run_example(const char *ex, const char *tag, const char *env)
{
	const char *b = env_or("GP_BUILD", "build");
	const char *san = env_or("GP_SAN_RUNTIME", "");
	char cmd[4096];
	snprintf(cmd, sizeof cmd,
		 "env LD_LIBRARY_PATH='%s/simcuda' ASAN_OPTIONS=detect_leaks=0 %s%s%s %s '%s/examples/%s' >'%s/%s.out' "
		 "2>'%s/%s.err'",
		 b, *san ? "LD_PRELOAD='" : "", san, *san ? "'" : "", env, b, ex, g_tmp, tag, g_tmp, tag);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *slurp(const char *tag, const char *ext)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s.%s", g_tmp, tag, ext);
	FILE *f = fopen(p, "r");
	cr_assert(f, "cannot open %s", p);
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n = getdelim(&buf, &cap, 0, f);
	fclose(f);
	if (n < 0) {
		free(buf);
		return strdup("");
	}
	return buf;
}

static struct sim_ev *load_truth(const char *tag, size_t *n)
{
	char p[512];
	struct sim_ev *ev;
	snprintf(p, sizeof p, "%s/%s.truth", g_tmp, tag);
	cr_assert_eq(sim_truth_load(p, &ev, n), 0, "cannot load %s", p);
	return ev;
}

/* Run an example with its cost model and truth; check self-check and timing lines. */
static struct sim_ev *run_with_model(const char *ex, size_t *n)
{
	char env[1024];
	snprintf(env, sizeof env, "SIMCUDA_CONFIG='%s/examples/%s.simcuda' SIMCUDA_TRUTH='%s/%s.truth'",
		 env_or("GP_SRC", "."), ex, g_tmp, ex);
	int rc = run_example(ex, ex, env);
	char *err = slurp(ex, "err"), *out = slurp(ex, "out");
	cr_assert_eq(rc, 0, "%s exited %d: %s", ex, rc, err);
	cr_expect(strstr(out, ": OK\n") != NULL, "%s stdout: %s", ex, out);
	cr_expect(strstr(err, "timing: ") != NULL, "%s stderr: %s", ex, err);
	free(err);
	free(out);
	return load_truth(ex, n);
}

/*
 * Phase shares of the operator "kernel name", by the rules of
 * ARCHITECTURE.md section 4 applied to the truth: launch = the launching API
 * call's duration, execute = the kernel's, sync = every blocked interval that
 * waited for one of its kernels. Shares of launch + execute + sync.
 */
struct shares {
	int kernels;
	double launch, execute, sync;
};

static struct shares op_shares(const struct sim_ev *ev, size_t n, const char *kname)
{
	uint64_t l = 0, e = 0, y = 0;
	struct shares r = {0};
	for (size_t i = 0; i < n; i++) {
		if (ev[i].type != SIM_EV_KERNEL || strcmp(ev[i].name, kname))
			continue;
		r.kernels++;
		e += ev[i].end - ev[i].start;
		for (size_t j = 0; j < n; j++) {
			if (ev[j].type == SIM_EV_API && ev[j].corr == ev[i].corr)
				l += ev[j].end - ev[j].start;
			if (ev[j].type == SIM_EV_SYNC && ev[j].waited_corr == ev[i].corr)
				y += ev[j].end - ev[j].start;
		}
	}
	double t = (double)(l + e + y);
	if (t > 0) {
		r.launch = (double)l / t;
		r.execute = (double)e / t;
		r.sync = (double)y / t;
	}
	return r;
}

Test(simcuda_e2e, compute_bound_profile)
{
	size_t n;
	struct sim_ev *ev = run_with_model("compute_bound", &n);
	struct shares s = op_shares(ev, n, "_Z9heavy_lcgPjij");
	cr_expect_eq(s.kernels, 5);
	for (size_t i = 0; i < n; i++)
		if (ev[i].type == SIM_EV_KERNEL)
			cr_expect_eq(ev[i].end - ev[i].start, 2000000u, "kernel heavy_lcg exec_ns from the model");
	cr_expect_gt(s.execute, 0.8, "compute-bound: execute %.2f launch %.2f sync %.2f", s.execute, s.launch,
		     s.sync);
	free(ev);
}

Test(simcuda_e2e, launch_bound_profile)
{
	size_t n;
	struct sim_ev *ev = run_with_model("launch_bound", &n);
	struct shares s = op_shares(ev, n, "_Z8tiny_addPjij");
	cr_expect_eq(s.kernels, 3000);
	cr_expect(s.sync <= 0.3 && s.launch > 0.2, "launch-bound: execute %.2f launch %.2f sync %.2f", s.execute,
		  s.launch, s.sync);
	free(ev);
}

Test(simcuda_e2e, sync_bound_profile)
{
	size_t n;
	struct sim_ev *ev = run_with_model("sync_bound", &n);
	struct shares s = op_shares(ev, n, "_Z11step_kernelPjij");
	int devsync = 0;
	for (size_t i = 0; i < n; i++)
		devsync += ev[i].type == SIM_EV_SYNC && !strcmp(ev[i].kind, "device");
	cr_expect_eq(s.kernels, 200);
	cr_expect_eq(devsync, 200);
	cr_expect_gt(s.sync, 0.3, "sync-bound: execute %.2f launch %.2f sync %.2f", s.execute, s.launch, s.sync);
	free(ev);
}

/* ---- the CUPTI client on an nvcc-built example --------------------------------------- */

struct crec {
	char t;
	char name[128];
	unsigned a, corr, c, d;
	unsigned long long start, end, x;
};

static struct crec *load_client(const char *path, size_t *n, int *init, int *ctx)
{
	FILE *f = fopen(path, "r");
	cr_assert(f, "client wrote no %s", path);
	cr_assert_eq(fscanf(f, "INIT %d CTX %d\n", init, ctx), 2);
	struct crec *v = NULL;
	size_t cnt = 0, cap = 0;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		if (cnt == cap) {
			cap = cap ? cap * 2 : 1024;
			v = realloc(v, cap * sizeof *v);
		}
		struct crec *r = &v[cnt];
		memset(r, 0, sizeof *r);
		r->t = line[0];
		int ok = 0;
		switch (line[0]) {
		case 'K': ok = sscanf(line, "K %127s %u %llu %llu %u", r->name, &r->corr, &r->start, &r->end, &r->a) == 5; break;
		case 'M': ok = sscanf(line, "M %u %u %u %llu %llu %llu %u", &r->a, &r->corr, &r->c, &r->start, &r->end, &r->x, &r->d) == 7; break;
		case 'R':
		case 'D': ok = sscanf(line + 1, " %u %u %llu %llu %u", &r->a, &r->corr, &r->start, &r->end, &r->c) == 5; break;
		case 'Y': ok = sscanf(line, "Y %u %u %llu %llu", &r->a, &r->corr, &r->start, &r->end) == 4; break;
		case 'X': ok = sscanf(line, "X %u %llu %u", &r->a, &r->x, &r->corr) == 3; break;
		default: cr_assert_fail("unexpected client line: %s", line);
		}
		cr_assert(ok, "bad client line: %s", line);
		cnt++;
	}
	fclose(f);
	*n = cnt;
	return v;
}

static const struct crec *cfind(const struct crec *v, size_t n, char t, unsigned corr)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].t == t && v[i].corr == corr)
			return &v[i];
	return NULL;
}

Test(simcuda_e2e, cupti_client_sees_kernels_and_chains)
{
	const char *b = env_or("GP_BUILD", "build");
	char env[2048], outp[512];
	snprintf(outp, sizeof outp, "%s/client.txt", g_tmp);
	/* unprofiled run: the reference stdout */
	snprintf(env, sizeof env, "SIMCUDA_CONFIG='%s/examples/sync_bound.simcuda'", env_or("GP_SRC", "."));
	cr_assert_eq(run_example("sync_bound", "plain", env), 0);
	const char *san = env_or("GP_SAN_RUNTIME", "");
	/* Pinned: kernel records are compared with the truth to the nanosecond,
	 * so CUPTI's GPU clock is kept on the host clock here (the offset and
	 * drift are tested in test_simcuda_cupti.c). */
	snprintf(env, sizeof env,
		 "SIMCUDA_CUPTI_CLOCK_OFFSET_NS=0 SIMCUDA_CUPTI_CLOCK_DRIFT_PPM=0 "
		 "SIMCUDA_CONFIG='%s/examples/sync_bound.simcuda' SIMCUDA_TRUTH='%s/c.truth' SIMTEST_OUT='%s' "
		 "CUDA_INJECTION64_PATH='%s/simcuda/libsimtestclient.so' LD_PRELOAD='%s %s/simcuda/libsimtestclient.so'",
		 env_or("GP_SRC", "."), g_tmp, outp, b, san, b);
	int rc = run_example("sync_bound", "prof", env);
	char *perr = slurp("prof", "err");
	cr_assert_eq(rc, 0, "profiled run failed: %s", perr);
	free(perr);
	char *o1 = slurp("plain", "out"), *o2 = slurp("prof", "out");
	cr_expect_str_eq(o1, o2, "profiling must not change stdout");
	free(o1);
	free(o2);

	size_t n, nt;
	int init, ctx;
	struct crec *v = load_client(outp, &n, &init, &ctx);
	struct sim_ev *ev = load_truth("c", &nt);
	cr_expect_eq(init, 1, "InitializeInjection called once");
	cr_expect_eq(ctx, 1, "CONTEXT_CREATED delivered to the subscriber");
	int kernels = 0, memcpys = 0, devsyncs = 0;
	unsigned long long last_ext = 0;
	for (size_t i = 0; i < n; i++) {
		const struct crec *r = &v[i];
		if (r->t == 'K') {
			kernels++;
			cr_expect_str_eq(r->name, "_Z11step_kernelPjij");
			const struct crec *rt = cfind(v, n, 'R', r->corr);
			cr_assert(rt, "kernel %u: no runtime record", r->corr);
			cr_expect_eq(rt->a, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000);
			const struct crec *x = cfind(v, n, 'X', r->corr);
			cr_assert(x, "kernel %u: no external correlation", r->corr);
			cr_expect_eq(x->a, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2);
			cr_expect_gt(x->x, last_ext, "one fresh external id per launch");
			last_ext = x->x;
			/* the driver launch inside has its own corr and the same external id */
			int drv_ok = 0;
			for (size_t j = 0; j < n; j++)
				if (v[j].t == 'D' && v[j].a == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel &&
				    v[j].start >= rt->start && v[j].end <= rt->end) {
					const struct crec *dx = cfind(v, n, 'X', v[j].corr);
					drv_ok = v[j].corr != r->corr && dx && dx->x == x->x;
				}
			cr_expect(drv_ok, "kernel %u: driver cuLaunchKernel record with the same external id", r->corr);
			const struct sim_ev *t = NULL;
			for (size_t j = 0; j < nt && !t; j++)
				if (ev[j].type == SIM_EV_KERNEL && ev[j].corr == r->corr)
					t = &ev[j];
			cr_assert(t);
			cr_expect_eq(t->start, r->start, "same clock as the truth (the client's)");
			cr_expect_eq(t->end, r->end);
		} else if (r->t == 'M') {
			memcpys++;
			const struct crec *d = cfind(v, n, 'D', r->corr);
			const struct crec *rt = cfind(v, n, 'R', r->c);
			cr_assert(d && rt, "memcpy %u/%u: chain broken", r->corr, r->c);
			cr_expect(d->a == CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2 ||
				  d->a == CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2);
			cr_expect_eq(rt->a, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020);
			cr_expect_eq(r->d & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC, 0u);
			cr_expect_eq(cfind(v, n, 'X', r->corr), NULL, "no external id pushed around copies");
		} else if (r->t == 'Y') {
			devsyncs += r->a == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
		}
	}
	cr_expect_eq(kernels, 200);
	cr_expect_eq(memcpys, 202);
	cr_expect_geq(devsyncs, 200);
	free(v);
	free(ev);
}

/* ---- bad cost model ---------------------------------------------------------------------- */

static void expect_bad_model(const char *text, const char *env_extra, const char *want)
{
	char path[512], env[1024];
	snprintf(path, sizeof path, "%s/bad.simcuda", g_tmp);
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
	snprintf(env, sizeof env, "SIMCUDA_CONFIG='%s' %s", path, env_extra);
	int rc = run_example("launch_bound", "bad", env);
	char *err = slurp("bad", "err");
	char msg[1024];
	snprintf(msg, sizeof msg, want, path);
	cr_expect_eq(rc, 2, "exit status for bad model: %d", rc);
	cr_expect(strstr(err, msg) != NULL, "stderr '%s' lacks '%s'", err, msg);
	free(err);
}

Test(simcuda_e2e, bad_config_is_a_clear_error)
{
	expect_bad_model("launch_ns 5\nexec_ns 7\nbogus 1\n", "",
			 "simcuda: bad cost model: %s:3: unknown key 'bogus'");
	expect_bad_model("kernel tiny_add exec_ns=fast\n", "",
			 "simcuda: bad cost model: %s:1: kernel tiny_add: exec_ns='fast'");
	expect_bad_model("exec_ns 5\n", "SIMCUDA_LAUNCH_NS=-1",
			 "simcuda: bad cost model: SIMCUDA_LAUNCH_NS='-1': expected a non-negative integer");
	char env[600];
	snprintf(env, sizeof env, "SIMCUDA_CONFIG='%s/missing.simcuda'", g_tmp);
	cr_expect_eq(run_example("launch_bound", "missing", env), 2);
	char *err = slurp("missing", "err");
	cr_expect(strstr(err, "missing.simcuda: cannot open") != NULL, "%s", err);
	free(err);
}
