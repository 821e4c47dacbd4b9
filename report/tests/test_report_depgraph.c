/*
 * test_report_depgraph.c — Criterion suite for the dependency graph and its
 * replay (report/analyses/depgraph.c) on hand-built timelines whose every timestamp
 * follows from a few constants: the unchanged replay gives back the measured
 * wall exactly, and each transformation's predicted wall is the one the
 * timeline's arithmetic gives; the --whatif grammar. Test thread only.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "gp_format.h"
#include "report/core/analysis.h"
#include "report/analyses/depgraph.h"

#define LAUNCH 5000u   /* launch call                      */
#define LAT 3000u      /* launch return -> op start        */
#define EXEC 100000u   /* kernel                           */
#define SYNC 2000u     /* sync call after its release      */
#define HOST 20000u    /* host work between steps          */
#define STEPS 10

static void call(struct gp_dg *g, uint64_t s, uint64_t e, uint8_t cls, const char *name)
{
	struct gp_dg_call c = { .start = s, .end = e, .tid = 1, .cls = cls, .name = name };
	cr_assert_eq(gp_dg_add_call(g, &c), 0);
}

static void op(struct gp_dg *g, uint64_t s, uint64_t e, uint64_t as, uint64_t ae, uint32_t stream, uint8_t kind,
	       const char *name)
{
	struct gp_dg_op o = { .start = s, .end = e, .api_start = as, .api_end = ae, .stream = stream, .kind = kind,
			      .name = name };
	cr_assert_eq(gp_dg_add_op(g, &o), 0);
}

/* The core's attribution of the synchronize [s, e], without identity. */
static void wait_on(struct gp_dg *g, uint64_t s, uint64_t e, int attributed, uint32_t op_corr, const char *site)
{
	struct gp_dg_wait w = { .start = s, .end = e, .attributed = (uint8_t)attributed, .op_corr = op_corr,
				.site = site };
	cr_assert_eq(gp_dg_add_wait(g, &w), 0);
}

/* Each step: launch k (LAUNCH), its op LAT later for EXEC, a blocking call
 * (class cls, named name) released by it (SYNC after), HOST of host work;
 * a cudaFree of class other at the end. Returns the wall. */
static uint64_t wait_loop(struct gp_dg *g, uint8_t cls, const char *name)
{
	uint64_t t = 1000000;
	const uint64_t t0 = t;
	for (int i = 0; i < STEPS; i++) {
		call(g, t, t + LAUNCH, GP_API_LAUNCH, "cudaLaunchKernel");
		uint64_t os = t + LAUNCH + LAT;
		op(g, os, os + EXEC, t, t + LAUNCH, 7, GP_OP_KERNEL, "k");
		call(g, t + LAUNCH, os + EXEC + SYNC, cls, name);
		t = os + EXEC + SYNC + HOST;
	}
	call(g, t, t + 1000, GP_API_OTHER, "cudaFree");
	return t + 1000 - t0;
}

/* wait_loop with a cudaDeviceSynchronize each step. */
static uint64_t sync_loop(struct gp_dg *g)
{
	return wait_loop(g, GP_API_SYNC_DEVICE, "cudaDeviceSynchronize");
}

Test(depgraph, unchanged_replay_is_exact)
{
	struct gp_dg *g = gp_dg_new();
	uint64_t wall = sync_loop(g), r;
	cr_assert_eq(gp_dg_build(g), 0);
	cr_assert_eq(gp_dg_wall(g), wall);
	struct gp_dg_path path[8];
	size_t np;
	cr_assert_eq(gp_dg_replay(g, NULL, &r, path, 8, &np), 0);
	cr_assert_eq(r, wall);
	/* the critical path: every kernel, every sync's tail, host, launches */
	uint64_t k = 0, sum = 0;
	for (size_t i = 0; i < np; i++) {
		sum += path[i].ns;
		if (!strcmp(path[i].name, "k"))
			k = path[i].ns;
	}
	cr_assert_eq(k, (uint64_t)STEPS * EXEC);
	cr_assert_eq(sum, wall);
	gp_dg_free(g);
}

Test(depgraph, drop_sync_overlaps_host_work)
{
	struct gp_dg *g = gp_dg_new();
	sync_loop(g);
	cr_assert_eq(gp_dg_build(g), 0);
	struct gp_dg_change ch = { .kind = GP_DG_DROP_SYNC, .target = "cudaDeviceSynchronize" };
	uint64_t r;
	cr_assert_eq(gp_dg_replay(g, &ch, &r, NULL, 0, NULL), 0);
	/* the host runs ahead (LAUNCH + HOST per step < EXEC): the kernels
	 * run back to back from the first one's start */
	uint64_t gpu_end = LAUNCH + LAT + (uint64_t)STEPS * EXEC;
	uint64_t host_end = (uint64_t)STEPS * (LAUNCH + HOST) + 1000;
	cr_assert_eq(r, gpu_end > host_end ? gpu_end : host_end);
	gp_dg_free(g);
}

/* Each step: k then a synchronize at call site "loop.c:10 (step)" released
 * by it, host work, k2 then a synchronize at "loop.c:20 (step)". */
static uint64_t two_site_loop(struct gp_dg *g)
{
	uint64_t t = 1000000;
	const uint64_t t0 = t;
	uint32_t corr = 1;
	for (int i = 0; i < STEPS; i++) {
		for (int site = 0; site < 2; site++) {
			call(g, t, t + LAUNCH, GP_API_LAUNCH, "cudaLaunchKernel");
			uint64_t os = t + LAUNCH + LAT;
			struct gp_dg_op o = { .start = os, .end = os + EXEC, .api_start = t, .api_end = t + LAUNCH,
					      .stream = 7, .corr = corr, .kind = GP_OP_KERNEL, .name = site ? "k2" : "k" };
			cr_assert_eq(gp_dg_add_op(g, &o), 0);
			uint64_t s = t + LAUNCH, e = os + EXEC + SYNC;
			call(g, s, e, GP_API_SYNC_STREAM, "cudaStreamSynchronize");
			wait_on(g, s, e, 1, corr++, site ? "loop.c:20 (step)" : "loop.c:10 (step)");
			t = e + HOST;
		}
	}
	call(g, t, t + 1000, GP_API_OTHER, "cudaFree");
	return t + 1000 - t0;
}

