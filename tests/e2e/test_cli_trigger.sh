#!/usr/bin/env bash
# test_cli_trigger.sh — `gpuphase trigger` against the example inference
# server (examples/server) on simcuda. Specification:
#  * the server runs under `gpuphase record --window trigger` with capture
#    idle; requests sent before the trigger are not captured;
#  * `gpuphase trigger PID --status` and `--iters 50` are accepted (exit 0);
#    the control directory is found from the server's own environment;
#  * after more than 50 further requests the trace holds exactly 50
#    iterations of the request sequence: 50 launches of each of the four
#    request kernels (one request = one iteration: it ends with
#    cudaStreamSynchronize, the default marker), and the server's exit status
#    comes back through record; gpuphase report reads the trace;
#  * a process not under gpuphase, and a process that does not exist, get
#    the documented messages and exit 1.
set -u
. "$(dirname "$0")/cli_common.sh"
require "$G" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/server" \
	"$B/examples/server_client" "$B/bin/gpuphase-dump" "$B/bin/gpuphase-report"
export SIMCUDA_CONFIG=$S/examples/server/server.simcuda
sock=$tmp/srv.sock
ctl=$tmp/ctl

"$G" record -w trigger --control-dir "$ctl" -o "$tmp/srv.gpht" -- "$B/examples/server" "$sock" \
	>"$tmp/rec.out" 2>"$tmp/rec.err" &
rec=$!
pid=""
for _ in $(seq 1 600); do # up to 30 s on a loaded machine
	pid=$(sed -n 's/^server: pid \([0-9]*\) listening.*/\1/p' "$tmp/rec.err")
	[ -n "$pid" ] && break
	kill -0 "$rec" 2>/dev/null || break
	sleep 0.05
done
if [ -z "$pid" ]; then
	fail "server did not start: $(cat "$tmp/rec.err")"
	kill "$rec" 2>/dev/null; wait "$rec"; finish; exit 1
fi

# Warm-up load before the trigger: must not be captured.
"$B/examples/server_client" "$sock" -n 20 >"$tmp/c1" 2>&1 || fail "warm-up client failed: $(cat "$tmp/c1")"
ok=0
for _ in $(seq 1 200); do # the library opens its socket on its own thread: retry briefly
	if "$G" trigger "$pid" --status >"$tmp/st" 2>"$tmp/st.err"; then ok=1; break; fi
	sleep 0.05
done
[ "$ok" = 1 ] || fail "trigger --status failed: $(cat "$tmp/st.err")"
grep -q "^gpuphase: $pid: idle" "$tmp/st" || fail "status before the trigger is not idle: $(cat "$tmp/st")"
"$G" trigger "$pid" --iters 50 >"$tmp/tr" 2>"$tmp/tr.err" || fail "trigger --iters 50 failed: $(cat "$tmp/tr.err")"
grep -q "^gpuphase: $pid: " "$tmp/tr" || fail "trigger printed no reply: $(cat "$tmp/tr")"
"$B/examples/server_client" "$sock" -n 120 >"$tmp/c2" 2>&1 || fail "client failed: $(cat "$tmp/c2")"
"$B/examples/server_client" "$sock" -n 0 --quit >/dev/null 2>&1 || fail "quit request failed"
wait "$rec"; rc=$?
[ "$rc" = 0 ] || fail "server under record exited $rc: $(tail -n 5 "$tmp/rec.err")"
grep -Eq "$summary_re" "$tmp/rec.err" || fail "no summary line: $(tail -n 3 "$tmp/rec.err")"

"$B/bin/gpuphase-dump" "$tmp/srv.gpht" >"$tmp/dump" 2>&1 || fail "gpuphase-dump failed: $(tail -n 2 "$tmp/dump")"
for k in srv_embed srv_matmul srv_relu srv_reduce; do
	ids=$(grep "^string .*text=\"[^\"]*$k" "$tmp/dump" | sed 's/^string id=\([0-9]*\) .*/\1/')
	n=0
	for id in $ids; do n=$((n + $(grep -Ec "^kernel .* name=$id( |\$)" "$tmp/dump"))); done
	[ "$n" = 50 ] || fail "$k launched $n times in the captured window, want 50 (iterations triggered)"
done
"$G" report "$tmp/srv.gpht" >"$tmp/report" 2>&1 || fail "gpuphase report failed: $(head -n 3 "$tmp/report")"
grep -q 'srv_matmul' "$tmp/report" || fail "report does not name srv_matmul: $(head -n 20 "$tmp/report")"

# Processes that cannot be triggered.
sleep 30 &
other=$!
"$G" trigger "$other" --iters 5 >/dev/null 2>"$tmp/e"; rc=$?
kill "$other"; wait "$other" 2>/dev/null
[ "$rc" = 1 ] || fail "trigger of a plain process exit $rc, want 1"
grep -q "$other is not running under gpuphase: " "$tmp/e" \
	|| fail "plain process: message was: $(cat "$tmp/e")"
"$G" trigger "$other" --iters 5 >/dev/null 2>"$tmp/e"; rc=$?
[ "$rc" = 1 ] || fail "trigger of a finished process exit $rc, want 1"
grep -q "no process $other" "$tmp/e" || fail "finished process: message was: $(cat "$tmp/e")"

finish
