/*
 * output_json.c — a gp_rep as the report's JSON (docs/report-json.md): the
 * summary, the operators with their verdicts, iterations, windows, call
 * sites, ranks, and each trace's analyses ("analyses": each analysis writes
 * its own member, analyses/registry.h). Called by output.c's gp_out_report
 * on the report thread. Every string from the trace goes through
 * gp_fmt_json_str; every number is a field of gp_rep or a ratio of two.
 */
#include "report/util/fmt.h"
#include "output.h"
#include "window_empty.h"
#include "report/analyses/registry.h"
#include "report/core/category.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Sync call sites by blocked time. */
/* ", "stack": [frames]" of a call site (frames one a line); nothing if none. */
static void gp_out_json_category(FILE *f, uint8_t cat)
{
	const char *name = gp_category_name(cat);
	if (name)
		gp_fmt_json_str(f, name);
	else
		fputs("null", f);
}

/* The summary by category (metrics.md §22): every operator's sums, not only
 * those the list shows; null when operators are not kernels. */
static void gp_out_json_categories(FILE *f, const struct gp_rep *rep)
{
	if (rep->group_by != GP_GROUP_KERNEL) {
		fputs("null", f);
		return;
	}
	struct gp_category_sum sums[GP_CAT_MAX + 1];
	uint8_t ids[GP_CAT_MAX];
	gp_category_sums(rep, sums);
	size_t n = gp_category_order(sums, ids);
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		const struct gp_category_sum *c = &sums[ids[i]];
		fprintf(f, "%s\n  {\"category\": ", i ? "," : "");
		gp_out_json_category(f, ids[i]);
		fprintf(f, ", \"operators\": %" PRIu64 ", \"count\": %" PRIu64 ", \"launch_ns\": %" PRIu64
			   ", \"queue_ns\": %" PRIu64 ", \"execute_ns\": %" PRIu64 ", \"sync_ns\": %" PRIu64
			   ", \"total_ns\": %" PRIu64 "}",
			c->operators, c->count, c->launch_ns, c->queue_ns, c->execute_ns, c->sync_ns,
			c->launch_ns + c->execute_ns + c->sync_ns);
	}
	fputc(']', f);
}

static void gp_out_json_stack(FILE *f, const char *stack)
{
	if (!stack)
		return;
	fputs(", \"stack\": [", f);
	for (const char *p = stack, *nl;; p = nl + 1) {
		nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *frame = strndup(p, len);
		if (p != stack)
			fputs(", ", f);
		gp_fmt_json_str(f, frame ? frame : "?");
		free(frame);
		if (!nl)
			break;
	}
	fputc(']', f);
}

/* g NULL: the whole run's verdict (o: the what-if's priced advice). */
/* An operator's launch configuration (docs/report-json.md). */
static void gp_out_json_cfg(FILE *f, const struct gp_rep_launch_cfg *c)
{
	fprintf(f, "\"launch_config\": {\"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], \"registers_per_thread\": %u"
		   ", \"static_shared_memory\": %u, \"dynamic_shared_memory\": %u, \"blocks\": %" PRIu64
		   ", \"launches\": %" PRIu64 ", \"other_launches\": %" PRIu64 ", \"device_sms\": ",
		c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2], c->regs, c->static_smem,
		c->dynamic_smem, gp_rep_cfg_blocks(c), c->launches, c->others);
	if (c->sms)
		fprintf(f, "%u", c->sms);
	else
		fprintf(f, "null");
	fprintf(f, ", \"leaves_gpu_idle\": %s}, ", gp_rep_cfg_idle(c) ? "true" : "false");
}

