/*
 * test_simcuda_cupti.c — Criterion suite for the ways simcuda's CUPTI is as
 * awkward as the real one (simcuda/sim_cupti_buffers.c, docs/simcuda.md "CUPTI"),
 * driven in-process (sim_testutil.h). Each behaviour is shown in the truth
 * and in CUPTI's records, and turned off by its cost-model key:
 *   - cupti_delivery_delay_ns: background delivery waits that long after an
 *     op's end; an explicit flush does not;
 *   - per-thread activity buffers: the device's and each thread's records
 *     complete in separate buffers, in varying order (attribute off: one);
 *   - cupti_clock_offset_ns / cupti_clock_drift_ppm: GPU-side timestamps
 *     shifted against the truth's host clock, API records not;
 *   - cupti_buffer_records: device records beyond it dropped and counted;
 *   - cupti_api_overhead_ns / cupti_launch_overhead_ns / cupti_extcorr_overhead_ns:
 *     CUPTI's host time in traced calls, as "overhead" truth lines and
 *     OVERHEAD records, per cbid (runtime and driver switches);
 *     COMMAND_BUFFER_FULL records; cuptiActivityEnableHWTrace on cc 9.0;
 *   - the CUPTI thread sleeps while the program does; staging memory is
 *     bounded under a launch storm from many threads;
 *   - the driver's own thread (idle, signals blocked) starts with the
 *     driver; SYSTEM thread ids, kept per thread, are a fork child's own.
 * Each test runs in its own process (fresh simulator); costs are set through
 * SIMCUDA_<KEY> before the first CUDA call.
 */
#include "sim_testutil.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "simcuda/sim_config.h"
#include "simcuda/sim_internal.h"

static void setup(void)
{
	setenv("SIMCUDA_LAUNCH_NS", "20000", 1);
	setenv("SIMCUDA_LAUNCH_LATENCY_NS", "5000", 1);
	setenv("SIMCUDA_EXEC_NS", "300000", 1);
	setenv("SIMCUDA_API_NS", "3000", 1);
	setenv("SIMCUDA_SYNC_NS", "2000", 1);
	unsetenv("SIMCUDA_CONFIG");
	tu_truth_begin();
	tu_register_kernels();
}

static void teardown(void)
{
	__cudaUnregisterFatBinary(tu_fatbin);
}

TestSuite(simcuda_cupti, .init = setup, .fini = teardown, .timeout = 60);

/* ---- delivery delay ---------------------------------------------------------- */

static uint64_t g_first_delivery; /* CUPTI clock of the first completion */
static void CUPTIAPI timed_complete(CUcontext ctx, uint32_t sid, uint8_t *buf, size_t size, size_t valid)
{
	uint64_t now;
	cuptiGetTimestamp(&now);
	pthread_mutex_lock(&tu.mx);
	if (!g_first_delivery && valid)
		g_first_delivery = now;
	pthread_mutex_unlock(&tu.mx);
	tu_complete(ctx, sid, buf, size, valid);
}

static size_t n_delivered(void)
{
	pthread_mutex_lock(&tu.mx);
	size_t n = tu.n;
	pthread_mutex_unlock(&tu.mx);
	return n;
}

/* One launch, waited for, then left to background delivery (a 5 ms flush
 * period, no explicit flush) for 150 ms. */
static void launch_and_leave(void)
{
	cr_assert_eq(cuptiActivityRegisterCallbacks(tu_request, timed_complete), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityFlushPeriod(5), CUPTI_SUCCESS);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
	usleep(150000);
}

static uint64_t truth_end_of(const struct sim_ev *ev, size_t n, enum sim_ev_type t, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (ev[i].type == t && (!name || !strcmp(ev[i].name, name)))
			return ev[i].end;
	cr_assert_fail("no %s in the truth", name ? name : "event");
	return 0;
}

Test(simcuda_cupti, delivery_delay_holds_background_delivery)
{
	setenv("SIMCUDA_CUPTI_DELIVERY_DELAY_NS", "400000000", 1); /* 400 ms */
	launch_and_leave();
	cr_expect_eq(n_delivered(), 0u, "150 ms after the sync: nothing delivered yet");
	for (int i = 0; i < 300 && n_delivered() < 3; i++)
		usleep(10000);
	cr_assert_geq(n_delivered(), 3u, "kernel and API records delivered in the end");
	size_t n;
	struct sim_ev *ev = tu_truth_load(&n);
	uint64_t launch_end = truth_end_of(ev, n, SIM_EV_API, "cudaLaunchKernel");
	uint64_t kernel_end = truth_end_of(ev, n, SIM_EV_KERNEL, NULL);
	cr_expect_geq(g_first_delivery, launch_end + 400000000ull, "no record before its end + the delay");
	cr_expect_lt(kernel_end, launch_end + 400000000ull);
	free(ev);
}

Test(simcuda_cupti, delivery_delay_off)
{
	setenv("SIMCUDA_CUPTI_DELIVERY_DELAY_NS", "0", 1);
	launch_and_leave();
	for (int i = 0; i < 300 && n_delivered() < 3; i++) /* a loaded machine may be late */
		usleep(10000);
	cr_assert_geq(n_delivered(), 3u);
	size_t n;
	struct sim_ev *ev = tu_truth_load(&n);
	/* within a few flush periods, not after a delay (the other test's 400 ms) */
	cr_expect_lt(g_first_delivery, truth_end_of(ev, n, SIM_EV_KERNEL, NULL) + 300000000ull);
	free(ev);
}

