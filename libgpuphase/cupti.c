/*
 * cupti.c — everything libgpuphase does with CUPTI: dlopen (never a
 * DT_NEEDED; the default soname where the loader finds it, else a
 * pip-installed CUDA's, gp_cupti_open_wheel), subscription, the trace clock, activity buffers and the
 * conversion of CUPTI records into gpuphase records.
 *
 * Threads: gp_cupti_open runs once on the thread that starts the library;
 * gp_cupti_capture on whichever thread moves the capture window (window.c,
 * serialised by its lock); gp_cupti_push/pop on application threads inside
 * hooks; gp_cupti_flush_completed on lib.c's drain thread every 200 ms
 * while capturing, gp_cupti_flush on it at finish; the buffer callbacks on
 * CUPTI's own thread (or the thread calling cuptiActivityFlushAll), where
 * they only convert and push records into that thread's ring — no CUDA
 * call, no flush, no blocking there.
 *
 * What is recorded is GPUPHASE_CUPTI's mode (gp_config.h, docs/configuration.md
 * "CUPTI modes"): kernel, memcpy and memset activity always; RUNTIME and
 * DRIVER API records for every call (the kind), for the cbids the report
 * needs only (cuptiActivityEnableRuntimeApi / EnableDriverApi per cbid), or
 * none; the hooks' external correlation around every hooked call, around the
 * synchronizing calls that take a stack, or never; SYNCHRONIZATION and
 * OVERHEAD records on or off. Without an external correlation per call the
 * report joins a hook to its CUPTI API record by thread and time nesting
 * (report/core/join.c), which needs CUPTI's thread ids to be the hooks' (gettid:
 * cuptiSetThreadIdType SYSTEM) and CUPTI's times on our clock: when either
 * is refused, gp_cupti_open falls back to a push around every call. The
 * mode used (after fallbacks) is gp_cupti_mode_text, in the trace header.
 *
 * Invariants: the timestamp callback is registered before any activity kind
 * is enabled, so every CUPTI time is CLOCK_MONOTONIC_RAW like the hooks'; when
 * CUPTI refuses it, gp_cupti_offset (measured once against cuptiGetTimestamp)
 * is added to each CUPTI time and the trace says so. A buffer is freed by the
 * completion callback that received it, exactly once. gp_cupti_push_bits is
 * non-zero only while activity is on (set after the kinds are enabled,
 * cleared before they are disabled). A launch configuration's record is
 * emitted by the thread that interned it, before that thread's first kernel
 * record carrying its id (gp_cfg_mx serialises the table); a kernel of
 * another buffer thread may precede it in the file (readers collect the
 * configurations first).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cupti.h>

#include "gp_collector.h"
#include "gp_lib.h"

struct gp_cbid_name {
	uint16_t id;
	const char *name;
};
#include "gp_cbids.h"

int gp_cupti_active;         /* kinds enabled (relaxed reads)            */
unsigned gp_cupti_push_bits; /* GP_CLASS_BIT of the hooks that push (relaxed) */
static struct gp_cupti_mode gp_cupti_mode; /* the mode used, fallbacks applied */
static char gp_cupti_mode_str[192];
static int gp_cupti_usable;  /* subscribed, functions resolved           */
static int gp_cupti_calibrated;
int gp_cupti_keep_clock; /* attach_session.c: measure the offset, register no timestamp callback */
static int64_t gp_cupti_offset;
static int gp_cupti_registered;
static int gp_cupti_marker_kind;
static int gp_cupti_overhead_said; /* GP_STATUS_CUPTI_OVERHEAD written */
static CUpti_SubscriberHandle gp_cupti_sub;
static uint64_t gp_cupti_dropped; /* cumulative; completion callbacks only */

#define GP_CUPTI_MAX_CBID 1024

static struct {
	__typeof__(&cuptiSubscribe) subscribe;
	__typeof__(&cuptiUnsubscribe) unsubscribe;
	__typeof__(&cuptiEnableCallback) enable_callback;
	__typeof__(&cuptiEnableDomain) enable_domain; /* optional: counters.c's context */
	__typeof__(&cuptiActivityRegisterCallbacks) register_callbacks;
	__typeof__(&cuptiActivityEnable) enable;
	__typeof__(&cuptiActivityDisable) disable;
	__typeof__(&cuptiActivityFlushAll) flush_all;
	__typeof__(&cuptiActivityGetNextRecord) next_record;
	__typeof__(&cuptiActivityGetNumDroppedRecords) num_dropped;
	__typeof__(&cuptiActivityPushExternalCorrelationId) push;
	__typeof__(&cuptiActivityPopExternalCorrelationId) pop;
	__typeof__(&cuptiActivityRegisterTimestampCallback) register_ts;
	__typeof__(&cuptiGetTimestamp) get_timestamp;
	__typeof__(&cuptiGetResultString) result_string;
	/* optional: the mode falls back without them */
	__typeof__(&cuptiActivityEnableRuntimeApi) enable_rt_api;
	__typeof__(&cuptiActivityEnableDriverApi) enable_drv_api;
	__typeof__(&cuptiSetThreadIdType) set_tid_type;
	__typeof__(&cuptiActivitySetAttribute) set_attr;
	__typeof__(&cuptiActivityFlushPeriod) flush_period;
} gp_cupti_fn;

static uint64_t CUPTIAPI gp_cupti_clock(void)
{
	return gp_now();
}

int64_t gp_cupti_clock_offset(void)
{
	return gp_cupti_offset;
}

int gp_cupti_clock_calibrated(void)
{
	return gp_cupti_calibrated;
}

/* ---- names and classes of cbids ---------------------------------------- */

const char *gp_cupti_cbid_name(int driver, unsigned cbid)
{
	const struct gp_cbid_name *t = driver ? gp_cbid_drv : gp_cbid_rt;
	size_t n = driver ? sizeof gp_cbid_drv / sizeof gp_cbid_drv[0] : sizeof gp_cbid_rt / sizeof gp_cbid_rt[0];
	for (size_t i = 0; i < n; i++)
		if (t[i].id == cbid)
			return t[i].name;
	return NULL;
}

