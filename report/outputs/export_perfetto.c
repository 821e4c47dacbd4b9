/*
 * export_perfetto.c — `--export perfetto FILE`: the timeline in Perfetto's
 * own protobuf trace format (perfetto.protos.Trace of TracePackets with
 * TrackDescriptor and TrackEvent), the compact form of the Chrome trace:
 * ui.perfetto.dev and trace_processor open it directly. The protobuf
 * encoding is written by hand here, so the report needs no protobuf library
 * nor generated code: a small wire-format layer (gp_pb_*: one writer per
 * field kind), the field numbers of the messages written (from Perfetto's
 * public trace proto definitions), and one short writer per message. (A
 * protobuf-c version decoded to the same trace but was more code to own, a
 * generator at build time and a library at run time, and no faster:
 * docs/exports.md.)
 *
 * Tracks: per trace, a process track (pid) with one thread track per host
 * thread (CUDA calls as slices), and under each thread an "NVTX" and a
 * "sync waits" track (so their slices need not nest with the calls); per
 * GPU, a track "GPU n (trace i)" with one child track per stream holding
 * the ops; an "iterations" track under the process (one slice per
 * iteration, written at close). Ops carry debug annotations correlation,
 * device, stream, launch_ns, queue_ns, execute_ns (and bytes, nvtx). Flows
 * (flow_ids / terminating_flow_ids, id = trace << 32 | correlation) go from
 * each launching call to its op; the kernels of one graph launch continue
 * the flow in turn.
 *
 * Compact: one packet sequence with incremental state; event names and
 * annotation names are interned (sent once, then referred to by iid).
 * Timestamps are the first trace's own nanoseconds (CLOCK_MONOTONIC_RAW or
 * what the trace used); every other trace's times go onto that clock
 * through their clock pairs (clockmap.h: traces of several hosts). Strings
 * are made valid UTF-8 (U+FFFD) on the way out.
 * Written while pass 2 streams; single-threaded, on the report thread.
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

/* --- the wire format ---------------------------------------------------------
 * A growable buffer and one writer per field kind. A nested message is built
 * in its own buffer, then written into its parent as a length-delimited field
 * (gp_pb_msg), which empties it for the next one. Out of memory sets `oom`;
 * gp_pf_end_packet turns any buffer's oom into a failed export. */

struct gp_pb {
	uint8_t *p;
	size_t n, cap;
	int oom;
};

