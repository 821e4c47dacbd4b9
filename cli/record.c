/*
 * record.c — `gpuphase record [options] -- CMD [ARGS...]`: runs CMD with
 * libgpuphase.so loaded (LD_PRELOAD, appended to any existing value, plus
 * CUDA_INJECTION64_PATH and, for NVTX, NVTX_INJECTION64_PATH) and the
 * options turned into GPUPHASE_* variables — for CMD only, never for this
 * process. Before running it warns about what would make the capture
 * incomplete (static cudart, another profiler holding CUPTI, an output
 * directory that cannot be written); after CMD ends it prints one summary
 * line (trace path, size, records, drops) and returns CMD's exit status
 * (128+N when a signal N killed it, like a shell).
 *
 * Called by main() (gpuphase.c) on the command's only thread. Signals: while
 * CMD runs, record_wait.c takes them: Ctrl-C, SIGTERM and SIGHUP first
 * finish CMD's trace (the control socket's `stop`), then reach CMD; record
 * itself runs on, so the summary is always printed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "gp_reader.h"
#include "libgpuphase/gp_config.h"

struct gp_record_opts {
	const char *output;
	const char *window;
	const char *marker;
	const char *stacks;
	const char *ring_records;
	const char *flush_ms;
	const char *max_bytes;
	const char *cupti_lib;
	const char *control_dir;
	const char *log;
	const char *lib;
	const char *stack_depth;
	const char *counters;    /* --counters: GPUPHASE_COUNTERS (from= resolved) */
	char max_bytes_env[32];  /* --max-size in bytes, for GPUPHASE_MAX_BYTES */
	int nvtx;
	int no_cupti;
	int follow_fork;
	int force;
	int quiet;
	int no_preload;
	int no_inject;
	int report;              /* --report: print the report after the run    */
	const char *report_opts; /* --report=OPTS: its options, space-separated */
};

/* ---- value checks: one clear line naming option, value and what is accepted */

static int gp_record_bad(const char *opt, const char *val, const char *accepted)
{
	fprintf(stderr, "gpuphase: record: %s '%s': %s\n", opt, val, accepted);
	return -1;
}

/* One option's value, checked by the library's own parser (config.c, linked
 * in): what the library would refuse at start, disabling itself, is refused
 * here with the library's words. cfg receives the parsed value. */
static int gp_record_check(const char *opt, const char *var, const char *val, struct gp_config *cfg)
{
	const char *accepted;
	if (!val || gp_config_check(var, val, cfg, &accepted) == 0)
		return 0;
	return gp_record_bad(opt, val, accepted ? accepted : "not a gpuphase variable");
}

/* ---- trace files: the pattern as a glob, before/after sets, the summary ---- */

/* Turn an output pattern into a glob: %p %h %r %t -> '*', %% -> '%', glob
 * metacharacters in the literal parts escaped. */
static void gp_record_pattern_glob(const char *pat, char *out, size_t len)
{
	size_t k = 0;
	for (const char *p = pat; *p && k + 3 < len; p++) {
		if (*p == '%' && p[1]) {
			p++;
			if (*p == '%')
				out[k++] = '%';
			else
				out[k++] = '*';
			continue;
		}
		if (strchr("*?[]\\", *p))
			out[k++] = '\\';
		out[k++] = *p;
	}
	out[k] = '\0';
}

struct gp_record_file {
	char *path;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
};

struct gp_record_files {
	struct gp_record_file *v;
	size_t n;
};

static void gp_record_files_free(struct gp_record_files *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].path);
	free(f->v);
	f->v = NULL;
	f->n = 0;
}

/* With the library's default name and no job id here, the program may
 * still be a launcher (torchrun) whose workers are in a job: their traces
 * go to the job default, which this glob of it finds too. NULL otherwise. */
static const char *gp_record_job_glob;

