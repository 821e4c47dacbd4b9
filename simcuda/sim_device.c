/*
 * sim_device.c — the devices as a whole: cudaDeviceReset, device count
 * (the `devices` key), the current device (cudaSetDevice / cudaGetDevice,
 * per thread, kept by sim_timeline.c; attributes and properties:
 * sim_attributes.c),
 * driver and runtime versions, the last error (cudaGetLastError /
 * cudaPeekAtLastError), error names and strings, cudaProfilerStart/Stop.
 *
 * Threads: application threads, any number. No state of its own: the last
 * error is per thread (sim_call.c), the context's life is sim_call.c's.
 */
#include <stdio.h>
#include <string.h>

#include "sim_cudart.h"

SIM_EXPORT cudaError_t cudaDeviceReset(void)
{
	struct sim_call c;
	sim_call_enter(&c, "cudaDeviceReset", SIM_RT(cudaDeviceReset_v3020),
		       SIM_DRV(cuDevicePrimaryCtxReset_v2));
	uint32_t wc;
	uint64_t t = sim_timeline_device_tail(&wc);
	sim_timeline_wait_until(t);
	if (sim_call_context_alive()) {
		sim_call_context_event(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
		sim_call_context_event(CUPTI_CBID_RESOURCE_CONTEXT_CREATED); /* next use re-creates it */
	}
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	cudaError_t r = sim_call_exit(&c, cudaSuccess, 0);
	sim_truth_flush();
	return r;
}

SIM_EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
	SIM_SIMPLE("cudaGetDeviceCount", cudaGetDeviceCount_v3020, SIM_DRV(cuDeviceGetCount), {
		if (!count)
			r_ = cudaErrorInvalidValue;
		else
			*count = sim_timeline_device_count();
	});
}

SIM_EXPORT cudaError_t cudaSetDevice(int device)
{
	SIM_SIMPLE("cudaSetDevice", cudaSetDevice_v3020, 0,
		   r_ = sim_timeline_set_device(device) == 0 ? cudaSuccess : cudaErrorInvalidDevice);
}

SIM_EXPORT cudaError_t cudaGetDevice(int *device)
{
	SIM_SIMPLE("cudaGetDevice", cudaGetDevice_v3020, SIM_DRV(cuCtxGetDevice), {
		if (!device)
			r_ = cudaErrorInvalidValue;
		else
			*device = sim_timeline_device();
	});
}

SIM_EXPORT cudaError_t cudaDriverGetVersion(int *driverVersion)
{
	SIM_SIMPLE("cudaDriverGetVersion", cudaDriverGetVersion_v3020, SIM_DRV(cuDriverGetVersion), {
		if (!driverVersion)
			r_ = cudaErrorInvalidValue;
		else
			*driverVersion = CUDART_VERSION;
	});
}

SIM_EXPORT cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
	SIM_SIMPLE("cudaRuntimeGetVersion", cudaRuntimeGetVersion_v3020, 0, {
		if (!runtimeVersion)
			r_ = cudaErrorInvalidValue;
		else
			*runtimeVersion = CUDART_VERSION;
	});
}

SIM_EXPORT cudaError_t cudaGetLastError(void)
{
	cudaError_t e = t_last_error;
	t_last_error = cudaSuccess;
	struct sim_call c;
	sim_call_enter(&c, "cudaGetLastError", SIM_RT(cudaGetLastError_v3020), 0);
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	sim_call_exit(&c, cudaSuccess, 0);
	return e;
}

SIM_EXPORT cudaError_t cudaPeekAtLastError(void)
{
	cudaError_t e = t_last_error;
	struct sim_call c;
	sim_call_enter(&c, "cudaPeekAtLastError", SIM_RT(cudaPeekAtLastError_v3020), 0);
	sim_timeline_spin_until(c.start + g_cfg.api_ns);
	sim_call_exit(&c, cudaSuccess, 0);
	return e;
}

static const struct {
	cudaError_t e;
	const char *name, *text;
} sim_errors[] = {
	{cudaSuccess, "cudaSuccess", "no error"},
	{cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
	{cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
	{cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
	{cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol"},
	{cudaErrorMissingConfiguration, "cudaErrorMissingConfiguration",
	 "__global__ function call is not configured"},
	{cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
	{cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
	{cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
	{cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
	{cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
	 "CUDA driver version is insufficient for CUDA runtime version"},
	{cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
};

SIM_EXPORT const char *cudaGetErrorString(cudaError_t error)
{
	for (size_t i = 0; i < sizeof sim_errors / sizeof *sim_errors; i++)
		if (sim_errors[i].e == error)
			return sim_errors[i].text;
	return "unrecognized error code";
}

SIM_EXPORT const char *cudaGetErrorName(cudaError_t error)
{
	for (size_t i = 0; i < sizeof sim_errors / sizeof *sim_errors; i++)
		if (sim_errors[i].e == error)
			return sim_errors[i].name;
	return "cudaErrorUnknown";
}

SIM_EXPORT cudaError_t cudaProfilerStart(void)
{
	SIM_SIMPLE("cudaProfilerStart", cudaProfilerStart_v4000, SIM_DRV(cuProfilerStart), (void)0);
}

SIM_EXPORT cudaError_t cudaProfilerStop(void)
{
	SIM_SIMPLE("cudaProfilerStop", cudaProfilerStop_v4000, SIM_DRV(cuProfilerStop), (void)0);
}