static void gp_pb_put(struct gp_pb *b, const void *d, size_t n)
{
	if (!n)
		return;
	if (b->n + n > b->cap) {
		size_t nc = b->cap ? b->cap : 256;
		while (nc < b->n + n)
			nc *= 2;
		uint8_t *np = realloc(b->p, nc);
		if (!np) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void gp_pb_varint(struct gp_pb *b, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;
	do {
		buf[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			buf[n] |= 0x80;
		n++;
	} while (v);
	gp_pb_put(b, buf, n);
}

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_LEN = 2 };

static void gp_pb_tag(struct gp_pb *b, unsigned field, unsigned wire)
{
	gp_pb_varint(b, (uint64_t)field << 3 | wire);
}

/* A varint field: uint64, uint32, enum, and (for values below 2^31) int32. */
static void gp_pb_uint(struct gp_pb *b, unsigned field, uint64_t v)
{
	gp_pb_tag(b, field, WIRE_VARINT);
	gp_pb_varint(b, v);
}

static void gp_pb_fixed64(struct gp_pb *b, unsigned field, uint64_t v)
{
	uint8_t d[8];
	for (int i = 0; i < 8; i++)
		d[i] = (uint8_t)(v >> (8 * i));
	gp_pb_tag(b, field, WIRE_FIXED64);
	gp_pb_put(b, d, 8);
}

static void gp_pb_bytes(struct gp_pb *b, unsigned field, const void *d, size_t n)
{
	gp_pb_tag(b, field, WIRE_LEN);
	gp_pb_varint(b, n);
	gp_pb_put(b, d, n);
}

/* A string field, made valid UTF-8 (proto strings must be) in `scratch`. */
static void gp_pb_str(struct gp_pb *b, struct gp_pb *scratch, unsigned field, const char *s)
{
	scratch->n = 0;
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		size_t len = gp_fmt_utf8_len(p);
		if (!len) {
			gp_pb_put(scratch, "\xef\xbf\xbd", 3);
			p++;
		} else {
			gp_pb_put(scratch, p, len);
			p += len;
		}
	}
	gp_pb_bytes(b, field, scratch->p, scratch->n);
}

/* A nested message: field of `inner`'s bytes; inner is emptied. */
static void gp_pb_msg(struct gp_pb *b, unsigned field, struct gp_pb *inner)
{
	gp_pb_bytes(b, field, inner->p, inner->n);
	inner->n = 0;
}

/* --- the messages written ------------------------------------------------------
 * Field numbers of perfetto.protos, per message, from Perfetto's public trace
 * proto definitions (trace.proto, trace_packet.proto, track_descriptor.proto,
 * process_descriptor.proto, thread_descriptor.proto, track_event.proto,
 * debug_annotation.proto, interned_data.proto). Only the fields written. */

enum { TRACE_PACKET = 1 }; /* Trace: repeated TracePacket */
enum {                     /* TracePacket */
	TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11, TP_INTERNED = 12, TP_SEQ_FLAGS = 13,
	TP_TRACK_DESCRIPTOR = 60,
};
enum { SEQ_CLEARED = 1, SEQ_NEEDS = 2 }; /* TracePacket.SequenceFlags */
enum { TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5 }; /* TrackDescriptor */
enum { PD_PID = 1, PD_NAME = 6 };                                                 /* ProcessDescriptor */
enum { THD_PID = 1, THD_TID = 2, THD_NAME = 5 };                                  /* ThreadDescriptor */
enum {                                                                            /* TrackEvent */
	TE_CATEGORY_IIDS = 3, TE_DEBUG = 4, TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK = 11,
	TE_FLOW_IDS = 47, TE_TERM_FLOW_IDS = 48,
};
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2 };           /* TrackEvent.Type */
enum { DA_NAME_IID = 1, DA_UINT = 3, DA_STRING = 6 };        /* DebugAnnotation */
enum { ID_CATEGORIES = 1, ID_EVENT_NAMES = 2, ID_DEBUG_NAMES = 3 }; /* InternedData */
enum { IN_IID = 1, IN_NAME = 2 }; /* EventCategory, EventName, DebugAnnotationName */

/* debug annotation names, interned once in the first packet (iid = index + 1) */
enum { A_CORR, A_DEVICE, A_STREAM, A_LAUNCH, A_QUEUE, A_EXECUTE, A_BYTES, A_NVTX, A_CBID, A_SYNC, A_ITER, A_OPS,
       A_COUNT };
static const char *const gp_pf_anames[A_COUNT] = {
	"correlation", "device", "stream", "launch_ns", "queue_ns", "execute_ns", "bytes", "nvtx", "cbid",
	"sync_ns", "iteration", "ops",
};
/* categories, interned likewise */
enum { C_CUDA, C_KERNEL, C_MEMCPY, C_MEMSET, C_NVTX, C_SYNC, C_ITER, C_COUNT };
static const char *const gp_pf_cats[C_COUNT] = {
	"cuda_api", "kernel", "gpu_memcpy", "gpu_memset", "nvtx", "gpuphase_sync", "iteration",
};

/* What a track descriptor describes. */
enum gp_pf_track_kind { TRACK_NAMED, TRACK_PROCESS, TRACK_THREAD };

struct gp_pf {
	struct gp_outfile out; /* written beside OUT, renamed at close (outfile.h) */
	FILE *f;
	size_t index;
	uint32_t pid;
	int first_packet;
	int failed;
	struct gp_pb pk;     /* the TracePacket being built                      */
	struct gp_pb ev;     /* its TrackEvent or TrackDescriptor                */
	struct gp_pb sub;    /* a message inside that (descriptor, InternedData) */
	struct gp_pb item;   /* one interned name or one debug annotation        */
	struct gp_pb annots; /* the next slice's debug annotations               */
	struct gp_pb tmp;    /* scratch: UTF-8 strings, the packet's header      */
	struct gp_map names; /* name hash (probed) -> iid                        */
	char **namev;
	size_t nnames, capnames;
	struct gp_map tracks; /* track uuid -> 1 described                        */
	uint32_t *pids;       /* per trace, for close()                           */
	size_t ntraces;
	const struct gp_an *an;
	struct gp_clockline line; /* every trace onto the first's clock          */
};

