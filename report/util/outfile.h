/*
 * outfile.h — gp_outfile: how every file the report writes (the report with
 * -o, each --export) is opened and committed. One module owns it so that no
 * output can lose or corrupt a file:
 *
 *   - the data goes to a temporary file in the destination's directory
 *     (".NAME.XXXXXX", mode 0600 like traces) and is renamed over NAME only
 *     when complete (gp_outfile_commit): a failed or interrupted run leaves
 *     the old NAME as it was;
 *   - NAME is refused (one line in err) when it is a symbolic link, anything
 *     but a regular file, an input of this run (same device and inode), a
 *     gpuphase trace, another output of this run, or a file that is not what
 *     we would write there (an SQLite database only over an SQLite
 *     database, HTML over HTML, JSON over JSON, a Perfetto trace over a
 *     Perfetto trace, partial results over partial results, text over
 *     text).
 *
 * The report is single-threaded: the list of inputs and of the outputs
 * already taken is process state, set by gpuphase-report's main() before any
 * output is opened. Errors: 0 or -errno, with one line in err.
 */
#ifndef GP_REPORT_OUTFILE_H
#define GP_REPORT_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

enum gp_outfile_kind {
	GP_OUTFILE_TEXT,   /* text, markdown, csv: any file without a NUL byte */
	GP_OUTFILE_JSON,   /* the json report, the Chrome trace                 */
	GP_OUTFILE_HTML,
	GP_OUTFILE_SQLITE,
	GP_OUTFILE_PERFETTO, /* a Perfetto protobuf trace: TracePacket fields 1 */
	GP_OUTFILE_PARTIAL,  /* partial results (partial.h): only over partial results */
};

struct gp_outfile {
	char *path; /* the destination, as named                        */
	char *tmp;  /* the temporary file beside it, until commit       */
	FILE *f;    /* open for writing on tmp                          */
	enum gp_outfile_kind kind;
};

/* The traces this run reads: no output may land on one of them. The
 * strings are not copied (argv). Calling it again replaces the list. */
void gp_outfile_inputs(char *const *paths, size_t n);

/* Check path as a destination of kind without creating anything. */
int gp_outfile_check(const char *path, enum gp_outfile_kind kind, char *err, size_t n);

/* Check path, then create its temporary file; o->f is ready for writing. On
 * error nothing is left on disk and o is zeroed. */
int gp_outfile_open(struct gp_outfile *o, const char *path, enum gp_outfile_kind kind, char *err, size_t n);

/* Flush, close and rename the temporary file over path (checked once more,
 * so a file planted meanwhile is refused, and a symlink is replaced, never
 * followed). On any error the temporary file is removed and path is left
 * as it was. o is released either way. */
int gp_outfile_commit(struct gp_outfile *o, char *err, size_t n);

/* An exporter's context: size zeroed bytes whose struct gp_outfile, at
 * offset out_off, is open on path as gp_outfile_open opens it; NULL after
 * one line in err. The caller frees it after commit or discard. */
void *gp_outfile_context(size_t size, size_t out_off, const char *path, enum gp_outfile_kind kind, char *err,
			 size_t n);
/* Remove the temporary file; path is left as it was. o is released. */
void gp_outfile_discard(struct gp_outfile *o);

#endif
