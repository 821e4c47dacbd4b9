#!/usr/bin/env bash
# tests/e2e/test_stacks_no_libunwind.sh — libgpuphase must not need
# libunwind.so.8 to load (a machine without it must still run the program:
# the H200 PyTorch machine had none, and a DT_NEEDED made every profiled run
# exit 127), and stack capture must then fall back to glibc's backtrace().
#
# The second half hides libunwind.so.8 inside a private mount namespace
# (unshare -m + a bind mount of /dev/null over it), which needs root; where
# that is not permitted that half is a skipped part, with its reason.
# Two parts (tests/run-tests.sh): PART no_dt_needed, PART run_without_libunwind.
set -u
B=${GP_BUILD:?GP_BUILD unset}; S=${GP_SRC:?GP_SRC unset}
lib=$B/lib/libgpuphase.so
part=no_dt_needed
fail() { echo "PART $part: FAIL $*"; exit 1; }

readelf -d "$lib" | grep -q 'NEEDED.*libunwind' && fail "$lib has a DT_NEEDED on libunwind"
echo "PART no_dt_needed: PASS"

part=run_without_libunwind
[ -n "${GP_SAN:-}" ] && { echo "PART $part: SKIP sanitizer build: the namespace run is plain-build only"; exit 0; }
unw=$(ldconfig -p | awk '/libunwind\.so\.8 .*x86-64/ {print $NF; exit}')
[ -n "$unw" ] || unw=$(ldconfig -p | awk '/libunwind\.so\.8 / {print $NF; exit}')
if [ -z "$unw" ] || ! unshare -m true 2>/dev/null; then
  echo "PART $part: SKIP libunwind.so.8 not installed or unshare -m not permitted here"; exit 0
fi
unw=$(readlink -f "$unw")

tmp=$(mktemp -d /tmp/gp_nounw.XXXXXX); trap 'rm -rf "$tmp"' EXIT
ex=$B/examples/sync_bound
export LD_LIBRARY_PATH=$B/simcuda SIMCUDA_CONFIG=$S/examples/sync_bound.simcuda
"$ex" >"$tmp/bare.out" 2>/dev/null || fail "bare run failed"
unshare -m sh -c '
  mount --bind /dev/null "$1" || exit 90
  cd "$2" && LD_PRELOAD="$3" GPUPHASE_STACKS=sync GPUPHASE_LOG=info GPUPHASE_OUTPUT=t.gpht "$4" >prof.out 2>prof.err
' sh "$unw" "$tmp" "$lib" "$ex"
rc=$?
[ "$rc" = 90 ] && { echo "PART $part: SKIP bind mount refused"; exit 0; }
[ "$rc" = 0 ] || { cat "$tmp/prof.err"; fail "profiled run exited $rc without libunwind"; }
cmp -s "$tmp/bare.out" "$tmp/prof.out" || fail "stdout differs from the bare run"
grep -q "call stacks through glibc backtrace()" "$tmp/prof.err" || { cat "$tmp/prof.err"; fail "no fallback message"; }
"$B/bin/gpuphase-report" "$tmp/t.gpht" >"$tmp/report.txt" 2>&1 || fail "report failed"
grep -A3 "Sync call sites" "$tmp/report.txt" | grep -q "main+0x" || { cat "$tmp/report.txt"; fail "no sync call site from main"; }
echo "PART run_without_libunwind: PASS libunwind hidden: program unaffected, stacks through backtrace(), sync call sites in main"
