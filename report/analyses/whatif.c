/*
 * whatif.c — the "What-if" analysis: what each advice would buy. It keeps
 * the window's dependency graph (depgraph.h: every outermost host call of
 * the chosen API source, every op with GPU times, up to GP_DG_MAX_NODES),
 * replays it unchanged (the check: the replayed wall against the measured
 * one) and once per transformation, and ranks the transformations by the
 * wall time they save; plus the critical path of the window by name, and
 * the user's own question (gpuphase-report --whatif SPEC).
 *
 * Candidates (docs/metrics.md "What-if"): each synchronizing function
 * dropped; each implicitly synchronizing one (cudaFree, ...) hoisted out of
 * the loop; the call sites of most blocked time; every wait that had nothing outstanding dropped; the three
 * operators with the most launch time launched at a graph node's cost; each
 * held copy operator (blocking, or async on pageable memory) made pinned
 * and asynchronous, and one copied to the host also made asynchronous with
 * its wait moved to the next such copy; the three call sites of held copies
 * of most call time, each alone; the launches' waits on a full launch queue
 * removed (said to be the GPU's when that saves little); copies moved to a
 * copy stream; the three operators with the most execute time twice as
 * fast. A plug-in of registry.h; report thread only. This analysis keeps
 * one node per call and op, which the plug-in rule of folding everything
 * does not allow elsewhere: that memory is bounded by GP_DG_MAX_NODES, and
 * the output says when the graph is a prefix of the window. Partial
 * results keep the replays' outcome, never the graph.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "depgraph.h"
#include "whatif.h"
#include "report/util/fmt.h"

#define GP_WI_MAX 32                /* what-ifs kept                          */
#define GP_WI_DTOH 2                /* CUpti_ActivityMemcpyKind device to host */
#define GP_WI_GPU_BOUND 5           /* % of the window: a queue-wait saving
                                       below it says the GPU is the bottleneck */
#define GP_WI_TOP 3                 /* operators tried per kind               */
#define GP_WI_SHOW 5                /* what-ifs in the text section           */
#define GP_WI_PATH 8                /* critical path entries kept             */
#define GP_WI_SYNCS 16              /* synchronizing functions tried          */
#define GP_WI_SITES 32              /* sync call sites seen (the top GP_WI_TOP tried) */
#define GP_WI_NEAR 3                /* names offered for a --whatif that matches none */
#define GP_WI_QSITES 3              /* call sites named for the queue waits   */

/* Per operator (core group): what picks the candidates. */
struct gp_wi_op {
	const char *name;
	uint64_t launch_ns, execute_ns, copy_sync;
	uint8_t kernel, copy, dtoh;
	uint8_t pageable;       /* a copy of it had a pageable host side        */
};

/* A call site: of a synchronize (blocked time there), of a held copy (its
 * calls' host time there). */
struct gp_wi_site {
	const char *name;       /* as the report names it                       */
	uint64_t ns;
	int dtoh;               /* held copies: they went device to host        */
	int pageable;           /* held copies: one had a pageable host side    */
};

struct gp_wi_item {
	struct gp_dg_change ch;
	const char *change;     /* JSON "change"                                */
	const char *phase;      /* the phase it shortens                        */
	char assumptions[192];
	uint64_t predicted, saving;
	int user;
	int rc;
	int pageable;           /* a copy change whose copies the trace saw
	                           pageable: the advice says pin; else the
	                           memory is pinned (or unknown): async only */
	uint64_t queue_ns;      /* remove_queue_waits: the waits' sum, and the */
	const char *qsites[GP_WI_QSITES]; /* call sites of the launches that */
	uint64_t qsites_ns[GP_WI_QSITES]; /* waited, most wait first     */
	size_t nqsites;
};

struct gp_whatif {
	int err;
	int use_hooks;          /* API source: hooks (hook-only trace) or CUPTI  */
	struct gp_dg *g;
	struct gp_wi_op *ops;
	size_t nops;
	struct {
		const char *name;
		uint64_t ns;
		int implicit;   /* cudaFree, ...: the candidate hoists it */
	} syncs[GP_WI_SYNCS];
	size_t nsyncs;
	struct gp_wi_site sites[GP_WI_SITES]; /* of the synchronizes (strings) */
	size_t nsites;
	struct gp_wi_site csites[GP_WI_SITES]; /* of the held copies (names) */
	size_t ncsites;
	struct gp_wi_site qsites[GP_WI_SITES]; /* of the launches that waited on
	                                          a full queue (strings)      */
	size_t nqsites;
	uint64_t queue_ns;          /* those waits, summed                     */
	struct gp_strtab *names;    /* the copies' call sites, kept: the core's
	                               op strings do not outlive the op        */
	const struct gp_strtab *strings; /* the trace's string table (site names) */
	int have_user;
	struct gp_dg_change user;
	char user_target[128];
	const char *user_spec;
	int user_match;             /* 0 unknown (no graph, or loaded), 1 the
	                               user's change applies, 2 it applies to
	                               nothing: near names what it could have */
	const char *near[GP_WI_NEAR];
	size_t nnear;
	/* results */
	int done, replay_rc;
	size_t dg_calls, dg_ops;     /* the graph's facts the section prints    */
	int dg_truncated;
	uint64_t dg_first_launch;
	uint64_t measured, replayed, window;
	struct gp_dg_path path[GP_WI_PATH];
	size_t npath;
	struct gp_wi_item items[GP_WI_MAX];
	size_t nitems;
};

static void *gp_wi_create(const struct gp_analysis_env *env)
{
	struct gp_whatif *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	if (!(w->g = gp_dg_new())) {
		free(w);
		return NULL;
	}
	if (env && env->whatif &&
	    gp_dg_parse(env->whatif, &w->user, w->user_target, sizeof w->user_target, NULL, 0) == 0) {
		w->have_user = 1;
		w->user_spec = env->whatif;
	}
	return w;
}

