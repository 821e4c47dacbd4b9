/*
 * fuzz_main.c — the libFuzzer entry point (`make fuzz`, clang
 * -fsanitize=fuzzer,address,undefined): every input goes through
 * gp_fuzz_trace (fuzz_trace.c).
 */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gp_fuzz_trace(data, size);
	return 0;
}
