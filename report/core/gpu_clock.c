/*
 * gpu_clock.c — the offset of CUPTI's GPU timestamps from the host clock,
 * bounded from causality and taken out of every GPU time the report
 * compares with a host time (docs/metrics.md §2, "The GPU's clock").
 *
 * CUPTI converts GPU timestamps to the host clock with an error: an offset
 * and a drift. Two facts bound it, per device:
 *  - an op cannot start before its launch call began: offset <= gpu_start -
 *    api_start over every op joined to its runtime or driver API record
 *    (the upper bound, "ops");
 *  - a blocking cudaMemcpy device-to-host (or host-to-device from pinned
 *    memory, which CUDA also completes before returning), or an async copy
 *    to pageable memory that CUDA made synchronous (metrics.md §2's rule),
 *    cannot return before its own transfer ended: offset >= gpu_end -
 *    api_end (the lower bound, "waits"); and so cannot a
 *    cudaDeviceSynchronize return before an op enqueued before it ended
 *    (loosely: the bound, never the estimate; one-device traces only, the
 *    trace does not name the synchronized device).
 * Pass 1 (gp_gpu_clock_api, gp_gpu_clock_gpu) joins API and GPU records on
 * the join key in a small table of its own (pending entries older than
 * GP_GPU_CLOCK_AGE records are dropped: a call that made no op, a lost
 * record) and files each bound in a segment of GPU time (2^24 ns at first;
 * when a device's run exceeds GP_GPU_CLOCK_SEGS segments, pairs merge and
 * segments double: memory is bounded whatever the run's length).
 * gp_gpu_clock_prepare turns them into the correction: in each segment with
 * a lower bound, that bound (the tight side: a host wakes within a fraction
 * of a µs of a copy's end, while a launch reaches the GPU µs after its call
 * began; 0 when it lies less than GP_GPU_CLOCK_WAKE_NS below zero), at the
 * time of the op that set it, not above the segment's upper bound (midway
 * when they cross), is a point, unless it lies more than
 * GP_CLOCK_TOLERANCE_NS below zero or another point, moved by a drift of
 * 10 ppm of the time between them, lies above it (both: a call that returned
 * late bounds the offset loosely); between the points, linear (the drift),
 * flat beyond them. A device without a point is corrected by the least the
 * bounds demand (the lower bound when positive, the upper one when
 * negative, else nothing): never past what the trace bounds. Pass 2 (gp_gpu_clock_correct) moves each GPU
 * record's start and end by the correction at each, so queue, waits and
 * every "ended before the call" decision see host time, ops that touch on
 * a stream still touch, and execute loses the drift inside it.
 * GPUPHASE_REPORT_GPU_CLOCK=raw turns the correction off (the bound is
 * still reported): a control for tests only.
 *
 * Single-threaded, one per analyser (struct gp_gpu_clock in analysis_int.h).
 * Invariants: a table entry is in exactly one of api/gpu, its slot not on the
 * free list; segment i of a device covers [base + (i << shift), base + ((i +
 * 1) << shift)); points are in time order; the synchronizes' ring is in
 * start order. The pass-1 tables and rings are freed by prepare.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"
#include "rep.h"

#define GP_GPU_CLOCK_SHIFT0 24u      /* first segment length: 16.8 ms        */
#define GP_GPU_CLOCK_SEGS 65536u     /* segments per device at most          */
#define GP_GPU_CLOCK_AGE (1u << 20)  /* pass-1 records a pending entry lives  */
#define GP_GPU_CLOCK_EARLY (1ull << 34) /* records may precede the first: 17 s */
#define GP_GPU_CLOCK_WAKE_NS 100     /* a host wakes this soon after a copy's end,
					or sooner (simcuda: 26-50 ns): a lower
					bound that close below zero does not tell
					an offset from none */
#define GP_GPU_CLOCK_RING 4096u     /* recent device syncs and joined ops    */
#define GP_GPU_CLOCK_SCAN 64u       /* joined ops a new sync looks back at   */
#define GP_GPU_CLOCK_DRIFT_PPM 10.0  /* the drift believed at most: a lower bound
					that one elsewhere beats by more is weak */

