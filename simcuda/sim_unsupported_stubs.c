/*
 * sim_unsupported_stubs.c — one exported stub per function of the real
 * libcudart.so.13 that no other simcuda source defines (the generated list
 * sim_unsupported_list.h, gen-exports.sh): it calls sim_unsupported
 * (sim_unsupported.c), which answers cudaErrorNotSupported. Never a missing
 * symbol.
 *
 * This file deliberately includes no CUDA header: the stubs' prototypes are
 * `int f(void)`, which the real declarations would contradict. On x86-64
 * and aarch64 a caller that passes arguments to a function that reads none
 * is harmless, and the int return lands where cudaError_t is read (callers
 * of a void function ignore it). A function that returns a pointer or a
 * struct cannot be a stub: it must be implemented (cudaCreateChannelDesc is,
 * in sim_api_exec.c); gen-exports.sh fails the build when the runtime header
 * declares a stubbed name with a return type other than cudaError_t.
 *
 * Threads: any.
 */
#include <stdatomic.h>

__attribute__((visibility("hidden"))) int sim_unsupported(const char *name, atomic_int *once);

#define SIM_UNSUPPORTED(fn)                                  \
	__attribute__((visibility("default"))) int fn(void); \
	int fn(void)                                         \
	{                                                    \
		static atomic_int once_;                     \
		return sim_unsupported(#fn, &once_);         \
	}

#include "sim_unsupported_list.h"
