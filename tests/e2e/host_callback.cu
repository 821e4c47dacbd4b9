// host_callback.cu — a simpleCallback-like program (NVIDIA's sample, cut
// down): pinned buffers, async copies on a stream, a host function that
// sleeps enqueued after them, then a wait. Per step: H2D copy, a kernel, a
// D2H copy, cudaLaunchHostFunc(cb_slow) sleeping HC_SLEEP_US, then
// cudaHostAlloc (an implicit synchronization: it waits for the device,
// callback included); then D2H copy, cudaStreamAddCallback(cb_stream)
// sleeping half as long, then cudaDeviceSynchronize. Each callback checks it
// got its own argument (and the stream callback its stream and
// cudaSuccess) and counts its calls; the program fails unless each ran
// exactly once. First, HC_REFUSED calls CUDA refuses (a stream callback
// with flags 1, a host function NULL) must return cudaErrorInvalidValue and
// never run anything: more than the profiler's pool of pending callbacks
// (4096), so a slot a refused call kept would leave later callbacks
// unrecorded. With HC_RUNS=FILE each callback's own run (its first and last
// clock reads) is written there. Used by tests/e2e/test_report_host_callback.sh.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cuda_runtime.h>

#define HC_STEPS 4
#define HC_SLEEP_US 3000
#define HC_N (1 << 16)
#define HC_REFUSED 5000

struct hc_arg {
	int step, calls;
	cudaStream_t stream;
};

/* Each callback's own run, read by the function itself first and last
 * (CLOCK_MONOTONIC_RAW: the trace's clock, and simcuda's under the
 * library's CUPTI timestamp callback): with HC_RUNS=FILE, written there at
 * the end, a JSON line each, for the truth check (the least a report may
 * give a callback's run: what the function itself saw). */
static unsigned long long hc_runs[2 * HC_STEPS + 8][2];
static int hc_nruns;

static unsigned long long hc_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC_RAW, &t);
	return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static void hc_ran(unsigned long long t0)
{
	unsigned long long t1 = hc_now();
	int i = __atomic_fetch_add(&hc_nruns, 1, __ATOMIC_RELAXED);
	if (i < (int)(sizeof hc_runs / sizeof hc_runs[0])) {
		hc_runs[i][0] = t0;
		hc_runs[i][1] = t1;
	}
}

static void hc_write_runs(void)
{
	const char *path = getenv("HC_RUNS");
	FILE *f = path ? fopen(path, "w") : NULL;
	if (!f)
		return;
	int cap = (int)(sizeof hc_runs / sizeof hc_runs[0]), n = hc_nruns < cap ? hc_nruns : cap;
	for (int i = 0; i < n; i++)
		fprintf(f, "{\"type\":\"fn_run\",\"start\":%llu,\"end\":%llu}\n", hc_runs[i][0], hc_runs[i][1]);
	fclose(f);
}

static void hc_sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&ts, &ts))
		;
}

static void CUDART_CB cb_slow(void *p)
{
	unsigned long long t0 = hc_now();
	struct hc_arg *a = (struct hc_arg *)p;
	a->calls++;
	hc_sleep_us(HC_SLEEP_US);
	hc_ran(t0);
}

static void CUDART_CB cb_stream(cudaStream_t s, cudaError_t status, void *p)
{
	unsigned long long t0 = hc_now();
	struct hc_arg *a = (struct hc_arg *)p;
	if (s != a->stream || status != cudaSuccess)
		a->calls += 100; /* wrong stream or status: fails the count */
	a->calls++;
	hc_sleep_us(HC_SLEEP_US / 2);
	hc_ran(t0);
}

__global__ void hc_incr(int *v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		v[i] += 1;
}

#define CK(x)                                                                                  \
	do {                                                                                   \
		cudaError_t e_ = (x);                                                          \
		if (e_ != cudaSuccess) {                                                       \
			fprintf(stderr, "host_callback: %s: %s\n", #x, cudaGetErrorString(e_)); \
			return 1;                                                              \
		}                                                                              \
	} while (0)

int main(void)
{
	cudaStream_t s;
	int *h, *d;
	struct hc_arg slow[HC_STEPS] = {}, strm[HC_STEPS] = {};
	CK(cudaStreamCreate(&s));
	CK(cudaHostAlloc((void **)&h, HC_N * sizeof *h, cudaHostAllocDefault));
	CK(cudaMalloc((void **)&d, HC_N * sizeof *d));
	for (int i = 0; i < HC_N; i++)
		h[i] = i;
	struct hc_arg never = {};
	for (int i = 0; i < HC_REFUSED; i++) {
		cudaError_t a = cudaStreamAddCallback(s, cb_stream, &never, 1);
		cudaError_t b = cudaLaunchHostFunc(s, NULL, &never);
		if (a != cudaErrorInvalidValue || b != cudaErrorInvalidValue) {
			fprintf(stderr, "host_callback: refused calls returned %d and %d, not cudaErrorInvalidValue\n",
				(int)a, (int)b);
			return 1;
		}
	}
	(void)cudaGetLastError();
	for (int k = 0; k < HC_STEPS; k++) {
		slow[k].step = strm[k].step = k;
		strm[k].stream = s;
		CK(cudaMemcpyAsync(d, h, HC_N * sizeof *h, cudaMemcpyHostToDevice, s));
		hc_incr<<<(HC_N + 255) / 256, 256, 0, s>>>(d, HC_N);
		CK(cudaMemcpyAsync(h, d, HC_N * sizeof *h, cudaMemcpyDeviceToHost, s));
		CK(cudaLaunchHostFunc(s, cb_slow, &slow[k]));
		int *extra;
		CK(cudaHostAlloc((void **)&extra, 4096, cudaHostAllocDefault)); /* waits for the callback */
		CK(cudaMemcpyAsync(h, d, HC_N * sizeof *h, cudaMemcpyDeviceToHost, s));
		CK(cudaStreamAddCallback(s, cb_stream, &strm[k], 0));
		CK(cudaDeviceSynchronize());
		CK(cudaFreeHost(extra));
	}
	int bad = 0;
	if (never.calls) {
		fprintf(stderr, "host_callback: a refused callback ran %d times\n", never.calls);
		bad = 1;
	}
	for (int k = 0; k < HC_STEPS; k++)
		if (slow[k].calls != 1 || strm[k].calls != 1) {
			fprintf(stderr, "host_callback: step %d: cb_slow ran %d times, cb_stream %d (want 1, 1)\n", k,
				slow[k].calls, strm[k].calls);
			bad = 1;
		}
	CK(cudaFree(d));
	CK(cudaFreeHost(h));
	CK(cudaStreamDestroy(s));
	hc_write_runs();
	printf("host_callback: %s\n", bad ? "FAILED" : "OK");
	return bad;
}