/* One interned name ({iid, name}) as InternedData field `field` of `in`. */
static void gp_pf_interned(struct gp_pf *x, struct gp_pb *in, unsigned field, uint64_t iid, const char *name)
{
	gp_pb_uint(&x->item, IN_IID, iid);
	gp_pb_str(&x->item, &x->tmp, IN_NAME, name);
	gp_pb_msg(in, field, &x->item);
}

/* A TracePacket's header fields; the first packet clears the sequence's
 * state and interns the fixed names. */
static void gp_pf_begin_packet(struct gp_pf *x, uint64_t ts)
{
	x->pk.n = 0;
	if (ts)
		gp_pb_uint(&x->pk, TP_TIMESTAMP, gp_clockline_time(&x->line, x->index, ts));
	gp_pb_uint(&x->pk, TP_SEQ_ID, 1);
	if (!x->first_packet) {
		gp_pb_uint(&x->pk, TP_SEQ_FLAGS, SEQ_NEEDS);
		return;
	}
	x->first_packet = 0;
	gp_pb_uint(&x->pk, TP_SEQ_FLAGS, SEQ_CLEARED | SEQ_NEEDS);
	for (int i = 0; i < C_COUNT; i++)
		gp_pf_interned(x, &x->sub, ID_CATEGORIES, (uint64_t)i + 1, gp_pf_cats[i]);
	for (int i = 0; i < A_COUNT; i++)
		gp_pf_interned(x, &x->sub, ID_DEBUG_NAMES, (uint64_t)i + 1, gp_pf_anames[i]);
	gp_pb_msg(&x->pk, TP_INTERNED, &x->sub);
}

/* The packet as one Trace.packet field, onto the file. */
static void gp_pf_end_packet(struct gp_pf *x)
{
	if (x->pk.oom || x->ev.oom || x->sub.oom || x->item.oom || x->annots.oom || x->tmp.oom)
		x->failed = 1;
	x->tmp.n = 0;
	gp_pb_tag(&x->tmp, TRACE_PACKET, WIRE_LEN);
	gp_pb_varint(&x->tmp, x->pk.n);
	fwrite(x->tmp.p, 1, x->tmp.n, x->f);
	fwrite(x->pk.p, 1, x->pk.n, x->f);
	x->tmp.n = 0;
}

static uint64_t gp_pf_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The iid of an event name; a new one is added to the packet being built
 * (call between gp_pf_begin_packet and the track event). */
static uint64_t gp_pf_name(struct gp_pf *x, const char *name)
{
	uint64_t h = gp_pf_hash(name);
	for (;; h++) {
		if (h == GP_MAP_EMPTY)
			continue;
		uint64_t *v = gp_map_get(&x->names, h);
		if (!v)
			break;
		if (!strcmp(x->namev[*v - 1], name))
			return *v;
	}
	if (x->nnames == x->capnames) {
		size_t nc = x->capnames ? x->capnames * 2 : 256;
		char **nv = realloc(x->namev, nc * sizeof *nv);
		if (!nv) {
			x->failed = 1;
			return 0;
		}
		x->namev = nv;
		x->capnames = nc;
	}
	char *dup = strdup(name);
	if (!dup || gp_map_put(&x->names, h, x->nnames + 1)) {
		free(dup);
		x->failed = 1;
		return 0;
	}
	x->namev[x->nnames++] = dup;
	gp_pf_interned(x, &x->sub, ID_EVENT_NAMES, x->nnames, name);
	gp_pb_msg(&x->pk, TP_INTERNED, &x->sub);
	return x->nnames;
}

