#!/usr/bin/env bash
# test_report_host_callback.sh — a wait for a host callback is a wait for
# that callback (docs/metrics.md §3, host callbacks). The program
# (tests/e2e/host_callback.cu, simpleCallback-like) copies asynchronously
# on a stream, enqueues a host function that sleeps (cudaLaunchHostFunc),
# then waits in cudaHostAlloc; then a cudaStreamAddCallback and a
# cudaDeviceSynchronize. Five runs on simcuda, each:
#  * the program checks each callback ran once with its own argument (and
#    the stream callback its stream and cudaSuccess);
#  * the trace holds one GP_REC_HOST_CALLBACK per callback run (the truth's
#    hostfn lines);
#  * the truth's waits for a host function (waited_corr naming one) are
#    charged to the "host callback FUNCTION" operators: all of each wait
#    from the callback's start on (less 1 %), and the copies before them at
#    most the part of the wait before the callback began (see charged());
#  * report_truth_check.py holds every operator's phases to the truth, the
#    callbacks' runs among them (HOSTFN_NAMES: the program's functions);
#    a run's execute at least the program's own clock reads of it (HC_RUNS,
#    HOSTFN_RUNS): the truth's interval also holds the profiler's trampoline
#    around the function, and a callback thread the host held off the CPU
#    after the trampoline's last clock read (162 us once) is in the truth
#    and in no record.
# Tamper control: the first run's trace without its host callback records
# (the trace of a library that does not record them, trace_reorder
# --drop-host-callbacks) must fail both checks: its waits go to the copy;
# and the first run's report with cb_stream's execute at the least the
# program's own runs of it allow (one tolerance below them) must pass, 2 ns
# lower be refused on that alone.
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME; KEEP=1
# keeps the files; RUNS (default 5).
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
RUNS=${RUNS:-5}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for f in "$R" "$B/bin/gpuphase-dump" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" \
	"$B/tests/e2e/host_callback" "$B/tests/e2e/trace_reorder"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
# the report names a callback from the program's symbol table through
# libdw (report/core/symbolize.c); without it every callback is "host
# callback" and the names cannot be checked
if ! ldconfig -p 2>/dev/null | grep -q 'libdw\.so\.1 '; then
	echo "SKIP: libdw.so.1 is not installed: the report cannot name the callbacks' functions"
	exit 77
fi
tmp=$(mktemp -d /tmp/gp_host_callback.XXXXXX)
if [ -n "${KEEP:-}" ]; then echo "files kept in $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
preload=$B/lib/libgpuphase.so
asan_opts=${ASAN_OPTIONS:-}
if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload"
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}"
fi
export HOSTFN_NAMES=cudaLaunchHostFunc=cb_slow,cudaStreamAddCallback=cb_stream

# charged TRUTH JSON: the waits for host functions (the truth's sync lines
# whose waited_corr is a hostfn's), split as docs/metrics.md §3 says: from
# the callback's start to the wait's end the host waited for the callback
# alone (everything before it on its stream had ended), so the callbacks
# hold at least that, less 1 %; what ran before the callback (the copies)
# can hold only the part of the wait before the callback began, plus the
# clock tolerance (10 us) a wait. Exit 1 otherwise.
charged() {
	python3 - "$1" "$2" <<'PY'
import json, sys
truth = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
report = json.load(open(sys.argv[2]))
fns = {t["corr"]: t for t in truth if t["type"] == "hostfn"}
waits = [t for t in truth if t["type"] == "sync" and t["waited_corr"] in fns]
# an implicit synchronization's wait ends when what it waited for ended
# (metrics.md §3): the rest of the call is its own work, not the wait
IMPLICIT = ("free", "free_host", "host_alloc")  # simcuda's kinds (report_truth_check.py)
end = lambda w: min(w["end"], fns[w["waited_corr"]]["end"]) if w["kind"] in IMPLICIT else w["end"]
alone = sum(end(w) - max(w["start"], fns[w["waited_corr"]]["start"]) for w in waits)
before = sum(max(0, fns[w["waited_corr"]]["start"] - w["start"]) + 10000 for w in waits)
ops = {o["name"]: o for o in report["operators"]}
cb = sum(o["sync_ns"] for n, o in ops.items() if n.startswith("host callback "))
cp = sum(o["sync_ns"] for n, o in ops.items() if n.startswith("memcpy"))
print(f"{len(waits)} waits for host functions in the truth, {alone} ns of them with only the callback running: "
      f"the report charges the callbacks {cb} ns (at least {0.99 * alone:.0f}), the copies {cp} ns (at most "
      f"{before})")
sys.exit(0 if waits and cb >= 0.99 * alone and cp <= before else 1)
PY
}

