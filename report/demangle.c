/*
 * demangle.c — kernel-name shortening (demangle.h). The one place in the
 * report that turns a mangled kernel name into what is printed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

/* libstdc++ (linked by the report): C++ name demangling. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/* Short form of a demangled name: drop the argument list and the return type
 * ("void ns::k<int>(float*, int)" -> "ns::k<int>"). */
static char *gp_demangle_shorten(const char *full)
{
	size_t n = strlen(full), cut = n;
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		if (full[i] == '<')
			depth++;
		else if (full[i] == '>' && depth > 0)
			depth--;
		else if (full[i] == '(' && depth == 0 && i > 0) {
			cut = i;
			break;
		}
	}
	size_t begin = 0;
	depth = 0;
	for (size_t i = 0; i < cut; i++) {
		if (full[i] == '<')
			depth++;
		else if (full[i] == '>' && depth > 0)
			depth--;
		else if (full[i] == ' ' && depth == 0)
			begin = i + 1;
	}
	return strndup(full + begin, cut - begin);
}

int gp_demangle_names(const char *text, size_t len, char **longname, char **shortname)
{
	int status = -1;
	char *d = NULL;
	if (len > 2 && text[0] == '_' && text[1] == 'Z')
		d = __cxa_demangle(text, NULL, NULL, &status);
	if (d && status == 0) {
		*longname = d;
		*shortname = gp_demangle_shorten(d);
	} else {
		free(d);
		*longname = strdup(text);
		*shortname = strdup(text);
	}
	return *longname && *shortname ? 0 : -ENOMEM;
}

char *gp_demangle_base(const char *mangled)
{
	int st = -1;
	char *d = mangled && !strncmp(mangled, "_Z", 2) ? __cxa_demangle(mangled, NULL, NULL, &st) : NULL;
	if (!d || st != 0) {
		free(d);
		return strdup(mangled ? mangled : "(unnamed kernel)");
	}
	char *p = strchr(d, '(');
	if (p)
		*p = 0;
	p = strchr(d, '<');
	if (p)
		*p = 0;
	char *last = d;
	for (char *q = d; (q = strstr(q, "::")); q += 2)
		last = q + 2;
	if (last != d && *last)
		memmove(d, last, strlen(last) + 1);
	return d;
}
