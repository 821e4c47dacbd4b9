/*
 * depgraph_replay.c — the replay of a built dependency graph (depgraph.h
 * gp_dg_replay; docs/metrics.md "What-if"): every timestamp recomputed from
 * the durations, the gaps and the edges (the legacy default stream's order
 * included: depgraph_legacy.c), with one change applied (a wait that now
 * sleeps wakes as late as the host's waits did), and the
 * critical path of the result; and which names a change could apply to
 * (gp_dg_match). One cursor per thread and per stream advances over nodes
 * whose inputs are known; the measured order is a topological order of
 * every edge and a change only removes or shortens edges, so the cursors do
 * not stall; where the measured times contradict an edge (a cycle), the
 * node measured first among those stopped is placed without the input it
 * lacks, so every graph replays to its end. Single-threaded; the graph is
 * read only; memory: a few arrays of one entry per node.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gp_format.h"
#include "depgraph_int.h"

/* A call's duration and wait under change ch: 0 when it keeps its own. */
int gp_dg_call_changed(const struct gp_dg *g, const struct gp_dg_c *c, const struct gp_dg_change *ch,
		       uint64_t *dur)
{
	if (!ch)
		return 0;
	switch (ch->kind) {
	case GP_DG_DROP_SYNC:
		if ((gp_dg_is_sync(c->cls) || gp_dg_is_implicit(c->cls)) && gp_dg_named(c->name, ch->target))
			return *dur = 0, 1;
		break;
	case GP_DG_HOIST:
		if (gp_dg_is_implicit(c->cls) && gp_dg_named(c->name, ch->target))
			return *dur = 0, 1;
		break;
	case GP_DG_DROP_SITE:
		if ((gp_dg_is_sync(c->cls) || gp_dg_is_implicit(c->cls)) && gp_dg_site_matches(c->site, ch->target))
			return *dur = 0, 1;
		break;
	case GP_DG_DROP_EMPTY:
		if (c->empty)
			return *dur = 0, 1;
		break;
	case GP_DG_GRAPH_LAUNCH:
		if (c->cls == GP_API_LAUNCH && c->op >= 0 && gp_dg_named(g->o[c->op].name, ch->target))
			return *dur = ch->cost_ns * c->nops, 1;
		break;
	case GP_DG_PINNED:
	case GP_DG_DEFER:
		if (c->held && gp_dg_named(g->o[c->op].name, ch->target))
			return *dur = ch->cost_ns, 1;
		break;
	case GP_DG_PINNED_SITE:
	case GP_DG_DEFER_SITE:
		if (c->held && gp_dg_site_matches(c->site, ch->target))
			return *dur = ch->cost_ns, 1;
		break;
	case GP_DG_QUEUE:
		/* without the wait, no waking late either: a call of its class
		 * that did not wait, at most its time less the wait */
		if (c->qwait) {
			uint64_t own = c->end - c->start - c->qwait, free = g->free_cost[c->cls];
			return *dur = free && free < own ? free : own, 1;
		}
		break;
	default:
		break;
	}
	return 0;
}

#define GP_DG_PATH_NAMES 256 /* distinct names summed on the critical path; the
				 last one takes the time of any further name */

struct gp_dg_acc {
	struct gp_dg_path *p;
	size_t n, max;
};

static void gp_dg_acc_add(struct gp_dg_acc *a, const char *name, uint64_t ns)
{
	if (!ns)
		return;
	name = name ? name : "(unnamed)";
	for (size_t i = 0; i < a->n; i++)
		if (a->p[i].name == name || strcmp(a->p[i].name, name) == 0) {
			a->p[i].ns += ns;
			return;
		}
	if (a->n < a->max)
		a->p[a->n++] = (struct gp_dg_path){ name, ns };
	else if (a->max) { /* no room: the last entry takes the rest */
		a->p[a->max - 1].name = "(other)";
		a->p[a->max - 1].ns += ns;
	}
}

