/*
 * xa.c — intake of the extra analyses (xa.h). Pass 1 gathers what folding an
 * op needs first: host samples, status values, iteration marks, the stage
 * edges (first CUDA call, first launch, last kernel end, last record) and the
 * top-level NVTX ranges. Pass 2 follows capture-time NVTX ranges per thread,
 * graph capture / clone / replay records and non-op API calls, and folds
 * each op from the core's op sink into per-operator sums (drift fit, launch
 * time on a busy host), per-(iteration, operator) and per-(stage, operator)
 * sums. Called by main.c on the report thread, in pass order. Invariant:
 * every string kept past gp_xa_finish is an owned copy (the analyser's
 * strings die with it); nothing is kept per op.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "xa.h"

#define GP_XA_MAX_RANGES 65536 /* top-level NVTX ranges kept for stages      */
#define GP_XA_MAX_RANGE_NAMES 8

#define XA_GROW(arr, n, cap) ((n) < (cap) ? 0 : gp_xa_grow((void **)&(arr), &(cap), sizeof *(arr)))

static int gp_xa_grow(void **arr, size_t *cap, size_t elem)
{
	size_t nc = *cap ? *cap * 2 : 64;
	void *p = realloc(*arr, nc * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = nc;
	return 0;
}

static void gp_xa_fail(struct gp_xa *xa, int rc)
{
	/* -EINVAL is gp_map_put refusing the reserved key UINT64_MAX (a graph
	 * node id, marker id, ... of all ones): only a corrupt file holds one;
	 * that record is left out and the rest analysed, as gp_an_fail does
	 * (it was reported as "out of memory", tests/fuzz all-types-ff.in). */
	if (rc == -EINVAL)
		return;
	if (rc && !xa->err)
		xa->err = rc;
}

struct gp_xa *gp_xa_new(void)
{
	struct gp_xa *xa = calloc(1, sizeof *xa);
	if (!xa)
		return NULL;
	xa->hook_cost_ns = -1;
	xa->proc_start = -1;
	xa->win_iter = -1;
	xa->first_api = UINT64_MAX;
	xa->first_launch = UINT64_MAX;
	xa->outlier_factor = 1.5;
	return xa;
}

static void gp_xa_free_nvtx(struct gp_xa_nvtx *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].names);
	free(v);
}

void gp_xa_free(struct gp_xa *xa)
{
	if (!xa)
		return;
	for (size_t i = 0; i < xa->nnames; i++)
		free(xa->names[i]);
	free(xa->names);
	gp_map_free(&xa->name_by_hash);
	gp_map_free(&xa->api_name);
	free(xa->grp);
	gp_map_free(&xa->iter_grp);
	gp_map_free(&xa->iter_class);
	gp_map_free(&xa->iter_seen);
	gp_map_free(&xa->stage_grp);
	gp_map_free(&xa->stage_call);
	gp_map_free(&xa->nvtx_by_tid);
	gp_xa_free_nvtx(xa->nvtx, xa->nnvtx);
	gp_map_free(&xa->nvtx1_by_tid);
	gp_xa_free_nvtx(xa->nvtx1, xa->nnvtx1);
	free(xa->ranges);
	free(xa->caps);
	gp_map_free(&xa->cap_by_node);
	gp_map_free(&xa->clone_node);
	gp_map_free(&xa->clone_graph);
	free(xa->gks);
	gp_map_free(&xa->gk_by_corr);
	free(xa->rnodes);
	gp_map_free(&xa->rnode_by_id);
	for (size_t i = 0; i < xa->nrgraphs; i++)
		gp_map_free(&xa->rgraphs[i].launches);
	free(xa->rgraphs);
	gp_map_free(&xa->rgraph_by_id);
	gp_map_free(&xa->glaunch_dur);
	gp_map_free(&xa->op_stack);
	gp_map_free(&xa->stack_pc);
	gp_map_free(&xa->sym);
	free(xa->hosts);
	free(xa->marks);
	free(xa);
}

/* FNV-1a, folded away from GP_MAP_EMPTY. */
static uint64_t gp_xa_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h == UINT64_MAX ? h - 1 : h;
}

