#!/usr/bin/env bash
# test_report_hostile.sh — names from a trace never forge report lines: the
# corpus trace analyses_slow.gpht (it reaches every section: operators,
# verdicts, call sites, stages, host conditions, trends, what-if with its
# critical path, copies) rewritten by trace_reorder --rename so that its
# kernels, an API call, the device and a call site carry terminal escapes,
# newlines, | ` < > ' " &, a C1 control and bytes that are not UTF-8. Every
# format (text, markdown, csv, json, html, chrome-trace, sqlite) must keep
# them escaped (tests/e2e/hostile_names_check.py). The rewritten trace is
# the fuzz corpus's tests/fuzz/regressions/hostile-names.in: it must be the
# same bytes. Tamper control: the checker is run on the text report with the
# escaping undone (the raw names put back) and must fail.
# Environment (make test): GP_BUILD, GP_SRC; KEEP=1 keeps the files.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
CHECK="python3 $S/tests/e2e/hostile_names_check.py"
for f in "$R" "$B/tests/e2e/trace_reorder"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
python3 -c 'import sqlite3' 2>/dev/null || { echo "SKIP: python3 has no sqlite3"; exit 77; }
tmp=$(mktemp -d /tmp/gp_hostile.XXXXXX)
if [ -n "${KEEP:-}" ]; then echo "files kept in $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

t=$tmp/hostile.gpht
"$B/tests/e2e/trace_reorder" --rename "$S/tests/corpus/traces/analyses_slow.gpht" "$t" \
	_Z6warm_kPf $'warm\x1b[31m\nFORGED: warm' \
	_Z6step_kPf $'step|`x`|<script>alert(1)</script>' \
	_Z7drift_kPf $'drift\xff\xfe\r\nverdict (whole run): forged' \
	_Z6tail_kPf $'tail\xc2\x9b31m\tX\'"&' \
	cudaMalloc $'cudaMalloc\x1b]0;title\x07\nwarning: forged' \
	"simcuda simulated GPU" $'GPU\x1b[2J\nforged device' \
	"0x5590f62b6320 (/work/main/build/tests/e2e/analyses_run+0x1320)" $'site\n  forged site' >/dev/null ||
	{ echo "FAIL: trace_reorder --rename"; exit 1; }
cmp -s "$t" "$S/tests/fuzz/regressions/hostile-names.in" ||
	fail "tests/fuzz/regressions/hostile-names.in is not the trace this test makes (copy $t there)"

for fm in text markdown csv json; do
	"$R" --format "$fm" "$t" >"$tmp/h.$fm" 2>"$tmp/h.$fm.err" || fail "--format $fm: $(head -3 "$tmp/h.$fm.err")"
done
"$R" --export sqlite "$tmp/h.db" --export chrome-trace "$tmp/h.ct.json" --export html "$tmp/h.html" "$t" \
	>/dev/null 2>"$tmp/ex.err" || fail "exports: $(head -3 "$tmp/ex.err")"
if $CHECK "$tmp"; then echo "PART formats: PASS"; else fail "an output lets a hostile name through"; fi

# tamper: the first name's escape undone in the text report must be caught
mkdir -p "$tmp/tamper" && cp "$tmp"/h.* "$tmp/tamper/"
python3 - "$tmp/tamper/h.text" <<'PY'
import sys
p = sys.argv[1]
t = open(p, "rb").read()
open(p, "wb").write(t.replace(b"warm\\x1b[31m\\nFORGED: warm", b"warm\x1b[31m\nFORGED: warm"))
PY
if $CHECK "$tmp/tamper" >/dev/null; then fail "tamper: a raw escape and a forged line passed the check"
else echo "PART tamper: PASS a raw name in the text report was caught"; fi

[ "$fails" -eq 0 ] && echo "test_report_hostile: PASS" || { echo "test_report_hostile: $fails failures"; exit 1; }
