/*
 * graphs.c — the "CUDA graphs" analysis: every kernel replayed by a graph
 * launch attributed to its graph and, through the nodes recorded at capture
 * time (GP_GRAPH_CAPTURED / GP_GRAPH_CLONED, libgpuphase/graphs.c), to the
 * operator that was captured: kernel name, innermost NVTX range and call site
 * of the hooked launch at capture time, capturing thread. The cudaGraphLaunch
 * host cost is counted once per launch (per distinct correlation id), never
 * per node. Pass 2 keeps the captured and cloned nodes, pairs each replayed
 * kernel with its GP_GRAPH_OP record and sums it into its node and graph;
 * finish names nodes and call sites and builds the section's table (kept in
 * partial results: save/load); the section and its JSON array
 * ("cuda_graphs", docs/report-json.md) follow. A plug-in of registry.h;
 * report thread only. docs/metrics.md "CUDA graphs" defines the numbers.
 */
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "report/util/fmt.h"
#include "report/util/map.h"

/* A graph node captured from a stream (GP_GRAPH_CAPTURED). */
struct gp_graphs_cap {
	uint64_t node;
	uint32_t graph, op, tid;
	uint64_t ts;
	const char *nvtx;      /* innermost NVTX range at capture, NULL = none  */
	const char *callsite;  /* after finish: the launch's call site, or NULL */
};

/* A replayed (instantiated) node: sums of its kernels. */
struct gp_graphs_rnode {
	uint64_t node;         /* instantiated node id                          */
	uint32_t graph;        /* instantiated graph id                         */
	uint32_t name_id;      /* kernel name string id                         */
	const char *name;      /* after finish: its short name (trace/kernel_name.h)     */
	uint64_t count, exec_ns;
};

/* An instantiated graph: its launches (corr set) and sums. */
struct gp_graphs_rgraph {
	uint32_t graph;
	struct gp_map launches; /* corr -> 1 */
	uint64_t launch_ns, exec_ns, kernels;
};

/* A graph kernel waiting for its GP_GRAPH_OP record. */
struct gp_graphs_kernel {
	uint32_t corr, name;
	uint64_t start, end;
};

/* The section's table (finish builds it; text and json print it). */
struct gp_gnode {
	uint64_t node;          /* captured node id (or the replayed one)        */
	const char *name;       /* the kernel's short name                       */
	uint32_t cap;           /* index into gr->caps + 1, 0 = not captured     */
	uint64_t count, exec_ns;
};

struct gp_graph {
	uint32_t graph, exec_graph; /* captured graph id, (first) instantiated one */
	struct gp_gnode *nodes;
	size_t nnodes, cap;
	size_t nlaunches;
	uint64_t launch_ns, exec_ns, kernels;
};

struct gp_graphs {
	int err;
	struct gp_graphs_cap *caps;
	size_t ncaps, capcaps;
	struct gp_map cap_by_node;    /* captured node id -> index in caps      */
	struct gp_map clone_node;     /* cloned node id -> captured node id     */
	struct gp_map clone_graph;    /* cloned graph id -> captured graph id   */
	struct gp_graphs_kernel *gks; /* graph kernels awaiting their node record */
	size_t ngks, capgks;
	struct gp_map gk_by_corr;     /* corr -> index in gks                   */
	struct gp_graphs_rnode *rnodes;
	size_t nrnodes, caprnodes;
	struct gp_map rnode_by_id;    /* instantiated node id -> index          */
	struct gp_graphs_rgraph *rgraphs;
	size_t nrgraphs, caprgraphs;
	struct gp_map rgraph_by_id;   /* instantiated graph id -> index         */
	struct gp_map glaunch_dur;    /* graph-launch API corr -> duration ns   */
	struct gp_map op_stack;       /* captured hook op id -> stack id        */
	struct gp_graph *tab;         /* after finish: per captured graph        */
	size_t ntab;
};

static void *gp_graphs_create(const struct gp_analysis_env *env)
{
	(void)env;
	return calloc(1, sizeof(struct gp_graphs));
}

