/*
 * agent_state.c — the agent's state file (`<control dir>/agent.state`):
 * every followed process (pid + start time), the last window SEQ reduced
 * for it and all its counters, so that a restarted agent goes on from the
 * same totals and never adds a window twice.
 *
 * Text, one record a line, fields separated by tabs; names escaped (\\, \t,
 * \n as backslash sequences):
 *   gpuphase-agent-state 1
 *   P pid start last_seq windows missed wall busy profiler overhead drop_ring
 *     drop_cupti drop_write named dead_since dir
 *   S category operator ops launch queue execute sync
 *     exec_count exec_sum exec_b0..b20 sync_count sync_sum sync_b0..b20
 *   C site waits sync
 * (S and C lines belong to the P line above them; a file without C lines,
 * from before call sites were kept, reads as no waits by site.) Written to a temporary file
 * beside it, fsync'ed and renamed: a reader (or a crash) sees the old state
 * or the new one, never a part.
 *
 * Called on the agent's poll loop only (and once at start).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"

#define GP_AGENT_STATE_MAGIC "gpuphase-agent-state 1"
#define GP_AGENT_STATE_LINE (2 * PATH_MAX + 4096)

static void gp_agent_put_name(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\t')
			fputs("\\t", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void gp_agent_get_name(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			*o++ = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

static void gp_agent_put_hist(FILE *f, const struct gp_agent_hist *h)
{
	fprintf(f, "\t%" PRIu64 "\t%" PRIu64, h->count, h->sum_ns);
	for (size_t b = 0; b <= GP_AGENT_NBUCKETS; b++)
		fprintf(f, "\t%" PRIu64, h->bucket[b]);
}

static int gp_agent_state_write(const struct gp_agent *a, FILE *f)
{
	fprintf(f, "%s\n", GP_AGENT_STATE_MAGIC);
	for (size_t i = 0; i < a->np; i++) {
		const struct gp_agent_proc *p = &a->p[i];
		fprintf(f, "P\t%ld\t%llu\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
			   "\t%.17g\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%zu\t%lld\t",
			p->pid, p->start, p->last_seq, p->windows, p->missed, p->wall_ns, p->busy_ns, p->profiler_ns,
			p->overhead_last, p->dropped[0], p->dropped[1], p->dropped[2], p->named,
			(long long)p->dead_since);
		gp_agent_put_name(f, p->dir);
		fputc('\n', f);
		for (size_t k = 0; k < p->ns; k++) {
			const struct gp_agent_series *s = &p->s[k];
			fputs("S\t", f);
			gp_agent_put_name(f, s->category);
			fputc('\t', f);
			gp_agent_put_name(f, s->op);
			fprintf(f, "\t%" PRIu64, s->ops);
			for (int ph = 0; ph < GP_AGENT_NPHASES; ph++)
				fprintf(f, "\t%" PRIu64, s->phase_ns[ph]);
			gp_agent_put_hist(f, &s->exec);
			gp_agent_put_hist(f, &s->sync);
			fputc('\n', f);
		}
		for (size_t k = 0; k < p->nsite; k++) {
			fputs("C\t", f);
			gp_agent_put_name(f, p->site[k].name);
			fprintf(f, "\t%" PRIu64 "\t%" PRIu64 "\n", p->site[k].waits, p->site[k].sync_ns);
		}
	}
	return ferror(f) ? -EIO : 0;
}

int gp_agent_state_save(const struct gp_agent *a)
{
	char tmp[sizeof a->state_path + 8];
	snprintf(tmp, sizeof tmp, "%s.new", a->state_path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		unlink(tmp);
		return -e;
	}
	int rc = gp_agent_state_write(a, f);
	if (fflush(f) != 0 || fsync(fd) != 0)
		rc = -errno;
	if (fclose(f) != 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, a->state_path) != 0)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		errno = -rc;
	}
	return rc;
}

/* The next tab-separated field of *s (NULL past the last). */
static char *gp_agent_field(char **s)
{
	if (!*s)
		return NULL;
	char *f = *s, *t = strchr(f, '\t');
	if (t)
		*t++ = 0;
	*s = t;
	return f;
}

static int gp_agent_u64s(char **s, uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *f = gp_agent_field(s), *end;
		if (!f)
			return -1;
		errno = 0;
		v[i] = strtoull(f, &end, 10);
		if (errno || end == f || *end)
			return -1;
	}
	return 0;
}

