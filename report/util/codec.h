/*
 * codec.h — a bounded binary codec: gp_pw appends fixed-width
 * little-endian fields, length-prefixed strings and maps to a growing
 * buffer; gp_pr reads them back from a bounded span and keeps its first
 * error (later reads return zeros), so a loader reads straight through and
 * checks r->err once. The partial-results file (outputs/partial.h) and the
 * analyses' save/load (analyses/registry.h) are written with it.
 *
 * Invariants: a reader never reads past its span, and never trusts a length
 * or a count before checking it against the bytes left and a fixed bound;
 * a problem is one message naming the byte offset in the file (r->base +
 * r->off). A leaf of the report: includes only util/ (map, strtab).
 * Single-threaded per writer/reader. Errors: w->err is -ENOMEM once a write
 * failed; r->err is -EPROTO (damaged input) or -ENOMEM.
 */
#ifndef GP_REPORT_CODEC_H
#define GP_REPORT_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "map.h"
#include "strtab.h"

#define GP_CODEC_MAX_STR (1u << 24) /* one string (a call stack's text)        */

struct gp_pw {
	unsigned char *b;
	size_t n, cap;
	int err;             /* -ENOMEM once a write failed (the rest are dropped) */
};

void gp_pw_bytes(struct gp_pw *w, const void *p, size_t n);
void gp_pw_u8(struct gp_pw *w, uint8_t v);
void gp_pw_u32(struct gp_pw *w, uint32_t v);
void gp_pw_u64(struct gp_pw *w, uint64_t v);
void gp_pw_i64(struct gp_pw *w, int64_t v);
void gp_pw_f64(struct gp_pw *w, double v);   /* the IEEE bits: exact        */
/* A string: u32 length then the bytes; NULL is length 0xffffffff. */
void gp_pw_str(struct gp_pw *w, const char *s);
/* Reserve a u64 length field; gp_pw_end_len fills it with the bytes written
 * since. Returns the field's offset. */
size_t gp_pw_begin_len(struct gp_pw *w);
void gp_pw_end_len(struct gp_pw *w, size_t at);
void gp_pw_free(struct gp_pw *w);

struct gp_pr {
	const unsigned char *p;
	size_t n, off;
	size_t base;         /* offset of p in its file (messages)              */
	int err;             /* first problem: -EPROTO or -ENOMEM               */
	char msg[200];       /* what it was, with the file offset               */
};

void gp_pr_init(struct gp_pr *r, const void *p, size_t n, size_t base);
/* Record a problem (the first one stays): -EPROTO with "at byte B: what". */
void gp_pr_fail(struct gp_pr *r, const char *what);
void gp_pr_oom(struct gp_pr *r);
void gp_pr_bytes(struct gp_pr *r, void *out, size_t n);
uint8_t gp_pr_u8(struct gp_pr *r);
uint32_t gp_pr_u32(struct gp_pr *r);
uint64_t gp_pr_u64(struct gp_pr *r);
int64_t gp_pr_i64(struct gp_pr *r);
double gp_pr_f64(struct gp_pr *r);
/* A flag: a u8 that must be 0 or 1. */
int gp_pr_bool(struct gp_pr *r);
/* A count of elements that each take at least min_size bytes: refused when
 * above max or when they could not fit in the bytes left. 0 on error. */
size_t gp_pr_count(struct gp_pr *r, size_t min_size, uint64_t max);
/* A string: malloc'd copy (NULL for a NULL string or on error; *present
 * says which when given). Refused: longer than GP_CODEC_MAX_STR, holding
 * a NUL byte, or past the end. */
char *gp_pr_strdup(struct gp_pr *r, int *present);
/* The same, interned in t: the text lives as long as t (NULL for NULL). */
const char *gp_pr_intern(struct gp_pr *r, struct gp_strtab *t);
/* A string that must be present (an error otherwise). */
const char *gp_pr_intern_req(struct gp_pr *r, struct gp_strtab *t);
/* A sub-reader over the next n bytes (checked), which r skips. */
void gp_pr_sub(struct gp_pr *r, size_t n, struct gp_pr *sub);
/* A map's entries (u64 count, then key/value pairs in key order: the map's
 * own order changes from run to run, the file's bytes must not), and back
 * into an empty map (a reserved or repeated key is a problem). */
void gp_pw_map(struct gp_pw *w, const struct gp_map *m);
void gp_pr_map(struct gp_pr *r, struct gp_map *m);
/* Everything read? Else a problem ("N bytes left over"). */
void gp_pr_done(struct gp_pr *r, const char *what);

#endif
