/*
 * sim_profiler.c — CUPTI's profiling API of CUDA 13 on the simulated
 * device: the Range Profiler (cupti_range_profiler.h), the Profiler Host
 * API (cupti_profiler_host.h) and what they need of cupti_profiler_target.h
 * and cupti_target.h, with the real headers' structs and semantics, over
 * simcuda's cost model: a kernel's work (`kernel GLOB flops= flops_fp64=
 * flops_fp16= bytes= tensor_pct=`) and the device's peaks (`peak_gflops`,
 * `peak_gbps`) come back as real metric names (docs/simcuda.md "Profiling
 * API" lists them with their formulas).
 *
 * What is simulated: auto ranges (CUPTI_AutoRange: one range per kernel
 * launched between cuptiRangeProfilerStart and Stop) with kernel replay
 * (CUPTI_KernelReplay: the runtime replays each such launch `passes` times,
 * serialized, and the launch returns after the replay — sim_replay.c asks
 * simcupti_profiler_passes and reports each launch's work through
 * simcupti_profiler_range). User ranges, user and application replay, PM
 * sampling and the deprecated cuptiProfiler* session API are not
 * (CUPTI_ERROR_NOT_SUPPORTED, or not exported). The chip is "GH100" (the
 * H200's); one range-profiler object at a time, on the one context.
 * SIMCUDA_PROFILER_DENIED=1 makes cuptiRangeProfilerEnable fail with
 * CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, as on a machine where profiling is
 * restricted to admin users (the usual real-world refusal).
 *
 * Images are opaque to clients and laid out here: a config image (the
 * metric ids), a counter-data image (a header with the configured metrics
 * and a fixed array of ranges, each the launch's work); values are
 * computed when a client evaluates them.
 *
 * Threads: any application thread; every entry point and the runtime's two
 * hooks take g_prof_mx (the hooks first test a relaxed flag).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "sim_config.h"
#include "sim_internal.h"

#define SIM_CHIP "GH100"
#define SIM_SM_HZ 1.98e9    /* H200 boost clock: sm__cycles_elapsed.avg.per_second    */
#define SIM_DRAM_HZ 3.125e9 /* the attribute table's memory clock: dram__cycles_elapsed */
#define SIM_HW_PER_PASS 4u  /* hardware metrics one replay pass collects               */

/* ---- the metrics ------------------------------------------------------------ */

enum sim_metric {
	M_DURATION, M_DRAM_READ, M_DRAM_WRITE, M_DRAM_BYTES, M_DRAM_PER_SECOND, M_DRAM_PEAK, M_DRAM_HZ, M_SM_HZ,
	M_FFMA, M_FADD, M_FMUL, M_DFMA, M_DADD, M_DMUL, M_HFMA, M_HADD, M_HMUL,
	M_FFMA_PEAK, M_DFMA_PEAK, M_HFMA_PEAK, M_SM_PCT, M_MEM_PCT, M_DRAM_PCT, M_TENSOR_PCT, M_COUNT
};

