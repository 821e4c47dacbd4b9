/*
 * test_rel_faults.c — the collector under write faults (docs/reliability.md,
 * "Faults during capture"), in process, against a test build of writer.c compiled with
 * -DGP_FAULT_INJECTION (tests/reliability/module.mk; never in the library).
 *
 * What each test shows, with the ground truth it compares against:
 *  - ENOSPC / EIO at the Nth write(2), with and without a short write first:
 *    gp_collector_emit keeps accepting (the host never sees the error), the
 *    file reads back without error, ends with a footer whose end_reason is
 *    the injected -errno and write_errors = 1, the records read are exactly
 *    the first R records the single producer emitted (sequence numbers
 *    0..R-1, in order), and accepted = read + lost_after_stop.
 *  - the footer's own write failing once more (a full disk the cut freed too
 *    little of): the writer drops the last data block and the footer fits,
 *    counts still exact;
 *  - every write failing from the Nth on (the footer cannot be written
 *    either): no footer, but the file ends on a block boundary
 *    (truncated_bytes = 0) and reads back as a clean prefix.
 *  - a failure on the header write: gp_collector_start returns the error and
 *    leaves no file behind.
 *  - the real RLIMIT_FSIZE (setrlimit; SIGXFSZ at its default action, which
 *    would kill the process), set before start (the writer stops short of it
 *    like a cap, keeping room for the footer) and lowered during capture (a
 *    real EFBIG write): the process survives, the file is no larger than the
 *    limit and reads back, its footer (always there in the first case) says
 *    -EFBIG with write_errors = 1.
 *  - GPUPHASE_MAX_BYTES (cfg.max_bytes): the footer says -EFBIG with
 *    write_errors = 0 (a cap, not an error) and the file is <= the cap.
 * Each test runs in its own process (Criterion, or tests/common/tcrit.h's
 * stand-in under `make tsan`), so the global fault knobs and rlimits never
 * leak between tests; the trace path carries the pid.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/common/tcrit.h" /* Criterion, or its stand-in under TSan */
#include "gp_collector.h"
#include "gp_reader.h"

extern int gp_fault_write_nth, gp_fault_write_errno, gp_fault_write_short, gp_fault_write_sticky,
	gp_fault_write_repeat;

static char rf_path[256];

static void rf_teardown(void)
{
	unlink(rf_path);
}

/* First thing in every test: a fresh path for this process's trace. */
static void rf_setup(void)
{
	snprintf(rf_path, sizeof rf_path, "/tmp/rel-faults-%ld.gpht", (long)getpid());
	unlink(rf_path);
	atexit(rf_teardown);
}

static void rf_sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static int rf_start(uint64_t max_bytes)
{
	struct gp_collector_config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.path = rf_path;
	cfg.ring_records = 1u << 14;
	cfg.flush_ms = 2;
	cfg.max_bytes = max_bytes;
	cfg.clock_id = CLOCK_MONOTONIC;
	return gp_collector_start(&cfg);
}

/* Emit `batches` batches of `per` GP_REC_ITER records numbered from 0, with a
 * pause after each so the writer flushes between them (one write(2) per
 * batch, roughly). Records carry random-looking payload so LZ4 cannot shrink
 * them much and the file grows. Returns the number accepted. */
static uint64_t rf_emit(unsigned batches, unsigned per)
{
	uint64_t seq = 0, accepted = 0;
	for (unsigned b = 0; b < batches; b++) {
		for (unsigned i = 0; i < per; i++) {
			union gp_rec r;
			memset(&r, 0, sizeof r);
			r.mark.type = GP_REC_ITER;
			r.mark.iter = seq;
			r.mark.ts = seq * 0x9E3779B97F4A7C15ull;
			r.mark.tid = (uint32_t)(seq * 2654435761u);
			r.mark.reason = (int32_t)(seq ^ 0x5bd1e995u);
			int rc;
			while ((rc = gp_collector_emit(&r, 1)) == -ENOBUFS)
				rf_sleep_ms(1); /* a full ring: wait, so loss is only the fault's */
			cr_assert_eq(rc, 0, "emit refused while the collector runs: %d", rc);
			accepted++;
			seq++;
		}
		rf_sleep_ms(8);
	}
	return accepted;
}

struct rf_read {
	uint64_t n;                /* GP_REC_ITER records read            */
	struct gp_trace_end end;
	off_t size;
};

