#!/usr/bin/env bash
# bench/partial_cost.sh [TRACE] [N...] — what partial results cost
# (docs/partial-format.md, docs/performance.md "Partial results"): the map step
# (`gpuphase-report --partial` over TRACE, default the corpus's largest trace)
# and the reduce (`gpuphase-report --merge --format json` over N copies of its
# partial results, default N = 1 10 100 1000), each with wall and CPU time and
# peak RSS, the .gpp size, and for comparison the one-process report of N
# copies of the trace (up to N = $ONE_MAX, default 100). Prints one "bench:"
# line per number.
# Environment: GP_BUILD (default build/).
set -eu
S=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${GP_BUILD:-$S/build}" && pwd)
R=$B/bin/gpuphase-report
T=${1:-$(ls -S "$S"/tests/corpus/traces/*.gpht | head -1)}
shift || true
NS=${*:-1 10 100 1000}
tmp=$(mktemp -d /tmp/gp_partial_cost.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# measure NAME CMD...: "bench: NAME_{wall,cpu,rss}" from /usr/bin/time
measure() {
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" >"$tmp/stdout" 2>/dev/null || [ $? = 3 ]
	read -r wall user sys rss <"$tmp/time"
	echo "bench: ${name}_wall $wall s"
	echo "bench: ${name}_cpu $(echo "$user + $sys" | bc) s"
	echo "bench: ${name}_peak_rss $((rss / 1024)) MiB"
}
echo "trace: $T ($(stat -c %s "$T") bytes)"
measure partial "$R" --partial --allow-truncated -o "$tmp/one.gpp" "$T"
echo "bench: partial_size $(stat -c %s "$tmp/one.gpp") bytes"
echo "bench: trace_size $(stat -c %s "$T") bytes"
for n in $NS; do
	files=()
	for ((i = 0; i < n; i++)); do
		cp "$tmp/one.gpp" "$tmp/p$i.gpp"
		files+=("$tmp/p$i.gpp")
	done
	measure "merge_$n" "$R" --merge --allow-truncated --format json "${files[@]}"
	echo "bench: merge_${n}_output $(stat -c %s "$tmp/stdout") bytes"
	if [ "$n" -le "${ONE_MAX:-100}" ]; then
		traces=()
		for ((i = 0; i < n; i++)); do traces+=("$T"); done
		measure "one_process_$n" "$R" --merge --allow-truncated --format json "${traces[@]}"
	fi
	rm -f "$tmp"/p*.gpp
done
