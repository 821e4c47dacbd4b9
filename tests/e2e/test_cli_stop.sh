#!/usr/bin/env bash
# test_cli_stop.sh — `gpuphase stop PID` and the checks `trigger`/`stop` make
# before talking to a control socket. Specification:
#  * stop ends the capture of a server started with `record --window trigger`
#    and completes its trace while the server runs on: exit 0, the reply names
#    the trace, `gpuphase report` reads it at once as complete (exit 0, not 3),
#    the server keeps serving, and its exit adds nothing (the trace is the
#    same file, still complete); a second stop is refused (exit 1);
#  * every capture has the control socket: stop ends a whole-run capture (no
#    GPUPHASE_WINDOW) likewise, the server runs on and exits 0 with the trace
#    unchanged and complete, and `trigger --status` then says the capture
#    ended;
#  * the library removes only a socket left at <pid>.sock: a regular file
#    there is kept, with one line saying why there is no control socket;
#  * a control directory writable by others, or a symlink, is refused before
#    connecting (exit 1, one line saying why);
#  * a socket served by some process other than PID (SO_PEERCRED) is refused;
#  * a reply with terminal escapes is printed escaped (\x1b), never raw.
set -u
. "$(dirname "$0")/cli_common.sh"
require "$G" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/server" \
	"$B/examples/server_client" "$B/bin/gpuphase-report"
export SIMCUDA_CONFIG=$S/examples/server/server.simcuda
sock=$tmp/srv.sock
ctl=$tmp/ctl

"$G" record -w trigger --control-dir "$ctl" -o "$tmp/srv.gpht" -- "$B/examples/server" "$sock" \
	>"$tmp/rec.out" 2>"$tmp/rec.err" &
rec=$!
pid=""
for _ in $(seq 1 600); do
	pid=$(sed -n 's/^server: pid \([0-9]*\) listening.*/\1/p' "$tmp/rec.err")
	[ -n "$pid" ] && break
	kill -0 "$rec" 2>/dev/null || break
	sleep 0.05
done
if [ -z "$pid" ]; then
	fail "server did not start: $(cat "$tmp/rec.err")"
	kill "$rec" 2>/dev/null; wait "$rec"; finish; exit 1
fi
ok=0
for _ in $(seq 1 200); do
	if "$G" trigger "$pid" --seconds 60 >"$tmp/tr" 2>"$tmp/tr.err"; then ok=1; break; fi
	sleep 0.05
done
[ "$ok" = 1 ] || fail "trigger --seconds 60 failed: $(cat "$tmp/tr.err")"
"$B/examples/server_client" "$sock" -n 30 >"$tmp/c1" 2>&1 || fail "client failed: $(cat "$tmp/c1")"
"$G" stop "$pid" >"$tmp/stop" 2>"$tmp/stop.err"
rc=$?
[ "$rc" = 0 ] || fail "stop exit $rc: $(cat "$tmp/stop.err")"
grep -q "^gpuphase: $pid: capture ended, trace complete: .*srv.gpht" "$tmp/stop" ||
	fail "stop reply: $(cat "$tmp/stop") $(cat "$tmp/stop.err")"
kill -0 "$pid" 2>/dev/null || fail "the server did not run on after stop"
"$B/bin/gpuphase-report" "$tmp/srv.gpht" >"$tmp/rep1" 2>"$tmp/rep1.err"
rc=$?
[ "$rc" = 0 ] || fail "report right after stop: exit $rc (3 = truncated): $(cat "$tmp/rep1.err")"
grep -q srv_matmul "$tmp/rep1" || fail "the stopped trace has no srv_matmul: $(head -n 20 "$tmp/rep1")"
sum1=$(sha256sum <"$tmp/srv.gpht")
"$B/examples/server_client" "$sock" -n 10 >"$tmp/c2" 2>&1 || fail "the server stopped serving after stop"
"$G" stop "$pid" >/dev/null 2>"$tmp/stop2.err"
rc=$?
[ "$rc" = 1 ] || fail "second stop: exit $rc, want 1 ($(cat "$tmp/stop2.err"))"
"$B/examples/server_client" "$sock" -n 0 --quit >/dev/null 2>&1 || fail "quit request failed"
wait "$rec"; rc=$?
[ "$rc" = 0 ] || fail "server under record exited $rc: $(tail -n 5 "$tmp/rec.err")"
[ "$(sha256sum <"$tmp/srv.gpht")" = "$sum1" ] || fail "the trace changed after stop"

