/*
 * stages.c — the "Stages" section: the traced run cut into start-up (process
 * start -> first CUDA call), load (first CUDA call -> first kernel launch:
 * allocations and copies), warm-up (leading iterations whose duration has not
 * settled), steady state, and tear-down (end of the last kernel -> last
 * record), each with its time, share and what dominates it; when the program
 * marks its phases with top-level NVTX ranges (at most GP_STAGE_MAX_NVTX
 * distinct names covering at least half of the traced time), those name the
 * stages instead. Also states which stages the capture window covered.
 * Called by gp_xa_print on the report thread. docs/metrics.md "Stages".
 */
#include <stdlib.h>
#include <string.h>

#include "xa.h"

#define GP_STAGE_TOL 0.2       /* settled: within 20 % of the steady median   */
#define GP_STAGE_SETTLE 5      /* ... median of this many consecutive ones    */
#define GP_STAGE_MIN_ITERS 4   /* fewer iterations: no warm-up split          */
#define GP_STAGE_MAX_NVTX 8

struct gp_stage {
	const char *name;
	uint64_t start, end, time; /* time: covered time (sum for NVTX names)   */
	size_t count;              /* NVTX ranges of this name                   */
};

static int gp_stage_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Is t inside stage s? For NVTX stages: inside one of its ranges. */
static int gp_stage_has(const struct gp_xa *xa, const struct gp_stage *s, uint32_t nvtx_name, uint64_t t)
{
	if (nvtx_name == UINT32_MAX)
		return t >= s->start && t < s->end;
	for (size_t i = 0; i < xa->nranges; i++)
		if (xa->ranges[i].name == nvtx_name && t >= xa->ranges[i].start && t < xa->ranges[i].end)
			return 1;
	return 0;
}

/* "what dominates": the largest operator (launch + execute of ops starting in
 * the stage) and the largest other CUDA call (allocations, ...). */
static void gp_stage_dominant(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, const struct gp_stage *s,
			      uint32_t nvtx_name)
{
	double *grp = calloc(rep->ngroups ? rep->ngroups : 1, sizeof *grp);
	double *call = calloc(xa->nnames ? xa->nnames : 1, sizeof *call);
	if (!grp || !call)
		goto out;
	for (size_t i = 0; i < xa->nops; i++) {
		const struct gp_xa_op *op = &xa->ops[i];
		if (op->group < rep->ngroups && gp_stage_has(xa, s, nvtx_name, op->t0))
			grp[op->group] += (double)(op->launch_ns + op->execute_ns);
	}
	for (size_t i = 0; i < xa->ncalls; i++)
		if (xa->calls[i].name < xa->nnames && gp_stage_has(xa, s, nvtx_name, xa->calls[i].start))
			call[xa->calls[i].name] += (double)xa->calls[i].dur;
	size_t bg = 0, bc = 0;
	for (size_t g = 1; g < rep->ngroups; g++)
		if (grp[g] > grp[bg])
			bg = g;
	for (size_t c = 1; c < xa->nnames; c++)
		if (call[c] > call[bc])
			bc = c;
	char b1[32], b2[32];
	double gt = rep->ngroups ? grp[bg] : 0, ct = xa->nnames ? call[bc] : 0;
	if (gt <= 0 && ct <= 0) {
		fprintf(f, "host only (no CUDA work)");
	} else if (gt >= ct) {
		fprintf(f, "%s %s", rep->groups[bg].name, gp_xa_fmt_ns(gt, b1, sizeof b1));
		if (ct > 0)
			fprintf(f, ", then %s %s", xa->names[bc], gp_xa_fmt_ns(ct, b2, sizeof b2));
	} else {
		fprintf(f, "%s %s", xa->names[bc], gp_xa_fmt_ns(ct, b1, sizeof b1));
		if (gt > 0)
			fprintf(f, ", then %s %s", rep->groups[bg].name, gp_xa_fmt_ns(gt, b2, sizeof b2));
	}
out:
	free(grp);
	free(call);
}

