/*
 * crossrank.c — the "crossrank" analysis: the ranks of one job on one time
 * line, and what that time line shows. A plug-in of registry.h with a
 * merge: for each trace it keeps what the merge needs; given every trace of
 * a job (the pipeline's merged report, when the traces are one job), the
 * merge
 *   1. puts every trace on the wall clock through its clock pairs
 *      (GP_REC_CLOCK_PAIR, clockmap.h), or the header's start pair when it
 *      has none;
 *   2. refines each rank's offset to the reference rank (rank 0, else the
 *      first trace) so that the ends of matching NCCL collectives line up
 *      (a collective ends on every rank when the last rank's data has
 *      arrived, so its ends agree to the link latency), and gives the
 *      residual disagreement per rank, before and after;
 *   3. measures the iteration skew: per iteration number, the spread of the
 *      iteration's end across ranks, and which rank ends last;
 *   4. measures each rank's collective wait: per matching collective, the
 *      time its NCCL kernel ran before the last rank's matching kernel
 *      started (time spent waiting for the slowest rank), and which rank
 *      arrived last.
 * docs/metrics.md §9 defines the numbers.
 *
 * Per trace, bounded whatever the trace's length (what its partial results
 * carry: gp_cr_save / gp_cr_load): the header's rank, host, path and start pair; the
 * clock pairs (at most GP_CLOCKMAP_MAX); the NCCL kernels (names starting
 * ncclKernel or ncclDevKernel) as a sample of at most GP_CR_MAX_COLL, each
 * with seq = its place among the trace's NCCL kernels in arrival order —
 * when the sample is full only every other seq is kept and the stride
 * doubles, so every rank keeps the same seqs; the closed iterations' ends;
 * counts (NCCL kernels and their time, wall-clock steps).
 *
 * Matching (each rank against the reference; every rank issues the same
 * collectives in the same order when one communicator spans all ranks, as
 * data parallelism does, but a trace may lack some: a CUPTI buffer drop, a
 * trace begun a collective later): collmatch.c pairs the two sequences of
 * kept kernels around what one side lost. Pairs whose names differ are
 * counted and left out, and offsets come from medians, so a few mismatches
 * move nothing. The collective wait compares the kernels matched with the
 * reference's.
 *
 * Report thread only. Merged state memory: the per-rank results, and for
 * the skew one entry per (rank, iteration).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "report/analyses/collmatch.h"
#include "report/util/clockmap.h"
#include "report/util/fmt.h"

#define GP_CR_MAX_COLL 8192u /* NCCL kernels kept per trace (a sample beyond) */
#define GP_CR_MIN_MATCH GP_COLL_MIN_PAIRS /* matched collectives needed to refine an offset */

struct gp_cr_coll {
	uint64_t seq, start, end;
	const char *name; /* a text of the trace's string table */
};

struct gp_cr_iter {
	int64_t iter;
	uint64_t end;
};

/* One rank's results (merged state). */
struct gp_cr_rank {
	const char *path, *rank, *host; /* the trace state's strings */
	const char *clock;              /* "pairs", "header" or "none" */
	size_t pairs;
	uint32_t pair_width;
	uint64_t steps;
	int64_t raw_offset_pairs, raw_offset, refinement;
	int refined;
	int64_t match_lag;
	uint64_t matched, names_differ, unmatched;
	int64_t resid_pairs_p50, resid_p50, resid_p95; /* -1: not measured */
	uint64_t iters, iters_last, late_sum;
	uint64_t nccl_kernels, nccl_ns, coll_compared, wait_ns, coll_last;
};

struct gp_crossrank {
	int err;
	/* per trace */
	char *path, *rank, *host;
	uint64_t start_wall, start_clock;
	struct gp_clockmap clocks;
	struct gp_cr_coll *coll;
	size_t ncoll, capcoll;
	uint64_t nccl_seen, nccl_ns;
	uint32_t stride_log;
	struct gp_cr_iter *iters;
	size_t niters;
	uint64_t steps;
	/* merged: the job */
	int merged;
	size_t nranks, ref;
	struct gp_cr_rank *ranks;
	uint64_t stride;
	uint64_t skew_iters, skew_p50, skew_p95, skew_max;
	int64_t skew_max_iter;
	uint64_t coll_compared;
};

static void *gp_cr_create(const struct gp_analysis_env *env)
{
	(void)env;
	return calloc(1, sizeof(struct gp_crossrank));
}

static void gp_cr_destroy(void *p)
{
	struct gp_crossrank *c = p;
	free(c->path);
	free(c->rank);
	free(c->host);
	gp_clockmap_free(&c->clocks);
	free(c->coll);
	free(c->iters);
	free(c->ranks);
	free(c);
}

