/*
 * sim_graph_build.c — CUDA graphs built by hand: cudaGraphCreate, the
 * kernel / memcpy (3D-params and 1D) / memset / host / empty / event-record /
 * event-wait nodes, cudaGraphAddDependencies, cudaGraphClone, the queries
 * (cudaGraphGetNodes, GetRootNodes, GetEdges, NodeGetType,
 * NodeGetDependencies, KernelNodeGetParams), parameter updates
 * (KernelNodeSetParams, ExecKernelNodeSetParams), cudaGraphExecUpdate,
 * cudaGraphUpload, and cudaStreamGetCaptureInfo.
 *
 * Nodes and edges live in sim_graph.c's objects (sim_graph.h); instantiation
 * and launch are sim_graph.c's, the same as for captured graphs, so a hand-
 * built graph's nodes run in dependency order and its parallel branches
 * overlap on the timeline. CUPTI sees what it sees on a GPU: each node added
 * is a CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED callback (with its node type),
 * each clone a GRAPH_CLONED one.
 *
 * Limits (docs/simcuda.md "Runtime API coverage"): memcpy nodes copy linear
 * memory only (no CUDA arrays: cudaErrorNotSupported); a kernel node keeps
 * the caller's kernelParams array (simcuda cannot copy arguments it does not
 * know the size of), so the array must outlive the graph for host twins to
 * run; cudaGraphExecUpdate accepts a graph of the same topology and node
 * types and copies its nodes' parameters into the executable.
 *
 * Threads: application threads, any number; graph objects are read and
 * written under g_dev.mx (sim_graph.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_graph.h"

static cudaError_t sim_gb_errno(int rc)
{
	return rc == -ENOMEM ? cudaErrorMemoryAllocation : cudaErrorInvalidValue;
}

/* Add a node made from proto to graph after deps; the frame of every cudaGraphAdd*Node. */
static cudaError_t sim_gb_add(const char *nm, CUpti_CallbackId cbid, CUpti_CallbackId drv, cudaGraphNode_t *out,
			      cudaGraph_t graph, const cudaGraphNode_t *deps, size_t ndeps, struct sim_gnode *proto,
			      cudaError_t pre)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, drv);
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	struct sim_graph *g = (struct sim_graph *)(void *)graph;
	if (pre == cudaSuccess && (!out || !g || (ndeps && !deps)))
		pre = cudaErrorInvalidValue;
	if (pre != cudaSuccess)
		return sim_call_exit(&c, pre, 0);
	struct sim_gnode *n = NULL;
	pthread_mutex_lock(&g_dev.mx);
	int rc = sim_graph_node_add(g, proto, (struct sim_gnode *const *)(const void *)deps, ndeps, &n);
	pthread_mutex_unlock(&g_dev.mx);
	if (rc)
		return sim_call_exit(&c, sim_gb_errno(rc), 0);
	*out = (cudaGraphNode_t)(void *)n;
	CUpti_GraphData gd;
	memset(&gd, 0, sizeof gd);
	gd.graph = (CUgraph)(void *)g;
	gd.node = (CUgraphNode)(void *)n;
	gd.nodeType = sim_graph_cu_type(n->type);
	sim_graph_event(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &gd);
	return sim_call_exit(&c, cudaSuccess, 0);
}

SIM_EXPORT cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
	struct sim_call c;
	sim_call_enter(&c, "cudaGraphCreate", SIM_RT(cudaGraphCreate_v10000), SIM_DRV(cuGraphCreate));
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	if (!pGraph || flags != 0)
		return sim_call_exit(&c, cudaErrorInvalidValue, 0);
	struct sim_graph *g = sim_graph_new(0);
	if (!g)
		return sim_call_exit(&c, cudaErrorMemoryAllocation, 0);
	*pGraph = (cudaGraph_t)(void *)g;
	CUpti_GraphData gd;
	memset(&gd, 0, sizeof gd);
	gd.graph = (CUgraph)(void *)g;
	sim_graph_event(CUPTI_CBID_RESOURCE_GRAPH_CREATED, &gd);
	return sim_call_exit(&c, cudaSuccess, 0);
}

