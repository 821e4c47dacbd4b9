/*
 * config.c — the one table of every GPUPHASE_* environment variable, its
 * parser, and output-path pattern expansion (which also refuses a path whose
 * directories pass through another user's symbolic link).
 *
 * Called from lib.c's constructor (once, before any CUDA call, on the loading
 * thread), by the `gpuphase` command to check its options (gp_config_check:
 * the command links this file, so both read one grammar), and from the
 * tests with a synthetic environment. Pure: no globals are written here,
 * nothing is printed except through the warn callback, the file system is
 * only read (lstat of an expanded path's directories); it needs nothing but
 * libc (gp_config.h).
 *
 * Invariants: a config that gp_config_parse accepted is complete and valid
 * (patterns checked, numbers in range); a rejected one comes with exactly one
 * diagnostic line "gpuphase: GPUPHASE_X='value': <what is accepted>".
 * docs/configuration.md holds the same table; test_lib_config checks that the
 * two agree.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gp_collector.h"
#include "gp_config.h"

#define GP_CONFIG_STR_(x) #x
#define GP_CONFIG_STR(x) GP_CONFIG_STR_(x)

static int gp_config_copy(char *dst, size_t len, const char *v)
{
	size_t n = strlen(v);
	if (n >= len)
		return -1;
	memcpy(dst, v, n + 1);
	return 0;
}

static int gp_config_u64(const char *s, uint64_t *out)
{
	char *end;
	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int gp_config_duration(const char *s, uint64_t *ns)
{
	/* The number is DIGITS[.DIGITS]: strtod alone would also take hex,
	 * exponents, "inf" and "nan" after a first digit. */
	const char *num_end = s;
	if (!isdigit((unsigned char)*num_end))
		return -1;
	while (isdigit((unsigned char)*num_end))
		num_end++;
	if (*num_end == '.')
		for (num_end++; isdigit((unsigned char)*num_end);)
			num_end++;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || v < 0 || end != num_end)
		return -1;
	double mul;
	if (!strcmp(end, "") || !strcmp(end, "s"))
		mul = 1e9;
	else if (!strcmp(end, "ms"))
		mul = 1e6;
	else if (!strcmp(end, "us"))
		mul = 1e3;
	else if (!strcmp(end, "ns"))
		mul = 1;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mul = 60e9;
	else
		return -1;
	double r = v * mul;
	if (r > 1e18)
		return -1;
	*ns = (uint64_t)(r + 0.5);
	return 0;
}

static int gp_config_bool(const char *v, int *out)
{
	if (!strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "on"))
		*out = 1;
	else if (!strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "off"))
		*out = 0; /* "" is not 0: GPUPHASE_CUPTI= must not silently mean off */
	else
		return -1;
	return 0;
}

static int gp_parse_disable(const char *v, struct gp_config *c)
{
	return gp_config_bool(v, &c->disable);
}

static int gp_config_expand_name(const char *pattern, long pid, const char *host, const struct gp_config_job *job,
				 time_t t, char *out, size_t outlen);

static int gp_parse_output(const char *v, struct gp_config *c)
{
	char tmp[GP_PATH_MAX];
	struct gp_config_job none = { 0 };
	if (!*v || gp_config_copy(c->output, sizeof c->output, v))
		return -1;
	c->output_set = 1;
	return gp_config_expand_name(v, 1, "h", &none, 0, tmp, sizeof tmp) ? -1 : 0;
}

