/*
 * attach.c — `gpuphase attach PID [--iters N | --duration T] [-o FILE]
 * [report options]`: profile a process that is already running,
 * unmodified, leave it as it was, then print the report of the trace (the
 * report options of `gpuphase report`, or record's --report=OPTS; run by
 * report.c's gp_report_run once the process is left alone).
 * `gpuphase attach PID --every P [--duration T] [-o FILE]` puts the process
 * under a duty cycle instead (docs/always-on.md): a window of T each P,
 * each written as FILE's windows directory's w<SEQ>.gpht, until `gpuphase
 * stop PID` or Ctrl-C; it then prints how many windows were closed and
 * where, no report.
 *
 * Technique: the one debuggers use to call a function in a live process
 * (gdb's `call`, and injectors built the same way): ptrace-seize ONE thread
 * of the target (the others keep running), interrupt it, save its registers
 * and FP/vector state, make it call the dynamic loader's dlopen() on
 * libgpuphase.so with a return address of 0 (the call ends in a SIGSEGV stop
 * we catch and swallow), then call the library's gpuphase_attach_begin() the
 * same way, restore the registers and detach. The thread resumes where it
 * was; a system call it was blocked in is restarted by the kernel (the saved
 * registers carry its restart state). Everything else — CUPTI, the GOT
 * patching, the window, the trace, the clean detach — happens on the
 * library's own session thread (libgpuphase/attach_session.c), which reports back
 * over a UNIX socket this command listens on.
 *
 * Single-threaded. Refusals (no process, no permission, no CUDA, static
 * cudart, already profiled or attached) are one "gpuphase: attach: ..."
 * line and exit 1 before the target is touched. A target that exits during
 * the attach or the capture: reported, exit 1.
 *
 * Architecture: x86-64 and aarch64. What differs (the registers of a
 * call, its frame, the system call restart, the FP/vector state) is in
 * ptcall.c, which makes the stopped thread call a function; what the
 * target is (its maps, threads, environment, a function's address) is read
 * from /proc by target.c; this file parses the verb's options and drives
 * the attach. Other architectures build a verb that says it is not
 * available.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ptcall.h"
#include "target.h"
#include "report/options.h"

#if !defined(__x86_64__) && !defined(__aarch64__)
/* The register handling of other architectures is not written (see
 * docs/attach.md, "Limits"): the verb exists and says so. */
int gp_attach_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "gpuphase: attach: not available on this architecture (x86-64 and aarch64 only)\n");
	return 1;
}
#else

static uint64_t gp_attach_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int gp_attach_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int gp_attach_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("gpuphase: attach: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 1;
}

/* ---- the verb ---------------------------------------------------------- */

static int gp_attach_usage(const char *msg)
{
	fprintf(stderr, "gpuphase: attach: %s\n%s\n", msg, gp_help_usage("attach"));
	return 2;
}

/* "2s", "500ms", "1.5" (seconds) -> ns; 0 on error. */
static uint64_t gp_attach_duration(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v <= 0)
		return 0;
	if (!strcmp(end, "ms"))
		v /= 1e3;
	else if (strcmp(end, "s") && *end)
		return 0;
	return v > 1e6 ? 0 : (uint64_t)(v * 1e9);
}

static volatile sig_atomic_t gp_attach_interrupted;
static void gp_attach_on_signal(int sig)
{
	(void)sig;
	gp_attach_interrupted = 1;
}

/* What the command line asked for. */
struct gp_attach_opts {
	const char *out, *lib, *stacks;
	unsigned long long iters;
	uint64_t duration, every; /* every: a duty cycle's period (0: none) */
	long pid;
	int no_report;
	char **report;   /* gpuphase-report's options, in order (argv's strings) */
	size_t nreport;
};

/* One report option (and its values) for the report printed after the
 * capture; a word of --report=OPTS is split in place (argv is ours). -1 to
 * go on, else the exit status of a usage error. *i: the last word used. */
