/*
 * sim_api_exec.c — how kernels and streams are configured: function
 * attributes (cudaFuncGetAttributes / SetAttribute / SetCacheConfig), the
 * occupancy calculator (cudaOccupancyMaxActiveBlocksPerMultiprocessor[With
 * Flags], cudaOccupancyAvailableDynamicSMemPerBlock; the header-only
 * cudaOccupancyMaxPotentialBlockSize* templates are built on these), stream
 * priorities (cudaDeviceGetStreamPriorityRange, cudaStreamCreateWithPriority,
 * cudaStreamGetPriority), cudaStreamGetFlags, cudaStreamAddCallback, stream
 * attributes (kept and read back), the cache-config and limit calls of the
 * device, and cudaCreateChannelDesc.
 *
 * Model: simcuda has no compiled device code, so every kernel reports the
 * same resource use: 32 registers a thread, no static shared, constant or
 * local memory, PTX/binary version 9.0; what a program sets with
 * cudaFuncSetAttribute is remembered and read back. Occupancy follows the
 * CUDA Occupancy Calculator's rules for cc 9.0 (sim_attributes.c's limits):
 * the fewest blocks allowed by warps (64 a SM), blocks (32 a SM), registers
 * (65536 a SM, allocated per warp in units of 256) and shared memory
 * (233472 bytes a SM, each block's dynamic + static + 1024 reserved bytes).
 * Priorities: the range of a cc 9.0 device, [-5 greatest, 0 least]; a
 * stream keeps its (clamped) priority and reports it, but the simulated
 * timeline has no SM contention, so priority changes no op's time.
 *
 * Threads: application threads, any number. Function and stream settings are
 * lists under g_exec_mx (a leaf lock); entries live as long as the process
 * (kernels are never unregistered; a destroyed stream's entry is small).
 */
#include <stdlib.h>
#include <string.h>

#include "sim_cudart.h"

#define SIM_PRIO_LEAST 0
#define SIM_PRIO_GREATEST (-5)
#define SIM_SM_WARPS 64
#define SIM_SM_BLOCKS 32
#define SIM_SM_REGS 65536
#define SIM_SM_SHMEM 233472
#define SIM_BLOCK_SHMEM_RESERVED 1024
#define SIM_BLOCK_SHMEM_DEFAULT 49152
#define SIM_BLOCK_SHMEM_OPTIN 232448

/* A kernel's settable attributes. */
struct sim_funcset {
	const struct sim_func *f;
	int max_dyn_shmem, carveout, cache_config;
	struct sim_funcset *next;
};

struct sim_streamprio {
	const struct sim_stream *s;
	int prio;
	struct sim_streamprio *next;
};

static pthread_mutex_t g_exec_mx = PTHREAD_MUTEX_INITIALIZER;
static struct sim_funcset *g_funcsets;
static struct sim_streamprio *g_prios;
static int g_cache_config = cudaFuncCachePreferNone;
static size_t g_limits[cudaLimitPersistingL2CacheSize + 1] = {
	[cudaLimitStackSize] = 1024,
	[cudaLimitPrintfFifoSize] = 1 << 20,
	[cudaLimitMallocHeapSize] = 8 << 20,
	[cudaLimitDevRuntimeSyncDepth] = 2,
	[cudaLimitDevRuntimePendingLaunchCount] = 2048,
	[cudaLimitMaxL2FetchGranularity] = 32,
	[cudaLimitPersistingL2CacheSize] = 0,
};

/* f's settings, created on first use; NULL when out of memory. Caller holds g_exec_mx. */
static struct sim_funcset *sim_exec_funcset(const struct sim_func *f)
{
	struct sim_funcset *e = g_funcsets;
	while (e && e->f != f)
		e = e->next;
	if (!e && (e = calloc(1, sizeof *e))) {
		e->f = f;
		e->max_dyn_shmem = SIM_BLOCK_SHMEM_DEFAULT;
		e->carveout = -1;
		e->next = g_funcsets;
		g_funcsets = e;
	}
	return e;
}

