/*
 * writer.c — the writer thread: it drains every ring into blocks and writes
 * the trace file (docs/format.md, gp_file.h), from the header that
 * gp_writer_open writes to the footer that gp_writer_finish appends. The
 * session around it (gp_collector_start / stop / forget) is collector.c's.
 *
 * Threads: gp_writer_open / launch / stop / forget run on the thread that
 * controls capture, serialised by collector.c's control lock (stop is safe
 * from atexit). Everything else named gp_writer_* runs on the writer thread
 * only, which owns all of `W` except the control fields documented below.
 * Producers never talk to the writer:
 * they publish into their rings and the writer polls, sleeping between passes
 * (1 ms after a pass that found data, backing off to flush_ms / 2 when idle),
 * so no producer ever makes a syscall for a record.
 *
 * Invariants: records sit at most about flush_ms in a ring plus the block and
 * output buffers (an idle pass, or a pending age of flush_ms, seals the block
 * and writes); a group never straddles blocks; after a write error nothing more
 * is written (the file stays readable up to its last whole block) and later
 * records are drained and counted as lost so producers keep running; the
 * max_bytes cap — and RLIMIT_FSIZE as it was at start — keep room for the
 * footer, so a capped file still ends with
 * one. All signals are blocked in the writer thread, so SIGXFSZ turns into
 * EFBIG instead of killing the host. After a write error the file is cut back
 * (ftruncate) to the end of the last write that completed, and stop then tries
 * to append the footer there, so the trace says why capture ended (ENOSPC,
 * EIO, EFBIG) — on a full disk giving up trailing data blocks until it fits;
 * if the cut or the footer still fails, the file simply has no footer.
 *
 * Fault injection (test builds only, -DGP_FAULT_INJECTION, as SQLite does):
 * gp_fault_write_* below make the Nth write(2) of a trace fail, optionally
 * after a short write, so ENOSPC/EIO paths run on any machine
 * (tests/reliability/test_rel_faults.c).
 */
#include <fcntl.h>
#include <limits.h>
#include <lz4.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gp_collector_int.h"
#include "gp_fd.h"

#define GP_OUT_FLUSH (1u << 20)           /* write(2) once this much is buffered */
#define GP_NAP_MIN_NS 1000000ull          /* sleep after a pass that found data  */
/* LZ4 acceleration: on the record mix, 4 gives smaller blocks than 1 (13.5
 * vs 14.1 B/record) and ~30% faster decompression for the report; see
 * docs/format.md. */
#define GP_LZ4_ACCELERATION 4
#define GP_FOOTER_RESERVE (sizeof(struct gp_block_header) + \
			   (16u + 256u) * sizeof(struct gp_footer_entry))

static struct {
	/* Control fields: written by the control thread (gp_writer_launch,
	 * gp_writer_stop) under the collector's control lock. */
	pthread_t thread;
	pthread_mutex_t mu;             /* protects the wait on cv only       */
	pthread_cond_t cv;
	_Atomic int stop_req;           /* release store in stop, acquire load
	                                   in the writer loop (the pair)      */
	/* Set by start before the thread exists, then writer-only. */
	int fd;
	char *path;
	uint64_t gen;
	uint64_t flush_ns;
	uint64_t max_bytes;
	uint64_t fsize_limit;           /* RLIMIT_FSIZE at start, 0 = none    */
	uint64_t header_len;            /* the file header's bytes            */
	union gp_rec *blk;              /* block being filled                 */
	uint32_t blk_n;
	union gp_rec *scratch;          /* a wrapped group, made contiguous   */
	char *out;                      /* sealed blocks waiting for write(2) */
	size_t out_len, out_cap;
	uint64_t out_slots;             /* slots in out (lost if write fails) */
	uint64_t pending_since;         /* first unflushed data, 0 = none     */
	uint64_t committed;             /* bytes written or queued in out     */
	uint64_t file_off;              /* bytes of the file known complete   */
	uint64_t file_seq;              /* seq of the first block not in it   */
	uint64_t out_blocks;            /* blocks in out (lost if write fails)*/
	uint64_t out_types[256];        /* head records per type in out       */
	uint64_t seq, records, blocks, dropped_ring, dropped_cupti;
	uint64_t write_errors, lost, nrings;
	uint64_t type_counts[256];
	int32_t end_reason;
	uint64_t cpu_ns;                /* writer thread CPU time, at its end  */
	uint64_t invariant_reported;    /* GP_NEVER count last put in the trace */
	int io_failed;                  /* no byte more may be written        */
	int capped;                     /* data refused, footer still allowed */
	/* Duty cycle (windows.c): each window its own file. */
	int windows;
	char *dir;                      /* the windows directory              */
	uint64_t keep_bytes;            /* its cap                            */
	uint64_t win_seq;               /* SEQ of the file being written      */
	_Atomic uint64_t win_closed;    /* SEQ of the last renamed file       */
	uint64_t file_windows;          /* window starts in the current file  */
	int replaying;                  /* writing definitions again          */
	char *hdr;                      /* the header every file repeats      */
	size_t hdr_len;
	pthread_cond_t done_cv;         /* rotate_done moved (under mu)       */
	_Atomic uint64_t rotate_req;    /* rotations asked (fetch_add under mu)*/
	uint64_t rotate_done;           /* rotations done (under mu)          */
	unsigned file_mode;
} W;

