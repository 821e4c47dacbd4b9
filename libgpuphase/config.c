/*
 * config.c — the one table of every GPUPHASE_* environment variable, its
 * parser, and output-path pattern expansion.
 *
 * Called from lib.c's constructor (once, before any CUDA call, on the loading
 * thread), by the `gpuphase` command to check its options (gp_config_check:
 * the command links this file, so both read one grammar), and from the
 * tests with a synthetic environment. Pure: no globals are written here,
 * nothing is printed except through the warn callback; it needs nothing but
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

static int gp_parse_output(const char *v, struct gp_config *c)
{
	char tmp[GP_PATH_MAX];
	if (!*v || gp_config_copy(c->output, sizeof c->output, v))
		return -1;
	return gp_config_expand(v, 1, "h", "0", 0, tmp, sizeof tmp) ? -1 : 0;
}

/* skip=N,iters=M[,repeat=K] | delay=D,duration=D | trigger | all */
static int gp_parse_window(const char *v, struct gp_config *c)
{
	char buf[GP_PATTERN_MAX];
	int have_skip = 0, have_iters = 0, have_repeat = 0, have_delay = 0, have_dur = 0;
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
		} else if (!strcmp(tok, "duration") && !have_dur) {
			have_dur = !gp_config_duration(val, &c->duration_ns) && c->duration_ns > 0;
			if (!have_dur)
				return -1;
		} else {
			return -1;
		}
	}
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

static int gp_parse_cupti(const char *v, struct gp_config *c)
{
	return gp_config_bool(v, &c->cupti);
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

const struct gp_config_var gp_config_vars[] = {
	{"GPUPHASE_DISABLE", "0", "accepted: 0 or 1",
	 "1 makes the library inert: every hook calls straight through, no file, no CUPTI", gp_parse_disable},
	{"GPUPHASE_OUTPUT", "gpuphase-%h-%p.gpht",
	 "accepted: a path pattern; %p pid, %h host, %r rank, %t start time, %% a percent sign",
	 "trace file path pattern (relative to the working directory)", gp_parse_output},
	{"GPUPHASE_WINDOW", "all",
	 "accepted: all, skip=N,iters=M[,repeat=K] (M, K >= 1), delay=DURATION,duration=DURATION (e.g. 500ms, 2s), or trigger",
	 "what to capture: the whole run, a window of iterations, a time window, or nothing until `gpuphase trigger`",
	 gp_parse_window},
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
	{"GPUPHASE_CUPTI", "1", "accepted: 0 or 1",
	 "0 keeps hook-only capture (no CUPTI subscription; the trace says so)", gp_parse_cupti},
	{"GPUPHASE_CUPTI_LIB", "libcupti.so.13", "accepted: a library name or path",
	 "the CUPTI library to dlopen", gp_parse_cupti_lib},
	{"GPUPHASE_CUPTI_CALIBRATE", "auto", "accepted: auto, 0 or 1",
	 "measure CUPTI's own cost per call at the first traced kernel launch (under 1 ms): auto when CUPTI "
	 "gives no per-call overhead records, 1 always, 0 never", gp_parse_cupti_calibrate},
	{"GPUPHASE_CONTROL_DIR", "/tmp/gpuphase-<uid>", "accepted: an absolute directory path of at most 80 bytes",
	 "where GPUPHASE_WINDOW=trigger creates <pid>.sock", gp_parse_control_dir},
	{"GPUPHASE_FOLLOW_FORK", "0", "accepted: 0 or 1",
	 "1: a fork child opens its own trace (new %p) instead of going inert", gp_parse_follow_fork},
};
const size_t gp_config_nvars = sizeof gp_config_vars / sizeof gp_config_vars[0];

static void gp_config_defaults(struct gp_config *c)
{
	memset(c, 0, sizeof *c);
	strcpy(c->output, "gpuphase-%h-%p.gpht");
	c->win_mode = GP_WINMODE_ALL;
	c->repeat = 1;
	strcpy(c->window_text, "all");
	c->marker = GP_MARKER_SYNC;
	strcpy(c->marker_text, "sync");
	c->stacks = GP_STACKS_SYNC;
	c->stack_depth = 24;
	c->log_level = GP_LOG_ERROR;
	c->cupti = 1;
	c->cupti_calibrate = -1;
	strcpy(c->cupti_lib, GP_CUPTI_LIB_DEFAULT);
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

const char *gp_config_rank(char *const *envp)
{
	static const char *const vars[] = {"RANK=", "OMPI_COMM_WORLD_RANK=", "SLURM_PROCID="};
	for (int i = 0; i < 3; i++)
		for (char *const *e = envp; e && *e; e++)
			if (!strncmp(*e, vars[i], strlen(vars[i])) && (*e)[strlen(vars[i])])
				return *e + strlen(vars[i]);
	return "0";
}

int gp_config_expand(const char *pattern, long pid, const char *host, const char *rank,
		     time_t t, char *out, size_t outlen)
{
	size_t o = 0;
	char tmp[64];
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
			case 'r': ins = rank; break;
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
