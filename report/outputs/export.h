/*
 * export.h — exporters that need the full timeline (Chrome trace, Perfetto,
 * SQLite, HTML). main.c drives them while it analyses each trace:
 *
 *   ctx = ex->open(path, err, n)
 *   per trace i:  ex->begin(ctx, i, trace_path, pid)
 *                 pass 2: ex->record(ctx, an, rec) for every record group,
 *                         ex->op(op, ctx) for every joined op (analysis sink)
 *                 finish: ex->wait(w, ctx) for every blocking interval
 *   ex->close(ctx, merged_report, opts, err, n)   (writes what needs totals)
 *
 * Any callback may be NULL. Single-threaded. Exporters write only their own
 * output file and report failure through close()'s return (-errno + err).
 */
#ifndef GP_REPORT_EXPORT_H
#define GP_REPORT_EXPORT_H

#include <stddef.h>
#include "report/core/analysis.h"
#include "output.h"

struct gp_exporter {
	const char *name;
	void *(*open)(const char *path, char *err, size_t n);
	void (*begin)(void *ctx, size_t index, const char *trace_path, uint32_t pid);
	void (*record)(void *ctx, const struct gp_an *an, const union gp_rec *rec);
	void (*op)(const struct gp_an_op *op, void *ctx);
	void (*wait)(const struct gp_an_wait *w, void *ctx);
	int (*close)(void *ctx, const struct gp_rep *rep, const struct gp_out_opts *o, char *err, size_t n);
};

extern const struct gp_exporter gp_export_chrome;
extern const struct gp_exporter gp_export_sqlite;
extern const struct gp_exporter gp_export_html;
extern const struct gp_exporter gp_export_perfetto;

/* A copy's or set's memory as the exports write it (export_copy.c): CUPTI's
 * memory kinds (CUpti_ActivityMemoryKind) of a memcpy's source and
 * destination, UNKNOWN (0) where the trace does not record them; a kind's
 * name; Kineto's name of a copy or set ("Memcpy HtoD (Pageable -> Device)"). */
void gp_export_copy_sides(const struct gp_an_op *op, unsigned *src, unsigned *dst);
const char *gp_export_mem_kind_name(unsigned kind);
void gp_export_kineto_name(const struct gp_an_op *op, char *buf, size_t n);

#endif
