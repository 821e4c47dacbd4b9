// interrupt_loop.cu — a CUDA program for test_cli_record_interrupt.sh that
// launches until a signal kills it, with no handler of its own: Ctrl-C ends
// it by the signal's default action (no exit(3), no atexit), as it ends most
// programs. Each iteration launches il_step on one stream, synchronizes and
// then writes the number of launches made so far into the file argv[1]
// (rewritten in place, decimal, padded to 20 bytes), so the count survives
// the kill; then it sleeps argv[2] microseconds (default 500). After the
// first iteration it prints "interrupt_loop: pid N running" to stderr.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <unistd.h>
#include <cuda_runtime.h>

__global__ void il_step(int n) { (void)n; }

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: interrupt_loop COUNT_FILE [PAUSE_US]\n");
		return 2;
	}
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	const long pause_us = argc > 2 ? atol(argv[2]) : 500;
	cudaStream_t s;
	if (cudaStreamCreate(&s) != cudaSuccess) {
		fprintf(stderr, "interrupt_loop: cannot create a stream\n");
		return 1;
	}
	for (long launches = 0;;) {
		il_step<<<1, 32, 0, s>>>(1);
		launches++;
		if (cudaStreamSynchronize(s) != cudaSuccess) {
			fprintf(stderr, "interrupt_loop: synchronize failed\n");
			return 1;
		}
		char buf[21];
		snprintf(buf, sizeof buf, "%-19ld\n", launches);
		if (pwrite(fd, buf, 20, 0) != 20)
			return 1;
		if (launches == 1)
			fprintf(stderr, "interrupt_loop: pid %d running\n", (int)getpid());
		if (pause_us > 0) {
			struct timespec pause = {pause_us / 1000000, pause_us % 1000000 * 1000};
			nanosleep(&pause, NULL);
		}
	}
}
