// compute_bound.cu — profile: COMPUTE-BOUND. A few long kernels queued back
// to back on one stream; while they run, the host does its own work (the
// self-check's reference values), so by the time it copies the result back
// the GPU is done: per kernel, execution dominates (launch and sync are tiny).
//
// Each kernel advances every element of a uint32 array by ITERS steps of an
// LCG (heavy integer work per thread on a GPU). The self-check compares
// sampled elements with a naive host loop and every element with the
// jump-ahead form. Stdout: the result only (deterministic); stderr: timings.
//
// Timings (CUDA events, stderr, read by tests/gpu/gpukit.py TIMING_SPECS):
//   kernels  the sum over the 5 kernels of each kernel's own event pair
//            (record start, launch, record stop): GPU time of the kernels
//            alone, comparable with the report's execute sum of heavy_lcg;
//   bracket  first start event to last stop event;
//   total    first start event to after the copy back.
// A short untimed lead_in kernel keeps the GPU busy while the first start
// event and the first heavy_lcg launch are enqueued, so no start event
// completes on an idle GPU and waits out a launch: each pair then holds its
// kernel and the events' own processing only (on an H200 the first launch
// of the process took ~35 us, 4-6 % of one bracket over all 5 kernels).
// Event record order (0-based, what TIMING_SPECS counts): start k = 2k,
// stop k = 2k+1, end = 2*KERNELS.
#include "ex_common.h"

#define N (1 << 14)
#define ITERS 200000u
#define KERNELS 5
#define SAMPLES 64
#define LEAD_IN_CYCLES 1000000ll /* ~0.5 ms at H200 clocks; simcuda: its cost model */

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

// Keeps the GPU busy for `cycles` SM clocks; changes no memory (no twin).
__global__ void lead_in(long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles)
		;
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
	uint32_t *d, sample[SAMPLES];
	for (int i = 0; i < N; i++)
		h[i] = (uint32_t)i * 2654435761u;
	cudaEvent_t ks[KERNELS], ke[KERNELS], end;
	for (int k = 0; k < KERNELS; k++) {
		CK(cudaEventCreate(&ks[k]));
		CK(cudaEventCreate(&ke[k]));
	}
	CK(cudaEventCreate(&end));
	CK(cudaMalloc(&d, N * sizeof(uint32_t)));
	CK(cudaMemcpy(d, h, N * sizeof(uint32_t), cudaMemcpyHostToDevice));
	lead_in<<<1, 1>>>(LEAD_IN_CYCLES);
	CK(cudaGetLastError());
	for (int k = 0; k < KERNELS; k++) {
		CK(cudaEventRecord(ks[k], 0));
		heavy_lcg<<<(N + 255) / 256, 256>>>(d, N, ITERS);
		CK(cudaGetLastError());
		CK(cudaEventRecord(ke[k], 0));
	}
	// While the GPU computes, the host derives the expected values of
	// sampled elements with the naive loop (the self-check's reference).
	for (int j = 0; j < SAMPLES; j++) {
		uint32_t v = (uint32_t)(j * (N / SAMPLES)) * 2654435761u;
		for (uint64_t k = 0; k < (uint64_t)ITERS * KERNELS; k++)
			v = lcg(v);
		sample[j] = v;
	}
	CK(cudaMemcpy(h, d, N * sizeof(uint32_t), cudaMemcpyDeviceToHost));
	CK(cudaEventRecord(end, 0));
	double per_kernel = 0;
	fprintf(stderr, "compute_bound: per-kernel ms:");
	for (int k = 0; k < KERNELS; k++) {
		float ms = ex_elapsed_ms(ks[k], ke[k]);
		per_kernel += ms;
		fprintf(stderr, " %.3f", ms);
	}
	fprintf(stderr, "\n");
	ex_timing_ms("kernels", per_kernel);
	ex_timing("bracket", ks[0], ke[KERNELS - 1]);
	ex_timing("total", ks[0], end);
	for (int k = 0; k < KERNELS; k++) {
		CK(cudaEventDestroy(ks[k]));
		CK(cudaEventDestroy(ke[k]));
	}
	CK(cudaEventDestroy(end));

	// Self-check: sampled elements against the naive loop, every element
	// against the jump-ahead form.
	int bad = 0;
	uint32_t a, c, sum = 0;
	lcg_jump((uint64_t)ITERS * KERNELS, &a, &c);
	for (int i = 0; i < N; i++) {
		if (h[i] != a * ((uint32_t)i * 2654435761u) + c)
			bad++;
		sum += h[i];
	}
	for (int j = 0; j < SAMPLES; j++)
		if (h[j * (N / SAMPLES)] != sample[j])
			bad++;
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
