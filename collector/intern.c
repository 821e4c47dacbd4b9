/*
 * intern.c — string interning for producers: gp_intern_in (behind
 * collector.c's gp_collector_intern) maps a text
 * to a process-unique id and makes sure a GP_REC_STRING group with that text
 * precedes, in the calling thread's ring, every record that refers to the id.
 *
 * Threads: any producing thread, on its own cache; no lock, no shared write
 * except one relaxed fetch_add on the global id counter for a new text.
 *
 * Invariants: each thread keeps a uthash table keyed by the exact bytes of the
 * text (any length, NULs allowed). An entry is marked `emitted` only once its
 * string group was pushed; if the ring was full the push is counted as a drop
 * and retried on the next lookup of the same text, so an id handed out is
 * eventually defined in the file unless its thread keeps dropping. Texts are
 * never truncated: a text too large for one ring/block is refused (id 0).
 */
#include <stdlib.h>
#include <uthash.h>
#include "gp_collector_int.h"

struct gp_intern_entry {
	UT_hash_handle hh;
	uint32_t id;
	int emitted;
	size_t len;
	char text[];
};

/* Free every cached entry of ts. Owner thread (or its key destructor). */
void gp_intern_clear(struct gp_tstate *ts)
{
	struct gp_intern_entry *e, *tmp;
	HASH_ITER(hh, ts->cache, e, tmp) {
		HASH_DEL(ts->cache, e);
		free(e);
	}
	ts->cache = NULL;
}

/* Push the string group for e into ts's ring. 0 or -ENOBUFS (counted). */
static int gp_intern_push(struct gp_tstate *ts, const struct gp_intern_entry *e)
{
	struct gp_ring *r = ts->ring;
	uint32_t n = 1u + gp_string_cont_slots((uint32_t)e->len);
	uint64_t head = gp_ring_reserve(r, n);
	if (head == UINT64_MAX) {
		gp_ring_count_drop(r);
		atomic_fetch_add_explicit(&gp_g.dropped_total, 1, memory_order_relaxed);
		return -ENOBUFS;
	}
	union gp_rec *h = gp_ring_slot(r, head);
	memset(h, 0, sizeof(*h));
	h->string.type = GP_REC_STRING;
	h->string.id = e->id;
	h->string.len = (uint32_t)e->len;
	size_t first = e->len < GP_STRING_INLINE ? e->len : GP_STRING_INLINE;
	memcpy(h->string.text, e->text, first);
	size_t off = first;
	for (uint32_t i = 1; i < n; i++) {
		union gp_rec *c = gp_ring_slot(r, head + i);
		size_t k = e->len - off < GP_REC_SIZE ? e->len - off : GP_REC_SIZE;
		memcpy(c->raw, e->text + off, k);
		memset(c->raw + k, 0, GP_REC_SIZE - k);
		off += k;
	}
	gp_ring_commit(r, head + n);
	return 0;
}

/* Intern for an attached thread state. Returns the id, 0 on failure. */
uint32_t gp_intern_in(struct gp_tstate *ts, const char *s, size_t len)
{
	struct gp_intern_entry *e;
	if (!s)
		return 0;
	HASH_FIND(hh, ts->cache, s, len, e);
	if (__builtin_expect(e && e->emitted, 1))
		return e->id;
	if (!e) {
		/* The group must fit in one ring and in one block. */
		uint64_t slots = 1u + (len <= GP_STRING_INLINE ? 0 : (len - GP_STRING_INLINE + GP_REC_SIZE - 1) / GP_REC_SIZE);
		if (len > UINT32_MAX || slots > ts->ring->cap || slots > GP_BLOCK_MAX_SLOTS)
			return 0;
		e = malloc(sizeof(*e) + len);
		if (!e)
			return 0;
		memcpy(e->text, s, len);
		e->len = len;
		e->emitted = 0;
		e->id = atomic_fetch_add_explicit(&gp_g.next_string_id, 1, memory_order_relaxed);
		if (e->id == 0) /* wrapped: skip the reserved 0 */
			e->id = atomic_fetch_add_explicit(&gp_g.next_string_id, 1, memory_order_relaxed);
		HASH_ADD_KEYPTR(hh, ts->cache, e->text, e->len, e);
	}
	if (gp_intern_push(ts, e) == 0)
		e->emitted = 1;
	return e->id;
}
