/*
 * verdict.c — the verdict rules (see verdict.h, docs/metrics.md "Verdicts").
 * Pure functions, called by the output writers.
 */
#include "verdict.h"

#include <stdio.h>

static double gp_verdict_pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

enum gp_verdict gp_verdict_of(uint64_t launch, uint64_t execute, uint64_t sync, const struct gp_thresholds *t)
{
	uint64_t total = launch + execute + sync;
	if (!total)
		return GP_VERDICT_NONE;
	if (gp_verdict_pct(sync, total) > t->sync_pct)
		return GP_VERDICT_SYNC;
	if (gp_verdict_pct(launch, total) > t->launch_pct)
		return GP_VERDICT_LAUNCH;
	if (gp_verdict_pct(execute, total) > t->execute_pct)
		return GP_VERDICT_COMPUTE;
	return GP_VERDICT_BALANCED;
}

enum gp_verdict gp_verdict_of_op(uint64_t launch, uint64_t execute, uint64_t sync, uint64_t run_total,
				 const struct gp_thresholds *t)
{
	uint64_t total = launch + execute + sync;
	if (total && run_total && gp_verdict_pct(total, run_total) < t->min_share_pct)
		return GP_VERDICT_MINOR;
	return gp_verdict_of(launch, execute, sync, t);
}

/* Copies and sets only: no kernel, graph-launched kernel or hook-only call. */
static int gp_verdict_transfers(unsigned k)
{
	return k && !(k & (GP_VERDICT_KIND_KERNEL | GP_VERDICT_KIND_OTHER));
}

enum gp_verdict gp_verdict_for_kinds(enum gp_verdict v, unsigned kinds)
{
	return v == GP_VERDICT_COMPUTE && gp_verdict_transfers(kinds) ? GP_VERDICT_TRANSFER : v;
}

/* A copy's advice: with pinned memory in it only when the trace saw
 * pageable host memory (pinning a pinned or device-side buffer does
 * nothing). */
static const char *gp_verdict_copy_advice(int pageable, const char *with_pin, const char *without)
{
	return pageable ? with_pin : without;
}

const char *gp_verdict_advice_for(enum gp_verdict v, const struct gp_verdict_op *op)
{
	unsigned k = op ? op->kinds : GP_VERDICT_KIND_KERNEL;
	int copies = gp_verdict_transfers(k);
	int small = op && op->mean_bytes < GP_VERDICT_SMALL_COPY;
	int graphs = op && (op->run_graphs || (k & GP_VERDICT_KIND_GRAPH));
	int pg = op && op->pageable;
	const char *batch = gp_verdict_copy_advice(pg, "many small copies: batch them into fewer, larger ones, use "
						      "pinned memory, overlap them with compute",
						   "many small copies: batch them into fewer, larger ones, overlap them "
						   "with compute");
	switch (v) {
	case GP_VERDICT_SYNC:
		if (copies)
			return gp_verdict_copy_advice(pg, "the host waits for this copy: make it asynchronous "
							  "(cudaMemcpyAsync from pinned memory) and overlap it with compute",
						      "the host waits for this copy: make it asynchronous "
						      "(cudaMemcpyAsync) and overlap it with compute");
		return "remove sync points, use async copies/streams";
	case GP_VERDICT_LAUNCH:
		if (copies)
			return small ? batch
				     : gp_verdict_copy_advice(pg, "copy overhead: use pinned memory, overlap the copies "
								  "with compute",
							      "copy overhead: overlap the copies with compute");
		return graphs ? "fuse kernels; fewer, larger graph launches (the program already replays CUDA graphs)"
			      : "fuse kernels, use CUDA graphs";
	case GP_VERDICT_TRANSFER:
	case GP_VERDICT_COMPUTE:
		if (copies)
			return small ? batch
				     : gp_verdict_copy_advice(pg, "bandwidth-bound copy: move fewer bytes, use pinned "
								  "memory, overlap it with compute",
							      "bandwidth-bound copy: move fewer bytes, overlap it with "
							      "compute");
		switch (op ? op->bound : GP_BOUND_NONE) {
		case GP_BOUND_MEMORY:
			return "memory-bound by its counters: move fewer bytes (fuse it with its neighbours, reuse "
			       "data from shared memory or registers), coalesced and vectorized accesses";
		case GP_BOUND_COMPUTE:
			return "compute-bound by its counters: lower precision (FP16/BF16/TF32, FP8), tensor cores, "
			       "fewer instructions";
		case GP_BOUND_LATENCY:
			return "near neither roof by its counters (latency-bound): more parallel work per launch "
			       "(larger grids, more independent work per thread), fewer dependent steps";
		default:
			return "optimise the kernel or the algorithm";
		}
	default:
		return "";
	}
}

const char *gp_bound_name(unsigned bound)
{
	static const char *const names[] = { NULL, "memory", "compute", "latency" };
	return bound < 4 ? names[bound] : NULL;
}

const char *gp_verdict_name(enum gp_verdict v)
{
	switch (v) {
	case GP_VERDICT_SYNC: return "sync-bound";
	case GP_VERDICT_LAUNCH: return "launch-bound";
	case GP_VERDICT_COMPUTE: return "compute-bound";
	case GP_VERDICT_TRANSFER: return "transfer-bound";
	case GP_VERDICT_BALANCED: return "balanced";
	case GP_VERDICT_MINOR: return "minor";
	default: return "none";
	}
}

const char *gp_verdict_advice(enum gp_verdict v)
{
	return gp_verdict_advice_for(v, NULL);
}

void gp_verdict_reason(enum gp_verdict v, uint64_t launch, uint64_t execute, uint64_t sync,
		       const struct gp_thresholds *t, char *buf, size_t n)
{
	uint64_t total = launch + execute + sync;
	double l = gp_verdict_pct(launch, total), e = gp_verdict_pct(execute, total), s = gp_verdict_pct(sync, total);
	switch (v) {
	case GP_VERDICT_SYNC: snprintf(buf, n, "sync %.1f%% > %g%%", s, t->sync_pct); break;
	case GP_VERDICT_LAUNCH: snprintf(buf, n, "launch %.1f%% > %g%%", l, t->launch_pct); break;
	case GP_VERDICT_COMPUTE: snprintf(buf, n, "execute %.1f%% > %g%%", e, t->execute_pct); break;
	case GP_VERDICT_TRANSFER: snprintf(buf, n, "transfer %.1f%% > %g%%", e, t->execute_pct); break;
	case GP_VERDICT_BALANCED:
		snprintf(buf, n, "launch %.1f%%, execute %.1f%%, sync %.1f%%: no threshold crossed", l, e, s);
		break;
	case GP_VERDICT_MINOR:
		snprintf(buf, n, "below %g%% of the run's launch + execute + sync: no verdict", t->min_share_pct);
		break;
	default: snprintf(buf, n, "no time recorded"); break;
	}
}
