/*
 * depgraph.c — the dependency graph of a window: its nodes and its build
 * (depgraph.h; docs/metrics.md "What-if" defines every rule used here; the
 * replay is depgraph_replay.c, the layout depgraph_int.h).
 *
 * Build, in stages: calls sorted per thread (the host time between two
 * calls is kept as a gap), ops sorted per stream, and indexes over both;
 * each op joined to its launching call by the call's identity (record
 * domain, thread, correlation id); each blocking call joined to the op
 * whose end released it (a sync: the op the core charged its wait to,
 * found by the same identity, else the latest op end inside the call, else
 * the last op of its scope that ended before it; a held copy or set,
 * blocking or async on pageable memory: its own op); a call that waited on a
 * full launch queue keeps that wait's length; each wait released 100 us or
 * more after it began slept, and what it measured after the release beyond
 * its function's median is its waking late (the mean: the host's); the
 * legacy default stream's order is depgraph_legacy.c's. Where the calls
 * came from another source than the core's joins and waits (the hooks
 * beside CUPTI driver records), or carry no identity, an equal start and
 * end pairs them instead. Each op's start is explained by its binding constraint:
 * the call that issued it plus the launch latency, the previous op of its
 * stream, or an op of another stream that ended just before it started (an
 * event wait, the legacy stream); the part of the measured start that the
 * binding constraint leaves is kept as that edge's gap, so a replay of the
 * unchanged graph gives back every measured timestamp.
 *
 * Single-threaded; memory bounded by GP_DG_MAX_NODES.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gp_format.h"
#include "report/core/analysis.h"
#include "depgraph.h"
#include "depgraph_int.h"

struct gp_dg *gp_dg_new(void)
{
	return calloc(1, sizeof(struct gp_dg));
}

void gp_dg_free(struct gp_dg *g)
{
	if (!g)
		return;
	free(g->c);
	free(g->o);
	free(g->w);
	free(g->s);
	free(g);
}

int gp_dg_add_call(struct gp_dg *g, const struct gp_dg_call *c)
{
	if (g->nc + g->no >= GP_DG_MAX_NODES) {
		g->truncated = 1;
		return 1;
	}
	if (c->end < c->start)
		return 0;
	if (GP_AN_GROW(g->c, g->nc, g->capc))
		return -ENOMEM;
	g->c[g->nc++] = (struct gp_dg_c){ .start = c->start, .end = c->end, .id = { c->tid, c->corr, c->domain },
					  .cls = c->cls, .name = c->name, .wait = -1, .op = -1 };
	return 0;
}

int gp_dg_add_op(struct gp_dg *g, const struct gp_dg_op *o)
{
	if (g->nc + g->no >= GP_DG_MAX_NODES) {
		g->truncated = 1;
		return 1;
	}
	if (o->end < o->start || !o->start)
		return 0;
	if (GP_AN_GROW(g->o, g->no, g->capo))
		return -ENOMEM;
	g->o[g->no++] = (struct gp_dg_o){ .start = o->start, .end = o->end, .api_start = o->api_start,
					  .api_end = o->api_end, .stream = o->stream, .corr = o->corr,
					  .tid = o->tid, .domain = o->api_domain, .kind = o->kind,
					  .copy_kind = o->copy_kind, .blocking = o->blocking, .device = o->device,
					  .name = o->name,
					  .site = o->site, .call = -1, .prev = -1, .dep = -1, .prev_same = -1 };
	return 0;
}

int gp_dg_add_wait(struct gp_dg *g, const struct gp_dg_wait *w)
{
	if (g->nc + g->no + g->nw >= GP_DG_MAX_NODES) {
		g->truncated = 1;
		return 1;
	}
	if (GP_AN_GROW(g->w, g->nw, g->capw))
		return -ENOMEM;
	g->w[g->nw++] = (struct gp_dg_w){ .start = w->start, .end = w->end, .site = w->site,
					  .id = { w->tid, w->corr, w->domain }, .op_corr = w->op_corr,
					  .stream = w->stream, .queue_ns = w->queue_ns,
					  .attributed = (uint8_t)!!w->attributed };
	return 0;
}

static int gp_dg_cmp_wait(const void *a, const void *b)
{
	const struct gp_dg_w *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

static int gp_dg_cmp_id(const struct gp_dg_id *x, const struct gp_dg_id *y)
{
	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->corr > y->corr) - (x->corr < y->corr);
}

static int gp_dg_cmp_u32(uint32_t x, uint32_t y)
{
	return (x > y) - (x < y);
}

/* The index sorts (qsort_r: arg is the graph). Entries that tie on the key
 * keep their index order where the result depends on it. */
