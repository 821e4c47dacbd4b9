/*
 * queue_full.c — launch-queue back-pressure (docs/metrics.md §3): the time
 * a launch, async copy/set or graph launch spent blocked on a full launch
 * queue, taken out of its launch and charged as sync to the op whose end
 * freed the slot. From CUPTI's COMMAND_BUFFER_FULL overhead records when the
 * trace has them (a record may come after its call's op: the last
 * GP_LAUNCHES launches are kept, each op held in the fold line while kept),
 * inferred from the queue's level otherwise (a new level's first launches
 * held until it is confirmed, within GP_WAIT_HORIZON ops). The wait
 * machinery it charges through is sync.c's.
 *
 * A wait handed to the wait sink names its launch's call site (the
 * launching hook's stack, as every wait's site), so the what-if can say
 * where the launches waited; the Sync call sites table keeps to the
 * synchronizing calls.
 *
 * Called by the core and sync.c on the report thread, in pass 2 and at
 * finish. Invariant: a queue wait leaves its call's launch once, while that
 * op is in the fold line, and is charged once (to an op, or to nothing
 * outstanding).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

/* The call site of the launch of op seq (in the fold line), as the report
 * names call sites: a canonical string, UINT32_MAX when it has none. */
static uint32_t gp_qfull_site(struct gp_an *an, uint64_t seq)
{
	char buf[32];
	const char *site = gp_an_callsite(an, gp_line_stack(an, seq), buf, sizeof buf);
	return site ? gp_an_canon(an, site, strlen(site)) : UINT32_MAX;
}

/* Charge a launch's wait on a full queue: out of the launch of its call's
 * op (in the fold line), into the sync of the op whose end freed the slot. */
static void gp_qfull_charge(struct gp_an *an, const struct gp_queue_wait *q)
{
	struct gp_sync *s = &an->sync;
	struct gp_group *g = &an->groups[q->best_group];
	const struct gp_an_op *op = gp_line_op(an, q->op_seq);
	if (!op)
		return; /* folded: cannot happen while the wait holds it */
	uint64_t w = q->w < op->launch_ns ? q->w : op->launch_ns;
	/* the wait began after CUPTI's own cost (q->cupti); measured from the
	 * call's entry it would have held that cost too (launch_raw) */
	gp_line_less(an, q->op_seq, w, w + q->cupti);
	an->cost.from_sync_ns += q->cupti;
	g->sync += w;
	g->sync_queue += w;
	g->sync_calls++;
	s->sync_total += w;
	s->queue_calls++;
	s->queue_ns += w;
	if (q->best_iter >= 0)
		an->iters[q->best_iter].sync += w;
	if (an->cfg.on_wait) {
		struct gp_an_wait out = { .kind = GP_API_LAUNCH, .attributed = 1, .tid = q->tid, .corr = q->corr,
					  .op_corr = q->best_corr, .stream = q->stream, .w0 = q->w0, .w1 = q->w0 + w,
					  .call_start = q->a0, .call_end = q->a1, .group = (int32_t)q->best_group,
					  .site = gp_qfull_site(an, q->op_seq) };
		an->cfg.on_wait(&out, an->cfg.ctx);
	}
}

/* A full queue's wait whose freeing op is out of sight: it leaves the
 * launch all the same, as sync with nothing to charge. */
static void gp_qfull_unattr(struct gp_an *an, const struct gp_queue_wait *q)
{
	struct gp_sync *s = &an->sync;
	gp_line_less(an, q->op_seq, q->w, 0);
	s->queue_calls++;
	s->queue_ns += q->w;
	s->sync_unattr_ns += q->w;
	s->sync_unattr_calls++;
	if (an->cfg.on_wait) {
		struct gp_an_wait out = { .kind = GP_API_LAUNCH, .tid = q->tid, .corr = q->corr, .stream = q->stream,
					  .w0 = q->w0, .w1 = q->w0 + q->w, .call_start = q->a0, .call_end = q->a1,
					  .group = -1, .site = gp_qfull_site(an, q->op_seq) };
		an->cfg.on_wait(&out, an->cfg.ctx);
	}
}