static void gp_out_json_verdict(FILE *f, const struct gp_rep *rep, const struct gp_rep_group *g,
				const struct gp_out_opts *o, int run_graphs)
{
	const struct gp_thresholds *th = &o->th;
	uint64_t l = g ? g->launch_ns : rep->launch_ns, e = g ? g->execute_ns : rep->execute_ns;
	uint64_t s = g ? gp_rep_verdict_sync(g->sync_ns, g->sync_queue_ns) : gp_rep_verdict_sync(rep->sync_ns, rep->queue_full_ns);
	enum gp_verdict v = g ? gp_out_verdict(rep, g, th) : gp_verdict_of(l, e, s, th);
	char why[160];
	gp_verdict_reason(v, l, e, s, th, why, sizeof why);
	fprintf(f, "\"verdict\": \"%s\", \"verdict_reason\": ", gp_verdict_name(v));
	gp_fmt_json_str(f, why);
	fprintf(f, ", \"advice\": ");
	if (g) {
		gp_fmt_json_str(f, gp_out_advice_rg(rep, g, v, run_graphs));
		return;
	}
	gp_out_json_run_advice(f, rep, o, v);
}

static void gp_out_json_summary(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o)
{
	fprintf(f, "{\"wall_ns\": %" PRIu64 ", \"gpu_busy_ns\": %" PRIu64 ", \"gpu_idle_ns\": %" PRIu64
		   ", \"gpu_busy_sum_ns\": %" PRIu64 ", \"host_api_ns\": %" PRIu64 ", \"launch_ns\": %" PRIu64
		   ", \"queue_ns\": %" PRIu64 ", \"execute_ns\": %" PRIu64 ", \"sync_ns\": %" PRIu64
		   ", \"total_ns\": %" PRIu64 ", \"sync_unattributed_ns\": %" PRIu64
		   ", \"sync_unattributed_calls\": %" PRIu64 ", \"covered_ns\": %" PRIu64 ", \"unattributed_ns\": %" PRIu64
		   ", \"records\": %" PRIu64 ", \"dropped_records\": %" PRIu64 ", \"dropped\": {\"ring\": %" PRIu64
		   ", \"cupti\": %" PRIu64 ", \"write\": %" PRIu64 "}, \"ops\": %" PRIu64 ", \"ops_joined\": %" PRIu64
		   ", \"ops_no_api\": %" PRIu64 ", \"ops_no_gpu\": %" PRIu64 ", \"ops_end_missing\": %" PRIu64
		   ", \"hooks_unjoined\": %" PRIu64 ", \"api_unjoined\": %" PRIu64 ", \"launches_captured\": %" PRIu64
		   ", \"join_coverage\": %.6f"
		   ", \"complete\": %s, \"truncated_bytes\": %" PRIu64 ", \"cupti_unavailable\": %s"
		   ", \"gpu_busy_late_intervals\": %" PRIu64,
		rep->wall_ns, rep->gpu_busy_ns, rep->gpu_idle_ns, rep->gpu_busy_sum_ns, rep->host_api_ns, rep->launch_ns,
		rep->queue_ns, rep->execute_ns, rep->sync_ns, rep->launch_ns + rep->execute_ns + rep->sync_ns,
		rep->sync_unattributed_ns, rep->sync_unattributed_calls, rep->covered_ns, rep->unattributed_ns,
		rep->records, rep->dropped_records, rep->dropped_ring, rep->dropped_cupti, rep->dropped_write, rep->ops,
		rep->ops_joined, rep->ops_no_api, rep->ops_no_gpu, rep->ops_end_missing, rep->hooks_unjoined,
		rep->api_unjoined, rep->launches_captured, rep->join_coverage, rep->complete ? "true" : "false", rep->truncated_bytes,
		rep->cupti_unavailable ? "true" : "false", rep->gpu_busy_late);
	if (rep->startup_lost) /* absent when none, like the host figures */
		fprintf(f, ", \"startup_lost\": %" PRIu64, rep->startup_lost);
	if (rep->exit_unsettled)
		fprintf(f, ", \"exit_unsettled\": \"%s\"",
			rep->exit_unsettled == GP_EXIT_SYNC_SKIPPED ? "sync_skipped" : "abandoned");
	gp_out_json_window_empty(f, rep);
	if (rep->host_busy_pct >= 0)
		fprintf(f, ", \"host_cpu_busy_pct\": %.2f, \"host_cpu_busy_max_pct\": %.2f, \"process_cpu_pct\": %.2f",
			rep->host_busy_pct, rep->host_busy_max_pct, rep->proc_cpu_pct);
	if (rep->waits_late)
		fprintf(f, ", \"waits_late\": %" PRIu64, rep->waits_late);
	if (rep->queue_waits_late)
		fprintf(f, ", \"queue_waits_late\": %" PRIu64, rep->queue_waits_late);
	if (gp_out_attached(rep))
		fprintf(f, ", \"ops_no_hook\": %" PRIu64, rep->ops_no_hook);
	if (rep->ops_replayed)
		fprintf(f, ", \"ops_replayed\": %" PRIu64 ", \"replayed_ns\": %" PRIu64, rep->ops_replayed,
			rep->replayed_ns);
	if (!rep->complete && rep->cupti_ok) {
		/* a cut trace: calls whose GPU record was lost with the tail */
		static const char *const key[GP_API_CLASS_COUNT] = {
			[GP_API_LAUNCH] = "launch", [GP_API_MEMCPY_SYNC] = "memcpy_blocking",
			[GP_API_MEMCPY_ASYNC] = "memcpy_async", [GP_API_MEMSET_SYNC] = "memset_blocking",
			[GP_API_MEMSET_ASYNC] = "memset_async", [GP_API_GRAPH_LAUNCH] = "graph_launch",
		};
		if (rep->live)
			fprintf(f, ", \"live\": true");
		fprintf(f, ", \"lost_gpu_records\": {");
		for (int c = 0, n = 0; c < GP_API_CLASS_COUNT; c++)
			if (key[c] && rep->lost_by_class[c])
				fprintf(f, "%s\"%s\": %" PRIu64, n++ ? ", " : "", key[c], rep->lost_by_class[c]);
		fprintf(f, "}");
	}
	if (rep->nwindows) {
		fprintf(f, ", \"windows\": [");
		for (size_t i = 0; i < rep->nwindows; i++) {
			const struct gp_rep_window *w = &rep->windows[i];
			fprintf(f, "%s{\"start_ns\": %" PRIu64 ", \"stop_ns\": %" PRIu64 ", \"wall_ns\": %" PRIu64
				   ", \"open\": %s, \"ops\": %" PRIu64 ", \"launch_ns\": %" PRIu64 ", \"execute_ns\": %" PRIu64 "}",
				i ? ", " : "", w->start, w->stop, w->stop - w->start, w->open ? "true" : "false", w->ops,
				w->launch_ns, w->execute_ns);
		}
		fprintf(f, "]");
	}
	fprintf(f, ", \"sync_calls\": [");
	int first = 1;
	for (int k = 0; k < GP_API_CLASS_COUNT; k++) {
		if (!rep->sync_calls[k])
			continue;
		fprintf(f, "%s{\"kind\": \"%s\", \"count\": %" PRIu64 ", \"blocked_ns\": %" PRIu64 "}", first ? "" : ", ",
			gp_out_class_names[k], rep->sync_calls[k], rep->sync_kind_ns[k]);
		first = 0;
	}
	if (rep->queue_full_calls)
		fprintf(f, "%s{\"kind\": \"launch queue full\", \"count\": %" PRIu64 ", \"blocked_ns\": %" PRIu64 "}",
			first ? "" : ", ", rep->queue_full_calls, rep->queue_full_ns);
	fprintf(f, "], ");
	if (rep->cupti.source || rep->cupti.calibrated) {
		/* CUPTI's own cost taken out of the phases (metrics.md §3) */
		static const char *const src[] = { "none", "records", "calibration" };
		const struct gp_rep_cupti *c = &rep->cupti;
		if (c->source)
			fprintf(f, "\"launch_raw_ns\": %" PRIu64 ", ", rep->launch_raw_ns);
		fprintf(f, "\"cupti_cost\": {\"source\": \"%s\", \"calls\": %" PRIu64 ", \"in_calls_ns\": %" PRIu64
			   ", \"launch_ns\": %" PRIu64 ", \"sync_ns\": %" PRIu64, src[c->source > 2 ? 0 : c->source],
			c->calls, c->in_calls_ns, c->launch_ns, c->sync_ns);
		if (c->calibrated)
			fprintf(f, ", \"calibration\": {\"api\": %s, \"launch\": %s, \"runtime_ns\": %u, \"driver_ns\": %u"
				   ", \"launch_ns\": %u, \"start_ns\": %" PRIu64 ", \"duration_ns\": %" PRIu64 "}",
				(c->calib_flags & GP_CALIBF_API) ? "true" : "false",
				(c->calib_flags & GP_CALIBF_LAUNCH) ? "true" : "false", c->calib_rt_ns, c->calib_drv_ns,
				c->calib_launch_ns, c->calib_start, c->calib_dur_ns);
		fprintf(f, "}, ");
	}
	if (rep->ngpu_clock) {
		/* the GPU clock's offset from the host's (metrics.md §2) */
		fprintf(f, "\"gpu_clock\": [");
		for (size_t i = 0; i < rep->ngpu_clock; i++) {
			const struct gp_rep_gpu_clock *c = &rep->gpu_clock[i];
			fprintf(f, "%s{\"device\": %u, \"offset_ns\": %" PRId64, i ? ", " : "", c->device, c->offset_ns);
			if (c->has_lo)
				fprintf(f, ", \"lo_ns\": %" PRId64, c->lo_ns);
			if (c->has_hi)
				fprintf(f, ", \"hi_ns\": %" PRId64, c->hi_ns);
			fprintf(f, ", \"first_ns\": %" PRId64 ", \"last_ns\": %" PRId64 ", \"span_ns\": %" PRIu64
				   ", \"applied\": %s, \"from\": {\"ops\": %" PRIu64 ", \"waits\": %" PRIu64
				   ", \"points\": %" PRIu64 "}}",
				c->first_ns, c->last_ns, c->span_ns, c->raw ? "false" : "true", c->ops, c->waits, c->points);
		}
		fprintf(f, "], ");
	}
	gp_out_json_verdict(f, rep, NULL, o, gp_out_run_graphs(rep));
	fprintf(f, "}");
}

