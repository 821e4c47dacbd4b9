/*
 * analysis_int.h — the analysis core's private state, shared by its files
 * in report/core/ and by nothing else (analysis.h is the core's API):
 *
 *   analysis.c  the two-pass protocol: pass 1 and pass 2 scans (one function
 *               per record kind, and the views the analyses get), prepare,
 *               accessors
 *   analysis_fold.c    an op's arrival and its one fold (into its group,
 *               iteration, window and the totals; then the op sink)
 *   analysis_finish.c  finish: the aggregates into a gp_rep
 *   analysis_names.c   lookups: strings, API names, call sites, NVTX ranges
 *   join.c      the correlation join: pending entries per join key, launch
 *               hooks and their per-thread queues, the graph-launch stash,
 *               eviction (struct gp_join)
 *   sync.c      sync attribution: blocking intervals, the recent-ops delay
 *               line, per-thread wait queues, sync hooks (struct gp_sync)
 *   cupti_cost.c  CUPTI's own cost in each traced call, from its overhead
 *               records or the library's calibration, and the library's
 *               own calibration calls, left out (struct gp_cost)
 *   gpu_clock.c the offset of CUPTI's GPU timestamps from the host clock:
 *               bounded in pass 1, taken out of GPU times in pass 2
 *               (struct gp_gpu_clock)
 *   queue_full.c  launch-queue back-pressure: time blocked on a full
 *               launch queue, charged through sync.c's wait machinery
 *   fold_line.c the fold line's bookkeeping: arrived ops in order, what
 *               holds each until its launch is final (struct gp_fold_line)
 *   symbolize.c native frame names from the module files (libdw, loaded
 *               with dlopen), at prepare
 *
 * Beside them in report/core/, not sharing this state: rep.c (rep.h, the
 * report of one trace or several merged), verdict.c (verdict.h, the
 * bound of an operator or a run) and category.c (category.h, an
 * operator's category from its kernel's name, by the table
 * categories.tsv, which analysis_finish.c asks once per operator). Below the core, in report/util/:
 * util/strtab.c, the string table (strtab.h), kernel names via
 * trace/kernel_name.h; map, stats and clockmap.
 *
 * Calls go one way: analysis.c and analysis_finish.c -> cupti_cost.c,
 * gpu_clock.c, symbolize.c -> join.c -> analysis_fold.c -> sync.c,
 * queue_full.c -> fold_line.c, analysis_names.c -> util/strtab.c.
 *
 * Single-threaded: one analyser per trace, on the report thread. Every
 * function here records its first failure with gp_an_fail (sticky an->err)
 * and goes on; nothing prints, exits or aborts.
 */
#ifndef GP_REPORT_ANALYSIS_INT_H
#define GP_REPORT_ANALYSIS_INT_H

#include <errno.h>

#include "analysis.h"
#include "report/util/clockmap.h"
#include "report/util/map.h"
#include "report/util/strtab.h"

#define GP_EXT_KIND_CUSTOM2 5u /* CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 */
#define GP_NONE32 UINT32_MAX

/* --- sync attribution (sync.c) --------------------------------------------- */


/* An op a wait may have waited for (sync.c): where it ended on the GPU,
 * and what its wait is charged to. */
struct gp_wait_cand {
	uint64_t e;
	uint32_t group, corr;
	int64_t iter;
	uint8_t device;
};
/* How many of the ops a wait waited for it keeps to split the wait over
 * (metrics.md §3): the latest-ending; earlier ones merge into the first. */
