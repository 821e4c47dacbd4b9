/*
 * window_empty.c — says when a windowed capture held nothing, and why
 * (window_empty.h). Single-threaded; pure over the report given.
 * Invariant: every text from the trace goes out through gp_fmt_name (text,
 * markdown) or gp_fmt_json_str (JSON), never raw.
 */
#include "report/util/fmt.h"
#include "window_empty.h"

const char *gp_out_window_empty(const struct gp_rep *rep)
{
	if (rep->window_unopened)
		return rep->window_unopened_why[0] ? rep->window_unopened_why : "capture window never opened";
	if (rep->nwindows && !rep->ops)
		return "the capture window opened but held no CUDA call: the program's CUDA work lies outside it "
		       "(a time window: a smaller delay=; an iteration window: check GPUPHASE_ITER_MARKER)";
	return NULL;
}

void gp_out_text_window_empty(FILE *f, const struct gp_rep *rep, int md)
{
	const char *why = gp_out_window_empty(rep);
	if (!why)
		return;
	fprintf(f, "%s", md ? "- **nothing captured**: " : "  NOTHING CAPTURED: ");
	gp_fmt_name(f, why, md); /* the library's text holds a kernel name */
	fputc('\n', f);
}

void gp_out_json_window_empty(FILE *f, const struct gp_rep *rep)
{
	const char *why = gp_out_window_empty(rep);
	if (!why)
		return;
	fputs(", \"window_empty\": ", f);
	gp_fmt_json_str(f, why);
}
