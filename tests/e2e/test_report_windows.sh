#!/usr/bin/env bash
# test_report_windows.sh — capture windows against simcuda's truth
# (docs/metrics.md §6, §7, §15): with GPUPHASE_WINDOW (iterations, repeated
# iterations, a time window, the runtime trigger) and the profiler marker
# (cudaProfilerStart/Stop), every phase over the calls made inside the
# windows, wall = the windows' summed length, GPU idle within it, no
# iteration without ops (report_truth_check.py), and the stages taken over
# the windows only: their times the parts inside the windows, adding up to
# the window wall, what was not captured said apart, each stage's dominant
# operator and its time equal to the truth's, and the warm-up the captured
# part of the run's warm-up (report_windows_check.py). Which calls must be
# in the report, and where the windows may lie, come from simcuda's record
# of CUPTI's switches (the truth's cupti_kind lines, docs/simcuda.md): every
# call made during full collection is required whole (its op, its waits,
# its runtime record), and a window edge outside it is refused.
# Tamper control (each run): the report's windows moved outward by 150 us
# and by 1.5 ms (what an independent review did to the library's marks,
# which the earlier, margin-based rule accepted in 4 of 6 runs) must be
# refused by both checkers, for the window rule's reason; and the same
# shifted report must pass report_truth_check.py with its window refusals
# taken out, so the shift alone is what changes the verdict. The window rule
# has no margin: the windows moved out to the truth's own edges of full
# collection pass, 1 ns beyond them every moved edge is refused. Every
# runtime record CUPTI wrote for a held call must be in host_api_ns (an exact
# sum, up to the optional calls' records): at the held calls' sum it passes,
# 1 ns below it is refused. And call by call (the trace's SQLite export):
# removing one held call's runtime record, another's op, another's wait is
# refused once per row removed.
#   iters     analyses_run, skip=3,iters=10: the window holds the end of the
#             warm-up (warm_k's iterations) and the start of the steady state
#   repeat    analyses_run, skip=2,iters=3,repeat=3: the first window all
#             warm-up, the others steady
#   time      sync_bound, delay=5ms,duration=8ms
#   profiler  report_profiler, GPUPHASE_ITER_MARKER=profiler: three
#             Start..Stop ranges with uncaptured work before and between
#   all       report_realcuda with every real-CUDA behaviour, jitter and an
#             awkward CUPTI, windowed (skip=15,iters=7)
#   trigger   the example server, GPUPHASE_WINDOW=trigger, triggered twice
#             (`gpuphase trigger PID --iters N`) while clients send requests
# Timing-sensitive runs (a loaded host can stall an iteration and move the
# warm-up's end): best of 3 runs (tests/e2e/counting.sh).
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME; KEEP=1
# keeps the files.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for f in "$R" "$B/bin/gpuphase" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/sync_bound" \
	"$B/tests/e2e/analyses_run" "$B/tests/e2e/report_profiler" "$B/examples/server" "$B/examples/server_client"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
tmp=$(mktemp -d /tmp/gp_report_windows.XXXXXX)
srv=""
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	if [ -n "${KEEP:-}" ]; then echo "files kept in $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
preload=$B/lib/libgpuphase.so
asan_opts=${ASAN_OPTIONS:-}
if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload"
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}"
fi
# CUPTI pinned to the kind one (as test_report_e2e.sh): the windows are what
# is tested here, the awkward CUPTI in test_report_cupti_awkward.sh
PIN="SIMCUDA_CUPTI_CLOCK_OFFSET_NS=0 SIMCUDA_CUPTI_CLOCK_DRIFT_PPM=0 SIMCUDA_CUPTI_API_OVERHEAD_NS=0"
PIN="$PIN SIMCUDA_CUPTI_LAUNCH_OVERHEAD_NS=0"

