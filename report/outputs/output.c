/*
 * output.c — renders a gp_rep as text, markdown or csv, and dispatches
 * json to output_json.c (see output.h; the diff of reports is diff.c).
 * Called by main.c on the report thread.
 * Every number printed is a field of gp_rep or a ratio of two of them;
 * docs/metrics.md names the field behind each column.
 */
#include "report/util/fmt.h"
#include "output.h"
#include "window_empty.h"
#include "report/analyses/registry.h"
#include "report/core/category.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const gp_out_class_names[GP_API_CLASS_COUNT] = {
	[GP_API_OTHER] = "other", [GP_API_LAUNCH] = "launch", [GP_API_MEMCPY_SYNC] = "memcpy (blocking)",
	[GP_API_MEMCPY_ASYNC] = "memcpy async pageable", [GP_API_MEMSET_SYNC] = "memset (blocking)",
	[GP_API_MEMSET_ASYNC] = "memset async", [GP_API_SYNC_DEVICE] = "device synchronize",
	[GP_API_SYNC_STREAM] = "stream synchronize", [GP_API_SYNC_EVENT] = "event synchronize",
	[GP_API_GRAPH_LAUNCH] = "graph launch", [GP_API_HOST_FUNC] = "host func", [GP_API_PROFILER] = "profiler",
	[GP_API_SYNC_IMPLICIT] = "implicit (free/alloc)",
};

const char *const gp_out_group_names[5] = { "kernel", "nvtx", "callsite", "stream", "phase" };

static const struct gp_rep *gp_sort_rep;
static enum gp_sort gp_sort_key;

static uint64_t gp_out_sortval(const struct gp_rep_group *g)
{
	switch (gp_sort_key) {
	case GP_SORT_LAUNCH: return g->launch_ns;
	case GP_SORT_QUEUE: return g->queue_ns;
	case GP_SORT_EXECUTE: return g->execute_ns;
	case GP_SORT_SYNC: return g->sync_ns;
	case GP_SORT_COUNT: return g->count;
	default: return gp_rep_group_total(g);
	}
}

static int gp_out_cmp(const void *a, const void *b)
{
	const struct gp_rep_group *x = &gp_sort_rep->groups[*(const size_t *)a];
	const struct gp_rep_group *y = &gp_sort_rep->groups[*(const size_t *)b];
	if (gp_sort_key == GP_SORT_NAME)
		return strcmp(x->name, y->name);
	uint64_t vx = gp_out_sortval(x), vy = gp_out_sortval(y);
	if (vx != vy)
		return vx > vy ? -1 : 1;
	return strcmp(x->name, y->name);
}

size_t gp_out_select(const struct gp_rep *rep, const struct gp_out_opts *o, size_t **out)
{
	size_t *idx = malloc((rep->ngroups ? rep->ngroups : 1) * sizeof *idx), n = 0;
	*out = idx;
	if (!idx)
		return 0;
	for (size_t i = 0; i < rep->ngroups; i++)
		if (!o->filter || regexec(o->filter, rep->groups[i].name, 0, NULL, 0) == 0 ||
		    regexec(o->filter, rep->groups[i].long_name ? rep->groups[i].long_name : "", 0, NULL, 0) == 0)
			idx[n++] = i;
	gp_sort_rep = rep;
	gp_sort_key = o->sort;
	qsort(idx, n, sizeof *idx, gp_out_cmp);
	if (o->top && n > o->top)
		n = o->top;
	return n;
}

static const char *gp_out_kv(const struct gp_rep *rep, const char *key)
{
	for (size_t i = 0; i < rep->nkv; i++)
		if (!strcmp(rep->kv[i].key, key))
			return rep->kv[i].value;
	return NULL;
}

/* Was the trace captured by `gpuphase attach` (its header says capture=attach...)? */
int gp_out_attached(const struct gp_rep *rep)
{
	const char *c = gp_out_kv(rep, "capture");
	return c && !strncmp(c, "attach", 6);
}

void gp_out_cut_note(FILE *f, const struct gp_rep *rep)
{
	/* no footer: the program died (a signal, a kill) or the file was cut */
	const char *flush_kv = gp_out_kv(rep, "collector.flush_ms"), *flush_ms = NULL;
	if (flush_kv && *flush_kv && strspn(flush_kv, "0123456789") == strlen(flush_kv) && strlen(flush_kv) < 8)
		flush_ms = flush_kv; /* only a number from the file is printed */
	fputs("the trace has no footer: the program died (crash or kill) before finishing it, or the file "
	      "was cut; kept: every block written; lost: ", f);
	if (rep->truncated_bytes)
		fprintf(f, "%" PRIu64 " bytes of a partial last block, ", rep->truncated_bytes);
	fprintf(f, "the records of the last flush interval (GPUPHASE_FLUSH_MS%s%s%s)", flush_ms ? "=" : "",
		flush_ms ? flush_ms : "", flush_ms ? " ms" : "");
	if (rep->cupti_ok)
		fprintf(f, ", the GPU records CUPTI had not delivered (%" PRIu64 " hooked launches never joined)",
			rep->hooks_unjoined);
	fputs(" and the final drop counts", f);
}

/* --- text and markdown ----------------------------------------------------------------- */

