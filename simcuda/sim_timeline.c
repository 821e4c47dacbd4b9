/*
 * sim_timeline.c — the simulated device's timeline: CUPTI's clock as the
 * device clock (busy-waits for host cost, blocking waits for GPU work), the
 * streams and their queues (each stream's tail: when its last op ends, and
 * which op that is), the ordering rules between the legacy default stream and
 * blocking streams, and placing an op on a stream; the devices (`devices`
 * key: each has its own legacy stream, streams and timeline; a thread's
 * current device is cudaSetDevice's), the launch queue of each device
 * (`queue_depth`: a min-heap of the ends of its pending ops) and the host
 * waits of implicit synchronization (`implicit_sync`).
 *
 * Callers: every other file of the runtime, on application threads; CUPTI's
 * rebase hook (sim_timeline_rebase) on whichever thread registers a
 * timestamp callback.
 * Locks and invariants: see sim_cudart.h. g_dev.mx guards every stream's tail
 * and capture and the registries; functions below that say "caller holds
 * g_dev.mx" do not take it. A stream's tail_end only grows, except by a
 * rebase, which shifts every stored time by the same delta.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "sim_cudart.h"

struct sim_dev g_dev = {
	.mx = PTHREAD_MUTEX_INITIALIZER,
	.hostfn_done = PTHREAD_COND_INITIALIZER,
	.hostfn_work = PTHREAD_COND_INITIALIZER,
	/* device 0's legacy stream has CUDA's id 7; the others take the ids
	 * below 13, where the other streams' ids begin */
	.legacy = {{.id = SIM_LEGACY_STREAM_ID, .legacy = 1, .device = 0},
		   {.id = SIM_LEGACY_STREAM_ID + 1, .legacy = 1, .device = 1},
		   {.id = SIM_LEGACY_STREAM_ID + 2, .legacy = 1, .device = 2},
		   {.id = SIM_LEGACY_STREAM_ID + 3, .legacy = 1, .device = 3}},
	.next_stream_id = 13,
	.next_event_id = 1,
};

pthread_mutex_t g_mem_mx = PTHREAD_MUTEX_INITIALIZER;

_Static_assert(SIM_MAX_DEVICES == 4 && SIM_LEGACY_STREAM_ID + SIM_MAX_DEVICES <= 13,
	       "one legacy stream initialiser per device, ids below 13");

static __thread struct sim_stream *t_ptds[SIM_MAX_DEVICES]; /* this thread's per-thread streams */
static __thread int t_device;                                /* cudaSetDevice's */

/*
 * A wait's target taken before a clock switch (a client registering CUPTI's
 * timestamp callback on another thread meanwhile, as an attaching profiler
 * does) is on the old clock; real CUDA's waits do not depend on CUPTI's
 * clock, so neither may these. The two clocks of a switch differ by decades
 * (wall clock, monotonic) and no simulated wait lasts a day: a target a day
 * or more away from now is moved by the last switch's delta.
 */
#define SIM_STALE_TARGET_NS 86400000000000ull

