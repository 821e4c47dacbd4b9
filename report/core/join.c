/*
 * join.c — the correlation join: which CUPTI API record, GPU record and
 * launch hook belong to one op.
 *
 * One pending entry per join key (the runtime correlation id: API record
 * corr = kernel/memset corr = memcpy rt_corr; a driver corr when the op was
 * launched through the driver). An entry collects the CUPTI API record, the
 * GPU record and, through the CUSTOM2 external correlation record, the hook
 * record (thread, stream handle, NVTX range, stack). It is folded into the
 * fold line (gp_fold_arrive) as soon as API + GPU are present and the hook is
 * either present or was never announced (no external correlation for that
 * corr). The kernels of one graph launch share its corr: while they wait for
 * the launch's API record or hook, earlier ones wait in a bounded stash
 * beside the entry (GP_STASH_MAX ops), and all join when it arrives. Hooks of
 * launches made during stream capture (GP_GRAPH_CAPTURED names their op id)
 * never meet an op and are counted apart, not as unjoined. Entries left at
 * the end are folded as "no API record" / counted as unjoined; entries older
 * than evict_after_ns of trace time are given up the same way, so memory is
 * bounded by the join lag, not the trace length.
 *
 * Without an external correlation, a hook is the one of the same thread
 * whose interval contains the CUPTI API record (both on CLOCK_MONOTONIC_RAW).
 * In a trace whose hooks pushed none per call (header "cupti" other than
 * full: gp_join.nested) an API record whose hook is not here yet waits for
 * it in its thread's wait list while that hook may still come: the thread
 * has op hooks not yet read (pass 1 counted them) and no top-level hook of
 * the thread starting after the call has been read (a thread's hooks are
 * written in the order they return, so a later top-level one means every
 * hook around the call is already here). Each hook read retries its
 * thread's waiting entries. A hook's stack reference is the record after
 * it, so the core finishes a hook's joins (gp_join_hook_done, the waiting
 * entries) only once that next record is read: an op the hook completes,
 * its CUPTI records read before it, folds with the hook's stack (a blocking
 * copy's wait keeps its call site).
 *
 * Called by the core (analysis.c) on the report thread, in pass 2 and at
 * finish. Invariant: every op is folded exactly once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_int.h"

void gp_join_init(struct gp_join *j)
{
	j->pend_free = GP_NONE32;
	j->hook_free = GP_NONE32;
	j->stash_free = GP_NONE32;
}

static struct gp_pending *gp_join_pend_get(struct gp_an *an, uint32_t corr, int create)
{
	uint64_t *v = gp_dmap_get(&an->join.pend_by_corr, corr);
	if (v)
		return &an->join.pend[*v];
	if (!create)
		return NULL;
	uint32_t idx;
	if (GP_AN_SLOT(an->join.pend, an->join.npend, an->join.cappend, an->join.pend_free, idx))
		return gp_an_fail(an, -ENOMEM), NULL;
	struct gp_pending *p = &an->join.pend[idx];
	memset(p, 0, sizeof *p);
	p->corr = corr;
	p->api_nvtx = GP_NONE32;
	p->name = 0;
	p->stash_head = p->stash_tail = GP_NONE32;
	if (gp_dmap_put(&an->join.pend_by_corr, corr, idx))
		return gp_an_fail(an, -ENOMEM), NULL;
	return p;
}

static void gp_join_pend_drop(struct gp_an *an, struct gp_pending *p)
{
	uint32_t idx = (uint32_t)(p - an->join.pend);
	while (p->stash_head != GP_NONE32) { /* none left after an emit; defensive */
		uint32_t k = p->stash_head;
		p->stash_head = an->join.stash[k].next;
		an->join.stash[k].next = an->join.stash_free;
		an->join.stash_free = k;
		an->join.nstash--;
	}
	p->stash_tail = GP_NONE32;
	gp_dmap_del(&an->join.pend_by_corr, p->corr);
	p->next_free = an->join.pend_free;
	an->join.pend_free = idx;
}

static int gp_join_hookq_alive(const struct gp_an *an, const struct gp_hookq_ent *e)
{
	uint64_t *v = gp_dmap_get(&an->join.hook_by_op, e->op);
	return v && *v == e->idx;
}

