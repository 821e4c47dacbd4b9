/*
 * outfile.c — gp_outfile (see outfile.h): every output of gpuphase-report
 * goes through a temporary file beside its destination and a rename, after
 * checks that the destination may be replaced. Called on the report's single
 * thread; the lists below are that thread's.
 *
 * Invariant: nothing here opens the destination for writing, ever. It is
 * only lstat()ed, read (O_NOFOLLOW, O_NONBLOCK, first 4 KiB) to see what it
 * holds, and replaced by rename(), which replaces a name and never follows
 * a symlink.
 */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define GP_OUTFILE_MAX_TAKEN 16

static char *const *gp_outfile_in;
static size_t gp_outfile_nin;
static char *gp_outfile_taken[GP_OUTFILE_MAX_TAKEN]; /* canonical names of this run's outputs */
static size_t gp_outfile_ntaken;

void gp_outfile_inputs(char *const *paths, size_t n)
{
	gp_outfile_in = paths;
	gp_outfile_nin = n;
}

static const char *gp_outfile_kind_name(enum gp_outfile_kind k)
{
	switch (k) {
	case GP_OUTFILE_JSON:
		return "JSON";
	case GP_OUTFILE_HTML:
		return "HTML";
	case GP_OUTFILE_SQLITE:
		return "SQLite";
	case GP_OUTFILE_PERFETTO:
		return "Perfetto";
	case GP_OUTFILE_PARTIAL:
		return "gpuphase partial-results";
	default:
		return "text";
	}
}

/* dir (with a trailing '/', "./" when none) and base of path, in buf. */
static int gp_outfile_split(const char *path, char *dir, size_t dlen, const char **base)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		*base = path;
		return snprintf(dir, dlen, "./") >= (int)dlen ? -ENAMETOOLONG : 0;
	}
	*base = slash + 1;
	if (!**base)
		return -EISDIR;
	size_t n = (size_t)(slash - path) + 1;
	if (n >= dlen)
		return -ENAMETOOLONG;
	memcpy(dir, path, n);
	dir[n] = 0;
	return 0;
}

/* The destination's canonical name: the real path of its directory, '/',
 * its base name. */
static int gp_outfile_canon(const char *path, char *buf, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *base;
	int rc = gp_outfile_split(path, dir, sizeof dir, &base);
	if (rc)
		return rc;
	if (!realpath(dir, real))
		return -errno;
	if ((size_t)snprintf(buf, len, "%s/%s", real, base) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* Does the head of an existing file look like what kind writes? */
static int gp_outfile_looks_like(const unsigned char *h, size_t n, enum gp_outfile_kind kind)
{
	size_t i = 0;
	switch (kind) {
	case GP_OUTFILE_SQLITE:
		return n >= 16 && !memcmp(h, "SQLite format 3", 16);
	case GP_OUTFILE_PERFETTO: /* Trace.packet: field 1, length-delimited */
		return n >= 1 && h[0] == 0x0a;
	case GP_OUTFILE_PARTIAL:
		return n >= 8 && !memcmp(h, "GPHPARTL", 8);
	case GP_OUTFILE_HTML:
		while (i < n && (h[i] == ' ' || h[i] == '\n' || h[i] == '\r' || h[i] == '\t'))
			i++;
		return (n - i >= 9 && !strncasecmp((const char *)h + i, "<!DOCTYPE", 9)) ||
		       (n - i >= 5 && !strncasecmp((const char *)h + i, "<html", 5));
	case GP_OUTFILE_JSON:
		while (i < n && (h[i] == ' ' || h[i] == '\n' || h[i] == '\r' || h[i] == '\t'))
			i++;
		return i < n && (h[i] == '{' || h[i] == '[') && !memchr(h, 0, n);
	default:
		return !memchr(h, 0, n);
	}
}

/* What is at path now, against what we would write: 0 when it may be
 * replaced (or does not exist), -errno with one line in err otherwise. */
static int gp_outfile_check_existing(const char *path, enum gp_outfile_kind kind, char *err, size_t n)
{
	struct stat st;
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		int e = errno;
		snprintf(err, n, "%s: cannot write there: %s", path, strerror(e));
		return -e;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(err, n, "%s: is a symbolic link: refusing to write through it (name the file itself)", path);
		return -ELOOP;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, n, "%s: %s: refusing to replace it", path,
			 S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file");
		return S_ISDIR(st.st_mode) ? -EISDIR : -EEXIST;
	}
	for (size_t i = 0; i < gp_outfile_nin; i++) {
		struct stat in;
		if (stat(gp_outfile_in[i], &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino) {
			snprintf(err, n, "%s: is an input of this run (%s): refusing to overwrite it", path,
				 gp_outfile_in[i]);
			return -EEXIST;
		}
	}
	if (st.st_size == 0)
		return 0;
	unsigned char head[4096];
	ssize_t got = -1;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0) {
		struct stat fst;
		if (fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode))
			got = read(fd, head, sizeof head);
		close(fd);
	}
	if (got < 0) {
		snprintf(err, n, "%s: exists and cannot be read to check what it is: refusing to replace it", path);
		return -EACCES;
	}
	if (got >= 8 && !memcmp(head, "GPHTRACE", 8)) {
		snprintf(err, n, "%s: is a gpuphase trace: refusing to overwrite it (name another output)", path);
		return -EEXIST;
	}
	if (!gp_outfile_looks_like(head, (size_t)got, kind)) {
		snprintf(err, n, "%s: exists and is not a %s file like the one gpuphase would write: refusing to "
				 "replace it (remove it or name another output)", path, gp_outfile_kind_name(kind));
		return -EEXIST;
	}
	return 0;
}