static int gp_attach_report_opt(int argc, char **argv, int *i, struct gp_attach_opts *o)
{
	char *a = argv[*i];
	if (!strncmp(a, "--report", 8) && (a[8] == 0 || a[8] == '=')) { /* record's spelling */
		char *save = NULL;
		for (char *t = a[8] ? strtok_r(a + 9, " \t", &save) : NULL; t; t = strtok_r(NULL, " \t", &save))
			o->report[o->nreport++] = t;
		return -1;
	}
	int n = gp_options_arity(a);
	if (n < 0) {
		char m[160];
		snprintf(m, sizeof m, "unknown option '%s' (neither attach's nor gpuphase report's)", a);
		return gp_attach_usage(m);
	}
	if (*i + n >= argc) {
		char m[160];
		snprintf(m, sizeof m, "option '%s' needs %s", a, n == 2 ? "two values" : "a value");
		return gp_attach_usage(m);
	}
	for (int k = 0; k <= n; k++)
		o->report[o->nreport++] = argv[*i + k];
	*i += n;
	return -1;
}

/* Parse argv into o: -1 to go on, else the exit status (help, bad usage). */
static int gp_attach_options(int argc, char **argv, struct gp_attach_opts *o)
{
	memset(o, 0, sizeof *o);
	o->stacks = "off";
	/* every word of argv, plus the words of --report=OPTS strings */
	size_t cap = (size_t)argc;
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--report=", 9))
			cap += strlen(argv[i]) / 2 + 1;
	if (!(o->report = calloc(cap + 1, sizeof *o->report))) {
		fprintf(stderr, "gpuphase: attach: out of memory\n");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			gp_help_print("attach");
			return 0;
		} else if ((!strcmp(a, "--iters") || !strcmp(a, "-n")) && i + 1 < argc) {
			char *e;
			o->iters = strtoull(argv[++i], &e, 10);
			if (*e || !o->iters || o->iters > (1ull << 40))
				return gp_attach_usage("--iters takes an integer >= 1");
		} else if ((!strcmp(a, "--duration") || !strcmp(a, "-d")) && i + 1 < argc) {
			if (!(o->duration = gp_attach_duration(argv[++i])))
				return gp_attach_usage("--duration takes a time such as 2s or 500ms");
		} else if (!strcmp(a, "--every") && i + 1 < argc) {
			if (!(o->every = gp_attach_duration(argv[++i])))
				return gp_attach_usage("--every takes a time such as 60s or 300ms");
		} else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
			o->out = argv[++i]; /* the trace, as for record (the report's own -o: --report='-o F') */
		} else if (!strcmp(a, "--no-report")) {
			o->no_report = 1;
		} else if (!strcmp(a, "--stacks") && i + 1 < argc) {
			o->stacks = argv[++i];
			if (strcmp(o->stacks, "off") && strcmp(o->stacks, "sync") && strcmp(o->stacks, "launch") &&
			    strcmp(o->stacks, "all"))
				return gp_attach_usage("--stacks takes off, sync, launch or all");
		} else if (!strcmp(a, "--lib") && i + 1 < argc) {
			o->lib = argv[++i];
		} else if (a[0] != '-' && !o->pid) {
			char *e;
			o->pid = strtol(a, &e, 10);
			if (*e || o->pid <= 0)
				return gp_attach_usage("PID must be a process id");
		} else if (a[0] == '-' && a[1] && strcmp(a, "-o") && strcmp(a, "--output")) {
			int rc = gp_attach_report_opt(argc, argv, &i, o);
			if (rc >= 0)
				return rc;
		} else {
			char m[160];
			snprintf(m, sizeof m, "unknown or incomplete option '%s'", a);
			return gp_attach_usage(m);
		}
	}
	if (!o->pid)
		return gp_attach_usage("which process? (a PID)");
	if (o->iters && o->duration)
		return gp_attach_usage("--iters and --duration exclude each other");
	if (o->no_report && o->nreport)
		return gp_attach_usage("--no-report and report options exclude each other");
	if (o->every && o->iters)
		return gp_attach_usage("--every and --iters exclude each other (a duty cycle's windows are times)");
	if (o->every && o->duration >= o->every)
		return gp_attach_usage("--duration must be shorter than --every (one window each period)");
	if (o->every && o->nreport)
		return gp_attach_usage("--every writes a directory of windows and prints no report: report options do "
				       "not apply (gpuphase report DIR/wSEQ.gpht reads one window)");
	if (!o->iters && !o->duration && !o->every)
		o->iters = 100;
	return -1;
}

/* The library and the output as absolute paths (the target's working
 * directory is not ours). 0, or the exit status of a refusal. */
