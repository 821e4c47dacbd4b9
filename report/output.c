/*
 * output.c — renders a gp_rep as text, markdown, csv or json, and the diff
 * of two reports (see output.h); json also carries each trace's analyses
 * ("analyses": each analysis writes its own member, analyses.h).
 * Called by main.c on the report thread.
 * Every number printed is a field of gp_rep or a ratio of two of them;
 * docs/metrics.md names the field behind each column.
 */
#include "fmt.h"
#include "output.h"
#include "analyses.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const gp_out_class_names[GP_API_CLASS_COUNT] = {
	[GP_API_OTHER] = "other", [GP_API_LAUNCH] = "launch", [GP_API_MEMCPY_SYNC] = "memcpy (blocking)",
	[GP_API_MEMCPY_ASYNC] = "memcpy async", [GP_API_MEMSET_SYNC] = "memset (blocking)",
	[GP_API_MEMSET_ASYNC] = "memset async", [GP_API_SYNC_DEVICE] = "device synchronize",
	[GP_API_SYNC_STREAM] = "stream synchronize", [GP_API_SYNC_EVENT] = "event synchronize",
	[GP_API_GRAPH_LAUNCH] = "graph launch", [GP_API_HOST_FUNC] = "host func", [GP_API_PROFILER] = "profiler",
};

static const char *const gp_out_group_names[] = { "kernel", "nvtx", "callsite", "stream", "phase" };

static const struct gp_rep *gp_sort_rep;
static enum gp_sort gp_sort_key;

static uint64_t gp_out_sortval(const struct gp_rep_group *g)
{
	switch (gp_sort_key) {
	case GP_SORT_LAUNCH: return g->launch_ns;
	case GP_SORT_QUEUE: return g->queue_ns;
	case GP_SORT_EXECUTE: return g->execute_ns;
	case GP_SORT_SYNC: return g->sync_ns;
	case GP_SORT_COUNT: return g->count;
	default: return gp_rep_group_total(g);
	}
}

static int gp_out_cmp(const void *a, const void *b)
{
	const struct gp_rep_group *x = &gp_sort_rep->groups[*(const size_t *)a];
	const struct gp_rep_group *y = &gp_sort_rep->groups[*(const size_t *)b];
	if (gp_sort_key == GP_SORT_NAME)
		return strcmp(x->name, y->name);
	uint64_t vx = gp_out_sortval(x), vy = gp_out_sortval(y);
	if (vx != vy)
		return vx > vy ? -1 : 1;
	return strcmp(x->name, y->name);
}

size_t gp_out_select(const struct gp_rep *rep, const struct gp_out_opts *o, size_t **out)
{
	size_t *idx = malloc((rep->ngroups ? rep->ngroups : 1) * sizeof *idx), n = 0;
	*out = idx;
	if (!idx)
		return 0;
	for (size_t i = 0; i < rep->ngroups; i++)
		if (!o->filter || regexec(o->filter, rep->groups[i].name, 0, NULL, 0) == 0 ||
		    regexec(o->filter, rep->groups[i].long_name ? rep->groups[i].long_name : "", 0, NULL, 0) == 0)
			idx[n++] = i;
	gp_sort_rep = rep;
	gp_sort_key = o->sort;
	qsort(idx, n, sizeof *idx, gp_out_cmp);
	if (o->top && n > o->top)
		n = o->top;
	return n;
}

static const char *gp_out_kv(const struct gp_rep *rep, const char *key)
{
	for (size_t i = 0; i < rep->nkv; i++)
		if (!strcmp(rep->kv[i].key, key))
			return rep->kv[i].value;
	return NULL;
}

/* --- text and markdown ----------------------------------------------------------------- */

