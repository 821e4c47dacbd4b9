/*
 * trace/reader.c — the streaming, bounds-checked trace reader (gp_reader.h)
 * used by report/, the `gpuphase` command, gpuphase-dump and the tests. One
 * reader object per thread.
 *
 * Memory is bounded by one input buffer (room for the largest legal stored
 * block plus read-ahead) and one decompressed block (GP_BLOCK_MAX_RAW), both
 * allocated at open, whatever the file claims. Every length, count and offset
 * taken from the file is checked against the format's limits and the bytes
 * actually present before it is used; LZ4 payloads are decoded with
 * LZ4_decompress_safe into a buffer of the declared (validated) size.
 *
 * Invariants: `pos` is the file offset just after the last whole block
 * handed out; the records of the current block are in `raw[0, raw_n)` and
 * every group in it was checked to lie inside the block; after an error every
 * later call returns the same error.
 */
#include <errno.h>
#include <fcntl.h>
#include <lz4.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gp_file.h"
#include "gp_reader.h"

#define GP_RD_READ_CHUNK (1u << 20)

struct gp_reader {
	int fd;
	char *path;
	struct gp_trace_info info;
	char *hdr;                 /* the whole header; kv strings copied out */
	char **keys, **values;
	/* input buffer: file bytes [buf_off, buf_off + buf_len) */
	unsigned char *buf;
	size_t buf_cap, buf_pos, buf_len;
	int eof;
	uint64_t pos;              /* offset after the last whole block        */
	uint64_t next_seq;
	union gp_rec *raw;         /* decoded block                            */
	size_t raw_n, raw_pos;
	struct gp_trace_end end;
	int state;                 /* 0 reading, 1 at end, <0 sticky error      */
	char errmsg[256];
};

static int gp_rd_fail(struct gp_reader *r, int rc, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Record a (sticky) error: message "PATH: problem". */
static int gp_rd_fail(struct gp_reader *r, int rc, char *err, size_t errlen, const char *fmt, ...)
{
	char msg[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->errmsg, sizeof(r->errmsg), "%s: %s", r->path, msg);
	if (err && errlen)
		snprintf(err, errlen, "%s", r->errmsg);
	r->state = rc;
	return rc;
}

static int gp_rd_sticky(struct gp_reader *r, char *err, size_t errlen)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", r->errmsg);
	return r->state;
}

/* Make `need` bytes available at buf + buf_pos if the file has them.
 * Returns the bytes available (less than need only at end of file), or
 * -errno on a read error. need <= buf_cap. */
static ssize_t gp_rd_fill(struct gp_reader *r, size_t need)
{
	size_t have = r->buf_len - r->buf_pos;
	if (have >= need || r->eof)
		return (ssize_t)have;
	if (r->buf_pos + need > r->buf_cap) {
		memmove(r->buf, r->buf + r->buf_pos, have);
		r->buf_pos = 0;
		r->buf_len = have;
	}
	while (r->buf_len - r->buf_pos < need) {
		size_t room = r->buf_cap - r->buf_len;
		if (room > GP_RD_READ_CHUNK && r->buf_len - r->buf_pos + GP_RD_READ_CHUNK >= need)
			room = GP_RD_READ_CHUNK;
		ssize_t n = read(r->fd, r->buf + r->buf_len, room);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {
			r->eof = 1;
			break;
		}
		r->buf_len += (size_t)n;
	}
	return (ssize_t)(r->buf_len - r->buf_pos);
}

/* Are all bytes from buf_pos to the end of the file zero? (A crash can
 * leave a zero-filled tail; that is truncation, not corruption.) Consumes
 * the buffer; *count gets the number of bytes examined. */
static int gp_rd_rest_is_zero(struct gp_reader *r, uint64_t *count)
{
	*count = 0;
	for (;;) {
		ssize_t have = gp_rd_fill(r, 1);
		if (have <= 0)
			return have == 0;
		for (ssize_t i = 0; i < have; i++)
			if (r->buf[r->buf_pos + (size_t)i])
				return 0;
		*count += (uint64_t)have;
		r->buf_pos = r->buf_len;
		if (r->eof)
			return 1;
	}
}

