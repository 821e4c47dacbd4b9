#!/usr/bin/env bash
# tests/e2e/test_preload_sanitizer.sh — libgpuphase's threads (application
# hooks, CUPTI buffer thread, writer, window timer) under the sanitizer of the
# build: run the uninstrumented example and lt_prog programs with the
# instrumented libgpuphase.so preloaded after the sanitizer runtime
# ($GP_SAN_RUNTIME), with a time window, NVTX injection, stacks on every call
# and a fork, and fail on any sanitizer report or a changed result.
# Run by `make tsan` (TSAN_TESTS); meaningful only with GP_SAN set (else
# exit 77). Each run is a part (PART name: PASS|FAIL|SKIP, tests/run-tests.sh).
set -u
B=${GP_BUILD:?GP_BUILD not set}
SRC=${GP_SRC:?GP_SRC not set}
if [ -z "${GP_SAN:-}" ] || [ -z "${GP_SAN_RUNTIME:-}" ]; then
	echo "SKIP: not a sanitizer build: nothing to check (make tsan runs it)"; exit 77
fi
lib=$B/lib/libgpuphase.so
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d" || exit 1
fail=0
run() { # name, env..., --, cmd...
	local name=$1; shift
	local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
	local sim=(); for e in "${envs[@]}"; do case $e in SIMCUDA_*) sim+=("$e") ;; esac; done
	env LD_LIBRARY_PATH="$B/simcuda" LD_PRELOAD="$GP_SAN_RUNTIME" ASAN_OPTIONS="detect_leaks=0" "${sim[@]}" "$@" \
		>"$name.bare" 2>/dev/null
	local rb=$?
	env LD_LIBRARY_PATH="$B/simcuda" LD_PRELOAD="$GP_SAN_RUNTIME:$lib" GPUPHASE_OUTPUT="$name-%p.gpht" \
		TSAN_OPTIONS="halt_on_error=0 exitcode=66" ASAN_OPTIONS="detect_leaks=0" "${envs[@]}" "$@" \
		>"$name.out" 2>"$name.err"
	local rp=$?
	if grep -q "Sanitizer" "$name.err"; then
		echo "PART $name: FAIL sanitizer report"; sed -n '1,60p' "$name.err"; fail=1
	elif [ $rp != $rb ] || ! cmp -s "$name.bare" "$name.out"; then
		echo "PART $name: FAIL exit $rp vs $rb or stdout differs"; tail -5 "$name.err"; fail=1
	elif ! ls "$name"-*.gpht >/dev/null 2>&1; then
		echo "PART $name: FAIL no trace"; fail=1
	else
		echo "PART $name: PASS"
	fi
}
run launch SIMCUDA_CONFIG="$SRC/examples/launch_bound.simcuda" -- "$B/examples/launch_bound"
run window GPUPHASE_STACKS=all NVTX_INJECTION64_PATH="$lib" GPUPHASE_WINDOW=delay=20ms,duration=30ms \
	SIMCUDA_EXEC_NS=300000 -- "$B/tests/lib/lt_prog" fork 100
run marker GPUPHASE_ITER_MARKER=kernel:mark_kernel GPUPHASE_WINDOW=skip=5,iters=5,repeat=3 -- \
	"$B/tests/lib/lt_prog" plain 60
# the calibration of CUPTI's cost (calibrate.c) while three other threads
# launch: they wait for it
# (stacks off: libunwind's thread-exit destructor crashes under TSAN)
run calib GPUPHASE_CUPTI_CALIBRATE=1 GPUPHASE_STACKS=off SIMCUDA_CUPTI_OVERHEAD_RECORDS=0 -- \
	"$B/tests/lib/lt_prog" launchers 50
# four threads released together take their first stack at once (stacks.c's
# one-time setup, a race TSan reported once), libunwind hidden in a private
# mount namespace (so glibc's backtrace() unwinds). Needs unshare -m (root);
# elsewhere a skipped part.
unw=$(ldconfig -p | awk '/libunwind\.so\.8 .*x86-64/ {print $NF; exit}')
[ -n "$unw" ] && unw=$(readlink -f "$unw")
if [ -n "$unw" ] && unshare -m sh -c 'mount --bind /dev/null "$1"' _ "$unw" 2>/dev/null; then
	export -f run
	export B SRC lib GP_SAN_RUNTIME fail
	unshare -m bash -c 'mount --bind /dev/null "$1" || exit 1
		run first_stacks GPUPHASE_STACKS=sync -- "$B/tests/lib/lt_prog" firststacks 1
		exit $fail' _ "$unw" || fail=1
else
	echo "PART first_stacks: SKIP libunwind.so.8 not installed, or no private mount namespace here"
fi
exit $fail
