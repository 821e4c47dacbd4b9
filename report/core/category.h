/*
 * category.h — what an operator does, from its kernel's name: a table of
 * rules, "CATEGORY<TAB>REGEX" a line, each REGEX a POSIX extended regular
 * expression matched, ignoring case, against the demangled full name; the
 * first rule that matches names the category. The default table is
 * report/core/categories.tsv (compiled in, and installed as
 * share/gpuphase/categories.tsv); the user's rules (--categories FILE, then
 * GPUPHASE_CATEGORIES=FILE) come before it, so they win. Copies and sets
 * are "memory" by their kind, whatever their name; ops of hook-only calls
 * are "other". docs/metrics.md §22 states the rules.
 *
 * The table is the process's (gpuphase-report is single-threaded): loaded
 * once by gp_category_load, or with the defaults alone on first use.
 * Report thread only.
 */
#ifndef GP_REPORT_CATEGORY_H
#define GP_REPORT_CATEGORY_H

#include <stddef.h>
#include <stdint.h>

struct gp_rep;

/* No category: an operator grouped by something other than its kernel
 * (--group-by nvtx, callsite, stream, phase), whose ops may differ. */
#define GP_CAT_NONE 0
/* Categories a table may name, the ten built-in ones included. */
#define GP_CAT_MAX 64

/* The table: the rules of user_path (NULL: none), then those of the file
 * GPUPHASE_CATEGORIES names (unset or empty: none), then the defaults.
 * 0, or -errno with a message ("FILE:LINE: why") in err; on error the
 * table is the defaults alone. */
int gp_category_load(const char *user_path, char *err, size_t errlen);

/* Rules from text (a table's contents) appended to the table; origin
 * names it in messages; rule number skip (0-based, among text's rules) is
 * left out (SIZE_MAX: none; the tests drop each default rule in turn).
 * 0 or -EINVAL / -ENOMEM with a message in err. */
int gp_category_parse(const char *text, const char *origin, size_t skip, char *err, size_t errlen);

/* The default table's text, and the table emptied (no rule, the built-in
 * categories only; the next gp_category_of loads nothing by itself). */
const char *gp_category_defaults(void);
void gp_category_reset(void);

/* The category of an operator: its demangled full name and its kinds
 * (GP_GKIND_*, or-ed): memory for copies and sets, other for hook-only
 * calls, else the first rule that matches the name, else other. */
uint8_t gp_category_of(const char *name, unsigned kinds);

/* A category's name ("gemm", ...; NULL for GP_CAT_NONE or one past the
 * last), and how many there are (ids 1 .. count). */
const char *gp_category_name(uint8_t cat);
uint8_t gp_category_count(void);

/* Per-category sums of a report's operators (out: GP_CAT_MAX + 1 entries,
 * by id; [GP_CAT_NONE] collects operators without one). */
struct gp_category_sum {
	uint64_t operators, count;
	uint64_t launch_ns, queue_ns, execute_ns, sync_ns;
};
void gp_category_sums(const struct gp_rep *rep, struct gp_category_sum *out);
/* The categories that have operators (GP_CAT_NONE left out), into ids
 * (GP_CAT_MAX entries), by launch + execute + sync, largest first (ties by
 * id); returns how many. */
size_t gp_category_order(const struct gp_category_sum *sums, uint8_t *ids);

#endif /* GP_REPORT_CATEGORY_H */
