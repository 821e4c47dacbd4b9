#!/usr/bin/env bash
# tests/gpu/test_gpu_counters_sim.sh — `make test` shell test: the GPU kit's
# counters check (tests/gpu/counters_kit.sh) rehearsed on simcuda, so the
# script that will run on a GPU keeps working. Each of its check lines
# (PASS / FAIL / SKIP, counters.txt) is a counted part (PART <check>: ...,
# tests/run-tests.sh). Exit: the kit's own status, 1 if it judged nothing.
# Results: $GP_BUILD/gpu-results/counters-sim.
set -u
src=${GP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${GP_BUILD:-$src/build}
rd=$build/gpu-results/counters-sim
rm -rf "$rd"
bash "$src/tests/gpu/counters_kit.sh" --sim "$rd"
rc=$?
# counters.txt: "STATUS  check  number  (detail)" per check.
grep -Eq '^(PASS|FAIL|SKIP)  ' "$rd/counters.txt" 2>/dev/null ||
	{ echo "FAIL: the counters kit wrote no check line ($rd/counters.txt)"; exit 1; }
awk '/^(PASS|FAIL|SKIP)  / { st = $1; name = $2; gsub(/:/, "_", name); $1 = ""; $2 = ""; sub(/^ +/, "");
	print "PART " name ": " st " " $0 }' "$rd/counters.txt"
exit "$rc"
