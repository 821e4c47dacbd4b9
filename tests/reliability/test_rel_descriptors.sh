#!/usr/bin/env bash
# test_rel_descriptors.sh — the files the library opens in a profiled program
# (docs/reliability.md, "Descriptors and special files"):
#   - a program started with stdin, stdout and stderr closed (daemons, cron,
#     `>&- 2>&-`): the trace never takes descriptor 0, 1 or 2, so the
#     program's own writes never land in it and the trace stays whole;
#   - GPUPHASE_LOG=info:FIFO: refused in one line, no hang before main;
#   - GPUPHASE_CUPTI_LIB naming a FIFO, a missing file or a library without
#     CUPTI's symbols: one error line at
#     the default log level (it costs all GPU timing), no hang; the run goes
#     on hook-only;
#   - gpuphase-report given a FIFO: refuses at once, names the problem.
# Every run is bounded by a timeout: a hang is a failure.
. "$(dirname "$0")/rel_common.sh"

N=200
bare=$(rel_dir bare)
rel_run "$bare" bare -- "$REL_PROG" basic $N 0
first=$(head -n 1 "$bare/.out")
[ -n "$first" ]
rel_check $? "the bare run printed nothing"

# 1. closed standard descriptors: stdout; stdout and stderr; all three
for closed in '>&-' '>&- 2>&-' '<&- >&- 2>&-'; do
	d=$(rel_dir closed)
	rel_run "$d" pre GPUPHASE_OUTPUT=t.gpht -- sh -c "exec \"\$0\" \"\$@\" $closed" "$REL_PROG" basic $N 0
	[ "$(cat "$d/.rc")" = "$(cat "$bare/.rc")" ]
	rel_check $? "closed ($closed): exit status $(cat "$d/.rc"), bare $(cat "$bare/.rc")"
	if [ -e "$d/t.gpht" ]; then
		! grep -aqF "$first" "$d/t.gpht"
		rel_check $? "closed ($closed): the program's stdout was written into the trace"
		"$REL_REPORT" --format json "$d/t.gpht" >"$d/r.json" 2>"$d/r.err"
		rel_check $? "closed ($closed): the trace does not read back whole: $(head -2 "$d/r.err" | tr '\n' ' ')"
	else
		rel_fail "closed ($closed): no trace written"
	fi
done

# 2. a FIFO as the log file
d=$(rel_dir logfifo)
mkfifo "$d/log.fifo"
REL_TIMEOUT=20 rel_run "$d" pre GPUPHASE_OUTPUT=t.gpht GPUPHASE_LOG="info:$d/log.fifo" -- "$REL_PROG" basic $N 0
[ "$(cat "$d/.rc")" = 0 ]
rel_check $? "log FIFO: exit status $(cat "$d/.rc") (124 = hung)"
[ "$(grep -c "^gpuphase: cannot open log file $d/log.fifo: not a regular file" "$d/.err")" = 1 ]
rel_check $? "log FIFO: no single 'not a regular file' line: $(head -3 "$d/.err" | tr '\n' '|')"
cmp -s "$bare/.out" "$d/.out"
rel_check $? "log FIFO: stdout differs from the bare run"

# 3. GPUPHASE_CUPTI_LIB: a FIFO, a missing file — at the default log level
d=$(rel_dir cuptififo)
mkfifo "$d/cupti.fifo"
REL_TIMEOUT=20 rel_run "$d" pre GPUPHASE_OUTPUT=t.gpht GPUPHASE_CUPTI_LIB="$d/cupti.fifo" -- "$REL_PROG" basic $N 0
[ "$(cat "$d/.rc")" = 0 ]
rel_check $? "CUPTI FIFO: exit status $(cat "$d/.rc") (124 = hung)"
[ "$(grep -c "^gpuphase: cannot load $d/cupti.fifo: not a regular file" "$d/.err")" = 1 ]
rel_check $? "CUPTI FIFO: no error line at the default level: $(head -3 "$d/.err" | tr '\n' '|')"
[ -e "$d/t.gpht" ]
rel_check $? "CUPTI FIFO: no hook-only trace written"
d=$(rel_dir cuptimissing)
rel_run "$d" pre GPUPHASE_OUTPUT=t.gpht GPUPHASE_CUPTI_LIB=/nonexistent/libcupti.so.13 -- "$REL_PROG" basic $N 0
[ "$(grep -c '^gpuphase: cannot load /nonexistent/libcupti.so.13: ' "$d/.err")" = 1 ]
rel_check $? "CUPTI missing: no error line at the default level: $(head -3 "$d/.err" | tr '\n' '|')"
cmp -s "$bare/.out" "$d/.out"
rel_check $? "CUPTI missing: stdout differs from the bare run"
# a library that loads but is no CUPTI (no cuptiSubscribe): as loud as a
# missing one, not a quiet fall back to hook-only capture
d=$(rel_dir cuptinotcupti)
rel_run "$d" pre GPUPHASE_OUTPUT=t.gpht GPUPHASE_CUPTI_LIB=libm.so.6 -- "$REL_PROG" basic $N 0
[ "$(grep -c '^gpuphase: cannot use libm.so.6: symbol cuptiSubscribe missing; hook-only capture' "$d/.err")" = 1 ]
rel_check $? "CUPTI without its symbols: no error line at the default level: $(head -3 "$d/.err" | tr '\n' '|')"
[ -e "$d/t.gpht" ]
rel_check $? "CUPTI without its symbols: no hook-only trace written"

# 4. the report given a FIFO
d=$(rel_dir reportfifo)
mkfifo "$d/t.gpht"
timeout -k 2 10 "$REL_REPORT" "$d/t.gpht" >"$d/r.out" 2>"$d/r.err"
rc=$?
[ "$rc" = 2 ]
rel_check $? "report of a FIFO: exit $rc (124 = hung), expected 2"
grep -q "not a regular file" "$d/r.err"
rel_check $? "report of a FIFO: the message does not say 'not a regular file': $(head -2 "$d/r.err" | tr '\n' ' ')"

rel_done
