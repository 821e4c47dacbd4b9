/*
 * export_chrome.c — `--export chrome-trace FILE`: the Kineto trace format
 * (Chrome trace-event JSON, the one PyTorch's profiler writes), which
 * Perfetto UI, chrome://tracing, TensorBoard and Holistic Trace Analysis
 * read. Written while pass 2 streams, so memory stays flat.
 *
 * Tracks, as Kineto lays them out: per trace, process = the traced OS pid
 * with one thread per host thread (OS tid; a CUPTI thread id is shown as the
 * OS tid once the join paired them) holding the CUDA calls (cat
 * cuda_runtime / cuda_driver, args cbid + correlation), NVTX ranges (nvtx),
 * blocking intervals (gpuphase_sync) and iterations (ProfilerStep#N,
 * user_annotation, written at close from the report); process = the device
 * (trace i > 0: i*1000 + device) with one thread per stream holding the ops
 * (cat kernel / gpu_memcpy / gpu_memset, args correlation, stream, device,
 * External id and the op's launch/queue/execute phases; a kernel's launch
 * configuration as Kineto names it: grid, block, registers per thread,
 * shared memory). Copies and sets carry Kineto's names ("Memcpy HtoD
 * (Pageable -> Device)", "Memset (Unknown)": export_copy.c), which HTA
 * reads to count them as memory; our own name ("memcpy HtoD") is in args
 * gpuphase_name, with bytes and Kineto's "memory bandwidth (GB/s)". Every track is
 * named: streams "stream S", host threads their name or "thread T"; calls
 * drawn under a CUPTI thread id before the join paired it with the OS tid
 * sit on a track named "thread T (first calls, CUPTI id N)".
 *
 * Flows (cat ac2g, a fresh id per op: a graph launch's kernels share one
 * correlation id) start at the launching call's start, inside its slice, and
 * end (bp e) at the op's start or, if the clocks put that earlier, at the
 * call's start: never before they begin. Timestamps are microseconds since
 * the first trace's first event, every trace's times on the first trace's
 * clock through their clock pairs (clockmap.h: traces of several hosts). The top-level object carries
 * distributedInfo (rank = the first trace's place, world_size = traces).
 * Names go through gp_fmt_json_str (valid UTF-8 out whatever comes in).
 * Called by main.c through struct gp_exporter, on the report thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/util/fmt.h"
#include "export.h"
#include "report/util/clockmap.h"
#include "report/util/map.h"
#include "report/util/outfile.h"

struct gp_chrome_trace {       /* what close() needs of each trace          */
	uint64_t base;
	unsigned pid;
	uint32_t iter_tid;     /* the thread that marked iterations         */
};

struct gp_chrome {
	struct gp_outfile out;
	FILE *f;                       /* out.f                                   */
	size_t index, ntraces;
	size_t line_at;                /* the trace whose times are written now   */
	struct gp_clockline line;      /* every trace onto the first's clock     */
	int first;
	int base_set;
	uint64_t base;
	unsigned pid;                  /* this trace's host process track           */
	uint8_t gpu_named[256];
	struct gp_map stream_named;    /* device << 32 | stream -> 1 (this trace) */
	struct gp_map threads;         /* host tid -> 1 seen, 2 named (this trace) */
	struct gp_map call_tid;        /* correlation id -> track tid of its call   */
	uint64_t nflows;               /* flow ids handed out (all traces)        */
	struct gp_chrome_trace *tr;
	const struct gp_an *an;
};

static double gp_chrome_us(const struct gp_chrome *c, uint64_t t)
{
	t = gp_clockline_time(&c->line, c->line_at, t);
	return t >= c->base ? (double)(t - c->base) / 1e3 : -(double)(c->base - t) / 1e3;
}

static void gp_chrome_sep(struct gp_chrome *c)
{
	fputs(c->first ? "\n" : ",\n", c->f);
	c->first = 0;
}

