/*
 * export_sqlite.c — `--export sqlite FILE`: a SQLite database of the
 * timeline in the schema of `nsys export --type sqlite` for every table that
 * shares an Nsight Systems name, so nsys's own queries (kernel, API and
 * memory-time summaries: `JOIN StringIds s ON k.shortName = s.id`) give the
 * same answers on it:
 *
 *   StringIds(id, value)             one id space for the whole file (all traces)
 *   CUPTI_ACTIVITY_KIND_KERNEL       shortName/demangledName/mangledName = StringIds ids
 *   CUPTI_ACTIVITY_KIND_RUNTIME      runtime and driver calls; nameId = StringIds id of
 *                                    the API's name (hook records only in hook-only traces)
 *   CUPTI_ACTIVITY_KIND_MEMCPY       srcKind/dstKind: CUPTI memory kinds as far as the
 *                                    trace knows them (export_copy.c), else 0 (Unknown)
 *   CUPTI_ACTIVITY_KIND_MEMSET / _SYNCHRONIZATION
 *   NVTX_EVENTS                      the trace's NVTX ranges and marks (eventType 59
 *                                    push/pop, 60 start/end, 34 mark, 75 domain), text
 *                                    in `text`; an unclosed range keeps end NULL
 *   TARGET_INFO_CUDA_STREAM, ThreadNames, ENUM_CUDA_MEMCPY_OPER,
 *   ENUM_CUDA_MEM_KIND, ENUM_NSYS_EVENT_TYPE, ENUM_CUPTI_SYNC_TYPE
 *
 * Every globalTid is nsys's serialized id, (pid << 24) | (tid & 0xffffff),
 * from the OS tid (a CUPTI thread id is translated once the join paired it),
 * the same in every table; globalPid = pid << 24. gpuphase's own tables sit
 * beside them: TRACES, GPUPHASE_OPS, GPUPHASE_SYNCS, GPUPHASE_MARKERS,
 * GPUPHASE_ITERATIONS and the tables GPUPHASE_OP_PHASES (per-op
 * launch/queue/execute/sync) and GPUPHASE_OPERATOR_SUMMARY; their `rank` is
 * the trace's place on the command line. docs/report-json.md documents it.
 *
 * Every time is on one time line, the first trace's clock: another trace's
 * times go onto it through their clock pairs (clockmap.h, as in the Chrome
 * and Perfetto exports), so the ranks of a job on several hosts line up; a
 * single trace keeps its own times.
 *
 * Rows are inserted while pass 2 streams, in one transaction, into a
 * temporary file renamed over FILE at the end (outfile.c). Called by main.c on the report thread.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/util/clockmap.h"
#include "report/util/fmt.h"
#include "export.h"
#include "gp_reader.h"
#include "report/util/map.h"
#include "report/util/outfile.h"

enum { ST_STR, ST_API, ST_OP, ST_SYNC, ST_MARK, ST_ITER, ST_KERN, ST_MEMCPY, ST_MEMSET, ST_CSYNC, ST_THREAD,
       ST_STREAM, ST_NVTX, ST_NVTX_END, ST_COUNT };

/* nsys's NVTX event types (ENUM_NSYS_EVENT_TYPE) */
enum { GP_NSYS_NVTX_MARK = 34, GP_NSYS_NVTX_PUSHPOP = 59, GP_NSYS_NVTX_STARTEND = 60, GP_NSYS_NVTX_DOMAIN = 75 };

struct gp_sq {
	struct gp_outfile out; /* the database is built in out.tmp, renamed at close */
	sqlite3 *db;
	sqlite3_stmt *st[ST_COUNT];
	int64_t rank;
	int64_t gpid;              /* this trace's globalPid: pid << 24        */
	int failed;
	struct gp_map strs;        /* string hash (probed) -> StringIds id      */
	char **strv;               /* StringIds id - 1 -> its text              */
	size_t nstr, capstr;
	struct gp_map streams;     /* device << 32 | stream -> 1 (this trace)   */
	struct gp_map raw_tids;    /* globalTid written from an unpaired CUPTI
				    * thread id -> 1 (all traces)              */
	struct gp_map retid;       /* such a globalTid -> the OS one, learnt later */
	struct gp_map nvtx_top;    /* tid -> NVTX_EVENTS rowid of its innermost open
				    * push/pop range, 0 = none (this trace)     */
	struct gp_map nvtx_up;     /* such a rowid -> the rowid of the range it
				    * is nested in, 0 = none (this trace)      */
	struct gp_map nvtx_open;   /* start/end range id -> its rowid (this trace) */
	struct gp_map domains;     /* trace string id of an NVTX domain -> its
				    * domainId (this trace)                    */
	int64_t ndomains;          /* domainIds handed out (all traces)        */
	const struct gp_an *an;
	struct gp_clockline line;  /* every trace's times on the first's clock */
	char msg[256];
};

