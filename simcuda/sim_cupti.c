/*
 * sim_cupti.c — simulated libcupti.so.13, as CUPTI 13.0 (CUPTI_API_VERSION
 * 130001) presents it: this file holds its shared state (g_cupti), CUPTI's
 * clock and ids, external correlation, the API and overhead records the
 * runtime asks for, the last error, cuptiFinalize and the small queries.
 * The other concerns have their own files (sim_cupti_state.h lists them):
 * delivery of records to the client (sim_cupti_buffers.c), the activity
 * switches (sim_cupti_kinds.c), the callback API (sim_cupti_callback.c) and
 * the profiling API (sim_profiler.c).
 *
 * Who calls it: CUPTI clients (any thread) through the cupti* entry points,
 * and the simulated runtime (the files sim_cudart.h lists, app threads)
 * through the private simcupti_* functions in sim_internal.h.
 *
 * Threads: g_cupti.mx guards the cost model's keys and the clock's drift
 * origin; the clock callback, the last rebase, correlation ids and the
 * thread id type are atomics (each says its ordering); the last error,
 * the external correlation stacks and the thread's system id (asked once)
 * are per thread.
 * Invariant: every timestamp in or out is on CUPTI's current clock; a
 * timestamp callback's registration rebases what is staged and tells the
 * runtime (its rebase hook), so nothing is left on the old clock.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sim_cupti_state.h"

#define SIM_EXT_KINDS ((int)CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
#define SIM_EXT_DEPTH 64

struct sim_cupti_state g_cupti = {
	/* error-checking: a thread that takes it again gets EDEADLK instead of
	 * waiting for ever (simcupti_callback_enabled at exit, below) */
	.mx = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP,
	.cv = PTHREAD_COND_INITIALIZER,
	.done_cv = PTHREAD_COND_INITIALIZER,
	.room_cv = PTHREAD_COND_INITIALIZER,
	.deliver_mx = PTHREAD_MUTEX_INITIALIZER,
	.tail = &g_cupti.head,
	/* until the runtime configures them: the cost model's defaults */
	.par = {.delivery_delay_ns = 1000000000, .clock_offset_ns = 1000, .clock_drift_ppm = 1.0,
		.buffer_records = 100000},
};

/* Correlation ids: relaxed fetch_add, only uniqueness matters. */
static _Atomic uint32_t g_corr = 0;
/* The timestamp callback: release-stored by the registration, acquire-loaded
 * by simcupti_now. */
static _Atomic(CUpti_TimestampCallbackFunc) g_ts_cb = NULL;
/* The last clock switch's delta (new clock - old), 0 before any; relaxed:
 * a waiter that misses it sees its target a day or more off and asks again. */
static _Atomic int64_t g_last_rebase = 0;
/* cuptiSetThreadIdType's choice; relaxed (a record racing the switch may use either). */
static _Atomic int g_thread_id_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;

