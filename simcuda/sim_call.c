/*
 * sim_call.c — the frame around every runtime API call, and the simulated
 * driver's start and exit.
 *
 * A call enters (sim_call_enter: the driver starts on first use,
 * correlation ids are drawn, the subscriber's ENTER callbacks run, runtime
 * then driver, then CUPTI's instrumentation overhead is spent) and
 * leaves (sim_call_exit: DRIVER then RUNTIME activity records, the truth "api"
 * line with "rec", the instant after CUPTI's last look at its switches for
 * the call, EXIT callbacks, the thread's last error). Driver start, once per
 * process: load the cost model (SIMCUDA_CONFIG, SIMCUDA_<KEY>), open the
 * truth file, register the clock-rebase hook and the exit handler, load the
 * CUPTI client named by CUDA_INJECTION64_PATH and run its
 * InitializeInjection, then announce the primary context; start the
 * driver's own (idle) thread, as real CUDA starts threads when it
 * initialises.
 *
 * Threads: application threads, any number. Driver start: g_init_state 0 =
 * not started, 1 = starting, 2 = done; it is set under g_init_mx; the
 * starting thread (t_initializing) passes through so InitializeInjection may
 * call back into the runtime, other threads wait on the lock. The acquire
 * load in sim_call_enter_sym pairs with the release store at the end of
 * sim_driver_start. g_cfg is written only there, before that store.
 * The driver's thread (sim_driver_thread_main) waits on g_drv.stop until
 * the library's exit handler posts it, and touches nothing else.
 */
#include <dlfcn.h>
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_cudart.h"

struct sim_config g_cfg;
__thread cudaError_t t_last_error = cudaSuccess;

/* The primary context exists: set at driver start, cleared at exit. Relaxed:
 * only the exit handler and cudaDeviceReset read it. */
static _Atomic int g_ctx_alive;

static pthread_mutex_t g_init_mx = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_init_state = 0;
static __thread int t_initializing = 0;

static void sim_driver_start(void);
static void sim_driver_thread_stop(void);

/* ---- API call frame --------------------------------------------------------------- */

static void sim_api_callback(struct sim_call *c, CUpti_ApiCallbackSite site, CUpti_CallbackDomain dom,
			     cudaError_t *ret)
{
	CUpti_CallbackId cbid = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? c->cbid : c->drv_cbid;
	if (!simcupti_callback_enabled(dom, cbid))
		return;
	const char *fname = c->name;
	if (dom == CUPTI_CB_DOMAIN_DRIVER_API &&
	    cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &fname) != CUPTI_SUCCESS)
		fname = "cu?";
	CUpti_CallbackData d;
	memset(&d, 0, sizeof d);
	d.callbackSite = site;
	d.functionName = fname;
	d.functionParams = NULL; /* not simulated: see docs/simcuda.md */
	d.functionReturnValue = ret;
	d.symbolName = c->symbol;
	d.context = simcupti_context();
	d.contextUid = SIM_CONTEXT_ID;
	d.correlationData = &c->corr_data;
	d.correlationId = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? c->corr : c->drv_corr;
	simcupti_callback(dom, cbid, &d);
}

/*
 * CUPTI's instrumentation inside the call, after its enter callbacks:
 * cupti_api_overhead_ns for each layer (runtime, driver) whose API record
 * will be produced (kind and per-cbid switches), plus cupti_launch_overhead_ns
 * for a kernel launch while kernel records are on, plus
 * cupti_extcorr_overhead_ns for each external-correlation record those API
 * records bring (ids pushed on this thread, EXTERNAL_CORRELATION on). Really spent (busy), then
 * written as an OVERHEAD record, and to the truth when the call exits (after
 * its end: the simulator's own writing is no call's time, which a profiler
 * timing the call would count as CUPTI's); the call's work begins after it
 * (c->start).
 */