static void gp_join_hookq_trim(const struct gp_an *an, struct gp_hookq *q)
{
	while (q->n && !gp_join_hookq_alive(an, &q->e[q->head])) {
		q->head++;
		q->n--;
	}
	if (!q->n)
		q->head = 0;
}

/* The per-thread hook queue of tid, created when `create` (NULL on ENOMEM
 * or when absent). The array may move when one is created. */
static struct gp_hookq *gp_join_thread(struct gp_an *an, uint32_t tid, int create)
{
	uint64_t *v = gp_map_get(&an->join.hq_by_tid, tid);
	if (v)
		return &an->join.hq[*v];
	if (!create)
		return NULL;
	if (GROW(an->join.hq, an->join.nhq, an->join.caphq))
		return gp_an_fail(an, -ENOMEM), NULL;
	struct gp_hookq *q = &an->join.hq[an->join.nhq];
	memset(q, 0, sizeof *q);
	q->tid = tid;
	gp_an_fail(an, gp_map_put(&an->join.hq_by_tid, tid, an->join.nhq));
	an->join.nhq++;
	return q;
}

static void gp_join_hookq_push(struct gp_an *an, const struct gp_hook *h, uint32_t idx)
{
	struct gp_hookq *q = gp_join_thread(an, h->tid, 1);
	if (!q)
		return;
	q->seen++;
	gp_join_hookq_trim(an, q);
	if (q->head > 0 && q->head + q->n == q->cap) {
		memmove(q->e, q->e + q->head, q->n * sizeof *q->e);
		q->head = 0;
	}
	if (gp_an_grow((void **)&q->e, &q->cap, q->head + q->n + 1, sizeof *q->e))
		return gp_an_fail(an, -ENOMEM);
	size_t i = q->n;
	while (i > 0 && q->e[q->head + i - 1].start > h->start) {
		q->e[q->head + i] = q->e[q->head + i - 1];
		i--;
	}
	q->e[q->head + i] = (struct gp_hookq_ent){ h->start, h->start + h->dur, idx, h->op };
	q->n++;
}

/* The pending hook of thread tid whose interval contains [a0, a1], or NULL. */
static struct gp_hook *gp_join_hook_containing(struct gp_an *an, uint32_t tid, uint64_t a0, uint64_t a1)
{
	uint64_t *v = gp_map_get(&an->join.hq_by_tid, tid);
	if (!v)
		return NULL;
	struct gp_hookq *q = &an->join.hq[*v];
	gp_join_hookq_trim(an, q);
	size_t lo = 0, hi = q->n; /* first entry with start > a0 */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (q->e[q->head + mid].start <= a0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i > 0 && lo - i < 4; i--) {
		const struct gp_hookq_ent *e = &q->e[q->head + i - 1];
		if (e->end >= a1 && gp_join_hookq_alive(an, e))
			return &an->join.hooks[e->idx];
	}
	return NULL;
}

/* Nested join: may a hook of thread tid containing a call that ended at
 * `end` still come? (The file comment says why this answer is safe.) */
static int gp_join_hook_may_come(struct gp_an *an, uint32_t tid, uint64_t end)
{
	uint64_t *total = gp_map_get(&an->join.hook_total, tid);
	if (!total)
		return 0;
	const struct gp_hookq *q = gp_join_thread(an, tid, 0);
	if (!q)
		return 1;
	return q->seen < *total && q->top_start <= end;
}

/* Put p in thread tid's wait list (once). */
static void gp_join_wait(struct gp_an *an, uint32_t tid, struct gp_pending *p)
{
	if (p->hook_wait)
		return;
	struct gp_hookq *q = gp_join_thread(an, tid, 1);
	if (!q || gp_an_grow((void **)&q->wait, &q->capwait, q->nwait + 1, sizeof *q->wait))
		return gp_an_fail(an, -ENOMEM);
	q->wait[q->nwait++] = p->corr;
	p->hook_wait = 1;
}

