/*
 * test_simcuda_profiler.c — Criterion suite for simcuda's CUPTI profiling
 * API (simcuda/sim_profiler.c, the kernel replay in sim_replay.c;
 * docs/simcuda.md "Profiling API"), driven in-process the way a real
 * client drives CUDA 13's Range Profiler: the context from the RESOURCE
 * callback, the host object's config image, a counter-data image, Start,
 * the launch, Stop, DecodeData, EvaluateToGpuValues. Checks the metric
 * values against the cost model's arithmetic, the replay in the truth
 * (serialized, `passes` long, the launch call returning after it, only for
 * launches inside Start..Stop), and the refusals. Each test runs in its
 * own process (fresh simulator).
 */
#include "sim_testutil.h"

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <math.h>

static char g_model[256];
static CUcontext g_ctx;

static void CUPTIAPI on_resource(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId cbid, const void *data)
{
	(void)ud;
	if (d == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
		g_ctx = ((const CUpti_ResourceData *)data)->context;
}

static void setup(void)
{
	snprintf(g_model, sizeof g_model, "/tmp/simcuda-prof-%d.simcuda", (int)getpid());
	FILE *f = fopen(g_model, "w");
	cr_assert(f);
	/* aten_mm: 5e9 FP32 FLOPs and 2e8 DRAM bytes in 100 us = 50000 GFLOP/s
	 * (74.7 % of 66900) and 2000 GB/s (41.7 % of 4800) */
	fprintf(f, "launch_ns 20000\nexec_ns 30000\npeak_gflops 66900\npeak_gbps 4800\n"
		   "kernel aten_mm exec_ns=100000 flops=5000000001 bytes=200000001 flops_fp64=1000 tensor_pct=12\n");
	fclose(f);
	setenv("SIMCUDA_CONFIG", g_model, 1);
	unsetenv("SIMCUDA_PROFILER_DENIED");
	tu_truth_begin();
	tu_register_kernels();
	CUpti_SubscriberHandle sub;
	cr_assert_eq(cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_resource, NULL), CUPTI_SUCCESS);
	cr_assert_eq(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED),
		     CUPTI_SUCCESS);
	cr_assert_eq(cudaFree(NULL), cudaSuccess); /* driver start: the context */
	cr_assert(g_ctx, "CONTEXT_CREATED gave the context");
}

static void teardown(void)
{
	unlink(g_model);
	__cudaUnregisterFatBinary(tu_fatbin);
}

TestSuite(simcuda_profiler, .init = setup, .fini = teardown, .timeout = 60);

static const char *g_metrics[] = {
	"gpu__time_duration.sum",
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
	"sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
	"sm__throughput.avg.pct_of_peak_sustained_elapsed",
	"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
	"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
	"dram__bytes.sum.peak_sustained",
	"dram__cycles_elapsed.avg.per_second",
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
	"sm__cycles_elapsed.avg.per_second",
};
#define NMET (sizeof g_metrics / sizeof g_metrics[0])

struct session {
	CUpti_Profiler_Host_Object *host;
	CUpti_RangeProfiler_Object *obj;
	uint8_t cfg[4096], *data;
	size_t cfg_size, data_size, passes;
};

