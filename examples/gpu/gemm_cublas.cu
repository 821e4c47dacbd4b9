/*
 * gemm_cublas.cu — a cuBLAS SGEMM loop for the real-GPU validation kit
 * (tests/gpu/run.sh, check "cublas").
 *
 * cuBLAS carries its own private, statically linked cudart and reaches the
 * driver through cuGetProcAddress pointers, so none of its kernel launches
 * goes through a cudart symbol a preload hook can interpose: only CUPTI sees
 * them. This program launches no kernel of its own (inputs are copied in with
 * cudaMemcpy), so every kernel record in its trace is a launch that no hook
 * saw, and the kit checks that each one still gets a launch time from a CUPTI
 * API record.
 *
 * Usage: gemm_cublas [N [ITERS]]  — C = A * B with N x N single-precision
 * matrices (default 4096), ITERS times (default 20).
 *
 * The inputs are small integers (-2..2), so every product and sum is exact in
 * FP32 (|C| <= 4N < 2^24) whatever the kernel, TF32 included; the program checks
 * sampled entries against a host computation and prints a checksum of C.
 * stdout is deterministic; timings go to stderr as "timing: <what> <ms>"
 * (CUDA events around the timed loop). Exit status 0 on success, 1 on a
 * CUDA/cuBLAS error or a wrong result, 2 on bad arguments.
 *
 * Single-threaded, default stream.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                            \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "gemm_cublas: %s failed: %s\n", #call,  \
				cudaGetErrorString(e_));                       \
			return 1;                                              \
		}                                                              \
	} while (0)
#define CHECK_BLAS(call)                                                       \
	do {                                                                   \
		cublasStatus_t s_ = (call);                                    \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                             \
			fprintf(stderr, "gemm_cublas: %s failed: %s\n", #call,  \
				cublasGetStatusString(s_));                    \
			return 1;                                              \
		}                                                              \
	} while (0)

static long parse(const char *s, const char *what, long lo, long hi)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "gemm_cublas: %s='%s': expected an integer from %ld to %ld\n", what, s,
			lo, hi);
		return -1;
	}
	return v;
}

/* Deterministic small-integer inputs, column-major. */
static float a_at(long i) { return (float)((i * 7) % 5 - 2); }
static float b_at(long i) { return (float)((i * 3 + 1) % 5 - 2); }

int main(int argc, char **argv)
{
	long n = 4096, iters = 20;
	if (argc > 3) {
		fprintf(stderr, "usage: gemm_cublas [N [ITERS]]\n");
		return 2;
	}
	if (argc > 1 && (n = parse(argv[1], "N", 16, 16384)) < 0)
		return 2;
	if (argc > 2 && (iters = parse(argv[2], "ITERS", 1, 100000)) < 0)
		return 2;

	size_t elems = (size_t)n * (size_t)n, bytes = elems * sizeof(float);
	float *h_a = (float *)malloc(bytes), *h_b = (float *)malloc(bytes),
	      *h_c = (float *)malloc(bytes);
	if (!h_a || !h_b || !h_c) {
		fprintf(stderr, "gemm_cublas: out of host memory for N=%ld\n", n);
		return 1;
	}
	for (size_t i = 0; i < elems; i++) {
		h_a[i] = a_at((long)i);
		h_b[i] = b_at((long)i);
	}

	float *d_a, *d_b, *d_c;
	CHECK(cudaMalloc((void **)&d_a, bytes));
	CHECK(cudaMalloc((void **)&d_b, bytes));
	CHECK(cudaMalloc((void **)&d_c, bytes));
	CHECK(cudaMemcpy(d_a, h_a, bytes, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(d_b, h_b, bytes, cudaMemcpyHostToDevice));

	cublasHandle_t h;
	CHECK_BLAS(cublasCreate(&h));
	const float one = 1.0f, zero = 0.0f;
	cudaEvent_t e0, e1;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));

	/* Warm-up call outside the timed loop: module loading happens here. */
	CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, d_a,
			       (int)n, d_b, (int)n, &zero, d_c, (int)n));
	CHECK(cudaDeviceSynchronize());

	CHECK(cudaEventRecord(e0, 0));
	for (long it = 0; it < iters; it++)
		CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one,
				       d_a, (int)n, d_b, (int)n, &zero, d_c, (int)n));
	CHECK(cudaEventRecord(e1, 0));
	CHECK(cudaEventSynchronize(e1));
	float ms = 0.0f;
	CHECK(cudaEventElapsedTime(&ms, e0, e1));
	CHECK(cudaMemcpy(h_c, d_c, bytes, cudaMemcpyDeviceToHost));

	/* Checksum of all of C (exact integers) and sampled entries recomputed. */
	long long sum = 0;
	for (size_t i = 0; i < elems; i++)
		sum += (long long)h_c[i];
	int bad = 0;
	for (long s = 0; s < 64; s++) {
		long r = (s * 2654435761l) % n, c = (s * 40503l + 17) % n;
		long long want = 0;
		for (long k = 0; k < n; k++)
			want += (long long)a_at(r + k * n) * (long long)b_at(k + c * n);
		if ((long long)h_c[r + c * n] != want) {
			if (!bad)
				fprintf(stderr, "gemm_cublas: C[%ld,%ld] = %.1f, expected %lld\n", r,
					c, (double)h_c[r + c * n], want);
			bad = 1;
		}
	}

	printf("gemm_cublas: N=%ld iters=%ld checksum %lld %s\n", n, iters, sum,
	       bad ? "WRONG" : "ok");
	fprintf(stderr, "timing: sgemm_loop %.3f\n", (double)ms);
	fprintf(stderr, "gemm_cublas: %.1f GFLOP/s\n",
		2.0 * (double)n * (double)n * (double)n * (double)iters / ((double)ms * 1e6));

	CHECK_BLAS(cublasDestroy(h));
	CHECK(cudaEventDestroy(e0));
	CHECK(cudaEventDestroy(e1));
	CHECK(cudaFree(d_a));
	CHECK(cudaFree(d_b));
	CHECK(cudaFree(d_c));
	free(h_a);
	free(h_b);
	free(h_c);
	return bad ? 1 : 0;
}
