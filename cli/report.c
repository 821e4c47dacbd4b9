/*
 * report.c — `gpuphase report|diff|export ...`: hands over to
 * gpuphase-report, found next to this binary first, then in PATH
 * (gp_locate_component), by exec: on success it never returns. With no trace
 * named (told by the option grammar, never by what exists on disk),
 * `report` reads the newest *.gpht in the current directory. Also the
 * report that `record --report` and `attach` print after a capture
 * (gp_report_run, a child process). The option grammar is gpuphase-report's
 * own table (report/options.c, linked in), which attach also reads.
 *
 * Called by main() (gpuphase.c) and the verbs on the command's only thread.
 * Errors: one "gpuphase: ..." line and the exit status (2 usage, 126/127
 * cannot run).
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "report/options.h"

/* How many values follow option a (0 for one gpuphase-report does not know:
 * it says so itself). */
static int gp_report_values(const char *a)
{
	int n = gp_options_arity(a);
	return n < 0 ? 0 : n;
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

int gp_report_run(const char *who, char *const *opts, size_t nopts, char *const *traces, size_t ntraces)
{
	char tool[PATH_MAX];
	if (gp_locate_component("gpuphase-report", "gpuphase-report", tool, sizeof tool) != 0) {
		fprintf(stderr, "gpuphase: %s: gpuphase-report not found next to gpuphase or in PATH\n", who);
		return -1;
	}
	char **argv = calloc(nopts + ntraces + 2, sizeof *argv);
	if (!argv) {
		fprintf(stderr, "gpuphase: %s: out of memory\n", who);
		return -1;
	}
	size_t k = 0;
	argv[k++] = tool;
	for (size_t i = 0; i < nopts; i++)
		argv[k++] = opts[i];
	for (size_t i = 0; i < ntraces; i++)
		argv[k++] = traces[i];
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		execv(tool, argv);
		fprintf(stderr, "gpuphase: %s: cannot run %s: %s\n", who, tool, strerror(errno));
		_exit(126);
	}
	free(argv);
	if (pid < 0) {
		fprintf(stderr, "gpuphase: %s: cannot run %s: %s\n", who, tool, strerror(errno));
		return -1;
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}
