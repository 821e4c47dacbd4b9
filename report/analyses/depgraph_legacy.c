/*
 * depgraph_legacy.c — the legacy default stream's implicit order in the
 * dependency graph (docs/metrics.md "What-if", the legacy default stream's
 * order): an op of the legacy stream starts no earlier than the end of the
 * last earlier-issued op of every stream of its device that synchronizes
 * with it, and an op of such a stream no earlier than the end of the last
 * earlier-issued op of the legacy stream.
 *
 * Built once after the launch edges (gp_dg_link_legacy): the stream table,
 * each op's issue time (its launching call's start), the legacy stream of
 * each device (the stream of its blocking copies and sets) and the streams
 * whose measured times break the rule (apart: non-blocking). Read by every
 * replay (gp_dg_legacy_bound). The measured times satisfy every edge this
 * adds, so a replay of the unchanged graph still gives back every measured
 * timestamp. Single-threaded; memory: one entry per stream.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gp_format.h"
#include "depgraph_int.h"

/* The last op of stream entry s issued before t (its call started before
 * t), or -1. The ops of a stream are issued in their order. */
static long gp_dg_issued_before(const struct gp_dg *g, const struct gp_dg_s *s, uint64_t t)
{
	size_t lo = s->first, hi = s->end;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g->o[mid].issue < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > s->first ? (long)lo - 1 : -1;
}

/* Whether op o's measured start breaks its order after stream entry s:
 * it started before the end of the last op of s issued before it. */
static int gp_dg_breaks(const struct gp_dg *g, const struct gp_dg_o *o, const struct gp_dg_s *s)
{
	long j = gp_dg_issued_before(g, s, o->issue);
	return j >= 0 && o->start < g->o[j].end;
}

/* Whether call c is a blocking copy or set on the legacy stream (not the
 * per-thread default stream's twin). */
static int gp_dg_on_legacy(const struct gp_dg_c *c)
{
	return gp_dg_is_copy_sync(c->cls) && !(c->name && strstr(c->name, "_ptds"));
}

/* The stream table and each op's issue time. */
static int gp_dg_streams(struct gp_dg *g)
{
	size_t n = 0;
	for (size_t i = 0; i < g->no; i++)
		n += !i || g->o[i].stream != g->o[i - 1].stream;
	g->s = calloc(n + 1, sizeof *g->s);
	if (!g->s)
		return -ENOMEM;
	g->ns = 0;
	for (size_t i = 0; i < g->no; i++) {
		struct gp_dg_o *o = &g->o[i];
		int fresh = !i || o->stream != g->o[i - 1].stream;
		if (fresh)
			g->s[g->ns++] = (struct gp_dg_s){ .first = (uint32_t)i, .legacy = -1, .device = o->device };
		struct gp_dg_s *s = &g->s[g->ns - 1];
		s->end = (uint32_t)i + 1;
		o->sidx = (uint32_t)(g->ns - 1);
		o->has_issue = o->call >= 0;
		o->issue = o->call >= 0 ? g->c[o->call].start : 0;
		if (!fresh && o->issue < g->o[i - 1].issue) /* unknown, or issued in its order */
			o->issue = g->o[i - 1].issue;
		s->is_legacy |= o->call >= 0 && gp_dg_on_legacy(&g->c[o->call]);
	}
	return 0;
}

/* Each device's legacy stream (its first one), for devices with at most
 * GP_DG_LEGACY_STREAMS streams. */
static void gp_dg_legacy_streams(struct gp_dg *g)
{
	int32_t leg[256];
	uint32_t count[256] = { 0 };
	for (size_t d = 0; d < 256; d++)
		leg[d] = -1;
	for (size_t i = 0; i < g->ns; i++) {
		count[g->s[i].device]++;
		if (g->s[i].is_legacy && leg[g->s[i].device] < 0)
			leg[g->s[i].device] = (int32_t)i;
	}
	for (size_t i = 0; i < g->ns; i++)
		if (count[g->s[i].device] <= GP_DG_LEGACY_STREAMS)
			g->s[i].legacy = leg[g->s[i].device];
}

/* Streams whose measured times break the rule, either way, are apart. */
static void gp_dg_legacy_apart(struct gp_dg *g)
{
	for (size_t i = 0; i < g->ns; i++) {
		struct gp_dg_s *s = &g->s[i];
		if (s->legacy < 0 || s->is_legacy)
			continue;
		const struct gp_dg_s *l = &g->s[s->legacy];
		for (size_t k = s->first; k < s->end && !s->apart; k++)
			s->apart = g->o[k].has_issue && gp_dg_breaks(g, &g->o[k], l);
		for (size_t k = l->first; k < l->end && !s->apart; k++)
			s->apart = g->o[k].has_issue && gp_dg_breaks(g, &g->o[k], s);
	}
}

int gp_dg_link_legacy(struct gp_dg *g)
{
	int rc = gp_dg_streams(g);
	if (rc)
		return rc;
	gp_dg_legacy_streams(g);
	gp_dg_legacy_apart(g);
	return 0;
}

/* The last op of stream entry s issued before op o: *start raised to its
 * end and *by set to it when it ends later than *start or *by is none.
 * 0 when it is not placed yet. */
static int gp_dg_follow(const struct gp_dg *g, const struct gp_dg_o *o, const struct gp_dg_s *s, const uint8_t *od,
			const uint64_t *oe, uint64_t *start, int32_t *by)
{
	long j = gp_dg_issued_before(g, s, o->issue);
	if (j < 0)
		return 1;
	if (!od[j])
		return 0;
	if (oe[j] > *start || *by < 0) {
		*start = oe[j] > *start ? oe[j] : *start;
		*by = (int32_t)j;
	}
	return 1;
}

int gp_dg_legacy_bound(const struct gp_dg *g, size_t k, const uint8_t *od, const uint64_t *oe, int force,
		       uint64_t *start, int32_t *by)
{
	const struct gp_dg_o *o = &g->o[k];
	const struct gp_dg_s *s = &g->s[o->sidx];
	*by = -1;
	if (!o->has_issue || s->legacy < 0 || s->apart)
		return 1;
	if (!s->is_legacy)
		return gp_dg_follow(g, o, &g->s[s->legacy], od, oe, start, by) || force;
	for (size_t i = 0; i < g->ns; i++) {
		const struct gp_dg_s *t = &g->s[i];
		if (t != s && t->device == s->device && !t->is_legacy && !t->apart && t->legacy >= 0 &&
		    !gp_dg_follow(g, o, t, od, oe, start, by) && !force)
			return 0;
	}
	return 1;
}
