/*
 * analysis.c — join, phase attribution and aggregation (see analysis.h for
 * the two-pass protocol and docs/metrics.md for every definition).
 *
 * Called by the report front end (main.c) and the tests, on one thread.
 *
 * Join (pass 2): one pending entry per join key (the runtime correlation id:
 * API record corr = kernel/memset corr = memcpy rt_corr; a driver corr when
 * the op was launched through the driver). An entry collects the CUPTI API
 * record, the GPU record and, through the CUSTOM2 external correlation record,
 * the hook record (thread, stream handle, NVTX range, stack). It is folded
 * into the aggregates as soon as API + GPU are present and the hook is either
 * present or was never announced (no external correlation for that corr).
 * The kernels of one graph launch share its corr: while they wait for the
 * launch's API record or hook, earlier ones wait in a bounded stash beside
 * the entry (GP_STASH_MAX ops), and all join when it arrives. Hooks of
 * launches made during stream capture (GP_GRAPH_CAPTURED names their op id)
 * never meet an op and are counted apart, not as unjoined.
 * Entries left at the end are folded as "no API record" / counted as
 * unjoined; entries older than evict_after_ns of trace time are given up the
 * same way, so memory is bounded by the join lag, not the trace length.
 *
 * Sync attribution: blocking intervals are known after pass 1 (sorted per
 * thread); each op folded in pass 2 offers itself as a candidate to the (at
 * most one per thread) interval containing its gpu_end, and each interval
 * keeps the last-finishing candidate. Charging happens at finish.
 *
 * Invariants: every op is folded exactly once; every wait is charged at most
 * once; group and iteration sums are sums of the folded ops' phases.
 */
#include "analysis.h"
#include "map.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GP_EXT_KIND_CUSTOM2 5u /* CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 */
#define GP_NONE32 UINT32_MAX

/* --- small growable arrays ------------------------------------------------ */

static int gp_an_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	void *np = realloc(*p, ncap * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}
#define GROW(arr, n, cap) gp_an_grow((void **)&(arr), &(cap), (n) + 1, sizeof *(arr))

/* --- state ------------------------------------------------------------------ */

struct gp_str {
	char *text;
	char *shortname; /* demangled short form, computed on demand */
	char *longname;  /* demangled full form                      */
	uint32_t len;
};

/* A blocking interval being attributed (a pass-2 slot; see the header). */
struct gp_wait {
	uint8_t kind;        /* enum gp_api_class                                 */
	uint8_t has_api, active, has_own, has_best;
	uint32_t tid, corr, stream, stack;
	uint64_t w0, w1;     /* w1: call end (explicit) or upper bound (copies)   */
	uint64_t seq;        /* op sequence number when it became active          */
	uint64_t own_gpu_start, own_launch;
	int64_t own_iter;
	uint32_t own_group;
	uint64_t best_e;
	uint32_t best_group, best_corr;
	int64_t best_iter;
	uint32_t next_free;
};

/* Recently folded GPU ops, sorted by gpu_end (delay line of GP_RECENT). */
#define GP_RECENT 65536u
#define GP_WAIT_HORIZON 65536u /* ops folded after a wait became active */
struct gp_recent {
	uint64_t e, api_end, gpu_start, launch;
	uint32_t stream, group, corr;
	int32_t iter;
	uint8_t has_api, copy_sync;
};

/* Pending launch hooks of one thread, in start order: a CUPTI API record
 * inside a hook's interval on the same thread is that hook's call. */
struct gp_hookq_ent {
	uint64_t start, end;
	uint32_t idx, op;    /* hook slot and its op id (stale when they differ) */
};
struct gp_hookq {
	uint32_t tid;
	struct gp_hookq_ent *e;
	size_t head, n, cap;
};

/* Active waits of one thread, in w0 order (CUPTI delivers a thread's
 * records in order). */
struct gp_tidq {
	uint32_t tid;
	uint32_t *idx;
	size_t head, n, cap, cache;
};

struct gp_pending {
	uint8_t has_api, has_gpu, has_ext, api_charged;
	uint8_t api_class, api_domain, gpu_type, device;
	uint8_t copy_kind, end_missing, graph, hk;
	uint32_t hk_tid, hk_nvtx, hk_stack; /* hk: the hook of a graph launch,
	                                        kept for its later kernels */
	uint16_t api_id;
	uint32_t api_tid, api_nvtx, stream, corr, name;
	uint32_t stash_head, stash_tail; /* earlier graph ops of this key (GP_NONE32) */
	uint64_t api_start, api_dur;
	uint64_t gpu_start, gpu_end, bytes;
	uint64_t ext;
	uint64_t ts;         /* latest time seen, for eviction                   */
	uint32_t next_free;
};

/* A GPU op of a graph launch that arrived before its API record while an
 * earlier op of the same launch was waiting too (gp_pending.stash_*). */
#define GP_STASH_MAX 65536u
struct gp_stash {
	uint8_t gpu_type, device, copy_kind, end_missing;
	uint32_t stream, name, next;
	uint64_t gpu_start, gpu_end, bytes;
};

struct gp_hook {
	uint8_t api_class;
	uint16_t api_id;
	uint32_t tid, stream, nvtx, stack, op;
	uint64_t start, dur;
	uint32_t next_free;
};

struct gp_group {
	uint64_t key;
	uint32_t name_str;   /* canonical string index, or GP_NONE32             */
	char *name;          /* synthetic name when no string                    */
	uint64_t count, launch, queue, exec, sync, no_api, no_gpu, sync_calls;
	struct gp_hist hist;
};

struct gp_iterx {
	int64_t iter;
	uint64_t start, end, ops, launch, queue, exec, sync;
};

struct gp_nvtx_stack {
	uint32_t *names;
	size_t n, cap;
};

struct gp_an {
	struct gp_an_config cfg;
	int err;
	/* strings */
	struct gp_str *strs;
	size_t nstrs, capstrs;
	struct gp_map str_by_id;   /* string id -> canonical index            */
	struct gp_map str_by_hash; /* text hash -> canonical index            */
	struct gp_map api_names;   /* domain<<16 | api_id -> string id        */
	struct gp_map threads;     /* tid -> string id                        */
	struct {
		int present;
		uint32_t name, ccmaj, ccmin, sms;
	} dev[256];
	/* stacks and symbols */
	uint64_t *pcs;
	size_t npcs, cappcs;
	struct gp_map stacks;      /* stack id -> offset<<16 | depth          */
	struct gp_map symbols;     /* pc -> string id                         */
	/* pass-1 facts */
	uint64_t rec_count[GP_REC_TYPE_COUNT];
	uint64_t records;
	uint64_t t_first, t_last, win_start, win_stop;
	int status[8];
	struct gp_map drops;       /* source<<32 | tid -> cumulative          */
	double host_busy_w, host_proc_w, host_w, host_max;
	uint64_t host_runtime_ns, host_driver_ns, host_hook_ns, host_driver_direct;
	struct { int64_t iter; uint64_t ts; } *marks;
	size_t nmarks, capmarks;
	struct gp_map tid_os;        /* CUPTI thread id -> OS tid (learned)    */
	/* prepared */
	int hook_only, have_runtime, have_hooks;
	struct gp_iterx *iters;
	size_t niters;
	size_t iter_cache;
	/* pass 2: waits */
	struct gp_wait *waits;
	size_t nwaits, capwaits;
	uint32_t wait_free;
	struct gp_dmap wait_by_corr;  /* corr -> wait slot                       */
	struct gp_tidq *tq;
	size_t ntq, captq;
	struct gp_map tq_by_tid;
	struct gp_recent *recent;    /* ring, sorted by e from recent_head      */
	size_t recent_head, nrecent;
	uint64_t op_seq;
	struct gp_map shook;         /* sync hook op id -> stack id (bounded)    */
	uint32_t *shook_fifo;
	size_t shook_head, nshook;
	uint8_t *shook_seen;         /* per op id & GP_SHOOK_SEEN_MASK: FIFO entries
	                                (saturating): 0 = not in shook, so most
	                                ext corr records skip the map lookup   */
	struct gp_map cs_map;        /* call-site string -> index in cs         */
	struct gp_rep_callsite *cs;
	size_t ncs, capcs;
	uint64_t sync_total, sync_unattr_ns, sync_unattr_calls, waits_late;
	uint64_t sync_calls[GP_API_CLASS_COUNT], sync_kind_ns[GP_API_CLASS_COUNT];
	/* pass 2: ops */
	struct gp_pending *pend;
	size_t npend, cappend;
	uint32_t pend_free;
	struct gp_dmap pend_by_corr;
	struct gp_hook *hooks;
	size_t nhooks, caphooks;
	uint32_t hook_free;
	struct gp_dmap hook_by_op;
	struct gp_dmap ext_rev;       /* hook op id -> corr waiting for it      */
	struct gp_stash *stash;      /* graph ops waiting with an earlier one  */
	size_t nstash, capstash;
	uint32_t stash_free;
	struct gp_map captured;      /* hook op ids of launches made during
	                                stream capture (GP_GRAPH_CAPTURED)     */
	struct gp_map last_driver;   /* tid -> corr of its last lone driver call */
	struct gp_hookq *hq;         /* pending op hooks per thread, by start  */
	size_t nhq, caphq;
	struct gp_map hq_by_tid;
	uint32_t tid_os_last_cupti, tid_os_last_os; /* last tid_os put        */
	uint64_t group_last_key;     /* last group lookup                      */
	uint32_t group_last;
	struct gp_map nvtx;          /* tid -> index into nvtx_stacks          */
	struct gp_nvtx_stack *nvtx_stacks;
	size_t nnvtx, capnvtx;
	struct gp_group *groups;
	size_t ngroups, capgroups;
	struct gp_map group_by_key;
	struct gp_sweep busy[256];
	uint8_t busy_used[256];
	struct gp_sweep covered;
	uint64_t scan2_n, max_ts2;
	/* totals */
	uint64_t ops, ops_joined, ops_no_api, ops_no_gpu, ops_end_missing;
	uint64_t hooks_unjoined, api_unjoined, evicted, launches_captured;
	uint64_t launch, queue, exec, busy_sum;
};

