// lt_prog.cu — the workload the libgpuphase end-to-end tests run under the
// preload (test_lib_e2e.c). Built with nvcc -cudart shared like the examples,
// run on simcuda. Stdout is deterministic (the tests compare it byte for byte
// with an unprofiled run); nothing timing-dependent is printed.
//
// Each step s (0-based) is, in this order:
//   nvtxRangePushA("step"); cudaPeekAtLastError()   <- truth-visible sentinel
//   cudaProfilerStart()
//   lt::mark_kernel<<<1,1>>>   work_kernel<<<>>> x2  (one stream)
//   cudaMemsetAsync, cudaMemcpyAsync DtoH
//   cudaStreamSynchronize(stream)
//   cudaProfilerStop(); nvtxRangePop()
// so every GPUPHASE_ITER_MARKER kind has a boundary the ground truth shows.
//
// Usage: lt_prog MODE STEPS   MODE = plain | subscribe | fork | threads
//   subscribe: take the CUPTI subscription first (like nsys / Kineto would)
//   fork:      fork after half the steps; the child checks its data and exits
//   threads:   STEPS short-lived threads one after another, each making one
//              cudaStreamSynchronize (a GPUPHASE_STACKS=sync call), then
//              "lt_prog: rss_growth_kb N" on stderr (VmRSS after the last
//              thread minus after the first) and "lt_prog: threads=N OK"
//   sigblock:  one CUDA call, then block SIGUSR1 in the (only) program thread,
//              take it through a signalfd and kill(getpid(), SIGUSR1): the
//              process must receive it there, not die of it on a thread the
//              library started ("lt_prog: signalfd got SIGUSR1")
//   nvtxerrno: address space limited to its size + 256 MB (so a 512 MB ring,
//              GPUPHASE_RING_RECORDS=16777216, cannot be allocated), then
//              NVTX push / pop / mark on the main thread and a new thread
//              with errno set before each; prints the errno after each
//   latesub:   one CUDA call (the library starts), then the program takes the
//              CUPTI subscription itself (as torch.profiler / Kineto would
//              later in a run) and says whether it got it
//   nvtxfirst: NVTX push / pop first (the library starts there), then STEPS
//              cudaDeviceSynchronize calls (0: the program never uses CUDA)
//   cancel:    STEPS rounds: 2 threads loop on cudaStreamSynchronize (each a
//              sync marker, so with a short iteration window and
//              GPUPHASE_LOG=info the library logs under its window lock) and
//              pthread_testcancel, main cancels them after 5 ms and joins;
//              then main makes 3 synchronizes (a marker each: they block
//              forever if a cancelled thread left the window lock held) and
//              prints "lt_prog: cancel N OK"
//   launchers: one synchronize, 100 ms, then 4 threads at once, each STEPS
//              launches of work_kernel on its own stream and a synchronize
//              ("lt_prog: launchers=4 x STEPS OK"): launches on other
//              threads while one thread's first launch runs the library's
//              calibration (calibrate.c)
//   firststacks: one launch (the library starts; no stack under
//              GPUPHASE_STACKS=sync), then 4 threads released together
//              from a barrier, each one cudaDeviceSynchronize: every thread
//              takes its first stack at once ("lt_prog: firststacks=4 OK")
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime.h>
#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>

#define N 1024
#define CK(call)                                                                                    \
	do {                                                                                        \
		cudaError_t e_ = (call);                                                            \
		if (e_ != cudaSuccess) {                                                            \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
			exit(1);                                                                    \
		}                                                                                   \
	} while (0)

/* Namespaced and templated: the operator table names it
 * "lt::mark_kernel<unsigned int>", the form kernel:GLOB must match. */
