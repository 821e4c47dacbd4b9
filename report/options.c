/*
 * options.c — gpuphase-report's option table (options.h): one list of the
 * options of every gpuphase-report command line, read by its parsers
 * (main.c, stability.c) and by the `gpuphase` command (cli/report.c), so an
 * option added here is known to both programs.
 *
 * Pure data and pure functions: no state, any thread. Invariants: a name
 * appears once per command line (where); an option that takes values has
 * has_arg required_argument, except --help's optional --help=MODE.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define R GP_OPTIONS_REPORT
#define S GP_OPTIONS_STABILITY

const struct gp_option gp_options[] = {
	/* the printed report */
	{ "format", 0, required_argument, 'f', 1, R },
	{ "sort", 0, required_argument, 's', 1, R },
	{ "top", 0, required_argument, 't', 1, R | S },
	{ "filter", 0, required_argument, 'F', 1, R },
	{ "thresholds", 0, required_argument, 'T', 1, R },
	{ "straggler-pct", 0, required_argument, 'S', 1, R },
	{ "counter-targets", 0, required_argument, 'K', 1, R },
	/* the analyses */
	{ "group-by", 0, required_argument, 'g', 1, R | S },
	{ "categories", 0, required_argument, 'C', 1, R },
	{ "outlier-factor", 0, required_argument, 'O', 1, R },
	{ "whatif", 0, required_argument, 'W', 1, R },
	{ "fail-above", 0, required_argument, 'X', 1, R },
	{ "phase", 0, required_argument, 'P', 1, R | S },
	{ "min-delta", 0, required_argument, 'M', 1, R },
	{ "cv-pct", 0, required_argument, 'c', 1, S },
	/* what is read and written */
	{ "export", 0, required_argument, 'e', 2, R },
	{ "output", 'o', required_argument, 'o', 1, R },
	{ "allow-truncated", 0, no_argument, 'A', 0, R },
	{ "merge", 0, no_argument, 'G', 0, R },
	{ "partial", 0, no_argument, 'R', 0, R },
	/* --help, --help=report|diff|export; stability's takes no MODE */
	{ "help", 'h', optional_argument, 'h', 0, R },
	{ "help", 'h', no_argument, 'h', 0, S },
	{ NULL, 0, 0, 0, 0, 0 }
};

void gp_options_getopt(unsigned where, struct option *lo, char *shortopts)
{
	size_t n = 0, k = 0;
	shortopts[k++] = ':';
	for (const struct gp_option *o = gp_options; o->name && n < GP_OPTIONS_MAX; o++) {
		if (!(o->where & where))
			continue;
		lo[n++] = (struct option){ o->name, o->has_arg, NULL, o->val };
		if (o->short_name) {
			shortopts[k++] = o->short_name;
			if (o->has_arg == required_argument)
				shortopts[k++] = ':';
		}
	}
	lo[n] = (struct option){ NULL, 0, NULL, 0 };
	shortopts[k] = '\0';
}

int gp_options_arity(const char *a)
{
	if (a[0] != '-' || !a[1])
		return -1;
	for (const struct gp_option *o = gp_options; o->name; o++) {
		if (a[1] != '-') { /* -o FILE, -oFILE, -h */
			if (o->short_name != a[1])
				continue;
			if (o->has_arg != required_argument)
				return a[2] ? -1 : 0;
			return a[2] ? o->words - 1 : o->words;
		}
		size_t n = strcspn(a + 2, "=");
		if (strlen(o->name) != n || strncmp(a + 2, o->name, n))
			continue;
		int eq = a[2 + n] == '=';
		if (o->has_arg == no_argument)
			return eq ? -1 : 0;
		if (o->has_arg == optional_argument)
			return 0;
		return eq ? o->words - 1 : o->words;
	}
	return -1;
}

int gp_options_number(const char *s, double min, int min_ok, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !isfinite(v) || v < min || (v == min && !min_ok))
		return -EINVAL;
	*out = v;
	return 0;
}