#define GP_WAIT_CANDS 8
/* A blocking interval being attributed (a pass-2 slot; see the header). */
struct gp_wait {
	uint8_t kind;        /* enum gp_api_class                                 */
	uint8_t has_api, active, has_own, has_best;
	uint8_t copy;        /* the call's own op ended inside it (blocking copy/set,
	                        async copy on pageable memory): only the part before
	                        the earlier work ended is a wait                   */
	uint8_t tentative;   /* an async copy's call, until its op says pageable  */
	uint32_t tid, corr, stream, stack;
	uint32_t cupti;      /* CUPTI's cost at the call's entry: w0 is after it   */
	uint64_t w0, w1;     /* w1: call end (explicit) or upper bound (copies)   */
	uint64_t c0;         /* an op that ended by then was not waited for: w0, or
	                        the end of the call's CUPTI overhead record when
	                        that lies later (CUPTI's time began after the
	                        call's entry: w0 counts it from the entry)        */
	uint64_t seq;        /* op sequence number when it became active          */
	uint64_t own_gpu_start, own_launch, own_launch_raw;
	uint8_t own_held;    /* the call's own op waits in the fold line for this
	                        wait's charge (analysis_fold.c), at own_seq     */
	uint64_t own_seq;
	struct gp_wait_cand best; /* the op it waited for, so far (has_best) */
	uint32_t next_free;
	/* several devices (sync.c gp_sync_pick): the device of the own op, and
	 * the best candidate that ended before the call returned (e <= w1),
	 * taken over one of another device that ended after it */
	uint8_t own_device, has_in;
	struct gp_wait_cand in;
	/* a launch's wait on a full queue, from CUPTI's COMMAND_BUFFER_FULL
	 * record, left open after the fold of its call's op (own_*: that op):
	 * it takes the first op of own_device enqueued before the call (api_end
	 * <= call0) to end in [w0, w1] (sync.c gp_qfull_open) */
	uint8_t queue;
	uint64_t call0, call1;
	/* the candidates it waited for (metrics.md §3), sorted by e: the
	 * GP_WAIT_CANDS latest-ending; an earlier one is merged into cand[0] */
	uint8_t ncand;
	struct gp_wait_cand cand[GP_WAIT_CANDS];
};

/* How far GPU timestamps may be off the host clock when an API interval is
 * compared with a GPU one (CUPTI's conversion error, metrics.md §2). */
#define GP_CLOCK_TOLERANCE_NS 10000u

/* A launch that began with its device's queue as full as it ever was (at
 * least GP_QUEUE_DEEP ops pending), and during which one of them ended,
 * waited on the full launch queue (metrics.md §3). CUDA's queue holds about
 * 1024; counting stops at GP_QUEUE_SCAN ops. */
#define GP_QUEUE_DEEP 64u
#define GP_QUEUE_SCAN 4096u

/* Recently folded GPU ops, sorted by gpu_end (delay line of GP_RECENT). */
#define GP_RECENT 65536u
#define GP_WAIT_HORIZON 65536u /* ops folded after a wait became active */
struct gp_recent {
	uint64_t e, api_end, gpu_start, launch, launch_raw;
	uint64_t seq;        /* its place in the fold line (analysis_fold.c)  */
	uint32_t stream, group, corr;
	int32_t iter;
	uint8_t has_api, copy_sync, device;
};

/* Active waits of one thread, in w0 order (CUPTI delivers a thread's
 * records in order). */
struct gp_tidq {
	uint32_t tid;
	uint32_t *idx;
	size_t head, n, cap, cache;
};

/* A wait already charged, kept to recognise ops that arrive after it
 * (sync.c, waits_late). */
#define GP_SETTLED 4096u
struct gp_settled {
	uint64_t w0, w1, best_e;
	uint32_t tid, stream;
	uint8_t kind, copy;
};

/* Launch-queue state of one device (sync.c, back-pressure): the most ops
 * seen pending at a launch, how many launches found that many, and the
 * waits of the first of them, charged once the level proves to be a cap. */
#define GP_QUEUE_HITS 3u
struct gp_queue_wait {
	uint64_t op_seq;     /* the call's op in the fold line                */
	uint32_t best_group;
	int32_t best_iter;
	uint64_t w;
	uint64_t cupti;  /* CUPTI's cost before the wait (it began at a0 + it) */
	uint32_t tid, corr, best_corr, stream; /* for the exports' wait sink */
	uint64_t a0, a1; /* the call                                      */
	uint64_t w0;     /* the wait's start: a0, or CUPTI's record's start */
};
struct gp_queue_dev {
	uint32_t max, hits, ncand;
	struct gp_queue_wait cand[GP_QUEUE_HITS - 1];
};

/* A launch folded in a trace with CUPTI's overhead records (sync.c): kept
 * for a COMMAND_BUFFER_FULL record that reaches the report after it (ring of
 * GP_LAUNCHES, by corr). */