static uint64_t gp_writer_mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

#ifdef GP_FAULT_INJECTION
int gp_fault_write_nth;   /* >0: the nth write(2) from now fails          */
int gp_fault_write_errno; /* with this errno (ENOSPC, EIO, ...)           */
int gp_fault_write_short; /* 1: that write first stores half its bytes    */
int gp_fault_write_sticky;/* 1: every write after it fails too            */
int gp_fault_write_repeat;/* that many writes after it fail too           */
static int gp_fault_write_failing;
static ssize_t gp_writer_sys_write(int fd, const void *buf, size_t len)
{
	if (gp_fault_write_failing || (gp_fault_write_nth > 0 && --gp_fault_write_nth == 0)) {
		if (gp_fault_write_short && len > 1) {
			gp_fault_write_nth = 1; /* the retry of the rest fails */
			gp_fault_write_short = 0;
			return write(fd, buf, len / 2);
		}
		gp_fault_write_failing = gp_fault_write_sticky;
		if (gp_fault_write_repeat > 0) {
			gp_fault_write_repeat--;
			gp_fault_write_nth = 1;
		}
		errno = gp_fault_write_errno ? gp_fault_write_errno : EIO;
		return -1;
	}
	return write(fd, buf, len);
}
#else
#define gp_writer_sys_write write
#endif

/* write(2) all of buf. 0 or -errno (EINTR retried, short writes continued);
 * *done gets the bytes stored either way. */
static int gp_writer_write_all(int fd, const char *buf, size_t len, size_t *done)
{
	*done = 0;
	while (len) {
		ssize_t n = gp_writer_sys_write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
		*done += (size_t)n;
	}
	return 0;
}

/* Stop writing for good: record why, count, log once. Writer thread (or the
 * control thread before the writer exists). */
static void gp_writer_fail(int32_t reason, int is_io_error)
{
	if (W.io_failed || W.capped)
		return;
	W.end_reason = reason;
	if (is_io_error == 2) { /* the file size limit, met like the cap */
		W.capped = 1;
		W.write_errors++;
		fprintf(stderr, "gpuphase: trace %s reached the file size limit (RLIMIT_FSIZE, ulimit -f) of %llu bytes; capture stops writing, later records are discarded\n",
			W.path, (unsigned long long)W.fsize_limit);
	} else if (is_io_error) {
		W.io_failed = 1;
		W.write_errors++;
		fprintf(stderr, "gpuphase: trace %s: write failed: %s; capture stops writing, later records are discarded\n",
			W.path, strerror(-reason));
	} else {
		W.capped = 1;
		fprintf(stderr, "gpuphase: trace %s reached its size cap of %llu bytes; capture stops writing, later records are discarded\n",
			W.path, (unsigned long long)W.max_bytes);
	}
	atomic_store_explicit(&gp_g.failed, 1, memory_order_relaxed);
}

/* After a write of the output buffer failed having stored `done` bytes:
 * keep the blocks that reached the file whole with room for a footer after
 * them within `done` (so a footer fits under a file size limit, and on a full
 * disk in the space the cut frees), count their records and types, forget the
 * rest (their slots are lost, their sequence numbers are reused), and cut the
 * file back to the end of the last kept block so the footer can follow it.
 * Error path only: it may allocate. */
static void gp_writer_keep_whole(size_t done)
{
	size_t off = 0;
	uint64_t slots = 0, blocks = 0;
	union gp_rec *tmp = aligned_alloc(GP_CACHELINE, GP_BLOCK_MAX_RAW);

	while (tmp && off + sizeof(struct gp_block_header) <= done) {
		struct gp_block_header h;
		memcpy(&h, W.out + off, sizeof(h));
		const char *p = W.out + off + sizeof(h);
		if (h.magic != GP_BLOCK_MAGIC || h.raw_len > GP_BLOCK_MAX_RAW ||
		    off + sizeof(h) + h.stored_len + GP_FOOTER_RESERVE > done)
			break;
		if (h.flags & GP_BLOCKF_LZ4) {
			if (LZ4_decompress_safe(p, (char *)tmp, (int)h.stored_len, (int)h.raw_len) != (int)h.raw_len)
				break;
		} else {
			memcpy(tmp, p, h.raw_len);
		}
		for (uint32_t i = 0; i < h.nslots; i += gp_rec_slots(&tmp[i]))
			W.type_counts[tmp[i].type]++;
		off += sizeof(h) + h.stored_len;
		slots += h.nslots;
		blocks++;
	}
	free(tmp);
	W.lost += W.out_slots - slots;
	W.records -= W.out_slots - slots;
	W.blocks -= W.out_blocks - blocks;
	W.file_off += off;
	W.file_seq += blocks;
	W.seq = W.file_seq;
	W.committed = W.file_off;
	if (ftruncate(W.fd, (off_t)W.file_off) != 0 || lseek(W.fd, (off_t)W.file_off, SEEK_SET) != (off_t)W.file_off)
		W.file_off = UINT64_MAX; /* tail unknown: no footer */
}