static void sim_exec_attrs(const struct sim_func *f, struct cudaFuncAttributes *a)
{
	memset(a, 0, sizeof *a);
	a->maxThreadsPerBlock = 1024;
	a->numRegs = f->rule && f->rule->has_regs ? (int)f->rule->regs : SIM_FUNC_REGS;
	a->sharedSizeBytes = f->rule ? f->rule->static_smem : 0;
	a->ptxVersion = 90;
	a->binaryVersion = 90;
	a->cacheModeCA = 0;
	pthread_mutex_lock(&g_exec_mx);
	struct sim_funcset *e = sim_exec_funcset(f);
	a->maxDynamicSharedSizeBytes = e ? e->max_dyn_shmem : SIM_BLOCK_SHMEM_DEFAULT;
	a->preferredShmemCarveout = e ? e->carveout : -1;
	pthread_mutex_unlock(&g_exec_mx);
}

SIM_EXPORT cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
	SIM_SIMPLE("cudaFuncGetAttributes", cudaFuncGetAttributes_v3020, SIM_DRV(cuFuncGetAttribute), {
		struct sim_func *f = sim_register_find(func);
		if (!attr)
			r_ = cudaErrorInvalidValue;
		else if (!f)
			r_ = cudaErrorInvalidDeviceFunction;
		else
			sim_exec_attrs(f, attr);
	});
}

SIM_EXPORT cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
	SIM_SIMPLE("cudaFuncSetAttribute", cudaFuncSetAttribute_v9000, SIM_DRV(cuFuncSetAttribute), {
		struct sim_func *f = sim_register_find(func);
		if (!f) {
			r_ = cudaErrorInvalidDeviceFunction;
		} else {
			pthread_mutex_lock(&g_exec_mx);
			struct sim_funcset *e = sim_exec_funcset(f);
			if (!e)
				r_ = cudaErrorMemoryAllocation;
			else if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize)
				if (value < 0 || value > SIM_BLOCK_SHMEM_OPTIN)
					r_ = cudaErrorInvalidValue;
				else
					e->max_dyn_shmem = value;
			else if (attr == cudaFuncAttributePreferredSharedMemoryCarveout)
				if (value < -1 || value > 100)
					r_ = cudaErrorInvalidValue;
				else
					e->carveout = value;
			else if ((int)attr < 0 || attr >= cudaFuncAttributeMax)
				r_ = cudaErrorInvalidValue;
			pthread_mutex_unlock(&g_exec_mx); /* other attributes: accepted, no effect */
		}
	});
}

SIM_EXPORT cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig)
{
	SIM_SIMPLE("cudaFuncSetCacheConfig", cudaFuncSetCacheConfig_v3020, SIM_DRV(cuFuncSetCacheConfig), {
		struct sim_func *f = sim_register_find(func);
		if (!f) {
			r_ = cudaErrorInvalidDeviceFunction;
		} else {
			pthread_mutex_lock(&g_exec_mx);
			struct sim_funcset *e = sim_exec_funcset(f);
			if (e)
				e->cache_config = cacheConfig;
			pthread_mutex_unlock(&g_exec_mx);
		}
	});
}

SIM_EXPORT cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache cacheConfig)
{
	SIM_SIMPLE("cudaDeviceSetCacheConfig", cudaDeviceSetCacheConfig_v3020, SIM_DRV(cuCtxSetCacheConfig), {
		pthread_mutex_lock(&g_exec_mx);
		g_cache_config = cacheConfig;
		pthread_mutex_unlock(&g_exec_mx);
	});
}

SIM_EXPORT cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache *pCacheConfig)
{
	SIM_SIMPLE("cudaDeviceGetCacheConfig", cudaDeviceGetCacheConfig_v3020, SIM_DRV(cuCtxGetCacheConfig), {
		if (!pCacheConfig) {
			r_ = cudaErrorInvalidValue;
		} else {
			pthread_mutex_lock(&g_exec_mx);
			*pCacheConfig = (enum cudaFuncCache)g_cache_config;
			pthread_mutex_unlock(&g_exec_mx);
		}
	});
}