uint32_t gp_xa_name(struct gp_xa *xa, const char *s)
{
	if (!s)
		s = "?";
	uint64_t h = gp_xa_hash(s);
	for (;;) { /* linear probe over hash values on collision */
		uint64_t *v = gp_map_get(&xa->name_by_hash, h);
		if (!v)
			break;
		if (!strcmp(xa->names[*v], s))
			return (uint32_t)*v;
		h = h + 1 == UINT64_MAX ? 0 : h + 1;
	}
	char *d = strdup(s);
	if (!d || XA_GROW(xa->names, xa->nnames, xa->capnames) || gp_map_put(&xa->name_by_hash, h, xa->nnames)) {
		free(d);
		gp_xa_fail(xa, -ENOMEM);
		return UINT32_MAX;
	}
	xa->names[xa->nnames] = d;
	return (uint32_t)xa->nnames++;
}

/* The graphs section's kernel name (demangle.h: gp_demangle_base). */
static uint32_t gp_xa_short_name(struct gp_xa *xa, const char *mangled)
{
	char *d = gp_demangle_base(mangled);
	if (!d) {
		gp_xa_fail(xa, -ENOMEM);
		return UINT32_MAX;
	}
	uint32_t r = gp_xa_name(xa, d);
	free(d);
	return r;
}

static struct gp_xa_nvtx *gp_xa_nvtx_of(struct gp_xa *xa, struct gp_map *m, struct gp_xa_nvtx **v, size_t *n,
				       size_t *cap, uint32_t tid, int create)
{
	uint64_t *i = gp_map_get(m, tid);
	if (i)
		return &(*v)[*i];
	if (!create)
		return NULL;
	if (XA_GROW(*v, *n, *cap) || gp_map_put(m, tid, *n)) {
		gp_xa_fail(xa, -ENOMEM);
		return NULL;
	}
	struct gp_xa_nvtx *s = &(*v)[(*n)++];
	memset(s, 0, sizeof *s);
	return s;
}

/* Push/pop on a per-thread stack; returns the stack, and on a pop back to
 * depth 0 sets *closed (start in s->depth0_start, name in *name). */
static struct gp_xa_nvtx *gp_xa_push_pop(struct gp_xa *xa, struct gp_map *m, struct gp_xa_nvtx **v, size_t *n,
					 size_t *cap, const struct gp_rec_marker *mk, int *closed, uint32_t *name)
{
	*closed = 0;
	if (mk->kind != GP_MARK_PUSH && mk->kind != GP_MARK_POP)
		return NULL;
	struct gp_xa_nvtx *s = gp_xa_nvtx_of(xa, m, v, n, cap, mk->tid, 1);
	if (!s)
		return NULL;
	if (mk->kind == GP_MARK_PUSH) {
		if (XA_GROW(s->names, s->n, s->cap)) {
			gp_xa_fail(xa, -ENOMEM);
			return NULL;
		}
		if (s->n == 0)
			s->depth0_start = mk->ts;
		s->names[s->n++] = mk->name;
	} else if (s->n > 0) { /* a pop without push: range opened before capture */
		*name = s->names[0];
		*closed = --s->n == 0;
	}
	return s;
}

/* ---- pass 1 ---------------------------------------------------------------- */

static void gp_xa_seen(struct gp_xa *xa, uint64_t t)
{
	if (t > xa->last_ts)
		xa->last_ts = t;
}

