#!/usr/bin/env bash
# tests/gpu/run.sh — the real-GPU validation kit (docs/gpu-validation.md).
#
#   tests/gpu/run.sh [RESULT_DIR]          on a machine with an NVIDIA GPU
#   tests/gpu/run.sh --sim [RESULT_DIR]    against simcuda (CI: `make test`)
#
# One prepared script that proves on real hardware what simcuda can only
# imitate, and that never needs editing on the spot. It builds what it needs
# (nvcc -arch=native for the local GPU), then runs the checks below, writes
# every log, trace and report under RESULT_DIR, prints a summary table last
# (check, PASS/FAIL/SKIP, number) and exits 1 if any check that ran failed.
#
#   0 cuda/threads         examples/gpu/cuda_threads counts its threads
#                          (/proc/self/task) before any CUDA call and after
#                          cudaFree(0): CUDA's initialisation started threads
#                          (the number: how many), the premise of simcuda's
#                          driver thread.
#   1 ex/<example>/<mode>  every CUDA example bare, under LD_PRELOAD and under
#                          CUDA_INJECTION64_PATH only: exit status and stdout
#                          unchanged, the example's own CUDA-event timings
#                          agree with the trace within 1 % (the report's
#                          execute sum where the bracket holds only kernels),
#                          join coverage 100 %, 0 dropped records.
#     graph/<mode>         examples/graph_replay (CUDA graph of 3 kernels
#                          replayed 200 times) under preload and injection:
#                          one graph, every replayed kernel attributed to its
#                          capture-time node, each node's kernel present once
#                          per replay, the cudaGraphLaunch cost charged once
#                          per launch (= the trace's cudaGraphLaunch calls).
#   2 static/*             launch_storm built with -cudart static: injection
#                          alone still sees every kernel.
#   3 cublas, triton       launches no preload hook can see (cuBLAS' private
#                          cudart, Triton's cuLaunchKernel) are in the trace,
#                          each with a launch time from a CUPTI API record.
#   4 nvtx                 examples/gpu/nvtx_ranges (C, nvtx3) under preload +
#                          NVTX_INJECTION64_PATH: operators named by range.
#     train/*              examples/pytorch/train.py under the preload with
#                          GPUPHASE_WINDOW=skip=20,iters=10, with and without
#                          --nvtx: aten:: operators named, the window exact.
#   5 overhead/matrix/*    launch_bound's event-timed launch loop under each
#                          capture configuration (gpukit.py MATRIX: hook only,
#                          CUPTI activity only, + runtime/driver API records
#                          per cbid or all, + external correlation, + sync
#                          records, per-thread buffers, buffer size, flush
#                          period, stacks) against bare, alternated, medians;
#     overhead/launch_bound  the default mode's ratio (target <= 1.10);
#     overhead/estimate    the report's self-overhead estimate / the added
#                          time measured (target 0.75..1.25);
#     overhead/train       train.py's step time under gpuphase / bare
#                          (target <= 1.05), torch.profiler's beside it.
#   6 storm                >= 1M launches: 0 drops at default settings, or the
#                          report says exactly how many.
#   7 split/<scenario>     examples/gpu/split_waits (per-step synchronize,
#                          pageable async copy and cudaFree behind a long
#                          kernel, a launch loop deeper than the launch
#                          queue): the report's sync charged to the kernel
#                          waited for equals the program's own
#                          CLOCK_MONOTONIC_RAW measurement within 2 % + 20 us
#                          per timed call, and the verdicts are those the same
#                          program gets on simcuda, whose report agrees with
#                          simcuda's truth.
#   8 overhead/duty        the example server answering its client, bare and
#                          under GPUPHASE_WINDOW=every=1s (the default duty
#                          cycle, a 60th: more window starts than every=60s,
#                          so an upper bound), alternated, medians of
#                          GPU_KIT_DUTY_REPS (5; 2 in --sim): the ratio of the
#                          client's time (target <= 1.01), each duty run's
#                          windows written;
#     overhead/duty_launch the same for `launch_bound ROUNDS` (ROUNDS set
#                          by a first bare run, at most 100000): the ratio
#                          of its event-timed launch loop (target <= 1.01).
#
# In --sim mode every step that does not need real hardware runs against
# simcuda (LD_LIBRARY_PATH=$B/simcuda); the others print SKIP (sim). Nothing
# here needs network access, gdb, perf or nsys. Python steps need only the
# standard library (torch/triton steps SKIP with the reason when absent).
#
# Environment (all optional): GP_BUILD / GP_SRC (set by `make test`),
# CUDA_HOME, GP_SAN / GP_SAN_RUNTIME (sanitizer builds), PYTHON,
# GPU_KIT_BUDGET_S (total time budget, default 460 s on a GPU),
# GPU_KIT_STORM_LAUNCHES (default 1000000; 100000 in --sim),
# GPU_KIT_EXAMPLES (default "compute_bound launch_bound sync_bound graph_replay"),
# GPU_KIT_TOL / GPU_KIT_ABS_US (events-vs-trace tolerance, default 1 % + 20 us),
# GPU_KIT_LAUNCH_OVERHEAD_MAX (default 1.10), GPU_KIT_TRAIN_OVERHEAD_MAX
# (default 1.05), GPU_KIT_MATRIX_REPS (default 5; 2 in --sim),
# GPU_KIT_MATRIX (names of gpukit.py MATRIX rows to run, default all),
# GPU_KIT_DUTY_REPS, GPU_KIT_DUTY_SECONDS (one run's length, default 8; 3 in
# --sim), GPU_KIT_DUTY_OVERHEAD_MAX (default 1.01; all three for both duty
# rows),
# GPU_KIT_TRAIN (default examples/pytorch/train.py), GPU_KIT_NO_MAKE=1 (use $B as it is: a prebuilt
# tree carried to a machine that cannot build), GPU_KIT_REHEARSE=1 (run the
# GPU path on a machine without one: -arch=native builds, full budget, but
# the CUDA programs run on simcuda; hardware-only checks then FAIL or SKIP).
set -u

usage() {
	awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}

SIM=0
RD=""
for arg in "$@"; do
	case "$arg" in
	--sim) SIM=1 ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "run.sh: unknown option '$arg' (accepted: --sim, --help)" >&2; exit 2 ;;
	*)
		if [ -n "$RD" ]; then
			echo "run.sh: more than one RESULT_DIR given ('$RD', '$arg')" >&2
			exit 2
		fi
		RD=$arg
		;;
	esac
