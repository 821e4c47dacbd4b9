/*
 * agent_procs.c — the processes the agent follows: every `<pid>.sock` in the
 * control directory whose `status` reply names a windows directory (a
 * duty-cycled capture: "windows dir=DIR last=SEQ", libgpuphase/window.c) is
 * one; its closed windows `DIR/w<SEQ>.gpht` above the last reduced SEQ are
 * reduced in order (agent_reduce.c), the state saved after each, and the
 * file deleted unless raw windows are kept. A process that names another
 * directory than before (captured again: `gpuphase attach --every` a
 * second time) has its old directory's remaining windows reduced, then its
 * SEQs counted afresh in the new one; its series go on adding up. A process whose socket is gone
 * is dead: its directory is swept for windows closed at its exit, and its
 * series are kept for forget_s seconds, then dropped.
 *
 * Called on the agent's poll loop only. Invariants: a window SEQ is added at
 * most once per (pid, start time, directory) — last_seq is saved before the file is
 * deleted, so a crash in between leaves a file that is never read again; a
 * window whose file is gone (the library's byte cap deleted it first) is
 * counted as missed, never guessed; every loop is bounded (directory
 * entries, windows per pass).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "cli.h"

/* Windows reduced per process per pass: a backlog is worked off over
 * several passes, and a pass stays short. */
#define GP_AGENT_WINDOWS_PER_PASS 256

/* Process pid's start time (/proc/PID/stat field 22), or 0 when it is gone. */
static unsigned long long gp_agent_proc_start(long pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* the command name may hold anything */
	if (!p)
		return 0;
	unsigned long long start = 0;
	/* p is at ')'; each step moves to the space before the next field:
	 * 20 steps reach the one before starttime (22) */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1)
		return 0;
	return start;
}

struct gp_agent_proc *gp_agent_proc_get(struct gp_agent *a, long pid, unsigned long long start)
{
	for (size_t i = 0; i < a->np; i++)
		if (a->p[i].pid == pid && a->p[i].start == start)
			return &a->p[i];
	if (a->np == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 8;
		struct gp_agent_proc *p = realloc(a->p, cap * sizeof *p);
		if (!p)
			return NULL;
		a->p = p;
		a->cap = cap;
	}
	struct gp_agent_proc *p = &a->p[a->np++];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->start = start;
	return p;
}

void gp_agent_proc_free(struct gp_agent_proc *p)
{
	for (size_t i = 0; i < p->ns; i++) {
		free(p->s[i].op);
		free(p->s[i].category);
	}
	free(p->s);
	p->s = NULL;
	p->ns = p->cap = 0;
	for (size_t i = 0; i < p->nsite; i++)
		free(p->site[i].name);
	free(p->site);
	p->site = NULL;
	p->nsite = p->site_cap = p->named_sites = 0;
}

/* Reduce p's windows (last_seq, upto], at most a pass's worth. */
static void gp_agent_reduce_upto(struct gp_agent *a, struct gp_agent_proc *p, uint64_t upto)
{
	for (int k = 0; k < GP_AGENT_WINDOWS_PER_PASS && p->last_seq < upto; k++) {
		uint64_t seq = p->last_seq + 1;
		char path[PATH_MAX + 32], err[PATH_MAX + 256];
		struct stat st;
		snprintf(path, sizeof path, "%s/w%08llu.gpht", p->dir, (unsigned long long)seq);
		int rc = 0;
		if (stat(path, &st) != 0) {
			p->missed++; /* deleted by the byte cap before we came */
		} else if ((rc = gp_agent_reduce(a, p, path, err, sizeof err)) == -ENOMEM) {
			fprintf(stderr, "gpuphase agent: %s\n", err);
			return; /* nothing counted: tried again next pass */
		} else if (rc) {
			fprintf(stderr, "gpuphase agent: %s: not reduced: %s\n", path, err);
			a->reduce_errors++;
			p->missed++;
		}
		p->last_seq = seq;
		if (gp_agent_state_save(a) != 0) {
			fprintf(stderr, "gpuphase agent: %s: %s: stopping here (a window is never counted twice)\n",
				a->state_path, strerror(errno));
			return;
		}
		if (!a->keep_windows && rc == 0 && unlink(path) != 0 && errno != ENOENT)
			fprintf(stderr, "gpuphase agent: %s: %s\n", path, strerror(errno));
	}
}