Test(simcuda_cupti, explicit_flush_ignores_the_delay)
{
	/* the default delay (1 s): cuptiActivityFlushAll still delivers every
	 * completed record, as CUPTI documents */
	tu_cupti_start(0);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
	cr_assert_eq(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	cr_expect_eq(tu_count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 1u);
	cr_expect_eq(tu_count(CUPTI_ACTIVITY_KIND_RUNTIME), 2u);
}

/* ---- per-thread buffers -------------------------------------------------------- */

/* Position in delivery order of the kind-k record with corr, or -1. */
static long pos_of(CUpti_ActivityKind k, uint32_t corr)
{
	const struct tu_rec *r = tu_find(k, corr);
	return r ? (long)(r - tu.v) : -1;
}

/* Four rounds of launch + sync + flush; returns how many rounds delivered
 * the kernel record before its launch's API record, and the completions. */
static int rounds_kernel_first(int *completions)
{
	tu_cupti_start(0);
	int kfirst = 0;
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
		cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
		cr_assert_eq(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	}
	for (size_t i = 0; i < tu.n; i++) {
		if (tu.v[i].kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			continue;
		long api = pos_of(CUPTI_ACTIVITY_KIND_RUNTIME, tu.v[i].u.k.correlationId);
		cr_assert_geq(api, 0);
		kfirst += (long)i < api;
	}
	*completions = tu.completions;
	return kfirst;
}

Test(simcuda_cupti, per_thread_buffers_complete_independently)
{
	uint8_t v = 0;
	size_t sz = sizeof v;
	cr_assert_eq(cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &sz, &v),
		     CUPTI_SUCCESS);
	cr_expect_eq(v, 1, "CUPTI 13's default");
	int completions = 0;
	int kfirst = rounds_kernel_first(&completions);
	cr_expect_eq(completions, 8, "two buffers a flush: the device's and the thread's");
	cr_expect(kfirst > 0 && kfirst < 4, "the order varies between flushes (%d of 4 kernel first)", kfirst);
	size_t n;
	struct sim_ev *ev = tu_truth_load(&n); /* the truth keeps call order */
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (ev[i].type == SIM_EV_KERNEL)
		{
			cr_expect_not_null(tu_find(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, ev[i].corr));
			k++;
		}
	cr_expect_eq(k, 4u);
	free(ev);
}

Test(simcuda_cupti, one_buffer_without_per_thread_buffers)
{
	uint8_t v = 0;
	size_t sz = sizeof v;
	cr_assert_eq(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &sz, &v),
		     CUPTI_SUCCESS);
	int completions = 0;
	int kfirst = rounds_kernel_first(&completions);
	cr_expect_eq(completions, 4, "one buffer a flush");
	cr_expect(kfirst == 0 || kfirst == 4, "the same order every flush (%d)", kfirst);
}

/* ---- clock offset and drift ------------------------------------------------------ */

/* The truth, after the API records of the reset that loading it makes are
 * flushed too. */
static struct sim_ev *load_truth(size_t *n)
{
	struct sim_ev *ev = tu_truth_load(n);
	cr_assert_eq(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	return ev;
}

/* Every GPU-side record vs its truth line: the shift (record - truth) of
 * the two kernels in shift[0..1]; shift[3] is the drift (ppm) expected
 * between a kernel's start and end. API records must match exactly. */
static void clock_run(int64_t *shift)
{
	tu_cupti_start(0);
	float *d;
	cr_assert_eq(cudaMalloc((void **)&d, 4096), cudaSuccess);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
	usleep(100000);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	cr_assert_eq(cudaMemset(d, 0, 4096), cudaSuccess);
	tu_flush();
	size_t n;
	struct sim_ev *ev = load_truth(&n);
	int nk = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sim_ev *t = &ev[i];
		if (t->type == SIM_EV_API) {
			const struct tu_rec *r = tu_find(CUPTI_ACTIVITY_KIND_RUNTIME, t->corr);
			cr_assert_not_null(r, "%s", t->name);
			cr_expect_eq(r->u.a.start, t->start, "API records stay on the host clock");
			cr_expect_eq(r->u.a.end, t->end);
		} else if (t->type == SIM_EV_KERNEL) {
			const struct tu_rec *r = tu_find(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, t->corr);
			cr_assert_not_null(r);
			int64_t s0 = (int64_t)(r->u.k.start - t->start), s1 = (int64_t)(r->u.k.end - t->end);
			cr_expect(llabs(s1 - s0 - (int64_t)lround((double)(t->end - t->start) *
								  (double)(shift[3]) / 1e6)) <= 1,
				  "end drifts from start by ppm of the kernel's length");
			cr_expect_eq(r->u.k.completed, r->u.k.end);
			if (nk < 2)
				shift[nk] = s0;
			nk++;
			if (nk == 2)
				shift[2] = (int64_t)t->start;
		} else if (t->type == SIM_EV_MEMSET) {
			const struct tu_rec *r = tu_find(CUPTI_ACTIVITY_KIND_MEMSET, t->corr);
			cr_assert_not_null(r);
			cr_expect_neq(r->u.s.start, 0u);
		}
	}
	cr_assert_eq(nk, 2);
	free(ev);
}

