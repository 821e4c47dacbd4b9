/*
 * lt_local_main.c — loads liblt_local.so (and through it libcudart) with
 * dlopen(RTLD_LOCAL), as Python ctypes does, then runs its workload. The
 * executable itself has no CUDA dependency. Used by test_lib_e2e.c to check
 * that the preload still finds the real cudart functions and traces them.
 * Usage: lt_local_main LIBPATH STEPS
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: lt_local_main LIB STEPS\n");
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "lt_local_main: %s\n", dlerror());
		return 2;
	}
	int (*run)(int) = (int (*)(int))dlsym(h, "lt_local_run");
	if (!run) {
		fprintf(stderr, "lt_local_main: lt_local_run missing\n");
		return 2;
	}
	int rc = run(atoi(argv[2]));
	printf("lt_local: %s\n", rc ? "FAIL" : "OK");
	return rc;
}