static const char gp_sq_schema[] =
	/* Nsight Systems' tables (nsys export --type sqlite), same names and columns */
	"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE ThreadNames(nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,"
	" returnValue INTEGER NOT NULL, callchainId INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,"
	" globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,"
	" launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER, gridX INTEGER, gridY INTEGER,"
	" gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER, staticSharedMemory INTEGER,"
	" dynamicSharedMemory INTEGER, localMemoryPerThread INTEGER, localMemoryTotal INTEGER, gridId INTEGER,"
	" sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,"
	" globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER,"
	" srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER,"
	" dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,"
	" globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION(start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,"
	" globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);"
	"CREATE TABLE TARGET_INFO_CUDA_STREAM(streamId INTEGER NOT NULL, hwId INTEGER NOT NULL,"
	" vmId INTEGER NOT NULL, processId INTEGER NOT NULL, contextId INTEGER NOT NULL, priority INTEGER NOT NULL,"
	" flag INTEGER NOT NULL);"
	"CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,"
	" category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,"
	" textId INTEGER REFERENCES StringIds(id), domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,"
	" doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER,"
	" jsonText TEXT);"
	"CREATE TABLE ENUM_CUDA_MEMCPY_OPER(id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
	"INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(0,'CUDA_MEMCPY_KIND_UNKNOWN','Unknown'),"
	" (1,'CUDA_MEMCPY_KIND_HTOD','Host-to-Device'),(2,'CUDA_MEMCPY_KIND_DTOH','Device-to-Host'),"
	" (3,'CUDA_MEMCPY_KIND_HTOA','Host-to-Array'),(4,'CUDA_MEMCPY_KIND_ATOH','Array-to-Host'),"
	" (5,'CUDA_MEMCPY_KIND_ATOA','Array-to-Array'),(6,'CUDA_MEMCPY_KIND_ATOD','Array-to-Device'),"
	" (7,'CUDA_MEMCPY_KIND_DTOA','Device-to-Array'),(8,'CUDA_MEMCPY_KIND_DTOD','Device-to-Device'),"
	" (9,'CUDA_MEMCPY_KIND_HTOH','Host-to-Host'),(10,'CUDA_MEMCPY_KIND_PTOP','Peer-to-Peer'),"
	" (11,'CUDA_MEMCPY_KIND_UVM_HTOD','Unified Host-to-Device'),"
	" (12,'CUDA_MEMCPY_KIND_UVM_DTOH','Unified Device-to-Host'),"
	" (13,'CUDA_MEMCPY_KIND_UVM_DTOD','Unified Device-to-Device');"
	"CREATE TABLE ENUM_CUDA_MEM_KIND(id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
	"INSERT INTO ENUM_CUDA_MEM_KIND VALUES(0,'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN','Unknown'),"
	" (1,'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE','Pageable'),(2,'CUDA_MEMOPR_MEMORY_KIND_PINNED','Pinned'),"
	" (3,'CUDA_MEMOPR_MEMORY_KIND_DEVICE','Device'),(4,'CUDA_MEMOPR_MEMORY_KIND_ARRAY','Array'),"
	" (5,'CUDA_MEMOPR_MEMORY_KIND_MANAGED','Managed'),(6,'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC','Device Static'),"
	" (7,'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC','Managed Static');"
	"CREATE TABLE ENUM_NSYS_EVENT_TYPE(id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
	"INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(34,'NvtxMark','NVTX Mark'),"
	" (59,'NvtxPushPopRange','NVTX PushPop Range'),(60,'NvtxStartEndRange','NVTX StartEnd Range'),"
	" (75,'NvtxDomainCreate','NVTX Domain Create');"
	"CREATE TABLE ENUM_CUPTI_SYNC_TYPE(id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
	"INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES(0,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN','Unknown'),"
	" (1,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE','Event sync'),"
	" (2,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT','Stream wait event'),"
	" (3,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE','Stream sync'),"
	" (4,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE','Context sync');"
	/* gpuphase's own tables */
	"CREATE TABLE TRACES(rank INTEGER PRIMARY KEY, path TEXT, pid INTEGER, globalPid INTEGER);"
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