/* A full queue's wait [c0, c1] (CUPTI's COMMAND_BUFFER_FULL) of launch L,
 * whose op has arrived (and waits in the fold line for it), left open: it
 * takes the first op of L's device enqueued before the call to end in it,
 * among the arrived ops and those arriving in the next GP_WAIT_HORIZON, like any wait (metrics.md §3, late
 * records). Returns its slot or GP_NONE32 (ENOMEM). */
static uint32_t gp_qfull_open(struct gp_an *an, const struct gp_launch *L, uint64_t c0, uint64_t c1)
{
	struct gp_sync *s = &an->sync;
	uint32_t idx;
	if (GP_AN_SLOT(s->waits, s->nwaits, s->capwaits, s->wait_free, idx))
		return gp_an_fail(an, -ENOMEM), GP_NONE32;
	struct gp_wait *w = &s->waits[idx];
	memset(w, 0, sizeof *w);
	w->queue = 1;
	w->kind = GP_API_LAUNCH;
	w->has_api = 1;
	w->tid = L->tid;
	w->corr = L->corr;
	w->stream = L->stream;
	w->w0 = c0;
	w->w1 = c1;
	w->call0 = L->a0;
	w->call1 = L->a1;
	w->own_held = 1; /* the call's op stays in the fold line for it */
	w->own_seq = L->seq;
	gp_line_hold(an, L->seq);
	w->own_launch = L->launch;
	w->own_device = L->device;
	w->best.group = GP_NONE32;
	gp_sync_activate(an, w);
	return idx;
}

/* Charge an open queue wait (gp_sync_expire): W = [w0, min(the freeing
 * op's end, w1)], at most the launch left; the op sink had the call's op
 * with W in its launch. */
void gp_qfull_finalize(struct gp_an *an, const struct gp_wait *w)
{
	uint64_t end = w->has_best && w->best.e < w->w1 ? w->best.e : w->w1;
	uint64_t d = end > w->w0 ? end - w->w0 : 0;
	if (d > w->own_launch)
		d = w->own_launch;
	if (!d || !w->own_held)
		return;
	struct gp_queue_wait q = { .op_seq = w->own_seq, .best_group = w->best.group,
				   .best_iter = (int32_t)w->best.iter, .w = d,
				   .tid = w->tid, .corr = w->corr, .best_corr = w->best.corr, .stream = w->stream,
				   .a0 = w->call0, .a1 = w->call1, .w0 = w->w0 };
	if (w->has_best && w->best.group < an->ngroups)
		gp_qfull_charge(an, &q);
	else
		gp_qfull_unattr(an, &q);
}

/* Keep an arrived launch for a COMMAND_BUFFER_FULL record that comes later
 * (a ring of GP_LAUNCHES, by corr; the largest corr that left it is kept:
 * a record of an older call is too late to apply). */
static void gp_qfull_keep(struct gp_an *an, const struct gp_launch *L)
{
	struct gp_sync *s = &an->sync;
	if (!s->launches && !(s->launches = malloc(GP_LAUNCHES * sizeof *s->launches)))
		return gp_an_fail(an, -ENOMEM);
	if (s->nlaunches == GP_LAUNCHES) {
		const struct gp_launch *old = &s->launches[s->launch_head];
		uint64_t *v = gp_map_get(&s->launch_by_corr, old->corr);
		if (v && *v == s->launch_head)
			gp_map_del(&s->launch_by_corr, old->corr);
		if (old->corr > s->launch_gone_max)
			s->launch_gone_max = old->corr;
		uint64_t gone = old->seq;
		s->launch_head = (s->launch_head + 1) % GP_LAUNCHES;
		s->nlaunches--;
		gp_line_release(an, gone); /* no record of it can apply now */
	}
	size_t i = (s->launch_head + s->nlaunches++) % GP_LAUNCHES;
	s->launches[i] = *L;
	gp_line_hold(an, L->seq); /* its launch is final once it leaves */
	gp_an_fail(an, gp_map_put(&s->launch_by_corr, L->corr, i));
}

/* A COMMAND_BUFFER_FULL record [c0, c1] of a call whose op arrived
 * before it came (metrics.md §3, late records): merged into the call's open
 * queue wait, or opened as one; when the call's wait was charged already,
 * or the call left the ring, it is counted in waits_late. */
