/*
 * trigger.c — `gpuphase trigger PID [--iters M | --seconds S | --status]`:
 * tells a process started with `gpuphase record --window trigger` (capture
 * idle) to capture the next M iterations or S seconds, or asks any captured
 * process its status; `gpuphase stop PID`: ends any capture for good and
 * completes the trace (footer, flush) while the program runs on. `record`
 * calls gp_trigger_stop_quietly on Ctrl-C/SIGTERM before passing the signal.
 *
 * Protocol (agreed with libgpuphase/): a UNIX stream socket at
 * ${GPUPHASE_CONTROL_DIR:-/tmp/gpuphase-<uid>}/<pid>.sock; we send ONE line
 * ("capture iters=M" | "capture seconds=S" | "status" | "stop") and read ONE line
 * ("ok <text>" | "error <text>"); every capture serves "status" and "stop",
 * only GPUPHASE_WINDOW=trigger the captures. The control directory is taken from
 * --control-dir, else from the target's own environment (/proc/PID/environ,
 * readable for our own processes), else from ours, else the default.
 * Before talking: the directory must be ours (root: or the target's owner),
 * not a symlink, not writable by others, the socket a socket of ours, and
 * the peer (SO_PEERCRED) the target process itself (those checks and the
 * exchange are control.c's); its reply is printed with every non-printable
 * byte escaped (\xHH).
 *
 * Called by main() on the command's only thread. Exit status: 0 ok, 1 the
 * target refused or is not reachable, 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* Copy the value of var from /proc/pid/environ into buf. Returns 1 if found,
 * 0 if not, -errno if the environment cannot be read. */
static int gp_trigger_target_env(long pid, const char *var, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/environ", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	static char env[1 << 20];
	size_t n = 0;
	ssize_t r;
	while (n < sizeof env - 1 && (r = read(fd, env + n, sizeof env - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	env[n] = '\0';
	size_t vlen = strlen(var);
	for (size_t i = 0; i < n;) {
		const char *e = env + i;
		size_t elen = strnlen(e, n - i);
		if (elen > vlen && strncmp(e, var, vlen) == 0 && e[vlen] == '=') {
			snprintf(buf, len, "%s", e + vlen + 1);
			return 1;
		}
		i += elen + 1;
	}
	return 0;
}

/* True when libgpuphase.so is mapped in pid (best effort; 0 if unknown). */
static int gp_trigger_target_has_lib(long pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	char line[1024];
	int found = 0;
	while (!found && fgets(line, sizeof line, f))
		found = strstr(line, "libgpuphase") != NULL;
	fclose(f);
	return found;
}

/* Explain why pid has no usable control socket, as precisely as we can. */
static void gp_trigger_explain(const char *verb, long pid, const char *sock, int err)
{
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
		fprintf(stderr, "gpuphase: %s: no process %ld\n", verb, pid);
		return;
	}
	if (gp_trigger_target_has_lib(pid)) {
		fprintf(stderr, "gpuphase: %s: %ld runs under gpuphase but serves no control socket at %s (%s): "
				"its capture has not started (no CUDA call yet), the capture is an attach "
				"session, or its control directory is another (--control-dir)\n",
			verb, pid, sock, strerror(err));
		return;
	}
	fprintf(stderr, "gpuphase: %s: %ld is not running under gpuphase: %s: %s\n", verb, pid, sock, strerror(err));
}

/* Print s on f with every byte that is not printable ASCII as \xHH (a
 * reply is the peer's text: no terminal escapes reach the terminal). */
static void gp_trigger_print_escaped(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '\\')
			fputc(*p, f);
		else
			fprintf(f, "\\x%02x", *p);
	}
}

/* The control directory of pid (ctl, else the target's environment, else
 * ours, else the default) into dir (PATH_MAX bytes) and its socket into
 * sock. */