static void gp_graphs_destroy(void *p)
{
	struct gp_graphs *gr = p;
	free(gr->caps);
	gp_map_free(&gr->cap_by_node);
	gp_map_free(&gr->clone_node);
	gp_map_free(&gr->clone_graph);
	free(gr->gks);
	gp_map_free(&gr->gk_by_corr);
	free(gr->rnodes);
	gp_map_free(&gr->rnode_by_id);
	for (size_t i = 0; i < gr->nrgraphs; i++)
		gp_map_free(&gr->rgraphs[i].launches);
	free(gr->rgraphs);
	gp_map_free(&gr->rgraph_by_id);
	gp_map_free(&gr->glaunch_dur);
	gp_map_free(&gr->op_stack);
	for (size_t i = 0; i < gr->ntab; i++)
		free(gr->tab[i].nodes);
	free(gr->tab);
	free(gr);
}

static void gp_graphs_fail(struct gp_graphs *gr, int rc)
{
	gp_analysis_fail(&gr->err, rc);
}

/* ---- pass 2 ---------------------------------------------------------------- */

static void gp_graphs_captured(struct gp_graphs *gr, const struct gp_an *an, const struct gp_an_rec *v)
{
	if (GP_AN_GROW(gr->caps, gr->ncaps, gr->capcaps))
		return gp_graphs_fail(gr, -ENOMEM);
	gr->caps[gr->ncaps] = (struct gp_graphs_cap){ .node = v->graph.node, .graph = v->graph.graph,
						      .op = v->graph.corr, .tid = v->graph.tid, .ts = v->graph.ts,
						      .nvtx = gp_strtab_text(gp_an_strings(an), v->graph.nvtx) };
	gp_graphs_fail(gr, gp_map_put(&gr->cap_by_node, v->graph.node, gr->ncaps));
	if (v->graph.corr)
		gp_graphs_fail(gr, gp_map_put(&gr->op_stack, v->graph.corr, 0));
	gr->ncaps++;
}

/* The replayed node and instantiated graph of an op record, created on
 * first sight (NULL on ENOMEM). */
static struct gp_graphs_rnode *gp_graphs_rnode(struct gp_graphs *gr, uint64_t node, uint32_t graph, uint32_t name)
{
	uint64_t *ni = gp_map_get(&gr->rnode_by_id, node);
	if (ni)
		return &gr->rnodes[*ni];
	if (GP_AN_GROW(gr->rnodes, gr->nrnodes, gr->caprnodes))
		return gp_graphs_fail(gr, -ENOMEM), NULL;
	gr->rnodes[gr->nrnodes] = (struct gp_graphs_rnode){ .node = node, .graph = graph, .name_id = name };
	gp_graphs_fail(gr, gp_map_put(&gr->rnode_by_id, node, gr->nrnodes));
	ni = gp_map_get(&gr->rnode_by_id, node);
	gr->nrnodes++;
	return ni ? &gr->rnodes[*ni] : NULL;
}

static struct gp_graphs_rgraph *gp_graphs_rgraph(struct gp_graphs *gr, uint32_t graph)
{
	uint64_t *gi = gp_map_get(&gr->rgraph_by_id, graph);
	if (gi)
		return &gr->rgraphs[*gi];
	if (GP_AN_GROW(gr->rgraphs, gr->nrgraphs, gr->caprgraphs))
		return gp_graphs_fail(gr, -ENOMEM), NULL;
	memset(&gr->rgraphs[gr->nrgraphs], 0, sizeof gr->rgraphs[0]);
	gr->rgraphs[gr->nrgraphs].graph = graph;
	gp_graphs_fail(gr, gp_map_put(&gr->rgraph_by_id, graph, gr->nrgraphs));
	gi = gp_map_get(&gr->rgraph_by_id, graph);
	gr->nrgraphs++;
	return gi ? &gr->rgraphs[*gi] : NULL;
}

