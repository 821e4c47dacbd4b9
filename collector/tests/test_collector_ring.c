/*
 * test_collector_ring.c — the SPSC ring on its own (wrap-around, full-ring
 * drops, all-or-nothing groups, a real producer/consumer pair under
 * ThreadSanitizer) and string interning through the public API.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include "tutil.h"
#include "gp_collector_int.h"

static union gp_rec mk(uint64_t seq, uint8_t type)
{
	union gp_rec r;
	memset(&r, 0, sizeof(r));
	r.api.type = type;
	r.api.start = seq;
	r.api.corr = (uint32_t)seq;
	return r;
}

struct sink_log {
	union gp_rec got[4096];
	uint32_t nslots[4096];
	size_t n;
};

static void sink(void *ctx, const union gp_rec *g, uint32_t n)
{
	struct sink_log *l = ctx;
	cr_assert_lt(l->n, 4096);
	l->got[l->n] = g[0];
	l->nslots[l->n] = n;
	/* continuation slots must arrive contiguous and intact */
	for (uint32_t i = 1; i < n; i++)
		cr_assert_eq(g[i].raw[0], (uint8_t)(g[0].string.id + i), "continuation %u of group %u", i, g[0].string.id);
	l->n++;
}

Test(ring, wrap_around_with_groups)
{
	static union gp_rec scratch[64];
	struct gp_ring *r = gp_ring_create(16, 1, 1);
	struct sink_log *log = calloc(1, sizeof(*log));
	cr_assert_not_null(r);
	uint64_t seq = 0, expect = 0;
	/* 1000 rounds of 1..5-slot groups: the indices wrap ~250 times and
	 * groups straddle the end of the slot array. */
	for (int round = 0; round < 1000; round++) {
		uint32_t n = 1 + (uint32_t)(round % 5);
		union gp_rec g[5];
		memset(g, 0, sizeof(g));
		g[0].string.type = n == 1 ? GP_REC_KERNEL : GP_REC_STRING;
		g[0].string.id = (uint32_t)seq;
		g[0].string.len = n == 1 ? 0 : GP_STRING_INLINE + (n - 1) * GP_REC_SIZE;
		for (uint32_t i = 1; i < n; i++)
			g[i].raw[0] = (uint8_t)(seq + i);
		cr_assert_eq(gp_rec_slots(&g[0]), n);
		cr_assert_eq(gp_ring_push(r, g, n), 0);
		seq++;
		if (round % 3 == 2) {
			log->n = 0;
			gp_ring_drain(r, sink, log, scratch);
			for (size_t k = 0; k < log->n; k++, expect++)
				cr_assert_eq(log->got[k].string.id, (uint32_t)expect, "order kept across wrap");
		}
	}
	log->n = 0;
	gp_ring_drain(r, sink, log, scratch);
	expect += log->n;
	cr_assert_eq(expect, seq, "every group came out");
	cr_assert_eq(gp_ring_used(r), 0);
	cr_assert_gt(atomic_load(&r->head), 16u * 100u, "indices are free-running");
	gp_ring_unref(r);
	gp_ring_unref(r);
	free(log);
}

