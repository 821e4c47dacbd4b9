/*
 * window.c — the capture window: which iterations (or which seconds) are
 * captured, iteration markers, and the runtime trigger.
 *
 * Callers: hooks.c (marker events on application threads: after each
 * device/stream synchronize, before a launch of a kernel:GLOB match, around
 * cudaProfilerStart/Stop), nvtx.c (range starts for nvtx:NAME), lib.c (start,
 * exit, fork), plus two threads of our own that exist only when configured:
 * the timer (GPUPHASE_WINDOW=delay=...,duration=..., and every=... for a
 * duty cycle, which also ends each window's file: docs/always-on.md) and
 * the control server
 * (every capture but an attach session, which has its own connection; UNIX
 * socket ${GPUPHASE_CONTROL_DIR}/<pid>.sock): `trigger` requests in
 * GPUPHASE_WINDOW=trigger, `status` and `stop` in every window (a duty
 * cycle's `status` adds a second line: "windows dir=DIR last=SEQ"). A stop runs
 * gp_lib_finish on that thread while the program runs on; the server then
 * answers `status` with "ended" until the process exits (an atexit handler
 * removes the socket; a process killed by a signal leaves it, and the next
 * process with that pid replaces it). A duty-cycled attach session serves
 * the same socket from its own thread instead (gp_window_control_open and
 * gp_window_control_serve), and answers a `stop` itself once it has
 * detached; its timer sleeps in short slices, so that it ends soon after the
 * session (gp_window_timer_live counts it).
 *
 * Invariants: every transition happens under gp_window_lock, except the
 * finish of an exit() from a signal handler that interrupted a thread under
 * that lock: the exit path then goes on without it (gp_state_lock_exit),
 * since the frame holding it never resumes. A start does,
 * in order, CUPTI activity enable (never a filter), gp_window_on, gp_watch
 * (all classes) and the GP_REC_WINDOW mark; a stop the mirror: the mark,
 * gp_window_on, gp_watch (only the marker's classes), CUPTI disable (the op
 * and sync kinds before the API records). So a call made wholly between a
 * start mark and its stop mark is traced whole. Iteration numbers only
 * grow. In a duty cycle an iteration mark made between windows is not
 * written but kept (gp_window_deferred), the latest only, and written
 * before the next window's start mark (or at finish). Outside the window a hook whose class is not a marker costs one
 * branch (see hooks.c), except before an iteration window's first marker
 * or a time window's opening: launches and blocking calls are then counted
 * (gp_window_seen, lock-free, on application threads), so that a window
 * that never opens says why at finish (GP_STATUS_WINDOW_UNOPENED).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "gp_collector.h"
#include "gp_fd.h"
#include "gp_lib.h"
#include "kernel_name.h"

int gp_window_on; /* pair: stored under gp_window_lock, loaded relaxed by hooks */
unsigned gp_window_turns; /* window on/off transitions so far (attach_session.c polls it, relaxed) */

static pthread_mutex_t gp_window_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t gp_window_iter;      /* current iteration; -1 before the first start */
static int gp_window_in_range;      /* profiler marker: inside Start..Stop         */
static int gp_window_timer_on;      /* time window: the timer says capture          */
static int64_t gp_window_trig_from = -1, gp_window_trig_to = -1; /* trigger iters */
static uint64_t gp_window_trig_until; /* trigger seconds: capture until (0 = none) */
static int gp_window_started;
static int gp_window_held; /* gp_window_hold: markers neither counted nor applied */
static int gp_window_listen_fd = -1;
static char gp_window_sock_path[128];
static int gp_window_stopped; /* `stop` finished the trace (stored under gp_window_lock) */
static __thread int gp_window_serving; /* this thread is the control server */
static char gp_window_stopped_trace[GP_PATH_MAX]; /* its path, for `status` after the stop */
static int gp_window_opened;   /* the window was on once (under gp_window_lock; relaxed reads) */
static int gp_window_was_held; /* an attach session held it: its command says what happened */
static uint64_t gp_window_marks; /* iteration markers seen (under gp_window_lock) */
/* Duty cycle: the latest iteration mark made while no window was on, not
 * yet written (under gp_window_lock). Between windows only the iteration
 * a window opens in is needed, so marks there are kept here, each
 * replacing the one before, and the last is written (with its own time and
 * thread) just before the next window's start mark: a server's thousands
 * of synchronizes a second cost no records, no writer wake-ups and no
 * bytes in the next window's file. */
static struct {
	int held;
	uint32_t tid;
	uint64_t ts;
	int64_t iter;
} gp_window_deferred;
static uint64_t gp_window_timer_slice; /* the timer's longest sleep (0: none), set before it starts */
static int gp_window_timer_threads;    /* timer threads running (atomic) */

/* ---- kernel:GLOB ------------------------------------------------------- */

#define GP_KCACHE 1024
static struct {
	const void *func; /* pair: stored release after match, loaded acquire */
	int match;
} gp_window_kcache[GP_KCACHE];
static pthread_mutex_t gp_window_kcache_lock = PTHREAD_MUTEX_INITIALIZER;
static void *real_cudaFuncGetName;