static void *gp_chrome_open(const char *path, char *err, size_t n)
{
	struct gp_chrome *c = gp_outfile_context(sizeof *c, offsetof(struct gp_chrome, out), path, GP_OUTFILE_JSON,
						 err, n);
	if (!c)
		return NULL;
	c->f = c->out.f;
	c->first = 1;
	fputs("{\"schemaVersion\": 1, \"displayTimeUnit\": \"ns\", \"traceEvents\": [", c->f);
	return c;
}

static unsigned gp_chrome_gpu_pid(const struct gp_chrome *c, unsigned device)
{
	return (unsigned)c->index * 1000u + device;
}

static void gp_chrome_thread_name(struct gp_chrome *c, unsigned pid, uint32_t tid, const char *name)
{
	gp_chrome_sep(c);
	fprintf(c->f, "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": %u, \"ts\": 0, \"args\": {\"name\": ",
		pid, tid);
	gp_fmt_json_str(c->f, name);
	fputs("}}", c->f);
}

/* A host thread has an event: remember it, so close() names it if the trace
 * never did. */
static void gp_chrome_seen(struct gp_chrome *c, uint32_t tid)
{
	if (!gp_map_get(&c->threads, tid))
		gp_map_put(&c->threads, tid, 1);
}

/* The host threads of the trace that ends here without a name of their own. */
static void gp_chrome_name_threads(struct gp_chrome *c)
{
	for (size_t i = 0; i < c->threads.cap; i++) {
		if (c->threads.keys[i] == GP_MAP_EMPTY || c->threads.vals[i] != 1)
			continue;
		char nm[32];
		snprintf(nm, sizeof nm, "thread %u", (unsigned)c->threads.keys[i]);
		gp_chrome_thread_name(c, c->pid, (uint32_t)c->threads.keys[i], nm);
	}
	gp_map_free(&c->threads);
	memset(&c->threads, 0, sizeof c->threads);
}

static void gp_chrome_begin(void *ctx, size_t index, const char *trace_path, uint32_t pid)
{
	struct gp_chrome *c = ctx;
	if (c->ntraces)
		gp_chrome_name_threads(c);
	struct gp_chrome_trace *tr = realloc(c->tr, (index + 1) * sizeof *tr);
	if (tr) {
		c->tr = tr;
		memset(&tr[index], 0, sizeof *tr);
		tr[index].pid = pid;
		c->ntraces = index + 1;
	}
	c->index = index;
	c->pid = pid;
	c->an = NULL;
	memset(c->gpu_named, 0, sizeof c->gpu_named);
	gp_map_free(&c->stream_named);
	memset(&c->stream_named, 0, sizeof c->stream_named);
	gp_map_free(&c->call_tid);
	memset(&c->call_tid, 0, sizeof c->call_tid);
	gp_chrome_sep(c);
	fprintf(c->f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, \"ts\": 0, \"args\": {\"name\": ",
		pid);
	char buf[600];
	snprintf(buf, sizeof buf, "host pid %u (%s)", pid, trace_path);
	gp_fmt_json_str(c->f, buf);
	fputs("}}", c->f);
	gp_chrome_sep(c);
	fprintf(c->f, "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, \"ts\": 0, "
		      "\"args\": {\"sort_index\": %zu}}", pid, 2000 * index);
}

static void gp_chrome_base(struct gp_chrome *c, const struct gp_an *an)
{
	if (!c->base_set) { /* one time axis for every trace: the first trace's first event */
		c->base = gp_an_time_base(an);
		c->base_set = 1;
	}
	if (c->index < c->ntraces)
		c->tr[c->index].base = c->base;
	if (c->an != an && gp_clockline_set(&c->line, c->index, gp_an_clockmap(an)) == 0)
		c->line_at = c->index;
	c->an = an;
}

static uint32_t gp_chrome_os_tid(const struct gp_chrome *c, uint32_t tid)
{
	return c->an ? gp_an_os_tid(c->an, tid) : tid;
}

