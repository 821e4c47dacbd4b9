/*
 * trace/tests/test_trace_format.c — the trace file format end to end: what
 * goes in through gp_collector_emit/intern (the collector's real writer
 * thread) comes out of gp_reader byte for byte, with the header and footer
 * the contract (docs/format.md) promises; a file cut at any byte reads up to
 * its last whole block and says how much was cut; corrupt checksums, bad
 * headers and non-trace inputs give clear errors.
 * Each Criterion test runs in its own process, so collector state is fresh.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/wait.h>
#include "collector/tests/tutil.h"
#include "gp_file.h"

static union gp_rec mk_api(uint32_t i)
{
	union gp_rec r;
	memset(&r, 0, sizeof(r));
	r.api.type = GP_REC_HOOK_API;
	r.api.class_flags = GP_API_LAUNCH;
	r.api.api_id = (uint16_t)(i % 7);
	r.api.tid = 1234;
	r.api.start = 1000000ull + i * 5000ull;
	r.api.dur = 3000 + i % 100;
	r.api.corr = i;
	r.api.stream = 2;
	return r;
}

/* Skip the GP_REC_THREAD record (and its name string) that every ring starts
 * with; returns the index of the first group after them. */
static size_t skip_thread_intro(const struct tu_trace *t, size_t g)
{
	while (g < t->ngroups && (t->recs[t->group[g]].type == GP_REC_THREAD ||
				  t->recs[t->group[g]].type == GP_REC_STRING))
		g++;
	return g;
}

