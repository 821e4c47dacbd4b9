// train_loop.cu — profile: a training-like loop whose time goes to an
// implicit synchronization. Each step, as a framework's training loop does:
//   * a batch copied to the device with cudaMemcpyAsync from malloc'd
//     (pageable) memory, on the compute stream;
//   * a scratch buffer allocated with cudaMalloc, used by the backward
//     kernel and freed with cudaFree right after it is launched — cudaFree
//     waits for the device, so the host waits for forward and backward;
//   * forward, backward and optimizer kernels on the compute stream, a tiny
//     log_metrics kernel on a second stream (after an event of the step);
//   * every LOSS_EVERY steps a `loss.item()`: a blocking 4-byte cudaMemcpy;
//   * host work that prepares the next batch (a busy loop over the batch).
// With `--hoist` the scratch buffer is allocated once before the loop and
// freed after it: the change the report's advice names, made for real (the
// step `advice` of tests/e2e/test_whatif_e2e.sh compares the report's price
// with the saving).
//
// Data: w (the "weights") starts at w[i] = i; each step s, forward writes
// y = lcg(x + w), backward writes g = y ^ s into the scratch buffer,
// optimizer adds g >> 8 to w. The host recomputes all of it naively and
// checks w at the end. Stdout: the result only; stderr: timings.
#include <cstring>
#include "ex_common.h"

#define N 16384
#define STEPS 120
#define LOSS_EVERY 10
#define HOST_WORK_ROUNDS 40

__global__ void forward_kernel(const uint32_t *x, const uint32_t *w, uint32_t *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = lcg(x[i] + w[i]);
}

__global__ void backward_kernel(const uint32_t *y, uint32_t *g, int n, uint32_t s)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		g[i] = y[i] ^ s;
}

__global__ void optimizer_kernel(uint32_t *w, const uint32_t *g, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		w[i] += g[i] >> 8;
}

__global__ void log_metrics(const uint32_t *w, uint32_t *m)
{
	if (blockIdx.x == 0 && threadIdx.x == 0)
		m[0] = w[0];
}

// simcuda host twins (see ex_common.h).
static long ex_threads(dim3 grid, dim3 block)
{
	return (long)grid.x * grid.y * grid.z * block.x * block.y * block.z;
}

extern "C" void simcuda_kernel_forward_kernel(dim3 grid, dim3 block, void **args)
{
	const uint32_t *x = *(const uint32_t **)args[0], *w = *(const uint32_t **)args[1];
	uint32_t *y = *(uint32_t **)args[2];
	int n = *(int *)args[3];
	for (long i = 0; i < n && i < ex_threads(grid, block); i++)
		y[i] = lcg(x[i] + w[i]);
}

extern "C" void simcuda_kernel_backward_kernel(dim3 grid, dim3 block, void **args)
{
	const uint32_t *y = *(const uint32_t **)args[0];
	uint32_t *g = *(uint32_t **)args[1];
	int n = *(int *)args[2];
	uint32_t s = *(uint32_t *)args[3];
	for (long i = 0; i < n && i < ex_threads(grid, block); i++)
		g[i] = y[i] ^ s;
}

extern "C" void simcuda_kernel_optimizer_kernel(dim3 grid, dim3 block, void **args)
{
	uint32_t *w = *(uint32_t **)args[0];
	const uint32_t *g = *(const uint32_t **)args[1];
	int n = *(int *)args[2];
	for (long i = 0; i < n && i < ex_threads(grid, block); i++)
		w[i] += g[i] >> 8;
}

extern "C" void simcuda_kernel_log_metrics(dim3, dim3, void **args)
{
	const uint32_t *w = *(const uint32_t **)args[0];
	uint32_t *m = *(uint32_t **)args[1];
	m[0] = w[0];
}

// The next batch, made on the host: element i of step s (some host work).
static void make_batch(uint32_t *x, uint32_t s)
{
	for (int i = 0; i < N; i++) {
		uint32_t v = (uint32_t)i * 2654435761u + s;
		for (int k = 0; k < HOST_WORK_ROUNDS; k++)
			v = lcg(v);
		x[i] = v;
	}
}

