/*
 * sim_config.c — parses the simcuda cost model (see sim_config.h and
 * docs/simcuda.md). Pure functions of their inputs plus getenv; no globals.
 * Every malformed line or value becomes one message naming file, line and
 * problem; nothing is half-applied silently (the caller exits on error).
 */
#include "kernel_name.h"
#include "sim_config.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum sim_key_type {
	SIM_KEY_NS,       /* non-negative integer (nanoseconds, counts) */
	SIM_KEY_GBPS,     /* positive real */
	SIM_KEY_SIGNED,   /* integer, may be negative */
	SIM_KEY_REAL,     /* finite real, may be negative or 0 */
};

struct sim_key {
	const char *name;
	size_t off; /* offset in struct sim_config */
	enum sim_key_type type;
};

static const struct sim_key sim_keys[] = {
	{"launch_ns", offsetof(struct sim_config, launch_ns), 0},
	{"launch_latency_ns", offsetof(struct sim_config, launch_latency_ns), 0},
	{"exec_ns", offsetof(struct sim_config, exec_ns), 0},
	{"memcpy_gbps", offsetof(struct sim_config, memcpy_gbps), SIM_KEY_GBPS},
	{"memcpy_latency_ns", offsetof(struct sim_config, memcpy_latency_ns), 0},
	{"sync_ns", offsetof(struct sim_config, sync_ns), 0},
	{"api_ns", offsetof(struct sim_config, api_ns), 0},
	/* ---- real-CUDA behaviours of the runtime (docs/simcuda.md "Real-CUDA behaviours") ---- */
	{"pageable_async_blocks", offsetof(struct sim_config, pageable_async_blocks), 0},
	{"implicit_sync", offsetof(struct sim_config, implicit_sync), 0},
	{"queue_depth", offsetof(struct sim_config, queue_depth), 0},
	{"exec_jitter_pct", offsetof(struct sim_config, exec_jitter_pct), 0},
	{"seed", offsetof(struct sim_config, seed), 0},
	{"devices", offsetof(struct sim_config, devices), 0},
	/* ---- end of the real-CUDA behaviours ---- */
	/* CUPTI: what the simulated CUPTI adds and distorts (docs/simcuda.md "CUPTI") */
	{"cupti_delivery_delay_ns", offsetof(struct sim_config, cupti_delivery_delay_ns), SIM_KEY_NS},
	{"cupti_clock_offset_ns", offsetof(struct sim_config, cupti_clock_offset_ns), SIM_KEY_SIGNED},
	{"cupti_clock_drift_ppm", offsetof(struct sim_config, cupti_clock_drift_ppm), SIM_KEY_REAL},
	{"cupti_buffer_records", offsetof(struct sim_config, cupti_buffer_records), SIM_KEY_NS},
	{"cupti_api_overhead_ns", offsetof(struct sim_config, cupti_api_overhead_ns), SIM_KEY_NS},
	{"cupti_launch_overhead_ns", offsetof(struct sim_config, cupti_launch_overhead_ns), SIM_KEY_NS},
	{"cupti_extcorr_overhead_ns", offsetof(struct sim_config, cupti_extcorr_overhead_ns), SIM_KEY_NS},
	/* the device's peaks the range profiler serves (docs/simcuda.md "Profiling API") */
	{"peak_gflops", offsetof(struct sim_config, peak_gflops), SIM_KEY_GBPS},
	{"peak_gbps", offsetof(struct sim_config, peak_gbps), SIM_KEY_GBPS},
	{"cupti_overhead_records", offsetof(struct sim_config, cupti_overhead_records), SIM_KEY_NS},
};

/* ---- real-CUDA behaviours: the accepted range of the keys that have one ---- */
static const struct {
	const char *name;
	uint64_t min, max;
} sim_key_ranges[] = {
	{"pageable_async_blocks", 0, 1},
	{"implicit_sync", 0, 1},
	{"exec_jitter_pct", 0, 100},
	{"devices", 1, SIM_MAX_DEVICES},
};

/* Is n in the accepted range of key `name`? 0 or -1 with the reason in why. */
static int sim_key_in_range(const char *name, uint64_t n, const char **why)
{
	for (size_t i = 0; i < sizeof sim_key_ranges / sizeof *sim_key_ranges; i++) {
		if (strcmp(sim_key_ranges[i].name, name) != 0)
			continue;
		if (n >= sim_key_ranges[i].min && n <= sim_key_ranges[i].max)
			return 0;
		*why = sim_key_ranges[i].max == 1 ? "expected 0 or 1" : "out of range (see docs/simcuda.md)";
		return -1;
	}
	return 0;
}
/* ---- end of the real-CUDA behaviours ---- */
#define SIM_NKEYS (sizeof sim_keys / sizeof *sim_keys)

