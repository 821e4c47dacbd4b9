/*
 * export_sqlite.c — `--export sqlite FILE`: a SQLite database of the
 * timeline, shaped so that users of `nsys export --type sqlite` feel at
 * home: StringIds, CUPTI_ACTIVITY_KIND_RUNTIME (API calls) and views
 * CUPTI_ACTIVITY_KIND_KERNEL / _MEMCPY / _MEMSET over the joined ops, plus
 * GPUPHASE_OPS, GPUPHASE_SYNCS, GPUPHASE_MARKERS, GPUPHASE_ITERATIONS and the
 * views GPUPHASE_OP_PHASES (per-op launch/queue/execute/sync/total) and
 * GPUPHASE_OPERATOR_SUMMARY. docs/report-json.md documents the schema.
 *
 * Rows are inserted while pass 2 streams, in one transaction. An existing
 * FILE is replaced. Called by main.c on the report thread.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "gp_reader.h"
#include "outfile.h"

enum { ST_STR, ST_API, ST_OP, ST_SYNC, ST_MARK, ST_ITER, ST_COUNT };

struct gp_sq {
	struct gp_outfile out; /* the database is built in out.tmp, renamed at close */
	sqlite3 *db;
	sqlite3_stmt *st[ST_COUNT];
	char *path;
	int64_t rank;
	int failed;
	char msg[256];
};

static const char gp_sq_schema[] =
	"CREATE TABLE TRACES(rank INTEGER PRIMARY KEY, path TEXT, pid INTEGER);"
	"CREATE TABLE StringIds(rank INTEGER, id INTEGER, value TEXT);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(rank INTEGER, start INTEGER, end INTEGER, globalTid INTEGER,"
	" correlationId INTEGER, nameId INTEGER, name TEXT, domain TEXT, apiClass INTEGER, returnValue INTEGER);"
	"CREATE TABLE GPUPHASE_OPS(rank INTEGER, kind TEXT, name TEXT, deviceId INTEGER, streamId INTEGER,"
	" correlationId INTEGER, globalTid INTEGER, api_start INTEGER, api_end INTEGER, start INTEGER, end INTEGER,"
	" launch_ns INTEGER, queue_ns INTEGER, execute_ns INTEGER, iteration INTEGER, nvtx TEXT, callsite TEXT,"
	" bytes INTEGER, copyKind INTEGER, has_api INTEGER, has_gpu INTEGER);"
	"CREATE TABLE GPUPHASE_SYNCS(rank INTEGER, kind INTEGER, globalTid INTEGER, correlationId INTEGER,"
	" call_start INTEGER, call_end INTEGER, blocked_start INTEGER, blocked_end INTEGER, blocked_ns INTEGER,"
	" attributed INTEGER, op_correlationId INTEGER);"
	"CREATE TABLE GPUPHASE_MARKERS(rank INTEGER, kind INTEGER, globalTid INTEGER, ts INTEGER, id INTEGER, text TEXT);"
	"CREATE TABLE GPUPHASE_ITERATIONS(rank INTEGER, iteration INTEGER, start INTEGER, end INTEGER,"
	" duration_ns INTEGER, ops INTEGER, launch_ns INTEGER, queue_ns INTEGER, execute_ns INTEGER, sync_ns INTEGER);";

/* Views: the blocked part of a blocking copy is the copy's own row in
 * GPUPHASE_SYNCS (same correlationId, kind 2/4) and leaves its launch. */