/* Error path, at stop: the footer did not fit after a write error (a full
 * disk, a lowered file size limit): drop the file's last data block — its
 * records count as lost, its types leave the footer's counts — so the cut
 * frees room for the footer. The block is found by walking the block headers
 * from the file header on (pread). Returns 1 when a block was dropped. */
static int gp_writer_drop_last_block(void)
{
	struct gp_block_header h, last_h;
	uint64_t off = W.header_len, last = UINT64_MAX;
	while (off + sizeof(h) <= W.file_off) {
		if (pread(W.fd, &h, sizeof(h), (off_t)off) != (ssize_t)sizeof(h) || h.magic != GP_BLOCK_MAGIC ||
		    h.raw_len > GP_BLOCK_MAX_RAW || h.stored_len > W.file_off - off - sizeof(h))
			return 0;
		last = off;
		last_h = h;
		off += sizeof(h) + h.stored_len;
	}
	if (last == UINT64_MAX || off != W.file_off)
		return 0;
	char *p = malloc(last_h.stored_len ? last_h.stored_len : 1);
	union gp_rec *tmp = aligned_alloc(GP_CACHELINE, GP_BLOCK_MAX_RAW);
	if (p && tmp && pread(W.fd, p, last_h.stored_len, (off_t)(last + sizeof(h))) == (ssize_t)last_h.stored_len &&
	    ((last_h.flags & GP_BLOCKF_LZ4) ? LZ4_decompress_safe(p, (char *)tmp, (int)last_h.stored_len,
								 (int)last_h.raw_len) == (int)last_h.raw_len
					     : (memcpy(tmp, p, last_h.raw_len), 1))) {
		for (uint32_t i = 0; i < last_h.nslots; i += gp_rec_slots(&tmp[i]))
			if (W.type_counts[tmp[i].type])
				W.type_counts[tmp[i].type]--;
	}
	free(p);
	free(tmp);
	W.records -= last_h.nslots;
	W.lost += last_h.nslots;
	W.blocks--;
	W.file_off = W.committed = last;
	W.seq = --W.file_seq;
	if (ftruncate(W.fd, (off_t)last) != 0 || lseek(W.fd, (off_t)last, SEEK_SET) != (off_t)last) {
		W.file_off = UINT64_MAX;
		return 0;
	}
	return 1;
}

/* Write the output buffer (whole blocks). On failure stop writing for good
 * and keep what reached the file whole (gp_writer_keep_whole). */
static void gp_writer_flush_out(void)
{
	if (!W.out_len)
		return;
	if (!W.io_failed) {
		size_t done;
		int rc = gp_writer_write_all(W.fd, W.out, W.out_len, &done);
		if (rc < 0) {
			gp_writer_fail(rc, 1);
			gp_writer_keep_whole(done);
		} else {
			W.file_off += W.out_len;
			W.file_seq = W.seq;
			for (int t = 0; t < 256; t++)
				W.type_counts[t] += W.out_types[t];
		}
	}
	memset(W.out_types, 0, sizeof(W.out_types));
	W.out_len = 0;
	W.out_slots = 0;
	W.out_blocks = 0;
}

/* Append one framed block (header + payload already at out + out_len + 32)
 * to the output buffer. */
static void gp_writer_frame(uint32_t magic, uint32_t flags, uint32_t nslots, uint32_t stored, uint32_t raw)
{
	struct gp_block_header h = {
		.magic = magic, .flags = flags, .seq = W.seq++, .nslots = nslots,
		.stored_len = stored, .raw_len = raw, .crc = 0,
	};
	char *dst = W.out + W.out_len;
	uint32_t crc = gp_crc32c(0, &h, offsetof(struct gp_block_header, crc));
	h.crc = gp_crc32c(crc, dst + sizeof(h), stored);
	memcpy(dst, &h, sizeof(h));
	W.out_len += sizeof(h) + stored;
	W.committed += sizeof(h) + stored;
}

