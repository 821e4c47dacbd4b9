/*
 * lt_util.h — helpers for the libgpuphase end-to-end tests: run a program
 * with a controlled environment (no inherited GPUPHASE_*, simcuda first on
 * LD_LIBRARY_PATH, the sanitizer runtime first in LD_PRELOAD when the library
 * is instrumented), capture its exit status, stdout and stderr; load a trace
 * through trace/gp_reader.h into per-type arrays; load simcuda's ground
 * truth. Test code only: failures abort the test through cr_assert.
 */
#ifndef LT_UTIL_H
#define LT_UTIL_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gp_reader.h"
#include "simcuda/sim_truth_reader.h"

extern char **environ;

/* Under AddressSanitizer: Criterion's runner leaks a few bytes of its own
 * (libcriterion.so); suppress exactly that, keep every other leak report. */
const char *__lsan_default_suppressions(void);
__attribute__((used)) const char *__lsan_default_suppressions(void)
{
	return "leak:libcriterion.so\n";
}

static __attribute__((unused)) const char *lt_env(const char *name, const char *def)
{
	const char *v = getenv(name);
	return v && *v ? v : def;
}

static char lt_buf_build[1024], lt_buf_src[1024];
static __attribute__((unused)) const char *lt_build(void)
{
	if (!lt_buf_build[0]) {
		const char *b = lt_env("GP_BUILD", "build");
		if (!realpath(b, lt_buf_build))
			snprintf(lt_buf_build, sizeof lt_buf_build, "%s", b);
	}
	return lt_buf_build;
}
static __attribute__((unused)) const char *lt_src(void)
{
	if (!lt_buf_src[0]) {
		const char *s = lt_env("GP_SRC", ".");
		if (!realpath(s, lt_buf_src))
			snprintf(lt_buf_src, sizeof lt_buf_src, "%s", s);
	}
	return lt_buf_src;
}

/* A fresh working directory for one test (removed by lt_rmdir). */
static __attribute__((unused)) void lt_tmpdir(char *out, size_t len)
{
	snprintf(out, len, "/tmp/lt-%ld-XXXXXX", (long)getpid());
	cr_assert(mkdtemp(out) != NULL, "mkdtemp: %s", strerror(errno));
}

static __attribute__((unused)) void lt_rmdir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	char p[2048];
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
			unlink(p);
		}
	closedir(d);
	rmdir(dir);
}

struct lt_result {
	int status; /* exit code, or 128 + signal                          */
	char *out;  /* stdout, NUL-terminated                              */
	char *err;
	size_t outlen;
};