Test(format, round_trip)
{
	const char *path = tu_path("rt.gpht");
	struct gp_kv kv[] = { { "window", "all" }, { "cuda_runtime", "13000" } };
	struct gp_collector_config c = tu_config(path, 1024);
	c.kv = kv;
	c.nkv = 2;
	c.clock_offset_ns = -42;
	cr_assert_eq(gp_collector_start(&c), 0);
	cr_assert_eq(gp_collector_start(&c), -EBUSY, "a second start is refused");

	/* a long string (3000 bytes, not a multiple of anything) and a stack */
	static char longname[3000];
	for (size_t i = 0; i < sizeof(longname); i++)
		longname[i] = (char)('a' + i % 26);
	uint32_t id_long = gp_collector_intern(longname, sizeof(longname));
	uint32_t id_k = gp_collector_intern("kernel_a", 8);
	cr_assert_gt(id_long, 0);
	cr_assert_gt(id_k, 0);
	cr_assert_neq(id_long, id_k);
	cr_assert_eq(gp_collector_intern("kernel_a", 8), id_k, "seen text: same id");

	const uint32_t N = 10000; /* several blocks */
	uint64_t refused = 0;
	for (uint32_t i = 0; i < N; i++) {
		union gp_rec r = mk_api(i);
		while (gp_collector_emit(&r, 1) == -ENOBUFS) {
			refused++;
			usleep(100);
		}
	}
	cr_assert_eq(gp_collector_dropped(), refused);
	union gp_rec st[3];
	memset(st, 0, sizeof(st));
	st[0].stack.type = GP_REC_STACK;
	st[0].stack.id = 9;
	st[0].stack.depth = 7; /* 2 inline + 5 in 2 continuation slots */
	uint64_t pcs[8] = { 1, 2, 3, 4, 5, 6, 7, 0 };
	memcpy(st[0].stack.pc, pcs, 16);
	memcpy(&st[1], pcs + 2, 32);
	memcpy(&st[2], pcs + 6, 16);
	cr_assert_eq(gp_collector_emit(st, 2), -EINVAL, "wrong slot count refused");
	cr_assert_eq(gp_collector_emit(st, 3), 0);
	gp_collector_stop();
	gp_collector_stop(); /* idempotent */
	cr_assert_eq(gp_collector_emit(st, 3), -EPIPE);

	struct stat sb;
	cr_assert_eq(stat(path, &sb), 0);
	cr_assert_eq(sb.st_mode & 0777, 0600);

	struct gp_reader *rd;
	char err[256];
	cr_assert_eq(gp_reader_open(path, &rd, err, sizeof(err)), 0, "%s", err);
	const struct gp_trace_info *in = gp_reader_info(rd);
	cr_assert_eq(in->version, GP_FORMAT_VERSION);
	cr_assert_eq(in->clock_id, CLOCK_MONOTONIC);
	cr_assert_eq(in->clock_offset_ns, -42);
	cr_assert_eq(in->pid, (uint32_t)getpid());
	int seen_window = 0, seen_host = 0, seen_cmd = 0;
	for (size_t i = 0; i < in->nkv; i++) {
		if (!strcmp(in->keys[i], "window"))
			seen_window = !strcmp(in->values[i], "all");
		seen_host |= !strcmp(in->keys[i], "host");
		seen_cmd |= !strcmp(in->keys[i], "cmdline");
	}
	cr_assert(seen_window && seen_host && seen_cmd);
	gp_reader_close(rd);

	struct tu_trace t = tu_read(path);
	cr_assert_eq(t.rc, 0, "%s", t.err);
	cr_assert_eq(t.end.complete, 1);
	cr_assert_eq(t.end.truncated_bytes, 0);
	cr_assert_eq(t.end.dropped_ring, refused, "every refused emit is a counted drop");
	cr_assert_gt(t.end.blocks, 2);
	size_t g = 0;
	/* the ring opens with the thread's name string and GP_REC_THREAD */
	cr_assert(t.recs[t.group[0]].type == GP_REC_THREAD ||
		  (t.recs[t.group[0]].type == GP_REC_STRING && t.recs[t.group[1]].type == GP_REC_THREAD));
	/* the interned strings come in order, ahead of their users */
	for (; g < t.ngroups && t.recs[t.group[g]].type != GP_REC_HOOK_API; g++) {
		const union gp_rec *h = &t.recs[t.group[g]];
		if (h->type != GP_REC_STRING || h->string.id != id_long)
			continue;
		static char back[4000];
		uint32_t ns = gp_rec_slots(h);
		cr_assert_eq(ns, 1 + (3000 - 16 + 31) / 32);
		cr_assert_eq(gp_string_text(h, ns, back, sizeof(back)), 3000);
		cr_assert_eq(memcmp(back, longname, 3000), 0, "long string intact");
	}
	/* GP_REC_DROPS records (cumulative, this ring's) may come between the
	 * records whenever the count changed; the last one holds the total. */
	uint64_t last_drops = 0, prev_drops = 0;
	size_t ndrops = 0;
#define SKIP_DROPS()                                                                          \
	while (g < t.ngroups && t.recs[t.group[g]].type == GP_REC_DROPS) {                    \
		const union gp_rec *d = &t.recs[t.group[g++]];                                \
		cr_assert_eq(d->drops.source, GP_DROP_RING);                                  \
		cr_assert_eq(d->drops.tid, (uint32_t)gettid());                               \
		cr_assert_gt(d->drops.dropped, prev_drops, "cumulative, only when changed"); \
		prev_drops = last_drops = d->drops.dropped;                                   \
		ndrops++;                                                                     \
	}
	for (uint32_t i = 0; i < N; i++, g++) {
		union gp_rec want = mk_api(i);
		SKIP_DROPS();
		cr_assert_lt(g, t.ngroups);
		cr_assert_eq(memcmp(&t.recs[t.group[g]], &want, 32), 0, "record %u intact", i);
	}
	SKIP_DROPS();
	cr_assert_eq(memcmp(&t.recs[t.group[g]], st, sizeof(st)), 0, "stack group intact");
	g++;
	SKIP_DROPS();
	cr_assert_eq(last_drops, refused, "the last drop record has the total");
	cr_assert_eq(ndrops > 0, refused > 0);
	cr_assert_eq(g, t.ngroups, "nothing after the last record");
	cr_assert_eq(t.end.records, t.nslots);
	cr_assert_eq(t.end.footer_records[GP_REC_HOOK_API], N);
	cr_assert_eq(t.end.footer_records[GP_REC_STACK], 1);
	cr_assert_eq(t.end.footer_records[GP_REC_THREAD], 1);
	tu_free(&t);
	(void)skip_thread_intro;
}