static int gp_window_kernel_matches(const void *func)
{
	size_t h = ((uintptr_t)func >> 4) * 0x9E3779B97F4A7C15ull >> 54;
	for (size_t i = 0; i < GP_KCACHE; i++) {
		size_t j = (h + i) & (GP_KCACHE - 1);
		const void *f = __atomic_load_n(&gp_window_kcache[j].func, __ATOMIC_ACQUIRE);
		if (f == func)
			return gp_window_kcache[j].match;
		if (!f)
			break;
	}
	/* Slow path, once per function: ask cudart for the name and match it
	 * as the report names it (kernel_name.h; demangling allocates, which is
	 * fine here: an application thread in a launch, none of our locks held). */
	int match = 0;
	const char *name = NULL;
	typedef int (*getname_fn)(const char **, const void *);
	getname_fn fn = (getname_fn)__atomic_load_n(&real_cudaFuncGetName, __ATOMIC_RELAXED);
	if (!fn)
		fn = (getname_fn)gp_resolve_real("cudaFuncGetName", &real_cudaFuncGetName);
	if (fn && fn(&name, func) == 0 && name)
		match = gp_kernel_name_match(gp_cfg.marker_arg, name);
	int cs = gp_state_lock(&gp_window_kcache_lock);
	for (size_t i = 0; i < GP_KCACHE; i++) {
		size_t j = (h + i) & (GP_KCACHE - 1);
		const void *f = gp_window_kcache[j].func;
		if (f == func)
			break;
		if (!f) {
			gp_window_kcache[j].match = match;
			__atomic_store_n(&gp_window_kcache[j].func, func, __ATOMIC_RELEASE);
			break;
		}
	}
	gp_state_unlock(&gp_window_kcache_lock, cs);
	return match;
}

/* ---- state machine (caller holds gp_window_lock) ------------------------ */

unsigned gp_window_marker_bits(void)
{
	switch (gp_cfg.marker) {
	case GP_MARKER_SYNC: return GP_CLASS_BIT(GP_API_SYNC_DEVICE) | GP_CLASS_BIT(GP_API_SYNC_STREAM);
	case GP_MARKER_KERNEL: return GP_CLASS_BIT(GP_API_LAUNCH);
	case GP_MARKER_PROFILER: return GP_CLASS_BIT(GP_API_PROFILER);
	case GP_MARKER_NVTX: return 0;
	}
	return 0;
}

static int gp_window_want(void)
{
	int64_t it = gp_window_iter;
	int w = 0;
	switch (gp_cfg.win_mode) {
	case GP_WINMODE_ALL:
		w = 1;
		break;
	case GP_WINMODE_ITERS: {
		/* Unsigned: skip and iters may be anything up to 2^64-1 (iters >=
		 * 1). A period that does not fit in 64 bits is never completed, so
		 * the first window is the only one. */
		uint64_t skip = gp_cfg.skip, iters = gp_cfg.iters;
		if (it >= 0 && (uint64_t)it >= skip) {
			uint64_t d = (uint64_t)it - skip;
			if (skip > UINT64_MAX - iters) {
				w = d < iters && gp_cfg.repeat > 0;
			} else {
				uint64_t period = skip + iters; /* >= iters >= 1 */
				w = d % period < iters && d / period < gp_cfg.repeat;
			}
		}
		break;
	}
	case GP_WINMODE_TIME:
		w = gp_window_timer_on;
		break;
	case GP_WINMODE_TRIGGER:
		w = (it >= gp_window_trig_from && it < gp_window_trig_to) ||
		    (gp_window_trig_until && gp_now() < gp_window_trig_until);
		break;
	}
	if (gp_cfg.marker == GP_MARKER_PROFILER)
		w = w && gp_window_in_range;
	return w;
}

/* A mark of iteration ITER made at TS on thread TID; named by the marker
 * text, except in the finish of an _exit (gp_window_exit_no_alloc): that
 * may run in a signal handler on top of an interrupted malloc, and
 * interning may allocate (the name is for display only; 0 = none). */
static int gp_window_no_alloc;
static void gp_window_mark_at(uint8_t type, uint8_t kind, uint32_t tid, uint64_t ts, int64_t iter)
{
	union gp_rec r;
	memset(&r, 0, sizeof r);
	r.mark.type = type;
	r.mark.kind = kind;
	r.mark.tid = tid;
	r.mark.ts = ts;
	r.mark.iter = iter < 0 ? 0 : (uint64_t)iter;
	if (!gp_window_no_alloc)
		r.mark.name = gp_collector_intern(gp_cfg.marker_text, strlen(gp_cfg.marker_text));
	gp_state_emit1(&r);
}

static void gp_window_mark(uint8_t type, uint8_t kind, uint32_t tid)
{
	gp_window_mark_at(type, kind, tid, gp_now(), gp_window_iter);
}

/* The deferred iteration mark, if any, is written now (before a window's
 * start mark, or at finish). */
static void gp_window_deferred_write(void)
{
	if (!gp_window_deferred.held)
		return;
	gp_window_deferred.held = 0;
	gp_window_mark_at(GP_REC_ITER, 0, gp_window_deferred.tid, gp_window_deferred.ts, gp_window_deferred.iter);
}

