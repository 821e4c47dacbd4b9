/*
 * diff.h — `gpuphase-report diff`: per-operator changes between two sides of
 * one or more runs each, and the CI gate (diff.c; docs/metrics.md §10).
 * Single-threaded; pure over the reports given.
 */
#ifndef GP_REPORT_DIFF_H
#define GP_REPORT_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "output.h"
#include "report/core/rep.h"

enum gp_diff_phase { GP_DIFF_TOTAL = 0, GP_DIFF_LAUNCH, GP_DIFF_QUEUE, GP_DIFF_EXECUTE, GP_DIFF_SYNC };

struct gp_diff_opts {
	enum gp_diff_phase phase; /* the time compared and gated (--phase)        */
	uint64_t min_delta_ns;    /* changes smaller than this never trip (--min-delta) */
	double fail_above_pct;    /* < 0: no gate                                  */
	size_t top;               /* gate on the base's top N operators (0 = 10)   */
};

/* "total", "launch", "queue", "execute", "sync". */
const char *gp_diff_phase_name(enum gp_diff_phase p);

/* Write the comparison of base[0..nb) and cur[0..nn) (one or more runs per
 * side) in o->format; *regressed is set when the gate tripped. 0, -ENOMEM,
 * or -EIO on a write error. */
int gp_diff_write(FILE *f, const struct gp_rep *base, size_t nb, const struct gp_rep *cur, size_t nn,
		  const struct gp_diff_opts *d, const struct gp_out_opts *o, int *regressed);

#endif
