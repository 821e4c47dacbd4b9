#!/usr/bin/env bash
# test_cli_record_finish.sh — how a recorded run ends (README "Profiling your
# program"):
#  * SIGTERM sent to `gpuphase record`, and SIGINT sent to it alone (kill
#    -INT: not from the terminal, which signals the program itself), are
#    forwarded to the program; a program that exits on them (examples/server)
#    lets the library finish: the trace is complete (report exit 0, not 3)
#    and record returns the program's status;
#  * a program killed outright (SIGKILL) leaves a trace without footer:
#    record says it was killed and exactly what was lost;
#  * `record --report[=OPTS]` prints the report of the run's trace on stdout
#    right after the run (like nsys --stats) with OPTS passed on, and still
#    returns the program's exit status.
set -u
. "$(dirname "$0")/cli_common.sh"
require "$G" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/server" \
	"$B/examples/server_client" "$B/examples/sync_bound" "$B/bin/gpuphase-report"

# start_server NAME: record the server into $tmp/NAME.gpht; sets rec, pid
start_server() {
	SIMCUDA_CONFIG=$S/examples/server/server.simcuda "$G" record -o "$tmp/$1" -- "$B/examples/server" \
		"$tmp/$1.sock" >"$tmp/$1.out" 2>"$tmp/$1.err" &
	rec=$!
	pid=""
	for _ in $(seq 1 600); do
		pid=$(sed -n 's/^server: pid \([0-9]*\) listening.*/\1/p' "$tmp/$1.err")
		[ -n "$pid" ] && break
		kill -0 "$rec" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$pid" ] || fail "$1: server did not start: $(cat "$tmp/$1.err")"
	"$B/examples/server_client" "$tmp/$1.sock" -n 20 >/dev/null 2>&1 || fail "$1: client failed"
}

for sig in TERM INT; do
	start_server "s$sig"
	[ -n "$pid" ] || continue
	kill -"$sig" "$rec"
	wait "$rec"; rc=$?
	[ "$rc" = 0 ] || fail "SIG$sig to record: exit $rc, want the server's 0: $(tail -n 3 "$tmp/s$sig.err")"
	kill -0 "$pid" 2>/dev/null && { fail "SIG$sig was not forwarded: the server still runs"; kill "$pid"; }
	grep -Eq "$summary_re" "$tmp/s$sig.err" || fail "SIG$sig: no summary: $(tail -n 3 "$tmp/s$sig.err")"
	grep -q incomplete "$tmp/s$sig.err" && fail "SIG$sig: the trace is incomplete: $(tail -n 2 "$tmp/s$sig.err")"
	"$B/bin/gpuphase-report" "$tmp/s$sig.gpht" >/dev/null 2>"$tmp/r.err"
	rc=$?
	[ "$rc" = 0 ] || fail "SIG$sig: report exit $rc (3 = truncated): $(cat "$tmp/r.err")"
done

start_server skill
if [ -n "$pid" ]; then
	sleep 0.3 # let the writer put a block on disk
	kill -KILL "$pid"
	wait "$rec"; rc=$?
	[ "$rc" = 137 ] || fail "SIGKILL: record exit $rc, want 137"
	grep -q "was killed by signal 9 .*what was lost is said below" "$tmp/skill.err" ||
		fail "SIGKILL: no kill message: $(tail -n 3 "$tmp/skill.err")"
	grep -q "incomplete (no footer.*lost: the records of the last flush interval" "$tmp/skill.err" ||
		fail "SIGKILL: the summary does not say what was lost: $(tail -n 2 "$tmp/skill.err")"
fi

SIMCUDA_CONFIG=$S/examples/sync_bound.simcuda "$G" record -o "$tmp/rep" --report='--top 2 --format csv' -- \
	"$B/examples/sync_bound" >"$tmp/rep.out" 2>"$tmp/rep.err"
rc=$?
[ "$rc" = 0 ] || fail "record --report: exit $rc: $(tail -n 3 "$tmp/rep.err")"
head -1 "$tmp/rep.out" | grep -q "^operator," || grep -q "^operator," "$tmp/rep.out" ||
	fail "record --report='--format csv': no CSV report on stdout: $(head -5 "$tmp/rep.out")"
[ "$(grep -c . "$tmp/rep.out")" -ge 2 ] || fail "record --report: report too short: $(cat "$tmp/rep.out")"
SIMCUDA_CONFIG=$S/examples/sync_bound.simcuda "$G" record -q -o "$tmp/rep2" --report -- sh -c "\"$B/examples/sync_bound\" >/dev/null; exit 5" \
	>"$tmp/rep2.out" 2>"$tmp/rep2.err"
rc=$?
[ "$rc" = 5 ] || fail "record --report: exit $rc, want the program's 5"
grep -q "verdict" "$tmp/rep2.out" || fail "record --report: no text report: $(head -5 "$tmp/rep2.out")"

finish