#define GP_LAUNCHES GP_RECENT
struct gp_launch {
	uint64_t a0, a1, launch; /* the call; its launch on arrival             */
	uint64_t seq;            /* its op in the fold line, held while here    */
	uint32_t corr, tid, stream;
	uint32_t wait;           /* its open queue wait's slot, or GP_NONE32    */
	uint8_t device, cbf;     /* cbf: a record of it was applied             */
};

struct gp_sync {
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
	uint64_t queue_calls, queue_ns; /* launches that waited on a full queue */
	struct gp_queue_dev *queue;     /* per device (256), allocated on use   */
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
	struct gp_map early_ext;     /* ext id -> wait corr: a blocking call's CUPTI
	                                records came before its hook (bounded) */
	struct gp_map cbf_start, cbf_end; /* call corr -> its COMMAND_BUFFER_FULL
	                                     interval (CUPTI overhead records,
	                                     until its op folds; bounded)      */
	struct gp_launch *launches;  /* ring of the last GP_LAUNCHES folded launches */
	size_t launch_head, nlaunches;
	struct gp_map launch_by_corr; /* corr -> index in launches             */
	uint32_t launch_gone_max;    /* largest corr that left the ring          */
	uint64_t queue_late;         /* COMMAND_BUFFER_FULL records that came too
	                                late to apply (part of waits_late)     */
	struct gp_settled *settled;  /* ring of the last GP_SETTLED charged waits */
	size_t settled_head, nsettled;
	uint64_t settled_max_w1;
	uint64_t sync_calls[GP_API_CLASS_COUNT], sync_kind_ns[GP_API_CLASS_COUNT];
};

/* --- the correlation join (join.c) ------------------------------------------- */

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
	/* joined by thread and time (gp_join.nested): whether this thread's
	 * hook for an API record may still come */
	uint64_t top_start;  /* start of its latest top-level hook seen       */
	uint64_t seen;       /* op hooks seen so far (pass 2)                 */
	uint32_t *wait;      /* corrs of entries waiting for one of its hooks  */
	size_t nwait, capwait;
};

struct gp_pending {
	uint8_t has_api, has_gpu, has_ext, api_charged;
	uint8_t api_class, api_domain, gpu_type, device;
	uint8_t copy_kind, end_missing, graph, hk, pageable;
	uint8_t api_phase, hk_phase; /* gp_an_nvtx_phase at the API record / graph hook */
	uint8_t hook_wait;   /* in its thread's wait list (gp_hookq.wait)         */
	uint32_t hk_tid, hk_nvtx, hk_stack; /* hk: the hook of a graph launch,
	                                        kept for its later kernels */
	uint16_t api_id;
	uint32_t api_tid, api_nvtx, stream, corr, name;
	uint32_t cfg;        /* kernel: GP_REC_LAUNCH_CFG id (0 = none)          */
	uint32_t stash_head, stash_tail; /* earlier graph ops of this key (GP_NONE32) */
	uint64_t api_start, api_dur;
	uint64_t api_cupti;  /* CUPTI's own cost at the call's entry (cupti_cost.c) */
	uint64_t gpu_start, gpu_end, bytes;
	uint64_t ext;
	uint64_t ts;         /* latest time seen, for eviction                   */
	uint32_t next_free;
};

/* A GPU op of a graph launch that arrived before its API record while an
 * earlier op of the same launch was waiting too (gp_pending.stash_*). */
#define GP_STASH_MAX 65536u
struct gp_stash {
	uint8_t gpu_type, device, copy_kind, end_missing, pageable;
	uint32_t stream, name, cfg, next;
	uint64_t gpu_start, gpu_end, bytes;
};

struct gp_hook {
	uint8_t api_class;
	uint8_t nvtx_phase; /* gp_an_nvtx_phase when the hook ran */
	uint16_t api_id;
	uint32_t tid, stream, nvtx, stack, op;
	uint64_t start, dur;
	uint32_t next_free;
};

