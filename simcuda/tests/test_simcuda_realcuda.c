/*
 * test_simcuda_realcuda.c — the behaviours of real CUDA that simcuda has on
 * by default (docs/simcuda.md "Real-CUDA behaviours"): each is shown in the
 * ground truth AND in CUPTI's records, and each is shown gone when its
 * cost-model key turns it off:
 *   pageable_async_blocks  async copies on pageable memory block; pinned stay async
 *   implicit_sync          cudaFree / cudaFreeHost / cudaMallocHost wait for the device
 *   queue_depth            a full launch queue blocks the launching thread
 *   exec_jitter_pct, seed  kernel times drawn within +-P %, reproducible
 *   devices                a second device with its own timeline and records
 *
 * In-process, like test_simcuda_api.c: each Criterion test is its own
 * process, so the SIMCUDA_<KEY> variables set before the first CUDA call are
 * the cost model of that test. The jitter test forks children that start
 * simcuda afresh.
 */
#include <stdatomic.h>
#include <sys/wait.h>

#include "simcuda/sim_config.h"
#include "simcuda/tests/sim_testutil.h"

/* upper-bound tolerance for host timings on a loaded machine (sleeps
 * overshoot); the properties themselves are lower bounds and orders */
#define SLACK_NS 200000000ull

static void setup(void)
{
	setenv("SIMCUDA_LAUNCH_NS", "20000", 1);
	setenv("SIMCUDA_LAUNCH_LATENCY_NS", "5000", 1);
	setenv("SIMCUDA_EXEC_NS", "5000000", 1);
	setenv("SIMCUDA_API_NS", "3000", 1);
	setenv("SIMCUDA_SYNC_NS", "2000", 1);
	setenv("SIMCUDA_MEMCPY_GBPS", "1", 1); /* 1 byte/ns */
	setenv("SIMCUDA_MEMCPY_LATENCY_NS", "1000", 1);
	/* pinned: CUPTI's clock skew and its own overhead off — these tests compare
	 * CUPTI's records with the truth to the nanosecond, and a wait's start
	 * with its call's start (test_simcuda_cupti covers those keys) */
	setenv("SIMCUDA_CUPTI_CLOCK_OFFSET_NS", "0", 1);
	setenv("SIMCUDA_CUPTI_CLOCK_DRIFT_PPM", "0", 1);
	setenv("SIMCUDA_CUPTI_API_OVERHEAD_NS", "0", 1);
	setenv("SIMCUDA_CUPTI_LAUNCH_OVERHEAD_NS", "0", 1);
	unsetenv("SIMCUDA_CONFIG");
	tu_truth_begin();
	tu_register_kernels();
}

static void teardown(void)
{
	__cudaUnregisterFatBinary(tu_fatbin);
}

TestSuite(simcuda_realcuda, .init = setup, .fini = teardown, .timeout = 60);

static const struct sim_ev *ev_api(const struct sim_ev *ev, size_t n, uint32_t corr)
{
	for (size_t i = 0; i < n; i++)
		if (ev[i].type == SIM_EV_API && ev[i].corr == corr)
			return &ev[i];
	return NULL;
}

/* The i-th truth line of a type (and, for sync lines, kind when non-NULL). */
static const struct sim_ev *ev_nth(const struct sim_ev *ev, size_t n, enum sim_ev_type t, const char *kind,
				   int i)
{
	for (size_t j = 0; j < n; j++)
		if (ev[j].type == t && (!kind || !strcmp(ev[j].kind, kind)) && i-- == 0)
			return &ev[j];
	return NULL;
}

static int ev_count(const struct sim_ev *ev, size_t n, enum sim_ev_type t, const char *kind)
{
	int c = 0;
	for (size_t j = 0; j < n; j++)
		c += ev[j].type == t && (!kind || !strcmp(ev[j].kind, kind));
	return c;
}

/* ---- pageable_async_blocks ------------------------------------------------------------------- */

/* A kernel on s, then an async HtoD copy from pageable memory and one from
 * pinned memory on s. */