static void gp_record_files_scan(const char *globpat, struct gp_record_files *f)
{
	glob_t g;
	f->v = NULL;
	f->n = 0;
	int rc = glob(globpat, 0, NULL, &g);
	if (gp_record_job_glob)
		rc = glob(gp_record_job_glob, rc == 0 ? GLOB_APPEND : 0, NULL, &g) == 0 ? 0 : rc;
	if (rc != 0)
		return;
	f->v = calloc(g.gl_pathc ? g.gl_pathc : 1, sizeof *f->v);
	for (size_t i = 0; f->v && i < g.gl_pathc; i++) {
		struct stat st;
		if (lstat(g.gl_pathv[i], &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		struct gp_record_file *e = &f->v[f->n];
		e->path = strdup(g.gl_pathv[i]);
		if (!e->path)
			break;
		e->dev = st.st_dev;
		e->ino = st.st_ino;
		e->mtime = st.st_mtim;
		f->n++;
	}
	globfree(&g);
}

/* True when after-entry e is new or was rewritten since the before set. */
static int gp_record_file_is_new(const struct gp_record_file *e, const struct gp_record_files *before)
{
	for (size_t i = 0; i < before->n; i++) {
		const struct gp_record_file *b = &before->v[i];
		if (b->dev == e->dev && b->ino == e->ino && strcmp(b->path, e->path) == 0)
			return b->mtime.tv_sec != e->mtime.tv_sec || b->mtime.tv_nsec != e->mtime.tv_nsec;
	}
	return 1;
}

struct gp_record_sum {
	uint64_t bytes, records, dropped;
	uint64_t window_starts, calls; /* capture window starts, API records */
	int incomplete, unreadable;
	char err[256];
};

/* Read one trace to its end (bulk path) and add up what it holds. */
static void gp_record_summarise(const char *path, struct gp_record_sum *s)
{
	struct stat st;
	if (stat(path, &st) == 0)
		s->bytes += (uint64_t)st.st_size;
	struct gp_reader *r = NULL;
	char err[256];
	if (gp_reader_open(path, &r, err, sizeof err) < 0) {
		s->unreadable = 1;
		snprintf(s->err, sizeof s->err, "%s", err);
		return;
	}
	const union gp_rec *recs;
	size_t n;
	int rc;
	while ((rc = gp_reader_next_block(r, &recs, &n, err, sizeof err)) > 0) {
		for (size_t i = 0; i < n; i += gp_rec_slots(&recs[i])) {
			uint8_t t = recs[i].type;
			s->window_starts += t == GP_REC_WINDOW && recs[i].mark.kind == GP_WIN_START;
			s->calls += t == GP_REC_HOOK_API || t == GP_REC_RUNTIME_API || t == GP_REC_DRIVER_API;
		}
	}
	if (rc < 0) {
		s->unreadable = 1;
		snprintf(s->err, sizeof s->err, "%s", err);
	}
	const struct gp_trace_end *end = gp_reader_end(r);
	if (end) {
		s->records += end->records;
		s->dropped += end->dropped_ring + end->dropped_cupti;
		if (!end->complete)
			s->incomplete = 1;
	}
	gp_reader_close(r);
}

static void gp_record_print_summary(const char *pattern, const struct gp_record_files *before,
				    const char *globpat, int static_cudart, const char *win)
{
	struct gp_record_files after;
	gp_record_files_scan(globpat, &after);
	struct gp_record_sum s;
	memset(&s, 0, sizeof s);
	char names[1024] = "";
	size_t nnew = 0, off = 0;
	const char *first = NULL;
	for (size_t i = 0; i < after.n; i++) {
		if (!gp_record_file_is_new(&after.v[i], before))
			continue;
		gp_record_summarise(after.v[i].path, &s);
		if (!first)
			first = after.v[i].path;
		if (off < sizeof names) {
			int w = snprintf(names + off, sizeof names - off, "%s%s", nnew ? ", " : "", after.v[i].path);
			off += w > 0 ? (size_t)w : 0;
		}
		nnew++;
	}
	if (nnew == 0 && static_cudart) {
		fprintf(stderr, "gpuphase: no trace written (no new file matches %s, from the output pattern %s): "
				"a statically linked CUDA runtime loads "
				"the injection library only once the CUDA driver starts; did the program report a "
				"missing or insufficient driver above?\n", globpat, pattern);
		gp_record_files_free(&after);
		return;
	}
	if (nnew == 0 && win && strstr(win, "every=")) { /* duty cycle: docs/always-on.md */
		size_t n = strlen(globpat);
		if (n >= 5 && !strcmp(globpat + n - 5, ".gpht"))
			n -= 5;
		fprintf(stderr, "gpuphase: duty-cycled capture: each window is a trace of its own, %.*s.windows/w<SEQ>.gpht "
				"(gpuphase report reads one alone; docs/always-on.md)\n", (int)n, globpat);
		gp_record_files_free(&after);
		return;
	}
	if (nnew == 0) {
		fprintf(stderr, "gpuphase: no trace written (no new file matches %s, from the output pattern %s): "
				"the program made no CUDA calls, or the "
				"capture library disabled itself (see the messages above; GPUPHASE_LOG=info tells more)\n",
			globpat, pattern);
		gp_record_files_free(&after);
		return;
	}
	char what[1200];
	if (nnew == 1)
		snprintf(what, sizeof what, "trace %s", first);
	else
		snprintf(what, sizeof what, "%zu traces (%s%s)", nnew, names, off >= sizeof names ? "..." : "");
	char tail[400] = "";
	/* a window that never opened says so itself, from the library; one
	 * that opened when the program made no CUDA call is said here */
	if (!s.unreadable && s.window_starts && !s.calls)
		snprintf(tail, sizeof tail, "; NOTHING CAPTURED: the capture window opened but held no CUDA call "
					     "(the program's CUDA work lies outside it)");
	else if (s.unreadable)
		snprintf(tail, sizeof tail, "; unreadable: %s", s.err);
	else if (s.incomplete)
		snprintf(tail, sizeof tail, "; incomplete (no footer: the program was killed or is still writing). "
					     "Readable up to the last whole block; lost: the records of the last "
					     "flush interval (GPUPHASE_FLUSH_MS) and GPU work not yet delivered "
					     "by CUPTI, and the final drop counts");
	fprintf(stderr, "gpuphase: %s, %.2f MiB, %llu records, %llu dropped%s\n", what,
		(double)s.bytes / (1024.0 * 1024.0), (unsigned long long)s.records,
		(unsigned long long)s.dropped, tail);
	gp_record_files_free(&after);
}

/* ---- warnings before running ---- */

/* True when the colon/space separated list contains an entry whose text
 * contains needle (case-sensitive). */
static int gp_record_list_has(const char *list, const char *needle)
{
	return list && strstr(list, needle) != NULL;
}

static void gp_record_warn_profilers(const char *lib)
{
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	if (inj && *inj && strcmp(inj, lib) != 0) {
		char real[PATH_MAX];
		if (!realpath(inj, real) || strcmp(real, lib) != 0)
			fprintf(stderr, "gpuphase: warning: another tool holds CUDA injection "
					"(CUDA_INJECTION64_PATH=%s); it is kept, and if it subscribes to CUPTI "
					"gpuphase runs hook-only: no GPU execute/queue/sync times\n", inj);
	}
	const char *pre = getenv("LD_PRELOAD");
	static const char *const tools[] = { "ToolsInjection", "nsight", "libcupti",
					     "libkineto", "libnvperf" };
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
		if (gp_record_list_has(pre, tools[i])) {
			fprintf(stderr, "gpuphase: warning: LD_PRELOAD=%s looks like another CUDA profiler; "
					"CUPTI allows one subscriber, so gpuphase may run hook-only "
					"(no GPU execute/queue/sync times)\n", pre);
			break;
		}
	}
	/* The variables other CUDA tools set in their targets: nsys
	 * (NSYS_PROFILING_SESSION_ID), Nsight Compute
	 * (NV_NSIGHT_INJECTION_TRANSPORT_TYPE), nvprof (NVPROF_ID). */
	static const char *const tool_vars[] = { "NSYS_PROFILING_SESSION_ID", "NV_NSIGHT_INJECTION_TRANSPORT_TYPE",
						 "NVPROF_ID" };
	for (size_t i = 0; i < sizeof tool_vars / sizeof tool_vars[0]; i++) {
		if (getenv(tool_vars[i])) {
			fprintf(stderr, "gpuphase: warning: running under another CUDA profiler (%s is set); it "
					"holds CUPTI, so gpuphase will run hook-only (no GPU execute/queue/sync "
					"times)\n", tool_vars[i]);
			break;
		}
	}
	const char *nvtx = getenv("NVTX_INJECTION64_PATH");
	if (nvtx && *nvtx && strcmp(nvtx, lib) != 0)
		fprintf(stderr, "gpuphase: warning: NVTX_INJECTION64_PATH=%s belongs to another tool; "
				"NVTX ranges go to it, not to gpuphase\n", nvtx);
	const char *dis = getenv("GPUPHASE_DISABLE");
	if (dis && *dis && strcmp(dis, "0") && strcmp(dis, "no") && strcmp(dis, "false") && strcmp(dis, "off"))
		fprintf(stderr, "gpuphase: warning: GPUPHASE_DISABLE=%s is set: nothing will be recorded\n", dis);
}

/* Inspect CMD; warn about what the preload cannot see. Returns 1 when CMD
 * links cudart statically (the caller then records through injection only). */
static int gp_record_warn_binary(const char *path, const char *cmd)
{
	struct gp_elf_info info;
	char err[256];
	int rc = gp_elfscan_inspect(path, &info, err, sizeof err);
	if (rc < 0) {
		if (rc == -EINVAL && err[0])
			fprintf(stderr, "gpuphase: warning: %s: malformed ELF (%s); cannot check how it links CUDA\n",
				path, err);
		return 0;
	}
	if (info.is_static_exe)
		fprintf(stderr, "gpuphase: warning: %s is a fully static executable: LD_PRELOAD has no effect; "
				"only CUPTI injection can see it\n", cmd);
	if (info.cudart == GP_ELF_CUDART_STATIC)
		fprintf(stderr, "gpuphase: warning: %s is statically linked to the CUDA runtime (cudart): "
				"injection only; launch-phase hooks lost (no operator ids, call stacks or hook "
				"timestamps; launch times come from CUPTI alone, and nothing if CUPTI is "
				"unavailable). Recording through CUDA_INJECTION64_PATH only; rebuild with "
				"`nvcc -cudart shared` for full capture.\n", cmd);
	return info.cudart == GP_ELF_CUDART_STATIC;
}

/* Warn when the directory of the output pattern cannot take a new file. */
static void gp_record_warn_outdir(const char *pattern)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(pattern, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == pattern)
		snprintf(dir, sizeof dir, "/");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - pattern), pattern);
	if (strchr(dir, '%'))
		return; /* depends on pid/host/rank: the library reports failures */
	struct stat st;
	if (stat(dir, &st) != 0) {
		fprintf(stderr, "gpuphase: warning: output directory %s: %s: no trace will be written\n", dir,
			strerror(errno));
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "gpuphase: warning: output directory %s is not a directory: no trace will be written\n",
			dir);
		return;
	}
	/* Probe by creating a file: access(2) says yes to root on a read-only
	 * or special file system where creating still fails. */
	char probe[PATH_MAX + 64];
	snprintf(probe, sizeof probe, "%s/.gpuphase-probe-%d-XXXXXX", dir, (int)getpid());
	int fd = mkstemp(probe);
	if (fd < 0) {
		fprintf(stderr, "gpuphase: warning: output directory %s is not writable (%s): no trace will be "
				"written\n", dir, strerror(errno));
		return;
	}
	close(fd);
	unlink(probe);
}

