/*
 * exitpath.c — _exit and _Exit, interposed: a process that leaves through
 * them (Python's os._exit, multiprocessing's fork workers, a program's
 * own fast exit) gets its trace finished as exit() would finish it, then
 * the real function ends the process with the same status.
 *
 * Called on whichever program thread calls _exit/_Exit, also from a signal
 * handler (async-signal-safe callers): the finish is lib.c's exit path
 * (gp_lib_exit_finish), bounded as for exit() from a handler, and it does
 * nothing in a vfork child, in a process whose library is idle, inert or
 * disabled, or on top of a finish this thread is already in. glibc's own
 * exit() reaches its _exit through an internal call, never this one, so an
 * exit() finishes once, in its atexit handler. Interposition needs the
 * library ahead of libc in the global scope (LD_PRELOAD); dlopen'ed (by
 * `gpuphase attach`, or by the driver for CUDA_INJECTION64_PATH alone) it
 * comes after libc, and the program's _exit stays libc's.
 *
 * Invariants: the real functions are looked up in this file's constructor,
 * never at exit (dlsym may take the loader's lock or allocate, which the
 * interrupted frame may hold); without one the exit_group system call ends
 * the process, as glibc's _exit does. Neither function ever returns, and
 * neither changes the status, stdout or stderr.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gp_lib.h"

typedef void (*gp_exitpath_fn)(int);
static gp_exitpath_fn gp_exitpath_real_exit, gp_exitpath_real_Exit;

/* RTLD_NEXT: the definition after ours (libc's, or a sanitizer runtime
 * preloaded after us); never one in this object (that would recurse). */
static gp_exitpath_fn gp_exitpath_lookup(const char *name)
{
	Dl_info self, other;
	void *p = dlsym(RTLD_NEXT, name);
	if (!p)
		(void)dlerror(); /* no error string of ours left for the program */
	if (p && dladdr(p, &other) && dladdr((void *)gp_exitpath_lookup, &self) && other.dli_fbase == self.dli_fbase)
		p = NULL;
	return (gp_exitpath_fn)p;
}

__attribute__((constructor)) static void gp_exitpath_ctor(void)
{
	gp_exitpath_real_exit = gp_exitpath_lookup("_exit");
	gp_exitpath_real_Exit = gp_exitpath_lookup("_Exit");
}

static _Noreturn void gp_exitpath_leave(gp_exitpath_fn real, int status)
{
	gp_lib_exit_finish();
	if (real)
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

GP_EXPORT _Noreturn void _exit(int status)
{
	gp_exitpath_leave(gp_exitpath_real_exit, status);
}

GP_EXPORT _Noreturn void _Exit(int status)
{
	gp_exitpath_leave(gp_exitpath_real_Exit ? gp_exitpath_real_Exit : gp_exitpath_real_exit, status);
}