/* GP_GRAPH_OP: the ids of the graph kernel just before. */
static void gp_graphs_op_record(struct gp_graphs *gr, const struct gp_an_rec *v)
{
	uint64_t *p = gp_map_get(&gr->gk_by_corr, v->graph.corr);
	if (!p)
		return;
	struct gp_graphs_kernel k = gr->gks[*p];
	/* free the slot: move the last pending kernel into it */
	size_t i = (size_t)*p;
	gp_map_del(&gr->gk_by_corr, v->graph.corr);
	if (i != gr->ngks - 1) {
		gr->gks[i] = gr->gks[gr->ngks - 1];
		gp_graphs_fail(gr, gp_map_put(&gr->gk_by_corr, gr->gks[i].corr, i));
	}
	gr->ngks--;
	struct gp_graphs_rnode *rn = gp_graphs_rnode(gr, v->graph.node, v->graph.graph, k.name);
	if (!rn)
		return;
	uint64_t ex = k.end > k.start ? k.end - k.start : 0;
	rn->count++;
	rn->exec_ns += ex;
	struct gp_graphs_rgraph *rg = gp_graphs_rgraph(gr, v->graph.graph);
	if (!rg)
		return;
	rg->exec_ns += ex;
	rg->kernels++;
	if (!gp_map_get(&rg->launches, k.corr))
		gp_graphs_fail(gr, gp_map_put(&rg->launches, k.corr, 1));
}

/* A kernel replayed by a graph launch: it waits for its GP_GRAPH_OP. */
static void gp_graphs_kernel(struct gp_graphs *gr, const struct gp_an_gpu *k)
{
	if (GP_AN_GROW(gr->gks, gr->ngks, gr->capgks))
		return gp_graphs_fail(gr, -ENOMEM);
	uint64_t *old = gp_map_get(&gr->gk_by_corr, k->key);
	size_t i = old ? (size_t)*old : gr->ngks++; /* an unpaired one is replaced */
	gr->gks[i] = (struct gp_graphs_kernel){ k->key, k->name, k->start, k->end };
	if (!old)
		gp_graphs_fail(gr, gp_map_put(&gr->gk_by_corr, k->key, i));
}

static int gp_graphs_record(void *p, const struct gp_an *an, const struct gp_an_rec *v)
{
	struct gp_graphs *gr = p;
	switch (v->type) {
	case GP_REC_GRAPH_NODE:
		if (v->graph.kind == GP_GRAPH_CAPTURED) {
			gp_graphs_captured(gr, an, v);
		} else if (v->graph.kind == GP_GRAPH_CLONED) {
			gp_graphs_fail(gr, gp_map_put(&gr->clone_node, v->graph.node, v->graph.from_node));
			gp_graphs_fail(gr, gp_map_put(&gr->clone_graph, v->graph.graph, v->graph.from_graph));
		} else {
			gp_graphs_op_record(gr, v);
		}
		break;
	case GP_REC_KERNEL:
		if (v->gpu.graph)
			gp_graphs_kernel(gr, &v->gpu);
		break;
	case GP_REC_RUNTIME_API:
		if (v->api.api_class == GP_API_GRAPH_LAUNCH)
			gp_graphs_fail(gr, gp_map_put(&gr->glaunch_dur, v->api.corr, v->api.end - v->api.start));
		break;
	case GP_REC_STACK_REF: {
		uint64_t *s = gp_map_get(&gr->op_stack, v->stack_ref.op);
		if (s)
			*s = v->stack_ref.stack;
		break;
	}
	default:
		break;
	}
	return gr->err;
}

static size_t gp_graphs_build(const struct gp_graphs *gr, struct gp_graph **out);

/* Names of what the section prints: each captured launch's call site, each
 * replayed node's kernel; each instantiated graph's host time (each launch
 * once). The texts live in the trace's string table. */
