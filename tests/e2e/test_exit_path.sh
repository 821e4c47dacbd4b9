#!/usr/bin/env bash
# test_exit_path.sh — a process that ends with _exit or _Exit loses nothing:
# the library interposes both (libgpuphase/exitpath.c) and finishes the
# trace as exit() does — window closed, GPU work synchronized, CUPTI
# flushed, footer written — then the real one ends the process with the
# same status. On simcuda, tests/e2e/exit_path.cu:
#   leave     `exit_path leave HOW 40` for HOW = _exit, _Exit and exit
#             (control): 40 launches and 40 async copies still queued when
#             it leaves with status 3. Exit status, stdout and stderr (less
#             gpuphase: lines) equal the bare run's; the trace has its
#             footer, the report exits 0, and every launch and copy has
#             its GPU record (count 40, none without one, the kernels'
#             execute time 40 x 200 us)
#   truth     `leave _exit 40 reset`: a synchronize and a cudaDeviceReset
#             (where simcuda writes its truth out: at _exit it never does)
#             before _exit(3); the report equals simcuda's truth
#             (report_truth_check.py). The truth file's last line may be cut:
#             simcuda's buffer fills with the exit path's own CUPTI switches
#             after the reset and is written out in part; whole lines are
#             kept, and they must hold the reset and the 40 kernels
#   fork      the multiprocessing pattern in C: a parent that never uses
#             CUDA forks a child that launches and leaves with _exit(3);
#             the child's own trace (its pid) is whole, as in "leave"; none
#             for the parent
#   python    the same through Python: multiprocessing's fork context runs
#             a target that copies through ctypes (pyframes/cslib.c); the
#             worker leaves with os._exit as multiprocessing's workers do.
#             Its trace is whole with its 30 copies; the parent has none.
#             Skipped, said, without python3
#   vfork     a capturing parent whose vfork child calls _exit(5) at once
#             (an exec that failed): the child touches nothing (it runs in
#             the parent's memory, under its own pid), the parent goes on
#             capturing; its trace is whole and equals its truth
#   thread    N pairs, then a thread that never made a CUDA call (no ring)
#             calls _exit(3): status and output as bare, no hang, and the
#             library's finish passed by (making that thread a ring could
#             allocate on top of a malloc a handler interrupted): the trace
#             is kept as a crash leaves it (the report exits 3: no footer)
#   handler   `exit_path alarm US` 60 times, US random in 2..42 ms: a
#             SIGALRM handler calls _exit(4) on top of whichever CUDA call
#             it interrupted (maybe under CUDA's, CUPTI's, malloc's or the
#             library's own locks): the exit path is exit()'s from a handler
#             (test_exit_in_call.sh), so each run ends with 4 within the
#             30 s kill and leaves a footer the report reads (60 runs:
#             EXIT_PATH_ALARMS; the hang test is test_exit_in_call's 600)
# Tamper controls: with a build whose libgpuphase.so does not interpose
# _exit (GP_BUILD pointing at a copy with main's library) "leave" (_exit,
# _Exit), "truth", "fork", "python" and "handler" fail: no footer, the report exits 3
# and says the trace was cut off. The control "exit" and "vfork" pass there;
# "vfork" fails with a library that finishes in a vfork child (the pid check
# of lib.c gp_lib_exit_finish taken out): the child's _exit ends the
# parent's capture, its later 40 launches go unrecorded (count 40 of 80).
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME; KEEP=1
# keeps the files.
set -u
tmp_name=gp_exit_path # B S R CHECK fail tmp preload asan_opts:
# shellcheck source=tests/e2e/report_common.sh
. "${GP_SRC:?GP_SRC not set}/tests/e2e/report_common.sh"
# shellcheck source=tests/e2e/counting.sh
. "$S/tests/e2e/counting.sh"
D=$B/bin/gpuphase-dump
P=$B/tests/e2e/exit_path
for f in "$R" "$D" "$P" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
N=40

