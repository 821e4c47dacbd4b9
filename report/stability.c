/*
 * stability.c — `gpuphase-report stability [options] RUN1 RUN2 ...`: is the
 * profile repeatable? Each trace (several runs of the same program) is
 * analysed on its own (analysis.h); then per operator (matched by name) the
 * mean and coefficient of variation across runs of its launch, execute, sync
 * and total time per run; the stability of the top-N ranking by total
 * (overlap of the runs' top-N sets, Spearman rank correlation of every pair of
 * runs); and a verdict: stable, or unstable with the operators that moved and
 * by how much. Exit status 0 stable, 1 unstable, 2 bad usage or input, 4 out
 * of memory. docs/metrics.md "Repeatability" defines every number.
 * An ordinary single-threaded program path: messages go to stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/util/fmt.h"
#include "options.h"
#include "pipeline.h"
#include "stability.h"

struct gp_stab_op {
	const char *name;   /* owned by runs[0..].groups (first run that has it) */
	double v[4][64];    /* [phase][run]: launch, execute, sync, total (ns)    */
	int present[64];
	double mean[4], cv[4], min_total, max_total; /* min/max: of the judged phase */
	int rank[64];       /* 1-based rank by total in each run, 0 = absent      */
};

static const char *const gp_stab_phase[4] = { "launch", "execute", "sync", "total" };

/* Analyse every run: the core's operator table only (no analyses, no
 * footer facts: nothing here prints them). Returns 0, 2 or 4, said once. */
static int gp_stab_load(char **paths, int n, int group_by, struct gp_rep *runs)
{
	struct gp_pipeline_opts po = { .group_by = (enum gp_group_by)group_by, .what = 0 };
	struct gp_pipeline *p = gp_pipeline_new(&po);
	int rc = p ? 0 : 4;
	for (int r = 0; r < n && !rc; r++) {
		char err[512];
		int e = gp_pipeline_add(p, paths[r], err, sizeof err);
		if (e == -ENOMEM) {
			fprintf(stderr, "gpuphase-report: %s: out of memory while analysing\n", paths[r]);
			rc = 4;
		} else if (e) {
			fprintf(stderr, "gpuphase-report: %s\n", err);
			rc = 2;
		} else {
			gp_pipeline_report(p, (size_t)r, 1, &runs[r]);
		}
	}
	gp_pipeline_free(p);
	return rc;
}

static const double *g_rank_vals; /* qsort context (single-threaded) */

static int gp_stab_cmp_idx(const void *a, const void *b)
{
	double x = g_rank_vals[*(const size_t *)a], y = g_rank_vals[*(const size_t *)b];
	return x > y ? -1 : x < y;
}

/* Spearman correlation of two value vectors (higher = rank 1), average ranks
 * for ties. n >= 2. */
static double gp_stab_spearman(const double *x, const double *y, size_t n)
{
	double *rx = malloc(n * sizeof *rx), *ry = malloc(n * sizeof *ry);
	size_t *ix = malloc(n * sizeof *ix);
	double rho = NAN;
	if (!rx || !ry || !ix)
		goto out;
	for (int pass = 0; pass < 2; pass++) {
		const double *v = pass ? y : x;
		double *r = pass ? ry : rx;
		for (size_t i = 0; i < n; i++)
			ix[i] = i;
		g_rank_vals = v;
		qsort(ix, n, sizeof *ix, gp_stab_cmp_idx);
		for (size_t i = 0; i < n;) {
			size_t j = i;
			while (j + 1 < n && v[ix[j + 1]] == v[ix[i]])
				j++;
			for (size_t k = i; k <= j; k++)
				r[ix[k]] = (double)(i + j) / 2.0 + 1.0;
			i = j + 1;
		}
	}
	double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
	for (size_t i = 0; i < n; i++) {
		mx += rx[i];
		my += ry[i];
	}
	mx /= (double)n;
	my /= (double)n;
	for (size_t i = 0; i < n; i++) {
		sxy += (rx[i] - mx) * (ry[i] - my);
		sxx += (rx[i] - mx) * (rx[i] - mx);
		syy += (ry[i] - my) * (ry[i] - my);
	}
	rho = sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 1.0;
out:
	free(rx);
	free(ry);
	free(ix);
	return rho;
}