Test(ring, full_ring_drops_all_or_nothing)
{
	static union gp_rec scratch[64];
	struct gp_ring *r = gp_ring_create(16, 1, 1);
	struct sink_log *log = calloc(1, sizeof(*log));
	union gp_rec one = mk(0, GP_REC_KERNEL);
	for (int i = 0; i < 14; i++)
		cr_assert_eq(gp_ring_push(r, &one, 1), 0);
	/* 2 slots free: a 3-slot group is refused whole, the ring unchanged */
	union gp_rec g[3];
	memset(g, 0, sizeof(g));
	g[0].string.type = GP_REC_STRING;
	g[0].string.len = GP_STRING_INLINE + 2 * GP_REC_SIZE;
	cr_assert_eq(gp_ring_push(r, g, 3), -ENOBUFS);
	cr_assert_eq(gp_ring_used(r), 14);
	cr_assert_eq(gp_ring_push(r, &one, 1), 0);
	cr_assert_eq(gp_ring_push(r, &one, 1), 0);
	cr_assert_eq(gp_ring_push(r, &one, 1), -ENOBUFS, "full");
	cr_assert_eq(gp_ring_used(r), 16);
	/* a group bigger than the ring can never fit */
	union gp_rec big[17];
	memset(big, 0, sizeof(big));
	big[0].string.type = GP_REC_STRING;
	big[0].string.len = GP_STRING_INLINE + 16 * GP_REC_SIZE;
	gp_ring_drain(r, sink, log, scratch);
	cr_assert_eq(log->n, 16);
	cr_assert_eq(gp_ring_push(r, big, 17), -ENOBUFS);
	cr_assert_eq(gp_ring_push(r, g, 3), 0, "room again after the drain");
	gp_ring_unref(r);
	gp_ring_unref(r);
	free(log);
}

/* A real producer/consumer pair on a tiny ring: the producer retries on
 * -ENOBUFS, so every record must arrive, once, in order. Under `make tsan`
 * this checks the acquire/release pairs. */
struct spsc {
	struct gp_ring *r;
	uint64_t n;
	_Atomic int done;
	uint64_t refused;
};

static void *spsc_producer(void *arg)
{
	struct spsc *s = arg;
	for (uint64_t i = 0; i < s->n; i++) {
		union gp_rec rec = mk(i, GP_REC_KERNEL);
		while (gp_ring_push(s->r, &rec, 1) != 0) {
			s->refused++;
			sched_yield();
		}
	}
	atomic_store(&s->done, 1);
	return NULL;
}

struct order_check {
	uint64_t next;
	int bad;
};

static void order_sink(void *ctx, const union gp_rec *g, uint32_t n)
{
	struct order_check *o = ctx;
	if (n != 1 || g->api.start != o->next)
		o->bad = 1;
	o->next++;
}

Test(ring, spsc_threads_in_order)
{
	static union gp_rec scratch[64];
	struct spsc s = { .r = gp_ring_create(64, 1, 1), .n = 200000 };
	struct order_check o = { 0, 0 };
	pthread_t t;
	pthread_create(&t, NULL, spsc_producer, &s);
	while (!atomic_load(&s.done) || gp_ring_used(s.r))
		gp_ring_drain(s.r, order_sink, &o, scratch);
	pthread_join(t, NULL);
	cr_assert_eq(o.bad, 0, "records in order and intact");
	cr_assert_eq(o.next, s.n, "none lost");
	gp_ring_unref(s.r);
	gp_ring_unref(s.r);
}

/* --- interning through the public API ------------------------------------ */

struct str_seen {
	uint32_t id;
	char text[200];
	uint32_t len;
};