static void gp_trigger_place(long pid, const char *ctl, char *dir, char *sock, size_t socklen)
{
	if (ctl)
		snprintf(dir, PATH_MAX, "%s", ctl);
	else if (gp_trigger_target_env(pid, "GPUPHASE_CONTROL_DIR", dir, PATH_MAX) == 1 && dir[0])
		;
	else if (getenv("GPUPHASE_CONTROL_DIR") && *getenv("GPUPHASE_CONTROL_DIR"))
		snprintf(dir, PATH_MAX, "%s", getenv("GPUPHASE_CONTROL_DIR"));
	else
		snprintf(dir, PATH_MAX, "/tmp/gpuphase-%u", (unsigned)getuid());
	snprintf(sock, socklen, "%s/%ld.sock", dir, pid);
}

int gp_trigger_stop_quietly(long pid, const char *ctl, int timeout_ms, char *reply, size_t len)
{
	char dir[PATH_MAX], sock[PATH_MAX + 32], why[PATH_MAX + 128];
	const char *stage = "";
	gp_trigger_place(pid, ctl, dir, sock, sizeof sock);
	int rc = gp_control_check_place(dir, sock, pid, why, sizeof why);
	if (rc == -EPERM)
		snprintf(reply, len, "%s", why);
	if (rc == 0)
		rc = gp_control_talk(sock, pid, "stop\n", timeout_ms, 0, reply, len, &stage);
	if (rc == 0 && strncmp(reply, "ok ", 3) != 0)
		rc = -EPROTO;
	if (rc < 0 && rc != -EPERM && rc != -EPROTO)
		snprintf(reply, len, "%s %s: %s", stage, sock, strerror(-rc));
	return rc;
}

/* A positive decimal (seconds may have a fraction); 1 if s is one. */
static int gp_trigger_is_number(const char *s, int allow_fraction)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0))
		return 0;
	return allow_fraction || strspn(s, "0123456789") == strlen(s);
}

/* `trigger` and `stop`: the same socket, the same checks; stop sends
 * "stop" and takes only --control-dir and --timeout. */
