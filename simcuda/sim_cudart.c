/*
 * sim_cudart.c — simulated libcudart.so.13: the CUDA runtime entry points an
 * nvcc-13 program (and the gpuphase hooks) use, driving a simulated device
 * timeline and reporting it through the simulated CUPTI (sim_cupti.c) and the
 * ground-truth file (SIMCUDA_TRUTH). docs/simcuda.md is the user's manual.
 *
 * Who calls it: application threads (any number), plus the registration
 * calls nvcc emits into static constructors before main().
 *
 * Model: one device, one primary context. "Device" memory is host memory, so
 * copies and sets move real bytes at call time; a kernel runs its host body
 * `simcuda_kernel_<plain name>` (looked up in the process with dlsym) at
 * launch time when one exists, and otherwise changes nothing. Times: every op
 * gets start = max(API return + launch_latency_ns, end of what it must follow
 * on the timeline) and end = start + its cost; waits really wait on CUPTI's
 * clock (simcupti_now()).
 *
 * Locks: g_dev.mx guards the timeline (streams, events, registry of
 * allocations); it is never held while waiting, spinning or calling out to
 * CUPTI or the client. g_truth.mx guards the truth FILE. g_mem_mx is the
 * device's memory: every op that moves bytes in device memory at call time
 * (a copy, a set, a kernel's host body, also at graph launch) does so under
 * it, whole, so ops issued by several host threads at once are applied one
 * after another as the device would run them, never interleaved byte by byte
 * (a data race the real program does not have: its host threads never touch
 * device memory). It is a leaf lock: nothing else is taken while it is held.
 * Invariant: a stream's tail_end only grows (except by a clock rebase, which
 * shifts every stored time by the same delta).
 */
#include <ctype.h>
#include <stdarg.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <cupti.h>

#include "sim_config.h"
#include "sim_internal.h"

#define SIM_EXPORT __attribute__((visibility("default")))
#define SIM_LEGACY_STREAM_ID 7u
#define SIM_INVALID 0xffffffffu

/* ---- state ---------------------------------------------------------------------- */

struct sim_stream {
	uint32_t id;
	int legacy, nonblocking, destroyed;
	uint64_t tail_end;  /* end of the last op on this stream */
	uint32_t tail_corr; /* its correlation id (the CUPTI record's) */
	struct sim_graph *capture; /* graph being captured (sim_graph.c), under g_dev.mx */
	struct sim_stream *next;
};

struct sim_event {
	uint32_t id;
	unsigned flags;
	int recorded;
	uint64_t ts;   /* when the work before it finished */
	uint32_t corr; /* the op that finished last before it */
};

typedef void (*sim_body_fn)(dim3 grid, dim3 block, void **args);

struct sim_func {
	const void *host_fun;
	char *mangled, *plain;
	int resolved; /* body + rule looked up (under g_dev.mx) */
	sim_body_fn body;
	const struct sim_kernel_rule *rule;
	struct sim_func *next;
};

struct sim_alloc {
	void *p;
	size_t n;
	int pinned; /* 1 = cudaMallocHost/HostAlloc, 0 = device */
	struct sim_alloc *next;
};

struct sim_var {
	const void *host_var;
	size_t size;
	struct sim_var *next;
};

static struct {
	pthread_mutex_t mx;
	struct sim_stream legacy;
	struct sim_stream *streams; /* all non-legacy streams, incl. per-thread */
	struct sim_func *funcs;
	struct sim_alloc *allocs;
	struct sim_var *vars;
	uint32_t next_stream_id, next_event_id;
	int64_t grid_id;
} g_dev = {
	.mx = PTHREAD_MUTEX_INITIALIZER,
	.legacy = {.id = SIM_LEGACY_STREAM_ID, .legacy = 1},
	.next_stream_id = 13,
	.next_event_id = 1,
};

static struct sim_config g_cfg;
/* The device's memory (see "Locks" above); leaf lock. */
static pthread_mutex_t g_mem_mx = PTHREAD_MUTEX_INITIALIZER;
/* The primary context exists: set at driver start, cleared at exit. Relaxed:
 * only the exit handler and cudaDeviceReset read it. */
static _Atomic int g_ctx_alive;
static struct {
	pthread_mutex_t mx;
	FILE *f;
} g_truth = {.mx = PTHREAD_MUTEX_INITIALIZER};

/* Driver start: g_init_state 0 = not started, 1 = starting, 2 = done; it is
 * set under g_init_mx; the starting thread (t_initializing) passes through so
 * InitializeInjection may call back into the runtime. Acquire load pairs
 * with the release store at the end of sim_driver_start. */
static pthread_mutex_t g_init_mx = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_init_state = 0;
static __thread int t_initializing = 0;

static __thread cudaError_t t_last_error = cudaSuccess;
static __thread struct sim_stream *t_ptds; /* this thread's per-thread stream */
static __thread struct {
	dim3 grid, block;
	size_t shmem;
	cudaStream_t stream;
} t_cfg[16];
static __thread int t_ncfg;

static void sim_driver_start(void);

/* ---- time ------------------------------------------------------------------------ */

/* Busy-wait until CUPTI's clock reaches t (host cost really spent). */
static void sim_spin_until(uint64_t t)
{
	while (simcupti_now() < t)
		;
}

/* Block until CUPTI's clock reaches t: sleep most of it, spin the end. */
static void sim_wait_until(uint64_t t)
{
	for (;;) {
		uint64_t now = simcupti_now();
		if (now >= t)
			return;
		uint64_t rem = t - now;
		if (rem > 300000) {
			uint64_t s = rem - 200000;
			struct timespec ts = {.tv_sec = (time_t)(s / 1000000000ull),
					      .tv_nsec = (long)(s % 1000000000ull)};
			nanosleep(&ts, NULL);
		}
	}
}

static uint64_t sim_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static void sim_rebase(int64_t delta)
{
	pthread_mutex_lock(&g_dev.mx);
	if (g_dev.legacy.tail_end)
		g_dev.legacy.tail_end += (uint64_t)delta;
	for (struct sim_stream *s = g_dev.streams; s; s = s->next)
		if (s->tail_end)
			s->tail_end += (uint64_t)delta;
	pthread_mutex_unlock(&g_dev.mx);
}

/* ---- truth file -------------------------------------------------------------------- */

static void sim_truth(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sim_truth(const char *fmt, ...)
{
	if (!g_truth.f)
		return;
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&g_truth.mx);
	vfprintf(g_truth.f, fmt, ap);
	pthread_mutex_unlock(&g_truth.mx);
	va_end(ap);
}

static void sim_truth_flush(void)
{
	pthread_mutex_lock(&g_truth.mx);
	if (g_truth.f)
		fflush(g_truth.f);
	pthread_mutex_unlock(&g_truth.mx);
}

/* ---- streams ------------------------------------------------------------------------ */

static struct sim_stream *sim_stream_new(int nonblocking)
{
	struct sim_stream *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->nonblocking = nonblocking;
	pthread_mutex_lock(&g_dev.mx);
	s->id = g_dev.next_stream_id++;
	s->next = g_dev.streams;
	g_dev.streams = s;
	pthread_mutex_unlock(&g_dev.mx);
	return s;
}

/* The stream an API call means. per_thread: the call is a _ptsz/_ptds twin. */
static struct sim_stream *sim_stream_of(cudaStream_t st, int per_thread)
{
	if (st == cudaStreamLegacy || (st == NULL && !per_thread))
		return &g_dev.legacy;
	if (st == cudaStreamPerThread || st == NULL) {
		if (!t_ptds)
			t_ptds = sim_stream_new(0);
		return t_ptds ? t_ptds : &g_dev.legacy;
	}
	return (struct sim_stream *)(void *)st;
}

/*
 * Earliest time work enqueued now on s may start because of ordering, and the
 * op that determines it: s's own tail; for the legacy stream also every
 * blocking stream's tail; for a blocking stream also the legacy tail.
 * Caller holds g_dev.mx.
 */
static uint64_t sim_deps(const struct sim_stream *s, uint32_t *corr)
{
	uint64_t t = s->tail_end;
	uint32_t c = s->tail_corr;
	if (s->legacy) {
		for (struct sim_stream *b = g_dev.streams; b; b = b->next) {
			if (!b->nonblocking && b->tail_end > t) {
				t = b->tail_end;
				c = b->tail_corr;
			}
		}
	} else if (!s->nonblocking && g_dev.legacy.tail_end > t) {
		t = g_dev.legacy.tail_end;
		c = g_dev.legacy.tail_corr;
	}
	*corr = c;
	return t;
}

/* Latest end over every stream (device scope). Caller holds g_dev.mx. */
static uint64_t sim_device_tail(uint32_t *corr)
{
	uint64_t t = g_dev.legacy.tail_end;
	uint32_t c = g_dev.legacy.tail_corr;
	for (struct sim_stream *b = g_dev.streams; b; b = b->next) {
		if (b->tail_end > t) {
			t = b->tail_end;
			c = b->tail_corr;
		}
	}
	*corr = c;
	return t;
}