static int gp_cupti_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

enum gp_api_class gp_cupti_classify(int driver, unsigned cbid)
{
	const char *n = gp_cupti_cbid_name(driver, cbid);
	if (!n)
		return GP_API_OTHER;
	if (!driver) {
		if (gp_cupti_prefix(n, "cudaLaunchHostFunc") || gp_cupti_prefix(n, "cudaStreamAddCallback"))
			return GP_API_HOST_FUNC;
		if (gp_cupti_prefix(n, "cudaLaunch") || gp_cupti_prefix(n, "__cudaLaunch"))
			return GP_API_LAUNCH;
		if (gp_cupti_prefix(n, "cudaGraphLaunch"))
			return GP_API_GRAPH_LAUNCH;
		if (gp_cupti_prefix(n, "cudaMemcpy"))
			return strstr(n, "Async") ? GP_API_MEMCPY_ASYNC : GP_API_MEMCPY_SYNC;
		if (gp_cupti_prefix(n, "cudaMemset"))
			return strstr(n, "Async") ? GP_API_MEMSET_ASYNC : GP_API_MEMSET_SYNC;
		if (!strcmp(n, "cudaDeviceSynchronize") || !strcmp(n, "cudaThreadSynchronize"))
			return GP_API_SYNC_DEVICE;
		if (gp_cupti_prefix(n, "cudaStreamSynchronize"))
			return GP_API_SYNC_STREAM;
		if (gp_cupti_prefix(n, "cudaEventSynchronize"))
			return GP_API_SYNC_EVENT;
		if (gp_cupti_prefix(n, "cudaProfilerSt"))
			return GP_API_PROFILER;
		if (!strcmp(n, "cudaFree") || !strcmp(n, "cudaFreeHost") || !strcmp(n, "cudaMallocHost") ||
		    !strcmp(n, "cudaHostAlloc"))
			return GP_API_SYNC_IMPLICIT;
		return GP_API_OTHER;
	}
	if (gp_cupti_prefix(n, "cuLaunchHostFunc") || gp_cupti_prefix(n, "cuStreamAddCallback"))
		return GP_API_HOST_FUNC;
	if (gp_cupti_prefix(n, "cuLaunch"))
		return GP_API_LAUNCH;
	if (gp_cupti_prefix(n, "cuGraphLaunch"))
		return GP_API_GRAPH_LAUNCH;
	if (gp_cupti_prefix(n, "cuMemcpy") || gp_cupti_prefix(n, "cu64Memcpy"))
		return strstr(n, "Async") ? GP_API_MEMCPY_ASYNC : GP_API_MEMCPY_SYNC;
	if (gp_cupti_prefix(n, "cuMemsetD") || gp_cupti_prefix(n, "cu64MemsetD"))
		return strstr(n, "Async") ? GP_API_MEMSET_ASYNC : GP_API_MEMSET_SYNC;
	if (gp_cupti_prefix(n, "cuCtxSynchronize"))
		return GP_API_SYNC_DEVICE;
	if (gp_cupti_prefix(n, "cuStreamSynchronize"))
		return GP_API_SYNC_STREAM;
	if (gp_cupti_prefix(n, "cuEventSynchronize"))
		return GP_API_SYNC_EVENT;
	if (gp_cupti_prefix(n, "cuProfilerSt"))
		return GP_API_PROFILER;
	if (!strcmp(n, "cuMemFree") || !strcmp(n, "cuMemFree_v2") || !strcmp(n, "cuMemFreeHost") ||
	    gp_cupti_prefix(n, "cuMemAllocHost") || !strcmp(n, "cuMemHostAlloc"))
		return GP_API_SYNC_IMPLICIT;
	return GP_API_OTHER;
}

/* Is a cbid one the report needs an API record of (GP_CUPTI_API_NEEDED)?
 * The calls that enqueue or wait for GPU work (every class but OTHER and
 * PROFILER: launches, copies, sets, graph launches, host functions, explicit
 * and implicit synchronizations); the stream-ordering event calls, which
 * CUDA-event timings are checked against (docs/gpu-validation.md); and, in
 * the runtime, the set-up calls the report's stages are cut by (the first
 * CUDA call, allocations: report/analyses/stages.c), rare by nature. Left
 * out: the queries a framework makes around every op (cudaGetDevice,
 * cudaSetDevice, cudaGetLastError, cudaStreamIsCapturing, cudaEventQuery,
 * ...). */
static int gp_cupti_needed(int driver, unsigned cbid)
{
	static const char *const rt[] = {
		"cudaEventRecord", "cudaStreamWaitEvent", "cudaMalloc", "cudaHostRegister", "cudaHostUnregister",
		"cudaStreamCreate", "cudaStreamDestroy", "cudaEventCreate", "cudaEventDestroy",
		"cudaStreamBeginCapture", "cudaStreamEndCapture", "cudaGraphInstantiate", "cudaDeviceReset",
	};
	static const char *const drv[] = {"cuEventRecord", "cuStreamWaitEvent"};
	enum gp_api_class c = gp_cupti_classify(driver, cbid);
	if (c != GP_API_OTHER && c != GP_API_PROFILER)
		return 1;
	const char *n = gp_cupti_cbid_name(driver, cbid);
	const char *const *p = driver ? drv : rt;
	size_t np = driver ? sizeof drv / sizeof drv[0] : sizeof rt / sizeof rt[0];
	for (size_t i = 0; n && i < np; i++)
		if (gp_cupti_prefix(n, p[i]))
			return 1;
	return 0;
}

/* Class cache, 0 = not yet seen, else class + 1. The first thread to see a
 * cbid (exchange 0 -> value) also emits its GP_REC_API_NAME. */
static uint8_t gp_cupti_seen[2][GP_CUPTI_MAX_CBID];

