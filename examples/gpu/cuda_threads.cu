/*
 * cuda_threads.cu — the thread check of the real-GPU validation kit
 * (tests/gpu/run.sh, check "cuda/threads"): counts the process's threads
 * (the entries of /proc/self/task) before any CUDA call and again after
 * cudaFree(0), the call that initialises the runtime, the driver and the
 * primary context.
 *
 * Why: real CUDA starts threads of its own when it initialises, so no CUDA
 * program is single-threaded once CUDA is up; simcuda imitates that with one
 * idle driver thread (docs/simcuda.md, "The driver's thread"), which changes
 * what every lock in a bare simulated program costs. This program is how a
 * GPU confirms the premise.
 *
 * Usage: cuda_threads   (no arguments)
 *
 * Output: stdout "cuda_threads: before B after A" (B, A: thread counts,
 * this thread included). Exit status 0 when both counts were read and
 * cudaFree(0) succeeded (whether A > B is the kit's judgement, not this
 * program's), 1 on a CUDA error or an unreadable /proc/self/task, 2 on an
 * argument.
 *
 * Single-threaded itself: any thread counted beyond the first was started
 * by CUDA (or by a library preloaded into the process, already counted in B).
 */
#include <cuda_runtime.h>
#include <dirent.h>
#include <stdio.h>

/* The number of entries of /proc/self/task (the process's threads), or -1
 * if the folder cannot be read. */
static int thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	int n = 0;
	const struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: cuda_threads   (no arguments)\n");
		return 2;
	}
	int before = thread_count();
	cudaError_t err = cudaFree(0);
	int after = thread_count();
	if (err != cudaSuccess) {
		fprintf(stderr, "cuda_threads: cudaFree(0): %s\n", cudaGetErrorString(err));
		return 1;
	}
	if (before < 0 || after < 0) {
		fprintf(stderr, "cuda_threads: cannot read /proc/self/task\n");
		return 1;
	}
	printf("cuda_threads: before %d after %d\n", before, after);
	return 0;
}