/* remove_sync_site: only the calls made at the matching call site vanish;
 * every site together is the function removed; no match changes nothing. */
Test(depgraph, drop_one_sync_site)
{
	struct gp_dg *g = gp_dg_new();
	uint64_t wall = two_site_loop(g), none, one, both, fn, glob;
	cr_assert_eq(gp_dg_build(g), 0);
	struct gp_dg_change a = { .kind = GP_DG_DROP_SITE, .target = "loop.c:10 (step)" };
	struct gp_dg_change all = { .kind = GP_DG_DROP_SITE, .target = "loop.c:*" };
	struct gp_dg_change nomatch = { .kind = GP_DG_DROP_SITE, .target = "other.c:*" };
	struct gp_dg_change f = { .kind = GP_DG_DROP_SYNC, .target = "cudaStreamSynchronize" };
	cr_assert_eq(gp_dg_replay(g, &nomatch, &none, NULL, 0, NULL), 0);
	cr_assert_eq(gp_dg_replay(g, &a, &one, NULL, 0, NULL), 0);
	cr_assert_eq(gp_dg_replay(g, &all, &both, NULL, 0, NULL), 0);
	cr_assert_eq(gp_dg_replay(g, &f, &fn, NULL, 0, NULL), 0);
	cr_assert_eq(none, wall);
	cr_assert_eq(both, fn, "every site = the function: %lu vs %lu", (unsigned long)both, (unsigned long)fn);
	cr_assert(one < wall && one > both, "one site: %lu, none %lu, both %lu", (unsigned long)one,
		  (unsigned long)wall, (unsigned long)both);
	/* the saving of one site: its SYNC tail and the host work it kept
	 * from overlapping k, per step (k2's synchronize still waits) */
	struct gp_dg_change parsed;
	char buf[64];
	cr_assert_eq(gp_dg_parse("site=loop.c:10 (step)", &parsed, buf, sizeof buf, NULL, 0), 0);
	cr_assert_eq(parsed.kind, GP_DG_DROP_SITE);
	cr_assert_str_eq(parsed.target, "loop.c:10 (step)");
	cr_assert_eq(gp_dg_replay(g, &parsed, &glob, NULL, 0, NULL), 0);
	cr_assert_eq(glob, one);
	gp_dg_free(g);
}