/*
 * Place an op of duration dur on s, not before `earliest`. Returns its start;
 * *end gets its end. Caller holds g_dev.mx.
 */
static uint64_t sim_schedule(struct sim_stream *s, uint64_t earliest, uint64_t dur, uint32_t corr,
			     uint64_t *end)
{
	uint32_t dc;
	uint64_t start = sim_max(earliest, sim_deps(s, &dc));
	*end = start + dur;
	s->tail_end = *end;
	s->tail_corr = corr;
	return start;
}

/* ---- allocations -------------------------------------------------------------------- */

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
static uint8_t sim_mem_kind(const void *p)
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
	return k;
}

/* ---- API call frame --------------------------------------------------------------- */

struct sim_call {
	const char *name;          /* runtime function name (truth, callbacks)   */
	CUpti_CallbackId cbid;     /* runtime cbid                                */
	CUpti_CallbackId drv_cbid; /* the driver call inside, 0 = none            */
	uint32_t corr, drv_corr;
	uint64_t start, drv_start;
	const char *symbol; /* kernel name for launches */
	uint64_t corr_data;
};

static void sim_api_callback(struct sim_call *c, CUpti_ApiCallbackSite site, CUpti_CallbackDomain dom,
			     cudaError_t *ret)
{
	CUpti_CallbackId cbid = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? c->cbid : c->drv_cbid;
	if (!simcupti_callback_enabled(dom, cbid))
		return;
	const char *fname = c->name;
	if (dom == CUPTI_CB_DOMAIN_DRIVER_API &&
	    cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &fname) != CUPTI_SUCCESS)
		fname = "cu?";
	CUpti_CallbackData d;
	memset(&d, 0, sizeof d);
	d.callbackSite = site;
	d.functionName = fname;
	d.functionParams = NULL; /* not simulated: see docs/simcuda.md */
	d.functionReturnValue = ret;
	d.symbolName = c->symbol;
	d.context = simcupti_context();
	d.contextUid = SIM_CONTEXT_ID;
	d.correlationData = &c->corr_data;
	d.correlationId = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? c->corr : c->drv_corr;
	simcupti_callback(dom, cbid, &d);
}

/* Enter a runtime call: driver start, correlation ids, enter callbacks.
 * symbol: the kernel name for launches (callback data), else NULL. */
static void sim_enter_sym(struct sim_call *c, const char *name, CUpti_CallbackId cbid,
			  CUpti_CallbackId drv_cbid, const char *symbol)
{
	if (atomic_load_explicit(&g_init_state, memory_order_acquire) != 2 && !t_initializing)
		sim_driver_start();
	memset(c, 0, sizeof *c);
	c->name = name;
	c->cbid = cbid;
	c->drv_cbid = drv_cbid;
	c->symbol = symbol;
	c->corr = simcupti_next_corr();
	sim_api_callback(c, CUPTI_API_ENTER, CUPTI_CB_DOMAIN_RUNTIME_API, NULL);
	c->start = simcupti_now();
	if (drv_cbid) {
		c->drv_corr = simcupti_next_corr();
		sim_api_callback(c, CUPTI_API_ENTER, CUPTI_CB_DOMAIN_DRIVER_API, NULL);
		c->drv_start = simcupti_now();
	}
}

static void sim_enter(struct sim_call *c, const char *name, CUpti_CallbackId cbid,
		      CUpti_CallbackId drv_cbid)
{
	sim_enter_sym(c, name, cbid, drv_cbid, NULL);
}

/*
 * Leave a runtime call that ends at `end` (0 = now): API records, truth line,
 * exit callbacks, last error. Returns ret.
 */
static cudaError_t sim_exit(struct sim_call *c, cudaError_t ret, uint64_t end)
{
	if (!end)
		end = simcupti_now();
	if (c->drv_cbid) {
		simcupti_emit_api(CUPTI_ACTIVITY_KIND_DRIVER, c->drv_cbid, c->drv_start, end, c->drv_corr,
				  ret == cudaSuccess ? 0 : 1);
		sim_api_callback(c, CUPTI_API_EXIT, CUPTI_CB_DOMAIN_DRIVER_API, &ret);
	}
	simcupti_emit_api(CUPTI_ACTIVITY_KIND_RUNTIME, c->cbid, c->start, end, c->corr, (uint32_t)ret);
	sim_truth("{\"type\":\"api\",\"name\":\"%s\",\"tid\":%u,\"start\":%llu,\"end\":%llu,\"corr\":%u}\n",
		  c->name, simcupti_thread_id(), (unsigned long long)c->start, (unsigned long long)end,
		  c->corr);
	sim_api_callback(c, CUPTI_API_EXIT, CUPTI_CB_DOMAIN_RUNTIME_API, &ret);
	if (ret != cudaSuccess && ret != cudaErrorNotReady)
		t_last_error = ret;
	return ret;
}

/* A plain API call: enter, spend api_ns, leave. */
#define SIM_SIMPLE(fname, cb, drv, ...)                                                  \
	do {                                                                              \
		struct sim_call c_;                                                       \
		sim_enter(&c_, fname, CUPTI_RUNTIME_TRACE_CBID_##cb, drv);                 \
		cudaError_t r_ = cudaSuccess;                                             \
		__VA_ARGS__;                                                              \
		sim_spin_until(c_.start + g_cfg.api_ns);                                  \
		return sim_exit(&c_, r_, 0);                                              \
	} while (0)

/* ---- driver start / exit ------------------------------------------------------------ */

static void sim_context_event(CUpti_CallbackId cbid)
{
	CUpti_ResourceData rd;
	memset(&rd, 0, sizeof rd);
	rd.context = simcupti_context();
	simcupti_callback(CUPTI_CB_DOMAIN_RESOURCE, cbid, &rd);
}

static void sim_at_exit(void)
{
	if (atomic_exchange_explicit(&g_ctx_alive, 0, memory_order_relaxed)) {
		sim_context_event(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	}
	sim_truth_flush();
}

/* atexit(sim_at_exit), tied to this library: glibc's atexit (libc_nonshared)
 * is __cxa_atexit(f, NULL, __dso_handle), so the handler runs when the library
 * is dlclosed, before its code is unmapped. Spelled out because a sanitizer
 * runtime linked in first (TSan) exports its own atexit that registers with
 * no DSO: a dlclosed simcuda's handler would then be called at exit, into
 * unmapped code (rel_dlmain crashed so under TSan). */
extern void *__dso_handle;
int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

static void sim_at_exit_dso(void *arg)
{
	(void)arg;
	sim_at_exit();
}

static void sim_die_config(const char *msg)
{
	fprintf(stderr, "simcuda: bad cost model: %s\n", msg);
	fflush(stderr);
	_exit(2);
}

static void sim_driver_start(void)
{
	pthread_mutex_lock(&g_init_mx);
	if (atomic_load_explicit(&g_init_state, memory_order_relaxed) == 2) {
		pthread_mutex_unlock(&g_init_mx);
		return;
	}
	t_initializing = 1;
	atomic_store_explicit(&g_init_state, 1, memory_order_relaxed);
	char err[512];
	if (sim_config_load(&g_cfg, getenv("SIMCUDA_CONFIG"), err, sizeof err) < 0)
		sim_die_config(err);
	const char *tp = getenv("SIMCUDA_TRUTH");
	if (tp && *tp) {
		g_truth.f = fopen(tp, "w");
		if (!g_truth.f) {
			fprintf(stderr, "simcuda: SIMCUDA_TRUTH=%s: cannot open: %s\n", tp, strerror(errno));
			_exit(2);
		}
		setvbuf(g_truth.f, NULL, _IOFBF, 1 << 16);
	}
	simcupti_set_rebase_hook(sim_rebase);
	__cxa_atexit(sim_at_exit_dso, NULL, &__dso_handle);
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	if (inj && *inj) {
		void *h = dlopen(inj, RTLD_NOW | RTLD_GLOBAL);
		if (!h) {
			fprintf(stderr, "simcuda: CUDA_INJECTION64_PATH=%s: %s\n", inj, dlerror());
		} else {
			int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
			if (!init)
				fprintf(stderr, "simcuda: %s has no InitializeInjection\n", inj);
			else
				init();
		}
	}
	atomic_store_explicit(&g_ctx_alive, 1, memory_order_relaxed);
	sim_context_event(CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	t_initializing = 0;
	atomic_store_explicit(&g_init_state, 2, memory_order_release);
	pthread_mutex_unlock(&g_init_mx);
}

/* ---- registration (nvcc-emitted, before main) -------------------------------------- */

/* Plain function name of a mangled one: _Z6aten_mmPfi -> aten_mm,
 * _ZN2ns3fooEv -> foo (last component). Unmangled names stay as they are. */
static char *sim_plain_name(const char *m)
{
	if (strncmp(m, "_Z", 2) != 0)
		return strdup(m);
	const char *p = m + 2;
	int nested = *p == 'N';
	if (nested)
		p++;
	const char *last = NULL;
	size_t lastlen = 0;
	while (isdigit((unsigned char)*p)) {
		size_t n = strtoul(p, (char **)&p, 10);
		if (strlen(p) < n)
			break;
		last = p;
		lastlen = n;
		p += n;
		if (!nested)
			break;
		if (*p == 'I') /* template args: stop at the name before them */
			break;
	}
	if (!last)
		return strdup(m);
	return strndup(last, lastlen);
}

SIM_EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
	void **h = calloc(1, sizeof(void *));
	if (h)
		*h = fatCubin;
	return h;
}

SIM_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
	(void)fatCubinHandle;
}

SIM_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
	free(fatCubinHandle); /* its functions stay registered: names must outlive records */
}