static void gp_out_missing(FILE *f, const struct gp_rep *rep, const char *lead)
{
	if (rep->cupti_unavailable)
		fprintf(f, "%sCUPTI was unavailable (hook-only capture): queue, execute and sync cannot be "
			   "measured; launch is the hooked call's whole duration\n", lead);
	if (rep->dropped_records)
		fprintf(f, "%s%" PRIu64 " records were dropped (ring %" PRIu64 ", CUPTI %" PRIu64 ", write %" PRIu64
			   "): sums are lower bounds\n", lead, rep->dropped_records, rep->dropped_ring,
			rep->dropped_cupti, rep->dropped_write);
	if (rep->ops_no_api)
		fprintf(f, "%s%" PRIu64 " ops have no API record: their launch and queue are unknown (counted as 0)\n",
			lead, rep->ops_no_api);
	if (rep->ops_end_missing)
		fprintf(f, "%s%" PRIu64 " ops have no end time (forced flush): their execute is unknown\n", lead,
			rep->ops_end_missing);
	if (rep->hooks_unjoined)
		fprintf(f, "%s%" PRIu64 " hooked launches never joined a CUPTI record\n", lead, rep->hooks_unjoined);
	if (rep->api_unjoined)
		fprintf(f, "%s%" PRIu64 " launch calls never produced a GPU op record\n", lead, rep->api_unjoined);
	if (!rep->complete)
		fprintf(f, "%sthe trace has no footer (cut off%s%" PRIu64 " bytes after the last whole block): "
			   "data after that point is lost\n", lead, rep->truncated_bytes ? ", " : "",
			rep->truncated_bytes);
	if (rep->clock_calibrated)
		fprintf(f, "%sCUPTI refused the trace clock: GPU times were shifted by a calibrated offset\n", lead);
	if (rep->size_cap)
		fprintf(f, "%sthe size cap stopped capture early\n", lead);
	if (rep->end_reason && rep->write_errors)
		fprintf(f, "%scapture ended early: writing the trace failed (%s)%s; the trace holds the data "
			   "written before that\n", lead, strerror(-rep->end_reason),
			rep->end_reason == -ENOSPC ? ": the disk is full"
			: rep->end_reason == -EFBIG ? ": the file size limit (ulimit -f) was reached" : "");
	if (rep->lost_after_stop)
		fprintf(f, "%s%" PRIu64 " records captured after that were not written\n", lead, rep->lost_after_stop);
	if (rep->gpu_busy_late)
		fprintf(f, "%s%" PRIu64 " GPU intervals arrived too far out of order: GPU busy may be under-counted\n",
			lead, rep->gpu_busy_late);
}

/* The header and the capture conditions. */
static void gp_out_text_capture(FILE *f, const struct gp_rep *rep, int md)
{
	const char *h = md ? "## " : "";
	/* header */
	fprintf(f, "%sgpuphase report: %s\n\n", md ? "# " : "", rep->path ? rep->path : "?");
	const char *keys[] = { "cmdline", "host", "gpu0", "driver", "cuda_runtime", "cuda_driver", "window",
			       "marker", NULL };
	fprintf(f, "%sCapture\n%s", h, md ? "\n" : "");
	for (int i = 0; keys[i]; i++) {
		const char *v = gp_out_kv(rep, keys[i]);
		if (v)
			fprintf(f, "%s%-14s %s\n", md ? "- " : "  ", keys[i], v);
	}
	for (size_t i = 0; i < rep->ndevices; i++)
		fprintf(f, "%s%-14s %s\n", md ? "- " : "  ", "device", rep->devices[i]);
	fprintf(f, "%s%-14s %s\n", md ? "- " : "  ", "clock",
		rep->clock_id == 4 ? "CLOCK_MONOTONIC_RAW" : rep->clock_id == 1 ? "CLOCK_MONOTONIC"
							   : rep->clock_id == 0 ? "CLOCK_REALTIME" : "other");
	if (rep->nranks > 1)
		fprintf(f, "%s%-14s %zu traces merged\n", md ? "- " : "  ", "inputs", rep->nranks);
	fprintf(f, "%s%-14s %" PRIu64 " records, %" PRIu64 " ops (%" PRIu64 " joined: coverage %.1f%%), ", md ? "- " : "  ",
		"counts", rep->records, rep->ops, rep->ops_joined, 100.0 * rep->join_coverage);
	if (rep->launches_captured) /* metrics.md §1: enqueue nothing, so in no op */
		fprintf(f, "%" PRIu64 " launches captured into CUDA graphs, ", rep->launches_captured);
	fprintf(f, "%" PRIu64 " dropped\n", rep->dropped_records);
	if (rep->host_busy_pct >= 0)
		fprintf(f, "%s%-14s host CPU busy %.1f%% (max %.1f%%), this process %.1f%% of one CPU%s\n",
			md ? "- " : "  ", "host load", rep->host_busy_pct, rep->host_busy_max_pct, rep->proc_cpu_pct,
			rep->host_busy_pct > 80 ? " -- host was loaded: launch times are inflated" : "");
	gp_out_missing(f, rep, md ? "- note: " : "  note: ");
}

