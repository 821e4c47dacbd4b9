/*
 * analysis_names.c — the analysis core's lookups (analysis.h,
 * analysis_int.h): strings by trace id and by canonical index (strtab.h),
 * API names, the printed short name of a kernel (trace/kernel_name.h), the call site
 * of a stack (its innermost actionable frame) and its full text, a thread's innermost NVTX range. The bottom of the core: it
 * calls nothing of the report above the string table, so that the join,
 * the folding and sync attribution can all use it. Report thread only.
 */
#include <stdio.h>
#include <string.h>

#include "analysis_int.h"
#include "report/util/fmt.h"

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

/* The operator table's short name of canonical string c (trace/kernel_name.h). */
const char *gp_an_short(struct gp_an *an, uint32_t c)
{
	if (c != GP_NONE32 && an->strings->strs[c].shortname) /* computed before */
		return an->strings->strs[c].shortname;
	int err = 0;
	const char *s = gp_strtab_short(an->strings, c, &err);
	gp_an_fail(an, err);
	return s;
}

/* One frame's text: the file's own name (symbolize.c), else the capture's
 * (GP_REC_SYMBOL: dladdr, or a Python frame's "file.py:LINE (function)"),
 * else "0x..." written into buf. */
const char *gp_an_frame_name(const struct gp_an *an, uint64_t pc, char *buf, size_t n)
{
	uint64_t *v = gp_map_get(&an->symnames, pc);
	const char *s = v ? gp_strtab_text(an->strings, (uint32_t)*v) : NULL;
	if (s)
		return s;
	v = gp_map_get(&an->symbols, pc);
	s = v ? gp_an_string(an, (uint32_t)*v) : NULL;
	if (s)
		return s;
	snprintf(buf, n, "0x%llx", (unsigned long long)pc);
	return buf;
}

/* A frame inside the CUDA libraries themselves, or nvcc's launch stub:
 * never what a user changes. */
static int gp_an_frame_in_cuda(const char *name)
{
	/* nvcc's generated launch stub of a <<<...>>> launch is CUDA's too: the
	 * launch is written in its caller */
	return strstr(name, "/libcudart.so") || strstr(name, "(libcudart.so") || strstr(name, "/libcuda.so") ||
	       strstr(name, "/libcupti.so") || !strncmp(name, "__device_stub__", 15);
}

/* The stack's innermost actionable frame: its first Python frame (they come
 * first), else its first frame outside the CUDA libraries (else its first). */
const char *gp_an_callsite(const struct gp_an *an, uint32_t stack, char *buf, size_t n)
{
	uint64_t *v = stack ? gp_map_get(&an->stacks, stack) : NULL;
	if (!v || !(*v & 0xffff))
		return NULL;
	const uint64_t *pcs = &an->pcs[*v >> 16];
	uint32_t depth = (uint32_t)(*v & 0xffff);
	const char *first = gp_an_frame_name(an, pcs[0], buf, n);
	if (GP_PC_IS_PYFRAME(pcs[0]) || !gp_an_frame_in_cuda(first))
		return first;
	for (uint32_t i = 1; i < depth; i++) {
		if (GP_PC_IS_PYFRAME(pcs[i]))
			continue;
		const char *s = gp_an_frame_name(an, pcs[i], buf, n);
		if (!gp_an_frame_in_cuda(s))
			return s;
	}
	return gp_an_frame_name(an, pcs[0], buf, n);
}

/* The whole stack as text, one frame a line (innermost first, Python frames
 * before native ones); into out (NUL-terminated, cut at n); 0 if unknown. */
int gp_an_stack_text(const struct gp_an *an, uint32_t stack, char *out, size_t n)
{
	uint64_t *v = stack ? gp_map_get(&an->stacks, stack) : NULL;
	if (!v || !(*v & 0xffff) || !n)
		return 0;
	const uint64_t *pcs = &an->pcs[*v >> 16];
	uint32_t depth = (uint32_t)(*v & 0xffff);
	size_t at = 0;
	out[0] = 0;
	for (uint32_t i = 0; i < depth && at + 1 < n; i++) {
		char b[32], e[1024]; /* frames one a line: a frame's own newline escaped (fmt.h gp_fmt_name) */
		int k = snprintf(out + at, n - at, "%s%s", i ? "\n" : "",
				 gp_fmt_name_buf(gp_an_frame_name(an, pcs[i], b, sizeof b), 0, e, sizeof e));
		if (k < 0)
			break;
		at += (size_t)k < n - at ? (size_t)k : n - at - 1;
	}
	return 1;
}

uint32_t gp_an_nvtx_top(const struct gp_an *an, uint32_t tid)
{
	uint64_t *v = gp_map_get(&an->nvtx, tid);
	if (!v)
		return GP_NONE32;
	struct gp_nvtx_stack *s = &an->nvtx_stacks[*v];
	return s->n ? s->names[s->n - 1] : GP_NONE32;
}


uint8_t gp_an_nvtx_phase(const struct gp_an *an, uint32_t tid)
{
	if (an->cfg.group_by != GP_GROUP_PHASE)
		return 0;
	uint64_t *v = gp_map_get(&an->nvtx, tid);
	if (!v)
		return 0;
	const struct gp_nvtx_stack *s = &an->nvtx_stacks[*v];
	for (size_t i = s->n; i-- > 0;) {
		const char *t = gp_strtab_text(an->strings, s->names[i]);
		if (!t)
			continue;
		if (strstr(t, "Backward") || strstr(t, "backward"))
			return GP_PHASE_BACKWARD;
		if (strstr(t, "Optimizer") || strstr(t, "optimizer"))
			return GP_PHASE_OPTIMIZER;
	}
	return 0;
}