static void gp_join_hook_drop(struct gp_an *an, struct gp_hook *h)
{
	uint32_t idx = (uint32_t)(h - an->join.hooks);
	gp_dmap_del(&an->join.hook_by_op, h->op);
	h->next_free = an->join.hook_free;
	an->join.hook_free = idx;
}

static struct gp_hook *gp_join_hook_get(struct gp_an *an, uint64_t op)
{
	uint64_t *v = gp_dmap_get(&an->join.hook_by_op, op);
	return v ? &an->join.hooks[*v] : NULL;
}

/* Keep the GPU part of p (a graph op still waiting for its cudaGraphLaunch
 * API record) aside, so that the next op of the same launch can wait in p
 * too. Returns 0, or -1 when the stash is full (the caller folds p). */
static int gp_join_stash_push(struct gp_an *an, struct gp_pending *p)
{
	uint32_t k;
	if (an->join.stash_free != GP_NONE32) {
		k = an->join.stash_free;
		an->join.stash_free = an->join.stash[k].next;
	} else {
		if (an->join.nstash >= GP_STASH_MAX || GROW(an->join.stash, an->join.nstash, an->join.capstash))
			return -1;
		k = (uint32_t)an->join.nstash;
	}
	an->join.nstash++;
	an->join.stash[k] = (struct gp_stash){ .gpu_type = p->gpu_type, .device = p->device, .copy_kind = p->copy_kind,
					  .end_missing = p->end_missing, .pageable = p->pageable,
					  .stream = p->stream, .name = p->name,
					  .next = GP_NONE32, .gpu_start = p->gpu_start, .gpu_end = p->gpu_end,
					  .bytes = p->bytes };
	if (p->stash_tail == GP_NONE32)
		p->stash_head = k;
	else
		an->join.stash[p->stash_tail].next = k;
	p->stash_tail = k;
	p->has_gpu = 0;
	return 0;
}

static const char *gp_join_copy_kind_name(unsigned k)
{
	static const char *names[] = { "memcpy", "memcpy HtoD", "memcpy DtoH", "memcpy HtoA",
				       "memcpy AtoH", "memcpy AtoA", "memcpy AtoD", "memcpy DtoA",
				       "memcpy DtoD", "memcpy HtoH", "memcpy PtoP" };
	return k < sizeof names / sizeof names[0] ? names[k] : "memcpy";
}

