/*
 * agent_reduce.c — one closed window file into a process's counters: the
 * report library's pipeline reads it (as gpuphase-report does, no text in
 * between), its per-operator phase sums and counts come from the report,
 * its per-op execute and per-wait sync distributions from the pipeline's
 * op and wait sinks.
 *
 * Called on the agent's poll loop only (gp_agent_sort_groups is its sort's
 * argument, set just before the qsort). Invariants: a window changes p only
 * when it was read whole (an error leaves p as it was); p never holds more
 * than a->top_n operator series of its own: an operator first seen when the
 * quota is spent goes to operator="other" of its category, for good, so
 * every series only grows; the same for call sites (site="other").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "report/core/category.h"
#include "report/pipeline.h"

/* What the sinks saw of one analyser group (index = gp_an_op.group). */
struct gp_agent_win_group {
	char *name;
	struct gp_agent_hist exec, sync;
};

struct gp_agent_win {
	struct gp_agent_win_group *g;
	size_t ng;
	int oom;
};

void gp_agent_hist_add(struct gp_agent_hist *h, uint64_t ns)
{
	double s = (double)ns / 1e9;
	size_t b = 0;
	while (b < GP_AGENT_NBUCKETS && s > gp_agent_bucket_s[b])
		b++;
	h->bucket[b]++;
	h->count++;
	h->sum_ns += ns;
}

static void gp_agent_hist_merge(struct gp_agent_hist *d, const struct gp_agent_hist *s)
{
	for (size_t b = 0; b <= GP_AGENT_NBUCKETS; b++)
		d->bucket[b] += s->bucket[b];
	d->count += s->count;
	d->sum_ns += s->sum_ns;
}

static struct gp_agent_win_group *gp_agent_win_at(struct gp_agent_win *w, size_t i)
{
	if (i >= w->ng) {
		size_t n = i + 16;
		struct gp_agent_win_group *g = realloc(w->g, n * sizeof *g);
		if (!g) {
			w->oom = 1;
			return NULL;
		}
		memset(g + w->ng, 0, (n - w->ng) * sizeof *g);
		w->g = g;
		w->ng = n;
	}
	return &w->g[i];
}

static void gp_agent_win_op(const struct gp_an_op *op, void *ctx)
{
	struct gp_agent_win_group *g = gp_agent_win_at(ctx, op->group);
	if (!g)
		return;
	if (!g->name && op->name && !(g->name = strdup(op->name)))
		((struct gp_agent_win *)ctx)->oom = 1;
	if (op->has_gpu)
		gp_agent_hist_add(&g->exec, op->execute_ns);
}

static void gp_agent_win_wait(const struct gp_an_wait *w, void *ctx)
{
	if (w->group < 0 || w->w1 <= w->w0)
		return;
	struct gp_agent_win_group *g = gp_agent_win_at(ctx, (size_t)w->group);
	if (g)
		gp_agent_hist_add(&g->sync, w->w1 - w->w0);
}

static const struct gp_exporter gp_agent_sink = {
	.name = "agent",
	.op = gp_agent_win_op,
	.wait = gp_agent_win_wait,
};

struct gp_agent_series *gp_agent_series_get(struct gp_agent_proc *p, const char *category, const char *op)
{
	for (size_t i = 0; i < p->ns; i++)
		if (!strcmp(p->s[i].op, op) && !strcmp(p->s[i].category, category))
			return &p->s[i];
	if (p->ns == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct gp_agent_series *s = realloc(p->s, cap * sizeof *s);
		if (!s)
			return NULL;
		p->s = s;
		p->cap = cap;
	}
	struct gp_agent_series *s = &p->s[p->ns];
	memset(s, 0, sizeof *s);
	s->op = strdup(op);
	s->category = strdup(category);
	if (!s->op || !s->category) {
		free(s->op);
		free(s->category);
		return NULL;
	}
	p->ns++;
	return s;
}

/* The series an operator's time goes to: its own, a new one of its own while
 * the quota lasts, else its category's "other". */
static struct gp_agent_series *gp_agent_series_for(struct gp_agent *a, struct gp_agent_proc *p,
						   const char *category, const char *op)
{
	for (size_t i = 0; i < p->ns; i++)
		if (!strcmp(p->s[i].op, op) && !strcmp(p->s[i].category, category))
			return &p->s[i];
	if (p->named >= a->top_n || !strcmp(op, "other"))
		return gp_agent_series_get(p, category, "other");
	struct gp_agent_series *s = gp_agent_series_get(p, category, op);
	if (s)
		p->named++;
	return s;
}

struct gp_agent_site *gp_agent_site_get(struct gp_agent_proc *p, const char *name)
{
	for (size_t i = 0; i < p->nsite; i++)
		if (!strcmp(p->site[i].name, name))
			return &p->site[i];
	if (p->nsite == p->site_cap) {
		size_t cap = p->site_cap ? p->site_cap * 2 : 8;
		struct gp_agent_site *s = realloc(p->site, cap * sizeof *s);
		if (!s)
			return NULL;
		p->site = s;
		p->site_cap = cap;
	}
	struct gp_agent_site *s = &p->site[p->nsite];
	memset(s, 0, sizeof *s);
	if (!(s->name = strdup(name)))
		return NULL;
	if (strcmp(name, "other"))
		p->named_sites++;
	p->nsite++;
	return s;
}

/* The window's sync call sites (the report orders them by blocked time,
 * largest first, so the largest take the quota) into p. Every series is
 * found or made first (the only step that can fail), then the sums. */