static int gp_graphs_finish(void *p, const struct gp_an *an, const struct gp_rep *rep)
{
	struct gp_graphs *gr = p;
	struct gp_strtab *strings = gp_an_strings(an);
	(void)rep;
	for (size_t i = 0; i < gr->ncaps; i++) {
		struct gp_graphs_cap *c = &gr->caps[i];
		uint64_t *st = c->op ? gp_map_get(&gr->op_stack, c->op) : NULL;
		char buf[32];
		const char *s = st && *st ? gp_an_callsite(an, (uint32_t)*st, buf, sizeof buf) : NULL;
		uint32_t k = GP_STR_NONE;
		if (s == buf) /* an unsymbolised pc: keep its text */
			gp_graphs_fail(gr, gp_strtab_intern(strings, buf, strlen(buf), &k));
		c->callsite = s == buf ? gp_strtab_text(strings, k) : s;
	}
	for (size_t i = 0; i < gr->nrnodes; i++) {
		uint32_t c = gp_an_canonical(an, gr->rnodes[i].name_id);
		gr->rnodes[i].name = c == GP_STR_NONE ? "(unnamed kernel)" : gp_strtab_short(strings, c, &gr->err);
	}
	for (size_t i = 0; i < gr->nrgraphs; i++) {
		struct gp_graphs_rgraph *g = &gr->rgraphs[i];
		size_t pos = 0;
		uint64_t corr, one;
		while (gp_map_next(&g->launches, &pos, &corr, &one)) {
			uint64_t *d = gp_map_get(&gr->glaunch_dur, corr);
			if (d)
				g->launch_ns += *d;
		}
	}
	gr->ntab = gp_graphs_build(gr, &gr->tab);
	return gr->err;
}

/* ---- the section ------------------------------------------------------------ */

static struct gp_graph *gp_graphs_get(struct gp_graph **gs, size_t *n, uint32_t graph, uint32_t exec_graph)
{
	for (size_t i = 0; i < *n; i++)
		if ((*gs)[i].graph == graph)
			return &(*gs)[i];
	struct gp_graph *v = realloc(*gs, (*n + 1) * sizeof *v);
	if (!v)
		return NULL;
	*gs = v;
	struct gp_graph *g = &v[(*n)++];
	memset(g, 0, sizeof *g);
	g->graph = graph;
	g->exec_graph = exec_graph;
	return g;
}

static struct gp_gnode *gp_graphs_node(struct gp_graph *g, uint64_t node)
{
	for (size_t i = 0; i < g->nnodes; i++)
		if (g->nodes[i].node == node)
			return &g->nodes[i];
	if (g->nnodes == g->cap) {
		size_t c = g->cap ? g->cap * 2 : 8;
		struct gp_gnode *v = realloc(g->nodes, c * sizeof *v);
		if (!v)
			return NULL;
		g->nodes = v;
		g->cap = c;
	}
	struct gp_gnode *nd = &g->nodes[g->nnodes++];
	memset(nd, 0, sizeof *nd);
	nd->node = node;
	return nd;
}

static int gp_graphs_cmp_node(const void *a, const void *b)
{
	const struct gp_gnode *x = a, *y = b;
	return x->node < y->node ? -1 : x->node > y->node;
}

/*
 * Per captured graph: its instantiated graphs' launches and sums, and per
 * captured node the sums of the replayed nodes cloned from it. Returns the
 * number of graphs (0 when none; those built so far on ENOMEM); finish
 * keeps it in gr->tab, which gp_graphs_destroy frees.
 */