/* Build and fold the op of a pending entry that has its GPU record. */
static void gp_join_emit(struct gp_an *an, struct gp_pending *p, struct gp_hook *h)
{
	/* a launch CUPTI's range profiler replayed for its counters: its time
	 * is the replay's, in no phase and no aggregate (metrics.md §20) */
	uint64_t hop = h ? h->op : p->has_ext ? p->ext : 0;
	if (hop && an->replayed.count && gp_map_get(&an->replayed, hop)) {
		gp_an_fold_replayed(an, p->has_api ? p->api_start : p->gpu_start,
				    !p->end_missing && p->gpu_end > p->gpu_start ? p->gpu_end - p->gpu_start : 0);
		return;
	}
	struct gp_an_op op;
	memset(&op, 0, sizeof op);
	op.kind = p->gpu_type == GP_REC_KERNEL ? GP_OP_KERNEL
		  : p->gpu_type == GP_REC_MEMCPY ? GP_OP_MEMCPY : GP_OP_MEMSET;
	op.device = p->device;
	op.has_gpu = !p->end_missing;
	op.has_api = p->has_api;
	op.has_hook = h != NULL;
	op.copy_kind = p->copy_kind;
	op.pageable = p->pageable;
	op.stream = p->stream;
	op.corr = p->corr;
	op.bytes = p->bytes;
	op.gpu_start = p->gpu_start;
	op.gpu_end = p->gpu_end;
	uint32_t nvtx = p->api_nvtx, stack = 0;
	op.nvtx_phase = p->api_phase;
	if (h) {
		nvtx = h->nvtx;
		stack = h->stack;
		op.nvtx_phase = h->nvtx_phase;
	} else if (p->hk) {
		nvtx = p->hk_nvtx;
		stack = p->hk_stack;
		op.nvtx_phase = p->hk_phase;
		op.has_hook = 1;
	}
	if (p->has_api) {
		op.api_class = p->api_class;
		op.api_id = p->api_id;
		op.api_domain = p->api_domain;
		op.tid = p->api_tid;
		op.api_start = p->api_start;
		op.api_end = p->api_start + p->api_dur;
		/* an async copy on pageable memory blocked when the call returned
		 * after its own transfer ended (metrics.md §2; the tolerance
		 * absorbs a GPU clock a few µs off the host's) */
		op.blocking = gp_an_is_copy_sync(p->api_class) ||
			      (p->api_class == GP_API_MEMCPY_ASYNC && p->pageable && !p->end_missing &&
			       p->api_start + p->api_dur + GP_CLOCK_TOLERANCE_NS >= p->gpu_end);
		if (!p->api_charged) {
			/* CUPTI's own cost at the call's entry is the profiler's,
			 * not the launch (metrics.md §3); launch_raw keeps it */
			op.cupti_ns = p->api_cupti < p->api_dur ? p->api_cupti : p->api_dur;
			op.launch_raw_ns = p->api_dur;
			if (op.blocking && op.has_gpu) {
				uint64_t ex = p->gpu_end - p->gpu_start;
				op.launch_raw_ns = op.launch_raw_ns > ex ? op.launch_raw_ns - ex : 0;
			}
			op.launch_ns = op.launch_raw_ns > op.cupti_ns ? op.launch_raw_ns - op.cupti_ns : 0;
			if (p->api_domain == GP_REC_DRIVER_API && an->have_runtime)
				an->host_driver_direct += p->api_dur; /* not inside a runtime call */
		}
		if (op.has_gpu)
			op.queue_ns = p->gpu_start > op.api_end ? p->gpu_start - op.api_end : 0;
	} else if (h) {
		op.tid = h->tid;
	} else if (p->hk) {
		op.tid = p->hk_tid;
	}
	if (op.has_gpu)
		op.execute_ns = p->gpu_end - p->gpu_start;
	else
		an->ops_end_missing++;
	uint32_t name_str = GP_NONE32;
	if (op.kind == GP_OP_KERNEL) {
		name_str = gp_an_str(an, p->name);
		op.name = name_str != GP_NONE32 ? gp_an_short(an, name_str) : "(unnamed kernel)";
	} else if (op.kind == GP_OP_MEMCPY) {
		op.name = gp_join_copy_kind_name(p->copy_kind);
	} else {
		op.name = "memset";
	}
	gp_fold_arrive(an, &op, stack, nvtx, name_str);
}

