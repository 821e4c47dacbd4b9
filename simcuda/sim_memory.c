/*
 * sim_memory.c — allocations: cudaMalloc / cudaMallocHost / cudaHostAlloc /
 * cudaFree / cudaFreeHost, cudaGetSymbolAddress, and the memory kind of an
 * address (DEVICE, PINNED or PAGEABLE) that copies report.
 *
 * "Device" and pinned memory are host memory (aligned_alloc, zeroed), kept
 * on a list so an address can be classified; a registered __device__
 * variable's host shadow counts as device memory; a range registered with
 * cudaHostRegister counts as pinned (sim_host_is_pinned, sim_api_host.c).
 *
 * Implicit synchronization (`implicit_sync`, docs/simcuda.md "Real-CUDA
 * behaviours"): cudaFree and cudaFreeHost of a non-NULL pointer, cudaMallocHost
 * and cudaHostAlloc first wait for all work on the current device
 * (sim_timeline_implicit_sync), as the real runtime does.
 *
 * Threads: application threads, any number; the list is under g_dev.mx.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_cudart.h"

static int sim_alloc_add(void *p, size_t n, int pinned)
{
	struct sim_alloc *a = malloc(sizeof *a);
	if (!a)
		return -ENOMEM;
	a->p = p;
	a->n = n;
	a->pinned = pinned;
	pthread_mutex_lock(&g_dev.mx);
	a->next = g_dev.allocs;
	g_dev.allocs = a;
	pthread_mutex_unlock(&g_dev.mx);
	return 0;
}

/* Remove p (must be of the given type); 0 or -ENOENT. */
static int sim_alloc_del(void *p, int pinned)
{
	pthread_mutex_lock(&g_dev.mx);
	for (struct sim_alloc **pp = &g_dev.allocs; *pp; pp = &(*pp)->next) {
		if ((*pp)->p == p && (*pp)->pinned == pinned) {
			struct sim_alloc *a = *pp;
			*pp = a->next;
			pthread_mutex_unlock(&g_dev.mx);
			free(a);
			return 0;
		}
	}
	pthread_mutex_unlock(&g_dev.mx);
	return -ENOENT;
}

/* CUPTI memory kind of an address: DEVICE, PINNED or PAGEABLE. */
uint8_t sim_memory_kind(const void *p)
{
	uint8_t k = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	pthread_mutex_lock(&g_dev.mx);
	for (struct sim_alloc *a = g_dev.allocs; a; a = a->next) {
		if ((const char *)p >= (const char *)a->p && (const char *)p < (const char *)a->p + a->n) {
			k = a->pinned ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
			break;
		}
	}
	if (k == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE) {
		for (struct sim_var *v = g_dev.vars; v; v = v->next)
			if ((const char *)p >= (const char *)v->host_var &&
			    (const char *)p < (const char *)v->host_var + v->size)
				k = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	}
	pthread_mutex_unlock(&g_dev.mx);
	if (k == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE && sim_host_is_pinned(p, 1))
		k = CUPTI_ACTIVITY_MEMORY_KIND_PINNED; /* cudaHostRegister (sim_api_host.c) */
	return k;
}

static cudaError_t sim_alloc(void **p, size_t n, int pinned)
{
	if (!p)
		return cudaErrorInvalidValue;
	void *m = aligned_alloc(256, n ? (n + 255) & ~(size_t)255 : 256);
	if (!m)
		return cudaErrorMemoryAllocation;
	memset(m, 0, n);
	if (sim_alloc_add(m, n, pinned) < 0) {
		free(m);
		return cudaErrorMemoryAllocation;
	}
	*p = m;
	return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	SIM_SIMPLE("cudaMalloc", cudaMalloc_v3020, SIM_DRV(cuMemAlloc_v2), r_ = sim_alloc(devPtr, size, 0));
}

/* A page-locked allocation: wait for the device (implicit sync), then
 * allocate; the host cost is spent after the wait. */
static cudaError_t sim_host_alloc(void **p, size_t n, const char *nm, CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, SIM_DRV(cuMemHostAlloc));
	uint64_t t = sim_timeline_implicit_sync(&c, sim_timeline_device(), "host_alloc");
	cudaError_t r = sim_alloc(p, n, 1);
	sim_timeline_spin_until(t + g_cfg.api_ns);
	return sim_call_exit(&c, r, 0);
}

SIM_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	return sim_host_alloc(ptr, size, "cudaMallocHost", SIM_RT(cudaMallocHost_v3020));
}

SIM_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	(void)flags;
	return sim_host_alloc(pHost, size, "cudaHostAlloc", SIM_RT(cudaHostAlloc_v3020));
}

/* cudaFree / cudaFreeHost: a non-NULL pointer waits for the device first
 * (implicit sync, truth kind `kind`); a NULL one is a no-op. */
static cudaError_t sim_free(void *p, int pinned, const char *nm, CUpti_CallbackId cbid,
			    CUpti_CallbackId drv, const char *kind)
{
	struct sim_call c;
	sim_call_enter(&c, nm, cbid, drv);
	cudaError_t r = cudaSuccess;
	uint64_t t = c.start;
	if (p) {
		t = sim_timeline_implicit_sync(&c, sim_timeline_device(), kind);
		if (sim_alloc_del(p, pinned) == 0)
			free(p);
		else
			r = cudaErrorInvalidValue;
	}
	sim_timeline_spin_until(t + g_cfg.api_ns);
	return sim_call_exit(&c, r, 0);
}

SIM_EXPORT cudaError_t cudaFree(void *devPtr)
{
	return sim_free(devPtr, 0, "cudaFree", SIM_RT(cudaFree_v3020), SIM_DRV(cuMemFree_v2), "free");
}

SIM_EXPORT cudaError_t cudaFreeHost(void *ptr)
{
	return sim_free(ptr, 1, "cudaFreeHost", SIM_RT(cudaFreeHost_v3020), SIM_DRV(cuMemFreeHost),
			"free_host");
}

SIM_EXPORT cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
	SIM_SIMPLE("cudaGetSymbolAddress", cudaGetSymbolAddress_v3020, 0, {
		char *p = sim_register_symbol(symbol, 0, 0);
		if (!devPtr || !p)
			r_ = cudaErrorInvalidSymbol;
		else
			*devPtr = p;
	});
}
