// sync_bound.cu — profile: SYNC-BOUND. Every step launches one kernel, then
// blocks in cudaDeviceSynchronize and in a synchronous cudaMemcpy of one
// element back to the host (the "loss.item()" pattern): the host spends most
// of its time waiting for the GPU, and the GPU idles while the host decides.
// The report calls it sync-bound; its advice follows the what-if: remove the
// synchronize when the host's work between steps is long enough that letting
// it run ahead pays, else "the GPU is the bottleneck" (the waits are on a
// busy GPU and removing them saves < 5 %).
//
// Step s applies x = lcg(x) + s to every element; the host reads element 0
// after each step and checks it against its own running value. The final
// array is checked against a naive host recomputation.
// Stdout: the result only (deterministic); stderr: timings.
#include "ex_common.h"

#define N 4096
#define STEPS 200

__global__ void step_kernel(uint32_t *x, int n, uint32_t s)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		uint32_t v = x[i];
		for (int k = 0; k < 64; k++)
			v = lcg(v);
		x[i] = v + s;
	}
}

// simcuda host twin of step_kernel (see ex_common.h).
extern "C" void simcuda_kernel_step_kernel(dim3 grid, dim3 block, void **args)
{
	uint32_t *x = *(uint32_t **)args[0];
	int n = *(int *)args[1];
	uint32_t s = *(uint32_t *)args[2];
	long total = (long)grid.x * grid.y * grid.z * block.x * block.y * block.z;
	uint32_t a, c;
	lcg_jump(64, &a, &c);
	for (long i = 0; i < n && i < total; i++)
		x[i] = a * x[i] + c + s;
}

static uint32_t host_step(uint32_t v, uint32_t s)
{
	for (int k = 0; k < 64; k++)
		v = lcg(v);
	return v + s;
}

int main(void)
{
	static uint32_t h[N];
	uint32_t *d, first, track = 0;
	for (int i = 0; i < N; i++)
		h[i] = (uint32_t)i ^ 0x5a5a5a5au;
	track = h[0];
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	CK(cudaMalloc(&d, sizeof h));
	CK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
	CK(cudaEventRecord(e0, 0));
	int bad = 0;
	for (uint32_t s = 0; s < STEPS; s++) {
		step_kernel<<<(N + 255) / 256, 256>>>(d, N, s);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		CK(cudaMemcpy(&first, d, sizeof first, cudaMemcpyDeviceToHost));
		track = host_step(track, s);
		if (first != track)
			bad++;
	}
	CK(cudaEventRecord(e1, 0));
	ex_timing("steps", e0, e1);
	CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
	uint32_t sum = 0;
	for (int i = 0; i < N; i++) {
		uint32_t v = (uint32_t)i ^ 0x5a5a5a5au;
		for (uint32_t s = 0; s < STEPS; s++)
			v = host_step(v, s);
		if (h[i] != v)
			bad++;
		sum += h[i];
	}
	CK(cudaFree(d));
	printf("sync_bound: n=%d steps=%d checksum=%08x\n", N, STEPS, sum);
	if (bad) {
		printf("sync_bound: FAIL (%d mismatches)\n", bad);
		return 1;
	}
	printf("sync_bound: OK\n");
	return 0;
}