static void gp_join_try_finish(struct gp_an *an, struct gp_pending *p, int final)
{
	if (!p->has_gpu)
		return;
	if (!p->has_api && !final)
		return;
	struct gp_hook *h = p->has_ext ? gp_join_hook_get(an, p->ext) : NULL;
	if (!h && p->has_api && an->have_hooks) {
		/* No ext corr (yet): the hook whose interval contains the call on
		 * the same thread is its hook. CUPTI thread ids are not OS tids
		 * unless the library asked for them (cuptiSetThreadIdType SYSTEM,
		 * nested traces); else the mapping is learned from ext-corr joins. */
		uint64_t *os = gp_map_get(&an->join.tid_os, p->api_tid);
		uint32_t tid = os ? (uint32_t)*os : p->api_tid;
		uint64_t end = p->api_start + p->api_dur;
		h = gp_join_hook_containing(an, tid, p->api_start, end);
		if (!h && an->join.nested && !final && !p->has_ext && !p->hk && !p->api_charged &&
		    gp_join_hook_may_come(an, tid, end)) {
			gp_join_wait(an, tid, p);
			return; /* retried when the thread's next hook is read */
		}
	}
	if (!h && p->has_ext && !final)
		return; /* the hook is announced but not here yet */
	if (h && p->has_api && (p->api_tid != an->join.tid_os_last_cupti || h->tid != an->join.tid_os_last_os)) {
		gp_an_fail(an, gp_map_put(&an->join.tid_os, p->api_tid, h->tid));
		an->join.tid_os_last_cupti = p->api_tid;
		an->join.tid_os_last_os = h->tid;
	}
	while (p->stash_head != GP_NONE32) {
		/* earlier ops of the same graph launch, in arrival order; the
		 * launch's host time goes to the first op emitted */
		uint32_t k = p->stash_head;
		struct gp_stash *st = &an->join.stash[k];
		struct gp_pending q = *p;
		q.gpu_type = st->gpu_type;
		q.device = st->device;
		q.copy_kind = st->copy_kind;
		q.end_missing = st->end_missing;
		q.pageable = st->pageable;
		q.stream = st->stream;
		q.name = st->name;
		q.gpu_start = st->gpu_start;
		q.gpu_end = st->gpu_end;
		q.bytes = st->bytes;
		p->stash_head = st->next;
		st->next = an->join.stash_free;
		an->join.stash_free = k;
		an->join.nstash--;
		gp_join_emit(an, &q, h);
		if (p->has_api)
			p->api_charged = 1;
	}
	p->stash_tail = GP_NONE32;
	gp_join_emit(an, p, h);
	if (h) {
		gp_dmap_del(&an->join.ext_rev, h->op);
		gp_join_hook_drop(an, h);
	} else if (p->has_ext) {
		gp_dmap_del(&an->join.ext_rev, p->ext);
	}
	if (p->has_api && p->api_class == GP_API_GRAPH_LAUNCH) {
		/* later kernels of the same graph launch join with launch 0,
		 * in the context of the launch's hook */
		if (h) {
			p->hk = 1;
			p->hk_tid = h->tid;
			p->hk_nvtx = h->nvtx;
			p->hk_stack = h->stack;
			p->hk_phase = h->nvtx_phase;
		}
		p->api_charged = 1;
		p->has_gpu = 0;
		p->has_ext = 0;
		return;
	}
	gp_join_pend_drop(an, p);
}

/* Pass 1: one more op hook of its thread in the trace. */
void gp_join_count_hook(struct gp_an *an, const struct gp_rec_api *a)
{
	if ((a->class_flags & GP_APIF_NESTED) || !gp_an_is_op_class(GP_API_CLASS(a->class_flags)))
		return;
	uint64_t *n = gp_map_get(&an->join.hook_total, a->tid);
	if (n)
		(*n)++;
	else
		gp_an_fail(an, gp_map_put(&an->join.hook_total, a->tid, 1));
}

/* Pass 2, every top-level hook (after gp_join_hook for an op hook): its
 * thread's waiting API records try again, in the order they came. */
void gp_join_hook_seen(struct gp_an *an, const struct gp_rec_api *a)
{
	if (!an->join.nested)
		return;
	struct gp_hookq *q = gp_join_thread(an, a->tid, 0);
	if (!q)
		return;
	if (a->start > q->top_start)
		q->top_start = a->start;
	if (!q->nwait)
		return;
	size_t qi = (size_t)(q - an->join.hq), n = q->nwait, cap = q->capwait;
	uint32_t *w = q->wait; /* swapped out: a retry may wait again */
	q->wait = NULL;
	q->nwait = q->capwait = 0;
	for (size_t i = 0; i < n; i++) {
		struct gp_pending *p = gp_join_pend_get(an, w[i], 0);
		if (!p || !p->hook_wait)
			continue;
		p->hook_wait = 0;
		gp_join_try_finish(an, p, 0);
	}
	q = &an->join.hq[qi];
	if (!q->wait) {
		q->wait = w;
		q->capwait = cap;
	} else {
		free(w);
	}
}

/* Was hook op `op` a launch made during stream capture? */
static int gp_join_is_captured(const struct gp_an *an, uint64_t op)
{
	return an->join.captured.count && gp_map_get(&an->join.captured, op);
}

/* A lone API record whose hook was such a launch: named by the external
 * correlation, else (nested join) the hook containing the call. */
static int gp_join_pend_captured(struct gp_an *an, const struct gp_pending *p)
{
	if (p->has_ext)
		return gp_join_is_captured(an, p->ext);
	if (!an->join.nested || !p->has_api || !an->join.captured.count)
		return 0;
	uint64_t *os = gp_map_get(&an->join.tid_os, p->api_tid);
	const struct gp_hook *h = gp_join_hook_containing(an, os ? (uint32_t)*os : p->api_tid, p->api_start,
							  p->api_start + p->api_dur);
	return h && gp_join_is_captured(an, h->op);
}

