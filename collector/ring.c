/*
 * ring.c — creation, release and the consumer side of the per-thread SPSC
 * record rings (the producer side is inline in gp_collector_int.h, because it
 * is the hot path of every emit). gp_ring_create runs on the producing thread
 * the first time it emits; gp_ring_drain runs on the writer thread only;
 * gp_ring_unref on either (whoever drops the last reference frees).
 *
 * Invariants: cap is a power of two; head and tail are free-running;
 * 0 <= head - tail <= cap; slots in [tail, head) are published and belong to
 * the consumer, the others to the producer; they hold whole groups of at
 * most GP_BLOCK_MAX_SLOTS slots (checked with GP_NEVER).
 */
#include <stdlib.h>
#include "gp_collector_int.h"

/* Allocate a ring of `records` slots (a power of two) owned by thread tid in
 * session gen, with two references. Returns NULL when memory ran out. */
struct gp_ring *gp_ring_create(uint32_t records, uint32_t tid, uint64_t gen)
{
	size_t size = sizeof(struct gp_ring) + (size_t)records * GP_REC_SIZE;
	struct gp_ring *r = aligned_alloc(GP_CACHELINE, (size + GP_CACHELINE - 1) & ~(size_t)(GP_CACHELINE - 1));
	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	atomic_init(&r->dropped, 0);
	atomic_init(&r->refs, 2);
	atomic_init(&r->next, NULL);
	r->cap = records;
	r->mask = records - 1u;
	r->gen = gen;
	r->tid = tid;
	return r;
}

/* Drop one reference; the last one frees the ring. */
void gp_ring_unref(struct gp_ring *r)
{
	/* acq_rel: the release half orders this side's last use of the ring
	 * (the owner's final head store, the writer's final tail store) before
	 * the decrement; the acquire half, on the side that reaches zero, makes
	 * the other side's uses visible before free. The pair is the other
	 * party's gp_ring_unref. */
	if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1)
		free(r);
}

uint64_t gp_ring_drain(struct gp_ring *r, gp_ring_sink fn, void *ctx, union gp_rec *scratch)
{
	/* acquire: pairs with the release store of head in gp_ring_commit. */
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed); /* own */
	uint64_t start = tail;

	while (tail < head) {
		const union gp_rec *h = &r->slots[tail & r->mask];
		uint32_t n = gp_rec_slots(h);
		if (GP_NEVER(n > head - tail || n > GP_BLOCK_MAX_SLOTS)) {
			/* emit validated every group, so the ring is
			 * corrupt: group boundaries are lost, give up what
			 * was published (capture is off now). */
			tail = head;
			break;
		}
		uint64_t idx = tail & r->mask;
		if (idx + n <= r->cap) {
			fn(ctx, h, n);
		} else {
			uint64_t first = r->cap - idx;
			memcpy(scratch, h, (size_t)first * GP_REC_SIZE);
			memcpy(scratch + first, &r->slots[0], (size_t)(n - first) * GP_REC_SIZE);
			fn(ctx, scratch, n);
		}
		tail += n;
	}
	if (tail != start) {
		r->drained += tail - start;
		/* release: pairs with the acquire load of tail in
		 * gp_ring_reserve; our reads of the slots happen before the
		 * producer may overwrite them. */
		atomic_store_explicit(&r->tail, tail, memory_order_release);
	}
	return tail - start;
}
