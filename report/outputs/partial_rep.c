/*
 * partial_rep.c — a per-trace gp_rep (rep.h) in a partial-results file
 * (partial.h): every field, in struct order, so that a report read back is
 * the report that was written, bit for bit (doubles as their IEEE bits,
 * execute distributions as their exact samples or their non-empty buckets).
 * The one place the core's aggregates are encoded; docs/partial-format.md
 * lists the fields. Called by partial.c on the report's only thread.
 *
 * Invariant: a field added to struct gp_rep (or its groups, iterations,
 * windows, call sites, key/values) is added here, on both sides, with the
 * format's version bumped; gp_partial_rep_layout_ok, checked by the unit
 * test, fails until then.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "partial.h"
#include "report/core/analysis.h"
#include "report/core/category.h"

#define GP_PR_MAX_ITEMS (1ull << 32) /* groups, iterations, ... of one trace */
#define GP_PR_MAX_COUNTS 4096u       /* record types, API classes           */
#define GP_REP_GROUP_BY_MIN 0        /* enum gp_group_by (analysis.h): kernel */
#define GP_REP_GROUP_BY_MAX 4        /* ... phase                             */
#define GP_REP_BOUND_MAX 3           /* enum gp_bound (verdict.h): latency    */

/* ---- save ---------------------------------------------------------------------- */

static void gp_prep_int(struct gp_pw *w, int v)
{
	gp_pw_u32(w, (uint32_t)v);
}

static void gp_prep_hist_save(struct gp_pw *w, const struct gp_hist *h)
{
	gp_pw_u64(w, h->n);
	gp_pw_u64(w, h->sum);
	gp_pw_u64(w, h->min);
	gp_pw_u64(w, h->max);
	if (h->buckets) {
		uint64_t k = 0;
		for (unsigned i = 0; i < h->blen; i++)
			k += h->buckets[i] != 0;
		gp_pw_u8(w, 2);
		gp_pw_u64(w, k);
		for (unsigned i = 0; i < h->blen; i++)
			if (h->buckets[i]) {
				gp_pw_u32(w, h->blo + i);
				gp_pw_u64(w, h->buckets[i]);
			}
	} else if (h->exact && h->n) {
		gp_pw_u8(w, 1);
		for (uint64_t i = 0; i < h->n && i < GP_HIST_EXACT; i++)
			gp_pw_u64(w, h->exact[i]);
	} else {
		gp_pw_u8(w, 0); /* empty, or its samples lost to ENOMEM */
	}
}

static void gp_prep_counts(struct gp_pw *w, const uint64_t *v, uint32_t n)
{
	gp_pw_u32(w, n);
	for (uint32_t i = 0; i < n; i++)
		gp_pw_u64(w, v[i]);
}

