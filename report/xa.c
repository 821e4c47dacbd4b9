/*
 * xa.c — intake of the extra analyses (xa.h): what the sections need from
 * the record stream (NVTX ranges per thread, graph capture / clone / replay
 * records, host samples, status values, non-op API calls) and from the core's
 * op sink (one compact entry per joined op). Called by main.c and
 * stability.c on the report thread, in pass 2 order. Invariant: every string
 * kept past gp_xa_finish is an owned copy (the analyser's strings die with it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xa.h"

#define XA_GROW(arr, n, cap)                                                              \
	((n) < (cap) ? 0                                                                  \
		     : gp_xa_grow((void **)&(arr), &(cap), sizeof *(arr)))

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
	if (rc && !xa->err)
		xa->err = rc;
}

struct gp_xa *gp_xa_new(int group_by)
{
	struct gp_xa *xa = calloc(1, sizeof *xa);
	if (!xa)
		return NULL;
	xa->group_by = group_by;
	xa->hook_cost_ns = -1;
	xa->proc_start = -1;
	xa->win_iter = -1;
	xa->first_api = UINT64_MAX;
	return xa;
}

void gp_xa_free(struct gp_xa *xa)
{
	if (!xa)
		return;
	for (size_t i = 0; i < xa->nnames; i++)
		free(xa->names[i]);
	free(xa->names);
	gp_map_free(&xa->name_by_hash);
	free(xa->ops);
	gp_map_free(&xa->nvtx_by_tid);
	for (size_t i = 0; i < xa->nnvtx; i++)
		free(xa->nvtx[i].names);
	free(xa->nvtx);
	free(xa->ranges);
	free(xa->caps);
	gp_map_free(&xa->cap_by_node);
	gp_map_free(&xa->clone_node);
	gp_map_free(&xa->clone_graph);
	free(xa->gks);
	gp_map_free(&xa->gk_last);
	gp_map_free(&xa->glaunch_dur);
	gp_map_free(&xa->op_stack);
	gp_map_free(&xa->stack_pc);
	gp_map_free(&xa->sym);
	free(xa->hosts);
	free(xa->calls);
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
	if (!d || XA_GROW(xa->names, xa->nnames, xa->capnames) ||
	    gp_map_put(&xa->name_by_hash, h, xa->nnames)) {
		free(d);
		gp_xa_fail(xa, -ENOMEM);
		return UINT32_MAX;
	}
	xa->names[xa->nnames] = d;
	return (uint32_t)xa->nnames++;
}

static struct gp_xa_nvtx *gp_xa_nvtx_of(struct gp_xa *xa, uint32_t tid, int create)
{
	uint64_t *v = gp_map_get(&xa->nvtx_by_tid, tid);
	if (v)
		return &xa->nvtx[*v];
	if (!create || XA_GROW(xa->nvtx, xa->nnvtx, xa->capnvtx) ||
	    gp_map_put(&xa->nvtx_by_tid, tid, xa->nnvtx)) {
		if (create)
			gp_xa_fail(xa, -ENOMEM);
		return NULL;
	}
	struct gp_xa_nvtx *s = &xa->nvtx[xa->nnvtx++];
	memset(s, 0, sizeof *s);
	return s;
}

static void gp_xa_marker(struct gp_xa *xa, const struct gp_an *an, const struct gp_rec_marker *m)
{
	if (m->kind != GP_MARK_PUSH && m->kind != GP_MARK_POP)
		return;
	struct gp_xa_nvtx *s = gp_xa_nvtx_of(xa, m->tid, 1);
	if (!s)
		return;
	if (m->kind == GP_MARK_PUSH) {
		if (XA_GROW(s->names, s->n, s->cap)) {
			gp_xa_fail(xa, -ENOMEM);
			return;
		}
		if (s->n == 0) {
			s->depth0_name = m->name;
			s->depth0_start = m->ts;
		}
		s->names[s->n++] = m->name;
		return;
	}
	if (s->n == 0)
		return; /* pop without push (range opened before capture) */
	if (--s->n == 0) {
		if (XA_GROW(xa->ranges, xa->nranges, xa->capranges)) {
			gp_xa_fail(xa, -ENOMEM);
			return;
		}
		const char *t = gp_an_string(an, s->depth0_name);
		xa->ranges[xa->nranges++] = (struct gp_xa_range){ .start = s->depth0_start, .end = m->ts,
								  .name = gp_xa_name(xa, t ? t : "(unnamed)") };
	}
}

