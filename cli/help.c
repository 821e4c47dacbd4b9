/*
 * help.c — every help text of the `gpuphase` command: the top-level help,
 * one page per verb (as complete as `perf record --help`: synopsis,
 * description, every option, the environment it sets, examples, exit
 * status), and the one-line usages used in error messages. The man page
 * cli/gpuphase.1 says the same things; keep them in step.
 *
 * Called by main() and the verbs on the command's only thread; prints to
 * stdout (help is what the user asked for).
 */
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <limits.h>

#include "cli.h"

extern char **environ;

static const char gp_help_top[] =
"usage: gpuphase <command> [options] [args]\n"
"\n"
"gpuphase splits the time of every GPU operator (kernel, copy, memset) of an\n"
"unmodified CUDA program into launch, queue, execute and sync, and says which\n"
"phase dominates and what to do about it.\n"
"\n"
"Commands:\n"
"  record    run a command under the profiler and write a trace (.gpht)\n"
"  report    analyse one or more traces: per-operator phases and a verdict\n"
"            (report stability RUN1 RUN2 ...: is the profile repeatable?)\n"
"  diff      compare two traces (before/after a change)\n"
"  export    convert a trace to chrome-trace, perfetto, sqlite or html\n"
"  trigger   start a capture in a server running with `record --window trigger`\n"
"  stop      end a running capture and complete its trace; the program runs on\n"
"  attach    profile a running CUDA process that was started without gpuphase\n"
"  agent     serve Prometheus metrics of duty-cycled captures on this host\n"
"  help      show the help of a command (same as: gpuphase COMMAND --help)\n"
"\n"
"Options:\n"
"  -h, --help       this help\n"
"  -v, --version    print the version\n"
"\n"
"A first run:\n"
"  gpuphase record -- ./my_cuda_app --its-args   # writes gpuphase-HOST-PID.gpht\n"
"  gpuphase report gpuphase-*.gpht               # phases per operator, verdict\n"
"\n"
"See `gpuphase COMMAND --help`, `man gpuphase`, and the docs in\n"
"share/doc/gpuphase (README.md, configuration.md, metrics.md, troubleshooting.md).\n";

