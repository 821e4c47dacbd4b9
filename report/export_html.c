/*
 * export_html.c — `--export html FILE`: one self-contained page (no script,
 * no network) with the summary, the operator table (the markdown report's
 * numbers), a stacked bar chart of launch / execute / sync for the top
 * operators, the sync call sites (the whole stack as each row's tooltip)
 * and a per-iteration chart, both inline SVG, then a section per
 * analysis of each trace (stages with a bar of their shares, host conditions
 * and self-overhead, trends, CUDA graphs: the text report's words). Needs
 * only the aggregates, so it is written at close. Called by main.c on the report
 * thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "export.h"
#include "analyses.h"

struct gp_html {
	char *path;
};

static void *gp_html_open(const char *path, char *err, size_t n)
{
	struct gp_html *h = calloc(1, sizeof *h);
	if (!h || !(h->path = strdup(path))) {
		free(h);
		snprintf(err, n, "%s: out of memory", path);
		return NULL;
	}
	/* fail early if the file cannot be created */
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, n, "%s: cannot create: %s", path, strerror(errno));
		free(h->path);
		free(h);
		return NULL;
	}
	fclose(f);
	return h;
}

#define GP_HTML_LAUNCH "#e4a33a"
#define GP_HTML_EXEC "#3a7be4"
#define GP_HTML_SYNC "#d9534f"

static void gp_html_legend(FILE *f, int y)
{
	fprintf(f, "<rect x='10' y='%d' width='12' height='12' fill='" GP_HTML_LAUNCH "'/><text x='26' y='%d'>launch</text>"
		   "<rect x='90' y='%d' width='12' height='12' fill='" GP_HTML_EXEC "'/><text x='106' y='%d'>execute</text>"
		   "<rect x='180' y='%d' width='12' height='12' fill='" GP_HTML_SYNC "'/><text x='196' y='%d'>sync</text>\n",
		y, y + 11, y, y + 11, y, y + 11);
}

static void gp_html_ops_chart(FILE *f, const struct gp_rep *rep, const size_t *sel, size_t n)
{
	uint64_t max = 1;
	for (size_t i = 0; i < n; i++) {
		uint64_t t = gp_rep_group_total(&rep->groups[sel[i]]);
		if (t > max)
			max = t;
	}
	const int left = 260, width = 600, bar = 20, gap = 6;
	int height = (int)n * (bar + gap) + 40;
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif' font-size='12'>\n",
		left + width + 120, height);
	gp_html_legend(f, 4);
	for (size_t i = 0; i < n; i++) {
		const struct gp_rep_group *g = &rep->groups[sel[i]];
		int y = 26 + (int)i * (bar + gap);
		double x = left;
		uint64_t parts[3] = { g->launch_ns, g->execute_ns, g->sync_ns };
		const char *colors[3] = { GP_HTML_LAUNCH, GP_HTML_EXEC, GP_HTML_SYNC };
		const char *names[3] = { "launch", "execute", "sync" };
		fprintf(f, "<text x='%d' y='%d' text-anchor='end'>", left - 6, y + 14);
		char nm[48];
		snprintf(nm, sizeof nm, "%s", g->name);
		gp_fmt_html_str(f, nm);
		fputs("</text>\n", f);
		for (int k = 0; k < 3; k++) {
			double w = (double)width * (double)parts[k] / (double)max;
			fprintf(f, "<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='%s'><title>%s %.1f us</title></rect>\n", x,
				y, w, bar, colors[k], names[k], (double)parts[k] / 1e3);
			x += w;
		}
		fprintf(f, "<text x='%.1f' y='%d'>%.1f us</text>\n", x + 4, y + 14, (double)gp_rep_group_total(g) / 1e3);
	}
	fputs("</svg>\n", f);
}

static void gp_html_iter_chart(FILE *f, const struct gp_rep *rep, const uint8_t *outlier)
{
	uint64_t max = 1;
	for (size_t i = 0; i < rep->niters; i++) {
		uint64_t d = rep->iters[i].end - rep->iters[i].start;
		uint64_t p = rep->iters[i].launch_ns + rep->iters[i].execute_ns + rep->iters[i].sync_ns;
		if (d > max)
			max = d;
		if (p > max)
			max = p;
	}
	const int height = 220, top = 24, width = 860;
	double bw = rep->niters ? (double)width / (double)rep->niters : 1;
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif' font-size='12'>\n",
		width + 20, height + top + 20);
	gp_html_legend(f, 4);
	fprintf(f, "<text x='290' y='15'>bars: phase sums per iteration; dots: iteration duration (red = outlier)</text>\n");
	for (size_t i = 0; i < rep->niters; i++) {
		const struct gp_rep_iter *it = &rep->iters[i];
		double x = 10 + (double)i * bw, y = top + height;
		uint64_t parts[3] = { it->launch_ns, it->execute_ns, it->sync_ns };
		const char *colors[3] = { GP_HTML_LAUNCH, GP_HTML_EXEC, GP_HTML_SYNC };
		for (int k = 0; k < 3; k++) {
			double h = (double)height * (double)parts[k] / (double)max;
			y -= h;
			fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'/>\n", x, y,
				bw > 2 ? bw - 1 : bw, h, colors[k]);
		}
		double dy = top + height - (double)height * (double)(it->end - it->start) / (double)max;
		fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'><title>iteration %" PRId64 ": %.1f us</title></circle>\n",
			x + bw / 2, dy, outlier && outlier[i] ? "red" : "black", it->iter, (double)(it->end - it->start) / 1e3);
	}
	fputs("</svg>\n", f);
}

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
		gp_fmt_html_str(f, nl + 1);
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
			if (set->a[i]->text)
				gp_html_section(f, tr, set->a[i], set->st[i], r, &style);
			if (set->a[i]->figure)
				set->a[i]->figure(f, set->st[i]);
		}
	}
}