static int gp_cr_record(void *p, const struct gp_an *an, const struct gp_an_rec *v)
{
	struct gp_crossrank *c = p;
	(void)an;
	if (v->type == GP_REC_STATUS && v->status.kind == GP_STATUS_REALTIME_STEP)
		c->steps++;
	return 0;
}

static int gp_cr_prepare(void *p, const struct gp_an *an)
{
	struct gp_crossrank *c = p;
	return gp_clockmap_copy(&c->clocks, gp_an_clockmap(an));
}

static int gp_cr_is_nccl(const char *name)
{
	return name && (!strncmp(name, "ncclKernel", 10) || !strncmp(name, "ncclDevKernel", 13));
}

static void gp_cr_op(void *p, const struct gp_an_op *op)
{
	struct gp_crossrank *c = p;
	if (op->kind != GP_OP_KERNEL || !op->has_gpu || op->gpu_end < op->gpu_start || !gp_cr_is_nccl(op->name))
		return;
	uint64_t seq = c->nccl_seen++;
	c->nccl_ns += op->gpu_end - op->gpu_start;
	if (seq & ((1ull << c->stride_log) - 1))
		return;
	if (c->ncoll == GP_CR_MAX_COLL) { /* full: keep every other seq from now on */
		c->stride_log++;
		size_t o = 0;
		for (size_t i = 0; i < c->ncoll; i++)
			if (!(c->coll[i].seq & ((1ull << c->stride_log) - 1)))
				c->coll[o++] = c->coll[i];
		c->ncoll = o;
		if (seq & ((1ull << c->stride_log) - 1))
			return;
	}
	if (GP_AN_GROW(c->coll, c->ncoll, c->capcoll)) {
		c->err = -ENOMEM;
		return;
	}
	c->coll[c->ncoll++] = (struct gp_cr_coll){ .seq = seq, .start = op->gpu_start, .end = op->gpu_end,
						   .name = op->name };
}

static const char *gp_cr_kv(const struct gp_rep *r, const char *key)
{
	for (size_t i = 0; i < r->nkv; i++)
		if (r->kv[i].key && !strcmp(r->kv[i].key, key))
			return r->kv[i].value;
	return NULL;
}

static char *gp_cr_dup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int gp_cr_finish(void *p, const struct gp_an *an, const struct gp_rep *rep)
{
	struct gp_crossrank *c = p;
	(void)an;
	if (c->err)
		return c->err;
	const char *rank = gp_cr_kv(rep, "rank"), *host = gp_cr_kv(rep, "host");
	c->path = gp_cr_dup(rep->path);
	c->rank = gp_cr_dup(rank);
	c->host = gp_cr_dup(host);
	if ((rep->path && !c->path) || (rank && !c->rank) || (host && !c->host))
		return -ENOMEM;
	c->start_wall = rep->start_wall_ns;
	c->start_clock = rep->start_clock_ns;
	c->iters = calloc(rep->niters ? rep->niters : 1, sizeof *c->iters);
	if (!c->iters)
		return -ENOMEM;
	for (size_t i = 0; i < rep->niters; i++)
		if (!rep->iters[i].open && rep->iters[i].iter >= 0)
			c->iters[c->niters++] = (struct gp_cr_iter){ rep->iters[i].iter, rep->iters[i].end };
	return 0;
}

/* ---- the merge ------------------------------------------------------------------ */

/* The trace's map to the wall clock: its pairs, else the header's start. */
static const struct gp_clockmap *gp_cr_map(const struct gp_crossrank *t, struct gp_clockmap *tmp,
					   const char **source)
{
	*source = "pairs";
	if (t->clocks.n)
		return &t->clocks;
	memset(tmp, 0, sizeof *tmp);
	*source = "none";
	if (t->start_wall && t->start_clock) {
		struct gp_clock_pair hp = { .raw = t->start_clock, .realtime = t->start_wall };
		if (gp_clockmap_add(tmp, &hp) == 0)
			*source = "header";
	}
	return tmp;
}

/* The trace-clock time of trace map m at which the job clock
 * (wall + refinement) reads w. */
static int64_t gp_cr_raw_at(const struct gp_clockmap *m, int64_t refinement, int64_t w)
{
	int64_t target = gp_clockmap_sub_sat(w, refinement), r = gp_clockmap_sub_sat(target, gp_clockmap_offset(m, 0));
	for (int i = 0; i < 2; i++)
		r = gp_clockmap_sub_sat(target, gp_clockmap_offset(m, r > 0 ? (uint64_t)r : 0));
	return r;
}

struct gp_cr_job {
	struct gp_crossrank *const *t;
	const struct gp_clockmap **map;
	int64_t *refine;
	uint32_t **match; /* [r][i]: rank r's kernel matched with the reference's i-th, or GP_COLL_NONE */
	size_t n;
	uint64_t stride_mask;
};