static size_t gp_graphs_build(const struct gp_graphs *gr, struct gp_graph **out)
{
	*out = NULL;
	struct gp_graph *gs = NULL;
	size_t ng = 0;
	for (size_t i = 0; i < gr->nrgraphs; i++) {
		const struct gp_graphs_rgraph *rg = &gr->rgraphs[i];
		uint64_t *og = gp_map_get(&gr->clone_graph, rg->graph);
		struct gp_graph *g = gp_graphs_get(&gs, &ng, og ? (uint32_t)*og : rg->graph, rg->graph);
		if (!g)
			break;
		g->nlaunches += rg->launches.count;
		g->launch_ns += rg->launch_ns;
		g->exec_ns += rg->exec_ns;
		g->kernels += rg->kernels;
	}
	for (size_t i = 0; i < gr->nrnodes; i++) {
		const struct gp_graphs_rnode *rn = &gr->rnodes[i];
		uint64_t *on = gp_map_get(&gr->clone_node, rn->node);
		uint64_t *og = gp_map_get(&gr->clone_graph, rn->graph);
		uint64_t node = on ? *on : rn->node;
		struct gp_graph *g = gp_graphs_get(&gs, &ng, og ? (uint32_t)*og : rn->graph, rn->graph);
		struct gp_gnode *nd = g ? gp_graphs_node(g, node) : NULL;
		if (!nd)
			break;
		if (!nd->count) {
			uint64_t *ci = gp_map_get(&gr->cap_by_node, node);
			nd->cap = ci ? (uint32_t)*ci + 1 : 0;
			nd->name = rn->name;
		}
		nd->count += rn->count;
		nd->exec_ns += rn->exec_ns;
	}
	for (size_t i = 0; i < ng; i++)
		if (gs[i].nnodes)
			qsort(gs[i].nodes, gs[i].nnodes, sizeof *gs[i].nodes, gp_graphs_cmp_node);
	*out = gs;
	return ng;
}

/* A table cell: s cut to w characters with "..." when longer; a call site
 * "sym+off (/dir/module)" shows the module's base name only. */
static const char *gp_graphs_cell(const char *s, size_t w, char *buf, size_t n)
{
	const char *p = strstr(s, " (/"), *slash = p ? strrchr(p, '/') : NULL;
	char tmp[256];
	if (p && slash && strchr(slash, ')')) {
		snprintf(tmp, sizeof tmp, "%.*s (%s", (int)(p - s), s, slash + 1);
		s = tmp;
	}
	return gp_fmt_cut(s, w, buf, n);
}

static void gp_graphs_text(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *style)
{
	const struct gp_graphs *gr = p;
	int md = style->markdown;
	(void)rep;
	const struct gp_graph *gs = gr->tab;
	size_t ng = gr->ntab;
	if (!ng)
		return;
	char b1[32], b2[32], b3[32], b4[32];
	fprintf(f, md ? "\n## CUDA graphs\n\n" : "\nCUDA graphs\n");
	for (size_t i = 0; i < ng; i++) {
		const struct gp_graph *g = &gs[i];
		size_t nl = g->nlaunches;
		/* two lines, so that the section reads in 160 columns */
		fprintf(f, "%sgraph %u (instantiated as graph %u): %zu launches, %zu nodes, %llu kernels;%s"
			   "cudaGraphLaunch host time %s (%s per launch, charged once per launch); GPU time %s (%s per "
			   "launch)\n",
			md ? "- " : "  ", g->graph, g->exec_graph, nl, g->nnodes, (unsigned long long)g->kernels,
			md ? " " : "\n    ",
			gp_fmt_ns((double)g->launch_ns, b1, sizeof b1),
			gp_fmt_ns(nl ? (double)g->launch_ns / (double)nl : 0, b2, sizeof b2),
			gp_fmt_ns((double)g->exec_ns, b3, sizeof b3),
			gp_fmt_ns(nl ? (double)g->exec_ns / (double)nl : 0, b4, sizeof b4));
		if (md)
			fprintf(f, "\n| node | kernel | captured under (NVTX) | call site | thread | count | execute | mean |\n"
				   "|---:|---|---|---|---:|---:|---:|---:|\n");
		else
			fprintf(f, "    %-8s %-28s %-24s %-28s %8s %7s %10s %9s\n", "node", "kernel",
				"captured under (NVTX)", "call site", "thread", "count", "execute", "mean");
		for (size_t j = 0; j < g->nnodes; j++) {
			const struct gp_gnode *nd = &g->nodes[j];
			const struct gp_graphs_cap *c = nd->cap ? &gr->caps[nd->cap - 1] : NULL;
			const char *nv = c ? (c->nvtx ? c->nvtx : "(no NVTX range)") : "(not captured in trace)";
			const char *cs = c && c->callsite ? c->callsite : "-";
			char tid[16] = "-";
			if (c)
				snprintf(tid, sizeof tid, "%u", c->tid);
			const char *kn = nd->name ? nd->name : "?";
			gp_fmt_ns((double)nd->exec_ns, b1, sizeof b1);
			gp_fmt_ns(nd->count ? (double)nd->exec_ns / (double)nd->count : 0, b2, sizeof b2);
			if (md)
				fprintf(f, "| %llu | %s | %s | %s | %s | %llu | %s | %s |\n", (unsigned long long)nd->node,
					kn, nv, cs, tid, (unsigned long long)nd->count, b1, b2);
			else {
				char c1[64], c2[64], c3[64];
				fprintf(f, "    %-8llu %-28s %-24s %-28s %8s %7llu %10s %9s\n", (unsigned long long)nd->node,
					gp_graphs_cell(kn, 28, c1, sizeof c1), gp_graphs_cell(nv, 24, c2, sizeof c2),
					gp_graphs_cell(cs, 28, c3, sizeof c3), tid, (unsigned long long)nd->count, b1, b2);
			}
		}
		if (md)
			fprintf(f, "\n");
	}
}