struct gp_join {
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
	struct gp_map tid_os;        /* CUPTI thread id -> OS tid (learned)    */
	struct gp_map hook_total;    /* OS tid -> op hooks in the trace (pass 1) */
	int nested;                  /* hooks push no external correlation per
	                                call: joined by thread and time nesting
	                                (trace header "cupti", gp_an_set_cupti) */
	uint32_t tid_os_last_cupti, tid_os_last_os; /* last tid_os put        */
	uint64_t max_ts;             /* newest pass-2 time seen (eviction clock) */
};

/* --- the GPU's clock against the host's (gpu_clock.c) ------------------------ */

/* A segment of one device's GPU time: the tightest bounds on the offset
 * found in it (lo: the largest lower bound, at GPU time t_lo). */
struct gp_gpu_clock_seg {
	int64_t lo, hi;
	uint64_t t_lo;
	uint32_t nlo, nhi;
};
struct gp_gpu_clock_dev {
	struct gp_gpu_clock_seg *seg; /* GP_GPU_CLOCK_SEGS, nseg used        */
	size_t nseg;
	uint64_t base;                /* GPU time of segment 0's start        */
	unsigned shift;               /* log2 of a segment's length           */
	int64_t lo, hi;               /* over the run                         */
	uint64_t nlo, nhi;            /* ... from copies, from ops           */
	uint64_t nsync;               /* device synchronizes in lo (bound only) */
	uint64_t *pt;                 /* after pass 1: the correction's points */
	int64_t *pe, flat;            /* ... their values; without any, flat  */
	size_t np, cache;
};
/* A pass-1 API or GPU record waiting for its other half. */
#define GP_GPU_CLOCK_MEMCPY 1u
#define GP_GPU_CLOCK_PAGEABLE 2u
#define GP_GPU_CLOCK_MISSING 4u
struct gp_gpu_clock_pend {
	uint64_t a, b, seq;           /* API: start, end; GPU: start, end     */
	uint32_t next_free;
	uint8_t cls, dev, copy_kind, flags;
};
struct gp_gpu_clock {
	struct gp_map api, gpu;       /* join key -> slot                     */
	struct gp_gpu_clock_pend *slot;
	size_t nslot, capslot;
	uint32_t free_head;
	uint64_t seq;                 /* pass-1 API and GPU records seen      */
	int raw;                      /* GPUPHASE_REPORT_GPU_CLOCK=raw        */
	struct gp_gpu_clock_dev *dev[256];
	/* device synchronizes (bound only): the last GP_GPU_CLOCK_RING of
	 * them in start order, and of the joined ops in arrival order */
	struct { uint64_t s0, s1; } *syncs;
	struct { uint64_t a1, g1; uint8_t dev; } *ops;
	size_t sync_head, nsyncs, ops_next, nops;
	int64_t sync_lo[256];         /* per device: max gpu_end - sync end  */
	uint64_t sync_n[256];         /* ... pairs found                      */
	uint64_t nsync_calls;         /* device synchronizes seen            */
	uint8_t dev_seen[256];        /* devices with GPU records            */
};

/* --- CUPTI's own cost in traced calls (cupti_cost.c) ----------------------------- */

/* Where a call's CUPTI cost comes from (metrics.md §3, "CUPTI's own cost"). */
enum gp_cost_source { GP_COST_NONE = 0, GP_COST_RECORDS, GP_COST_CALIBRATION };

/* A thread's last driver record, until the runtime call it lies in comes
 * (its CUPTI cost is that call's). */
struct gp_cost_drv {
	uint64_t start, end, ns;
	uint8_t used;
};

struct gp_cost {
	enum gp_cost_source source;    /* chosen by gp_cost_prepare               */
	uint64_t instr_records;        /* pass 1: INSTRUMENTATION records         */
	int have_calib;
	struct gp_rec_calib calib;     /* pass 1: the calibration record          */
	struct gp_map by_corr;         /* pass 2: call corr -> CUPTI ns, until its
	                                  API record comes (bounded)             */
	struct gp_map end_by_corr;     /* pass 2: call corr -> its overhead
	                                  records' latest end (same life)         */
	uint64_t call_end;             /* set by gp_cost_call: the end of the call's
	                                  overhead records, 0 when none           */
	struct gp_map drv_by_tid;      /* tid -> index in drv                     */
	struct gp_cost_drv *drv;
	size_t ndrv, capdrv;
	struct gp_map own;             /* corrs of the library's calibration calls */
	struct gp_map own_names;       /* kernel name string id -> 1 own, 2 not   */
	uint32_t own_last_name;        /* one-entry cache of own_names            */
	int own_last;
	uint64_t calls, in_calls_ns, from_launch_ns, from_sync_ns;
};

