/*
 * rep.h — gp_rep, the report of one trace (filled by the analysis core's
 * gp_an_finish and the pipeline) or of several merged, and what is computed
 * from a report alone: merging, group totals, iteration statistics and rank
 * stragglers. Everything in a gp_rep is owned by it. Single-threaded.
 */
#ifndef GP_REPORT_REP_H
#define GP_REPORT_REP_H

#include <stddef.h>
#include <stdint.h>
#include "gp_format.h"
#include "report/util/stats.h"
#include "verdict.h"

/* A kernel operator's launch configuration (GP_REC_LAUNCH_CFG): the first
 * one its launches had; launches counts the launches with it, others those
 * with another (both 0: none recorded, as in traces before configurations). */
struct gp_rep_launch_cfg {
	uint32_t grid[3], block[3];
	uint32_t regs, static_smem, dynamic_smem;
	uint32_t sms;          /* SMs of the device it ran on (0 = unknown: the
	                          trace has no GP_REC_DEVICE for it)            */
	uint64_t launches, others;
};

static inline uint64_t gp_rep_cfg_blocks(const struct gp_rep_launch_cfg *c)
{
	return (uint64_t)c->grid[0] * c->grid[1] * c->grid[2];
}

/* A grid of fewer blocks than its device has SMs leaves the others idle. */
static inline int gp_rep_cfg_idle(const struct gp_rep_launch_cfg *c)
{
	return c->launches && c->sms && gp_rep_cfg_blocks(c) < c->sms;
}

/* c from a trace's record (one launch with it, on a device of sms SMs). */
void gp_rep_cfg_from_rec(struct gp_rep_launch_cfg *c, const struct gp_rec_launch_cfg *r, uint32_t sms);
/* s's launches added into d: d's configuration stays unless d had none. */
void gp_rep_cfg_add(struct gp_rep_launch_cfg *d, const struct gp_rep_launch_cfg *s);

struct gp_rep_group {
	char *name;            /* display key                                    */
	char *long_name;       /* demangled full name (kernel grouping) or = name */
	uint64_t count;
	uint64_t launch_ns, queue_ns, execute_ns, sync_ns;
	uint64_t no_api, no_gpu; /* ops whose launch / GPU times are missing     */
	uint64_t sync_calls;   /* blocking intervals charged to this group        */
	uint64_t bytes;        /* copies and sets: bytes moved                   */
	unsigned kinds;        /* GP_GKIND_* of its ops, or-ed (what advice fits) */
	uint64_t pageable;     /* async copies made blocking by pageable memory   */
	uint64_t pageable_host; /* copies whose host side is pageable memory (the
	                          trace's memory kinds): pinning can help them;
	                          0 for copies the trace shows pinned          */
	uint64_t sync_queue_ns; /* part of sync_ns: launches waiting on a full queue */
	struct gp_hist exec;   /* execute distribution                           */
	uint8_t bound;         /* enum gp_bound from its hardware counters (the
	                          roofline analysis sets it; 0 = none)          */
	uint8_t category;      /* category.h's id from long_name and kinds;
	                          GP_CAT_NONE unless grouped by kernel. Derived:
	                          a partial holds none, its loader recomputes it
	                          by the loading run's table (partial_rep.c)   */
	uint64_t launch_raw_ns; /* launch with CUPTI's own cost left in (= launch_ns
	                           when the report knows no such cost)          */
	struct gp_rep_launch_cfg cfg; /* kernels: their launch configuration  */
};

/* What an operator's ops are (gp_rep_group.kinds): kernels, copies, sets,
 * ops launched by a CUDA graph replay, hook-only calls. */
#define GP_GKIND_KERNEL GP_VERDICT_KIND_KERNEL
#define GP_GKIND_COPY   GP_VERDICT_KIND_COPY
#define GP_GKIND_SET    GP_VERDICT_KIND_SET
#define GP_GKIND_GRAPH  GP_VERDICT_KIND_GRAPH
#define GP_GKIND_OTHER  GP_VERDICT_KIND_OTHER

/* The sync a verdict weighs: waits on a full launch queue are the GPU
 * being busy, not sync points (metrics.md §5). */