int gp_xa_scan1(struct gp_xa *xa, const union gp_rec *r)
{
	switch (r->type) {
	case GP_REC_HOST_SAMPLE:
		if (XA_GROW(xa->hosts, xa->nhosts, xa->caphosts)) {
			gp_xa_fail(xa, -ENOMEM);
			break;
		}
		xa->hosts[xa->nhosts++] = (struct gp_xa_host){ .ts = r->host.ts,
							       .interval_ns = (uint64_t)r->host.interval_us * 1000u,
							       .cupti_ns = r->host.cupti_ns,
							       .busy_pm = r->host.host_busy_pm,
							       .proc_pm = r->host.proc_cpu_pm };
		break;
	case GP_REC_STATUS:
		if (r->status.kind == GP_STATUS_HOOK_COST)
			xa->hook_cost_ns = r->status.value;
		else if (r->status.kind == GP_STATUS_PROCESS_START && r->status.value > 0)
			xa->proc_start = r->status.value;
		break;
	case GP_REC_WINDOW:
		if (r->mark.kind == GP_WIN_START && xa->win_iter < 0) {
			xa->win_iter = (int64_t)r->mark.iter;
			xa->win_start = r->mark.ts;
		}
		break;
	case GP_REC_ITER:
		if (XA_GROW(xa->marks, xa->nmarks, xa->capmarks)) {
			gp_xa_fail(xa, -ENOMEM);
			break;
		}
		xa->marks[xa->nmarks++] = (struct gp_xa_mark){ r->mark.ts, (int64_t)r->mark.iter };
		break;
	case GP_REC_MARKER: {
		gp_xa_seen(xa, r->marker.ts);
		if (xa->ranges_off)
			break;
		int closed;
		uint32_t name = 0;
		struct gp_xa_nvtx *s = gp_xa_push_pop(xa, &xa->nvtx1_by_tid, &xa->nvtx1, &xa->nnvtx1, &xa->capnvtx1,
						      &r->marker, &closed, &name);
		if (!s || !closed)
			break;
		if (xa->nranges >= GP_XA_MAX_RANGES || XA_GROW(xa->ranges, xa->nranges, xa->capranges)) {
			xa->ranges_off = 1;
			break;
		}
		xa->ranges[xa->nranges++] = (struct gp_xa_range){ s->depth0_start, r->marker.ts, name };
		break;
	}
	case GP_REC_KERNEL:
		gp_xa_seen(xa, r->kernel.end);
		if (!(r->kernel.flags & GP_OPF_END_MISSING) && r->kernel.end > xa->last_kernel)
			xa->last_kernel = r->kernel.end;
		break;
	case GP_REC_MEMCPY:
	case GP_REC_MEMSET:
		gp_xa_seen(xa, r->copy.start + gp_copy_dur_ns(&r->copy));
		break;
	case GP_REC_HOOK_API:
	case GP_REC_RUNTIME_API:
	case GP_REC_DRIVER_API: {
		const struct gp_rec_api *a = &r->api;
		gp_xa_seen(xa, a->start + gp_api_dur_ns(a));
		if (a->type == GP_REC_DRIVER_API)
			break;
		if (a->type == GP_REC_RUNTIME_API && !xa->runtime_seen) {
			/* CUPTI's runtime records win over hooks: restart the minima */
			xa->runtime_seen = 1;
			xa->first_api = xa->first_launch = UINT64_MAX;
		}
		if (a->type == GP_REC_HOOK_API && xa->runtime_seen)
			break;
		if (a->start < xa->first_api)
			xa->first_api = a->start;
		unsigned cls = GP_API_CLASS(a->class_flags);
		if ((cls == GP_API_LAUNCH || cls == GP_API_GRAPH_LAUNCH) && a->start < xa->first_launch)
			xa->first_launch = a->start;
		break;
	}
	default:
		break;
	}
	return xa->err;
}