static void gp_stab_usage(FILE *f)
{
	fprintf(f, "usage: gpuphase-report stability [--top N] [--cv-pct P] [--phase launch|execute|sync|total]\n"
		   "                                    [--group-by kernel|nvtx|callsite|stream] RUN1 RUN2 ...\n"
		   "  several traces of the same program: per-operator mean and coefficient of variation of each\n"
		   "  phase across runs, stability of the top-N ranking, verdict. --top N (default 5): ranking size;\n"
		   "  --cv-pct P (default 10): an operator is unstable when its time varies more than P%% (CV);\n"
		   "  --phase (default total): which time decides the ranking and the verdict.\n"
		   "  Exit status: 0 stable, 1 unstable, 2 bad usage or input, 4 out of memory.\n");
}

/* One stability run: options, the runs' reports, operators across runs. */
struct gp_stab {
	size_t top;
	double cvmax;
	int group_by, ph;   /* ph: the judged phase                           */
	int nruns;
	struct gp_rep *runs;
	struct gp_stab_op *ops;
	size_t nops, capops;
	double overlap, rho_min, rho_sum;
	size_t in_all, union_n, ntop;
	int npairs;
};

static const char *const gp_stab_groups[] = { "kernel", "nvtx", "callsite", "stream" };

/* Options into st; returns -1 to go on, else the exit status. */
static int gp_stab_options(int argc, char **argv, struct gp_stab *st)
{
	struct option lo[GP_OPTIONS_MAX + 1];
	char shortopts[2 * GP_OPTIONS_MAX + 2];
	gp_options_getopt(GP_OPTIONS_STABILITY, lo, shortopts); /* options.c's table */
	int c;
	char *end;
	optind = 1;
	opterr = 0; /* one line of ours instead of getopt's and the usage */
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		switch (c) {
		case 't': {
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1) {
				fprintf(stderr, "gpuphase-report: stability --top: '%s' is not a positive integer\n", optarg);
				return 2;
			}
			st->top = (size_t)v;
			break;
		}
		case 'c':
			if (gp_options_number(optarg, 0, 1, &st->cvmax)) {
				fprintf(stderr, "gpuphase-report: stability --cv-pct: '%s' is not a percentage >= 0\n", optarg);
				return 2;
			}
			break;
		case 'g': {
			int k = -1;
			for (int i = 0; i < 4; i++)
				if (!strcmp(optarg, gp_stab_groups[i]))
					k = i;
			if (k < 0) {
				fprintf(stderr, "gpuphase-report: stability --group-by: '%s' is not one of: kernel nvtx "
						"callsite stream\n", optarg);
				return 2;
			}
			st->group_by = k;
			break;
		}
		case 'P': {
			st->ph = -1;
			for (int i = 0; i < 4; i++)
				if (!strcmp(optarg, gp_stab_phase[i]))
					st->ph = i;
			if (st->ph < 0) {
				fprintf(stderr, "gpuphase-report: stability --phase: '%s' is not one of: launch execute sync "
						"total\n", optarg);
				return 2;
			}
			break;
		}
		case 'h':
			gp_stab_usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "gpuphase-report: stability: option '%s' needs a value (gpuphase-report stability "
					"--help lists the options)\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "gpuphase-report: stability: unknown option '%s' (gpuphase-report stability --help "
					"lists the options)\n", argv[optind - 1]);
			return 2;
		}
	}
	return -1;
}

/* Operators by name across runs, with their phase times per run. Returns 0
 * or 4 (out of memory). */
static int gp_stab_collect(struct gp_stab *st)
{
	for (int r = 0; r < st->nruns; r++) {
		for (size_t g = 0; g < st->runs[r].ngroups; g++) {
			const struct gp_rep_group *gr = &st->runs[r].groups[g];
			size_t k = 0;
			while (k < st->nops && strcmp(st->ops[k].name, gr->name))
				k++;
			if (k == st->nops) {
				if (st->nops == st->capops) {
					st->capops = st->capops ? st->capops * 2 : 16;
					struct gp_stab_op *v = realloc(st->ops, st->capops * sizeof *v);
					if (!v)
						return 4;
					st->ops = v;
				}
				memset(&st->ops[st->nops], 0, sizeof st->ops[st->nops]);
				st->ops[st->nops++].name = gr->name;
			}
			struct gp_stab_op *o = &st->ops[k];
			o->present[r] = 1;
			o->v[0][r] += (double)gr->launch_ns;
			o->v[1][r] += (double)gr->execute_ns;
			o->v[2][r] += (double)gr->sync_ns;
			o->v[3][r] += (double)(gr->launch_ns + gr->execute_ns + gr->sync_ns);
		}
	}
	return 0;
}

/* Mean and CV (sample standard deviation / mean) per phase, absent = 0; the
 * range of the judged phase. */
