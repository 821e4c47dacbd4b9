/*
 * sim_truth_writer.c — the ground-truth file simcuda writes when SIMCUDA_TRUTH names
 * a path (each "%p" in it the process id): JSON Lines, one line per API call ("api"), per GPU op ("kernel",
 * "memcpy", "memset"), per interval a host thread blocked on GPU work
 * ("sync"), per run of a host function on a stream ("hostfn"), per interval CUPTI itself spent inside an API call
 * ("overhead"), per setting of CUPTI's clock error ("gpu_clock"), per flip
 * of a CUPTI activity switch ("cupti_kind"), per stream its device
 * ("stream") and, per function, simcuda's own
 * time in calls outside their intervals ("outside"). The format is simcuda's
 * contract with the tests (docs/simcuda.md "Ground truth"; sim_truth_reader.c reads
 * it back): every line type has its writer here, so the format lives in one
 * place.
 *
 * Callers: the runtime's files, on application threads, any number at once;
 * libcupti's switch hook (sim_truth_cupti_kind, on the client's thread,
 * libcupti's lock held: that lock before g_truth.mx, never the reverse);
 * the exit handler (flush). g_truth.mx guards the FILE, so lines never
 * interleave. Opened once at driver start (sim_call.c), before any line is
 * written; without SIMCUDA_TRUTH every writer returns at once.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_cudart.h"

static struct {
	pthread_mutex_t mx;
	FILE *f;
} g_truth = {.mx = PTHREAD_MUTEX_INITIALIZER};

int sim_truth_open(const char *pattern)
{
	/* "%p" is this process's id: each process of a run (fork children
	 * that start CUDA on their own) writes a truth of its own */
	char path[4096];
	size_t o = 0;
	for (const char *c = pattern; *c; c++) {
		int n = c[0] == '%' && c[1] == 'p' ? snprintf(path + o, sizeof path - o, "%ld", (long)getpid())
						   : snprintf(path + o, sizeof path - o, "%c", *c);
		if (n < 0 || (size_t)n >= sizeof path - o)
			return -ENAMETOOLONG;
		o += (size_t)n;
		if (c[0] == '%' && c[1] == 'p')
			c++;
	}
	g_truth.f = fopen(path, "w");
	if (!g_truth.f)
		return -errno;
	setvbuf(g_truth.f, NULL, _IOFBF, 1 << 16);
	return 0;
}

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

/*
 * simcuda's own time inside each API call outside the call's truth interval
 * (its entry before `start`, and after `end` its records, truth line and
 * callbacks: work a real runtime does not do, or does inside its records),
 * summed per function name: each thread adds to a table of its own (never
 * freed: a thread's sums outlive it), sim_truth_flush sums the tables by name
 * into "outside" lines. The counters are written by their thread and read by
 * the flush with relaxed atomics; the list of tables is under g_outside.mx.
 */
#define SIM_OUTSIDE_NAMES 128
struct sim_outside_table {
	struct sim_outside_table *next;
	struct {
		const char *name; /* a string literal of the runtime's: compared by address */
		uint64_t calls, ns;
	} e[SIM_OUTSIDE_NAMES];
};
static struct {
	pthread_mutex_t mx;
	struct sim_outside_table *list;
} g_outside = {.mx = PTHREAD_MUTEX_INITIALIZER};
static __thread struct sim_outside_table *t_outside;

void sim_truth_outside_add(const char *name, uint64_t ns)
{
	if (!g_truth.f)
		return;
	struct sim_outside_table *t = t_outside;
	if (!t) {
		t = calloc(1, sizeof *t);
		if (!t)
			return;
		pthread_mutex_lock(&g_outside.mx);
		t->next = g_outside.list;
		g_outside.list = t;
		pthread_mutex_unlock(&g_outside.mx);
		t_outside = t;
	}
	/* open addressing by the name's address */
	size_t h = ((uintptr_t)name >> 4) % SIM_OUTSIDE_NAMES;
	for (size_t i = 0; i < SIM_OUTSIDE_NAMES; i++, h = (h + 1) % SIM_OUTSIDE_NAMES) {
		const char *n = __atomic_load_n(&t->e[h].name, __ATOMIC_ACQUIRE);
		if (!n)
			__atomic_store_n(&t->e[h].name, n = name, __ATOMIC_RELEASE);
		if (n == name) {
			__atomic_store_n(&t->e[h].calls, t->e[h].calls + 1, __ATOMIC_RELAXED);
			__atomic_store_n(&t->e[h].ns, t->e[h].ns + ns, __ATOMIC_RELAXED);
			return;
		}
	}
}

/* The "outside" lines: every thread's sums so far, by name (cumulative: a
 * later flush writes them again, larger; readers keep the last line of a
 * name). Caller holds g_truth.mx. */
