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
 * Fields are written and read with the codec of util/codec.h (gp_pw,
 * gp_pr): partial_rep.c for the core's aggregates, each analysis's
 * save/load (analyses/registry.h) for its own state.
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
#include "report/util/codec.h"
#include "report/util/strtab.h"

#define GP_PARTIAL_MAGIC "GPHPARTL"      /* 8 bytes, no NUL                   */
#define GP_PARTIAL_VERSION 5u
#define GP_PARTIAL_MAX_CHUNK (1ull << 30) /* one trace's aggregates: < 1 GiB   */
#define GP_PARTIAL_MAX_SPEC 4096u         /* the --whatif spec                 */

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