/* skip=N,iters=M[,repeat=K] | [every=D,]delay=D,duration=D | trigger | all */
static int gp_parse_window(const char *v, struct gp_config *c)
{
	char buf[GP_PATTERN_MAX];
	int have_skip = 0, have_iters = 0, have_repeat = 0, have_delay = 0, have_dur = 0, have_every = 0;
	if (gp_config_copy(buf, sizeof buf, v) || gp_config_copy(c->window_text, sizeof c->window_text, v))
		return -1;
	if (!strcmp(v, "trigger")) {
		c->win_mode = GP_WINMODE_TRIGGER;
		return 0;
	}
	if (!strcmp(v, "all")) { /* empty is rejected, as for every variable */
		c->win_mode = GP_WINMODE_ALL;
		return 0;
	}
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return -1;
		*eq = 0;
		const char *val = eq + 1;
		if (!strcmp(tok, "skip") && !have_skip) {
			have_skip = !gp_config_u64(val, &c->skip);
			if (!have_skip)
				return -1;
		} else if (!strcmp(tok, "iters") && !have_iters) {
			have_iters = !gp_config_u64(val, &c->iters) && c->iters > 0;
			if (!have_iters)
				return -1;
		} else if (!strcmp(tok, "repeat") && !have_repeat) {
			have_repeat = !gp_config_u64(val, &c->repeat) && c->repeat > 0;
			if (!have_repeat)
				return -1;
		} else if (!strcmp(tok, "delay") && !have_delay) {
			have_delay = !gp_config_duration(val, &c->delay_ns);
			if (!have_delay)
				return -1;
		} else if (!strcmp(tok, "every") && !have_every) {
			have_every = !gp_config_duration(val, &c->every_ns) && c->every_ns > 0;
			if (!have_every)
				return -1;
		} else if (!strcmp(tok, "duration") && !have_dur) {
			have_dur = !gp_config_duration(val, &c->duration_ns) && c->duration_ns > 0;
			if (!have_dur)
				return -1;
		} else {
			return -1;
		}
	}
	if (have_every && !have_dur) { /* the default duty cycle: a 60th of the time */
		c->duration_ns = c->every_ns / GP_DUTY_DEFAULT_DIVISOR;
		have_dur = c->duration_ns > 0;
	}
	if (have_every && (!have_dur || c->duration_ns >= c->every_ns))
		return -1; /* a duty cycle needs its windows shorter than their period */
	if (!have_every)
		c->every_ns = 0;
	if ((have_skip || have_iters || have_repeat) && !have_delay && !have_dur && have_iters) {
		c->win_mode = GP_WINMODE_ITERS;
		if (!have_repeat)
			c->repeat = 1;
		return 0;
	}
	if ((have_delay || have_dur) && !have_skip && !have_iters && !have_repeat && have_dur) {
		c->win_mode = GP_WINMODE_TIME;
		return 0;
	}
	return -1;
}

static int gp_parse_marker(const char *v, struct gp_config *c)
{
	if (gp_config_copy(c->marker_text, sizeof c->marker_text, v))
		return -1;
	c->marker_arg[0] = 0;
	if (!strcmp(v, "sync")) {
		c->marker = GP_MARKER_SYNC;
		return 0;
	}
	if (!strcmp(v, "profiler")) {
		c->marker = GP_MARKER_PROFILER;
		return 0;
	}
	if (!strncmp(v, "kernel:", 7) && v[7]) {
		c->marker = GP_MARKER_KERNEL;
		return gp_config_copy(c->marker_arg, sizeof c->marker_arg, v + 7);
	}
	if (!strncmp(v, "nvtx:", 5) && v[5]) {
		c->marker = GP_MARKER_NVTX;
		return gp_config_copy(c->marker_arg, sizeof c->marker_arg, v + 5);
	}
	return -1;
}

static int gp_parse_stacks(const char *v, struct gp_config *c)
{
	static const char *const names[] = {"off", "sync", "launch", "all"};
	for (int i = 0; i < 4; i++)
		if (!strcmp(v, names[i])) {
			c->stacks = (enum gp_stacks)i;
			return 0;
		}
	return -1;
}

static int gp_parse_stack_depth(const char *v, struct gp_config *c)
{
	uint64_t n;
	if (gp_config_u64(v, &n) || n < 1 || n > 64)
		return -1;
	c->stack_depth = (uint32_t)n;
	return 0;
}

static int gp_parse_log(const char *v, struct gp_config *c)
{
	static const char *const names[] = {"off", "error", "info", "debug"};
	const char *colon = strchr(v, ':');
	size_t n = colon ? (size_t)(colon - v) : strlen(v);
	for (int i = 0; i < 4; i++)
		if (strlen(names[i]) == n && !strncmp(v, names[i], n)) {
			c->log_level = (enum gp_log_level)i;
			if (!colon)
				return 0;
			if (!colon[1])
				return -1;
			return gp_config_copy(c->log_file, sizeof c->log_file, colon + 1);
		}
	return -1;
}

static int gp_parse_ring(const char *v, struct gp_config *c)
{
	uint64_t n;
	if (gp_config_u64(v, &n) || n < 64 || n > (1u << 24) || (n & (n - 1)))
		return -1;
	c->ring_records = (uint32_t)n;
	return 0;
}

static int gp_parse_flush(const char *v, struct gp_config *c)
{
	uint64_t n;
	if (gp_config_u64(v, &n) || n < 1 || n > 60000)
		return -1;
	c->flush_ms = (uint32_t)n;
	return 0;
}