SIM_EXPORT cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
	SIM_SIMPLE("cudaDeviceSetLimit", cudaDeviceSetLimit_v3020, SIM_DRV(cuCtxSetLimit), {
		if ((int)limit < 0 || limit > cudaLimitPersistingL2CacheSize) {
			r_ = cudaErrorUnsupportedLimit;
		} else {
			pthread_mutex_lock(&g_exec_mx);
			g_limits[limit] = value;
			pthread_mutex_unlock(&g_exec_mx);
		}
	});
}

SIM_EXPORT cudaError_t cudaDeviceGetLimit(size_t *pValue, enum cudaLimit limit)
{
	SIM_SIMPLE("cudaDeviceGetLimit", cudaDeviceGetLimit_v3020, SIM_DRV(cuCtxGetLimit), {
		if (!pValue) {
			r_ = cudaErrorInvalidValue;
		} else if ((int)limit < 0 || limit > cudaLimitPersistingL2CacheSize) {
			r_ = cudaErrorUnsupportedLimit;
		} else {
			pthread_mutex_lock(&g_exec_mx);
			*pValue = g_limits[limit];
			pthread_mutex_unlock(&g_exec_mx);
		}
	});
}

/* ---- occupancy ------------------------------------------------------------------------------- */

/* Resident blocks a SM for f at this block size and dynamic shared memory. */
static int sim_exec_occupancy(int block, size_t dyn)
{
	if (block <= 0 || block > 1024 || dyn > SIM_BLOCK_SHMEM_OPTIN)
		return 0;
	int warps = (block + 31) / 32;
	int by_warps = SIM_SM_WARPS / warps;
	int regs_per_warp = ((SIM_FUNC_REGS * 32 + 255) / 256) * 256;
	int by_regs = SIM_SM_REGS / (regs_per_warp * warps);
	size_t smem = dyn + SIM_BLOCK_SHMEM_RESERVED;
	smem = (smem + 127) & ~(size_t)127;
	int by_smem = (int)(SIM_SM_SHMEM / smem);
	int n = SIM_SM_BLOCKS;
	n = by_warps < n ? by_warps : n;
	n = by_regs < n ? by_regs : n;
	n = by_smem < n ? by_smem : n;
	return n;
}

static cudaError_t sim_exec_max_active(const char *nm, CUpti_CallbackId cbid, int *num, const void *func,
				       int block, size_t dyn)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, SIM_DRV(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags));
	cudaError_t r = cudaSuccess;
	if (!num)
		r = cudaErrorInvalidValue;
	else if (!sim_register_find(func))
		r = cudaErrorInvalidDeviceFunction;
	else
		*num = sim_exec_occupancy(block, dyn);
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	return sim_call_exit(&c, r, 0);
}

SIM_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
								     size_t dynamicSMemSize)
{
	return sim_exec_max_active("cudaOccupancyMaxActiveBlocksPerMultiprocessor",
				   SIM_RT(cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6000), numBlocks, func,
				   blockSize, dynamicSMemSize);
}

SIM_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func,
									      int blockSize, size_t dynamicSMemSize,
									      unsigned int flags)
{
	(void)flags; /* cudaOccupancyDisableCachingOverride: no caches simulated */
	return sim_exec_max_active("cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
				   SIM_RT(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000), numBlocks,
				   func, blockSize, dynamicSMemSize);
}

SIM_EXPORT cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, const void *func,
								 int numBlocks, int blockSize)
{
	SIM_SIMPLE("cudaOccupancyAvailableDynamicSMemPerBlock", cudaOccupancyAvailableDynamicSMemPerBlock_v10200,
		   SIM_DRV(cuOccupancyAvailableDynamicSMemPerBlock), {
			   if (!dynamicSmemSize || numBlocks <= 0 || blockSize <= 0)
				   r_ = cudaErrorInvalidValue;
			   else if (!sim_register_find(func))
				   r_ = cudaErrorInvalidDeviceFunction;
			   else if (sim_exec_occupancy(blockSize, 0) < numBlocks)
				   *dynamicSmemSize = 0;
			   else {
				   size_t per = SIM_SM_SHMEM / (size_t)numBlocks;
				   per = (per & ~(size_t)127) - SIM_BLOCK_SHMEM_RESERVED;
				   *dynamicSmemSize = per > SIM_BLOCK_SHMEM_OPTIN ? SIM_BLOCK_SHMEM_OPTIN : per;
			   }
		   });
}

