#!/usr/bin/env bash
# test_report_progress.sh — progress of a long report (README "Output formats"):
# on stderr, only when stderr is a terminal and only once the run has taken
# more than a second; erased at the end; never in a pipe or a file. The
# trace: 4 threads x 400000 hooked calls (rel_prog load, hook-only, zero
# simulated cost): ~20 MB, a few seconds of report on the build machine.
set -u
. "$(dirname "$0")/cli_common.sh"
R=$B/bin/gpuphase-report
P=$B/tests/rel/rel_prog
require "$R" "$P" "$B/lib/libgpuphase.so"
command -v script >/dev/null || { echo "FAIL: script(1) is needed for a pseudo-terminal"; exit 1; }
(cd "$tmp" && env LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$B/lib/libgpuphase.so" GPUPHASE_CUPTI=0 GPUPHASE_STACKS=off \
	GPUPHASE_OUTPUT=big.gpht SIMCUDA_API_NS=0 SIMCUDA_LAUNCH_NS=0 SIMCUDA_LAUNCH_LATENCY_NS=0 SIMCUDA_SYNC_NS=0 \
	"$P" load 4 400000 >/dev/null 2>&1) || fail "rel_prog load failed"
[ -s "$tmp/big.gpht" ] || { fail "no trace"; finish; exit 1; }

# not a terminal: no progress at all
"$R" "$tmp/big.gpht" >"$tmp/out" 2>"$tmp/err"
grep -q '%' "$tmp/err" && fail "progress written to a non-terminal stderr: $(od -c "$tmp/err" | head -3)"

# a terminal (script's pseudo-terminal): progress after 1 s, erased at the end
start=$(date +%s.%N)
script -qc "\"$R\" \"$tmp/big.gpht\" >/dev/null" /dev/null >"$tmp/tty" 2>&1
took=$(echo "$(date +%s.%N) - $start" | bc)
if [ "$(echo "$took > 1.5" | bc)" = 1 ]; then
	grep -aq $'\rgpuphase-report: .*big.gpht: *[0-9]*%' "$tmp/tty" || fail "no progress on a terminal after ${took}s"
	tail -c 8 "$tmp/tty" | od -c | grep -q '\\r 033   \[   K' || fail "the progress line was not erased: $(tail -c 40 "$tmp/tty" | od -c)"
else
	echo "note: the report took ${took}s (< 1.5 s): only the no-progress cases were checked"
fi
# a short report on a terminal: nothing
script -qc "\"$R\" \"$S/tests/corpus/traces/sync_bound.gpht\" >/dev/null" /dev/null >"$tmp/short" 2>&1
[ -s "$tmp/short" ] && fail "progress for a report under a second: $(od -c "$tmp/short" | head -2)"

finish
