/*
 * trace_builder.h — record builders for the report's unit tests: a synthetic
 * trace held in memory as an array of gp_rec slots (struct recs) and one
 * helper per record kind the suites share. Used by the Criterion suites in
 * report/tests/ (core, cupti_cost, roofline, analyses, crossrank, partial);
 * a builder only one suite needs stays in that suite.
 *
 * Invariants: every record starts zeroed (rec_new), so a record holds exactly
 * the fields its builder or caller sets; a trace holds at most RECS_MAX slots
 * (rec_new asserts it); a string longer than its inline text takes the
 * continuation slots after it, as the collector writes them. Every builder
 * returns its record so a caller can set a field the builder does not.
 * Test thread only.
 */
#ifndef GP_REPORT_TESTS_TRACE_BUILDER_H
#define GP_REPORT_TESTS_TRACE_BUILDER_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "gp_format.h"

#define RECS_MAX 4096

struct recs {
	union gp_rec r[RECS_MAX];
	size_t n;
};

/* The next slot of t, zeroed. */
static inline union gp_rec *rec_new(struct recs *t)
{
	cr_assert(t->n < RECS_MAX);
	union gp_rec *r = &t->r[t->n++];
	memset(r, 0, sizeof *r);
	return r;
}

/* String record `id` = text, with its continuation slots. */
static inline union gp_rec *rec_string(struct recs *t, uint32_t id, const char *text)
{
	union gp_rec *r = rec_new(t);
	uint32_t len = (uint32_t)strlen(text);
	r->string.type = GP_REC_STRING;
	r->string.id = id;
	r->string.len = len;
	uint32_t first = len < GP_STRING_INLINE ? len : GP_STRING_INLINE;
	memcpy(r->string.text, text, first);
	for (uint32_t off = first; off < len; off += GP_REC_SIZE) {
		union gp_rec *c = rec_new(t);
		uint32_t k = len - off < GP_REC_SIZE ? len - off : GP_REC_SIZE;
		memcpy(c->raw, text + off, k);
	}
	return r;
}

/* An API call record (type GP_REC_RUNTIME_API or GP_REC_DRIVER_API) of
 * class cls on thread tid. */
static inline union gp_rec *rec_api(struct recs *t, uint8_t type, unsigned cls, uint32_t tid, uint64_t start,
				    uint32_t dur, uint32_t corr)
{
	union gp_rec *r = rec_new(t);
	r->api.type = type;
	r->api.class_flags = (uint8_t)cls;
	r->api.tid = tid;
	r->api.start = start;
	r->api.dur = dur;
	r->api.corr = corr;
	return r;
}

/* A kernel on `stream` over [start, end], launched by call corr; name is a
 * string id. */
static inline union gp_rec *rec_kernel(struct recs *t, uint32_t stream, uint64_t start, uint64_t end, uint32_t corr,
				       uint32_t name)
{
	union gp_rec *r = rec_new(t);
	r->kernel.type = GP_REC_KERNEL;
	r->kernel.stream = stream;
	r->kernel.start = start;
	r->kernel.end = end;
	r->kernel.corr = corr;
	r->kernel.name = name;
	return r;
}

/* A copy or memset (type GP_REC_MEMCPY or GP_REC_MEMSET) of 4096 bytes on
 * `stream`, of copy kind `kind`, async or not; rt_corr is the runtime call's
 * corr. */
static inline union gp_rec *rec_copy(struct recs *t, uint8_t type, int async, uint32_t stream, uint64_t start,
				     uint32_t dur, uint32_t corr, uint32_t rt_corr, uint8_t kind)
{
	union gp_rec *r = rec_new(t);
	r->copy.type = type;
	r->copy.flags = async ? GP_COPYF_ASYNC : 0;
	r->copy.stream = stream;
	r->copy.start = start;
	r->copy.dur = dur;
	r->copy.corr = corr;
	r->copy.rt_corr = rt_corr;
	r->copy.copy_kind = kind;
	r->copy.bytes = 4096;
	return r;
}

/* Iteration mark n at ts (no thread). */
static inline union gp_rec *rec_iter(struct recs *t, uint64_t n, uint64_t ts)
{
	union gp_rec *r = rec_new(t);
	r->mark.type = GP_REC_ITER;
	r->mark.iter = n;
	r->mark.ts = ts;
	return r;
}


/* A synchronization (sync_type from CUPTI, on `stream`) over [start, end]
 * in call corr; no event. */
static inline union gp_rec *rec_sync(struct recs *t, uint8_t stype, uint32_t stream, uint64_t start, uint64_t end,
				     uint32_t corr)
{
	union gp_rec *r = rec_new(t);
	r->sync.type = GP_REC_SYNC;
	r->sync.sync_type = stype;
	r->sync.stream = stream;
	r->sync.start = start;
	r->sync.end = end;
	r->sync.corr = corr;
	r->sync.event = UINT32_MAX;
	return r;
}

/* External correlation of CUPTI call corr to our id ext (kind CUSTOM2, the
 * library's). */
static inline union gp_rec *rec_extcorr(struct recs *t, uint32_t corr, uint64_t ext)
{
	union gp_rec *r = rec_new(t);
	r->extcorr.type = GP_REC_EXTCORR;
	r->extcorr.kind = 5;
	r->extcorr.corr = corr;
	r->extcorr.ext_id = ext;
	return r;
}

/* CUPTI overhead of kind `kind` (GP_OVH_*) on thread tid over [start, end]
 * in call corr. */
static inline union gp_rec *rec_overhead(struct recs *t, uint8_t kind, uint32_t tid, uint64_t start, uint64_t end,
					 uint32_t corr)
{
	union gp_rec *r = rec_new(t);
	r->overhead.type = GP_REC_OVERHEAD;
	r->overhead.kind = kind;
	r->overhead.tid = tid;
	r->overhead.start = start;
	r->overhead.end = end;
	r->overhead.corr = corr;
	return r;
}

/* Status record of kind `kind` (GP_STATUS_*) carrying value. */
static inline union gp_rec *rec_status(struct recs *t, uint8_t kind, int64_t value)
{
	union gp_rec *r = rec_new(t);
	r->status.type = GP_REC_STATUS;
	r->status.kind = kind;
	r->status.value = value;
	return r;
}


/* Graph record of kind `kind` (GP_GRAPH_*) for node node_id of graph
 * graph_id in call corr. */
static inline union gp_rec *rec_graph_node(struct recs *t, uint8_t kind, uint32_t graph_id, uint64_t node_id,
					   uint32_t corr)
{
	union gp_rec *r = rec_new(t);
	r->graph.type = GP_REC_GRAPH_NODE;
	r->graph.kind = kind;
	r->graph.graph_id = graph_id;
	r->graph.node_id = node_id;
	r->graph.corr = corr;
	return r;
}

#endif
