#!/usr/bin/env bash
# test_attach_duty_cycle.sh — `gpuphase attach PID --every 300ms --duration
# 100ms` (docs/attach.md, docs/always-on.md): the example server, started
# WITHOUT gpuphase on simcuda, put under the duty cycle while a client sends
# ~2 s of requests.
#   windows  several <output>.windows/w<SEQ>.gpht, numbered from 1, no .part
#            left, each reported alone; per-window operator counts against
#            simcuda's truth (duty_common.sh, as test_duty_cycle does), with
#            its tamper control (windows moved by one period refused)
#   agent    while attached, the process is found through the control
#            directory: `gpuphase agent --once` reduces its windows, and its
#            series equal the reports of the windows it says it reduced
#            (agent_check.py: ops exact, seconds within 1 %); tamper: the
#            same series against the reports less their first window
#            refused. Run again during the second capture (a new
#            directory): the series add the first directory's remaining
#            windows and the second's from SEQ 1
#   stop     `gpuphase stop PID` ends it: stop says the session detached and
#            how many windows; attach exits 0 saying the directory and that
#            count; the control socket is gone, the process has the threads
#            it had, and it still answers
#   ctrl-c   a second duty cycle on the same process ended by SIGINT to the
#            attach command: exit 0, the same end, its windows checked alike
#   refusals --every with --iters, a --duration not below --every, report
#            options with --every: one line each, exit 2, nothing touched
# Exits 77 when this machine does not let us ptrace our own child.
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME.
set -u
. "$(dirname "$0")/cli_common.sh"
R=$B/bin/gpuphase-report
AGENT=$B/bin/gpuphase-agent
. "$S/tests/e2e/duty_common.sh"
require "$G" "$R" "$AGENT" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/server" \
	"$B/examples/server_client"
chmod 755 "$tmp"
ctl=$tmp/ctl
mkdir -m 700 "$ctl"
export GPUPHASE_CONTROL_DIR=$ctl
srv=""
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT

# --- refusals: before any process is touched --------------------------------
for args in "--every 1s --iters 3" "--every 300ms --duration 300ms" "--every 1s --top 3"; do
	# shellcheck disable=SC2086 # the words of args
	"$G" attach 1 $args >/dev/null 2>"$tmp/refuse.err"
	rc=$?
	if [ "$rc" != 2 ] || [ "$(grep -c 'gpuphase: attach:' "$tmp/refuse.err")" != 1 ]; then
		fail "attach 1 $args: exit $rc, expected 2 with one line: $(cat "$tmp/refuse.err")"
	else
		echo "refused: $args: $(head -1 "$tmp/refuse.err")"
	fi
done

# --- the server, bare (its truth on the trace's clock) ------------------------
sock=$tmp/srv.sock
env SIMCUDA_CONFIG="$S/examples/server/server.simcuda" SIMCUDA_TRUTH="$tmp/truth" \
	SIMCUDA_HOST_CLOCK=monotonic_raw "$B/examples/server" "$sock" >/dev/null 2>"$tmp/srv.err" &
srv=$!
pid=$(await_pid "$tmp/srv.err" server)
[ -n "$pid" ] || { fail "server did not start: $(cat "$tmp/srv.err")"; finish; exit 1; }
"$B/examples/server_client" "$sock" -n 10 >/dev/null 2>&1 || fail "warm-up client failed"
threads0=$(ls "/proc/$pid/task" | wc -l)

# attach_start NAME: attach --every in the background (its pid in apid),
# waiting until the session says the duty cycle runs; 77 when ptrace is
# not allowed here
attach_start() {
	"$G" attach "$pid" --every 300ms --duration 100ms -o "$tmp/$1.gpht" 2>"$tmp/$1.err" &
	apid=$!
	for _ in $(seq 1 400); do
		grep -q 'duty cycle: windows in' "$tmp/$1.err" && return 0
		kill -0 "$apid" 2>/dev/null || break
		sleep 0.05
	done
	if grep -q 'no permission to trace' "$tmp/$1.err"; then
		echo "SKIP: ptrace is not allowed here: $(cat "$tmp/$1.err")"
		exit 77
	fi
	fail "$1: the duty cycle did not start: $(cat "$tmp/$1.err")"
	finish
	exit 1
}

# after_detach NAME RC: attach exited 0 with the end line, the control
# socket is gone, the server has its threads back and answers
after_detach() {
	[ "$2" = 0 ] || fail "$1: attach exited $2: $(tail -3 "$tmp/$1.err")"
	grep -q "^gpuphase: attach: $pid: detached; [0-9]* windows closed in $tmp/$1.windows (" "$tmp/$1.err" ||
		fail "$1: no end line naming the windows: $(tail -2 "$tmp/$1.err")"
	grep "detached;" "$tmp/$1.err"
	[ -e "$ctl/$pid.sock" ] && fail "$1: the control socket is left after the detach"
	local t
	for _ in $(seq 1 100); do
		t=$(ls "/proc/$pid/task" | wc -l)
		[ "$t" = "$threads0" ] && break
		sleep 0.05
	done
	[ "$t" = "$threads0" ] || fail "$1: $t threads after the detach, $threads0 before"
	"$B/examples/server_client" "$sock" -n 20 >"$tmp/$1.after" 2>&1 ||
		fail "$1: the server does not answer after the detach: $(cat "$tmp/$1.after")"
}