static void sim_truth_outside_lines(void)
{
	struct {
		const char *name;
		uint64_t calls, ns;
	} sum[SIM_OUTSIDE_NAMES];
	size_t n = 0;
	pthread_mutex_lock(&g_outside.mx);
	for (struct sim_outside_table *t = g_outside.list; t; t = t->next) {
		for (size_t i = 0; i < SIM_OUTSIDE_NAMES; i++) {
			const char *name = __atomic_load_n(&t->e[i].name, __ATOMIC_ACQUIRE);
			if (!name)
				continue;
			size_t k = 0;
			while (k < n && strcmp(sum[k].name, name))
				k++;
			if (k == n) {
				if (n == SIM_OUTSIDE_NAMES)
					continue;
				sum[n++] = (__typeof__(sum[0])){.name = name};
			}
			sum[k].calls += __atomic_load_n(&t->e[i].calls, __ATOMIC_RELAXED);
			sum[k].ns += __atomic_load_n(&t->e[i].ns, __ATOMIC_RELAXED);
		}
	}
	pthread_mutex_unlock(&g_outside.mx);
	for (size_t k = 0; k < n; k++)
		fprintf(g_truth.f, "{\"type\":\"outside\",\"name\":\"%s\",\"calls\":%llu,\"ns\":%llu}\n", sum[k].name,
			(unsigned long long)sum[k].calls, (unsigned long long)sum[k].ns);
}

void sim_truth_flush(void)
{
	pthread_mutex_lock(&g_truth.mx);
	if (g_truth.f) {
		sim_truth_outside_lines();
		fflush(g_truth.f);
	}
	pthread_mutex_unlock(&g_truth.mx);
}

void sim_truth_api(const char *name, uint32_t tid, uint64_t start, uint64_t end, uint64_t rec, uint32_t corr,
		   uint64_t write_rt, uint64_t write_drv)
{
	if (!write_rt && !write_drv) {
		sim_truth("{\"type\":\"api\",\"name\":\"%s\",\"tid\":%u,\"start\":%llu,\"end\":%llu,\"rec\":%llu,"
			  "\"corr\":%u}\n",
			  name, tid, (unsigned long long)start, (unsigned long long)end, (unsigned long long)rec, corr);
		return;
	}
	sim_truth("{\"type\":\"api\",\"name\":\"%s\",\"tid\":%u,\"start\":%llu,\"end\":%llu,\"rec\":%llu,"
		  "\"corr\":%u,\"cupti_write_rt\":%llu,\"cupti_write_drv\":%llu}\n",
		  name, tid, (unsigned long long)start, (unsigned long long)end, (unsigned long long)rec, corr,
		  (unsigned long long)write_rt, (unsigned long long)write_drv);
}

/* An activity kind (cbid < 0) or one cbid's API records (kind RUNTIME or
 * DRIVER) switched on or off at t; libcupti's lock is held (its lines come
 * in the order of the switches). */
void sim_truth_cupti_kind(const char *kind, int cbid, int on, uint64_t t)
{
	if (cbid < 0)
		sim_truth("{\"type\":\"cupti_kind\",\"kind\":\"%s\",\"on\":%d,\"t\":%llu}\n", kind, on,
			  (unsigned long long)t);
	else
		sim_truth("{\"type\":\"cupti_kind\",\"kind\":\"%s\",\"cbid\":%d,\"on\":%d,\"t\":%llu}\n", kind,
			  cbid, on, (unsigned long long)t);
}

void sim_truth_stream(uint32_t stream, int device)
{
	sim_truth("{\"type\":\"stream\",\"stream\":%u,\"device\":%d}\n", stream, device);
}

/* A kernel's corr is its launch call's: api_corr repeats it. */
void sim_truth_kernel(const char *name, uint32_t stream, uint64_t start, uint64_t end, uint32_t corr)
{
	sim_truth("{\"type\":\"kernel\",\"name\":\"%s\",\"stream\":%u,\"start\":%llu,\"end\":%llu,"
		  "\"corr\":%u,\"api_corr\":%u}\n",
		  name, stream, (unsigned long long)start, (unsigned long long)end, corr, corr);
}

/* A host function (cudaLaunchHostFunc, cudaStreamAddCallback): when it ran
 * on the host, holding its stream; corr is its call's. The program's
 * function by the object that holds it and its address there and in memory
 * (a static function has no dynamic symbol: a test names it from the
 * object's symbol table). */
void sim_truth_hostfn(const char *call, const void *fn, uint32_t stream, uint64_t start, uint64_t end,
		      uint32_t corr)
{
	Dl_info di;
	memset(&di, 0, sizeof di);
	if (!dladdr(fn, &di) || !di.dli_fname)
		di.dli_fname = "";
	uintptr_t at = (uintptr_t)fn, base = (uintptr_t)di.dli_fbase;
	sim_truth("{\"type\":\"hostfn\",\"call\":\"%s\",\"stream\":%u,\"start\":%llu,\"end\":%llu,"
		  "\"corr\":%u,\"fn_object\":\"%s\",\"fn_offset\":%llu,\"fn_addr\":%llu}\n",
		  call, stream, (unsigned long long)start, (unsigned long long)end, corr, di.dli_fname,
		  (unsigned long long)(at - base), (unsigned long long)at);
}