/* The window summary and the whole run's verdict. */
static void gp_out_text_window(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o, int md)
{
	char b1[32], b2[32], b3[32], b4[32];
	const char *h = md ? "## " : "", *li = md ? "- " : "  ";
	/* window summary */
	uint64_t tot = rep->launch_ns + rep->execute_ns + rep->sync_ns;
	fprintf(f, "\n%sWindow\n%s", h, md ? "\n" : "");
	fprintf(f, "%swall %s, GPU busy %s (%.1f%%; plain sum of op times %s), GPU idle %s\n", li,
		gp_fmt_dur(rep->wall_ns, b1, 32), gp_fmt_dur(rep->gpu_busy_ns, b2, 32),
		gp_fmt_pct(rep->gpu_busy_ns, rep->wall_ns), gp_fmt_dur(rep->gpu_busy_sum_ns, b3, 32),
		gp_fmt_dur(rep->gpu_idle_ns, b4, 32));
	fprintf(f, "%shost time inside CUDA calls %s\n", li, gp_fmt_dur(rep->host_api_ns, b1, 32));
	fprintf(f, "%sphases over all ops: launch %s (%.1f%%), execute %s (%.1f%%), sync %s (%.1f%%); queue %s\n", li,
		gp_fmt_dur(rep->launch_ns, b1, 32), gp_fmt_pct(rep->launch_ns, tot),
		gp_fmt_dur(rep->execute_ns, b2, 32), gp_fmt_pct(rep->execute_ns, tot),
		gp_fmt_dur(rep->sync_ns, b3, 32), gp_fmt_pct(rep->sync_ns, tot), gp_fmt_dur(rep->queue_ns, b4, 32));
	fprintf(f, "%ssync with nothing outstanding %s in %" PRIu64 " calls\n", li,
		gp_fmt_dur(rep->sync_unattributed_ns, b1, 32), rep->sync_unattributed_calls);
	fprintf(f, "%sunattributed (no op launching, running or waited for) %s (%.1f%% of wall)\n", li,
		gp_fmt_dur(rep->unattributed_ns, b1, 32), gp_fmt_pct(rep->unattributed_ns, rep->wall_ns));
	for (int k = 0; k < GP_API_CLASS_COUNT; k++)
		if (rep->sync_calls[k])
			fprintf(f, "%ssync calls: %-20s %6" PRIu64 " calls, blocked %s\n", li, gp_out_class_names[k],
				rep->sync_calls[k], gp_fmt_dur(rep->sync_kind_ns[k], b1, 32));
	enum gp_verdict rv = gp_verdict_of(rep->launch_ns, rep->execute_ns, rep->sync_ns, &o->th);
	char why[160];
	gp_verdict_reason(rv, rep->launch_ns, rep->execute_ns, rep->sync_ns, &o->th, why, sizeof why);
	fprintf(f, "%sverdict (whole run): %s%s%s (%s)\n", li, md ? "**" : "", gp_verdict_name(rv), md ? "**" : "",
		why);
	if (*gp_verdict_advice(rv))
		fprintf(f, "%sadvice: %s\n", li, gp_verdict_advice(rv));
}

