/*
 * sim_rtld_lib.c — a stand-in for a CUDA extension that Python ctypes loads
 * with RTLD_LOCAL: it registers one kernel and carries that kernel's host
 * twin, which RTLD_DEFAULT cannot see. test_simcuda_runtime.c dlopens it
 * RTLD_LOCAL and checks that the twin ran (sim_register.c finds it through
 * the library that registered the kernel).
 */
#include <cuda_runtime_api.h>

void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun, const char *deviceName,
			    int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);

static char rtld_stub;
static void **volatile rtld_fatbin; /* registered for the process (LeakSanitizer sees it) */

/* The twin: args[0] is an int *, set to 42. */
void simcuda_kernel_rtld_local_kernel(dim3 grid, dim3 block, void **args);
void simcuda_kernel_rtld_local_kernel(dim3 grid, dim3 block, void **args)
{
	(void)grid, (void)block;
	**(int **)args[0] = 42;
}

/* Register, launch once on the legacy stream, synchronize; the CUDA status. */
int sim_rtld_lib_run(int *out);
int sim_rtld_lib_run(int *out)
{
	void **h = rtld_fatbin = __cudaRegisterFatBinary(NULL);
	__cudaRegisterFunction(h, &rtld_stub, NULL, "_Z17rtld_local_kernelPi", -1, NULL, NULL, NULL, NULL, NULL);
	void *args[] = {&out};
	dim3 g = {1, 1, 1}, b = {1, 1, 1};
	cudaError_t r = cudaLaunchKernel(&rtld_stub, g, b, args, 0, NULL);
	return r != cudaSuccess ? (int)r : (int)cudaDeviceSynchronize();
}
