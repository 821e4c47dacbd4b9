/*
 * fuzz_trace.c — one input through everything the report does with a trace
 * file: the report's driver (report/pipeline.c: the reader, both analysis
 * passes with the join, the analyses, finish), the text and JSON writers
 * (report/outputs/output.c) and, for two inputs in three, the Chrome-trace or HTML
 * exporter, in gpuphase-report's order. Every trace analysed is also
 * written as partial results (report/outputs/partial.h) and read back: the report
 * printed from them must be the same bytes (a difference aborts). An input
 * that starts with the partial-results magic goes through their reader
 * instead, and the report of what it holds is printed.
 * Shared by the libFuzzer target (fuzz_main.c, `make fuzz`) and the replay
 * tool (fuzz_replay.c: crash-regression corpus, truncation at every byte, bit
 * flips — ordinary tests in `make test`).
 *
 * The bytes go to a memfd opened by path (/proc/self/fd/N), so the reader sees
 * a real file. For inputs of even length the harness first recomputes the
 * header and block CRC32Cs, so mutations reach the analysis (odd lengths keep
 * the checksums as given, so the reader's corruption checks get fuzzed too;
 * the same for partial results' chunk CRC32Cs). Contract checked here (a failed check aborts, which both
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
#include "report/outputs/export.h"
#include "report/analyses/registry.h"
#include "report/outputs/output.h"
#include "report/outputs/partial.h"
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

/* The same for partial results: every chunk's CRC32C, chunk by chunk. */
static void gp_fuzz_fix_partial_crcs(uint8_t *d, size_t size)
{
	size_t off = 16;
	while (size - off >= 16 && off <= size) {
		uint64_t len;
		memcpy(&len, d + off + 8, sizeof len);
		if (len > size - off - 16)
			return;
		uint32_t crc = gp_crc32c(0, d + off + 16, (size_t)len);
		memcpy(d + off + 4, &crc, sizeof crc);
		off += 16 + (size_t)len;
	}
}

/* The whole report as gpuphase-report prints it (text with the analyses'
 * sections, then json), malloc'd; NULL on ENOMEM. */
static char *gp_fuzz_print_rep(const struct gp_rep *rep, struct gp_analyses *const *sets, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f) {
		struct gp_out_opts o;
		memset(&o, 0, sizeof o);
		o.th = GP_THRESHOLDS_DEFAULT;
		o.outlier_factor = 1.5;
		o.straggler_pct = 10.0;
		o.analyses = sets;
		o.ntraces = n;
		struct gp_analysis_style style = { .outlier_factor = 1.5 };
		gp_out_report(f, rep, &o);
		for (size_t x = 0; x < n; x++)
			if (o.analyses[x] && gp_out_trace_rep(rep, &o, x))
				gp_analyses_text(f, o.analyses[x], gp_out_trace_rep(rep, &o, x), &style);
		o.format = GP_FMT_JSON;
		gp_out_report(f, rep, &o);
		fclose(f);
	}
	return buf;
}

/* The same of traces [0, n) of p (their reports move out of p). */
static char *gp_fuzz_print(struct gp_pipeline *p, size_t n)
{
	struct gp_rep rep;
	if (gp_pipeline_report(p, 0, n, &rep))
		return NULL;
	char *buf = gp_fuzz_print_rep(&rep, gp_pipeline_analyses(p), n);
	gp_rep_free(&rep);
	return buf;
}

/* Partial results at path through their reader and the printers. */
static void gp_fuzz_partial_file(const char *path, enum gp_group_by by)
{
	struct gp_pipeline_opts po = { .group_by = by, .what = GP_PIPE_ALL, .outlier_factor = 1.5, .no_symbolize = 1 };
	struct gp_pipeline *p = gp_pipeline_new(&po);
	char err[512] = "";
	int rc = p ? gp_pipeline_add_partial(p, path, err, sizeof err) : -ENOMEM;
	if (rc && rc != -ENOMEM)
		gp_fuzz_check_msg(path, err);
	if (!rc && gp_pipeline_count(p))
		free(gp_fuzz_print(p, gp_pipeline_count(p)));
	gp_pipeline_free(p);
}

/* A trace's report and analyses, written as partial results and read
 * back: the report printed from them must be the same bytes. */
static void gp_fuzz_round_trip(const struct gp_rep *rep, struct gp_analyses *const *sets,
			       const struct gp_pipeline_opts *po)
{
	int fd = memfd_create("gpfuzzpart", MFD_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct gp_partial_opts o = { .group_by = (int)po->group_by, .outlier_factor = po->outlier_factor };
	char err[512], path[64];
	int rc = gp_partial_write(f, &o, rep, sets, 1, err, sizeof err);
	if (fflush(f) || rc) {
		fclose(f);
		return;
	}
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	struct gp_pipeline_opts lo = { .group_by = po->group_by, .what = GP_PIPE_ALL, .outlier_factor = 1.5,
				       .no_symbolize = 1 };
	struct gp_pipeline *back = gp_pipeline_new(&lo);
	rc = back ? gp_pipeline_add_partial(back, path, err, sizeof err) : -ENOMEM;
	if (rc && rc != -ENOMEM) {
		fprintf(stderr, "fuzz: the partial results of an analysed trace do not read back: %s\n", err);
		abort();
	}
	char *a = rc ? NULL : gp_fuzz_print(back, 1);
	char *b = a ? gp_fuzz_print_rep(rep, sets, 1) : NULL;
	if (a && b && strcmp(a, b)) {
		size_t i = 0;
		while (a[i] == b[i])
			i++;
		fprintf(stderr, "fuzz: the report from partial results differs at byte %zu:\n%.200s\n---\n%.200s\n", i,
			b + (i > 40 ? i - 40 : 0), a + (i > 40 ? i - 40 : 0));
		abort();
	}
	free(a);
	free(b);
	gp_pipeline_free(back);
	fclose(f);
}

int gp_fuzz_trace(const uint8_t *data, size_t size)
{
	int partial = size >= 8 && !memcmp(data, GP_PARTIAL_MAGIC, 8);
	int fd = memfd_create("gpfuzz", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	uint8_t *fixed = NULL;
	if (size % 2 == 0 && (fixed = malloc(size ? size : 1)) != NULL) { /* half the inputs */
		memcpy(fixed, data, size);
		if (partial)
			gp_fuzz_fix_partial_crcs(fixed, size);
		else
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
	if (partial) {
		gp_fuzz_partial_file(path, (enum gp_group_by)(size % 5));
		close(fd);
		return 0;
	}

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
		gp_fuzz_round_trip(&rep, gp_pipeline_analyses(p), &po);
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
