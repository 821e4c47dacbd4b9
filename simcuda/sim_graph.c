/*
 * sim_graph.c — CUDA graphs on simcuda: stream capture (cudaStreamBeginCapture
 * / cudaStreamEndCapture / cudaStreamIsCapturing), cudaGraphInstantiate(+
 * WithFlags), cudaGraphLaunch(+_ptsz), cudaGraphExecDestroy, cudaGraphDestroy.
 *
 * It schedules on the runtime's timeline (sim_timeline.c) and reports
 * through the same call frame, records and truth as a launch (sim_call.c,
 * sim_launch.c, sim_truth.c). Callers: app threads, any number; the timeline
 * lock g_dev.mx guards every graph's node list (graphs are not thread-safe
 * objects in CUDA either; the lock only keeps the simulator itself sound).
 *
 * What CUPTI 13 shows, reproduced here (docs/simcuda.md "CUDA graphs"):
 *  - A kernel launched into a capturing stream is not run: it becomes a node.
 *    The launch call still produces its RUNTIME/DRIVER records (and external
 *    correlation records), and inside that call, on the calling thread, the
 *    subscriber gets CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED with the graph and
 *    node (CUpti_GraphData). No kernel record.
 *  - cudaGraphInstantiate clones the graph: a new graph id and new node ids;
 *    one CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED per node (node = clone,
 *    originalNode = captured node), then CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED.
 *  - cudaGraphLaunch: one API call (launch_ns of host time), then one kernel
 *    record per node, each with correlationId = the cudaGraphLaunch call's,
 *    graphId = the executable's (cloned) graph id, graphNodeId = the cloned
 *    node's id. Nodes of a captured stream form a chain: they run one after
 *    another on the launch stream.
 *  - cuptiGetGraphId / cuptiGetGraphNodeId (sim_cupti.c) read the first field
 *    of these objects: struct sim_graph starts with its uint32 id, struct
 *    sim_gnode with its uint64 id (the contract in sim_internal.h).
 * Kernel host bodies: real CUDA copies a captured launch's arguments; simcuda
 * cannot (it does not know their sizes), so it keeps the argument array
 * pointer and runs the host body at each graph launch only for nodes captured
 * through cudaLaunchKernel / cudaLaunchKernelExC / cudaLaunchCooperativeKernel,
 * whose array the caller owns (it must stay valid while the graph is used).
 * Nodes captured from <<<>>> (__cudaLaunchKernel, an array on the stub's
 * frame) simulate timing only.
 *
 * Truth: every node's kernel line carries "graph" / "node" (the ids CUPTI
 * reports), "graph_orig" / "node_orig" (the captured ones) and
 * "capture_corr" (the correlation id of the launch call that was captured).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sim_cudart.h"

struct sim_gnode {
	uint64_t id; /* first: cuptiGetGraphNodeId reads it */
	struct sim_func *f;
	dim3 grid, block;
	size_t shmem;
	void **args;                   /* caller-owned argument array or NULL */
	uint32_t capture_corr;         /* runtime corr of the captured launch */
	uint64_t orig_id;              /* clones: the captured node's id, else 0 */
};

struct sim_graph {
	uint32_t id; /* first: cuptiGetGraphId reads it */
	struct sim_gnode **nodes;
	size_t n, cap;
	uint32_t orig_id; /* clones: the captured graph's id, else 0 */
};

struct sim_gexec {
	struct sim_graph *g; /* the clone that runs */
};

/* Unique ids: relaxed fetch_add, only uniqueness matters. Node ids start high
 * so a confusion of graph and node ids shows in tests. */
static _Atomic uint32_t g_graph_next = 0;
static _Atomic uint64_t g_gnode_next = 1000;

static void sim_graph_event(CUpti_CallbackId cbid, CUpti_GraphData *gd)
{
	CUpti_ResourceData rd;
	memset(&rd, 0, sizeof rd);
	rd.context = simcupti_context();
	rd.resourceDescriptor = gd;
	simcupti_callback(CUPTI_CB_DOMAIN_RESOURCE, cbid, &rd);
}

static struct sim_graph *sim_graph_new(uint32_t orig_id)
{
	struct sim_graph *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->id = atomic_fetch_add_explicit(&g_graph_next, 1, memory_order_relaxed) + 1;
	g->orig_id = orig_id;
	return g;
}