static struct gp_gpu_clock_dev *gp_gpu_clock_dev(struct gp_an *an, uint8_t d)
{
	struct gp_gpu_clock *c = &an->gclock;
	if (!c->dev[d]) {
		c->dev[d] = calloc(1, sizeof *c->dev[d]);
		if (!c->dev[d]) {
			gp_an_fail(an, -ENOMEM);
			return NULL;
		}
		c->dev[d]->shift = GP_GPU_CLOCK_SHIFT0;
		c->dev[d]->lo = INT64_MIN;
		c->dev[d]->hi = INT64_MAX;
	}
	return c->dev[d];
}

/* Halve the segment count: pairs merge, segments double. */
static void gp_gpu_clock_coarsen(struct gp_gpu_clock_dev *v)
{
	for (size_t i = 0; i < v->nseg; i++) {
		struct gp_gpu_clock_seg *s = &v->seg[i], *d = &v->seg[i / 2];
		if (i % 2 == 0) {
			*d = *s;
			continue;
		}
		if (s->nlo && (!d->nlo || s->lo > d->lo)) {
			d->lo = s->lo;
			d->t_lo = s->t_lo;
		}
		if (s->nhi && (!d->nhi || s->hi < d->hi))
			d->hi = s->hi;
		d->nlo += s->nlo;
		d->nhi += s->nhi;
	}
	v->nseg = (v->nseg + 1) / 2;
	v->shift++;
}

/* The segment of GPU time t on device d, or NULL (t before the device's
 * base, or out of memory). */
static struct gp_gpu_clock_seg *gp_gpu_clock_seg(struct gp_an *an, uint8_t d, uint64_t t)
{
	struct gp_gpu_clock_dev *v = gp_gpu_clock_dev(an, d);
	if (!v)
		return NULL;
	if (!v->seg) {
		v->base = t > GP_GPU_CLOCK_EARLY ? t - GP_GPU_CLOCK_EARLY : 0;
		v->seg = calloc(GP_GPU_CLOCK_SEGS, sizeof *v->seg);
		if (!v->seg) {
			gp_an_fail(an, -ENOMEM);
			return NULL;
		}
	}
	if (t < v->base)
		return NULL;
	while (((t - v->base) >> v->shift) >= GP_GPU_CLOCK_SEGS)
		gp_gpu_clock_coarsen(v);
	size_t i = (size_t)((t - v->base) >> v->shift);
	for (; v->nseg <= i; v->nseg++)
		memset(&v->seg[v->nseg], 0, sizeof v->seg[v->nseg]);
	return &v->seg[i];
}

/* A device synchronize [s0, s1] returned after every op enqueued before it
 * ended: offset >= g1 - s1 for an op whose call ended (a1) by s0. Loose
 * (the call's own time after the wait) and valid only on the device it
 * synchronized, which the trace does not name: kept per device of the op,
 * used by prepare for the bound alone, and only when one device ran ops. */
static void gp_gpu_clock_sync_pair(struct gp_gpu_clock *c, uint8_t dev, uint64_t g1, uint64_t s1)
{
	int64_t lo = (int64_t)(g1 - s1);
	if (!c->sync_n[dev] || lo > c->sync_lo[dev])
		c->sync_lo[dev] = lo;
	c->sync_n[dev]++;
}

#define GP_SYNC_AT(c, i) ((c)->syncs[((c)->sync_head + (i)) % GP_GPU_CLOCK_RING])