/* A small trace of several blocks: a few records, then a pause longer than
 * flush_ms so the writer seals a block, five times over. */
static const char *small_trace(const char *name, int blocks)
{
	const char *path = tu_path(name);
	struct gp_collector_config c = tu_config(path, 256);
	c.flush_ms = 5;
	cr_assert_eq(gp_collector_start(&c), 0);
	for (int b = 0; b < blocks; b++) {
		for (uint32_t i = 0; i < 7; i++) {
			union gp_rec r = mk_api((uint32_t)b * 100u + i);
			cr_assert_eq(gp_collector_emit(&r, 1), 0);
		}
		gp_collector_intern("a_name_longer_than_sixteen_bytes", 32);
		usleep(40000);
	}
	gp_collector_stop();
	return path;
}

struct block_map {
	uint64_t hdr_len;
	uint64_t end[64];     /* file offset after each data block */
	uint64_t slots[64];   /* slots up to and including that block */
	int n;
	uint64_t size;
};

static struct block_map map_blocks(const char *path)
{
	struct block_map m;
	struct gp_reader *r;
	char err[256];
	const union gp_rec *recs;
	size_t n;
	struct stat sb;
	memset(&m, 0, sizeof(m));
	cr_assert_eq(gp_reader_open(path, &r, err, sizeof(err)), 0, "%s", err);
	m.hdr_len = gp_reader_tell(r);
	uint64_t total = 0;
	int rc;
	while ((rc = gp_reader_next_block(r, &recs, &n, err, sizeof(err))) == 1) {
		cr_assert_lt(m.n, 64);
		total += n;
		m.end[m.n] = gp_reader_tell(r);
		m.slots[m.n++] = total;
	}
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(gp_reader_end(r)->complete, 1);
	gp_reader_close(r);
	cr_assert_eq(stat(path, &sb), 0);
	m.size = (uint64_t)sb.st_size;
	return m;
}

/* Cut the file at every byte: the reader must never fail or crash on a
 * cut after the header, must return exactly the records of the whole
 * blocks before the cut, and must say how many bytes were cut off. */
Test(format, truncation_at_every_byte)
{
	const char *path = small_trace("trunc.gpht", 5);
	struct block_map m = map_blocks(path);
	cr_assert_geq(m.n, 3, "several blocks (%d)", m.n);
	size_t len;
	unsigned char *b = tu_slurp(path, &len);
	cr_assert_eq(len, m.size);
	char cut[512];
	snprintf(cut, sizeof(cut), "%s", tu_path("cut.gpht"));
	for (size_t L = 0; L < len; L++) {
		tu_spit(cut, b, L);
		struct tu_trace t = tu_read(cut);
		if (L < m.hdr_len) {
			cr_assert_lt(t.rc, 0, "cut at %zu inside the header must fail", L);
			cr_assert(strstr(t.err, L ? "truncated header" : "empty file"), "L=%zu: %s", L, t.err);
			cr_assert(strstr(t.err, cut), "message names the file");
			tu_free(&t);
			continue;
		}
		cr_assert_eq(t.rc, 0, "cut at %zu: %s", L, t.err);
		uint64_t want_slots = 0, last_end = m.hdr_len;
		for (int i = 0; i < m.n; i++)
			if (m.end[i] <= L) {
				want_slots = m.slots[i];
				last_end = m.end[i];
			}
		cr_assert_eq(t.nslots, want_slots, "cut at %zu: records of whole blocks", L);
		cr_assert_eq(t.end.truncated_bytes, L - last_end, "cut at %zu: bytes cut", L);
		cr_assert_eq(t.end.complete, 0);
		/* and what it returns is what the full file holds */
		tu_free(&t);
	}
	struct tu_trace full = tu_read(path);
	cr_assert_eq(full.rc, 0);
	cr_assert_eq(full.end.complete, 1);
	cr_assert_eq(full.nslots, m.slots[m.n - 1]);
	tu_free(&full);
	free(b);
}

/* Flip each byte after the header in turn (one at a time): every flip is
 * reported as corruption with a message naming the file, never a crash and
 * never silently different data. */