/* ---- stream priorities, flags, callbacks ----------------------------------------------------- */

int sim_exec_stream_priority(const struct sim_stream *s)
{
	int p = 0;
	pthread_mutex_lock(&g_exec_mx);
	for (struct sim_streamprio *e = g_prios; e; e = e->next)
		if (e->s == s) {
			p = e->prio;
			break;
		}
	pthread_mutex_unlock(&g_exec_mx);
	return p;
}

SIM_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
	SIM_SIMPLE("cudaDeviceGetStreamPriorityRange", cudaDeviceGetStreamPriorityRange_v5050,
		   SIM_DRV(cuCtxGetStreamPriorityRange), {
			   if (leastPriority)
				   *leastPriority = SIM_PRIO_LEAST;
			   if (greatestPriority)
				   *greatestPriority = SIM_PRIO_GREATEST;
		   });
}

SIM_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
	struct sim_call c;
	sim_call_enter(&c, "cudaStreamCreateWithPriority", SIM_RT(cudaStreamCreateWithPriority_v5050),
		       SIM_DRV(cuStreamCreateWithPriority));
	cudaError_t r = cudaSuccess;
	struct sim_streamprio *e = calloc(1, sizeof *e);
	struct sim_stream *s = NULL;
	if (!pStream || (flags & ~(unsigned)cudaStreamNonBlocking))
		r = cudaErrorInvalidValue;
	else if (!e || !(s = sim_timeline_stream_new((flags & cudaStreamNonBlocking) != 0)))
		r = cudaErrorMemoryAllocation;
	if (r == cudaSuccess) {
		/* out of range: clamped, as the runtime does */
		e->prio = priority < SIM_PRIO_GREATEST ? SIM_PRIO_GREATEST
			  : priority > SIM_PRIO_LEAST  ? SIM_PRIO_LEAST
						       : priority;
		e->s = s;
		pthread_mutex_lock(&g_exec_mx);
		e->next = g_prios;
		g_prios = e;
		pthread_mutex_unlock(&g_exec_mx);
		*pStream = (cudaStream_t)(void *)s;
	} else {
		free(e);
	}
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	return sim_call_exit(&c, r, 0);
}

static cudaError_t sim_exec_get_priority(cudaStream_t st, int *prio, int pt, const char *nm, CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, pt ? SIM_DRV(cuStreamGetPriority_ptsz) : SIM_DRV(cuStreamGetPriority));
	cudaError_t r = cudaSuccess;
	if (!prio)
		r = cudaErrorInvalidValue;
	else
		*prio = sim_exec_stream_priority(sim_timeline_stream_of(st, pt));
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	return sim_call_exit(&c, r, 0);
}

SIM_EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
	return sim_exec_get_priority(hStream, priority, 0, "cudaStreamGetPriority", SIM_RT(cudaStreamGetPriority_v5050));
}

SIM_EXPORT cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream, int *priority)
{
	return sim_exec_get_priority(hStream, priority, 1, "cudaStreamGetPriority_ptsz",
				     SIM_RT(cudaStreamGetPriority_ptsz_v7000));
}

static cudaError_t sim_exec_get_flags(cudaStream_t st, unsigned *flags, int pt, const char *nm, CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, pt ? SIM_DRV(cuStreamGetFlags_ptsz) : SIM_DRV(cuStreamGetFlags));
	cudaError_t r = cudaSuccess;
	if (!flags)
		r = cudaErrorInvalidValue;
	else
		*flags = sim_timeline_stream_of(st, pt)->nonblocking ? cudaStreamNonBlocking : cudaStreamDefault;
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	return sim_call_exit(&c, r, 0);
}