/* Seal the block being filled: compress it into the output buffer (raw when
 * LZ4 does not make it smaller), count it, and write when enough is queued. */
static void gp_writer_seal(void)
{
	uint32_t n = W.blk_n;
	if (!n)
		return;
	W.blk_n = 0;
	if (W.io_failed || W.capped) {
		W.lost += n;
		return;
	}
	uint32_t raw = n * GP_REC_SIZE;
	size_t need = sizeof(struct gp_block_header) + (size_t)LZ4_compressBound((int)raw);
	if (W.out_len + need > W.out_cap)
		gp_writer_flush_out();
	if (W.io_failed) {
		W.lost += n;
		return;
	}
	char *payload = W.out + W.out_len + sizeof(struct gp_block_header);
	int c = LZ4_compress_fast((const char *)W.blk, payload, (int)raw, LZ4_compressBound((int)raw),
				  GP_LZ4_ACCELERATION);
	uint32_t flags = 0, stored = raw;
	if (c > 0 && (uint32_t)c < raw) {
		flags = GP_BLOCKF_LZ4;
		stored = (uint32_t)c;
	} else {
		memcpy(payload, W.blk, raw);
	}
	uint64_t end = W.committed + sizeof(struct gp_block_header) + stored + GP_FOOTER_RESERVE;
	if ((W.max_bytes && end > W.max_bytes) || (W.fsize_limit && end > W.fsize_limit)) {
		/* The cap, or RLIMIT_FSIZE known at start (which would make a
		 * write fail with EFBIG, possibly leaving no room for the footer):
		 * stop here so the footer fits. The limit counts as a write error
		 * (end reason -EFBIG, write_errors 1), the cap does not. */
		gp_writer_fail(-EFBIG, W.max_bytes && end > W.max_bytes ? 0 : 2);
		W.lost += n;
		return;
	}
	gp_writer_frame(GP_BLOCK_MAGIC, flags, n, stored, raw);
	for (uint32_t i = 0; i < n; i += gp_rec_slots(&W.blk[i]))
		W.out_types[W.blk[i].type]++;
	W.records += n;
	W.out_slots += n;
	W.blocks++;
	W.out_blocks++;
	if (W.out_len >= GP_OUT_FLUSH)
		gp_writer_flush_out();
}

/* Ring sink: append one group to the block. */
static void gp_writer_sink(void *ctx, const union gp_rec *g, uint32_t n)
{
	(void)ctx;
	if (W.blk_n + n > GP_BLOCK_TARGET_SLOTS)
		gp_writer_seal();
	memcpy(W.blk + W.blk_n, g, (size_t)n * GP_REC_SIZE);
	W.blk_n += n;
	if (W.windows && !W.replaying) {
		gp_windows_keep(g, n);
		if (g->type == GP_REC_WINDOW && g->mark.kind == GP_WIN_START)
			W.file_windows++;
	}
	if (g->type == GP_REC_DROPS && g->drops.source == GP_DROP_CUPTI && g->drops.dropped > W.dropped_cupti)
		W.dropped_cupti = g->drops.dropped;
}

/* Write a GP_REC_DROPS record for r if its cumulative drop count changed
 * since the last one, so drops reach the file even if the process is killed
 * before stop. */
static void gp_writer_report_drops(struct gp_ring *r)
{
	uint64_t d = atomic_load_explicit(&r->dropped, memory_order_relaxed);
	if (d == r->drops_reported)
		return;
	union gp_rec rec;
	memset(&rec, 0, sizeof(rec));
	rec.drops.type = GP_REC_DROPS;
	rec.drops.source = GP_DROP_RING;
	rec.drops.tid = r->tid;
	rec.drops.ts = gp_collector_now();
	rec.drops.dropped = d;
	gp_writer_sink(NULL, &rec, 1);
	r->drops_reported = d;
}

/* Write a GP_REC_STATUS record when GP_NEVER fired since the last one, so
 * the trace says why capture stopped (docs/reliability.md). */
static void gp_writer_report_invariants(void)
{
	uint64_t n = atomic_load_explicit(&gp_g.invariant_failures, memory_order_relaxed);
	if (n == W.invariant_reported)
		return;
	union gp_rec rec;
	memset(&rec, 0, sizeof(rec));
	rec.status.type = GP_REC_STATUS;
	rec.status.kind = GP_STATUS_INVARIANT_BROKEN;
	rec.status.ts = gp_collector_now();
	rec.status.value = (int64_t)n;
	gp_writer_sink(NULL, &rec, 1);
	W.invariant_reported = n;
}

/* A ring leaves the session: its final drop count and the totals. */
static void gp_writer_retire(struct gp_ring *r)
{
	gp_writer_report_drops(r);
	W.nrings++;
	W.dropped_ring += r->drops_reported;
}