static int gp_attach_paths(const struct gp_attach_opts *o, char *lib, char *outabs)
{
	char found[PATH_MAX], cwd[PATH_MAX];
	const char *out = o->out;
	if (o->lib ? !realpath(o->lib, lib)
		   : (gp_locate_component("../lib/libgpuphase.so", NULL, found, sizeof found) != 0 ||
		      !realpath(found, lib)))
		return gp_attach_fail("libgpuphase.so not found (next to this command in ../lib, or --lib PATH)");
	if (!out) {
		snprintf(found, sizeof found, "gpuphase-attach-%ld.gpht", o->pid);
		out = found;
	}
	if (out[0] == '/')
		snprintf(outabs, PATH_MAX, "%s", out);
	else if (!getcwd(cwd, sizeof cwd) || (size_t)snprintf(outabs, PATH_MAX, "%s/%s", cwd, out) >= PATH_MAX)
		return gp_attach_fail("output path too long");
	if (strchr(outabs, '%'))
		return gp_attach_fail("-o: '%%' patterns are not expanded by attach; give a plain path");
	return 0;
}

/* What the injection needs, found before the target is touched. */
struct gp_attach_plan {
	uintptr_t dlopen_at, begin_off;
	char perm[320]; /* the no-permission line */
};

/* Every refusal, before the target is touched: one line, exit status 1;
 * 0 when the process can be attached (plan filled). */
static int gp_attach_preflight(long pid, const char *lib, struct gp_attach_plan *pl)
{
	if (kill((pid_t)pid, 0) && errno == ESRCH)
		return gp_attach_fail("no process %ld", pid);
	struct gp_target_maps m;
	int rc = gp_target_maps((pid_t)pid, &m);
	if (rc == -ENOENT || !gp_target_alive((pid_t)pid))
		return gp_attach_fail("no process %ld", pid);
	char scope[8] = "", yama[48] = "";
	FILE *sf = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	if (sf) {
		if (!fgets(scope, sizeof scope, sf))
			scope[0] = 0;
		scope[strcspn(scope, "\n")] = 0;
		fclose(sf);
	}
	if (scope[0] && strcmp(scope, "0"))
		snprintf(yama, sizeof yama, ", kernel.yama.ptrace_scope=%s", scope);
	snprintf(pl->perm, sizeof pl->perm,
		 "no permission to trace process %ld (another user's process or no CAP_SYS_PTRACE%s: see "
		 "docs/attach.md)",
		 pid, yama);
	if (rc)
		return gp_attach_fail("%s", pl->perm);
	/* started by gpuphase record: the library in its LD_PRELOAD or
	 * CUDA_INJECTION64_PATH (mapped too: --no-preload maps it only when
	 * CUDA loads it) */
	int started_under = gp_target_env_lists((pid_t)pid, "LD_PRELOAD", "libgpuphase.so") ||
			    gp_target_env_lists((pid_t)pid, "CUDA_INJECTION64_PATH", "libgpuphase.so");
	if (m.self_lib[0] && started_under)
		return gp_attach_fail("process %ld already runs under gpuphase (started with gpuphase record): use "
				      "gpuphase trigger",
				      pid);
	if (gp_target_attached((pid_t)pid))
		return gp_attach_fail("process %ld is already attached by another gpuphase attach", pid);
	if (!m.cudart[0]) {
		char exe[64], err[128];
		struct gp_elf_info ei;
		snprintf(exe, sizeof exe, "/proc/%ld/exe", pid);
		if (gp_elfscan_inspect(exe, &ei, err, sizeof err) == 0 && ei.cudart == GP_ELF_CUDART_STATIC)
			return gp_attach_fail("process %ld has the CUDA runtime linked statically: attach cannot hook it "
					      "(start it under gpuphase record instead)",
					      pid);
		return gp_attach_fail("process %ld does not use CUDA (no libcudart.so loaded)", pid);
	}
	/* nsys, ncu and other CUPTI tools load themselves with this variable;
	 * a subscriber that got in another way is found by the library
	 * (cuptiSubscribe refuses) before it patches or writes anything */
	char inj[16];
	if (gp_target_env((pid_t)pid, "CUDA_INJECTION64_PATH", inj, sizeof inj) && inj[0] &&
	    !gp_target_env_lists((pid_t)pid, "CUDA_INJECTION64_PATH", "libgpuphase.so"))
		return gp_attach_fail("another tool holds CUPTI in process %ld (it was started with "
				      "CUDA_INJECTION64_PATH set)",
				      pid);
	if (!m.libc[0])
		return gp_attach_fail("process %ld has no libc.so.6 mapped: cannot find its dlopen", pid);
	uintptr_t dlopen_off = 0;
	if (gp_target_sym((pid_t)pid, m.libc, "dlopen", &dlopen_off) == 0)
		pl->dlopen_at = m.libc_base + dlopen_off;
	else if (m.libdl[0] && gp_target_sym((pid_t)pid, m.libdl, "dlopen", &dlopen_off) == 0)
		pl->dlopen_at = m.libdl_base + dlopen_off;
	else
		return gp_attach_fail("cannot find dlopen in process %ld's C library", pid);
	if (gp_target_sym((pid_t)pid, lib, "gpuphase_attach_begin", &pl->begin_off))
		return gp_attach_fail("%s has no gpuphase_attach_begin (an older build?)", lib);
	return 0;
}