static int gp_join_pend_live(const struct gp_an *an, const struct gp_pending *p)
{
	uint64_t *v = gp_dmap_get(&an->join.pend_by_corr, p->corr);
	return v && &an->join.pend[*v] == p;
}

/* Give up join entries older than evict_after_ns before the newest time seen:
 * GPU ops are folded as they are, lone API records and hooks are counted. */
void gp_join_evict(struct gp_an *an)
{
	if (an->join.max_ts < an->cfg.evict_after_ns)
		return;
	uint64_t limit = an->join.max_ts - an->cfg.evict_after_ns;
	for (size_t i = 0; i < an->join.npend; i++) {
		struct gp_pending *p = &an->join.pend[i];
		if (!gp_join_pend_live(an, p) || p->ts >= limit)
			continue;
		if (p->has_gpu) {
			an->evicted++;
			gp_join_try_finish(an, p, 1);
			if (gp_join_pend_live(an, p))
				gp_join_pend_drop(an, p);
		} else {
			if (!gp_join_pend_captured(an, p))
				an->evicted++;
			if (p->has_api && !p->api_charged && !gp_join_pend_captured(an, p)) {
				an->api_unjoined++;
				an->api_unjoined_cls[p->api_class & 0x0f]++;
			}
			if (p->has_ext)
				gp_dmap_del(&an->join.ext_rev, p->ext);
			gp_join_pend_drop(an, p);
		}
	}
	for (size_t i = 0; i < an->join.nhq; i++) { /* wait lists: only entries still waiting */
		struct gp_hookq *q = &an->join.hq[i];
		size_t k = 0;
		for (size_t j = 0; j < q->nwait; j++) {
			struct gp_pending *p = gp_join_pend_get(an, q->wait[j], 0);
			if (p && p->hook_wait)
				q->wait[k++] = q->wait[j];
		}
		q->nwait = k;
	}
	for (size_t i = 0; i < an->join.nhooks; i++) {
		struct gp_hook *h = &an->join.hooks[i];
		uint64_t *v = gp_dmap_get(&an->join.hook_by_op, h->op);
		if (!v || &an->join.hooks[*v] != h || h->start >= limit)
			continue;
		if (gp_join_is_captured(an, h->op)) {
			an->launches_captured++;
		} else {
			an->evicted++;
			an->hooks_unjoined++;
			an->hooks_unjoined_cls[h->api_class & 0x0f]++;
		}
		gp_dmap_del(&an->join.ext_rev, h->op);
		gp_join_hook_drop(an, h);
	}
}

/* A hooked launch or copy (pass 2, not hook-only): a pending hook, joined
 * with its op through the external correlation or the thread's interval. */
void gp_join_hook(struct gp_an *an, const struct gp_rec_api *a, unsigned c)
{
	uint32_t idx;
	if (GP_AN_SLOT(an->join.hooks, an->join.nhooks, an->join.caphooks, an->join.hook_free, idx))
		return gp_an_fail(an, -ENOMEM);
	struct gp_hook *h = &an->join.hooks[idx];
	*h = (struct gp_hook){ .api_class = (uint8_t)c, .api_id = a->api_id, .tid = a->tid,
			       .stream = a->stream, .nvtx = gp_an_nvtx_top(an, a->tid),
			       .nvtx_phase = gp_an_nvtx_phase(an, a->tid),
			       .op = a->corr, .start = a->start, .dur = gp_api_dur_ns(a) };
	gp_an_fail(an, gp_dmap_put(&an->join.hook_by_op, a->corr, idx));
	gp_join_hookq_push(an, h, idx);
}

void gp_join_hook_done(struct gp_an *an, const struct gp_rec_api *a)
{
	uint64_t *corr = gp_dmap_get(&an->join.ext_rev, a->corr);
	if (corr) {
		struct gp_pending *p = gp_join_pend_get(an, (uint32_t)*corr, 0);
		if (p)
			gp_join_try_finish(an, p, 0);
	}
}

