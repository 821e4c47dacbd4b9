/*
 * analysis.c — the analysis core's two-pass protocol (analysis.h): pass 1
 * and pass 2 scans with one function per record kind (and the views of the
 * records that the analyses get, cfg.on_rec), prepare, folding each joined
 * op into its group, its iteration and the busy/covered sweeps, and the
 * accessors. The join (join.c) and sync attribution (sync.c) run inside
 * pass 2, finish is analysis_finish.c; analysis_int.h lists the core's files
 * and their shared state; docs/metrics.md gives every definition.
 *
 * Called by the pipeline (pipeline.c) and the tests, on one thread.
 * Invariants: every op is folded exactly once (join.c); group and iteration
 * sums are sums of the folded ops' phases; the first failure is sticky in
 * an->err and every later call returns it.
 */
#include "analysis_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gp_an *gp_an_new(const struct gp_an_config *cfg)
{
	struct gp_an *an = calloc(1, sizeof *an);
	if (!an)
		return NULL;
	if (cfg)
		an->cfg = *cfg;
	if (!an->cfg.evict_after_ns)
		an->cfg.evict_after_ns = 120ULL * 1000000000ULL;
	an->strings = an->cfg.strings ? an->cfg.strings : &an->own_strings;
	an->gclock.free_head = GP_NONE32;
	if (!an->cfg.api_classes)
		an->cfg.api_classes = UINT32_MAX;
	/* views exist for these record types (analysis.h) */
	const uint32_t api = GP_AN_TYPE(GP_REC_HOOK_API) | GP_AN_TYPE(GP_REC_RUNTIME_API) |
			     GP_AN_TYPE(GP_REC_DRIVER_API);
	const uint32_t gpu = GP_AN_TYPE(GP_REC_KERNEL) | GP_AN_TYPE(GP_REC_MEMCPY) | GP_AN_TYPE(GP_REC_MEMSET);
	an->cfg.rec_types[0] &= an->cfg.on_rec ? api | gpu | GP_AN_TYPE(GP_REC_MARKER) | GP_AN_TYPE(GP_REC_STATUS) |
						 GP_AN_TYPE(GP_REC_HOST_SAMPLE) | GP_AN_TYPE(GP_REC_WINDOW) |
						 GP_AN_TYPE(GP_REC_OVERHEAD) | GP_AN_TYPE(GP_REC_COUNTER)
					       : 0;
	an->cfg.rec_types[1] &= an->cfg.on_rec ? api | gpu | GP_AN_TYPE(GP_REC_GRAPH_NODE) |
						 GP_AN_TYPE(GP_REC_STACK_REF)
					       : 0;
	an->t_first = UINT64_MAX;
	an->edges.first_api = an->edges.first_launch = UINT64_MAX;
	an->group_last = GP_NONE32;
	gp_join_init(&an->join);
	gp_sync_init(&an->sync);
	return an;
}

/* --- pass 1: one function per record kind ---------------------------------------- */

static void gp_an_seen(struct gp_an *an, uint64_t a, uint64_t b)
{
	if (a && a < an->t_first)
		an->t_first = a;
	if (b > an->t_last)
		an->t_last = b;
}

static void gp_an_scan1_string(struct gp_an *an, const union gp_rec *r, uint32_t nslots)
{
	uint32_t len = r->string.len;
	if ((uint64_t)len > (uint64_t)GP_STRING_INLINE + (uint64_t)(nslots - 1) * GP_REC_SIZE)
		len = GP_STRING_INLINE + (nslots - 1) * GP_REC_SIZE; /* defensive */
	char stackbuf[512], *buf = len < sizeof stackbuf ? stackbuf : malloc(len + 1);
	if (!buf)
		return gp_an_fail(an, -ENOMEM);
	/* inline bytes, then continuation slots */
	size_t first = len < GP_STRING_INLINE ? len : GP_STRING_INLINE;
	memcpy(buf, r->string.text, first);
	if (len > first)
		memcpy(buf + first, (const char *)(r + 1), len - first);
	uint32_t c = gp_an_canon(an, buf, len);
	if (c != GP_NONE32)
		gp_an_fail(an, gp_strtab_bind(an->strings, r->string.id, c));
	if (buf != stackbuf)
		free(buf);
}

static void gp_an_scan1_device(struct gp_an *an, const struct gp_rec_device *d)
{
	an->dev[d->device].present = 1;
	an->dev[d->device].name = d->name;
	an->dev[d->device].ccmaj = d->cc_major;
	an->dev[d->device].ccmin = d->cc_minor;
	an->dev[d->device].sms = d->sm_count;
}

static void gp_an_scan1_launch_cfg(struct gp_an *an, const struct gp_rec_launch_cfg *c)
{
	if (!c->id || c->id > GP_LAUNCH_CFG_MAX)
		return; /* no kernel can refer to it */
	if (!an->cfgs && !(an->cfgs = calloc(GP_LAUNCH_CFG_MAX + 1u, sizeof *an->cfgs)))
		return gp_an_fail(an, -ENOMEM);
	an->cfgs[c->id] = *c;
}

const struct gp_rec_launch_cfg *gp_an_launch_cfg(const struct gp_an *an, uint32_t id)
{
	return id && id <= GP_LAUNCH_CFG_MAX && an->cfgs && an->cfgs[id].id ? &an->cfgs[id] : NULL;
}

