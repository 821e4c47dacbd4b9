/*
 * hostload.c — the "Host conditions" section: host CPU load and the
 * process's own CPU use sampled by the capture library (GP_REC_HOST_SAMPLE,
 * libgpuphase/hostload.c), the operators whose launch-phase numbers were
 * taken while the host was more than GP_HOST_BUSY_PCT busy (launch times are
 * inflated by a loaded host), and the profiler's estimated self-overhead in
 * the window (hooked calls x measured hook cost + CUPTI buffer time, and
 * drops) with a warning above GP_OVERHEAD_WARN_PCT. Called by gp_xa_print on
 * the report thread; gp_xa_json_host writes the same numbers as JSON
 * ("host_conditions", docs/report-json.md). docs/metrics.md "Host
 * conditions" defines the numbers.
 */
#include <stdlib.h>
#include <string.h>

#include "xa.h"

#define GP_HOST_BUSY_PCT 50.0     /* a sample interval is "busy" above this
				     (xa.c classifies each op with it)        */
#define GP_HOST_FLAG_SHARE 0.5    /* flag an operator when this share of its
				     launch time was measured while busy      */
#define GP_OVERHEAD_WARN_PCT 5.0  /* self-overhead warning threshold         */

static int gp_host_busy(const struct gp_xa_host *h)
{
	return h->busy_pm / 10.0 > GP_HOST_BUSY_PCT;
}

/* Time-weighted means over the samples and the self-overhead inputs. */
struct gp_host_sum {
	double busy_mean, busy_max, proc_mean, busy_share; /* pct, pct, pct, fraction */
	uint64_t cupti_ns;     /* CUPTI buffer time: the largest cumulative sample */
	double hooks_ns, est_ns, pct; /* valid when xa->hook_cost_ns >= 0           */
};

static struct gp_host_sum gp_host_summarise(const struct gp_xa *xa, const struct gp_rep *rep)
{
	struct gp_host_sum r = { 0 };
	double busy_w = 0, proc_w = 0, w = 0, busy_time = 0;
	for (size_t i = 0; i < xa->nhosts; i++) {
		const struct gp_xa_host *h = &xa->hosts[i];
		double iv = (double)h->interval_ns;
		busy_w += iv * h->busy_pm / 10.0;
		proc_w += iv * h->proc_pm / 10.0;
		w += iv;
		if (gp_host_busy(h))
			busy_time += iv;
		if (h->busy_pm / 10.0 > r.busy_max)
			r.busy_max = h->busy_pm / 10.0;
		if (h->cupti_ns > r.cupti_ns)
			r.cupti_ns = h->cupti_ns;
	}
	if (w > 0) {
		r.busy_mean = busy_w / w;
		r.proc_mean = proc_w / w;
		r.busy_share = busy_time / w;
	}
	if (xa->hook_cost_ns >= 0) {
		double wall = (double)rep->wall_ns;
		r.hooks_ns = (double)xa->hook_calls * (double)xa->hook_cost_ns;
		r.est_ns = r.hooks_ns + (double)r.cupti_ns;
		r.pct = wall > 0 ? 100.0 * r.est_ns / wall : 0;
	}
	return r;
}

/* Operator g's launch numbers were mostly taken on a busy host. */
static int gp_host_flagged(const struct gp_xa *xa, size_t g)
{
	const struct gp_xa_grp *x = &xa->grp[g];
	return x->launch_all && (double)x->launch_busy >= GP_HOST_FLAG_SHARE * (double)x->launch_all;
}