# agent_check LABEL METRICS PID:FILE...: the agent's series (METRICS, its
# --once output) equal the reports of exactly those window files; tamper:
# the same less the first file must differ
agent_check() {
	local label=$1 metrics=$2
	shift 2
	python3 "$S/tests/e2e/agent_check.py" expect "$R" "$@" >"$tmp/$label.expect.json"
	python3 "$S/tests/e2e/agent_check.py" expect "$R" "${@:2}" >"$tmp/$label.forged.json"
	python3 - "$metrics" "$tmp/$label.got.json" "$S/tests/e2e" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[3])
from agent_check import parse_metrics
json.dump(parse_metrics(open(sys.argv[1]).read()), open(sys.argv[2], "w"))
PY
	if python3 "$S/tests/e2e/agent_check.py" compare "$tmp/$label.expect.json" "$tmp/$label.got.json" \
		>"$tmp/$label.cmp"; then
		echo "agent $label: $# windows equal their reports ($(grep -o '"ops"' "$tmp/$label.got.json" | wc -l) operators)"
	else
		fail "agent $label: series differ from the reports of $# windows: $(head -3 "$tmp/$label.cmp")"
	fi
	if python3 "$S/tests/e2e/agent_check.py" compare "$tmp/$label.forged.json" "$tmp/$label.got.json" >/dev/null; then
		fail "agent $label: tamper: the reports less their first window matched the series"
	else
		echo "agent $label: tamper: the reports less their first window refused"
	fi
}

# --- stop: windows, the agent, gpuphase stop ------------------------------------
attach_start stop
"$B/examples/server_client" "$sock" -n 9000 >"$tmp/client" 2>&1 || fail "client failed: $(tail -2 "$tmp/client")"
"$AGENT" --once --keep-windows --control-dir "$ctl" >"$tmp/agent.txt" 2>"$tmp/agent.err" ||
	fail "agent --once failed: $(cat "$tmp/agent.err")"
seen=$(awk -F'\t' -v p="$pid" '$1 == "P" && $2 == p { print $4 }' "$ctl/agent.state")
"$G" stop "$pid" >"$tmp/stop.out" 2>&1 || fail "gpuphase stop failed: $(cat "$tmp/stop.out")"
wait "$apid"
arc=$?
cat "$tmp/stop.out"
grep -q "^gpuphase: $pid: capture ended, the attach session detached: [0-9]* windows in $tmp/stop.windows\$" \
	"$tmp/stop.out" || fail "stop: unexpected answer: $(cat "$tmp/stop.out")"
after_detach stop "$arc"
n=$(ls "$tmp"/stop.windows/w*.gpht | wc -l)
grep -q "detached; $n windows closed" "$tmp/stop.err" || fail "stop: attach's count is not the $n files"

[ -n "$seen" ] && [ "$seen" -ge 2 ] ||
	fail "agent: it reduced $seen windows of process $pid: $(cat "$tmp/agent.err") $(cat "$ctl/agent.state" 2>&1)"
pairs=()
for i in $(seq 1 "${seen:-0}"); do pairs+=("$pid:$(printf '%s/w%08d.gpht' "$tmp/stop.windows" "$i")"); done
agent_check stop "$tmp/agent.txt" "${pairs[@]}"

# --- ctrl-c: the same process again, ended by SIGINT ----------------------------
attach_start int
"$B/examples/server_client" "$sock" -n 6000 >"$tmp/client2" 2>&1 || fail "client 2 failed: $(tail -2 "$tmp/client2")"
# the agent again: the same process, a new directory; the first one's
# windows it had not reduced yet, then the new one's from SEQ 1
"$AGENT" --once --keep-windows --control-dir "$ctl" >"$tmp/agent2.txt" 2>"$tmp/agent2.err" ||
	fail "agent --once (2) failed: $(cat "$tmp/agent2.err")"
seen2=$(awk -F'\t' -v p="$pid" '$1 == "P" && $2 == p { print $4 }' "$ctl/agent.state")
kill -INT "$apid"
wait "$apid"
after_detach int $?
[ -n "$seen2" ] && [ "$seen2" -ge 1 ] || fail "agent (2): it reduced $seen2 windows of the second capture"
pairs=()
for f in "$tmp"/stop.windows/w*.gpht; do pairs+=("$pid:$f"); done
for i in $(seq 1 "${seen2:-0}"); do pairs+=("$pid:$(printf '%s/w%08d.gpht' "$tmp/int.windows" "$i")"); done
agent_check again "$tmp/agent2.txt" "${pairs[@]}"

# --- both runs' windows against the truth, complete once the server exited --------
"$B/examples/server_client" "$sock" -n 0 --quit >/dev/null 2>&1
wait "$srv"
srv=""
windows_check stop "$tmp/stop.windows" "$tmp/truth" 5
windows_check int "$tmp/int.windows" "$tmp/truth" 3
finish