static void gp_an_scan1_drops(struct gp_an *an, const struct gp_rec_drops *d)
{
	uint64_t key = ((uint64_t)d->source << 32) | d->tid;
	uint64_t *v = gp_map_get(&an->drops, key);
	if (!v || *v < d->dropped)
		gp_an_fail(an, gp_map_put(&an->drops, key, d->dropped));
}

static void gp_an_scan1_host(struct gp_an *an, const struct gp_rec_host *h, struct gp_an_rec *v)
{
	v->host.ts = h->ts;
	v->host.interval_ns = (uint64_t)h->interval_us * 1000u;
	v->host.cupti_ns = h->cupti_ns;
	v->host.busy_pm = h->host_busy_pm;
	v->host.proc_pm = h->proc_cpu_pm;
	double w = h->interval_us ? h->interval_us : 1.0;
	an->host_busy_w += w * h->host_busy_pm / 10.0;
	an->host_proc_w += w * h->proc_cpu_pm / 10.0;
	an->host_w += w;
	if (h->host_busy_pm / 10.0 > an->host_max)
		an->host_max = h->host_busy_pm / 10.0;
}

static void gp_an_scan1_iter(struct gp_an *an, const struct gp_rec_mark *m)
{
	if (GROW(an->marks, an->nmarks, an->capmarks))
		return gp_an_fail(an, -ENOMEM);
	an->marks[an->nmarks].iter = (int64_t)m->iter;
	an->marks[an->nmarks].ts = m->ts;
	an->marks[an->nmarks].tid = m->tid;
	an->nmarks++;
	gp_an_seen(an, m->ts, m->ts);
}

static void gp_an_scan1_window(struct gp_an *an, const struct gp_rec_mark *m)
{
	if (m->kind == GP_WIN_START) {
		if (GROW(an->wins, an->nwins, an->capwins))
			return gp_an_fail(an, -ENOMEM);
		an->wins[an->nwins++] = (struct gp_rep_window){ .start = m->ts, .open = 1, .iter = (int64_t)m->iter,
								.tid = m->tid };
	} else if (m->kind == GP_WIN_STOP || m->kind == GP_WIN_END_EARLY) {
		/* the latest open window that began before it */
		for (size_t i = an->nwins; i > 0; i--)
			if (an->wins[i - 1].open && an->wins[i - 1].start <= m->ts) {
				an->wins[i - 1].stop = m->ts;
				an->wins[i - 1].open = 0;
				an->wins[i - 1].stop_iter = (int64_t)m->iter;
				an->wins[i - 1].stop_tid = m->tid;
				break;
			}
	}
	if (m->kind == GP_WIN_START && (!an->win_start || m->ts < an->win_start))
		an->win_start = m->ts;
	if ((m->kind == GP_WIN_STOP || m->kind == GP_WIN_END_EARLY) && m->ts > an->win_stop)
		an->win_stop = m->ts;
}

static void gp_an_scan1_stack(struct gp_an *an, const union gp_rec *r, uint32_t nslots)
{
	uint32_t depth = r->stack.depth;
	uint32_t avail = GP_STACK_INLINE + (nslots - 1) * 4u;
	if (depth > avail)
		depth = avail;
	if (gp_an_grow((void **)&an->pcs, &an->cappcs, an->npcs + depth, sizeof *an->pcs))
		return gp_an_fail(an, -ENOMEM);
	for (uint32_t i = 0; i < depth; i++) {
		uint64_t pc;
		if (i < GP_STACK_INLINE)
			pc = r->stack.pc[i];
		else
			memcpy(&pc, (const char *)(r + 1) + (i - GP_STACK_INLINE) * 8u, 8);
		an->pcs[an->npcs + i] = pc;
	}
	gp_an_fail(an, gp_map_put(&an->stacks, r->stack.id, ((uint64_t)an->npcs << 16) | depth));
	an->npcs += depth;
}

static inline void gp_an_decode_api(const struct gp_rec_api *a, struct gp_an_api *v)
{
	v->api_class = (uint8_t)GP_API_CLASS(a->class_flags);
	v->nested = (a->class_flags & GP_APIF_NESTED) != 0;
	v->api_id = a->api_id;
	v->corr = a->corr;
	v->tid = a->tid;
	v->start = a->start;
	v->end = a->start + gp_api_dur_ns(a);
}

static inline void gp_an_decode_gpu(const union gp_rec *r, struct gp_an_gpu *v)
{
	if (r->type == GP_REC_KERNEL) {
		const struct gp_rec_kernel *k = &r->kernel;
		v->graph = (k->flags & GP_OPF_GRAPH) != 0;
		v->end_missing = (k->flags & GP_OPF_END_MISSING) != 0;
		v->device = k->device;
		v->copy_kind = 0;
		v->pageable = 0;
		v->key = k->corr;
		v->stream = k->stream;
		v->name = k->name;
		v->cfg = gp_kernel_cfg(k);
		v->start = k->start;
		v->end = k->end;
		v->bytes = 0;
		return;
	}
	const struct gp_rec_copy *c = &r->copy;
	v->graph = (c->flags & GP_COPYF_GRAPH) != 0;
	v->end_missing = (c->flags & GP_COPYF_END_MISSING) != 0;
	v->device = c->device;
	v->copy_kind = c->copy_kind;
	v->pageable = r->type == GP_REC_MEMCPY && (c->flags & GP_COPYF_PAGEABLE) != 0;
	v->key = r->type == GP_REC_MEMCPY && c->rt_corr ? c->rt_corr : c->corr;
	v->stream = c->stream;
	v->name = 0;
	v->cfg = 0;
	v->start = c->start;
	v->end = c->start + gp_copy_dur_ns(c);
	v->bytes = gp_copy_bytes(c);
}