/* ---- running the command ---- */

/* Set var to val in this (child) process; returns 0 or -1 with a message. */
static int gp_record_setenv(const char *var, const char *val)
{
	if (!val)
		return 0;
	if (setenv(var, val, 1) != 0) {
		fprintf(stderr, "gpuphase: record: cannot set %s: %s\n", var, strerror(errno));
		return -1;
	}
	return 0;
}

/* In the child: the environment CMD runs with. */
static int gp_record_child_env(const struct gp_record_opts *o)
{
	if (!o->no_preload) {
		const char *old = getenv("LD_PRELOAD");
		if (old && *old && !strstr(old, o->lib)) {
			size_t n = strlen(old) + strlen(o->lib) + 2;
			char *v = malloc(n);
			if (!v)
				return -1;
			snprintf(v, n, "%s:%s", old, o->lib);
			int rc = gp_record_setenv("LD_PRELOAD", v);
			free(v);
			if (rc)
				return rc;
		} else if (!old || !*old) {
			if (gp_record_setenv("LD_PRELOAD", o->lib))
				return -1;
		}
	}
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	if (!o->no_inject && (!inj || !*inj) && gp_record_setenv("CUDA_INJECTION64_PATH", o->lib))
		return -1;
	int want_nvtx = o->nvtx || (o->marker && strncmp(o->marker, "nvtx:", 5) == 0);
	const char *nv = getenv("NVTX_INJECTION64_PATH");
	if (want_nvtx && (!nv || !*nv) && gp_record_setenv("NVTX_INJECTION64_PATH", o->lib))
		return -1;
	const char *max_bytes = o->max_bytes ? o->max_bytes_env : NULL;
	if (gp_record_setenv("GPUPHASE_OUTPUT", o->output) || gp_record_setenv("GPUPHASE_WINDOW", o->window) ||
	    gp_record_setenv("GPUPHASE_ITER_MARKER", o->marker) || gp_record_setenv("GPUPHASE_STACKS", o->stacks) ||
	    gp_record_setenv("GPUPHASE_RING_RECORDS", o->ring_records) ||
	    gp_record_setenv("GPUPHASE_FLUSH_MS", o->flush_ms) || gp_record_setenv("GPUPHASE_MAX_BYTES", max_bytes) ||
	    gp_record_setenv("GPUPHASE_CUPTI_LIB", o->cupti_lib) ||
	    gp_record_setenv("GPUPHASE_CONTROL_DIR", o->control_dir) || gp_record_setenv("GPUPHASE_LOG", o->log) ||
	    gp_record_setenv("GPUPHASE_STACK_DEPTH", o->stack_depth) ||
	    gp_record_setenv("GPUPHASE_COUNTERS", o->counters) ||
	    gp_record_setenv("GPUPHASE_CUPTI", o->no_cupti ? "0" : NULL) ||
	    gp_record_setenv("GPUPHASE_FOLLOW_FORK", o->follow_fork ? "1" : NULL))
		return -1;
	return 0;
}

