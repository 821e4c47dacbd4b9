/*
 * category.c — the kernel-name → category table (category.h): parsing
 * "CATEGORY<TAB>REGEX" lines into compiled POSIX extended regular
 * expressions, the process's one table (the user's rules first, the
 * defaults of report/core/categories.tsv after them), an operator's
 * category, and the per-category sums of a report.
 *
 * Invariants: rule i's category is a valid id (1 .. ncats); the ten
 * built-in categories keep ids 1 .. 10 in every table; a failed load
 * leaves the defaults alone. Report thread only (the table is static).
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "category.h"
#include "rep.h"
#include "categories_table.h" /* gp_category_table_text, from report/core/categories.tsv */

#define GP_CAT_NAME_MAX 31     /* characters of a category's name          */
#define GP_CAT_FILE_MAX (1u << 20) /* bytes of a user's table, at most     */

static const char *const gp_cat_builtin[] = { "gemm",        "attention", "communication", "normalization",
					      "elementwise", "reduction", "memory",        "sampling",
					      "quantization", "other" };
#define GP_CAT_NBUILTIN (sizeof gp_cat_builtin / sizeof gp_cat_builtin[0])
#define GP_CAT_MEMORY   7  /* ids are 1-based: index + 1 */
#define GP_CAT_OTHER    10

struct gp_cat_rule {
	uint8_t cat;
	regex_t re;
};

static struct {
	struct gp_cat_rule *rules;
	size_t n, cap;
	char names[GP_CAT_MAX + 1][GP_CAT_NAME_MAX + 1]; /* by id; [0] unused */
	uint8_t ncats;
	int ready; /* the table holds what gp_category_of should use */
} gp_cat;

static void gp_cat_ensure(void)
{
	if (!gp_cat.ready)
		gp_category_load(NULL, NULL, 0);
}

const char *gp_category_defaults(void)
{
	return gp_category_table_text;
}

void gp_category_reset(void)
{
	for (size_t i = 0; i < gp_cat.n; i++)
		regfree(&gp_cat.rules[i].re);
	free(gp_cat.rules);
	gp_cat.rules = NULL;
	gp_cat.n = gp_cat.cap = 0;
	memset(gp_cat.names, 0, sizeof gp_cat.names);
	for (size_t i = 0; i < GP_CAT_NBUILTIN; i++)
		snprintf(gp_cat.names[i + 1], sizeof gp_cat.names[i + 1], "%s", gp_cat_builtin[i]);
	gp_cat.ncats = GP_CAT_NBUILTIN;
	gp_cat.ready = 1;
}

/* The id of the category named name[0..len), made when new (0: no room). */
static uint8_t gp_cat_id(const char *name, size_t len)
{
	for (uint8_t i = 1; i <= gp_cat.ncats; i++)
		if (strlen(gp_cat.names[i]) == len && !memcmp(gp_cat.names[i], name, len))
			return i;
	if (gp_cat.ncats >= GP_CAT_MAX)
		return GP_CAT_NONE;
	gp_cat.ncats++;
	memcpy(gp_cat.names[gp_cat.ncats], name, len);
	gp_cat.names[gp_cat.ncats][len] = 0;
	return gp_cat.ncats;
}

static int gp_cat_fail(char *err, size_t errlen, int rc, const char *origin, unsigned line, const char *why)
{
	if (err && errlen)
		snprintf(err, errlen, "%s:%u: %s", origin, line, why);
	return rc;
}

/* One rule line (NUL-terminated, no newline) appended; 0 or -errno. */
static int gp_cat_rule(char *s, const char *origin, unsigned line, int keep, char *err, size_t errlen)
{
	size_t nl = strcspn(s, "\t");
	if (!s[nl])
		return gp_cat_fail(err, errlen, -EINVAL, origin, line, "no TAB: a rule is CATEGORY<TAB>REGEX");
	if (!nl || nl > GP_CAT_NAME_MAX || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") != nl)
		return gp_cat_fail(err, errlen, -EINVAL, origin, line,
				   "a category is 1 to 31 of a-z 0-9 _ - (lower case)");
	char *re = s + nl + strspn(s + nl, "\t");
	if (!*re)
		return gp_cat_fail(err, errlen, -EINVAL, origin, line, "no regular expression after the TAB");
	if (!keep)
		return 0;
	uint8_t cat = gp_cat_id(s, nl);
	if (cat == GP_CAT_NONE)
		return gp_cat_fail(err, errlen, -EINVAL, origin, line, "more than 64 categories");
	if (gp_cat.n == gp_cat.cap) {
		size_t cap = gp_cat.cap ? 2 * gp_cat.cap : 64;
		struct gp_cat_rule *r = realloc(gp_cat.rules, cap * sizeof *r);
		if (!r)
			return gp_cat_fail(err, errlen, -ENOMEM, origin, line, "out of memory");
		gp_cat.rules = r;
		gp_cat.cap = cap;
	}
	struct gp_cat_rule *r = &gp_cat.rules[gp_cat.n];
	int rc = regcomp(&r->re, re, REG_EXTENDED | REG_ICASE | REG_NOSUB);
	if (rc) {
		char why[200], msg[320];
		regerror(rc, &r->re, why, sizeof why);
		snprintf(msg, sizeof msg, "bad regular expression (POSIX extended): %s", why);
		return gp_cat_fail(err, errlen, -EINVAL, origin, line, msg);
	}
	r->cat = cat;
	gp_cat.n++;
	return 0;
}

int gp_category_parse(const char *text, const char *origin, size_t skip, char *err, size_t errlen)
{
	if (!gp_cat.ready)
		gp_category_reset();
	unsigned line = 0;
	size_t rule = 0;
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		line++;
		char *s = malloc(len + 1);
		if (!s)
			return gp_cat_fail(err, errlen, -ENOMEM, origin, line, "out of memory");
		memcpy(s, p, len);
		s[len] = 0;
		if (len && s[len - 1] == '\r')
			s[len - 1] = 0;
		char *t = s + strspn(s, " \t");
		int rc = 0;
		if (*t && *t != '#')
			rc = gp_cat_rule(t, origin, line, rule++ != skip, err, errlen);
		free(s);
		if (rc)
			return rc;
		p += len + (p[len] == '\n');
	}
	return 0;
}