static void gp_stab_spread(struct gp_stab *st)
{
	int nruns = st->nruns;
	for (size_t k = 0; k < st->nops; k++) {
		struct gp_stab_op *o = &st->ops[k];
		o->min_total = INFINITY;
		o->max_total = 0;
		for (int p = 0; p < 4; p++) {
			double s = 0, ss = 0;
			for (int r = 0; r < nruns; r++)
				s += o->v[p][r];
			double m = s / nruns;
			for (int r = 0; r < nruns; r++)
				ss += (o->v[p][r] - m) * (o->v[p][r] - m);
			o->mean[p] = m;
			o->cv[p] = m > 0 ? sqrt(ss / (nruns - 1)) / m : 0;
		}
		for (int r = 0; r < nruns; r++) {
			if (o->v[st->ph][r] < o->min_total)
				o->min_total = o->v[st->ph][r];
			if (o->v[st->ph][r] > o->max_total)
				o->max_total = o->v[st->ph][r];
		}
	}
}

/* Ranks per run by the judged phase, the top-N overlap, and Spearman over
 * the operators present in both runs of every pair (idx, col, col2: room
 * for every operator). */
static void gp_stab_ranking(struct gp_stab *st, size_t *idx, double *col, double *col2)
{
	struct gp_stab_op *ops = st->ops;
	int ph = st->ph;
	for (int r = 0; r < st->nruns; r++) {
		size_t n = 0;
		for (size_t k = 0; k < st->nops; k++)
			if (ops[k].present[r]) {
				idx[n] = k;
				col[k] = ops[k].v[ph][r];
				n++;
			}
		g_rank_vals = col;
		qsort(idx, n, sizeof *idx, gp_stab_cmp_idx);
		for (size_t i = 0; i < n; i++)
			ops[idx[i]].rank[r] = (int)i + 1;
	}
	/* top-N overlap: operators in every run's top N / N */
	for (size_t k = 0; k < st->nops; k++) {
		int all = 1, any = 0;
		for (int r = 0; r < st->nruns; r++) {
			int in = ops[k].rank[r] && (size_t)ops[k].rank[r] <= st->top;
			all &= in;
			any |= in;
		}
		st->in_all += all;
		st->union_n += any;
	}
	st->ntop = st->top < st->nops ? st->top : st->nops;
	st->overlap = st->ntop ? (double)st->in_all / (double)st->ntop : 1.0;
	st->rho_min = 1.0;
	for (int a = 0; a < st->nruns; a++)
		for (int b = a + 1; b < st->nruns; b++) {
			size_t n = 0;
			for (size_t k = 0; k < st->nops; k++)
				if (ops[k].present[a] && ops[k].present[b]) {
					col[n] = ops[k].v[ph][a];
					col2[n] = ops[k].v[ph][b];
					n++;
				}
			double rho = n >= 2 ? gp_stab_spearman(col, col2, n) : 1.0;
			if (rho < st->rho_min)
				st->rho_min = rho;
			st->rho_sum += rho;
			st->npairs++;
		}
}

static int gp_stab_in_top(const struct gp_stab *st, const struct gp_stab_op *o, int *present)
{
	int in_top = 0;
	*present = 0;
	for (int r = 0; r < st->nruns; r++) {
		*present += o->present[r];
		in_top |= o->rank[r] && (size_t)o->rank[r] <= st->top;
	}
	return in_top;
}

/* The table: operators in any run's top N, in idx order (by mean). */
static void gp_stab_print_table(const struct gp_stab *st, const size_t *idx)
{
	char b[4][32];
	printf("gpuphase stability: %d runs, %zu operators, grouped by %s, judged on %s time\n\n", st->nruns, st->nops,
	       gp_stab_groups[st->group_by], gp_stab_phase[st->ph]);
	printf("%-32s %5s", "operator", "runs");
	for (int p = 0; p < 4; p++)
		printf(" %12s %6s", gp_stab_phase[p], "CV");
	printf("  ranks\n");
	for (size_t i = 0; i < st->nops; i++) {
		const struct gp_stab_op *o = &st->ops[idx[i]];
		int present;
		if (!gp_stab_in_top(st, o, &present))
			continue;
		printf("%-32.32s %2d/%-2d", o->name, present, st->nruns);
		for (int p = 0; p < 4; p++)
			printf(" %12s %5.1f%%", gp_fmt_ns(o->mean[p], b[p], sizeof b[p]), 100.0 * o->cv[p]);
		printf(" ");
		for (int r = 0; r < st->nruns; r++)
			printf("%s%d", r ? "," : " ", o->rank[r]);
		printf("\n");
	}
	printf("\ntop-%zu ranking by %s: overlap %.0f%% (%zu of %zu operators in every run's top %zu; %zu in some run's), "
	       "rank correlation (Spearman) min %.2f, mean %.2f over %d pairs\n",
	       st->top, gp_stab_phase[st->ph], 100.0 * st->overlap, st->in_all, st->ntop, st->top, st->union_n,
	       st->rho_min, st->npairs ? st->rho_sum / st->npairs : 1.0, st->npairs);
}