# run NAME bare|pre CMD...: CMD in $tmp/NAME/ (bare: without the library),
# stdout/stderr into NAME.out/.err, its exit status into NAME.rc, a kill
# after 30 s (a hang at exit is a failure)
run() {
	local name=$1 mode=$2
	shift 2
	mkdir -p "$tmp/$name"
	local pre=() truth=()
	# the bare run of an ASan build: its simcuda is instrumented, so the
	# uninstrumented program needs the runtime first, as under the library
	[ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ] &&
		pre=(ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$GP_SAN_RUNTIME")
	if [ "$mode" = pre ]; then
		pre=(ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" GPUPHASE_OUTPUT="$tmp/$name/t-%p.gpht")
		truth=(SIMCUDA_TRUTH="$tmp/$name/t-%p.truth")
	fi
	(cd "$tmp/$name" && env "${pre[@]}" "${truth[@]}" LD_LIBRARY_PATH="$B/simcuda" \
		SIMCUDA_CONFIG="$S/tests/e2e/exit_path.simcuda" timeout -s KILL 30 "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err")
	echo $? >"$tmp/$name.rc"
}

# same A B WHAT: exit status, stdout and stderr (less gpuphase: lines) alike
same() {
	local a=$1 b=$2
	[ "$(cat "$tmp/$a.rc")" = "$(cat "$tmp/$b.rc")" ] ||
		fail "$3: exit status $(cat "$tmp/$b.rc") profiled, $(cat "$tmp/$a.rc") bare"
	cmp -s "$tmp/$a.out" "$tmp/$b.out" || fail "$3: stdout differs from the bare run's"
	cmp -s <(grep -v '^gpuphase:' "$tmp/$a.err") <(grep -v '^gpuphase:' "$tmp/$b.err") ||
		fail "$3: stderr differs from the bare run's: $(head -3 "$tmp/$b.err")"
}

# whole WHAT TRACE KERNELS COPIES COPYNAME: the trace ends with its footer,
# the report exits 0 (no "cut off"), and the report's kernel and copy
# operators have their counts with a GPU record each (no_gpu 0) and, for
# the kernels, 200 us of execute time each; the report into TRACE.json
whole() {
	local what=$1 tr=$2 k=$3 c=$4 cname=$5
	[ -e "$tr" ] || { fail "$what: no trace $tr"; return 1; }
	"$D" "$tr" >"$tr.dump" 2>&1 || { fail "$what: the trace does not read back: $(tail -2 "$tr.dump")"; return 1; }
	grep -q '^# end complete=1' "$tr.dump" || fail "$what: no footer (the trace was not finished)"
	"$R" --format json "$tr" >"$tr.json" 2>"$tr.err"
	local rc=$?
	[ "$rc" = 0 ] || { fail "$what: the report exits $rc: $(head -c 300 "$tr.err")"; return 1; }
	if ! python3 - "$tr.json" "$k" "$c" "$cname" <<'PY'
import json, sys
ops = {o["name"]: o for o in json.load(open(sys.argv[1]))["operators"]}
k, c, cname = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
want = ([("ep_kernel", k)] if k else []) + [(cname, c)]
ok = len(ops) == len(want)
for name, n in want:
    o = ops.get(name, {})
    print("%s: count %s, without a GPU record %s, execute %s ns" % (name, o.get("count"), o.get("no_gpu"), o.get("execute_ns")))
    ok = ok and o.get("count") == n and o.get("no_gpu") == 0 and o.get("no_api") == 0
    if name == "ep_kernel":
        ok = ok and n * 200000 <= o.get("execute_ns", 0) <= n * 200000 + n * 100
sys.exit(0 if ok else 1)
PY
	then
		fail "$what: the report's ops are not all there with their GPU records"
		return 1
	fi
}

# the one trace NAME's run left, or nothing
trace_of() { ls "$tmp/$1"/t-*.gpht 2>/dev/null | head -1; }

# --- leave: _exit, _Exit and exit() with work queued ---------------------------
gp_part_begin leave
for how in _exit _Exit exit; do
	run "bare$how" bare "$P" leave "$how" $N
	run "pre$how" pre "$P" leave "$how" $N
	[ "$(cat "$tmp/bare$how.rc")" = 3 ] || fail "leave $how: the bare run exits $(cat "$tmp/bare$how.rc"), not 3"
	same "bare$how" "pre$how" "leave $how"
	whole "leave $how" "$(trace_of "pre$how")" $N $N "memcpy DtoH" && echo "leave $how: exit 3, trace whole, $N launches and $N copies with their GPU records"
done
gp_part_end

# --- truth: the report against simcuda's truth ---------------------------------
gp_part_begin truth
run truth pre "$P" leave _exit $N reset
[ "$(cat "$tmp/truth.rc")" = 3 ] || fail "truth: exit status $(cat "$tmp/truth.rc"), not 3"
tr=$(trace_of truth)
if whole truth "$tr" $N $N "memcpy DtoH"; then
	# whole lines only: a last line cut by simcuda's own buffer at _exit goes
	python3 - "${tr%.gpht}.truth" "$tmp/truth.whole" $N <<'PY' || fail "truth: simcuda's truth is not whole up to the reset"
import json, sys
lines = open(sys.argv[1]).read().split("\n")
keep = []
for i, l in enumerate(lines):
    if not l:
        continue
    try:
        keep.append(json.loads(l))
    except ValueError:
        if i != len(lines) - 1:
            sys.exit("a line cut before the last: %d" % (i + 1))
open(sys.argv[2], "w").write("".join(json.dumps(r) + "\n" for r in keep))
kernels = sum(1 for r in keep if r.get("type") == "kernel")
reset = any(r.get("type") == "api" and r.get("name") == "cudaDeviceReset" for r in keep)
print("truth: %d whole lines, %d kernels, reset %s" % (len(keep), kernels, reset))
sys.exit(0 if reset and kernels == int(sys.argv[3]) else 1)
PY
	if $CHECK "$tmp/truth.whole" "$tr.json" >"$tmp/truth.check" 2>&1; then
		echo "truth: the report of a run that ended with _exit equals its truth"
	else
		fail "truth: the report disagrees with simcuda's truth: $(grep -m3 MISMATCH "$tmp/truth.check")"
	fi
fi
gp_part_end

# --- fork: a fresh child that leaves with _exit --------------------------------
gp_part_begin fork
run forkbare bare "$P" fork $N
run fork pre "$P" fork $N
[ "$(cat "$tmp/fork.rc")" = 0 ] || fail "fork: exit status $(cat "$tmp/fork.rc"): $(cat "$tmp/fork.out")"
child=$(sed -n 's/^exit_path: child \([0-9]*\)$/\1/p' "$tmp/fork.out")
traces=$(cd "$tmp/fork" && ls t-*.gpht 2>/dev/null | tr '\n' ' ')
[ "$traces" = "t-$child.gpht " ] || fail "fork: traces '$traces', expected the child's only (t-$child.gpht)"
whole fork "$tmp/fork/t-$child.gpht" $N $N "memcpy DtoH" && echo "fork: the child's trace is whole"
gp_part_end

# --- python: multiprocessing's fork workers leave with os._exit ------------------
gp_part_begin python
why=""
if ! command -v python3 >/dev/null; then why="no python3"
elif ! cc -shared -fPIC -O1 -I"${CUDA_HOME:-/usr/local/cuda}/include" "$S/tests/e2e/pyframes/cslib.c" \
	-o "$tmp/libcslib.so" -L"$B/simcuda" -lcudart 2>"$tmp/cslib.err"; then
	why="cannot build the ctypes library: $(head -1 "$tmp/cslib.err")"
else
	cat >"$tmp/mp.py" <<'PY'
import ctypes, multiprocessing, os, sys
def work(lib, n):  # in the worker: ctypes into a library linked to cudart
    cs = ctypes.CDLL(lib)
    cs.cs_setup()
    for _ in range(n):
        cs.cs_copy()
    print("worker", os.getpid(), flush=True)
if __name__ == "__main__":
    p = multiprocessing.get_context("fork").Process(target=work, args=(sys.argv[1], int(sys.argv[2])))
    p.start()
    p.join()
    sys.exit(0 if p.exitcode == 0 else 1)
PY
	run py pre python3 "$tmp/mp.py" "$tmp/libcslib.so" 30
	[ "$(cat "$tmp/py.rc")" = 0 ] || fail "python: exit status $(cat "$tmp/py.rc"): $(tail -3 "$tmp/py.err")"
	worker=$(sed -n 's/^worker \([0-9]*\)$/\1/p' "$tmp/py.out")
	traces=$(cd "$tmp/py" && ls t-*.gpht 2>/dev/null | tr '\n' ' ')
	[ "$traces" = "t-$worker.gpht " ] || fail "python: traces '$traces', expected the worker's only (t-$worker.gpht)"
	whole python "$tmp/py/t-$worker.gpht" 0 30 "memcpy HtoD" && echo "python: the multiprocessing worker's trace is whole"
fi
gp_part_end "$why"

# --- vfork: the child's _exit touches nothing ------------------------------------
gp_part_begin vfork
run vforkbare bare "$P" vfork $N
run vfork pre "$P" vfork $N
same vforkbare vfork vfork
grep -q '^exit_path: child exited 5$' "$tmp/vfork.out" || fail "vfork: the child did not exit 5: $(cat "$tmp/vfork.out")"
tr=$(trace_of vfork)
if whole vfork "$tr" $((2 * N)) $((2 * N)) "memcpy DtoH"; then
	if $CHECK "${tr%.gpht}.truth" "$tr.json" >"$tmp/vfork.check" 2>&1; then
		echo "vfork: the parent's trace is whole and equals its truth"
	else
		fail "vfork: the parent's report disagrees with its truth: $(grep -m3 MISMATCH "$tmp/vfork.check")"
	fi
fi
gp_part_end

# --- thread: _exit from a thread with no ring passes the finish by ---------------
gp_part_begin thread
run threadbare bare "$P" thread $N
run thread pre "$P" thread $N
[ "$(cat "$tmp/threadbare.rc")" = 3 ] || fail "thread: the bare run exits $(cat "$tmp/threadbare.rc"), not 3"
same threadbare thread thread
tr=$(trace_of thread)
if [ -z "$tr" ]; then
	fail "thread: no trace"
else
	"$R" "$tr" >"$tmp/thread.report" 2>&1
	rc=$?
	if [ "$rc" = 3 ] && grep -q 'no footer' "$tmp/thread.report"; then
		echo "thread: exit 3 as bare; the finish passed by, the trace kept as a crash leaves it (report exit 3)"
	else
		fail "thread: the report exits $rc (3 and 'no footer' expected: a ring-less thread's _exit passes the finish by): $(head -3 "$tmp/thread.report")"
	fi
fi
gp_part_end

# --- handler: _exit from a signal handler on top of a CUDA call ------------------
gp_part_begin handler
hung=0 bad=0 cut=0
for i in $(seq 1 "${EXIT_PATH_ALARMS:-60}"); do
	us=$((RANDOM % 40000 + 2000))
	rm -rf "$tmp/alarm"
	run alarm pre "$P" alarm $us
	rc=$(cat "$tmp/alarm.rc")
	tr=$(trace_of alarm)
	if [ "$rc" = 137 ]; then hung=$((hung + 1)); echo "run $i (alarm after $us us): hung, killed after 30 s"
	elif [ "$rc" != 4 ]; then bad=$((bad + 1)); echo "run $i (alarm after $us us): exit $rc: $(tail -2 "$tmp/alarm.err")"
	elif [ -z "$tr" ] || ! "$D" "$tr" 2>/dev/null | grep -q '^# end complete=1' || ! "$R" "$tr" >/dev/null 2>&1; then
		cut=$((cut + 1)); echo "run $i (alarm after $us us): the trace is not finished or does not report"
	fi
done
if [ $hung = 0 ] && [ $bad = 0 ] && [ $cut = 0 ]; then
	echo "handler: ${EXIT_PATH_ALARMS:-60} runs, each ended by _exit(4) from its handler with a finished trace"
else
	fail "handler: of ${EXIT_PATH_ALARMS:-60} runs $hung hung, $bad exited otherwise than 4, $cut left no finished trace"
fi
gp_part_end

[ "$fails" = 0 ] && exit 0
echo "$fails failure(s)"
exit 1
