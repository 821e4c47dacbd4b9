/*
 * sim_api_tour.cu — an nvcc-built program (-cudart shared) that uses the
 * runtime API the way NVIDIA's samples do, and checks what it gets: device
 * flags and mapped host memory (cudaSetDeviceFlags, cudaHostRegister,
 * cudaHostGetDevicePointer), stream priorities and a stream callback, the
 * occupancy calculator (the cudaOccupancyMaxPotentialBlockSize template and
 * cudaFuncGetAttributes), an explicit graph with parallel branches (kernel,
 * memset, memcpy and host nodes, clone, exec update, upload) and a captured
 * fork/join graph. Its kernels' host twins (simcuda_kernel_*, exported with
 * -Xlinker -E) make the results checkable on simcuda; on a GPU the kernels
 * run. Prints one deterministic line per check and exits 0 when all pass;
 * test_simcuda_tour.sh runs it bare and under `gpuphase record` and expects
 * the same output.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include <cuda_runtime.h>

#define N 256

__global__ void tour_add(float *p, int n, float v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] += v;
}

__global__ void tour_scale(float *p, int n, float f)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] *= f;
}

/* Host twins for simcuda: the same arithmetic over the whole array. */
extern "C" void simcuda_kernel_tour_add(dim3, dim3, void **a)
{
	float *p = *(float **)a[0];
	for (int i = 0, n = *(int *)a[1]; i < n; i++)
		p[i] += *(float *)a[2];
}

extern "C" void simcuda_kernel_tour_scale(dim3, dim3, void **a)
{
	float *p = *(float **)a[0];
	for (int i = 0, n = *(int *)a[1]; i < n; i++)
		p[i] *= *(float *)a[2];
}

static int failures;
static void check(bool ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	failures += !ok;
}

#define CK(call) check((call) == cudaSuccess, #call)

static volatile int callback_ran, host_node_runs;
static void CUDART_CB on_stream(cudaStream_t, cudaError_t st, void *user)
{
	callback_ran = st == cudaSuccess && *(float *)user == 2.0f;
}
static void CUDART_CB on_host(void *) { host_node_runs++; }