/* The socket the session connects back to, in a fresh directory dir (a
 * mkdtemp template): its descriptor, or -1 after one line. */
static int gp_attach_listen(char *dir, char *sock, size_t socklen)
{
	if (!mkdtemp(dir)) {
		gp_attach_fail("cannot create a temporary directory: %s", strerror(errno));
		return -1;
	}
	chmod(dir, 0711); /* the target may run as another user (we check its pid on accept) */
	snprintf(sock, socklen, "%s/s", dir);
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
	int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof sa) || chmod(sock, 0666) || listen(ls, 2)) {
		int e = errno;
		if (ls >= 0)
			close(ls);
		rmdir(dir);
		gp_attach_fail("cannot listen on %s: %s", sock, strerror(e));
		return -1;
	}
	return ls;
}

/* The request of a duty cycle into req: its window, and the variables of
 * this command's environment that say where its files and control socket
 * go (the process's own environment is not ours to read for them).
 * snprintf's result: the length, too long when >= len. */
static int gp_attach_duty_request(const struct gp_attach_opts *o, const char *sock, const char *outabs, char *req,
				  size_t len)
{
	char dur[48] = "";
	if (o->duration)
		snprintf(dur, sizeof dur, ",duration=%lluns", (unsigned long long)o->duration);
	const char *ctl = getenv("GPUPHASE_CONTROL_DIR"), *keep = getenv("GPUPHASE_WINDOW_KEEP_BYTES");
	return snprintf(req, len,
			"sock=%s\nGPUPHASE_OUTPUT=%s\nGPUPHASE_WINDOW=every=%lluns%s\nGPUPHASE_LOG=off\n"
			"GPUPHASE_STACKS=%s\n%s%s%s%s%s%s",
			sock, outabs, (unsigned long long)o->every, dur, o->stacks, ctl ? "GPUPHASE_CONTROL_DIR=" : "",
			ctl ? ctl : "", ctl ? "\n" : "", keep ? "GPUPHASE_WINDOW_KEEP_BYTES=" : "", keep ? keep : "",
			keep ? "\n" : "");
}

/* Inside the stop: make the stopped thread t call dlopen(lib) and then the
 * library's gpuphase_attach_begin(req); NULL, or why it failed ("exited"
 * when the process is gone). *ret: gpuphase_attach_begin's result. */
static const char *gp_attach_calls(struct gp_ptcall_thread *t, long pid, const char *lib, const char *req, size_t rl,
				   const struct gp_attach_plan *pl, uintptr_t *ret)
{
	if (gp_ptcall_save(t))
		return "registers unreadable";
	/* data on the thread's stack, below the red zone */
	uintptr_t sp = (gp_ptcall_stack(t) - 128 - 4096) & ~(uintptr_t)15;
	size_t ll = strlen(lib) + 1;
	uintptr_t a_lib = sp, a_req = sp + ((ll + 15) & ~(size_t)15);
	int rc;
	if (gp_ptcall_poke(t->tid, a_lib, lib, ll) || gp_ptcall_poke(t->tid, a_req, req, rl + 1))
		return "cannot write to its memory";
	if ((rc = gp_ptcall_run(t, pl->dlopen_at, a_lib, 2 /* RTLD_NOW */, sp, ret)))
		return rc == -ESRCH ? "exited" : "dlopen crashed";
	if (!*ret)
		return "dlopen of libgpuphase.so failed in the process (another C library, or a path it cannot "
		       "see?)";
	struct gp_target_maps m2;
	if (gp_target_maps((pid_t)pid, &m2) || !m2.self_base)
		return "libgpuphase.so not mapped after dlopen";
	if ((rc = gp_ptcall_run(t, m2.self_base + pl->begin_off, a_req, 0, sp, ret)))
		return rc == -ESRCH ? "exited" : "gpuphase_attach_begin crashed";
	return NULL;
}