SIM_EXPORT char __cudaInitModule(void **fatCubinHandle)
{
	(void)fatCubinHandle;
	return 1;
}

SIM_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
				       const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
				       dim3 *bDim, dim3 *gDim, int *wSize)
{
	(void)fatCubinHandle, (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim,
		(void)gDim, (void)wSize;
	struct sim_func *f = calloc(1, sizeof *f);
	if (!f)
		return;
	f->host_fun = hostFun;
	f->mangled = strdup(deviceName ? deviceName : "?");
	f->plain = sim_plain_name(f->mangled ? f->mangled : "?");
	pthread_mutex_lock(&g_dev.mx);
	f->next = g_dev.funcs;
	g_dev.funcs = f;
	pthread_mutex_unlock(&g_dev.mx);
}

SIM_EXPORT void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
				  const char *deviceName, int ext, size_t size, int constant, int global)
{
	(void)fatCubinHandle, (void)deviceAddress, (void)deviceName, (void)ext, (void)constant,
		(void)global;
	struct sim_var *v = calloc(1, sizeof *v);
	if (!v)
		return;
	v->host_var = hostVar;
	v->size = size;
	pthread_mutex_lock(&g_dev.mx);
	v->next = g_dev.vars;
	g_dev.vars = v;
	pthread_mutex_unlock(&g_dev.mx);
}

SIM_EXPORT void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
					 char *deviceAddress, const char *deviceName, int ext, size_t size,
					 int constant, int global)
{
	(void)fatCubinHandle, (void)hostVarPtrAddress, (void)deviceAddress, (void)deviceName, (void)ext,
		(void)size, (void)constant, (void)global;
}

static struct sim_func *sim_func_find(const void *p)
{
	pthread_mutex_lock(&g_dev.mx);
	struct sim_func *f = g_dev.funcs;
	while (f && f->host_fun != p && (const void *)f != p)
		f = f->next;
	pthread_mutex_unlock(&g_dev.mx);
	return f;
}

/* Body and cost rule of f, looked up once (after the config is loaded). */
static void sim_func_resolve(struct sim_func *f)
{
	pthread_mutex_lock(&g_dev.mx);
	if (!f->resolved) {
		char sym[300];
		snprintf(sym, sizeof sym, "simcuda_kernel_%s", f->plain);
		f->body = (sim_body_fn)dlsym(RTLD_DEFAULT, sym);
		f->rule = sim_config_match(&g_cfg, f->mangled, f->plain);
		f->resolved = 1;
	}
	pthread_mutex_unlock(&g_dev.mx);
}

SIM_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
	struct sim_func *f = sim_func_find(hostFun);
	if (!kernel || !f)
		return cudaErrorInvalidDeviceFunction;
	*kernel = (cudaKernel_t)(void *)f;
	return cudaSuccess;
}

SIM_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
						struct CUstream_st *stream)
{
	if (t_ncfg >= 16)
		return 1;
	t_cfg[t_ncfg].grid = gridDim;
	t_cfg[t_ncfg].block = blockDim;
	t_cfg[t_ncfg].shmem = sharedMem;
	t_cfg[t_ncfg].stream = stream;
	t_ncfg++;
	return 0;
}

SIM_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
						  void *stream)
{
	if (t_ncfg == 0)
		return cudaErrorMissingConfiguration;
	t_ncfg--;
	*gridDim = t_cfg[t_ncfg].grid;
	*blockDim = t_cfg[t_ncfg].block;
	*sharedMem = t_cfg[t_ncfg].shmem;
	*(cudaStream_t *)stream = t_cfg[t_ncfg].stream;
	return cudaSuccess;
}

/* ---- launches -------------------------------------------------------------------------- */

static cudaError_t sim_graph_add_kernel(struct sim_call *c, struct sim_stream *s, struct sim_func *f, dim3 grid,
					dim3 block, size_t shmem, void **args);

static cudaError_t sim_launch(struct sim_func *f, dim3 grid, dim3 block, void **args, size_t shmem,
			      cudaStream_t st, int per_thread, const char *name, CUpti_CallbackId cbid,
			      CUpti_CallbackId drv_cbid)
{
	struct sim_call c;
	sim_enter_sym(&c, name, cbid, drv_cbid, f ? f->mangled : NULL);
	if (!f) {
		sim_spin_until(c.start + g_cfg.api_ns);
		return sim_exit(&c, cudaErrorInvalidDeviceFunction, 0);
	}
	sim_func_resolve(f); /* after driver start: the cost model is loaded */
	if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0) {
		sim_spin_until(c.start + g_cfg.api_ns);
		return sim_exit(&c, cudaErrorInvalidConfiguration, 0);
	}
	uint64_t launch_ns = f->rule && f->rule->has_launch ? f->rule->launch_ns : g_cfg.launch_ns;
	uint64_t exec_ns = f->rule && f->rule->has_exec ? f->rule->exec_ns : g_cfg.exec_ns;
	if (f->rule && f->rule->exec_per_block_ns) /* work that grows with the grid */
		exec_ns += f->rule->exec_per_block_ns * ((uint64_t)grid.x * grid.y * grid.z - 1);
	{ /* a capturing stream records a graph node instead (sim_graph.c) */
		struct sim_stream *cs = sim_stream_of(st, per_thread);
		pthread_mutex_lock(&g_dev.mx);
		int capturing = cs->capture != NULL;
		pthread_mutex_unlock(&g_dev.mx);
		if (capturing) {
			sim_spin_until(c.start + launch_ns);
			/* nvcc's <<<>>> stubs pass an argument array on their own
			 * stack frame: only caller-owned arrays are kept */
			return sim_graph_add_kernel(&c, cs, f, grid, block, shmem, name[0] == '_' ? NULL : args);
		}
	}
	if (f->body) { /* device code: one op at a time on device memory */
		pthread_mutex_lock(&g_mem_mx);
		f->body(grid, block, args);
		pthread_mutex_unlock(&g_mem_mx);
	}
	sim_spin_until(c.start + launch_ns);
	uint64_t end = simcupti_now();
	struct sim_stream *s = sim_stream_of(st, per_thread);
	pthread_mutex_lock(&g_dev.mx);
	uint64_t kend;
	uint64_t kstart = sim_schedule(s, end + g_cfg.launch_latency_ns, exec_ns, c.corr, &kend);
	int64_t gid = ++g_dev.grid_id;
	pthread_mutex_unlock(&g_dev.mx);
	int ck = simcupti_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (ck || simcupti_enabled(CUPTI_ACTIVITY_KIND_KERNEL)) {
		CUpti_ActivityKernel10 k;
		memset(&k, 0, sizeof k);
		k.kind = ck ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL : CUPTI_ACTIVITY_KIND_KERNEL;
		k.start = kstart;
		k.end = kend;
		k.completed = kend;
		k.deviceId = SIM_DEVICE_ID;
		k.contextId = SIM_CONTEXT_ID;
		k.streamId = s->id;
		k.gridX = (int32_t)grid.x, k.gridY = (int32_t)grid.y, k.gridZ = (int32_t)grid.z;
		k.blockX = (int32_t)block.x, k.blockY = (int32_t)block.y, k.blockZ = (int32_t)block.z;
		k.dynamicSharedMemory = (int32_t)shmem;
		k.registersPerThread = 32;
		k.correlationId = c.corr;
		k.gridId = gid;
		k.name = f->mangled;
		k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
		k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
		simcupti_emit(&k, sizeof k, kend, offsetof(CUpti_ActivityKernel10, start),
			      offsetof(CUpti_ActivityKernel10, end),
			      offsetof(CUpti_ActivityKernel10, completed));
	}
	sim_truth("{\"type\":\"kernel\",\"name\":\"%s\",\"stream\":%u,\"start\":%llu,\"end\":%llu,"
		  "\"corr\":%u,\"api_corr\":%u}\n",
		  f->mangled, s->id, (unsigned long long)kstart, (unsigned long long)kend, c.corr, c.corr);
	return sim_exit(&c, cudaSuccess, end);
}