/* "replay": the passes CUPTI's range profiler replayed the launch for
 * (sim_replay.c); start..end spans every pass. */
void sim_truth_kernel_replay(const char *name, uint32_t stream, uint64_t start, uint64_t end, uint32_t corr,
			     unsigned replay)
{
	sim_truth("{\"type\":\"kernel\",\"name\":\"%s\",\"stream\":%u,\"start\":%llu,\"end\":%llu,"
		  "\"corr\":%u,\"api_corr\":%u,\"replay\":%u}\n",
		  name, stream, (unsigned long long)start, (unsigned long long)end, corr, corr, replay);
}

/* "graph"/"node": the ids CUPTI reports (the instantiated clone's);
 * "graph_orig"/"node_orig": the captured ones; "capture_corr": the
 * correlation id of the launch call that was captured. */
void sim_truth_graph_kernel(const char *name, uint32_t stream, uint64_t start, uint64_t end,
			    uint32_t corr, const struct sim_truth_node *n)
{
	sim_truth("{\"type\":\"kernel\",\"name\":\"%s\",\"stream\":%u,\"start\":%llu,\"end\":%llu,"
		  "\"corr\":%u,\"api_corr\":%u,\"graph\":%u,\"node\":%llu,\"graph_orig\":%u,"
		  "\"node_orig\":%llu,\"capture_corr\":%u}\n",
		  name, stream, (unsigned long long)start, (unsigned long long)end, corr, corr, n->graph,
		  (unsigned long long)n->node, n->graph_orig, (unsigned long long)n->node_orig,
		  n->capture_corr);
}

/* Host time the simulated CUPTI spent inside API call api_corr (its
 * instrumentation: cupti_api_overhead_ns, cupti_launch_overhead_ns). */
/* A GPU-side host time t is delivered in CUPTI's records as
 * t + offset_ns + round((t - origin) * drift_ppm / 1e6) (sim_cupti_buffers.c's
 * sim_gpu_time). Written at driver start and after each clock rebase. */
void sim_truth_gpu_clock(int64_t offset_ns, double drift_ppm, uint64_t origin)
{
	sim_truth("{\"type\":\"gpu_clock\",\"offset_ns\":%lld,\"drift_ppm\":%.17g,\"origin\":%llu}\n",
		  (long long)offset_ns, drift_ppm, (unsigned long long)origin);
}

void sim_truth_overhead(uint32_t tid, uint64_t start, uint64_t end, uint32_t api_corr)
{
	sim_truth("{\"type\":\"overhead\",\"tid\":%u,\"start\":%llu,\"end\":%llu,\"api_corr\":%u}\n", tid,
		  (unsigned long long)start, (unsigned long long)end, api_corr);
}

/* kind: device, stream, event, memcpy or memset; pageable_copy, free,
 * free_host, host_alloc or queue_full (docs/simcuda.md "Real-CUDA
 * behaviours"); waited_corr 0 = nothing was outstanding when the call began. */
void sim_truth_sync(const char *kind, uint32_t tid, uint64_t start, uint64_t end, uint32_t api_corr,
		    uint32_t waited_corr)
{
	sim_truth("{\"type\":\"sync\",\"kind\":\"%s\",\"tid\":%u,\"start\":%llu,\"end\":%llu,"
		  "\"api_corr\":%u,\"waited_corr\":%u}\n",
		  kind, tid, (unsigned long long)start, (unsigned long long)end, api_corr, waited_corr);
}

void sim_truth_memset(uint32_t stream, uint64_t start, uint64_t end, uint32_t corr, uint32_t api_corr,
		      uint64_t bytes)
{
	sim_truth("{\"type\":\"memset\",\"name\":\"memset\",\"stream\":%u,\"start\":%llu,\"end\":%llu,"
		  "\"corr\":%u,\"api_corr\":%u,\"bytes\":%llu}\n",
		  stream, (unsigned long long)start, (unsigned long long)end, corr, api_corr,
		  (unsigned long long)bytes);
}

/* kind: HtoD, DtoH, DtoD, PtoP or HtoH; the name is "memcpy<kind>". */
void sim_truth_memcpy(const char *kind, uint32_t stream, uint64_t start, uint64_t end, uint32_t corr,
		      uint32_t api_corr, uint64_t bytes, int host_pageable)
{
	char host[24] = "";
	if (host_pageable >= 0)
		snprintf(host, sizeof host, ",\"pageable\":%d", host_pageable);
	sim_truth("{\"type\":\"memcpy\",\"name\":\"memcpy%s\",\"kind\":\"%s\",\"stream\":%u,"
		  "\"start\":%llu,\"end\":%llu,\"corr\":%u,\"api_corr\":%u,\"bytes\":%llu%s}\n",
		  kind, kind, stream, (unsigned long long)start, (unsigned long long)end, corr, api_corr,
		  (unsigned long long)bytes, host);
}

void sim_truth_cupti_config(int overhead_records)
{
	sim_truth("{\"type\":\"cupti_config\",\"overhead_records\":%d}\n", overhead_records);
}