static unsigned gp_cupti_class_of(int driver, unsigned cbid)
{
	if (cbid >= GP_CUPTI_MAX_CBID)
		return GP_API_OTHER;
	uint8_t v = __atomic_load_n(&gp_cupti_seen[driver][cbid], __ATOMIC_RELAXED);
	if (GP_LIKELY(v))
		return v - 1u;
	enum gp_api_class cls = gp_cupti_classify(driver, cbid);
	if (__atomic_exchange_n(&gp_cupti_seen[driver][cbid], (uint8_t)(cls + 1), __ATOMIC_RELAXED) == 0) {
		char buf[48];
		const char *n = gp_cupti_cbid_name(driver, cbid);
		if (!n) {
			snprintf(buf, sizeof buf, "%s_cbid_%u", driver ? "driver" : "runtime", cbid);
			n = buf;
		}
		union gp_rec r;
		memset(&r, 0, sizeof r);
		r.api_name.type = GP_REC_API_NAME;
		r.api_name.domain = driver ? GP_REC_DRIVER_API : GP_REC_RUNTIME_API;
		r.api_name.api_id = (uint16_t)cbid;
		r.api_name.name = gp_collector_intern(n, strlen(n));
		r.api_name.api_class = (uint8_t)cls;
		gp_collector_emit(&r, 1);
	}
	return cls;
}

/* ---- buffers ------------------------------------------------------------ */

static void CUPTIAPI gp_cupti_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	size_t sz = gp_cupti_mode.buffer_bytes ? gp_cupti_mode.buffer_bytes : GP_CUPTI_BUF_DEFAULT;
	*buffer = aligned_alloc(8, sz);
	*size = *buffer ? sz : 0;
	*max_records = 0;
}

static inline uint64_t gp_cupti_ts(uint64_t t)
{
	return t ? (uint64_t)((int64_t)t + gp_cupti_offset) : 0;
}

static uint32_t gp_cupti_intern(const char *s)
{
	return s ? gp_collector_intern(s, strlen(s)) : 0;
}

/* The launch configurations seen, interned: an open-addressing table of
 * twice GP_LAUNCH_CFG_MAX slots, allocated at the first kernel record. */
#define GP_CFG_SLOTS (2u * (GP_LAUNCH_CFG_MAX + 1u))
static pthread_mutex_t gp_cfg_mx = PTHREAD_MUTEX_INITIALIZER;
static struct gp_rec_launch_cfg *gp_cfg_tab; /* id 0 = empty slot */
static uint32_t gp_cfg_count;

/* The id of k's configuration, its record emitted the first time; 0 when
 * the table is full or cannot be allocated (the kernel has no config). */
static uint32_t gp_cupti_launch_cfg(const CUpti_ActivityKernel10 *k)
{
	struct gp_rec_launch_cfg c;
	memset(&c, 0, sizeof c);
	c.type = GP_REC_LAUNCH_CFG;
	c.grid[0] = (uint32_t)k->gridX, c.grid[1] = (uint32_t)k->gridY, c.grid[2] = (uint32_t)k->gridZ;
	c.block[0] = (uint16_t)k->blockX, c.block[1] = (uint16_t)k->blockY, c.block[2] = (uint16_t)k->blockZ;
	c.regs = k->registersPerThread;
	c.static_smem = (uint32_t)k->staticSharedMemory;
	c.dynamic_smem = (uint32_t)k->dynamicSharedMemory;
	uint32_t h = 2166136261u; /* FNV-1a over the fields after the id */
	for (const uint8_t *b = (const uint8_t *)c.grid; b < (const uint8_t *)(&c + 1); b++)
		h = (h ^ *b) * 16777619u;
	uint32_t id = 0;
	pthread_mutex_lock(&gp_cfg_mx);
	if (!gp_cfg_tab)
		gp_cfg_tab = calloc(GP_CFG_SLOTS, sizeof *gp_cfg_tab);
	for (uint32_t i = h % GP_CFG_SLOTS, n = 0; gp_cfg_tab && n < GP_CFG_SLOTS; i = (i + 1) % GP_CFG_SLOTS, n++) {
		struct gp_rec_launch_cfg *e = &gp_cfg_tab[i];
		if (e->id && memcmp(e->grid, c.grid, sizeof c - offsetof(struct gp_rec_launch_cfg, grid)) == 0) {
			id = e->id;
			break;
		}
		if (!e->id) {
			if (gp_cfg_count >= GP_LAUNCH_CFG_MAX)
				break;
			c.id = (uint16_t)(gp_cfg_count + 1u);
			if (gp_collector_emit((const union gp_rec *)&c, 1) == 0) { /* dropped: try again next time */
				*e = c;
				id = c.id;
				gp_cfg_count++;
			}
			break;
		}
	}
	pthread_mutex_unlock(&gp_cfg_mx);
	return id;
}

static void gp_cupti_graph(uint32_t graph_id, uint64_t node_id, uint32_t corr)
{
	union gp_rec r;
	memset(&r, 0, sizeof r);
	r.graph.type = GP_REC_GRAPH_NODE;
	r.graph.graph_id = graph_id;
	r.graph.node_id = node_id;
	r.graph.corr = corr;
	gp_collector_emit(&r, 1);
}

static void gp_cupti_copy(uint8_t type, uint8_t device, uint8_t kind, unsigned flags, uint32_t stream, uint64_t start,
			  uint64_t end, uint32_t corr, uint32_t rt_corr, uint64_t bytes, uint32_t graph_id,
			  uint64_t node_id)
{
	union gp_rec r;
	memset(&r, 0, sizeof r);
	r.copy.type = type;
	r.copy.device = device;
	r.copy.copy_kind = kind;
	r.copy.flags = (uint8_t)flags; /* GP_COPYF_ASYNC, GP_COPYF_PAGEABLE */
	r.copy.stream = stream;
	r.copy.start = gp_cupti_ts(start);
	uint64_t dur = 0;
	if (end == 0 || end < start)
		r.copy.flags |= GP_COPYF_END_MISSING;
	else
		dur = end - start;
	if (dur > UINT32_MAX) {
		dur /= 1000u;
		r.copy.flags |= GP_COPYF_DUR_US;
	}
	r.copy.dur = (uint32_t)dur;
	r.copy.corr = corr;
	r.copy.rt_corr = rt_corr;
	if (bytes > UINT32_MAX) {
		bytes >>= 10;
		r.copy.flags |= GP_COPYF_BYTES_KIB;
	}
	r.copy.bytes = (uint32_t)bytes;
	if (graph_id)
		r.copy.flags |= GP_COPYF_GRAPH;
	gp_collector_emit(&r, 1);
	if (graph_id)
		gp_cupti_graph(graph_id, node_id, corr);
}