/* Read the trace back; every ITER record must be the next sequence number. */
static void rf_read(struct rf_read *out)
{
	struct gp_reader *rd;
	char err[512];
	struct stat st;
	cr_assert_eq(stat(rf_path, &st), 0, "no trace file: %s", strerror(errno));
	out->size = st.st_size;
	int rc = gp_reader_open(rf_path, &rd, err, sizeof err);
	cr_assert_eq(rc, 0, "open: %s", err);
	const union gp_rec *g;
	uint32_t ns;
	out->n = 0;
	while ((rc = gp_reader_next(rd, &g, &ns, err, sizeof err)) > 0) {
		if (g->type != GP_REC_ITER)
			continue;
		cr_assert_eq(g->mark.iter, out->n, "record %llu out of order (got %llu): not a clean prefix",
			     (unsigned long long)out->n, (unsigned long long)g->mark.iter);
		out->n++;
	}
	cr_assert_eq(rc, 0, "read error: %s", err);
	out->end = *gp_reader_end(rd);
	gp_reader_close(rd);
}

/* One fault scenario: the nth write fails with e (short write first if
 * `short_first`); the footer must still be written and say why. */
static void rf_fault_case(int nth, int e, int short_first)
{
	cr_assert_eq(rf_start(0), 0);
	gp_fault_write_nth = nth;
	gp_fault_write_errno = e;
	gp_fault_write_short = short_first;
	uint64_t accepted = rf_emit(12, 3000);
	cr_assert(gp_collector_failed(), "the injected fault did not stop writing");
	gp_collector_stop();
	struct rf_read r;
	rf_read(&r);
	cr_assert(r.end.complete, "no footer after the fault (the report could not say why)");
	cr_assert_eq(r.end.end_reason, -e, "footer end_reason %d, injected %d", r.end.end_reason, -e);
	cr_assert_eq(r.end.write_errors, 1u);
	cr_assert_eq(r.end.truncated_bytes, 0u);
	cr_assert(r.n > 0 && r.n < accepted, "read %llu of %llu: the fault should cut the data",
		  (unsigned long long)r.n, (unsigned long long)accepted);
	cr_assert_eq(accepted, r.n + r.end.lost_after_stop, "accepted %llu != read %llu + lost %llu",
		     (unsigned long long)accepted, (unsigned long long)r.n,
		     (unsigned long long)r.end.lost_after_stop);
	/* the host side never saw it: emit kept working, nothing was dropped */
	cr_assert_eq(gp_collector_dropped(), 0u);
}

Test(rel_faults, enospc_mid_capture)
{
	rf_setup();
	rf_fault_case(4, ENOSPC, 0);
}

Test(rel_faults, enospc_after_short_write)
{
	rf_setup();
	rf_fault_case(3, ENOSPC, 1);
}

Test(rel_faults, eio_mid_capture)
{
	rf_setup();
	rf_fault_case(6, EIO, 0);
}

/* A full disk whose cut frees too little: the first footer write fails too;
 * the writer gives up the last data block and the footer then fits. */
Test(rel_faults, enospc_footer_needs_room)
{
	rf_setup();
	cr_assert_eq(rf_start(0), 0);
	gp_fault_write_nth = 5;
	gp_fault_write_errno = ENOSPC;
	gp_fault_write_repeat = 1;
	uint64_t accepted = rf_emit(12, 3000);
	gp_collector_stop();
	struct rf_read r;
	rf_read(&r);
	cr_assert(r.end.complete, "no footer although dropping a block made room");
	cr_assert_eq(r.end.end_reason, -ENOSPC);
	cr_assert_eq(r.end.write_errors, 1u);
	cr_assert(r.n > 0 && r.n < accepted);
	cr_assert_eq(accepted, r.n + r.end.lost_after_stop, "accepted %llu != read %llu + lost %llu",
		     (unsigned long long)accepted, (unsigned long long)r.n,
		     (unsigned long long)r.end.lost_after_stop);
}

Test(rel_faults, every_write_fails_no_footer)
{
	rf_setup();
	cr_assert_eq(rf_start(0), 0);
	gp_fault_write_nth = 3;
	gp_fault_write_errno = EIO;
	gp_fault_write_short = 1;
	gp_fault_write_sticky = 1;
	uint64_t accepted = rf_emit(10, 3000);
	gp_collector_stop();
	struct rf_read r;
	rf_read(&r);
	cr_assert(!r.end.complete, "a footer was written although every write failed");
	cr_assert_eq(r.end.truncated_bytes, 0u, "the file was not cut back to a block boundary");
	cr_assert(r.n > 0 && r.n < accepted);
}

