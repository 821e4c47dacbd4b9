/*
 * gp_collector.h — the producer side of the collector: how capture code hands
 * records to the writer thread. This is the contract libgpuphase/ codes
 * against; collector/ implements it (collector.c, over ring.c, registry.c,
 * intern.c and writer.c).
 *
 * Threads: any thread may call gp_collector_emit / gp_collector_intern once
 * gp_collector_start has returned 0. Each calling thread gets its own SPSC
 * ring on its first record (the only allocation it ever causes); after that
 * emit takes no lock, makes no syscall and never blocks: a full ring drops the
 * group and counts it. One writer thread drains every ring to the file.
 *
 * Errors: functions return 0 or a negative errno; nothing here ever calls
 * exit/abort or writes to stdout.
 */
#ifndef GP_COLLECTOR_H
#define GP_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>
#include "gp_format.h"

/* One key=value pair for the file header ("host", "cmdline", "cuda_runtime",
 * "gpu0", "window", "marker", ...). Both strings are copied. */
struct gp_kv {
	const char *key;
	const char *value;
};

/* Slots per thread ring when gp_collector_config.ring_records is 0: 2 MiB of
 * address space per producing thread, pages touched only as records fill
 * them. The one source of this default: libgpuphase's config table (and so
 * docs/configuration.md, checked by test_lib_config) shows this number.
 * Written without a suffix so that it can be turned into a string. */
#define GP_COLLECTOR_RING_DEFAULT 65536

/* The duty cycle's windows directory cap when gp_collector_config.keep_bytes
 * is 0 (256 MiB; libgpuphase's GPUPHASE_WINDOW_KEEP_BYTES default). */
#define GP_COLLECTOR_KEEP_DEFAULT (256ull << 20)

struct gp_collector_config {
	const char *path;       /* output file, created O_CREAT|O_EXCL|O_NOFOLLOW */
	unsigned file_mode;     /* 0 = 0600                                        */
	uint32_t ring_records;  /* slots per thread ring, power of two; 0 = default */
	uint32_t flush_ms;      /* max time a record waits in a ring; 0 = default  */
	uint64_t max_bytes;     /* stop writing past this file size; 0 = no cap    */
	uint32_t clock_id;      /* clockid_t of the trace clock (CLOCK_MONOTONIC_RAW) */
	int64_t clock_offset_ns;/* calibration offset recorded in the header       */
	const struct gp_kv *kv; /* header key/values                               */
	size_t nkv;
	int windows;            /* duty cycle: no file at path; each window its own
	                           trace in <path less .gpht>.windows/ (created,
	                           O_EXCL-like: -EEXIST if there) — docs/always-on.md */
	uint64_t keep_bytes;    /* windows: the directory's byte cap (0 = default) */
};

/* Open the file, write the header, start the writer thread. */
int gp_collector_start(const struct gp_collector_config *cfg);

/* Push `nslots` slots (a head record and its continuations) into the calling
 * thread's ring, all or nothing. Returns 0, or -ENOBUFS when dropped (counted),
 * or -EPIPE when the collector is not running (not counted), or -EINVAL when
 * the group is malformed (type 0, nslots != gp_rec_slots(head), or more than
 * GP_BLOCK_MAX_SLOTS slots; not counted). */
int gp_collector_emit(const union gp_rec *slots, uint32_t nslots);

/* Give the calling thread its ring now, so its first record later costs a
 * push, not the ring's creation (a thread that must time something short
 * first: a host callback's trampoline). 0, or -EPIPE when the collector is
 * not running, or -ENOMEM. */
int gp_collector_attach_thread(void);
/* Does the calling thread already have its ring in the live session, so
 * that emitting a plain record allocates nothing? (An exit path that may
 * run on top of an interrupted malloc asks before it writes.) */
int gp_collector_thread_ready(void);

/* Count n records lost before they could be emitted (calls the capture
 * library saw while it was starting) as drops of the calling thread's ring,
 * so written = read + dropped holds for that thread. 0, or -EPIPE when the
 * collector is not running (not counted). */
int gp_collector_count_lost(uint64_t n);

/* Intern `len` bytes of `s`: returns its string id (> 0), emitting a
 * GP_REC_STRING group into the calling thread's ring the first time this
 * thread sees the text. Already-seen texts cost a hash lookup, no lock.
 * If the ring is full the group is dropped (counted) and pushed again on the
 * next call with the same text; the id stays the same. Texts are never
 * truncated. Returns 0 if the collector is not running, memory ran out, or
 * the text cannot fit in one ring or one block (docs/format.md). */
uint32_t gp_collector_intern(const char *s, size_t len);

/* Drain every ring, write drop counters and the footer, close the file, join
 * the writer. Idempotent; safe from an atexit handler. */
void gp_collector_stop(void);
/* gp_collector_stop at the process's exit (atexit handlers, exit() from a
 * signal handler): the same drain, footer, close and join, but the writer's
 * buffers are left allocated (still reachable) for the process's end rather
 * than freed: the exiting thread may have been interrupted inside malloc,
 * whose arena lock it then holds for ever, and free waits for that lock. */
void gp_collector_stop_at_exit(void);

/* Duty cycle (config.windows): close the current window's file — every
 * record emitted before this call is in it — rename it to its final name,
 * delete the oldest closed windows past the directory's cap, and open the
 * next window's file. Blocks until the writer has done so. 0, or -EPIPE when
 * no duty-cycled session runs. Any thread but the writer's. */
int gp_collector_rotate(void);

/* Duty cycle: the windows directory of the running or last session ("" when
 * it was not duty-cycled) and the SEQ of the last window closed (0 = none). */
const char *gp_collector_windows_dir(void);
uint64_t gp_collector_windows_closed(void);

/* In a fork child: forget the parent's collector (rings, writer, fd) without
 * flushing or writing anything. */
void gp_collector_forget(void);

/* Total records dropped so far (all rings, ring-full only). */
uint64_t gp_collector_dropped(void);

/* True once a write error or the size cap stopped writing. */
int gp_collector_failed(void);

/* GP_NEVER(cond): the check for a broken invariant, in the manner of SQLite's
 * NEVER() and the kernel's RB_WARN_ON(). Use it where the code "cannot" get
 * cond true and would otherwise clamp and go on:
 *
 *     if (GP_NEVER(n > avail))
 *             return recover_without_trusting(n);
 *
 * It evaluates to cond. When cond is true it calls gp_collector_never, which
 * counts the failure, logs one line to stderr (the first time in a session:
 * "gpuphase: internal error: broken invariant ..."), and turns capture off:
 * the session accepts no more records (emit returns -EPIPE), the writer
 * drains what was accepted and writes a GP_REC_STATUS record of kind
 * GP_STATUS_INVARIANT_BROKEN (value = the count) so the trace says why it
 * ends early, and stop still writes the footer. Never exit/abort: the host
 * program keeps running. Any thread, at any time; no lock, no allocation. */
#define GP_NEVER(cond) \
	(__builtin_expect(!!(cond), 0) ? (gp_collector_never(#cond, __FILE__, __LINE__), 1) : 0)
void gp_collector_never(const char *cond, const char *file, int line);

/* Broken invariants (GP_NEVER) counted in the current or last session. */
uint64_t gp_collector_invariant_failures(void);

#endif /* GP_COLLECTOR_H */