Test(simcuda_cupti, clock_offset_shifts_gpu_timestamps)
{
	setenv("SIMCUDA_CUPTI_CLOCK_OFFSET_NS", "-7000", 1);
	setenv("SIMCUDA_CUPTI_CLOCK_DRIFT_PPM", "0", 1);
	int64_t shift[4] = {0, 0, 0, 0};
	clock_run(shift);
	cr_expect_eq(shift[0], -7000);
	cr_expect_eq(shift[1], -7000);
}

Test(simcuda_cupti, clock_drift_grows_with_elapsed_time)
{
	setenv("SIMCUDA_CUPTI_CLOCK_OFFSET_NS", "0", 1);
	setenv("SIMCUDA_CUPTI_CLOCK_DRIFT_PPM", "2000", 1); /* 2 µs per ms */
	int64_t shift[4] = {0, 0, 0, 2000};
	clock_run(shift);
	/* the second kernel ran >= 100 ms after the first: its shift is larger
	 * by 2000 ppm of the time between them (+-1 ns rounding) */
	cr_expect_gt(shift[1] - shift[0], 200000);
	cr_expect_gt(shift[0], 0, "positive drift since configuration");
}

Test(simcuda_cupti, clock_exact_when_off)
{
	setenv("SIMCUDA_CUPTI_CLOCK_OFFSET_NS", "0", 1);
	setenv("SIMCUDA_CUPTI_CLOCK_DRIFT_PPM", "0", 1);
	int64_t shift[4] = {1, 1, 0, 0};
	clock_run(shift);
	cr_expect_eq(shift[0], 0);
	cr_expect_eq(shift[1], 0);
}

/* ---- device buffer capacity -------------------------------------------------------- */

static void overflow_run(size_t *delivered, size_t *dropped)
{
	setenv("SIMCUDA_EXEC_NS", "2000000", 1); /* 2 ms kernels: they queue up */
	setenv("SIMCUDA_LAUNCH_NS", "1000", 1);
	tu_cupti_start(0);
	for (int i = 0; i < 40; i++)
		cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	tu_flush();
	*delivered = tu_count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	cr_assert_eq(cuptiActivityGetNumDroppedRecords(NULL, 0, dropped), CUPTI_SUCCESS);
	size_t n, k = 0;
	struct sim_ev *ev = tu_truth_load(&n);
	for (size_t i = 0; i < n; i++)
		k += ev[i].type == SIM_EV_KERNEL;
	cr_expect_eq(k, 40u, "the truth has every kernel");
	free(ev);
}

Test(simcuda_cupti, device_buffer_overflow_drops)
{
	setenv("SIMCUDA_CUPTI_BUFFER_RECORDS", "10", 1);
	size_t delivered, dropped;
	overflow_run(&delivered, &dropped);
	cr_expect_geq(delivered, 10u);
	cr_expect_lt(delivered, 40u);
	cr_expect_eq(delivered + dropped, 40u, "every kernel delivered or counted (only kernels are on the device)");
	size_t bytes = 0, sz = sizeof bytes;
	cr_assert_eq(cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &sz, &bytes), CUPTI_SUCCESS);
	cr_expect_eq(bytes, 320u, "10 records of 32 bytes");
}

Test(simcuda_cupti, device_buffer_unbounded_when_off)
{
	setenv("SIMCUDA_CUPTI_BUFFER_RECORDS", "0", 1);
	size_t delivered, dropped;
	overflow_run(&delivered, &dropped);
	cr_expect_eq(delivered, 40u);
	cr_expect_eq(dropped, 0u);
}

/* ---- CUPTI's overhead ------------------------------------------------------------- */

struct ovh {
	CUpti_ActivityOverhead3 v[64];
	int n;
} g_ovh;

static void CUPTIAPI ovh_complete(CUcontext ctx, uint32_t sid, uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;
	pthread_mutex_lock(&tu.mx);
	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
		if (r->kind == CUPTI_ACTIVITY_KIND_OVERHEAD && g_ovh.n < 64)
			memcpy(&g_ovh.v[g_ovh.n++], r, sizeof *g_ovh.v);
	pthread_mutex_unlock(&tu.mx);
	tu_complete(ctx, sid, buf, size, valid); /* frees buf */
}

static const CUpti_ActivityOverhead3 *ovh_find(uint32_t corr)
{
	for (int i = 0; i < g_ovh.n; i++)
		if (g_ovh.v[i].correlationId == corr)
			return &g_ovh.v[i];
	return NULL;
}

static void overhead_start(void)
{
	tu_cupti_start(1);
	cr_assert_eq(cuptiActivityRegisterCallbacks(tu_request, ovh_complete), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_OVERHEAD), CUPTI_SUCCESS);
}