static void gp_out_missing(FILE *f, const struct gp_rep *rep, const char *lead)
{
	if (rep->cupti_unavailable)
		fprintf(f, "%sCUPTI was unavailable (hook-only capture): queue, execute and sync cannot be "
			   "measured; launch is the hooked call's whole duration\n", lead);
	if (rep->dropped_records)
		fprintf(f, "%s%" PRIu64 " records were dropped (ring %" PRIu64 ", CUPTI %" PRIu64 ", write %" PRIu64
			   "): sums are lower bounds\n", lead, rep->dropped_records, rep->dropped_ring,
			rep->dropped_cupti, rep->dropped_write);
	if (rep->startup_lost)
		fprintf(f, "%s%" PRIu64 " start-up losses: calls that arrived while the library was starting and "
			   "waited past the start-up bound, not recorded (counted in the ring drops)\n", lead,
			rep->startup_lost);
	if (rep->exit_unsettled == GP_EXIT_SYNC_SKIPPED)
		fprintf(f, "%sthe program exited inside a CUDA call (exit from a signal handler): GPU work still in "
			   "flight was not waited for, its records may be missing\n", lead);
	else if (rep->exit_unsettled)
		fprintf(f, "%sat exit CUDA or CUPTI did not return within the bound: GPU records not yet delivered "
			   "are missing\n", lead);
	if (rep->ops_no_api)
		fprintf(f, "%s%" PRIu64 " ops have no API record: their launch and queue are unknown (counted as 0)\n",
			lead, rep->ops_no_api);
	if (rep->ops_end_missing)
		fprintf(f, "%s%" PRIu64 " ops have no end time (forced flush): their execute is unknown\n", lead,
			rep->ops_end_missing);
	if (rep->ops_no_hook && gp_out_attached(rep))
		fprintf(f, "%s%" PRIu64 " ops were called through a function pointer the attach could not hook (taken "
			   "before it) or an entry point gpuphase does not hook: timed from CUPTI's API records, "
			   "without stacks\n", lead, rep->ops_no_hook);
	if (!rep->complete && rep->cupti_ok) {
		/* a cut trace: what lost its GPU records with the tail */
		static const char *const what[GP_API_CLASS_COUNT] = {
			[GP_API_LAUNCH] = "kernel launches", [GP_API_MEMCPY_SYNC] = "blocking copies",
			[GP_API_MEMCPY_ASYNC] = "async copies", [GP_API_MEMSET_SYNC] = "blocking sets",
			[GP_API_MEMSET_ASYNC] = "async sets", [GP_API_GRAPH_LAUNCH] = "graph launches",
		};
		int any = 0;
		if (rep->live)
			fprintf(f, "%sthe trace is live: process %" PRIu64 " is still writing it, so it is incomplete\n", lead,
				(uint64_t)rep->pid);
		for (int c = 0; c < GP_API_CLASS_COUNT; c++)
			if (rep->lost_by_class[c] && what[c]) {
				fprintf(f, "%s%s %" PRIu64 " %s", any ? "" : lead,
					any ? ","
					: rep->live ? "no GPU records have arrived yet for"
						    : "the trace was cut while CUPTI was working: lost the GPU records of",
					rep->lost_by_class[c], what[c]);
				any = 1;
			}
		if (any)
			fprintf(f, " (not in the operators or verdicts, which cover the ops whose records were whole)\n");
	}
	if (rep->waits_late > rep->queue_waits_late)
		fprintf(f, "%s%" PRIu64 " ops arrived after the wait they ended in had been charged: that sync time went to "
			   "an earlier op or to 'nothing outstanding'\n", lead, rep->waits_late - rep->queue_waits_late);
	if (rep->queue_waits_late)
		fprintf(f, "%s%" PRIu64 " launch-queue-full records (CUPTI COMMAND_BUFFER_FULL) arrived too late to apply: "
			   "those waits stayed in their calls' launch\n", lead, rep->queue_waits_late);
	if (rep->hooks_unjoined)
		fprintf(f, "%s%" PRIu64 " hooked launches never joined a CUPTI record\n", lead, rep->hooks_unjoined);
	if (rep->api_unjoined)
		fprintf(f, "%s%" PRIu64 " launch calls never produced a GPU op record\n", lead, rep->api_unjoined);
	if (!rep->complete && !rep->live) {
		fputs(lead, f);
		gp_out_cut_note(f, rep);
		fputc('\n', f);
	}
	if (rep->clock_calibrated)
		fprintf(f, "%sCUPTI refused the trace clock: GPU times were shifted by a calibrated offset\n", lead);
	if (rep->size_cap)
		fprintf(f, "%sthe size cap stopped capture early\n", lead);
	if (rep->end_reason && rep->write_errors)
		fprintf(f, "%scapture ended early: writing the trace failed (%s)%s; the trace holds the data "
			   "written before that\n", lead, strerror(-rep->end_reason),
			rep->end_reason == -ENOSPC ? ": the disk is full"
			: rep->end_reason == -EFBIG ? ": the file size limit (ulimit -f) was reached" : "");
	if (rep->lost_after_stop)
		fprintf(f, "%s%" PRIu64 " records captured after that were not written\n", lead, rep->lost_after_stop);
	if (rep->gpu_busy_late)
		fprintf(f, "%s%" PRIu64 " GPU intervals arrived too far out of order: GPU busy may be under-counted\n",
			lead, rep->gpu_busy_late);
}

/* The header and the capture conditions. */
static void gp_out_text_capture(FILE *f, const struct gp_rep *rep, int md)
{
	const char *h = md ? "## " : "";
	/* header */
	fprintf(f, "%sgpuphase report: ", md ? "# " : "");
	gp_fmt_name(f, rep->path ? rep->path : "?", md);
	fputs("\n\n", f);
	const char *keys[] = { "cmdline", "host", "gpu0", "driver", "cuda_runtime", "cuda_driver", "window",
			       "marker", "cupti", NULL };
	fprintf(f, "%sCapture\n%s", h, md ? "\n" : "");
	for (int i = 0; keys[i]; i++) {
		const char *v = gp_out_kv(rep, keys[i]);
		if (v) { /* argv and host name come from the profiled machine */
			fprintf(f, "%s%-14s ", md ? "- " : "  ", keys[i]);
			gp_fmt_name(f, v, md);
			fputc('\n', f);
		}
	}
	for (size_t i = 0; i < rep->ndevices; i++) {
		fprintf(f, "%s%-14s ", md ? "- " : "  ", "device");
		gp_fmt_name(f, rep->devices[i], md);
		fputc('\n', f);
	}
	fprintf(f, "%s%-14s %s\n", md ? "- " : "  ", "clock",
		rep->clock_id == 4 ? "CLOCK_MONOTONIC_RAW" : rep->clock_id == 1 ? "CLOCK_MONOTONIC"
							   : rep->clock_id == 0 ? "CLOCK_REALTIME" : "other");
	if (rep->nranks > 1)
		fprintf(f, "%s%-14s %zu traces merged\n", md ? "- " : "  ", "inputs", rep->nranks);
	fprintf(f, "%s%-14s %" PRIu64 " records, %" PRIu64 " ops (%" PRIu64 " joined: coverage %.1f%%), ", md ? "- " : "  ",
		"counts", rep->records, rep->ops, rep->ops_joined, 100.0 * rep->join_coverage);
	if (rep->launches_captured) /* metrics.md §1: enqueue nothing, so in no op */
		fprintf(f, "%" PRIu64 " launches captured into CUDA graphs, ", rep->launches_captured);
	if (rep->ops_replayed) /* metrics.md §20: their time is the replay's */
		fprintf(f, "%" PRIu64 " launches replayed for counters (left out), ", rep->ops_replayed);
	fprintf(f, "%" PRIu64 " dropped\n", rep->dropped_records);
	if (rep->host_busy_pct >= 0)
		fprintf(f, "%s%-14s host CPU busy %.1f%% (max %.1f%%), this process %.1f%% of one CPU%s\n",
			md ? "- " : "  ", "host load", rep->host_busy_pct, rep->host_busy_max_pct, rep->proc_cpu_pct,
			rep->host_busy_pct > 80 ? " -- host was loaded: launch times are inflated" : "");
	gp_out_missing(f, rep, md ? "- note: " : "  note: ");
	gp_out_text_window_empty(f, rep, md);
}

