/*
 * agent_metrics.c — the agent's counters as Prometheus text exposition
 * (format 0.0.4): one HELP and TYPE line per family, then its samples.
 * Names follow Prometheus's conventions: prefix gpuphase_, base units
 * (seconds), counters end in _total, a ratio is a gauge named _ratio.
 * docs/always-on.md lists every family and what it means.
 *
 * Called on the agent's poll loop only (after each pass); pure: reads the
 * agent, writes a new buffer. Label values are escaped (\\, \", \n).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent.h"

const double gp_agent_bucket_s[GP_AGENT_NBUCKETS] = {
	1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3,
	2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5,
};

const char *const gp_agent_phase_name[GP_AGENT_NPHASES] = { "launch", "queue", "execute", "sync" };

static void gp_agent_label(FILE *f, const char *key, const char *v)
{
	fprintf(f, "%s=\"", key);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
	fputc('"', f);
}

static void gp_agent_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void gp_agent_series_labels(FILE *f, const struct gp_agent_proc *p, const struct gp_agent_series *s)
{
	gp_agent_label(f, "category", s->category);
	fputc(',', f);
	gp_agent_label(f, "operator", s->op);
	fprintf(f, ",pid=\"%ld\"", p->pid);
}

static void gp_agent_hist_print(FILE *f, const char *name, const struct gp_agent_proc *p,
				const struct gp_agent_series *s, const struct gp_agent_hist *h)
{
	uint64_t cum = 0;
	for (size_t b = 0; b <= GP_AGENT_NBUCKETS; b++) {
		cum += h->bucket[b];
		fprintf(f, "%s_bucket{", name);
		gp_agent_series_labels(f, p, s);
		if (b < GP_AGENT_NBUCKETS)
			fprintf(f, ",le=\"%g\"} %" PRIu64 "\n", gp_agent_bucket_s[b], cum);
		else
			fprintf(f, ",le=\"+Inf\"} %" PRIu64 "\n", cum);
	}
	fprintf(f, "%s_sum{", name);
	gp_agent_series_labels(f, p, s);
	fprintf(f, "} %.9f\n%s_count{", (double)h->sum_ns / 1e9, name);
	gp_agent_series_labels(f, p, s);
	fprintf(f, "} %" PRIu64 "\n", h->count);
}

static void gp_agent_per_op(FILE *f, const struct gp_agent *a)
{
	gp_agent_family(f, "gpuphase_phase_seconds_total", "counter",
			"Time of the captured operators by phase (launch, queue, execute, sync), in seconds.");
	for (size_t i = 0; i < a->np; i++)
		for (size_t k = 0; k < a->p[i].ns; k++)
			for (int ph = 0; ph < GP_AGENT_NPHASES; ph++) {
				fprintf(f, "gpuphase_phase_seconds_total{phase=\"%s\",", gp_agent_phase_name[ph]);
				gp_agent_series_labels(f, &a->p[i], &a->p[i].s[k]);
				fprintf(f, "} %.9f\n", (double)a->p[i].s[k].phase_ns[ph] / 1e9);
			}
	gp_agent_family(f, "gpuphase_ops_total", "counter", "Captured operators (kernels, copies, sets).");
	for (size_t i = 0; i < a->np; i++)
		for (size_t k = 0; k < a->p[i].ns; k++) {
			fputs("gpuphase_ops_total{", f);
			gp_agent_series_labels(f, &a->p[i], &a->p[i].s[k]);
			fprintf(f, "} %" PRIu64 "\n", a->p[i].s[k].ops);
		}
	gp_agent_family(f, "gpuphase_op_execute_seconds", "histogram",
			"Execute time of each captured operator on the GPU, in seconds.");
	for (size_t i = 0; i < a->np; i++)
		for (size_t k = 0; k < a->p[i].ns; k++)
			gp_agent_hist_print(f, "gpuphase_op_execute_seconds", &a->p[i], &a->p[i].s[k],
					    &a->p[i].s[k].exec);
	gp_agent_family(f, "gpuphase_op_sync_seconds", "histogram",
			"Blocked time of each host wait, by the operator it was charged to, in seconds.");
	for (size_t i = 0; i < a->np; i++)
		for (size_t k = 0; k < a->p[i].ns; k++)
			gp_agent_hist_print(f, "gpuphase_op_sync_seconds", &a->p[i], &a->p[i].s[k],
					    &a->p[i].s[k].sync);
}

static void gp_agent_per_site(FILE *f, const struct gp_agent *a)
{
	gp_agent_family(f, "gpuphase_sync_seconds_total", "counter",
			"Time host threads were blocked waiting on the GPU, by the blocking call's call site, in seconds.");
	for (size_t i = 0; i < a->np; i++)
		for (size_t k = 0; k < a->p[i].nsite; k++) {
			fprintf(f, "gpuphase_sync_seconds_total{pid=\"%ld\",", a->p[i].pid);
			gp_agent_label(f, "site", a->p[i].site[k].name);
			fprintf(f, "} %.9f\n", (double)a->p[i].site[k].sync_ns / 1e9);
		}
	gp_agent_family(f, "gpuphase_sync_waits_total", "counter",
			"Host waits on the GPU, by the blocking call's call site.");
	for (size_t i = 0; i < a->np; i++)
		for (size_t k = 0; k < a->p[i].nsite; k++) {
			fprintf(f, "gpuphase_sync_waits_total{pid=\"%ld\",", a->p[i].pid);
			gp_agent_label(f, "site", a->p[i].site[k].name);
			fprintf(f, "} %" PRIu64 "\n", a->p[i].site[k].waits);
		}
}

/* One sample per process of a per-process value. */
#define GP_AGENT_PER_PROC(f, a, name, fmt, expr)                                                 \
	for (size_t i = 0; i < (a)->np; i++) {                                                   \
		const struct gp_agent_proc *p = &(a)->p[i];                                      \
		fprintf(f, "%s{pid=\"%ld\"} " fmt "\n", name, p->pid, expr);                      \
	}