Test(simcuda_cupti, overhead_in_traced_calls)
{
	setenv("SIMCUDA_CUPTI_API_OVERHEAD_NS", "30000", 1);
	setenv("SIMCUDA_CUPTI_LAUNCH_OVERHEAD_NS", "70000", 1);
	overhead_start();
	float *d;
	uint64_t t0 = tu_mono();
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	uint64_t t1 = tu_mono();
	cr_expect_geq(t1 - t0, 20000u + 2 * 30000u + 70000u, "launch_ns + runtime and driver + launch overhead really spent");
	cr_assert_eq(cudaMalloc((void **)&d, 64), cudaSuccess);
	tu_flush();
	size_t n;
	struct sim_ev *ev = load_truth(&n);
	int lines = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sim_ev *t = &ev[i];
		if (t->type != SIM_EV_OVERHEAD)
			continue;
		lines++;
		const struct sim_ev *api = NULL;
		for (size_t j = 0; j < n; j++)
			if (ev[j].type == SIM_EV_API && ev[j].corr == t->api_corr)
				api = &ev[j];
		cr_assert_not_null(api, "overhead inside an API call");
		cr_expect(t->start >= api->start && t->end <= api->end, "inside %s", api->name);
		uint64_t want = !strcmp(api->name, "cudaLaunchKernel") ? 130000u : 60000u;
		cr_expect_geq(t->end - t->start, want, "%s", api->name);
		const CUpti_ActivityOverhead3 *o = ovh_find(t->api_corr);
		cr_assert_not_null(o, "an OVERHEAD record for %s", api->name);
		cr_expect_eq(o->overheadKind, CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION);
		cr_expect_eq(o->objectKind, CUPTI_ACTIVITY_OBJECT_THREAD);
		cr_expect_eq(o->objectId.pt.threadId, t->tid);
		cr_expect_eq(o->start, t->start);
		cr_expect_eq(o->end, t->end);
		if (!strcmp(api->name, "cudaLaunchKernel")) { /* the launch's own work follows it */
			cr_expect_geq(api->end - t->end, 20000u);
		}
	}
	cr_expect_geq(lines, 3, "launch, malloc, and the syncs/reset");
	free(ev);
}

/* A launch blocked on a full launch queue (queue_depth): its truth
 * "queue_full" sync line and, as CUPTI 13 reports it, an OVERHEAD record of
 * kind COMMAND_BUFFER_FULL with the same interval and the launch's corr. */
Test(simcuda_cupti, queue_full_is_command_buffer_full_overhead)
{
	setenv("SIMCUDA_QUEUE_DEPTH", "4", 1);
	setenv("SIMCUDA_EXEC_NS", "20000000", 1); /* 20 ms: 4 launches fill the queue */
	overhead_start();
	for (int i = 0; i < 8; i++)
		cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	tu_flush();
	size_t n;
	struct sim_ev *ev = tu_truth_load(&n);
	int waits = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sim_ev *y = &ev[i];
		if (y->type != SIM_EV_SYNC || strcmp(y->kind, "queue_full"))
			continue;
		waits++;
		const CUpti_ActivityOverhead3 *o = NULL;
		for (int k = 0; k < g_ovh.n; k++)
			if (g_ovh.v[k].correlationId == y->api_corr &&
			    g_ovh.v[k].overheadKind == CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL)
				o = &g_ovh.v[k];
		cr_assert_not_null(o, "a COMMAND_BUFFER_FULL record for queue wait %d", waits);
		cr_expect_eq(o->start, y->start);
		cr_expect_eq(o->end, y->end);
		cr_expect_eq(o->objectId.pt.threadId, y->tid);
	}
	cr_expect_geq(waits, 1, "the 5th launch waits");
	free(ev);
}

Test(simcuda_cupti, overhead_off)
{
	setenv("SIMCUDA_CUPTI_API_OVERHEAD_NS", "0", 1);
	setenv("SIMCUDA_CUPTI_LAUNCH_OVERHEAD_NS", "0", 1);
	overhead_start();
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	tu_flush();
	size_t n;
	struct sim_ev *ev = tu_truth_load(&n);
	for (size_t i = 0; i < n; i++)
		cr_expect_neq(ev[i].type, SIM_EV_OVERHEAD);
	cr_expect_eq(g_ovh.n, 0);
	free(ev);
}

/* cupti_overhead_records 0: a CUPTI without overhead records refuses the
 * kind; its cost is spent all the same and stays in the truth. */
Test(simcuda_cupti, overhead_kind_refused_cost_still_spent)
{
	setenv("SIMCUDA_CUPTI_OVERHEAD_RECORDS", "0", 1);
	setenv("SIMCUDA_CUPTI_API_OVERHEAD_NS", "30000", 1);
	setenv("SIMCUDA_CUPTI_LAUNCH_OVERHEAD_NS", "70000", 1);
	int v;
	cr_assert_eq(cudaDriverGetVersion(&v), cudaSuccess); /* the driver starts: the cost model is loaded */
	tu_cupti_start(1);
	cr_assert_eq(cuptiActivityRegisterCallbacks(tu_request, ovh_complete), CUPTI_SUCCESS);
	cr_expect_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_OVERHEAD), CUPTI_ERROR_NOT_COMPATIBLE);
	uint64_t t0 = tu_mono();
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	uint64_t t1 = tu_mono();
	cr_expect_geq(t1 - t0, 20000u + 2 * 30000u + 70000u, "CUPTI's cost really spent");
	tu_flush();
	size_t n, novh = 0;
	struct sim_ev *ev = tu_truth_load(&n);
	for (size_t i = 0; i < n; i++)
		novh += ev[i].type == SIM_EV_OVERHEAD;
	cr_expect_geq(novh, 1, "overhead in the truth");
	cr_expect_eq(g_ovh.n, 0, "no OVERHEAD record");
	free(ev);
}

