/*
 * sync.c — sync attribution: which op each blocking call waited for.
 *
 * Blocking intervals are the API records of synchronize calls and of
 * blocking copies/sets; each op arriving in pass 2 offers itself as a
 * candidate to the (at most one per thread) interval containing its gpu_end,
 * and each interval keeps its GP_WAIT_CANDS latest-finishing candidates.
 * Charging happens when the interval leaves the horizon, or at finish: the
 * wait is split over them (metrics.md §3), the parts adding up to it.
 *
 * A wait slot is created by whichever of its records comes first (the CUPTI
 * API record, the SYNC record with the stream scope, the external correlation
 * that carries the sync hook's stack) and becomes active with its API record.
 * Active, it takes the best candidate among the ops arrived already (the
 * GP_RECENT latest, sorted by gpu_end) and then every op arriving afterwards is
 * offered to it; it is charged GP_WAIT_HORIZON ops later, or at the end. So
 * memory holds GP_RECENT ops and the waits of the last GP_WAIT_HORIZON ops,
 * whatever the trace length; an op arriving more than that many ops late
 * cannot be charged (counted in waits_late when it finds its wait gone).
 *
 * Called by the core (analysis.c) on the report thread, in pass 2 and at
 * finish. Invariant: every wait is charged at most once; its parts add up
 * to the wait, each adding the same amount to its group, its iteration and
 * the totals.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

void gp_sync_init(struct gp_sync *s)
{
	s->wait_free = GP_NONE32;
}

static struct gp_wait *gp_sync_get(struct gp_an *an, uint32_t corr, int create)
{
	uint64_t *v = gp_dmap_get(&an->sync.wait_by_corr, corr);
	if (v)
		return &an->sync.waits[*v];
	if (!create)
		return NULL;
	uint32_t idx;
	if (GP_AN_SLOT(an->sync.waits, an->sync.nwaits, an->sync.capwaits, an->sync.wait_free, idx))
		return gp_an_fail(an, -ENOMEM), NULL;
	struct gp_wait *w = &an->sync.waits[idx];
	memset(w, 0, sizeof *w);
	w->corr = corr;
	w->stream = GP_NONE32;
	w->best.group = GP_NONE32;
	w->seq = an->sync.op_seq; /* creation time until it becomes active */
	if (gp_dmap_put(&an->sync.wait_by_corr, corr, idx))
		return gp_an_fail(an, -ENOMEM), NULL;
	return w;
}

static int gp_sync_live(const struct gp_an *an, const struct gp_wait *w)
{
	uint64_t *v = gp_dmap_get(&an->sync.wait_by_corr, w->corr);
	return v && &an->sync.waits[*v] == w;
}

static void gp_sync_release(struct gp_an *an, struct gp_wait *w)
{
	if (!w->queue) /* a queue wait is in no map (gp_qfull_open) */
		gp_dmap_del(&an->sync.wait_by_corr, w->corr);
	w->next_free = an->sync.wait_free;
	an->sync.wait_free = (uint32_t)(w - an->sync.waits);
	if (w->own_held) { /* its call's op: nothing more to take out */
		w->own_held = 0;
		gp_line_release(an, w->own_seq);
	}
}

static void gp_sync_cand(struct gp_wait_cand *c, const struct gp_recent *r)
{
	*c = (struct gp_wait_cand){ .e = r->e, .group = r->group, .corr = r->corr, .iter = r->iter, .device = r->device };
}

/* Keep candidate r of wait w, sorted by end: the GP_WAIT_CANDS latest
 * ending; one ending before all of them when full merges into the first
 * (it is charged from w0: metrics.md §3, bounded). */
static void gp_sync_cand_add(struct gp_wait *w, const struct gp_recent *r)
{
	if (w->ncand == GP_WAIT_CANDS) {
		if (r->e <= w->cand[0].e)
			return;
		memmove(w->cand, w->cand + 1, (GP_WAIT_CANDS - 1) * sizeof *w->cand);
		w->ncand--;
	}
	size_t i = w->ncand;
	while (i > 0 && w->cand[i - 1].e > r->e) {
		w->cand[i] = w->cand[i - 1];
		i--;
	}
	gp_sync_cand(&w->cand[i], r);
	w->ncand++;
}

