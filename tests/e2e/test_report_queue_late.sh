#!/usr/bin/env bash
# test_report_queue_late.sh — a full launch queue whose CUPTI records come
# late (docs/metrics.md §3, "late records"): report_realcuda on simcuda
# (queue_depth 128: each launch of its GPU-bound loop waits on the full
# queue, and CUPTI writes a COMMAND_BUFFER_FULL record for each wait), its
# trace rewritten by trace_reorder so that those records reach the report
# after their calls' ops were folded — some groups later, and all at the
# very end, reversed. Every phase must still equal the truth (the waits are
# sync charged to the op whose end freed the slot, not launch), the loop be
# called compute-bound (on a quiet host), the same numbers come out as from the trace in
# order, and no record be counted late (waits_late). Once with CUPTI pinned
# to the kind one, once as awkward as the real one (records late and
# interleaved by simcuda too, GPU clock off the host's, CUPTI's own cost).
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME; KEEP=1
# keeps the files.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
CHECK="python3 $S/tests/e2e/report_truth_check.py"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for f in "$R" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/tests/e2e/report_realcuda" \
	"$B/tests/e2e/trace_reorder"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
tmp=$(mktemp -d /tmp/gp_queue_late.XXXXXX)
if [ -n "${KEEP:-}" ]; then echo "files kept in $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
preload=$B/lib/libgpuphase.so
asan_opts=${ASAN_OPTIONS:-}
if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload"
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}"
fi
PIN="SIMCUDA_CUPTI_CLOCK_OFFSET_NS=0 SIMCUDA_CUPTI_CLOCK_DRIFT_PPM=0 SIMCUDA_CUPTI_API_OVERHEAD_NS=0"
PIN="$PIN SIMCUDA_CUPTI_LAUNCH_OVERHEAD_NS=0"
AWKWARD="SIMCUDA_CUPTI_DELIVERY_DELAY_NS=300000000 SIMCUDA_CUPTI_CLOCK_OFFSET_NS=3000 SIMCUDA_CUPTI_CLOCK_DRIFT_PPM=2"

# one NAME ENV...: record, reorder, report, check; 1 on a disagreement
one() {
	local name=$1
	shift
	rm -f "$tmp/$name".*
	# shellcheck disable=SC2086 # the env lists are lists of words
	(cd "$tmp" && env "$@" ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" LD_LIBRARY_PATH="$B/simcuda" \
		SIMCUDA_CONFIG="$S/tests/e2e/report_realcuda.simcuda" SIMCUDA_TRUTH="$tmp/$name.truth" \
		GPUPHASE_OUTPUT="$tmp/$name.gpht" GPUPHASE_STACKS=sync "$B/tests/e2e/report_realcuda" \
		>"$tmp/$name.out" 2>&1) || { echo "$name: program failed: $(tail -2 "$tmp/$name.out")"; return 1; }
	local n
	n=$("$B/bin/gpuphase-dump" "$tmp/$name.gpht" | grep -c '^overhead kind=2')
	[ "$n" -gt 0 ] || { echo "$name: the trace has no COMMAND_BUFFER_FULL record"; return 1; }
	"$B/tests/e2e/trace_reorder" "$tmp/$name.gpht" "$tmp/$name.late.gpht" 3000 >/dev/null &&
		"$B/tests/e2e/trace_reorder" "$tmp/$name.gpht" "$tmp/$name.end.gpht" 1000000000 >/dev/null ||
		{ echo "$name: trace_reorder failed"; return 1; }
	local v
	for v in "" .late .end; do
		"$R" --format json "$tmp/$name$v.gpht" >"$tmp/$name$v.json" 2>"$tmp/$name$v.err" ||
			{ echo "$name$v: report failed: $(head -2 "$tmp/$name$v.err")"; return 1; }
		echo "--- $name$v ($n queue-full records$([ -n "$v" ] && echo ", moved ${v#.}"))"
		$CHECK "$tmp/$name.truth" "$tmp/$name$v.json" >"$tmp/$name$v.check" ||
			{ grep MISMATCH "$tmp/$name$v.check"; return 1; }
	done
	python3 - "$tmp/$name.json" "$tmp/$name.late.json" "$tmp/$name.end.json" <<'PY'
import json, sys
base, *others = [json.load(open(p)) for p in sys.argv[1:]]
bad = []
def phases(r):
    return {o["name"]: tuple(o[k] for k in ("count", "launch_ns", "execute_ns", "sync_ns")) for o in r["operators"]}
for p, r in zip(sys.argv[2:], others):
    s = r["summary"]
    if s.get("waits_late") or s.get("queue_waits_late"):
        bad.append(f"{p}: waits_late {s.get('waits_late')}, queue_waits_late {s.get('queue_waits_late')}")
    full = {k["kind"]: k for k in s["sync_calls"]}.get("launch queue full", {})
    want = {k["kind"]: k for k in base["summary"]["sync_calls"]}.get("launch queue full", {})
    if full.get("count") != want.get("count") or abs(full.get("blocked_ns", 0) - want.get("blocked_ns", 0)) > 2000:
        bad.append(f"{p}: launch queue full {full}, in order {want}")
    for name, ph in phases(base).items():
        o = phases(r).get(name)
        if not o or o[0] != ph[0] or any(abs(a - b) > max(2000, 0.001 * b) for a, b in zip(o[1:], ph[1:])):
            bad.append(f"{p}: {name} {o} != in order {ph}")
for p, r in zip(sys.argv[1:], [base] + others):
    v = {o["name"]: o.get("verdict") for o in r["operators"]}.get("rc_gpu")
    # a loaded host inflates the launches (simcuda's busy-waits lose the
    # CPU): only a verdict taken on a quiet host is held to the rule
    if v != "compute-bound" and r["summary"].get("host_cpu_busy_pct", 0) <= 80:
        bad.append(f"{p}: rc_gpu verdict {v}, expected compute-bound")
print("launch queue full, in order:", {k["kind"]: k for k in base["summary"]["sync_calls"]}.get("launch queue full"),
      "host busy", base["summary"].get("host_cpu_busy_pct"))
for b in bad:
    print("MISMATCH", b)
sys.exit(1 if bad else 0)
PY
}

# best of ATTEMPTS (3) runs each (tests/e2e/counting.sh): a loaded host can
# stretch a call over an op's end that it did not wait for, which no trace
# tells from a wait
. "$S/tests/e2e/counting.sh"
variant_attempt() { # VARIANT: one run of it
	local variant=$1
	if [ "$variant" = kind ]; then
		# shellcheck disable=SC2086
		one "$variant" $PIN
	else
		# (the check corrects the GPU clock's offset and drift with their
		# sign: the truth's gpu_clock line)
		# shellcheck disable=SC2086
		one "$variant" $AWKWARD
	fi
}
for variant in kind awkward; do
	gp_majority -n "${ATTEMPTS:-3}" "$variant" variant_attempt "$variant" ||
		fail "$variant: late queue-full records change the numbers, or they disagree with the truth, in a majority of runs"
done
[ "$fails" = 0 ] && echo "test_report_queue_late.sh: all checks passed"
[ "$fails" = 0 ]