/* Fork, set the environment, exec CMD. Reports exec failures through a
 * close-on-exec pipe so the message and status come from here. Returns the
 * exit status to pass on. */
static int gp_record_run(const struct gp_record_opts *o, char **cmd, int *exec_failed)
{
	*exec_failed = 1;
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		fprintf(stderr, "gpuphase: record: pipe: %s\n", strerror(errno));
		return 1;
	}
	/* the signals record_wait.c takes, blocked before the fork: none is
	 * lost between the fork and the wait */
	sigset_t waitset, oldmask;
	gp_record_wait_signals(&waitset);
	int tty = gp_record_wait_terminal();
	fflush(NULL);
	sigprocmask(SIG_BLOCK, &waitset, &oldmask);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "gpuphase: record: fork: %s\n", strerror(errno));
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		close(pfd[0]);
		close(pfd[1]);
		return 1;
	}
	if (pid == 0) {
		close(pfd[0]);
		if (tty >= 0)
			setpgid(0, 0); /* its own job: the terminal's Ctrl-C reaches record first */
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		int e = 0;
		if (gp_record_child_env(o) == 0) {
			execvp(cmd[0], cmd);
			e = errno;
		} else {
			e = EINVAL;
		}
		ssize_t w = write(pfd[1], &e, sizeof e);
		(void)w;
		_exit(e == ENOENT ? 127 : 126);
	}
	if (tty >= 0)
		setpgid(pid, pid);
	close(pfd[1]);
	int e = 0;
	ssize_t r;
	do
		r = read(pfd[0], &e, sizeof e);
	while (r < 0 && errno == EINTR);
	close(pfd[0]);
	int status = 0;
	int w = gp_record_wait(pid, tty, o->control_dir, cmd[0], &status);
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	if (r == (ssize_t)sizeof e) {
		fprintf(stderr, "gpuphase: record: cannot run '%s': %s\n", cmd[0], strerror(e));
		return e == ENOENT ? 127 : 126;
	}
	*exec_failed = 0;
	if (w < 0) {
		fprintf(stderr, "gpuphase: record: waiting for %s: %s\n", cmd[0], strerror(-w));
		return 1;
	}
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		fprintf(stderr, "gpuphase: %s was killed by signal %d (%s)%s: what was lost is said below "
				"(nothing when the trace is complete)\n", cmd[0], sig, strsignal(sig),
			WCOREDUMP(status) ? ", core dumped" : "");
		return 128 + sig;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* Parse the options into *o. Returns -1 to go on (the command starts at
 * argv[optind]), or the exit status to return now (0 after --help, 2 on a
 * usage error). */
