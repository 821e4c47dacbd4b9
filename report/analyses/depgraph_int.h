/*
 * depgraph_int.h — the dependency graph's own layout, shared by its build
 * (depgraph.c) and its replay (depgraph_replay.c); nothing else includes
 * it. Nodes are kept sorted once built: calls by thread and start, ops by
 * stream and start, waits by start; indexes into them are int32_t (the
 * graph holds at most GP_DG_MAX_NODES nodes). Single-threaded.
 */
#ifndef GP_REPORT_DEPGRAPH_INT_H
#define GP_REPORT_DEPGRAPH_INT_H

#include <fnmatch.h>
#include <stdint.h>
#include <string.h>

#include "report/core/analysis.h"
#include "depgraph.h"

/* A call's identity: the record it came from (GP_REC_*_API; 0 = none),
 * its thread and its correlation id as that record says them. */
struct gp_dg_id {
	uint32_t tid, corr;
	uint8_t domain;
};

struct gp_dg_c {
	uint64_t start, end;
	uint64_t gap;          /* host time since the previous call of its thread */
	uint64_t post;         /* blocking: time from the release to its return  */
	uint64_t late;         /* slept: its post beyond the median post of the
	                          slept waits of its function (its waking late) */
	uint64_t qwait;        /* its wait on a full launch queue (0: none)      */
	const char *name;
	const char *site;      /* sync: its call site (the core's), or NULL      */
	struct gp_dg_id id;
	int32_t wait;          /* op that released it, -1 none                   */
	int32_t op;            /* an op it launched (the last one), -1 none      */
	uint32_t nops;         /* ops it launched (graph launch: its nodes)      */
	uint8_t cls, first, empty, blocking;
	uint8_t slept;         /* released GP_DG_SLEEP_NS or more after its start */
	uint8_t held;          /* a copy or set call held until its op ended (a
	                          blocking one, an async one on pageable memory) */
};

struct gp_dg_o {
	uint64_t start, end, api_start, api_end;
	uint64_t lat, prev_gap, dep_gap;
	const char *name;
	const char *site;      /* its call's call site, or NULL                  */
	uint32_t stream, corr;
	uint32_t tid;          /* its launching call's thread; with corr and
	                          domain, that call's identity                   */
	int32_t call, prev, dep, prev_same; /* prev_same: previous op of the same
	                                       class (copy / not copy) of its stream */
	uint8_t domain;
	uint8_t kind, copy_kind, sync_issue, anchor, blocking;
	uint8_t device, has_issue; /* has_issue: its launching call is known   */
	uint32_t sidx;         /* its stream's entry in gp_dg.s                  */
	uint64_t issue;        /* its launching call's start; the stream's ops
	                          are issued in their order (an op without a
	                          known call takes the one before it's)        */
};

/* One stream of the graph (depgraph_legacy.c): its ops are
 * g->o[first..end). legacy: the entry of its device's legacy default
 * stream, -1 when the legacy stream's order is not applied on its device
 * (none known, or more than GP_DG_LEGACY_STREAMS streams). apart: its
 * measured times show it does not synchronize with the legacy stream (a
 * cudaStreamNonBlocking stream). */
struct gp_dg_s {
	uint32_t first, end;
	int32_t legacy;
	uint8_t device, is_legacy, apart;
};

#define GP_DG_LEGACY_STREAMS 64

struct gp_dg_w {
	uint64_t start, end;
	const char *site;
	struct gp_dg_id id;    /* the blocking call's                            */
	uint32_t op_corr, stream;
	uint64_t queue_ns;     /* > 0: a launch's wait on a full queue           */
	uint8_t attributed;
};

struct gp_dg {
	struct gp_dg_w *w;
	size_t nw, capw;
	struct gp_dg_c *c;
	size_t nc, capc;
	struct gp_dg_o *o;
	size_t no, capo;
	struct gp_dg_s *s;     /* streams, in the ops' order                    */
	size_t ns;
	int truncated;
	uint64_t t0, t1;
	uint64_t lat_async, lat_sync;
	uint64_t node_cost, async_cost;
	uint64_t free_cost[GP_API_CLASS_COUNT]; /* per class: the median call
	                          that did not wait on a full queue (0: none) */
	size_t empty, queued;
	uint64_t late;         /* the mean `late` of the slept waits: how late a
	                          thread wakes from a long wait on this host     */
};

/* A wait this long gives up the thread's CPU (an assumption: CUDA spins
 * on short waits, yields or sleeps on long ones); waking from it takes the
 * host's scheduling latency. */
#define GP_DG_SLEEP_NS 100000

static inline int gp_dg_is_sync(unsigned c)
{
	return c == GP_API_SYNC_DEVICE || c == GP_API_SYNC_STREAM || c == GP_API_SYNC_EVENT;
}

/* cudaFree, cudaFreeHost, cudaMallocHost, cudaHostAlloc: the device is
 * synchronized before the call does its work */
static inline int gp_dg_is_implicit(unsigned c)
{
	return c == GP_API_SYNC_IMPLICIT;
}

static inline int gp_dg_is_copy_sync(unsigned c)
{
	return c == GP_API_MEMCPY_SYNC || c == GP_API_MEMSET_SYNC;
}

/* A call site glob of the user's, or the site's name itself. */
static inline int gp_dg_site_matches(const char *site, const char *target)
{
	return site && target && (!strcmp(target, site) || !fnmatch(target, site, 0));
}

static inline int gp_dg_named(const char *a, const char *target)
{
	return a && target && strcmp(a, target) == 0;
}

/* Whether change ch (NULL: none) changes call c: 1 with *dur its new
 * duration (it then waits for nothing), else 0 (depgraph_replay.c). */
int gp_dg_call_changed(const struct gp_dg *g, const struct gp_dg_c *c, const struct gp_dg_change *ch,
		       uint64_t *dur);

/* The legacy default stream's order (depgraph_legacy.c): the stream table,
 * each op's issue time and which streams are apart. 0 or -ENOMEM. */
int gp_dg_link_legacy(struct gp_dg *g);

/* The legacy order's bound on op k's start: raises *start to the end of each
 * op k must follow (*by: the one that ended last, -1 none). Returns 0 when
 * one of them is not placed yet (od) and !force; with force, those are left
 * out. */
int gp_dg_legacy_bound(const struct gp_dg *g, size_t k, const uint8_t *od, const uint64_t *oe, int force,
		       uint64_t *start, int32_t *by);

#endif
