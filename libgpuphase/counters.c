/*
 * counters.c — hardware counters for a sample of launches of the kernels
 * that matter (GPUPHASE_COUNTERS; docs/configuration.md, docs/metrics.md
 * §20): CUDA 13's CUPTI Range Profiler with auto ranges and kernel replay,
 * started just before a sampled launch and stopped just after it, so only
 * that launch is replayed and the rest of the run is untouched. Each
 * sampled launch becomes GP_REC_COUNTER records carrying its hook op id:
 * DRAM bytes read and written, FLOPs by precision, SM / memory / tensor
 * throughput in % of peak, its replay passes; each device's peaks once
 * (op 0). The report keeps replayed launches out of every phase.
 *
 * Which launches: the kernels `kernel=GLOB;GLOB...` names (matched as the
 * iteration marker matches, trace/kernel_name.h), or with `top=N` the N
 * kernels with the most GPU time in CUPTI's kernel records of the first
 * `warmup` launches (flushed and ranked at that launch). Of a selected
 * kernel, launches skip+1 .. skip+samples (counted from the start of the
 * run, through the hooks; with top=N only those after the ranking) are
 * sampled, in the capture window.
 *
 * CUPTI is the library cupti.c opened; every profiler function is looked up
 * with dlsym (no DT_NEEDED), the profiling session is set up at the first
 * sampled launch (lazily: a run that samples nothing never touches the
 * profiler). The context is the one CUPTI's RESOURCE callback announced
 * (cupti.c forwards CONTEXT_CREATED) or, for a context created before the
 * subscription, the one in the callback data of the next runtime call
 * (cupti.c turns runtime-API callbacks on at open and off once the context
 * is known), else the driver's current context (cuCtxGetCurrent from an
 * already loaded libcuda.so.1).
 *
 * Threads: application threads in launch hooks (gp_counters_begin / end);
 * CUPTI's threads in gp_counters_context and gp_counters_kernel_time.
 * Locks: gp_ctr_rw — a sampled launch holds it for writing from Start to
 * its evaluation, every other launch hook holds it for reading around its
 * real call while counters are on, so no other runtime launch can fall
 * into a profiling range (launches through the driver API by other threads
 * still can: the record GP_CTR_EXTRA_RANGES says so); writers are
 * preferred. gp_ctr_mx guards the kernel table, the ranking and the
 * session; gp_ctr_time_mx the warm-up GPU-time table (CUPTI's thread).
 * Invariant: counters are written only for a launch whose range this
 * library started, stopped and decoded itself; any CUPTI failure turns
 * counters off for the run with one GP_STATUS_COUNTERS record saying why.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "gp_collector.h"
#include "gp_lib.h"
#include "kernel_name.h"

int gp_counters_on; /* counters asked for and still possible (relaxed reads) */
static char gp_ctr_why[160]; /* gp_counters_open's refusal, for lib.c's status */

static struct {
	__typeof__(&cuptiProfilerInitialize) init;
	__typeof__(&cuptiProfilerDeInitialize) deinit;
	__typeof__(&cuptiDeviceGetChipName) chip;
	__typeof__(&cuptiProfilerGetCounterAvailability) avail;
	__typeof__(&cuptiProfilerHostInitialize) host_init;
	__typeof__(&cuptiProfilerHostDeinitialize) host_deinit;
	__typeof__(&cuptiProfilerHostConfigAddMetrics) add_metrics;
	__typeof__(&cuptiProfilerHostGetConfigImageSize) config_size;
	__typeof__(&cuptiProfilerHostGetConfigImage) config_image;
	__typeof__(&cuptiProfilerHostGetNumOfPasses) passes;
	__typeof__(&cuptiProfilerHostEvaluateToGpuValues) evaluate;
	__typeof__(&cuptiRangeProfilerEnable) enable;
	__typeof__(&cuptiRangeProfilerDisable) disable;
	__typeof__(&cuptiRangeProfilerGetCounterDataSize) data_size;
	__typeof__(&cuptiRangeProfilerCounterDataImageInitialize) data_init;
	__typeof__(&cuptiRangeProfilerSetConfig) set_config;
	__typeof__(&cuptiRangeProfilerStart) start;
	__typeof__(&cuptiRangeProfilerStop) stop;
	__typeof__(&cuptiRangeProfilerDecodeData) decode;
	__typeof__(&cuptiRangeProfilerGetCounterDataInfo) data_info;
	__typeof__(&cuptiGetResultString) result_string;
	__typeof__(&cuptiActivityFlushAll) flush_all;
} gp_ctr_fn;

/* The metrics asked of CUPTI (real names; docs/metrics.md §20 says what
 * each GP_CTR_* is made of). */