void gp_qfull_late(struct gp_an *an, struct gp_launch *L, uint64_t c0, uint64_t c1)
{
	struct gp_sync *s = &an->sync;
	if (c0 < L->a0)
		c0 = L->a0;
	if (c1 > L->a1)
		c1 = L->a1; /* CUPTI's record lies inside its call */
	if (c1 <= c0)
		return;
	struct gp_wait *w = L->wait != GP_NONE32 && L->wait < s->nwaits ? &s->waits[L->wait] : NULL;
	if (w && w->queue && w->active && w->corr == L->corr) {
		if (c0 < w->w0)
			w->w0 = c0;
		if (c1 > w->w1)
			w->w1 = c1;
		gp_sync_search(an, w); /* several records of one call merge */
		return;
	}
	if (L->cbf) { /* charged already */
		s->queue_late++;
		s->waits_late++;
		return;
	}
	L->cbf = 1;
	L->wait = gp_qfull_open(an, L, c0, c1);
}

/* Back-pressure as CUPTI reports it (metrics.md §3): the call's
 * COMMAND_BUFFER_FULL interval [c0, c1] is its wait, ended by the first op of
 * its device enqueued before the call and ending after c0 (at most c1 + the
 * clock tolerance): W = [c0, min(that end, c1)], charged as sync to that op
 * on the call's op's arrival when that op has arrived already, else left
 * open for it (the op's records late). A call without the record did not
 * wait, whatever its length, unless the record comes later
 * (gp_qfull_late): until it leaves the ring of kept launches, its op
 * waits in the fold line. */
static void gp_qfull_cupti(struct gp_an *an, const struct gp_an_op *op, uint64_t seq)
{
	struct gp_sync *s = &an->sync;
	struct gp_launch L = { .a0 = op->api_start, .a1 = op->api_end, .launch = op->launch_ns, .seq = seq,
			       .corr = op->corr, .tid = op->tid, .stream = op->stream, .wait = GP_NONE32,
			       .device = op->device };
	uint64_t *pa = s->cbf_start.count ? gp_map_get(&s->cbf_start, op->corr) : NULL;
	uint64_t *pb = pa ? gp_map_get(&s->cbf_end, op->corr) : NULL;
	if (!pa || !pb) {
		gp_qfull_keep(an, &L);
		return;
	}
	uint64_t c0 = *pa, c1 = *pb;
	gp_map_del(&s->cbf_start, op->corr);
	gp_map_del(&s->cbf_end, op->corr);
	L.cbf = 1;
	size_t lo = gp_sync_recent_after(an, c0);
	const struct gp_recent *best = NULL;
	for (size_t i = lo, n = 0; i < s->nrecent && n < GP_QUEUE_SCAN; i++, n++) {
		const struct gp_recent *r = gp_sync_recent_at(an, i);
		if (r->e > c1 + GP_CLOCK_TOLERANCE_NS)
			break;
		if (r->device == op->device && r->has_api && r->api_end <= op->api_start && r->corr != op->corr) {
			best = r; /* sorted by e: the first to end freed the slot */
			break;
		}
	}
	if (!best || best->group >= an->ngroups) {
		/* the op that freed the slot has not arrived yet: the wait
		 * stays open for it */
		if (c1 > c0)
			L.wait = gp_qfull_open(an, &L, c0, c1 < op->api_end ? c1 : op->api_end);
		gp_qfull_keep(an, &L);
		return;
	}
	uint64_t w = (best->e < c1 ? best->e : c1) - c0;
	if (w > op->launch_ns)
		w = op->launch_ns;
	gp_qfull_keep(an, &L);
	if (!w)
		return;
	struct gp_queue_wait q = { .op_seq = seq, .best_group = best->group, .best_iter = best->iter, .w = w,
				   .tid = op->tid, .corr = op->corr, .best_corr = best->corr, .stream = op->stream,
				   .a0 = op->api_start, .a1 = op->api_end, .w0 = c0 };
	gp_qfull_charge(an, &q);
}

/* Let go of the candidates of a level not (or no longer) confirmed: their
 * calls' launches are final as they are. */
static void gp_qfull_drop(struct gp_an *an, struct gp_queue_dev *d)
{
	for (uint32_t k = 0; k < d->ncand; k++)
		gp_line_release(an, d->cand[k].op_seq);
	d->ncand = 0;
}

/* Candidates whose level was not confirmed within GP_WAIT_HORIZON ops of
 * the fold line (all of them when final) are let go (metrics.md §3). */