# start_server NAME [record options]: record the server; sets rec, pid
start_server() {
	local name=$1
	shift
	"$G" record "$@" -o "$tmp/$name.gpht" -- "$B/examples/server" "$tmp/$name.sock" \
		>"$tmp/$name.out" 2>"$tmp/$name.err" &
	rec=$!
	pid=""
	for _ in $(seq 1 600); do
		pid=$(sed -n 's/^server: pid \([0-9]*\) listening.*/\1/p' "$tmp/$name.err")
		[ -n "$pid" ] && break
		kill -0 "$rec" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$pid" ] || fail "$name: server did not start: $(cat "$tmp/$name.err")"
}

# A whole-run capture: stop, then status says it ended.
start_server whole --control-dir "$ctl"
if [ -n "$pid" ]; then
	"$B/examples/server_client" "$tmp/whole.sock" -n 20 >/dev/null 2>&1 || fail "whole: client failed"
	"$G" stop "$pid" >"$tmp/wstop" 2>"$tmp/wstop.err"
	rc=$?
	[ "$rc" = 0 ] || fail "stop of a whole-run capture: exit $rc: $(cat "$tmp/wstop.err")"
	grep -q "^gpuphase: $pid: capture ended, trace complete: .*whole.gpht" "$tmp/wstop" ||
		fail "whole: stop reply: $(cat "$tmp/wstop") $(cat "$tmp/wstop.err")"
	"$G" trigger "$pid" --status >"$tmp/wst" 2>"$tmp/wst.err" ||
		fail "whole: status after stop failed: $(cat "$tmp/wst.err")"
	grep -q "^gpuphase: $pid: ended (gpuphase stop): trace complete: .*whole.gpht" "$tmp/wst" ||
		fail "whole: status after stop: $(cat "$tmp/wst") $(cat "$tmp/wst.err")"
	"$G" trigger "$pid" --iters 5 >/dev/null 2>"$tmp/wtr.err" && fail "whole: trigger after stop accepted"
	grep -q "capture ended" "$tmp/wtr.err" || fail "whole: trigger after stop: $(cat "$tmp/wtr.err")"
	wsum=$(sha256sum <"$tmp/whole.gpht")
	"$B/examples/server_client" "$tmp/whole.sock" -n 10 >/dev/null 2>&1 || fail "whole: no serving after stop"
	"$B/examples/server_client" "$tmp/whole.sock" -n 0 --quit >/dev/null 2>&1 || fail "whole: quit failed"
	wait "$rec"; rc=$?
	[ "$rc" = 0 ] || fail "whole: server exited $rc: $(tail -n 5 "$tmp/whole.err")"
	[ "$(sha256sum <"$tmp/whole.gpht")" = "$wsum" ] || fail "whole: the trace changed after stop"
	"$B/bin/gpuphase-report" "$tmp/whole.gpht" >/dev/null 2>"$tmp/wrep.err" ||
		fail "whole: report exit $? (3 = truncated): $(cat "$tmp/wrep.err")"
	[ -e "$ctl/$pid.sock" ] && fail "whole: the socket outlived the process"
fi

# A regular file at <pid>.sock is not the library's to remove: sh writes it
# for its own pid and execs the server (same pid), which then starts capture.
"$G" record -w trigger --control-dir "$ctl" -o "$tmp/reg.gpht" -- sh -c \
	'echo mine >"$1/$$.sock"; exec "$2" "$3"' sh "$ctl" "$B/examples/server" "$tmp/reg.sock" \
	>"$tmp/reg.out" 2>"$tmp/reg.err" &
rec=$!
pid=""
for _ in $(seq 1 600); do
	pid=$(sed -n 's/^server: pid \([0-9]*\) listening.*/\1/p' "$tmp/reg.err")
	[ -n "$pid" ] && break
	kill -0 "$rec" 2>/dev/null || break
	sleep 0.05
