/*
 * hooks.c — the interposed CUDA runtime functions, generated from hooks.def,
 * and their shared slow path.
 *
 * Called by the application's threads, in place of libcudart's functions
 * (LD_PRELOAD puts this object first in the global scope; every hook is
 * exported unversioned so it also interposes cudaX@libcudart.so.13).
 *
 * Hot path (outside the window, or a class nobody watches): resolve-once
 * pointer load, one load of gp_watch and one predictable branch, then a tail
 * call of the real function. Inside the window: errno saved/restored around
 * our work, op id pushed as CUPTI external correlation id (CUSTOM2) around the
 * real call (see below), two clock reads, one GP_REC_HOOK_API store into this thread's
 * ring (plus a GP_REC_STACK_REF when stacks are on). The push happens only for
 * the classes GPUPHASE_CUPTI's extcorr= names (gp_cupti_push_bits); the other
 * calls are joined to CUPTI by thread and time (report/core/join.c). The real function's
 * result is returned unchanged and the CUDA error state is never read or
 * reset (no cudaGetLastError here).
 *
 * Past the gp_watch test a hook counts itself in gp_tls.in_call around the
 * real call, so lib.c's finish knows when exit() came from inside a CUDA
 * call on this thread (a signal handler) and must not synchronize; a call
 * on the hot path is not counted (finish's bound covers it).
 *
 * Invariants: gp_tls.internal > 0 means the library itself is calling CUDA;
 * such calls pass straight through and never appear in the trace.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cuda_profiler_api.h>

#include "gp_collector.h"
#include "gp_lib.h"
#include "hostcb.h"

/* Pair: written with __ATOMIC_RELEASE by lib.c / window.c, read relaxed here. */
unsigned gp_watch = GP_WATCH_ALL;

/* A hook whose arguments are wrapped (hooks.def): in every list but the
 * definitions, an ordinary twin. */
#define GP_HOOK_TWIN_WRAP(n, sfx, p, a, c, s, f, w) GP_HOOK_TWIN(n, sfx, p, a, c, s, f)

enum gp_hook_id {
#define GP_HOOK(n, p, a, c, s, f) GP_HID_##n,
#define GP_HOOK_TWIN(n, sfx, p, a, c, s, f) GP_HID_##n, GP_HID_##n##sfx,
#include "hooks.def"
#undef GP_HOOK
#undef GP_HOOK_TWIN
	GP_HID_COUNT
};

static const struct {
	const char *name;
	uint8_t cls;
} gp_hook_info[GP_HID_COUNT] = {
#define GP_HOOK(n, p, a, c, s, f) {#n, c},
#define GP_HOOK_TWIN(n, sfx, p, a, c, s, f) {#n, c}, {#n #sfx, c},
#include "hooks.def"
#undef GP_HOOK
#undef GP_HOOK_TWIN
};

unsigned gp_hooks_count(void)
{
	return GP_HID_COUNT;
}

const char *gp_hooks_name(unsigned id)
{
	return id < GP_HID_COUNT ? gp_hook_info[id].name : NULL;
}

void gp_hooks_emit_names(void)
{
	for (unsigned i = 0; i < GP_HID_COUNT; i++) {
		union gp_rec r;
		memset(&r, 0, sizeof r);
		r.api_name.type = GP_REC_API_NAME;
		r.api_name.domain = GP_REC_HOOK_API;
		r.api_name.api_id = (uint16_t)i;
		r.api_name.name = gp_collector_intern(gp_hook_info[i].name, strlen(gp_hook_info[i].name));
		r.api_name.api_class = gp_hook_info[i].cls;
		gp_state_emit1(&r);
	}
}

/* Stream handle folded to 32 bits: 0 legacy default, 2 per-thread default. */
static inline uint32_t gp_hooks_stream(const void *s, int twin)
{
	uintptr_t v = (uintptr_t)s;
	if (v == 0)
		return twin ? 2u : 0u;
	if (v == 1)
		return 0u;
	if (v == 2)
		return 2u;
	uint32_t f = (uint32_t)(v ^ ((uint64_t)v >> 32));
	return f <= 2u ? f | 0x80000000u : f;
}

