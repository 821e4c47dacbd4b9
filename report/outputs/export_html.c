/*
 * export_html.c — `--export html FILE`: one self-contained page (no
 * network, no library: its script and style are report/outputs/assets/report.js
 * and report.css, compiled in) with
 *   - the answer first, before any table: the wall, GPU busy, the run's
 *     verdict with its priced advice (advice.c, the text report's words) and
 *     the what-if's top changes, each saving a bar on the largest one's
 *     scale (plain HTML: it reads without the script);
 *   - the operator table, sortable (sort state in aria-sort) and filterable,
 *     each operator's verdict, its reason and the advice beside it (with the
 *     pageable-copy note where it has one), every number in a tooltip;
 *   - stacked launch / execute / sync bars of the top operators (--top,
 *     default 10) with a labelled time axis;
 *   - the iteration chart: phase sums as bars, durations as dots, outliers
 *     (duration > --outlier-factor x p50) in red, axes, a log-scale switch;
 *   - a zoomable timeline of the captured ops: streams and host threads as
 *     lanes, each op's launching call on its thread, launch->op links when
 *     zoomed in; at most GP_HTML_MAX_OPS ops are kept (the first ones; the
 *     page says how many of how many), and ops closer than a pixel are drawn
 *     once, so a 100k-op trace stays fast;
 *   - the sync call sites, each row's tooltip its whole stack;
 *   - a section per analysis of each trace (stages, host conditions, trends,
 *     CUDA graphs: the text report's words, and their figures) and the text
 *     report itself.
 * The data travel as one JSON object in <script type="application/json">
 * (every '<' escaped, so no name can close the element). Ops are collected
 * while pass 2 streams (op callback); the page is written at close.
 * Called by main.c on the report thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/util/fmt.h"
#include "export.h"
#include "report/analyses/registry.h"
#include "report/analyses/whatif.h"
#include "report/util/map.h"
#include "report/util/outfile.h"
#include "report/core/verdict.h"
#include "html_assets.h" /* gp_html_js, gp_html_css: generated from report/outputs/assets/ */

#define GP_HTML_MAX_OPS 20000
#define GP_HTML_ANSWER_WHATIFS 3 /* what-ifs in the answer               */
#define GP_HTML_ANSWER_BAR 240   /* px: the largest saving's bar          */

struct gp_html_ev {           /* one op of the timeline and its launching call */
	uint32_t gpu_lane, host_lane; /* host_lane UINT32_MAX: no call known     */
	uint32_t name, corr;
	uint8_t kind;
	uint64_t t0, t1, a0, a1;
	uint64_t launch_ns, queue_ns, execute_ns;
};

struct gp_html {
	struct gp_outfile out;        /* created at open, written and committed at close */
	size_t index;
	struct gp_html_ev *ev;
	size_t nev, capev;
	uint64_t nops;                /* ops with GPU times seen, kept or not     */
	struct gp_map lanes;          /* lane key -> index + 1                    */
	char **lane_names;
	size_t nlanes;
	struct gp_map names;          /* name hash (probed) -> index + 1          */
	char **namev;
	size_t nnames;
	const struct gp_an *an;
};

static void *gp_html_open(const char *path, char *err, size_t n)
{
	/* the file is created now (fail early), written at close */
	return gp_outfile_context(sizeof(struct gp_html), offsetof(struct gp_html, out), path, GP_OUTFILE_HTML, err, n);
}

static void gp_html_begin(void *ctx, size_t index, const char *trace_path, uint32_t pid)
{
	(void)trace_path;
	(void)pid;
	struct gp_html *h = ctx;
	h->index = index;
}

static void gp_html_record(void *ctx, const struct gp_an *an, const union gp_rec *r)
{
	(void)r;
	((struct gp_html *)ctx)->an = an;
}

/* Index of a lane (created on first use), UINT32_MAX when out of memory. */
static uint32_t gp_html_lane(struct gp_html *h, uint64_t key, const char *name)
{
	uint64_t *v = gp_map_get(&h->lanes, key);
	if (v)
		return (uint32_t)(*v - 1);
	char **nl = realloc(h->lane_names, (h->nlanes + 1) * sizeof *nl);
	if (!nl)
		return UINT32_MAX;
	h->lane_names = nl;
	if (!(nl[h->nlanes] = strdup(name)) || gp_map_put(&h->lanes, key, h->nlanes + 1)) {
		free(nl[h->nlanes]);
		return UINT32_MAX;
	}
	return (uint32_t)h->nlanes++;
}

