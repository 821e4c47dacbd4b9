// server.cu — a small "inference server" for the gpuphase trigger workflow:
// it answers requests on a UNIX stream socket, each request running the same
// fixed sequence on one CUDA stream: copy the input in, four kernels
// (srv_embed, srv_matmul, srv_relu, srv_reduce), copy the score out, then
// cudaStreamSynchronize — one iteration per request for gpuphase's default
// iteration marker (sync).
//
//   gpuphase record --window trigger -o server.gpht -- build/examples/server /tmp/srv.sock &
//   build/examples/server_client /tmp/srv.sock -n 2000 &
//   gpuphase trigger <server pid> --iters 50
//   build/examples/server_client /tmp/srv.sock -n 1 --quit
//   gpuphase report server.gpht
//
// Single-threaded: one connection at a time, requests answered in order. It
// exits on a QUIT request, SIGTERM or SIGINT (closing the socket), and after
// --max-requests requests if given. On start it prints
// "server: pid N listening on PATH" to stderr. Runs on a real GPU and on
// simcuda (build with `nvcc -cudart shared`; cost model server.simcuda). On
// simcuda kernels do not touch memory, so the score is only meaningful on a
// GPU; the client checks ids and statuses, not scores.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cuda_runtime.h>

#include "proto.h"

__global__ void srv_embed(const float *in, float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = in[i] * 0.5f;
}

__global__ void srv_matmul(const float *w, const float *x, float *h, int n)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j < n) {
		float acc = 0.0f;
		for (int i = 0; i < n; i++)
			acc += w[j * n + i] * x[i];
		h[j] = acc;
	}
}

__global__ void srv_relu(float *h, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n && h[i] < 0.0f)
		h[i] = 0.0f;
}

__global__ void srv_reduce(const float *h, float *out, int n)
{
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		float s = 0.0f;
		for (int i = 0; i < n; i++)
			s += h[i];
		out[0] = s;
	}
}

static volatile sig_atomic_t srv_stop;

static void srv_on_signal(int sig)
{
	(void)sig;
	srv_stop = 1;
}

// Read or write exactly len bytes; 0 on success, -1 on EOF/error.
static int srv_io(int fd, void *buf, size_t len, int writing)
{
	char *p = (char *)buf;
	while (len) {
		ssize_t r = writing ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (r < 0 && errno == EINTR) {
			if (srv_stop)
				return -1;
			continue;
		}
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

struct srv_gpu {
	cudaStream_t stream;
	float *h_in, *h_out;             // pinned staging
	float *d_in, *d_x, *d_w, *d_h, *d_out;
};

static int srv_check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "server: %s: %s\n", what, cudaGetErrorString(e));
		return -1;
	}
	return 0;
}

static int srv_gpu_init(struct srv_gpu *g)
{
	const size_t v = SRV_DIM * sizeof(float);
	if (srv_check(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking), "cudaStreamCreate") ||
	    srv_check(cudaMallocHost((void **)&g->h_in, v), "cudaMallocHost") ||
	    srv_check(cudaMallocHost((void **)&g->h_out, sizeof(float)), "cudaMallocHost") ||
	    srv_check(cudaMalloc((void **)&g->d_in, v), "cudaMalloc") ||
	    srv_check(cudaMalloc((void **)&g->d_x, v), "cudaMalloc") ||
	    srv_check(cudaMalloc((void **)&g->d_h, v), "cudaMalloc") ||
	    srv_check(cudaMalloc((void **)&g->d_out, sizeof(float)), "cudaMalloc") ||
	    srv_check(cudaMalloc((void **)&g->d_w, v * SRV_DIM), "cudaMalloc"))
		return -1;
	// Weights: a fixed pattern, uploaded once (not part of any request).
	float *w = (float *)malloc(v * SRV_DIM);
	if (!w)
		return -1;
	for (int i = 0; i < SRV_DIM * SRV_DIM; i++)
		w[i] = (float)((i * 7) % 13 - 6) / 16.0f;
	int rc = srv_check(cudaMemcpy(g->d_w, w, v * SRV_DIM, cudaMemcpyHostToDevice), "cudaMemcpy weights");
	free(w);
	return rc;
}

