/*
 * lib.c — process life of libgpuphase.so, its top floor: constructor, lazy
 * start, exit flush, fork, the CUDA injection entry point and an attach
 * session's start and stop. It starts, finishes and forks every module; the
 * state they all share (gp_cfg, gp_state, gp_tls, record emission) is
 * state.c's, below them, which this file writes as the owner of the state's
 * transitions.
 *
 * Who calls what, on which thread:
 *  - the ELF constructor (loading thread): reads GPUPHASE_* (config.c),
 *    registers the atexit and pthread_atfork handlers. No CUDA call here.
 *  - gp_lib_ensure_started (first hook, first NVTX call, or
 *    InitializeInjection — whichever comes first, on that thread): CUDA
 *    versions (preload only), CUPTI (cupti.c), the collector, the window.
 *    A hooked call of another thread arriving meanwhile waits for the start
 *    (and the window it opens), at most GP_LIB_START_WAIT_NS
 *    (gp_lib_await_start); only past that bound does it pass through
 *    unrecorded and, in the whole-run window, counted as a start-up loss:
 *    each thread adds its count to its own ring's drops on its next call
 *    (gp_state_startup_flush), the rest is added at finish, so
 *    written = read + dropped holds from the first call, and finish writes
 *    the total as one GP_STATUS_STARTUP_LOST. InitializeInjection on another
 *    thread never waits (it runs inside cuInit, under the driver's lock);
 *    the starting thread itself re-entering (cudart -> cuInit ->
 *    InitializeInjection) sees STARTING and returns at once.
 *  - gp_lib_finish, from gp_lib_atexit (exit(3), before cudart's teardown
 *    when cudart registered later than us), from _exit/_Exit (exitpath.c,
 *    through gp_lib_exit_finish: only in the process whose capture this
 *    is, never in a vfork child) or from the trigger thread
 *    (`gpuphase stop PID`, window.c) while the program runs on: close the
 *    window; then, on the drain thread and waited for at most
 *    GP_LIB_DRAIN_WAIT_NS (gp_lib_drain), disable CUPTI's API kinds,
 *    synchronize (never when the finishing thread is itself inside a hooked
 *    call: exit() from a signal handler), disable the rest, forced flush,
 *    symbolise stacks; then stop the collector. Contexts destroyed earlier
 *    are flushed from cupti.c's resource callback. A library lock that the
 *    finishing thread itself holds in the frame a signal interrupted (the
 *    window's, at a sync marker) is not waited for (gp_state_lock_exit):
 *    that frame never resumes, so nothing on the exit path waits without a
 *    bound for a lock, a thread or CUDA. At exit the collector's stop frees
 *    nothing (gp_collector_stop_at_exit): the frame may hold malloc's lock.
 *  - the drain thread (gp_lib_drainer_main), started with the capture:
 *    until finish asks, flushes CUPTI's completed buffers every
 *    GP_LIB_FLUSH_EVERY_MS (what a crash can lose); then runs the drain,
 *    ends.
 *  - gp_lib_atfork_child: a child of a process that never started capture
 *    stays IDLE and starts on its own first hook, like an exec'ed process
 *    (CUPTI, window, control socket, its own trace); a child of a started
 *    one forgets collector, CUPTI, window and goes inert (or, with
 *    GPUPHASE_FOLLOW_FORK=1, hook-only capture into the child's own file).
 *
 * Invariants: gp_state moves IDLE -> STARTING -> RUNNING -> INERT (or
 * IDLE -> INERT); the library never exits, aborts or writes to stdout; a bad
 * configuration leaves it inert with one stderr line.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sched.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "gp_collector.h"
#include "gp_lib.h"

extern char **environ;

static int gp_lib_devices_done; /* device records emitted (exchange: once) */
static int gp_lib_injected;
static int gp_lib_forked_child; /* fork child of a started process (or of such a child) */
/* The process this library's state belongs to: set at load and in a fork
 * child (atfork); a vfork child (or posix_spawn's) shares the memory under
 * another pid and runs no atfork handler (gp_lib_exit_finish). */
static pid_t gp_lib_pid;
static char gp_lib_warnings[1024];
static const struct gp_lib_attach_info *gp_lib_attach; /* attach session (attach_session.c), or NULL */

static void gp_lib_atexit(void);
static void gp_lib_drainer_start(void);

static void gp_lib_go_inert(void)
{
	__atomic_store_n(&gp_watch, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&gp_state, GP_STATE_INERT, __ATOMIC_RELEASE);
}

/* ---- start ---------------------------------------------------------------------- */

static void gp_lib_cmdline(char *buf, size_t len)
{
	buf[0] = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return;
	while (n > 0 && buf[n - 1] == 0)
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == 0)
			buf[i] = ' ';
	buf[n] = 0;
}

/* Is the definition the dynamic linker gives the application ours? */
static int gp_lib_self(void *p)
{
	Dl_info a, b;
	return p && dladdr(p, &a) && dladdr((void *)gp_lib_self, &b) && a.dli_fbase == b.dli_fbase;
}

/* One GP_REC_DEVICE per GPU, through the real cudart (preload only; the
 * application is already using CUDA when this runs). */
