/*
 * sim_unsupported.c — every function of the real libcudart.so.13 that has
 * no meaning on one simulated device (or is not simulated yet): it returns
 * cudaErrorNotSupported, sets the calling thread's last error, and logs one
 * line to stderr on its first call. Never a missing symbol: the list is
 * generated from the installed toolkit's library (gen-exports.sh), minus
 * what the other sources define.
 *
 * This file deliberately includes no CUDA header: the stubs' prototypes are
 * `int f(void)`, which the real declarations would contradict. On x86-64 and
 * aarch64 a caller that passes arguments to a function that reads none is
 * harmless, and the int return lands where cudaError_t is read (functions
 * returning void ignore it). None of the generated names returns a pointer or
 * a struct (the test of exported symbols keeps that list honest).
 *
 * Threads: any; the first-call flag is one atomic per stub.
 */
#include <stdatomic.h>
#include <stdio.h>

#define SIM_ERROR_NOT_SUPPORTED 801 /* cudaErrorNotSupported (driver_types.h) */

/* The calling thread's last error, sim_call.c's t_last_error (an enum cudaError). */
extern __thread int t_last_error;

__attribute__((visibility("hidden"))) int sim_unsupported(const char *name, atomic_int *once)
{
	if (!atomic_exchange_explicit(once, 1, memory_order_relaxed))
		fprintf(stderr, "simcuda: %s is not supported on the simulated device; it returns "
				"cudaErrorNotSupported\n", name);
	t_last_error = SIM_ERROR_NOT_SUPPORTED;
	return SIM_ERROR_NOT_SUPPORTED;
}

#define SIM_UNSUPPORTED(fn)                                  \
	__attribute__((visibility("default"))) int fn(void); \
	int fn(void)                                         \
	{                                                    \
		static atomic_int once_;                     \
		return sim_unsupported(#fn, &once_);         \
	}

#include "sim_unsupported_list.h"
