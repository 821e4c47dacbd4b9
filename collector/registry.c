/*
 * registry.c — per-thread producer state and the lock-free list of rings:
 * the attach path that gives a thread its ring on its first record (called
 * by collector.c's emit and intern). The writer thread (writer.c) walks the
 * list and is the only one that unlinks from it.
 *
 * Threads: attach runs on any producing thread; gp_registry_unlink on the
 * writer thread only; gp_registry_thread_exit is the pthread key destructor of
 * a producing thread.
 *
 * Invariants: the list is a Treiber stack that producers only push onto (a
 * release CAS on gp_g.rings, paired with the writer's acquire load of
 * gp_g.rings); only the writer rewrites links, so unlinking needs no ABA
 * protection. A thread's state (struct gp_tstate) is owned by the thread and
 * freed by its key destructor; the ring it points to is shared with the
 * collector through the two-reference rule of gp_collector_int.h. A thread that
 * exits keeps its ring in the list (orphaned, refs == 1) until the writer has
 * drained it, so nothing it wrote is lost.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "gp_collector_int.h"

__thread struct gp_tstate *gp_tls_state __attribute__((tls_model("initial-exec")));

static pthread_key_t gp_tstate_key;
static pthread_once_t gp_tstate_key_once = PTHREAD_ONCE_INIT;
static int gp_tstate_key_ok;

/* Key destructor: the thread is exiting. Hand the ring over (drop the owner's
 * reference; the writer drains and frees it) and free the intern cache. May
 * run again if a later destructor emits (then a new state is attached). */
static void gp_registry_thread_exit(void *arg)
{
	struct gp_tstate *ts = arg;
	if (gp_tls_state == ts)
		gp_tls_state = NULL;
	if (ts->ring)
		gp_ring_unref(ts->ring);
	gp_intern_clear(ts);
	free(ts);
}

static void gp_registry_key_init(void)
{
	gp_tstate_key_ok = pthread_key_create(&gp_tstate_key, gp_registry_thread_exit) == 0;
}

/* Push r onto the registry list. Any thread. */
static void gp_registry_push(struct gp_ring *r)
{
	struct gp_ring *old = atomic_load_explicit(&gp_g.rings, memory_order_relaxed);
	do {
		atomic_store_explicit(&r->next, old, memory_order_relaxed);
		/* release: pairs with the writer's acquire load of gp_g.rings;
		 * publishes the ring's initialised fields and its next link. */
	} while (!atomic_compare_exchange_weak_explicit(&gp_g.rings, &old, r, memory_order_release,
							memory_order_relaxed));
}

void gp_registry_unlink(_Atomic(struct gp_ring *) *prev, struct gp_ring *r)
{
	struct gp_ring *next = atomic_load_explicit(&r->next, memory_order_relaxed);
	if (prev == &gp_g.rings) {
		struct gp_ring *expect = r;
		/* Producers may have pushed in front of r since the writer looked.
		 * relaxed: nothing is published by removing a node. */
		if (atomic_compare_exchange_strong_explicit(&gp_g.rings, &expect, next, memory_order_relaxed,
							    memory_order_relaxed))
			return;
		/* acquire: pairs with the producers' release CAS (we walk the
		 * newly pushed nodes). */
		struct gp_ring *p = atomic_load_explicit(&gp_g.rings, memory_order_acquire);
		while (p && atomic_load_explicit(&p->next, memory_order_relaxed) != r)
			p = atomic_load_explicit(&p->next, memory_order_relaxed);
		if (GP_NEVER(!p)) /* only the writer unlinks: r must be there */
			return;
		prev = &p->next;
	}
	atomic_store_explicit(prev, next, memory_order_relaxed);
}

/* Emit a GP_REC_THREAD record for the calling thread's new ring. */
static void gp_registry_announce(struct gp_tstate *ts, uint32_t tid)
{
	char name[32] = "";
	union gp_rec rec;
	memset(&rec, 0, sizeof(rec));
	rec.thread.type = GP_REC_THREAD;
	rec.thread.tid = tid;
	rec.thread.ts = gp_collector_now();
	if (prctl(PR_GET_NAME, name, 0, 0, 0) == 0 && name[0])
		rec.thread.name = gp_intern_in(ts, name, strnlen(name, sizeof(name)));
	if (gp_ring_push(ts->ring, &rec, 1) != 0) {
		gp_ring_count_drop(ts->ring);
		atomic_fetch_add_explicit(&gp_g.dropped_total, 1, memory_order_relaxed);
	}
}

struct gp_tstate *gp_registry_attach_slow(uint64_t gen)
{
	struct gp_tstate *ts = gp_tls_state;
	if (!ts) {
		pthread_once(&gp_tstate_key_once, gp_registry_key_init);
		if (!gp_tstate_key_ok)
			return NULL;
		ts = calloc(1, sizeof(*ts));
		if (!ts)
			return NULL;
		if (pthread_setspecific(gp_tstate_key, ts) != 0) {
			free(ts);
			return NULL;
		}
		gp_tls_state = ts;
	}
	if (ts->gen != gen) {
		/* A previous session's ring and ids: let them go. */
		if (ts->ring)
			gp_ring_unref(ts->ring);
		ts->ring = NULL;
		gp_intern_clear(ts);
		ts->gen = gen;
	}
	if (!ts->ring) {
		uint32_t tid = (uint32_t)gettid();
		struct gp_ring *r = gp_ring_create(gp_g.ring_records, tid, gen);
		if (!r) {
			ts->gen = 0; /* invariant: ts->gen == live gen implies ts->ring */
			return NULL;
		}
		ts->ring = r;
		gp_registry_push(r);
		gp_registry_announce(ts, tid);
	}
	return ts;
}
