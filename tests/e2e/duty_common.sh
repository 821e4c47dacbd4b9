# duty_common.sh — sourced by the duty-cycle tests (test_duty_cycle,
# test_attach_duty_cycle): the checks of one run's windows directory against
# simcuda's truth. Set before sourcing: R (gpuphase-report), S (the source
# tree), B (the build), tmp (a scratch folder) and fail (counts a failure).

# windows_check LABEL DIR TRUTH MIN: at least MIN window files in DIR,
# numbered from 1 without a gap, no .part left, each reported alone by
# gpuphase-report (text and JSON, written beside it as FILE.txt and
# FILE.json); their operator counts against TRUTH (duty_cycle_check.py: ops
# launched inside each window exact, none from between windows). Tamper
# control: the same reports with every window moved by one period (300 ms)
# must fail that check (exit 1 with FAIL lines: a crash is no refusal).
# Marks: between windows no iteration mark is written but the last, so each
# file holds at most one iteration mark before its window's start mark, of
# the iteration the start mark names (gpuphase-dump; marks_check); tamper:
# a dump with a second mark added before the start must fail it.
# TRUTH must be complete: read after the server exited.
# marks_check DUMP: at most one iteration mark made before the window's
# start mark (by their times: the file interleaves the threads' rings, so a
# mark made inside the window may precede the start mark in it), and of the
# start mark's iteration
marks_check() {
	awk 'function field(name,   i) { for (i = 3; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2); return "" }
		NR == FNR { if ($1 == "window" && $2 == "kind=1" && start_ts == "") { start_ts = field("ts") + 0; start = field("iter") } next }
		$1 == "iter" && field("ts") + 0 < start_ts { n++; last = field("iter") }
		END {
			if (start_ts == "") { print "no window start mark"; exit 1 }
			if (n > 1) { print n " iteration marks before the window start"; exit 1 }
			if (n == 1 && last != start) { print "the mark before the start is iter=" last ", the start names iter=" start; exit 1 }
			print n " mark(s) before the start, iter=" start
		}' "$1" "$1"
}

windows_check() {
	local label=$1 dir=$2 truth=$3 min=$4 files n i want f out
	files=$(ls "$dir"/w*.gpht 2>/dev/null)
	n=$(echo "$files" | grep -c .)
	echo "$label: $n window files ($(ls "$dir" 2>&1 | tr '\n' ' '))"
	[ "$n" -ge "$min" ] || fail "$label: $n window files, expected at least $min"
	ls "$dir" | grep -q '\.part$' && fail "$label: a .part file is left"
	i=1
	for f in $files; do
		want=$(printf '%s/w%08d.gpht' "$dir" "$i")
		[ "$f" = "$want" ] || fail "$label: file $f where $want was expected (SEQ from 1, no gap)"
		i=$((i + 1))
		"$R" "$f" >"$f.txt" 2>"$f.err" || fail "$label: $f does not report alone: $(head -2 "$f.err")"
		"$R" --format json "$f" >"$f.json" 2>>"$f.err" || fail "$label: $f JSON report failed: $(head -2 "$f.err")"
		"$B/bin/gpuphase-dump" "$f" >"$f.dump" 2>&1 || fail "$label: $f does not dump"
		out=$(marks_check "$f.dump") || fail "$label: marks: $f: $out"
	done
	echo "$label: marks: last window $out"
	f=$(echo "$files" | tail -1)
	# a second mark made just before the start mark, at the iteration before
	awk '$1 == "window" && $2 == "kind=1" && !done {
			for (i = 3; i <= NF; i++) { if ($i ~ /^ts=/) ts = substr($i, 4); if ($i ~ /^iter=/) it = substr($i, 6) }
			printf "iter kind=0 tid=1 ts=%.0f iter=%.0f reason=0 name=0\n", ts - 2, it - 1
			printf "iter kind=0 tid=1 ts=%.0f iter=%.0f reason=0 name=0\n", ts - 1, it
			done = 1
		}
		{ print }' "$f.dump" >"$f.forged"
	if out=$(marks_check "$f.forged"); then
		fail "$label: tamper: a window with two marks before its start passed the marks check: $out"
	else
		echo "$label: tamper: two marks before the start refused ($out)"
	fi
	# shellcheck disable=SC2046 # one argument per report
	python3 "$S/tests/e2e/duty_cycle_check.py" "$truth" $(ls "$dir"/w*.gpht.json) >"$tmp/$label.check" 2>&1 ||
		fail "$label: windows against the truth: $(grep FAIL "$tmp/$label.check" | head -3)"
	cat "$tmp/$label.check"
	# shellcheck disable=SC2046
	python3 "$S/tests/e2e/duty_cycle_check.py" "$truth" $(ls "$dir"/w*.gpht.json) \
		--shift-ns 300000000 >"$tmp/$label.tamper" 2>&1
	local rc=$? nf
	nf=$(grep -c '^FAIL' "$tmp/$label.tamper")
	if [ "$rc" = 1 ] && [ "$nf" -gt 0 ]; then # refused by the check, not a crash
		echo "$label: tamper: windows moved by one period refused ($nf failures)"
	else
		fail "$label: tamper: windows moved by one period not refused (exit $rc): $(tail -2 "$tmp/$label.tamper")"
	fi
}
