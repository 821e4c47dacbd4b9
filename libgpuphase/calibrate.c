/*
 * calibrate.c — the start-up calibration of CUPTI's own cost per traced call
 * (docs/performance.md "CUPTI's own cost"), which the report takes out of
 * the phases when the trace has no per-call INSTRUMENTATION overhead records
 * (docs/metrics.md §3). Measured once, on the real CUDA path:
 *
 *  - per layer: a burst of cudaDriverGetVersion (a getter: no context, no GPU
 *    work, no error state) timed with neither its runtime nor its driver
 *    cbid traced, with the runtime one, and with both — the per-cbid
 *    switches of CUPTI 13 (cuptiActivityEnableRuntimeApi / DriverApi), so
 *    nothing else the program does is traced differently meanwhile —
 *    configurations interleaved, lower quartiles (gp_calib_floor): rt =
 *    T(runtime) − T(none), drv =
 *    T(both) − T(runtime);
 *  - per launch: the library's own empty kernel (gpuphase_calibrate,
 *    calibrate_kernel.cu, registered with the program's runtime from a fat
 *    binary embedded here) launched on a private non-blocking stream with
 *    CUPTI's kernel records on and off: launch = T(on) − T(off), lower
 *    quartiles. GPUPHASE_LOG=debug prints every timing.
 *
 * When: once, inside the first hooked kernel launch made while capture is
 * on, on the program's thread, before that launch is made: the program has
 * its context and current device by then and is inside a CUDA call already.
 * Only with GPUPHASE_CUPTI_CALIBRATE=1, or =auto (the default) when CUPTI
 * refused its OVERHEAD records; never without preload hooks (injection
 * only), in an attach session or a fork child, and not while that launch's
 * stream is capturing a graph (a later launch is used); the per-launch part
 * not while the program has a CUDA error pending (a failed call of ours would
 * show in its cudaGetLastError). Cost: about 100 cheap calls, 33 empty kernel
 * launches, a stream create and destroy and the first load of a 27 KB module
 * (registered once, for the process's life) — well under a millisecond on an
 * H200 besides the module load (not measured on a GPU yet); bounded by
 * GP_CALIB_BUDGET_NS (what is measured by then is kept). While kernel records are off (the off launches, some tens of µs),
 * other threads' hooked launches wait for the calibration; a kernel another
 * thread launches through the driver alone in that time loses its GPU
 * record.
 *
 * Threads: any application thread enters gp_calibrate_launch from a launch
 * hook; one runs the calibration (CAS on gp_calib_state), the others wait
 * for it to end. The library's own calls carry the external correlation id
 * GP_CALIB_EXT_ID and the kernel is GP_CALIB_KERNEL: the report leaves them
 * out. Errors end in a GP_STATUS_CALIBRATION record (value −errno, detail);
 * nothing here aborts or leaves CUPTI's kinds changed.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cupti.h>

#include "gp_collector.h"
#include "gp_lib.h"
#include "gp_calib_fatbin.h"

#define GP_CALIB_ROUNDS 4          /* configurations interleaved this often   */
#define GP_CALIB_CALLS 8           /* calls per configuration and round       */
#define GP_CALIB_LAUNCHES 8        /* launches per configuration and half     */
#define GP_CALIB_BUDGET_NS 20000000 /* give up measuring after 20 ms (a cap) */

enum { GP_CALIB_OFF = 0, GP_CALIB_ARMED, GP_CALIB_RUNNING, GP_CALIB_DONE };
int gp_calib_state; /* atomic; hooks read it relaxed (GP_UNLIKELY branch) */

/* The fat binary wrapper nvcc would emit for calibrate_kernel.cu, and the
 * host-side handle the kernel is registered under (its address only). */
static const struct {
	int magic, version;
	const void *data;
	void *filename_or_fatbins;
} gp_calib_wrapper = { 0x466243b1, 1, gp_calib_fatbin, NULL };
static const char gp_calib_stub = 0;

void gp_calibrate_arm(int attach, int forked)
{
	if (gp_cfg.cupti_calibrate > 0 && (!gp_state_preloaded || attach || forked)) /* asked for, cannot */
		gp_state_status(GP_STATUS_CALIBRATION, -ENOTSUP,
			      !gp_state_preloaded ? "no runtime hooks (injection only): no launch to calibrate in"
						: "not in an attach session or a fork child");
	if (!gp_cfg.cupti_calibrate || !gp_state_preloaded || attach || forked)
		return;
	__atomic_store_n(&gp_calib_state, GP_CALIB_ARMED, __ATOMIC_RELEASE);
}