/* The operator table and the verdicts of the operators shown. */
static void gp_out_text_ops(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o, int md)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32], b8[32], b9[32], b10[32], why[160];
	const char *h = md ? "## " : "", *li = md ? "- " : "  ";
	/* operator table */
	size_t *sel, n = gp_out_select(rep, o, &sel);
	fprintf(f, "\n%sOperators (by %s, grouped by %s%s)\n\n", h,
		(const char *[]){ "total", "launch", "queue", "execute", "sync", "count", "name" }[o->sort],
		gp_out_group_names[rep->group_by], o->top ? ", top N" : "");
	if (md) {
		fprintf(f, "| operator | count | total | launch | launch %% | execute | execute %% | sync | sync %% | "
			   "queue | exec mean | p50 | p95 | p99 | max | verdict |\n");
		fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
	} else {
		/* 159 columns: fits a 160-column terminal */
		fprintf(f, "%-28s %7s %8s %8s %5s %8s %5s %8s %5s %8s %8s %8s %8s %8s %8s  %s\n", "operator", "count",
			"total", "launch", "%", "execute", "%", "sync", "%", "queue", "ex mean", "ex p50", "ex p95",
			"ex p99", "ex max", "verdict");
	}
	for (size_t i = 0; sel && i < n; i++) {
		const struct gp_rep_group *g = &rep->groups[sel[i]];
		uint64_t t = gp_rep_group_total(g);
		enum gp_verdict v = gp_verdict_of(g->launch_ns, g->execute_ns, g->sync_ns, &o->th);
		uint64_t mean = g->exec.n ? g->exec.sum / g->exec.n : 0;
		gp_fmt_dur(t, b1, 32);
		gp_fmt_dur(g->launch_ns, b2, 32);
		gp_fmt_dur(g->execute_ns, b3, 32);
		gp_fmt_dur(g->sync_ns, b4, 32);
		gp_fmt_dur(g->queue_ns, b5, 32);
		gp_fmt_dur(mean, b6, 32);
		gp_fmt_dur(gp_hist_quantile(&g->exec, 0.50), b7, 32);
		gp_fmt_dur(gp_hist_quantile(&g->exec, 0.95), b8, 32);
		gp_fmt_dur(gp_hist_quantile(&g->exec, 0.99), b9, 32);
		gp_fmt_dur(g->exec.max, b10, 32);
		if (md) {
			fprintf(f, "| ");
			gp_fmt_md_str(f, g->name);
			fprintf(f, " | %" PRIu64 " | %s | %s | %.1f | %s | %.1f | %s | %.1f | %s | %s | %s | %s | %s | %s | %s |\n",
				g->count, b1, b2, gp_fmt_pct(g->launch_ns, t), b3, gp_fmt_pct(g->execute_ns, t), b4,
				gp_fmt_pct(g->sync_ns, t), b5, b6, b7, b8, b9, b10, gp_verdict_name(v));
		} else {
			char nm[40], p1[16], p2[16], p3[16];
			fprintf(f, "%-28s %7" PRIu64 " %8s %8s %5s %8s %5s %8s %5s %8s %8s %8s %8s %8s %8s  %s\n",
				gp_fmt_cut(g->name, 28, nm, sizeof nm), g->count, b1, b2,
				gp_fmt_pctcol(g->launch_ns, t, p1, sizeof p1), b3,
				gp_fmt_pctcol(g->execute_ns, t, p2, sizeof p2), b4,
				gp_fmt_pctcol(g->sync_ns, t, p3, sizeof p3), b5, b6, b7, b8, b9, b10, gp_verdict_name(v));
		}
	}
	/* verdict details for shown operators that crossed a threshold */
	int first = 1;
	for (size_t i = 0; sel && i < n; i++) {
		const struct gp_rep_group *g = &rep->groups[sel[i]];
		enum gp_verdict v = gp_verdict_of(g->launch_ns, g->execute_ns, g->sync_ns, &o->th);
		if (v == GP_VERDICT_NONE || v == GP_VERDICT_BALANCED)
			continue;
		if (first)
			fprintf(f, "\n%sVerdicts\n%s", h, md ? "\n" : "");
		first = 0;
		gp_verdict_reason(v, g->launch_ns, g->execute_ns, g->sync_ns, &o->th, why, sizeof why);
		fprintf(f, "%s%s: %s (%s): %s\n", li, g->name, gp_verdict_name(v), why, gp_verdict_advice(v));
		if (g->no_api || g->no_gpu)
			fprintf(f, "%s  (%" PRIu64 " of %" PRIu64 " calls lack an API record, %" PRIu64 " lack GPU times)\n",
				li, g->no_api, g->count, g->no_gpu);
	}
	free(sel);
}

/* Sync call sites by blocked time. */
/* ", "stack": [frames]" of a call site (frames one a line); nothing if none. */
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

static void gp_out_text_callsites(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o, int md)
{
	char b1[32];
	const char *h = md ? "## " : "", *li = md ? "- " : "  ";
	/* sync call sites */
	if (rep->ncallsites && !(rep->ncallsites == 1 && !strcmp(rep->callsites[0].name, "(no stack)"))) {
		fprintf(f, "\n%sSync call sites (by blocked time)\n%s", h, md ? "\n" : "");
		for (size_t i = 0; i < rep->ncallsites && i < (o->top ? o->top : 10); i++)
			fprintf(f, "%s%-60s %6" PRIu64 " calls %10s\n", li, rep->callsites[i].name, rep->callsites[i].calls,
				gp_fmt_dur(rep->callsites[i].sync_ns, b1, 32));
	}
}

