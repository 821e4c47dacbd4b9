/*
 * test_simcuda_graph.c — Criterion suite for simcuda's CUDA graphs
 * (simcuda/sim_graph.c, docs/simcuda.md "CUDA graphs") and the
 * exec_per_block_ns cost rule, driven in-process (sim_testutil.h):
 *   - capture turns launches into nodes: no kernel record, one
 *     GRAPHNODE_CREATED per launch, on the launching thread, inside the call;
 *   - instantiation clones: new graph and node ids, GRAPHNODE_CLONED maps
 *     each clone to its captured node;
 *   - every graph launch gives one kernel record per node, with the launch
 *     call's correlationId, the instantiated graphId / graphNodeId, nodes
 *     back to back on the stream, none before the call returned;
 *   - capture state and its errors;
 *   - exec_per_block_ns adds per block beyond the first.
 * Each test runs in its own process (fresh simulator).
 */
#include "sim_testutil.h"

#include <stdatomic.h>

#define MAXN 16

static struct {
	int created, cloned, exec_created;
	uint64_t created_node[MAXN];
	uint32_t created_graph;
	uint64_t clone_node[MAXN], clone_orig[MAXN];
	uint32_t clone_graph, clone_orig_graph;
	pthread_t created_thread;
	int in_launch; /* set by the test around each capturing launch */
	int created_inside;
} g;

static void CUPTIAPI on_cb(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
	(void)ud;
	if (dom != CUPTI_CB_DOMAIN_RESOURCE)
		return;
	const CUpti_ResourceData *rd = data;
	const CUpti_GraphData *gd = rd->resourceDescriptor;
	if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED && g.created < MAXN) {
		cr_assert_eq(cuptiGetGraphNodeId(gd->node, &g.created_node[g.created]), CUPTI_SUCCESS);
		cr_assert_eq(cuptiGetGraphId(gd->graph, &g.created_graph), CUPTI_SUCCESS);
		g.created_thread = pthread_self();
		g.created_inside += g.in_launch;
		g.created++;
	} else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED && g.cloned < MAXN) {
		cr_assert_eq(cuptiGetGraphNodeId(gd->node, &g.clone_node[g.cloned]), CUPTI_SUCCESS);
		cr_assert_eq(cuptiGetGraphNodeId(gd->originalNode, &g.clone_orig[g.cloned]), CUPTI_SUCCESS);
		cr_assert_eq(cuptiGetGraphId(gd->graph, &g.clone_graph), CUPTI_SUCCESS);
		cr_assert_eq(cuptiGetGraphId(gd->originalGraph, &g.clone_orig_graph), CUPTI_SUCCESS);
		g.cloned++;
	} else if (cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED) {
		g.exec_created++;
	}
}

static CUpti_SubscriberHandle subscribe(void)
{
	CUpti_SubscriberHandle sub;
	cr_assert_eq(cuptiSubscribe(&sub, on_cb, NULL), CUPTI_SUCCESS);
	cr_assert_eq(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RESOURCE), CUPTI_SUCCESS);
	return sub;
}

Test(simcuda_graph, capture_instantiate_replay)
{
	tu_register_kernels();
	subscribe();
	tu_cupti_start(0);
	cudaStream_t s;
	cr_assert_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	enum cudaStreamCaptureStatus cs;
	cr_assert_eq(cudaStreamIsCapturing(s, &cs), cudaSuccess);
	cr_expect_eq(cs, cudaStreamCaptureStatusActive);
	g.in_launch = 1;
	cr_assert_eq(tu_launch(&tu_stub_mm, s), cudaSuccess);
	cr_assert_eq(tu_launch(&tu_stub_other, s), cudaSuccess);
	g.in_launch = 0;
	cudaGraph_t graph;
	cr_assert_eq(cudaStreamEndCapture(s, &graph), cudaSuccess);
	cr_assert_eq(cudaStreamIsCapturing(s, &cs), cudaSuccess);
	cr_expect_eq(cs, cudaStreamCaptureStatusNone);
	cr_expect_eq(g.created, 2, "one node per captured launch");
	cr_expect_eq(g.created_inside, 2, "GRAPHNODE_CREATED fires inside the launch call");
	cr_expect(pthread_equal(g.created_thread, pthread_self()), "on the launching thread");
	cr_expect_neq(g.created_node[0], g.created_node[1]);

	cudaGraphExec_t exec;
	cr_assert_eq(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
	cr_assert_eq(cudaGraphDestroy(graph), cudaSuccess, "the exec outlives its captured graph");
	cr_expect_eq(g.cloned, 2);
	cr_expect_eq(g.exec_created, 1);
	cr_expect_eq(g.clone_orig_graph, g.created_graph);
	cr_expect_neq(g.clone_graph, g.created_graph, "instantiation gives a new graph id");
	for (int i = 0; i < 2; i++) {
		cr_expect_eq(g.clone_orig[i], g.created_node[i], "clone %d maps to captured node %d", i, i);
		cr_expect_neq(g.clone_node[i], g.created_node[i]);
	}
	const int launches = 3;
	for (int i = 0; i < launches; i++)
		cr_assert_eq(cudaGraphLaunch(exec, s), cudaSuccess);
	tu_flush();
	cr_assert_eq(cudaGraphExecDestroy(exec), cudaSuccess);

	/* kernel records: none from the capture, one per node per launch */
	cr_expect_eq(tu_count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), (size_t)(2 * launches));
	int seen_launch = 0;
	for (size_t i = 0; i < tu.n; i++) {
		if (tu.v[i].kind != CUPTI_ACTIVITY_KIND_RUNTIME ||
		    tu.v[i].u.a.cbid != CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000)
			continue;
		const CUpti_ActivityAPI *a = &tu.v[i].u.a;
		seen_launch++;
		const CUpti_ActivityKernel10 *k[2] = { 0 };
		int nk = 0;
		for (size_t j = 0; j < tu.n; j++)
			if (tu.v[j].kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
			    tu.v[j].u.k.correlationId == a->correlationId && nk < 2)
				k[nk++] = &tu.v[j].u.k;
		cr_assert_eq(nk, 2, "launch corr %u: both nodes carry its correlationId", a->correlationId);
		if (k[0]->start > k[1]->start) {
			const CUpti_ActivityKernel10 *t = k[0];
			k[0] = k[1];
			k[1] = t;
		}
		for (int n = 0; n < 2; n++) {
			cr_expect_eq(k[n]->graphId, g.clone_graph, "the instantiated graph's id");
			cr_expect_eq(k[n]->graphNodeId, g.clone_node[n], "node %d: the cloned node's id", n);
			cr_expect_eq(k[n]->streamId, k[0]->streamId);
		}
		cr_expect_str_eq(k[0]->name, "_Z7aten_mmPfi", "captured order");
		cr_expect_str_eq(k[1]->name, "_Z5otherv");
		cr_expect_geq(k[0]->start, a->end, "no node starts before the launch call returned");
		cr_expect_geq(k[1]->start, k[0]->end, "nodes back to back on the stream");
	}
	cr_expect_eq(seen_launch, launches);
}

