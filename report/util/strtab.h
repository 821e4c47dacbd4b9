/*
 * strtab.h — the report's string table: every text of a trace (STRING
 * records, and texts the analysis makes: call sites, placeholder names)
 * interned once as a canonical index, the trace's string ids mapped onto
 * those indexes, and each text's demangled long and short names computed on
 * first use (trace/kernel_name.h). The analysis core fills it; the analyses keep
 * canonical indexes and print through it after the core is gone (the
 * pipeline keeps each trace's table until its analyses are freed).
 *
 * Memory: one copy of each distinct text (plus its demangled forms when
 * asked). Single-threaded. Errors: 0 or -ENOMEM; lookups never fail.
 */
#ifndef GP_REPORT_STRTAB_H
#define GP_REPORT_STRTAB_H

#include <stddef.h>
#include <stdint.h>
#include "map.h"

#define GP_STR_NONE UINT32_MAX /* no such string */

struct gp_str {
	char *text;
	char *shortname; /* demangled short form, computed on demand */
	char *longname;  /* demangled full form                      */
	uint32_t len;
};

struct gp_strtab {
	struct gp_str *strs;
	size_t nstrs, capstrs;
	struct gp_map by_id;   /* trace string id -> canonical index */
	struct gp_map by_hash; /* text hash -> canonical index       */
};

/* Intern text[0..len): *out = its canonical index (equal texts share one),
 * GP_STR_NONE on ENOMEM. Returns 0 or -ENOMEM (*out may still be valid when
 * only the hash index could not grow). */
int gp_strtab_intern(struct gp_strtab *t, const char *text, size_t len, uint32_t *out);
/* Map trace string id onto canonical index c. 0 / -ENOMEM / -EINVAL. */
int gp_strtab_bind(struct gp_strtab *t, uint32_t id, uint32_t c);
/* Canonical index of trace string id, or GP_STR_NONE (id 0 is none). */
static inline uint32_t gp_strtab_of_id(const struct gp_strtab *t, uint32_t id)
{
	uint64_t *v = id ? gp_map_get(&t->by_id, id) : NULL;
	return v ? (uint32_t)*v : GP_STR_NONE;
}
/* Text of canonical index c, or NULL for GP_STR_NONE. */
const char *gp_strtab_text(const struct gp_strtab *t, uint32_t c);
/* Demangled names of c (computed once; the text itself when that fails).
 * *err gets -ENOMEM when computing them ran out of memory. */
const char *gp_strtab_short(struct gp_strtab *t, uint32_t c, int *err);
const char *gp_strtab_long(struct gp_strtab *t, uint32_t c, int *err);
void gp_strtab_free(struct gp_strtab *t);

#endif
