/*
 * launch_storm.cu — the records/s stress of the real-GPU validation kit
 * (tests/gpu/run.sh, check "storm"): N back-to-back launches of a one-thread
 * kernel (default 1,000,000), then one synchronize.
 *
 * Every launch is a triple-chevron launch, i.e. __cudaLaunchKernel through
 * cudart, so under the preload (default CUPTI mode, lean) each one produces a
 * hook record, CUPTI RUNTIME and DRIVER records and a kernel record (with
 * GPUPHASE_CUPTI=full an external-correlation record too): about 4N records
 * in a few seconds, which is what the collector must carry without drops at
 * default settings.
 *
 * Usage: launch_storm [N]   (1 <= N <= 1000000000)
 *
 * Output: stdout is deterministic ("launch_storm: N launches, counter N") so
 * a profiled run can be compared byte for byte with a bare one; timings go to
 * stderr as "timing: <what> <ms>" lines (CUDA events for the GPU span of the
 * launches, CLOCK_MONOTONIC for the host loop). Exit status 0 when every
 * launch ran (the kernel counts itself), 1 on a CUDA error or a wrong count,
 * 2 on a bad argument.
 *
 * Single-threaded; the kernel is the whole device-side program (plus its host
 * twin for simcuda).
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* One thread adds one: after N launches *counter == N. */
__global__ void storm_tick(unsigned long long *counter)
{
	atomicAdd(counter, 1ull);
}

/*
 * The same kernel's body for simcuda (docs/simcuda.md): the simulator runs a
 * launched kernel's host function simcuda_kernel_<name>, found with dlsym,
 * on its host-backed "device" memory (so the program is linked with
 * --export-dynamic). Never called on a real GPU.
 */
extern "C" __attribute__((visibility("default"))) void
simcuda_kernel_storm_tick(dim3 grid, dim3 block, void **args)
{
	(void)grid;
	(void)block;
	unsigned long long *counter = *(unsigned long long **)args[0];
	++*counter;
}

#define CHECK(call)                                                            \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "launch_storm: %s failed: %s\n", #call, \
				cudaGetErrorString(e_));                       \
			return 1;                                              \
		}                                                              \
	} while (0)

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	long long n = 1000000;
	if (argc > 2) {
		fprintf(stderr, "usage: launch_storm [N]\n");
		return 2;
	}
	if (argc == 2) {
		char *end = NULL;
		errno = 0;
		n = strtoll(argv[1], &end, 10);
		if (errno || end == argv[1] || *end || n < 1 || n > 1000000000ll) {
			fprintf(stderr, "launch_storm: N='%s': expected an integer from 1 to 1000000000\n",
				argv[1]);
			return 2;
		}
	}

	unsigned long long *d_counter = NULL, h_counter = 0;
	cudaEvent_t e0, e1;
	CHECK(cudaMalloc((void **)&d_counter, sizeof *d_counter));
	CHECK(cudaMemset(d_counter, 0, sizeof *d_counter));
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	CHECK(cudaDeviceSynchronize());

	double t0 = now_ms();
	CHECK(cudaEventRecord(e0, 0));
	for (long long i = 0; i < n; i++)
		storm_tick<<<1, 1>>>(d_counter);
	CHECK(cudaGetLastError());
	CHECK(cudaEventRecord(e1, 0));
	CHECK(cudaDeviceSynchronize());
	double t1 = now_ms();

	float gpu_ms = 0.0f;
	CHECK(cudaEventElapsedTime(&gpu_ms, e0, e1));
	CHECK(cudaMemcpy(&h_counter, d_counter, sizeof h_counter, cudaMemcpyDeviceToHost));
	CHECK(cudaEventDestroy(e0));
	CHECK(cudaEventDestroy(e1));
	CHECK(cudaFree(d_counter));

	printf("launch_storm: %lld launches, counter %llu\n", n, h_counter);
	fprintf(stderr, "timing: storm_gpu_span %.3f\n", (double)gpu_ms);
	fprintf(stderr, "timing: storm_host_loop %.3f\n", t1 - t0);
	fprintf(stderr, "launch_storm: %.0f launches/s\n", (double)n / ((t1 - t0) / 1e3));
	if (h_counter != (unsigned long long)n) {
		fprintf(stderr, "launch_storm: self-check failed: counter %llu, expected %lld\n",
			h_counter, n);
		return 1;
	}
	return 0;
}