/* The iterations: a terminal gets the first 10, the last and every outlier. */
static void gp_out_text_iters(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o, int md)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32];
	const char *h = md ? "## " : "", *li = md ? "- " : "  ";
	/* iterations */
	if (rep->niters) {
		uint64_t p50, p99;
		uint8_t *out = calloc(rep->niters, 1);
		gp_rep_iter_stats(rep, o->outlier_factor, &p50, &p99, out);
		size_t nclosed = 0;
		for (size_t i = 0; i < rep->niters; i++)
			nclosed += !rep->iters[i].open;
		if (nclosed)
			fprintf(f, "\n%sIterations (%zu): duration p50 %s, p99 %s over the %zu complete ones; outlier = "
				   "duration > %.2g x p50\n\n", h, rep->niters, gp_fmt_dur(p50, b1, 32),
				gp_fmt_dur(p99, b2, 32), nclosed, o->outlier_factor);
		else
			fprintf(f, "\n%sIterations (%zu): no complete iteration (the only one is open: it ends with the "
				   "window), so no duration statistics\n\n", h, rep->niters);
		if (md)
			fprintf(f, "| iter | duration | ops | launch | execute | sync | queue | outlier |\n"
				   "|---:|---:|---:|---:|---:|---:|---:|---|\n");
		else
			fprintf(f, "%8s %10s %7s %10s %10s %10s %10s\n", "iter", "duration", "ops", "launch", "execute",
				"sync", "queue");
		size_t shown = 0, hidden = 0;
		for (size_t i = 0; i < rep->niters; i++) {
			const struct gp_rep_iter *it = &rep->iters[i];
			/* a terminal gets the first 10, the last and every outlier */
			if (i >= 10 && i + 1 < rep->niters && !(out && out[i]) && rep->niters > 20) {
				hidden++;
				continue;
			}
			shown++;
			gp_fmt_dur(it->end - it->start, b1, 32);
			gp_fmt_dur(it->launch_ns, b2, 32);
			gp_fmt_dur(it->execute_ns, b3, 32);
			gp_fmt_dur(it->sync_ns, b4, 32);
			gp_fmt_dur(it->queue_ns, b5, 32);
			int ol = out && out[i];
			if (md)
				fprintf(f, "| %" PRId64 " | %s | %" PRIu64 " | %s | %s | %s | %s | %s |\n", it->iter, b1, it->ops,
					b2, b3, b4, b5, ol ? "yes" : "");
			else
				fprintf(f, "%8" PRId64 " %10s %7" PRIu64 " %10s %10s %10s %10s%s\n", it->iter, b1, it->ops, b2,
					b3, b4, b5, ol ? "  <- outlier" : it->open ? "  (open: ends with the window)" : "");
		}
		if (hidden)
			fprintf(f, "%s(%zu more iterations without outliers; --format json lists all)\n", li, hidden);
		(void)shown;
		free(out);
	}
}

/* The ranks of a merged report, with stragglers. */
static void gp_out_text_ranks(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o, int md)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], b11[32];
	const char *h = md ? "## " : "";
	/* ranks */
	if (rep->nranks > 1) {
		uint8_t *fl = calloc(rep->nranks, 1);
		uint64_t med = fl ? gp_rep_stragglers(rep, o->straggler_pct, fl) : 0;
		fprintf(f, "\n%sRanks (%zu): busy = launch + execute of non-NCCL ops; straggler = busy > median %s + %.0f%%\n\n", h, rep->nranks,
			gp_fmt_dur(med, b1, 32), o->straggler_pct);
		if (md)
			fprintf(f, "| trace | wall | busy | GPU busy | launch | execute | sync | straggler |\n"
				   "|---|---:|---:|---:|---:|---:|---:|---|\n");
		for (size_t i = 0; i < rep->nranks; i++) {
			const struct gp_rep *r = &rep->ranks[i];
			gp_fmt_dur(r->wall_ns, b1, 32);
			gp_fmt_dur(gp_rep_rank_busy(r), b2, 32);
			gp_fmt_dur(r->gpu_busy_ns, b3, 32);
			gp_fmt_dur(r->launch_ns, b4, 32);
			gp_fmt_dur(r->execute_ns, b5, 32);
			gp_fmt_dur(r->sync_ns + r->sync_unattributed_ns, b11, 32);
			if (md)
				fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r->path, b1, b2, b3, b4, b5, b11,
					fl && fl[i] ? "yes" : "");
			else
				fprintf(f, "  %-40s wall %10s busy %10s GPU %10s launch %10s exec %10s sync %10s%s\n", r->path, b1,
					b2, b3, b4, b5, b11, fl && fl[i] ? "  <- straggler" : "");
		}
		free(fl);
	}
}

static void gp_out_text(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o, int md)
{
	gp_out_text_capture(f, rep, md);
	gp_out_text_window(f, rep, o, md);
	gp_out_text_ops(f, rep, o, md);
	gp_out_text_callsites(f, rep, o, md);
	gp_out_text_iters(f, rep, o, md);
	gp_out_text_ranks(f, rep, o, md);
}

/* --- csv ---------------------------------------------------------------------------------------- */