static void gp_chrome_record(void *ctx, const struct gp_an *an, const union gp_rec *r)
{
	struct gp_chrome *c = ctx;
	gp_chrome_base(c, an);
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
		uint32_t tid = r->type == GP_REC_HOOK_API ? r->api.tid : gp_an_os_tid(an, r->api.tid);
		gp_chrome_seen(c, tid);
		/* the flow of the op starts on the track this call is drawn on, even
		 * when the join pairs its CUPTI thread id with the OS tid only later */
		if (r->type != GP_REC_DRIVER_API || !gp_map_get(&c->call_tid, r->api.corr))
			gp_map_put(&c->call_tid, r->api.corr, tid);
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": ");
		gp_fmt_json_str(c->f, nm);
		fprintf(c->f, ", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %u, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f, "
			      "\"args\": {\"cbid\": %u, \"correlation\": %u}}",
			r->type == GP_REC_DRIVER_API ? "cuda_driver" : "cuda_runtime", c->pid, tid,
			gp_chrome_us(c, r->api.start), (double)gp_api_dur_ns(&r->api) / 1e3, r->api.api_id, r->api.corr);
		break;
	}
	case GP_REC_MARKER: {
		const char *nm = gp_an_string(an, r->marker.name);
		const char *ph = r->marker.kind == GP_MARK_PUSH ? "B" : r->marker.kind == GP_MARK_POP ? "E"
				 : r->marker.kind == GP_MARK_START ? "b" : r->marker.kind == GP_MARK_END ? "e" : "i";
		gp_chrome_seen(c, r->marker.tid);
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": ");
		gp_fmt_json_str(c->f, nm ? nm : "nvtx");
		fprintf(c->f, ", \"cat\": \"nvtx\", \"ph\": \"%s\", \"pid\": %u, \"tid\": %u, \"ts\": %.3f", ph, c->pid,
			r->marker.tid, gp_chrome_us(c, r->marker.ts));
		if (*ph == 'b' || *ph == 'e')
			fprintf(c->f, ", \"id\": \"%zu:%" PRIu64 "\"", c->index, r->marker.id);
		if (*ph == 'i')
			fprintf(c->f, ", \"s\": \"t\"");
		fputs("}", c->f);
		break;
	}
	case GP_REC_ITER:
		if (c->index < c->ntraces && !c->tr[c->index].iter_tid)
			c->tr[c->index].iter_tid = r->mark.tid;
		gp_chrome_seen(c, r->mark.tid);
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": \"iteration %" PRIu64 "\", \"cat\": \"iteration\", \"ph\": \"i\", \"s\": \"p\", "
			      "\"pid\": %u, \"tid\": %u, \"ts\": %.3f}",
			r->mark.iter, c->pid, r->mark.tid, gp_chrome_us(c, r->mark.ts));
		break;
	case GP_REC_THREAD: {
		const char *nm = gp_an_string(an, r->thread.name);
		if (!nm)
			break;
		uint64_t *v = gp_map_get(&c->threads, r->thread.tid);
		if (v && *v == 2)
			break;
		gp_map_put(&c->threads, r->thread.tid, 2);
		gp_chrome_thread_name(c, c->pid, r->thread.tid, nm);
		break;
	}
	default:
		break;
	}
}