static int gp_record_parse_args(int argc, char **argv, struct gp_record_opts *o)
{
	enum { O_NVTX = 1000, O_RING, O_FLUSH, O_MAXB, O_CUPTI, O_CTL, O_LOG, O_LIB, O_NOPRE, O_NOINJ, O_DEPTH,
	       O_NOCUPTI, O_FORK, O_REPORT, O_COUNTERS };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' }, { "window", required_argument, NULL, 'w' },
		{ "marker", required_argument, NULL, 'm' }, { "stacks", required_argument, NULL, 's' },
		{ "nvtx", no_argument, NULL, O_NVTX }, { "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' }, { "ring-records", required_argument, NULL, O_RING },
		{ "flush-ms", required_argument, NULL, O_FLUSH }, { "max-size", required_argument, NULL, O_MAXB },
		{ "cupti-lib", required_argument, NULL, O_CUPTI },
		{ "control-dir", required_argument, NULL, O_CTL }, { "log", required_argument, NULL, O_LOG },
		{ "lib", required_argument, NULL, O_LIB }, { "no-preload", no_argument, NULL, O_NOPRE },
		{ "no-inject", no_argument, NULL, O_NOINJ }, { "stack-depth", required_argument, NULL, O_DEPTH },
		{ "no-cupti", no_argument, NULL, O_NOCUPTI }, { "follow-fork", no_argument, NULL, O_FORK },
		{ "report", optional_argument, NULL, O_REPORT }, { "help", no_argument, NULL, 'h' },
		{ "counters", required_argument, NULL, O_COUNTERS },
		{ NULL, 0, NULL, 0 }
	};
	memset(o, 0, sizeof *o);
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+o:w:m:s:fqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'w': o->window = optarg; break;
		case 'm': o->marker = optarg; break;
		case 's': o->stacks = optarg; break;
		case 'f': o->force = 1; break;
		case 'q': o->quiet = 1; break;
		case O_NVTX: o->nvtx = 1; break;
		case O_RING: o->ring_records = optarg; break;
		case O_FLUSH: o->flush_ms = optarg; break;
		case O_MAXB: o->max_bytes = optarg; break;
		case O_CUPTI: o->cupti_lib = optarg; break;
		case O_CTL: o->control_dir = optarg; break;
		case O_LOG: o->log = optarg; break;
		case O_LIB: o->lib = optarg; break;
		case O_NOPRE: o->no_preload = 1; break;
		case O_NOINJ: o->no_inject = 1; break;
		case O_DEPTH: o->stack_depth = optarg; break;
		case O_NOCUPTI: o->no_cupti = 1; break;
		case O_FORK: o->follow_fork = 1; break;
		case O_REPORT: o->report = 1; o->report_opts = optarg; break;
		case O_COUNTERS: o->counters = optarg; break;
		case 'h': gp_help_print("record"); return 0;
		case ':':
			fprintf(stderr, "gpuphase: record: option '%s' needs a value\n%s\n", argv[optind - 1],
				gp_help_usage("record"));
			return 2;
		default:
			fprintf(stderr, "gpuphase: record: unknown option '%s' (gpuphase record --help lists them)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	return -1;
}

/* --counters [top=N,][samples=M,][skip=K,]from=TRACE: the names of TRACE's
 * top N kernel operators (default 5), as gpuphase-report ranks them
 * (--counter-targets N: its own ranking, no second copy of it here), made
 * into kernel=NAME;NAME... with every glob character escaped, so each
 * matches that operator's name exactly (kernel_name.h), behind the other
 * options. 0 with the value in out, or 2 after one message. */
static int gp_record_counters_from(const char *spec, char *out, size_t len)
{
	const char *from = strstr(spec, "from=");
	if (from != spec && (!from || from[-1] != ','))
		return gp_record_bad("--counters", spec, "from=TRACE comes last"), 2;
	const char *trace = from + 5, *top = "5";
	char opts[256] = "", tb[32];
	size_t ol = 0;
	for (const char *p = spec; p < from;) { /* the options before from= */
		const char *comma = strchr(p, ',');
		size_t n = (size_t)(comma - p);
		if (n > 4 && !strncmp(p, "top=", 4) && n - 4 < sizeof tb) {
			snprintf(tb, sizeof tb, "%.*s", (int)(n - 4), p + 4);
			top = tb;
		} else if (ol + n + 2 < sizeof opts) {
			ol += (size_t)snprintf(opts + ol, sizeof opts - ol, "%.*s,", (int)n, p);
		}
		p = comma + 1;
	}
	if (!*trace)
		return gp_record_bad("--counters", spec, "from= needs a trace"), 2;
	char tool[PATH_MAX];
	if (gp_locate_component("gpuphase-report", "gpuphase-report", tool, sizeof tool) != 0) {
		fprintf(stderr, "gpuphase: record: --counters from=: gpuphase-report not found next to gpuphase or in PATH\n");
		return 2;
	}
	int fd[2];
	if (pipe(fd) != 0)
		return gp_record_bad("--counters", spec, strerror(errno)), 2;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execl(tool, tool, "--counter-targets", top, "--", trace, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	char names[16384];
	size_t got = 0;
	ssize_t r;
	while (pid > 0 && got < sizeof names - 1 && (r = read(fd[0], names + got, sizeof names - 1 - got)) != 0)
		if (r > 0)
			got += (size_t)r;
		else if (errno != EINTR)
			break;
	names[got] = 0;
	close(fd[0]);
	int status = 0;
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "gpuphase: record: --counters from=%s: gpuphase-report could not rank its kernels\n", trace);
		return 2;
	}
	size_t k = (size_t)snprintf(out, len, "%skernel=", opts), nk = 0;
	for (char *line = names, *nl; *line && k + 2 < len; line = nl + 1) {
		if (!(nl = strchr(line, '\n')))
			break;
		*nl = 0;
		if (!*line || strchr(line, ';'))
			continue;
		if (nk++)
			out[k++] = ';';
		for (const char *c = line; *c && k + 3 < len; c++) {
			if (strchr("*?[]\\", *c))
				out[k++] = '\\';
			out[k++] = *c;
		}
	}
	out[k < len ? k : len - 1] = 0;
	if (!nk) {
		fprintf(stderr, "gpuphase: record: --counters from=%s: its report has no kernel\n", trace);
		return 2;
	}
	if (k + 3 >= len) {
		fprintf(stderr, "gpuphase: record: --counters from=%s: its kernels' names are too long together; "
				"use a smaller top=N or kernel=GLOB\n", trace);
		return 2;
	}
	fprintf(stderr, "gpuphase: counters for %zu kernel%s of %s's report\n", nk, nk == 1 ? "" : "s", trace);
	return 0;
}