static void gp_cupti_convert(const CUpti_Activity *a)
{
	union gp_rec r;
	memset(&r, 0, sizeof r);
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)a;
		r.kernel.type = GP_REC_KERNEL;
		r.kernel.device = (uint8_t)k->deviceId;
		r.kernel.stream = k->streamId;
		r.kernel.start = gp_cupti_ts(k->start);
		r.kernel.end = gp_cupti_ts(k->end);
		if (k->end == 0)
			r.kernel.flags |= GP_OPF_END_MISSING;
		if (k->graphId)
			r.kernel.flags |= GP_OPF_GRAPH;
		r.kernel.flags |= (uint16_t)(gp_cupti_launch_cfg(k) << GP_OPF_CFG_SHIFT);
		r.kernel.corr = k->correlationId;
		r.kernel.name = gp_cupti_intern(k->name);
		gp_collector_emit(&r, 1);
		if (gp_counters_on && k->end > k->start) /* top=N: warm-up GPU time per kernel */
			gp_counters_kernel_time(k->name, k->end - k->start);
		if (k->graphId)
			gp_cupti_graph(k->graphId, k->graphNodeId, k->correlationId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)a;
		unsigned f = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? GP_COPYF_ASYNC : 0;
		if (m->srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE || m->dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE)
			f |= GP_COPYF_PAGEABLE;
		gp_cupti_copy(GP_REC_MEMCPY, (uint8_t)m->deviceId, m->copyKind, f, m->streamId, m->start, m->end,
			      m->correlationId, m->runtimeCorrelationId, m->bytes, m->graphId, m->graphNodeId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)a;
		gp_cupti_copy(GP_REC_MEMSET, (uint8_t)m->deviceId, 0,
			      (m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? GP_COPYF_ASYNC : 0u,
			      m->streamId, m->start, m->end, m->correlationId, m->correlationId, m->bytes, m->graphId,
			      m->graphNodeId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: {
		const CUpti_ActivityAPI *api = (const void *)a;
		int driver = a->kind != CUPTI_ACTIVITY_KIND_RUNTIME;
		r.api.type = driver ? GP_REC_DRIVER_API : GP_REC_RUNTIME_API;
		unsigned cls = gp_cupti_class_of(driver, api->cbid);
		uint64_t dur = api->end > api->start ? api->end - api->start : 0;
		r.api.class_flags = (uint8_t)(cls | (api->returnValue ? GP_APIF_ERROR : 0));
		if (dur > UINT32_MAX) {
			dur /= 1000u;
			r.api.class_flags |= GP_APIF_DUR_US;
		}
		r.api.api_id = (uint16_t)api->cbid;
		r.api.tid = api->threadId;
		r.api.start = gp_cupti_ts(api->start);
		r.api.dur = (uint32_t)dur;
		r.api.corr = api->correlationId;
		r.api.result = api->returnValue;
		gp_collector_emit(&r, 1);
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const void *)a;
		r.sync.type = GP_REC_SYNC;
		r.sync.sync_type = (uint8_t)s->type;
		r.sync.stream = s->streamId;
		r.sync.start = gp_cupti_ts(s->start);
		r.sync.end = gp_cupti_ts(s->end);
		r.sync.corr = s->correlationId;
		r.sync.event = s->cudaEventId;
		gp_collector_emit(&r, 1);
		break;
	}
	case CUPTI_ACTIVITY_KIND_OVERHEAD: {
		/* CUPTI's own time on a thread: inside a call (instrumentation),
		 * or a call's wait on a full launch queue (COMMAND_BUFFER_FULL,
		 * whose overheadData the client frees, as CUPTI documents) */
		const CUpti_ActivityOverhead3 *o = (const void *)a;
		r.overhead.type = GP_REC_OVERHEAD;
		r.overhead.cupti_kind = (uint32_t)o->overheadKind;
		r.overhead.kind = o->overheadKind == CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION ? GP_OVH_INSTRUMENTATION
				  : o->overheadKind == CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL ? GP_OVH_COMMAND_BUFFER_FULL
												   : GP_OVH_OTHER;
		r.overhead.tid = o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? o->objectId.pt.threadId : 0;
		r.overhead.start = gp_cupti_ts(o->start);
		r.overhead.end = gp_cupti_ts(o->end);
		r.overhead.corr = o->correlationId;
		if (o->overheadKind == CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL)
			free(o->overheadData);
		gp_collector_emit(&r, 1);
		break;
	}
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
		const CUpti_ActivityExternalCorrelation *x = (const void *)a;
		r.extcorr.type = GP_REC_EXTCORR;
		r.extcorr.kind = (uint8_t)x->externalKind;
		r.extcorr.corr = x->correlationId;
		r.extcorr.ext_id = x->externalId;
		gp_collector_emit(&r, 1);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MARKER: {
		const CUpti_ActivityMarker2 *m = (const void *)a;
		r.marker.type = GP_REC_MARKER;
		if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START)
			r.marker.kind = GP_MARK_START;
		else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END)
			r.marker.kind = GP_MARK_END;
		else
			r.marker.kind = GP_MARK_INSTANT;
		r.marker.tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
		r.marker.ts = gp_cupti_ts(m->timestamp);
		r.marker.id = m->id;
		r.marker.name = r.marker.kind == GP_MARK_END ? 0 : gp_cupti_intern(m->name);
		r.marker.domain = gp_cupti_intern(m->domain);
		gp_collector_emit(&r, 1);
		break;
	}
	default:
		break;
	}
}