/* A launch made during stream capture: its hook and API record will never
 * meet a GPU op of their own. */
void gp_join_captured(struct gp_an *an, uint32_t op)
{
	gp_an_fail(an, gp_map_put(&an->join.captured, op, 1));
}

/* The stack of a pending hook. */
void gp_join_stack_ref(struct gp_an *an, uint32_t op, uint32_t stack)
{
	struct gp_hook *h = gp_join_hook_get(an, op);
	if (h)
		h->stack = stack;
}

/* An external correlation (CUSTOM2): the hook op id of a join key. */
void gp_join_extcorr(struct gp_an *an, const struct gp_rec_extcorr *e)
{
	struct gp_pending *p = gp_join_pend_get(an, e->corr, 1);
	if (!p)
		return;
	p->has_ext = 1;
	p->ext = e->ext_id;
	gp_an_fail(an, gp_dmap_put(&an->join.ext_rev, p->ext, p->corr));
	gp_join_try_finish(an, p, 0);
}

/* A CUPTI runtime or driver API record (pass 2); cupti: CUPTI's own cost
 * at the call's entry (cupti_cost.c). */
void gp_join_api(struct gp_an *an, const struct gp_rec_api *a, uint64_t cupti)
{
	unsigned c = GP_API_CLASS(a->class_flags);
	uint64_t end = a->start + gp_api_dur_ns(a);
	if (end > an->join.max_ts)
		an->join.max_ts = end;
	if (!gp_an_is_op_class(c) || (a->class_flags & GP_APIF_ERROR)) {
		/* no op will join this call: drop an announced ext corr */
		struct gp_pending *p = gp_join_pend_get(an, a->corr, 0);
		if (p && !p->has_gpu && !p->has_api) {
			if (p->has_ext && (gp_an_is_sync_class(c) || gp_an_is_implicit_sync(c)))
				gp_sync_early_ext(an, p->ext, a->corr); /* its hook comes later */
			if (p->has_ext)
				gp_dmap_del(&an->join.ext_rev, p->ext);
			gp_join_pend_drop(an, p);
		}
		return;
	}
	/* A driver call nested in a runtime launch has its own corr that no
	 * op carries. CUPTI writes it just before the runtime record of the
	 * same thread, so remember each thread's last lone driver entry and
	 * drop it when a runtime call on that thread contains it. */
	if (a->type == GP_REC_RUNTIME_API) {
		uint64_t *dv = gp_map_get(&an->join.last_driver, a->tid);
		if (dv) {
			struct gp_pending *d = gp_join_pend_get(an, (uint32_t)*dv, 0);
			if (d && d->has_api && !d->has_gpu && d->api_domain == GP_REC_DRIVER_API &&
			    d->api_start >= a->start && d->api_start + d->api_dur <= end) {
				uint64_t *rv = d->has_ext ? gp_dmap_get(&an->join.ext_rev, d->ext) : NULL;
				if (rv && *rv == d->corr)
					gp_dmap_del(&an->join.ext_rev, d->ext);
				gp_join_pend_drop(an, d);
			}
			gp_map_del(&an->join.last_driver, a->tid);
		}
	}
	struct gp_pending *p = gp_join_pend_get(an, a->corr, 1);
	if (!p)
		return;
	if (a->type == GP_REC_DRIVER_API && !p->has_gpu)
		gp_an_fail(an, gp_map_put(&an->join.last_driver, a->tid, a->corr));
	p->has_api = 1;
	p->api_class = (uint8_t)c;
	p->api_domain = a->type;
	p->api_id = a->api_id;
	p->api_tid = a->tid;
	p->api_start = a->start;
	p->api_dur = gp_api_dur_ns(a);
	p->api_cupti = cupti;
	p->api_nvtx = gp_an_nvtx_top(an, a->tid);
	p->api_phase = gp_an_nvtx_phase(an, a->tid);
	p->ts = end;
	if (p->has_ext && (gp_an_is_copy_sync(c) || c == GP_API_MEMCPY_ASYNC) &&
	    (a->type == GP_REC_RUNTIME_API || !an->have_runtime) && !gp_join_hook_get(an, p->ext))
		gp_sync_early_ext(an, p->ext, a->corr); /* a blocking copy whose hook,
							   and its stack, come later */
	gp_join_try_finish(an, p, 0);
}

