/*
 * sim_truth.c — the ground-truth file simcuda writes when SIMCUDA_TRUTH names
 * a path: JSON Lines, one line per API call ("api"), per GPU op ("kernel",
 * "memcpy", "memset"), per interval a host thread blocked on GPU work
 * ("sync"), per interval CUPTI itself spent inside an API call
 * ("overhead") and per setting of CUPTI's clock error ("gpu_clock"). The format is simcuda's contract with the tests (docs/simcuda.md
 * "Ground truth"; simtruth.c reads it back): every line type has its writer
 * here, so the format lives in one place.
 *
 * Callers: the runtime's files, on application threads, any number at once;
 * the exit handler (flush). g_truth.mx guards the FILE, so lines never
 * interleave. Opened once at driver start (sim_call.c), before any line is
 * written; without SIMCUDA_TRUTH every writer returns at once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "sim_cudart.h"

static struct {
	pthread_mutex_t mx;
	FILE *f;
} g_truth = {.mx = PTHREAD_MUTEX_INITIALIZER};

int sim_truth_open(const char *path)
{
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

void sim_truth_flush(void)
{
	pthread_mutex_lock(&g_truth.mx);
	if (g_truth.f)
		fflush(g_truth.f);
	pthread_mutex_unlock(&g_truth.mx);
}

void sim_truth_api(const char *name, uint32_t tid, uint64_t start, uint64_t end, uint32_t corr, uint64_t write_rt,
		   uint64_t write_drv)
{
	if (!write_rt && !write_drv) {
		sim_truth("{\"type\":\"api\",\"name\":\"%s\",\"tid\":%u,\"start\":%llu,\"end\":%llu,\"corr\":%u}\n",
			  name, tid, (unsigned long long)start, (unsigned long long)end, corr);
		return;
	}
	sim_truth("{\"type\":\"api\",\"name\":\"%s\",\"tid\":%u,\"start\":%llu,\"end\":%llu,\"corr\":%u,"
		  "\"cupti_write_rt\":%llu,\"cupti_write_drv\":%llu}\n",
		  name, tid, (unsigned long long)start, (unsigned long long)end, corr, (unsigned long long)write_rt,
		  (unsigned long long)write_drv);
}

/* A kernel's corr is its launch call's: api_corr repeats it. */
void sim_truth_kernel(const char *name, uint32_t stream, uint64_t start, uint64_t end, uint32_t corr)
{
	sim_truth("{\"type\":\"kernel\",\"name\":\"%s\",\"stream\":%u,\"start\":%llu,\"end\":%llu,"
		  "\"corr\":%u,\"api_corr\":%u}\n",
		  name, stream, (unsigned long long)start, (unsigned long long)end, corr, corr);
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
 * t + offset_ns + round((t - origin) * drift_ppm / 1e6) (sim_cupti.c's
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
		      uint32_t api_corr, uint64_t bytes)
{
	sim_truth("{\"type\":\"memcpy\",\"name\":\"memcpy%s\",\"kind\":\"%s\",\"stream\":%u,"
		  "\"start\":%llu,\"end\":%llu,\"corr\":%u,\"api_corr\":%u,\"bytes\":%llu}\n",
		  kind, kind, stream, (unsigned long long)start, (unsigned long long)end, corr, api_corr,
		  (unsigned long long)bytes);
}