static int gp_parse_max_bytes(const char *v, struct gp_config *c)
{
	char *end;
	if (!isdigit((unsigned char)v[0]))
		return -1;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	uint64_t mul = 1;
	if (!strcmp(end, "k") || !strcmp(end, "K"))
		mul = 1ull << 10;
	else if (!strcmp(end, "M"))
		mul = 1ull << 20;
	else if (!strcmp(end, "G"))
		mul = 1ull << 30;
	else if (*end)
		return -1;
	if (errno || n > UINT64_MAX / mul)
		return -1;
	c->max_bytes = n * mul;
	return 0;
}

static int gp_parse_keep_bytes(const char *v, struct gp_config *c)
{
	uint64_t max = c->max_bytes;
	int rc = gp_parse_max_bytes(v, c);
	uint64_t keep = c->max_bytes;
	c->max_bytes = max;
	if (rc || keep < GP_KEEP_BYTES_MIN)
		return -1;
	c->keep_bytes = keep;
	return 0;
}

/* ---- GPUPHASE_CUPTI: 0 | 1 | MODE[,ITEM...] | ITEM[,ITEM...] ------------ */

static const struct {
	const char *name;
	struct gp_cupti_mode m;
} gp_cupti_modes[] = {
	/* cheapest first; each later one records a superset */
	{"activity", {GP_CUPTI_API_OFF, GP_CUPTI_API_OFF, GP_CUPTI_EXT_OFF, 0, 0, -1, GP_CUPTI_BUF_DEFAULT, 0}},
	{"minimal", {GP_CUPTI_API_NEEDED, GP_CUPTI_API_NEEDED, GP_CUPTI_EXT_OFF, 0, 0, -1, GP_CUPTI_BUF_DEFAULT, 0}},
	{"lean", {GP_CUPTI_API_NEEDED, GP_CUPTI_API_NEEDED, GP_CUPTI_EXT_SYNC, 1, 1, -1, GP_CUPTI_BUF_DEFAULT, 0}},
	{"full", {GP_CUPTI_API_ALL, GP_CUPTI_API_ALL, GP_CUPTI_EXT_ALL, 1, 1, -1, GP_CUPTI_BUF_DEFAULT, 0}},
};
#define GP_CUPTI_NMODES (sizeof gp_cupti_modes / sizeof gp_cupti_modes[0])
static const char *const gp_cupti_api_names[] = {"off", "needed", "all"};
static const char *const gp_cupti_ext_names[] = {"off", "sync", "all"};

static int gp_config_word(const char *v, const char *const *names, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v, names[i])) {
			*out = (uint8_t)i;
			return 0;
		}
	return -1;
}

/* SIZE: bytes with an optional k or M suffix, 16k..256M, a multiple of 8. */
static int gp_config_buffer(const char *v, uint32_t *out)
{
	char *end;
	if (!isdigit((unsigned char)v[0]))
		return -1;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || n > (1ull << 28))
		return -1;
	if (!strcmp(end, "k") || !strcmp(end, "K"))
		n <<= 10;
	else if (!strcmp(end, "M"))
		n <<= 20;
	else if (*end)
		return -1;
	if (n < (16u << 10) || n > (256u << 20) || (n & 7))
		return -1;
	*out = (uint32_t)n;
	return 0;
}

/* One ITEM (key=value) applied to m; `seen` refuses a key given twice. */
static int gp_config_cupti_item(char *tok, struct gp_cupti_mode *m, unsigned *seen)
{
	static const char *const keys[] = {"runtime", "driver", "extcorr", "sync", "overhead", "per_thread",
					   "buffer", "flush"};
	char *eq = strchr(tok, '=');
	if (!eq)
		return -1;
	*eq = 0;
	const char *val = eq + 1;
	unsigned k = 0;
	while (k < sizeof keys / sizeof keys[0] && strcmp(tok, keys[k]))
		k++;
	if (k == sizeof keys / sizeof keys[0] || (*seen & (1u << k)))
		return -1;
	*seen |= 1u << k;
	int b;
	uint64_t ns;
	switch (k) {
	case 0: return gp_config_word(val, gp_cupti_api_names, 3, &m->runtime);
	case 1: return gp_config_word(val, gp_cupti_api_names, 3, &m->driver);
	case 2: return gp_config_word(val, gp_cupti_ext_names, 3, &m->extcorr);
	case 3:
		if (gp_config_bool(val, &b))
			return -1;
		m->sync = (uint8_t)b;
		return 0;
	case 4:
		if (gp_config_bool(val, &b))
			return -1;
		m->overhead = (uint8_t)b;
		return 0;
	case 5:
		if (gp_config_bool(val, &b))
			return -1;
		m->per_thread = (int8_t)b;
		return 0;
	case 6: return gp_config_buffer(val, &m->buffer_bytes);
	default: /* flush: 0 (not set) or 1 ms .. 60 s, whole milliseconds */
		if (gp_config_duration(val, &ns) || (ns && (ns < 1000000 || ns > 60000000000ull || ns % 1000000)))
			return -1;
		m->flush_ms = (uint32_t)(ns / 1000000);
		return 0;
	}
}

