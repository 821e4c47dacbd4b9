/*
 * output.h — rendering a gp_rep: the default report in text, markdown, csv
 * or json (schema in docs/report-json.md); the diff is diff.c's.
 * Called by main.c on the report thread; writes only to the FILE given.
 */
#ifndef GP_REPORT_OUTPUT_H
#define GP_REPORT_OUTPUT_H

#include <regex.h>
#include <stdio.h>
#include "report/core/analysis.h"
#include "report/core/verdict.h"

/* --format json schema versions (docs/report-json.md); 2 added "analyses" */
#define GP_REPORT_JSON_VERSION 2
#define GP_DIFF_JSON_VERSION 1

struct gp_analyses; /* analyses/registry.h: the analyses of one trace */

enum gp_format { GP_FMT_TEXT = 0, GP_FMT_MARKDOWN, GP_FMT_CSV, GP_FMT_JSON };
enum gp_sort { GP_SORT_TOTAL = 0, GP_SORT_LAUNCH, GP_SORT_QUEUE, GP_SORT_EXECUTE, GP_SORT_SYNC, GP_SORT_COUNT,
	       GP_SORT_NAME };

struct gp_out_opts {
	enum gp_format format;
	enum gp_sort sort;
	size_t top;              /* 0 = all                                      */
	const regex_t *filter;   /* NULL = all                                    */
	const char *filter_src;  /* its text as given (JSON "filter"), or NULL    */
	struct gp_thresholds th;
	double outlier_factor;   /* iteration outlier: duration > factor * p50   */
	double straggler_pct;    /* rank straggler: busy > median * (1 + pct/100) */
	/* the analyses of each trace, in argument order (the pipeline's, set
	 * once every trace is finished); json and the HTML export render them */
	struct gp_analyses *const *analyses;
	size_t ntraces;
	/* the analyses across the ranks of a merged report of one job
	 * (pipeline.h gp_pipeline_job_analyses), or NULL */
	const struct gp_analyses *job_analyses;
};

/* The operators to show, in order: indexes into rep->groups after filter,
 * sort and top. Returns the count; *out is malloc'd (NULL on ENOMEM). */
size_t gp_out_select(const struct gp_rep *rep, const struct gp_out_opts *o, size_t **out);

/* Write the report (json: with an "analyses" item per o->analyses entry).
 * Returns 0 or -EIO/-ENOMEM. */
int gp_out_report(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o);

/* Shared by output.c and output_json.c: the JSON report (gp_out_report
 * calls it for GP_FMT_JSON), the names of API classes and of --group-by
 * keys, and whether the trace was captured by `gpuphase attach`. */
void gp_out_json(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o);
extern const char *const gp_out_class_names[GP_API_CLASS_COUNT];
extern const char *const gp_out_group_names[5];
int gp_out_attached(const struct gp_rep *rep);
/* For a trace with no footer (not complete, not live): what the death of
 * the program or the cut kept and lost, as one sentence without lead or end
 * of line: the notes of the text report and the banner of the HTML page. */
void gp_out_cut_note(FILE *f, const struct gp_rep *rep);

/* The report of trace x of o->analyses: rep itself for one trace, else
 * rep->ranks[x] (NULL when x is out of range). */
const struct gp_rep *gp_out_trace_rep(const struct gp_rep *rep, const struct gp_out_opts *o, size_t x);

/* Operator g's verdict, as every output gives it: its phases against the
 * thresholds (waits on a full launch queue left out of sync), "minor" below
 * the minimum share of the run; and the advice that fits its ops (g NULL:
 * the whole run's). */
enum gp_verdict gp_out_verdict(const struct gp_rep *rep, const struct gp_rep_group *g,
			       const struct gp_thresholds *th);
const char *gp_out_advice(const struct gp_rep *rep, const struct gp_rep_group *g, enum gp_verdict v);
/* The whole run's verdict (waits on a full launch queue left out of sync)
 * and its reason into why; what it judges: "whole run", "window" or
 * "windows" (a windowed report judges what its windows captured). */
enum gp_verdict gp_out_run_verdict(const struct gp_rep *rep, const struct gp_thresholds *th, char *why, size_t n);
const char *gp_out_verdict_scope(const struct gp_rep *rep);
/* The pageable-copy note of operator g (docs/metrics.md §3, "Pageable
 * copies") into buf, without parentheses: 1, or 0 when g has no async copy
 * that blocked on pageable memory. */
int gp_out_pageable_note(const struct gp_rep_group *g, char *buf, size_t n);
/* gp_out_advice with gp_out_run_graphs(rep) given: a list of operators asks
 * that once, so advising every operator stays linear. */
int gp_out_run_graphs(const struct gp_rep *rep);
const char *gp_out_advice_rg(const struct gp_rep *rep, const struct gp_rep_group *g, enum gp_verdict v,
			     int run_graphs);

/* The whole run's first advice, from the what-if analysis of the one trace
 * (advice.c, docs/metrics.md §5): the real change with the largest priced
 * saving, at least GP_OUT_MIN_SAVING_PCT of the window (never a kernel
 * speed-up nor the user's --whatif), and whether
 * the host waits on a busy GPU: the best wait removal saves less than
 * GP_OUT_WAIT_SAVING_PCT of the window while the GPU had work outstanding
 * during at least GP_OUT_GPU_BUSY_PCT of the blocked time
 * (gp_out_busy_wait_pct: the waits charged to an op, of all sync). Returns 1 when either is known, else 0
 * (no what-if: several traces, partial results without it, no graph). */
#define GP_OUT_WAIT_SAVING_PCT 5.0
#define GP_OUT_MIN_SAVING_PCT 1.0 /* a change saving less is not advised first */
#define GP_OUT_GPU_BUSY_PCT 90.0
struct gp_out_change {
	int found, gpu_bound;
	char text[320];          /* the change as an instruction              */
	char change[64];         /* the what-if's "change"                     */
	char target[256];        /* its "target" ("" for none)                 */
	uint64_t saving_ns, window_ns, wait_saving_ns;
	char kernel[256];        /* the first kernel speed-up's target, or "" */
	uint64_t kernel_saving_ns;
};
double gp_out_busy_wait_pct(const struct gp_rep *rep);
int gp_out_best_change(const struct gp_rep *rep, const struct gp_out_opts *o, struct gp_out_change *c);
/* The whole run's advice line for verdict v: c's change with its price,
 * then the verdict's rule of thumb; the GPU named the bottleneck when c says
 * so and v is sync-bound; the rule of thumb alone without a change. Points
 * at buf or at a constant. */
const char *gp_out_run_advice(const struct gp_rep *rep, const struct gp_out_opts *o, enum gp_verdict v,
			      const struct gp_out_change *c, char *buf, size_t n);
/* The whole run's JSON "advice" value and the members after it:
 * "advice_change" (the priced change or null), "gpu_bottleneck". */
void gp_out_json_run_advice(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o, enum gp_verdict v);

#endif