void gp_partial_rep_save(struct gp_pw *w, const struct gp_rep *r)
{
	gp_pw_str(w, r->path);
	gp_pw_u64(w, r->nkv);
	for (size_t i = 0; i < r->nkv; i++) {
		gp_pw_str(w, r->kv[i].key);
		gp_pw_str(w, r->kv[i].value);
	}
	gp_pw_u32(w, r->clock_id);
	gp_pw_u32(w, r->pid);
	gp_pw_u32(w, r->version);
	gp_pw_u64(w, r->start_wall_ns);
	gp_pw_u64(w, r->start_clock_ns);
	gp_pw_u64(w, r->ndevices);
	for (size_t i = 0; i < r->ndevices; i++)
		gp_pw_str(w, r->devices[i]);
	gp_prep_int(w, r->cupti_ok);
	gp_prep_int(w, r->cupti_unavailable);
	gp_prep_int(w, r->hooks_absent);
	gp_prep_int(w, r->clock_calibrated);
	gp_prep_int(w, r->size_cap);
	gp_prep_int(w, r->forked);
	gp_prep_int(w, r->live);
	gp_prep_int(w, r->complete);
	gp_pw_u64(w, r->truncated_bytes);
	gp_pw_u32(w, (uint32_t)r->end_reason);
	gp_pw_u64(w, r->write_errors);
	gp_pw_u64(w, r->lost_after_stop);
	gp_pw_f64(w, r->host_busy_pct);
	gp_pw_f64(w, r->proc_cpu_pct);
	gp_pw_f64(w, r->host_busy_max_pct);
	gp_pw_u64(w, r->records);
	gp_prep_counts(w, r->rec_count, GP_REC_TYPE_COUNT);
	const uint64_t counts[] = { r->dropped_ring, r->dropped_cupti, r->dropped_write, r->dropped_records,
				    r->ops, r->ops_joined, r->ops_no_api, r->ops_no_gpu, r->ops_end_missing,
				    r->ops_no_hook, r->hooks_unjoined, r->api_unjoined, r->evicted, r->launches_captured,
				    r->ops_replayed, r->replayed_ns };
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
		gp_pw_u64(w, counts[i]);
	gp_pw_f64(w, r->join_coverage);
	const uint64_t times[] = { r->t_first, r->t_last, r->wall_ns, r->gpu_busy_ns, r->gpu_idle_ns,
				   r->gpu_busy_sum_ns, r->gpu_busy_late, r->host_api_ns, r->covered_ns,
				   r->unattributed_ns, r->launch_ns, r->queue_ns, r->execute_ns, r->sync_ns,
				   r->sync_unattributed_ns, r->sync_unattributed_calls };
	for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
		gp_pw_u64(w, times[i]);
	gp_prep_counts(w, r->lost_by_class, GP_API_CLASS_COUNT);
	gp_pw_u64(w, r->waits_late);
	gp_pw_u64(w, r->queue_waits_late);
	gp_pw_u64(w, r->queue_full_calls);
	gp_pw_u64(w, r->queue_full_ns);
	/* what the capture could not do: calls lost at start-up, a finish that
	 * could not wait for the GPU, a window that never opened (and why) */
	gp_pw_u64(w, r->startup_lost);
	gp_pw_u32(w, (uint32_t)r->exit_unsettled);
	gp_pw_u8(w, r->window_unopened != 0);
	gp_pw_str(w, r->window_unopened_why);
	/* CUPTI's own cost taken out of the phases (metrics.md §3) */
	gp_pw_u32(w, (uint32_t)r->cupti.source);
	const uint64_t cupti[] = { r->cupti.calls, r->cupti.in_calls_ns, r->cupti.launch_ns, r->cupti.sync_ns,
				   r->cupti.calib_dur_ns, r->cupti.calib_start, r->launch_raw_ns };
	for (size_t i = 0; i < sizeof cupti / sizeof cupti[0]; i++)
		gp_pw_u64(w, cupti[i]);
	gp_pw_u8(w, r->cupti.calibrated != 0);
	const uint32_t calib[] = { r->cupti.calib_flags, r->cupti.calib_rt_ns, r->cupti.calib_drv_ns,
				   r->cupti.calib_launch_ns };
	for (size_t i = 0; i < sizeof calib / sizeof calib[0]; i++)
		gp_pw_u32(w, calib[i]);
	gp_prep_counts(w, r->sync_calls, GP_API_CLASS_COUNT);
	gp_prep_counts(w, r->sync_kind_ns, GP_API_CLASS_COUNT);
	gp_pw_u64(w, r->ngroups);
	for (size_t i = 0; i < r->ngroups; i++) {
		const struct gp_rep_group *g = &r->groups[i];
		gp_pw_str(w, g->name);
		gp_pw_str(w, g->long_name);
		const uint64_t v[] = { g->count, g->launch_ns, g->queue_ns, g->execute_ns, g->sync_ns, g->no_api,
				       g->no_gpu, g->sync_calls, g->bytes };
		for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
			gp_pw_u64(w, v[k]);
		gp_pw_u32(w, g->kinds);
		gp_pw_u64(w, g->pageable);
		gp_pw_u64(w, g->pageable_host);
		gp_pw_u64(w, g->sync_queue_ns);
		gp_prep_hist_save(w, &g->exec);
		gp_pw_u8(w, g->bound);
		gp_pw_u64(w, g->launch_raw_ns);
		const uint32_t c[] = { g->cfg.grid[0], g->cfg.grid[1], g->cfg.grid[2], g->cfg.block[0], g->cfg.block[1],
				       g->cfg.block[2], g->cfg.regs, g->cfg.static_smem, g->cfg.dynamic_smem,
				       g->cfg.sms };
		for (size_t k = 0; k < sizeof c / sizeof c[0]; k++)
			gp_pw_u32(w, c[k]);
		gp_pw_u64(w, g->cfg.launches);
		gp_pw_u64(w, g->cfg.others);
	}
	gp_pw_u64(w, r->nwindows);
	for (size_t i = 0; i < r->nwindows; i++) {
		const struct gp_rep_window *x = &r->windows[i];
		gp_pw_u64(w, x->start);
		gp_pw_u64(w, x->stop);
		gp_prep_int(w, x->open);
		gp_pw_u64(w, x->ops);
		gp_pw_u64(w, x->launch_ns);
		gp_pw_u64(w, x->execute_ns);
		gp_pw_i64(w, x->iter);
		gp_pw_u32(w, x->tid);
		gp_pw_i64(w, x->stop_iter);
		gp_pw_u32(w, x->stop_tid);
	}
	gp_pw_u64(w, r->niters);
	for (size_t i = 0; i < r->niters; i++) {
		const struct gp_rep_iter *it = &r->iters[i];
		gp_pw_i64(w, it->iter);
		gp_pw_u64(w, it->start);
		gp_pw_u64(w, it->end);
		gp_prep_int(w, it->open);
		gp_pw_u64(w, it->ops);
		gp_pw_u64(w, it->launch_ns);
		gp_pw_u64(w, it->queue_ns);
		gp_pw_u64(w, it->execute_ns);
		gp_pw_u64(w, it->sync_ns);
		gp_pw_u64(w, it->replayed);
	}
	gp_pw_u64(w, r->ncallsites);
	for (size_t i = 0; i < r->ncallsites; i++) {
		gp_pw_str(w, r->callsites[i].name);
		gp_pw_str(w, r->callsites[i].stack);
		gp_pw_u64(w, r->callsites[i].calls);
		gp_pw_u64(w, r->callsites[i].sync_ns);
	}
	gp_prep_int(w, r->group_by);
	gp_pw_u64(w, r->ngpu_clock); /* the GPU clock's offset (metrics.md §2) */
	for (size_t i = 0; i < r->ngpu_clock; i++) {
		const struct gp_rep_gpu_clock *c = &r->gpu_clock[i];
		gp_pw_u8(w, c->device);
		gp_pw_u8(w, (uint8_t)((c->has_lo ? 1 : 0) | (c->has_hi ? 2 : 0) | (c->raw ? 4 : 0)));
		const int64_t v[] = { c->lo_ns, c->hi_ns, c->offset_ns, c->first_ns, c->last_ns };
		for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
			gp_pw_i64(w, v[k]);
		gp_pw_u64(w, c->span_ns);
		gp_pw_u64(w, c->ops);
		gp_pw_u64(w, c->waits);
		gp_pw_u64(w, c->points);
	}
}