# check NAME [warm=KERNEL]: the reports of $tmp/NAME.gpht against the truth
check() {
	local name=$1
	shift
	"$R" --format json "$tmp/$name.gpht" >"$tmp/$name.json" 2>"$tmp/$name.err" &&
		"$R" "$tmp/$name.gpht" >"$tmp/$name.txt" 2>>"$tmp/$name.err" ||
		{ echo "$name: report failed: $(head -2 "$tmp/$name.err")"; return 1; }
	echo "--- $name"
	python3 "$S/tests/e2e/report_truth_check.py" "$tmp/$name.truth" "$tmp/$name.json" \
		>"$tmp/$name.check" ||
		{ grep MISMATCH "$tmp/$name.check"; return 1; }
	grep '^windows' "$tmp/$name.check"
	"$B/bin/gpuphase" export sqlite "$tmp/$name.sqlite" "$tmp/$name.gpht" >/dev/null 2>>"$tmp/$name.err" ||
		{ echo "$name: export failed: $(tail -1 "$tmp/$name.err")"; return 1; }
	python3 "$S/tests/e2e/report_windows_check.py" "$tmp/$name.truth" "$tmp/$name.json" "$tmp/$name.txt" "$@" \
		export="$tmp/$name.sqlite" || return 1
	tamper "$name" 150000 "$@" && tamper "$name" 1500000 "$@" && edge "$name" && dropped "$name" && gone "$name"
}

# tamper NAME SHIFT_NS [warm=KERNEL]: NAME's report with every window moved
# outward by SHIFT_NS (wall_ns kept their sum) is refused by both checkers
# because a window edge lies outside CUPTI's full collection, and passes
# report_truth_check.py with those refusals taken out (the control of the
# control: nothing else in the shifted report is wrong)
tamper() {
	local name=$1 sh=$2 f=$tmp/$1.shift$2
	shift 2
	python3 - "$tmp/$name.json" "$f.json" "$sh" <<'PY' || { echo "$name: cannot shift the windows"; return 1; }
import json, sys
r = json.load(open(sys.argv[1]))
sh = int(sys.argv[3])
s = r["summary"]
for w in s["windows"]:
    w["start_ns"] -= sh
    w["stop_ns"] += sh
    w["wall_ns"] = w["stop_ns"] - w["start_ns"]
s["wall_ns"] = sum(w["wall_ns"] for w in s["windows"])
json.dump(r, open(sys.argv[2], "w"))
PY
	if python3 "$S/tests/e2e/report_truth_check.py" "$tmp/$name.truth" "$f.json" \
		>"$f.check"; then
		echo "$name: windows shifted outward by $sh ns accepted by report_truth_check.py"
		return 1
	fi
	grep -q "outside CUPTI's full collection" "$f.check" ||
		{ echo "$name: shift $sh ns refused, but not by the window rule: $(grep -m1 MISMATCH "$f.check")"; return 1; }
	if python3 "$S/tests/e2e/report_windows_check.py" "$tmp/$name.truth" "$f.json" "$tmp/$name.txt" "$@" \
		>"$f.wcheck"; then
		echo "$name: windows shifted outward by $sh ns accepted by report_windows_check.py"
		return 1
	fi
	grep -q "outside CUPTI's full collection" "$f.wcheck" ||
		{ echo "$name: shift $sh ns refused by report_windows_check.py, not by the window rule"; return 1; }
	python3 - "$S/tests/e2e" "$tmp/$name.truth" "$f.json" >"$f.off" 2>&1 <<'PY' ||
import sys
sys.path.insert(0, sys.argv[1])
import report_truth_check as r
rules = r.capture_rules
r.capture_rules = lambda truth, wins: rules(truth, wins)[:2] + ([],)  # the window refusals taken out
sys.argv = ["report_truth_check.py"] + sys.argv[2:]
sys.exit(r.main())
PY
		{ echo "$name: control: shift $sh ns refused even without the window rule: $(grep -m1 MISMATCH "$f.off")"
		  return 1; }
	echo "$name: windows shifted outward by $sh ns: refused ($(grep -c "outside CUPTI's full collection" "$f.check")" \
		"window edges), accepted without the window rule"
}

