#!/usr/bin/env bash
# test_report_tampers.sh — the tampers an independent review showed our truth
# check accepting, each applied to the honest report of the
# capture it was found on, each required refused by report_truth_check.py
# run with its defaults (nothing passed in), while the honest report itself
# passes:
#   skew        GPU clock 3 us and 2 ppm off the host's, CUPTI's time in each
#               call about a synchronize's wait (15 us): 40.7 % of rc_gpu's
#               launch moved to sync;
#   calibrated  no overhead records, the library's calibration: rc_long's
#               launch -62 % and +25 %, rc_gpu's +-30 %, memcpy DtoH's launch
#               +52 %, and the report of a product that takes 1000 ns more
#               CUPTI cost out of every call than its calibration states
#               (every operator's launch lower by 1000 ns a call);
#   records     overhead records, default clock error: rc_long's launch
#               +23 %, queue moved to launch by 1 us an op;
#   residual    a kept capture (fixtures/residual_allowance.*: launch_bound,
#               calibrated, test_report_cupti_cost's cal_lb_500) whose only
#               allowance (sync for 25 calls whose CUPTI time ran past the
#               estimate) lies at the far end of the GPU clock's residual:
#               the honest report passes and, one base tolerance wider,
#               every edge tamper is accepted (the all-operators sums once
#               left that variant's allowance out: its sync tamper stayed
#               refused, a failure of the check, not of the report);
#   queue_held  a kept capture (fixtures/queue_held_allowance.*:
#               report_realcuda, calibrated 5000/20000, test_report_cupti_cost's
#               cal_rc_5000) with launches the host held off the CPU while
#               the launch queue was full: no wait in the truth, a wait as
#               the report infers one without CUPTI's records (2 of them at
#               the queue's depth: 247548 ns of rc_gpu's launch allowed; a
#               third, at level 87, is the report's rule on a growing queue,
#               held by the tolerance alone); the honest report passes, and
#               rc_gpu's launch at the check's lower edge is accepted, 1 ns
#               past it refused on that alone.
# Each tamper also runs the check with --no-tamper (the check's own controls
# off: the refusal must come from the comparison itself). A tamper that
# changes nothing the check looks at would pass here as "refused" only if the
# honest report were refused too, which is checked first.
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME;
# KEEP=1 keeps the files.
set -u
tmp_name=gp_tampers
. "${GP_SRC:?GP_SRC not set}/tests/e2e/report_common.sh"
RC=$B/tests/e2e/report_realcuda
RCM=$S/tests/e2e/report_realcuda.simcuda

