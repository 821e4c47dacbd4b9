/*
 * export_chrome.c — `--export chrome-trace FILE`: Chrome trace-event JSON
 * (the "JSON Object Format" with a traceEvents array) that Perfetto UI and
 * chrome://tracing load. Written while pass 2 streams, so memory stays flat.
 *
 * Tracks: per trace i, process (i+1)*1000 = host threads (tid = OS tid; a
 * CUPTI thread id is shown as the OS tid once a join has paired them) with
 * CUDA API calls, NVTX ranges, sync waits and iteration marks; process
 * (i+1)*1000+1+device = that GPU, one thread per stream, with the ops. A flow
 * arrow (ph s/f, a fresh id per op: the kernels of one graph launch share
 * its correlation id) goes from each launch call to its op.
 * Every event has ph, ts, pid and tid (metadata events: ts 0, and tid 0 for
 * process names); GPU threads are named "stream S".
 * Timestamps are microseconds since the trace's first event.
 * Called by main.c through struct gp_exporter, on the report thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "export.h"
#include "map.h"

struct gp_chrome {
	FILE *f;
	char *path;
	size_t index;
	uint64_t base;
	int first;
	int base_set;
	uint8_t gpu_named[256];
	struct gp_map stream_named;    /* device << 32 | stream -> 1 (this trace) */
	uint64_t nflows;               /* flow ids handed out (all traces)        */
	const struct gp_an *an;
};

static double gp_chrome_us(struct gp_chrome *c, uint64_t t)
{
	return t >= c->base ? (double)(t - c->base) / 1e3 : -(double)(c->base - t) / 1e3;
}

static void gp_chrome_sep(struct gp_chrome *c)
{
	fputs(c->first ? "\n" : ",\n", c->f);
	c->first = 0;
}