int gp_outfile_check(const char *path, enum gp_outfile_kind kind, char *err, size_t n)
{
	if (!path || !*path) {
		snprintf(err, n, "empty output file name");
		return -EINVAL;
	}
	char canon[PATH_MAX];
	int rc = gp_outfile_canon(path, canon, sizeof canon);
	if (rc) {
		snprintf(err, n, "%s: cannot write there: %s", path, strerror(-rc));
		return rc;
	}
	for (size_t i = 0; i < gp_outfile_ntaken; i++)
		if (!strcmp(gp_outfile_taken[i], canon)) {
			snprintf(err, n, "%s: is already another output of this run", path);
			return -EEXIST;
		}
	return gp_outfile_check_existing(path, kind, err, n);
}

static void gp_outfile_release(struct gp_outfile *o)
{
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof *o);
}

void *gp_outfile_context(size_t size, size_t out_off, const char *path, enum gp_outfile_kind kind, char *err,
			 size_t n)
{
	char *ctx = calloc(1, size);
	if (!ctx) {
		snprintf(err, n, "%s: out of memory", path);
		return NULL;
	}
	if (gp_outfile_open((struct gp_outfile *)(void *)(ctx + out_off), path, kind, err, n)) {
		free(ctx);
		return NULL;
	}
	return ctx;
}

int gp_outfile_open(struct gp_outfile *o, const char *path, enum gp_outfile_kind kind, char *err, size_t n)
{
	memset(o, 0, sizeof *o);
	int rc = gp_outfile_check(path, kind, err, n);
	if (rc)
		return rc;
	char dir[PATH_MAX], canon[PATH_MAX];
	const char *base;
	if ((rc = gp_outfile_split(path, dir, sizeof dir, &base)) || (rc = gp_outfile_canon(path, canon, sizeof canon))) {
		snprintf(err, n, "%s: cannot write there: %s", path, strerror(-rc));
		return rc;
	}
	size_t tl = strlen(dir) + strlen(base) + 16;
	o->path = strdup(path);
	o->tmp = malloc(tl);
	if (!o->path || !o->tmp || gp_outfile_ntaken >= GP_OUTFILE_MAX_TAKEN ||
	    !(gp_outfile_taken[gp_outfile_ntaken] = strdup(canon))) {
		gp_outfile_release(o);
		snprintf(err, n, "%s: out of memory", path);
		return -ENOMEM;
	}
	snprintf(o->tmp, tl, "%s.%s.XXXXXX", strcmp(dir, "./") ? dir : "", base);
	int fd = mkostemp(o->tmp, O_CLOEXEC); /* mode 0600 */
	if (fd < 0) {
		int e = errno;
		snprintf(err, n, "%s: cannot create a file in %s: %s", path, dir, strerror(e));
		free(gp_outfile_taken[gp_outfile_ntaken]);
		gp_outfile_release(o);
		return -e;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		unlink(o->tmp);
		free(gp_outfile_taken[gp_outfile_ntaken]);
		gp_outfile_release(o);
		snprintf(err, n, "%s: out of memory", path);
		return -ENOMEM;
	}
	gp_outfile_ntaken++;
	o->kind = kind;
	return 0;
}

int gp_outfile_commit(struct gp_outfile *o, char *err, size_t n)
{
	int rc = 0;
	if (fflush(o->f) || ferror(o->f) || fsync(fileno(o->f))) {
		rc = -EIO;
		snprintf(err, n, "%s: write error: %s", o->path, strerror(errno ? errno : EIO));
	}
	if (fclose(o->f) && !rc) {
		rc = -EIO;
		snprintf(err, n, "%s: write error", o->path);
	}
	o->f = NULL;
	/* Once more: the destination may have changed while we wrote. */
	if (!rc)
		rc = gp_outfile_check_existing(o->path, o->kind, err, n);
	if (!rc && rename(o->tmp, o->path)) {
		rc = -errno;
		snprintf(err, n, "%s: cannot put the output in place: %s", o->path, strerror(-rc));
	}
	if (rc)
		unlink(o->tmp);
	gp_outfile_release(o);
	return rc;
}

void gp_outfile_discard(struct gp_outfile *o)
{
	if (o->f)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	gp_outfile_release(o);
}