static int gp_trigger_control(const char *verb, int argc, char **argv)
{
	int stop = !strcmp(verb, "stop");
	enum { O_CTL = 1000, O_TIMEOUT };
	static const struct option longopts[] = {
		{ "iters", required_argument, NULL, 'i' }, { "seconds", required_argument, NULL, 's' },
		{ "status", no_argument, NULL, 'S' }, { "control-dir", required_argument, NULL, O_CTL },
		{ "timeout", required_argument, NULL, O_TIMEOUT }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *iters = NULL, *seconds = NULL, *ctl = NULL;
	int status = 0;
	double timeout_s = 5.0;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "i:s:h", longopts, NULL)) != -1) {
		if (stop && (c == 'i' || c == 's' || c == 'S')) {
			fprintf(stderr, "gpuphase: stop: unknown option '%s' (gpuphase stop --help lists them)\n",
				argv[optind - 1]);
			return 2;
		}
		switch (c) {
		case 'i': iters = optarg; break;
		case 's': seconds = optarg; break;
		case 'S': status = 1; break;
		case O_CTL: ctl = optarg; break;
		case O_TIMEOUT:
			if (!gp_trigger_is_number(optarg, 1)) {
				fprintf(stderr, "gpuphase: %s: --timeout '%s': accepted: seconds > 0\n", verb, optarg);
				return 2;
			}
			timeout_s = strtod(optarg, NULL);
			break;
		case 'h': gp_help_print(verb); return 0;
		case ':':
			fprintf(stderr, "gpuphase: %s: option '%s' needs a value (gpuphase %s --help lists them)\n", verb,
				argv[optind - 1], verb);
			return 2;
		default:
			fprintf(stderr, "gpuphase: %s: unknown option '%s' (gpuphase %s --help lists them)\n", verb,
				argv[optind - 1], verb);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "gpuphase: %s: %s\n%s\n", verb, optind >= argc ? "which process? give its PID"
									    : "give exactly one PID",
			gp_help_usage(verb));
		return 2;
	}
	const char *pidarg = argv[optind];
	char *end;
	errno = 0;
	long pid = strtol(pidarg, &end, 10);
	if (errno || end == pidarg || *end || pid <= 0 || pid > INT_MAX) {
		fprintf(stderr, "gpuphase: %s: '%s' is not a process id\n", verb, pidarg);
		return 2;
	}
	if (!stop && (iters != NULL) + (seconds != NULL) + status != 1) {
		fprintf(stderr, "gpuphase: trigger: say what to do: exactly one of --iters M, --seconds S, --status\n%s\n",
			gp_help_usage("trigger"));
		return 2;
	}
	if (iters && !gp_trigger_is_number(iters, 0)) {
		fprintf(stderr, "gpuphase: trigger: --iters '%s': accepted: a whole number of iterations > 0\n", iters);
		return 2;
	}
	if (seconds && !gp_trigger_is_number(seconds, 1)) {
		fprintf(stderr, "gpuphase: trigger: --seconds '%s': accepted: a number of seconds > 0 (e.g. 2 or 0.5)\n",
			seconds);
		return 2;
	}

	char dir[PATH_MAX], sock[PATH_MAX + 32];
	gp_trigger_place(pid, ctl, dir, sock, sizeof sock);

	char req[128];
	if (stop)
		snprintf(req, sizeof req, "stop\n");
	else if (iters)
		snprintf(req, sizeof req, "capture iters=%s\n", iters);
	else if (seconds)
		snprintf(req, sizeof req, "capture seconds=%s\n", seconds);
	else
		snprintf(req, sizeof req, "status\n");

	char reply[1024], why[PATH_MAX + 128];
	const char *stage = "";
	int rc = gp_control_check_place(dir, sock, pid, why, sizeof why);
	if (rc == -EPERM) {
		fprintf(stderr, "gpuphase: %s: %s\n", verb, why);
		return 1;
	}
	if (rc == 0)
		rc = gp_control_talk(sock, pid, req, (int)(timeout_s * 1000), 0, reply, sizeof reply, &stage);
	if (rc == -EPERM && stage == gp_control_stage_peer_check) {
		fprintf(stderr, "gpuphase: %s: %s is not served by process %ld: not talking to it\n", verb, sock, pid);
		return 1;
	}
	if (rc == -ENOENT || rc == -ECONNREFUSED || rc == -ENOTSOCK || (rc < 0 && stage == gp_control_stage_connect)) {
		gp_trigger_explain(verb, pid, sock, -rc);
		return 1;
	}
	if (rc < 0) {
		fprintf(stderr, "gpuphase: %s: %ld: %s %s: %s\n", verb, pid, stage, sock,
			rc == -ETIMEDOUT ? "no reply in time (is the process stopped?)" : strerror(-rc));
		return 1;
	}
	if (strncmp(reply, "ok", 2) == 0 && (reply[2] == '\0' || reply[2] == ' ')) {
		printf("gpuphase: %ld: ", pid);
		gp_trigger_print_escaped(stdout, reply[2] ? reply + 3 : "ok");
		printf("\n");
		return 0;
	}
	if (strncmp(reply, "error", 5) == 0 && (reply[5] == '\0' || reply[5] == ' ')) {
		fprintf(stderr, "gpuphase: %s: %ld refused: ", verb, pid);
		gp_trigger_print_escaped(stderr, reply[5] ? reply + 6 : "(no reason given)");
		fprintf(stderr, "\n");
		return 1;
	}
	fprintf(stderr, "gpuphase: %s: %ld: unexpected reply '", verb, pid);
	gp_trigger_print_escaped(stderr, reply);
	fprintf(stderr, "' (a gpuphase version mismatch?)\n");
	return 1;
}

int gp_trigger_main(int argc, char **argv)
{
	return gp_trigger_control("trigger", argc, argv);
}

int gp_trigger_stop_main(int argc, char **argv)
{
	return gp_trigger_control("stop", argc, argv);
}
