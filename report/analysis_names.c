/*
 * analysis_names.c — the analysis core's lookups (analysis.h,
 * analysis_int.h): strings by trace id and by canonical index (strtab.h),
 * API names, the printed short name of a kernel (collector/kernel_name.h), the call site
 * of a stack, a thread's innermost NVTX range. The bottom of the core: it
 * calls nothing of the report above the string table, so that the join,
 * the folding and sync attribution can all use it. Report thread only.
 */
#include <stdio.h>

#include "analysis_int.h"

/* Intern text; its canonical index or GP_NONE32 (failure recorded). */
uint32_t gp_an_canon(struct gp_an *an, const char *text, size_t len)
{
	uint32_t c;
	gp_an_fail(an, gp_strtab_intern(an->strings, text, len, &c));
	return c;
}

uint32_t gp_an_str(const struct gp_an *an, uint32_t id)
{
	return gp_strtab_of_id(an->strings, id);
}

const char *gp_an_string(const struct gp_an *an, uint32_t id)
{
	return gp_strtab_text(an->strings, gp_an_str(an, id));
}

uint32_t gp_an_canonical(const struct gp_an *an, uint32_t id)
{
	return gp_an_str(an, id);
}

struct gp_strtab *gp_an_strings(const struct gp_an *an)
{
	return an->strings;
}

const char *gp_an_api_name(const struct gp_an *an, uint32_t domain, uint32_t api_id)
{
	uint64_t *v = gp_map_get(&an->api_names, ((uint64_t)domain << 16) | api_id);
	return v ? gp_an_string(an, (uint32_t)*v) : NULL;
}

/* The operator table's short name of canonical string c (collector/kernel_name.h). */
const char *gp_an_short(struct gp_an *an, uint32_t c)
{
	if (c != GP_NONE32 && an->strings->strs[c].shortname) /* computed before */
		return an->strings->strs[c].shortname;
	int err = 0;
	const char *s = gp_strtab_short(an->strings, c, &err);
	gp_an_fail(an, err);
	return s;
}

/* Innermost symbolised frame of a stack, written into buf; NULL if none. */
const char *gp_an_callsite(const struct gp_an *an, uint32_t stack, char *buf, size_t n)
{
	uint64_t *v = stack ? gp_map_get(&an->stacks, stack) : NULL;
	if (!v || !(*v & 0xffff))
		return NULL;
	uint64_t pc = an->pcs[*v >> 16];
	uint64_t *sym = gp_map_get(&an->symbols, pc);
	const char *s = sym ? gp_an_string(an, (uint32_t)*sym) : NULL;
	if (s)
		return s;
	snprintf(buf, n, "0x%llx", (unsigned long long)pc);
	return buf;
}

uint32_t gp_an_nvtx_top(const struct gp_an *an, uint32_t tid)
{
	uint64_t *v = gp_map_get(&an->nvtx, tid);
	if (!v)
		return GP_NONE32;
	struct gp_nvtx_stack *s = &an->nvtx_stacks[*v];
	return s->n ? s->names[s->n - 1] : GP_NONE32;
}