/* --- one unit per column ------------------------------------------------------------------------------ */

/* A table column's durations all in one unit, chosen for its largest value
 * the way gp_fmt_dur chooses for one value (never "1051.0us" above
 * "60.00ms"); the cells keep gp_fmt_dur's widths (at most 8 characters). */
enum gp_out_unit { GP_UNIT_NS, GP_UNIT_US, GP_UNIT_MS, GP_UNIT_S, GP_UNIT_S1 };

static enum gp_out_unit gp_out_unit_for(uint64_t max)
{
	return max < 1000 ? GP_UNIT_NS : max < 10000000ULL ? GP_UNIT_US : max < 999995000ULL ? GP_UNIT_MS
	       : max < 999999500000ULL ? GP_UNIT_S : GP_UNIT_S1;
}

static const char *gp_out_dur_in(uint64_t ns, enum gp_out_unit u, char *buf, size_t n)
{
	switch (u) {
	case GP_UNIT_NS: snprintf(buf, n, "%" PRIu64 "ns", ns); break;
	case GP_UNIT_US: snprintf(buf, n, "%.1fus", (double)ns / 1e3); break;
	case GP_UNIT_MS: snprintf(buf, n, "%.2fms", (double)ns / 1e6); break;
	case GP_UNIT_S: snprintf(buf, n, "%.3fs", (double)ns / 1e9); break;
	default: snprintf(buf, n, "%.1fs", (double)ns / 1e9); break;
	}
	return buf;
}

static int gp_out_cmp_u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x > y ? -1 : x < y;
}

/* --- verdicts and advice that fit the operator ---------------------------------------------------- */

/* Does the program replay CUDA graphs (then it is never told to use them)?
 * A pass over the operators: callers that advise many ask it once. */
int gp_out_run_graphs(const struct gp_rep *rep)
{
	if (rep->launches_captured)
		return 1;
	for (size_t i = 0; i < rep->ngroups; i++)
		if (rep->groups[i].kinds & GP_GKIND_GRAPH)
			return 1;
	return 0;
}

/* An operator's verdict: "minor" below the minimum share of the run. */
enum gp_verdict gp_out_verdict(const struct gp_rep *rep, const struct gp_rep_group *g,
			       const struct gp_thresholds *th)
{
	/* waits on a full launch queue are the GPU being busy, not sync points */
	enum gp_verdict v = gp_verdict_of_op(g->launch_ns, g->execute_ns, gp_rep_verdict_sync(g->sync_ns, g->sync_queue_ns),
					     rep->launch_ns + rep->execute_ns + rep->sync_ns, th);
	return gp_verdict_for_kinds(v, g->kinds); /* a copy transfers: never compute-bound */
}

enum gp_verdict gp_out_run_verdict(const struct gp_rep *rep, const struct gp_thresholds *th, char *why, size_t n)
{
	uint64_t vsync = gp_rep_verdict_sync(rep->sync_ns, rep->queue_full_ns);
	enum gp_verdict v = gp_verdict_of(rep->launch_ns, rep->execute_ns, vsync, th);
	gp_verdict_reason(v, rep->launch_ns, rep->execute_ns, vsync, th, why, n);
	return v;
}

const char *gp_out_verdict_scope(const struct gp_rep *rep)
{
	/* a windowed report judges what its windows captured, not the run */
	return !rep->nwindows ? "whole run" : rep->nwindows == 1 ? "window" : "windows";
}

int gp_out_pageable_note(const struct gp_rep_group *g, char *buf, size_t n)
{
	if (!g->pageable)
		return 0;
	snprintf(buf, n, "%" PRIu64 " of %" PRIu64 " copies used pageable host memory, so each call waited for earlier "
			 "work and for its own transfer: pin the buffer with cudaMallocHost or cudaHostRegister to make "
			 "them asynchronous", g->pageable, g->count);
	return 1;
}

/* The advice for g's verdict v (g NULL: the whole run's). */
const char *gp_out_advice(const struct gp_rep *rep, const struct gp_rep_group *g, enum gp_verdict v)
{
	return gp_out_advice_rg(rep, g, v, gp_out_run_graphs(rep));
}

const char *gp_out_advice_rg(const struct gp_rep *rep, const struct gp_rep_group *g, enum gp_verdict v,
			     int run_graphs)
{
	struct gp_verdict_op op = { .run_graphs = run_graphs };
	uint64_t bytes = 0, n = 0;
	for (size_t i = 0; i < rep->ngroups; i++) {
		const struct gp_rep_group *x = g ? g : &rep->groups[i];
		op.kinds |= x->kinds;
		op.pageable |= x->pageable_host != 0;
		bytes += x->bytes;
		n += x->count;
		if (g)
			break;
	}
	op.mean_bytes = n ? bytes / n : 0;
	op.bound = g ? g->bound : GP_BOUND_NONE;
	return gp_verdict_advice_for(v, &op);
}

