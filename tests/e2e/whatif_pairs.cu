// whatif_pairs.cu — pairs of programs for the what-if analysis's end-to-end
// test (test_whatif_e2e.sh): the first of each pair is what a user runs, the
// second has one change made for real; the report's prediction for the first
// must match the measured saving of the second. One mode per run (argv[1]):
//   sync / nosync       each step: a 200 us kernel, cudaStreamSynchronize,
//                       50 us of host work; the second drops the synchronize
//   pageable / pinned   each step: a 64 KiB copy to the device (cudaMemcpy
//                       from malloc'd memory / cudaMemcpyAsync from
//                       cudaMallocHost memory), a small kernel, host work
//   launch / graph      each step: 8 tiny kernels launched one by one / the
//                       same 8 replayed as one CUDA graph (both run the graph
//                       once first: the trace then measures a node's cost)
//   empty / noempty     each step: a kernel on one stream, three synchronizes
//                       of another, idle stream (nothing outstanding: dropped
//                       in the second)
//   serial / overlap    each step: a 512 KiB copy then a kernel on one
//                       stream / the copy on a stream of its own
//   twosites / onesite  each step: a kernel, a synchronize in wait_a, host
//                       work, a second kernel, a synchronize in wait_b; the
//                       second drops the call site in wait_a only
//   free / nofree       each step: a kernel, a buffer allocated and freed
//                       (cudaFree waits for the device), host work; the
//                       second allocates once before the loop, frees after it
//   pageasync / pinasync  each step: a 2 ms kernel on one stream, a 1 MiB
//                       cudaMemcpyAsync to the device on another made in
//                       copy_in (from malloc'd memory: CUDA holds the call
//                       for the transfer / from cudaMallocHost memory), host
//                       work: the first host-bound, the second GPU-bound with
//                       0.5 ms to spare per step; pinned-site= names copy_in
//   result / deferred   each step: a 10 ms kernel, its result copied back (a
//                       blocking cudaMemcpy to malloc'd memory / a
//                       cudaMemcpyAsync to pinned memory and an event, whose
//                       wait comes before the next step's copy), host work
//   burst / burst       each step: 200 80 us kernels, 8 ms of host work, a stream
//                       synchronize; under whatif_queue.simcuda (a launch
//                       queue of 64) / whatif_queue_free.simcuda (unbounded)
//   burstgpu            burst of 200 us kernels without the host work: the
//                       GPU is the bottleneck, the queue waits cost nothing
//   long N              N steps of 5 ops on two streams (a pageable copy in,
//                       two kernels, an event, a kernel on the second stream,
//                       a blocking copy back): a graph past GP_DG_MAX_NODES
//                       (whatif_long.simcuda keeps every cost tiny)
// The kernel-scaling pair is `nosync` under two cost models
// (whatif_pairs.simcuda, whatif_pairs_fast.simcuda: wk_step twice as fast).
// Kernels change nothing (no host twin): the test reads timing only. The
// second program of each pair is GPU-bound wherever the change lets the host
// run ahead, so the host's own timing noise (a shared machine) stays out of
// its wall; the first one's noise is in its trace, which the replay keeps.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STEPS 100
#define LONG_STEPS 300   /* the copy pairs: their savings per step are smaller */
#define OVERLAP_BYTES (512u << 10)
#define NTINY 8
#define COPY_BYTES (64u << 10)
#define ASYNC_BYTES (1u << 20)
#define BURST 200
#define BURST_STEPS 20
#define BURSTGPU_STEPS 5 /* of 200 us kernels: 12.8 ms of work queued ahead of
                           the host, past its stalls on a loaded machine */
#define RESULT_STEPS 20 /* steps of a 10 ms kernel: the host's stalls on a
                           loaded machine stay inside the GPU's lead */

__global__ void wk_step(int *x) { x[0] += 1; }
__global__ void wk_small(int *x) { x[1] += 1; }
__global__ void wk_tiny(int *x) { x[2] += 1; }
__global__ void wk_mid(int *x) { x[3] += 1; }
__global__ void wk_q(int *x) { x[4] += 1; }
__global__ void wk_loss(int *x) { x[5] += 1; }
__global__ void wk_qlong(int *x) { x[6] += 1; }
__global__ void wk_pa(int *x) { x[7] += 1; }

#define CK(call)                                                                          \
	do {                                                                              \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
			exit(1);                                                          \
		}                                                                         \
	} while (0)

// Host work the program does between calls: a busy wait of us microseconds.
static void host_work(long us)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < us * 1000L);
}

