/*
 * graphs.c — the "CUDA graphs" section: every kernel replayed by a graph
 * launch attributed to its graph and, through the nodes recorded at capture
 * time (GP_GRAPH_CAPTURED / GP_GRAPH_CLONED, libgpuphase/graphs.c), to the
 * operator that was captured: kernel name, innermost NVTX range and call site
 * of the hooked launch at capture time, capturing thread. The cudaGraphLaunch
 * host cost is counted once per launch (per distinct correlation id), never
 * per node. Called by gp_xa_print on the report thread after gp_xa_finish;
 * gp_xa_json_graphs writes the same table as JSON ("cuda_graphs",
 * docs/report-json.md).
 * docs/metrics.md "CUDA graphs" defines the numbers.
 */
#include <stdlib.h>
#include <string.h>

#include "xa.h"

struct gp_gnode {
	uint64_t node;          /* captured node id (or the replayed one)        */
	uint32_t name;          /* names index of the kernel's short name         */
	uint32_t cap;           /* index into xa->caps + 1, 0 = not captured     */
	uint64_t count, exec_ns;
};

struct gp_graph {
	uint32_t graph, exec_graph; /* captured graph id, (first) instantiated one */
	struct gp_gnode *nodes;
	size_t nnodes, cap;
	size_t nlaunches;
	uint64_t launch_ns, exec_ns, kernels;
};

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
 * number of graphs (0 when none, or on ENOMEM); *out is freed with
 * gp_graphs_free.
 */
static size_t gp_graphs_build(const struct gp_xa *xa, struct gp_graph **out)
{
	*out = NULL;
	struct gp_graph *gs = NULL;
	size_t ng = 0;
	for (size_t i = 0; i < xa->nrgraphs; i++) {
		const struct gp_xa_rgraph *rg = &xa->rgraphs[i];
		uint64_t *og = gp_map_get(&xa->clone_graph, rg->graph);
		struct gp_graph *g = gp_graphs_get(&gs, &ng, og ? (uint32_t)*og : rg->graph, rg->graph);
		if (!g)
			break;
		g->nlaunches += rg->launches.count;
		g->launch_ns += rg->launch_ns;
		g->exec_ns += rg->exec_ns;
		g->kernels += rg->kernels;
	}
	for (size_t i = 0; i < xa->nrnodes; i++) {
		const struct gp_xa_rnode *rn = &xa->rnodes[i];
		uint64_t *on = gp_map_get(&xa->clone_node, rn->node);
		uint64_t *og = gp_map_get(&xa->clone_graph, rn->graph);
		uint64_t node = on ? *on : rn->node;
		struct gp_graph *g = gp_graphs_get(&gs, &ng, og ? (uint32_t)*og : rn->graph, rn->graph);
		struct gp_gnode *nd = g ? gp_graphs_node(g, node) : NULL;
		if (!nd)
			break;
		if (!nd->count) {
			uint64_t *ci = gp_map_get(&xa->cap_by_node, node);
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

static void gp_graphs_free(struct gp_graph *gs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(gs[i].nodes);
	free(gs);
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

void gp_xa_print_graphs(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, int md)
{
	(void)rep;
	struct gp_graph *gs;
	size_t ng = gp_graphs_build(xa, &gs);
	if (!ng)
		return;
	char b1[32], b2[32], b3[32], b4[32];
	fprintf(f, md ? "\n## CUDA graphs\n\n" : "\nCUDA graphs\n");
	for (size_t i = 0; i < ng; i++) {
		struct gp_graph *g = &gs[i];
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
			const struct gp_xa_cap *c = nd->cap ? &xa->caps[nd->cap - 1] : NULL;
			const char *nv = c ? (c->nvtx ? xa->names[c->nvtx - 1] : "(no NVTX range)") : "(not captured in trace)";
			const char *cs = c && c->stack ? xa->names[c->stack - 1] : "-";
			char tid[16] = "-";
			if (c)
				snprintf(tid, sizeof tid, "%u", c->tid);
			const char *kn = nd->name < xa->nnames ? xa->names[nd->name] : "?";
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
	gp_graphs_free(gs, ng);
}

void gp_xa_json_graphs(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep)
{
	(void)rep;
	struct gp_graph *gs;
	size_t ng = gp_graphs_build(xa, &gs);
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
			const struct gp_xa_cap *c = nd->cap ? &xa->caps[nd->cap - 1] : NULL;
			fprintf(f, "%s\n      {\"node\": %llu, \"kernel\": ", j ? "," : "", (unsigned long long)nd->node);
			gp_fmt_json_str(f, nd->name < xa->nnames ? xa->names[nd->name] : "?");
			fprintf(f, ", \"captured\": %s, \"nvtx\": ", c ? "true" : "false");
			if (c && c->nvtx)
				gp_fmt_json_str(f, xa->names[c->nvtx - 1]);
			else
				fputs("null", f);
			fputs(", \"callsite\": ", f);
			if (c && c->stack)
				gp_fmt_json_str(f, xa->names[c->stack - 1]);
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
	gp_graphs_free(gs, ng);
}
