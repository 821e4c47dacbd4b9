/*
 * verdict.h — classify an operator (or the whole run) from its phase sums,
 * with the field's rule of thumb as default thresholds (ARCHITECTURE.md §4):
 * sync share > 30 % -> sync-bound, else launch share > 20 % -> launch-bound,
 * else execute share > 80 % -> compute-bound, else balanced. Shares are of
 * total = launch + execute + sync. Pure functions; any thread.
 */
#ifndef GP_REPORT_VERDICT_H
#define GP_REPORT_VERDICT_H

#include <stddef.h>
#include <stdint.h>

enum gp_verdict { GP_VERDICT_NONE = 0, GP_VERDICT_SYNC, GP_VERDICT_LAUNCH, GP_VERDICT_COMPUTE, GP_VERDICT_BALANCED };

struct gp_thresholds {
	double sync_pct, launch_pct, execute_pct; /* defaults 30, 20, 80 */
};

#define GP_THRESHOLDS_DEFAULT ((struct gp_thresholds){ 30.0, 20.0, 80.0 })

/* Verdict of the given sums; GP_VERDICT_NONE when total is 0. */
enum gp_verdict gp_verdict_of(uint64_t launch, uint64_t execute, uint64_t sync, const struct gp_thresholds *t);
/* "sync-bound", "launch-bound", "compute-bound", "balanced", "none". */
const char *gp_verdict_name(enum gp_verdict v);
/* The advice line for a verdict ("" for none/balanced). */
const char *gp_verdict_advice(enum gp_verdict v);
/* The numbers behind a verdict, e.g. "sync 49.2% > 30%". */
void gp_verdict_reason(enum gp_verdict v, uint64_t launch, uint64_t execute, uint64_t sync,
		       const struct gp_thresholds *t, char *buf, size_t n);

#endif
