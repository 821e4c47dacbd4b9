/*
 * depgraph.h — the dependency graph of a trace's window and its replay
 * (docs/metrics.md "What-if"): host calls per thread in time order with the
 * host time between them, GPU ops per stream in order, launch -> op edges,
 * blocking call -> the op it waited for, and the cross-stream edges the
 * timestamps show (an event wait, the legacy stream), and the legacy default
 * stream's own order with the streams that synchronize with it. A graph
 * launch is one call whose ops are its nodes.
 *
 * The replay recomputes every timestamp from the durations and the edges,
 * with an optional change (struct gp_dg_change) applied first; replaying
 * the unchanged graph gives back every measured timestamp.
 *
 * Memory: at most GP_DG_MAX_NODES calls + ops are kept (~100 bytes each with
 * the replay's arrays). Beyond that the graph is the window's prefix up to
 * the last time both calls and ops were complete (gp_dg_covered), and the
 * what-if analysis says so. Single-threaded; functions return 0 or -errno.
 */
#ifndef GP_REPORT_DEPGRAPH_H
#define GP_REPORT_DEPGRAPH_H

#include <stddef.h>
#include <stdint.h>

#define GP_DG_MAX_NODES (1u << 19)

/* A host call (outermost CUDA call of a thread). Its identity is (domain,
 * tid, corr): the record it came from, its thread and its correlation id as
 * that record says them; domain 0 means it has none. */
struct gp_dg_call {
	uint64_t start, end;
	uint32_t tid;
	uint32_t corr;
	uint8_t domain;        /* GP_REC_HOOK_API, _RUNTIME_API, _DRIVER_API, 0 */
	uint8_t cls;           /* enum gp_api_class                             */
	const char *name;      /* API function name (string table), or NULL    */
};

/* A GPU op. Its launching call is the call of identity (api_domain, tid,
 * corr) when the graph holds calls of that domain (a graph launch's nodes
 * share one), else the call that starts at api_start and ends at api_end. */
struct gp_dg_op {
	uint64_t start, end;
	uint64_t api_start, api_end; /* its launching call (both 0 = unknown)   */
	uint32_t stream;
	uint32_t corr;         /* its correlation id (the core's op_corr), its
	                          launching call's too                          */
	uint32_t tid;          /* its launching call's thread                   */
	uint8_t api_domain;    /* its launching call's record type, 0 = unknown */
	uint8_t device;
	uint8_t kind;          /* enum gp_op_kind                               */
	uint8_t copy_kind;
	uint8_t blocking;      /* its call returned only after it ended (a
	                          blocking copy, an async copy on pageable memory) */
	const char *name;      /* operator name (string table)                  */
	const char *site;      /* its call's call site as the report names it
	                          (NULL: none; the string must outlive the graph) */
};

/* The core's attribution of a synchronize (docs/metrics.md section 3): the
 * op of correlation id op_corr released it, or (attributed 0) nothing was
 * outstanding. It belongs to the sync call of its identity (domain, tid,
 * corr) when the graph holds waits of that call's domain, else to the sync
 * call with its start and end. */
struct gp_dg_wait {
	uint64_t start, end;   /* the blocking call                             */
	uint32_t tid, corr;    /* its identity, as in struct gp_dg_call         */
	uint8_t domain;
	uint8_t attributed;
	uint32_t op_corr;
	uint32_t stream;       /* the stream a stream or event synchronize
	                          waited on, UINT32_MAX: any                  */
	uint64_t queue_ns;     /* > 0: not a synchronize's but a launch's wait
	                          on a full launch queue (metrics.md §3), so long */
	const char *site;      /* its call site as the report names it (NULL:
	                          none; the string must outlive the graph)      */
};

/* One transformation of the graph (docs/metrics.md lists them). */
enum gp_dg_change_kind {
	GP_DG_NONE = 0,
	GP_DG_DROP_SYNC,       /* calls named `target` of a sync class or an
	                          implicit sync vanish                          */
	GP_DG_DROP_SITE,       /* sync and implicit-sync calls whose call site
	                          matches the glob `target` vanish              */
	GP_DG_DROP_EMPTY,      /* blocking calls that waited for nothing vanish */
	GP_DG_GRAPH_LAUNCH,    /* launches of op `target` cost `cost_ns` each   */
	GP_DG_PINNED,          /* held copies (blocking, or async on pageable
	                          memory) of op `target` become async, their
	                          call costing `cost_ns`                        */
	GP_DG_PINNED_SITE,     /* the same for the held copies whose call site
	                          matches the glob `target`                    */
	GP_DG_OVERLAP_COPIES,  /* copies leave their stream for a copy stream   */
	GP_DG_SCALE,           /* op `target`'s execute x `factor`              */
	GP_DG_HOIST,           /* calls named `target` of an implicit sync
	                          (cudaFree, ...) vanish: moved out of the loop */
	GP_DG_DEFER,           /* held copies of op `target` become async, their
	                          call costing `cost_ns`; the next such call of
	                          the thread first waits for the copy's end    */
	GP_DG_DEFER_SITE,      /* the same for the held copies whose call site
	                          matches the glob `target`                    */
	GP_DG_QUEUE,           /* calls that waited on a full launch queue
	                          last their measured time less that wait      */
};

