/*
 * diff.c — `gpuphase-report diff`: per-operator changes between a base and a
 * new side, each one or more runs of the same program, and the CI gate
 * (docs/metrics.md §10). Called by main.c on the report's single thread with
 * the per-run reports (gp_pipeline_report of each trace); writes text,
 * markdown (as text), CSV or JSON. One compute step (struct gp_diff: rows,
 * run totals, the gate) and one render function per format.
 *
 * For each operator and each side: the mean over the side's runs of the
 * chosen phase (--phase, default total = launch + execute + sync) and the
 * runs' spread = their sample standard deviation (what `report stability`
 * turns into a CV; 0 with one run). delta = mean(new) - mean(base). The
 * gate trips on an operator among the base's top N (by mean of the phase)
 * or on the run total when, all at once: delta% > --fail-above, |delta| >=
 * --min-delta, and |delta| > the larger side's spread. Rows are sorted by
 * |delta|, largest first (ties by name). The same program compared with
 * itself passes.
 */
#include "diff.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/util/fmt.h"

struct gp_diff_row {
	const char *name;
	double mb, mn;     /* means of the phase: base, new                    */
	double sb, sn;     /* spreads (sample stddev over the runs)            */
	double d_launch, d_queue, d_execute, d_sync; /* delta of each phase mean */
	size_t inb, inn;   /* runs the operator appears in                     */
	const struct gp_rep_group *gb, *gn; /* in the first run that has it      */
	int top, tripped;
};

static const struct gp_rep_group *gp_diff_find(const struct gp_rep *r, const char *name)
{
	for (size_t i = 0; i < r->ngroups; i++)
		if (!strcmp(r->groups[i].name, name))
			return &r->groups[i];
	return NULL;
}

static uint64_t gp_diff_phase(const struct gp_rep_group *g, enum gp_diff_phase p)
{
	switch (p) {
	case GP_DIFF_LAUNCH: return g->launch_ns;
	case GP_DIFF_QUEUE: return g->queue_ns;
	case GP_DIFF_EXECUTE: return g->execute_ns;
	case GP_DIFF_SYNC: return g->sync_ns;
	default: return g->launch_ns + g->execute_ns + g->sync_ns;
	}
}

static uint64_t gp_diff_run_phase(const struct gp_rep *r, enum gp_diff_phase p)
{
	switch (p) {
	case GP_DIFF_LAUNCH: return r->launch_ns;
	case GP_DIFF_QUEUE: return r->queue_ns;
	case GP_DIFF_EXECUTE: return r->execute_ns;
	case GP_DIFF_SYNC: return r->sync_ns;
	default: return r->launch_ns + r->execute_ns + r->sync_ns;
	}
}

/* Mean and sample standard deviation of v[0..n). */
static void gp_diff_stats(const double *v, size_t n, double *mean, double *sd)
{
	double s = 0, ss = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	*mean = n ? s / (double)n : 0;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - *mean) * (v[i] - *mean);
	*sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
}

/* One side's mean and spread of name's phase p (and the phase means), over
 * runs r[0..n): a run without the operator counts as 0. */
static void gp_diff_side(const struct gp_rep *r, size_t n, const char *name, enum gp_diff_phase p, double *v,
			 double *mean, double *sd, double ph[4], size_t *present, const struct gp_rep_group **first)
{
	*present = 0;
	*first = NULL;
	ph[0] = ph[1] = ph[2] = ph[3] = 0;
	for (size_t i = 0; i < n; i++) {
		const struct gp_rep_group *g = gp_diff_find(&r[i], name);
		v[i] = g ? (double)gp_diff_phase(g, p) : 0;
		if (g) {
			(*present)++;
			if (!*first)
				*first = g;
			ph[0] += (double)g->launch_ns;
			ph[1] += (double)g->queue_ns;
			ph[2] += (double)g->execute_ns;
			ph[3] += (double)g->sync_ns;
		}
	}
	for (int k = 0; k < 4; k++)
		ph[k] = n ? ph[k] / (double)n : 0;
	gp_diff_stats(v, n, mean, sd);
}

