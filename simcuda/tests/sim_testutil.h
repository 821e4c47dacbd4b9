/*
 * sim_testutil.h — helpers for the simcuda Criterion suites: an in-process
 * CUPTI client that copies every delivered record into an array, a fake
 * kernel registration (what nvcc's constructors do), and truth loading.
 *
 * Used by test_simcuda_api.c only, from the test's own thread; the buffer
 * completion callback runs on simcuda's CUPTI thread, so the record array is
 * guarded by a mutex. Each Criterion test runs in its own process, so the
 * static state here starts fresh for each test.
 */
#ifndef SIM_TESTUTIL_H
#define SIM_TESTUTIL_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/common/tcrit.h" /* Criterion, or its stand-in under TSan */
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "simcuda/sim_truth_reader.h"

/* nvcc's registration entry points (declared by crt/host_runtime.h in C++). */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaUnregisterFatBinary(void **h);
void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun, const char *deviceName,
			    int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);
/* Per-thread-default-stream twins (declared by the header only under
 * CUDA_API_PER_THREAD_DEFAULT_STREAM, which renames the plain ones). */
cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 g, dim3 b, void **args, size_t shm, cudaStream_t s);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s);

/* One delivered record, copied out of the client buffer. */
struct tu_rec {
	CUpti_ActivityKind kind;
	union {
		CUpti_ActivityKernel10 k;
		CUpti_ActivityMemcpy6 m;
		CUpti_ActivityMemset4 s;
		CUpti_ActivityAPI a;
		CUpti_ActivitySynchronization2 y;
		CUpti_ActivityExternalCorrelation x;
	} u;
};

static struct {
	pthread_mutex_t mx;
	struct tu_rec *v;
	size_t n, cap;
	size_t buf_size;       /* size handed out by the request callback */
	pthread_t deliver_tid; /* thread of the last completion callback */
	int completions;
} tu = {.mx = PTHREAD_MUTEX_INITIALIZER, .buf_size = 1 << 16};

static void CUPTIAPI tu_request(uint8_t **buffer, size_t *size, size_t *maxrec)
{
	*buffer = aligned_alloc(8, tu.buf_size);
	*size = tu.buf_size;
	*maxrec = 0;
}

static void CUPTIAPI tu_complete(CUcontext ctx, uint32_t sid, uint8_t *buf, size_t size, size_t valid)
{
	(void)ctx, (void)sid, (void)size;
	CUpti_Activity *r = NULL;
	pthread_mutex_lock(&tu.mx);
	tu.deliver_tid = pthread_self();
	tu.completions++;
	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
		if (tu.n == tu.cap) {
			tu.cap = tu.cap ? tu.cap * 2 : 256;
			tu.v = realloc(tu.v, tu.cap * sizeof *tu.v);
		}
		struct tu_rec *o = &tu.v[tu.n++];
		memset(o, 0, sizeof *o);
		o->kind = r->kind;
		size_t sz = 0;
		switch (r->kind) {
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		case CUPTI_ACTIVITY_KIND_KERNEL: sz = sizeof o->u.k; break;
		case CUPTI_ACTIVITY_KIND_MEMCPY: sz = sizeof o->u.m; break;
		case CUPTI_ACTIVITY_KIND_MEMSET: sz = sizeof o->u.s; break;
		case CUPTI_ACTIVITY_KIND_RUNTIME:
		case CUPTI_ACTIVITY_KIND_DRIVER: sz = sizeof o->u.a; break;
		case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: sz = sizeof o->u.y; break;
		case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: sz = sizeof o->u.x; break;
		default: break;
		}
		memcpy(&o->u, r, sz);
	}
	pthread_mutex_unlock(&tu.mx);
	free(buf);
}

/* Register buffers and enable the kinds gpuphase uses. */
static inline void tu_cupti_start(int with_driver)
{
	cr_assert_eq(cuptiActivityRegisterCallbacks(tu_request, tu_complete), CUPTI_SUCCESS);
	CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
				      CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
				      CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
				      CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		cr_assert_eq(cuptiActivityEnable(kinds[i]), CUPTI_SUCCESS);
	if (with_driver)
		cr_assert_eq(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), CUPTI_SUCCESS);
}

static inline void tu_flush(void)
{
	cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
	cr_assert_eq(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
}

/* Records of kind k (CONCURRENT_KERNEL etc.), in delivery order. */
static inline size_t tu_count(CUpti_ActivityKind k)
{
	size_t c = 0;
	for (size_t i = 0; i < tu.n; i++)
		c += tu.v[i].kind == k;
	return c;
}

static inline const struct tu_rec *tu_find(CUpti_ActivityKind k, uint32_t corr)
{
	for (size_t i = 0; i < tu.n; i++) {
		const struct tu_rec *r = &tu.v[i];
		if (r->kind != k)
			continue;
		uint32_t c = 0;
		switch (k) {
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: c = r->u.k.correlationId; break;
		case CUPTI_ACTIVITY_KIND_MEMCPY: c = r->u.m.correlationId; break;
		case CUPTI_ACTIVITY_KIND_MEMSET: c = r->u.s.correlationId; break;
		case CUPTI_ACTIVITY_KIND_RUNTIME:
		case CUPTI_ACTIVITY_KIND_DRIVER: c = r->u.a.correlationId; break;
		case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: c = r->u.y.correlationId; break;
		case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: c = r->u.x.correlationId; break;
		default: break;
		}
		if (c == corr)
			return r;
	}
	return NULL;
}

/* A fake kernel: what nvcc's module constructor registers. */
static char tu_stub_mm, tu_stub_other;
/* kept (volatile: a store the compiler may not drop, so LeakSanitizer sees
 * it): the module stays registered for the process */
static void **volatile tu_fatbin;
static inline void tu_register_kernels(void)
{
	void **h = tu_fatbin = __cudaRegisterFatBinary(NULL);
	__cudaRegisterFunction(h, &tu_stub_mm, NULL, "_Z7aten_mmPfi", -1, NULL, NULL, NULL, NULL, NULL);
	__cudaRegisterFunction(h, &tu_stub_other, NULL, "_Z5otherv", -1, NULL, NULL, NULL, NULL, NULL);
}

static inline cudaError_t tu_launch(const void *stub, cudaStream_t s)
{
	float *p = NULL;
	int n = 1;
	void *args[] = {&p, &n};
	dim3 g = {1, 1, 1}, b = {32, 1, 1};
	return cudaLaunchKernel(stub, g, b, args, 0, s);
}

/* Truth file for this test process: SIMCUDA_TRUTH must be set before the
 * first CUDA call. */
static char tu_truth_path[256];
static inline void tu_truth_begin(void)
{
	snprintf(tu_truth_path, sizeof tu_truth_path, "/tmp/simcuda-test-%d.jsonl", (int)getpid());
	setenv("SIMCUDA_TRUTH", tu_truth_path, 1);
}

/* Flush simcuda's truth (cudaDeviceReset flushes it) and load it. */
static inline struct sim_ev *tu_truth_load(size_t *n)
{
	struct sim_ev *ev = NULL;
	cr_assert_eq(cudaDeviceReset(), cudaSuccess);
	cr_assert_eq(sim_truth_load(tu_truth_path, &ev, n), 0, "cannot load %s", tu_truth_path);
	unlink(tu_truth_path);
	return ev;
}

static inline uint64_t tu_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
