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

#define GP_HOST_BUSY_PCT 50.0     /* a sample interval is "busy" above this  */
#define GP_HOST_FLAG_SHARE 0.5    /* flag an operator when this share of its
				     launch time was measured while busy      */
#define GP_OVERHEAD_WARN_PCT 5.0  /* self-overhead warning threshold         */

/* Index of the sample whose interval (ts - interval, ts] holds t, or -1.
 * Samples are in time order (one sampling thread). */
static long gp_host_sample_at(const struct gp_xa *xa, uint64_t t)
{
	size_t lo = 0, hi = xa->nhosts;
	while (lo < hi) { /* first sample with ts >= t */
		size_t mid = (lo + hi) / 2;
		if (xa->hosts[mid].ts < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == xa->nhosts)
		return -1;
	const struct gp_xa_host *h = &xa->hosts[lo];
	return h->ts - h->interval_ns <= t ? (long)lo : -1;
}

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
		/* per operator: launch time measured inside busy intervals */
		uint64_t *busy = calloc(rep->ngroups ? rep->ngroups : 1, sizeof *busy);
		uint64_t *all = calloc(rep->ngroups ? rep->ngroups : 1, sizeof *all);
		uint64_t *calls = calloc(rep->ngroups ? rep->ngroups : 1, sizeof *calls);
		uint64_t *bcalls = calloc(rep->ngroups ? rep->ngroups : 1, sizeof *bcalls);
		if (busy && all && calls && bcalls) {
			for (size_t i = 0; i < xa->nops; i++) {
				const struct gp_xa_op *op = &xa->ops[i];
				if (!op->has_api || !op->launch_ns || op->group >= rep->ngroups)
					continue;
				all[op->group] += op->launch_ns;
				calls[op->group]++;
				long s = gp_host_sample_at(xa, op->api_start);
				if (s >= 0 && gp_host_busy(&xa->hosts[s])) {
					busy[op->group] += op->launch_ns;
					bcalls[op->group]++;
				}
			}
			size_t nflag = 0;
			for (size_t g = 0; g < rep->ngroups; g++) {
				if (!all[g] || (double)busy[g] < GP_HOST_FLAG_SHARE * (double)all[g])
					continue;
				fprintf(f, "%swarning: %s: launch numbers taken while the host was > %.0f%% busy (%llu of "
					   "%llu launch calls, %.0f%% of its launch time): launch times are inflated\n",
					ind, rep->groups[g].name, GP_HOST_BUSY_PCT, (unsigned long long)bcalls[g],
					(unsigned long long)calls[g], 100.0 * (double)busy[g] / (double)all[g]);
				nflag++;
			}
			if (!nflag)
				fprintf(f, "%slaunch numbers: none of the operators' launch times were mostly taken on a busy "
					   "host\n", ind);
		}
		free(busy);
		free(all);
		free(calls);
		free(bcalls);
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
