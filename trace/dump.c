/*
 * trace/dump.c — gpuphase-dump FILE: prints a trace's header and every record
 * as one text line, then what the footer (or the reader) says about the end.
 * A debugging aid for everyone working on the format; an ordinary program
 * (single-threaded, exits non-zero on a bad file with the reader's message).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gp_reader.h"

static const char *const type_names[GP_REC_TYPE_COUNT] = {
	[GP_REC_STRING] = "string", [GP_REC_HOOK_API] = "hook_api", [GP_REC_RUNTIME_API] = "runtime_api",
	[GP_REC_DRIVER_API] = "driver_api", [GP_REC_KERNEL] = "kernel", [GP_REC_MEMCPY] = "memcpy",
	[GP_REC_MEMSET] = "memset", [GP_REC_SYNC] = "sync", [GP_REC_EXTCORR] = "extcorr",
	[GP_REC_MARKER] = "marker", [GP_REC_GRAPH_NODE] = "graph_node", [GP_REC_STACK] = "stack",
	[GP_REC_STACK_REF] = "stack_ref", [GP_REC_SYMBOL] = "symbol", [GP_REC_ITER] = "iter",
	[GP_REC_WINDOW] = "window", [GP_REC_THREAD] = "thread", [GP_REC_API_NAME] = "api_name",
	[GP_REC_DROPS] = "drops", [GP_REC_STATUS] = "status", [GP_REC_HOST_SAMPLE] = "host_sample",
	[GP_REC_DEVICE] = "device", [GP_REC_MODULE] = "module",
	[GP_REC_OVERHEAD] = "overhead", [GP_REC_CALIBRATION] = "calibration",
	[GP_REC_COUNTER] = "counter", [GP_REC_CLOCK_PAIR] = "clock_pair",
	[GP_REC_LAUNCH_CFG] = "launch_cfg",
	[GP_REC_HOST_CALLBACK] = "host_callback",
};

static void dump_string(const union gp_rec *r, uint32_t n)
{
	char *buf = malloc((size_t)r->string.len + 1);
	if (!buf) {
		printf("string id=%u len=%u (out of memory)\n", r->string.id, r->string.len);
		return;
	}
	gp_string_text(r, n, buf, (size_t)r->string.len + 1);
	printf("string id=%u len=%u text=\"", r->string.id, r->string.len);
	for (uint32_t i = 0; i < r->string.len; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
	printf("\"\n");
	free(buf);
}

static void dump_rec(const union gp_rec *r, uint32_t n)
{
	switch (r->type) {
	case GP_REC_STRING: dump_string(r, n); return;
	case GP_REC_HOOK_API: case GP_REC_RUNTIME_API: case GP_REC_DRIVER_API:
		printf("%s class=%u flags=0x%02x api=%u tid=%u start=%" PRIu64 " dur_ns=%" PRIu64
		       " corr=%u stream=%u result=%u\n", type_names[r->type], GP_API_CLASS(r->api.class_flags),
		       r->api.class_flags & 0xf0u, r->api.api_id, r->api.tid, r->api.start, gp_api_dur_ns(&r->api),
		       r->api.corr, r->api.stream, r->api.result);
		return;
	case GP_REC_KERNEL:
		printf("kernel dev=%u flags=0x%x stream=%u start=%" PRIu64 " end=%" PRIu64 " corr=%u name=%u",
		       r->kernel.device, r->kernel.flags & ((1u << GP_OPF_CFG_SHIFT) - 1u), r->kernel.stream,
		       r->kernel.start, r->kernel.end, r->kernel.corr, r->kernel.name);
		if (gp_kernel_cfg(&r->kernel)) /* traces before launch configs print as they did */
			printf(" cfg=%u", gp_kernel_cfg(&r->kernel));
		printf("\n");
		return;
	case GP_REC_MEMCPY: case GP_REC_MEMSET:
		printf("%s dev=%u kind=%u flags=0x%x stream=%u start=%" PRIu64 " dur_ns=%" PRIu64
		       " corr=%u rt_corr=%u bytes=%" PRIu64 "\n", type_names[r->type], r->copy.device,
		       r->copy.copy_kind, r->copy.flags, r->copy.stream, r->copy.start, gp_copy_dur_ns(&r->copy),
		       r->copy.corr, r->copy.rt_corr, gp_copy_bytes(&r->copy));
		return;
	case GP_REC_SYNC:
		printf("sync type=%u stream=%u start=%" PRIu64 " end=%" PRIu64 " corr=%u event=%u\n",
		       r->sync.sync_type, r->sync.stream, r->sync.start, r->sync.end, r->sync.corr, r->sync.event);
		return;
	case GP_REC_OVERHEAD:
		printf("overhead kind=%u cupti_kind=0x%x tid=%u start=%" PRIu64 " end=%" PRIu64 " corr=%u\n",
		       r->overhead.kind, r->overhead.cupti_kind, r->overhead.tid, r->overhead.start, r->overhead.end,
		       r->overhead.corr);
		return;
	case GP_REC_CALIBRATION:
		printf("calibration flags=0x%x samples=%u tid=%u start=%" PRIu64 " dur_ns=%u rt_ns=%u drv_ns=%u "
		       "launch_ns=%u\n", r->calib.flags, r->calib.samples, r->calib.tid, r->calib.start, r->calib.dur,
		       r->calib.rt_ns, r->calib.drv_ns, r->calib.launch_ns);
		return;
	case GP_REC_COUNTER:
		printf("counter metric=%u dev=%u op=%u ts=%" PRIu64 " value=%.17g name=%u sample=%u\n", r->counter.metric,
		       r->counter.device, r->counter.op, r->counter.ts, r->counter.value, r->counter.name,
		       r->counter.sample);
		return;
	case GP_REC_LAUNCH_CFG: {
		const struct gp_rec_launch_cfg *c = &r->launch_cfg;
		printf("launch_cfg id=%u grid=%u,%u,%u block=%u,%u,%u regs=%u static_smem=%u dynamic_smem=%u\n", c->id,
		       c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2], c->regs,
		       c->static_smem, c->dynamic_smem);
		return;
	}
	case GP_REC_CLOCK_PAIR:
		printf("clock_pair kind=%u raw=%" PRIu64 " realtime=%" PRIu64 " width_ns=%u tries=%u\n", r->clock.kind,
		       r->clock.raw, r->clock.realtime, r->clock.width_ns, r->clock.tries);
		return;
	case GP_REC_HOST_CALLBACK: {
		uint64_t dur = r->hostcb.flags & GP_HOSTCBF_DUR_US ? (uint64_t)r->hostcb.dur * 1000u : r->hostcb.dur;
		printf("host_callback flags=0x%x tid=%u start=%" PRIu64 " dur_ns=%" PRIu64 " op=%u fn=0x%" PRIx64 "\n",
		       r->hostcb.flags, r->hostcb.tid, r->hostcb.start, dur, r->hostcb.op, r->hostcb.fn);
		return;
	}
	case GP_REC_EXTCORR:
		printf("extcorr kind=%u corr=%u ext_id=%" PRIu64 "\n", r->extcorr.kind, r->extcorr.corr,
		       r->extcorr.ext_id);
		return;
	case GP_REC_MARKER:
		printf("marker kind=%u tid=%u ts=%" PRIu64 " id=%" PRIu64 " name=%u domain=%u\n", r->marker.kind,
		       r->marker.tid, r->marker.ts, r->marker.id, r->marker.name, r->marker.domain);
		return;
	case GP_REC_GRAPH_NODE: {
		/* the fields by kind (gp_format.h GP_REC_GRAPH_NODE, libgpuphase/graphs.c) */
		uint64_t aux = (uint64_t)r->graph.aux_hi << 32 | r->graph.aux_lo;
		switch (r->graph.kind) {
		case GP_GRAPH_OP:
			printf("graph_node kind=op graph=%u node=%" PRIu64 " corr=%u\n", r->graph.graph_id,
			       r->graph.node_id, r->graph.corr);
			break;
		case GP_GRAPH_CAPTURED:
			printf("graph_node kind=captured graph=%u node=%" PRIu64 " op=%u tid=%u ts=%" PRIu64 "\n",
			       r->graph.graph_id, r->graph.node_id, r->graph.corr, r->graph.aux32, aux);
			break;
		case GP_GRAPH_CLONED:
			printf("graph_node kind=cloned graph=%u node=%" PRIu64 " from_graph=%u from_node=%" PRIu64 "\n",
			       r->graph.graph_id, r->graph.node_id, r->graph.aux32, aux);
			break;
		default:
			printf("graph_node kind=%u graph=%u node=%" PRIu64 " corr=%u aux=%" PRIu64 " aux32=%u\n",
			       r->graph.kind, r->graph.graph_id, r->graph.node_id, r->graph.corr, aux, r->graph.aux32);
		}
		return;
	}
	case GP_REC_STACK:
		printf("stack id=%u depth=%u pcs=", r->stack.id, r->stack.depth);
		for (uint32_t i = 0; i < r->stack.depth; i++) {
			uint64_t pc;
			if (i < GP_STACK_INLINE)
				pc = r->stack.pc[i];
			else
				memcpy(&pc, (const char *)(r + 1) + (size_t)(i - GP_STACK_INLINE) * 8u, 8);
			printf("%s0x%" PRIx64, i ? "," : "", pc);
		}
		printf("\n");
		return;
	case GP_REC_STACK_REF:
		printf("stack_ref stack=%u op=%u tid=%u\n", r->stack_ref.stack, r->stack_ref.op, r->stack_ref.tid);
		return;
	case GP_REC_SYMBOL:
		printf("symbol pc=0x%" PRIx64 " name=%u\n", r->symbol.pc, r->symbol.name);
		return;
	case GP_REC_ITER: case GP_REC_WINDOW:
		printf("%s kind=%u tid=%u ts=%" PRIu64 " iter=%" PRIu64 " reason=%d name=%u\n", type_names[r->type],
		       r->mark.kind, r->mark.tid, r->mark.ts, r->mark.iter, r->mark.reason, r->mark.name);
		return;
	case GP_REC_THREAD:
		printf("thread tid=%u ts=%" PRIu64 " name=%u\n", r->thread.tid, r->thread.ts, r->thread.name);
		return;
	case GP_REC_API_NAME:
		printf("api_name domain=%u api=%u class=%u name=%u\n", r->api_name.domain, r->api_name.api_id,
		       r->api_name.api_class, r->api_name.name);
		return;
	case GP_REC_DROPS:
		printf("drops source=%u tid=%u ts=%" PRIu64 " dropped=%" PRIu64 "\n", r->drops.source, r->drops.tid,
		       r->drops.ts, r->drops.dropped);
		return;
	case GP_REC_STATUS:
		printf("status kind=%u detail=%u ts=%" PRIu64 " value=%" PRId64 "\n", r->status.kind,
		       r->status.detail, r->status.ts, r->status.value);
		return;
	case GP_REC_HOST_SAMPLE:
		printf("host_sample ncpu=%u host_busy_pm=%u ts=%" PRIu64 " proc_cpu_pm=%u interval_us=%u\n",
		       r->host.ncpu, r->host.host_busy_pm, r->host.ts, r->host.proc_cpu_pm, r->host.interval_us);
		return;
	case GP_REC_DEVICE:
		printf("device dev=%u name=%u cc=%u.%u sms=%u\n", r->device.device, r->device.name,
		       r->device.cc_major, r->device.cc_minor, r->device.sm_count);
		return;
	case GP_REC_MODULE:
		printf("module path=%u bias=0x%" PRIx64 " build_id=", r->module.path, r->module.bias);
		for (uint32_t i = 0; i < r->module.build_id_len && i < GP_MODULE_BUILD_ID; i++)
			printf("%02x", r->module.build_id[i]);
		printf("\n");
		return;
	default:
		printf("unknown type=%u slots=%u\n", r->type, n);
	}
}

