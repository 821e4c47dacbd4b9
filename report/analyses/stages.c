/*
 * stages.c — the "Stages" analysis: the traced run cut into start-up (process
 * start -> first CUDA call), load (first CUDA call -> first kernel launch:
 * allocations and copies), warm-up (leading iterations whose duration has not
 * settled), steady state, and tear-down (end of the last kernel -> last
 * record), each with its time, share and what dominates it; when the program
 * marks its phases with top-level NVTX ranges (at most 8 distinct names
 * covering at least half of the traced time), those name the stages instead.
 * Also states which stages the capture window covered. In a windowed
 * capture (GPUPHASE_WINDOW) the stages are taken over the capture windows
 * only: each stage's time is the part of it inside them, shares are of
 * their summed length, and what was not captured (before the first window,
 * between windows, after the last) is said apart.
 *
 * Pass 1 gathers the process start, the first window start and the
 * outermost NVTX ranges; prepare takes the run's edges from the core (first
 * CUDA call, first launch, last kernel end, last record) and computes the stages (so that pass 2 can
 * fold each op and each other runtime call into its stage); the section and
 * its JSON object ("stages", docs/report-json.md) are printed after finish.
 * A plug-in of registry.h; report thread only. docs/metrics.md §15.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "report/util/fmt.h"
#include "report/util/map.h"

#define GP_STAGE_MAX 16
#define GP_STAGE_MAX_RANGES 65536 /* outermost NVTX ranges kept            */
#define GP_STAGE_MAX_RANGE_NAMES 8
#define GP_STAGE_TOL 0.2       /* settled: within 20 % of the steady median   */
#define GP_STAGE_SETTLE 5      /* ... median of this many consecutive ones    */
#define GP_STAGE_MIN_ITERS 4   /* fewer iterations: no warm-up split          */

/* A closed outermost NVTX range. */
struct gp_stage_range {
	uint64_t start, end;
	uint32_t name; /* string id; after prepare: names index */
};

struct gp_stage {
	const char *name;      /* fixed text or sg->names entry                 */
	uint64_t start, end, time; /* time: covered time (sum for NVTX names)   */
	size_t count;          /* NVTX ranges / warm-up iterations              */
	uint32_t nvtx;         /* names index of an NVTX stage, UINT32_MAX else */
};

struct gp_stages {
	int err;
	/* pass 1 (the other edges are the core's, gp_an_edges) */
	int64_t proc_start;           /* trace-clock ns, -1 = unknown           */
	int64_t win_iter;             /* iteration at the first window start, -1 = none */
	uint64_t win_start;           /* time of that window start              */
	struct gp_an_edges edges;     /* after prepare                          */
	struct gp_stage_range *ranges;
	size_t nranges, capranges;
	int ranges_off;               /* too many ranges or names: no NVTX stages */
	/* the names it prints (range names, then other calls'), in first-use
	 * order: texts of the string table or fixed */
	const char **names;
	size_t nnames, capnames;
	/* prepared */
	struct gp_stage stages[GP_STAGE_MAX];
	size_t nstages;
	int nvtx_stages;
	size_t settled_iter;          /* warm-up: iterations before settling (0 = none) */
	int64_t settled_num;          /* ... the number of the first settled one */
	uint64_t t_start, t_end;
	/* a windowed capture (the core's capture windows, copied at prepare;
	 * nwins = 0: the whole run) */
	struct gp_stage_win {
		uint64_t start, stop;
	} *wins;
	size_t nwins;
	uint64_t wall;                /* the shares' denominator: the windows'
	                                 summed length, else t_end - t_start   */
	uint64_t before, between, after; /* not captured, within the run       */
	/* pass 2 */
	struct gp_map api_name;       /* runtime api id -> names index          */
	struct gp_map stage_grp;      /* stage << 32 | group -> launch + execute */
	struct gp_map stage_call;     /* stage << 32 | name -> host time        */
};

static void *gp_stage_create(const struct gp_analysis_env *env)
{
	(void)env;
	struct gp_stages *sg = calloc(1, sizeof *sg);
	if (!sg)
		return NULL;
	sg->proc_start = -1;
	sg->win_iter = -1;
	return sg;
}

static void gp_stage_destroy(void *p)
{
	struct gp_stages *sg = p;
	free(sg->ranges);
	free(sg->names);
	free(sg->wins);
	gp_map_free(&sg->api_name);
	gp_map_free(&sg->stage_grp);
	gp_map_free(&sg->stage_call);
	free(sg);
}