void gp_xa_print_host(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, int md)
{
	char b1[32], b2[32], b3[32];
	const char *ind = md ? "- " : "  ";
	struct gp_host_sum hs = gp_host_summarise(xa, rep);
	fprintf(f, md ? "\n## Host conditions\n\n" : "\nHost conditions\n");
	if (!xa->nhosts) {
		fprintf(f, "%shost load: not sampled in this trace\n", ind);
	} else {
		fprintf(f, "%shost CPU busy: mean %.1f%%, max %.1f%% of all CPUs over %zu samples; this process: mean "
			   "%.1f%% of one CPU; host > %.0f%% busy during %.1f%% of the sampled time\n",
			ind, hs.busy_mean, hs.busy_max, xa->nhosts, hs.proc_mean, GP_HOST_BUSY_PCT, 100.0 * hs.busy_share);
		/* per operator: launch time taken inside busy intervals (gp_xa_op) */
		size_t nflag = 0;
		for (size_t g = 0; g < rep->ngroups && g < xa->ngrp; g++) {
			const struct gp_xa_grp *x = &xa->grp[g];
			if (!gp_host_flagged(xa, g))
				continue;
			fprintf(f, "%swarning: %s: launch numbers taken while the host was > %.0f%% busy (%llu of %llu "
				   "launch calls, %.0f%% of its launch time): launch times are inflated\n",
				ind, rep->groups[g].name, GP_HOST_BUSY_PCT, (unsigned long long)x->calls_busy,
				(unsigned long long)x->calls_all, 100.0 * (double)x->launch_busy / (double)x->launch_all);
			nflag++;
		}
		if (!nflag)
			fprintf(f, "%slaunch numbers: none of the operators' launch times were mostly taken on a busy "
				   "host\n", ind);
	}
	/* self-overhead */
	if (xa->hook_cost_ns < 0) {
		fprintf(f, "%sself-overhead: hook cost not measured in this trace; %llu hooked calls, %llu records "
			   "dropped\n", ind, (unsigned long long)xa->hook_calls, (unsigned long long)rep->dropped_records);
		return;
	}
	fprintf(f, "%sself-overhead (estimate): %s = %llu hooked calls x %lldns + CUPTI buffer time %s; %.2f%% of "
		   "the window %s; %llu records dropped\n",
		ind, gp_fmt_ns(hs.est_ns, b1, sizeof b1), (unsigned long long)xa->hook_calls, (long long)xa->hook_cost_ns,
		gp_fmt_ns((double)hs.cupti_ns, b2, sizeof b2), hs.pct, gp_fmt_ns((double)rep->wall_ns, b3, sizeof b3),
		(unsigned long long)rep->dropped_records);
	if (hs.pct > GP_OVERHEAD_WARN_PCT)
		fprintf(f, "%swarning: the profiler's own estimated cost (%.1f%% of the window) exceeds %.0f%%: "
			   "differences of that size are not trustworthy\n", ind, hs.pct, GP_OVERHEAD_WARN_PCT);
	if (rep->dropped_records)
		fprintf(f, "%swarning: %llu records were dropped: sums undercount\n", ind,
			(unsigned long long)rep->dropped_records);
}

void gp_xa_json_host(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep)
{
	struct gp_host_sum hs = gp_host_summarise(xa, rep);
	fprintf(f, "{\"sampled\": %s, \"samples\": %zu, \"busy_threshold_pct\": %g",
		xa->nhosts ? "true" : "false", xa->nhosts, GP_HOST_BUSY_PCT);
	if (xa->nhosts) {
		fputs(", \"host_cpu_busy_mean_pct\": ", f);
		gp_fmt_json_num(f, hs.busy_mean);
		fputs(", \"host_cpu_busy_max_pct\": ", f);
		gp_fmt_json_num(f, hs.busy_max);
		fputs(", \"process_cpu_mean_pct\": ", f);
		gp_fmt_json_num(f, hs.proc_mean);
		fputs(", \"busy_time_share\": ", f);
		gp_fmt_json_num(f, hs.busy_share);
	}
	fputs(", \"busy_launch_operators\": [", f);
	size_t n = 0;
	for (size_t g = 0; xa->nhosts && g < rep->ngroups && g < xa->ngrp; g++) {
		const struct gp_xa_grp *x = &xa->grp[g];
		if (!gp_host_flagged(xa, g))
			continue;
		fprintf(f, "%s{\"name\": ", n++ ? ", " : "");
		gp_fmt_json_str(f, rep->groups[g].name);
		fprintf(f, ", \"launch_calls\": %llu, \"launch_calls_busy\": %llu, \"launch_ns\": %llu, "
			   "\"launch_busy_ns\": %llu}",
			(unsigned long long)x->calls_all, (unsigned long long)x->calls_busy,
			(unsigned long long)x->launch_all, (unsigned long long)x->launch_busy);
	}
	fprintf(f, "],\n   \"self_overhead\": {\"hooked_calls\": %llu, \"hook_cost_ns\": ",
		(unsigned long long)xa->hook_calls);
	if (xa->hook_cost_ns < 0) {
		fputs("null, \"cupti_buffer_ns\": ", f);
		fprintf(f, "%llu, \"estimate_ns\": null, \"window_share\": null, \"warning\": false",
			(unsigned long long)hs.cupti_ns);
	} else {
		fprintf(f, "%lld, \"cupti_buffer_ns\": %llu, \"estimate_ns\": ", (long long)xa->hook_cost_ns,
			(unsigned long long)hs.cupti_ns);
		gp_fmt_json_num(f, hs.est_ns);
		fputs(", \"window_share\": ", f);
		gp_fmt_json_num(f, hs.pct / 100.0);
		fprintf(f, ", \"warning\": %s", hs.pct > GP_OVERHEAD_WARN_PCT ? "true" : "false");
	}
	fprintf(f, ", \"warn_above_pct\": %g, \"dropped_records\": %llu}}", GP_OVERHEAD_WARN_PCT,
		(unsigned long long)rep->dropped_records);
}