static uint64_t gp_pf_uuid(unsigned kind, uint64_t index, uint64_t a, uint64_t b)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL * (kind + 1);
	uint64_t v[3] = { index, a, b };
	for (int i = 0; i < 3; i++) {
		h ^= v[i] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 33;
	}
	return h ? h : 1;
}

/* A TrackDescriptor packet: a process, a thread (of the current pid) or a
 * named track, under `parent` when not 0. */
static void gp_pf_track(struct gp_pf *x, uint64_t uuid, uint64_t parent, enum gp_pf_track_kind kind,
			const char *name, uint32_t tid)
{
	gp_map_put(&x->tracks, uuid, 1);
	gp_pf_begin_packet(x, 0);
	struct gp_pb *td = &x->ev, *d = &x->sub;
	gp_pb_uint(td, TD_UUID, uuid);
	if (parent)
		gp_pb_uint(td, TD_PARENT, parent);
	switch (kind) {
	case TRACK_PROCESS:
		gp_pb_uint(d, PD_PID, x->pid);
		gp_pb_str(d, &x->tmp, PD_NAME, name);
		gp_pb_msg(td, TD_PROCESS, d);
		break;
	case TRACK_THREAD:
		gp_pb_uint(d, THD_PID, x->pid);
		gp_pb_uint(d, THD_TID, tid);
		gp_pb_str(d, &x->tmp, THD_NAME, name);
		gp_pb_msg(td, TD_THREAD, d);
		break;
	case TRACK_NAMED:
		gp_pb_str(td, &x->tmp, TD_NAME, name);
		break;
	}
	gp_pb_msg(&x->pk, TP_TRACK_DESCRIPTOR, td);
	gp_pf_end_packet(x);
}

static int gp_pf_described(const struct gp_pf *x, uint64_t uuid)
{
	return gp_map_get(&x->tracks, uuid) != NULL;
}

static uint64_t gp_pf_proc_track(struct gp_pf *x)
{
	return gp_pf_uuid(1, x->index, x->pid, 0);
}

static uint64_t gp_pf_thread_track(struct gp_pf *x, uint32_t tid)
{
	uint64_t u = gp_pf_uuid(2, x->index, tid, 0);
	if (!gp_pf_described(x, u)) {
		char nm[32];
		snprintf(nm, sizeof nm, "thread %u", tid);
		gp_pf_track(x, u, gp_pf_proc_track(x), TRACK_THREAD, nm, tid);
	}
	return u;
}

static uint64_t gp_pf_sub_track(struct gp_pf *x, unsigned kind, uint32_t tid, const char *what)
{
	uint64_t u = gp_pf_uuid(kind, x->index, tid, 0);
	if (!gp_pf_described(x, u)) {
		uint64_t parent = gp_pf_thread_track(x, tid);
		char nm[48];
		snprintf(nm, sizeof nm, "%s (thread %u)", what, tid);
		gp_pf_track(x, u, parent, TRACK_NAMED, nm, 0);
	}
	return u;
}

/* A DebugAnnotation with an unsigned value, added to the next slice's. */
static void gp_pf_annot(struct gp_pf *x, unsigned name, uint64_t v)
{
	gp_pb_uint(&x->item, DA_NAME_IID, (uint64_t)name + 1);
	gp_pb_uint(&x->item, DA_UINT, v);
	gp_pb_msg(&x->annots, TE_DEBUG, &x->item);
}

/* A DebugAnnotation with a string value, likewise. */
static void gp_pf_annot_str(struct gp_pf *x, unsigned name, const char *v)
{
	gp_pb_uint(&x->item, DA_NAME_IID, (uint64_t)name + 1);
	gp_pb_str(&x->item, &x->tmp, DA_STRING, v);
	gp_pb_msg(&x->annots, TE_DEBUG, &x->item);
}

/* One slice: a begin packet (name, category, the annotations added since
 * the last slice, flows) and an end packet. */
