/*
 * sim_api_host.c — host memory the device can reach: cudaHostRegister /
 * cudaHostUnregister (page-locking a range the program allocated),
 * cudaHostGetDevicePointer / cudaHostGetFlags (mapped memory),
 * cudaSetDeviceFlags / cudaGetDeviceFlags, cudaPointerGetAttributes,
 * cudaMemGetInfo, and sim_host_is_pinned, the question the copy rules ask
 * ("is this whole host range page-locked?").
 *
 * Model: device memory is host memory (sim_memory.c), and with unified
 * addressing (always on for a 64-bit process on cc 9.0) a mapped host
 * pointer's device pointer is the pointer itself. A registered range is
 * pinned for as long as it is registered; cudaMallocHost / cudaHostAlloc
 * allocations are pinned too (sim_memory.c's list).
 *
 * Threads: application threads, any number. Registered ranges are a list
 * under g_host_mx, a leaf lock (nothing else is taken while it is held; the
 * allocation list is read under g_dev.mx, never both at once). The device
 * flags are one atomic.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sim_cudart.h"

struct sim_hostreg {
	const char *p;
	size_t n;
	unsigned flags;
	struct sim_hostreg *next;
};

static pthread_mutex_t g_host_mx = PTHREAD_MUTEX_INITIALIZER;
static struct sim_hostreg *g_hostregs;
static _Atomic unsigned g_dev_flags = cudaDeviceScheduleAuto;

/* The registered range holding [p, p+n), or NULL. Caller holds g_host_mx. */
static struct sim_hostreg *sim_host_find(const void *p, size_t n)
{
	const char *c = p;
	for (struct sim_hostreg *r = g_hostregs; r; r = r->next)
		if (c >= r->p && c + n <= r->p + r->n && c + n >= c)
			return r;
	return NULL;
}

/* The cudaMallocHost/HostAlloc allocation holding [p, p+n): 1 or 0. */
static int sim_host_in_pinned_alloc(const void *p, size_t n)
{
	const char *c = p;
	int yes = 0;
	pthread_mutex_lock(&g_dev.mx);
	for (struct sim_alloc *a = g_dev.allocs; a && !yes; a = a->next)
		yes = a->pinned && c >= (const char *)a->p && c + n <= (const char *)a->p + a->n;
	pthread_mutex_unlock(&g_dev.mx);
	return yes;
}

int sim_host_is_pinned(const void *p, size_t n)
{
	if (!p)
		return 0;
	pthread_mutex_lock(&g_host_mx);
	int yes = sim_host_find(p, n ? n : 1) != NULL;
	pthread_mutex_unlock(&g_host_mx);
	return yes || sim_host_in_pinned_alloc(p, n ? n : 1);
}

SIM_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
	SIM_SIMPLE("cudaHostRegister", cudaHostRegister_v4000, SIM_DRV(cuMemHostRegister_v2), {
		const unsigned known = cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory |
				       cudaHostRegisterReadOnly;
		struct sim_hostreg *r = NULL;
		if (!ptr || !size || (flags & ~known)) {
			r_ = cudaErrorInvalidValue;
		} else if (!(r = malloc(sizeof *r))) {
			r_ = cudaErrorMemoryAllocation;
		} else {
			r->p = ptr;
			r->n = size;
			r->flags = flags;
			pthread_mutex_lock(&g_host_mx);
			int overlap = 0;
			for (struct sim_hostreg *o = g_hostregs; o && !overlap; o = o->next)
				overlap = r->p < o->p + o->n && o->p < r->p + r->n;
			if (!overlap) {
				r->next = g_hostregs;
				g_hostregs = r;
			}
			pthread_mutex_unlock(&g_host_mx);
			if (overlap) {
				free(r);
				r_ = cudaErrorHostMemoryAlreadyRegistered;
			}
		}
	});
}

SIM_EXPORT cudaError_t cudaHostUnregister(void *ptr)
{
	SIM_SIMPLE("cudaHostUnregister", cudaHostUnregister_v4000, SIM_DRV(cuMemHostUnregister), {
		struct sim_hostreg *found = NULL;
		pthread_mutex_lock(&g_host_mx);
		for (struct sim_hostreg **pp = &g_hostregs; *pp; pp = &(*pp)->next) {
			if ((*pp)->p == (const char *)ptr) {
				found = *pp;
				*pp = found->next;
				break;
			}
		}
		pthread_mutex_unlock(&g_host_mx);
		if (found)
			free(found);
		else
			r_ = cudaErrorHostMemoryNotRegistered;
	});
}

