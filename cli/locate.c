/*
 * locate.c — finding programs and files for the `gpuphase` command: this
 * binary's own directory, a PATH lookup the way execvp does it, and the
 * components installed next to this binary (gpuphase-report,
 * ../lib/libgpuphase.so) and running one (gpuphase-agent). A leaf: it calls nothing else in cli/.
 *
 * Called by the verbs on the command's only thread. Errors: 0 or -errno.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int gp_locate_self_dir(char *buf, size_t len)
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
static int gp_locate_is_exec(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int gp_locate_which(const char *name, char *buf, size_t len)
{
	if (strchr(name, '/')) {
		if ((size_t)snprintf(buf, len, "%s", name) >= len)
			return -ENAMETOOLONG;
		if (access(name, F_OK) != 0)
			return -ENOENT;
		return gp_locate_is_exec(name) ? 0 : -EACCES;
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
			if (gp_locate_is_exec(buf))
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

int gp_locate_component(const char *rel, const char *path_name, char *buf, size_t len)
{
	char dir[PATH_MAX];
	if (gp_locate_self_dir(dir, sizeof dir) == 0) {
		int n = snprintf(buf, len, "%s/%s", dir, rel);
		if (n > 0 && (size_t)n < len && access(buf, F_OK) == 0)
			return 0;
	}
	if (path_name)
		return gp_locate_which(path_name, buf, len);
	return -ENOENT;
}

int gp_locate_exec(const char *name, int argc, char **argv)
{
	char tool[PATH_MAX];
	if (gp_locate_component(name, name, tool, sizeof tool) != 0) {
		fprintf(stderr, "gpuphase: %s not found next to gpuphase or in PATH\n", name);
		return 127;
	}
	(void)argc;
	argv[0] = tool;
	execv(tool, argv);
	fprintf(stderr, "gpuphase: %s: %s\n", tool, strerror(errno));
	return 126;
}