/* ---- load ---------------------------------------------------------------------- */

static int gp_prep_int_load(struct gp_pr *r)
{
	return (int)(int32_t)gp_pr_u32(r);
}

static void gp_prep_hist_load(struct gp_pr *r, struct gp_hist *h)
{
	h->n = gp_pr_u64(r);
	h->sum = gp_pr_u64(r);
	h->min = gp_pr_u64(r);
	h->max = gp_pr_u64(r);
	uint8_t mode = gp_pr_u8(r);
	if (r->err)
		return;
	if (mode == 1) {
		if (h->n > GP_HIST_EXACT || h->n > (r->n - r->off) / 8) {
			gp_pr_fail(r, "an execute distribution claims more exact samples than it can hold");
			return;
		}
		if (!(h->exact = malloc(GP_HIST_EXACT * sizeof *h->exact)))
			return gp_pr_oom(r);
		for (uint64_t i = 0; i < h->n; i++)
			h->exact[i] = gp_pr_u64(r);
	} else if (mode == 2) {
		size_t k = gp_pr_count(r, 12, GP_HIST_NBUCKETS);
		int64_t last = -1;
		for (size_t i = 0; i < k && !r->err; i++) {
			uint32_t b = gp_pr_u32(r);
			uint64_t c = gp_pr_u64(r);
			if (!r->err && (b >= GP_HIST_NBUCKETS || (int64_t)b <= last || !c))
				gp_pr_fail(r, "an execute distribution's buckets are out of order, out of range or empty");
			else if (!r->err && gp_hist_bucket_add(h, b, c))
				gp_pr_oom(r);
			last = b;
		}
	} else if (mode != 0) {
		gp_pr_fail(r, "an execute distribution of an unknown kind");
	}
}

