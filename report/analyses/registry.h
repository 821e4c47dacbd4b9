/*
 * registry.h — the analysis plug-in interface, and the list of analyses the
 * pipeline runs on every trace (registry.c).
 *
 * An analysis reads what the analysis core decoded — record views
 * (struct gp_an_rec) of the types it names, every joined op, and the core's
 * accessors (analysis.h) — and never a record itself. For one trace:
 *
 *   st = a->create(&env)
 *   pass 1: a->record(st, an, v)   for each view of a type in a->types[0]
 *   a->prepare(st, an)             after the core's prepare
 *   pass 2: a->record(st, an, v)   for each view of a type in a->types[1],
 *           a->op(st, op)          for each op the core folds,
 *           a->wait(st, w)         for each blocking interval the core
 *                                  attributes (docs/metrics.md section 3)
 *   a->finish(st, an, rep)         after the core's finish, before it is freed
 *   a->annotate(st, rep)           then: fields of rep it is the source of
 *   a->text / a->json / a->figure  any time later (the report, the HTML page)
 *   a->destroy(st)
 *
 * Several traces of one job (the ranks of a distributed run) also get, for
 * each analysis with a merge callback, one more state: created, then
 * a->merge(st, traces, reps, n) with every trace's state and report; an
 * analysis with a merge speaks only there, once for the job
 * (gp_analyses_job), never in a trace's own section.
 * Partial results (outputs/partial.h, `gpuphase-report --partial` / `--merge`): after
 * finish, a->save writes what text, json and figure read; a->load fills a
 * state fresh from create with it, in another process, so that they print
 * the same bytes. An analysis without save/load is left out of a report
 * merged from partials, and that report says so.
 *
 * Any callback but create and destroy may be NULL. Memory follows operators,
 * iterations, samples and graph nodes, never the number of ops: fold each op
 * into sums as it arrives. Names an analysis keeps are texts of the trace's
 * string table (gp_an_strings), which lives as long as the analyses do.
 * Single-threaded; record/prepare/finish return 0 or -ENOMEM; text, json
 * and figure write only to the FILE given.
 *
 * Adding an analysis: one file in report/analyses/ defining a
 * `const struct gp_analysis gp_analysis_NAME`, and one line in the list in
 * registry.c (docs/CONTRIBUTING.md has an example).
 */
#ifndef GP_REPORT_ANALYSES_H
#define GP_REPORT_ANALYSES_H

#include <errno.h>
#include <stdio.h>
#include "report/core/analysis.h"
#include "report/util/codec.h"

/* What an analysis is created with (the report's options). */
struct gp_analysis_env {
	double outlier_factor;  /* iteration outlier: duration > factor x p50 */
	const char *whatif;     /* the user's what-if (depgraph.h gp_dg_parse) or NULL */
};

/* How it prints. */
struct gp_analysis_style {
	int markdown;           /* text: markdown instead of plain text        */
	double outlier_factor;
	size_t top;             /* --top N: at most N items per list; 0 = all  */
};

struct gp_analysis {
	const char *name;       /* its key in the JSON report's "analyses" items */
	const char *title;      /* its HTML section heading                     */
	uint32_t types[2];      /* record views read in pass 1, pass 2 (GP_AN_TYPE bits) */
	uint32_t api_classes;   /* of API views, only calls of these classes
	                           (GP_AN_CLASS bits; 0 = every class)        */
	void *(*create)(const struct gp_analysis_env *env);
	int (*record)(void *st, const struct gp_an *an, const struct gp_an_rec *v);
	int (*prepare)(void *st, const struct gp_an *an);
	void (*op)(void *st, const struct gp_an_op *op);
	void (*wait)(void *st, const struct gp_an_wait *w);
	int (*finish)(void *st, const struct gp_an *an, const struct gp_rep *rep);
	/* after every finish: what the analysis found that the report's own
	 * outputs show (the roofline's gp_rep_group.bound); only fields rep.h
	 * says an analysis sets */
	void (*annotate)(void *st, struct gp_rep *rep);
	/* its section (nothing when it has nothing to say) and its JSON value */
	void (*text)(FILE *f, const void *st, const struct gp_rep *rep, const struct gp_analysis_style *s);
	void (*json)(FILE *f, const void *st, const struct gp_rep *rep, const struct gp_analysis_style *s);
	void (*figure)(FILE *f, const void *st); /* HTML: an inline SVG after the section */
	void (*destroy)(void *st);
	/* optional, across the traces of one job: st is a fresh state
	 * (create), traces[i] this analysis's state of trace i and reps[i] its
	 * report, in argument order. Returns 0 or -ENOMEM. */
	int (*merge)(void *st, void *const *traces, const struct gp_rep *const *reps, size_t n);
	/* partial results: what text/json/figure read, written after finish
	 * (0 or w->err), and read back into a state fresh from create, its
	 * names interned in strings (0 or r->err: every field checked) */
	int (*save)(const void *st, struct gp_pw *w);
	int (*load)(void *st, struct gp_pr *r, struct gp_strtab *strings);
};