static int gp_dg_cmp_cid(const void *a, const void *b, void *arg)
{
	const struct gp_dg *g = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int r = gp_dg_cmp_id(&g->c[x].id, &g->c[y].id);
	return r ? r : gp_dg_cmp_u32(x, y);
}

static int gp_dg_cmp_wid(const void *a, const void *b, void *arg)
{
	const struct gp_dg *g = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int r = gp_dg_cmp_id(&g->w[x].id, &g->w[y].id);
	return r ? r : gp_dg_cmp_u32(x, y);
}

static int gp_dg_cmp_ocorr(const void *a, const void *b, void *arg)
{
	const struct gp_dg *g = arg;
	return gp_dg_cmp_u32(g->o[*(const uint32_t *)a].corr, g->o[*(const uint32_t *)b].corr);
}

static int gp_dg_cmp_cstart(const void *a, const void *b, void *arg)
{
	const struct gp_dg *g = arg;
	uint64_t x = g->c[*(const uint32_t *)a].start, y = g->c[*(const uint32_t *)b].start;
	return (x > y) - (x < y);
}

static int gp_dg_cmp_oend(const void *a, const void *b, void *arg)
{
	const struct gp_dg *g = arg;
	uint64_t x = g->o[*(const uint32_t *)a].end, y = g->o[*(const uint32_t *)b].end;
	return (x > y) - (x < y);
}