SIM_EXPORT cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
	SIM_SIMPLE("cudaHostGetDevicePointer", cudaHostGetDevicePointer_v3020, SIM_DRV(cuMemHostGetDevicePointer_v2), {
		if (!pDevice || flags != 0)
			r_ = cudaErrorInvalidValue;
		else if (!sim_host_is_pinned(pHost, 1))
			r_ = cudaErrorInvalidValue; /* not page-locked: no device view */
		else
			*pDevice = pHost;
	});
}

SIM_EXPORT cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
	SIM_SIMPLE("cudaHostGetFlags", cudaHostGetFlags_v3020, SIM_DRV(cuMemHostGetFlags), {
		pthread_mutex_lock(&g_host_mx);
		struct sim_hostreg *r = pHost ? sim_host_find(pHost, 1) : NULL;
		unsigned f = r ? r->flags : 0;
		pthread_mutex_unlock(&g_host_mx);
		if (!pFlags || !pHost)
			r_ = cudaErrorInvalidValue;
		else if (r || sim_host_in_pinned_alloc(pHost, 1))
			*pFlags = f | cudaHostAllocMapped; /* unified addressing: always mapped */
		else
			r_ = cudaErrorInvalidValue;
	});
}

SIM_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
	SIM_SIMPLE("cudaSetDeviceFlags", cudaSetDeviceFlags_v3020, SIM_DRV(cuDevicePrimaryCtxSetFlags_v2), {
		const unsigned known = cudaDeviceScheduleMask | cudaDeviceMapHost | cudaDeviceLmemResizeToMax |
				       cudaDeviceSyncMemops;
		unsigned sched = flags & cudaDeviceScheduleMask;
		if ((flags & ~known) || (sched != cudaDeviceScheduleAuto && sched != cudaDeviceScheduleSpin &&
					 sched != cudaDeviceScheduleYield && sched != cudaDeviceScheduleBlockingSync))
			r_ = cudaErrorInvalidValue;
		else
			atomic_store_explicit(&g_dev_flags, flags, memory_order_relaxed);
	});
}

SIM_EXPORT cudaError_t cudaGetDeviceFlags(unsigned int *flags)
{
	SIM_SIMPLE("cudaGetDeviceFlags", cudaGetDeviceFlags_v7000, SIM_DRV(cuCtxGetFlags), {
		if (!flags)
			r_ = cudaErrorInvalidValue;
		else /* mapping host memory is always on with unified addressing */
			*flags = atomic_load_explicit(&g_dev_flags, memory_order_relaxed) | cudaDeviceMapHost;
	});
}

SIM_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
	SIM_SIMPLE("cudaPointerGetAttributes", cudaPointerGetAttributes_v4000, SIM_DRV(cuPointerGetAttributes), {
		if (!attributes) {
			r_ = cudaErrorInvalidValue;
		} else {
			memset(attributes, 0, sizeof *attributes);
			uint8_t k = sim_memory_kind(ptr);
			attributes->type = k == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE   ? cudaMemoryTypeDevice
					   : k == CUPTI_ACTIVITY_MEMORY_KIND_PINNED ? cudaMemoryTypeHost
										    : cudaMemoryTypeUnregistered;
			attributes->device = 0;
			if (attributes->type != cudaMemoryTypeUnregistered) {
				attributes->devicePointer = (void *)ptr;
				attributes->hostPointer = (void *)ptr;
			}
		}
	});
}

SIM_EXPORT cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total)
{
	SIM_SIMPLE("cudaMemGetInfo", cudaMemGetInfo_v3020, SIM_DRV(cuMemGetInfo_v2), {
		if (!free_b || !total) {
			r_ = cudaErrorInvalidValue;
		} else {
			size_t used = 0;
			pthread_mutex_lock(&g_dev.mx);
			for (struct sim_alloc *a = g_dev.allocs; a; a = a->next)
				used += a->pinned ? 0 : a->n;
			pthread_mutex_unlock(&g_dev.mx);
			*total = sim_attributes_global_mem();
			*free_b = used < *total ? *total - used : 0;
		}
	});
}