/* The per-op phases and the per-name summary, made at close: each op's
 * launch, queue and execute as its GPUPHASE_OPS row has them (final: a
 * blocking call's wait is out of its launch already), and the sync charged
 * to it (its attributed rows in GPUPHASE_SYNCS). */
static const char gp_sq_views[] =
	"CREATE INDEX ops_corr ON GPUPHASE_OPS(rank, correlationId);"
	"CREATE INDEX syncs_op ON GPUPHASE_SYNCS(rank, op_correlationId);"
	/* Tables with declared column types, filled once at close, not views:
	 * SQLite gives a view's computed columns no type, and DuckDB's sqlite
	 * reader then reads them as text. */
	"CREATE TABLE GPUPHASE_OP_PHASES(rank INTEGER, kind TEXT, name TEXT, deviceId INTEGER, streamId INTEGER,"
	" correlationId INTEGER, globalTid INTEGER, iteration INTEGER, nvtx TEXT, callsite TEXT, launch_ns INTEGER,"
	" queue_ns INTEGER, execute_ns INTEGER, sync_ns INTEGER);"
	"INSERT INTO GPUPHASE_OP_PHASES SELECT o.rank, o.kind, o.name, o.deviceId, o.streamId, o.correlationId,"
	" o.globalTid, o.iteration, o.nvtx, o.callsite,"
	" o.launch_ns, o.queue_ns, o.execute_ns,"
	" COALESCE((SELECT SUM(s.blocked_ns) FROM GPUPHASE_SYNCS s WHERE s.rank = o.rank AND s.attributed = 1 AND"
	"  s.op_correlationId = o.correlationId), 0)"
	" FROM GPUPHASE_OPS o;"
	"CREATE TABLE GPUPHASE_OPERATOR_SUMMARY(name TEXT, count INTEGER, launch_ns INTEGER, queue_ns INTEGER,"
	" execute_ns INTEGER, sync_ns INTEGER, total_ns INTEGER);"
	"INSERT INTO GPUPHASE_OPERATOR_SUMMARY SELECT name, COUNT(*), SUM(launch_ns), SUM(queue_ns), SUM(execute_ns),"
	" SUM(sync_ns), SUM(launch_ns + execute_ns + sync_ns) FROM GPUPHASE_OP_PHASES GROUP BY name"
	" ORDER BY SUM(launch_ns + execute_ns + sync_ns) DESC;";

static const char *const gp_sq_ins[ST_COUNT] = {
	[ST_STR] = "INSERT INTO StringIds VALUES(?,?)",
	[ST_API] = "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(?,?,?,?,?,?,?,NULL)",
	[ST_OP] = "INSERT INTO GPUPHASE_OPS VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_SYNC] = "INSERT INTO GPUPHASE_SYNCS VALUES(?,?,?,?,?,?,?,?,?,?,?)",
	[ST_MARK] = "INSERT INTO GPUPHASE_MARKERS VALUES(?,?,?,?,?,?)",
	[ST_ITER] = "INSERT INTO GPUPHASE_ITERATIONS VALUES(?,?,?,?,?,?,?,?,?,?)",
	[ST_KERN] = "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(start, end, deviceId, contextId, streamId, correlationId,"
		    " globalPid, demangledName, shortName, mangledName, launchType, gridX, gridY, gridZ, blockX, blockY,"
		    " blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory)"
		    " VALUES(?,?,?,0,?,?,?,?,?,?,0,?,?,?,?,?,?,?,?,?)",
	[ST_MEMCPY] = "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY(start, end, deviceId, contextId, streamId, correlationId,"
		      " globalPid, bytes, copyKind, srcKind, dstKind) VALUES(?,?,?,0,?,?,?,?,?,?,?)",
	[ST_MEMSET] = "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET(start, end, deviceId, contextId, streamId, correlationId,"
		      " globalPid, value, bytes, memKind) VALUES(?,?,?,0,?,?,?,0,?,0)",
	[ST_CSYNC] = "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES(?,?,0,0,?,?,?,?,0)",
	[ST_THREAD] = "INSERT INTO ThreadNames VALUES(?,0,?)",
	[ST_STREAM] = "INSERT INTO TARGET_INFO_CUDA_STREAM VALUES(?,?,0,?,0,0,0)",
	[ST_NVTX] = "INSERT INTO NVTX_EVENTS(start, eventType, rangeId, text, globalTid, domainId) VALUES(?,?,?,?,?,?)",
	[ST_NVTX_END] = "UPDATE NVTX_EVENTS SET end = ?, endGlobalTid = ? WHERE rowid = ?",
};