/* A kernel node's fields from its parameters; cudaSuccess or why not. */
static cudaError_t sim_gb_kernel(struct sim_gnode *n, const struct cudaKernelNodeParams *p)
{
	if (!p)
		return cudaErrorInvalidValue;
	struct sim_func *f = sim_register_find(p->func);
	if (!f)
		return cudaErrorInvalidDeviceFunction;
	if (!p->gridDim.x || !p->gridDim.y || !p->gridDim.z || !p->blockDim.x || !p->blockDim.y || !p->blockDim.z)
		return cudaErrorInvalidConfiguration;
	n->type = cudaGraphNodeTypeKernel;
	n->f = f;
	n->grid = p->gridDim;
	n->block = p->blockDim;
	n->shmem = p->sharedMemBytes;
	n->args = p->kernelParams;
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
					      const cudaGraphNode_t *pDependencies, size_t numDependencies,
					      const struct cudaKernelNodeParams *pNodeParams)
{
	struct sim_gnode n = {0};
	cudaError_t pre = sim_gb_kernel(&n, pNodeParams);
	return sim_gb_add("cudaGraphAddKernelNode", SIM_RT(cudaGraphAddKernelNode_v10000),
			  SIM_DRV(cuGraphAddKernelNode_v2), pGraphNode, graph, pDependencies, numDependencies, &n, pre);
}

/* A 3D copy of linear memory as rows: extent.height * depth rows of width bytes. */
static cudaError_t sim_gb_memcpy3d(struct sim_gxfer *x, const struct cudaMemcpy3DParms *p)
{
	if (!p)
		return cudaErrorInvalidValue;
	if (p->srcArray || p->dstArray)
		return cudaErrorNotSupported; /* CUDA arrays are not simulated */
	if (!p->srcPtr.ptr || !p->dstPtr.ptr)
		return cudaErrorInvalidValue;
	size_t rows = p->extent.height * p->extent.depth;
	size_t spitch = p->srcPtr.pitch ? p->srcPtr.pitch : p->extent.width;
	size_t dpitch = p->dstPtr.pitch ? p->dstPtr.pitch : p->extent.width;
	if (rows > 1 && (spitch < p->extent.width || dpitch < p->extent.width))
		return cudaErrorInvalidValue;
	size_t soff = (p->srcPos.z * p->srcPtr.ysize + p->srcPos.y) * spitch + p->srcPos.x;
	size_t doff = (p->dstPos.z * p->dstPtr.ysize + p->dstPos.y) * dpitch + p->dstPos.x;
	memset(x, 0, sizeof *x);
	x->src = (const char *)p->srcPtr.ptr + soff;
	x->dst = (char *)p->dstPtr.ptr + doff;
	x->spitch = spitch;
	x->dpitch = dpitch;
	x->width = p->extent.width;
	x->height = rows;
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
					      const cudaGraphNode_t *pDependencies, size_t numDependencies,
					      const struct cudaMemcpy3DParms *pCopyParams)
{
	struct sim_gnode n = {.type = cudaGraphNodeTypeMemcpy};
	cudaError_t pre = sim_gb_memcpy3d(&n.x, pCopyParams);
	return sim_gb_add("cudaGraphAddMemcpyNode", SIM_RT(cudaGraphAddMemcpyNode_v10000),
			  SIM_DRV(cuGraphAddMemcpyNode), pGraphNode, graph, pDependencies, numDependencies, &n, pre);
}

SIM_EXPORT cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
						const cudaGraphNode_t *pDependencies, size_t numDependencies, void *dst,
						const void *src, size_t count, enum cudaMemcpyKind kind)
{
	struct sim_gnode n = {.type = cudaGraphNodeTypeMemcpy,
			      .x = {.dst = dst, .src = src, .width = count, .height = 1}};
	cudaError_t pre = !dst || !src || (int)kind < 0 || kind > cudaMemcpyDefault ? cudaErrorInvalidValue
										   : cudaSuccess;
	return sim_gb_add("cudaGraphAddMemcpyNode1D", SIM_RT(cudaGraphAddMemcpyNode1D_v11010),
			  SIM_DRV(cuGraphAddMemcpyNode), pGraphNode, graph, pDependencies, numDependencies, &n, pre);
}

SIM_EXPORT cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
					      const cudaGraphNode_t *pDependencies, size_t numDependencies,
					      const struct cudaMemsetParams *p)
{
	struct sim_gnode n = {.type = cudaGraphNodeTypeMemset};
	cudaError_t pre = cudaSuccess;
	if (!p || !p->dst || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) ||
	    (p->height > 1 && p->pitch < p->width * p->elementSize))
		pre = cudaErrorInvalidValue;
	else
		n.x = (struct sim_gxfer){.dst = p->dst, .dpitch = p->pitch, .width = p->width,
					 .height = p->height ? p->height : 1, .is_set = 1, .value = p->value,
					 .elem = p->elementSize};
	return sim_gb_add("cudaGraphAddMemsetNode", SIM_RT(cudaGraphAddMemsetNode_v10000),
			  SIM_DRV(cuGraphAddMemsetNode), pGraphNode, graph, pDependencies, numDependencies, &n, pre);
}

