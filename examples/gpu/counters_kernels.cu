// counters_kernels.cu — two kernels whose hardware counters are known by
// arithmetic, for the GPU kit's counters check (tests/gpu/counters_kit.sh):
//   copy_k  copies COPY_BYTES (2 GiB, float4 at a time, grid-stride): reads
//           and writes COPY_BYTES of DRAM each — buffers 40x an H200's
//           50 MB L2, so neither cached input nor write-back left in L2 at
//           the end moves the count by more than ~2.5 %
//   fma_k   FMA_THREADS threads each run FMA_REPS dependent FP32 FMAs: 2 x
//           FMA_THREADS x FMA_REPS FLOPs, and no other FP32 instruction
// Each is launched LAUNCHES times (the kit samples some of them). No host
// twins: on simcuda the kernels cost their cost model's time and work
// (tests/gpu/counters_kit.simcuda). The input is never initialised (a byte
// count does not need values). Prints the arithmetic on stdout for the
// checker: one line.
#include <cstdio>
#include <cuda_runtime.h>

#define COPY_BYTES (2ull << 30)
#define FMA_BLOCKS 528
#define FMA_BLOCK 256
#define FMA_THREADS (FMA_BLOCKS * FMA_BLOCK)
#define FMA_REPS 4096
#define LAUNCHES 4

#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

__global__ void copy_k(const float4 *__restrict__ in, float4 *__restrict__ out, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		out[i] = in[i];
}

__global__ void fma_k(float *x, int reps)
{
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	float v = x[t], w = x[FMA_THREADS];
	for (int r = 0; r < reps; r++)
		v = fmaf(v, w, 0.5f);
	x[t] = v;
}

int main(void)
{
	float4 *in, *out;
	float *x;
	CK(cudaMalloc(&in, COPY_BYTES));
	CK(cudaMalloc(&out, COPY_BYTES));
	CK(cudaMalloc(&x, (FMA_THREADS + 1) * sizeof(float)));
	CK(cudaMemset(x, 0, (FMA_THREADS + 1) * sizeof(float)));
	size_t n = COPY_BYTES / sizeof(float4);
	for (int i = 0; i < LAUNCHES; i++) {
		copy_k<<<132 * 16, 256>>>(in, out, n);
		fma_k<<<FMA_BLOCKS, FMA_BLOCK>>>(x, FMA_REPS);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
	}
	CK(cudaFree(in));
	CK(cudaFree(out));
	CK(cudaFree(x));
	printf("counters_kernels: copy_k dram_bytes_read=%llu dram_bytes_write=%llu fma_k flops_fp32=%llu\n",
	       (unsigned long long)COPY_BYTES, (unsigned long long)COPY_BYTES,
	       2ull * FMA_THREADS * FMA_REPS);
	return 0;
}