static void gp_pf_slice(struct gp_pf *x, uint64_t track, uint64_t t0, uint64_t t1, const char *name, unsigned cat,
			uint64_t flow_out, uint64_t flow_in, int flow_in_continues)
{
	gp_pf_begin_packet(x, t0);
	uint64_t iid = gp_pf_name(x, name);
	struct gp_pb *ev = &x->ev;
	ev->n = 0;
	gp_pb_uint(ev, TE_TYPE, TYPE_SLICE_BEGIN);
	gp_pb_uint(ev, TE_TRACK, track);
	gp_pb_uint(ev, TE_NAME_IID, iid);
	gp_pb_uint(ev, TE_CATEGORY_IIDS, (uint64_t)cat + 1);
	gp_pb_put(ev, x->annots.p, x->annots.n);
	x->annots.n = 0;
	if (flow_out)
		gp_pb_fixed64(ev, TE_FLOW_IDS, flow_out);
	if (flow_in)
		gp_pb_fixed64(ev, flow_in_continues ? TE_FLOW_IDS : TE_TERM_FLOW_IDS, flow_in);
	gp_pb_msg(&x->pk, TP_TRACK_EVENT, ev);
	gp_pf_end_packet(x);
	gp_pf_begin_packet(x, t1);
	gp_pb_uint(ev, TE_TYPE, TYPE_SLICE_END);
	gp_pb_uint(ev, TE_TRACK, track);
	gp_pb_msg(&x->pk, TP_TRACK_EVENT, ev);
	gp_pf_end_packet(x);
}

/* --- exporter callbacks ----------------------------------------------------- */

static void *gp_pf_open(const char *path, char *err, size_t n)
{
	struct gp_pf *x = gp_outfile_context(sizeof *x, offsetof(struct gp_pf, out), path, GP_OUTFILE_PERFETTO, err, n);
	if (!x)
		return NULL;
	x->f = x->out.f;
	x->first_packet = 1;
	return x;
}

static void gp_pf_begin(void *ctx, size_t index, const char *trace_path, uint32_t pid)
{
	struct gp_pf *x = ctx;
	x->index = index;
	x->pid = pid;
	x->an = NULL;
	uint32_t *np = realloc(x->pids, (index + 1) * sizeof *np);
	if (np) {
		x->pids = np;
		np[index] = pid;
		x->ntraces = index + 1;
	}
	char nm[600];
	snprintf(nm, sizeof nm, "host pid %u (%s)", pid, trace_path);
	if (!gp_pf_described(x, gp_pf_proc_track(x)))
		gp_pf_track(x, gp_pf_proc_track(x), 0, TRACK_PROCESS, nm, 0);
}

static unsigned gp_pf_api_flows(unsigned cls)
{
	return cls == GP_API_LAUNCH || cls == GP_API_MEMCPY_SYNC || cls == GP_API_MEMCPY_ASYNC ||
	       cls == GP_API_MEMSET_SYNC || cls == GP_API_MEMSET_ASYNC || cls == GP_API_GRAPH_LAUNCH;
}

static uint64_t gp_pf_flow(const struct gp_pf *x, uint32_t corr)
{
	return (uint64_t)(x->index + 1) << 32 | corr;
}

/* An NVTX push or pop: one edge of a slice on the thread's NVTX track
 * (start/end ranges may cross threads: the JSON export has them). */
static void gp_pf_marker(struct gp_pf *x, const struct gp_an *an, const union gp_rec *r)
{
	if (r->marker.kind != GP_MARK_PUSH && r->marker.kind != GP_MARK_POP)
		return;
	const char *nm = gp_an_string(an, r->marker.name);
	uint64_t track = gp_pf_sub_track(x, 3, r->marker.tid, "NVTX");
	gp_pf_begin_packet(x, r->marker.ts);
	struct gp_pb *ev = &x->ev;
	ev->n = 0;
	if (r->marker.kind == GP_MARK_PUSH) {
		uint64_t iid = gp_pf_name(x, nm ? nm : "nvtx");
		gp_pb_uint(ev, TE_TYPE, TYPE_SLICE_BEGIN);
		gp_pb_uint(ev, TE_NAME_IID, iid);
		gp_pb_uint(ev, TE_CATEGORY_IIDS, C_NVTX + 1);
	} else {
		gp_pb_uint(ev, TE_TYPE, TYPE_SLICE_END);
	}
	gp_pb_uint(ev, TE_TRACK, track);
	gp_pb_msg(&x->pk, TP_TRACK_EVENT, ev);
	gp_pf_end_packet(x);
}

