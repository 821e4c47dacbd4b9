/*
 * demangle.h — the report's kernel-name shortening, in one place: how a
 * (possibly mangled) kernel name becomes the names the report prints. Two
 * forms exist today and both are kept exactly:
 *
 *   gp_demangle_names: the operator table's names. The long name is the
 *     demangled full signature ("void ns::k<int>(float*, int)"); the short
 *     name drops the argument list and the return type ("ns::k<int>").
 *     A name that is not mangled ("_Z" and more) or does not demangle is
 *     its own long and short name.
 *   gp_demangle_base: the CUDA-graphs section's node names: the last name
 *     component without templates or arguments ("k"); a name that is not
 *     mangled or does not demangle stays as it is.
 *
 * Pure (libstdc++'s __cxa_demangle); any thread. Results are malloc'd.
 */
#ifndef GP_REPORT_DEMANGLE_H
#define GP_REPORT_DEMANGLE_H

#include <stddef.h>

/* *longname and *shortname of text[0..len) (NUL-terminated at len).
 * Returns 0, or -ENOMEM (either may then be NULL; the caller frees both). */
int gp_demangle_names(const char *text, size_t len, char **longname, char **shortname);
/* The base name of mangled (NULL is "(unnamed kernel)"), or NULL on ENOMEM. */
char *gp_demangle_base(const char *mangled);

#endif