enum {
	GP_M_TIME, GP_M_READ, GP_M_WRITE,
	GP_M_DFMA, GP_M_DADD, GP_M_DMUL, GP_M_FFMA, GP_M_FADD, GP_M_FMUL, GP_M_HFMA, GP_M_HADD, GP_M_HMUL,
	GP_M_TENSOR, GP_M_SM, GP_M_MEM,
	GP_M_DRAM_PEAK, GP_M_DRAM_HZ, GP_M_DFMA_PEAK, GP_M_FFMA_PEAK, GP_M_HFMA_PEAK, GP_M_SM_HZ, GP_M_COUNT
};
static const char *gp_ctr_metrics[GP_M_COUNT] = {
	[GP_M_TIME] = "gpu__time_duration.sum",
	[GP_M_READ] = "dram__bytes_read.sum",
	[GP_M_WRITE] = "dram__bytes_write.sum",
	[GP_M_DFMA] = "sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
	[GP_M_DADD] = "sm__sass_thread_inst_executed_op_dadd_pred_on.sum",
	[GP_M_DMUL] = "sm__sass_thread_inst_executed_op_dmul_pred_on.sum",
	[GP_M_FFMA] = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
	[GP_M_FADD] = "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
	[GP_M_FMUL] = "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
	[GP_M_HFMA] = "sm__sass_thread_inst_executed_op_hfma_pred_on.sum",
	[GP_M_HADD] = "sm__sass_thread_inst_executed_op_hadd_pred_on.sum",
	[GP_M_HMUL] = "sm__sass_thread_inst_executed_op_hmul_pred_on.sum",
	[GP_M_TENSOR] = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
	[GP_M_SM] = "sm__throughput.avg.pct_of_peak_sustained_elapsed",
	[GP_M_MEM] = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
	[GP_M_DRAM_PEAK] = "dram__bytes.sum.peak_sustained",
	[GP_M_DRAM_HZ] = "dram__cycles_elapsed.avg.per_second",
	[GP_M_DFMA_PEAK] = "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
	[GP_M_FFMA_PEAK] = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
	[GP_M_HFMA_PEAK] = "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained",
	[GP_M_SM_HZ] = "sm__cycles_elapsed.avg.per_second",
};

#define GP_CTR_KERNELS 1024 /* kernels tracked; beyond: never sampled       */
#define GP_CTR_TIMES 512    /* warm-up GPU-time table entries (top=N)        */
#define GP_CTR_RANGES 4     /* counter-data capacity: ours + stray ranges   */

struct gp_ctr_kernel {
	const void *func;
	char *name;          /* cudaFuncGetName's, copied; NULL: unknown     */
	uint32_t name_id;    /* interned at the first sample                  */
	int selected;        /* -1 undecided (top=N before the ranking), 0, 1 */
	uint64_t launches;
	uint32_t samples;
};

static pthread_rwlock_t gp_ctr_rw;
static pthread_once_t gp_ctr_rw_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t gp_ctr_mx = PTHREAD_MUTEX_INITIALIZER;
static struct gp_ctr_kernel gp_ctr_k[GP_CTR_KERNELS];
static uint64_t gp_ctr_launches;   /* every hooked launch (top=N warm-up)   */
static int gp_ctr_ranked;          /* top=N: the warm-up ranking was made   */
static uint64_t gp_ctr_sampled;    /* launches chosen for sampling, the run */
static char *gp_ctr_top[64];       /* ... its kernels' names                */
static size_t gp_ctr_ntop;
static void *gp_ctr_ctx;           /* CUcontext from CONTEXT_CREATED or a
                                      runtime-API callback (cupti.c)        */
static int gp_ctr_watching = 1;    /* cupti.c's runtime-API callbacks on   */
static void *real_cudaFuncGetName, *real_cudaGetDevice;

/* The profiling session, set up at the first sample (gp_ctr_mx, then only
 * under the write lock). */
static struct {
	int ready, failed;
	CUpti_Profiler_Host_Object *host;
	CUpti_RangeProfiler_Object *obj;
	uint8_t *config, *data;
	size_t config_size, data_size, passes;
	uint32_t peaks_done; /* devices whose peaks were written (bit)    */
} gp_ctr_s;

/* The launch being sampled (only under the write lock). */
static struct {
	struct gp_ctr_kernel *k;
	uint32_t op, sample;
} gp_ctr_cur;

/* Warm-up GPU time per kernel name, from CUPTI's kernel records. */
static pthread_mutex_t gp_ctr_time_mx = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char *name;
	uint64_t ns;
} gp_ctr_times[GP_CTR_TIMES];
static size_t gp_ctr_ntimes;

static void gp_ctr_rw_init(void)
{
	pthread_rwlockattr_t a;
	pthread_rwlockattr_init(&a);
	/* a sampled launch must not wait behind a stream of ordinary ones */
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&gp_ctr_rw, &a);
	pthread_rwlockattr_destroy(&a);
}