static int gp_xa_cmp_host(const void *a, const void *b)
{
	const struct gp_xa_host *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

int gp_xa_prepare(struct gp_xa *xa, const struct gp_an *an)
{
	if (xa->nhosts) /* qsort(NULL, 0) is undefined (UBSan: nonnull) */
		qsort(xa->hosts, xa->nhosts, sizeof *xa->hosts, gp_xa_cmp_host);
	/* NVTX range names: at most GP_XA_MAX_RANGE_NAMES distinct, else none */
	size_t distinct = 0;
	uint32_t seen[GP_XA_MAX_RANGE_NAMES];
	for (size_t i = 0; i < xa->nranges && !xa->ranges_off; i++) {
		const char *t = gp_an_string(an, xa->ranges[i].name);
		uint32_t k = gp_xa_name(xa, t ? t : "(unnamed)");
		xa->ranges[i].name = k;
		size_t j = 0;
		while (j < distinct && seen[j] != k)
			j++;
		if (j == distinct) {
			if (distinct == GP_XA_MAX_RANGE_NAMES)
				xa->ranges_off = 1;
			else
				seen[distinct++] = k;
		}
	}
	uint64_t tb = gp_an_time_base(an);
	xa->t_start = xa->proc_start >= 0 && (uint64_t)xa->proc_start < tb ? (uint64_t)xa->proc_start : tb;
	xa->t_end = xa->last_ts;
	gp_xa_stages_prepare(xa);
	return xa->err;
}

/* ---- pass 2 ---------------------------------------------------------------- */

static void gp_xa_graph(struct gp_xa *xa, const struct gp_rec_graph *g)
{
	uint64_t aux = (uint64_t)g->aux_hi << 32 | g->aux_lo;
	switch (g->kind) {
	case GP_GRAPH_CAPTURED: {
		if (XA_GROW(xa->caps, xa->ncaps, xa->capcaps)) {
			gp_xa_fail(xa, -ENOMEM);
			return;
		}
		struct gp_xa_nvtx *s = gp_xa_nvtx_of(xa, &xa->nvtx_by_tid, &xa->nvtx, &xa->nnvtx, &xa->capnvtx,
						     g->aux32, 0);
		xa->caps[xa->ncaps] = (struct gp_xa_cap){ .node = g->node_id, .graph = g->graph_id, .op = g->corr,
							  .tid = g->aux32, .ts = aux,
							  .nvtx = s && s->n ? s->names[s->n - 1] : 0 };
		gp_xa_fail(xa, gp_map_put(&xa->cap_by_node, g->node_id, xa->ncaps));
		if (g->corr)
			gp_xa_fail(xa, gp_map_put(&xa->op_stack, g->corr, 0));
		xa->ncaps++;
		break;
	}
	case GP_GRAPH_CLONED:
		gp_xa_fail(xa, gp_map_put(&xa->clone_node, g->node_id, aux));
		gp_xa_fail(xa, gp_map_put(&xa->clone_graph, g->graph_id, g->aux32));
		break;
	default: { /* GP_GRAPH_OP: ids of the graph kernel just before */
		uint64_t *v = gp_map_get(&xa->gk_by_corr, g->corr);
		if (!v)
			break;
		struct gp_xa_gk k = xa->gks[*v];
		/* free the slot: move the last pending kernel into it */
		size_t i = (size_t)*v;
		gp_map_del(&xa->gk_by_corr, g->corr);
		if (i != xa->ngks - 1) {
			xa->gks[i] = xa->gks[xa->ngks - 1];
			gp_xa_fail(xa, gp_map_put(&xa->gk_by_corr, xa->gks[i].corr, i));
		}
		xa->ngks--;
		uint64_t *ni = gp_map_get(&xa->rnode_by_id, g->node_id);
		if (!ni) {
			if (XA_GROW(xa->rnodes, xa->nrnodes, xa->caprnodes)) {
				gp_xa_fail(xa, -ENOMEM);
				break;
			}
			xa->rnodes[xa->nrnodes] = (struct gp_xa_rnode){ .node = g->node_id, .graph = g->graph_id,
									.name = k.name };
			gp_xa_fail(xa, gp_map_put(&xa->rnode_by_id, g->node_id, xa->nrnodes));
			ni = gp_map_get(&xa->rnode_by_id, g->node_id);
			xa->nrnodes++;
			if (!ni)
				break;
		}
		struct gp_xa_rnode *rn = &xa->rnodes[*ni];
		uint64_t ex = k.end > k.start ? k.end - k.start : 0;
		rn->count++;
		rn->exec_ns += ex;
		uint64_t *gi = gp_map_get(&xa->rgraph_by_id, g->graph_id);
		if (!gi) {
			if (XA_GROW(xa->rgraphs, xa->nrgraphs, xa->caprgraphs)) {
				gp_xa_fail(xa, -ENOMEM);
				break;
			}
			memset(&xa->rgraphs[xa->nrgraphs], 0, sizeof xa->rgraphs[0]);
			xa->rgraphs[xa->nrgraphs].graph = g->graph_id;
			gp_xa_fail(xa, gp_map_put(&xa->rgraph_by_id, g->graph_id, xa->nrgraphs));
			gi = gp_map_get(&xa->rgraph_by_id, g->graph_id);
			xa->nrgraphs++;
			if (!gi)
				break;
		}
		struct gp_xa_rgraph *rg = &xa->rgraphs[*gi];
		rg->exec_ns += ex;
		rg->kernels++;
		if (!gp_map_get(&rg->launches, k.corr))
			gp_xa_fail(xa, gp_map_put(&rg->launches, k.corr, 1));
		break;
	}
	}
}

static void gp_xa_add(struct gp_xa *xa, struct gp_map *m, uint64_t key, uint64_t v)
{
	uint64_t *p = gp_map_get(m, key);
	if (p)
		*p += v;
	else
		gp_xa_fail(xa, gp_map_put(m, key, v));
}

int gp_xa_record(struct gp_xa *xa, const struct gp_an *an, const union gp_rec *r)
{
	switch (r->type) {
	case GP_REC_MARKER: {
		int closed;
		uint32_t name;
		gp_xa_push_pop(xa, &xa->nvtx_by_tid, &xa->nvtx, &xa->nnvtx, &xa->capnvtx, &r->marker, &closed, &name);
		break;
	}
	case GP_REC_GRAPH_NODE:
		gp_xa_graph(xa, &r->graph);
		break;
	case GP_REC_KERNEL:
		if (!(r->kernel.flags & GP_OPF_GRAPH))
			break;
		if (XA_GROW(xa->gks, xa->ngks, xa->capgks)) {
			gp_xa_fail(xa, -ENOMEM);
			break;
		}
		{
			uint64_t *old = gp_map_get(&xa->gk_by_corr, r->kernel.corr);
			size_t i = old ? (size_t)*old : xa->ngks++; /* an unpaired one is replaced */
			xa->gks[i] = (struct gp_xa_gk){ r->kernel.corr, r->kernel.name, r->kernel.start, r->kernel.end };
			if (!old)
				gp_xa_fail(xa, gp_map_put(&xa->gk_by_corr, r->kernel.corr, i));
		}
		break;
	case GP_REC_HOOK_API:
		xa->hook_calls++;
		break;
	case GP_REC_RUNTIME_API: {
		const struct gp_rec_api *a = &r->api;
		unsigned cls = GP_API_CLASS(a->class_flags);
		uint64_t dur = gp_api_dur_ns(a);
		if (cls == GP_API_GRAPH_LAUNCH) {
			gp_xa_fail(xa, gp_map_put(&xa->glaunch_dur, a->corr, dur));
		} else if (cls == GP_API_OTHER) {
			int st = gp_xa_stage_of(xa, a->start);
			if (st < 0)
				break;
			uint64_t *ni = gp_map_get(&xa->api_name, a->api_id);
			uint32_t name;
			if (ni) {
				name = (uint32_t)*ni;
			} else {
				const char *n = gp_an_api_name(an, GP_REC_RUNTIME_API, a->api_id);
				name = gp_xa_name(xa, n ? n : "(runtime call)");
				gp_xa_fail(xa, gp_map_put(&xa->api_name, a->api_id, name));
			}
			gp_xa_add(xa, &xa->stage_call, (uint64_t)st << 32 | name, dur);
		}
		break;
	}
	case GP_REC_STACK_REF: {
		uint64_t *v = gp_map_get(&xa->op_stack, r->stack_ref.op);
		if (v)
			*v = r->stack_ref.stack;
		break;
	}
	case GP_REC_STACK:
		if (r->stack.depth)
			gp_xa_fail(xa, gp_map_put(&xa->stack_pc, r->stack.id, r->stack.pc[0]));
		break;
	case GP_REC_SYMBOL:
		if (r->symbol.pc != UINT64_MAX)
			gp_xa_fail(xa, gp_map_put(&xa->sym, r->symbol.pc, r->symbol.name));
		break;
	default:
		break;
	}
	return xa->err;
}

/* Is time t inside a sample interval with host busy > 50 %? Samples are
 * sorted by ts; sample i covers (ts - interval, ts]. */
static int gp_xa_busy_at(const struct gp_xa *xa, uint64_t t)
{
	size_t lo = 0, hi = xa->nhosts;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (xa->hosts[mid].ts < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == xa->nhosts)
		return 0;
	const struct gp_xa_host *h = &xa->hosts[lo];
	return h->ts - h->interval_ns <= t && h->busy_pm > 500;
}

void gp_xa_op(struct gp_xa *xa, const struct gp_an_op *op)
{
	if (op->group == UINT32_MAX)
		return;
	if (op->group >= xa->ngrp) {
		size_t n = xa->ngrp ? xa->ngrp : 16;
		while (n <= op->group)
			n *= 2;
		struct gp_xa_grp *g = realloc(xa->grp, n * sizeof *g);
		if (!g) {
			gp_xa_fail(xa, -ENOMEM);
			return;
		}
		memset(g + xa->ngrp, 0, (n - xa->ngrp) * sizeof *g);
		xa->grp = g;
		xa->ngrp = n;
	}
	struct gp_xa_grp *g = &xa->grp[op->group];
	if (op->has_gpu) {
		double x = (double)g->n, y = (double)op->execute_ns;
		g->n++;
		g->sx += x;
		g->sy += y;
		g->sxx += x * x;
		g->sxy += x * y;
		g->syy += y * y;
	}
	if (op->has_api && op->launch_ns) {
		g->launch_all += op->launch_ns;
		g->calls_all++;
		if (gp_xa_busy_at(xa, op->api_start)) {
			g->launch_busy += op->launch_ns;
			g->calls_busy++;
		}
	}
	uint64_t t0 = op->has_api ? op->api_start : op->gpu_start, v = op->launch_ns + op->execute_ns;
	uint64_t *cls = op->iter >= 0 ? gp_map_get(&xa->iter_class, (uint64_t)op->iter) : NULL;
	if (cls && *cls == 1 && !gp_map_get(&xa->iter_seen, (uint64_t)op->iter)) {
		gp_xa_fail(xa, gp_map_put(&xa->iter_seen, (uint64_t)op->iter, 1));
		xa->nnormal_seen++;
	}
	if (cls && *cls == 1)
		g->normal_ns += v;
	else if (cls && *cls == 2 && op->group < (1u << 20))
		gp_xa_add(xa, &xa->iter_grp, (uint64_t)op->iter << 20 | op->group, v);
	int st = gp_xa_stage_of(xa, t0);
	if (st >= 0)
		gp_xa_add(xa, &xa->stage_grp, (uint64_t)st << 32 | op->group, v);
}

int gp_xa_finish(struct gp_xa *xa, const struct gp_an *an, const struct gp_rep *rep)
{
	(void)rep;
	/* resolve what needs the analyser's strings into owned names; captured
	 * nodes: nvtx -> names index + 1, stack -> call-site names index + 1 */
	for (size_t i = 0; i < xa->ncaps; i++) {
		struct gp_xa_cap *c = &xa->caps[i];
		const char *t = c->nvtx ? gp_an_string(an, c->nvtx) : NULL;
		c->nvtx = t ? gp_xa_name(xa, t) + 1 : 0;
		uint64_t *st = c->op ? gp_map_get(&xa->op_stack, c->op) : NULL;
		uint64_t *pc = st && *st ? gp_map_get(&xa->stack_pc, *st) : NULL;
		c->stack = 0;
		if (pc) {
			uint64_t *sy = gp_map_get(&xa->sym, *pc);
			const char *s = sy ? gp_an_string(an, (uint32_t)*sy) : NULL;
			char buf[32];
			if (!s) {
				snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)*pc);
				s = buf;
			}
			c->stack = gp_xa_name(xa, s) + 1;
		}
	}
	for (size_t i = 0; i < xa->nrnodes; i++)
		xa->rnodes[i].name = gp_xa_short_name(xa, gp_an_string(an, xa->rnodes[i].name));
	for (size_t i = 0; i < xa->nrgraphs; i++) { /* host time: each launch once */
		struct gp_xa_rgraph *g = &xa->rgraphs[i];
		size_t pos = 0;
		uint64_t corr, one;
		while (gp_map_next(&g->launches, &pos, &corr, &one)) {
			uint64_t *d = gp_map_get(&xa->glaunch_dur, corr);
			if (d)
				g->launch_ns += *d;
		}
	}
	xa->finished = 1;
	return xa->err;
}

int gp_xa_print(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, const struct gp_out_opts *o)
{
	if (!xa || !xa->finished || o->format == GP_FMT_CSV || o->format == GP_FMT_JSON)
		return 0;
	int md = o->format == GP_FMT_MARKDOWN;
	gp_xa_print_stages(f, xa, rep, md);
	gp_xa_print_host(f, xa, rep, md);
	gp_xa_print_trends(f, xa, rep, o, md);
	gp_xa_print_graphs(f, xa, rep, md);
	return ferror(f) ? -EIO : 0;
}