static void gp_chrome_op(const struct gp_an_op *op, void *ctx)
{
	struct gp_chrome *c = ctx;
	if (!op->has_gpu || op->kind == GP_OP_HOST_CALLBACK)
		return; /* hook-only: the launch call is on the host track already; a
			   host callback's run is no GPU work (no stream id to put it on) */
	unsigned gp = gp_chrome_gpu_pid(c, op->device);
	if (!c->gpu_named[op->device]) {
		c->gpu_named[op->device] = 1;
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, \"ts\": 0, "
			      "\"args\": {\"name\": \"GPU %u (trace %zu)\"}}",
			gp, op->device, c->index);
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %u, \"tid\": 0, \"ts\": 0, "
			      "\"args\": {\"sort_index\": %zu}}", gp, 2000 * c->index + 1 + op->device);
	}
	uint64_t sk = (uint64_t)op->device << 32 | op->stream;
	if (!gp_map_get(&c->stream_named, sk) && !gp_map_put(&c->stream_named, sk, 1)) {
		char nm[32];
		snprintf(nm, sizeof nm, "stream %u", op->stream);
		gp_chrome_thread_name(c, gp, op->stream, nm);
	}
	/* copies and sets under Kineto's names (HTA counts them as memory by
	 * them), ours kept in args */
	char kname[64] = "";
	if (op->kind == GP_OP_MEMCPY || op->kind == GP_OP_MEMSET)
		gp_export_kineto_name(op, kname, sizeof kname);
	gp_chrome_sep(c);
	fprintf(c->f, "{\"name\": ");
	gp_fmt_json_str(c->f, op->kind == GP_OP_KERNEL ? op->name : kname);
	fprintf(c->f, ", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %u, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f, \"args\": "
		      "{\"correlation\": %u, \"External id\": %u, \"device\": %u, \"stream\": %u, \"launch_ns\": %" PRIu64
		      ", \"queue_ns\": %" PRIu64 ", \"execute_ns\": %" PRIu64,
		op->kind == GP_OP_KERNEL ? "kernel" : op->kind == GP_OP_MEMCPY ? "gpu_memcpy" : "gpu_memset", gp,
		op->stream, gp_chrome_us(c, op->gpu_start), (double)(op->gpu_end - op->gpu_start) / 1e3, op->corr,
		op->corr, op->device, op->stream, op->launch_ns, op->queue_ns, op->execute_ns);
	if (op->iter >= 0)
		fprintf(c->f, ", \"iteration\": %" PRId64, op->iter);
	if (op->nvtx) {
		fprintf(c->f, ", \"nvtx\": ");
		gp_fmt_json_str(c->f, op->nvtx);
	}
	if (op->callsite) {
		fprintf(c->f, ", \"callsite\": ");
		gp_fmt_json_str(c->f, op->callsite);
	}
	if (op->kind != GP_OP_KERNEL) {
		fprintf(c->f, ", \"gpuphase_name\": ");
		gp_fmt_json_str(c->f, op->name);
		fprintf(c->f, ", \"bytes\": %" PRIu64, op->bytes);
		if (op->gpu_end > op->gpu_start) /* bytes per ns = GB/s */
			fprintf(c->f, ", \"memory bandwidth (GB/s)\": %.3f",
				(double)op->bytes / (double)(op->gpu_end - op->gpu_start));
	}
	const struct gp_rec_launch_cfg *k = op->launch_cfg;
	if (k) /* Kineto's names; its "shared memory" is static + dynamic */
		fprintf(c->f, ", \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], \"registers per thread\": %u"
			      ", \"shared memory\": %" PRIu64 ", \"static shared memory\": %u, \"dynamic shared memory\": %u",
			k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2], k->regs,
			(uint64_t)k->static_smem + k->dynamic_smem, k->static_smem, k->dynamic_smem);
	fputs("}}", c->f);
	if (op->has_api && op->tid) {
		/* unique per op: a graph launch's kernels share one correlation id */
		uint64_t id = ++c->nflows;
		uint64_t s = op->api_start, e = op->gpu_start > s ? op->gpu_start : s;
		uint64_t *ct = gp_map_get(&c->call_tid, op->corr);
		uint32_t tid = ct ? (uint32_t)*ct : gp_chrome_os_tid(c, op->tid);
		uint32_t os = gp_chrome_os_tid(c, op->tid);
		uint64_t *named = gp_map_get(&c->threads, tid);
		if (tid != os && (!named || *named != 2)) {
			/* calls drawn before the join paired this CUPTI thread id with
			 * its OS tid: name that track after the thread it is */
			char nm[64];
			snprintf(nm, sizeof nm, "thread %u (first calls, CUPTI id %u)", os, tid);
			gp_map_put(&c->threads, tid, 2);
			gp_chrome_thread_name(c, c->pid, tid, nm);
		}
		gp_chrome_seen(c, tid);
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": \"ac2g\", \"cat\": \"ac2g\", \"ph\": \"s\", \"id\": %" PRIu64
			      ", \"pid\": %u, \"tid\": %u, \"ts\": %.3f}",
			id, c->pid, tid, gp_chrome_us(c, s));
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": \"ac2g\", \"cat\": \"ac2g\", \"ph\": \"f\", \"bp\": \"e\", \"id\": %" PRIu64
			      ", \"pid\": %u, \"tid\": %u, \"ts\": %.3f}",
			id, gp, op->stream, gp_chrome_us(c, e));
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
	uint32_t tid = gp_chrome_os_tid(c, w->tid);
	gp_chrome_seen(c, tid);
	gp_chrome_sep(c);
	fprintf(c->f, "{\"name\": \"sync wait (%s)\", \"cat\": \"gpuphase_sync\", \"ph\": \"X\", \"pid\": %u, \"tid\": %u, "
		      "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"correlation\": %u, \"charged_to_correlation\": %u, "
		      "\"attributed\": %s, \"sync_ns\": %" PRIu64 "}}",
		k, c->pid, tid, gp_chrome_us(c, w->w0), (double)(w->w1 - w->w0) / 1e3, w->corr, w->op_corr,
		w->attributed ? "true" : "false", w->w1 - w->w0);
}