/* First iteration index k from which the median duration of the next
 * GP_STAGE_SETTLE closed iterations stays within GP_STAGE_TOL of the median
 * of the last half (a median, so sporadic host stalls do not end or extend
 * the warm-up). */
static size_t gp_stage_settled(const struct gp_rep *rep, size_t n)
{
	uint64_t *d = malloc(n * sizeof *d);
	if (!d)
		return 0;
	size_t h = n / 2;
	for (size_t i = h; i < n; i++)
		d[i - h] = rep->iters[i].end - rep->iters[i].start;
	qsort(d, n - h, sizeof *d, gp_stage_cmp_u64);
	double ref = (double)d[(n - h - 1) / 2];
	size_t k = 0;
	for (; k + GP_STAGE_SETTLE <= n; k++) {
		uint64_t w[GP_STAGE_SETTLE];
		for (size_t j = 0; j < GP_STAGE_SETTLE; j++)
			w[j] = rep->iters[k + j].end - rep->iters[k + j].start;
		qsort(w, GP_STAGE_SETTLE, sizeof w[0], gp_stage_cmp_u64);
		double m = (double)w[GP_STAGE_SETTLE / 2];
		if (m >= ref * (1 - GP_STAGE_TOL) && m <= ref * (1 + GP_STAGE_TOL))
			break;
	}
	free(d);
	/* the median settles once most of the window has: move on over the
	 * window's leading iterations that are still slow */
	while (k < n && (double)(rep->iters[k].end - rep->iters[k].start) > ref * (1 + GP_STAGE_TOL))
		k++;
	return k < n ? k : n;
}