static int gp_parse_cupti(const char *v, struct gp_config *c)
{
	char buf[GP_PATTERN_MAX];
	int on;
	if (!gp_config_bool(v, &on)) { /* 0/1 as before: off, or the default mode */
		c->cupti = on;
		return 0;
	}
	if (gp_config_copy(buf, sizeof buf, v) || !*v || v[0] == ',' || v[strlen(v) - 1] == ',' || strstr(v, ",,"))
		return -1;
	struct gp_cupti_mode m = c->cupti_mode;
	unsigned seen = 0;
	char *save = NULL;
	int first = 1;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), first = 0) {
		size_t i = 0;
		while (i < GP_CUPTI_NMODES && strcmp(tok, gp_cupti_modes[i].name))
			i++;
		if (i < GP_CUPTI_NMODES) {
			if (!first)
				return -1; /* a mode only first: items refine it */
			m = gp_cupti_modes[i].m;
			continue;
		}
		if (gp_config_cupti_item(tok, &m, &seen))
			return -1;
	}
	c->cupti = 1;
	c->cupti_mode = m;
	return 0;
}

int gp_config_cupti_text(const struct gp_cupti_mode *m, char *buf, size_t len)
{
	size_t best = 0;
	int best_d = 99;
	for (size_t i = 0; i < GP_CUPTI_NMODES; i++) {
		const struct gp_cupti_mode *p = &gp_cupti_modes[i].m;
		int d = (p->runtime != m->runtime) + (p->driver != m->driver) + (p->extcorr != m->extcorr) +
			(p->sync != m->sync) + (p->overhead != m->overhead);
		if (d < best_d) {
			best_d = d;
			best = i;
		}
	}
	const struct gp_cupti_mode *p = &gp_cupti_modes[best].m;
	int n = snprintf(buf, len, "%s", gp_cupti_modes[best].name);
#define GP_CUPTI_ADD(...)                                                             \
	do {                                                                          \
		int k_ = snprintf(n >= 0 && (size_t)n < len ? buf + n : NULL,         \
				  n >= 0 && (size_t)n < len ? len - (size_t)n : 0, __VA_ARGS__); \
		n = n < 0 || k_ < 0 ? -1 : n + k_;                                    \
	} while (0)
	if (m->runtime != p->runtime)
		GP_CUPTI_ADD(",runtime=%s", gp_cupti_api_names[m->runtime % 3]);
	if (m->driver != p->driver)
		GP_CUPTI_ADD(",driver=%s", gp_cupti_api_names[m->driver % 3]);
	if (m->extcorr != p->extcorr)
		GP_CUPTI_ADD(",extcorr=%s", gp_cupti_ext_names[m->extcorr % 3]);
	if (m->sync != p->sync)
		GP_CUPTI_ADD(",sync=%d", m->sync);
	if (m->overhead != p->overhead)
		GP_CUPTI_ADD(",overhead=%d", m->overhead);
	if (m->per_thread >= 0)
		GP_CUPTI_ADD(",per_thread=%d", m->per_thread);
	if (m->buffer_bytes != GP_CUPTI_BUF_DEFAULT) {
		if (m->buffer_bytes % (1u << 20) == 0)
			GP_CUPTI_ADD(",buffer=%uM", m->buffer_bytes >> 20);
		else if (m->buffer_bytes % (1u << 10) == 0)
			GP_CUPTI_ADD(",buffer=%uk", m->buffer_bytes >> 10);
		else
			GP_CUPTI_ADD(",buffer=%u", m->buffer_bytes);
	}
	if (m->flush_ms)
		GP_CUPTI_ADD(",flush=%ums", m->flush_ms);
#undef GP_CUPTI_ADD
	return n;
}

static int gp_parse_cupti_calibrate(const char *v, struct gp_config *c)
{
	if (!strcmp(v, "auto")) {
		c->cupti_calibrate = -1;
		return 0;
	}
	return gp_config_bool(v, &c->cupti_calibrate);
}

static int gp_parse_cupti_lib(const char *v, struct gp_config *c)
{
	return (!*v || gp_config_copy(c->cupti_lib, sizeof c->cupti_lib, v)) ? -1 : 0;
}