/* The highest closed window SEQ in p's directory (0: none). */
static uint64_t gp_agent_dir_last(const struct gp_agent_proc *p)
{
	DIR *d = opendir(p->dir);
	if (!d)
		return 0;
	uint64_t last = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		unsigned long long seq;
		char tail[8];
		if (strlen(e->d_name) == 14 && sscanf(e->d_name, "w%8llu.%5s", &seq, tail) == 2 &&
		    !strcmp(tail, "gpht") && seq > last)
			last = seq;
	}
	closedir(d);
	return last;
}

/* Ask the process behind sock for its windows directory and last closed
 * window. 1 when it captures duty-cycled, 0 when not (or gone). */
static int gp_agent_ask(const struct gp_agent *a, const char *sock, long pid, char *dir, uint64_t *last)
{
	char reply[PATH_MAX + 512], why[PATH_MAX + 128];
	const char *stage = "";
	if (gp_control_check_place(a->ctl, sock, pid, why, sizeof why) != 0 ||
	    gp_control_talk(sock, pid, "status\n", 1000, 1, reply, sizeof reply, &stage) != 0 ||
	    strncmp(reply, "ok ", 3) != 0)
		return 0;
	char *w = strstr(reply, "\nwindows dir=");
	if (!w)
		return 0;
	w += strlen("\nwindows dir=");
	char *l = strstr(w, " last="), *end;
	if (!l || l == w || (size_t)(l - w) >= PATH_MAX)
		return 0;
	errno = 0;
	unsigned long long v = strtoull(l + 6, &end, 10);
	if (errno || end == l + 6 || (*end && *end != '\n'))
		return 0;
	memcpy(dir, w, (size_t)(l - w));
	dir[l - w] = 0;
	*last = v;
	return 1;
}

void gp_agent_procs_poll(struct gp_agent *a)
{
	for (size_t i = 0; i < a->np; i++)
		a->p[i].alive = 0;
	DIR *d = opendir(a->ctl);
	struct dirent *e;
	for (size_t k = 0; d && k < 100000 && (e = readdir(d)); k++) {
		char *end, sock[PATH_MAX + 300], dir[PATH_MAX];
		long pid = strtol(e->d_name, &end, 10);
		uint64_t last;
		if (pid <= 0 || end == e->d_name || strcmp(end, ".sock") != 0)
			continue;
		unsigned long long start = gp_agent_proc_start(pid);
		snprintf(sock, sizeof sock, "%s/%s", a->ctl, e->d_name);
		if (!start || !gp_agent_ask(a, sock, pid, dir, &last))
			continue;
		struct gp_agent_proc *p = gp_agent_proc_get(a, pid, start);
		if (!p)
			continue;
		p->alive = 1;
		p->dead_since = 0;
		if (p->dir[0] && strcmp(p->dir, dir) != 0) {
			/* a new capture of the same process (attached again):
			 * the old directory's windows to its last, over as many
			 * passes as that takes (a pass reduces at most
			 * GP_AGENT_WINDOWS_PER_PASS), then SEQ from 1 */
			uint64_t old_last = gp_agent_dir_last(p);
			gp_agent_reduce_upto(a, p, old_last);
			if (p->last_seq < old_last)
				continue;
			p->last_seq = 0;
		}
		snprintf(p->dir, sizeof p->dir, "%s", dir);
		gp_agent_reduce_upto(a, p, last);
	}
	if (d)
		closedir(d);
	time_t now = time(NULL);
	for (size_t i = 0; i < a->np;) {
		struct gp_agent_proc *p = &a->p[i];
		if (!p->alive) {
			if (!p->dead_since)
				p->dead_since = now;
			if (p->dir[0]) /* windows closed at its exit */
				gp_agent_reduce_upto(a, p, gp_agent_dir_last(p));
			if (now - p->dead_since >= (time_t)a->forget_s) {
				gp_agent_proc_free(p);
				a->p[i] = a->p[--a->np];
				gp_agent_state_save(a);
				continue;
			}
		}
		i++;
	}
	a->polls++;
}