/* A joined op: the first recent sync that began after its call ended. */
static void gp_gpu_clock_op_syncs(struct gp_an *an, uint8_t dev, uint64_t a1, uint64_t g1)
{
	struct gp_gpu_clock *c = &an->gclock;
	if (!c->ops) {
		c->ops = calloc(GP_GPU_CLOCK_RING, sizeof *c->ops);
		if (!c->ops) {
			gp_an_fail(an, -ENOMEM);
			return;
		}
	}
	c->ops[c->ops_next].a1 = a1;
	c->ops[c->ops_next].g1 = g1;
	c->ops[c->ops_next].dev = dev;
	c->ops_next = (c->ops_next + 1) % GP_GPU_CLOCK_RING;
	if (c->nops < GP_GPU_CLOCK_RING)
		c->nops++;
	size_t lo = 0, hi = c->nsyncs; /* the first with s0 >= a1 */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (GP_SYNC_AT(c, mid).s0 < a1)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->nsyncs)
		gp_gpu_clock_sync_pair(c, dev, g1, GP_SYNC_AT(c, lo).s1);
}

/* A device synchronize: into the ring (start order), and against the
 * recent joined ops whose call ended by its start. */
static void gp_gpu_clock_sync(struct gp_an *an, uint64_t s0, uint64_t s1)
{
	struct gp_gpu_clock *c = &an->gclock;
	if (!c->syncs) {
		c->syncs = calloc(GP_GPU_CLOCK_RING, sizeof *c->syncs);
		if (!c->syncs) {
			gp_an_fail(an, -ENOMEM);
			return;
		}
	}
	if (c->nsyncs == GP_GPU_CLOCK_RING) { /* the oldest leaves */
		c->sync_head = (c->sync_head + 1) % GP_GPU_CLOCK_RING;
		c->nsyncs--;
	}
	size_t i = c->nsyncs++;
	for (; i > 0 && GP_SYNC_AT(c, i - 1).s0 > s0; i--) /* records come nearly in order */
		GP_SYNC_AT(c, i) = GP_SYNC_AT(c, i - 1);
	GP_SYNC_AT(c, i).s0 = s0;
	GP_SYNC_AT(c, i).s1 = s1;
	/* one call has up to three records (hook, runtime, driver), nested:
	 * counted once */
	int nested = 0;
	for (size_t k = i ? i - 1 : 0; k <= i + 1 && k < c->nsyncs; k++) {
		uint64_t t0 = GP_SYNC_AT(c, k).s0, t1 = GP_SYNC_AT(c, k).s1;
		if (k != i && ((t0 <= s0 && s1 <= t1) || (s0 <= t0 && t1 <= s1)))
			nested = 1;
	}
	c->nsync_calls += !nested;
	for (size_t k = 0; k < c->nops && k < GP_GPU_CLOCK_SCAN; k++) {
		size_t j = (c->ops_next + GP_GPU_CLOCK_RING - 1 - k) % GP_GPU_CLOCK_RING;
		if (c->ops[j].a1 <= s0)
			gp_gpu_clock_sync_pair(c, c->ops[j].dev, c->ops[j].g1, s1);
	}
}

/* A joined op: its call [a0, a1] of class cls, its GPU record g. */
static void gp_gpu_clock_pair(struct gp_an *an, uint64_t a0, uint64_t a1, uint8_t cls, const struct gp_gpu_clock_pend *g)
{
	if (!g->a)
		return;
	struct gp_gpu_clock_seg *s = gp_gpu_clock_seg(an, g->dev, g->a);
	if (!s)
		return;
	struct gp_gpu_clock_dev *v = an->gclock.dev[g->dev];
	int64_t hi = (int64_t)(g->a - a0);
	if (!s->nhi || hi < s->hi)
		s->hi = hi;
	s->nhi++;
	if (hi < v->hi)
		v->hi = hi;
	v->nhi++;
	if (a1 && g->b && !(g->flags & GP_GPU_CLOCK_MISSING))
		gp_gpu_clock_op_syncs(an, g->dev, a1, g->b);
	/* a copy that returned after its own transfer, as CUDA documents it
	 * ("API synchronization behavior"): a cudaMemcpy DtoH, or HtoD from
	 * pinned memory (from pageable memory it "will return once the
	 * pageable buffer has been copied to the staging memory", maybe before
	 * the DMA ended); a cudaMemcpyAsync DtoH to pageable memory that CUDA
	 * made synchronous (metrics.md §2's rule: it returned no earlier than
	 * the clock tolerance before its end) */
	int copy = (g->flags & GP_GPU_CLOCK_MEMCPY) && !(g->flags & GP_GPU_CLOCK_MISSING) && g->b && a1;
	int pageable = (g->flags & GP_GPU_CLOCK_PAGEABLE) != 0;
	int blocking = copy && ((cls == GP_API_MEMCPY_SYNC && (g->copy_kind == 2 || (g->copy_kind == 1 && !pageable))) ||
				(cls == GP_API_MEMCPY_ASYNC && pageable && g->copy_kind == 2 &&
				 g->b <= a1 + GP_CLOCK_TOLERANCE_NS));
	if (!blocking)
		return;
	s = gp_gpu_clock_seg(an, g->dev, g->b);
	if (!s)
		return;
	int64_t lo = (int64_t)(g->b - a1);
	if (!s->nlo || lo > s->lo) {
		s->lo = lo;
		s->t_lo = g->b;
	}
	s->nlo++;
	if (lo > v->lo)
		v->lo = lo;
	v->nlo++;
}