static int gp_agent_fold_sites(struct gp_agent *a, struct gp_agent_proc *p, const struct gp_rep *rep)
{
	size_t *at = calloc(rep->ncallsites + 1, sizeof *at);
	if (!at)
		return -ENOMEM;
	for (size_t i = 0; i < rep->ncallsites; i++) {
		const char *name = rep->callsites[i].name ? rep->callsites[i].name : "other";
		struct gp_agent_site *s = NULL;
		for (size_t k = 0; k < p->nsite && !s; k++)
			if (!strcmp(p->site[k].name, name))
				s = &p->site[k];
		if (!s)
			s = gp_agent_site_get(p, p->named_sites >= a->top_n ? "other" : name);
		if (!s) {
			free(at);
			return -ENOMEM;
		}
		at[i] = (size_t)(s - p->site);
	}
	for (size_t i = 0; i < rep->ncallsites; i++) {
		p->site[at[i]].waits += rep->callsites[i].calls;
		p->site[at[i]].sync_ns += rep->callsites[i].sync_ns;
	}
	free(at);
	return 0;
}

/* Report groups by total time, largest first (qsort over indices). */
static const struct gp_rep_group *gp_agent_sort_groups;
static int gp_agent_by_total(const void *x, const void *y)
{
	uint64_t a = gp_rep_group_total(&gp_agent_sort_groups[*(const size_t *)x]);
	uint64_t b = gp_rep_group_total(&gp_agent_sort_groups[*(const size_t *)y]);
	return a < b ? 1 : a > b ? -1 : 0;
}

/* Fold the report of one window (and what the sinks saw) into p: first
 * every series it needs (and its call sites, whole), the window's operators by total time so that the
 * largest take the quota of named series (the only step that can fail, and
 * an empty series counts nothing), then the sums. */
static int gp_agent_fold(struct gp_agent *a, struct gp_agent_proc *p, const struct gp_rep *rep,
			 const struct gp_agent_win *w)
{
	size_t *at = calloc(2 * rep->ngroups + 1, sizeof *at), *order = at + rep->ngroups;
	if (!at)
		return -ENOMEM;
	for (size_t i = 0; i < rep->ngroups; i++)
		order[i] = i;
	gp_agent_sort_groups = rep->groups;
	qsort(order, rep->ngroups, sizeof *order, gp_agent_by_total);
	for (size_t k = 0; k < rep->ngroups; k++) {
		size_t i = order[k];
		const char *cat = gp_category_name(rep->groups[i].category);
		struct gp_agent_series *s = gp_agent_series_for(a, p, cat ? cat : "none", rep->groups[i].name);
		if (!s) {
			free(at);
			return -ENOMEM;
		}
		at[i] = (size_t)(s - p->s);
	}
	int rc = gp_agent_fold_sites(a, p, rep); /* fails before adding, or not at all */
	if (rc) {
		free(at);
		return rc;
	}
	for (size_t i = 0; i < rep->ngroups; i++) {
		const struct gp_rep_group *g = &rep->groups[i];
		struct gp_agent_series *s = &p->s[at[i]];
		s->ops += g->count;
		s->phase_ns[GP_AGENT_LAUNCH] += g->launch_ns;
		s->phase_ns[GP_AGENT_QUEUE] += g->queue_ns;
		s->phase_ns[GP_AGENT_EXECUTE] += g->execute_ns;
		s->phase_ns[GP_AGENT_SYNC] += g->sync_ns;
		for (size_t k = 0; k < w->ng; k++)
			if (w->g[k].name && !strcmp(w->g[k].name, g->name)) {
				gp_agent_hist_merge(&s->exec, &w->g[k].exec);
				gp_agent_hist_merge(&s->sync, &w->g[k].sync);
			}
	}
	free(at);
	p->windows++;
	p->wall_ns += rep->wall_ns;
	p->busy_ns += rep->gpu_busy_ns;
	p->profiler_ns += rep->cupti.in_calls_ns;
	p->overhead_last = rep->wall_ns ? (double)rep->cupti.in_calls_ns / (double)rep->wall_ns : 0;
	const uint64_t drops[3] = { rep->dropped_ring, rep->dropped_cupti, rep->dropped_write };
	for (int k = 0; k < 3; k++)
		if (drops[k] > p->dropped[k])
			p->dropped[k] = drops[k];
	return 0;
}

int gp_agent_reduce(struct gp_agent *a, struct gp_agent_proc *p, const char *path, char *err, size_t n)
{
	struct gp_agent_win w = { 0 };
	struct gp_pipeline_sink sink = { &gp_agent_sink, &w };
	struct gp_pipeline_opts o = {
		.group_by = GP_GROUP_KERNEL,
		.what = GP_PIPE_FOOTER,
		.outlier_factor = 1.5,
		.sinks = &sink,
		.nsinks = 1,
		/* call sites named as gpuphase-report names them (from the object
		 * files: the same label in every replica, not an address) */
	};
	struct gp_pipeline *pl = gp_pipeline_new(&o);
	if (!pl) {
		snprintf(err, n, "%s: out of memory", path);
		return -ENOMEM;
	}
	int rc = gp_pipeline_add(pl, path, err, n);
	if (rc == 0 && w.oom)
		rc = -ENOMEM;
	if (rc == 0) {
		rc = gp_agent_fold(a, p, gp_pipeline_rep(pl, 0), &w);
		if (rc)
			snprintf(err, n, "%s: out of memory", path);
	} else if (rc == -ENOMEM) {
		snprintf(err, n, "%s: out of memory", path);
	}
	gp_pipeline_free(pl);
	for (size_t k = 0; k < w.ng; k++)
		free(w.g[k].name);
	free(w.g);
	return rc;
}
