#!/usr/bin/env bash
# test_cli_record_interrupt.sh — an interrupted `gpuphase record` keeps the
# GPU side of its trace. Specification:
#  * SIGINT sent to record (kill -INT) after N iterations of a program that
#    dies by the signal's default action (tests/e2e/interrupt_loop.cu): record
#    first has the library finish the trace (its control socket's `stop`),
#    then passes the signal on; record returns 130 and says so; the trace is
#    complete (report exit 0, not 3) and holds >= 99 % of the launches the
#    program made (its own count, written each iteration);
#  * the same with Ctrl-C typed on a terminal (a pty, record its foreground
#    job): the program runs in a job of its own, so the Ctrl-C reaches record
#    first, and the trace is complete likewise;
#  * control: when the library cannot serve its control socket (a control
#    directory others can write to), record says it could not finish the
#    capture, and the same checks find the trace incomplete.
set -u
. "$(dirname "$0")/cli_common.sh"
prog=$B/tests/e2e/interrupt_loop
require "$G" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$prog" "$B/bin/gpuphase-report"
env --default-signal=INT true 2>/dev/null ||
	{ echo "SKIP: env --default-signal missing (coreutils < 8.31): a background job here ignores SIGINT"; exit 77; }
export SIMCUDA_CONFIG=$S/examples/launch_bound.simcuda
# The issue's case: Ctrl-C after about 2000 iterations. What the program
# launches between the library's finish and the signal's arrival (the few
# ms the finish takes, longer under a sanitizer) is not captured, by design
# (finish first, then the signal): a fixed handful, well under 1 % there.
N=2000

# wait_count FILE: until the program made N launches (or 30 s passed)
wait_count() {
	for _ in $(seq 1 600); do
		[ -s "$1" ] && [ "$(tr -d ' \n' <"$1")" -ge "$N" ] && return 0
		sleep 0.05
	done
	return 1
}

# check NAME: the trace NAME.gpht is complete and holds >= 99 % of the launches
check() {
	local name=$1 made ops rc
	made=$(tr -d ' \n' <"$tmp/$name.count" 2>/dev/null)
	[ -n "$made" ] || { fail "$name: the program wrote no launch count"; return; }
	"$B/bin/gpuphase-report" "$tmp/$name.gpht" >"$tmp/$name.rep" 2>"$tmp/$name.rep.err"
	rc=$?
	[ "$rc" = 0 ] || { fail "$name: report exit $rc (3 = truncated): $(head -n 3 "$tmp/$name.rep.err")"; return; }
	ops=$(sed -n 's/^  counts .* records, \([0-9]*\) ops.*/\1/p' "$tmp/$name.rep")
	[ -n "$ops" ] || { fail "$name: no counts line: $(head -n 20 "$tmp/$name.rep")"; return; }
	[ $((ops * 100)) -ge $((made * 99)) ] || fail "$name: $ops ops in the trace, $made launches made (< 99 %)"
}

# 1. kill -INT to record (a background job: SIGINT reset for the program)
"$G" record -o "$tmp/kill.gpht" -- env --default-signal=INT "$prog" "$tmp/kill.count" 500 \
	>"$tmp/kill.out" 2>"$tmp/kill.err" &
rec=$!
if wait_count "$tmp/kill.count"; then
	kill -INT "$rec"
	wait "$rec"; rc=$?
	[ "$rc" = 130 ] || fail "SIGINT to record: exit $rc, want 130: $(tail -n 3 "$tmp/kill.err")"
	grep -q "^gpuphase: Interrupt: capture finished (trace complete) before passing it to" "$tmp/kill.err" ||
		fail "SIGINT: record did not finish the capture first: $(cat "$tmp/kill.err")"
	grep -q incomplete "$tmp/kill.err" && fail "SIGINT: summary says incomplete: $(tail -n 1 "$tmp/kill.err")"
	check kill
else
	fail "the program did not reach $N launches: $(cat "$tmp/kill.err")"; kill "$rec"; wait "$rec"
fi

# 2. Ctrl-C on a terminal: record is the foreground job of a pty
cat >"$tmp/ctrlc.py" <<'PY'
import os, pty, sys, time
count, n = sys.argv[1], int(sys.argv[2])
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[3], sys.argv[3:])
out = b""
def drain(t):
    global out
    import select
    end = time.time() + t
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                b = os.read(fd, 4096)
            except OSError:
                return False
            if not b:
                return False
            out += b
    return True
for _ in range(600):
    drain(0.05)
    try:
        if int(open(count).read().strip() or 0) >= n:
            break
    except (OSError, ValueError):
        pass
os.write(fd, b"\x03")
while drain(0.2):
    pass
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
print("exit=%d" % (os.waitstatus_to_exitcode(st)))
PY
timeout 60 python3 "$tmp/ctrlc.py" "$tmp/tty.count" "$N" "$G" record -o "$tmp/tty.gpht" -- "$prog" "$tmp/tty.count" 500 \
	>"$tmp/tty.out" 2>&1
grep -q "^exit=130" "$tmp/tty.out" || fail "Ctrl-C on the terminal: $(tail -n 4 "$tmp/tty.out")"
grep -q "Interrupt: capture finished (trace complete)" "$tmp/tty.out" ||
	fail "Ctrl-C: record did not finish the capture first: $(cat "$tmp/tty.out")"
check tty

# 3. control: no control socket (a directory others can write to)
mkdir -m 777 "$tmp/open"
chmod 777 "$tmp/open"
"$G" record -o "$tmp/ctl.gpht" --control-dir "$tmp/open" -- env --default-signal=INT "$prog" "$tmp/ctl.count" 500 \
	>"$tmp/ctl.out" 2>"$tmp/ctl.err" &
rec=$!
if wait_count "$tmp/ctl.count"; then
	kill -INT "$rec"
	wait "$rec"
	grep -q "the capture could not be finished first" "$tmp/ctl.err" ||
		fail "control: record did not say it could not finish: $(cat "$tmp/ctl.err")"
	fails0=$fails
	check ctl >/dev/null
	[ "$fails" -gt "$fails0" ] || fail "control: the checks passed a trace the library never finished"
	fails=$fails0
else
	fail "control: the program did not reach $N launches"; kill "$rec"; wait "$rec"
fi

finish