#define SIM_RT(x) CUPTI_RUNTIME_TRACE_CBID_##x
#define SIM_DRV(x) CUPTI_DRIVER_TRACE_CBID_##x

SIM_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
					  size_t sharedMem, cudaStream_t stream)
{
	return sim_launch(sim_func_find(kernel), gridDim, blockDim, args, sharedMem, stream, 0,
			  "__cudaLaunchKernel", SIM_RT(__cudaLaunchKernel_v13000), SIM_DRV(cuLaunchKernel));
}

SIM_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
					       void **args, size_t sharedMem, cudaStream_t stream)
{
	return sim_launch(sim_func_find(kernel), gridDim, blockDim, args, sharedMem, stream, 1,
			  "__cudaLaunchKernel_ptsz", SIM_RT(__cudaLaunchKernel_ptsz_v13000),
			  SIM_DRV(cuLaunchKernel_ptsz));
}

SIM_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
					size_t sharedMem, cudaStream_t stream)
{
	return sim_launch(sim_func_find(func), gridDim, blockDim, args, sharedMem, stream, 0,
			  "cudaLaunchKernel", SIM_RT(cudaLaunchKernel_v7000), SIM_DRV(cuLaunchKernel));
}

SIM_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
					     size_t sharedMem, cudaStream_t stream)
{
	return sim_launch(sim_func_find(func), gridDim, blockDim, args, sharedMem, stream, 1,
			  "cudaLaunchKernel_ptsz", SIM_RT(cudaLaunchKernel_ptsz_v7000),
			  SIM_DRV(cuLaunchKernel_ptsz));
}

SIM_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
	if (!config)
		return t_last_error = cudaErrorInvalidValue;
	return sim_launch(sim_func_find(func), config->gridDim, config->blockDim, args,
			  config->dynamicSmemBytes, config->stream, 0, "cudaLaunchKernelExC",
			  SIM_RT(cudaLaunchKernelExC_v11060), SIM_DRV(cuLaunchKernelEx));
}

SIM_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
						void **args)
{
	if (!config)
		return t_last_error = cudaErrorInvalidValue;
	return sim_launch(sim_func_find(func), config->gridDim, config->blockDim, args,
			  config->dynamicSmemBytes, config->stream, 1, "cudaLaunchKernelExC_ptsz",
			  SIM_RT(cudaLaunchKernelExC_ptsz_v11060), SIM_DRV(cuLaunchKernelEx_ptsz));
}

SIM_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim,
						   void **args, size_t sharedMem, cudaStream_t stream)
{
	return sim_launch(sim_func_find(func), gridDim, blockDim, args, sharedMem, stream, 0,
			  "cudaLaunchCooperativeKernel", SIM_RT(cudaLaunchCooperativeKernel_v9000),
			  SIM_DRV(cuLaunchCooperativeKernel));
}

SIM_EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
							void **args, size_t sharedMem, cudaStream_t stream)
{
	return sim_launch(sim_func_find(func), gridDim, blockDim, args, sharedMem, stream, 1,
			  "cudaLaunchCooperativeKernel_ptsz",
			  SIM_RT(cudaLaunchCooperativeKernel_ptsz_v9000),
			  SIM_DRV(cuLaunchCooperativeKernel_ptsz));
}

struct sim_hostfn {
	cudaHostFn_t fn;
	void *user;
	uint64_t at;
};

static void *sim_hostfn_main(void *arg)
{
	struct sim_hostfn *h = arg;
	sim_wait_until(h->at);
	h->fn(h->user);
	free(h);
	return NULL;
}

static cudaError_t sim_host_func(cudaStream_t st, cudaHostFn_t fn, void *user, int per_thread,
				 const char *name, CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_enter(&c, name, cbid, per_thread ? SIM_DRV(cuLaunchHostFunc_ptsz) : SIM_DRV(cuLaunchHostFunc));
	sim_spin_until(c.start + g_cfg.launch_ns);
	uint64_t end = simcupti_now();
	if (!fn)
		return sim_exit(&c, cudaErrorInvalidValue, end);
	struct sim_hostfn *h = malloc(sizeof *h);
	if (!h)
		return sim_exit(&c, cudaErrorMemoryAllocation, end);
	struct sim_stream *s = sim_stream_of(st, per_thread);
	pthread_mutex_lock(&g_dev.mx);
	uint64_t hend;
	h->at = sim_schedule(s, end + g_cfg.launch_latency_ns, 0, c.corr, &hend);
	pthread_mutex_unlock(&g_dev.mx);
	h->fn = fn;
	h->user = user;
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&t, &at, sim_hostfn_main, h);
	pthread_attr_destroy(&at);
	if (rc != 0) {
		free(h);
		return sim_exit(&c, cudaErrorMemoryAllocation, end);
	}
	return sim_exit(&c, cudaSuccess, end);
}

SIM_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	return sim_host_func(stream, fn, userData, 0, "cudaLaunchHostFunc", SIM_RT(cudaLaunchHostFunc_v10000));
}

SIM_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	return sim_host_func(stream, fn, userData, 1, "cudaLaunchHostFunc_ptsz",
			     SIM_RT(cudaLaunchHostFunc_ptsz_v10000));
}

SIM_EXPORT cudaError_t cudaFuncGetName(const char **name, const void *func)
{
	struct sim_func *f = sim_func_find(func);
	SIM_SIMPLE("cudaFuncGetName", cudaFuncGetName_v12030, SIM_DRV(cuFuncGetName), {
		if (!name || !f)
			r_ = name ? cudaErrorInvalidDeviceFunction : cudaErrorInvalidValue;
		else
			*name = f->mangled;
	});
}

/* ---- copies and sets ------------------------------------------------------------------ */

static const char *sim_copy_kind_name(uint8_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
	default: return "HtoH";
	}
}

static uint64_t sim_xfer_ns(uint64_t bytes)
{
	return g_cfg.memcpy_latency_ns + (uint64_t)((double)bytes / g_cfg.memcpy_gbps);
}

/* One copy or set. is_set: memset with value; peer: PtoP copy. */
struct sim_xfer {
	const char *name;
	CUpti_CallbackId cbid;
	int async, per_thread, is_set, peer;
	cudaStream_t stream;
	void *dst;
	const void *src;
	size_t dpitch, spitch, width, height; /* rows; 1D: height 1 */
	int value;
	enum cudaMemcpyKind kind;
};

static CUpti_CallbackId sim_copy_drv_cbid(uint8_t ck, int async, int is_set, int peer, int two_d)
{
	if (is_set)
		return two_d ? (async ? SIM_DRV(cuMemsetD2D8Async) : SIM_DRV(cuMemsetD2D8_v2))
			     : (async ? SIM_DRV(cuMemsetD8Async) : SIM_DRV(cuMemsetD8_v2));
	if (peer)
		return async ? SIM_DRV(cuMemcpyPeerAsync) : SIM_DRV(cuMemcpyPeer);
	if (two_d)
		return async ? SIM_DRV(cuMemcpy2DAsync_v2) : SIM_DRV(cuMemcpy2D_v2);
	switch (ck) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
		return async ? SIM_DRV(cuMemcpyHtoDAsync_v2) : SIM_DRV(cuMemcpyHtoD_v2);
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
		return async ? SIM_DRV(cuMemcpyDtoHAsync_v2) : SIM_DRV(cuMemcpyDtoH_v2);
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
		return async ? SIM_DRV(cuMemcpyDtoDAsync_v2) : SIM_DRV(cuMemcpyDtoD_v2);
	default:
		return async ? SIM_DRV(cuMemcpyAsync) : SIM_DRV(cuMemcpy);
	}
}

