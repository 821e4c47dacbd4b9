/*
 * gp_collector_int.h — collector internals shared by collector.c, ring.c,
 * registry.c, intern.c, writer.c, header.c and windows.c (and by the
 * collector's own tests and benchmarks).
 * Not API: libgpuphase/ and report/ use gp_collector.h and gp_reader.h only.
 *
 * Locking rule (after Linux kfifo): one producer and one consumer need no
 * lock. Each ring has exactly one producer (the thread that owns it, or nobody
 * after it exited) and one consumer (the writer thread). The producer owns
 * `head` and `tail_cache`; the consumer owns `tail`. Indices are free-running
 * 64-bit counters; slot i lives at slots[i & mask]; head - tail <= cap always.
 *
 * Ring lifetime: a ring has two references, its owner thread's and the
 * collector's (the registry list). Whoever drops the last one frees it. The
 * owner drops its reference when the thread exits (pthread key destructor) or
 * when it notices a new collector session; the writer drops the collector's
 * after it has drained an orphaned ring (refs == 1) or at stop.
 */
#ifndef GP_COLLECTOR_INT_H
#define GP_COLLECTOR_INT_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "gp_collector.h"
#include "gp_file.h"

#define GP_RING_DEFAULT_RECORDS ((uint32_t)GP_COLLECTOR_RING_DEFAULT)
#define GP_RING_MIN_RECORDS 16u
#define GP_RING_MAX_RECORDS (1u << 24)
#define GP_FLUSH_DEFAULT_MS 50u
#define GP_CACHELINE 64

struct gp_ring {
	/* Producer line. head: stored by the producer (release in
	 * gp_ring_commit), loaded by the consumer (acquire in gp_ring_drain).
	 * dropped: producer-only writer, relaxed; the writer reads it relaxed
	 * (a statistic). */
	_Alignas(GP_CACHELINE) _Atomic uint64_t head;
	uint64_t tail_cache;           /* producer's last view of tail          */
	_Atomic uint64_t dropped;
	uint64_t mask;                 /* immutable: cap - 1; on this line so a */
	uint64_t cap;                  /* push touches one ring line, not two   */
	/* Consumer line. tail: stored by the consumer (release in
	 * gp_ring_drain), loaded by the producer (acquire in gp_ring_reserve). */
	_Alignas(GP_CACHELINE) _Atomic uint64_t tail;
	uint64_t drained;              /* writer-only: slots drained            */
	uint64_t drops_reported;       /* writer-only: last GP_REC_DROPS value  */
	/* Shared line: gen and tid are immutable after creation (published by
	 * the registry's release CAS, read after its acquire load); refs and
	 * next change only at thread exit and unlink. */
	_Alignas(GP_CACHELINE) uint64_t gen; /* collector session that created it */
	uint32_t tid;
	_Atomic int refs;              /* see "Ring lifetime" above             */
	_Atomic(struct gp_ring *) next;/* registry link                         */
	_Alignas(GP_CACHELINE) union gp_rec slots[];
};

/* ring.c */
struct gp_ring *gp_ring_create(uint32_t records, uint32_t tid, uint64_t gen);
void gp_ring_unref(struct gp_ring *r);

/* Producer: reserve n slots. Returns the head index at which to write them
 * (with gp_ring_slot) and then pass head + n to gp_ring_commit, or UINT64_MAX
 * when the ring has no room (the caller counts the drop). */
static inline uint64_t gp_ring_reserve(struct gp_ring *r, uint32_t n)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed); /* own */
	if (head + n - r->tail_cache > r->cap) {
		/* acquire: pairs with the release store of tail in
		 * gp_ring_drain, so the consumer has finished reading the
		 * slots we are about to overwrite. */
		r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (head + n - r->tail_cache > r->cap)
			return UINT64_MAX;
	}
	return head;
}

static inline union gp_rec *gp_ring_slot(struct gp_ring *r, uint64_t idx)
{
	return &r->slots[idx & r->mask];
}

/* Producer: publish every slot before new_head. */
static inline void gp_ring_commit(struct gp_ring *r, uint64_t new_head)
{
	/* release: pairs with the acquire load of head in gp_ring_drain, so the
	 * consumer sees the slot contents written before this store. */
	atomic_store_explicit(&r->head, new_head, memory_order_release);
}

/* Producer: count one dropped group. Only the owner writes `dropped`, so a
 * relaxed load + store is enough (no locked RMW on the drop path). */