# edge NAME: the control just beyond the window rule, which has no margin:
# each window moved outward to the truth's own edges of full collection
# (the last kind on, the first off, from its cupti_kind lines) still
# passes report_truth_check.py; 1 ns further, every moved edge is refused
edge() {
	local name=$1 f=$tmp/$1.edge
	python3 - "$S/tests/e2e" "$tmp/$name.truth" "$tmp/$name.json" "$f" <<'PY' || { echo "$name: cannot move the edges"; return 1; }
import json, sys
sys.path.insert(0, sys.argv[1])
import report_truth_check as r
truth = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
full = r.full_collection(truth)[0]
for beyond in (0, 1):
    rep = json.load(open(sys.argv[3]))
    s, moved = rep["summary"], 0
    for w in s["windows"]:
        a, b = next((a, b) for a, b in full if a <= w["start_ns"] <= b)
        w["start_ns"], moved = a - beyond, moved + 1
        if b != float("inf"):
            w["stop_ns"], moved = int(b) + beyond, moved + 1
        w["wall_ns"] = w["stop_ns"] - w["start_ns"]
    s["wall_ns"] = sum(w["wall_ns"] for w in s["windows"])
    json.dump(rep, open(f"{sys.argv[4]}{beyond}.json", "w"))
open(f"{sys.argv[4]}.moved", "w").write(f"{moved}\n")
PY
	python3 "$S/tests/e2e/report_truth_check.py" "$tmp/$name.truth" "${f}0.json" \
		>"${f}0.check" ||
		{ echo "$name: windows moved to the truth's edges of full collection refused: $(grep -m1 MISMATCH "${f}0.check")"
		  return 1; }
	python3 "$S/tests/e2e/report_truth_check.py" "$tmp/$name.truth" "${f}1.json" \
		>"${f}1.check"
	local n
	n=$(grep -c "outside CUPTI's full collection" "${f}1.check")
	[ "$n" = "$(cat "$f.moved")" ] ||
		{ echo "$name: edges moved 1 ns beyond full collection: $n of $(cat "$f.moved") refused"; return 1; }
	echo "$name: window edges at the truth's full collection accepted, 1 ns beyond refused ($n edges)"
}

# dropped NAME: host_api_ns may lie anywhere from the held calls' runtime
# records to those plus the optional calls' (whose records CUPTI may or may
# not have written); the control just below that range, as if one held
# call's record were lost beyond what the optional calls can hide, is
# refused, and the range's own floor is accepted
dropped() {
	local name=$1 f=$tmp/$1.dropped
	python3 - "$S/tests/e2e" "$tmp/$name.truth" "$tmp/$name.json" "$f" >/dev/null <<'PY' ||
import json, sys
sys.path.insert(0, sys.argv[1])
import report_truth_check as r
truth = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
rep = json.load(open(sys.argv[3]))
held = r.capture_rules(truth, [(w["start_ns"], w["stop_ns"]) for w in rep["summary"]["windows"]])[0]
lo = sum(t["end"] - t["start"] for t in truth if t["type"] == "api" and t.get("cupti_write_rt") and held(t))
for below in (0, 1):
    rep["summary"]["host_api_ns"] = lo - below
    json.dump(rep, open(f"{sys.argv[4]}{below}.json", "w"))
PY
		{ echo "$name: cannot drop a record"; return 1; }
	python3 "$S/tests/e2e/report_truth_check.py" "$tmp/$name.truth" "${f}0.json" \
		>"${f}0.check" || { echo "$name: host_api_ns at the held calls' records refused"; return 1; }
	if python3 "$S/tests/e2e/report_truth_check.py" "$tmp/$name.truth" "${f}1.json" \
		>"${f}1.check" || ! grep -q "API record is missing" "${f}1.check"; then
		echo "$name: host_api_ns 1 ns below the held calls' records: not refused for it"
		return 1
	fi
	echo "$name: host_api_ns at the held calls' runtime records accepted, 1 ns below refused"
}