static cudaError_t sim_xfer(const struct sim_xfer *x)
{
	uint8_t dk = sim_mem_kind(x->dst), sk = x->is_set ? dk : sim_mem_kind(x->src);
	uint8_t ck = CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
	int dev_d = dk == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, dev_s = sk == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	enum cudaMemcpyKind kind = x->kind;
	if (kind == cudaMemcpyDefault)
		kind = dev_s ? (dev_d ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost)
			     : (dev_d ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost);
	switch (kind) {
	case cudaMemcpyHostToDevice: ck = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD; break;
	case cudaMemcpyDeviceToHost: ck = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH; break;
	case cudaMemcpyDeviceToDevice: ck = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD; break;
	default: ck = CUPTI_ACTIVITY_MEMCPY_KIND_HTOH; break;
	}
	if (x->peer)
		ck = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	struct sim_call c;
	sim_enter(&c, x->name, x->cbid, sim_copy_drv_cbid(ck, x->async, x->is_set, x->peer, x->height > 1));
	cudaError_t ret = cudaSuccess;
	if (!x->dst || (!x->is_set && !x->src) || (int)kind < 0 || kind > cudaMemcpyDefault ||
	    (x->height > 1 && (x->dpitch < x->width || (!x->is_set && x->spitch < x->width))))
		ret = cudaErrorInvalidValue;
	uint64_t bytes = (uint64_t)x->width * x->height;
	if (ret == cudaSuccess) { /* bytes really move, at call time, one op at a time */
		pthread_mutex_lock(&g_mem_mx);
		for (size_t r = 0; r < x->height; r++) {
			char *d = (char *)x->dst + r * x->dpitch;
			if (x->is_set)
				memset(d, x->value, x->width);
			else
				memmove(d, (const char *)x->src + r * x->spitch, x->width);
		}
		pthread_mutex_unlock(&g_mem_mx);
	}
	sim_spin_until(c.start + g_cfg.api_ns);
	if (ret != cudaSuccess)
		return sim_exit(&c, ret, 0);
	struct sim_stream *s = sim_stream_of(x->stream, x->per_thread);
	uint64_t q = simcupti_now();
	uint32_t prior_corr, op_corr = x->is_set ? c.corr : c.drv_corr;
	pthread_mutex_lock(&g_dev.mx);
	uint64_t prior = sim_deps(s, &prior_corr);
	uint64_t oend, ostart = sim_schedule(s, q + g_cfg.launch_latency_ns, sim_xfer_ns(bytes), op_corr, &oend);
	pthread_mutex_unlock(&g_dev.mx);
	uint64_t end = q;
	if (!x->async) {
		if (prior > c.start)
			sim_truth("{\"type\":\"sync\",\"kind\":\"%s\",\"tid\":%u,\"start\":%llu,\"end\":%llu,"
				  "\"api_corr\":%u,\"waited_corr\":%u}\n",
				  x->is_set ? "memset" : "memcpy", simcupti_thread_id(),
				  (unsigned long long)c.start, (unsigned long long)prior, c.corr, prior_corr);
		sim_wait_until(oend);
		end = simcupti_now();
	}
	if (x->is_set) {
		if (simcupti_enabled(CUPTI_ACTIVITY_KIND_MEMSET)) {
			CUpti_ActivityMemset4 m;
			memset(&m, 0, sizeof m);
			m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
			m.value = (uint32_t)x->value;
			m.bytes = bytes;
			m.start = ostart;
			m.end = oend;
			m.deviceId = SIM_DEVICE_ID;
			m.contextId = SIM_CONTEXT_ID;
			m.streamId = s->id;
			m.correlationId = op_corr;
			m.flags = x->async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
			m.memoryKind = dk;
			m.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
			simcupti_emit(&m, sizeof m, oend, offsetof(CUpti_ActivityMemset4, start),
				      offsetof(CUpti_ActivityMemset4, end), SIM_NO_OFF);
		}
		sim_truth("{\"type\":\"memset\",\"name\":\"memset\",\"stream\":%u,\"start\":%llu,\"end\":%llu,"
			  "\"corr\":%u,\"api_corr\":%u,\"bytes\":%llu}\n",
			  s->id, (unsigned long long)ostart, (unsigned long long)oend, op_corr, c.corr,
			  (unsigned long long)bytes);
	} else {
		if (simcupti_enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) {
			CUpti_ActivityMemcpy6 m;
			memset(&m, 0, sizeof m);
			m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
			m.copyKind = ck;
			m.srcKind = sk;
			m.dstKind = dk;
			m.flags = x->async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
			m.bytes = bytes;
			m.start = ostart;
			m.end = oend;
			m.deviceId = SIM_DEVICE_ID;
			m.contextId = SIM_CONTEXT_ID;
			m.streamId = s->id;
			m.correlationId = op_corr;
			m.runtimeCorrelationId = c.corr;
			m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
			m.copyCount = 1;
			simcupti_emit(&m, sizeof m, oend, offsetof(CUpti_ActivityMemcpy6, start),
				      offsetof(CUpti_ActivityMemcpy6, end), SIM_NO_OFF);
		}
		sim_truth("{\"type\":\"memcpy\",\"name\":\"memcpy%s\",\"kind\":\"%s\",\"stream\":%u,"
			  "\"start\":%llu,\"end\":%llu,\"corr\":%u,\"api_corr\":%u,\"bytes\":%llu}\n",
			  sim_copy_kind_name(ck), sim_copy_kind_name(ck), s->id, (unsigned long long)ostart,
			  (unsigned long long)oend, op_corr, c.corr, (unsigned long long)bytes);
	}
	return sim_exit(&c, cudaSuccess, end);
}

#define SIM_COPY1(nm, cb, asy, pt, d, s_, n, k, st)                                               \
	do {                                                                                       \
		struct sim_xfer x_ = {.name = nm, .cbid = SIM_RT(cb), .async = asy, .per_thread = pt, \
				      .stream = st, .dst = d, .src = s_, .width = n, .height = 1, \
				      .kind = k};                                                   \
		return sim_xfer(&x_);                                                              \
	} while (0)

SIM_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	SIM_COPY1("cudaMemcpy", cudaMemcpy_v3020, 0, 0, dst, src, count, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	SIM_COPY1("cudaMemcpy_ptds", cudaMemcpy_ptds_v7000, 0, 1, dst, src, count, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
				       cudaStream_t stream)
{
	SIM_COPY1("cudaMemcpyAsync", cudaMemcpyAsync_v3020, 1, 0, dst, src, count, kind, stream);
}

SIM_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
					    enum cudaMemcpyKind kind, cudaStream_t stream)
{
	SIM_COPY1("cudaMemcpyAsync_ptsz", cudaMemcpyAsync_ptsz_v7000, 1, 1, dst, src, count, kind, stream);
}

static cudaError_t sim_copy2d(const char *nm, CUpti_CallbackId cbid, int async, int pt, void *dst,
			      size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
			      enum cudaMemcpyKind kind, cudaStream_t st)
{
	struct sim_xfer x = {.name = nm, .cbid = cbid, .async = async, .per_thread = pt, .stream = st,
			     .dst = dst, .src = src, .dpitch = dpitch, .spitch = spitch, .width = width,
			     .height = height, .kind = kind};
	return sim_xfer(&x);
}

SIM_EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
				    size_t height, enum cudaMemcpyKind kind)
{
	return sim_copy2d("cudaMemcpy2D", SIM_RT(cudaMemcpy2D_v3020), 0, 0, dst, dpitch, src, spitch, width,
			  height, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch,
					 size_t width, size_t height, enum cudaMemcpyKind kind)
{
	return sim_copy2d("cudaMemcpy2D_ptds", SIM_RT(cudaMemcpy2D_ptds_v7000), 0, 1, dst, dpitch, src,
			  spitch, width, height, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
					 size_t width, size_t height, enum cudaMemcpyKind kind,
					 cudaStream_t stream)
{
	return sim_copy2d("cudaMemcpy2DAsync", SIM_RT(cudaMemcpy2DAsync_v3020), 1, 0, dst, dpitch, src,
			  spitch, width, height, kind, stream);
}

SIM_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch,
					      size_t width, size_t height, enum cudaMemcpyKind kind,
					      cudaStream_t stream)
{
	return sim_copy2d("cudaMemcpy2DAsync_ptsz", SIM_RT(cudaMemcpy2DAsync_ptsz_v7000), 1, 1, dst, dpitch,
			  src, spitch, width, height, kind, stream);
}

/* A __device__ symbol is its host shadow (registered by __cudaRegisterVar). */
static char *sim_symbol(const void *symbol, size_t count, size_t offset)
{
	pthread_mutex_lock(&g_dev.mx);
	struct sim_var *v = g_dev.vars;
	while (v && v->host_var != symbol)
		v = v->next;
	pthread_mutex_unlock(&g_dev.mx);
	if (!v || offset + count > v->size)
		return NULL;
	return (char *)v->host_var + offset;
}

SIM_EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
					  enum cudaMemcpyKind kind)
{
	SIM_COPY1("cudaMemcpyToSymbol", cudaMemcpyToSymbol_v3020, 0, 0, sim_symbol(symbol, count, offset), src,
		  count, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
					       size_t offset, enum cudaMemcpyKind kind)
{
	SIM_COPY1("cudaMemcpyToSymbol_ptds", cudaMemcpyToSymbol_ptds_v7000, 0, 1,
		  sim_symbol(symbol, count, offset), src, count, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
					    enum cudaMemcpyKind kind)
{
	SIM_COPY1("cudaMemcpyFromSymbol", cudaMemcpyFromSymbol_v3020, 0, 0, dst,
		  sim_symbol(symbol, count, offset), count, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count, size_t offset,
						 enum cudaMemcpyKind kind)
{
	SIM_COPY1("cudaMemcpyFromSymbol_ptds", cudaMemcpyFromSymbol_ptds_v7000, 0, 1, dst,
		  sim_symbol(symbol, count, offset), count, kind, NULL);
}

SIM_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
					       size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream)
{
	SIM_COPY1("cudaMemcpyToSymbolAsync", cudaMemcpyToSymbolAsync_v3020, 1, 0,
		  sim_symbol(symbol, count, offset), src, count, kind, stream);
}

SIM_EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count,
						    size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream)
{
	SIM_COPY1("cudaMemcpyToSymbolAsync_ptsz", cudaMemcpyToSymbolAsync_ptsz_v7000, 1, 1,
		  sim_symbol(symbol, count, offset), src, count, kind, stream);
}

SIM_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
						 enum cudaMemcpyKind kind, cudaStream_t stream)
{
	SIM_COPY1("cudaMemcpyFromSymbolAsync", cudaMemcpyFromSymbolAsync_v3020, 1, 0, dst,
		  sim_symbol(symbol, count, offset), count, kind, stream);
}