static const char gp_help_record[] =
"usage: gpuphase record [options] [--] CMD [ARGS...]\n"
"\n"
"Run CMD with the gpuphase capture library loaded and write a trace.\n"
"\n"
"The library (libgpuphase.so, found in ../lib next to this command) is put in\n"
"LD_PRELOAD (appended to any value already there, so other preloads keep\n"
"working) and in CUDA_INJECTION64_PATH, for CMD and its children only. The\n"
"options below become GPUPHASE_* environment variables; a GPUPHASE_* variable\n"
"already in the environment is passed on unless an option overrides it.\n"
"CMD's exit status is returned (128+N if signal N killed it, like a shell).\n"
"Ctrl-C, SIGTERM and SIGHUP first complete the trace (the capture's control\n"
"socket, as `gpuphase stop`), then reach CMD, so even a CMD that dies of them\n"
"leaves a complete trace; SIGQUIT is passed on as it is. As the terminal's\n"
"foreground job record runs CMD as a job of its own so Ctrl-C reaches record\n"
"first (a CMD that reads the terminal is given it). A CMD killed outright\n"
"leaves the trace without footer, and the summary says what was lost. One line at\n"
"the end tells where the trace is, its size, how many records\n"
"it holds and how many were dropped:\n"
"\n"
"  gpuphase: trace gpuphase-node1-4711.gpht, 0.81 MiB, 26533 records, 0 dropped\n"
"\n"
"Before running, record warns about what would make the trace incomplete:\n"
"CMD statically linked to the CUDA runtime (nvcc's default: the launch hooks\n"
"cannot see it, so record sets CUDA_INJECTION64_PATH only and the trace is\n"
"injection-only), another profiler holding CUPTI (nsys, ncu, a\n"
"CUDA_INJECTION64_PATH of another tool: gpuphase then keeps host-side hook\n"
"timing only), and an output directory that cannot be written.\n"
"\n"
"Options:\n"
"  -o, --output FILE     trace file name or pattern (GPUPHASE_OUTPUT); patterns:\n"
"                        %p pid, %h host name, %r rank (RANK, OMPI_COMM_WORLD_RANK,\n"
"                        PMI_RANK, SLURM_PROCID, else 0), %j job id (TORCHELASTIC_RUN_ID,\n"
"                        SLURM_JOB_ID, PBS_JOBID, LSB_JOBID), %t start time, %% a\n"
"                        percent sign. Default: gpuphase-%h-%p.gpht in the current\n"
"                        directory; in a job (a job id is set):\n"
"                        gpuphase-%j/gpuphase-%j-r%r.gpht.\n"
"                        A name without .gpht gets it (-o run writes run.gpht).\n"
"                        A fixed name that exists is moved to FILE.old first.\n"
"  -f, --force           remove an existing fixed-name FILE instead of keeping FILE.old\n"
"  -w, --window SPEC     what to capture (GPUPHASE_WINDOW); default: the whole run.\n"
"                          skip=N,iters=M[,repeat=K]  skip N iterations, capture M\n"
"                                                     (K times, with N skipped between)\n"
"                          delay=D,duration=D         time window, D like 500ms, 2s\n"
"                          trigger                    start idle; capture when told\n"
"                                                     by `gpuphase trigger PID`\n"
"                          all                        the whole run (the default)\n"
"  -m, --marker SPEC     what delimits an iteration (GPUPHASE_ITER_MARKER):\n"
"                          sync         each cudaDeviceSynchronize/StreamSynchronize\n"
"                                       ends one (default)\n"
"                          kernel:GLOB  each launch of a kernel matching GLOB starts one\n"
"                          nvtx:NAME    each start of the NVTX range NAME starts one\n"
"                                       (implies --nvtx)\n"
"                          profiler     each cudaProfilerStart...Stop pair is one;\n"
"                                       nothing outside them is captured\n"
"  -s, --stacks MODE     call stacks to capture (GPUPHASE_STACKS): off, sync\n"
"                        (default: at synchronizing calls), launch, all\n"
"      --stack-depth N   deepest stack kept, 1..64 frames (GPUPHASE_STACK_DEPTH;\n"
"                        default 24)\n"
"      --nvtx            record NVTX ranges (sets NVTX_INJECTION64_PATH), so\n"
"                        operators are named by their innermost range, e.g.\n"
"                        aten::mm under torch.autograd.profiler.emit_nvtx()\n"
"      --ring-records N  slots in each thread's record ring, a power of two\n"
"                        (GPUPHASE_RING_RECORDS); raise it if records are dropped\n"
"      --flush-ms MS     longest time a record waits before it is written\n"
"                        (GPUPHASE_FLUSH_MS)\n"
"      --max-size SIZE   stop writing when the trace reaches SIZE bytes; K, M, G\n"
"                        suffixes (GPUPHASE_MAX_BYTES)\n"
"      --cupti-lib PATH  the CUPTI library to load (GPUPHASE_CUPTI_LIB);\n"
"                        default libcupti.so.13 from the library path\n"
"      --control-dir DIR where the control socket goes (GPUPHASE_CONTROL_DIR);\n"
"                        default /tmp/gpuphase-UID\n"
"      --log LEVEL[:FILE] library messages: off, error (default), info, debug\n"
"                        (GPUPHASE_LOG)\n"
"      --no-cupti        hook-only capture: no CUPTI subscription, so no GPU\n"
"                        times (GPUPHASE_CUPTI=0); for when another tool needs CUPTI\n"
"      --follow-fork     a child forked after the capture started writes its own\n"
"                        hook-only trace (GPUPHASE_FOLLOW_FORK=1); by default it\n"
"                        is not captured (one forked before is, as a new process)\n"
"      --counters SPEC   hardware counters (DRAM bytes, FLOPs, throughput) of a\n"
"                        few launches of the kernels that matter, each replayed\n"
"                        by CUPTI and left out of the phases (GPUPHASE_COUNTERS):\n"
"                          top=N          the N kernels with the most GPU time\n"
"                                         in the first warmup=L launches\n"
"                          kernel=GLOB[;GLOB...]  the kernels matching a glob\n"
"                          from=TRACE     the top kernels of a first run's report\n"
"                                         (top=N before it, default 5)\n"
"                        with samples=M (default 3) and skip=K (default 1)\n"
"                        before them, comma-separated: samples=5,from=run1.gpht"
"      --lib PATH        use this libgpuphase.so\n"
"      --no-preload      do not set LD_PRELOAD: CUPTI injection only\n"
"      --no-inject       do not set CUDA_INJECTION64_PATH: preload only\n"
"      --report[=OPTS]   print the report of the trace right after the run (like\n"
"                        nsys --stats); OPTS are report options, space-separated:\n"
"                        --report='--top 5 --format markdown'\n"
"  -q, --quiet           no summary line at the end\n"
"  -h, --help            this help\n"
"\n"
"Examples:\n"
"  gpuphase record -- ./app                       whole run\n"
"  gpuphase record -o train.gpht -w skip=20,iters=10 -- python train.py\n"
"  gpuphase record --nvtx -- python train.py --nvtx   operators named aten::...\n"
"  gpuphase record -m kernel:'*sgemm*' -w skip=5,iters=3 -- ./app\n"
"  gpuphase record -o run2 --counters from=run1.gpht -- ./app   roofline of run1's top\n"
"  gpuphase record -w trigger -- ./server &        then: gpuphase trigger PID --iters 50\n"
"  mpirun -n 4 gpuphase record -o run-%r.gpht -- ./app   one trace per rank\n"
"\n"
"Without the command (same effect):\n"
"  LD_PRELOAD=/path/to/libgpuphase.so CUDA_INJECTION64_PATH=/path/to/libgpuphase.so \\\n"
"  GPUPHASE_WINDOW=skip=20,iters=10 python train.py\n"
"\n"
"Exit status: CMD's; 127 if CMD was not found, 126 if it could not be run,\n"
"2 for a bad option (nothing is run), 1 if the library is missing.\n";

