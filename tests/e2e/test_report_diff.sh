#!/usr/bin/env bash
# test_report_diff.sh — `gpuphase diff` as a CI gate (docs/metrics.md §10):
#  * the same program compared with itself passes (exit 0, "gate: ok");
#  * a slower run trips it (exit 1) and the gate line names each operator
#    that tripped it with its numbers (+P% (BASE -> NEW, +DELTA));
#  * operators are sorted by the size of their change;
#  * --min-delta ignores changes below an absolute amount; --phase picks
#    the time compared (the gate line says which);
#  * several runs per side (A1 A2 -- B1 B2): the difference of means trips
#    the gate only beyond the runs' spread;
#  * the headline is the wall time and its change (the reports' wall_ns),
#    the phase total below it said to be summed over overlapping ops.
# Traces come from the committed corpus (analyses_slow: step_k runs 4 ms
# longer than in analyses, and tail_k, launched after it, queues 4 ms
# longer behind it). The host's waits were for step_k: with each wait split
# over the ops it waited for (metrics.md §3), step_k gains 4 ms of execute
# and 4 ms of sync, and tail_k, which only queued, must not be blamed.
set -u
. "$(dirname "$0")/cli_common.sh"
R=$B/bin/gpuphase-report
T=$S/tests/corpus/traces
require "$R" "$G"
A=$T/analyses.gpht
S2=$T/analyses_slow.gpht

"$G" diff --fail-above 0 "$A" "$A" >"$tmp/same" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "a trace against itself: exit $rc: $(tail -3 "$tmp/same")"
grep -q "^gate: ok" "$tmp/same" || fail "a trace against itself: no 'gate: ok': $(tail -2 "$tmp/same")"

"$G" diff --fail-above 5 "$A" "$S2" >"$tmp/slow" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "slower run: exit $rc, want 1"
gate=$(grep "^gate:" "$tmp/slow")
echo "$gate" | grep -q "^gate: REGRESSED" || fail "slower run: gate line: $gate"
echo "$gate" | grep -Eq "step_k \+[0-9.]+% \([0-9.]+ms -> [0-9.]+ms, \+[0-9.]+ms\)" ||
	fail "the gate line does not name step_k with its numbers: $gate"
for op in tail_k warm_k; do
	echo "$gate" | grep -q "$op" && fail "the gate line names $op, which did not get slower: $gate"
done
# sorted by |delta|, largest first
awk '/^operator /{on=1;next} on && NF==0{exit} on{split(substr($0,34),f," "); d=f[4]; sub(/^[-+]/,"",d); v=d+0; if (d ~ /ms$/) v*=1e6; else if (d ~ /us$/) v*=1e3; else if (d ~ /s$/ && d !~ /ns$/) v*=1e9; print v}' \
	"$tmp/slow" >"$tmp/deltas"
sort -g -r "$tmp/deltas" | cmp -s - "$tmp/deltas" || fail "operators not sorted by change: $(tr '\n' ' ' <"$tmp/deltas")"

# step_k's change is about 8 ms (4 execute + 4 sync): ignored under 10 ms
"$G" diff --fail-above 5 --min-delta 10ms "$A" "$S2" >"$tmp/md" 2>&1
rc=$?
grep "^gate:" "$tmp/md" | grep -q "tail_k\|step_k" && fail "--min-delta 10ms: an 8 ms change tripped the gate"
grep -q "changes under 10.00ms ignored" "$tmp/md" || fail "--min-delta not said in the gate line: $(grep gate "$tmp/md")"

"$G" diff --fail-above 5 --phase launch "$A" "$S2" >"$tmp/ph" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "--phase launch: the launch times did not change, exit $rc: $(grep gate "$tmp/ph")"
grep -q "^gate: ok (launch:" "$tmp/ph" || fail "--phase launch: gate line: $(grep gate "$tmp/ph")"
"$G" diff --fail-above 5 --phase execute "$A" "$S2" >/dev/null 2>&1
[ $? = 1 ] || fail "--phase execute: step_k's +4 ms execute did not trip the gate"

# several runs per side: the same mix on both sides passes, and a
# difference of means within the runs' spread does not trip the gate
"$G" diff --fail-above 5 "$A" "$S2" -- "$S2" "$A" >"$tmp/mix" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "A S -- S A: exit $rc: $(grep gate "$tmp/mix")"
grep -q "2 runs" "$tmp/mix" || fail "A S -- S A: the runs are not said: $(head -2 "$tmp/mix")"
"$G" diff --fail-above 5 "$A" "$S2" "$A" -- "$S2" "$A" "$S2" >"$tmp/spread" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "A S A -- S A S: mean +33% but within the spread, yet exit $rc: $(grep gate "$tmp/spread")"
grep -q "only beyond the runs' spread" "$tmp/spread" || fail "the spread rule is not said: $(grep gate "$tmp/spread")"
"$G" diff --fail-above 5 "$A" "$A" -- "$S2" "$S2" >"$tmp/beyond" 2>&1
[ $? = 1 ] || fail "A A -- S S: a change beyond a zero spread did not trip the gate"
grep "^gate:" "$tmp/beyond" | grep -q "> spread" || fail "A A -- S S: gate line: $(grep gate "$tmp/beyond")"
# the headline: the wall time, as each side's report gives it
wb=$("$R" --format json "$A" | python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["wall_ns"])')
wn=$("$R" --format json "$S2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["wall_ns"])')
want=$(python3 -c "print('%+.1f%%' % (100.0 * ($wn - $wb) / $wb))")
head3=$(sed -n 3p "$tmp/slow")
echo "$head3" | grep -q "^wall: [0-9.]*ms -> [0-9.]*ms ($want)\$" ||
	fail "the diff's headline is not the wall time and its change ($want): $head3"
sed -n 4p "$tmp/slow" | grep -q "^total (launch + execute + sync), summed over the ops (they overlap: not elapsed time): " ||
	fail "the phase total is not said to be summed over overlapping ops: $(sed -n 4p "$tmp/slow")"
"$G" diff --format json "$A" "$S2" >"$tmp/slow.json" 2>/dev/null
python3 - "$tmp/slow.json" "$wb" "$wn" <<'PY' || fail "diff JSON: wall"
import json, sys
w = json.load(open(sys.argv[1]))["wall"]
b, n = float(sys.argv[2]), float(sys.argv[3])
assert w["base_ns"] == b and w["new_ns"] == n and abs(w["delta_pct"] - 100 * (n - b) / b) < 1e-3, w
PY
"$G" diff "$A" "$S2" "$A" >/dev/null 2>"$tmp/e"
[ $? = 2 ] || fail "three traces without -- must be refused"

finish