Test(format, every_corrupt_byte_is_detected)
{
	const char *path = small_trace("crc.gpht", 3);
	struct block_map m = map_blocks(path);
	size_t len;
	unsigned char *b = tu_slurp(path, &len);
	char bad[512];
	snprintf(bad, sizeof(bad), "%s", tu_path("bad.gpht"));
	int crc_msgs = 0;
	for (size_t i = 0; i < len; i++) {
		b[i] ^= 0x5a;
		tu_spit(bad, b, len);
		b[i] ^= 0x5a;
		struct tu_trace t = tu_read(bad);
		cr_assert_lt(t.rc, 0, "flip at %zu not detected", i);
		cr_assert(strstr(t.err, bad), "message names the file: %s", t.err);
		if (i >= m.hdr_len && strstr(t.err, "checksum mismatch"))
			crc_msgs++;
		if (i < m.hdr_len)
			cr_assert(strstr(t.err, "bad magic") || strstr(t.err, "version") || strstr(t.err, "checksum") ||
				  strstr(t.err, "byte order") || strstr(t.err, "header") || strstr(t.err, "record size"),
				  "flip at %zu: %s", i, t.err);
		tu_free(&t);
	}
	cr_assert_gt(crc_msgs, (int)(len - m.hdr_len) / 2, "payload flips are checksum errors");
	free(b);
}

/* Rewrite a header field and fix the header checksum, so the field check
 * itself (not the checksum) must catch it. */
static void patch_header(unsigned char *b, size_t len, size_t off, uint32_t v)
{
	struct gp_file_header h;
	memcpy(b + off, &v, 4);
	memcpy(&h, b, sizeof(h));
	uint32_t zero = 0;
	memcpy(b + offsetof(struct gp_file_header, hdr_crc), &zero, 4);
	uint32_t c = gp_crc32c(0, b, h.header_len <= len ? h.header_len : len);
	memcpy(b + offsetof(struct gp_file_header, hdr_crc), &c, 4);
}

static void expect_open_error(const char *path, int rc_want, const char *msg)
{
	struct gp_reader *r = (struct gp_reader *)1;
	char err[256] = "";
	int rc = gp_reader_open(path, &r, err, sizeof(err));
	cr_assert_eq(rc, rc_want, "%s: rc %d (%s)", path, rc, err);
	cr_assert_null(r);
	cr_assert(strstr(err, msg), "'%s' should mention '%s'", err, msg);
	cr_assert(strstr(err, path), "'%s' should name the file", err);
}

Test(format, bad_headers_and_inputs)
{
	const char *path = small_trace("hdr.gpht", 1);
	size_t len;
	unsigned char *b = tu_slurp(path, &len), *c = malloc(len);
	char p[512];
	snprintf(p, sizeof(p), "%s", tu_path("h.gpht"));

	memcpy(c, b, len);
	c[0] = 'X';
	tu_spit(p, c, len);
	expect_open_error(p, -EPROTO, "bad magic");

	memcpy(c, b, len);
	patch_header(c, len, offsetof(struct gp_file_header, version), 99);
	tu_spit(p, c, len);
	expect_open_error(p, -EPROTONOSUPPORT, "unknown format version 99");

	memcpy(c, b, len);
	patch_header(c, len, offsetof(struct gp_file_header, byte_order), 0x04030201u);
	tu_spit(p, c, len);
	expect_open_error(p, -EPROTO, "byte order");

	memcpy(c, b, len);
	patch_header(c, len, offsetof(struct gp_file_header, header_len), 0xfffffff8u);
	tu_spit(p, c, len);
	expect_open_error(p, -EPROTO, "bad header length");

	memcpy(c, b, len);
	patch_header(c, len, offsetof(struct gp_file_header, nkv), 0x7fffffffu);
	tu_spit(p, c, len);
	expect_open_error(p, -EPROTO, "key/value count");

	memcpy(c, b, len);
	c[100] ^= 1; /* inside the key/value area */
	tu_spit(p, c, len);
	expect_open_error(p, -EBADMSG, "header checksum");

	tu_spit(p, "", 0);
	expect_open_error(p, -ENODATA, "empty file");
	tu_spit(p, "GPHT", 4);
	expect_open_error(p, -ENODATA, "truncated header");
	/* not a regular file: refused before any read (a FIFO would block) */
	expect_open_error("/dev/zero", -EINVAL, "not a regular file");
	char fifo[64];
	snprintf(fifo, sizeof fifo, "/tmp/gp_fmt_fifo.%d", (int)getpid());
	unlink(fifo);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	expect_open_error(fifo, -EINVAL, "not a regular file");
	unlink(fifo);
	expect_open_error("/tmp", -EISDIR, "directory");
	expect_open_error("/nonexistent/trace.gpht", -ENOENT, "cannot open");
	free(b);
	free(c);
}

