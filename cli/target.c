/*
 * target.c — what `gpuphase attach` reads of the process it profiles, from
 * /proc, before and around the stop (target.h): the objects it maps, its
 * environment, whether a session already runs in it, its threads and the
 * one to stop, whether it lives, its stopped thread's CPU time, and the
 * address of a function in an object it maps (through elfscan.c).
 *
 * Called by attach.c on the command's only thread. Invariants: read-only —
 * nothing here writes to or signals the process; a process that is gone or
 * not ours reads as "no" (or -errno from gp_target_maps), never a crash.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "target.h"

static int gp_target_base_name(const char *path, const char *prefix)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return strncmp(b, prefix, strlen(prefix)) == 0;
}

/* Read the start of /proc/PID/<name> into buf (cap bytes, NUL-terminated):
 * the bytes read, 0 when there is nothing to read (gone, not ours). */
static ssize_t gp_target_read(pid_t pid, const char *name, char *buf, size_t cap)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%ld/%s", (long)pid, name);
	buf[0] = 0;
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return n;
}

/* Fill *m from /proc/PID/maps: the lowest mapping (load base) of each
 * object of interest. Returns 0 or -errno. */
int gp_target_maps(pid_t pid, struct gp_target_maps *m)
{
	char p[64], line[PATH_MAX + 128];
	snprintf(p, sizeof p, "/proc/%ld/maps", (long)pid);
	FILE *f = fopen(p, "re");
	if (!f)
		return -errno;
	memset(m, 0, sizeof *m);
	int any = 0;
	while (fgets(line, sizeof line, f)) {
		any = 1;
		unsigned long lo, off;
		int pos = 0;
		if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %n", &lo, &off, &pos) < 2 || !pos)
			continue;
		char *path = line + pos;
		path[strcspn(path, "\n")] = 0;
		if (path[0] != '/')
			continue;
		struct {
			const char *prefix;
			char *dst;
			uintptr_t *base;
		} want[] = {{"libcudart.so", m->cudart, NULL},	  {"libcupti.so", m->cupti, NULL},
			    {"libc.so.6", m->libc, &m->libc_base},	  {"libdl.so.2", m->libdl, &m->libdl_base},
			    {"libgpuphase.so", m->self_lib, &m->self_base}};
		for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
			if (!gp_target_base_name(path, want[i].prefix) || want[i].dst[0])
				continue;
			snprintf(want[i].dst, PATH_MAX, "%s", path);
			if (want[i].base)
				*want[i].base = lo - off; /* first mapping: offset 0, or the image start */
		}
	}
	fclose(f);
	/* a process we may not trace reads as an empty file (kernel check on read) */
	return any ? 0 : -EACCES;
}

/* The whole of /proc/PID/environ (malloc'd, NUL-terminated, entries
 * NUL-separated), its length in *len; NULL when unreadable or empty. */
static char *gp_target_environ(pid_t pid, size_t *len)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%ld/environ", (long)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (ssize_t r = 1; buf && r > 0;) {
		if (cap - n < 2) {
			char *bigger = realloc(buf, cap * 2);
			if (!bigger) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			r = 1;
		else if (r > 0)
			n += (size_t)r;
	}
	close(fd);
	if (buf && n == 0) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = 0;
	*len = n;
	return buf;
}

/* The value of var in env (n bytes of NUL-separated entries), or NULL. */
static char *gp_target_env_find(char *env, size_t n, const char *var)
{
	size_t vl = strlen(var);
	for (char *e = env; e && e < env + n; e += strlen(e) + 1)
		if (!strncmp(e, var, vl) && e[vl] == '=')
			return e + vl + 1;
	return NULL;
}

int gp_target_env(pid_t pid, const char *var, char *value, size_t cap)
{
	size_t n = 0;
	char *env = gp_target_environ(pid, &n);
	const char *v = gp_target_env_find(env, n, var);
	if (v)
		snprintf(value, cap, "%s", v);
	free(env);
	return v != NULL;
}

int gp_target_env_lists(pid_t pid, const char *var, const char *file)
{
	size_t n = 0;
	char *env = gp_target_environ(pid, &n);
	char *v = gp_target_env_find(env, n, var), *save = NULL;
	int found = 0;
	/* the loader splits LD_PRELOAD at ':' and ' ' */
	for (char *el = v ? strtok_r(v, ": ", &save) : NULL; el && !found; el = strtok_r(NULL, ": ", &save)) {
		const char *base = strrchr(el, '/');
		found = !strcmp(base ? base + 1 : el, file);
	}
	free(env);
	return found;
}

/* Does pid hold the socket of inode ino among its descriptors? */
static int gp_target_holds_socket(pid_t pid, unsigned long ino)
{
	char d[64], p[64 + sizeof ((struct dirent *)0)->d_name], link[64], want[48];
	snprintf(d, sizeof d, "/proc/%ld/fd", (long)pid);
	snprintf(want, sizeof want, "socket:[%lu]", ino);
	DIR *dir = opendir(d);
	if (!dir)
		return 0;
	int found = 0;
	for (struct dirent *e; !found && (e = readdir(dir));) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s", d, e->d_name);
		ssize_t n = readlink(p, link, sizeof link - 1);
		if (n > 0) {
			link[n] = 0;
			found = !strcmp(link, want);
		}
	}
	closedir(dir);
	return found;
}