static int gp_parse_control_dir(const char *v, struct gp_config *c)
{
	/* leave room for "/<pid>.sock" inside sun_path (108 bytes) */
	return (v[0] != '/' || strlen(v) > 80 || gp_config_copy(c->control_dir, sizeof c->control_dir, v))
		       ? -1 : 0;
}

static int gp_parse_follow_fork(const char *v, struct gp_config *c)
{
	return gp_config_bool(v, &c->follow_fork);
}

/* off | [samples=M,][skip=K,][warmup=L,]top=N | [samples=M,][skip=K,]kernel=GLOB[;GLOB...]
 * (options in any order; kernel= comes last and takes the rest, commas and
 * all: C++ names hold commas) */
static int gp_parse_counters(const char *v, struct gp_config *c)
{
	char buf[GP_PATH_MAX];
	uint64_t n;
	int have_top = 0;
	c->counters = GP_COUNTERS_OFF;
	c->counters_kernels[0] = 0;
	if (gp_config_copy(c->counters_text, sizeof c->counters_text, v) || gp_config_copy(buf, sizeof buf, v))
		return -1;
	if (!strcmp(v, "off"))
		return 0;
	for (char *tok = buf, *next; tok; tok = next) {
		if (!strncmp(tok, "kernel=", 7)) {
			if (!tok[7] || gp_config_copy(c->counters_kernels, sizeof c->counters_kernels, tok + 7) || have_top)
				return -1;
			c->counters = GP_COUNTERS_KERNEL;
			return 0;
		}
		next = strchr(tok, ',');
		if (next)
			*next++ = 0;
		char *eq = strchr(tok, '=');
		if (!eq || gp_config_u64(eq + 1, &n))
			return -1;
		*eq = 0;
		if (!strcmp(tok, "top") && n >= 1 && n <= 64 && !have_top)
			c->counters_top = (uint32_t)n, have_top = 1;
		else if (!strcmp(tok, "samples") && n >= 1 && n <= 1000)
			c->counters_samples = (uint32_t)n;
		else if (!strcmp(tok, "skip") && n <= 1000000)
			c->counters_skip = (uint32_t)n;
		else if (!strcmp(tok, "warmup") && n >= 1 && n <= 100000000)
			c->counters_warmup = (uint32_t)n;
		else
			return -1;
	}
	if (!have_top)
		return -1; /* options without a selection */
	c->counters = GP_COUNTERS_TOP;
	return 0;
}