void gp_out_json(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o)
{
	fprintf(f, "{\n\"schema\": \"gpuphase-report\",\n\"schema_version\": %d,\n\"trace\": {\"path\": ",
		GP_REPORT_JSON_VERSION);
	gp_fmt_json_str(f, rep->path);
	fprintf(f, ", \"format_version\": %u, \"pid\": %u, \"clock_id\": %u, \"header\": {", rep->version, rep->pid,
		rep->clock_id);
	for (size_t i = 0; i < rep->nkv; i++) {
		fprintf(f, "%s", i ? ", " : "");
		gp_fmt_json_str(f, rep->kv[i].key);
		fprintf(f, ": ");
		gp_fmt_json_str(f, rep->kv[i].value);
	}
	fprintf(f, "}, \"devices\": [");
	for (size_t i = 0; i < rep->ndevices; i++) {
		fprintf(f, "%s", i ? ", " : "");
		gp_fmt_json_str(f, rep->devices[i]);
	}
	fprintf(f, "]},\n\"group_by\": \"%s\",\n\"thresholds\": {\"sync_pct\": %g, \"launch_pct\": %g, \"execute_pct\": %g, "
		   "\"min_pct\": %g},\n",
		gp_out_group_names[rep->group_by], o->th.sync_pct, o->th.launch_pct, o->th.execute_pct,
		o->th.min_share_pct);
	/* which operators the list holds: a reader (a checker) must know */
	fprintf(f, "\"filter\": ");
	if (o->filter && o->filter_src)
		gp_fmt_json_str(f, o->filter_src);
	else
		fprintf(f, "null");
	fprintf(f, ", \"top\": %zu,\n", o->top);
	fprintf(f, "\"summary\": ");
	gp_out_json_summary(f, rep, o);
	fprintf(f, ",\n\"operators\": [");
	size_t *sel, n = gp_out_select(rep, o, &sel);
	int rg = gp_out_run_graphs(rep); /* once: the advice of every operator reads it */
	for (size_t i = 0; sel && i < n; i++) {
		const struct gp_rep_group *g = &rep->groups[sel[i]];
		uint64_t t = gp_rep_group_total(g);
		fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
		gp_fmt_json_str(f, g->name);
		fprintf(f, ", \"long_name\": ");
		gp_fmt_json_str(f, g->long_name ? g->long_name : g->name);
		fprintf(f, ", \"category\": "); /* metrics.md §22 */
		gp_out_json_category(f, g->category);
		fprintf(f, ", \"count\": %" PRIu64 ", \"launch_ns\": %" PRIu64 ", \"queue_ns\": %" PRIu64
			   ", \"execute_ns\": %" PRIu64 ", \"sync_ns\": %" PRIu64 ", \"total_ns\": %" PRIu64
			   ", \"launch_share\": %.6f, \"execute_share\": %.6f, \"sync_share\": %.6f"
			   ", \"execute_mean_ns\": %" PRIu64 ", \"execute_p50_ns\": %" PRIu64 ", \"execute_p95_ns\": %" PRIu64
			   ", \"execute_p99_ns\": %" PRIu64 ", \"execute_max_ns\": %" PRIu64 ", \"sync_calls\": %" PRIu64
			   ", \"no_api\": %" PRIu64 ", \"no_gpu\": %" PRIu64 ", ",
			g->count, g->launch_ns, g->queue_ns, g->execute_ns, g->sync_ns, t,
			t ? (double)g->launch_ns / (double)t : 0, t ? (double)g->execute_ns / (double)t : 0,
			t ? (double)g->sync_ns / (double)t : 0, g->exec.n ? g->exec.sum / g->exec.n : 0,
			gp_hist_quantile(&g->exec, 0.5), gp_hist_quantile(&g->exec, 0.95), gp_hist_quantile(&g->exec, 0.99),
			g->exec.max, g->sync_calls, g->no_api, g->no_gpu);
		if (g->pageable)
			fprintf(f, "\"pageable_copies\": %" PRIu64 ", ", g->pageable);
		if (g->cfg.launches)
			gp_out_json_cfg(f, &g->cfg);
		if (g->pageable_host) /* the advice pins only these (metrics.md §5) */
			fprintf(f, "\"pageable_host_copies\": %" PRIu64 ", ", g->pageable_host);
		if (g->bound) /* metrics.md §21, only with counters */
			fprintf(f, "\"bound\": \"%s\", ", gp_bound_name(g->bound));
		if (rep->cupti.source) /* launch with CUPTI's own cost left in (metrics.md §3) */
			fprintf(f, "\"launch_raw_ns\": %" PRIu64 ", ", g->launch_raw_ns);
		gp_out_json_verdict(f, rep, g, o, rg);
		fprintf(f, "}");
	}
	free(sel);
	fprintf(f, "\n],\n\"categories\": ");
	gp_out_json_categories(f, rep);
	uint64_t p50 = 0, p99 = 0;
	uint8_t *ol = rep->niters ? calloc(rep->niters, 1) : NULL;
	gp_rep_iter_stats(rep, o->outlier_factor, &p50, &p99, ol);
	size_t nclosed = 0;
	for (size_t i = 0; i < rep->niters; i++)
		nclosed += !rep->iters[i].open;
	fprintf(f, ",\n\"iterations\": {\"count\": %zu, \"duration_p50_ns\": %" PRIu64 ", \"duration_p99_ns\": %" PRIu64
		   ", \"outlier_factor\": %g, \"closed\": %zu, \"items\": [",
		rep->niters, p50, p99, o->outlier_factor, nclosed);
	for (size_t i = 0; i < rep->niters; i++) {
		const struct gp_rep_iter *it = &rep->iters[i];
		fprintf(f, "%s\n  {\"iter\": %" PRId64 ", \"start_ns\": %" PRIu64 ", \"duration_ns\": %" PRIu64
			   ", \"ops\": %" PRIu64 ", \"launch_ns\": %" PRIu64 ", \"queue_ns\": %" PRIu64 ", \"execute_ns\": %" PRIu64
			   ", \"sync_ns\": %" PRIu64 ", \"outlier\": %s, \"open\": %s",
			i ? "," : "", it->iter, it->start, it->end - it->start, it->ops, it->launch_ns, it->queue_ns,
			it->execute_ns, it->sync_ns, ol && ol[i] ? "true" : "false", it->open ? "true" : "false");
		if (it->replayed) /* metrics.md §20: its duration holds the replays */
			fprintf(f, ", \"replayed\": %" PRIu64, it->replayed);
		fputc('}', f);
	}
	free(ol);
	fprintf(f, "]},\n\"sync_callsites\": [");
	for (size_t i = 0; i < rep->ncallsites; i++) {
		fprintf(f, "%s{\"site\": ", i ? ", " : "");
		gp_fmt_json_str(f, rep->callsites[i].name);
		fprintf(f, ", \"calls\": %" PRIu64 ", \"blocked_ns\": %" PRIu64, rep->callsites[i].calls,
			rep->callsites[i].sync_ns);
		gp_out_json_stack(f, rep->callsites[i].stack);
		fputc('}', f);
	}
	fprintf(f, "],\n\"ranks\": [");
	uint8_t *fl = rep->nranks ? calloc(rep->nranks, 1) : NULL;
	if (fl)
		gp_rep_stragglers(rep, o->straggler_pct, fl);
	for (size_t i = 0; i < rep->nranks; i++) {
		const struct gp_rep *r = &rep->ranks[i];
		fprintf(f, "%s\n  {\"path\": ", i ? "," : "");
		gp_fmt_json_str(f, r->path);
		fprintf(f, ", \"busy_ns\": %" PRIu64 ", \"straggler\": %s, \"summary\": ", gp_rep_rank_busy(r),
			fl && fl[i] ? "true" : "false");
		gp_out_json_summary(f, r, o);
		fprintf(f, "}");
	}
	free(fl);
	fprintf(f, "],\n");
	if (o->job_analyses) { /* one job: its analyses across the ranks */
		struct gp_analysis_style js = { .markdown = 0, .outlier_factor = o->outlier_factor };
		fprintf(f, "\"job_analyses\": {\"path\": ");
		gp_fmt_json_str(f, rep->path);
		gp_analyses_json(f, o->job_analyses, rep, &js);
		fprintf(f, "},\n");
	}
	fprintf(f, "\"analyses\": [");
	struct gp_analysis_style style = { .markdown = 0, .outlier_factor = o->outlier_factor };
	for (size_t x = 0, na = 0; x < o->ntraces; x++) {
		const struct gp_rep *r = gp_out_trace_rep(rep, o, x);
		if (!r || !o->analyses[x])
			continue;
		fprintf(f, "%s\n  {\"path\": ", na++ ? "," : "");
		gp_fmt_json_str(f, r->path);
		gp_analyses_json(f, o->analyses[x], r, &style);
		fputs("}", f);
	}
	fprintf(f, "]\n}\n");
}
