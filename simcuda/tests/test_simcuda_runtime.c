/*
 * test_simcuda_runtime.c — Criterion suite for the rest of the runtime API
 * (docs/simcuda.md "Runtime API coverage"), driven in-process like the
 * other suites (sim_testutil.h), each test in its own process:
 *   - explicit graphs: a diamond (memset -> two parallel kernels -> memcpy
 *     -> host node) runs in dependency order, its parallel kernels overlap
 *     in the truth and the copy starts after both; node queries, clone,
 *     exec update (same shape accepted, different shape refused), upload;
 *   - capture of copies, sets, host functions and an event fork/join
 *     across two streams becomes the same kind of graph;
 *   - stream callbacks, priorities (range, clamping, read back);
 *   - function attributes and the occupancy calculator;
 *   - host registration: pinned and mapped, errors, copy records PINNED;
 *   - every cudaDevAttr of the installed header has a value, and the
 *     properties are an H200's;
 *   - an unimplemented function is a stub answering cudaErrorNotSupported;
 *   - a kernel twin in a library loaded RTLD_LOCAL is found.
 */
#include "sim_testutil.h"

#include <dlfcn.h>
#include <stdatomic.h>

/* Host twins of the test kernels (found by dlsym: -rdynamic). */
void simcuda_kernel_aten_mm(dim3 grid, dim3 block, void **args);
void simcuda_kernel_aten_mm(dim3 grid, dim3 block, void **args)
{ /* aten_mm(float *p, int n): p[i] += 1 */
	(void)grid, (void)block;
	float *p = *(float **)args[0];
	int n = *(int *)args[1];
	for (int i = 0; i < n; i++)
		p[i] += 1.0f;
}

void simcuda_kernel_other(dim3 grid, dim3 block, void **args);
void simcuda_kernel_other(dim3 grid, dim3 block, void **args)
{ /* other(float *p, int n): p[i] *= 2 */
	(void)grid, (void)block;
	float *p = *(float **)args[0];
	int n = *(int *)args[1];
	for (int i = 0; i < n; i++)
		p[i] *= 2.0f;
}

static atomic_int host_calls;
static float host_seen;
static void CUDART_CB host_fn(void *user)
{
	host_seen = *(float *)user;
	atomic_fetch_add(&host_calls, 1);
}

#define N 64