void sim_config_defaults(struct sim_config *c)
{
	memset(c, 0, sizeof *c);
	c->launch_ns = 4000;
	c->launch_latency_ns = 2000;
	c->exec_ns = 10000;
	c->memcpy_gbps = 10.0;
	c->memcpy_latency_ns = 2000;
	c->sync_ns = 1000;
	c->api_ns = 1000;
	/* real-CUDA behaviours: on, as on an H200 with CUDA 13 */
	c->pageable_async_blocks = 1;
	c->implicit_sync = 1;
	c->queue_depth = 1024;
	c->exec_jitter_pct = 0;
	c->seed = 1;
	c->devices = 1;
	/* CUPTI: CUDA 13's CUPTI on an H200 (docs/simcuda.md "CUPTI" says why) */
	c->cupti_delivery_delay_ns = 1000000000;
	c->cupti_clock_offset_ns = 1000;
	c->cupti_clock_drift_ppm = 1.0;
	c->cupti_buffer_records = 100000;
	c->cupti_api_overhead_ns = 500;
	c->cupti_launch_overhead_ns = 2000;
	c->cupti_extcorr_overhead_ns = 0;
	/* an H200 SXM: 132 SMs x 128 FP32 lanes x 2 x 1.98 GHz; 4.8 TB/s HBM3e */
	c->peak_gflops = 66900;
	c->peak_gbps = 4800;
	c->cupti_overhead_records = 1;
}

/* Parse a non-negative decimal integer (nanoseconds); 0 or -1. */
static int sim_parse_u64(const char *s, uint64_t *out)
{
	if (!*s)
		return -1;
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p))
			return -1;
	errno = 0;
	unsigned long long v = strtoull(s, NULL, 10);
	if (errno)
		return -1;
	*out = v;
	return 0;
}

static int sim_parse_gbps(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v <= 0)
		return -1;
	*out = v;
	return 0;
}

static int sim_parse_i64(const char *s, int64_t *out)
{
	const char *p = s;
	if (*p == '-' || *p == '+')
		p++;
	if (!*p)
		return -1;
	for (const char *q = p; *q; q++)
		if (!isdigit((unsigned char)*q))
			return -1;
	errno = 0;
	long long v = strtoll(s, NULL, 10);
	if (errno)
		return -1;
	*out = v;
	return 0;
}