static const char gp_sq_views[] =
	"CREATE INDEX ops_corr ON GPUPHASE_OPS(rank, correlationId);"
	"CREATE INDEX syncs_op ON GPUPHASE_SYNCS(rank, op_correlationId);"
	"CREATE VIEW GPUPHASE_OP_PHASES AS SELECT o.rank, o.kind, o.name, o.deviceId, o.streamId, o.correlationId,"
	" o.globalTid, o.iteration, o.nvtx, o.callsite,"
	" MAX(o.launch_ns - COALESCE((SELECT SUM(s.blocked_ns) FROM GPUPHASE_SYNCS s WHERE s.rank = o.rank AND"
	"  s.correlationId = o.correlationId AND s.kind IN (2, 4)), 0), 0) AS launch_ns,"
	" o.queue_ns, o.execute_ns,"
	" COALESCE((SELECT SUM(s.blocked_ns) FROM GPUPHASE_SYNCS s WHERE s.rank = o.rank AND s.attributed = 1 AND"
	"  s.op_correlationId = o.correlationId), 0) AS sync_ns"
	" FROM GPUPHASE_OPS o;"
	"CREATE VIEW GPUPHASE_OPERATOR_SUMMARY AS SELECT name, COUNT(*) AS count, SUM(launch_ns) AS launch_ns,"
	" SUM(queue_ns) AS queue_ns, SUM(execute_ns) AS execute_ns, SUM(sync_ns) AS sync_ns,"
	" SUM(launch_ns + execute_ns + sync_ns) AS total_ns FROM GPUPHASE_OP_PHASES GROUP BY name ORDER BY total_ns DESC;"
	"CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT rank, start, end, deviceId, streamId, correlationId,"
	" name AS shortName, name AS demangledName, globalTid FROM GPUPHASE_OPS WHERE kind = 'kernel';"
	"CREATE VIEW CUPTI_ACTIVITY_KIND_MEMCPY AS SELECT rank, start, end, deviceId, streamId, correlationId, bytes,"
	" copyKind FROM GPUPHASE_OPS WHERE kind = 'memcpy';"
	"CREATE VIEW CUPTI_ACTIVITY_KIND_MEMSET AS SELECT rank, start, end, deviceId, streamId, correlationId, bytes"
	" FROM GPUPHASE_OPS WHERE kind = 'memset';";

static const char *const gp_sq_ins[ST_COUNT] = {
	[ST_STR] = "INSERT INTO StringIds VALUES(?,?,?)",
	[ST_API] = "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(?,?,?,?,?,?,?,?,?,?)",
	[ST_OP] = "INSERT INTO GPUPHASE_OPS VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_SYNC] = "INSERT INTO GPUPHASE_SYNCS VALUES(?,?,?,?,?,?,?,?,?,?,?)",
	[ST_MARK] = "INSERT INTO GPUPHASE_MARKERS VALUES(?,?,?,?,?,?)",
	[ST_ITER] = "INSERT INTO GPUPHASE_ITERATIONS VALUES(?,?,?,?,?,?,?,?,?,?)",
};

static void gp_sq_fail(struct gp_sq *q, const char *what)
{
	if (!q->failed)
		snprintf(q->msg, sizeof q->msg, "%s: sqlite: %s: %s", q->path, what, sqlite3_errmsg(q->db));
	q->failed = 1;
}