/* Does op entry r bear on wait w: own op of a blocking copy, or candidate. */
static void gp_sync_consider(struct gp_wait *w, const struct gp_recent *r)
{
	if (w->queue) {
		/* a full queue: the first op of its device enqueued before the
		 * call to end in the wait freed the slot */
		if (r->device != w->own_device || !r->has_api || r->api_end > w->call0 || r->corr == w->corr ||
		    r->e <= w->w0 || r->e > w->w1 + GP_CLOCK_TOLERANCE_NS)
			return;
		if (!w->has_best || r->e < w->best.e) {
			w->has_best = 1;
			gp_sync_cand(&w->best, r);
		}
		return;
	}
	if (w->copy && r->corr == w->corr) {
		w->has_own = 1;
		w->own_gpu_start = r->gpu_start;
		w->own_launch = r->launch;
		w->own_launch_raw = r->launch_raw;
		w->own_device = r->device;
		return;
	}
	if (r->e <= (w->c0 > w->w0 ? w->c0 : w->w0) || r->e > w->w1 + GP_CLOCK_TOLERANCE_NS)
		return; /* finished before the wait began (or during CUPTI's time
			   in the call), or after it ended (the tolerance: GPU
			   times a few us off the host clock) */
	if (r->has_api && r->api_end > w->w0)
		return; /* enqueued after the wait began: not waited for */
	if (gp_an_is_implicit_sync(w->kind) && r->e > w->w1)
		return; /* it waits before its own work: what it waited for ended
			   before it returned (an op ending just after a short
			   cudaFree is not a wait, whatever the clock tolerance) */
	switch (w->kind) {
	case GP_API_SYNC_STREAM:
	case GP_API_SYNC_EVENT:
		if (w->stream != GP_NONE32 && w->stream != r->stream)
			return;
		break;
	default:
		if (w->copy && w->has_own && (r->e > w->own_gpu_start || r->device != w->own_device))
			return; /* not earlier work of its device (a blocking copy
				   waits for its own device's legacy stream) */
		break;
	}
	if (!w->has_best || r->e > w->best.e) {
		w->has_best = 1;
		gp_sync_cand(&w->best, r);
	}
	gp_sync_cand_add(w, r);
	if (r->e <= w->w1 && (!w->has_in || r->e > w->in.e)) {
		w->has_in = 1;
		gp_sync_cand(&w->in, r);
	}
}

/* Several devices (metrics.md §3): a candidate that ended after the call
 * returned (admitted by the clock tolerance) is not taken over one of
 * another device that ended inside the call. A synchronize returns just
 * after its device's last op ended; another device's op ending a few us
 * later is not what it waited for (the trace does not say which device a
 * device-wide wait was on). */
static void gp_sync_pick(struct gp_wait *w)
{
	if (!w->has_best || !w->has_in || w->best.e <= w->w1 || w->in.device == w->best.device)
		return;
	w->best = w->in;
	while (w->ncand && w->cand[w->ncand - 1].e > w->w1)
		w->ncand--; /* the candidates that ended after it returned */
}

/* Charge part `ns` of a wait to candidate c (its operator and iteration);
 * `counted`: c's operator was charged a part of this wait already. */
static void gp_sync_charge(struct gp_an *an, const struct gp_wait_cand *c, uint64_t ns, int counted)
{
	if (c->group >= an->ngroups) {
		an->sync.sync_unattr_ns += ns;
		return;
	}
	struct gp_group *g = &an->groups[c->group];
	g->sync += ns;
	g->sync_calls += !counted;
	an->sync.sync_total += ns;
	if (c->iter >= 0)
		an->iters[c->iter].sync += ns;
}

/* Split wait [w0, w1] over its candidates (metrics.md §3): each the part
 * between the previous candidate's end and its own, the last also the rest
 * to w1; the parts add up to w1 - w0. */
static void gp_sync_split(struct gp_an *an, struct gp_wait *w, uint64_t w0, uint64_t w1)
{
	size_t n = 0;
	/* one device's work: the last candidate's (a wait is for one device;
	 * a copy's, earlier work of its own device) */
	for (size_t i = 0; i < w->ncand; i++)
		if (w->cand[i].device == w->best.device &&
		    (!w->copy || !w->has_own || w->cand[i].e <= w->own_gpu_start))
			w->cand[n++] = w->cand[i];
	if (!n || w->cand[n - 1].corr != w->best.corr || w->cand[n - 1].e != w->best.e) {
		w->cand[0] = w->best; /* not among them: the whole wait is its */
		n = 1;
	}
	uint64_t part[GP_WAIT_CANDS], at = w0;
	for (size_t i = 0; i < n; i++) {
		uint64_t e = i + 1 == n ? w1 : w->cand[i].e < at ? at : w->cand[i].e > w1 ? w1 : w->cand[i].e;
		part[i] = e - at;
		at = e;
	}
	for (size_t i = 0; i < n; i++) {
		if (!part[i] && i + 1 < n)
			continue;
		int counted = 0;
		for (size_t j = 0; j < i && !counted; j++)
			counted = part[j] && w->cand[j].group == w->cand[i].group;
		gp_sync_charge(an, &w->cand[i], part[i], counted);
	}
}

const struct gp_recent *gp_sync_recent_at(const struct gp_an *an, size_t i)
{
	return &an->sync.recent[(an->sync.recent_head + i) & (GP_RECENT - 1)];
}

/* The first entry of the recent buffer that ended after t (nrecent when
 * none): the one search of the buffer. What is looked for is usually
 * recent: it gallops back from the newest entry, bounding the search to
 * the cache lines near the end. */