static const char gp_help_trigger[] =
"usage: gpuphase trigger PID (--iters M | --seconds S | --status) [options]\n"
"\n"
"Start a capture in a running process that was started with capture idle:\n"
"\n"
"  gpuphase record --window trigger -- ./server &     # runs at full speed, records nothing\n"
"  gpuphase trigger $! --iters 50                      # capture the next 50 iterations\n"
"\n"
"The process keeps running; the capture goes to its trace file\n"
"(GPUPHASE_OUTPUT, default gpuphase-HOST-PID.gpht) and the trace is complete\n"
"when the process exits. An iteration ends at each synchronizing call unless\n"
"`record --marker` chose another marker.\n"
"\n"
"The request goes through the UNIX socket DIR/PID.sock that the library opens\n"
"in trigger mode (DIR: --control-dir, else the process's GPUPHASE_CONTROL_DIR,\n"
"else /tmp/gpuphase-UID). If PID was not started under gpuphase with\n"
"--window trigger, trigger says so.\n"
"\n"
"Options:\n"
"  -i, --iters M         capture the next M iterations\n"
"  -s, --seconds S       capture the next S seconds (fractions allowed: 0.5)\n"
"      --status          print the capture state of PID\n"
"      --control-dir DIR where to find the socket\n"
"      --timeout S       wait at most S seconds for the reply (default 5)\n"
"  -h, --help            this help\n"
"\n"
"Before talking, trigger checks that DIR belongs to you and nobody else can\n"
"write to it, that the socket is yours and that PID itself serves it\n"
"(SO_PEERCRED); the reply is printed with control characters escaped.\n"
"\n"
"Exit status: 0 when PID accepted, 1 when it refused or cannot be reached,\n"
"2 for a bad option.\n";

