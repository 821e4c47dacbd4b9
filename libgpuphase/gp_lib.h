/*
 * gp_lib.h — internal interfaces between the files of libgpuphase.so (the
 * preloaded / injected capture library). Nothing here is exported: the .so is
 * built with -fvisibility=hidden and only the hooks (hooks.c), the injection
 * entry points (lib.c, nvtx.c), the attach entry (attach_session.c) and the
 * _exit/_Exit interposers (exitpath.c) carry GP_EXPORT.
 *
 * Module map (one file per module, function prefix = file name; the test
 * tests/layout/test_module_maps.sh holds it to the file list):
 *   state.c     ground floor: gp_cfg, the state word, per-thread state, op
 *               ids, record emission, the start-up loss count
 *   log.c       ground floor: the gpuphase: diagnostic channel (stderr or a
 *               file, never stdout)
 *   config.c    the GPUPHASE_* table, parsing, output-path expansion (pure)
 *   lib.c       top floor, process life: constructor, lazy start, atexit,
 *               fork, InitializeInjection, an attach session's start and stop
 *   exitpath.c  _exit and _Exit interposed: the trace finished as at exit(),
 *               then the real one with the same status
 *   hooks.c     the generated runtime-API hooks (hooks.def) and their hot path
 *   resolve.c   real-symbol resolution (RTLD_NEXT, then RTLD_LOCAL cudart)
 *   cupti.c     CUPTI: dlopen, subscription, clock, buffers, record conversion
 *   window.c    capture window, iteration markers, timer and trigger socket
 *   stacks.c    libunwind call stacks, per-thread interning, symbolisation
 *   pyframes.c  the calling thread's CPython frames, read in place
 *   nvtx.c      NVTX injection (InitializeInjectionNvtx2)
 *   graphs.c    CUDA graph capture mapping (CUPTI graph-node callbacks)
 *   hostcb.c    the runs of host functions enqueued on streams (trampolines;
 *               its hook entry points in hostcb.h)
 *   attach_session.c  the session `gpuphase attach` runs inside the target
 *               process (prefix gp_attach_): GOT and export patching, CUPTI
 *               after the context
 *   hostload.c  the host-load sampler thread
 *   clocks.c    (CLOCK_REALTIME, trace clock) pairs for lining up hosts
 *   counters.c  hardware counters of sampled launches (CUPTI range profiler)
 *   calibrate.c the start-up calibration of CUPTI's own cost per traced call
 *
 * Direction: state.c calls no other file of the library (only the
 * collector) and log.c none; every module may call them. lib.c starts,
 * finishes and forks every module; a module calls lib.c only to ask for one
 * of those (gp_lib_ensure_started*, gp_lib_cuda_use, gp_lib_finish,
 * gp_lib_attach_*), never for shared state.
 *
 * Errors inside the library are 0 / -errno; nothing here exits or aborts.
 */
#ifndef GP_LIB_H
#define GP_LIB_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "gp_format.h"
#include "gp_config.h"

#define GP_EXPORT __attribute__((visibility("default")))
#define GP_LIKELY(x) __builtin_expect(!!(x), 1)
#define GP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define GP_TLS __thread __attribute__((tls_model("initial-exec")))

/* ==== the ground floor: config.c, log.c, state.c (below every module) === */

/* ---- config.c: gp_config.h (pure; also linked into the gpuphase command) */

/* ---- log.c ------------------------------------------------------------- */