/* One pass over the registry: drain every ring, retire drained orphans.
 * Returns slots drained; *busy is set when some ring was over a quarter
 * full (the writer then skips its nap). */
static uint64_t gp_writer_pass(int *busy)
{
	uint64_t got = 0;
	_Atomic(struct gp_ring *) *prev = &gp_g.rings;
	/* acquire: pairs with the release CAS in gp_registry_push. */
	struct gp_ring *r = atomic_load_explicit(&gp_g.rings, memory_order_acquire);

	while (r) {
		struct gp_ring *next = atomic_load_explicit(&r->next, memory_order_relaxed);
		if (r->gen != W.gen) { /* registered while an old session stopped */
			gp_registry_unlink(prev, r);
			gp_ring_unref(r);
			r = next;
			continue;
		}
		/* acquire: pairs with the owner's acq_rel decrement in
		 * gp_ring_unref; once we see refs == 1 its last head store is
		 * visible, so the drain below empties the ring for good. */
		int orphan = atomic_load_explicit(&r->refs, memory_order_acquire) == 1;
		if (gp_ring_used(r) > r->cap / 4)
			*busy = 1;
		got += gp_ring_drain(r, gp_writer_sink, NULL, W.scratch);
		gp_writer_report_drops(r);
		if (orphan) {
			gp_writer_retire(r);
			gp_registry_unlink(prev, r);
			gp_ring_unref(r);
		} else {
			prev = &r->next;
		}
		r = next;
	}
	gp_writer_report_invariants();
	return got;
}

static void gp_writer_end_file(void);
static void gp_writer_close_window(void);

/* Final drain, per-ring drops, footer, close. Writer thread, at stop. */
static void gp_writer_finish(void)
{
	int busy = 0;
	gp_writer_pass(&busy);
	/* acq_rel: acquire pairs with the producers' release CAS (we walk
	 * their rings); nobody else reads the emptied list. */
	struct gp_ring *r = atomic_exchange_explicit(&gp_g.rings, NULL, memory_order_acq_rel);
	while (r) {
		struct gp_ring *next = atomic_load_explicit(&r->next, memory_order_relaxed);
		if (r->gen == W.gen) {
			gp_ring_drain(r, gp_writer_sink, NULL, W.scratch);
			gp_writer_retire(r);
		}
		gp_ring_unref(r);
		r = next;
	}
	gp_writer_report_invariants();
	gp_writer_end_file();
	gp_writer_close_window();
	struct timespec cpu;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	W.cpu_ns = (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec;
}

/* Seal and write what is left, append the footer, close the file. Writer
 * thread, at stop and (duty cycle) at each rotation. */
static void gp_writer_end_file(void)
{
	if (W.fd < 0)
		return;
	gp_writer_seal();
	gp_writer_flush_out();

	/* After a write error the file ends at file_off on a block boundary:
	 * try once to append the footer there (it says why capture ended). */
	int footer_ok = !W.io_failed || W.file_off != UINT64_MAX;
	int failed_before = W.io_failed;
	for (int attempt = 0; footer_ok && attempt < 64; attempt++) {
		W.io_failed = 0;
		struct gp_footer_entry e[16 + 256];
		uint32_t n = 0;
		e[n++] = (struct gp_footer_entry){ GP_FT_RECORDS, 0, W.records };
		e[n++] = (struct gp_footer_entry){ GP_FT_BLOCKS, 0, W.blocks };
		e[n++] = (struct gp_footer_entry){ GP_FT_DROPPED_RING, 0, W.dropped_ring };
		e[n++] = (struct gp_footer_entry){ GP_FT_DROPPED_CUPTI, 0, W.dropped_cupti };
		e[n++] = (struct gp_footer_entry){ GP_FT_WRITE_ERRORS, 0, W.write_errors };
		e[n++] = (struct gp_footer_entry){ GP_FT_END_REASON, 0, (uint64_t)(int64_t)W.end_reason };
		e[n++] = (struct gp_footer_entry){ GP_FT_RINGS, 0, W.nrings };
		e[n++] = (struct gp_footer_entry){ GP_FT_LOST_AFTER_STOP, 0, W.lost };
		for (uint32_t t = 1; t < 256; t++)
			if (W.type_counts[t])
				e[n++] = (struct gp_footer_entry){ GP_FT_TYPE_BASE + t, 0, W.type_counts[t] };
		uint32_t len = n * (uint32_t)sizeof(e[0]);
		if (W.out_len + sizeof(struct gp_block_header) + len > W.out_cap)
			gp_writer_flush_out();
		memcpy(W.out + W.out_len + sizeof(struct gp_block_header), e, len);
		gp_writer_frame(GP_FOOTER_MAGIC, 0, n, len, len);
		if (!failed_before)
			break; /* written by the flush below */
		size_t done;
		int rc = gp_writer_write_all(W.fd, W.out, W.out_len, &done);
		W.out_len = 0;
		W.io_failed = 1;
		if (rc >= 0)
			break;
		if (ftruncate(W.fd, (off_t)W.file_off) != 0 ||
		    lseek(W.fd, (off_t)W.file_off, SEEK_SET) != (off_t)W.file_off) {
			fprintf(stderr, "gpuphase: trace %s: cannot remove a partial footer\n", W.path);
			break;
		}
		/* no room for the footer (the cut freed too little): give up the
		 * last data block and try again */
		if ((rc != -ENOSPC && rc != -EFBIG) || !gp_writer_drop_last_block())
			break;
	}
	gp_writer_flush_out();
	close(W.fd);
	W.fd = -1;
}

/* --- duty cycle ------------------------------------------------------------ */

static int gp_writer_write_header(int fd, const char *p, size_t len);

/* Create path (never over an existing file) and write the header to it.
 * The descriptor (never 0-2), or -errno with nothing left behind. */
static int gp_writer_create(const char *path)
{
	/* O_RDWR: after a write error stop may read block headers back
	 * (gp_writer_drop_last_block). */
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		      W.file_mode ? (mode_t)W.file_mode : (mode_t)0600);
	if (fd < 0)
		return -errno;
	/* Never descriptor 0-2: a program started with stdout closed would
	 * write its output into the trace (gp_fd.h). */
	int rc = fd = gp_fd_lift(fd);
	if (fd >= 0 && (rc = gp_writer_write_header(fd, W.hdr, W.hdr_len)) != 0)
		close(fd);
	if (rc < 0) {
		unlink(path);
		return rc;
	}
	return fd;
}