static int sim_parse_real(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

static const struct sim_key *sim_find_key(const char *name)
{
	for (size_t i = 0; i < SIM_NKEYS; i++)
		if (strcmp(sim_keys[i].name, name) == 0)
			return &sim_keys[i];
	return NULL;
}

/* Set key k from text v; 0 or -1 with the reason in why. */
static int sim_set_key(struct sim_config *c, const struct sim_key *k, const char *v, const char **why)
{
	void *field = (char *)c + k->off;
	switch (k->type) {
	case SIM_KEY_GBPS:
		if (sim_parse_gbps(v, field) < 0) {
			*why = "expected a positive number (GB/s)";
			return -1;
		}
		return 0;
	case SIM_KEY_SIGNED:
		if (sim_parse_i64(v, field) < 0) {
			*why = "expected an integer number of nanoseconds (may be negative)";
			return -1;
		}
		return 0;
	case SIM_KEY_REAL:
		if (sim_parse_real(v, field) < 0) {
			*why = "expected a finite number (may be negative)";
			return -1;
		}
		return 0;
	case SIM_KEY_NS:
		break;
	}
	uint64_t n;
	if (sim_parse_u64(v, &n) < 0) {
		*why = strstr(k->name, "_ns") ? "expected a non-negative integer number of nanoseconds"
					      : "expected a non-negative integer";
		return -1;
	}
	if (sim_key_in_range(k->name, n, why) < 0)
		return -1;
	*(uint64_t *)(void *)((char *)c + k->off) = n;
	return 0;
}

static int sim_add_rule(struct sim_config *c, char *glob, char **kv, int nkv, const char *fname,
			int line, char *err, size_t errlen)
{
	struct sim_kernel_rule r = {0};
	if (nkv == 0) {
		snprintf(err, errlen, "%s:%d: kernel line needs at least one KEY=VALUE (exec_ns, launch_ns, exec_per_block_ns, "
			 "flops, flops_fp64, flops_fp16, bytes, tensor_pct, regs, static_smem)",
			 fname, line);
		return -1;
	}
	for (int i = 0; i < nkv; i++) {
		char *eq = strchr(kv[i], '=');
		if (!eq || eq == kv[i]) {
			snprintf(err, errlen, "%s:%d: kernel %s: '%s' is not KEY=VALUE", fname, line, glob,
				 kv[i]);
			return -1;
		}
		*eq = 0;
		uint64_t v;
		if (sim_parse_u64(eq + 1, &v) < 0) {
			snprintf(err, errlen,
				 "%s:%d: kernel %s: %s='%s': expected a non-negative integer number of nanoseconds",
				 fname, line, glob, kv[i], eq + 1);
			return -1;
		}
		if (strcmp(kv[i], "exec_ns") == 0) {
			r.has_exec = 1;
			r.exec_ns = v;
		} else if (strcmp(kv[i], "launch_ns") == 0) {
			r.has_launch = 1;
			r.launch_ns = v;
		} else if (strcmp(kv[i], "exec_per_block_ns") == 0) {
			r.exec_per_block_ns = v;
		} else if (strcmp(kv[i], "flops") == 0) { /* the work the range profiler serves */
			r.flops = v;
		} else if (strcmp(kv[i], "flops_fp64") == 0) {
			r.flops_fp64 = v;
		} else if (strcmp(kv[i], "flops_fp16") == 0) {
			r.flops_fp16 = v;
		} else if (strcmp(kv[i], "bytes") == 0) {
			r.bytes = v;
		} else if (strcmp(kv[i], "tensor_pct") == 0 && v <= 100) {
			r.tensor_pct = v;
		} else if (strcmp(kv[i], "regs") == 0 && v >= 1 && v <= 255) { /* the hardware's range */
			r.has_regs = 1;
			r.regs = v;
		} else if (strcmp(kv[i], "static_smem") == 0 && v <= 49152) { /* 48 KiB: static's limit */
			r.static_smem = v;
		} else {
			snprintf(err, errlen,
				 "%s:%d: kernel %s: %s key '%s' (accepted: exec_ns, launch_ns, exec_per_block_ns, flops, "
				 "flops_fp64, flops_fp16, bytes, tensor_pct 0..100, regs 1..255, static_smem 0..49152)",
				 fname, line, glob,
				 strcmp(kv[i], "tensor_pct") && strcmp(kv[i], "regs") && strcmp(kv[i], "static_smem")
					 ? "unknown" : "out-of-range", kv[i]);
			return -1;
		}
	}
	struct sim_kernel_rule *nr = realloc(c->rules, (c->nrules + 1) * sizeof *nr);
	r.glob = strdup(glob);
	if (!nr || !r.glob) {
		free(r.glob);
		if (nr)
			c->rules = nr;
		snprintf(err, errlen, "%s:%d: out of memory", fname, line);
		return -1;
	}
	c->rules = nr;
	c->rules[c->nrules++] = r;
	return 0;
}

int sim_config_parse(struct sim_config *c, const char *text, const char *fname, char *err,
		     size_t errlen)
{
	char *copy = strdup(text);
	if (!copy) {
		snprintf(err, errlen, "%s: out of memory", fname);
		return -1;
	}
	int line = 0, rc = 0;
	char *save = NULL;
	for (char *ln = copy; ln && rc == 0; ln = save) {
		char *nl = strchr(ln, '\n');
		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = 0;
		line++;
		char *hash = strchr(ln, '#');
		if (hash)
			*hash = 0;
		char *tok[66];
		int nt = 0;
		char *sp = NULL;
		for (char *t = strtok_r(ln, " \t\r", &sp); t; t = strtok_r(NULL, " \t\r", &sp)) {
			if (nt == 66) {
				snprintf(err, errlen, "%s:%d: too many fields", fname, line);
				rc = -1;
				break;
			}
			tok[nt++] = t;
		}
		if (rc || nt == 0)
			continue;
		if (strcmp(tok[0], "kernel") == 0) {
			if (nt < 2) {
				snprintf(err, errlen, "%s:%d: kernel line needs a GLOB and KEY=VALUE pairs",
					 fname, line);
				rc = -1;
				break;
			}
			rc = sim_add_rule(c, tok[1], tok + 2, nt - 2, fname, line, err, errlen);
			continue;
		}
		const struct sim_key *k = sim_find_key(tok[0]);
		if (!k) {
			snprintf(err, errlen,
				 "%s:%d: unknown key '%s' (accepted: launch_ns launch_latency_ns exec_ns "
				 "memcpy_gbps memcpy_latency_ns sync_ns api_ns pageable_async_blocks "
				 "implicit_sync queue_depth exec_jitter_pct seed devices cupti_delivery_delay_ns "
				 "cupti_clock_offset_ns cupti_clock_drift_ppm cupti_buffer_records "
				 "cupti_api_overhead_ns cupti_launch_overhead_ns cupti_extcorr_overhead_ns peak_gflops peak_gbps cupti_overhead_records, or a 'kernel' line)",
				 fname, line, tok[0]);
			rc = -1;
			break;
		}
		if (nt != 2) {
			snprintf(err, errlen, "%s:%d: %s needs exactly one value", fname, line, tok[0]);
			rc = -1;
			break;
		}
		const char *why = NULL;
		if (sim_set_key(c, k, tok[1], &why) < 0) {
			snprintf(err, errlen, "%s:%d: %s '%s': %s", fname, line, tok[0], tok[1], why);
			rc = -1;
		}
	}
	free(copy);
	return rc;
}

int sim_config_load(struct sim_config *c, const char *path, char *err, size_t errlen)
{
	sim_config_defaults(c);
	if (path && *path) {
		FILE *f = fopen(path, "r");
		if (!f) {
			snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
			return -1;
		}
		size_t cap = 4096, len = 0;
		char *text = malloc(cap);
		size_t n;
		while (text && (n = fread(text + len, 1, cap - len - 1, f)) > 0) {
			len += n;
			if (cap - len - 1 == 0) {
				char *nt = realloc(text, cap * 2);
				if (!nt) {
					free(text);
					text = NULL;
					break;
				}
				text = nt;
				cap *= 2;
			}
		}
		int rerr = ferror(f);
		fclose(f);
		if (!text || rerr) {
			free(text);
			snprintf(err, errlen, "%s: read error", path);
			return -1;
		}
		text[len] = 0;
		if (memchr(text, 0, len)) {
			free(text);
			snprintf(err, errlen, "%s: not a text file (contains NUL bytes)", path);
			return -1;
		}
		int rc = sim_config_parse(c, text, path, err, errlen);
		free(text);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < SIM_NKEYS; i++) {
		char env[64] = "SIMCUDA_";
		size_t j = strlen(env);
		for (const char *p = sim_keys[i].name; *p && j < sizeof env - 1; p++)
			env[j++] = (char)toupper((unsigned char)*p);
		env[j] = 0;
		const char *v = getenv(env);
		if (!v)
			continue;
		const char *why = NULL;
		if (sim_set_key(c, &sim_keys[i], v, &why) < 0) {
			snprintf(err, errlen, "%s='%s': %s", env, v, why);
			return -1;
		}
	}
	return 0;
}

const struct sim_kernel_rule *sim_config_match(const struct sim_config *c, const char *mangled,
					       const char *plain)
{
	if (!c->nrules)
		return NULL;
	/* The names kernel_name.h matches — the operator table's short name, the
	 * name as recorded, the bare identifier (simcuda's plain name) — made
	 * once per kernel, not once per rule: demangling is slow, and this runs
	 * in the kernel's first launch. */
	char *full = NULL, *shrt = NULL;
	if (mangled && gp_kernel_name_names(mangled, &full, &shrt))
		full = shrt = NULL; /* out of memory: the recorded and plain names still match */
	const struct sim_kernel_rule *r = NULL;
	for (size_t i = 0; i < c->nrules && !r; i++) {
		const char *gl = c->rules[i].glob;
		if ((mangled && fnmatch(gl, mangled, 0) == 0) || (shrt && fnmatch(gl, shrt, 0) == 0) ||
		    (plain && fnmatch(gl, plain, 0) == 0))
			r = &c->rules[i];
	}
	free(full);
	free(shrt);
	return r;
}

void sim_config_free(struct sim_config *c)
{
	for (size_t i = 0; i < c->nrules; i++)
		free(c->rules[i].glob);
	free(c->rules);
	c->rules = NULL;
	c->nrules = 0;
}