// The fixed per-request sequence. Returns the cudaError_t of the request.
static cudaError_t srv_infer(struct srv_gpu *g, const float *input, float *score)
{
	const int n = SRV_DIM, tpb = 128, blocks = (n + tpb - 1) / tpb;
	memcpy(g->h_in, input, n * sizeof(float));
	cudaMemcpyAsync(g->d_in, g->h_in, n * sizeof(float), cudaMemcpyHostToDevice, g->stream);
	srv_embed<<<blocks, tpb, 0, g->stream>>>(g->d_in, g->d_x, n);
	srv_matmul<<<blocks, tpb, 0, g->stream>>>(g->d_w, g->d_x, g->d_h, n);
	srv_relu<<<blocks, tpb, 0, g->stream>>>(g->d_h, n);
	srv_reduce<<<1, 1, 0, g->stream>>>(g->d_h, g->d_out, n);
	cudaMemcpyAsync(g->h_out, g->d_out, sizeof(float), cudaMemcpyDeviceToHost, g->stream);
	cudaError_t e = cudaStreamSynchronize(g->stream);
	if (e == cudaSuccess)
		e = cudaGetLastError();
	*score = g->h_out[0];
	return e;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: server SOCKET_PATH [--max-requests N]\n"
				"Answers inference requests from server_client on a UNIX socket.\n");
		return 2;
	}
	const char *path = argv[1];
	long max_requests = -1;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--max-requests") == 0 && i + 1 < argc) {
			max_requests = strtol(argv[++i], NULL, 10);
		} else {
			fprintf(stderr, "server: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sa.sun_path) {
		fprintf(stderr, "server: socket path too long: %s\n", path);
		return 2;
	}
	strcpy(sa.sun_path, path);

	struct srv_gpu g;
	memset(&g, 0, sizeof g);
	if (srv_gpu_init(&g) != 0)
		return 1;

	struct sigaction act;
	memset(&act, 0, sizeof act);
	act.sa_handler = srv_on_signal; // no SA_RESTART: accept/recv return EINTR
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);

	int ls = socket(AF_UNIX, SOCK_STREAM, 0);
	unlink(path);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(ls, 8) != 0) {
		fprintf(stderr, "server: cannot listen on %s: %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(stderr, "server: pid %d listening on %s\n", (int)getpid(), path);

	long served = 0;
	int quit = 0;
	while (!quit && !srv_stop && (max_requests < 0 || served < max_requests)) {
		int c = accept(ls, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "server: accept: %s\n", strerror(errno));
			break;
		}
		struct srv_request req;
		while (!srv_stop && (max_requests < 0 || served < max_requests) && srv_io(c, &req, sizeof req, 0) == 0) {
			if (req.magic != SRV_MAGIC) {
				fprintf(stderr, "server: bad request (magic %08x); closing the connection\n", req.magic);
				break;
			}
			if (req.op == SRV_OP_QUIT) {
				quit = 1;
				struct srv_reply rep = { SRV_MAGIC, req.id, 0.0f, 0 };
				srv_io(c, &rep, sizeof rep, 1);
				break;
			}
			struct srv_reply rep = { SRV_MAGIC, req.id, 0.0f, 0 };
			rep.status = (uint32_t)srv_infer(&g, req.input, &rep.score);
			served++;
			if (srv_io(c, &rep, sizeof rep, 1) != 0)
				break;
		}
		close(c);
	}
	close(ls);
	unlink(path);
	cudaStreamDestroy(g.stream);
	cudaFree(g.d_in);
	cudaFree(g.d_x);
	cudaFree(g.d_h);
	cudaFree(g.d_out);
	cudaFree(g.d_w);
	cudaFreeHost(g.h_in);
	cudaFreeHost(g.h_out);
	fprintf(stderr, "server: served %ld requests\n", served);
	printf("server: served %ld requests\n", served);
	return 0;
}
