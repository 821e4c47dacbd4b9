/*
 * analysis_finish.c — the analysis core's finish (analysis.h): flush the
 * join, charge the waits still open, and fill a gp_rep with the aggregates —
 * window, GPU busy, host time, join counters, capture conditions, devices,
 * operators (their printed names from the string table) and iterations.
 * Called once per trace by the pipeline, after pass 2; the analyser may be
 * freed afterwards (the report owns everything in it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"
#include "category.h"

static char *gp_an_strdup(struct gp_an *an, const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		gp_an_fail(an, -ENOMEM);
	return d;
}

/* Window, GPU busy, host time, join counters and capture conditions. */
static void gp_an_finish_window(struct gp_an *an, struct gp_rep *rep)
{
	rep->records = an->records;
	memcpy(rep->rec_count, an->rec_count, sizeof rep->rec_count);
	rep->t_first = an->win_start ? an->win_start : (an->t_first == UINT64_MAX ? 0 : an->t_first);
	rep->t_last = an->win_stop ? an->win_stop : an->t_last;
	if (an->t_first != UINT64_MAX && an->t_first < rep->t_first)
		rep->t_first = an->t_first; /* records before the START mark */
	if (an->t_last > rep->t_last)
		rep->t_last = an->t_last;
	rep->wall_ns = rep->t_last > rep->t_first ? rep->t_last - rep->t_first : 0;
	if (an->nwins) {
		/* a windowed capture: the window(s) only, not the records written
		 * outside them (iteration marks, NVTX, host samples) nor the gaps */
		rep->t_first = an->wins[0].start;
		rep->t_last = an->wins[an->nwins - 1].stop;
		rep->wall_ns = 0;
		for (size_t i = 0; i < an->nwins; i++)
			rep->wall_ns += an->wins[i].stop - an->wins[i].start;
		rep->windows = malloc(an->nwins * sizeof *rep->windows);
		if (!rep->windows)
			return gp_an_fail(an, -ENOMEM);
		memcpy(rep->windows, an->wins, an->nwins * sizeof *rep->windows);
		rep->nwindows = an->nwins;
	}
	unsigned ndev = 0;
	for (unsigned d = 0; d < 256; d++) {
		if (!an->busy_used[d])
			continue;
		ndev++;
		rep->gpu_busy_ns += gp_sweep_finish(&an->busy[d]);
		rep->gpu_busy_late += an->busy[d].late;
	}
	uint64_t span = rep->wall_ns * ndev;
	rep->gpu_idle_ns = span > rep->gpu_busy_ns ? span - rep->gpu_busy_ns : 0;
	rep->gpu_busy_sum_ns = an->busy_sum;
	rep->covered_ns = gp_sweep_finish(&an->covered);
	rep->unattributed_ns = rep->wall_ns > rep->covered_ns ? rep->wall_ns - rep->covered_ns : 0;
	rep->host_api_ns = an->rec_count[GP_REC_RUNTIME_API] ? an->host_runtime_ns + an->host_driver_direct
			   : an->rec_count[GP_REC_DRIVER_API] ? an->host_driver_ns : an->host_hook_ns;
	rep->launch_ns = an->launch;
	rep->queue_ns = an->queue;
	rep->execute_ns = an->exec;
	rep->ops = an->ops;
	rep->ops_joined = an->ops_joined;
	rep->ops_no_api = an->ops_no_api;
	rep->ops_no_hook = an->ops_no_hook;
	rep->ops_no_gpu = an->ops_no_gpu;
	rep->ops_end_missing = an->ops_end_missing;
	rep->hooks_unjoined = an->hooks_unjoined;
	rep->launches_captured = an->launches_captured;
	rep->ops_replayed = an->replayed_ops;
	rep->replayed_ns = an->replayed_ns;
	rep->api_unjoined = an->api_unjoined;
	for (int c = 0; c < GP_API_CLASS_COUNT; c++) /* a call may have both */
		rep->lost_by_class[c] = an->hooks_unjoined_cls[c] > an->api_unjoined_cls[c] ? an->hooks_unjoined_cls[c]
											: an->api_unjoined_cls[c];
	rep->evicted = an->evicted;
	rep->join_coverage = an->ops ? (double)an->ops_joined / (double)an->ops : 1.0;
}

/* Capture conditions: status records, host samples, drops. */
static void gp_an_finish_conditions(struct gp_an *an, struct gp_rep *rep)
{
	rep->cupti_ok = an->status[GP_STATUS_CUPTI_OK];
	rep->cupti_unavailable = an->hook_only;
	rep->hooks_absent = an->status[GP_STATUS_HOOKS_ABSENT];
	rep->clock_calibrated = an->status[GP_STATUS_CLOCK_CALIBRATED];
	rep->size_cap = an->status[GP_STATUS_SIZE_CAP];
	rep->forked = an->status[GP_STATUS_FORKED_CHILD];
	rep->startup_lost = an->startup_lost;
	rep->exit_unsettled = an->exit_unsettled;
	rep->window_unopened = an->window_unopened;
	const char *why = an->window_unopened_why ? gp_an_string(an, an->window_unopened_why) : NULL;
	if (why)
		snprintf(rep->window_unopened_why, sizeof rep->window_unopened_why, "%s", why);
	rep->host_busy_pct = an->host_w > 0 ? an->host_busy_w / an->host_w : -1;
	rep->proc_cpu_pct = an->host_w > 0 ? an->host_proc_w / an->host_w : -1;
	rep->host_busy_max_pct = an->host_w > 0 ? an->host_max : -1;
	size_t pos = 0;
	uint64_t k, v;
	while (gp_map_next(&an->drops, &pos, &k, &v)) {
		unsigned src = (unsigned)(k >> 32);
		if (src == GP_DROP_RING)
			rep->dropped_ring += v;
		else if (src == GP_DROP_CUPTI)
			rep->dropped_cupti += v;
		else
			rep->dropped_write += v;
	}
	rep->dropped_records = rep->dropped_ring + rep->dropped_cupti + rep->dropped_write;
}

