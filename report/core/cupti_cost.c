/*
 * cupti_cost.c — CUPTI's own cost inside each traced call, so that the
 * phases can leave it out (docs/metrics.md §3, "CUPTI's own cost"): the
 * profiler's time is never the program's launch or wait.
 *
 * Where the cost of a call comes from (chosen once, after pass 1):
 *  - records: CUPTI's INSTRUMENTATION overhead records (GP_REC_OVERHEAD),
 *    summed per correlation id; a call's cost is the sum of its own and of
 *    the driver call nested in it (its corr is the driver's), each record
 *    taken by the first API record with its corr;
 *  - calibration: the library's start-up measurement (GP_REC_CALIBRATION)
 *    when the trace has no INSTRUMENTATION record: rt_ns per runtime record,
 *    drv_ns per driver record, launch_ns once per kernel launch;
 *  - none: the phases keep CUPTI's cost (the report says nothing is known).
 * A driver record's cost waits, per thread, for the runtime call that may
 * contain it (CUPTI writes the driver record first).
 *
 * Also here: the library's own calibration calls (external correlation id
 * GP_CALIB_EXT_ID, kernel GP_CALIB_KERNEL) are recognised in pass 1 and left
 * out of everything (gp_cost_own).
 *
 * Called by the core (analysis.c) on the report thread: scan1 and own in
 * pass 1, prepare once, overhead and call in pass 2 before the join and
 * sync attribution see the call, finish at the end. Memory: the costs of
 * calls whose API record has not come yet (bounded: emptied at GP_RECENT),
 * one entry per thread, the calibration's corrs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

/* Pass 1: count INSTRUMENTATION records, keep the calibration record, and
 * learn which corrs are the library's calibration calls. */
void gp_cost_scan1(struct gp_an *an, const union gp_rec *r)
{
	struct gp_cost *c = &an->cost;
	switch (r->type) {
	case GP_REC_OVERHEAD:
		if (r->overhead.kind == GP_OVH_INSTRUMENTATION)
			c->instr_records++;
		break;
	case GP_REC_CALIBRATION:
		if (!c->have_calib) {
			c->have_calib = 1;
			c->calib = r->calib;
		}
		break;
	case GP_REC_EXTCORR:
		if (r->extcorr.ext_id == GP_CALIB_EXT_ID)
			gp_an_fail(an, gp_map_put(&c->own, r->extcorr.corr, 1));
		break;
	default:
		break;
	}
}

/* Is kernel name string `id` the calibration kernel's? Cached per id. */
static int gp_cost_own_name(struct gp_an *an, uint32_t id)
{
	struct gp_cost *c = &an->cost;
	if (c->own_last_name == id && id)
		return c->own_last;
	uint64_t *v = gp_map_get(&c->own_names, id);
	int own;
	if (v) {
		own = *v == 1;
	} else {
		const char *t = gp_an_string(an, id);
		if (!t)
			return 0; /* not bound yet: asked again next time */
		own = !strcmp(t, GP_CALIB_KERNEL);
		gp_an_fail(an, gp_map_put(&c->own_names, id, own ? 1 : 2));
	}
	c->own_last_name = id;
	c->own_last = own;
	return own;
}

/* Is this record one of the library's calibration calls (or their kernels,
 * syncs, overhead records)? Those are the profiler's, never the program's:
 * the core leaves them out of every pass. A calibration kernel seen by its
 * name adds its corr, so that its API record is left out too. */
int gp_cost_own(struct gp_an *an, const union gp_rec *r)
{
	struct gp_cost *c = &an->cost;
	uint32_t corr;
	switch (r->type) {
	case GP_REC_RUNTIME_API:
	case GP_REC_DRIVER_API:
		corr = r->api.corr;
		break;
	case GP_REC_KERNEL:
		if (gp_cost_own_name(an, r->kernel.name)) {
			gp_an_fail(an, gp_map_put(&c->own, r->kernel.corr, 1));
			return 1;
		}
		corr = r->kernel.corr;
		break;
	case GP_REC_SYNC:
		corr = r->sync.corr;
		break;
	case GP_REC_OVERHEAD:
		corr = r->overhead.corr;
		break;
	case GP_REC_EXTCORR:
		return r->extcorr.ext_id == GP_CALIB_EXT_ID;
	default:
		return 0;
	}
	return c->own.count && corr && gp_map_get(&c->own, corr) != NULL;
}

/* After pass 1: records when the trace has any INSTRUMENTATION record,
 * else the calibration when it measured something. */
void gp_cost_prepare(struct gp_an *an)
{
	struct gp_cost *c = &an->cost;
	if (an->hook_only)
		c->source = GP_COST_NONE;
	else if (c->instr_records)
		c->source = GP_COST_RECORDS;
	else if (c->have_calib && (c->calib.flags & (GP_CALIBF_API | GP_CALIBF_LAUNCH)))
		c->source = GP_COST_CALIBRATION;
}

/* Pass 2: an INSTRUMENTATION record (not the calibration's own). Its call's
 * API record normally follows (CUPTI writes both in the calling thread's
 * buffer, the overhead first); when that record came first, the call's op
 * (not folded yet) and its wait (not charged yet) take the cost now. */