// Two call sites of one synchronizing function, named by the report after
// the functions that hold them (remove_sync_site targets one).
static __attribute__((noinline)) void wait_a(cudaStream_t s) { CK(cudaStreamSynchronize(s)); }
static __attribute__((noinline)) void wait_b(cudaStream_t s) { CK(cudaStreamSynchronize(s)); }

// The async copy of pageasync / pinasync, at a call site of its own.
static __attribute__((noinline)) void copy_in(void *d, const void *h, cudaStream_t s)
{
	CK(cudaMemcpyAsync(d, h, ASYNC_BYTES, cudaMemcpyHostToDevice, s));
}

// result / deferred: a step's result read back on the legacy stream.
static void result_run(int deferred, int *d)
{
	int *loss;
	cudaEvent_t e;
	if (deferred) {
		CK(cudaMallocHost(&loss, sizeof *loss));
		CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	} else if (!(loss = (int *)malloc(sizeof *loss))) {
		exit(1);
	}
	for (int i = 0; i < RESULT_STEPS; i++) {
		wk_loss<<<1, 1>>>(d);
		if (!deferred) {
			CK(cudaMemcpy(loss, d, sizeof *loss, cudaMemcpyDeviceToHost));
		} else {
			if (i)
				CK(cudaEventSynchronize(e)); // the previous step's result
			CK(cudaMemcpyAsync(loss, d, sizeof *loss, cudaMemcpyDeviceToHost, 0));
			CK(cudaEventRecord(e, 0));
		}
		host_work(2000);
	}
	CK(cudaDeviceSynchronize());
	if (deferred) {
		CK(cudaEventDestroy(e));
		CK(cudaFreeHost(loss));
	} else {
		free(loss);
	}
}