/* The client side up to a configured session (ranges: its capacity). */
static void session_open(struct session *s, size_t ranges)
{
	memset(s, 0, sizeof *s);
	CUpti_Profiler_Initialize_Params ip = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
	cr_assert_eq(cuptiProfilerInitialize(&ip), CUPTI_SUCCESS);
	CUpti_Device_GetChipName_Params cp = {.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE};
	cr_assert_eq(cuptiDeviceGetChipName(&cp), CUPTI_SUCCESS);
	cr_assert_str_eq(cp.pChipName, "GH100");
	CUpti_Profiler_GetCounterAvailability_Params ap = {.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
	ap.ctx = g_ctx;
	cr_assert_eq(cuptiProfilerGetCounterAvailability(&ap), CUPTI_SUCCESS);
	uint8_t avail[256];
	cr_assert_leq(ap.counterAvailabilityImageSize, sizeof avail);
	ap.pCounterAvailabilityImage = avail;
	cr_assert_eq(cuptiProfilerGetCounterAvailability(&ap), CUPTI_SUCCESS);
	CUpti_Profiler_Host_Initialize_Params hp = {.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
	hp.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	hp.pChipName = cp.pChipName;
	hp.pCounterAvailabilityImage = avail;
	cr_assert_eq(cuptiProfilerHostInitialize(&hp), CUPTI_SUCCESS);
	s->host = hp.pHostObject;
	CUpti_Profiler_Host_ConfigAddMetrics_Params mp = {.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
	mp.pHostObject = s->host;
	mp.ppMetricNames = g_metrics;
	mp.numMetrics = NMET;
	cr_assert_eq(cuptiProfilerHostConfigAddMetrics(&mp), CUPTI_SUCCESS);
	CUpti_Profiler_Host_GetConfigImageSize_Params sp = {.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
	sp.pHostObject = s->host;
	cr_assert_eq(cuptiProfilerHostGetConfigImageSize(&sp), CUPTI_SUCCESS);
	cr_assert_leq(sp.configImageSize, sizeof s->cfg);
	CUpti_Profiler_Host_GetConfigImage_Params gp = {.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
	gp.pHostObject = s->host;
	gp.configImageSize = s->cfg_size = sp.configImageSize;
	gp.pConfigImage = s->cfg;
	cr_assert_eq(cuptiProfilerHostGetConfigImage(&gp), CUPTI_SUCCESS);
	CUpti_Profiler_Host_GetNumOfPasses_Params pp = {.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
	pp.configImageSize = s->cfg_size;
	pp.pConfigImage = s->cfg;
	cr_assert_eq(cuptiProfilerHostGetNumOfPasses(&pp), CUPTI_SUCCESS);
	s->passes = pp.numOfPasses;
	CUpti_RangeProfiler_Enable_Params ep = {.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
	ep.ctx = g_ctx;
	cr_assert_eq(cuptiRangeProfilerEnable(&ep), CUPTI_SUCCESS);
	s->obj = ep.pRangeProfilerObject;
	CUpti_RangeProfiler_GetCounterDataSize_Params dp = {.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
	dp.pRangeProfilerObject = s->obj;
	dp.pMetricNames = g_metrics;
	dp.numMetrics = NMET;
	dp.maxNumOfRanges = ranges;
	dp.maxNumRangeTreeNodes = (uint32_t)ranges;
	cr_assert_eq(cuptiRangeProfilerGetCounterDataSize(&dp), CUPTI_SUCCESS);
	s->data_size = dp.counterDataSize;
	s->data = malloc(s->data_size);
	cr_assert(s->data);
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params di = {.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
	di.pRangeProfilerObject = s->obj;
	di.counterDataSize = s->data_size;
	di.pCounterData = s->data;
	cr_assert_eq(cuptiRangeProfilerCounterDataImageInitialize(&di), CUPTI_SUCCESS);
	CUpti_RangeProfiler_SetConfig_Params sc = {.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
	sc.pRangeProfilerObject = s->obj;
	sc.configSize = s->cfg_size;
	sc.pConfig = s->cfg;
	sc.counterDataImageSize = s->data_size;
	sc.pCounterDataImage = s->data;
	sc.range = CUPTI_AutoRange;
	sc.replayMode = CUPTI_KernelReplay;
	sc.maxRangesPerPass = ranges;
	sc.numNestingLevels = 1;
	sc.minNestingLevel = 1;
	sc.targetNestingLevel = 1;
	cr_assert_eq(cuptiRangeProfilerSetConfig(&sc), CUPTI_SUCCESS);
}

static void session_start(struct session *s)
{
	CUpti_RangeProfiler_Start_Params p = {.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
	p.pRangeProfilerObject = s->obj;
	cr_assert_eq(cuptiRangeProfilerStart(&p), CUPTI_SUCCESS);
}

/* Stop and decode; returns the ranges dropped, *n the ranges in the image. */
static size_t session_stop(struct session *s, size_t *n)
{
	CUpti_RangeProfiler_Stop_Params p = {.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
	p.pRangeProfilerObject = s->obj;
	cr_assert_eq(cuptiRangeProfilerStop(&p), CUPTI_SUCCESS);
	cr_assert_eq(p.isAllPassSubmitted, 1);
	CUpti_RangeProfiler_DecodeData_Params d = {.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
	d.pRangeProfilerObject = s->obj;
	cr_assert_eq(cuptiRangeProfilerDecodeData(&d), CUPTI_SUCCESS);
	CUpti_RangeProfiler_GetCounterDataInfo_Params i = {.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
	i.pCounterDataImage = s->data;
	i.counterDataImageSize = s->data_size;
	cr_assert_eq(cuptiRangeProfilerGetCounterDataInfo(&i), CUPTI_SUCCESS);
	*n = i.numTotalRanges;
	return d.numOfRangeDropped;
}

static void session_eval(struct session *s, size_t range, double *v)
{
	CUpti_Profiler_Host_EvaluateToGpuValues_Params p = {.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
	p.pHostObject = s->host;
	p.pCounterDataImage = s->data;
	p.counterDataImageSize = s->data_size;
	p.rangeIndex = range;
	p.ppMetricNames = g_metrics;
	p.numMetrics = NMET;
	p.pMetricValues = v;
	cr_assert_eq(cuptiProfilerHostEvaluateToGpuValues(&p), CUPTI_SUCCESS);
}

static void session_close(struct session *s)
{
	CUpti_RangeProfiler_Disable_Params d = {.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
	d.pRangeProfilerObject = s->obj;
	cr_assert_eq(cuptiRangeProfilerDisable(&d), CUPTI_SUCCESS);
	CUpti_Profiler_Host_Deinitialize_Params h = {.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
	h.pHostObject = s->host;
	cr_assert_eq(cuptiProfilerHostDeinitialize(&h), CUPTI_SUCCESS);
	CUpti_Profiler_DeInitialize_Params p = {.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
	cr_assert_eq(cuptiProfilerDeInitialize(&p), CUPTI_SUCCESS);
	free(s->data);
}

Test(simcuda_profiler, counters_of_a_replayed_launch_follow_the_cost_model)
{
	struct session s;
	session_open(&s, 4);
	/* 9 hardware metrics (4 a pass) + SASS ones (one pass) */
	cr_assert_eq(s.passes, 4u);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess); /* before Start: not replayed */
	session_start(&s);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	size_t n;
	cr_assert_eq(session_stop(&s, &n), 0u);
	cr_assert_eq(n, 1u);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess); /* after Stop: not replayed */
	cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
	double v[NMET];
	session_eval(&s, 0, v);
	cr_expect_eq(v[0], 100000.0, "gpu__time_duration: one pass");
	cr_expect_eq(v[1], 100000001.0, "dram read: the odd byte goes to reads");
	cr_expect_eq(v[2], 100000000.0);
	cr_expect_eq(v[3], 2500000000.0, "5e9 + 1 FP32 FLOPs: 2.5e9 FMAs ...");
	cr_expect_eq(v[4], 1.0, "... and one add");
	cr_expect_eq(v[5], 500.0, "1000 FP64 FLOPs: 500 DFMAs");
	cr_expect(fabs(v[6] - 100.0 * 50000.00001 / 66900.0) < 1e-6, "sm throughput %% = FP32 rate / peak: %g", v[6]);
	cr_expect(fabs(v[7] - 100.0 * 2000.00001 / 4800.0) < 1e-6, "memory throughput %% = DRAM rate / peak: %g",
		  v[7]);
	cr_expect_eq(v[8], 12.0, "tensor pipe %%");
	cr_expect(fabs(v[9] * v[10] - 4800e9) < 1, "DRAM peak = bytes/cycle x cycles/s: %g", v[9] * v[10]);
	cr_expect(fabs(2 * v[11] * v[12] - 66900e9) < 1e3, "FP32 peak = 2 x FMA/cycle x cycles/s: %g",
		  2 * v[11] * v[12]);
	CUpti_Profiler_Host_GetRangeName_Params rn = {.structSize = CUpti_Profiler_Host_GetRangeName_Params_STRUCT_SIZE};
	rn.pCounterDataImage = s.data;
	rn.counterDataImageSize = s.data_size;
	rn.rangeIndex = 0;
	cr_assert_eq(cuptiProfilerHostGetRangeName(&rn), CUPTI_SUCCESS);
	cr_expect_str_eq(rn.pRangeName, "0", "auto ranges are numbered in execution order");
	free((void *)rn.pRangeName);
	session_close(&s);

	size_t ne;
	struct sim_ev *ev = tu_truth_load(&ne);
	const struct sim_ev *k[3] = {0}, *api[3] = {0};
	size_t nk = 0, na = 0;
	for (size_t i = 0; i < ne; i++) {
		if (ev[i].type == SIM_EV_KERNEL && nk < 3)
			k[nk++] = &ev[i];
		if (ev[i].type == SIM_EV_API && !strcmp(ev[i].name, "cudaLaunchKernel") && na < 3)
			api[na++] = &ev[i];
	}
	cr_assert_eq(nk, 3u);
	cr_assert_eq(na, 3u);
	cr_expect_eq(k[0]->replay, 0u);
	cr_expect_eq(k[1]->replay, 4u, "the profiled launch is a replay of 4 passes in the truth");
	cr_expect_eq(k[2]->replay, 0u);
	cr_expect_eq(k[0]->end - k[0]->start, 100000u);
	cr_expect_eq(k[1]->end - k[1]->start, 400000u, "4 passes of 100 us");
	cr_expect_geq(k[1]->start, k[0]->end, "serialized after earlier work");
	cr_expect_geq(api[1]->end, k[1]->end, "the launch call returns after the replay");
	cr_expect_lt(api[0]->end, k[0]->end, "an ordinary launch returns before its kernel ends");
	free(ev);
}

Test(simcuda_profiler, ranges_beyond_the_image_are_dropped_and_counted)
{
	struct session s;
	session_open(&s, 2);
	session_start(&s);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(tu_launch(i == 1 ? &tu_stub_other : &tu_stub_mm, NULL), cudaSuccess);
	size_t n;
	cr_expect_eq(session_stop(&s, &n), 1u);
	cr_expect_eq(n, 2u);
	double v[NMET];
	session_eval(&s, 1, v); /* `other` has no work in the model: its time only */
	cr_expect_eq(v[0], 30000.0);
	cr_expect_eq(v[1] + v[2] + v[3], 0.0);
	CUpti_RangeProfiler_CounterData_GetRangeInfo_Params ri = {.structSize = CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
	ri.pCounterDataImage = s.data;
	ri.counterDataImageSize = s.data_size;
	ri.rangeIndex = 1;
	cr_assert_eq(cuptiRangeProfilerCounterDataGetRangeInfo(&ri), CUPTI_SUCCESS);
	cr_expect_str_eq(ri.rangeName, "1");
	session_close(&s);
}

Test(simcuda_profiler, refusals)
{
	CUpti_RangeProfiler_Enable_Params ep = {.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
	ep.ctx = g_ctx;
	cr_expect_eq(cuptiRangeProfilerEnable(&ep), CUPTI_ERROR_NOT_INITIALIZED, "Enable before Initialize");
	CUpti_Profiler_Host_Initialize_Params hp = {.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
	hp.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	hp.pChipName = "GA100";
	cr_expect_eq(cuptiProfilerHostInitialize(&hp), CUPTI_ERROR_INVALID_PARAMETER, "another chip");
	hp.pChipName = "GH100";
	cr_assert_eq(cuptiProfilerHostInitialize(&hp), CUPTI_SUCCESS);
	const char *bad[] = {"dram__bytes_read.sum", "no__such_metric.sum"};
	CUpti_Profiler_Host_ConfigAddMetrics_Params mp = {.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
	mp.pHostObject = hp.pHostObject;
	mp.ppMetricNames = bad;
	mp.numMetrics = 2;
	cr_expect_eq(cuptiProfilerHostConfigAddMetrics(&mp), CUPTI_ERROR_INVALID_METRIC_NAME);
	CUpti_Profiler_Host_Deinitialize_Params hd = {.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
	hd.pHostObject = hp.pHostObject;
	cr_assert_eq(cuptiProfilerHostDeinitialize(&hd), CUPTI_SUCCESS);
	CUpti_Profiler_Initialize_Params ip = {.structSize = 0}; /* no structSize */
	cr_expect_eq(cuptiProfilerInitialize(&ip), CUPTI_ERROR_INVALID_PARAMETER);
	struct session s;
	session_open(&s, 1);
	/* a metric the data was not collected with */
	const char *other = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
	double v;
	CUpti_Profiler_Host_EvaluateToGpuValues_Params p = {.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
	session_start(&s);
	cr_assert_eq(tu_launch(&tu_stub_mm, NULL), cudaSuccess);
	size_t n;
	session_stop(&s, &n);
	p.pHostObject = s.host;
	p.pCounterDataImage = s.data;
	p.counterDataImageSize = s.data_size;
	p.ppMetricNames = &other;
	p.numMetrics = 1;
	p.pMetricValues = &v;
	cr_expect_eq(cuptiProfilerHostEvaluateToGpuValues(&p), CUPTI_ERROR_INVALID_METRIC_NAME);
	CUpti_RangeProfiler_Enable_Params e2 = {.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
	e2.ctx = g_ctx;
	cr_expect_eq(cuptiRangeProfilerEnable(&e2), CUPTI_ERROR_INVALID_OPERATION, "one object at a time");
	CUpti_RangeProfiler_PushRange_Params pr = {.structSize = CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
	pr.pRangeProfilerObject = s.obj;
	pr.pRangeName = "x";
	cr_expect_eq(cuptiRangeProfilerPushRange(&pr), CUPTI_ERROR_INVALID_OPERATION, "auto ranges: no push");
	CUpti_RangeProfiler_SetConfig_Params sc = {.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
	sc.pRangeProfilerObject = s.obj;
	sc.configSize = s.cfg_size;
	sc.pConfig = s.cfg;
	sc.counterDataImageSize = s.data_size;
	sc.pCounterDataImage = s.data;
	sc.range = CUPTI_UserRange;
	sc.replayMode = CUPTI_KernelReplay;
	sc.numNestingLevels = sc.minNestingLevel = 1;
	cr_expect_eq(cuptiRangeProfilerSetConfig(&sc), CUPTI_ERROR_NOT_SUPPORTED, "user ranges");
	session_close(&s);
	setenv("SIMCUDA_PROFILER_DENIED", "1", 1);
	cr_assert_eq(cuptiProfilerInitialize(&(CUpti_Profiler_Initialize_Params){.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE}),
		     CUPTI_SUCCESS);
	cr_expect_eq(cuptiRangeProfilerEnable(&ep), CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "profiling restricted");
}