static void gp_window_apply(uint32_t tid)
{
	if (!gp_window_started || gp_window_held ||
	    __atomic_load_n(&gp_state, __ATOMIC_RELAXED) != GP_STATE_RUNNING)
		return;
	int want = gp_window_want();
	if (want == gp_window_on)
		return;
	/* The marks are the window's edges (docs/metrics.md §6): a call made
	 * wholly between them must have all its records, whatever other
	 * threads do meanwhile. Turning CUPTI on or off is not instant (in
	 * lean mode one call per needed cbid, hundreds of us), so a start is
	 * marked after CUPTI is on and a stop before it goes off: a call
	 * that ends while CUPTI is being turned off lies past the stop mark. */
	if (want) {
		__atomic_store_n(&gp_window_opened, 1, __ATOMIC_RELAXED);
		gp_cupti_capture(1);
		__atomic_store_n(&gp_window_on, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&gp_watch, GP_WATCH_ALL, __ATOMIC_RELEASE);
		gp_window_deferred_write();
		gp_window_mark(GP_REC_WINDOW, GP_WIN_START, tid);
	} else {
		gp_window_mark(GP_REC_WINDOW, GP_WIN_STOP, tid);
		__atomic_store_n(&gp_window_on, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&gp_watch, gp_window_marker_bits(), __ATOMIC_RELEASE);
		gp_cupti_capture(0);
	}
	__atomic_fetch_add(&gp_window_turns, 1, __ATOMIC_RELAXED);
	gp_log(GP_LOG_INFO, "capture %s at iteration %lld", want ? "on" : "off", (long long)gp_window_iter);
}

static unsigned gp_window_closed_bits(void);

static void gp_window_boundary_locked(uint32_t tid)
{
	if (gp_window_held)
		return;
	gp_window_iter++;
	if (gp_cfg.every_ns && !gp_window_on) {
		gp_window_deferred.held = 1;
		gp_window_deferred.tid = tid;
		gp_window_deferred.ts = gp_now();
		gp_window_deferred.iter = gp_window_iter;
	} else {
		gp_window_mark(GP_REC_ITER, 0, tid);
	}
	/* the marker works: the calls seen while it had not are not needed */
	if (gp_window_marks++ == 0 && !gp_window_on && gp_window_started)
		__atomic_store_n(&gp_watch, gp_window_closed_bits(), __ATOMIC_RELEASE);
	gp_window_apply(tid);
}

/* ---- a window that never opens: what the hooks saw instead ---------------- */

/* Counted (never recorded) from the start until the window first opens,
 * while the marker has marked nothing yet (an iteration window) or the time
 * has not come (a time window): the blocking calls a `sync` marker does
 * not count and each kernel's launches, so that finish can say why the
 * window never opened and which marker would have worked. A trigger window
 * waits for a request, not for the program: nothing is counted there. */
#define GP_SEEN_KERNELS 64
static struct {
	const void *func; /* pair: claimed by CAS; name written before ready */
	uint64_t launches; /* relaxed adds */
	int ready;        /* pair: stored release after name, loaded acquire */
	char name[128];
} gp_window_seen_k[GP_SEEN_KERNELS];
static uint64_t gp_window_seen_cls[GP_API_CLASS_COUNT]; /* relaxed adds */
static uint64_t gp_window_seen_last; /* trace clock of the latest call seen (relaxed max) */

static int gp_window_seen_wanted(void)
{
	if (gp_window_opened || gp_window_was_held)
		return 0;
	if (gp_cfg.win_mode == GP_WINMODE_TIME)
		return 1;
	return gp_cfg.win_mode == GP_WINMODE_ITERS && gp_window_marks == 0;
}

/* gp_watch while the window is closed (caller holds gp_window_lock). */
static unsigned gp_window_closed_bits(void)
{
	return gp_window_marker_bits() | (gp_window_seen_wanted() ? GP_WINDOW_SEEN_BITS : 0u);
}

/* Name a claimed slot as the report's operator table does (kernel_name.h:
 * demangling allocates, fine here: an application thread in a launch). */
static void gp_window_seen_name(size_t j, const void *func)
{
	const char *name = NULL;
	typedef int (*getname_fn)(const char **, const void *);
	getname_fn fn = (getname_fn)gp_resolve_real("cudaFuncGetName", &real_cudaFuncGetName);
	char *full = NULL, *short_name = NULL;
	if (fn && fn(&name, func) == 0 && name && gp_kernel_name_names(name, &full, &short_name) == 0)
		snprintf(gp_window_seen_k[j].name, sizeof gp_window_seen_k[j].name, "%s", short_name);
	free(full);
	free(short_name);
	__atomic_store_n(&gp_window_seen_k[j].ready, 1, __ATOMIC_RELEASE);
}

static void gp_window_seen_kernel(const void *func)
{
	size_t h = ((uintptr_t)func >> 4) * 0x9E3779B97F4A7C15ull >> 58; /* 0..63 */
	for (size_t i = 0; i < GP_SEEN_KERNELS; i++) {
		size_t j = (h + i) & (GP_SEEN_KERNELS - 1);
		const void *f = __atomic_load_n(&gp_window_seen_k[j].func, __ATOMIC_ACQUIRE);
		if (!f) {
			const void *expect = NULL;
			if (__atomic_compare_exchange_n(&gp_window_seen_k[j].func, &expect, func, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE)) {
				gp_window_seen_name(j, func);
				f = func;
			} else {
				f = expect; /* another thread claimed it first */
			}
		}
		if (f == func) {
			__atomic_fetch_add(&gp_window_seen_k[j].launches, 1, __ATOMIC_RELAXED);
			return;
		}
	}
	/* more kernels than slots: the rest go uncounted (a hint, not a measure) */
}