static void gp_lib_devices(void)
{
	static void *real_count, *real_props;
	cudaError_t (*count)(int *) = (cudaError_t(*)(int *))gp_resolve_real("cudaGetDeviceCount", &real_count);
	cudaError_t (*props)(struct cudaDeviceProp *, int) =
		(cudaError_t(*)(struct cudaDeviceProp *, int))gp_resolve_real("cudaGetDeviceProperties", &real_props);
	int n = 0;
	if (!count || !props || count(&n) != cudaSuccess)
		return;
	for (int d = 0; d < n && d < 64; d++) {
		static struct cudaDeviceProp p; /* large; start runs once */
		memset(&p, 0, sizeof p);
		if (props(&p, d) != cudaSuccess)
			continue;
		union gp_rec r;
		memset(&r, 0, sizeof r);
		r.device.type = GP_REC_DEVICE;
		r.device.device = (uint8_t)d;
		r.device.name = gp_collector_intern(p.name, strnlen(p.name, sizeof p.name));
		r.device.cc_major = (uint32_t)p.major;
		r.device.cc_minor = (uint32_t)p.minor;
		r.device.sm_count = (uint32_t)p.multiProcessorCount;
		gp_collector_emit(&r, 1);
	}
}

/* The trace's path for pattern (expanded); `alt`: the name taken when the
 * job default's name exists already (a job id reused by a restart, two
 * processes of one rank): "-p<pid>" before the extension. Makes the
 * directory of the file when the pattern's directory has an escape
 * (gpuphase-%j/: one directory per job, made by whichever rank comes
 * first). Returns 0 or -errno. */
static int gp_lib_trace_name(const char *pattern, const char *host, const struct gp_config_job *job, int alt,
			     char *path, size_t len)
{
	int rc = gp_config_expand(pattern, (long)getpid(), host, job, time(NULL), path, len);
	if (rc)
		return rc;
	if (alt) {
		char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
		size_t at = dot && (!slash || dot > slash) ? (size_t)(dot - path) : strlen(path);
		char tail[GP_PATH_MAX];
		snprintf(tail, sizeof tail, "%s", path + at);
		if (snprintf(path + at, len - at, "-p%ld%s", (long)getpid(), tail) >= (int)(len - at))
			return -ENAMETOOLONG;
	}
	const char *pslash = strrchr(pattern, '/');
	char *slash = strrchr(path, '/');
	if (pslash && slash && slash != path && memchr(pattern, '%', (size_t)(pslash - pattern))) {
		*slash = 0;
		rc = mkdir(path, 0777) && errno != EEXIST ? -errno : 0;
		*slash = '/';
		if (rc)
			return rc;
	}
	return 0;
}

/* The CUDA runtime and driver versions, as decimal text into rtv and drv
 * (n bytes each), or "" where unknown: asked only when preloaded. */
static void gp_lib_cuda_versions(char *rtv, char *drv, size_t n)
{
	rtv[0] = drv[0] = 0;
	if (gp_state_preloaded) {
		/* Off the hot path and never from a constructor: this is the first
		 * hook or NVTX call. Through the real functions (not hooked). */
		static void *real_rt, *real_drv;
		int (*fn)(int *);
		int v = 0;
		if ((fn = (int (*)(int *))gp_resolve_real("cudaRuntimeGetVersion", &real_rt)) && fn(&v) == 0)
			snprintf(rtv, n, "%d", v);
		v = 0;
		if ((fn = (int (*)(int *))gp_resolve_real("cudaDriverGetVersion", &real_drv)) && fn(&v) == 0)
			snprintf(drv, n, "%d", v);
	}
}

/* The trace header's key/values into kv (32 slots): who runs (host,
 * cmdline, pid), what is captured and how (window, marker, stacks, clock,
 * capture, cupti mode, CUDA versions, stack depth, counters), and which job
 * this process belongs to. "capture" stays kv[7]: gp_lib_start logs it.
 * The values must outlive the collector's start. Returns how many. */
