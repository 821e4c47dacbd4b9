/*
 * rel_dlmain.c — rel_dlmain LIB ROUNDS: dlopen(LIB, RTLD_NOW|RTLD_LOCAL),
 * call rel_dl_run(50), dlclose, ROUNDS times (test_rel_procs.sh). Has no CUDA
 * dependency itself, so the plugin's libcudart can be unloaded between rounds;
 * a profiler that kept a pointer into an unloaded cudart would crash here.
 * stdout: "rel_dlmain: R rounds ok"; stderr: a "timing:" line saying in how
 * many rounds cudart was unloaded (informational; the tests normalise it).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: rel_dlmain LIB ROUNDS\n");
		return 2;
	}
	int rounds = atoi(argv[2]), unloaded = 0;
	for (int r = 0; r < rounds; r++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "rel_dlmain: %s\n", dlerror());
			return 2;
		}
		int (*run)(int) = (int (*)(int))dlsym(h, "rel_dl_run");
		int rc = run ? run(50) : 9;
		if (rc) {
			printf("rel_dlmain: round %d failed (%d)\n", r, rc);
			return 3;
		}
		dlclose(h);
		void *c = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
		if (c)
			dlclose(c);
		else
			unloaded++;
	}
	printf("rel_dlmain: %d rounds ok\n", rounds);
	fprintf(stderr, "timing: cudart unloaded after %d of %d rounds\n", unloaded, rounds);
	return 0;
}