void gp_calibrate_forget(void)
{
	__atomic_store_n(&gp_calib_state, GP_CALIB_OFF, __ATOMIC_RELAXED);
}

static int gp_calib_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The lower quartile: the time of a call not slowed by anything else. What
 * slows a call (another thread on the core, a device thread's completion
 * work under a shared lock, a preemption) only adds time, in steps, and on a
 * busy host to half the calls or more, where a median jumps between those
 * steps from run to run; the calls without such a step sit in a narrow band
 * at the bottom, which the lower quartile reads as long as n/4 + 1 of them
 * ran clear. */
static uint64_t gp_calib_floor(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, gp_calib_cmp);
	return v[n / 4];
}

/* GPUPHASE_LOG=debug: one configuration's timings, in the order taken */
static void gp_calib_log(const char *what, const uint64_t *v, size_t n)
{
	if (gp_cfg.log_level < GP_LOG_DEBUG)
		return;
	char line[640];
	size_t at = 0;
	for (size_t i = 0; i < n && at < sizeof line - 24; i++)
		at += (size_t)snprintf(line + at, sizeof line - at, " %llu", (unsigned long long)v[i]);
	gp_log(GP_LOG_DEBUG, "CUPTI cost calibration: %s, ns:%s", what, line);
}

/* a - b, 0 when noise makes it negative */
static uint32_t gp_calib_diff(uint64_t a, uint64_t b)
{
	return a > b ? (uint32_t)(a - b < UINT32_MAX ? a - b : UINT32_MAX) : 0;
}

/* Per layer: cudaDriverGetVersion with (runtime, driver) traced (0,0),
 * (1,0), (1,1). Returns 0 with rt/drv set, or -errno. */
static int gp_calib_api(uint64_t deadline, uint32_t *rt, uint32_t *drv, uint16_t *samples)
{
	static void *slot;
	cudaError_t (*fn)(int *) = (cudaError_t (*)(int *))gp_resolve_real("cudaDriverGetVersion", &slot);
	if (!fn)
		return -ENOENT;
	const unsigned rcb = CUPTI_RUNTIME_TRACE_CBID_cudaDriverGetVersion_v3020;
	const unsigned dcb = CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion;
	int rt0 = gp_cupti_api_traced(0, rcb), drv0 = gp_cupti_api_traced(1, dcb);
	static uint64_t t[3][GP_CALIB_ROUNDS * GP_CALIB_CALLS];
	size_t n[3] = { 0, 0, 0 };
	int rc = 0, v;
	for (int r = 0; r < GP_CALIB_ROUNDS && !rc; r++)
		for (int i = 0; i < 3 && !rc; i++) {
			int c = (r + i) % 3; /* rotate the order round by round */
			if ((rc = gp_cupti_api_trace(0, rcb, c >= 1)) || (rc = gp_cupti_api_trace(1, dcb, c == 2)))
				break;
			for (int k = 0; k < GP_CALIB_CALLS; k++) {
				uint64_t a = gp_now();
				fn(&v);
				t[c][n[c]++] = gp_now() - a;
			}
			if (gp_now() > deadline)
				rc = -ETIME;
		}
	/* back to the capture's mode, whatever happened */
	gp_cupti_api_trace(0, rcb, rt0);
	gp_cupti_api_trace(1, dcb, drv0);
	if (rc && (rc != -ETIME || !n[0] || !n[1] || !n[2]))
		return rc;
	gp_calib_log("a call, neither layer traced", t[0], n[0]);
	gp_calib_log("a call, runtime traced", t[1], n[1]);
	gp_calib_log("a call, both layers traced", t[2], n[2]);
	uint64_t none = gp_calib_floor(t[0], n[0]), one = gp_calib_floor(t[1], n[1]),
		 two = gp_calib_floor(t[2], n[2]);
	*rt = gp_calib_diff(one, none);
	*drv = gp_calib_diff(two, one);
	*samples = (uint16_t)n[0];
	return 0;
}