static uint32_t gp_html_name(struct gp_html *h, const char *name)
{
	uint64_t k = 1469598103934665603ULL;
	for (const char *p = name; *p; p++)
		k = (k ^ (unsigned char)*p) * 1099511628211ULL;
	for (;; k++) {
		if (k == GP_MAP_EMPTY)
			continue;
		uint64_t *v = gp_map_get(&h->names, k);
		if (!v)
			break;
		if (!strcmp(h->namev[*v - 1], name))
			return (uint32_t)(*v - 1);
	}
	char **nv = realloc(h->namev, (h->nnames + 1) * sizeof *nv);
	if (!nv)
		return UINT32_MAX;
	h->namev = nv;
	if (!(nv[h->nnames] = strdup(name)) || gp_map_put(&h->names, k, h->nnames + 1)) {
		free(nv[h->nnames]);
		return UINT32_MAX;
	}
	return (uint32_t)h->nnames++;
}

static void gp_html_op(const struct gp_an_op *op, void *ctx)
{
	struct gp_html *h = ctx;
	if (!op->has_gpu)
		return;
	if (h->nops++ >= GP_HTML_MAX_OPS)
		return;
	if (h->nev == h->capev) {
		size_t nc = h->capev ? h->capev * 2 : 1024;
		struct gp_html_ev *ne = realloc(h->ev, nc * sizeof *ne);
		if (!ne)
			return;
		h->ev = ne;
		h->capev = nc;
	}
	char nm[96];
	if (h->index)
		snprintf(nm, sizeof nm, "trace %zu GPU %u stream %u", h->index, op->device, op->stream);
	else
		snprintf(nm, sizeof nm, "GPU %u stream %u", op->device, op->stream);
	struct gp_html_ev *e = &h->ev[h->nev];
	memset(e, 0, sizeof *e);
	e->gpu_lane = gp_html_lane(h, 1ULL << 62 | (uint64_t)h->index << 40 | (uint64_t)op->device << 32 | op->stream, nm);
	e->host_lane = UINT32_MAX;
	if (op->has_api && op->tid) {
		uint32_t tid = h->an ? gp_an_os_tid(h->an, op->tid) : op->tid;
		if (h->index)
			snprintf(nm, sizeof nm, "trace %zu thread %u", h->index, tid);
		else
			snprintf(nm, sizeof nm, "host thread %u", tid);
		e->host_lane = gp_html_lane(h, 2ULL << 62 | (uint64_t)h->index << 40 | tid, nm);
		e->a0 = op->api_start;
		e->a1 = op->api_end;
	}
	e->name = gp_html_name(h, op->name ? op->name : "op");
	if (e->gpu_lane == UINT32_MAX || e->name == UINT32_MAX)
		return;
	e->corr = op->corr;
	e->kind = op->kind;
	e->t0 = op->gpu_start;
	e->t1 = op->gpu_end;
	e->launch_ns = op->launch_ns;
	e->queue_ns = op->queue_ns;
	e->execute_ns = op->execute_ns;
	h->nev++;
}

/* A JSON string safe inside <script>: gp_fmt_json_str's rules, and '<' '>'
 * '&' as \u escapes so no name can end the element. */
static void gp_html_json_str(FILE *f, const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m) {
		fputs("\"\"", f);
		return;
	}
	gp_fmt_json_str(m, s);
	fclose(m);
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '<' || buf[i] == '>' || buf[i] == '&')
			fprintf(f, "\\u%04x", (unsigned)buf[i]);
		else
			fputc(buf[i], f);
	}
	free(buf);
}

