/*
 * report.c — `gpuphase report|diff|export ...`: hands over to
 * gpuphase-report, found next to this binary first, then in PATH
 * (gp_locate_component), by exec: on success it never returns. With no trace
 * named (told by the option grammar, never by what exists on disk),
 * `report` reads the newest *.gpht in the current directory.
 *
 * Called by main() (gpuphase.c) on the command's only thread. Errors: one
 * "gpuphase: ..." line and the exit status (2 usage, 126/127 cannot run).
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* gpuphase-report's options that take a value (the next argument, unless
 * written --opt=VALUE); --export takes two. Kept in step with report/main.c
 * and report/stability.c: the trace arguments are told apart from option
 * values by the grammar alone, never by what exists on disk. */
static int gp_report_values(const char *a)
{
	static const char *const one[] = { "--format", "--sort", "--top", "--group-by", "--filter", "--thresholds",
					   "--outlier-factor", "--straggler-pct", "-o", "--output", "--fail-above",
					   "--cv-pct", "--phase", "--min-delta", "--counter-targets", NULL };
	if (strchr(a, '='))
		return 0;
	if (!strcmp(a, "--export"))
		return 2;
	for (int i = 0; one[i]; i++)
		if (!strcmp(a, one[i]))
			return 1;
	return 0;
}

/* The number of trace (non-option) arguments in argv[1..argc). */
static int gp_report_ntraces(int argc, char **argv)
{
	int n = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return n + (argc - i - 1);
		if (argv[i][0] == '-' && argv[i][1])
			i += gp_report_values(argv[i]);
		else
			n++;
	}
	return n;
}

/* The most recently modified *.gpht in the current directory. */
static int gp_report_newest_trace(char *buf, size_t len)
{
	glob_t g;
	if (glob("*.gpht", 0, NULL, &g) != 0)
		return -ENOENT;
	struct timespec best = { 0, 0 };
	int found = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct stat st;
		if (stat(g.gl_pathv[i], &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (!found || st.st_mtim.tv_sec > best.tv_sec ||
		    (st.st_mtim.tv_sec == best.tv_sec && st.st_mtim.tv_nsec > best.tv_nsec)) {
			best = st.st_mtim;
			snprintf(buf, len, "%s", g.gl_pathv[i]);
			found = 1;
		}
	}
	globfree(&g);
	return found ? 0 : -ENOENT;
}

int gp_report_exec(const char *verb, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			gp_help_print(verb);
			return 0;
		}
	}
	char tool[PATH_MAX];
	if (gp_locate_component("gpuphase-report", "gpuphase-report", tool, sizeof tool) != 0) {
		fprintf(stderr, "gpuphase: %s: gpuphase-report not found next to gpuphase or in PATH "
				"(build it with `make`, or install with `make install`)\n", verb);
		return 127;
	}
	/* gpuphase report ARGS              -> gpuphase-report ARGS
	 * gpuphase diff ARGS                -> gpuphase-report diff ARGS
	 * gpuphase export FORMAT OUT ARGS   -> gpuphase-report --export FORMAT OUT ARGS */
	if (strcmp(verb, "export") == 0 && argc < 4) {
		fprintf(stderr, "gpuphase: export: need FORMAT, OUT and at least one TRACE\n%s\n",
			gp_help_usage("export"));
		return 2;
	}
	/* Like `perf report` reading perf.data: `gpuphase report` with no trace
	 * argument (by the option grammar) reads the newest *.gpht in the
	 * current directory. A trace that is named is never replaced by a
	 * guess, even when it does not exist. */
	char newest[PATH_MAX] = "";
	if (strcmp(verb, "report") == 0 && (argc < 2 || strcmp(argv[1], "stability") != 0) &&
	    gp_report_ntraces(argc, argv) == 0) {
		if (gp_report_newest_trace(newest, sizeof newest) != 0) {
			fprintf(stderr, "gpuphase: report: no trace named and no *.gpht in the current directory\n"
					"%s\n", gp_help_usage("report"));
			return 2;
		}
		fprintf(stderr, "gpuphase: report: no trace named: reading the newest, %s\n", newest);
	}
	char **nargv = calloc((size_t)argc + 4, sizeof *nargv);
	if (!nargv) {
		fprintf(stderr, "gpuphase: out of memory\n");
		return 1;
	}
	int k = 0;
	nargv[k++] = tool;
	if (strcmp(verb, "diff") == 0)
		nargv[k++] = (char *)verb;
	else if (strcmp(verb, "export") == 0)
		nargv[k++] = "--export";
	for (int i = 1; i < argc; i++)
		nargv[k++] = argv[i];
	if (newest[0])
		nargv[k++] = newest;
	nargv[k] = NULL;
	fflush(NULL);
	execv(tool, nargv);
	fprintf(stderr, "gpuphase: %s: cannot run %s: %s\n", verb, tool, strerror(errno));
	free(nargv);
	return 126;
}