static const char gp_help_stop[] =
"usage: gpuphase stop PID [options]\n"
"\n"
"End the capture of a running process for good and complete its trace (GPU\n"
"work flushed, stacks symbolised, footer written) while the process runs on:\n"
"the counterpart of `trigger` for servers and long jobs.\n"
"\n"
"  gpuphase record --window trigger -- ./server &\n"
"  gpuphase trigger $! --seconds 30\n"
"  gpuphase stop $!                 # the trace is complete now; report it\n"
"\n"
"PID must run under gpuphase, in any window (its control socket,\n"
"DIR/PID.sock, is where the request goes; the same checks as `trigger`). On\n"
"success stop prints where the trace is. Nothing more is recorded in that\n"
"process afterwards; `trigger PID --status` then says the capture ended.\n"
"\n"
"Options:\n"
"      --control-dir DIR where to find the socket\n"
"      --timeout S       wait at most S seconds for the reply (default 5)\n"
"  -h, --help            this help\n"
"\n"
"Exit status: 0 when the trace was completed, 1 when PID refused or cannot be\n"
"reached, 2 for a bad option.\n";
static const char gp_help_attach[] =
"usage: gpuphase attach PID [--iters N | --duration T] [-o FILE] [report options]\n"
"       gpuphase attach PID --every P [--duration T] [-o FILE]\n"
"\n"
"Profile a CUDA process that is already running and was started without\n"
"gpuphase, then leave it as it was, and print the report of the capture:\n"
"\n"
"  gpuphase attach 4242 --iters 20 -o server.gpht   # the next 20 iterations\n"
"  gpuphase attach 4242 --duration 2s --format json --top 5\n"
"  gpuphase attach 4242 --every 60s --duration 1s   # a duty cycle, until stopped\n"
"\n"
"attach stops one thread of PID for a few milliseconds (ptrace), makes it\n"
"dlopen libgpuphase.so, and lets it go. The library then subscribes to CUPTI,\n"
"patches the GOT entries through which the program calls the CUDA runtime\n"
"and the runtime's exports (what the program looks up meanwhile gets the\n"
"hooks), captures the window, writes the trace, restores every entry,\n"
"unsubscribes and stops its threads. Ctrl-C ends the capture early (the\n"
"trace is still written). Work the process started before the attach is not\n"
"seen, and calls through function pointers it took before the attach are\n"
"seen by CUPTI only.\n"
"\n"
"After the detach attach prints the report of the trace on stdout, as\n"
"`gpuphase report FILE` would with the report options given here (--format,\n"
"--top, --sort, --group-by, --filter, ...: see gpuphase report --help; the\n"
"report's own -o goes in --report='-o R'). The trace is kept in FILE.\n"
"\n"
"With --every P the process is put under a duty cycle (docs/always-on.md): a\n"
"window of T (default P/60) each P, CUPTI on only inside it, each window its\n"
"own trace (-o a.gpht: a.windows/wSEQ.gpht), the directory capped by\n"
"GPUPHASE_WINDOW_KEEP_BYTES; the process answers `status` on its control\n"
"socket in GPUPHASE_CONTROL_DIR (both read from attach's environment), so\n"
"gpuphase agent reads its windows. It lasts until `gpuphase stop PID` or\n"
"Ctrl-C, then detaches as above and prints how many windows it closed and\n"
"where (no report).\n"
"\n"
"Needs permission to ptrace PID: the same user and kernel.yama.ptrace_scope 0,\n"
"or CAP_SYS_PTRACE (containers: --cap-add SYS_PTRACE). See docs/attach.md.\n"
"\n"
"Options:\n"
"  -n, --iters N         capture the next N complete iterations (default 100)\n"
"  -d, --duration T      capture for T (e.g. 2s, 500ms) instead; with --every,\n"
"                        each window's length (below P)\n"
"      --every P         a window each P until stopped (duty cycle; no report)\n"
"  -o, --output FILE     the trace (default gpuphase-attach-PID.gpht); written\n"
"                        by the process itself, so it must be able to create it\n"
"      --stacks MODE     call stacks: off (default: libunwind would leave a pipe\n"
"                        open in the process), sync, launch or all\n"
"      --lib PATH        the libgpuphase.so to load (default: ../lib next to gpuphase)\n"
"      --report[=OPTS]   report options as one space-separated string, as for\n"
"                        record --report: --report='--top 5 -o report.txt'\n"
"      --no-report       no report: only write the trace\n"
"  -h, --help            this help\n"
"\n"
"Exit status: 0 when the trace was written and the process detached (a\n"
"report that fails afterwards says so and leaves the status 0), 1 when attach\n"
"refused or the process exited meanwhile, 2 for a bad option (nothing is\n"
"touched).\n";

