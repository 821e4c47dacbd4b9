/*
 * xa.h — the report's second-level analyses ("extra analyses", issue 9):
 * CUDA graph attribution (graphs.c), trends inside the window (trends.c),
 * host conditions and self-overhead (hostload.c), stages of the run
 * (stages.c), and their shared intake (xa.c). `gpuphase-report stability`
 * (stability.c) reuses the core analysis over several traces.
 *
 * Protocol, for one trace, alongside the core analyser (analysis.h):
 *   xa = gp_xa_new();
 *   pass 1: for every record group, after gp_an_scan1: gp_xa_scan1(xa, rec);
 *   after gp_an_prepare(an): gp_xa_prepare(xa, an);
 *   pass 2: for every record group, after gp_an_scan2: gp_xa_record(xa, an, rec);
 *           and from the core's op sink: gp_xa_op(xa, op);
 *   after gp_an_finish(an, rep): gp_xa_finish(xa, an, rep);   (before gp_an_free)
 *   gp_xa_print(f, xa, rep, opts);  any time after finish
 *   gp_xa_free(xa);
 *
 * Memory follows what the core's does — operators, iterations, host samples,
 * top-level NVTX ranges (capped), graph nodes and graph launches — never the
 * number of ops: every op is folded into per-operator, per-(iteration,
 * operator) and per-(stage, operator) sums as it arrives. Pass 1 gathers what
 * the per-op folding needs first (samples, iteration marks, stage edges).
 * Single-threaded; functions return 0 or -ENOMEM; nothing prints except
 * gp_xa_print (to the FILE given). docs/metrics.md §12-16 define the numbers.
 */
#ifndef GP_REPORT_XA_H
#define GP_REPORT_XA_H

#include <stdio.h>
#include <stdint.h>
#include "analysis.h"
#include "fmt.h"
#include "map.h"
#include "output.h"

/* Per core operator (group index): drift fit over its calls in arrival order
 * (x = call index, y = execute ns) and launch time taken on a busy host. */
struct gp_xa_grp {
	uint64_t n;
	double sx, sy, sxx, sxy, syy;
	uint64_t launch_all, launch_busy, calls_all, calls_busy;
	uint64_t normal_ns;    /* launch + execute in closed non-outlier iterations */
};

/* A graph node captured from a stream (GP_GRAPH_CAPTURED). */
struct gp_xa_cap {
	uint64_t node;
	uint32_t graph, op, tid;
	uint64_t ts;
	uint32_t nvtx;         /* string id, after finish names index + 1 (0 = none) */
	uint32_t stack;        /* after finish: call-site names index + 1 (0 = none) */
};

/* A replayed (instantiated) node: sums of its kernels. */
struct gp_xa_rnode {
	uint64_t node;         /* instantiated node id                          */
	uint32_t graph;        /* instantiated graph id                         */
	uint32_t name;         /* kernel name string id, after finish names index */
	uint64_t count, exec_ns;
};

/* An instantiated graph: its launches (corr set) and sums. */
struct gp_xa_rgraph {
	uint32_t graph;
	struct gp_map launches; /* corr -> 1 */
	uint64_t launch_ns, exec_ns, kernels;
};

/* A graph kernel waiting for its GP_GRAPH_OP record. */
struct gp_xa_gk {
	uint32_t corr, name;
	uint64_t start, end;
};

struct gp_xa_host {
	uint64_t ts, interval_ns, cupti_ns;
	uint32_t busy_pm, proc_pm;
};

/* Per-tid NVTX push/pop stack (string ids). */
struct gp_xa_nvtx {
	uint32_t *names;
	size_t n, cap;
	uint64_t depth0_start;
};

/* A closed top-level NVTX range (stages). */
struct gp_xa_range {
	uint64_t start, end;
	uint32_t name; /* string id; after prepare: names index */
};

#define GP_XA_MAX_STAGES 16
struct gp_xa_stage {
	const char *name;      /* fixed text or xa->names entry                 */
	uint64_t start, end, time; /* time: covered time (sum for NVTX names)   */
	size_t count;          /* NVTX ranges / warm-up iterations              */
	uint32_t nvtx;         /* names index of an NVTX stage, UINT32_MAX else */
};

struct gp_xa_mark {
	uint64_t ts;
	int64_t iter;
};