/* n counts into v[ours]: counts this build does not know must be zero. */
static void gp_prep_counts_load(struct gp_pr *r, uint64_t *v, uint32_t ours, const char *what)
{
	uint32_t n = gp_pr_u32(r);
	if (!r->err && (n > GP_PR_MAX_COUNTS || (uint64_t)n * 8 > r->n - r->off)) {
		gp_pr_fail(r, "a list of counts overruns its chunk");
		return;
	}
	for (uint32_t i = 0; i < n && !r->err; i++) {
		uint64_t x = gp_pr_u64(r);
		if (i < ours) {
			v[i] = x;
		} else if (x) {
			char m[120];
			snprintf(m, sizeof m, "counts of %s this gpuphase-report does not know (made by a newer one?)", what);
			gp_pr_fail(r, m);
		}
	}
}

/* A table of n items of elem bytes (each at least min_size in the file). */
static void *gp_prep_table(struct gp_pr *r, size_t *n, size_t elem, size_t min_size)
{
	*n = gp_pr_count(r, min_size, GP_PR_MAX_ITEMS);
	if (r->err || !*n)
		return NULL;
	void *t = calloc(*n, elem);
	if (!t) {
		gp_pr_oom(r);
		*n = 0;
	}
	return t;
}

/* The trace: its path and key/values, process, start, devices, how the
 * recording went, and the record counts. */
static void gp_prep_load_trace(struct gp_pr *r, struct gp_rep *rep)
{
	int here;
	rep->path = gp_pr_strdup(r, NULL); /* NULL: records from memory (tests) */
	size_t nkv = 0;
	rep->kv = gp_prep_table(r, &nkv, sizeof *rep->kv, 8);
	for (size_t i = 0; i < nkv && !r->err; i++) {
		rep->kv[i].key = gp_pr_strdup(r, NULL);
		rep->kv[i].value = gp_pr_strdup(r, NULL);
		rep->nkv = i + 1;
	}
	rep->clock_id = gp_pr_u32(r);
	rep->pid = gp_pr_u32(r);
	rep->version = gp_pr_u32(r);
	rep->start_wall_ns = gp_pr_u64(r);
	rep->start_clock_ns = gp_pr_u64(r);
	size_t ndev = 0;
	rep->devices = gp_prep_table(r, &ndev, sizeof *rep->devices, 4);
	for (size_t i = 0; i < ndev && !r->err; i++) {
		rep->devices[i] = gp_pr_strdup(r, &here);
		rep->ndevices = i + 1;
		if (!r->err && !here)
			gp_pr_fail(r, "a device has no name");
	}
	rep->cupti_ok = gp_prep_int_load(r);
	rep->cupti_unavailable = gp_prep_int_load(r);
	rep->hooks_absent = gp_prep_int_load(r);
	rep->clock_calibrated = gp_prep_int_load(r);
	rep->size_cap = gp_prep_int_load(r);
	rep->forked = gp_prep_int_load(r);
	rep->live = gp_prep_int_load(r);
	rep->complete = gp_prep_int_load(r);
	rep->truncated_bytes = gp_pr_u64(r);
	rep->end_reason = (int32_t)gp_pr_u32(r);
	rep->write_errors = gp_pr_u64(r);
	rep->lost_after_stop = gp_pr_u64(r);
	rep->host_busy_pct = gp_pr_f64(r);
	rep->proc_cpu_pct = gp_pr_f64(r);
	rep->host_busy_max_pct = gp_pr_f64(r);
	rep->records = gp_pr_u64(r);
	gp_prep_counts_load(r, rep->rec_count, GP_REC_TYPE_COUNT, "record types");
}

