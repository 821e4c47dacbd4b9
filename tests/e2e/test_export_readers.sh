#!/usr/bin/env bash
# test_export_readers.sh — the exports opened by the tools users open them
# with, installed from the package index into a scratch virtual environment
# (scripts/deps.sh readers, $GP_READERS_VENV, default build/readers-venv in the source tree):
#   sqlite3,      nsys's stats reports (tests/e2e/nsys_stats.sql: kernel, API,
#   DuckDB        memory time, memory size and NVTX summaries) on the SQLite
#                 export, in Python's sqlite3 and in DuckDB (ATTACH with its
#                 sqlite reader, from the index; without it that part is
#                 skipped and says so): the report's numbers, the Chrome
#                 trace's NVTX ranges, gpuphase-dump's pageable copies
#   pandas        read_sql of every table and view
#   Perfetto      trace_processor on the perfetto export (its shell binary
#                 is downloaded on first use: without it, skipped and said)
#   HTA           TraceAnalysis on the chrome-trace export lists the same
#                 kernels, counts and times as `gpuphase-report --format json`;
#                 its kernel-type and temporal breakdowns count the copies as
#                 memory with their time, and (control) fail on the former
#                 names ("memcpy HtoD")
# The traces: corpus traces; sync_bound recorded here on simcuda, whose
# copies are from pageable memory (the corpus traces predate that bit); and
# tests/e2e/nvtx_kinds.c, built here, for NVTX start/end ranges, marks and a
# range left open (sqlite3 and DuckDB only: too few calls for HTA).
# Each reader on each trace is a counted part (PART <reader>_<trace>: PASS,
# FAIL or SKIP with the reason, tests/run-tests.sh): one reader passing no
# longer stands for the others. Exit 77 (skipped, never passed) when the
# index cannot be reached and the environment is not there yet, or when no
# part passed. Environment (make test): GP_BUILD, GP_SRC.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
T=$S/tests/corpus/traces
V=${GP_READERS_VENV:-$S/build/readers-venv} # one venv for the plain and sanitizer builds
[ -x "$R" ] || { echo "FAIL: $R is missing (not built?)"; exit 1; }
bash "$S/scripts/deps.sh" readers "$V"
rc=$?
if [ "$rc" != 0 ] && ! "$V/bin/python" -c "import pandas" 2>/dev/null; then
	echo "SKIP: the package index cannot be reached: no DuckDB, pandas or HTA to read the exports with"
	exit 77
fi
CHECK="$V/bin/python $S/tests/e2e/export_readers_check.py"
tmp=$(mktemp -d /tmp/gp_readers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0 skips=0 passes=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
reader() { # reader TRACE MODE ARGS...: one reader's checks on TRACE, one part; 77 = not installed
	local out rc why part=${2}_$1
	shift
	out=$($CHECK "$@" 2>"$tmp/err"); rc=$?
	echo "$out" | grep -v '^ok' || true
	case $rc in
	0) passes=$((passes + 1)); echo "PART $part: PASS" ;;
	77) skips=$((skips + 1)) # the checker printed why, or the reader is missing
		why=$(echo "$out" | grep -m1 SKIP | sed 's/^SKIP:* *//')
		echo "PART $part: SKIP ${why:-$1 is not installed}" ;;
	*) fail "$1 on $(basename "$2")"; tail -5 "$tmp/err"; echo "PART $part: FAIL $1 on $(basename "$2")" ;;
	esac
}

# simcuda first on the library path; under SAN=asan libgpuphase.so is
# instrumented, so the ASan runtime is preloaded first into the recorded
# program (as tests/e2e/cli_common.sh does), and only there
record() {
	if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
		LD_PRELOAD="$GP_SAN_RUNTIME" ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
			LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$B/bin/gpuphase" record "$@"
	else
		LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$B/bin/gpuphase" record "$@"
	fi
}
# sync_bound_live: recorded now, on simcuda (a missing part is a failure)
for f in "$B/bin/gpuphase" "$B/bin/gpuphase-dump" "$B/examples/sync_bound" "$B/simcuda"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
record -o "$tmp/sync_bound_live.gpht" -- "$B/examples/sync_bound" >"$tmp/record.out" 2>&1 ||
	{ echo "FAIL: gpuphase record of examples/sync_bound on simcuda failed"; tail -5 "$tmp/record.out"; exit 1; }

# nvtx_kinds: every NVTX event kind the trace records (start/end, push/pop,
# marks, a range left open), from tests/e2e/nvtx_kinds.c built here with cc
names="sync_bound graphs analyses multistream sync_bound_live"
inc=${CUDA_HOME:-/usr/local/cuda}/include
if [ -e "$inc/nvtx3/nvToolsExt.h" ] && cc -O1 -I"$inc" -o "$tmp/nvtx_kinds" "$S/tests/e2e/nvtx_kinds.c" \
	-L"$B/simcuda" -lcudart 2>"$tmp/cc.err"; then
	record --nvtx -o "$tmp/nvtx_kinds.gpht" -- "$tmp/nvtx_kinds" >"$tmp/record.out" 2>&1 ||
		{ echo "FAIL: gpuphase record --nvtx of nvtx_kinds failed"; tail -5 "$tmp/record.out"; exit 1; }
	names="$names nvtx_kinds"
else
	echo "PART nvtx_kinds: SKIP no NVTX header in $inc or cc failed: $(head -1 "$tmp/cc.err" 2>/dev/null)"
	skips=$((skips + 1))
fi

# HTA downcasts correlation ids to the smallest integer type and then fails
# to store row indices in it when every id is below 128: traces with more
# calls than that (sync_bound, graphs, analyses, sync_bound_live) are the
# ones it can read.
for name in $names; do
	t=$T/$name.gpht
	case $name in sync_bound_live | nvtx_kinds) t=$tmp/$name.gpht ;; esac
	"$B/bin/gpuphase-dump" "$t" >"$tmp/$name.dump" 2>/dev/null &&
		"$R" --format json "$t" >"$tmp/$name.json" 2>/dev/null &&
		"$R" --export sqlite "$tmp/$name.db" --export chrome-trace "$tmp/$name.ct.json" \
			--export perfetto "$tmp/$name.pftrace" "$t" >/dev/null 2>&1 ||
		{ fail "$name: report/export failed"; echo "PART ${name}_exports: FAIL report/export failed"; continue; }
	echo "--- $name"
	reader "$name" sqlite "$tmp/$name.db" "$tmp/$name.json" "$tmp/$name.ct.json" "$tmp/$name.dump"
	reader "$name" duckdb "$tmp/$name.db" "$tmp/$name.json" "$tmp/$name.ct.json" "$tmp/$name.dump"
	[ "$name" = nvtx_kinds ] && continue # too few calls for HTA; the NVTX rows are the point
	reader "$name" pandas "$tmp/$name.db"
	reader "$name" perfetto "$tmp/$name.pftrace" "$tmp/$name.json"
	[ "$name" != multistream ] && reader "$name" hta "$tmp/$name.ct.json" "$tmp/$name.json"
done

echo "test_export_readers.sh: $passes reader checks passed, $skips skipped, $fails failed"
[ "$fails" = 0 ] || exit 1
[ "$passes" -gt 0 ] || exit 77