static void *gp_chrome_open(const char *path, char *err, size_t n)
{
	struct gp_chrome *c = calloc(1, sizeof *c);
	if (!c || !(c->path = strdup(path))) {
		free(c);
		snprintf(err, n, "%s: out of memory", path);
		return NULL;
	}
	c->f = fopen(path, "w");
	if (!c->f) {
		snprintf(err, n, "%s: cannot create: %s", path, strerror(errno));
		free(c->path);
		free(c);
		return NULL;
	}
	c->first = 1;
	fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [", c->f);
	return c;
}

static unsigned gp_chrome_host_pid(const struct gp_chrome *c)
{
	return (unsigned)(c->index + 1) * 1000u;
}

static void gp_chrome_begin(void *ctx, size_t index, const char *trace_path, uint32_t pid)
{
	struct gp_chrome *c = ctx;
	c->index = index;
	c->base_set = 0;
	memset(c->gpu_named, 0, sizeof c->gpu_named);
	gp_map_free(&c->stream_named);
	memset(&c->stream_named, 0, sizeof c->stream_named);
	gp_chrome_sep(c);
	fprintf(c->f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, \"ts\": 0, \"args\": {\"name\": ",
		gp_chrome_host_pid(c));
	char buf[600];
	snprintf(buf, sizeof buf, "host pid %u (%s)", pid, trace_path);
	gp_fmt_json_str(c->f, buf);
	fputs("}}", c->f);
}

static void gp_chrome_base(struct gp_chrome *c, const struct gp_an *an)
{
	if (!c->base_set) {
		c->base = gp_an_time_base(an);
		c->base_set = 1;
	}
	c->an = an;
}

static void gp_chrome_record(void *ctx, const struct gp_an *an, const union gp_rec *r)
{
	struct gp_chrome *c = ctx;
	gp_chrome_base(c, an);
	unsigned hp = gp_chrome_host_pid(c);
	switch (r->type) {
	case GP_REC_RUNTIME_API:
	case GP_REC_DRIVER_API:
	case GP_REC_HOOK_API: {
		if (r->type == GP_REC_HOOK_API && !gp_an_hook_only(an))
			return; /* CUPTI's records are the timing truth; hooks would duplicate them */
		const char *nm = gp_an_api_name(an, r->type, r->api.api_id);
		char buf[48];
		if (!nm) {
			snprintf(buf, sizeof buf, "%s api %u", r->type == GP_REC_DRIVER_API ? "driver" : "runtime",
				 r->api.api_id);
			nm = buf;
		}
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": ");
		gp_fmt_json_str(c->f, nm);
		fprintf(c->f, ", \"cat\": \"cuda_api\", \"ph\": \"X\", \"pid\": %u, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f, "
			      "\"args\": {\"corr\": %u}}",
			hp, r->type == GP_REC_HOOK_API ? r->api.tid : gp_an_os_tid(an, r->api.tid),
			gp_chrome_us(c, r->api.start), (double)gp_api_dur_ns(&r->api) / 1e3, r->api.corr);
		break;
	}
	case GP_REC_MARKER: {
		const char *nm = gp_an_string(an, r->marker.name);
		const char *ph = r->marker.kind == GP_MARK_PUSH ? "B" : r->marker.kind == GP_MARK_POP ? "E"
				 : r->marker.kind == GP_MARK_START ? "b" : r->marker.kind == GP_MARK_END ? "e" : "i";
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": ");
		gp_fmt_json_str(c->f, nm ? nm : "nvtx");
		fprintf(c->f, ", \"cat\": \"nvtx\", \"ph\": \"%s\", \"pid\": %u, \"tid\": %u, \"ts\": %.3f", ph, hp,
			r->marker.tid, gp_chrome_us(c, r->marker.ts));
		if (*ph == 'b' || *ph == 'e')
			fprintf(c->f, ", \"id\": \"%zu:%" PRIu64 "\"", c->index, r->marker.id);
		if (*ph == 'i')
			fprintf(c->f, ", \"s\": \"t\"");
		fputs("}", c->f);
		break;
	}
	case GP_REC_ITER:
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": \"iteration %" PRIu64 "\", \"cat\": \"iteration\", \"ph\": \"i\", \"s\": \"p\", "
			      "\"pid\": %u, \"tid\": %u, \"ts\": %.3f}",
			r->mark.iter, hp, r->mark.tid, gp_chrome_us(c, r->mark.ts));
		break;
	case GP_REC_THREAD: {
		const char *nm = gp_an_string(an, r->thread.name);
		if (!nm)
			break;
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": %u, \"ts\": 0, \"args\": {\"name\": ", hp,
			r->thread.tid);
		gp_fmt_json_str(c->f, nm);
		fputs("}}", c->f);
		break;
	}
	default:
		break;
	}
}

