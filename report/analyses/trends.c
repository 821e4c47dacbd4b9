/*
 * trends.c — the "Trends" analysis: operators whose execute time drifts
 * through the window (least-squares slope over their calls in the order the
 * core completes them, from sums kept per operator), long-tail operators
 * (p99 execute far above p50), and outlier iterations explained by the
 * operators that made them slow (excess over their usual per-iteration
 * time). Prepare classes the closed iterations (normal or outlier) from the
 * core's iteration starts; each op is folded into its operator's sums and,
 * in an outlier iteration, into a per-(iteration, operator) sum. The section
 * and its JSON object ("trends", docs/report-json.md) follow. A plug-in of
 * registry.h; report thread only. Definitions and thresholds:
 * docs/metrics.md §13; the thresholds are the GP_TREND_* constants below.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "report/util/fmt.h"
#include "report/util/map.h"

#define GP_TREND_MIN_CALLS 10   /* drift: at least this many calls            */
#define GP_TREND_MIN_R2 0.5     /* drift: fit quality                          */
#define GP_TREND_MIN_DRIFT 0.2  /* drift: |slope * (n - 1)| / mean            */
#define GP_TAIL_MIN_CALLS 20    /* long tail: at least this many calls        */
#define GP_TAIL_RATIO 3.0       /* long tail: p99 >= ratio * p50              */
#define GP_OUTLIER_TOP 3        /* operators named per outlier iteration      */
#define GP_OUTLIER_MIN_SHARE 0.1 /* ... each over its usual by >= 10 % of p50  */

/* Per operator (core group index): drift fit sums over its calls in arrival
 * order (x = call index, y = execute ns), and its launch + execute in closed
 * non-outlier iterations. */
struct gp_trend_op {
	uint64_t n;
	double sx, sy, sxx, sxy, syy;
	uint64_t normal_ns;
};

struct gp_trends {
	int err;
	double outlier_factor;        /* --outlier-factor (default 1.5)         */
	struct gp_trend_op *grp;
	size_t ngrp;
	struct gp_map iter_class;     /* iteration number -> 1 normal, 2 outlier (closed ones) */
	size_t nnormal;               /* closed non-outlier iterations          */
	size_t nnormal_seen;          /* ... of them with ops in the trace      */
	struct gp_map iter_seen;      /* iteration number -> 1 when it has ops  */
	struct gp_map iter_grp;       /* outlier iter << 20 | group -> launch + execute */
};

static void *gp_trend_create(const struct gp_analysis_env *env)
{
	struct gp_trends *t = calloc(1, sizeof *t);
	if (t)
		t->outlier_factor = env->outlier_factor;
	return t;
}

static void gp_trend_destroy(void *p)
{
	struct gp_trends *t = p;
	free(t->grp);
	gp_map_free(&t->iter_class);
	gp_map_free(&t->iter_seen);
	gp_map_free(&t->iter_grp);
	free(t);
}

/* Classes of the closed iterations, the core's rule (docs/metrics.md §7):
 * outlier when longer than outlier_factor x the p50 duration. */
static int gp_trend_prepare(void *p, const struct gp_an *an)
{
	struct gp_trends *t = p;
	uint64_t *s;
	int64_t *num;
	size_t n = gp_an_iteration_starts(an, &s, &num);
	if (s && num && n >= 4) {
		uint64_t *d = malloc((n - 1) * sizeof *d);
		if (d) {
			for (size_t i = 0; i + 1 < n; i++)
				d[i] = s[i + 1] - s[i];
			qsort(d, n - 1, sizeof *d, gp_stats_cmp_u64);
			double p50 = (double)d[(n - 1 + 1) / 2 - 1]; /* nearest rank: ceil(0.5 n) */
			free(d);
			for (size_t i = 0; i + 1 < n; i++) {
				int out = (double)(s[i + 1] - s[i]) > t->outlier_factor * p50;
				gp_map_put(&t->iter_class, (uint64_t)num[i], out ? 2 : 1);
				t->nnormal += !out;
			}
		}
	}
	free(s);
	free(num);
	return t->err;
}

static void gp_trend_add(struct gp_trends *t, uint64_t key, uint64_t v)
{
	uint64_t *p = gp_map_get(&t->iter_grp, key);
	if (p)
		*p += v;
	else
		gp_analysis_fail(&t->err, gp_map_put(&t->iter_grp, key, v));
}

