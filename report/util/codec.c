/*
 * codec.c — the bounded binary codec of codec.h: gp_pw writes
 * little-endian fields into a buffer that grows, gp_pr reads them from a
 * span it never leaves. Single-threaded per writer/reader. Invariants: the
 * first failure is sticky (w->err, r->err) and every later call is a
 * no-op returning zeros; a map is written in key order so equal maps give
 * equal bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

/* ---- gp_pw -------------------------------------------------------------------- */

void gp_pw_bytes(struct gp_pw *w, const void *p, size_t n)
{
	if (w->err || !n)
		return;
	if (w->n + n > w->cap) {
		size_t c = w->cap ? w->cap : 4096;
		while (c < w->n + n)
			c *= 2;
		unsigned char *b = realloc(w->b, c);
		if (!b) {
			w->err = -ENOMEM;
			return;
		}
		w->b = b;
		w->cap = c;
	}
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void gp_pw_le(struct gp_pw *w, uint64_t v, size_t n)
{
	unsigned char b[8];
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	gp_pw_bytes(w, b, n);
}

void gp_pw_u8(struct gp_pw *w, uint8_t v)
{
	gp_pw_bytes(w, &v, 1);
}

void gp_pw_u32(struct gp_pw *w, uint32_t v)
{
	gp_pw_le(w, v, 4);
}

void gp_pw_u64(struct gp_pw *w, uint64_t v)
{
	gp_pw_le(w, v, 8);
}

void gp_pw_i64(struct gp_pw *w, int64_t v)
{
	gp_pw_le(w, (uint64_t)v, 8);
}

void gp_pw_f64(struct gp_pw *w, double v)
{
	uint64_t u;
	memcpy(&u, &v, sizeof u);
	gp_pw_le(w, u, 8);
}

void gp_pw_str(struct gp_pw *w, const char *s)
{
	if (!s) {
		gp_pw_u32(w, UINT32_MAX);
		return;
	}
	size_t n = strlen(s);
	if (n > GP_CODEC_MAX_STR) /* never from a report: its texts come from bounded records */
		n = GP_CODEC_MAX_STR;
	gp_pw_u32(w, (uint32_t)n);
	gp_pw_bytes(w, s, n);
}

size_t gp_pw_begin_len(struct gp_pw *w)
{
	size_t at = w->n;
	gp_pw_u64(w, 0);
	return at;
}

void gp_pw_end_len(struct gp_pw *w, size_t at)
{
	if (w->err || at + 8 > w->n)
		return;
	uint64_t len = w->n - at - 8;
	for (size_t i = 0; i < 8; i++)
		w->b[at + i] = (unsigned char)(len >> (8 * i));
}

void gp_pw_free(struct gp_pw *w)
{
	free(w->b);
	memset(w, 0, sizeof *w);
}

/* ---- gp_pr -------------------------------------------------------------------- */

void gp_pr_init(struct gp_pr *r, const void *p, size_t n, size_t base)
{
	memset(r, 0, sizeof *r);
	r->p = p;
	r->n = n;
	r->base = base;
}

void gp_pr_fail(struct gp_pr *r, const char *what)
{
	if (r->err)
		return;
	r->err = -EPROTO;
	snprintf(r->msg, sizeof r->msg, "at byte %zu: %s", r->base + r->off, what);
}

void gp_pr_oom(struct gp_pr *r)
{
	if (r->err)
		return;
	r->err = -ENOMEM;
	snprintf(r->msg, sizeof r->msg, "out of memory");
}

void gp_pr_bytes(struct gp_pr *r, void *out, size_t n)
{
	if (!r->err && n > r->n - r->off)
		gp_pr_fail(r, "a field runs past the end of its chunk");
	if (r->err) {
		memset(out, 0, n);
		return;
	}
	memcpy(out, r->p + r->off, n);
	r->off += n;
}

static uint64_t gp_pr_le(struct gp_pr *r, size_t n)
{
	unsigned char b[8];
	gp_pr_bytes(r, b, n);
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

uint8_t gp_pr_u8(struct gp_pr *r)
{
	return (uint8_t)gp_pr_le(r, 1);
}

uint32_t gp_pr_u32(struct gp_pr *r)
{
	return (uint32_t)gp_pr_le(r, 4);
}

uint64_t gp_pr_u64(struct gp_pr *r)
{
	return gp_pr_le(r, 8);
}

int64_t gp_pr_i64(struct gp_pr *r)
{
	return (int64_t)gp_pr_le(r, 8);
}

double gp_pr_f64(struct gp_pr *r)
{
	uint64_t u = gp_pr_le(r, 8);
	double v;
	memcpy(&v, &u, sizeof v);
	return v;
}

int gp_pr_bool(struct gp_pr *r)
{
	uint8_t v = gp_pr_u8(r);
	if (v > 1)
		gp_pr_fail(r, "a flag is neither 0 nor 1");
	return r->err ? 0 : v;
}

size_t gp_pr_count(struct gp_pr *r, size_t min_size, uint64_t max)
{
	size_t at = r->off;
	uint64_t c = gp_pr_u64(r);
	if (r->err)
		return 0;
	if (c > max || (min_size && c > (r->n - r->off) / min_size)) {
		char m[96];
		r->off = at; /* the message points at the count */
		snprintf(m, sizeof m, "a count of %llu elements %s", (unsigned long long)c,
			 c > max ? "is above the format's bound" : "overruns its chunk");
		gp_pr_fail(r, m);
		return 0;
	}
	return (size_t)c;
}

/* The next string's bytes (*len) in place, NULL for a NULL string. */
static const char *gp_pr_str(struct gp_pr *r, uint32_t *len, int *present)
{
	uint32_t n = gp_pr_u32(r);
	*len = 0;
	if (present)
		*present = 0;
	if (r->err || n == UINT32_MAX)
		return NULL;
	if (n > GP_CODEC_MAX_STR || n > r->n - r->off) {
		gp_pr_fail(r, n > GP_CODEC_MAX_STR ? "a string is longer than the format allows"
						   : "a string runs past the end of its chunk");
		return NULL;
	}
	const char *s = (const char *)r->p + r->off;
	if (memchr(s, 0, n)) {
		gp_pr_fail(r, "a string holds a NUL byte");
		return NULL;
	}
	r->off += n;
	*len = n;
	if (present)
		*present = 1;
	return s;
}

char *gp_pr_strdup(struct gp_pr *r, int *present)
{
	uint32_t n;
	int here;
	const char *s = gp_pr_str(r, &n, &here);
	if (present)
		*present = here;
	if (!here)
		return NULL;
	char *d = malloc((size_t)n + 1);
	if (!d) {
		gp_pr_oom(r);
		return NULL;
	}
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

const char *gp_pr_intern(struct gp_pr *r, struct gp_strtab *t)
{
	uint32_t n, c;
	int here;
	const char *s = gp_pr_str(r, &n, &here);
	if (!here)
		return NULL;
	if (gp_strtab_intern(t, s, n, &c) && c == GP_STR_NONE) {
		gp_pr_oom(r);
		return NULL;
	}
	return gp_strtab_text(t, c);
}

const char *gp_pr_intern_req(struct gp_pr *r, struct gp_strtab *t)
{
	const char *s = gp_pr_intern(r, t);
	if (!s)
		gp_pr_fail(r, "a name that must be there is missing");
	return s;
}

void gp_pr_sub(struct gp_pr *r, size_t n, struct gp_pr *sub)
{
	if (!r->err && n > r->n - r->off)
		gp_pr_fail(r, "a section runs past the end of its chunk");
	gp_pr_init(sub, r->err ? NULL : r->p + r->off, r->err ? 0 : n, r->base + r->off);
	sub->err = r->err;
	if (!r->err)
		r->off += n;
}

void gp_pr_done(struct gp_pr *r, const char *what)
{
	if (!r->err && r->off != r->n) {
		char m[120];
		snprintf(m, sizeof m, "%zu bytes left over after %s", r->n - r->off, what);
		gp_pr_fail(r, m);
	}
}

static int gp_pw_cmp_pair(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void gp_pw_map(struct gp_pw *w, const struct gp_map *m)
{
	uint64_t *kv = malloc((m->count ? m->count : 1) * 2 * sizeof *kv), key, v;
	size_t pos = 0, n = 0;
	if (!kv) {
		w->err = -ENOMEM;
		return;
	}
	while (n < m->count && gp_map_next(m, &pos, &key, &v)) {
		kv[2 * n] = key;
		kv[2 * n + 1] = v;
		n++;
	}
	qsort(kv, n, 2 * sizeof *kv, gp_pw_cmp_pair);
	gp_pw_u64(w, n);
	for (size_t i = 0; i < 2 * n; i++)
		gp_pw_u64(w, kv[i]);
	free(kv);
}

void gp_pr_map(struct gp_pr *r, struct gp_map *m)
{
	size_t n = gp_pr_count(r, 16, UINT32_MAX);
	for (size_t i = 0; i < n && !r->err; i++) {
		uint64_t key = gp_pr_u64(r), v = gp_pr_u64(r);
		if (!r->err && (key == GP_MAP_EMPTY || gp_map_get(m, key)))
			gp_pr_fail(r, "a map key is reserved or repeated");
		else if (!r->err && gp_map_put(m, key, v))
			gp_pr_oom(r);
	}
}