# gone NAME: the export less one held call's runtime record, less another's
# op, less another's wait (each where the run has one) is refused, once per
# row removed
gone() {
	local name=$1 f=$tmp/$1.gone
	cp "$tmp/$name.sqlite" "$f.sqlite"
	local n
	n=$(python3 - "$S/tests/e2e" "$tmp/$name.truth" "$tmp/$name.json" "$f.sqlite" <<'PY'
import contextlib, io, json, sqlite3, sys
sys.path.insert(0, sys.argv[1])
import report_truth_check as r
truth = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
rep = json.load(open(sys.argv[3]))
with contextlib.redirect_stdout(io.StringIO()):
    held = r.capture_rules(truth, [(w["start_ns"], w["stop_ns"]) for w in rep["summary"]["windows"]])[0]
calls = [t for t in truth if t["type"] == "api" and held(t)]
ops = {t["api_corr"] for t in truth if t["type"] == "kernel"}
waits = {t["api_corr"] for t in truth if t["type"] == "sync" and t["waited_corr"]}
db, used, n = sqlite3.connect(sys.argv[4]), set(), 0
for table, pick in (("CUPTI_ACTIVITY_KIND_RUNTIME", lambda t: t.get("cupti_write_rt") and t["corr"] not in ops),
                    ("GPUPHASE_OPS", lambda t: t["corr"] in ops), ("GPUPHASE_SYNCS", lambda t: t["corr"] in waits)):
    c = next((t["corr"] for t in calls if pick(t) and t["corr"] not in used), None)
    if c is not None:
        used.add(c)
        n += db.execute(f"DELETE FROM {table} WHERE correlationId = ?", (c,)).rowcount > 0
db.commit()
print(n)
PY
) || { echo "$name: cannot remove rows"; return 1; }
	python3 "$S/tests/e2e/report_windows_check.py" "$tmp/$name.truth" "$tmp/$name.json" "$tmp/$name.txt" \
		export="$f.sqlite" >"$f.check"
	local got
	got=$(grep -c "held call incomplete in the export" "$f.check")
	[ "$n" -ge 1 ] && [ "$got" = "$n" ] ||
		{ echo "$name: $n rows of held calls removed from the export, $got refused"; return 1; }
	echo "$name: $n rows of held calls removed from the export: each refused"
}