static void gp_wi_destroy(void *p)
{
	struct gp_whatif *w = p;
	gp_dg_free(w->g);
	free(w->ops);
	if (w->names)
		gp_strtab_free(w->names);
	free(w->names);
	free(w);
}

static int gp_wi_prepare(void *p, const struct gp_an *an)
{
	struct gp_whatif *w = p;
	w->use_hooks = gp_an_record_count(an, GP_REC_RUNTIME_API) == 0;
	w->strings = gp_an_strings(an);
	return 0;
}

/* A call that waits for the device: a synchronize, or an implicit one
 * (cudaFree, cudaFreeHost, cudaMallocHost, cudaHostAlloc). */
static int gp_wi_waits(unsigned k)
{
	return k == GP_API_SYNC_DEVICE || k == GP_API_SYNC_STREAM || k == GP_API_SYNC_EVENT ||
	       k == GP_API_SYNC_IMPLICIT;
}

static int gp_wi_record(void *p, const struct gp_an *an, const struct gp_an_rec *v)
{
	struct gp_whatif *w = p;
	if (v->api.nested || (v->type == GP_REC_HOOK_API) != w->use_hooks)
		return 0;
	const char *name = gp_an_api_name(an, v->type, v->api.api_id);
	struct gp_dg_call c = { .start = v->api.start, .end = v->api.end, .tid = v->api.tid, .corr = v->api.corr,
				.domain = v->type, .cls = v->api.api_class, .name = name };
	int rc = gp_dg_add_call(w->g, &c);
	if (rc < 0)
		return w->err = rc;
	unsigned k = v->api.api_class;
	if (name && gp_wi_waits(k)) {
		size_t i = 0;
		while (i < w->nsyncs && strcmp(w->syncs[i].name, name))
			i++;
		if (i == w->nsyncs && i < GP_WI_SYNCS) {
			w->syncs[w->nsyncs].implicit = k == GP_API_SYNC_IMPLICIT;
			w->syncs[w->nsyncs++].name = name;
		}
		if (i < w->nsyncs)
			w->syncs[i].ns += v->api.end - v->api.start;
	}
	return 0;
}

/* A held copy's call site, kept (the op's string may not outlive it), and
 * its calls' host time per site: the candidates of the site what-ifs.
 * NULL when it has none (or no memory: w->err). */
static const char *gp_wi_copy_site(struct gp_whatif *w, const struct gp_an_op *op)
{
	if (!op->callsite || !op->has_api)
		return NULL;
	uint32_t c;
	if ((!w->names && !(w->names = calloc(1, sizeof *w->names))) ||
	    gp_strtab_intern(w->names, op->callsite, strlen(op->callsite), &c) || c == GP_STR_NONE) {
		w->err = -ENOMEM;
		return NULL;
	}
	const char *site = gp_strtab_text(w->names, c);
	size_t i = 0;
	while (i < w->ncsites && w->csites[i].name != site)
		i++;
	if (i == w->ncsites && i < GP_WI_SITES)
		w->csites[w->ncsites++].name = site;
	if (i < w->ncsites) {
		w->csites[i].ns += op->api_end - op->api_start;
		w->csites[i].dtoh |= op->copy_kind == GP_WI_DTOH;
		w->csites[i].pageable |= op->pageable;
	}
	return site;
}

static void gp_wi_op(void *p, const struct gp_an_op *op)
{
	struct gp_whatif *w = p;
	if (w->err || !op->has_gpu)
		return;
	int held = op->blocking && (op->kind == GP_OP_MEMCPY || op->kind == GP_OP_MEMSET);
	struct gp_dg_op o = { .start = op->gpu_start, .end = op->gpu_end, .stream = op->stream, .corr = op->corr,
			      .device = op->device, .kind = op->kind, .copy_kind = op->copy_kind, .blocking = op->blocking,
			      .name = op->name, .site = held ? gp_wi_copy_site(w, op) : NULL };
	if (w->err)
		return;
	if (op->has_api) { /* the record it was joined to: its call's identity */
		o.api_start = op->api_start, o.api_end = op->api_end;
		o.tid = op->tid, o.api_domain = (uint8_t)op->api_domain;
	}
	int rc = gp_dg_add_op(w->g, &o);
	if (rc < 0) {
		w->err = rc;
		return;
	}
	if (gp_an_grow_zeroed((void **)&w->ops, &w->nops, op->group, sizeof *w->ops)) {
		w->err = -ENOMEM;
		return;
	}
	struct gp_wi_op *s = &w->ops[op->group];
	s->name = op->name;
	s->launch_ns += op->has_api && op->api_class == GP_API_LAUNCH ? op->launch_ns : 0;
	s->execute_ns += op->execute_ns;
	s->kernel |= op->kind == GP_OP_KERNEL;
	s->copy |= op->kind == GP_OP_MEMCPY;
	s->copy_sync += op->api_class == GP_API_MEMCPY_SYNC || (held && op->kind == GP_OP_MEMCPY);
	s->dtoh |= op->copy_kind == GP_WI_DTOH;
	s->pageable |= op->pageable;
}

/* ns more at call site name (a canonical string: one pointer per name),
 * among the first GP_WI_SITES sites seen. */
static void gp_wi_site_add(struct gp_wi_site *sites, size_t *n, const char *name, uint64_t ns)
{
	size_t i = 0;
	while (i < *n && sites[i].name != name)
		i++;
	if (i == *n && i < GP_WI_SITES)
		sites[(*n)++].name = name;
	if (i < *n)
		sites[i].ns += ns;
}

/* The core's attribution of each synchronize: which op released it; and
 * each launch's wait on a full launch queue (kind GP_API_LAUNCH), with the
 * launch's call site when its stack was captured. */