/* The file just ended (footer written, closed): a duty-cycled one that
 * holds a window start takes its final name and the oldest closed windows
 * past the cap go; one that holds none (the tail after the last window) is
 * removed, so file SEQ is window SEQ. */
static void gp_writer_close_window(void)
{
	if (!W.windows || !W.path[0])
		return;
	char final[PATH_MAX];
	if (W.file_windows && gp_windows_file(W.dir, W.win_seq, 0, final, sizeof final) == 0 &&
	    rename(W.path, final) == 0) {
		atomic_store_explicit(&W.win_closed, W.win_seq, memory_order_release);
		uint64_t room = W.keep_bytes > W.max_bytes ? W.keep_bytes - W.max_bytes : 0;
		gp_windows_prune(W.dir, room);
	} else {
		unlink(W.path);
	}
	W.path[0] = 0;
}

/* Start the next window's file: fresh per-file counts, the header, then
 * every definition so far (windows.c). On failure nothing more is
 * written (counted as lost) until the next rotation tries again. */
static void gp_writer_next_file(void)
{
	memset(W.type_counts, 0, sizeof(W.type_counts));
	memset(W.out_types, 0, sizeof(W.out_types));
	W.blk_n = 0;
	W.out_len = W.out_slots = W.out_blocks = 0;
	W.seq = W.records = W.blocks = W.dropped_ring = W.nrings = 0;
	W.write_errors = 0;
	W.file_off = W.file_seq = 0;
	W.end_reason = 0;
	W.io_failed = W.capped = 0;
	W.file_windows = 0;
	W.pending_since = 0;
	W.win_seq++;
	int fd = gp_windows_file(W.dir, W.win_seq, 1, W.path, PATH_MAX);
	if (fd == 0)
		fd = gp_writer_create(W.path);
	if (fd < 0) {
		fprintf(stderr, "gpuphase: window %llu in %s: cannot create its file: %s; this window is lost\n",
			(unsigned long long)W.win_seq, W.dir, strerror(-fd));
		W.path[0] = 0;
		W.fd = -1;
		W.io_failed = 1;
		return;
	}
	W.fd = fd;
	W.committed = W.file_off = W.header_len = W.hdr_len;
	W.replaying = 1;
	gp_windows_replay(gp_writer_sink, NULL);
	W.replaying = 0;
}

/* A rotation was asked: every record emitted before the request is in the
 * rings (the caller asked after emitting), so drain them, end this file and
 * open the next. */
static void gp_writer_rotate_now(uint64_t req)
{
	int busy = 0;
	gp_writer_pass(&busy);
	gp_writer_end_file();
	gp_writer_close_window();
	gp_writer_next_file();
	pthread_mutex_lock(&W.mu);
	W.rotate_done = req;
	pthread_cond_broadcast(&W.done_cv);
	pthread_mutex_unlock(&W.mu);
}