/* The page's data: operators, iterations, timeline. */
static void gp_html_data(FILE *f, struct gp_html *h, const struct gp_rep *rep, const struct gp_out_opts *o,
			 const uint8_t *outlier)
{
	struct gp_out_opts all = *o;
	all.top = 0;
	size_t *sel = NULL, n = gp_out_select(rep, &all, &sel);
	int rg = gp_out_run_graphs(rep); /* once: the advice of every operator reads it */
	fprintf(f, "{\"top\": %zu, \"operators\": [", o->top ? o->top : 10);
	for (size_t i = 0; sel && i < n; i++) {
		const struct gp_rep_group *g = &rep->groups[sel[i]];
		enum gp_verdict v = gp_out_verdict(rep, g, &o->th); /* as the text report gives it */
		char why[128] = "";
		if (v != GP_VERDICT_NONE)
			gp_verdict_reason(v, g->launch_ns, g->execute_ns, gp_rep_verdict_sync(g->sync_ns, g->sync_queue_ns),
					  &o->th, why, sizeof why);
		fprintf(f, "%s\n{\"name\": ", i ? "," : "");
		gp_html_json_str(f, g->name);
		fputs(", \"long_name\": ", f);
		gp_html_json_str(f, g->long_name ? g->long_name : g->name);
		fprintf(f, ", \"count\": %" PRIu64 ", \"total\": %" PRIu64 ", \"launch\": %" PRIu64 ", \"queue\": %" PRIu64
			   ", \"execute\": %" PRIu64 ", \"sync\": %" PRIu64 ", \"p50\": %" PRIu64 ", \"p95\": %" PRIu64
			   ", \"max\": %" PRIu64 ", \"verdict\": \"%s\", \"reason\": ",
			g->count, gp_rep_group_total(g), g->launch_ns, g->queue_ns, g->execute_ns, g->sync_ns,
			gp_hist_quantile(&g->exec, 0.50), gp_hist_quantile(&g->exec, 0.95), g->exec.max, gp_verdict_name(v));
		gp_html_json_str(f, why);
		fputs(", \"advice\": ", f);
		gp_html_json_str(f, gp_out_advice_rg(rep, g, v, rg));
		char note[256];
		if (gp_out_pageable_note(g, note, sizeof note)) {
			fputs(", \"note\": ", f);
			gp_html_json_str(f, note);
		}
		fputc('}', f);
	}
	free(sel);
	fputs("],\n\"iterations\": [", f);
	for (size_t i = 0; i < rep->niters; i++) {
		const struct gp_rep_iter *it = &rep->iters[i];
		fprintf(f, "%s\n{\"iter\": %" PRId64 ", \"dur\": %" PRIu64 ", \"ops\": %" PRIu64 ", \"launch\": %" PRIu64
			   ", \"queue\": %" PRIu64 ", \"execute\": %" PRIu64 ", \"sync\": %" PRIu64
			   ", \"open\": %s, \"outlier\": %s}",
			i ? "," : "", it->iter, it->end - it->start, it->ops, it->launch_ns, it->queue_ns, it->execute_ns,
			it->sync_ns, it->open ? "true" : "false", outlier && outlier[i] ? "true" : "false");
	}
	fputs("],\n\"timeline\": ", f);
	if (!h->nev) {
		fputs("null}", f);
		return;
	}
	uint64_t t0 = UINT64_MAX, t1 = 0;
	for (size_t i = 0; i < h->nev; i++) {
		const struct gp_html_ev *e = &h->ev[i];
		uint64_t a = e->host_lane != UINT32_MAX && e->a0 < e->t0 ? e->a0 : e->t0;
		if (a < t0)
			t0 = a;
		if (e->t1 > t1)
			t1 = e->t1;
	}
	fputs("{\"lanes\": [", f);
	for (size_t i = 0; i < h->nlanes; i++) {
		fputs(i ? ", {\"name\": " : "{\"name\": ", f);
		gp_html_json_str(f, h->lane_names[i]);
		fputc('}', f);
	}
	fputs("],\n\"names\": [", f);
	for (size_t i = 0; i < h->nnames; i++) {
		if (i)
			fputs(", ", f);
		gp_html_json_str(f, h->namev[i]);
	}
	fprintf(f, "],\n\"ops_total\": %" PRIu64 ", \"t0\": 0, \"t1\": %.3f, \"ev\": [", h->nops,
		(double)(t1 - t0) / 1e3 + 0.001);
	static const char *const kinds[] = { "op", "kernel", "memcpy", "memset", "op" };
	size_t k = 0;
	for (size_t i = 0; i < h->nev; i++) {
		const struct gp_html_ev *e = &h->ev[i];
		long link = -1;
		if (e->host_lane != UINT32_MAX) {
			fprintf(f, "%s\n[%u,%.3f,%.3f,%u,\"call\",%u,-1]", k ? "," : "", e->host_lane,
				(double)(e->a0 - t0) / 1e3, (double)(e->a1 - t0) / 1e3, e->name, e->corr);
			link = (long)k++;
		}
		fprintf(f, "%s\n[%u,%.3f,%.3f,%u,\"%s\",%u,%ld,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", k ? "," : "",
			e->gpu_lane, (double)(e->t0 - t0) / 1e3, (double)(e->t1 - t0) / 1e3, e->name,
			kinds[e->kind <= 4 ? e->kind : 0], e->corr, link, e->launch_ns, e->queue_ns, e->execute_ns);
		k++;
	}
	fputs("]}}", f);
}

