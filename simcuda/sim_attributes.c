/*
 * sim_attributes.c — what the simulated device says it is: the full
 * cudaDeviceGetAttribute table and cudaGetDeviceProperties, with the values
 * of an NVIDIA H200 SXM (GH100, compute capability 9.0).
 *
 * Where the values come from (public documents, facts only):
 *  - CUDA C++ Programming Guide, "Technical Specifications per Compute
 *    Capability", column 9.0: thread/block/grid limits, registers, shared
 *    memory (228 KB per SM, 227 KB opt-in per block, 1 KB reserved per
 *    block), 32 resident blocks and 2048 threads per SM, 64 KB constant
 *    memory, texture and surface limits.
 *  - NVIDIA H200 Tensor Core GPU datasheet: 141 GB HBM3e at 4.8 TB/s,
 *    132 SMs (SXM), 1980 MHz boost clock (the GH100 SXM's); the memory clock
 *    is derived from it: 4.8e12 B/s / (6144 bit / 8) / 2 (DDR) = 3125 MHz.
 *    Global memory is what the driver reports for an H200 (143771 MiB).
 *  - Hopper Tuning Guide: 50 MB L2 (52428800 bytes), up to 75 % of it for
 *    persisting accesses.
 *  - PCI ids: vendor 0x10de, device 0x2335 (H200 SXM, the PCI ID database);
 *    bus/domain are those of a typical first GPU slot.
 * Every attribute of the CUDA 13 enum is in the table, including those whose
 * true value is 0 (no attribute is 0 by omission); an attribute not in the
 * table (a reserved number) is cudaErrorInvalidValue, as on a real driver
 * for an unknown attribute.
 *
 * Threads: any; the table is constant.
 */
#include <stdio.h>
#include <string.h>

#include "sim_cudart.h"

#define SIM_H200_GLOBAL_MEM (143771ull << 20)
#define SIM_H200_PCI_DEVICE 0x2335u
#define SIM_PCI_VENDOR 0x10deu