void gp_window_seen(unsigned cls, const void *func)
{
	if (__atomic_load_n(&gp_window_opened, __ATOMIC_RELAXED) || cls >= GP_API_CLASS_COUNT)
		return;
	__atomic_fetch_add(&gp_window_seen_cls[cls], 1, __ATOMIC_RELAXED);
	uint64_t now = gp_now(), last = __atomic_load_n(&gp_window_seen_last, __ATOMIC_RELAXED);
	while (now > last &&
	       !__atomic_compare_exchange_n(&gp_window_seen_last, &last, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	if (cls == GP_API_LAUNCH && func)
		gp_window_seen_kernel(func);
}

/* The kernel launched most while the window waited (its index), or -1. */
static int gp_window_seen_top(void)
{
	int best = -1;
	uint64_t most = 0;
	for (int i = 0; i < GP_SEEN_KERNELS; i++) {
		uint64_t n = __atomic_load_n(&gp_window_seen_k[i].launches, __ATOMIC_RELAXED);
		if (__atomic_load_n(&gp_window_seen_k[i].ready, __ATOMIC_ACQUIRE) && gp_window_seen_k[i].name[0] &&
		    (best < 0 || n > most)) {
			best = i;
			most = n;
		}
	}
	return best;
}

/* What the marker saw, for an iteration window that never opened. */
static size_t gp_window_unopened_marker(char *b, size_t n)
{
	/* other threads may still count: atomic reads */
	uint64_t copies = __atomic_load_n(&gp_window_seen_cls[GP_API_MEMCPY_SYNC], __ATOMIC_RELAXED) +
			  __atomic_load_n(&gp_window_seen_cls[GP_API_MEMSET_SYNC], __ATOMIC_RELAXED);
	uint64_t implicit = __atomic_load_n(&gp_window_seen_cls[GP_API_SYNC_IMPLICIT], __ATOMIC_RELAXED);
	uint64_t events = __atomic_load_n(&gp_window_seen_cls[GP_API_SYNC_EVENT], __ATOMIC_RELAXED);
	int k = gp_window_seen_top();
	int m;
	if (gp_window_marks == 0)
		m = snprintf(b, n, "no iteration marker: the marker `%s` %s; %" PRIu64 " blocking copies/memsets, %" PRIu64
			     " implicit syncs (cudaFree, cudaMallocHost, ...) and %" PRIu64 " event syncs were seen",
			     gp_cfg.marker_text,
			     gp_cfg.marker == GP_MARKER_SYNC ? "saw no cudaDeviceSynchronize/cudaStreamSynchronize call"
			     : gp_cfg.marker == GP_MARKER_KERNEL ? "matched no launch"
			     : gp_cfg.marker == GP_MARKER_NVTX ? "saw no such NVTX range"
							     : "saw no cudaProfilerStart",
			     copies, implicit, events);
	else
		m = snprintf(b, n, "the marker `%s` counted %" PRIu64 " iteration%s, the window starts after %" PRIu64,
			     gp_cfg.marker_text, gp_window_marks, gp_window_marks == 1 ? "" : "s", gp_cfg.skip);
	size_t w = m < 0 ? 0 : (size_t)m < n ? (size_t)m : n - 1;
	if (gp_window_marks == 0 && k >= 0)
		m = snprintf(b + w, n - w, "; GPUPHASE_ITER_MARKER='kernel:%s' (the most launched kernel, %" PRIu64
			     " launches) would mark each iteration", gp_window_seen_k[k].name,
			     __atomic_load_n(&gp_window_seen_k[k].launches, __ATOMIC_RELAXED));
	else if (gp_window_marks == 0)
		m = snprintf(b + w, n - w, "; no kernel launch was seen: a cudaDeviceSynchronize per iteration or "
			     "GPUPHASE_ITER_MARKER=nvtx:NAME would mark iterations");
	else
		m = snprintf(b + w, n - w, "; a skip= below %" PRIu64 " would open it", gp_window_marks);
	return m < 0 ? w : w + ((size_t)m < n - w ? (size_t)m : n - w - 1);
}

/* A window that never opened: one status record and one line, saying why
 * (caller holds gp_window_lock). No detail string when finish runs inside a
 * hooked call (exit from a signal handler: interning allocates). */
static void gp_window_unopened(void)
{
	if (gp_window_opened || gp_window_was_held || gp_cfg.win_mode == GP_WINMODE_ALL)
		return;
	char why[640];
	int m0;
	if (gp_cfg.win_mode == GP_WINMODE_ITERS)
		m0 = snprintf(why, sizeof why, "capture window never opened (GPUPHASE_WINDOW=skip=%" PRIu64
			      ",iters=%" PRIu64 "): ", gp_cfg.skip, gp_cfg.iters);
	else if (gp_cfg.win_mode == GP_WINMODE_TIME)
		m0 = snprintf(why, sizeof why, "capture window never opened (GPUPHASE_WINDOW=delay=%.3fs,...): ",
			      (double)gp_cfg.delay_ns / 1e9);
	else
		m0 = snprintf(why, sizeof why, "capture window never opened (GPUPHASE_WINDOW=trigger): ");
	size_t w = m0 > 0 ? (size_t)m0 : 0;
	uint64_t now = gp_now(), last = __atomic_load_n(&gp_window_seen_last, __ATOMIC_RELAXED);
	if (gp_cfg.win_mode == GP_WINMODE_ITERS) {
		gp_window_unopened_marker(why + w, sizeof why - w);
	} else if (gp_cfg.win_mode == GP_WINMODE_TIME) {
		int m = snprintf(why + w, sizeof why - w, "the program ended %.3f s after the library started, before "
			     "delay=%.3f s", (double)(now - gp_state_t0) / 1e9, (double)gp_cfg.delay_ns / 1e9);
		if (m > 0 && (size_t)m < sizeof why - w && last > gp_state_t0)
			snprintf(why + w + m, sizeof why - w - (size_t)m, "; its last CUDA call seen was at %.3f s: "
				 "write delay= below that", (double)(last - gp_state_t0) / 1e9);
	} else {
		snprintf(why + w, sizeof why - w, "no `gpuphase trigger` request came");
	}
	gp_log(GP_LOG_ERROR, "%s", why);
	gp_state_status(GP_STATUS_WINDOW_UNOPENED, (int64_t)gp_window_marks,
			gp_tls.in_call || gp_window_no_alloc ? NULL : why);
}

/* ---- marker events -------------------------------------------------------- */

void gp_window_sync_done(uint32_t tid)
{
	int cs = gp_state_lock(&gp_window_lock);
	gp_window_boundary_locked(tid);
	gp_state_unlock(&gp_window_lock, cs);
}

void gp_window_kernel(const void *func, uint32_t tid)
{
	if (!gp_window_kernel_matches(func))
		return;
	int cs = gp_state_lock(&gp_window_lock);
	gp_window_boundary_locked(tid);
	gp_state_unlock(&gp_window_lock, cs);
}

void gp_window_nvtx(const char *name, uint32_t tid)
{
	if (gp_cfg.marker != GP_MARKER_NVTX || !name || strcmp(name, gp_cfg.marker_arg) != 0)
		return;
	if (__atomic_load_n(&gp_state, __ATOMIC_ACQUIRE) != GP_STATE_RUNNING && !gp_lib_ensure_started())
		return;
	int cs = gp_state_lock(&gp_window_lock);
	gp_window_boundary_locked(tid);
	gp_state_unlock(&gp_window_lock, cs);
}

void gp_window_profiler(int start, uint32_t tid)
{
	int cs = gp_state_lock(&gp_window_lock);
	if (start) {
		gp_window_in_range = 1;
		gp_window_boundary_locked(tid);
	} else {
		gp_window_in_range = 0;
		gp_window_apply(tid);
	}
	gp_state_unlock(&gp_window_lock, cs);
}

/* ---- timer ------------------------------------------------------------------ */

/* Until t; in slices (an attach session's timer) it returns early once
 * capture has ended, so that the thread ends with the session. */
static void gp_window_sleep_until(uint64_t t)
{
	for (;;) {
		uint64_t now = gp_now();
		if (now >= t)
			return;
		uint64_t d = t - now;
		if (gp_window_timer_slice) {
			if (__atomic_load_n(&gp_state, __ATOMIC_ACQUIRE) != GP_STATE_RUNNING)
				return;
			if (d > gp_window_timer_slice)
				d = gp_window_timer_slice;
		}
		struct timespec ts = {(time_t)(d / 1000000000u), (long)(d % 1000000000u)};
		nanosleep(&ts, NULL);
	}
}

/* Turn the time window on or off; 1 when it turned. */
static int gp_window_timer_set(int on)
{
	int cs = gp_state_lock(&gp_window_lock);
	unsigned turns = gp_window_turns;
	gp_window_timer_on = on;
	gp_window_apply(gp_state_tid());
	int turned = gp_window_turns != turns;
	gp_state_unlock(&gp_window_lock, cs);
	return turned;
}

/* One time window (delay=,duration=), or with every= a window each period
 * (duty cycle, docs/always-on.md): after each window closes, CUPTI's
 * buffers are flushed into the rings, the stacks seen so far symbolised
 * (the new ones: their names and modules) and the collector ends that
 * window's file, so file SEQ holds window SEQ whole and names its stacks. A window whose time passed
 * while the previous one was being written is skipped, not run late. A
 * window the timer did not open itself but closes (an attach session's
 * hold released inside it) is ended all the same: its records must not
 * run into the next window's file. */
static void *gp_window_timer_run(void)
{
	uint64_t on_at = gp_state_t0 + gp_cfg.delay_ns;
	for (;;) {
		gp_window_sleep_until(on_at);
		if (__atomic_load_n(&gp_state, __ATOMIC_ACQUIRE) != GP_STATE_RUNNING)
			return NULL;
		(void)gp_window_timer_set(1);
		/* the duration counts from when capture really started */
		gp_window_sleep_until(gp_now() + gp_cfg.duration_ns);
		int closed = gp_window_timer_set(0);
		if (!gp_cfg.every_ns)
			return NULL;
		if (closed) {
			gp_cupti_flush();
			gp_stacks_symbolize(0); /* the window's file names its own stacks */
			if (gp_collector_rotate() != 0)
				return NULL;
		}
		uint64_t now = gp_now();
		on_at += gp_cfg.every_ns;
		if (on_at < now)
			on_at += (now - on_at + gp_cfg.every_ns - 1) / gp_cfg.every_ns * gp_cfg.every_ns;
	}
}

static void *gp_window_timer(void *arg)
{
	(void)arg;
	void *r = gp_window_timer_run();
	__atomic_fetch_sub(&gp_window_timer_threads, 1, __ATOMIC_RELEASE);
	return r;
}

int gp_window_timer_live(void)
{
	return __atomic_load_n(&gp_window_timer_threads, __ATOMIC_ACQUIRE);
}

/* ---- trigger ---------------------------------------------------------------- */

void gp_window_request(const char *line, char *reply, size_t len)
{
	unsigned long long n;
	double s;
	char extra;
	int cs = gp_state_lock(&gp_window_lock);
	if (gp_window_stopped && !strcmp(line, "status")) {
		snprintf(reply, len, "ok ended (gpuphase stop): trace complete: %s pid=%ld", gp_window_stopped_trace,
			 (long)getpid());
	} else if (gp_window_stopped) {
		snprintf(reply, len, "error the capture ended (gpuphase stop); trace: %s", gp_window_stopped_trace);
	} else if (!strcmp(line, "status")) {
		int m = snprintf(reply, len, "ok %s iter=%lld pid=%ld marker=%s window=%s",
				 gp_window_on ? "capturing" : "idle", (long long)gp_window_iter, (long)getpid(),
				 gp_cfg.marker_text, gp_cfg.win_mode == GP_WINMODE_TRIGGER ? "trigger" : "fixed");
		const char *dir = gp_collector_windows_dir();
		if (dir[0] && m > 0 && (size_t)m < len) /* duty cycle: a second line */
			snprintf(reply + m, len - (size_t)m, "\nwindows dir=%s last=%llu", dir,
				 (unsigned long long)gp_collector_windows_closed());
	} else if (gp_cfg.win_mode != GP_WINMODE_TRIGGER) {
		snprintf(reply, len, "error not started with GPUPHASE_WINDOW=trigger: only 'status' and 'stop' here");
	} else if (sscanf(line, "capture iters=%llu%c", &n, &extra) == 1 && n > 0 && n < (1ull << 40)) {
		gp_window_trig_from = gp_window_iter + 1;
		gp_window_trig_to = gp_window_iter + 1 + (int64_t)n;
		snprintf(reply, len, "ok capturing iterations %lld..%lld (marker %s)", (long long)gp_window_trig_from,
			 (long long)gp_window_trig_to - 1, gp_cfg.marker_text);
	} else if (sscanf(line, "capture seconds=%lf%c", &s, &extra) == 1 && s > 0 && s < 1e6) {
		gp_window_trig_until = gp_now() + (uint64_t)(s * 1e9);
		gp_window_apply(gp_state_tid());
		snprintf(reply, len, "ok capturing for %g s", s);
	} else {
		snprintf(reply, len, "error expected 'capture iters=M', 'capture seconds=S' or 'status'");
	}
	gp_state_unlock(&gp_window_lock, cs);
}

/* The request line of connection fd into buf (len 256): 0, or -EPERM
 * when the peer is another user (answered here). */
static int gp_window_read_request(int fd, char *buf, size_t len)
{
	size_t n = 0;
	struct ucred cred;
	socklen_t cl = sizeof cred;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 && cred.uid != getuid() && cred.uid != 0) {
		gp_window_control_reply(fd, "error permission denied");
		return -EPERM;
	}
	while (n < len - 1) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 2000) <= 0)
			break;
		ssize_t r = read(fd, buf + n, len - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		if (memchr(buf, '\n', n))
			break;
	}
	buf[n] = 0;
	char *nl = strpbrk(buf, "\r\n");
	if (nl)
		*nl = 0;
	return 0;
}