/* Append a node (takes ownership); 0 or -ENOMEM. Caller holds g_dev.mx. */
static int sim_graph_append(struct sim_graph *g, struct sim_gnode *n)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 8;
		struct sim_gnode **v = realloc(g->nodes, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		g->nodes = v;
		g->cap = cap;
	}
	g->nodes[g->n++] = n;
	return 0;
}

static void sim_graph_free(struct sim_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++)
		free(g->nodes[i]);
	free(g->nodes);
	free(g);
}

/*
 * Called by sim_launch when the launch stream is capturing: add a kernel node
 * to the stream's graph, tell the subscriber, leave the call. The launch's
 * host cost has been spent by the caller.
 */
cudaError_t sim_graph_add_kernel(struct sim_call *c, struct sim_stream *s, struct sim_func *f, dim3 grid,
				 dim3 block, size_t shmem, void **args)
{
	struct sim_gnode *n = calloc(1, sizeof *n);
	if (!n)
		return sim_call_exit(c, cudaErrorMemoryAllocation, 0);
	n->id = atomic_fetch_add_explicit(&g_gnode_next, 1, memory_order_relaxed) + 1;
	n->f = f;
	n->grid = grid;
	n->block = block;
	n->shmem = shmem;
	n->args = args;
	n->capture_corr = c->corr;
	pthread_mutex_lock(&g_dev.mx);
	struct sim_graph *g = s->capture;
	int rc = g ? sim_graph_append(g, n) : -EINVAL;
	pthread_mutex_unlock(&g_dev.mx);
	if (rc) {
		free(n);
		return sim_call_exit(c, rc == -ENOMEM ? cudaErrorMemoryAllocation : cudaErrorStreamCaptureInvalidated,
				     0);
	}
	CUpti_GraphData gd;
	memset(&gd, 0, sizeof gd);
	gd.graph = (CUgraph)(void *)g;
	gd.node = (CUgraphNode)(void *)n;
	gd.nodeType = CU_GRAPH_NODE_TYPE_KERNEL;
	sim_graph_event(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &gd);
	return sim_call_exit(c, cudaSuccess, 0);
}

static cudaError_t sim_begin_capture(cudaStream_t st, int pt, const char *nm, CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, pt ? SIM_DRV(cuStreamBeginCapture_ptsz) : SIM_DRV(cuStreamBeginCapture));
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	struct sim_stream *s = sim_timeline_stream_of(st, pt);
	if (s->legacy)
		return sim_call_exit(&c, cudaErrorStreamCaptureUnsupported, 0);
	struct sim_graph *g = sim_graph_new(0);
	if (!g)
		return sim_call_exit(&c, cudaErrorMemoryAllocation, 0);
	pthread_mutex_lock(&g_dev.mx);
	int busy = s->capture != NULL;
	if (!busy)
		s->capture = g;
	pthread_mutex_unlock(&g_dev.mx);
	if (busy) {
		sim_graph_free(g);
		return sim_call_exit(&c, cudaErrorIllegalState, 0);
	}
	CUpti_GraphData gd;
	memset(&gd, 0, sizeof gd);
	gd.graph = (CUgraph)(void *)g;
	sim_graph_event(CUPTI_CBID_RESOURCE_GRAPH_CREATED, &gd);
	return sim_call_exit(&c, cudaSuccess, 0);
}

SIM_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	(void)mode;
	return sim_begin_capture(stream, 0, "cudaStreamBeginCapture", SIM_RT(cudaStreamBeginCapture_v10000));
}

SIM_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	(void)mode;
	return sim_begin_capture(stream, 1, "cudaStreamBeginCapture_ptsz",
				 SIM_RT(cudaStreamBeginCapture_ptsz_v10000));
}

