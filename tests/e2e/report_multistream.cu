// report_multistream.cu — two non-blocking streams whose kernels overlap,
// for gpuphase-report's end-to-end test: GPU busy must be the union of the
// op intervals (less than their plain sum), never the sum. Each step puts a
// 400 us kernel on stream A and a 300 us kernel on stream B (cost model
// report_multistream.simcuda), then synchronizes the device.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

__global__ void ms_kernel_a(int *x) { x[0] += 1; }
__global__ void ms_kernel_b(int *x) { x[1] += 1; }

#define CK(call)                                                                          \
	do {                                                                              \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
			exit(1);                                                          \
		}                                                                         \
	} while (0)

int main(void)
{
	int *d;
	cudaStream_t a, b;
	CK(cudaMalloc(&d, 4 * sizeof(int)));
	CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	for (int i = 0; i < 10; i++) {
		ms_kernel_a<<<1, 1, 0, a>>>(d);
		ms_kernel_b<<<1, 1, 0, b>>>(d);
		CK(cudaStreamSynchronize(b));
		CK(cudaDeviceSynchronize());
	}
	CK(cudaStreamDestroy(a));
	CK(cudaStreamDestroy(b));
	CK(cudaFree(d));
	printf("report_multistream: ok\n");
	return 0;
}