for i in $(seq 1 "$RUNS"); do
	rm -f "$tmp/r$i".*
	(cd "$tmp" && env ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" LD_LIBRARY_PATH="$B/simcuda" \
		SIMCUDA_CONFIG="$S/tests/e2e/host_callback.simcuda" SIMCUDA_TRUTH="$tmp/r$i.truth" \
		GPUPHASE_OUTPUT="$tmp/r$i.gpht" HC_RUNS="$tmp/r$i.runs" "$B/tests/e2e/host_callback" >"$tmp/r$i.out" 2>&1) ||
		{ fail "run $i: the program failed: $(tail -2 "$tmp/r$i.out")"; continue; }
	runs=$(grep -c '"type":"hostfn"' "$tmp/r$i.truth")
	recs=$("$B/bin/gpuphase-dump" "$tmp/r$i.gpht" | grep -c '^host_callback ')
	[ "$runs" -gt 0 ] && [ "$runs" = "$recs" ] ||
		fail "run $i: $recs host callback records in the trace, $runs host function runs in the truth"
	"$R" --format json "$tmp/r$i.gpht" >"$tmp/r$i.json" 2>"$tmp/r$i.err" ||
		{ fail "run $i: report failed: $(head -2 "$tmp/r$i.err")"; continue; }
	charged "$tmp/r$i.truth" "$tmp/r$i.json" || fail "run $i: the waits for host functions are not the callbacks'"
	HOSTFN_RUNS="$tmp/r$i.runs" python3 "$S/tests/e2e/report_truth_check.py" "$tmp/r$i.truth" "$tmp/r$i.json" \
		>"$tmp/r$i.check" 2>&1 ||
		fail "run $i: report_truth_check: $(grep -m3 MISMATCH "$tmp/r$i.check")"
	echo "run $i: $recs host callbacks recorded; $(grep -m1 'host callback cb_slow' "$tmp/r$i.check")"
done

# tamper control: without the callback records, the waits go to the copy
if [ -e "$tmp/r1.gpht" ]; then
	"$B/tests/e2e/trace_reorder" --drop-host-callbacks "$tmp/r1.gpht" "$tmp/old.gpht" >/dev/null &&
		"$R" --format json "$tmp/old.gpht" >"$tmp/old.json" 2>/dev/null ||
		fail "tamper: could not make the trace without callback records"
	if charged "$tmp/r1.truth" "$tmp/old.json" >"$tmp/old.charged"; then
		fail "tamper: the split check accepted a trace without callback records"
	else
		echo "tamper: without callback records: $(cat "$tmp/old.charged"): refused"
	fi
	if python3 "$S/tests/e2e/report_truth_check.py" --no-tamper "$tmp/r1.truth" "$tmp/old.json" >"$tmp/old.check" 2>&1; then
		fail "tamper: report_truth_check accepted a trace without callback records"
	else
		echo "tamper: report_truth_check without callback records: $(grep -m1 'MISMATCH memcpy' "$tmp/old.check"): refused"
	fi
fi
# tamper control of the runs' allowance: cb_stream's execute at the least
# the check accepts (the program's own runs of it, less one tolerance) is
# accepted, 2 ns below it refused, on that mismatch alone
if [ -e "$tmp/r1.json" ] && [ -s "$tmp/r1.runs" ]; then
	for c in edge:1 past:-2; do
		python3 - "$S/tests/e2e" "$tmp/r1.truth" "$tmp/r1.runs" "$tmp/r1.json" "$tmp/${c%%:*}.json" "${c#*:}" <<'PY'
import json, math, sys
sys.path.insert(0, sys.argv[1])
from report_truth_check import REL, ABS_NS
truth = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
runs = [json.loads(l) for l in open(sys.argv[3]) if l.strip()]
fns = [t for t in truth if t["type"] == "hostfn" and t["call"].startswith("cudaStreamAddCallback")]
own = sum(r["end"] - r["start"] for r in runs if any(t["start"] <= r["start"] <= r["end"] <= t["end"] for t in fns))
rep = json.load(open(sys.argv[4]))
o = next(o for o in rep["operators"] if o["name"] == "host callback cb_stream")
lo = own - max(REL * own, ABS_NS)  # the least the check accepts
o["execute_ns"] = (math.ceil(lo) if int(sys.argv[6]) > 0 else math.floor(lo)) + int(sys.argv[6])
json.dump(rep, open(sys.argv[5], "w"))
PY
	done
	if HOSTFN_RUNS="$tmp/r1.runs" python3 "$S/tests/e2e/report_truth_check.py" --no-tamper "$tmp/r1.truth" \
		"$tmp/edge.json" >"$tmp/edge.check" 2>&1; then
		echo "tamper: cb_stream's execute at the program's own runs less one tolerance: accepted"
	else
		fail "tamper: cb_stream's execute at the edge the runs allow refused: $(grep -m2 MISMATCH "$tmp/edge.check")"
	fi
	if HOSTFN_RUNS="$tmp/r1.runs" python3 "$S/tests/e2e/report_truth_check.py" --no-tamper "$tmp/r1.truth" \
		"$tmp/past.json" >"$tmp/past.check" 2>&1; then
		fail "tamper: a callback's execute past the program's own runs of it accepted"
	elif [ "$(grep -c MISMATCH "$tmp/past.check")" = 1 ] &&
		grep -q '^MISMATCH host callback cb_stream: execute_ns' "$tmp/past.check"; then
		echo "tamper: cb_stream's execute 2 ns past that: $(grep -m1 'MISMATCH host' "$tmp/past.check"): refused"
	else
		fail "tamper: the refusal 2 ns past the edge is not cb_stream's execute alone: $(grep MISMATCH "$tmp/past.check")"
	fi
fi
[ "$fails" -eq 0 ] && echo "PASS: test_report_host_callback ($RUNS runs)" && exit 0
echo "$fails failure(s)"
exit 1