/* --- the fold line (analysis_fold.c) ------------------------------------------ */

/* An op that arrived (joined, analysis_fold.c gp_fold_arrive) and waits to
 * be folded into the sums and handed to the op sink: while something may
 * still take a wait out of its launch (holds > 0), or while an op that
 * arrived before it waits. */
struct gp_fold_ent {
	struct gp_an_op op;
	uint32_t hook_stack, nvtx_str, name_str;
	uint32_t holds;        /* waits that may still take time out of its launch */
	int64_t slot;          /* iteration slot, -1 = none                        */
	char callsite[32];     /* op.callsite's text when it was made up ("0x...") */
};

/* Arrived ops in arrival order: a ring of cap (a power of two) entries;
 * entry i holds the op of sequence number head_seq + i. */
struct gp_fold_line {
	struct gp_fold_ent *e;
	size_t head, n, cap;
	uint64_t head_seq;
};

/* --- the protocol and the aggregates (analysis.c) ----------------------------- */

struct gp_group {
	uint64_t key;
	uint32_t name_str;   /* canonical string index, or GP_NONE32             */
	char *name;          /* synthetic name when no string                    */
	uint64_t count, launch, queue, exec, sync, no_api, no_gpu, sync_calls;
	uint64_t launch_raw; /* launch with CUPTI's own cost left in            */
	uint64_t bytes;      /* copies and sets: bytes moved, summed            */
	unsigned kinds;      /* GP_GKIND_* of its ops, or-ed                     */
	uint64_t sync_queue; /* part of sync: launches waiting on a full queue  */
	uint64_t pageable;   /* async copies that blocked on pageable memory     */
	uint64_t pageable_host; /* copies whose host side is pageable memory    */
	struct gp_hist hist;
	struct gp_rep_launch_cfg cfg; /* kernels: their launch configuration    */
};

struct gp_iterx {
	int64_t iter;
	uint64_t start, end, ops, launch, queue, exec, sync;
	uint64_t replayed;   /* launches replayed for counters in it (§20)      */
	int captured;        /* starts inside a capture window (or no windows)  */
	uint32_t tid;        /* the thread that wrote its mark                  */
};

/* NVTX push/pop ranges of one thread: pass 2 keeps the names (canonical,
 * at most 4096 deep), pass 1 only the depth and the outermost range. */
struct gp_nvtx_stack {
	uint32_t *names;
	size_t n, cap;
	uint64_t depth, depth0_start; /* pass 1 */
	uint32_t depth0_name;         /* pass 1: string id                 */
};