/* CUPTI's own cost taken out of the phases (metrics.md §3), when known. */
static void gp_out_text_cupti(FILE *f, const struct gp_rep *rep, const char *li)
{
	char b1[32], b2[32], b3[32], b4[32], from[160];
	const struct gp_rep_cupti *c = &rep->cupti;
	if (!c->source)
		return;
	if (c->source == 1) {
		snprintf(from, sizeof from, "from CUPTI's overhead records");
	} else {
		char r[32], d[32], l[32];
		snprintf(from, sizeof from, "calibrated at start: %s a runtime call, %s a driver call, %s more a launch",
			 gp_fmt_dur(c->calib_rt_ns, r, 32), gp_fmt_dur(c->calib_drv_ns, d, 32),
			 gp_fmt_dur(c->calib_launch_ns, l, 32));
	}
	fprintf(f, "%sCUPTI's own time in %" PRIu64 " traced calls %s, the profiler's: out of launch %s, out of "
		   "waits %s (%s); launch with it %s\n", li, c->calls, gp_fmt_dur(c->in_calls_ns, b1, 32),
		gp_fmt_dur(c->launch_ns, b2, 32), gp_fmt_dur(c->sync_ns, b3, 32), from,
		gp_fmt_dur(rep->launch_raw_ns, b4, 32));
}

/* A signed duration: +1.0us, -250ns. */
static const char *gp_out_sdur(int64_t v, char *b, size_t n)
{
	char d[32];
	uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	snprintf(b, n, "%s%s", v < 0 ? "-" : "+", gp_fmt_dur(m, d, sizeof d));
	return b;
}

/* One line per device: the GPU clock's offset, its bound and the correction
 * (metrics.md §2, "The GPU's clock"). */
static void gp_out_text_gpu_clock(FILE *f, const struct gp_rep *rep, const char *li)
{
	for (size_t i = 0; i < rep->ngpu_clock; i++) {
		const struct gp_rep_gpu_clock *c = &rep->gpu_clock[i];
		char e[40], lo[40], hi[40], a[40], z[40];
		fprintf(f, "%sGPU clock, device %u: CUPTI's times off the host's by %s (bound %s .. %s from %" PRIu64
			   " ops and %" PRIu64 " waits)",
			li, c->device, gp_out_sdur(c->offset_ns, e, sizeof e),
			c->has_lo ? gp_out_sdur(c->lo_ns, lo, sizeof lo) : "none below",
			c->has_hi ? gp_out_sdur(c->hi_ns, hi, sizeof hi) : "none above", c->ops, c->waits);
		gp_out_sdur(c->first_ns, a, sizeof a);
		gp_out_sdur(c->last_ns, z, sizeof z);
		if (c->points > 1 && strcmp(a, z) != 0) /* a drift the text shows */
			fprintf(f, ", %s to %s over %s", a, z, gp_fmt_dur(c->span_ns, e, sizeof e));
		fprintf(f, "%s\n", c->raw ? "; left in (GPUPHASE_REPORT_GPU_CLOCK=raw)" : "; taken out");
	}
}

/* The window summary and the whole run's verdict. */
static void gp_out_text_window(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o, int md)
{
	char b1[32], b2[32], b3[32], b4[32];
	const char *h = md ? "## " : "", *li = md ? "- " : "  ";
	/* window summary */
	uint64_t tot = rep->launch_ns + rep->execute_ns + rep->sync_ns;
	fprintf(f, "\n%sWindow\n%s", h, md ? "\n" : "");
	fprintf(f, "%swall %s, GPU busy %s (%.1f%%; plain sum of op times %s), GPU idle %s\n", li,
		gp_fmt_dur(rep->wall_ns, b1, 32), gp_fmt_dur(rep->gpu_busy_ns, b2, 32),
		gp_fmt_pct(rep->gpu_busy_ns, rep->wall_ns), gp_fmt_dur(rep->gpu_busy_sum_ns, b3, 32),
		gp_fmt_dur(rep->gpu_idle_ns, b4, 32));
	if (rep->nwindows) {
		/* wall is the captured window(s) only (metrics.md §6) */
		fprintf(f, "%scaptured in %zu window%s:", li, rep->nwindows, rep->nwindows == 1 ? "" : "s");
		for (size_t i = 0; i < rep->nwindows && i < 10; i++) {
			const struct gp_rep_window *w = &rep->windows[i];
			fprintf(f, "%s %s at +%s (%" PRIu64 " ops%s)", i ? "," : "", gp_fmt_dur(w->stop - w->start, b1, 32),
				gp_fmt_dur(w->start - rep->windows[0].start, b2, 32), w->ops, w->open ? ", open" : "");
		}
		fprintf(f, "%s\n", rep->nwindows > 10 ? ", ..." : "");
	}
	fprintf(f, "%shost time inside CUDA calls %s\n", li, gp_fmt_dur(rep->host_api_ns, b1, 32));
	/* sums over ops that overlap: queue above all is not elapsed time */
	fprintf(f, "%sphases over all ops: launch %s (%.1f%%), execute %s (%.1f%%), sync %s (%.1f%%); queue (summed "
		   "over ops, which overlap: not elapsed time) %s\n", li,
		gp_fmt_dur(rep->launch_ns, b1, 32), gp_fmt_pct(rep->launch_ns, tot),
		gp_fmt_dur(rep->execute_ns, b2, 32), gp_fmt_pct(rep->execute_ns, tot),
		gp_fmt_dur(rep->sync_ns, b3, 32), gp_fmt_pct(rep->sync_ns, tot), gp_fmt_dur(rep->queue_ns, b4, 32));
	gp_out_text_cupti(f, rep, li);
	gp_out_text_gpu_clock(f, rep, li);
	fprintf(f, "%ssync with nothing outstanding %s in %" PRIu64 " call%s\n", li,
		gp_fmt_dur(rep->sync_unattributed_ns, b1, 32), rep->sync_unattributed_calls,
		rep->sync_unattributed_calls == 1 ? "" : "s");
	fprintf(f, "%sunattributed (no op launching, running or waited for) %s (%.1f%% of wall)\n", li,
		gp_fmt_dur(rep->unattributed_ns, b1, 32), gp_fmt_pct(rep->unattributed_ns, rep->wall_ns));
	for (int k = 0; k < GP_API_CLASS_COUNT; k++)
		if (rep->sync_calls[k])
			fprintf(f, "%ssync calls: %-20s %6" PRIu64 " call%s, blocked %s\n", li, gp_out_class_names[k],
				rep->sync_calls[k], rep->sync_calls[k] == 1 ? "" : "s",
				gp_fmt_dur(rep->sync_kind_ns[k], b1, 32));
	if (rep->queue_full_calls)
		fprintf(f, "%ssync calls: %-20s %6" PRIu64 " call%s, blocked %s (the GPU was busy: not in the verdict)\n",
			li, "launch queue full", rep->queue_full_calls, rep->queue_full_calls == 1 ? "" : "s",
			gp_fmt_dur(rep->queue_full_ns, b1, 32));
	char why[160];
	enum gp_verdict rv = gp_out_run_verdict(rep, &o->th, why, sizeof why);
	fprintf(f, "%sverdict (%s): %s%s%s (%s)\n", li, gp_out_verdict_scope(rep), md ? "**" : "",
		gp_verdict_name(rv), md ? "**" : "", why);
	struct gp_out_change ch;
	char adv[640];
	gp_out_best_change(rep, o, &ch);
	const char *a = gp_out_run_advice(rep, o, rv, &ch, adv, sizeof adv);
	if (*a) { /* it names operators and call sites from the trace */
		fprintf(f, "%sadvice: ", li);
		gp_fmt_name(f, a, md);
		fputc('\n', f);
	}
}