SIM_EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags)
{
	return sim_exec_get_flags(hStream, flags, 0, "cudaStreamGetFlags", SIM_RT(cudaStreamGetFlags_v5050));
}

SIM_EXPORT cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int *flags)
{
	return sim_exec_get_flags(hStream, flags, 1, "cudaStreamGetFlags_ptsz", SIM_RT(cudaStreamGetFlags_ptsz_v7000));
}

/* A stream callback is a host function that also gets its stream and status. */
struct sim_stream_cb {
	cudaStreamCallback_t cb;
	cudaStream_t stream;
	void *user;
};

static void sim_exec_callback_main(void *p)
{
	struct sim_stream_cb *k = p;
	k->cb(k->stream, cudaSuccess, k->user);
	free(k);
}

static cudaError_t sim_exec_add_callback(cudaStream_t st, cudaStreamCallback_t cb, void *user, unsigned flags,
					 const char *nm, CUpti_CallbackId cbid)
{
	/* CUDA refuses legacy callbacks in a capture (cudaLaunchHostFunc is the way) */
	int capturing = sim_graph_capturing(sim_timeline_stream_of(st, 0));
	struct sim_stream_cb *k = cb && flags == 0 && !capturing ? malloc(sizeof *k) : NULL;
	if (!k) { /* still one traced call, failing */
		struct sim_call c;
		sim_call_enter(&c, nm, cbid, SIM_DRV(cuStreamAddCallback));
		sim_timeline_spin_until(c.start + g_cfg.api_ns);
		return sim_call_exit(&c, !cb || flags     ? cudaErrorInvalidValue
					 : capturing ? cudaErrorStreamCaptureUnsupported
						     : cudaErrorMemoryAllocation,
				     0);
	}
	k->cb = cb;
	k->stream = st;
	k->user = user;
	cudaError_t r = sim_launch_host_fn(st, sim_exec_callback_main, k, (const void *)cb, nm, cbid);
	if (r != cudaSuccess)
		free(k);
	return r;
}

SIM_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
					     unsigned int flags)
{
	return sim_exec_add_callback(stream, callback, userData, flags, "cudaStreamAddCallback",
				     SIM_RT(cudaStreamAddCallback_v5000));
}

SIM_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback,
						  void *userData, unsigned int flags)
{
	return sim_exec_add_callback(stream ? stream : cudaStreamPerThread, callback, userData, flags,
				     "cudaStreamAddCallback_ptsz", SIM_RT(cudaStreamAddCallback_ptsz_v7000));
}

/* ---- stream attributes (cudaStreamSetAttribute / GetAttribute) ----------------------------- */

/* One attribute value a program set on a stream (kept, read back, no timing effect). */
struct sim_streamattr {
	const struct sim_stream *s;
	cudaStreamAttrID id;
	cudaStreamAttrValue v;
	struct sim_streamattr *next;
};
static struct sim_streamattr *g_streamattrs;

static int sim_exec_attr_known(cudaStreamAttrID id)
{
	return id == cudaStreamAttributeAccessPolicyWindow || id == cudaStreamAttributeSynchronizationPolicy ||
	       id == cudaStreamAttributePriority || id == cudaStreamAttributeMemSyncDomainMap ||
	       id == cudaStreamAttributeMemSyncDomain;
}

/* Set s's priority entry (clamped); 0 or -ENOMEM. Caller holds g_exec_mx. */
static int sim_exec_prio_set(const struct sim_stream *s, int prio)
{
	struct sim_streamprio *e = g_prios;
	while (e && e->s != s)
		e = e->next;
	if (!e) {
		if (!(e = calloc(1, sizeof *e)))
			return -1;
		e->s = s;
		e->next = g_prios;
		g_prios = e;
	}
	e->prio = prio < SIM_PRIO_GREATEST ? SIM_PRIO_GREATEST : prio > SIM_PRIO_LEAST ? SIM_PRIO_LEAST : prio;
	return 0;
}