static __attribute__((unused)) char *lt_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		if (len)
			*len = 0;
		return strdup("");
	}
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	size_t r;
	while ((r = fread(b + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (cap - n < 2)
			b = realloc(b, cap *= 2);
	}
	fclose(f);
	b[n] = 0;
	if (len)
		*len = n;
	return b;
}

enum lt_load { LT_BARE = 0, LT_PRELOAD = 1, LT_INJECT = 2, LT_BOTH = 3 };

/*
 * Run argv in dir with envset ("K=V" to set, "K" alone to unset), NULL-
 * terminated. load says how libgpuphase is loaded. Waits up to timeout_s.
 */
static __attribute__((unused)) void lt_run(const char *dir, const char *const *argv, const char *const *envset, enum lt_load load,
		   int timeout_s, struct lt_result *res)
{
	char outp[1200], errp[1200];
	snprintf(outp, sizeof outp, "%s/.stdout", dir);
	snprintf(errp, sizeof errp, "%s/.stderr", dir);
	pid_t pid = fork();
	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		char lib[1200], llp[2400], pre[2400];
		snprintf(lib, sizeof lib, "%s/lib/libgpuphase.so", lt_build());
		/* a clean slate: no GPUPHASE_* / SIMCUDA_* / injection from outside */
		for (;;) {
			int found = 0;
			for (char **e = environ; *e; e++)
				if (!strncmp(*e, "GPUPHASE_", 9) || !strncmp(*e, "SIMCUDA_", 8) ||
				    !strncmp(*e, "CUDA_INJECTION64_PATH=", 22) || !strncmp(*e, "NVTX_INJECTION64_PATH=", 22) ||
				    !strncmp(*e, "LD_PRELOAD=", 11)) {
					char name[256];
					snprintf(name, sizeof name, "%.*s", (int)(strchr(*e, '=') - *e), *e);
					unsetenv(name);
					found = 1;
					break;
				}
			if (!found)
				break;
		}
		/* Pinned to the old, kind CUPTI clock: these tests compare the
		 * trace's GPU times with simcuda's truth to the nanosecond, and
		 * simcuda's CUPTI now shifts GPU timestamps by an offset and a
		 * drift, as the real one does (docs/simcuda.md "CUPTI"). Until the
		 * report corrects for it, the runs keep the host clock; a test's
		 * own envset may still set them. */
		setenv("SIMCUDA_CUPTI_CLOCK_OFFSET_NS", "0", 1);
		setenv("SIMCUDA_CUPTI_CLOCK_DRIFT_PPM", "0", 1);
		snprintf(llp, sizeof llp, "%s/simcuda%s%s", lt_build(), getenv("LD_LIBRARY_PATH") ? ":" : "",
			 getenv("LD_LIBRARY_PATH") ? getenv("LD_LIBRARY_PATH") : "");
		setenv("LD_LIBRARY_PATH", llp, 1);
		const char *san = lt_env("GP_SAN", "");
		const char *sanrt = lt_env("GP_SAN_RUNTIME", "");
		if (load & LT_PRELOAD) {
			snprintf(pre, sizeof pre, "%s%s%s", *san && *sanrt ? sanrt : "", *san && *sanrt ? ":" : "", lib);
			setenv("LD_PRELOAD", pre, 1);
		} else if (*san && *sanrt) {
			/* simcuda is instrumented too in sanitizer builds */
			setenv("LD_PRELOAD", sanrt, 1);
		}
		if (load & LT_INJECT)
			setenv("CUDA_INJECTION64_PATH", lib, 1);
		if (*san) {
			setenv("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=0", 1);
			setenv("UBSAN_OPTIONS", "print_stacktrace=1", 1);
		}
		for (const char *const *e = envset; e && *e; e++) {
			const char *eq = strchr(*e, '=');
			if (eq) {
				char name[256];
				snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
				setenv(name, eq + 1, 1);
			} else {
				unsetenv(*e);
			}
		}
		if (chdir(dir))
			_exit(126);
		int fo = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fo < 0 || fe < 0)
			_exit(126);
		dup2(fo, 1);
		dup2(fe, 2);
		alarm((unsigned)timeout_s);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int st = 0;
	cr_assert(waitpid(pid, &st, 0) == pid);
	res->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	res->out = lt_slurp(outp, &res->outlen);
	res->err = lt_slurp(errp, NULL);
	unlink(outp);
	unlink(errp);
}

static __attribute__((unused)) void lt_free(struct lt_result *r)
{
	free(r->out);
	free(r->err);
}

/* ---- trace ----------------------------------------------------------------- */

