/*
 * tutil.h — helpers shared by the collector's Criterion suites and the trace
 * format's (trace/tests/test_trace_format.c, which writes its traces through
 * the collector): a private temporary directory per test process, whole-file
 * reads and writes, and a reader loop that collects every record group of a
 * trace. Test code only.
 */
#ifndef GP_TUTIL_H
#define GP_TUTIL_H

#include "tests/common/tcrit.h" /* Criterion, or its stand-in under TSan */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "gp_collector.h"
#include "gp_reader.h"

static char tu_dir[256];

/* atexit: remove the private directory and what the test left in it. */
static inline void tu_cleanup(void)
{
	DIR *d = opendir(tu_dir);
	struct dirent *e;
	char p[600];
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", tu_dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(tu_dir);
}

/* A fresh file path "<tmpdir>/<name>" in a directory private to this
 * process. The result stays valid for the next 7 calls. */
static inline const char *tu_path(const char *name)
{
	static char paths[8][512];
	static int next;
	char *path = paths[next++ % 8];
	if (!tu_dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(tu_dir, sizeof(tu_dir), "%s/gpcoll-XXXXXX", t && *t ? t : "/tmp");
		cr_assert_not_null(mkdtemp(tu_dir), "mkdtemp");
		atexit(tu_cleanup);
	}
	snprintf(path, 512, "%s/%s", tu_dir, name);
	unlink(path);
	return path;
}

static inline unsigned char *tu_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc((size_t)n + 1);
	cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

static inline void tu_spit(const char *path, const void *b, size_t len)
{
	unlink(path);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(b, 1, len, f), len);
	fclose(f);
}

static inline struct gp_collector_config tu_config(const char *path, uint32_t ring)
{
	struct gp_collector_config c;
	memset(&c, 0, sizeof(c));
	c.path = path;
	c.ring_records = ring;
	c.flush_ms = 10;
	c.clock_id = CLOCK_MONOTONIC;
	return c;
}

/* All groups of a trace, copied. */
struct tu_trace {
	union gp_rec *recs;   /* slots, concatenated */
	size_t nslots;
	size_t *group;        /* index of each group's head in recs */
	size_t ngroups;
	struct gp_trace_end end;
	int rc;               /* last reader return (0 = clean end) */
	char err[512];
};

static inline struct tu_trace tu_read(const char *path)
{
	struct tu_trace t;
	struct gp_reader *r;
	const union gp_rec *rec;
	uint32_t n;
	size_t cap = 1024, gcap = 1024;
	memset(&t, 0, sizeof(t));
	t.rc = gp_reader_open(path, &r, t.err, sizeof(t.err));
	if (t.rc < 0)
		return t;
	t.recs = malloc(cap * sizeof(*t.recs));
	t.group = malloc(gcap * sizeof(*t.group));
	while ((t.rc = gp_reader_next(r, &rec, &n, t.err, sizeof(t.err))) == 1) {
		while (t.nslots + n > cap)
			t.recs = realloc(t.recs, (cap *= 2) * sizeof(*t.recs));
		if (t.ngroups == gcap)
			t.group = realloc(t.group, (gcap *= 2) * sizeof(*t.group));
		t.group[t.ngroups++] = t.nslots;
		memcpy(t.recs + t.nslots, rec, n * sizeof(*rec));
		t.nslots += n;
	}
	if (t.rc == 0)
		t.end = *gp_reader_end(r);
	gp_reader_close(r);
	return t;
}

static inline void tu_free(struct tu_trace *t)
{
	free(t->recs);
	free(t->group);
}

#endif /* GP_TUTIL_H */
