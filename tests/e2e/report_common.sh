# report_common.sh — sourced by the report's truth tests (test_report_tampers,
# test_report_truth_modes, test_report_gpu_clock), test_launch_config and
# test_fork_fresh:
# paths, the truth check, a failure counter, a scratch folder, and what a
# sanitizer build needs preloaded.
# Set before sourcing: tmp_name (the scratch folder's prefix under /tmp).
# Defines B, S, R (gpuphase-report), CHECK (the truth check's command),
# fails/fail, tmp (kept when KEEP is set, else removed at exit), preload
# (LD_PRELOAD for a profiled run) and asan_opts (ASAN_OPTIONS for it).
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME; KEEP.
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
CHECK="python3 $S/tests/e2e/report_truth_check.py"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d "/tmp/${tmp_name:?tmp_name not set}.XXXXXX")
if [ -n "${KEEP:-}" ]; then echo "files kept in $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
# an instrumented libgpuphase.so in an uninstrumented program needs the
# sanitizer's runtime loaded first; the programs' leaks are not ours
preload=$B/lib/libgpuphase.so
asan_opts=${ASAN_OPTIONS:-}
if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload"
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}"
fi