static void gp_sq_fail(struct gp_sq *q, const char *what)
{
	if (!q->failed)
		snprintf(q->msg, sizeof q->msg, "%s: sqlite: %s: %s", q->out.path, what, sqlite3_errmsg(q->db));
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
	/* an empty temporary file beside OUT: SQLite makes it a new database */
	struct gp_sq *q = gp_outfile_context(sizeof *q, offsetof(struct gp_sq, out), path, GP_OUTFILE_SQLITE, err, n);
	if (!q)
		return NULL;
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
	free(q);
	return NULL;
}

/* nsys's serialized thread id: pid in bits 24..47, tid in bits 0..23. */
static int64_t gp_sq_gtid(const struct gp_sq *q, uint32_t tid)
{
	return q->gpid | (int64_t)(tid & 0xffffffu);
}

static uint64_t gp_sq_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* Bind a string from the trace as TEXT: valid UTF-8 as the JSON report
 * stores it (a byte that is not UTF-8 as U+FFFD), since SQLite keeps any
 * bytes as TEXT and Python's sqlite3 or pandas then cannot read the row. */
static void gp_sq_bind_str(struct gp_sq *q, sqlite3_stmt *s, int col, const char *text)
{
	if (gp_fmt_utf8_valid(text)) {
		sqlite3_bind_text(s, col, text, -1, SQLITE_TRANSIENT);
		return;
	}
	char *fixed = gp_fmt_utf8_dup(text);
	if (!fixed)
		return gp_sq_fail(q, "out of memory");
	sqlite3_bind_text(s, col, fixed, -1, SQLITE_TRANSIENT);
	free(fixed);
}

/* The StringIds id of `text` (1-based), inserted on first use; 0 on failure.
 * One id space for the whole file, so ids from two traces never collide. */
static int64_t gp_sq_intern(struct gp_sq *q, const char *text)
{
	if (q->failed)
		return 0;
	uint64_t h = gp_sq_hash(text);
	for (;; h++) {
		if (h == GP_MAP_EMPTY)
			continue;
		uint64_t *v = gp_map_get(&q->strs, h);
		if (!v)
			break;
		if (!strcmp(q->strv[*v - 1], text))
			return (int64_t)*v;
	}
	if (q->nstr == q->capstr) {
		size_t nc = q->capstr ? q->capstr * 2 : 256;
		char **nv = realloc(q->strv, nc * sizeof *nv);
		if (!nv) {
			gp_sq_fail(q, "out of memory");
			return 0;
		}
		q->strv = nv;
		q->capstr = nc;
	}
	char *dup = strdup(text);
	if (!dup || gp_map_put(&q->strs, h, q->nstr + 1)) {
		free(dup);
		gp_sq_fail(q, "out of memory");
		return 0;
	}
	q->strv[q->nstr++] = dup;
	int64_t id = (int64_t)q->nstr;
	sqlite3_stmt *s = q->st[ST_STR];
	sqlite3_bind_int64(s, 1, id);
	gp_sq_bind_str(q, s, 2, text);
	gp_sq_step(q, ST_STR);
	return id;
}

static void gp_sq_begin(void *ctx, size_t index, const char *trace_path, uint32_t pid)
{
	struct gp_sq *q = ctx;
	q->rank = (int64_t)index;
	q->gpid = (int64_t)(pid & 0xffffffu) << 24;
	q->an = NULL;
	struct gp_map *per_trace[] = { &q->streams, &q->nvtx_top, &q->nvtx_up, &q->nvtx_open, &q->domains };
	for (size_t i = 0; i < sizeof per_trace / sizeof per_trace[0]; i++) {
		gp_map_free(per_trace[i]);
		memset(per_trace[i], 0, sizeof *per_trace[i]);
	}
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(q->db, "INSERT INTO TRACES VALUES(?,?,?,?)", -1, &s, NULL) != SQLITE_OK)
		return gp_sq_fail(q, "insert trace");
	sqlite3_bind_int64(s, 1, q->rank);
	gp_sq_bind_str(q, s, 2, trace_path);
	sqlite3_bind_int64(s, 3, pid);
	sqlite3_bind_int64(s, 4, q->gpid);
	if (sqlite3_step(s) != SQLITE_DONE)
		gp_sq_fail(q, "insert trace");
	sqlite3_finalize(s);
}

/* Time t of the trace being written (`rank`: its index) on the export's
 * one time line. */