/* The stop, measured: which thread, for how long, and how much of that was
 * the attach's own work on a CPU (the stopped thread running dlopen and the
 * session start, this command driving it); the rest is waiting for a CPU
 * on a loaded machine. */
struct gp_attach_stop {
	pid_t tid;
	uint64_t ns, work_ns;
};

/* The stop: seize one thread, two calls, restore, detach. 0 when the
 * session started (*st: the stop), else 1 after one line. */
static int gp_attach_inject(long pid, const char *lib, const char *req, size_t rl, const struct gp_attach_plan *pl,
			    struct gp_attach_stop *st)
{
	struct gp_ptcall_thread *t = calloc(1, sizeof *t);
	if (!t)
		return gp_attach_fail("out of memory");
	t->tid = gp_target_pick_thread((pid_t)pid);
	if (ptrace(PTRACE_SEIZE, t->tid, NULL, NULL)) {
		int e = errno;
		char comm[64];
		pid_t tid = t->tid, tracer = e == EPERM ? gp_target_tracer((pid_t)pid, tid, comm, sizeof comm) : 0;
		free(t);
		if (e == ESRCH)
			return gp_attach_fail("process %ld exited before the attach", pid);
		/* a thread has one tracer: a racing attach or a debugger holds it */
		if (tracer)
			return gp_attach_fail("process %ld is already traced (thread %ld by process %ld, %s): another "
					      "gpuphase attach or a debugger; try again when it has detached",
					      pid, (long)tid, (long)tracer, comm[0] ? comm : "?");
		return gp_attach_fail("%s", pl->perm);
	}
	uint64_t t0 = gp_attach_now(), w0 = gp_target_cpu_ns(pid, t->tid), w1 = w0;
	ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
	int sig = gp_ptcall_wait(t);
	const char *why = NULL;
	uintptr_t ret = 0;
	if (sig < 0) {
		why = "exited";
	} else {
		if (sig > 0 && sig != SIGTRAP)
			t->pending_sig = sig; /* a signal-delivery stop came first: deliver it at detach */
		why = gp_attach_calls(t, pid, lib, req, rl, pl, &ret);
		if (!t->gone) {
			gp_ptcall_restore(t);
			w1 = gp_target_cpu_ns(pid, t->tid); /* while it is still stopped */
			ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)t->pending_sig);
		}
	}
	st->ns = gp_attach_now() - t0;
	st->work_ns = w1 > w0 ? w1 - w0 : 0;
	st->tid = t->tid;
	int gone = t->gone;
	free(t);
	if (gone || (why && !strcmp(why, "exited")))
		return gp_attach_fail("process %ld exited during the attach", pid);
	if (why)
		return gp_attach_fail("cannot load the library into process %ld: %s", pid, why);
	if ((int)ret == -EBUSY)
		return gp_attach_fail("process %ld is already attached by another gpuphase attach", pid);
	if ((int)ret)
		return gp_attach_fail("the library could not start its session in process %ld: %s", pid,
				      strerror(-(int)ret));
	return 0;
}

/* What the session said, for the command. */
struct gp_attach_result {
	long session_tid;       /* its thread                          */
	char trace[PATH_MAX];   /* "done PATH": the trace it wrote      */
	int duty;               /* "windows N" came: PATH is a directory */
	unsigned long long windows; /* N: the last window closed        */
};

/* One line from the session: its thread, progress, an error or the end.
 * Returns 0 to go on, 1 done (detached), 2 failed. */
