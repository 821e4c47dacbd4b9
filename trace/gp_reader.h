/*
 * trace/gp_reader.h — streaming, bounds-checked reader of gpuphase trace files
 * (docs/format.md). Used by report/, the `gpuphase` command, gpuphase-dump and
 * the tests. Memory is bounded by one block, whatever the file size; every
 * length, count and offset read from the file is validated before use. Never crashes on bad input: errors come back
 * as a negative errno plus a message naming the file and the problem.
 *
 * Single-threaded: one reader object per thread.
 */
#ifndef GP_READER_H
#define GP_READER_H

#include <stddef.h>
#include <stdint.h>
#include "gp_format.h"

struct gp_reader;

/* Parsed header. Strings point into the reader and live until close. */
struct gp_trace_info {
	uint32_t version;
	uint32_t clock_id;
	int64_t clock_offset_ns;
	uint64_t start_wall_ns;  /* CLOCK_REALTIME at start                      */
	uint64_t start_clock_ns; /* the trace clock at the same instant           */
	uint32_t pid;
	size_t nkv;
	const char *const *keys; /* nkv key/value pairs (host, cmdline, ...)     */
	const char *const *values;
};

/* What the footer said, or what the reader found instead. */
struct gp_trace_end {
	int complete;              /* 1: a valid footer was read                 */
	uint64_t records;          /* slots read                                  */
	uint64_t blocks;
	uint64_t truncated_bytes;  /* bytes after the last whole block           */
	uint64_t footer_records[GP_REC_TYPE_COUNT]; /* footer counts per type   */
	uint64_t dropped_ring;     /* footer: drops in rings                      */
	uint64_t dropped_cupti;
	uint64_t write_errors;
	int32_t end_reason;        /* 0, or -errno that stopped writing           */
	uint64_t lost_after_stop;  /* footer: slots drained but not written after
	                              a write error or the size cap              */
};

/* Open and validate the header. On error returns -errno and writes a message
 * ("FILE: not a gpuphase trace (bad magic)") into err. */
int gp_reader_open(const char *path, struct gp_reader **out, char *err, size_t errlen);

const struct gp_trace_info *gp_reader_info(const struct gp_reader *r);

/* Next record group: *rec points at the head slot, *nslots its slot count;
 * valid until the next call. Returns 1, 0 at the end of the data (clean or
 * truncated: see gp_reader_end), or -errno on corruption (message in err). */
int gp_reader_next(struct gp_reader *r, const union gp_rec **rec, uint32_t *nslots,
		   char *err, size_t errlen);

/* Next whole block of slots (faster bulk path): returns 1 with *recs and *n set,
 * 0 at end, -errno on corruption. Groups never straddle blocks. */
int gp_reader_next_block(struct gp_reader *r, const union gp_rec **recs, size_t *n,
			 char *err, size_t errlen);

/* Valid after next/next_block returned 0. */
const struct gp_trace_end *gp_reader_end(const struct gp_reader *r);

/* File offset just after the last whole block read so far (the header's end
 * before the first block). */
uint64_t gp_reader_tell(const struct gp_reader *r);

void gp_reader_close(struct gp_reader *r);

/* Copy the text of a GP_REC_STRING group into buf (NUL-terminated, cut to
 * bufsz - 1); returns the full length. */
size_t gp_string_text(const union gp_rec *head, uint32_t nslots, char *buf, size_t bufsz);

#endif /* GP_READER_H */
