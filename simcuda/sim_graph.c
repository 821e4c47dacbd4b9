/*
 * sim_graph.c — CUDA graphs on simcuda: stream capture (cudaStreamBeginCapture
 * / cudaStreamEndCapture / cudaStreamIsCapturing), cudaGraphInstantiate(+
 * WithFlags), cudaGraphLaunch(+_ptsz), cudaGraphExecDestroy, cudaGraphDestroy.
 *
 * It schedules on the runtime's timeline (sim_timeline.c) and reports
 * through the same call frame, records and truth as a launch (sim_call.c,
 * sim_launch.c, sim_truth_writer.c). Callers: app threads, any number; the timeline
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

#include "sim_graph.h"

/* Unique ids: relaxed fetch_add, only uniqueness matters. Node ids start high
 * so a confusion of graph and node ids shows in tests. */
static _Atomic uint32_t g_graph_next = 0;
static _Atomic uint64_t g_gnode_next = 1000;

/* Capture state beside the streams and events (under g_dev.mx): what a
 * capturing stream's next node depends on, and what a captured event stands
 * for. A stream joined into another stream's capture (cudaStreamWaitEvent on
 * a captured event) shares its graph: s->capture. */
struct sim_capdeps {
	const void *key; /* a struct sim_stream or struct sim_event */
	struct sim_graph *g;
	size_t *deps, n;
	struct sim_capdeps *next;
};
static struct sim_capdeps *g_capdeps;

/* key's entry, created if `create`; NULL if none (or out of memory). Caller holds g_dev.mx. */
static struct sim_capdeps *sim_graph_capdeps(const void *key, int create)
{
	struct sim_capdeps *d = g_capdeps;
	while (d && d->key != key)
		d = d->next;
	if (!d && create && (d = calloc(1, sizeof *d))) {
		d->key = key;
		d->next = g_capdeps;
		g_capdeps = d;
	}
	return d;
}

static void sim_graph_capdeps_drop(const void *key)
{
	for (struct sim_capdeps **pp = &g_capdeps; *pp; pp = &(*pp)->next) {
		if ((*pp)->key == key) {
			struct sim_capdeps *d = *pp;
			*pp = d->next;
			free(d->deps);
			free(d);
			return;
		}
	}
}

/* d's dependency set := {one}, or a copy of (deps, n); 0 or -ENOMEM. */
static int sim_graph_capdeps_set(struct sim_capdeps *d, const size_t *deps, size_t n)
{
	size_t *v = n ? malloc(n * sizeof *v) : NULL;
	if (n && !v)
		return -ENOMEM;
	if (n)
		memcpy(v, deps, n * sizeof *v);
	free(d->deps);
	d->deps = v;
	d->n = n;
	return 0;
}

void sim_graph_event(CUpti_CallbackId cbid, CUpti_GraphData *gd)
{
	CUpti_ResourceData rd;
	memset(&rd, 0, sizeof rd);
	rd.context = simcupti_context();
	rd.resourceDescriptor = gd;
	simcupti_callback(CUPTI_CB_DOMAIN_RESOURCE, cbid, &rd);
}

CUgraphNodeType sim_graph_cu_type(enum cudaGraphNodeType t)
{
	return (CUgraphNodeType)t; /* the runtime and driver enums share their values */
}

struct sim_graph *sim_graph_new(uint32_t orig_id)
{
	struct sim_graph *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->id = atomic_fetch_add_explicit(&g_graph_next, 1, memory_order_relaxed) + 1;
	g->orig_id = orig_id;
	return g;
}

static void sim_graph_node_free(struct sim_gnode *n)
{
	free(n->deps);
	free(n);
}

void sim_graph_free(struct sim_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++)
		sim_graph_node_free(g->nodes[i]);
	free(g->nodes);
	free(g);
}