static const char gp_help_report[] =
"usage: gpuphase report [options] [TRACE...]\n"
"\n"
"Analyse one or more traces (several processes or ranks are merged) and print,\n"
"per operator, its launch, queue, execute and sync time, its share of the\n"
"window, and a verdict: sync-bound (sync share > 30 %: remove sync points, use\n"
"async copies and streams), launch-bound (launch share > 20 %: fuse kernels,\n"
"CUDA graphs), compute-bound (execute share > 80 %: optimise the kernel;\n"
"transfer-bound for copies: move fewer bytes, overlap them). Every\n"
"verdict shows the numbers behind it; docs/metrics.md defines each number.\n"
"\n"
"After the operator table come the analyses: stages of the run (start-up, load,\n"
"warm-up, steady state, tear-down, or the program's NVTX phases), host\n"
"conditions and the profiler's own overhead, trends (drifting and long-tail\n"
"operators, outlier iterations explained) and CUDA graphs. --format json holds\n"
"all of it (schema: docs/report-json.md).\n"
"\n"
"Without a TRACE argument it reads the newest *.gpht in the current directory\n"
"(and says which). Whether a TRACE is named is read from the command line\n"
"alone: `report -o rep.txt` never takes rep.txt for a trace, and a named\n"
"trace that does not exist is an error, never replaced by a guess.\n"
"\n"
"  gpuphase report stability [options] RUN1 RUN2 ...\n"
"      several traces of the same program: is the profile repeatable? Per\n"
"      operator the mean and coefficient of variation of each phase across the\n"
"      runs, how stable the top-N ranking is, and a verdict (exit 0 stable,\n"
"      1 unstable). Its options are listed last.\n"
"\n"
"Examples:\n"
"  gpuphase report --top 10 run.gpht\n"
"  gpuphase report --format json -o run.json run.gpht\n"
"  gpuphase report stability run1.gpht run2.gpht run3.gpht\n"
"  gpuphase report --partial -o r3.gpp rank3.gpht   # on each host: partial results\n"
"  gpuphase report r*.gpp                           # the report of them all\n"
"\n"
"This is `gpuphase-report`; its options follow.\n";

static const char gp_help_diff[] =
"usage: gpuphase diff [options] BEFORE.gpht AFTER.gpht\n"
"       gpuphase diff [options] BEFORE1 BEFORE2 ... -- AFTER1 AFTER2 ...\n"
"\n"
"Compare two traces (or the means of several runs per side) operator by\n"
"operator, largest change first: how each phase changed, which operators\n"
"appeared or vanished, and whether the verdict moved. As a CI gate:\n"
"\n"
"  gpuphase diff --fail-above 5 --min-delta 50us base.gpht new.gpht\n"
"\n"
"exits 1 when the total or one of the base's top operators got more than 5%\n"
"and 50 us slower (and, with several runs, more than the runs' spread);\n"
"the gate line names each operator that tripped it, with its numbers.\n"
"\n"
"This is `gpuphase-report diff`; its options follow.\n";

static const char gp_help_export[] =
"usage: gpuphase export FORMAT OUT TRACE...\n"
"\n"
"Convert traces for other tools. FORMAT is one of:\n"
"  chrome-trace   Kineto JSON for Perfetto (ui.perfetto.dev), TensorBoard, HTA,\n"
"                 chrome://tracing: host threads and GPU streams as tracks,\n"
"                 arrows from launch to op, each op's phases as args\n"
"  perfetto       the same timeline in Perfetto's protobuf format (compact)\n"
"  sqlite         Nsight Systems' export schema (nsys-style SQL works) plus\n"
"                 per-op phase tables, for SQL, DuckDB, pandas\n"
"  html           one self-contained page: sortable operator table, charts,\n"
"                 a zoomable op timeline (no network, no library)\n"
"\n"
"Example: gpuphase export html report.html gpuphase-node1-4711.gpht\n"
"\n"
"This is `gpuphase-report --export FORMAT OUT TRACE...`; its options follow.\n";

