/*
 * sim_graph.h — CUDA graphs inside simcuda: the objects shared by capture
 * and launch (sim_graph.c) and explicit construction (sim_graph_build.c).
 * Hidden, like everything in sim_cudart.h.
 *
 * A graph is an array of nodes; a node's dependencies are indices of earlier
 * or later nodes of the same graph (explicit construction may add an edge
 * to any node), so a clone is a copy of the array with the same indices.
 * A node handle given to the program is the node itself (its first field is
 * its id: cuptiGetGraphNodeId), a graph handle the graph (first field: id).
 * Locks: every graph's node list and edges are read and written under
 * g_dev.mx (graphs are not thread-safe in CUDA either; the lock keeps the
 * simulator sound).
 */
#ifndef SIM_GRAPH_H
#define SIM_GRAPH_H

#include "sim_cudart.h"

#pragma GCC visibility push(hidden)

struct sim_gnode {
	uint64_t id; /* first: cuptiGetGraphNodeId reads it */
	enum cudaGraphNodeType type;
	struct sim_graph *owner;
	size_t index; /* in owner->nodes */
	/* kernel */
	struct sim_func *f;
	dim3 grid, block;
	size_t shmem;
	void **args; /* caller-owned argument array or NULL */
	/* memcpy / memset */
	struct sim_gxfer x;
	/* host */
	cudaHostFn_t fn;
	void *user;
	/* event record / wait */
	struct sim_event *ev;
	uint32_t capture_corr; /* runtime corr of the captured call, 0 = built explicitly */
	uint64_t orig_id;      /* clones: the node's id in the graph cloned, else 0 */
	size_t *deps, ndeps, capdeps; /* indices of the nodes it depends on */
	uint64_t t_end;               /* scratch for one launch (under g_dev.mx) */
};

struct sim_graph {
	uint32_t id; /* first: cuptiGetGraphId reads it */
	struct sim_gnode **nodes;
	size_t n, cap;
	uint32_t orig_id; /* clones: the graph's id it was cloned from, else 0 */
};

struct sim_gexec {
	struct sim_graph *g; /* the clone that runs */
	size_t *order;       /* its nodes in an order that respects every edge */
};

/* A new empty graph (orig_id: the graph it clones, or 0); NULL when out of memory. */
struct sim_graph *sim_graph_new(uint32_t orig_id);
void sim_graph_free(struct sim_graph *g);
/* A new node of `type` appended to g with the given dependencies (handles
 * checked to be g's); 0, -ENOMEM or -EINVAL. Caller holds g_dev.mx. */
int sim_graph_node_add(struct sim_graph *g, struct sim_gnode *proto, struct sim_gnode *const *deps, size_t ndeps,
		       struct sim_gnode **out);
/* Add edge from -> to (both g's); 0, -EINVAL or -ENOMEM. Caller holds g_dev.mx. */
int sim_graph_edge_add(struct sim_graph *g, size_t from, size_t to);
/* A copy of g (new graph and node ids, orig ids set); NULL when out of
 * memory. Caller holds g_dev.mx. */
struct sim_graph *sim_graph_clone(const struct sim_graph *g);
/* Tell the subscriber (RESOURCE domain) about a graph object. */
void sim_graph_event(CUpti_CallbackId cbid, CUpti_GraphData *gd);
/* The driver's node type for CUpti_GraphData. */
CUgraphNodeType sim_graph_cu_type(enum cudaGraphNodeType t);

#pragma GCC visibility pop

#endif