Test(simcuda_cupti, fine_grained_api_records_and_overhead)
{
	setenv("SIMCUDA_CUPTI_API_OVERHEAD_NS", "30000", 1);
	setenv("SIMCUDA_CUPTI_LAUNCH_OVERHEAD_NS", "0", 1);
	cr_assert_eq(cuptiActivityRegisterCallbacks(tu_request, ovh_complete), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_OVERHEAD), CUPTI_SUCCESS);
	/* RUNTIME kind off: only cudaMalloc is traced */
	cr_assert_eq(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 1), CUPTI_SUCCESS);
	float *d;
	cr_assert_eq(cudaMalloc((void **)&d, 64), cudaSuccess);
	cr_assert_eq(cudaFree(d), cudaSuccess);
	/* RUNTIME kind on, then cudaMalloc switched off */
	cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 0), CUPTI_SUCCESS);
	cr_assert_eq(cudaMalloc((void **)&d, 64), cudaSuccess);
	cr_assert_eq(cudaFree(d), cudaSuccess);
	size_t n;
	struct sim_ev *ev = load_truth(&n);
	int mallocs = 0, frees = 0;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].type != SIM_EV_API)
			continue;
		int traced = tu_find(CUPTI_ACTIVITY_KIND_RUNTIME, ev[i].corr) != NULL;
		int ovh = 0;
		for (size_t j = 0; j < n; j++)
			ovh |= ev[j].type == SIM_EV_OVERHEAD && ev[j].api_corr == ev[i].corr;
		cr_expect_eq(ovh, traced, "%s: overhead exactly where traced", ev[i].name);
		cr_expect_eq(ovh_find(ev[i].corr) != NULL, traced, "%s", ev[i].name);
		if (!strcmp(ev[i].name, "cudaMalloc")) {
			cr_expect_eq(traced, mallocs == 0, "first cudaMalloc traced, second not");
			mallocs++;
		} else if (!strcmp(ev[i].name, "cudaFree")) {
			cr_expect_eq(traced, frees == 1, "first cudaFree not traced, second is");
			frees++;
		}
	}
	cr_expect_eq(mallocs, 2);
	cr_expect_eq(frees, 2);
	free(ev);
}

Test(simcuda_cupti, driver_cbid_switch_the_kind_override_and_extcorr_cost)
{
	/* what GPUPHASE_CUPTI=minimal/lean rely on: a driver cbid traced with
	 * its kind off, the kind overriding the switches set before it, a switch
	 * set after the kind winning; one layer's overhead per traced call, and
	 * cupti_extcorr_overhead_ns only when an external id is pushed */
	setenv("SIMCUDA_CUPTI_API_OVERHEAD_NS", "30000", 1);
	setenv("SIMCUDA_CUPTI_LAUNCH_OVERHEAD_NS", "0", 1);
	setenv("SIMCUDA_CUPTI_EXTCORR_OVERHEAD_NS", "7000", 1);
	cr_assert_eq(cuptiActivityRegisterCallbacks(tu_request, ovh_complete), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_OVERHEAD), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), CUPTI_SUCCESS);
	const CUpti_CallbackId launch = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
	/* 1: the driver's launch alone, both kinds off */
	cr_assert_eq(cuptiActivityEnableDriverApi(launch, 1), CUPTI_SUCCESS);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	/* 2: the same with an external id pushed */
	cr_assert_eq(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 42),
		     CUPTI_SUCCESS);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	uint64_t last = 0;
	cr_assert_eq(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last),
		     CUPTI_SUCCESS);
	/* 3: switched off, then the DRIVER kind enabled: the kind wins */
	cr_assert_eq(cuptiActivityEnableDriverApi(launch, 0), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), CUPTI_SUCCESS);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	/* 4: switched off after the kind: the switch wins */
	cr_assert_eq(cuptiActivityEnableDriverApi(launch, 0), CUPTI_SUCCESS);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	cr_assert_eq(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER), CUPTI_SUCCESS);
	tu_flush();
	size_t n, launches = 0, ext = 0;
	for (size_t i = 0; i < tu.n; i++) {
		launches += tu.v[i].kind == CUPTI_ACTIVITY_KIND_DRIVER && tu.v[i].u.a.cbid == launch;
		ext += tu.v[i].kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	}
	cr_expect_eq(launches, 3u, "driver launch records of launches 1-3");
	cr_expect_eq(tu_count(CUPTI_ACTIVITY_KIND_RUNTIME), 0u, "no runtime record: its kind and cbids are off");
	cr_expect_eq(ext, 1u, "the pushed id: one record, with launch 2's driver record");
	struct sim_ev *ev = tu_truth_load(&n);
	uint64_t want[] = {30000, 37000, 30000};
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].type != SIM_EV_OVERHEAD)
			continue;
		if (k < 3)
			cr_expect_geq(ev[i].end - ev[i].start, want[k], "launch %zu: overhead of one layer%s", k + 1,
				      k == 1 ? " and one external-correlation record" : "");
		k++;
	}
	cr_expect_eq(k, 3u, "launch 4 (untraced) costs nothing");
	free(ev);
}

Test(simcuda_cupti, command_buffer_full_overhead_record)
{
	cr_assert_eq(cuptiActivityRegisterCallbacks(tu_request, ovh_complete), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_OVERHEAD), CUPTI_SUCCESS);
	/* what the runtime's queue-full wait calls */
	simcupti_overhead(77, CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL, 1000, 5000, 42);
	cr_assert_eq(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	const CUpti_ActivityOverhead3 *o = ovh_find(42);
	cr_assert_not_null(o);
	cr_expect_eq(o->overheadKind, CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL);
	cr_expect_eq(o->start, 1000u);
	cr_expect_eq(o->end, 5000u);
	cr_expect_eq(o->objectId.pt.threadId, 77u);
	cr_assert_not_null(o->overheadData);
	const CUpti_ActivityOverheadCommandBufferFullData *d = o->overheadData;
	cr_expect_eq(d->channelType, (uint32_t)CUPTI_CHANNEL_TYPE_COMPUTE);
	free(o->overheadData); /* the client's, as with real CUPTI */
}

