/*
 * rel_prog.c — the host program of the reliability suite (tests/reliability/
 * test_rel_*.sh): a small CUDA-runtime client (linked against libcudart.so.13,
 * run on simcuda) whose every behaviour the profiler must leave unchanged.
 * Built without sanitizers, like the examples.
 *
 * Modes (argv[1]); every hooked call is a cudaMemsetAsync (class memset async,
 * one GP_REC_HOOK_API record each) or a cudaDeviceSynchronize:
 *   basic N EXIT        N memsets + syncs; deterministic stdout (with the
 *                       process's caught-signal mask, SigCgt, and a checksum
 *                       of errno and cudaPeekAtLastError after every call,
 *                       an erroring call included); writes rel_out.txt;
 *                       exits with EXIT
 *   crash KIND N MS D   N calls, sleep MS ms, calls without pause for D ms,
 *                       print "timing: crash_at_raw_ns T" (trace clock) to
 *                       stderr, then die by KIND: segv | abort | kill |
 *                       handler (own SIGSEGV handler that prints, _exits 42)
 *   fork N              N calls, fork; the child makes N calls and exit(0)s
 *                       (atexit handlers run); the parent waits, N more calls
 *   forkexec N          N calls, fork + exec of `basic N 0`, N more calls
 *   spawn N             N calls, posix_spawn of `basic N 0`, N more calls
 *   threads W T K       W waves of T short-lived threads, K calls each
 *   cancel T            T threads looping on calls, cancelled by main
 *   exitrace T          T threads looping on calls; main calls exit(0) while
 *                       they run (the library's exit path races them)
 *   load T K            T threads at once, K memsets each; prints "tid TID K"
 *   coldload T K        the same with no hooked call before: the threads'
 *                       first calls start the library
 *                       per thread and "hwm_kb N" (peak RSS) at the end
 * Before starting workers, main makes one call and sleeps 100 ms so the
 * library starts (and emits its own records) on the main thread.
 *
 * Exit status 0 unless the mode says otherwise; 3 on a CUDA error.
 */
#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void *rp_dev;
static const char *rp_self;

static void rp_check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "rel_prog: %s: %s\n", what, cudaGetErrorString(e));
		exit(3);
	}
}

/* What the calls left in errno and in CUDA's last-error state, folded into
 * one number: the profiler must leave both exactly as the real call did. */
static unsigned rp_statesum;

static void rp_fold_state(void)
{
	rp_statesum = rp_statesum * 31u + (unsigned)errno;
	rp_statesum = rp_statesum * 31u + (unsigned)cudaPeekAtLastError();
}

static void rp_calls(long n)
{
	for (long i = 0; i < n; i++) {
		errno = 0x5a5a;
		rp_check(cudaMemsetAsync(rp_dev, (int)(i & 0xff), 64, 0), "cudaMemsetAsync");
		rp_fold_state();
		if (i % 16 == 15) {
			errno = 0x5a5b;
			rp_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
			rp_fold_state();
		}
	}
}

/* An erroring call: its error must reach the program unchanged. */
static void rp_bad_call(void)
{
	errno = 0x5a5c;
	cudaError_t e = cudaMemsetAsync(NULL, 0, 64, (cudaStream_t)0);
	rp_statesum = rp_statesum * 31u + (unsigned)e;
	rp_fold_state();
	(void)cudaGetLastError(); /* clear it, as a program handling it would */
}

/* The trace clock (CLOCK_MONOTONIC_RAW), ns. */
static uint64_t rp_raw_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void rp_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void rp_warm(void)
{
	rp_check(cudaMalloc(&rp_dev, 4096), "cudaMalloc");
	rp_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
	rp_sleep_ms(100);
}

static void *rp_worker(void *arg)
{
	long k = (long)arg;
	rp_calls(k);
	return NULL;
}

struct rp_load {
	long k;
	pid_t tid;
};

static void *rp_load_worker(void *arg)
{
	struct rp_load *l = arg;
	l->tid = (pid_t)syscall(SYS_gettid);
	for (long i = 0; i < l->k; i++)
		rp_check(cudaMemsetAsync(rp_dev, 0, 64, 0), "cudaMemsetAsync");
	return NULL;
}

static pthread_barrier_t rp_cold_barrier;