static void gp_an_fail(struct gp_an *an, int rc)
{
	/* -EINVAL is gp_map_put refusing the reserved key UINT64_MAX: only a
	 * corrupt file holds such an id or pc; that record is left out, the
	 * rest is analysed (was reported as "out of memory"). */
	if (rc == -EINVAL)
		return;
	if (rc && !an->err)
		an->err = rc;
}

struct gp_an *gp_an_new(const struct gp_an_config *cfg)
{
	struct gp_an *an = calloc(1, sizeof *an);
	if (!an)
		return NULL;
	if (cfg)
		an->cfg = *cfg;
	if (!an->cfg.evict_after_ns)
		an->cfg.evict_after_ns = 120ULL * 1000000000ULL;
	an->t_first = UINT64_MAX;
	an->group_last = GP_NONE32;
	an->pend_free = GP_NONE32;
	an->wait_free = GP_NONE32;
	an->hook_free = GP_NONE32;
	an->stash_free = GP_NONE32;
	return an;
}

/* --- strings ----------------------------------------------------------------- */

static uint64_t gp_an_texthash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h == GP_MAP_EMPTY ? 0 : h;
}

static uint64_t gp_an_probe_next(uint64_t probe)
{
	probe = probe * 0x9e3779b97f4a7c15ULL + 1u;
	return probe == GP_MAP_EMPTY ? 0 : probe;
}

/* Intern text as a canonical string; returns its index or GP_NONE32. Equal
 * texts get one index (hash collisions probe onward). */
static uint32_t gp_an_canon(struct gp_an *an, const char *text, size_t len)
{
	uint64_t probe = gp_an_texthash(text, len);
	uint64_t *v;
	while ((v = gp_map_get(&an->str_by_hash, probe))) {
		struct gp_str *s = &an->strs[*v];
		if (s->len == len && !memcmp(s->text, text, len))
			return (uint32_t)*v;
		probe = gp_an_probe_next(probe);
	}
	if (GROW(an->strs, an->nstrs, an->capstrs))
		return gp_an_fail(an, -ENOMEM), GP_NONE32;
	char *copy = malloc(len + 1);
	if (!copy)
		return gp_an_fail(an, -ENOMEM), GP_NONE32;
	memcpy(copy, text, len);
	copy[len] = 0;
	uint32_t idx = (uint32_t)an->nstrs++;
	an->strs[idx] = (struct gp_str){ .text = copy, .len = (uint32_t)len };
	gp_an_fail(an, gp_map_put(&an->str_by_hash, probe, idx));
	return idx;
}

static uint32_t gp_an_str(const struct gp_an *an, uint32_t id)
{
	uint64_t *v = id ? gp_map_get(&an->str_by_id, id) : NULL;
	return v ? (uint32_t)*v : GP_NONE32;
}

const char *gp_an_string(const struct gp_an *an, uint32_t id)
{
	uint32_t c = gp_an_str(an, id);
	return c == GP_NONE32 ? NULL : an->strs[c].text;
}

const char *gp_an_api_name(const struct gp_an *an, uint32_t domain, uint32_t api_id)
{
	uint64_t *v = gp_map_get(&an->api_names, ((uint64_t)domain << 16) | api_id);
	return v ? gp_an_string(an, (uint32_t)*v) : NULL;
}

extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/* Short form of a demangled name: drop the argument list and the return type
 * ("void ns::k<int>(float*, int)" -> "ns::k<int>"). */
static char *gp_an_shorten(const char *full)
{
	size_t n = strlen(full), cut = n;
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		if (full[i] == '<')
			depth++;
		else if (full[i] == '>' && depth > 0)
			depth--;
		else if (full[i] == '(' && depth == 0 && i > 0) {
			cut = i;
			break;
		}
	}
	size_t begin = 0;
	depth = 0;
	for (size_t i = 0; i < cut; i++) {
		if (full[i] == '<')
			depth++;
		else if (full[i] == '>' && depth > 0)
			depth--;
		else if (full[i] == ' ' && depth == 0)
			begin = i + 1;
	}
	return strndup(full + begin, cut - begin);
}

static void gp_an_demangle(struct gp_an *an, uint32_t c)
{
	struct gp_str *s = &an->strs[c];
	if (s->shortname)
		return;
	int status = -1;
	char *d = NULL;
	if (s->len > 2 && s->text[0] == '_' && s->text[1] == 'Z')
		d = __cxa_demangle(s->text, NULL, NULL, &status);
	if (d && status == 0) {
		s->longname = d;
		s->shortname = gp_an_shorten(d);
	} else {
		free(d);
		s->longname = strdup(s->text);
		s->shortname = strdup(s->text);
	}
	if (!s->longname || !s->shortname)
		gp_an_fail(an, -ENOMEM);
}

static const char *gp_an_short(struct gp_an *an, uint32_t c)
{
	if (c == GP_NONE32)
		return NULL;
	gp_an_demangle(an, c);
	return an->strs[c].shortname ? an->strs[c].shortname : an->strs[c].text;
}

/* --- pass 1 ------------------------------------------------------------------ */

static void gp_an_seen(struct gp_an *an, uint64_t a, uint64_t b)
{
	if (a && a < an->t_first)
		an->t_first = a;
	if (b > an->t_last)
		an->t_last = b;
}

static int gp_an_is_sync_class(unsigned c)
{
	return c == GP_API_SYNC_DEVICE || c == GP_API_SYNC_STREAM || c == GP_API_SYNC_EVENT;
}

static int gp_an_is_copy_sync(unsigned c)
{
	return c == GP_API_MEMCPY_SYNC || c == GP_API_MEMSET_SYNC;
}

static int gp_an_is_op_class(unsigned c)
{
	return c == GP_API_LAUNCH || c == GP_API_MEMCPY_SYNC || c == GP_API_MEMCPY_ASYNC ||
	       c == GP_API_MEMSET_SYNC || c == GP_API_MEMSET_ASYNC || c == GP_API_GRAPH_LAUNCH;
}

static void gp_an_scan1_api(struct gp_an *an, const struct gp_rec_api *a)
{
	uint64_t dur = gp_api_dur_ns(a);
	gp_an_seen(an, a->start, a->start + dur);
	if (a->type == GP_REC_HOOK_API) {
		if (!(a->class_flags & GP_APIF_NESTED))
			an->host_hook_ns += dur;
	} else if (a->type == GP_REC_RUNTIME_API) {
		an->host_runtime_ns += dur;
	} else {
		an->host_driver_ns += dur;
	}
}

int gp_an_scan1(struct gp_an *an, const union gp_rec *r, uint32_t nslots)
{
	if (r->type >= GP_REC_TYPE_COUNT)
		return an->err;
	an->rec_count[r->type]++;
	an->records += nslots;
	switch (r->type) {
	case GP_REC_STRING: {
		uint32_t len = r->string.len;
		if ((uint64_t)len > (uint64_t)GP_STRING_INLINE + (uint64_t)(nslots - 1) * GP_REC_SIZE)
			len = GP_STRING_INLINE + (nslots - 1) * GP_REC_SIZE; /* defensive */
		char stackbuf[512], *buf = len < sizeof stackbuf ? stackbuf : malloc(len + 1);
		if (!buf)
			return gp_an_fail(an, -ENOMEM), an->err;
		/* inline bytes, then continuation slots */
		size_t first = len < GP_STRING_INLINE ? len : GP_STRING_INLINE;
		memcpy(buf, r->string.text, first);
		if (len > first)
			memcpy(buf + first, (const char *)(r + 1), len - first);
		uint32_t c = gp_an_canon(an, buf, len);
		if (c != GP_NONE32)
			gp_an_fail(an, gp_map_put(&an->str_by_id, r->string.id, c));
		if (buf != stackbuf)
			free(buf);
		break;
	}
	case GP_REC_API_NAME:
		gp_an_fail(an, gp_map_put(&an->api_names,
					  ((uint64_t)r->api_name.domain << 16) | r->api_name.api_id,
					  r->api_name.name));
		break;
	case GP_REC_THREAD:
		gp_an_fail(an, gp_map_put(&an->threads, r->thread.tid, r->thread.name));
		break;
	case GP_REC_DEVICE:
		an->dev[r->device.device].present = 1;
		an->dev[r->device.device].name = r->device.name;
		an->dev[r->device.device].ccmaj = r->device.cc_major;
		an->dev[r->device.device].ccmin = r->device.cc_minor;
		an->dev[r->device.device].sms = r->device.sm_count;
		break;
	case GP_REC_STATUS:
		if (r->status.kind < 8)
			an->status[r->status.kind] = 1;
		break;
	case GP_REC_DROPS: {
		uint64_t key = ((uint64_t)r->drops.source << 32) | r->drops.tid;
		uint64_t *v = gp_map_get(&an->drops, key);
		if (!v || *v < r->drops.dropped)
			gp_an_fail(an, gp_map_put(&an->drops, key, r->drops.dropped));
		break;
	}
	case GP_REC_HOST_SAMPLE: {
		double w = r->host.interval_us ? r->host.interval_us : 1.0;
		an->host_busy_w += w * r->host.host_busy_pm / 10.0;
		an->host_proc_w += w * r->host.proc_cpu_pm / 10.0;
		an->host_w += w;
		if (r->host.host_busy_pm / 10.0 > an->host_max)
			an->host_max = r->host.host_busy_pm / 10.0;
		break;
	}
	case GP_REC_ITER:
		if (GROW(an->marks, an->nmarks, an->capmarks))
			return gp_an_fail(an, -ENOMEM), an->err;
		an->marks[an->nmarks].iter = (int64_t)r->mark.iter;
		an->marks[an->nmarks].ts = r->mark.ts;
		an->nmarks++;
		gp_an_seen(an, r->mark.ts, r->mark.ts);
		break;
	case GP_REC_WINDOW:
		if (r->mark.kind == GP_WIN_START && (!an->win_start || r->mark.ts < an->win_start))
			an->win_start = r->mark.ts;
		if ((r->mark.kind == GP_WIN_STOP || r->mark.kind == GP_WIN_END_EARLY) &&
		    r->mark.ts > an->win_stop)
			an->win_stop = r->mark.ts;
		break;
	case GP_REC_STACK: {
		uint32_t depth = r->stack.depth;
		uint32_t avail = GP_STACK_INLINE + (nslots - 1) * 4u;
		if (depth > avail)
			depth = avail;
		if (gp_an_grow((void **)&an->pcs, &an->cappcs, an->npcs + depth, sizeof *an->pcs))
			return gp_an_fail(an, -ENOMEM), an->err;
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
		break;
	}
	case GP_REC_SYMBOL:
		gp_an_fail(an, gp_map_put(&an->symbols, r->symbol.pc, r->symbol.name));
		break;
	case GP_REC_HOOK_API:
	case GP_REC_RUNTIME_API:
	case GP_REC_DRIVER_API:
		gp_an_scan1_api(an, &r->api);
		break;
	case GP_REC_SYNC:
		gp_an_seen(an, r->sync.start, r->sync.end);
		break;
	case GP_REC_KERNEL:
		gp_an_seen(an, r->kernel.start, r->kernel.end);
		break;
	case GP_REC_MEMCPY:
	case GP_REC_MEMSET:
		gp_an_seen(an, r->copy.start, r->copy.start + gp_copy_dur_ns(&r->copy));
		break;
	case GP_REC_MARKER:
		gp_an_seen(an, r->marker.ts, r->marker.ts);
		break;
	default:
		break;
	}
	return an->err;
}