static const struct {
	enum cudaDeviceAttr attr;
	int value;
} sim_attrs[] = {
	{cudaDevAttrMaxThreadsPerBlock, 1024},
	{cudaDevAttrMaxBlockDimX, 1024},
	{cudaDevAttrMaxBlockDimY, 1024},
	{cudaDevAttrMaxBlockDimZ, 64},
	{cudaDevAttrMaxGridDimX, 2147483647},
	{cudaDevAttrMaxGridDimY, 65535},
	{cudaDevAttrMaxGridDimZ, 65535},
	{cudaDevAttrMaxSharedMemoryPerBlock, 49152},
	{cudaDevAttrTotalConstantMemory, 65536},
	{cudaDevAttrWarpSize, 32},
	{cudaDevAttrMaxPitch, 2147483647},
	{cudaDevAttrMaxRegistersPerBlock, 65536},
	{cudaDevAttrClockRate, 1980000}, /* kHz */
	{cudaDevAttrTextureAlignment, 512},
	{cudaDevAttrGpuOverlap, 1},
	{cudaDevAttrMultiProcessorCount, 132},
	{cudaDevAttrKernelExecTimeout, 0}, /* no display watchdog on a data-centre GPU */
	{cudaDevAttrIntegrated, 0},
	{cudaDevAttrCanMapHostMemory, 1},
	{cudaDevAttrComputeMode, cudaComputeModeDefault}, /* = 0 */
	{cudaDevAttrMaxTexture1DWidth, 131072},
	{cudaDevAttrMaxTexture2DWidth, 131072},
	{cudaDevAttrMaxTexture2DHeight, 65536},
	{cudaDevAttrMaxTexture3DWidth, 16384},
	{cudaDevAttrMaxTexture3DHeight, 16384},
	{cudaDevAttrMaxTexture3DDepth, 16384},
	{cudaDevAttrMaxTexture2DLayeredWidth, 32768},
	{cudaDevAttrMaxTexture2DLayeredHeight, 32768},
	{cudaDevAttrMaxTexture2DLayeredLayers, 2048},
	{cudaDevAttrSurfaceAlignment, 512},
	{cudaDevAttrConcurrentKernels, 1},
	{cudaDevAttrEccEnabled, 1},
	{cudaDevAttrPciBusId, 0x18},
	{cudaDevAttrPciDeviceId, 0},
	{cudaDevAttrTccDriver, 0}, /* Linux: no TCC */
	{cudaDevAttrMemoryClockRate, 3125000}, /* kHz, derived (see above) */
	{cudaDevAttrGlobalMemoryBusWidth, 6144},
	{cudaDevAttrL2CacheSize, 52428800},
	{cudaDevAttrMaxThreadsPerMultiProcessor, 2048},
	{cudaDevAttrAsyncEngineCount, 3},
	{cudaDevAttrUnifiedAddressing, 1},
	{cudaDevAttrMaxTexture1DLayeredWidth, 32768},
	{cudaDevAttrMaxTexture1DLayeredLayers, 2048},
	{cudaDevAttrMaxTexture2DGatherWidth, 32768},
	{cudaDevAttrMaxTexture2DGatherHeight, 32768},
	{cudaDevAttrMaxTexture3DWidthAlt, 8192},
	{cudaDevAttrMaxTexture3DHeightAlt, 8192},
	{cudaDevAttrMaxTexture3DDepthAlt, 32768},
	{cudaDevAttrPciDomainId, 0},
	{cudaDevAttrTexturePitchAlignment, 32},
	{cudaDevAttrMaxTextureCubemapWidth, 32768},
	{cudaDevAttrMaxTextureCubemapLayeredWidth, 32768},
	{cudaDevAttrMaxTextureCubemapLayeredLayers, 2046},
	{cudaDevAttrMaxSurface1DWidth, 32768},
	{cudaDevAttrMaxSurface2DWidth, 131072},
	{cudaDevAttrMaxSurface2DHeight, 65536},
	{cudaDevAttrMaxSurface3DWidth, 16384},
	{cudaDevAttrMaxSurface3DHeight, 16384},
	{cudaDevAttrMaxSurface3DDepth, 16384},
	{cudaDevAttrMaxSurface1DLayeredWidth, 32768},
	{cudaDevAttrMaxSurface1DLayeredLayers, 2048},
	{cudaDevAttrMaxSurface2DLayeredWidth, 32768},
	{cudaDevAttrMaxSurface2DLayeredHeight, 32768},
	{cudaDevAttrMaxSurface2DLayeredLayers, 2048},
	{cudaDevAttrMaxSurfaceCubemapWidth, 32768},
	{cudaDevAttrMaxSurfaceCubemapLayeredWidth, 32768},
	{cudaDevAttrMaxSurfaceCubemapLayeredLayers, 2046},
	{cudaDevAttrMaxTexture1DLinearWidth, 268435456},
	{cudaDevAttrMaxTexture2DLinearWidth, 131072},
	{cudaDevAttrMaxTexture2DLinearHeight, 65000},
	{cudaDevAttrMaxTexture2DLinearPitch, 2097120},
	{cudaDevAttrMaxTexture2DMipmappedWidth, 32768},
	{cudaDevAttrMaxTexture2DMipmappedHeight, 32768},
	{cudaDevAttrComputeCapabilityMajor, 9},
	{cudaDevAttrComputeCapabilityMinor, 0},
	{cudaDevAttrMaxTexture1DMipmappedWidth, 32768},
	{cudaDevAttrStreamPrioritiesSupported, 1},
	{cudaDevAttrGlobalL1CacheSupported, 1},
	{cudaDevAttrLocalL1CacheSupported, 1},
	{cudaDevAttrMaxSharedMemoryPerMultiprocessor, 233472},
	{cudaDevAttrMaxRegistersPerMultiprocessor, 65536},
	{cudaDevAttrManagedMemory, 1},
	{cudaDevAttrIsMultiGpuBoard, 0},
	{cudaDevAttrMultiGpuBoardGroupID, 0},
	{cudaDevAttrHostNativeAtomicSupported, 0}, /* x86 host over PCIe */
	{cudaDevAttrSingleToDoublePrecisionPerfRatio, 2},
	{cudaDevAttrPageableMemoryAccess, 0}, /* no HMM assumed */
	{cudaDevAttrConcurrentManagedAccess, 1},
	{cudaDevAttrComputePreemptionSupported, 1},
	{cudaDevAttrCanUseHostPointerForRegisteredMem, 1},
	{cudaDevAttrCooperativeLaunch, 1},
	{cudaDevAttrMaxSharedMemoryPerBlockOptin, 232448},
	{cudaDevAttrCanFlushRemoteWrites, 0},
	{cudaDevAttrHostRegisterSupported, 1},
	{cudaDevAttrPageableMemoryAccessUsesHostPageTables, 0},
	{cudaDevAttrDirectManagedMemAccessFromHost, 0},
	{cudaDevAttrMaxBlocksPerMultiprocessor, 32},
	{cudaDevAttrMaxPersistingL2CacheSize, 39321600}, /* 75 % of L2 */
	{cudaDevAttrMaxAccessPolicyWindowSize, 134213632},
	{cudaDevAttrReservedSharedMemoryPerBlock, 1024},
	{cudaDevAttrSparseCudaArraySupported, 1},
	{cudaDevAttrHostRegisterReadOnlySupported, 1},
	{cudaDevAttrTimelineSemaphoreInteropSupported, 1},
	{cudaDevAttrMemoryPoolsSupported, 1},
	{cudaDevAttrGPUDirectRDMASupported, 1},
	{cudaDevAttrGPUDirectRDMAFlushWritesOptions, 1},
	{cudaDevAttrGPUDirectRDMAWritesOrdering, 100},
	{cudaDevAttrMemoryPoolSupportedHandleTypes, 9}, /* POSIX fd | fabric */
	{cudaDevAttrClusterLaunch, 1},
	{cudaDevAttrDeferredMappingCudaArraySupported, 1},
	{cudaDevAttrIpcEventSupport, 1},
	{cudaDevAttrMemSyncDomainCount, 4},
	{cudaDevAttrNumaConfig, 0}, /* cudaDeviceNumaConfigNone */
	{cudaDevAttrNumaId, -1},
	{cudaDevAttrMpsEnabled, 0},
	{cudaDevAttrHostNumaId, 0},
	{cudaDevAttrD3D12CigSupported, 0},
	{cudaDevAttrVulkanCigSupported, 0},
	{cudaDevAttrGpuPciDeviceId, (int)((SIM_H200_PCI_DEVICE << 16) | SIM_PCI_VENDOR)},
	{cudaDevAttrGpuPciSubsystemId, (int)((0x18beu << 16) | SIM_PCI_VENDOR)},
	{cudaDevAttrHostNumaMemoryPoolsSupported, 0},
	{cudaDevAttrHostNumaMultinodeIpcSupported, 0},
	{cudaDevAttrHostMemoryPoolsSupported, 1},
	{cudaDevAttrOnlyPartialHostNativeAtomicSupported, 0},
};