/* The totals: drops, join counts, times, late waits, CUPTI's own cost
 * and the sync calls by class. */
static void gp_prep_load_totals(struct gp_pr *r, struct gp_rep *rep)
{
	uint64_t *counts[] = { &rep->dropped_ring, &rep->dropped_cupti, &rep->dropped_write, &rep->dropped_records,
			       &rep->ops, &rep->ops_joined, &rep->ops_no_api, &rep->ops_no_gpu, &rep->ops_end_missing,
			       &rep->ops_no_hook, &rep->hooks_unjoined, &rep->api_unjoined, &rep->evicted, &rep->launches_captured,
			       &rep->ops_replayed, &rep->replayed_ns };
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
		*counts[i] = gp_pr_u64(r);
	rep->join_coverage = gp_pr_f64(r);
	uint64_t *times[] = { &rep->t_first, &rep->t_last, &rep->wall_ns, &rep->gpu_busy_ns, &rep->gpu_idle_ns,
			      &rep->gpu_busy_sum_ns, &rep->gpu_busy_late, &rep->host_api_ns, &rep->covered_ns,
			      &rep->unattributed_ns, &rep->launch_ns, &rep->queue_ns, &rep->execute_ns, &rep->sync_ns,
			      &rep->sync_unattributed_ns, &rep->sync_unattributed_calls };
	for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
		*times[i] = gp_pr_u64(r);
	gp_prep_counts_load(r, rep->lost_by_class, GP_API_CLASS_COUNT, "API classes");
	rep->waits_late = gp_pr_u64(r);
	rep->queue_waits_late = gp_pr_u64(r);
	rep->queue_full_calls = gp_pr_u64(r);
	rep->queue_full_ns = gp_pr_u64(r);
	rep->startup_lost = gp_pr_u64(r);
	uint32_t unsettled = gp_pr_u32(r);
	if (!r->err && unsettled > GP_EXIT_DRAIN_ABANDONED)
		gp_pr_fail(r, "the exit's unsettled state is none the report knows");
	rep->exit_unsettled = (int)unsettled;
	rep->window_unopened = gp_pr_bool(r);
	int present = 0;
	char *why = gp_pr_strdup(r, &present);
	if (why) {
		snprintf(rep->window_unopened_why, sizeof rep->window_unopened_why, "%s", why);
		free(why);
	}
	uint32_t source = gp_pr_u32(r);
	if (!r->err && source > 2)
		gp_pr_fail(r, "the source of CUPTI's cost is none the report knows");
	rep->cupti.source = (int)source;
	uint64_t *cupti[] = { &rep->cupti.calls, &rep->cupti.in_calls_ns, &rep->cupti.launch_ns, &rep->cupti.sync_ns,
			      &rep->cupti.calib_dur_ns, &rep->cupti.calib_start, &rep->launch_raw_ns };
	for (size_t i = 0; i < sizeof cupti / sizeof cupti[0]; i++)
		*cupti[i] = gp_pr_u64(r);
	rep->cupti.calibrated = gp_pr_bool(r);
	uint32_t *calib[] = { &rep->cupti.calib_flags, &rep->cupti.calib_rt_ns, &rep->cupti.calib_drv_ns,
			      &rep->cupti.calib_launch_ns };
	for (size_t i = 0; i < sizeof calib / sizeof calib[0]; i++)
		*calib[i] = gp_pr_u32(r);
	gp_prep_counts_load(r, rep->sync_calls, GP_API_CLASS_COUNT, "API classes");
	gp_prep_counts_load(r, rep->sync_kind_ns, GP_API_CLASS_COUNT, "API classes");
}