Test(simcuda_runtime, explicit_graph_diamond)
{
	tu_truth_begin();
	tu_register_kernels();
	tu_cupti_start(0);
	float *a, *b, *h;
	int n = N;
	cr_assert_eq(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);
	cr_assert_eq(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);
	cr_assert_eq(cudaMallocHost((void **)&h, 2 * N * sizeof(float)), cudaSuccess);
	cudaGraph_t g;
	cr_assert_eq(cudaGraphCreate(&g, 0), cudaSuccess);
	cudaGraphNode_t set, k1, k2, cp, cp2, host;
	struct cudaMemsetParams ms = {.dst = a, .value = 0, .elementSize = 4, .width = N, .height = 1};
	cr_assert_eq(cudaGraphAddMemsetNode(&set, g, NULL, 0, &ms), cudaSuccess);
	void *args_a[] = {&a, &n}, *args_b[] = {&b, &n};
	struct cudaKernelNodeParams kp = {.func = &tu_stub_mm, .gridDim = {1, 1, 1}, .blockDim = {64, 1, 1},
					  .kernelParams = args_a};
	cr_assert_eq(cudaGraphAddKernelNode(&k1, g, &set, 1, &kp), cudaSuccess);
	kp.kernelParams = args_b;
	kp.func = &tu_stub_other;
	cr_assert_eq(cudaGraphAddKernelNode(&k2, g, &set, 1, &kp), cudaSuccess); /* parallel branch */
	cudaGraphNode_t both[] = {k1, k2};
	cr_assert_eq(cudaGraphAddMemcpyNode1D(&cp, g, both, 2, h, a, N * sizeof(float), cudaMemcpyDeviceToHost),
		     cudaSuccess);
	cr_assert_eq(cudaGraphAddMemcpyNode1D(&cp2, g, &cp, 1, h + N, b, N * sizeof(float), cudaMemcpyDeviceToHost),
		     cudaSuccess);
	struct cudaHostNodeParams hp = {.fn = host_fn, .userData = h};
	cr_assert_eq(cudaGraphAddHostNode(&host, g, &cp2, 1, &hp), cudaSuccess);

	size_t nn = 0, nr = 0, ne = 0;
	cr_assert_eq(cudaGraphGetNodes(g, NULL, &nn), cudaSuccess);
	cr_expect_eq(nn, 6);
	cudaGraphNode_t roots[4];
	nr = 4;
	cr_assert_eq(cudaGraphGetRootNodes(g, roots, &nr), cudaSuccess);
	cr_expect_eq(nr, 1);
	cr_expect_eq(roots[0], set);
	cr_assert_eq(cudaGraphGetEdges(g, NULL, NULL, NULL, &ne), cudaSuccess);
	cr_expect_eq(ne, 6);
	enum cudaGraphNodeType ty;
	cr_assert_eq(cudaGraphNodeGetType(k2, &ty), cudaSuccess);
	cr_expect_eq(ty, cudaGraphNodeTypeKernel);

	for (int i = 0; i < N; i++)
		b[i] = (float)i;
	cudaGraphExec_t x;
	cr_assert_eq(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
	cr_assert_eq(cudaGraphUpload(x, NULL), cudaSuccess);
	cr_assert_eq(cudaGraphLaunch(x, NULL), cudaSuccess);
	cr_assert_eq(cudaStreamSynchronize(NULL), cudaSuccess);
	cr_expect_eq(atomic_load(&host_calls), 1);
	cr_expect_eq(host_seen, 1.0f, "memset then +1 gives 1, got %f", host_seen);
	cr_expect_eq(h[N + 3], 6.0f); /* b[3] = 3, doubled */
	/* CUPTI: every node that is GPU work has its record, tagged with the
	 * launch call and the executable's graph */
	tu_flush();
	size_t nk = 0, nmc = 0, nms = 0;
	uint32_t gid = 0;
	pthread_mutex_lock(&tu.mx);
	for (size_t i = 0; i < tu.n; i++) {
		const struct tu_rec *r = &tu.v[i];
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && r->u.k.graphId)
			nk++, gid = r->u.k.graphId;
		else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY && r->u.m.graphId) {
			nmc++;
			cr_expect_eq(r->u.m.copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
		} else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET && r->u.s.graphId) {
			nms++;
			cr_expect_eq(r->u.s.bytes, N * 4);
		}
	}
	pthread_mutex_unlock(&tu.mx);
	cr_expect_eq(nk, 2);
	cr_expect_eq(nmc, 2);
	cr_expect_eq(nms, 1);
	cr_expect_neq(gid, 0);

	/* clone: same shape, updates the executable; another shape does not */
	cudaGraph_t cl;
	cr_assert_eq(cudaGraphClone(&cl, g), cudaSuccess);
	nn = 0;
	cr_assert_eq(cudaGraphGetNodes(cl, NULL, &nn), cudaSuccess);
	cr_expect_eq(nn, 6);
	cudaGraphExecUpdateResultInfo info;
	cr_expect_eq(cudaGraphExecUpdate(x, cl, &info), cudaSuccess);
	cr_expect_eq(info.result, cudaGraphExecUpdateSuccess);
	/* new kernel parameters, in the graph and in the executable */
	struct cudaKernelNodeParams kq;
	cr_assert_eq(cudaGraphKernelNodeGetParams(k2, &kq), cudaSuccess);
	cr_expect_eq(kq.func, (void *)&tu_stub_other);
	kq.gridDim.x = 4;
	cr_expect_eq(cudaGraphKernelNodeSetParams(k2, &kq), cudaSuccess);
	cr_expect_eq(cudaGraphExecKernelNodeSetParams(x, k2, &kq), cudaSuccess);
	cr_expect_eq(cudaGraphExecKernelNodeSetParams(x, set, &kq), cudaErrorInvalidValue, "not a kernel node");
	cudaGraph_t other;
	cudaGraphNode_t e;
	cr_assert_eq(cudaGraphCreate(&other, 0), cudaSuccess);
	cr_assert_eq(cudaGraphAddEmptyNode(&e, other, NULL, 0), cudaSuccess);
	cr_expect_eq(cudaGraphExecUpdate(x, other, &info), cudaErrorGraphExecUpdateFailure);
	cr_expect_eq(info.result, cudaGraphExecUpdateErrorTopologyChanged);

	size_t ne2;
	struct sim_ev *ev = tu_truth_load(&ne2);
	const struct sim_ev *kk[2] = {0}, *mc = NULL;
	for (size_t i = 0; i < ne2; i++) {
		if (ev[i].type == SIM_EV_KERNEL && !kk[0])
			kk[0] = &ev[i];
		else if (ev[i].type == SIM_EV_KERNEL && !kk[1])
			kk[1] = &ev[i];
		else if (ev[i].type == SIM_EV_MEMCPY && !mc)
			mc = &ev[i];
	}
	cr_assert(kk[0] && kk[1] && mc, "two kernels and a copy in the truth");
	cr_expect_eq(kk[0]->start, kk[1]->start, "parallel branches start together");
	cr_expect_geq(mc->start, kk[0]->end > kk[1]->end ? kk[0]->end : kk[1]->end, "the copy follows both");
	free(ev);
	cr_expect_eq(cudaGraphExecDestroy(x), cudaSuccess);
	cr_expect_eq(cudaGraphDestroy(g), cudaSuccess);
	cr_expect_eq(cudaGraphDestroy(cl), cudaSuccess);
	cr_expect_eq(cudaGraphDestroy(other), cudaSuccess);
	cudaFree(a), cudaFree(b), cudaFreeHost(h);
}

