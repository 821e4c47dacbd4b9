// analyses_run.cu — end-to-end scenario for the report's analyses (stages,
// trends, host conditions, stability) with answers known by construction;
// tests/e2e/test_analyses_e2e.sh runs it on simcuda with
// tests/e2e/analyses_run.simcuda (exec_per_block_ns makes a kernel's time grow
// with its grid, as work grows with sequence length).
//
//   load      NBUF cudaMalloc + NBUF synchronous 4 MiB host-to-device copies,
//             then one cudaDeviceSynchronize (the first iteration mark)
//   warm-up   iterations 0..WARM-1 also run warm_k (one-off tuning work)
//   each of ITERS iterations: step_k (constant), drift_k with grid 1 + i
//             (execute time grows linearly), tail_k with grid 1, except on
//             iterations TAIL_A and TAIL_B where its grid is TAIL_GRID (the
//             long tail, and the two outlier iterations it causes), then
//             cudaDeviceSynchronize (marker = sync: one iteration each)
//   tear-down one device-to-host copy and the frees
// No host twins: the kernels only cost time. Stdout: one line.
#include <cstdio>
#include <cuda_runtime.h>

#define NBUF 8
#define BUF_BYTES (4u << 20)
#define ITERS 40
#define WARM 5
#define TAIL_A 12
#define TAIL_B 30
#define TAIL_GRID 40

#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

__global__ void step_k(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void drift_k(float *x) { x[blockIdx.x] *= 0.5f; }
__global__ void tail_k(float *x) { x[blockIdx.x] -= 1.0f; }
__global__ void warm_k(float *x) { x[threadIdx.x] = 0.0f; }

int main(void)
{
	static char host[BUF_BYTES];
	float *buf[NBUF];
	for (int i = 0; i < NBUF; i++) {
		CK(cudaMalloc(&buf[i], BUF_BYTES));
		CK(cudaMemcpy(buf[i], host, BUF_BYTES, cudaMemcpyHostToDevice));
	}
	CK(cudaDeviceSynchronize());
	for (int it = 0; it < ITERS; it++) {
		if (it < WARM)
			warm_k<<<1, 32>>>(buf[0]);
		step_k<<<1, 32>>>(buf[0]);
		drift_k<<<1 + it, 1>>>(buf[1]);
		tail_k<<<(it == TAIL_A || it == TAIL_B) ? TAIL_GRID : 1, 1>>>(buf[2]);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
	}
	CK(cudaMemcpy(host, buf[0], 4096, cudaMemcpyDeviceToHost));
	for (int i = 0; i < NBUF; i++)
		CK(cudaFree(buf[i]));
	printf("analyses_run: iters=%d warm=%d ok\n", ITERS, WARM);
	return 0;
}
