#!/usr/bin/env bash
# bench/run-bench.sh — runs each benchmark program and prints every
# "bench: <name> <value> <unit> [floor=<v>] [ratio=<v>]" line it emits, then one
# summary table of all of them. Benchmarks measure their own floor or baseline
# in the same run; see docs/performance.md.
set -u
out=$(mktemp); trap 'rm -f "$out"' EXIT
rc=0
for b in "$@"; do
  echo "=== $(basename "$b")"
  "$b" 2>&1 | tee -a "$out" || rc=1
done
echo
echo "Summary (bench lines from this run):"
printf '%-44s %14s %-10s %14s %10s\n' name value unit floor ratio
grep -a '^bench: ' "$out" | while read -r _ name value unit rest; do
  floor=$(echo "$rest" | sed -n 's/.*floor=\([^ ]*\).*/\1/p')
  ratio=$(echo "$rest" | sed -n 's/.*ratio=\([^ ]*\).*/\1/p')
  printf '%-44s %14s %-10s %14s %10s\n' "$name" "$value" "$unit" "${floor:--}" "${ratio:--}"
done
exit $rc
