#!/usr/bin/env bash
# test_report_cupti_awkward.sh — the report against simcuda's truth when
# CUPTI is as awkward as the real one (docs/simcuda.md, "A CUPTI as awkward
# as the real one"): records delivered late and interleaved across kinds
# and threads (cupti_delivery_delay_ns), GPU timestamps off the host clock
# with drift (cupti_clock_offset_ns, cupti_clock_drift_ppm), each alone and
# together with the real-CUDA behaviours. Every phase must still match the
# truth (report_truth_check.py, which reads GPU timestamps as the report
# does: simcuda's clock offset and drift from the truth's gpu_clock line,
# less the offset the report took out, with their sign; CUPTI's own cost
# before a wait counts in it, docs/metrics.md §3),
# and every blocking call keep its call site. One case makes CUPTI's time
# in each call about as long as a synchronize's wait (ops end while CUPTI
# is at work in the call). The check's own tamper controls (a phase moved,
# an op dropped, launch raised, an operator renamed, a verdict changed,
# each just past what it accepts) must all be refused. simcuda is built
# from this tree: one that refuses these cost-model keys ("unknown key") is
# out of step with the test, a failure (it once passed unchecked).
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME;
# KEEP=1 keeps the traces, truths and reports.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
CHECK="python3 $S/tests/e2e/report_truth_check.py"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d /tmp/gp_cupti_awkward.XXXXXX)
if [ -n "${KEEP:-}" ]; then echo "files kept in $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
preload=$B/lib/libgpuphase.so
asan_opts=${ASAN_OPTIONS:-}
if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload"
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}"
fi

# case NAME PROGRAM MODEL KEY-LINES...: the model plus the keys; runs,
# reports, checks. A key simcuda refuses is a failure like any other.
case_() {
	local name=$1 prog=$2 model=$3
	shift 3
	{ cat "$model"; printf '%s\n' "$@"; } >"$tmp/$name.simcuda"
	rm -f "$tmp/$name".gpht "$tmp/$name".truth
	(cd "$tmp" && env ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" LD_LIBRARY_PATH="$B/simcuda" \
		SIMCUDA_CONFIG="$tmp/$name.simcuda" SIMCUDA_TRUTH="$tmp/$name.truth" GPUPHASE_OUTPUT="$tmp/$name.gpht" \
		GPUPHASE_STACKS=sync "$prog" >"$tmp/$name.out" 2>&1)
	local rc=$?
	if [ "$rc" = 2 ] && grep -q "unknown key" "$tmp/$name.out"; then
		fail "$name: this tree's simcuda refuses a cost-model key the test needs: $(grep -m1 'unknown key' "$tmp/$name.out" | cut -c1-120)"
		return 1
	fi
	[ "$rc" = 0 ] || { fail "$name: program failed: $(tail -2 "$tmp/$name.out")"; return 1; }
	"$R" --format json "$tmp/$name.gpht" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
		{ fail "$name: report failed: $(head -2 "$tmp/$name.err")"; return 1; }
	echo "--- $name"
	$CHECK "$tmp/$name.truth" "$tmp/$name.json" >"$tmp/$name.check" ||
		{ grep MISMATCH "$tmp/$name.check"; fail "$name: report disagrees with the truth"; return 1; }
	python3 - "$tmp/$name.json" <<'PY' || fail "$name: call sites or late waits"
import json, sys
r = json.load(open(sys.argv[1]))
sites = r.get("sync_callsites", [])
print("call sites", [(c["site"][:30], c["calls"]) for c in sites][:6], "waits_late", r["summary"].get("waits_late", 0))
sys.exit(1 if any(c["site"] == "(no stack)" for c in sites) else 0)
PY
	return 0
}

RC=$B/tests/e2e/report_realcuda
RCM=$S/tests/e2e/report_realcuda.simcuda
SB=$B/examples/sync_bound
SBM=$S/examples/sync_bound.simcuda
# late_*: delivery alone (simcuda's default clock offset and drift pinned to 0)
LATE="cupti_delivery_delay_ns 300000000"
NOSKEW="cupti_clock_offset_ns 0"
NODRIFT="cupti_clock_drift_ppm 0"
case_ late_sync "$SB" "$SBM" "$LATE" "$NOSKEW" "$NODRIFT"
case_ late_realcuda "$RC" "$RCM" "$LATE" "$NOSKEW" "$NODRIFT"
# (the check corrects the GPU clock's offset and drift with their sign:
# the truth's gpu_clock line)
case_ skew_sync "$SB" "$SBM" "cupti_clock_offset_ns 3000" "cupti_clock_drift_ppm 2"
case_ skew_realcuda "$RC" "$RCM" "cupti_clock_offset_ns 3000" "cupti_clock_drift_ppm 2"
# CUPTI's time in each call (15 us) about as long as a synchronize's
# wait: copies end while CUPTI is still at work in the synchronize,
# before the call looks at the GPU (truth: nothing outstanding), and the
# offset shows some ending after CUPTI's time
case_ skew_cupti_time "$RC" "$RCM" "cupti_clock_offset_ns 3000" "cupti_clock_drift_ppm 2" \
	"cupti_api_overhead_ns 15000"
case_ all_together "$RC" "$RCM" "cupti_delivery_delay_ns 300000000" "cupti_clock_offset_ns 3000" \
	"cupti_clock_drift_ppm 2" "exec_jitter_pct 10" "seed 7"
[ "$fails" = 0 ] && echo "test_report_cupti_awkward.sh: all checks passed"
[ "$fails" = 0 ]
