#!/usr/bin/env bash
# test_export_html_browser.sh — the HTML export in a real browser: headless
# Chromium through its WebDriver (Debian's chromium + chromium-driver:
# scripts/deps.sh browser; selenium from the package index in the scratch
# venv of scripts/deps.sh readers). tests/e2e/html_browser_check.py loads
# the page, checks there are no console errors and that it loads fast,
# sorts (aria-sort) and filters the operator table, hovers a phase bar and
# reads its tooltip, switches the iteration chart to log scale and zooms the
# op timeline, hovers a stage of the stages timeline, reads the answer that
# opens the page (verdict, advice, top what-ifs), on corpus traces
# (200 iterations; CUDA graphs; several streams; NVTX stages) and on a fresh
# simcuda trace of async copies held by pageable memory (whatif_pairs
# pageasync: the pageable-copy note in the advice column). GP_HTML_SHOTS=DIR saves screenshots there
# (docs/img holds the ones docs/exports.md shows). Exit 77 (skipped, never
# passed) without Chromium, its driver or selenium.
# Environment (make test): GP_BUILD, GP_SRC.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
T=$S/tests/corpus/traces
V=${GP_READERS_VENV:-$S/build/readers-venv} # one venv for the plain and sanitizer builds
[ -x "$R" ] || { echo "FAIL: $R is missing (not built?)"; exit 1; }
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
	# Debian's packages, installed by the project's own script (as root;
	# otherwise it prints the apt-get line and the test skips)
	bash "$S/scripts/deps.sh" browser >/dev/null 2>&1 || true
fi
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
	echo "SKIP: chromium / chromedriver not installed and scripts/deps.sh browser could not install them"
	exit 77
fi
bash "$S/scripts/deps.sh" readers "$V" || true
if ! "$V/bin/python" -c "import selenium" 2>/dev/null; then
	echo "SKIP: selenium could not be installed from the package index"
	exit 77
fi
tmp=$(mktemp -d /tmp/gp_html.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0 bigfails=0
# the corpus holds no pageable copy (its traces predate the flag): record one
preload=$B/lib/libgpuphase.so
[ -n "${GP_SAN:-}" ] && [ -n "${GP_SAN_RUNTIME:-}" ] && preload="$GP_SAN_RUNTIME:$preload"
(cd "$tmp" && ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" LD_PRELOAD="$preload" \
	LD_LIBRARY_PATH="$B/simcuda" SIMCUDA_CONFIG="$S/tests/e2e/whatif_pairs.simcuda" \
	GPUPHASE_OUTPUT="$tmp/pageasync.gpht" "$B/tests/e2e/whatif_pairs" pageasync >"$tmp/pageasync.out" 2>&1) ||
	{ echo "FAIL: whatif_pairs pageasync: $(tail -3 "$tmp/pageasync.out")"; fails=$((fails + 1)); }
for name in sync_bound graphs multistream analyses pageasync; do
	tr=$T/$name.gpht
	[ "$name" = pageasync ] && tr=$tmp/$name.gpht
	"$R" --format json "$tr" >"$tmp/$name.json" 2>/dev/null &&
		"$R" --export html "$tmp/$name.html" "$tr" >/dev/null 2>&1 ||
		{ echo "FAIL: $name: report/export failed"; fails=$((fails + 1)); continue; }
	echo "--- $name"
	shots=
	[ -n "${GP_HTML_SHOTS:-}" ] && { mkdir -p "$GP_HTML_SHOTS"; shots=$GP_HTML_SHOTS/$name; }
	timeout 300 "$V/bin/python" "$S/tests/e2e/html_browser_check.py" "$tmp/$name.html" "$tmp/$name.json" $shots \
		>"$tmp/$name.out" 2>&1
	rc=$?
	grep -v '^ok' "$tmp/$name.out"
	[ "$rc" = 77 ] && exit 77
	[ "$rc" = 0 ] || { echo "FAIL: $name"; fails=$((fails + 1)); }
done
# A large trace, when `make bench` left one (bench_report's 1M-record
# trace: 224k ops, 2244 iterations): the page must still load and draw fast.
big=$B/bench/report_synth_v2_1000000.gpht
if [ -e "$big" ]; then
	echo "--- $(basename "$big")"
	if "$R" --format json "$big" >"$tmp/big.json" 2>/dev/null && "$R" --export html "$tmp/big.html" "$big" >/dev/null 2>&1; then
		GP_HTML_LOAD_MS=${GP_HTML_LOAD_MS:-5000} timeout 300 "$V/bin/python" "$S/tests/e2e/html_browser_check.py" \
			"$tmp/big.html" "$tmp/big.json" >"$tmp/big.out" 2>&1 || { echo "FAIL: big trace"; bigfails=1; }
		grep -E "loads|FAIL" "$tmp/big.out"
	else
		echo "FAIL: big trace: report/export failed"; bigfails=1
	fi
fi
# Two counted parts (tests/run-tests.sh): the pages above, and the 100k-op
# page's load time (skipped, with the reason, where make bench has not
# written its trace).
[ "$fails" = 0 ] && echo "PART pages: PASS" || echo "PART pages: FAIL $fails check(s) failed, above"
if [ ! -e "$big" ]; then echo "PART big_page: SKIP no $big (make bench writes it): the 100k-op page was not timed"
elif [ "$bigfails" = 0 ]; then echo "PART big_page: PASS"
else echo "PART big_page: FAIL the 100k-op page, above"; fi
fails=$((fails + bigfails))
[ "$fails" = 0 ] && echo "test_export_html_browser.sh: all checks passed"
[ "$fails" = 0 ]