/* The rules of the file at path appended; 0 or -errno with a message. */
static int gp_cat_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		int e = errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	char *text = malloc(GP_CAT_FILE_MAX + 1);
	size_t n = text ? fread(text, 1, GP_CAT_FILE_MAX + 1, f) : 0;
	int rc = !text ? -ENOMEM : ferror(f) ? -EIO : n > GP_CAT_FILE_MAX ? -EFBIG : 0;
	fclose(f);
	if (rc) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path,
				 rc == -EFBIG ? "larger than 1 MiB: not a category table" : strerror(-rc));
		free(text);
		return rc;
	}
	text[n] = 0;
	if (memchr(text, 0, n))
		rc = gp_cat_fail(err, errlen, -EINVAL, path, 0, "holds a NUL byte: not a category table");
	else
		rc = gp_category_parse(text, path, SIZE_MAX, err, errlen);
	free(text);
	return rc;
}

int gp_category_load(const char *user_path, char *err, size_t errlen)
{
	gp_category_reset();
	int rc = user_path ? gp_cat_file(user_path, err, errlen) : 0;
	const char *env = getenv("GPUPHASE_CATEGORIES");
	if (!rc && env && *env)
		rc = gp_cat_file(env, err, errlen);
	if (rc)
		gp_category_reset();
	int d = gp_category_parse(gp_category_table_text, "report/core/categories.tsv", SIZE_MAX, rc ? NULL : err,
				  errlen);
	return rc ? rc : d;
}

uint8_t gp_category_of(const char *name, unsigned kinds)
{
	gp_cat_ensure();
	if (kinds & (GP_GKIND_COPY | GP_GKIND_SET))
		return GP_CAT_MEMORY;
	if (!(kinds & GP_GKIND_KERNEL) || !name)
		return GP_CAT_OTHER;
	for (size_t i = 0; i < gp_cat.n; i++)
		if (!regexec(&gp_cat.rules[i].re, name, 0, NULL, 0))
			return gp_cat.rules[i].cat;
	return GP_CAT_OTHER;
}

const char *gp_category_name(uint8_t cat)
{
	gp_cat_ensure();
	return cat >= 1 && cat <= gp_cat.ncats ? gp_cat.names[cat] : NULL;
}

uint8_t gp_category_count(void)
{
	gp_cat_ensure();
	return gp_cat.ncats;
}

void gp_category_sums(const struct gp_rep *rep, struct gp_category_sum *out)
{
	memset(out, 0, (GP_CAT_MAX + 1) * sizeof *out);
	for (size_t i = 0; i < rep->ngroups; i++) {
		const struct gp_rep_group *g = &rep->groups[i];
		struct gp_category_sum *s = &out[g->category <= GP_CAT_MAX ? g->category : GP_CAT_NONE];
		s->operators++;
		s->count += g->count;
		s->launch_ns += g->launch_ns;
		s->queue_ns += g->queue_ns;
		s->execute_ns += g->execute_ns;
		s->sync_ns += g->sync_ns;
	}
}

static uint64_t gp_cat_total(const struct gp_category_sum *s)
{
	return s->launch_ns + s->execute_ns + s->sync_ns;
}

size_t gp_category_order(const struct gp_category_sum *sums, uint8_t *ids)
{
	size_t n = 0;
	for (unsigned c = 1; c <= GP_CAT_MAX; c++) {
		if (!sums[c].operators)
			continue;
		size_t k = n++; /* insertion: at most 64 */
		while (k && gp_cat_total(&sums[ids[k - 1]]) < gp_cat_total(&sums[c])) {
			ids[k] = ids[k - 1];
			k--;
		}
		ids[k] = (uint8_t)c;
	}
	return n;
}
