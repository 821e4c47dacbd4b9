/*
 * clockmap.h — a trace's clock pairs (GP_REC_CLOCK_PAIR: where the host's
 * wall clock stood at a trace-clock time) and the map they give from the
 * trace clock to the wall clock, and so to another trace's clock: how the
 * report puts the traces of several hosts on one time line (the cross-rank
 * analysis, the timeline exports; docs/metrics.md §9).
 *
 * Between two pairs the wall clock's offset to the trace clock is
 * interpolated linearly (it drifts with the host's crystal and NTP's
 * corrections); before the first and after the last pair it is that pair's.
 * A trace without pairs can still give one: the file header's
 * (start_wall_ns, start_clock_ns), read one after the other, not bracketed.
 *
 * A leaf: includes nothing of the report. Single-threaded; a map owns its
 * array. Errors: 0 or -ENOMEM.
 */
#ifndef GP_REPORT_CLOCKMAP_H
#define GP_REPORT_CLOCKMAP_H

#include <stddef.h>
#include <stdint.h>

struct gp_clock_pair {
	uint64_t raw;       /* trace clock ns                               */
	uint64_t realtime;  /* wall clock (CLOCK_REALTIME) ns                */
	uint32_t width;     /* the pair's uncertainty (ns)                  */
	uint8_t kind;       /* enum gp_clock_pair_kind (gp_format.h)        */
};

/* At most this many pairs are kept (about 18 hours at one a second); past
 * it every other one is dropped, so a map covers any run with bounded
 * memory. */
#define GP_CLOCKMAP_MAX 65536u

struct gp_clockmap {
	struct gp_clock_pair *p; /* by raw, once gp_clockmap_sort ran       */
	size_t n, cap;
	uint32_t thin;           /* pairs kept 1 in 2^thin (the cap reached) */
	uint64_t seen;           /* pairs added                              */
};

int gp_clockmap_add(struct gp_clockmap *m, const struct gp_clock_pair *pair);
/* Order the pairs by trace time (they come from several threads' rings)
 * and drop pairs of the same trace time; call once every pair is in. */
void gp_clockmap_sort(struct gp_clockmap *m);
/* a + b, held at the int64 limits instead of overflowing: the values come
 * from a file, and a corrupt one must give a wrong number, never undefined
 * behaviour. */
static inline int64_t gp_clockmap_add_sat(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}
static inline int64_t gp_clockmap_sub_sat(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}
/* wall - trace clock at trace time t (ns); 0 when the map is empty. */
int64_t gp_clockmap_offset(const struct gp_clockmap *m, uint64_t t);
/* Trace time t as wall-clock ns. */
static inline int64_t gp_clockmap_wall(const struct gp_clockmap *m, uint64_t t)
{
	return gp_clockmap_add_sat(t > INT64_MAX ? INT64_MAX : (int64_t)t, gp_clockmap_offset(m, t));
}
/* The time on `to`'s trace clock of the instant that is t on `from`'s (both
 * through their wall clocks). */
uint64_t gp_clockmap_convert(const struct gp_clockmap *from, const struct gp_clockmap *to, uint64_t t);
/* The widest pair (ns), 0 when empty. */
uint32_t gp_clockmap_max_width(const struct gp_clockmap *m);
int gp_clockmap_copy(struct gp_clockmap *dst, const struct gp_clockmap *src);
void gp_clockmap_free(struct gp_clockmap *m);

/* The time line of an export of several traces: the first trace's clock.
 * Each trace's map is kept (gp_clockline_set, once its pass 1 is done) so
 * that its times, also those written at the end, go onto that line; a time
 * of a trace without pairs, or of any trace when the first has none, stays
 * as it is (the traces are taken to share one clock, as on one host). */
struct gp_clockline {
	struct gp_clockmap *maps; /* per trace index */
	size_t n;
};
int gp_clockline_set(struct gp_clockline *l, size_t trace, const struct gp_clockmap *m);
uint64_t gp_clockline_time(const struct gp_clockline *l, size_t trace, uint64_t t);
void gp_clockline_free(struct gp_clockline *l);

#endif
