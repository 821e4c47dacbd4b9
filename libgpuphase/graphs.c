/*
 * graphs.c — CUDA graph capture mapping: which operator each graph node was
 * captured from. Kernels replayed by cudaGraphLaunch carry only the ids of the
 * instantiated (cloned) graph and node; the operator that was captured — the
 * hooked launch call, with its thread, NVTX range and call stack — is known
 * only at capture time. So this module listens to two CUPTI resource
 * callbacks and writes GP_REC_GRAPH_NODE records (gp_format.h):
 *   GRAPHNODE_CREATED -> GP_GRAPH_CAPTURED: node, graph, the hook op id of the
 *                        enclosing hooked call (gp_tls.cur_op), tid, time;
 *   GRAPHNODE_CLONED  -> GP_GRAPH_CLONED: cloned node/graph -> captured ones.
 * The report follows kernel -> cloned node -> captured node -> hook op.
 *
 * Who calls it: cupti.c (gp_cupti_open resolves and enables, its subscriber
 * callback forwards). The callbacks run on the application thread inside the
 * capturing / instantiating CUDA call; they only read ids (CUPTI calls that
 * make no CUDA call) and push one record into this thread's ring.
 * Records are written whenever the library runs, inside the capture window or
 * not: graphs are usually captured once, before the window opens.
 */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include <cupti.h>

#include "gp_collector.h"
#include "gp_lib.h"

static CUptiResult (*gp_graphs_graph_id)(CUgraph, uint32_t *);
static CUptiResult (*gp_graphs_node_id)(CUgraphNode, uint64_t *);

int gp_graphs_open(void *cupti_lib)
{
	*(void **)&gp_graphs_graph_id = dlsym(cupti_lib, "cuptiGetGraphId");
	*(void **)&gp_graphs_node_id = dlsym(cupti_lib, "cuptiGetGraphNodeId");
	if (!gp_graphs_graph_id || !gp_graphs_node_id)
		(void)dlerror(); /* no error string of ours left for the program */
	return gp_graphs_graph_id && gp_graphs_node_id ? 0 : -ENOSYS;
}

void gp_graphs_callback(unsigned cbid, const void *data)
{
	const CUpti_ResourceData *rd = data;
	if (!rd || !rd->resourceDescriptor || !gp_graphs_node_id ||
	    __atomic_load_n(&gp_state, __ATOMIC_ACQUIRE) != GP_STATE_RUNNING)
		return;
	const CUpti_GraphData *gd = rd->resourceDescriptor;
	union gp_rec r;
	memset(&r, 0, sizeof r);
	r.graph.type = GP_REC_GRAPH_NODE;
	uint64_t aux = 0;
	if (gp_graphs_node_id(gd->node, &r.graph.node_id) != CUPTI_SUCCESS ||
	    gp_graphs_graph_id(gd->graph, &r.graph.graph_id) != CUPTI_SUCCESS)
		return;
	if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) {
		r.graph.kind = GP_GRAPH_CAPTURED;
		r.graph.corr = gp_tls.cur_op;
		r.graph.aux32 = gp_state_tid();
		aux = gp_now();
	} else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
		uint32_t og = 0;
		if (gp_graphs_node_id(gd->originalNode, &aux) != CUPTI_SUCCESS ||
		    (gd->originalGraph && gp_graphs_graph_id(gd->originalGraph, &og) != CUPTI_SUCCESS))
			return;
		r.graph.kind = GP_GRAPH_CLONED;
		r.graph.aux32 = og;
	} else {
		return;
	}
	r.graph.aux_lo = (uint32_t)aux;
	r.graph.aux_hi = (uint32_t)(aux >> 32);
	gp_collector_emit(&r, 1);
}