SIM_EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
					    const cudaGraphNode_t *pDependencies, size_t numDependencies,
					    const struct cudaHostNodeParams *p)
{
	struct sim_gnode n = {.type = cudaGraphNodeTypeHost};
	cudaError_t pre = !p || !p->fn ? cudaErrorInvalidValue : cudaSuccess;
	if (pre == cudaSuccess) {
		n.fn = p->fn;
		n.user = p->userData;
	}
	return sim_gb_add("cudaGraphAddHostNode", SIM_RT(cudaGraphAddHostNode_v10000), SIM_DRV(cuGraphAddHostNode),
			  pGraphNode, graph, pDependencies, numDependencies, &n, pre);
}

SIM_EXPORT cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
					     const cudaGraphNode_t *pDependencies, size_t numDependencies)
{
	struct sim_gnode n = {.type = cudaGraphNodeTypeEmpty};
	return sim_gb_add("cudaGraphAddEmptyNode", SIM_RT(cudaGraphAddEmptyNode_v10000), SIM_DRV(cuGraphAddEmptyNode),
			  pGraphNode, graph, pDependencies, numDependencies, &n, cudaSuccess);
}

SIM_EXPORT cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
						   const cudaGraphNode_t *pDependencies, size_t numDependencies,
						   cudaEvent_t event)
{
	struct sim_gnode n = {.type = cudaGraphNodeTypeEventRecord, .ev = (struct sim_event *)(void *)event};
	return sim_gb_add("cudaGraphAddEventRecordNode", SIM_RT(cudaGraphAddEventRecordNode_v11010),
			  SIM_DRV(cuGraphAddEventRecordNode), pGraphNode, graph, pDependencies, numDependencies, &n,
			  event ? cudaSuccess : cudaErrorInvalidValue);
}

SIM_EXPORT cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
						 const cudaGraphNode_t *pDependencies, size_t numDependencies,
						 cudaEvent_t event)
{
	struct sim_gnode n = {.type = cudaGraphNodeTypeWaitEvent, .ev = (struct sim_event *)(void *)event};
	return sim_gb_add("cudaGraphAddEventWaitNode", SIM_RT(cudaGraphAddEventWaitNode_v11010),
			  SIM_DRV(cuGraphAddEventWaitNode), pGraphNode, graph, pDependencies, numDependencies, &n,
			  event ? cudaSuccess : cudaErrorInvalidValue);
}

SIM_EXPORT cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
						const cudaGraphNode_t *to, const cudaGraphEdgeData *edgeData,
						size_t numDependencies)
{
	(void)edgeData; /* default edges only: programmatic ports are not simulated */
	SIM_SIMPLE("cudaGraphAddDependencies", cudaGraphAddDependencies_v12030, SIM_DRV(cuGraphAddDependencies_v2), {
		struct sim_graph *g = (struct sim_graph *)(void *)graph;
		if (!g || (numDependencies && (!from || !to))) {
			r_ = cudaErrorInvalidValue;
		} else {
			pthread_mutex_lock(&g_dev.mx);
			for (size_t i = 0; i < numDependencies && r_ == cudaSuccess; i++) {
				const struct sim_gnode *a = (const void *)from[i], *b = (const void *)to[i];
				int rc = !a || !b || a->owner != g || b->owner != g ? -EINVAL
										  : sim_graph_edge_add(g, a->index, b->index);
				if (rc)
					r_ = sim_gb_errno(rc);
			}
			pthread_mutex_unlock(&g_dev.mx);
		}
	});
}

SIM_EXPORT cudaError_t cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph)
{
	struct sim_call c;
	sim_call_enter(&c, "cudaGraphClone", SIM_RT(cudaGraphClone_v10000), SIM_DRV(cuGraphClone));
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	struct sim_graph *g = (struct sim_graph *)(void *)originalGraph;
	if (!pGraphClone || !g)
		return sim_call_exit(&c, cudaErrorInvalidValue, 0);
	pthread_mutex_lock(&g_dev.mx);
	struct sim_graph *cl = sim_graph_clone(g);
	pthread_mutex_unlock(&g_dev.mx);
	if (!cl)
		return sim_call_exit(&c, cudaErrorMemoryAllocation, 0);
	CUpti_GraphData gd;
	memset(&gd, 0, sizeof gd);
	gd.graph = (CUgraph)(void *)cl;
	gd.originalGraph = (CUgraph)(void *)g;
	sim_graph_event(CUPTI_CBID_RESOURCE_GRAPH_CLONED, &gd);
	*pGraphClone = (cudaGraph_t)(void *)cl;
	return sim_call_exit(&c, cudaSuccess, 0);
}