/* Is an attach session running in pid? Its abstract socket is bound (seen
 * in the target's own network namespace) AND held by pid itself: any user
 * may bind an abstract name, so a name bound by another process (to make
 * attach refuse) does not count. */
int gp_target_attached(pid_t pid)
{
	char want[64], line[512], p[64];
	snprintf(want, sizeof want, "@gpuphase-attach.%ld\n", (long)pid);
	snprintf(p, sizeof p, "/proc/%ld/net/unix", (long)pid);
	FILE *f = fopen(p, "re");
	if (!f)
		f = fopen("/proc/net/unix", "re");
	if (!f)
		return 0;
	int found = 0;
	while (!found && fgets(line, sizeof line, f)) {
		size_t n = strlen(line), w = strlen(want);
		unsigned long ino;
		/* Num RefCount Protocol Flags Type St Inode Path */
		if (n >= w && !strcmp(line + n - w, want) &&
		    sscanf(line, "%*s %*s %*s %*s %*s %*s %lu", &ino) == 1)
			found = gp_target_holds_socket(pid, ino);
	}
	fclose(f);
	return found;
}

pid_t gp_target_tracer(pid_t pid, pid_t tid, char *comm, size_t cap)
{
	char p[96], line[256];
	long tracer = 0;
	snprintf(p, sizeof p, "/proc/%ld/task/%ld/status", (long)pid, (long)tid);
	FILE *f = fopen(p, "re");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "TracerPid: %ld", &tracer) == 1)
			break;
	if (f)
		fclose(f);
	comm[0] = 0;
	if (tracer > 0) {
		char c[64];
		snprintf(p, sizeof p, "/proc/%ld/comm", tracer);
		FILE *cf = fopen(p, "re");
		if (cf && fgets(c, sizeof c, cf)) {
			c[strcspn(c, "\n")] = 0;
			snprintf(comm, cap, "%s", c);
		}
		if (cf)
			fclose(cf);
	}
	return (pid_t)(tracer > 0 ? tracer : 0);
}

int gp_target_threads(pid_t pid)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%ld/task", (long)pid);
	DIR *d = opendir(p);
	if (!d)
		return 0;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The thread to stop: one blocked in a call where programs wait for work
 * (it holds no lock of the C library or the loader), the main thread first;
 * else the main thread wherever it is. */
pid_t gp_target_pick_thread(pid_t pid)
{
	/* the numbers of this architecture (aarch64 has no poll, select,
	 * pause or epoll_wait: its C library uses the p- variants) */
	static const long waits[] = {
		SYS_read,     SYS_recvfrom,  SYS_recvmsg,	  SYS_accept,	  SYS_accept4, SYS_wait4,
		SYS_nanosleep, SYS_clock_nanosleep, SYS_pselect6, SYS_ppoll, SYS_epoll_pwait,
#ifdef SYS_poll
		SYS_poll,
#endif
#ifdef SYS_select
		SYS_select,
#endif
#ifdef SYS_epoll_wait
		SYS_epoll_wait,
#endif
#ifdef SYS_pause
		SYS_pause,
#endif
	};
	char p[96], d[64];
	snprintf(d, sizeof d, "/proc/%ld/task", (long)pid);
	DIR *dir = opendir(d);
	if (!dir)
		return pid;
	pid_t best = 0;
	for (struct dirent *e; (e = readdir(dir));) {
		if (e->d_name[0] == '.')
			continue;
		pid_t tid = (pid_t)atol(e->d_name);
		snprintf(p, sizeof p, "/proc/%ld/task/%ld/syscall", (long)pid, (long)tid);
		FILE *f = fopen(p, "re");
		long nr = -1;
		if (f) {
			if (fscanf(f, "%ld", &nr) != 1)
				nr = -1;
			fclose(f);
		}
		for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++)
			if (nr == waits[i] && (!best || tid == pid))
				best = tid;
	}
	closedir(dir);
	return best ? best : pid;
}

/* The value of function name in the object at path as the target sees it
 * (through its root: its mount namespace), else as we see it. */
int gp_target_sym(pid_t pid, const char *path, const char *name, uintptr_t *value)
{
	char root[PATH_MAX + 64];
	uint64_t v = 0;
	snprintf(root, sizeof root, "/proc/%ld/root%s", (long)pid, path);
	int rc = gp_elfscan_dynsym(access(root, R_OK) == 0 ? root : path, name, &v);
	*value = (uintptr_t)v;
	return rc;
}

int gp_target_alive(pid_t pid)
{
	char buf[512];
	if (gp_target_read(pid, "stat", buf, sizeof buf) <= 0)
		return 0;
	const char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

/* CPU time so far of thread tid of pid, which is stopped (the first field
 * of its schedstat: exact for a thread that is not running), plus this
 * thread's own. */
uint64_t gp_target_cpu_ns(long pid, long tid)
{
	char p[96];
	unsigned long long run = 0;
	snprintf(p, sizeof p, "/proc/%ld/task/%ld/schedstat", pid, tid);
	FILE *f = fopen(p, "re");
	if (f) {
		if (fscanf(f, "%llu", &run) != 1)
			run = 0;
		fclose(f);
	}
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return run + (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

