/*
 * bench_floor.c — the C half of bench_hooks: the "clock-and-store floor",
 * i.e. what the hook's own bookkeeping cannot go below — two reads of the
 * trace clock and one 32-byte record pushed through the collector — using the
 * same collector code (libgpcollector.a) the library links. Kept in C because
 * gp_format.h is C11 (bench_hooks.cu is compiled as C++ by nvcc).
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "gp_collector.h"

int bf_start(const char *path)
{
	struct gp_collector_config c;
	memset(&c, 0, sizeof c);
	c.path = path;
	c.clock_id = CLOCK_MONOTONIC_RAW;
	return gp_collector_start(&c);
}

void bf_stop(void)
{
	gp_collector_stop();
}

uint64_t bf_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One GP_REC_HOOK_API-shaped record, as the hook stores it. */
void bf_store(uint64_t t0, uint64_t t1, uint32_t op, int result)
{
	union gp_rec r;
	r.api.type = GP_REC_HOOK_API;
	r.api.class_flags = GP_API_LAUNCH;
	r.api.api_id = 2;
	r.api.tid = 1;
	r.api.start = t0;
	r.api.dur = (uint32_t)(t1 - t0);
	r.api.corr = op;
	r.api.stream = 0;
	r.api.result = (uint32_t)result;
	gp_collector_emit(&r, 1);
}
