#!/usr/bin/env bash
# test_counters_e2e.sh — copies' achieved bandwidth against the link peaks
# end to end on simcuda (tests/e2e/counters_run under the preloaded library,
# its report against SIMCUDA_TRUTH, tests/e2e/counters_check.py derives every
# expected number):
#   copies    every copy kind's achieved GB/s and share of its link's peak
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

[ "$fails" -eq 0 ] && echo "test_counters_e2e: all passed"
exit $((fails > 0))
