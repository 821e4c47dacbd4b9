// graph_replay.cu — profile: CUDA GRAPHS. Three small kernels ("layers") are
// captured once from a stream into a CUDA graph, each under its own NVTX range
// (layer0, layer1, layer2); the graph is then replayed REPLAYS times, each
// replay under the NVTX range "replay". A profiler that understands graphs
// attributes every replayed kernel to its graph and to the captured operator
// (the layer range and call site at capture time), and charges the
// cudaGraphLaunch host cost once per replay, not once per node.
//
// Launches use cudaLaunchKernel with static argument arrays (valid for the
// program's life; simcuda keeps the array of a captured launch, see
// docs/simcuda.md "CUDA graphs"). Self-check: a naive host loop applies the
// three layers REPLAYS times. Stdout: the result only; stderr: timings.
#include "ex_common.h"
#include <nvtx3/nvToolsExt.h>

#define N 512
#define REPLAYS 200

__global__ void layer_add(uint32_t *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 7u;
}
__global__ void layer_mul(uint32_t *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= 3u;
}
__global__ void layer_xor(uint32_t *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] ^= 0x5a5a5a5au;
}

// simcuda host twins (see ex_common.h).
static void twin(dim3 grid, dim3 block, void **args, int op)
{
	uint32_t *x = *(uint32_t **)args[0];
	int n = *(int *)args[1];
	long total = (long)grid.x * grid.y * grid.z * block.x * block.y * block.z;
	for (long i = 0; i < n && i < total; i++)
		x[i] = op == 0 ? x[i] + 7u : op == 1 ? x[i] * 3u : x[i] ^ 0x5a5a5a5au;
}
extern "C" void simcuda_kernel_layer_add(dim3 g, dim3 b, void **a) { twin(g, b, a, 0); }
extern "C" void simcuda_kernel_layer_mul(dim3 g, dim3 b, void **a) { twin(g, b, a, 1); }
extern "C" void simcuda_kernel_layer_xor(dim3 g, dim3 b, void **a) { twin(g, b, a, 2); }

static uint32_t *g_dev;
static int g_n = N;
static void *g_args[2] = {&g_dev, &g_n};

int main(void)
{
	static uint32_t h[N];
	for (int i = 0; i < N; i++)
		h[i] = (uint32_t)i * 2654435761u;
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&g_dev, sizeof h));
	CK(cudaMemcpy(g_dev, h, sizeof h, cudaMemcpyHostToDevice));

	const void *layers[3] = {(const void *)layer_add, (const void *)layer_mul, (const void *)layer_xor};
	const char *names[3] = {"layer0", "layer1", "layer2"};
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int l = 0; l < 3; l++) {
		nvtxRangePushA(names[l]);
		CK(cudaLaunchKernel(layers[l], dim3(1), dim3(N), g_args, 0, s));
		nvtxRangePop();
	}
	CK(cudaStreamEndCapture(s, &graph));
	CK(cudaGraphInstantiate(&exec, graph, 0));
	CK(cudaGraphDestroy(graph));

	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	CK(cudaEventRecord(e0, s));
	for (int r = 0; r < REPLAYS; r++) {
		nvtxRangePushA("replay");
		CK(cudaGraphLaunch(exec, s));
		nvtxRangePop();
	}
	CK(cudaEventRecord(e1, s));
	CK(cudaStreamSynchronize(s));
	ex_timing("replays", e0, e1);
	CK(cudaGraphExecDestroy(exec));
	static uint32_t got[N];
	CK(cudaMemcpy(got, g_dev, sizeof got, cudaMemcpyDeviceToHost));
	CK(cudaFree(g_dev));
	CK(cudaStreamDestroy(s));

	int bad = 0;
	uint32_t sum = 0;
	for (int i = 0; i < N; i++) {
		uint32_t want = h[i];
		for (int r = 0; r < REPLAYS; r++)
			want = ((want + 7u) * 3u) ^ 0x5a5a5a5au;
		if (got[i] != want)
			bad++;
		sum += got[i];
	}
	printf("graph_replay: n=%d replays=%d nodes=3 checksum=%08x\n", N, REPLAYS, sum);
	if (bad) {
		printf("graph_replay: FAIL (%d mismatches)\n", bad);
		return 1;
	}
	printf("graph_replay: OK\n");
	return 0;
}