static int sim_graph_dep_push(struct sim_gnode *n, size_t d)
{
	for (size_t i = 0; i < n->ndeps; i++)
		if (n->deps[i] == d)
			return 0;
	if (n->ndeps == n->capdeps) {
		size_t cap = n->capdeps ? n->capdeps * 2 : 4;
		size_t *v = realloc(n->deps, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		n->deps = v;
		n->capdeps = cap;
	}
	n->deps[n->ndeps++] = d;
	return 0;
}

int sim_graph_edge_add(struct sim_graph *g, size_t from, size_t to)
{
	if (from >= g->n || to >= g->n || from == to)
		return -EINVAL;
	return sim_graph_dep_push(g->nodes[to], from);
}

/* Append a copy of proto with its own id and the given dependency indices. */
static int sim_graph_append(struct sim_graph *g, const struct sim_gnode *proto, const size_t *deps, size_t ndeps,
			    struct sim_gnode **out)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 8;
		struct sim_gnode **v = realloc(g->nodes, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		g->nodes = v;
		g->cap = cap;
	}
	struct sim_gnode *n = malloc(sizeof *n);
	if (!n)
		return -ENOMEM;
	*n = *proto;
	n->id = atomic_fetch_add_explicit(&g_gnode_next, 1, memory_order_relaxed) + 1;
	n->owner = g;
	n->index = g->n;
	n->deps = NULL;
	n->ndeps = n->capdeps = 0;
	for (size_t i = 0; i < ndeps; i++) {
		if (deps[i] >= g->n || sim_graph_dep_push(n, deps[i])) {
			sim_graph_node_free(n);
			return deps[i] >= g->n ? -EINVAL : -ENOMEM;
		}
	}
	g->nodes[g->n++] = n;
	if (out)
		*out = n;
	return 0;
}

int sim_graph_node_add(struct sim_graph *g, struct sim_gnode *proto, struct sim_gnode *const *deps, size_t ndeps,
		       struct sim_gnode **out)
{
	size_t stackv[16], *v = ndeps <= 16 ? stackv : malloc(ndeps * sizeof *v);
	if (!v)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; i < ndeps && !rc; i++) {
		if (!deps[i] || deps[i]->owner != g)
			rc = -EINVAL;
		else
			v[i] = deps[i]->index;
	}
	if (!rc)
		rc = sim_graph_append(g, proto, v, ndeps, out);
	if (v != stackv)
		free(v);
	return rc;
}

struct sim_graph *sim_graph_clone(const struct sim_graph *g)
{
	struct sim_graph *cl = sim_graph_new(g->id);
	if (!cl)
		return NULL;
	for (size_t i = 0; i < g->n; i++) {
		struct sim_gnode *k;
		if (sim_graph_append(cl, g->nodes[i], NULL, 0, &k)) {
			sim_graph_free(cl);
			return NULL;
		}
		k->orig_id = g->nodes[i]->id;
	}
	/* edges after every node exists: explicit edges may point forward */
	for (size_t i = 0; i < g->n; i++)
		for (size_t j = 0; j < g->nodes[i]->ndeps; j++)
			if (sim_graph_dep_push(cl->nodes[i], g->nodes[i]->deps[j])) {
				sim_graph_free(cl);
				return NULL;
			}
	return cl;
}

/* ---- capture ------------------------------------------------------------------------------- */

int sim_graph_capturing(struct sim_stream *s)
{
	pthread_mutex_lock(&g_dev.mx);
	int yes = s->capture != NULL;
	pthread_mutex_unlock(&g_dev.mx);
	return yes;
}

/*
 * Add proto as a node of s's capture, after s's capture dependencies, and
 * make it s's only dependency; tell the subscriber; leave the call.
 */
static cudaError_t sim_graph_capture_add(struct sim_call *c, struct sim_stream *s, struct sim_gnode *proto)
{
	proto->capture_corr = c->corr;
	pthread_mutex_lock(&g_dev.mx);
	struct sim_graph *g = s->capture;
	struct sim_capdeps *d = g ? sim_graph_capdeps(s, 1) : NULL;
	struct sim_gnode *n = NULL;
	int rc = !g ? -EINVAL : !d ? -ENOMEM : sim_graph_append(g, proto, d->deps, d->n, &n);
	if (!rc)
		rc = sim_graph_capdeps_set(d, &n->index, 1);
	pthread_mutex_unlock(&g_dev.mx);
	if (rc)
		return sim_call_exit(c, rc == -ENOMEM ? cudaErrorMemoryAllocation : cudaErrorStreamCaptureInvalidated,
				     0);
	CUpti_GraphData gd;
	memset(&gd, 0, sizeof gd);
	gd.graph = (CUgraph)(void *)g;
	gd.node = (CUgraphNode)(void *)n;
	gd.nodeType = sim_graph_cu_type(proto->type);
	sim_graph_event(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &gd);
	return sim_call_exit(c, cudaSuccess, 0);
}

/*
 * Called by sim_launch when the launch stream is capturing: add a kernel node
 * to the stream's graph, tell the subscriber, leave the call. The launch's
 * host cost has been spent by the caller.
 */
cudaError_t sim_graph_add_kernel(struct sim_call *c, struct sim_stream *s, struct sim_func *f, dim3 grid,
				 dim3 block, size_t shmem, void **args)
{
	struct sim_gnode n = {.type = cudaGraphNodeTypeKernel, .f = f, .grid = grid, .block = block,
			      .shmem = shmem, .args = args};
	return sim_graph_capture_add(c, s, &n);
}

