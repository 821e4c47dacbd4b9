/*
 * split_waits.cu — the host waits of the real-GPU validation kit
 * (tests/gpu/run.sh, checks "split/<scenario>"): small programs that time
 * their own blocking calls, so the report's sync phase can be checked against
 * the program's own clock on a GPU, not only against simcuda's truth.
 *
 * Usage: split_waits SCENARIO
 *   step_sync      20 steps: a 2 ms kernel, then cudaDeviceSynchronize
 *   pageable_copy  10 times: a 5 ms kernel, then cudaMemcpyAsync of 4 KiB
 *                  into pageable (malloc'd) memory, which returns only after
 *                  the kernel and the copy (CUDA's pageable-memory rule)
 *   free_after     10 times: a 5 ms kernel, then cudaFree of another
 *                  buffer, which waits for the device
 *   queue_deep     12000 back-to-back launches of a 100 us kernel, more than
 *                  the launch queue holds, so launches block; then
 *                  cudaDeviceSynchronize
 *
 * Each blocking call is bracketed with CLOCK_MONOTONIC_RAW (the clock of
 * gpuphase traces) and its time summed; stderr gets one line per kind:
 *   wait: <call> <calls> <total ns>
 * and for queue_deep "launch: <calls> <total ns> <base ns>": the summed time
 * of the launch calls and the median of the first 200 (before the queue
 * fills), so that (total - calls x base) is the time launches spent blocked.
 * Stdout is deterministic ("split_waits: <scenario> ok") so a profiled run
 * can be compared with a bare one. Exit 0 on success, 1 on a CUDA error or a
 * wrong result, 2 on a bad argument.
 *
 * The kernels spin on %globaltimer for the time they are given; their
 * simcuda twins do nothing and examples/gpu/split_waits.simcuda gives them
 * the same execution times. Single-threaded, one stream (the legacy one).
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STEP_NS 2000000ull   /* spin_step: step_sync's kernel          */
#define LONG_NS 5000000ull   /* spin_long: pageable_copy, free_after   */
#define QUEUE_NS 100000ull   /* spin_queue: queue_deep                 */
#define STEPS 20
#define REPEATS 10
#define QUEUE_LAUNCHES 12000
#define QUEUE_BASE 200
#define COPY_BYTES 4096

__device__ static inline uint64_t gtimer(void)
{
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__device__ static inline void spin(uint64_t ns, unsigned *out)
{
	uint64_t t0 = gtimer();
	while (gtimer() - t0 < ns)
		;
	*out += 1u;
}

/* Three kernels of one body: simcuda's cost model names them apart. */
__global__ void spin_step(uint64_t ns, unsigned *out) { spin(ns, out); }
__global__ void spin_long(uint64_t ns, unsigned *out) { spin(ns, out); }
__global__ void spin_queue(uint64_t ns, unsigned *out) { spin(ns, out); }

/* simcuda host twins (exported with -Xlinker -E): the count only. */
#define SIM_TWIN(name)                                                                              \
	extern "C" __attribute__((visibility("default"))) void simcuda_kernel_##name(dim3 g, dim3 b,   \
										     void **args) \
	{                                                                                           \
		(void)g;                                                                            \
		(void)b;                                                                            \
		unsigned *out = *(unsigned **)args[1];                                              \
		*out += 1u;                                                                         \
	}
SIM_TWIN(spin_step)
SIM_TWIN(spin_long)
SIM_TWIN(spin_queue)