static int gp_agent_get_hist(char **s, struct gp_agent_hist *h)
{
	uint64_t v[2];
	if (gp_agent_u64s(s, v, 2) || gp_agent_u64s(s, h->bucket, GP_AGENT_NBUCKETS + 1))
		return -1;
	h->count = v[0];
	h->sum_ns = v[1];
	return 0;
}

static int gp_agent_state_proc(struct gp_agent *a, char *s, struct gp_agent_proc **cur)
{
	uint64_t v[13];
	char *dir;
	if (gp_agent_u64s(&s, v, 8))
		return -1;
	char *ov = gp_agent_field(&s), *end;
	if (!ov || (strtod(ov, &end), *end) || gp_agent_u64s(&s, v + 8, 5) || !(dir = gp_agent_field(&s)))
		return -1;
	struct gp_agent_proc *p = gp_agent_proc_get(a, (long)v[0], (unsigned long long)v[1]);
	if (!p)
		return -1;
	p->last_seq = v[2];
	p->windows = v[3];
	p->missed = v[4];
	p->wall_ns = v[5];
	p->busy_ns = v[6];
	p->profiler_ns = v[7];
	p->overhead_last = strtod(ov, NULL);
	memcpy(p->dropped, v + 8, sizeof p->dropped);
	p->named = (size_t)v[11];
	p->dead_since = (time_t)v[12];
	gp_agent_get_name(dir);
	snprintf(p->dir, sizeof p->dir, "%s", dir);
	*cur = p;
	return 0;
}

static int gp_agent_state_series(struct gp_agent_proc *p, char *s)
{
	char *cat = gp_agent_field(&s), *op = gp_agent_field(&s);
	uint64_t v[1 + GP_AGENT_NPHASES];
	struct gp_agent_hist ex = { 0 }, sy = { 0 };
	if (!p || !cat || !op || gp_agent_u64s(&s, v, 1 + GP_AGENT_NPHASES) || gp_agent_get_hist(&s, &ex) ||
	    gp_agent_get_hist(&s, &sy) || s)
		return -1;
	gp_agent_get_name(cat);
	gp_agent_get_name(op);
	struct gp_agent_series *se = gp_agent_series_get(p, cat, op);
	if (!se)
		return -1;
	se->ops = v[0];
	memcpy(se->phase_ns, v + 1, sizeof se->phase_ns);
	se->exec = ex;
	se->sync = sy;
	return 0;
}

static int gp_agent_state_site(struct gp_agent_proc *p, char *s)
{
	char *name = gp_agent_field(&s);
	uint64_t v[2];
	if (!p || !name || gp_agent_u64s(&s, v, 2) || s)
		return -1;
	gp_agent_get_name(name);
	struct gp_agent_site *site = gp_agent_site_get(p, name);
	if (!site)
		return -1;
	site->waits = v[0];
	site->sync_ns = v[1];
	return 0;
}

int gp_agent_state_load(struct gp_agent *a, char *err, size_t n)
{
	FILE *f = fopen(a->state_path, "re");
	if (!f)
		return errno == ENOENT ? 0 : (snprintf(err, n, "%s: %s", a->state_path, strerror(errno)), -errno);
	char *line = malloc(GP_AGENT_STATE_LINE);
	struct gp_agent_proc *cur = NULL;
	int rc = line ? 0 : -ENOMEM;
	for (size_t no = 1; !rc && fgets(line, GP_AGENT_STATE_LINE, f); no++) {
		size_t len = strlen(line);
		if (!len || line[len - 1] != '\n') {
			rc = -EPROTO;
		} else {
			line[len - 1] = 0;
			if (no == 1)
				rc = strcmp(line, GP_AGENT_STATE_MAGIC) ? -EPROTO : 0;
			else if (line[0] == 'P' && line[1] == '\t')
				rc = gp_agent_state_proc(a, line + 2, &cur) ? -EPROTO : 0;
			else if (line[0] == 'S' && line[1] == '\t')
				rc = gp_agent_state_series(cur, line + 2) ? -EPROTO : 0;
			else if (line[0] == 'C' && line[1] == '\t')
				rc = gp_agent_state_site(cur, line + 2) ? -EPROTO : 0;
			else
				rc = -EPROTO;
		}
		if (rc)
			snprintf(err, n, "%s: line %zu: not an agent state line (remove the file to start from zero)",
				 a->state_path, no);
	}
	free(line);
	fclose(f);
	return rc;
}