static void gp_graphs_json(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *style)
{
	const struct gp_graphs *gr = p;
	(void)style;
	(void)rep;
	const struct gp_graph *gs = gr->tab;
	size_t ng = gr->ntab;
	fputc('[', f);
	for (size_t i = 0; i < ng; i++) {
		const struct gp_graph *g = &gs[i];
		size_t nl = g->nlaunches;
		fprintf(f, "%s\n    {\"graph\": %u, \"exec_graph\": %u, \"launches\": %zu, \"nodes\": %zu, \"kernels\": %llu, "
			   "\"launch_host_ns\": %llu, \"launch_host_per_launch_ns\": %llu, \"gpu_ns\": %llu, "
			   "\"gpu_per_launch_ns\": %llu, \"node_items\": [",
			i ? "," : "", g->graph, g->exec_graph, nl, g->nnodes, (unsigned long long)g->kernels,
			(unsigned long long)g->launch_ns, (unsigned long long)(nl ? g->launch_ns / nl : 0),
			(unsigned long long)g->exec_ns, (unsigned long long)(nl ? g->exec_ns / nl : 0));
		for (size_t j = 0; j < g->nnodes; j++) {
			const struct gp_gnode *nd = &g->nodes[j];
			const struct gp_graphs_cap *c = nd->cap ? &gr->caps[nd->cap - 1] : NULL;
			fprintf(f, "%s\n      {\"node\": %llu, \"kernel\": ", j ? "," : "", (unsigned long long)nd->node);
			gp_fmt_json_str(f, nd->name ? nd->name : "?");
			fprintf(f, ", \"captured\": %s, \"nvtx\": ", c ? "true" : "false");
			if (c && c->nvtx)
				gp_fmt_json_str(f, c->nvtx);
			else
				fputs("null", f);
			fputs(", \"callsite\": ", f);
			if (c && c->callsite)
				gp_fmt_json_str(f, c->callsite);
			else
				fputs("null", f);
			fputs(", \"thread\": ", f);
			if (c)
				fprintf(f, "%u", c->tid);
			else
				fputs("null", f);
			fprintf(f, ", \"count\": %llu, \"execute_ns\": %llu}", (unsigned long long)nd->count,
				(unsigned long long)nd->exec_ns);
		}
		fputs("]}", f);
	}
	fputc(']', f);
}

/* Partial results: the section's table, with each captured node's capture
 * facts (NVTX range, call site, thread). */