static void gp_trend_op(void *p, const struct gp_an_op *op)
{
	struct gp_trends *t = p;
	if (op->group == UINT32_MAX)
		return;
	if (gp_an_grow_zeroed((void **)&t->grp, &t->ngrp, op->group, sizeof *t->grp))
		return gp_analysis_fail(&t->err, -ENOMEM);
	struct gp_trend_op *g = &t->grp[op->group];
	if (op->has_gpu) {
		double x = (double)g->n, y = (double)op->execute_ns;
		g->n++;
		g->sx += x;
		g->sy += y;
		g->sxx += x * x;
		g->sxy += x * y;
		g->syy += y * y;
	}
	uint64_t v = op->launch_ns + op->execute_ns;
	uint64_t *cls = op->iter >= 0 ? gp_map_get(&t->iter_class, (uint64_t)op->iter) : NULL;
	if (cls && *cls == 1 && !gp_map_get(&t->iter_seen, (uint64_t)op->iter)) {
		gp_analysis_fail(&t->err, gp_map_put(&t->iter_seen, (uint64_t)op->iter, 1));
		t->nnormal_seen++;
	}
	if (cls && *cls == 1)
		g->normal_ns += v;
	else if (cls && *cls == 2 && op->group < (1u << 20))
		gp_trend_add(t, (uint64_t)op->iter << 20 | op->group, v);
}

static int gp_trend_finish(void *p, const struct gp_an *an, const struct gp_rep *rep)
{
	(void)an;
	(void)rep;
	return ((struct gp_trends *)p)->err;
}

/* Least-squares fit of y over x = 0..n-1. */
struct gp_fit {
	double slope, intercept, r2, mean;
};

/* Least-squares fit from the per-operator sums gp_trend_op keeps (x = call
 * index in arrival order, y = execute ns). */
static struct gp_fit gp_trend_fit_sums(const struct gp_trend_op *g)
{
	struct gp_fit f = { 0 };
	if (!g->n)
		return f;
	double dn = (double)g->n, vx = g->sxx - g->sx * g->sx / dn, vy = g->syy - g->sy * g->sy / dn;
	double cxy = g->sxy - g->sx * g->sy / dn;
	f.mean = g->sy / dn;
	f.slope = vx > 0 ? cxy / vx : 0;
	f.intercept = f.mean - f.slope * g->sx / dn;
	f.r2 = vx > 0 && vy > 0 ? cxy * cxy / (vx * vy) : 0;
	return f;
}

/* Operator g drifts: enough calls, a good fit and a large relative drift
 * (|slope * (n - 1)| / mean, in *drift as a signed fraction). */
static int gp_trend_drifts(const struct gp_trends *tr, size_t g, struct gp_fit *fit, double *drift)
{
	uint64_t m = tr->grp[g].n;
	if (m < GP_TREND_MIN_CALLS)
		return 0;
	*fit = gp_trend_fit_sums(&tr->grp[g]);
	*drift = fit->mean > 0 ? fit->slope * (double)(m - 1) / fit->mean : 0;
	return fit->r2 >= GP_TREND_MIN_R2 && fabs(*drift) >= GP_TREND_MIN_DRIFT;
}

/* Drift lines; returns how many operators drift. */
static size_t gp_trend_drift(FILE *f, const struct gp_trends *tr, const struct gp_rep *rep, int md, size_t top)
{
	size_t flagged = 0;
	for (size_t g = 0; g < rep->ngroups && g < tr->ngrp && (!top || flagged < top); g++) {
		uint64_t m = tr->grp[g].n;
		struct gp_fit fit;
		double drift;
		if (!gp_trend_drifts(tr, g, &fit, &drift))
			continue;
		char b1[32], b2[32], b3[32], nb[256];
		if (!flagged++)
			fprintf(f, md ? "\n**Drifting execute time**\n\n" : "  drifting execute time:\n");
		fprintf(f, "%s%s: %s per call (%+.0f%% over %llu calls: fitted %s -> %s, R^2 %.2f)\n", md ? "- " : "    ",
			gp_fmt_name_buf(rep->groups[g].name, md, nb, sizeof nb), gp_fmt_ns(fit.slope, b1, sizeof b1), drift * 100.0, (unsigned long long)m,
			gp_fmt_ns(fit.intercept, b2, sizeof b2),
			gp_fmt_ns(fit.intercept + fit.slope * (double)(m - 1), b3, sizeof b3), fit.r2);
	}
	return flagged;
}