static void gp_gpu_clock_release(struct gp_gpu_clock *c, struct gp_map *m, uint32_t key, uint32_t idx)
{
	gp_map_del(m, key);
	c->slot[idx].next_free = c->free_head;
	c->free_head = idx;
}

/* Drop pending entries older than GP_GPU_CLOCK_AGE records. */
static void gp_gpu_clock_evict(struct gp_an *an)
{
	struct gp_gpu_clock *c = &an->gclock;
	struct gp_map *maps[2] = { &c->api, &c->gpu };
	for (int m = 0; m < 2; m++) {
		uint64_t key, val, *old = NULL;
		size_t n = 0, cap = 0, pos = 0;
		while (gp_map_next(maps[m], &pos, &key, &val))
			if (c->seq - c->slot[val].seq > GP_GPU_CLOCK_AGE) {
				if (GROW(old, n, cap)) {
					gp_an_fail(an, -ENOMEM);
					break;
				}
				old[n++] = key;
			}
		for (size_t i = 0; i < n; i++) {
			uint64_t *v = gp_map_get(maps[m], old[i]);
			if (v)
				gp_gpu_clock_release(c, maps[m], (uint32_t)old[i], (uint32_t)*v);
		}
		free(old);
	}
}

static struct gp_gpu_clock_pend *gp_gpu_clock_new(struct gp_an *an, struct gp_map *m, uint32_t key)
{
	struct gp_gpu_clock *c = &an->gclock;
	uint32_t idx;
	if (GP_AN_SLOT(c->slot, c->nslot, c->capslot, c->free_head, idx)) {
		gp_an_fail(an, -ENOMEM);
		return NULL;
	}
	int rc = gp_map_put(m, key, idx);
	if (rc) {
		c->slot[idx].next_free = c->free_head;
		c->free_head = idx;
		gp_an_fail(an, rc);
		return NULL;
	}
	memset(&c->slot[idx], 0, sizeof c->slot[idx]);
	c->slot[idx].seq = c->seq;
	return &c->slot[idx];
}

static void gp_gpu_clock_tick(struct gp_an *an)
{
	if ((++an->gclock.seq & (GP_GPU_CLOCK_AGE - 1)) == 0)
		gp_gpu_clock_evict(an);
}