static void gp_xa_graph(struct gp_xa *xa, const struct gp_rec_graph *g)
{
	uint64_t aux = (uint64_t)g->aux_hi << 32 | g->aux_lo;
	switch (g->kind) {
	case GP_GRAPH_CAPTURED: {
		if (XA_GROW(xa->caps, xa->ncaps, xa->capcaps)) {
			gp_xa_fail(xa, -ENOMEM);
			return;
		}
		struct gp_xa_nvtx *s = gp_xa_nvtx_of(xa, g->aux32, 0);
		struct gp_xa_cap *c = &xa->caps[xa->ncaps];
		*c = (struct gp_xa_cap){ .node = g->node_id, .graph = g->graph_id, .op = g->corr, .tid = g->aux32,
					 .ts = aux, .nvtx = s && s->n ? s->names[s->n - 1] : 0 };
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
	default: { /* GP_GRAPH_OP: ids of the kernel/copy record just before */
		uint64_t *v = gp_map_get(&xa->gk_last, g->corr);
		if (!v)
			break;
		struct gp_xa_gk *k = &xa->gks[*v];
		k->graph = g->graph_id;
		k->node = g->node_id;
		gp_map_del(&xa->gk_last, g->corr);
		break;
	}
	}
}

int gp_xa_record(struct gp_xa *xa, const struct gp_an *an, const union gp_rec *r)
{
	switch (r->type) {
	case GP_REC_MARKER:
		gp_xa_marker(xa, an, &r->marker);
		if (r->marker.ts > xa->last_ts)
			xa->last_ts = r->marker.ts;
		break;
	case GP_REC_GRAPH_NODE:
		gp_xa_graph(xa, &r->graph);
		break;
	case GP_REC_KERNEL:
		if (r->kernel.end > xa->last_ts)
			xa->last_ts = r->kernel.end;
		if (!(r->kernel.flags & GP_OPF_GRAPH))
			break;
		if (XA_GROW(xa->gks, xa->ngks, xa->capgks)) {
			gp_xa_fail(xa, -ENOMEM);
			break;
		}
		xa->gks[xa->ngks] = (struct gp_xa_gk){ .corr = r->kernel.corr, .name_str = r->kernel.name,
						       .gpu_start = r->kernel.start, .gpu_end = r->kernel.end };
		gp_xa_fail(xa, gp_map_put(&xa->gk_last, r->kernel.corr, xa->ngks));
		xa->ngks++;
		break;
	case GP_REC_MEMCPY:
	case GP_REC_MEMSET: {
		uint64_t e = r->copy.start + gp_copy_dur_ns(&r->copy);
		if (e > xa->last_ts)
			xa->last_ts = e;
		break;
	}
	case GP_REC_HOOK_API:
	case GP_REC_RUNTIME_API:
	case GP_REC_DRIVER_API: {
		const struct gp_rec_api *a = &r->api;
		uint64_t dur = gp_api_dur_ns(a);
		if (a->start + dur > xa->last_ts)
			xa->last_ts = a->start + dur;
		if (a->type == GP_REC_HOOK_API) {
			xa->hook_calls++;
			if (!xa->runtime_seen && a->start < xa->first_api)
				xa->first_api = a->start;
			break;
		}
		if (a->type != GP_REC_RUNTIME_API)
			break;
		if (!xa->runtime_seen) { /* CUPTI's runtime records win over hooks */
			xa->runtime_seen = 1;
			xa->first_api = UINT64_MAX;
		}
		if (a->start < xa->first_api)
			xa->first_api = a->start;
		unsigned cls = GP_API_CLASS(a->class_flags);
		if (cls == GP_API_GRAPH_LAUNCH) {
			xa->glaunch_calls++;
			xa->glaunch_ns += dur;
			gp_xa_fail(xa, gp_map_put(&xa->glaunch_dur, a->corr, dur));
		} else if (cls == GP_API_OTHER) {
			if (XA_GROW(xa->calls, xa->ncalls, xa->capcalls)) {
				gp_xa_fail(xa, -ENOMEM);
				break;
			}
			const char *n = gp_an_api_name(an, GP_REC_RUNTIME_API, a->api_id);
			xa->calls[xa->ncalls++] = (struct gp_xa_call){ .start = a->start, .dur = dur,
								       .name = gp_xa_name(xa, n ? n : "(runtime call)") };
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
	case GP_REC_WINDOW:
		if (r->mark.kind == GP_WIN_START && xa->win_iter < 0)
			xa->win_iter = (int64_t)r->mark.iter;
		break;
	case GP_REC_STATUS:
		if (r->status.kind == GP_STATUS_HOOK_COST)
			xa->hook_cost_ns = r->status.value;
		else if (r->status.kind == GP_STATUS_PROCESS_START && r->status.value > 0)
			xa->proc_start = r->status.value;
		break;
	default:
		break;
	}
	return xa->err;
}

void gp_xa_op(struct gp_xa *xa, const struct gp_an_op *op)
{
	if (XA_GROW(xa->ops, xa->nops, xa->capops)) {
		gp_xa_fail(xa, -ENOMEM);
		return;
	}
	struct gp_xa_op *o = &xa->ops[xa->nops++];
	memset(o, 0, sizeof *o);
	o->group = op->group;
	o->name = gp_xa_name(xa, op->name);
	o->iter = op->iter;
	o->api_start = op->api_start;
	o->api_end = op->api_end;
	o->gpu_start = op->gpu_start;
	o->gpu_end = op->gpu_end;
	o->t0 = op->has_api ? op->api_start : op->gpu_start;
	o->launch_ns = op->launch_ns;
	o->execute_ns = op->execute_ns;
	o->corr = op->corr;
	o->tid = op->tid;
	o->kind = op->kind;
	o->api_class = op->api_class;
	o->has_api = op->has_api;
	o->has_gpu = op->has_gpu;
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
	for (size_t i = 0; i < xa->ngks; i++) {
		const char *t = gp_an_string(an, xa->gks[i].name_str);
		xa->gks[i].name_str = gp_xa_name(xa, t ? t : "(unnamed kernel)");
	}
	xa->finished = 1;
	return xa->err;
}

const char *gp_xa_fmt_ns(double ns, char *buf, size_t n)
{
	double a = ns < 0 ? -ns : ns;
	if (a >= 1e9)
		snprintf(buf, n, "%.2fs", ns / 1e9);
	else if (a >= 1e6)
		snprintf(buf, n, "%.2fms", ns / 1e6);
	else if (a >= 1e3)
		snprintf(buf, n, "%.1fus", ns / 1e3);
	else
		snprintf(buf, n, "%.0fns", ns);
	return buf;
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
