// launch_config.cu — kernels of known launch configurations for the launch
// configuration test (tests/e2e/test_launch_config.sh): what CUPTI's kernel
// records say must reach the trace, the report, its JSON, the SQLite export
// and the Chrome trace unchanged.
//   lc_tiny   10 x <<<1, 64>>>: one block on a device of 132 SMs (simcuda's)
//   lc_wide   10 x <<<(264, 2, 1), (128, 2, 1), 1024 B dynamic shared>>>,
//             96 registers and 4096 B static shared memory (its cost-model rule)
//   lc_mixed  5 x <<<4, 32>>> then 3 x <<<8, 32>>>: two configurations
// With LC_FORGE=1 in the environment lc_tiny is launched with 2 blocks: the
// test's tamper control, which its check must refuse.
// Cost model: launch_config.simcuda. Stdout: one line.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

__global__ void lc_tiny(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void lc_wide(float *x) { x[threadIdx.x] *= 2.0f; }
__global__ void lc_mixed(float *x) { x[threadIdx.x] -= 1.0f; }

static void check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "launch_config: %s: %s\n", what, cudaGetErrorString(e));
		exit(1);
	}
}

int main(void)
{
	float *x;
	check(cudaMalloc(&x, 4096 * sizeof(float)), "cudaMalloc");
	const char *forge = getenv("LC_FORGE");
	unsigned tiny = forge && forge[0] == '1' ? 2 : 1;
	for (int i = 0; i < 10; i++) {
		lc_tiny<<<tiny, 64>>>(x);
		lc_wide<<<dim3(264, 2, 1), dim3(128, 2, 1), 1024>>>(x);
	}
	for (int i = 0; i < 8; i++)
		lc_mixed<<<i < 5 ? 4 : 8, 32>>>(x);
	check(cudaGetLastError(), "launch");
	check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
	check(cudaFree(x), "cudaFree");
	printf("launch_config: 28 launches\n");
	return 0;
}