void gp_gpu_clock_api(struct gp_an *an, uint8_t type, const struct gp_an_api *a)
{
	struct gp_gpu_clock *c = &an->gclock;
	/* a hook's interval holds its call's: a device synchronize's bound
	 * from it is looser, as valid, and there where CUPTI traced no
	 * runtime record of it (lean mode) */
	if (type != GP_REC_RUNTIME_API && type != GP_REC_DRIVER_API &&
	    !(type == GP_REC_HOOK_API && a->api_class == GP_API_SYNC_DEVICE && !a->nested))
		return;
	if (a->api_class == GP_API_SYNC_DEVICE) {
		if (a->start && a->end >= a->start)
			gp_gpu_clock_sync(an, a->start, a->end);
		return;
	}
	if (type == GP_REC_HOOK_API)
		return;
	if (!gp_an_is_op_class(a->api_class))
		return;
	gp_gpu_clock_tick(an);
	uint64_t *v = gp_map_get(&c->gpu, a->corr);
	if (v) { /* its GPU record came first */
		uint32_t idx = (uint32_t)*v;
		gp_gpu_clock_pair(an, a->start, a->end, a->api_class, &c->slot[idx]);
		gp_gpu_clock_release(c, &c->gpu, a->corr, idx);
		if (a->api_class != GP_API_GRAPH_LAUNCH)
			return;
	}
	if (gp_map_get(&c->api, a->corr))
		return; /* the runtime and driver layers never share an id */
	struct gp_gpu_clock_pend *p = gp_gpu_clock_new(an, &c->api, a->corr);
	if (p) {
		p->a = a->start;
		p->b = a->end;
		p->cls = a->api_class;
	}
}

void gp_gpu_clock_gpu(struct gp_an *an, uint8_t type, const struct gp_an_gpu *g)
{
	struct gp_gpu_clock *c = &an->gclock;
	gp_gpu_clock_tick(an);
	c->dev_seen[g->device] = 1;
	struct gp_gpu_clock_pend op = { .a = g->start, .b = g->end, .dev = g->device, .copy_kind = g->copy_kind };
	op.flags = (uint8_t)((type == GP_REC_MEMCPY ? GP_GPU_CLOCK_MEMCPY : 0) | (g->pageable ? GP_GPU_CLOCK_PAGEABLE : 0) |
			     (g->end_missing ? GP_GPU_CLOCK_MISSING : 0));
	uint64_t *v = gp_map_get(&c->api, g->key);
	if (v) {
		uint32_t idx = (uint32_t)*v;
		struct gp_gpu_clock_pend a = c->slot[idx];
		gp_gpu_clock_pair(an, a.a, a.b, a.cls, &op);
		if (a.cls != GP_API_GRAPH_LAUNCH) /* a graph launch has many */
			gp_gpu_clock_release(c, &c->api, g->key, idx);
		return;
	}
	v = gp_map_get(&c->gpu, g->key);
	if (v) { /* a graph launch's kernels before their launch: the first start */
		struct gp_gpu_clock_pend *p = &c->slot[*v];
		if (op.a && (!p->a || op.a < p->a))
			p->a = op.a;
		return;
	}
	struct gp_gpu_clock_pend *p = gp_gpu_clock_new(an, &c->gpu, g->key);
	if (p) {
		uint64_t seq = p->seq;
		*p = op;
		p->seq = seq;
		p->next_free = GP_NONE32;
	}
}

/* The estimate from a lower bound lo (and an upper one hi when has_hi):
 * the offset lies in [lo, lo + GP_GPU_CLOCK_WAKE_NS] (the copy's call
 * returned within a wake-up of its end) and below hi; the least correction
 * in that band, so no offset is read where the trace shows none. Bounds
 * that cross (drift inside a segment, a call the rules misread): between. */
static int64_t gp_gpu_clock_est(int64_t lo, int has_hi, int64_t hi)
{
	if (has_hi && hi < lo)
		return lo / 2 + hi / 2;
	return lo <= 0 && lo + GP_GPU_CLOCK_WAKE_NS >= 0 ? 0 : lo;
}

/* Is a segment's lower bound a point of the correction? Not when it lies
 * further below zero than the clock error the report allows anywhere
 * (GP_CLOCK_TOLERANCE_NS): that is a call that returned late (its thread
 * preempted), not the offset. */
static int gp_gpu_clock_point(const struct gp_gpu_clock_seg *s)
{
	return s->nlo && s->lo >= -(int64_t)GP_CLOCK_TOLERANCE_NS;
}