Test(simcuda_graph, capture_errors)
{
	tu_register_kernels();
	cudaStream_t s;
	cudaGraph_t graph;
	cr_assert_eq(cudaStreamCreate(&s), cudaSuccess);
	cr_expect_eq(cudaStreamEndCapture(s, &graph), cudaErrorIllegalState, "not capturing");
	cr_expect_eq(cudaStreamBeginCapture(cudaStreamLegacy, cudaStreamCaptureModeGlobal),
		     cudaErrorStreamCaptureUnsupported);
	cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	cr_expect_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaErrorIllegalState, "already");
	cr_assert_eq(cudaStreamEndCapture(s, &graph), cudaSuccess);
	cudaGraphExec_t exec;
	cr_expect_eq(cudaGraphInstantiate(NULL, graph, 0), cudaErrorInvalidValue);
	cr_assert_eq(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
	cr_expect_eq(cudaGraphLaunch(NULL, s), cudaErrorInvalidValue);
	cr_expect_eq(cudaGraphLaunch(exec, s), cudaSuccess, "an empty graph launches");
	cr_assert_eq(cudaGraphExecDestroy(exec), cudaSuccess);
	cr_assert_eq(cudaGraphDestroy(graph), cudaSuccess);
}

Test(simcuda_graph, exec_per_block_rule)
{
	char path[64];
	snprintf(path, sizeof path, "/tmp/simcuda-graphcfg-%d", (int)getpid());
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fprintf(f, "kernel aten_mm exec_ns=1000 exec_per_block_ns=250\n");
	fclose(f);
	setenv("SIMCUDA_CONFIG", path, 1);
	unsetenv("SIMCUDA_EXEC_NS");
	/* pinned: CUPTI's clock drift rounds a record's start and end apart by
	 * up to 1 ns; this test checks durations exactly */
	setenv("SIMCUDA_CUPTI_CLOCK_DRIFT_PPM", "0", 1);
	setenv("SIMCUDA_CUPTI_CLOCK_OFFSET_NS", "0", 1);
	tu_register_kernels();
	tu_cupti_start(0);
	float *p = NULL;
	int n = 1;
	void *args[] = { &p, &n };
	dim3 b = { 32, 1, 1 };
	dim3 grids[3] = { { 1, 1, 1 }, { 4, 1, 1 }, { 2, 3, 2 } };
	for (int i = 0; i < 3; i++)
		cr_assert_eq(cudaLaunchKernel(&tu_stub_mm, grids[i], b, args, 0, NULL), cudaSuccess);
	tu_flush();
	unlink(path);
	uint64_t want[3] = { 1000, 1000 + 250 * 3, 1000 + 250 * 11 }; /* blocks - 1 = 0, 3, 11 */
	int k = 0;
	for (size_t i = 0; i < tu.n && k < 3; i++)
		if (tu.v[i].kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			const CUpti_ActivityKernel10 *r = &tu.v[i].u.k;
			int which = r->gridX == 1 ? 0 : r->gridX == 4 ? 1 : 2;
			cr_expect_eq(r->end - r->start, want[which], "grid %d: %llu ns", which,
				     (unsigned long long)(r->end - r->start));
			k++;
		}
	cr_expect_eq(k, 3);
}