/* The first call and launch: CUPTI's runtime records win over hooks. */
static void gp_an_scan1_edges(struct gp_an *an, uint8_t type, const struct gp_an_api *v)
{
	struct gp_an_edges *e = &an->edges;
	if (v->end > e->last_activity)
		e->last_activity = v->end;
	if (type == GP_REC_DRIVER_API)
		return;
	if (type == GP_REC_RUNTIME_API && !an->runtime_seen) {
		an->runtime_seen = 1;
		e->first_api = e->first_launch = UINT64_MAX;
	}
	if (type == GP_REC_HOOK_API && an->runtime_seen)
		return;
	if (v->start < e->first_api)
		e->first_api = v->start;
	if ((v->api_class == GP_API_LAUNCH || v->api_class == GP_API_GRAPH_LAUNCH) && v->start < e->first_launch)
		e->first_launch = v->start;
}

static void gp_an_scan1_api(struct gp_an *an, const struct gp_rec_api *a, struct gp_an_api *v)
{
	gp_an_decode_api(a, v);
	uint64_t dur = v->end - v->start;
	gp_an_seen(an, v->start, v->end);
	gp_an_scan1_edges(an, a->type, v);
	if (a->type == GP_REC_HOOK_API) {
		if (!v->nested)
			an->host_hook_ns += dur;
		gp_join_count_hook(an, a);
	} else if (a->type == GP_REC_RUNTIME_API) {
		an->host_runtime_ns += dur;
	} else {
		an->host_driver_ns += dur;
	}
}

/* The NVTX stack of thread tid, created on first use (NULL on ENOMEM). */
static struct gp_nvtx_stack *gp_an_nvtx_stack(struct gp_an *an, uint32_t tid)
{
	uint64_t *v = gp_map_get(&an->nvtx, tid);
	if (v)
		return &an->nvtx_stacks[*v];
	if (GROW(an->nvtx_stacks, an->nnvtx, an->capnvtx))
		return gp_an_fail(an, -ENOMEM), NULL;
	size_t idx = an->nnvtx++;
	memset(&an->nvtx_stacks[idx], 0, sizeof an->nvtx_stacks[idx]);
	gp_an_fail(an, gp_map_put(&an->nvtx, tid, idx));
	return &an->nvtx_stacks[idx];
}

/* The NVTX stack a push or pop changes; NULL for other markers (or ENOMEM). */
static struct gp_nvtx_stack *gp_an_marker_stack(struct gp_an *an, const struct gp_rec_marker *m)
{
	if (m->kind != GP_MARK_PUSH && m->kind != GP_MARK_POP)
		return NULL;
	return gp_an_nvtx_stack(an, m->tid);
}

/* Pass 1: each thread's NVTX depth; the view says when a thread's outermost
 * range closes (a pop without its push, from before the capture, is none). */
static void gp_an_scan1_marker(struct gp_an *an, const struct gp_rec_marker *m, struct gp_an_rec *v)
{
	gp_an_seen(an, m->ts, m->ts);
	if (m->ts > an->edges.last_activity)
		an->edges.last_activity = m->ts;
	v->marker.ts = m->ts;
	v->marker.closed = 0;
	struct gp_nvtx_stack *s = gp_an_marker_stack(an, m);
	if (!s)
		return;
	if (m->kind == GP_MARK_PUSH) {
		if (s->depth++ == 0) {
			s->depth0_start = m->ts;
			s->depth0_name = m->name;
		}
	} else if (s->depth > 0 && --s->depth == 0) {
		v->marker.closed = 1;
		v->marker.range_name = s->depth0_name;
		v->marker.range_start = s->depth0_start;
	}
}

/* Can a record of this type be one of the library's own calibration calls
 * (cupti_cost.c)? Only asked in a trace that has a calibration. */
static inline int gp_an_may_be_own(const struct gp_an *an, uint8_t type)
{
	return (an->cost.have_calib || an->cost.own.count) &&
	       (type == GP_REC_RUNTIME_API || type == GP_REC_DRIVER_API || type == GP_REC_KERNEL ||
		type == GP_REC_SYNC || type == GP_REC_OVERHEAD || type == GP_REC_EXTCORR);
}