static void gp_wi_wait(void *p, const struct gp_an_wait *wt)
{
	struct gp_whatif *w = p;
	unsigned k = wt->kind;
	if (w->err || !(gp_wi_waits(k) || k == GP_API_LAUNCH))
		return;
	if (k == GP_API_LAUNCH) {
		struct gp_dg_wait dw = { .start = wt->call_start, .end = wt->call_end, .tid = wt->tid, .corr = wt->corr,
					 .domain = w->use_hooks ? GP_REC_DRIVER_API : GP_REC_RUNTIME_API,
					 .queue_ns = wt->w1 > wt->w0 ? wt->w1 - wt->w0 : 0 };
		int rc = dw.queue_ns ? gp_dg_add_wait(w->g, &dw) : 0;
		if (rc < 0)
			w->err = rc;
		const char *qs = wt->site == UINT32_MAX || !w->strings ? NULL : gp_strtab_text(w->strings, wt->site);
		w->queue_ns += dw.queue_ns;
		if (qs && dw.queue_ns)
			gp_wi_site_add(w->qsites, &w->nqsites, qs, dw.queue_ns);
		return;
	}
	const char *site = wt->site == UINT32_MAX || !w->strings ? NULL : gp_strtab_text(w->strings, wt->site);
	/* the core's waits come from the CUPTI runtime records when the trace
	 * has any, else from the driver's (sync.c) */
	struct gp_dg_wait dw = { .start = wt->call_start, .end = wt->call_end, .tid = wt->tid, .corr = wt->corr,
				 .domain = w->use_hooks ? GP_REC_DRIVER_API : GP_REC_RUNTIME_API,
				 .attributed = wt->attributed, .op_corr = wt->op_corr, .site = site,
				 .stream = wt->stream };
	int rc = gp_dg_add_wait(w->g, &dw);
	if (site) /* blocked time per call site: the candidates of remove_sync_site */
		gp_wi_site_add(w->sites, &w->nsites, site, wt->w1 > wt->w0 ? wt->w1 - wt->w0 : 0);
	if (rc < 0)
		w->err = rc;
}

static struct gp_wi_item *gp_wi_add(struct gp_whatif *w, enum gp_dg_change_kind kind, const char *target)
{
	if (w->nitems == GP_WI_MAX)
		return NULL;
	struct gp_wi_item *it = &w->items[w->nitems++];
	memset(it, 0, sizeof *it);
	it->ch.kind = kind;
	it->ch.target = target;
	return it;
}

/* Fill an item's change name, phase and cost from the graph's facts. */
static void gp_wi_describe(struct gp_whatif *w, struct gp_wi_item *it)
{
	struct gp_dg_change *ch = &it->ch;
	uint64_t node = gp_dg_graph_node_cost(w->g), acall = gp_dg_async_call_cost(w->g);
	switch (ch->kind) {
	case GP_DG_DROP_SYNC:
	case GP_DG_HOIST: {
		int hoist = ch->kind == GP_DG_HOIST;
		it->change = hoist ? "hoist_implicit_sync" : "remove_sync", it->phase = "sync";
		snprintf(it->assumptions, sizeof it->assumptions, "every %s call%s", ch->target,
			 hoist ? ", which waits for the device first, moves out of the loop and vanishes with its "
				 "wait (the memory is allocated once and reused)"
			       : " vanishes with its wait; the host work after it overlaps the GPU and needs none of "
				 "its results");
		break;
	}
	case GP_DG_DROP_SITE:
		it->change = "remove_sync_site", it->phase = "sync";
		snprintf(it->assumptions, sizeof it->assumptions,
			 "the synchronizing calls made at this call site vanish with their waits; those made "
			 "elsewhere stay; the host work after them overlaps the GPU and needs none of its results");
		break;
	case GP_DG_DROP_EMPTY:
		it->change = "remove_empty_waits", it->phase = "sync";
		snprintf(it->assumptions, sizeof it->assumptions,
			 "%zu blocking calls found nothing outstanding; they vanish with their host cost",
			 gp_dg_empty_waits(w->g));
		break;
	case GP_DG_GRAPH_LAUNCH:
		it->change = "graph_launch", it->phase = "launch";
		if (!ch->cost_ns)
			ch->cost_ns = node ? node : GP_DG_NODE_NS;
		snprintf(it->assumptions, sizeof it->assumptions,
			 "each launch costs the host %" PRIu64 " ns, a replayed graph node (%s); capture and "
			 "instantiation are not counted", ch->cost_ns,
			 node ? "measured from this trace's graph launches" : "default: no graph launch in the trace");
		break;
	case GP_DG_PINNED:
	case GP_DG_PINNED_SITE:
	case GP_DG_DEFER:
	case GP_DG_DEFER_SITE: {
		int defer = ch->kind == GP_DG_DEFER || ch->kind == GP_DG_DEFER_SITE;
		int site = ch->kind == GP_DG_PINNED_SITE || ch->kind == GP_DG_DEFER_SITE;
		it->change = defer ? (site ? "defer_copy_wait_site" : "defer_copy_wait")
				   : (site ? "pinned_async_copy_site" : "pinned_async_copy");
		it->phase = "sync";
		if (!ch->cost_ns)
			ch->cost_ns = acall ? acall : GP_DG_ASYNC_CALL_NS;
		const char *from = acall ? "median non-blocking call of this trace" : "default";
		/* one format per change, both checked; the first prints no source */
		snprintf(it->assumptions, sizeof it->assumptions,
			 defer ? "the copy goes async to pinned memory (call %" PRIu64 " ns) with an event; the "
				 "next such copy of its thread first waits for it (the result is read one step "
				 "later)%.0s"
			       : "the copy call returns after %" PRIu64 " ns (%s) without waiting; the transfer "
				 "time is unchanged (pinned memory is often faster: a lower bound)",
			 ch->cost_ns, from);
		break;
	}
	case GP_DG_QUEUE:
		it->change = "remove_queue_waits", it->phase = "sync";
		snprintf(it->assumptions, sizeof it->assumptions,
			 "%zu launches that waited on a full launch queue do not wait (fewer, larger kernels; host "
			 "work moved before the launches): the most any host-side change can gain",
			 gp_dg_queue_waits(w->g));
		break;
	case GP_DG_OVERLAP_COPIES:
		it->change = "overlap_copies", it->phase = "queue";
		snprintf(it->assumptions, sizeof it->assumptions,
			 "copies run in order on a copy stream of their own; kernels no longer wait for them "
			 "(no data dependency between them)");
		break;
	case GP_DG_SCALE:
		it->change = "scale_kernel", it->phase = "execute";
		snprintf(it->assumptions, sizeof it->assumptions,
			 "every %s execution takes %g x its measured time; nothing else changes", ch->target, ch->factor);
		break;
	default:
		it->change = "none", it->phase = "";
		break;
	}
}