const struct gp_config_var gp_config_vars[] = {
	{"GPUPHASE_DISABLE", "0", "accepted: 0 or 1",
	 "1 makes the library inert: every hook calls straight through, no file, no CUPTI", gp_parse_disable},
	{"GPUPHASE_OUTPUT", GP_CONFIG_OUTPUT_DEFAULT "; in a job: " GP_CONFIG_OUTPUT_JOB,
	 "accepted: a path pattern; %p pid, %h host, %r rank, %j job id, %t start time, %% a percent sign",
	 "trace file path pattern (relative to the working directory); the job default applies when a launcher "
	 "gives a job id (Jobs, below)",
	 gp_parse_output},
	{"GPUPHASE_WINDOW", "all",
	 "accepted: all, skip=N,iters=M[,repeat=K] (M, K >= 1), delay=DURATION,duration=DURATION (e.g. 500ms, 2s), "
	 "every=DURATION[,duration=DURATION][,delay=DURATION] (duration below every; default every/60), or trigger",
	 "what to capture: the whole run, a window of iterations, a time window, a window of each period (duty "
	 "cycle: each window its own trace file, docs/always-on.md), or nothing until `gpuphase trigger`",
	 gp_parse_window},
	{"GPUPHASE_WINDOW_KEEP_BYTES", "256M", "accepted: a byte count, optionally suffixed k, M or G (at least 64k)",
	 "duty cycle only: the most bytes the windows directory holds; the oldest closed windows are deleted first",
	 gp_parse_keep_bytes},
	{"GPUPHASE_ITER_MARKER", "sync", "accepted: sync, kernel:GLOB, nvtx:NAME or profiler",
	 "what delimits an iteration: each device/stream synchronize ends one; each launch of a kernel matching GLOB, "
	 "each start of NVTX range NAME, or each cudaProfilerStart starts one (profiler: capture only inside Start..Stop)",
	 gp_parse_marker},
	{"GPUPHASE_STACKS", "sync", "accepted: off, sync, launch or all",
	 "capture call stacks (libunwind) at synchronizing calls, launches, or every hooked call", gp_parse_stacks},
	{"GPUPHASE_STACK_DEPTH", "24", "accepted: an integer 1..64", "maximum frames per captured stack",
	 gp_parse_stack_depth},
	{"GPUPHASE_LOG", "error", "accepted: off, error, info or debug, optionally followed by :FILE",
	 "diagnostics, prefixed gpuphase:, to stderr or FILE (never stdout)", gp_parse_log},
	{"GPUPHASE_RING_RECORDS", GP_CONFIG_STR(GP_COLLECTOR_RING_DEFAULT),
	 "accepted: a power of two from 64 to 16777216", "32-byte slots in each thread's ring", gp_parse_ring},
	{"GPUPHASE_FLUSH_MS", "50", "accepted: an integer 1..60000",
	 "longest time a record waits in a ring before the writer takes it", gp_parse_flush},
	{"GPUPHASE_MAX_BYTES", "0 (no cap)", "accepted: a byte count, optionally suffixed k, M or G",
	 "stop writing once the trace file reaches this size (the trace says so)", gp_parse_max_bytes},
	{"GPUPHASE_CUPTI", "1", "accepted: 0, 1, or a mode (activity, minimal, lean, full) and/or items "
	 "runtime=off/needed/all, driver=off/needed/all, extcorr=off/sync/all, sync=0/1, overhead=0/1, "
	 "per_thread=0/1, buffer=SIZE (16k..256M), flush=DURATION, comma-separated",
	 "what CUPTI records: 0 keeps hook-only capture (no CUPTI subscription; the trace says so); 1 is lean; "
	 "see CUPTI modes below", gp_parse_cupti},
	{"GPUPHASE_CUPTI_LIB", "libcupti.so.13", "accepted: a library name or path",
	 "the CUPTI library to dlopen", gp_parse_cupti_lib},
	{"GPUPHASE_CUPTI_CALIBRATE", "auto", "accepted: auto, 0 or 1",
	 "measure CUPTI's own cost per call at the first traced kernel launch (under 1 ms): auto when CUPTI "
	 "gives no per-call overhead records, 1 always, 0 never", gp_parse_cupti_calibrate},
	{"GPUPHASE_CONTROL_DIR", "/tmp/gpuphase-<uid>", "accepted: an absolute directory path of at most 80 bytes",
	 "where every capture creates its control socket <pid>.sock (`gpuphase stop`, `trigger`)",
	 gp_parse_control_dir},
	{"GPUPHASE_FOLLOW_FORK", "0", "accepted: 0 or 1",
	 "for a child forked after the capture started (its parent made a hooked CUDA call or an NVTX call, or "
	 "was injected): 1 opens the child's own hook-only trace (new %p, no CUPTI) instead of going inert; a "
	 "child forked before that is captured as a new process either way (see below)",
	 gp_parse_follow_fork},
	{"GPUPHASE_COUNTERS", "off",
	 "accepted: off, top=N (1..64) or kernel=GLOB[;GLOB...] (last, takes the rest), with optional samples=M "
	 "(1..1000), skip=K and, for top, warmup=L launches before them, comma-separated",
	 "hardware counters (CUPTI range profiler, kernel replay) for a sample of launches of the top N kernels by "
	 "GPU time in the warm-up, or of the kernels matching a glob; replayed launches are marked and left out of "
	 "every phase",
	 gp_parse_counters},
};
const size_t gp_config_nvars = sizeof gp_config_vars / sizeof gp_config_vars[0];

static void gp_config_defaults(struct gp_config *c)
{
	memset(c, 0, sizeof *c);
	strcpy(c->output, GP_CONFIG_OUTPUT_DEFAULT);
	c->win_mode = GP_WINMODE_ALL;
	c->repeat = 1;
	c->keep_bytes = GP_KEEP_BYTES_DEFAULT;
	strcpy(c->window_text, "all");
	c->marker = GP_MARKER_SYNC;
	strcpy(c->marker_text, "sync");
	c->stacks = GP_STACKS_SYNC;
	c->stack_depth = 24;
	c->log_level = GP_LOG_ERROR;
	c->cupti = 1;
	for (size_t i = 0; i < GP_CUPTI_NMODES; i++)
		if (!strcmp(gp_cupti_modes[i].name, GP_CUPTI_MODE_DEFAULT))
			c->cupti_mode = gp_cupti_modes[i].m;
	c->cupti_calibrate = -1;
	strcpy(c->cupti_lib, GP_CUPTI_LIB_DEFAULT);
	c->counters_samples = 3;
	c->counters_skip = 1;
	c->counters_warmup = 100;
	strcpy(c->counters_text, "off");
}