namespace lt {
template <typename T> __global__ void mark_kernel(T *x, T s)
{
	x[N] = s;
}
} // namespace lt
__global__ void work_kernel(unsigned *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 1;
}
extern "C" void simcuda_kernel_mark_kernel(dim3, dim3, void **args)
{
	unsigned *x = *(unsigned **)args[0];
	x[N] = *(unsigned *)args[1];
}
extern "C" void simcuda_kernel_work_kernel(dim3, dim3, void **args)
{
	unsigned *x = *(unsigned **)args[0];
	int n = *(int *)args[1];
	for (int i = 0; i < n; i++)
		x[i] += 1;
}

static int take_cupti(void)
{
	void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
	typedef int (*sub_fn)(void **, void *, void *);
	sub_fn sub = h ? (sub_fn)dlsym(h, "cuptiSubscribe") : NULL;
	void *handle = NULL;
	if (!sub || sub(&handle, NULL, NULL) != 0) {
		fprintf(stderr, "lt_prog: could not take the CUPTI subscription\n");
		return -1;
	}
	return 0;
}

static void *sync_thread(void *)
{
	CK(cudaStreamSynchronize(0));
	return NULL;
}

static long vm_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = atol(line + 6);
	if (f)
		fclose(f);
	return kb;
}

/* Threads that come and go (a thread-per-request server): memory must not
 * grow with the number of threads the process has ever had. */
static int run_threads(int n)
{
	long first = 0;
	for (int i = 0; i < n; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, sync_thread, NULL) || pthread_join(th, NULL)) {
			fprintf(stderr, "lt_prog: pthread_create failed\n");
			return 1;
		}
		if (i == 0)
			first = vm_rss_kb();
	}
	fprintf(stderr, "lt_prog: rss_growth_kb %ld\n", vm_rss_kb() - first);
	printf("lt_prog: threads=%d OK\n", n);
	return 0;
}

/* A program that handles a signal synchronously: blocked in its threads,
 * read from a signalfd. A thread of the library that leaves it unblocked
 * would take the signal's default action (terminate) instead. */
static int run_sigblock(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	/* start from the default disposition, unblocked (whatever the test
	 * runner left to be inherited across exec) */
	signal(SIGUSR1, SIG_DFL);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	CK(cudaDeviceSynchronize()); /* the library starts here */
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return 1;
	int fd = signalfd(-1, &set, SFD_CLOEXEC);
	if (fd < 0)
		return 1;
	for (int i = 0; i < 8; i++) { /* which thread the kernel picks varies */
		if (kill(getpid(), SIGUSR1))
			return 1;
		struct pollfd p = {fd, POLLIN, 0};
		struct signalfd_siginfo si;
		if (poll(&p, 1, 5000) != 1 || read(fd, &si, sizeof si) != (ssize_t)sizeof si ||
		    si.ssi_signo != SIGUSR1) {
			fprintf(stderr, "lt_prog: SIGUSR1 not received through the signalfd\n");
			return 1;
		}
		usleep(20000);
	}
	CK(cudaDeviceSynchronize());
	printf("lt_prog: signalfd got SIGUSR1\n");
	return 0;
}

/* errno after NVTX calls: the library's NVTX entry points must leave it as
 * they found it, also when they fail inside (no memory for a ring). */
static int nvtx_errno_round(char *out, size_t len)
{
	int e[3];
	errno = 4241;
	nvtxRangePushA("step");
	e[0] = errno;
	errno = 4242;
	nvtxRangePop();
	e[1] = errno;
	errno = 4243;
	nvtxMarkA("mark");
	e[2] = errno;
	return snprintf(out, len, "%d %d %d", e[0], e[1], e[2]);
}

static void *nvtx_errno_thread(void *arg)
{
	nvtx_errno_round((char *)arg, 64);
	return NULL;
}