int gp_writer_rotate(void)
{
	if (!W.windows)
		return -EPIPE;
	pthread_mutex_lock(&W.mu);
	uint64_t req = atomic_fetch_add_explicit(&W.rotate_req, 1, memory_order_release) + 1;
	pthread_cond_signal(&W.cv);
	while (W.rotate_done < req)
		pthread_cond_wait(&W.done_cv, &W.mu);
	pthread_mutex_unlock(&W.mu);
	return 0;
}

const char *gp_writer_windows_dir(void)
{
	return W.windows && W.dir ? W.dir : "";
}

uint64_t gp_writer_windows_closed(void)
{
	return atomic_load_explicit(&W.win_closed, memory_order_acquire);
}

static void *gp_writer_main(void *arg)
{
	uint64_t nap = GP_NAP_MIN_NS;
	(void)arg;
	for (;;) {
		/* acquire: pairs with the release store in gp_writer_stop. */
		int stopping = atomic_load_explicit(&W.stop_req, memory_order_acquire);
		uint64_t req = atomic_load_explicit(&W.rotate_req, memory_order_acquire);
		int busy = 0;
		uint64_t got = stopping ? 0 : gp_writer_pass(&busy);
		if (stopping)
			break;
		if (req != W.rotate_done) {
			gp_writer_rotate_now(req);
			continue;
		}
		uint64_t now = gp_writer_mono_ns();
		if (got && !W.pending_since)
			W.pending_since = now;
		if (W.pending_since && (!got || now - W.pending_since >= W.flush_ns)) {
			gp_writer_seal();
			gp_writer_flush_out();
			W.pending_since = 0;
		}
		if (busy) {
			nap = GP_NAP_MIN_NS;
			continue;
		}
		nap = got ? GP_NAP_MIN_NS : (nap * 2 > W.flush_ns / 2 ? W.flush_ns / 2 : nap * 2);
		if (nap < GP_NAP_MIN_NS)
			nap = GP_NAP_MIN_NS;
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		uint64_t ns = (uint64_t)until.tv_nsec + nap;
		until.tv_sec += (time_t)(ns / 1000000000ull);
		until.tv_nsec = (long)(ns % 1000000000ull);
		pthread_mutex_lock(&W.mu);
		if (!atomic_load_explicit(&W.stop_req, memory_order_acquire) &&
		    atomic_load_explicit(&W.rotate_req, memory_order_relaxed) == W.rotate_done)
			pthread_cond_timedwait(&W.cv, &W.mu, &until);
		pthread_mutex_unlock(&W.mu);
	}
	gp_writer_finish();
	return NULL;
}

/* Write the header on the calling (host) thread with SIGXFSZ blocked, so a
 * file size limit gives EFBIG instead of killing the process. */
