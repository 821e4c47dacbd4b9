/*
 * fuzz_trace.c — one input through everything the report does with a trace
 * file: the report's driver (report/pipeline.c: the reader, both analysis
 * passes with the join, the analyses, finish), the text and JSON writers
 * (report/output.c) and, for two inputs in three, the Chrome-trace or HTML
 * exporter, in gpuphase-report's order.
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
 * threaded; no global state survives a call. A record group that overruns
 * its block (pipeline's -EPROTO: the reader broke its contract) aborts too.
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
#include "report/export.h"
#include "report/output.h"
#include "report/pipeline.h"

static void gp_fuzz_check_msg(const char *path, const char *err)
{
	size_t n = strlen(path);
	if (strncmp(err, path, n) != 0 || err[n] != ':' || strlen(err) < n + 4) {
		fprintf(stderr, "fuzz: bad reader message \"%s\" (must name %s and the problem)\n", err, path);
		abort();
	}
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
	struct gp_pipeline_sink sink = { size % 3 == 1 ? &gp_export_chrome : size % 3 == 2 ? &gp_export_html : NULL,
					 NULL };
	char xerr[256];
	if (sink.ex && !(sink.ctx = sink.ex->open("/dev/null", xerr, sizeof xerr)))
		sink.ex = NULL;
	/* vary the grouping too; never open the files a trace names */
	struct gp_pipeline_opts po = { .group_by = (enum gp_group_by)(size % 5), .what = GP_PIPE_ALL,
				       .outlier_factor = 1.5, .sinks = &sink, .nsinks = sink.ex != NULL,
				       .no_symbolize = 1 };
	struct gp_pipeline *p = gp_pipeline_new(&po);
	struct gp_out_opts o;
	memset(&o, 0, sizeof o);
	o.th = GP_THRESHOLDS_DEFAULT;
	o.outlier_factor = 1.5;
	o.straggler_pct = 10.0;
	struct gp_rep rep;
	memset(&rep, 0, sizeof rep);
	char err[512];
	err[0] = 0;
	int rc = p ? gp_pipeline_add(p, path, err, sizeof err) : -ENOMEM;
	if (rc == -EPROTO) {
		fprintf(stderr, "fuzz: %s\n", err);
		abort();
	}
	if (rc && rc != -ENOMEM)
		gp_fuzz_check_msg(path, err);
	int done = !rc && !gp_pipeline_report(p, 0, 1, &rep);
	if (done) {
		FILE *f = fopen("/dev/null", "w");
		if (f) {
			o.analyses = gp_pipeline_analyses(p);
			o.ntraces = 1;
			o.format = GP_FMT_TEXT;
			gp_out_report(f, &rep, &o);
			o.format = GP_FMT_JSON;
			gp_out_report(f, &rep, &o);
			fclose(f);
		}
	}
	if (sink.ex) {
		o.format = GP_FMT_TEXT;
		sink.ex->close(sink.ctx, done ? &rep : NULL, &o, xerr, sizeof xerr);
	}
	gp_rep_free(&rep);
	gp_pipeline_free(p);
	close(fd);
	return 0;
}