#define GP_CTR_SYM(field, name)                                                   \
	do {                                                                      \
		*(void **)&gp_ctr_fn.field = dlsym(lib, name);                    \
		if (!gp_ctr_fn.field) {                                           \
			(void)dlerror();                                          \
			missing = name;                                           \
		}                                                                 \
	} while (0)

int gp_counters_open(void *lib)
{
	if (gp_cfg.counters == GP_COUNTERS_OFF)
		return 0;
	const char *missing = NULL;
	GP_CTR_SYM(init, "cuptiProfilerInitialize");
	GP_CTR_SYM(deinit, "cuptiProfilerDeInitialize");
	GP_CTR_SYM(chip, "cuptiDeviceGetChipName");
	GP_CTR_SYM(avail, "cuptiProfilerGetCounterAvailability");
	GP_CTR_SYM(host_init, "cuptiProfilerHostInitialize");
	GP_CTR_SYM(host_deinit, "cuptiProfilerHostDeinitialize");
	GP_CTR_SYM(add_metrics, "cuptiProfilerHostConfigAddMetrics");
	GP_CTR_SYM(config_size, "cuptiProfilerHostGetConfigImageSize");
	GP_CTR_SYM(config_image, "cuptiProfilerHostGetConfigImage");
	GP_CTR_SYM(passes, "cuptiProfilerHostGetNumOfPasses");
	GP_CTR_SYM(evaluate, "cuptiProfilerHostEvaluateToGpuValues");
	GP_CTR_SYM(enable, "cuptiRangeProfilerEnable");
	GP_CTR_SYM(disable, "cuptiRangeProfilerDisable");
	GP_CTR_SYM(data_size, "cuptiRangeProfilerGetCounterDataSize");
	GP_CTR_SYM(data_init, "cuptiRangeProfilerCounterDataImageInitialize");
	GP_CTR_SYM(set_config, "cuptiRangeProfilerSetConfig");
	GP_CTR_SYM(start, "cuptiRangeProfilerStart");
	GP_CTR_SYM(stop, "cuptiRangeProfilerStop");
	GP_CTR_SYM(decode, "cuptiRangeProfilerDecodeData");
	GP_CTR_SYM(data_info, "cuptiRangeProfilerGetCounterDataInfo");
	GP_CTR_SYM(result_string, "cuptiGetResultString");
	GP_CTR_SYM(flush_all, "cuptiActivityFlushAll");
	if (missing) { /* before the trace exists: lib.c writes the status */
		snprintf(gp_ctr_why, sizeof gp_ctr_why, "counters unavailable: %s missing from the CUPTI library "
			 "(CUDA 13's range profiler)", missing);
		gp_log(GP_LOG_ERROR, "%s", gp_ctr_why);
		return -ENOSYS;
	}
	pthread_once(&gp_ctr_rw_once, gp_ctr_rw_init);
	__atomic_store_n(&gp_counters_on, 1, __ATOMIC_RELEASE);
	return 0;
}

const char *gp_counters_unavailable(void)
{
	return gp_ctr_why[0] ? gp_ctr_why : NULL;
}

void gp_counters_context(void *ctx, int created)
{
	if (created && __atomic_load_n(&gp_ctr_ctx, __ATOMIC_RELAXED) == ctx)
		return; /* the runtime-API callbacks, until setup turns them off */
	int cs = gp_state_lock(&gp_ctr_mx);
	if (created) {
		__atomic_store_n(&gp_ctr_ctx, ctx, __ATOMIC_RELAXED);
	} else if (ctx == gp_ctr_ctx) {
		/* the context goes (cudaDeviceReset, exit): its profiler object
		 * with it; a later sample sets up again on the next context */
		__atomic_store_n(&gp_ctr_ctx, NULL, __ATOMIC_RELAXED);
		if (gp_ctr_s.ready && gp_ctr_fn.disable) {
			CUpti_RangeProfiler_Disable_Params d = {.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE,
								.pRangeProfilerObject = gp_ctr_s.obj};
			gp_ctr_fn.disable(&d);
		}
		gp_ctr_s.ready = 0;
	}
	gp_state_unlock(&gp_ctr_mx, cs);
}