static inline uint64_t gp_rep_verdict_sync(uint64_t sync_ns, uint64_t queue_ns)
{
	return sync_ns > queue_ns ? sync_ns - queue_ns : 0;
}

struct gp_rep_iter {
	int64_t iter;
	uint64_t start, end;   /* boundary marks (end = next mark or window end) */
	int open;              /* last iteration: ends at the window end, not at a mark */
	uint64_t ops;
	uint64_t launch_ns, queue_ns, execute_ns, sync_ns;
	uint64_t replayed;     /* launches replayed for counters in it: its
	                          duration holds their replays (metrics.md §20) */
};

/* A capture window (GP_REC_WINDOW START .. STOP / END_EARLY). */
struct gp_rep_window {
	uint64_t start, stop;
	int open;              /* no STOP mark: ends at the last record            */
	uint64_t ops, launch_ns, execute_ns; /* ops whose call began inside it */
	int64_t iter;          /* the START mark's iteration and thread: a window */
	uint32_t tid;          /* opened at that iteration's start when its mark
	                          was written by the same thread              */
	int64_t stop_iter;     /* ... the STOP mark's: closed at that one's     */
	uint32_t stop_tid;
};

struct gp_rep_callsite {
	char *name;
	char *stack; /* the first stack seen there, one frame a line; may be NULL */
	uint64_t calls, sync_ns;
};

struct gp_rep_kv {
	char *key, *value;
};

