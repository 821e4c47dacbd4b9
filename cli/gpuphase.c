/*
 * gpuphase.c — main() of the `gpuphase` command: dispatches the verbs
 * (record, trigger, report, diff, export, help), prints --help and
 * --version, and holds the small helpers the verbs share (finding this
 * binary's directory, PATH lookup, finding the components installed next to
 * it). `report`, `diff` and `export` are executed by gpuphase-report, found
 * next to this binary first, then in PATH.
 *
 * Single-threaded ordinary program: errors are one "gpuphase: ..." line on
 * stderr and a non-zero exit status (2 = usage, 1 = failure, 127 = a
 * program not found).
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

int gp_cli_self_dir(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n < 0)
		return -errno;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	if ((size_t)snprintf(buf, len, "%s", exe[0] ? exe : "/") >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* True when path names a regular file we may execute. */
static int gp_cli_is_exec(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int gp_cli_which(const char *name, char *buf, size_t len)
{
	if (strchr(name, '/')) {
		if ((size_t)snprintf(buf, len, "%s", name) >= len)
			return -ENAMETOOLONG;
		if (access(name, F_OK) != 0)
			return -ENOENT;
		return gp_cli_is_exec(name) ? 0 : -EACCES;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	int seen_noexec = 0;
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t dlen = colon ? (size_t)(colon - path) : strlen(path);
		int n = dlen ? snprintf(buf, len, "%.*s/%s", (int)dlen, path, name)
			     : snprintf(buf, len, "./%s", name);
		if (n > 0 && (size_t)n < len) {
			if (gp_cli_is_exec(buf))
				return 0;
			if (access(buf, F_OK) == 0)
				seen_noexec = 1;
		}
		path += dlen;
		if (*path == ':')
			path++;
	}
	return seen_noexec ? -EACCES : -ENOENT;
}

int gp_cli_find_component(const char *rel, const char *path_name, char *buf, size_t len)
{
	char dir[PATH_MAX];
	if (gp_cli_self_dir(dir, sizeof dir) == 0) {
		int n = snprintf(buf, len, "%s/%s", dir, rel);
		if (n > 0 && (size_t)n < len && access(buf, F_OK) == 0)
			return 0;
	}
	if (path_name)
		return gp_cli_which(path_name, buf, len);
	return -ENOENT;
}

/* True when some argument names an existing regular file. */
static int gp_cli_has_file_arg(int argc, char **argv)
{
	struct stat st;
	for (int i = 1; i < argc; i++)
		if (argv[i][0] != '-' && stat(argv[i], &st) == 0 && S_ISREG(st.st_mode))
			return 1;
	return 0;
}

/* The most recently modified gpuphase-*.gpht in the current directory. */
static int gp_cli_newest_trace(char *buf, size_t len)
{
	glob_t g;
	if (glob("gpuphase-*.gpht", 0, NULL, &g) != 0)
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
	if (gp_cli_find_component("gpuphase-report", "gpuphase-report", tool, sizeof tool) != 0) {
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
	 * argument reads the newest gpuphase-*.gpht in the current directory. */
	char newest[PATH_MAX] = "";
	if (strcmp(verb, "report") == 0 && !gp_cli_has_file_arg(argc, argv)) {
		if (gp_cli_newest_trace(newest, sizeof newest) == 0)
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

int main(int argc, char **argv)
{
	if (argc < 2) {
		gp_help_print(NULL);
		return 2;
	}
	const char *verb = argv[1];
	if (strcmp(verb, "-h") == 0 || strcmp(verb, "--help") == 0) {
		gp_help_print(argc > 2 ? argv[2] : NULL);
		return 0;
	}
	if (strcmp(verb, "help") == 0) {
		if (argc > 2 && (strcmp(argv[2], "-h") == 0 || strcmp(argv[2], "--help") == 0)) {
			gp_help_print("help");
			return 0;
		}
		if (argc > 2 && gp_help_print(argv[2]) != 0) {
			fprintf(stderr, "gpuphase: no help for '%s': not a gpuphase command (see gpuphase --help)\n",
				argv[2]);
			return 2;
		}
		if (argc <= 2)
			gp_help_print(NULL);
		return 0;
	}
	if (strcmp(verb, "-v") == 0 || strcmp(verb, "--version") == 0 || strcmp(verb, "version") == 0) {
		printf("gpuphase %s\n", GP_CLI_VERSION);
		return 0;
	}
	if (strcmp(verb, "record") == 0)
		return gp_record_main(argc - 1, argv + 1);
	if (strcmp(verb, "trigger") == 0)
		return gp_trigger_main(argc - 1, argv + 1);
	if (strcmp(verb, "report") == 0 || strcmp(verb, "diff") == 0 || strcmp(verb, "export") == 0)
		return gp_report_exec(verb, argc - 1, argv + 1);
	if (verb[0] == '-')
		fprintf(stderr, "gpuphase: unknown option '%s' (options go after the command: gpuphase record --help)\n", verb);
	else
		fprintf(stderr, "gpuphase: '%s' is not a gpuphase command; commands: record, trigger, report, diff, export, help\n", verb);
	return 2;
}
