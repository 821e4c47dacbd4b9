/*
 * fuzz_trace.c — one input through everything the report does with a trace
 * file: gp_reader_open / next_block (collector/reader.c), both analysis passes
 * with the join (report/analysis.c: scan1, prepare, scan2, finish), the text
 * and JSON writers (report/output.c) and, for two inputs in three, the
 * Chrome-trace or HTML exporter, in gpuphase-report's order.
 * Shared by the libFuzzer target (fuzz_main.c, `make fuzz`) and the replay
 * tool (fuzz_replay.c: crash-regression corpus, truncation at every byte, bit
 * flips — ordinary tests in `make test`).
 *
 * The bytes go to a memfd opened by path (/proc/self/fd/N), so the reader sees
 * a real file. For inputs of even length the harness first recomputes the
 * header and block CRC32Cs, so mutations reach the analysis (odd lengths keep
 * the checksums as given, so the reader's corruption checks get fuzzed too). Contract checked here (a failed check aborts, which both
 * libFuzzer and the replay tool report): an error from the reader comes with a
 * message that starts with the file's path and names a problem. Single-
 * threaded; no global state survives a call.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_trace.h"
#include "gp_file.h"
#include "gp_reader.h"
#include "report/analysis.h"
#include "report/export.h"
#include "report/output.h"

static void gp_fuzz_check_msg(const char *path, const char *err)
{
	size_t n = strlen(path);
	if (strncmp(err, path, n) != 0 || err[n] != ':' || strlen(err) < n + 4) {
		fprintf(stderr, "fuzz: bad reader message \"%s\" (must name %s and the problem)\n", err, path);
		abort();
	}
}

/* The exporter this input also drives (NULL = none) and its context. */
struct gp_fuzz_ex {
	const struct gp_exporter *ex;
	void *ctx;
};

static void gp_fuzz_op(const struct gp_an_op *op, void *ctx)
{
	struct gp_fuzz_ex *fx = ctx;
	if (fx->ex && fx->ex->op)
		fx->ex->op(op, fx->ctx);
}

static void gp_fuzz_wait(const struct gp_an_wait *w, void *ctx)
{
	struct gp_fuzz_ex *fx = ctx;
	if (fx->ex && fx->ex->wait)
		fx->ex->wait(w, fx->ctx);
}

/* One pass over the file; 0 = read to its end, 1 = reader error (fine). */
static int gp_fuzz_pass(const char *path, struct gp_an *an, int pass, int *oom, struct gp_fuzz_ex *fx)
{
	struct gp_reader *rd;
	char err[512];
	err[0] = 0;
	if (gp_reader_open(path, &rd, err, sizeof err)) {
		gp_fuzz_check_msg(path, err);
		return 1;
	}
	const union gp_rec *recs;
	size_t n;
	int rc;
	while ((rc = gp_reader_next_block(rd, &recs, &n, err, sizeof err)) > 0) {
		for (size_t i = 0; i < n;) {
			uint32_t ns = gp_rec_slots(&recs[i]);
			if (ns == 0 || ns > n - i) {
				fprintf(stderr, "fuzz: reader handed out a group of %u slots with %zu left\n", ns, n - i);
				abort();
			}
			if ((pass == 1 ? gp_an_scan1(an, &recs[i], ns) : gp_an_scan2(an, &recs[i], ns)) != 0)
				*oom = 1;
			if (pass == 2 && fx->ex && fx->ex->record)
				fx->ex->record(fx->ctx, an, &recs[i]);
			i += ns;
		}
	}
	if (rc < 0)
		gp_fuzz_check_msg(path, err);
	gp_reader_close(rd);
	return rc < 0;
}

/* Recompute the header's and every block's CRC32C in place, walking the
 * framing as far as it holds together: mutated records then reach the
 * analysis instead of stopping at a checksum. */