static inline void gp_ring_count_drop(struct gp_ring *r)
{
	atomic_store_explicit(&r->dropped,
			      atomic_load_explicit(&r->dropped, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* Producer: push n slots all or nothing. 0 or -ENOBUFS (not counted here). */
static inline int gp_ring_push(struct gp_ring *r, const union gp_rec *src, uint32_t n)
{
	uint64_t head = gp_ring_reserve(r, n);
	if (head == UINT64_MAX)
		return -ENOBUFS;
	uint64_t idx = head & r->mask;
	uint64_t first = r->cap - idx;
	if (first >= n) {
		memcpy(&r->slots[idx], src, (size_t)n * GP_REC_SIZE);
	} else {
		memcpy(&r->slots[idx], src, (size_t)first * GP_REC_SIZE);
		memcpy(&r->slots[0], src + first, (size_t)(n - first) * GP_REC_SIZE);
	}
	gp_ring_commit(r, head + n);
	return 0;
}

/* Consumer: hand every whole group available in r to fn (which gets a
 * pointer to the head slot and the slot count; the group is contiguous in a
 * scratch copy when it wraps), then release the slots. Returns the number of
 * slots consumed. Groups were validated by the producer (gp_collector_emit),
 * so gp_rec_slots(head) never exceeds what was published (if it does, the
 * ring is corrupt: GP_NEVER fires and the published slots are given up). */
typedef void (*gp_ring_sink)(void *ctx, const union gp_rec *grp, uint32_t n);
uint64_t gp_ring_drain(struct gp_ring *r, gp_ring_sink fn, void *ctx, union gp_rec *scratch);

/* Slots waiting in r (consumer's or anyone's approximate view). */
static inline uint64_t gp_ring_used(struct gp_ring *r)
{
	return atomic_load_explicit(&r->head, memory_order_acquire) -
	       atomic_load_explicit(&r->tail, memory_order_acquire);
}

/* collector.c holds the global session state (gp_g); registry.c the
 * per-thread state. */
struct gp_intern_entry;
struct gp_tstate {
	struct gp_ring *ring;
	uint64_t gen;                    /* session the ring/cache belong to;
	                                    equal to a live gen only with a ring */
	struct gp_intern_entry *cache;   /* uthash head, intern.c            */
};

struct gp_collector_global {
	/* Nonzero session generation while running, 0 otherwise. Stored with
	 * release by gp_collector_start (after the session's config is set)
	 * and with release 0 by stop/forget; loaded with acquire by every
	 * emit/intern (the pair). */
	_Atomic uint64_t live_gen;
	uint64_t gen_counter;            /* control thread only (start)       */
	uint32_t ring_records;           /* set before live_gen is published  */
	uint32_t clock_id;
	/* Registry: Treiber list head. Producers push with a release CAS;
	 * the writer loads it with acquire (the pair) and is the only one to
	 * unlink nodes. */
	_Atomic(struct gp_ring *) rings;
	_Atomic uint64_t dropped_total;  /* relaxed statistic                 */
	_Atomic uint32_t next_string_id; /* relaxed fetch_add, ids start at 1 */
	_Atomic int failed;              /* set by the writer, relaxed        */
	/* GP_NEVER firings this session (relaxed fetch_add, any thread; the
	 * writer reads it relaxed and reports it) and whether the one log
	 * line was written (exchange, any thread). */
	_Atomic uint64_t invariant_failures;
	_Atomic int invariant_logged;
};
extern struct gp_collector_global gp_g;

/* The calling thread's state, attached to the current session (creating
 * its ring on first use). NULL when the collector is not running or
 * memory ran out. */
struct gp_tstate *gp_registry_attach_slow(uint64_t gen);
extern __thread struct gp_tstate *gp_tls_state __attribute__((tls_model("initial-exec")));

static inline struct gp_tstate *gp_registry_attach(void)
{
	/* acquire: pairs with the release store in gp_collector_start. */
	uint64_t gen = atomic_load_explicit(&gp_g.live_gen, memory_order_acquire);
	if (!gen)
		return NULL;
	struct gp_tstate *ts = gp_tls_state;
	if (ts && ts->gen == gen && ts->ring)
		return ts;
	return gp_registry_attach_slow(gen);
}

/* Writer side: unlink `r` (whose predecessor link is *prev) from the list.
 * Writer thread only. */
void gp_registry_unlink(_Atomic(struct gp_ring *) *prev, struct gp_ring *r);

/* intern.c */
void gp_intern_clear(struct gp_tstate *ts);
uint32_t gp_intern_in(struct gp_tstate *ts, const char *s, size_t len);

/* writer.c — the writer thread's life, driven by collector.c under its
 * control lock: open the trace (header written, no thread), launch the
 * thread for a session, stop it (final drain, footer, close, join), or
 * forget it in a fork child. open and launch return 0 or -errno and leave
 * nothing behind on failure. */
int gp_writer_open(const struct gp_collector_config *cfg);
int gp_writer_launch(uint64_t gen);
void gp_writer_stop(int free_buffers);
void gp_writer_forget(int open);
uint64_t gp_writer_cpu_ns(void); /* the last finished writer's CPU time */
/* Duty cycle: end the current window's file after draining every record
 * emitted before the call, and open the next. Control side, under the
 * collector's control lock, while the writer runs. 0 or -errno. */
int gp_writer_rotate(void);

/* header.c — the file header for cfg, malloc'd into *p (*len bytes). 0 or
 * -errno. */
int gp_header_build(const struct gp_collector_config *cfg, uint64_t flush_ns, uint64_t max_bytes, char **p,
		    size_t *len);
const char *gp_writer_windows_dir(void);
uint64_t gp_writer_windows_closed(void);

/* windows.c — the duty cycle's files (writer thread, but dir_of/dir_make). */
int gp_windows_dir_of(const char *trace_path, char *dir, size_t len);
int gp_windows_dir_make(const char *dir);
int gp_windows_file(const char *dir, uint64_t seq, int part, char *path, size_t len);
void gp_windows_keep(const union gp_rec *g, uint32_t n);
void gp_windows_replay(void (*sink)(void *, const union gp_rec *, uint32_t), void *ctx);
void gp_windows_reset(void);
long gp_windows_prune(const char *dir, uint64_t keep_closed);
extern uint64_t gp_windows_replay_missed;

/* For tests and benchmarks: slots waiting in the calling thread's ring
 * (0 when it has none). Calling thread only. */
uint64_t gp_collector_self_pending(void);
/* For benchmarks: CPU time the writer thread of the last stopped session
 * used, start to finish (0 while a session runs). */
uint64_t gp_collector_last_writer_cpu_ns(void);
/* Trace-clock timestamp (the session's clock id). */
uint64_t gp_collector_now(void);

#endif /* GP_COLLECTOR_INT_H */