size_t gp_sync_recent_after(const struct gp_an *an, uint64_t t)
{
	size_t lo = 0, hi = an->sync.nrecent;
	for (size_t step = 1; hi > 0; step *= 2) {
		size_t i = hi > step ? hi - step : 0;
		if (gp_sync_recent_at(an, i)->e <= t) {
			lo = i + 1;
			break;
		}
		hi = i;
	}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (gp_sync_recent_at(an, mid)->e <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Best candidate among the arrived ops still in the recent buffer. */
void gp_sync_search(struct gp_an *an, struct gp_wait *w)
{
	w->has_best = w->has_in = 0;
	w->ncand = 0;
	size_t lo = gp_sync_recent_after(an, w->w1 + GP_CLOCK_TOLERANCE_NS);
	/* own op first (a copy's own op bounds its candidates), then the rest */
	for (int round = w->copy ? 0 : 1; round < 2; round++)
		for (size_t i = lo; i > 0; i--) {
			const struct gp_recent *r = gp_sync_recent_at(an, i - 1);
			if (r->e <= w->w0)
				break;
			if (round == 0) {
				if (r->corr == w->corr)
					gp_sync_consider(w, r);
			} else {
				gp_sync_consider(w, r);
			}
		}
}

static struct gp_tidq *gp_sync_tidq(struct gp_an *an, uint32_t tid, int queue)
{
	/* a thread's queue waits apart from its other waits (their tids may
	 * be OS tids, the others' CUPTI's) */
	uint64_t key = (queue ? 1ULL << 32 : 0) | tid;
	uint64_t *v = gp_map_get(&an->sync.tq_by_tid, key);
	if (v)
		return &an->sync.tq[*v];
	if (GROW(an->sync.tq, an->sync.ntq, an->sync.captq))
		return gp_an_fail(an, -ENOMEM), NULL;
	struct gp_tidq *q = &an->sync.tq[an->sync.ntq];
	memset(q, 0, sizeof *q);
	q->tid = tid;
	gp_an_fail(an, gp_map_put(&an->sync.tq_by_tid, key, an->sync.ntq));
	return &an->sync.tq[an->sync.ntq++];
}

void gp_sync_activate(struct gp_an *an, struct gp_wait *w)
{
	struct gp_tidq *q = gp_sync_tidq(an, w->tid, w->queue);
	if (!q)
		return;
	w->active = 1;
	w->seq = an->sync.op_seq;
	gp_sync_search(an, w);
	gp_an_fail(an, gp_sweep_add(&an->covered, w->w0 - w->cupti, w->w1)); /* the whole call */
	if (q->head > 0 && q->head + q->n == q->cap) { /* compact */
		memmove(q->idx, q->idx + q->head, q->n * sizeof *q->idx);
		q->cache = q->cache > q->head ? q->cache - q->head : 0;
		q->head = 0;
	}
	if (gp_an_grow((void **)&q->idx, &q->cap, q->head + q->n + 1, sizeof *q->idx))
		return gp_an_fail(an, -ENOMEM);
	/* keep w0 order (a thread's records come in order; insert from the back) */
	size_t i = q->n;
	while (i > 0 && an->sync.waits[q->idx[q->head + i - 1]].w0 > w->w0) {
		q->idx[q->head + i] = q->idx[q->head + i - 1];
		i--;
	}
	q->idx[q->head + i] = (uint32_t)(w - an->sync.waits);
	q->n++;
}

/* Offer an arriving op to the active waits containing its gpu_end: per thread
 * the last wait that began before it, and the ones before that whose clock
 * tolerance still reaches it (a thread's calls do not overlap, but a wait's
 * tolerance past its end may cover the start of the next one). */
static void gp_sync_offer(struct gp_an *an, const struct gp_recent *r)
{
	for (size_t t = 0; t < an->sync.ntq; t++) {
		struct gp_tidq *q = &an->sync.tq[t];
		if (!q->n)
			continue;
		size_t end = q->head + q->n, k = q->cache;
		if (!(k >= q->head && k < end && an->sync.waits[q->idx[k]].w0 < r->e &&
		      (k + 1 == end || an->sync.waits[q->idx[k + 1]].w0 >= r->e))) {
			size_t a = q->head, b = end; /* last wait with w0 < e */
			if (an->sync.waits[q->idx[b - 1]].w0 < r->e)
				a = b; /* the newest wait began before e: it is that one */
			while (a < b) {
				size_t mid = (a + b) / 2;
				if (an->sync.waits[q->idx[mid]].w0 < r->e)
					a = mid + 1;
				else
					b = mid;
			}
			if (a == q->head)
				continue;
			k = a - 1;
			q->cache = k;
		}
		for (size_t i = k + 1; i-- > q->head;) {
			struct gp_wait *w = &an->sync.waits[q->idx[i]];
			if (r->e > w->w1 + GP_CLOCK_TOLERANCE_NS)
				break;
			gp_sync_consider(w, r);
		}
	}
}

static void gp_sync_callsite_add(struct gp_an *an, const char *site, uint32_t stack, uint64_t s)
{
	uint32_t c = gp_an_canon(an, site, strlen(site));
	uint64_t *v = gp_map_get(&an->sync.cs_map, c);
	if (!v) {
		if (GROW(an->sync.cs, an->sync.ncs, an->sync.capcs))
			return gp_an_fail(an, -ENOMEM);
		an->sync.cs[an->sync.ncs] = (struct gp_rep_callsite){ .name = strdup(site) };
		if (!an->sync.cs[an->sync.ncs].name)
			return gp_an_fail(an, -ENOMEM);
		char text[4096];
		if (gp_an_stack_text(an, stack, text, sizeof text) &&
		    !(an->sync.cs[an->sync.ncs].stack = strdup(text)))
			return free(an->sync.cs[an->sync.ncs].name), gp_an_fail(an, -ENOMEM);
		gp_an_fail(an, gp_map_put(&an->sync.cs_map, c, an->sync.ncs));
		v = gp_map_get(&an->sync.cs_map, c);
		an->sync.ncs++;
		if (!v)
			return;
	}
	an->sync.cs[*v].calls++;
	an->sync.cs[*v].sync_ns += s;
}

/* Keep a charged wait in the settled ring (waits_late). */
static void gp_sync_settle(struct gp_an *an, const struct gp_wait *w)
{
	struct gp_sync *s = &an->sync;
	if (!s->settled && !(s->settled = malloc(GP_SETTLED * sizeof *s->settled)))
		return gp_an_fail(an, -ENOMEM);
	if (s->nsettled == GP_SETTLED) {
		s->settled_head = (s->settled_head + 1) % GP_SETTLED;
		s->nsettled--;
	}
	s->settled[(s->settled_head + s->nsettled) % GP_SETTLED] =
		(struct gp_settled){ .w0 = w->w0, .w1 = w->w1, .best_e = w->has_best ? w->best.e : 0, .tid = w->tid,
				     .stream = w->stream, .kind = w->kind, .copy = w->copy };
	s->nsettled++;
	if (w->w1 > s->settled_max_w1)
		s->settled_max_w1 = w->w1;
}

/* An op arriving after the wait it ended in was charged (metrics.md §3,
 * streaming bounds): the wait went to an earlier op or to nothing
 * outstanding. Counted in waits_late; only ops ending before the latest
 * charged wait's end are looked at. */
static void gp_sync_late(struct gp_an *an, const struct gp_recent *r)
{
	struct gp_sync *s = &an->sync;
	if (!s->nsettled || r->e >= s->settled_max_w1 + GP_CLOCK_TOLERANCE_NS)
		return;
	for (size_t i = 0; i < s->nsettled; i++) {
		const struct gp_settled *w = &s->settled[(s->settled_head + i) % GP_SETTLED];
		if (r->e <= w->w0 || r->e > w->w1 + GP_CLOCK_TOLERANCE_NS || (r->has_api && r->api_end > w->w0))
			continue;
		if (gp_an_is_implicit_sync(w->kind) && r->e > w->w1)
			continue;
		if ((w->kind == GP_API_SYNC_STREAM || w->kind == GP_API_SYNC_EVENT) && w->stream != GP_NONE32 &&
		    w->stream != r->stream)
			continue;
		if (w->copy || r->e <= w->best_e)
			continue; /* a copy's own op, or not the one it waited for */
		s->waits_late++;
		return;
	}
}

/* Charge an active wait and release its slot. */
static void gp_sync_finalize(struct gp_an *an, struct gp_wait *w)
{
	if (w->queue) {
		gp_qfull_finalize(an, w);
		gp_sync_release(an, w);
		return;
	}
	/* w0 is after CUPTI's own cost at the call's entry: that cost is the
	 * profiler's, never the wait (metrics.md §3); the exports get the call */
	struct gp_an_wait out = { .kind = w->kind, .tid = w->tid, .corr = w->corr, .stream = w->stream,
				  .call_start = w->w0 - w->cupti, .call_end = w->w1, .w0 = w->w0, .group = -1,
				  .site = UINT32_MAX };
	uint64_t s;
	gp_sync_pick(w);
	gp_sync_settle(an, w);
	if (w->copy || gp_an_is_implicit_sync(w->kind)) {
		/* the wait ends when the earlier work it waited for ended */
		s = w->has_best && w->best.e > w->w0 ? w->best.e - w->w0 : 0;
		if (w->has_own && s > w->own_launch)
			s = w->own_launch;
		if (s > w->w1 - w->w0)
			s = w->w1 - w->w0; /* a GPU clock ahead of the host's */
		if (!w->has_best || !s)
			goto done; /* nothing outstanding: no blocking part */
		out.w1 = w->w0 + s;
		/* the same wait begun at the call's entry, CUPTI's cost in it */
		uint64_t raw = s + w->cupti;
		if (w->has_own && raw > w->own_launch_raw)
			raw = w->own_launch_raw; /* >= own_launch >= s */
		an->cost.from_sync_ns += raw - s;
		/* the blocked part leaves the copy's launch, which waits in the
		 * fold line for it; from the launch with CUPTI's cost left in, the
		 * wait as measured from the call's entry */
		if (w->copy && w->has_own && w->own_held)
			gp_line_less(an, w->own_seq, s, raw);
	} else {
		s = w->w1 - w->w0;
		out.w1 = w->w1;
		an->cost.from_sync_ns += w->cupti;
	}
	an->sync.sync_calls[w->kind]++;
	an->sync.sync_kind_ns[w->kind] += s;
	if (w->has_best && w->best.group < an->ngroups) {
		gp_sync_split(an, w, w->w0, w->w0 + s);
		out.attributed = 1;
		out.op_corr = w->best.corr;
		out.group = (int32_t)w->best.group;
	} else {
		an->sync.sync_unattr_ns += s;
		an->sync.sync_unattr_calls++;
	}
	char buf[32];
	const char *site = gp_an_callsite(an, w->stack, buf, sizeof buf);
	gp_sync_callsite_add(an, site ? site : "(no stack)", w->stack, s);
	if (an->cfg.on_wait) {
		if (site)
			out.site = gp_an_canon(an, site, strlen(site));
		an->cfg.on_wait(&out, an->cfg.ctx);
	}
done:
	gp_sync_release(an, w);
}

/* Charge the waits that have seen GP_WAIT_HORIZON ops since they became
 * active (all of them when final); drop slots that never became active. */
void gp_sync_expire(struct gp_an *an, int final)
{
	for (size_t t = 0; t < an->sync.ntq; t++) {
		struct gp_tidq *q = &an->sync.tq[t];
		while (q->n) {
			struct gp_wait *w = &an->sync.waits[q->idx[q->head]];
			if (!final && w->seq + GP_WAIT_HORIZON > an->sync.op_seq)
				break;
			q->head++;
			q->n--;
			gp_sync_finalize(an, w);
		}
		if (!q->n)
			q->head = q->cache = 0;
	}
	gp_qfull_expire(an, final);
	if (!final && (an->sync.op_seq & (GP_WAIT_HORIZON - 1)) != 0)
		return; /* the pool is swept once per horizon */
	for (size_t i = 0; i < an->sync.nwaits; i++) {
		struct gp_wait *w = &an->sync.waits[i];
		if (gp_sync_live(an, w) && !w->active && (final || w->seq + GP_WAIT_HORIZON < an->sync.op_seq))
			gp_sync_release(an, w);
	}
}

/* Sync hooks waiting for their external correlation (bounded FIFO): op id
 * -> stack id, with GP_SHOOK_COPY when the call is a blocking copy/set (an
 * op joins it; a synchronize has none). */
#define GP_SHOOK_COPY (1ULL << 32)
#define GP_SHOOK_SEEN_MASK ((1u << 20) - 1u)
static void gp_sync_shook_add(struct gp_an *an, uint32_t op, int copy)
{
	if (!an->sync.shook_fifo && !(an->sync.shook_fifo = malloc(GP_RECENT * sizeof *an->sync.shook_fifo)))
		return gp_an_fail(an, -ENOMEM);
	if (!an->sync.shook_seen && !(an->sync.shook_seen = calloc(GP_SHOOK_SEEN_MASK + 1u, 1)))
		return gp_an_fail(an, -ENOMEM);
	if (an->sync.nshook == GP_RECENT) {
		uint8_t *c = &an->sync.shook_seen[an->sync.shook_fifo[an->sync.shook_head] & GP_SHOOK_SEEN_MASK];
		if (*c != UINT8_MAX) /* a saturated count stays (never a false "absent") */
			(*c)--;
		gp_map_del(&an->sync.shook, an->sync.shook_fifo[an->sync.shook_head]);
		an->sync.shook_head = (an->sync.shook_head + 1) & (GP_RECENT - 1);
		an->sync.nshook--;
	}
	an->sync.shook_fifo[(an->sync.shook_head + an->sync.nshook) & (GP_RECENT - 1)] = op;
	an->sync.nshook++;
	if (an->sync.shook_seen[op & GP_SHOOK_SEEN_MASK] != UINT8_MAX)
		an->sync.shook_seen[op & GP_SHOOK_SEEN_MASK]++;
	gp_an_fail(an, gp_map_put(&an->sync.shook, op, copy ? GP_SHOOK_COPY : 0));
}

/* The shook entry of hook op `op`, or NULL. */
static uint64_t *gp_sync_shook_get(const struct gp_an *an, uint64_t op)
{
	if (!an->sync.shook_seen || !an->sync.shook_seen[op & GP_SHOOK_SEEN_MASK])
		return NULL;
	return gp_map_get(&an->sync.shook, op);
}

/* An API record of a blocking call (sync class, or blocking copy/set);
 * cupti: CUPTI's own cost at its entry (cupti_cost.c). */
void gp_sync_api(struct gp_an *an, const struct gp_rec_api *a, uint64_t cupti)
{
	unsigned c = GP_API_CLASS(a->class_flags);
	if (!(gp_an_is_sync_class(c) || gp_an_is_copy_sync(c) || gp_an_is_implicit_sync(c) ||
	      c == GP_API_MEMCPY_ASYNC) ||
	    (a->class_flags & GP_APIF_ERROR))
		return;
	/* runtime records when present (a driver sync inside a runtime sync
	 * would count twice), else driver */
	if (a->type == GP_REC_DRIVER_API && an->have_runtime)
		return;
	struct gp_wait *w = gp_sync_get(an, a->corr, 1);
	if (!w || w->has_api)
		return;
	uint64_t dur = gp_api_dur_ns(a);
	w->has_api = 1;
	w->kind = (uint8_t)c;
	w->tid = a->tid;
	/* CUPTI's own cost at the call's entry is the profiler's, not the
	 * program's wait: the wait begins after it (metrics.md §3) */
	uint64_t cc = cupti < dur ? cupti : dur;
	w->cupti = (uint32_t)(cc < UINT32_MAX ? cc : UINT32_MAX);
	w->w0 = a->start + w->cupti;
	w->w1 = a->start + dur;
	/* CUPTI's record says when its time in the call ended: an op that
	 * ended before that (the call's entry ran before CUPTI's time) was not
	 * waited for either (metrics.md §3) */
	uint64_t ce = an->cost.call_end;
	w->c0 = ce > w->w0 && ce <= w->w1 ? ce : w->w0;
	if (c == GP_API_SYNC_DEVICE || gp_an_is_implicit_sync(c))
		w->stream = GP_NONE32;
	w->copy = gp_an_is_copy_sync(c);
	if (c == GP_API_MEMCPY_ASYNC) {
		/* blocking only if its op says pageable memory (gp_sync_arrived);
		 * the join folds the op after this record, never before */
		w->tentative = 1;
		return;
	}
	gp_sync_activate(an, w);
}


/* CUPTI's INSTRUMENTATION record of blocking call corr came after the
 * call's API record (cupti_cost.c): its wait, not charged yet, begins after
 * that cost too (a thread's waits stay in w0 order: the next one begins
 * after this call's end). Returns 1 when taken. */
int gp_sync_cupti_late(struct gp_an *an, uint32_t corr, uint64_t ns, uint64_t end)
{
	struct gp_wait *w = gp_sync_get(an, corr, 0);
	if (!w || !w->has_api)
		return 0;
	uint64_t room = w->w1 - w->w0;
	if (ns > room)
		ns = room;
	if ((uint64_t)w->cupti + ns > UINT32_MAX)
		return 1;
	w->w0 += ns;
	w->cupti += (uint32_t)ns;
	if (w->c0 < w->w0)
		w->c0 = w->w0;
	if (end > w->c0 && end <= w->w1)
		w->c0 = end;
	if (w->active)
		gp_sync_search(an, w); /* an op that ended inside CUPTI's cost was not waited for */
	return 1;
}

/* A hooked blocking call (pass 2; the core calls it for sync classes and
 * blocking copies only): its stack reaches the CUPTI wait through the
 * external correlation; in a hook-only trace a synchronize is counted
 * unattributed (no GPU times to charge it to). */
void gp_sync_hook(struct gp_an *an, const struct gp_rec_api *a)
{
	unsigned c = GP_API_CLASS(a->class_flags);
	if (!(gp_an_is_sync_class(c) || gp_an_is_copy_sync(c) || gp_an_is_implicit_sync(c)))
		return;
	if (!an->hook_only) {
		gp_sync_shook_add(an, a->corr, gp_an_is_copy_sync(c));
	} else if (gp_an_is_sync_class(c)) {
		uint64_t d = gp_api_dur_ns(a);
		an->sync.sync_calls[c]++;
		an->sync.sync_kind_ns[c] += d;
		an->sync.sync_unattr_ns += d;
		an->sync.sync_unattr_calls++;
		gp_an_fail(an, gp_sweep_add(&an->covered, a->start, a->start + d));
	}
}

/* A CUPTI synchronization record: the stream a wait was scoped to. */
void gp_sync_record(struct gp_an *an, const struct gp_rec_sync *r)
{
	struct gp_wait *w = gp_sync_get(an, r->corr, 1);
	if (!w || r->stream == GP_NONE32)
		return;
	w->stream = r->stream;
	if (w->active && w->kind != GP_API_SYNC_DEVICE)
		gp_sync_search(an, w); /* the scope narrowed after activation */
}

/* A blocking call's external correlation that came before its hook (CUPTI's
 * buffer was written first): remember which wait the hook's stack is for.
 * Bounded: the map is emptied when it reaches GP_RECENT entries. */
void gp_sync_early_ext(struct gp_an *an, uint64_t ext, uint32_t corr)
{
	if (an->sync.early_ext.count >= GP_RECENT)
		gp_map_free(&an->sync.early_ext);
	gp_an_fail(an, gp_map_put(&an->sync.early_ext, ext, corr));
}

/* A CUPTI OVERHEAD record: a COMMAND_BUFFER_FULL one is the interval its
 * call (correlation id) waited on a full launch queue, kept until the
 * call's op folds (gp_qfull_arrived). CUPTI writes it in the calling
 * thread's buffer, before the call's own API record, so it usually arrives
 * before the call's op arrives; one that comes after is applied to the kept launch
 * (gp_qfull_late). Several for one call merge (first start, last
 * end). Bounded: the maps are emptied when they reach GP_RECENT entries. */
void gp_sync_overhead(struct gp_an *an, const struct gp_rec_overhead *o)
{
	struct gp_sync *s = &an->sync;
	if (o->kind != GP_OVH_COMMAND_BUFFER_FULL || !o->corr || o->end <= o->start)
		return;
	uint64_t *li = s->launch_by_corr.count ? gp_map_get(&s->launch_by_corr, o->corr) : NULL;
	if (li) { /* its call's op has arrived already */
		gp_qfull_late(an, &s->launches[*li], o->start, o->end);
		return;
	}
	if (s->launch_gone_max && o->corr <= s->launch_gone_max) {
		/* a call arrived more than GP_LAUNCHES launches ago (or as late
		 * itself): beyond the bounds */
		s->queue_late++;
		s->waits_late++;
		return;
	}
	if (s->cbf_start.count >= GP_RECENT) {
		gp_map_free(&s->cbf_start);
		gp_map_free(&s->cbf_end);
	}
	uint64_t *a = gp_map_get(&s->cbf_start, o->corr), *b = gp_map_get(&s->cbf_end, o->corr);
	if (a && b) {
		if (o->start < *a)
			*a = o->start;
		if (o->end > *b)
			*b = o->end;
		return;
	}
	gp_an_fail(an, gp_map_put(&s->cbf_start, o->corr, o->start));
	gp_an_fail(an, gp_map_put(&s->cbf_end, o->corr, o->end));
}

/* The stack of a sync hook (pass 2): to its wait through the external
 * correlation, whichever came first. */
void gp_sync_stack_ref(struct gp_an *an, uint32_t op, uint32_t stack)
{
	uint64_t *sh = gp_sync_shook_get(an, op);
	if (sh)
		*sh = (*sh & GP_SHOOK_COPY) | stack;
	uint64_t *c = an->sync.early_ext.count ? gp_map_get(&an->sync.early_ext, op) : NULL;
	if (c) {
		struct gp_wait *w = gp_sync_get(an, (uint32_t)*c, 0);
		if (w && !w->stack)
			w->stack = stack;
		gp_map_del(&an->sync.early_ext, op);
	}
}

/* An external correlation (CUSTOM2) of a blocking call's hook: its stack
 * goes to the wait. Returns 1 when the call has no op to join (a
 * synchronize), 0 when the join must see the record too. */
int gp_sync_extcorr(struct gp_an *an, const struct gp_rec_extcorr *e)
{
	uint64_t *sh = gp_sync_shook_get(an, e->ext_id);
	if (!sh)
		return 0;
	uint32_t stack = (uint32_t)*sh;
	struct gp_wait *w = gp_sync_get(an, e->corr, 1);
	if (w)
		w->stack = stack;
	if (!stack) /* the hook came, its stack reference not yet */
		gp_sync_early_ext(an, e->ext_id, e->corr);
	/* a blocking copy/set also has an op to join, whether or not its API
	 * record has arrived yet (deciding that from the wait left the first
	 * cudaMemcpy's hook unjoined when CUPTI wrote the ext corr before the
	 * API record) */
	return !(*sh & GP_SHOOK_COPY);
}

/* An op with GPU times arrived (iteration slot `slot`, place `seq` in the
 * fold line): keep it in the recent buffer, offer it to the waits, hold it
 * in the line for its own blocking call's wait, and charge the waits past
 * the horizon. Returns 0 or -ENOMEM (the recent buffer). */
int gp_sync_arrived(struct gp_an *an, const struct gp_an_op *op, int64_t slot, uint32_t stack, uint64_t seq)
{
	struct gp_sync *s = &an->sync;
	struct gp_recent r = { .e = op->gpu_end, .api_end = op->api_end, .gpu_start = op->gpu_start,
			       .launch = op->launch_ns, .launch_raw = op->launch_raw_ns, .seq = seq, .stream = op->stream,
			       .group = op->group, .corr = op->corr, .iter = (int32_t)slot, .has_api = op->has_api, .device = op->device,
			       .copy_sync = (uint8_t)(op->has_api && op->blocking) };
	/* the recent buffer: sorted by e, the oldest dropped when full */
	if (!s->recent && !(s->recent = malloc(GP_RECENT * sizeof *s->recent)))
		return -ENOMEM;
	if (s->nrecent == GP_RECENT) {
		s->recent_head = (s->recent_head + 1) & (GP_RECENT - 1);
		s->nrecent--;
	}
	size_t i = s->nrecent;
	while (i > 0 && gp_sync_recent_at(an, i - 1)->e > r.e) {
		s->recent[(s->recent_head + i) & (GP_RECENT - 1)] = *gp_sync_recent_at(an, i - 1);
		i--;
	}
	s->recent[(s->recent_head + i) & (GP_RECENT - 1)] = r;
	s->nrecent++;
	gp_sync_late(an, &r);
	gp_sync_offer(an, &r);
	/* the op of a blocking copy/set bounds its wait's candidates */
	struct gp_wait *w = r.copy_sync || (op->has_api && op->api_class == GP_API_MEMCPY_ASYNC)
				    ? gp_sync_get(an, op->corr, 0)
				    : NULL;
	if (w && w->tentative) {
		w->tentative = 0;
		if (!r.copy_sync) {
			gp_sync_release(an, w); /* pinned: the call did not wait */
			w = NULL;
		} else {
			/* pageable: a blocking copy; its hook's stack is the op's */
			w->copy = 1;
			if (!w->stack)
				w->stack = stack;
			gp_sync_activate(an, w);
		}
	}
	if (w && w->active) {
		if (!w->stack)
			w->stack = stack; /* the copy's hook came after CUPTI's records */
		gp_sync_consider(w, &r);
		if (w->has_best && (w->best.e > w->own_gpu_start || w->best.device != w->own_device))
			gp_sync_search(an, w);
	} else if (w) {
		gp_sync_consider(w, &r);
	}
	if (w && w->copy && !w->own_held) {
		/* its launch is final once this wait is charged */
		w->own_held = 1;
		w->own_seq = seq;
		gp_line_hold(an, seq);
	}
	if ((++s->op_seq & 1023u) == 0)
		gp_sync_expire(an, 0);
	return 0;
}

static int gp_sync_cmp_cs(const void *a, const void *b)
{
	const struct gp_rep_callsite *x = a, *y = b;
	return x->sync_ns > y->sync_ns ? -1 : x->sync_ns < y->sync_ns;
}

/* Charge the waits still open and move the sync results into rep. */
void gp_sync_finish(struct gp_an *an, struct gp_rep *rep)
{
	struct gp_sync *s = &an->sync;
	gp_sync_expire(an, 1);
	while (s->nlaunches) { /* no COMMAND_BUFFER_FULL record can come now */
		gp_line_release(an, s->launches[s->launch_head].seq);
		s->launch_head = (s->launch_head + 1) % GP_LAUNCHES;
		s->nlaunches--;
	}
	if (s->ncs) /* qsort(NULL, 0) is undefined (UBSan: nonnull) */
		qsort(s->cs, s->ncs, sizeof *s->cs, gp_sync_cmp_cs);
	rep->callsites = s->cs;
	rep->ncallsites = s->ncs;
	s->cs = NULL;
	s->ncs = s->capcs = 0;
	memcpy(rep->sync_calls, s->sync_calls, sizeof rep->sync_calls);
	memcpy(rep->sync_kind_ns, s->sync_kind_ns, sizeof rep->sync_kind_ns);
	rep->sync_unattributed_ns = s->sync_unattr_ns;
	rep->sync_unattributed_calls = s->sync_unattr_calls;
	rep->queue_full_calls = s->queue_calls;
	rep->waits_late = s->waits_late;
	rep->queue_waits_late = s->queue_late;
	rep->queue_full_ns = s->queue_ns;
	rep->sync_ns = s->sync_total;
}

void gp_sync_free(struct gp_sync *s)
{
	free(s->waits);
	gp_dmap_free(&s->wait_by_corr);
	for (size_t i = 0; i < s->ntq; i++)
		free(s->tq[i].idx);
	free(s->tq);
	gp_map_free(&s->tq_by_tid);
	free(s->recent);
	free(s->queue);
	free(s->settled);
	gp_map_free(&s->early_ext);
	gp_map_free(&s->cbf_start);
	gp_map_free(&s->cbf_end);
	free(s->launches);
	gp_map_free(&s->launch_by_corr);
	gp_map_free(&s->shook);
	free(s->shook_fifo);
	free(s->shook_seen);
	gp_map_free(&s->cs_map);
	for (size_t i = 0; i < s->ncs; i++) {
		free(s->cs[i].name);
		free(s->cs[i].stack);
	}
	free(s->cs);
}
