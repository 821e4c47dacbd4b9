/*
 * nvtx_kinds.c — a program for test_export_readers.sh: every kind of NVTX
 * event the trace records, around CUDA work, so that the SQLite export's
 * NVTX_EVENTS and nsys's nvtx_sum are checked on each: start/end ranges
 * ("epoch", three closed and one left open), push/pop ranges ("step") and
 * marks ("tick"). Built by the test with cc against simcuda's runtime.
 * One thread; exits 0, or 1 when a CUDA call fails.
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

int main(void)
{
	void *d = NULL;
	if (cudaMalloc(&d, 256) != cudaSuccess)
		return 1;
	for (int i = 0; i < 3; i++) {
		nvtxRangeId_t epoch = nvtxRangeStartA("epoch");
		nvtxMarkA("tick");
		nvtxRangePushA("step");
		if (cudaMemset(d, i, 256) != cudaSuccess)
			return 1;
		nvtxRangePop();
		nvtxRangeEnd(epoch);
	}
	nvtxRangeStartA("never ended");
	if (cudaDeviceSynchronize() != cudaSuccess || cudaFree(d) != cudaSuccess)
		return 1;
	return 0;
}