void gp_log_init(const struct gp_config *cfg);
void gp_log(enum gp_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gp_log_line(const char *line); /* unconditional, stderr: config errors  */

/* ---- state.c: the state and services every module shares ------------- */

enum gp_state {
	GP_STATE_IDLE = 0,     /* constructed, not started (first hook starts)  */
	GP_STATE_STARTING = 1,
	GP_STATE_RUNNING = 2,
	GP_STATE_INERT = 3     /* disabled, failed, forked child or stopped      */
};

extern struct gp_config gp_cfg;
/* enum gp_state, atomic. Pair: lib.c moves it with an acq_rel CAS
 * (IDLE -> STARTING) and release stores (RUNNING, INERT, IDLE after fork);
 * hooks.c, nvtx.c, graphs.c, window.c, attach_session.c and lib.c read it
 * with acquire loads, so a thread that sees RUNNING also sees the started
 * collector and gp_cfg. window.c's gp_window_apply reads it relaxed, as a
 * hint: it gates only gp_watch and window records, which the collector
 * refuses (-EPIPE) when it is not running. */
extern int gp_state;
extern int gp_state_preloaded;   /* our hooks interpose cudart                 */
extern uint64_t gp_state_t0;     /* trace clock at library load (delay= origin) */
extern const char *gp_state_trace_path; /* the trace file once started, else "" */

/* 1 once the window has been applied after start (gp_window_start): until
 * then a running library records nothing (the window is not open yet), so a
 * call of the whole-run window made in between is counted as lost
 * (gp_state_count_startup_lost). Release store, acquire load. */
extern int gp_state_window_ready;
void gp_state_count_startup_lost(void);
/* Set by lib.c's gp_lib_cuda_use (the hooks' slow path) and
 * InitializeInjection: the program itself uses CUDA, so the library may too
 * (device queries, the exit synchronize). */
extern int gp_state_cuda_used;

/* Trace clock: CLOCK_MONOTONIC_RAW ns. Registered with CUPTI too. */
static inline uint64_t gp_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Per-thread state (hot path). */
struct gp_tls {
	uint32_t tid;        /* gettid, 0 until first use                       */
	uint32_t internal;   /* >0 while the library makes its own CUDA calls   */
	uint32_t depth;      /* hooks active on this thread (nesting)           */
	uint32_t op_next, op_end; /* block of op ids owned by this thread       */
	uint32_t cur_op;     /* op id of the innermost active hook, 0 = none    */
	void *stacks;        /* stacks.c per-thread table                        */
	uint32_t startup_lost; /* calls lost while another thread started us     */
	uint32_t in_call;    /* hooked calls of the slow path in progress here
	                        (lib.c's finish: exit inside a CUDA call)       */
	uint32_t nheld;      /* library locks this thread holds or is taking
	                        (gp_state_lock), the first GP_TLS_HELD in held */
	pthread_mutex_t *held[4];
};
#define GP_TLS_HELD 4
extern GP_TLS struct gp_tls gp_tls;
uint32_t gp_state_tid_slow(void);
uint32_t gp_state_op_block(void);
/* The op-id block [*next, *end) made of the counter value b a fetch returned
 * (the counter moves by 64 and wraps at 2^32): never holds id 0 — a block
 * that crosses 2^32 stops at UINT32_MAX (*end = 0, which gp_state_next_op reads
 * as exhausted once op_next wraps to it), a block starting at 0 starts at 1.
 * Pure; gp_state_op_block's arithmetic, exposed for its unit test. */
static inline void gp_state_op_range(uint32_t b, uint32_t *next, uint32_t *end)
{
	uint32_t e = b + 64u;
	*next = b ? b : 1u;
	*end = e < b ? 0u : e;
}
/* Library locks taken on the program's threads: cancellation is disabled
 * while one is held (a log write, CUPTI or dl* call under it may be a
 * cancellation point; a thread cancelled there would leave the lock held and
 * block every later caller). gp_state_lock returns the previous cancel state,
 * which its pair gp_state_unlock restores after unlocking; a pending cancel
 * then acts at the thread's next cancellation point outside the library.
 *
 * Each thread also notes the locks it holds (gp_tls.held), so that exit()
 * from a signal handler that interrupted this thread under one of them does
 * not wait for it: the interrupted frame never resumes, so the lock would
 * never be released (gp_state_lock_exit). A lock is noted before it is
 * taken and forgotten after it is released; the signal fences order the
 * note against a handler on the same thread, so a handler may see a lock
 * as held that is not yet or no longer held (it then goes on without it,
 * never waits), but never the reverse. */
/* Cancellation off and m noted as held, before it is taken (gp_state_lock,
 * gp_state_trylock); returns the previous cancel state. */
static inline int gp_state_note(pthread_mutex_t *m)
{
	int old = PTHREAD_CANCEL_ENABLE;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	uint32_t n = gp_tls.nheld;
	if (n < GP_TLS_HELD)
		gp_tls.held[n] = m;
	gp_tls.nheld = n + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pair: gp_state_holds in a handler on this thread */
	return old;
}
static inline int gp_state_lock(pthread_mutex_t *m)
{
	int old = gp_state_note(m);
	pthread_mutex_lock(m);
	return old;
}
static inline void gp_state_unlock(pthread_mutex_t *m, int cancel_state)
{
	int ignored;
	pthread_mutex_unlock(m);
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* pair: gp_state_holds in a handler on this thread */
	uint32_t n = gp_tls.nheld;
	if (n == 0)
		return;
	if (n <= GP_TLS_HELD) { /* forget m's note (the last, unless released out of order) */
		uint32_t k = n;
		while (k > 0 && gp_tls.held[k - 1] != m)
			k--;
		for (uint32_t i = k; k > 0 && i < n; i++)
			gp_tls.held[i - 1] = gp_tls.held[i];
	}
	gp_tls.nheld = n - 1;
	pthread_setcancelstate(cancel_state, &ignored);
}
/* gp_state_lock without waiting: 1 and *cs set when m was free and is now
 * held (release with gp_state_unlock(m, *cs)); 0, nothing held, when not. */
static inline int gp_state_trylock(pthread_mutex_t *m, int *cs)
{
	int ignored, old = gp_state_note(m);
	if (pthread_mutex_trylock(m) == 0) {
		*cs = old;
		return 1;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	gp_tls.nheld--; /* the note just made, the last */
	pthread_setcancelstate(old, &ignored);
	return 0;
}
/* Does this thread hold m (or is it taking or releasing it)? More locks
 * than the notes keep count as held: the caller then never waits. */
static inline int gp_state_holds(const pthread_mutex_t *m)
{
	uint32_t n = gp_tls.nheld;
	for (uint32_t i = 0; i < n && i < GP_TLS_HELD; i++)
		if (gp_tls.held[i] == m)
			return 1;
	return n > GP_TLS_HELD;
}
/* On the exit path (finish, atexit handlers), which may run in a signal
 * handler on top of a frame of this thread that holds m: take m unless this
 * thread holds it. 1: taken (release with gp_state_unlock(m, *cs)); 0: not
 * taken, and the caller goes on without it: the frame holding it never
 * resumes (exit does not return) and no other thread can take it, so the
 * data under it is the caller's alone, left as that frame left it. */
static inline int gp_state_lock_exit(pthread_mutex_t *m, int *cs)
{
	if (gp_state_holds(m))
		return 0;
	*cs = gp_state_lock(m);
	return 1;
}
/* gettid, cached per thread. */
static inline uint32_t gp_state_tid(void)
{
	return GP_LIKELY(gp_tls.tid) ? gp_tls.tid : gp_state_tid_slow();
}
/* Next op id: per-thread blocks of 64 from one atomic counter (never 0). */
static inline uint32_t gp_state_next_op(void)
{
	return GP_LIKELY(gp_tls.op_next != gp_tls.op_end) ? gp_tls.op_next++ : gp_state_op_block();
}
/* Emit one record (head only). */
void gp_state_emit1(const union gp_rec *r);
/* Emit a GP_REC_STATUS. */
void gp_state_status(enum gp_status_kind kind, int64_t value, const char *detail);
/* Calls lost while another thread was starting the library: the thread
 * that lost them adds its own to its ring's drops on its next recorded call
 * (gp_state_startup_flush); finish takes what no thread flushed
 * (gp_state_startup_take: the remainder, zeroed). */
void gp_state_startup_flush(void);
uint64_t gp_state_startup_take(void);
/* How many calls were lost at start-up in all (never reset). */
uint64_t gp_state_startup_total(void);

/* ==== the modules ======================================================= */

/* ---- hooks.c ----------------------------------------------------------- */

/* Bit per enum gp_api_class: a hook of class c takes the slow path only when
 * bit c of gp_watch is set. All bits set before start (first hook starts the
 * library), 0 when inert. Written by lib.c / window.c (release), read by every
 * hook (relaxed: a stale value only delays a transition by one call). */
extern unsigned gp_watch;
#define GP_WATCH_ALL 0xffffu
#define GP_CLASS_BIT(c) (1u << (c))
/* Emit GP_REC_API_NAME for every hook id. */
void gp_hooks_emit_names(void);
/* Number of hook ids, and the name of one (tests / debug). */
unsigned gp_hooks_count(void);
const char *gp_hooks_name(unsigned id);
/* Hook id's own function (what a patched entry points to), and the real
 * cudart function it calls, resolved now if it was not yet (NULL when
 * cudart does not have it). Any thread; NULL for an id out of range. */
void *gp_hooks_fn(unsigned id);
void *gp_hooks_real(unsigned id);

/* ---- resolve.c --------------------------------------------------------- */

/* Find the real cudart function `name`: RTLD_NEXT first, then the loaded
 * libcudart.so.N (also when it was loaded RTLD_LOCAL). Caches the result in
 * *slot. Returns NULL if not found (not cached, a later call retries). */
void *gp_resolve_real(const char *name, void **slot);
/* Fork child: reset the lookup lock another parent thread may have held. */
void gp_resolve_forget(void);

/* ---- cupti.c ----------------------------------------------------------- */

extern int gp_cupti_active; /* subscribed and activity usable (relaxed reads) */
/* GP_CLASS_BIT of the hooked classes that push their op id as external
 * correlation (GPUPHASE_CUPTI extcorr=): 0 while activity is off. Written by
 * gp_cupti_capture, read relaxed by the hooks (a stale value only costs or
 * saves one push around a window transition). */
extern unsigned gp_cupti_push_bits;
/* The CUPTI mode in use, fallbacks applied ("lean"), once gp_cupti_open
 * succeeded: the trace header's "cupti" value. */
const char *gp_cupti_mode_text(void);
extern int gp_cupti_keep_clock; /* set before open: no timestamp callback (attach) */
/* dlopen CUPTI, subscribe, register the clock. Returns 0 or -errno; on
 * failure *why names the reason and *cres the CUptiResult (or 0). */
int gp_cupti_open(const struct gp_config *cfg, const char **why, int *cres);
/* Offset added to CUPTI timestamps (0 when our clock callback was accepted). */
int64_t gp_cupti_clock_offset(void);
int gp_cupti_clock_calibrated(void);
/* Runtime-API callbacks on or off: their callback data tell counters.c the
 * context (on from open while counters want one; off from outside any
 * CUPTI callback once it is known). */
void gp_cupti_context_watch(int on);
/* Enable (on) or disable all activity kinds; first enable registers buffers. */
void gp_cupti_capture(int on);
/* Disable the API kinds only (RUNTIME, DRIVER, INTERNAL_LAUNCH_API): exit. */
void gp_cupti_quiesce(void);
void gp_cupti_push(uint32_t op);
void gp_cupti_pop(void);
/* Forced flush of every buffer (off the hot path; not from a CUPTI callback). */
void gp_cupti_flush(void);
/* Flush of the buffers whose records are all complete (flag 0), from the
 * library's own drain thread every 200 ms while capturing (lib.c); any
 * thread but a CUPTI callback's. */
void gp_cupti_flush_completed(void);
/* The library gives up before capturing: unsubscribe, then forget. */
void gp_cupti_close(void);
/* Forget CUPTI in a fork child (no calls into it). */
void gp_cupti_forget(void);
/* For the calibration of CUPTI's cost (calibrate.c), off the hot path:
 * did CUPTI accept its OVERHEAD activity; kernel records on / off (the
 * activity kind capture uses for kernels); one runtime (driver = 0) or
 * driver cbid traced or not (cuptiActivityEnableRuntimeApi / DriverApi,
 * -ENOSYS when this CUPTI lacks them); is that cbid traced in the capture's
 * mode (what to restore); push a 64-bit external id (CUSTOM2). 0 / -errno. */
int gp_cupti_overhead_on(void);
int gp_cupti_kernel_records(int on);
int gp_cupti_api_trace(int driver, unsigned cbid, int on);
int gp_cupti_api_traced(int driver, unsigned cbid);
void gp_cupti_push_id(uint64_t id);
/* Classification of a CUPTI cbid (runtime or driver domain). */
enum gp_api_class gp_cupti_classify(int driver, unsigned cbid);
const char *gp_cupti_cbid_name(int driver, unsigned cbid);

/* ---- counters.c -------------------------------------------------------- */
/* GPUPHASE_COUNTERS asked for and still possible: hooks bracket launches
 * (relaxed reads; set once by gp_counters_open, cleared on a failure). */
extern int gp_counters_on;
/* Look up CUDA 13's profiler in the CUPTI library cupti.c opened (before
 * the trace exists). 0 or -ENOSYS (gp_counters_unavailable says why). */
int gp_counters_open(void *cupti_lib);
/* At finish: counters asked for, possible, and no launch sampled: one
 * GP_STATUS_COUNTERS record (value -1) and one error line saying why and
 * what to write instead. */
void gp_counters_finish(void);
/* Why gp_counters_open refused, or NULL. */
const char *gp_counters_unavailable(void);
/* RESOURCE callbacks: a context was created (1) or is being destroyed (0). */
void gp_counters_context(void *ctx, int created);
/* CUPTI's kernel records (top=N): GPU time of kernel `name` in the warm-up. */
void gp_counters_kernel_time(const char *name, uint64_t ns);
/* A launch hook around its real call: begin before it (op: the hook's op
 * id, 0 when outside the window: never sampled; func NULL: a graph launch,
 * never sampled) returns a token for end (launched: the call succeeded):
 * 0 = nothing to end (a launch made inside a bracketed one), 1 = waited
 * for no sampled launch to be running, 2 = this launch is sampled and
 * replayed. */
int gp_counters_begin(const void *func, uint32_t op);
void gp_counters_end(int token, int launched);
/* Fork child: forget CUPTI and the locks. */
void gp_counters_forget(void);
/* ---- window.c ---------------------------------------------------------- */

extern int gp_window_on; /* capturing now (relaxed reads in hooks)           */
extern unsigned gp_window_turns; /* on/off transitions so far (relaxed)       */
/* Compute the initial state, emit the first WINDOW mark, start timer/trigger
 * threads. Called once from the start path. */
int gp_window_start(void);
/* Hold the window (on = 1): until released, iteration markers are neither
 * counted nor applied, and the window stays as it is (attach_session.c holds it,
 * closed, from before the library starts until every entry is patched, so
 * that iteration 0 is the one in flight when the patch completed, not one
 * the program began before). Releasing applies the window at once. */
void gp_window_hold(int on);
/* Iteration boundary events. */
void gp_window_sync_done(uint32_t tid);          /* marker = sync          */
void gp_window_kernel(const void *func, uint32_t tid); /* marker = kernel  */
void gp_window_nvtx(const char *name, uint32_t tid);    /* marker = nvtx    */
void gp_window_profiler(int start, uint32_t tid);       /* marker = profiler*/
/* Classes watched even outside the window (the marker's). */
unsigned gp_window_marker_bits(void);
/* The classes counted, not recorded, while a window that has not opened yet
 * waits for its first marker or its time (gp_window_seen): what a window that
 * never opens says it saw instead. */
#define GP_WINDOW_SEEN_BITS                                                                      \
	(GP_CLASS_BIT(GP_API_LAUNCH) | GP_CLASS_BIT(GP_API_MEMCPY_SYNC) | GP_CLASS_BIT(GP_API_MEMSET_SYNC) | \
	 GP_CLASS_BIT(GP_API_SYNC_EVENT) | GP_CLASS_BIT(GP_API_SYNC_IMPLICIT))
/* A hooked call of class cls (func: the kernel of a launch, or NULL) made
 * outside the window: counted while the window has never opened. Called
 * by hooks.c with gp_tls.internal raised (it may call cudaFuncGetName). */
void gp_window_seen(unsigned cls, const void *func);
/* Close the window at exit (emits WINDOW STOP if capturing; a window that
 * never opened: one GP_STATUS_WINDOW_UNOPENED record and one error line
 * saying why and which marker would work). */
void gp_window_finish(void);
void gp_window_forget(void);
/* Remove this process's control socket (exit's handler, and _exit's). */
void gp_window_exit(void);
/* gp_window_exit for an _exit (exitpath.c): the finish that follows writes
 * no string (no interning: it may run on top of an interrupted malloc). */
void gp_window_exit_no_alloc(void);
/* Trigger request handling, exposed for tests: returns reply line. */
void gp_window_request(const char *line, char *reply, size_t replylen);
/* The control socket of a duty-cycled attach session, served from its own
 * thread (the session's command holds no control server): open returns the
 * listening descriptor of ${GPUPHASE_CONTROL_DIR}/<pid>.sock or -errno;
 * serve answers one accepted connection's request as the control server
 * does, except `stop`: 1, the connection left open for the session to
 * answer with reply once it has detached; close unlinks and closes it. */
int gp_window_control_open(void);
int gp_window_control_serve(int fd);
void gp_window_control_reply(int fd, const char *text);
void gp_window_control_close(void);
/* Window timer threads still running (an attach session waits for 0). */
int gp_window_timer_live(void);

/* ---- stacks.c ---------------------------------------------------------- */

/* Capture the caller's stack (skipping `skip` library frames), intern it,
 * emit GP_REC_STACK when new for its table; returns its id or 0. */
uint32_t gp_stacks_capture(unsigned skip);
/* Classes (GP_CLASS_BIT mask) that get stacks under a GPUPHASE_STACKS mode;
 * lib.c stores it in gp_stacks_classes at start. */
unsigned gp_stacks_mask(enum gp_stacks mode);
extern unsigned gp_stacks_classes;
/* Symbolise the pcs captured since the last call and not yet written to
 * this trace (emit GP_REC_SYMBOL, and GP_REC_MODULE for objects not yet
 * described): at stop (final: 1, also says the Python frames' cost at
 * GPUPHASE_LOG=debug), and at each duty-cycle window's close (0). */
void gp_stacks_symbolize(int final);
/* A new trace starts (lib start): nothing symbolised in it yet. */
void gp_stacks_new_trace(void);
/* Fork child: drop the parent's free stack tables (their ids are defined in
 * the parent's trace only). */
void gp_stacks_forget(void);

/* ---- pyframes.c -------------------------------------------------------- */

/* Frame names by (code object, instruction offset): one per stack table
 * (stacks.c), so per capturing thread and not in static TLS (the library
 * is also dlopen'ed as a CUDA injection, where static TLS is scarce). */
#define GP_PY_CACHE 256u /* power of two */
struct gp_pyframes_cache {
	struct {
		uintptr_t code;
		intptr_t offset;
		int firstline;
		uint32_t id;
	} e[GP_PY_CACHE];
};
/* The calling thread's Python frames (innermost first, at most max) as
 * GP_PC_PYFRAME pseudo pcs, names cached in c; 0 when the process runs no
 * Python this build knows (said once in the log). */
uint32_t gp_pyframes_capture(struct gp_pyframes_cache *c, uint64_t *pcs, uint32_t max);

/* ---- graphs.c ---------------------------------------------------------- */

/* Resolve cuptiGetGraphId / cuptiGetGraphNodeId from the CUPTI library
 * handle; 0, or -ENOSYS when absent (no capture mapping then). */
int gp_graphs_open(void *cupti_lib);
/* CUPTI resource callback GRAPHNODE_CREATED / GRAPHNODE_CLONED: data is the
 * CUpti_ResourceData. Emits one GP_REC_GRAPH_NODE. */
void gp_graphs_callback(unsigned cbid, const void *data);

/* ---- hostcb.c ---------------------------------------------------------- */

/* Host callbacks run unwrapped for want of a pool slot, so far (finish's
 * GP_STATUS_HOST_CALLBACK_LOST). */
uint64_t gp_hostcb_lost_total(void);

/* ---- hostload.c -------------------------------------------------------- */

/* Start / stop the host-load sampler thread (GP_REC_HOST_SAMPLE every 100 ms,
 * process start and hook cost status once). Start: once, after the window
 * starts; stop: in the exit path before the collector stops (joins, for at
 * most 2 s). Stop returns 1 when no sampler runs any more, 0 when it was
 * left running (past the bound, or not waited for at all: exit() from a
 * signal handler that interrupted the start under its lock). */
void gp_hostload_start(void);
int gp_hostload_stop(void);
/* Fork child: forget the parent's sampler and reset its lock (the parent's
 * sampler may have held it); the child starts no sampler. */
void gp_hostload_forget(void);
/* ns spent in CUPTI buffer completion callbacks (cupti.c adds, relaxed). */
extern uint64_t gp_cupti_buffer_ns;

/* ---- clocks.c ---------------------------------------------------------- */

/* GP_REC_CLOCK_PAIR records: start (right after the collector starts),
 * tick (the sampler, every sample: a pair every GP_CLOCK_PAIR_PERIOD_MS and
 * around wall-clock steps), end (after the sampler is joined, before the
 * collector stops). Never concurrent with one another (clocks.c). */
void gp_clocks_start(void);
void gp_clocks_tick(void);
void gp_clocks_end(void);
/* ---- calibrate.c ------------------------------------------------------- */

/* The calibration of CUPTI's own cost (docs/performance.md): armed at start
 * (gp_calibrate_arm, when GPUPHASE_CUPTI_CALIBRATE allows and the hooks are
 * in: not in an attach session or a fork child), then run by the first
 * hooked kernel launch while capture is on (gp_calibrate_launch, from the
 * hook, before the launch; other threads' launches wait while it runs).
 * gp_calib_state: 0 off, 1 armed, 2 running, 3 done (atomic). */
extern int gp_calib_state;
void gp_calibrate_arm(int attach, int forked);
void gp_calibrate_launch(const void *stream);
void gp_calibrate_forget(void);

/* ---- nvtx.c ------------------------------------------------------------ */
extern int gp_nvtx_used;

/* ==== lib.c: the top floor, process life (start, finish, fork) ========== */

/* Start capture if not started; any thread. Returns 1 when running. Never
 * blocks on another thread's start (returns 0 instead). */
int gp_lib_ensure_started(void);
/* The same for a hooked call of the program: when another thread is
 * starting the library, waits for that start (gp_lib_await_start); past the
 * bound it returns 0 and the call is counted as lost (on this thread, added
 * to its ring's drops by gp_state_startup_flush on its next recorded call). */
int gp_lib_ensure_started_counted(void);
/* Wait until no start is in progress and, when running, the window has
 * opened; at most a bound (lib.c GP_LIB_START_WAIT_NS: 10 s). 1 when that
 * happened, 0 past the bound. Any thread but the starting one. */
int gp_lib_await_start(void);
/* The program uses CUDA (a hook's slow path): sets gp_state_cuda_used and
 * emits the device records once if the library started before (from NVTX). */
void gp_lib_cuda_use(void);
/* End capture for good and complete the trace (window closed, GPU
 * work flushed, stacks symbolised, footer written): what exit does, callable
 * from any thread while the program runs on. 1 if it finished the trace, 0
 * if there was nothing running. */
int gp_lib_finish(void);
/* _exit / _Exit (exitpath.c), before the real one: what the library's
 * exit() handlers do (control socket removed, gp_lib_finish at exit,
 * bounded alike) — only in the process whose capture this is (never in a
 * vfork child, which runs in its parent's memory) and never on top of a
 * finish this thread is already in (a handler that interrupted exit()). */
void gp_lib_exit_finish(void);
/* Attach (attach_session.c): start capture in a running process whose GOT
 * entries and runtime exports attach_session.c will patch (patched: some
 * exist) with CUPTI already opened by it (cupti_rc, why, cres as
 * gp_cupti_open gave them). Returns 1 when running.
 * Stop: close the window, flush, write the trace (its path into path), go
 * inert; the library may be started again by a later attach. */
struct gp_lib_attach_info {
	int patched;
	int cupti_rc;
	const char *why;
	int cres;
	const char *hooks; /* what was hooked: the trace's "attach_hooks" */
};
int gp_lib_attach_start(const struct gp_lib_attach_info *a);
void gp_lib_attach_stop(char *path, size_t len);

#endif /* GP_LIB_H */
