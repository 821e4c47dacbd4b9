/*
 * pipeline.h — the one driver of the report: every entry point (the report
 * of one or several traces, diff, stability, the exports, the fuzz target)
 * analyses traces through it and through nothing else.
 *
 * For each trace the pipeline opens and validates the file with gp_reader,
 * runs pass 1 over every record group (gp_an_scan1, then the analyses),
 * prepares, runs pass 2 (gp_an_scan2, the analyses, the exporters' record
 * hook; joined ops and charged waits reach the analyses and the exporters
 * through the core's sinks), finishes, and completes the report with the
 * file's header and footer facts. Reports of several traces are merged on
 * request.
 *
 *   p = gp_pipeline_new(&opts);
 *   for each trace: gp_pipeline_add(p, path, err, sizeof err);
 *   gp_pipeline_report(p, 0, n, &rep);   one trace's report, or merged
 *   gp_pipeline_free(p);                 frees the analyses too
 *
 * Single-threaded. Errors: 0, -ENOMEM (ran out of memory while analysing;
 * err says nothing), or another -errno when the file is unreadable, foreign
 * or corrupt (err holds the reader's message, which names the file).
 */
#ifndef GP_REPORT_PIPELINE_H
#define GP_REPORT_PIPELINE_H

#include <stddef.h>
#include "report/core/analysis.h"
#include "report/outputs/export.h"

/* What a run computes besides the core's aggregates. */
#define GP_PIPE_ANALYSES 1u /* the analyses (stages ... whatif: analyses/registry.c) */
#define GP_PIPE_FOOTER 2u   /* header key/values and footer facts into rep   */
#define GP_PIPE_ALL (GP_PIPE_ANALYSES | GP_PIPE_FOOTER)

/* An exporter and its open context. */
struct gp_pipeline_sink {
	const struct gp_exporter *ex;
	void *ctx;
};

struct gp_pipeline_opts {
	enum gp_group_by group_by;
	unsigned what;              /* GP_PIPE_* bits                          */
	double outlier_factor;      /* analyses: iteration outliers (> 0)      */
	const struct gp_pipeline_sink *sinks; /* exporters fed in pass 2       */
	size_t nsinks;
	const char *whatif;         /* analyses: the user's what-if, or NULL   */
	/* optional: after every block read, the bytes of records read so far
	 * in this pass (1 or 2) of the trace at path */
	void (*progress)(void *ctx, const char *path, int pass, uint64_t bytes);
	void *progress_ctx;
	int no_symbolize;           /* gp_an_config.no_symbolize               */
};

struct gp_pipeline;
struct gp_analyses;

struct gp_pipeline *gp_pipeline_new(const struct gp_pipeline_opts *o);
/* Analyse one more trace (its index is the number added before). */
int gp_pipeline_add(struct gp_pipeline *p, const char *path, char *err, size_t n);
/* The same for records already in memory (tests): no header, no footer
 * facts; name stands for the path in messages. */
int gp_pipeline_add_records(struct gp_pipeline *p, const char *name, const union gp_rec *recs, size_t nrec,
			    char *err, size_t n);
/* The traces of a partial-results file (partial.h: `--partial` wrote them
 * with the options p has), each as if analysed here: its report and, with
 * GP_PIPE_ANALYSES, its analyses. Errors as gp_pipeline_add (-EPROTO: a
 * damaged or foreign file, err says where). */
int gp_pipeline_add_partial(struct gp_pipeline *p, const char *path, char *err, size_t n);
/* Traces analysed so far, and the report of trace i (owned by p). */
size_t gp_pipeline_count(const struct gp_pipeline *p);
const struct gp_rep *gp_pipeline_rep(const struct gp_pipeline *p, size_t i);
/* The analyses of every trace, in order (NULL entries without
 * GP_PIPE_ANALYSES); valid until gp_pipeline_free. */
struct gp_analyses *const *gp_pipeline_analyses(const struct gp_pipeline *p);
/* Move the reports of traces [first, first + n) into out: the report itself
 * for one, merged ("N traces") for several; several traces of one job
 * (gp_rep_one_job) also get the job's analyses (gp_pipeline_job_analyses).
 * Returns 0 or -ENOMEM. */
int gp_pipeline_report(struct gp_pipeline *p, size_t first, size_t n, struct gp_rep *out);
/* The analyses across the ranks of the last merged report when its traces
 * are one job (analyses/registry.h gp_analyses_job), else NULL; owned by p. */
struct gp_analyses *gp_pipeline_job_analyses(const struct gp_pipeline *p);
void gp_pipeline_free(struct gp_pipeline *p);

#endif
