// report_profiler.cu — a program that marks what to profile with
// cudaProfilerStart/Stop, for the report's capture-window tests
// (tests/e2e/test_report_windows.sh, GPUPHASE_ITER_MARKER=profiler): work
// before, between and after the Start..Stop ranges is not captured, and the
// report must take wall, idle, stages and every phase over the ranges only.
//   before    WARM iterations of pw_a (+ cudaDeviceSynchronize)
//   RANGES x  cudaProfilerStart; STEPS iterations of pw_a, pw_b, a small
//             device-to-host copy and cudaDeviceSynchronize;
//             cudaProfilerStop; GAP uncaptured iterations of pw_a
// Cost model: report_profiler.simcuda. Stdout: one line.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define WARM 4
#define RANGES 3
#define STEPS 6
#define GAP 5

__global__ void pw_a(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void pw_b(float *x) { x[threadIdx.x] *= 0.5f; }

#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

int main(void)
{
	float *d, host[64];
	CK(cudaMalloc(&d, 64 * sizeof(float)));
	for (int i = 0; i < WARM; i++) {
		pw_a<<<1, 32>>>(d);
		CK(cudaDeviceSynchronize());
	}
	for (int r = 0; r < RANGES; r++) {
		CK(cudaProfilerStart());
		for (int i = 0; i < STEPS; i++) {
			pw_a<<<1, 32>>>(d);
			pw_b<<<1, 32>>>(d);
			CK(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost));
			CK(cudaDeviceSynchronize());
		}
		CK(cudaProfilerStop());
		for (int i = 0; i < GAP; i++) {
			pw_a<<<1, 32>>>(d);
			CK(cudaDeviceSynchronize());
		}
	}
	CK(cudaFree(d));
	printf("report_profiler: ranges=%d steps=%d ok\n", RANGES, STEPS);
	return 0;
}