static int run_nvtxerrno(void)
{
	long vm_kb = -1;
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmSize:", 7))
			vm_kb = atol(line + 7);
	if (f)
		fclose(f);
	if (vm_kb <= 0)
		return 1;
	struct rlimit rl;
	rl.rlim_cur = rl.rlim_max = (rlim_t)(vm_kb + 256 * 1024) * 1024;
	if (setrlimit(RLIMIT_AS, &rl))
		return 1;
	char main_s[64], thr_s[64];
	nvtx_errno_round(main_s, sizeof main_s);
	pthread_t th;
	if (pthread_create(&th, NULL, nvtx_errno_thread, thr_s) || pthread_join(th, NULL))
		return 1;
	printf("lt_prog: nvtx errno main %s thread %s\n", main_s, thr_s);
	return 0;
}

static int run_nvtxfirst(int n)
{
	nvtxRangePushA("step");
	nvtxRangePop();
	for (int i = 0; i < n; i++)
		CK(cudaDeviceSynchronize());
	printf("lt_prog: nvtxfirst %d OK\n", n);
	return 0;
}

static void *cancel_worker(void *)
{
	for (;;) {
		cudaStreamSynchronize(0);
		pthread_testcancel();
	}
	return NULL;
}

static int run_cancel(int rounds)
{
	CK(cudaDeviceSynchronize());
	for (int r = 0; r < rounds; r++) {
		pthread_t th[2];
		for (int i = 0; i < 2; i++)
			if (pthread_create(&th[i], NULL, cancel_worker, NULL))
				return 1;
		usleep(5000);
		for (int i = 0; i < 2; i++) {
			void *ret = NULL;
			pthread_cancel(th[i]);
			pthread_join(th[i], &ret);
			if (ret != PTHREAD_CANCELED)
				return 1;
		}
		for (int i = 0; i < 3; i++)
			CK(cudaDeviceSynchronize());
	}
	printf("lt_prog: cancel %d OK\n", rounds);
	return 0;
}

static void *launcher_thread(void *arg)
{
	int steps = *(int *)arg;
	unsigned *d;
	cudaStream_t st;
	CK(cudaStreamCreate(&st));
	CK(cudaMalloc(&d, (N + 1) * sizeof *d));
	for (int i = 0; i < steps; i++)
		work_kernel<<<(N + 255) / 256, 256, 0, st>>>(d, N);
	CK(cudaStreamSynchronize(st));
	CK(cudaFree(d));
	CK(cudaStreamDestroy(st));
	return NULL;
}