/* Per launch: the empty kernel with kernel records on, off, off, on. */
static int gp_calib_launch(uint32_t *launch, uint16_t *samples)
{
	if (!GP_CALIB_FATBIN_OK)
		return -ENOEXEC;
	static void *s_reg, *s_end, *s_fun, *s_create, *s_launch, *s_destroy;
	void **(*reg)(void *) = (void **(*)(void *))gp_resolve_real("__cudaRegisterFatBinary", &s_reg);
	void (*reg_end)(void **) = (void (*)(void **))gp_resolve_real("__cudaRegisterFatBinaryEnd", &s_end);
	void (*reg_fun)(void **, const char *, char *, const char *, int, uint3 *, uint3 *, dim3 *, dim3 *, int *) =
		(void (*)(void **, const char *, char *, const char *, int, uint3 *, uint3 *, dim3 *, dim3 *,
			  int *))gp_resolve_real("__cudaRegisterFunction", &s_fun);
	cudaError_t (*create)(cudaStream_t *, unsigned) =
		(cudaError_t (*)(cudaStream_t *, unsigned))gp_resolve_real("cudaStreamCreateWithFlags", &s_create);
	cudaError_t (*launch_fn)(const void *, dim3, dim3, void **, size_t, cudaStream_t) =
		(cudaError_t (*)(const void *, dim3, dim3, void **, size_t, cudaStream_t))gp_resolve_real(
			"cudaLaunchKernel", &s_launch);
	cudaError_t (*destroy)(cudaStream_t) = (cudaError_t (*)(cudaStream_t))gp_resolve_real("cudaStreamDestroy",
											       &s_destroy);
	if (!reg || !reg_fun || !create || !launch_fn || !destroy)
		return -ENOENT;
	void **h = reg((void *)&gp_calib_wrapper);
	if (!h)
		return -ENOEXEC;
	reg_fun(h, &gp_calib_stub, (char *)GP_CALIB_KERNEL, GP_CALIB_KERNEL, -1, NULL, NULL, NULL, NULL, NULL);
	if (reg_end)
		reg_end(h);
	cudaStream_t st;
	if (create(&st, cudaStreamNonBlocking) != cudaSuccess)
		return -EIO;
	dim3 one = { 1, 1, 1 };
	void *args[1] = { NULL };
	int rc = 0;
	/* the first launch loads the module: not timed, nor in the budget */
	if (launch_fn(&gp_calib_stub, one, one, args, 0, st) != cudaSuccess)
		rc = -EIO;
	uint64_t deadline = gp_now() + GP_CALIB_BUDGET_NS;
	static uint64_t t[2][2 * GP_CALIB_LAUNCHES];
	size_t n[2] = { 0, 0 };
	static const int on[4] = { 1, 0, 0, 1 }; /* two switches of the kind */
	for (int half = 0; half < 4 && !rc; half++) {
		if (half == 1 || half == 3) {
			rc = gp_cupti_kernel_records(on[half]);
			if (rc)
				break;
		}
		for (int k = 0; k < GP_CALIB_LAUNCHES; k++) {
			uint64_t a = gp_now();
			cudaError_t e = launch_fn(&gp_calib_stub, one, one, args, 0, st);
			uint64_t b = gp_now();
			if (e != cudaSuccess) {
				rc = -EIO;
				break;
			}
			t[on[half]][n[on[half]]++] = b - a;
		}
		if (!rc && gp_now() > deadline && half < 3)
			rc = -ETIME;
	}
	gp_cupti_kernel_records(1); /* kernel records on again, whatever happened */
	destroy(st);                /* its kernels finish on their own */
	if (rc && (rc != -ETIME || !n[0] || !n[1]))
		return rc;
	gp_calib_log("a launch, kernel records off", t[0], n[0]);
	gp_calib_log("a launch, kernel records on", t[1], n[1]);
	*launch = gp_calib_diff(gp_calib_floor(t[1], n[1]), gp_calib_floor(t[0], n[0]));
	*samples = (uint16_t)n[1];
	return 0;
}

/* Is the launch's stream capturing a graph? The legacy default stream is
 * not asked (asking about it during another stream's capture is an error). */
static int gp_calib_capturing(const void *stream)
{
	static void *slot;
	cudaError_t (*fn)(cudaStream_t, enum cudaStreamCaptureStatus *) =
		(cudaError_t (*)(cudaStream_t, enum cudaStreamCaptureStatus *))gp_resolve_real("cudaStreamIsCapturing",
												&slot);
	if (!stream || stream == cudaStreamLegacy || !fn)
		return 0;
	enum cudaStreamCaptureStatus s = cudaStreamCaptureStatusNone;
	return fn((cudaStream_t)stream, &s) != cudaSuccess || s != cudaStreamCaptureStatusNone;
}