static void gp_agent_per_proc(FILE *f, const struct gp_agent *a)
{
	gp_agent_family(f, "gpuphase_gpu_busy_seconds_total", "counter",
			"Time the GPU ran at least one captured operator, in seconds.");
	GP_AGENT_PER_PROC(f, a, "gpuphase_gpu_busy_seconds_total", "%.9f", (double)p->busy_ns / 1e9)
	gp_agent_family(f, "gpuphase_captured_seconds_total", "counter", "Wall time inside capture windows, in seconds.");
	GP_AGENT_PER_PROC(f, a, "gpuphase_captured_seconds_total", "%.9f", (double)p->wall_ns / 1e9)
	gp_agent_family(f, "gpuphase_profiler_seconds_total", "counter",
			"The profiler's own time in traced calls (CUPTI's), in seconds.");
	GP_AGENT_PER_PROC(f, a, "gpuphase_profiler_seconds_total", "%.9f", (double)p->profiler_ns / 1e9)
	gp_agent_family(f, "gpuphase_overhead_ratio", "gauge",
			"The profiler's own time over the wall time of the last window reduced.");
	GP_AGENT_PER_PROC(f, a, "gpuphase_overhead_ratio", "%.9g", p->overhead_last)
	gp_agent_family(f, "gpuphase_windows_reduced_total", "counter", "Capture windows reduced into these counters.");
	GP_AGENT_PER_PROC(f, a, "gpuphase_windows_reduced_total", "%" PRIu64, p->windows)
	gp_agent_family(f, "gpuphase_windows_missed_total", "counter",
			"Capture windows gone (the byte cap) or unreadable before the agent reduced them.");
	GP_AGENT_PER_PROC(f, a, "gpuphase_windows_missed_total", "%" PRIu64, p->missed)
	gp_agent_family(f, "gpuphase_process_up", "gauge",
			"1 while the process captures, 0 after it ended (its series are kept a while).");
	GP_AGENT_PER_PROC(f, a, "gpuphase_process_up", "%d", p->alive)
	gp_agent_family(f, "gpuphase_dropped_records_total", "counter",
			"Records the capture lost (source: ring, cupti, write), since the process started.");
	static const char *const src[3] = { "ring", "cupti", "write" };
	for (size_t i = 0; i < a->np; i++)
		for (int k = 0; k < 3; k++)
			fprintf(f, "gpuphase_dropped_records_total{pid=\"%ld\",source=\"%s\"} %" PRIu64 "\n", a->p[i].pid,
				src[k], a->p[i].dropped[k]);
}

char *gp_agent_metrics_render(const struct gp_agent *a, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		return NULL;
	gp_agent_per_op(f, a);
	gp_agent_per_site(f, a);
	gp_agent_per_proc(f, a);
	gp_agent_family(f, "gpuphase_agent_reduce_errors_total", "counter",
			"Window files the agent could not read (counted as missed).");
	fprintf(f, "gpuphase_agent_reduce_errors_total %" PRIu64 "\n", a->reduce_errors);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
