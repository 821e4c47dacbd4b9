/*
 * lt_local_main.c — loads liblt_local.so (and through it libcudart) with
 * dlopen(RTLD_LOCAL), as Python ctypes does, then runs its workload. The
 * executable itself has no CUDA dependency. Used by test_lib_e2e.c to check
 * that the preload still finds the real cudart functions and traces them.
 * Usage: lt_local_main LIBPATH STEPS | lt_local_main --no-cudart 0 |
 *        lt_local_main --errno GPLIB|-
 * --errno: prints errno as main found it (a .preinit_array function set it to
 * 4242 before any library constructor ran) and, given the path of
 * libgpuphase.so, errno after calling its InitializeInjection with errno 4243.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs before every shared object's constructor (glibc: the executable's
 * preinit array first), so a constructor that touches errno shows in main. */
static int lt_errno_at_main;
static void lt_errno_preinit(void)
{
	errno = 4242;
}
__attribute__((section(".preinit_array"), used)) static void (*const lt_preinit)(void) = lt_errno_preinit;

int main(int argc, char **argv)
{
	lt_errno_at_main = errno; /* first thing */
	if (argc != 3) {
		fprintf(stderr, "usage: lt_local_main LIB STEPS\n");
		return 2;
	}
	if (!strcmp(argv[1], "--errno")) {
		printf("lt_local: errno at main=%d\n", lt_errno_at_main);
		if (strcmp(argv[2], "-")) {
			void *h = dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL);
			int (*inj)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
			if (!inj) {
				fprintf(stderr, "lt_local_main: no InitializeInjection in %s\n", argv[2]);
				return 2;
			}
			errno = 4243;
			int rc = inj();
			int e = errno;
			printf("lt_local: InitializeInjection rc=%d errno=%d\n", rc, e);
		}
		return 0;
	}
	if (!strcmp(argv[1], "--no-cudart")) {
		/* No cudart in the process: a hooked function must answer with the
		 * error the real call would give, not crash. */
		int (*sync)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cudaDeviceSynchronize");
		(void)dlerror(); /* no error of ours pending from here on */
		int rc = sync ? sync() : -1;
		/* The library's own failed lookups must leave no dlerror() behind. */
		const char *e = dlerror();
		printf("lt_local: %s rc=%d dlerror=%s\n", sync ? "hooked" : "absent", rc, e ? e : "none");
		return 0;
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
