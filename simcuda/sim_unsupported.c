/*
 * sim_unsupported.c — what every function of the real libcudart.so.13 that
 * simcuda does not implement does: return cudaErrorNotSupported, set the
 * calling thread's last error, and log one line to stderr on its first
 * call. The stubs themselves are in sim_unsupported_stubs.c, one per name
 * of the list gen-exports.sh generates from the installed toolkit.
 *
 * Threads: any; the first-call flag is one atomic per stub.
 */
#include <stdio.h>

#include "sim_cudart.h"

int sim_unsupported(const char *name, atomic_int *once)
{
	if (!atomic_exchange_explicit(once, 1, memory_order_relaxed))
		fprintf(stderr, "simcuda: %s is not supported on the simulated device; it returns "
				"cudaErrorNotSupported\n", name);
	t_last_error = cudaErrorNotSupported;
	return cudaErrorNotSupported;
}