done

KIT_DIR=$(cd "$(dirname "$0")" && pwd)
SRC=${GP_SRC:-$(cd "$KIT_DIR/../.." && pwd)}
B=${GP_BUILD:-$SRC/build}
case "$B" in /*) ;; *) B=$SRC/$B ;; esac
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
PYTHON=${PYTHON:-python3}
GPUKIT="$PYTHON $KIT_DIR/gpukit.py"
START_S=$(date +%s)
[ -n "$RD" ] || RD=$B/gpu-results/$([ "$SIM" = 1 ] && echo sim || echo gpu)-$(date -u +%Y%m%dT%H%M%SZ)
case "$RD" in /*) ;; *) RD=$PWD/$RD ;; esac
if [ -e "$RD" ] && [ -n "$(ls -A "$RD" 2>/dev/null)" ]; then
	# Only ever clear a folder this script made (it holds our summary file).
	if [ -f "$RD/summary.tsv" ]; then rm -rf "$RD"; else
		echo "run.sh: RESULT_DIR '$RD' exists and is not empty; give a new or empty folder" >&2
		exit 2
	fi
fi
mkdir -p "$RD/runs" "$RD/build" || { echo "run.sh: cannot create RESULT_DIR '$RD'" >&2; exit 2; }
SUMMARY=$RD/summary.tsv
: >"$SUMMARY"
LOG=$RD/run.log

log() { echo "gpu-kit: $*" | tee -a "$LOG"; }

# result CHECK STATUS NUMBER [DETAIL]: one row of the summary table.
result() {
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >>"$SUMMARY"
	log "$2  $1  $3${4:+  ($4)}"
}

# budget_left: seconds left of the total budget.
if [ "$SIM" = 1 ]; then BUDGET=${GPU_KIT_BUDGET_S:-300}; else BUDGET=${GPU_KIT_BUDGET_S:-460}; fi
budget_left() { echo $((BUDGET - ($(date +%s) - START_S))); }
# have_time NEED CHECK...: true if NEED seconds are left; else every CHECK is
# recorded as SKIP (time budget).
have_time() {
	local need=$1
	shift
	[ "$(budget_left)" -ge "$need" ] && return 0
	for c in "$@"; do result "$c" SKIP - "time budget: $(budget_left) s left, step needs ~$need s"; done
	return 1
}

# ---------------------------------------------------------------- environment
if [ "$SIM" = 1 ]; then
	MODE=sim
else
	MODE=gpu
	if [ "${GPU_KIT_REHEARSE:-0}" = 1 ]; then
		# Rehearsal of the GPU path on a machine without one: everything as
		# on a GPU, except that CUDA programs run on simcuda (see below).
		echo "GPU 0: rehearsal on simcuda (GPU_KIT_REHEARSE=1)" >"$RD/nvidia-smi-L.txt"
	elif ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >"$RD/nvidia-smi-L.txt" 2>&1 ||
		! grep -q '^GPU ' "$RD/nvidia-smi-L.txt"; then
		if command -v nvidia-smi >/dev/null 2>&1; then
			echo "run.sh: no NVIDIA GPU found (nvidia-smi -L: $(head -c 200 "$RD/nvidia-smi-L.txt" 2>/dev/null))." >&2
		else
			echo "run.sh: no NVIDIA GPU found (nvidia-smi is not installed)." >&2
		fi
		echo "run.sh: on a machine without a GPU run 'tests/gpu/run.sh --sim' (simcuda)." >&2
		exit 2
	fi
fi
{
	echo "date: $(date -u +%FT%TZ)"
	echo "mode: $MODE"
	echo "host: $(uname -n) $(uname -srm)"
	echo "cpus: $(nproc)"
	echo "git: $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null) $(git -C "$SRC" status --porcelain 2>/dev/null | wc -l) changed files"
	echo "nvcc: $("$NVCC" --version 2>/dev/null | grep -o 'release [0-9.]*, V[0-9.]*')"
	if [ "$MODE" = gpu ]; then
		echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | head -n 4 | tr '\n' ';')"
		echo "cuda (driver): $(nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | head -n 1)"
	fi
	echo "python: $($PYTHON --version 2>&1)"
	$PYTHON - <<'PYEOF' 2>&1
import importlib
for m in ("torch", "triton"):
    try:
        mod = importlib.import_module(m)
        extra = ""
        if m == "torch":
            extra = " cuda=%s available=%s" % (mod.version.cuda, mod.cuda.is_available())
        print("%s: %s%s" % (m, mod.__version__, extra))
    except Exception as e:
        print("%s: not importable (%s)" % (m, str(e).splitlines()[0] if str(e) else type(e).__name__))
PYEOF
} >"$RD/env.txt" 2>&1
log "mode $MODE, results in $RD"
sed 's/^/    /' "$RD/env.txt"

# ---------------------------------------------------------------- build
LIB=$B/lib/libgpuphase.so
REPORT=$B/bin/gpuphase-report
DUMP=$B/bin/gpuphase-dump
CORE_TARGETS="$LIB $REPORT $DUMP"
[ "$SIM" = 1 ] && CORE_TARGETS="$CORE_TARGETS $B/simcuda/libcudart.so.13 $B/simcuda/libcupti.so.13"
EXAMPLES=${GPU_KIT_EXAMPLES:-compute_bound launch_bound sync_bound graph_replay}
# Where the CUDA programs live: the Makefile's builds in --sim, builds for the
# local GPU (-arch=native) otherwise.
if [ "$SIM" = 1 ]; then EXB=$B/examples; GXB=$B/examples/gpu; else EXB=$B/gpu-native; GXB=$B/gpu-native; fi

if [ "$SIM" = 1 ] && [ -n "${GP_BUILD:-}" ]; then
	# Under `make test` everything was built by `make all` already; building
	# from inside a test would race the other engineers' builds.
	log "build: using $B as built by make"
elif [ "${GPU_KIT_NO_MAKE:-0}" = 1 ]; then
	# Prebuilt tree carried to a machine that cannot build (missing -dev packages).
	log "build: GPU_KIT_NO_MAKE=1, using $B as it is"
else
	log "build: make $CORE_TARGETS"
	if ! bash "$SRC/scripts/deps.sh" core >"$RD/build/deps.log" 2>&1; then
		# The GPU machine may be offline: try with what is installed.
		log "build: scripts/deps.sh failed (offline?), building with what is installed; see build/deps.log"
		mkdir -p "$B" && touch "$B/.deps-ok"
	fi
	mk_targets=$CORE_TARGETS
	if [ "$SIM" = 1 ]; then
		for e in $EXAMPLES; do mk_targets="$mk_targets $B/examples/$e"; done
		mk_targets="$mk_targets $B/examples/gpu/launch_storm $B/examples/gpu/launch_storm_static"
		mk_targets="$mk_targets $B/examples/gpu/gemm_cublas $B/examples/gpu/nvtx_ranges $B/examples/gpu/split_waits"
		mk_targets="$mk_targets $B/examples/gpu/cuda_threads"
		mk_targets="$mk_targets $B/examples/server $B/examples/server_client"
	fi
	jobs=$(nproc)
	[ "$SIM" = 1 ] && [ "$jobs" -gt 2 ] && jobs=2
	# shellcheck disable=SC2086
	if ! make -C "$SRC" -j"$jobs" B="$B" $mk_targets >"$RD/build/make.log" 2>&1; then
		log "build: make failed (tail of build/make.log follows); checks that need the missing files will FAIL"
		tail -n 20 "$RD/build/make.log" | sed 's/^/    /'
	fi
fi

# nvcc_build OUT SRC [FLAGS...]: compile one CUDA program for the local GPU
# (-arch=native; falls back to nvcc's default architectures if the toolkit
# refuses it), logging to RESULT_DIR/build/.
nvcc_build() {
	local out=$1 src=$2
	shift 2
	local log_f
	log_f="$RD/build/$(basename "$out").log"
	mkdir -p "$(dirname "$out")"
	# -Xlinker -E: simcuda's host twins stay findable (a rehearsal runs these
	# builds on simcuda); on a GPU it only enlarges the dynamic symbol table.
	if "$NVCC" -O2 -arch=native -I"$SRC/examples" -Xlinker -rpath="$CUDA_HOME/lib64" -Xlinker -E \
		-o "$out" "$src" "$@" >"$log_f" 2>&1; then
		return 0
	fi
	echo "-- -arch=native failed; retrying with nvcc's default architectures" >>"$log_f"
	"$NVCC" -O2 -I"$SRC/examples" -Xlinker -rpath="$CUDA_HOME/lib64" -Xlinker -E \
		-o "$out" "$src" "$@" >>"$log_f" 2>&1
}

if [ "$SIM" = 0 ]; then
	log "build: nvcc -arch=native for $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)"
	pids=""
	for e in $EXAMPLES; do
		if [ -f "$SRC/examples/$e.cu" ]; then
			nvcc_build "$EXB/$e" "$SRC/examples/$e.cu" -cudart shared &
			pids="$pids $!"
		fi
	done
	nvcc_build "$GXB/launch_storm" "$SRC/examples/gpu/launch_storm.cu" -cudart shared &
	pids="$pids $!"
	nvcc_build "$GXB/launch_storm_static" "$SRC/examples/gpu/launch_storm.cu" -cudart static &
	pids="$pids $!"
	nvcc_build "$GXB/gemm_cublas" "$SRC/examples/gpu/gemm_cublas.cu" -cudart shared -lcublas &
	pids="$pids $!"
	nvcc_build "$GXB/nvtx_ranges" "$SRC/examples/gpu/nvtx_ranges.cu" -cudart shared -ldl &
	pids="$pids $!"
	nvcc_build "$GXB/split_waits" "$SRC/examples/gpu/split_waits.cu" -cudart shared &
	pids="$pids $!"
	nvcc_build "$GXB/cuda_threads" "$SRC/examples/gpu/cuda_threads.cu" -cudart shared &
	pids="$pids $!"
	nvcc_build "$EXB/server" "$SRC/examples/server/server.cu" -cudart shared -I"$SRC/examples/server" &
	pids="$pids $!"
	${CC:-cc} -O2 -o "$EXB/server_client" "$SRC/examples/server/client.c" >"$RD/build/server_client.log" 2>&1 &
	pids="$pids $!"
	for p in $pids; do wait "$p"; done
fi

missing=""
for f in $CORE_TARGETS; do [ -e "$f" ] || missing="$missing $f"; done
# A library or tool that exists but cannot load (a prebuilt tree carried to a
# machine without, say, libunwind.so.8) fails every profiled run with exit
# 127; say so once, here, by name.
unloadable=""
for f in $CORE_TARGETS; do
	[ -e "$f" ] || continue
	nf=$(ldd "$f" 2>/dev/null | awk '/not found/ { print $1 }' | tr '\n' ' ')
	[ -n "$nf" ] && unloadable="$unloadable $(basename "$f") needs ${nf% }, not found;"
done
if [ -n "$missing" ]; then result build FAIL "missing:$missing" "see build/make.log"
elif [ -n "$unloadable" ]; then
	result build FAIL "cannot load:${unloadable%;}" "install the libraries, or carry them and put their folder on LD_LIBRARY_PATH"
else result build PASS "$(($(date +%s) - START_S)) s"; fi

# ---------------------------------------------------------------- run helpers
# Library search path for CUDA programs: simcuda in --sim, the toolkit's
# libraries (cudart, cublas, cupti) on a GPU. Python runs keep the caller's
# path so PyTorch loads its own bundled CUDA libraries.
ORIG_LDLP=${LD_LIBRARY_PATH:-}
ON_SIMCUDA=0
[ "$SIM" = 1 ] || [ "${GPU_KIT_REHEARSE:-0}" = 1 ] && ON_SIMCUDA=1
if [ "$ON_SIMCUDA" = 1 ]; then
	CUDA_LDLP=$B/simcuda${ORIG_LDLP:+:$ORIG_LDLP}
else
	CUDA_LDLP=""
	for d in "$CUDA_HOME/lib64" "$CUDA_HOME/extras/CUPTI/lib64" "$CUDA_HOME/targets/x86_64-linux/lib"; do
		[ -d "$d" ] && CUDA_LDLP=${CUDA_LDLP:+$CUDA_LDLP:}$d
	done
	CUDA_LDLP=$CUDA_LDLP${ORIG_LDLP:+:$ORIG_LDLP}
fi
# Sanitizer builds: an instrumented libgpuphase.so (and simcuda) needs its
# runtime first in LD_PRELOAD, in every mode, bare runs included.
SAN_PRE=""
if [ -n "${GP_SAN:-}" ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	SAN_PRE="$GP_SAN_RUNTIME "
	# Leaks of the (uninstrumented) programs and of simcuda are not this
	# kit's subject; libgpuphase's own tests check the library.
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
fi

# run_prog ID MODE TIMEOUT CMD...: run CMD once. MODE: bare | preload (LD_PRELOAD)
# | inject (CUDA_INJECTION64_PATH only) | nvtx (preload + NVTX_INJECTION64_PATH).
# Extra variables come from the array RUN_ENV (NAME=value ...). Leaves in
# $RD/runs/ID: stdout, stderr, rc, wall_ns, cmd, and the trace(s) trace-PID.gpht.
RUN_ENV=()
run_prog() {
	local id=$1 mode=$2 tmo=$3
	shift 3
	local d="$RD/runs/$id"
	rm -rf "$d"
	mkdir -p "$d"
	local -a e=()
	[ "${#RUN_ENV[@]}" -gt 0 ] && e=("${RUN_ENV[@]}")
	case "$mode" in
	bare) [ -n "$SAN_PRE" ] && e+=("LD_PRELOAD=$SAN_PRE") ;;
	preload) e+=("LD_PRELOAD=$SAN_PRE$LIB" "GPUPHASE_OUTPUT=$d/trace-%p.gpht") ;;
	nvtx) e+=("LD_PRELOAD=$SAN_PRE$LIB" "NVTX_INJECTION64_PATH=$LIB" "GPUPHASE_OUTPUT=$d/trace-%p.gpht") ;;
	inject)
		e+=("CUDA_INJECTION64_PATH=$LIB" "GPUPHASE_OUTPUT=$d/trace-%p.gpht")
		[ -n "$SAN_PRE" ] && e+=("LD_PRELOAD=$SAN_PRE")
		;;
	*) echo "run_prog: bad mode $mode" >&2; return 2 ;;
	esac
	# Never run past the total budget: a hung program is killed in time for
	# the summary (its check then FAILs with "timed out").
	local left=$(($(budget_left) - 15))
	[ "$tmo" -gt "$left" ] && tmo=$left
	[ "$tmo" -lt 5 ] && tmo=5
	printf '%q ' env "${e[@]}" "$@" >"$d/cmd"
	echo >>"$d/cmd"
	local t0 t1 rc
	t0=$(date +%s%N)
	(cd "$d" && timeout -k 5 "$tmo" env "${e[@]}" "$@" >"$d/stdout" 2>"$d/stderr")
	rc=$?
	t1=$(date +%s%N)
	echo "$rc" >"$d/rc"
	echo $((t1 - t0)) >"$d/wall_ns"
	[ "$rc" = 124 ] && echo "run.sh: timed out after $tmo s" >>"$d/stderr"
	return 0
}

# trace_of ID: the run's trace (the largest, if child processes wrote more).
trace_of() {
	ls -S "$RD/runs/$1"/trace-*.gpht 2>/dev/null | head -n 1
}

# report_of ID [REPORT ARGS...]: JSON and text reports of the run's trace into
# report.json / report.txt, dump statistics into dumpstats.json (with the
# per-record detail of `gpukit.py dumpstats --ops`; DS_ARGS="" for counts
# only, DS_ARGS=--tail for the record count of a big trace). Returns 1 if
# there is no trace or the report fails (the reason is in report.err).
DS_ARGS=--ops
report_of() {
	local id=$1
	shift
	local d="$RD/runs/$id" t
	t=$(trace_of "$id")
	if [ -z "$t" ]; then
		echo "no trace file written (GPUPHASE_OUTPUT=$d/trace-%p.gpht)" >"$d/report.err"
		return 1
	fi
	timeout -k 5 120 "$REPORT" "$@" "$t" >"$d/report.txt" 2>"$d/report-text.err"
	timeout -k 5 120 "$REPORT" --format json "$@" "$t" >"$d/report.json" 2>"$d/report.err"
	local rrc=$?
	if [ "$rrc" != 0 ]; then
		# 3 = truncated trace: the JSON is still written and still judged.
		echo "gpuphase-report exited $rrc" >>"$d/report.err"
		[ "$rrc" = 3 ] || return 1
	fi
	if [ "$DS_ARGS" = --tail ]; then
		# Big traces: only the dump's closing lines (record count, footer).
		timeout -k 5 180 "$DUMP" "$t" 2>"$d/dump.err" | tail -n 64 | $GPUKIT dumpstats \
			>"$d/dumpstats.json" 2>>"$d/dump.err"
	else
		# shellcheck disable=SC2086
		timeout -k 5 180 "$DUMP" "$t" 2>"$d/dump.err" | timeout -k 5 180 $GPUKIT dumpstats $DS_ARGS \
			>"$d/dumpstats.json" 2>>"$d/dump.err"
	fi
	return 0
}

# sim_env NAME: RUN_ENV for a CUDA program: the library path, and in --sim the
# program's simcuda cost model examples/NAME.simcuda when there is one.
sim_env() {
	RUN_ENV=("LD_LIBRARY_PATH=$CUDA_LDLP")
	if [ "$ON_SIMCUDA" = 1 ] && [ -f "$SRC/examples/$1.simcuda" ]; then
		RUN_ENV+=("SIMCUDA_CONFIG=$SRC/examples/$1.simcuda")
	fi
	return 0
}

SIM_FLAG=()
[ "$SIM" = 1 ] && SIM_FLAG=(--sim)
# Timings taken on simcuda (--sim, and a rehearsal) are the simulator's on a
# shared host: the overhead ratios and the host-wait comparisons are judged
# as in --sim there (docs/gpu-validation.md).
SIMTIME_FLAG=()
[ "$ON_SIMCUDA" = 1 ] && SIMTIME_FLAG=(--sim)
TOL=${GPU_KIT_TOL:-0.01}
ABS_US=${GPU_KIT_ABS_US:-20}

# python_env: RUN_ENV for Python runs. The caller's library path is kept (so
# PyTorch loads its bundled CUDA libraries); libgpuphase is pointed at the
# libcupti.so.13 that ships with PyTorch when there is one, so the process
# holds a single CUPTI (Kineto and gpuphase would otherwise load two copies
# under the same soname), else at the toolkit's.
PY_CUPTI=""
python_env() {
	RUN_ENV=()
	if [ -z "$PY_CUPTI" ]; then
		PY_CUPTI=$($PYTHON - <<'PYEOF' 2>/dev/null
import glob, os, sys
hits = []
for p in sys.path:
    if os.path.isdir(p):
        hits += glob.glob(os.path.join(p, "nvidia", "**", "libcupti.so.13*"), recursive=True)
        hits += glob.glob(os.path.join(p, "torch", "lib", "libcupti.so.13*"))
print(sorted(hits)[0] if hits else "none")
PYEOF
)
		[ -n "$PY_CUPTI" ] || PY_CUPTI=none
		if [ "$PY_CUPTI" = none ]; then
			for c in "$CUDA_HOME/lib64/libcupti.so.13" "$CUDA_HOME/extras/CUPTI/lib64/libcupti.so.13"; do
				[ -e "$c" ] && { PY_CUPTI=$c; break; }
			done
		fi
		log "python runs: GPUPHASE_CUPTI_LIB=$PY_CUPTI"
	fi
	[ "$PY_CUPTI" != none ] && RUN_ENV+=("GPUPHASE_CUPTI_LIB=$PY_CUPTI")
	return 0
}

# ---------------------------------------------------------------- 0. CUDA's threads
# examples/gpu/cuda_threads counts its threads before any CUDA call and after
# cudaFree(0): real CUDA starts threads when it initialises, the premise of
# simcuda's driver thread (docs/simcuda.md). Bare, nothing of gpuphase loaded.
log "step 0: threads started by CUDA's initialisation (examples/gpu/cuda_threads)"
ct=$GXB/cuda_threads
if [ ! -x "$ct" ]; then
	result cuda/threads FAIL - "$ct not built"
elif have_time 10 cuda/threads; then
	sim_env cuda_threads
	run_prog cuda_threads bare 60 "$ct"
	$GPUKIT threads --check cuda/threads --summary "$SUMMARY" --run "$RD/runs/cuda_threads" | tee -a "$LOG"
fi

# ---------------------------------------------------------------- 1. examples
log "step 1: examples bare / LD_PRELOAD / CUDA_INJECTION64_PATH"
for e in $EXAMPLES; do
	exe=$EXB/$e
	if [ ! -x "$exe" ]; then
		result "ex/$e/preload" FAIL - "$exe not built"
		result "ex/$e/inject" FAIL - "$exe not built"
		continue
	fi
	have_time 20 "ex/$e/preload" "ex/$e/inject" || continue
	sim_env "$e"
	# Lazy loading (the CUDA 12.2+ default) would put module loads inside
	# the examples' event brackets on a GPU; load eagerly in every mode.
	[ "$SIM" = 0 ] && RUN_ENV+=(CUDA_MODULE_LOADING=EAGER)
	run_prog "$e.bare" bare 120 "$exe"
	for m in preload inject; do
		run_prog "$e.$m" "$m" 120 "$exe"
		report_of "$e.$m"
		$GPUKIT example --check "ex/$e/$m" --summary "$SUMMARY" --tol "$TOL" --abs-us "$ABS_US" \
			--bare "$RD/runs/$e.bare" --run "$RD/runs/$e.$m" "${SIM_FLAG[@]+"${SIM_FLAG[@]}"}" | tee -a "$LOG"
		if [ "$e" = graph_replay ]; then
			# the graph's three captured nodes (examples/graph_replay.cu)
			$GPUKIT graph --check "graph/$m" --summary "$SUMMARY" --bare "$RD/runs/$e.bare" \
				--run "$RD/runs/$e.$m" --kernels layer_add,layer_mul,layer_xor | tee -a "$LOG"
		fi
	done
done

# ---------------------------------------------------------------- 2. static cudart
log "step 2: -cudart static, injection only"
static_exe=$GXB/launch_storm_static
if [ ! -x "$static_exe" ]; then
	result static/build FAIL - "$static_exe not built"
elif readelf -d "$static_exe" 2>/dev/null | grep -q 'NEEDED.*libcudart'; then
	result static/build FAIL - "$static_exe has a DT_NEEDED on libcudart: not a static-cudart build"
else
	result static/build PASS "no libcudart NEEDED" "$(readelf -d "$static_exe" | grep -c NEEDED) NEEDED entries"
	if [ "$SIM" = 1 ]; then
		result static/inject SKIP "(sim)" "simcuda cannot stand in for a cudart linked into the program"
	elif have_time 20 static/inject; then
		n_static=20000
		sim_env launch_storm
		run_prog static.bare bare 60 "$static_exe" "$n_static"
		run_prog static.inject inject 60 "$static_exe" "$n_static"
		report_of static.inject
		$GPUKIT kernels --check static/inject --summary "$SUMMARY" --bare "$RD/runs/static.bare" \
			--run "$RD/runs/static.inject" --kernel storm_tick --expect "$n_static" | tee -a "$LOG"
	fi
fi

# ---------------------------------------------------------------- 3. cuBLAS, Triton
log "step 3: launches only CUPTI sees (cuBLAS, Triton)"
gemm_exe=$GXB/gemm_cublas
gemm_iters=20
if [ ! -x "$gemm_exe" ]; then
	result cublas FAIL - "$gemm_exe not built"
elif [ "$SIM" = 1 ]; then
	result cublas SKIP "(sim)" "cuBLAS needs a real driver (its private cudart bypasses simcuda); built OK"
elif have_time 30 cublas; then
	sim_env gemm_cublas
	run_prog cublas.bare bare 120 "$gemm_exe" 4096 "$gemm_iters"
	run_prog cublas.preload preload 120 "$gemm_exe" 4096 "$gemm_iters"
	report_of cublas.preload
	# One warm-up call plus the timed loop: at least gemm_iters + 1 kernels.
	$GPUKIT hidden --check cublas --summary "$SUMMARY" --bare "$RD/runs/cublas.bare" \
		--run "$RD/runs/cublas.preload" --min-kernels $((gemm_iters + 1)) --expect-hooked 0 | tee -a "$LOG"
fi

TRITON_PY=$SRC/examples/gpu/triton_add.py
triton_iters=50
if [ "$SIM" = 1 ]; then
	result triton SKIP "(sim)" "Triton needs a real GPU"
elif have_time 60 triton; then
	# Probe first, so a missing torch/triton is a SKIP with its reason.
	RUN_ENV=()
	if ! $PYTHON -c 'import torch, triton, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >"$RD/build/triton-probe.log" 2>&1; then
		result triton SKIP - "torch/triton not importable or no CUDA device: $(tail -n 1 "$RD/build/triton-probe.log" | cut -c1-120)"
	else
		python_env
		run_prog triton.bare bare 180 "$PYTHON" "$TRITON_PY" "$triton_iters"
		run_prog triton.preload preload 180 "$PYTHON" "$TRITON_PY" "$triton_iters"
		report_of triton.preload
		$GPUKIT hidden --check triton --summary "$SUMMARY" --bare "$RD/runs/triton.bare" \
			--run "$RD/runs/triton.preload" --kernel add_kernel --expect $((triton_iters + 1)) | tee -a "$LOG"
	fi
fi

# ---------------------------------------------------------------- NVTX (C)
# What train/nvtx needs from NVTX, on a program simcuda can run too: ranges
# reach libgpuphase through NVTX_INJECTION64_PATH and name the operators.
log "step 4a: NVTX-named operators (examples/gpu/nvtx_ranges)"
nvx=$GXB/nvtx_ranges
nvtx_steps=50
if [ ! -x "$nvx" ]; then
	result nvtx FAIL - "$nvx not built"
elif have_time 15 nvtx; then
	sim_env nvtx_ranges
	run_prog nvtx.bare bare 60 "$nvx" "$nvtx_steps"
	run_prog nvtx.nvtx nvtx 60 "$nvx" "$nvtx_steps"
	report_of nvtx.nvtx --group-by nvtx
	$GPUKIT nvtx --check nvtx --summary "$SUMMARY" --bare "$RD/runs/nvtx.bare" --run "$RD/runs/nvtx.nvtx" \
		--expect "gp::fill=$nvtx_steps,gp::scale=$((2 * nvtx_steps)),gp::step=$nvtx_steps" | tee -a "$LOG"
fi

# ---------------------------------------------------------------- 4 + 5. train.py
log "step 4/5: examples/pytorch/train.py (window, NVTX, overhead vs torch.profiler)"
TRAIN=${GPU_KIT_TRAIN:-$SRC/examples/pytorch/train.py}
WRAP=$KIT_DIR/train_wrap.py
WIN_SKIP=20
WIN_ITERS=10
train_checks="train/window train/nvtx overhead/train"
if [ "$SIM" = 1 ]; then
	for c in $train_checks; do result "$c" SKIP "(sim)" "PyTorch training needs a real GPU"; done
elif [ ! -f "$TRAIN" ]; then
	for c in $train_checks; do result "$c" FAIL - "$TRAIN is missing"; done
elif ! $PYTHON -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >"$RD/build/torch-probe.log" 2>&1; then
	for c in $train_checks; do
		result "$c" SKIP - "torch not importable or no CUDA device: $(tail -n 1 "$RD/build/torch-probe.log" | cut -c1-120)"
	done
elif have_time 150 $train_checks; then
	python_env
	base_env=("${RUN_ENV[@]+"${RUN_ENV[@]}"}")
	RUN_ENV=("${base_env[@]+"${base_env[@]}"}" "GPUPHASE_WINDOW=skip=$WIN_SKIP,iters=$WIN_ITERS")
	run_prog train.bare bare 240 "$PYTHON" "$WRAP" -- "$TRAIN"
	run_prog train.preload preload 240 "$PYTHON" "$WRAP" -- "$TRAIN"
	run_prog train.nvtx nvtx 240 "$PYTHON" "$WRAP" -- "$TRAIN" --nvtx
	# the richest CUPTI mode on the same window: what the default saves
	RUN_ENV=("${base_env[@]+"${base_env[@]}"}" "GPUPHASE_WINDOW=skip=$WIN_SKIP,iters=$WIN_ITERS" GPUPHASE_CUPTI=full)
	run_prog train.full preload 240 "$PYTHON" "$WRAP" -- "$TRAIN"
	RUN_ENV=("${base_env[@]+"${base_env[@]}"}")
	run_prog train.torchprof bare 240 "$PYTHON" "$WRAP" --torch-profiler "$WIN_SKIP,$WIN_ITERS" -- "$TRAIN"
	report_of train.preload
	report_of train.nvtx --group-by nvtx
	DS_ARGS="" report_of train.full
	$GPUKIT train --summary "$SUMMARY" --runs "$RD/runs" --skip "$WIN_SKIP" --iters "$WIN_ITERS" \
		--max "${GPU_KIT_TRAIN_OVERHEAD_MAX:-1.05}" | tee -a "$LOG"
fi

# ---------------------------------------------------------------- 5. overhead matrix
# launch_bound's event-timed launch loop under each configuration of
# gpukit.py's MATRIX, against bare: GPU_KIT_MATRIX_REPS repetitions, each a
# bare run then every configuration, in an order rotated by one each
# repetition (a drift of the machine spreads over all); ratios of medians.
# The first repetition's traces get a JSON report (join coverage, the
# self-overhead estimate); traces are removed once reported.
log "step 5: overhead matrix (examples/launch_bound)"
lb=$EXB/launch_bound
if [ "$SIM" = 1 ]; then MX_REPS=${GPU_KIT_MATRIX_REPS:-2}; else MX_REPS=${GPU_KIT_MATRIX_REPS:-5}; fi
mx_names=() mx_envs=()
while read -r mx_name mx_env; do
	if [ -n "${GPU_KIT_MATRIX:-}" ] && [[ " $GPU_KIT_MATRIX " != *" $mx_name "* ]]; then continue; fi
	mx_names+=("$mx_name")
	mx_envs+=("$mx_env")
done < <($GPUKIT matrix-env)
mx_n=${#mx_names[@]}
if [ ! -x "$lb" ]; then
	result overhead/launch_bound FAIL - "$lb not built"
elif [ "$mx_n" = 0 ]; then
	result overhead/launch_bound FAIL - "no matrix configuration (GPU_KIT_MATRIX='${GPU_KIT_MATRIX:-}')"
elif have_time 40 overhead/launch_bound overhead/estimate; then
	sim_env launch_bound
	[ "$SIM" = 0 ] && RUN_ENV+=(CUDA_MODULE_LOADING=EAGER)
	mx_base=("${RUN_ENV[@]}")
	for rep in $(seq 1 "$MX_REPS"); do
		[ "$(budget_left)" -ge 60 ] || { log "matrix: stopped after $((rep - 1)) repetitions (time budget)"; break; }
		RUN_ENV=("${mx_base[@]}")
		run_prog "mx.bare.$rep" bare 60 "$lb"
		for k in $(seq 0 $((mx_n - 1))); do
			i=$(((k + rep - 1) % mx_n))
			id="mx.${mx_names[$i]}.$rep"
			# shellcheck disable=SC2206 # the configuration's NAME=value words
			RUN_ENV=("${mx_base[@]}" ${mx_envs[$i]})
			run_prog "$id" preload 60 "$lb"
			if [ "$rep" = 1 ] || [ "${mx_names[$i]}" = lean ]; then
				t=$(trace_of "$id")
				[ -n "$t" ] && timeout -k 5 60 "$REPORT" --format json "$t" >"$RD/runs/$id/report.json" \
					2>"$RD/runs/$id/report.err"
			fi
			rm -f "$RD/runs/$id"/trace-*.gpht
		done
	done
	RUN_ENV=("${mx_base[@]}")
	$GPUKIT matrix --summary "$SUMMARY" --runs "$RD/runs" --max "${GPU_KIT_LAUNCH_OVERHEAD_MAX:-1.10}" \
		"${SIMTIME_FLAG[@]+"${SIMTIME_FLAG[@]}"}" | tee -a "$LOG"
fi

# ---------------------------------------------------------------- 6. launch storm
log "step 6: launch storm"
storm=$GXB/launch_storm
if [ "$SIM" = 1 ]; then STORM_N=${GPU_KIT_STORM_LAUNCHES:-100000}; else STORM_N=${GPU_KIT_STORM_LAUNCHES:-1000000}; fi
if [ ! -x "$storm" ]; then
	result storm FAIL - "$storm not built"
elif have_time 60 storm; then
	sim_env launch_storm
	# Zero-cost simulated launches: the storm measures the profiler, not the model.
	[ "$ON_SIMCUDA" = 1 ] && RUN_ENV+=(SIMCUDA_LAUNCH_NS=0 SIMCUDA_LAUNCH_LATENCY_NS=0 SIMCUDA_EXEC_NS=0 SIMCUDA_API_NS=0 SIMCUDA_SYNC_NS=0)
	run_prog storm.bare bare 180 "$storm" "$STORM_N"
	run_prog storm.preload preload 300 "$storm" "$STORM_N"
	DS_ARGS=--tail report_of storm.preload
	$GPUKIT kernels --check storm --summary "$SUMMARY" --bare "$RD/runs/storm.bare" \
		--run "$RD/runs/storm.preload" --kernel storm_tick --expect "$STORM_N" --allow-reported-drops | tee -a "$LOG"
fi

# ---------------------------------------------------------------- 7. host waits
# examples/gpu/split_waits: each scenario under the preload (on the GPU), and
# the same binary on simcuda with its cost model and truth (CUPTI's offset and
# overhead pinned to 0, as tests/e2e/test_report_e2e.sh does, so the report
# must agree with the truth exactly): the verdicts to expect.
log "step 7: host waits (examples/gpu/split_waits)"
sw=$GXB/split_waits
SW_CHECK="$PYTHON $SRC/tests/e2e/report_truth_check.py"
SW_PIN=(SIMCUDA_CUPTI_CLOCK_OFFSET_NS=0 SIMCUDA_CUPTI_CLOCK_DRIFT_PPM=0 SIMCUDA_CUPTI_API_OVERHEAD_NS=0
	SIMCUDA_CUPTI_LAUNCH_OVERHEAD_NS=0)
for sc in step_sync pageable_copy free_after queue_deep; do
	if [ ! -x "$sw" ]; then
		result "split/$sc" FAIL - "$sw not built"
		continue
	fi
	if [ ! -e "$B/simcuda/libcudart.so.13" ]; then
		result "split/$sc" FAIL - "no simcuda in $B (the reference run needs it)"
		continue
	fi
	have_time 20 "split/$sc" || continue
	RUN_ENV=("LD_LIBRARY_PATH=$CUDA_LDLP")
	[ "$ON_SIMCUDA" = 1 ] && RUN_ENV+=("SIMCUDA_CONFIG=$SRC/examples/gpu/split_waits.simcuda")
	[ "$SIM" = 0 ] && RUN_ENV+=(CUDA_MODULE_LOADING=EAGER)
	run_prog "split.$sc" preload 60 "$sw" "$sc"
	DS_ARGS="" report_of "split.$sc"
	RUN_ENV=("LD_LIBRARY_PATH=$B/simcuda${ORIG_LDLP:+:$ORIG_LDLP}" "SIMCUDA_CONFIG=$SRC/examples/gpu/split_waits.simcuda"
		SIMCUDA_TRUTH=truth.jsonl "${SW_PIN[@]}")
	run_prog "split.$sc.simcuda" preload 60 "$sw" "$sc"
	DS_ARGS="" report_of "split.$sc.simcuda"
	ref=$RD/runs/split.$sc.simcuda
	$SW_CHECK "$ref/truth.jsonl" "$ref/report.json" >"$ref/truth-check.txt" 2>&1
	truth_rc=$?
	$GPUKIT split --check "split/$sc" --summary "$SUMMARY" --scenario "$sc" --run "$RD/runs/split.$sc" \
		--ref "$ref" --truth-rc "$truth_rc" "${SIMTIME_FLAG[@]+"${SIMTIME_FLAG[@]}"}" | tee -a "$LOG"
done

# ---------------------------------------------------------------- 8. duty cycle
# What duty-cycled capture at the default duty cycle (a 60th of each period)
# costs, on the two programs its target names: the example server
# (examples/server) answering its client, timed by tests/gpu/duty_serve.sh
# (overhead/duty), and launch_bound's event-timed launch loop
# (overhead/duty_launch). Each bare and duty-cycled, alternated,
# GPU_KIT_DUTY_REPS each. The period is every=1s, not the production
# every=60s: the same duty (16.7 ms windows) but 60 times as many window
# starts, stops and files in a run short enough for the budget, so the cost
# measured is an upper bound of every=60s's. The request count / rounds are
# set by a first bare run so that a run lasts GPU_KIT_DUTY_SECONDS (many
# periods).
if [ "$SIM" = 1 ]; then DUTY_REPS=${GPU_KIT_DUTY_REPS:-2}; else DUTY_REPS=${GPU_KIT_DUTY_REPS:-5}; fi
DUTY_S=${GPU_KIT_DUTY_SECONDS:-$([ "$SIM" = 1 ] && echo 3 || echo 8)}
DUTY_WINDOW=every=1s
DUTY_NEED=$((2 * DUTY_REPS * (DUTY_S + 3) + 20))

# duty_count CALIB_MS CALIB_N MAX: how many units (requests, rounds) make a
# run of DUTY_S seconds, from a calibration run of CALIB_N units that took
# CALIB_MS; at least CALIB_N (also when the calibration printed no time),
# at most MAX.
duty_count() {
	awk -v ms="${1:-0}" -v n0="$2" -v max="$3" -v s="$DUTY_S" \
		'BEGIN { n = ms > 0 ? int(n0 * s * 1000 / ms) : 0; if (n < n0) n = n0; if (n > max) n = max; print n }'
}

# duty_reps PREFIX RUN ROW: DUTY_REPS repetitions of a bare run and a duty-cycled
# one, alternated (bare first in odd repetitions), each made by the function
# RUN ID MODE (MODE bare | every) as run folder PREFIX.MODE.REP; each duty
# run's windows are counted into its file `windows` (the proof that it
# duty-cycled) and then removed (size); gpukit.py duty judges them as ROW.
duty_reps() {
	local prefix=$1 fn=$2 rep mode id
	for rep in $(seq 1 "$DUTY_REPS"); do
		for mode in $([ $((rep % 2)) = 1 ] && echo "bare every" || echo "every bare"); do
			id=$prefix.$mode.$rep
			"$fn" "$id" "$mode"
			[ "$mode" = every ] || continue
			find "$RD/runs/$id" -path '*.windows/w*.gpht' | wc -l >"$RD/runs/$id/windows"
			find "$RD/runs/$id" -maxdepth 1 -name '*.windows' -exec rm -rf {} +
		done
	done
	$GPUKIT duty --check "$3" --summary "$SUMMARY" --runs "$RD/runs" --window "$DUTY_WINDOW" --seconds "$DUTY_S" \
		--max "${GPU_KIT_DUTY_OVERHEAD_MAX:-1.01}" "${SIMTIME_FLAG[@]+"${SIMTIME_FLAG[@]}"}" | tee -a "$LOG"
}

# The duty runs' control sockets: GPUPHASE_CONTROL_DIR must be at most 80
# bytes (a socket path's limit), which a RESULT_DIR deep in a build tree
# passes (the library then refuses it and captures nothing): a short
# folder of our own, removed after step 8b.
DUTY_CTL=$(mktemp -d /tmp/gpkit-ctl.XXXXXX)
log "step 8: duty-cycled capture's cost (examples/server)"
srv_exe=$EXB/server
srv_cli=$EXB/server_client
# duty_serve_run ID MODE: one timed run of the server (duty_serve.sh)
# shellcheck disable=SC2317 # called through duty_reps
duty_serve_run() {
	if [ "$2" = bare ]; then
		run_prog "$1" bare 180 bash "$KIT_DIR/duty_serve.sh" "$srv_exe" "$srv_cli" "$duty_n"
	else
		run_prog "$1" bare 180 bash "$KIT_DIR/duty_serve.sh" "$srv_exe" "$srv_cli" "$duty_n" \
			"LD_PRELOAD=$SAN_PRE$LIB" "GPUPHASE_WINDOW=$DUTY_WINDOW" \
			"GPUPHASE_OUTPUT=$RD/runs/$1/srv-%p.gpht" "GPUPHASE_CONTROL_DIR=$DUTY_CTL/$1"
	fi
}
if [ ! -x "$srv_exe" ] || [ ! -x "$srv_cli" ]; then
	result overhead/duty FAIL - "$srv_exe or $srv_cli not built"
elif have_time "$DUTY_NEED" overhead/duty; then
	sim_env server/server
	run_prog duty.calib bare 120 bash "$KIT_DIR/duty_serve.sh" "$srv_exe" "$srv_cli" 3000
	calib_ms=$(sed -n 's/^timing: serve [0-9]* requests \([0-9.]*\)$/\1/p' "$RD/runs/duty.calib/stderr")
	duty_n=$(duty_count "$calib_ms" 3000 1000000000)
	duty_reps duty duty_serve_run overhead/duty
fi

# launch_bound ROUNDS (3000 launches a round, at most 100000 rounds); the
# calibration run does 10 rounds. The duty runs are preload runs with the
# window set: the trace is the windows, trace-PID.windows/.
log "step 8b: duty-cycled capture's cost (examples/launch_bound)"
lb=$EXB/launch_bound
# duty_launch_run ID MODE: one run of launch_bound, duty_rounds rounds
# shellcheck disable=SC2317 # called through duty_reps
duty_launch_run() {
	RUN_ENV=("${dl_base[@]}")
	if [ "$2" = bare ]; then
		run_prog "$1" bare 180 "$lb" "$duty_rounds"
	else
		RUN_ENV+=("GPUPHASE_WINDOW=$DUTY_WINDOW" "GPUPHASE_CONTROL_DIR=$DUTY_CTL/$1")
		run_prog "$1" preload 180 "$lb" "$duty_rounds"
	fi
}
if [ ! -x "$lb" ]; then
	result overhead/duty_launch FAIL - "$lb not built"
elif have_time "$DUTY_NEED" overhead/duty_launch; then
	sim_env launch_bound
	[ "$SIM" = 0 ] && RUN_ENV+=(CUDA_MODULE_LOADING=EAGER)
	dl_base=("${RUN_ENV[@]}")
	run_prog duty_launch.calib bare 120 "$lb" 10
	calib_ms=$(sed -n 's/^timing: launch_loop \([0-9.]*\)$/\1/p' "$RD/runs/duty_launch.calib/stderr")
	duty_rounds=$(duty_count "$calib_ms" 10 100000)
	duty_reps duty_launch duty_launch_run overhead/duty_launch
fi
rm -rf "$DUTY_CTL"

# ---------------------------------------------------------------- summary
case "${GPU_KIT_KEEP_TRACES:-all}" in
all) ;;
small | none)
	# Results shipped back from a lent machine: keep reports, drop big traces.
	lim=$([ "${GPU_KIT_KEEP_TRACES}" = none ] && echo 0 || echo 16384)
	find "$RD/runs" -name 'trace-*.gpht' -size +"${lim}"k -print -delete | sed 's/^/gpu-kit: removed trace /' | tee -a "$LOG"
	;;
*) log "GPU_KIT_KEEP_TRACES='${GPU_KIT_KEEP_TRACES}': expected all, small or none; kept all" ;;
esac
log "done in $(($(date +%s) - START_S)) s; logs, traces and reports in $RD"
$GPUKIT table "$SUMMARY" --mode "$MODE" | tee "$RD/summary.txt"
exit "${PIPESTATUS[0]}"