void gp_counters_kernel_time(const char *name, uint64_t ns)
{
	if (gp_cfg.counters != GP_COUNTERS_TOP || !name || __atomic_load_n(&gp_ctr_ranked, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&gp_ctr_time_mx);
	size_t i = 0;
	while (i < gp_ctr_ntimes && strcmp(gp_ctr_times[i].name, name))
		i++;
	if (i == gp_ctr_ntimes && i < GP_CTR_TIMES && (gp_ctr_times[i].name = strdup(name)))
		gp_ctr_ntimes++;
	if (i < gp_ctr_ntimes)
		gp_ctr_times[i].ns += ns;
	pthread_mutex_unlock(&gp_ctr_time_mx);
}

/* ---- selection --------------------------------------------------------------- */

/* Does name match one of the kernel= globs (';' separated)? */
static int gp_ctr_glob_match(const char *name)
{
	const char *g = gp_cfg.counters_kernels;
	char one[GP_PATH_MAX];
	while (*g) {
		size_t n = strcspn(g, ";");
		if (n && n < sizeof one) {
			memcpy(one, g, n);
			one[n] = 0;
			if (gp_kernel_name_match(one, name))
				return 1;
		}
		g += n + (g[n] == ';');
	}
	return 0;
}

static int gp_ctr_decide(const char *name)
{
	if (!name)
		return 0;
	if (gp_cfg.counters == GP_COUNTERS_KERNEL)
		return gp_ctr_glob_match(name);
	if (!gp_ctr_ranked)
		return -1;
	for (size_t i = 0; i < gp_ctr_ntop; i++)
		if (!strcmp(gp_ctr_top[i], name))
			return 1;
	return 0;
}

/* top=N: flush CUPTI's completed records (no forced flush: work in flight
 * stays whole), rank the kernels by their warm-up GPU time. Caller holds
 * gp_ctr_mx; CUPTI's completion callbacks take only gp_ctr_time_mx. */
static void gp_ctr_rank(void)
{
	gp_ctr_fn.flush_all(0);
	pthread_mutex_lock(&gp_ctr_time_mx);
	__atomic_store_n(&gp_ctr_ranked, 1, __ATOMIC_RELAXED);
	for (size_t n = 0; n < gp_cfg.counters_top && n < gp_ctr_ntimes; n++) {
		size_t best = n;
		for (size_t i = n + 1; i < gp_ctr_ntimes; i++)
			if (gp_ctr_times[i].ns > gp_ctr_times[best].ns)
				best = i;
		__typeof__(gp_ctr_times[0]) t = gp_ctr_times[n];
		gp_ctr_times[n] = gp_ctr_times[best];
		gp_ctr_times[best] = t;
		gp_ctr_top[gp_ctr_ntop++] = gp_ctr_times[n].name;
		gp_log(GP_LOG_INFO, "counters: top kernel %zu of the warm-up: %s (%llu ns)", n + 1, gp_ctr_times[n].name,
		       (unsigned long long)gp_ctr_times[n].ns);
	}
	pthread_mutex_unlock(&gp_ctr_time_mx);
	for (size_t i = 0; i < GP_CTR_KERNELS; i++)
		if (gp_ctr_k[i].func && gp_ctr_k[i].selected < 0)
			gp_ctr_k[i].selected = gp_ctr_decide(gp_ctr_k[i].name);
}

/* The table entry of func (created, named and decided on first sight), or
 * NULL when the table is full. Caller holds gp_ctr_mx. */
static struct gp_ctr_kernel *gp_ctr_kernel(const void *func)
{
	size_t h = ((uintptr_t)func >> 4) * 0x9E3779B97F4A7C15ull >> 54;
	for (size_t i = 0; i < GP_CTR_KERNELS; i++) {
		struct gp_ctr_kernel *k = &gp_ctr_k[(h + i) & (GP_CTR_KERNELS - 1)];
		if (k->func == func)
			return k;
		if (k->func)
			continue;
		const char *name = NULL;
		typedef int (*getname_fn)(const char **, const void *);
		getname_fn fn = (getname_fn)gp_resolve_real("cudaFuncGetName", &real_cudaFuncGetName);
		if (fn && fn(&name, func) == 0 && name)
			k->name = strdup(name);
		k->func = func;
		k->selected = gp_ctr_decide(k->name);
		return k;
	}
	return NULL;
}

/* ---- the session -------------------------------------------------------------- */

static const char *gp_ctr_err(CUptiResult r)
{
	static char buf[32]; /* under gp_ctr_mx */
	const char *s = NULL;
	if (gp_ctr_fn.result_string(r, &s) != CUPTI_SUCCESS || !s) {
		snprintf(buf, sizeof buf, "CUptiResult %d", (int)r);
		s = buf;
	}
	return s;
}

/* Give up on counters for this run: one status record, one log line. */
static void gp_ctr_fail(const char *what, CUptiResult r)
{
	char why[256];
	if (r == CUPTI_SUCCESS)
		snprintf(why, sizeof why, "counters unavailable: %s", what);
	else
		snprintf(why, sizeof why, "counters unavailable: %s: %s", what, gp_ctr_err(r));
	gp_ctr_s.failed = 1;
	__atomic_store_n(&gp_counters_on, 0, __ATOMIC_RELAXED);
	gp_state_status(GP_STATUS_COUNTERS, r ? -(int64_t)r : -1, why);
	gp_log(GP_LOG_ERROR, "%s", why);
}

/* The context to profile: CUPTI's announced one, else the driver's current. */
static void *gp_ctr_context(void)
{
	if (gp_ctr_ctx)
		return gp_ctr_ctx;
	void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *ctx = NULL;
	if (drv) {
		int (*cur)(void **) = (int (*)(void **))dlsym(drv, "cuCtxGetCurrent");
		if (!cur || cur(&ctx) != 0)
			ctx = NULL;
		dlclose(drv);
	}
	(void)dlerror();
	return ctx;
}

#define GP_CTR_CALL(fn, p, what)                        \
	do {                                            \
		CUptiResult r_ = gp_ctr_fn.fn(&(p));    \
		if (r_ != CUPTI_SUCCESS) {              \
			gp_ctr_fail(what, r_);          \
			return -1;                      \
		}                                       \
	} while (0)

/* Host object, config image, range-profiler object on the context, counter
 * data image: once (again after the context went). Under the write lock. */
static int gp_ctr_setup(void)
{
	void *ctx = gp_ctr_context();
	if (!ctx) {
		gp_ctr_fail("no CUDA context known to profile", CUPTI_SUCCESS);
		return -1;
	}
	if (gp_ctr_watching) { /* known: no more runtime-API callbacks */
		gp_ctr_watching = 0;
		gp_cupti_context_watch(0);
	}
	if (!gp_ctr_s.host) {
		CUpti_Profiler_Initialize_Params ip = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
		GP_CTR_CALL(init, ip, "cuptiProfilerInitialize");
		CUpti_Device_GetChipName_Params cp = {.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE};
		GP_CTR_CALL(chip, cp, "cuptiDeviceGetChipName");
		CUpti_Profiler_GetCounterAvailability_Params ap = {
			.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE, .ctx = ctx};
		GP_CTR_CALL(avail, ap, "cuptiProfilerGetCounterAvailability");
		uint8_t *avail = malloc(ap.counterAvailabilityImageSize ? ap.counterAvailabilityImageSize : 1);
		if (!avail) {
			gp_ctr_fail("out of memory", CUPTI_ERROR_OUT_OF_MEMORY);
			return -1;
		}
		ap.pCounterAvailabilityImage = avail;
		CUptiResult r = gp_ctr_fn.avail(&ap);
		CUpti_Profiler_Host_Initialize_Params hp = {.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE,
							    .profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER,
							    .pChipName = cp.pChipName,
							    .pCounterAvailabilityImage = avail};
		if (r == CUPTI_SUCCESS)
			r = gp_ctr_fn.host_init(&hp);
		free(avail);
		if (r != CUPTI_SUCCESS) {
			gp_ctr_fail("cuptiProfilerHostInitialize", r);
			return -1;
		}
		gp_ctr_s.host = hp.pHostObject;
		CUpti_Profiler_Host_ConfigAddMetrics_Params mp = {
			.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE, .pHostObject = gp_ctr_s.host,
			.ppMetricNames = gp_ctr_metrics, .numMetrics = GP_M_COUNT};
		GP_CTR_CALL(add_metrics, mp, "cuptiProfilerHostConfigAddMetrics");
		CUpti_Profiler_Host_GetConfigImageSize_Params sp = {
			.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE, .pHostObject = gp_ctr_s.host};
		GP_CTR_CALL(config_size, sp, "cuptiProfilerHostGetConfigImageSize");
		if (!(gp_ctr_s.config = malloc(sp.configImageSize))) {
			gp_ctr_fail("out of memory", CUPTI_ERROR_OUT_OF_MEMORY);
			return -1;
		}
		gp_ctr_s.config_size = sp.configImageSize;
		CUpti_Profiler_Host_GetConfigImage_Params gp = {
			.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE, .pHostObject = gp_ctr_s.host,
			.configImageSize = gp_ctr_s.config_size, .pConfigImage = gp_ctr_s.config};
		GP_CTR_CALL(config_image, gp, "cuptiProfilerHostGetConfigImage");
		CUpti_Profiler_Host_GetNumOfPasses_Params np = {
			.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE,
			.configImageSize = gp_ctr_s.config_size, .pConfigImage = gp_ctr_s.config};
		GP_CTR_CALL(passes, np, "cuptiProfilerHostGetNumOfPasses");
		gp_ctr_s.passes = np.numOfPasses;
	}
	CUpti_RangeProfiler_Enable_Params ep = {.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE, .ctx = ctx};
	GP_CTR_CALL(enable, ep, "cuptiRangeProfilerEnable");
	gp_ctr_s.obj = ep.pRangeProfilerObject;
	CUpti_RangeProfiler_GetCounterDataSize_Params dp = {
		.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE,
		.pRangeProfilerObject = gp_ctr_s.obj, .pMetricNames = gp_ctr_metrics, .numMetrics = GP_M_COUNT,
		.maxNumOfRanges = GP_CTR_RANGES, .maxNumRangeTreeNodes = GP_CTR_RANGES};
	GP_CTR_CALL(data_size, dp, "cuptiRangeProfilerGetCounterDataSize");
	free(gp_ctr_s.data);
	if (!(gp_ctr_s.data = malloc(dp.counterDataSize))) {
		gp_ctr_fail("out of memory", CUPTI_ERROR_OUT_OF_MEMORY);
		return -1;
	}
	gp_ctr_s.data_size = dp.counterDataSize;
	gp_ctr_s.ready = 1;
	char what[600];
	snprintf(what, sizeof what, "counters: GPUPHASE_COUNTERS=%.400s: %u sampled launches a kernel after %u, %zu replay "
		 "passes each (CUPTI range profiler, kernel replay)", gp_cfg.counters_text, gp_cfg.counters_samples,
		 gp_cfg.counters_skip, gp_ctr_s.passes);
	gp_state_status(GP_STATUS_COUNTERS, (int64_t)gp_ctr_s.passes, what);
	return 0;
}

/* A fresh counter-data image, configured, and the range started. */
static int gp_ctr_start(void)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params di = {
		.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE,
		.pRangeProfilerObject = gp_ctr_s.obj, .counterDataSize = gp_ctr_s.data_size,
		.pCounterData = gp_ctr_s.data};
	GP_CTR_CALL(data_init, di, "cuptiRangeProfilerCounterDataImageInitialize");
	CUpti_RangeProfiler_SetConfig_Params sc = {
		.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE, .pRangeProfilerObject = gp_ctr_s.obj,
		.configSize = gp_ctr_s.config_size, .pConfig = gp_ctr_s.config,
		.counterDataImageSize = gp_ctr_s.data_size, .pCounterDataImage = gp_ctr_s.data,
		.range = CUPTI_AutoRange, .replayMode = CUPTI_KernelReplay, .maxRangesPerPass = GP_CTR_RANGES,
		.numNestingLevels = 1, .minNestingLevel = 1, .passIndex = 0, .targetNestingLevel = 1};
	GP_CTR_CALL(set_config, sc, "cuptiRangeProfilerSetConfig");
	CUpti_RangeProfiler_Start_Params st = {.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE,
					       .pRangeProfilerObject = gp_ctr_s.obj};
	GP_CTR_CALL(start, st, "cuptiRangeProfilerStart");
	return 0;
}

