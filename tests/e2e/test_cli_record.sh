#!/usr/bin/env bash
# test_cli_record.sh — `gpuphase record` end to end on simcuda, then
# `gpuphase report` on what it wrote. Specification:
#  * the launch-bound example under record: same exit status and the same
#    stdout as without it; the last stderr line is the one summary line, whose
#    size is the file's size, whose records and drops are what
#    gpuphase-dump reads from the file, and the trace holds exactly the
#    kernels simcuda's ground truth (SIMCUDA_TRUTH) says ran;
#  * gpuphase report reads it and calls it launch-bound (the example's
#    documented profile); diff and export (html, chrome-trace, sqlite) reach
#    gpuphase-report and write files of the right kind; report without a
#    trace argument reads the newest gpuphase-*.gpht in the directory;
#  * exit status passthrough: N from exit(N), 128+N for signal N, 127 for a
#    missing command; options arrive as GPUPHASE_* variables, LD_PRELOAD is
#    appended to, not replaced, and the environment of gpuphase itself is not
#    what the command gets;
#  * warnings before running: another tool's CUDA_INJECTION64_PATH (kept),
#    an output directory that cannot be written;
#  * a fixed output name that exists is kept as NAME.old.
set -u
. "$(dirname "$0")/cli_common.sh"
require "$G" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/launch_bound" \
	"$B/bin/gpuphase-dump" "$B/bin/gpuphase-report" "$B/tests/cli_app_shared"
LIB=$(realpath "$B/lib/libgpuphase.so")

# --- launch_bound: record -> summary -> dump -> truth -> report
export SIMCUDA_CONFIG=$S/examples/launch_bound.simcuda
"$B/examples/launch_bound" >"$tmp/plain.out" 2>/dev/null; rc0=$?
SIMCUDA_TRUTH=$tmp/truth.jsonl "$G" record -o "$tmp/lb.gpht" -- "$B/examples/launch_bound" \
	>"$tmp/rec.out" 2>"$tmp/rec.err"; rc1=$?
[ "$rc1" = "$rc0" ] || fail "launch_bound exit $rc1 under record, $rc0 without"
cmp -s "$tmp/plain.out" "$tmp/rec.out" || fail "launch_bound stdout differs under record"
n=$(grep -c '^gpuphase: trace ' "$tmp/rec.err")
[ "$n" = 1 ] || fail "want one summary line, got $n: $(cat "$tmp/rec.err")"
last=$(tail -n 1 "$tmp/rec.err")
if [[ "$last" =~ $summary_re ]]; then
	file=${BASH_REMATCH[1]} mib=${BASH_REMATCH[2]} recs=${BASH_REMATCH[3]} drops=${BASH_REMATCH[4]}
	[ "$file" = "$tmp/lb.gpht" ] || fail "summary names $file, want $tmp/lb.gpht"
	want_mib=$(awk -v s="$(stat -c %s "$tmp/lb.gpht")" 'BEGIN { printf "%.2f", s / 1048576 }')
	[ "$mib" = "$want_mib" ] || fail "summary says $mib MiB, the file has $want_mib MiB"
	"$B/bin/gpuphase-dump" "$tmp/lb.gpht" >"$tmp/dump" 2>&1 || fail "gpuphase-dump failed: $(tail -n 2 "$tmp/dump")"
	end=$(grep '^# end ' "$tmp/dump")
	d_recs=$(echo "$end" | sed -n 's/.* records=\([0-9]*\).*/\1/p')
	d_drops=$(( $(echo "$end" | sed -n 's/.* dropped_ring=\([0-9]*\).*/\1/p') + \
		    $(echo "$end" | sed -n 's/.* dropped_cupti=\([0-9]*\).*/\1/p') ))
	[ "$recs" = "$d_recs" ] || fail "summary says $recs records, gpuphase-dump reads $d_recs"
	[ "$drops" = "$d_drops" ] || fail "summary says $drops dropped, the footer says $d_drops"
	[ "$recs" -gt 0 ] || fail "empty trace"
	k_trace=$(grep -c '^kernel ' "$tmp/dump")
	k_truth=$(grep -c '"type":"kernel"' "$tmp/truth.jsonl")
	[ "$k_truth" -gt 0 ] || fail "simcuda truth holds no kernels"
	[ "$k_trace" = "$k_truth" ] || fail "trace holds $k_trace kernels, simcuda ran $k_truth (drops: $drops)"