/* Check every option value before running anything, with the library's
 * parser; makes --control-dir absolute first (in ctl, PATH_MAX bytes). 0, or
 * 2 after one message. */
static int gp_record_check_opts(struct gp_record_opts *o, char *ctl)
{
	if (o->control_dir) {
		if (o->control_dir[0] == '/')
			snprintf(ctl, PATH_MAX, "%s", o->control_dir);
		else if (!getcwd(ctl, PATH_MAX) || strlen(ctl) + 1 + strlen(o->control_dir) >= PATH_MAX)
			return gp_record_bad("--control-dir", o->control_dir, "cannot make it an absolute path"), 2;
		else
			snprintf(ctl + strlen(ctl), PATH_MAX - strlen(ctl), "/%s", o->control_dir);
		o->control_dir = ctl;
	}
	const struct {
		const char *opt, *var, *val;
	} checks[] = {
		{ "--window", "GPUPHASE_WINDOW", o->window },
		{ "--marker", "GPUPHASE_ITER_MARKER", o->marker },
		{ "--stacks", "GPUPHASE_STACKS", o->stacks },
		{ "--ring-records", "GPUPHASE_RING_RECORDS", o->ring_records },
		{ "--flush-ms", "GPUPHASE_FLUSH_MS", o->flush_ms },
		{ "--stack-depth", "GPUPHASE_STACK_DEPTH", o->stack_depth },
		{ "--control-dir", "GPUPHASE_CONTROL_DIR", o->control_dir },
		{ "--output", "GPUPHASE_OUTPUT", o->output },
		{ "--log", "GPUPHASE_LOG", o->log },
		{ "--cupti-lib", "GPUPHASE_CUPTI_LIB", o->cupti_lib },
	};
	static struct gp_config cfg; /* large: not on the stack */
	for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
		if (gp_record_check(checks[i].opt, checks[i].var, checks[i].val, &cfg))
			return 2;
	static char counters[GP_PATH_MAX];
	if (o->counters && (!strncmp(o->counters, "from=", 5) || strstr(o->counters, ",from="))) {
		int rc = gp_record_counters_from(o->counters, counters, sizeof counters);
		if (rc)
			return rc;
		o->counters = counters;
	}
	if (gp_record_check("--counters", "GPUPHASE_COUNTERS", o->counters, &cfg))
		return 2;
	if (o->max_bytes) {
		if (gp_record_check("--max-size", "GPUPHASE_MAX_BYTES", o->max_bytes, &cfg))
			return 2;
		snprintf(o->max_bytes_env, sizeof o->max_bytes_env, "%llu", (unsigned long long)cfg.max_bytes);
	}
	if (o->no_preload && o->no_inject) {
		fprintf(stderr, "gpuphase: record: --no-preload and --no-inject together would load nothing\n");
		return 2;
	}
	return 0;
}

