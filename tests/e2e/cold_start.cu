// cold_start.cu — threads that start CUDA together, for the cold-start
// test (tests/e2e/test_cold_start.sh): eight threads wait at a barrier and
// then each makes its first hooked call at once — one cudaMemset of its own
// slice, then 50 kernel launches, then a device synchronize — so one of
// them starts libgpuphase while the other seven call in. 8 x (1 + 50) = 408
// GPU operations, all of which the report must hold. The buffer comes from
// cudaMalloc in main, which the library does not hook: nothing starts the
// library before the barrier. Threads: main and the eight workers, joined.
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define CS_THREADS 8
#define CS_LAUNCHES 50

__global__ void cs_kernel(int *x) { x[threadIdx.x] += 1; }

static pthread_barrier_t cs_barrier;
static int *cs_buf;
static int cs_failed;

static void cs_check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "cold_start: %s: %s\n", what, cudaGetErrorString(e));
		__atomic_store_n(&cs_failed, 1, __ATOMIC_RELAXED);
	}
}

static void *cs_worker(void *arg)
{
	int *slice = cs_buf + 32 * (long)arg;
	pthread_barrier_wait(&cs_barrier);
	cs_check(cudaMemset(slice, 0, 32 * sizeof(int)), "cudaMemset");
	for (int i = 0; i < CS_LAUNCHES; i++) {
		cs_kernel<<<1, 32>>>(slice);
		cs_check(cudaGetLastError(), "launch");
	}
	cs_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
	return NULL;
}

int main(void)
{
	pthread_t t[CS_THREADS];
	if (cudaMalloc(&cs_buf, CS_THREADS * 32 * sizeof(int)) != cudaSuccess) {
		fprintf(stderr, "cold_start: cudaMalloc failed\n");
		return 1;
	}
	pthread_barrier_init(&cs_barrier, NULL, CS_THREADS);
	for (long i = 0; i < CS_THREADS; i++)
		if (pthread_create(&t[i], NULL, cs_worker, (void *)i)) {
			fprintf(stderr, "cold_start: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < CS_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&cs_barrier);
	cudaFree(cs_buf);
	if (cs_failed)
		return 1;
	printf("cold_start: ok\n");
	return 0;
}
