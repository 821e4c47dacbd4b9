/*
 * graphs.c — the "CUDA graphs" section: every kernel replayed by a graph
 * launch attributed to its graph and, through the nodes recorded at capture
 * time (GP_GRAPH_CAPTURED / GP_GRAPH_CLONED, libgpuphase/graphs.c), to the
 * operator that was captured: kernel name, innermost NVTX range and call site
 * of the hooked launch at capture time, capturing thread. The cudaGraphLaunch
 * host cost is counted once per launch (per distinct correlation id), never
 * per node. Called by gp_xa_print on the report thread after gp_xa_finish.
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
	uint32_t graph, exec_graph; /* captured graph id, instantiated graph id */
	struct gp_gnode *nodes;
	size_t nnodes, cap;
	struct gp_map launches;     /* corr -> 1                                  */
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
 * Build the per-graph tables. Returns the number of graphs (0 when the trace
 * has no graph kernels, or on ENOMEM) and the array in *out (caller frees
 * with gp_graphs_free).
 */
static size_t gp_graphs_build(const struct gp_xa *xa, struct gp_graph **out)
{
	*out = NULL;
	if (!xa->ngks)
		return 0;
	/* short names of replayed kernels: the core op with the same GPU start */
	struct gp_map by_start = { 0 };
	for (size_t i = 0; i < xa->nops; i++)
		if (xa->ops[i].has_gpu && xa->ops[i].kind == GP_OP_KERNEL)
			gp_map_put(&by_start, xa->ops[i].gpu_start == UINT64_MAX ? 0 : xa->ops[i].gpu_start, i);
	struct gp_graph *gs = NULL;
	size_t ng = 0;
	for (size_t i = 0; i < xa->ngks; i++) {
		const struct gp_xa_gk *k = &xa->gks[i];
		uint64_t *on = gp_map_get(&xa->clone_node, k->node);
		uint64_t *og = gp_map_get(&xa->clone_graph, k->graph);
		uint64_t node = on ? *on : k->node;
		uint32_t graph = og ? (uint32_t)*og : k->graph;
		struct gp_graph *g = gp_graphs_get(&gs, &ng, graph, k->graph);
		struct gp_gnode *nd = g ? gp_graphs_node(g, node) : NULL;
		if (!nd)
			break;
		if (!nd->count) {
			uint64_t *ci = gp_map_get(&xa->cap_by_node, node);
			nd->cap = ci ? (uint32_t)*ci + 1 : 0;
			uint64_t *oi = gp_map_get(&by_start, k->gpu_start);
			nd->name = oi && xa->ops[*oi].corr == k->corr ? xa->ops[*oi].name : k->name_str;
		}
		uint64_t ex = k->gpu_end > k->gpu_start ? k->gpu_end - k->gpu_start : 0;
		nd->count++;
		nd->exec_ns += ex;
		g->exec_ns += ex;
		g->kernels++;
		if (!gp_map_get(&g->launches, k->corr)) {
			gp_map_put(&g->launches, k->corr, 1);
			uint64_t *d = gp_map_get(&xa->glaunch_dur, k->corr);
			if (d)
				g->launch_ns += *d;
		}
	}
	gp_map_free(&by_start);
	for (size_t i = 0; i < ng; i++)
		qsort(gs[i].nodes, gs[i].nnodes, sizeof *gs[i].nodes, gp_graphs_cmp_node);
	*out = gs;
	return ng;
}

static void gp_graphs_free(struct gp_graph *gs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(gs[i].nodes);
		gp_map_free(&gs[i].launches);
	}
	free(gs);
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
		size_t nl = g->launches.count;
		fprintf(f, "%sgraph %u (instantiated as graph %u): %zu launches, %zu nodes, %llu kernels; "
			   "cudaGraphLaunch host time %s (%s per launch, charged once per launch); GPU time %s (%s per "
			   "launch)\n",
			md ? "- " : "  ", g->graph, g->exec_graph, nl, g->nnodes, (unsigned long long)g->kernels,
			gp_xa_fmt_ns((double)g->launch_ns, b1, sizeof b1),
			gp_xa_fmt_ns(nl ? (double)g->launch_ns / (double)nl : 0, b2, sizeof b2),
			gp_xa_fmt_ns((double)g->exec_ns, b3, sizeof b3),
			gp_xa_fmt_ns(nl ? (double)g->exec_ns / (double)nl : 0, b4, sizeof b4));
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
			gp_xa_fmt_ns((double)nd->exec_ns, b1, sizeof b1);
			gp_xa_fmt_ns(nd->count ? (double)nd->exec_ns / (double)nd->count : 0, b2, sizeof b2);
			if (md)
				fprintf(f, "| %llu | %s | %s | %s | %s | %llu | %s | %s |\n", (unsigned long long)nd->node,
					kn, nv, cs, tid, (unsigned long long)nd->count, b1, b2);
			else
				fprintf(f, "    %-8llu %-28s %-24s %-28s %8s %7llu %10s %9s\n",
					(unsigned long long)nd->node, kn, nv, cs, tid, (unsigned long long)nd->count, b1, b2);
		}
		if (md)
			fprintf(f, "\n");
	}
	gp_graphs_free(gs, ng);
}