static void copy_workload(cudaStream_t *s)
{
	static char pageable[4096];
	char *pinned, *d;
	tu_cupti_start(0);
	cr_assert_eq(cudaMalloc((void **)&d, 8192), cudaSuccess);
	cr_assert_eq(cudaMallocHost((void **)&pinned, 4096), cudaSuccess);
	cr_assert_eq(cudaStreamCreate(s), cudaSuccess);
	cr_assert_eq(tu_launch(&tu_stub_mm, *s), cudaSuccess);
	cr_assert_eq(cudaMemcpyAsync(d, pageable, sizeof pageable, cudaMemcpyHostToDevice, *s), cudaSuccess);
	cr_assert_eq(tu_launch(&tu_stub_mm, *s), cudaSuccess);
	cr_assert_eq(cudaMemcpyAsync(d + 4096, pinned, 4096, cudaMemcpyHostToDevice, *s), cudaSuccess);
	tu_flush();
}

Test(simcuda_realcuda, pageable_async_copy_blocks)
{
	cudaStream_t s;
	copy_workload(&s);
	size_t n;
	struct sim_ev *ev = tu_truth_load(&n);
	const struct sim_ev *k0 = ev_nth(ev, n, SIM_EV_KERNEL, NULL, 0);
	const struct sim_ev *k1 = ev_nth(ev, n, SIM_EV_KERNEL, NULL, 1);
	const struct sim_ev *pg = ev_nth(ev, n, SIM_EV_MEMCPY, NULL, 0);
	const struct sim_ev *pn = ev_nth(ev, n, SIM_EV_MEMCPY, NULL, 1);
	cr_assert(k0 && k1 && pg && pn);
	/* truth: the pageable copy's call waited for the kernel, then the copy */
	const struct sim_ev *y = ev_nth(ev, n, SIM_EV_SYNC, "pageable_copy", 0);
	cr_assert(y, "no pageable_copy sync line");
	cr_expect_eq(y->waited_corr, k0->corr);
	cr_expect_eq(y->end, k0->end);
	const struct sim_ev *a = ev_api(ev, n, pg->api_corr);
	cr_assert(a);
	cr_expect_eq(y->start, a->start);
	cr_expect_geq(a->end, pg->end, "pageable cudaMemcpyAsync returned before its copy ended");
	/* the pinned one stays asynchronous: it returns while the kernel runs */
	const struct sim_ev *b = ev_api(ev, n, pn->api_corr);
	cr_assert(b);
	cr_expect_lt(b->end, k1->end, "pinned cudaMemcpyAsync blocked");
	cr_expect_eq(ev_count(ev, n, SIM_EV_SYNC, "pageable_copy"), 1);
	/* CUPTI: the runtime record of the pageable call spans its copy's record */
	const struct tu_rec *ra = tu_find(CUPTI_ACTIVITY_KIND_RUNTIME, pg->api_corr);
	const struct tu_rec *rm = tu_find(CUPTI_ACTIVITY_KIND_MEMCPY, pg->corr);
	const struct tu_rec *rb = tu_find(CUPTI_ACTIVITY_KIND_RUNTIME, pn->api_corr);
	const struct tu_rec *rk = tu_find(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k1->corr);
	cr_assert(ra && rm && rb && rk);
	cr_expect_eq(rm->u.m.srcKind, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
	cr_expect_geq(ra->u.a.end, rm->u.m.end);
	cr_expect_lt(rb->u.a.end, rk->u.k.end);
	free(ev);
}

Test(simcuda_realcuda, pageable_async_copy_off)
{
	setenv("SIMCUDA_PAGEABLE_ASYNC_BLOCKS", "0", 1);
	cudaStream_t s;
	copy_workload(&s);
	size_t n;
	struct sim_ev *ev = tu_truth_load(&n);
	const struct sim_ev *k0 = ev_nth(ev, n, SIM_EV_KERNEL, NULL, 0);
	const struct sim_ev *pg = ev_nth(ev, n, SIM_EV_MEMCPY, NULL, 0);
	cr_assert(k0 && pg);
	cr_expect_eq(ev_count(ev, n, SIM_EV_SYNC, "pageable_copy"), 0);
	const struct sim_ev *a = ev_api(ev, n, pg->api_corr);
	cr_assert(a);
	cr_expect_lt(a->end, k0->end, "pageable cudaMemcpyAsync blocked with the key off");
	const struct tu_rec *ra = tu_find(CUPTI_ACTIVITY_KIND_RUNTIME, pg->api_corr);
	const struct tu_rec *rm = tu_find(CUPTI_ACTIVITY_KIND_MEMCPY, pg->corr);
	cr_assert(ra && rm);
	cr_expect_lt(ra->u.a.end, rm->u.m.start);
	free(ev);
}

/* nvcc's registration of a __device__ variable (crt/host_runtime.h, C++ only). */
void __cudaRegisterVar(void **h, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
		       size_t size, int constant, int global);

/* Every async copy form with a pageable host side blocks (2D, to and from a
 * symbol, DtoH); cudaMemsetAsync and a pinned DtoH copy do not. Each call
 * follows a fresh kernel on the same stream. */
Test(simcuda_realcuda, pageable_every_async_copy_form)
{
	static char sym[256], pageable[256];
	char *d, *pinned;
	cudaStream_t s;
	__cudaRegisterVar(tu_fatbin, sym, sym, "sym", 0, sizeof sym, 0, 0);
	tu_cupti_start(0);
	cr_assert_eq(cudaMalloc((void **)&d, 256), cudaSuccess);
	cr_assert_eq(cudaHostAlloc((void **)&pinned, 256, 0), cudaSuccess);
	cr_assert_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	const char *blocking[] = {"cudaMemcpy2DAsync", "cudaMemcpyToSymbolAsync", "cudaMemcpyFromSymbolAsync",
				  "cudaMemcpyAsync"};
	cr_assert_eq(tu_launch(&tu_stub_mm, s), cudaSuccess);
	cr_assert_eq(cudaMemcpy2DAsync(d, 16, pageable, 16, 16, 16, cudaMemcpyHostToDevice, s), cudaSuccess);
	cr_assert_eq(tu_launch(&tu_stub_mm, s), cudaSuccess);
	cr_assert_eq(cudaMemcpyToSymbolAsync(sym, pageable, 64, 0, cudaMemcpyHostToDevice, s), cudaSuccess);
	cr_assert_eq(tu_launch(&tu_stub_mm, s), cudaSuccess);
	cr_assert_eq(cudaMemcpyFromSymbolAsync(pageable, sym, 64, 0, cudaMemcpyDeviceToHost, s), cudaSuccess);
	cr_assert_eq(tu_launch(&tu_stub_mm, s), cudaSuccess);
	cr_assert_eq(cudaMemcpyAsync(pageable, d, 64, cudaMemcpyDeviceToHost, s), cudaSuccess);
	const char *async[] = {"cudaMemsetAsync", "cudaMemcpyAsync"};
	cr_assert_eq(tu_launch(&tu_stub_mm, s), cudaSuccess);
	cr_assert_eq(cudaMemsetAsync(d, 0, 64, s), cudaSuccess);
	cr_assert_eq(tu_launch(&tu_stub_mm, s), cudaSuccess);
	cr_assert_eq(cudaMemcpyAsync(pinned, d, 64, cudaMemcpyDeviceToHost, s), cudaSuccess);
	tu_flush();
	size_t n;
	struct sim_ev *ev = tu_truth_load(&n);
	cr_expect_eq(ev_count(ev, n, SIM_EV_SYNC, "pageable_copy"), 4);
	for (int i = 0; i < 6; i++) {
		const struct sim_ev *k = ev_nth(ev, n, SIM_EV_KERNEL, NULL, i);
		cr_assert(k);
		/* the call right after kernel i */
		const struct sim_ev *a = NULL;
		for (size_t j = 0; j < n && !a; j++)
			if (ev[j].type == SIM_EV_API && ev[j].corr > k->corr && strncmp(ev[j].name, "cudaLaunch", 10))
				a = &ev[j];
		cr_assert(a);
		const char *want = i < 4 ? blocking[i] : async[i - 4];
		cr_expect_str_eq(a->name, want);
		const struct tu_rec *ra = tu_find(CUPTI_ACTIVITY_KIND_RUNTIME, a->corr);
		const struct tu_rec *rk = tu_find(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k->corr);
		cr_assert(ra && rk);
		if (i < 4) {
			cr_expect_gt(a->end, k->end, "%s on pageable memory returned before the kernel ended", want);
			cr_expect_gt(ra->u.a.end, rk->u.k.end);
			const struct sim_ev *y = NULL;
			for (size_t j = 0; j < n && !y; j++)
				if (ev[j].type == SIM_EV_SYNC && ev[j].api_corr == a->corr)
					y = &ev[j];
			cr_assert(y, "%s: no sync line", want);
			cr_expect_str_eq(y->kind, "pageable_copy");
			cr_expect_eq(y->waited_corr, k->corr);
		} else {
			cr_expect_lt(a->end, k->end, "%s blocked", want);
			cr_expect_lt(ra->u.a.end, rk->u.k.end);
		}
	}
	free(ev);
}

/* ---- implicit_sync ----------------------------------------------------------------------------- */

/* Each of cudaFree, cudaMallocHost, cudaFreeHost after a fresh kernel. */
static void free_workload(void)
{
	char *d, *d2, *h;
	/* 50 ms kernels: each call after a launch must find it still running,
	 * even on a loaded host that is slow between the launch and the call */
	setenv("SIMCUDA_EXEC_NS", "50000000", 1);
	tu_cupti_start(0);
	cr_assert_eq(cudaMalloc((void **)&d, 256), cudaSuccess);
	cr_assert_eq(cudaMalloc((void **)&d2, 256), cudaSuccess);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	cr_assert_eq(cudaFree(d), cudaSuccess);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	cr_assert_eq(cudaMallocHost((void **)&h, 256), cudaSuccess);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	cr_assert_eq(cudaFreeHost(h), cudaSuccess);
	cr_assert_eq(cudaFree(NULL), cudaSuccess); /* no-op: never waits */
	cr_assert_eq(cudaFree(d2), cudaSuccess);   /* nothing outstanding: no line */
	tu_flush();
}

Test(simcuda_realcuda, implicit_sync_waits)
{
	free_workload();
	size_t n;
	struct sim_ev *ev = tu_truth_load(&n);
	const char *kinds[] = {"free", "host_alloc", "free_host"};
	for (int i = 0; i < 3; i++) {
		const struct sim_ev *k = ev_nth(ev, n, SIM_EV_KERNEL, NULL, i);
		const struct sim_ev *y = ev_nth(ev, n, SIM_EV_SYNC, kinds[i], 0);
		cr_assert(k && y, "no %s sync line", kinds[i]);
		cr_expect_eq(ev_count(ev, n, SIM_EV_SYNC, kinds[i]), 1, "one %s line", kinds[i]);
		cr_expect_eq(y->waited_corr, k->corr, "%s waited for the kernel before it", kinds[i]);
		cr_expect_geq(y->end, k->end);
		cr_expect_lt(y->end, k->end + SLACK_NS, "the wait ends when the kernel does");
		const struct sim_ev *a = ev_api(ev, n, y->api_corr);
		cr_assert(a);
		cr_expect_eq(y->start, a->start);
		cr_expect_geq(a->end, k->end + 3000, "%s: the wait, then api_ns", kinds[i]);
		/* CUPTI: the call's runtime record ends after the kernel's record */
		const struct tu_rec *ra = tu_find(CUPTI_ACTIVITY_KIND_RUNTIME, y->api_corr);
		const struct tu_rec *rk = tu_find(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k->corr);
		cr_assert(ra && rk);
		cr_expect_geq(ra->u.a.end, rk->u.k.end, "%s record ends before the kernel", kinds[i]);
	}
	free(ev);
}

Test(simcuda_realcuda, implicit_sync_off)
{
	setenv("SIMCUDA_IMPLICIT_SYNC", "0", 1);
	free_workload();
	size_t n;
	struct sim_ev *ev = tu_truth_load(&n);
	const char *kinds[] = {"free", "host_alloc", "free_host"};
	for (int i = 0; i < 3; i++)
		cr_expect_eq(ev_count(ev, n, SIM_EV_SYNC, kinds[i]), 0, "%s line with the key off", kinds[i]);
	const struct sim_ev *k = ev_nth(ev, n, SIM_EV_KERNEL, NULL, 0);
	cr_assert(k);
	for (size_t j = 0; j < n; j++) {
		if (ev[j].type != SIM_EV_API || strcmp(ev[j].name, "cudaFree"))
			continue;
		const struct tu_rec *ra = tu_find(CUPTI_ACTIVITY_KIND_RUNTIME, ev[j].corr);
		cr_assert(ra);
		cr_expect_lt(ev[j].end, k->end, "cudaFree waited with the key off");
		cr_expect_lt(ra->u.a.end, k->end);
		break;
	}
	free(ev);
}

/* ---- queue_depth ------------------------------------------------------------------------------- */

#define QLAUNCHES 8

/* QLAUNCHES 20 ms kernels on one stream, as fast as the host can launch. */
static void queue_workload(void)
{
	setenv("SIMCUDA_EXEC_NS", "20000000", 1); /* 20 ms: 4 launches fill the queue */
	tu_cupti_start(0);
	for (int i = 0; i < QLAUNCHES; i++)
		cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	tu_flush();
}

Test(simcuda_realcuda, queue_full_blocks_launch)
{
	setenv("SIMCUDA_QUEUE_DEPTH", "4", 1);
	queue_workload();
	size_t n;
	struct sim_ev *ev = tu_truth_load(&n);
	/* the 5th launch finds 4 kernels pending and waits for the first to
	 * end; later ones wait while the queue stays full (how many depends on
	 * how fast this host launches, so only the properties are checked) */
	int nq = ev_count(ev, n, SIM_EV_SYNC, "queue_full");
	cr_expect_geq(nq, 1);
	const struct sim_ev *k5 = ev_nth(ev, n, SIM_EV_KERNEL, NULL, 4);
	const struct sim_ev *y0 = ev_nth(ev, n, SIM_EV_SYNC, "queue_full", 0);
	cr_assert(k5 && y0);
	cr_expect_eq(y0->api_corr, k5->corr, "the 5th launch is the first to wait");
	for (int i = 0; i < nq; i++) {
		const struct sim_ev *y = ev_nth(ev, n, SIM_EV_SYNC, "queue_full", i);
		const struct sim_ev *k = NULL, *kl = NULL;
		int pending = 0;
		for (size_t j = 0; j < n; j++) {
			if (ev[j].type != SIM_EV_KERNEL)
				continue;
			if (ev[j].corr == y->waited_corr)
				k = &ev[j];
			if (ev[j].corr == y->api_corr)
				kl = &ev[j];
			pending += ev[j].corr < y->api_corr && ev[j].end > y->start;
		}
		cr_assert(k && kl, "queue wait %d names a kernel and a launch", i);
		cr_expect_eq(pending, 4, "queue wait %d began with the queue full", i);
		cr_expect_geq(y->end, k->end, "wait %d ends when a kernel ends", i);
		cr_expect_lt(y->end, k->end + SLACK_NS);
		const struct sim_ev *a = ev_api(ev, n, kl->corr);
		cr_assert(a);
		cr_expect_leq(a->start, y->start);
		cr_expect_geq(a->end, y->end + 20000, "the launch's own cost follows the wait");
		/* CUPTI: the blocked launch's runtime record spans the freed kernel's end */
		const struct tu_rec *ra = tu_find(CUPTI_ACTIVITY_KIND_RUNTIME, kl->corr);
		const struct tu_rec *rk = tu_find(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k->corr);
		cr_assert(ra && rk);
		cr_expect_geq(ra->u.a.end, rk->u.k.end);
	}
	free(ev);
}

Test(simcuda_realcuda, queue_unbounded_off)
{
	setenv("SIMCUDA_QUEUE_DEPTH", "0", 1);
	queue_workload();
	size_t n;
	struct sim_ev *ev = tu_truth_load(&n);
	cr_expect_eq(ev_count(ev, n, SIM_EV_SYNC, "queue_full"), 0);
	const struct sim_ev *k = ev_nth(ev, n, SIM_EV_KERNEL, NULL, 0);
	const struct sim_ev *kl = ev_nth(ev, n, SIM_EV_KERNEL, NULL, QLAUNCHES - 1);
	cr_assert(k && kl);
	const struct sim_ev *a = ev_api(ev, n, kl->corr);
	const struct tu_rec *ra = tu_find(CUPTI_ACTIVITY_KIND_RUNTIME, kl->corr);
	cr_assert(a && ra);
	cr_expect_lt(a->end, k->end, "the last launch waited with an unbounded queue");
	cr_expect_lt(ra->u.a.end, k->end);
	free(ev);
}

/* ---- exec_jitter_pct and seed ------------------------------------------------------------------ */

#define JN 16

/* In a fresh child process with the given jitter and seed: JN launches;
 * writes each kernel's truth and CUPTI duration to fd. */
static void jitter_child(const char *pct, const char *seed, int fd)
{
	setenv("SIMCUDA_EXEC_NS", "100000", 1);
	setenv("SIMCUDA_EXEC_JITTER_PCT", pct, 1);
	setenv("SIMCUDA_SEED", seed, 1);
	tu_truth_begin();
	uint64_t d[2 * JN] = {0};
	if (cuptiActivityRegisterCallbacks(tu_request, tu_complete) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)
		_exit(3);
	for (int i = 0; i < JN; i++)
		if (tu_launch(&tu_stub_mm, NULL) != cudaSuccess)
			_exit(3);
	cudaDeviceSynchronize();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	cudaDeviceReset();
	struct sim_ev *ev = NULL;
	size_t n = 0;
	if (sim_truth_load(tu_truth_path, &ev, &n) != 0)
		_exit(3);
	unlink(tu_truth_path);
	for (int i = 0; i < JN; i++) {
		const struct sim_ev *k = ev_nth(ev, n, SIM_EV_KERNEL, NULL, i);
		const struct tu_rec *r = k ? tu_find(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k->corr) : NULL;
		if (!k || !r)
			_exit(3);
		d[i] = k->end - k->start;
		d[JN + i] = r->u.k.end - r->u.k.start;
	}
	_exit(write(fd, d, sizeof d) == (ssize_t)sizeof d ? 0 : 3);
}

/* Durations of one child run: truth in d[0..JN), CUPTI in d[JN..2JN). */
static void jitter_run(const char *pct, const char *seed, uint64_t d[2 * JN])
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(p[0]);
		jitter_child(pct, seed, p[1]);
	}
	close(p[1]);
	cr_assert_eq(read(p[0], d, 2 * JN * sizeof *d), (ssize_t)(2 * JN * sizeof *d));
	close(p[0]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed");
}