/* The per-operator table. */
static void gp_prep_load_groups(struct gp_pr *r, struct gp_rep *rep)
{
	int here;
	size_t ng = 0;
	rep->groups = gp_prep_table(r, &ng, sizeof *rep->groups, 4 + 4 + 15 * 8 + 11 * 4 + 33 + 1);
	for (size_t i = 0; i < ng && !r->err; i++) {
		struct gp_rep_group *g = &rep->groups[i];
		rep->ngroups = i + 1;
		g->name = gp_pr_strdup(r, &here);
		if (!r->err && !here)
			gp_pr_fail(r, "an operator has no name");
		g->long_name = gp_pr_strdup(r, NULL);
		uint64_t *v[] = { &g->count, &g->launch_ns, &g->queue_ns, &g->execute_ns, &g->sync_ns, &g->no_api,
				  &g->no_gpu, &g->sync_calls, &g->bytes };
		for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
			*v[k] = gp_pr_u64(r);
		g->kinds = gp_pr_u32(r);
		g->pageable = gp_pr_u64(r);
		g->pageable_host = gp_pr_u64(r);
		g->sync_queue_ns = gp_pr_u64(r);
		gp_prep_hist_load(r, &g->exec);
		g->bound = gp_pr_u8(r);
		if (!r->err && g->bound > GP_REP_BOUND_MAX)
			gp_pr_fail(r, "an operator's roofline bound is none the report knows");
		g->launch_raw_ns = gp_pr_u64(r);
		uint32_t *c[] = { &g->cfg.grid[0], &g->cfg.grid[1], &g->cfg.grid[2], &g->cfg.block[0], &g->cfg.block[1],
				  &g->cfg.block[2], &g->cfg.regs, &g->cfg.static_smem, &g->cfg.dynamic_smem,
				  &g->cfg.sms };
		for (size_t k = 0; k < sizeof c / sizeof c[0]; k++)
			*c[k] = gp_pr_u32(r);
		g->cfg.launches = gp_pr_u64(r);
		g->cfg.others = gp_pr_u64(r);
	}
}

/* The time line: the trigger windows and the iterations. */
static void gp_prep_load_timeline(struct gp_pr *r, struct gp_rep *rep)
{
	rep->windows = gp_prep_table(r, &rep->nwindows, sizeof *rep->windows, 7 * 8 + 3 * 4);
	for (size_t i = 0; i < rep->nwindows && !r->err; i++) {
		struct gp_rep_window *x = &rep->windows[i];
		x->start = gp_pr_u64(r);
		x->stop = gp_pr_u64(r);
		x->open = gp_prep_int_load(r);
		x->ops = gp_pr_u64(r);
		x->launch_ns = gp_pr_u64(r);
		x->execute_ns = gp_pr_u64(r);
		x->iter = gp_pr_i64(r);
		x->tid = gp_pr_u32(r);
		x->stop_iter = gp_pr_i64(r);
		x->stop_tid = gp_pr_u32(r);
	}
	rep->iters = gp_prep_table(r, &rep->niters, sizeof *rep->iters, 9 * 8 + 4);
	for (size_t i = 0; i < rep->niters && !r->err; i++) {
		struct gp_rep_iter *it = &rep->iters[i];
		it->iter = gp_pr_i64(r);
		it->start = gp_pr_u64(r);
		it->end = gp_pr_u64(r);
		it->open = gp_prep_int_load(r);
		it->ops = gp_pr_u64(r);
		it->launch_ns = gp_pr_u64(r);
		it->queue_ns = gp_pr_u64(r);
		it->execute_ns = gp_pr_u64(r);
		it->sync_ns = gp_pr_u64(r);
		it->replayed = gp_pr_u64(r);
	}
}

