/*
 * analysis_fold.c — the fold line: every joined op arrives here once
 * (called by the join, join.c, and by the protocol for hook-only ops) and is
 * folded once.
 *
 * On arrival the op's group (by the --group-by key) and iteration are
 * decided, the GPU-busy and covered sweeps take it, the launch-queue check
 * runs and sync attribution (sync.c) offers it to the waits. It then waits
 * in the line, in arrival order, while a wait that may still take time out
 * of its launch holds it (its own blocking copy's wait, a full queue's wait
 * not confirmed or whose CUPTI record may still come): such a wait takes
 * that time out of the op in the line (fold_line.c), never out of sums.
 * When nothing holds it and every op before it is folded, it is folded into
 * its group, the run's totals, its iteration and capture window, and handed
 * to the op sink: each op once, its launch, queue and execute final.
 *
 * Memory: one entry per group and iteration, and the line, which holds the
 * ops of at most the waits' horizon (GP_WAIT_HORIZON ops, GP_LAUNCHES
 * launches in a trace with CUPTI's overhead records). Report thread only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

static int64_t gp_an_iter_of(struct gp_an *an, uint64_t t, int64_t *slot)
{
	*slot = -1;
	if (!an->niters || t < an->iters[0].start)
		return -1;
	size_t c = an->iter_cache;
	if (c < an->niters && an->iters[c].start <= t && (c + 1 == an->niters || t < an->iters[c + 1].start)) {
		*slot = (int64_t)c;
		return an->iters[c].iter;
	}
	size_t lo = 0, hi = an->niters;
	while (lo + 1 < hi) {
		size_t mid = (lo + hi) / 2;
		if (an->iters[mid].start <= t)
			lo = mid;
		else
			hi = mid;
	}
	an->iter_cache = lo;
	*slot = (int64_t)lo;
	return an->iters[lo].iter;
}

static uint32_t gp_an_group(struct gp_an *an, uint64_t key, uint32_t name_str, const char *synth)
{
	if (an->group_last != GP_NONE32 && key == an->group_last_key)
		return an->group_last;
	uint64_t *v = gp_map_get(&an->group_by_key, key);
	if (v) {
		an->group_last_key = key;
		an->group_last = (uint32_t)*v;
		return (uint32_t)*v;
	}
	if (GROW(an->groups, an->ngroups, an->capgroups))
		return gp_an_fail(an, -ENOMEM), GP_NONE32;
	struct gp_group *g = &an->groups[an->ngroups];
	memset(g, 0, sizeof *g);
	g->key = key;
	g->name_str = name_str;
	if (name_str == GP_NONE32 && !(g->name = strdup(synth ? synth : "?")))
		return gp_an_fail(an, -ENOMEM), GP_NONE32;
	gp_an_fail(an, gp_map_put(&an->group_by_key, key, an->ngroups));
	return (uint32_t)an->ngroups++;
}

/* A framework phase of an op, from what the trace says about its launch:
 * the launching thread's name (PyTorch runs CUDA backward work on its own
 * autograd threads, "pt_autograd_N"), the NVTX ranges open on the
 * launching thread, any depth (emit_nvtx / record_function names:
 * "...Backward...", "Optimizer.step#Adam.step"),
 * the launch's Python frames (a torch/autograd backward() call, a
 * torch/optim/ step). "forward" when the op had Python frames or an NVTX
 * range and none of those; "(no phase)" when the trace says nothing. */
static const char *gp_an_phase(struct gp_an *an, const struct gp_an_op *op, uint32_t hook_stack)
{
	uint64_t *tn = op->tid ? gp_map_get(&an->threads, op->tid) : NULL;
	if (!tn && op->tid)
		tn = gp_map_get(&an->threads, gp_an_os_tid(an, op->tid));
	const char *thread = tn ? gp_an_string(an, (uint32_t)*tn) : NULL;
	if (thread && strstr(thread, "autograd"))
		return "backward";
	if (op->nvtx_phase == GP_PHASE_BACKWARD)
		return "backward";
	if (op->nvtx_phase == GP_PHASE_OPTIMIZER)
		return "optimizer";
	int known = 0;
	if (op->nvtx) {
		known = 1;
		if (strstr(op->nvtx, "Backward") || strstr(op->nvtx, "backward"))
			return "backward";
		if (strstr(op->nvtx, "Optimizer") || strstr(op->nvtx, "optimizer"))
			return "optimizer";
	}
	uint64_t *v = hook_stack ? gp_map_get(&an->stacks, hook_stack) : NULL;
	for (uint32_t i = 0; v && i < (uint32_t)(*v & 0xffff); i++) {
		uint64_t pc = an->pcs[(*v >> 16) + i];
		if (!GP_PC_IS_PYFRAME(pc))
			break; /* Python frames come first */
		char b[32];
		const char *f = gp_an_frame_name(an, pc, b, sizeof b);
		known = 1;
		if (strstr(f, "/autograd/") || strstr(f, "backward)"))
			return "backward";
		if (strstr(f, "/optim/") || strstr(f, "Optimizer"))
			return "optimizer";
	}
	return known ? "forward" : "(no phase)";
}