# run NAME PROGRAM MODEL ENV... -- CHECK-ARGS...
run() {
	local name=$1 prog=$2 model=$3
	shift 3
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	rm -f "$tmp/$name".*
	# shellcheck disable=SC2086 # PIN is a list of words
	(cd "$tmp" && env $PIN "${envs[@]}" ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" \
		LD_LIBRARY_PATH="$B/simcuda" SIMCUDA_CONFIG="$model" SIMCUDA_TRUTH="$tmp/$name.truth" \
		GPUPHASE_OUTPUT="$tmp/$name.gpht" "$prog" >"$tmp/$name.out" 2>&1) ||
		{ echo "$name: program failed: $(tail -2 "$tmp/$name.out")"; return 1; }
	check "$name" "$@"
}

# retry NAME COMMAND...: best of 3 runs (tests/e2e/counting.sh)
. "$S/tests/e2e/counting.sh"
retry() {
	local name=$1
	shift
	gp_majority "$name" "$@" ||
		fail "$name: the report disagrees with the truth over the capture windows in a majority of 3 runs"
}

AR=$B/tests/e2e/analyses_run
ARM=$S/tests/e2e/analyses_run.simcuda
retry iters run iters "$AR" "$ARM" GPUPHASE_WINDOW=skip=3,iters=10 -- warm=warm_k
retry repeat run repeat "$AR" "$ARM" GPUPHASE_WINDOW=skip=2,iters=3,repeat=3 -- warm=warm_k
retry time run time "$B/examples/sync_bound" "$S/examples/sync_bound.simcuda" GPUPHASE_WINDOW=delay=5ms,duration=8ms --
retry profiler run profiler "$B/tests/e2e/report_profiler" "$S/tests/e2e/report_profiler.simcuda" \
	GPUPHASE_ITER_MARKER=profiler --
# everything at once: the real-CUDA behaviours of report_realcuda (pageable
# copies, implicit syncs, a full launch queue), jitter, CUPTI as awkward as
# the real one (records late and interleaved, its clock off the host's by
# 3 us and 2 ppm, corrected by the check from the truth), in a window over the end of its first loop, its
# second and its GPU-bound third
retry all run all "$B/tests/e2e/report_realcuda" "$S/tests/e2e/report_realcuda.simcuda" \
	SIMCUDA_CUPTI_DELIVERY_DELAY_NS=300000000 SIMCUDA_CUPTI_CLOCK_OFFSET_NS=3000 SIMCUDA_CUPTI_CLOCK_DRIFT_PPM=2 \
	SIMCUDA_EXEC_JITTER_PCT=10 SIMCUDA_SEED=7 GPUPHASE_STACKS=sync GPUPHASE_WINDOW=skip=15,iters=7 --

# trigger: the server, triggered twice while clients send requests
trigger() {
	local name=trigger sock=$tmp/srv.sock ctl=$tmp/ctl pid=""
	rm -f "$tmp/$name".* "$sock"
	# shellcheck disable=SC2086 # PIN is a list of words
	env $PIN ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" LD_LIBRARY_PATH="$B/simcuda" \
		SIMCUDA_CONFIG="$S/examples/server/server.simcuda" SIMCUDA_TRUTH="$tmp/$name.truth" \
		GPUPHASE_OUTPUT="$tmp/$name.gpht" GPUPHASE_WINDOW=trigger GPUPHASE_CONTROL_DIR="$ctl" \
		"$B/examples/server" "$sock" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	srv=$!
	for _ in $(seq 1 600); do
		pid=$(sed -n 's/^server: pid \([0-9]*\) listening.*/\1/p' "$tmp/$name.err")
		[ -n "$pid" ] && break
		kill -0 "$srv" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$pid" ] || { echo "trigger: server did not start: $(tail -2 "$tmp/$name.err")"; return 1; }
	"$B/examples/server_client" "$sock" -n 10 >/dev/null 2>&1 || { echo "trigger: client failed"; return 1; }
	local ok=0
	for _ in $(seq 1 200); do # the library opens its socket on its own thread
		"$B/bin/gpuphase" trigger "$pid" --iters 20 >/dev/null 2>&1 && { ok=1; break; }
		sleep 0.05
	done
	[ "$ok" = 1 ] || { echo "trigger: gpuphase trigger failed"; return 1; }
	"$B/examples/server_client" "$sock" -n 30 >/dev/null 2>&1 &&
		"$B/bin/gpuphase" trigger "$pid" --iters 15 >/dev/null 2>&1 &&
		"$B/examples/server_client" "$sock" -n 25 >/dev/null 2>&1 &&
		"$B/examples/server_client" "$sock" -n 0 --quit >/dev/null 2>&1 ||
		{ echo "trigger: clients or the second trigger failed"; return 1; }
	wait "$srv" || { echo "trigger: server failed: $(tail -2 "$tmp/$name.err")"; srv=""; return 1; }
	srv=""
	check "$name" || return 1
	python3 - "$tmp/$name.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
n, it = len(s.get("windows", [])), len(json.load(open(sys.argv[1]))["iterations"]["items"])
print(f"trigger: {n} windows, {it} iterations listed")
sys.exit(0 if n == 2 and it <= 35 else 1)
PY
}
retry trigger trigger

[ "$fails" = 0 ] && echo "test_report_windows.sh: all checks passed"
[ "$fails" = 0 ]
