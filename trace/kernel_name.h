/*
 * trace/kernel_name.h — the names of a kernel, one rule for the whole project:
 * the capture side (GPUPHASE_ITER_MARKER=kernel:GLOB), the report (operator
 * names, CUDA graphs) and simcuda (cost-model rules, host bodies).
 *
 * From the name a driver records (mangled "_ZN2ns1kIiEEvPfi" or plain C
 * "layer_add"):
 *   full   the demangled name, "void ns::k<int>(float*, int)", or the name as
 *          recorded when it is not a valid mangling;
 *   short  what the operator table shows: full without return type and
 *          parameter list, "ns::k<int>" (namespaces and template arguments
 *          kept); a name that is not mangled is its own short name;
 *   base   the bare function identifier taken from the mangling, "k": the
 *          form older globs and simcuda's host bodies (simcuda_kernel_<base>)
 *          use.
 * kernel:GLOB matches the short name; for compatibility it also matches the
 * name as recorded and the base (gp_kernel_name_match).
 *
 * What is safe where: gp_kernel_name_short and gp_kernel_name_mangled_base
 * are pure (no allocation, no lock, any thread, async-signal-safe): they
 * return a span of the string they are given. gp_kernel_name_demangle,
 * gp_kernel_name_names and gp_kernel_name_match call the C++ runtime's
 * __cxa_demangle, which allocates with malloc: call them from ordinary thread
 * context (not a signal handler, not under a lock the allocator may need) and
 * cache the result; libgpuphase does it once per kernel function.
 *
 * The demangler is the process's own: found with dlsym, never loaded, so the
 * capture library adds no DT_NEEDED on a C++ runtime. A program that must
 * always demangle (the report, tests) links $(GP_DEMANGLE_LIBS)
 * (trace/module.mk); without one, names stay as recorded (-ENOSYS).
 */
#ifndef GP_KERNEL_NAME_H
#define GP_KERNEL_NAME_H

#include <stddef.h>

/* The full demangled name of a mangled name, in *full (malloc'd, the caller
 * frees). 0 on success; otherwise *full = NULL and -EINVAL (NULL, not a
 * mangled name or not a valid mangling), -ENOSYS (no C++ runtime in the
 * process) or -ENOMEM. */
int gp_kernel_name_demangle(const char *name, char **full);

/* The short name inside a full (demangled) name: returns its offset in full
 * and sets *len. The return type and the parameter list are dropped, so are
 * function qualifiers after it; "(anonymous namespace)", operator names
 * (operator(), operator<<, ...), lambdas ({lambda(int)#1}) and template
 * arguments holding parentheses or function pointers stay whole. NULL or ""
 * gives offset 0, length 0. Pure, any thread. */
size_t gp_kernel_name_short(const char *full, size_t *len);

/* Both names of name, malloc'd (the caller frees both): *full as for
 * gp_kernel_name_demangle, or a copy of name when it does not demangle, and
 * *short_name the short name of that (a copy of name when it does not
 * demangle). 0 or -ENOMEM (then both are NULL). name must not be NULL. */
int gp_kernel_name_names(const char *name, char **full, char **short_name);

/* The bare function identifier of a mangled name, read from the mangling
 * itself ("_ZN2ns1kIiEEvT_" -> "k", "_Z6aten_mmPfi" -> "aten_mm"): the last
 * component of a nested name, template arguments dropped. Returns its offset
 * in mangled and sets *len; a name that is not mangled (or NULL) is its own
 * base. Pure, any thread; needs no C++ runtime. */
size_t gp_kernel_name_mangled_base(const char *mangled, size_t *len);

/* Whether the shell glob (fnmatch(3), no flags) matches the kernel name as
 * recorded: 1 when it matches the short name, the name as recorded or the
 * base, else 0 (also for NULL). Demangles: see "What is safe where". */
int gp_kernel_name_match(const char *glob, const char *name);

#endif