cudaError_t sim_graph_add_xfer(struct sim_call *c, struct sim_stream *s, const struct sim_gxfer *x)
{
	struct sim_gnode n = {.type = x->is_set ? cudaGraphNodeTypeMemset : cudaGraphNodeTypeMemcpy, .x = *x};
	return sim_graph_capture_add(c, s, &n);
}

cudaError_t sim_graph_add_host(struct sim_call *c, struct sim_stream *s, cudaHostFn_t fn, void *user)
{
	struct sim_gnode n = {.type = cudaGraphNodeTypeHost, .fn = fn, .user = user};
	return sim_graph_capture_add(c, s, &n);
}

int sim_graph_capture_record(struct sim_stream *s, struct sim_event *e)
{
	pthread_mutex_lock(&g_dev.mx);
	int yes = s->capture != NULL;
	if (yes) {
		struct sim_capdeps *sd = sim_graph_capdeps(s, 1), *ed = sim_graph_capdeps(e, 1);
		if (sd && ed && !sim_graph_capdeps_set(ed, sd->deps, sd->n))
			ed->g = s->capture;
	} else { /* recorded outside any capture again: a plain event */
		sim_graph_capdeps_drop(e);
	}
	pthread_mutex_unlock(&g_dev.mx);
	return yes;
}

