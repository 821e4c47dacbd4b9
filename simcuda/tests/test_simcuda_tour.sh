#!/usr/bin/env bash
# test_simcuda_tour.sh — sim_api_tour (an nvcc -cudart shared program using
# host registration, priorities, callbacks, occupancy, explicit and captured
# graphs, as NVIDIA's samples do) runs to the end on simcuda with every check
# passing (part "bare"), and prints the same under `gpuphase record` as bare
# (part "recorded": skipped, with its reason, under a sanitizer).
# Environment: GP_BUILD, GP_SAN_RUNTIME (sanitizer builds: the runtime to
# preload into the nvcc-built, uninstrumented program).
set -euo pipefail
B=${GP_BUILD:-build}
prog=$B/simcuda/tests/sim_api_tour
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export LD_LIBRARY_PATH=$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
pre=${GP_SAN_RUNTIME:-}
LD_PRELOAD=$pre "$prog" > "$tmp/bare.out" 2> "$tmp/bare.err" || { cat "$tmp/bare.out" "$tmp/bare.err"; echo "FAIL: bare run"; exit 1; }
grep -q '^ok: 0 failures$' "$tmp/bare.out" || { cat "$tmp/bare.out"; echo "FAIL: checks"; exit 1; }
if grep -q 'not supported' "$tmp/bare.err"; then cat "$tmp/bare.err"; echo "FAIL: a stub was called"; exit 1; fi
echo "PART bare: PASS"
if [ -n "$pre" ]; then
	echo "ok: bare run ($(grep -c '^ok' "$tmp/bare.out") checks)"
	echo "PART recorded: SKIP the recorded run is plain-build only (the nvcc-built program under a sanitizer runtime)"
	exit 0
fi
"$B/bin/gpuphase" record -o "$tmp/tour.gpht" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" ||
	{ cat "$tmp/rec.out" "$tmp/rec.err"; echo "FAIL: recorded run"; exit 1; }
diff -u "$tmp/bare.out" "$tmp/rec.out" || { echo "FAIL: stdout differs under gpuphase record"; exit 1; }
[ -s "$tmp/tour.gpht" ] || { echo "FAIL: no trace written"; exit 1; }
echo "ok: $(grep -c '^ok' "$tmp/bare.out") checks, same stdout bare and recorded"
echo "PART recorded: PASS"