#define CK(call)                                                                                     \
	do {                                                                                         \
		cudaError_t e_ = (call);                                                             \
		if (e_ != cudaSuccess) {                                                             \
			fprintf(stderr, "split_waits: %s: %s\n", #call, cudaGetErrorString(e_));    \
			exit(1);                                                                     \
		}                                                                                    \
	} while (0)

static uint64_t now_raw(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void say(const char *call, unsigned calls, uint64_t ns)
{
	fprintf(stderr, "wait: %s %u %llu\n", call, calls, (unsigned long long)ns);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The counter the kernels bump, read back once at the end. */
static int check_count(unsigned *d, unsigned want)
{
	unsigned got = 0;
	CK(cudaMemcpy(&got, d, sizeof got, cudaMemcpyDeviceToHost));
	if (got != want) {
		fprintf(stderr, "split_waits: %u kernels ran, %u launched\n", got, want);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: split_waits step_sync|pageable_copy|free_after|queue_deep\n");
		return 2;
	}
	const char *sc = argv[1];
	unsigned *d = NULL;
	CK(cudaMalloc((void **)&d, sizeof *d));
	CK(cudaMemset(d, 0, sizeof *d));
	CK(cudaDeviceSynchronize());
	unsigned launched = 0;
	uint64_t total = 0;
	if (!strcmp(sc, "step_sync")) {
		for (int i = 0; i < STEPS; i++) {
			spin_step<<<1, 1>>>(STEP_NS, d);
			launched++;
			CK(cudaGetLastError());
			uint64_t t0 = now_raw();
			CK(cudaDeviceSynchronize());
			total += now_raw() - t0;
		}
		say("cudaDeviceSynchronize", STEPS, total);
	} else if (!strcmp(sc, "pageable_copy")) {
		unsigned char *dev = NULL, *host = (unsigned char *)malloc(COPY_BYTES);
		if (!host)
			return 1;
		CK(cudaMalloc((void **)&dev, COPY_BYTES));
		CK(cudaMemset(dev, 7, COPY_BYTES));
		CK(cudaDeviceSynchronize());
		for (int i = 0; i < REPEATS; i++) {
			spin_long<<<1, 1>>>(LONG_NS, d);
			launched++;
			CK(cudaGetLastError());
			uint64_t t0 = now_raw();
			CK(cudaMemcpyAsync(host, dev, COPY_BYTES, cudaMemcpyDeviceToHost, 0));
			total += now_raw() - t0;
		}
		CK(cudaDeviceSynchronize());
		int bad = host[0] != 7 || host[COPY_BYTES - 1] != 7;
		CK(cudaFree(dev));
		free(host);
		if (bad) {
			fprintf(stderr, "split_waits: copied bytes wrong\n");
			return 1;
		}
		say("cudaMemcpyAsync", REPEATS, total);
	} else if (!strcmp(sc, "free_after")) {
		for (int i = 0; i < REPEATS; i++) {
			void *other = NULL;
			CK(cudaMalloc(&other, 1 << 20));
			spin_long<<<1, 1>>>(LONG_NS, d);
			launched++;
			CK(cudaGetLastError());
			uint64_t t0 = now_raw();
			CK(cudaFree(other));
			total += now_raw() - t0;
		}
		say("cudaFree", REPEATS, total);
	} else if (!strcmp(sc, "queue_deep")) {
		static uint64_t each[QUEUE_LAUNCHES];
		for (int i = 0; i < QUEUE_LAUNCHES; i++) {
			uint64_t t0 = now_raw();
			spin_queue<<<1, 1>>>(QUEUE_NS, d);
			each[i] = now_raw() - t0;
			total += each[i];
			launched++;
		}
		CK(cudaGetLastError());
		uint64_t base[QUEUE_BASE];
		memcpy(base, each, sizeof base);
		qsort(base, QUEUE_BASE, sizeof base[0], cmp_u64);
		fprintf(stderr, "launch: %u %llu %llu\n", (unsigned)QUEUE_LAUNCHES, (unsigned long long)total,
			(unsigned long long)base[QUEUE_BASE / 2]);
		uint64_t t0 = now_raw();
		CK(cudaDeviceSynchronize());
		say("cudaDeviceSynchronize", 1, now_raw() - t0);
	} else {
		fprintf(stderr, "split_waits: unknown scenario '%s'\n", sc);
		return 2;
	}
	CK(cudaDeviceSynchronize());
	int rc = check_count(d, launched);
	CK(cudaFree(d));
	if (rc)
		return 1;
	printf("split_waits: %s ok\n", sc);
	return 0;
}