static void CUPTIAPI gp_cupti_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				       size_t valid)
{
	(void)size;
	uint64_t t0 = gp_now(); /* self-overhead: time in this callback (hostload.c) */
	CUpti_Activity *rec = NULL;
	if (buffer && valid) {
		while (gp_cupti_fn.next_record(buffer, valid, &rec) == CUPTI_SUCCESS)
			gp_cupti_convert(rec);
	}
	size_t dropped = 0;
	if (gp_cupti_fn.num_dropped(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped) {
		union gp_rec r;
		memset(&r, 0, sizeof r);
		r.drops.type = GP_REC_DROPS;
		r.drops.source = GP_DROP_CUPTI;
		r.drops.ts = gp_now();
		r.drops.dropped = __atomic_add_fetch(&gp_cupti_dropped, dropped, __ATOMIC_RELAXED);
		gp_collector_emit(&r, 1);
	}
	free(buffer);
	__atomic_add_fetch(&gp_cupti_buffer_ns, gp_now() - t0, __ATOMIC_RELAXED);
}

/* Resource callbacks: flush what CUPTI holds before a context goes away. */
static void CUPTIAPI gp_cupti_callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				       const void *data)
{
	(void)ud;
	(void)data;
	/* On the application thread, inside its CUDA call: errno is the
	 * program's (a ring allocation failing in here must not show). */
	int saved = errno;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) { /* on only until counters.c has its context */
		const CUpti_CallbackData *cb = data;
		if (cb->context)
			gp_counters_context(cb->context, 1);
	} else if (domain == CUPTI_CB_DOMAIN_RESOURCE && (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED ||
						   cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED))
		gp_graphs_callback(cbid, data); /* graphs.c: capture-time node mapping */
	else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
		gp_counters_context(((const CUpti_ResourceData *)data)->context, 1);
	else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
		if (gp_counters_on)
			gp_counters_context(((const CUpti_ResourceData *)data)->context, 0);
		/* only while capturing: after finish the trace is closed, and at
		 * exit (cudart's teardown) a flush could wait on a lock held by
		 * a call the exit interrupted (lib.c gp_lib_drain) */
		if (gp_cupti_registered && __atomic_load_n(&gp_state, __ATOMIC_ACQUIRE) == GP_STATE_RUNNING)
			gp_cupti_fn.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	}
	errno = saved;
}

/* ---- life cycle ---------------------------------------------------------- */

/* The mode used: GPUPHASE_CUPTI's, less what this CUPTI cannot do. Called by
 * gp_cupti_open after the clock is settled, before any kind is enabled. */
static void gp_cupti_choose(const struct gp_config *cfg)
{
	struct gp_cupti_mode m = cfg->cupti_mode;
	const char *why = NULL;
	if (m.runtime == GP_CUPTI_API_NEEDED && !gp_cupti_fn.enable_rt_api) {
		m.runtime = GP_CUPTI_API_ALL;
		why = "no cuptiActivityEnableRuntimeApi: runtime=all";
	}
	if (m.driver == GP_CUPTI_API_NEEDED && !gp_cupti_fn.enable_drv_api) {
		m.driver = GP_CUPTI_API_ALL;
		why = "no cuptiActivityEnableDriverApi: driver=all";
	}
	/* A join by thread and time needs CUPTI's thread ids to be the hooks'
	 * and CUPTI's times on the hooks' clock. */
	if (m.extcorr != GP_CUPTI_EXT_ALL) {
		if (gp_cupti_calibrated) {
			m.extcorr = GP_CUPTI_EXT_ALL;
			why = "CUPTI times are not on the trace clock: extcorr=all";
		} else if (!gp_cupti_fn.set_tid_type ||
			   gp_cupti_fn.set_tid_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) != CUPTI_SUCCESS) {
			m.extcorr = GP_CUPTI_EXT_ALL;
			why = "cuptiSetThreadIdType(SYSTEM) refused: extcorr=all";
		}
	}
	if (m.per_thread >= 0) {
		uint8_t v = (uint8_t)m.per_thread;
		size_t sz = sizeof v;
		if (!gp_cupti_fn.set_attr ||
		    gp_cupti_fn.set_attr(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &sz, &v) != CUPTI_SUCCESS) {
			m.per_thread = -1;
			why = "per-thread activity buffers cannot be set: CUPTI's default kept";
		}
	}
	if (m.flush_ms && (!gp_cupti_fn.flush_period || gp_cupti_fn.flush_period(m.flush_ms) != CUPTI_SUCCESS)) {
		m.flush_ms = 0;
		why = "cuptiActivityFlushPeriod refused: no periodic flush";
	}
	gp_cupti_mode = m;
	gp_config_cupti_text(&m, gp_cupti_mode_str, sizeof gp_cupti_mode_str);
	if (why)
		gp_log(GP_LOG_INFO, "CUPTI mode %s (%s)", gp_cupti_mode_str, why);
	else
		gp_log(GP_LOG_DEBUG, "CUPTI mode %s", gp_cupti_mode_str);
}

const char *gp_cupti_mode_text(void)
{
	return gp_cupti_mode_str;
}

/* The needed cbids of each layer (gp_cupti_needed), listed once at open:
 * the capture window switches them at every start and stop, and asking
 * gp_cupti_needed over the whole tables (a name lookup per cbid) took
 * ~350 us, long enough for a window's edge to leave a concurrent call
 * half traced or an iteration's mark far before the window's start mark. */
static unsigned gp_cupti_need_rt[sizeof gp_cbid_rt / sizeof gp_cbid_rt[0]];
static unsigned gp_cupti_need_drv[sizeof gp_cbid_drv / sizeof gp_cbid_drv[0]];
static size_t gp_cupti_need_n[2];