Test(intern, ids_and_strings)
{
	const char *path = tu_path("intern.gpht");
	struct gp_collector_config c = tu_config(path, 256);
	cr_assert_eq(gp_collector_intern("x", 1), 0, "not running: id 0");
	cr_assert_eq(gp_collector_start(&c), 0);
	uint32_t a = gp_collector_intern("alpha", 5);
	uint32_t b = gp_collector_intern("beta", 4);
	uint32_t a2 = gp_collector_intern("alpha", 5);
	uint32_t nul = gp_collector_intern("al\0pha", 6); /* NULs are text too */
	uint32_t pre = gp_collector_intern("alph", 4);    /* a prefix is another text */
	uint32_t empty = gp_collector_intern("", 0);
	cr_assert(a && b && nul && pre && empty);
	cr_assert_eq(a, a2);
	cr_assert(a != b && a != nul && a != pre && b != nul && empty != a);
	/* a record that refers to the ids */
	union gp_rec k;
	memset(&k, 0, sizeof(k));
	k.kernel.type = GP_REC_KERNEL;
	k.kernel.name = a;
	cr_assert_eq(gp_collector_emit(&k, 1), 0);
	gp_collector_stop();

	struct tu_trace t = tu_read(path);
	cr_assert_eq(t.rc, 0, "%s", t.err);
	struct { uint32_t id; const char *s; uint32_t len; } want[] = {
		{ a, "alpha", 5 }, { b, "beta", 4 }, { nul, "al\0pha", 6 }, { pre, "alph", 4 }, { empty, "", 0 } };
	int found[5] = { 0 };
	int kernel_seen = 0;
	for (size_t g = 0; g < t.ngroups; g++) {
		const union gp_rec *h = &t.recs[t.group[g]];
		if (h->type == GP_REC_KERNEL) {
			cr_assert(found[0], "string defined before the record that uses it");
			kernel_seen = 1;
		}
		if (h->type != GP_REC_STRING)
			continue;
		char buf[64];
		size_t len = gp_string_text(h, gp_rec_slots(h), buf, sizeof(buf));
		for (int i = 0; i < 5; i++)
			if (h->string.id == want[i].id) {
				cr_assert_eq(found[i], 0, "each text emitted once per thread");
				cr_assert_eq(len, want[i].len);
				cr_assert_eq(memcmp(buf, want[i].s, len), 0);
				found[i] = 1;
			}
	}
	for (int i = 0; i < 5; i++)
		cr_assert(found[i], "string %d present", i);
	cr_assert(kernel_seen);
	tu_free(&t);
}

/* Each thread keeps its own cache: the same text interned on two threads
 * is defined in each thread's ring (ids may differ; the report merges equal
 * texts). */
static void *intern_thread(void *arg)
{
	uint32_t *id = arg;
	*id = gp_collector_intern("shared_kernel_name", 18);
	return NULL;
}

Test(intern, per_thread_and_long)
{
	const char *path = tu_path("intern2.gpht");
	struct gp_collector_config c = tu_config(path, 8192);
	cr_assert_eq(gp_collector_start(&c), 0);
	uint32_t ids[3];
	pthread_t t[2];
	ids[0] = gp_collector_intern("shared_kernel_name", 18);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, intern_thread, &ids[i + 1]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	/* 100 KB name: never truncated */
	size_t L = 100000;
	char *big = malloc(L);
	for (size_t i = 0; i < L; i++)
		big[i] = (char)(' ' + (i * 7) % 90);
	uint32_t bid = gp_collector_intern(big, L);
	cr_assert_gt(bid, 0);
	/* larger than the ring: refused, not truncated */
	char *huge = calloc(1, 8192u * 32u);
	cr_assert_eq(gp_collector_intern(huge, 8192u * 32u), 0);
	gp_collector_stop();

	struct tu_trace tr = tu_read(path);
	cr_assert_eq(tr.rc, 0, "%s", tr.err);
	int shared = 0, bigok = 0;
	char *buf = malloc(L + 1);
	for (size_t g = 0; g < tr.ngroups; g++) {
		const union gp_rec *h = &tr.recs[tr.group[g]];
		if (h->type != GP_REC_STRING)
			continue;
		size_t len = gp_string_text(h, gp_rec_slots(h), buf, L + 1);
		if (len == 18 && !memcmp(buf, "shared_kernel_name", 18)) {
			shared++;
			cr_assert(h->string.id == ids[0] || h->string.id == ids[1] || h->string.id == ids[2]);
		}
		if (h->string.id == bid) {
			cr_assert_eq(len, L);
			cr_assert_eq(memcmp(buf, big, L), 0, "100 KB name intact");
			bigok = 1;
		}
	}
	cr_assert_eq(shared, 3, "one definition per thread");
	cr_assert(bigok);
	free(buf);
	free(big);
	free(huge);
	tu_free(&tr);
}