/* A device's correction points from its segments (see the header). */
static void gp_gpu_clock_points(struct gp_an *an, struct gp_gpu_clock_dev *v)
{
	size_t n = 0;
	for (size_t i = 0; i < v->nseg; i++)
		n += gp_gpu_clock_point(&v->seg[i]);
	/* without a point: the least correction the bounds demand */
	v->flat = (v->nlo || v->nsync) && v->lo > 0 ? v->lo : v->nhi && v->hi < 0 ? v->hi : 0;
	if (!n)
		return;
	v->pt = malloc(n * sizeof *v->pt);
	v->pe = malloc(n * sizeof *v->pe);
	if (!v->pt || !v->pe) {
		gp_an_fail(an, -ENOMEM);
		return;
	}
	for (size_t i = 0; i < v->nseg; i++) {
		const struct gp_gpu_clock_seg *s = &v->seg[i];
		if (!gp_gpu_clock_point(s))
			continue;
		int64_t e = gp_gpu_clock_est(s->lo, s->nhi != 0, s->hi);
		v->pt[v->np] = s->t_lo;
		v->pe[v->np++] = e;
	}
	/* a lower bound is only a bound: one that a tighter one elsewhere,
	 * moved by the largest drift believed (GP_GPU_CLOCK_DRIFT_PPM), lies
	 * above (a copy whose call returned late) is no point of the estimate.
	 * Two sweeps mark them; the rest stay, in time order. */
	uint8_t *weak = calloc(v->np, 1);
	if (!weak) {
		gp_an_fail(an, -ENOMEM);
		v->np = 0;
		return;
	}
	for (int dir = 0; dir < 2; dir++) {
		double best = 0;
		for (size_t k = 0; k < v->np; k++) {
			size_t i = dir ? v->np - 1 - k : k, j = dir ? i + 1 : i - 1;
			if (k) {
				double dt = (double)(dir ? v->pt[j] - v->pt[i] : v->pt[i] - v->pt[j]);
				best -= dt * GP_GPU_CLOCK_DRIFT_PPM / 1e6;
			}
			if (k && (double)v->pe[i] < best)
				weak[i] = 1;
			else
				best = (double)v->pe[i];
		}
	}
	size_t m = 0;
	for (size_t i = 0; i < v->np; i++) {
		if (weak[i])
			continue;
		v->pt[m] = v->pt[i];
		v->pe[m++] = v->pe[i];
	}
	v->np = m;
	free(weak);
}

void gp_gpu_clock_prepare(struct gp_an *an)
{
	struct gp_gpu_clock *c = &an->gclock;
	const char *e = getenv("GPUPHASE_REPORT_GPU_CLOCK");
	c->raw = e && strcmp(e, "raw") == 0;
	int ndev = 0, only = -1;
	for (int d = 0; d < 256; d++)
		if (c->dev_seen[d]) {
			ndev++;
			only = d;
		}
	if (ndev == 1 && c->sync_n[only] && c->dev[only]) { /* the bound, not the estimate */
		struct gp_gpu_clock_dev *v = c->dev[only];
		if (!v->nlo || c->sync_lo[only] > v->lo)
			v->lo = c->sync_lo[only];
		v->nsync = c->nsync_calls;
	}
	for (int d = 0; d < 256; d++)
		if (c->dev[d])
			gp_gpu_clock_points(an, c->dev[d]);
	gp_map_free(&c->api);
	gp_map_free(&c->gpu);
	free(c->slot);
	c->slot = NULL;
	c->nslot = c->capslot = 0;
	c->free_head = GP_NONE32;
	free(c->syncs);
	free(c->ops);
	c->syncs = NULL;
	c->ops = NULL;
	c->nsyncs = c->nops = 0;
}

