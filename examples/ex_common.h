/*
 * ex_common.h — helpers shared by the CUDA C examples: error checking, event
 * timing printed to stderr ("timing: <what> <ms>"), and the LCG the examples
 * compute with (exact uint32 arithmetic, so a GPU, simcuda and the host
 * self-check agree bit for bit).
 *
 * simcuda note: a kernel launched under simcuda runs its host twin
 * `simcuda_kernel_<name>` (exported with -Xlinker -E) when one exists; on a
 * real GPU the twin is never called. Self-checks always recompute the
 * expected result independently on the host (naive loops), so a wrong twin
 * or a wrong kernel fails the check either way.
 */
#ifndef EX_COMMON_H
#define EX_COMMON_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(call)                                                                          \
	do {                                                                              \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,      \
				cudaGetErrorString(e_));                                  \
			exit(1);                                                          \
		}                                                                         \
	} while (0)

#define LCG_A 1664525u
#define LCG_C 1013904223u

/* One LCG step. */
__host__ __device__ static inline uint32_t lcg(uint32_t x)
{
	return x * LCG_A + LCG_C;
}

/* (a, c) such that n LCG steps are x -> a*x + c (jump-ahead, O(log n)). */
static inline void lcg_jump(uint64_t n, uint32_t *a_out, uint32_t *c_out)
{
	uint32_t a = 1, c = 0, pa = LCG_A, pc = LCG_C;
	while (n) {
		if (n & 1) {
			a = a * pa;
			c = c * pa + pc;
		}
		pc = pc * pa + pc;
		pa = pa * pa;
		n >>= 1;
	}
	*a_out = a;
	*c_out = c;
}

/* Milliseconds from event a to event b (waits for b). */
static inline float ex_elapsed_ms(cudaEvent_t a, cudaEvent_t b)
{
	float ms = 0;
	CK(cudaEventSynchronize(b));
	CK(cudaEventElapsedTime(&ms, a, b));
	return ms;
}

/* Print an event-measured time to stderr (a sum of intervals, say). */
static inline void ex_timing_ms(const char *what, double ms)
{
	fprintf(stderr, "timing: %s %.3f\n", what, ms);
}

/* Print an event-measured interval to stderr. */
static inline void ex_timing(const char *what, cudaEvent_t a, cudaEvent_t b)
{
	ex_timing_ms(what, ex_elapsed_ms(a, b));
}

#endif
