/*
 * clockmap.c — a trace's clock pairs and the trace-clock -> wall-clock map
 * they give (clockmap.h). Report thread only.
 */
#include "clockmap.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int gp_clockmap_add(struct gp_clockmap *m, const struct gp_clock_pair *pair)
{
	uint64_t k = m->seen++;
	if (k & ((1ull << m->thin) - 1))
		return 0;
	if (m->n == GP_CLOCKMAP_MAX) { /* keep every other one, and half as many from now on */
		size_t o = 0;
		for (size_t i = 0; i < m->n; i += 2)
			m->p[o++] = m->p[i];
		m->n = o;
		m->thin++;
		if (k & ((1ull << m->thin) - 1))
			return 0;
	}
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 16;
		struct gp_clock_pair *np = realloc(m->p, nc * sizeof *np);
		if (!np)
			return -ENOMEM;
		m->p = np;
		m->cap = nc;
	}
	m->p[m->n++] = *pair;
	return 0;
}

static int gp_clockmap_cmp(const void *a, const void *b)
{
	const struct gp_clock_pair *x = a, *y = b;
	if (x->raw != y->raw)
		return x->raw < y->raw ? -1 : 1;
	return x->realtime < y->realtime ? -1 : x->realtime > y->realtime;
}

void gp_clockmap_sort(struct gp_clockmap *m)
{
	if (m->n < 2)
		return;
	qsort(m->p, m->n, sizeof *m->p, gp_clockmap_cmp);
	size_t o = 1;
	for (size_t i = 1; i < m->n; i++)
		if (m->p[i].raw != m->p[o - 1].raw)
			m->p[o++] = m->p[i];
	m->n = o;
}

static int64_t gp_clockmap_off(const struct gp_clock_pair *p)
{
	return (int64_t)(p->realtime - p->raw); /* modulo 2^64: defined for any pair */
}

int64_t gp_clockmap_offset(const struct gp_clockmap *m, uint64_t t)
{
	if (!m->n)
		return 0;
	if (t <= m->p[0].raw)
		return gp_clockmap_off(&m->p[0]);
	if (t >= m->p[m->n - 1].raw)
		return gp_clockmap_off(&m->p[m->n - 1]);
	size_t lo = 0, hi = m->n - 1; /* p[lo].raw < t < p[hi].raw */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->p[mid].raw <= t)
			lo = mid;
		else
			hi = mid;
	}
	int64_t a = gp_clockmap_off(&m->p[lo]), b = gp_clockmap_off(&m->p[hi]);
	double f = (double)(t - m->p[lo].raw) / (double)(m->p[hi].raw - m->p[lo].raw);
	double v = (double)a + f * ((double)b - (double)a);
	if (!(v > -9.2e18 && v < 9.2e18)) /* a corrupt pair: held, not undefined */
		return v > 0 ? INT64_MAX : INT64_MIN;
	return a == b ? a : (int64_t)llround(v);
}

uint64_t gp_clockmap_convert(const struct gp_clockmap *from, const struct gp_clockmap *to, uint64_t t)
{
	int64_t wall = gp_clockmap_wall(from, t);
	/* solve r + offset_to(r) = wall: the offset moves by ppm, so two steps
	 * from the first pair's offset settle it */
	int64_t r = gp_clockmap_sub_sat(wall, gp_clockmap_offset(to, 0));
	for (int i = 0; i < 2; i++)
		r = gp_clockmap_sub_sat(wall, gp_clockmap_offset(to, r > 0 ? (uint64_t)r : 0));
	return r > 0 ? (uint64_t)r : 0;
}

uint32_t gp_clockmap_max_width(const struct gp_clockmap *m)
{
	uint32_t w = 0;
	for (size_t i = 0; i < m->n; i++)
		if (m->p[i].width > w)
			w = m->p[i].width;
	return w;
}

int gp_clockmap_copy(struct gp_clockmap *dst, const struct gp_clockmap *src)
{
	memset(dst, 0, sizeof *dst);
	if (!src->n)
		return 0;
	dst->p = malloc(src->n * sizeof *dst->p);
	if (!dst->p)
		return -ENOMEM;
	memcpy(dst->p, src->p, src->n * sizeof *dst->p);
	dst->n = dst->cap = src->n;
	dst->thin = src->thin;
	dst->seen = src->seen;
	return 0;
}

void gp_clockmap_free(struct gp_clockmap *m)
{
	free(m->p);
	memset(m, 0, sizeof *m);
}

int gp_clockline_set(struct gp_clockline *l, size_t trace, const struct gp_clockmap *m)
{
	if (trace >= l->n) {
		struct gp_clockmap *nm = realloc(l->maps, (trace + 1) * sizeof *nm);
		if (!nm)
			return -ENOMEM;
		memset(nm + l->n, 0, (trace + 1 - l->n) * sizeof *nm);
		l->maps = nm;
		l->n = trace + 1;
	}
	gp_clockmap_free(&l->maps[trace]);
	return gp_clockmap_copy(&l->maps[trace], m);
}

uint64_t gp_clockline_time(const struct gp_clockline *l, size_t trace, uint64_t t)
{
	if (!trace || trace >= l->n || !l->maps[0].n || !l->maps[trace].n)
		return t;
	return gp_clockmap_convert(&l->maps[trace], &l->maps[0], t);
}

void gp_clockline_free(struct gp_clockline *l)
{
	for (size_t i = 0; i < l->n; i++)
		gp_clockmap_free(&l->maps[i]);
	free(l->maps);
	memset(l, 0, sizeof *l);
}