void gp_window_control_reply(int fd, const char *text)
{
	char reply[256 + GP_PATH_MAX];
	int n = snprintf(reply, sizeof reply - 1, "%s", text);
	size_t rl = n < 0 ? 0 : (size_t)n < sizeof reply - 1 ? (size_t)n : sizeof reply - 2;
	reply[rl++] = '\n';
	(void)!write(fd, reply, rl);
}

int gp_window_control_serve(int fd)
{
	char buf[256], reply[256 + GP_PATH_MAX];
	if (gp_window_read_request(fd, buf, sizeof buf))
		return 0;
	if (!strcmp(buf, "stop"))
		return 1;
	gp_window_request(buf, reply, sizeof reply);
	gp_window_control_reply(fd, reply);
	return 0;
}

static void gp_window_serve_one(int fd)
{
	char buf[256];
	if (gp_window_read_request(fd, buf, sizeof buf))
		return;
	char reply[256 + GP_PATH_MAX];
	if (!strcmp(buf, "stop")) {
		/* `gpuphase stop`: finish outside gp_window_lock (gp_lib_finish
		 * closes the window under it), then say where the trace is */
		int done = gp_lib_finish();
		if (done) {
			int cs = gp_state_lock(&gp_window_lock);
			snprintf(gp_window_stopped_trace, sizeof gp_window_stopped_trace, "%s", gp_state_trace_path);
			gp_window_stopped = 1;
			gp_state_unlock(&gp_window_lock, cs);
		}
		snprintf(reply, sizeof reply - 1, done ? "ok capture ended, trace complete: %s"
						       : "error no capture running (already stopped?)%s",
			 done ? gp_state_trace_path : "");
	} else {
		gp_window_request(buf, reply, sizeof reply - 1);
	}
	gp_window_control_reply(fd, reply);
}