/* The verdict; returns the exit status (0 stable, 1 unstable). */
static int gp_stab_print_verdict(const struct gp_stab *st, const size_t *idx)
{
	char b[2][32];
	int ph = st->ph;
	size_t unstable = 0;
	for (size_t i = 0; i < st->nops; i++) {
		const struct gp_stab_op *o = &st->ops[idx[i]];
		int present;
		if (!gp_stab_in_top(st, o, &present) || (100.0 * o->cv[ph] <= st->cvmax && present == st->nruns))
			continue;
		if (!unstable++)
			printf("\nverdict: UNSTABLE\n");
		printf("  %s moved: %s CV %.1f%% (> %.0f%%), from %s to %s across runs",
		       o->name, gp_stab_phase[ph], 100.0 * o->cv[ph], st->cvmax,
		       gp_fmt_ns(o->min_total, b[0], sizeof b[0]), gp_fmt_ns(o->max_total, b[1], sizeof b[1]));
		if (o->min_total > 0)
			printf(" (max/min %.2fx)", o->max_total / o->min_total);
		if (present < st->nruns)
			printf("; absent from %d run(s)", st->nruns - present);
		printf("; ranks");
		for (int r = 0; r < st->nruns; r++)
			printf("%s%d", r ? "," : " ", o->rank[r]);
		printf("\n");
	}
	int ranking_ok = st->overlap >= 1.0 && st->rho_min >= 0.8;
	if (!ranking_ok) {
		if (!unstable++)
			printf("\nverdict: UNSTABLE\n");
		printf("  the top-%zu ranking changed between runs (overlap %.0f%%, min rank correlation %.2f)\n", st->top,
		       100.0 * st->overlap, st->rho_min);
	}
	if (!unstable)
		printf("\nverdict: stable (every top-%zu operator's %s time varies <= %.0f%% CV; same top-%zu in every "
		       "run; rank correlation >= 0.80)\n", st->top, gp_stab_phase[ph], st->cvmax, st->top);
	return unstable ? 1 : 0;
}

/* Rank, print and judge the collected operators. Returns the exit status. */
static int gp_stab_judge(struct gp_stab *st)
{
	size_t n = st->nops ? st->nops : 1;
	size_t *idx = malloc(n * sizeof *idx);
	double *col = malloc(n * sizeof *col), *col2 = malloc(n * sizeof *col2);
	int rc = 4;
	if (idx && col && col2) {
		gp_stab_ranking(st, idx, col, col2);
		/* print: operators in any run's top N, by mean of the judged phase */
		for (size_t k = 0; k < st->nops; k++) {
			idx[k] = k;
			col[k] = st->ops[k].mean[st->ph];
		}
		g_rank_vals = col;
		qsort(idx, st->nops, sizeof *idx, gp_stab_cmp_idx);
		gp_stab_print_table(st, idx);
		rc = gp_stab_print_verdict(st, idx);
		if (fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "gpuphase-report: stdout: write error\n");
			rc = 4;
		}
	}
	free(idx);
	free(col);
	free(col2);
	return rc;
}

int gp_stability_main(int argc, char **argv)
{
	struct gp_stab st = { .top = 5, .cvmax = 10.0, .ph = 3 };
	int rc = gp_stab_options(argc, argv, &st);
	if (rc >= 0)
		return rc;
	st.nruns = argc - optind;
	if (st.nruns < 2 || st.nruns > 64) {
		fprintf(stderr, "gpuphase-report: stability needs 2 to 64 traces of the same program (got %d)\n",
			st.nruns);
		gp_stab_usage(stderr);
		return 2;
	}
	st.runs = calloc((size_t)st.nruns, sizeof *st.runs);
	rc = st.runs ? gp_stab_load(argv + optind, st.nruns, st.group_by, st.runs) : 4;
	if (!rc)
		rc = gp_stab_collect(&st);
	if (!rc) {
		gp_stab_spread(&st);
		rc = gp_stab_judge(&st);
	}
	for (int r = 0; st.runs && r < st.nruns; r++)
		gp_rep_free(&st.runs[r]);
	free(st.runs);
	free(st.ops);
	return rc;
}