void gp_xa_print_stages(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, int md)
{
	uint64_t first_k = UINT64_MAX, last_k = 0;
	for (size_t i = 0; i < xa->nops; i++) {
		const struct gp_xa_op *op = &xa->ops[i];
		if (op->kind != GP_OP_KERNEL)
			continue;
		if (op->t0 < first_k)
			first_k = op->t0;
		if (op->has_gpu && op->gpu_end > last_k)
			last_k = op->gpu_end;
	}
	uint64_t t_end = xa->last_ts > rep->t_last ? xa->last_ts : rep->t_last;
	uint64_t t_start = xa->proc_start >= 0 && (uint64_t)xa->proc_start < rep->t_first ? (uint64_t)xa->proc_start
											      : rep->t_first;
	if (t_end <= t_start)
		return;
	fprintf(f, md ? "\n## Stages\n\n" : "\nStages\n");
	struct gp_stage st[GP_STAGE_MAX_NVTX + 8];
	uint32_t nv[GP_STAGE_MAX_NVTX + 8];
	size_t ns = 0;
	/* NVTX-named stages */
	uint32_t names[GP_STAGE_MAX_NVTX];
	size_t nn = 0;
	uint64_t covered = 0;
	int nvtx_ok = xa->nranges > 0;
	for (size_t i = 0; i < xa->nranges && nvtx_ok; i++) {
		size_t k = 0;
		while (k < nn && names[k] != xa->ranges[i].name)
			k++;
		if (k == nn) {
			if (nn == GP_STAGE_MAX_NVTX) {
				nvtx_ok = 0;
				break;
			}
			names[nn++] = xa->ranges[i].name;
		}
		covered += xa->ranges[i].end - xa->ranges[i].start;
	}
	if (nvtx_ok && (double)covered >= 0.5 * (double)(t_end - t_start)) {
		for (size_t k = 0; k < nn; k++) {
			struct gp_stage *s = &st[ns];
			memset(s, 0, sizeof *s);
			s->name = xa->names[names[k]];
			s->start = UINT64_MAX;
			for (size_t i = 0; i < xa->nranges; i++) {
				if (xa->ranges[i].name != names[k])
					continue;
				s->time += xa->ranges[i].end - xa->ranges[i].start;
				s->count++;
				if (xa->ranges[i].start < s->start)
					s->start = xa->ranges[i].start;
				if (xa->ranges[i].end > s->end)
					s->end = xa->ranges[i].end;
			}
			nv[ns++] = names[k];
		}
		fprintf(f, "%sstages named by the program's top-level NVTX ranges\n", md ? "" : "  ");
	} else {
		uint64_t fa = xa->first_api != UINT64_MAX ? xa->first_api : t_start;
		uint64_t fk = first_k != UINT64_MAX ? first_k : t_end, lk = last_k ? last_k : fk;
		if (fa > t_start && xa->proc_start >= 0)
			st[ns++] = (struct gp_stage){ "start-up", t_start, fa, fa - t_start, 0 };
		if (fk > fa)
			st[ns++] = (struct gp_stage){ "load", fa, fk, fk - fa, 0 };
		/* iterations inside the compute part */
		size_t n = 0;
		while (n < rep->niters && !rep->iters[n].open)
			n++;
		uint64_t settle_t = fk;
		if (n >= GP_STAGE_MIN_ITERS) {
			size_t k = gp_stage_settled(rep, n);
			if (k > 0 && k < n) {
				settle_t = rep->iters[k].start > fk ? rep->iters[k].start : fk;
				st[ns++] = (struct gp_stage){ "warm-up", fk, settle_t, settle_t - fk, k };
			}
		}
		if (lk > settle_t)
			st[ns++] = (struct gp_stage){ "steady", settle_t, lk, lk - settle_t, 0 };
		if (t_end > lk && lk > fa)
			st[ns++] = (struct gp_stage){ "tear-down", lk, t_end, t_end - lk, 0 };
		for (size_t i = 0; i < ns; i++)
			nv[i] = UINT32_MAX;
	}
	char b1[32];
	double total = (double)(t_end - t_start);
	for (size_t i = 0; i < ns; i++) {
		const struct gp_stage *s = &st[i];
		fprintf(f, "%s%-12s %10s %5.1f%%", md ? "- " : "  ", s->name, gp_xa_fmt_ns((double)s->time, b1, sizeof b1),
			100.0 * (double)s->time / total);
		if (nv[i] != UINT32_MAX)
			fprintf(f, " (%zu ranges)", s->count);
		else if (!strcmp(s->name, "warm-up"))
			fprintf(f, " (%zu iterations)", s->count);
		fprintf(f, "  dominated by: ");
		if (!strcmp(s->name, "start-up"))
			fprintf(f, "host code before the first CUDA call");
		else
			gp_stage_dominant(f, xa, rep, s, nv[i]);
		fprintf(f, "\n");
	}
	/* which stages the capture window covered */
	fprintf(f, "%swindow %s covered:", md ? "- " : "  ", gp_xa_fmt_ns((double)rep->wall_ns, b1, sizeof b1));
	size_t nc = 0;
	for (size_t i = 0; i < ns; i++) {
		uint64_t a = st[i].start > rep->t_first ? st[i].start : rep->t_first;
		uint64_t b = st[i].end < rep->t_last ? st[i].end : rep->t_last;
		if (b > a && nv[i] == UINT32_MAX && (double)(b - a) >= 0.01 * (double)(st[i].end - st[i].start)) {
			fprintf(f, "%s %s (%.0f%%)", nc++ ? "," : "", st[i].name,
				100.0 * (double)(b - a) / (double)(st[i].end - st[i].start));
		} else if (b > a && nv[i] != UINT32_MAX) {
			fprintf(f, "%s %s", nc++ ? "," : "", st[i].name);
		}
	}
	if (!nc)
		fprintf(f, " none of the stages");
	if (xa->win_iter > 0)
		fprintf(f, "; capture began at iteration %lld of the run (earlier stages not traced)",
			(long long)xa->win_iter);
	fprintf(f, "\n");
}