static int64_t gp_cr_time(const struct gp_cr_job *j, size_t r, uint64_t t)
{
	return gp_clockmap_add_sat(gp_clockmap_wall(j->map[r], t), j->refine[r]);
}

static int gp_cr_kept(const struct gp_cr_job *j, const struct gp_cr_coll *k)
{
	return !(k->seq & j->stride_mask);
}

/* The kept kernels of trace r, in order: their names and ends on the wall
 * clock (no refinement) in k, their indexes in the trace's sample in idx.
 * Returns how many. */
static size_t gp_cr_kends(const struct gp_cr_job *j, size_t r, struct gp_coll_end *k, size_t *idx)
{
	const struct gp_crossrank *t = j->t[r];
	size_t n = 0;
	for (size_t i = 0; i < t->ncoll; i++)
		if (gp_cr_kept(j, &t->coll[i])) {
			idx[n] = i;
			k[n++] = (struct gp_coll_end){ t->coll[i].name, gp_clockmap_wall(j->map[r], t->coll[i].end) };
		}
	return n;
}

/* Step 2: rank r's refinement against the reference's collective ends,
 * over the pairs collmatch.c finds around lost kernels. */
static int gp_cr_refine(struct gp_crossrank *out, struct gp_cr_job *j, size_t r)
{
	struct gp_cr_rank *rr = &out->ranks[r];
	const struct gp_crossrank *a = j->t[out->ref], *b = j->t[r];
	size_t cap = (a->ncoll > b->ncoll ? a->ncoll : b->ncoll) + 1;
	struct gp_coll_end *ka = malloc(cap * sizeof *ka), *kb = malloc(cap * sizeof *kb);
	size_t *ia = malloc(cap * sizeof *ia), *ib = malloc(cap * sizeof *ib);
	int64_t *d = malloc(cap * sizeof *d), *e = malloc(cap * sizeof *e);
	uint32_t *kp = malloc(cap * sizeof *kp); /* [x]: the kb partner of ka[x], or GP_COLL_NONE */
	int rc = -ENOMEM, lag = 0;
	if (!ka || !kb || !ia || !ib || !d || !e || !kp)
		goto out;
	size_t na = gp_cr_kends(j, out->ref, ka, ia), nb = gp_cr_kends(j, r, kb, ib);
	if (gp_coll_match(ka, na, kb, nb, a->nccl_seen == b->nccl_seen, kp, &lag) < 0)
		goto out;
	rr->match_lag = lag * (int64_t)(j->stride_mask + 1);
	size_t m = 0;
	for (size_t x = 0; x < na; x++) {
		if (kp[x] == GP_COLL_NONE)
			continue;
		if (strcmp(ka[x].name, kb[kp[x]].name))
			rr->names_differ++;
		else {
			j->match[r][ia[x]] = (uint32_t)ib[kp[x]];
			d[m++] = gp_clockmap_sub_sat(ka[x].end, kb[kp[x]].end);
		}
	}
	rr->matched = m;
	rr->unmatched = na + nb - 2 * (m + rr->names_differ);
	if (m) {
		for (size_t i = 0; i < m; i++)
			e[i] = gp_coll_absdiff(d[i], 0);
		rr->resid_pairs_p50 = gp_coll_quantile(e, m, 0.5);
		int64_t c = gp_coll_quantile(d, m, 0.5); /* d sorted now */
		for (size_t i = 0; i < m; i++)
			e[i] = gp_coll_absdiff(d[i], c);
		int64_t p50 = gp_coll_quantile(e, m, 0.5), p95 = gp_coll_quantile(e, m, 0.95);
		if (m >= GP_CR_MIN_MATCH && p50 <= rr->resid_pairs_p50) {
			rr->refined = 1;
			rr->refinement = j->refine[r] = c;
			rr->resid_p50 = p50;
			rr->resid_p95 = p95;
		} else {
			for (size_t i = 0; i < m; i++)
				e[i] = gp_coll_absdiff(d[i], 0);
			rr->resid_p50 = rr->resid_pairs_p50;
			rr->resid_p95 = gp_coll_quantile(e, m, 0.95);
		}
	}
	rc = 0;
out:
	free(ka);
	free(kb);
	free(ia);
	free(ib);
	free(d);
	free(e);
	free(kp);
	return rc;
}

struct gp_cr_end {
	int64_t iter;
	int64_t t;
	size_t rank;
};