/* CUPTI's INSTRUMENTATION record of call corr came after the call's API
 * record (cupti_cost.c): the op takes it while it has not been folded.
 * Returns 1 when taken. */
int gp_join_cupti_late(struct gp_an *an, uint32_t corr, uint64_t ns)
{
	struct gp_pending *p = gp_join_pend_get(an, corr, 0);
	if (!p || !p->has_api || p->api_charged)
		return 0;
	p->api_cupti += ns;
	return 1;
}

/* A GPU op record (pass 2), decoded by the core (gp_an_decode_gpu). */
void gp_join_gpu(struct gp_an *an, uint8_t type, const struct gp_an_gpu *v)
{
	if (v->end > an->join.max_ts)
		an->join.max_ts = v->end;
	struct gp_pending *p = gp_join_pend_get(an, v->key, 1);
	if (!p)
		return;
	if (p->has_gpu && !(v->graph && p->graph && !gp_join_stash_push(an, p))) {
		/* a second op under the same key (a driver corr reused,
		 * or more graph ops waiting for their API record or hook
		 * than the stash holds): fold the earlier one first */
		gp_join_try_finish(an, p, 1);
		p = gp_join_pend_get(an, v->key, 1);
		if (!p)
			return;
	}
	p->graph = v->graph;
	p->has_gpu = 1;
	p->gpu_type = type;
	p->device = v->device;
	p->stream = v->stream;
	p->gpu_start = v->start;
	p->gpu_end = v->end;
	p->name = v->name;
	p->copy_kind = v->copy_kind;
	p->pageable = v->pageable;
	p->bytes = v->bytes;
	/* a kernel that ends before it starts has no usable end either */
	p->end_missing = v->end_missing || (type == GP_REC_KERNEL && v->end < v->start);
	if (v->end > p->ts)
		p->ts = v->end;
	gp_join_try_finish(an, p, 0);
}

/* Finish: fold what has its GPU record, count what never joined. */
void gp_join_flush(struct gp_an *an)
{
	for (size_t i = 0; i < an->join.npend; i++) {
		struct gp_pending *p = &an->join.pend[i];
		if (!gp_join_pend_live(an, p))
			continue;
		if (p->has_gpu) {
			gp_join_try_finish(an, p, 1);
		} else {
			if (p->has_api && !p->api_charged && !gp_join_pend_captured(an, p)) {
				an->api_unjoined++;
				an->api_unjoined_cls[p->api_class & 0x0f]++;
			}
			gp_join_pend_drop(an, p);
		}
	}
	for (size_t i = 0; i < an->join.nhooks; i++) {
		const struct gp_hook *h = &an->join.hooks[i];
		uint64_t *v = gp_dmap_get(&an->join.hook_by_op, h->op);
		if (!v || &an->join.hooks[*v] != h)
			continue;
		if (gp_join_is_captured(an, h->op)) {
			an->launches_captured++;
		} else {
			an->hooks_unjoined++;
			an->hooks_unjoined_cls[h->api_class & 0x0f]++;
		}
	}
}

uint32_t gp_join_os_tid(const struct gp_an *an, uint32_t cupti_tid)
{
	uint64_t *v = gp_map_get(&an->join.tid_os, cupti_tid);
	return v ? (uint32_t)*v : cupti_tid;
}

void gp_join_free(struct gp_join *j)
{
	free(j->pend);
	gp_dmap_free(&j->pend_by_corr);
	free(j->hooks);
	gp_dmap_free(&j->hook_by_op);
	gp_dmap_free(&j->ext_rev);
	free(j->stash);
	gp_map_free(&j->captured);
	gp_map_free(&j->last_driver);
	for (size_t i = 0; i < j->nhq; i++) {
		free(j->hq[i].e);
		free(j->hq[i].wait);
	}
	free(j->hq);
	gp_map_free(&j->hq_by_tid);
	gp_map_free(&j->tid_os);
	gp_map_free(&j->hook_total);
}