Test(simcuda_realcuda, exec_jitter_reproducible)
{
	uint64_t a[2 * JN], b[2 * JN], c[2 * JN];
	jitter_run("20", "7", a);
	jitter_run("20", "7", b);
	jitter_run("20", "8", c);
	int distinct = 0, differs = 0;
	for (int i = 0; i < JN; i++) {
		cr_expect_geq(a[i], 80000u, "kernel %d below -20 %%", i);
		cr_expect_leq(a[i], 120000u, "kernel %d above +20 %%", i);
		cr_expect_eq(a[i], a[JN + i], "truth and CUPTI durations of kernel %d", i);
		cr_expect_eq(a[i], b[i], "same seed, kernel %d", i);
		distinct += i && a[i] != a[i - 1];
		differs += a[i] != c[i];
	}
	cr_expect_gt(distinct, JN / 2, "the durations vary");
	cr_expect_gt(differs, JN / 2, "another seed draws other durations");
}

Test(simcuda_realcuda, exec_jitter_off)
{
	uint64_t a[2 * JN];
	jitter_run("0", "7", a);
	for (int i = 0; i < JN; i++) {
		cr_expect_eq(a[i], 100000u, "kernel %d: exact cost without jitter", i);
		cr_expect_eq(a[JN + i], 100000u);
	}
}