/* ---- a launch ------------------------------------------------------------------- */

/* This thread is inside a bracketed launch: a launch hook reached from
 * inside it (cudart calling an exported, hooked function) must not take
 * the lock again (not recursive; a waiting writer would block it). */
static GP_TLS int gp_ctr_in;

int gp_counters_begin(const void *func, uint32_t op)
{
	struct gp_tls *t = &gp_tls;
	if (gp_ctr_in)
		return 0;
	if (!func) { /* a graph launch: kept out of a sampled launch's range */
		pthread_rwlock_rdlock(&gp_ctr_rw);
		gp_ctr_in = 1;
		return 1;
	}
	int cs = gp_state_lock(&gp_ctr_mx);
	t->internal++; /* cudaFuncGetName, CUPTI: never traced */
	int sample = 0;
	uint32_t idx = 0;
	struct gp_ctr_kernel *k = gp_ctr_kernel(func);
	if (gp_ctr_watching && gp_ctr_ctx) { /* a launch hook: outside any CUPTI callback */
		gp_ctr_watching = 0;
		gp_cupti_context_watch(0);
	}
	if (gp_cfg.counters == GP_COUNTERS_TOP && !gp_ctr_ranked && ++gp_ctr_launches >= gp_cfg.counters_warmup)
		gp_ctr_rank();
	if (k) {
		k->launches++;
		sample = op && k->selected > 0 && !gp_ctr_s.failed && k->launches > gp_cfg.counters_skip &&
			 k->samples < gp_cfg.counters_samples;
		if (sample) {
			idx = k->samples++;
			gp_ctr_sampled++;
		}
	}
	t->internal--;
	gp_state_unlock(&gp_ctr_mx, cs);
	gp_ctr_in = 1;
	if (!sample) {
		pthread_rwlock_rdlock(&gp_ctr_rw);
		return 1;
	}
	pthread_rwlock_wrlock(&gp_ctr_rw);
	t->internal++;
	cs = gp_state_lock(&gp_ctr_mx);
	int ok = !gp_ctr_s.failed && (gp_ctr_s.ready || gp_ctr_setup() == 0) && gp_ctr_start() == 0;
	gp_state_unlock(&gp_ctr_mx, cs);
	t->internal--;
	if (!ok) {
		pthread_rwlock_unlock(&gp_ctr_rw);
		gp_ctr_in = 0;
		return 0;
	}
	gp_ctr_cur.k = k;
	gp_ctr_cur.op = op;
	gp_ctr_cur.sample = idx;
	return 2;
}