Test(simcuda_cupti, hw_trace_not_supported_on_cc90)
{
	cr_expect_eq(cuptiActivityEnableHWTrace(1), CUPTI_ERROR_NOT_SUPPORTED);
	cr_expect_eq(cuptiGetLastError(), CUPTI_ERROR_NOT_SUPPORTED);
	cr_expect_eq(cuptiActivityEnableHWTrace(0), CUPTI_SUCCESS);
}

/* ---- the CUPTI thread sleeps; staging is bounded -------------------------------------- */

/* The tid of the one thread named `name`, 0 if none, -1 if several. */
static long thread_named(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	cr_assert_not_null(d);
	long found = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p[300], comm[64] = "";
		snprintf(p, sizeof p, "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(p, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof comm, f))
			comm[0] = 0;
		fclose(f);
		comm[strcspn(comm, "\n")] = 0;
		if (!strcmp(comm, name))
			found = found ? -1 : strtol(e->d_name, NULL, 10);
	}
	closedir(d);
	return found;
}

/* CPU time (ns) of the thread named simcuda-cupti; -1 if none. */
static long long cupti_thread_cpu_ns(void)
{
	long tid = thread_named("simcuda-cupti");
	if (tid <= 0)
		return -1;
	char p[300];
	long long ns = -1;
	snprintf(p, sizeof p, "/proc/self/task/%ld/schedstat", tid);
	FILE *f = fopen(p, "r");
	if (f) {
		if (fscanf(f, "%lld", &ns) != 1)
			ns = -1;
		fclose(f);
	}
	if (ns < 0) { /* no schedstat: utime + stime in clock ticks */
		snprintf(p, sizeof p, "/proc/self/task/%ld/stat", tid);
		f = fopen(p, "r");
		cr_assert_not_null(f);
		char buf[1024];
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = 0;
		char *q = strrchr(buf, ')');
		unsigned long ut = 0, st = 0;
		cr_assert(q && sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2);
		ns = (long long)(ut + st) * (1000000000ll / sysconf(_SC_CLK_TCK));
	}
	return ns;
}

static long long process_cpu_ns(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ll +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ll;
}

Test(simcuda_cupti, cupti_thread_sleeps_while_the_program_does)
{
	tu_cupti_start(1);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess); /* records staged, delivery delayed */
	long long c0 = cupti_thread_cpu_ns(), p0 = process_cpu_ns();
	cr_assert_geq(c0, 0, "the CUPTI thread is named simcuda-cupti");
	usleep(500000);
	long long c1 = cupti_thread_cpu_ns(), p1 = process_cpu_ns();
	cr_expect_lt(c1 - c0, 25000000ll, "CUPTI thread: %lld ns of CPU in a 500 ms sleep", c1 - c0);
	cr_expect_lt(p1 - p0, 25000000ll, "process: %lld ns of CPU in a 500 ms sleep", p1 - p0);
	tu_flush();
	/* and with nothing staged it waits for a signal, not a tick */
	c0 = cupti_thread_cpu_ns();
	usleep(300000);
	c1 = cupti_thread_cpu_ns();
	cr_expect_lt(c1 - c0, 15000000ll, "idle CUPTI thread: %lld ns", c1 - c0);
}

/* Launch storm: many threads, costs ~0, GPU work piling up into the future. */
static _Atomic size_t g_storm_recs;
static void CUPTIAPI storm_request(uint8_t **buffer, size_t *size, size_t *maxrec)
{
	*buffer = aligned_alloc(8, 1 << 20);
	*size = 1 << 20;
	*maxrec = 0;
}

static void CUPTIAPI storm_complete(CUcontext ctx, uint32_t sid, uint8_t *buf, size_t size, size_t valid)
{
	(void)ctx, (void)sid, (void)size;
	CUpti_Activity *r = NULL;
	size_t n = 0;
	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
		n++;
	atomic_fetch_add(&g_storm_recs, n);
	free(buf);
}

#define STORM_THREADS 16
#define STORM_LAUNCHES 20000

static void *storm_thread(void *arg)
{
	int launches = *(const int *)arg;
	cudaStream_t s;
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
		return (void *)1;
	for (int i = 0; i < launches; i++)
		if (tu_launch(&tu_stub_mm, s) != cudaSuccess)
			return (void *)1;
	return NULL;
}

static long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	cr_assert_not_null(f);
	char line[256];
	long v = -1;
	size_t kl = strlen(key);
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, key, kl))
			v = strtol(line + kl, NULL, 10);
	fclose(f);
	return v;
}