static cudaError_t sim_exec_stream_attr(cudaStream_t st, cudaStreamAttrID id, cudaStreamAttrValue *get,
					const cudaStreamAttrValue *set, int pt, const char *nm, CUpti_CallbackId cbid,
					CUpti_CallbackId drv)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, drv);
	cudaError_t r = cudaSuccess;
	if ((!get && !set) || !sim_exec_attr_known(id)) {
		r = cudaErrorInvalidValue;
	} else {
		const struct sim_stream *s = sim_timeline_stream_of(st, pt);
		pthread_mutex_lock(&g_exec_mx);
		struct sim_streamattr *a = g_streamattrs;
		while (a && (a->s != s || a->id != id))
			a = a->next;
		if (set) {
			if (!a && (a = calloc(1, sizeof *a))) {
				a->s = s;
				a->id = id;
				a->next = g_streamattrs;
				g_streamattrs = a;
			}
			if (!a || (id == cudaStreamAttributePriority && sim_exec_prio_set(s, set->priority)))
				r = cudaErrorMemoryAllocation;
			else
				a->v = *set;
		} else {
			if (a)
				*get = a->v;
			else
				memset(get, 0, sizeof *get); /* defaults: no window, auto sync policy */
			if (id == cudaStreamAttributeSynchronizationPolicy && !a)
				get->syncPolicy = cudaSyncPolicyAuto;
		}
		pthread_mutex_unlock(&g_exec_mx);
		if (get && id == cudaStreamAttributePriority)
			get->priority = sim_exec_stream_priority(s);
	}
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	return sim_call_exit(&c, r, 0);
}

SIM_EXPORT cudaError_t cudaStreamSetAttribute(cudaStream_t hStream, cudaStreamAttrID attr,
					      const cudaStreamAttrValue *value)
{
	return sim_exec_stream_attr(hStream, attr, NULL, value, 0, "cudaStreamSetAttribute",
				    SIM_RT(cudaStreamSetAttribute_v11000), SIM_DRV(cuStreamSetAttribute));
}

SIM_EXPORT cudaError_t cudaStreamSetAttribute_ptsz(cudaStream_t hStream, cudaStreamAttrID attr,
						   const cudaStreamAttrValue *value)
{
	return sim_exec_stream_attr(hStream, attr, NULL, value, 1, "cudaStreamSetAttribute_ptsz",
				    SIM_RT(cudaStreamSetAttribute_ptsz_v11000), SIM_DRV(cuStreamSetAttribute_ptsz));
}

SIM_EXPORT cudaError_t cudaStreamGetAttribute(cudaStream_t hStream, cudaStreamAttrID attr,
					      cudaStreamAttrValue *value_out)
{
	return sim_exec_stream_attr(hStream, attr, value_out, NULL, 0, "cudaStreamGetAttribute",
				    SIM_RT(cudaStreamGetAttribute_v11000), SIM_DRV(cuStreamGetAttribute));
}

SIM_EXPORT cudaError_t cudaStreamGetAttribute_ptsz(cudaStream_t hStream, cudaStreamAttrID attr,
						   cudaStreamAttrValue *value_out)
{
	return sim_exec_stream_attr(hStream, attr, value_out, NULL, 1, "cudaStreamGetAttribute_ptsz",
				    SIM_RT(cudaStreamGetAttribute_ptsz_v11000), SIM_DRV(cuStreamGetAttribute_ptsz));
}

/* Not traced (no cbid on a GPU either: it is a pure helper). Returned by
 * value, so it cannot be a generated stub. */
SIM_EXPORT struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
							      enum cudaChannelFormatKind f)
{
	struct cudaChannelFormatDesc d = {.x = x, .y = y, .z = z, .w = w, .f = f};
	return d;
}

SIM_EXPORT cudaError_t cudaCtxResetPersistingL2Cache(void)
{
	/* no L2 simulated: nothing persists, so there is nothing to reset */
	SIM_SIMPLE("cudaCtxResetPersistingL2Cache", cudaCtxResetPersistingL2Cache_v11000,
		   SIM_DRV(cuCtxResetPersistingL2Cache), (void)0);
}