SIM_EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
						      size_t offset, enum cudaMemcpyKind kind,
						      cudaStream_t stream)
{
	SIM_COPY1("cudaMemcpyFromSymbolAsync_ptsz", cudaMemcpyFromSymbolAsync_ptsz_v7000, 1, 1, dst,
		  sim_symbol(symbol, count, offset), count, kind, stream);
}

SIM_EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
	if (dstDevice != 0 || srcDevice != 0)
		return t_last_error = cudaErrorInvalidDevice;
	struct sim_xfer x = {.name = "cudaMemcpyPeer", .cbid = SIM_RT(cudaMemcpyPeer_v4000), .peer = 1,
			     .dst = dst, .src = src, .width = count, .height = 1, .kind = cudaMemcpyDefault};
	return sim_xfer(&x);
}

SIM_EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
					   size_t count, cudaStream_t stream)
{
	if (dstDevice != 0 || srcDevice != 0)
		return t_last_error = cudaErrorInvalidDevice;
	struct sim_xfer x = {.name = "cudaMemcpyPeerAsync", .cbid = SIM_RT(cudaMemcpyPeerAsync_v4000),
			     .peer = 1, .async = 1, .stream = stream, .dst = dst, .src = src,
			     .width = count, .height = 1, .kind = cudaMemcpyDefault};
	return sim_xfer(&x);
}

static cudaError_t sim_set(const char *nm, CUpti_CallbackId cbid, int async, int pt, void *p, size_t pitch,
			   int value, size_t width, size_t height, cudaStream_t st)
{
	struct sim_xfer x = {.name = nm, .cbid = cbid, .async = async, .per_thread = pt, .is_set = 1,
			     .stream = st, .dst = p, .dpitch = pitch, .width = width, .height = height,
			     .value = value, .kind = cudaMemcpyDeviceToDevice};
	return sim_xfer(&x);
}

SIM_EXPORT cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	return sim_set("cudaMemset", SIM_RT(cudaMemset_v3020), 0, 0, devPtr, count, value, count, 1, NULL);
}

SIM_EXPORT cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
	return sim_set("cudaMemset_ptds", SIM_RT(cudaMemset_ptds_v7000), 0, 1, devPtr, count, value, count, 1,
		       NULL);
}

SIM_EXPORT cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	return sim_set("cudaMemsetAsync", SIM_RT(cudaMemsetAsync_v3020), 1, 0, devPtr, count, value, count, 1,
		       stream);
}

SIM_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	return sim_set("cudaMemsetAsync_ptsz", SIM_RT(cudaMemsetAsync_ptsz_v7000), 1, 1, devPtr, count, value,
		       count, 1, stream);
}

SIM_EXPORT cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
	return sim_set("cudaMemset2D", SIM_RT(cudaMemset2D_v3020), 0, 0, devPtr, pitch, value, width, height,
		       NULL);
}

SIM_EXPORT cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
	return sim_set("cudaMemset2D_ptds", SIM_RT(cudaMemset2D_ptds_v7000), 0, 1, devPtr, pitch, value, width,
		       height, NULL);
}

SIM_EXPORT cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width, size_t height,
					 cudaStream_t stream)
{
	return sim_set("cudaMemset2DAsync", SIM_RT(cudaMemset2DAsync_v3020), 1, 0, devPtr, pitch, value, width,
		       height, stream);
}

SIM_EXPORT cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width,
					      size_t height, cudaStream_t stream)
{
	return sim_set("cudaMemset2DAsync_ptsz", SIM_RT(cudaMemset2DAsync_ptsz_v7000), 1, 1, devPtr, pitch,
		       value, width, height, stream);
}

/* ---- memory ----------------------------------------------------------------------------- */

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

SIM_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	SIM_SIMPLE("cudaMallocHost", cudaMallocHost_v3020, SIM_DRV(cuMemHostAlloc), r_ = sim_alloc(ptr, size, 1));
}

SIM_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	(void)flags;
	SIM_SIMPLE("cudaHostAlloc", cudaHostAlloc_v3020, SIM_DRV(cuMemHostAlloc), r_ = sim_alloc(pHost, size, 1));
}

SIM_EXPORT cudaError_t cudaFree(void *devPtr)
{
	SIM_SIMPLE("cudaFree", cudaFree_v3020, SIM_DRV(cuMemFree_v2), {
		if (devPtr) {
			if (sim_alloc_del(devPtr, 0) == 0)
				free(devPtr);
			else
				r_ = cudaErrorInvalidValue;
		}
	});
}

SIM_EXPORT cudaError_t cudaFreeHost(void *ptr)
{
	SIM_SIMPLE("cudaFreeHost", cudaFreeHost_v3020, SIM_DRV(cuMemFreeHost), {
		if (ptr) {
			if (sim_alloc_del(ptr, 1) == 0)
				free(ptr);
			else
				r_ = cudaErrorInvalidValue;
		}
	});
}

SIM_EXPORT cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
	SIM_SIMPLE("cudaGetSymbolAddress", cudaGetSymbolAddress_v3020, 0, {
		char *p = sim_symbol(symbol, 0, 0);
		if (!devPtr || !p)
			r_ = cudaErrorInvalidSymbol;
		else
			*devPtr = p;
	});
}

/* ---- streams ------------------------------------------------------------------------------ */

SIM_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
	SIM_SIMPLE("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags_v5000, SIM_DRV(cuStreamCreate), {
		struct sim_stream *s = pStream ? sim_stream_new((flags & cudaStreamNonBlocking) != 0) : NULL;
		if (!s)
			r_ = pStream ? cudaErrorMemoryAllocation : cudaErrorInvalidValue;
		else
			*pStream = (cudaStream_t)(void *)s;
	});
}

SIM_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	SIM_SIMPLE("cudaStreamCreate", cudaStreamCreate_v3020, SIM_DRV(cuStreamCreate), {
		struct sim_stream *s = pStream ? sim_stream_new(0) : NULL;
		if (!s)
			r_ = pStream ? cudaErrorMemoryAllocation : cudaErrorInvalidValue;
		else
			*pStream = (cudaStream_t)(void *)s;
	});
}

SIM_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	/* Pending work still completes (and device syncs still wait for it), so
	 * the stream object stays on the list, marked destroyed. */
	SIM_SIMPLE("cudaStreamDestroy", cudaStreamDestroy_v5050, SIM_DRV(cuStreamDestroy_v2), {
		if (stream == NULL || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
			r_ = cudaErrorInvalidResourceHandle;
		else
			((struct sim_stream *)(void *)stream)->destroyed = 1;
	});
}

static cudaError_t sim_stream_get_id(cudaStream_t st, unsigned long long *id, int pt, const char *nm,
				     CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_enter(&c, nm, cbid, SIM_DRV(cuStreamGetId));
	cudaError_t r = cudaSuccess;
	if (!id)
		r = cudaErrorInvalidValue;
	else
		*id = sim_stream_of(st, pt)->id;
	sim_spin_until(c.start + g_cfg.api_ns);
	return sim_exit(&c, r, 0);
}

SIM_EXPORT cudaError_t cudaStreamGetId(cudaStream_t hStream, unsigned long long *streamId)
{
	return sim_stream_get_id(hStream, streamId, 0, "cudaStreamGetId", SIM_RT(cudaStreamGetId_v12000));
}

SIM_EXPORT cudaError_t cudaStreamGetId_ptsz(cudaStream_t hStream, unsigned long long *streamId)
{
	return sim_stream_get_id(hStream, streamId, 1, "cudaStreamGetId_ptsz",
				 SIM_RT(cudaStreamGetId_ptsz_v12000));
}