static const struct {
	const char *name, *desc, *hw, *dim;
	CUpti_MetricType type;
} sim_metrics[M_COUNT] = {
	[M_DURATION] = {"gpu__time_duration.sum", "GPU time of the range (one pass)", "gpu", "nsecond",
			CUPTI_METRIC_TYPE_COUNTER},
	[M_DRAM_READ] = {"dram__bytes_read.sum", "bytes read from DRAM", "dram", "byte", CUPTI_METRIC_TYPE_COUNTER},
	[M_DRAM_WRITE] = {"dram__bytes_write.sum", "bytes written to DRAM", "dram", "byte", CUPTI_METRIC_TYPE_COUNTER},
	[M_DRAM_BYTES] = {"dram__bytes.sum", "bytes read and written, DRAM", "dram", "byte", CUPTI_METRIC_TYPE_COUNTER},
	[M_DRAM_PER_SECOND] = {"dram__bytes.sum.per_second", "DRAM bytes per second", "dram", "byte/second",
			       CUPTI_METRIC_TYPE_COUNTER},
	[M_DRAM_PEAK] = {"dram__bytes.sum.peak_sustained", "DRAM bytes per DRAM cycle at most", "dram", "byte/cycle",
			 CUPTI_METRIC_TYPE_COUNTER},
	[M_DRAM_HZ] = {"dram__cycles_elapsed.avg.per_second", "DRAM clock", "dram", "cycle/second",
		       CUPTI_METRIC_TYPE_COUNTER},
	[M_SM_HZ] = {"sm__cycles_elapsed.avg.per_second", "SM clock", "sm", "cycle/second", CUPTI_METRIC_TYPE_COUNTER},
	[M_FFMA] = {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "FP32 FMA thread instructions", "sm", "inst",
		    CUPTI_METRIC_TYPE_COUNTER},
	[M_FADD] = {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "FP32 add thread instructions", "sm", "inst",
		    CUPTI_METRIC_TYPE_COUNTER},
	[M_FMUL] = {"sm__sass_thread_inst_executed_op_fmul_pred_on.sum", "FP32 multiply thread instructions", "sm", "inst",
		    CUPTI_METRIC_TYPE_COUNTER},
	[M_DFMA] = {"sm__sass_thread_inst_executed_op_dfma_pred_on.sum", "FP64 FMA thread instructions", "sm", "inst",
		    CUPTI_METRIC_TYPE_COUNTER},
	[M_DADD] = {"sm__sass_thread_inst_executed_op_dadd_pred_on.sum", "FP64 add thread instructions", "sm", "inst",
		    CUPTI_METRIC_TYPE_COUNTER},
	[M_DMUL] = {"sm__sass_thread_inst_executed_op_dmul_pred_on.sum", "FP64 multiply thread instructions", "sm", "inst",
		    CUPTI_METRIC_TYPE_COUNTER},
	[M_HFMA] = {"sm__sass_thread_inst_executed_op_hfma_pred_on.sum", "FP16 FMA thread instructions", "sm", "inst",
		    CUPTI_METRIC_TYPE_COUNTER},
	[M_HADD] = {"sm__sass_thread_inst_executed_op_hadd_pred_on.sum", "FP16 add thread instructions", "sm", "inst",
		    CUPTI_METRIC_TYPE_COUNTER},
	[M_HMUL] = {"sm__sass_thread_inst_executed_op_hmul_pred_on.sum", "FP16 multiply thread instructions", "sm", "inst",
		    CUPTI_METRIC_TYPE_COUNTER},
	[M_FFMA_PEAK] = {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
			 "FP32 FMA thread instructions per SM cycle at most", "sm", "inst/cycle", CUPTI_METRIC_TYPE_COUNTER},
	[M_DFMA_PEAK] = {"sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
			 "FP64 FMA thread instructions per SM cycle at most", "sm", "inst/cycle", CUPTI_METRIC_TYPE_COUNTER},
	[M_HFMA_PEAK] = {"sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained",
			 "FP16 FMA thread instructions per SM cycle at most", "sm", "inst/cycle", CUPTI_METRIC_TYPE_COUNTER},
	[M_SM_PCT] = {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput, % of peak", "sm", "%",
		      CUPTI_METRIC_TYPE_THROUGHPUT},
	[M_MEM_PCT] = {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
		       "compute memory throughput, % of peak", "gpu", "%", CUPTI_METRIC_TYPE_THROUGHPUT},
	[M_DRAM_PCT] = {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput, % of peak", "dram", "%",
			CUPTI_METRIC_TYPE_THROUGHPUT},
	[M_TENSOR_PCT] = {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
			  "tensor pipe (HMMA) active cycles, % of peak", "sm", "%", CUPTI_METRIC_TYPE_RATIO},
};

static int sim_metric_id(const char *name)
{
	for (int i = 0; name && i < M_COUNT; i++)
		if (strcmp(sim_metrics[i].name, name) == 0)
			return i;
	return -1;
}

/* The work of one range: everything a metric is computed from. */
struct sim_work {
	uint64_t pass_ns, flops[3], bytes, tensor_pct; /* flops: FP64, FP32, FP16 */
	double peak_gflops, peak_gbps;
};

static double sim_pct(double rate, double peak)
{
	double p = peak > 0 ? 100.0 * rate / peak : 0;
	return p > 100 ? 100 : p;
}