static int gp_graphs_save(const void *p, struct gp_pw *w)
{
	const struct gp_graphs *gr = p;
	gp_pw_u64(w, gr->ntab);
	for (size_t i = 0; i < gr->ntab; i++) {
		const struct gp_graph *g = &gr->tab[i];
		gp_pw_u32(w, g->graph);
		gp_pw_u32(w, g->exec_graph);
		gp_pw_u64(w, g->nlaunches);
		gp_pw_u64(w, g->launch_ns);
		gp_pw_u64(w, g->exec_ns);
		gp_pw_u64(w, g->kernels);
		gp_pw_u64(w, g->nnodes);
		for (size_t j = 0; j < g->nnodes; j++) {
			const struct gp_gnode *nd = &g->nodes[j];
			const struct gp_graphs_cap *c = nd->cap ? &gr->caps[nd->cap - 1] : NULL;
			gp_pw_u64(w, nd->node);
			gp_pw_str(w, nd->name);
			gp_pw_u64(w, nd->count);
			gp_pw_u64(w, nd->exec_ns);
			gp_pw_u8(w, c != NULL);
			if (c) {
				gp_pw_str(w, c->nvtx);
				gp_pw_str(w, c->callsite);
				gp_pw_u32(w, c->tid);
			}
		}
	}
	return w->err;
}

static int gp_graphs_load(void *p, struct gp_pr *r, struct gp_strtab *strings)
{
	struct gp_graphs *gr = p;
	size_t ng = gp_pr_count(r, 44, UINT32_MAX);
	if (ng && !r->err && !(gr->tab = calloc(ng, sizeof *gr->tab)))
		gp_pr_oom(r);
	for (size_t i = 0; i < ng && !r->err; i++) {
		struct gp_graph *g = &gr->tab[i];
		gr->ntab = i + 1;
		g->graph = gp_pr_u32(r);
		g->exec_graph = gp_pr_u32(r);
		uint64_t nl = gp_pr_u64(r);
		g->nlaunches = nl > SIZE_MAX ? SIZE_MAX : (size_t)nl;
		g->launch_ns = gp_pr_u64(r);
		g->exec_ns = gp_pr_u64(r);
		g->kernels = gp_pr_u64(r);
		size_t nn = gp_pr_count(r, 29, UINT32_MAX);
		if (nn && !r->err && !(g->nodes = calloc(nn, sizeof *g->nodes)))
			gp_pr_oom(r);
		for (size_t j = 0; j < nn && !r->err; j++) {
			struct gp_gnode *nd = &g->nodes[j];
			g->nnodes = g->cap = j + 1;
			nd->node = gp_pr_u64(r);
			nd->name = gp_pr_intern(r, strings);
			nd->count = gp_pr_u64(r);
			nd->exec_ns = gp_pr_u64(r);
			if (!gp_pr_bool(r) || r->err)
				continue;
			if (gr->ncaps >= UINT32_MAX - 1 || GP_AN_GROW(gr->caps, gr->ncaps, gr->capcaps)) {
				gp_pr_oom(r);
				break;
			}
			struct gp_graphs_cap *c = &gr->caps[gr->ncaps];
			memset(c, 0, sizeof *c);
			c->nvtx = gp_pr_intern(r, strings);
			c->callsite = gp_pr_intern(r, strings);
			c->tid = gp_pr_u32(r);
			nd->cap = (uint32_t)++gr->ncaps;
		}
	}
	return r->err;
}

const struct gp_analysis gp_analysis_graphs = {
	.name = "cuda_graphs",
	.title = "CUDA graphs",
	.types = { 0, GP_AN_TYPE(GP_REC_GRAPH_NODE) | GP_AN_TYPE(GP_REC_KERNEL) | GP_AN_TYPE(GP_REC_RUNTIME_API) |
			      GP_AN_TYPE(GP_REC_STACK_REF) },
	.api_classes = GP_AN_CLASS(GP_API_GRAPH_LAUNCH),
	.create = gp_graphs_create,
	.record = gp_graphs_record,
	.finish = gp_graphs_finish,
	.text = gp_graphs_text,
	.json = gp_graphs_json,
	.destroy = gp_graphs_destroy,
	.save = gp_graphs_save,
	.load = gp_graphs_load,
};
