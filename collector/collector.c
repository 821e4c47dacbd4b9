/*
 * collector.c — the collector's public face (gp_collector.h): the session
 * state and its life cycle (gp_collector_start / stop / forget), the entry
 * points producers call (gp_collector_emit, gp_collector_intern), the
 * duty cycle's rotation (gp_collector_rotate: writer.c and windows.c end one
 * window's file and start the next) and the counters anyone may read. The pieces it composes: ring.c (the per-thread
 * rings), registry.c (a thread's state and the list of rings), intern.c (the
 * per-thread string cache), writer.c (the writer thread and the file),
 * header.c (the file header) and windows.c (the duty cycle's files).
 *
 * Threads: start/stop/forget run on whichever thread controls capture,
 * serialised by gp_collector_mu (stop is safe from atexit, and
 * gp_collector_stop_at_exit frees nothing: see gp_collector.h); emit and intern
 * on any producing thread, with no lock and no syscall once the thread has
 * its ring.
 *
 * Invariants: gp_g.live_gen is nonzero exactly while a session accepts
 * records; it is published (release) only after the session's fields, the
 * file header and the writer thread exist, and cleared (release) before the
 * writer is told to finish, so every record accepted is drained by it.
 * gp_collector_active says a writer thread is running and must be stopped.
 * A broken invariant (GP_NEVER) clears live_gen early: capture stops, the
 * session stays active until stop.
 */
#include <pthread.h>
#include <stdio.h>
#include "gp_collector_int.h"

struct gp_collector_global gp_g;

static pthread_mutex_t gp_collector_mu = PTHREAD_MUTEX_INITIALIZER; /* start/stop/forget */
static int gp_collector_active;                                      /* under gp_collector_mu */