static unsigned gp_config_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[64];
	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned prev = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned cur = row[j];
			unsigned best = prev + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

/* Copy v for a diagnostic: printable ASCII as is, anything else (a newline
 * that would forge a second line, escape sequences, non-UTF-8) as \xHH; cut
 * with "..." to fit len, so the message stays one line. */
static void gp_config_quote(const char *v, char *out, size_t len)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		char tmp[5];
		int n = (*p >= 0x20 && *p < 0x7f) ? snprintf(tmp, sizeof tmp, "%c", *p)
						  : snprintf(tmp, sizeof tmp, "\\x%02x", *p);
		if (o + (size_t)n + 4 > len) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		memcpy(out + o, tmp, (size_t)n);
		o += (size_t)n;
	}
	out[o] = 0;
}

/* The table row named by the first nlen bytes of name, or NULL. */
static const struct gp_config_var *gp_config_find(const char *name, size_t nlen)
{
	for (size_t i = 0; i < gp_config_nvars; i++)
		if (strlen(gp_config_vars[i].name) == nlen && !strncmp(gp_config_vars[i].name, name, nlen))
			return &gp_config_vars[i];
	return NULL;
}

int gp_config_check(const char *name, const char *value, struct gp_config *cfg, const char **accepted)
{
	const struct gp_config_var *var = gp_config_find(name, strlen(name));
	gp_config_defaults(cfg);
	*accepted = NULL;
	if (!var)
		return -ENOENT;
	if (var->parse(value, cfg)) {
		*accepted = var->accepted;
		return -EINVAL;
	}
	return 0;
}

int gp_config_parse(char *const *envp, struct gp_config *cfg, char *msg, size_t msglen,
		    void (*warn)(const char *line))
{
	gp_config_defaults(cfg);
	if (msglen)
		msg[0] = 0;
	/* Two passes: GPUPHASE_DISABLE=1 wins over any malformed value. */
	for (int pass = 0; pass < 2; pass++) {
		for (char *const *e = envp; e && *e; e++) {
			if (strncmp(*e, "GPUPHASE_", 9))
				continue;
			const char *eq = strchr(*e, '=');
			if (!eq)
				continue;
			size_t nlen = (size_t)(eq - *e);
			const struct gp_config_var *var = gp_config_find(*e, nlen);
			int is_disable = var && var->parse == gp_parse_disable;
			if (pass == 0 && !is_disable)
				continue;
			if (pass == 1 && is_disable)
				continue;
			if (!var) {
				char name[64], line[256];
				const char *best = NULL;
				unsigned bestd = 4;
				snprintf(name, sizeof name, "%.*s", (int)(nlen < 63 ? nlen : 63), *e);
				for (size_t i = 0; i < gp_config_nvars; i++) {
					unsigned d = gp_config_distance(name, gp_config_vars[i].name);
					if (d < bestd) {
						bestd = d;
						best = gp_config_vars[i].name;
					}
				}
				char shown[128];
				gp_config_quote(name, shown, sizeof shown);
				if (best)
					snprintf(line, sizeof line, "gpuphase: unknown variable %s ignored (did you mean %s?)",
						 shown, best);
				else
					snprintf(line, sizeof line, "gpuphase: unknown variable %s ignored", shown);
				if (warn)
					warn(line);
				continue;
			}
			if (var->parse(eq + 1, cfg)) {
				char shown[256];
				gp_config_quote(eq + 1, shown, sizeof shown);
				if (msglen)
					snprintf(msg, msglen, "gpuphase: %s='%s': %s", var->name, shown, var->accepted);
				return -EINVAL;
			}
			if (pass == 0 && cfg->disable)
				return 0;
		}
	}
	return 0;
}

/* The value of the first of names (NULL-terminated) set and not empty in
 * envp, or NULL; a value equal to `skip` counts as not set. */
static const char *gp_config_env_first(char *const *envp, const char *const *names, const char *skip)
{
	for (; *names; names++) {
		size_t n = strlen(*names);
		for (char *const *e = envp; e && *e; e++)
			if (!strncmp(*e, *names, n) && (*e)[n] == '=' && (*e)[n + 1] &&
			    !(skip && !strcmp(*e + n + 1, skip)))
				return *e + n + 1;
	}
	return NULL;
}