static void gp_chrome_op(const struct gp_an_op *op, void *ctx)
{
	struct gp_chrome *c = ctx;
	unsigned hp = gp_chrome_host_pid(c), gp = hp + 1u + op->device;
	if (!op->has_gpu) {
		if (op->has_api && op->kind == GP_OP_HOOK_ONLY) {
			/* hook-only: the launch call is on the host track already */
		}
		return;
	}
	if (!c->gpu_named[op->device]) {
		c->gpu_named[op->device] = 1;
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, \"ts\": 0, "
			      "\"args\": {\"name\": \"GPU %u (trace %zu)\"}}",
			gp, op->device, c->index);
	}
	uint64_t sk = (uint64_t)op->device << 32 | op->stream;
	if (!gp_map_get(&c->stream_named, sk) && !gp_map_put(&c->stream_named, sk, 1)) {
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": %u, \"ts\": 0, "
			      "\"args\": {\"name\": \"stream %u\"}}",
			gp, op->stream, op->stream);
	}
	gp_chrome_sep(c);
	fprintf(c->f, "{\"name\": ");
	gp_fmt_json_str(c->f, op->name);
	fprintf(c->f, ", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %u, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f, \"args\": "
		      "{\"corr\": %u, \"launch_ns\": %" PRIu64 ", \"queue_ns\": %" PRIu64 ", \"execute_ns\": %" PRIu64,
		op->kind == GP_OP_KERNEL ? "kernel" : op->kind == GP_OP_MEMCPY ? "memcpy" : "memset", gp, op->stream,
		gp_chrome_us(c, op->gpu_start), (double)(op->gpu_end - op->gpu_start) / 1e3, op->corr, op->launch_ns,
		op->queue_ns, op->execute_ns);
	if (op->nvtx) {
		fprintf(c->f, ", \"nvtx\": ");
		gp_fmt_json_str(c->f, op->nvtx);
	}
	if (op->bytes)
		fprintf(c->f, ", \"bytes\": %" PRIu64, op->bytes);
	fputs("}}", c->f);
	if (op->has_api && op->tid) {
		/* unique per op: a graph launch's kernels share one correlation id */
		uint64_t id = ++c->nflows;
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": \"launch\", \"cat\": \"launch\", \"ph\": \"s\", \"id\": %" PRIu64
			      ", \"pid\": %u, \"tid\": %u, \"ts\": %.3f}",
			id, hp, c->an ? gp_an_os_tid(c->an, op->tid) : op->tid,
			gp_chrome_us(c, op->api_start + (op->api_end - op->api_start) / 2));
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": \"launch\", \"cat\": \"launch\", \"ph\": \"f\", \"bp\": \"e\", \"id\": %" PRIu64
			      ", \"pid\": %u, \"tid\": %u, \"ts\": %.3f}",
			id, gp, op->stream, gp_chrome_us(c, op->gpu_start));
	}
}

static void gp_chrome_wait(const struct gp_an_wait *w, void *ctx)
{
	static const char *const kinds[GP_API_CLASS_COUNT] = {
		[GP_API_MEMCPY_SYNC] = "memcpy", [GP_API_MEMSET_SYNC] = "memset", [GP_API_SYNC_DEVICE] = "device",
		[GP_API_SYNC_STREAM] = "stream", [GP_API_SYNC_EVENT] = "event", [GP_API_MEMCPY_ASYNC] = "pageable copy",
		[GP_API_SYNC_IMPLICIT] = "implicit", [GP_API_LAUNCH] = "launch queue full",
	};
	struct gp_chrome *c = ctx;
	const char *k = w->kind < GP_API_CLASS_COUNT && kinds[w->kind] ? kinds[w->kind] : "other";
	gp_chrome_sep(c);
	fprintf(c->f, "{\"name\": \"sync wait (%s)\", \"cat\": \"sync\", \"ph\": \"X\", \"pid\": %u, \"tid\": %u, "
		      "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"corr\": %u, \"charged_to_corr\": %u, \"attributed\": %s}}",
		k, gp_chrome_host_pid(c), c->an ? gp_an_os_tid(c->an, w->tid) : w->tid, gp_chrome_us(c, w->w0),
		(double)(w->w1 - w->w0) / 1e3, w->corr,
		w->op_corr, w->attributed ? "true" : "false");
}

static int gp_chrome_close(void *ctx, const struct gp_rep *rep, const struct gp_out_opts *o, char *err, size_t n)
{
	(void)rep;
	(void)o;
	struct gp_chrome *c = ctx;
	fputs("\n]}\n", c->f);
	gp_map_free(&c->stream_named);
	int bad = ferror(c->f) != 0;
	if (fclose(c->f))
		bad = 1;
	if (bad)
		snprintf(err, n, "%s: write error", c->path);
	free(c->path);
	free(c);
	return bad ? -EIO : 0;
}

const struct gp_exporter gp_export_chrome = {
	.name = "chrome-trace",
	.open = gp_chrome_open,
	.begin = gp_chrome_begin,
	.record = gp_chrome_record,
	.op = gp_chrome_op,
	.wait = gp_chrome_wait,
	.close = gp_chrome_close,
};