Test(simcuda_cupti, staging_memory_bounded_under_a_launch_storm, .timeout = 120)
{
	unsetenv("SIMCUDA_TRUTH"); /* the truth file is not what is measured */
	setenv("SIMCUDA_LAUNCH_NS", "0", 1);
	setenv("SIMCUDA_API_NS", "0", 1);
	setenv("SIMCUDA_LAUNCH_LATENCY_NS", "0", 1);
	setenv("SIMCUDA_EXEC_NS", "1000000", 1); /* 1 ms kernels: the GPU falls far behind */
	/* pinned: the launch queue unbounded, else back-pressure (queue_depth,
	 * 1024 by default) keeps the GPU at most 1024 ops behind and the device
	 * buffer never fills — this test is about CUPTI's staging */
	setenv("SIMCUDA_QUEUE_DEPTH", "0", 1);
	setenv("SIMCUDA_CUPTI_API_OVERHEAD_NS", "0", 1);
	setenv("SIMCUDA_CUPTI_LAUNCH_OVERHEAD_NS", "0", 1);
	cr_assert_eq(cuptiActivityRegisterCallbacks(storm_request, storm_complete), CUPTI_SUCCESS);
	CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME,
				      CUPTI_ACTIVITY_KIND_DRIVER};
	for (size_t i = 0; i < 3; i++)
		cr_assert_eq(cuptiActivityEnable(kinds[i]), CUPTI_SUCCESS);
	int cnt;
	cr_assert_eq(cudaGetDeviceCount(&cnt), cudaSuccess);
	/* sanitizer builds: a smaller storm, and no RSS bound (shadow memory) */
	int sanitized = getenv("GP_SAN") && *getenv("GP_SAN");
	int launches = sanitized ? STORM_LAUNCHES / 20 : STORM_LAUNCHES;
	long rss0 = status_kb("VmRSS:");
	pthread_t t[STORM_THREADS];
	for (int i = 0; i < STORM_THREADS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, storm_thread, &launches), 0);
	for (int i = 0; i < STORM_THREADS; i++) {
		void *rv;
		pthread_join(t[i], &rv);
		cr_assert_null(rv);
	}
	long hwm = status_kb("VmHWM:");
	cr_assert_eq(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
	size_t dropped = 0;
	cr_assert_eq(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), CUPTI_SUCCESS);
	size_t all = (size_t)STORM_THREADS * (size_t)launches;
	size_t seen = atomic_load(&g_storm_recs) + dropped;
	/* kernel, runtime, driver a launch; a few records for the device count
	 * and the stream creations */
	cr_expect(seen >= 3 * all && seen <= 3 * all + 64, "every record delivered or counted: %zu", seen);
	cr_expect_leq(dropped, all, "only kernel records dropped: host threads wait instead");
	/* 320k launches make 320k kernel and 640k API records: ~150 MB staged
	 * unbounded. The device buffer holds 100k kernel records (~25 MB), host
	 * staging 64k API records (~7 MB), the rest goes to (freed) client
	 * buffers of 1 MB, one per lane */
	if (!sanitized) {
		cr_expect_lt(hwm - rss0, 96 * 1024, "peak RSS grew %ld kB", hwm - rss0);
		cr_expect_gt(dropped, 0u, "kernels beyond the device buffer dropped");
	}
	cr_log_info("storm: RSS %ld kB -> peak %ld kB, %zu dropped, %zu delivered", rss0, hwm, dropped,
		    atomic_load(&g_storm_recs));
}

/* ---- the cost-model keys -------------------------------------------------------------- */

Test(simcuda_cupti_config, keys_parse_with_their_signs)
{
	struct sim_config c;
	char err[256];
	sim_config_defaults(&c);
	cr_expect_eq(c.cupti_delivery_delay_ns, 1000000000u);
	cr_expect_eq(c.cupti_buffer_records, 100000u);
	cr_expect_eq(c.cupti_api_overhead_ns, 500u);
	cr_expect_eq(c.cupti_launch_overhead_ns, 2000u);
	cr_assert_eq(sim_config_parse(&c,
				      "cupti_clock_offset_ns -2500\ncupti_clock_drift_ppm -0.5\n"
				      "cupti_delivery_delay_ns 0\ncupti_buffer_records 7\n",
				      "t", err, sizeof err),
		     0, "%s", err);
	cr_expect_eq(c.cupti_clock_offset_ns, -2500);
	cr_expect(fabs(c.cupti_clock_drift_ppm + 0.5) < 1e-12);
	cr_expect_eq(c.cupti_delivery_delay_ns, 0u);
	cr_expect_eq(c.cupti_buffer_records, 7u);
	cr_expect_eq(sim_config_parse(&c, "cupti_buffer_records -1\n", "t", err, sizeof err), -1);
	cr_expect_eq(sim_config_parse(&c, "cupti_clock_drift_ppm nan\n", "t", err, sizeof err), -1);
	sim_config_free(&c);
}

/* ---- the truth's record of CUPTI's switches --------------------------------------- */

