/*
 * host.c — the "Host conditions" analysis: host CPU load and the
 * process's own CPU use sampled by the capture library (GP_REC_HOST_SAMPLE,
 * libgpuphase/hostload.c), the operators whose launch-phase numbers were
 * taken while the host was more than GP_HOST_BUSY_PCT busy (launch times are
 * inflated by a loaded host), and the profiler's estimated self-overhead in
 * the window (hooked calls x measured hook cost + CUPTI buffer time + CUPTI's
 * own time inside the traced calls, from its overhead records or the
 * library's calibration (the core's gp_rep.cupti) + the calibration itself,
 * and drops) with a warning above GP_OVERHEAD_WARN_PCT. Pass 1 keeps the
 * samples and the measured hook cost, prepare takes the number of hooked
 * calls from the core, each op's launch time taken inside a busy
 * interval is summed per operator, and finish sums the samples (what
 * partial results keep); the section and its JSON
 * object ("host_conditions", docs/report-json.md) follow. A plug-in of
 * registry.h; report thread only. docs/metrics.md "Host conditions" defines
 * the numbers.
 */
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "report/util/fmt.h"

#define GP_HOST_BUSY_PCT 50.0     /* a sample interval is "busy" above this */
#define GP_HOST_FLAG_SHARE 0.5    /* flag an operator when this share of its
				     launch time was measured while busy      */
#define GP_OVERHEAD_WARN_PCT 5.0  /* self-overhead warning threshold         */

struct gp_host_sample {
	uint64_t ts, interval_ns, cupti_ns;
	uint32_t busy_pm, proc_pm;
};

/* Per operator (core group index): launch time and calls, and those taken
 * while the host was busy. */
struct gp_host_op {
	uint64_t launch_all, launch_busy, calls_all, calls_busy;
};

/* Time-weighted means over the samples and the self-overhead inputs. */
struct gp_host_sum {
	double busy_mean, busy_max, proc_mean, busy_share; /* pct, pct, pct, fraction */
	uint64_t cupti_ns;     /* CUPTI buffer time: the largest cumulative sample */
	uint64_t in_calls_ns;  /* CUPTI's own time inside traced calls (0 unknown) */
	uint64_t calib_ns;     /* the library's calibration of that cost         */
	double hooks_ns, est_ns, pct; /* valid when hook_cost_ns >= 0              */
};

struct gp_host {
	int err;
	struct gp_host_sample *hosts; /* sorted by ts after prepare          */
	size_t nhosts, caphosts;
	int64_t hook_cost_ns;         /* -1 = not measured by the library       */
	uint64_t hook_calls;          /* hook records in the trace (the core's count) */
	uint64_t cupti_instr_ns;      /* CUPTI's time inside traced calls (its
					 INSTRUMENTATION overhead records)       */
	int have_ovh;                 /* the trace has CUPTI overhead records    */
	struct gp_host_op *grp;
	size_t ngrp;
	/* the samples summed at finish (or read from partial results, which
	 * keep these sums, not the samples): busy_mean .. cupti_ns */
	int summed;
	struct gp_host_sum smp;
};

static void *gp_host_create(const struct gp_analysis_env *env)
{
	(void)env;
	struct gp_host *h = calloc(1, sizeof *h);
	if (h)
		h->hook_cost_ns = -1;
	return h;
}

static void gp_host_destroy(void *p)
{
	struct gp_host *h = p;
	free(h->hosts);
	free(h->grp);
	free(h);
}

static int gp_host_record(void *p, const struct gp_an *an, const struct gp_an_rec *v)
{
	struct gp_host *h = p;
	(void)an;
	if (v->type == GP_REC_STATUS) {
		if (v->status.kind == GP_STATUS_HOOK_COST)
			h->hook_cost_ns = v->status.value;
		else if (v->status.kind == GP_STATUS_CUPTI_OVERHEAD)
			h->have_ovh = 1;
	} else if (v->type == GP_REC_OVERHEAD) {
		h->have_ovh = 1;
		if (v->overhead.kind == GP_OVH_INSTRUMENTATION && v->overhead.end > v->overhead.start)
			h->cupti_instr_ns += v->overhead.end - v->overhead.start;
	} else if (GP_AN_GROW(h->hosts, h->nhosts, h->caphosts)) { /* a host sample */
		gp_analysis_fail(&h->err, -ENOMEM);
	} else {
		h->hosts[h->nhosts++] = (struct gp_host_sample){ .ts = v->host.ts, .interval_ns = v->host.interval_ns,
								 .cupti_ns = v->host.cupti_ns,
								 .busy_pm = v->host.busy_pm,
								 .proc_pm = v->host.proc_pm };
	}
	return h->err;
}