/* The value of metric m over a range (docs/simcuda.md "Profiling API"). */
static double sim_metric_value(int m, const struct sim_work *w)
{
	double t = (double)w->pass_ns;
	double peak[3] = {w->peak_gflops / 2, w->peak_gflops, w->peak_gflops * 2}; /* GFLOP/s */
	switch (m) {
	case M_DURATION: return t;
	case M_DRAM_READ: return (double)(w->bytes - w->bytes / 2);
	case M_DRAM_WRITE: return (double)(w->bytes / 2);
	case M_DRAM_BYTES: return (double)w->bytes;
	case M_DRAM_PER_SECOND: return t > 0 ? (double)w->bytes / t * 1e9 : 0;
	case M_DRAM_PEAK: return w->peak_gbps * 1e9 / SIM_DRAM_HZ;
	case M_DRAM_HZ: return SIM_DRAM_HZ;
	case M_SM_HZ: return SIM_SM_HZ;
	/* every FLOP an FMA (2 FLOPs), an odd one an add; no multiplies */
	case M_DFMA: return (double)(w->flops[0] / 2);
	case M_FFMA: return (double)(w->flops[1] / 2);
	case M_HFMA: return (double)(w->flops[2] / 2);
	case M_DADD: return (double)(w->flops[0] % 2);
	case M_FADD: return (double)(w->flops[1] % 2);
	case M_HADD: return (double)(w->flops[2] % 2);
	case M_DMUL: case M_FMUL: case M_HMUL: return 0;
	case M_DFMA_PEAK: return peak[0] * 1e9 / 2 / SIM_SM_HZ;
	case M_FFMA_PEAK: return peak[1] * 1e9 / 2 / SIM_SM_HZ;
	case M_HFMA_PEAK: return peak[2] * 1e9 / 2 / SIM_SM_HZ;
	case M_SM_PCT: {
		double p = (double)w->tensor_pct;
		for (int k = 0; k < 3 && t > 0; k++) {
			double q = sim_pct((double)w->flops[k] / t, peak[k]);
			p = q > p ? q : p;
		}
		return p;
	}
	case M_MEM_PCT:
	case M_DRAM_PCT: return t > 0 ? sim_pct((double)w->bytes / t, w->peak_gbps) : 0;
	case M_TENSOR_PCT: return (double)w->tensor_pct;
	default: return 0;
	}
}

/* ---- images ----------------------------------------------------------------- */

struct sim_cfg_image {
	char magic[8];               /* "SIMCFG1"                              */
	uint32_t n;
	uint32_t ids[M_COUNT];
};

struct sim_cd_range {
	char name[24];               /* numeric, in execution order            */
	struct sim_work w;
};

struct sim_cd_head {
	char magic[8];               /* "SIMCDI1"                              */
	uint32_t max_ranges, nranges;
	uint32_t nmetrics;           /* configured by cuptiRangeProfilerSetConfig */
	uint32_t ids[M_COUNT];
	uint32_t pad;
};
_Static_assert(sizeof(struct sim_cd_head) % 8 == 0, "ranges follow the header 8-byte aligned");

static struct sim_cd_head *sim_cd(const uint8_t *img, size_t size)
{
	struct sim_cd_head *h = (struct sim_cd_head *)(void *)img;
	if (!img || size < sizeof *h || memcmp(h->magic, "SIMCDI1", 8) ||
	    h->max_ranges > (size - sizeof *h) / sizeof(struct sim_cd_range) || h->nranges > h->max_ranges)
		return NULL;
	return h;
}

static struct sim_cd_range *sim_cd_range(struct sim_cd_head *h, size_t i)
{
	return (struct sim_cd_range *)(void *)((uint8_t *)(h + 1)) + i;
}

static const struct sim_cfg_image *sim_cfg(const uint8_t *img, size_t size)
{
	const struct sim_cfg_image *c = (const struct sim_cfg_image *)(const void *)img;
	if (!img || size < sizeof *c || memcmp(c->magic, "SIMCFG1", 8) || c->n > M_COUNT)
		return NULL;
	return c;
}

/* Replay passes of a config: the hardware metrics SIM_HW_PER_PASS a pass,
 * plus one pass for SASS (instrumented) metrics. */
static unsigned sim_cfg_passes(const struct sim_cfg_image *c)
{
	unsigned hw = 0, sass = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		if (strstr(sim_metrics[c->ids[i]].name, "__sass_"))
			sass = 1;
		else
			hw++;
	}
	unsigned p = (hw + SIM_HW_PER_PASS - 1) / SIM_HW_PER_PASS + sass;
	return p ? p : 1;
}