static void gp_fuzz_fix_crcs(uint8_t *d, size_t size)
{
	struct gp_file_header h;
	if (size < sizeof h)
		return;
	memcpy(&h, d, sizeof h);
	if (h.header_len < sizeof h || h.header_len > size)
		return;
	memset(d + offsetof(struct gp_file_header, hdr_crc), 0, sizeof h.hdr_crc);
	h.hdr_crc = gp_crc32c(0, d, h.header_len);
	memcpy(d + offsetof(struct gp_file_header, hdr_crc), &h.hdr_crc, sizeof h.hdr_crc);
	size_t off = h.header_len;
	while (size - off >= sizeof(struct gp_block_header)) {
		struct gp_block_header b;
		memcpy(&b, d + off, sizeof b);
		if (b.stored_len > size - off - sizeof b)
			return;
		uint32_t crc = gp_crc32c(0, d + off, offsetof(struct gp_block_header, crc));
		b.crc = gp_crc32c(crc, d + off + sizeof b, b.stored_len);
		memcpy(d + off + offsetof(struct gp_block_header, crc), &b.crc, sizeof b.crc);
		off += sizeof b + b.stored_len;
	}
}

int gp_fuzz_trace(const uint8_t *data, size_t size)
{
	int fd = memfd_create("gpfuzz", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	uint8_t *fixed = NULL;
	if (size % 2 == 0 && (fixed = malloc(size ? size : 1)) != NULL) { /* half the inputs */
		memcpy(fixed, data, size);
		gp_fuzz_fix_crcs(fixed, size);
		data = fixed;
	}
	size_t off = 0;
	while (off < size) {
		ssize_t w = write(fd, data + off, size - off);
		if (w <= 0) {
			free(fixed);
			close(fd);
			return -EIO;
		}
		off += (size_t)w;
	}
	free(fixed);
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);

	/* Every third input also goes through the Chrome-trace exporter, every
	 * third through the HTML one (both to /dev/null). */
	struct gp_fuzz_ex fx = { NULL, NULL };
	char xerr[256];
	fx.ex = size % 3 == 1 ? &gp_export_chrome : size % 3 == 2 ? &gp_export_html : NULL;
	if (fx.ex && !(fx.ctx = fx.ex->open("/dev/null", xerr, sizeof xerr)))
		fx.ex = NULL;
	struct gp_an_config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.group_by = (enum gp_group_by)(size % 4); /* vary the grouping too */
	if (fx.ex) {
		cfg.on_op = gp_fuzz_op;
		cfg.on_wait = gp_fuzz_wait;
		cfg.ctx = &fx;
	}
	struct gp_an *an = gp_an_new(&cfg);
	int oom = 0, done = 0;
	struct gp_rep rep;
	memset(&rep, 0, sizeof rep);
	if (!an) {
		if (fx.ex)
			fx.ex->close(fx.ctx, NULL, NULL, xerr, sizeof xerr);
		close(fd);
		return -ENOMEM;
	}
	int ok = gp_fuzz_pass(path, an, 1, &oom, &fx) == 0 && !oom && gp_an_prepare(an) == 0;
	if (ok && fx.ex && fx.ex->begin)
		fx.ex->begin(fx.ctx, 0, path, 1);
	if (ok && gp_fuzz_pass(path, an, 2, &oom, &fx) == 0 && !oom) {
		if (gp_an_finish(an, &rep) == 0) {
			done = 1;
			FILE *f = fopen("/dev/null", "w");
			if (f) {
				struct gp_out_opts o;
				memset(&o, 0, sizeof o);
				o.th = GP_THRESHOLDS_DEFAULT;
				o.outlier_factor = 1.5;
				o.straggler_pct = 10.0;
				o.format = GP_FMT_TEXT;
				gp_out_report(f, &rep, &o);
				o.format = GP_FMT_JSON;
				gp_out_report(f, &rep, &o);
				fclose(f);
			}
		}
	}
	if (fx.ex) {
		struct gp_out_opts o;
		memset(&o, 0, sizeof o);
		o.th = GP_THRESHOLDS_DEFAULT;
		o.outlier_factor = 1.5;
		o.straggler_pct = 10.0;
		fx.ex->close(fx.ctx, done ? &rep : NULL, &o, xerr, sizeof xerr);
	}
	gp_rep_free(&rep);
	gp_an_free(an);
	close(fd);
	return 0;
}