int sim_graph_capture_wait(struct sim_stream *s, struct sim_event *e)
{
	pthread_mutex_lock(&g_dev.mx);
	struct sim_capdeps *ed = sim_graph_capdeps(e, 0);
	int yes = ed && ed->g && (s->capture == NULL || s->capture == ed->g);
	if (yes) {
		struct sim_capdeps *sd = sim_graph_capdeps(s, 1);
		if (!s->capture) { /* s joins the capture (fork): it starts after e's nodes */
			s->capture = ed->g;
			if (sd)
				sim_graph_capdeps_set(sd, ed->deps, ed->n);
		} else if (sd) { /* join: s's next node also follows e's nodes */
			for (size_t i = 0; i < ed->n; i++) {
				int dup = 0;
				for (size_t j = 0; j < sd->n; j++)
					dup |= sd->deps[j] == ed->deps[i];
				if (!dup) {
					size_t *v = realloc(sd->deps, (sd->n + 1) * sizeof *v);
					if (!v)
						break;
					sd->deps = v;
					sd->deps[sd->n++] = ed->deps[i];
				}
			}
		}
	}
	pthread_mutex_unlock(&g_dev.mx);
	return yes;
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
	struct sim_capdeps *d = busy ? NULL : sim_graph_capdeps(s, 1);
	if (d) {
		s->capture = g;
		sim_graph_capdeps_set(d, NULL, 0);
		d->g = g;
	}
	pthread_mutex_unlock(&g_dev.mx);
	if (!d) {
		sim_graph_free(g);
		return sim_call_exit(&c, busy ? cudaErrorIllegalState : cudaErrorMemoryAllocation, 0);
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
	if (g) { /* the capture ends for every stream that joined it, and its events */
		s->capture = NULL;
		sim_graph_capdeps_drop(s);
		for (struct sim_stream *o = g_dev.streams; o; o = o->next)
			if (o->capture == g) {
				o->capture = NULL;
				sim_graph_capdeps_drop(o);
			}
		for (struct sim_capdeps **pp = &g_capdeps; *pp;) {
			struct sim_capdeps *dd = *pp;
			if (dd->g == g) {
				*pp = dd->next;
				free(dd->deps);
				free(dd);
			} else {
				pp = &dd->next;
			}
		}
	}
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

/* An order of g's nodes that respects every edge (Kahn); NULL on a cycle or
 * out of memory (*cycle says which). Caller holds g_dev.mx. */
static size_t *sim_graph_order(const struct sim_graph *g, int *cycle)
{
	size_t n = g->n, *order = malloc((n ? n : 1) * sizeof *order), *indeg = calloc(n ? n : 1, sizeof *indeg);
	*cycle = 0;
	if (!order || !indeg) {
		free(order);
		free(indeg);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		indeg[i] = g->nodes[i]->ndeps;
	size_t done = 0;
	for (int progress = 1; progress && done < n;) { /* O(n^2) worst case; graphs are small */
		progress = 0;
		for (size_t i = 0; i < n; i++) {
			if (indeg[i] != 0)
				continue;
			indeg[i] = (size_t)-1;
			order[done++] = i;
			progress = 1;
			for (size_t j = 0; j < n; j++)
				for (size_t k = 0; k < g->nodes[j]->ndeps; k++)
					if (g->nodes[j]->deps[k] == i && indeg[j] != (size_t)-1)
						indeg[j]--;
		}
	}
	free(indeg);
	if (done < n) {
		free(order);
		*cycle = 1;
		return NULL;
	}
	return order;
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
	int cycle = 0;
	pthread_mutex_lock(&g_dev.mx);
	struct sim_graph *cl = x ? sim_graph_clone(g) : NULL;
	size_t *order = cl ? sim_graph_order(cl, &cycle) : NULL;
	pthread_mutex_unlock(&g_dev.mx);
	if (!order) {
		sim_graph_free(cl);
		free(x);
		return sim_call_exit(&c, cycle ? cudaErrorInvalidValue : cudaErrorMemoryAllocation, 0);
	}
	x->g = cl;
	x->order = order;
	for (size_t i = 0; i < cl->n; i++) {
		CUpti_GraphData gd;
		memset(&gd, 0, sizeof gd);
		gd.graph = (CUgraph)(void *)cl;
		gd.originalGraph = (CUgraph)(void *)g;
		gd.node = (CUgraphNode)(void *)cl->nodes[i];
		gd.originalNode = (CUgraphNode)(void *)g->nodes[i];
		gd.nodeType = sim_graph_cu_type(cl->nodes[i]->type);
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

/* A node's effect on memory or the host, applied at launch in graph order
 * (bytes move at call time in simcuda, as for every op). */
static void sim_graph_node_apply(const struct sim_gnode *n)
{
	switch (n->type) {
	case cudaGraphNodeTypeKernel:
		if (n->f->body && n->args) { /* device code, under the device-memory lock */
			pthread_mutex_lock(&g_mem_mx);
			n->f->body(n->grid, n->block, n->args);
			pthread_mutex_unlock(&g_mem_mx);
		}
		break;
	case cudaGraphNodeTypeMemcpy:
	case cudaGraphNodeTypeMemset:
		pthread_mutex_lock(&g_mem_mx);
		for (size_t r = 0; r < n->x.height; r++) {
			char *d = (char *)n->x.dst + r * n->x.dpitch;
			if (!n->x.is_set)
				memmove(d, (const char *)n->x.src + r * n->x.spitch, n->x.width);
			else if (n->x.elem == 1)
				memset(d, (int)n->x.value, n->x.width);
			else
				for (size_t k = 0; k < n->x.width; k++)
					memcpy(d + k * n->x.elem, &(uint32_t){n->x.value}, n->x.elem); /* little endian */
		}
		pthread_mutex_unlock(&g_mem_mx);
		break;
	case cudaGraphNodeTypeHost:
		n->fn(n->user);
		break;
	default:
		break;
	}
}

static uint64_t sim_graph_xfer_bytes(const struct sim_gxfer *x)
{
	return (uint64_t)x->width * x->height * (x->is_set ? x->elem : 1);
}

/* The MEMCPY or MEMSET record and truth line of a copy/set node's run. */
static void sim_graph_xfer_report(const struct sim_gnode *n, uint32_t stream_id, uint32_t corr, uint64_t start,
				  uint64_t end, uint32_t graph_id)
{
	uint64_t bytes = sim_graph_xfer_bytes(&n->x);
	uint8_t dk = sim_memory_kind(n->x.dst), sk = n->x.is_set ? dk : sim_memory_kind(n->x.src);
	if (n->x.is_set) {
		if (simcupti_enabled(CUPTI_ACTIVITY_KIND_MEMSET)) {
			CUpti_ActivityMemset4 m;
			memset(&m, 0, sizeof m);
			m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
			m.value = n->x.value;
			m.bytes = bytes;
			m.start = start;
			m.end = end;
			m.deviceId = SIM_DEVICE_ID;
			m.contextId = SIM_CONTEXT_ID;
			m.streamId = stream_id;
			m.correlationId = corr;
			m.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
			m.memoryKind = dk;
			m.graphNodeId = n->id;
			m.graphId = graph_id;
			m.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
			simcupti_emit(&m, sizeof m, end, offsetof(CUpti_ActivityMemset4, start),
				      offsetof(CUpti_ActivityMemset4, end), SIM_NO_OFF);
		}
		sim_truth_memset(stream_id, start, end, corr, corr, bytes);
		return;
	}
	uint8_t ck = CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
	const char *kn = "HtoH";
	int ddev = dk == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, sdev = sk == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	if (ddev && sdev)
		ck = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, kn = "DtoD";
	else if (ddev)
		ck = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, kn = "HtoD";
	else if (sdev)
		ck = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, kn = "DtoH";
	if (simcupti_enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) {
		CUpti_ActivityMemcpy6 m;
		memset(&m, 0, sizeof m);
		m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		m.copyKind = ck;
		m.srcKind = sk;
		m.dstKind = dk;
		m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
		m.bytes = bytes;
		m.start = start;
		m.end = end;
		m.deviceId = SIM_DEVICE_ID;
		m.contextId = SIM_CONTEXT_ID;
		m.streamId = stream_id;
		m.correlationId = corr;
		m.runtimeCorrelationId = corr;
		m.graphNodeId = n->id;
		m.graphId = graph_id;
		m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
		m.copyCount = 1;
		simcupti_emit(&m, sizeof m, end, offsetof(CUpti_ActivityMemcpy6, start),
			      offsetof(CUpti_ActivityMemcpy6, end), SIM_NO_OFF);
	}
	sim_truth_memcpy(kn, stream_id, start, end, corr, corr, bytes, -1);
}

/*
 * Launch: every node in graph order applies its effect now; on the
 * timeline a node starts when the launch reaches the device and every node
 * it depends on has ended (parallel branches overlap), and the stream's work
 * after the launch follows the last node to end.
 */
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
		if (g->nodes[i]->type == cudaGraphNodeTypeKernel)
			sim_register_resolve(g->nodes[i]->f);
	int ck = simcupti_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	int any = ck || simcupti_enabled(CUPTI_ACTIVITY_KIND_KERNEL);
	pthread_mutex_lock(&g_dev.mx);
	uint32_t dc;
	uint64_t base = sim_max(end + g_cfg.launch_latency_ns, sim_timeline_deps(s, &dc)), last = base;
	pthread_mutex_unlock(&g_dev.mx);
	for (size_t oi = 0; oi < g->n; oi++) {
		struct sim_gnode *n = g->nodes[x->order[oi]];
		sim_graph_node_apply(n);
		uint64_t dur = 0;
		if (n->type == cudaGraphNodeTypeKernel)
			dur = sim_launch_exec_ns(n->f, n->grid);
		else if (n->type == cudaGraphNodeTypeMemcpy || n->type == cudaGraphNodeTypeMemset)
			dur = g_cfg.memcpy_latency_ns + (uint64_t)((double)sim_graph_xfer_bytes(&n->x) / g_cfg.memcpy_gbps);
		pthread_mutex_lock(&g_dev.mx);
		uint64_t start = base;
		for (size_t k = 0; k < n->ndeps; k++)
			start = sim_max(start, g->nodes[n->deps[k]]->t_end);
		if (n->type == cudaGraphNodeTypeWaitEvent && n->ev && n->ev->recorded)
			start = sim_max(start, n->ev->ts);
		n->t_end = start + dur;
		if (n->type == cudaGraphNodeTypeEventRecord && n->ev) {
			n->ev->ts = n->t_end;
			n->ev->corr = c.corr;
			n->ev->recorded = 1;
		}
		last = sim_max(last, n->t_end);
		int64_t grid_id = n->type == cudaGraphNodeTypeKernel ? ++g_dev.grid_id : 0;
		pthread_mutex_unlock(&g_dev.mx);
		if (n->type == cudaGraphNodeTypeKernel) {
			struct sim_kernel_run r = {.f = n->f, .stream_id = s->id, .corr = c.corr, .grid = n->grid,
						   .block = n->block, .shmem = n->shmem, .device = s->device,
						   .graph_id = g->id,
						   .graph_node_id = n->id, .start = start, .end = n->t_end,
						   .grid_id = grid_id};
			if (any)
				sim_launch_record(ck, &r);
			struct sim_truth_node tn = {.graph = g->id, .graph_orig = g->orig_id,
						    .capture_corr = n->capture_corr, .node = n->id,
						    .node_orig = n->orig_id};
			sim_truth_graph_kernel(n->f->mangled, s->id, start, n->t_end, c.corr, &tn);
		} else if (n->type == cudaGraphNodeTypeMemcpy || n->type == cudaGraphNodeTypeMemset) {
			sim_graph_xfer_report(n, s->id, c.corr, start, n->t_end, g->id);
		}
	}
	pthread_mutex_lock(&g_dev.mx);
	if (last > s->tail_end) {
		s->tail_end = last;
		s->tail_corr = c.corr;
	}
	pthread_mutex_unlock(&g_dev.mx);
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
			free(x->order);
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