int main()
{
	CK(cudaSetDeviceFlags(cudaDeviceMapHost | cudaDeviceScheduleBlockingSync));
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	check(prop.canMapHostMemory && prop.streamPrioritiesSupported && prop.major >= 7, "device can map host memory, has priorities");

	/* mapped, registered host memory used directly by a kernel */
	float *host = (float *)aligned_alloc(4096, 4096), *mapped = NULL;
	for (int i = 0; i < N; i++)
		host[i] = 1.0f;
	CK(cudaHostRegister(host, 4096, cudaHostRegisterMapped));
	CK(cudaHostGetDevicePointer((void **)&mapped, host, 0));

	/* priorities and a callback */
	int least, greatest, prio = 99;
	CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
	cudaStream_t hi, lo;
	CK(cudaStreamCreateWithPriority(&hi, cudaStreamNonBlocking, greatest));
	CK(cudaStreamCreateWithPriority(&lo, cudaStreamNonBlocking, least));
	CK(cudaStreamGetPriority(hi, &prio));
	check(prio == greatest && greatest < least, "high-priority stream has the greatest priority");
	tour_add<<<(N + 127) / 128, 128, 0, hi>>>(mapped, N, 1.0f);
	CK(cudaStreamAddCallback(hi, on_stream, host, 0));
	CK(cudaStreamSynchronize(hi));
	for (int i = 0; i < 2000 && !callback_ran; i++) /* the callback's thread may lag the sync */
		usleep(1000);
	check(callback_ran, "stream callback ran after the kernel, with cudaSuccess");
	check(host[7] == 2.0f, "kernel wrote mapped host memory");

	/* occupancy, as simpleOccupancy asks for it */
	int min_grid = 0, block = 0, active = 0;
	CK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, tour_scale, 0, 0));
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&active, tour_scale, block, 0));
	check(block > 0 && block <= prop.maxThreadsPerBlock && min_grid >= prop.multiProcessorCount && active > 0,
	      "occupancy calculator suggests a block size");
	cudaFuncAttributes fa;
	CK(cudaFuncGetAttributes(&fa, tour_scale));
	check(fa.maxThreadsPerBlock > 0 && fa.numRegs > 0, "function attributes");

	/* explicit graph: memset -> (add || scale) -> copy both back -> host */
	float *a, *b, *out;
	int n = N;
	float one = 1.0f, three = 3.0f;
	CK(cudaMalloc(&a, N * sizeof(float)));
	CK(cudaMalloc(&b, N * sizeof(float)));
	CK(cudaMallocHost(&out, 2 * N * sizeof(float)));
	CK(cudaMemcpy(b, host, N * sizeof(float), cudaMemcpyHostToDevice));
	cudaGraph_t g;
	cudaGraphNode_t set, add, scale, cpa, cpb, hn;
	CK(cudaGraphCreate(&g, 0));
	cudaMemsetParams ms = {};
	ms.dst = a, ms.value = 0, ms.elementSize = 4, ms.width = N, ms.height = 1;
	CK(cudaGraphAddMemsetNode(&set, g, NULL, 0, &ms));
	void *add_args[] = {&a, &n, &one}, *scale_args[] = {&b, &n, &three};
	cudaKernelNodeParams kp = {};
	kp.func = (void *)tour_add, kp.gridDim = dim3((N + 127) / 128), kp.blockDim = dim3(128);
	kp.kernelParams = add_args;
	CK(cudaGraphAddKernelNode(&add, g, &set, 1, &kp));
	kp.func = (void *)tour_scale, kp.kernelParams = scale_args;
	CK(cudaGraphAddKernelNode(&scale, g, NULL, 0, &kp)); /* a second root: a parallel branch */
	CK(cudaGraphAddMemcpyNode1D(&cpa, g, &add, 1, out, a, N * sizeof(float), cudaMemcpyDeviceToHost));
	CK(cudaGraphAddMemcpyNode1D(&cpb, g, &scale, 1, out + N, b, N * sizeof(float), cudaMemcpyDeviceToHost));
	cudaHostNodeParams hp = {};
	hp.fn = on_host;
	cudaGraphNode_t both[] = {cpa, cpb};
	CK(cudaGraphAddHostNode(&hn, g, both, 2, &hp));
	size_t nodes = 0, roots = 0;
	CK(cudaGraphGetNodes(g, NULL, &nodes));
	CK(cudaGraphGetRootNodes(g, NULL, &roots));
	check(nodes == 6 && roots == 2, "graph has 6 nodes, 2 roots");
	cudaGraph_t cl;
	cudaGraphExec_t x;
	CK(cudaGraphClone(&cl, g));
	CK(cudaGraphInstantiate(&x, g, 0));
	cudaGraphExecUpdateResultInfo info;
	CK(cudaGraphExecUpdate(x, cl, &info));
	CK(cudaGraphUpload(x, lo));
	CK(cudaGraphLaunch(x, lo));
	CK(cudaStreamSynchronize(lo));
	check(out[5] == 1.0f && out[N + 5] == 6.0f && host_node_runs == 1, "graph ran in dependency order");

	/* captured fork/join: lo forks into hi and joins back */
	cudaEvent_t fork, join;
	CK(cudaEventCreate(&fork));
	CK(cudaEventCreate(&join));
	cudaGraph_t cg;
	cudaGraphExec_t cx;
	CK(cudaStreamBeginCapture(lo, cudaStreamCaptureModeGlobal));
	CK(cudaMemsetAsync(a, 0, N * sizeof(float), lo));
	CK(cudaEventRecord(fork, lo));
	CK(cudaStreamWaitEvent(hi, fork, 0));
	void *cap_args[] = {&a, &n, &three};
	CK(cudaLaunchKernel((void *)tour_add, dim3(2), dim3(128), cap_args, 0, hi));
	CK(cudaEventRecord(join, hi));
	CK(cudaStreamWaitEvent(lo, join, 0));
	CK(cudaMemcpyAsync(out, a, N * sizeof(float), cudaMemcpyDeviceToHost, lo));
	CK(cudaLaunchHostFunc(lo, on_host, NULL));
	CK(cudaStreamEndCapture(lo, &cg));
	CK(cudaGraphInstantiate(&cx, cg, 0));
	CK(cudaGraphLaunch(cx, lo));
	CK(cudaStreamSynchronize(lo));
	check(out[9] == 3.0f && host_node_runs == 2, "captured fork/join graph ran");

	CK(cudaGraphExecDestroy(x));
	CK(cudaGraphExecDestroy(cx));
	CK(cudaGraphDestroy(g));
	CK(cudaGraphDestroy(cl));
	CK(cudaGraphDestroy(cg));
	CK(cudaEventDestroy(fork));
	CK(cudaEventDestroy(join));
	CK(cudaHostUnregister(host));
	free(host);
	printf("%s: %d failures\n", failures ? "FAIL" : "ok", failures);
	return failures != 0;
}