done
if [ -n "$pid" ]; then
	"$B/examples/server_client" "$tmp/reg.sock" -n 2 >/dev/null 2>&1 || fail "reg: client failed"
	[ "$(cat "$ctl/$pid.sock" 2>/dev/null)" = mine ] || fail "a regular file at $pid.sock was removed or changed"
	[ "$(grep -c "$pid.sock exists and is not a socket: not removing it" "$tmp/reg.err")" = 1 ] ||
		fail "reg: not one line saying why: $(cat "$tmp/reg.err")"
	"$B/examples/server_client" "$tmp/reg.sock" -n 0 --quit >/dev/null 2>&1
	wait "$rec"
	[ "$(cat "$ctl/$pid.sock" 2>/dev/null)" = mine ] || fail "the regular file at $pid.sock went at exit"
	rm -f "$ctl/$pid.sock"
else
	fail "reg: server did not start: $(cat "$tmp/reg.err")"; kill "$rec"; wait "$rec"
fi

# Hostile neighbours. A fake "target": a Python process that serves
# DIR/<its own pid>.sock and answers with terminal escapes.
cat >"$tmp/fake.py" <<'EOF'
import os, socket, sys
d = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(os.path.join(d, "%d.sock" % os.getpid()))
s.listen(4)
print(os.getpid(), flush=True)
while True:
    c, _ = s.accept()
    try:
        c.recv(256)
        c.sendall(b"ok \x1b[2J\x1b]0;pwned\x07 done\n")
    except OSError:
        pass
    c.close()
EOF
fake_dir=$tmp/fake
mkdir -m 700 "$fake_dir"
python3 "$tmp/fake.py" "$fake_dir" >"$tmp/fake.pid" &
fake=$!
for _ in $(seq 1 100); do [ -s "$tmp/fake.pid" ] && break; sleep 0.05; done
fpid=$(cat "$tmp/fake.pid")
"$G" trigger "$fpid" --status --control-dir "$fake_dir" >"$tmp/esc" 2>"$tmp/esc.err" ||
	fail "trigger of the fake target failed: $(cat "$tmp/esc.err")"
grep -q $'\x1b' "$tmp/esc" && fail "a raw escape reached the terminal: $(od -c "$tmp/esc" | head -3)"
grep -qF '\x1b[2J\x1b]0;pwned\x07 done' "$tmp/esc" || fail "reply not shown escaped: $(cat "$tmp/esc")"
# the same socket, but named for another process: not served by that pid
sleep 30 &
other=$!
ln "$fake_dir/$fpid.sock" "$fake_dir/$other.sock" 2>/dev/null || cp -a "$fake_dir/$fpid.sock" "$fake_dir/$other.sock"
"$G" stop "$other" --control-dir "$fake_dir" >/dev/null 2>"$tmp/peer.err"
rc=$?
[ "$rc" = 1 ] || fail "a socket served by another process: exit $rc, want 1"
grep -q "is not served by process $other" "$tmp/peer.err" || fail "peer check: $(cat "$tmp/peer.err")"
# a directory others can write to
chmod 777 "$fake_dir"
"$G" trigger "$fpid" --status --control-dir "$fake_dir" >/dev/null 2>"$tmp/mode.err"
rc=$?
[ "$rc" = 1 ] || fail "a world-writable control dir: exit $rc, want 1"
grep -q "writable by others" "$tmp/mode.err" || fail "mode check: $(cat "$tmp/mode.err")"
[ "$(grep -c . "$tmp/mode.err")" = 1 ] || fail "mode check: not one line: $(cat "$tmp/mode.err")"
chmod 700 "$fake_dir"
# a symlink to the directory
ln -s "$fake_dir" "$tmp/link"
"$G" trigger "$fpid" --status --control-dir "$tmp/link" >/dev/null 2>"$tmp/link.err"
rc=$?
[ "$rc" = 1 ] || fail "a symlinked control dir: exit $rc, want 1"
grep -q "is not a directory" "$tmp/link.err" || fail "symlink check: $(cat "$tmp/link.err")"
kill "$fake" "$other" 2>/dev/null
wait "$fake" "$other" 2>/dev/null

finish