/* The names index of text (equal texts share one); UINT32_MAX on ENOMEM. */
static uint32_t gp_stage_name(struct gp_stages *sg, const char *text)
{
	for (size_t i = 0; i < sg->nnames; i++)
		if (!strcmp(sg->names[i], text))
			return (uint32_t)i;
	if (GP_AN_GROW(sg->names, sg->nnames, sg->capnames)) {
		gp_analysis_fail(&sg->err, -ENOMEM);
		return UINT32_MAX;
	}
	sg->names[sg->nnames] = text;
	return (uint32_t)sg->nnames++;
}

/* ---- pass 1 ---------------------------------------------------------------- */

static void gp_stage_marker1(struct gp_stages *sg, const struct gp_an_rec *v)
{
	if (sg->ranges_off || !v->marker.closed)
		return;
	if (sg->nranges >= GP_STAGE_MAX_RANGES || GP_AN_GROW(sg->ranges, sg->nranges, sg->capranges)) {
		sg->ranges_off = 1;
		return;
	}
	sg->ranges[sg->nranges++] = (struct gp_stage_range){ v->marker.range_start, v->marker.ts,
							     v->marker.range_name };
}

static void gp_stage_record1(struct gp_stages *sg, const struct gp_an_rec *v)
{
	switch (v->type) {
	case GP_REC_STATUS:
		if (v->status.kind == GP_STATUS_PROCESS_START && v->status.value > 0)
			sg->proc_start = v->status.value;
		break;
	case GP_REC_WINDOW:
		if (v->mark.kind == GP_WIN_START && sg->win_iter < 0) {
			sg->win_iter = v->mark.iter;
			sg->win_start = v->mark.ts;
		}
		break;
	default: /* GP_REC_MARKER */
		gp_stage_marker1(sg, v);
		break;
	}
}

