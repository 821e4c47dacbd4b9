/*
 * agent.h — `gpuphase-agent` (run as `gpuphase agent`), the Prometheus
 * sidecar: its per-process counters and the functions of its files.
 *
 *   agent.c          the command: options, the poll loop, /metrics over HTTP
 *                    (libmicrohttpd), the snapshot the HTTP thread serves
 *   agent_procs.c    finding capturing processes (control sockets), their
 *                    windows directories, the closed windows to reduce, the
 *                    dead ones kept a while and then forgotten
 *   agent_reduce.c   one window file through the report library into a
 *                    process's counters (gp_pipeline, no text round trip)
 *   agent_state.c    the state file: every process's counters and last
 *                    reduced window, written atomically, read at start
 *   agent_metrics.c  the counters as Prometheus text exposition
 *
 * Threads: the poll loop owns every struct below; the HTTP thread reads only
 * the rendered snapshot, under agent.c's lock. Invariants: a counter only
 * grows while its process is known (a restart reads it back from the state
 * file); a window is added once (its SEQ is above last_seq, and last_seq is
 * saved before the file is deleted); a process has at most top_n operator
 * series of its own, every other operator goes to operator="other" of its
 * category; likewise at most top_n call-site series of its own, every
 * other site's waits go to site="other".
 */
#ifndef GP_CLI_AGENT_H
#define GP_CLI_AGENT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Histogram bucket upper bounds, in seconds (agent_metrics.c), + Inf. */
#define GP_AGENT_NBUCKETS 20
extern const double gp_agent_bucket_s[GP_AGENT_NBUCKETS];

enum gp_agent_phase { GP_AGENT_LAUNCH, GP_AGENT_QUEUE, GP_AGENT_EXECUTE, GP_AGENT_SYNC, GP_AGENT_NPHASES };
extern const char *const gp_agent_phase_name[GP_AGENT_NPHASES];

/* A histogram: counts per bucket (not cumulative; the last is +Inf), the
 * observations and their sum. */
struct gp_agent_hist {
	uint64_t bucket[GP_AGENT_NBUCKETS + 1];
	uint64_t count, sum_ns;
};
void gp_agent_hist_add(struct gp_agent_hist *h, uint64_t ns);

/* One (category, operator) of one process. */
struct gp_agent_series {
	char *op;              /* operator name, or "other"                      */
	char *category;        /* report/core/category.c's name, or "none"       */
	uint64_t ops;
	uint64_t phase_ns[GP_AGENT_NPHASES];
	struct gp_agent_hist exec, sync; /* per op execute; per charged wait */
};

/* One call site where host threads blocked waiting on the GPU (the
 * report's sync call sites: the blocking call's innermost frame outside
 * the CUDA libraries), or "other". */
struct gp_agent_site {
	char *name;
	uint64_t waits, sync_ns;
};

/* One capturing process: pid + its start time (/proc/PID/stat field 22, in
 * clock ticks) tell a pid reused by another process apart. */
struct gp_agent_proc {
	long pid;
	unsigned long long start;
	char dir[PATH_MAX];    /* its windows directory ("" until known)         */
	uint64_t last_seq;     /* the last window reduced (or missed)            */
	uint64_t windows, missed; /* windows reduced; windows gone before read   */
	uint64_t wall_ns, busy_ns, profiler_ns; /* captured wall, GPU busy, the
	                          profiler's own time (CUPTI's in traced calls) */
	double overhead_last;  /* profiler / wall of the last window reduced     */
	uint64_t dropped[3];   /* ring, cupti, write: the highest seen (the trace
	                          counts drops since the process started)       */
	int alive;             /* its socket answered at the last poll           */
	time_t dead_since;     /* when it was first seen gone (0: alive)         */
	size_t named;          /* operator series of its own (<= top_n)          */
	struct gp_agent_series *s;
	size_t ns, cap;
	size_t named_sites;    /* call-site series of its own (<= top_n)         */
	struct gp_agent_site *site;
	size_t nsite, site_cap;
};

struct gp_agent {
	char ctl[PATH_MAX];    /* the control directory                          */
	char state_path[PATH_MAX + 32];
	size_t top_n;          /* operators (and call sites) with series of their
	                          own, per process                              */
	int keep_windows;      /* 1: leave reduced window files in place         */
	unsigned forget_s;     /* a dead process's series kept this long          */
	struct gp_agent_proc *p;
	size_t np, cap;
	uint64_t polls, reduce_errors;
};

/* agent_procs.c: one pass: find processes, reduce their new closed windows,
 * save the state after each, forget the long dead. */
void gp_agent_procs_poll(struct gp_agent *a);
struct gp_agent_proc *gp_agent_proc_get(struct gp_agent *a, long pid, unsigned long long start);
void gp_agent_proc_free(struct gp_agent_proc *p);

/* agent_reduce.c: add window file path to p. 0, or -errno (err says why). */
int gp_agent_reduce(struct gp_agent *a, struct gp_agent_proc *p, const char *path, char *err, size_t n);
struct gp_agent_series *gp_agent_series_get(struct gp_agent_proc *p, const char *category, const char *op);
struct gp_agent_site *gp_agent_site_get(struct gp_agent_proc *p, const char *name);

/* agent_state.c: 0 or -errno. A missing file is an empty state. */
int gp_agent_state_save(const struct gp_agent *a);
int gp_agent_state_load(struct gp_agent *a, char *err, size_t n);

/* agent_metrics.c: the exposition text (malloc'ed, NUL-terminated) or NULL. */
char *gp_agent_metrics_render(const struct gp_agent *a, size_t *len);

#endif
