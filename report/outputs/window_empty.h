/*
 * window_empty.h — the line a report gives when the capture window held
 * nothing: it never opened (the library's GP_STATUS_WINDOW_UNOPENED says
 * why and which marker would work), or it opened while the program made no
 * CUDA call (docs/metrics.md §6). window_empty.c; single-threaded, pure over
 * the report given.
 */
#ifndef GP_REPORT_WINDOW_EMPTY_H
#define GP_REPORT_WINDOW_EMPTY_H

#include <stdio.h>

#include "report/core/rep.h"

/* Why the window held nothing, or NULL when it held something (or the
 * capture was the whole run). The text may hold a kernel name from the
 * trace: print it through gp_fmt_name / gp_fmt_json_str. */
const char *gp_out_window_empty(const struct gp_rep *rep);

/* Text and markdown: one "NOTHING CAPTURED: why" line, or nothing. */
void gp_out_text_window_empty(FILE *f, const struct gp_rep *rep, int md);

/* JSON: `, "window_empty": "why"` inside the summary object, or nothing. */
void gp_out_json_window_empty(FILE *f, const struct gp_rep *rep);

#endif