static __thread CUptiResult t_last_error = CUPTI_SUCCESS;
static __thread int t_ext_n[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
static __thread uint64_t t_ext[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE][SIM_EXT_DEPTH];

CUptiResult sim_cupti_err(CUptiResult r)
{
	if (r != CUPTI_SUCCESS)
		t_last_error = r;
	return r;
}

/* ---- clock, ids ---------------------------------------------------------- */

/* CUPTI's default clock, CLOCK_REALTIME; SIMCUDA_HOST_CLOCK=monotonic_raw
 * (opt-in, for tests that compare a truth without a registered clock to a
 * trace on CLOCK_MONOTONIC_RAW: a REALTIME stepped or slewed by NTP
 * meanwhile moves by up to milliseconds against it) */
static uint64_t sim_realtime(void)
{
	static int raw = -1; /* relaxed atomics: every thread computes the same */
	int r = __atomic_load_n(&raw, __ATOMIC_RELAXED);
	if (r < 0) {
		const char *v = getenv("SIMCUDA_HOST_CLOCK");
		r = v && !strcmp(v, "monotonic_raw");
		__atomic_store_n(&raw, r, __ATOMIC_RELAXED);
	}
	struct timespec ts;
	clock_gettime(r ? CLOCK_MONOTONIC_RAW : CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t simcupti_now(void)
{
	CUpti_TimestampCallbackFunc f = atomic_load_explicit(&g_ts_cb, memory_order_acquire);
	return f ? f() : sim_realtime();
}

int64_t simcupti_last_rebase(void)
{
	return atomic_load_explicit(&g_last_rebase, memory_order_relaxed);
}

uint32_t simcupti_next_corr(void)
{
	return atomic_fetch_add_explicit(&g_corr, 1, memory_order_relaxed) + 1;
}

/* The calling thread's system id, asked of the kernel once per thread (a
 * gettid system call in every API call cost ~80 ns, which a real CUPTI does
 * not spend: a profiler that asks for SYSTEM ids would have been charged
 * for it); 0 = not asked yet. A fork child's only thread is the one that
 * forked, with that thread's copy: cleared there (sim_tid_atfork_child). */
static __thread uint32_t t_system_tid;

static void sim_tid_atfork_child(void)
{
	t_system_tid = 0;
}

__attribute__((constructor)) static void sim_tid_load(void)
{
	pthread_atfork(NULL, NULL, sim_tid_atfork_child);
}

uint32_t simcupti_thread_id(void)
{
	if (atomic_load_explicit(&g_thread_id_type, memory_order_relaxed) == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
		if (!t_system_tid)
			t_system_tid = (uint32_t)syscall(SYS_gettid);
		return t_system_tid;
	}
	return (uint32_t)(uintptr_t)pthread_self();
}

static struct CUctx_st_sim {
	int dummy;
} g_ctx_obj;

CUcontext simcupti_context(void)
{
	return (CUcontext)(void *)&g_ctx_obj;
}

void simcupti_set_rebase_hook(void (*hook)(int64_t delta))
{
	pthread_mutex_lock(&g_cupti.mx);
	g_cupti.rebase = hook;
	pthread_mutex_unlock(&g_cupti.mx);
}

void simcupti_configure(const struct simcupti_params *p)
{
	pthread_mutex_lock(&g_cupti.mx);
	uint64_t records = g_cupti.par.buffer_records;
	g_cupti.par = *p;
	if (g_cupti.dev_buf_attr) /* the client's CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE wins */
		g_cupti.par.buffer_records = records;
	g_cupti.t0 = simcupti_now();
	pthread_mutex_unlock(&g_cupti.mx);
}

void simcupti_clock(int64_t *offset_ns, double *drift_ppm, uint64_t *origin)
{
	pthread_mutex_lock(&g_cupti.mx);
	*offset_ns = g_cupti.par.clock_offset_ns;
	*drift_ppm = g_cupti.par.clock_drift_ppm;
	*origin = g_cupti.t0;
	pthread_mutex_unlock(&g_cupti.mx);
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	if (!f)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g_cupti.mx);
	uint64_t before = simcupti_now();
	atomic_store_explicit(&g_ts_cb, f, memory_order_release);
	int64_t delta = (int64_t)(f() - before);
	atomic_store_explicit(&g_last_rebase, delta, memory_order_relaxed);
	sim_cupti_rebase_staged_locked(delta);
	void (*hook)(int64_t) = g_cupti.rebase;
	pthread_mutex_unlock(&g_cupti.mx);
	if (hook)
		hook(delta);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
	if (!timestamp)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	*timestamp = simcupti_now();
	return CUPTI_SUCCESS;
}

/* ---- the records the runtime asks for ---------------------------------------- */

int simcupti_ext_records(void)
{
	if (!simcupti_enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION))
		return 0;
	int n = 0;
	for (int k = 0; k < SIM_EXT_KINDS; k++)
		n += t_ext_n[k] > 0;
	return n;
}

void simcupti_overhead(uint32_t tid, int overhead_kind, uint64_t start, uint64_t end, uint32_t api_corr)
{
	if (!simcupti_enabled(CUPTI_ACTIVITY_KIND_OVERHEAD))
		return;
	CUpti_ActivityOverhead3 o;
	memset(&o, 0, sizeof o);
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.overheadKind = (CUpti_ActivityOverheadKind)overhead_kind;
	o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	o.objectId.pt.processId = (uint32_t)getpid();
	o.objectId.pt.threadId = tid;
	o.start = start;
	o.end = end;
	o.correlationId = api_corr;
	if (overhead_kind == CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL) {
		CUpti_ActivityOverheadCommandBufferFullData *d = calloc(1, sizeof *d);
		if (d)
			d->channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
		o.overheadData = d;
	}
	simcupti_emit(&o, sizeof o, end, offsetof(CUpti_ActivityOverhead3, start),
		      offsetof(CUpti_ActivityOverhead3, end), SIM_NO_OFF);
}

int simcupti_emit_api(CUpti_ActivityKind kind, CUpti_CallbackId cbid,
		      uint64_t start, uint64_t end, uint32_t corr, uint32_t ret)
{
	if (!simcupti_api_traced(kind, cbid))
		return 0;
	if (simcupti_enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) {
		for (int k = 0; k < SIM_EXT_KINDS; k++) {
			if (t_ext_n[k] == 0)
				continue;
			CUpti_ActivityExternalCorrelation e;
			memset(&e, 0, sizeof e);
			e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
			e.externalKind = (CUpti_ExternalCorrelationKind)k;
			e.externalId = t_ext[k][t_ext_n[k] - 1];
			e.correlationId = corr;
			simcupti_emit(&e, sizeof e, 0, SIM_NO_OFF, SIM_NO_OFF, SIM_NO_OFF);
		}
	}
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof a);
	a.kind = kind;
	a.cbid = cbid;
	a.start = start;
	a.end = end;
	a.processId = (uint32_t)getpid();
	a.threadId = simcupti_thread_id();
	a.correlationId = corr;
	a.returnValue = ret;
	simcupti_emit(&a, sizeof a, 0, offsetof(CUpti_ActivityAPI, start),
		      offsetof(CUpti_ActivityAPI, end), SIM_NO_OFF);
	return 1;
}

CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
	if ((int)kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || (int)kind >= SIM_EXT_KINDS)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	if (t_ext_n[kind] >= SIM_EXT_DEPTH)
		return sim_cupti_err(CUPTI_ERROR_OUT_OF_MEMORY);
	t_ext[kind][t_ext_n[kind]++] = id;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t *lastId)
{
	if ((int)kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || (int)kind >= SIM_EXT_KINDS)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	if (t_ext_n[kind] == 0)
		return sim_cupti_err(CUPTI_ERROR_QUEUE_EMPTY);
	uint64_t v = t_ext[kind][--t_ext_n[kind]];
	if (lastId)
		*lastId = v;
	return CUPTI_SUCCESS;
}

/* ---- queries, errors, finalize ---------------------------------------------- */

CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	atomic_store_explicit(&g_thread_id_type, (int)type, memory_order_relaxed);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType *type)
{
	if (!type)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	*type = (CUpti_ActivityThreadIdType)atomic_load_explicit(&g_thread_id_type, memory_order_relaxed);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetContextId(CUcontext context, uint32_t *contextId)
{
	if (!contextId || context != simcupti_context())
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	*contextId = SIM_CONTEXT_ID;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t *deviceId)
{
	(void)context;
	if (!deviceId)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	*deviceId = SIM_DEVICE_ID;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetVersion(uint32_t *version)
{
	if (!version)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	*version = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetLastError(void)
{
	CUptiResult r = t_last_error;
	t_last_error = CUPTI_SUCCESS;
	return r;
}

CUptiResult cuptiFinalize(void)
{
	pthread_mutex_lock(&g_cupti.mx);
	sim_cupti_delivery_stop_locked();
	sim_cupti_kinds_off_locked();
	sim_cupti_unsubscribe_locked();
	pthread_mutex_unlock(&g_cupti.mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	switch (result) {
	case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
	case CUPTI_ERROR_INVALID_PARAMETER: *str = "CUPTI_ERROR_INVALID_PARAMETER"; break;
	case CUPTI_ERROR_INVALID_OPERATION: *str = "CUPTI_ERROR_INVALID_OPERATION"; break;
	case CUPTI_ERROR_INVALID_KIND: *str = "CUPTI_ERROR_INVALID_KIND"; break;
	case CUPTI_ERROR_MAX_LIMIT_REACHED: *str = "CUPTI_ERROR_MAX_LIMIT_REACHED"; break;
	case CUPTI_ERROR_NOT_INITIALIZED: *str = "CUPTI_ERROR_NOT_INITIALIZED"; break;
	case CUPTI_ERROR_NOT_COMPATIBLE: *str = "CUPTI_ERROR_NOT_COMPATIBLE"; break;
	case CUPTI_ERROR_QUEUE_EMPTY: *str = "CUPTI_ERROR_QUEUE_EMPTY"; break;
	case CUPTI_ERROR_OUT_OF_MEMORY: *str = "CUPTI_ERROR_OUT_OF_MEMORY"; break;
	case CUPTI_ERROR_NOT_SUPPORTED: *str = "CUPTI_ERROR_NOT_SUPPORTED"; break;
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		*str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
		break;
	/* the profiling API's (sim_profiler.c) */
	case CUPTI_ERROR_INVALID_DEVICE: *str = "CUPTI_ERROR_INVALID_DEVICE"; break;
	case CUPTI_ERROR_INVALID_CONTEXT: *str = "CUPTI_ERROR_INVALID_CONTEXT"; break;
	case CUPTI_ERROR_INVALID_METRIC_NAME: *str = "CUPTI_ERROR_INVALID_METRIC_NAME"; break;
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: *str = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; break;
	default: *str = "CUPTI_ERROR_UNKNOWN"; return CUPTI_ERROR_INVALID_PARAMETER;
	}
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetErrorMessage(CUptiResult result, const char **str)
{
	return cuptiGetResultString(result, str);
}

/* ---- graph ids (sim_graph.c objects: a CUgraph starts with its uint32 id,
 * a CUgraphNode with its uint64 id; see sim_internal.h) ------------------- */

CUptiResult cuptiGetGraphId(CUgraph graph, uint32_t *pId)
{
	if (!graph || !pId)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	memcpy(pId, (const void *)graph, sizeof *pId);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetGraphNodeId(CUgraphNode node, uint64_t *nodeId)
{
	if (!node || !nodeId)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	memcpy(nodeId, (const void *)node, sizeof *nodeId);
	return CUPTI_SUCCESS;
}