int gp_an_scan1(struct gp_an *an, const union gp_rec *r, uint32_t nslots)
{
	if (r->type >= GP_REC_TYPE_COUNT)
		return an->err;
	an->rec_count[r->type]++;
	an->records += nslots;
	if (r->type == GP_REC_OVERHEAD || r->type == GP_REC_CALIBRATION || r->type == GP_REC_EXTCORR)
		gp_cost_scan1(an, r);
	if (gp_an_may_be_own(an, r->type) && gp_cost_own(an, r))
		return an->err; /* the library's calibration: the profiler's, not the program's */
	struct gp_an_rec v; /* what the analyses see of this record */
	v.type = r->type;
	v.pass = 1;
	switch (r->type) {
	case GP_REC_STRING:
		gp_an_scan1_string(an, r, nslots);
		break;
	case GP_REC_API_NAME:
		gp_an_fail(an, gp_map_put(&an->api_names,
					  ((uint64_t)r->api_name.domain << 16) | r->api_name.api_id,
					  r->api_name.name));
		break;
	case GP_REC_THREAD:
		gp_an_fail(an, gp_map_put(&an->threads, r->thread.tid, r->thread.name));
		break;
	case GP_REC_DEVICE:
		gp_an_scan1_device(an, &r->device);
		break;
	case GP_REC_LAUNCH_CFG:
		gp_an_scan1_launch_cfg(an, &r->launch_cfg);
		break;
	case GP_REC_STATUS:
		if (r->status.kind < 16)
			an->status[r->status.kind] = 1;
		if (r->status.kind == GP_STATUS_STARTUP_LOST && r->status.value > 0)
			an->startup_lost += (uint64_t)r->status.value;
		if (r->status.kind == GP_STATUS_EXIT_UNSETTLED &&
		    (r->status.value == GP_EXIT_SYNC_SKIPPED || r->status.value == GP_EXIT_DRAIN_ABANDONED) &&
		    r->status.value > an->exit_unsettled)
			an->exit_unsettled = (int)r->status.value; /* a value of no known state (a damaged
								      trace) says nothing */
		if (r->status.kind == GP_STATUS_WINDOW_UNOPENED) {
			an->window_unopened = 1;
			an->window_unopened_why = r->status.detail;
		}
		v.status.kind = r->status.kind;
		v.status.value = r->status.value;
		v.status.detail = r->status.detail;
		break;
	case GP_REC_DROPS:
		gp_an_scan1_drops(an, &r->drops);
		break;
	case GP_REC_HOST_SAMPLE:
		gp_an_scan1_host(an, &r->host, &v);
		break;
	case GP_REC_ITER:
		gp_an_scan1_iter(an, &r->mark);
		break;
	case GP_REC_WINDOW:
		gp_an_scan1_window(an, &r->mark);
		v.mark.kind = r->mark.kind;
		v.mark.ts = r->mark.ts;
		v.mark.iter = (int64_t)r->mark.iter;
		break;
	case GP_REC_STACK:
		gp_an_scan1_stack(an, r, nslots);
		break;
	case GP_REC_HOST_CALLBACK: /* its function is named like a stack's frame */
		if (r->hostcb.start > UINT64_MAX - gp_hostcb_dur_ns(&r->hostcb))
			break; /* corrupt: no time (pass 2 skips it too) */
		gp_an_seen(an, r->hostcb.start, r->hostcb.start + gp_hostcb_dur_ns(&r->hostcb));
		if (gp_an_grow((void **)&an->pcs, &an->cappcs, an->npcs + 1, sizeof *an->pcs))
			return gp_an_fail(an, -ENOMEM), an->err;
		an->pcs[an->npcs++] = r->hostcb.fn + 1; /* as a return address: its name is the pc before */
		break;
	case GP_REC_SYMBOL:
		gp_an_fail(an, gp_map_put(&an->symbols, r->symbol.pc, r->symbol.name));
		break;
	case GP_REC_MODULE:
		if (GROW(an->modules, an->nmodules, an->capmodules))
			gp_an_fail(an, -ENOMEM);
		else
			an->modules[an->nmodules++] = r->module;
		break;
	case GP_REC_HOOK_API:
	case GP_REC_RUNTIME_API:
	case GP_REC_DRIVER_API:
		gp_an_scan1_api(an, &r->api, &v.api);
		gp_gpu_clock_api(an, r->type, &v.api);
		break;
	case GP_REC_SYNC:
		gp_an_seen(an, r->sync.start, r->sync.end);
		break;
	case GP_REC_KERNEL:
	case GP_REC_MEMCPY:
	case GP_REC_MEMSET:
		gp_an_decode_gpu(r, &v.gpu);
		gp_gpu_clock_gpu(an, r->type, &v.gpu);
		gp_an_seen(an, v.gpu.start, v.gpu.end);
		if (v.gpu.end > an->edges.last_activity)
			an->edges.last_activity = v.gpu.end;
		if (r->type == GP_REC_KERNEL && !v.gpu.end_missing && v.gpu.end > an->edges.last_kernel)
			an->edges.last_kernel = v.gpu.end;
		break;
	case GP_REC_MARKER:
		gp_an_scan1_marker(an, &r->marker, &v);
		break;
	case GP_REC_CLOCK_PAIR: {
		struct gp_clock_pair cp = { .raw = r->clock.raw, .realtime = r->clock.realtime,
					    .width = r->clock.width_ns, .kind = r->clock.kind };
		gp_an_fail(an, gp_clockmap_add(&an->clocks, &cp));
		break;
	}
	case GP_REC_COUNTER: /* a launch replayed for its counters: never an op */
		if (r->counter.op)
			gp_an_fail(an, gp_map_put(&an->replayed, r->counter.op, 1));
		v.counter.metric = r->counter.metric;
		v.counter.device = r->counter.device;
		v.counter.op = r->counter.op;
		v.counter.name = r->counter.name;
		v.counter.sample = r->counter.sample;
		v.counter.value = r->counter.value;
		break;
	case GP_REC_OVERHEAD:
		v.overhead.kind = r->overhead.kind;
		v.overhead.tid = r->overhead.tid;
		v.overhead.corr = r->overhead.corr;
		v.overhead.start = r->overhead.start;
		v.overhead.end = r->overhead.end;
		break;
	default:
		break;
	}
	if ((an->cfg.rec_types[0] & GP_AN_TYPE(r->type)) &&
	    (r->type < GP_REC_HOOK_API || r->type > GP_REC_DRIVER_API || (an->cfg.api_classes & GP_AN_CLASS(v.api.api_class))))
		an->cfg.on_rec(&v, an->cfg.rec_ctx);
	return an->err;
}