static cudaError_t sim_end_capture(cudaStream_t st, cudaGraph_t *out, int pt, const char *nm, CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, pt ? SIM_DRV(cuStreamEndCapture_ptsz) : SIM_DRV(cuStreamEndCapture));
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	if (!out)
		return sim_call_exit(&c, cudaErrorInvalidValue, 0);
	struct sim_stream *s = sim_timeline_stream_of(st, pt);
	pthread_mutex_lock(&g_dev.mx);
	struct sim_graph *g = s->capture;
	s->capture = NULL;
	pthread_mutex_unlock(&g_dev.mx);
	if (!g)
		return sim_call_exit(&c, cudaErrorIllegalState, 0);
	*out = (cudaGraph_t)(void *)g;
	return sim_call_exit(&c, cudaSuccess, 0);
}

SIM_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
	return sim_end_capture(stream, pGraph, 0, "cudaStreamEndCapture", SIM_RT(cudaStreamEndCapture_v10000));
}

SIM_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
	return sim_end_capture(stream, pGraph, 1, "cudaStreamEndCapture_ptsz", SIM_RT(cudaStreamEndCapture_ptsz_v10000));
}

static cudaError_t sim_is_capturing(cudaStream_t st, enum cudaStreamCaptureStatus *status, int pt, const char *nm,
				    CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, pt ? SIM_DRV(cuStreamIsCapturing_ptsz) : SIM_DRV(cuStreamIsCapturing));
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	if (!status)
		return sim_call_exit(&c, cudaErrorInvalidValue, 0);
	struct sim_stream *s = sim_timeline_stream_of(st, pt);
	pthread_mutex_lock(&g_dev.mx);
	*status = s->capture ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
	pthread_mutex_unlock(&g_dev.mx);
	return sim_call_exit(&c, cudaSuccess, 0);
}

SIM_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
	return sim_is_capturing(stream, pCaptureStatus, 0, "cudaStreamIsCapturing",
				SIM_RT(cudaStreamIsCapturing_v10000));
}

SIM_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
	return sim_is_capturing(stream, pCaptureStatus, 1, "cudaStreamIsCapturing_ptsz",
				SIM_RT(cudaStreamIsCapturing_ptsz_v10000));
}

static cudaError_t sim_instantiate(cudaGraphExec_t *pexec, cudaGraph_t graph, const char *nm, CUpti_CallbackId cbid,
				   CUpti_CallbackId drv)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, drv);
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	struct sim_graph *g = (struct sim_graph *)(void *)graph;
	if (!pexec || !g)
		return sim_call_exit(&c, cudaErrorInvalidValue, 0);
	struct sim_gexec *x = calloc(1, sizeof *x);
	struct sim_graph *cl = sim_graph_new(g->id);
	if (!x || !cl) {
		free(x);
		free(cl);
		return sim_call_exit(&c, cudaErrorMemoryAllocation, 0);
	}
	x->g = cl;
	pthread_mutex_lock(&g_dev.mx);
	size_t n = g->n;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		struct sim_gnode *k = malloc(sizeof *k);
		if (!k) {
			rc = -ENOMEM;
			break;
		}
		*k = *g->nodes[i];
		k->id = atomic_fetch_add_explicit(&g_gnode_next, 1, memory_order_relaxed) + 1;
		k->orig_id = g->nodes[i]->id;
		if ((rc = sim_graph_append(cl, k)))
			free(k);
	}
	pthread_mutex_unlock(&g_dev.mx);
	if (rc) {
		sim_graph_free(cl);
		free(x);
		return sim_call_exit(&c, cudaErrorMemoryAllocation, 0);
	}
	for (size_t i = 0; i < cl->n; i++) {
		CUpti_GraphData gd;
		memset(&gd, 0, sizeof gd);
		gd.graph = (CUgraph)(void *)cl;
		gd.originalGraph = (CUgraph)(void *)g;
		gd.node = (CUgraphNode)(void *)cl->nodes[i];
		gd.originalNode = (CUgraphNode)(void *)g->nodes[i];
		gd.nodeType = CU_GRAPH_NODE_TYPE_KERNEL;
		gd.graphExec = (CUgraphExec)(void *)x;
		sim_graph_event(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, &gd);
	}
	CUpti_GraphData gd;
	memset(&gd, 0, sizeof gd);
	gd.graph = (CUgraph)(void *)g;
	gd.graphExec = (CUgraphExec)(void *)x;
	sim_graph_event(CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, &gd);
	*pexec = (cudaGraphExec_t)(void *)x;
	return sim_call_exit(&c, cudaSuccess, 0);
}

