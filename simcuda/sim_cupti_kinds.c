/*
 * sim_cupti_kinds.c — which activity records CUPTI produces: the activity
 * kinds (cuptiActivityEnable / Disable and their variants) and the per-cbid
 * API record switches (cuptiActivityEnableRuntimeApi / DriverApi), each
 * flip told to the runtime's switch hook for the truth's "cupti_kind" lines.
 *
 * Who calls it: CUPTI clients (any thread) flip switches; the runtime (app
 * threads) asks simcupti_enabled / simcupti_api_traced on every call.
 *
 * Threads: switches are written under g_cupti.mx (sim_switch_locked, which
 * tells the truth when, so truth lines come in the order of the flips) and
 * read lock-free (acquire); a record racing an enable/disable may or may
 * not be produced, as with real CUPTI.
 * Invariant: enabling or disabling RUNTIME or DRIVER resets that kind's
 * per-cbid switches (the kind overrides what was set before it).
 */
#include <stdatomic.h>

#include "sim_cupti_state.h"

/* Enabled kinds: written under g_cupti.mx (sim_switch_locked, which tells the
 * truth when), read lock-free (acquire; a record racing an enable/disable
 * may or may not be produced, as with real CUPTI). */
static _Atomic int g_kind_on[SIM_MAX_KIND];
/* Per-cbid API record switches (cuptiActivityEnableRuntimeApi/DriverApi):
 * 0 = as the kind says, 1 = on, 2 = off; enabling or disabling the kind
 * resets them (the kind overrides what was set before it). Set under g_cupti.mx
 * (sim_switch_locked), read acquire. */
static _Atomic unsigned char g_rt_sel[SIM_MAX_CBID], g_drv_sel[SIM_MAX_CBID];

/* ---- switches: read by the runtime ---------------------------------------- */

int simcupti_enabled(CUpti_ActivityKind k)
{
	if ((unsigned)k >= SIM_MAX_KIND)
		return 0;
	return atomic_load_explicit(&g_kind_on[k], memory_order_acquire); /* pair: sim_switch_locked */
}

int simcupti_api_traced(CUpti_ActivityKind kind, CUpti_CallbackId cbid)
{
	if (cbid < SIM_MAX_CBID && (kind == CUPTI_ACTIVITY_KIND_RUNTIME || kind == CUPTI_ACTIVITY_KIND_DRIVER)) {
		_Atomic unsigned char *sel = kind == CUPTI_ACTIVITY_KIND_DRIVER ? g_drv_sel : g_rt_sel;
		unsigned v = atomic_load_explicit(&sel[cbid], memory_order_acquire); /* pair: sim_switch_locked */
		if (v)
			return v == 1;
	}
	return simcupti_enabled(kind);
}

static int sim_kind_supported(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_MEMCPY:
	case CUPTI_ACTIVITY_KIND_MEMSET:
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
	case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
	case CUPTI_ACTIVITY_KIND_MARKER:
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return 1;
	default:
		return 0;
	}
}

/* A kind's name in the truth's "cupti_kind" lines (the enum without its
 * CUPTI_ACTIVITY_KIND_ prefix); only the kinds sim_kind_supported accepts. */
static const char *sim_kind_name(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_KERNEL: return "KERNEL";
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "CONCURRENT_KERNEL";
	case CUPTI_ACTIVITY_KIND_MEMCPY: return "MEMCPY";
	case CUPTI_ACTIVITY_KIND_MEMSET: return "MEMSET";
	case CUPTI_ACTIVITY_KIND_RUNTIME: return "RUNTIME";
	case CUPTI_ACTIVITY_KIND_DRIVER: return "DRIVER";
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "SYNCHRONIZATION";
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return "EXTERNAL_CORRELATION";
	case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: return "INTERNAL_LAUNCH_API";
	case CUPTI_ACTIVITY_KIND_MARKER: return "MARKER";
	case CUPTI_ACTIVITY_KIND_OVERHEAD: return "OVERHEAD";
	default: return "?";
	}
}

void simcupti_set_switch_hook(void (*hook)(const char *kind, int cbid, int on, uint64_t t))
{
	pthread_mutex_lock(&g_cupti.mx);
	g_cupti.switched = hook;
	/* switches a client flipped before the runtime started (none of the
	 * program's calls was made yet): on from now */
	uint64_t t = simcupti_now();
	for (int k = 0; hook && k < SIM_MAX_KIND; k++)
		if (atomic_load_explicit(&g_kind_on[k], memory_order_relaxed))
			hook(sim_kind_name((CUpti_ActivityKind)k), -1, 1, t);
	for (int i = 0; hook && i < SIM_MAX_CBID; i++) {
		unsigned r = atomic_load_explicit(&g_rt_sel[i], memory_order_relaxed);
		unsigned d = atomic_load_explicit(&g_drv_sel[i], memory_order_relaxed);
		if (r)
			hook("RUNTIME", i, r == 1, t);
		if (d)
			hook("DRIVER", i, d == 1, t);
	}
	pthread_mutex_unlock(&g_cupti.mx);
}