struct gp_call {
	uint64_t t0;
	uint32_t op, tid, stream, stack;
	uint32_t prev_op; /* gp_tls.cur_op before this hook (graphs.c reads it) */
	int *err;         /* this thread's errno, looked up once per call      */
	uint16_t id;
	uint8_t cls, active, nested, pushed;
	int8_t ctr;       /* gp_counters_begin's token, 0 = not bracketed     */
};

static int gp_hooks_enter(struct gp_call *c, unsigned id, unsigned cls, const void *stream, int twin,
			  const void *func) __attribute__((noinline));
static int gp_hooks_enter(struct gp_call *c, unsigned id, unsigned cls, const void *stream, int twin,
			  const void *func)
{
	struct gp_tls *t = &gp_tls;
	if (t->internal)
		return 0;
	int *err = &errno, e = *err;
	if (GP_UNLIKELY(!__atomic_load_n(&gp_state_cuda_used, __ATOMIC_RELAXED)))
		gp_lib_cuda_use();
	if (GP_UNLIKELY(__atomic_load_n(&gp_state, __ATOMIC_ACQUIRE) != GP_STATE_RUNNING) &&
	    !gp_lib_ensure_started_counted()) {
		*err = e;
		return 0;
	}
	if (GP_UNLIKELY(t->startup_lost))
		gp_state_startup_flush();
	c->err = err;
	uint32_t tid = gp_state_tid();
	if (GP_UNLIKELY(gp_cfg.marker == GP_MARKER_KERNEL || gp_cfg.marker == GP_MARKER_PROFILER)) {
		t->internal++; /* marker code may call cudaFuncGetName */
		if (cls == GP_API_LAUNCH && gp_cfg.marker == GP_MARKER_KERNEL && func)
			gp_window_kernel(func, tid);
		else if (id == GP_HID_cudaProfilerStart && gp_cfg.marker == GP_MARKER_PROFILER)
			gp_window_profiler(1, tid);
		t->internal--;
	}
	/* calibrate.c: CUPTI's own cost, measured once in the first launch */
	if (GP_UNLIKELY((unsigned)(__atomic_load_n(&gp_calib_state, __ATOMIC_RELAXED) - 1) < 2u) &&
	    cls == GP_API_LAUNCH)
		gp_calibrate_launch(stream);
	c->id = (uint16_t)id;
	c->cls = (uint8_t)cls;
	c->ctr = 0;
	c->tid = tid;
	c->active = (uint8_t)__atomic_load_n(&gp_window_on, __ATOMIC_RELAXED);
	c->pushed = 0;
	/* running, but the starting thread has not opened the whole-run window
	 * yet: wait for it (bounded, gp_lib_await_start); past the bound, not
	 * recorded, so counted (written = read + dropped) */
	if (GP_UNLIKELY(!c->active) && gp_cfg.win_mode == GP_WINMODE_ALL &&
	    !__atomic_load_n(&gp_state_window_ready, __ATOMIC_ACQUIRE)) {
		if (gp_lib_await_start())
			c->active = (uint8_t)__atomic_load_n(&gp_window_on, __ATOMIC_RELAXED);
		else
			gp_state_count_startup_lost();
		*err = e;
	}
	if (GP_UNLIKELY(!c->active) && (GP_CLASS_BIT(cls) & GP_WINDOW_SEEN_BITS)) {
		t->internal++; /* may call cudaFuncGetName */
		gp_window_seen(cls, func);
		t->internal--;
	}
	if (c->active) {
		c->nested = t->depth > 0;
		t->depth++;
		c->op = gp_state_next_op();
		c->prev_op = t->cur_op;
		t->cur_op = c->op;
		c->stream = gp_hooks_stream(stream, twin);
		c->stack = (gp_stacks_classes & GP_CLASS_BIT(cls)) ? gp_stacks_capture(2) : 0;
		if (__atomic_load_n(&gp_cupti_push_bits, __ATOMIC_RELAXED) & GP_CLASS_BIT(cls)) {
			gp_cupti_push(c->op);
			c->pushed = 1;
		}
	}
	/* GPUPHASE_COUNTERS: a sampled launch is replayed by CUPTI's range
	 * profiler, every other one waits while that runs (counters.c) */
	if (GP_UNLIKELY(__atomic_load_n(&gp_counters_on, __ATOMIC_RELAXED)) &&
	    ((cls == GP_API_LAUNCH && func) || cls == GP_API_GRAPH_LAUNCH))
		c->ctr = (int8_t)gp_counters_begin(cls == GP_API_LAUNCH ? func : NULL, c->active ? c->op : 0);
	*err = e;
	c->t0 = gp_now();
	return 1;
}

