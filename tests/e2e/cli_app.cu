// cli_app.cu — a tiny CUDA program for the `gpuphase` command's tests
// (tests/e2e/test_cli_*.sh, build/tests/test_cli_elf). Built twice by
// tests/module.mk: with `nvcc -cudart shared` (hookable) and with
// `nvcc -cudart static` (injection only), so the tests can check that
// `gpuphase record` tells the two apart before running them.
//
// Usage: cli_app [EXIT_CODE [ITERS]] — runs ITERS iterations (default 20) of
// copy in, two kernels, copy out, device synchronize; then exits with
// EXIT_CODE (default 0) whatever CUDA said, so exit status passthrough can be
// tested even where CUDA is unavailable (a static cudart finds no driver on a
// machine without a GPU). CUDA errors are reported on stderr only. With
// CLI_APP_SHOW_ENV set it first prints LD_PRELOAD and CUDA_INJECTION64_PATH
// ("(unset)" when absent), so tests see what `gpuphase record` gave it.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void cli_scale(float *x, int n, float a)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}

__global__ void cli_shift(float *x, int n, float b)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += b;
}

int main(int argc, char **argv)
{
	if (getenv("CLI_APP_SHOW_ENV")) {
		const char *p = getenv("LD_PRELOAD"), *i = getenv("CUDA_INJECTION64_PATH");
		printf("LD_PRELOAD=%s\nCUDA_INJECTION64_PATH=%s\n", p ? p : "(unset)", i ? i : "(unset)");
		fflush(stdout);
	}
	int code = argc > 1 ? atoi(argv[1]) : 0;
	int iters = argc > 2 ? atoi(argv[2]) : 20;
	const int n = 1024;
	float host[n];
	for (int i = 0; i < n; i++)
		host[i] = (float)i;
	float *dev = NULL;
	cudaError_t e = cudaMalloc(&dev, n * sizeof(float));
	if (e != cudaSuccess) {
		fprintf(stderr, "cli_app: cudaMalloc: %s\n", cudaGetErrorString(e));
		return code;
	}
	for (int it = 0; it < iters; it++) {
		cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice);
		cli_scale<<<(n + 255) / 256, 256>>>(dev, n, 2.0f);
		cli_shift<<<(n + 255) / 256, 256>>>(dev, n, 1.0f);
		cudaMemcpy(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost);
		cudaDeviceSynchronize();
	}
	e = cudaGetLastError();
	if (e != cudaSuccess)
		fprintf(stderr, "cli_app: %s\n", cudaGetErrorString(e));
	cudaFree(dev);
	printf("cli_app: %d iterations\n", iters);
	return code;
}
