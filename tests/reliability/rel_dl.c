/*
 * rel_dl.c — librel_dl.so, a plugin that uses the CUDA runtime, for the
 * dlclose case of test_rel_procs.sh: rel_dlmain (no CUDA dependency of its
 * own) dlopens it RTLD_LOCAL, calls rel_dl_run, dlcloses it, R times; each
 * time the plugin's libcudart may be unloaded and loaded again elsewhere.
 */
#include <cuda_runtime_api.h>
/* n memsets on a fresh buffer, then a device sync. 0, or which step failed. */
int rel_dl_run(int n);
int rel_dl_run(int n)
{
	void *p;
	if (cudaMalloc(&p, 4096) != cudaSuccess)
		return 1;
	for (int i = 0; i < n; i++)
		if (cudaMemsetAsync(p, i, 64, 0) != cudaSuccess)
			return 2;
	if (cudaDeviceSynchronize() != cudaSuccess)
		return 3;
	cudaFree(p);
	return 0;
}