static int64_t gp_sq_time(const struct gp_sq *q, int64_t rank, uint64_t t)
{
	return (int64_t)gp_clockline_time(&q->line, (size_t)rank, t);
}

/* The OS tid of a CUPTI thread id once the join has paired them. */
static uint32_t gp_sq_os_tid(const struct gp_sq *q, uint32_t tid)
{
	return q->an ? gp_an_os_tid(q->an, tid) : tid;
}

/* The domainId of the marker's NVTX domain (0: the default one); a named
 * domain gets the next id and, as nsys writes it, an NvtxDomainCreate row
 * holding its name, at its first use. */
static int64_t gp_sq_nvtx_domain(struct gp_sq *q, const struct gp_an *an, const struct gp_rec_marker *m)
{
	const char *name = m->domain ? gp_an_string(an, m->domain) : NULL;
	if (!name)
		return 0;
	uint64_t *v = gp_map_get(&q->domains, m->domain);
	if (v)
		return (int64_t)*v;
	int64_t id = ++q->ndomains;
	if (gp_map_put(&q->domains, m->domain, (uint64_t)id)) {
		gp_sq_fail(q, "out of memory");
		return 0;
	}
	sqlite3_stmt *s = q->st[ST_NVTX];
	sqlite3_bind_int64(s, 1, gp_sq_time(q, q->rank, m->ts));
	sqlite3_bind_int64(s, 2, GP_NSYS_NVTX_DOMAIN);
	gp_sq_bind_str(q, s, 4, name);
	sqlite3_bind_int64(s, 5, gp_sq_gtid(q, m->tid));
	sqlite3_bind_int64(s, 6, id);
	gp_sq_step(q, ST_NVTX);
	return id;
}

/* Close the range whose row is `row` at the marker's time, on its thread. */
static void gp_sq_nvtx_end(struct gp_sq *q, const struct gp_rec_marker *m, uint64_t row)
{
	sqlite3_stmt *s = q->st[ST_NVTX_END];
	sqlite3_bind_int64(s, 1, gp_sq_time(q, q->rank, m->ts));
	sqlite3_bind_int64(s, 2, gp_sq_gtid(q, m->tid));
	sqlite3_bind_int64(s, 3, (int64_t)row);
	gp_sq_step(q, ST_NVTX_END);
}

/* An NVTX record as nsys's NVTX_EVENTS row: a push/pop range (59) or a
 * start/end range (60) is inserted when it opens and given its end when it
 * closes (an unclosed one keeps end NULL); a mark (34) has no end. A pop
 * with no open push on its thread, or an end of no open range, adds
 * nothing. */
static void gp_sq_nvtx(struct gp_sq *q, const struct gp_an *an, const struct gp_rec_marker *m)
{
	uint64_t *v;
	if (m->kind == GP_MARK_POP) {
		if ((v = gp_map_get(&q->nvtx_top, m->tid)) && *v) {
			uint64_t row = *v, *up = gp_map_get(&q->nvtx_up, row);
			gp_sq_nvtx_end(q, m, row);
			*v = up ? *up : 0;
		}
		return;
	}
	if (m->kind == GP_MARK_END) {
		if ((v = gp_map_get(&q->nvtx_open, m->id)) && *v) {
			gp_sq_nvtx_end(q, m, *v);
			*v = 0;
		}
		return;
	}
	int type = m->kind == GP_MARK_PUSH ? GP_NSYS_NVTX_PUSHPOP : m->kind == GP_MARK_START ? GP_NSYS_NVTX_STARTEND
		   : m->kind == GP_MARK_INSTANT ? GP_NSYS_NVTX_MARK : 0;
	if (!type)
		return;
	int64_t domain = gp_sq_nvtx_domain(q, an, m);
	const char *text = gp_an_string(an, m->name);
	sqlite3_stmt *s = q->st[ST_NVTX];
	sqlite3_bind_int64(s, 1, gp_sq_time(q, q->rank, m->ts));
	sqlite3_bind_int64(s, 2, type);
	if (type == GP_NSYS_NVTX_STARTEND)
		sqlite3_bind_int64(s, 3, (int64_t)m->id);
	if (text)
		gp_sq_bind_str(q, s, 4, text);
	sqlite3_bind_int64(s, 5, gp_sq_gtid(q, m->tid));
	sqlite3_bind_int64(s, 6, domain);
	gp_sq_step(q, ST_NVTX);
	if (q->failed || type == GP_NSYS_NVTX_MARK)
		return;
	uint64_t row = (uint64_t)sqlite3_last_insert_rowid(q->db);
	int err;
	if (type == GP_NSYS_NVTX_STARTEND) {
		err = gp_map_put(&q->nvtx_open, m->id, row);
	} else {
		v = gp_map_get(&q->nvtx_top, m->tid);
		err = gp_map_put(&q->nvtx_up, row, v ? *v : 0) || gp_map_put(&q->nvtx_top, m->tid, row);
	}
	if (err)
		gp_sq_fail(q, "out of memory");
}