static void *gp_window_server(void *arg)
{
	(void)arg;
	gp_window_serving = 1;
	for (;;) {
		int timeout = -1;
		int cs = gp_state_lock(&gp_window_lock);
		if (gp_window_trig_until) {
			uint64_t now = gp_now();
			if (now >= gp_window_trig_until) {
				gp_window_trig_until = 0;
				gp_window_apply(gp_state_tid());
			} else {
				timeout = (int)((gp_window_trig_until - now) / 1000000u) + 1;
			}
		}
		gp_state_unlock(&gp_window_lock, cs);
		struct pollfd p = {gp_window_listen_fd, POLLIN, 0};
		int r = poll(&p, 1, timeout);
		if (r < 0 && errno != EINTR)
			return NULL;
		if (r > 0) {
			int c = gp_fd_lift(accept4(gp_window_listen_fd, NULL, NULL, SOCK_CLOEXEC));
			if (c >= 0) {
				gp_window_serve_one(c);
				close(c);
			}
		}
	}
	return NULL;
}

/* Remove a leftover of ours at path (a socket a process with this pid left
 * behind when killed): only a socket, never another kind of file someone
 * put there. 0 (nothing there, or removed), or -errno after one line. */
static int gp_window_remove_stale(const char *path, int level, const char *who)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		gp_log(level, "%s: %s exists and is not a socket: not removing it, no control socket "
			      "(`gpuphase stop`/`trigger` cannot reach this process)", who, path);
		return -EEXIST;
	}
	if (unlink(path) != 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* exit() (its atexit handler) and _exit (lib.c gp_lib_exit_finish): also
 * from a signal handler on top of a hook of this thread that holds the
 * window lock (a sync marker's boundary): never waits for it. */
void gp_window_exit_no_alloc(void)
{
	gp_window_no_alloc = 1;
	gp_window_exit();
}

void gp_window_exit(void)
{
	int cs = 0, locked = gp_state_lock_exit(&gp_window_lock, &cs);
	if (gp_window_sock_path[0])
		unlink(gp_window_sock_path);
	gp_window_sock_path[0] = 0;
	if (locked)
		gp_state_unlock(&gp_window_lock, cs);
}

/* The control socket. Its failures are errors in GPUPHASE_WINDOW=trigger
 * (the capture needs it), notes (GPUPHASE_LOG=info) otherwise. */
static int gp_window_listen(void)
{
	int trigger = gp_cfg.win_mode == GP_WINMODE_TRIGGER;
	int level = trigger ? GP_LOG_ERROR : GP_LOG_INFO;
	const char *who = trigger ? "trigger" : "control";
	char dir[GP_PATH_MAX];
	if (gp_cfg.control_dir[0])
		snprintf(dir, sizeof dir, "%s", gp_cfg.control_dir);
	else
		snprintf(dir, sizeof dir, "/tmp/gpuphase-%u", (unsigned)getuid());
	if (mkdir(dir, 0700) && errno != EEXIST) {
		gp_log(level, "%s: cannot create %s: %s", who, dir, strerror(errno));
		return -errno;
	}
	struct stat st;
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
		gp_log(level, "%s: %s must be a directory owned by uid %u with mode 0700", who, dir,
		       (unsigned)getuid());
		return -EPERM;
	}
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	/* The socket is made under a temporary name and renamed once it listens
	 * with its final mode: a client that sees <pid>.sock can connect (bound
	 * but not yet listening, connect fails with ECONNREFUSED). */
	char path[sizeof sa.sun_path];
	int n = snprintf(path, sizeof path, "%s/%ld.sock", dir, (long)getpid());
	int m = snprintf(sa.sun_path, sizeof sa.sun_path, "%s/.%ld.sock.new", dir, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof path || m < 0 || (size_t)m >= sizeof sa.sun_path)
		return -ENAMETOOLONG;
	int rs = gp_window_remove_stale(path, level, who);
	if (rs == 0)
		rs = gp_window_remove_stale(sa.sun_path, level, who);
	if (rs != 0)
		return rs;
	int fd = gp_fd_lift(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)); /* never fd 0-2 */
	if (fd < 0)
		return fd == -1 ? -errno : fd;
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 4) || chmod(sa.sun_path, 0600) ||
	    rename(sa.sun_path, path)) {
		int e = errno;
		gp_log(level, "%s: cannot listen on %s: %s", who, path, strerror(e));
		unlink(sa.sun_path);
		close(fd);
		return -e;
	}
	snprintf(gp_window_sock_path, sizeof gp_window_sock_path, "%s", path);
	gp_window_listen_fd = fd;
	static int registered; /* inherited by a fork child, like the handler */
	if (!registered)
		registered = atexit(gp_window_exit) == 0;
	return 0;
}

