/* cslib.c — a CUDA library a Python program calls through ctypes
 * (test_pyframes.sh, bench_pyframes.sh): each entry point blocks the host in
 * the runtime. */
#include <cuda_runtime_api.h>

static void *cs_buf;

int cs_setup(void)
{
	return cudaMalloc(&cs_buf, 1 << 20);
}

int cs_wait(void)
{
	return cudaDeviceSynchronize();
}

int cs_copy(void)
{
	static char host[4096];
	return cudaMemcpy(cs_buf, host, sizeof host, cudaMemcpyHostToDevice);
}

/* Calls cb (a ctypes callback: it records the line CPython gives its
 * caller's frame, lines.py), then blocks: at the wait, the caller's frame
 * is where it was when cb ran. */
int cs_wait_after(void (*cb)(void))
{
	cb();
	return cudaDeviceSynchronize();
}