Test(rel_faults, header_write_fails)
{
	rf_setup();
	gp_fault_write_nth = 1;
	gp_fault_write_errno = ENOSPC;
	cr_assert_eq(rf_start(0), -ENOSPC);
	cr_assert(access(rf_path, F_OK) != 0, "a half-written trace was left behind");
	cr_assert_eq(gp_collector_emit(&(union gp_rec){ .type = GP_REC_ITER }, 1), -EPIPE);
}

Test(rel_faults, rlimit_fsize_real)
{
	rf_setup();
	const rlim_t lim = 96 * 1024;
	struct rlimit rl = { lim, lim };
	signal(SIGXFSZ, SIG_DFL); /* default action: terminate with a core */
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0, "setrlimit: %s", strerror(errno));
	cr_assert_eq(rf_start(0), 0);
	uint64_t accepted = rf_emit(12, 3000);
	gp_collector_stop();
	/* still alive: SIGXFSZ did not kill us */
	struct rf_read r;
	rf_read(&r);
	cr_assert((rlim_t)r.size <= lim, "file %lld bytes > limit %llu", (long long)r.size, (unsigned long long)lim);
	cr_assert(r.end.complete, "no footer after hitting RLIMIT_FSIZE");
	cr_assert_eq(r.end.end_reason, -EFBIG);
	cr_assert_eq(r.end.write_errors, 1u);
	cr_assert_eq(accepted, r.n + r.end.lost_after_stop);
	sigset_t pend;
	sigpending(&pend);
	cr_assert(!sigismember(&pend, SIGXFSZ), "a SIGXFSZ is left pending for the host");
}

/* The limit lowered after start (the writer cannot plan for it): the real
 * write(2) fails with EFBIG and raises SIGXFSZ at its default action; the
 * process must survive and the file stay readable within the limit. */
Test(rel_faults, rlimit_fsize_lowered_during_capture)
{
	rf_setup();
	signal(SIGXFSZ, SIG_DFL);
	cr_assert_eq(rf_start(0), 0);
	uint64_t accepted = rf_emit(3, 3000);
	struct stat st;
	cr_assert_eq(stat(rf_path, &st), 0);
	const rlim_t lim = (rlim_t)st.st_size + 40 * 1024;
	struct rlimit rl = { lim, lim };
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0, "setrlimit: %s", strerror(errno));
	accepted += rf_emit(12, 3000);
	gp_collector_stop();
	struct rf_read r; /* still alive: SIGXFSZ did not kill us */
	rf_read(&r);
	cr_assert((rlim_t)r.size <= lim, "file %lld bytes > limit %llu", (long long)r.size, (unsigned long long)lim);
	cr_assert(r.n > 0 && r.n < accepted);
	if (r.end.complete) {
		cr_assert_eq(r.end.end_reason, -EFBIG);
		cr_assert_eq(r.end.write_errors, 1u);
		cr_assert_eq(accepted, r.n + r.end.lost_after_stop);
	}
	sigset_t pend;
	sigpending(&pend);
	cr_assert(!sigismember(&pend, SIGXFSZ), "a SIGXFSZ is left pending for the host");
}

Test(rel_faults, rlimit_fsize_smaller_than_header)
{
	rf_setup();
	struct rlimit rl = { 64, 64 };
	signal(SIGXFSZ, SIG_DFL);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	cr_assert_eq(rf_start(0), -EFBIG);
	cr_assert(access(rf_path, F_OK) != 0, "a partial header was left behind");
}

Test(rel_faults, max_bytes_cap)
{
	rf_setup();
	const uint64_t cap = 128 * 1024;
	cr_assert_eq(rf_start(cap), 0);
	uint64_t accepted = rf_emit(12, 3000);
	cr_assert(gp_collector_failed(), "the cap did not stop writing");
	gp_collector_stop();
	struct rf_read r;
	rf_read(&r);
	cr_assert((uint64_t)r.size <= cap, "file %lld bytes > cap %llu", (long long)r.size, (unsigned long long)cap);
	cr_assert(r.end.complete);
	cr_assert_eq(r.end.end_reason, -EFBIG);
	cr_assert_eq(r.end.write_errors, 0u, "the cap is not a write error");
	cr_assert_eq(accepted, r.n + r.end.lost_after_stop);
	cr_assert(r.n > 0 && r.n < accepted);
}