static int gp_host_cmp(const void *a, const void *b)
{
	const struct gp_host_sample *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int gp_host_prepare(void *p, const struct gp_an *an)
{
	struct gp_host *h = p;
	if (h->nhosts) /* qsort(NULL, 0) is undefined (UBSan: nonnull) */
		qsort(h->hosts, h->nhosts, sizeof *h->hosts, gp_host_cmp);
	h->hook_calls = gp_an_record_count(an, GP_REC_HOOK_API);
	return h->err;
}

/* Is time t inside a sample interval with host busy > 50 %? Samples are
 * sorted by ts; sample i covers (ts - interval, ts]. */
static int gp_host_busy_at(const struct gp_host *h, uint64_t t)
{
	size_t lo = 0, hi = h->nhosts;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (h->hosts[mid].ts < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == h->nhosts)
		return 0;
	const struct gp_host_sample *s = &h->hosts[lo];
	return s->ts - s->interval_ns <= t && s->busy_pm > 500;
}

static void gp_host_op(void *p, const struct gp_an_op *op)
{
	struct gp_host *h = p;
	if (op->group == UINT32_MAX || !(op->has_api && op->launch_ns))
		return;
	if (gp_an_grow_zeroed((void **)&h->grp, &h->ngrp, op->group, sizeof *h->grp))
		return gp_analysis_fail(&h->err, -ENOMEM);
	struct gp_host_op *g = &h->grp[op->group];
	g->launch_all += op->launch_ns;
	g->calls_all++;
	if (gp_host_busy_at(h, op->api_start)) {
		g->launch_busy += op->launch_ns;
		g->calls_busy++;
	}
}

static int gp_host_busy(const struct gp_host_sample *h)
{
	return h->busy_pm / 10.0 > GP_HOST_BUSY_PCT;
}

/* Time-weighted means over the samples, the largest busy sample and CUPTI
 * buffer time (the largest cumulative sample): the sample fields of a
 * gp_host_sum. */
static struct gp_host_sum gp_host_sum_samples(const struct gp_host *h)
{
	struct gp_host_sum r = { 0 };
	if (h->summed)
		return h->smp;
	double busy_w = 0, proc_w = 0, w = 0, busy_time = 0;
	for (size_t i = 0; i < h->nhosts; i++) {
		const struct gp_host_sample *smp = &h->hosts[i];
		double iv = (double)smp->interval_ns;
		busy_w += iv * smp->busy_pm / 10.0;
		proc_w += iv * smp->proc_pm / 10.0;
		w += iv;
		if (gp_host_busy(smp))
			busy_time += iv;
		if (smp->busy_pm / 10.0 > r.busy_max)
			r.busy_max = smp->busy_pm / 10.0;
		if (smp->cupti_ns > r.cupti_ns)
			r.cupti_ns = smp->cupti_ns;
	}
	if (w > 0) {
		r.busy_mean = busy_w / w;
		r.proc_mean = proc_w / w;
		r.busy_share = busy_time / w;
	}
	return r;
}

static int gp_host_finish(void *p, const struct gp_an *an, const struct gp_rep *rep)
{
	struct gp_host *h = p;
	(void)an;
	(void)rep;
	h->smp = gp_host_sum_samples(h);
	h->summed = 1;
	return h->err;
}

/* The sums and the self-overhead estimate. */
static struct gp_host_sum gp_host_summarise(const struct gp_host *h, const struct gp_rep *rep)
{
	struct gp_host_sum r = gp_host_sum_samples(h);
	/* CUPTI in calls: the core's figure (records or calibration, metrics.md
	 * §3); the records' own sum where the core has none */
	r.in_calls_ns = rep->cupti.source ? rep->cupti.in_calls_ns : h->cupti_instr_ns;
	r.calib_ns = rep->cupti.calib_dur_ns;
	if (h->hook_cost_ns >= 0) {
		double wall = (double)rep->wall_ns;
		r.hooks_ns = (double)h->hook_calls * (double)h->hook_cost_ns;
		r.est_ns = r.hooks_ns + (double)r.cupti_ns + (double)r.in_calls_ns + (double)r.calib_ns;
		r.pct = wall > 0 ? 100.0 * r.est_ns / wall : 0;
	}
	return r;
}

/* Operator g's launch numbers were mostly taken on a busy host. */
static int gp_host_flagged(const struct gp_host *h, size_t g)
{
	const struct gp_host_op *x = &h->grp[g];
	return x->launch_all && (double)x->launch_busy >= GP_HOST_FLAG_SHARE * (double)x->launch_all;
}

static void gp_host_text(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *style)
{
	const struct gp_host *h = p;
	int md = style->markdown;
	char b1[32], b2[32], b3[32], nb[256];
	const char *ind = md ? "- " : "  ";
	struct gp_host_sum sum = gp_host_summarise(h, rep);
	fprintf(f, md ? "\n## Host conditions\n\n" : "\nHost conditions\n");
	if (!h->nhosts) {
		fprintf(f, "%shost load: not sampled in this trace\n", ind);
	} else {
		fprintf(f, "%shost CPU busy: mean %.1f%%, max %.1f%% of all CPUs over %zu samples; this process: mean "
			   "%.1f%% of one CPU; host > %.0f%% busy during %.1f%% of the sampled time\n",
			ind, sum.busy_mean, sum.busy_max, h->nhosts, sum.proc_mean, GP_HOST_BUSY_PCT, 100.0 * sum.busy_share);
		/* per operator: launch time taken inside busy intervals (gp_host_op) */
		size_t nflag = 0;
		for (size_t g = 0; g < rep->ngroups && g < h->ngrp; g++) {
			const struct gp_host_op *x = &h->grp[g];
			if (!gp_host_flagged(h, g))
				continue;
			if (style->top && nflag >= style->top) { /* --top N: the first N */
				nflag++;
				continue;
			}
			fprintf(f, "%swarning: %s: launch numbers taken while the host was > %.0f%% busy (%llu of %llu "
				   "launch calls, %.0f%% of its launch time): launch times are inflated\n",
				ind, gp_fmt_name_buf(rep->groups[g].name, md, nb, sizeof nb), GP_HOST_BUSY_PCT, (unsigned long long)x->calls_busy,
				(unsigned long long)x->calls_all, 100.0 * (double)x->launch_busy / (double)x->launch_all);
			nflag++;
		}
		if (!nflag)
			fprintf(f, "%slaunch numbers: none of the operators' launch times were mostly taken on a busy "
				   "host\n", ind);
	}
	/* self-overhead */
	if (h->hook_cost_ns < 0) {
		fprintf(f, "%sself-overhead: hook cost not measured in this trace; %llu hooked calls, %llu records "
			   "dropped\n", ind, (unsigned long long)h->hook_calls, (unsigned long long)rep->dropped_records);
		return;
	}
	/* what the estimate holds: CUPTI's time inside the calls only where the
	 * trace says it (its records, or the library's calibration) */
	char b4[32], b5[32], instr[192] = "";
	if (rep->cupti.source == 2 || (rep->cupti.source != 1 && rep->cupti.calibrated))
		snprintf(instr, sizeof instr, " + CUPTI in calls %s (calibrated) + the calibration %s",
			 gp_fmt_ns((double)sum.in_calls_ns, b4, sizeof b4), gp_fmt_ns((double)sum.calib_ns, b5, sizeof b5));
	else if (rep->cupti.source == 1 || h->have_ovh)
		snprintf(instr, sizeof instr, " + CUPTI in calls %s%s%s", gp_fmt_ns((double)sum.in_calls_ns, b4, sizeof b4),
			 sum.calib_ns ? " + the calibration " : "",
			 sum.calib_ns ? gp_fmt_ns((double)sum.calib_ns, b5, sizeof b5) : "");
	else if (rep->cupti_ok && !rep->cupti_unavailable)
		snprintf(instr, sizeof instr, " (CUPTI's time inside the calls not known: no overhead records, no "
					      "calibration)");
	fprintf(f, "%sself-overhead (estimate of the time the profiler added): %s = %llu hooked calls x %lldns + "
		   "CUPTI buffer time %s%s; %.2f%% of the window %s; %llu records dropped\n",
		ind, gp_fmt_ns(sum.est_ns, b1, sizeof b1), (unsigned long long)h->hook_calls, (long long)h->hook_cost_ns,
		gp_fmt_ns((double)sum.cupti_ns, b2, sizeof b2), instr, sum.pct,
		gp_fmt_ns((double)rep->wall_ns, b3, sizeof b3), (unsigned long long)rep->dropped_records);
	if (sum.pct > GP_OVERHEAD_WARN_PCT)
		fprintf(f, "%swarning: the profiler's own estimated cost (%.1f%% of the window) exceeds %.0f%%: "
			   "differences of that size are not trustworthy\n", ind, sum.pct, GP_OVERHEAD_WARN_PCT);
	if (rep->dropped_records)
		fprintf(f, "%swarning: %llu records were dropped: sums undercount\n", ind,
			(unsigned long long)rep->dropped_records);
}

static void gp_host_json(FILE *f, const void *p, const struct gp_rep *rep, const struct gp_analysis_style *style)
{
	const struct gp_host *h = p;
	(void)style;
	struct gp_host_sum sum = gp_host_summarise(h, rep);
	fprintf(f, "{\"sampled\": %s, \"samples\": %zu, \"busy_threshold_pct\": %g",
		h->nhosts ? "true" : "false", h->nhosts, GP_HOST_BUSY_PCT);
	if (h->nhosts) {
		fputs(", \"host_cpu_busy_mean_pct\": ", f);
		gp_fmt_json_num(f, sum.busy_mean);
		fputs(", \"host_cpu_busy_max_pct\": ", f);
		gp_fmt_json_num(f, sum.busy_max);
		fputs(", \"process_cpu_mean_pct\": ", f);
		gp_fmt_json_num(f, sum.proc_mean);
		fputs(", \"busy_time_share\": ", f);
		gp_fmt_json_num(f, sum.busy_share);
	}
	fputs(", \"busy_launch_operators\": [", f);
	size_t n = 0;
	for (size_t g = 0; h->nhosts && g < rep->ngroups && g < h->ngrp; g++) {
		const struct gp_host_op *x = &h->grp[g];
		if (!gp_host_flagged(h, g))
			continue;
		fprintf(f, "%s{\"name\": ", n++ ? ", " : "");
		gp_fmt_json_str(f, rep->groups[g].name);
		fprintf(f, ", \"launch_calls\": %llu, \"launch_calls_busy\": %llu, \"launch_ns\": %llu, "
			   "\"launch_busy_ns\": %llu}",
			(unsigned long long)x->calls_all, (unsigned long long)x->calls_busy,
			(unsigned long long)x->launch_all, (unsigned long long)x->launch_busy);
	}
	fprintf(f, "],\n   \"self_overhead\": {\"hooked_calls\": %llu, \"hook_cost_ns\": ",
		(unsigned long long)h->hook_calls);
	if (h->hook_cost_ns < 0) {
		fputs("null, \"cupti_buffer_ns\": ", f);
		fprintf(f, "%llu, \"estimate_ns\": null, \"window_share\": null, \"warning\": false",
			(unsigned long long)sum.cupti_ns);
	} else {
		fprintf(f, "%lld, \"cupti_buffer_ns\": %llu, \"estimate_ns\": ", (long long)h->hook_cost_ns,
			(unsigned long long)sum.cupti_ns);
		gp_fmt_json_num(f, sum.est_ns);
		fputs(", \"window_share\": ", f);
		gp_fmt_json_num(f, sum.pct / 100.0);
		fprintf(f, ", \"warning\": %s", sum.pct > GP_OVERHEAD_WARN_PCT ? "true" : "false");
	}
	if (h->have_ovh)
		fprintf(f, ", \"cupti_instrumentation_ns\": %llu", (unsigned long long)h->cupti_instr_ns);
	if (rep->cupti.source || rep->cupti.calibrated) {
		static const char *const src[] = { "none", "records", "calibration" };
		fprintf(f, ", \"cupti_in_calls_ns\": %llu, \"cupti_in_calls_source\": \"%s\", \"calibration_ns\": %llu",
			(unsigned long long)sum.in_calls_ns, src[rep->cupti.source > 2 ? 0 : rep->cupti.source],
			(unsigned long long)sum.calib_ns);
	}
	fprintf(f, ", \"warn_above_pct\": %g, \"dropped_records\": %llu}}", GP_OVERHEAD_WARN_PCT,
		(unsigned long long)rep->dropped_records);
}

/* Partial results: the sample sums (not the samples), the overhead inputs,
 * the per-operator launch sums. */
static int gp_host_save(const void *p, struct gp_pw *w)
{
	const struct gp_host *h = p;
	struct gp_host_sum smp = gp_host_sum_samples(h);
	gp_pw_u64(w, h->nhosts);
	gp_pw_f64(w, smp.busy_mean);
	gp_pw_f64(w, smp.busy_max);
	gp_pw_f64(w, smp.proc_mean);
	gp_pw_f64(w, smp.busy_share);
	gp_pw_u64(w, smp.cupti_ns);
	gp_pw_i64(w, h->hook_cost_ns);
	gp_pw_u64(w, h->hook_calls);
	gp_pw_u64(w, h->cupti_instr_ns);
	gp_pw_u8(w, h->have_ovh != 0);
	gp_pw_u64(w, h->ngrp);
	for (size_t g = 0; g < h->ngrp; g++) {
		gp_pw_u64(w, h->grp[g].launch_all);
		gp_pw_u64(w, h->grp[g].launch_busy);
		gp_pw_u64(w, h->grp[g].calls_all);
		gp_pw_u64(w, h->grp[g].calls_busy);
	}
	return w->err;
}

static int gp_host_load(void *p, struct gp_pr *r, struct gp_strtab *strings)
{
	struct gp_host *h = p;
	(void)strings;
	uint64_t n = gp_pr_u64(r);
	h->nhosts = n > SIZE_MAX ? SIZE_MAX : (size_t)n; /* a count: no samples are kept */
	h->smp.busy_mean = gp_pr_f64(r);
	h->smp.busy_max = gp_pr_f64(r);
	h->smp.proc_mean = gp_pr_f64(r);
	h->smp.busy_share = gp_pr_f64(r);
	h->smp.cupti_ns = gp_pr_u64(r);
	h->hook_cost_ns = gp_pr_i64(r);
	h->hook_calls = gp_pr_u64(r);
	h->cupti_instr_ns = gp_pr_u64(r);
	h->have_ovh = gp_pr_bool(r);
	h->summed = 1;
	size_t ng = gp_pr_count(r, 32, UINT32_MAX);
	if (ng && !r->err && !(h->grp = calloc(ng, sizeof *h->grp)))
		gp_pr_oom(r);
	for (size_t g = 0; g < ng && !r->err; g++) {
		h->grp[g].launch_all = gp_pr_u64(r);
		h->grp[g].launch_busy = gp_pr_u64(r);
		h->grp[g].calls_all = gp_pr_u64(r);
		h->grp[g].calls_busy = gp_pr_u64(r);
		h->ngrp = g + 1;
	}
	return r->err;
}

const struct gp_analysis gp_analysis_host = {
	.name = "host_conditions",
	.title = "Host conditions and self-overhead",
	.types = { GP_AN_TYPE(GP_REC_HOST_SAMPLE) | GP_AN_TYPE(GP_REC_STATUS) | GP_AN_TYPE(GP_REC_OVERHEAD), 0 },
	.create = gp_host_create,
	.record = gp_host_record,
	.prepare = gp_host_prepare,
	.op = gp_host_op,
	.finish = gp_host_finish,
	.text = gp_host_text,
	.json = gp_host_json,
	.destroy = gp_host_destroy,
	.save = gp_host_save,
	.load = gp_host_load,
};
