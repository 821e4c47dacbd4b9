/*
 * registry.c — the list of analyses every trace gets, and running them
 * (registry.h): the pipeline creates one set per trace and connects it to
 * the core's sinks; the outputs print it. Report thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "registry.h"

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
		/* each set's state of this analysis: sets read from partial
		 * results may lack some (gp_analyses_load), then the job has none */
		size_t have = 0;
		for (size_t i = 0; i < n; i++)
			for (size_t x = 0; x < sets[i]->n; x++)
				if (sets[i]->a[x] == a) {
					traces[i] = sets[i]->st[x];
					have++;
					break;
				}
		if (have < n) {
			a->destroy(st);
			continue;
		}
		job->a[job->n] = a;
		job->st[job->n++] = st;
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
	if (set->nleft) { /* merged from partial results without them: never silently */
		fprintf(f, s->markdown ? "\n## Left out\n\n" : "\nLeft out\n");
		fprintf(f, "%snot in the partial results this report was merged from: ", s->markdown ? "" : "  ");
		for (size_t i = 0; i < set->nleft; i++)
			fprintf(f, "%s%s", i ? ", " : "", set->left[i]);
		fprintf(f, " (made by a gpuphase without them: run --partial again with this one)\n");
	}
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
	if (set->nleft) {
		fputs(",\n   \"partial_left_out\": [", f);
		for (size_t i = 0; i < set->nleft; i++)
			fprintf(f, "%s\"%s\"", i ? ", " : "", set->left[i]);
		fputs("]", f);
	}
}

void gp_analyses_save(struct gp_pw *w, const struct gp_analyses *set)
{
	uint64_t n = 0;
	for (size_t i = 0; set && i < set->n; i++)
		n += set->a[i]->save != NULL;
	gp_pw_u64(w, n);
	for (size_t i = 0; set && i < set->n; i++) {
		if (!set->a[i]->save)
			continue;
		gp_pw_str(w, set->a[i]->name);
		size_t at = gp_pw_begin_len(w);
		if (set->a[i]->save(set->st[i], w) && !w->err)
			w->err = -ENOMEM;
		gp_pw_end_len(w, at);
	}
}

/* One entry of a partial: the analysis named, loaded from sub into *st. */
static void gp_analyses_load_one(const struct gp_analysis *a, const struct gp_analysis_env *env, struct gp_pr *r,
				  struct gp_pr *sub, struct gp_strtab *strings, void **st)
{
	if (!(*st = a->create(env)))
		return gp_pr_oom(r);
	a->load(*st, sub, strings);
	gp_pr_done(sub, a->name);
	if (sub->err && !r->err) {
		r->err = sub->err;
		snprintf(r->msg, sizeof r->msg, "analysis %s: %.*s", a->name, (int)(sizeof r->msg / 2), sub->msg);
	}
}

struct gp_analyses *gp_analyses_load(const struct gp_analysis_env *env, struct gp_pr *r)
{
	enum { N = sizeof gp_analyses_list / sizeof gp_analyses_list[0] };
	void *st[N] = { 0 };
	struct gp_analyses *set = calloc(1, sizeof *set);
	if (!set) {
		gp_pr_oom(r);
		return NULL;
	}
	size_t n = gp_pr_count(r, 4 + 8, GP_ANALYSES_MAX_SAVED);
	for (size_t i = 0; i < n && !r->err; i++) {
		char *name = gp_pr_strdup(r, NULL);
		uint64_t len = gp_pr_u64(r);
		struct gp_pr sub;
		gp_pr_sub(r, r->err || len > SIZE_MAX ? 0 : (size_t)len, &sub);
		if (!r->err && !name)
			gp_pr_fail(r, "an analysis entry has no name");
		size_t k = 0;
		while (!r->err && k < N && strcmp(gp_analyses_list[k]->name, name))
			k++;
		if (!r->err && k < N && st[k])
			gp_pr_fail(r, "an analysis appears twice");
		/* one this gpuphase does not know (or cannot load) is skipped: this
		 * gpuphase's own report would not print it either */
		if (!r->err && k < N && gp_analyses_list[k]->load)
			gp_analyses_load_one(gp_analyses_list[k], env, r, &sub, &set->strings, &st[k]);
		free(name);
	}
	for (size_t k = 0; k < N; k++) {
		if (r->err) {
			if (st[k])
				gp_analyses_list[k]->destroy(st[k]);
			continue;
		}
		if (!st[k]) {
			set->left[set->nleft++] = gp_analyses_list[k]->name;
			continue;
		}
		set->a[set->n] = gp_analyses_list[k];
		set->st[set->n++] = st[k];
	}
	if (r->err) {
		gp_analyses_free(set);
		return NULL;
	}
	return set;
}