static void gp_ctr_emit(uint8_t metric, uint8_t dev, uint32_t op, double v, uint32_t name, uint32_t sample)
{
	union gp_rec r;
	memset(&r, 0, sizeof r);
	r.counter.type = GP_REC_COUNTER;
	r.counter.metric = metric;
	r.counter.device = dev;
	r.counter.op = op;
	r.counter.ts = gp_now();
	r.counter.value = v;
	r.counter.name = name;
	r.counter.sample = sample;
	gp_collector_emit(&r, 1);
}

/* Stop, decode and evaluate the sampled launch's range; write its records. */
static void gp_ctr_collect(int launched)
{
	CUpti_RangeProfiler_Stop_Params sp = {.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE,
					      .pRangeProfilerObject = gp_ctr_s.obj};
	CUptiResult r = gp_ctr_fn.stop(&sp);
	if (r != CUPTI_SUCCESS)
		return gp_ctr_fail("cuptiRangeProfilerStop", r);
	CUpti_RangeProfiler_DecodeData_Params dd = {.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE,
						    .pRangeProfilerObject = gp_ctr_s.obj};
	if ((r = gp_ctr_fn.decode(&dd)) != CUPTI_SUCCESS)
		return gp_ctr_fail("cuptiRangeProfilerDecodeData", r);
	CUpti_RangeProfiler_GetCounterDataInfo_Params ci = {
		.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE,
		.pCounterDataImage = gp_ctr_s.data, .counterDataImageSize = gp_ctr_s.data_size};
	if ((r = gp_ctr_fn.data_info(&ci)) != CUPTI_SUCCESS)
		return gp_ctr_fail("cuptiRangeProfilerGetCounterDataInfo", r);
	if (!launched || !ci.numTotalRanges)
		return; /* the launch failed: nothing ran, nothing replayed */
	double v[GP_M_COUNT];
	CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
		.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE, .pHostObject = gp_ctr_s.host,
		.pCounterDataImage = gp_ctr_s.data, .counterDataImageSize = gp_ctr_s.data_size, .rangeIndex = 0,
		.ppMetricNames = gp_ctr_metrics, .numMetrics = GP_M_COUNT, .pMetricValues = v};
	if ((r = gp_ctr_fn.evaluate(&ev)) != CUPTI_SUCCESS)
		return gp_ctr_fail("cuptiProfilerHostEvaluateToGpuValues", r);
	int dev = 0;
	typedef int (*getdev_fn)(int *);
	getdev_fn gd = (getdev_fn)gp_resolve_real("cudaGetDevice", &real_cudaGetDevice);
	if (!gd || gd(&dev) != 0 || dev < 0 || dev > 255)
		dev = 0;
	struct gp_ctr_kernel *k = gp_ctr_cur.k;
	if (!k->name_id && k->name)
		k->name_id = gp_collector_intern(k->name, strlen(k->name));
	uint32_t op = gp_ctr_cur.op, n = k->name_id, s = gp_ctr_cur.sample;
	uint8_t d = (uint8_t)dev;
	gp_ctr_emit(GP_CTR_DURATION_NS, d, op, v[GP_M_TIME], n, s);
	gp_ctr_emit(GP_CTR_DRAM_READ, d, op, v[GP_M_READ], n, s);
	gp_ctr_emit(GP_CTR_DRAM_WRITE, d, op, v[GP_M_WRITE], n, s);
	gp_ctr_emit(GP_CTR_FLOP_FP64, d, op, 2 * v[GP_M_DFMA] + v[GP_M_DADD] + v[GP_M_DMUL], n, s);
	gp_ctr_emit(GP_CTR_FLOP_FP32, d, op, 2 * v[GP_M_FFMA] + v[GP_M_FADD] + v[GP_M_FMUL], n, s);
	gp_ctr_emit(GP_CTR_FLOP_FP16, d, op, 2 * v[GP_M_HFMA] + v[GP_M_HADD] + v[GP_M_HMUL], n, s);
	gp_ctr_emit(GP_CTR_TENSOR_PCT, d, op, v[GP_M_TENSOR], n, s);
	gp_ctr_emit(GP_CTR_SM_PCT, d, op, v[GP_M_SM], n, s);
	gp_ctr_emit(GP_CTR_MEM_PCT, d, op, v[GP_M_MEM], n, s);
	gp_ctr_emit(GP_CTR_PASSES, d, op, (double)gp_ctr_s.passes, n, s);
	size_t extra = ci.numTotalRanges - 1 + dd.numOfRangeDropped;
	if (extra)
		gp_ctr_emit(GP_CTR_EXTRA_RANGES, d, op, (double)extra, n, s);
	if (dev < 32 && !(gp_ctr_s.peaks_done & (1u << dev))) {
		gp_ctr_s.peaks_done |= 1u << dev;
		gp_ctr_emit(GP_CTR_PEAK_DRAM_GBPS, d, 0, v[GP_M_DRAM_PEAK] * v[GP_M_DRAM_HZ] / 1e9, 0, 0);
		gp_ctr_emit(GP_CTR_PEAK_FP64_GFLOPS, d, 0, 2 * v[GP_M_DFMA_PEAK] * v[GP_M_SM_HZ] / 1e9, 0, 0);
		gp_ctr_emit(GP_CTR_PEAK_FP32_GFLOPS, d, 0, 2 * v[GP_M_FFMA_PEAK] * v[GP_M_SM_HZ] / 1e9, 0, 0);
		gp_ctr_emit(GP_CTR_PEAK_FP16_GFLOPS, d, 0, 2 * v[GP_M_HFMA_PEAK] * v[GP_M_SM_HZ] / 1e9, 0, 0);
	}
}