/* --- prepare ------------------------------------------------------------------ */

static int gp_an_cmp_mark(const void *a, const void *b)
{
	const struct { int64_t iter; uint64_t ts; uint32_t tid; } *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->iter < y->iter ? -1 : x->iter > y->iter;
}

static void gp_an_windows(struct gp_an *an);

void gp_an_set_windowed(struct gp_an *an, int windowed)
{
	an->windowed = windowed;
}

void gp_an_set_cupti(struct gp_an *an, const char *mode)
{
	/* canonical text (gp_config_cupti_text): the closest named mode, then
	 * the items that differ; only "full" pushes around every call */
	const char *x = mode ? strstr(mode, "extcorr=") : NULL;
	if (!mode || !strcmp(mode, "off"))
		an->join.nested = 0;
	else if (x)
		an->join.nested = strncmp(x + 8, "all", 3) != 0;
	else
		an->join.nested = strncmp(mode, "full", 4) != 0;
}

int gp_an_prepare(struct gp_an *an)
{
	if (an->err)
		return an->err;
	an->have_runtime = an->rec_count[GP_REC_RUNTIME_API] > 0;
	an->have_hooks = an->rec_count[GP_REC_HOOK_API] > 0;
	int have_cupti = an->rec_count[GP_REC_RUNTIME_API] || an->rec_count[GP_REC_DRIVER_API] ||
			 an->rec_count[GP_REC_KERNEL] || an->rec_count[GP_REC_MEMCPY] ||
			 an->rec_count[GP_REC_MEMSET];
	/* no CUPTI record in a trace whose status says CUPTI was working is a
	 * trace cut before CUPTI delivered anything, not a hook-only capture */
	an->hook_only = an->status[GP_STATUS_CUPTI_UNAVAILABLE] ||
			(!have_cupti && an->have_hooks && !an->status[GP_STATUS_CUPTI_OK]);
	gp_cost_prepare(an);
	gp_gpu_clock_prepare(an);
	gp_sym_resolve(an);
	gp_clockmap_sort(&an->clocks);

	/* iterations: marks sorted by time, one per iteration number */
	if (an->nmarks)
		qsort(an->marks, an->nmarks, sizeof *an->marks, gp_an_cmp_mark);
	if (an->nmarks) {
		an->iters = calloc(an->nmarks, sizeof *an->iters);
		if (!an->iters)
			return gp_an_fail(an, -ENOMEM), an->err;
		for (size_t i = 0; i < an->nmarks; i++) {
			if (an->niters && an->iters[an->niters - 1].iter == an->marks[i].iter)
				continue;
			an->iters[an->niters].iter = an->marks[i].iter;
			an->iters[an->niters].start = an->marks[i].ts;
			an->iters[an->niters].tid = an->marks[i].tid;
			an->niters++;
		}
		uint64_t wend = an->win_stop ? an->win_stop : an->t_last;
		for (size_t i = 0; i < an->niters; i++)
			an->iters[i].end = i + 1 < an->niters ? an->iters[i + 1].start
							     : (wend > an->iters[i].start ? wend : an->iters[i].start);
	}
	gp_an_windows(an);
	return an->err;
}

/* After pass 1: capture windows in start order, open ones closed at the
 * next window's start or the last record (metrics.md §6); an iteration is
 * captured when it lies whole inside one (or has ops, analysis_finish.c),
 * and ends at that window's stop at the latest (the gap to the next capture
 * is no iteration's time). */