struct gp_an {
	struct gp_an_config cfg;
	int err;
	struct gp_strtab *strings;   /* cfg.strings, or own_strings            */
	struct gp_strtab own_strings;
	struct gp_map api_names;   /* domain<<16 | api_id -> string id        */
	struct gp_map threads;     /* tid -> string id                        */
	struct gp_rec_launch_cfg *cfgs; /* GP_REC_LAUNCH_CFG by id (pass 1; id 0
	                               = none seen), allocated at the first one */
	struct {
		int present;
		uint32_t name, ccmaj, ccmin, sms;
	} dev[256];
	/* stacks and symbols */
	uint64_t *pcs;
	size_t npcs, cappcs;
	struct gp_map stacks;      /* stack id -> offset<<16 | depth          */
	struct gp_map symbols;     /* pc -> string id                         */
	struct gp_map symnames;    /* pc -> canonical string (symbolize.c)    */
	struct gp_rec_module *modules; /* GP_REC_MODULE records, as read      */
	size_t nmodules, capmodules;
	/* pass-1 facts */
	uint64_t rec_count[GP_REC_TYPE_COUNT];
	uint64_t records;
	uint64_t t_first, t_last, win_start, win_stop;
	struct gp_rep_window *wins; /* capture windows (WINDOW marks), by start */
	size_t nwins, capwins;
	int windowed;              /* gp_an_set_windowed: use the windows     */
	int status[16];
	uint64_t startup_lost;     /* GP_STATUS_STARTUP_LOST values           */
	int exit_unsettled;        /* GP_STATUS_EXIT_UNSETTLED, worst value   */
	int window_unopened;       /* a GP_STATUS_WINDOW_UNOPENED was read    */
	uint32_t window_unopened_why; /* its detail string id (0 = none)      */
	struct gp_map drops;       /* source<<32 | tid -> cumulative          */
	double host_busy_w, host_proc_w, host_w, host_max;
	uint64_t host_runtime_ns, host_driver_ns, host_hook_ns, host_driver_direct;
	struct gp_an_edges edges;
	struct gp_clockmap clocks; /* GP_REC_CLOCK_PAIR, by time after prepare */
	int runtime_seen;          /* edges: CUPTI runtime records seen       */
	struct { int64_t iter; uint64_t ts; uint32_t tid; } *marks;
	size_t nmarks, capmarks;
	/* prepared */
	int hook_only, have_runtime, have_hooks;
	struct gp_iterx *iters;
	size_t niters;
	size_t iter_cache;
	/* pass 2 */
	struct gp_sync sync;
	struct gp_join join;
	struct gp_cost cost;
	struct gp_gpu_clock gclock;  /* pass 1 bounds it, pass 2 corrects     */
	struct gp_fold_line line;    /* arrived ops not folded yet             */
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
	uint64_t scan2_n;
	/* pass 2: the op hook just read, its join finished at the next record
	 * (gp_an_scan2): a hook's stack reference follows it, and an op that
	 * the hook completes must fold with that stack */
	struct gp_rec_api hook_defer;
	int hook_deferred;
	/* totals */
	uint64_t ops, ops_joined, ops_no_api, ops_no_gpu, ops_end_missing;
	uint64_t ops_no_hook; /* runtime call seen by CUPTI, by no hook (hooks present) */
	uint64_t hooks_unjoined, api_unjoined, evicted, launches_captured;
	/* launches CUPTI's range profiler replayed for their counters (hook op
	 * ids of GP_REC_COUNTER records, pass 1): never folded (join.c) */
	struct gp_map replayed;
	uint64_t replayed_ops, replayed_ns;
	uint64_t hooks_unjoined_cls[GP_API_CLASS_COUNT], api_unjoined_cls[GP_API_CLASS_COUNT];
	uint64_t launch, queue, exec, busy_sum;
	uint64_t launch_raw;         /* launch with CUPTI's own cost left in    */
};

/* --- shared by the core's files ------------------------------------------------ */

static inline int gp_an_is_sync_class(unsigned c)
{
	return c == GP_API_SYNC_DEVICE || c == GP_API_SYNC_STREAM || c == GP_API_SYNC_EVENT;
}

/* A call whose wait is only the part until earlier work ended (its own
 * transfer, or its own work after the wait, is not a wait). */
static inline int gp_an_is_implicit_sync(unsigned c)
{
	return c == GP_API_SYNC_IMPLICIT;
}

static inline int gp_an_is_copy_sync(unsigned c)
{
	return c == GP_API_MEMCPY_SYNC || c == GP_API_MEMSET_SYNC;
}

static inline int gp_an_is_op_class(unsigned c)
{
	return c == GP_API_LAUNCH || c == GP_API_MEMCPY_SYNC || c == GP_API_MEMCPY_ASYNC ||
	       c == GP_API_MEMSET_SYNC || c == GP_API_MEMSET_ASYNC || c == GP_API_GRAPH_LAUNCH;
}

/* Record a failure (the first one stays in an->err). -EINVAL is gp_map_put
 * refusing the reserved key UINT64_MAX: only a corrupt file holds such an
 * id or pc; that record is left out and the rest analysed. */
static inline void gp_an_fail(struct gp_an *an, int rc)
{
	if (rc && rc != -EINVAL && !an->err)
		an->err = rc;
}

#define GROW(arr, n, cap) GP_AN_GROW(arr, n, cap)

/* A slot of a pool (pending entries, hooks, waits) whose free slots are
 * threaded through next_free: the head of the free list, else a new slot at
 * the end. Sets idx; evaluates to 0, or -ENOMEM (idx unset). */