/* The library: --lib, else ../lib/libgpuphase.so next to this binary, as a
 * real path in lib (PATH_MAX bytes). 0, or 1 after a message. */
static int gp_record_find_lib(const char *opt_lib, char *lib)
{
	if (opt_lib) {
		if (!realpath(opt_lib, lib)) {
			fprintf(stderr, "gpuphase: record: --lib %s: %s\n", opt_lib, strerror(errno));
			return 1;
		}
		return 0;
	}
	char found[PATH_MAX];
	if (gp_locate_component("../lib/libgpuphase.so", NULL, found, sizeof found) != 0 || !realpath(found, lib)) {
		char dir[PATH_MAX] = "?";
		gp_locate_self_dir(dir, sizeof dir);
		fprintf(stderr, "gpuphase: record: libgpuphase.so not found in %s/../lib "
				"(build it with `make`, install with `make install`, or name it with --lib)\n",
			dir);
		return 1;
	}
	return 0;
}

/* --report[=OPTS]: run gpuphase-report OPTS on the traces this run wrote
 * (like nsys --stats), its output on our stdout. The program's exit status
 * stays record's; a report that fails says so on stderr. */
static void gp_record_report(const struct gp_record_opts *o, const struct gp_record_files *before,
			     const char *globpat)
{
	struct gp_record_files after;
	gp_record_files_scan(globpat, &after);
	char *opts = o->report_opts ? strdup(o->report_opts) : NULL;
	char **argv = calloc(after.n + 64, sizeof *argv);
	size_t nopts = 0, ntraces = 0;
	if (!argv || (o->report_opts && !opts)) {
		fprintf(stderr, "gpuphase: record --report: out of memory\n");
		goto out;
	}
	char *save = NULL;
	for (char *t = opts ? strtok_r(opts, " \t", &save) : NULL; t && nopts < 60; t = strtok_r(NULL, " \t", &save))
		argv[nopts++] = t;
	for (size_t i = 0; i < after.n; i++)
		if (gp_record_file_is_new(&after.v[i], before))
			argv[nopts + ntraces++] = after.v[i].path;
	if (!ntraces) {
		fprintf(stderr, "gpuphase: record --report: no trace to report\n");
		goto out;
	}
	int st = gp_report_run("record --report", argv, nopts, argv + nopts, ntraces);
	if (st != 0 && st != 3)
		fprintf(stderr, "gpuphase: record --report: the report failed (see above)\n");
out:
	free(argv);
	free(opts);
	gp_record_files_free(&after);
}