void gp_an_fold_replayed(struct gp_an *an, uint64_t t, uint64_t ns)
{
	int64_t slot;
	an->replayed_ops++;
	an->replayed_ns += ns;
	gp_an_iter_of(an, t, &slot);
	if (slot >= 0)
		an->iters[slot].replayed++;
}

/* The window of the capture the op's call began in (at t). */
static struct gp_rep_window *gp_fold_window(struct gp_an *an, uint64_t t)
{
	size_t lo = 0, hi = an->nwins;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (an->wins[mid].start <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &an->wins[lo ? lo - 1 : 0];
}

/* The op's group by the --group-by key: its index, GP_NONE32 on ENOMEM. */
static uint32_t gp_fold_group_of(struct gp_an *an, struct gp_an_op *op, uint32_t hook_stack, uint32_t nvtx_str,
				 uint32_t name_str)
{
	uint64_t key;
	uint32_t gname = GP_NONE32;
	const char *synth = op->name;
	char sb[48];
	switch (an->cfg.group_by) {
	case GP_GROUP_NVTX:
		gname = nvtx_str;
		key = nvtx_str != GP_NONE32 ? (1ULL << 40) | nvtx_str : (2ULL << 40);
		synth = "(no NVTX range)";
		break;
	case GP_GROUP_CALLSITE:
		if (op->callsite) {
			gname = gp_an_canon(an, op->callsite, strlen(op->callsite));
			key = (1ULL << 40) | gname;
		} else {
			key = 2ULL << 40;
			synth = "(no stack)";
		}
		break;
	case GP_GROUP_PHASE: {
		static const char *const phases[] = { "forward", "backward", "optimizer", "(no phase)" };
		const char *ph = gp_an_phase(an, op, hook_stack);
		uint64_t k = 0;
		while (k < 3 && strcmp(phases[k], ph))
			k++;
		key = (5ULL << 40) | k;
		synth = ph;
		break;
	}
	case GP_GROUP_STREAM:
		snprintf(sb, sizeof sb, "device %u stream %u", op->device, op->stream);
		key = (3ULL << 40) | ((uint64_t)op->device << 32) | op->stream;
		synth = sb;
		break;
	default:
		if (name_str != GP_NONE32) {
			gname = name_str;
			key = (1ULL << 40) | name_str;
		} else {
			/* memcpy kinds, memset, hook-only api names */
			key = (4ULL << 40) | ((uint64_t)op->kind << 32) |
			      (op->kind == GP_OP_HOOK_ONLY ? op->api_id : op->copy_kind);
		}
		break;
	}
	return gp_an_group(an, key, gname, synth);
}

/* Fold one op whose launch is final into every aggregate: its group, the
 * run's totals, its iteration and capture window; then the op sink. */
static void gp_fold_sums(struct gp_an *an, struct gp_fold_ent *e)
{
	struct gp_an_op *op = &e->op;
	if (e->callsite[0])
		op->callsite = e->callsite;
	struct gp_group *g = &an->groups[op->group];
	g->count++;
	g->kinds |= op->kind == GP_OP_MEMCPY ? GP_GKIND_COPY : op->kind == GP_OP_MEMSET ? GP_GKIND_SET
		  : op->kind == GP_OP_KERNEL ? GP_GKIND_KERNEL : GP_GKIND_OTHER;
	if (op->api_class == GP_API_GRAPH_LAUNCH)
		g->kinds |= GP_GKIND_GRAPH;
	g->bytes += op->bytes;
	g->launch += op->launch_ns;
	g->launch_raw += op->launch_raw_ns;
	g->queue += op->queue_ns;
	g->exec += op->execute_ns;
	if (op->blocking && op->api_class == GP_API_MEMCPY_ASYNC)
		g->pageable++;
	if (op->launch_cfg) {
		struct gp_rep_launch_cfg c;
		gp_rep_cfg_from_rec(&c, op->launch_cfg, an->dev[op->device].present ? an->dev[op->device].sms : 0);
		gp_rep_cfg_add(&g->cfg, &c);
	}
	if (op->pageable)
		g->pageable_host++;
	if (!op->has_api)
		g->no_api++;
	if (!op->has_gpu)
		g->no_gpu++;
	else
		gp_an_fail(an, gp_hist_add(&g->hist, op->execute_ns));
	an->ops++;
	an->launch += op->launch_ns;
	an->launch_raw += op->launch_raw_ns;
	an->cost.from_launch_ns += op->launch_raw_ns - op->launch_ns;
	an->queue += op->queue_ns;
	an->exec += op->execute_ns;
	if (!op->has_api)
		an->ops_no_api++;
	else if (!op->has_hook && op->api_domain == GP_REC_RUNTIME_API && an->have_hooks)
		an->ops_no_hook++; /* a pointer taken around the hooks, or an unhooked entry point */
	if (!op->has_gpu)
		an->ops_no_gpu++;
	if (op->has_api && op->has_gpu)
		an->ops_joined++;
	if (an->nwins) { /* the capture window the op's call began in */
		struct gp_rep_window *w = gp_fold_window(an, op->has_api ? op->api_start : op->gpu_start);
		w->ops++;
		w->launch_ns += op->launch_ns;
		w->execute_ns += op->execute_ns;
	}
	if (e->slot >= 0) {
		struct gp_iterx *it = &an->iters[e->slot];
		it->ops++;
		it->launch += op->launch_ns;
		it->queue += op->queue_ns;
		it->exec += op->execute_ns;
	}
	if (an->cfg.on_op)
		an->cfg.on_op(op, an->cfg.ctx);
}

/* Fold the ops at the head of the line that nothing holds (all of them
 * when final). */
static void gp_fold_drain(struct gp_an *an, int final)
{
	struct gp_fold_ent *e;
	while ((e = gp_line_head(an, final))) {
		gp_fold_sums(an, e);
		gp_line_pop(an);
	}
}

uint64_t gp_fold_arrive(struct gp_an *an, struct gp_an_op *op, uint32_t hook_stack, uint32_t nvtx_str,
			uint32_t name_str)
{
	char cbuf[32];
	op->nvtx = gp_strtab_text(an->strings, nvtx_str);
	op->callsite = gp_an_callsite(an, hook_stack, cbuf, sizeof cbuf);
	op->group = gp_fold_group_of(an, op, hook_stack, nvtx_str, name_str);
	if (op->group == GP_NONE32)
		return UINT64_MAX;
	int64_t slot;
	op->iter = gp_an_iter_of(an, op->has_api ? op->api_start : op->gpu_start, &slot);
	uint64_t seq;
	struct gp_fold_ent *e = gp_line_push(an, &seq);
	if (!e)
		return gp_an_fail(an, -ENOMEM), UINT64_MAX;
	*e = (struct gp_fold_ent){ .op = *op, .hook_stack = hook_stack, .nvtx_str = nvtx_str, .name_str = name_str,
				   .holds = 1, .slot = slot };
	if (op->callsite == cbuf) { /* made up: kept with the op */
		memcpy(e->callsite, cbuf, sizeof e->callsite);
		e->callsite[sizeof e->callsite - 1] = 0;
	}
	op = &e->op; /* from here on, what the waits take out of it shows */
	/* a launch that waited on a full queue: that wait is not launching */
	gp_qfull_arrived(an, op, seq);
	if (op->has_api && op->launch_ns)
		gp_an_fail(an, gp_sweep_add(&an->covered, op->api_start, op->api_end));
	if (op->has_gpu && op->kind != GP_OP_HOST_CALLBACK) { /* a callback runs on the host */
		an->busy_sum += op->execute_ns;
		an->busy_used[op->device] = 1;
		gp_an_fail(an, gp_sweep_add(&an->busy[op->device], op->gpu_start, op->gpu_end));
	}
	if (op->has_gpu) {
		gp_an_fail(an, gp_sweep_add(&an->covered, op->gpu_start, op->gpu_end));
		if (gp_sync_arrived(an, op, slot, hook_stack, seq))
			gp_an_fail(an, -ENOMEM);
	}
	gp_line_release(an, seq); /* arrived */
	gp_fold_drain(an, 0);    /* it, and what the waits let go */
	return seq;
}

void gp_fold_flush(struct gp_an *an)
{
	gp_fold_drain(an, 1);
	gp_line_free(an);
}