static void gp_hooks_exit(struct gp_call *c, cudaError_t r) __attribute__((noinline));
static void gp_hooks_exit(struct gp_call *c, cudaError_t r)
{
	uint64_t t1 = gp_now();
	int e = *c->err;
	if (c->ctr)
		gp_counters_end(c->ctr, r == cudaSuccess);
	if (c->active) {
		if (c->pushed)
			gp_cupti_pop();
		gp_tls.depth--;
		gp_tls.cur_op = c->prev_op;
		union gp_rec rec;
		uint64_t dur = t1 - c->t0;
		rec.api.type = GP_REC_HOOK_API;
		rec.api.class_flags = (uint8_t)(c->cls | (r != cudaSuccess ? GP_APIF_ERROR : 0) |
						(c->nested ? GP_APIF_NESTED : 0));
		if (dur > UINT32_MAX) {
			dur /= 1000u;
			rec.api.class_flags |= GP_APIF_DUR_US;
		}
		rec.api.api_id = c->id;
		rec.api.tid = c->tid;
		rec.api.start = c->t0;
		rec.api.dur = (uint32_t)dur;
		rec.api.corr = c->op;
		rec.api.stream = c->stream;
		rec.api.result = (uint32_t)r;
		gp_collector_emit(&rec, 1);
		if (c->stack) {
			memset(&rec, 0, sizeof rec);
			rec.stack_ref.type = GP_REC_STACK_REF;
			rec.stack_ref.stack = c->stack;
			rec.stack_ref.op = c->op;
			rec.stack_ref.tid = c->tid;
			gp_collector_emit(&rec, 1);
		}
	}
	if ((c->cls == GP_API_SYNC_DEVICE || c->cls == GP_API_SYNC_STREAM) && gp_cfg.marker == GP_MARKER_SYNC)
		gp_window_sync_done(c->tid);
	else if (c->id == GP_HID_cudaProfilerStop && gp_cfg.marker == GP_MARKER_PROFILER)
		gp_window_profiler(0, c->tid);
	*c->err = e;
}

/*
 * One hook. `twin` is 1 for the per-thread-default-stream variants. The
 * function-pointer slot real_<name> is written once by gp_resolve_real
 * (idempotent: every racer stores the same value). `wrap`, inside the
 * window only, may replace the call's arguments before the real call (a
 * host function's, hostcb.c) and gives a token that gp_hostcb_settle gets
 * with the result; NULL for every other hook (the settle then compiles
 * away).
 */