/* The operator table and the verdicts of the operators shown. */
static void gp_out_text_ops(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o, int md)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32], b8[32], b9[32], b10[32], why[160];
	const char *h = md ? "## " : "", *li = md ? "- " : "  ";
	/* operator table */
	size_t *sel, n = gp_out_select(rep, o, &sel);
	char topn[32] = "";
	if (o->top)
		snprintf(topn, sizeof topn, ", top %zu", o->top);
	fprintf(f, "\n%sOperators (by %s, grouped by %s%s)\n\n", h,
		(const char *[]){ "total", "launch", "queue", "execute", "sync", "count", "name" }[o->sort],
		gp_out_group_names[rep->group_by], topn);
	if (md) {
		fprintf(f, "| operator | count | total | launch | launch %% | execute | execute %% | sync | sync %% | "
			   "queue | exec mean | p50 | p95 | p99 | max | verdict |\n");
		fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
	} else {
		/* 159 columns: fits a 160-column terminal */
		fprintf(f, "%-28s %7s %8s %8s %5s %8s %5s %8s %5s %8s %8s %8s %8s %8s %8s  %s\n", "operator", "count",
			"total", "launch", "%", "execute", "%", "sync", "%", "queue", "ex mean", "ex p50", "ex p95",
			"ex p99", "ex max", "verdict");
	}
	/* the ten duration columns, each in the unit of its largest cell */
	enum { C_TOTAL, C_LAUNCH, C_EXEC, C_SYNC, C_QUEUE, C_MEAN, C_P50, C_P95, C_P99, C_MAX, C_N };
	uint64_t colmax[C_N] = { 0 };
	enum gp_out_unit unit[C_N];
	for (size_t i = 0; sel && i < n; i++) {
		const struct gp_rep_group *g = &rep->groups[sel[i]];
		uint64_t c[C_N] = { gp_rep_group_total(g), g->launch_ns, g->execute_ns, g->sync_ns, g->queue_ns,
				    g->exec.n ? g->exec.sum / g->exec.n : 0, gp_hist_quantile(&g->exec, 0.50),
				    gp_hist_quantile(&g->exec, 0.95), gp_hist_quantile(&g->exec, 0.99), g->exec.max };
		for (int k = 0; k < C_N; k++)
			colmax[k] = c[k] > colmax[k] ? c[k] : colmax[k];
	}
	for (int k = 0; k < C_N; k++)
		unit[k] = gp_out_unit_for(colmax[k]);
	for (size_t i = 0; sel && i < n; i++) {
		const struct gp_rep_group *g = &rep->groups[sel[i]];
		uint64_t t = gp_rep_group_total(g);
		enum gp_verdict v = gp_out_verdict(rep, g, &o->th);
		uint64_t mean = g->exec.n ? g->exec.sum / g->exec.n : 0;
		gp_out_dur_in(t, unit[C_TOTAL], b1, 32);
		gp_out_dur_in(g->launch_ns, unit[C_LAUNCH], b2, 32);
		gp_out_dur_in(g->execute_ns, unit[C_EXEC], b3, 32);
		gp_out_dur_in(g->sync_ns, unit[C_SYNC], b4, 32);
		gp_out_dur_in(g->queue_ns, unit[C_QUEUE], b5, 32);
		gp_out_dur_in(mean, unit[C_MEAN], b6, 32);
		gp_out_dur_in(gp_hist_quantile(&g->exec, 0.50), unit[C_P50], b7, 32);
		gp_out_dur_in(gp_hist_quantile(&g->exec, 0.95), unit[C_P95], b8, 32);
		gp_out_dur_in(gp_hist_quantile(&g->exec, 0.99), unit[C_P99], b9, 32);
		gp_out_dur_in(g->exec.max, unit[C_MAX], b10, 32);
		if (md) {
			fprintf(f, "| ");
			gp_fmt_md_str(f, g->name);
			fprintf(f, " | %" PRIu64 " | %s | %s | %.1f | %s | %.1f | %s | %.1f | %s | %s | %s | %s | %s | %s | %s |\n",
				g->count, b1, b2, gp_fmt_pct(g->launch_ns, t), b3, gp_fmt_pct(g->execute_ns, t), b4,
				gp_fmt_pct(g->sync_ns, t), b5, b6, b7, b8, b9, b10, gp_verdict_name(v));
		} else {
			char nm[40], p1[16], p2[16], p3[16];
			gp_fmt_text_pad(f, gp_fmt_cut(g->name, 28, nm, sizeof nm), 28);
			fprintf(f, " %7" PRIu64 " %8s %8s %5s %8s %5s %8s %5s %8s %8s %8s %8s %8s %8s  %s\n",
				g->count, b1, b2,
				gp_fmt_pctcol(g->launch_ns, t, p1, sizeof p1), b3,
				gp_fmt_pctcol(g->execute_ns, t, p2, sizeof p2), b4,
				gp_fmt_pctcol(g->sync_ns, t, p3, sizeof p3), b5, b6, b7, b8, b9, b10, gp_verdict_name(v));
		}
	}
	/* verdict details for shown operators that crossed a threshold */
	int first = 1, rg = gp_out_run_graphs(rep);
	for (size_t i = 0; sel && i < n; i++) {
		const struct gp_rep_group *g = &rep->groups[sel[i]];
		enum gp_verdict v = gp_out_verdict(rep, g, &o->th);
		if (v == GP_VERDICT_NONE || v == GP_VERDICT_BALANCED || v == GP_VERDICT_MINOR)
			continue;
		if (first)
			fprintf(f, "\n%sVerdicts\n%s", h, md ? "\n" : "");
		first = 0;
		uint64_t vsync = gp_rep_verdict_sync(g->sync_ns, g->sync_queue_ns);
		gp_verdict_reason(v, g->launch_ns, g->execute_ns, vsync, &o->th, why, sizeof why);
		fputs(li, f);
		gp_fmt_name(f, g->name, md);
		fprintf(f, ": %s (%s): %s\n", gp_verdict_name(v), why, gp_out_advice_rg(rep, g, v, rg));
		char note[256];
		if (gp_out_pageable_note(g, note, sizeof note))
			fprintf(f, "%s  (%s)\n", li, note);
		if (g->no_api || g->no_gpu)
			fprintf(f, "%s  (%" PRIu64 " of %" PRIu64 " calls lack an API record, %" PRIu64 " lack GPU times)\n",
				li, g->no_api, g->count, g->no_gpu);
	}
	free(sel);
}

