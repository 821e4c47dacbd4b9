/*
 * analyses.c — the list of analyses every trace gets, and running them
 * (analyses.h): the pipeline creates one set per trace and connects it to
 * the core's sinks; the outputs print it. Report thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "analyses.h"

/* The analyses, in the order the report prints them: X(NAME) for each
 * report/analyses/NAME.c defining gp_analysis_NAME. */
#define GP_ANALYSES_LIST(X) \
	X(stages)           \
	X(host)             \
	X(trends)           \
	X(graphs)           \
	X(whatif)           \
	X(copies)           \
	X(roofline)         \
	X(crossrank)

#define GP_ANALYSES_DECLARE(name) extern const struct gp_analysis gp_analysis_##name;
#define GP_ANALYSES_ENTRY(name) &gp_analysis_##name,
GP_ANALYSES_LIST(GP_ANALYSES_DECLARE)
static const struct gp_analysis *const gp_analyses_list[] = { GP_ANALYSES_LIST(GP_ANALYSES_ENTRY) };

_Static_assert(sizeof gp_analyses_list / sizeof gp_analyses_list[0] <= GP_ANALYSES_MAX, "too many analyses");

struct gp_analyses *gp_analyses_new(const struct gp_analysis_env *env)
{
	struct gp_analyses *set = calloc(1, sizeof *set);
	if (!set)
		return NULL;
	for (size_t i = 0; i < sizeof gp_analyses_list / sizeof gp_analyses_list[0]; i++) {
		const struct gp_analysis *a = gp_analyses_list[i];
		void *st = a->create(env);
		if (!st) {
			gp_analyses_free(set);
			return NULL;
		}
		const uint32_t api = GP_AN_TYPE(GP_REC_HOOK_API) | GP_AN_TYPE(GP_REC_RUNTIME_API) |
				     GP_AN_TYPE(GP_REC_DRIVER_API);
		if ((a->types[0] | a->types[1]) & api)
			set->api_classes |= a->api_classes ? a->api_classes : UINT32_MAX;
		for (int pass = 0; pass < 2; pass++) {
			set->types[pass] |= a->record ? a->types[pass] : 0;
			for (int t = 0; t < GP_REC_TYPE_COUNT && a->record; t++)
				if (a->types[pass] & GP_AN_TYPE(t))
					set->to[pass][t][set->nto[pass][t]++] = (struct gp_analyses_hook){
						a->record, st, a->api_classes ? a->api_classes : UINT32_MAX };
		}
		if (a->op) {
			set->ops[set->nops].op = a->op;
			set->ops[set->nops++].st = st;
		}
		if (a->wait) {
			set->waits[set->nwaits].wait = a->wait;
			set->waits[set->nwaits++].st = st;
		}
		set->a[set->n] = a;
		set->st[set->n++] = st;
	}
	return set;
}

void gp_analyses_free(struct gp_analyses *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++)
		set->a[i]->destroy(set->st[i]);
	gp_strtab_free(&set->strings);
	free(set);
}

void gp_analyses_record(const struct gp_an_rec *v, void *ctx)
{
	struct gp_analyses *set = ctx;
	const struct gp_analyses_hook *to = set->to[v->pass - 1][v->type];
	/* API views go only where their class is wanted */
	uint32_t cls = v->type >= GP_REC_HOOK_API && v->type <= GP_REC_DRIVER_API ? GP_AN_CLASS(v->api.api_class)
										  : UINT32_MAX;
	for (size_t k = 0, n = set->nto[v->pass - 1][v->type]; k < n; k++)
		if (to[k].api_classes & cls)
			gp_analysis_fail(&set->err, to[k].record(to[k].st, set->an, v));
}

void gp_analyses_op(const struct gp_an_op *op, void *ctx)
{
	struct gp_analyses *set = ctx;
	for (size_t i = 0; i < set->nops; i++)
		set->ops[i].op(set->ops[i].st, op);
}

void gp_analyses_wait(const struct gp_an_wait *w, void *ctx)
{
	struct gp_analyses *set = ctx;
	for (size_t i = 0; i < set->nwaits; i++)
		set->waits[i].wait(set->waits[i].st, w);
}

int gp_analyses_prepare(struct gp_analyses *set)
{
	for (size_t i = 0; i < set->n && !set->err; i++)
		if (set->a[i]->prepare)
			gp_analysis_fail(&set->err, set->a[i]->prepare(set->st[i], set->an));
	return set->err;
}

int gp_analyses_finish(struct gp_analyses *set, const struct gp_rep *rep)
{
	for (size_t i = 0; i < set->n && !set->err; i++)
		if (set->a[i]->finish)
			gp_analysis_fail(&set->err, set->a[i]->finish(set->st[i], set->an, rep));
	return set->err;
}

void gp_analyses_annotate(struct gp_analyses *set, struct gp_rep *rep)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->a[i]->annotate)
			set->a[i]->annotate(set->st[i], rep);
}

int gp_analyses_job(struct gp_analyses *const *sets, const struct gp_rep *const *reps, size_t n,
		    const struct gp_analysis_env *env, struct gp_analyses **out)
{
	*out = NULL;
	if (!sets || !n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!sets[i])
			return 0;
	struct gp_analyses *job = calloc(1, sizeof *job);
	void **traces = calloc(n, sizeof *traces);
	int rc = job && traces ? 0 : -ENOMEM;
	if (job)
		job->job = 1;
	for (size_t k = 0; !rc && k < sets[0]->n; k++) {
		const struct gp_analysis *a = sets[0]->a[k];
		if (!a->merge)
			continue;
		void *st = a->create(env);
		if (!st) {
			rc = -ENOMEM;
			break;
		}
		job->a[job->n] = a;
		job->st[job->n++] = st;
		for (size_t i = 0; i < n; i++)
			traces[i] = sets[i]->st[k]; /* every set holds the same list */
		rc = a->merge(st, traces, reps, n);
	}
	free(traces);
	if (rc || !job->n) {
		gp_analyses_free(job);
		return rc;
	}
	*out = job;
	return 0;
}

/* Is analysis i of the set one that speaks here? (An analysis with a merge
 * speaks for the job, not for a trace.) */
static int gp_analyses_speaks(const struct gp_analyses *set, size_t i)
{
	return !set->a[i]->merge == !set->job;
}

int gp_analyses_text(FILE *f, const struct gp_analyses *set, const struct gp_rep *rep,
		     const struct gp_analysis_style *s)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->a[i]->text && gp_analyses_speaks(set, i))
			set->a[i]->text(f, set->st[i], rep, s);
	return ferror(f) ? -EIO : 0;
}

void gp_analyses_json(FILE *f, const struct gp_analyses *set, const struct gp_rep *rep,
		      const struct gp_analysis_style *s)
{
	for (size_t i = 0; i < set->n; i++) {
		if (!set->a[i]->json || !gp_analyses_speaks(set, i))
			continue;
		fprintf(f, ",\n   \"%s\": ", set->a[i]->name);
		set->a[i]->json(f, set->st[i], rep, s);
	}
}
