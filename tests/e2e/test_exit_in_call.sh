#!/usr/bin/env bash
# test_exit_in_call.sh — exit() from a signal handler never hangs a profiled
# program: tests/e2e/exit_in_call.cu loops over CUDA calls (launches, a
# copy, synchronizes) on its main thread and its SIGALRM handler calls
# exit(0) after a random delay, so the library's exit path runs on top of
# an interrupted CUDA call that may hold CUDA's locks or malloc's. The exit
# path never synchronizes from inside a call and runs its CUDA/CUPTI work
# on its drain thread, waited for at most 2 s (libgpuphase/lib.c
# gp_lib_drain). EXIT_IN_CALL_RUNS runs (default 200, ~50 s), each under a 10 s
# timeout: a timeout is a hang and fails; every run exits 0 and leaves a
# complete trace (footer) that the report reads, holding ops unless the
# report says the drain was abandoned (CUPTI's records undelivered). Before the drain (finish
# called cudaDeviceSynchronize on the exiting thread) 2 of 30 runs hung.
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
PROG=$B/tests/e2e/exit_in_call
for f in "$R" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$PROG"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
tmp=$(mktemp -d /tmp/gp_exit_in_call.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
preload=$B/lib/libgpuphase.so
asan_opts=${ASAN_OPTIONS:-}
if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload"
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}" # the program's leaks are not ours
fi

runs=${EXIT_IN_CALL_RUNS:-200}
bad=0 hangs=0 skipped=0
for run in $(seq 1 "$runs"); do
	us=$((RANDOM % 40000 + 2000)) # 2 to 42 ms: the alarm lands in a different call each time
	rm -f "$tmp"/t.*
	(cd "$tmp" && ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" \
		LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		SIMCUDA_CONFIG="$S/tests/e2e/exit_in_call.simcuda" GPUPHASE_OUTPUT="$tmp/t.gpht" \
		timeout -s KILL 10 "$PROG" "$us" >"$tmp/t.out" 2>&1)
	rc=$?
	if [ "$rc" = 137 ]; then
		echo "FAIL: run $run (alarm after $us us): the program hung at exit (killed after 10 s)"
		hangs=$((hangs + 1))
		continue
	fi
	if [ "$rc" != 0 ]; then
		echo "FAIL: run $run (alarm after $us us): exit status $rc: $(tail -3 "$tmp/t.out")"
		bad=$((bad + 1))
		continue
	fi
	if ! "$R" --format json "$tmp/t.gpht" >"$tmp/t.json" 2>"$tmp/t.err"; then
		echo "FAIL: run $run: gpuphase-report failed: $(cat "$tmp/t.err")"
		bad=$((bad + 1))
		continue
	fi
	python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
# ops come from CUPTI: none only when the drain was abandoned, and said so
if not s["complete"] or (s["ops"] < 1 and s.get("exit_unsettled") != "abandoned"):
    print("FAIL: run %s: complete %s, %d ops, exit_unsettled %s" % (sys.argv[2], s["complete"], s["ops"],
                                                                   s.get("exit_unsettled")))
    sys.exit(1)
sys.exit(2 if s.get("exit_unsettled") else 0)' "$tmp/t.json" "$run"
	case $? in
	0) ;;
	2) skipped=$((skipped + 1)) ;;
	*) bad=$((bad + 1)) ;;
	esac
done
echo "exit in call: $runs runs, $hangs hung, $bad failed otherwise; $skipped said the exit path could not wait for the GPU"
[ "$hangs" = 0 ] && [ "$bad" = 0 ] || exit 1
echo "PASS: test_exit_in_call"