#define GP_AN_SLOT(arr, n, cap, free_head, idx)                                            \
	((free_head) != GP_NONE32 ? ((idx) = (free_head), (free_head) = (arr)[idx].next_free, 0) \
	 : GROW(arr, n, cap)      ? -ENOMEM                                                     \
				  : ((idx) = (uint32_t)(n)++, 0))

/* analysis_names.c */
uint32_t gp_an_canon(struct gp_an *an, const char *text, size_t len);
uint32_t gp_an_str(const struct gp_an *an, uint32_t id);
const char *gp_an_short(struct gp_an *an, uint32_t c);
/* The launch configuration of id `id`, or NULL (0, or none in the trace). */
const struct gp_rec_launch_cfg *gp_an_launch_cfg(const struct gp_an *an, uint32_t id);
uint32_t gp_an_nvtx_top(const struct gp_an *an, uint32_t tid);
/* What the thread's open NVTX ranges (any depth) say of the framework phase:
 * GP_PHASE_BACKWARD, GP_PHASE_OPTIMIZER, else 0; always 0 unless grouping
 * by phase (the scan is then skipped). */
#define GP_PHASE_BACKWARD 1
#define GP_PHASE_OPTIMIZER 2
uint8_t gp_an_nvtx_phase(const struct gp_an *an, uint32_t tid);
/* analysis_fold.c: an op arrives once, joined and complete (its group,
 * iteration, GPU-busy and the sync side are decided then, and the waits
 * offered it); it is folded into every aggregate and handed to the op sink
 * once, in arrival order, when no wait can still take time out of its
 * launch (docs/metrics.md §3, "Fold once"). Returns its sequence number in
 * the fold line (UINT64_MAX on ENOMEM). */
uint64_t gp_fold_arrive(struct gp_an *an, struct gp_an_op *op, uint32_t hook_stack, uint32_t nvtx_str,
			uint32_t name_str);
/* Finish: fold every op still in the line (every hold released before). */
void gp_fold_flush(struct gp_an *an);
/* ... and instead of folding it, count a launch replayed for counters, of
 * ns GPU time, whose call began at t: the run's and its iteration's. */
void gp_an_fold_replayed(struct gp_an *an, uint64_t t, uint64_t ns);

/* fold_line.c: the line's bookkeeping, below the waits. */
struct gp_fold_ent *gp_line_push(struct gp_an *an, uint64_t *seq); /* NULL: ENOMEM */
struct gp_fold_ent *gp_line_head(struct gp_an *an, int final); /* NULL: held, or empty */
void gp_line_pop(struct gp_an *an);
/* The op of sequence number seq while it is in the line, else NULL. */
struct gp_an_op *gp_line_op(struct gp_an *an, uint64_t seq);
/* Its launching hook's stack (0: none, or not in the line). */
uint32_t gp_line_stack(struct gp_an *an, uint64_t seq);
/* Keep op seq in the line for a wait that may take time out of its launch,
 * and let it go (the fold takes it once nothing holds it or an op before it). */
void gp_line_hold(struct gp_an *an, uint64_t seq);
void gp_line_release(struct gp_an *an, uint64_t seq);
/* Take w out of held op seq's launch and w_raw out of its launch with
 * CUPTI's cost left in (each floored at 0). */
void gp_line_less(struct gp_an *an, uint64_t seq, uint64_t w, uint64_t w_raw);
void gp_line_free(struct gp_an *an);

/* cupti_cost.c */
void gp_cost_scan1(struct gp_an *an, const union gp_rec *r);
void gp_cost_prepare(struct gp_an *an);
int gp_cost_own(struct gp_an *an, const union gp_rec *r);
void gp_cost_overhead(struct gp_an *an, const struct gp_rec_overhead *o);
uint64_t gp_cost_call(struct gp_an *an, const struct gp_rec_api *a);
void gp_cost_finish(struct gp_an *an, struct gp_rep *rep);
void gp_cost_free(struct gp_cost *c);

/* gpu_clock.c: pass 1 (api, gpu), after it (prepare), pass 2 (correct a
 * decoded GPU record in place), finish (rep->gpu_clock: 0 or -ENOMEM). */