/* Sync call sites, each with its whole stack as the row's tooltip. */
static void gp_html_callsites(FILE *f, const struct gp_rep *rep)
{
	if (!rep->ncallsites || (rep->ncallsites == 1 && !strcmp(rep->callsites[0].name, "(no stack)")))
		return; /* as the text report */
	fputs("<h2>Sync call sites</h2>\n<table><tr><th>call site (hover: stack)</th><th>calls</th><th>blocked us</th></tr>\n",
	      f);
	for (size_t i = 0; i < rep->ncallsites && i < 20; i++) {
		const struct gp_rep_callsite *c = &rep->callsites[i];
		fputs("<tr title=\"", f);
		gp_fmt_html_str(f, c->stack ? c->stack : c->name);
		fputs("\"><td>", f);
		gp_fmt_html_str(f, c->name);
		fprintf(f, "</td><td>%" PRIu64 "</td><td>%.1f</td></tr>\n", c->calls, (double)c->sync_ns / 1e3);
	}
	fputs("</table>\n", f);
}

static int gp_html_close(void *ctx, const struct gp_rep *rep, const struct gp_out_opts *o, char *err, size_t n)
{
	struct gp_html *h = ctx;
	int rc = 0;
	if (rep) {
		FILE *f = fopen(h->path, "w");
		if (!f) {
			snprintf(err, n, "%s: cannot create: %s", h->path, strerror(errno));
			rc = -errno;
		} else {
			fputs("<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>gpuphase report</title>\n"
			      "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:13px}"
			      "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td:first-child,th:first-child"
			      "{text-align:left}pre{background:#f6f6f6;padding:1em;overflow-x:auto}</style></head><body>\n",
			      f);
			fputs("<h1>gpuphase report</h1>\n<h2>Summary</h2>\n<pre>", f);
			/* the text report is the summary: one source of numbers */
			struct gp_out_opts to = *o;
			to.format = GP_FMT_TEXT;
			char *buf = NULL;
			size_t len = 0;
			FILE *mf = open_memstream(&buf, &len);
			if (mf) {
				gp_out_report(mf, rep, &to);
				fclose(mf);
				gp_fmt_html_str(f, buf);
				free(buf);
			}
			fputs("</pre>\n", f);
			size_t *sel, k;
			struct gp_out_opts top = *o;
			top.top = o->top ? o->top : 10;
			k = gp_out_select(rep, &top, &sel);
			fputs("<h2>Phases of the top operators</h2>\n", f);
			if (sel)
				gp_html_ops_chart(f, rep, sel, k);
			free(sel);
			gp_html_callsites(f, rep);
			if (rep->niters) {
				uint64_t p50, p99;
				uint8_t *ol = calloc(rep->niters, 1);
				gp_rep_iter_stats(rep, o->outlier_factor, &p50, &p99, ol);
				size_t nclosed = 0;
				for (size_t i = 0; i < rep->niters; i++)
					nclosed += !rep->iters[i].open;
				if (nclosed)
					fprintf(f, "<h2>Iterations</h2>\n<p>%zu iterations, duration p50 %.1f us, p99 %.1f us "
						   "over the %zu complete ones</p>\n",
						rep->niters, (double)p50 / 1e3, (double)p99 / 1e3, nclosed);
				else
					fprintf(f, "<h2>Iterations</h2>\n<p>%zu iteration, none complete (it ends with the "
						   "window): no duration statistics</p>\n", rep->niters);
				gp_html_iter_chart(f, rep, ol);
				free(ol);
			}
			gp_html_analyses(f, rep, o);
			fputs("<p>Definitions of every number: docs/metrics.md of gpuphase.</p>\n</body></html>\n", f);
			int bad = ferror(f) != 0;
			if (fclose(f) || bad) {
				snprintf(err, n, "%s: write error", h->path);
				rc = -EIO;
			}
		}
	}
	free(h->path);
	free(h);
	return rc;
}

const struct gp_exporter gp_export_html = {
	.name = "html",
	.open = gp_html_open,
	.close = gp_html_close,
};