static double gp_diff_pct(double a, double b)
{
	return a > 0 ? 100.0 * (b - a) / a : (b > 0 ? INFINITY : 0.0);
}

static int gp_diff_cmp(const void *x, const void *y)
{
	const struct gp_diff_row *a = x, *b = y;
	double da = fabs(a->mn - a->mb), db = fabs(b->mn - b->mb);
	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Does a change trip the gate? */
static int gp_diff_trips(const struct gp_diff_opts *d, double mb, double mn, double sb, double sn)
{
	double delta = mn - mb, spread = sb > sn ? sb : sn;
	if (d->fail_above_pct < 0)
		return 0;
	return gp_diff_pct(mb, mn) > d->fail_above_pct && fabs(delta) >= (double)d->min_delta_ns && fabs(delta) > spread;
}

static const char *const gp_diff_phase_names[] = { "total", "launch", "queue", "execute", "sync" };

const char *gp_diff_phase_name(enum gp_diff_phase p)
{
	return (unsigned)p < 5 ? gp_diff_phase_names[p] : "total";
}

/* Collect the rows (every operator of either side) and the gate flags. */
static struct gp_diff_row *gp_diff_rows(const struct gp_rep *base, size_t nb, const struct gp_rep *cur, size_t nn,
					const struct gp_diff_opts *d, size_t *nrows)
{
	size_t cap = 0;
	for (size_t i = 0; i < nb; i++)
		cap += base[i].ngroups;
	for (size_t i = 0; i < nn; i++)
		cap += cur[i].ngroups;
	struct gp_diff_row *rows = calloc(cap ? cap : 1, sizeof *rows);
	double *v = malloc((nb + nn + 1) * sizeof *v);
	if (!rows || !v) {
		free(rows);
		free(v);
		return NULL;
	}
	size_t n = 0;
	for (int side = 0; side < 2; side++) {
		const struct gp_rep *r = side ? cur : base;
		size_t nr = side ? nn : nb;
		for (size_t i = 0; i < nr; i++)
			for (size_t g = 0; g < r[i].ngroups; g++) {
				const char *name = r[i].groups[g].name;
				size_t k = 0;
				while (k < n && strcmp(rows[k].name, name))
					k++;
				if (k == n)
					rows[n++].name = name;
			}
	}
	for (size_t k = 0; k < n; k++) {
		struct gp_diff_row *w = &rows[k];
		double pb[4], pn[4];
		gp_diff_side(base, nb, w->name, d->phase, v, &w->mb, &w->sb, pb, &w->inb, &w->gb);
		gp_diff_side(cur, nn, w->name, d->phase, v, &w->mn, &w->sn, pn, &w->inn, &w->gn);
		w->d_launch = pn[0] - pb[0];
		w->d_queue = pn[1] - pb[1];
		w->d_execute = pn[2] - pb[2];
		w->d_sync = pn[3] - pb[3];
	}
	free(v);
	/* the gate: the base's top N operators by the mean of the phase */
	size_t top = d->top ? d->top : 10;
	for (size_t t = 0; t < top; t++) {
		struct gp_diff_row *best = NULL;
		for (size_t k = 0; k < n; k++)
			if (!rows[k].top && rows[k].inb && rows[k].mb > 0 &&
			    (!best || rows[k].mb > best->mb || (rows[k].mb == best->mb && strcmp(rows[k].name, best->name) < 0)))
				best = &rows[k];
		if (!best)
			break;
		best->top = 1;
	}
	for (size_t k = 0; k < n; k++)
		rows[k].tripped = rows[k].top && gp_diff_trips(d, rows[k].mb, rows[k].mn, rows[k].sb, rows[k].sn);
	qsort(rows, n, sizeof *rows, gp_diff_cmp);
	*nrows = n;
	return rows;
}

static const char *gp_diff_status(const struct gp_diff_row *w)
{
	return !w->inb ? "new" : !w->inn ? "gone" : "both";
}

static const char *gp_diff_verdict(const struct gp_rep *r, const struct gp_rep_group *g, const struct gp_thresholds *th)
{
	if (!g)
		return "none";
	return gp_verdict_name(gp_out_verdict(r, g, th)); /* as the report gives it */
}

/* The operator's first run that has it (for its verdict). */
static const struct gp_rep *gp_diff_run_of(const struct gp_rep *r, size_t n, const struct gp_rep_group *g)
{
	for (size_t i = 0; g && i < n; i++)
		if (g >= r[i].groups && g < r[i].groups + r[i].ngroups)
			return &r[i];
	return n ? &r[0] : NULL;
}

/* A signed prose duration: "+50.0us", "-19.7us", "0ns". */
static const char *gp_diff_signed(double v, char *buf, size_t n)
{
	char t[40];
	gp_fmt_ns(v, t, sizeof t);
	snprintf(buf, n, "%s%s", v > 0 ? "+" : "", t);
	return buf;
}

static double gp_diff_wall(const struct gp_rep *r, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += (double)r[i].wall_ns;
	return n ? s / (double)n : 0;
}

static const char *gp_diff_paths(const struct gp_rep *r, size_t n, char *buf, size_t len)
{
	if (n == 1)
		snprintf(buf, len, "%s", r[0].path ? r[0].path : "?");
	else
		snprintf(buf, len, "%zu runs (%s ... %s)", n, r[0].path ? r[0].path : "?",
			 r[n - 1].path ? r[n - 1].path : "?");
	return buf;
}

/* The whole comparison, computed once and rendered by one function per format. */
struct gp_diff {
	const struct gp_rep *base, *cur;
	size_t nb, nn;
	struct gp_diff_row *rows; /* sorted by |delta|, largest first */
	size_t n;
	double tb, tn, sb, sn;    /* the run total of the phase: means and spreads */
	double tp;                /* its delta%, INFINITY from a zero base         */
	int total_tripped;
	size_t ntop;              /* operators the gate watches                    */
	int regressed;
};

/* Rows, run totals and the gate's verdict. 0 or -ENOMEM (nothing to free). */
static int gp_diff_compute(struct gp_diff *x, const struct gp_rep *base, size_t nb, const struct gp_rep *cur,
			   size_t nn, const struct gp_diff_opts *d)
{
	memset(x, 0, sizeof *x);
	x->base = base;
	x->cur = cur;
	x->nb = nb;
	x->nn = nn;
	x->rows = gp_diff_rows(base, nb, cur, nn, d, &x->n);
	if (!x->rows)
		return -ENOMEM;
	/* the run total of the phase, per side */
	double *v = malloc((nb + nn + 1) * sizeof *v);
	if (!v) {
		free(x->rows);
		x->rows = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i < nb; i++)
		v[i] = (double)gp_diff_run_phase(&base[i], d->phase);
	gp_diff_stats(v, nb, &x->tb, &x->sb);
	for (size_t i = 0; i < nn; i++)
		v[i] = (double)gp_diff_run_phase(&cur[i], d->phase);
	gp_diff_stats(v, nn, &x->tn, &x->sn);
	free(v);
	x->total_tripped = gp_diff_trips(d, x->tb, x->tn, x->sb, x->sn);
	size_t ntripped = 0;
	for (size_t k = 0; k < x->n; k++) {
		ntripped += x->rows[k].tripped;
		x->ntop += x->rows[k].top;
	}
	x->regressed = x->total_tripped || ntripped;
	x->tp = gp_diff_pct(x->tb, x->tn);
	return 0;
}

static int gp_diff_multi(const struct gp_diff *x)
{
	return x->nb > 1 || x->nn > 1;
}

static double gp_diff_json_pct(double b, double n)
{
	double p = gp_diff_pct(b, n);
	return isinf(p) ? 1e308 : p;
}

static void gp_diff_render_json(FILE *f, const struct gp_diff *x, const struct gp_diff_opts *d,
				const struct gp_out_opts *o)
{
	fprintf(f, "{\n\"schema\": \"gpuphase-diff\",\n\"schema_version\": %d,\n\"base\": ", GP_DIFF_JSON_VERSION);
	gp_fmt_json_str(f, x->base[0].path);
	fprintf(f, ",\n\"new\": ");
	gp_fmt_json_str(f, x->cur[0].path);
	fprintf(f, ",\n\"phase\": \"%s\",\n\"runs_base\": %zu,\n\"runs_new\": %zu,\n\"min_delta_ns\": %" PRIu64
		   ",\n\"total\": {\"base_ns\": %.0f, \"new_ns\": %.0f, \"delta_pct\": %.4f, \"base_spread_ns\": %.0f"
		   ", \"new_spread_ns\": %.0f, \"gate\": %s},\n\"wall\": {\"base_ns\": %.0f, \"new_ns\": %.0f"
		   ", \"delta_pct\": %.4f},\n\"operators\": [",
		gp_diff_phase_name(d->phase), x->nb, x->nn, d->min_delta_ns, x->tb, x->tn, isinf(x->tp) ? 1e308 : x->tp,
		x->sb, x->sn, x->total_tripped ? "true" : "false", gp_diff_wall(x->base, x->nb),
		gp_diff_wall(x->cur, x->nn), gp_diff_json_pct(gp_diff_wall(x->base, x->nb), gp_diff_wall(x->cur, x->nn)));
	for (size_t k = 0; k < x->n; k++) {
		const struct gp_diff_row *w = &x->rows[k];
		double p = gp_diff_pct(w->mb, w->mn);
		const char *va = gp_diff_verdict(gp_diff_run_of(x->base, x->nb, w->gb), w->gb, &o->th);
		const char *vb = gp_diff_verdict(gp_diff_run_of(x->cur, x->nn, w->gn), w->gn, &o->th);
		fprintf(f, "%s\n  {\"name\": ", k ? "," : "");
		gp_fmt_json_str(f, w->name);
		fprintf(f, ", \"status\": \"%s\", \"base_total_ns\": %.0f, \"new_total_ns\": %.0f"
			   ", \"delta_total_pct\": %.4f, \"delta_launch_ns\": %.0f, \"delta_queue_ns\": %.0f"
			   ", \"delta_execute_ns\": %.0f, \"delta_sync_ns\": %.0f, \"base_verdict\": \"%s\""
			   ", \"new_verdict\": \"%s\", \"gate\": %s, \"base_spread_ns\": %.0f, \"new_spread_ns\": %.0f"
			   ", \"tripped\": %s}",
			gp_diff_status(w), w->mb, w->mn, isinf(p) ? 1e308 : p, w->d_launch, w->d_queue, w->d_execute,
			w->d_sync, va, vb, w->top ? "true" : "false", w->sb, w->sn, w->tripped ? "true" : "false");
	}
	fprintf(f, "\n],\n\"fail_above_pct\": %g,\n\"regressed\": %s\n}\n", d->fail_above_pct,
		x->regressed ? "true" : "false");
}

static void gp_diff_render_csv(FILE *f, const struct gp_diff *x, const struct gp_out_opts *o)
{
	fprintf(f, "operator,status,base_total_ns,new_total_ns,delta_total_ns,delta_total_pct,delta_launch_ns,"
		   "delta_queue_ns,delta_execute_ns,delta_sync_ns,base_verdict,new_verdict,gate,base_spread_ns,"
		   "new_spread_ns,tripped\n");
	for (size_t k = 0; k < x->n; k++) {
		const struct gp_diff_row *w = &x->rows[k];
		double p = gp_diff_pct(w->mb, w->mn);
		const char *va = gp_diff_verdict(gp_diff_run_of(x->base, x->nb, w->gb), w->gb, &o->th);
		const char *vb = gp_diff_verdict(gp_diff_run_of(x->cur, x->nn, w->gn), w->gn, &o->th);
		gp_fmt_csv_str(f, w->name);
		fprintf(f, ",%s,%.0f,%.0f,%.0f,%.4f,%.0f,%.0f,%.0f,%.0f,%s,%s,%d,%.0f,%.0f,%d\n", gp_diff_status(w), w->mb,
			w->mn, w->mn - w->mb, isinf(p) ? 1e308 : p, w->d_launch, w->d_queue, w->d_execute, w->d_sync, va,
			vb, w->top, w->sb, w->sn, w->tripped);
	}
}

/* The text table's heading: both sides, the run totals, the column names. */
static void gp_diff_text_head(FILE *f, const struct gp_diff *x, const struct gp_diff_opts *d)
{
	char b1[64], b2[80], b3[48], b4[48], pb[600], pn[600];
	const char *ph = gp_diff_phase_name(d->phase);
	gp_diff_paths(x->base, x->nb, pb, sizeof pb);
	gp_diff_paths(x->cur, x->nn, pn, sizeof pn);
	fputs("gpuphase diff: ", f);
	gp_fmt_text_str(f, pb);
	fputs(" -> ", f);
	gp_fmt_text_str(f, pn);
	fputs("\n\n", f);
	/* the headline is the elapsed time; the phase sums over ops overlap */
	double wb = gp_diff_wall(x->base, x->nb), wn = gp_diff_wall(x->cur, x->nn), wp = gp_diff_pct(wb, wn);
	fprintf(f, "wall: %s -> %s (%+.1f%%)\n", gp_fmt_ns(wb, b3, sizeof b3), gp_fmt_ns(wn, b4, sizeof b4),
		isinf(wp) ? 0.0 : wp);
	fprintf(f, "%s%s, summed over the ops (they overlap: not elapsed time): %s -> %s (%+.1f%%)", ph,
		d->phase == GP_DIFF_TOTAL ? " (launch + execute + sync)" : "", gp_fmt_ns(x->tb, b1, sizeof b1),
		gp_fmt_ns(x->tn, b2, sizeof b2), isinf(x->tp) ? 0.0 : x->tp);
	if (gp_diff_multi(x))
		fprintf(f, "; spread over the runs %s | %s", gp_fmt_ns(x->sb, b3, sizeof b3), gp_fmt_ns(x->sn, b4, sizeof b4));
	fputc('\n', f);
	fprintf(f, "%s, sorted by the change of %s\n\n", gp_diff_multi(x) ? "means over the runs" : "one run per side",
		ph);
	fprintf(f, "%-32s %6s %10s %10s %11s %8s %10s %11s %11s %11s %11s  %s\n", "operator", "status", "base", "new",
		"delta", "delta%", "spread", "d launch", "d queue", "d execute", "d sync", "verdict");
}

/* One operator's line of the text table. */
static void gp_diff_text_row(FILE *f, const struct gp_diff *x, const struct gp_diff_row *w,
			     const struct gp_out_opts *o)
{
	double p = gp_diff_pct(w->mb, w->mn), spread = w->sb > w->sn ? w->sb : w->sn;
	const char *va = gp_diff_verdict(gp_diff_run_of(x->base, x->nb, w->gb), w->gb, &o->th);
	const char *vb = gp_diff_verdict(gp_diff_run_of(x->cur, x->nn, w->gn), w->gn, &o->th);
	char nm[40], pct[16], sp[32], b2[80], b3[48], b4[48], b5[48], b6[48], mb[32], mn[32];
	gp_fmt_cut(w->name, 32, nm, sizeof nm);
	if (isinf(p))
		snprintf(pct, sizeof pct, "new");
	else
		snprintf(pct, sizeof pct, "%+.1f%%", p);
	if (gp_diff_multi(x))
		gp_fmt_ns(spread, sp, sizeof sp);
	else
		snprintf(sp, sizeof sp, "-");
	gp_diff_signed(w->mn - w->mb, b2, sizeof b2);
	gp_diff_signed(w->d_launch, b3, sizeof b3);
	gp_diff_signed(w->d_queue, b4, sizeof b4);
	gp_diff_signed(w->d_execute, b5, sizeof b5);
	gp_diff_signed(w->d_sync, b6, sizeof b6);
	gp_fmt_text_pad(f, nm, 32); /* names from the program: escaped */
	fprintf(f, " %6s %10s %10s %11s %8s %10s %11s %11s %11s %11s  %s%s%s%s\n", gp_diff_status(w),
		gp_fmt_ns(w->mb, mb, sizeof mb), gp_fmt_ns(w->mn, mn, sizeof mn), b2, pct, sp, b3, b4, b5, b6, va,
		strcmp(va, vb) ? " -> " : "", strcmp(va, vb) ? vb : "", w->tripped ? "  <- gate" : "");
}

/* The gate line names every operator that tripped it, with its numbers. */
static void gp_diff_text_gate(FILE *f, const struct gp_diff *x, const struct gp_diff_opts *d)
{
	char b1[64], b2[80], b3[48], b4[48];
	fprintf(f, "\ngate: %s (%s: fail above %+.1f%% on the total or on any of the base's top %zu operators",
		x->regressed ? "REGRESSED" : "ok", gp_diff_phase_name(d->phase), d->fail_above_pct, x->ntop);
	if (d->min_delta_ns)
		fprintf(f, ", changes under %s ignored", gp_fmt_ns((double)d->min_delta_ns, b1, sizeof b1));
	if (gp_diff_multi(x))
		fprintf(f, ", and only beyond the runs' spread");
	fprintf(f, ")");
	const char *sep = ": ";
	if (x->total_tripped) {
		fprintf(f, "%stotal %+.1f%% (%s -> %s)", sep, isinf(x->tp) ? 0.0 : x->tp, gp_fmt_ns(x->tb, b1, sizeof b1),
			gp_fmt_ns(x->tn, b2, sizeof b2));
		sep = "; ";
	}
	for (size_t k = 0; k < x->n; k++) {
		const struct gp_diff_row *w = &x->rows[k];
		if (!w->tripped)
			continue;
		double p = gp_diff_pct(w->mb, w->mn), spread = w->sb > w->sn ? w->sb : w->sn;
		fputs(sep, f);
		gp_fmt_text_str(f, w->name);
		fprintf(f, " %+.1f%% (%s -> %s, %s%s", isinf(p) ? 0.0 : p, gp_fmt_ns(w->mb, b1, sizeof b1),
			gp_fmt_ns(w->mn, b2, sizeof b2), w->mn > w->mb ? "+" : "", gp_fmt_ns(w->mn - w->mb, b3, sizeof b3));
		if (gp_diff_multi(x))
			fprintf(f, " > spread %s", gp_fmt_ns(spread, b4, sizeof b4));
		fprintf(f, ")");
		sep = "; ";
	}
	fprintf(f, "\n");
}

/* Text, and markdown (the same table): heading, rows, the gate when one is set. */
static void gp_diff_render_text(FILE *f, const struct gp_diff *x, const struct gp_diff_opts *d,
				const struct gp_out_opts *o)
{
	gp_diff_text_head(f, x, d);
	for (size_t k = 0; k < x->n; k++)
		gp_diff_text_row(f, x, &x->rows[k], o);
	if (d->fail_above_pct >= 0)
		gp_diff_text_gate(f, x, d);
}

int gp_diff_write(FILE *f, const struct gp_rep *base, size_t nb, const struct gp_rep *cur, size_t nn,
		  const struct gp_diff_opts *d, const struct gp_out_opts *o, int *regressed)
{
	struct gp_diff x;
	*regressed = 0;
	int rc = gp_diff_compute(&x, base, nb, cur, nn, d);
	if (rc)
		return rc;
	*regressed = x.regressed;
	if (o->format == GP_FMT_JSON)
		gp_diff_render_json(f, &x, d, o);
	else if (o->format == GP_FMT_CSV)
		gp_diff_render_csv(f, &x, o);
	else
		gp_diff_render_text(f, &x, d, o);
	free(x.rows);
	return ferror(f) ? -EIO : 0;
}