void gp_cost_overhead(struct gp_an *an, const struct gp_rec_overhead *o)
{
	struct gp_cost *c = &an->cost;
	if (c->source != GP_COST_RECORDS || o->kind != GP_OVH_INSTRUMENTATION || o->end <= o->start)
		return;
	uint64_t ns = o->end - o->start;
	c->calls++;
	c->in_calls_ns += ns;
	if (!o->corr)
		return;
	int op = gp_join_cupti_late(an, o->corr, ns), wait = gp_sync_cupti_late(an, o->corr, ns, o->end);
	if (op || wait)
		return;
	if (c->by_corr.count >= GP_RECENT) {
		gp_map_free(&c->by_corr); /* calls whose record never came */
		gp_map_free(&c->end_by_corr);
	}
	uint64_t *v = gp_map_get(&c->by_corr, o->corr);
	if (v)
		*v += ns;
	else
		gp_an_fail(an, gp_map_put(&c->by_corr, o->corr, ns));
	uint64_t *e = gp_map_get(&c->end_by_corr, o->corr);
	if (e) {
		if (o->end > *e)
			*e = o->end;
	} else {
		gp_an_fail(an, gp_map_put(&c->end_by_corr, o->corr, o->end));
	}
}

static struct gp_cost_drv *gp_cost_drv_of(struct gp_an *an, uint32_t tid, int create)
{
	struct gp_cost *c = &an->cost;
	uint64_t *v = gp_map_get(&c->drv_by_tid, tid);
	if (v)
		return &c->drv[*v];
	if (!create)
		return NULL;
	if (GP_AN_GROW(c->drv, c->ndrv, c->capdrv))
		return gp_an_fail(an, -ENOMEM), NULL;
	memset(&c->drv[c->ndrv], 0, sizeof c->drv[c->ndrv]);
	c->drv[c->ndrv].used = 1;
	gp_an_fail(an, gp_map_put(&c->drv_by_tid, tid, c->ndrv));
	return &c->drv[c->ndrv++];
}

/*
 * Pass 2: CUPTI's cost inside the call of API record a (runtime or driver),
 * at most the call's length: taken at the call's entry, before its own work
 * or wait (metrics.md §3). 0 when the trace says nothing of it.
 */
uint64_t gp_cost_call(struct gp_an *an, const struct gp_rec_api *a)
{
	struct gp_cost *c = &an->cost;
	if (c->source == GP_COST_NONE)
		return 0;
	uint64_t dur = gp_api_dur_ns(a), end = a->start + dur, ns = 0;
	unsigned cls = GP_API_CLASS(a->class_flags);
	int calib = c->source == GP_COST_CALIBRATION;
	uint64_t launch = calib && (c->calib.flags & GP_CALIBF_LAUNCH) ? c->calib.launch_ns : 0;
	uint64_t layer = 0;
	if (calib && (c->calib.flags & GP_CALIBF_API))
		layer = a->type == GP_REC_RUNTIME_API ? c->calib.rt_ns : c->calib.drv_ns;
	c->call_end = 0;
	if (!calib) {
		uint64_t *v = gp_map_get(&c->by_corr, a->corr);
		if (v) {
			ns = *v;
			gp_map_del(&c->by_corr, a->corr);
		}
		uint64_t *e = gp_map_get(&c->end_by_corr, a->corr);
		if (e) {
			c->call_end = *e;
			gp_map_del(&c->end_by_corr, a->corr);
		}
	} else {
		ns = layer + (cls == GP_API_LAUNCH && a->type == GP_REC_DRIVER_API ? launch : 0);
		if (a->type == GP_REC_RUNTIME_API || !an->have_runtime)
			c->calls++;
		c->in_calls_ns += ns;
	}
	if (a->type == GP_REC_DRIVER_API) {
		/* the runtime call that contains it, if any, takes it over */
		struct gp_cost_drv *d = an->have_runtime ? gp_cost_drv_of(an, a->tid, 1) : NULL;
		if (d)
			*d = (struct gp_cost_drv){ .start = a->start, .end = end, .ns = ns, .used = 0 };
		return ns < dur ? ns : dur;
	}
	struct gp_cost_drv *d = gp_cost_drv_of(an, a->tid, 0);
	int nested = d && !d->used && d->start >= a->start && d->end <= end;
	if (nested) {
		ns += d->ns;
		d->used = 1;
	} else if (calib && cls == GP_API_LAUNCH) {
		ns += launch; /* no driver record carried the launch's part */
		c->in_calls_ns += launch;
	}
	return ns < dur ? ns : dur;
}

void gp_cost_finish(struct gp_an *an, struct gp_rep *rep)
{
	struct gp_cost *c = &an->cost;
	rep->cupti.source = (int)c->source;
	rep->cupti.calls = c->calls;
	rep->cupti.in_calls_ns = c->in_calls_ns;
	rep->cupti.launch_ns = c->from_launch_ns;
	rep->cupti.sync_ns = c->from_sync_ns;
	if (c->have_calib) {
		rep->cupti.calibrated = 1;
		rep->cupti.calib_flags = c->calib.flags;
		rep->cupti.calib_rt_ns = c->calib.rt_ns;
		rep->cupti.calib_drv_ns = c->calib.drv_ns;
		rep->cupti.calib_launch_ns = c->calib.launch_ns;
		rep->cupti.calib_dur_ns = c->calib.dur;
		rep->cupti.calib_start = c->calib.start;
	}
	rep->launch_raw_ns = an->launch_raw;
}

void gp_cost_free(struct gp_cost *c)
{
	gp_map_free(&c->by_corr);
	gp_map_free(&c->end_by_corr);
	gp_map_free(&c->drv_by_tid);
	free(c->drv);
	gp_map_free(&c->own);
	gp_map_free(&c->own_names);
}