static size_t gp_lib_header(struct gp_kv *kv, const char *host, const char *cmd, const char *pidbuf,
			    const char *rtv, const char *drv, const struct gp_config_job *job, int cupti_rc)
{
	static char depth[16];
	size_t nkv = 0;

	snprintf(depth, sizeof depth, "%u", gp_cfg.stack_depth);
	static const char *const stacks_names[] = {"off", "sync", "launch", "all"};
	kv[nkv++] = (struct gp_kv){"host", host};
	kv[nkv++] = (struct gp_kv){"cmdline", cmd};
	kv[nkv++] = (struct gp_kv){"pid", pidbuf};
	kv[nkv++] = (struct gp_kv){"window", gp_cfg.window_text};
	kv[nkv++] = (struct gp_kv){"marker", gp_cfg.marker_text};
	kv[nkv++] = (struct gp_kv){"stacks", stacks_names[gp_cfg.stacks]};
	kv[nkv++] = (struct gp_kv){"clock", "CLOCK_MONOTONIC_RAW"};
	kv[nkv++] = (struct gp_kv){"capture", gp_lib_attach ? (gp_state_preloaded ? "attach" : "attach (CUPTI API records only)")
					      : gp_state_preloaded ? (gp_lib_injected ? "preload+injection" : "preload")
								 : "injection"};
	kv[nkv++] = (struct gp_kv){"cupti", cupti_rc == 0 ? gp_cupti_mode_text() : "off"};
	if (gp_lib_attach && gp_lib_attach->hooks)
		kv[nkv++] = (struct gp_kv){"attach_hooks", gp_lib_attach->hooks};
	if (rtv[0])
		kv[nkv++] = (struct gp_kv){"cuda_runtime", rtv};
	if (drv[0])
		kv[nkv++] = (struct gp_kv){"cuda_driver", drv};
	if (gp_cfg.stacks != GP_STACKS_OFF)
		kv[nkv++] = (struct gp_kv){"stack_depth", depth};
	if (gp_cfg.counters != GP_COUNTERS_OFF)
		kv[nkv++] = (struct gp_kv){"counters", gp_cfg.counters_text};
	/* which job this process belongs to: the report merges only the traces
	 * of one job and lines their clocks up (docs/metrics.md §9) */
	if (job->rank)
		kv[nkv++] = (struct gp_kv){"rank", job->rank};
	if (job->local_rank)
		kv[nkv++] = (struct gp_kv){"local_rank", job->local_rank};
	if (job->world_size)
		kv[nkv++] = (struct gp_kv){"world_size", job->world_size};
	if (job->node)
		kv[nkv++] = (struct gp_kv){"node", job->node};
	if (job->job_id)
		kv[nkv++] = (struct gp_kv){"job_id", job->job_id};
	return nkv;
}

/* The trace's first status records, once it exists: whether CUPTI opened
 * (and its clock was calibrated) or why not (cres, why), and what the
 * trace will lack: counters, the runtime hooks (a fork child: hook-only). */
static void gp_lib_start_status(int cupti_rc, int cres, const char *why)
{
	if (cupti_rc == 0) {
		gp_state_status(GP_STATUS_CUPTI_OK, 0, NULL);
		if (gp_cupti_clock_calibrated())
			gp_state_status(GP_STATUS_CLOCK_CALIBRATED, gp_cupti_clock_offset(),
				      "cuptiActivityRegisterTimestampCallback refused: offset added to CUPTI times");
	} else {
		gp_state_status(GP_STATUS_CUPTI_UNAVAILABLE, cres, why ? why : "CUPTI unavailable");
	}
	if (gp_cfg.counters != GP_COUNTERS_OFF && (cupti_rc || !gp_state_preloaded || gp_counters_unavailable()))
		gp_state_status(GP_STATUS_COUNTERS, -1,
			      cupti_rc ? "counters unavailable: CUPTI is unavailable"
			      : !gp_state_preloaded ? "counters unavailable: they need the preloaded launch hooks"
						  : gp_counters_unavailable());
	if (!gp_state_preloaded)
		gp_state_status(GP_STATUS_HOOKS_ABSENT, 0,
			      gp_lib_attach ? "attach: no loaded object imports a hooked runtime function (nothing to "
					      "patch): CUPTI API records only"
					    : "injection only: runtime API hooks not interposed");
	if (gp_lib_forked_child)
		gp_state_status(GP_STATUS_FORKED_CHILD, (int64_t)getppid(), "fork child (GPUPHASE_FOLLOW_FORK=1): hook-only");
}

/* Start tracing: find how the library is loaded, open CUPTI, name the
 * trace, write its header and start the collector. 1 when tracing, 0 when
 * the program runs unprofiled (said in the log). */