static int gp_wi_cmp_launch(const void *a, const void *b)
{
	const struct gp_wi_op *x = *(const struct gp_wi_op *const *)a, *y = *(const struct gp_wi_op *const *)b;
	return (x->launch_ns < y->launch_ns) - (x->launch_ns > y->launch_ns);
}

static int gp_wi_cmp_exec(const void *a, const void *b)
{
	const struct gp_wi_op *x = *(const struct gp_wi_op *const *)a, *y = *(const struct gp_wi_op *const *)b;
	return (x->execute_ns < y->execute_ns) - (x->execute_ns > y->execute_ns);
}

static int gp_wi_cmp_item(const void *a, const void *b)
{
	const struct gp_wi_item *x = a, *y = b;
	if (x->saving != y->saving)
		return x->saving > y->saving ? -1 : 1;
	int c = strcmp(x->change, y->change);
	if (c || !x->ch.target || !y->ch.target)
		return c ? c : (x->ch.target != NULL) - (y->ch.target != NULL);
	if ((c = strcmp(x->ch.target, y->ch.target)))
		return c;
	return (x->ch.factor > y->ch.factor) - (x->ch.factor < y->ch.factor);
}

static int gp_wi_same(const struct gp_dg_change *a, const struct gp_dg_change *b)
{
	return a->kind == b->kind && a->factor == b->factor && a->cost_ns == b->cost_ns &&
	       (a->target == b->target || (a->target && b->target && !strcmp(a->target, b->target)));
}

/* The site of most time among sites[k..n) moved to slot k. */
static void gp_wi_top_site(struct gp_wi_site *sites, size_t n, size_t k)
{
	size_t best = k;
	for (size_t i = k + 1; i < n; i++)
		if (sites[i].ns > sites[best].ns)
			best = i;
	struct gp_wi_site t = sites[k];
	sites[k] = sites[best], sites[best] = t;
}

/* One held-copy call site at a time, where the program makes held copies
 * at more than one: the GP_WI_TOP sites of most call time, a copy to the
 * host deferred, any other pinned. */
static void gp_wi_copy_sites(struct gp_whatif *w)
{
	for (size_t k = 0; w->ncsites > 1 && k < GP_WI_TOP && k < w->ncsites; k++) {
		gp_wi_top_site(w->csites, w->ncsites, k);
		if (w->csites[k].ns && strcmp(w->csites[k].name, "(no stack)")) {
			struct gp_wi_item *it = gp_wi_add(w, w->csites[k].dtoh ? GP_DG_DEFER_SITE : GP_DG_PINNED_SITE,
							  w->csites[k].name);
			if (it)
				it->pageable = w->csites[k].pageable;
		}
	}
}

/* The queue waits' candidate, with the call sites of the launches that
 * waited, most wait first. */
static void gp_wi_queue_item(struct gp_whatif *w)
{
	struct gp_wi_item *q = gp_wi_add(w, GP_DG_QUEUE, NULL);
	if (!q)
		return;
	q->queue_ns = w->queue_ns;
	for (size_t k = 0; k < GP_WI_QSITES && k < w->nqsites; k++) {
		gp_wi_top_site(w->qsites, w->nqsites, k);
		q->qsites[k] = w->qsites[k].name;
		q->qsites_ns[k] = w->qsites[k].ns;
		q->nqsites = k + 1;
	}
}