/* The nodes of g that `keep` selects, CUDA's two-call protocol: with out
 * NULL, *num gets the count; else up to *num are written and *num gets the
 * number written. Caller holds g_dev.mx. */
static void sim_gb_list(const struct sim_graph *g, int roots_only, cudaGraphNode_t *out, size_t *num)
{
	size_t k = 0;
	for (size_t i = 0; i < g->n; i++) {
		if (roots_only && g->nodes[i]->ndeps)
			continue;
		if (out && k < *num)
			out[k] = (cudaGraphNode_t)(void *)g->nodes[i];
		k++;
	}
	*num = out && k > *num ? *num : k;
}

SIM_EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes)
{
	SIM_SIMPLE("cudaGraphGetNodes", cudaGraphGetNodes_v10000, SIM_DRV(cuGraphGetNodes), {
		if (!graph || !numNodes) {
			r_ = cudaErrorInvalidValue;
		} else {
			pthread_mutex_lock(&g_dev.mx);
			sim_gb_list((struct sim_graph *)(void *)graph, 0, nodes, numNodes);
			pthread_mutex_unlock(&g_dev.mx);
		}
	});
}

SIM_EXPORT cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *pRootNodes, size_t *pNumRootNodes)
{
	SIM_SIMPLE("cudaGraphGetRootNodes", cudaGraphGetRootNodes_v10000, SIM_DRV(cuGraphGetRootNodes), {
		if (!graph || !pNumRootNodes) {
			r_ = cudaErrorInvalidValue;
		} else {
			pthread_mutex_lock(&g_dev.mx);
			sim_gb_list((struct sim_graph *)(void *)graph, 1, pRootNodes, pNumRootNodes);
			pthread_mutex_unlock(&g_dev.mx);
		}
	});
}

SIM_EXPORT cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t *from, cudaGraphNode_t *to,
					 cudaGraphEdgeData *edgeData, size_t *numEdges)
{
	SIM_SIMPLE("cudaGraphGetEdges", cudaGraphGetEdges_v12030, SIM_DRV(cuGraphGetEdges_v2), {
		const struct sim_graph *g = (const void *)graph;
		if (!g || !numEdges || (!from) != (!to)) {
			r_ = cudaErrorInvalidValue;
		} else {
			size_t k = 0;
			pthread_mutex_lock(&g_dev.mx);
			for (size_t i = 0; i < g->n; i++) {
				for (size_t j = 0; j < g->nodes[i]->ndeps; j++, k++) {
					if (from && k < *numEdges) {
						from[k] = (cudaGraphNode_t)(void *)g->nodes[g->nodes[i]->deps[j]];
						to[k] = (cudaGraphNode_t)(void *)g->nodes[i];
						if (edgeData)
							memset(&edgeData[k], 0, sizeof edgeData[k]);
					}
				}
			}
			pthread_mutex_unlock(&g_dev.mx);
			*numEdges = from && k > *numEdges ? *numEdges : k;
		}
	});
}

SIM_EXPORT cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *pType)
{
	SIM_SIMPLE("cudaGraphNodeGetType", cudaGraphNodeGetType_v10000, SIM_DRV(cuGraphNodeGetType), {
		if (!node || !pType)
			r_ = cudaErrorInvalidValue;
		else
			*pType = ((const struct sim_gnode *)(const void *)node)->type;
	});
}

SIM_EXPORT cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *pDependencies,
						    cudaGraphEdgeData *edgeData, size_t *pNumDependencies)
{
	SIM_SIMPLE("cudaGraphNodeGetDependencies", cudaGraphNodeGetDependencies_v12030,
		   SIM_DRV(cuGraphNodeGetDependencies_v2), {
			   const struct sim_gnode *n = (const void *)node;
			   if (!n || !pNumDependencies) {
				   r_ = cudaErrorInvalidValue;
			   } else {
				   pthread_mutex_lock(&g_dev.mx);
				   size_t k = n->ndeps;
				   for (size_t i = 0; pDependencies && i < k && i < *pNumDependencies; i++) {
					   pDependencies[i] = (cudaGraphNode_t)(void *)n->owner->nodes[n->deps[i]];
					   if (edgeData)
						   memset(&edgeData[i], 0, sizeof edgeData[i]);
				   }
				   pthread_mutex_unlock(&g_dev.mx);
				   *pNumDependencies = pDependencies && k > *pNumDependencies ? *pNumDependencies : k;
			   }
		   });
}