static void gp_an_windows(struct gp_an *an)
{
	if (!an->windowed)
		an->nwins = 0; /* window "all": the whole trace */
	if (!an->nwins) {
		for (size_t i = 0; i < an->niters; i++)
			an->iters[i].captured = 1;
		return;
	}
	for (size_t i = 1; i < an->nwins; i++) /* insertion sort: marks come in order */
		for (size_t k = i; k > 0 && an->wins[k - 1].start > an->wins[k].start; k--) {
			struct gp_rep_window t = an->wins[k];
			an->wins[k] = an->wins[k - 1];
			an->wins[k - 1] = t;
		}
	for (size_t i = 0; i < an->nwins; i++) {
		struct gp_rep_window *w = &an->wins[i];
		if (w->open)
			w->stop = i + 1 < an->nwins ? an->wins[i + 1].start : an->t_last;
		if (w->stop < w->start)
			w->stop = w->start;
	}
	size_t k = 0;
	for (size_t i = 0; i < an->niters; i++) {
		struct gp_iterx *it = &an->iters[i];
		while (k < an->nwins && an->wins[k].stop <= it->start)
			k++;
		if (k == an->nwins)
			break;
		uint64_t a = it->start > an->wins[k].start ? it->start : an->wins[k].start;
		uint64_t b = it->end < an->wins[k].stop ? it->end : an->wins[k].stop;
		if (b <= a)
			continue; /* in the gap before the window */
		/* captured: whole inside the window, or beginning the window:
		 * at an iteration boundary the library writes the iteration's
		 * mark, starts CUPTI, then the window's START mark, on the same
		 * thread (a time window opens on its timer's thread, mid-
		 * iteration); the STOP mark follows the mark of the first
		 * iteration after the window, on the same thread: that one is
		 * not captured. In any case its time is the part inside the
		 * window. */
		int opened = an->wins[k].iter == it->iter && an->wins[k].tid == it->tid;
		int closed = !an->wins[k].open && an->wins[k].stop_iter == it->iter && an->wins[k].stop_tid == it->tid &&
			     an->wins[k].iter != it->iter; /* (a profiler range starts and stops one iteration) */
		it->captured = (it->start >= an->wins[k].start || opened) && it->end <= an->wins[k].stop && !closed;
		it->start = a;
		it->end = b;
	}
}

/* --- pass 2: one function per record kind ----------------------------------------- */

/* Pass 2: the innermost NVTX range of each thread (canonical names). */
static void gp_an_marker(struct gp_an *an, const struct gp_rec_marker *m)
{
	struct gp_nvtx_stack *s = gp_an_marker_stack(an, m);
	if (!s)
		return;
	if (m->kind == GP_MARK_PUSH) {
		if (s->n < 4096 && !GROW(s->names, s->n, s->cap))
			s->names[s->n++] = gp_an_str(an, m->name);
	} else if (s->n) {
		s->n--;
	}
}

static void gp_an_hook_only_op(struct gp_an *an, const struct gp_rec_api *a)
{
	struct gp_an_op op;
	memset(&op, 0, sizeof op);
	op.kind = GP_OP_HOOK_ONLY;
	op.has_api = 1;
	op.has_hook = 1;
	op.api_class = (uint8_t)GP_API_CLASS(a->class_flags);
	op.api_id = a->api_id;
	op.api_domain = GP_REC_HOOK_API;
	op.tid = a->tid;
	op.stream = a->stream;
	op.corr = a->corr;
	op.api_start = a->start;
	op.api_end = a->start + gp_api_dur_ns(a);
	op.launch_ns = op.launch_raw_ns = gp_api_dur_ns(a);
	const char *n = gp_an_api_name(an, GP_REC_HOOK_API, a->api_id);
	op.name = n ? n : "(hooked call)";
	op.nvtx_phase = gp_an_nvtx_phase(an, a->tid);
	gp_fold_arrive(an, &op, 0, gp_an_nvtx_top(an, a->tid), GP_NONE32);
}

/* A host callback's run (metrics.md §3, host callbacks): an op named for
 * its function, its run the execute, on the host's clock, a candidate of the
 * waits around it; never GPU time. */
static void gp_an_host_callback_op(struct gp_an *an, const struct gp_rec_hostcb *h)
{
	if (h->start > UINT64_MAX - gp_hostcb_dur_ns(h))
		return; /* corrupt: its end would wrap */
	struct gp_an_op op;
	memset(&op, 0, sizeof op);
	op.kind = GP_OP_HOST_CALLBACK;
	op.has_gpu = 1;
	op.api_class = GP_API_HOST_FUNC;
	op.stream = GP_NONE32; /* the record has the call's handle, not CUPTI's stream id */
	op.corr = h->op | GP_OP_CORR_HOST_CALLBACK;
	op.tid = h->tid;
	op.gpu_start = h->start;
	op.gpu_end = h->start + gp_hostcb_dur_ns(h);
	op.execute_ns = op.gpu_end - op.gpu_start;
	char buf[512], nb[32];
	const char *fn = gp_an_frame_name(an, h->fn + 1, nb, sizeof nb);
	/* the function alone: a frame's name goes on with "+0x.. (object)"
	 * or " (file:line)" */
	int n = fn == nb ? snprintf(buf, sizeof buf, "host callback")
			 : snprintf(buf, sizeof buf, "host callback %.*s", (int)strcspn(fn, "+ ("), fn);
	uint32_t name_str = gp_an_canon(an, buf, n > 0 && (size_t)n < sizeof buf ? (size_t)n : strlen(buf));
	if (an->err)
		return;
	op.name = gp_strtab_text(an->strings, name_str);
	op.nvtx_phase = gp_an_nvtx_phase(an, h->tid);
	gp_fold_arrive(an, &op, 0, GP_NONE32, name_str);
}

/* A hooked call: an op of its own in a hook-only trace, else a hook that
 * joins a CUPTI op (join.c) or carries a blocking call's stack (sync.c). */