static void gp_calib_run(void)
{
	uint64_t t0 = gp_now(), deadline = t0 + GP_CALIB_BUDGET_NS;
	union gp_rec r;
	memset(&r, 0, sizeof r);
	r.calib.type = GP_REC_CALIBRATION;
	r.calib.tid = gp_state_tid();
	r.calib.start = t0;
	gp_cupti_push_id(GP_CALIB_EXT_ID); /* the report leaves these calls out */
	uint32_t rt = 0, drv = 0, launch = 0;
	uint16_t n_api = 0, n_launch = 0;
	int rc_api = gp_calib_api(deadline, &rt, &drv, &n_api);
	/* a failed call of ours sets the thread's last error, which the
	 * program reads: launch only when none of its own is pending, and
	 * take ours back */
	static void *s_peek, *s_get;
	cudaError_t (*peek)(void) = (cudaError_t (*)(void))gp_resolve_real("cudaPeekAtLastError", &s_peek);
	cudaError_t (*get)(void) = (cudaError_t (*)(void))gp_resolve_real("cudaGetLastError", &s_get);
	int rc_launch = !peek || !get ? -ENOENT : peek() != cudaSuccess ? -EBUSY : gp_calib_launch(&launch, &n_launch);
	if (rc_launch && rc_launch != -EBUSY && get)
		get();
	gp_cupti_pop();
	uint64_t t1 = gp_now();
	if (!rc_api) {
		r.calib.flags |= GP_CALIBF_API;
		r.calib.rt_ns = rt;
		r.calib.drv_ns = drv;
	}
	if (!rc_launch) {
		r.calib.flags |= GP_CALIBF_LAUNCH;
		r.calib.launch_ns = launch;
	}
	r.calib.samples = n_api > n_launch ? n_api : n_launch;
	r.calib.dur = (uint32_t)(t1 - t0 < UINT32_MAX ? t1 - t0 : UINT32_MAX);
	gp_state_emit1(&r);
	if (rc_api || rc_launch) {
		int rc = rc_api ? rc_api : rc_launch;
		const char *why = rc == -ENOSYS ? "this CUPTI cannot trace one cbid alone: per-layer cost not measured"
				  : rc == -ENOEXEC ? "no calibration kernel in this build: per-launch cost not measured"
				  : rc == -EBUSY   ? "the program had a CUDA error pending: per-launch cost not measured"
				  : rc == -ETIME   ? "calibration took too long: stopped"
						   : "a CUDA call of the calibration failed";
		gp_state_status(GP_STATUS_CALIBRATION, rc, why);
		gp_log(GP_LOG_INFO, "CUPTI cost calibration: %s (%d)", why, rc);
	}
	gp_log(GP_LOG_INFO, "CUPTI cost calibration: %u ns a runtime call, %u ns a driver call, %u ns more a launch "
			    "(%llu us)", rt, drv, launch, (unsigned long long)((t1 - t0) / 1000));
}

void gp_calibrate_launch(const void *stream)
{
	int s = __atomic_load_n(&gp_calib_state, __ATOMIC_ACQUIRE);
	if (s == GP_CALIB_RUNNING) { /* another thread is measuring: its off launches must not see ours */
		while (__atomic_load_n(&gp_calib_state, __ATOMIC_ACQUIRE) == GP_CALIB_RUNNING)
			sched_yield();
		return;
	}
	if (s != GP_CALIB_ARMED || !__atomic_load_n(&gp_window_on, __ATOMIC_RELAXED))
		return; /* nothing to do, or capture off: a later launch */
	if (gp_cfg.cupti_calibrate < 0 && gp_cupti_overhead_on()) {
		/* auto: CUPTI writes each call's own cost */
		__atomic_store_n(&gp_calib_state, GP_CALIB_DONE, __ATOMIC_RELEASE);
		return;
	}
	gp_tls.internal++;
	int capturing = gp_calib_capturing(stream);
	int expect = GP_CALIB_ARMED;
	if (!capturing && __atomic_compare_exchange_n(&gp_calib_state, &expect, GP_CALIB_RUNNING, 0, __ATOMIC_ACQ_REL,
						      __ATOMIC_ACQUIRE)) {
		gp_calib_run();
		__atomic_store_n(&gp_calib_state, GP_CALIB_DONE, __ATOMIC_RELEASE);
	}
	gp_tls.internal--;
	if (!capturing && expect == GP_CALIB_RUNNING)
		gp_calibrate_launch(stream); /* lost the race: wait for the winner */
}
