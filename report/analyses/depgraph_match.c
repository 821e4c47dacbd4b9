/*
 * depgraph_match.c — what a change of the dependency graph applies to
 * (depgraph.h gp_dg_match): the nodes it changes, and when a change with a
 * target changes none, the names it could have named, closest first, so
 * that `gpuphase-report --whatif` can refuse a name that matches nothing
 * instead of predicting a saving of 0. Single-threaded; reads a built graph;
 * memory: one pointer per node that could be named, for the sort.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gp_format.h"
#include "depgraph_int.h"

#define GP_DG_NAME_CMP_MAX 1024 /* characters of a name the distance reads */

/* The name by which change kind k could target call c or op o (one of the
 * two is NULL), or NULL. */
static const char *gp_dg_target_name(const struct gp_dg *g, enum gp_dg_change_kind k, const struct gp_dg_c *c,
				     const struct gp_dg_o *o)
{
	if (o)
		return k == GP_DG_SCALE ? o->name : NULL;
	switch (k) {
	case GP_DG_DROP_SYNC:
		return gp_dg_is_sync(c->cls) || gp_dg_is_implicit(c->cls) ? c->name : NULL;
	case GP_DG_HOIST:
		return gp_dg_is_implicit(c->cls) ? c->name : NULL;
	case GP_DG_DROP_SITE:
		return gp_dg_is_sync(c->cls) || gp_dg_is_implicit(c->cls) ? c->site : NULL;
	case GP_DG_GRAPH_LAUNCH:
		return c->cls == GP_API_LAUNCH && c->op >= 0 ? g->o[c->op].name : NULL;
	case GP_DG_PINNED:
	case GP_DG_DEFER:
		return c->held ? g->o[c->op].name : NULL;
	case GP_DG_PINNED_SITE:
	case GP_DG_DEFER_SITE:
		return c->held ? c->site : NULL;
	default:
		return NULL;
	}
}

/* Edit distance (insert, delete, substitute: 1 each) from t to name, and
 * with part set, to the part of name that t is closest to (a glob's '*' and
 * '?' left out of t). row: strlen(t) + 1 entries. */
static size_t gp_dg_distance(const char *t, const char *name, int part, size_t *row)
{
	size_t m = 0;
	char tt[GP_DG_NAME_CMP_MAX];
	for (const char *p = t; *p && m < sizeof tt; p++)
		if (!part || (*p != '*' && *p != '?'))
			tt[m++] = *p;
	for (size_t j = 0; j <= m; j++)
		row[j] = j;
	size_t best = m;
	for (size_t i = 0; name[i] && i < GP_DG_NAME_CMP_MAX; i++) {
		size_t diag = row[0];
		row[0] = part ? 0 : i + 1;
		for (size_t j = 1; j <= m; j++) {
			size_t up = row[j];
			size_t v = diag + (tt[j - 1] != name[i]);
			v = up + 1 < v ? up + 1 : v;
			v = row[j - 1] + 1 < v ? row[j - 1] + 1 : v;
			diag = up, row[j] = v;
		}
		best = part && row[m] < best ? row[m] : best;
	}
	return part ? best : row[m];
}

struct gp_dg_near {
	const char *name;
	size_t part, whole;
};

static int gp_dg_cmp_near(const void *a, const void *b)
{
	const struct gp_dg_near *x = a, *y = b;
	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	if (x->whole != y->whole)
		return x->whole < y->whole ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int gp_dg_cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The distinct names of names[0..n) (sorted in place) ranked by their
 * distance to target: the first maxnear into near. */
static int gp_dg_rank(const char **names, size_t n, const char *target, const char **near, size_t maxnear,
		      size_t *nnear)
{
	if (n)
		qsort(names, n, sizeof *names, gp_dg_cmp_str);
	size_t d = 0;
	for (size_t i = 0; i < n; i++)
		if (!d || strcmp(names[d - 1], names[i]))
			names[d++] = names[i];
	struct gp_dg_near *r = malloc((d + 1) * sizeof *r);
	size_t *row = malloc((strlen(target) + 2) * sizeof *row);
	if (!r || !row) {
		free(r), free(row);
		return -ENOMEM;
	}
	for (size_t i = 0; i < d; i++)
		r[i] = (struct gp_dg_near){ names[i], gp_dg_distance(target, names[i], 1, row),
					    gp_dg_distance(target, names[i], 0, row) };
	if (d)
		qsort(r, d, sizeof *r, gp_dg_cmp_near);
	*nnear = d < maxnear ? d : maxnear;
	for (size_t i = 0; i < *nnear; i++)
		near[i] = r[i].name;
	free(r), free(row);
	return 0;
}

int gp_dg_match(const struct gp_dg *g, const struct gp_dg_change *ch, size_t *nmatch, const char **near,
		size_t maxnear, size_t *nnear)
{
	*nmatch = *nnear = 0;
	for (size_t i = 0; i < g->nc; i++) {
		uint64_t dur = 0;
		*nmatch += (size_t)gp_dg_call_changed(g, &g->c[i], ch, &dur);
	}
	for (size_t i = 0; i < g->no; i++)
		*nmatch += (ch->kind == GP_DG_SCALE && gp_dg_named(g->o[i].name, ch->target)) ||
			   (ch->kind == GP_DG_OVERLAP_COPIES && g->o[i].kind == GP_OP_MEMCPY);
	if (*nmatch || !ch->target || !maxnear)
		return 0;
	const char **names = malloc((g->nc + g->no + 1) * sizeof *names);
	if (!names)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < g->nc; i++) {
		const char *s = gp_dg_target_name(g, ch->kind, &g->c[i], NULL);
		if (s && (!n || s != names[n - 1]))
			names[n++] = s;
	}
	for (size_t i = 0; i < g->no; i++) {
		const char *s = gp_dg_target_name(g, ch->kind, NULL, &g->o[i]);
		if (s && (!n || s != names[n - 1]))
			names[n++] = s;
	}
	int rc = gp_dg_rank(names, n, ch->target, near, maxnear, nnear);
	free(names);
	return rc;
}
