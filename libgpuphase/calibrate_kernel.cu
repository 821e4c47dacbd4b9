// calibrate_kernel.cu — the empty kernel libgpuphase launches, a few times at
// start-up, to measure what CUPTI's kernel records add to a launch
// (calibrate.c). Built into a fat binary (SASS for the supported
// architectures and PTX) and embedded in libgpuphase.so as bytes: the library
// links no CUDA runtime code of its own. Its name is GP_CALIB_KERNEL
// (trace/gp_format.h): the report leaves its records out.
extern "C" __global__ void gpuphase_calibrate(void) {}