static int gp_dg_cmp_path(const void *a, const void *b)
{
	const struct gp_dg_path *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* One replay's timestamps: per call (0..nc-1) and per op (0..no-1) its
 * start, end and the node that bound it (calls 0..nc-1, ops nc..; -1 none),
 * and the per-thread and per-stream cursors of the sweep. */
struct gp_dg_run {
	uint64_t *cs, *ce, *os, *oe;
	int32_t *cp, *op;
	uint8_t *cst, *od, *cchg; /* cst: 1 start known, 2 done; od: op done; cchg: call changed */
	size_t *tcur, *tend, *scur, *send;
	int32_t *tdefer;          /* per thread: the op of its last deferred copy, -1 none */
	size_t nt, ns, cdone, odone;
};

static void gp_dg_run_free(struct gp_dg_run *r)
{
	free(r->cs), free(r->ce), free(r->os), free(r->oe), free(r->cp), free(r->op);
	free(r->cst), free(r->od), free(r->cchg);
	free(r->tcur), free(r->tend), free(r->scur), free(r->send), free(r->tdefer);
}

/* Arrays and cursors: calls are sorted by thread, ops by stream. */
static int gp_dg_run_init(struct gp_dg_run *r, const struct gp_dg *g)
{
	size_t nc = g->nc, no = g->no;
	memset(r, 0, sizeof *r);
	for (size_t k = 0; k < nc; k++)
		r->nt += g->c[k].first;
	for (size_t k = 0; k < no; k++)
		r->ns += !k || g->o[k].stream != g->o[k - 1].stream;
	r->cs = malloc((nc + 1) * sizeof *r->cs), r->ce = malloc((nc + 1) * sizeof *r->ce);
	r->os = malloc((no + 1) * sizeof *r->os), r->oe = malloc((no + 1) * sizeof *r->oe);
	r->cp = malloc((nc + 1) * sizeof *r->cp), r->op = malloc((no + 1) * sizeof *r->op);
	r->cst = calloc(nc + 1, 1), r->od = calloc(no + 1, 1), r->cchg = calloc(nc + 1, 1);
	r->tcur = malloc((r->nt + 1) * sizeof *r->tcur), r->tend = malloc((r->nt + 1) * sizeof *r->tend);
	r->scur = malloc((r->ns + 1) * sizeof *r->scur), r->send = malloc((r->ns + 1) * sizeof *r->send);
	r->tdefer = malloc((r->nt + 1) * sizeof *r->tdefer);
	if (!r->cs || !r->ce || !r->os || !r->oe || !r->cp || !r->op || !r->cst || !r->od || !r->cchg || !r->tcur ||
	    !r->tend || !r->scur || !r->send || !r->tdefer)
		return -ENOMEM;
	for (size_t t = 0; t < r->nt; t++)
		r->tdefer[t] = -1;
	for (size_t k = 0, t = 0; k < nc; k++) {
		if (g->c[k].first)
			r->tcur[t++] = k;
		r->tend[t - 1] = k + 1;
	}
	for (size_t k = 0, t = 0; k < no; k++) {
		if (!k || g->o[k].stream != g->o[k - 1].stream)
			r->scur[t++] = k;
		r->send[t - 1] = k + 1;
	}
	return 0;
}

/* Place call k of thread t (its start is known): it waits for its
 * releasing op unless the change removes it; a deferred copy waits for the
 * thread's previous deferred copy instead. Returns 0 when that op is not
 * placed yet; with force, the call then lasts its measured duration (a
 * deferred copy its new one) instead. */
static int gp_dg_place_call(struct gp_dg_run *r, const struct gp_dg *g, const struct gp_dg_change *ch, size_t k,
			    size_t t, int force)
{
	const struct gp_dg_c *c = &g->c[k];
	uint64_t dur = c->end - c->start;
	int chg = gp_dg_call_changed(g, c, ch, &dur);
	int32_t before = chg && (ch->kind == GP_DG_DEFER || ch->kind == GP_DG_DEFER_SITE) ? r->tdefer[t] : -1;
	r->cchg[k] = (uint8_t)chg;
	if (before >= 0 && !r->od[before] && !force)
		return 0;
	if (before >= 0) {
		r->tdefer[t] = c->op;
		r->ce[k] = r->cs[k] + dur;
		if (r->od[before] && r->oe[before] > r->cs[k]) {
			r->ce[k] = r->oe[before] + dur;
			r->cp[k] = (int32_t)(g->nc + (size_t)before);
		}
	} else if (!chg && c->wait >= 0 && r->od[c->wait]) {
		uint64_t rel = r->oe[c->wait] > r->cs[k] ? r->oe[c->wait] : r->cs[k];
		if (r->oe[c->wait] > r->cs[k])
			r->cp[k] = (int32_t)(g->nc + (size_t)c->wait);
		/* a wait that now sleeps wakes as late as the host's did; one
		 * that no longer does, without its own waking late */
		int slept = r->oe[c->wait] >= r->cs[k] + GP_DG_SLEEP_NS;
		uint64_t post = c->post;
		if (slept && !c->slept)
			post += g->late;
		else if (!slept && c->slept)
			post -= c->late;
		r->ce[k] = rel + post;
	} else if (!chg && c->wait >= 0 && !force) {
		return 0;
	} else {
		r->ce[k] = r->cs[k] + dur;
		if (chg && (ch->kind == GP_DG_DEFER || ch->kind == GP_DG_DEFER_SITE))
			r->tdefer[t] = c->op; /* the thread's first: waits nowhere */
	}
	r->cst[k] = 2;
	r->cdone++;
	return 1;
}

/* Advance every thread's calls as far as their inputs are known: a call
 * starts after the one before it (plus the host gap) and, if it waited for
 * an op that has not been placed, stops the thread there. Returns whether
 * anything moved. */
static int gp_dg_run_calls(struct gp_dg_run *r, const struct gp_dg *g, const struct gp_dg_change *ch)
{
	int progress = 0;
	for (size_t t = 0; t < r->nt; t++) {
		size_t k = r->tcur[t];
		for (; k < r->tend[t]; k++) {
			const struct gp_dg_c *c = &g->c[k];
			if (!r->cst[k]) {
				r->cs[k] = c->first ? c->start : r->ce[k - 1] + c->gap;
				r->cp[k] = c->first ? -1 : (int32_t)k - 1;
				r->cst[k] = 1;
				progress = 1;
			}
			if (!gp_dg_place_call(r, g, ch, k, t, 0))
				break;
			progress = 1;
		}
		r->tcur[t] = k;
	}
	return progress;
}

/* Place op k of its stream: it starts after its launching call (its start
 * for a call that issues it synchronously, else its end, plus the launch
 * latency), the op before it on its stream and its cross-stream
 * dependency. Returns 0 when one of those is not placed yet; with force, an
 * input not placed is left out (none left: the op keeps its measured
 * start). */
static int gp_dg_place_op(struct gp_dg_run *r, const struct gp_dg *g, const struct gp_dg_change *ch, size_t k,
			  int force)
{
	size_t nc = g->nc;
	const struct gp_dg_o *o = &g->o[k];
	int sync_issue = o->sync_issue;
	if (o->call >= 0 && r->cchg[o->call] && ch &&
	    (ch->kind == GP_DG_PINNED || ch->kind == GP_DG_PINNED_SITE || ch->kind == GP_DG_DEFER ||
	     ch->kind == GP_DG_DEFER_SITE))
		sync_issue = 0; /* an async copy: issued at its call's end */
	int32_t prev = o->prev;
	uint64_t pgap = o->prev_gap;
	if (ch && ch->kind == GP_DG_OVERLAP_COPIES)
		prev = o->prev_same, pgap = prev == o->prev ? o->prev_gap : 0;
	int has_call = o->call >= 0 && r->cst[o->call] >= (sync_issue ? 1 : 2);
	int has_prev = prev >= 0 && r->od[prev], has_dep = o->dep >= 0 && r->od[o->dep];
	if (!force && ((o->call >= 0 && !has_call) || (prev >= 0 && !has_prev) || (o->dep >= 0 && !has_dep)))
		return 0;
	uint64_t ls = 0; /* the legacy default stream's order */
	int32_t lby;
	if (!gp_dg_legacy_bound(g, k, r->od, r->oe, force, &ls, &lby))
		return 0;
	uint64_t s = o->anchor || (!has_call && !has_prev && !has_dep) ? o->start : 0;
	int32_t by = -1;
	if (has_call) {
		uint64_t lat = sync_issue != o->sync_issue ? g->lat_async : o->lat;
		s = (sync_issue ? r->cs[o->call] : r->ce[o->call]) + lat;
		by = o->call;
	}
	if (has_prev && r->oe[prev] + pgap > s)
		s = r->oe[prev] + pgap, by = (int32_t)(nc + (size_t)prev);
	if (has_dep && r->oe[o->dep] + o->dep_gap > s)
		s = r->oe[o->dep] + o->dep_gap, by = (int32_t)(nc + (size_t)o->dep);
	if (lby >= 0 && ls > s)
		s = ls, by = (int32_t)(nc + (size_t)lby);
	uint64_t d = o->end - o->start;
	if (ch && ch->kind == GP_DG_SCALE && gp_dg_named(o->name, ch->target))
		d = (uint64_t)((double)d * ch->factor + 0.5);
	r->os[k] = s;
	r->oe[k] = s + d;
	r->op[k] = by;
	r->od[k] = 1;
	r->odone++;
	return 1;
}

/* Advance every stream's ops as far as their inputs are known. Returns
 * whether anything moved. */
static int gp_dg_run_ops(struct gp_dg_run *r, const struct gp_dg *g, const struct gp_dg_change *ch)
{
	int progress = 0;
	for (size_t t = 0; t < r->ns; t++) {
		size_t k = r->scur[t];
		while (k < r->send[t] && gp_dg_place_op(r, g, ch, k, 0))
			k++, progress = 1;
		r->scur[t] = k;
	}
	return progress;
}

/* No cursor can move: some edges contradict the measured order (a cycle:
 * an op stamped before the call that issued it, after a clock correction).
 * Of the nodes the cursors stopped at, the one measured first is placed
 * without the inputs it lacks, so every graph replays to its end. */
static void gp_dg_run_force(struct gp_dg_run *r, const struct gp_dg *g, const struct gp_dg_change *ch)
{
	size_t *cur = NULL;
	uint64_t bt = UINT64_MAX;
	int call = 0;
	for (size_t t = 0; t < r->nt; t++)
		if (r->tcur[t] < r->tend[t] && g->c[r->tcur[t]].end < bt)
			bt = g->c[r->tcur[t]].end, cur = &r->tcur[t], call = 1;
	for (size_t t = 0; t < r->ns; t++)
		if (r->scur[t] < r->send[t] && g->o[r->scur[t]].start < bt)
			bt = g->o[r->scur[t]].start, cur = &r->scur[t], call = 0;
	if (!cur)
		return;
	if (call) /* a stopped call's start is always known */
		gp_dg_place_call(r, g, ch, (*cur)++, (size_t)(cur - r->tcur), 1);
	else
		gp_dg_place_op(r, g, ch, (*cur)++, 1);
}

/* The critical path: walk the binding nodes back from the node `last` that
 * ends the replay at t1, summing each stretch under the name of what took
 * it (an op, a call, host time, launch latency, a GPU dependency). */
static int gp_dg_run_path(const struct gp_dg_run *r, const struct gp_dg *g, long last, uint64_t t1,
			  struct gp_dg_path *path, size_t maxpath, size_t *npath)
{
	size_t nc = g->nc, no = g->no;
	struct gp_dg_acc acc = { calloc(GP_DG_PATH_NAMES, sizeof *acc.p), 0, GP_DG_PATH_NAMES };
	if (!acc.p)
		return -ENOMEM;
	size_t guard = 0;
	uint64_t from_end = t1; /* the part of the current node on the path ends here */
	while (last >= 0 && guard++ <= nc + no) {
		if ((size_t)last < nc) {
			size_t k = (size_t)last;
			const struct gp_dg_c *c = &g->c[k];
			int32_t by = r->cp[k];
			uint64_t seg_start = r->cs[k];
			if (by >= (int32_t)nc) /* released by an op */
				seg_start = r->oe[by - (int32_t)nc];
			if (from_end > seg_start)
				gp_dg_acc_add(&acc, c->name, from_end - seg_start);
			if (by >= 0 && by < (int32_t)nc) {
				gp_dg_acc_add(&acc, "host", r->cs[k] - r->ce[by]);
				from_end = r->ce[by];
			} else if (by >= 0) {
				from_end = seg_start;
			} else {
				gp_dg_acc_add(&acc, "host", r->cs[k] - g->t0);
			}
			last = by;
		} else {
			size_t k = (size_t)last - nc;
			const struct gp_dg_o *o = &g->o[k];
			int32_t by = r->op[k];
			if (from_end > r->os[k])
				gp_dg_acc_add(&acc, o->name, from_end - r->os[k]);
			if (by >= 0 && by < (int32_t)nc) {
				uint64_t issue = r->os[k] >= r->ce[by] ? r->ce[by] : r->cs[by];
				gp_dg_acc_add(&acc, "launch latency", r->os[k] - issue);
				if (issue == r->cs[by] && issue != r->ce[by]) { /* issued at the call's start */
					gp_dg_acc_add(&acc, "host",
						      g->c[by].first ? r->cs[by] - g->t0 : r->cs[by] - r->ce[by - 1]);
					by = g->c[by].first ? -1 : by - 1;
					from_end = by >= 0 ? r->ce[by] : 0;
				} else {
					from_end = r->ce[by];
				}
			} else if (by >= 0) {
				uint64_t pe = r->oe[by - (int32_t)nc];
				gp_dg_acc_add(&acc, "GPU dependency", r->os[k] - pe);
				from_end = pe;
			} else {
				gp_dg_acc_add(&acc, "host", r->os[k] - g->t0);
			}
			last = by;
		}
	}
	qsort(acc.p, acc.n, sizeof *acc.p, gp_dg_cmp_path);
	*npath = acc.n < maxpath ? acc.n : maxpath;
	memcpy(path, acc.p, *npath * sizeof *path);
	free(acc.p);
	return 0;
}

int gp_dg_replay(const struct gp_dg *g, const struct gp_dg_change *ch, uint64_t *wall, struct gp_dg_path *path,
		 size_t maxpath, size_t *npath)
{
	size_t nc = g->nc, no = g->no;
	*wall = 0;
	if (npath)
		*npath = 0;
	if (!nc && !no)
		return 0;
	struct gp_dg_run r;
	int rc = gp_dg_run_init(&r, g);
	/* sweep threads and streams in turn until every node is placed */
	while (!rc && (r.cdone < nc || r.odone < no)) {
		int moved = gp_dg_run_calls(&r, g, ch);
		moved |= gp_dg_run_ops(&r, g, ch);
		if (!moved)
			gp_dg_run_force(&r, g, ch);
	}
	if (!rc) {
		/* the wall, and the node that ends it */
		uint64_t t1 = 0;
		long last = -1;
		for (size_t k = 0; k < nc; k++)
			if (r.ce[k] >= t1)
				t1 = r.ce[k], last = (long)k;
		for (size_t k = 0; k < no; k++)
			if (r.oe[k] > t1)
				t1 = r.oe[k], last = (long)(nc + k);
		*wall = t1 - g->t0;
		if (path && npath)
			rc = gp_dg_run_path(&r, g, last, t1, path, maxpath, npath);
	}
	gp_dg_run_free(&r);
	return rc;
}
