/*
 * whatif.h — what the command and the outputs ask the what-if analysis
 * (whatif.c) besides its section: whether the user's --whatif named
 * anything, and its ranked changes (the whole run's advice, outputs/
 * advice.c). Called after every trace's analyses finished, on the report
 * thread.
 */
#ifndef GP_REPORT_WHATIF_H
#define GP_REPORT_WHATIF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct gp_analyses;

/* When the --whatif spec's target (a name or glob) matches nothing in any
 * of the n traces' graphs (and some trace has a graph to say so; traces
 * loaded from partial results do not), write one line on f naming the
 * closest names the traces hold and return 1: bad usage. Else 0. */
int gp_whatif_refused(FILE *f, const char *spec, struct gp_analyses *const *sets, size_t n);

/* One change the what-if priced, as its section lists it (ranked by
 * saving). Strings live as long as the analyses. */
struct gp_whatif_view {
	const char *change;    /* the JSON "change" (e.g. "remove_sync")       */
	const char *target;    /* its name, call site or glob; "" for none      */
	uint64_t saving_ns;
	int user;              /* the user's own --whatif                       */
	const char *site;      /* remove_queue_waits: the call site of the launches
	                          that waited most, NULL when none is known   */
	int pageable;          /* a copy change (pinned_async_copy*, defer_copy_wait*)
	                          whose copies the trace saw on pageable host
	                          memory: only then is pinning advised        */
};
/* The what-if's window (the wall it prices against) and its i-th change,
 * of set's what-if analysis: 0 when set has none or it did not run. */
uint64_t gp_whatif_window_ns(const struct gp_analyses *set);
int gp_whatif_item(const struct gp_analyses *set, size_t i, struct gp_whatif_view *out);

#endif