const char *gp_help_usage(const char *verb)
{
	if (!verb)
		return "usage: gpuphase <command> [options] [args]  (gpuphase --help)";
	if (strcmp(verb, "record") == 0)
		return "usage: gpuphase record [options] [--] CMD [ARGS...]  (gpuphase record --help)";
	if (strcmp(verb, "trigger") == 0)
		return "usage: gpuphase trigger PID (--iters M | --seconds S | --status)  (gpuphase trigger --help)";
	if (strcmp(verb, "stop") == 0)
		return "usage: gpuphase stop PID [--control-dir DIR] [--timeout S]  (gpuphase stop --help)";
	if (strcmp(verb, "attach") == 0)
		return "usage: gpuphase attach PID [--iters N | --duration T | --every P [--duration T]] [-o FILE] "
		       "[report options]  "
		       "(gpuphase attach --help)";
	if (strcmp(verb, "report") == 0)
		return "usage: gpuphase report [options] [TRACE...]";
	if (strcmp(verb, "diff") == 0)
		return "usage: gpuphase diff [options] BEFORE.gpht AFTER.gpht";
	if (strcmp(verb, "export") == 0)
		return "usage: gpuphase export FORMAT OUT TRACE...";
	return "usage: gpuphase <command> [options] [args]";
}

/* Append the option list of gpuphase-report (args: what to ask it). */
static void gp_help_report_tool(const char *const *args)
{
	char tool[PATH_MAX];
	if (gp_locate_component("gpuphase-report", "gpuphase-report", tool, sizeof tool) != 0) {
		printf("\n(gpuphase-report was not found next to gpuphase or in PATH, so its options\n"
		       "cannot be listed here; see `man gpuphase`.)\n");
		return;
	}
	char *argv[8];
	int k = 0;
	argv[k++] = tool;
	for (int i = 0; args[i] && k < 7; i++)
		argv[k++] = (char *)args[i];
	argv[k] = NULL;
	printf("\n");
	fflush(stdout);
	pid_t pid;
	if (posix_spawn(&pid, tool, NULL, NULL, argv, environ) != 0) {
		printf("(could not run %s --help)\n", tool);
		return;
	}
	int st;
	waitpid(pid, &st, 0);
}

int gp_help_print(const char *verb)
{
	if (!verb) {
		fputs(gp_help_top, stdout);
	} else if (strcmp(verb, "record") == 0) {
		fputs(gp_help_record, stdout);
	} else if (strcmp(verb, "trigger") == 0) {
		fputs(gp_help_trigger, stdout);
	} else if (strcmp(verb, "stop") == 0) {
		fputs(gp_help_stop, stdout);
	} else if (strcmp(verb, "attach") == 0) {
		fputs(gp_help_attach, stdout);
	} else if (strcmp(verb, "report") == 0) {
		fputs(gp_help_report, stdout);
		static const char *const a[] = { "--help", NULL };
		gp_help_report_tool(a);
		static const char *const st[] = { "stability", "--help", NULL };
		gp_help_report_tool(st);
	} else if (strcmp(verb, "diff") == 0) {
		fputs(gp_help_diff, stdout);
		static const char *const a[] = { "diff", "--help", NULL };
		gp_help_report_tool(a);
	} else if (strcmp(verb, "export") == 0) {
		fputs(gp_help_export, stdout);
		static const char *const a[] = { "--help=export", NULL };
		gp_help_report_tool(a);
	} else if (strcmp(verb, "agent") == 0) {
		fputs("usage: gpuphase agent [--listen ADDR:PORT] [options]\n\nThe Prometheus sidecar (the program "
		      "gpuphase-agent): its options with gpuphase agent --help; set-up and metrics in "
		      "docs/always-on.md.\n", stdout);
	} else if (strcmp(verb, "help") == 0) {
		fputs("usage: gpuphase help [COMMAND]\n\nShow the help of COMMAND (record, trigger, attach, report, "
		      "diff, export), or the list of commands.\n", stdout);
	} else {
		return -1;
	}
	fflush(stdout);
	return 0;
}