static int gp_attach_line(char *line, long pid, const struct gp_attach_stop *st, struct gp_attach_result *res,
			  int *said)
{
	if (!strncmp(line, "ok tid=", 7)) {
		res->session_tid = atol(line + 7);
	} else if (!strncmp(line, "info ", 5)) {
		if (!(*said)++) /* said with the first info: a refusal stays one line */
			fprintf(stderr,
				"gpuphase: attach: %ld: thread %ld stopped for %.2f ms (%.2f ms of work: dlopen + "
				"session start; the rest waiting for a CPU)\n",
				pid, (long)st->tid, st->ns / 1e6, st->work_ns / 1e6);
		fprintf(stderr, "gpuphase: attach: %ld: %s\n", pid, line + 5);
	} else if (!strncmp(line, "error ", 6)) {
		gp_attach_fail("process %ld: %s", pid, line + 6);
		return 2;
	} else if (!strncmp(line, "windows ", 8)) {
		res->duty = 1;
		res->windows = strtoull(line + 8, NULL, 10);
	} else if (!strncmp(line, "done ", 5)) {
		static const char early[] = " (stopped early)";
		size_t n = strlen(line + 5), e = sizeof early - 1;
		if (n >= e && !strcmp(line + 5 + n - e, early))
			n -= e;
		snprintf(res->trace, sizeof res->trace, "%.*s", (int)n, line + 5);
		if (!res->duty)
			fprintf(stderr, "gpuphase: attach: %ld: detached; trace %s\n", pid, line + 5);
		else if (res->windows)
			fprintf(stderr, "gpuphase: attach: %ld: detached; %llu windows closed in %s (w%08d.gpht to "
				"w%08llu.gpht, less those the byte cap or the agent deleted; each reads alone with "
				"gpuphase report)\n",
				pid, res->windows, res->trace, 1, res->windows);
		else
			fprintf(stderr, "gpuphase: attach: %ld: detached; no window closed (%s is empty)\n", pid,
				res->trace);
		return 1;
	}
	return 0;
}

/* Follow the session over ls until it says done or error, the process
 * exits, or it never connects; Ctrl-C / SIGTERM asks it to stop early.
 * Returns 1 done, 2 failed, 0 no result; *res: what the session said. */
