/*
 * nvtx_ranges.cu — NVTX-named operators for the real-GPU validation kit
 * (tests/gpu/run.sh, check "nvtx"): the C counterpart of PyTorch's
 * emit_nvtx, small enough to run on simcuda in CI as well as on a GPU.
 *
 * Each of STEPS steps opens the range "gp::step" and, nested inside it,
 * launches fill_k once under "gp::fill" and scale_k twice under "gp::scale";
 * then bump_k once directly under "gp::step". Grouped by the innermost NVTX
 * range, the report must therefore name exactly three operators:
 * gp::fill (STEPS kernels), gp::scale (2 * STEPS) and gp::step (STEPS).
 * NVTX is nvtx3 (header-only): the ranges reach a tool only through
 * NVTX_INJECTION64_PATH (nvtx3/nvtxDetail/nvtxInit.h).
 *
 * Usage: nvtx_ranges [STEPS] (default 50). stdout is deterministic (the
 * self-checked result); exit 0 ok, 1 CUDA error or wrong result, 2 bad
 * argument. Single-threaded, default stream.
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1024

#define CHECK(call)                                                            \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "nvtx_ranges: %s failed: %s\n", #call,  \
				cudaGetErrorString(e_));                       \
			return 1;                                              \
		}                                                              \
	} while (0)

__global__ void fill_k(unsigned *x, int n, unsigned v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = v + (unsigned)i;
}

__global__ void scale_k(unsigned *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= 3u;
}

__global__ void bump_k(unsigned *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 1u;
}

/* simcuda host twins (docs/simcuda.md): same effect on host-backed memory;
 * never called on a real GPU. */
extern "C" __attribute__((visibility("default"))) void
simcuda_kernel_fill_k(dim3 g, dim3 b, void **args)
{
	(void)g;
	(void)b;
	unsigned *x = *(unsigned **)args[0];
	int n = *(int *)args[1];
	unsigned v = *(unsigned *)args[2];
	for (int i = 0; i < n; i++)
		x[i] = v + (unsigned)i;
}
extern "C" __attribute__((visibility("default"))) void
simcuda_kernel_scale_k(dim3 g, dim3 b, void **args)
{
	(void)g;
	(void)b;
	unsigned *x = *(unsigned **)args[0];
	int n = *(int *)args[1];
	for (int i = 0; i < n; i++)
		x[i] *= 3u;
}
extern "C" __attribute__((visibility("default"))) void
simcuda_kernel_bump_k(dim3 g, dim3 b, void **args)
{
	(void)g;
	(void)b;
	unsigned *x = *(unsigned **)args[0];
	int n = *(int *)args[1];
	for (int i = 0; i < n; i++)
		x[i] += 1u;
}

int main(int argc, char **argv)
{
	long steps = 50;
	if (argc > 2) {
		fprintf(stderr, "usage: nvtx_ranges [STEPS]\n");
		return 2;
	}
	if (argc == 2) {
		char *end = NULL;
		errno = 0;
		steps = strtol(argv[1], &end, 10);
		if (errno || end == argv[1] || *end || steps < 1 || steps > 1000000) {
			fprintf(stderr, "nvtx_ranges: STEPS='%s': expected an integer from 1 to 1000000\n",
				argv[1]);
			return 2;
		}
	}
	unsigned *d, h[N];
	CHECK(cudaMalloc((void **)&d, sizeof h));
	for (long s = 0; s < steps; s++) {
		nvtxRangePushA("gp::step");
		nvtxRangePushA("gp::fill");
		fill_k<<<(N + 255) / 256, 256>>>(d, N, (unsigned)s);
		nvtxRangePop();
		nvtxRangePushA("gp::scale");
		scale_k<<<(N + 255) / 256, 256>>>(d, N);
		scale_k<<<(N + 255) / 256, 256>>>(d, N);
		nvtxRangePop();
		bump_k<<<(N + 255) / 256, 256>>>(d, N);
		nvtxRangePop();
	}
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
	CHECK(cudaFree(d));
	int bad = 0;
	unsigned sum = 0;
	for (int i = 0; i < N; i++) {
		unsigned want = ((unsigned)(steps - 1) + (unsigned)i) * 9u + 1u;
		bad += h[i] != want;
		sum += h[i];
	}
	printf("nvtx_ranges: steps=%ld checksum=%08x %s\n", steps, sum, bad ? "WRONG" : "ok");
	return bad ? 1 : 0;
}