#define GP_HTML_LAUNCH "#e4a33a"
#define GP_HTML_EXEC "#3a7be4"
#define GP_HTML_SYNC "#d9534f"

/* One analysis section: a heading and the analysis's text (the report's own
 * words and numbers), its title line dropped; nothing when it is empty. */
static void gp_html_section(FILE *f, const char *trace, const struct gp_analysis *a, const void *st,
			    const struct gp_rep *r, const struct gp_analysis_style *style)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);
	if (!mf)
		return;
	a->text(mf, st, r, style);
	fclose(mf);
	const char *body = buf;
	while (body && *body == '\n')
		body++;
	const char *nl = body ? strchr(body, '\n') : NULL;
	if (nl && nl[1]) {
		fprintf(f, "<h2>%s", a->title);
		if (trace) {
			fputs(" &mdash; ", f);
			gp_fmt_html_str(f, trace);
		}
		fputs("</h2>\n<pre>", f);
		gp_fmt_html_block(f, nl + 1, 0);
		fputs("</pre>\n", f);
	}
	free(buf);
}

/* The analyses of each trace: a section each, and its figure. */
static void gp_html_analyses(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o)
{
	struct gp_analysis_style style = { .markdown = 0, .outlier_factor = o->outlier_factor };
	for (size_t x = 0; x < o->ntraces; x++) {
		const struct gp_rep *r = gp_out_trace_rep(rep, o, x);
		const struct gp_analyses *set = o->analyses[x];
		if (!r || !set)
			continue;
		const char *tr = o->ntraces > 1 ? r->path : NULL;
		for (size_t i = 0; i < set->n; i++) {
			if (set->a[i]->merge)
				continue; /* speaks for the job, below */
			if (set->a[i]->text)
				gp_html_section(f, tr, set->a[i], set->st[i], r, &style);
			if (set->a[i]->figure)
				set->a[i]->figure(f, set->st[i]);
		}
	}
	const struct gp_analyses *job = o->job_analyses; /* one job: across its ranks */
	for (size_t i = 0; job && i < job->n; i++)
		if (job->a[i]->text)
			gp_html_section(f, NULL, job->a[i], job->st[i], rep, &style);
}

/* The what-if's top changes of the one trace, ranked by saving, each a bar
 * on the largest saving's scale: a 2 % change beside a 40 % one shows. */
static void gp_html_answer_whatifs(FILE *f, const struct gp_out_opts *o)
{
	if (!o->analyses || o->ntraces != 1 || !o->analyses[0])
		return;
	const struct gp_analyses *set = o->analyses[0];
	uint64_t window = gp_whatif_window_ns(set), top = 0;
	struct gp_whatif_view it;
	if (!window || !gp_whatif_item(set, 0, &it) || !(top = it.saving_ns))
		return;
	char b[32];
	fputs("<table id='answer-whatif'><tr><th>what-if: change</th><th>saves</th><th>of the wall</th><th></th></tr>\n",
	      f);
	for (size_t i = 0; i < GP_HTML_ANSWER_WHATIFS && gp_whatif_item(set, i, &it); i++) {
		fputs("<tr><td>", f);
		gp_fmt_html_str(f, it.change);
		if (*it.target) {
			fputc(' ', f);
			gp_fmt_html_str(f, it.target);
		}
		fprintf(f, "%s</td><td>%s</td><td>%.1f%%</td><td class='bar'><span style='width:%.0fpx'></span></td></tr>\n",
			it.user ? " [--whatif]" : !strcmp(it.change, "scale_kernel") ? " (hypothetical: the kernel faster)" : "",
			gp_fmt_dur(it.saving_ns, b, sizeof b), gp_fmt_pct(it.saving_ns, window),
			(double)GP_HTML_ANSWER_BAR * (double)it.saving_ns / (double)top);
	}
	fputs("</table>\n", f);
}