int gp_window_control_open(void)
{
	int cs = gp_state_lock(&gp_window_lock);
	int rc = gp_window_listen_fd >= 0 ? -EBUSY : gp_window_listen();
	int fd = rc ? rc : gp_window_listen_fd;
	gp_state_unlock(&gp_window_lock, cs);
	return fd;
}

void gp_window_control_close(void)
{
	int cs = gp_state_lock(&gp_window_lock);
	if (gp_window_sock_path[0])
		unlink(gp_window_sock_path);
	gp_window_sock_path[0] = 0;
	if (gp_window_listen_fd >= 0)
		close(gp_window_listen_fd);
	gp_window_listen_fd = -1;
	gp_state_unlock(&gp_window_lock, cs);
}

/* ---- life cycle --------------------------------------------------------------- */

static int gp_window_thread(void *(*fn)(void *))
{
	pthread_t th;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	/* The thread must not inherit the application's signals. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&th, &at, fn, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	return -r;
}

int gp_window_start(void)
{
	int cs = gp_state_lock(&gp_window_lock);
	gp_window_iter = gp_cfg.marker == GP_MARKER_SYNC ? 0 : -1;
	gp_window_started = 1;
	/* atomic: other threads' hooks may already read it (the state is
	 * RUNNING before the window starts) */
	__atomic_store_n(&gp_window_on, 0, __ATOMIC_RELAXED);
	/* Open the window first, then narrow gp_watch only if it stays closed:
	 * narrowing it before (as this did) let another thread's call skip the
	 * hooks in between, neither recorded nor counted, in a whole-run capture
	 * (test_rel_startup: a few calls short). */
	gp_window_apply(gp_state_tid());
	if (!__atomic_load_n(&gp_window_on, __ATOMIC_RELAXED))
		__atomic_store_n(&gp_watch, gp_window_closed_bits(), __ATOMIC_RELEASE);
	/* an attach session's timer must end soon after the session does */
	gp_window_timer_slice = gp_window_held ? 20 * 1000000ull : 0;
	gp_state_unlock(&gp_window_lock, cs);
	if (gp_cfg.win_mode == GP_WINMODE_TIME) {
		__atomic_fetch_add(&gp_window_timer_threads, 1, __ATOMIC_RELAXED);
		if (gp_window_thread(gp_window_timer)) {
			__atomic_fetch_sub(&gp_window_timer_threads, 1, __ATOMIC_RELAXED);
			gp_log(GP_LOG_ERROR, "cannot start the window timer thread");
		}
	}
	/* held at start: an attach session, whose command holds its control */
	if (!gp_window_held && gp_window_listen() == 0) {
		if (gp_window_thread(gp_window_server)) {
			gp_log(GP_LOG_ERROR, "cannot start the control thread");
			unlink(gp_window_sock_path);
			gp_window_sock_path[0] = 0;
		} else {
			gp_log(GP_LOG_INFO, "control socket %s", gp_window_sock_path);
		}
	}
	return 0;
}