/* Operator g has a long tail (p99 >= GP_TAIL_RATIO x p50 over enough calls). */
static int gp_trend_tail(const struct gp_rep_group *g, uint64_t *p50, uint64_t *p99)
{
	if (g->exec.n < GP_TAIL_MIN_CALLS)
		return 0;
	*p50 = gp_hist_quantile(&g->exec, 0.5);
	*p99 = gp_hist_quantile(&g->exec, 0.99);
	return *p99 != 0 && (double)*p99 >= GP_TAIL_RATIO * (double)*p50;
}

static size_t gp_trend_tails(FILE *f, const struct gp_rep *rep, int md, size_t top)
{
	size_t flagged = 0;
	for (size_t i = 0; i < rep->ngroups && (!top || flagged < top); i++) {
		const struct gp_rep_group *g = &rep->groups[i];
		uint64_t p50, p99;
		if (!gp_trend_tail(g, &p50, &p99))
			continue;
		char b1[32], b2[32], nb[256];
		if (!flagged++)
			fprintf(f, md ? "\n**Long-tail operators**\n\n" : "  long-tail operators:\n");
		fprintf(f, "%s%s: p99 %s vs p50 %s (%.1fx) over %llu calls\n", md ? "- " : "    ",
			gp_fmt_name_buf(g->name, md, nb, sizeof nb),
			gp_fmt_ns((double)p99, b1, sizeof b1), gp_fmt_ns((double)p50, b2, sizeof b2),
			p50 ? (double)p99 / (double)p50 : 0.0, (unsigned long long)g->exec.n);
	}
	return flagged;
}

/* Per-(outlier iteration number, group) time: launch + execute of its ops
 * (gp_trend_op keeps the sums). */
static uint64_t gp_trend_cell(const struct gp_trends *tr, int64_t iter, uint32_t g)
{
	uint64_t *v = iter >= 0 && g < (1u << 20) ? gp_map_get(&tr->iter_grp, (uint64_t)iter << 20 | g) : NULL;
	return v ? *v : 0;
}

struct gp_excess {
	uint32_t group;
	uint64_t cur, usual;
	double excess;
};

static int gp_trend_cmp_excess(const void *a, const void *b)
{
	const struct gp_excess *x = a, *y = b;
	return x->excess > y->excess ? -1 : x->excess < y->excess;
}

/* The operators notably over their usual time in outlier iteration i
 * (into ex, sorted by excess, largest first); returns how many. */
static size_t gp_trend_excess(const struct gp_trends *tr, const struct gp_rep *rep, size_t i, uint64_t p50,
			      struct gp_excess *ex)
{
	size_t nx = 0;
	for (uint32_t g = 0; g < rep->ngroups; g++) {
		uint64_t cur = gp_trend_cell(tr, rep->iters[i].iter, g);
		if (!cur)
			continue;
		/* usual: its mean time per closed non-outlier iteration */
		uint64_t usual = tr->nnormal_seen && g < tr->ngrp ? tr->grp[g].normal_ns / tr->nnormal_seen : 0;
		/* only operators notably over their usual time */
		if (cur > usual && (double)(cur - usual) >= GP_OUTLIER_MIN_SHARE * (double)p50)
			ex[nx++] = (struct gp_excess){ g, cur, usual, (double)(cur - usual) };
	}
	if (nx)
		qsort(ex, nx, sizeof *ex, gp_trend_cmp_excess);
	return nx;
}

/* Outlier flags of the iterations (calloc'd, NULL when there are fewer than
 * 3 or on ENOMEM) and the duration p50; ex gets room for every operator. */
static uint8_t *gp_trend_outlier_flags(const struct gp_rep *rep, const struct gp_analysis_style *o, uint64_t *p50,
				       struct gp_excess **ex)
{
	uint64_t p99;
	*ex = NULL;
	if (rep->niters < 3)
		return NULL;
	uint8_t *out = calloc(rep->niters, 1);
	*ex = calloc(rep->ngroups ? rep->ngroups : 1, sizeof **ex);
	if (!out || !*ex) {
		free(out);
		free(*ex);
		*ex = NULL;
		return NULL;
	}
	gp_rep_iter_stats(rep, o->outlier_factor, p50, &p99, out);
	return out;
}

