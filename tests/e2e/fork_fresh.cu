// fork_fresh.cu — a pre-fork server in small, for the fork test
// (tests/e2e/test_fork_fresh.sh): the parent forks two children before any
// CUDA call (the pattern of gunicorn/uwsgi workers and of Python
// multiprocessing with fork), each child does its own CUDA work and leaves
// through exit(), the parent waits for both and makes no CUDA call.
//   fork_fresh K0 K1            child i: Ki x (ff_kernel launch, synchronize)
//   fork_fresh K0 K1 HOLD MS    child i: the same pairs, 1 ms apart, Ki
//                               first and then on until MS ms have passed
//                               and the file HOLD exists (at most 60 s):
//                               the test questions its control socket
//   fork_fresh --parent-first K0 K1
//                               the parent launches one kernel and
//                               synchronizes before it forks (its capture
//                               has started: the children are not fresh)
// With FF_PARENT_SLEEP_MS=N in the environment the parent sleeps N ms before
// it forks (a child's delay= then counts from its fork, not the parent's load).
// Stdout: per child "fork_fresh: child PID forked at NS" (CLOCK_MONOTONIC_RAW,
// the trace's clock, read first thing after the fork) and "fork_fresh: child
// PID launched N"; "fork_fresh: parent PID children PID0 PID1" after both
// exited 0.
// Threads: main only, in each process. Cost model: fork_fresh.simcuda.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__global__ void ff_kernel(int *x) { x[threadIdx.x] += 1; }

static void ff_check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "fork_fresh: %s: %s\n", what, cudaGetErrorString(e));
		exit(1);
	}
}

static double ff_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void ff_pair(int *x)
{
	ff_kernel<<<1, 32>>>(x);
	ff_check(cudaGetLastError(), "launch");
	ff_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

static void ff_child(long k, const char *hold, double ms)
{
	struct timespec raw;
	clock_gettime(CLOCK_MONOTONIC_RAW, &raw); /* the trace's clock */
	printf("fork_fresh: child %ld forked at %lld\n", (long)getpid(), raw.tv_sec * 1000000000LL + raw.tv_nsec);
	int *x;
	ff_check(cudaMalloc(&x, 32 * sizeof(int)), "cudaMalloc");
	double t0 = ff_ms();
	struct timespec gap = {0, 1000000};
	long n = 0;
	for (; n < k; n++) {
		ff_pair(x);
		if (hold)
			nanosleep(&gap, NULL);
	}
	while (hold && ff_ms() - t0 < 60e3 && (ff_ms() - t0 < ms || access(hold, F_OK) != 0)) {
		ff_pair(x);
		nanosleep(&gap, NULL);
		n++;
	}
	ff_check(cudaFree(x), "cudaFree");
	printf("fork_fresh: child %ld launched %ld\n", (long)getpid(), n);
	exit(0);
}

int main(int argc, char **argv)
{
	int first = argc > 1 && !strcmp(argv[1], "--parent-first");
	int a = first ? 2 : 1;
	if (argc != a + 2 && argc != a + 4) {
		fprintf(stderr, "usage: fork_fresh [--parent-first] K0 K1 [HOLD MS]\n");
		return 2;
	}
	long k[2] = {strtol(argv[a], NULL, 10), strtol(argv[a + 1], NULL, 10)};
	const char *hold = argc == a + 4 ? argv[a + 2] : NULL;
	double ms = hold ? strtod(argv[a + 3], NULL) : 0;
	if (first) {
		int *x;
		ff_check(cudaMalloc(&x, 32 * sizeof(int)), "cudaMalloc");
		ff_pair(x);
	}
	const char *nap = getenv("FF_PARENT_SLEEP_MS");
	if (nap) {
		long n = strtol(nap, NULL, 10);
		struct timespec ts = {n / 1000, n % 1000 * 1000000L};
		nanosleep(&ts, NULL);
	}
	fflush(stdout);
	pid_t pid[2];
	for (int i = 0; i < 2; i++) {
		pid[i] = fork();
		if (pid[i] < 0) {
			perror("fork_fresh: fork");
			return 1;
		}
		if (pid[i] == 0)
			ff_child(k[i], hold, ms);
	}
	int bad = 0;
	for (int i = 0; i < 2; i++) {
		int st;
		if (waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "fork_fresh: child %ld failed (status 0x%x)\n", (long)pid[i], st);
			bad = 1;
		}
	}
	printf("fork_fresh: parent %ld children %ld %ld\n", (long)getpid(), (long)pid[0], (long)pid[1]);
	return bad;
}
