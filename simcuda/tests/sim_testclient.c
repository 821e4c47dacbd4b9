/*
 * sim_testclient.c — a small CUPTI client used by test_simcuda_e2e: loaded
 * into an nvcc-built example both as CUDA_INJECTION64_PATH (simcuda calls
 * InitializeInjection at driver start) and as LD_PRELOAD (it wraps
 * __cudaLaunchKernel to push an external correlation id around each launch,
 * as the gpuphase hooks do).
 *
 * InitializeInjection (app thread, inside the first runtime call): subscribe,
 * register a CLOCK_MONOTONIC_RAW timestamp callback, enable kinds, register
 * buffers, arrange an atexit forced flush. Records are written as text lines
 * to $SIMTEST_OUT at exit (format: see dump_record). Buffer callbacks run on
 * CUPTI's thread; the output array is guarded by a mutex.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <cupti.h>

static pthread_mutex_t g_mx = PTHREAD_MUTEX_INITIALIZER;
static char *g_text;
static size_t g_len, g_cap;
static int g_init_calls, g_ctx_created;
static _Atomic uint64_t g_ext_id; /* next external id; relaxed, uniqueness only */

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	pthread_mutex_lock(&g_mx);
	if (g_len + (size_t)n + 1 > g_cap) {
		size_t nc = (g_cap + (size_t)n + 1) * 2;
		char *t = realloc(g_text, nc);
		if (t) {
			g_text = t;
			g_cap = nc;
		}
	}
	if (g_len + (size_t)n + 1 <= g_cap) {
		memcpy(g_text + g_len, line, (size_t)n + 1);
		g_len += (size_t)n;
	}
	pthread_mutex_unlock(&g_mx);
}

static uint64_t CUPTIAPI mono_raw(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void CUPTIAPI req(uint8_t **b, size_t *size, size_t *maxrec)
{
	*size = 1 << 16;
	*b = aligned_alloc(8, *size);
	*maxrec = 0;
}

static void CUPTIAPI done(CUcontext ctx, uint32_t sid, uint8_t *b, size_t size, size_t valid)
{
	(void)ctx, (void)sid, (void)size;
	CUpti_Activity *r = NULL;
	while (cuptiActivityGetNextRecord(b, valid, &r) == CUPTI_SUCCESS) {
		switch (r->kind) {
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
			CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)r;
			out("K %s %u %llu %llu %u\n", k->name, k->correlationId, (unsigned long long)k->start,
			    (unsigned long long)k->end, k->streamId);
			break;
		}
		case CUPTI_ACTIVITY_KIND_MEMCPY: {
			CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)r;
			out("M %u %u %u %llu %llu %llu %u\n", m->copyKind, m->correlationId,
			    m->runtimeCorrelationId, (unsigned long long)m->start, (unsigned long long)m->end,
			    (unsigned long long)m->bytes, m->flags);
			break;
		}
		case CUPTI_ACTIVITY_KIND_RUNTIME:
		case CUPTI_ACTIVITY_KIND_DRIVER: {
			CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)r;
			out("%c %u %u %llu %llu %u\n", r->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? 'R' : 'D', a->cbid,
			    a->correlationId, (unsigned long long)a->start, (unsigned long long)a->end,
			    a->threadId);
			break;
		}
		case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
			CUpti_ActivitySynchronization2 *y = (CUpti_ActivitySynchronization2 *)r;
			out("Y %u %u %llu %llu\n", (unsigned)y->type, y->correlationId, (unsigned long long)y->start,
			    (unsigned long long)y->end);
			break;
		}
		case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
			CUpti_ActivityExternalCorrelation *x = (CUpti_ActivityExternalCorrelation *)r;
			out("X %u %llu %u\n", (unsigned)x->externalKind, (unsigned long long)x->externalId,
			    x->correlationId);
			break;
		}
		default:
			out("? %u\n", (unsigned)r->kind);
			break;
		}
	}
	size_t dropped = 0;
	cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped);
	if (dropped)
		out("DROPPED %zu\n", dropped);
	free(b);
}

static void CUPTIAPI on_cb(void *u, CUpti_CallbackDomain d, CUpti_CallbackId cbid, const void *data)
{
	(void)u, (void)data;
	if (d == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
		g_ctx_created++;
}

static void at_exit(void)
{
	cudaDeviceSynchronize();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	const char *p = getenv("SIMTEST_OUT");
	FILE *f = p ? fopen(p, "w") : NULL;
	if (!f)
		return;
	fprintf(f, "INIT %d CTX %d\n", g_init_calls, g_ctx_created);
	pthread_mutex_lock(&g_mx);
	if (g_text)
		fputs(g_text, f);
	pthread_mutex_unlock(&g_mx);
	fclose(f);
}

__attribute__((visibility("default"))) int InitializeInjection(void);
int InitializeInjection(void)
{
	static CUpti_SubscriberHandle sub;
	g_init_calls++;
	if (cuptiSubscribe(&sub, on_cb, NULL) == CUPTI_SUCCESS)
		cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RESOURCE);
	cuptiActivityRegisterTimestampCallback(mono_raw);
	CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
				      CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
				      CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
				      CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		cuptiActivityEnable(kinds[i]);
	cuptiActivityRegisterCallbacks(req, done);
	/* a CUDA call from inside InitializeInjection must not deadlock */
	int n = 0;
	cudaGetDeviceCount(&n);
	atexit(at_exit);
	return 1;
}

/* The preload hook: push an external id around every <<<>>> launch. */
typedef cudaError_t (*launch_fn)(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
__attribute__((visibility("default"))) cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b,
								      void **args, size_t shm, cudaStream_t s);
cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t shm, cudaStream_t s)
{
	static launch_fn real;
	if (!real)
		real = (launch_fn)dlsym(RTLD_NEXT, "__cudaLaunchKernel");
	uint64_t id = atomic_fetch_add_explicit(&g_ext_id, 1, memory_order_relaxed) + 1000;
	cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, id);
	cudaError_t r = real(k, g, b, args, shm, s);
	cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, NULL);
	return r;
}