/* The correction at delivered GPU time t on device v. */
static int64_t gp_gpu_clock_at(struct gp_gpu_clock_dev *v, uint64_t t)
{
	if (!v->np)
		return v->flat;
	if (t <= v->pt[0])
		return v->pe[0];
	if (t >= v->pt[v->np - 1])
		return v->pe[v->np - 1];
	size_t i = v->cache < v->np - 1 && v->pt[v->cache] <= t && t < v->pt[v->cache + 1] ? v->cache : 0;
	if (!i || v->pt[i] > t) {
		size_t lo = 0, hi = v->np - 1; /* pt[lo] <= t < pt[hi] */
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;
			if (v->pt[mid] <= t)
				lo = mid;
			else
				hi = mid;
		}
		i = lo;
	}
	v->cache = i;
	double f = (double)(t - v->pt[i]) / (double)(v->pt[i + 1] - v->pt[i]);
	return v->pe[i] + (int64_t)(((double)v->pe[i + 1] - (double)v->pe[i]) * f); /* no int64 overflow */
}

void gp_gpu_clock_correct(struct gp_an *an, struct gp_an_gpu *g)
{
	struct gp_gpu_clock_dev *v = an->gclock.dev[g->device];
	if (!v || an->gclock.raw || !g->start)
		return;
	/* each time by the correction at it: t - correction(t) grows with t
	 * (the points' slopes are a few ppm), so ops that touch on a stream
	 * still touch, and execute keeps the drift taken out of it */
	int64_t off = gp_gpu_clock_at(v, g->start);
	int64_t off_end = g->end ? gp_gpu_clock_at(v, g->end) : 0;
	if ((off > 0 && (uint64_t)off >= g->start) || (off_end > 0 && (uint64_t)off_end >= g->end))
		return;
	g->start -= (uint64_t)off;
	if (g->end)
		g->end -= (uint64_t)off_end;
	if (g->end && g->end < g->start)
		g->end = g->start;
}

int gp_gpu_clock_finish(const struct gp_an *an, struct gp_rep *rep)
{
	const struct gp_gpu_clock *c = &an->gclock;
	size_t n = 0;
	for (int d = 0; d < 256; d++)
		n += c->dev[d] && (c->dev[d]->nlo || c->dev[d]->nsync || c->dev[d]->nhi);
	if (!n)
		return 0;
	rep->gpu_clock = calloc(n, sizeof *rep->gpu_clock);
	if (!rep->gpu_clock)
		return -ENOMEM;
	for (int d = 0; d < 256; d++) {
		const struct gp_gpu_clock_dev *v = c->dev[d];
		if (!v || !(v->nlo || v->nsync || v->nhi))
			continue;
		struct gp_rep_gpu_clock *o = &rep->gpu_clock[rep->ngpu_clock++];
		o->device = (uint8_t)d;
		o->has_lo = v->nlo || v->nsync;
		o->has_hi = v->nhi != 0;
		o->lo_ns = o->has_lo ? v->lo : 0;
		o->hi_ns = v->nhi ? v->hi : 0;
		o->ops = v->nhi;
		o->waits = v->nlo + v->nsync;
		o->points = v->np;
		o->raw = c->raw;
		/* where the bound is tightest: from the largest lower bound;
		 * without a point, the flat correction */
		o->offset_ns = !v->np ? v->flat : gp_gpu_clock_est(v->lo, v->nhi != 0, v->hi);
		o->first_ns = v->np ? v->pe[0] : v->flat;
		o->last_ns = v->np ? v->pe[v->np - 1] : v->flat;
		o->span_ns = v->np ? v->pt[v->np - 1] - v->pt[0] : 0;
	}
	return 0;
}

void gp_gpu_clock_free(struct gp_gpu_clock *c)
{
	gp_map_free(&c->api);
	gp_map_free(&c->gpu);
	free(c->slot);
	free(c->syncs);
	free(c->ops);
	for (int d = 0; d < 256; d++) {
		if (!c->dev[d])
			continue;
		free(c->dev[d]->seg);
		free(c->dev[d]->pt);
		free(c->dev[d]->pe);
		free(c->dev[d]);
	}
	memset(c, 0, sizeof *c);
}