static void sim_call_overhead(struct sim_call *c)
{
	int rt = simcupti_api_traced(CUPTI_ACTIVITY_KIND_RUNTIME, c->cbid);
	int drv = c->drv_cbid && simcupti_api_traced(CUPTI_ACTIVITY_KIND_DRIVER, c->drv_cbid);
	uint64_t ns = (uint64_t)(rt + drv) * (g_cfg.cupti_api_overhead_ns +
					      (uint64_t)simcupti_ext_records() * g_cfg.cupti_extcorr_overhead_ns);
	if (c->symbol && (simcupti_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ||
			  simcupti_enabled(CUPTI_ACTIVITY_KIND_KERNEL)))
		ns += g_cfg.cupti_launch_overhead_ns;
	if (!ns)
		return;
	uint64_t t0 = simcupti_now();
	sim_timeline_spin_until(t0 + ns);
	uint64_t t1 = simcupti_now();
	uint32_t corr = rt || !drv ? c->corr : c->drv_corr;
	uint32_t tid = simcupti_thread_id();
	simcupti_overhead(tid, CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION, t0, t1, corr);
	c->ovh_start = t0;
	c->ovh_end = t1;
	c->ovh_corr = corr;
	c->ovh_tid = tid;
	c->start = t1;
}

/* Enter a runtime call: driver start, correlation ids, enter callbacks.
 * symbol: the kernel name for launches (callback data), else NULL. */
void sim_call_enter_sym(struct sim_call *c, const char *name, CUpti_CallbackId cbid,
			CUpti_CallbackId drv_cbid, const char *symbol)
{
	uint64_t entry = simcupti_now();
	if (atomic_load_explicit(&g_init_state, memory_order_acquire) != 2 && !t_initializing)
		sim_driver_start();
	memset(c, 0, sizeof *c);
	c->entry = entry;
	c->name = name;
	c->cbid = cbid;
	c->drv_cbid = drv_cbid;
	c->symbol = symbol;
	c->corr = simcupti_next_corr();
	sim_api_callback(c, CUPTI_API_ENTER, CUPTI_CB_DOMAIN_RUNTIME_API, NULL);
	c->start = simcupti_now();
	if (drv_cbid) {
		c->drv_corr = simcupti_next_corr();
		sim_api_callback(c, CUPTI_API_ENTER, CUPTI_CB_DOMAIN_DRIVER_API, NULL);
		c->drv_start = simcupti_now();
	}
	c->api_start = c->start;
	sim_call_overhead(c);
}

void sim_call_enter(struct sim_call *c, const char *name, CUpti_CallbackId cbid,
		    CUpti_CallbackId drv_cbid)
{
	sim_call_enter_sym(c, name, cbid, drv_cbid, NULL);
}

/*
 * Leave a runtime call that ends at `end` (0 = now): API records, truth line,
 * exit callbacks, last error. Returns ret.
 */
cudaError_t sim_call_exit(struct sim_call *c, cudaError_t ret, uint64_t end)
{
	if (!end)
		end = simcupti_now();
	/* CUPTI's time writing each layer's records after the call's end
	 * timestamp, and simcuda's writing the overhead line: on CUPTI's
	 * account, outside the records' interval (truth: cupti_write_*) */
	uint64_t w0, write_drv = 0, write_rt = 0;
	if (c->drv_cbid) {
		w0 = simcupti_now();
		if (simcupti_emit_api(CUPTI_ACTIVITY_KIND_DRIVER, c->drv_cbid, c->drv_start, end, c->drv_corr,
				      ret == cudaSuccess ? 0 : 1))
			write_drv = simcupti_now() - w0;
		sim_api_callback(c, CUPTI_API_EXIT, CUPTI_CB_DOMAIN_DRIVER_API, &ret);
	}
	w0 = simcupti_now();
	int rt_written =
		simcupti_emit_api(CUPTI_ACTIVITY_KIND_RUNTIME, c->cbid, c->api_start, end, c->corr, (uint32_t)ret);
	/* CUPTI's last look at its switches for this call: what it decided
	 * (overhead, GPU and sync records, API records) lies in api_start..rec
	 * (truth "rec"; the checkers hold it against the "cupti_kind" lines) */
	uint64_t rec = simcupti_now();
	if (c->ovh_end)
		sim_truth_overhead(c->ovh_tid, c->ovh_start, c->ovh_end, c->ovh_corr);
	uint64_t w1 = simcupti_now();
	if (rt_written)
		write_rt = w1 - w0;
	else if (write_drv)
		write_drv += w1 - w0;
	sim_truth_api(c->name, simcupti_thread_id(), c->api_start, end, rec, c->corr, write_rt, write_drv);
	sim_api_callback(c, CUPTI_API_EXIT, CUPTI_CB_DOMAIN_RUNTIME_API, &ret);
	if (ret != cudaSuccess && ret != cudaErrorNotReady)
		t_last_error = ret;
	/* simcuda's own time in the call outside [api_start, end] */
	uint64_t ret_t = simcupti_now();
	sim_truth_outside_add(c->name, (c->api_start > c->entry ? c->api_start - c->entry : 0) +
					       (ret_t > end ? ret_t - end : 0));
	return ret;
}