static int gp_rd_parse_header(struct gp_reader *r, char *err, size_t errlen)
{
	struct gp_file_header h;
	ssize_t have = gp_rd_fill(r, sizeof(h));
	if (have < 0)
		return gp_rd_fail(r, (int)have, err, errlen, "read error: %s", strerror((int)-have));
	if (have == 0)
		return gp_rd_fail(r, -ENODATA, err, errlen, "empty file (no gpuphase header)");
	if ((size_t)have < 8 ? memcmp(r->buf, GP_FILE_MAGIC, (size_t)have) != 0
			      : memcmp(r->buf, GP_FILE_MAGIC, 8) != 0)
		return gp_rd_fail(r, -EPROTO, err, errlen, "not a gpuphase trace (bad magic)");
	if ((size_t)have < sizeof(h))
		return gp_rd_fail(r, -ENODATA, err, errlen, "truncated header (%zd of %zu bytes)", have, sizeof(h));
	memcpy(&h, r->buf, sizeof(h));
	if (h.byte_order != GP_BYTE_ORDER_MARK)
		return gp_rd_fail(r, -EPROTO, err, errlen, "unsupported byte order mark 0x%08x (written on a big-endian host?)",
				  h.byte_order);
	if (h.version != GP_FORMAT_VERSION)
		return gp_rd_fail(r, -EPROTONOSUPPORT, err, errlen, "unknown format version %u (this reader knows %u)",
				  h.version, GP_FORMAT_VERSION);
	if (h.rec_size != GP_REC_SIZE)
		return gp_rd_fail(r, -EPROTO, err, errlen, "record size %u, expected %u", h.rec_size, GP_REC_SIZE);
	if (h.header_len < sizeof(h) || h.header_len > GP_HEADER_MAX_LEN || h.header_len % 8)
		return gp_rd_fail(r, -EPROTO, err, errlen, "bad header length %u", h.header_len);
	if (h.nkv > GP_HEADER_MAX_KV || h.nkv > (h.header_len - sizeof(h)) / sizeof(struct gp_file_kv))
		return gp_rd_fail(r, -EPROTO, err, errlen, "bad header key/value count %u", h.nkv);
	if (h.max_block_slots > GP_BLOCK_MAX_SLOTS)
		return gp_rd_fail(r, -EPROTO, err, errlen, "bad header: blocks of %u slots exceed the limit of %u", h.max_block_slots,
				  GP_BLOCK_MAX_SLOTS);
	have = gp_rd_fill(r, h.header_len);
	if (have < 0)
		return gp_rd_fail(r, (int)have, err, errlen, "read error: %s", strerror((int)-have));
	if ((size_t)have < h.header_len)
		return gp_rd_fail(r, -ENODATA, err, errlen, "truncated header (%zd of %u bytes)", have, h.header_len);
	r->hdr = malloc(h.header_len);
	if (!r->hdr)
		return gp_rd_fail(r, -ENOMEM, err, errlen, "out of memory");
	memcpy(r->hdr, r->buf + r->buf_pos, h.header_len);
	uint32_t want = h.hdr_crc;
	memset(r->hdr + offsetof(struct gp_file_header, hdr_crc), 0, sizeof(uint32_t));
	if (gp_crc32c(0, r->hdr, h.header_len) != want)
		return gp_rd_fail(r, -EBADMSG, err, errlen, "header checksum mismatch (corrupt header)");

	/* key/values: copy each into its own NUL-terminated string. */
	r->keys = calloc(h.nkv + 1u, sizeof(char *));
	r->values = calloc(h.nkv + 1u, sizeof(char *));
	if (!r->keys || !r->values)
		return gp_rd_fail(r, -ENOMEM, err, errlen, "out of memory");
	size_t off = sizeof(h);
	for (uint32_t i = 0; i < h.nkv; i++) {
		struct gp_file_kv e;
		if (h.header_len - off < sizeof(e))
			return gp_rd_fail(r, -EPROTO, err, errlen, "header key/value %u runs past the header", i);
		memcpy(&e, r->hdr + off, sizeof(e));
		off += sizeof(e);
		if (e.klen > h.header_len - off || e.vlen > h.header_len - off - e.klen)
			return gp_rd_fail(r, -EPROTO, err, errlen, "header key/value %u runs past the header", i);
		r->keys[i] = strndup(r->hdr + off, e.klen);
		r->values[i] = strndup(r->hdr + off + e.klen, e.vlen);
		if (!r->keys[i] || !r->values[i])
			return gp_rd_fail(r, -ENOMEM, err, errlen, "out of memory");
		off += (size_t)e.klen + e.vlen;
	}
	r->buf_pos += h.header_len;
	r->pos = h.header_len;
	r->info.version = h.version;
	r->info.clock_id = h.clock_id;
	r->info.clock_offset_ns = h.clock_offset_ns;
	r->info.start_wall_ns = h.start_wall_ns;
	r->info.start_clock_ns = h.start_clock_ns;
	r->info.pid = h.pid;
	r->info.nkv = h.nkv;
	r->info.keys = (const char *const *)r->keys;
	r->info.values = (const char *const *)r->values;
	return 0;
}

