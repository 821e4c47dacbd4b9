// lt_local_lib.cu — a shared library with its own kernels and a cudart
// dependency, dlopened RTLD_LOCAL by lt_local_main.c (the ctypes pattern):
// cudart is then invisible to dlsym(RTLD_NEXT) from the preload.
// No simcuda host twin is used for the result: the check is on copies/sets.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void local_kernel(unsigned char *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] ^= 1;
}

extern "C" int lt_local_run(int steps)
{
	enum { N = 4096 };
	static unsigned char h[N];
	unsigned char *d;
	if (cudaMalloc(&d, N) != cudaSuccess)
		return 1;
	int bad = 0;
	for (int s = 0; s < steps; s++) {
		local_kernel<<<N / 256, 256>>>(d, N);
		if (cudaMemset(d, s & 0xff, N) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess ||
		    cudaMemcpy(h, d, N, cudaMemcpyDeviceToHost) != cudaSuccess)
			return 1;
		for (int i = 0; i < N; i++)
			bad += h[i] != (unsigned char)(s & 0xff);
	}
	cudaFree(d);
	return bad ? 1 : 0;
}