/* A block header with valid checksum but absurd sizes: refused before
 * any allocation or read of that size. */
static void write_block(unsigned char *dst, uint32_t magic, uint32_t flags, uint64_t seq, uint32_t nslots,
			uint32_t stored, uint32_t raw, const void *payload, uint32_t plen)
{
	struct gp_block_header h = { magic, flags, seq, nslots, stored, raw, 0 };
	uint32_t crc = gp_crc32c(0, &h, offsetof(struct gp_block_header, crc));
	h.crc = gp_crc32c(crc, payload, plen);
	memcpy(dst, &h, sizeof(h));
	memcpy(dst + sizeof(h), payload, plen);
}

Test(format, bad_blocks)
{
	const char *path = small_trace("blk.gpht", 1);
	struct block_map m = map_blocks(path);
	size_t len;
	unsigned char *b = tu_slurp(path, &len);
	unsigned char *c = calloc(1, m.hdr_len + 4096);
	char p[512];
	snprintf(p, sizeof(p), "%s", tu_path("b.gpht"));
	union gp_rec recs[4];
	memset(recs, 0, sizeof(recs));
	recs[0].type = GP_REC_KERNEL;
	recs[1].type = GP_REC_KERNEL;
	struct { uint32_t magic, flags, nslots, stored, raw; const char *msg; } cases[] = {
		{ GP_BLOCK_MAGIC, 0, 0x7fffffffu, 64, 64, "bad block header" },       /* huge count   */
		{ GP_BLOCK_MAGIC, 1, 2, 0x7fffffffu, 64, "bad block header" },        /* huge stored  */
		{ GP_BLOCK_MAGIC, 0, 2, 64, 0x7fffffffu, "bad block header" },        /* huge raw     */
		{ GP_BLOCK_MAGIC, 0x80, 2, 64, 64, "bad block header" },              /* unknown flag */
		{ GP_BLOCK_MAGIC, 1, 2, 64, 64, "does not decompress" },              /* not LZ4      */
		{ GP_FOOTER_MAGIC, 0, 100000, 16, 16, "bad footer" },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		memcpy(c, b, m.hdr_len);
		write_block(c + m.hdr_len, cases[k].magic, cases[k].flags, 0, cases[k].nslots, cases[k].stored,
			    cases[k].raw, recs, 64);
		tu_spit(p, c, m.hdr_len + 32 + 64);
		struct tu_trace t = tu_read(p);
		cr_assert_eq(t.rc, -EBADMSG, "case %zu: rc %d %s", k, t.rc, t.err);
		cr_assert(strstr(t.err, cases[k].msg), "case %zu: %s", k, t.err);
		tu_free(&t);
	}
	/* a string group that claims more continuation slots than the block has */
	memset(recs, 0, sizeof(recs));
	recs[0].string.type = GP_REC_STRING;
	recs[0].string.len = 1000;
	memcpy(c, b, m.hdr_len);
	write_block(c + m.hdr_len, GP_BLOCK_MAGIC, 0, 0, 2, 64, 64, recs, 64);
	tu_spit(p, c, m.hdr_len + 96);
	struct tu_trace t = tu_read(p);
	cr_assert_eq(t.rc, -EBADMSG);
	cr_assert(strstr(t.err, "overruns"), "%s", t.err);
	tu_free(&t);
	/* type 0 */
	memset(recs, 0, sizeof(recs));
	write_block(c + m.hdr_len, GP_BLOCK_MAGIC, 0, 0, 2, 64, 64, recs, 64);
	tu_spit(p, c, m.hdr_len + 96);
	t = tu_read(p);
	cr_assert_eq(t.rc, -EBADMSG);
	cr_assert(strstr(t.err, "invalid record type"), "%s", t.err);
	tu_free(&t);
	/* wrong sequence number */
	recs[0].type = recs[1].type = GP_REC_KERNEL;
	write_block(c + m.hdr_len, GP_BLOCK_MAGIC, 0, 5, 2, 64, 64, recs, 64);
	tu_spit(p, c, m.hdr_len + 96);
	t = tu_read(p);
	cr_assert_eq(t.rc, -EBADMSG);
	cr_assert(strstr(t.err, "sequence"), "%s", t.err);
	tu_free(&t);
	/* a zero-filled tail (what a crash can leave) is truncation, not corruption */
	unsigned char *z = calloc(1, len + 5000);
	memcpy(z, b, len);
	size_t keep = (size_t)m.end[0];
	memset(z + keep, 0, len + 5000 - keep);
	tu_spit(p, z, len + 5000);
	t = tu_read(p);
	cr_assert_eq(t.rc, 0, "%s", t.err);
	cr_assert_eq(t.nslots, m.slots[0]);
	cr_assert_eq(t.end.truncated_bytes, len + 5000 - keep);
	tu_free(&t);
	free(z);
	free(b);
	free(c);
}

