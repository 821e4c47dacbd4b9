// counters_run.cu — end-to-end scenario for the roofline: copies of known
// sizes over each link and three kernels whose cost models make them
// memory-heavy (stream_k), compute-heavy (fma_k) and neither (tiny_k);
// tests/e2e/test_counters_e2e.sh runs it on simcuda with
// tests/e2e/counters_run.simcuda and checks the report against the truth.
//
//   copies    NCOPY async HtoD copies of COPY_BYTES from pinned memory, then
//             2 device-to-device copies and 2 sets of 2 x COPY_BYTES, and
//             2 synchronous DtoH copies of COPY_BYTES (pinned)
//   kernels   ITERS iterations of stream_k, fma_k, tiny_k, each iteration
//             ended by cudaDeviceSynchronize
//   threads   (argument "threads") instead: NTHREADS host threads, each on
//             its own non-blocking stream, launch the three kernels ITERS
//             times at once: while a sampled launch is replayed no other
//             thread's launch may fall into its profiling range
// No host twins: the kernels only cost time (their device code is what a
// GPU would run: stream_k reads and writes N floats, fma_k runs REPS
// dependent FMAs per thread). Stdout: one line.
#include <cstdio>
#include <cstring>
#include <pthread.h>
#include <cuda_runtime.h>

#define COPY_BYTES (8u << 20)
#define NCOPY 4
#define ITERS 12
#define N (1 << 22)
#define REPS 65536
#define NTHREADS 4

#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

__global__ void stream_k(const float *a, float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		b[i] = 2.0f * a[i];
}

__global__ void fma_k(float *x, int reps)
{
	float v = x[threadIdx.x], w = 1.0001f;
	for (int r = 0; r < reps; r++)
		v = fmaf(v, w, 0.5f);
	x[threadIdx.x] = v;
}

__global__ void tiny_k(float *x) { x[0] = 1.0f; }

static float *g_a, *g_b;

static void *launcher(void *arg)
{
	(void)arg;
	cudaStream_t s;
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
		return (void *)1;
	for (int it = 0; it < ITERS; it++) {
		stream_k<<<N / 256, 256, 0, s>>>(g_a, g_b, N);
		fma_k<<<132, 256, 0, s>>>(g_b, REPS);
		tiny_k<<<1, 1, 0, s>>>(g_b);
	}
	if (cudaStreamSynchronize(s) != cudaSuccess || cudaStreamDestroy(s) != cudaSuccess)
		return (void *)1;
	return NULL;
}

static int threads_main(void)
{
	CK(cudaMalloc(&g_a, 2 * COPY_BYTES));
	CK(cudaMalloc(&g_b, 2 * COPY_BYTES));
	CK(cudaDeviceSynchronize()); /* a hooked call: the profiler starts before the threads do */
	pthread_t t[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, launcher, NULL))
			return 1;
	int bad = 0;
	for (int i = 0; i < NTHREADS; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad |= r != NULL;
	}
	CK(cudaDeviceSynchronize());
	CK(cudaFree(g_a));
	CK(cudaFree(g_b));
	printf("counters_run: %d threads x %d iterations done\n", NTHREADS, ITERS);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "threads"))
		return threads_main();
	char *host;
	float *a, *b;
	CK(cudaMallocHost(&host, COPY_BYTES));
	CK(cudaMalloc(&a, 2 * COPY_BYTES));
	CK(cudaMalloc(&b, 2 * COPY_BYTES));
	for (int i = 0; i < NCOPY; i++)
		CK(cudaMemcpyAsync(a, host, COPY_BYTES, cudaMemcpyHostToDevice, 0));
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < 2; i++) {
		CK(cudaMemcpyAsync(b, a, 2 * COPY_BYTES, cudaMemcpyDeviceToDevice, 0));
		CK(cudaMemsetAsync(b, 0, 2 * COPY_BYTES, 0));
	}
	CK(cudaDeviceSynchronize());
	for (int it = 0; it < ITERS; it++) {
		stream_k<<<N / 256, 256>>>(a, b, N);
		fma_k<<<132, 256>>>(b, REPS);
		tiny_k<<<1, 1>>>(b);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
	}
	for (int i = 0; i < 2; i++)
		CK(cudaMemcpy(host, b, COPY_BYTES, cudaMemcpyDeviceToHost));
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFreeHost(host));
	printf("counters_run: %d iterations done\n", ITERS);
	return 0;
}
