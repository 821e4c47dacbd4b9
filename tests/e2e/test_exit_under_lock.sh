#!/usr/bin/env bash
# test_exit_under_lock.sh — exit() from a signal handler that interrupted a
# profiled thread while the library held one of its own locks: the exit path
# must not wait for that lock, since the frame holding it never resumes.
# This was the hang test_exit_in_call.sh met about 1 run in 200: the sync
# marker's iteration boundary (window.c gp_window_sync_done, after each
# cudaStreamSynchronize/cudaDeviceSynchronize) holds the window lock for a
# few microseconds, and the window's atexit handler and finish took it again
# on the same thread, for ever. Random alarms land there rarely; here gdb
# stops tests/e2e/exit_in_call.cu exactly inside that lock
# (gp_window_boundary_locked) and delivers its SIGALRM there, every run.
# Passes when the program then exits normally within 10 s and its trace is
# complete; the library of the commit before the fix hangs (gdb's bt shows
# futex_wait on gp_window_lock under gp_window_atexit). A second case stops
# the program inside simcuda's CUPTI lock (taken around every API call's
# callback check): simcuda's own exit handler waited for it for ever, with or
# without the profiler, the other hang the random runs met; now the handler
# skips its context-destroyed event there, and the library's drain, which
# needs that lock too, is abandoned at its 2 s bound and the trace says so
# ("abandoned", no ops). A third case stops it inside malloc (glibc's
# _int_malloc, reached with the arena's lock held, on the first launch after
# the handler is set: simcuda allocating a CUPTI record): the exit path
# frees nothing, since free would wait for that lock (the collector's stop
# freed the writer's buffers there and hung: futex_wait on main_arena under
# gp_writer_free_buffers). Needs gdb and ptrace; without them it exits 77
# with the reason. The third case needs glibc's symbols too; without them
# it alone is skipped, said in one line.
# Environment (make test): GP_BUILD, GP_SRC.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
PROG=$B/tests/e2e/exit_in_call
for f in "$R" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$PROG"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
if [ -n "${GP_SAN:-}" ]; then
	echo "SKIP: under a sanitizer the program runs with its runtime preloaded, which gdb's run does not set up"
	exit 77
fi
command -v gdb >/dev/null || { echo "SKIP: no gdb on PATH"; exit 77; }
tmp=$(mktemp -d /tmp/gp_exit_under_lock.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# One case: gdb stops the program where $1 (a gdb location) holds the lock
# named $2 (or, given $3, first at $1 and then at $3, where the lock is
# held) and delivers the alarm there; the program must end within 10 s
# and leave a complete trace.
exit_under() {
	local where=$1 lock=$2 then=${3:-} d
	d=$(mktemp -d "$tmp/case.XXXX")
	{
		printf '%s\n' "set pagination off" "set breakpoint pending on" "handle SIGALRM nostop noprint pass" \
			"break $where" run delete
		[ -z "$then" ] || printf '%s\n' "break $then" continue delete
		printf '%s\n' "signal SIGALRM" "bt 12"
	} >"$d/cmds"
	# the alarm is set 1000 s away: only gdb delivers it, at the breakpoint
	(cd "$d" && timeout -s INT 10 gdb -nx -batch -x "$d/cmds" --args env LD_PRELOAD="$B/lib/libgpuphase.so" \
		LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		SIMCUDA_CONFIG="$S/tests/e2e/exit_in_call.simcuda" GPUPHASE_OUTPUT="$d/t.gpht" \
		"$PROG" 1000000000 >"$d/gdb.out" 2>&1)
	if grep -q "ptrace: Operation not permitted\|Could not trace the inferior" "$d/gdb.out" &&
		! grep -q "Breakpoint 1[.,]" "$d/gdb.out"; then
		echo "SKIP: gdb cannot trace a process here: $(grep -m1 -i ptrace "$d/gdb.out")"
		exit 77
	fi
	if ! grep -q "Breakpoint 1[.,]" "$d/gdb.out"; then
		echo "FAIL: $lock: the program never stopped at $where:"
		tail -5 "$d/gdb.out"
		return 1
	fi
	if ! grep -q "exited normally" "$d/gdb.out"; then
		echo "FAIL: $lock: exit() under it did not end the program within 10 s; its stack:"
		grep -E "^#" "$d/gdb.out" | cut -c1-160
		return 1
	fi
	if ! "$R" --format json "$d/t.gpht" >"$d/t.json" 2>"$d/t.err"; then
		echo "FAIL: $lock: gpuphase-report failed on the trace: $(cat "$d/t.err")"
		return 1
	fi
	python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
if not s["complete"]:
    print("FAIL: %s: the trace has no footer after exit() under it" % sys.argv[2])
    sys.exit(1)
if s["ops"] < 1 and s.get("exit_unsettled") != "abandoned":
    print("FAIL: %s: no ops and the report does not say the drain was abandoned" % sys.argv[2])
    sys.exit(1)
print("exit under %s: ended, trace complete, %d ops, exit_unsettled %s" % (sys.argv[2], s["ops"],
                                                                          s.get("exit_unsettled")))
' "$d/t.json" "$lock"
}
fails=0
exit_under gp_window_boundary_locked "the library's window lock" || fails=$((fails + 1))
# simcuda's CUPTI lock, held around each API call's callback check: its own
# exit handler (context destroyed) must not wait for it, and the library's
# drain, which needs it too, is abandoned at its bound and says so
line=$(grep -n 'int on = g_cupti.subscribed' "$S/simcuda/sim_cupti_callback.c" | cut -d: -f1)
exit_under "sim_cupti_callback.c:$line if cbid == 505" "simcuda's CUPTI lock (a launch's callback check)" ||
	fails=$((fails + 1))
# malloc's arena lock, held by the interrupted call (glibc's symbols needed
# to stop inside _int_malloc)
if gdb -nx -batch -ex "info address _int_malloc" "$(ldd "$PROG" | awk '/libc\.so/ {print $3}')" 2>&1 |
	grep -q "is a function\|is at address"; then
	exit_under sim_launch "malloc's arena lock (simcuda allocating a record)" _int_malloc || fails=$((fails + 1))
else
	echo "SKIP (this case only): no symbol _int_malloc in libc here (glibc's debug symbols missing)"
fi
[ "$fails" = 0 ] || exit 1
echo "PASS: test_exit_under_lock"