# capture NAME KEY-LINES...: report_realcuda under the model plus the keys
capture() {
	local name=$1
	shift
	{ cat "$RCM"; printf '%s\n' "$@"; } >"$tmp/$name.simcuda"
	(cd "$tmp" && env ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" LD_LIBRARY_PATH="$B/simcuda" \
		SIMCUDA_CONFIG="$tmp/$name.simcuda" SIMCUDA_TRUTH="$tmp/$name.truth" GPUPHASE_OUTPUT="$tmp/$name.gpht" \
		"$RC" >"$tmp/$name.out" 2>&1) || { fail "$name: program failed: $(tail -2 "$tmp/$name.out")"; return 1; }
	"$R" --format json "$tmp/$name.gpht" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
		{ fail "$name: report failed: $(head -2 "$tmp/$name.err")"; return 1; }
	if $CHECK "$tmp/$name.truth" "$tmp/$name.json" >"$tmp/$name.check"; then
		echo "ok   $name: the honest report passes ($(grep '^tamper: [0-9]' "$tmp/$name.check"))"
	else
		grep -E "MISMATCH|ACCEPTED" "$tmp/$name.check"
		fail "$name: the honest report is refused"
		return 1
	fi
}

# tamper NAME DESCRIPTION PYTHON-STATEMENTS: r is the report, op(name) an
# operator; the altered report must be refused
tamper() {
	local name=$1 desc=$2 code=$3
	python3 - "$tmp/$name.json" "$tmp/t.json" "$code" <<'PY' || { fail "$name: $desc: could not alter"; return; }
import json, sys
r = json.load(open(sys.argv[1]))
def op(n):
    return next(o for o in r["operators"] if o["name"] == n)
exec(sys.argv[3])
json.dump(r, open(sys.argv[2], "w"))
PY
	if $CHECK --no-tamper "$tmp/$name.truth" "$tmp/t.json" >"$tmp/t.check"; then
		fail "$name: $desc: accepted"
	else
		echo "ok   $name: $desc: refused ($(grep -m1 MISMATCH "$tmp/t.check" | cut -c1-110))"
	fi
}

if capture skew "cupti_clock_offset_ns 3000" "cupti_clock_drift_ppm 2" "cupti_api_overhead_ns 15000"; then
	tamper skew "40.7 % of rc_gpu's launch moved to sync" \
		'o = op("rc_gpu"); d = int(0.407 * o["launch_ns"]); o["launch_ns"] -= d; o["sync_ns"] += d'
fi
if capture calibrated "cupti_overhead_records 0"; then
	tamper calibrated "rc_long launch -62 %" 'o = op("rc_long"); o["launch_ns"] = int(o["launch_ns"] * 0.38)'
	tamper calibrated "rc_long launch +25 %" 'o = op("rc_long"); o["launch_ns"] = int(o["launch_ns"] * 1.25)'
	tamper calibrated "rc_gpu launch +30 %" 'o = op("rc_gpu"); o["launch_ns"] = int(o["launch_ns"] * 1.30)'
	tamper calibrated "rc_gpu launch -30 %" 'o = op("rc_gpu"); o["launch_ns"] = int(o["launch_ns"] * 0.70)'
	tamper calibrated "memcpy DtoH launch +52 %" \
		'o = op("memcpy DtoH"); o["launch_ns"] = int(o["launch_ns"] * 1.52)'
	tamper calibrated "1000 ns more CUPTI cost taken out of every call than the calibration states" \
		'for o in r["operators"]: o["launch_ns"] = max(0, o["launch_ns"] - 1000 * o["count"])'
fi
if capture records; then
	tamper records "rc_long launch +23 %" 'o = op("rc_long"); o["launch_ns"] = int(o["launch_ns"] * 1.23)'
	tamper records "1 us an op of queue moved to launch" \
		'for o in r["operators"]: o["queue_ns"] -= 1000 * o["count"]; o["launch_ns"] += 1000 * o["count"]'
fi

# kept NAME FIXTURE ALLOWANCE: a kept capture's honest report passes, and the
# check still finds the allowance it was kept for (else: choose another)
kept() {
	local name=$1 fx=$S/tests/e2e/fixtures/$2
	python3 -c 'import lzma, sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())' "$fx.truth.xz" \
		>"$tmp/$name.truth" || fail "$name: cannot read $fx.truth.xz"
	if $CHECK "$tmp/$name.truth" "$fx.json" >"$tmp/$name.check"; then
		echo "ok   $name: the honest report passes ($(grep '^tamper: [0-9]' "$tmp/$name.check"))"
	else
		grep -E "MISMATCH|ACCEPTED|not by its edge" "$tmp/$name.check"
		fail "$name: the honest report is refused"
	fi
	grep -q "^allowance: sync the report may charge.*$3" "$tmp/$name.check" ||
		fail "$name: the kept capture no longer shows its allowance (the check changed: choose another)"
}
kept residual residual_allowance ""
kept queue_held queue_held_allowance "for 2 calls, up to 156623 ns a call, .*: 247548 ns in all (from a launch held off"
# its report read 256322 ns of rc_gpu's launch as waits (3 launches, one of
# them at level 87 of 128: the report's rule on a queue still growing, held
# by the tolerance alone): rc_gpu's launch (and sync, the same amount the
# other way) moved to the check's lower edge is accepted, 2 ns past it
# refused; the edge read from the check's own refusal of a far move
edge() { # NAME DELTA_NS: the report with rc_gpu's launch lower by DELTA, sync higher
	python3 - "$S/tests/e2e/fixtures/queue_held_allowance.json" "$tmp/$1.json" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
o = next(o for o in r["operators"] if o["name"] == "rc_gpu")
o["launch_ns"] -= int(sys.argv[3])
o["sync_ns"] += int(sys.argv[3])
json.dump(r, open(sys.argv[2], "w"))
PY
	$CHECK --no-tamper "$tmp/queue_held.truth" "$tmp/$1.json" >"$tmp/$1.check"
}
edge queue_far 5000000
lo=$(sed -n 's/^MISMATCH rc_gpu: launch_ns .*accepted \([0-9]*\)\..*/\1/p' "$tmp/queue_far.check")
launch=$(python3 -c 'import json, sys; print(next(o["launch_ns"] for o in json.load(open(sys.argv[1]))["operators"] if o["name"] == "rc_gpu"))' \
	"$S/tests/e2e/fixtures/queue_held_allowance.json")
if [ -z "$lo" ]; then
	fail "queue_held: rc_gpu's launch 5 ms lower not refused by its own interval"
else
	if edge queue_edge $((launch - lo - 1)); then
		echo "ok   queue_held: rc_gpu's launch at the check's lower edge ($((lo + 1)) ns) accepted"
	else
		fail "queue_held: rc_gpu's launch at the check's lower edge refused: $(grep -m2 MISMATCH "$tmp/queue_edge.check")"
	fi
	if edge queue_past $((launch - lo + 1)); then
		fail "queue_held: rc_gpu's launch 1 ns past the check's lower edge accepted"
	elif [ "$(grep -c MISMATCH "$tmp/queue_past.check")" = 1 ] && grep -q '^MISMATCH rc_gpu: launch_ns' "$tmp/queue_past.check"; then
		echo "ok   queue_held: rc_gpu's launch 1 ns past the check's lower edge refused, on that alone"
	else
		fail "queue_held: the refusal 1 ns past the edge is not rc_gpu's launch alone: $(grep MISMATCH "$tmp/queue_past.check")"
	fi
fi

[ "$fails" = 0 ] && echo "test_report_tampers.sh: all checks passed"
[ "$fails" = 0 ]
