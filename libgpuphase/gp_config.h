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

enum gp_win_mode { GP_WINMODE_ALL = 0, GP_WINMODE_ITERS, GP_WINMODE_TIME, GP_WINMODE_TRIGGER };
enum gp_marker { GP_MARKER_SYNC = 0, GP_MARKER_KERNEL, GP_MARKER_NVTX, GP_MARKER_PROFILER };
enum gp_stacks { GP_STACKS_OFF = 0, GP_STACKS_SYNC, GP_STACKS_LAUNCH, GP_STACKS_ALL };
enum gp_log_level { GP_LOG_OFF = 0, GP_LOG_ERROR, GP_LOG_INFO, GP_LOG_DEBUG };

#define GP_PATH_MAX 4096
/* The CUPTI library loaded when GPUPHASE_CUPTI_LIB is not set: its absence
 * is the ordinary hook-only case (info); a library the user named that cannot
 * be loaded costs all GPU timing and is an error. */
#define GP_CUPTI_LIB_DEFAULT "libcupti.so.13"
#define GP_PATTERN_MAX 512

struct gp_config {
	int disable;
	char output[GP_PATH_MAX];       /* pattern, validated                  */
	enum gp_win_mode win_mode;
	uint64_t skip, iters, repeat;   /* GP_WINMODE_ITERS; repeat >= 1       */
	uint64_t delay_ns, duration_ns; /* GP_WINMODE_TIME                     */
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
	char cupti_lib[GP_PATH_MAX];    /* GP_CUPTI_LIB_DEFAULT unless set      */
	int cupti_calibrate;            /* -1 auto (when CUPTI gives no overhead
	                                   records), 0 never, 1 always          */
	char control_dir[GP_PATH_MAX];  /* "" = /tmp/gpuphase-<uid>            */
	int follow_fork;
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

/* Expand an output pattern (%p %h %r %t %%). Returns 0 or -EINVAL (bad
 * escape) / -ENAMETOOLONG. */
int gp_config_expand(const char *pattern, long pid, const char *host, const char *rank,
		     time_t t, char *out, size_t outlen);

/* The rank for %r: RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID, else "0". */
const char *gp_config_rank(char *const *envp);

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