static int run_launchers(int steps)
{
	pthread_t th[4];
	CK(cudaDeviceSynchronize()); /* the library starts here, not in a race of four */
	usleep(100000);
	for (int i = 0; i < 4; i++)
		if (pthread_create(&th[i], NULL, launcher_thread, &steps)) {
			fprintf(stderr, "lt_prog: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	printf("lt_prog: launchers=4 x %d OK\n", steps);
	return 0;
}

static pthread_barrier_t g_first_stacks;

static void *first_stack_thread(void *)
{
	pthread_barrier_wait(&g_first_stacks);
	CK(cudaDeviceSynchronize());
	return NULL;
}

static int run_first_stacks(void)
{
	unsigned *d;
	CK(cudaMalloc(&d, (N + 1) * sizeof *d));
	work_kernel<<<(N + 255) / 256, 256>>>(d, N); /* the library starts here */
	CK(cudaGetLastError());
	pthread_t th[4];
	pthread_barrier_init(&g_first_stacks, NULL, 4);
	for (int i = 0; i < 4; i++)
		if (pthread_create(&th[i], NULL, first_stack_thread, NULL)) {
			fprintf(stderr, "lt_prog: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&g_first_stacks);
	CK(cudaFree(d));
	printf("lt_prog: firststacks=4 OK\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: lt_prog plain|subscribe|fork|threads|sigblock|nvtxerrno|nvtxfirst|latesub|cancel|"
				"launchers|firststacks STEPS\n");
		return 2;
	}
	const char *mode = argv[1];
	int steps = atoi(argv[2]);
	if (!strcmp(mode, "subscribe"))
		take_cupti();
	if (!strcmp(mode, "threads"))
		return run_threads(steps);
	if (!strcmp(mode, "sigblock"))
		return run_sigblock();
	if (!strcmp(mode, "nvtxerrno"))
		return run_nvtxerrno();
	if (!strcmp(mode, "nvtxfirst"))
		return run_nvtxfirst(steps);
	if (!strcmp(mode, "cancel"))
		return run_cancel(steps);
	if (!strcmp(mode, "launchers"))
		return run_launchers(steps);
	if (!strcmp(mode, "firststacks"))
		return run_first_stacks();
	if (!strcmp(mode, "latesub")) {
		CK(cudaDeviceSynchronize());
		printf("lt_prog: late CUPTI subscription %s\n", take_cupti() ? "refused" : "ok");
		return 0;
	}
	static unsigned h[N + 1];
	unsigned *d, *d2;
	cudaStream_t st;
	CK(cudaStreamCreate(&st));
	CK(cudaMalloc(&d, sizeof h));
	CK(cudaMalloc(&d2, sizeof h));
	CK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
	int bad = 0;
	for (int s = 0; s < steps; s++) {
		if (!strcmp(mode, "fork") && s == steps / 2) {
			fflush(stdout);
			pid_t pid = fork();
			if (pid == 0) {
				/* child: no CUDA (unsupported after fork) unless LT_CHILD_CUDA
				 * is set (simcuda tolerates it); check host data */
				printf("child: h[0]=%u\n", h[0]);
				if (getenv("LT_CHILD_CUDA")) {
					CK(cudaMemset(d2, 0, 64));
					CK(cudaDeviceSynchronize());
				}
				exit(h[0] == (unsigned)(2 * s) ? 0 : 1);
			}
			int status = 0;
			waitpid(pid, &status, 0);
			printf("parent: child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		}
		nvtxRangePushA("step");
		(void)cudaPeekAtLastError();
		CK(cudaProfilerStart());
		lt::mark_kernel<unsigned><<<1, 1, 0, st>>>(d, (unsigned)s);
		work_kernel<<<(N + 255) / 256, 256, 0, st>>>(d, N);
		work_kernel<<<(N + 255) / 256, 256, 0, st>>>(d, N);
		CK(cudaGetLastError());
		CK(cudaMemsetAsync(d2, s & 0xff, sizeof h, st));
		CK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, st));
		CK(cudaStreamSynchronize(st));
		CK(cudaProfilerStop());
		nvtxRangePop();
		if (h[0] != (unsigned)(2 * (s + 1)) || h[N] != (unsigned)s)
			bad++;
	}
	/* the other NVTX entry points once each (names checked by test_lib_e2e) */
	nvtxMarkA("mark-a");
	nvtxRangeId_t rid = nvtxRangeStartW(L"range-w");
	nvtxRangeEnd(rid);
	nvtxRangePushW(L"push-w\u00e9");
	nvtxEventAttributes_t attr;
	memset(&attr, 0, sizeof attr);
	attr.version = NVTX_VERSION;
	attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
	attr.message.ascii = "push-ex";
	nvtxRangePushEx(&attr);
	nvtxRangePop();
	nvtxRangePop();
	/* errno and the CUDA error state must look the same with and without
	 * the library: the tests compare this line byte for byte. */
	errno = 4242;
	CK(cudaStreamSynchronize(st));
	int e1 = errno;
	cudaError_t badcall = cudaMemcpy(h, d, 4, (cudaMemcpyKind)77);
	(void)cudaDeviceSynchronize();
	cudaError_t last = cudaGetLastError();
	printf("lt_prog: errno=%d bad=%d last=%d\n", e1, (int)badcall, (int)last);
	CK(cudaFree(d));
	CK(cudaFree(d2));
	CK(cudaStreamDestroy(st));
	printf("lt_prog: mode=%s steps=%d %s\n", mode, steps, bad ? "FAIL" : "OK");
	return bad ? 1 : 0;
}