/* The answer, before every table: the wall, GPU busy, the run's verdict
 * with its priced advice (the text report's words), the top what-ifs. */
static void gp_html_answer(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o)
{
	char b1[32], b2[32], why[160], adv[640];
	enum gp_verdict v = gp_out_run_verdict(rep, &o->th, why, sizeof why);
	struct gp_out_change ch;
	gp_out_best_change(rep, o, &ch);
	const char *a = gp_out_run_advice(rep, o, v, &ch, adv, sizeof adv);
	fprintf(f, "<section id='answer'>\n<p class='facts'>wall <b>%s</b>, GPU busy <b>%s</b> (%.1f%% of the "
		   "wall)</p>\n<p class='verdict'>verdict (%s): <b class='v-%s'>%s</b> (",
		gp_fmt_dur(rep->wall_ns, b1, sizeof b1), gp_fmt_dur(rep->gpu_busy_ns, b2, sizeof b2),
		gp_fmt_pct(rep->gpu_busy_ns, rep->wall_ns), gp_out_verdict_scope(rep), gp_verdict_name(v),
		gp_verdict_name(v));
	gp_fmt_html_str(f, why);
	fputs(")</p>\n", f);
	if (*a) {
		fputs("<p class='advice'>advice: ", f);
		gp_fmt_html_str(f, a);
		fputs("</p>\n", f);
	}
	gp_html_answer_whatifs(f, o);
	fputs("</section>\n", f);
}

/* Sync call sites, each with its whole stack as the row's tooltip. */
static void gp_html_callsites(FILE *f, const struct gp_rep *rep)
{
	if (!rep->ncallsites || (rep->ncallsites == 1 && !strcmp(rep->callsites[0].name, "(no stack)")))
		return; /* as the text report */
	fputs("<h2>Sync call sites</h2>\n<table><tr><th>call site (hover: stack)</th><th>calls</th><th>blocked</th></tr>\n",
	      f);
	for (size_t i = 0; i < rep->ncallsites && i < 20; i++) {
		const struct gp_rep_callsite *c = &rep->callsites[i];
		fputs("<tr title=\"", f);
		gp_fmt_html_block(f, c->stack ? c->stack : c->name, 1); /* a frame a line */
		fputs("\"><td>", f);
		gp_fmt_html_str(f, c->name);
		char b[32];
		fprintf(f, "</td><td>%" PRIu64 "</td><td>%s</td></tr>\n", c->calls, gp_fmt_dur(c->sync_ns, b, sizeof b));
	}
	fputs("</table>\n", f);
}

static void gp_html_free(struct gp_html *h)
{
	for (size_t i = 0; i < h->nlanes; i++)
		free(h->lane_names[i]);
	for (size_t i = 0; i < h->nnames; i++)
		free(h->namev[i]);
	free(h->lane_names);
	free(h->namev);
	gp_map_free(&h->lanes);
	gp_map_free(&h->names);
	free(h->ev);
	free(h);
}

/* A trace with no footer: what was kept and what was lost, first on the
 * page (the same sentence as the text report's notes), escaped. */
static void gp_html_cut_note(FILE *f, const struct gp_rep *rep)
{
	if (rep->complete || rep->live)
		return;
	char *buf = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);
	if (!mf)
		return;
	gp_out_cut_note(mf, rep);
	fclose(mf);
	/* styled inline: the page's stylesheet (and every other page) unchanged */
	fputs("<p class='warn' style='border-left:4px solid #d9534f;padding:.3em .6em;background:#fdf3f2'>"
	      "<b>Incomplete trace.</b> ",
	      f);
	gp_fmt_html_str(f, buf);
	fputs(".</p>\n", f);
	free(buf);
}

