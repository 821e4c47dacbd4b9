// exit_path.cu — a process that leaves through _exit or _Exit, for the exit
// path test (tests/e2e/test_exit_path.sh): its CUDA work must be in its
// trace as after exit() (libgpuphase/exitpath.c).
//   exit_path leave HOW N [reset]
//       N x (ep_kernel launch, async copy to pinned host memory), no synchronize,
//       then leaves by HOW (_exit | _Exit | exit) with status 3 while the
//       GPU may still run them; with "reset" a cudaDeviceSynchronize and a
//       cudaDeviceReset first (simcuda writes its truth file out there: a
//       process that ends with _exit never flushes it otherwise)
//   exit_path fork N
//       the multiprocessing pattern: the parent makes no CUDA call and forks
//       a child that does the N pairs above and leaves with _exit(3); the
//       parent waits for it and exits 0 when it ended with 3
//   exit_path vfork N
//       N pairs and a synchronize, then a vfork child that calls _exit(5)
//       at once (an exec that failed), N pairs more, a synchronize and a
//       reset; exit 0 when the child ended with 5
//   exit_path thread N
//       N pairs, then a thread that never made a CUDA call leaves by
//       _exit(3) while main waits for it (its _exit passes the library's
//       finish by: making that thread a ring could allocate on top of an
//       interrupted malloc)
//   exit_path alarm US
//       one pair and a synchronize (the library has started), then
//       launches, async copies and synchronizes in a loop (at most 10 s);
//       a SIGALRM handler US microseconds in calls _exit(4) on top of
//       whichever call it interrupted (tests/e2e/exit_in_call.cu does the
//       same with exit())
// Stdout: "exit_path: ..." lines, the same bare and profiled (pids only in
// "exit_path: child PID" for the fork mode, which the test reads).
// Threads: main only, in each process (thread mode: one more). Cost model:
// exit_path.simcuda.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__global__ void ep_kernel(int *x) { x[threadIdx.x] += 1; }

static void ep_check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "exit_path: %s: %s\n", what, cudaGetErrorString(e));
		exit(1);
	}
}

// N x (launch, async copy back into pinned memory), nothing waited for:
// the work is still queued when the caller leaves.
static void ep_work(long n)
{
	const size_t bytes = 32 * sizeof(int);
	static int *x, *host; // allocated at the first call
	if (!x) {
		ep_check(cudaMalloc(&x, bytes), "cudaMalloc");
		ep_check(cudaMallocHost(&host, bytes), "cudaMallocHost");
	}
	for (long i = 0; i < n; i++) {
		ep_kernel<<<1, 32>>>(x);
		ep_check(cudaGetLastError(), "launch");
		ep_check(cudaMemcpyAsync(host, x, bytes, cudaMemcpyDeviceToHost, 0), "cudaMemcpyAsync");
	}
}

static void ep_alarm(int sig)
{
	(void)sig;
	_exit(4);
}

static int ep_alarm_loop(long us)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = ep_alarm;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it;
	memset(&it, 0, sizeof it);
	it.it_value.tv_sec = us / 1000000;
	it.it_value.tv_usec = us % 1000000;
	// the library starts at the first CUDA call (and a process that
	// ends while it starts has no capture to finish): armed after it, as
	// exit_in_call.cu does, so the alarm lands on top of a CUDA call
	ep_work(1);
	ep_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
	time_t t0 = time(NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	while (time(NULL) - t0 < 10) {
		ep_work(4);
		ep_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
	}
	fprintf(stderr, "exit_path: no alarm in 10 s\n");
	return 1;
}

static void ep_reset(void)
{
	ep_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
	ep_check(cudaDeviceReset(), "cudaDeviceReset");
}

static int ep_status(pid_t pid, int want)
{
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != want) {
		printf("exit_path: child status 0x%x, expected exit %d\n", st, want);
		return 1;
	}
	printf("exit_path: child exited %d\n", want);
	return 0;
}

static void *ep_leaver(void *arg)
{
	(void)arg;
	_exit(3);
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "leave")) {
		const char *how = argv[2];
		long n = strtol(argv[3], NULL, 10);
		ep_work(n);
		if (argc >= 5 && !strcmp(argv[4], "reset"))
			ep_reset();
		printf("exit_path: %ld pairs, leaving by %s\n", n, how);
		fflush(stdout); // _exit writes no buffered output out
		if (!strcmp(how, "_exit"))
			_exit(3);
		if (!strcmp(how, "_Exit"))
			_Exit(3);
		exit(3);
	}
	if (argc == 3 && !strcmp(argv[1], "fork")) {
		long n = strtol(argv[2], NULL, 10);
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			printf("exit_path: child %ld\n", (long)getpid());
			ep_work(n);
			fflush(stdout);
			_exit(3);
		}
		return ep_status(pid, 3);
	}
	if (argc == 3 && !strcmp(argv[1], "vfork")) {
		long n = strtol(argv[2], NULL, 10);
		ep_work(n);
		ep_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
		fflush(stdout);
		pid_t pid = vfork();
		if (pid == 0)
			_exit(5); // in the parent's memory: only _exit and exec are allowed here
		if (pid < 0)
			return 1;
		int bad = ep_status(pid, 5);
		ep_work(n);
		ep_reset();
		printf("exit_path: vfork parent done\n");
		return bad;
	}
	if (argc == 3 && !strcmp(argv[1], "thread")) {
		ep_work(strtol(argv[2], NULL, 10));
		printf("exit_path: a thread without CUDA calls leaves by _exit\n");
		fflush(stdout);
		pthread_t t;
		if (pthread_create(&t, NULL, ep_leaver, NULL) != 0)
			return 1;
		pthread_join(t, NULL);
		return 1; // never reached: the thread ends the process
	}
	if (argc == 3 && !strcmp(argv[1], "alarm"))
		return ep_alarm_loop(strtol(argv[2], NULL, 10));
	fprintf(stderr, "usage: exit_path leave _exit|_Exit|exit N [reset] | fork N | vfork N | thread N | alarm US\n");
	return 2;
}