/* Record a failure in *err (the first one stays); -EINVAL, a map refusing
 * the reserved key of a corrupt file, leaves that record out silently. */
static inline void gp_analysis_fail(int *err, int rc)
{
	if (rc && rc != -EINVAL && !*err)
		*err = rc;
}

#define GP_ANALYSES_MAX 16
/* analysis entries of one trace that a partial-results file may hold */
#define GP_ANALYSES_MAX_SAVED 64u

/* The analyses of one trace, in list order, and the string table their
 * names point into (the core fills it: analysis.h cfg.strings). */
struct gp_analyses {
	size_t n;
	const struct gp_analysis *a[GP_ANALYSES_MAX];
	void *st[GP_ANALYSES_MAX];
	const struct gp_an *an;     /* the core, while it lives (pipeline.c)  */
	int err;                    /* first failure of record/op             */
	uint32_t types[2];          /* union of the analyses' types           */
	uint32_t api_classes;       /* union of their API classes             */
	/* per pass and record type: the analyses that read its views; the
	 * analyses with an op hook */
	uint8_t nto[2][GP_REC_TYPE_COUNT];
	struct gp_analyses_hook {
		int (*record)(void *st, const struct gp_an *an, const struct gp_an_rec *v);
		void *st;
		uint32_t api_classes; /* UINT32_MAX: every class */
	} to[2][GP_REC_TYPE_COUNT][GP_ANALYSES_MAX];
	size_t nops;
	struct {
		void (*op)(void *st, const struct gp_an_op *op);
		void *st;
	} ops[GP_ANALYSES_MAX];
	size_t nwaits;
	struct {
		void (*wait)(void *st, const struct gp_an_wait *w);
		void *st;
	} waits[GP_ANALYSES_MAX];
	struct gp_strtab strings;
	int job;                    /* the analyses across a job's traces
	                               (gp_analyses_job): only those with a
	                               merge; else those without one print  */
	/* loaded from partial results (gp_analyses_load): the analyses the
	 * partial does not hold (texts of strings) */
	size_t nleft;
	const char *left[GP_ANALYSES_MAX];
};

/* Create every analysis of the list; NULL on ENOMEM. */
struct gp_analyses *gp_analyses_new(const struct gp_analysis_env *env);
void gp_analyses_free(struct gp_analyses *set);
/* The core's sinks (ctx = the set): views and ops to every analysis. */
void gp_analyses_record(const struct gp_an_rec *v, void *set);
void gp_analyses_op(const struct gp_an_op *op, void *set);
void gp_analyses_wait(const struct gp_an_wait *w, void *set);
int gp_analyses_prepare(struct gp_analyses *set);
int gp_analyses_finish(struct gp_analyses *set, const struct gp_rep *rep);
/* The analyses across the traces of one job: for every analysis with a
 * merge, a fresh state merged from sets[i] (the traces' analyses) and
 * reps[i]; *out is NULL when no analysis has a merge. 0 or -ENOMEM. */
int gp_analyses_job(struct gp_analyses *const *sets, const struct gp_rep *const *reps, size_t n,
		    const struct gp_analysis_env *env, struct gp_analyses **out);
/* Each analysis's annotate, after gp_analyses_finish succeeded. */
void gp_analyses_annotate(struct gp_analyses *set, struct gp_rep *rep);
/* Every section as text or markdown. Returns 0 or -EIO. */
int gp_analyses_text(FILE *f, const struct gp_analyses *set, const struct gp_rep *rep,
		     const struct gp_analysis_style *s);
/* The members of one "analyses" item: `,\n   "NAME": VALUE` per analysis. */
void gp_analyses_json(FILE *f, const struct gp_analyses *set, const struct gp_rep *rep,
		      const struct gp_analysis_style *s);
/* Partial results: every analysis that can save (name, length, its bytes)
 * into w (set NULL: none); and a set read back from r (NULL with r->err
 * set), each analysis where the file has it, the others named in left. */
void gp_analyses_save(struct gp_pw *w, const struct gp_analyses *set);
struct gp_analyses *gp_analyses_load(const struct gp_analysis_env *env, struct gp_pr *r);

#endif