/* The call sites, the grouping, and each device's GPU clock. */
static void gp_prep_load_sites_clocks(struct gp_pr *r, struct gp_rep *rep)
{
	int here;
	size_t nc = 0;
	rep->callsites = gp_prep_table(r, &nc, sizeof *rep->callsites, 4 + 4 + 16);
	for (size_t i = 0; i < nc && !r->err; i++) {
		struct gp_rep_callsite *c = &rep->callsites[i];
		rep->ncallsites = i + 1;
		c->name = gp_pr_strdup(r, &here);
		if (!r->err && !here)
			gp_pr_fail(r, "a call site has no name");
		c->stack = gp_pr_strdup(r, NULL);
		c->calls = gp_pr_u64(r);
		c->sync_ns = gp_pr_u64(r);
	}
	rep->group_by = gp_prep_int_load(r);
	if (!r->err && (rep->group_by < GP_REP_GROUP_BY_MIN || rep->group_by > GP_REP_GROUP_BY_MAX))
		gp_pr_fail(r, "the report's grouping is none the report knows"); /* the outputs index names by it */
	for (size_t i = 0; !r->err && rep->group_by == GP_GROUP_KERNEL && i < rep->ngroups; i++)
		rep->groups[i].category = gp_category_of(rep->groups[i].long_name, rep->groups[i].kinds); /* derived */
	size_t nc2 = 0;
	rep->gpu_clock = gp_prep_table(r, &nc2, sizeof *rep->gpu_clock, 2 + 5 * 8 + 4 * 8);
	for (size_t i = 0; i < nc2 && !r->err; i++) {
		struct gp_rep_gpu_clock *c = &rep->gpu_clock[i];
		rep->ngpu_clock = i + 1;
		c->device = gp_pr_u8(r);
		uint8_t f = gp_pr_u8(r);
		if (!r->err && f > 7)
			gp_pr_fail(r, "a GPU clock's flags are none the report knows");
		c->has_lo = (f & 1) != 0;
		c->has_hi = (f & 2) != 0;
		c->raw = (f & 4) != 0;
		int64_t *v[] = { &c->lo_ns, &c->hi_ns, &c->offset_ns, &c->first_ns, &c->last_ns };
		for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
			*v[k] = gp_pr_i64(r);
		c->span_ns = gp_pr_u64(r);
		c->ops = gp_pr_u64(r);
		c->waits = gp_pr_u64(r);
		c->points = gp_pr_u64(r);
	}
}

/* In the order gp_partial_rep_save wrote them; a stage after a failure
 * reads zeros (r->err is sticky) and allocates nothing. */
int gp_partial_rep_load(struct gp_pr *r, struct gp_rep *rep)
{
	memset(rep, 0, sizeof *rep);
	gp_prep_load_trace(r, rep);
	gp_prep_load_totals(r, rep);
	gp_prep_load_groups(r, rep);
	gp_prep_load_timeline(r, rep);
	gp_prep_load_sites_clocks(r, rep);
	if (r->err) {
		gp_rep_free(rep); /* what was read; the rest of each table is zeroed */
		return r->err;
	}
	return 0;
}

/* ---- the layout this file was written for -------------------------------------- */

/* x86-64 (LP64, glibc): the sizes when every field above was encoded. */
#define GP_PREP_SIZE_REP 1864u
#define GP_PREP_SIZE_GROUP 248u
#define GP_PREP_SIZE_ITER 80u
#define GP_PREP_SIZE_WINDOW 80u
#define GP_PREP_SIZE_CALLSITE 32u
#define GP_PREP_SIZE_KV 16u
#define GP_PREP_SIZE_GPU_CLOCK 88u

int gp_partial_rep_layout_ok(char *why, size_t n)
{
#if defined(__x86_64__) && defined(__LP64__)
	static const struct {
		const char *what;
		size_t size, known;
	} t[] = {
		{ "struct gp_rep", sizeof(struct gp_rep), GP_PREP_SIZE_REP },
		{ "struct gp_rep_group", sizeof(struct gp_rep_group), GP_PREP_SIZE_GROUP },
		{ "struct gp_rep_iter", sizeof(struct gp_rep_iter), GP_PREP_SIZE_ITER },
		{ "struct gp_rep_window", sizeof(struct gp_rep_window), GP_PREP_SIZE_WINDOW },
		{ "struct gp_rep_callsite", sizeof(struct gp_rep_callsite), GP_PREP_SIZE_CALLSITE },
		{ "struct gp_rep_kv", sizeof(struct gp_rep_kv), GP_PREP_SIZE_KV },
		{ "struct gp_rep_gpu_clock", sizeof(struct gp_rep_gpu_clock), GP_PREP_SIZE_GPU_CLOCK },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (t[i].size != t[i].known) {
			snprintf(why, n, "%s is %zu bytes, partial_rep.c encodes the %zu-byte one: a field was added or "
					 "changed; encode it in gp_partial_rep_save/load, bump GP_PARTIAL_VERSION, update "
					 "GP_PREP_SIZE_* and docs/partial-format.md", t[i].what, t[i].size, t[i].known);
			return 0;
		}
#else
	(void)why;
	(void)n;
#endif
	return 1;
}