static void gp_cupti_list_needed(void)
{
	for (int driver = 0; driver < 2; driver++) {
		const struct gp_cbid_name *t = driver ? gp_cbid_drv : gp_cbid_rt;
		size_t n = driver ? sizeof gp_cbid_drv / sizeof gp_cbid_drv[0]
				  : sizeof gp_cbid_rt / sizeof gp_cbid_rt[0];
		unsigned *out = driver ? gp_cupti_need_drv : gp_cupti_need_rt;
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (gp_cupti_needed(driver, t[i].id))
				out[k++] = t[i].id;
		gp_cupti_need_n[driver] = k;
	}
}

/* API records of one layer on or off, as the mode says: the kind, or each
 * needed cbid (gp_cupti_need_*), or nothing. */
static void gp_cupti_api_layer(int driver, int on)
{
	unsigned how = driver ? gp_cupti_mode.driver : gp_cupti_mode.runtime;
	CUpti_ActivityKind k = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
	if (how == GP_CUPTI_API_ALL) {
		CUptiResult res = on ? gp_cupti_fn.enable(k) : gp_cupti_fn.disable(k);
		if (res != CUPTI_SUCCESS)
			gp_log(GP_LOG_DEBUG, "cuptiActivity%s(kind %d): CUptiResult %d", on ? "Enable" : "Disable",
			       (int)k, (int)res);
		if (driver) /* the driver's own launches (INTERNAL_LAUNCH_API) go with all its calls */
			on ? gp_cupti_fn.enable(CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API)
			   : gp_cupti_fn.disable(CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API);
		return;
	}
	if (how != GP_CUPTI_API_NEEDED)
		return;
	const unsigned *ids = driver ? gp_cupti_need_drv : gp_cupti_need_rt;
	unsigned count = 0, failed = 0;
	for (size_t i = 0; i < gp_cupti_need_n[driver]; i++) {
		CUptiResult res = driver ? gp_cupti_fn.enable_drv_api(ids[i], (uint8_t)on)
					 : gp_cupti_fn.enable_rt_api(ids[i], (uint8_t)on);
		count++;
		failed += res != CUPTI_SUCCESS;
	}
	gp_log(failed ? GP_LOG_INFO : GP_LOG_DEBUG, "%s API records %s for %u cbids (%u refused)",
	       driver ? "driver" : "runtime", on ? "on" : "off", count, failed);
}

/* Hooks that push their op id as external correlation: every one, the
 * synchronizing calls whose stacks the report attaches to their waits
 * (report/core/sync.c), or none (joined by thread and time, report/core/join.c). */
static unsigned gp_cupti_push_mask(void)
{
	if (gp_cupti_mode.extcorr == GP_CUPTI_EXT_ALL)
		return GP_WATCH_ALL;
	if (gp_cupti_mode.extcorr == GP_CUPTI_EXT_OFF)
		return 0;
	unsigned sync = GP_CLASS_BIT(GP_API_SYNC_DEVICE) | GP_CLASS_BIT(GP_API_SYNC_STREAM) |
			GP_CLASS_BIT(GP_API_SYNC_EVENT) | GP_CLASS_BIT(GP_API_SYNC_IMPLICIT);
	return sync & gp_stacks_classes;
}

#define GP_CUPTI_SYM(field, name)                                                                         \
	do {                                                                                               \
		*(void **)&gp_cupti_fn.field = dlsym(lib, name);                                           \
		if (!gp_cupti_fn.field) {                                                                  \
			(void)dlerror(); /* no error string of ours left for the program */                \
			*why = "symbol " name " missing";                                                  \
			goto fail;                                                                         \
		}                                                                                          \
	} while (0)

/* The default CUPTI when the loader finds none: the one a pip-installed CUDA
 * brings (the nvidia-cuda-cupti wheel, site-packages/nvidia/cu13/lib), in the
 * site-packages this library was installed in by gpuphase's wheel
 * (site-packages/gpuphase/lib/libgpuphase.so). NULL when there is none. */