static void gp_an_scan2_hook(struct gp_an *an, const struct gp_rec_api *a)
{
	unsigned c = GP_API_CLASS(a->class_flags);
	if (a->class_flags & GP_APIF_NESTED)
		return;
	if (gp_an_is_sync_class(c) || gp_an_is_copy_sync(c) || gp_an_is_implicit_sync(c))
		gp_sync_hook(an, a);
	if (an->hook_only) {
		if (gp_an_is_op_class(c))
			gp_an_hook_only_op(an, a);
		return;
	}
	if (gp_an_is_op_class(c))
		gp_join_hook(an, a, c);
	/* the joins it completes wait for the next record: its stack reference */
	an->hook_defer = *a;
	an->hook_deferred = 1;
}

/* The joins the deferred hook completes (gp_an_scan2_hook). */
void gp_an_hook_done(struct gp_an *an)
{
	if (!an->hook_deferred)
		return;
	an->hook_deferred = 0;
	if (gp_an_is_op_class(GP_API_CLASS(an->hook_defer.class_flags)))
		gp_join_hook_done(an, &an->hook_defer);
	gp_join_hook_seen(an, &an->hook_defer); /* API records waiting for this thread's hooks */
}

static void gp_an_scan2_graph(struct gp_an *an, const struct gp_rec_graph *g)
{
	/* a launch made during stream capture: its hook and API record will
	 * never meet a GPU op of their own */
	if (g->kind == GP_GRAPH_CAPTURED && g->corr)
		gp_join_captured(an, g->corr);
}

static void gp_an_scan2_stack_ref(struct gp_an *an, const struct gp_rec_stack_ref *s)
{
	gp_join_stack_ref(an, s->op, s->stack);
	gp_sync_stack_ref(an, s->op, s->stack);
}

static void gp_an_scan2_extcorr(struct gp_an *an, const struct gp_rec_extcorr *e)
{
	if (e->kind != GP_EXT_KIND_CUSTOM2 || an->hook_only)
		return;
	if (!gp_sync_extcorr(an, e))
		gp_join_extcorr(an, e);
}

static void gp_an_scan2_api(struct gp_an *an, const struct gp_rec_api *a)
{
	unsigned c = GP_API_CLASS(a->class_flags);
	uint64_t cupti = gp_cost_call(an, a); /* CUPTI's own cost at the call's entry */
	if (gp_an_is_sync_class(c) || gp_an_is_copy_sync(c) || gp_an_is_implicit_sync(c) || c == GP_API_MEMCPY_ASYNC)
		gp_sync_api(an, a, cupti);
	gp_join_api(an, a, cupti);
}

/* Pass 2: the view of a record for the analyses, after the core's use of
 * it (GPU records arrive decoded). */
static void gp_an_view2(struct gp_an *an, const union gp_rec *r, struct gp_an_rec *v)
{
	v->type = r->type;
	v->pass = 2;
	switch (r->type) {
	case GP_REC_HOOK_API:
	case GP_REC_RUNTIME_API:
	case GP_REC_DRIVER_API:
		if (!(an->cfg.api_classes & GP_AN_CLASS(GP_API_CLASS(r->api.class_flags))))
			return;
		gp_an_decode_api(&r->api, &v->api);
		break;
	case GP_REC_GRAPH_NODE: {
		const struct gp_rec_graph *g = &r->graph;
		uint64_t aux = (uint64_t)g->aux_hi << 32 | g->aux_lo;
		v->graph.kind = g->kind;
		v->graph.graph = g->graph_id;
		v->graph.node = g->node_id;
		v->graph.corr = g->corr;
		v->graph.tid = v->graph.from_graph = g->aux32;
		v->graph.ts = v->graph.from_node = aux;
		v->graph.nvtx = g->kind == GP_GRAPH_CAPTURED ? gp_an_nvtx_top(an, g->aux32) : GP_STR_NONE;
		break;
	}
	case GP_REC_STACK_REF:
		v->stack_ref.op = r->stack_ref.op;
		v->stack_ref.stack = r->stack_ref.stack;
		break;
	default:
		break;
	}
	an->cfg.on_rec(v, an->cfg.rec_ctx);
}

