/*
 * gp_config.h — the GPUPHASE_* configuration: the parsed form (struct
 * gp_config), the one table of variables (config.c), its parser and the
 * output-path pattern expansion. Pure: no globals written, nothing printed
 * (diagnostics come back as text), so the same parser serves the library
 * (lib.c, at start) and the `gpuphase` command (cli/record.c, before it runs
 * anything) — one grammar. docs/configuration.md holds the same table;
 * test_lib_config checks that the two agree.
 *
 * Threads: any; nothing is shared. Errors: 0 or -errno.
 */
#ifndef GP_CONFIG_H
#define GP_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "gp_collector.h"

enum gp_win_mode { GP_WINMODE_ALL = 0, GP_WINMODE_ITERS, GP_WINMODE_TIME, GP_WINMODE_TRIGGER };
enum gp_marker { GP_MARKER_SYNC = 0, GP_MARKER_KERNEL, GP_MARKER_NVTX, GP_MARKER_PROFILER };
enum gp_stacks { GP_STACKS_OFF = 0, GP_STACKS_SYNC, GP_STACKS_LAUNCH, GP_STACKS_ALL };
enum gp_log_level { GP_LOG_OFF = 0, GP_LOG_ERROR, GP_LOG_INFO, GP_LOG_DEBUG };
/* GPUPHASE_COUNTERS: which kernels get hardware counters (counters.c) */
enum gp_counters_mode { GP_COUNTERS_OFF = 0, GP_COUNTERS_TOP, GP_COUNTERS_KERNEL };

#define GP_PATH_MAX 4096
/* The CUPTI library loaded when GPUPHASE_CUPTI_LIB is not set: its absence
 * is the ordinary hook-only case (info); a library the user named that cannot
 * be loaded costs all GPU timing and is an error. */
#define GP_CUPTI_LIB_DEFAULT "libcupti.so.13"
#define GP_PATTERN_MAX 512
/* The trace's path pattern when GPUPHASE_OUTPUT is not set: outside a job,
 * and inside one (a launcher gave a job id, gp_config_job): one directory
 * per job, one file per rank. */
#define GP_CONFIG_OUTPUT_DEFAULT "gpuphase-%h-%p.gpht"
#define GP_CONFIG_OUTPUT_JOB "gpuphase-%j/gpuphase-%j-r%r.gpht"

/* GPUPHASE_CUPTI: what CUPTI records, from cheapest to richest (cupti.c
 * applies it; docs/configuration.md "CUPTI modes"). Kernel, memcpy and memset
 * activity is always on when CUPTI is. */
enum gp_cupti_api {
	GP_CUPTI_API_OFF = 0,  /* no API records of this layer                 */
	GP_CUPTI_API_NEEDED,   /* only the cbids the report uses (per cbid)     */
	GP_CUPTI_API_ALL       /* the activity kind: every call                 */
};
enum gp_cupti_ext {
	GP_CUPTI_EXT_OFF = 0,  /* no external correlation: joined by thread + time */
	GP_CUPTI_EXT_SYNC,     /* pushed around synchronizing calls that take a stack */
	GP_CUPTI_EXT_ALL       /* pushed around every hooked call              */
};
struct gp_cupti_mode {
	uint8_t runtime, driver; /* enum gp_cupti_api                          */
	uint8_t extcorr;         /* enum gp_cupti_ext                          */
	uint8_t sync, overhead;  /* SYNCHRONIZATION / OVERHEAD kinds, 0 or 1   */
	int8_t per_thread;       /* PER_THREAD_ACTIVITY_BUFFER: -1 CUPTI's default */
	uint32_t buffer_bytes;   /* each activity buffer handed to CUPTI       */
	uint32_t flush_ms;       /* cuptiActivityFlushPeriod, 0 = not set      */
};
/* The named modes, cheapest first; GPUPHASE_CUPTI=1 means "lean". */
#define GP_CUPTI_MODE_DEFAULT "lean"
#define GP_CUPTI_BUF_DEFAULT (1u << 20)
/* GPUPHASE_WINDOW_KEEP_BYTES: the duty cycle's windows directory cap
 * (docs/always-on.md), and the least it may be. */
#define GP_KEEP_BYTES_DEFAULT GP_COLLECTOR_KEEP_DEFAULT
#define GP_KEEP_BYTES_MIN (64ull << 10)
/* GPUPHASE_WINDOW=every=D without duration=: windows of D / this (every=60s
 * captures 1 s a minute; docs/always-on.md says why). */
#define GP_DUTY_DEFAULT_DIVISOR 60