static int gp_stage_cmp_range(const void *a, const void *b)
{
	const struct gp_stage_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
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

/* The captured part of [a, b): all of it for a whole-run capture, else
 * its overlap with the capture windows. */
static uint64_t gp_stage_captured(const struct gp_stages *sg, uint64_t a, uint64_t b)
{
	if (b <= a)
		return 0;
	if (!sg->nwins)
		return b - a;
	uint64_t in = 0;
	for (size_t i = 0; i < sg->nwins && sg->wins[i].start < b; i++) {
		uint64_t x = sg->wins[i].start > a ? sg->wins[i].start : a;
		uint64_t y = sg->wins[i].stop < b ? sg->wins[i].stop : b;
		if (y > x)
			in += y - x;
	}
	return in;
}

static void gp_stage_add(struct gp_stages *sg, const char *name, uint64_t a, uint64_t b, size_t count)
{
	if (b <= a || sg->nstages >= GP_STAGE_MAX)
		return;
	sg->stages[sg->nstages++] = (struct gp_stage){ name, a, b, gp_stage_captured(sg, a, b), count, UINT32_MAX };
}

/* A windowed capture: the stages with no captured time are not listed (what
 * was not captured is said apart, gp_stage_text). */
static void gp_stage_drop_uncaptured(struct gp_stages *sg)
{
	if (!sg->nwins)
		return;
	size_t k = 0;
	for (size_t i = 0; i < sg->nstages; i++)
		if (sg->stages[i].time)
			sg->stages[k++] = sg->stages[i];
	sg->nstages = k;
}

static void gp_stage_compute(struct gp_stages *sg, const struct gp_an *an)
{
	sg->nstages = 0;
	uint64_t *starts; /* iterations */
	int64_t *nums;
	size_t ni = gp_an_iteration_starts(an, &starts, &nums), settle_k = 0, warm_n = 0;
	if (sg->t_end <= sg->t_start) {
		free(starts);
		free(nums);
		return;
	}
	/* NVTX-named stages */
	uint64_t covered = 0;
	for (size_t i = 0; i < sg->nranges; i++)
		covered += gp_stage_captured(sg, sg->ranges[i].start, sg->ranges[i].end);
	if (sg->nranges && !sg->ranges_off && (double)covered >= 0.5 * (double)sg->wall) {
		qsort(sg->ranges, sg->nranges, sizeof *sg->ranges, gp_stage_cmp_range);
		for (size_t i = 0; i < sg->nranges; i++) {
			const struct gp_stage_range *r = &sg->ranges[i];
			size_t k = 0;
			while (k < sg->nstages && sg->stages[k].nvtx != r->name)
				k++;
			if (k == sg->nstages) {
				if (k == GP_STAGE_MAX)
					continue;
				sg->stages[sg->nstages++] = (struct gp_stage){ sg->names[r->name], r->start, r->end, 0, 0,
										  r->name };
			}
			struct gp_stage *s = &sg->stages[k];
			s->time += gp_stage_captured(sg, r->start, r->end);
			s->count++;
			if (r->start < s->start)
				s->start = r->start;
			if (r->end > s->end)
				s->end = r->end;
		}
		sg->nvtx_stages = 1;
		gp_stage_drop_uncaptured(sg);
		free(starts);
		free(nums);
		return;
	}
	uint64_t fa = sg->edges.first_api != UINT64_MAX ? sg->edges.first_api : sg->t_start;
	uint64_t fk = sg->edges.first_launch != UINT64_MAX ? sg->edges.first_launch : sg->t_end;
	uint64_t lk = sg->edges.last_kernel > fk ? sg->edges.last_kernel : fk;
	/* a window that began after iteration 0, or after an iteration mark (a
	 * cudaProfilerStart, the marker's events of a time window): what came
	 * before is not traced, but the iteration marks (written outside the
	 * window too) still tell where the warm-up settled */
	int windowed = sg->win_start > sg->t_start &&
		       (sg->win_iter > 0 || (sg->nwins && ni && starts && starts[0] < sg->win_start));
	uint64_t from = windowed ? sg->win_start : fk;
	if (windowed) {
		gp_stage_add(sg, "before window", sg->t_start, sg->win_start, 0);
	} else {
		if (sg->proc_start >= 0)
			gp_stage_add(sg, "start-up", sg->t_start, fa, 0);
		gp_stage_add(sg, "load", fa, fk, 0);
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
	/* the warm-up's iterations: all of them, or in a windowed capture
	 * those mostly inside a window (the library writes an iteration's mark
	 * just before the window's START mark) */
	for (size_t i = 0; i < settle_k; i++)
		warm_n += 2 * gp_stage_captured(sg, starts[i], starts[i + 1]) > starts[i + 1] - starts[i];
	sg->settled_num = settle_k && nums ? nums[settle_k] : 0;
	free(starts);
	free(nums);
	sg->settled_iter = settle_k;
	if (settle_t > from)
		gp_stage_add(sg, "warm-up", from, settle_t, warm_n);
	if (lk < settle_t)
		lk = settle_t;
	gp_stage_add(sg, "steady", settle_t, lk, 0);
	if (lk > fa)
		gp_stage_add(sg, "tear-down", lk, sg->t_end, 0);
	gp_stage_drop_uncaptured(sg);
}

static int gp_stage_of(const struct gp_stages *sg, uint64_t t)
{
	if (sg->nvtx_stages) {
		/* ranges sorted by start: the last starting at or before t, or one
		 * of the few before it (other threads' ranges may interleave) */
		size_t lo = 0, hi = sg->nranges;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (sg->ranges[mid].start <= t)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t i = lo, back = 0; i-- > 0 && back < 8; back++) {
			const struct gp_stage_range *r = &sg->ranges[i];
			if (t < r->end)
				for (size_t k = 0; k < sg->nstages; k++)
					if (sg->stages[k].nvtx == r->name)
						return (int)k;
		}
		return -1;
	}
	for (size_t k = 0; k < sg->nstages; k++)
		if (t >= sg->stages[k].start && t < sg->stages[k].end)
			return (int)k;
	return -1;
}

/* The capture windows (a windowed capture), the time they hold and what
 * they leave out of [t_start, t_end]. */
static void gp_stage_windows(struct gp_stages *sg, const struct gp_an *an)
{
	size_t n;
	const struct gp_rep_window *w = gp_an_capture_windows(an, &n);
	sg->wall = sg->t_end > sg->t_start ? sg->t_end - sg->t_start : 0;
	if (!n)
		return;
	if (!(sg->wins = malloc(n * sizeof *sg->wins))) {
		gp_analysis_fail(&sg->err, -ENOMEM);
		return;
	}
	sg->nwins = n;
	sg->wall = 0;
	if (w[n - 1].stop > sg->t_end)
		sg->t_end = w[n - 1].stop; /* the last record: its STOP mark */
	for (size_t i = 0; i < n; i++) {
		sg->wins[i] = (struct gp_stage_win){ w[i].start, w[i].stop };
		sg->wall += w[i].stop - w[i].start;
	}
	/* the run's time outside them */
	if (sg->wins[0].start > sg->t_start)
		sg->before = sg->wins[0].start - sg->t_start;
	for (size_t i = 1; i < n; i++)
		if (sg->wins[i].start > sg->wins[i - 1].stop)
			sg->between += sg->wins[i].start - sg->wins[i - 1].stop;
	if (sg->t_end > sg->wins[n - 1].stop)
		sg->after = sg->t_end - sg->wins[n - 1].stop;
}

static int gp_stage_prepare(void *p, const struct gp_an *an)
{
	struct gp_stages *sg = p;
	/* NVTX range names: at most GP_STAGE_MAX_RANGE_NAMES distinct, else none */
	size_t distinct = 0;
	uint32_t seen[GP_STAGE_MAX_RANGE_NAMES];
	for (size_t i = 0; i < sg->nranges && !sg->ranges_off; i++) {
		const char *t = gp_an_string(an, sg->ranges[i].name);
		uint32_t k = gp_stage_name(sg, t ? t : "(unnamed)");
		sg->ranges[i].name = k;
		size_t j = 0;
		while (j < distinct && seen[j] != k)
			j++;
		if (j == distinct) {
			if (distinct == GP_STAGE_MAX_RANGE_NAMES)
				sg->ranges_off = 1;
			else
				seen[distinct++] = k;
		}
	}
	uint64_t tb = gp_an_time_base(an);
	sg->t_start = sg->proc_start >= 0 && (uint64_t)sg->proc_start < tb ? (uint64_t)sg->proc_start : tb;
	sg->edges = *gp_an_edges(an);
	sg->t_end = sg->edges.last_activity;
	gp_stage_windows(sg, an);
	gp_stage_compute(sg, an);
	return sg->err;
}

/* ---- pass 2 ---------------------------------------------------------------- */

static void gp_stage_add_to(struct gp_stages *sg, struct gp_map *m, uint64_t key, uint64_t v)
{
	uint64_t *p = gp_map_get(m, key);
	if (p)
		*p += v;
	else
		gp_analysis_fail(&sg->err, gp_map_put(m, key, v));
}

static int gp_stage_record(void *p, const struct gp_an *an, const struct gp_an_rec *v)
{
	struct gp_stages *sg = p;
	if (v->pass == 1) {
		gp_stage_record1(sg, v);
		return sg->err;
	}
	/* pass 2: a runtime call other than a launch, copy or sync */
	if (v->type != GP_REC_RUNTIME_API || v->api.api_class != GP_API_OTHER)
		return sg->err;
	int st = gp_stage_of(sg, v->api.start);
	if (st < 0)
		return sg->err;
	uint64_t *ni = gp_map_get(&sg->api_name, v->api.api_id);
	uint32_t name;
	if (ni) {
		name = (uint32_t)*ni;
	} else {
		const char *n = gp_an_api_name(an, GP_REC_RUNTIME_API, v->api.api_id);
		name = gp_stage_name(sg, n ? n : "(runtime call)");
		gp_analysis_fail(&sg->err, gp_map_put(&sg->api_name, v->api.api_id, name));
	}
	gp_stage_add_to(sg, &sg->stage_call, (uint64_t)st << 32 | name, v->api.end - v->api.start);
	return sg->err;
}

/* Each op's launch + execute into the stage where it began. */
static void gp_stage_op(void *p, const struct gp_an_op *op)
{
	struct gp_stages *sg = p;
	if (op->group == UINT32_MAX)
		return;
	int st = gp_stage_of(sg, op->has_api ? op->api_start : op->gpu_start);
	if (st >= 0)
		gp_stage_add_to(sg, &sg->stage_grp, (uint64_t)st << 32 | op->group, op->launch_ns + op->execute_ns);
}

static int gp_stage_finish(void *p, const struct gp_an *an, const struct gp_rep *rep)
{
	(void)an;
	(void)rep;
	return ((struct gp_stages *)p)->err;
}

/* "what dominates": the largest operator (launch + execute of ops starting in
 * the stage, group index in *g, UINT32_MAX = none) and the largest other
 * CUDA call (names index in *c, UINT32_MAX = none). */
static void gp_stage_dom_find(const struct gp_stages *sg, const struct gp_rep *rep, size_t st, uint32_t *g,
			      uint64_t *gbest, uint32_t *c, uint64_t *cbest)
{
	uint64_t key, v;
	size_t pos = 0;
	*g = *c = UINT32_MAX;
	*gbest = *cbest = 0;
	/* ties go to the lower index: the maps' order changes from run to run */
	while (gp_map_next(&sg->stage_grp, &pos, &key, &v))
		if (key >> 32 == st && (v > *gbest || (v == *gbest && v && (uint32_t)key < *g)) &&
		    (uint32_t)key < rep->ngroups)
			*gbest = v, *g = (uint32_t)key;
	pos = 0;
	while (gp_map_next(&sg->stage_call, &pos, &key, &v))
		if (key >> 32 == st && (v > *cbest || (v == *cbest && v && (uint32_t)key < *c)) &&
		    (uint32_t)key < sg->nnames)
			*cbest = v, *c = (uint32_t)key;
}

/* An upper bound of stage st's time in CUDA: its ops' launch + execute and
 * its other calls' host time, summed (they may overlap). */
static uint64_t gp_stage_cuda_time(const struct gp_stages *sg, size_t st)
{
	uint64_t key, v, sum = 0;
	size_t pos = 0;
	while (gp_map_next(&sg->stage_grp, &pos, &key, &v))
		sum += key >> 32 == st ? v : 0;
	pos = 0;
	while (gp_map_next(&sg->stage_call, &pos, &key, &v))
		sum += key >> 32 == st ? v : 0;
	return sum;
}

/* gp_stage_dominant's md for names left as they are (a JSON string's text). */
#define GP_STAGE_RAW (-1)

/* The "dominated by" text of stage st (one line's tail, no newline). */
static void gp_stage_dominant(FILE *f, const struct gp_stages *sg, const struct gp_rep *rep, size_t st, int md)
{
	const struct gp_stage *s = &sg->stages[st];
	if (!strcmp(s->name, "start-up") && !sg->nvtx_stages) {
		fprintf(f, "host code before the first CUDA call");
		return;
	}
	if (!strcmp(s->name, "before window") && !sg->nvtx_stages) {
		fprintf(f, "not traced (capture began at iteration %lld%s)", (long long)sg->win_iter,
			sg->settled_iter && sg->settled_num <= sg->win_iter
				? "; iteration marks show the warm-up settled before it"
				: "");
		return;
	}
	uint64_t gbest, cbest;
	uint32_t g, c;
	gp_stage_dom_find(sg, rep, st, &g, &gbest, &c, &cbest);
	char b1[32], gb2[32], gb[256], cb[256];
	const char *gn = g != UINT32_MAX ? rep->groups[g].name : NULL, *cn = c != UINT32_MAX ? sg->names[c] : NULL;
	if (md != GP_STAGE_RAW) { /* the names as the text report writes every trace string */
		gn = gn ? gp_fmt_name_buf(gn, md, gb, sizeof gb) : NULL;
		cn = cn ? gp_fmt_name_buf(cn, md, cb, sizeof cb) : NULL;
	}
	if (!gn && !cn) {
		fprintf(f, "host only (no CUDA work)");
		return;
	}
	/* mostly the host's own code (the checks after the last kernel): say
	 * so, not the few microseconds of CUDA in it */
	uint64_t cuda = gp_stage_cuda_time(sg, st);
	if (!sg->nvtx_stages && s->time > 2 * cuda) {
		fprintf(f, "host code outside CUDA calls %s (%.1f%%), then %s %s", gp_fmt_ns((double)(s->time - cuda), b1,
			sizeof b1), gp_fmt_pct(s->time - cuda, s->time), gn && (!cn || gbest >= cbest) ? gn : cn,
			gp_fmt_ns((double)(gn && (!cn || gbest >= cbest) ? gbest : cbest), gb2, sizeof gb2));
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
static uint64_t gp_stage_window(const struct gp_stages *sg, const struct gp_rep *rep, size_t i, int *covered)
{
	const struct gp_stage *s = &sg->stages[i];
	*covered = 0;
	if (sg->nwins) { /* windowed: the listed stages are the captured ones */
		if (!s->time)
			return 0;
		*covered = sg->nvtx_stages || (double)s->time >= 0.01 * (double)(s->end - s->start);
		return sg->nvtx_stages ? s->time : gp_stage_captured(sg, s->start, s->end);
	}
	uint64_t a = s->start > rep->t_first ? s->start : rep->t_first;
	uint64_t b = s->end < rep->t_last ? s->end : rep->t_last;
	if (b <= a)
		return 0;
	if (strcmp(s->name, "before window"))
		*covered = sg->nvtx_stages || (double)(b - a) >= 0.01 * (double)(s->end - s->start);
	return b - a;
}

/* A windowed capture: the run's time the windows left out, one line. */
static void gp_stage_uncaptured(FILE *f, const struct gp_stages *sg, int md)
{
	char b1[32];
	if (!sg->before && !sg->between && !sg->after)
		return;
	fprintf(f, "%snot captured:", md ? "- " : "  ");
	const char *sep = "";
	if (sg->before) {
		fprintf(f, " %s before the first window", gp_fmt_ns((double)sg->before, b1, sizeof b1));
		if (sg->win_iter > 0)
			fprintf(f, " (the run up to iteration %lld%s)", (long long)sg->win_iter,
				sg->settled_iter && sg->settled_num <= sg->win_iter
					? "; iteration marks show the warm-up settled before it"
					: "");
		sep = ",";
	}
	if (sg->between) {
		fprintf(f, "%s %s between the windows", sep, gp_fmt_ns((double)sg->between, b1, sizeof b1));
		sep = ",";
	}
	if (sg->after)
		fprintf(f, "%s %s after the last", sep, gp_fmt_ns((double)sg->after, b1, sizeof b1));
	fprintf(f, "\n");
}

static void gp_stage_text(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *style)
{
	const struct gp_stages *sg = p;
	int md = style->markdown;
	if (!sg->nstages)
		return;
	fprintf(f, md ? "\n## Stages\n\n" : "\nStages\n");
	char b1[32], nb[256];
	if (sg->nwins == 1)
		fprintf(f, "%sover the capture window only (%s; shares are of that time)\n", md ? "" : "  ",
			gp_fmt_ns((double)sg->wall, b1, sizeof b1));
	else if (sg->nwins)
		fprintf(f, "%sover the %zu capture windows only (%s; shares are of that time)\n", md ? "" : "  ",
			sg->nwins, gp_fmt_ns((double)sg->wall, b1, sizeof b1));
	if (sg->nvtx_stages)
		fprintf(f, "%sstages named by the program's top-level NVTX ranges\n", md ? "" : "  ");
	double total = (double)sg->wall;
	for (size_t i = 0; i < sg->nstages; i++) {
		const struct gp_stage *s = &sg->stages[i];
		fprintf(f, "%s%-12s %10s %5.1f%%", md ? "- " : "  ", gp_fmt_name_buf(s->name, md, nb, sizeof nb), gp_fmt_ns((double)s->time, b1, sizeof b1),
			100.0 * (double)s->time / total);
		if (sg->nvtx_stages)
			fprintf(f, " (%zu ranges)", s->count);
		else if (!strcmp(s->name, "warm-up"))
			fprintf(f, " (%zu iteration%s)", s->count, s->count == 1 ? "" : "s");
		fprintf(f, "  dominated by: ");
		gp_stage_dominant(f, sg, rep, i, md);
		fprintf(f, "\n");
	}
	if (sg->nwins)
		gp_stage_uncaptured(f, sg, md);
	/* which stages the capture window covered */
	fprintf(f, "%swindow %s covered:", md ? "- " : "  ", gp_fmt_ns((double)rep->wall_ns, b1, sizeof b1));
	size_t nc = 0;
	for (size_t i = 0; i < sg->nstages; i++) {
		const struct gp_stage *s = &sg->stages[i];
		int cov;
		uint64_t in = gp_stage_window(sg, rep, i, &cov);
		if (!cov)
			continue;
		if (sg->nvtx_stages)
			fprintf(f, "%s %s", nc++ ? "," : "", gp_fmt_name_buf(s->name, md, nb, sizeof nb));
		else
			fprintf(f, "%s %s (%.0f%%)", nc++ ? "," : "", gp_fmt_name_buf(s->name, md, nb, sizeof nb),
				100.0 * (double)in / (double)(s->end - s->start));
	}
	if (!nc)
		fprintf(f, " none of the stages");
	if (sg->win_iter > 0)
		fprintf(f, "; capture began at iteration %lld of the run (earlier stages not traced)",
			(long long)sg->win_iter);
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

static void gp_stage_json(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *style)
{
	const struct gp_stages *sg = p;
	(void)style;
	uint64_t traced = sg->wall;
	fprintf(f, "{\"named_by\": \"%s\", \"traced_ns\": %llu, \"settled_after_iterations\": %zu, \"items\": [",
		sg->nvtx_stages ? "nvtx" : "run", (unsigned long long)traced, sg->settled_iter);
	for (size_t i = 0; i < sg->nstages; i++) {
		const struct gp_stage *s = &sg->stages[i];
		int cov;
		uint64_t in = gp_stage_window(sg, rep, i, &cov);
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		gp_fmt_json_str(f, s->name);
		fprintf(f, ", \"start_ns\": %llu, \"end_ns\": %llu, \"time_ns\": %llu, \"share\": ",
			(unsigned long long)s->start, (unsigned long long)s->end, (unsigned long long)s->time);
		gp_fmt_json_num(f, traced ? (double)s->time / (double)traced : 0);
		fprintf(f, ", \"count\": %zu, \"dominant_operator\": ", s->count);
		/* start-up and "before window" are not CUDA work: no dominant op */
		int host = !sg->nvtx_stages && (!strcmp(s->name, "start-up") || !strcmp(s->name, "before window"));
		uint64_t gbest = 0, cbest = 0;
		uint32_t g = UINT32_MAX, c = UINT32_MAX;
		if (!host)
			gp_stage_dom_find(sg, rep, i, &g, &gbest, &c, &cbest);
		gp_stage_json_dom(f, g != UINT32_MAX ? rep->groups[g].name : NULL, gbest);
		fputs(", \"dominant_call\": ", f);
		gp_stage_json_dom(f, c != UINT32_MAX ? sg->names[c] : NULL, cbest);
		fputs(", \"dominated_by\": ", f);
		char *buf = NULL;
		size_t len = 0;
		FILE *mf = open_memstream(&buf, &len);
		if (mf) {
			gp_stage_dominant(mf, sg, rep, i, GP_STAGE_RAW); /* the JSON string escapes it */
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
	for (size_t i = 0; i < sg->nstages; i++) {
		int cov;
		gp_stage_window(sg, rep, i, &cov);
		if (!cov)
			continue;
		fputs(nc++ ? ", " : "", f);
		gp_fmt_json_str(f, sg->stages[i].name);
	}
	fputs("], \"began_at_iteration\": ", f);
	if (sg->win_iter > 0)
		fprintf(f, "%lld", (long long)sg->win_iter);
	else
		fputs("null", f);
	if (sg->nwins)
		fprintf(f, ", \"windows\": %zu, \"not_captured\": {\"before_ns\": %llu, \"between_ns\": %llu, "
			   "\"after_ns\": %llu}",
			sg->nwins, (unsigned long long)sg->before, (unsigned long long)sg->between,
			(unsigned long long)sg->after);
	fputs("}}", f);
}

/* One bar of the stages timeline: [a, b) (trace clock) of stage i. */
static void gp_stage_bar(FILE *f, const struct gp_stages *sg, size_t i, uint64_t a, uint64_t b, int y)
{
	static const char *const colors[] = { "#8c8c8c", "#e4a33a", "#9b6ad6", "#3a7be4", "#5cb85c", "#d9534f" };
	const int left = 200, width = 680, lane = 20;
	const struct gp_stage *s = &sg->stages[i];
	double span = (double)(sg->t_end - sg->t_start);
	uint64_t x0 = a > sg->t_start ? a - sg->t_start : 0, x1 = b > sg->t_start ? b - sg->t_start : 0;
	double x = left + (double)width * (double)x0 / span, w = (double)width * (double)(x1 - x0) / span;
	if (x + w > left + width)
		w = left + width - x;
	char tip[512], nb[256];
	snprintf(tip, sizeof tip, "%s\nfrom %.3f ms to %.3f ms\ncovers %.3f ms (%.1f%% of the %s time)",
		 gp_fmt_name_buf(s->name, 0, nb, sizeof nb),
		 (double)(s->start > sg->t_start ? s->start - sg->t_start : 0) / 1e6,
		 (double)(s->end > sg->t_start ? s->end - sg->t_start : 0) / 1e6, (double)s->time / 1e6,
		 sg->wall ? 100.0 * (double)s->time / (double)sg->wall : 0, sg->nwins ? "captured" : "traced");
	fprintf(f, "<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='%s' data-tip='", x, y + 2, w > 1 ? w : 1,
		lane - 4, colors[i % 6]);
	gp_fmt_html_block(f, tip, 1);
	fputs("'><title>", f);
	gp_fmt_html_block(f, tip, 0);
	fputs("</title></rect>\n", f);
}

/* HTML: the stages as a labelled timeline: one lane per stage, its bar from
 * its start to its end on a time axis (ms from the trace's start) — in a
 * windowed capture, its captured parts only —, every number in a tooltip
 * (data-tip, shown by the page's script; <title> for a reader without it). */
static void gp_stage_figure(FILE *f, const void *p)
{
	const struct gp_stages *sg = p;
	double total = (double)(sg->t_end - sg->t_start);
	if (!sg->nstages || total <= 0)
		return;
	const int left = 200, width = 680, lane = 20;
	int h = (int)sg->nstages * lane + 40;
	fprintf(f, "<svg class='stages' xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif' "
		   "font-size='12'>\n", left + width + 20, h);
	for (size_t i = 0; i < sg->nstages; i++) {
		const struct gp_stage *s = &sg->stages[i];
		int y = (int)i * lane;
		fprintf(f, "<text x='%d' y='%d' text-anchor='end'>", left - 6, y + 14);
		gp_fmt_html_str(f, s->name);
		fputs("</text>\n", f);
		if (!sg->nwins) {
			gp_stage_bar(f, sg, i, s->start, s->end, y);
			continue;
		}
		for (size_t k = 0; k < sg->nwins; k++) {
			uint64_t a = sg->wins[k].start > s->start ? sg->wins[k].start : s->start;
			uint64_t b = sg->wins[k].stop < s->end ? sg->wins[k].stop : s->end;
			if (b > a)
				gp_stage_bar(f, sg, i, a, b, y);
		}
	}
	int y0 = (int)sg->nstages * lane + 2;
	fprintf(f, "<line x1='%d' x2='%d' y1='%d' y2='%d' stroke='#888'/>\n", left, left + width, y0, y0);
	for (int k = 0; k <= 5; k++) {
		double x = left + width * k / 5.0;
		fprintf(f, "<line x1='%.1f' x2='%.1f' y1='%d' y2='%d' stroke='#888'/><text x='%.1f' y='%d' "
			   "text-anchor='middle' font-size='11'>%.2f ms</text>\n",
			x, x, y0, y0 + 4, x, y0 + 16, total * k / 5.0 / 1e6);
	}
	fprintf(f, "<text x='%d' y='%d' text-anchor='middle' font-size='11'>time since the trace started</text>\n",
		left + width / 2, y0 + 32);
	fputs("</svg>\n", f);
}

/* ---- partial results ------------------------------------------------------------- */

/* What the section reads: the stages, the names, the sums per stage. */
static int gp_stage_save(const void *p, struct gp_pw *w)
{
	const struct gp_stages *sg = p;
	gp_pw_u64(w, sg->t_start);
	gp_pw_u64(w, sg->t_end);
	gp_pw_i64(w, sg->win_iter);
	gp_pw_u64(w, sg->settled_iter);
	gp_pw_i64(w, sg->settled_num);
	gp_pw_u8(w, sg->nvtx_stages != 0);
	gp_pw_u64(w, sg->wall);
	gp_pw_u64(w, sg->before);
	gp_pw_u64(w, sg->between);
	gp_pw_u64(w, sg->after);
	gp_pw_u64(w, sg->nwins);
	for (size_t i = 0; i < sg->nwins; i++) {
		gp_pw_u64(w, sg->wins[i].start);
		gp_pw_u64(w, sg->wins[i].stop);
	}
	gp_pw_u64(w, sg->nnames);
	for (size_t i = 0; i < sg->nnames; i++)
		gp_pw_str(w, sg->names[i]);
	gp_pw_u64(w, sg->nstages);
	for (size_t i = 0; i < sg->nstages; i++) {
		const struct gp_stage *s = &sg->stages[i];
		gp_pw_str(w, s->name);
		gp_pw_u64(w, s->start);
		gp_pw_u64(w, s->end);
		gp_pw_u64(w, s->time);
		gp_pw_u64(w, s->count);
		gp_pw_u32(w, s->nvtx);
	}
	gp_pw_map(w, &sg->stage_grp);
	gp_pw_map(w, &sg->stage_call);
	return w->err;
}

static int gp_stage_load(void *p, struct gp_pr *r, struct gp_strtab *strings)
{
	struct gp_stages *sg = p;
	sg->t_start = gp_pr_u64(r);
	sg->t_end = gp_pr_u64(r);
	sg->win_iter = gp_pr_i64(r);
	uint64_t settled = gp_pr_u64(r);
	sg->settled_iter = settled > SIZE_MAX ? SIZE_MAX : (size_t)settled;
	sg->settled_num = gp_pr_i64(r);
	sg->nvtx_stages = gp_pr_bool(r);
	sg->wall = gp_pr_u64(r);
	sg->before = gp_pr_u64(r);
	sg->between = gp_pr_u64(r);
	sg->after = gp_pr_u64(r);
	size_t nw = gp_pr_count(r, 16, UINT32_MAX);
	if (nw && !r->err && !(sg->wins = calloc(nw, sizeof *sg->wins)))
		gp_pr_oom(r);
	for (size_t i = 0; i < nw && !r->err; i++) {
		sg->wins[i].start = gp_pr_u64(r);
		sg->wins[i].stop = gp_pr_u64(r);
		sg->nwins = i + 1;
	}
	size_t nn = gp_pr_count(r, 4, UINT32_MAX - 1);
	if (nn && !r->err && !(sg->names = calloc(nn, sizeof *sg->names)))
		gp_pr_oom(r);
	for (size_t i = 0; i < nn && !r->err; i++) {
		sg->names[i] = gp_pr_intern_req(r, strings);
		sg->nnames = sg->capnames = i + 1;
	}
	size_t ns = gp_pr_count(r, 40, GP_STAGE_MAX);
	for (size_t i = 0; i < ns && !r->err; i++) {
		struct gp_stage *s = &sg->stages[i];
		s->name = gp_pr_intern_req(r, strings);
		s->start = gp_pr_u64(r);
		s->end = gp_pr_u64(r);
		s->time = gp_pr_u64(r);
		s->count = (size_t)gp_pr_u64(r);
		s->nvtx = gp_pr_u32(r);
		sg->nstages = i + 1;
	}
	gp_pr_map(r, &sg->stage_grp);
	gp_pr_map(r, &sg->stage_call);
	return r->err;
}

const struct gp_analysis gp_analysis_stages = {
	.name = "stages",
	.title = "Stages",
	.types = { GP_AN_TYPE(GP_REC_STATUS) | GP_AN_TYPE(GP_REC_WINDOW) | GP_AN_TYPE(GP_REC_MARKER),
		   GP_AN_TYPE(GP_REC_RUNTIME_API) },
	.api_classes = GP_AN_CLASS(GP_API_OTHER),
	.create = gp_stage_create,
	.record = gp_stage_record,
	.prepare = gp_stage_prepare,
	.op = gp_stage_op,
	.finish = gp_stage_finish,
	.text = gp_stage_text,
	.json = gp_stage_json,
	.figure = gp_stage_figure,
	.destroy = gp_stage_destroy,
	.save = gp_stage_save,
	.load = gp_stage_load,
};
