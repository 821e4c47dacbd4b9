// report_realcuda.cu — the real-CUDA behaviours simcuda models, for
// gpuphase-report's end-to-end test against the ground truth: each step puts
// a 500 us kernel on a stream, then copies from pageable host memory with
// cudaMemcpyAsync (which on a GPU blocks: it waits for the kernel, then
// copies), a short kernel, a copy back to pinned memory (stays async) and a
// stream synchronize; then kernels followed by cudaFree, cudaMallocHost and
// cudaFreeHost (implicit synchronization: each waits for the device); then
// 1000 kernels of 200 us back to back, which fill the launch queue (queue_depth
// 128 in the cost model): each launch then waits for a kernel to end. The
// final synchronize drains the 128 still queued (25.6 ms), which is sync
// (docs/metrics.md §3); the loop is long enough for its steady state to
// decide the verdict (execute above 80 %: compute-bound).
// Cost model: report_realcuda.simcuda.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__global__ void rc_long(int *x) { x[0] += 1; }
__global__ void rc_short(int *x) { x[1] += 1; }
__global__ void rc_gpu(int *x) { x[2] += 1; }

#define CK(call)                                                                          \
	do {                                                                              \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
			exit(1);                                                          \
		}                                                                         \
	} while (0)

enum { N = 64 * 1024 };

int main(void)
{
	int *d, *d2;
	char *pageable = (char *)malloc(N), *pinned;
	cudaStream_t s;
	if (!pageable)
		return 1;
	memset(pageable, 1, N);
	CK(cudaMalloc(&d, 4 * sizeof(int)));
	CK(cudaMalloc(&d2, N));
	CK(cudaMallocHost(&pinned, N));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int i = 0; i < 20; i++) {
		rc_long<<<1, 1, 0, s>>>(d);
		CK(cudaMemcpyAsync(d2, pageable, N, cudaMemcpyHostToDevice, s)); /* blocks: pageable */
		rc_short<<<1, 1, 0, s>>>(d);
		CK(cudaMemcpyAsync(pinned, d2, N, cudaMemcpyDeviceToHost, s)); /* async: pinned */
		CK(cudaStreamSynchronize(s));
	}
	for (int i = 0; i < 10; i++) {
		int *tmp;
		char *h;
		CK(cudaMalloc(&tmp, 256));
		rc_long<<<1, 1, 0, s>>>(d);
		CK(cudaFree(tmp)); /* waits for rc_long */
		rc_long<<<1, 1, 0, s>>>(d);
		CK(cudaMallocHost(&h, 4096)); /* waits for rc_long */
		rc_short<<<1, 1, 0, s>>>(d);
		CK(cudaFreeHost(h)); /* waits for rc_short */
	}
	CK(cudaStreamSynchronize(s));
	for (int i = 0; i < 1000; i++) /* GPU-bound: the launch queue fills up */
		rc_gpu<<<1, 1, 0, s>>>(d);
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));
	CK(cudaFreeHost(pinned));
	CK(cudaFree(d2));
	CK(cudaFree(d));
	free(pageable);
	printf("report_realcuda: ok\n");
	return 0;
}