void gp_window_hold(int on)
{
	int cs = gp_state_lock(&gp_window_lock);
	gp_window_held = on;
	if (on)
		gp_window_was_held = 1;
	if (!on)
		gp_window_apply(gp_state_tid());
	gp_state_unlock(&gp_window_lock, cs);
}

void gp_window_finish(void)
{
	/* lib.c's finish, maybe at exit() from a signal handler that
	 * interrupted this thread under the window lock: not waited for */
	int cs = 0, locked = gp_state_lock_exit(&gp_window_lock, &cs);
	if (gp_window_on) {
		int early = gp_cfg.win_mode == GP_WINMODE_ITERS;
		gp_window_mark(GP_REC_WINDOW, early ? GP_WIN_END_EARLY : GP_WIN_STOP, gp_state_tid());
	} else if (gp_window_started) {
		gp_window_deferred_write(); /* the iteration the run ended in */
		gp_window_unopened();
	}
	__atomic_store_n(&gp_window_on, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&gp_watch, 0, __ATOMIC_RELEASE);
	gp_window_started = 0;
	gp_window_held = 0;
	/* a `stop` (on the server thread) keeps the socket: `status` then says
	 * the capture ended; the atexit handler removes it */
	if (gp_window_sock_path[0] && !gp_window_serving) {
		unlink(gp_window_sock_path);
		gp_window_sock_path[0] = 0;
	}
	if (locked)
		gp_state_unlock(&gp_window_lock, cs);
}

void gp_window_forget(void)
{
	/* fork child: only this thread exists; reset the lock it may have inherited held. */
	pthread_mutex_init(&gp_window_lock, NULL);
	pthread_mutex_init(&gp_window_kcache_lock, NULL);
	gp_window_on = 0;
	gp_window_started = 0;
	gp_window_held = 0;
	gp_window_sock_path[0] = 0; /* the parent's socket is the parent's */
	gp_window_opened = 0;
	gp_window_was_held = 0;
	gp_window_marks = 0;
	gp_window_deferred.held = 0;
	memset(gp_window_seen_k, 0, sizeof gp_window_seen_k);
	memset(gp_window_seen_cls, 0, sizeof gp_window_seen_cls);
	gp_window_seen_last = 0;
	gp_window_timer_threads = 0; /* the parent's timer is not in the child */
	if (gp_window_listen_fd >= 0)
		close(gp_window_listen_fd);
	gp_window_listen_fd = -1;
	__atomic_store_n(&gp_watch, 0, __ATOMIC_RELEASE);
}