SIM_EXPORT cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, struct cudaKernelNodeParams *p)
{
	SIM_SIMPLE("cudaGraphKernelNodeGetParams", cudaGraphKernelNodeGetParams_v10000,
		   SIM_DRV(cuGraphKernelNodeGetParams_v2), {
			   const struct sim_gnode *n = (const void *)node;
			   if (!n || !p || n->type != cudaGraphNodeTypeKernel) {
				   r_ = cudaErrorInvalidValue;
			   } else {
				   memset(p, 0, sizeof *p);
				   p->func = (void *)n->f->host_fun;
				   p->gridDim = n->grid;
				   p->blockDim = n->block;
				   p->sharedMemBytes = (unsigned)n->shmem;
				   p->kernelParams = n->args;
			   }
		   });
}

/* Give kernel node n the parameters k (checked by sim_gb_kernel, which takes
 * g_dev.mx itself: call it first). Caller holds g_dev.mx. */
static cudaError_t sim_gb_kernel_set(struct sim_gnode *n, const struct sim_gnode *k)
{
	if (!n || n->type != cudaGraphNodeTypeKernel)
		return cudaErrorInvalidValue;
	n->f = k->f;
	n->grid = k->grid;
	n->block = k->block;
	n->shmem = k->shmem;
	n->args = k->args;
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const struct cudaKernelNodeParams *p)
{
	SIM_SIMPLE("cudaGraphKernelNodeSetParams", cudaGraphKernelNodeSetParams_v10000,
		   SIM_DRV(cuGraphKernelNodeSetParams_v2), {
			   struct sim_gnode k = {0};
			   r_ = sim_gb_kernel(&k, p);
			   if (r_ == cudaSuccess) {
				   pthread_mutex_lock(&g_dev.mx);
				   r_ = sim_gb_kernel_set((struct sim_gnode *)(void *)node, &k);
				   pthread_mutex_unlock(&g_dev.mx);
			   }
		   });
}

/* The executable's copy of `node` (a node of the graph it was instantiated
 * from, or of the executable's own graph); NULL if none. Under g_dev.mx. */
static struct sim_gnode *sim_gb_exec_node(struct sim_gexec *x, const struct sim_gnode *node)
{
	for (size_t i = 0; x && node && i < x->g->n; i++)
		if (x->g->nodes[i] == node || x->g->nodes[i]->orig_id == node->id)
			return x->g->nodes[i];
	return NULL;
}

SIM_EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
							const struct cudaKernelNodeParams *p)
{
	SIM_SIMPLE("cudaGraphExecKernelNodeSetParams", cudaGraphExecKernelNodeSetParams_v10010,
		   SIM_DRV(cuGraphExecKernelNodeSetParams_v2), {
			   struct sim_gnode k = {0};
			   r_ = sim_gb_kernel(&k, p);
			   if (r_ == cudaSuccess) {
				   pthread_mutex_lock(&g_dev.mx);
				   struct sim_gnode *n = sim_gb_exec_node((struct sim_gexec *)(void *)hGraphExec,
									  (const struct sim_gnode *)(const void *)node);
				   r_ = sim_gb_kernel_set(n, &k);
				   pthread_mutex_unlock(&g_dev.mx);
			   }
		   });
}

/*
 * Update an executable from a graph of the same shape: same node count, node
 * types and edges, node for node in creation order (what CUDA's rules amount
 * to for graphs built or captured by the same code). Parameters are copied;
 * the executable keeps its own node ids.
 */
