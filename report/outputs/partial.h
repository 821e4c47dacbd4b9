/*
 * partial.h — partial results: what the report of one trace is computed
 * from (its gp_rep and each analysis's state after finish) in a file, so
 * that traces analysed by separate processes, on separate hosts, give the
 * report one process would give on all of them:
 *
 *   gpuphase-report --partial -o r3.gpp TRACE...     map: one pass per trace
 *   gpuphase-report --merge r0.gpp r1.gpp ...        reduce: the report
 *
 * The format (docs/partial-format.md) is binary, little-endian and
 * versioned: a magic, a version, then chunks (tag, CRC32C, length) — the
 * options that shaped the aggregates, one chunk per trace, an end chunk
 * counting them. A reader never trusts a length or a count: each is checked
 * against the bytes left in its chunk and against a fixed bound before
 * anything is allocated, and every problem is one message naming the file,
 * the chunk and the byte offset.
 *
 * Encoding (for partial_rep.c and the analyses' save/load, analyses/registry.h):
 * gp_pw appends fixed-width little-endian fields and length-prefixed
 * strings to a growing buffer; gp_pr reads them from a bounded span and
 * keeps its first error (later reads return zeros), so a loader reads
 * straight through and checks r->err once.
 *
 * Single-threaded. Errors: 0 or -errno (-ENOMEM; -EPROTO for a damaged or
 * foreign file, -EIO for a read or write error), with one line in err.
 */
#ifndef GP_REPORT_PARTIAL_H
#define GP_REPORT_PARTIAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/core/rep.h"
#include "report/util/strtab.h"

#define GP_PARTIAL_MAGIC "GPHPARTL"      /* 8 bytes, no NUL                   */
#define GP_PARTIAL_VERSION 2u
#define GP_PARTIAL_MAX_CHUNK (1ull << 30) /* one trace's aggregates: < 1 GiB   */
#define GP_PARTIAL_MAX_STR (1u << 24)     /* one string (a call stack's text)  */
#define GP_PARTIAL_MAX_SPEC 4096u         /* the --whatif spec                 */
#define GP_PARTIAL_MAX_ANALYSES 64u       /* analysis entries of one trace     */

/* ---- encoding --------------------------------------------------------------- */

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
 * says which when given). Refused: longer than GP_PARTIAL_MAX_STR, holding
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

/* ---- the core's aggregates (partial_rep.c) ------------------------------------ */

/* A per-trace report (not a merged one: no ranks) into w. */
void gp_partial_rep_save(struct gp_pw *w, const struct gp_rep *rep);
/* Read one into rep (zeroed here; freed on error). 0 or r->err. */
int gp_partial_rep_load(struct gp_pr *r, struct gp_rep *rep);
/* The sizes of gp_rep and its parts the encoder was written for: 1 when
 * they still hold (a unit test says which field to add otherwise). */
int gp_partial_rep_layout_ok(char *why, size_t n);

/* ---- the file (partial.c) ------------------------------------------------------ */

struct gp_analyses;
struct gp_analysis_env;

/* The options that shaped the aggregates: a merge must run with the same. */
struct gp_partial_opts {
	int group_by;                      /* enum gp_group_by                 */
	double outlier_factor;
	char whatif[GP_PARTIAL_MAX_SPEC];  /* "" = none                        */
};

/* Is the file at path a partial (its first bytes the magic)? 0 when not or
 * unreadable (the trace reader then says why). */
int gp_partial_is(const char *path);

/* Write the traces' reports and analyses (sets[i] may be NULL) to f. */
int gp_partial_write(FILE *f, const struct gp_partial_opts *o, const struct gp_rep *reps,
		     struct gp_analyses *const *sets, size_t n, char *err, size_t en);

/* Read the options chunk of path only (cheap: the first chunk). */
int gp_partial_read_opts(const char *path, struct gp_partial_opts *o, char *err, size_t en);

/* Read every trace of path: each report and its analyses (loaded with env:
 * analyses/registry.h gp_analyses_load) go to add, which takes them (it frees them
 * when it fails). Returns 0, add's error, or an error with err set. */
int gp_partial_read(const char *path, const struct gp_analysis_env *env,
		    int (*add)(void *ctx, struct gp_rep *rep, struct gp_analyses *set), void *ctx, char *err,
		    size_t en);

#endif
