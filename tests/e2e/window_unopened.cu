// window_unopened.cu — a loop whose only waits are blocking copies and
// cudaFree (no cudaDeviceSynchronize, no cudaStreamSynchronize), for
// tests/e2e/test_window_unopened.sh: under GPUPHASE_WINDOW=skip=N,iters=M
// with the default `sync` marker the window never opens, and the library
// and the report must say why and which marker would work.
//   window_unopened [ITERS [LINGER_MS]]: ITERS iterations (default 200) of
//   step_k, one other_k every tenth iteration, one blocking device-to-host
//   copy and one cudaMalloc/cudaFree pair each; then LINGER_MS of host-only
//   work (a sleep) before exit, so that a time window can open after the
//   program's last CUDA call.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CK(x)                                                                       \
	do {                                                                        \
		cudaError_t e_ = (x);                                               \
		if (e_ != cudaSuccess) {                                            \
			fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));   \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

__global__ void step_k(float *a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] += 1.0f;
}

__global__ void other_k(float *a)
{
	a[0] *= 0.5f;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 200;
	long linger_ms = argc > 2 ? atol(argv[2]) : 0;
	const int n = 1 << 16;
	float *a, host[4];
	CK(cudaMalloc(&a, n * sizeof(float)));
	for (int it = 0; it < iters; it++) {
		float *tmp;
		step_k<<<n / 256, 256>>>(a, n);
		if (it % 10 == 0)
			other_k<<<1, 1>>>(a);
		CK(cudaGetLastError());
		CK(cudaMemcpy(host, a, sizeof host, cudaMemcpyDeviceToHost));
		CK(cudaMalloc(&tmp, 256));
		CK(cudaFree(tmp));
	}
	CK(cudaFree(a));
	if (linger_ms > 0) {
		struct timespec ts = {linger_ms / 1000, (linger_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
	}
	printf("window_unopened: %d iterations done\n", iters);
	return 0;
}