static uint64_t sim_dist(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* (only when the move brings it nearer: a target of 0, "nothing to wait
 * for", stays 0) */
static uint64_t sim_timeline_target(uint64_t t, uint64_t now)
{
	if (sim_dist(t, now) < SIM_STALE_TARGET_NS)
		return t;
	uint64_t moved = t + (uint64_t)simcupti_last_rebase();
	return sim_dist(moved, now) < sim_dist(t, now) ? moved : t;
}

/* Busy-wait until CUPTI's clock reaches t (host cost really spent). */
void sim_timeline_spin_until(uint64_t t)
{
	for (uint64_t now; (now = simcupti_now()) < t;)
		t = sim_timeline_target(t, now);
}

/* Block until CUPTI's clock reaches t: sleep most of it, spin the end. */
void sim_timeline_wait_until(uint64_t t)
{
	for (;;) {
		uint64_t now = simcupti_now();
		t = sim_timeline_target(t, now);
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

void sim_timeline_settle(struct sim_stream *s)
{
	while (s->hostfn_pending)
		pthread_cond_wait(&g_dev.hostfn_done, &g_dev.mx);
}

/* Every stream of device dev settled. Caller holds g_dev.mx. */
static void sim_timeline_settle_device(int dev)
{
	sim_timeline_settle(&g_dev.legacy[dev]);
	for (struct sim_stream *b = g_dev.streams; b; b = b->next)
		if (b->device == dev)
			sim_timeline_settle(b);
}

void sim_timeline_hostfn_done(struct sim_stream *s, uint64_t end, uint32_t corr)
{
	pthread_mutex_lock(&g_dev.mx);
	if (end > s->tail_end) {
		s->tail_end = end;
		s->tail_corr = corr;
	}
	s->hostfn_pending--;
	pthread_cond_broadcast(&g_dev.hostfn_done);
	pthread_mutex_unlock(&g_dev.mx);
}

void sim_timeline_rebase(int64_t delta)
{
	pthread_mutex_lock(&g_dev.mx);
	for (int d = 0; d < SIM_MAX_DEVICES; d++) {
		if (g_dev.legacy[d].tail_end)
			g_dev.legacy[d].tail_end += (uint64_t)delta;
		for (size_t i = 0; i < g_dev.queue[d].n; i++)
			g_dev.queue[d].v[i].end += (uint64_t)delta;
	}
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
	s->device = t_device;
	pthread_mutex_lock(&g_dev.mx);
	s->id = g_dev.next_stream_id++;
	s->next = g_dev.streams;
	g_dev.streams = s;
	pthread_mutex_unlock(&g_dev.mx);
	sim_truth_stream(s->id, s->device);
	return s;
}

/* The stream an API call means. per_thread: the call is a _ptsz/_ptds twin. */
struct sim_stream *sim_timeline_stream_of(cudaStream_t st, int per_thread)
{
	if (st == cudaStreamLegacy || (st == NULL && !per_thread))
		return &g_dev.legacy[t_device];
	if (st == cudaStreamPerThread || st == NULL) {
		if (!t_ptds[t_device])
			t_ptds[t_device] = sim_timeline_stream_new(0);
		return t_ptds[t_device] ? t_ptds[t_device] : &g_dev.legacy[t_device];
	}
	return (struct sim_stream *)(void *)st;
}

int sim_timeline_device(void)
{
	return t_device;
}

int sim_timeline_device_count(void)
{
	return g_cfg.devices >= 1 && g_cfg.devices <= SIM_MAX_DEVICES ? (int)g_cfg.devices : 1;
}

int sim_timeline_set_device(int dev)
{
	if (dev < 0 || dev >= sim_timeline_device_count())
		return -EINVAL;
	t_device = dev;
	return 0;
}

struct sim_stream *sim_timeline_legacy(int dev)
{
	return &g_dev.legacy[dev >= 0 && dev < SIM_MAX_DEVICES ? dev : 0];
}

/*
 * Earliest time work enqueued now on s may start because of ordering, and the
 * op that determines it: s's own tail; for the legacy stream also every
 * blocking stream's tail on its device; for a blocking stream also its
 * device's legacy tail. A host function still running on one of those
 * streams is waited for first (real CUDA would return at once and start the
 * op after it: docs/simcuda.md). Caller holds g_dev.mx (released while
 * waiting).
 */
uint64_t sim_timeline_deps(struct sim_stream *s, uint32_t *corr)
{
	if (s->legacy || !s->nonblocking)
		sim_timeline_settle_device(s->device); /* more than needed for a blocking stream: simple */
	else
		sim_timeline_settle(s);
	uint64_t t = s->tail_end;
	uint32_t c = s->tail_corr;
	const struct sim_stream *leg = &g_dev.legacy[s->device];
	if (s->legacy) {
		for (struct sim_stream *b = g_dev.streams; b; b = b->next) {
			if (b->device == s->device && !b->nonblocking && b->tail_end > t) {
				t = b->tail_end;
				c = b->tail_corr;
			}
		}
	} else if (!s->nonblocking && leg->tail_end > t) {
		t = leg->tail_end;
		c = leg->tail_corr;
	}
	*corr = c;
	return t;
}

/* Latest end over every stream of device dev, once no host function holds
 * one (waited for here). Takes g_dev.mx. */
uint64_t sim_timeline_dev_tail(int dev, uint32_t *corr)
{
	pthread_mutex_lock(&g_dev.mx);
	sim_timeline_settle_device(dev >= 0 && dev < SIM_MAX_DEVICES ? dev : 0);
	const struct sim_stream *leg = sim_timeline_legacy(dev);
	uint64_t t = leg->tail_end;
	uint32_t c = leg->tail_corr;
	for (struct sim_stream *b = g_dev.streams; b; b = b->next) {
		if (b->device == leg->device && b->tail_end > t) {
			t = b->tail_end;
			c = b->tail_corr;
		}
	}
	pthread_mutex_unlock(&g_dev.mx);
	*corr = c;
	return t;
}

/* Latest end over every stream of the calling thread's device. Takes g_dev.mx. */
uint64_t sim_timeline_device_tail(uint32_t *corr)
{
	return sim_timeline_dev_tail(t_device, corr);
}

/* ---- the launch queue: a min-heap of pending ops' ends, per device ---------------- */

static void sim_queue_down(struct sim_pending *v, size_t n, size_t i)
{
	for (;;) {
		size_t m = i, l = 2 * i + 1, r = l + 1;
		if (l < n && v[l].end < v[m].end)
			m = l;
		if (r < n && v[r].end < v[m].end)
			m = r;
		if (m == i)
			return;
		struct sim_pending t = v[i];
		v[i] = v[m];
		v[m] = t;
		i = m;
	}
}

/* Drop the ops that have ended by `now`. Caller holds g_dev.mx. */
static void sim_queue_prune(int dev, uint64_t now)
{
	struct sim_pending *v = g_dev.queue[dev].v;
	while (g_dev.queue[dev].n && v[0].end <= now) {
		v[0] = v[--g_dev.queue[dev].n];
		sim_queue_down(v, g_dev.queue[dev].n, 0);
	}
}

/* Count an op as pending on dev until `end`; `issued` is a time the host
 * has already reached (ops ended by then are dropped, so ops that never pass
 * sim_timeline_queue_admit, such as synchronous copies, keep the heap
 * bounded). Caller holds g_dev.mx, so the clock (a CUPTI call) is not read
 * here. Out of memory: the op is not counted (the queue is a model, never a
 * failure). */
static void sim_queue_push(int dev, uint64_t issued, uint64_t end, uint32_t corr)
{
	if (!g_cfg.queue_depth)
		return;
	if (g_dev.queue[dev].n >= g_cfg.queue_depth)
		sim_queue_prune(dev, issued);
	if (g_dev.queue[dev].n == g_dev.queue[dev].cap) {
		size_t cap = g_dev.queue[dev].cap ? 2 * g_dev.queue[dev].cap : 64;
		struct sim_pending *v = realloc(g_dev.queue[dev].v, cap * sizeof *v);
		if (!v)
			return;
		g_dev.queue[dev].v = v;
		g_dev.queue[dev].cap = cap;
	}
	struct sim_pending *v = g_dev.queue[dev].v;
	size_t i = g_dev.queue[dev].n++;
	v[i] = (struct sim_pending){.end = end, .corr = corr};
	while (i && v[(i - 1) / 2].end > v[i].end) {
		struct sim_pending t = v[i];
		v[i] = v[(i - 1) / 2];
		v[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

uint64_t sim_timeline_queue_admit(int dev, uint32_t api_corr)
{
	if (!g_cfg.queue_depth)
		return 0;
	uint64_t now = simcupti_now(), wait_start = now;
	uint32_t waited = 0;
	pthread_mutex_lock(&g_dev.mx);
	for (;;) {
		sim_queue_prune(dev, now);
		if (g_dev.queue[dev].n < g_cfg.queue_depth)
			break;
		uint64_t t = g_dev.queue[dev].v[0].end; /* the first op to end frees a slot */
		waited = g_dev.queue[dev].v[0].corr;
		pthread_mutex_unlock(&g_dev.mx);
		sim_timeline_wait_until(t);
		now = simcupti_now();
		pthread_mutex_lock(&g_dev.mx);
	}
	pthread_mutex_unlock(&g_dev.mx);
	if (!waited)
		return 0;
	sim_timeline_queue_waited(simcupti_thread_id(), wait_start, now, api_corr, waited);
	return now;
}

void sim_timeline_queue_waited(uint32_t tid, uint64_t start, uint64_t end, uint32_t api_corr,
			       uint32_t waited_corr)
{
	sim_truth_sync("queue_full", tid, start, end, api_corr, waited_corr);
	/* what CUPTI 13 reports for it: an OVERHEAD record, COMMAND_BUFFER_FULL
	 * (called without g_dev.mx held, as simcupti_overhead requires) */
	simcupti_overhead(tid, CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL, start, end, api_corr);
}

uint64_t sim_timeline_implicit_sync(const struct sim_call *c, int dev, const char *kind)
{
	if (!g_cfg.implicit_sync)
		return c->start;
	uint32_t wc;
	uint64_t now = simcupti_now(); /* before: dev_tail may wait for a host function */
	uint64_t t = sim_timeline_dev_tail(dev, &wc);
	if (t <= now)
		return c->start;
	sim_timeline_wait_until(t);
	now = simcupti_now();
	sim_truth_sync(kind, simcupti_thread_id(), c->start, now, c->corr, wc);
	return now;
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
	/* every caller passes earliest = a clock reading + launch_latency_ns */
	sim_queue_push(s->device, earliest > g_cfg.launch_latency_ns ? earliest - g_cfg.launch_latency_ns : 0,
		       *end, corr);
	return start;
}