static int gp_lib_start(void)
{
	static char host[256], cmd[4096], pidbuf[32], rtv[32], drv[32], path[GP_PATH_MAX];
	struct gp_kv kv[32]; /* gp_lib_header: 18 used at most today */

	void *launch = dlsym(RTLD_DEFAULT, "cudaLaunchKernel");
	if (!launch)
		(void)dlerror(); /* no error string of ours left for the program */
	gp_state_preloaded = gp_lib_self(launch) || (gp_lib_attach && gp_lib_attach->patched);
	gp_stacks_new_trace(); /* this trace has no symbols yet (an attach session's earlier one had) */
	if (gethostname(host, sizeof host - 1))
		strcpy(host, "unknown");
	gp_lib_cmdline(cmd, sizeof cmd);
	snprintf(pidbuf, sizeof pidbuf, "%ld", (long)getpid());
	gp_lib_cuda_versions(rtv, drv, sizeof rtv);

	const char *why = NULL;
	int cres = 0, cupti_rc = -EPERM;
	if (gp_lib_attach) { /* attach_session.c opened CUPTI once the context existed */
		cupti_rc = gp_lib_attach->cupti_rc;
		why = gp_lib_attach->why;
		cres = gp_lib_attach->cres;
	} else if (gp_cfg.cupti)
		cupti_rc = gp_cupti_open(&gp_cfg, &why, &cres);
	else
		why = "disabled by GPUPHASE_CUPTI=0";

	struct gp_config_job job;
	gp_config_job(environ, &job);
	const char *pattern = gp_config_output(&gp_cfg, &job);
	int rc = gp_lib_trace_name(pattern, host, &job, 0, path, sizeof path);
	if (rc) {
		gp_log(GP_LOG_ERROR, "GPUPHASE_OUTPUT='%s': cannot make the trace's name or directory (%s)", pattern,
		       strerror(-rc));
		if (!gp_lib_attach)
			gp_cupti_close();
		return 0;
	}
	size_t nkv = gp_lib_header(kv, host, cmd, pidbuf, rtv, drv, &job, cupti_rc);

	struct gp_collector_config cc;
	memset(&cc, 0, sizeof cc);
	cc.path = path;
	cc.ring_records = gp_cfg.ring_records;
	cc.flush_ms = gp_cfg.flush_ms;
	cc.max_bytes = gp_cfg.max_bytes;
	cc.windows = gp_cfg.win_mode == GP_WINMODE_TIME && gp_cfg.every_ns; /* duty cycle: docs/always-on.md */
	cc.keep_bytes = gp_cfg.keep_bytes;
	cc.clock_id = CLOCK_MONOTONIC_RAW;
	cc.clock_offset_ns = 0; /* CUPTI times are corrected before they are written */
	cc.kv = kv;
	cc.nkv = nkv;
	rc = gp_collector_start(&cc);
	if (rc == -EEXIST && pattern != gp_cfg.output) {
		/* the job default never overwrites either: this process takes
		 * its own name beside the first */
		char first[GP_PATH_MAX];
		snprintf(first, sizeof first, "%s", path);
		if ((rc = gp_lib_trace_name(pattern, host, &job, 1, path, sizeof path)) == 0)
			rc = gp_collector_start(&cc);
		if (rc == 0)
			gp_log(GP_LOG_INFO, "%s exists: tracing to %s instead", first, path);
	}
	if (rc) {
		gp_log(GP_LOG_ERROR, "cannot write trace %s: %s; profiling disabled, the program runs unprofiled", path,
		       strerror(-rc));
		if (!gp_lib_attach) /* an attach session closes what it opened */
			gp_cupti_close();
		return 0;
	}
	if (cc.windows) /* the trace is that directory of window files */
		snprintf(path, sizeof path, "%s", gp_collector_windows_dir());
	gp_state_trace_path = path; /* the trace exists now */
	gp_clocks_start(); /* where the wall clock stood: lining up hosts */
	gp_log(GP_LOG_INFO, "tracing to %s (%s)", path, kv[7].value);

	gp_lib_start_status(cupti_rc, cres, why);
	gp_hooks_emit_names();
	if (cupti_rc == 0)
		gp_calibrate_arm(gp_lib_attach != NULL, gp_lib_forked_child); /* calibrate.c */
	/* Devices only once the program itself uses CUDA: started from an NVTX
	 * call, the process may never touch CUDA (cudaGetDeviceCount would
	 * cuInit for it); then gp_lib_cuda_use does it at the first hook. */
	if (gp_state_preloaded && __atomic_load_n(&gp_state_cuda_used, __ATOMIC_RELAXED) &&
	    !__atomic_exchange_n(&gp_lib_devices_done, 1, __ATOMIC_RELAXED))
		gp_lib_devices();
	/* Again, now that cudart is initialised: atexit handlers run in reverse
	 * order, so this one runs before a teardown cudart registered meanwhile
	 * (a second run finds the library inert and returns). */
	static int again; /* once: an attach session may start many times */
	if (!again++)
		atexit(gp_lib_atexit);
	return 1;
}

void gp_lib_cuda_use(void)
{
	__atomic_store_n(&gp_state_cuda_used, 1, __ATOMIC_RELAXED);
	/* the state first: gp_state_preloaded is written by the starting thread
	 * before its release store of RUNNING, which this acquire pairs with */
	if (__atomic_load_n(&gp_state, __ATOMIC_ACQUIRE) == GP_STATE_RUNNING && gp_state_preloaded &&
	    !__atomic_exchange_n(&gp_lib_devices_done, 1, __ATOMIC_RELAXED)) {
		int saved = errno;
		gp_tls.internal++;
		gp_lib_devices();
		gp_tls.internal--;
		errno = saved;
	}
}

/* How long a hooked call that arrives while another thread starts the
 * library waits for that start (and its window) before it passes through
 * unrecorded as a start-up loss. The start takes a few milliseconds of its
 * own plus what CUDA takes under it (cuInit and the device query of
 * gp_lib_devices: up to seconds on a machine of many GPUs), and the waiting
 * calls would wait about as long for that same initialisation inside CUDA;
 * the bound is there only for a start that cannot finish while the waiter
 * waits (a waiter holding a lock the start needs: the loader's, from a
 * constructor), and it ends such a stall. */
#define GP_LIB_START_WAIT_NS (10ull * 1000000000ull)

/* Is the start over for a hooked call: not STARTING, and when RUNNING, the
 * window opened (gp_window_start ran)? */
static int gp_lib_start_settled(void)
{
	int s = __atomic_load_n(&gp_state, __ATOMIC_ACQUIRE);
	return s != GP_STATE_STARTING &&
	       (s != GP_STATE_RUNNING || __atomic_load_n(&gp_state_window_ready, __ATOMIC_ACQUIRE));
}