static void *gp_cupti_open_wheel(void)
{
	Dl_info self;
	if (!dladdr((void *)gp_cupti_open_wheel, &self) || !self.dli_fname)
		return NULL;
	const char *slash = strrchr(self.dli_fname, '/');
	char path[GP_PATH_MAX];
	struct stat st;
	if (!slash || (size_t)snprintf(path, sizeof path, "%.*s/../../nvidia/cu13/lib/" GP_CUPTI_LIB_DEFAULT,
				       (int)(slash - self.dli_fname), self.dli_fname) >= sizeof path ||
	    stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (lib)
		gp_log(GP_LOG_INFO, "CUPTI from the nvidia-cuda-cupti wheel: %s", path);
	else
		(void)dlerror(); /* no error string of ours left for the program */
	return lib;
}

int gp_cupti_open(const struct gp_config *cfg, const char **why, int *cres)
{
	*cres = 0;
	/* A library the user named is an error when it cannot be used; the
	 * default one missing is the ordinary hook-only case. */
	enum gp_log_level lvl = strcmp(cfg->cupti_lib, GP_CUPTI_LIB_DEFAULT) ? GP_LOG_ERROR : GP_LOG_INFO;
	struct stat st;
	/* dlopen of a FIFO blocks in the loader's read until a writer appears:
	 * refuse any path that exists and is not a regular file. A bare soname
	 * is searched by the loader among library directories. */
	if (strchr(cfg->cupti_lib, '/') && stat(cfg->cupti_lib, &st) == 0 && !S_ISREG(st.st_mode)) {
		*why = "CUPTI library is not a regular file";
		gp_log(lvl, "cannot load %s: not a regular file; hook-only capture", cfg->cupti_lib);
		return -ENOENT;
	}
	void *lib = dlopen(cfg->cupti_lib, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		char err[256];
		snprintf(err, sizeof err, "%s", dlerror());
		lib = lvl == GP_LOG_INFO ? gp_cupti_open_wheel() : NULL;
		if (!lib) {
			*why = "CUPTI library not found";
			gp_log(lvl, "cannot load %s: %s; hook-only capture", cfg->cupti_lib, err);
			return -ENOENT;
		}
	}
	GP_CUPTI_SYM(subscribe, "cuptiSubscribe");
	GP_CUPTI_SYM(unsubscribe, "cuptiUnsubscribe");
	GP_CUPTI_SYM(enable_callback, "cuptiEnableCallback");
	GP_CUPTI_SYM(register_callbacks, "cuptiActivityRegisterCallbacks");
	GP_CUPTI_SYM(enable, "cuptiActivityEnable");
	GP_CUPTI_SYM(disable, "cuptiActivityDisable");
	GP_CUPTI_SYM(flush_all, "cuptiActivityFlushAll");
	GP_CUPTI_SYM(next_record, "cuptiActivityGetNextRecord");
	GP_CUPTI_SYM(num_dropped, "cuptiActivityGetNumDroppedRecords");
	GP_CUPTI_SYM(push, "cuptiActivityPushExternalCorrelationId");
	GP_CUPTI_SYM(pop, "cuptiActivityPopExternalCorrelationId");
	GP_CUPTI_SYM(get_timestamp, "cuptiGetTimestamp");
	*(void **)&gp_cupti_fn.enable_domain = dlsym(lib, "cuptiEnableDomain");
	*(void **)&gp_cupti_fn.register_ts = dlsym(lib, "cuptiActivityRegisterTimestampCallback");
	*(void **)&gp_cupti_fn.result_string = dlsym(lib, "cuptiGetResultString");
	*(void **)&gp_cupti_fn.enable_rt_api = dlsym(lib, "cuptiActivityEnableRuntimeApi");
	*(void **)&gp_cupti_fn.enable_drv_api = dlsym(lib, "cuptiActivityEnableDriverApi");
	*(void **)&gp_cupti_fn.set_tid_type = dlsym(lib, "cuptiSetThreadIdType");
	*(void **)&gp_cupti_fn.set_attr = dlsym(lib, "cuptiActivitySetAttribute");
	*(void **)&gp_cupti_fn.flush_period = dlsym(lib, "cuptiActivityFlushPeriod");
	(void)dlerror(); /* optional symbols: clear a failed lookup's string */

	CUptiResult res = gp_cupti_fn.subscribe(&gp_cupti_sub, (CUpti_CallbackFunc)gp_cupti_callback, NULL);
	if (res != CUPTI_SUCCESS) {
		*cres = (int)res;
		*why = res == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
			       ? "another CUPTI subscriber holds this process (nsys, ncu, Kineto?)"
			       : "cuptiSubscribe failed";
		gp_log(GP_LOG_INFO, "%s (CUptiResult %d); hook-only capture", *why, (int)res);
		return -EBUSY;
	}
	gp_cupti_fn.enable_callback(1, gp_cupti_sub, CUPTI_CB_DOMAIN_RESOURCE,
				    CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	/* GPUPHASE_COUNTERS: the profiler (counters.c) and the context it needs */
	if (cfg->counters != GP_COUNTERS_OFF && gp_counters_open(lib) == 0) {
		gp_cupti_fn.enable_callback(1, gp_cupti_sub, CUPTI_CB_DOMAIN_RESOURCE,
					    CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
		/* a context created before this subscription is seen in the
		 * next runtime call's callback data (until counters.c has it) */
		gp_cupti_context_watch(1);
	}
	if (gp_graphs_open(lib) == 0) {
		gp_cupti_fn.enable_callback(1, gp_cupti_sub, CUPTI_CB_DOMAIN_RESOURCE,
					    CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
		gp_cupti_fn.enable_callback(1, gp_cupti_sub, CUPTI_CB_DOMAIN_RESOURCE,
					    CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
	}

	/* One clock: ours, before any kind is enabled — except in a process
	 * already running CUDA work (attach): its CUPTI clock is not switched
	 * under work in flight; the offset is measured instead. */
	if (gp_cupti_keep_clock || !gp_cupti_fn.register_ts ||
	    gp_cupti_fn.register_ts(gp_cupti_clock) != CUPTI_SUCCESS) {
		uint64_t best = UINT64_MAX;
		for (int i = 0; i < 7; i++) {
			uint64_t c = 0, a = gp_now();
			if (gp_cupti_fn.get_timestamp(&c) != CUPTI_SUCCESS)
				continue;
			uint64_t b = gp_now();
			if (b - a < best) {
				best = b - a;
				gp_cupti_offset = (int64_t)(a + (b - a) / 2) - (int64_t)c;
			}
		}
		gp_cupti_calibrated = 1;
	}
	gp_cupti_choose(cfg);
	gp_cupti_list_needed();
	gp_cupti_marker_kind = 0;
	const char *nvtx = getenv("NVTX_INJECTION64_PATH");
	if (nvtx && strstr(nvtx, "cupti"))
		gp_cupti_marker_kind = 1;
	gp_cupti_usable = 1;
	return 0;
fail:
	/* a library the user named that is no CUPTI: as loud as a missing one */
	gp_log(lvl, "cannot use %s: %s; hook-only capture", cfg->cupti_lib, *why);
	return -ENOSYS;
}

void gp_cupti_context_watch(int on)
{
	if (gp_cupti_fn.enable_domain)
		gp_cupti_fn.enable_domain(on ? 1u : 0u, gp_cupti_sub, CUPTI_CB_DOMAIN_RUNTIME_API);
}

void gp_cupti_capture(int on)
{
	if (!gp_cupti_usable)
		return;
	if (on && !gp_cupti_registered) {
		if (gp_cupti_fn.register_callbacks(gp_cupti_request, gp_cupti_complete) != CUPTI_SUCCESS) {
			gp_log(GP_LOG_ERROR, "cuptiActivityRegisterCallbacks failed; hook-only capture");
			gp_cupti_usable = 0;
			return;
		}
		/* release: pairs with gp_cupti_flush_completed's acquire (the
		 * drain thread's periodic flush) */
		__atomic_store_n(&gp_cupti_registered, 1, __ATOMIC_RELEASE);
	}
	if (!gp_cupti_registered)
		return;
	if (!on) {
		__atomic_store_n(&gp_cupti_push_bits, 0u, __ATOMIC_RELAXED);
		__atomic_store_n(&gp_cupti_active, 0, __ATOMIC_RELAXED);
	}
	/* On: the API records first, the op and sync records after them. Off:
	 * the mirror, the op and sync records first. The API layers are slow
	 * to switch in lean mode (one call per cbid): switched off first they
	 * would leave a call ending meanwhile with its sync or op record but
	 * no API record to join it to. */
	if (on) {
		gp_cupti_api_layer(0, 1);
		gp_cupti_api_layer(1, 1);
	}
	const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
		CUPTI_ACTIVITY_KIND_MEMCPY,               CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,      CUPTI_ACTIVITY_KIND_MARKER,
		CUPTI_ACTIVITY_KIND_OVERHEAD,
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		CUpti_ActivityKind k = kinds[i];
		if ((k == CUPTI_ACTIVITY_KIND_MARKER && !gp_cupti_marker_kind) ||
		    (k == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION && gp_cupti_mode.extcorr == GP_CUPTI_EXT_OFF) ||
		    (k == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION && !gp_cupti_mode.sync) ||
		    (k == CUPTI_ACTIVITY_KIND_OVERHEAD && !gp_cupti_mode.overhead))
			continue;
		CUptiResult res = on ? gp_cupti_fn.enable(k) : gp_cupti_fn.disable(k);
		if (on && k == CUPTI_ACTIVITY_KIND_OVERHEAD && res == CUPTI_SUCCESS && !gp_cupti_overhead_said) {
			/* the report trusts COMMAND_BUFFER_FULL records; calibrate.c reads it */
			__atomic_store_n(&gp_cupti_overhead_said, 1, __ATOMIC_RELAXED);
			gp_state_status(GP_STATUS_CUPTI_OVERHEAD, 1, NULL);
		}
		if (res != CUPTI_SUCCESS)
			gp_log(GP_LOG_DEBUG, "cuptiActivity%s(kind %d): CUptiResult %d", on ? "Enable" : "Disable",
			       (int)k, (int)res);
	}
	if (!on) {
		gp_cupti_api_layer(0, 0);
		gp_cupti_api_layer(1, 0);
	}
	if (on) {
		__atomic_store_n(&gp_cupti_active, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&gp_cupti_push_bits, gp_cupti_push_mask(), __ATOMIC_RELAXED);
	}
}

void gp_cupti_quiesce(void)
{
	if (!gp_cupti_usable || !gp_cupti_registered)
		return;
	gp_cupti_api_layer(0, 0);
	gp_cupti_api_layer(1, 0);
}

void gp_cupti_push(uint32_t op)
{
	gp_cupti_fn.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, op);
}

void gp_cupti_pop(void)
{
	uint64_t last;
	gp_cupti_fn.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
}

/* ---- for the calibration of CUPTI's cost (calibrate.c) ------------------- */

int gp_cupti_overhead_on(void)
{
	return __atomic_load_n(&gp_cupti_overhead_said, __ATOMIC_RELAXED);
}

int gp_cupti_kernel_records(int on)
{
	if (!gp_cupti_usable || !gp_cupti_registered)
		return -ENODEV;
	CUptiResult r = on ? gp_cupti_fn.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			   : gp_cupti_fn.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	return r == CUPTI_SUCCESS ? 0 : -EIO;
}

int gp_cupti_api_trace(int driver, unsigned cbid, int on)
{
	if (!gp_cupti_usable || !gp_cupti_registered)
		return -ENODEV;
	__typeof__(&cuptiActivityEnableRuntimeApi) f = driver ? gp_cupti_fn.enable_drv_api : gp_cupti_fn.enable_rt_api;
	if (!f)
		return -ENOSYS;
	return f((CUpti_CallbackId)cbid, (uint8_t)(on != 0)) == CUPTI_SUCCESS ? 0 : -EIO;
}

int gp_cupti_api_traced(int driver, unsigned cbid)
{
	if (!__atomic_load_n(&gp_cupti_active, __ATOMIC_RELAXED))
		return 0;
	/* as the mode enabled the layer (gp_cupti_api_layer): every cbid of
	 * the kind, the needed ones, or none */
	unsigned how = driver ? gp_cupti_mode.driver : gp_cupti_mode.runtime;
	if (how == GP_CUPTI_API_ALL)
		return 1;
	return how == GP_CUPTI_API_NEEDED && gp_cupti_needed(driver, cbid);
}

void gp_cupti_push_id(uint64_t id)
{
	gp_cupti_fn.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, id);
}

void gp_cupti_flush(void)
{
	if (gp_cupti_usable && gp_cupti_registered)
		gp_cupti_fn.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void gp_cupti_flush_completed(void)
{
	/* registered implies usable and the functions resolved (both set
	 * before the release store of gp_cupti_registered) */
	if (__atomic_load_n(&gp_cupti_registered, __ATOMIC_ACQUIRE))
		gp_cupti_fn.flush_all(0);
}

void gp_cupti_close(void)
{
	/* The library gives up before capturing: hand the subscription back so
	 * the program (torch.profiler, Kineto) can take it later. */
	if (gp_cupti_usable && gp_cupti_fn.unsubscribe)
		gp_cupti_fn.unsubscribe(gp_cupti_sub);
	gp_cupti_forget();
}

void gp_cupti_forget(void)
{
	gp_cupti_push_bits = 0;
	gp_cupti_active = 0;
	gp_cupti_usable = 0;
	gp_cupti_registered = 0;
	/* a fork child or a later trace starts a table of its own (the old one
	 * is left: its lock may have been held across the fork) */
	gp_cfg_mx = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	gp_cfg_tab = NULL;
	gp_cfg_count = 0;
}