/*
 * Flip one switch and tell the truth when (g_cupti.mx held). The instant is taken
 * on the safe side of the store: after it for an on, before it for an off,
 * so a call whose span (truth "start" .. "rec") lies between a kind's on and
 * off instants saw it on at every look. sel: NULL for a kind, else the
 * per-cbid table (value 1 on, 2 off).
 */
static void sim_switch_locked(CUpti_ActivityKind kind, _Atomic unsigned char *sel, int cbid, int on)
{
	uint64_t t = on ? 0 : simcupti_now();
	if (sel)
		atomic_store_explicit(&sel[cbid], on ? 1 : 2, memory_order_seq_cst);
	else
		atomic_store_explicit(&g_kind_on[kind], on, memory_order_seq_cst);
	if (on)
		t = simcupti_now();
	if (g_cupti.switched)
		g_cupti.switched(sim_kind_name(kind), sel ? cbid : -1, on, t);
}

static CUptiResult sim_set_kind(CUpti_ActivityKind kind, int on)
{
	if (!sim_kind_supported(kind))
		return sim_cupti_err(CUPTI_ERROR_NOT_COMPATIBLE);
	pthread_mutex_lock(&g_cupti.mx);
	if (kind == CUPTI_ACTIVITY_KIND_OVERHEAD && on && g_cupti.par.no_overhead_kind) {
		/* a CUPTI without overhead records (cupti_overhead_records 0) */
		pthread_mutex_unlock(&g_cupti.mx);
		return sim_cupti_err(CUPTI_ERROR_NOT_COMPATIBLE);
	}
	if (kind == CUPTI_ACTIVITY_KIND_RUNTIME || kind == CUPTI_ACTIVITY_KIND_DRIVER) {
		/* the kind overrides per-cbid choices made before it (the truth's
		 * line for the kind says so: its readers reset them too) */
		_Atomic unsigned char *sel = kind == CUPTI_ACTIVITY_KIND_DRIVER ? g_drv_sel : g_rt_sel;
		for (int i = 0; i < SIM_MAX_CBID; i++)
			atomic_store_explicit(&sel[i], 0, memory_order_relaxed);
	}
	sim_switch_locked(kind, NULL, 0, on);
	pthread_mutex_unlock(&g_cupti.mx);
	return CUPTI_SUCCESS;
}

/* ---- switches: flipped by the client -------------------------------------- */

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	return sim_set_kind(kind, 1);
}

CUptiResult cuptiActivityEnableAndDump(CUpti_ActivityKind kind)
{
	return sim_set_kind(kind, 1);
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	return sim_set_kind(kind, 0);
}

CUptiResult cuptiActivityEnableContext(CUcontext context, CUpti_ActivityKind kind)
{
	(void)context;
	return sim_set_kind(kind, 1);
}

CUptiResult cuptiActivityDisableContext(CUcontext context, CUpti_ActivityKind kind)
{
	(void)context;
	return sim_set_kind(kind, 0);
}

/* Switch the API records of one cbid of kind (RUNTIME or DRIVER, table sel). */
static CUptiResult sim_set_api(CUpti_ActivityKind kind, _Atomic unsigned char *sel, CUpti_CallbackId cbid,
			       uint8_t enable)
{
	if (cbid >= SIM_MAX_CBID)
		return sim_cupti_err(CUPTI_ERROR_INVALID_PARAMETER);
	pthread_mutex_lock(&g_cupti.mx);
	sim_switch_locked(kind, sel, (int)cbid, enable != 0);
	pthread_mutex_unlock(&g_cupti.mx);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
	return sim_set_api(CUPTI_ACTIVITY_KIND_RUNTIME, g_rt_sel, cbid, enable);
}

CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
	return sim_set_api(CUPTI_ACTIVITY_KIND_DRIVER, g_drv_sel, cbid, enable);
}

/* HES kernel timestamps exist on Blackwell only; the simulated device is an
 * H200 (cc 9.0). Disabling is a no-op. */
CUptiResult cuptiActivityEnableHWTrace(uint8_t enable)
{
	return enable ? sim_cupti_err(CUPTI_ERROR_NOT_SUPPORTED) : CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableLatencyTimestamps(uint8_t enable)
{
	(void)enable;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableLaunchAttributes(uint8_t enable)
{
	(void)enable;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableAllSyncRecords(uint8_t enable)
{
	(void)enable;
	return CUPTI_SUCCESS;
}

void sim_cupti_kinds_off_locked(void)
{
	for (int k = 0; k < SIM_MAX_KIND; k++)
		if (atomic_load_explicit(&g_kind_on[k], memory_order_relaxed))
			sim_switch_locked((CUpti_ActivityKind)k, NULL, 0, 0);
}