size_t sim_attributes_global_mem(void)
{
	return SIM_H200_GLOBAL_MEM;
}

/* Is d a device this simulator has? (one device) */
static int sim_attributes_valid_device(int d)
{
	return d >= 0 && d < sim_timeline_device_count(); /* the `devices` key */
}

/* The attribute's value; 0 or -EINVAL when the table has no such attribute. */
static int sim_attributes_get(enum cudaDeviceAttr attr, int *v)
{
	for (size_t i = 0; i < sizeof sim_attrs / sizeof *sim_attrs; i++) {
		if (sim_attrs[i].attr == attr) {
			*v = sim_attrs[i].value;
			return 0;
		}
	}
	return -22;
}

static int sim_attr(enum cudaDeviceAttr a)
{
	int v = 0;
	sim_attributes_get(a, &v);
	return v;
}

static void sim_attributes_props(struct cudaDeviceProp *p)
{
	memset(p, 0, sizeof *p);
	snprintf(p->name, sizeof p->name, "NVIDIA H200 (simcuda)");
	for (int i = 0; i < 16; i++) /* a stable, recognisable UUID */
		p->uuid.bytes[i] = (char)(0x51 + i);
	p->totalGlobalMem = SIM_H200_GLOBAL_MEM;
	p->sharedMemPerBlock = (size_t)sim_attr(cudaDevAttrMaxSharedMemoryPerBlock);
	p->regsPerBlock = sim_attr(cudaDevAttrMaxRegistersPerBlock);
	p->warpSize = sim_attr(cudaDevAttrWarpSize);
	p->memPitch = (size_t)sim_attr(cudaDevAttrMaxPitch);
	p->maxThreadsPerBlock = sim_attr(cudaDevAttrMaxThreadsPerBlock);
	p->maxThreadsDim[0] = sim_attr(cudaDevAttrMaxBlockDimX);
	p->maxThreadsDim[1] = sim_attr(cudaDevAttrMaxBlockDimY);
	p->maxThreadsDim[2] = sim_attr(cudaDevAttrMaxBlockDimZ);
	p->maxGridSize[0] = sim_attr(cudaDevAttrMaxGridDimX);
	p->maxGridSize[1] = sim_attr(cudaDevAttrMaxGridDimY);
	p->maxGridSize[2] = sim_attr(cudaDevAttrMaxGridDimZ);
	p->totalConstMem = (size_t)sim_attr(cudaDevAttrTotalConstantMemory);
	p->major = sim_attr(cudaDevAttrComputeCapabilityMajor);
	p->minor = sim_attr(cudaDevAttrComputeCapabilityMinor);
	p->textureAlignment = (size_t)sim_attr(cudaDevAttrTextureAlignment);
	p->texturePitchAlignment = (size_t)sim_attr(cudaDevAttrTexturePitchAlignment);
	p->multiProcessorCount = sim_attr(cudaDevAttrMultiProcessorCount);
	p->integrated = sim_attr(cudaDevAttrIntegrated);
	p->canMapHostMemory = sim_attr(cudaDevAttrCanMapHostMemory);
	p->maxTexture1D = sim_attr(cudaDevAttrMaxTexture1DWidth);
	p->maxTexture1DMipmap = sim_attr(cudaDevAttrMaxTexture1DMipmappedWidth);
	p->maxTexture2D[0] = sim_attr(cudaDevAttrMaxTexture2DWidth);
	p->maxTexture2D[1] = sim_attr(cudaDevAttrMaxTexture2DHeight);
	p->maxTexture2DMipmap[0] = sim_attr(cudaDevAttrMaxTexture2DMipmappedWidth);
	p->maxTexture2DMipmap[1] = sim_attr(cudaDevAttrMaxTexture2DMipmappedHeight);
	p->maxTexture2DLinear[0] = sim_attr(cudaDevAttrMaxTexture2DLinearWidth);
	p->maxTexture2DLinear[1] = sim_attr(cudaDevAttrMaxTexture2DLinearHeight);
	p->maxTexture2DLinear[2] = sim_attr(cudaDevAttrMaxTexture2DLinearPitch);
	p->maxTexture2DGather[0] = sim_attr(cudaDevAttrMaxTexture2DGatherWidth);
	p->maxTexture2DGather[1] = sim_attr(cudaDevAttrMaxTexture2DGatherHeight);
	p->maxTexture3D[0] = sim_attr(cudaDevAttrMaxTexture3DWidth);
	p->maxTexture3D[1] = sim_attr(cudaDevAttrMaxTexture3DHeight);
	p->maxTexture3D[2] = sim_attr(cudaDevAttrMaxTexture3DDepth);
	p->maxTexture3DAlt[0] = sim_attr(cudaDevAttrMaxTexture3DWidthAlt);
	p->maxTexture3DAlt[1] = sim_attr(cudaDevAttrMaxTexture3DHeightAlt);
	p->maxTexture3DAlt[2] = sim_attr(cudaDevAttrMaxTexture3DDepthAlt);
	p->maxTextureCubemap = sim_attr(cudaDevAttrMaxTextureCubemapWidth);
	p->maxTexture1DLayered[0] = sim_attr(cudaDevAttrMaxTexture1DLayeredWidth);
	p->maxTexture1DLayered[1] = sim_attr(cudaDevAttrMaxTexture1DLayeredLayers);
	p->maxTexture2DLayered[0] = sim_attr(cudaDevAttrMaxTexture2DLayeredWidth);
	p->maxTexture2DLayered[1] = sim_attr(cudaDevAttrMaxTexture2DLayeredHeight);
	p->maxTexture2DLayered[2] = sim_attr(cudaDevAttrMaxTexture2DLayeredLayers);
	p->maxTextureCubemapLayered[0] = sim_attr(cudaDevAttrMaxTextureCubemapLayeredWidth);
	p->maxTextureCubemapLayered[1] = sim_attr(cudaDevAttrMaxTextureCubemapLayeredLayers);
	p->maxSurface1D = sim_attr(cudaDevAttrMaxSurface1DWidth);
	p->maxSurface2D[0] = sim_attr(cudaDevAttrMaxSurface2DWidth);
	p->maxSurface2D[1] = sim_attr(cudaDevAttrMaxSurface2DHeight);
	p->maxSurface3D[0] = sim_attr(cudaDevAttrMaxSurface3DWidth);
	p->maxSurface3D[1] = sim_attr(cudaDevAttrMaxSurface3DHeight);
	p->maxSurface3D[2] = sim_attr(cudaDevAttrMaxSurface3DDepth);
	p->maxSurface1DLayered[0] = sim_attr(cudaDevAttrMaxSurface1DLayeredWidth);
	p->maxSurface1DLayered[1] = sim_attr(cudaDevAttrMaxSurface1DLayeredLayers);
	p->maxSurface2DLayered[0] = sim_attr(cudaDevAttrMaxSurface2DLayeredWidth);
	p->maxSurface2DLayered[1] = sim_attr(cudaDevAttrMaxSurface2DLayeredHeight);
	p->maxSurface2DLayered[2] = sim_attr(cudaDevAttrMaxSurface2DLayeredLayers);
	p->maxSurfaceCubemap = sim_attr(cudaDevAttrMaxSurfaceCubemapWidth);
	p->maxSurfaceCubemapLayered[0] = sim_attr(cudaDevAttrMaxSurfaceCubemapLayeredWidth);
	p->maxSurfaceCubemapLayered[1] = sim_attr(cudaDevAttrMaxSurfaceCubemapLayeredLayers);
	p->surfaceAlignment = (size_t)sim_attr(cudaDevAttrSurfaceAlignment);
	p->concurrentKernels = sim_attr(cudaDevAttrConcurrentKernels);
	p->ECCEnabled = sim_attr(cudaDevAttrEccEnabled);
	p->pciBusID = sim_attr(cudaDevAttrPciBusId);
	p->pciDeviceID = sim_attr(cudaDevAttrPciDeviceId);
	p->pciDomainID = sim_attr(cudaDevAttrPciDomainId);
	p->tccDriver = sim_attr(cudaDevAttrTccDriver);
	p->asyncEngineCount = sim_attr(cudaDevAttrAsyncEngineCount);
	p->unifiedAddressing = sim_attr(cudaDevAttrUnifiedAddressing);
	p->memoryBusWidth = sim_attr(cudaDevAttrGlobalMemoryBusWidth);
	p->l2CacheSize = sim_attr(cudaDevAttrL2CacheSize);
	p->persistingL2CacheMaxSize = sim_attr(cudaDevAttrMaxPersistingL2CacheSize);
	p->maxThreadsPerMultiProcessor = sim_attr(cudaDevAttrMaxThreadsPerMultiProcessor);
	p->streamPrioritiesSupported = sim_attr(cudaDevAttrStreamPrioritiesSupported);
	p->globalL1CacheSupported = sim_attr(cudaDevAttrGlobalL1CacheSupported);
	p->localL1CacheSupported = sim_attr(cudaDevAttrLocalL1CacheSupported);
	p->sharedMemPerMultiprocessor = (size_t)sim_attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
	p->regsPerMultiprocessor = sim_attr(cudaDevAttrMaxRegistersPerMultiprocessor);
	p->managedMemory = sim_attr(cudaDevAttrManagedMemory);
	p->isMultiGpuBoard = sim_attr(cudaDevAttrIsMultiGpuBoard);
	p->multiGpuBoardGroupID = sim_attr(cudaDevAttrMultiGpuBoardGroupID);
	p->hostNativeAtomicSupported = sim_attr(cudaDevAttrHostNativeAtomicSupported);
	p->pageableMemoryAccess = sim_attr(cudaDevAttrPageableMemoryAccess);
	p->concurrentManagedAccess = sim_attr(cudaDevAttrConcurrentManagedAccess);
	p->computePreemptionSupported = sim_attr(cudaDevAttrComputePreemptionSupported);
	p->canUseHostPointerForRegisteredMem = sim_attr(cudaDevAttrCanUseHostPointerForRegisteredMem);
	p->cooperativeLaunch = sim_attr(cudaDevAttrCooperativeLaunch);
	p->sharedMemPerBlockOptin = (size_t)sim_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
	p->pageableMemoryAccessUsesHostPageTables = sim_attr(cudaDevAttrPageableMemoryAccessUsesHostPageTables);
	p->directManagedMemAccessFromHost = sim_attr(cudaDevAttrDirectManagedMemAccessFromHost);
	p->maxBlocksPerMultiProcessor = sim_attr(cudaDevAttrMaxBlocksPerMultiprocessor);
	p->accessPolicyMaxWindowSize = sim_attr(cudaDevAttrMaxAccessPolicyWindowSize);
	p->reservedSharedMemPerBlock = (size_t)sim_attr(cudaDevAttrReservedSharedMemoryPerBlock);
	p->hostRegisterSupported = sim_attr(cudaDevAttrHostRegisterSupported);
	p->sparseCudaArraySupported = sim_attr(cudaDevAttrSparseCudaArraySupported);
	p->hostRegisterReadOnlySupported = sim_attr(cudaDevAttrHostRegisterReadOnlySupported);
	p->timelineSemaphoreInteropSupported = sim_attr(cudaDevAttrTimelineSemaphoreInteropSupported);
	p->memoryPoolsSupported = sim_attr(cudaDevAttrMemoryPoolsSupported);
	p->gpuDirectRDMASupported = sim_attr(cudaDevAttrGPUDirectRDMASupported);
	p->gpuDirectRDMAFlushWritesOptions = (unsigned)sim_attr(cudaDevAttrGPUDirectRDMAFlushWritesOptions);
	p->gpuDirectRDMAWritesOrdering = sim_attr(cudaDevAttrGPUDirectRDMAWritesOrdering);
	p->memoryPoolSupportedHandleTypes = (unsigned)sim_attr(cudaDevAttrMemoryPoolSupportedHandleTypes);
	p->deferredMappingCudaArraySupported = sim_attr(cudaDevAttrDeferredMappingCudaArraySupported);
	p->ipcEventSupported = sim_attr(cudaDevAttrIpcEventSupport);
	p->clusterLaunch = sim_attr(cudaDevAttrClusterLaunch);
	p->unifiedFunctionPointers = 1;
	p->deviceNumaConfig = sim_attr(cudaDevAttrNumaConfig);
	p->deviceNumaId = sim_attr(cudaDevAttrNumaId);
	p->mpsEnabled = sim_attr(cudaDevAttrMpsEnabled);
	p->hostNumaId = sim_attr(cudaDevAttrHostNumaId);
	p->gpuPciDeviceID = (unsigned)sim_attr(cudaDevAttrGpuPciDeviceId);
	p->gpuPciSubsystemID = (unsigned)sim_attr(cudaDevAttrGpuPciSubsystemId);
	p->hostNumaMultinodeIpcSupported = sim_attr(cudaDevAttrHostNumaMultinodeIpcSupported);
}

SIM_EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	SIM_SIMPLE("cudaGetDeviceProperties", cudaGetDeviceProperties_v12000, SIM_DRV(cuDeviceGetAttribute), {
		if (!prop)
			r_ = cudaErrorInvalidValue;
		else if (!sim_attributes_valid_device(device))
			r_ = cudaErrorInvalidDevice;
		else
			sim_attributes_props(prop);
	});
}

SIM_EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
	SIM_SIMPLE("cudaDeviceGetAttribute", cudaDeviceGetAttribute_v5000, SIM_DRV(cuDeviceGetAttribute), {
		if (!value)
			r_ = cudaErrorInvalidValue;
		else if (!sim_attributes_valid_device(device))
			r_ = cudaErrorInvalidDevice;
		else if (sim_attributes_get(attr, value))
			r_ = cudaErrorInvalidValue;
	});
}