int gp_lib_await_start(void)
{
	if (gp_lib_start_settled())
		return 1;
	uint64_t until = gp_now() + GP_LIB_START_WAIT_NS;
	struct timespec nap = {0, 50000}; /* 50 us: the start takes milliseconds */
	for (unsigned spins = 0;; spins++) {
		if (spins < 64)
			sched_yield();
		else
			nanosleep(&nap, NULL);
		if (gp_lib_start_settled())
			return 1;
		if (gp_now() > until)
			return 0;
	}
}

/* *starting is set when 0 is returned because another thread is starting. */
static int gp_lib_ensure_started_ex(int *starting)
{
	int s = __atomic_load_n(&gp_state, __ATOMIC_ACQUIRE);
	if (s == GP_STATE_RUNNING)
		return 1;
	if (s != GP_STATE_IDLE) {
		*starting = s == GP_STATE_STARTING;
		return 0;
	}
	int expect = GP_STATE_IDLE;
	if (!__atomic_compare_exchange_n(&gp_state, &expect, GP_STATE_STARTING, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		*starting = expect == GP_STATE_STARTING;
		return expect == GP_STATE_RUNNING;
	}
	int saved = errno, cs = PTHREAD_CANCEL_ENABLE, ignored;
	/* a thread cancelled mid-start (log, file and CUPTI calls are
	 * cancellation points) would leave the state STARTING for good */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
	gp_tls.internal++;
	gp_stacks_classes = gp_stacks_mask(gp_cfg.stacks);
	int ok = gp_lib_start();
	if (ok) {
		__atomic_store_n(&gp_state, GP_STATE_RUNNING, __ATOMIC_RELEASE);
		gp_window_start();
		__atomic_store_n(&gp_state_window_ready, 1, __ATOMIC_RELEASE);
		gp_hostload_start(); /* hostload.c: host samples off the hot path */
		gp_lib_drainer_start(); /* finish's bounded drain */
	} else {
		gp_lib_go_inert();
	}
	gp_tls.internal--;
	pthread_setcancelstate(cs, &ignored);
	errno = saved;
	return ok;
}

int gp_lib_ensure_started(void)
{
	int starting = 0;
	return gp_lib_ensure_started_ex(&starting);
}

int gp_lib_ensure_started_counted(void)
{
	int starting = 0;
	if (gp_lib_ensure_started_ex(&starting))
		return 1;
	if (!starting || gp_tls.internal)
		return 0;
	/* Another thread is starting the library: wait for it (bounded), then
	 * this call is recorded like any other. */
	int saved = errno;
	int settled = gp_lib_await_start();
	errno = saved;
	if (settled)
		return __atomic_load_n(&gp_state, __ATOMIC_ACQUIRE) == GP_STATE_RUNNING;
	/* Past the bound: a call the whole-run window would have recorded is
	 * lost, so counted (written = read + dropped). Other windows start
	 * closed. */
	if (gp_cfg.win_mode == GP_WINMODE_ALL)
		gp_state_count_startup_lost();
	return 0;
}

/* ---- exit and fork --------------------------------------------------------------- */

/* Serialises gp_lib_finish: `gpuphase stop` (the trigger thread) and exit
 * may arrive together; the second waits for the first and then finds the
 * state INERT, so the process never exits mid-finish. */
static pthread_mutex_t gp_lib_finish_lock = PTHREAD_MUTEX_INITIALIZER;

/* How long finish waits for its drain (gp_lib_drain): the program has
 * stopped issuing work, so the synchronize, the forced flush and the
 * symbolisation take milliseconds; they take longer only when a lock they
 * need is held by a call that will never return (exit() from a signal
 * handler that interrupted CUDA, or malloc inside it) or when a kernel
 * still runs for seconds at exit. Past the bound finish goes on without
 * them and the trace says so (GP_STATUS_EXIT_UNSETTLED). */
#define GP_LIB_DRAIN_WAIT_NS (2ull * 1000000000ull)

/* The drain thread: started with the capture, it sleeps until finish asks
 * for the calls that may block on a lock that is not ours (CUDA, CUPTI,
 * malloc, the loader's) and runs them while finish waits, bounded. Started
 * in advance because at finish even pthread_create may need malloc's lock.
 * state: 0 no thread, 1 waiting, 2 asked, 3 done, 4 abandoned by finish
 * (the thread, if it ever returns, sets 0). All under mu; cv (on
 * CLOCK_MONOTONIC) signals both ways. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int state, sync;
	int cv_ready; /* cv set up on CLOCK_MONOTONIC (never destroyed: a fork
	                 child's copy may count the parent's waiter) */
} gp_lib_drainer = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};

/* The drain: API kinds off (our own synchronize is not recorded),
 * synchronize when allowed, CUPTI off, forced flush, stacks symbolised. */
static void gp_lib_drain_work(int may_sync)
{
	if (__atomic_load_n(&gp_cupti_active, __ATOMIC_RELAXED)) {
		static void *real_sync;
		int (*sync)(void) = (int (*)(void))gp_resolve_real("cudaDeviceSynchronize", &real_sync);
		gp_cupti_quiesce();
		if (sync && may_sync)
			sync();
	}
	gp_cupti_capture(0);
	gp_cupti_flush();
	gp_stacks_symbolize(1);
}