static int gp_wi_finish(void *p, const struct gp_an *an, const struct gp_rep *rep)
{
	struct gp_whatif *w = p;
	(void)an;
	if (w->err)
		return w->err;
	int rc = gp_dg_build(w->g);
	if (rc)
		return rc;
	w->dg_calls = gp_dg_ncalls(w->g);
	w->dg_ops = gp_dg_nops(w->g);
	w->dg_truncated = gp_dg_truncated(w->g);
	w->dg_first_launch = gp_dg_first_launch(w->g);
	w->measured = gp_dg_wall(w->g);
	w->window = gp_dg_truncated(w->g) && rep->wall_ns > w->measured ? rep->wall_ns : w->measured;
	w->replay_rc = gp_dg_replay(w->g, NULL, &w->replayed, w->path, GP_WI_PATH, &w->npath);
	if (w->replay_rc == -ENOMEM)
		return -ENOMEM;
	w->done = 1;
	if (w->have_user && w->user.target) {
		size_t nmatch;
		if (gp_dg_match(w->g, &w->user, &nmatch, w->near, GP_WI_NEAR, &w->nnear))
			return -ENOMEM;
		w->user_match = nmatch ? 1 : 2;
		w->have_user = nmatch != 0; /* refused (gp_whatif_refused), never "saves 0" */
	}
	if (w->replay_rc || !gp_dg_nops(w->g))
		return 0;
	/* the candidates */
	for (size_t i = 0; i < w->nsyncs; i++)
		gp_wi_add(w, w->syncs[i].implicit ? GP_DG_HOIST : GP_DG_DROP_SYNC, w->syncs[i].name);
	/* one call site at a time, where the program syncs at more than one: the
	 * GP_WI_TOP sites of most blocked time */
	for (size_t k = 0; w->nsites > 1 && k < GP_WI_TOP && k < w->nsites; k++) {
		gp_wi_top_site(w->sites, w->nsites, k);
		if (w->sites[k].ns && strcmp(w->sites[k].name, "(no stack)"))
			gp_wi_add(w, GP_DG_DROP_SITE, w->sites[k].name);
	}
	if (gp_dg_empty_waits(w->g))
		gp_wi_add(w, GP_DG_DROP_EMPTY, NULL);
	if (gp_dg_queue_waits(w->g))
		gp_wi_queue_item(w);
	gp_wi_copy_sites(w);
	const struct gp_wi_op **ord = malloc((w->nops + 1) * sizeof *ord);
	if (!ord)
		return -ENOMEM;
	size_t n = 0;
	int copies = 0, kernels = 0;
	for (size_t i = 0; i < w->nops; i++)
		if (w->ops[i].name) {
			ord[n++] = &w->ops[i];
			copies |= w->ops[i].copy;
			kernels |= w->ops[i].kernel;
			struct gp_wi_item *pin = NULL, *defer = NULL;
			if (w->ops[i].copy && w->ops[i].copy_sync)
				pin = gp_wi_add(w, GP_DG_PINNED, w->ops[i].name);
			if (w->ops[i].copy && w->ops[i].copy_sync && w->ops[i].dtoh)
				defer = gp_wi_add(w, GP_DG_DEFER, w->ops[i].name);
			if (pin)
				pin->pageable = w->ops[i].pageable;
			if (defer)
				defer->pageable = w->ops[i].pageable;
		}
	if (copies && kernels)
		gp_wi_add(w, GP_DG_OVERLAP_COPIES, NULL);
	qsort(ord, n, sizeof *ord, gp_wi_cmp_launch);
	for (size_t i = 0, k = 0; i < n && k < GP_WI_TOP; i++)
		if (ord[i]->kernel && ord[i]->launch_ns)
			gp_wi_add(w, GP_DG_GRAPH_LAUNCH, ord[i]->name), k++;
	qsort(ord, n, sizeof *ord, gp_wi_cmp_exec);
	for (size_t i = 0, k = 0; i < n && k < GP_WI_TOP; i++)
		if (ord[i]->kernel && ord[i]->execute_ns) {
			struct gp_wi_item *it = gp_wi_add(w, GP_DG_SCALE, ord[i]->name);
			if (it)
				it->ch.factor = 0.5;
			k++;
		}
	free(ord);
	if (w->have_user) { /* the user's question, once: a candidate it repeats is marked */
		size_t i = 0;
		while (i < w->nitems && !gp_wi_same(&w->items[i].ch, &w->user))
			i++;
		if (i == w->nitems) {
			if (w->nitems == GP_WI_MAX)
				w->nitems--;
			struct gp_wi_item *it = gp_wi_add(w, w->user.kind, w->user.target);
			it->ch = w->user;
			i = w->nitems - 1;
		}
		w->items[i].user = 1;
	}
	/* replay each; the saving is against the unchanged replay, scaled to the
	 * whole window when the graph is a prefix of it */
	size_t keep = 0;
	for (size_t i = 0; i < w->nitems; i++) {
		struct gp_wi_item *it = &w->items[i];
		gp_wi_describe(w, it);
		uint64_t wall = 0;
		it->rc = gp_dg_replay(w->g, &it->ch, &wall, NULL, 0, NULL);
		if (it->rc == -ENOMEM)
			return -ENOMEM;
		uint64_t s = !it->rc && wall < w->replayed ? w->replayed - wall : 0;
		if (gp_dg_truncated(w->g) && w->measured)
			s = (uint64_t)((double)s * (double)w->window / (double)w->measured);
		it->saving = s;
		it->predicted = w->window > s ? w->window - s : 0;
		if (it->ch.kind == GP_DG_QUEUE && (double)s * 100 < GP_WI_GPU_BOUND * (double)w->window)
			snprintf(it->assumptions, sizeof it->assumptions,
				 "%zu launches waited on a full launch queue; not waiting saves under %d %%: the GPU is "
				 "the bottleneck, nothing to gain from the host side (shorten the kernels)",
				 gp_dg_queue_waits(w->g), GP_WI_GPU_BOUND);
		if (it->saving || it->user || it->ch.kind == GP_DG_QUEUE)
			w->items[keep++] = *it;
	}
	w->nitems = keep;
	qsort(w->items, w->nitems, sizeof *w->items, gp_wi_cmp_item);
	return 0;
}

/* What the user's change could have named, for the refusal. */
static const char *gp_wi_kind_names(enum gp_dg_change_kind k)
{
	switch (k) {
	case GP_DG_DROP_SYNC:
		return "synchronizing function";
	case GP_DG_HOIST:
		return "implicitly synchronizing function (cudaFree, cudaFreeHost, cudaMallocHost, cudaHostAlloc)";
	case GP_DG_DROP_SITE:
		return "sync call site";
	case GP_DG_GRAPH_LAUNCH:
		return "operator launched by a kernel launch";
	case GP_DG_PINNED:
	case GP_DG_DEFER:
		return "operator of a held copy (blocking, or async on pageable memory)";
	case GP_DG_PINNED_SITE:
	case GP_DG_DEFER_SITE:
		return "call site of a held copy (blocking, or async on pageable memory)";
	default:
		return "operator";
	}
}

extern const struct gp_analysis gp_analysis_whatif; /* defined at the end */