static int gp_an_finish_devices(struct gp_an *an, struct gp_rep *rep)
{
	for (unsigned d = 0; d < 256; d++) {
		if (!an->dev[d].present)
			continue;
		char buf[256];
		const char *nm = gp_an_string(an, an->dev[d].name);
		snprintf(buf, sizeof buf, "%u: %s (cc %u.%u, %u SMs)", d, nm ? nm : "?", an->dev[d].ccmaj,
			 an->dev[d].ccmin, an->dev[d].sms);
		char **nd = realloc(rep->devices, (rep->ndevices + 1) * sizeof *nd);
		if (!nd)
			return gp_an_fail(an, -ENOMEM), an->err;
		rep->devices = nd;
		rep->devices[rep->ndevices++] = gp_an_strdup(an, buf);
	}
	return 0;
}

static int gp_an_finish_groups(struct gp_an *an, struct gp_rep *rep)
{
	rep->groups = calloc(an->ngroups ? an->ngroups : 1, sizeof *rep->groups);
	if (!rep->groups)
		return gp_an_fail(an, -ENOMEM), an->err;
	for (size_t i = 0; i < an->ngroups; i++) {
		struct gp_group *g = &an->groups[i];
		struct gp_rep_group *o = &rep->groups[i];
		if (g->name_str != GP_NONE32) {
			if (an->cfg.group_by == GP_GROUP_KERNEL) {
				int err = 0;
				o->name = gp_an_strdup(an, gp_an_short(an, g->name_str));
				o->long_name = gp_an_strdup(an, gp_strtab_long(an->strings, g->name_str, &err));
				gp_an_fail(an, err);
			} else {
				o->name = gp_an_strdup(an, gp_strtab_text(an->strings, g->name_str));
				o->long_name = gp_an_strdup(an, o->name);
			}
		} else {
			o->name = gp_an_strdup(an, g->name);
			o->long_name = gp_an_strdup(an, g->name);
		}
		if (an->cfg.group_by == GP_GROUP_KERNEL) /* once per operator */
			o->category = gp_category_of(o->long_name, g->kinds);
		o->count = g->count;
		o->launch_ns = g->launch;
		o->launch_raw_ns = g->launch_raw;
		o->queue_ns = g->queue;
		o->execute_ns = g->exec;
		o->sync_ns = g->sync;
		o->no_api = g->no_api;
		o->no_gpu = g->no_gpu;
		o->sync_calls = g->sync_calls;
		o->kinds = g->kinds;
		o->bytes = g->bytes;
		o->pageable = g->pageable;
		o->cfg = g->cfg;
		o->pageable_host = g->pageable_host;
		o->sync_queue_ns = g->sync_queue;
		o->exec = g->hist; /* ownership moves */
		memset(&g->hist, 0, sizeof g->hist);
	}
	rep->ngroups = an->ngroups;
	rep->group_by = an->cfg.group_by;
	return 0;
}

static int gp_an_finish_iters(struct gp_an *an, struct gp_rep *rep)
{
	if (!an->niters)
		return 0;
	rep->iters = calloc(an->niters, sizeof *rep->iters);
	if (!rep->iters)
		return gp_an_fail(an, -ENOMEM), an->err;
	size_t n = 0;
	for (size_t i = 0; i < an->niters; i++) {
		struct gp_iterx *it = &an->iters[i];
		if (!it->captured && !it->ops)
			continue; /* outside every capture window (metrics.md §7) */
		rep->iters[n++] = (struct gp_rep_iter){ .iter = it->iter, .start = it->start, .end = it->end,
							.ops = it->ops, .launch_ns = it->launch,
							.queue_ns = it->queue, .execute_ns = it->exec,
							.sync_ns = it->sync, .open = i + 1 == an->niters,
							.replayed = it->replayed };
	}
	rep->niters = n;
	return 0;
}

int gp_an_finish(struct gp_an *an, struct gp_rep *rep)
{
	if (an->err)
		return an->err;
	gp_an_hook_done(an);     /* the last record's hook */
	gp_join_flush(an);       /* every op arrived */
	gp_sync_finish(an, rep); /* every wait charged */
	gp_fold_flush(an);       /* every op folded */
	gp_cost_finish(an, rep);
	gp_an_fail(an, gp_gpu_clock_finish(an, rep));
	gp_an_finish_window(an, rep);
	gp_an_finish_conditions(an, rep);
	if (gp_an_finish_devices(an, rep) || gp_an_finish_groups(an, rep) || gp_an_finish_iters(an, rep))
		return an->err;
	return an->err;
}