/* Until finish asks, the drain thread asks CUPTI every GP_LIB_FLUSH_EVERY_MS
 * for the buffers whose records are all complete (cuptiActivityFlushAll(0),
 * which CUPTI documents for a regular interval in a thread of its own): a
 * crash then loses at most about one interval of GPU records, instead of
 * every record CUPTI held (all of them on simcuda, whose own delivery waits
 * 1 s). Without a flush CUPTI returns a buffer only once it is full. */
#define GP_LIB_FLUSH_EVERY_MS 200

static void *gp_lib_drainer_main(void *arg)
{
	(void)arg;
	gp_tls.internal++; /* our CUDA calls pass through the hooks */
	pthread_mutex_lock(&gp_lib_drainer.mu);
	while (gp_lib_drainer.state == 1) {
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += GP_LIB_FLUSH_EVERY_MS * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		int w = 0;
		while (gp_lib_drainer.state == 1 && w != ETIMEDOUT)
			w = pthread_cond_timedwait(&gp_lib_drainer.cv, &gp_lib_drainer.mu, &until);
		if (gp_lib_drainer.state != 1)
			break;
		pthread_mutex_unlock(&gp_lib_drainer.mu);
		if (__atomic_load_n(&gp_cupti_active, __ATOMIC_RELAXED))
			gp_cupti_flush_completed();
		pthread_mutex_lock(&gp_lib_drainer.mu);
	}
	int sync = gp_lib_drainer.sync;
	pthread_mutex_unlock(&gp_lib_drainer.mu);
	gp_lib_drain_work(sync);
	pthread_mutex_lock(&gp_lib_drainer.mu);
	gp_lib_drainer.state = gp_lib_drainer.state == 4 ? 0 : 3;
	pthread_cond_broadcast(&gp_lib_drainer.cv);
	pthread_mutex_unlock(&gp_lib_drainer.mu);
	return NULL;
}

/* At start: the drain thread, unless one is still running (a drain
 * abandoned by an earlier attach session's finish). */
static void gp_lib_drainer_start(void)
{
	pthread_condattr_t ca;
	pthread_t th;
	pthread_mutex_lock(&gp_lib_drainer.mu);
	if (gp_lib_drainer.state == 0) {
		if (!gp_lib_drainer.cv_ready) {
			pthread_condattr_init(&ca);
			pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
			pthread_cond_init(&gp_lib_drainer.cv, &ca);
			pthread_condattr_destroy(&ca);
			gp_lib_drainer.cv_ready = 1;
		}
		gp_lib_drainer.state = 1;
		/* born with every signal blocked: the program's signals are never
		 * delivered to a library thread */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&th, NULL, gp_lib_drainer_main, NULL) == 0)
			pthread_detach(th);
		else
			gp_lib_drainer.state = 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	pthread_mutex_unlock(&gp_lib_drainer.mu);
}

/* Finish's calls into CUDA, CUPTI and what may need malloc's lock, never
 * unbounded: the drain thread runs them and finish waits
 * GP_LIB_DRAIN_WAIT_NS. No synchronize when this thread is inside a hooked
 * call (exit() from a signal handler or a callback that interrupted it:
 * CUDA's locks may be held by the very call interrupted), nor in a process
 * whose program did not use CUDA (it would create a context), nor in a
 * fork child. Without a drain thread the work runs here, unless this
 * thread was interrupted inside CUDA (then nothing runs). What was skipped
 * or abandoned is written as GP_STATUS_EXIT_UNSETTLED. */
static void gp_lib_drain(void)
{
	int interrupted = gp_tls.in_call > 0;
	int may_sync = !interrupted && !gp_lib_forked_child && __atomic_load_n(&gp_state_cuda_used, __ATOMIC_RELAXED);
	int done = 1;
	pthread_mutex_lock(&gp_lib_drainer.mu);
	if (gp_lib_drainer.state == 1) {
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += (time_t)(GP_LIB_DRAIN_WAIT_NS / 1000000000ull);
		gp_lib_drainer.sync = may_sync;
		gp_lib_drainer.state = 2;
		pthread_cond_broadcast(&gp_lib_drainer.cv);
		while (gp_lib_drainer.state == 2 &&
		       pthread_cond_timedwait(&gp_lib_drainer.cv, &gp_lib_drainer.mu, &until) != ETIMEDOUT)
			;
		done = gp_lib_drainer.state == 3;
		gp_lib_drainer.state = done ? 0 : 4;
		pthread_mutex_unlock(&gp_lib_drainer.mu);
	} else {
		pthread_mutex_unlock(&gp_lib_drainer.mu);
		if (interrupted)
			done = 0;
		else
			gp_lib_drain_work(may_sync);
	}
	/* no detail string: interning one may need malloc's lock, which the
	 * interrupted call may hold (the value says it all) */
	if (!done)
		gp_state_status(GP_STATUS_EXIT_UNSETTLED, GP_EXIT_DRAIN_ABANDONED, NULL);
	else if (interrupted && __atomic_load_n(&gp_state_cuda_used, __ATOMIC_RELAXED))
		gp_state_status(GP_STATUS_EXIT_UNSETTLED, GP_EXIT_SYNC_SKIPPED, NULL);
}