/* ---- state ------------------------------------------------------------------- */

struct CUpti_RangeProfiler_Object {
	CUcontext ctx;
	int configured, started;
	uint8_t *image;              /* the client's counter-data image        */
	size_t image_size;
	unsigned passes;
	uint64_t next_range;         /* auto ranges are named 0, 1, 2, ...     */
	struct sim_cd_range *pending; /* collected since Start, decoded later  */
	size_t npending, cappending;
	size_t dropped;
};

struct CUpti_Profiler_Host_Object {
	CUpti_ProfilerType type;
	uint32_t n;
	uint32_t ids[M_COUNT];
};

static pthread_mutex_t g_prof_mx = PTHREAD_MUTEX_INITIALIZER;
static int g_prof_init;                          /* cuptiProfilerInitialize */
static struct CUpti_RangeProfiler_Object *g_obj; /* the one enabled object  */
static atomic_int g_prof_started;                /* g_obj->started, for the runtime's test */

#define SIM_CHECK(p, type)                                                                          \
	do {                                                                                        \
		if (!(p) || (p)->structSize < type##_STRUCT_SIZE)                                   \
			return CUPTI_ERROR_INVALID_PARAMETER;                                       \
	} while (0)

/* ---- the runtime's side (sim_internal.h) ---------------------------------------- */

unsigned simcupti_profiler_passes(int dev)
{
	(void)dev; /* one context object for every device */
	if (!atomic_load_explicit(&g_prof_started, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&g_prof_mx);
	unsigned p = g_obj && g_obj->started ? g_obj->passes : 0;
	pthread_mutex_unlock(&g_prof_mx);
	return p;
}

void simcupti_profiler_range(const struct simcupti_kernel_work *w)
{
	pthread_mutex_lock(&g_prof_mx);
	struct CUpti_RangeProfiler_Object *o = g_obj;
	if (o && o->started) {
		struct sim_cd_head *h = sim_cd(o->image, o->image_size);
		size_t room = h ? h->max_ranges - h->nranges : 0;
		if (o->npending >= room) {
			o->dropped++;
		} else {
			if (o->npending == o->cappending) {
				size_t nc = o->cappending ? 2 * o->cappending : 16;
				struct sim_cd_range *np = realloc(o->pending, nc * sizeof *np);
				if (!np) {
					o->dropped++;
					goto out;
				}
				o->pending = np;
				o->cappending = nc;
			}
			struct sim_cd_range *r = &o->pending[o->npending++];
			memset(r, 0, sizeof *r);
			snprintf(r->name, sizeof r->name, "%llu", (unsigned long long)o->next_range++);
			r->w = (struct sim_work){.pass_ns = w->pass_ns,
						 .flops = {w->flops[0], w->flops[1], w->flops[2]},
						 .bytes = w->bytes,
						 .tensor_pct = w->tensor_pct,
						 .peak_gflops = w->peak_gflops,
						 .peak_gbps = w->peak_gbps};
		}
	}
out:
	pthread_mutex_unlock(&g_prof_mx);
}

/* ---- cupti_profiler_target.h, cupti_target.h ------------------------------------- */

CUptiResult cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *p)
{
	SIM_CHECK(p, CUpti_Profiler_Initialize_Params);
	pthread_mutex_lock(&g_prof_mx);
	g_prof_init = 1;
	pthread_mutex_unlock(&g_prof_mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params *p)
{
	SIM_CHECK(p, CUpti_Profiler_DeInitialize_Params);
	pthread_mutex_lock(&g_prof_mx);
	g_prof_init = 0;
	pthread_mutex_unlock(&g_prof_mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p)
{
	SIM_CHECK(p, CUpti_Device_GetChipName_Params);
	if (p->deviceIndex >= SIM_MAX_DEVICES)
		return CUPTI_ERROR_INVALID_DEVICE;
	p->pChipName = SIM_CHIP;
	return CUPTI_SUCCESS;
}

#define SIM_AVAIL_SIZE 64u

CUptiResult cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params *p)
{
	SIM_CHECK(p, CUpti_Profiler_GetCounterAvailability_Params);
	if (p->ctx && p->ctx != simcupti_context())
		return CUPTI_ERROR_INVALID_CONTEXT;
	if (!p->pCounterAvailabilityImage) {
		p->counterAvailabilityImageSize = SIM_AVAIL_SIZE;
		return CUPTI_SUCCESS;
	}
	if (p->counterAvailabilityImageSize < SIM_AVAIL_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	memset(p->pCounterAvailabilityImage, 0, SIM_AVAIL_SIZE);
	memcpy(p->pCounterAvailabilityImage, "SIMAVL1", 8);
	p->counterAvailabilityImageSize = SIM_AVAIL_SIZE;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerDeviceSupported(CUpti_Profiler_DeviceSupported_Params *p)
{
	SIM_CHECK(p, CUpti_Profiler_DeviceSupported_Params);
	if (p->cuDevice < 0 || p->cuDevice >= SIM_MAX_DEVICES)
		return CUPTI_ERROR_INVALID_DEVICE;
	int range = p->api == CUPTI_PROFILER_RANGE_PROFILING;
	p->architecture = p->sli = p->vGpu = p->confidentialCompute = p->cmp = p->wsl =
		CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
	p->isSupported = range ? CUPTI_PROFILER_CONFIGURATION_SUPPORTED : CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
	return CUPTI_SUCCESS;
}

/* ---- cupti_profiler_host.h -------------------------------------------------------- */

CUptiResult cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *p)
{
	SIM_CHECK(p, CUpti_Profiler_Host_Initialize_Params);
	if (p->profilerType != CUPTI_PROFILER_TYPE_RANGE_PROFILER)
		return CUPTI_ERROR_NOT_SUPPORTED; /* PM sampling is not simulated */
	if (!p->pChipName || strcmp(p->pChipName, SIM_CHIP))
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (p->pCounterAvailabilityImage && memcmp(p->pCounterAvailabilityImage, "SIMAVL1", 8))
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct CUpti_Profiler_Host_Object *h = calloc(1, sizeof *h);
	if (!h)
		return CUPTI_ERROR_OUT_OF_MEMORY;
	h->type = p->profilerType;
	p->pHostObject = h;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *p)
{
	SIM_CHECK(p, CUpti_Profiler_Host_Deinitialize_Params);
	if (!p->pHostObject)
		return CUPTI_ERROR_INVALID_PARAMETER;
	free(p->pHostObject);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetSupportedChips(CUpti_Profiler_Host_GetSupportedChips_Params *p)
{
	static const char *const chips[] = {SIM_CHIP};
	SIM_CHECK(p, CUpti_Profiler_Host_GetSupportedChips_Params);
	p->numChips = 1;
	p->ppChipNames = chips;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetBaseMetrics(CUpti_Profiler_Host_GetBaseMetrics_Params *p)
{
	/* base names (before the first '.'), once each, of the given type */
	static const char *names[CUPTI_METRIC_TYPE__COUNT][M_COUNT];
	static char store[M_COUNT][96];
	static size_t counts[CUPTI_METRIC_TYPE__COUNT];
	SIM_CHECK(p, CUpti_Profiler_Host_GetBaseMetrics_Params);
	if (!p->pHostObject || (unsigned)p->metricType >= CUPTI_METRIC_TYPE__COUNT)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&g_prof_mx);
	if (!counts[0] && !counts[1] && !counts[2]) {
		for (int i = 0; i < M_COUNT; i++) {
			snprintf(store[i], sizeof store[i], "%.*s", (int)strcspn(sim_metrics[i].name, "."),
				 sim_metrics[i].name);
			unsigned t = sim_metrics[i].type;
			int dup = 0;
			for (size_t k = 0; k < counts[t] && !dup; k++)
				dup = strcmp(names[t][k], store[i]) == 0;
			if (!dup)
				names[t][counts[t]++] = store[i];
		}
	}
	pthread_mutex_unlock(&g_prof_mx);
	p->ppMetricNames = names[p->metricType];
	p->numMetrics = counts[p->metricType];
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetSubMetrics(CUpti_Profiler_Host_GetSubMetrics_Params *p)
{
	SIM_CHECK(p, CUpti_Profiler_Host_GetSubMetrics_Params);
	if (!p->pHostObject || !p->pMetricName)
		return CUPTI_ERROR_INVALID_PARAMETER;
	return CUPTI_ERROR_NOT_SUPPORTED;
}

CUptiResult cuptiProfilerHostGetMetricProperties(CUpti_Profiler_Host_GetMetricProperties_Params *p)
{
	SIM_CHECK(p, CUpti_Profiler_Host_GetMetricProperties_Params);
	int m = sim_metric_id(p->pMetricName);
	if (!p->pHostObject)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (m < 0)
		return CUPTI_ERROR_INVALID_METRIC_NAME;
	p->pDescription = sim_metrics[m].desc;
	p->pHwUnit = sim_metrics[m].hw;
	p->pDimUnit = sim_metrics[m].dim;
	p->metricType = sim_metrics[m].type;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *p)
{
	SIM_CHECK(p, CUpti_Profiler_Host_ConfigAddMetrics_Params);
	struct CUpti_Profiler_Host_Object *h = p->pHostObject;
	if (!h || (!p->ppMetricNames && p->numMetrics))
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (size_t i = 0; i < p->numMetrics; i++)
		if (sim_metric_id(p->ppMetricNames[i]) < 0)
			return CUPTI_ERROR_INVALID_METRIC_NAME; /* nothing added */
	for (size_t i = 0; i < p->numMetrics; i++) {
		uint32_t m = (uint32_t)sim_metric_id(p->ppMetricNames[i]);
		int have = 0;
		for (uint32_t k = 0; k < h->n && !have; k++)
			have = h->ids[k] == m;
		if (!have)
			h->ids[h->n++] = m;
	}
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *p)
{
	SIM_CHECK(p, CUpti_Profiler_Host_GetConfigImageSize_Params);
	if (!p->pHostObject)
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->configImageSize = sizeof(struct sim_cfg_image);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *p)
{
	SIM_CHECK(p, CUpti_Profiler_Host_GetConfigImage_Params);
	const struct CUpti_Profiler_Host_Object *h = p->pHostObject;
	if (!h || !p->pConfigImage || p->configImageSize < sizeof(struct sim_cfg_image) || !h->n)
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct sim_cfg_image c;
	memset(&c, 0, sizeof c);
	memcpy(c.magic, "SIMCFG1", 8);
	c.n = h->n;
	memcpy(c.ids, h->ids, sizeof c.ids);
	memcpy(p->pConfigImage, &c, sizeof c);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params *p)
{
	SIM_CHECK(p, CUpti_Profiler_Host_GetNumOfPasses_Params);
	const struct sim_cfg_image *c = sim_cfg(p->pConfigImage, p->configImageSize);
	if (!c)
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->numOfPasses = sim_cfg_passes(c);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetMaxNumHardwareMetricsPerPass(
	CUpti_Profiler_Host_GetMaxNumHardwareMetricsPerPass_Params *p)
{
	SIM_CHECK(p, CUpti_Profiler_Host_GetMaxNumHardwareMetricsPerPass_Params);
	if (!p->pChipName || strcmp(p->pChipName, SIM_CHIP))
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->maxMetricsPerPass = SIM_HW_PER_PASS;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetRangeName(CUpti_Profiler_Host_GetRangeName_Params *p)
{
	SIM_CHECK(p, CUpti_Profiler_Host_GetRangeName_Params);
	struct sim_cd_head *h = sim_cd(p->pCounterDataImage, p->counterDataImageSize);
	if (!h || p->rangeIndex >= h->nranges)
		return CUPTI_ERROR_INVALID_PARAMETER;
	char *s = strdup(sim_cd_range(h, p->rangeIndex)->name); /* the caller frees it */
	if (!s)
		return CUPTI_ERROR_OUT_OF_MEMORY;
	p->pRangeName = s;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *p)
{
	SIM_CHECK(p, CUpti_Profiler_Host_EvaluateToGpuValues_Params);
	struct sim_cd_head *h = sim_cd(p->pCounterDataImage, p->counterDataImageSize);
	if (!p->pHostObject || !h || p->rangeIndex >= h->nranges || !p->pMetricValues ||
	    (!p->ppMetricNames && p->numMetrics))
		return CUPTI_ERROR_INVALID_PARAMETER;
	const struct sim_work *w = &sim_cd_range(h, p->rangeIndex)->w;
	for (size_t i = 0; i < p->numMetrics; i++) {
		int m = sim_metric_id(p->ppMetricNames[i]), collected = 0;
		for (uint32_t k = 0; m >= 0 && k < h->nmetrics && !collected; k++)
			collected = h->ids[k] == (uint32_t)m;
		if (!collected) /* not a metric, or not in the config the data was collected with */
			return CUPTI_ERROR_INVALID_METRIC_NAME;
		p->pMetricValues[i] = sim_metric_value(m, w);
	}
	return CUPTI_SUCCESS;
}

/* ---- cupti_range_profiler.h -------------------------------------------------------- */

static CUptiResult sim_obj_check(const struct CUpti_RangeProfiler_Object *o)
{
	return o && o == g_obj ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params *p)
{
	SIM_CHECK(p, CUpti_RangeProfiler_Enable_Params);
	if (!p->ctx || p->ctx != simcupti_context())
		return CUPTI_ERROR_INVALID_PARAMETER;
	const char *deny = getenv("SIMCUDA_PROFILER_DENIED");
	if (deny && strcmp(deny, "1") == 0)
		return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
	pthread_mutex_lock(&g_prof_mx);
	CUptiResult r = CUPTI_SUCCESS;
	if (!g_prof_init)
		r = CUPTI_ERROR_NOT_INITIALIZED;
	else if (g_obj)
		r = CUPTI_ERROR_INVALID_OPERATION; /* one object on the context */
	else if (!(g_obj = calloc(1, sizeof *g_obj)))
		r = CUPTI_ERROR_OUT_OF_MEMORY;
	if (r == CUPTI_SUCCESS) {
		g_obj->ctx = p->ctx;
		p->pRangeProfilerObject = g_obj;
	}
	pthread_mutex_unlock(&g_prof_mx);
	return r;
}

CUptiResult cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params *p)
{
	SIM_CHECK(p, CUpti_RangeProfiler_Disable_Params);
	pthread_mutex_lock(&g_prof_mx);
	CUptiResult r = sim_obj_check(p->pRangeProfilerObject);
	if (r == CUPTI_SUCCESS) {
		atomic_store(&g_prof_started, 0);
		free(g_obj->pending);
		free(g_obj);
		g_obj = NULL;
	}
	pthread_mutex_unlock(&g_prof_mx);
	return r;
}

CUptiResult cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params *p)
{
	SIM_CHECK(p, CUpti_RangeProfiler_GetCounterDataSize_Params);
	if (!p->pRangeProfilerObject || (!p->pMetricNames && p->numMetrics) || !p->maxNumOfRanges ||
	    p->maxNumRangeTreeNodes < p->maxNumOfRanges || p->maxNumOfRanges > (1u << 20))
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (size_t i = 0; i < p->numMetrics; i++)
		if (sim_metric_id(p->pMetricNames[i]) < 0)
			return CUPTI_ERROR_INVALID_METRIC_NAME;
	p->counterDataSize = sizeof(struct sim_cd_head) + p->maxNumOfRanges * sizeof(struct sim_cd_range);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerCounterDataImageInitialize(
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params *p)
{
	SIM_CHECK(p, CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
	if (!p->pRangeProfilerObject || !p->pCounterData || p->counterDataSize < sizeof(struct sim_cd_head))
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct sim_cd_head h;
	memset(&h, 0, sizeof h);
	memcpy(h.magic, "SIMCDI1", 8);
	h.max_ranges = (uint32_t)((p->counterDataSize - sizeof h) / sizeof(struct sim_cd_range));
	memcpy(p->pCounterData, &h, sizeof h);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params *p)
{
	SIM_CHECK(p, CUpti_RangeProfiler_SetConfig_Params);
	const struct sim_cfg_image *c = sim_cfg(p->pConfig, p->configSize);
	struct sim_cd_head *h = sim_cd(p->pCounterDataImage, p->counterDataImageSize);
	if (!c || !h || p->numNestingLevels < 1 || p->minNestingLevel < 1)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (p->range != CUPTI_AutoRange || p->replayMode != CUPTI_KernelReplay)
		return CUPTI_ERROR_NOT_SUPPORTED; /* user ranges, user / application replay */
	pthread_mutex_lock(&g_prof_mx);
	CUptiResult r = sim_obj_check(p->pRangeProfilerObject);
	if (r == CUPTI_SUCCESS && g_obj->started)
		r = CUPTI_ERROR_INVALID_OPERATION;
	if (r == CUPTI_SUCCESS) {
		h->nmetrics = c->n;
		memcpy(h->ids, c->ids, sizeof h->ids);
		g_obj->image = p->pCounterDataImage;
		g_obj->image_size = p->counterDataImageSize;
		g_obj->passes = sim_cfg_passes(c);
		g_obj->npending = g_obj->dropped = 0;
		g_obj->configured = 1;
	}
	pthread_mutex_unlock(&g_prof_mx);
	return r;
}

CUptiResult cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params *p)
{
	SIM_CHECK(p, CUpti_RangeProfiler_Start_Params);
	pthread_mutex_lock(&g_prof_mx);
	CUptiResult r = sim_obj_check(p->pRangeProfilerObject);
	if (r == CUPTI_SUCCESS && (!g_obj->configured || g_obj->started))
		r = CUPTI_ERROR_INVALID_OPERATION;
	if (r == CUPTI_SUCCESS) {
		g_obj->started = 1;
		atomic_store(&g_prof_started, 1);
	}
	pthread_mutex_unlock(&g_prof_mx);
	return r;
}

CUptiResult cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params *p)
{
	SIM_CHECK(p, CUpti_RangeProfiler_Stop_Params);
	pthread_mutex_lock(&g_prof_mx);
	CUptiResult r = sim_obj_check(p->pRangeProfilerObject);
	if (r == CUPTI_SUCCESS && !g_obj->started)
		r = CUPTI_ERROR_INVALID_OPERATION;
	if (r == CUPTI_SUCCESS) {
		g_obj->started = 0;
		atomic_store(&g_prof_started, 0);
		/* kernel replay ran every pass inside each launch */
		p->passIndex = 0;
		p->targetNestingLevel = 1;
		p->isAllPassSubmitted = 1;
	}
	pthread_mutex_unlock(&g_prof_mx);
	return r;
}

CUptiResult cuptiRangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params *p)
{
	SIM_CHECK(p, CUpti_RangeProfiler_PushRange_Params);
	pthread_mutex_lock(&g_prof_mx);
	CUptiResult r = sim_obj_check(p->pRangeProfilerObject);
	pthread_mutex_unlock(&g_prof_mx);
	return r == CUPTI_SUCCESS ? CUPTI_ERROR_INVALID_OPERATION : r; /* auto ranges only */
}

CUptiResult cuptiRangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params *p)
{
	SIM_CHECK(p, CUpti_RangeProfiler_PopRange_Params);
	pthread_mutex_lock(&g_prof_mx);
	CUptiResult r = sim_obj_check(p->pRangeProfilerObject);
	pthread_mutex_unlock(&g_prof_mx);
	return r == CUPTI_SUCCESS ? CUPTI_ERROR_INVALID_OPERATION : r;
}

CUptiResult cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params *p)
{
	SIM_CHECK(p, CUpti_RangeProfiler_DecodeData_Params);
	pthread_mutex_lock(&g_prof_mx);
	CUptiResult r = sim_obj_check(p->pRangeProfilerObject);
	struct sim_cd_head *h = r == CUPTI_SUCCESS ? sim_cd(g_obj->image, g_obj->image_size) : NULL;
	if (r == CUPTI_SUCCESS && (g_obj->started || !h))
		r = CUPTI_ERROR_INVALID_OPERATION;
	if (r == CUPTI_SUCCESS) {
		size_t dropped = g_obj->dropped;
		for (size_t i = 0; i < g_obj->npending; i++) {
			if (h->nranges < h->max_ranges)
				*sim_cd_range(h, h->nranges++) = g_obj->pending[i];
			else
				dropped++;
		}
		g_obj->npending = g_obj->dropped = 0;
		p->numOfRangeDropped = dropped;
	}
	pthread_mutex_unlock(&g_prof_mx);
	return r;
}

CUptiResult cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params *p)
{
	SIM_CHECK(p, CUpti_RangeProfiler_GetCounterDataInfo_Params);
	struct sim_cd_head *h = sim_cd(p->pCounterDataImage, p->counterDataImageSize);
	if (!h)
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->numTotalRanges = h->nranges;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerCounterDataGetRangeInfo(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params *p)
{
	SIM_CHECK(p, CUpti_RangeProfiler_CounterData_GetRangeInfo_Params);
	struct sim_cd_head *h = sim_cd(p->pCounterDataImage, p->counterDataImageSize);
	if (!h || p->rangeIndex >= h->nranges)
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->rangeName = sim_cd_range(h, p->rangeIndex)->name;
	return CUPTI_SUCCESS;
}