/* The what-if's state in set, when it ran. */
static const struct gp_whatif *gp_wi_of(const struct gp_analyses *set)
{
	for (size_t k = 0; set && k < set->n; k++)
		if (set->a[k] == &gp_analysis_whatif && set->st[k])
			return ((const struct gp_whatif *)set->st[k])->done ? set->st[k] : NULL;
	return NULL;
}

uint64_t gp_whatif_window_ns(const struct gp_analyses *set)
{
	const struct gp_whatif *w = gp_wi_of(set);
	return w ? w->window : 0;
}

int gp_whatif_item(const struct gp_analyses *set, size_t i, struct gp_whatif_view *out)
{
	const struct gp_whatif *w = gp_wi_of(set);
	if (!w || i >= w->nitems)
		return 0;
	const struct gp_wi_item *it = &w->items[i];
	*out = (struct gp_whatif_view){ .change = it->change, .target = it->ch.target ? it->ch.target : "",
					.saving_ns = it->saving, .user = it->user, .pageable = it->pageable,
					.site = it->nqsites ? it->qsites[0] : NULL };
	return 1;
}

int gp_whatif_refused(FILE *f, const char *spec, struct gp_analyses *const *sets, size_t n)
{
	const struct gp_whatif *miss = NULL;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; sets && sets[i] && k < sets[i]->n; k++) {
			const struct gp_whatif *w = sets[i]->st[k];
			if (sets[i]->a[k] != &gp_analysis_whatif || !w || !w->user_match)
				continue;
			if (w->user_match == 1)
				return 0;
			miss = miss ? miss : w;
		}
	if (!miss)
		return 0;
	fputs("gpuphase-report: --whatif: '", f);
	gp_fmt_text_str(f, spec);
	int glob = miss->user.kind == GP_DG_DROP_SITE || miss->user.kind == GP_DG_PINNED_SITE ||
		   miss->user.kind == GP_DG_DEFER_SITE;
	fprintf(f, "': %s matches no %s of the trace", glob ? "the glob" : "the name",
		gp_wi_kind_names(miss->user.kind));
	if (!miss->nnear)
		fprintf(f, " (it has none)");
	for (size_t i = 0; i < miss->nnear; i++) {
		fputs(i ? ", '" : "; the closest: '", f);
		gp_fmt_text_str(f, miss->near[i]);
		fputc('\'', f);
	}
	fputc('\n', f);
	return 1;
}

static double gp_wi_err_pct(const struct gp_whatif *w)
{
	double m = (double)w->measured, r = (double)w->replayed;
	return m > 0 ? 100.0 * (r > m ? r - m : m - r) / m : 0;
}

/* Where the launches that waited on a full queue were made (their share of
 * the waits), or how to find out. */
static void gp_wi_text_qsites(FILE *f, const struct gp_wi_item *it, int md)
{
	char nb[256];
	const char *li = md ? "  - " : "    ";
	if (!it->nqsites) {
		fprintf(f, "%sthe launches that waited have no call site: record with GPUPHASE_STACKS=launch to name "
			   "them\n", li);
		return;
	}
	fprintf(f, "%sthe launches that waited:", li);
	for (size_t k = 0; k < it->nqsites; k++)
		fprintf(f, "%s %.1f%% of the wait at %s", k ? "," : "", gp_fmt_pct(it->qsites_ns[k], it->queue_ns),
			gp_fmt_name_buf(it->qsites[k], md, nb, sizeof nb));
	fputc('\n', f);
}

static void gp_wi_text(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *s)
{
	const struct gp_whatif *w = p;
	(void)rep;
	if (!w->done || !w->dg_ops)
		return;
	char b1[32], b2[32], b3[32], nb[256];
	const char *li = s->markdown ? "- " : "  ";
	fprintf(f, s->markdown ? "\n## What-if\n\n" : "\nWhat-if (replay of the dependency graph)\n");
	if (w->replay_rc) {
		/* only partial results of an older report carry one: a replay
		 * fails for memory alone, and then the report does */
		fprintf(f, "%sthe graph could not be replayed\n", li);
		return;
	}
	fprintf(f, "%sgraph: %zu calls, %zu ops; measured wall %s, replayed %s (%.2f%% off)%s\n", li,
		w->dg_calls, w->dg_ops, gp_fmt_ns((double)w->measured, b1, sizeof b1),
		gp_fmt_ns((double)w->replayed, b2, sizeof b2), gp_wi_err_pct(w),
		w->dg_truncated ? "; a prefix of the window (node bound reached): savings scaled to it" : "");
	size_t shown = 0;
	for (size_t i = 0; i < w->nitems; i++) {
		const struct gp_wi_item *it = &w->items[i];
		if (shown >= GP_WI_SHOW && !it->user)
			continue;
		shown++;
		char fac[32] = "";
		if (it->ch.kind == GP_DG_SCALE)
			snprintf(fac, sizeof fac, " x%g", it->ch.factor);
		fprintf(f, "%ssaves %s (%.1f%%, %s) with %s%s%s%s, predicted wall %s%s\n", li,
			gp_fmt_ns((double)it->saving, b2, sizeof b2), gp_fmt_pct(it->saving, w->window), it->phase,
			it->change, it->ch.target ? " " : "",
			it->ch.target ? gp_fmt_name_buf(it->ch.target, s->markdown, nb, sizeof nb) : "", fac,
			gp_fmt_ns((double)it->predicted, b1, sizeof b1), it->user ? " [--whatif]" : "");
		if (it->ch.kind == GP_DG_QUEUE)
			gp_wi_text_qsites(f, it, s->markdown);
	}
	if (w->npath) {
		fprintf(f, "%scritical path:", li);
		for (size_t i = 0; i < w->npath && i < 5; i++)
			fprintf(f, "%s %s %s (%.1f%%)", i ? "," : "",
				gp_fmt_name_buf(w->path[i].name, s->markdown, nb, sizeof nb),
				gp_fmt_ns((double)w->path[i].ns, b3, sizeof b3), gp_fmt_pct(w->path[i].ns, w->replayed));
		fputc('\n', f);
	}
}

