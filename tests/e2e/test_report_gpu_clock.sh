#!/usr/bin/env bash
# test_report_gpu_clock.sh — the report bounds the offset of CUPTI's GPU
# timestamps from the host clock from causality and takes it out of queue
# and waits (docs/metrics.md §2, "The GPU's clock"). sync_bound (a kernel,
# a device synchronize and a blocking 4-byte cudaMemcpy DtoH a step) runs
# under simcuda with cupti_clock_offset_ns at -5000, -1000, 0, +1000 and
# +5000 (simcuda's default drift of 1 ppm kept). For each: the offset the
# truth's gpu_clock line states, moved by the drift over the run, lies in
# the bound the report gives (summary.gpu_clock: lo_ns .. hi_ns), the
# report's estimate is within the bound's width of it, and every phase per
# operator matches the truth within report_truth_check.py's default
# tolerance, with no QUEUE_SLACK_NS (a clean environment). The control: a
# report of the ±5 µs runs with the correction off
# (GPUPHASE_REPORT_GPU_CLOCK=raw, for this control only) must be refused
# for its queue, and so must the same report with its statement of the
# clock (summary.gpu_clock) removed: the check takes what must be taken
# out from the truth, not from the report.
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME;
# KEEP=1 keeps the traces, truths and reports.
set -u
tmp_name=gp_gpu_clock
. "${GP_SRC:?GP_SRC not set}/tests/e2e/report_common.sh"
# (called through check() below, in a clean environment)
CHECK=$S/tests/e2e/report_truth_check.py
PROG=$B/examples/sync_bound
MODEL=$S/examples/sync_bound.simcuda
# a 20 us launch latency (queue) instead of 3: what the correction cannot
# see, the host's wake-up after a blocking copy (tens of ns, docs/metrics.md
# §2), is then well inside the check's 1 % of each operator's queue, and an
# offset of 5 us far outside it
LATENCY="launch_latency_ns 20000"
# the truth check in a clean environment: its defaults, no slack
check() { env -i PATH="$PATH" python3 "$CHECK" "$@"; }

for off in -5000 -1000 0 1000 5000; do
	name=off$off
	{ cat "$MODEL"; echo "$LATENCY"; echo "cupti_clock_offset_ns $off"; } >"$tmp/$name.simcuda"
	(cd "$tmp" && env ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" LD_LIBRARY_PATH="$B/simcuda" \
		SIMCUDA_CONFIG="$tmp/$name.simcuda" SIMCUDA_TRUTH="$tmp/$name.truth" GPUPHASE_OUTPUT="$tmp/$name.gpht" \
		"$PROG" >"$tmp/$name.out" 2>&1) || { fail "$name: program failed: $(tail -2 "$tmp/$name.out")"; continue; }
	env -u GPUPHASE_REPORT_GPU_CLOCK "$R" --format json "$tmp/$name.gpht" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
		{ fail "$name: report failed: $(head -2 "$tmp/$name.err")"; continue; }
	python3 - "$tmp/$name.truth" "$tmp/$name.json" <<'PY' || fail "$name: the bound or the estimate misses the truth's offset"
import json, sys
truth = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
clocks = [t for t in truth if t["type"] == "gpu_clock"]
if not clocks:
    sys.exit("no gpu_clock line in the truth")
c = clocks[-1]
times = [t[k] for t in truth if t["type"] in ("kernel", "memcpy", "memset") for k in ("start", "end")]
# the offset over the run: O + D (t - T0) for t from the first op to the last
at = [c["offset_ns"] + round((t - c["origin"]) * c["drift_ppm"] / 1e6) for t in (min(times), max(times))]
tlo, thi = min(at), max(at)
g = json.load(open(sys.argv[2]))["summary"].get("gpu_clock") or sys.exit("no summary.gpu_clock")
g = g[0]
lo, hi, est = g.get("lo_ns"), g.get("hi_ns"), g["offset_ns"]
print(f"truth offset {tlo}..{thi} ns; report bound {lo}..{hi} ns, estimate {est} ns "
      f"({g['from']['ops']} ops, {g['from']['waits']} waits)")
if lo is None or hi is None:
    sys.exit("a side of the bound is missing")
if not (lo <= thi and tlo <= hi):
    sys.exit(f"bound {lo}..{hi} misses the truth {tlo}..{thi}")
if not (lo <= est <= hi):
    sys.exit(f"estimate {est} outside its bound {lo}..{hi}")
if min(abs(est - tlo), abs(est - thi)) > hi - lo and not tlo <= est <= thi:
    sys.exit(f"estimate {est} further from the truth {tlo}..{thi} than the bound is wide ({hi - lo})")
PY
	check "$tmp/$name.truth" "$tmp/$name.json" >"$tmp/$name.check" ||
		{ grep MISMATCH "$tmp/$name.check"; fail "$name: report disagrees with the truth (no QUEUE_SLACK_NS)"; }
	# the control: the same trace reported without the correction
	if [ "$off" = -5000 ] || [ "$off" = 5000 ]; then
		GPUPHASE_REPORT_GPU_CLOCK=raw "$R" --format json "$tmp/$name.gpht" >"$tmp/$name.raw.json" 2>/dev/null ||
			{ fail "$name: raw report failed"; continue; }
		if check "$tmp/$name.truth" "$tmp/$name.raw.json" >"$tmp/$name.raw.check"; then
			fail "$name: the check accepted a report with the clock offset left in"
		else
			grep -q '^MISMATCH .*queue_ns' "$tmp/$name.raw.check" ||
				fail "$name: the uncorrected report was refused, but not for queue: $(grep -m2 MISMATCH "$tmp/$name.raw.check")"
		fi
		# and without its statement (summary.gpu_clock removed): the truth
		# alone says what must be taken out
		python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); r["summary"].pop("gpu_clock", None); json.dump(r, open(sys.argv[2], "w"))' \
			"$tmp/$name.raw.json" "$tmp/$name.raw2.json"
		if check --no-tamper "$tmp/$name.truth" "$tmp/$name.raw2.json" >"$tmp/$name.raw2.check"; then
			fail "$name: the check accepted an uncorrected report that says nothing of its clock"
		else
			grep -q '^MISMATCH .*queue_ns' "$tmp/$name.raw2.check" ||
				fail "$name: the uncorrected report without its statement was refused, but not for queue"
		fi
	fi
done
[ "$fails" = 0 ] && echo "test_report_gpu_clock.sh: all checks passed"
[ "$fails" = 0 ]