/* The launch configuration of each shown kernel operator whose trace
 * recorded one, and a grid too small to fill its device named as such. */
static void gp_out_text_cfgs(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o, int md)
{
	const char *h = md ? "## " : "", *li = md ? "- " : "  ";
	size_t *sel, n = gp_out_select(rep, o, &sel);
	int first = 1;
	for (size_t i = 0; sel && i < n; i++) {
		const struct gp_rep_group *g = &rep->groups[sel[i]];
		const struct gp_rep_launch_cfg *c = &g->cfg;
		if (!c->launches)
			continue;
		if (first)
			fprintf(f, "\n%sLaunch configurations\n%s", h, md ? "\n" : "");
		first = 0;
		fputs(li, f);
		gp_fmt_name(f, g->name, md);
		fprintf(f, ": grid (%u, %u, %u), block (%u, %u, %u), %u registers per thread, %u B static + %u B dynamic "
			   "shared memory",
			c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2], c->regs,
			c->static_smem, c->dynamic_smem);
		if (c->others)
			fprintf(f, " (%" PRIu64 " of %" PRIu64 " launches; the others differ)", c->launches,
				c->launches + c->others);
		if (gp_rep_cfg_idle(c))
			fprintf(f, "; %" PRIu64 " block%s for %u SMs: leaves the GPU mostly idle", gp_rep_cfg_blocks(c),
				gp_rep_cfg_blocks(c) == 1 ? "" : "s", c->sms);
		fprintf(f, "\n");
	}
	free(sel);
}

/* The summary by category (metrics.md §22), of every operator; only when
 * operators are kernels. */