SIM_EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
					   cudaGraphExecUpdateResultInfo *resultInfo)
{
	SIM_SIMPLE("cudaGraphExecUpdate", cudaGraphExecUpdate_v10020, SIM_DRV(cuGraphExecUpdate_v2), {
		struct sim_gexec *x = (struct sim_gexec *)(void *)hGraphExec;
		const struct sim_graph *g = (const void *)hGraph;
		enum cudaGraphExecUpdateResult res = cudaGraphExecUpdateSuccess;
		cudaGraphNode_t bad = NULL;
		if (!x || !g) {
			r_ = cudaErrorInvalidValue;
		} else {
			pthread_mutex_lock(&g_dev.mx);
			struct sim_graph *e = x->g;
			if (e->n != g->n)
				res = cudaGraphExecUpdateErrorTopologyChanged;
			for (size_t i = 0; i < g->n && res == cudaGraphExecUpdateSuccess; i++) {
				const struct sim_gnode *a = e->nodes[i], *b = g->nodes[i];
				if (a->type != b->type)
					res = cudaGraphExecUpdateErrorNodeTypeChanged;
				else if (a->ndeps != b->ndeps ||
					 (a->ndeps && memcmp(a->deps, b->deps, a->ndeps * sizeof *a->deps)))
					res = cudaGraphExecUpdateErrorTopologyChanged;
				if (res != cudaGraphExecUpdateSuccess)
					bad = (cudaGraphNode_t)(void *)b;
			}
			for (size_t i = 0; i < g->n && res == cudaGraphExecUpdateSuccess; i++) {
				struct sim_gnode *a = e->nodes[i];
				const struct sim_gnode *b = g->nodes[i];
				a->f = b->f, a->grid = b->grid, a->block = b->block, a->shmem = b->shmem;
				a->args = b->args, a->x = b->x, a->fn = b->fn, a->user = b->user, a->ev = b->ev;
			}
			pthread_mutex_unlock(&g_dev.mx);
			if (res != cudaGraphExecUpdateSuccess)
				r_ = cudaErrorGraphExecUpdateFailure;
		}
		if (resultInfo) {
			memset(resultInfo, 0, sizeof *resultInfo);
			resultInfo->result = x && g ? res : cudaGraphExecUpdateError;
			resultInfo->errorNode = bad;
		}
	});
}

/* Upload: the executable's work is already "on the device"; one API call. */
static cudaError_t sim_gb_upload(cudaGraphExec_t exec, int pt, const char *nm, CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, pt ? SIM_DRV(cuGraphUpload_ptsz) : SIM_DRV(cuGraphUpload));
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	return sim_call_exit(&c, exec ? cudaSuccess : cudaErrorInvalidValue, 0);
}

SIM_EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	(void)stream;
	return sim_gb_upload(graphExec, 0, "cudaGraphUpload", SIM_RT(cudaGraphUpload_v10000));
}

SIM_EXPORT cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	(void)stream;
	return sim_gb_upload(graphExec, 1, "cudaGraphUpload_ptsz", SIM_RT(cudaGraphUpload_ptsz_v10000));
}

static cudaError_t sim_gb_capture_info(cudaStream_t st, int pt, enum cudaStreamCaptureStatus *status,
				       unsigned long long *id, cudaGraph_t *graph, const cudaGraphNode_t **deps,
				       const cudaGraphEdgeData **edges, size_t *ndeps, const char *nm,
				       CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, pt ? SIM_DRV(cuStreamGetCaptureInfo_v3_ptsz) : SIM_DRV(cuStreamGetCaptureInfo_v3));
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	if (!status)
		return sim_call_exit(&c, cudaErrorInvalidValue, 0);
	struct sim_stream *s = sim_timeline_stream_of(st, pt);
	pthread_mutex_lock(&g_dev.mx);
	struct sim_graph *g = s->capture;
	pthread_mutex_unlock(&g_dev.mx);
	*status = g ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
	if (id)
		*id = g ? g->id : 0;
	if (graph)
		*graph = g ? (cudaGraph_t)(void *)g : NULL;
	if (deps) /* the capture's frontier is not exposed: report none */
		*deps = NULL;
	if (edges)
		*edges = NULL;
	if (ndeps)
		*ndeps = 0;
	return sim_call_exit(&c, cudaSuccess, 0);
}

SIM_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
						unsigned long long *id, cudaGraph_t *graph, const cudaGraphNode_t **deps,
						const cudaGraphEdgeData **edges, size_t *ndeps)
{
	return sim_gb_capture_info(stream, 0, status, id, graph, deps, edges, ndeps, "cudaStreamGetCaptureInfo",
				   SIM_RT(cudaStreamGetCaptureInfo_v12030));
}

SIM_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
						     unsigned long long *id, cudaGraph_t *graph,
						     const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges,
						     size_t *ndeps)
{
	return sim_gb_capture_info(stream, 1, status, id, graph, deps, edges, ndeps, "cudaStreamGetCaptureInfo_ptsz",
				   SIM_RT(cudaStreamGetCaptureInfo_ptsz_v12030));
}