/* Set by the atexit handler: finish then runs at the process's exit,
 * maybe on a thread a signal interrupted inside malloc, so the collector
 * frees nothing (gp_collector_stop_at_exit). */
static int gp_lib_exiting;

static int gp_lib_finish_held(int cs);

static void gp_lib_atexit(void)
{
	/* a vfork child (or a raw clone's) that calls exit() runs the
	 * parent's handlers in the parent's memory: it touches nothing */
	if (getpid() != gp_lib_pid)
		return;
	gp_lib_exiting = 1;
	gp_lib_finish();
}

int gp_lib_finish(void)
{
	/* noted as held (gp_state_lock): _exit from a signal handler on top of
	 * this frame passes finish by (gp_lib_exit_finish) */
	return gp_lib_finish_held(gp_state_lock(&gp_lib_finish_lock));
}

/* finish, gp_lib_finish_lock held (its cancel state cs) */
static int gp_lib_finish_held(int cs)
{
	if (__atomic_load_n(&gp_state, __ATOMIC_ACQUIRE) != GP_STATE_RUNNING) {
		gp_state_unlock(&gp_lib_finish_lock, cs);
		return 0;
	}
	int saved = errno;
	gp_tls.internal++;
	/* Close the window first: nothing after this mark is the program's. */
	gp_window_finish();
	gp_counters_finish();
	/* Let in-flight GPU work finish so its records exist, then collect
	 * everything: on a thread of its own, waited for a bounded time. */
	gp_lib_drain();
	gp_lib_go_inert();
	if (gp_hostload_stop())
		gp_clocks_end(); /* the sampler is joined: no tick runs beside it */
	/* start-up losses of threads that made no call since: this ring's;
	 * all of them, by name, in one status record */
	uint64_t lost = gp_state_startup_take();
	if (lost)
		gp_collector_count_lost(lost);
	uint64_t lost_all = gp_state_startup_total();
	if (lost_all)
		gp_state_status(GP_STATUS_STARTUP_LOST, (int64_t)lost_all, NULL); /* no malloc: as above */
	uint64_t hostcb_lost = gp_hostcb_lost_total();
	if (hostcb_lost)
		gp_state_status(GP_STATUS_HOST_CALLBACK_LOST, (int64_t)hostcb_lost, NULL);
	if (gp_lib_exiting)
		gp_collector_stop_at_exit();
	else
		gp_collector_stop();
	gp_tls.internal--;
	errno = saved;
	gp_state_unlock(&gp_lib_finish_lock, cs);
	return 1;
}

void gp_lib_exit_finish(void)
{
	/* A vfork child (and posix_spawn's, Python subprocess's) runs in its
	 * parent's memory under its own pid, with the parent's other threads
	 * running on: it touches nothing, not even a lock. */
	if (getpid() != gp_lib_pid)
		return;
	/* A signal handler that interrupted this thread's own finish (exit()
	 * under way): that frame never resumes, so its lock would be waited
	 * for without end; the process ends as the handler asks. */
	if (gp_state_holds(&gp_lib_finish_lock))
		return;
	/* A thread that never emitted would make its ring now (calloc) and a
	 * handler may have interrupted malloc on it: such an _exit ends the
	 * process as it would without us (the trace as a crash leaves it). */
	if (__atomic_load_n(&gp_state, __ATOMIC_ACQUIRE) != GP_STATE_RUNNING || !gp_collector_thread_ready())
		return;
	/* Another thread finishing (exit() under way, `gpuphase stop`) may
	 * wait for a lock this thread holds in the frame a handler interrupted:
	 * _exit does not wait for it and ends the process, as asked. */
	int cs;
	if (!gp_state_trylock(&gp_lib_finish_lock, &cs))
		return;
	/* exit()'s order: window.c's handler (registered later) ran first */
	gp_window_exit_no_alloc();
	gp_lib_exiting = 1;
	gp_lib_finish_held(cs);
}

static void gp_lib_atfork_child_work(void);
/* fork's child side runs inside the program's fork(): errno stays its. */
static void gp_lib_atfork_child(void)
{
	int saved = errno;
	gp_lib_pid = getpid(); /* this process's state from here on */
	gp_lib_atfork_child_work();
	errno = saved;
}

