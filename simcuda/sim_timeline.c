/*
 * sim_timeline.c — the simulated device's timeline: CUPTI's clock as the
 * device clock (busy-waits for host cost, blocking waits for GPU work), the
 * streams and their queues (each stream's tail: when its last op ends, and
 * which op that is), the ordering rules between the legacy default stream and
 * blocking streams, and placing an op on a stream.
 *
 * Callers: every other file of the runtime, on application threads; CUPTI's
 * rebase hook (sim_timeline_rebase) on whichever thread registers a
 * timestamp callback.
 * Locks and invariants: see sim_cudart.h. g_dev.mx guards every stream's tail
 * and capture and the registries; functions below that say "caller holds
 * g_dev.mx" do not take it. A stream's tail_end only grows, except by a
 * rebase, which shifts every stored time by the same delta.
 */
#include <stdlib.h>
#include <time.h>

#include "sim_cudart.h"

struct sim_dev g_dev = {
	.mx = PTHREAD_MUTEX_INITIALIZER,
	.legacy = {.id = SIM_LEGACY_STREAM_ID, .legacy = 1},
	.next_stream_id = 13,
	.next_event_id = 1,
};

pthread_mutex_t g_mem_mx = PTHREAD_MUTEX_INITIALIZER;

static __thread struct sim_stream *t_ptds; /* this thread's per-thread stream */

/* Busy-wait until CUPTI's clock reaches t (host cost really spent). */
void sim_timeline_spin_until(uint64_t t)
{
	while (simcupti_now() < t)
		;
}

/* Block until CUPTI's clock reaches t: sleep most of it, spin the end. */
void sim_timeline_wait_until(uint64_t t)
{
	for (;;) {
		uint64_t now = simcupti_now();
		if (now >= t)
			return;
		uint64_t rem = t - now;
		if (rem > 300000) {
			uint64_t s = rem - 200000;
			struct timespec ts = {.tv_sec = (time_t)(s / 1000000000ull),
					      .tv_nsec = (long)(s % 1000000000ull)};
			nanosleep(&ts, NULL);
		}
	}
}

void sim_timeline_rebase(int64_t delta)
{
	pthread_mutex_lock(&g_dev.mx);
	if (g_dev.legacy.tail_end)
		g_dev.legacy.tail_end += (uint64_t)delta;
	for (struct sim_stream *s = g_dev.streams; s; s = s->next)
		if (s->tail_end)
			s->tail_end += (uint64_t)delta;
	pthread_mutex_unlock(&g_dev.mx);
}

struct sim_stream *sim_timeline_stream_new(int nonblocking)
{
	struct sim_stream *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->nonblocking = nonblocking;
	pthread_mutex_lock(&g_dev.mx);
	s->id = g_dev.next_stream_id++;
	s->next = g_dev.streams;
	g_dev.streams = s;
	pthread_mutex_unlock(&g_dev.mx);
	return s;
}

/* The stream an API call means. per_thread: the call is a _ptsz/_ptds twin. */
struct sim_stream *sim_timeline_stream_of(cudaStream_t st, int per_thread)
{
	if (st == cudaStreamLegacy || (st == NULL && !per_thread))
		return &g_dev.legacy;
	if (st == cudaStreamPerThread || st == NULL) {
		if (!t_ptds)
			t_ptds = sim_timeline_stream_new(0);
		return t_ptds ? t_ptds : &g_dev.legacy;
	}
	return (struct sim_stream *)(void *)st;
}

/*
 * Earliest time work enqueued now on s may start because of ordering, and the
 * op that determines it: s's own tail; for the legacy stream also every
 * blocking stream's tail; for a blocking stream also the legacy tail.
 * Caller holds g_dev.mx.
 */
uint64_t sim_timeline_deps(const struct sim_stream *s, uint32_t *corr)
{
	uint64_t t = s->tail_end;
	uint32_t c = s->tail_corr;
	if (s->legacy) {
		for (struct sim_stream *b = g_dev.streams; b; b = b->next) {
			if (!b->nonblocking && b->tail_end > t) {
				t = b->tail_end;
				c = b->tail_corr;
			}
		}
	} else if (!s->nonblocking && g_dev.legacy.tail_end > t) {
		t = g_dev.legacy.tail_end;
		c = g_dev.legacy.tail_corr;
	}
	*corr = c;
	return t;
}

/* Latest end over every stream (device scope). Takes g_dev.mx. */
uint64_t sim_timeline_device_tail(uint32_t *corr)
{
	pthread_mutex_lock(&g_dev.mx);
	uint64_t t = g_dev.legacy.tail_end;
	uint32_t c = g_dev.legacy.tail_corr;
	for (struct sim_stream *b = g_dev.streams; b; b = b->next) {
		if (b->tail_end > t) {
			t = b->tail_end;
			c = b->tail_corr;
		}
	}
	pthread_mutex_unlock(&g_dev.mx);
	*corr = c;
	return t;
}

/*
 * Place an op of duration dur on s, not before `earliest`. Returns its start;
 * *end gets its end. Caller holds g_dev.mx.
 */
uint64_t sim_timeline_schedule(struct sim_stream *s, uint64_t earliest, uint64_t dur, uint32_t corr,
			       uint64_t *end)
{
	uint32_t dc;
	uint64_t start = sim_max(earliest, sim_timeline_deps(s, &dc));
	*end = start + dur;
	s->tail_end = *end;
	s->tail_corr = corr;
	return start;
}