static void gp_pf_record(void *ctx, const struct gp_an *an, const union gp_rec *r)
{
	struct gp_pf *x = ctx;
	if (x->an != an && gp_clockline_set(&x->line, x->index, gp_an_clockmap(an)))
		x->failed = 1;
	x->an = an;
	switch (r->type) {
	case GP_REC_RUNTIME_API:
	case GP_REC_DRIVER_API:
	case GP_REC_HOOK_API: {
		if (r->type == GP_REC_HOOK_API && !gp_an_hook_only(an))
			return; /* CUPTI's records are the timing truth */
		const char *nm = gp_an_api_name(an, r->type, r->api.api_id);
		char buf[48];
		if (!nm) {
			snprintf(buf, sizeof buf, "%s api %u", r->type == GP_REC_DRIVER_API ? "driver" : "runtime",
				 r->api.api_id);
			nm = buf;
		}
		uint32_t tid = r->type == GP_REC_HOOK_API ? r->api.tid : gp_an_os_tid(an, r->api.tid);
		uint64_t track = gp_pf_thread_track(x, tid);
		gp_pf_annot(x, A_CORR, r->api.corr);
		gp_pf_annot(x, A_CBID, r->api.api_id);
		/* the runtime call (or the hook in a hook-only trace) starts the op's flow */
		int flows = r->type != GP_REC_DRIVER_API && gp_pf_api_flows(GP_API_CLASS(r->api.class_flags));
		gp_pf_slice(x, track, r->api.start, r->api.start + gp_api_dur_ns(&r->api), nm, C_CUDA,
			    flows ? gp_pf_flow(x, r->api.corr) : 0, 0, 0);
		break;
	}
	case GP_REC_MARKER:
		gp_pf_marker(x, an, r);
		break;
	case GP_REC_THREAD: {
		const char *nm = gp_an_string(an, r->thread.name);
		if (nm)
			gp_pf_track(x, gp_pf_uuid(2, x->index, r->thread.tid, 0), gp_pf_proc_track(x), TRACK_THREAD,
				    nm, r->thread.tid);
		break;
	}
	default:
		break;
	}
}

static void gp_pf_op(const struct gp_an_op *op, void *ctx)
{
	struct gp_pf *x = ctx;
	if (!op->has_gpu || op->kind == GP_OP_HOST_CALLBACK) /* a callback's run: no GPU work */
		return;
	uint64_t gpu = gp_pf_uuid(5, x->index, op->device, 0), st = gp_pf_uuid(6, x->index, op->device, op->stream);
	char nm[64];
	if (!gp_pf_described(x, gpu)) {
		snprintf(nm, sizeof nm, "GPU %u (trace %zu)", op->device, x->index);
		gp_pf_track(x, gpu, 0, TRACK_NAMED, nm, 0);
	}
	if (!gp_pf_described(x, st)) {
		snprintf(nm, sizeof nm, "stream %u", op->stream);
		gp_pf_track(x, st, gpu, TRACK_NAMED, nm, 0);
	}
	gp_pf_annot(x, A_CORR, op->corr);
	gp_pf_annot(x, A_DEVICE, op->device);
	gp_pf_annot(x, A_STREAM, op->stream);
	gp_pf_annot(x, A_LAUNCH, op->launch_ns);
	gp_pf_annot(x, A_QUEUE, op->queue_ns);
	gp_pf_annot(x, A_EXECUTE, op->execute_ns);
	if (op->kind != GP_OP_KERNEL)
		gp_pf_annot(x, A_BYTES, op->bytes);
	if (op->iter >= 0)
		gp_pf_annot(x, A_ITER, (uint64_t)op->iter);
	if (op->nvtx)
		gp_pf_annot_str(x, A_NVTX, op->nvtx);
	unsigned cat = op->kind == GP_OP_KERNEL ? C_KERNEL : op->kind == GP_OP_MEMCPY ? C_MEMCPY : C_MEMSET;
	/* a graph launch's kernels share its correlation id: each continues the flow */
	gp_pf_slice(x, st, op->gpu_start, op->gpu_end, op->name ? op->name : "op", cat, 0,
		    op->has_api ? gp_pf_flow(x, op->corr) : 0, op->api_class == GP_API_GRAPH_LAUNCH);
}