/* The phases of iteration i against their usual values (means over the
 * closed iterations that are not outliers): the one that grew most. */
struct gp_phase_excess {
	const char *name;
	double cur, usual, excess;
};

static struct gp_phase_excess gp_trend_phase(const struct gp_rep *rep, const uint8_t *out, size_t i)
{
	double usual[3] = { 0, 0, 0 };
	size_t n = 0;
	for (size_t j = 0; j < rep->niters; j++) {
		const struct gp_rep_iter *it = &rep->iters[j];
		if (out[j] || it->open)
			continue;
		usual[0] += (double)it->launch_ns;
		usual[1] += (double)it->execute_ns;
		usual[2] += (double)it->sync_ns;
		n++;
	}
	const struct gp_rep_iter *it = &rep->iters[i];
	double cur[3] = { (double)it->launch_ns, (double)it->execute_ns, (double)it->sync_ns };
	static const char *const names[3] = { "launch", "execute", "sync" };
	struct gp_phase_excess best = { NULL, 0, 0, 0 };
	for (int k = 0; k < 3; k++) {
		double u = n ? usual[k] / (double)n : 0;
		if (cur[k] - u > best.excess)
			best = (struct gp_phase_excess){ names[k], cur[k], u, cur[k] - u };
	}
	return best;
}

static int gp_trend_cmp_u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x > y ? -1 : x < y;
}

static size_t gp_trend_outliers(FILE *f, const struct gp_trends *tr, const struct gp_rep *rep,
				const struct gp_analysis_style *o, int md)
{
	uint64_t p50 = 0;
	struct gp_excess *ex;
	uint8_t *out = gp_trend_outlier_flags(rep, o, &p50, &ex);
	size_t flagged = 0, nout = 0;
	/* --top N: the N longest outliers, still in iteration order */
	uint64_t cutoff = 0;
	uint64_t *durs = out ? calloc(rep->niters, sizeof *durs) : NULL;
	for (size_t i = 0; durs && i < rep->niters; i++)
		if (out[i] && rep->iters[i].ops)
			durs[nout++] = rep->iters[i].end - rep->iters[i].start;
	if (durs && o->top && nout > o->top) {
		qsort(durs, nout, sizeof *durs, gp_trend_cmp_u64_desc);
		cutoff = durs[o->top - 1];
	}
	free(durs);
	for (size_t i = 0; out && i < rep->niters; i++) {
		if (!out[i] || !rep->iters[i].ops) /* outside the window: nothing to explain with */
			continue;
		uint64_t d = rep->iters[i].end - rep->iters[i].start;
		if (d < cutoff || (o->top && flagged >= o->top))
			continue;
		size_t nx = gp_trend_excess(tr, rep, i, p50, ex);
		struct gp_phase_excess ph = gp_trend_phase(rep, out, i);
		char b1[32], b2[32], b3[32], b4[32], nb[256];
		if (!flagged++)
			fprintf(f, md ? "\n**Outlier iterations** (duration > %.2g x p50 %s)\n\n"
				      : "  outlier iterations (duration > %.2g x p50 %s):\n",
				o->outlier_factor, gp_fmt_ns((double)p50, b1, sizeof b1));
		fprintf(f, "%siteration %lld: %s (+%s over p50)", md ? "- " : "    ", (long long)rep->iters[i].iter,
			gp_fmt_ns((double)d, b1, sizeof b1),
			gp_fmt_ns((double)d - (double)p50, b2, sizeof b2));
		double explained = 0, over = (double)d - (double)p50;
		/* the largest phase first: sync that grew is sync, not "host code" */
		if (ph.name && ph.excess >= GP_OUTLIER_MIN_SHARE * (double)p50)
			fprintf(f, "; largest phase: %s +%s (%s vs usual %s)", ph.name,
				gp_fmt_ns(ph.excess, b2, sizeof b2), gp_fmt_ns(ph.cur, b3, sizeof b3),
				gp_fmt_ns(ph.usual, b4, sizeof b4));
		else
			ph.excess = 0;
		for (size_t k = 0; k < nx && k < GP_OUTLIER_TOP; k++) {
			fprintf(f, "%s %s +%s (%s vs usual %s)", k ? "," : "; slow:",
				gp_fmt_name_buf(rep->groups[ex[k].group].name, md, nb, sizeof nb),
				gp_fmt_ns(ex[k].excess, b2, sizeof b2), gp_fmt_ns((double)ex[k].cur, b3, sizeof b3),
				gp_fmt_ns((double)ex[k].usual, b4, sizeof b4));
			explained += ex[k].excess;
		}
		if (ph.excess > explained)
			explained = ph.excess;
		if (explained < 0.5 * over)
			fprintf(f, "; %s%s went to host code or waits outside CUDA", explained > 0 ? "the other " : "",
				gp_fmt_ns(over - explained, b2, sizeof b2));
		fprintf(f, "\n");
	}
	if (o->top && nout > flagged && flagged)
		fprintf(f, "%s(%zu more outlier iterations; without --top all are listed)\n", md ? "- " : "    ",
			nout - flagged);
	free(out);
	free(ex);
	return flagged;
}