static void gp_wi_json(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *s)
{
	const struct gp_whatif *w = p;
	(void)rep;
	(void)s;
	if (!w->done) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"calls\": %zu, \"ops\": %zu, \"measured_wall_ns\": %" PRIu64 ", \"replayed_wall_ns\": %" PRIu64
		   ", \"replay_error_pct\": ",
		w->dg_calls, w->dg_ops, w->measured, w->replayed);
	gp_fmt_json_num(f, gp_wi_err_pct(w));
	fprintf(f, ", \"replay_ok\": %s, \"truncated\": %s, \"window_ns\": %" PRIu64 ", \"first_launch_ns\": %" PRIu64
		   ", \"whatif\": [",
		w->replay_rc ? "false" : "true", w->dg_truncated ? "true" : "false", w->window,
		w->dg_first_launch);
	for (size_t i = 0; i < w->nitems; i++) {
		const struct gp_wi_item *it = &w->items[i];
		fprintf(f, "%s{\"change\": \"%s\", \"target\": ", i ? ", " : "", it->change);
		if (it->ch.target)
			gp_fmt_json_str(f, it->ch.target);
		else
			fputs("null", f);
		fprintf(f, ", \"phase\": \"%s\", \"predicted_wall_ns\": %" PRIu64 ", \"saving_ns\": %" PRIu64
			   ", \"user\": %s, \"assumptions\": ",
			it->phase, it->predicted, it->saving, it->user ? "true" : "false");
		gp_fmt_json_str(f, it->assumptions);
		if (it->ch.kind == GP_DG_SCALE) {
			fputs(", \"factor\": ", f);
			gp_fmt_json_num(f, it->ch.factor);
		}
		if (it->ch.kind == GP_DG_QUEUE) {
			fprintf(f, ", \"queue_wait_ns\": %" PRIu64 ", \"sites\": [", it->queue_ns);
			for (size_t k = 0; k < it->nqsites; k++) {
				fputs(k ? ", {\"name\": " : "{\"name\": ", f);
				gp_fmt_json_str(f, it->qsites[k]);
				fprintf(f, ", \"wait_ns\": %" PRIu64 "}", it->qsites_ns[k]);
			}
			fputc(']', f);
		}
		fputc('}', f);
	}
	fputs("], \"critical_path\": [", f);
	for (size_t i = 0; i < w->npath; i++) {
		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		gp_fmt_json_str(f, w->path[i].name);
		fprintf(f, ", \"ns\": %" PRIu64 "}", w->path[i].ns);
	}
	fputs("]}", f);
}

/* HTML: each shown what-if's saving as a bar on the largest saving's scale
 * (predicted walls on the measured wall's scale would all look alike: a
 * 2 % saving is 2 % of a bar), labelled with the saving, its share of the
 * window and the predicted wall. */
static void gp_wi_figure(FILE *f, const void *p)
{
	const struct gp_whatif *w = p;
	if (!w->done || w->replay_rc || !w->window || !w->nitems)
		return;
	size_t n = w->nitems < GP_WI_SHOW ? w->nitems : GP_WI_SHOW;
	uint64_t top = 1;
	for (size_t i = 0; i < n; i++)
		if (w->items[i].saving > top)
			top = w->items[i].saving;
	const int width = 560, left = 4, row = 40; /* a row: the change's name, its bar below */
	char b[32], c[32];
	fprintf(f, "<svg class='whatif' xmlns='http://www.w3.org/2000/svg' width='%d' height='%zu' "
		   "font-family='sans-serif' font-size='12'>\n<text x='4' y='14'>saving of each change (measured wall %s; "
		   "bars on the largest saving's scale)</text>\n",
		left + width + 200, (size_t)row * n + 24, gp_fmt_ns((double)w->window, b, sizeof b));
	for (size_t i = 0; i < n; i++) {
		const struct gp_wi_item *it = &w->items[i];
		double bw = (double)width * (double)it->saving / (double)top;
		size_t y = (size_t)row * i + 24;
		fprintf(f, "<text x='4' y='%zu'>", y + 12);
		gp_fmt_html_str(f, it->change);
		if (it->ch.target) {
			fputc(' ', f);
			gp_fmt_html_str(f, it->ch.target);
		}
		fprintf(f, "</text><rect x='%d' y='%zu' width='%.1f' height='16' fill='#3a7be4'><title>predicted wall "
			   "%s</title></rect><text x='%.1f' y='%zu'>-%.1f%% (saves %s)</text>\n",
			left, y + 16, bw, gp_fmt_ns((double)it->predicted, b, sizeof b), left + bw + 6, y + 28,
			gp_fmt_pct(it->saving, w->window), gp_fmt_ns((double)it->saving, c, sizeof c));
	}
	fputs("</svg>\n", f);
}

/* Partial results: the replays' outcome (not the graph: the section prints
 * only its counts). */