static void gp_pf_wait(const struct gp_an_wait *w, void *ctx)
{
	static const char *const kinds[GP_API_CLASS_COUNT] = {
		[GP_API_MEMCPY_SYNC] = "sync wait (memcpy)", [GP_API_MEMSET_SYNC] = "sync wait (memset)",
		[GP_API_SYNC_DEVICE] = "sync wait (device)", [GP_API_SYNC_STREAM] = "sync wait (stream)",
		[GP_API_SYNC_EVENT] = "sync wait (event)",
	};
	struct gp_pf *x = ctx;
	uint32_t tid = x->an ? gp_an_os_tid(x->an, w->tid) : w->tid;
	uint64_t track = gp_pf_sub_track(x, 4, tid, "sync waits");
	gp_pf_annot(x, A_CORR, w->corr);
	gp_pf_annot(x, A_SYNC, w->w1 - w->w0);
	const char *k = w->kind < GP_API_CLASS_COUNT && kinds[w->kind] ? kinds[w->kind] : "sync wait (other)";
	gp_pf_slice(x, track, w->w0, w->w1, k, C_SYNC, 0, 0, 0);
}

static void gp_pf_iters(struct gp_pf *x, const struct gp_rep *rep, size_t t)
{
	if (t >= x->ntraces)
		return;
	x->index = t;
	x->pid = x->pids[t];
	uint64_t track = gp_pf_uuid(7, t, 0, 0);
	if (rep->niters && !gp_pf_described(x, track))
		gp_pf_track(x, track, gp_pf_proc_track(x), TRACK_NAMED, "iterations", 0);
	for (size_t i = 0; i < rep->niters; i++) {
		const struct gp_rep_iter *it = &rep->iters[i];
		if (it->end <= it->start)
			continue;
		char nm[48];
		snprintf(nm, sizeof nm, "iteration %" PRId64, it->iter);
		gp_pf_annot(x, A_OPS, it->ops);
		gp_pf_annot(x, A_LAUNCH, it->launch_ns);
		gp_pf_annot(x, A_QUEUE, it->queue_ns);
		gp_pf_annot(x, A_EXECUTE, it->execute_ns);
		gp_pf_annot(x, A_SYNC, it->sync_ns);
		gp_pf_slice(x, track, it->start, it->end, nm, C_ITER, 0, 0, 0);
	}
}

static int gp_pf_close(void *ctx, const struct gp_rep *rep, const struct gp_out_opts *o, char *err, size_t n)
{
	(void)o;
	struct gp_pf *x = ctx;
	if (rep) {
		if (rep->nranks)
			for (size_t r = 0; r < rep->nranks; r++)
				gp_pf_iters(x, &rep->ranks[r], r);
		else
			gp_pf_iters(x, rep, 0);
	}
	int rc = 0;
	if (x->failed || !rep) { /* the run failed: leave OUT as it was */
		if (x->failed) {
			snprintf(err, n, "%s: out of memory", x->out.path);
			rc = -ENOMEM;
		}
		gp_outfile_discard(&x->out);
	} else {
		rc = gp_outfile_commit(&x->out, err, n);
	}
	for (size_t i = 0; i < x->nnames; i++)
		free(x->namev[i]);
	free(x->namev);
	gp_map_free(&x->names);
	gp_map_free(&x->tracks);
	free(x->pk.p);
	free(x->ev.p);
	free(x->sub.p);
	free(x->item.p);
	free(x->annots.p);
	free(x->tmp.p);
	free(x->pids);
	gp_clockline_free(&x->line);
	free(x);
	return rc;
}

const struct gp_exporter gp_export_perfetto = {
	.name = "perfetto",
	.open = gp_pf_open,
	.begin = gp_pf_begin,
	.record = gp_pf_record,
	.op = gp_pf_op,
	.wait = gp_pf_wait,
	.close = gp_pf_close,
};
