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
// unrecorded. Used by tests/e2e/test_report_host_callback.sh.
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

static void hc_sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&ts, &ts))
		;
}

static void CUDART_CB cb_slow(void *p)
{
	struct hc_arg *a = (struct hc_arg *)p;
	a->calls++;
	hc_sleep_us(HC_SLEEP_US);
}

static void CUDART_CB cb_stream(cudaStream_t s, cudaError_t status, void *p)
{
	struct hc_arg *a = (struct hc_arg *)p;
	if (s != a->stream || status != cudaSuccess)
		a->calls += 100; /* wrong stream or status: fails the count */
	a->calls++;
	hc_sleep_us(HC_SLEEP_US / 2);
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
	printf("host_callback: %s\n", bad ? "FAILED" : "OK");
	return bad;
}