/* Does the last component of name end in ".gpht"? */
static int gp_record_has_ext(const char *name)
{
	size_t n = strlen(name);
	return n >= 5 && !strcmp(name + n - 5, ".gpht");
}

/* A fixed output name (no %-pattern) that exists: keep it as NAME.old (or
 * remove it with --force), as the library never overwrites. 0, or 1 after
 * a message. */
static int gp_record_keep_old(const char *pattern, int force)
{
	if (strchr(pattern, '%') || access(pattern, F_OK) != 0)
		return 0;
	if (force) {
		if (unlink(pattern) != 0) {
			fprintf(stderr, "gpuphase: record: cannot remove %s: %s\n", pattern, strerror(errno));
			return 1;
		}
		return 0;
	}
	char old[PATH_MAX];
	if (snprintf(old, sizeof old, "%s.old", pattern) >= (int)sizeof old || rename(pattern, old) != 0) {
		fprintf(stderr, "gpuphase: record: %s exists and cannot be moved to %s.old: %s "
				"(use -f to overwrite)\n", pattern, pattern, strerror(errno));
		return 1;
	}
	fprintf(stderr, "gpuphase: %s exists: moved to %s\n", pattern, old);
	return 0;
}

int gp_record_main(int argc, char **argv)
{
	struct gp_record_opts o;
	int rc = gp_record_parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	char **cmd = argv + optind;
	if (!*cmd) {
		fprintf(stderr, "gpuphase: record: no command to run\n%s\n", gp_help_usage("record"));
		return 2;
	}
	/* Like nsys: -o NAME without the extension writes NAME.gpht, so the bare
	 * `gpuphase report` finds it (the summary line says where it went). */
	static char outbuf[PATH_MAX];
	if (o.output && !gp_record_has_ext(o.output)) {
		if (snprintf(outbuf, sizeof outbuf, "%s.gpht", o.output) >= (int)sizeof outbuf)
			return gp_record_bad("--output", o.output, "too long"), 2;
		o.output = outbuf;
	}
	char ctl[PATH_MAX];
	if ((rc = gp_record_check_opts(&o, ctl)))
		return rc;
	char lib[PATH_MAX];
	if ((rc = gp_record_find_lib(o.lib, lib)))
		return rc;
	o.lib = lib;

	/* The command, resolved as execvp will, so problems show before running. */
	char cmdpath[PATH_MAX];
	int wr = gp_locate_which(cmd[0], cmdpath, sizeof cmdpath);
	if (wr != 0) {
		fprintf(stderr, "gpuphase: record: cannot run '%s': %s\n", cmd[0],
			wr == -ENOENT ? (strchr(cmd[0], '/') ? "No such file or directory" : "command not found in PATH")
				      : strerror(-wr));
		return wr == -ENOENT ? 127 : 126;
	}

	/* the library's default when none is given: one directory per job
	 * inside a job (gp_config_output, the library's own rule) */
	struct gp_config_job job;
	gp_config_job(environ, &job);
	const char *pattern = o.output ? o.output : getenv("GPUPHASE_OUTPUT");
	static char job_glob[PATH_MAX];
	if (!pattern || !*pattern) {
		pattern = job.job_id ? GP_CONFIG_OUTPUT_JOB : GP_CONFIG_OUTPUT_DEFAULT;
		if (!job.job_id) {
			gp_record_pattern_glob(GP_CONFIG_OUTPUT_JOB, job_glob, sizeof job_glob);
			gp_record_job_glob = job_glob;
		}
	}
	/* A static cudart cannot be interposed: preloading would only make the
	 * library believe its hooks are in place, so the trace would not say
	 * "injection only". Keep the preload when injection is turned off. */
	int static_cudart = gp_record_warn_binary(cmdpath, cmd[0]);
	if (static_cudart && !o.no_inject)
		o.no_preload = 1;
	gp_record_warn_profilers(lib);
	gp_record_warn_outdir(pattern);
	if (gp_record_keep_old(pattern, o.force))
		return 1;

	char globpat[PATH_MAX * 2];
	gp_record_pattern_glob(pattern, globpat, sizeof globpat);
	struct gp_record_files before;
	gp_record_files_scan(globpat, &before);
	int exec_failed;
	int status = gp_record_run(&o, cmd, &exec_failed);
	if (!o.quiet && !exec_failed)
		gp_record_print_summary(pattern, &before, globpat, static_cudart,
					o.window ? o.window : getenv("GPUPHASE_WINDOW"));
	if (o.report && !exec_failed)
		gp_record_report(&o, &before, globpat);
	gp_record_files_free(&before);
	return status;
}