static void gp_trend_text(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *o)
{
	const struct gp_trends *tr = p;
	int md = o->markdown;
	fprintf(f, md ? "\n## Trends\n" : "\nTrends\n");
	size_t n = gp_trend_drift(f, tr, rep, md, o->top);
	n += gp_trend_tails(f, rep, md, o->top);
	n += gp_trend_outliers(f, tr, rep, o, md);
	if (!n)
		fprintf(f, "%sno drifting execute times, no long tails, no outlier iterations\n", md ? "\n" : "  ");
}

/* a - b as a long long, clamped (a lying trace can hold any values) */
static long long gp_trend_signed_diff(uint64_t a, uint64_t b)
{
	if (a >= b)
		return a - b > (uint64_t)LLONG_MAX ? LLONG_MAX : (long long)(a - b);
	return b - a > (uint64_t)LLONG_MAX ? LLONG_MIN : -(long long)(b - a);
}

static void gp_trend_json(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *o)
{
	const struct gp_trends *tr = p;
	fprintf(f, "{\"thresholds\": {\"drift_min_calls\": %d, \"drift_min_r2\": %g, \"drift_min\": %g, "
		   "\"tail_min_calls\": %d, \"tail_ratio\": %g, \"outlier_factor\": %g},\n   \"drifting\": [",
		GP_TREND_MIN_CALLS, GP_TREND_MIN_R2, GP_TREND_MIN_DRIFT, GP_TAIL_MIN_CALLS, GP_TAIL_RATIO,
		o->outlier_factor);
	size_t n = 0;
	for (size_t g = 0; g < rep->ngroups && g < tr->ngrp; g++) {
		struct gp_fit fit;
		double drift;
		if (!gp_trend_drifts(tr, g, &fit, &drift))
			continue;
		uint64_t m = tr->grp[g].n;
		fprintf(f, "%s{\"name\": ", n++ ? ", " : "");
		gp_fmt_json_str(f, rep->groups[g].name);
		fprintf(f, ", \"calls\": %llu, \"slope_ns_per_call\": ", (unsigned long long)m);
		gp_fmt_json_num(f, fit.slope);
		fputs(", \"drift\": ", f);
		gp_fmt_json_num(f, drift);
		fputs(", \"fitted_first_ns\": ", f);
		gp_fmt_json_num(f, fit.intercept);
		fputs(", \"fitted_last_ns\": ", f);
		gp_fmt_json_num(f, fit.intercept + fit.slope * (double)(m - 1));
		fputs(", \"r2\": ", f);
		gp_fmt_json_num(f, fit.r2);
		fputs("}", f);
	}
	fputs("],\n   \"long_tail\": [", f);
	n = 0;
	for (size_t i = 0; i < rep->ngroups; i++) {
		const struct gp_rep_group *g = &rep->groups[i];
		uint64_t p50, p99;
		if (!gp_trend_tail(g, &p50, &p99))
			continue;
		fprintf(f, "%s{\"name\": ", n++ ? ", " : "");
		gp_fmt_json_str(f, g->name);
		fprintf(f, ", \"calls\": %llu, \"execute_p50_ns\": %llu, \"execute_p99_ns\": %llu, \"ratio\": ",
			(unsigned long long)g->exec.n, (unsigned long long)p50, (unsigned long long)p99);
		gp_fmt_json_num(f, p50 ? (double)p99 / (double)p50 : 0.0);
		fputs("}", f);
	}
	fputs("],\n   \"outlier_iterations\": [", f);
	uint64_t p50 = 0;
	struct gp_excess *ex;
	uint8_t *out = gp_trend_outlier_flags(rep, o, &p50, &ex);
	n = 0;
	for (size_t i = 0; out && i < rep->niters; i++) {
		if (!out[i] || !rep->iters[i].ops)
			continue;
		size_t nx = gp_trend_excess(tr, rep, i, p50, ex);
		uint64_t d = rep->iters[i].end - rep->iters[i].start;
		double explained = 0;
		fprintf(f, "%s\n    {\"iter\": %lld, \"duration_ns\": %llu, \"over_p50_ns\": %lld, \"slow_operators\": [",
			n++ ? "," : "", (long long)rep->iters[i].iter, (unsigned long long)d, gp_trend_signed_diff(d, p50));
		for (size_t k = 0; k < nx && k < GP_OUTLIER_TOP; k++) {
			fprintf(f, "%s{\"name\": ", k ? ", " : "");
			gp_fmt_json_str(f, rep->groups[ex[k].group].name);
			fprintf(f, ", \"ns\": %llu, \"usual_ns\": %llu, \"excess_ns\": %llu}", (unsigned long long)ex[k].cur,
				(unsigned long long)ex[k].usual, (unsigned long long)(ex[k].cur - ex[k].usual));
			explained += ex[k].excess;
		}
		double rest = (double)d - (double)p50 - explained;
		/* a lying trace can make it exceed what a long long holds */
		long long un = rest <= 0 ? 0LL : rest >= 9.2e18 ? LLONG_MAX : (long long)rest;
		fprintf(f, "], \"unexplained_ns\": %lld}", un);
	}
	free(out);
	free(ex);
	fprintf(f, "%s]}", n ? "\n   " : "");
}