/* ---- devices ----------------------------------------------------------------------------------- */

Test(simcuda_realcuda, second_device)
{
	setenv("SIMCUDA_DEVICES", "2", 1);
	tu_cupti_start(0);
	int count = 0, dev = -1;
	cr_assert_eq(cudaGetDeviceCount(&count), cudaSuccess);
	cr_assert_eq(count, 2);
	char *d0, *d1;
	cr_assert_eq(cudaMalloc((void **)&d0, 4096), cudaSuccess);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess); /* device 0, legacy stream */
	cr_assert_eq(cudaSetDevice(1), cudaSuccess);
	cr_assert_eq(cudaGetDevice(&dev), cudaSuccess);
	cr_assert_eq(dev, 1);
	cr_assert_eq(cudaMalloc((void **)&d1, 4096), cudaSuccess);
	cudaStream_t s1;
	cr_assert_eq(cudaStreamCreate(&s1), cudaSuccess);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess); /* device 1, legacy stream */
	cr_assert_eq(tu_launch(&tu_stub_mm, s1), cudaSuccess);   /* device 1, blocking stream */
	cr_assert_eq(cudaMemcpyPeer(d0, 0, d1, 1, 4096), cudaSuccess);
	cr_assert_eq(cudaMemcpyPeerAsync(d1, 1, d0, 0, 4096, s1), cudaSuccess);
	cr_assert_eq(cudaSetDevice(2), cudaErrorInvalidDevice);
	cr_assert_eq(cudaGetLastError(), cudaErrorInvalidDevice);
	cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess); /* device 1 */
	cr_assert_eq(cudaSetDevice(0), cudaSuccess);
	tu_flush();
	size_t n;
	struct sim_ev *ev = tu_truth_load(&n);
	const struct sim_ev *k0 = ev_nth(ev, n, SIM_EV_KERNEL, NULL, 0);
	const struct sim_ev *k1 = ev_nth(ev, n, SIM_EV_KERNEL, NULL, 1);
	const struct sim_ev *k2 = ev_nth(ev, n, SIM_EV_KERNEL, NULL, 2);
	const struct sim_ev *pp = ev_nth(ev, n, SIM_EV_MEMCPY, NULL, 0);
	cr_assert(k0 && k1 && k2 && pp);
	/* truth: device 1's legacy stream does not wait for device 0's */
	cr_expect_neq(k0->stream, k1->stream);
	cr_expect_lt(k1->start, k0->end, "device 1 waited for device 0's legacy stream");
	/* ... but its blocking stream waits for its own legacy stream */
	cr_expect_geq(k2->start, k1->end);
	cr_expect_str_eq(pp->kind, "PtoP");
	cr_expect_geq(pp->start, k2->end, "the peer copy is ordered after device 1's work");
	/* CUPTI: deviceId per device in kernel and memcpy records */
	const struct tu_rec *r0 = tu_find(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k0->corr);
	const struct tu_rec *r1 = tu_find(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k1->corr);
	const struct tu_rec *rp = tu_find(CUPTI_ACTIVITY_KIND_MEMCPY, pp->corr);
	cr_assert(r0 && r1 && rp);
	cr_expect_eq(r0->u.k.deviceId, 0u);
	cr_expect_eq(r1->u.k.deviceId, 1u);
	cr_expect_neq(r0->u.k.contextId, r1->u.k.contextId);
	cr_expect_lt(r1->u.k.start, r0->u.k.end);
	cr_expect_eq(rp->u.m.copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
	cr_expect_eq(rp->u.m.deviceId, 1u, "a peer copy runs on its source device");
	free(ev);
}