/* ---- driver start / exit ------------------------------------------------------------ */

void sim_call_context_event(CUpti_CallbackId cbid)
{
	CUpti_ResourceData rd;
	memset(&rd, 0, sizeof rd);
	rd.context = simcupti_context();
	simcupti_callback(CUPTI_CB_DOMAIN_RESOURCE, cbid, &rd);
}

static void sim_at_exit(void)
{
	/* not when exit() came from a signal handler that interrupted this
	 * thread under the CUPTI lock: the event would wait for it for ever */
	if (atomic_exchange_explicit(&g_ctx_alive, 0, memory_order_relaxed) && simcupti_lock_settles()) {
		sim_call_context_event(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	}
	sim_truth_flush();
	sim_driver_thread_stop(); /* before a dlclose unmaps its code */
}

/* atexit(sim_at_exit), tied to this library: glibc's atexit (libc_nonshared)
 * is __cxa_atexit(f, NULL, __dso_handle), so the handler runs when the library
 * is dlclosed, before its code is unmapped. Spelled out because a sanitizer
 * runtime linked in first (TSan) exports its own atexit that registers with
 * no DSO: a dlclosed simcuda's handler would then be called at exit, into
 * unmapped code (rel_dlmain crashed so under TSan). */
extern void *__dso_handle;
int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

static void sim_at_exit_dso(void *arg)
{
	(void)arg;
	sim_at_exit();
}

/* The truth's gpu_clock line: CUPTI's clock error as it applies now. */
static void sim_truth_clock_now(void)
{
	int64_t off;
	double ppm;
	uint64_t origin;
	simcupti_clock(&off, &ppm, &origin);
	sim_truth_gpu_clock(off, ppm, origin);
}

/* CUPTI's rebase hook: the timeline follows the new clock, and so does the
 * origin of CUPTI's drift, which the truth states again. */
static void sim_rebase(int64_t delta)
{
	sim_timeline_rebase(delta);
	sim_truth_clock_now();
}

static void sim_die_config(const char *msg)
{
	fprintf(stderr, "simcuda: bad cost model: %s\n", msg);
	fflush(stderr);
	_exit(2);
}

/*
 * The driver's own thread. Real CUDA starts threads of its own when it
 * initialises (a program that creates none has more than one once CUDA is
 * up; a host callback's thread comes on top), so no CUDA program runs
 * single-threaded: glibc's locks then take their atomic path (its
 * single-thread shortcut is off for good). Without one, a bare simcuda
 * program would pay less per call than with any library that starts a
 * thread, which a benchmark would charge to that library (a profiler's
 * writer thread: about 60 ns per launch of launch_bound, all of it simcuda's
 * mutexes turned atomic). It waits on its own condition, all signals
 * blocked (signals sent to the process go to the program's threads, as
 * before), and does nothing: simcuda models the driver's cost in the
 * calling thread. It ends with the library (sim_at_exit: at exit, or at a
 * dlclose that unloads the runtime, before its code is unmapped): it waits
 * on a semaphore, not a lock, so that the stop never waits for it; a fork
 * child has none (g_drv.running cleared there).
 */
static struct {
	sem_t stop;           /* posted once to end the thread */
	pthread_t thread;
	_Atomic int running;  /* the thread exists and nobody stopped it yet */
	pid_t pid;            /* the process that started it */
} g_drv;

static void *sim_driver_thread_main(void *arg)
{
	(void)arg;
	while (sem_wait(&g_drv.stop) != 0 && errno == EINTR)
		;
	return NULL;
}

static void sim_driver_thread_atfork_child(void)
{
	/* the thread is the parent's; its semaphore made afresh */
	sem_init(&g_drv.stop, 0, 0);
	atomic_store_explicit(&g_drv.running, 0, memory_order_relaxed);
}

/* Driver start (under g_init_mx, once per loaded library). */
static void sim_driver_thread_start(void)
{
	if (sem_init(&g_drv.stop, 0, 0) != 0)
		return;
	/* unregistered by glibc when this library is unloaded */
	pthread_atfork(NULL, NULL, sim_driver_thread_atfork_child);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread inherits the full mask */
	if (pthread_create(&g_drv.thread, NULL, sim_driver_thread_main, NULL) == 0) {
		pthread_setname_np(g_drv.thread, "simcuda-driver");
		g_drv.pid = getpid();
		atomic_store_explicit(&g_drv.running, 1, memory_order_release);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* At exit or unload: the thread told to end (sem_post: async-signal-safe,
 * takes no lock the thread could hold) and joined, once. An exit() from a
 * signal handler that interrupted the start before the thread was noted
 * leaves it be (the process is ending), and so does a vfork child's exit()
 * (another pid in the parent's memory: the thread is the parent's). */
static void sim_driver_thread_stop(void)
{
	if (!atomic_load_explicit(&g_drv.running, memory_order_acquire) || getpid() != g_drv.pid ||
	    !atomic_exchange_explicit(&g_drv.running, 0, memory_order_acq_rel))
		return;
	sem_post(&g_drv.stop);
	pthread_join(g_drv.thread, NULL);
}

static void sim_driver_start(void)
{
	pthread_mutex_lock(&g_init_mx);
	if (atomic_load_explicit(&g_init_state, memory_order_relaxed) == 2) {
		pthread_mutex_unlock(&g_init_mx);
		return;
	}
	t_initializing = 1;
	atomic_store_explicit(&g_init_state, 1, memory_order_relaxed);
	char err[512];
	if (sim_config_load(&g_cfg, getenv("SIMCUDA_CONFIG"), err, sizeof err) < 0)
		sim_die_config(err);
	const char *tp = getenv("SIMCUDA_TRUTH");
	if (tp && *tp) {
		int rc = sim_truth_open(tp);
		if (rc < 0) {
			fprintf(stderr, "simcuda: SIMCUDA_TRUTH=%s: cannot open: %s\n", tp, strerror(-rc));
			_exit(2);
		}
	}
	struct simcupti_params cp = {.delivery_delay_ns = g_cfg.cupti_delivery_delay_ns,
				     .clock_offset_ns = g_cfg.cupti_clock_offset_ns,
				     .clock_drift_ppm = g_cfg.cupti_clock_drift_ppm,
				     .buffer_records = g_cfg.cupti_buffer_records,
				     .no_overhead_kind = !g_cfg.cupti_overhead_records};
	simcupti_configure(&cp); /* before the injection enables anything */
	sim_driver_thread_start();
	sim_truth_clock_now();
	sim_truth_cupti_config(g_cfg.cupti_overhead_records != 0);
	for (int d = 0; d < sim_timeline_device_count(); d++) /* the legacy streams' devices */
		sim_truth_stream(SIM_LEGACY_STREAM_ID + (uint32_t)d, d);
	simcupti_set_rebase_hook(sim_rebase);
	simcupti_set_switch_hook(sim_truth_cupti_kind); /* before the injection switches anything */
	__cxa_atexit(sim_at_exit_dso, NULL, &__dso_handle);
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	if (inj && *inj) {
		void *h = dlopen(inj, RTLD_NOW | RTLD_GLOBAL);
		if (!h) {
			fprintf(stderr, "simcuda: CUDA_INJECTION64_PATH=%s: %s\n", inj, dlerror());
		} else {
			int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
			if (!init)
				fprintf(stderr, "simcuda: %s has no InitializeInjection\n", inj);
			else
				init();
		}
	}
	atomic_store_explicit(&g_ctx_alive, 1, memory_order_relaxed);
	sim_call_context_event(CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	t_initializing = 0;
	atomic_store_explicit(&g_init_state, 2, memory_order_release);
	pthread_mutex_unlock(&g_init_mx);
}

int sim_call_context_alive(void)
{
	return atomic_load_explicit(&g_ctx_alive, memory_order_relaxed);
}
