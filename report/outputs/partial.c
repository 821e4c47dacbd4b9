/*
 * partial.c — the partial-results file (partial.h, docs/partial-format.md):
 * the file's framing — magic,
 * version, then chunks of tag, CRC32C and length: OPTS (the options that
 * shaped the aggregates), one TRCE per trace (its report, partial_rep.c,
 * then its analyses, analyses/registry.c), END (the number of traces). Called on the
 * report's only thread by main.c (--partial writes, inputs are sniffed) and
 * pipeline.c (--merge reads). Invariants: the reader holds one chunk in
 * memory at a time, its length checked against the bytes left in the file
 * and GP_PARTIAL_MAX_CHUNK first; every field is read through gp_pr, which
 * never reads past its span.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gp_file.h"
#include "report/analyses/registry.h"
#include "partial.h"

/* ---- the file ------------------------------------------------------------------- */

#define GP_PARTIAL_HDR 16u /* magic, version, flags          */
#define GP_PARTIAL_CHUNK_HDR 16u /* tag, crc, length         */
#define GP_PARTIAL_TAG(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define GP_PARTIAL_OPTS GP_PARTIAL_TAG('O', 'P', 'T', 'S')
#define GP_PARTIAL_TRCE GP_PARTIAL_TAG('T', 'R', 'C', 'E')
#define GP_PARTIAL_END GP_PARTIAL_TAG('E', 'N', 'D', ' ')
#define GP_PARTIAL_MAX_TRACES (1ull << 24)

int gp_partial_is(const char *path)
{
	char b[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0;
	struct stat st;
	ssize_t got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, b, sizeof b) : -1;
	close(fd);
	return got == (ssize_t)sizeof b && !memcmp(b, GP_PARTIAL_MAGIC, 8);
}

/* One chunk: its header, then payload w. */
static int gp_partial_chunk(FILE *f, uint32_t tag, const struct gp_pw *w)
{
	struct gp_pw h = { 0 };
	gp_pw_u32(&h, tag);
	gp_pw_u32(&h, gp_crc32c(0, w->b, w->n));
	gp_pw_u64(&h, w->n);
	int rc = h.err ? -ENOMEM : 0;
	if (!rc && (fwrite(h.b, 1, h.n, f) != h.n || (w->n && fwrite(w->b, 1, w->n, f) != w->n)))
		rc = -EIO;
	gp_pw_free(&h);
	return rc;
}

static void gp_partial_opts_save(struct gp_pw *w, const struct gp_partial_opts *o)
{
	gp_pw_u32(w, (uint32_t)o->group_by);
	gp_pw_f64(w, o->outlier_factor);
	gp_pw_str(w, o->whatif);
}

int gp_partial_write(FILE *f, const struct gp_partial_opts *o, const struct gp_rep *reps,
		     struct gp_analyses *const *sets, size_t n, char *err, size_t en)
{
	struct gp_pw w = { 0 };
	int rc = 0;
	gp_pw_bytes(&w, GP_PARTIAL_MAGIC, 8);
	gp_pw_u32(&w, GP_PARTIAL_VERSION);
	gp_pw_u32(&w, 0); /* flags */
	if (!w.err && fwrite(w.b, 1, w.n, f) != w.n)
		rc = -EIO;
	w.n = 0;
	gp_partial_opts_save(&w, o);
	if (!rc)
		rc = w.err ? w.err : gp_partial_chunk(f, GP_PARTIAL_OPTS, &w);
	for (size_t i = 0; i < n && !rc; i++) {
		w.n = 0;
		gp_partial_rep_save(&w, &reps[i]);
		gp_analyses_save(&w, sets ? sets[i] : NULL);
		rc = w.err ? w.err : gp_partial_chunk(f, GP_PARTIAL_TRCE, &w);
	}
	w.n = 0;
	gp_pw_u64(&w, n);
	if (!rc)
		rc = w.err ? w.err : gp_partial_chunk(f, GP_PARTIAL_END, &w);
	gp_pw_free(&w);
	if (rc)
		snprintf(err, en, "%s", rc == -ENOMEM ? "out of memory while writing the partial results"
						      : "write error while writing the partial results");
	return rc;
}

/* Reading: the file, its size and where the next chunk starts. */
struct gp_partial_in {
	const char *path;
	FILE *f;
	uint64_t size, off;
	unsigned char *buf;      /* the current chunk's payload */
	char *err;
	size_t en;
};