static int gp_cr_cmp_end(const void *a, const void *b)
{
	const struct gp_cr_end *x = a, *y = b;
	if (x->iter != y->iter)
		return x->iter < y->iter ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Step 3: per iteration number, the spread of its end across the ranks. */
static int gp_cr_skew(struct gp_crossrank *out, const struct gp_cr_job *j)
{
	size_t total = 0;
	for (size_t r = 0; r < j->n; r++)
		total += j->t[r]->niters;
	if (!total)
		return 0;
	struct gp_cr_end *e = malloc(total * sizeof *e);
	int64_t *spread = malloc(total * sizeof *spread);
	if (!e || !spread) {
		free(e);
		free(spread);
		return -ENOMEM;
	}
	size_t k = 0, ns = 0;
	for (size_t r = 0; r < j->n; r++)
		for (size_t i = 0; i < j->t[r]->niters; i++)
			e[k++] = (struct gp_cr_end){ j->t[r]->iters[i].iter, gp_cr_time(j, r, j->t[r]->iters[i].end), r };
	qsort(e, total, sizeof *e, gp_cr_cmp_end);
	for (size_t a = 0, b; a < total; a = b) {
		int64_t lo = e[a].t, hi = e[a].t;
		size_t last = a;
		for (b = a; b < total && e[b].iter == e[a].iter; b++) {
			if (e[b].t < lo)
				lo = e[b].t;
			if (e[b].t > hi)
				hi = e[b].t, last = b;
		}
		if (b - a < 2)
			continue; /* one rank has it: nothing to compare */
		for (size_t x = a; x < b; x++) {
			out->ranks[e[x].rank].iters++;
			out->ranks[e[x].rank].late_sum += (uint64_t)gp_coll_absdiff(e[x].t, lo);
		}
		out->ranks[e[last].rank].iters_last++;
		spread[ns++] = gp_coll_absdiff(hi, lo);
		if ((uint64_t)spread[ns - 1] > out->skew_max || ns == 1) {
			out->skew_max = (uint64_t)spread[ns - 1];
			out->skew_max_iter = e[a].iter;
		}
	}
	out->skew_iters = ns;
	if (ns) {
		out->skew_p50 = (uint64_t)gp_coll_quantile(spread, ns, 0.5);
		out->skew_p95 = (uint64_t)gp_coll_quantile(spread, ns, 0.95);
	}
	free(e);
	free(spread);
	return 0;
}

/* Step 4: per collective of the reference matched on at least one other
 * rank (step 2), the time each rank's kernel ran before the last one
 * started. */
static int gp_cr_wait(struct gp_crossrank *out, const struct gp_cr_job *j)
{
	size_t *on = calloc(j->n ? j->n : 1, sizeof *on);
	if (!on)
		return -ENOMEM;
	uint64_t scale = j->stride_mask + 1;
	const struct gp_crossrank *ref = j->t[out->ref];
	for (size_t i = 0; i < ref->ncoll; i++) {
		if (!gp_cr_kept(j, &ref->coll[i]))
			continue;
		size_t non = 0;
		int64_t last = INT64_MIN;
		size_t last_r = 0;
		for (size_t r = 0; r < j->n; r++) {
			size_t k = r == out->ref ? i : j->match[r][i];
			if (k == GP_COLL_NONE)
				continue;
			on[non++] = r;
			int64_t s = gp_cr_time(j, r, j->t[r]->coll[k].start);
			if (s > last)
				last = s, last_r = r;
		}
		if (non < 2)
			continue;
		out->coll_compared += scale;
		out->ranks[last_r].coll_last += scale;
		for (size_t x = 0; x < non; x++) {
			size_t r = on[x];
			const struct gp_cr_coll *k = &j->t[r]->coll[r == out->ref ? i : j->match[r][i]];
			int64_t s = gp_cr_time(j, r, k->start), w = gp_clockmap_sub_sat(last, s);
			uint64_t dur = k->end - k->start;
			uint64_t wait = w <= 0 ? 0 : (uint64_t)w > dur ? dur : (uint64_t)w;
			out->ranks[r].wait_ns += wait * scale;
			out->ranks[r].coll_compared += scale;
		}
	}
	free(on);
	return 0;
}

static int gp_cr_merge(void *p, void *const *traces, const struct gp_rep *const *reps, size_t n)
{
	struct gp_crossrank *out = p;
	(void)reps;
	out->merged = 1;
	out->nranks = n;
	struct gp_crossrank *const *t = (struct gp_crossrank *const *)traces;
	out->ranks = calloc(n ? n : 1, sizeof *out->ranks);
	struct gp_clockmap *tmp = calloc(n ? n : 1, sizeof *tmp);
	const struct gp_clockmap **map = calloc(n ? n : 1, sizeof *map);
	int64_t *refine = calloc(n ? n : 1, sizeof *refine);
	uint32_t **match = calloc(n ? n : 1, sizeof *match);
	int rc = out->ranks && tmp && map && refine && match ? 0 : -ENOMEM;
	struct gp_cr_job j = { .t = t, .map = map, .refine = refine, .match = match, .n = n };
	uint32_t stride_log = 0;
	int have_ref = 0; /* the reference: rank 0, else the first trace */
	for (size_t r = 0; !rc && r < n; r++) {
		if (!have_ref && t[r]->rank && !strcmp(t[r]->rank, "0")) {
			out->ref = r;
			have_ref = 1;
		}
		if (t[r]->stride_log > stride_log)
			stride_log = t[r]->stride_log;
	}
	j.stride_mask = (1ull << stride_log) - 1;
	out->stride = 1ull << stride_log;
	for (size_t r = 0; !rc && r < n; r++) {
		struct gp_cr_rank *rr = &out->ranks[r];
		map[r] = gp_cr_map(t[r], &tmp[r], &rr->clock);
		rr->path = t[r]->path;
		rr->rank = t[r]->rank;
		rr->host = t[r]->host;
		rr->pairs = t[r]->clocks.n;
		rr->pair_width = gp_clockmap_max_width(&t[r]->clocks);
		rr->steps = t[r]->steps;
		rr->nccl_kernels = t[r]->nccl_seen;
		rr->nccl_ns = t[r]->nccl_ns;
		rr->resid_pairs_p50 = rr->resid_p50 = rr->resid_p95 = -1;
	}
	for (size_t r = 0; !rc && r < n; r++) {
		size_t nc = t[out->ref]->ncoll;
		if (r == out->ref)
			continue;
		if (!(match[r] = malloc((nc ? nc : 1) * sizeof *match[r]))) {
			rc = -ENOMEM;
			break;
		}
		for (size_t i = 0; i < nc; i++)
			match[r][i] = GP_COLL_NONE;
		rc = gp_cr_refine(out, &j, r);
	}
	/* each rank's trace clock against the reference's, at the reference's
	 * first pair (or start): before and after the refinement */
	if (!rc && n) {
		const struct gp_clockmap *m0 = map[out->ref];
		uint64_t t0 = m0->n ? m0->p[0].raw : t[out->ref]->start_clock;
		int64_t w0 = gp_clockmap_wall(m0, t0), r0 = t0 > INT64_MAX ? INT64_MAX : (int64_t)t0;
		for (size_t r = 0; r < n; r++) {
			out->ranks[r].raw_offset_pairs = gp_clockmap_sub_sat(gp_cr_raw_at(map[r], 0, w0), r0);
			out->ranks[r].raw_offset = gp_clockmap_sub_sat(gp_cr_raw_at(map[r], refine[r], w0), r0);
		}
	}
	if (!rc)
		rc = gp_cr_skew(out, &j);
	if (!rc)
		rc = gp_cr_wait(out, &j);
	for (size_t r = 0; tmp && r < n; r++)
		gp_clockmap_free(&tmp[r]);
	free(tmp);
	for (size_t r = 0; match && r < n; r++)
		free(match[r]);
	free(match);
	free(map);
	free(refine);
	return rc;
}

/* ---- output --------------------------------------------------------------------- */

/* A signed duration, "+1.234s" / "-12.3us" / "0". */
static const char *gp_cr_signed(int64_t v, char *buf, size_t n)
{
	char d[32];
	if (!v)
		snprintf(buf, n, "0");
	else
		snprintf(buf, n, "%c%s", v < 0 ? '-' : '+', gp_fmt_dur(v < 0 ? (uint64_t)-v : (uint64_t)v, d, sizeof d));
	return buf;
}

static void gp_cr_text(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *s)
{
	const struct gp_crossrank *c = p;
	(void)rep;
	if (!c->merged || c->nranks < 2)
		return;
	int md = s->markdown;
	const char *li = md ? "- " : "  ";
	const struct gp_cr_rank *ref = &c->ranks[c->ref];
	int any_refined = 0;
	for (size_t r = 0; r < c->nranks; r++)
		any_refined |= c->ranks[r].refined;
	fprintf(f, md ? "\n## Across ranks\n\n" : "\nAcross ranks\n");
	fprintf(f, "%s%zu traces of one job on the time line of ", li, c->nranks);
	gp_fmt_text_str(f, ref->path);
	if (ref->rank) {
		fputs(" (rank ", f);
		gp_fmt_text_str(f, ref->rank);
		fputc(')', f);
	}
	fprintf(f, ": clocks lined up on each host's wall clock%s\n\n",
		any_refined ? ", refined on the ends of matching NCCL collectives" : "");
	if (md)
		fputs("| trace | rank | host | clock | offset vs reference | refined by | residual p50 (pairs only) | "
		      "residual p95 |\n|---|---|---|---|---:|---:|---:|---:|\n", f);
	else
		fprintf(f, "  %-40s %-6s %-12s %-7s %16s %11s %26s %9s\n", "trace", "rank", "host", "clock",
			"offset vs ref", "refined by", "residual p50 (pairs only)", "p95");
	for (size_t r = 0; r < c->nranks; r++) {
		const struct gp_cr_rank *x = &c->ranks[r];
		char off[40], by[40], res[64], p95[32], b3[32], b4[32];
		snprintf(off, sizeof off, "%s", r == c->ref ? "reference" : gp_cr_signed(x->raw_offset, b3, sizeof b3));
		snprintf(by, sizeof by, "%s", x->refined ? gp_cr_signed(x->refinement, b3, sizeof b3) : "-");
		if (x->resid_p50 >= 0)
			snprintf(res, sizeof res, "%s (%s)", gp_fmt_dur((uint64_t)x->resid_p50, b3, sizeof b3),
				 gp_fmt_dur((uint64_t)x->resid_pairs_p50, b4, sizeof b4));
		else
			snprintf(res, sizeof res, "-");
		snprintf(p95, sizeof p95, "%s", x->resid_p95 >= 0 ? gp_fmt_dur((uint64_t)x->resid_p95, b3, sizeof b3) : "-");
		if (md) {
			fputs("| ", f);
			gp_fmt_md_str(f, x->path);
			fputs(" | ", f);
			gp_fmt_md_str(f, x->rank ? x->rank : "?");
			fputs(" | ", f);
			gp_fmt_md_str(f, x->host ? x->host : "?");
			fprintf(f, " | %s%s | %s | %s | %s | %s |\n", x->clock, x->steps ? " (stepped)" : "", off, by, res, p95);
		} else {
			fputs("  ", f);
			gp_fmt_text_pad(f, x->path, 40);
			fputc(' ', f);
			gp_fmt_text_pad(f, x->rank ? x->rank : "?", 6);
			fputc(' ', f);
			gp_fmt_text_pad(f, x->host ? x->host : "?", 12);
			fprintf(f, " %-7s %16s %11s %26s %9s%s\n", x->clock, off, by, res, p95,
				x->steps ? "  (its wall clock stepped)" : "");
		}
	}
	char b1[32], b2[32], b3[32];
	const char *sub = md ? "  - " : "    ";
	if (c->skew_iters) {
		fprintf(f, "%s%sIteration skew: %" PRIu64 " iterations ended on several ranks; end spread p50 %s, p95 %s, "
			   "max %s (iteration %" PRId64 ")\n", md ? "\n" : "", li, c->skew_iters,
			gp_fmt_dur(c->skew_p50, b1, sizeof b1), gp_fmt_dur(c->skew_p95, b2, sizeof b2),
			gp_fmt_dur(c->skew_max, b3, sizeof b3), c->skew_max_iter);
		for (size_t r = 0; r < c->nranks; r++) {
			const struct gp_cr_rank *x = &c->ranks[r];
			if (!x->iters)
				continue;
			fprintf(f, "%srank ", sub);
			gp_fmt_text_str(f, x->rank ? x->rank : "?");
			fprintf(f, ": ends last in %" PRIu64 " of %" PRIu64 ", %s after the first on average\n", x->iters_last,
				x->iters, gp_fmt_dur(x->late_sum / x->iters, b1, sizeof b1));
		}
	}
	if (c->coll_compared) {
		fprintf(f, "%sCollective wait (an NCCL kernel running before the last rank's matching one started): "
			   "%" PRIu64 " collectives%s\n", li, c->coll_compared,
			c->stride > 1 ? " (estimated from a sample)" : "");
		for (size_t r = 0; r < c->nranks; r++) {
			const struct gp_cr_rank *x = &c->ranks[r];
			char pc[16];
			fprintf(f, "%srank ", sub);
			gp_fmt_text_str(f, x->rank ? x->rank : "?");
			fprintf(f, ": waited %s of %s NCCL time (%s), last to arrive in %" PRIu64 " of %" PRIu64 "\n",
				gp_fmt_dur(x->wait_ns, b1, sizeof b1), gp_fmt_dur(x->nccl_ns, b2, sizeof b2),
				gp_fmt_pctcol(x->wait_ns, x->nccl_ns, pc, sizeof pc), x->coll_last, x->coll_compared);
		}
	}
}

static void gp_cr_json_i64(FILE *f, const char *key, int64_t v)
{
	if (v < 0 && (!strcmp(key, "residual_pairs_p50_ns") || !strcmp(key, "residual_p50_ns") ||
		      !strcmp(key, "residual_p95_ns")))
		fprintf(f, ", \"%s\": null", key);
	else
		fprintf(f, ", \"%s\": %" PRId64, key, v);
}

static void gp_cr_json(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *s)
{
	const struct gp_crossrank *c = p;
	(void)rep;
	(void)s;
	if (!c->merged) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"reference\": %zu, \"ranks\": [", c->ref);
	for (size_t r = 0; r < c->nranks; r++) {
		const struct gp_cr_rank *x = &c->ranks[r];
		fprintf(f, "%s\n    {\"path\": ", r ? "," : "");
		gp_fmt_json_str(f, x->path);
		fputs(", \"rank\": ", f);
		if (x->rank)
			gp_fmt_json_str(f, x->rank);
		else
			fputs("null", f);
		fputs(", \"host\": ", f);
		if (x->host)
			gp_fmt_json_str(f, x->host);
		else
			fputs("null", f);
		fprintf(f, ", \"clock\": \"%s\", \"clock_pairs\": %zu, \"pair_width_max_ns\": %u, \"wall_clock_steps\": %" PRIu64,
			x->clock, x->pairs, x->pair_width, x->steps);
		gp_cr_json_i64(f, "raw_offset_ns", x->raw_offset);
		gp_cr_json_i64(f, "raw_offset_pairs_ns", x->raw_offset_pairs);
		fprintf(f, ", \"refined\": %s", x->refined ? "true" : "false");
		gp_cr_json_i64(f, "refinement_ns", x->refinement);
		fprintf(f, ", \"collectives_matched\": %" PRIu64 ", \"names_differ\": %" PRIu64
			   ", \"collectives_unmatched\": %" PRIu64 ", \"match_lag\": %" PRId64,
			x->matched, x->names_differ, x->unmatched, x->match_lag);
		gp_cr_json_i64(f, "residual_pairs_p50_ns", x->resid_pairs_p50);
		gp_cr_json_i64(f, "residual_p50_ns", x->resid_p50);
		gp_cr_json_i64(f, "residual_p95_ns", x->resid_p95);
		fprintf(f, ", \"iterations\": %" PRIu64 ", \"iterations_last\": %" PRIu64 ", \"iteration_late_mean_ns\": %" PRIu64,
			x->iters, x->iters_last, x->iters ? x->late_sum / x->iters : 0);
		fprintf(f, ", \"nccl_kernels\": %" PRIu64 ", \"nccl_ns\": %" PRIu64 ", \"collectives\": %" PRIu64
			   ", \"collective_wait_ns\": %" PRIu64 ", \"collective_wait_share\": ",
			x->nccl_kernels, x->nccl_ns, x->coll_compared, x->wait_ns);
		gp_fmt_json_num(f, x->nccl_ns ? (double)x->wait_ns / (double)x->nccl_ns : 0.0);
		fprintf(f, ", \"collectives_last\": %" PRIu64 "}", x->coll_last);
	}
	fprintf(f, "],\n    \"iteration_skew\": {\"iterations\": %" PRIu64 ", \"spread_p50_ns\": %" PRIu64
		   ", \"spread_p95_ns\": %" PRIu64 ", \"spread_max_ns\": %" PRIu64 ", \"spread_max_iter\": %" PRId64 "}"
		   ",\n    \"collectives\": {\"compared\": %" PRIu64 ", \"sample_stride\": %" PRIu64 "}}",
		c->skew_iters, c->skew_p50, c->skew_p95, c->skew_max, c->skew_iters ? c->skew_max_iter : -1,
		c->coll_compared, c->stride);
}