/* The aggregate result of one or more traces. Everything is owned. */
struct gp_rep {
	/* capture conditions */
	char *path;            /* trace file (or "N files")                       */
	struct gp_rep_kv *kv;  /* header key/values (host, cmdline, ...)           */
	size_t nkv;
	uint32_t clock_id, pid, version;
	uint64_t start_wall_ns, start_clock_ns; /* header: CLOCK_REALTIME and the
	                                           trace clock at open (0: none) */
	char **devices;        /* "0: NVIDIA H200 (cc 9.0, 132 SMs)"              */
	size_t ndevices;
	int cupti_ok, cupti_unavailable, hooks_absent, clock_calibrated, size_cap, forked;
	int live;              /* no footer and its writer still runs on this host */
	int complete;          /* footer present (every input)                    */
	uint64_t truncated_bytes;
	int32_t end_reason;    /* footer: 0, or the -errno that stopped writing   */
	uint64_t write_errors, lost_after_stop; /* footer: why / what was lost   */
	uint64_t startup_lost; /* calls lost at start-up (GP_STATUS_STARTUP_LOST),
	                          also among dropped_ring                        */
	int exit_unsettled;    /* enum gp_exit_unsettled, 0 = finish waited     */
	int window_unopened;   /* GP_STATUS_WINDOW_UNOPENED: the window never opened */
	char window_unopened_why[640]; /* the library's reason ("" = none given) */
	double host_busy_pct, proc_cpu_pct; /* mean over host samples, -1 = none */
	double host_busy_max_pct;
	/* counts */
	uint64_t records;
	uint64_t rec_count[GP_REC_TYPE_COUNT];
	uint64_t dropped_ring, dropped_cupti, dropped_write, dropped_records;
	uint64_t ops, ops_joined, ops_no_api, ops_no_gpu, ops_end_missing;
	uint64_t ops_no_hook;  /* ops whose runtime call CUPTI saw but no hook did,
	                          in a trace with hooks (reported for attach)   */
	uint64_t hooks_unjoined, api_unjoined, evicted;
	uint64_t launches_captured; /* hooked launches made during stream capture
	                               (graph nodes, no GPU op of their own)    */
	uint64_t ops_replayed, replayed_ns; /* launches replayed for hardware
	                               counters, left out of every phase, and
	                               their (replay) GPU time (metrics.md §20) */
	double join_coverage;  /* ops_joined / ops (1 when no ops)                */
	/* window */
	uint64_t t_first, t_last, wall_ns;
	uint64_t gpu_busy_ns, gpu_idle_ns, gpu_busy_sum_ns, gpu_busy_late;
	uint64_t host_api_ns, covered_ns, unattributed_ns;
	uint64_t launch_ns, queue_ns, execute_ns, sync_ns;
	uint64_t sync_unattributed_ns, sync_unattributed_calls;
	uint64_t lost_by_class[GP_API_CLASS_COUNT]; /* calls whose GPU record never
	                                               came (hooked or CUPTI API) */
	uint64_t waits_late;   /* ops that arrived after their wait was charged,
	                          and queue-full records too late to apply */
	uint64_t queue_waits_late; /* ... of which COMMAND_BUFFER_FULL records  */
	uint64_t queue_full_calls, queue_full_ns; /* launches that waited on a full
	                                             launch queue (part of sync_ns) */
	uint64_t sync_calls[GP_API_CLASS_COUNT], sync_kind_ns[GP_API_CLASS_COUNT];
	/* tables */
	struct gp_rep_group *groups;
	size_t ngroups;
	struct gp_rep_window *windows; /* capture windows; wall is their sum */
	size_t nwindows;
	struct gp_rep_iter *iters;
	size_t niters;
	struct gp_rep_callsite *callsites; /* sync call sites, by sync_ns desc */
	size_t ncallsites;
	/* multi-trace */
	struct gp_rep *ranks;  /* per-input reports (merged reports only)          */
	size_t nranks;
	int group_by;
	/* CUPTI's own cost in traced calls, taken out of the phases
	 * (metrics.md §3, "CUPTI's own cost") */
	struct gp_rep_cupti {
		int source;        /* 0 not known, 1 CUPTI's overhead records,
		                      2 the library's calibration              */
		uint64_t calls;    /* traced calls it was known for             */
		uint64_t in_calls_ns;          /* CUPTI's time inside calls      */
		uint64_t launch_ns, sync_ns;   /* ... taken out of launch / waits */
		int calibrated;    /* the trace has a calibration record         */
		uint32_t calib_flags, calib_rt_ns, calib_drv_ns, calib_launch_ns;
		uint64_t calib_dur_ns; /* the calibration's own length          */
		uint64_t calib_start;  /* ... and its start (trace clock)       */
	} cupti;
	uint64_t launch_raw_ns; /* launch with CUPTI's own cost left in          */
	/* the offset of CUPTI's GPU timestamps from the host clock, per device
	 * with GPU records joined to calls (metrics.md §2, "The GPU's clock") */
	struct gp_rep_gpu_clock {
		uint8_t device;
		int has_lo, has_hi;    /* a bound found on that side             */
		int raw;               /* not applied (GPUPHASE_REPORT_GPU_CLOCK=raw) */
		int64_t lo_ns, hi_ns;  /* the bound over the run                 */
		int64_t offset_ns;     /* the estimate where the bound is tightest */
		int64_t first_ns, last_ns; /* ... at its first and last point    */
		uint64_t span_ns;      /* GPU time between those points          */
		uint64_t ops, waits, points; /* upper bounds, lower bounds, points */
	} *gpu_clock;
	size_t ngpu_clock;
};

void gp_rep_free(struct gp_rep *rep);
/* Merge several per-trace reports into dst (groups by name, sums, hist
 * merge); dst->ranks takes ownership of the inputs. */
int gp_rep_merge(struct gp_rep *dst, struct gp_rep *src, size_t n);
/* Are these traces one job (metrics.md §9): every header carries the same
 * job_id, or every one a rank, distinct, with the same world_size? */
int gp_rep_one_job(const struct gp_rep *const *reps, size_t n);

/* launch + execute + sync of an operator. */
uint64_t gp_rep_group_total(const struct gp_rep_group *g);
/* Per-iteration p50 / p99 of durations (the open last iteration and those
 * holding launches replayed for counters left out); flags outliers,
 * duration > factor * p50 with at least 3 such ones (outlier: array of
 * niters, or NULL). */
void gp_rep_iter_stats(const struct gp_rep *rep, double factor, uint64_t *p50, uint64_t *p99, uint8_t *outlier);
/* A rank's own work: launch + execute, leaving out communication kernels
 * (names containing "nccl", any case), whose execution includes waiting. */
uint64_t gp_rep_rank_busy(const struct gp_rep *r);
/* Straggler flags per rank (array of nranks); returns the median busy. */
uint64_t gp_rep_stragglers(const struct gp_rep *rep, double pct, uint8_t *flag);

#endif
