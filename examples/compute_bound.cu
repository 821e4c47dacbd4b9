// compute_bound.cu — profile: COMPUTE-BOUND. A few long kernels back to back
// on one stream, one copy in and one copy out, a single synchronize at the
// end: the GPU is busy nearly all the time, host API time is negligible.
//
// Each kernel advances every element of a uint32 array by ITERS steps of an
// LCG (heavy integer work per thread on a GPU). The self-check recomputes
// sampled elements with a naive host loop and the full checksum with the
// jump-ahead form. Stdout: the result only (deterministic); stderr: timings.
#include "ex_common.h"

#define N (1 << 18)
#define ITERS 200000u
#define KERNELS 5

__global__ void heavy_lcg(uint32_t *x, int n, uint32_t iters)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	uint32_t v = x[i];
	for (uint32_t k = 0; k < iters; k++)
		v = lcg(v);
	x[i] = v;
}

// simcuda host twin of heavy_lcg (see ex_common.h): same result, jump-ahead.
extern "C" void simcuda_kernel_heavy_lcg(dim3 grid, dim3 block, void **args)
{
	uint32_t *x = *(uint32_t **)args[0];
	int n = *(int *)args[1];
	uint32_t iters = *(uint32_t *)args[2];
	long total = (long)grid.x * grid.y * grid.z * block.x * block.y * block.z;
	uint32_t a, c;
	lcg_jump(iters, &a, &c);
	for (long i = 0; i < n && i < total; i++)
		x[i] = a * x[i] + c;
}

int main(void)
{
	uint32_t *h = (uint32_t *)malloc(N * sizeof(uint32_t));
	uint32_t *d;
	for (int i = 0; i < N; i++)
		h[i] = (uint32_t)i * 2654435761u;
	cudaEvent_t e0, e1, e2;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	CK(cudaEventCreate(&e2));
	CK(cudaMalloc(&d, N * sizeof(uint32_t)));
	CK(cudaMemcpy(d, h, N * sizeof(uint32_t), cudaMemcpyHostToDevice));
	CK(cudaEventRecord(e0, 0));
	for (int k = 0; k < KERNELS; k++) {
		heavy_lcg<<<(N + 255) / 256, 256>>>(d, N, ITERS);
		CK(cudaGetLastError());
	}
	CK(cudaEventRecord(e1, 0));
	CK(cudaMemcpy(h, d, N * sizeof(uint32_t), cudaMemcpyDeviceToHost));
	CK(cudaEventRecord(e2, 0));
	ex_timing("kernels", e0, e1);
	ex_timing("total", e0, e2);

	// Self-check: sampled elements by the naive loop, everything by jump-ahead.
	int bad = 0;
	uint32_t a, c, sum = 0;
	lcg_jump((uint64_t)ITERS * KERNELS, &a, &c);
	for (int i = 0; i < N; i++) {
		uint32_t want = a * ((uint32_t)i * 2654435761u) + c;
		if (h[i] != want)
			bad++;
		sum += h[i];
	}
	for (int i = 0; i < N; i += N / 8) {
		uint32_t v = (uint32_t)i * 2654435761u;
		for (uint64_t k = 0; k < (uint64_t)ITERS * KERNELS; k++)
			v = lcg(v);
		if (h[i] != v)
			bad++;
	}
	CK(cudaFree(d));
	free(h);
	printf("compute_bound: n=%d kernels=%d iters=%u checksum=%08x\n", N, KERNELS, ITERS, sum);
	if (bad) {
		printf("compute_bound: FAIL (%d mismatches)\n", bad);
		return 1;
	}
	printf("compute_bound: OK\n");
	return 0;
}