void gp_config_job(char *const *envp, struct gp_config_job *job)
{
	/* In order of precedence: torchrun's own variables first (under
	 * `srun torchrun` the Slurm ones describe the agent, not the worker),
	 * then MPI launchers, then Slurm. */
	static const char *const rank[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID",
					   NULL};
	static const char *const local_rank[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
						 "SLURM_LOCALID", NULL};
	static const char *const world[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", NULL};
	static const char *const node[] = {"GROUP_RANK", "SLURM_NODEID", NULL};
	static const char *const job_id[] = {"TORCHELASTIC_RUN_ID", "SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", NULL};
	job->rank = gp_config_env_first(envp, rank, NULL);
	job->local_rank = gp_config_env_first(envp, local_rank, NULL);
	job->world_size = gp_config_env_first(envp, world, NULL);
	job->node = gp_config_env_first(envp, node, NULL);
	/* torchrun's run id is "none" unless --rdzv-id names the run */
	job->job_id = gp_config_env_first(envp, job_id, "none");
}

const char *gp_config_rank(char *const *envp)
{
	struct gp_config_job job;
	gp_config_job(envp, &job);
	return job.rank ? job.rank : "0";
}

const char *gp_config_output(const struct gp_config *cfg, const struct gp_config_job *job)
{
	if (cfg->output_set)
		return cfg->output;
	return job->job_id ? GP_CONFIG_OUTPUT_JOB : GP_CONFIG_OUTPUT_DEFAULT;
}

/* A launcher's value as one file-name component: bytes other than letters,
 * digits, '.', '-' and '_' become '_', and "." or ".." get a leading '_'. */
static void gp_config_component(const char *v, char *out, size_t len)
{
	size_t o = 0;
	for (; *v && o + 1 < len; v++)
		out[o++] = (isalnum((unsigned char)*v) || *v == '.' || *v == '-' || *v == '_') ? *v : '_';
	out[o] = 0;
	if ((!strcmp(out, ".") || !strcmp(out, "..")) && o + 1 < len) {
		memmove(out + 1, out, o + 1);
		out[0] = '_';
	}
}

/* The pattern's escapes replaced (gp_config_expand without the check of
 * the directories): the name only, as gp_parse_output validates it. */
static int gp_config_expand_name(const char *pattern, long pid, const char *host, const struct gp_config_job *job,
				 time_t t, char *out, size_t outlen)
{
	size_t o = 0;
	char tmp[256];
	for (const char *p = pattern; *p; p++) {
		const char *ins;
		if (*p != '%') {
			tmp[0] = *p;
			tmp[1] = 0;
			ins = tmp;
		} else {
			p++;
			switch (*p) {
			case 'p': snprintf(tmp, sizeof tmp, "%ld", pid); ins = tmp; break;
			case 'h': ins = host; break;
			case 'r':
				gp_config_component(job->rank ? job->rank : "0", tmp, sizeof tmp);
				ins = tmp;
				break;
			case 'j':
				gp_config_component(job->job_id ? job->job_id : "nojob", tmp, sizeof tmp);
				ins = tmp;
				break;
			case 't': {
				struct tm tm;
				gmtime_r(&t, &tm);
				strftime(tmp, sizeof tmp, "%Y%m%dT%H%M%SZ", &tm);
				ins = tmp;
				break;
			}
			case '%': ins = "%"; break;
			default: return -EINVAL;
			}
		}
		size_t n = strlen(ins);
		if (o + n >= outlen)
			return -ENAMETOOLONG;
		memcpy(out + o, ins, n);
		o += n;
	}
	if (o == 0 || o >= outlen)
		return -EINVAL;
	out[o] = 0;
	return 0;
}

/* Outputs never follow symbolic links that someone else controls: each
 * directory of path that exists is lstat'ed, and one that is a symbolic
 * link owned by neither this user (effective uid) nor root is refused, so
 * root's trace never lands where another user's link points. A link of
 * one's own or of root's (/var/run -> /run) is followed; the first missing
 * directory ends the walk (what is made there is ours). 0 or -ELOOP. */
static int gp_config_output_dirs(const char *path)
{
	char dir[GP_PATH_MAX];
	uid_t me = geteuid();
	for (const char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		size_t n = (size_t)(s - path);
		if (s[-1] == '/' || n >= sizeof dir)
			continue; /* "//": the directory before was checked already */
		memcpy(dir, path, n);
		dir[n] = 0;
		struct stat st;
		if (lstat(dir, &st))
			return 0;
		if (S_ISLNK(st.st_mode) && st.st_uid != me && st.st_uid != 0)
			return -ELOOP;
	}
	return 0;
}

int gp_config_expand(const char *pattern, long pid, const char *host, const struct gp_config_job *job,
		     time_t t, char *out, size_t outlen)
{
	int rc = gp_config_expand_name(pattern, pid, host, job, t, out, outlen);
	return rc ? rc : gp_config_output_dirs(out);
}