SIM_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
	(void)flags;
	return sim_instantiate(pGraphExec, graph, "cudaGraphInstantiate", SIM_RT(cudaGraphInstantiate_v12000),
			       SIM_DRV(cuGraphInstantiateWithFlags));
}

SIM_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
						     unsigned long long flags)
{
	(void)flags;
	return sim_instantiate(pGraphExec, graph, "cudaGraphInstantiateWithFlags",
			       SIM_RT(cudaGraphInstantiateWithFlags_v11040), SIM_DRV(cuGraphInstantiateWithFlags));
}

static cudaError_t sim_graph_launch(cudaGraphExec_t exec, cudaStream_t st, int pt, const char *nm,
				    CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, pt ? SIM_DRV(cuGraphLaunch_ptsz) : SIM_DRV(cuGraphLaunch));
	struct sim_gexec *x = (struct sim_gexec *)(void *)exec;
	if (!x) {
		sim_timeline_spin_until(c.start + g_cfg.api_ns);
		return sim_call_exit(&c, cudaErrorInvalidValue, 0);
	}
	sim_timeline_spin_until(c.start + g_cfg.launch_ns);
	uint64_t end = simcupti_now();
	struct sim_stream *s = sim_timeline_stream_of(st, pt);
	struct sim_graph *g = x->g;
	for (size_t i = 0; i < g->n; i++)
		sim_register_resolve(g->nodes[i]->f);
	int ck = simcupti_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	int any = ck || simcupti_enabled(CUPTI_ACTIVITY_KIND_KERNEL);
	for (size_t i = 0; i < g->n; i++) {
		const struct sim_gnode *n = g->nodes[i];
		const struct sim_func *f = n->f;
		uint64_t exec_ns = sim_launch_exec_ns(f, n->grid);
		if (f->body && n->args) { /* device code, under the device-memory lock */
			pthread_mutex_lock(&g_mem_mx);
			f->body(n->grid, n->block, n->args);
			pthread_mutex_unlock(&g_mem_mx);
		}
		struct sim_kernel_run r = {.f = f, .stream_id = s->id, .corr = c.corr, .grid = n->grid,
					   .block = n->block, .shmem = n->shmem, .device = s->device,
					   .graph_id = g->id, .graph_node_id = n->id};
		pthread_mutex_lock(&g_dev.mx);
		r.start = sim_timeline_schedule(s, end + g_cfg.launch_latency_ns, exec_ns, c.corr, &r.end);
		r.grid_id = ++g_dev.grid_id;
		pthread_mutex_unlock(&g_dev.mx);
		if (any)
			sim_launch_record(ck, &r);
		struct sim_truth_node tn = {.graph = g->id, .graph_orig = g->orig_id,
					    .capture_corr = n->capture_corr, .node = n->id, .node_orig = n->orig_id};
		sim_truth_graph_kernel(f->mangled, s->id, r.start, r.end, c.corr, &tn);
	}
	return sim_call_exit(&c, cudaSuccess, end);
}

SIM_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	return sim_graph_launch(graphExec, stream, 0, "cudaGraphLaunch", SIM_RT(cudaGraphLaunch_v10000));
}

SIM_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	return sim_graph_launch(graphExec, stream, 1, "cudaGraphLaunch_ptsz", SIM_RT(cudaGraphLaunch_ptsz_v10000));
}

/* Records in flight copy ids and point at function names only, so both
 * objects can be freed at once; the instantiated clone keeps the captured ids
 * by value (destroying the captured graph after instantiation is common). */
SIM_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
	SIM_SIMPLE("cudaGraphExecDestroy", cudaGraphExecDestroy_v10000, SIM_DRV(cuGraphExecDestroy), {
		struct sim_gexec *x = (struct sim_gexec *)(void *)graphExec;
		if (!x) {
			r_ = cudaErrorInvalidValue;
		} else {
			sim_graph_free(x->g);
			free(x);
		}
	});
}

SIM_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
	SIM_SIMPLE("cudaGraphDestroy", cudaGraphDestroy_v10000, SIM_DRV(cuGraphDestroy), {
		if (!graph)
			r_ = cudaErrorInvalidValue;
		else
			sim_graph_free((struct sim_graph *)(void *)graph);
	});
}
