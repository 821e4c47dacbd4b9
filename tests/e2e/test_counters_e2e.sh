#!/usr/bin/env bash
# test_counters_e2e.sh — copies' achieved bandwidth against the link peaks
# end to end on simcuda (tests/e2e/counters_run under the preloaded library,
# its report against SIMCUDA_TRUTH, tests/e2e/counters_check.py derives every
# expected number):
#   copies    every copy kind's achieved GB/s and share of its link's peak
#   replay    GPUPHASE_COUNTERS=kernel=...: the sampled launches replayed (in
#             the truth), their counter records, and none of them in any
#             operator's count or phase sums; the roofline: achieved rates
#             within 5 % of the cost model, memory-heavy stream_k memory-bound,
#             compute-heavy fma_k compute-bound, tiny_k latency-bound, the
#             verdict's advice saying so
#   threads   4 threads launching at once, stream_k sampled: only its 3
#             sampled launches replayed (the others held back), none of
#             them in a phase sum, no deadlock
#   from      gpuphase record --counters top=2,from=FIRST.gpht: the first
#             run's two top kernels are the ones replayed
#   denied    profiling refused by CUPTI: the trace says why, nothing replayed
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
CHECK="python3 $S/tests/e2e/counters_check.py"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for f in "$R" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/tests/e2e/counters_run"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
tmp=$(mktemp -d /tmp/gp_counters_e2e.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

preload=$B/lib/libgpuphase.so
asan_opts=${ASAN_OPTIONS:-}
if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload"
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}" # the programs' leaks are not ours
elif [ "${GP_SAN:-}" = tsan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload"
fi

# run NAME [ENV...]: trace, truth, text and json reports in $tmp/NAME.*
run() {
	local name=$1
	shift
	rm -f "$tmp/$name".*
	(cd "$tmp" && env "$@" ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" \
		LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		SIMCUDA_CONFIG="$S/tests/e2e/counters_run.simcuda" SIMCUDA_TRUTH="$tmp/$name.truth" \
		GPUPHASE_OUTPUT="$tmp/$name.gpht" timeout 120 "$B/tests/e2e/counters_run" >"$tmp/$name.out" 2>&1) ||
		{ fail "$name: program failed: $(tail -3 "$tmp/$name.out")"; return 1; }
	"$R" "$tmp/$name.gpht" >"$tmp/$name.txt" 2>"$tmp/$name.err" &&
		"$R" --format json "$tmp/$name.gpht" >"$tmp/$name.json" 2>>"$tmp/$name.err" ||
		{ fail "$name: gpuphase-report failed: $(cat "$tmp/$name.err")"; return 1; }
}

echo "--- copies"
if run plain; then
	$CHECK copies "$tmp/plain.truth" "$tmp/plain.json" ||
		{ fail "copies: report disagrees with the truth"; sed -n '/^Copy bandwidth/,$p' "$tmp/plain.txt"; }
	grep -q '^  memcpy HtoD: 4 ops, 32.00 MiB in .* of PCIe 5.0 x16 (63.0 GB/s each way, H200)$' "$tmp/plain.txt" ||
		{ fail "copies: text line for HtoD"; sed -n '/^Copy bandwidth/,$p' "$tmp/plain.txt"; }
fi

echo "--- replay: GPUPHASE_COUNTERS=kernel=..., 3 samples of each kernel after the first launch"
if run sampled GPUPHASE_COUNTERS='kernel=stream_k;fma_k;tiny_k'; then
	$CHECK replay "$tmp/sampled.truth" "$tmp/sampled.json" 9 ||
		{ fail "replay: replayed launches in the phase sums"; }
	n=$("$B/bin/gpuphase-dump" "$tmp/sampled.gpht" | grep -c '^counter ')
	[ "$n" = 94 ] || fail "replay: $n counter records, want 9 launches x 10 + 4 device peaks"
	grep -q 'launches replayed for counters (left out)' "$tmp/sampled.txt" || fail "replay: the counts line says nothing"
	$CHECK roofline "$S/tests/e2e/counters_run.simcuda" "$tmp/sampled.json" 3 ||
		{ fail "roofline: rates or bounds disagree with the model"; sed -n '/^Roofline/,$p' "$tmp/sampled.txt"; }
	grep -q '^  stream_k: memory-bound: ' "$tmp/sampled.txt" && grep -q '^  fma_k: compute-bound: ' "$tmp/sampled.txt" &&
		grep -q '^  tiny_k: latency-bound: ' "$tmp/sampled.txt" || fail "roofline: the text section"
fi

echo "--- threads: 4 threads launching at once; 3 samples of stream_k, nothing else replayed"
rm -f "$tmp"/threads.*
if (cd "$tmp" && env ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" GPUPHASE_COUNTERS='kernel=stream_k' \
	LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" SIMCUDA_CONFIG="$S/tests/e2e/counters_run.simcuda" \
	SIMCUDA_TRUTH="$tmp/threads.truth" GPUPHASE_OUTPUT="$tmp/threads.gpht" \
	timeout 120 "$B/tests/e2e/counters_run" threads >"$tmp/threads.out" 2>&1); then
	n=$(grep -c '"replay"' "$tmp/threads.truth")
	other=$(grep '"replay"' "$tmp/threads.truth" | grep -vc '"name":"_Z8stream_k')
	[ "$n" = 3 ] && [ "$other" = 0 ] ||
		fail "threads: $n launches replayed ($other not stream_k): another thread's launch fell into a range"
	"$R" --format json "$tmp/threads.gpht" >"$tmp/threads.json" 2>/dev/null &&
		$CHECK replay "$tmp/threads.truth" "$tmp/threads.json" 3 >"$tmp/threads.check" ||
		{ fail "threads: replayed launches in the phase sums"; grep FAIL "$tmp/threads.check"; }
else
	fail "threads: the program failed or hung: $(tail -3 "$tmp/threads.out")"
fi

echo "--- from: the top 2 kernels of the first run's report, through gpuphase record"
rm -f "$tmp"/from.*
san_pre=
[ "${GP_SAN:-}" = asan ] || [ "${GP_SAN:-}" = tsan ] && san_pre=${GP_SAN_RUNTIME:-} # record appends its library
if (cd "$tmp" && LD_PRELOAD="$san_pre" LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ASAN_OPTIONS="$asan_opts" \
	SIMCUDA_CONFIG="$S/tests/e2e/counters_run.simcuda" SIMCUDA_TRUTH="$tmp/from.truth" \
	timeout 120 "$B/bin/gpuphase" record -q -o "$tmp/from.gpht" --counters "top=2,samples=2,from=$tmp/plain.gpht" -- \
	"$B/tests/e2e/counters_run" >"$tmp/from.out" 2>&1); then
	want=$("$R" --counter-targets 2 "$tmp/plain.gpht" | sort | tr '\n' ' ')
	got=$(grep '"replay"' "$tmp/from.truth" | sed 's/.*"name":"\([^"]*\)".*/\1/' | sort -u | sed 's/^_Z[0-9]*//; s/P.*//' | tr '\n' ' ')
	[ "$want" = "$got" ] || fail "from: replayed kernels '$got', the first run's top 2 are '$want'"
	n=$(grep -c '"replay"' "$tmp/from.truth")
	[ "$n" = 4 ] || fail "from: $n launches replayed, want 2 kernels x 2 samples"
else
	fail "from: gpuphase record failed: $(tail -3 "$tmp/from.out")"
fi

echo "--- denied: profiling restricted (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): said, nothing replayed"
if run denied GPUPHASE_COUNTERS='kernel=*_k' SIMCUDA_PROFILER_DENIED=1; then
	grep -q '"replay"' "$tmp/denied.truth" && fail "denied: a launch was replayed"
	"$B/bin/gpuphase-dump" "$tmp/denied.gpht" | grep -q '^status kind=12 .* value=-35$' ||
		fail "denied: no GP_STATUS_COUNTERS with -CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"
	"$B/bin/gpuphase-dump" "$tmp/denied.gpht" | grep -q '^counter ' && fail "denied: counter records written"
	grep -q '^  counters unavailable: cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES' "$tmp/denied.txt" ||
		fail "denied: the report does not say why: $(sed -n '/^Roofline/,$p' "$tmp/denied.txt")"
	grep -q 'counters_run: 12 iterations done' "$tmp/denied.out" || fail "denied: the program did not finish"
fi

[ "$fails" -eq 0 ] && echo "test_counters_e2e: all passed"
exit $((fails > 0))
