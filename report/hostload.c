/*
 * hostload.c — the "Host conditions" section: host CPU load and the
 * process's own CPU use sampled by the capture library (GP_REC_HOST_SAMPLE,
 * libgpuphase/hostload.c), the operators whose launch-phase numbers were
 * taken while the host was more than GP_HOST_BUSY_PCT busy (launch times are
 * inflated by a loaded host), and the profiler's estimated self-overhead in
 * the window (hooked calls x measured hook cost + CUPTI buffer time, and
 * drops) with a warning above GP_OVERHEAD_WARN_PCT. Called by gp_xa_print on
 * the report thread. docs/metrics.md "Host conditions" defines the numbers.
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

void gp_xa_print_host(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, int md)
{
	char b1[32], b2[32], b3[32];
	const char *ind = md ? "- " : "  ";
	fprintf(f, md ? "\n## Host conditions\n\n" : "\nHost conditions\n");
	if (!xa->nhosts) {
		fprintf(f, "%shost load: not sampled in this trace\n", ind);
	} else {
		double busy_w = 0, proc_w = 0, w = 0, busy_time = 0, max = 0;
		for (size_t i = 0; i < xa->nhosts; i++) {
			const struct gp_xa_host *h = &xa->hosts[i];
			double iv = (double)h->interval_ns;
			busy_w += iv * h->busy_pm / 10.0;
			proc_w += iv * h->proc_pm / 10.0;
			w += iv;
			if (gp_host_busy(h))
				busy_time += iv;
			if (h->busy_pm / 10.0 > max)
				max = h->busy_pm / 10.0;
		}
		fprintf(f, "%shost CPU busy: mean %.1f%%, max %.1f%% of all CPUs over %zu samples; this process: mean "
			   "%.1f%% of one CPU; host > %.0f%% busy during %.1f%% of the sampled time\n",
			ind, w > 0 ? busy_w / w : 0, max, xa->nhosts, w > 0 ? proc_w / w : 0, GP_HOST_BUSY_PCT,
			w > 0 ? 100.0 * busy_time / w : 0);
		/* per operator: launch time taken inside busy intervals (gp_xa_op) */
		size_t nflag = 0;
		for (size_t g = 0; g < rep->ngroups && g < xa->ngrp; g++) {
			const struct gp_xa_grp *x = &xa->grp[g];
			if (!x->launch_all || (double)x->launch_busy < GP_HOST_FLAG_SHARE * (double)x->launch_all)
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
	double wall = (double)rep->wall_ns;
	uint64_t cupti = 0;
	for (size_t i = 0; i < xa->nhosts; i++)
		if (xa->hosts[i].cupti_ns > cupti)
			cupti = xa->hosts[i].cupti_ns;
	if (xa->hook_cost_ns < 0) {
		fprintf(f, "%sself-overhead: hook cost not measured in this trace; %llu hooked calls, %llu records "
			   "dropped\n", ind, (unsigned long long)xa->hook_calls, (unsigned long long)rep->dropped_records);
		return;
	}
	double hooks = (double)xa->hook_calls * (double)xa->hook_cost_ns, est = hooks + (double)cupti;
	double pct = wall > 0 ? 100.0 * est / wall : 0;
	fprintf(f, "%sself-overhead (estimate): %s = %llu hooked calls x %lldns + CUPTI buffer time %s; %.2f%% of "
		   "the window %s; %llu records dropped\n",
		ind, gp_xa_fmt_ns(est, b1, sizeof b1), (unsigned long long)xa->hook_calls, (long long)xa->hook_cost_ns,
		gp_xa_fmt_ns((double)cupti, b2, sizeof b2), pct, gp_xa_fmt_ns(wall, b3, sizeof b3),
		(unsigned long long)rep->dropped_records);
	if (pct > GP_OVERHEAD_WARN_PCT)
		fprintf(f, "%swarning: the profiler's own estimated cost (%.1f%% of the window) exceeds %.0f%%: "
			   "differences of that size are not trustworthy\n", ind, pct, GP_OVERHEAD_WARN_PCT);
	if (rep->dropped_records)
		fprintf(f, "%swarning: %llu records were dropped: sums undercount\n", ind,
			(unsigned long long)rep->dropped_records);
}