static void *rp_coldload_worker(void *arg)
{
	pthread_barrier_wait(&rp_cold_barrier);
	return rp_load_worker(arg);
}

static void *rp_cancel_worker(void *arg)
{
	(void)arg;
	for (;;) {
		rp_check(cudaMemsetAsync(rp_dev, 1, 64, 0), "cudaMemsetAsync");
		rp_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
		pthread_testcancel();
	}
	return NULL;
}

/* A field of /proc/self/status as text ("" if absent). */
static void rp_status(const char *key, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t k = strlen(key);
	out[0] = 0;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, key, k) && line[k] == ':') {
			char *v = line + k + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			v[strcspn(v, "\n")] = 0;
			snprintf(out, len, "%s", v);
		}
	if (f)
		fclose(f);
}

static long rp_hwm_kb(void)
{
	char v[64];
	rp_status("VmHWM", v, sizeof v);
	return v[0] ? strtol(v, NULL, 10) : -1;
}

static void rp_segv_handler(int sig)
{
	static const char msg[] = "rel_prog: own handler ran\n";
	(void)sig;
	if (write(1, msg, sizeof msg - 1) < 0)
		_exit(43);
	_exit(42);
}

static int rp_usage(void)
{
	fprintf(stderr, "usage: rel_prog basic|crash|fork|forkexec|spawn|threads|cancel|exitrace|load ARGS (see rel_prog.c)\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return rp_usage();
	rp_self = argv[0];
	const char *mode = argv[1];
	long n = strtol(argv[2], NULL, 10);
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(mode, "basic") && argc >= 4) {
		rp_warm();
		rp_calls(n);
		rp_bad_call();
		FILE *f = fopen("rel_out.txt", "w");
		if (!f)
			return 4;
		for (long i = 0; i < n; i++)
			fprintf(f, "line %ld %08lx\n", i, (unsigned long)(i * 2654435761u));
		fclose(f);
		/* The library installs no handler. Signals 32 and 33 are glibc's
		 * own (SIGCANCEL, SIGSETXID: installed once a process has threads,
		 * as the writer thread makes it), not the application's. */
		char cgt[64];
		rp_status("SigCgt", cgt, sizeof cgt);
		unsigned long long mask = strtoull(cgt, NULL, 16) & ~(3ull << 31);
		printf("rel_prog: basic %ld done, caught signals %016llx, errno/CUDA error state %08x\n", n, mask,
		       rp_statesum);
		return atoi(argv[3]);
	}
	if (!strcmp(mode, "crash") && argc >= 6) {
		const char *kind = argv[2];
		long ms = strtol(argv[4], NULL, 10), dur = strtol(argv[5], NULL, 10);
		n = strtol(argv[3], NULL, 10);
		if (!strcmp(kind, "handler")) {
			struct sigaction sa;
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = rp_segv_handler;
			sigaction(SIGSEGV, &sa, NULL);
		}
		rp_warm();
		rp_calls(n);
		rp_sleep_ms(ms);
		uint64_t until = rp_raw_ns() + (uint64_t)dur * 1000000u;
		while (rp_raw_ns() < until) { /* memsets only: each call is short */
			for (int i = 0; i < 16; i++)
				rp_check(cudaMemsetAsync(rp_dev, i, 64, 0), "cudaMemsetAsync");
			struct timespec ts = { 0, 200000 }; /* ~50k calls/s: the writer keeps up */
			nanosleep(&ts, NULL);
		}
		printf("rel_prog: crashing (%s)\n", kind);
		/* "timing:" lines are normalised away by the tests' stderr compare */
		fprintf(stderr, "timing: crash_at_raw_ns %llu\n", (unsigned long long)rp_raw_ns());
		if (!strcmp(kind, "abort"))
			abort();
		if (!strcmp(kind, "kill"))
			raise(SIGKILL);
		volatile int *volatile p = NULL;
		*p = 1; /* segv, handler */
		return 5;
	}
	if ((!strcmp(mode, "fork") || !strcmp(mode, "forkexec") || !strcmp(mode, "spawn")) && argc >= 3) {
		rp_warm();
		rp_calls(n);
		pid_t pid;
		if (!strcmp(mode, "spawn")) {
			char *args[] = { (char *)rp_self, "basic", argv[2], "0", NULL };
			int rc = posix_spawn(&pid, rp_self, NULL, NULL, args, environ);
			if (rc)
				return 6;
		} else {
			pid = fork();
			if (pid < 0)
				return 6;
			if (pid == 0) {
				if (!strcmp(mode, "forkexec")) {
					execl(rp_self, rp_self, "basic", argv[2], "0", (char *)NULL);
					_exit(127);
				}
				rp_calls(n);
				printf("rel_prog: child done\n");
				exit(0);
			}
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			printf("rel_prog: child failed (status 0x%x)\n", st);
			return 7;
		}
		rp_calls(n);
		printf("rel_prog: %s done\n", mode);
		return 0;
	}
	if (!strcmp(mode, "threads") && argc >= 5) {
		long t = strtol(argv[3], NULL, 10), k = strtol(argv[4], NULL, 10);
		pthread_t th[256];
		if (t < 1 || t > 256)
			return rp_usage();
		rp_warm();
		for (long w = 0; w < n; w++) {
			for (long i = 0; i < t; i++)
				if (pthread_create(&th[i], NULL, rp_worker, (void *)k))
					return 8;
			for (long i = 0; i < t; i++)
				pthread_join(th[i], NULL);
		}
		printf("rel_prog: threads %ld x %ld x %ld done\n", n, t, k);
		return 0;
	}
	if (!strcmp(mode, "cancel")) {
		pthread_t th[64];
		if (n < 1 || n > 64)
			return rp_usage();
		rp_warm();
		for (int round = 0; round < 20; round++) {
			for (long i = 0; i < n; i++)
				if (pthread_create(&th[i], NULL, rp_cancel_worker, NULL))
					return 8;
			rp_sleep_ms(5);
			for (long i = 0; i < n; i++)
				pthread_cancel(th[i]);
			for (long i = 0; i < n; i++) {
				void *ret;
				pthread_join(th[i], &ret);
				if (ret != PTHREAD_CANCELED)
					return 9;
			}
		}
		rp_calls(32);
		printf("rel_prog: cancel done\n");
		return 0;
	}
	if (!strcmp(mode, "exitrace")) {
		pthread_t th[64];
		if (n < 1 || n > 64)
			return rp_usage();
		rp_warm();
		for (long i = 0; i < n; i++)
			if (pthread_create(&th[i], NULL, rp_cancel_worker, NULL))
				return 8;
		rp_sleep_ms(50);
		printf("rel_prog: exiting with %ld threads in CUDA calls\n", n);
		exit(0); /* atexit handlers run while the workers keep calling */
	}
	if (!strcmp(mode, "coldload") && argc >= 4) {
		/* like load, but no call the library hooks before the threads:
		 * they all arrive at once, one starts the library, the others'
		 * calls meanwhile are lost and must be counted */
		long k = strtol(argv[3], NULL, 10);
		static struct rp_load l[256];
		static pthread_t th[256];
		if (n < 1 || n > 256)
			return rp_usage();
		rp_check(cudaMalloc(&rp_dev, 4096), "cudaMalloc"); /* not hooked: the library stays idle */
		pthread_barrier_init(&rp_cold_barrier, NULL, (unsigned)n);
		for (long i = 0; i < n; i++) {
			l[i].k = k;
			if (pthread_create(&th[i], NULL, rp_coldload_worker, &l[i]))
				return 8;
		}
		for (long i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		for (long i = 0; i < n; i++)
			printf("tid %ld %ld\n", (long)l[i].tid, l[i].k);
		return 0;
	}
	if (!strcmp(mode, "load") && argc >= 4) {
		long k = strtol(argv[3], NULL, 10);
		static struct rp_load l[256];
		static pthread_t th[256];
		if (n < 1 || n > 256)
			return rp_usage();
		rp_warm();
		for (long i = 0; i < n; i++) {
			l[i].k = k;
			if (pthread_create(&th[i], NULL, rp_load_worker, &l[i]))
				return 8;
		}
		for (long i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		for (long i = 0; i < n; i++)
			printf("tid %ld %ld\n", (long)l[i].tid, l[i].k);
		printf("hwm_kb %ld\n", rp_hwm_kb());
		return 0;
	}
	return rp_usage();
}
