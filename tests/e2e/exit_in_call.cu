// exit_in_call.cu — exit() from a signal handler while the main thread is
// inside CUDA calls, for tests/e2e/test_exit_in_call.sh: the main thread
// launches kernels, copies and synchronizes in an endless loop; SIGALRM,
// armed for argv[1] microseconds after the first call, runs a handler that
// calls exit(0), so the library's exit path runs on top of whichever CUDA
// call the signal interrupted (and any lock that call holds). The program
// must end: a hang is the failure the test looks for. Threads: main only.
#include <cuda_runtime.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

__global__ void eic_kernel(int *x) { x[threadIdx.x] += 1; }

static void eic_on_alarm(int sig)
{
	(void)sig;
	exit(0); /* deliberately not async-signal-safe: what programs do */
}

int main(int argc, char **argv)
{
	long us = argc > 1 ? atol(argv[1]) : 20000;
	int *d, h[32] = {0};
	if (cudaMalloc(&d, sizeof h) != cudaSuccess) {
		fprintf(stderr, "exit_in_call: cudaMalloc failed\n");
		return 1;
	}
	cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
	signal(SIGALRM, eic_on_alarm);
	struct itimerval it = {{0, 0}, {us / 1000000, us % 1000000}};
	setitimer(ITIMER_REAL, &it, NULL);
	for (;;) {
		for (int i = 0; i < 8; i++)
			eic_kernel<<<1, 32>>>(d);
		cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, 0);
		cudaStreamSynchronize(0);
		cudaDeviceSynchronize();
	}
}