static void gp_out_csv(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o)
{
	fprintf(f, "operator,long_name,count,total_ns,launch_ns,queue_ns,execute_ns,sync_ns,launch_share,"
		   "execute_share,sync_share,execute_mean_ns,execute_p50_ns,execute_p95_ns,execute_p99_ns,"
		   "execute_max_ns,no_api,no_gpu,verdict\n");
	size_t *sel, n = gp_out_select(rep, o, &sel);
	for (size_t i = 0; sel && i < n; i++) {
		const struct gp_rep_group *g = &rep->groups[sel[i]];
		uint64_t t = gp_rep_group_total(g);
		gp_fmt_csv_str(f, g->name);
		fputc(',', f);
		gp_fmt_csv_str(f, g->long_name ? g->long_name : g->name);
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.4f,%.4f,%.4f,%" PRIu64
			   ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s\n",
			g->count, t, g->launch_ns, g->queue_ns, g->execute_ns, g->sync_ns,
			t ? (double)g->launch_ns / (double)t : 0, t ? (double)g->execute_ns / (double)t : 0,
			t ? (double)g->sync_ns / (double)t : 0, g->exec.n ? g->exec.sum / g->exec.n : 0,
			gp_hist_quantile(&g->exec, 0.5), gp_hist_quantile(&g->exec, 0.95),
			gp_hist_quantile(&g->exec, 0.99), g->exec.max, g->no_api, g->no_gpu,
			gp_verdict_name(gp_verdict_of(g->launch_ns, g->execute_ns, g->sync_ns, &o->th)));
	}
	free(sel);
}

/* --- json --------------------------------------------------------------------------------------- */

static void gp_out_json_verdict(FILE *f, uint64_t l, uint64_t e, uint64_t s, const struct gp_thresholds *th)
{
	enum gp_verdict v = gp_verdict_of(l, e, s, th);
	char why[160];
	gp_verdict_reason(v, l, e, s, th, why, sizeof why);
	fprintf(f, "\"verdict\": \"%s\", \"verdict_reason\": ", gp_verdict_name(v));
	gp_fmt_json_str(f, why);
	fprintf(f, ", \"advice\": ");
	gp_fmt_json_str(f, gp_verdict_advice(v));
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
	if (rep->host_busy_pct >= 0)
		fprintf(f, ", \"host_cpu_busy_pct\": %.2f, \"host_cpu_busy_max_pct\": %.2f, \"process_cpu_pct\": %.2f",
			rep->host_busy_pct, rep->host_busy_max_pct, rep->proc_cpu_pct);
	fprintf(f, ", \"sync_calls\": [");
	int first = 1;
	for (int k = 0; k < GP_API_CLASS_COUNT; k++) {
		if (!rep->sync_calls[k])
			continue;
		fprintf(f, "%s{\"kind\": \"%s\", \"count\": %" PRIu64 ", \"blocked_ns\": %" PRIu64 "}", first ? "" : ", ",
			gp_out_class_names[k], rep->sync_calls[k], rep->sync_kind_ns[k]);
		first = 0;
	}
	fprintf(f, "], ");
	gp_out_json_verdict(f, rep->launch_ns, rep->execute_ns, rep->sync_ns, &o->th);
	fprintf(f, "}");
}