static cudaError_t sim_stream_query(cudaStream_t st, int pt, const char *nm, CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_enter(&c, nm, cbid, SIM_DRV(cuStreamQuery));
	struct sim_stream *s = sim_stream_of(st, pt);
	sim_spin_until(c.start + g_cfg.api_ns);
	pthread_mutex_lock(&g_dev.mx);
	uint64_t t = s->tail_end;
	pthread_mutex_unlock(&g_dev.mx);
	return sim_exit(&c, simcupti_now() >= t ? cudaSuccess : cudaErrorNotReady, 0);
}

SIM_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	return sim_stream_query(stream, 0, "cudaStreamQuery", SIM_RT(cudaStreamQuery_v3020));
}

SIM_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
	return sim_stream_query(stream, 1, "cudaStreamQuery_ptsz", SIM_RT(cudaStreamQuery_ptsz_v7000));
}

/*
 * A synchronizing call: wait until `target` (the end of the waited scope,
 * `wcorr` its last op), spend sync_ns, then emit the SYNCHRONIZATION record
 * and the truth sync line over the whole call.
 */
static cudaError_t sim_sync_wait(struct sim_call *c, uint64_t target, uint32_t wcorr,
				 CUpti_ActivitySynchronizationType type, const char *tkind, uint32_t stream_id,
				 uint32_t event_id)
{
	sim_wait_until(target);
	uint64_t after = simcupti_now();
	sim_spin_until(after + g_cfg.sync_ns);
	uint64_t end = simcupti_now();
	if (simcupti_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) {
		CUpti_ActivitySynchronization2 r;
		memset(&r, 0, sizeof r);
		r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
		r.type = type;
		r.start = c->start;
		r.end = end;
		r.correlationId = c->corr;
		r.contextId = SIM_CONTEXT_ID;
		r.streamId = stream_id;
		r.cudaEventId = event_id;
		r.cudaEventSyncId = event_id == SIM_INVALID ? 0 : event_id;
		simcupti_emit(&r, sizeof r, 0, offsetof(CUpti_ActivitySynchronization2, start),
			      offsetof(CUpti_ActivitySynchronization2, end), SIM_NO_OFF);
	}
	sim_truth("{\"type\":\"sync\",\"kind\":\"%s\",\"tid\":%u,\"start\":%llu,\"end\":%llu,"
		  "\"api_corr\":%u,\"waited_corr\":%u}\n",
		  tkind, simcupti_thread_id(), (unsigned long long)c->start, (unsigned long long)end, c->corr,
		  target > c->start ? wcorr : 0);
	return sim_exit(c, cudaSuccess, end);
}

SIM_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	struct sim_call c;
	sim_enter(&c, "cudaDeviceSynchronize", SIM_RT(cudaDeviceSynchronize_v3020), SIM_DRV(cuCtxSynchronize));
	uint32_t wc;
	pthread_mutex_lock(&g_dev.mx);
	uint64_t t = sim_device_tail(&wc);
	pthread_mutex_unlock(&g_dev.mx);
	return sim_sync_wait(&c, t, wc, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, "device",
			     SIM_INVALID, SIM_INVALID);
}

static cudaError_t sim_stream_sync(cudaStream_t st, int pt, const char *nm, CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_enter(&c, nm, cbid, pt ? SIM_DRV(cuStreamSynchronize_ptsz) : SIM_DRV(cuStreamSynchronize));
	struct sim_stream *s = sim_stream_of(st, pt);
	pthread_mutex_lock(&g_dev.mx);
	uint64_t t = s->tail_end;
	uint32_t wc = s->tail_corr;
	pthread_mutex_unlock(&g_dev.mx);
	return sim_sync_wait(&c, t, wc, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, "stream", s->id,
			     SIM_INVALID);
}

SIM_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	return sim_stream_sync(stream, 0, "cudaStreamSynchronize", SIM_RT(cudaStreamSynchronize_v3020));
}

SIM_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
	return sim_stream_sync(stream, 1, "cudaStreamSynchronize_ptsz", SIM_RT(cudaStreamSynchronize_ptsz_v7000));
}

/* ---- events ---------------------------------------------------------------------------------- */

SIM_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	SIM_SIMPLE("cudaEventCreateWithFlags", cudaEventCreateWithFlags_v3020, SIM_DRV(cuEventCreate), {
		struct sim_event *e = event ? calloc(1, sizeof *e) : NULL;
		if (!e) {
			r_ = event ? cudaErrorMemoryAllocation : cudaErrorInvalidValue;
		} else {
			pthread_mutex_lock(&g_dev.mx);
			e->id = g_dev.next_event_id++;
			pthread_mutex_unlock(&g_dev.mx);
			e->flags = flags;
			*event = (cudaEvent_t)(void *)e;
		}
	});
}

SIM_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	SIM_SIMPLE("cudaEventCreate", cudaEventCreate_v3020, SIM_DRV(cuEventCreate), {
		struct sim_event *e = event ? calloc(1, sizeof *e) : NULL;
		if (!e) {
			r_ = event ? cudaErrorMemoryAllocation : cudaErrorInvalidValue;
		} else {
			pthread_mutex_lock(&g_dev.mx);
			e->id = g_dev.next_event_id++;
			pthread_mutex_unlock(&g_dev.mx);
			*event = (cudaEvent_t)(void *)e;
		}
	});
}

SIM_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	SIM_SIMPLE("cudaEventDestroy", cudaEventDestroy_v3020, SIM_DRV(cuEventDestroy_v2), {
		if (!event)
			r_ = cudaErrorInvalidResourceHandle;
		else
			free(event);
	});
}

static cudaError_t sim_event_record(cudaEvent_t event, cudaStream_t st, int pt, const char *nm,
				    CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_enter(&c, nm, cbid, pt ? SIM_DRV(cuEventRecord_ptsz) : SIM_DRV(cuEventRecord));
	sim_spin_until(c.start + g_cfg.api_ns);
	uint64_t end = simcupti_now();
	if (!event)
		return sim_exit(&c, cudaErrorInvalidResourceHandle, end);
	struct sim_event *e = (struct sim_event *)(void *)event;
	struct sim_stream *s = sim_stream_of(st, pt);
	pthread_mutex_lock(&g_dev.mx);
	uint32_t dc;
	uint64_t d = sim_deps(s, &dc);
	e->ts = sim_max(d, end);
	e->corr = dc;
	e->recorded = 1;
	pthread_mutex_unlock(&g_dev.mx);
	return sim_exit(&c, cudaSuccess, end);
}

SIM_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	return sim_event_record(event, stream, 0, "cudaEventRecord", SIM_RT(cudaEventRecord_v3020));
}

SIM_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
	return sim_event_record(event, stream, 1, "cudaEventRecord_ptsz", SIM_RT(cudaEventRecord_ptsz_v7000));
}

SIM_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
	SIM_SIMPLE("cudaEventQuery", cudaEventQuery_v3020, SIM_DRV(cuEventQuery), {
		struct sim_event *e = (struct sim_event *)(void *)event;
		if (!e) {
			r_ = cudaErrorInvalidResourceHandle;
		} else {
			pthread_mutex_lock(&g_dev.mx);
			uint64_t t = e->recorded ? e->ts : 0;
			pthread_mutex_unlock(&g_dev.mx);
			r_ = simcupti_now() >= t ? cudaSuccess : cudaErrorNotReady;
		}
	});
}

SIM_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	struct sim_call c;
	sim_enter(&c, "cudaEventSynchronize", SIM_RT(cudaEventSynchronize_v3020), SIM_DRV(cuEventSynchronize));
	if (!event)
		return sim_exit(&c, cudaErrorInvalidResourceHandle, 0);
	struct sim_event *e = (struct sim_event *)(void *)event;
	pthread_mutex_lock(&g_dev.mx);
	uint64_t t = e->recorded ? e->ts : 0;
	uint32_t wc = e->recorded ? e->corr : 0;
	uint32_t id = e->id;
	pthread_mutex_unlock(&g_dev.mx);
	return sim_sync_wait(&c, t, wc, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, "event",
			     SIM_INVALID, id);
}

SIM_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	SIM_SIMPLE("cudaEventElapsedTime", cudaEventElapsedTime_v12080, SIM_DRV(cuEventElapsedTime), {
		struct sim_event *a = (struct sim_event *)(void *)start, *b = (struct sim_event *)(void *)end;
		if (!ms || !a || !b) {
			r_ = ms ? cudaErrorInvalidResourceHandle : cudaErrorInvalidValue;
		} else if ((a->flags | b->flags) & cudaEventDisableTiming || !a->recorded || !b->recorded) {
			r_ = cudaErrorInvalidResourceHandle;
		} else {
			uint64_t now = simcupti_now();
			if (now < a->ts || now < b->ts)
				r_ = cudaErrorNotReady;
			else
				*ms = (float)(((double)b->ts - (double)a->ts) / 1e6);
		}
	});
}