struct gp_xa {
	int err;
	/* interned display names */
	char **names;
	size_t nnames, capnames;
	struct gp_map name_by_hash;
	struct gp_map api_name;       /* runtime api id -> names index          */
	/* per operator */
	struct gp_xa_grp *grp;
	size_t ngrp;
	struct gp_map iter_class;     /* iteration number -> 1 normal, 2 outlier (closed ones) */
	size_t nnormal;               /* closed non-outlier iterations          */
	size_t nnormal_seen;          /* ... of them with ops in the trace      */
	double outlier_factor;        /* --outlier-factor (default 1.5)         */
	struct gp_map iter_grp;       /* outlier iter << 20 | group -> launch + execute */
	struct gp_map stage_grp;      /* stage << 32 | group -> launch + execute */
	struct gp_map stage_call;     /* stage << 32 | name -> host time        */
	/* NVTX (pass 2: capture-time ranges per thread; pass 1: top-level ranges) */
	struct gp_map nvtx_by_tid;
	struct gp_xa_nvtx *nvtx;
	size_t nnvtx, capnvtx;
	struct gp_map nvtx1_by_tid;
	struct gp_xa_nvtx *nvtx1;
	size_t nnvtx1, capnvtx1;
	struct gp_xa_range *ranges;
	size_t nranges, capranges;
	int ranges_off;               /* too many ranges or names: no NVTX stages */
	/* graphs */
	struct gp_xa_cap *caps;
	size_t ncaps, capcaps;
	struct gp_map cap_by_node;    /* captured node id -> index in caps      */
	struct gp_map clone_node;     /* cloned node id -> captured node id     */
	struct gp_map clone_graph;    /* cloned graph id -> captured graph id   */
	struct gp_xa_gk *gks;         /* graph kernels awaiting their node record */
	size_t ngks, capgks;
	struct gp_map gk_by_corr;     /* corr -> index in gks                   */
	struct gp_xa_rnode *rnodes;
	size_t nrnodes, caprnodes;
	struct gp_map rnode_by_id;    /* instantiated node id -> index          */
	struct gp_xa_rgraph *rgraphs;
	size_t nrgraphs, caprgraphs;
	struct gp_map rgraph_by_id;   /* instantiated graph id -> index         */
	struct gp_map glaunch_dur;    /* graph-launch API corr -> duration ns   */
	struct gp_map op_stack;       /* captured hook op id -> stack id        */
	struct gp_map stack_pc;       /* stack id -> innermost pc               */
	struct gp_map sym;            /* pc -> string id                        */
	/* host conditions */
	struct gp_xa_host *hosts;
	size_t nhosts, caphosts;
	int64_t hook_cost_ns;         /* -1 = not measured by the library       */
	int64_t proc_start;           /* trace-clock ns, -1 = unknown           */
	int64_t win_iter;             /* iteration at the first window start, -1 = none */
	uint64_t win_start;           /* time of that window start              */
	struct gp_map iter_seen;      /* iteration number -> 1 when it has ops  */
	size_t settled_iter;          /* warm-up: iterations before settling (0 = none) */
	uint64_t hook_calls;          /* hook records in the trace              */
	/* stage edges (pass 1) */
	int runtime_seen;
	uint64_t first_api, first_launch, last_kernel, last_ts;
	struct gp_xa_mark *marks;
	size_t nmarks, capmarks;
	struct gp_xa_stage stages[GP_XA_MAX_STAGES];
	size_t nstages;
	int nvtx_stages;
	uint64_t t_start, t_end;
	int finished;
};

struct gp_xa *gp_xa_new(void);
void gp_xa_free(struct gp_xa *xa);
int gp_xa_scan1(struct gp_xa *xa, const union gp_rec *rec);
int gp_xa_prepare(struct gp_xa *xa, const struct gp_an *an);
int gp_xa_record(struct gp_xa *xa, const struct gp_an *an, const union gp_rec *rec);
void gp_xa_op(struct gp_xa *xa, const struct gp_an_op *op);
int gp_xa_finish(struct gp_xa *xa, const struct gp_an *an, const struct gp_rep *rep);
/* Write every section (text or markdown; nothing for csv/json). Returns 0
 * or -EIO. */
int gp_xa_print(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, const struct gp_out_opts *o);

/* Intern a display name; index or UINT32_MAX on ENOMEM. */
uint32_t gp_xa_name(struct gp_xa *xa, const char *s);
/* Stage index of time t (prepare computed the stages), or -1. */
int gp_xa_stage_of(const struct gp_xa *xa, uint64_t t);
/* stages.c: compute the stages from the pass-1 edges (called by prepare). */
void gp_xa_stages_prepare(struct gp_xa *xa);

/* Sections (each prints nothing when it has nothing to say). */
void gp_xa_print_graphs(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, int md);
void gp_xa_print_trends(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, const struct gp_out_opts *o, int md);
void gp_xa_print_host(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, int md);
void gp_xa_print_stages(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, int md);

/* The same sections as JSON values (docs/report-json.md "analyses[]"):
 * stages and host_conditions and trends are objects, cuda_graphs an array.
 * Numbers that are not finite are written as null. */
void gp_xa_json_stages(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep);
void gp_xa_json_host(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep);
void gp_xa_json_trends(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep, const struct gp_out_opts *o);
void gp_xa_json_graphs(FILE *f, const struct gp_xa *xa, const struct gp_rep *rep);


/* `gpuphase-report stability RUN1 RUN2 ...` (argv[0] = "stability"). Returns
 * the exit status. */
int gp_stability_main(int argc, char **argv);

#endif