static void gp_out_json(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o)
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
	fprintf(f, "]},\n\"group_by\": \"%s\",\n\"thresholds\": {\"sync_pct\": %g, \"launch_pct\": %g, \"execute_pct\": %g},\n",
		gp_out_group_names[rep->group_by], o->th.sync_pct, o->th.launch_pct, o->th.execute_pct);
	fprintf(f, "\"summary\": ");
	gp_out_json_summary(f, rep, o);
	fprintf(f, ",\n\"operators\": [");
	size_t *sel, n = gp_out_select(rep, o, &sel);
	for (size_t i = 0; sel && i < n; i++) {
		const struct gp_rep_group *g = &rep->groups[sel[i]];
		uint64_t t = gp_rep_group_total(g);
		fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
		gp_fmt_json_str(f, g->name);
		fprintf(f, ", \"long_name\": ");
		gp_fmt_json_str(f, g->long_name ? g->long_name : g->name);
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
		gp_out_json_verdict(f, g->launch_ns, g->execute_ns, g->sync_ns, &o->th);
		fprintf(f, "}");
	}
	free(sel);
	uint64_t p50 = 0, p99 = 0;
	uint8_t *ol = rep->niters ? calloc(rep->niters, 1) : NULL;
	gp_rep_iter_stats(rep, o->outlier_factor, &p50, &p99, ol);
	size_t nclosed = 0;
	for (size_t i = 0; i < rep->niters; i++)
		nclosed += !rep->iters[i].open;
	fprintf(f, "\n],\n\"iterations\": {\"count\": %zu, \"duration_p50_ns\": %" PRIu64 ", \"duration_p99_ns\": %" PRIu64
		   ", \"outlier_factor\": %g, \"closed\": %zu, \"items\": [",
		rep->niters, p50, p99, o->outlier_factor, nclosed);
	for (size_t i = 0; i < rep->niters; i++) {
		const struct gp_rep_iter *it = &rep->iters[i];
		fprintf(f, "%s\n  {\"iter\": %" PRId64 ", \"start_ns\": %" PRIu64 ", \"duration_ns\": %" PRIu64
			   ", \"ops\": %" PRIu64 ", \"launch_ns\": %" PRIu64 ", \"queue_ns\": %" PRIu64 ", \"execute_ns\": %" PRIu64
			   ", \"sync_ns\": %" PRIu64 ", \"outlier\": %s, \"open\": %s}",
			i ? "," : "", it->iter, it->start, it->end - it->start, it->ops, it->launch_ns, it->queue_ns,
			it->execute_ns, it->sync_ns, ol && ol[i] ? "true" : "false", it->open ? "true" : "false");
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
	fprintf(f, "],\n\"analyses\": [");
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

const struct gp_rep *gp_out_trace_rep(const struct gp_rep *rep, const struct gp_out_opts *o, size_t x)
{
	if (x >= o->ntraces)
		return NULL;
	if (o->ntraces == 1)
		return rep;
	return x < rep->nranks ? &rep->ranks[x] : NULL;
}

int gp_out_report(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o)
{
	switch (o->format) {
	case GP_FMT_MARKDOWN: gp_out_text(f, rep, o, 1); break;
	case GP_FMT_CSV: gp_out_csv(f, rep, o); break;
	case GP_FMT_JSON: gp_out_json(f, rep, o); break;
	default: gp_out_text(f, rep, o, 0); break;
	}
	return ferror(f) ? -EIO : 0;
}

/* --- diff --------------------------------------------------------------------------------------------- */

static const struct gp_rep_group *gp_out_find(const struct gp_rep *r, const char *name)
{
	for (size_t i = 0; i < r->ngroups; i++)
		if (!strcmp(r->groups[i].name, name))
			return &r->groups[i];
	return NULL;
}

static double gp_out_delta_pct(uint64_t a, uint64_t b)
{
	return a ? 100.0 * ((double)b - (double)a) / (double)a : (b ? INFINITY : 0.0);
}

int gp_out_diff(FILE *f, const struct gp_rep *base, const struct gp_rep *cur, const struct gp_out_opts *o,
		double fail_above, int *regressed)
{
	*regressed = 0;
	uint64_t bt = base->launch_ns + base->execute_ns + base->sync_ns;
	uint64_t ct = cur->launch_ns + cur->execute_ns + cur->sync_ns;
	double tp = gp_out_delta_pct(bt, ct);
	int json = o->format == GP_FMT_JSON, csv = o->format == GP_FMT_CSV;
	char b1[32], b2[32], b3[32], b4[32], b5[32];
	/* names: base groups then new-only groups */
	size_t nn = base->ngroups + cur->ngroups;
	const char **names = malloc((nn ? nn : 1) * sizeof *names);
	if (!names)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < base->ngroups; i++)
		names[k++] = base->groups[i].name;
	for (size_t i = 0; i < cur->ngroups; i++)
		if (!gp_out_find(base, cur->groups[i].name))
			names[k++] = cur->groups[i].name;
	/* top operators of the base (by total) are the gate */
	struct gp_out_opts top = *o;
	top.filter = NULL;
	top.sort = GP_SORT_TOTAL;
	top.top = o->top ? o->top : 10;
	size_t *sel, ntop = gp_out_select(base, &top, &sel);
	if (fail_above >= 0 && tp > fail_above)
		*regressed = 1;
	if (json)
		fprintf(f, "{\n\"schema\": \"gpuphase-diff\",\n\"schema_version\": %d,\n\"base\": ", GP_DIFF_JSON_VERSION);
	if (json) {
		gp_fmt_json_str(f, base->path);
		fprintf(f, ",\n\"new\": ");
		gp_fmt_json_str(f, cur->path);
		fprintf(f, ",\n\"total\": {\"base_ns\": %" PRIu64 ", \"new_ns\": %" PRIu64 ", \"delta_pct\": %.4f},\n"
			   "\"operators\": [", bt, ct, isinf(tp) ? 1e308 : tp);
	} else if (csv) {
		fprintf(f, "operator,status,base_total_ns,new_total_ns,delta_total_ns,delta_total_pct,delta_launch_ns,"
			   "delta_queue_ns,delta_execute_ns,delta_sync_ns,base_verdict,new_verdict,gate\n");
	} else {
		fprintf(f, "gpuphase diff: %s -> %s\n\ntotal (launch + execute + sync): %s -> %s (%+.1f%%)\n"
			   "wall: %s -> %s\n\n", base->path, cur->path, gp_fmt_dur(bt, b1, 32), gp_fmt_dur(ct, b2, 32), tp,
			gp_fmt_dur(base->wall_ns, b3, 32), gp_fmt_dur(cur->wall_ns, b4, 32));
		fprintf(f, "%-32s %8s %10s %10s %9s %11s %11s %11s %11s  %s\n", "operator", "status", "base", "new", "delta%",
			"d launch", "d queue", "d execute", "d sync", "verdict");
	}
	for (size_t i = 0; i < k; i++) {
		const struct gp_rep_group *a = gp_out_find(base, names[i]), *b = gp_out_find(cur, names[i]);
		struct gp_rep_group z;
		memset(&z, 0, sizeof z);
		const char *status = !a ? "new" : !b ? "gone" : "both";
		if (!a)
			a = &z;
		if (!b)
			b = &z;
		uint64_t at = gp_rep_group_total(a), btot = gp_rep_group_total(b);
		double p = gp_out_delta_pct(at, btot);
		int gate = 0;
		for (size_t j = 0; sel && j < ntop; j++)
			if (!strcmp(base->groups[sel[j]].name, names[i]))
				gate = 1;
		if (gate && fail_above >= 0 && p > fail_above)
			*regressed = 1;
		const char *va = gp_verdict_name(gp_verdict_of(a->launch_ns, a->execute_ns, a->sync_ns, &o->th));
		const char *vb = gp_verdict_name(gp_verdict_of(b->launch_ns, b->execute_ns, b->sync_ns, &o->th));
		int64_t dl = (int64_t)b->launch_ns - (int64_t)a->launch_ns, dq = (int64_t)b->queue_ns - (int64_t)a->queue_ns;
		int64_t de = (int64_t)b->execute_ns - (int64_t)a->execute_ns, ds = (int64_t)b->sync_ns - (int64_t)a->sync_ns;
		if (json) {
			fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
			gp_fmt_json_str(f, names[i]);
			fprintf(f, ", \"status\": \"%s\", \"base_total_ns\": %" PRIu64 ", \"new_total_ns\": %" PRIu64
				   ", \"delta_total_pct\": %.4f, \"delta_launch_ns\": %" PRId64 ", \"delta_queue_ns\": %" PRId64
				   ", \"delta_execute_ns\": %" PRId64 ", \"delta_sync_ns\": %" PRId64
				   ", \"base_verdict\": \"%s\", \"new_verdict\": \"%s\", \"gate\": %s}",
				status, at, btot, isinf(p) ? 1e308 : p, dl, dq, de, ds, va, vb, gate ? "true" : "false");
		} else if (csv) {
			gp_fmt_csv_str(f, names[i]);
			fprintf(f, ",%s,%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%.4f,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
				   ",%s,%s,%d\n", status, at, btot, (int64_t)btot - (int64_t)at, isinf(p) ? 1e308 : p, dl, dq, de,
				ds, va, vb, gate);
		} else {
			char nm[33];
			snprintf(nm, sizeof nm, "%s", names[i]);
			snprintf(b3, 32, "%+.3fms", (double)dl / 1e6);
			snprintf(b4, 32, "%+.3fms", (double)dq / 1e6);
			snprintf(b5, 32, "%+.3fms", (double)de / 1e6);
			char b6[32];
			snprintf(b6, 32, "%+.3fms", (double)ds / 1e6);
			char pct[16];
			if (isinf(p))
				snprintf(pct, sizeof pct, "new");
			else
				snprintf(pct, sizeof pct, "%+.1f%%", p);
			fprintf(f, "%-32s %8s %10s %10s %9s %11s %11s %11s %11s  %s%s%s\n", nm, status, gp_fmt_dur(at, b1, 32),
				gp_fmt_dur(btot, b2, 32), pct, b3, b4, b5, b6, va, strcmp(va, vb) ? " -> " : "",
				strcmp(va, vb) ? vb : "");
		}
	}
	if (json)
		fprintf(f, "\n],\n\"fail_above_pct\": %g,\n\"regressed\": %s\n}\n", fail_above, *regressed ? "true" : "false");
	else if (!csv && fail_above >= 0)
		fprintf(f, "\ngate: %s (fail above %+.1f%% on the total or on any of the base's top %zu operators)\n",
			*regressed ? "REGRESSED" : "ok", fail_above, ntop);
	free(sel);
	free(names);
	return ferror(f) ? -EIO : 0;
}