static cudaError_t sim_stream_wait_event(cudaStream_t st, cudaEvent_t event, int pt, const char *nm,
					 CUpti_CallbackId cbid)
{
	struct sim_call c;
	sim_enter(&c, nm, cbid, pt ? SIM_DRV(cuStreamWaitEvent_ptsz) : SIM_DRV(cuStreamWaitEvent));
	sim_spin_until(c.start + g_cfg.api_ns);
	uint64_t end = simcupti_now();
	if (!event)
		return sim_exit(&c, cudaErrorInvalidResourceHandle, end);
	struct sim_event *e = (struct sim_event *)(void *)event;
	struct sim_stream *s = sim_stream_of(st, pt);
	pthread_mutex_lock(&g_dev.mx);
	if (e->recorded && e->ts > s->tail_end) {
		s->tail_end = e->ts;
		s->tail_corr = e->corr;
	}
	uint32_t id = e->id;
	pthread_mutex_unlock(&g_dev.mx);
	if (simcupti_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) {
		CUpti_ActivitySynchronization2 r;
		memset(&r, 0, sizeof r);
		r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
		r.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
		r.start = c.start;
		r.end = end;
		r.correlationId = c.corr;
		r.contextId = SIM_CONTEXT_ID;
		r.streamId = s->id;
		r.cudaEventId = id;
		r.cudaEventSyncId = id;
		simcupti_emit(&r, sizeof r, 0, offsetof(CUpti_ActivitySynchronization2, start),
			      offsetof(CUpti_ActivitySynchronization2, end), SIM_NO_OFF);
	}
	return sim_exit(&c, cudaSuccess, end);
}

SIM_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	(void)flags;
	return sim_stream_wait_event(stream, event, 0, "cudaStreamWaitEvent", SIM_RT(cudaStreamWaitEvent_v3020));
}

SIM_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	(void)flags;
	return sim_stream_wait_event(stream, event, 1, "cudaStreamWaitEvent_ptsz",
				     SIM_RT(cudaStreamWaitEvent_ptsz_v7000));
}

/* ---- device, versions, errors ---------------------------------------------------------- */

SIM_EXPORT cudaError_t cudaDeviceReset(void)
{
	struct sim_call c;
	sim_enter(&c, "cudaDeviceReset", SIM_RT(cudaDeviceReset_v3020), SIM_DRV(cuDevicePrimaryCtxReset_v2));
	uint32_t wc;
	pthread_mutex_lock(&g_dev.mx);
	uint64_t t = sim_device_tail(&wc);
	pthread_mutex_unlock(&g_dev.mx);
	sim_wait_until(t);
	if (atomic_load_explicit(&g_ctx_alive, memory_order_relaxed)) {
		sim_context_event(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
		sim_context_event(CUPTI_CBID_RESOURCE_CONTEXT_CREATED); /* next use re-creates it */
	}
	sim_spin_until(c.start + g_cfg.api_ns);
	cudaError_t r = sim_exit(&c, cudaSuccess, 0);
	sim_truth_flush();
	return r;
}

SIM_EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
	SIM_SIMPLE("cudaGetDeviceCount", cudaGetDeviceCount_v3020, SIM_DRV(cuDeviceGetCount), {
		if (!count)
			r_ = cudaErrorInvalidValue;
		else
			*count = 1;
	});
}

SIM_EXPORT cudaError_t cudaSetDevice(int device)
{
	SIM_SIMPLE("cudaSetDevice", cudaSetDevice_v3020, 0, r_ = device == 0 ? cudaSuccess : cudaErrorInvalidDevice);
}

SIM_EXPORT cudaError_t cudaGetDevice(int *device)
{
	SIM_SIMPLE("cudaGetDevice", cudaGetDevice_v3020, SIM_DRV(cuCtxGetDevice), {
		if (!device)
			r_ = cudaErrorInvalidValue;
		else
			*device = 0;
	});
}

SIM_EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	SIM_SIMPLE("cudaGetDeviceProperties", cudaGetDeviceProperties_v12000, SIM_DRV(cuDeviceGetAttribute), {
		if (!prop) {
			r_ = cudaErrorInvalidValue;
		} else if (device != 0) {
			r_ = cudaErrorInvalidDevice;
		} else {
			memset(prop, 0, sizeof *prop);
			snprintf(prop->name, sizeof prop->name, "simcuda simulated GPU");
			prop->totalGlobalMem = 80ull << 30;
			prop->sharedMemPerBlock = 48 << 10;
			prop->regsPerBlock = 65536;
			prop->warpSize = 32;
			prop->maxThreadsPerBlock = 1024;
			prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
			prop->maxThreadsDim[2] = 64;
			prop->maxGridSize[0] = 0x7fffffff;
			prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
			prop->totalConstMem = 64 << 10;
			prop->major = 9;
			prop->minor = 0;
			prop->multiProcessorCount = 132;
			prop->concurrentKernels = 1;
			prop->asyncEngineCount = 2;
			prop->unifiedAddressing = 1;
			prop->maxThreadsPerMultiProcessor = 2048;
			prop->l2CacheSize = 50 << 20;
			prop->memoryBusWidth = 5120;
		}
	});
}

SIM_EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
	SIM_SIMPLE("cudaDeviceGetAttribute", cudaDeviceGetAttribute_v5000, SIM_DRV(cuDeviceGetAttribute), {
		if (!value || device != 0) {
			r_ = value ? cudaErrorInvalidDevice : cudaErrorInvalidValue;
		} else {
			switch (attr) {
			case cudaDevAttrMultiProcessorCount: *value = 132; break;
			case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
			case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
			case cudaDevAttrWarpSize: *value = 32; break;
			case cudaDevAttrMaxThreadsPerBlock: *value = 1024; break;
			default: *value = 0; break;
			}
		}
	});
}

SIM_EXPORT cudaError_t cudaDriverGetVersion(int *driverVersion)
{
	SIM_SIMPLE("cudaDriverGetVersion", cudaDriverGetVersion_v3020, SIM_DRV(cuDriverGetVersion), {
		if (!driverVersion)
			r_ = cudaErrorInvalidValue;
		else
			*driverVersion = CUDART_VERSION;
	});
}

SIM_EXPORT cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
	SIM_SIMPLE("cudaRuntimeGetVersion", cudaRuntimeGetVersion_v3020, 0, {
		if (!runtimeVersion)
			r_ = cudaErrorInvalidValue;
		else
			*runtimeVersion = CUDART_VERSION;
	});
}

SIM_EXPORT cudaError_t cudaGetLastError(void)
{
	cudaError_t e = t_last_error;
	t_last_error = cudaSuccess;
	struct sim_call c;
	sim_enter(&c, "cudaGetLastError", SIM_RT(cudaGetLastError_v3020), 0);
	sim_spin_until(c.start + g_cfg.api_ns);
	sim_exit(&c, cudaSuccess, 0);
	return e;
}

SIM_EXPORT cudaError_t cudaPeekAtLastError(void)
{
	cudaError_t e = t_last_error;
	struct sim_call c;
	sim_enter(&c, "cudaPeekAtLastError", SIM_RT(cudaPeekAtLastError_v3020), 0);
	sim_spin_until(c.start + g_cfg.api_ns);
	sim_exit(&c, cudaSuccess, 0);
	return e;
}

static const struct {
	cudaError_t e;
	const char *name, *text;
} sim_errors[] = {
	{cudaSuccess, "cudaSuccess", "no error"},
	{cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
	{cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
	{cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
	{cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol"},
	{cudaErrorMissingConfiguration, "cudaErrorMissingConfiguration",
	 "__global__ function call is not configured"},
	{cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
	{cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
	{cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
	{cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
	{cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
	 "CUDA driver version is insufficient for CUDA runtime version"},
	{cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
};

SIM_EXPORT const char *cudaGetErrorString(cudaError_t error)
{
	for (size_t i = 0; i < sizeof sim_errors / sizeof *sim_errors; i++)
		if (sim_errors[i].e == error)
			return sim_errors[i].text;
	return "unrecognized error code";
}

SIM_EXPORT const char *cudaGetErrorName(cudaError_t error)
{
	for (size_t i = 0; i < sizeof sim_errors / sizeof *sim_errors; i++)
		if (sim_errors[i].e == error)
			return sim_errors[i].name;
	return "cudaErrorUnknown";
}

SIM_EXPORT cudaError_t cudaProfilerStart(void)
{
	SIM_SIMPLE("cudaProfilerStart", cudaProfilerStart_v4000, SIM_DRV(cuProfilerStart), (void)0);
}

SIM_EXPORT cudaError_t cudaProfilerStop(void)
{
	SIM_SIMPLE("cudaProfilerStop", cudaProfilerStop_v4000, SIM_DRV(cuProfilerStop), (void)0);
}

/* ---- CUDA graphs: stream capture, instantiate, launch (same translation unit) ---------- */

#include "sim_graph.c"