Test(depgraph, scale_kernel)
{
	struct gp_dg *g = gp_dg_new();
	uint64_t wall = sync_loop(g);
	cr_assert_eq(gp_dg_build(g), 0);
	struct gp_dg_change ch = { .kind = GP_DG_SCALE, .target = "k", .factor = 0.5 };
	uint64_t r;
	cr_assert_eq(gp_dg_replay(g, &ch, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, wall - (uint64_t)STEPS * EXEC / 2);
	gp_dg_free(g);
}

Test(depgraph, graph_launch_cost)
{
	struct gp_dg *g = gp_dg_new();
	uint64_t wall = sync_loop(g);
	cr_assert_eq(gp_dg_build(g), 0);
	struct gp_dg_change ch = { .kind = GP_DG_GRAPH_LAUNCH, .target = "k", .cost_ns = 1000 };
	uint64_t r;
	cr_assert_eq(gp_dg_replay(g, &ch, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, wall - (uint64_t)STEPS * (LAUNCH - 1000));
	gp_dg_free(g);
}

/* A blocking copy (enqueued at entry, returns after its op) then a kernel. */
Test(depgraph, pinned_copy_and_empty_waits)
{
	struct gp_dg *g = gp_dg_new();
	uint64_t t = 1000, t0 = t;
	const uint64_t API = 2000, COPY = 50000;
	for (int i = 0; i < STEPS; i++) {
		uint64_t cs = t + API + LAT; /* the copy's op */
		op(g, cs, cs + COPY, t, cs + COPY + 500, 7, GP_OP_MEMCPY, "memcpy HtoD");
		call(g, t, cs + COPY + 500, GP_API_MEMCPY_SYNC, "cudaMemcpy");
		t = cs + COPY + 500;
		call(g, t, t + 2000, GP_API_SYNC_DEVICE, "cudaDeviceSynchronize"); /* nothing outstanding */
		t += 2000 + HOST;
		call(g, t, t + API, GP_API_OTHER, "cudaGetLastError");
		t += API;
	}
	uint64_t wall = t - t0, r;
	cr_assert_eq(gp_dg_build(g), 0);
	cr_assert_eq(gp_dg_empty_waits(g), (size_t)STEPS);
	cr_assert_eq(gp_dg_async_call_cost(g), API);
	cr_assert_eq(gp_dg_replay(g, NULL, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, wall);
	struct gp_dg_change e = { .kind = GP_DG_DROP_EMPTY };
	cr_assert_eq(gp_dg_replay(g, &e, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, wall - (uint64_t)STEPS * 2000);
	/* pinned: each copy call costs API and no longer waits; with no async
	 * op in the trace, an op issued at a call's end takes the blocking
	 * copies' latency (API + LAT here); the synchronize after it, which
	 * found nothing outstanding, now waits for it (then lasts its 2000) */
	struct gp_dg_change p = { .kind = GP_DG_PINNED, .target = "memcpy HtoD", .cost_ns = API };
	cr_assert_eq(gp_dg_replay(g, &p, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, (uint64_t)STEPS * (API + API + LAT + COPY + 2000 + HOST + API));
	gp_dg_free(g);
}

/* Copies and kernels alternating on one stream, the host far ahead. */
Test(depgraph, overlap_copies)
{
	struct gp_dg *g = gp_dg_new();
	const uint64_t COPY = 40000;
	uint64_t h = 1000, gpu = 0;
	for (int i = 0; i < STEPS; i++) {
		call(g, h, h + 2000, GP_API_MEMCPY_ASYNC, "cudaMemcpyAsync");
		uint64_t s = h + 2000 + LAT > gpu ? h + 2000 + LAT : gpu;
		op(g, s, s + COPY, h, h + 2000, 7, GP_OP_MEMCPY, "memcpy HtoD");
		gpu = s + COPY;
		h += 2000;
		call(g, h, h + LAUNCH, GP_API_LAUNCH, "cudaLaunchKernel");
		s = h + LAUNCH + LAT > gpu ? h + LAUNCH + LAT : gpu;
		op(g, s, s + EXEC, h, h + LAUNCH, 7, GP_OP_KERNEL, "k");
		gpu = s + EXEC;
		h += LAUNCH;
	}
	uint64_t r;
	cr_assert_eq(gp_dg_build(g), 0);
	cr_assert_eq(gp_dg_replay(g, NULL, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, gpu - 1000);
	struct gp_dg_change ch = { .kind = GP_DG_OVERLAP_COPIES };
	cr_assert_eq(gp_dg_replay(g, &ch, &r, NULL, 0, NULL), 0);
	/* kernels back to back from the first launch's op */
	cr_assert_eq(r, 2000 + LAUNCH + LAT + (uint64_t)STEPS * EXEC);
	gp_dg_free(g);
}

Test(depgraph, parse)
{
	struct gp_dg_change ch;
	char buf[64], why[512];
	cr_assert_eq(gp_dg_parse("kernel=ns::k<int>:scale=0.5", &ch, buf, sizeof buf, why, sizeof why), 0);
	cr_assert_eq(ch.kind, GP_DG_SCALE);
	cr_assert_str_eq(ch.target, "ns::k<int>");
	cr_assert_float_eq(ch.factor, 0.5, 1e-12);
	cr_assert_eq(gp_dg_parse("graph=k:node_ns=700", &ch, buf, sizeof buf, why, sizeof why), 0);
	cr_assert_eq(ch.kind, GP_DG_GRAPH_LAUNCH);
	cr_assert_eq(ch.cost_ns, 700);
	cr_assert_eq(gp_dg_parse("pinned=memcpy HtoD", &ch, buf, sizeof buf, why, sizeof why), 0);
	cr_assert_str_eq(ch.target, "memcpy HtoD");
	cr_assert_eq(gp_dg_parse("sync=cudaStreamSynchronize", &ch, buf, sizeof buf, why, sizeof why), 0);
	cr_assert_eq(ch.kind, GP_DG_DROP_SYNC);
	cr_assert_eq(gp_dg_parse("empty-waits", &ch, buf, sizeof buf, why, sizeof why), 0);
	cr_assert_eq(gp_dg_parse("overlap-copies", &ch, buf, sizeof buf, why, sizeof why), 0);
	cr_assert_eq(ch.kind, GP_DG_OVERLAP_COPIES);
	cr_assert_eq(gp_dg_parse("kernel=k", &ch, buf, sizeof buf, why, sizeof why), -EINVAL);
	cr_assert_eq(gp_dg_parse("kernel=k:scale=0", &ch, buf, sizeof buf, why, sizeof why), -EINVAL);
	cr_assert_eq(gp_dg_parse("kernel=:scale=2", &ch, buf, sizeof buf, why, sizeof why), -EINVAL);
	cr_assert_eq(gp_dg_parse("graph=k:node_ns=-1", &ch, buf, sizeof buf, why, sizeof why), -EINVAL);
	cr_assert_eq(gp_dg_parse("fuse=k", &ch, buf, sizeof buf, why, sizeof why), -EINVAL);
	cr_assert(strstr(why, "kernel=NAME:scale=F"));
	cr_assert(strstr(why, "queue-waits"));
	cr_assert_eq(gp_dg_parse("pinned-site=*train.cu:42*:call_ns=900", &ch, buf, sizeof buf, why, sizeof why), 0);
	cr_assert_eq(ch.kind, GP_DG_PINNED_SITE);
	cr_assert_str_eq(ch.target, "*train.cu:42*");
	cr_assert_eq(ch.cost_ns, 900);
	cr_assert_eq(gp_dg_parse("defer-site=*train.cu:42*", &ch, buf, sizeof buf, why, sizeof why), 0);
	cr_assert_eq(ch.kind, GP_DG_DEFER_SITE);
	cr_assert_str_eq(ch.target, "*train.cu:42*");
	cr_assert_eq(gp_dg_parse("defer=", &ch, buf, sizeof buf, why, sizeof why), -EINVAL);
	cr_assert_eq(gp_dg_parse("queue-waits", &ch, buf, sizeof buf, why, sizeof why), 0);
	cr_assert_eq(ch.kind, GP_DG_QUEUE);
}

Test(depgraph, empty_graph)
{
	struct gp_dg *g = gp_dg_new();
	uint64_t r = 1;
	cr_assert_eq(gp_dg_build(g), 0);
	cr_assert_eq(gp_dg_replay(g, NULL, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, 0);
	gp_dg_free(g);
}

/* A synchronize of an idle stream while another stream's kernel ends inside
 * it: the core says nothing was outstanding, so it waited for nothing. */
Test(depgraph, core_attribution_wins)
{
	struct gp_dg *g = gp_dg_new();
	call(g, 1000, 1000 + LAUNCH, GP_API_LAUNCH, "cudaLaunchKernel");
	struct gp_dg_op o = { .start = 1000 + LAUNCH + LAT, .end = 1000 + LAUNCH + LAT + EXEC, .api_start = 1000,
			      .api_end = 1000 + LAUNCH, .stream = 7, .corr = 42, .kind = GP_OP_KERNEL, .name = "k" };
	cr_assert_eq(gp_dg_add_op(g, &o), 0);
	uint64_t s = 1000 + LAUNCH, e = s + 2 * EXEC;
	call(g, s, e, GP_API_SYNC_STREAM, "cudaStreamSynchronize");
	wait_on(g, s, e, 0, 0, NULL);
	cr_assert_eq(gp_dg_build(g), 0);
	cr_assert_eq(gp_dg_empty_waits(g), 1);
	uint64_t r;
	struct gp_dg_change ch = { .kind = GP_DG_DROP_EMPTY };
	cr_assert_eq(gp_dg_replay(g, &ch, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, LAUNCH + LAT + EXEC); /* the kernel ends last */
	gp_dg_free(g);

	/* the same, attributed to the kernel: released by it */
	g = gp_dg_new();
	call(g, 1000, 1000 + LAUNCH, GP_API_LAUNCH, "cudaLaunchKernel");
	cr_assert_eq(gp_dg_add_op(g, &o), 0);
	call(g, s, o.end + SYNC, GP_API_SYNC_STREAM, "cudaStreamSynchronize");
	wait_on(g, s, o.end + SYNC, 1, 42, NULL);
	cr_assert_eq(gp_dg_build(g), 0);
	cr_assert_eq(gp_dg_empty_waits(g), 0);
	struct gp_dg_change sc = { .kind = GP_DG_SCALE, .target = "k", .factor = 0.5 };
	cr_assert_eq(gp_dg_replay(g, &sc, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, LAUNCH + LAT + EXEC / 2 + SYNC);
	gp_dg_free(g);
}

/* A CUPTI runtime call of thread tid with correlation id corr. */
static void id_call(struct gp_dg *g, uint64_t s, uint64_t e, uint32_t tid, uint32_t corr, uint8_t cls,
		    const char *name)
{
	struct gp_dg_call c = { .start = s, .end = e, .tid = tid, .corr = corr, .domain = GP_REC_RUNTIME_API,
				.cls = cls, .name = name };
	cr_assert_eq(gp_dg_add_call(g, &c), 0);
}

/* An op joined to the runtime call (tid, corr) of [as, ae]. */
static void id_op(struct gp_dg *g, uint64_t s, uint64_t e, uint64_t as, uint64_t ae, uint32_t tid, uint32_t corr,
		  uint32_t stream, const char *name)
{
	struct gp_dg_op o = { .start = s, .end = e, .api_start = as, .api_end = ae, .stream = stream, .corr = corr,
			      .tid = tid, .api_domain = GP_REC_RUNTIME_API, .kind = GP_OP_KERNEL, .name = name };
	cr_assert_eq(gp_dg_add_op(g, &o), 0);
}

/* Two threads launch at the same instant for the same time, then
 * synchronize at the same instant: the start and end of a call cannot tell
 * them apart, their identity does. Thread 1 launches ka (stream 7) and
 * waits for it; thread 2 launches kb (stream 8, half as long) and its
 * synchronize found nothing outstanding. */
Test(depgraph, identity_pairs_calls_of_equal_times)
{
	struct gp_dg *g = gp_dg_new();
	const uint64_t t = 1000, os = t + LAUNCH + LAT, se = os + EXEC + SYNC;
	id_call(g, t, t + LAUNCH, 1, 10, GP_API_LAUNCH, "cudaLaunchKernel");
	id_call(g, t, t + LAUNCH, 2, 11, GP_API_LAUNCH, "cudaLaunchKernel");
	id_op(g, os, os + EXEC, t, t + LAUNCH, 1, 10, 7, "ka");
	id_op(g, os, os + EXEC / 2, t, t + LAUNCH, 2, 11, 8, "kb");
	id_call(g, t + LAUNCH, se, 1, 12, GP_API_SYNC_STREAM, "cudaStreamSynchronize");
	id_call(g, t + LAUNCH, se, 2, 13, GP_API_SYNC_STREAM, "cudaStreamSynchronize");
	struct gp_dg_wait w1 = { .start = t + LAUNCH, .end = se, .tid = 1, .corr = 12,
				 .domain = GP_REC_RUNTIME_API, .attributed = 1, .op_corr = 10 };
	struct gp_dg_wait w2 = w1;
	w2.tid = 2, w2.corr = 13, w2.attributed = 0, w2.op_corr = 0;
	cr_assert_eq(gp_dg_add_wait(g, &w2), 0);
	cr_assert_eq(gp_dg_add_wait(g, &w1), 0);
	cr_assert_eq(gp_dg_build(g), 0);
	/* each synchronize has its own thread's wait: one of the two was empty
	 * (matched by times, both would take the same one: 0 or 2) */
	cr_assert_eq(gp_dg_empty_waits(g), 1);
	uint64_t r;
	cr_assert_eq(gp_dg_replay(g, NULL, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, se - t);
	/* thread 2's launch made a graph node costing 80 us: its empty
	 * synchronize (which keeps its own time) begins that much later and
	 * ends the window. Matched by times, both ops would belong to one call,
	 * whose last op is ka: no call would launch kb, nothing would change. */
	struct gp_dg_change ch = { .kind = GP_DG_GRAPH_LAUNCH, .target = "kb", .cost_ns = 80000 };
	cr_assert_eq(gp_dg_replay(g, &ch, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, 80000 + (se - t - LAUNCH));
	gp_dg_free(g);
}

/* A graph launch's nodes share its correlation id: every one of them is
 * the call's, beside another thread's graph launch of the same times. */
Test(depgraph, identity_graph_launch_nodes)
{
	struct gp_dg *g = gp_dg_new();
	const uint64_t t = 1000, d = 6000, os = t + d + LAT;
	id_call(g, t, t + d, 1, 5, GP_API_GRAPH_LAUNCH, "cudaGraphLaunch");
	id_call(g, t, t + d, 2, 6, GP_API_GRAPH_LAUNCH, "cudaGraphLaunch");
	id_op(g, os, os + EXEC, t, t + d, 1, 5, 7, "n1");
	id_op(g, os + EXEC, os + 2 * EXEC, t, t + d, 1, 5, 7, "n2");
	id_op(g, os, os + EXEC, t, t + d, 2, 6, 8, "m1");
	cr_assert_eq(gp_dg_build(g), 0);
	/* 2 calls of d for 3 nodes (by times: one call of d for 3) */
	cr_assert_eq(gp_dg_graph_node_cost(g), 2 * d / 3);
	uint64_t r;
	cr_assert_eq(gp_dg_replay(g, NULL, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, d + LAT + 2 * EXEC);
	gp_dg_free(g);
}

/* Past GP_DG_MAX_NODES the graph is a prefix of the window: calls and ops
 * up to the last time both were still collected, replayed as exactly. */
Test(depgraph, bounded_prefix)
{
	struct gp_dg *g = gp_dg_new();
	const size_t steps = GP_DG_MAX_NODES / 2 + 1000;
	uint64_t t = 1000;
	int full = 0;
	/* calls arrive in time order, ops 10 steps late (as a join lags) */
	for (size_t i = 0; i < steps; i++) {
		struct gp_dg_call c = { .start = t + i * 10000, .end = t + i * 10000 + LAUNCH, .tid = 1,
					.cls = GP_API_LAUNCH, .name = "cudaLaunchKernel" };
		full |= gp_dg_add_call(g, &c) == 1;
		if (i >= 10) {
			uint64_t s = t + (i - 10) * 10000;
			struct gp_dg_op o = { .start = s + LAUNCH + LAT, .end = s + LAUNCH + LAT + 5000, .api_start = s,
					      .api_end = s + LAUNCH, .stream = 7, .kind = GP_OP_KERNEL, .name = "k" };
			full |= gp_dg_add_op(g, &o) == 1;
		}
	}
	cr_assert(full);
	cr_assert(gp_dg_truncated(g));
	cr_assert_eq(gp_dg_build(g), 0);
	cr_assert_leq(gp_dg_ncalls(g) + gp_dg_nops(g), GP_DG_MAX_NODES);
	/* the prefix ends where the ops stopped: every kept call's op is kept */
	cr_assert_eq(gp_dg_ncalls(g), gp_dg_nops(g));
	uint64_t r;
	cr_assert_eq(gp_dg_replay(g, NULL, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, gp_dg_wall(g));
	cr_assert_eq(r, (gp_dg_ncalls(g) - 1) * 10000 + LAUNCH + LAT + 5000);
	gp_dg_free(g);
}

/* A blocking copy whose op started when the call had returned (a staged
 * pageable copy): the call did not wait for it, and the graph replays. */
Test(depgraph, copy_op_after_its_call)
{
	struct gp_dg *g = gp_dg_new();
	call(g, 1000, 1000 + LAUNCH, GP_API_MEMCPY_SYNC, "cudaMemcpy");
	op(g, 1000 + LAUNCH, 1000 + LAUNCH + EXEC, 1000, 1000 + LAUNCH, 7, GP_OP_MEMCPY, "memcpy HtoD");
	cr_assert_eq(gp_dg_build(g), 0);
	uint64_t r;
	cr_assert_eq(gp_dg_replay(g, NULL, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, LAUNCH + EXEC);
	gp_dg_free(g);
}

/* Times that contradict an edge (an op stamped before the call that issued
 * it, after a later op of its stream released a synchronize before that
 * call): a cycle, which the replay breaks at the node measured first, and
 * still gives back every measured time. */
Test(depgraph, cycle_from_contradicting_times)
{
	struct gp_dg *g = gp_dg_new();
	call(g, 50, 60, GP_API_LAUNCH, "cudaLaunchKernel");           /* issues x        */
	call(g, 100, 200, GP_API_SYNC_STREAM, "cudaStreamSynchronize"); /* released by x */
	call(g, 200, 210, GP_API_LAUNCH, "cudaLaunchKernel");          /* issues o        */
	op(g, 150, 160, 200, 210, 7, GP_OP_KERNEL, "o");
	op(g, 170, 180, 50, 60, 7, GP_OP_KERNEL, "x");
	cr_assert_eq(gp_dg_build(g), 0);
	uint64_t r;
	cr_assert_eq(gp_dg_replay(g, NULL, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, gp_dg_wall(g));
	cr_assert_eq(r, 210 - 50);
	struct gp_dg_change ch = { .kind = GP_DG_DROP_SYNC, .target = "cudaStreamSynchronize" };
	cr_assert_eq(gp_dg_replay(g, &ch, &r, NULL, 0, NULL), 0);
	cr_assert_leq(r, 210 - 50);
	gp_dg_free(g);
}

/* What a change applies to: the nodes it changes; for a name that matches
 * nothing, the names it could have meant, closest first. */
Test(depgraph, match_and_closest_names)
{
	struct gp_dg *g = gp_dg_new();
	two_site_loop(g);
	cr_assert_eq(gp_dg_build(g), 0);
	const char *near[3];
	size_t n, nn;
	struct gp_dg_change ch = { .kind = GP_DG_SCALE, .target = "k2", .factor = 0.5 };
	cr_assert_eq(gp_dg_match(g, &ch, &n, near, 3, &nn), 0);
	cr_assert_eq(n, STEPS);
	cr_assert_eq(nn, 0);
	ch.target = "k3"; /* one substitution from k2 and one insertion from k */
	cr_assert_eq(gp_dg_match(g, &ch, &n, near, 3, &nn), 0);
	cr_assert_eq(n, 0);
	cr_assert_eq(nn, 2);
	cr_assert_str_eq(near[0], "k"); /* both one edit away: by name */
	cr_assert_str_eq(near[1], "k2");
	struct gp_dg_change sync = { .kind = GP_DG_DROP_SYNC, .target = "cudaFree" };
	cr_assert_eq(gp_dg_match(g, &sync, &n, near, 3, &nn), 0);
	cr_assert_eq(n, 0); /* cudaFree is not a synchronizing function */
	cr_assert_eq(nn, 1);
	cr_assert_str_eq(near[0], "cudaStreamSynchronize");
	struct gp_dg_change site = { .kind = GP_DG_DROP_SITE, .target = "*loop.c:21*" };
	cr_assert_eq(gp_dg_match(g, &site, &n, near, 3, &nn), 0);
	cr_assert_eq(n, 0);
	cr_assert_eq(nn, 2);
	cr_assert_str_eq(near[0], "loop.c:20 (step)");
	site.target = "*loop.c:20*";
	cr_assert_eq(gp_dg_match(g, &site, &n, near, 3, &nn), 0);
	cr_assert_eq(n, STEPS);
	gp_dg_free(g);
}

/* Each step: launch k, a cudaFree (an implicit sync: released by k, SYNC
 * after), HOST of host work. Hoisting the cudaFree out of the loop lets
 * the host run ahead as dropping a synchronize does; an implicit sync that
 * waited is never an empty wait. */
Test(depgraph, hoist_implicit_sync)
{
	struct gp_dg *g = gp_dg_new();
	wait_loop(g, GP_API_SYNC_IMPLICIT, "cudaFree"); /* the last one of class other stays */
	cr_assert_eq(gp_dg_build(g), 0);
	cr_assert_eq(gp_dg_empty_waits(g), 0);
	uint64_t r, h;
	cr_assert_eq(gp_dg_replay(g, NULL, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, gp_dg_wall(g));
	struct gp_dg_change ch;
	char buf[64];
	cr_assert_eq(gp_dg_parse("hoist=cudaFree", &ch, buf, sizeof buf, NULL, 0), 0);
	cr_assert_eq(ch.kind, GP_DG_HOIST);
	cr_assert_eq(gp_dg_replay(g, &ch, &h, NULL, 0, NULL), 0);
	uint64_t gpu_end = LAUNCH + LAT + (uint64_t)STEPS * EXEC;
	uint64_t host_end = (uint64_t)STEPS * (LAUNCH + HOST) + 1000;
	cr_assert_eq(h, gpu_end > host_end ? gpu_end : host_end);
	/* sync= names it too; a synchronize's name does not hoist */
	struct gp_dg_change drop = { .kind = GP_DG_DROP_SYNC, .target = "cudaFree" }, other = ch;
	cr_assert_eq(gp_dg_replay(g, &drop, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, h);
	other.target = "cudaDeviceSynchronize";
	cr_assert_eq(gp_dg_replay(g, &other, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, gp_dg_wall(g));
	gp_dg_free(g);
}

/* A step's loop: a kernel (LAUNCH, EXEC) on stream 7, then a copy of
 * class cls made at call site `site`, released by its op (C after the
 * kernel), 500 after it, with `blocking` the core's flag; HOST of host
 * work. Returns the wall. */
#define C 5000u
static uint64_t copy_loop(struct gp_dg *g, uint8_t cls, uint8_t copy_kind, int blocking, const char *site)
{
	uint64_t t = 1000000;
	const uint64_t t0 = t;
	uint32_t corr = 1;
	for (int i = 0; i < STEPS; i++, corr += 2) {
		call(g, t, t + LAUNCH, GP_API_LAUNCH, "cudaLaunchKernel");
		uint64_t ks = t + LAUNCH + LAT, ke = ks + EXEC;
		op(g, ks, ke, t, t + LAUNCH, 7, GP_OP_KERNEL, "k");
		struct gp_dg_op o = { .start = ke, .end = ke + C, .api_start = t + LAUNCH, .api_end = ke + C + 500,
				      .stream = 7, .kind = GP_OP_MEMCPY, .copy_kind = copy_kind,
				      .blocking = (uint8_t)blocking, .name = copy_kind == 2 ? "memcpy DtoH" : "memcpy HtoD",
				      .site = site };
		cr_assert_eq(gp_dg_add_op(g, &o), 0);
		call(g, t + LAUNCH, ke + C + 500, cls, cls == GP_API_MEMCPY_SYNC ? "cudaMemcpy" : "cudaMemcpyAsync");
		t = ke + C + 500 + HOST;
	}
	call(g, t, t + 1000, GP_API_OTHER, "cudaGetLastError");
	return t + 1000 - t0;
}

Test(depgraph, pinned_pageable_async_copy_by_name_and_site)
{
	struct gp_dg *g = gp_dg_new();
	uint64_t wall = copy_loop(g, GP_API_MEMCPY_ASYNC, 1, 1, "main.c:10 (copy_in)"), r;
	cr_assert_eq(gp_dg_build(g), 0);
	cr_assert_eq(gp_dg_replay(g, NULL, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, wall);
	/* the async call held by pageable memory no longer waits: the host
	 * runs ahead, the kernels and copies back to back on their stream */
	uint64_t gpu = LAUNCH + LAT + (uint64_t)STEPS * (EXEC + C);
	struct gp_dg_change p = { .kind = GP_DG_PINNED, .target = "memcpy HtoD", .cost_ns = 2000 };
	cr_assert_eq(gp_dg_replay(g, &p, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, gpu);
	char buf[64];
	cr_assert_eq(gp_dg_parse("pinned-site=*copy_in*", &p, buf, sizeof buf, NULL, 0), 0);
	cr_assert_eq(p.kind, GP_DG_PINNED_SITE);
	p.cost_ns = 2000;
	cr_assert_eq(gp_dg_replay(g, &p, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, gpu);
	/* a glob that names another site changes nothing and is refused */
	const char *near[3];
	size_t nm, nn;
	p.target = "*copy_out*";
	cr_assert_eq(gp_dg_match(g, &p, &nm, near, 3, &nn), 0);
	cr_assert_eq(nm, 0);
	cr_assert_eq(nn, 1);
	cr_assert_str_eq(near[0], "main.c:10 (copy_in)");
	gp_dg_free(g);
	/* tamper: the same async copy not held (pinned memory) is no target */
	g = gp_dg_new();
	copy_loop(g, GP_API_MEMCPY_ASYNC, 1, 0, "main.c:10 (copy_in)");
	cr_assert_eq(gp_dg_build(g), 0);
	struct gp_dg_change q = { .kind = GP_DG_PINNED, .target = "memcpy HtoD", .cost_ns = 2000 };
	cr_assert_eq(gp_dg_match(g, &q, &nm, near, 3, &nn), 0);
	cr_assert_eq(nm, 0);
	gp_dg_free(g);
}

Test(depgraph, defer_result_copy)
{
	struct gp_dg *g = gp_dg_new();
	uint64_t wall = copy_loop(g, GP_API_MEMCPY_SYNC, 2, 1, "train.c:88 (step)"), r;
	cr_assert_eq(gp_dg_build(g), 0);
	struct gp_dg_change ch;
	char buf[64];
	cr_assert_eq(gp_dg_parse("defer=memcpy DtoH:call_ns=2000", &ch, buf, sizeof buf, NULL, 0), 0);
	cr_assert_eq(ch.kind, GP_DG_DEFER);
	cr_assert_eq(ch.cost_ns, 2000);
	cr_assert_eq(gp_dg_replay(g, &ch, &r, NULL, 0, NULL), 0);
	/* each copy call waits for the one before (one step behind the GPU),
	 * so the host stays a step ahead: kernels and copies back to back */
	uint64_t gpu = LAUNCH + LAT + (uint64_t)STEPS * (EXEC + C);
	cr_assert_eq(r, gpu);
	cr_assert_lt(r, wall);
	/* by call site, the same */
	cr_assert_eq(gp_dg_parse("defer-site=train.c:88*", &ch, buf, sizeof buf, NULL, 0), 0);
	ch.cost_ns = 2000;
	cr_assert_eq(gp_dg_replay(g, &ch, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, gpu);
	gp_dg_free(g);
	/* the wait moved, not dropped: with X of host work after the loop, the
	 * host, held a step behind the GPU at each copy, ends X after the
	 * second-to-last copy; made pinned it would not wait at all */
	const uint64_t X = 900000;
	g = gp_dg_new();
	wall = copy_loop(g, GP_API_MEMCPY_SYNC, 2, 1, "train.c:88 (step)");
	call(g, 1000000 + wall, 1000000 + wall + X, GP_API_OTHER, "host_tail");
	cr_assert_eq(gp_dg_build(g), 0);
	struct gp_dg_change d = { .kind = GP_DG_DEFER, .target = "memcpy DtoH", .cost_ns = 2000 }, p = d;
	p.kind = GP_DG_PINNED;
	uint64_t rp;
	cr_assert_eq(gp_dg_replay(g, &d, &r, NULL, 0, NULL), 0);
	cr_assert_eq(gp_dg_replay(g, &p, &rp, NULL, 0, NULL), 0);
	cr_assert_eq(rp, (uint64_t)STEPS * (LAUNCH + 2000 + HOST) + 1000 + X);
	cr_assert_eq(r, LAUNCH + LAT + (uint64_t)(STEPS - 1) * (EXEC + C) + 2000 + HOST + 1000 + X);
	gp_dg_free(g);
}

/* Launch calls that waited on a full queue (qwait of W each, then their
 * own LAUNCH); a synchronize at the end that found nothing outstanding. */
Test(depgraph, queue_waits_and_empty_sync)
{
	struct gp_dg *g = gp_dg_new();
	const uint64_t W = 30000;
	uint64_t t = 1000, gpu = 0;
	uint32_t corr = 1;
	for (int i = 0; i < STEPS; i++, corr++) {
		uint64_t d = i >= 2 ? W + LAUNCH : LAUNCH; /* the first two found room */
		struct gp_dg_call c = { .start = t, .end = t + d, .tid = 1, .corr = corr, .domain = GP_REC_RUNTIME_API,
					.cls = GP_API_LAUNCH, .name = "cudaLaunchKernel" };
		cr_assert_eq(gp_dg_add_call(g, &c), 0);
		if (i >= 2) {
			struct gp_dg_wait w = { .start = t, .end = t + d, .tid = 1, .corr = corr,
						.domain = GP_REC_RUNTIME_API, .queue_ns = W };
			cr_assert_eq(gp_dg_add_wait(g, &w), 0);
		}
		uint64_t s = t + d + LAT > gpu ? t + d + LAT : gpu;
		struct gp_dg_op o = { .start = s, .end = s + EXEC, .api_start = t, .api_end = t + d, .stream = 7,
				      .corr = corr, .tid = 1, .api_domain = GP_REC_RUNTIME_API, .kind = GP_OP_KERNEL,
				      .name = "k" };
		cr_assert_eq(gp_dg_add_op(g, &o), 0);
		gpu = s + EXEC;
		t += d;
	}
	/* host work long past the GPU's end, then a synchronize: nothing
	 * outstanding */
	uint64_t hs = gpu + HOST;
	struct gp_dg_call sc = { .start = hs, .end = hs + SYNC, .tid = 1, .corr = corr,
				 .domain = GP_REC_RUNTIME_API, .cls = GP_API_SYNC_DEVICE, .name = "cudaDeviceSynchronize" };
	cr_assert_eq(gp_dg_add_call(g, &sc), 0);
	uint64_t r;
	cr_assert_eq(gp_dg_build(g), 0);
	cr_assert_eq(gp_dg_queue_waits(g), (size_t)STEPS - 2);
	cr_assert_eq(gp_dg_empty_waits(g), 1);
	cr_assert_eq(gp_dg_replay(g, NULL, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, hs + SYNC - 1000);
	struct gp_dg_change ch;
	char buf[64];
	cr_assert_eq(gp_dg_parse("queue-waits", &ch, buf, sizeof buf, NULL, 0), 0);
	cr_assert_eq(ch.kind, GP_DG_QUEUE);
	cr_assert_eq(gp_dg_replay(g, &ch, &r, NULL, 0, NULL), 0);
	/* the launches cost LAUNCH each (the calls that did not wait): the
	 * host's work starts 8 W earlier and reaches the synchronize before
	 * the last kernel ends; the synchronize, which found nothing
	 * outstanding, now waits for it (then lasts its SYNC) */
	cr_assert_lt(gpu + HOST - 8 * W, gpu);
	cr_assert_eq(r, gpu + SYNC - 1000);
	cr_assert_lt(r, hs + SYNC - 1000);
	gp_dg_free(g);
}

/* The training loop of the legacy stream's order: per step a kernel
 * (LAUNCH, EXEC) on stream 13, a cudaFree that waits for it (released
 * SYNC + late[i] after it ends), then a blocking cudaMemcpy on the legacy
 * stream 7 (its op LEG_LAT after the call's start for LEG_CP, the call
 * returning LEG_POST after it) that finds the device drained, then HOST.
 * Returns the wall. */
#define LEG_LAT 1000u
#define LEG_CP 5000u
#define LEG_POST 500u
static uint64_t legacy_loop(struct gp_dg *g, const uint64_t *late)
{
	uint64_t t = 1000000;
	const uint64_t t0 = t;
	for (int i = 0; i < STEPS; i++) {
		call(g, t, t + LAUNCH, GP_API_LAUNCH, "cudaLaunchKernel");
		uint64_t ke = t + LAUNCH + LAT + EXEC;
		op(g, t + LAUNCH + LAT, ke, t, t + LAUNCH, 13, GP_OP_KERNEL, "k");
		uint64_t fe = ke + SYNC + (late ? late[i] : 0);
		call(g, t + LAUNCH, fe, GP_API_SYNC_IMPLICIT, "cudaFree");
		call(g, fe, fe + LEG_LAT + LEG_CP + LEG_POST, GP_API_MEMCPY_SYNC, "cudaMemcpy");
		op(g, fe + LEG_LAT, fe + LEG_LAT + LEG_CP, fe, fe + LEG_LAT + LEG_CP + LEG_POST, 7, GP_OP_MEMCPY,
		   "memcpy DtoH");
		t = fe + LEG_LAT + LEG_CP + LEG_POST + HOST;
	}
	return t - HOST - t0;
}

/* The hoisted loop's wall when each copy waits for the step's kernel (the
 * legacy stream's order) and wakes `late` after it ends. */
static uint64_t legacy_hoisted(uint64_t late)
{
	uint64_t step = LAUNCH + LAT + EXEC + LEG_CP + LEG_POST + late;
	return (uint64_t)(STEPS - 1) * (step + HOST) + step;
}

Test(depgraph, legacy_stream_follows_blocking_streams)
{
	struct gp_dg *g = gp_dg_new();
	uint64_t wall = legacy_loop(g, NULL);
	cr_assert_eq(gp_dg_build(g), 0);
	cr_assert_eq(gp_dg_wall(g), wall);
	uint64_t r;
	cr_assert_eq(gp_dg_replay(g, NULL, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, wall);
	/* hoisted, each loss copy waits for the step's kernel on stream 13 (it
	 * did not need to while the cudaFree drained the device): without the
	 * order it would run at once and the host run ahead */
	struct gp_dg_change ch = { .kind = GP_DG_HOIST, .target = "cudaFree" };
	cr_assert_eq(gp_dg_replay(g, &ch, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, legacy_hoisted(0), "hoisted %llu, expected %llu", (unsigned long long)r,
		     (unsigned long long)legacy_hoisted(0));
	gp_dg_free(g);
}

Test(depgraph, legacy_stream_apart_from_a_nonblocking_stream)
{
	/* the copy runs while the step's kernel does: stream 13 does not
	 * synchronize with the legacy stream, and the replay must not make it */
	struct gp_dg *g = gp_dg_new();
	uint64_t t = 1000000;
	for (int i = 0; i < STEPS; i++) {
		call(g, t, t + LAUNCH, GP_API_LAUNCH, "cudaLaunchKernel");
		op(g, t + LAUNCH + LAT, t + LAUNCH + LAT + EXEC, t, t + LAUNCH, 13, GP_OP_KERNEL, "k");
		uint64_t cs = t + LAUNCH;
		call(g, cs, cs + LEG_LAT + LEG_CP + LEG_POST, GP_API_MEMCPY_SYNC, "cudaMemcpy");
		op(g, cs + LEG_LAT, cs + LEG_LAT + LEG_CP, cs, cs + LEG_LAT + LEG_CP + LEG_POST, 7, GP_OP_MEMCPY,
		   "memcpy DtoH");
		t = cs + LEG_LAT + LEG_CP + LEG_POST + EXEC; /* host work as long as a kernel */
	}
	cr_assert_eq(gp_dg_build(g), 0);
	uint64_t r;
	cr_assert_eq(gp_dg_replay(g, NULL, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, gp_dg_wall(g));
	cr_assert_gt(gp_dg_wall(g), 0);
	gp_dg_free(g);
}

Test(depgraph, a_new_wait_wakes_as_late_as_the_hosts)
{
	/* 3 of 10 cudaFree calls woke 30 us late: the host's lateness is 9 us a
	 * slept wait, which each copy that now sleeps in their place pays */
	const uint64_t late[STEPS] = { 0, 30000, 0, 0, 30000, 0, 0, 30000, 0, 0 };
	struct gp_dg *g = gp_dg_new();
	uint64_t wall = legacy_loop(g, late);
	cr_assert_eq(gp_dg_build(g), 0);
	uint64_t r;
	cr_assert_eq(gp_dg_replay(g, NULL, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, wall);
	struct gp_dg_change ch = { .kind = GP_DG_HOIST, .target = "cudaFree" };
	cr_assert_eq(gp_dg_replay(g, &ch, &r, NULL, 0, NULL), 0);
	cr_assert_eq(r, legacy_hoisted(9000), "hoisted %llu, expected %llu", (unsigned long long)r,
		     (unsigned long long)legacy_hoisted(9000));
	gp_dg_free(g);
}
