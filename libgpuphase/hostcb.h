/*
 * hostcb.h — hostcb.c's entry points for the host-function hooks (hooks.c):
 * wrap the program's function before the real call, settle after it. Kept
 * out of gp_lib.h because it needs the CUDA runtime's types.
 *
 * Threads: the calling application thread. Invariant: a slot returned by a
 * wrap is passed to gp_hostcb_settle with the real call's result, once.
 */
#ifndef GP_HOSTCB_H
#define GP_HOSTCB_H

#include <stdint.h>

#include <cuda_runtime_api.h>

/* Swap *fn / *cb and *user for a trampoline and a pool slot that remember
 * them and op (the enqueuing call's op id). Returns the slot, or NULL when
 * nothing was swapped (no function, or no free slot: counted). */
void *gp_hostcb_wrap_fn(cudaHostFn_t *fn, void **user, uint32_t op);
void *gp_hostcb_wrap_stream(cudaStreamCallback_t *cb, void **user, uint32_t op);
/* After the real call: a refused call (result != cudaSuccess) never runs its
 * function, so its slot is freed. slot may be NULL. */
void gp_hostcb_settle(void *slot, int result);

#endif
