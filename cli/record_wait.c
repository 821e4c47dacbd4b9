/*
 * record_wait.c — `gpuphase record` while CMD runs: waits for it, and on
 * Ctrl-C, SIGTERM or SIGHUP first asks the capture library in CMD to finish
 * its trace (the `stop` request on its control socket: CUPTI flushed, footer
 * written) and only then passes the signal on, so an interrupted run keeps
 * its GPU side.
 *
 * Job control: when record is the foreground job of its terminal, CMD runs
 * in a process group of its own (gp_record_wait_own_group) and record keeps
 * the terminal, so the terminal's Ctrl-C reaches record alone; record then
 * sends it to CMD's whole group once the trace is finished, as the terminal
 * would have. Ctrl-Z is passed to CMD's group and record stops with it; a
 * continue is passed on. A CMD that reads or sets the terminal (stopped by
 * SIGTTIN/SIGTTOU) is given the terminal: from then on the terminal's
 * signals reach it directly, and record passes none of them on.
 *
 * Called by record.c on the command's only thread, with the signals of
 * GP_RECORD_WAIT_SIGNALS blocked since before the fork (taken here with
 * sigwaitinfo: no handler runs). Invariants: each signal is passed on once,
 * after at most one stop request (bounded by GP_RECORD_STOP_MS); a signal
 * the terminal also gave CMD (same process group) is not sent twice.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* How long a stop may take: a synchronize of the GPU work in flight, then
 * CUPTI's flush and the footer. */
#define GP_RECORD_STOP_MS 20000

void gp_record_wait_signals(sigset_t *set)
{
	sigemptyset(set);
	static const int sigs[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGTSTP, SIGCONT };
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaddset(set, sigs[i]);
}

int gp_record_wait_terminal(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (isatty(fd) && tcgetpgrp(fd) == getpgrp())
			return fd;
	return -1;
}

/* Ask CMD's library to finish before sig is passed on; one line says how
 * it went (nothing when CMD has no capture running). */
static void gp_record_wait_stop(pid_t pid, const char *ctl, const char *prog, int sig)
{
	char reply[1024];
	int rc = gp_trigger_stop_quietly((long)pid, ctl, GP_RECORD_STOP_MS, reply, sizeof reply);
	if (rc == 0) {
		fprintf(stderr, "gpuphase: %s: capture finished (trace complete) before passing it to %s\n",
			strsignal(sig), prog);
		return;
	}
	if (rc == -ENOENT || rc == -ECONNREFUSED)
		return; /* no capture running: nothing to finish */
	fprintf(stderr, "gpuphase: %s: the capture could not be finished first (", strsignal(sig));
	for (const unsigned char *p = (const unsigned char *)reply; *p; p++)
		fputc(*p >= 0x20 && *p < 0x7f ? *p : '?', stderr);
	fprintf(stderr, "); passing it to %s\n", prog);
}

/* The child changed state: 1 when it is gone (*status set). */
static int gp_record_wait_reap(pid_t pid, int tty, int *handed, int *status)
{
	for (;;) {
		int st;
		pid_t w = waitpid(pid, &st, WNOHANG | WUNTRACED);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0; /* ECHILD: gone (status stays what it was) */
		if (WIFSTOPPED(st)) {
			int s = WSTOPSIG(st);
			if (tty >= 0 && !*handed && (s == SIGTTIN || s == SIGTTOU)) {
				/* it wants the terminal: give it */
				*handed = tcsetpgrp(tty, pid) == 0;
				kill(-pid, SIGCONT);
			}
			continue;
		}
		*status = st;
		return 1;
	}
}

int gp_record_wait(pid_t pid, int tty, const char *ctl, const char *prog, int *status)
{
	sigset_t set;
	gp_record_wait_signals(&set);
	int own_group = tty >= 0, handed = 0, asked_stop = 0, gone = 0;
	*status = 0;
	while (!gone) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si);
		if (sig < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* from the terminal: with CMD in our group it has it already */
		int from_tty = si.si_code == SI_KERNEL;
		switch (sig) {
		case SIGCHLD:
			gone = gp_record_wait_reap(pid, tty, &handed, status);
			break;
		case SIGTSTP: /* stop CMD (unless the terminal did) and then ourselves */
			if (!from_tty || (own_group && !handed))
				kill(own_group ? -pid : pid, SIGTSTP);
			raise(SIGSTOP);
			break;
		case SIGCONT:
			kill(own_group ? -pid : pid, SIGCONT);
			break;
		default:
			if (from_tty && (!own_group || handed))
				break;
			if (sig != SIGQUIT && !asked_stop++)
				gp_record_wait_stop(pid, ctl, prog, sig);
			kill(own_group && from_tty ? -pid : pid, sig);
			break;
		}
	}
	if (handed) { /* take the terminal back (we are its background now) */
		sigset_t ttou, old;
		sigemptyset(&ttou);
		sigaddset(&ttou, SIGTTOU);
		sigprocmask(SIG_BLOCK, &ttou, &old);
		(void)tcsetpgrp(tty, getpgrp());
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	/* signals that came after CMD ended are not record's to act on */
	struct timespec zero = { 0, 0 };
	while (sigtimedwait(&set, NULL, &zero) > 0)
		;
	return 0;
}