void gp_qfull_expire(struct gp_an *an, int final)
{
	struct gp_sync *s = &an->sync;
	uint64_t now = an->line.head_seq + an->line.n;
	for (size_t i = 0; s->queue && i < 256; i++) {
		struct gp_queue_dev *d = &s->queue[i];
		if (d->ncand && (final || d->cand[0].op_seq + GP_WAIT_HORIZON < now))
			gp_qfull_drop(an, d);
	}
}

/* Back-pressure (metrics.md §3): a launch, async copy/set or graph launch
 * that began with as many ops of its device pending (enqueued before it
 * began, ended after) as were ever seen pending there — at least
 * GP_QUEUE_DEEP, and a level found by GP_QUEUE_HITS launches, so a queue
 * that is merely growing is not taken for a full one — and during which one
 * of them ended, waited on the full launch queue from its start to the
 * first such end (that op's end freed the slot). The wait is charged as
 * sync to that op and taken out of the call's launch (the first launches at
 * a new level wait in the fold line until the level is confirmed, within
 * GP_WAIT_HORIZON ops). Called on the op's arrival (seq: its place in
 * the fold line); the ops it looks at have arrived
 * already (they end before it). */
void gp_qfull_arrived(struct gp_an *an, const struct gp_an_op *op, uint64_t seq)
{
	struct gp_sync *s = &an->sync;
	if (!op->has_api || op->blocking || !op->launch_ns || op->group >= an->ngroups)
		return;
	if (op->api_class != GP_API_LAUNCH && op->api_class != GP_API_MEMCPY_ASYNC &&
	    op->api_class != GP_API_MEMSET_ASYNC && op->api_class != GP_API_GRAPH_LAUNCH)
		return;
	if (an->status[GP_STATUS_CUPTI_OVERHEAD]) {
		gp_qfull_cupti(an, op, seq); /* (its freeing op may come later) */
		return;
	}
	if (!s->nrecent)
		return;
	/* the call, from after CUPTI's own cost at its entry (metrics.md §3) */
	uint64_t a0 = op->api_start + op->cupti_ns, a1 = op->api_end;
	size_t lo = gp_sync_recent_after(an, a0);
	if (s->nrecent - lo < GP_QUEUE_DEEP)
		return;
	const struct gp_recent *best = NULL;
	unsigned pending = 0;
	for (size_t i = lo, n = 0; i < s->nrecent && n < GP_QUEUE_SCAN; i++, n++) {
		const struct gp_recent *r = gp_sync_recent_at(an, i);
		if (r->device != op->device || !r->has_api || r->api_end > a0)
			continue; /* another device, or enqueued after the call began */
		pending++;
		if (r->e <= a1 && !best)
			best = r; /* sorted by e: the first to end freed the slot */
	}
	if (!s->queue && !(s->queue = calloc(256, sizeof *s->queue))) {
		gp_an_fail(an, -ENOMEM);
		return;
	}
	struct gp_queue_dev *d = &s->queue[op->device];
	if (pending > d->max) {
		d->max = pending;
		d->hits = 0;
		gp_qfull_drop(an, d);
	}
	if (pending < GP_QUEUE_DEEP || pending < d->max)
		return;
	d->hits++;
	if (!best || best->group >= an->ngroups)
		return;
	struct gp_queue_wait q = { .op_seq = seq, .best_group = best->group, .best_iter = best->iter,
				   .w = best->e - a0, .cupti = op->cupti_ns, .tid = op->tid, .corr = op->corr,
				   .best_corr = best->corr, .stream = op->stream, .a0 = op->api_start, .a1 = a1,
				   .w0 = a0 };
	if (q.w > op->launch_ns)
		q.w = op->launch_ns;
	if (d->hits < GP_QUEUE_HITS) {
		if (d->ncand < GP_QUEUE_HITS - 1) {
			d->cand[d->ncand++] = q;
			gp_line_hold(an, seq); /* its launch waits for the level */
		}
		return;
	}
	for (uint32_t k = 0; k < d->ncand; k++) {
		gp_qfull_charge(an, &d->cand[k]);
		gp_line_release(an, d->cand[k].op_seq);
	}
	d->ncand = 0;
	gp_qfull_charge(an, &q);
}