static int gp_writer_write_header(int fd, const char *p, size_t len)
{
	sigset_t xfsz, old, pend;
	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &xfsz, &old);
	sigemptyset(&pend);
	sigpending(&pend);
	int was_pending = sigismember(&pend, SIGXFSZ) == 1;
	size_t done;
	int rc = gp_writer_write_all(fd, p, len, &done);
	if (rc == -EFBIG && !was_pending) {
		struct timespec zero = { 0, 0 };
		sigtimedwait(&xfsz, NULL, &zero); /* consume the SIGXFSZ we caused */
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static void gp_writer_free_buffers(void)
{
	free(W.blk);
	free(W.scratch);
	free(W.out);
	free(W.path);
	free(W.hdr);
	W.blk = W.scratch = NULL;
	W.out = NULL;
	W.path = NULL;
	W.hdr = NULL;
	gp_windows_reset();
	/* the directory's name outlives the session: `status` names it */
}

/* Open the trace for cfg: reset the writer's state, allocate its buffers,
 * build and write the file header. No thread yet. Control thread, under the
 * collector's control lock; gp_g.ring_records and clock_id are set. 0 or
 * -errno (nothing left open or allocated). */
int gp_writer_open(const struct gp_collector_config *cfg)
{
	int rc;

	free(W.dir);
	W.dir = NULL;
	memset(W.type_counts, 0, sizeof(W.type_counts));
	W.blk_n = 0;
	W.out_len = W.out_slots = 0;
	W.pending_since = W.committed = 0;
	W.seq = W.records = W.blocks = W.dropped_ring = W.dropped_cupti = 0;
	W.write_errors = W.lost = W.nrings = 0;
	W.file_off = W.file_seq = W.out_blocks = 0;
	memset(W.out_types, 0, sizeof(W.out_types));
	W.end_reason = 0;
	W.io_failed = W.capped = 0;
	W.invariant_reported = 0;
	W.flush_ns = (uint64_t)(cfg->flush_ms ? cfg->flush_ms : GP_FLUSH_DEFAULT_MS) * 1000000ull;
	W.max_bytes = cfg->max_bytes;
	W.file_mode = cfg->file_mode;
	W.windows = cfg->windows;
	W.keep_bytes = cfg->keep_bytes ? cfg->keep_bytes : GP_COLLECTOR_KEEP_DEFAULT;
	W.win_seq = W.file_windows = W.rotate_done = 0;
	atomic_store_explicit(&W.win_closed, 0, memory_order_relaxed);
	atomic_store_explicit(&W.rotate_req, 0, memory_order_relaxed);
	/* each window's file is capped at a quarter of the directory's cap */
	if (W.windows && (!W.max_bytes || W.max_bytes > W.keep_bytes / 4))
		W.max_bytes = W.keep_bytes / 4;
	struct rlimit fsz;
	W.fsize_limit = getrlimit(RLIMIT_FSIZE, &fsz) == 0 && fsz.rlim_cur != RLIM_INFINITY ? (uint64_t)fsz.rlim_cur : 0;
	W.out_cap = GP_OUT_FLUSH + sizeof(struct gp_block_header) + (size_t)LZ4_compressBound(GP_BLOCK_MAX_RAW);
	W.blk = aligned_alloc(GP_CACHELINE, GP_BLOCK_MAX_RAW);
	W.scratch = aligned_alloc(GP_CACHELINE, GP_BLOCK_MAX_RAW);
	W.out = malloc(W.out_cap);
	W.path = W.windows ? malloc(PATH_MAX) : strdup(cfg->path);
	W.dir = W.windows ? malloc(PATH_MAX) : NULL;
	if (!W.blk || !W.scratch || !W.out || !W.path || (W.windows && !W.dir)) {
		rc = -ENOMEM;
		goto err;
	}
	if ((rc = gp_header_build(cfg, W.flush_ns, W.max_bytes, &W.hdr, &W.hdr_len)))
		goto err;
	if (W.windows) {
		W.win_seq = 1;
		if ((rc = gp_windows_dir_of(cfg->path, W.dir, PATH_MAX)) ||
		    (rc = gp_windows_file(W.dir, W.win_seq, 1, W.path, PATH_MAX)) || (rc = gp_windows_dir_make(W.dir)))
			goto err;
	}
	if ((W.fd = gp_writer_create(W.path)) < 0) {
		rc = W.fd;
		if (W.windows)
			rmdir(W.dir);
		goto err;
	}
	W.committed = W.file_off = W.header_len = W.hdr_len;
	return 0;
err:
	gp_writer_free_buffers();
	free(W.dir);
	W.dir = NULL;
	W.windows = 0;
	return rc;
}

/* Start the writer thread for session gen on the trace gp_writer_open made.
 * On failure the trace is removed and the buffers freed. 0 or -errno. */
int gp_writer_launch(uint64_t gen)
{
	W.gen = gen;
	atomic_store_explicit(&W.stop_req, 0, memory_order_relaxed);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&W.cv, &ca);
	pthread_cond_init(&W.done_cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&W.mu, NULL);

	/* The writer inherits a fully blocked signal mask: host handlers never
	 * run on it and SIGXFSZ becomes EFBIG. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = -pthread_create(&W.thread, NULL, gp_writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		close(W.fd);
		unlink(W.path);
		if (W.windows)
			rmdir(W.dir);
		pthread_cond_destroy(&W.done_cv);
		pthread_cond_destroy(&W.cv);
		pthread_mutex_destroy(&W.mu);
		gp_writer_free_buffers();
		return rc;
	}
	pthread_setname_np(W.thread, "gpuphase-writer");
	return 0;
}

/* Ask the writer thread to finish (final drain, footer, close) and join it;
 * then free its buffers, unless free_buffers is 0 (the process's exit, on a
 * thread that may hold malloc's lock in an interrupted frame: they stay
 * reachable from W for the process's end). Control thread, once per
 * successful gp_writer_launch. */
void gp_writer_stop(int free_buffers)
{
	pthread_mutex_lock(&W.mu);
	/* release: pairs with the acquire loads in gp_writer_main. */
	atomic_store_explicit(&W.stop_req, 1, memory_order_release);
	pthread_cond_signal(&W.cv);
	pthread_mutex_unlock(&W.mu);
	pthread_join(W.thread, NULL);
	pthread_cond_destroy(&W.done_cv);
	pthread_cond_destroy(&W.cv);
	pthread_mutex_destroy(&W.mu);
	if (free_buffers)
		gp_writer_free_buffers();
}

/* In a fork child: close our copy of the trace's fd (when a session was
 * open) and leak the parent's buffers. */
void gp_writer_forget(int open)
{
	if (open) {
		close(W.fd);
		W.fd = -1;
	}
	W.blk = W.scratch = NULL;
	W.out = NULL;
	W.path = NULL;
}

uint64_t gp_writer_cpu_ns(void)
{
	return W.cpu_ns;
}