else
	fail "last stderr line is not the summary: '$last'"
fi
"$G" report "$tmp/lb.gpht" >"$tmp/report" 2>"$tmp/report.err"; rc=$?
[ "$rc" = 0 ] || fail "gpuphase report exit $rc: $(head -n 3 "$tmp/report.err")"
grep -qi 'launch-bound' "$tmp/report" || fail "report of launch_bound has no launch-bound verdict: $(head -n 30 "$tmp/report")"
# The report tool's other verbs, through gpuphase.
"$G" diff "$tmp/lb.gpht" "$tmp/lb.gpht" >"$tmp/diff" 2>&1 || fail "gpuphase diff of a trace with itself failed: $(head -n 3 "$tmp/diff")"
grep -q 'tiny_add' "$tmp/diff" || fail "diff does not name the kernel: $(head -n 10 "$tmp/diff")"
"$G" export html "$tmp/lb.html" "$tmp/lb.gpht" >/dev/null 2>&1 || fail "gpuphase export html failed"
grep -qi '<html' "$tmp/lb.html" 2>/dev/null || fail "export html wrote no HTML page"
"$G" export chrome-trace "$tmp/lb.json" "$tmp/lb.gpht" >/dev/null 2>&1 || fail "gpuphase export chrome-trace failed"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/lb.json" 2>/dev/null || fail "chrome-trace export is not JSON"
"$G" export sqlite "$tmp/lb.db" "$tmp/lb.gpht" >/dev/null 2>&1 || fail "gpuphase export sqlite failed"
[ "$(head -c 15 "$tmp/lb.db" 2>/dev/null)" = "SQLite format 3" ] || fail "sqlite export is not a SQLite database"
"$G" export html "$tmp/only.html" >/dev/null 2>"$tmp/e"; rc=$?
[ "$rc" = 2 ] && grep -q 'need FORMAT, OUT and at least one TRACE' "$tmp/e" || fail "export without a trace: exit $rc, $(cat "$tmp/e")"
# No trace argument: the newest gpuphase-*.gpht in the current directory.
mkdir "$tmp/cwd" && cp "$tmp/lb.gpht" "$tmp/cwd/gpuphase-old-1.gpht" && sleep 0.05 && cp "$tmp/lb.gpht" "$tmp/cwd/gpuphase-new-2.gpht"
(cd "$tmp/cwd" && "$G" report) >"$tmp/r0" 2>"$tmp/e0" || fail "gpuphase report without a trace failed: $(cat "$tmp/e0")"
grep -q 'reading the newest, gpuphase-new-2.gpht' "$tmp/e0" || fail "report did not pick the newest trace: $(cat "$tmp/e0")"
unset SIMCUDA_CONFIG

# --- exit status passthrough
"$G" record -q -o "$tmp/x1.gpht" -- "$B/tests/cli_app_shared" 3 2 >/dev/null 2>"$tmp/e"; rc=$?
[ "$rc" = 3 ] || fail "CUDA app exiting 3: record returned $rc ($(cat "$tmp/e"))"
"$G" record -q -o "$tmp/x2.gpht" -- sh -c 'exit 42' 2>/dev/null; rc=$?
[ "$rc" = 42 ] || fail "sh exit 42: record returned $rc"
"$G" record -q -o "$tmp/x3.gpht" -- sh -c 'kill -TERM $$' 2>"$tmp/e"; rc=$?
[ "$rc" = 143 ] || fail "killed by SIGTERM: record returned $rc, want 143"
grep -q 'killed by signal 15' "$tmp/e" || fail "no 'killed by signal' line: $(cat "$tmp/e")"
"$G" record -o "$tmp/x4.gpht" -- "$tmp/no-such-program" 2>"$tmp/e"; rc=$?
[ "$rc" = 127 ] || fail "missing program: record returned $rc, want 127"
grep -q 'gpuphase: trace\|no trace written' "$tmp/e" && fail "summary printed for a program that never ran"
"$G" record -o "$tmp/x5.gpht" -- false 2>/dev/null; rc=$?
[ "$rc" = 1 ] || fail "false: record returned $rc"