int main(int argc, char **argv)
{
	char err[512];
	struct gp_reader *rd;
	const union gp_rec *rec;
	uint32_t n;
	int rc;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: gpuphase-dump TRACE_FILE\n");
		return 2;
	}
	if ((rc = gp_reader_open(argv[1], &rd, err, sizeof(err))) < 0) {
		fprintf(stderr, "gpuphase-dump: %s\n", err);
		return 1;
	}
	const struct gp_trace_info *in = gp_reader_info(rd);
	printf("# version=%u clock_id=%u clock_offset_ns=%" PRId64 " start_wall_ns=%" PRIu64
	       " start_clock_ns=%" PRIu64 " pid=%u\n", in->version, in->clock_id, in->clock_offset_ns,
	       in->start_wall_ns, in->start_clock_ns, in->pid);
	for (size_t i = 0; i < in->nkv; i++)
		printf("# %s=%s\n", in->keys[i], in->values[i]);
	while ((rc = gp_reader_next(rd, &rec, &n, err, sizeof(err))) == 1)
		dump_rec(rec, n);
	if (rc < 0) {
		fflush(stdout);
		fprintf(stderr, "gpuphase-dump: %s\n", err);
		gp_reader_close(rd);
		return 1;
	}
	const struct gp_trace_end *e = gp_reader_end(rd);
	printf("# end complete=%d records=%" PRIu64 " blocks=%" PRIu64 " truncated_bytes=%" PRIu64
	       " dropped_ring=%" PRIu64 " dropped_cupti=%" PRIu64 " write_errors=%" PRIu64 " end_reason=%d\n",
	       e->complete, e->records, e->blocks, e->truncated_bytes, e->dropped_ring, e->dropped_cupti,
	       e->write_errors, e->end_reason);
	for (int t = 1; t < GP_REC_TYPE_COUNT; t++)
		if (e->footer_records[t])
			printf("# footer %s=%" PRIu64 "\n", type_names[t] ? type_names[t] : "unknown", e->footer_records[t]);
	gp_reader_close(rd);
	return 0;
}
