// report_rule_of_thumb.cu — the field's rule-of-thumb table as a scenario for
// gpuphase-report's end-to-end accuracy test (tests/e2e/test_report_e2e.sh):
// three operators whose per-call launch / execute / sync are, in us,
//   op_sync_bound     820 /  450 / 1230   -> sync-bound
//   op_compute_bound  150 / 3200 /   80   -> compute-bound
//   op_small           60 /  120 /   50   -> launch-bound (launch share 26 %)
// Launch and execute come from the cost model (report_rule_of_thumb.simcuda:
// launch_ns / exec_ns per kernel, launch_latency_ns L = 1000 us, sync_ns
// S = 10 us). Sync is the cudaDeviceSynchronize that waits for each op. The
// kernel ends launch + L + exec after the launch call began (simcuda spins
// the launch to an absolute time), so the host, timing from just before the
// launch, calls the sync at launch + L + exec + S - sync and waits `sync`.
// Built with nvcc -cudart shared; meant for simcuda (on a GPU the times differ).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__global__ void op_sync_bound(int *x) { x[0] += 1; }
__global__ void op_compute_bound(int *x) { x[1] += 1; }
__global__ void op_small(int *x) { x[2] += 1; }
__global__ void warmup(int *x) { x[3] += 1; }

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* Sleep through most of the wait (a sleeping thread loses nothing when the
 * machine is busy), then spin the last 300 us for precision. */
static void spin_until(unsigned long long t)
{
	unsigned long long n = now_ns();
	if (t > n + 400000ull) {
		unsigned long long d = t - n - 300000ull;
		struct timespec ts = { (time_t)(d / 1000000000ull), (long)(d % 1000000000ull) };
		nanosleep(&ts, NULL);
	}
	while (now_ns() < t)
		;
}

#define CK(call)                                                                          \
	do {                                                                              \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
			exit(1);                                                          \
		}                                                                         \
	} while (0)

int main(int argc, char **argv)
{
	int calls = argc > 1 ? atoi(argv[1]) : 20;
	int *d;
	CK(cudaMalloc(&d, 4 * sizeof(int)));
	CK(cudaMemset(d, 0, 4 * sizeof(int)));
	warmup<<<1, 1>>>(d); /* first-launch costs land here, not in the table */
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < calls; i++) {
		unsigned long long t = now_ns();
		op_sync_bound<<<1, 1>>>(d);
		spin_until(t + (820 + 1000 + 450 + 10 - 1230) * 1000ull);
		CK(cudaDeviceSynchronize());
		t = now_ns();
		op_compute_bound<<<1, 1>>>(d);
		spin_until(t + (150 + 1000 + 3200 + 10 - 80) * 1000ull);
		CK(cudaDeviceSynchronize());
		t = now_ns();
		op_small<<<1, 1>>>(d);
		spin_until(t + (60 + 1000 + 120 + 10 - 50) * 1000ull);
		CK(cudaDeviceSynchronize());
	}
	CK(cudaFree(d));
	printf("report_rule_of_thumb: %d calls of each operator\n", calls);
	return 0;
}