static void gp_sq_record(void *ctx, const struct gp_an *an, const union gp_rec *r)
{
	struct gp_sq *q = ctx;
	sqlite3_stmt *s;
	if (q->an != an && gp_clockline_set(&q->line, (size_t)q->rank, gp_an_clockmap(an)))
		gp_sq_fail(q, "out of memory");
	q->an = an;
	switch (r->type) {
	case GP_REC_RUNTIME_API:
	case GP_REC_DRIVER_API:
	case GP_REC_HOOK_API: {
		if (r->type == GP_REC_HOOK_API && !gp_an_hook_only(an))
			return; /* CUPTI's records are the timing truth; hooks would count each call twice */
		const char *nm = gp_an_api_name(an, r->type, r->api.api_id);
		char buf[48];
		if (!nm) {
			snprintf(buf, sizeof buf, "%s api %u", r->type == GP_REC_DRIVER_API ? "driver" : "runtime",
				 r->api.api_id);
			nm = buf;
		}
		int64_t id = gp_sq_intern(q, nm);
		s = q->st[ST_API];
		sqlite3_bind_int64(s, 1, gp_sq_time(q, q->rank, r->api.start));
		sqlite3_bind_int64(s, 2, gp_sq_time(q, q->rank, r->api.start + gp_api_dur_ns(&r->api)));
		sqlite3_bind_int64(s, 3, r->type == GP_REC_DRIVER_API ? 1 : 0);
		uint32_t tid = r->type == GP_REC_HOOK_API ? r->api.tid : gp_an_os_tid(an, r->api.tid);
		if (r->type != GP_REC_HOOK_API && tid == r->api.tid) /* not paired (yet): fixed at close */
			gp_map_put(&q->raw_tids, (uint64_t)gp_sq_gtid(q, tid), 1);
		sqlite3_bind_int64(s, 4, gp_sq_gtid(q, tid));
		sqlite3_bind_int64(s, 5, r->api.corr);
		sqlite3_bind_int64(s, 6, id);
		sqlite3_bind_int64(s, 7, r->api.result);
		gp_sq_step(q, ST_API);
		break;
	}
	case GP_REC_MARKER: {
		s = q->st[ST_MARK];
		const char *t = gp_an_string(an, r->marker.name);
		sqlite3_bind_int64(s, 1, q->rank);
		sqlite3_bind_int64(s, 2, r->marker.kind);
		sqlite3_bind_int64(s, 3, gp_sq_gtid(q, r->marker.tid));
		sqlite3_bind_int64(s, 4, gp_sq_time(q, q->rank, r->marker.ts));
		sqlite3_bind_int64(s, 5, (int64_t)r->marker.id);
		if (t)
			gp_sq_bind_str(q, s, 6, t);
		gp_sq_step(q, ST_MARK);
		gp_sq_nvtx(q, an, &r->marker);
		break;
	}
	case GP_REC_THREAD: {
		const char *nm = gp_an_string(an, r->thread.name);
		if (!nm)
			break;
		int64_t id = gp_sq_intern(q, nm);
		s = q->st[ST_THREAD];
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_int64(s, 2, gp_sq_gtid(q, r->thread.tid));
		gp_sq_step(q, ST_THREAD);
		break;
	}
	default:
		break;
	}
}

