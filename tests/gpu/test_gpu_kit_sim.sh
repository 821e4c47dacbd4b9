#!/usr/bin/env bash
# tests/gpu/test_gpu_kit_sim.sh — `make test` shell test: runs the real-GPU
# validation kit in --sim mode (tests/gpu/run.sh --sim) against simcuda, so
# CI keeps the script itself working. Every row of the kit's summary is a
# counted part (PART <check>: PASS|FAIL|SKIP <number/reason>,
# tests/run-tests.sh): hardware-only checks are skipped parts (sim), never
# passes. Exit: the kit's own status (non-zero if a check that ran failed),
# 1 if it wrote no row at all. Results: $GP_BUILD/gpu-results/sim-make-test.
set -u
src=${GP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${GP_BUILD:-$src/build}
rd=$build/gpu-results/sim-make-test
bash "$src/tests/gpu/run.sh" --sim "$rd"
rc=$?
# summary.tsv: check, status, number, detail (tab-separated). A check name
# is one word for the runner: blanks and colons become '_'.
[ -s "$rd/summary.tsv" ] || { echo "FAIL: the kit wrote no summary ($rd/summary.tsv)"; exit 1; }
awk -F '\t' '{
	name = $1; gsub(/[ \t:]/, "_", name)
	st = $2; if (st != "PASS" && st != "FAIL" && st != "SKIP") { why = "status " st; st = "FAIL" } else why = ""
	d = $3; if ($4 != "") d = d "  (" $4 ")"; if (why != "") d = why "  " d
	gsub(/[\r\n]/, " ", d)
	print "PART " name ": " st " " d
}' "$rd/summary.tsv"
exit "$rc"