/* Partial results: the per-operator fit sums, the outlier iterations'
 * per-operator time and the count of normal iterations the section reads
 * (the classes themselves are used in pass 2 only). */
static int gp_trend_save(const void *p, struct gp_pw *w)
{
	const struct gp_trends *t = p;
	gp_pw_u64(w, t->nnormal_seen);
	gp_pw_u64(w, t->ngrp);
	for (size_t g = 0; g < t->ngrp; g++) {
		const struct gp_trend_op *x = &t->grp[g];
		gp_pw_u64(w, x->n);
		gp_pw_f64(w, x->sx);
		gp_pw_f64(w, x->sy);
		gp_pw_f64(w, x->sxx);
		gp_pw_f64(w, x->sxy);
		gp_pw_f64(w, x->syy);
		gp_pw_u64(w, x->normal_ns);
	}
	gp_pw_map(w, &t->iter_grp);
	return w->err;
}

static int gp_trend_load(void *p, struct gp_pr *r, struct gp_strtab *strings)
{
	struct gp_trends *t = p;
	(void)strings;
	uint64_t seen = gp_pr_u64(r);
	t->nnormal_seen = seen > SIZE_MAX ? SIZE_MAX : (size_t)seen;
	size_t ng = gp_pr_count(r, 56, UINT32_MAX);
	if (ng && !r->err && !(t->grp = calloc(ng, sizeof *t->grp)))
		gp_pr_oom(r);
	for (size_t g = 0; g < ng && !r->err; g++) {
		struct gp_trend_op *x = &t->grp[g];
		x->n = gp_pr_u64(r);
		x->sx = gp_pr_f64(r);
		x->sy = gp_pr_f64(r);
		x->sxx = gp_pr_f64(r);
		x->sxy = gp_pr_f64(r);
		x->syy = gp_pr_f64(r);
		x->normal_ns = gp_pr_u64(r);
		t->ngrp = g + 1;
	}
	gp_pr_map(r, &t->iter_grp);
	return r->err;
}

const struct gp_analysis gp_analysis_trends = {
	.name = "trends",
	.title = "Trends",
	.create = gp_trend_create,
	.prepare = gp_trend_prepare,
	.op = gp_trend_op,
	.finish = gp_trend_finish,
	.text = gp_trend_text,
	.json = gp_trend_json,
	.destroy = gp_trend_destroy,
	.save = gp_trend_save,
	.load = gp_trend_load,
};