/* The iterations as Kineto's ProfilerStep#N slices, which HTA and
 * TensorBoard use to cut a trace into steps. */
static void gp_chrome_steps(struct gp_chrome *c, const struct gp_rep *rep, size_t t)
{
	if (t >= c->ntraces || !c->tr[t].iter_tid)
		return;
	c->base = c->tr[t].base;
	c->line_at = t;
	for (size_t i = 0; i < rep->niters; i++) {
		const struct gp_rep_iter *it = &rep->iters[i];
		if (it->iter < 0 || it->end <= it->start)
			continue;
		gp_chrome_sep(c);
		fprintf(c->f, "{\"name\": \"ProfilerStep#%" PRId64 "\", \"cat\": \"user_annotation\", \"ph\": \"X\", "
			      "\"pid\": %u, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"ops\": %" PRIu64
			      ", \"launch_ns\": %" PRIu64 ", \"queue_ns\": %" PRIu64 ", \"execute_ns\": %" PRIu64
			      ", \"sync_ns\": %" PRIu64 "}}",
			it->iter, c->tr[t].pid, c->tr[t].iter_tid, gp_chrome_us(c, it->start),
			(double)(it->end - it->start) / 1e3, it->ops, it->launch_ns, it->queue_ns, it->execute_ns, it->sync_ns);
	}
}

static int gp_chrome_close(void *ctx, const struct gp_rep *rep, const struct gp_out_opts *o, char *err, size_t n)
{
	(void)o;
	struct gp_chrome *c = ctx;
	gp_chrome_name_threads(c);
	if (rep) {
		if (rep->nranks)
			for (size_t r = 0; r < rep->nranks; r++)
				gp_chrome_steps(c, &rep->ranks[r], r);
		else
			gp_chrome_steps(c, rep, 0);
	}
	fprintf(c->f, "\n],\n\"distributedInfo\": {\"backend\": \"none\", \"rank\": 0, \"world_size\": %zu}\n}\n",
		c->ntraces ? c->ntraces : 1);
	gp_map_free(&c->stream_named);
	gp_map_free(&c->threads);
	gp_map_free(&c->call_tid);
	gp_clockline_free(&c->line);
	free(c->tr);
	int rc = 0;
	if (rep)
		rc = gp_outfile_commit(&c->out, err, n);
	else
		gp_outfile_discard(&c->out); /* the run failed: leave OUT as it was */
	free(c);
	return rc;
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