uint64_t gp_collector_now(void)
{
	struct timespec t;
	clock_gettime((clockid_t)gp_g.clock_id, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int gp_collector_start(const struct gp_collector_config *cfg)
{
	if (!cfg || !cfg->path || !cfg->path[0] || (cfg->nkv && !cfg->kv))
		return -EINVAL;
	uint32_t rr = cfg->ring_records ? cfg->ring_records : GP_RING_DEFAULT_RECORDS;
	if (rr < GP_RING_MIN_RECORDS || rr > GP_RING_MAX_RECORDS || (rr & (rr - 1)))
		return -EINVAL;
	struct timespec probe;
	if (clock_gettime((clockid_t)cfg->clock_id, &probe) != 0)
		return -EINVAL;

	pthread_mutex_lock(&gp_collector_mu);
	if (gp_collector_active) {
		pthread_mutex_unlock(&gp_collector_mu);
		return -EBUSY;
	}
	gp_g.ring_records = rr;
	gp_g.clock_id = cfg->clock_id;
	int rc = gp_writer_open(cfg);
	if (rc) {
		pthread_mutex_unlock(&gp_collector_mu);
		return rc;
	}
	uint64_t gen = ++gp_g.gen_counter;
	atomic_store_explicit(&gp_g.rings, NULL, memory_order_relaxed);
	atomic_store_explicit(&gp_g.dropped_total, 0, memory_order_relaxed);
	atomic_store_explicit(&gp_g.next_string_id, 1, memory_order_relaxed);
	atomic_store_explicit(&gp_g.failed, 0, memory_order_relaxed);
	atomic_store_explicit(&gp_g.invariant_failures, 0, memory_order_relaxed);
	atomic_store_explicit(&gp_g.invariant_logged, 0, memory_order_relaxed);
	if ((rc = gp_writer_launch(gen))) {
		pthread_mutex_unlock(&gp_collector_mu);
		return rc;
	}
	gp_collector_active = 1;
	/* release: pairs with the acquire load in gp_registry_attach; the
	 * session fields above are visible to every producer that sees gen. */
	atomic_store_explicit(&gp_g.live_gen, gen, memory_order_release);
	pthread_mutex_unlock(&gp_collector_mu);
	return 0;
}

static void gp_collector_stop_session(int free_buffers)
{
	pthread_mutex_lock(&gp_collector_mu);
	if (!gp_collector_active) {
		pthread_mutex_unlock(&gp_collector_mu);
		return;
	}
	/* release: pairs with the acquire in gp_registry_attach (no new
	 * records are accepted from here on). */
	atomic_store_explicit(&gp_g.live_gen, 0, memory_order_release);
	gp_writer_stop(free_buffers);
	gp_collector_active = 0;
	pthread_mutex_unlock(&gp_collector_mu);
}

void gp_collector_stop(void)
{
	gp_collector_stop_session(1);
}

void gp_collector_stop_at_exit(void)
{
	gp_collector_stop_session(0);
}

void gp_collector_forget(void)
{
	/* Only the forking thread exists in the child: no writer to stop, no
	 * lock holder to wait for. Leak the parent's rings and buffers (their
	 * other owners are gone) and close our copy of the fd. */
	pthread_mutex_init(&gp_collector_mu, NULL);
	atomic_store_explicit(&gp_g.live_gen, 0, memory_order_release);
	atomic_store_explicit(&gp_g.rings, NULL, memory_order_relaxed);
	gp_writer_forget(gp_collector_active);
	gp_collector_active = 0;
}

int gp_collector_rotate(void)
{
	/* under the control lock: the writer runs until stop, which waits */
	pthread_mutex_lock(&gp_collector_mu);
	int rc = gp_collector_active ? gp_writer_rotate() : -EPIPE;
	pthread_mutex_unlock(&gp_collector_mu);
	return rc;
}

const char *gp_collector_windows_dir(void)
{
	return gp_writer_windows_dir();
}

uint64_t gp_collector_windows_closed(void)
{
	return gp_writer_windows_closed();
}

uint64_t gp_collector_last_writer_cpu_ns(void)
{
	pthread_mutex_lock(&gp_collector_mu);
	uint64_t v = gp_collector_active ? 0 : gp_writer_cpu_ns();
	pthread_mutex_unlock(&gp_collector_mu);
	return v;
}

/* Everything but the one-slot fast path of gp_collector_emit: attaching
 * the thread, groups, validation, drops. Same contract. */
static __attribute__((noinline, cold)) int gp_collector_emit_slow(const union gp_rec *slots, uint32_t nslots)
{
	struct gp_tstate *ts = gp_registry_attach();
	if (!ts)
		return -EPIPE;
	struct gp_ring *r = ts->ring;
	uint8_t type = slots[0].type;
	if (type == GP_REC_INVALID || nslots == 0 || nslots != gp_rec_slots(&slots[0]) ||
	    nslots > GP_BLOCK_MAX_SLOTS)
		return -EINVAL;
	if (gp_ring_push(r, slots, nslots) == 0)
		return 0;
	gp_ring_count_drop(r);
	atomic_fetch_add_explicit(&gp_g.dropped_total, 1, memory_order_relaxed);
	return -ENOBUFS;
}

int gp_collector_count_lost(uint64_t n)
{
	struct gp_tstate *ts = gp_registry_attach();
	if (!ts)
		return -EPIPE;
	struct gp_ring *r = ts->ring;
	/* only the owner writes `dropped` (gp_ring_count_drop) */
	atomic_store_explicit(&r->dropped, atomic_load_explicit(&r->dropped, memory_order_relaxed) + n,
			      memory_order_relaxed);
	atomic_fetch_add_explicit(&gp_g.dropped_total, n, memory_order_relaxed);
	return 0;
}

int gp_collector_emit(const union gp_rec *slots, uint32_t nslots)
{
	/* acquire: pairs with the release store in gp_collector_start. */
	uint64_t gen = atomic_load_explicit(&gp_g.live_gen, memory_order_acquire);
	struct gp_tstate *ts = gp_tls_state;
	uint8_t type = slots[0].type;
	/* Hot path: attached thread (ts->gen == gen implies ts->ring), one
	 * plain slot, room in the ring: a fixed-size copy and one store. */
	if (__builtin_expect(gen && ts && ts->gen == gen && nslots == 1 && type != GP_REC_STRING &&
			     type != GP_REC_STACK && type != GP_REC_INVALID, 1)) {
		struct gp_ring *r = ts->ring;
		uint64_t head = gp_ring_reserve(r, 1);
		if (__builtin_expect(head != UINT64_MAX, 1)) {
			*gp_ring_slot(r, head) = slots[0];
			gp_ring_commit(r, head + 1);
			return 0;
		}
	}
	return gp_collector_emit_slow(slots, nslots);
}

int gp_collector_attach_thread(void)
{
	if (!atomic_load_explicit(&gp_g.live_gen, memory_order_acquire))
		return -EPIPE;
	return gp_registry_attach() ? 0 : -ENOMEM;
}

int gp_collector_thread_ready(void)
{
	uint64_t gen = atomic_load_explicit(&gp_g.live_gen, memory_order_acquire);
	struct gp_tstate *ts = gp_tls_state;
	return gen && ts && ts->gen == gen && ts->ring;
}

uint32_t gp_collector_intern(const char *s, size_t len)
{
	struct gp_tstate *ts = gp_registry_attach();
	if (!ts)
		return 0;
	return gp_intern_in(ts, s, len);
}

uint64_t gp_collector_self_pending(void)
{
	struct gp_tstate *ts = gp_tls_state;
	if (!ts || !ts->ring)
		return 0;
	return gp_ring_used(ts->ring);
}

uint64_t gp_collector_dropped(void)
{
	return atomic_load_explicit(&gp_g.dropped_total, memory_order_relaxed);
}

int gp_collector_failed(void)
{
	return atomic_load_explicit(&gp_g.failed, memory_order_relaxed);
}

void gp_collector_never(const char *cond, const char *file, int line)
{
	atomic_fetch_add_explicit(&gp_g.invariant_failures, 1, memory_order_relaxed);
	/* release: pairs with the acquire loads of live_gen in emit and
	 * attach, as in gp_collector_stop; records already accepted are
	 * still drained by the writer. */
	atomic_store_explicit(&gp_g.live_gen, 0, memory_order_release);
	if (atomic_exchange_explicit(&gp_g.invariant_logged, 1, memory_order_relaxed) == 0)
		fprintf(stderr, "gpuphase: internal error: broken invariant (%s) at %s:%d; capture turned off, "
				"the trace ends here and says so\n", cond, file, line);
}

uint64_t gp_collector_invariant_failures(void)
{
	return atomic_load_explicit(&gp_g.invariant_failures, memory_order_relaxed);
}
