/*
 * stages.c — the "Stages" section: the traced run cut into start-up (process
 * start -> first CUDA call), load (first CUDA call -> first kernel launch:
 * allocations and copies), warm-up (leading iterations whose duration has not
 * settled), steady state, and tear-down (end of the last kernel -> last
 * record), each with its time, share and what dominates it; when the program
 * marks its phases with top-level NVTX ranges (at most 8 distinct names
 * covering at least half of the traced time), those name the stages instead.
 * Also states which stages the capture window covered.
 *
 * gp_xa_stages_prepare runs after pass 1 (edges and iteration marks known),
 * so that pass 2 can fold each op and call into its stage; the print runs
 * after finish; gp_xa_json_stages writes the same numbers as a JSON object
 * ("stages", docs/report-json.md). Report thread only. docs/metrics.md §15.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xa.h"

#define GP_STAGE_TOL 0.2       /* settled: within 20 % of the steady median   */
#define GP_STAGE_SETTLE 5      /* ... median of this many consecutive ones    */
#define GP_STAGE_MIN_ITERS 4   /* fewer iterations: no warm-up split          */

static int gp_stage_cmp_range(const void *a, const void *b)
{
	const struct gp_xa_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int gp_stage_cmp_mark(const void *a, const void *b)
{
	const struct gp_xa_mark *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/*
 * Iteration starts from the marks (the core's rule, docs/metrics.md §7: the
 * first mark of each iteration number starts it). Returns how many; starts
 * in *out (malloc'd), iteration k closed when k + 1 < count.
 */
static size_t gp_stage_iters(struct gp_xa *xa, uint64_t **out)
{
	if (xa->nmarks) /* qsort(NULL, 0) is undefined */
		qsort(xa->marks, xa->nmarks, sizeof *xa->marks, gp_stage_cmp_mark);
	uint64_t *s = malloc((xa->nmarks ? xa->nmarks : 1) * sizeof *s);
	int64_t *num = malloc((xa->nmarks ? xa->nmarks : 1) * sizeof *num);
	size_t n = 0;
	struct gp_map seen = { 0 };
	for (size_t i = 0; s && num && i < xa->nmarks; i++) {
		if (gp_map_get(&seen, (uint64_t)xa->marks[i].iter))
			continue;
		gp_map_put(&seen, (uint64_t)xa->marks[i].iter, 1);
		num[n] = xa->marks[i].iter;
		s[n++] = xa->marks[i].ts;
	}
	gp_map_free(&seen);
	/* classes of the closed iterations for the outlier explanations (trends.c):
	 * the core's rule (docs/metrics.md §7), from the same marks */
	if (s && num && n >= 4) {
		uint64_t *d = malloc((n - 1) * sizeof *d);
		if (d) {
			for (size_t i = 0; i + 1 < n; i++)
				d[i] = s[i + 1] - s[i];
			qsort(d, n - 1, sizeof *d, gp_stats_cmp_u64);
			double p50 = (double)d[(n - 1 + 1) / 2 - 1]; /* nearest rank: ceil(0.5 n) */
			free(d);
			for (size_t i = 0; i + 1 < n; i++) {
				int out = (double)(s[i + 1] - s[i]) > xa->outlier_factor * p50;
				gp_map_put(&xa->iter_class, (uint64_t)num[i], out ? 2 : 1);
				xa->nnormal += !out;
			}
		}
	}
	free(num);
	*out = s;
	return n;
}

/* First iteration k from which the median duration of the next
 * GP_STAGE_SETTLE closed iterations is within GP_STAGE_TOL of the median of
 * the last half (a median, so sporadic host stalls neither end nor extend the
 * warm-up), then moved on over leading iterations still slower than that. */
static size_t gp_stage_settled(const uint64_t *d, size_t n)
{
	uint64_t *s = malloc(n * sizeof *s);
	if (!s)
		return 0;
	size_t h = n / 2;
	memcpy(s, d + h, (n - h) * sizeof *s);
	qsort(s, n - h, sizeof *s, gp_stats_cmp_u64);
	double ref = (double)s[(n - h - 1) / 2];
	free(s);
	size_t k = 0;
	for (; k + GP_STAGE_SETTLE <= n; k++) {
		uint64_t w[GP_STAGE_SETTLE];
		memcpy(w, d + k, sizeof w);
		qsort(w, GP_STAGE_SETTLE, sizeof w[0], gp_stats_cmp_u64);
		double m = (double)w[GP_STAGE_SETTLE / 2];
		if (m >= ref * (1 - GP_STAGE_TOL) && m <= ref * (1 + GP_STAGE_TOL))
			break;
	}
	while (k < n && (double)d[k] > ref * (1 + GP_STAGE_TOL))
		k++;
	return k;
}

static void gp_stage_add(struct gp_xa *xa, const char *name, uint64_t a, uint64_t b, size_t count)
{
	if (b <= a || xa->nstages >= GP_XA_MAX_STAGES)
		return;
	xa->stages[xa->nstages++] = (struct gp_xa_stage){ name, a, b, b - a, count, UINT32_MAX };
}

void gp_xa_stages_prepare(struct gp_xa *xa)
{
	xa->nstages = 0;
	uint64_t *starts; /* iterations (and their classes for trends.c) */
	size_t ni = gp_stage_iters(xa, &starts), settle_k = 0;
	if (xa->t_end <= xa->t_start) {
		free(starts);
		return;
	}
	/* NVTX-named stages */
	uint64_t covered = 0;
	for (size_t i = 0; i < xa->nranges; i++)
		covered += xa->ranges[i].end - xa->ranges[i].start;
	if (xa->nranges && !xa->ranges_off && (double)covered >= 0.5 * (double)(xa->t_end - xa->t_start)) {
		qsort(xa->ranges, xa->nranges, sizeof *xa->ranges, gp_stage_cmp_range);
		for (size_t i = 0; i < xa->nranges; i++) {
			const struct gp_xa_range *r = &xa->ranges[i];
			size_t k = 0;
			while (k < xa->nstages && xa->stages[k].nvtx != r->name)
				k++;
			if (k == xa->nstages) {
				if (k == GP_XA_MAX_STAGES)
					continue;
				xa->stages[xa->nstages++] = (struct gp_xa_stage){ xa->names[r->name], r->start, r->end, 0, 0,
										  r->name };
			}
			struct gp_xa_stage *s = &xa->stages[k];
			s->time += r->end - r->start;
			s->count++;
			if (r->start < s->start)
				s->start = r->start;
			if (r->end > s->end)
				s->end = r->end;
		}
		xa->nvtx_stages = 1;
		free(starts);
		return;
	}
	uint64_t fa = xa->first_api != UINT64_MAX ? xa->first_api : xa->t_start;
	uint64_t fk = xa->first_launch != UINT64_MAX ? xa->first_launch : xa->t_end;
	uint64_t lk = xa->last_kernel > fk ? xa->last_kernel : fk;
	/* a window that began after iteration 0: what came before is not traced,
	 * but the iteration marks (written outside the window too) still tell
	 * where the warm-up settled */
	int windowed = xa->win_iter > 0 && xa->win_start > xa->t_start;
	uint64_t from = windowed ? xa->win_start : fk;
	if (windowed) {
		gp_stage_add(xa, "before window", xa->t_start, xa->win_start, 0);
	} else {
		if (xa->proc_start >= 0)
			gp_stage_add(xa, "start-up", xa->t_start, fa, 0);
		gp_stage_add(xa, "load", fa, fk, 0);
	}
	uint64_t settle_t = from;
	if (starts && ni >= GP_STAGE_MIN_ITERS + 1) {
		size_t nc = ni - 1; /* closed iterations */
		uint64_t *d = malloc(nc * sizeof *d);
		if (d) {
			for (size_t i = 0; i < nc; i++)
				d[i] = starts[i + 1] - starts[i];
			settle_k = gp_stage_settled(d, nc);
			free(d);
			if (settle_k == 0 || settle_k >= nc)
				settle_k = 0;
			else if (starts[settle_k] > from)
				settle_t = starts[settle_k];
		}
	}
	free(starts);
	xa->settled_iter = settle_k;
	if (settle_t > from)
		gp_stage_add(xa, "warm-up", from, settle_t, settle_k);
	if (lk < settle_t)
		lk = settle_t;
	gp_stage_add(xa, "steady", settle_t, lk, 0);
	if (lk > fa)
		gp_stage_add(xa, "tear-down", lk, xa->t_end, 0);
}

int gp_xa_stage_of(const struct gp_xa *xa, uint64_t t)
{
	if (xa->nvtx_stages) {
		/* ranges sorted by start: the last starting at or before t, or one
		 * of the few before it (other threads' ranges may interleave) */
		size_t lo = 0, hi = xa->nranges;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (xa->ranges[mid].start <= t)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t i = lo, back = 0; i-- > 0 && back < 8; back++) {
			const struct gp_xa_range *r = &xa->ranges[i];
			if (t < r->end)
				for (size_t k = 0; k < xa->nstages; k++)
					if (xa->stages[k].nvtx == r->name)
						return (int)k;
		}
		return -1;
	}
	for (size_t k = 0; k < xa->nstages; k++)
		if (t >= xa->stages[k].start && t < xa->stages[k].end)
			return (int)k;
	return -1;
}

/* "what dominates": the largest operator (launch + execute of ops starting in
 * the stage, group index in *g, UINT32_MAX = none) and the largest other
 * CUDA call (names index in *c, UINT32_MAX = none). */
static void gp_stage_dom_find(const struct gp_xa *xa, const struct gp_rep *rep, size_t st, uint32_t *g,
			      uint64_t *gbest, uint32_t *c, uint64_t *cbest)
{
	uint64_t key, v;
	size_t pos = 0;
	*g = *c = UINT32_MAX;
	*gbest = *cbest = 0;
	while (gp_map_next(&xa->stage_grp, &pos, &key, &v))
		if (key >> 32 == st && v > *gbest && (uint32_t)key < rep->ngroups)
			*gbest = v, *g = (uint32_t)key;
	pos = 0;
	while (gp_map_next(&xa->stage_call, &pos, &key, &v))
		if (key >> 32 == st && v > *cbest && (uint32_t)key < xa->nnames)
			*cbest = v, *c = (uint32_t)key;
}

/* The "dominated by" text of stage st (one line's tail, no newline). */
static void gp_stage_dominant(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, size_t st)
{
	const struct gp_xa_stage *s = &xa->stages[st];
	if (!strcmp(s->name, "start-up") && !xa->nvtx_stages) {
		fprintf(f, "host code before the first CUDA call");
		return;
	}
	if (!strcmp(s->name, "before window") && !xa->nvtx_stages) {
		fprintf(f, "not traced (capture began at iteration %lld%s)", (long long)xa->win_iter,
			xa->settled_iter && xa->settled_iter <= (size_t)xa->win_iter
				? "; iteration marks show the warm-up settled before it"
				: "");
		return;
	}
	uint64_t gbest, cbest;
	uint32_t g, c;
	gp_stage_dom_find(xa, rep, st, &g, &gbest, &c, &cbest);
	char b1[32];
	const char *gn = g != UINT32_MAX ? rep->groups[g].name : NULL, *cn = c != UINT32_MAX ? xa->names[c] : NULL;
	if (!gn && !cn) {
		fprintf(f, "host only (no CUDA work)");
		return;
	}
	if (!cn || (gn && gbest >= cbest)) { /* the larger first */
		fprintf(f, "%s %s", gn, gp_fmt_ns((double)gbest, b1, sizeof b1));
		if (cn)
			fprintf(f, ", then %s %s", cn, gp_fmt_ns((double)cbest, b1, sizeof b1));
	} else {
		fprintf(f, "%s %s", cn, gp_fmt_ns((double)cbest, b1, sizeof b1));
		if (gn)
			fprintf(f, ", then %s %s", gn, gp_fmt_ns((double)gbest, b1, sizeof b1));
	}
}

/* How much of stage i the capture window [t_first, t_last] holds; *covered
 * says whether the window line names it (any overlap for NVTX stages, at
 * least 1 % of the stage otherwise; never "before window"). */
static uint64_t gp_stage_window(const struct gp_xa *xa, const struct gp_rep *rep, size_t i, int *covered)
{
	const struct gp_xa_stage *s = &xa->stages[i];
	uint64_t a = s->start > rep->t_first ? s->start : rep->t_first;
	uint64_t b = s->end < rep->t_last ? s->end : rep->t_last;
	*covered = 0;
	if (b <= a)
		return 0;
	if (strcmp(s->name, "before window"))
		*covered = xa->nvtx_stages || (double)(b - a) >= 0.01 * (double)(s->end - s->start);
	return b - a;
}

void gp_xa_print_stages(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, int md)
{
	if (!xa->nstages)
		return;
	fprintf(f, md ? "\n## Stages\n\n" : "\nStages\n");
	if (xa->nvtx_stages)
		fprintf(f, "%sstages named by the program's top-level NVTX ranges\n", md ? "" : "  ");
	char b1[32];
	double total = (double)(xa->t_end - xa->t_start);
	for (size_t i = 0; i < xa->nstages; i++) {
		const struct gp_xa_stage *s = &xa->stages[i];
		fprintf(f, "%s%-12s %10s %5.1f%%", md ? "- " : "  ", s->name, gp_fmt_ns((double)s->time, b1, sizeof b1),
			100.0 * (double)s->time / total);
		if (xa->nvtx_stages)
			fprintf(f, " (%zu ranges)", s->count);
		else if (!strcmp(s->name, "warm-up"))
			fprintf(f, " (%zu iterations)", s->count);
		fprintf(f, "  dominated by: ");
		gp_stage_dominant(f, xa, rep, i);
		fprintf(f, "\n");
	}
	/* which stages the capture window covered */
	fprintf(f, "%swindow %s covered:", md ? "- " : "  ", gp_fmt_ns((double)rep->wall_ns, b1, sizeof b1));
	size_t nc = 0;
	for (size_t i = 0; i < xa->nstages; i++) {
		const struct gp_xa_stage *s = &xa->stages[i];
		int cov;
		uint64_t in = gp_stage_window(xa, rep, i, &cov);
		if (!cov)
			continue;
		if (xa->nvtx_stages)
			fprintf(f, "%s %s", nc++ ? "," : "", s->name);
		else
			fprintf(f, "%s %s (%.0f%%)", nc++ ? "," : "", s->name,
				100.0 * (double)in / (double)(s->end - s->start));
	}
	if (!nc)
		fprintf(f, " none of the stages");
	if (xa->win_iter > 0)
		fprintf(f, "; capture began at iteration %lld of the run (earlier stages not traced)",
			(long long)xa->win_iter);
	fprintf(f, "\n");
}

/* JSON: {"name", "ns"} of a dominant operator or call, or null. */
static void gp_stage_json_dom(FILE *f, const char *name, uint64_t ns)
{
	if (!name) {
		fputs("null", f);
		return;
	}
	fputs("{\"name\": ", f);
	gp_fmt_json_str(f, name);
	fprintf(f, ", \"ns\": %llu}", (unsigned long long)ns);
}

void gp_xa_json_stages(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep)
{
	uint64_t traced = xa->t_end > xa->t_start ? xa->t_end - xa->t_start : 0;
	fprintf(f, "{\"named_by\": \"%s\", \"traced_ns\": %llu, \"settled_after_iterations\": %zu, \"items\": [",
		xa->nvtx_stages ? "nvtx" : "run", (unsigned long long)traced, xa->settled_iter);
	for (size_t i = 0; i < xa->nstages; i++) {
		const struct gp_xa_stage *s = &xa->stages[i];
		int cov;
		uint64_t in = gp_stage_window(xa, rep, i, &cov);
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		gp_fmt_json_str(f, s->name);
		fprintf(f, ", \"start_ns\": %llu, \"end_ns\": %llu, \"time_ns\": %llu, \"share\": ",
			(unsigned long long)s->start, (unsigned long long)s->end, (unsigned long long)s->time);
		gp_fmt_json_num(f, traced ? (double)s->time / (double)traced : 0);
		fprintf(f, ", \"count\": %zu, \"dominant_operator\": ", s->count);
		/* start-up and "before window" are not CUDA work: no dominant op */
		int host = !xa->nvtx_stages && (!strcmp(s->name, "start-up") || !strcmp(s->name, "before window"));
		uint64_t gbest = 0, cbest = 0;
		uint32_t g = UINT32_MAX, c = UINT32_MAX;
		if (!host)
			gp_stage_dom_find(xa, rep, i, &g, &gbest, &c, &cbest);
		gp_stage_json_dom(f, g != UINT32_MAX ? rep->groups[g].name : NULL, gbest);
		fputs(", \"dominant_call\": ", f);
		gp_stage_json_dom(f, c != UINT32_MAX ? xa->names[c] : NULL, cbest);
		fputs(", \"dominated_by\": ", f);
		char *buf = NULL;
		size_t len = 0;
		FILE *mf = open_memstream(&buf, &len);
		if (mf) {
			gp_stage_dominant(mf, xa, rep, i);
			fclose(mf);
		}
		gp_fmt_json_str(f, buf ? buf : "");
		free(buf);
		fprintf(f, ", \"window_ns\": %llu, \"window_share\": ", (unsigned long long)in);
		gp_fmt_json_num(f, s->end > s->start ? (double)in / (double)(s->end - s->start) : 0);
		fprintf(f, ", \"covered\": %s}", cov ? "true" : "false");
	}
	fprintf(f, "],\n   \"window\": {\"wall_ns\": %llu, \"covered\": [", (unsigned long long)rep->wall_ns);
	size_t nc = 0;
	for (size_t i = 0; i < xa->nstages; i++) {
		int cov;
		gp_stage_window(xa, rep, i, &cov);
		if (!cov)
			continue;
		fputs(nc++ ? ", " : "", f);
		gp_fmt_json_str(f, xa->stages[i].name);
	}
	fputs("], \"began_at_iteration\": ", f);
	if (xa->win_iter > 0)
		fprintf(f, "%lld", (long long)xa->win_iter);
	else
		fputs("null", f);
	fputs("}}", f);
}
