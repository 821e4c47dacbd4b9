// launch_bound.cu — profile: LAUNCH-BOUND. Thousands of tiny kernels on one
// stream with nothing else in between: each kernel does almost no work, so
// the host spends its time inside the launch API and the GPU idles between
// kernels. One synchronize at the end.
//
// Kernel k adds k to every element of a small array; the self-check compares
// with the closed form init + sum(0..LAUNCHES-1) and a naive host loop.
// Stdout: the result only (deterministic); stderr: timings.
// Usage: launch_bound [ROUNDS]: the launch loop ROUNDS times (default 1, at
// most 100000) before the synchronize, for runs long enough to time a duty
// cycle over (bench/duty_cycle_cost.sh).
#include "ex_common.h"

#define N 256
#define LAUNCHES 3000

__global__ void tiny_add(uint32_t *x, int n, uint32_t k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += k;
}

// simcuda host twin of tiny_add (see ex_common.h).
extern "C" void simcuda_kernel_tiny_add(dim3 grid, dim3 block, void **args)
{
	uint32_t *x = *(uint32_t **)args[0];
	int n = *(int *)args[1];
	uint32_t k = *(uint32_t *)args[2];
	long total = (long)grid.x * grid.y * grid.z * block.x * block.y * block.z;
	for (long i = 0; i < n && i < total; i++)
		x[i] += k;
}

int main(int argc, char **argv)
{
	uint32_t rounds = 1;
	if (argc > 2 || (argc == 2 && (sscanf(argv[1], "%u", &rounds) != 1 || rounds < 1 || rounds > 100000))) {
		fprintf(stderr, "usage: launch_bound [ROUNDS]  (ROUNDS: 1 to 100000)\n");
		return 2;
	}
	uint32_t h[N], *d;
	for (int i = 0; i < N; i++)
		h[i] = (uint32_t)i;
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	CK(cudaMalloc(&d, sizeof h));
	CK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
	CK(cudaEventRecord(e0, 0));
	for (uint32_t r = 0; r < rounds; r++)
		for (uint32_t k = 0; k < LAUNCHES; k++)
			tiny_add<<<1, N>>>(d, N, k);
	CK(cudaGetLastError());
	CK(cudaEventRecord(e1, 0));
	CK(cudaDeviceSynchronize());
	ex_timing("launch_loop", e0, e1);
	CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));

	int bad = 0;
	uint32_t sum = 0;
	for (int i = 0; i < N; i++) {
		uint32_t want = (uint32_t)i;
		for (uint32_t r = 0; r < rounds; r++)
			for (uint32_t k = 0; k < LAUNCHES; k++)
				want += k;
		if (h[i] != want || h[i] != (uint32_t)i + rounds * ((uint32_t)LAUNCHES * (LAUNCHES - 1) / 2))
			bad++;
		sum += h[i];
	}
	CK(cudaFree(d));
	printf("launch_bound: n=%d launches=%u checksum=%08x\n", N, rounds * LAUNCHES, sum);
	if (bad) {
		printf("launch_bound: FAIL (%d mismatches)\n", bad);
		return 1;
	}
	printf("launch_bound: OK\n");
	return 0;
}