# --- options become variables, for the command only; LD_PRELOAD appended
pre_before=${LD_PRELOAD:-}
env -u GPUPHASE_WINDOW LD_PRELOAD="${pre_before:+$pre_before:}/lib/x86_64-linux-gnu/libc.so.6" \
	"$G" record -q -o "$tmp/env-%p.gpht" -w skip=2,iters=3 -m kernel:cli_* -s off --ring-records 1024 \
	--flush-ms 10 --max-size 1M --stack-depth 8 --log error --nvtx -- env >"$tmp/env" 2>"$tmp/e" \
	|| fail "record -- env failed: $(cat "$tmp/e")"
for kv in "GPUPHASE_OUTPUT=$tmp/env-%p.gpht" GPUPHASE_WINDOW=skip=2,iters=3 GPUPHASE_ITER_MARKER=kernel:cli_* \
	  GPUPHASE_STACKS=off GPUPHASE_RING_RECORDS=1024 GPUPHASE_FLUSH_MS=10 GPUPHASE_MAX_BYTES=1048576 \
	  GPUPHASE_STACK_DEPTH=8 GPUPHASE_LOG=error "CUDA_INJECTION64_PATH=$LIB" "NVTX_INJECTION64_PATH=$LIB" \
	  "LD_PRELOAD=${pre_before:+$pre_before:}/lib/x86_64-linux-gnu/libc.so.6:$LIB"; do
	grep -qxF -- "$kv" "$tmp/env" || fail "command's environment lacks $kv: $(grep -E 'GPUPHASE|INJECTION|PRELOAD' "$tmp/env")"
done
"$G" record -q -o "$tmp/env2.gpht" -- env >"$tmp/env2" 2>/dev/null
grep -q '^NVTX_INJECTION64_PATH=' "$tmp/env2" && fail "NVTX_INJECTION64_PATH set without --nvtx"
grep -q '^GPUPHASE_WINDOW=' "$tmp/env2" && fail "GPUPHASE_WINDOW set without --window"
[ "${LD_PRELOAD:-}" = "$pre_before" ] || fail "this shell's LD_PRELOAD changed"

# --- warnings, before the command runs
CUDA_INJECTION64_PATH=/opt/other-tool/libinject.so "$G" record -o "$tmp/w1.gpht" -- \
	sh -c 'echo "RUN inj=$CUDA_INJECTION64_PATH" >&2' 2>"$tmp/e"
grep -n 'warning: another tool holds CUDA injection' "$tmp/e" >/dev/null || fail "no other-profiler warning: $(cat "$tmp/e")"
grep -q 'RUN inj=/opt/other-tool/libinject.so' "$tmp/e" || fail "the other tool's CUDA_INJECTION64_PATH was not kept"
w=$(grep -n 'another tool' "$tmp/e" | cut -d: -f1); r=$(grep -n '^RUN' "$tmp/e" | cut -d: -f1)
[ -n "$w" ] && [ -n "$r" ] && [ "$w" -lt "$r" ] || fail "warning not printed before the command ran"
NSYS_PROFILING_SESSION_ID=7 "$G" record -o "$tmp/w2.gpht" -- true 2>"$tmp/e"
grep -q 'warning: running under another CUDA profiler (NSYS_PROFILING_SESSION_ID is set)' "$tmp/e" \
	|| fail "no warning under nsys: $(cat "$tmp/e")"