/* The op's row in nsys's activity table for its kind, and its stream once. */
static void gp_sq_activity(struct gp_sq *q, const struct gp_an_op *op)
{
	int which = op->kind == GP_OP_KERNEL ? ST_KERN : op->kind == GP_OP_MEMCPY ? ST_MEMCPY
		    : op->kind == GP_OP_MEMSET ? ST_MEMSET : -1;
	if (which < 0 || !op->has_gpu)
		return;
	sqlite3_stmt *s = q->st[which];
	int64_t name = which == ST_KERN ? gp_sq_intern(q, op->name ? op->name : "") : 0;
	sqlite3_bind_int64(s, 1, gp_sq_time(q, q->rank, op->gpu_start));
	sqlite3_bind_int64(s, 2, gp_sq_time(q, q->rank, op->gpu_end));
	sqlite3_bind_int64(s, 3, op->device);
	sqlite3_bind_int64(s, 4, op->stream);
	sqlite3_bind_int64(s, 5, op->corr);
	sqlite3_bind_int64(s, 6, q->gpid);
	if (which == ST_KERN) {
		sqlite3_bind_int64(s, 7, name);
		sqlite3_bind_int64(s, 8, name);
		sqlite3_bind_int64(s, 9, name);
		const struct gp_rec_launch_cfg *c = op->launch_cfg; /* none recorded: NULL columns */
		const int64_t cfg[] = { c ? c->grid[0] : 0, c ? c->grid[1] : 0, c ? c->grid[2] : 0, c ? c->block[0] : 0,
					c ? c->block[1] : 0, c ? c->block[2] : 0, c ? c->regs : 0,
					c ? c->static_smem : 0, c ? c->dynamic_smem : 0 };
		for (int i = 0; c && i < 9; i++)
			sqlite3_bind_int64(s, 10 + i, cfg[i]);
	} else {
		sqlite3_bind_int64(s, 7, (int64_t)op->bytes);
		if (which == ST_MEMCPY) {
			unsigned src, dst;
			gp_export_copy_sides(op, &src, &dst);
			sqlite3_bind_int64(s, 8, op->copy_kind);
			sqlite3_bind_int64(s, 9, src);
			sqlite3_bind_int64(s, 10, dst);
		}
	}
	gp_sq_step(q, which);
	uint64_t sk = (uint64_t)op->device << 32 | op->stream;
	if (!gp_map_get(&q->streams, sk) && !gp_map_put(&q->streams, sk, 1)) {
		s = q->st[ST_STREAM];
		sqlite3_bind_int64(s, 1, op->stream);
		sqlite3_bind_int64(s, 2, op->device);
		sqlite3_bind_int64(s, 3, q->gpid >> 24);
		gp_sq_step(q, ST_STREAM);
	}
}

static void gp_sq_op(const struct gp_an_op *op, void *ctx)
{
	struct gp_sq *q = ctx;
	gp_sq_activity(q, op);
	sqlite3_stmt *s = q->st[ST_OP];
	static const char *const kinds[] = { "", "kernel", "memcpy", "memset", "hook-only", "host-callback" };
	sqlite3_bind_int64(s, 1, q->rank);
	sqlite3_bind_text(s, 2, kinds[op->kind <= 5 ? op->kind : 0], -1, SQLITE_STATIC);
	gp_sq_bind_str(q, s, 3, op->name ? op->name : "");
	sqlite3_bind_int64(s, 4, op->device);
	sqlite3_bind_int64(s, 5, op->stream);
	sqlite3_bind_int64(s, 6, op->corr);
	if (op->tid) {
		uint32_t os = gp_sq_os_tid(q, op->tid);
		/* the join paired this CUPTI thread id after some of its calls were written */
		if (os != op->tid && gp_map_get(&q->raw_tids, (uint64_t)gp_sq_gtid(q, op->tid)))
			gp_map_put(&q->retid, (uint64_t)gp_sq_gtid(q, op->tid), (uint64_t)gp_sq_gtid(q, os));
		sqlite3_bind_int64(s, 7, gp_sq_gtid(q, os));
	}
	if (op->has_api) {
		sqlite3_bind_int64(s, 8, gp_sq_time(q, q->rank, op->api_start));
		sqlite3_bind_int64(s, 9, gp_sq_time(q, q->rank, op->api_end));
	}
	if (op->has_gpu) {
		sqlite3_bind_int64(s, 10, gp_sq_time(q, q->rank, op->gpu_start));
		sqlite3_bind_int64(s, 11, gp_sq_time(q, q->rank, op->gpu_end));
	}
	sqlite3_bind_int64(s, 12, (int64_t)op->launch_ns);
	sqlite3_bind_int64(s, 13, (int64_t)op->queue_ns);
	sqlite3_bind_int64(s, 14, (int64_t)op->execute_ns);
	sqlite3_bind_int64(s, 15, op->iter);
	if (op->nvtx)
		gp_sq_bind_str(q, s, 16, op->nvtx);
	if (op->callsite)
		gp_sq_bind_str(q, s, 17, op->callsite);
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
	int64_t gtid = gp_sq_gtid(q, gp_sq_os_tid(q, w->tid));
	sqlite3_bind_int64(s, 1, q->rank);
	sqlite3_bind_int64(s, 2, w->kind);
	sqlite3_bind_int64(s, 3, gtid);
	sqlite3_bind_int64(s, 4, w->corr);
	sqlite3_bind_int64(s, 5, gp_sq_time(q, q->rank, w->call_start));
	sqlite3_bind_int64(s, 6, gp_sq_time(q, q->rank, w->call_end));
	sqlite3_bind_int64(s, 7, gp_sq_time(q, q->rank, w->w0));
	sqlite3_bind_int64(s, 8, gp_sq_time(q, q->rank, w->w1));
	sqlite3_bind_int64(s, 9, (int64_t)(w->w1 - w->w0));
	sqlite3_bind_int64(s, 10, w->attributed);
	if (w->attributed)
		sqlite3_bind_int64(s, 11, w->op_corr);
	gp_sq_step(q, ST_SYNC);
	/* CUPTI's synchronization kinds: the explicit waits, not a blocking copy */
	int type = w->kind == GP_API_SYNC_EVENT ? 1 : w->kind == GP_API_SYNC_STREAM ? 3
		   : w->kind == GP_API_SYNC_DEVICE ? 4 : 0;
	if (!type)
		return;
	s = q->st[ST_CSYNC];
	sqlite3_bind_int64(s, 1, gp_sq_time(q, q->rank, w->call_start));
	sqlite3_bind_int64(s, 2, gp_sq_time(q, q->rank, w->call_end));
	sqlite3_bind_int64(s, 3, type == 3 ? w->stream : 0);
	sqlite3_bind_int64(s, 4, w->corr);
	sqlite3_bind_int64(s, 5, q->gpid);
	sqlite3_bind_int64(s, 6, type);
	gp_sq_step(q, ST_CSYNC);
}