/* --- prepare ------------------------------------------------------------------ */

static int gp_an_cmp_mark(const void *a, const void *b)
{
	const struct { int64_t iter; uint64_t ts; } *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->iter < y->iter ? -1 : x->iter > y->iter;
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
	an->hook_only = an->status[GP_STATUS_CUPTI_UNAVAILABLE] || (!have_cupti && an->have_hooks);

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
			an->niters++;
		}
		uint64_t wend = an->win_stop ? an->win_stop : an->t_last;
		for (size_t i = 0; i < an->niters; i++)
			an->iters[i].end = i + 1 < an->niters ? an->iters[i + 1].start
							     : (wend > an->iters[i].start ? wend : an->iters[i].start);
	}
	return an->err;
}

/* --- pass 2: the join ----------------------------------------------------------- */

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

static const char *gp_an_copy_kind_name(unsigned k)
{
	static const char *names[] = { "memcpy", "memcpy HtoD", "memcpy DtoH", "memcpy HtoA",
				       "memcpy AtoH", "memcpy AtoA", "memcpy AtoD", "memcpy DtoA",
				       "memcpy DtoD", "memcpy HtoH", "memcpy PtoP" };
	return k < sizeof names / sizeof names[0] ? names[k] : "memcpy";
}

/* Innermost symbolised frame of a stack, written into buf; NULL if none. */
static const char *gp_an_callsite(struct gp_an *an, uint32_t stack, char *buf, size_t n)
{
	uint64_t *v = stack ? gp_map_get(&an->stacks, stack) : NULL;
	if (!v || !(*v & 0xffff))
		return NULL;
	uint64_t pc = an->pcs[*v >> 16];
	uint64_t *sym = gp_map_get(&an->symbols, pc);
	const char *s = sym ? gp_an_string(an, (uint32_t)*sym) : NULL;
	if (s)
		return s;
	snprintf(buf, n, "0x%llx", (unsigned long long)pc);
	return buf;
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

/* --- pass 2: blocking intervals ----------------------------------------------
 *
 * A wait slot is created by whichever of its records comes first (the CUPTI
 * API record, the SYNC record with the stream scope, the external correlation
 * that carries the sync hook's stack) and becomes active with its API record.
 * Active, it takes the best candidate among the ops already folded (the
 * GP_RECENT latest, sorted by gpu_end) and then every op folded afterwards is
 * offered to it; it is charged GP_WAIT_HORIZON ops later, or at the end. So
 * memory holds GP_RECENT ops and the waits of the last GP_WAIT_HORIZON ops,
 * whatever the trace length; an op arriving more than that many ops late
 * cannot be charged (counted in waits_late when it finds its wait gone).
 */

static struct gp_wait *gp_an_wait_get(struct gp_an *an, uint32_t corr, int create)
{
	uint64_t *v = gp_dmap_get(&an->wait_by_corr, corr);
	if (v)
		return &an->waits[*v];
	if (!create)
		return NULL;
	uint32_t idx;
	if (an->wait_free != GP_NONE32) {
		idx = an->wait_free;
		an->wait_free = an->waits[idx].next_free;
	} else {
		if (GROW(an->waits, an->nwaits, an->capwaits))
			return gp_an_fail(an, -ENOMEM), NULL;
		idx = (uint32_t)an->nwaits++;
	}
	struct gp_wait *w = &an->waits[idx];
	memset(w, 0, sizeof *w);
	w->corr = corr;
	w->stream = GP_NONE32;
	w->best_group = GP_NONE32;
	w->seq = an->op_seq; /* creation time until it becomes active */
	if (gp_dmap_put(&an->wait_by_corr, corr, idx))
		return gp_an_fail(an, -ENOMEM), NULL;
	return w;
}

static int gp_an_wait_live(const struct gp_an *an, const struct gp_wait *w)
{
	uint64_t *v = gp_dmap_get(&an->wait_by_corr, w->corr);
	return v && &an->waits[*v] == w;
}

static void gp_an_wait_release(struct gp_an *an, struct gp_wait *w)
{
	gp_dmap_del(&an->wait_by_corr, w->corr);
	w->next_free = an->wait_free;
	an->wait_free = (uint32_t)(w - an->waits);
}

/* Does op entry r bear on wait w: own op of a blocking copy, or candidate. */
static void gp_an_wait_consider(struct gp_wait *w, const struct gp_recent *r)
{
	if (gp_an_is_copy_sync(w->kind) && r->corr == w->corr) {
		w->has_own = 1;
		w->own_gpu_start = r->gpu_start;
		w->own_launch = r->launch;
		w->own_group = r->group;
		w->own_iter = r->iter;
		return;
	}
	if (r->e <= w->w0 || r->e > w->w1)
		return; /* finished before the wait began, or after it ended */
	if (r->has_api && r->api_end > w->w0)
		return; /* enqueued after the wait began: not waited for */
	switch (w->kind) {
	case GP_API_SYNC_STREAM:
	case GP_API_SYNC_EVENT:
		if (w->stream != GP_NONE32 && w->stream != r->stream)
			return;
		break;
	case GP_API_MEMCPY_SYNC:
	case GP_API_MEMSET_SYNC:
		if (w->has_own && r->e > w->own_gpu_start)
			return; /* not earlier work */
		break;
	default:
		break;
	}
	if (!w->has_best || r->e > w->best_e) {
		w->has_best = 1;
		w->best_e = r->e;
		w->best_group = r->group;
		w->best_corr = r->corr;
		w->best_iter = r->iter;
	}
}

static const struct gp_recent *gp_an_recent_at(const struct gp_an *an, size_t i)
{
	return &an->recent[(an->recent_head + i) & (GP_RECENT - 1)];
}

/* Best candidate among the folded ops still in the recent buffer. */
static void gp_an_wait_search(struct gp_an *an, struct gp_wait *w)
{
	w->has_best = 0;
	size_t lo = 0, hi = an->nrecent; /* first entry with e > w1 */
	/* the wait is usually recent: gallop back from the newest entry to
	 * bound the search to the cache lines near the end */
	for (size_t step = 1; hi > 0; step *= 2) {
		size_t i = hi > step ? hi - step : 0;
		if (gp_an_recent_at(an, i)->e <= w->w1) {
			lo = i + 1;
			break;
		}
		hi = i;
	}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (gp_an_recent_at(an, mid)->e <= w->w1)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* own op first (a copy's own op bounds its candidates), then the rest */
	for (int round = gp_an_is_copy_sync(w->kind) ? 0 : 1; round < 2; round++)
		for (size_t i = lo; i > 0; i--) {
			const struct gp_recent *r = gp_an_recent_at(an, i - 1);
			if (r->e <= w->w0)
				break;
			if (round == 0) {
				if (r->corr == w->corr)
					gp_an_wait_consider(w, r);
			} else {
				gp_an_wait_consider(w, r);
			}
		}
}

static struct gp_tidq *gp_an_tidq(struct gp_an *an, uint32_t tid)
{
	uint64_t *v = gp_map_get(&an->tq_by_tid, tid);
	if (v)
		return &an->tq[*v];
	if (GROW(an->tq, an->ntq, an->captq))
		return gp_an_fail(an, -ENOMEM), NULL;
	struct gp_tidq *q = &an->tq[an->ntq];
	memset(q, 0, sizeof *q);
	q->tid = tid;
	gp_an_fail(an, gp_map_put(&an->tq_by_tid, tid, an->ntq));
	return &an->tq[an->ntq++];
}

static void gp_an_wait_activate(struct gp_an *an, struct gp_wait *w)
{
	struct gp_tidq *q = gp_an_tidq(an, w->tid);
	if (!q)
		return;
	w->active = 1;
	w->seq = an->op_seq;
	gp_an_wait_search(an, w);
	gp_an_fail(an, gp_sweep_add(&an->covered, w->w0, w->w1));
	if (q->head > 0 && q->head + q->n == q->cap) { /* compact */
		memmove(q->idx, q->idx + q->head, q->n * sizeof *q->idx);
		q->cache = q->cache > q->head ? q->cache - q->head : 0;
		q->head = 0;
	}
	if (gp_an_grow((void **)&q->idx, &q->cap, q->head + q->n + 1, sizeof *q->idx))
		return gp_an_fail(an, -ENOMEM);
	/* keep w0 order (a thread's records come in order; insert from the back) */
	size_t i = q->n;
	while (i > 0 && an->waits[q->idx[q->head + i - 1]].w0 > w->w0) {
		q->idx[q->head + i] = q->idx[q->head + i - 1];
		i--;
	}
	q->idx[q->head + i] = (uint32_t)(w - an->waits);
	q->n++;
}

/* Offer a folded op to the active waits containing its gpu_end (at most one
 * per thread: a thread's waits do not overlap). */
static void gp_an_offer(struct gp_an *an, const struct gp_recent *r)
{
	for (size_t t = 0; t < an->ntq; t++) {
		struct gp_tidq *q = &an->tq[t];
		if (!q->n)
			continue;
		size_t k = q->cache >= q->head && q->cache < q->head + q->n ? q->cache : q->head;
		struct gp_wait *w = &an->waits[q->idx[k]];
		if (!(w->w0 < r->e && r->e <= w->w1)) {
			size_t a = q->head, b = q->head + q->n; /* last wait with w0 < e */
			if (an->waits[q->idx[b - 1]].w0 < r->e)
				a = b; /* the newest wait began before e: it is that one */
			while (a < b) {
				size_t mid = (a + b) / 2;
				if (an->waits[q->idx[mid]].w0 < r->e)
					a = mid + 1;
				else
					b = mid;
			}
			if (a == q->head)
				continue;
			k = a - 1;
			w = &an->waits[q->idx[k]];
			if (r->e > w->w1)
				continue;
			q->cache = k;
		}
		gp_an_wait_consider(w, r);
	}
}

static void gp_an_callsite_add(struct gp_an *an, const char *site, uint64_t s)
{
	uint32_t c = gp_an_canon(an, site, strlen(site));
	uint64_t *v = gp_map_get(&an->cs_map, c);
	if (!v) {
		if (GROW(an->cs, an->ncs, an->capcs))
			return gp_an_fail(an, -ENOMEM);
		an->cs[an->ncs] = (struct gp_rep_callsite){ .name = strdup(site) };
		if (!an->cs[an->ncs].name)
			return gp_an_fail(an, -ENOMEM);
		gp_an_fail(an, gp_map_put(&an->cs_map, c, an->ncs));
		v = gp_map_get(&an->cs_map, c);
		an->ncs++;
		if (!v)
			return;
	}
	an->cs[*v].calls++;
	an->cs[*v].sync_ns += s;
}

/* Charge an active wait and release its slot. */
static void gp_an_wait_finalize(struct gp_an *an, struct gp_wait *w)
{
	struct gp_an_wait out = { .kind = w->kind, .tid = w->tid, .corr = w->corr, .stream = w->stream,
				  .call_start = w->w0, .call_end = w->w1, .w0 = w->w0, .group = -1 };
	uint64_t s;
	if (gp_an_is_copy_sync(w->kind)) {
		s = w->has_best && w->best_e > w->w0 ? w->best_e - w->w0 : 0;
		if (w->has_own && s > w->own_launch)
			s = w->own_launch;
		if (!w->has_best || !s)
			goto done; /* nothing outstanding: no blocking part */
		out.w1 = w->w0 + s;
		if (w->has_own && w->own_group < an->ngroups) {
			/* the blocked part leaves the copy's launch */
			struct gp_group *og = &an->groups[w->own_group];
			og->launch -= s < og->launch ? s : og->launch;
			an->launch -= s < an->launch ? s : an->launch;
			if (w->own_iter >= 0) {
				struct gp_iterx *it = &an->iters[w->own_iter];
				it->launch -= s < it->launch ? s : it->launch;
			}
		}
	} else {
		s = w->w1 - w->w0;
		out.w1 = w->w1;
	}
	an->sync_calls[w->kind]++;
	an->sync_kind_ns[w->kind] += s;
	if (w->has_best && w->best_group < an->ngroups) {
		struct gp_group *g = &an->groups[w->best_group];
		g->sync += s;
		g->sync_calls++;
		an->sync_total += s;
		if (w->best_iter >= 0)
			an->iters[w->best_iter].sync += s;
		out.attributed = 1;
		out.op_corr = w->best_corr;
		out.group = (int32_t)w->best_group;
	} else {
		an->sync_unattr_ns += s;
		an->sync_unattr_calls++;
	}
	char buf[32];
	const char *site = gp_an_callsite(an, w->stack, buf, sizeof buf);
	gp_an_callsite_add(an, site ? site : "(no stack)", s);
	if (an->cfg.on_wait)
		an->cfg.on_wait(&out, an->cfg.ctx);
done:
	gp_an_wait_release(an, w);
}

/* Charge the waits that have seen GP_WAIT_HORIZON ops since they became
 * active (all of them when final); drop slots that never became active. */
static void gp_an_wait_expire(struct gp_an *an, int final)
{
	for (size_t t = 0; t < an->ntq; t++) {
		struct gp_tidq *q = &an->tq[t];
		while (q->n) {
			struct gp_wait *w = &an->waits[q->idx[q->head]];
			if (!final && w->seq + GP_WAIT_HORIZON > an->op_seq)
				break;
			q->head++;
			q->n--;
			gp_an_wait_finalize(an, w);
		}
		if (!q->n)
			q->head = q->cache = 0;
	}
	if (!final && (an->op_seq & (GP_WAIT_HORIZON - 1)) != 0)
		return; /* the pool is swept once per horizon */
	for (size_t i = 0; i < an->nwaits; i++) {
		struct gp_wait *w = &an->waits[i];
		if (gp_an_wait_live(an, w) && !w->active && (final || w->seq + GP_WAIT_HORIZON < an->op_seq))
			gp_an_wait_release(an, w);
	}
}

/* Sync hooks waiting for their external correlation (bounded FIFO): op id
 * -> stack id, with GP_SHOOK_COPY when the call is a blocking copy/set (an
 * op joins it; a synchronize has none). */
#define GP_SHOOK_COPY (1ULL << 32)
#define GP_SHOOK_SEEN_MASK ((1u << 20) - 1u)
static void gp_an_shook_add(struct gp_an *an, uint32_t op, int copy)
{
	if (!an->shook_fifo && !(an->shook_fifo = malloc(GP_RECENT * sizeof *an->shook_fifo)))
		return gp_an_fail(an, -ENOMEM);
	if (!an->shook_seen && !(an->shook_seen = calloc(GP_SHOOK_SEEN_MASK + 1u, 1)))
		return gp_an_fail(an, -ENOMEM);
	if (an->nshook == GP_RECENT) {
		uint8_t *c = &an->shook_seen[an->shook_fifo[an->shook_head] & GP_SHOOK_SEEN_MASK];
		if (*c != UINT8_MAX) /* a saturated count stays (never a false "absent") */
			(*c)--;
		gp_map_del(&an->shook, an->shook_fifo[an->shook_head]);
		an->shook_head = (an->shook_head + 1) & (GP_RECENT - 1);
		an->nshook--;
	}
	an->shook_fifo[(an->shook_head + an->nshook) & (GP_RECENT - 1)] = op;
	an->nshook++;
	if (an->shook_seen[op & GP_SHOOK_SEEN_MASK] != UINT8_MAX)
		an->shook_seen[op & GP_SHOOK_SEEN_MASK]++;
	gp_an_fail(an, gp_map_put(&an->shook, op, copy ? GP_SHOOK_COPY : 0));
}

/* The shook entry of hook op `op`, or NULL. */
static uint64_t *gp_an_shook_get(const struct gp_an *an, uint64_t op)
{
	if (!an->shook_seen || !an->shook_seen[op & GP_SHOOK_SEEN_MASK])
		return NULL;
	return gp_map_get(&an->shook, op);
}

/* An API record of a blocking call (sync class, or blocking copy/set). */
static void gp_an_wait_api(struct gp_an *an, const struct gp_rec_api *a)
{
	unsigned c = GP_API_CLASS(a->class_flags);
	if (!(gp_an_is_sync_class(c) || gp_an_is_copy_sync(c)) || (a->class_flags & GP_APIF_ERROR))
		return;
	/* runtime records when present (a driver sync inside a runtime sync
	 * would count twice), else driver */
	if (a->type == GP_REC_DRIVER_API && an->have_runtime)
		return;
	struct gp_wait *w = gp_an_wait_get(an, a->corr, 1);
	if (!w || w->has_api)
		return;
	w->has_api = 1;
	w->kind = (uint8_t)c;
	w->tid = a->tid;
	w->w0 = a->start;
	w->w1 = a->start + gp_api_dur_ns(a);
	if (c == GP_API_SYNC_DEVICE)
		w->stream = GP_NONE32;
	gp_an_wait_activate(an, w);
}

/* Fold one complete op into every aggregate. */
static void gp_an_fold(struct gp_an *an, struct gp_an_op *op, uint32_t hook_stack, uint32_t nvtx_str,
		       uint32_t name_str)
{
	char cbuf[32];
	op->nvtx = nvtx_str != GP_NONE32 ? an->strs[nvtx_str].text : NULL;
	op->callsite = gp_an_callsite(an, hook_stack, cbuf, sizeof cbuf);
	/* group */
	uint64_t key;
	uint32_t gname = GP_NONE32;
	const char *synth = op->name;
	switch (an->cfg.group_by) {
	case GP_GROUP_NVTX:
		gname = nvtx_str;
		key = nvtx_str != GP_NONE32 ? (1ULL << 40) | nvtx_str : (2ULL << 40);
		synth = "(no NVTX range)";
		break;
	case GP_GROUP_CALLSITE:
		if (op->callsite) {
			uint32_t c = gp_an_canon(an, op->callsite, strlen(op->callsite));
			gname = c;
			key = (1ULL << 40) | c;
		} else {
			key = 2ULL << 40;
			synth = "(no stack)";
		}
		break;
	case GP_GROUP_STREAM: {
		char sb[48];
		snprintf(sb, sizeof sb, "device %u stream %u", op->device, op->stream);
		key = (3ULL << 40) | ((uint64_t)op->device << 32) | op->stream;
		gname = GP_NONE32;
		synth = sb;
		op->group = gp_an_group(an, key, gname, synth);
		goto grouped;
	}
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
	op->group = gp_an_group(an, key, gname, synth);
grouped:
	if (op->group == GP_NONE32)
		return;
	struct gp_group *g = &an->groups[op->group];
	g->count++;
	g->launch += op->launch_ns;
	g->queue += op->queue_ns;
	g->exec += op->execute_ns;
	if (!op->has_api)
		g->no_api++;
	if (!op->has_gpu)
		g->no_gpu++;
	else
		gp_an_fail(an, gp_hist_add(&g->hist, op->execute_ns));
	an->ops++;
	an->launch += op->launch_ns;
	an->queue += op->queue_ns;
	an->exec += op->execute_ns;
	if (!op->has_api)
		an->ops_no_api++;
	if (!op->has_gpu)
		an->ops_no_gpu++;
	if (op->has_api && op->has_gpu)
		an->ops_joined++;
	int64_t slot;
	op->iter = gp_an_iter_of(an, op->has_api ? op->api_start : op->gpu_start, &slot);
	if (slot >= 0) {
		struct gp_iterx *it = &an->iters[slot];
		it->ops++;
		it->launch += op->launch_ns;
		it->queue += op->queue_ns;
		it->exec += op->execute_ns;
	}
	if (op->has_api && op->launch_ns)
		gp_an_fail(an, gp_sweep_add(&an->covered, op->api_start, op->api_end));
	if (op->has_gpu) {
		an->busy_sum += op->execute_ns;
		an->busy_used[op->device] = 1;
		gp_an_fail(an, gp_sweep_add(&an->busy[op->device], op->gpu_start, op->gpu_end));
		gp_an_fail(an, gp_sweep_add(&an->covered, op->gpu_start, op->gpu_end));
		struct gp_recent r = { .e = op->gpu_end, .api_end = op->api_end, .gpu_start = op->gpu_start,
				       .launch = op->launch_ns, .stream = op->stream, .group = op->group,
				       .corr = op->corr, .iter = (int32_t)slot, .has_api = op->has_api,
				       .copy_sync = (uint8_t)(op->has_api && gp_an_is_copy_sync(op->api_class)) };
		/* the recent buffer: sorted by e, the oldest dropped when full */
		if (!an->recent && !(an->recent = malloc(GP_RECENT * sizeof *an->recent)))
			return gp_an_fail(an, -ENOMEM);
		if (an->nrecent == GP_RECENT) {
			an->recent_head = (an->recent_head + 1) & (GP_RECENT - 1);
			an->nrecent--;
		}
		size_t i = an->nrecent;
		while (i > 0 && gp_an_recent_at(an, i - 1)->e > r.e) {
			an->recent[(an->recent_head + i) & (GP_RECENT - 1)] = *gp_an_recent_at(an, i - 1);
			i--;
		}
		an->recent[(an->recent_head + i) & (GP_RECENT - 1)] = r;
		an->nrecent++;
		gp_an_offer(an, &r);
		/* the op of a blocking copy/set bounds its wait's candidates */
		struct gp_wait *w = r.copy_sync ? gp_an_wait_get(an, op->corr, 0) : NULL;
		if (w && w->active) {
			gp_an_wait_consider(w, &r);
			if (w->has_best && w->best_e > w->own_gpu_start)
				gp_an_wait_search(an, w);
		} else if (w) {
			gp_an_wait_consider(w, &r);
		}
		if ((++an->op_seq & 1023u) == 0)
			gp_an_wait_expire(an, 0);
	}
	if (an->cfg.on_op)
		an->cfg.on_op(op, an->cfg.ctx);
}

static struct gp_pending *gp_an_pend_get(struct gp_an *an, uint32_t corr, int create)
{
	uint64_t *v = gp_dmap_get(&an->pend_by_corr, corr);
	if (v)
		return &an->pend[*v];
	if (!create)
		return NULL;
	uint32_t idx;
	if (an->pend_free != GP_NONE32) {
		idx = an->pend_free;
		an->pend_free = an->pend[idx].next_free;
	} else {
		if (GROW(an->pend, an->npend, an->cappend))
			return gp_an_fail(an, -ENOMEM), NULL;
		idx = (uint32_t)an->npend++;
	}
	struct gp_pending *p = &an->pend[idx];
	memset(p, 0, sizeof *p);
	p->corr = corr;
	p->api_nvtx = GP_NONE32;
	p->name = 0;
	p->stash_head = p->stash_tail = GP_NONE32;
	if (gp_dmap_put(&an->pend_by_corr, corr, idx))
		return gp_an_fail(an, -ENOMEM), NULL;
	return p;
}

static void gp_an_pend_drop(struct gp_an *an, struct gp_pending *p)
{
	uint32_t idx = (uint32_t)(p - an->pend);
	while (p->stash_head != GP_NONE32) { /* none left after an emit; defensive */
		uint32_t k = p->stash_head;
		p->stash_head = an->stash[k].next;
		an->stash[k].next = an->stash_free;
		an->stash_free = k;
		an->nstash--;
	}
	p->stash_tail = GP_NONE32;
	gp_dmap_del(&an->pend_by_corr, p->corr);
	p->next_free = an->pend_free;
	an->pend_free = idx;
}

static int gp_an_hookq_alive(const struct gp_an *an, const struct gp_hookq_ent *e)
{
	uint64_t *v = gp_dmap_get(&an->hook_by_op, e->op);
	return v && *v == e->idx;
}

static void gp_an_hookq_trim(const struct gp_an *an, struct gp_hookq *q)
{
	while (q->n && !gp_an_hookq_alive(an, &q->e[q->head])) {
		q->head++;
		q->n--;
	}
	if (!q->n)
		q->head = 0;
}

static void gp_an_hookq_push(struct gp_an *an, const struct gp_hook *h, uint32_t idx)
{
	uint64_t *v = gp_map_get(&an->hq_by_tid, h->tid);
	struct gp_hookq *q;
	if (v) {
		q = &an->hq[*v];
	} else {
		if (GROW(an->hq, an->nhq, an->caphq))
			return gp_an_fail(an, -ENOMEM);
		q = &an->hq[an->nhq];
		memset(q, 0, sizeof *q);
		q->tid = h->tid;
		gp_an_fail(an, gp_map_put(&an->hq_by_tid, h->tid, an->nhq));
		an->nhq++;
	}
	gp_an_hookq_trim(an, q);
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
static struct gp_hook *gp_an_hook_containing(struct gp_an *an, uint32_t tid, uint64_t a0, uint64_t a1)
{
	uint64_t *v = gp_map_get(&an->hq_by_tid, tid);
	if (!v)
		return NULL;
	struct gp_hookq *q = &an->hq[*v];
	gp_an_hookq_trim(an, q);
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
		if (e->end >= a1 && gp_an_hookq_alive(an, e))
			return &an->hooks[e->idx];
	}
	return NULL;
}

static void gp_an_hook_drop(struct gp_an *an, struct gp_hook *h)
{
	uint32_t idx = (uint32_t)(h - an->hooks);
	gp_dmap_del(&an->hook_by_op, h->op);
	h->next_free = an->hook_free;
	an->hook_free = idx;
}

static struct gp_hook *gp_an_hook_get(struct gp_an *an, uint64_t op)
{
	uint64_t *v = gp_dmap_get(&an->hook_by_op, op);
	return v ? &an->hooks[*v] : NULL;
}

/* Keep the GPU part of p (a graph op still waiting for its cudaGraphLaunch
 * API record) aside, so that the next op of the same launch can wait in p
 * too. Returns 0, or -1 when the stash is full (the caller folds p). */
static int gp_an_stash_push(struct gp_an *an, struct gp_pending *p)
{
	uint32_t k;
	if (an->stash_free != GP_NONE32) {
		k = an->stash_free;
		an->stash_free = an->stash[k].next;
	} else {
		if (an->nstash >= GP_STASH_MAX || GROW(an->stash, an->nstash, an->capstash))
			return -1;
		k = (uint32_t)an->nstash;
	}
	an->nstash++;
	an->stash[k] = (struct gp_stash){ .gpu_type = p->gpu_type, .device = p->device, .copy_kind = p->copy_kind,
					  .end_missing = p->end_missing, .stream = p->stream, .name = p->name,
					  .next = GP_NONE32, .gpu_start = p->gpu_start, .gpu_end = p->gpu_end,
					  .bytes = p->bytes };
	if (p->stash_tail == GP_NONE32)
		p->stash_head = k;
	else
		an->stash[p->stash_tail].next = k;
	p->stash_tail = k;
	p->has_gpu = 0;
	return 0;
}

/* Build and fold the op of a pending entry that has its GPU record. */
static void gp_an_emit(struct gp_an *an, struct gp_pending *p, struct gp_hook *h)
{
	struct gp_an_op op;
	memset(&op, 0, sizeof op);
	op.kind = p->gpu_type == GP_REC_KERNEL ? GP_OP_KERNEL
		  : p->gpu_type == GP_REC_MEMCPY ? GP_OP_MEMCPY : GP_OP_MEMSET;
	op.device = p->device;
	op.has_gpu = !p->end_missing;
	op.has_api = p->has_api;
	op.has_hook = h != NULL;
	op.copy_kind = p->copy_kind;
	op.stream = p->stream;
	op.corr = p->corr;
	op.bytes = p->bytes;
	op.gpu_start = p->gpu_start;
	op.gpu_end = p->gpu_end;
	uint32_t nvtx = p->api_nvtx, stack = 0;
	if (h) {
		nvtx = h->nvtx;
		stack = h->stack;
	} else if (p->hk) {
		nvtx = p->hk_nvtx;
		stack = p->hk_stack;
		op.has_hook = 1;
	}
	if (p->has_api) {
		op.api_class = p->api_class;
		op.api_id = p->api_id;
		op.api_domain = p->api_domain;
		op.tid = p->api_tid;
		op.api_start = p->api_start;
		op.api_end = p->api_start + p->api_dur;
		if (!p->api_charged) {
			op.launch_ns = p->api_dur;
			if (gp_an_is_copy_sync(p->api_class) && op.has_gpu) {
				uint64_t ex = p->gpu_end - p->gpu_start;
				op.launch_ns = op.launch_ns > ex ? op.launch_ns - ex : 0;
			}
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
		op.name = gp_an_copy_kind_name(p->copy_kind);
	} else {
		op.name = "memset";
	}
	gp_an_fold(an, &op, stack, nvtx, name_str);
}

static void gp_an_try_finish(struct gp_an *an, struct gp_pending *p, int final)
{
	if (!p->has_gpu)
		return;
	if (!p->has_api && !final)
		return;
	struct gp_hook *h = p->has_ext ? gp_an_hook_get(an, p->ext) : NULL;
	if (!h && p->has_api && an->have_hooks) {
		/* No ext corr (yet): the hook whose interval contains the call on
		 * the same thread is its hook. CUPTI thread ids are not OS tids;
		 * the mapping is learned from ext-corr joins. */
		uint64_t *os = gp_map_get(&an->tid_os, p->api_tid);
		h = gp_an_hook_containing(an, os ? (uint32_t)*os : p->api_tid, p->api_start,
					  p->api_start + p->api_dur);
	}
	if (!h && p->has_ext && !final)
		return; /* the hook is announced but not here yet */
	if (h && p->has_api && (p->api_tid != an->tid_os_last_cupti || h->tid != an->tid_os_last_os)) {
		gp_an_fail(an, gp_map_put(&an->tid_os, p->api_tid, h->tid));
		an->tid_os_last_cupti = p->api_tid;
		an->tid_os_last_os = h->tid;
	}
	while (p->stash_head != GP_NONE32) {
		/* earlier ops of the same graph launch, in arrival order; the
		 * launch's host time goes to the first op emitted */
		uint32_t k = p->stash_head;
		struct gp_stash *st = &an->stash[k];
		struct gp_pending q = *p;
		q.gpu_type = st->gpu_type;
		q.device = st->device;
		q.copy_kind = st->copy_kind;
		q.end_missing = st->end_missing;
		q.stream = st->stream;
		q.name = st->name;
		q.gpu_start = st->gpu_start;
		q.gpu_end = st->gpu_end;
		q.bytes = st->bytes;
		p->stash_head = st->next;
		st->next = an->stash_free;
		an->stash_free = k;
		an->nstash--;
		gp_an_emit(an, &q, h);
		if (p->has_api)
			p->api_charged = 1;
	}
	p->stash_tail = GP_NONE32;
	gp_an_emit(an, p, h);
	if (h) {
		gp_dmap_del(&an->ext_rev, h->op);
		gp_an_hook_drop(an, h);
	} else if (p->has_ext) {
		gp_dmap_del(&an->ext_rev, p->ext);
	}
	if (p->has_api && p->api_class == GP_API_GRAPH_LAUNCH) {
		/* later kernels of the same graph launch join with launch 0,
		 * in the context of the launch's hook */
		if (h) {
			p->hk = 1;
			p->hk_tid = h->tid;
			p->hk_nvtx = h->nvtx;
			p->hk_stack = h->stack;
		}
		p->api_charged = 1;
		p->has_gpu = 0;
		p->has_ext = 0;
		return;
	}
	gp_an_pend_drop(an, p);
}

static uint32_t gp_an_nvtx_top(struct gp_an *an, uint32_t tid)
{
	uint64_t *v = gp_map_get(&an->nvtx, tid);
	if (!v)
		return GP_NONE32;
	struct gp_nvtx_stack *s = &an->nvtx_stacks[*v];
	return s->n ? s->names[s->n - 1] : GP_NONE32;
}

static void gp_an_marker(struct gp_an *an, const struct gp_rec_marker *m)
{
	if (m->kind != GP_MARK_PUSH && m->kind != GP_MARK_POP)
		return;
	uint64_t *v = gp_map_get(&an->nvtx, m->tid);
	size_t idx;
	if (v) {
		idx = *v;
	} else {
		if (GROW(an->nvtx_stacks, an->nnvtx, an->capnvtx))
			return gp_an_fail(an, -ENOMEM);
		idx = an->nnvtx++;
		memset(&an->nvtx_stacks[idx], 0, sizeof an->nvtx_stacks[idx]);
		gp_an_fail(an, gp_map_put(&an->nvtx, m->tid, idx));
	}
	struct gp_nvtx_stack *s = &an->nvtx_stacks[idx];
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
	op.launch_ns = gp_api_dur_ns(a);
	const char *n = gp_an_api_name(an, GP_REC_HOOK_API, a->api_id);
	op.name = n ? n : "(hooked call)";
	gp_an_fold(an, &op, 0, gp_an_nvtx_top(an, a->tid), GP_NONE32);
}

/* Was hook op `op` a launch made during stream capture? */
static int gp_an_is_captured(const struct gp_an *an, uint64_t op)
{
	return an->captured.count && gp_map_get(&an->captured, op);
}

/* A lone API record whose hook was such a launch. */
static int gp_an_pend_captured(const struct gp_an *an, const struct gp_pending *p)
{
	return p->has_ext && gp_an_is_captured(an, p->ext);
}

static int gp_an_pend_live(const struct gp_an *an, const struct gp_pending *p)
{
	uint64_t *v = gp_dmap_get(&an->pend_by_corr, p->corr);
	return v && &an->pend[*v] == p;
}

/* Give up join entries older than evict_after_ns before the newest time seen:
 * GPU ops are folded as they are, lone API records and hooks are counted. */
static void gp_an_evict(struct gp_an *an)
{
	if (an->max_ts2 < an->cfg.evict_after_ns)
		return;
	uint64_t limit = an->max_ts2 - an->cfg.evict_after_ns;
	for (size_t i = 0; i < an->npend; i++) {
		struct gp_pending *p = &an->pend[i];
		if (!gp_an_pend_live(an, p) || p->ts >= limit)
			continue;
		if (p->has_gpu) {
			an->evicted++;
			gp_an_try_finish(an, p, 1);
			if (gp_an_pend_live(an, p))
				gp_an_pend_drop(an, p);
		} else {
			if (!gp_an_pend_captured(an, p))
				an->evicted++;
			if (p->has_api && !p->api_charged && !gp_an_pend_captured(an, p))
				an->api_unjoined++;
			if (p->has_ext)
				gp_dmap_del(&an->ext_rev, p->ext);
			gp_an_pend_drop(an, p);
		}
	}
	for (size_t i = 0; i < an->nhooks; i++) {
		struct gp_hook *h = &an->hooks[i];
		uint64_t *v = gp_dmap_get(&an->hook_by_op, h->op);
		if (!v || &an->hooks[*v] != h || h->start >= limit)
			continue;
		if (gp_an_is_captured(an, h->op)) {
			an->launches_captured++;
		} else {
			an->evicted++;
			an->hooks_unjoined++;
		}
		gp_dmap_del(&an->ext_rev, h->op);
		gp_an_hook_drop(an, h);
	}
}

int gp_an_scan2(struct gp_an *an, const union gp_rec *r, uint32_t nslots)
{
	(void)nslots;
	if (an->err)
		return an->err;
	if ((++an->scan2_n & ((1u << 20) - 1)) == 0)
		gp_an_evict(an);
	switch (r->type) {
	case GP_REC_MARKER:
		gp_an_marker(an, &r->marker);
		break;
	case GP_REC_HOOK_API: {
		const struct gp_rec_api *a = &r->api;
		unsigned c = GP_API_CLASS(a->class_flags);
		if (a->class_flags & GP_APIF_NESTED)
			break;
		if (gp_an_is_sync_class(c) || gp_an_is_copy_sync(c)) {
			if (!an->hook_only) {
				/* its stack reaches the CUPTI wait via ext corr */
				gp_an_shook_add(an, a->corr, gp_an_is_copy_sync(c));
			} else if (gp_an_is_sync_class(c)) {
				/* hook-only: no GPU times, the wait cannot be charged */
				uint64_t d = gp_api_dur_ns(a);
				an->sync_calls[c]++;
				an->sync_kind_ns[c] += d;
				an->sync_unattr_ns += d;
				an->sync_unattr_calls++;
				gp_an_fail(an, gp_sweep_add(&an->covered, a->start, a->start + d));
			}
		}
		if (!gp_an_is_op_class(c))
			break;
		if (an->hook_only) {
			gp_an_hook_only_op(an, a);
			break;
		}
		uint32_t idx;
		if (an->hook_free != GP_NONE32) {
			idx = an->hook_free;
			an->hook_free = an->hooks[idx].next_free;
		} else {
			if (GROW(an->hooks, an->nhooks, an->caphooks))
				return gp_an_fail(an, -ENOMEM), an->err;
			idx = (uint32_t)an->nhooks++;
		}
		struct gp_hook *h = &an->hooks[idx];
		*h = (struct gp_hook){ .api_class = (uint8_t)c, .api_id = a->api_id, .tid = a->tid,
				       .stream = a->stream, .nvtx = gp_an_nvtx_top(an, a->tid),
				       .op = a->corr, .start = a->start, .dur = gp_api_dur_ns(a) };
		gp_an_fail(an, gp_dmap_put(&an->hook_by_op, a->corr, idx));
		gp_an_hookq_push(an, h, idx);
		uint64_t *corr = gp_dmap_get(&an->ext_rev, a->corr);
		if (corr) {
			struct gp_pending *p = gp_an_pend_get(an, (uint32_t)*corr, 0);
			if (p)
				gp_an_try_finish(an, p, 0);
		}
		break;
	}
	case GP_REC_GRAPH_NODE:
		/* a launch made during stream capture: its hook and API record
		 * will never meet a GPU op of their own */
		if (r->graph.kind == GP_GRAPH_CAPTURED && r->graph.corr)
			gp_an_fail(an, gp_map_put(&an->captured, r->graph.corr, 1));
		break;
	case GP_REC_STACK_REF: {
		struct gp_hook *h = gp_an_hook_get(an, r->stack_ref.op);
		if (h)
			h->stack = r->stack_ref.stack;
		uint64_t *sh = gp_an_shook_get(an, r->stack_ref.op);
		if (sh)
			*sh = (*sh & GP_SHOOK_COPY) | r->stack_ref.stack;
		break;
	}
	case GP_REC_SYNC: {
		struct gp_wait *w = gp_an_wait_get(an, r->sync.corr, 1);
		if (!w || r->sync.stream == GP_NONE32)
			break;
		w->stream = r->sync.stream;
		if (w->active && w->kind != GP_API_SYNC_DEVICE)
			gp_an_wait_search(an, w); /* the scope narrowed after activation */
		break;
	}
	case GP_REC_EXTCORR: {
		if (r->extcorr.kind != GP_EXT_KIND_CUSTOM2 || an->hook_only)
			break;
		uint64_t *sh = gp_an_shook_get(an, r->extcorr.ext_id);
		if (sh) { /* a blocking call's hook: its stack goes to the wait */
			uint32_t stack = (uint32_t)*sh;
			struct gp_wait *w = gp_an_wait_get(an, r->extcorr.corr, 1);
			if (w)
				w->stack = stack;
			/* a blocking copy/set also has an op to join, whether or
			 * not its API record has arrived yet (deciding that from
			 * the wait left the first cudaMemcpy's hook unjoined when
			 * CUPTI wrote the ext corr before the API record) */
			if (!(*sh & GP_SHOOK_COPY))
				break;
		}
		struct gp_pending *p = gp_an_pend_get(an, r->extcorr.corr, 1);
		if (!p)
			break;
		p->has_ext = 1;
		p->ext = r->extcorr.ext_id;
		gp_an_fail(an, gp_dmap_put(&an->ext_rev, p->ext, p->corr));
		gp_an_try_finish(an, p, 0);
		break;
	}
	case GP_REC_RUNTIME_API:
	case GP_REC_DRIVER_API: {
		const struct gp_rec_api *a = &r->api;
		unsigned c = GP_API_CLASS(a->class_flags);
		uint64_t end = a->start + gp_api_dur_ns(a);
		if (end > an->max_ts2)
			an->max_ts2 = end;
		gp_an_wait_api(an, a);
		if (!gp_an_is_op_class(c) || (a->class_flags & GP_APIF_ERROR)) {
			/* no op will join this call: drop an announced ext corr */
			struct gp_pending *p = gp_an_pend_get(an, a->corr, 0);
			if (p && !p->has_gpu && !p->has_api) {
				if (p->has_ext)
					gp_dmap_del(&an->ext_rev, p->ext);
				gp_an_pend_drop(an, p);
			}
			break;
		}
		/* A driver call nested in a runtime launch has its own corr that no
		 * op carries. CUPTI writes it just before the runtime record of the
		 * same thread, so remember each thread's last lone driver entry and
		 * drop it when a runtime call on that thread contains it. */
		if (a->type == GP_REC_RUNTIME_API) {
			uint64_t *dv = gp_map_get(&an->last_driver, a->tid);
			if (dv) {
				struct gp_pending *d = gp_an_pend_get(an, (uint32_t)*dv, 0);
				if (d && d->has_api && !d->has_gpu && d->api_domain == GP_REC_DRIVER_API &&
				    d->api_start >= a->start && d->api_start + d->api_dur <= end) {
					uint64_t *rv = d->has_ext ? gp_dmap_get(&an->ext_rev, d->ext) : NULL;
					if (rv && *rv == d->corr)
						gp_dmap_del(&an->ext_rev, d->ext);
					gp_an_pend_drop(an, d);
				}
				gp_map_del(&an->last_driver, a->tid);
			}
		}
		struct gp_pending *p = gp_an_pend_get(an, a->corr, 1);
		if (!p)
			break;
		if (a->type == GP_REC_DRIVER_API && !p->has_gpu)
			gp_an_fail(an, gp_map_put(&an->last_driver, a->tid, a->corr));
		p->has_api = 1;
		p->api_class = (uint8_t)c;
		p->api_domain = a->type;
		p->api_id = a->api_id;
		p->api_tid = a->tid;
		p->api_start = a->start;
		p->api_dur = gp_api_dur_ns(a);
		p->api_nvtx = gp_an_nvtx_top(an, a->tid);
		p->ts = end;
		gp_an_try_finish(an, p, 0);
		break;
	}
	case GP_REC_KERNEL:
	case GP_REC_MEMCPY:
	case GP_REC_MEMSET: {
		uint32_t key;
		struct gp_pending tmp;
		memset(&tmp, 0, sizeof tmp);
		tmp.gpu_type = r->type;
		if (r->type == GP_REC_KERNEL) {
			key = r->kernel.corr;
			tmp.device = r->kernel.device;
			tmp.stream = r->kernel.stream;
			tmp.gpu_start = r->kernel.start;
			tmp.gpu_end = r->kernel.end;
			tmp.name = r->kernel.name;
			tmp.end_missing = (r->kernel.flags & GP_OPF_END_MISSING) || r->kernel.end < r->kernel.start;
		} else {
			key = r->type == GP_REC_MEMCPY && r->copy.rt_corr ? r->copy.rt_corr : r->copy.corr;
			tmp.device = r->copy.device;
			tmp.stream = r->copy.stream;
			tmp.gpu_start = r->copy.start;
			tmp.gpu_end = r->copy.start + gp_copy_dur_ns(&r->copy);
			tmp.copy_kind = r->copy.copy_kind;
			tmp.bytes = gp_copy_bytes(&r->copy);
			tmp.end_missing = (r->copy.flags & GP_COPYF_END_MISSING) != 0;
		}
		if (tmp.gpu_end > an->max_ts2)
			an->max_ts2 = tmp.gpu_end;
		struct gp_pending *p = gp_an_pend_get(an, key, 1);
		if (!p)
			break;
		uint8_t graph = r->type == GP_REC_KERNEL ? (r->kernel.flags & GP_OPF_GRAPH) != 0
							 : (r->copy.flags & GP_COPYF_GRAPH) != 0;
		if (p->has_gpu && !(graph && p->graph && !gp_an_stash_push(an, p))) {
			/* a second op under the same key (a driver corr reused,
			 * or more graph ops waiting for their API record or hook
			 * than the stash holds): fold the earlier one first */
			gp_an_try_finish(an, p, 1);
			p = gp_an_pend_get(an, key, 1);
			if (!p)
				break;
		}
		p->graph = graph;
		p->has_gpu = 1;
		p->gpu_type = tmp.gpu_type;
		p->device = tmp.device;
		p->stream = tmp.stream;
		p->gpu_start = tmp.gpu_start;
		p->gpu_end = tmp.gpu_end;
		p->name = tmp.name;
		p->copy_kind = tmp.copy_kind;
		p->bytes = tmp.bytes;
		p->end_missing = tmp.end_missing;
		if (tmp.gpu_end > p->ts)
			p->ts = tmp.gpu_end;
		gp_an_try_finish(an, p, 0);
		break;
	}
	default:
		break;
	}
	return an->err;
}

/* --- finish ------------------------------------------------------------------------ */

static char *gp_an_strdup(struct gp_an *an, const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		gp_an_fail(an, -ENOMEM);
	return d;
}

static int gp_an_cmp_cs(const void *a, const void *b)
{
	const struct gp_rep_callsite *x = a, *y = b;
	return x->sync_ns > y->sync_ns ? -1 : x->sync_ns < y->sync_ns;
}

int gp_an_finish(struct gp_an *an, struct gp_rep *rep)
{
	if (an->err)
		return an->err;
	/* 1. flush the join */
	for (size_t i = 0; i < an->npend; i++) {
		struct gp_pending *p = &an->pend[i];
		if (!gp_an_pend_live(an, p))
			continue;
		if (p->has_gpu) {
			gp_an_try_finish(an, p, 1);
		} else {
			if (p->has_api && !p->api_charged && !gp_an_pend_captured(an, p))
				an->api_unjoined++;
			gp_an_pend_drop(an, p);
		}
	}
	for (size_t i = 0; i < an->nhooks; i++) {
		const struct gp_hook *h = &an->hooks[i];
		uint64_t *v = gp_dmap_get(&an->hook_by_op, h->op);
		if (!v || &an->hooks[*v] != h)
			continue;
		if (gp_an_is_captured(an, h->op))
			an->launches_captured++;
		else
			an->hooks_unjoined++;
	}

	/* 2. charge the waits still open */
	gp_an_wait_expire(an, 1);
	if (an->ncs) /* qsort(NULL, 0) is undefined (UBSan: nonnull) */
		qsort(an->cs, an->ncs, sizeof *an->cs, gp_an_cmp_cs);
	rep->callsites = an->cs;
	rep->ncallsites = an->ncs;
	an->cs = NULL;
	an->ncs = an->capcs = 0;
	memcpy(rep->sync_calls, an->sync_calls, sizeof rep->sync_calls);
	memcpy(rep->sync_kind_ns, an->sync_kind_ns, sizeof rep->sync_kind_ns);
	rep->sync_unattributed_ns = an->sync_unattr_ns;
	rep->sync_unattributed_calls = an->sync_unattr_calls;
	uint64_t sync_total = an->sync_total;

	/* 3. window, busy, host */
	rep->records = an->records;
	memcpy(rep->rec_count, an->rec_count, sizeof rep->rec_count);
	rep->t_first = an->win_start ? an->win_start : (an->t_first == UINT64_MAX ? 0 : an->t_first);
	rep->t_last = an->win_stop ? an->win_stop : an->t_last;
	if (an->t_first != UINT64_MAX && an->t_first < rep->t_first)
		rep->t_first = an->t_first; /* records before the START mark */
	if (an->t_last > rep->t_last)
		rep->t_last = an->t_last;
	rep->wall_ns = rep->t_last > rep->t_first ? rep->t_last - rep->t_first : 0;
	unsigned ndev = 0;
	for (unsigned d = 0; d < 256; d++) {
		if (!an->busy_used[d])
			continue;
		ndev++;
		rep->gpu_busy_ns += gp_sweep_finish(&an->busy[d]);
		rep->gpu_busy_late += an->busy[d].late;
	}
	uint64_t span = rep->wall_ns * ndev;
	rep->gpu_idle_ns = span > rep->gpu_busy_ns ? span - rep->gpu_busy_ns : 0;
	rep->gpu_busy_sum_ns = an->busy_sum;
	rep->covered_ns = gp_sweep_finish(&an->covered);
	rep->unattributed_ns = rep->wall_ns > rep->covered_ns ? rep->wall_ns - rep->covered_ns : 0;
	rep->host_api_ns = an->rec_count[GP_REC_RUNTIME_API] ? an->host_runtime_ns + an->host_driver_direct
			   : an->rec_count[GP_REC_DRIVER_API] ? an->host_driver_ns : an->host_hook_ns;
	rep->launch_ns = an->launch;
	rep->queue_ns = an->queue;
	rep->execute_ns = an->exec;
	rep->sync_ns = sync_total;
	rep->ops = an->ops;
	rep->ops_joined = an->ops_joined;
	rep->ops_no_api = an->ops_no_api;
	rep->ops_no_gpu = an->ops_no_gpu;
	rep->ops_end_missing = an->ops_end_missing;
	rep->hooks_unjoined = an->hooks_unjoined;
	rep->launches_captured = an->launches_captured;
	rep->api_unjoined = an->api_unjoined;
	rep->evicted = an->evicted;
	rep->join_coverage = an->ops ? (double)an->ops_joined / (double)an->ops : 1.0;
	rep->cupti_ok = an->status[GP_STATUS_CUPTI_OK];
	rep->cupti_unavailable = an->hook_only;
	rep->hooks_absent = an->status[GP_STATUS_HOOKS_ABSENT];
	rep->clock_calibrated = an->status[GP_STATUS_CLOCK_CALIBRATED];
	rep->size_cap = an->status[GP_STATUS_SIZE_CAP];
	rep->forked = an->status[GP_STATUS_FORKED_CHILD];
	rep->host_busy_pct = an->host_w > 0 ? an->host_busy_w / an->host_w : -1;
	rep->proc_cpu_pct = an->host_w > 0 ? an->host_proc_w / an->host_w : -1;
	rep->host_busy_max_pct = an->host_w > 0 ? an->host_max : -1;
	{
		size_t pos = 0;
		uint64_t k, v;
		while (gp_map_next(&an->drops, &pos, &k, &v)) {
			unsigned src = (unsigned)(k >> 32);
			if (src == GP_DROP_RING)
				rep->dropped_ring += v;
			else if (src == GP_DROP_CUPTI)
				rep->dropped_cupti += v;
			else
				rep->dropped_write += v;
		}
		rep->dropped_records = rep->dropped_ring + rep->dropped_cupti + rep->dropped_write;
	}
	/* devices */
	for (unsigned d = 0; d < 256; d++) {
		if (!an->dev[d].present)
			continue;
		char buf[256];
		const char *nm = gp_an_string(an, an->dev[d].name);
		snprintf(buf, sizeof buf, "%u: %s (cc %u.%u, %u SMs)", d, nm ? nm : "?", an->dev[d].ccmaj,
			 an->dev[d].ccmin, an->dev[d].sms);
		char **nd = realloc(rep->devices, (rep->ndevices + 1) * sizeof *nd);
		if (!nd)
			return gp_an_fail(an, -ENOMEM), an->err;
		rep->devices = nd;
		rep->devices[rep->ndevices++] = gp_an_strdup(an, buf);
	}

	/* 4. groups */
	rep->groups = calloc(an->ngroups ? an->ngroups : 1, sizeof *rep->groups);
	if (!rep->groups)
		return gp_an_fail(an, -ENOMEM), an->err;
	for (size_t i = 0; i < an->ngroups; i++) {
		struct gp_group *g = &an->groups[i];
		struct gp_rep_group *o = &rep->groups[i];
		if (g->name_str != GP_NONE32) {
			if (an->cfg.group_by == GP_GROUP_KERNEL) {
				gp_an_demangle(an, g->name_str);
				o->name = gp_an_strdup(an, gp_an_short(an, g->name_str));
				o->long_name = gp_an_strdup(an, an->strs[g->name_str].longname);
			} else {
				o->name = gp_an_strdup(an, an->strs[g->name_str].text);
				o->long_name = gp_an_strdup(an, o->name);
			}
		} else {
			o->name = gp_an_strdup(an, g->name);
			o->long_name = gp_an_strdup(an, g->name);
		}
		o->count = g->count;
		o->launch_ns = g->launch;
		o->queue_ns = g->queue;
		o->execute_ns = g->exec;
		o->sync_ns = g->sync;
		o->no_api = g->no_api;
		o->no_gpu = g->no_gpu;
		o->sync_calls = g->sync_calls;
		o->exec = g->hist; /* ownership moves */
		memset(&g->hist, 0, sizeof g->hist);
	}
	rep->ngroups = an->ngroups;
	rep->group_by = an->cfg.group_by;

	/* 5. iterations */
	if (an->niters) {
		rep->iters = calloc(an->niters, sizeof *rep->iters);
		if (!rep->iters)
			return gp_an_fail(an, -ENOMEM), an->err;
		for (size_t i = 0; i < an->niters; i++) {
			struct gp_iterx *it = &an->iters[i];
			rep->iters[i] = (struct gp_rep_iter){ .iter = it->iter, .start = it->start, .end = it->end,
							      .ops = it->ops, .launch_ns = it->launch,
							      .queue_ns = it->queue, .execute_ns = it->exec,
							      .sync_ns = it->sync, .open = i + 1 == an->niters };
		}
		rep->niters = an->niters;
	}
	return an->err;
}

uint64_t gp_an_time_base(const struct gp_an *an)
{
	return an->t_first == UINT64_MAX ? 0 : an->t_first;
}

uint32_t gp_an_os_tid(const struct gp_an *an, uint32_t cupti_tid)
{
	uint64_t *v = gp_map_get(&an->tid_os, cupti_tid);
	return v ? (uint32_t)*v : cupti_tid;
}

int gp_an_hook_only(const struct gp_an *an)
{
	return an->hook_only;
}

void gp_an_free(struct gp_an *an)
{
	if (!an)
		return;
	for (size_t i = 0; i < an->nstrs; i++) {
		free(an->strs[i].text);
		free(an->strs[i].shortname);
		free(an->strs[i].longname);
	}
	free(an->strs);
	gp_map_free(&an->str_by_id);
	gp_map_free(&an->str_by_hash);
	gp_map_free(&an->api_names);
	gp_map_free(&an->threads);
	free(an->pcs);
	gp_map_free(&an->stacks);
	gp_map_free(&an->symbols);
	gp_map_free(&an->drops);
	free(an->marks);
	free(an->waits);
	gp_dmap_free(&an->wait_by_corr);
	for (size_t i = 0; i < an->ntq; i++)
		free(an->tq[i].idx);
	free(an->tq);
	gp_map_free(&an->tq_by_tid);
	free(an->recent);
	gp_map_free(&an->shook);
	free(an->shook_fifo);
	free(an->shook_seen);
	gp_map_free(&an->cs_map);
	for (size_t i = 0; i < an->ncs; i++)
		free(an->cs[i].name);
	free(an->cs);
	free(an->iters);
	free(an->pend);
	gp_dmap_free(&an->pend_by_corr);
	free(an->hooks);
	gp_dmap_free(&an->hook_by_op);
	gp_dmap_free(&an->ext_rev);
	free(an->stash);
	gp_map_free(&an->captured);
	gp_map_free(&an->last_driver);
	for (size_t i = 0; i < an->nhq; i++)
		free(an->hq[i].e);
	free(an->hq);
	gp_map_free(&an->hq_by_tid);
	gp_map_free(&an->tid_os);
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
