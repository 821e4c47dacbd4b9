/*
 * fuzz_trace.h — the fuzz harness body (fuzz_trace.c), shared by the libFuzzer
 * target and the replay tool.
 */
#ifndef GP_FUZZ_TRACE_H
#define GP_FUZZ_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* Run data through the reader, both analysis passes (the join) and the
 * report writers. Returns 0, or -errno when the harness itself could not run
 * (memfd, memory). Aborts when the reader breaks its contract. */
int gp_fuzz_trace(const uint8_t *data, size_t size);

#endif
