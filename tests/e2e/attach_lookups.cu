// attach_lookups.cu — a long-running CUDA program for test_cli_attach_lookups.sh
// that reaches cudaLaunchKernel through function pointers it looks up itself,
// the ways programs and frameworks do, besides its import. Each iteration
// launches six kernels on one stream, one per way:
//   lk_direct   <<<>>>: the executable's own import (its GOT entry)
//   lk_early    a pointer from dlsym(cudart, "cudaLaunchKernel") taken at
//               start-up, before any attach
//   lk_late     dlsym(cudart, "cudaLaunchKernel"), looked up again each time
//   lk_vsym     dlvsym(cudart, "cudaLaunchKernel", "libcudart.so.13"), each time
//   lk_default  dlsym(RTLD_DEFAULT, "cudaLaunchKernel"), each time
//   lk_kept     a pointer looked up once when SIGUSR1 arrives (the test sends
//               it while attached) and used from then on; the start-up
//               pointer until then
// then cudaStreamSynchronize (one iteration for the default marker) and a
// sleep: 1 ms, or LOOKUPS_PAUSE_US microseconds (0: none, iterations back
// to back, so that an attach's patch spans several of them). On start it prints "attach_lookups: pid N ready" to stderr;
// when it takes the kept pointer, "attach_lookups: kept pointer taken (hook)"
// or "(runtime)": which object the pointer lies in. SIGTERM: it ends the
// iteration, synchronizes and prints to stdout
//   lookups: iterations N errors E kept=hook|runtime late=hook|runtime
// (late: a fresh dlsym now), then exits 0 (the simcuda truth is flushed).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <unistd.h>
#include <cuda_runtime.h>

__global__ void lk_direct(int n) { (void)n; }
__global__ void lk_early(int n) { (void)n; }
__global__ void lk_late(int n) { (void)n; }
__global__ void lk_vsym(int n) { (void)n; }
__global__ void lk_default(int n) { (void)n; }
__global__ void lk_kept(int n) { (void)n; }

typedef cudaError_t (*lk_launch_fn)(const void *, dim3, dim3, void **, size_t, cudaStream_t);

static volatile sig_atomic_t lk_stop, lk_take;

static void lk_on_signal(int sig)
{
	if (sig == SIGUSR1)
		lk_take = 1;
	else
		lk_stop = 1;
}

// "hook" when p lies in libgpuphase.so, else "runtime".
static const char *lk_where(void *p)
{
	Dl_info di;
	return p && dladdr(p, &di) && di.dli_fname && strstr(di.dli_fname, "libgpuphase") ? "hook" : "runtime";
}

static lk_launch_fn lk_lookup(void *rt)
{
	return (lk_launch_fn)dlsym(rt, "cudaLaunchKernel");
}

int main()
{
	void *rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
	if (!rt) {
		fprintf(stderr, "attach_lookups: libcudart.so.13 not loaded: %s\n", dlerror());
		return 1;
	}
	lk_launch_fn early = lk_lookup(rt), kept = early;
	if (!early) {
		fprintf(stderr, "attach_lookups: no cudaLaunchKernel in the runtime\n");
		return 1;
	}
	cudaStream_t s;
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
		fprintf(stderr, "attach_lookups: cannot create a stream\n");
		return 1;
	}
	struct sigaction act;
	memset(&act, 0, sizeof act);
	act.sa_handler = lk_on_signal;
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	sigaction(SIGUSR1, &act, NULL);
	fprintf(stderr, "attach_lookups: pid %d ready\n", (int)getpid());

	long iterations = 0, errors = 0;
	int n = 1;
	void *args[] = {&n};
	const dim3 g(1), b(32);
	const char *pause_env = getenv("LOOKUPS_PAUSE_US");
	const long pause_us = pause_env ? atol(pause_env) : 1000;
	while (!lk_stop) {
		if (lk_take) {
			lk_take = 0;
			kept = lk_lookup(rt);
			fprintf(stderr, "attach_lookups: kept pointer taken (%s)\n", lk_where((void *)kept));
		}
		lk_launch_fn late = lk_lookup(rt);
		lk_launch_fn vsym = (lk_launch_fn)dlvsym(rt, "cudaLaunchKernel", "libcudart.so.13");
		lk_launch_fn dflt = (lk_launch_fn)dlsym(RTLD_DEFAULT, "cudaLaunchKernel");
		if (!late || !vsym || !dflt || !kept) {
			errors++;
			break;
		}
		lk_direct<<<g, b, 0, s>>>(n);
		errors += early((const void *)lk_early, g, b, args, 0, s) != cudaSuccess;
		errors += late((const void *)lk_late, g, b, args, 0, s) != cudaSuccess;
		errors += vsym((const void *)lk_vsym, g, b, args, 0, s) != cudaSuccess;
		errors += dflt((const void *)lk_default, g, b, args, 0, s) != cudaSuccess;
		errors += kept((const void *)lk_kept, g, b, args, 0, s) != cudaSuccess;
		errors += cudaGetLastError() != cudaSuccess;
		errors += cudaStreamSynchronize(s) != cudaSuccess;
		iterations++;
		if (pause_us > 0) {
			struct timespec pause = {pause_us / 1000000, pause_us % 1000000 * 1000};
			nanosleep(&pause, NULL);
		}
	}
	errors += cudaDeviceSynchronize() != cudaSuccess;
	printf("lookups: iterations %ld errors %ld kept=%s late=%s\n", iterations, errors, lk_where((void *)kept),
	       lk_where((void *)lk_lookup(rt)));
	cudaStreamDestroy(s);
	return 0;
}