/* The value of "key": in a truth line, or -1. */
static long long line_num(const char *line, const char *key)
{
	char k[40];
	snprintf(k, sizeof k, "\"%s\":", key);
	const char *p = strstr(line, k);
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

Test(simcuda_cupti, truth_says_when_each_switch_flipped)
{
	/* switched on before the driver started (told at its start), then a
	 * cbid switch, a launch, the kind off, a launch: every flip is a
	 * cupti_kind line, on the safe side of the calls around it */
	cr_assert_eq(cuptiActivityRegisterCallbacks(tu_request, tu_complete), CUPTI_SUCCESS);
	cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
	int cnt;
	cr_assert_eq(cudaGetDeviceCount(&cnt), cudaSuccess);
	cr_assert_eq(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1),
		     CUPTI_SUCCESS);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	cr_assert_eq(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
	cr_assert_eq(tu_launch(&tu_stub_other, NULL), cudaSuccess);
	cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
	cr_assert_eq(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
	cr_assert_eq(cudaDeviceReset(), cudaSuccess); /* flushes the truth */
	FILE *f = fopen(tu_truth_path, "r");
	cr_assert_not_null(f);
	char line[512];
	long long k_on = -1, k_off = -1, cb_on = -1, first_start = -1;
	long long l_start[2] = {-1, -1}, l_rec[2] = {-1, -1}, l_corr[2] = {-1, -1};
	int launches = 0, apis = 0;
	while (fgets(line, sizeof line, f)) {
		if (strstr(line, "\"type\":\"cupti_kind\"")) {
			if (strstr(line, "\"kind\":\"CONCURRENT_KERNEL\"") && line_num(line, "cbid") < 0)
				*(line_num(line, "on") ? &k_on : &k_off) = line_num(line, "t");
			if (strstr(line, "\"kind\":\"RUNTIME\"") &&
			    line_num(line, "cbid") == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 &&
			    line_num(line, "on") == 1)
				cb_on = line_num(line, "t");
		} else if (strstr(line, "\"type\":\"api\"")) {
			apis++;
			cr_expect_geq(line_num(line, "rec"), line_num(line, "end"), "rec after the call's end: %s", line);
			if (first_start < 0)
				first_start = line_num(line, "start");
			if (strstr(line, "\"name\":\"cudaLaunchKernel\"") && launches < 2) {
				l_start[launches] = line_num(line, "start");
				l_rec[launches] = line_num(line, "rec");
				l_corr[launches] = line_num(line, "corr");
				launches++;
			}
		}
	}
	fclose(f);
	unlink(tu_truth_path);
	cr_assert_eq(launches, 2);
	cr_assert_gt(apis, 2);
	cr_expect(k_on >= 0 && k_on <= first_start, "kind on (%lld) told at driver start, before the first call (%lld)",
		  k_on, first_start);
	cr_expect(cb_on >= 0 && cb_on <= l_start[0], "cbid on (%lld) before the first launch (%lld)", cb_on,
		  l_start[0]);
	cr_expect(l_rec[0] <= k_off && k_off <= l_start[1], "kind off (%lld) between the launches (%lld..%lld)", k_off,
		  l_rec[0], l_start[1]);
	cr_expect_not_null(tu_find(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, (uint32_t)l_corr[0]), "first kernel recorded");
	cr_expect_null(tu_find(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, (uint32_t)l_corr[1]), "second not");
	cr_expect_not_null(tu_find(CUPTI_ACTIVITY_KIND_RUNTIME, (uint32_t)l_corr[1]), "its launch call is");
}

/* ---- the driver's thread; SYSTEM thread ids ----------------------------------------- */
/* Real CUDA starts threads of its own at initialisation: so does simcuda,
 * one, idle, with every signal blocked so that the program's signals still
 * reach the program's threads (docs/simcuda.md "The driver's thread"). */
Test(simcuda_cupti, driver_thread_starts_with_the_driver)
{
	cr_assert_eq(thread_named("simcuda-driver"), 0, "no driver thread before the first call");
	cr_assert_eq(cudaFree(NULL), cudaSuccess);
	long tid = thread_named("simcuda-driver");
	cr_assert_gt(tid, 0, "one thread named simcuda-driver after driver start (%ld)", tid);
	cr_assert_eq(cudaFree(NULL), cudaSuccess);
	cr_assert_eq(thread_named("simcuda-driver"), tid, "still the one thread after another call");
	char p[300], line[256];
	snprintf(p, sizeof p, "/proc/self/task/%ld/status", tid);
	FILE *f = fopen(p, "r");
	cr_assert_not_null(f);
	unsigned long long blk = 0;
	int seen = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "SigBlk: %llx", &blk) == 1)
			seen = 1;
	fclose(f);
	cr_assert(seen, "SigBlk in %s", p);
	int sigs[] = {SIGINT, SIGTERM, SIGALRM, SIGUSR1, SIGUSR2, SIGCHLD, SIGPIPE, SIGHUP};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		cr_expect(blk >> (sigs[i] - 1) & 1, "signal %d blocked in the driver thread (SigBlk %llx)", sigs[i], blk);
}

/* The newest RUNTIME record's threadId, 0 if none. */
static uint32_t last_api_tid(void)
{
	uint32_t t = 0;
	for (size_t i = 0; i < tu.n; i++)
		if (tu.v[i].kind == CUPTI_ACTIVITY_KIND_RUNTIME)
			t = tu.v[i].u.a.threadId;
	return t;
}

/* SYSTEM ids are asked of the kernel once per thread and kept: each thread's
 * records carry its own, and a fork child's its own, not its parent's. */
Test(simcuda_cupti, system_thread_ids_per_thread_and_after_fork)
{
	cr_assert_eq(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), CUPTI_SUCCESS);
	tu_cupti_start(0);
	cr_assert_eq(cudaFree(NULL), cudaSuccess);
	cr_assert_eq(cudaFree(NULL), cudaSuccess);
	tu_flush();
	cr_assert_eq(last_api_tid(), (uint32_t)syscall(SYS_gettid), "the parent's records: its kernel tid");
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		tu.n = 0;
		int bad = cudaFree(NULL) != cudaSuccess;
		bad |= cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != CUPTI_SUCCESS;
		bad |= last_api_tid() != (uint32_t)syscall(SYS_gettid);
		_exit(bad);
	}
	int st = 0;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the fork child's records carry the child's tid (status %d)",
		  st);
}