Test(simcuda_realcuda, one_device_by_default)
{
	int count = 0, dev = -1;
	cr_assert_eq(cudaGetDeviceCount(&count), cudaSuccess);
	cr_expect_eq(count, 1);
	cr_expect_eq(cudaSetDevice(1), cudaErrorInvalidDevice);
	cr_assert_eq(cudaGetDevice(&dev), cudaSuccess);
	cr_expect_eq(dev, 0);
	char *d;
	cr_assert_eq(cudaMalloc((void **)&d, 64), cudaSuccess);
	cr_expect_eq(cudaMemcpyPeer(d, 1, d, 0, 64), cudaErrorInvalidDevice);
}

Test(simcuda_realcuda, bad_keys_refused)
{
	struct sim_config c;
	char err[256];
	const char *bad[] = {"pageable_async_blocks 2\n", "implicit_sync 7\n", "devices 0\n",
			     "devices 5\n", "exec_jitter_pct 101\n", "queue_depth -1\n"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		sim_config_defaults(&c);
		cr_expect_eq(sim_config_parse(&c, bad[i], "m.simcuda", err, sizeof err), -1, "accepted %s", bad[i]);
		sim_config_free(&c);
	}
	sim_config_defaults(&c);
	cr_expect_eq(c.pageable_async_blocks, 1u);
	cr_expect_eq(c.implicit_sync, 1u);
	cr_expect_eq(c.queue_depth, 1024u);
	cr_expect_eq(c.exec_jitter_pct, 0u);
	cr_expect_eq(c.devices, 1u);
	cr_assert_eq(sim_config_parse(&c, "queue_depth 0\ndevices 2\nseed 42\nexec_jitter_pct 5\n", "m", err,
				      sizeof err),
		     0, "%s", err);
	cr_expect_eq(c.queue_depth, 0u);
	cr_expect_eq(c.devices, 2u);
	cr_expect_eq(c.seed, 42u);
	cr_expect_eq(c.exec_jitter_pct, 5u);
	sim_config_free(&c);
}