static void gp_out_text_categories(FILE *f, const struct gp_rep *rep, int md)
{
	struct gp_category_sum sums[GP_CAT_MAX + 1];
	uint8_t ids[GP_CAT_MAX];
	if (rep->group_by != GP_GROUP_KERNEL)
		return;
	gp_category_sums(rep, sums);
	size_t n = gp_category_order(sums, ids);
	uint64_t all = 0, max = 0;
	for (size_t i = 0; i < n; i++) {
		const struct gp_category_sum *c = &sums[ids[i]];
		uint64_t t = c->launch_ns + c->execute_ns + c->sync_ns;
		all += t;
		max = t > max ? t : max;
	}
	if (!n)
		return;
	enum gp_out_unit u = gp_out_unit_for(max);
	fprintf(f, "\n%sBy category\n\n", md ? "## " : "");
	if (md)
		fprintf(f, "| category | operators | count | total | %% | launch | execute | sync | queue |\n"
			   "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	else
		fprintf(f, "%-16s %9s %9s %9s %6s %9s %9s %9s %9s\n", "category", "operators", "count", "total", "%",
			"launch", "execute", "sync", "queue");
	for (size_t i = 0; i < n; i++) {
		const struct gp_category_sum *c = &sums[ids[i]];
		uint64_t t = c->launch_ns + c->execute_ns + c->sync_ns;
		char b[5][32];
		gp_out_dur_in(t, u, b[0], 32);
		gp_out_dur_in(c->launch_ns, u, b[1], 32);
		gp_out_dur_in(c->execute_ns, u, b[2], 32);
		gp_out_dur_in(c->sync_ns, u, b[3], 32);
		gp_out_dur_in(c->queue_ns, u, b[4], 32);
		fprintf(f, md ? "| %s | %" PRIu64 " | %" PRIu64 " | %s | %.1f | %s | %s | %s | %s |\n"
			      : "%-16s %9" PRIu64 " %9" PRIu64 " %9s %5.1f%% %9s %9s %9s %9s\n",
			gp_category_name(ids[i]), c->operators, c->count, b[0], gp_fmt_pct(t, all), b[1], b[2], b[3],
			b[4]);
	}
}

static void gp_out_text_callsites(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o, int md)
{
	char b1[32];
	const char *h = md ? "## " : "", *li = md ? "- " : "  ";
	/* sync call sites */
	if (rep->ncallsites && !(rep->ncallsites == 1 && !strcmp(rep->callsites[0].name, "(no stack)"))) {
		fprintf(f, "\n%sSync call sites (by blocked time)\n%s", h, md ? "\n" : "");
		for (size_t i = 0; i < rep->ncallsites && i < (o->top ? o->top : 10); i++) {
			fputs(li, f);
			gp_fmt_name_pad(f, rep->callsites[i].name, md, 60);
			fprintf(f, " %6" PRIu64 " %-5s %10s\n", rep->callsites[i].calls,
				rep->callsites[i].calls == 1 ? "call" : "calls",
				gp_fmt_dur(rep->callsites[i].sync_ns, b1, 32));
		}
	}
}

/* The iterations: a terminal gets the first 10, the last and every outlier. */
static void gp_out_text_iters(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o, int md)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32];
	const char *h = md ? "## " : "", *li = md ? "- " : "  ";
	/* iterations */
	if (rep->niters) {
		uint64_t p50, p99;
		uint8_t *out = calloc(rep->niters, 1);
		gp_rep_iter_stats(rep, o->outlier_factor, &p50, &p99, out);
		size_t nclosed = 0, nrep = 0;
		for (size_t i = 0; i < rep->niters; i++) {
			nclosed += !rep->iters[i].open && !rep->iters[i].replayed;
			nrep += !rep->iters[i].open && rep->iters[i].replayed;
		}
		if (nclosed)
			fprintf(f, "\n%sIterations (%zu): duration p50 %s, p99 %s over the %zu complete ones%s; outlier = "
				   "duration > %.2g x p50\n\n", h, rep->niters, gp_fmt_dur(p50, b1, 32),
				gp_fmt_dur(p99, b2, 32), nclosed,
				nrep ? " (not those with launches replayed for counters)" : "", o->outlier_factor);
		else
			fprintf(f, "\n%sIterations (%zu): no complete iteration (the only one is open: it ends with the "
				   "window), so no duration statistics\n\n", h, rep->niters);
		if (md)
			fprintf(f, "| iter | duration | ops | launch | execute | sync | queue | outlier |\n"
				   "|---:|---:|---:|---:|---:|---:|---:|---|\n");
		else
			fprintf(f, "%8s %10s %7s %10s %10s %10s %10s\n", "iter", "duration", "ops", "launch", "execute",
				"sync", "queue");
		/* which rows: a terminal gets the first 10, the last and every
		 * outlier; --top N the N longest iterations */
		uint8_t *show = calloc(rep->niters, 1);
		uint64_t cutoff = 0;
		if (o->top && o->top < rep->niters) {
			uint64_t *d = malloc(rep->niters * sizeof *d);
			for (size_t i = 0; d && i < rep->niters; i++)
				d[i] = rep->iters[i].end - rep->iters[i].start;
			if (d) {
				qsort(d, rep->niters, sizeof *d, gp_out_cmp_u64_desc);
				cutoff = d[o->top - 1];
			}
			free(d);
		}
		size_t nshow = 0;
		for (size_t i = 0; show && i < rep->niters; i++) {
			if (o->top)
				show[i] = rep->iters[i].end - rep->iters[i].start >= cutoff && nshow < o->top;
			else
				show[i] = !(i >= 10 && i + 1 < rep->niters && !(out && out[i]) && rep->niters > 20);
			nshow += show[i];
		}
		/* one unit per column, over the rows shown */
		uint64_t cm[5] = { 0 };
		for (size_t i = 0; show && i < rep->niters; i++) {
			const struct gp_rep_iter *it = &rep->iters[i];
			uint64_t c[5] = { it->end - it->start, it->launch_ns, it->execute_ns, it->sync_ns, it->queue_ns };
			for (int k = 0; show[i] && k < 5; k++)
				cm[k] = c[k] > cm[k] ? c[k] : cm[k];
		}
		size_t shown = 0, hidden = 0;
		for (size_t i = 0; i < rep->niters; i++) {
			const struct gp_rep_iter *it = &rep->iters[i];
			if (show ? !show[i] : (i >= 10 && i + 1 < rep->niters && !(out && out[i]) && rep->niters > 20)) {
				hidden++;
				continue;
			}
			shown++;
			gp_out_dur_in(it->end - it->start, gp_out_unit_for(cm[0]), b1, 32);
			gp_out_dur_in(it->launch_ns, gp_out_unit_for(cm[1]), b2, 32);
			gp_out_dur_in(it->execute_ns, gp_out_unit_for(cm[2]), b3, 32);
			gp_out_dur_in(it->sync_ns, gp_out_unit_for(cm[3]), b4, 32);
			gp_out_dur_in(it->queue_ns, gp_out_unit_for(cm[4]), b5, 32);
			int ol = out && out[i];
			if (md)
				fprintf(f, "| %" PRId64 " | %s | %" PRIu64 " | %s | %s | %s | %s | %s |\n", it->iter, b1, it->ops,
					b2, b3, b4, b5, ol ? "yes" : "");
			else
				fprintf(f, "%8" PRId64 " %10s %7" PRIu64 " %10s %10s %10s %10s%s\n", it->iter, b1, it->ops, b2,
					b3, b4, b5, ol ? "  <- outlier" : it->open ? "  (open: ends with the window)"
								 : it->replayed ? "  (launches replayed for counters)" : "");
		}
		if (hidden && o->top)
			fprintf(f, "%s(the %zu longest shown; %zu more; --format json lists all)\n", li, shown, hidden);
		else if (hidden)
			fprintf(f, "%s(%zu more iterations without outliers; --format json lists all)\n", li, hidden);
		free(show);
		free(out);
	}
}