static int gp_partial_bad(struct gp_partial_in *in, const char *what)
{
	snprintf(in->err, in->en, "%s: not a readable gpuphase partial: %s", in->path, what);
	return -EPROTO;
}

static int gp_partial_open(struct gp_partial_in *in, const char *path, char *err, size_t en)
{
	memset(in, 0, sizeof *in);
	in->path = path;
	in->err = err;
	in->en = en;
	if (!(in->f = fopen(path, "rb"))) {
		int e = errno;
		snprintf(err, en, "%s: cannot open: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fileno(in->f), &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, en, "%s: not a regular file", path);
		return -EINVAL;
	}
	in->size = (uint64_t)st.st_size;
	unsigned char h[GP_PARTIAL_HDR];
	if (in->size < sizeof h || fread(h, 1, sizeof h, in->f) != sizeof h)
		return gp_partial_bad(in, "shorter than its 16-byte header");
	if (memcmp(h, GP_PARTIAL_MAGIC, 8))
		return gp_partial_bad(in, "no GPHPARTL magic (another kind of file)");
	struct gp_pr r;
	gp_pr_init(&r, h + 8, 8, 8);
	uint32_t version = gp_pr_u32(&r), flags = gp_pr_u32(&r);
	if (version != GP_PARTIAL_VERSION) {
		snprintf(err, en, "%s: a gpuphase partial of format version %u; this gpuphase-report reads version %u "
				  "(make the partials and merge them with the same gpuphase)", path, version,
			 GP_PARTIAL_VERSION);
		return -EPROTO;
	}
	if (flags)
		return gp_partial_bad(in, "unknown flags in its header");
	in->off = sizeof h;
	return 0;
}

/* The next chunk's payload into in->buf (checked: length, CRC). */
static int gp_partial_next(struct gp_partial_in *in, uint32_t *tag, uint64_t *len, size_t index)
{
	unsigned char h[GP_PARTIAL_CHUNK_HDR];
	char what[160];
	free(in->buf);
	in->buf = NULL;
	if (in->size - in->off < sizeof h || fread(h, 1, sizeof h, in->f) != sizeof h)
		return gp_partial_bad(in, "truncated: it ends before its end chunk (cut, or still being written?)");
	struct gp_pr r;
	gp_pr_init(&r, h, sizeof h, in->off);
	*tag = gp_pr_u32(&r);
	uint32_t crc = gp_pr_u32(&r);
	*len = gp_pr_u64(&r);
	in->off += sizeof h;
	if (*len > in->size - in->off || *len > GP_PARTIAL_MAX_CHUNK) {
		snprintf(what, sizeof what, "chunk %zu at byte %llu claims %llu bytes, %s", index,
			 (unsigned long long)(in->off - sizeof h), (unsigned long long)*len,
			 *len > GP_PARTIAL_MAX_CHUNK ? "more than the format allows" : "more than the file holds (truncated?)");
		return gp_partial_bad(in, what);
	}
	if (!(in->buf = malloc(*len ? *len : 1))) {
		snprintf(in->err, in->en, "%s: out of memory", in->path);
		return -ENOMEM;
	}
	if (*len && fread(in->buf, 1, *len, in->f) != *len) {
		snprintf(in->err, in->en, "%s: read error", in->path);
		return -EIO;
	}
	if (gp_crc32c(0, in->buf, *len) != crc) {
		snprintf(what, sizeof what, "damaged: the checksum of chunk %zu (at byte %llu) does not match", index,
			 (unsigned long long)(in->off - sizeof h));
		return gp_partial_bad(in, what);
	}
	in->off += *len;
	return 0;
}

static void gp_partial_close(struct gp_partial_in *in)
{
	free(in->buf);
	if (in->f)
		fclose(in->f);
	in->buf = NULL;
	in->f = NULL;
}

static int gp_partial_pr_bad(struct gp_partial_in *in, const struct gp_pr *r, const char *where)
{
	if (r->err == -ENOMEM) {
		snprintf(in->err, in->en, "%s: out of memory", in->path);
		return -ENOMEM;
	}
	char what[320];
	snprintf(what, sizeof what, "%s: %s", where, r->msg);
	return gp_partial_bad(in, what);
}

/* The OPTS chunk, first in every file. */
static int gp_partial_opts_load(struct gp_partial_in *in, struct gp_partial_opts *o)
{
	uint32_t tag;
	uint64_t len;
	int rc = gp_partial_next(in, &tag, &len, 0);
	if (rc)
		return rc;
	if (tag != GP_PARTIAL_OPTS)
		return gp_partial_bad(in, "its first chunk is not the options chunk");
	struct gp_pr r;
	gp_pr_init(&r, in->buf, len, in->off - len);
	memset(o, 0, sizeof *o);
	o->group_by = (int)gp_pr_u32(&r);
	o->outlier_factor = gp_pr_f64(&r);
	int here;
	char *spec = gp_pr_strdup(&r, &here);
	if (!r.err && here && strlen(spec) >= sizeof o->whatif)
		gp_pr_fail(&r, "the --whatif spec is longer than the format allows");
	if (!r.err && spec)
		snprintf(o->whatif, sizeof o->whatif, "%s", spec);
	free(spec);
	if (!r.err && (o->group_by < 0 || o->group_by > 4))
		gp_pr_fail(&r, "unknown --group-by");
	if (!r.err && !(o->outlier_factor > 0 && o->outlier_factor < 1e300))
		gp_pr_fail(&r, "the --outlier-factor is not a positive number");
	gp_pr_done(&r, "the options");
	return r.err ? gp_partial_pr_bad(in, &r, "the options chunk") : 0;
}

int gp_partial_read_opts(const char *path, struct gp_partial_opts *o, char *err, size_t en)
{
	struct gp_partial_in in;
	int rc = gp_partial_open(&in, path, err, en);
	if (!rc)
		rc = gp_partial_opts_load(&in, o);
	gp_partial_close(&in);
	return rc;
}

/* One TRCE chunk's payload into a report and its analyses. */
static int gp_partial_trace(struct gp_partial_in *in, uint64_t len, size_t index, const struct gp_analysis_env *env,
			    struct gp_rep *rep, struct gp_analyses **set)
{
	struct gp_pr r;
	char where[64];
	snprintf(where, sizeof where, "trace %zu", index);
	gp_pr_init(&r, in->buf, len, in->off - len);
	*set = NULL;
	if (gp_partial_rep_load(&r, rep) == 0) {
		*set = gp_analyses_load(env, &r);
		if (!r.err)
			gp_pr_done(&r, "the trace's analyses");
		if (r.err) {
			gp_analyses_free(*set);
			*set = NULL;
			gp_rep_free(rep);
		}
	}
	return r.err ? gp_partial_pr_bad(in, &r, where) : 0;
}

int gp_partial_read(const char *path, const struct gp_analysis_env *env,
		    int (*add)(void *ctx, struct gp_rep *rep, struct gp_analyses *set), void *ctx, char *err,
		    size_t en)
{
	struct gp_partial_in in;
	struct gp_partial_opts o;
	int rc = gp_partial_open(&in, path, err, en);
	if (!rc)
		rc = gp_partial_opts_load(&in, &o);
	size_t ntraces = 0;
	for (size_t index = 1; !rc; index++) {
		uint32_t tag;
		uint64_t len;
		if ((rc = gp_partial_next(&in, &tag, &len, index)))
			break;
		if (tag == GP_PARTIAL_END) {
			struct gp_pr r;
			gp_pr_init(&r, in.buf, len, in.off - len);
			uint64_t n = gp_pr_u64(&r);
			gp_pr_done(&r, "the end chunk");
			if (r.err)
				rc = gp_partial_pr_bad(&in, &r, "the end chunk");
			else if (n != ntraces)
				rc = gp_partial_bad(&in, "its end chunk counts another number of traces than it holds");
			else if (in.off != in.size)
				rc = gp_partial_bad(&in, "bytes follow its end chunk");
			break;
		}
		if (tag != GP_PARTIAL_TRCE) {
			char what[96];
			snprintf(what, sizeof what, "chunk %zu has an unknown tag 0x%08x", index, tag);
			rc = gp_partial_bad(&in, what);
			break;
		}
		if (ntraces >= GP_PARTIAL_MAX_TRACES) {
			rc = gp_partial_bad(&in, "more traces than the format allows");
			break;
		}
		struct gp_rep rep;
		struct gp_analyses *set;
		if ((rc = gp_partial_trace(&in, len, ntraces, env, &rep, &set)))
			break;
		ntraces++;
		if ((rc = add(ctx, &rep, set)))
			break;
	}
	gp_partial_close(&in);
	return rc;
}