int gp_reader_open(const char *path, struct gp_reader **out, char *err, size_t errlen)
{
	struct stat st;
	struct gp_reader *r;
	int rc;

	*out = NULL;
	if (!path) {
		if (err && errlen)
			snprintf(err, errlen, "(null): no trace path given");
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		free(r);
		if (err && errlen)
			snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; anything but
	 * a regular file is refused below, before a read could block. */
	r->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (r->fd < 0) {
		rc = gp_rd_fail(r, -errno, err, errlen, "cannot open: %s", strerror(errno));
		goto fail;
	}
	if (fstat(r->fd, &st) != 0) {
		rc = gp_rd_fail(r, -errno, err, errlen, "cannot stat: %s", strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = gp_rd_fail(r, -EISDIR, err, errlen, "is a directory, not a trace file");
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = gp_rd_fail(r, -EINVAL, err, errlen, "not a regular file (a FIFO, socket or device is not a trace)");
		goto fail;
	}
	(void)fcntl(r->fd, F_SETFL, O_RDONLY); /* blocking again: a regular file */
	r->buf_cap = sizeof(struct gp_block_header) + (size_t)LZ4_compressBound(GP_BLOCK_MAX_RAW) + GP_RD_READ_CHUNK;
	r->buf = malloc(r->buf_cap);
	r->raw = aligned_alloc(64, GP_BLOCK_MAX_RAW);
	if (!r->buf || !r->raw) {
		rc = gp_rd_fail(r, -ENOMEM, err, errlen, "out of memory");
		goto fail;
	}
	if ((rc = gp_rd_parse_header(r, err, errlen)))
		goto fail;
	*out = r;
	return 0;
fail:
	gp_reader_close(r);
	return rc;
}

const struct gp_trace_info *gp_reader_info(const struct gp_reader *r)
{
	return &r->info;
}

/* The file ends here (after `pos`): note truncation and finish. */
static int gp_rd_finish(struct gp_reader *r, uint64_t truncated)
{
	r->end.truncated_bytes = truncated;
	r->state = 1;
	return 0;
}

static int gp_rd_footer(struct gp_reader *r, const struct gp_block_header *h, const unsigned char *p,
			char *err, size_t errlen)
{
	for (uint32_t i = 0; i < h->nslots; i++) {
		struct gp_footer_entry e;
		memcpy(&e, p + (size_t)i * sizeof(e), sizeof(e));
		switch (e.key) {
		case GP_FT_RECORDS:
			if (e.value != r->end.records)
				return gp_rd_fail(r, -EBADMSG, err, errlen,
						  "footer says %llu records were written, the file holds %llu",
						  (unsigned long long)e.value, (unsigned long long)r->end.records);
			break;
		case GP_FT_DROPPED_RING: r->end.dropped_ring = e.value; break;
		case GP_FT_DROPPED_CUPTI: r->end.dropped_cupti = e.value; break;
		case GP_FT_WRITE_ERRORS: r->end.write_errors = e.value; break;
		case GP_FT_END_REASON: r->end.end_reason = (int32_t)(int64_t)e.value; break;
		case GP_FT_LOST_AFTER_STOP: r->end.lost_after_stop = e.value; break;
		default:
			if (e.key >= GP_FT_TYPE_BASE && e.key - GP_FT_TYPE_BASE < GP_REC_TYPE_COUNT)
				r->end.footer_records[e.key - GP_FT_TYPE_BASE] = e.value;
			break; /* unknown keys: newer writer, ignored */
		}
	}
	ssize_t more = gp_rd_fill(r, 1);
	if (more != 0)
		return gp_rd_fail(r, more < 0 ? (int)more : -EBADMSG, err, errlen,
				  "data after the footer at offset %llu", (unsigned long long)r->pos);
	r->end.complete = 1;
	return gp_rd_finish(r, 0);
}

/* Load the next block into raw. 1 = data block loaded, 0 = end, <0 error. */
static int gp_rd_load(struct gp_reader *r, char *err, size_t errlen)
{
	struct gp_block_header h;
	const size_t hs = sizeof(h);

	if (r->state)
		return r->state > 0 ? 0 : gp_rd_sticky(r, err, errlen);
	ssize_t have = gp_rd_fill(r, hs);
	if (have < 0)
		return gp_rd_fail(r, (int)have, err, errlen, "read error: %s", strerror((int)-have));
	if (have == 0)
		return gp_rd_finish(r, 0); /* ends cleanly after a block, but no footer */
	if ((size_t)have < hs)
		return gp_rd_finish(r, (uint64_t)have);
	memcpy(&h, r->buf + r->buf_pos, hs);
	if (h.magic != GP_BLOCK_MAGIC && h.magic != GP_FOOTER_MAGIC) {
		uint64_t zeros;
		if (gp_rd_rest_is_zero(r, &zeros))
			return gp_rd_finish(r, zeros);
		return gp_rd_fail(r, -EBADMSG, err, errlen, "bad block magic 0x%08x at offset %llu (block %llu): corrupt file",
				  h.magic, (unsigned long long)r->pos, (unsigned long long)r->next_seq);
	}
	int footer = h.magic == GP_FOOTER_MAGIC;
	if (footer) {
		if (h.flags || h.nslots > GP_FOOTER_MAX_ENTRIES ||
		    h.raw_len != h.nslots * (uint32_t)sizeof(struct gp_footer_entry) || h.stored_len != h.raw_len)
			return gp_rd_fail(r, -EBADMSG, err, errlen, "bad footer header at offset %llu",
					  (unsigned long long)r->pos);
	} else {
		uint32_t bound = h.raw_len <= GP_BLOCK_MAX_RAW ? (uint32_t)LZ4_compressBound((int)h.raw_len) : 0;
		if ((h.flags & ~GP_BLOCKF_LZ4) || h.nslots == 0 || h.nslots > GP_BLOCK_MAX_SLOTS ||
		    h.raw_len != h.nslots * GP_REC_SIZE || h.stored_len == 0 ||
		    ((h.flags & GP_BLOCKF_LZ4) ? h.stored_len > bound : h.stored_len != h.raw_len))
			return gp_rd_fail(r, -EBADMSG, err, errlen,
					  "bad block header at offset %llu (block %llu: %u slots, %u bytes stored)",
					  (unsigned long long)r->pos, (unsigned long long)r->next_seq, h.nslots,
					  h.stored_len);
	}
	if (h.seq != r->next_seq)
		return gp_rd_fail(r, -EBADMSG, err, errlen, "block at offset %llu has sequence %llu, expected %llu",
				  (unsigned long long)r->pos, (unsigned long long)h.seq,
				  (unsigned long long)r->next_seq);
	have = gp_rd_fill(r, hs + h.stored_len);
	if (have < 0)
		return gp_rd_fail(r, (int)have, err, errlen, "read error: %s", strerror((int)-have));
	if ((size_t)have < hs + h.stored_len)
		return gp_rd_finish(r, (uint64_t)have);
	const unsigned char *p = r->buf + r->buf_pos + hs;
	uint32_t crc = gp_crc32c(0, r->buf + r->buf_pos, offsetof(struct gp_block_header, crc));
	if (gp_crc32c(crc, p, h.stored_len) != h.crc)
		return gp_rd_fail(r, -EBADMSG, err, errlen, "checksum mismatch in block %llu at offset %llu: corrupt file",
				  (unsigned long long)h.seq, (unsigned long long)r->pos);
	r->buf_pos += hs + h.stored_len;
	uint64_t at = r->pos;
	r->pos += hs + h.stored_len;
	r->next_seq++;
	if (footer)
		return gp_rd_footer(r, &h, p, err, errlen);

	if (h.flags & GP_BLOCKF_LZ4) {
		int n = LZ4_decompress_safe((const char *)p, (char *)r->raw, (int)h.stored_len, (int)h.raw_len);
		if (n != (int)h.raw_len)
			return gp_rd_fail(r, -EBADMSG, err, errlen, "block %llu at offset %llu does not decompress",
					  (unsigned long long)h.seq, (unsigned long long)at);
	} else {
		memcpy(r->raw, p, h.raw_len);
	}
	/* Every group must be well formed and lie inside the block. */
	for (uint32_t i = 0; i < h.nslots;) {
		const union gp_rec *g = &r->raw[i];
		if (g->type == GP_REC_INVALID)
			return gp_rd_fail(r, -EBADMSG, err, errlen, "invalid record type 0 in block %llu slot %u",
					  (unsigned long long)h.seq, i);
		uint32_t n = gp_rec_slots(g);
		if (n > h.nslots - i)
			return gp_rd_fail(r, -EBADMSG, err, errlen,
					  "record group of %u slots overruns block %llu at slot %u", n,
					  (unsigned long long)h.seq, i);
		i += n;
	}
	r->raw_n = h.nslots;
	r->raw_pos = 0;
	r->end.records += h.nslots;
	r->end.blocks++;
	return 1;
}

int gp_reader_next(struct gp_reader *r, const union gp_rec **rec, uint32_t *nslots, char *err, size_t errlen)
{
	while (r->raw_pos >= r->raw_n) {
		int rc = gp_rd_load(r, err, errlen);
		if (rc <= 0)
			return rc;
	}
	const union gp_rec *g = &r->raw[r->raw_pos];
	uint32_t n = gp_rec_slots(g);
	r->raw_pos += n;
	*rec = g;
	*nslots = n;
	return 1;
}

int gp_reader_next_block(struct gp_reader *r, const union gp_rec **recs, size_t *n, char *err, size_t errlen)
{
	if (r->raw_pos >= r->raw_n) {
		int rc = gp_rd_load(r, err, errlen);
		if (rc <= 0)
			return rc;
	}
	*recs = &r->raw[r->raw_pos];
	*n = r->raw_n - r->raw_pos;
	r->raw_pos = r->raw_n;
	return 1;
}

const struct gp_trace_end *gp_reader_end(const struct gp_reader *r)
{
	return &r->end;
}

uint64_t gp_reader_tell(const struct gp_reader *r)
{
	return r->pos;
}

void gp_reader_close(struct gp_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	for (size_t i = 0; r->keys && r->keys[i]; i++)
		free(r->keys[i]);
	for (size_t i = 0; r->values && r->values[i]; i++)
		free(r->values[i]);
	free(r->keys);
	free(r->values);
	free(r->hdr);
	free(r->buf);
	free(r->raw);
	free(r->path);
	free(r);
}

size_t gp_string_text(const union gp_rec *head, uint32_t nslots, char *buf, size_t bufsz)
{
	size_t len = head->string.len;
	size_t avail = GP_STRING_INLINE + (nslots ? (size_t)(nslots - 1u) * GP_REC_SIZE : 0);
	size_t have = len < avail ? len : avail;
	if (!bufsz)
		return len;
	size_t k = have < bufsz - 1 ? have : bufsz - 1;
	size_t first = k < GP_STRING_INLINE ? k : GP_STRING_INLINE;
	memcpy(buf, head->string.text, first);
	if (k > first)
		memcpy(buf + first, (const char *)(head + 1), k - first);
	buf[k] = 0;
	return len;
}