"$G" record -o /proc/gp-cannot-write.gpht -- sh -c 'echo RUN >&2' 2>"$tmp/e"
grep -q 'warning: output directory /proc is not writable' "$tmp/e" || fail "no unwritable-directory warning: $(cat "$tmp/e")"
w=$(grep -n 'not writable' "$tmp/e" | cut -d: -f1); r=$(grep -n '^RUN' "$tmp/e" | cut -d: -f1)
[ -n "$w" ] && [ -n "$r" ] && [ "$w" -lt "$r" ] || fail "directory warning not printed before the command ran"
"$G" record -o "$tmp/missing-dir/x.gpht" -- true 2>"$tmp/e"
grep -q "warning: output directory $tmp/missing-dir: No such file" "$tmp/e" || fail "no missing-directory warning: $(cat "$tmp/e")"
# a program without CUDA calls: the summary names the file pattern it looked for, expanded
"$G" record -o "$tmp/none-%p-%%.gpht" -- true 2>"$tmp/e"
grep -qF "gpuphase: no trace written (no new file matches $tmp/none-*-%.gpht, from the output pattern $tmp/none-%p-%%.gpht): the program made no CUDA calls" "$tmp/e" \
	|| fail "no-trace line does not name the file pattern: $(cat "$tmp/e")"

# --- patterns: %p expands to the program's pid; two processes give one line for two traces
"$G" record -o "$tmp/pat-%p.gpht" -- "$B/tests/cli_app_shared" 0 2 >/dev/null 2>"$tmp/e"
last=$(tail -n 1 "$tmp/e")
if [[ "$last" =~ $summary_re ]]; then
	f=${BASH_REMATCH[1]}
	[[ "$f" =~ ^$tmp/pat-[0-9]+\.gpht$ ]] && [ -s "$f" ] || fail "pattern run names '$f'"
else
	fail "pattern run: last line is not the summary: $last"
fi
printf '#!/bin/sh\n"%s" 0 2\n"%s" 0 2\n' "$B/tests/cli_app_shared" "$B/tests/cli_app_shared" >"$tmp/two.sh"
chmod +x "$tmp/two.sh"
"$G" record -o "$tmp/two-%p.gpht" -- "$tmp/two.sh" >/dev/null 2>"$tmp/e"
n=$(ls "$tmp"/two-*.gpht 2>/dev/null | wc -l)
[ "$n" = 2 ] || fail "two CUDA processes wrote $n traces"
grep -Eq "^gpuphase: 2 traces \($tmp/two-[0-9]+\.gpht, $tmp/two-[0-9]+\.gpht\), [0-9]+\.[0-9]{2} MiB, [0-9]+ records, [0-9]+ dropped$" "$tmp/e" \
	|| fail "two traces: summary was: $(tail -n 1 "$tmp/e")"
[ "$(grep -c '^gpuphase: ' "$tmp/e")" = 1 ] || fail "two traces: more than one gpuphase line: $(cat "$tmp/e")"

# --- an existing fixed output name is kept as .old; -f replaces it
"$G" record -q -o "$tmp/twice.gpht" -- "$B/tests/cli_app_shared" 0 2 >/dev/null 2>&1
[ -s "$tmp/twice.gpht" ] || fail "first run wrote no $tmp/twice.gpht"
"$G" record -o "$tmp/twice.gpht" -- "$B/tests/cli_app_shared" 0 2 >/dev/null 2>"$tmp/e"
grep -q "moved to $tmp/twice.gpht.old" "$tmp/e" || fail "no .old note: $(cat "$tmp/e")"
[ -s "$tmp/twice.gpht.old" ] && [ -s "$tmp/twice.gpht" ] || fail "want both twice.gpht and twice.gpht.old"
"$G" record -f -o "$tmp/twice.gpht" -- "$B/tests/cli_app_shared" 0 2 >/dev/null 2>"$tmp/e"
grep -q "moved to" "$tmp/e" && fail "-f still moved the old file"
grep -Eq "$summary_re" "$tmp/e" || fail "-f run: no summary: $(cat "$tmp/e")"

finish
