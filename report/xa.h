/*
 * xa.h — the report's second-level analyses ("extra analyses", issue 9):
 * CUDA graph attribution (graphs.c), trends inside the window (trends.c),
 * host conditions and self-overhead (hostload.c), stages of the run
 * (stages.c), and their shared intake (xa.c). `gpuphase-report stability`
 * (stability.c) reuses the core analysis over several traces.
 *
 * Protocol, for one trace, alongside the core analyser (analysis.h):
 *   xa = gp_xa_new(group_by);
 *   pass 2: for every record group, after gp_an_scan2: gp_xa_record(xa, an, rec);
 *           and from the core's op sink: gp_xa_op(xa, op);
 *   after gp_an_finish(an, rep): gp_xa_finish(xa, an, rep);   (before gp_an_free)
 *   gp_xa_print(f, xa, rep, format, outlier_factor);  any time after finish
 *   gp_xa_free(xa);
 *
 * Memory: one compact entry per joined op (struct gp_xa_op, 64 bytes) plus
 * per-graph-node, per-sample and per-(operator, iteration) tables; the
 * core's streaming guarantee does not extend to these analyses.
 * Single-threaded; functions return 0 or -ENOMEM; nothing prints except
 * gp_xa_print (to the FILE given). docs/metrics.md defines every number.
 */
#ifndef GP_REPORT_XA_H
#define GP_REPORT_XA_H

#include <stdio.h>
#include <stdint.h>
#include "analysis.h"
#include "map.h"
#include "output.h"

struct gp_xa_op {
	uint32_t group;        /* index into rep->groups                        */
	uint32_t name;         /* index into xa->names (the op's short name)    */
	int64_t iter;          /* iteration number, -1 before the first mark    */
	uint64_t t0;           /* api_start when known, else gpu_start          */
	uint64_t api_start, api_end, gpu_start, gpu_end;
	uint64_t launch_ns, execute_ns;
	uint32_t corr, tid;
	uint8_t kind, api_class, has_api, has_gpu;
	uint32_t pad;
};

/* A graph node captured from a stream (GP_GRAPH_CAPTURED). */
struct gp_xa_cap {
	uint64_t node;
	uint32_t graph, op, tid;
	uint64_t ts;
	uint32_t nvtx;         /* string id of the innermost NVTX range, or 0  */
	uint32_t stack;        /* stack id of the hooked call, or 0            */
};

/* A kernel replayed by a graph launch (kernel + GP_GRAPH_OP records). */
struct gp_xa_gk {
	uint32_t corr, graph, name_str;
	uint64_t node, gpu_start, gpu_end;
};

struct gp_xa_host {
	uint64_t ts, interval_ns, cupti_ns;
	uint32_t busy_pm, proc_pm;
};

/* A host API call that is not an op (allocations, frees, ...). */
struct gp_xa_call {
	uint64_t start, dur;
	uint32_t name; /* index into xa->names */
};

/* Per-tid NVTX push/pop stack (string ids). */
struct gp_xa_nvtx {
	uint32_t *names;
	size_t n, cap;
	uint32_t depth0_name; /* open top-level range (stages) */
	uint64_t depth0_start;
};

/* A closed top-level NVTX range (stages). */
struct gp_xa_range {
	uint64_t start, end;
	uint32_t name; /* index into xa->names */
};

struct gp_xa {
	int group_by;
	int err;
	/* interned display names */
	char **names;
	size_t nnames, capnames;
	struct gp_map name_by_hash;
	/* ops */
	struct gp_xa_op *ops;
	size_t nops, capops;
	/* NVTX */
	struct gp_map nvtx_by_tid;
	struct gp_xa_nvtx *nvtx;
	size_t nnvtx, capnvtx;
	struct gp_xa_range *ranges;
	size_t nranges, capranges;
	/* graphs */
	struct gp_xa_cap *caps;
	size_t ncaps, capcaps;
	struct gp_map cap_by_node;    /* captured node id -> index in caps      */
	struct gp_map clone_node;     /* cloned node id -> captured node id     */
	struct gp_map clone_graph;    /* cloned graph id -> captured graph id   */
	struct gp_xa_gk *gks;
	size_t ngks, capgks;
	struct gp_map gk_last;        /* corr -> index of a kernel awaiting its node record */
	struct gp_map glaunch_dur;    /* graph-launch API corr -> duration ns   */
	struct gp_map op_stack;       /* hook op id -> stack id                 */
	struct gp_map stack_pc;       /* stack id -> innermost pc               */
	struct gp_map sym;            /* pc -> string id                        */
	uint64_t glaunch_calls, glaunch_ns;
	/* host conditions */
	struct gp_xa_host *hosts;
	size_t nhosts, caphosts;
	int64_t hook_cost_ns;         /* -1 = not measured by the library       */
	int64_t proc_start;           /* trace-clock ns, -1 = unknown           */
	int64_t win_iter;             /* iteration at the first window start, -1 = none */
	uint64_t hook_calls;          /* hook records in the trace              */
	int runtime_seen;
	/* stages */
	struct gp_xa_call *calls;
	size_t ncalls, capcalls;
	uint64_t first_api, last_ts;
	/* results (gp_xa_finish) */
	int finished;
};

struct gp_xa *gp_xa_new(int group_by);
void gp_xa_free(struct gp_xa *xa);
int gp_xa_record(struct gp_xa *xa, const struct gp_an *an, const union gp_rec *rec);
void gp_xa_op(struct gp_xa *xa, const struct gp_an_op *op);
int gp_xa_finish(struct gp_xa *xa, const struct gp_an *an, const struct gp_rep *rep);
/* Write every section (text or markdown; nothing for csv/json). Returns 0
 * or -EIO. */
int gp_xa_print(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, const struct gp_out_opts *o);

/* Intern a display name; index or UINT32_MAX on ENOMEM. */
uint32_t gp_xa_name(struct gp_xa *xa, const char *s);

/* Sections (each prints nothing when it has nothing to say). */
void gp_xa_print_graphs(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, int md);
void gp_xa_print_trends(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, const struct gp_out_opts *o, int md);
void gp_xa_print_host(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, int md);
void gp_xa_print_stages(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, int md);

/* Time formatting shared by the sections ("12.3us", "4.56ms"). */
const char *gp_xa_fmt_ns(double ns, char *buf, size_t n);

/* `gpuphase-report stability RUN1 RUN2 ...` (argv[0] = "stability"). Returns
 * the exit status. */
int gp_stability_main(int argc, char **argv);

#endif