static void gp_sq_step(struct gp_sq *q, int which)
{
	sqlite3_stmt *s = q->st[which];
	if (q->failed)
		return;
	if (sqlite3_step(s) != SQLITE_DONE)
		gp_sq_fail(q, "insert");
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

static void *gp_sq_open(const char *path, char *err, size_t n)
{
	struct gp_sq *q = calloc(1, sizeof *q);
	if (!q || !(q->path = strdup(path))) {
		free(q);
		snprintf(err, n, "%s: out of memory", path);
		return NULL;
	}
	/* an empty temporary file beside OUT: SQLite makes it a new database */
	if (gp_outfile_open(&q->out, path, GP_OUTFILE_SQLITE, err, n))
		goto fail;
	if (sqlite3_open_v2(q->out.tmp, &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		snprintf(err, n, "%s: cannot create database: %s", path, q->db ? sqlite3_errmsg(q->db) : "?");
		goto fail;
	}
	char *em = NULL;
	if (sqlite3_exec(q->db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;", NULL, NULL, &em) ||
	    sqlite3_exec(q->db, gp_sq_schema, NULL, NULL, &em)) {
		snprintf(err, n, "%s: sqlite: %s", path, em ? em : "?");
		sqlite3_free(em);
		goto fail;
	}
	for (int i = 0; i < ST_COUNT; i++)
		if (sqlite3_prepare_v2(q->db, gp_sq_ins[i], -1, &q->st[i], NULL) != SQLITE_OK) {
			snprintf(err, n, "%s: sqlite: %s", path, sqlite3_errmsg(q->db));
			goto fail;
		}
	return q;
fail:
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(q->st[i]);
	if (q->db)
		sqlite3_close(q->db);
	gp_outfile_discard(&q->out);
	free(q->path);
	free(q);
	return NULL;
}

static void gp_sq_begin(void *ctx, size_t index, const char *trace_path, uint32_t pid)
{
	struct gp_sq *q = ctx;
	q->rank = (int64_t)index;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(q->db, "INSERT INTO TRACES VALUES(?,?,?)", -1, &s, NULL) != SQLITE_OK)
		return gp_sq_fail(q, "insert trace");
	sqlite3_bind_int64(s, 1, q->rank);
	sqlite3_bind_text(s, 2, trace_path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 3, pid);
	if (sqlite3_step(s) != SQLITE_DONE)
		gp_sq_fail(q, "insert trace");
	sqlite3_finalize(s);
}

static void gp_sq_record(void *ctx, const struct gp_an *an, const union gp_rec *r)
{
	struct gp_sq *q = ctx;
	sqlite3_stmt *s;
	switch (r->type) {
	case GP_REC_STRING: {
		char stackbuf[1024], *buf = r->string.len < sizeof stackbuf ? stackbuf : malloc((size_t)r->string.len + 1);
		if (!buf)
			return gp_sq_fail(q, "out of memory");
		gp_string_text(r, gp_rec_slots(r), buf, buf == stackbuf ? sizeof stackbuf : (size_t)r->string.len + 1);
		s = q->st[ST_STR];
		sqlite3_bind_int64(s, 1, q->rank);
		sqlite3_bind_int64(s, 2, r->string.id);
		sqlite3_bind_text(s, 3, buf, -1, SQLITE_TRANSIENT);
		gp_sq_step(q, ST_STR);
		if (buf != stackbuf)
			free(buf);
		break;
	}
	case GP_REC_RUNTIME_API:
	case GP_REC_DRIVER_API:
	case GP_REC_HOOK_API: {
		s = q->st[ST_API];
		const char *nm = gp_an_api_name(an, r->type, r->api.api_id);
		sqlite3_bind_int64(s, 1, q->rank);
		sqlite3_bind_int64(s, 2, (int64_t)r->api.start);
		sqlite3_bind_int64(s, 3, (int64_t)(r->api.start + gp_api_dur_ns(&r->api)));
		sqlite3_bind_int64(s, 4, r->api.tid);
		sqlite3_bind_int64(s, 5, r->api.corr);
		sqlite3_bind_int64(s, 6, r->api.api_id);
		if (nm)
			sqlite3_bind_text(s, 7, nm, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(s, 8, r->type == GP_REC_RUNTIME_API ? "runtime" : r->type == GP_REC_DRIVER_API ? "driver" : "hook",
				  -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 9, GP_API_CLASS(r->api.class_flags));
		sqlite3_bind_int64(s, 10, r->api.result);
		gp_sq_step(q, ST_API);
		break;
	}
	case GP_REC_MARKER: {
		s = q->st[ST_MARK];
		const char *t = gp_an_string(an, r->marker.name);
		sqlite3_bind_int64(s, 1, q->rank);
		sqlite3_bind_int64(s, 2, r->marker.kind);
		sqlite3_bind_int64(s, 3, r->marker.tid);
		sqlite3_bind_int64(s, 4, (int64_t)r->marker.ts);
		sqlite3_bind_int64(s, 5, (int64_t)r->marker.id);
		if (t)
			sqlite3_bind_text(s, 6, t, -1, SQLITE_TRANSIENT);
		gp_sq_step(q, ST_MARK);
		break;
	}
	default:
		break;
	}
}

static void gp_sq_op(const struct gp_an_op *op, void *ctx)
{
	struct gp_sq *q = ctx;
	sqlite3_stmt *s = q->st[ST_OP];
	static const char *const kinds[] = { "", "kernel", "memcpy", "memset", "hook-only" };
	sqlite3_bind_int64(s, 1, q->rank);
	sqlite3_bind_text(s, 2, kinds[op->kind <= 4 ? op->kind : 0], -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, op->name ? op->name : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 4, op->device);
	sqlite3_bind_int64(s, 5, op->stream);
	sqlite3_bind_int64(s, 6, op->corr);
	sqlite3_bind_int64(s, 7, op->tid);
	if (op->has_api) {
		sqlite3_bind_int64(s, 8, (int64_t)op->api_start);
		sqlite3_bind_int64(s, 9, (int64_t)op->api_end);
	}
	if (op->has_gpu) {
		sqlite3_bind_int64(s, 10, (int64_t)op->gpu_start);
		sqlite3_bind_int64(s, 11, (int64_t)op->gpu_end);
	}
	sqlite3_bind_int64(s, 12, (int64_t)op->launch_ns);
	sqlite3_bind_int64(s, 13, (int64_t)op->queue_ns);
	sqlite3_bind_int64(s, 14, (int64_t)op->execute_ns);
	sqlite3_bind_int64(s, 15, op->iter);
	if (op->nvtx)
		sqlite3_bind_text(s, 16, op->nvtx, -1, SQLITE_TRANSIENT);
	if (op->callsite)
		sqlite3_bind_text(s, 17, op->callsite, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 18, (int64_t)op->bytes);
	sqlite3_bind_int64(s, 19, op->copy_kind);
	sqlite3_bind_int64(s, 20, op->has_api);
	sqlite3_bind_int64(s, 21, op->has_gpu);
	gp_sq_step(q, ST_OP);
}

static void gp_sq_wait(const struct gp_an_wait *w, void *ctx)
{
	struct gp_sq *q = ctx;
	sqlite3_stmt *s = q->st[ST_SYNC];
	sqlite3_bind_int64(s, 1, q->rank);
	sqlite3_bind_int64(s, 2, w->kind);
	sqlite3_bind_int64(s, 3, w->tid);
	sqlite3_bind_int64(s, 4, w->corr);
	sqlite3_bind_int64(s, 5, (int64_t)w->call_start);
	sqlite3_bind_int64(s, 6, (int64_t)w->call_end);
	sqlite3_bind_int64(s, 7, (int64_t)w->w0);
	sqlite3_bind_int64(s, 8, (int64_t)w->w1);
	sqlite3_bind_int64(s, 9, (int64_t)(w->w1 - w->w0));
	sqlite3_bind_int64(s, 10, w->attributed);
	if (w->attributed)
		sqlite3_bind_int64(s, 11, w->op_corr);
	gp_sq_step(q, ST_SYNC);
}

static void gp_sq_iters(struct gp_sq *q, const struct gp_rep *rep, int64_t rank)
{
	sqlite3_stmt *s = q->st[ST_ITER];
	for (size_t i = 0; i < rep->niters; i++) {
		const struct gp_rep_iter *it = &rep->iters[i];
		sqlite3_bind_int64(s, 1, rank);
		sqlite3_bind_int64(s, 2, it->iter);
		sqlite3_bind_int64(s, 3, (int64_t)it->start);
		sqlite3_bind_int64(s, 4, (int64_t)it->end);
		sqlite3_bind_int64(s, 5, (int64_t)(it->end - it->start));
		sqlite3_bind_int64(s, 6, (int64_t)it->ops);
		sqlite3_bind_int64(s, 7, (int64_t)it->launch_ns);
		sqlite3_bind_int64(s, 8, (int64_t)it->queue_ns);
		sqlite3_bind_int64(s, 9, (int64_t)it->execute_ns);
		sqlite3_bind_int64(s, 10, (int64_t)it->sync_ns);
		gp_sq_step(q, ST_ITER);
	}
}

static int gp_sq_close(void *ctx, const struct gp_rep *rep, const struct gp_out_opts *o, char *err, size_t n)
{
	(void)o;
	struct gp_sq *q = ctx;
	if (rep) {
		if (rep->nranks)
			for (size_t r = 0; r < rep->nranks; r++)
				gp_sq_iters(q, &rep->ranks[r], (int64_t)r);
		else
			gp_sq_iters(q, rep, 0);
	}
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(q->st[i]);
	char *em = NULL;
	if (!q->failed && (sqlite3_exec(q->db, gp_sq_views, NULL, NULL, &em) ||
			   sqlite3_exec(q->db, "COMMIT;", NULL, NULL, &em))) {
		snprintf(q->msg, sizeof q->msg, "%s: sqlite: %s", q->path, em ? em : "?");
		q->failed = 1;
	}
	sqlite3_free(em);
	if (sqlite3_close(q->db) != SQLITE_OK && !q->failed) {
		snprintf(q->msg, sizeof q->msg, "%s: sqlite: cannot close", q->path);
		q->failed = 1;
	}
	int rc = q->failed ? -EIO : 0;
	if (rc)
		snprintf(err, n, "%s", q->msg);
	if (rc || !rep)
		gp_outfile_discard(&q->out); /* leave OUT as it was */
	else
		rc = gp_outfile_commit(&q->out, err, n);
	free(q->path);
	free(q);
	return rc;
}

const struct gp_exporter gp_export_sqlite = {
	.name = "sqlite",
	.open = gp_sq_open,
	.begin = gp_sq_begin,
	.record = gp_sq_record,
	.op = gp_sq_op,
	.wait = gp_sq_wait,
	.close = gp_sq_close,
};
