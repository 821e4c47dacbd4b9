// multirank.cu — one rank of a simulated data-parallel job, for the
// cross-rank tests (tests/e2e/test_multinode.sh): several of these run at
// once on simcuda (tests/e2e/multirank.simcuda), each with its rank
// variables, and their collectives end together as NCCL's do:
//
//   start     cudaMalloc, one warm-up kernel, cudaDeviceSynchronize (the
//             first iteration mark), then a barrier with the other ranks
//             through MR_SHM (a shared file of 64 KiB): the last to arrive
//             sets the start T0 on CLOCK_MONOTONIC, which every process of
//             one host shares — the test's stand-in for physical time
//   each of MR_ITERS iterations k: wait until T0 + k * MR_PERIOD_US, then
//             mr_pre (MR_PRE_US[rank] µs), the "all-reduce"
//             ncclDevKernel_AllReduce_Sum_f32_RING_LL, mr_post
//             (MR_POST_US[rank] µs), cudaDeviceSynchronize (marker = sync:
//             one iteration each).
//
// The all-reduce: the GPU is idle when mr_pre is launched, so it starts
// MR_LATENCY_NS (simcuda's launch_latency_ns) after its launch returns and
// this rank's all-reduce can start when it ends. Each rank publishes that
// moment (on CLOCK_MONOTONIC) for iteration k in MR_SHM, waits for every
// rank's, and gives its all-reduce kernel the time from its own moment to
// the latest one plus MR_XFER_US: every rank's all-reduce then ends at the
// same instant, the slowest rank's start + transfer, and rank r waits for
// the slowest rank in it, as a real one would (a rank still waiting for the
// others when its mr_pre has ended starts its all-reduce when that launch
// returns, taken to cost what its mr_pre launch did). This holds while no
// rank's host stalls longer than its mr_pre runs (give it milliseconds);
// a host stalled longer makes that iteration's ends disagree, which the
// truth shows and the test allows for. Kernel times come from the
// grid (the cost model gives 1 µs per block, 100 ns for the all-reduce), so
// this program sets them without any simcuda knob. Under clockshift.so
// (tests/common/clockshift.c) a rank's clocks read as another host's;
// CLOCK_MONOTONIC is left alone. Stdout: one line.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

__global__ void mr_warm(float *x) { x[threadIdx.x] = 0.0f; }
__global__ void mr_pre(float *x) { x[blockIdx.x] += 1.0f; }
__global__ void mr_post(float *x) { x[blockIdx.x] *= 0.5f; }
__global__ void ncclDevKernel_AllReduce_Sum_f32_RING_LL(float *x) { x[blockIdx.x] += x[0]; }

static long mr_env(const char *name, long def)
{
	const char *v = getenv(name);
	return v && *v ? strtol(v, NULL, 10) : def;
}

/* The i-th number of a comma-separated list. */
static long mr_list(const char *name, int i, long def)
{
	const char *v = getenv(name);
	for (int k = 0; v && *v; k++) {
		char *end;
		long x = strtol(v, &end, 10);
		if (k == i)
			return x;
		v = *end == ',' ? end + 1 : NULL;
	}
	return def;
}

static long long mr_mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ll + t.tv_nsec;
}

/* Sleep until shortly before t, then spin to it. */
static void mr_until(long long t)
{
	for (;;) {
		long long now = mr_mono_ns(), left = t - now;
		if (left <= 0)
			return;
		if (left > 300000) {
			struct timespec s = { 0, (long)(left - 200000) };
			nanosleep(&s, NULL);
		}
	}
}

int main(void)
{
	int rank = (int)mr_env("MR_RANK", 0), nranks = (int)mr_env("MR_NRANKS", 1);
	int iters = (int)mr_env("MR_ITERS", 100);
	long period = mr_env("MR_PERIOD_US", 2000), xfer = mr_env("MR_XFER_US", 100);
	long pre = mr_list("MR_PRE_US", rank, 100), post = mr_list("MR_POST_US", rank, 50);
	const char *shm = getenv("MR_SHM");
	if (!shm) {
		fprintf(stderr, "multirank: MR_SHM not set\n");
		return 2;
	}
	int fd = open(shm, O_RDWR);
	long long *sh = fd >= 0 ? (long long *)mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : NULL;
	if (!sh || sh == MAP_FAILED) {
		fprintf(stderr, "multirank: %s: %s\n", shm, strerror(errno));
		return 2;
	}
	float *buf;
	CK(cudaMalloc(&buf, 1 << 20));
	mr_warm<<<1, 32>>>(buf);
	CK(cudaDeviceSynchronize());
	/* barrier: sh[0] counts arrivals, sh[1] is T0 (set by the last one) */
	if (__atomic_add_fetch(&sh[0], 1, __ATOMIC_ACQ_REL) == nranks)
		__atomic_store_n(&sh[1], mr_mono_ns() + 50000000ll, __ATOMIC_RELEASE);
	long long t0;
	long long give_up = mr_mono_ns() + 120000000000ll;
	while (!(t0 = __atomic_load_n(&sh[1], __ATOMIC_ACQUIRE))) {
		if (mr_mono_ns() > give_up) {
			fprintf(stderr, "multirank: the other ranks never came\n");
			return 3;
		}
		usleep(200);
	}
	long latency = mr_env("MR_LATENCY_NS", 2000);
	if (iters * nranks + 2 > 8192 || nranks > 64) {
		fprintf(stderr, "multirank: MR_SHM holds 8190 rank-iterations\n");
		return 2;
	}
	for (int k = 0; k < iters; k++) {
		mr_until(t0 + (long long)k * period * 1000);
		long long before = mr_mono_ns();
		mr_pre<<<(unsigned)pre, 1>>>(buf);
		long long ret = mr_mono_ns(), launch = ret - before;
		long long mine = ret + latency + pre * 1000, last = 0;
		long long *slot = &sh[2 + k * nranks];
		__atomic_store_n(&slot[rank], mine, __ATOMIC_RELEASE);
		for (int r = 0; r < nranks; r++) {
			long long v;
			while (!(v = __atomic_load_n(&slot[r], __ATOMIC_ACQUIRE))) {
				if (mr_mono_ns() > give_up) {
					fprintf(stderr, "multirank: rank %d never reached iteration %d\n", r, k);
					return 3;
				}
				sched_yield();
			}
			if (v > last)
				last = v;
		}
		/* a rank that waited past its own mr_pre's end starts its
		 * all-reduce when the launch below returns, not at that end */
		long long now = mr_mono_ns();
		if (now + launch + latency > mine)
			mine = now + launch + latency;
		long long ar = last > mine ? last - mine + xfer * 1000 : xfer * 1000; /* this rank's all-reduce, ns */
		ncclDevKernel_AllReduce_Sum_f32_RING_LL<<<(unsigned)((ar + 50) / 100), 1>>>(buf);
		mr_post<<<(unsigned)post, 1>>>(buf);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
	}
	CK(cudaFree(buf));
	printf("multirank: rank %d of %d, %d iterations, pre %ldus, post %ldus ok\n", rank, nranks, iters, pre, post);
	return 0;
}