struct gp_dg_change {
	enum gp_dg_change_kind kind;
	const char *target;
	double factor;
	uint64_t cost_ns;      /* 0: from the trace, else the default below     */
};

/* Defaults when the trace cannot tell: the host cost of one node of a
 * replayed CUDA graph, of a non-blocking copy call. */
#define GP_DG_NODE_NS 1000
#define GP_DG_ASYNC_CALL_NS 2000

/* Parse a user's what-if (gpuphase-report --whatif):
 *   kernel=NAME:scale=F     op NAME's execute x F (F > 0)
 *   sync=API                the synchronizing function API removed
 *   hoist=API               the implicitly synchronizing function API
 *                           (cudaFree, ...) moved out of the loop
 *   site=GLOB               the synchronizing calls made at the call sites
 *                           the glob matches (as the report names them) removed
 *   empty-waits             waits with nothing outstanding removed
 *   graph=NAME[:node_ns=N]  NAME launched as a graph node
 *   pinned=NAME[:call_ns=N] held copy op NAME (blocking, or async on
 *                           pageable memory) made pinned and async
 *   pinned-site=GLOB[:call_ns=N]  the same at the call sites GLOB matches
 *   defer=NAME[:call_ns=N]  held copy op NAME made async, waited for at the
 *                           next such copy of its thread
 *   defer-site=GLOB[:call_ns=N]   the same at the call sites GLOB matches
 *   queue-waits             launches no longer wait on a full launch queue
 *   overlap-copies          copies on a copy stream of their own
 * The target is copied into buf (n bytes). Returns 0, or -EINVAL with a
 * reason in why (wn bytes; may be NULL). */
int gp_dg_parse(const char *spec, struct gp_dg_change *ch, char *buf, size_t n, char *why, size_t wn);

/* One entry of the critical path: time on the path per name. */
struct gp_dg_path {
	const char *name;      /* op or API name, "host" (time between calls),
	                          "launch latency" (call return -> op start)    */
	uint64_t ns;
};

struct gp_dg;

struct gp_dg *gp_dg_new(void);
void gp_dg_free(struct gp_dg *g);
/* Add a node; 0, -ENOMEM, or 1 when the bound is reached (not added). */
int gp_dg_add_call(struct gp_dg *g, const struct gp_dg_call *c);
int gp_dg_add_op(struct gp_dg *g, const struct gp_dg_op *o);
/* A synchronize without a wait is released by the latest op end inside
 * it; a wait with queue_ns set is a launch's on a full queue. Same returns
 * as the adds. */
int gp_dg_add_wait(struct gp_dg *g, const struct gp_dg_wait *w);
/* Sort, cut to a consistent prefix when bounded, and link every edge. */
int gp_dg_build(struct gp_dg *g);

/* The measured window: span of calls and ops kept; the covered part when
 * the bound was reached (covered == wall otherwise). */
uint64_t gp_dg_wall(const struct gp_dg *g);
int gp_dg_truncated(const struct gp_dg *g);
/* From the window's start to the first call that launched an op (the end
 * of the program's set-up), 0 when none did. */
uint64_t gp_dg_first_launch(const struct gp_dg *g);
size_t gp_dg_ncalls(const struct gp_dg *g);
size_t gp_dg_nops(const struct gp_dg *g);
/* Facts for the what-ifs: the per-node host cost of a graph launch (0 = the
 * trace has none), the host cost of a non-blocking non-launch call (median;
 * 0 = none), blocking calls that waited for nothing, calls that waited on
 * a full launch queue. */
uint64_t gp_dg_graph_node_cost(const struct gp_dg *g);
uint64_t gp_dg_async_call_cost(const struct gp_dg *g);
size_t gp_dg_empty_waits(const struct gp_dg *g);
size_t gp_dg_queue_waits(const struct gp_dg *g);

/* What change ch applies to in a built graph: in *nmatch the nodes it
 * changes (calls it removes or makes cheaper, ops it scales, copies it
 * moves). When a change with a target changes none, near[0..*nnear) gets up
 * to maxnear distinct names of what it could have targeted (the
 * synchronizing functions, implicit ones included, for sync=, the implicit
 * ones for hoist=, their call sites for site=, the
 * operators of launches for graph=, of held copies for pinned= and defer=,
 * their call sites for pinned-site= and defer-site=, every operator for
 * kernel=), closest first: by edit distance to the part of the
 * name closest to the target (a glob's wildcards left out), then to the
 * whole name, then in name order. The names are the graph's. Returns 0 or
 * -ENOMEM. */
int gp_dg_match(const struct gp_dg *g, const struct gp_dg_change *ch, size_t *nmatch, const char **near,
		size_t maxnear, size_t *nnear);

/* Replay with change ch (NULL = none): the predicted wall in *wall; with
 * path != NULL, the critical path by name, largest first, in path[0..*npath)
 * (at most maxpath). Any graph replays to its end, a prefix or whole (an
 * edge the measured times contradict is left out where the replay meets
 * it). Returns 0 or -ENOMEM. */
int gp_dg_replay(const struct gp_dg *g, const struct gp_dg_change *ch, uint64_t *wall, struct gp_dg_path *path,
		 size_t maxpath, size_t *npath);

#endif