static void gp_lib_atfork_child_work(void)
{
	int s = __atomic_load_n(&gp_state, __ATOMIC_ACQUIRE);
	/* A child of a process that never started capture (IDLE: no hooked
	 * CUDA call, no NVTX call, no injection) and is itself no child of a
	 * started one is a fresh process for CUDA and for us: it starts on its
	 * own first hook, like the same program exec'ed. STARTING (another
	 * thread was starting at the fork) counts as started: that thread's
	 * half-made collector and CUPTI are not the child's. */
	int fresh = s == GP_STATE_IDLE && !gp_lib_forked_child;
	gp_tls.tid = 0;
	gp_tls.depth = 0;
	gp_tls.internal = 0;
	gp_tls.stacks = NULL;
	gp_stacks_forget();
	gp_state_window_ready = 0; /* a child that starts opens its own window */
	pthread_mutex_init(&gp_lib_finish_lock, NULL); /* a parent's thread may have held it */
	/* the drain thread is the parent's: its lock and condition variable
	 * are set up afresh, without destroying the copies that count it */
	pthread_mutex_init(&gp_lib_drainer.mu, NULL);
	memset(&gp_lib_drainer.cv, 0, sizeof gp_lib_drainer.cv);
	gp_lib_drainer.cv_ready = 0;
	gp_lib_drainer.state = 0;
	if (s == GP_STATE_RUNNING || s == GP_STATE_STARTING)
		gp_collector_forget();
	gp_cupti_forget();
	gp_counters_forget();
	gp_window_forget();
	gp_calibrate_forget();
	gp_resolve_forget();
	if (fresh) {
		/* Per process, as at an exec'ed load: the clock origin of delay=
		 * and of the duty cycle's periods starts here; the trace's name
		 * (%p, %t), the control socket and the job are taken at start.
		 * The host sampler was never started: nothing to forget, and the
		 * child starts its own. */
		gp_state_t0 = gp_now();
		__atomic_store_n(&gp_watch, GP_WATCH_ALL, __ATOMIC_RELEASE);
		return;
	}
	gp_lib_forked_child = 1;
	gp_hostload_forget();
	if (s == GP_STATE_INERT || !gp_cfg.follow_fork) {
		gp_lib_go_inert();
		return;
	}
	/* Follow the fork: own file (new %p), hook-only (CUPTI is the parent's). */
	gp_cfg.cupti = 0;
	__atomic_store_n(&gp_watch, GP_WATCH_ALL, __ATOMIC_RELEASE);
	__atomic_store_n(&gp_state, GP_STATE_IDLE, __ATOMIC_RELEASE);
}

/* ---- entry points ------------------------------------------------------------------ */

static void gp_lib_warn(const char *line)
{
	size_t n = strlen(gp_lib_warnings);
	snprintf(gp_lib_warnings + n, sizeof gp_lib_warnings - n, "%s\n", line);
}

static void gp_lib_ctor_work(void)
{
	gp_state_t0 = gp_now();
	gp_lib_pid = getpid();
	if (getauxval(AT_SECURE)) { /* setuid/setgid: never trust the environment */
		gp_lib_go_inert();
		return;
	}
	char msg[1024];
	if (gp_config_parse(environ, &gp_cfg, msg, sizeof msg, gp_lib_warn)) {
		gp_log_line(msg);
		gp_lib_go_inert();
		return;
	}
	if (gp_cfg.disable) {
		gp_lib_go_inert();
		return;
	}
	gp_log_init(&gp_cfg);
	if (gp_lib_warnings[0] && gp_cfg.log_level != GP_LOG_OFF) {
		char *save = NULL;
		for (char *l = strtok_r(gp_lib_warnings, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			gp_log(GP_LOG_ERROR, "%s", l + strlen("gpuphase: "));
	}
	if (pthread_atfork(NULL, NULL, gp_lib_atfork_child) || atexit(gp_lib_atexit)) {
		gp_log(GP_LOG_ERROR, "cannot register exit/fork handlers; profiling disabled");
		gp_lib_go_inert();
		return;
	}
	gp_log(GP_LOG_DEBUG, "loaded; window=%s marker=%s", gp_cfg.window_text, gp_cfg.marker_text);
}

/* errno is the program's at every point, also at main: the configuration
 * parse (strtoull: errno = 0 / ERANGE), logging and registration must not
 * leave a value of ours, so every path is wrapped here. */
__attribute__((constructor)) static void gp_lib_ctor(void)
{
	int saved = errno;
	gp_lib_ctor_work();
	errno = saved;
}

/* ---- attach (attach_session.c) --------------------------------------------------- */

int gp_lib_attach_start(const struct gp_lib_attach_info *a)
{
	int s = __atomic_load_n(&gp_state, __ATOMIC_ACQUIRE);
	if (s == GP_STATE_RUNNING || s == GP_STATE_STARTING || gp_lib_forked_child)
		return 0;
	gp_lib_attach = a;
	gp_state_t0 = gp_now();
	gp_state_trace_path = "";
	__atomic_store_n(&gp_state_cuda_used, 1, __ATOMIC_RELAXED); /* cudart is mapped and the context exists */
	__atomic_store_n(&gp_lib_devices_done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&gp_state, GP_STATE_IDLE, __ATOMIC_RELEASE);
	int ok = gp_lib_ensure_started();
	gp_lib_attach = NULL; /* read by gp_lib_start only */
	return ok;
}

void gp_lib_attach_stop(char *path, size_t len)
{
	gp_lib_atexit();
	snprintf(path, len, "%s", gp_state_trace_path);
}

/* CUDA_INJECTION64_PATH entry: called by the driver's cuInit before any
 * context exists. Nonzero = success; we never make the application fail. */
GP_EXPORT int InitializeInjection(void);
GP_EXPORT int InitializeInjection(void)
{
	int saved = errno; /* the program's (cuInit's caller), on every path */
	gp_lib_injected = 1;
	__atomic_store_n(&gp_state_cuda_used, 1, __ATOMIC_RELAXED); /* called from cuInit */
	gp_lib_ensure_started();
	errno = saved;
	return 1;
}