void gp_counters_end(int token, int launched)
{
	gp_ctr_in = 0;
	if (token == 1) {
		pthread_rwlock_unlock(&gp_ctr_rw);
		return;
	}
	struct gp_tls *t = &gp_tls;
	t->internal++;
	int cs = gp_state_lock(&gp_ctr_mx);
	if (gp_ctr_s.ready)
		gp_ctr_collect(launched);
	gp_state_unlock(&gp_ctr_mx, cs);
	t->internal--;
	pthread_rwlock_unlock(&gp_ctr_rw);
}

/* Why nothing was sampled, for gp_counters_finish (caller holds gp_ctr_mx). */
static void gp_ctr_why_none(char *b, size_t n)
{
	int m = snprintf(b, n, "counters unavailable: GPUPHASE_COUNTERS=%.300s sampled no launch: ", gp_cfg.counters_text);
	size_t w = m > 0 && (size_t)m < n ? (size_t)m : 0;
	const struct gp_ctr_kernel *most = NULL, *sel = NULL;
	size_t nsel = 0;
	for (size_t i = 0; i < GP_CTR_KERNELS; i++) {
		const struct gp_ctr_kernel *k = &gp_ctr_k[i];
		if (!k->func)
			continue;
		if (k->name && (!most || k->launches > most->launches))
			most = k;
		if (k->selected > 0) {
			nsel++;
			if (!sel || k->launches > sel->launches)
				sel = k;
		}
	}
	if (gp_cfg.counters == GP_COUNTERS_TOP && !gp_ctr_ranked)
		snprintf(b + w, n - w, "the run made %" PRIu64 " launches, fewer than the warm-up of %u that ranks the "
			 "kernels; write warmup= below %" PRIu64 " or kernel=GLOB, or `gpuphase record --counters "
			 "top=%u,from=TRACE` with a trace of an earlier run", gp_ctr_launches, gp_cfg.counters_warmup,
			 gp_ctr_launches, gp_cfg.counters_top);
	else if (gp_cfg.counters == GP_COUNTERS_TOP && !gp_ctr_ntop)
		snprintf(b + w, n - w, "no CUPTI kernel record had completed by the warm-up's %u launches, so no "
			 "kernel was ranked; write a larger warmup= or kernel=GLOB", gp_cfg.counters_warmup);
	else if (!nsel)
		snprintf(b + w, n - w, "no launched kernel was selected%s%.200s%s", most ? " (the most launched: " : "",
			 most ? most->name : "", most ? ")" : "");
	else
		snprintf(b + w, n - w, "%zu selected kernel%s launched at most %" PRIu64 " times (%.200s), none past "
			 "skip=%u inside the capture window", nsel, nsel == 1 ? "" : "s", sel->launches,
			 sel->name ? sel->name : "?", gp_cfg.counters_skip);
}

void gp_counters_finish(void)
{
	if (gp_cfg.counters == GP_COUNTERS_OFF || !__atomic_load_n(&gp_counters_on, __ATOMIC_RELAXED))
		return; /* off, or refused with its status already written */
	/* exit from a signal handler: the interrupted call may hold the lock */
	if (pthread_mutex_trylock(&gp_ctr_mx))
		return;
	char why[640];
	int none = !gp_ctr_s.failed && !gp_ctr_sampled;
	if (none)
		gp_ctr_why_none(why, sizeof why);
	pthread_mutex_unlock(&gp_ctr_mx);
	if (!none)
		return;
	gp_log(GP_LOG_ERROR, "%s", why);
	gp_state_status(GP_STATUS_COUNTERS, -1, gp_tls.in_call ? NULL : why);
}

void gp_counters_forget(void)
{
	/* fork child: no CUPTI, no locks another parent thread may hold */
	gp_counters_on = 0;
	pthread_mutex_init(&gp_ctr_mx, NULL);
	pthread_mutex_init(&gp_ctr_time_mx, NULL);
	gp_ctr_rw_init();
	memset(&gp_ctr_s, 0, sizeof gp_ctr_s);
	gp_ctr_sampled = 0;
}
