/*
 * clocks.c — pairs of (CLOCK_REALTIME, trace clock) in the trace
 * (GP_REC_CLOCK_PAIR), so that the report can put the traces of several
 * hosts on one time line: each host's CLOCK_MONOTONIC_RAW starts at its own
 * boot, while its wall clock is kept close to the others' by NTP or PTP.
 *
 * A pair is the wall clock read between two reads of the trace clock; of
 * GP_CLOCKS_TRIES such reads the narrowest is kept (a read interrupted by
 * the scheduler is wide), its midpoint and width written. Pairs are taken
 *  - at start (gp_clocks_start, lib.c, on the starting thread, right after
 *    the collector starts),
 *  - every sample of the host-load sampler (gp_clocks_tick, hostload.c, its
 *    thread, every 100 ms): written every GP_CLOCK_PAIR_PERIOD_MS, and at
 *    once when the wall clock moved against the trace clock by more than
 *    a slew can (GP_CLOCKS_STEP_NS plus 500 ppm of the time since the last
 *    check: a settimeofday or an NTP step), with the last pair before the
 *    step and a GP_STATUS_REALTIME_STEP,
 *  - at end (gp_clocks_end, lib.c, after the sampler is joined, before the
 *    collector stops).
 *
 * Threads: these three never run at the same time — start happens before
 * the sampler thread is created, end after it is joined, and a fork child
 * has no sampler — so the state below needs no lock. Nothing here blocks or
 * allocates; a full ring drops a pair like any record (counted).
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "gp_collector.h"
#include "gp_lib.h"

#define GP_CLOCKS_TRIES 5
#define GP_CLOCKS_STEP_NS 1000000 /* 1 ms beyond what a slew explains */

struct gp_clocks_pair {
	uint64_t raw, realtime;
	uint32_t width;
};

static struct {
	struct gp_clocks_pair last; /* the last pair taken (tick or start)     */
	int have_last, last_written;
	uint64_t written_raw;       /* raw of the last pair written            */
} gp_clk;

static uint64_t gp_clocks_read(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The narrowest of GP_CLOCKS_TRIES bracketed reads. */
static void gp_clocks_take(struct gp_clocks_pair *p)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < GP_CLOCKS_TRIES; i++) {
		uint64_t a = gp_now();
		uint64_t wall = gp_clocks_read(CLOCK_REALTIME);
		uint64_t b = gp_now();
		uint64_t w = b >= a ? b - a : 0;
		if (w < best) {
			best = w;
			p->raw = a + w / 2;
			p->realtime = wall;
		}
	}
	p->width = best > UINT32_MAX ? UINT32_MAX : (uint32_t)best;
}

static void gp_clocks_write(const struct gp_clocks_pair *p, enum gp_clock_pair_kind kind)
{
	union gp_rec r;
	memset(&r, 0, sizeof r);
	r.clock.type = GP_REC_CLOCK_PAIR;
	r.clock.kind = (uint8_t)kind;
	r.clock.tries = GP_CLOCKS_TRIES;
	r.clock.width_ns = p->width;
	r.clock.raw = p->raw;
	r.clock.realtime = p->realtime;
	gp_collector_emit(&r, 1);
	gp_clk.written_raw = p->raw;
}

void gp_clocks_start(void)
{
	memset(&gp_clk, 0, sizeof gp_clk);
	gp_clocks_take(&gp_clk.last);
	gp_clocks_write(&gp_clk.last, GP_CLOCK_START);
	gp_clk.have_last = gp_clk.last_written = 1;
}

void gp_clocks_tick(void)
{
	struct gp_clocks_pair p;
	gp_clocks_take(&p);
	if (gp_clk.have_last && p.raw > gp_clk.last.raw) {
		int64_t moved = (int64_t)(p.realtime - gp_clk.last.realtime) - (int64_t)(p.raw - gp_clk.last.raw);
		uint64_t slew = (p.raw - gp_clk.last.raw) / 2000u; /* 500 ppm */
		uint64_t mag = moved < 0 ? (uint64_t)-moved : (uint64_t)moved;
		if (mag > GP_CLOCKS_STEP_NS + slew + p.width + gp_clk.last.width) {
			if (!gp_clk.last_written)
				gp_clocks_write(&gp_clk.last, GP_CLOCK_STEP);
			gp_clocks_write(&p, GP_CLOCK_STEP);
			gp_state_status(GP_STATUS_REALTIME_STEP, moved,
				      "CLOCK_REALTIME stepped: traces of other hosts line up less well around here");
			gp_clk.last = p;
			gp_clk.last_written = 1;
			return;
		}
	}
	gp_clk.last = p;
	gp_clk.have_last = 1;
	gp_clk.last_written = 0;
	if (p.raw - gp_clk.written_raw >= (uint64_t)GP_CLOCK_PAIR_PERIOD_MS * 1000000u) {
		gp_clocks_write(&p, GP_CLOCK_PERIODIC);
		gp_clk.last_written = 1;
	}
}

void gp_clocks_end(void)
{
	struct gp_clocks_pair p;
	gp_clocks_take(&p);
	gp_clocks_write(&p, GP_CLOCK_END);
}