static int gp_attach_follow(int ls, long pid, const struct gp_attach_stop *st, struct gp_attach_result *res)
{
	struct sigaction act;
	memset(&act, 0, sizeof act);
	act.sa_handler = gp_attach_on_signal;
	sigaction(SIGINT, &act, NULL);
	sigaction(SIGTERM, &act, NULL);
	int c = -1, stop_sent = 0, done = 0, said = 0;
	char buf[1024];
	size_t bl = 0;
	uint64_t deadline = gp_attach_now() + 10000000000ull; /* the session connects within 10 s */
	while (!done) {
		struct pollfd p = {c >= 0 ? c : ls, POLLIN, 0};
		int r = poll(&p, 1, 100);
		if (gp_attach_interrupted && c >= 0 && !stop_sent) {
			(void)!send(c, "stop\n", 5, MSG_NOSIGNAL);
			stop_sent = 1;
		}
		if (!gp_target_alive((pid_t)pid)) {
			gp_attach_fail("process %ld exited during the capture%s", pid,
				       c >= 0 ? " (the trace may be partial)" : "");
			break;
		}
		if (c < 0 && gp_attach_now() > deadline) {
			gp_attach_fail("the library in process %ld did not connect back", pid);
			break;
		}
		if (r <= 0)
			continue;
		if (c < 0) {
			int n = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
			struct ucred cr;
			socklen_t cl = sizeof cr;
			if (n >= 0 && getsockopt(n, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0 && cr.pid == (pid_t)pid)
				c = n;
			else if (n >= 0)
				close(n);
			continue;
		}
		ssize_t k = read(c, buf + bl, sizeof buf - 1 - bl);
		if (k <= 0) {
			/* a killed process closes its descriptors before it is a
			 * zombie: give it a moment to look dead before blaming the
			 * session */
			for (int i = 0; i < 100 && gp_target_alive((pid_t)pid); i++)
				usleep(5000);
			if (gp_target_alive((pid_t)pid))
				gp_attach_fail("the session in process %ld ended without a result", pid);
			else
				gp_attach_fail("process %ld exited during the capture (the trace may be partial)", pid);
			break;
		}
		bl += (size_t)k;
		buf[bl] = 0;
		char *nl;
		while ((nl = strchr(buf, '\n'))) {
			*nl = 0;
			int d = gp_attach_line(buf, pid, st, res, &said);
			if (d)
				done = d;
			size_t used = (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, bl - used + 1);
			bl -= used;
		}
	}
	if (c >= 0)
		close(c);
	return done;
}

/* The report of the trace just written, on stdout, with the report options
 * given (like record --report). The exit status stays attach's: the trace
 * was written and the process left as it was; a failed report says so. */
static void gp_attach_report(const struct gp_attach_opts *o, char *trace)
{
	int st = gp_report_run("attach", o->report, o->nreport, &trace, 1);
	if (st != 0 && st != 3) /* 3: a truncated trace, reported all the same */
		fprintf(stderr, "gpuphase: attach: the report failed (see above); the trace is kept: %s\n", trace);
}

/* After "done": the session thread exits right after its last line, and
 * CUPTI's own threads end with cuptiFinalize: wait for both, so the process
 * has the threads it had when this returns. */
static void gp_attach_settle(long pid, long session_tid, int threads_before, int detached)
{
	char tp[96];
	snprintf(tp, sizeof tp, "/proc/%ld/task/%ld", pid, session_tid);
	for (int i = 0; i < 200 && session_tid && access(tp, F_OK) == 0; i++)
		usleep(5000);
	if (!detached)
		return;
	int threads_after = gp_target_threads((pid_t)pid);
	for (int i = 0; i < 200 && threads_after > threads_before; i++) {
		usleep(5000);
		threads_after = gp_target_threads((pid_t)pid);
	}
	if (threads_after > threads_before)
		fprintf(stderr, "gpuphase: attach: %ld: note: %d threads before, %d after\n", pid, threads_before,
			threads_after);
}

/* Everything between the options and the report: checks, the stop, the
 * capture, the detach. Returns the exit status; *res: what the session
 * said. */
static int gp_attach_capture(const struct gp_attach_opts *o, struct gp_attach_result *res)
{
	long pid = o->pid;
	char lib[PATH_MAX], outabs[PATH_MAX];
	struct gp_attach_plan pl;
	int rc;
	if ((rc = gp_attach_paths(o, lib, outabs)) || (rc = gp_attach_preflight(pid, lib, &pl)))
		return rc;
	char dir[] = "/tmp/gpuphase-attach.XXXXXX", sock[sizeof dir + 2];
	int ls = gp_attach_listen(dir, sock, sizeof sock);
	if (ls < 0)
		return 1;
	char req[2048];
	int rl;
	if (o->every)
		rl = gp_attach_duty_request(o, sock, outabs, req, sizeof req);
	else if (o->duration)
		rl = snprintf(req, sizeof req,
			      "sock=%s\nduration_ns=%llu\nGPUPHASE_OUTPUT=%s\nGPUPHASE_WINDOW=all\nGPUPHASE_LOG=off\n"
			      "GPUPHASE_STACKS=%s\n",
			      sock, (unsigned long long)o->duration, outabs, o->stacks);
	else
		rl = snprintf(req, sizeof req,
			      "sock=%s\nGPUPHASE_OUTPUT=%s\nGPUPHASE_WINDOW=skip=1,iters=%llu\nGPUPHASE_LOG=off\n"
			      "GPUPHASE_STACKS=%s\n",
			      sock, outabs, o->iters, o->stacks);
	int status = 1;
	int threads_before = gp_target_threads((pid_t)pid);
	struct gp_attach_stop st = {0, 0, 0};
	if (rl < 0 || (size_t)rl >= sizeof req) {
		gp_attach_fail("request too long (output path?)");
	} else if (gp_attach_inject(pid, lib, req, (size_t)rl, &pl, &st) == 0) {
		int done = gp_attach_follow(ls, pid, &st, res);
		if (done)
			gp_attach_settle(pid, res->session_tid, threads_before, done == 1);
		status = done == 1 ? 0 : 1;
	}
	close(ls);
	unlink(sock);
	rmdir(dir);
	return status;
}

int gp_attach_main(int argc, char **argv)
{
	struct gp_attach_opts o;
	static struct gp_attach_result res;
	int rc = gp_attach_options(argc, argv, &o);
	if (rc < 0) {
		rc = gp_attach_capture(&o, &res);
		if (rc == 0 && !o.no_report && !o.every && res.trace[0])
			gp_attach_report(&o, res.trace);
	}
	free(o.report);
	return rc;
}
#endif /* x86-64 or aarch64 */