static int gp_wi_save(const void *p, struct gp_pw *w)
{
	const struct gp_whatif *wi = p;
	gp_pw_u8(w, wi->done != 0);
	if (!wi->done)
		return w->err;
	gp_pw_u32(w, (uint32_t)wi->replay_rc);
	gp_pw_u64(w, wi->measured);
	gp_pw_u64(w, wi->replayed);
	gp_pw_u64(w, wi->window);
	gp_pw_u64(w, wi->dg_calls);
	gp_pw_u64(w, wi->dg_ops);
	gp_pw_u8(w, wi->dg_truncated != 0);
	gp_pw_u64(w, wi->dg_first_launch);
	gp_pw_u64(w, wi->npath);
	for (size_t i = 0; i < wi->npath; i++) {
		gp_pw_str(w, wi->path[i].name);
		gp_pw_u64(w, wi->path[i].ns);
	}
	gp_pw_u64(w, wi->nitems);
	for (size_t i = 0; i < wi->nitems; i++) {
		const struct gp_wi_item *it = &wi->items[i];
		gp_pw_u32(w, (uint32_t)it->ch.kind);
		gp_pw_str(w, it->change);
		gp_pw_str(w, it->phase);
		gp_pw_str(w, it->ch.target);
		gp_pw_f64(w, it->ch.factor);
		gp_pw_u64(w, it->ch.cost_ns);
		gp_pw_str(w, it->assumptions);
		gp_pw_u64(w, it->predicted);
		gp_pw_u64(w, it->saving);
		gp_pw_u8(w, it->user != 0);
		gp_pw_u32(w, (uint32_t)it->rc);
		gp_pw_u8(w, it->pageable != 0);
		gp_pw_u64(w, it->queue_ns);
		gp_pw_u64(w, it->nqsites);
		for (size_t k = 0; k < it->nqsites; k++) {
			gp_pw_str(w, it->qsites[k]);
			gp_pw_u64(w, it->qsites_ns[k]);
		}
	}
	return w->err;
}

/* One of the texts the report writes unquoted (gp_wi_describe)? */
static int gp_wi_known(const char *s, const char *const *list)
{
	for (size_t i = 0; s && list[i]; i++)
		if (!strcmp(s, list[i]))
			return 1;
	return 0;
}

static int gp_wi_load(void *p, struct gp_pr *r, struct gp_strtab *strings)
{
	static const char *const changes[] = { "remove_sync", "hoist_implicit_sync", "remove_sync_site",
					       "remove_empty_waits", "graph_launch", "pinned_async_copy",
					       "pinned_async_copy_site", "defer_copy_wait", "defer_copy_wait_site",
					       "remove_queue_waits", "overlap_copies", "scale_kernel", "none", NULL };
	static const char *const phases[] = { "sync", "launch", "queue", "execute", "", NULL };
	struct gp_whatif *wi = p;
	wi->done = gp_pr_bool(r);
	if (!wi->done || r->err)
		return r->err;
	wi->replay_rc = (int)(int32_t)gp_pr_u32(r);
	wi->measured = gp_pr_u64(r);
	wi->replayed = gp_pr_u64(r);
	wi->window = gp_pr_u64(r);
	uint64_t nc = gp_pr_u64(r), no = gp_pr_u64(r);
	wi->dg_calls = nc > SIZE_MAX ? SIZE_MAX : (size_t)nc;
	wi->dg_ops = no > SIZE_MAX ? SIZE_MAX : (size_t)no;
	wi->dg_truncated = gp_pr_bool(r);
	wi->dg_first_launch = gp_pr_u64(r);
	if (!r->err && wi->replay_rc && (wi->replay_rc > 0 || wi->replay_rc < -4095))
		gp_pr_fail(r, "the replay's error is not an errno");
	size_t np = gp_pr_count(r, 12, GP_WI_PATH);
	for (size_t i = 0; i < np && !r->err; i++) {
		wi->path[i].name = gp_pr_intern_req(r, strings);
		wi->path[i].ns = gp_pr_u64(r);
		wi->npath = i + 1;
	}
	size_t ni = gp_pr_count(r, 4 + 3 * 4 + 16 + 4 + 16 + 1 + 4 + 1 + 16, GP_WI_MAX);
	for (size_t i = 0; i < ni && !r->err; i++) {
		struct gp_wi_item *it = &wi->items[i];
		memset(it, 0, sizeof *it);
		it->ch.kind = (enum gp_dg_change_kind)gp_pr_u32(r);
		it->change = gp_pr_intern_req(r, strings);
		it->phase = gp_pr_intern_req(r, strings);
		if (!r->err && (!gp_wi_known(it->change, changes) || !gp_wi_known(it->phase, phases)))
			gp_pr_fail(r, "a what-if of an unknown change or phase");
		it->ch.target = gp_pr_intern(r, strings);
		it->ch.factor = gp_pr_f64(r);
		it->ch.cost_ns = gp_pr_u64(r);
		const char *a = gp_pr_intern_req(r, strings);
		if (a && strlen(a) >= sizeof it->assumptions)
			gp_pr_fail(r, "a what-if's assumptions are longer than the report writes");
		else if (a)
			memcpy(it->assumptions, a, strlen(a) + 1);
		it->predicted = gp_pr_u64(r);
		it->saving = gp_pr_u64(r);
		it->user = gp_pr_bool(r);
		it->rc = (int)(int32_t)gp_pr_u32(r);
		it->pageable = gp_pr_bool(r);
		it->queue_ns = gp_pr_u64(r);
		size_t nq = gp_pr_count(r, 12, GP_WI_QSITES);
		for (size_t k = 0; k < nq && !r->err; k++) {
			it->qsites[k] = gp_pr_intern_req(r, strings);
			it->qsites_ns[k] = gp_pr_u64(r);
			it->nqsites = k + 1;
		}
		wi->nitems = i + 1;
	}
	return r->err;
}

const struct gp_analysis gp_analysis_whatif = {
	.name = "whatif",
	.title = "What-if",
	.types = { 0, GP_AN_TYPE(GP_REC_HOOK_API) | GP_AN_TYPE(GP_REC_RUNTIME_API) },
	.create = gp_wi_create,
	.record = gp_wi_record,
	.prepare = gp_wi_prepare,
	.op = gp_wi_op,
	.wait = gp_wi_wait,
	.finish = gp_wi_finish,
	.text = gp_wi_text,
	.json = gp_wi_json,
	.figure = gp_wi_figure,
	.destroy = gp_wi_destroy,
	.save = gp_wi_save,
	.load = gp_wi_load,
};