Test(simcuda_runtime, capture_fork_join)
{
	tu_register_kernels();
	float *a, *h;
	int n = N;
	cr_assert_eq(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);
	cr_assert_eq(cudaMallocHost((void **)&h, N * sizeof(float)), cudaSuccess);
	cudaStream_t s1, s2;
	cudaEvent_t fork, join;
	cr_assert_eq(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
	cr_assert_eq(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
	cr_assert_eq(cudaEventCreate(&fork), cudaSuccess);
	cr_assert_eq(cudaEventCreate(&join), cudaSuccess);
	cr_assert_eq(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal), cudaSuccess);
	cr_assert_eq(cudaMemsetAsync(a, 0, N * sizeof(float), s1), cudaSuccess);
	cr_assert_eq(cudaEventRecord(fork, s1), cudaSuccess);
	cr_assert_eq(cudaStreamWaitEvent(s2, fork, 0), cudaSuccess);
	enum cudaStreamCaptureStatus cs;
	cr_assert_eq(cudaStreamIsCapturing(s2, &cs), cudaSuccess);
	cr_expect_eq(cs, cudaStreamCaptureStatusActive, "s2 joined the capture");
	void *args[] = {&a, &n};
	dim3 g1 = {1, 1, 1}, b1 = {64, 1, 1};
	cr_assert_eq(cudaLaunchKernel(&tu_stub_mm, g1, b1, args, 0, s2), cudaSuccess);
	cr_assert_eq(cudaEventRecord(join, s2), cudaSuccess);
	cr_assert_eq(cudaStreamWaitEvent(s1, join, 0), cudaSuccess);
	cr_assert_eq(cudaMemcpyAsync(h, a, N * sizeof(float), cudaMemcpyDeviceToHost, s1), cudaSuccess);
	cr_assert_eq(cudaLaunchHostFunc(s1, host_fn, h), cudaSuccess);
	cr_expect_eq(h[0], 0.0f, "nothing ran during capture");
	cudaGraph_t g;
	cr_assert_eq(cudaStreamEndCapture(s1, &g), cudaSuccess);
	cr_assert_eq(cudaStreamIsCapturing(s2, &cs), cudaSuccess);
	cr_expect_eq(cs, cudaStreamCaptureStatusNone, "the capture ended for s2 too");
	size_t nn = 0, ne = 0;
	cr_assert_eq(cudaGraphGetNodes(g, NULL, &nn), cudaSuccess);
	cr_expect_eq(nn, 4, "memset, kernel, memcpy, host: %zu", nn);
	cr_assert_eq(cudaGraphGetEdges(g, NULL, NULL, NULL, &ne), cudaSuccess);
	cr_expect_eq(ne, 4, "memset->kernel->memcpy->host, and memset->memcpy (s1 own order): %zu", ne);
	cudaGraphExec_t x;
	cr_assert_eq(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(cudaGraphLaunch(x, s1), cudaSuccess);
	cr_assert_eq(cudaStreamSynchronize(s1), cudaSuccess);
	cr_expect_eq(atomic_load(&host_calls), 2);
	cr_expect_eq(h[5], 1.0f, "set to 0, +1, copied back: %f", h[5]);
	cr_expect_eq(cudaGraphExecDestroy(x), cudaSuccess);
	cr_expect_eq(cudaGraphDestroy(g), cudaSuccess);
	cudaEventDestroy(fork), cudaEventDestroy(join);
	cudaStreamDestroy(s1), cudaStreamDestroy(s2);
	cudaFree(a), cudaFreeHost(h);
}

static atomic_int cb_calls;
static cudaStream_t cb_stream;
static cudaError_t cb_status = cudaErrorUnknown;
static void CUDART_CB stream_cb(cudaStream_t s, cudaError_t st, void *user)
{
	cb_stream = s;
	cb_status = st;
	*(int *)user = 7;
	atomic_fetch_add(&cb_calls, 1);
}

Test(simcuda_runtime, callbacks_and_priorities)
{
	int least = 99, greatest = 99, p = 99;
	cr_assert_eq(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
	cr_expect_eq(least, 0);
	cr_expect_eq(greatest, -5);
	cudaStream_t hi, lo, clamp;
	cr_assert_eq(cudaStreamCreateWithPriority(&hi, cudaStreamNonBlocking, -3), cudaSuccess);
	cr_assert_eq(cudaStreamCreateWithPriority(&lo, cudaStreamDefault, 0), cudaSuccess);
	cr_assert_eq(cudaStreamCreateWithPriority(&clamp, cudaStreamDefault, -100), cudaSuccess);
	cr_assert_eq(cudaStreamGetPriority(hi, &p), cudaSuccess);
	cr_expect_eq(p, -3);
	cr_assert_eq(cudaStreamGetPriority(clamp, &p), cudaSuccess);
	cr_expect_eq(p, -5, "out of range is clamped");
	cr_assert_eq(cudaStreamGetPriority(NULL, &p), cudaSuccess);
	cr_expect_eq(p, 0);
	unsigned fl = 99;
	cr_assert_eq(cudaStreamGetFlags(hi, &fl), cudaSuccess);
	cr_expect_eq(fl, cudaStreamNonBlocking);
	cudaStreamAttrValue v = {.priority = -4};
	cr_assert_eq(cudaStreamSetAttribute(lo, cudaStreamAttributePriority, &v), cudaSuccess);
	cr_assert_eq(cudaStreamGetPriority(lo, &p), cudaSuccess);
	cr_expect_eq(p, -4);

	int flag = 0;
	cr_assert_eq(cudaStreamAddCallback(hi, stream_cb, &flag, 0), cudaSuccess);
	cr_expect_eq(cudaStreamAddCallback(hi, stream_cb, &flag, 1), cudaErrorInvalidValue, "flags must be 0");
	cr_assert_eq(cudaStreamSynchronize(hi), cudaSuccess);
	for (int i = 0; i < 2000 && !atomic_load(&cb_calls); i++)
		usleep(1000);
	cr_expect_eq(atomic_load(&cb_calls), 1);
	cr_expect_eq(cb_stream, hi);
	cr_expect_eq(cb_status, cudaSuccess);
	cr_expect_eq(flag, 7);
	cudaGraph_t g;
	cr_assert_eq(cudaStreamBeginCapture(lo, cudaStreamCaptureModeGlobal), cudaSuccess);
	cr_expect_eq(cudaStreamAddCallback(lo, stream_cb, &flag, 0), cudaErrorStreamCaptureUnsupported);
	cr_assert_eq(cudaStreamEndCapture(lo, &g), cudaSuccess);
	cr_expect_eq(cudaGraphDestroy(g), cudaSuccess);
}

Test(simcuda_runtime, occupancy_and_function_attributes)
{
	tu_register_kernels();
	struct cudaFuncAttributes fa;
	cr_assert_eq(cudaFuncGetAttributes(&fa, &tu_stub_mm), cudaSuccess);
	cr_expect_eq(fa.maxThreadsPerBlock, 1024);
	cr_expect_eq(fa.numRegs, 32);
	cr_expect_eq(fa.ptxVersion, 90);
	cr_expect_eq(cudaFuncGetAttributes(&fa, &fa), cudaErrorInvalidDeviceFunction);
	cr_assert_eq(cudaFuncSetAttribute(&tu_stub_mm, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000),
		     cudaSuccess);
	cr_assert_eq(cudaFuncGetAttributes(&fa, &tu_stub_mm), cudaSuccess);
	cr_expect_eq(fa.maxDynamicSharedSizeBytes, 100000);
	/* cc 9.0 limits: 32 blocks, 64 warps, 64K registers, 228 KB shared a SM */
	static const struct { int block; size_t dyn; int want; } cases[] = {
		{32, 0, 32}, {64, 0, 32}, {128, 0, 16}, {256, 0, 8}, {1024, 0, 2}, {32, 100000, 2}, {2048, 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int nb = -1;
		cr_assert_eq(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, &tu_stub_mm, cases[i].block, cases[i].dyn),
			     cudaSuccess);
		cr_expect_eq(nb, cases[i].want, "block %d dyn %zu: %d blocks, want %d", cases[i].block, cases[i].dyn, nb,
			     cases[i].want);
	}
	size_t dyn = 0;
	cr_assert_eq(cudaOccupancyAvailableDynamicSMemPerBlock(&dyn, &tu_stub_mm, 2, 256), cudaSuccess);
	cr_expect_eq(dyn, 233472 / 2 - 1024);
}

Test(simcuda_runtime, host_register_and_mapped)
{
	tu_cupti_start(0);
	size_t sz = 1 << 16;
	char *p = aligned_alloc(4096, sz);
	void *dev = NULL, *d;
	unsigned fl = 0;
	cr_assert_eq(cudaSetDeviceFlags(cudaDeviceMapHost | cudaDeviceScheduleBlockingSync), cudaSuccess);
	cr_assert_eq(cudaGetDeviceFlags(&fl), cudaSuccess);
	cr_expect(fl & cudaDeviceMapHost);
	cr_expect_eq(fl & cudaDeviceScheduleMask, cudaDeviceScheduleBlockingSync);
	cr_expect_eq(cudaSetDeviceFlags(0x4000), cudaErrorInvalidValue);
	struct cudaPointerAttributes pa;
	cr_assert_eq(cudaPointerGetAttributes(&pa, p), cudaSuccess);
	cr_expect_eq(pa.type, cudaMemoryTypeUnregistered);
	cr_expect_eq(cudaHostGetDevicePointer(&dev, p, 0), cudaErrorInvalidValue, "not registered yet");
	cr_assert_eq(cudaHostRegister(p, sz, cudaHostRegisterMapped), cudaSuccess);
	cr_expect_eq(cudaHostRegister(p + 64, 64, 0), cudaErrorHostMemoryAlreadyRegistered);
	cr_assert_eq(cudaHostGetDevicePointer(&dev, p + 10, 0), cudaSuccess);
	cr_expect_eq(dev, p + 10, "unified addressing: the device pointer is the host pointer");
	cr_assert_eq(cudaPointerGetAttributes(&pa, p + 100), cudaSuccess);
	cr_expect_eq(pa.type, cudaMemoryTypeHost);
	cr_assert_eq(cudaMalloc(&d, sz), cudaSuccess);
	cr_assert_eq(cudaMemcpyAsync(d, p, sz, cudaMemcpyHostToDevice, NULL), cudaSuccess);
	cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
	tu_flush();
	size_t nm = 0;
	pthread_mutex_lock(&tu.mx);
	for (size_t i = 0; i < tu.n; i++)
		if (tu.v[i].kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
			nm++;
			cr_expect_eq(tu.v[i].u.m.srcKind, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, "registered = pinned");
		}
	pthread_mutex_unlock(&tu.mx);
	cr_expect_eq(nm, 1);
	cr_assert_eq(cudaHostUnregister(p), cudaSuccess);
	cr_expect_eq(cudaHostUnregister(p), cudaErrorHostMemoryNotRegistered);
	cr_assert_eq(cudaPointerGetAttributes(&pa, p), cudaSuccess);
	cr_expect_eq(pa.type, cudaMemoryTypeUnregistered);
	free(p);
}

/* Every attribute the installed header enumerates (except Reserved*) answers. */
Test(simcuda_runtime, every_attribute_has_a_value)
{
	const char *home = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
	char path[512], line[512];
	snprintf(path, sizeof path, "%s/include/driver_types.h", home);
	FILE *f = fopen(path, "r");
	cr_assert(f, "cannot read %s", path);
	int in = 0, seen = 0;
	while (fgets(line, sizeof line, f)) {
		if (strstr(line, "enum __device_builtin__ cudaDeviceAttr"))
			in = 1;
		else if (in && strstr(line, "};"))
			break;
		char name[128];
		int val;
		if (!in || sscanf(line, " cudaDevAttr%127[A-Za-z0-9] = %d", name, &val) != 2)
			continue;
		if (!strncmp(name, "Reserved", 8) || !strcmp(name, "Max"))
			continue;
		int v = -12345;
		cr_expect_eq(cudaDeviceGetAttribute(&v, (enum cudaDeviceAttr)val, 0), cudaSuccess,
			     "cudaDevAttr%s (%d) has no value", name, val);
		seen++;
	}
	fclose(f);
	cr_expect_gt(seen, 120, "read %d attributes from %s", seen, path);
	int v;
	cr_assert_eq(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
	cr_expect_eq(v, 132);
	cr_assert_eq(cudaDeviceGetAttribute(&v, cudaDevAttrGlobalMemoryBusWidth, 0), cudaSuccess);
	cr_expect_eq(v, 6144);
	cr_expect_eq(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 1), cudaErrorInvalidDevice);
	cr_expect_eq(cudaDeviceGetAttribute(&v, (enum cudaDeviceAttr)92, 0), cudaErrorInvalidValue, "reserved");
	struct cudaDeviceProp pr;
	cr_assert_eq(cudaGetDeviceProperties(&pr, 0), cudaSuccess);
	cr_expect(strstr(pr.name, "H200") != NULL, "%s", pr.name);
	cr_expect_eq(pr.major, 9);
	cr_expect_eq(pr.multiProcessorCount, 132);
	cr_expect_eq(pr.sharedMemPerMultiprocessor, 233472);
	cr_expect_eq(pr.maxBlocksPerMultiProcessor, 32);
	cr_expect_gt(pr.totalGlobalMem, 140ull << 30);
	cr_expect_eq(pr.l2CacheSize, 50 << 20);
}

Test(simcuda_runtime, unimplemented_is_not_supported)
{
	cudaError_t (*fn)(void) = (cudaError_t(*)(void))dlsym(RTLD_DEFAULT, "cudaMallocArray");
	cr_assert(fn, "cudaMallocArray is exported");
	cr_expect_eq(fn(), cudaErrorNotSupported);
	cr_expect_eq(cudaGetLastError(), cudaErrorNotSupported);
	cr_expect_eq(cudaGetLastError(), cudaSuccess);
}

Test(simcuda_runtime, twin_in_rtld_local_library)
{
	const char *b = getenv("GP_BUILD") ? getenv("GP_BUILD") : "build";
	char path[512];
	snprintf(path, sizeof path, "%s/simcuda/libsimrtldtest.so", b);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	cr_assert(h, "dlopen %s: %s", path, dlerror());
	cr_expect_null(dlsym(RTLD_DEFAULT, "simcuda_kernel_rtld_local_kernel"), "invisible process-wide");
	int (*run)(int *) = (int (*)(int *))dlsym(h, "sim_rtld_lib_run");
	cr_assert(run);
	int out = 0;
	cr_assert_eq(run(&out), 0);
	cr_expect_eq(out, 42, "the twin ran");
}
