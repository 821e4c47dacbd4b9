#!/usr/bin/env bash
# test_report_truth_modes.sh — capture modes and report views beyond the
# plain one, each held to simcuda's truth by report_truth_check.py with its
# defaults (nothing passed in):
#  hook-only   GPUPHASE_CUPTI=0 (docs/metrics.md §1): one op per hooked call,
#              named by its function, launch = the call as the program sees
#              it (the truth's interval plus simcuda's own time in it, the
#              truth's "outside" lines), explicit synchronizes as sync with
#              nothing outstanding, within the hook's own measured cost a
#              call; on report_realcuda, launch_bound and sync_bound (parts
#              hookonly_*: skipped under a sanitizer, whose instrumented
#              first calls spend microseconds before simcuda's entry, where
#              no truth sees them);
#  views       of one capture: --filter (only the operators whose name matches, the summary the whole
# run's), --thresholds (every operator's verdict by the rule on the truth's
# sums, at thresholds that give other verdicts than the defaults), --top, and
# both at once. The report states what it applied (JSON "filter", "top",
# "thresholds" with min_pct) and the check reads it from there; a control
# gives the check a report whose filter let through an operator it should
# not have, and one whose verdicts were made with other thresholds than it
# states, and requires both refused.
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME;
# KEEP=1 keeps the files.
set -u
tmp_name=gp_truth_modes
. "${GP_SRC:?GP_SRC not set}/tests/e2e/report_common.sh"

(cd "$tmp" && env ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" LD_LIBRARY_PATH="$B/simcuda" \
	SIMCUDA_CONFIG="$S/tests/e2e/report_realcuda.simcuda" SIMCUDA_TRUTH="$tmp/run.truth" \
	GPUPHASE_OUTPUT="$tmp/run.gpht" "$B/tests/e2e/report_realcuda" >"$tmp/run.out" 2>&1) ||
	{ echo "FAIL: program failed: $(tail -2 "$tmp/run.out")"; exit 1; }

# hook-only NAME PROGRAM MODEL: a capture without CUPTI, checked
hook_only() {
	local name=$1 prog=$2 model=$3
	(cd "$tmp" && env ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" LD_LIBRARY_PATH="$B/simcuda" \
		SIMCUDA_CONFIG="$model" SIMCUDA_TRUTH="$tmp/$name.truth" GPUPHASE_OUTPUT="$tmp/$name.gpht" \
		GPUPHASE_CUPTI=0 "$prog" >"$tmp/$name.out" 2>&1) || { fail "$name: program failed"; return 1; }
	"$R" --format json "$tmp/$name.gpht" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
		{ fail "$name: report failed: $(head -2 "$tmp/$name.err")"; return 1; }
	echo "--- $name"
	if $CHECK "$tmp/$name.truth" "$tmp/$name.json" >"$tmp/$name.check"; then
		grep -E "^hook-only|^tamper: [0-9]" "$tmp/$name.check"
	else
		grep -E "MISMATCH|ACCEPTED" "$tmp/$name.check"
		fail "$name: the hook-only report disagrees with the truth"
	fi
}
. "$S/tests/e2e/counting.sh"
for c in realcuda:tests/e2e/report_realcuda launch:examples/launch_bound sync:examples/sync_bound; do
	gp_part_begin "hookonly_${c%%:*}"
	if [ -n "${GP_SAN:-}" ]; then
		gp_part_end "the hook's time under $GP_SAN: instrumented first calls spend microseconds before simcuda's entry"
		continue
	fi
	hook_only "hookonly_${c%%:*}" "$B/${c#*:}" "$S/${c#*:}.simcuda"
	gp_part_end
done
gp_part_begin views

# view NAME OPTIONS...: a JSON report with these options, checked
view() {
	local name=$1
	shift
	"$R" --format json "$@" "$tmp/run.gpht" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
		{ fail "$name: report failed: $(head -2 "$tmp/$name.err")"; return 1; }
	echo "--- $name: $*"
	if $CHECK "$tmp/run.truth" "$tmp/$name.json" >"$tmp/$name.check"; then
		grep -E "^filter|^tamper: [0-9]" "$tmp/$name.check"
	else
		grep -E "MISMATCH|ACCEPTED" "$tmp/$name.check"
		fail "$name: the report disagrees with the truth"
	fi
}
view plain
view filter --filter 'rc_(long|short)'
view filter_copies --filter '^memcpy'
# thresholds that move verdicts: rc_gpu (execute ~50 %, queue waits left
# out of sync) is compute-bound only above 50; rc_short is no longer minor
view thresholds --thresholds sync=10,launch=5,execute=50,min=0.1
view top --top 2
view all --filter '^rc_' --thresholds sync=60,launch=40,execute=95,min=0 --top 2
# the views must differ from the plain report where they should (a report
# that ignored its options would pass the check above as the plain one)
python3 - "$tmp" <<'PY' || fail "the options did not change the report"
import json, sys
d = sys.argv[1]
r = {n: json.load(open(f"{d}/{n}.json")) for n in ("plain", "filter", "thresholds", "top", "all")}
names = lambda n: sorted(o["name"] for o in r[n]["operators"])
verd = lambda n: {o["name"]: o["verdict"] for o in r[n]["operators"]}
bad = []
if names("filter") != ["rc_long", "rc_short"]:
    bad.append(f"--filter: {names('filter')}")
if verd("thresholds") == verd("plain"):
    bad.append(f"--thresholds changed no verdict: {verd('plain')}")
if len(r["top"]["operators"]) != 2 or len(r["all"]["operators"]) != 2:
    bad.append("--top 2 did not list 2 operators")
# what each report says it applied is what it was asked (the check reads it)
for n, flt, top, th in (("plain", None, 0, (30, 20, 80, 1)), ("filter", "rc_(long|short)", 0, (30, 20, 80, 1)),
                        ("thresholds", None, 0, (10, 5, 50, 0.1)), ("top", None, 2, (30, 20, 80, 1)),
                        ("all", "^rc_", 2, (60, 40, 95, 0))):
    t = r[n]["thresholds"]
    got = (r[n].get("filter"), r[n].get("top"), (t["sync_pct"], t["launch_pct"], t["execute_pct"], t["min_pct"]))
    if got != (flt, top, th):
        bad.append(f"{n}: the report states filter/top/thresholds {got}, asked {(flt, top, th)}")
print("verdicts, default thresholds:", verd("plain"), "; sync=10,launch=5,execute=50,min=0.1:", verd("thresholds"))
for b in bad:
    print("MISMATCH", b)
sys.exit(1 if bad else 0)
PY

# controls: a filter that let through what it should not, and verdicts made
# under other thresholds than the report states, must be refused
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
f = json.load(open(f"{d}/filter.json"))
p = json.load(open(f"{d}/plain.json"))
f["operators"].append(next(o for o in p["operators"] if o["name"] == "rc_gpu"))
json.dump(f, open(f"{d}/ctl_filter.json", "w"))
t = json.load(open(f"{d}/thresholds.json"))
t["thresholds"] = p["thresholds"]
json.dump(t, open(f"{d}/ctl_thresholds.json", "w"))
PY
for c in ctl_filter ctl_thresholds; do
	if $CHECK --no-tamper "$tmp/run.truth" "$tmp/$c.json" >"$tmp/$c.check"; then
		fail "$c: the check accepted it"
	else
		echo "--- $c: refused: $(grep -m1 MISMATCH "$tmp/$c.check")"
	fi
done

gp_part_end
[ "$fails" = 0 ] && echo "test_report_truth_modes.sh: all checks passed"
[ "$fails" = 0 ]
