/*
 * whatif.h — what the command asks the what-if analysis (whatif.c) besides
 * its section: whether the user's --whatif named anything. Called after
 * every trace's analyses finished, on the report thread.
 */
#ifndef GP_REPORT_WHATIF_H
#define GP_REPORT_WHATIF_H

#include <stddef.h>
#include <stdio.h>

struct gp_analyses;

/* When the --whatif spec's target (a name or glob) matches nothing in any
 * of the n traces' graphs (and some trace has a graph to say so; traces
 * loaded from partial results do not), write one line on f naming the
 * closest names the traces hold and return 1: bad usage. Else 0. */
int gp_whatif_refused(FILE *f, const char *spec, struct gp_analyses *const *sets, size_t n);

#endif