static void gp_sq_iters(struct gp_sq *q, const struct gp_rep *rep, int64_t rank)
{
	sqlite3_stmt *s = q->st[ST_ITER];
	for (size_t i = 0; i < rep->niters; i++) {
		const struct gp_rep_iter *it = &rep->iters[i];
		sqlite3_bind_int64(s, 1, rank);
		sqlite3_bind_int64(s, 2, it->iter);
		sqlite3_bind_int64(s, 3, gp_sq_time(q, rank, it->start));
		sqlite3_bind_int64(s, 4, gp_sq_time(q, rank, it->end));
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
	/* calls written before the join paired their CUPTI thread id with the OS
	 * tid: one thread, one globalTid in every table */
	sqlite3_stmt *up = NULL;
	if (!q->failed && q->retid.count &&
	    sqlite3_prepare_v2(q->db, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = ? WHERE globalTid = ?", -1, &up,
			       NULL) == SQLITE_OK) {
		for (size_t i = 0; i < q->retid.cap; i++) {
			if (q->retid.keys[i] == GP_MAP_EMPTY)
				continue;
			sqlite3_bind_int64(up, 1, (int64_t)q->retid.vals[i]);
			sqlite3_bind_int64(up, 2, (int64_t)q->retid.keys[i]);
			if (sqlite3_step(up) != SQLITE_DONE)
				gp_sq_fail(q, "update globalTid");
			sqlite3_reset(up);
		}
	}
	sqlite3_finalize(up);
	char *em = NULL;
	if (!q->failed && (sqlite3_exec(q->db, gp_sq_views, NULL, NULL, &em) ||
			   sqlite3_exec(q->db, "COMMIT;", NULL, NULL, &em))) {
		snprintf(q->msg, sizeof q->msg, "%s: sqlite: %s", q->out.path, em ? em : "?");
		q->failed = 1;
	}
	sqlite3_free(em);
	if (sqlite3_close(q->db) != SQLITE_OK && !q->failed) {
		snprintf(q->msg, sizeof q->msg, "%s: sqlite: cannot close", q->out.path);
		q->failed = 1;
	}
	int rc = q->failed ? -EIO : 0;
	if (rc)
		snprintf(err, n, "%s", q->msg);
	for (size_t i = 0; i < q->nstr; i++)
		free(q->strv[i]);
	free(q->strv);
	gp_map_free(&q->strs);
	gp_map_free(&q->streams);
	gp_map_free(&q->raw_tids);
	gp_map_free(&q->retid);
	gp_map_free(&q->nvtx_top);
	gp_map_free(&q->nvtx_up);
	gp_map_free(&q->nvtx_open);
	gp_map_free(&q->domains);
	gp_clockline_free(&q->line);
	if (rc || !rep)
		gp_outfile_discard(&q->out); /* leave OUT as it was */
	else
		rc = gp_outfile_commit(&q->out, err, n);
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