/* ---- partial results ---------------------------------------------------------- */

/* Partial results: a trace's state, what the merge reads (never a merged
 * state: partials are per trace). The NCCL kernels' names go once, in a
 * table, each kernel by its index. */
static int gp_cr_save(const void *p, struct gp_pw *w)
{
	const struct gp_crossrank *c = p;
	gp_pw_str(w, c->path);
	gp_pw_str(w, c->rank);
	gp_pw_str(w, c->host);
	gp_pw_u64(w, c->start_wall);
	gp_pw_u64(w, c->start_clock);
	gp_pw_u64(w, c->steps);
	gp_pw_u64(w, c->nccl_seen);
	gp_pw_u64(w, c->nccl_ns);
	gp_pw_u32(w, c->stride_log);
	gp_pw_u32(w, c->clocks.thin);
	gp_pw_u64(w, c->clocks.seen);
	gp_pw_u64(w, c->clocks.n);
	for (size_t i = 0; i < c->clocks.n; i++) {
		gp_pw_u64(w, c->clocks.p[i].raw);
		gp_pw_u64(w, c->clocks.p[i].realtime);
		gp_pw_u32(w, c->clocks.p[i].width);
		gp_pw_u8(w, c->clocks.p[i].kind);
	}
	const char **names = malloc((c->ncoll ? c->ncoll : 1) * sizeof *names);
	uint32_t *idx = malloc((c->ncoll ? c->ncoll : 1) * sizeof *idx);
	size_t nn = 0;
	if (!names || !idx) {
		free(names);
		free(idx);
		return w->err = -ENOMEM;
	}
	for (size_t i = 0; i < c->ncoll; i++) { /* a handful of distinct kernels */
		size_t k = 0;
		while (k < nn && strcmp(names[k], c->coll[i].name))
			k++;
		if (k == nn)
			names[nn++] = c->coll[i].name;
		idx[i] = (uint32_t)k;
	}
	gp_pw_u64(w, nn);
	for (size_t k = 0; k < nn; k++)
		gp_pw_str(w, names[k]);
	gp_pw_u64(w, c->ncoll);
	for (size_t i = 0; i < c->ncoll; i++) {
		gp_pw_u64(w, c->coll[i].seq);
		gp_pw_u64(w, c->coll[i].start);
		gp_pw_u64(w, c->coll[i].end);
		gp_pw_u32(w, idx[i]);
	}
	free(names);
	free(idx);
	gp_pw_u64(w, c->niters);
	for (size_t i = 0; i < c->niters; i++) {
		gp_pw_i64(w, c->iters[i].iter);
		gp_pw_u64(w, c->iters[i].end);
	}
	return w->err;
}