#define GP_HOOK_DEFINE(n, p, a, c, s, f, twin, wrap)                                                            \
	typedef cudaError_t (*gp_fn_##n) p;                                                                \
	cudaError_t n p;                                                                                   \
	static void *real_##n;                                                                             \
	GP_EXPORT cudaError_t n p                                                                          \
	{                                                                                                  \
		gp_fn_##n gp_real_ = (gp_fn_##n)__atomic_load_n(&real_##n, __ATOMIC_RELAXED);                    \
		if (GP_UNLIKELY(!gp_real_)) {                                                                    \
			gp_real_ = (gp_fn_##n)gp_resolve_real(#n, &real_##n);                                    \
			if (!gp_real_)                                                                           \
				return cudaErrorSharedObjectSymbolNotFound;                                \
		}                                                                                          \
		if (GP_LIKELY(!(__atomic_load_n(&gp_watch, __ATOMIC_RELAXED) & GP_CLASS_BIT(c))))          \
			return gp_real_ a;                                                                       \
		struct gp_call gp_call_;                                                                       \
		cudaError_t gp_r_;                                                                             \
		gp_tls.in_call++;                                                                              \
		if (!gp_hooks_enter(&gp_call_, GP_HID_##n, c, (const void *)(s), twin, (f))) {                 \
			gp_r_ = gp_real_ a;                                                                      \
		} else {                                                                                       \
			void *gp_w_ = gp_call_.active ? (wrap) : NULL;                                           \
			gp_r_ = gp_real_ a;                                                                      \
			if (gp_w_)                                                                               \
				gp_hostcb_settle(gp_w_, (int)gp_r_);                                             \
			gp_hooks_exit(&gp_call_, gp_r_);                                                         \
		}                                                                                              \
		gp_tls.in_call--;                                                                              \
		return gp_r_;                                                                                  \
	}                                                                                                  \
	static __typeof__(n) gp_local_##n __attribute__((alias(#n)));

#define GP_HOOK(n, p, a, c, s, f) GP_HOOK_DEFINE(n, p, a, c, s, f, 0, NULL)
#define GP_HOOK_TWIN(n, sfx, p, a, c, s, f)                                                                \
	GP_HOOK_DEFINE(n, p, a, c, s, f, 0, NULL) GP_HOOK_DEFINE(n##sfx, p, a, c, s, f, 1, NULL)
#undef GP_HOOK_TWIN_WRAP
#define GP_HOOK_TWIN_WRAP(n, sfx, p, a, c, s, f, w)                                                        \
	GP_HOOK_DEFINE(n, p, a, c, s, f, 0, w) GP_HOOK_DEFINE(n##sfx, p, a, c, s, f, 1, w)
#include "hooks.def"
#undef GP_HOOK
#undef GP_HOOK_TWIN
#undef GP_HOOK_TWIN_WRAP
#define GP_HOOK_TWIN_WRAP(n, sfx, p, a, c, s, f, w) GP_HOOK_TWIN(n, sfx, p, a, c, s, f)

/* Each hook's function and its real_<name> slot, by hook id (attach_session.c
 * points GOT entries and the runtime's exports at the former, checked
 * against the latter). The functions through their local aliases: the
 * exported name binds in the global scope, where a library loaded after the
 * runtime (attach: dlopen) finds the runtime's function, not its own. */
static void *const gp_hook_fn[GP_HID_COUNT] = {
#define GP_HOOK(n, p, a, c, s, f) (void *)gp_local_##n,
#define GP_HOOK_TWIN(n, sfx, p, a, c, s, f) (void *)gp_local_##n, (void *)gp_local_##n##sfx,
#include "hooks.def"
#undef GP_HOOK
#undef GP_HOOK_TWIN
};

static void **const gp_hook_real_slot[GP_HID_COUNT] = {
#define GP_HOOK(n, p, a, c, s, f) &real_##n,
#define GP_HOOK_TWIN(n, sfx, p, a, c, s, f) &real_##n, &real_##n##sfx,
#include "hooks.def"
#undef GP_HOOK
#undef GP_HOOK_TWIN
};

void *gp_hooks_fn(unsigned id)
{
	return id < GP_HID_COUNT ? gp_hook_fn[id] : NULL;
}

void *gp_hooks_real(unsigned id)
{
	if (id >= GP_HID_COUNT)
		return NULL;
	void *p = __atomic_load_n(gp_hook_real_slot[id], __ATOMIC_RELAXED);
	return p ? p : gp_resolve_real(gp_hook_info[id].name, gp_hook_real_slot[id]);
}
