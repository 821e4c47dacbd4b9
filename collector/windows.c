/*
 * windows.c — the duty cycle's files (docs/always-on.md): where each
 * window's trace goes, how old windows leave the directory, and the
 * definitions every window's file repeats so that it reads alone.
 *
 * A duty-cycled session writes window SEQ (counted from 1) to
 * <dir>/w<SEQ>.gpht.part and renames it to <dir>/w<SEQ>.gpht once its
 * footer is written; <dir> is the trace path without ".gpht" plus
 * ".windows". The directory is capped: after each rename the oldest closed
 * windows are deleted until the closed ones fit in the cap less one
 * window's byte cap (room for the window being written).
 *
 * A file must not depend on the one before it, yet producers intern a text
 * once per thread and describe a thread, a device, an API id or a stack
 * once per session. So the writer keeps every such definition group as it
 * passes (gp_windows_keep) and writes them again at the start of each new
 * file (gp_windows_replay), in the order they first came.
 *
 * Threads: the writer thread only (gp_windows_dir_make runs on the control
 * thread before the writer exists). Invariants: the replay store only
 * grows, up to GP_WINDOWS_REPLAY_MAX slots; past that, definitions are not
 * kept (counted in gp_windows_replay_missed) and later files may lack them.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gp_collector_int.h"

#define GP_WINDOWS_REPLAY_MAX (1u << 20) /* slots: 32 MiB of definitions */

static union gp_rec *gp_windows_defs;
static uint32_t gp_windows_ndefs, gp_windows_cap;
uint64_t gp_windows_replay_missed;

int gp_windows_dir_of(const char *trace_path, char *dir, size_t len)
{
	size_t n = strlen(trace_path);
	if (n >= 5 && !strcmp(trace_path + n - 5, ".gpht"))
		n -= 5;
	int m = snprintf(dir, len, "%.*s.windows", (int)n, trace_path);
	return m < 0 || (size_t)m >= len ? -ENAMETOOLONG : 0;
}

int gp_windows_dir_make(const char *dir)
{
	return mkdir(dir, 0700) == 0 ? 0 : -errno;
}

int gp_windows_file(const char *dir, uint64_t seq, int part, char *path, size_t len)
{
	int m = snprintf(path, len, "%s/w%08llu.gpht%s", dir, (unsigned long long)seq, part ? ".part" : "");
	return m < 0 || (size_t)m >= len ? -ENAMETOOLONG : 0;
}

/* Status kinds that describe the session rather than a moment in it. */
static int gp_windows_status_is_setup(uint8_t kind)
{
	switch (kind) {
	case GP_STATUS_CUPTI_OK:
	case GP_STATUS_CUPTI_UNAVAILABLE:
	case GP_STATUS_CLOCK_CALIBRATED:
	case GP_STATUS_HOOKS_ABSENT:
	case GP_STATUS_FORKED_CHILD:
	case GP_STATUS_HOOK_COST:
	case GP_STATUS_PROCESS_START:
	case GP_STATUS_CUPTI_OVERHEAD:
	case GP_STATUS_CALIBRATION:
	case GP_STATUS_COUNTERS:
		return 1;
	}
	return 0;
}

static int gp_windows_is_definition(const union gp_rec *g)
{
	switch (g->type) {
	case GP_REC_STRING:
	case GP_REC_THREAD:
	case GP_REC_API_NAME:
	case GP_REC_DEVICE:
	case GP_REC_MODULE:
	case GP_REC_SYMBOL:
	case GP_REC_STACK:
	case GP_REC_CALIBRATION:
	case GP_REC_CLOCK_PAIR:
		return 1;
	case GP_REC_STATUS:
		return gp_windows_status_is_setup(g->status.kind);
	}
	return 0;
}

void gp_windows_keep(const union gp_rec *g, uint32_t n)
{
	if (!gp_windows_is_definition(g))
		return;
	if (gp_windows_ndefs + n > gp_windows_cap) {
		uint32_t cap = gp_windows_cap ? gp_windows_cap : 4096;
		while (cap < gp_windows_ndefs + n && cap < GP_WINDOWS_REPLAY_MAX)
			cap *= 2;
		union gp_rec *p = cap >= gp_windows_ndefs + n ? realloc(gp_windows_defs, (size_t)cap * GP_REC_SIZE)
							      : NULL;
		if (!p) {
			gp_windows_replay_missed += n;
			return;
		}
		gp_windows_defs = p;
		gp_windows_cap = cap;
	}
	memcpy(gp_windows_defs + gp_windows_ndefs, g, (size_t)n * GP_REC_SIZE);
	gp_windows_ndefs += n;
}

void gp_windows_replay(void (*sink)(void *, const union gp_rec *, uint32_t), void *ctx)
{
	for (uint32_t i = 0; i < gp_windows_ndefs;) {
		uint32_t n = gp_rec_slots(&gp_windows_defs[i]);
		if (n == 0 || i + n > gp_windows_ndefs)
			break;
		sink(ctx, &gp_windows_defs[i], n);
		i += n;
	}
}

void gp_windows_reset(void)
{
	free(gp_windows_defs);
	gp_windows_defs = NULL;
	gp_windows_ndefs = gp_windows_cap = 0;
	gp_windows_replay_missed = 0;
}

struct gp_windows_closed {
	uint64_t seq, bytes;
};

static int gp_windows_by_seq(const void *a, const void *b)
{
	uint64_t x = ((const struct gp_windows_closed *)a)->seq, y = ((const struct gp_windows_closed *)b)->seq;
	return x < y ? -1 : x > y;
}

/* The closed windows in dir (w<8+ digits>.gpht), oldest first, in *out
 * (malloc'd). Their count, or -errno. */
static long gp_windows_list(const char *dir, struct gp_windows_closed **out)
{
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	struct gp_windows_closed *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		unsigned long long seq;
		int end = 0;
		if (sscanf(e->d_name, "w%llu.gpht%n", &seq, &end) != 1 || e->d_name[end] || end < 14)
			continue;
		char path[PATH_MAX];
		struct stat st;
		if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path || lstat(path, &st) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct gp_windows_closed *p = realloc(v, c * sizeof *v);
			if (!p)
				break;
			v = p;
			cap = c;
		}
		v[n++] = (struct gp_windows_closed){seq, (uint64_t)st.st_size};
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, gp_windows_by_seq);
	*out = v;
	return (long)n;
}

long gp_windows_prune(const char *dir, uint64_t keep_closed)
{
	struct gp_windows_closed *v = NULL;
	long n = gp_windows_list(dir, &v);
	if (n < 0)
		return n;
	uint64_t total = 0;
	for (long i = 0; i < n; i++)
		total += v[i].bytes;
	long gone = 0;
	for (long i = 0; i < n && total > keep_closed; i++) {
		char path[PATH_MAX];
		if (gp_windows_file(dir, v[i].seq, 0, path, sizeof path) == 0 && unlink(path) == 0)
			gone++;
		total -= v[i].bytes; /* gone, or gone already (a reader took it) */
	}
	free(v);
	return gone;
}
