/*
 * test_collector_never.c — GP_NEVER, the check for broken invariants: when
 * one fires during capture it is counted, logged once on stderr, capture is
 * turned off (emit refuses, the writer drains what was accepted), and the
 * trace ends with a GP_STATUS_INVARIANT_BROKEN status record and a footer.
 *
 * The test-only hook is the ring's producer side (gp_collector_int.h): the
 * test pushes a malformed group straight into its own ring, past the
 * validation of gp_collector_emit, which is the one thing that keeps a
 * group's slot count honest. The writer's drain then meets a group that
 * claims more slots than were published — the invariant ring.c checks.
 * Each test runs in its own process, so collector state is fresh.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include "tutil.h"
#include "gp_collector_int.h"

static union gp_rec mk_api(uint32_t i)
{
	union gp_rec r;
	memset(&r, 0, sizeof(r));
	r.api.type = GP_REC_HOOK_API;
	r.api.api_id = 1;
	r.api.start = 1000 + i;
	r.api.corr = i;
	return r;
}

/* Send this process's stderr to path; returns the saved fd. */
static int redirect_stderr(const char *path)
{
	fflush(stderr);
	int saved = dup(2);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	dup2(fd, 2);
	close(fd);
	return saved;
}

static void restore_stderr(int saved)
{
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
}

static int count_lines_with(const char *path, const char *needle)
{
	size_t len;
	unsigned char *b = tu_slurp(path, &len);
	b[len] = 0;
	int n = 0;
	for (char *p = (char *)b; (p = strstr(p, needle)); p++)
		n++;
	free(b);
	return n;
}

/* Wait (up to 5 s) until the writer has met `want` broken invariants. */
static void wait_failures(uint64_t want)
{
	for (int i = 0; i < 500 && gp_collector_invariant_failures() < want; i++)
		usleep(10000);
	cr_assert_geq(gp_collector_invariant_failures(), want, "the writer never noticed the corrupt group");
}

Test(never, corrupt_ring_turns_capture_off)
{
	const char *path = tu_path("never.gpht");
	const char *log = tu_path("never.log");
	struct gp_collector_config c = tu_config(path, 1024);
	cr_assert_eq(gp_collector_start(&c), 0);
	for (uint32_t i = 0; i < 10; i++) {
		union gp_rec r = mk_api(i);
		cr_assert_eq(gp_collector_emit(&r, 1), 0);
	}
	cr_assert_eq(gp_collector_invariant_failures(), 0);

	/* The break: a string head that says 1 + 40 slots, pushed alone. */
	int saved = redirect_stderr(log);
	struct gp_tstate *ts = gp_registry_attach();
	cr_assert_not_null(ts);
	union gp_rec bad;
	memset(&bad, 0, sizeof(bad));
	bad.string.type = GP_REC_STRING;
	bad.string.id = 77;
	bad.string.len = GP_STRING_INLINE + 40 * GP_REC_SIZE;
	cr_assert_eq(gp_rec_slots(&bad), 41u);
	cr_assert_eq(gp_ring_push(ts->ring, &bad, 1), 0);
	wait_failures(1);

	/* Capture is off: emit refuses (not counted as a drop). */
	union gp_rec r = mk_api(99);
	cr_assert_eq(gp_collector_emit(&r, 1), -EPIPE);
	cr_assert_eq(gp_collector_dropped(), 0);
	/* A second firing is counted, not logged again. */
	cr_assert(GP_NEVER(gp_collector_invariant_failures() > 0));
	cr_assert_not(GP_NEVER(0));
	cr_assert_eq(gp_collector_invariant_failures(), 2);
	gp_collector_stop();
	restore_stderr(saved);

	cr_assert_eq(count_lines_with(log, "gpuphase: internal error: broken invariant"), 1,
		     "logged exactly once");
	cr_assert_eq(count_lines_with(log, "capture turned off"), 1);

	/* The trace: the records emitted before, the status record, a footer. */
	struct tu_trace t = tu_read(path);
	cr_assert_eq(t.rc, 0, "%s", t.err);
	cr_assert(t.end.complete, "the footer was written");
	size_t apis = 0, status = 0;
	int64_t last_count = 0;
	for (size_t g = 0; g < t.ngroups; g++) {
		const union gp_rec *h = &t.recs[t.group[g]];
		if (h->type == GP_REC_HOOK_API)
			apis++;
		if (h->type == GP_REC_STRING)
			cr_assert_neq(h->string.id, 77u, "the corrupt group reached the file");
		if (h->type == GP_REC_STATUS && h->status.kind == GP_STATUS_INVARIANT_BROKEN) {
			status++;
			last_count = h->status.value;
		}
	}
	cr_assert_eq(apis, 10, "what was accepted before the break is kept");
	cr_assert_geq(status, 1, "no status record says why capture stopped");
	cr_assert_eq(last_count, 2, "the last status record carries the final count");
	tu_free(&t);
}

Test(never, counters_reset_by_a_new_session)
{
	const char *p1 = tu_path("s1.gpht");
	const char *p2 = tu_path("s2.gpht");
	const char *log = tu_path("s.log");
	struct gp_collector_config c = tu_config(p1, 1024);
	cr_assert_eq(gp_collector_start(&c), 0);
	int saved = redirect_stderr(log);
	cr_assert(GP_NEVER(1 + 1 == 2));
	gp_collector_stop();
	c.path = p2;
	cr_assert_eq(gp_collector_start(&c), 0);
	cr_assert_eq(gp_collector_invariant_failures(), 0);
	union gp_rec r = mk_api(1);
	cr_assert_eq(gp_collector_emit(&r, 1), 0, "a new session captures again");
	cr_assert(GP_NEVER(r.api.corr == 1));
	gp_collector_stop();
	restore_stderr(saved);
	cr_assert_eq(count_lines_with(log, "broken invariant (1 + 1 == 2)"), 1);
	cr_assert_eq(count_lines_with(log, "broken invariant (r.api.corr == 1)"), 1, "logged once per session");
}