int gp_an_scan2(struct gp_an *an, const union gp_rec *r, uint32_t nslots)
{
	(void)nslots;
	if (an->err)
		return an->err;
	if ((++an->scan2_n & ((1u << 20) - 1)) == 0)
		gp_join_evict(an);
	if (gp_an_may_be_own(an, r->type) && gp_cost_own(an, r))
		return an->err; /* the library's calibration (pass 1 found them all) */
	/* a hook's joins are finished once its stack reference, the record
	 * after it, has been read (or at once when another record follows) */
	int own_ref = an->hook_deferred && r->type == GP_REC_STACK_REF && r->stack_ref.op == an->hook_defer.corr &&
		      r->stack_ref.tid == an->hook_defer.tid;
	if (!own_ref)
		gp_an_hook_done(an);
	struct gp_an_rec v; /* what the analyses see of this record */
	switch (r->type) {
	case GP_REC_MARKER:
		gp_an_marker(an, &r->marker);
		break;
	case GP_REC_HOOK_API:
		gp_an_scan2_hook(an, &r->api);
		break;
	case GP_REC_GRAPH_NODE:
		gp_an_scan2_graph(an, &r->graph);
		break;
	case GP_REC_STACK_REF:
		gp_an_scan2_stack_ref(an, &r->stack_ref);
		break;
	case GP_REC_SYNC:
		gp_sync_record(an, &r->sync);
		break;
	case GP_REC_OVERHEAD:
		gp_sync_overhead(an, &r->overhead);
		gp_cost_overhead(an, &r->overhead);
		break;
	case GP_REC_EXTCORR:
		gp_an_scan2_extcorr(an, &r->extcorr);
		break;
	case GP_REC_RUNTIME_API:
	case GP_REC_DRIVER_API:
		gp_an_scan2_api(an, &r->api);
		break;
	case GP_REC_KERNEL:
	case GP_REC_MEMCPY:
	case GP_REC_MEMSET:
		gp_an_decode_gpu(r, &v.gpu);
		gp_gpu_clock_correct(an, &v.gpu);
		gp_join_gpu(an, r->type, &v.gpu);
		break;
	case GP_REC_HOST_CALLBACK:
		gp_an_host_callback_op(an, &r->hostcb);
		break;
	default:
		break;
	}
	if (own_ref)
		gp_an_hook_done(an);
	if (r->type < GP_REC_TYPE_COUNT && (an->cfg.rec_types[1] & GP_AN_TYPE(r->type))) /* a corrupt type: none */
		gp_an_view2(an, r, &v);
	return an->err;
}

const struct gp_an_edges *gp_an_edges(const struct gp_an *an)
{
	return &an->edges;
}

const struct gp_rep_window *gp_an_capture_windows(const struct gp_an *an, size_t *n)
{
	*n = an->nwins;
	return an->nwins ? an->wins : NULL;
}

uint64_t gp_an_record_count(const struct gp_an *an, unsigned type)
{
	return type < GP_REC_TYPE_COUNT ? an->rec_count[type] : 0;
}

uint64_t gp_an_time_base(const struct gp_an *an)
{
	return an->t_first == UINT64_MAX ? 0 : an->t_first;
}

size_t gp_an_iteration_starts(const struct gp_an *an, uint64_t **starts, int64_t **nums)
{
	/* the marks are in time order since prepare; the first of each
	 * iteration number starts it (docs/metrics.md §7) */
	uint64_t *s = malloc((an->nmarks ? an->nmarks : 1) * sizeof *s);
	int64_t *num = malloc((an->nmarks ? an->nmarks : 1) * sizeof *num);
	size_t n = 0;
	struct gp_map seen = { 0 };
	for (size_t i = 0; s && num && i < an->nmarks; i++) {
		if (gp_map_get(&seen, (uint64_t)an->marks[i].iter))
			continue;
		gp_map_put(&seen, (uint64_t)an->marks[i].iter, 1);
		num[n] = an->marks[i].iter;
		s[n++] = an->marks[i].ts;
	}
	gp_map_free(&seen);
	if (!s || !num) {
		free(s);
		free(num);
		s = NULL;
		num = NULL;
	}
	*starts = s;
	*nums = num;
	return n;
}

uint64_t gp_an_replayed(const struct gp_an *an, uint64_t *ns)
{
	if (ns)
		*ns = an->replayed_ns;
	return an->replayed_ops;
}

int gp_an_device(const struct gp_an *an, unsigned d, struct gp_an_device *out)
{
	if (d >= 256 || !an->dev[d].present)
		return -ENOENT;
	out->name = gp_an_string(an, an->dev[d].name);
	out->cc_major = an->dev[d].ccmaj;
	out->cc_minor = an->dev[d].ccmin;
	out->sm_count = an->dev[d].sms;
	return 0;
}

uint32_t gp_an_os_tid(const struct gp_an *an, uint32_t cupti_tid)
{
	return gp_join_os_tid(an, cupti_tid);
}

int gp_an_hook_only(const struct gp_an *an)
{
	return an->hook_only;
}

const struct gp_clockmap *gp_an_clockmap(const struct gp_an *an)
{
	return &an->clocks;
}

void gp_an_free(struct gp_an *an)
{
	if (!an)
		return;
	gp_strtab_free(&an->own_strings);
	gp_map_free(&an->api_names);
	gp_map_free(&an->threads);
	free(an->cfgs);
	free(an->pcs);
	gp_map_free(&an->stacks);
	gp_map_free(&an->symbols);
	gp_map_free(&an->symnames);
	free(an->modules);
	gp_clockmap_free(&an->clocks);
	gp_line_free(an);
	gp_map_free(&an->drops);
	gp_map_free(&an->replayed);
	free(an->marks);
	free(an->wins);
	gp_sync_free(&an->sync);
	gp_join_free(&an->join);
	gp_cost_free(&an->cost);
	gp_gpu_clock_free(&an->gclock);
	free(an->iters);
	gp_map_free(&an->nvtx);
	for (size_t i = 0; i < an->nnvtx; i++)
		free(an->nvtx_stacks[i].names);
	free(an->nvtx_stacks);
	for (size_t i = 0; i < an->ngroups; i++) {
		free(an->groups[i].name);
		gp_hist_free(&an->groups[i].hist);
	}
	free(an->groups);
	gp_map_free(&an->group_by_key);
	for (unsigned d = 0; d < 256; d++)
		gp_sweep_free(&an->busy[d]);
	gp_sweep_free(&an->covered);
	free(an);
}
