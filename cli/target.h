/*
 * target.h — the process `gpuphase attach` profiles, as /proc shows it
 * (target.c): the objects it maps, its environment, its threads and what
 * they wait in, whether it lives, and a function's address in an object it
 * maps. Read-only: nothing here touches the process.
 *
 * Called by attach.c on the command's only thread. Errors: 0/-errno, or a
 * plain 0 ("no", "not found") where the caller only needs yes or no.
 */
#ifndef GP_CLI_TARGET_H
#define GP_CLI_TARGET_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

/* The objects of interest the process maps: their paths ("" when not
 * mapped) and, for those attach calls into, their load base. */
struct gp_target_maps {
	char cudart[PATH_MAX], cupti[PATH_MAX], libc[PATH_MAX], libdl[PATH_MAX], self_lib[PATH_MAX];
	uintptr_t libc_base, libdl_base, self_base;
};

/* Fill *m from /proc/PID/maps. 0, -ENOENT (no process) or -EACCES (not
 * ours to trace: the kernel shows an empty file). */
int gp_target_maps(pid_t pid, struct gp_target_maps *m);
/* The value of environment variable var in pid (its whole environment
 * read, however long) into value (cap bytes, cut to fit): 1, or 0 when var
 * is not set (or the environment cannot be read). */
int gp_target_env(pid_t pid, const char *var, char *value, size_t cap);
/* Does var's value in pid, a list split as the loader splits LD_PRELOAD
 * (at ':' and ' '), hold an element naming the file `file` (its whole last
 * path component: "libgpuphase.so" matches /opt/lib/libgpuphase.so, not
 * /opt/libgpuphase.so.old)? 1 or 0. */
int gp_target_env_lists(pid_t pid, const char *var, const char *file);
/* Is an attach session running in pid (its abstract socket is bound, by
 * pid itself: a name another process bound does not count)? */
int gp_target_attached(pid_t pid);
/* The process tracing thread tid of pid (its TracerPid), its name into
 * comm (cap bytes; "" when unreadable); 0 when none (or gone). */
pid_t gp_target_tracer(pid_t pid, pid_t tid, char *comm, size_t cap);
/* How many threads pid has (0 when it is gone). */
int gp_target_threads(pid_t pid);
/* The thread to stop: one blocked where programs wait for work, the main
 * thread first; else the main thread. */
pid_t gp_target_pick_thread(pid_t pid);
/* The value of function name in the object at path (a path in the
 * process's maps), read through the process's root (its mount namespace)
 * when we can, else as we see it. 0 or -errno (gp_elfscan_dynsym). */
int gp_target_sym(pid_t pid, const char *path, const char *name, uintptr_t *value);
/* Is pid alive (neither gone nor a zombie)? */
int gp_target_alive(pid_t pid);
/* CPU time (ns) so far of thread tid of pid, which is stopped, plus the
 * calling thread's own. */
uint64_t gp_target_cpu_ns(long pid, long tid);

#endif /* GP_CLI_TARGET_H */
