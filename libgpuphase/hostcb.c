/*
 * hostcb.c — the runs of host functions enqueued on a stream
 * (cudaLaunchHostFunc, cudaStreamAddCallback and their _ptsz twins), which
 * CUPTI does not record.
 *
 * The hooks of those calls (hooks.def), inside the window, hand CUDA one of
 * the two trampolines below in place of the program's function, and a slot
 * of a fixed pool in place of its argument; the slot holds the program's
 * function, its argument and the op id of the enqueuing call. When CUDA runs
 * the trampoline, it reads the clock, copies the slot and frees it, makes
 * sure its thread has a ring (created on a thread's first callback, so the
 * record after the run is only a push), calls the program's function once
 * with the program's own argument (a stream callback also with the stream
 * and the status CUDA passed), reads the clock and writes one
 * GP_REC_HOST_CALLBACK (docs/format.md). The run recorded is what held the
 * stream: the program's function and the trampoline's work before it
 * (a ring's creation on a thread's first callback: microseconds, more under
 * a sanitizer), so a wait for the callback is charged to it whole. A call CUDA
 * refused never runs its function: gp_hostcb_settle frees its slot, and the
 * call's result is returned unchanged by the hook.
 *
 * Threads: gp_hostcb_wrap_* and gp_hostcb_settle on application threads
 * (inside the hook); the trampolines on CUDA's callback thread(s).
 * Invariants: memory is the pool, GP_HOSTCB_MAX_PENDING slots, nothing
 * allocated; a slot is owned by exactly one side at a time (taken with a
 * CAS 0 -> 1 by the wrapping thread, given back with a release store of 0
 * by the trampoline or by settle); with no free slot the program's function
 * goes to CUDA unchanged and is counted (gp_hostcb_lost, finish's
 * GP_STATUS_HOST_CALLBACK_LOST). The program's function is always called
 * exactly once, by CUDA or by a trampoline, never by this file otherwise.
 */
#include <string.h>

#include <cuda_runtime_api.h>

#include "gp_collector.h"
#include "gp_lib.h"
#include "hostcb.h"

struct gp_hostcb_slot {
	void *fn;       /* cudaHostFn_t or cudaStreamCallback_t: see flags */
	void *user;     /* the program's argument                          */
	uint32_t op;    /* hook op id of the enqueuing call                */
	uint8_t flags;  /* GP_HOSTCBF_STREAM_CALLBACK                       */
	uint8_t used;   /* 1 while owned; pair: CAS acquire in take, release
	                   store in give                                    */
};

_Static_assert((GP_HOSTCB_MAX_PENDING & (GP_HOSTCB_MAX_PENDING - 1)) == 0, "pool size is a power of two");

static struct gp_hostcb_slot gp_hostcb_pool[GP_HOSTCB_MAX_PENDING];
static unsigned gp_hostcb_cursor; /* where the next search starts; relaxed */
static uint64_t gp_hostcb_lost;   /* callbacks passed through for want of a slot; relaxed */

/* A free slot, owned by the caller, or NULL when all are pending. */
static struct gp_hostcb_slot *gp_hostcb_take(void)
{
	unsigned at = __atomic_fetch_add(&gp_hostcb_cursor, 1u, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < GP_HOSTCB_MAX_PENDING; i++) {
		struct gp_hostcb_slot *s = &gp_hostcb_pool[(at + i) & (GP_HOSTCB_MAX_PENDING - 1)];
		uint8_t free_ = 0;
		if (!__atomic_load_n(&s->used, __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&s->used, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return s;
	}
	__atomic_fetch_add(&gp_hostcb_lost, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void gp_hostcb_give(struct gp_hostcb_slot *s)
{
	__atomic_store_n(&s->used, 0, __ATOMIC_RELEASE); /* pair: take's CAS */
}

static void gp_hostcb_emit(uint8_t flags, uint32_t op, void *fn, uint64_t t0, uint64_t t1)
{
	union gp_rec r;
	memset(&r, 0, sizeof r);
	uint64_t dur = t1 > t0 ? t1 - t0 : 0;
	r.hostcb.type = GP_REC_HOST_CALLBACK;
	r.hostcb.flags = flags;
	if (dur > UINT32_MAX) {
		dur /= 1000u;
		r.hostcb.flags |= GP_HOSTCBF_DUR_US;
	}
	r.hostcb.tid = gp_state_tid();
	r.hostcb.start = t0;
	r.hostcb.dur = (uint32_t)dur;
	r.hostcb.op = op;
	r.hostcb.fn = (uint64_t)(uintptr_t)fn;
	gp_state_emit1(&r); /* refused by the collector once its session ended */
}

static void CUDART_CB gp_hostcb_run_fn(void *arg)
{
	uint64_t t0 = gp_now();
	struct gp_hostcb_slot *s = arg, k = *s;
	gp_hostcb_give(s);
	gp_collector_attach_thread(); /* the record after the run: a push */
	((cudaHostFn_t)k.fn)(k.user);
	gp_hostcb_emit(k.flags, k.op, k.fn, t0, gp_now());
}

static void CUDART_CB gp_hostcb_run_stream(cudaStream_t stream, cudaError_t status, void *arg)
{
	uint64_t t0 = gp_now();
	struct gp_hostcb_slot *s = arg, k = *s;
	gp_hostcb_give(s);
	gp_collector_attach_thread();
	((cudaStreamCallback_t)k.fn)(stream, status, k.user);
	gp_hostcb_emit(k.flags, k.op, k.fn, t0, gp_now());
}

void *gp_hostcb_wrap_fn(cudaHostFn_t *fn, void **user, uint32_t op)
{
	if (!*fn)
		return NULL; /* CUDA refuses it: nothing to wrap */
	struct gp_hostcb_slot *s = gp_hostcb_take();
	if (!s)
		return NULL;
	s->fn = (void *)*fn;
	s->user = *user;
	s->op = op;
	s->flags = 0;
	*fn = gp_hostcb_run_fn;
	*user = s;
	return s;
}

void *gp_hostcb_wrap_stream(cudaStreamCallback_t *cb, void **user, uint32_t op)
{
	if (!*cb)
		return NULL;
	struct gp_hostcb_slot *s = gp_hostcb_take();
	if (!s)
		return NULL;
	s->fn = (void *)*cb;
	s->user = *user;
	s->op = op;
	s->flags = GP_HOSTCBF_STREAM_CALLBACK;
	*cb = gp_hostcb_run_stream;
	*user = s;
	return s;
}

void gp_hostcb_settle(void *slot, int result)
{
	if (slot && result != 0) /* cudaSuccess is 0: CUDA will not call it */
		gp_hostcb_give(slot);
}

uint64_t gp_hostcb_lost_total(void)
{
	return __atomic_load_n(&gp_hostcb_lost, __ATOMIC_RELAXED);
}