void gp_gpu_clock_api(struct gp_an *an, uint8_t type, const struct gp_an_api *a);
void gp_gpu_clock_gpu(struct gp_an *an, uint8_t type, const struct gp_an_gpu *g);
void gp_gpu_clock_prepare(struct gp_an *an);
void gp_gpu_clock_correct(struct gp_an *an, struct gp_an_gpu *g);
int gp_gpu_clock_finish(const struct gp_an *an, struct gp_rep *rep);
void gp_gpu_clock_free(struct gp_gpu_clock *c);

/* sync.c */
void gp_sync_init(struct gp_sync *s);
void gp_sync_hook(struct gp_an *an, const struct gp_rec_api *a);
void gp_sync_api(struct gp_an *an, const struct gp_rec_api *a, uint64_t cupti);
void gp_sync_record(struct gp_an *an, const struct gp_rec_sync *r);
void gp_sync_stack_ref(struct gp_an *an, uint32_t op, uint32_t stack);
int gp_sync_extcorr(struct gp_an *an, const struct gp_rec_extcorr *e);
void gp_sync_early_ext(struct gp_an *an, uint64_t ext, uint32_t corr);
void gp_sync_overhead(struct gp_an *an, const struct gp_rec_overhead *o);
int gp_sync_cupti_late(struct gp_an *an, uint32_t corr, uint64_t ns, uint64_t end);
void gp_qfull_arrived(struct gp_an *an, const struct gp_an_op *op, uint64_t seq);
int gp_sync_arrived(struct gp_an *an, const struct gp_an_op *op, int64_t slot, uint32_t stack, uint64_t seq);
void gp_sync_finish(struct gp_an *an, struct gp_rep *rep);
void gp_sync_free(struct gp_sync *s);
/* ... the wait machinery queue_full.c charges through */
void gp_sync_activate(struct gp_an *an, struct gp_wait *w);
void gp_sync_expire(struct gp_an *an, int final);
const struct gp_recent *gp_sync_recent_at(const struct gp_an *an, size_t i);
size_t gp_sync_recent_after(const struct gp_an *an, uint64_t t);
void gp_sync_search(struct gp_an *an, struct gp_wait *w);

/* queue_full.c: launch-queue back-pressure (gp_qfull_arrived above is its
 * entry from the fold) */
void gp_qfull_finalize(struct gp_an *an, const struct gp_wait *w);
void gp_qfull_expire(struct gp_an *an, int final);
void gp_qfull_late(struct gp_an *an, struct gp_launch *L, uint64_t c0, uint64_t c1);

/* join.c */
void gp_join_init(struct gp_join *j);
void gp_join_hook(struct gp_an *an, const struct gp_rec_api *a, unsigned cls);
void gp_join_count_hook(struct gp_an *an, const struct gp_rec_api *a);
void gp_join_hook_seen(struct gp_an *an, const struct gp_rec_api *a);
/* The joins a hook added by gp_join_hook may complete (its ext corr's entry),
 * after its stack reference was read. */
void gp_join_hook_done(struct gp_an *an, const struct gp_rec_api *a);
void gp_an_hook_done(struct gp_an *an);
void gp_join_extcorr(struct gp_an *an, const struct gp_rec_extcorr *e);
void gp_join_api(struct gp_an *an, const struct gp_rec_api *a, uint64_t cupti);
int gp_join_cupti_late(struct gp_an *an, uint32_t corr, uint64_t ns);
void gp_join_gpu(struct gp_an *an, uint8_t type, const struct gp_an_gpu *v);
void gp_join_captured(struct gp_an *an, uint32_t op);
void gp_join_stack_ref(struct gp_an *an, uint32_t op, uint32_t stack);
void gp_join_evict(struct gp_an *an);
void gp_join_flush(struct gp_an *an);
uint32_t gp_join_os_tid(const struct gp_an *an, uint32_t cupti_tid);
void gp_join_free(struct gp_join *j);

/* symbolize.c: names for native pcs from the module files (libdw, loaded
 * at run time); after pass 1. */
void gp_sym_resolve(struct gp_an *an);
/* analysis_names.c: one frame's text (into buf when synthesised). */
const char *gp_an_frame_name(const struct gp_an *an, uint64_t pc, char *buf, size_t n);

#endif