struct gp_config {
	int disable;
	char output[GP_PATH_MAX];       /* pattern, validated                  */
	int output_set;                 /* GPUPHASE_OUTPUT given (else the
	                                   default of gp_config_output)         */
	enum gp_win_mode win_mode;
	uint64_t skip, iters, repeat;   /* GP_WINMODE_ITERS; repeat >= 1       */
	uint64_t delay_ns, duration_ns; /* GP_WINMODE_TIME                     */
	uint64_t every_ns;              /* GP_WINMODE_TIME: a window each every_ns
	                                   (duty cycle, its own file each); 0 = one */
	uint64_t keep_bytes;            /* duty cycle: the windows directory's cap */
	char window_text[GP_PATTERN_MAX];
	enum gp_marker marker;
	char marker_arg[GP_PATTERN_MAX]; /* kernel glob or nvtx range name      */
	char marker_text[GP_PATTERN_MAX];
	enum gp_stacks stacks;
	uint32_t stack_depth;
	enum gp_log_level log_level;
	char log_file[GP_PATH_MAX];     /* "" = stderr                         */
	uint32_t ring_records;          /* 0 = collector default               */
	uint32_t flush_ms;
	uint64_t max_bytes;
	int cupti;                      /* 0: hook-only by request             */
	struct gp_cupti_mode cupti_mode; /* what CUPTI records when cupti = 1   */
	char cupti_lib[GP_PATH_MAX];    /* GP_CUPTI_LIB_DEFAULT unless set      */
	int cupti_calibrate;            /* -1 auto (when CUPTI gives no overhead
	                                   records), 0 never, 1 always          */
	char control_dir[GP_PATH_MAX];  /* "" = /tmp/gpuphase-<uid>            */
	int follow_fork;
	enum gp_counters_mode counters; /* GPUPHASE_COUNTERS                   */
	uint32_t counters_top;          /* top=N: the N kernels with the most GPU
	                                   time in the warm-up                  */
	uint32_t counters_warmup;       /* warmup=L launches before ranking      */
	uint32_t counters_samples;      /* samples=M sampled launches a kernel  */
	uint32_t counters_skip;         /* skip=K launches of a kernel left alone
	                                   before the first sample              */
	char counters_kernels[GP_PATH_MAX]; /* kernel=GLOB;GLOB...: ';' separates */
	char counters_text[GP_PATH_MAX + 64]; /* the value as given (trace header) */
};

/* One row of the GPUPHASE_* table (config.c), exposed for the docs check. */
struct gp_config_var {
	const char *name;     /* "GPUPHASE_WINDOW"                             */
	const char *def;      /* default, as text                              */
	const char *accepted; /* what is accepted (the error message tail)     */
	const char *doc;      /* one-line description                          */
	int (*parse)(const char *value, struct gp_config *cfg);
};
extern const struct gp_config_var gp_config_vars[];
extern const size_t gp_config_nvars;

/* Fill cfg with defaults, then apply every GPUPHASE_* entry of envp. Returns
 * 0, or -EINVAL with the one-line diagnostic ("gpuphase: GPUPHASE_X='v':
 * accepted...") in msg. Unknown GPUPHASE_* names are not errors: each is
 * reported through warn (may be NULL) with a suggestion. */
int gp_config_parse(char *const *envp, struct gp_config *cfg, char *msg, size_t msglen,
		    void (*warn)(const char *line));

/* What launchers (torchrun, Slurm, Open MPI, MPICH/PMI, PBS, LSF) say about
 * the job a process belongs to: pointers into envp, NULL when none says.
 * docs/configuration.md "Jobs" lists the variables in their precedence. */
struct gp_config_job {
	const char *rank;       /* RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID  */
	const char *local_rank; /* LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
	                           SLURM_LOCALID                                                */
	const char *world_size; /* WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS      */
	const char *node;       /* GROUP_RANK (torchrun's node rank), SLURM_NODEID              */
	const char *job_id;     /* TORCHELASTIC_RUN_ID (unless "none"), SLURM_JOB_ID, PBS_JOBID,
	                           LSB_JOBID                                                    */
};
void gp_config_job(char *const *envp, struct gp_config_job *job);

/* The output pattern in force: GPUPHASE_OUTPUT when given, else
 * GP_CONFIG_OUTPUT_JOB when the job has an id, else GP_CONFIG_OUTPUT_DEFAULT. */
const char *gp_config_output(const struct gp_config *cfg, const struct gp_config_job *job);

/* Expand an output pattern: %p pid, %h host, %r the job's rank ("0" when
 * unknown), %j its job id ("nojob"), %t start time, %%. Rank and job id
 * become one file-name component (bytes other than [A-Za-z0-9._-] -> '_').
 * Returns 0 or -EINVAL (bad escape) / -ENAMETOOLONG, or -ELOOP when a
 * directory of the expanded path is a symbolic link owned by neither this
 * user nor root (outputs never follow another user's links). */
int gp_config_expand(const char *pattern, long pid, const char *host, const struct gp_config_job *job,
		     time_t t, char *out, size_t outlen);

/* The rank for %r: the job's rank (gp_config_job), else "0". */
const char *gp_config_rank(char *const *envp);

/* The canonical text of a CUPTI mode: the closest named mode and the items
 * that differ from it ("lean", "full,extcorr=off", "minimal,buffer=8M").
 * Returns the length written (snprintf rules). */
int gp_config_cupti_text(const struct gp_cupti_mode *m, char *buf, size_t len);

/* Parse a DURATION: a decimal number (digits first, an optional fraction:
 * "2", "1.5", "0.5"; no sign, exponent or hex) and a unit ns, us, ms, s, m
 * or min (none = s): "500ms", "2s", "1.5s", "100us", "250ns", "1m". 0 or -1. */
int gp_config_duration(const char *s, uint64_t *ns);

/* Check one variable the way gp_config_parse does: cfg gets the defaults
 * with that one value applied. Returns 0; -EINVAL when the value is refused,
 * with *accepted = what is accepted (the tail of the one-line diagnostic);
 * -ENOENT when name is not in the table. The `gpuphase` command checks its
 * options with this before running anything: one grammar for both. */
int gp_config_check(const char *name, const char *value, struct gp_config *cfg, const char **accepted);

#endif /* GP_CONFIG_H */