#define LT_VEC(T, name) T *name; size_t n_##name, cap_##name
#define LT_PUSH(tr, name, val)                                                                            \
	do {                                                                                               \
		if ((tr)->n_##name == (tr)->cap_##name) {                                                  \
			(tr)->cap_##name = (tr)->cap_##name ? 2 * (tr)->cap_##name : 64;                   \
			(tr)->name = realloc((tr)->name, (tr)->cap_##name * sizeof(*(tr)->name));          \
		}                                                                                          \
		(tr)->name[(tr)->n_##name++] = (val);                                                      \
	} while (0)

struct lt_trace {
	LT_VEC(struct gp_rec_api, hook);
	LT_VEC(struct gp_rec_api, rt);
	LT_VEC(struct gp_rec_api, drv);
	LT_VEC(struct gp_rec_kernel, kern);
	LT_VEC(struct gp_rec_copy, cpy);
	LT_VEC(struct gp_rec_copy, mset);
	LT_VEC(struct gp_rec_sync, sync);
	LT_VEC(struct gp_rec_extcorr, ext);
	LT_VEC(struct gp_rec_mark, iter);
	LT_VEC(struct gp_rec_mark, win);
	LT_VEC(struct gp_rec_status, status);
	LT_VEC(struct gp_rec_marker, marker);
	LT_VEC(struct gp_rec_stack_ref, sref);
	size_t nstack, nsymbol, ndevice;
	char device0[256];         /* name of device 0                          */
	char *str[65536];          /* string id -> text (ids below 65536)      */
	const char *hook_name[256]; /* hook api id -> name                     */
	struct gp_trace_end end;
	char kv[4096];             /* "key=value\n" lines of the header        */
	uint64_t start_clock;
	int64_t start_wall;
};

static __attribute__((unused)) void lt_trace_load(const char *path, struct lt_trace *t)
{
	memset(t, 0, sizeof *t);
	char err[512];
	struct gp_reader *r = NULL;
	int rc = gp_reader_open(path, &r, err, sizeof err);
	cr_assert(rc == 0, "cannot open trace %s: %s", path, err);
	const struct gp_trace_info *info = gp_reader_info(r);
	t->start_clock = info->start_clock_ns;
	t->start_wall = (int64_t)info->start_wall_ns;
	for (size_t i = 0; i < info->nkv; i++) {
		size_t n = strlen(t->kv);
		snprintf(t->kv + n, sizeof t->kv - n, "%s=%s\n", info->keys[i], info->values[i]);
	}
	const union gp_rec *g;
	uint32_t ns;
	uint32_t name_of[256] = {0};
	while ((rc = gp_reader_next(r, &g, &ns, err, sizeof err)) == 1) {
		switch (g->type) {
		case GP_REC_HOOK_API: LT_PUSH(t, hook, g->api); break;
		case GP_REC_RUNTIME_API: LT_PUSH(t, rt, g->api); break;
		case GP_REC_DRIVER_API: LT_PUSH(t, drv, g->api); break;
		case GP_REC_KERNEL: LT_PUSH(t, kern, g->kernel); break;
		case GP_REC_MEMCPY: LT_PUSH(t, cpy, g->copy); break;
		case GP_REC_MEMSET: LT_PUSH(t, mset, g->copy); break;
		case GP_REC_SYNC: LT_PUSH(t, sync, g->sync); break;
		case GP_REC_EXTCORR: LT_PUSH(t, ext, g->extcorr); break;
		case GP_REC_ITER: LT_PUSH(t, iter, g->mark); break;
		case GP_REC_WINDOW: LT_PUSH(t, win, g->mark); break;
		case GP_REC_STATUS: LT_PUSH(t, status, g->status); break;
		case GP_REC_MARKER: LT_PUSH(t, marker, g->marker); break;
		case GP_REC_STACK_REF: LT_PUSH(t, sref, g->stack_ref); break;
		case GP_REC_STACK: t->nstack++; break;
		case GP_REC_SYMBOL: t->nsymbol++; break;
		case GP_REC_DEVICE:
			t->ndevice++;
			if (g->device.device == 0 && g->device.name < 65536 && t->str[g->device.name])
				snprintf(t->device0, sizeof t->device0, "%s", t->str[g->device.name]);
			break;
		case GP_REC_STRING:
			if (g->string.id < 65536 && !t->str[g->string.id]) {
				char buf[4096];
				gp_string_text(g, ns, buf, sizeof buf);
				t->str[g->string.id] = strdup(buf);
			}
			break;
		case GP_REC_API_NAME:
			if (g->api_name.domain == GP_REC_HOOK_API && g->api_name.api_id < 256)
				name_of[g->api_name.api_id] = g->api_name.name;
			break;
		default: break;
		}
	}
	cr_assert(rc == 0, "reading %s: %s", path, err);
	t->end = *gp_reader_end(r);
	gp_reader_close(r);
	for (int i = 0; i < 256; i++)
		t->hook_name[i] = name_of[i] && name_of[i] < 65536 ? t->str[name_of[i]] : NULL;
}

static __attribute__((unused)) void lt_trace_free(struct lt_trace *t)
{
	free(t->hook); free(t->rt); free(t->drv); free(t->kern); free(t->cpy); free(t->mset);
	free(t->sync); free(t->ext); free(t->iter); free(t->win); free(t->status); free(t->marker); free(t->sref);
	for (int i = 0; i < 65536; i++)
		free(t->str[i]);
}

static __attribute__((unused)) const char *lt_str(const struct lt_trace *t, uint32_t id)
{
	return id < 65536 && t->str[id] ? t->str[id] : "";
}

static __attribute__((unused)) int lt_has_status(const struct lt_trace *t, int kind)
{
	for (size_t i = 0; i < t->n_status; i++)
		if (t->status[i].kind == kind)
			return 1;
	return 0;
}

/* The single trace file in dir (asserts there is exactly one). */
static __attribute__((unused)) void lt_find_trace(const char *dir, char *out, size_t len)
{
	DIR *d = opendir(dir);
	cr_assert(d);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".gpht")) {
			snprintf(out, len, "%s/%s", dir, e->d_name);
			n++;
		}
	closedir(d);
	cr_assert(n == 1, "expected exactly one trace in %s, found %d", dir, n);
}

static __attribute__((unused)) int lt_count_traces(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		n += strstr(e->d_name, ".gpht") != NULL;
	closedir(d);
	return n;
}

#endif