Test(format, crc32c_known_values_and_paths_agree)
{
	cr_assert_eq(gp_crc32c(0, "123456789", 9), 0xE3069283u, "CRC32C check value");
	cr_assert_eq(gp_crc32c_sw(0, "123456789", 9), 0xE3069283u);
	cr_assert_eq(gp_crc32c(0, "", 0), 0u);
	static unsigned char buf[4099];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (unsigned char)(x >> 16);
	}
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len + off <= sizeof(buf); len += 1 + len / 3) {
			uint32_t a = gp_crc32c(0, buf + off, len), b = gp_crc32c_sw(0, buf + off, len);
			cr_assert_eq(a, b, "off %zu len %zu", off, len);
			/* running value: two pieces give the same as one */
			size_t h = len / 2;
			cr_assert_eq(gp_crc32c(gp_crc32c(0, buf + off, h), buf + off + h, len - h), a);
		}
}

/* gpuphase-dump prints one line per record group plus '#' header/summary
 * lines, and fails with the reader's message on a bad file. */
Test(format, dump_tool)
{
	const char *b = getenv("GP_BUILD");
	char cmd[2048], out[512], bad[512];
	const char *path = small_trace("dump.gpht", 2);
	snprintf(out, sizeof(out), "%s", tu_path("dump.txt"));
	snprintf(cmd, sizeof(cmd), "'%s/bin/gpuphase-dump' '%s' > '%s' 2>&1", b && *b ? b : "build", path, out);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	struct tu_trace t = tu_read(path);
	cr_assert_eq(t.rc, 0);
	FILE *f = fopen(out, "r");
	cr_assert_not_null(f);
	char line[4096];
	size_t recs = 0, kernels = 0, apis = 0;
	int end_line = 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#') {
			end_line |= strncmp(line, "# end complete=1", 16) == 0;
			continue;
		}
		recs++;
		kernels += strncmp(line, "kernel ", 7) == 0;
		apis += strncmp(line, "hook_api ", 9) == 0;
	}
	fclose(f);
	cr_assert_eq(recs, t.ngroups, "one line per record group");
	cr_assert_eq(apis, 14, "the 2 x 7 api records");
	cr_assert(end_line);
	tu_free(&t);
	snprintf(bad, sizeof(bad), "%s", tu_path("notatrace"));
	tu_spit(bad, "hello world, not a trace at all, definitely not one", 50);
	snprintf(cmd, sizeof(cmd), "'%s/bin/gpuphase-dump' '%s' > '%s' 2>&1", b && *b ? b : "build", bad, out);
	int st = system(cmd);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	size_t n;
	unsigned char *txt = tu_slurp(out, &n);
	txt[n] = 0;
	cr_assert(strstr((char *)txt, "not a gpuphase trace (bad magic)"), "%s", txt);
	free(txt);
}