static void gp_html_page(FILE *f, struct gp_html *h, const struct gp_rep *rep, const struct gp_out_opts *o)
{
	uint8_t *ol = rep->niters ? calloc(rep->niters, 1) : NULL;
	uint64_t p50 = 0, p99 = 0;
	size_t nclosed = 0;
	if (rep->niters) {
		gp_rep_iter_stats(rep, o->outlier_factor, &p50, &p99, ol);
		for (size_t i = 0; i < rep->niters; i++)
			nclosed += !rep->iters[i].open;
	}
	fputs("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>gpuphase report</title>\n<style>\n", f);
	fputs(gp_html_css, f);
	fputs("</style></head><body>\n<h1>gpuphase report</h1>\n<p>", f);
	gp_fmt_html_str(f, rep->path ? rep->path : "");
	fputs("</p>\n<div id='tip' role='tooltip'></div>\n", f);
	gp_html_cut_note(f, rep);
	gp_html_answer(f, rep, o);
	fputs("<h2>Operators</h2>\n<div class='ctl'><label>Filter <input id='filter' type='search' "
	      "placeholder='operator name'></label> <span id='ops-count'></span></div>\n"
	      "<table id='ops'></table>\n", f);
	fputs("<h2>Phases of the top operators</h2>\n<div class='legend'><span style='background:#e4a33a'></span>launch"
	      "<span style='background:#3a7be4'></span>execute<span style='background:#d9534f'></span>sync</div>\n"
	      "<svg id='phases' xmlns='http://www.w3.org/2000/svg' font-family='sans-serif'></svg>\n", f);
	gp_html_callsites(f, rep);
	if (rep->niters) {
		fputs("<h2>Iterations</h2>\n", f);
		if (nclosed)
			fprintf(f, "<p>%zu iterations, duration p50 %.1f us, p99 %.1f us over the %zu complete ones; "
				   "bars: phase sums, dots: durations, red: outliers (&gt; %.2g &times; p50)</p>\n",
				rep->niters, (double)p50 / 1e3, (double)p99 / 1e3, nclosed, o->outlier_factor);
		else
			fprintf(f, "<p>%zu iteration, none complete (it ends with the window): no duration "
				   "statistics</p>\n", rep->niters);
		fputs("<div class='ctl'><label><input id='logscale' type='checkbox'> log scale</label></div>\n"
		      "<svg id='iters' xmlns='http://www.w3.org/2000/svg' font-family='sans-serif'></svg>\n", f);
	}
	if (h->nev) {
		fprintf(f, "<h2>Timeline of the captured ops</h2>\n<p>%zu of %" PRIu64 " ops%s; lanes: GPU streams and the "
			   "host threads that launched them (orange: the launching call). Wheel to zoom, drag to pan.</p>\n"
			   "<div class='ctl'><button id='tl-zin' type='button'>zoom in</button> "
			   "<button id='tl-reset' type='button'>reset</button></div>\n<canvas id='tl'></canvas>\n",
			h->nev, h->nops, h->nev < h->nops ? " (the first ones)" : "");
	}
	gp_html_analyses(f, rep, o);
	fputs("<h2>Text report</h2>\n<pre>", f);
	struct gp_out_opts to = *o;
	to.format = GP_FMT_TEXT;
	char *buf = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);
	if (mf) {
		gp_out_report(mf, rep, &to);
		fclose(mf);
		gp_fmt_html_block(f, buf, 0);
		free(buf);
	}
	fputs("</pre>\n<p>Definitions of every number: docs/metrics.md of gpuphase.</p>\n", f);
	fputs("<script type='application/json' id='gp-data'>", f);
	gp_html_data(f, h, rep, o, ol);
	fputs("</script>\n<script>\n", f);
	fputs(gp_html_js, f);
	fputs("</script>\n</body></html>\n", f);
	free(ol);
}

static int gp_html_close(void *ctx, const struct gp_rep *rep, const struct gp_out_opts *o, char *err, size_t n)
{
	struct gp_html *h = ctx;
	int rc = 0;
	if (!rep) {
		gp_outfile_discard(&h->out); /* the run failed: leave OUT as it was */
	} else {
		gp_html_page(h->out.f, h, rep, o);
		rc = gp_outfile_commit(&h->out, err, n);
	}
	gp_html_free(h);
	return rc;
}

const struct gp_exporter gp_export_html = {
	.name = "html",
	.open = gp_html_open,
	.begin = gp_html_begin,
	.record = gp_html_record,
	.op = gp_html_op,
	.close = gp_html_close,
};
