/*
 * control.c — talking to a captured process's control socket
 * (${GPUPHASE_CONTROL_DIR}/<pid>.sock, served by libgpuphase/window.c):
 * the checks before talking (whose directory, whose socket) and one request
 * with its reply. `gpuphase trigger` / `stop` (trigger.c) and the agent
 * (agent_procs.c) go through here.
 *
 * Single-threaded callers; no state. Invariants: nothing is sent to a
 * socket in a directory another user could have put it in, and a reply is
 * read only from the process asked (SO_PEERCRED); every wait is bounded by
 * the caller's timeout.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* The uid that owns process pid (from /proc/PID), or (uid_t)-1. */
static uid_t gp_control_target_uid(long pid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%ld", pid);
	return stat(path, &st) == 0 ? st.st_uid : (uid_t)-1;
}

/* May we talk to a socket there? The control directory and the socket must
 * belong to us (root: to us or to the target's owner), the directory must
 * be a real directory (not a symlink) that nobody else can write to (the
 * library makes it 0700), and the socket a socket: otherwise someone else
 * could have put a socket of their own there to answer in the target's
 * name. 0, or -errno with the reason in why. */
int gp_control_check_place(const char *dir, const char *sock, long pid, char *why, size_t n)
{
	uid_t me = geteuid(), target = gp_control_target_uid(pid);
	struct stat st;
	if (lstat(dir, &st) != 0)
		return -errno;
	if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
		snprintf(why, n, "%s is not a directory (a symlink or another file): not talking to a socket in it", dir);
		return -EPERM;
	}
	if (st.st_uid != me && !(me == 0 && st.st_uid == target)) {
		snprintf(why, n, "%s belongs to uid %u, not to you (uid %u): not talking to a socket in it", dir,
			 (unsigned)st.st_uid, (unsigned)me);
		return -EPERM;
	}
	if (st.st_mode & 022) {
		snprintf(why, n, "%s is writable by others (mode %03o): not talking to a socket in it", dir,
			 (unsigned)(st.st_mode & 0777));
		return -EPERM;
	}
	if (lstat(sock, &st) != 0)
		return -errno;
	if (!S_ISSOCK(st.st_mode) || (st.st_uid != me && !(me == 0 && st.st_uid == target))) {
		snprintf(why, n, "%s is not a socket of yours: not talking to it", sock);
		return -EPERM;
	}
	return 0;
}

/* The steps of gp_control_talk the caller tells apart, compared by address
 * (a strcmp against a literal here is a -Wstring-compare false positive of
 * gcc 12 for aarch64 once gp_control_talk is inlined). */
const char gp_control_stage_connect[] = "connect", gp_control_stage_peer_check[] = "peer check";

/* Send req on the socket, read one reply line into reply (whole: every
 * line until the peer closes, the last newline kept). The peer must be
 * process pid itself, run by the owner checked above (SO_PEERCRED). Returns
 * 0, or -errno (with *stage naming the step that failed). */
int gp_control_talk(const char *sock, long pid, const char *req, int timeout_ms, int whole, char *reply, size_t len,
		    const char **stage)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlen(sock) >= sizeof sa.sun_path) {
		*stage = "socket path too long";
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*stage = "socket";
		return -errno;
	}
	int rc = 0;
	*stage = gp_control_stage_connect;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		rc = -errno;
		goto out;
	}
	*stage = "peer";
	struct ucred cred;
	socklen_t cl = sizeof cred;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0) {
		rc = -errno;
		goto out;
	}
	if ((long)cred.pid != pid || (cred.uid != geteuid() && geteuid() != 0)) {
		*stage = gp_control_stage_peer_check;
		rc = -EPERM;
		goto out;
	}
	*stage = "send";
	size_t n = strlen(req), off = 0;
	while (off < n) {
		ssize_t w = send(fd, req + off, n - off, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		off += (size_t)w;
	}
	*stage = "reply";
	size_t got = 0;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got + 1 < len) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left = timeout_ms - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0) {
			rc = -ETIMEDOUT;
			goto out;
		}
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int pr = poll(&p, 1, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			rc = pr == 0 ? -ETIMEDOUT : -errno;
			goto out;
		}
		ssize_t r = recv(fd, reply + got, len - 1 - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		if (r == 0)
			break;
		got += (size_t)r;
		if (!whole && memchr(reply, '\n', got))
			break;
	}
	reply[got] = '\0';
	char *nl = whole ? NULL : strchr(reply, '\n');
	if (nl)
		*nl = '\0';
	if (got == 0)
		rc = -ECONNRESET;
out:
	close(fd);
	return rc;
}
