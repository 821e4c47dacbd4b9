/*
 * client.c — load generator for the example inference server (server.cu):
 * connects to its UNIX socket (waiting up to --wait seconds for it to
 * appear), sends a bounded number of requests one after another, checks that
 * every reply carries the request's id and a success status, and prints one
 * line: requests, errors, mean and p99 latency. --quit asks the server to
 * exit afterwards.
 *
 *   server_client SOCKET_PATH [-n REQUESTS] [--quit] [--wait SECONDS]
 *
 * Single-threaded. Exit status: 0 all replies correct, 1 a reply was wrong
 * or the connection failed, 2 usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"

static double client_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int client_io(int fd, void *buf, size_t len, int writing)
{
	char *p = buf;
	while (len) {
		ssize_t r = writing ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static int client_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: server_client SOCKET_PATH [-n REQUESTS] [--quit] [--wait SECONDS]\n");
		return 2;
	}
	const char *path = argv[1];
	long n = 100;
	int quit = 0;
	double wait_s = 10.0;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
			char *end;
			n = strtol(argv[++i], &end, 10);
			if (*end || n < 0) {
				fprintf(stderr, "server_client: -n '%s': a number of requests >= 0\n", argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "--quit") == 0) {
			quit = 1;
		} else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
			wait_s = strtod(argv[++i], NULL);
		} else {
			fprintf(stderr, "server_client: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sa.sun_path) {
		fprintf(stderr, "server_client: socket path too long: %s\n", path);
		return 2;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);

	int fd = -1;
	double t0 = client_now();
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
			break;
		int e = errno;
		if (fd >= 0)
			close(fd);
		if (client_now() - t0 > wait_s) {
			fprintf(stderr, "server_client: cannot connect to %s: %s\n", path, strerror(e));
			return 1;
		}
		usleep(20000);
	}

	double *lat = calloc(n > 0 ? (size_t)n : 1, sizeof *lat);
	if (!lat) {
		fprintf(stderr, "server_client: out of memory\n");
		return 1;
	}
	struct srv_request req;
	memset(&req, 0, sizeof req);
	req.magic = SRV_MAGIC;
	long errors = 0, done = 0;
	for (long k = 0; k < n; k++) {
		req.op = SRV_OP_INFER;
		req.id = (uint32_t)k;
		for (int i = 0; i < SRV_DIM; i++)
			req.input[i] = (float)((k + i) % 17) - 8.0f;
		struct srv_reply rep;
		double s = client_now();
		if (client_io(fd, &req, sizeof req, 1) != 0 || client_io(fd, &rep, sizeof rep, 0) != 0) {
			fprintf(stderr, "server_client: connection lost after %ld requests\n", done);
			errors++;
			break;
		}
		lat[done++] = client_now() - s;
		if (rep.magic != SRV_MAGIC || rep.id != req.id || rep.status != 0) {
			if (errors++ < 5)
				fprintf(stderr, "server_client: request %ld: bad reply (id %u, status %u)\n", k, rep.id,
					rep.status);
		}
	}
	if (quit) {
		req.op = SRV_OP_QUIT;
		req.id = 0xffffffffu;
		struct srv_reply rep;
		if (client_io(fd, &req, sizeof req, 1) != 0 || client_io(fd, &rep, sizeof rep, 0) != 0 ||
		    rep.id != req.id) {
			fprintf(stderr, "server_client: the server did not acknowledge quit\n");
			errors++;
		}
	}
	close(fd);
	double sum = 0;
	for (long k = 0; k < done; k++)
		sum += lat[k];
	qsort(lat, (size_t)done, sizeof *lat, client_cmp);
	double p99 = done ? lat[(size_t)((double)(done - 1) * 0.99)] : 0;
	printf("server_client: %ld requests, %ld errors, mean %.1f us, p99 %.1f us\n", done, errors,
	       done ? sum / (double)done * 1e6 : 0.0, p99 * 1e6);
	free(lat);
	return errors ? 1 : 0;
}