/* The ranks of a merged report, with stragglers. */
static void gp_out_text_ranks(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o, int md)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], b11[32];
	const char *h = md ? "## " : "";
	/* ranks */
	if (rep->nranks > 1) {
		uint8_t *fl = calloc(rep->nranks, 1);
		uint64_t med = fl ? gp_rep_stragglers(rep, o->straggler_pct, fl) : 0;
		fprintf(f, "\n%sRanks (%zu): busy = launch + execute of non-NCCL ops; straggler = busy > median %s + %.0f%%\n\n", h, rep->nranks,
			gp_fmt_dur(med, b1, 32), o->straggler_pct);
		if (md)
			fprintf(f, "| trace | wall | busy | GPU busy | launch | execute | sync | straggler |\n"
				   "|---|---:|---:|---:|---:|---:|---:|---|\n");
		/* one unit per column */
		uint64_t cm[6] = { 0 };
		for (size_t i = 0; i < rep->nranks; i++) {
			const struct gp_rep *r = &rep->ranks[i];
			uint64_t c[6] = { r->wall_ns, gp_rep_rank_busy(r), r->gpu_busy_ns, r->launch_ns, r->execute_ns,
					  r->sync_ns + r->sync_unattributed_ns };
			for (int k = 0; k < 6; k++)
				cm[k] = c[k] > cm[k] ? c[k] : cm[k];
		}
		/* --top N: the first N ranks, and every straggler after them */
		size_t shown = 0, omitted = 0;
		for (size_t i = 0; i < rep->nranks; i++) {
			const struct gp_rep *r = &rep->ranks[i];
			if (o->top && shown >= o->top && !(fl && fl[i])) {
				omitted++;
				continue;
			}
			shown++;
			gp_out_dur_in(r->wall_ns, gp_out_unit_for(cm[0]), b1, 32);
			gp_out_dur_in(gp_rep_rank_busy(r), gp_out_unit_for(cm[1]), b2, 32);
			gp_out_dur_in(r->gpu_busy_ns, gp_out_unit_for(cm[2]), b3, 32);
			gp_out_dur_in(r->launch_ns, gp_out_unit_for(cm[3]), b4, 32);
			gp_out_dur_in(r->execute_ns, gp_out_unit_for(cm[4]), b5, 32);
			gp_out_dur_in(r->sync_ns + r->sync_unattributed_ns, gp_out_unit_for(cm[5]), b11, 32);
			if (md) {
				fputs("| ", f);
				gp_fmt_md_str(f, r->path);
				fprintf(f, " | %s | %s | %s | %s | %s | %s | %s |\n", b1, b2, b3, b4, b5, b11,
					fl && fl[i] ? "yes" : "");
			} else {
				fputs("  ", f);
				gp_fmt_text_pad(f, r->path, 40);
				fprintf(f, " wall %10s busy %10s GPU %10s launch %10s exec %10s sync %10s%s\n", b1, b2, b3, b4,
					b5, b11, fl && fl[i] ? "  <- straggler" : "");
			}
		}
		if (omitted)
			fprintf(f, "%s(%zu more ranks, none a straggler; --format json lists all)\n", md ? "\n" : "  ",
				omitted);
		free(fl);
	}
}

static void gp_out_text(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o, int md)
{
	gp_out_text_capture(f, rep, md);
	gp_out_text_window(f, rep, o, md);
	gp_out_text_ops(f, rep, o, md);
	gp_out_text_categories(f, rep, md);
	gp_out_text_cfgs(f, rep, o, md);
	gp_out_text_callsites(f, rep, o, md);
	gp_out_text_iters(f, rep, o, md);
	gp_out_text_ranks(f, rep, o, md);
	if (o->job_analyses) { /* a job's ranks side by side: after the ranks */
		struct gp_analysis_style style = { .markdown = md, .outlier_factor = o->outlier_factor, .top = o->top };
		gp_analyses_text(f, o->job_analyses, rep, &style);
	}
}

/* --- csv ---------------------------------------------------------------------------------------- */

static void gp_out_csv(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o)
{
	fprintf(f, "operator,long_name,count,total_ns,launch_ns,queue_ns,execute_ns,sync_ns,launch_share,"
		   "execute_share,sync_share,execute_mean_ns,execute_p50_ns,execute_p95_ns,execute_p99_ns,"
		   "execute_max_ns,no_api,no_gpu,verdict\n");
	size_t *sel, n = gp_out_select(rep, o, &sel);
	for (size_t i = 0; sel && i < n; i++) {
		const struct gp_rep_group *g = &rep->groups[sel[i]];
		uint64_t t = gp_rep_group_total(g);
		gp_fmt_csv_str(f, g->name);
		fputc(',', f);
		gp_fmt_csv_str(f, g->long_name ? g->long_name : g->name);
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.4f,%.4f,%.4f,%" PRIu64
			   ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s\n",
			g->count, t, g->launch_ns, g->queue_ns, g->execute_ns, g->sync_ns,
			t ? (double)g->launch_ns / (double)t : 0, t ? (double)g->execute_ns / (double)t : 0,
			t ? (double)g->sync_ns / (double)t : 0, g->exec.n ? g->exec.sum / g->exec.n : 0,
			gp_hist_quantile(&g->exec, 0.5), gp_hist_quantile(&g->exec, 0.95),
			gp_hist_quantile(&g->exec, 0.99), g->exec.max, g->no_api, g->no_gpu,
			gp_verdict_name(gp_out_verdict(rep, g, &o->th)));
	}
	free(sel);
}

/* --- json --------------------------------------------------------------------------------------- */

const struct gp_rep *gp_out_trace_rep(const struct gp_rep *rep, const struct gp_out_opts *o, size_t x)
{
	if (x >= o->ntraces)
		return NULL;
	if (o->ntraces == 1)
		return rep;
	return x < rep->nranks ? &rep->ranks[x] : NULL;
}

int gp_out_report(FILE *f, const struct gp_rep *rep, const struct gp_out_opts *o)
{
	switch (o->format) {
	case GP_FMT_MARKDOWN: gp_out_text(f, rep, o, 1); break;
	case GP_FMT_CSV: gp_out_csv(f, rep, o); break;
	case GP_FMT_JSON: gp_out_json(f, rep, o); break;
	default: gp_out_text(f, rep, o, 0); break;
	}
	return ferror(f) ? -EIO : 0;
}