int main(int argc, char **argv)
{
	int hoist = argc > 1 && strcmp(argv[1], "--hoist") == 0;
	if (argc > 1 && !hoist) {
		fprintf(stderr, "usage: train_loop [--hoist]\n");
		return 2;
	}
	uint32_t *hx = (uint32_t *)malloc(N * sizeof *hx); // pageable, as a data loader's
	uint32_t *hw = (uint32_t *)malloc(N * sizeof *hw), *ref = (uint32_t *)malloc(N * sizeof *ref);
	uint32_t *dx, *dw, *dy, *dm, *dg = NULL, loss = 0;
	if (!hx || !hw || !ref)
		return 1;
	for (int i = 0; i < N; i++)
		hw[i] = ref[i] = (uint32_t)i;
	cudaStream_t compute, side;
	cudaEvent_t step_done, e0, e1;
	CK(cudaStreamCreate(&compute));
	CK(cudaStreamCreate(&side));
	CK(cudaEventCreateWithFlags(&step_done, cudaEventDisableTiming));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	CK(cudaMalloc(&dx, N * sizeof *dx));
	CK(cudaMalloc(&dw, N * sizeof *dw));
	CK(cudaMalloc(&dy, N * sizeof *dy));
	CK(cudaMalloc(&dm, sizeof *dm));
	CK(cudaMemcpy(dw, hw, N * sizeof *hw, cudaMemcpyHostToDevice));
	if (hoist)
		CK(cudaMalloc(&dg, N * sizeof *dg));
	make_batch(hx, 0);
	const int threads = 256, blocks = (N + threads - 1) / threads;
	CK(cudaEventRecord(e0, compute));
	for (uint32_t s = 0; s < STEPS; s++) {
		CK(cudaMemcpyAsync(dx, hx, N * sizeof *hx, cudaMemcpyHostToDevice, compute));
		if (!hoist)
			CK(cudaMalloc(&dg, N * sizeof *dg));
		forward_kernel<<<blocks, threads, 0, compute>>>(dx, dw, dy, N);
		backward_kernel<<<blocks, threads, 0, compute>>>(dy, dg, N, s);
		optimizer_kernel<<<blocks, threads, 0, compute>>>(dw, dg, N);
		CK(cudaGetLastError());
		if (!hoist)
			CK(cudaFree(dg)); // waits for the device: the step's kernels
		CK(cudaEventRecord(step_done, compute));
		CK(cudaStreamWaitEvent(side, step_done, 0));
		log_metrics<<<1, 32, 0, side>>>(dw, dm);
		CK(cudaGetLastError());
		if ((s + 1) % LOSS_EVERY == 0) // loss.item()
			CK(cudaMemcpy(&loss, dm, sizeof loss, cudaMemcpyDeviceToHost));
		// the reference step, then the next batch (the host's own work)
		for (int i = 0; i < N; i++)
			ref[i] += (lcg(hx[i] + ref[i]) ^ s) >> 8;
		make_batch(hx, s + 1);
	}
	CK(cudaEventRecord(e1, compute));
	ex_timing("steps", e0, e1);
	if (hoist)
		CK(cudaFree(dg));
	CK(cudaMemcpy(hw, dw, N * sizeof *hw, cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < N; i++)
		bad += hw[i] != ref[i];
	uint32_t sum = 0;
	for (int i = 0; i < N; i++)
		sum = sum * 31u + hw[i];
	printf("train_loop: n=%d steps=%d hoist=%d checksum=%08x\n", N, STEPS, hoist, sum);
	// the last loss.item() is of the last step (STEPS is a multiple of
	// LOSS_EVERY): it read the final w[0]
	if (bad || loss != hw[0]) {
		printf("train_loop: FAIL (%d elements differ, loss %u, w[0] %u)\n", bad, loss, hw[0]);
		return 1;
	}
	printf("train_loop: OK\n");
	CK(cudaFree(dx));
	CK(cudaFree(dw));
	CK(cudaFree(dy));
	CK(cudaFree(dm));
	free(hx);
	free(hw);
	free(ref);
	return 0;
}