static int gp_cr_load(void *p, struct gp_pr *r, struct gp_strtab *strings)
{
	struct gp_crossrank *c = p;
	c->path = gp_pr_strdup(r, NULL);
	c->rank = gp_pr_strdup(r, NULL);
	c->host = gp_pr_strdup(r, NULL);
	c->start_wall = gp_pr_u64(r);
	c->start_clock = gp_pr_u64(r);
	c->steps = gp_pr_u64(r);
	c->nccl_seen = gp_pr_u64(r);
	c->nccl_ns = gp_pr_u64(r);
	c->stride_log = gp_pr_u32(r);
	if (!r->err && c->stride_log > 62)
		gp_pr_fail(r, "the NCCL kernels' sampling stride is out of range");
	c->clocks.thin = gp_pr_u32(r);
	c->clocks.seen = gp_pr_u64(r);
	size_t np = gp_pr_count(r, 21, GP_CLOCKMAP_MAX);
	if (np && !r->err && !(c->clocks.p = calloc(np, sizeof *c->clocks.p)))
		gp_pr_oom(r);
	for (size_t i = 0; i < np && !r->err; i++) {
		c->clocks.p[i].raw = gp_pr_u64(r);
		c->clocks.p[i].realtime = gp_pr_u64(r);
		c->clocks.p[i].width = gp_pr_u32(r);
		c->clocks.p[i].kind = gp_pr_u8(r);
		c->clocks.n = c->clocks.cap = i + 1;
	}
	size_t nn = gp_pr_count(r, 4, GP_CR_MAX_COLL);
	const char **names = calloc(nn ? nn : 1, sizeof *names);
	if (!names)
		gp_pr_oom(r);
	for (size_t k = 0; k < nn && !r->err; k++)
		names[k] = gp_pr_intern_req(r, strings);
	size_t nc = gp_pr_count(r, 28, GP_CR_MAX_COLL);
	if (nc && !r->err && !(c->coll = calloc(nc, sizeof *c->coll)))
		gp_pr_oom(r);
	for (size_t i = 0; i < nc && !r->err; i++) {
		c->coll[i].seq = gp_pr_u64(r);
		c->coll[i].start = gp_pr_u64(r);
		c->coll[i].end = gp_pr_u64(r);
		uint32_t k = gp_pr_u32(r);
		if (!r->err && k >= nn)
			gp_pr_fail(r, "an NCCL kernel names no kernel of the table");
		c->coll[i].name = r->err ? NULL : names[k];
		c->ncoll = c->capcoll = i + 1;
	}
	free(names);
	size_t ni = gp_pr_count(r, 16, UINT32_MAX);
	if (ni && !r->err && !(c->iters = calloc(ni, sizeof *c->iters)))
		gp_pr_oom(r);
	for (size_t i = 0; i < ni && !r->err; i++) {
		c->iters[i].iter = gp_pr_i64(r);
		c->iters[i].end = gp_pr_u64(r);
		c->niters = i + 1;
	}
	if (r->err) /* what the merge would read: nothing half-read */
		c->ncoll = c->niters = 0;
	return r->err;
}

const struct gp_analysis gp_analysis_crossrank = {
	.name = "crossrank",
	.title = "Across ranks",
	.types = { GP_AN_TYPE(GP_REC_STATUS), 0 },
	.create = gp_cr_create,
	.record = gp_cr_record,
	.prepare = gp_cr_prepare,
	.op = gp_cr_op,
	.finish = gp_cr_finish,
	.merge = gp_cr_merge,
	.text = gp_cr_text,
	.json = gp_cr_json,
	.destroy = gp_cr_destroy,
	.save = gp_cr_save,
	.load = gp_cr_load,
};
