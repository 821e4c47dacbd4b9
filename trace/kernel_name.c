/*
 * trace/kernel_name.c — a kernel's full, short and base names and the one glob
 * rule that kernel:GLOB and simcuda's cost-model rules use (kernel_name.h
 * says which name is which and what is safe where).
 *
 * Threads: any. The short and base names are computed on the string given,
 * without allocating. Demangling goes to the process's __cxa_demangle, looked
 * up once it exists (dlsym on the global scope, then libstdc++.so.6 if some
 * library loaded it privately; never loaded here) and kept in an atomic
 * pointer; until one is found every call looks again, so a C++ runtime loaded
 * late is still used.
 *
 * Invariants: the short name is a span of the full name and the base a span
 * of the mangled name, so neither is ever truncated; a name that is not a
 * valid mangling is its own full and short name, byte for byte.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_name.h"

typedef char *gp_kernel_name_cxa_fn(const char *mangled, char *out, size_t *len, int *status);

/* pair: stored release by gp_kernel_name_demangler once found, loaded acquire there */
static gp_kernel_name_cxa_fn *gp_kernel_name_cxa;

/* The process's __cxa_demangle, or NULL when no C++ runtime is loaded. */
static gp_kernel_name_cxa_fn *gp_kernel_name_demangler(void)
{
	gp_kernel_name_cxa_fn *f = __atomic_load_n(&gp_kernel_name_cxa, __ATOMIC_ACQUIRE);
	if (f)
		return f;
	*(void **)&f = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (!f) {
		/* Loaded RTLD_LOCAL by some library (a Python extension): the
		 * handle stays open so the function cannot go away under us. */
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			*(void **)&f = dlsym(h, "__cxa_demangle");
			if (!f)
				dlclose(h);
		}
	}
	if (f)
		__atomic_store_n(&gp_kernel_name_cxa, f, __ATOMIC_RELEASE);
	return f;
}

int gp_kernel_name_demangle(const char *name, char **full)
{
	*full = NULL;
	/* Only "_Z" names: __cxa_demangle also reads bare type codes ("i" -> "int"). */
	if (!name || name[0] != '_' || name[1] != 'Z')
		return -EINVAL;
	gp_kernel_name_cxa_fn *cxa = gp_kernel_name_demangler();
	if (!cxa)
		return -ENOSYS;
	int status = -3;
	char *d = cxa(name, NULL, NULL, &status);
	if (d && status == 0) {
		*full = d;
		return 0;
	}
	free(d);
	return status == -1 ? -ENOMEM : -EINVAL;
}

static int gp_kernel_name_is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Operator spellings after "operator", longest first. */
static const char *const gp_kernel_name_ops[] = {
	"->*", "<<=", ">>=", "<=>", "()", "[]", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++",
	"--",  "+=",  "-=",  "*=",  "/=", "%=", "&=", "|=", "^=", "+",  "-",  "*",  "/",  "%",  "^",  "&",
	"|",   "~",   "!",   "=",   "<",  ">",  ",",
};

/* Length of a token at s[i] that the short-name scan must step over whole
 * because its brackets, parentheses or spaces are part of a name:
 * "(anonymous namespace)" and "operator<op>" (also "operator new[]" and a
 * one-word conversion "operator int"); 0 if there is none. */
static size_t gp_kernel_name_token(const char *s, size_t i)
{
	static const char anon[] = "(anonymous namespace)";
	if (!strncmp(s + i, anon, sizeof anon - 1))
		return sizeof anon - 1;
	if (strncmp(s + i, "operator", 8) || (i > 0 && gp_kernel_name_is_ident(s[i - 1])) ||
	    gp_kernel_name_is_ident(s[i + 8]))
		return 0;
	const char *p = s + i + 8;
	if (*p == ' ') { /* new, delete, a conversion: one word, then maybe [] */
		p++;
		while (gp_kernel_name_is_ident(*p))
			p++;
		if (p[0] == '[' && p[1] == ']')
			p += 2;
		return (size_t)(p - (s + i));
	}
	for (size_t k = 0; k < sizeof gp_kernel_name_ops / sizeof gp_kernel_name_ops[0]; k++) {
		size_t n = strlen(gp_kernel_name_ops[k]);
		if (!strncmp(p, gp_kernel_name_ops[k], n))
			return 8 + n;
	}
	return 8;
}

size_t gp_kernel_name_short(const char *full, size_t *len)
{
	*len = 0;
	if (!full)
		return 0;
	size_t n = strlen(full), cut = n, begin = 0, depth = 0;
	for (size_t i = 0; i < n;) {
		size_t tok = gp_kernel_name_token(full, i);
		if (tok) {
			i += tok;
			continue;
		}
		char c = full[i];
		if (c == '(' && depth == 0 && i > begin) { /* the parameter list */
			cut = i;
			break;
		}
		if (c == '<' || c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0)
			depth--;
		else if (c == ' ' && depth == 0) /* what came before was the return type */
			begin = i + 1;
		i++;
	}
	if (begin >= cut) /* nothing after the last space: keep it all */
		begin = 0;
	*len = cut - begin;
	return begin;
}

int gp_kernel_name_names(const char *name, char **full, char **short_name)
{
	char *f = NULL, *s = NULL;
	int r = gp_kernel_name_demangle(name, &f);
	if (r == 0) {
		size_t len, off = gp_kernel_name_short(f, &len);
		s = strndup(f + off, len);
	} else if (r != -ENOMEM) {
		f = strdup(name);
		s = strdup(name);
	}
	if (!f || !s) {
		free(f);
		free(s);
		*full = *short_name = NULL;
		return -ENOMEM;
	}
	*full = f;
	*short_name = s;
	return 0;
}

size_t gp_kernel_name_mangled_base(const char *s, size_t *len)
{
	*len = s ? strlen(s) : 0;
	if (!s || s[0] != '_' || s[1] != 'Z')
		return 0;
	const char *best = s, *p = s + 2;
	if (*p == 'L') /* internal linkage */
		p++;
	int nested = *p == 'N';
	if (nested) {
		p++;
		while (*p == 'r' || *p == 'V' || *p == 'K') /* cv-qualifiers of a member */
			p++;
	}
	/* <source-name> = <length> <identifier>; a nested name is a run of them,
	 * ended by its template arguments (I), an operator or E. */
	while (*p >= '0' && *p <= '9') {
		size_t n = 0;
		while (*p >= '0' && *p <= '9' && n < ((size_t)-1) / 16)
			n = n * 10 + (size_t)(*p++ - '0');
		if (n == 0 || strnlen(p, n) < n)
			break;
		best = p;
		*len = n;
		p += n;
		if (!nested)
			break;
	}
	return (size_t)(best - s);
}

int gp_kernel_name_match(const char *glob, const char *name)
{
	if (!glob || !name)
		return 0;
	if (fnmatch(glob, name, 0) == 0) /* as recorded; also every plain C name */
		return 1;
	char *full, base[256];
	if (gp_kernel_name_demangle(name, &full) == 0) {
		size_t len, off = gp_kernel_name_short(full, &len);
		full[off + len] = '\0';
		int m = fnmatch(glob, full + off, 0) == 0;
		free(full);
		if (m)
			return 1;
	}
	size_t len, off = gp_kernel_name_mangled_base(name, &len);
	if (len >= sizeof base) /* no identifier is that long: not a match */
		return 0;
	memcpy(base, name + off, len);
	base[len] = '\0';
	return fnmatch(glob, base, 0) == 0;
}