// long N: a run whose dependency graph is longer than the report keeps.
static void long_run(int steps, int *d, cudaStream_t s, cudaStream_t c)
{
	static int h[64];
	cudaEvent_t e;
	CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	for (int i = 0; i < steps; i++) {
		CK(cudaMemcpyAsync(d, h, sizeof h, cudaMemcpyHostToDevice, s));
		wk_tiny<<<1, 1, 0, s>>>(d);
		wk_small<<<1, 1, 0, s>>>(d);
		CK(cudaEventRecord(e, s));
		CK(cudaStreamWaitEvent(c, e, 0));
		wk_mid<<<1, 1, 0, c>>>(d);
		CK(cudaMemcpy(h, d, sizeof(int), cudaMemcpyDeviceToHost));
	}
	CK(cudaEventDestroy(e));
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	int *d;
	char *dbuf;
	cudaStream_t s, c;
	CK(cudaMalloc(&d, 16 * sizeof(int)));
	CK(cudaMalloc(&dbuf, COPY_BYTES));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
	if (!strcmp(m, "sync") || !strcmp(m, "nosync")) {
		int sync = !strcmp(m, "sync");
		for (int i = 0; i < STEPS; i++) {
			wk_step<<<1, 1, 0, s>>>(d);
			if (sync)
				CK(cudaStreamSynchronize(s));
			host_work(50);
		}
	} else if (!strcmp(m, "twosites") || !strcmp(m, "onesite")) {
		int both = !strcmp(m, "twosites");
		for (int i = 0; i < STEPS; i++) {
			wk_step<<<1, 1, 0, s>>>(d);
			if (both)
				wait_a(s);
			host_work(50);
			wk_small<<<1, 1, 0, s>>>(d);
			wait_b(s);
			host_work(20);
		}
	} else if (!strcmp(m, "pageable") || !strcmp(m, "pinned")) {
		int pinned = !strcmp(m, "pinned");
		char *h;
		if (pinned)
			CK(cudaMallocHost(&h, COPY_BYTES));
		else if (!(h = (char *)calloc(1, COPY_BYTES)))
			return 1;
		for (int i = 0; i < LONG_STEPS; i++) {
			if (pinned)
				CK(cudaMemcpyAsync(dbuf, h, COPY_BYTES, cudaMemcpyHostToDevice, 0));
			else
				CK(cudaMemcpy(dbuf, h, COPY_BYTES, cudaMemcpyHostToDevice));
			wk_small<<<1, 1>>>(d);
			host_work(60);
		}
		CK(cudaDeviceSynchronize());
		if (pinned)
			CK(cudaFreeHost(h));
		else
			free(h);
	} else if (!strcmp(m, "launch") || !strcmp(m, "graph")) {
		cudaGraph_t graph;
		cudaGraphExec_t exec;
		CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
		for (int k = 0; k < NTINY; k++)
			wk_tiny<<<1, 1, 0, s>>>(d);
		CK(cudaStreamEndCapture(s, &graph));
		CK(cudaGraphInstantiate(&exec, graph, 0));
		CK(cudaGraphLaunch(exec, s)); // once in both: a node's cost is in the trace
		CK(cudaStreamSynchronize(s));
		int g = !strcmp(m, "graph");
		for (int i = 0; i < STEPS; i++) {
			if (g) {
				CK(cudaGraphLaunch(exec, s));
			} else {
				for (int k = 0; k < NTINY; k++)
					wk_tiny<<<1, 1, 0, s>>>(d);
			}
			host_work(20);
		}
		CK(cudaStreamSynchronize(s));
		CK(cudaGraphExecDestroy(exec));
		CK(cudaGraphDestroy(graph));
	} else if (!strcmp(m, "empty") || !strcmp(m, "noempty")) {
		int empty = !strcmp(m, "empty");
		for (int i = 0; i < STEPS; i++) {
			wk_small<<<1, 1, 0, s>>>(d);
			for (int k = 0; empty && k < 3; k++)
				CK(cudaStreamSynchronize(c)); // c is idle: nothing outstanding
			host_work(10);
		}
	} else if (!strcmp(m, "serial") || !strcmp(m, "overlap")) {
		cudaStream_t cs = !strcmp(m, "overlap") ? c : s;
		char *h, *dbig;
		CK(cudaMallocHost(&h, OVERLAP_BYTES));
		CK(cudaMalloc(&dbig, OVERLAP_BYTES));
		for (int i = 0; i < LONG_STEPS; i++) {
			CK(cudaMemcpyAsync(dbig, h, OVERLAP_BYTES, cudaMemcpyHostToDevice, cs));
			wk_mid<<<1, 1, 0, s>>>(d);
		}
		CK(cudaStreamSynchronize(s));
		CK(cudaStreamSynchronize(cs));
		CK(cudaFree(dbig));
		CK(cudaFreeHost(h));
	} else if (!strcmp(m, "free") || !strcmp(m, "nofree")) {
		int hoisted = !strcmp(m, "nofree");
		int *t = NULL;
		if (hoisted)
			CK(cudaMalloc(&t, 4096));
		for (int i = 0; i < STEPS; i++) {
			wk_step<<<1, 1, 0, s>>>(d);
			if (!hoisted) {
				CK(cudaMalloc(&t, 4096));
				CK(cudaFree(t)); // waits for wk_step
			}
			host_work(300);
		}
		if (hoisted)
			CK(cudaFree(t));
	} else if (!strcmp(m, "pageasync") || !strcmp(m, "pinasync")) {
		char *h, *dbig;
		if (!strcmp(m, "pinasync"))
			CK(cudaMallocHost(&h, ASYNC_BYTES));
		else if (!(h = (char *)calloc(1, ASYNC_BYTES)))
			return 1;
		CK(cudaMalloc(&dbig, ASYNC_BYTES));
		for (int i = 0; i < STEPS; i++) {
			wk_pa<<<1, 1, 0, c>>>(d);
			copy_in(dbig, h, s);
			host_work(1450);
		}
		CK(cudaDeviceSynchronize());
		CK(cudaFree(dbig));
		if (!strcmp(m, "pinasync"))
			CK(cudaFreeHost(h));
		else
			free(h);
	} else if (!strcmp(m, "result") || !strcmp(m, "deferred")) {
		result_run(!strcmp(m, "deferred"), d);
	} else if (!strcmp(m, "burst")) {
		for (int i = 0; i < BURST_STEPS; i++) {
			for (int k = 0; k < BURST; k++)
				wk_q<<<1, 1, 0, s>>>(d);
			host_work(8000);
			CK(cudaStreamSynchronize(s));
		}
	} else if (!strcmp(m, "burstgpu")) {
		for (int i = 0; i < BURSTGPU_STEPS; i++) {
			for (int k = 0; k < BURST; k++)
				wk_qlong<<<1, 1, 0, s>>>(d);
			CK(cudaStreamSynchronize(s));
		}
	} else if (!strcmp(m, "long") && argc > 2 && atoi(argv[2]) > 0) {
		long_run(atoi(argv[2]), d, s, c);
	} else {
		fprintf(stderr, "usage: whatif_pairs sync|nosync|pageable|pinned|launch|graph|empty|noempty|serial|overlap|"
				"twosites|onesite|free|nofree|pageasync|pinasync|result|deferred|burst|burstgpu|long N\n");
		return 2;
	}
	CK(cudaDeviceSynchronize());
	CK(cudaStreamDestroy(s));
	CK(cudaStreamDestroy(c));
	CK(cudaFree(dbuf));
	CK(cudaFree(d));
	printf("whatif_pairs %s: ok\n", m);
	return 0;
}
