/*
 * header.c — the trace file's header (docs/format.md, gp_file.h): the fixed
 * part, the caller's key/values, and the keys the collector adds itself
 * (host, cmdline, collector.*). The writer builds it once per session and
 * writes it at the start of every file (a duty cycle writes several).
 *
 * Threads: the control thread, under the collector's control lock, in
 * gp_writer_open. Invariants: the header is 8-byte aligned, its CRC covers
 * every byte of it, and it never exceeds GP_HEADER_MAX_LEN / _KV.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "gp_collector_int.h"

struct gp_hdr_buf {
	char *p;
	size_t len, cap;
};

static int gp_hdr_put(struct gp_hdr_buf *b, const void *src, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
	return 0;
}

static int gp_hdr_kv(struct gp_hdr_buf *b, uint32_t *nkv, const char *k, const char *v, size_t vlen)
{
	struct gp_file_kv e = { (uint32_t)strlen(k), (uint32_t)vlen };
	if (strlen(k) > UINT32_MAX / 4 || vlen > UINT32_MAX / 4)
		return -EINVAL;
	if (gp_hdr_put(b, &e, sizeof(e)) || gp_hdr_put(b, k, e.klen) || gp_hdr_put(b, v, vlen))
		return -ENOMEM;
	(*nkv)++;
	return 0;
}

static int gp_hdr_has(const struct gp_collector_config *cfg, const char *key)
{
	for (size_t i = 0; i < cfg->nkv; i++)
		if (cfg->kv[i].key && strcmp(cfg->kv[i].key, key) == 0)
			return 1;
	return 0;
}

static int gp_header_fill(const struct gp_collector_config *cfg, uint64_t flush_ns, uint64_t max_bytes,
			  struct gp_hdr_buf *b)
{
	struct gp_file_header h;
	struct timespec tw, tc;
	uint32_t nkv = 0;
	int rc;
	char tmp[256];

	memset(&h, 0, sizeof(h));
	if ((rc = gp_hdr_put(b, &h, sizeof(h))))
		return rc;
	for (size_t i = 0; i < cfg->nkv; i++) {
		const char *k = cfg->kv[i].key, *v = cfg->kv[i].value ? cfg->kv[i].value : "";
		if (!k)
			continue;
		if ((rc = gp_hdr_kv(b, &nkv, k, v, strlen(v))))
			return rc;
	}
	if (!gp_hdr_has(cfg, "host") && gethostname(tmp, sizeof(tmp)) == 0) {
		tmp[sizeof(tmp) - 1] = 0;
		if ((rc = gp_hdr_kv(b, &nkv, "host", tmp, strlen(tmp))))
			return rc;
	}
	if (!gp_hdr_has(cfg, "cmdline")) {
		char cl[4096];
		ssize_t n = 0;
		int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			n = read(fd, cl, sizeof(cl));
			close(fd);
		}
		if (n > 0) {
			for (ssize_t i = 0; i < n; i++)
				if (cl[i] == 0)
					cl[i] = ' ';
			while (n > 0 && cl[n - 1] == ' ')
				n--;
			if ((rc = gp_hdr_kv(b, &nkv, "cmdline", cl, (size_t)n)))
				return rc;
		}
	}
	snprintf(tmp, sizeof(tmp), "%u", gp_g.ring_records);
	if ((rc = gp_hdr_kv(b, &nkv, "collector.ring_records", tmp, strlen(tmp))))
		return rc;
	snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)(flush_ns / 1000000u));
	if ((rc = gp_hdr_kv(b, &nkv, "collector.flush_ms", tmp, strlen(tmp))))
		return rc;
	snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)max_bytes);
	if ((rc = gp_hdr_kv(b, &nkv, "collector.max_bytes", tmp, strlen(tmp))))
		return rc;
	if ((rc = gp_hdr_kv(b, &nkv, "collector.compression", "lz4", 3)))
		return rc;
	static const char zeros[8];
	if ((rc = gp_hdr_put(b, zeros, (8 - b->len % 8) % 8)))
		return rc;
	if (b->len > GP_HEADER_MAX_LEN || nkv > GP_HEADER_MAX_KV)
		return -E2BIG;

	memcpy(h.magic, GP_FILE_MAGIC, 8);
	h.version = GP_FORMAT_VERSION;
	h.byte_order = GP_BYTE_ORDER_MARK;
	h.rec_size = GP_REC_SIZE;
	h.header_len = (uint32_t)b->len;
	h.clock_id = cfg->clock_id;
	h.clock_offset_ns = cfg->clock_offset_ns;
	clock_gettime(CLOCK_REALTIME, &tw);
	clock_gettime((clockid_t)cfg->clock_id, &tc);
	h.start_wall_ns = (uint64_t)tw.tv_sec * 1000000000ull + (uint64_t)tw.tv_nsec;
	h.start_clock_ns = (uint64_t)tc.tv_sec * 1000000000ull + (uint64_t)tc.tv_nsec;
	h.pid = (uint32_t)getpid();
	h.nkv = nkv;
	h.max_block_slots = GP_BLOCK_MAX_SLOTS;
	memcpy(b->p, &h, sizeof(h));
	h.hdr_crc = gp_crc32c(0, b->p, b->len);
	memcpy(b->p, &h, sizeof(h));
	return 0;
}

int gp_header_build(const struct gp_collector_config *cfg, uint64_t flush_ns, uint64_t max_bytes, char **p,
		    size_t *len)
{
	struct gp_hdr_buf b = { 0 };
	int rc = gp_header_fill(cfg, flush_ns, max_bytes, &b);
	if (rc) {
		free(b.p);
		return rc;
	}
	*p = b.p;
	*len = b.len;
	return 0;
}