static int gp_dg_cmp_call(const void *a, const void *b)
{
	const struct gp_dg_c *x = a, *y = b;
	if (x->id.tid != y->id.tid)
		return x->id.tid < y->id.tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

static int gp_dg_cmp_op(const void *a, const void *b)
{
	const struct gp_dg_o *x = a, *y = b;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

/* The build's indexes over the sorted graph: node numbers in another order. */
struct gp_dg_index {
	uint32_t *cstart;      /* calls by start                                 */
	uint32_t *cid;         /* calls by identity                              */
	uint32_t *oend;        /* ops by end                                     */
	uint32_t *ocorr;       /* ops by correlation id                          */
	uint32_t *wid;         /* waits by identity (g->w itself is by time)     */
	uint32_t cdomains, wdomains; /* bit d: a call / a wait of domain d       */
};

static void gp_dg_index_free(struct gp_dg_index *ix)
{
	free(ix->cstart), free(ix->cid), free(ix->oend), free(ix->ocorr), free(ix->wid);
}

static int gp_dg_index_new(struct gp_dg_index *ix, struct gp_dg *g)
{
	memset(ix, 0, sizeof *ix);
	ix->cstart = malloc((g->nc + 1) * sizeof *ix->cstart), ix->cid = malloc((g->nc + 1) * sizeof *ix->cid);
	ix->oend = malloc((g->no + 1) * sizeof *ix->oend), ix->ocorr = malloc((g->no + 1) * sizeof *ix->ocorr);
	ix->wid = malloc((g->nw + 1) * sizeof *ix->wid);
	if (!ix->cstart || !ix->cid || !ix->oend || !ix->ocorr || !ix->wid) {
		gp_dg_index_free(ix);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g->nc; i++) {
		ix->cstart[i] = ix->cid[i] = (uint32_t)i;
		ix->cdomains |= g->c[i].id.domain < 32 ? 1u << g->c[i].id.domain : 0;
	}
	for (size_t i = 0; i < g->no; i++)
		ix->oend[i] = ix->ocorr[i] = (uint32_t)i;
	qsort_r(ix->cstart, g->nc, sizeof *ix->cstart, gp_dg_cmp_cstart, g);
	qsort_r(ix->cid, g->nc, sizeof *ix->cid, gp_dg_cmp_cid, g);
	qsort_r(ix->oend, g->no, sizeof *ix->oend, gp_dg_cmp_oend, g);
	qsort_r(ix->ocorr, g->no, sizeof *ix->ocorr, gp_dg_cmp_ocorr, g);
	if (g->nw) /* qsort's base must not be NULL, even for nothing */
		qsort(g->w, g->nw, sizeof *g->w, gp_dg_cmp_wait);
	for (size_t i = 0; i < g->nw; i++) {
		ix->wid[i] = (uint32_t)i;
		ix->wdomains |= g->w[i].id.domain < 32 ? 1u << g->w[i].id.domain : 0;
	}
	qsort_r(ix->wid, g->nw, sizeof *ix->wid, gp_dg_cmp_wid, g);
	return 0;
}

/* Whether identities of domain d can be looked up among nodes of `domains`:
 * d is known and some node of that domain is there. Otherwise the two sides
 * came from different sources (hooks for the calls, CUPTI for the core's
 * joins and waits) or carry no identity, and only the times can pair them. */
static int gp_dg_id_usable(uint8_t d, uint32_t domains)
{
	return d && d < 32 && (domains >> d & 1);
}

/* The first entry of idx (n entries by identity; `calls`: of g->c, else of
 * g->w) whose identity is key, or -1. */
static long gp_dg_find_id(const struct gp_dg *g, const uint32_t *idx, size_t n, int calls,
			  const struct gp_dg_id *key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct gp_dg_id *id = calls ? &g->c[idx[mid]].id : &g->w[idx[mid]].id;
		if (gp_dg_cmp_id(id, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n || gp_dg_cmp_id(calls ? &g->c[idx[lo]].id : &g->w[idx[lo]].id, key))
		return -1;
	return (long)idx[lo];
}

/* Index of the last entry of idx (sorted by key) whose key <= t, or -1. */
static long gp_dg_last_le(const uint32_t *idx, size_t n, uint64_t t, int calls, const struct gp_dg *g)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint64_t k = calls ? g->c[idx[mid]].start : g->o[idx[mid]].end;
		if (k <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* The wait the core reported for sync call c: by the call's identity, or,
 * where the call and the waits came from different sources or the call has
 * no identity, by equal start and end. Its index in g->w, or -1. */
static long gp_dg_wait_of(const struct gp_dg *g, const struct gp_dg_index *ix, const struct gp_dg_c *c)
{
	if (gp_dg_id_usable(c->id.domain, ix->wdomains))
		return gp_dg_find_id(g, ix->wid, g->nw, 0, &c->id);
	size_t lo = 0, hi = g->nw;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g->w[mid].start < c->start || (g->w[mid].start == c->start && g->w[mid].end < c->end))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == g->nw || g->w[lo].start != c->start || g->w[lo].end != c->end)
		return -1;
	return (long)lo;
}

/* The core's attribution of sync call c: 1 with *op set (-1: nothing
 * outstanding), or 0 when the core said nothing of it; *stream: the stream
 * it waited on (UINT32_MAX: any, or not said). */
static int gp_dg_core_wait(const struct gp_dg *g, const struct gp_dg_index *ix, const struct gp_dg_c *c,
			   int32_t *op, const char **site, uint32_t *stream)
{
	long k = gp_dg_wait_of(g, ix, c);
	*stream = UINT32_MAX;
	if (k < 0)
		return 0;
	const struct gp_dg_w *w = &g->w[k];
	*site = w->site;
	*stream = w->stream;
	*op = -1;
	if (!w->attributed)
		return 1;
	/* the ops of that correlation id (a graph launch's nodes share it): the
	 * one that ended last inside the wait */
	size_t a = 0, b = g->no;
	while (a < b) {
		size_t mid = (a + b) / 2;
		if (g->o[ix->ocorr[mid]].corr < w->op_corr)
			a = mid + 1;
		else
			b = mid;
	}
	for (; a < g->no && g->o[ix->ocorr[a]].corr == w->op_corr; a++) {
		const struct gp_dg_o *o = &g->o[ix->ocorr[a]];
		if (o->end <= w->end && o->end > w->start && (*op < 0 || g->o[*op].end < o->end))
			*op = (int32_t)ix->ocorr[a];
	}
	return *op >= 0; /* the op is not in the graph: decide from the times */
}

static int gp_dg_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Keep only what starts at or before the last time both kinds of node were
 * still being collected: calls and ops arrive in different orders. */
static void gp_dg_cut(struct gp_dg *g)
{
	uint64_t lc = 0, lo = 0;
	for (size_t i = 0; i < g->nc; i++)
		lc = g->c[i].start > lc ? g->c[i].start : lc;
	for (size_t i = 0; i < g->no; i++)
		lo = g->o[i].start > lo ? g->o[i].start : lo;
	uint64_t t = lc < lo ? lc : lo;
	size_t n = 0;
	for (size_t i = 0; i < g->nc; i++)
		if (g->c[i].start <= t)
			g->c[n++] = g->c[i];
	g->nc = n;
	n = 0;
	for (size_t i = 0; i < g->no; i++)
		if (g->o[i].start <= t && (g->o[i].api_start <= t))
			g->o[n++] = g->o[i];
	g->no = n;
}

/* Calls by thread and time with the host gap between them, ops by stream
 * and time; the window's span. */
static void gp_dg_sort(struct gp_dg *g)
{
	if (g->nc)
		qsort(g->c, g->nc, sizeof *g->c, gp_dg_cmp_call);
	if (g->no)
		qsort(g->o, g->no, sizeof *g->o, gp_dg_cmp_op);
	g->t0 = UINT64_MAX;
	g->t1 = 0;
	for (size_t i = 0; i < g->nc; i++) {
		struct gp_dg_c *c = &g->c[i];
		c->first = !i || g->c[i - 1].id.tid != c->id.tid;
		c->gap = c->first ? 0 : c->start > g->c[i - 1].end ? c->start - g->c[i - 1].end : 0;
		c->blocking = gp_dg_is_sync(c->cls) || gp_dg_is_copy_sync(c->cls);
		g->t0 = c->start < g->t0 ? c->start : g->t0;
		g->t1 = c->end > g->t1 ? c->end : g->t1;
	}
	for (size_t i = 0; i < g->no; i++) {
		g->t0 = g->o[i].start < g->t0 ? g->o[i].start : g->t0;
		g->t1 = g->o[i].end > g->t1 ? g->o[i].end : g->t1;
	}
	if (!g->nc && !g->no)
		g->t0 = g->t1 = 0;
}

/* The call that launched op o: the one of its identity (several ops share
 * it for a graph launch), or, where the op's join and the calls came from
 * different sources or the op carries no identity, the call with the op's
 * call start and end. -1 when none. */
static int32_t gp_dg_launcher(const struct gp_dg *g, const struct gp_dg_index *ix, const struct gp_dg_o *o)
{
	if (gp_dg_id_usable(o->domain, ix->cdomains)) {
		struct gp_dg_id key = { o->tid, o->corr, o->domain };
		return (int32_t)gp_dg_find_id(g, ix->cid, g->nc, 1, &key);
	}
	if (!o->api_start && !o->api_end)
		return -1;
	for (long j = gp_dg_last_le(ix->cstart, g->nc, o->api_start, 1, g); j >= 0; j--) {
		const struct gp_dg_c *c = &g->c[ix->cstart[j]];
		if (c->start != o->api_start)
			break;
		if (c->end == o->api_end)
			return (int32_t)ix->cstart[j];
	}
	return -1;
}

/* Stream edges (the previous op, and the previous of the same class) and
 * launch edges; a copy or set call is held when it returned only after its
 * op ended (a blocking one, an async one on pageable memory), and has its
 * op's call site. */
static void gp_dg_link_launches(struct gp_dg *g, const struct gp_dg_index *ix)
{
	for (size_t i = 0; i < g->no; i++) {
		struct gp_dg_o *o = &g->o[i];
		if (i && g->o[i - 1].stream == o->stream) {
			o->prev = (int32_t)i - 1;
			for (long j = (long)i - 1; j >= 0 && g->o[j].stream == o->stream; j--)
				if ((g->o[j].kind == GP_OP_MEMCPY) == (o->kind == GP_OP_MEMCPY)) {
					o->prev_same = (int32_t)j;
					break;
				}
		}
		o->call = gp_dg_launcher(g, ix, o);
		if (o->call >= 0) {
			struct gp_dg_c *c = &g->c[o->call];
			c->nops++;
			if (c->op < 0 || g->o[c->op].end < o->end)
				c->op = (int32_t)i;
			o->sync_issue = o->start < c->end;
			if (o->kind == GP_OP_MEMCPY || o->kind == GP_OP_MEMSET) {
				c->held = gp_dg_is_copy_sync(c->cls) ||
					  ((c->cls == GP_API_MEMCPY_ASYNC || c->cls == GP_API_MEMSET_ASYNC) && o->blocking);
				c->site = c->site ? c->site : o->site;
			}
		}
	}
}

#define GP_DG_SCOPE_SCAN 256 /* ops looked at for a stream's last before a call */

/* The op of `stream` (UINT32_MAX: any) that ended last at or before t, or
 * -1 (none among the GP_DG_SCOPE_SCAN latest ends). */
static int32_t gp_dg_done_before(const struct gp_dg *g, const struct gp_dg_index *ix, uint64_t t, uint32_t stream)
{
	long j = gp_dg_last_le(ix->oend, g->no, t, 0, g);
	for (long n = 0; j >= 0 && n < GP_DG_SCOPE_SCAN; j--, n++)
		if (stream == UINT32_MAX || g->o[ix->oend[j]].stream == stream)
			return (int32_t)ix->oend[j];
	return -1;
}

/* Waits: a sync or an implicit sync is released by the op the core
 * charged it to, else by the latest op end inside it; one that found
 * nothing outstanding by the last op of its scope that ended before it
 * (it did not wait for it, but would have, had that op ended later); a held copy or set
 * (blocking, or async on pageable memory) by its own op when that op
 * started before the call returned; any other call that waited on a full
 * launch queue keeps that wait's length. */
static void gp_dg_link_waits(struct gp_dg *g, const struct gp_dg_index *ix)
{
	for (size_t i = 0; i < g->nc; i++) {
		struct gp_dg_c *c = &g->c[i];
		if (gp_dg_is_sync(c->cls) || gp_dg_is_implicit(c->cls)) {
			long j = gp_dg_last_le(ix->oend, g->no, c->end, 0, g);
			int32_t w = -1;
			uint32_t stream;
			if (!gp_dg_core_wait(g, ix, c, &w, &c->site, &stream) && j >= 0 &&
			    g->o[ix->oend[j]].end > c->start)
				w = (int32_t)ix->oend[j];
			c->wait = w;
			if (w < 0 && gp_dg_is_sync(c->cls)) /* an implicit sync is there for its own work */
				c->empty = 1, g->empty++;
			if (w < 0)
				c->wait = gp_dg_done_before(g, ix, c->start,
							    c->cls == GP_API_SYNC_STREAM || c->cls == GP_API_SYNC_EVENT
								    ? stream : UINT32_MAX);
		} else if (c->held && g->o[c->op].end > c->start && g->o[c->op].sync_issue) {
			/* an op that started after the call returned (a staged
			 * pageable copy) did not hold it */
			c->wait = c->op;
		} else if (!c->blocking) {
			long k = gp_dg_wait_of(g, ix, c);
			if (k >= 0 && g->w[k].queue_ns) {
				c->qwait = g->w[k].queue_ns < c->end - c->start ? g->w[k].queue_ns : c->end - c->start;
				g->queued++;
			}
		}
		if (c->wait >= 0)
			c->post = c->end - (g->o[c->wait].end > c->start ? g->o[c->wait].end : c->start);
	}
}

static int gp_dg_cmp_slept(const void *a, const void *b, void *arg)
{
	const struct gp_dg *g = arg;
	const struct gp_dg_c *x = &g->c[*(const uint32_t *)a], *y = &g->c[*(const uint32_t *)b];
	int r = strcmp(x->name ? x->name : "", y->name ? y->name : "");
	return r ? r : (x->post > y->post) - (x->post < y->post);
}

/* Waking late: each wait released GP_DG_SLEEP_NS or more after its start
 * slept; what it measured after the release beyond the median of its
 * function's slept waits (its own work after the wait) is its waking late,
 * and their mean the host's (g->late). */
static int gp_dg_lateness(struct gp_dg *g)
{
	uint32_t *k = malloc((g->nc + 1) * sizeof *k);
	if (!k)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < g->nc; i++) {
		struct gp_dg_c *c = &g->c[i];
		c->slept = c->wait >= 0 && g->o[c->wait].end >= c->start + GP_DG_SLEEP_NS;
		if (c->slept)
			k[n++] = (uint32_t)i;
	}
	qsort_r(k, n, sizeof *k, gp_dg_cmp_slept, g);
	uint64_t sum = 0;
	for (size_t a = 0, b; a < n; a = b) {
		const char *name = g->c[k[a]].name ? g->c[k[a]].name : "";
		for (b = a; b < n && !strcmp(g->c[k[b]].name ? g->c[k[b]].name : "", name); b++)
			;
		uint64_t median = g->c[k[a + (b - a) / 2]].post;
		for (size_t j = a; j < b; j++) {
			struct gp_dg_c *c = &g->c[k[j]];
			c->late = c->post > median ? c->post - median : 0;
			sum += c->late;
		}
	}
	g->late = n ? sum / n : 0;
	free(k);
	return 0;
}

/* Per API class, the median non-blocking call that did not wait on a full
 * launch queue: what such a call costs when it does not wait. */
static int gp_dg_free_costs(struct gp_dg *g)
{
	uint64_t *k = malloc((g->nc + 1) * sizeof *k);
	if (!k)
		return -ENOMEM;
	size_t n = 0;
	const uint64_t max = (UINT64_C(1) << 56) - 1;
	for (size_t i = 0; i < g->nc; i++) {
		const struct gp_dg_c *c = &g->c[i];
		uint64_t d = c->end - c->start;
		if (g->queued && !c->blocking && !c->qwait && c->cls < GP_API_CLASS_COUNT)
			k[n++] = (uint64_t)c->cls << 56 | (d < max ? d : max);
	}
	qsort(k, n, sizeof *k, gp_dg_cmp_u64);
	for (size_t a = 0, b; a < n; a = b) {
		for (b = a; b < n && k[b] >> 56 == k[a] >> 56; b++)
			;
		g->free_cost[k[a] >> 56] = k[a + (b - a) / 2] & max;
	}
	free(k);
	return 0;
}

/* The what-ifs' host costs: the median non-blocking non-launch call, the
 * host cost per node of a graph launch. */
static int gp_dg_host_costs(struct gp_dg *g)
{
	uint64_t *costs = malloc((g->nc + 1) * sizeof *costs);
	if (!costs)
		return -ENOMEM;
	size_t nasync = 0, nnodes = 0;
	uint64_t node_host = 0;
	for (size_t i = 0; i < g->nc; i++) {
		const struct gp_dg_c *c = &g->c[i];
		if (!c->blocking && c->cls != GP_API_LAUNCH && c->cls != GP_API_GRAPH_LAUNCH &&
		    c->cls != GP_API_HOST_FUNC && c->nops == 0)
			costs[nasync++] = c->end - c->start;
		if (c->cls == GP_API_GRAPH_LAUNCH && c->nops) {
			node_host += c->end - c->start;
			nnodes += c->nops;
		}
	}
	qsort(costs, nasync, sizeof *costs, gp_dg_cmp_u64);
	g->async_cost = nasync ? costs[nasync / 2] : 0;
	g->node_cost = nnodes ? node_host / nnodes : 0;
	free(costs);
	return 0;
}

/* Launch latency: the least time from issue to start, for ops issued
 * synchronously (at the call's start) and asynchronously (at its end). */
static void gp_dg_launch_latency(struct gp_dg *g)
{
	g->lat_async = g->lat_sync = UINT64_MAX;
	for (size_t i = 0; i < g->no; i++) {
		const struct gp_dg_o *o = &g->o[i];
		if (o->call < 0)
			continue;
		uint64_t issue = o->sync_issue ? g->c[o->call].start : g->c[o->call].end;
		uint64_t slack = o->start > issue ? o->start - issue : 0;
		uint64_t *l = o->sync_issue ? &g->lat_sync : &g->lat_async;
		*l = slack < *l ? slack : *l;
	}
	g->lat_sync = g->lat_sync == UINT64_MAX ? 0 : g->lat_sync;
	g->lat_async = g->lat_async == UINT64_MAX ? g->lat_sync : g->lat_async; /* none: as for blocking ones */
}

/* Each op's binding constraint, and the gap it leaves. */
static void gp_dg_bind_ops(struct gp_dg *g, const struct gp_dg_index *ix)
{
	for (size_t i = 0; i < g->no; i++) {
		struct gp_dg_o *o = &g->o[i];
		uint64_t lat = o->sync_issue ? g->lat_sync : g->lat_async;
		uint64_t ci = 0, cp = 0, cd = 0;
		int hi = o->call >= 0, hp = o->prev >= 0;
		if (hi)
			ci = (o->sync_issue ? g->c[o->call].start : g->c[o->call].end) + lat;
		if (hp)
			cp = g->o[o->prev].end;
		uint64_t lb = ci > cp ? ci : cp;
		if (!hi && !hp)
			lb = 0;
		if (o->start > lb) { /* unexplained: an op of another stream? */
			long j = gp_dg_last_le(ix->oend, g->no, o->start, 0, g);
			for (; j >= 0 && g->o[ix->oend[j]].end > lb; j--)
				if (g->o[ix->oend[j]].stream != o->stream) {
					o->dep = (int32_t)ix->oend[j];
					cd = g->o[ix->oend[j]].end;
					break;
				}
		}
		o->lat = lat;
		if (o->dep >= 0 && cd >= lb)
			o->dep_gap = o->start - cd;
		else if (hi && ci >= cp)
			o->lat = o->start >= ci ? lat + (o->start - ci) : lat;
		else if (hp)
			o->prev_gap = o->start > cp ? o->start - cp : 0;
		else
			o->anchor = 1;
	}
}

int gp_dg_build(struct gp_dg *g)
{
	if (g->truncated)
		gp_dg_cut(g);
	gp_dg_sort(g);
	if (!g->nc && !g->no)
		return 0;
	struct gp_dg_index ix;
	int rc = gp_dg_index_new(&ix, g);
	if (rc)
		return rc;
	gp_dg_link_launches(g, &ix);
	gp_dg_link_waits(g, &ix);
	rc = gp_dg_link_legacy(g);
	if (!rc)
		rc = gp_dg_lateness(g);
	if (!rc)
		rc = gp_dg_host_costs(g);
	if (!rc)
		rc = gp_dg_free_costs(g);
	if (!rc) {
		gp_dg_launch_latency(g);
		gp_dg_bind_ops(g, &ix);
	}
	gp_dg_index_free(&ix);
	return rc;
}

uint64_t gp_dg_wall(const struct gp_dg *g)
{
	return g->t1 - g->t0;
}

int gp_dg_truncated(const struct gp_dg *g)
{
	return g->truncated;
}

uint64_t gp_dg_first_launch(const struct gp_dg *g)
{
	uint64_t t = UINT64_MAX;
	for (size_t i = 0; i < g->no; i++)
		if (g->o[i].call >= 0 && g->c[g->o[i].call].start < t)
			t = g->c[g->o[i].call].start;
	return t == UINT64_MAX ? 0 : t - g->t0;
}

size_t gp_dg_ncalls(const struct gp_dg *g)
{
	return g->nc;
}

size_t gp_dg_nops(const struct gp_dg *g)
{
	return g->no;
}

uint64_t gp_dg_graph_node_cost(const struct gp_dg *g)
{
	return g->node_cost;
}

uint64_t gp_dg_async_call_cost(const struct gp_dg *g)
{
	return g->async_cost;
}

size_t gp_dg_empty_waits(const struct gp_dg *g)
{
	return g->empty;
}

size_t gp_dg_queue_waits(const struct gp_dg *g)
{
	return g->queued;
}
