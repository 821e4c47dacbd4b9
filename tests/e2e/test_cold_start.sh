#!/usr/bin/env bash
# test_cold_start.sh — threads that start CUDA together lose nothing: eight
# threads behind a barrier each make their first hooked call at once (a
# cudaMemset, then 50 launches: tests/e2e/cold_start.cu), so one starts
# libgpuphase while seven call in; those wait for the start
# (libgpuphase/lib.c gp_lib_await_start) instead of passing through
# unrecorded. Under simcuda with its truth, COLD_START_RUNS runs (default
# 20), each under a timeout: every run's truth holds 408 GPU ops (400
# kernels, 8 memsets), and its `gpuphase-report --format json` holds all of
# them (ops, joined ops and the operator counts), with no record dropped
# and no start-up loss. It fails on a library that lets such calls pass
# through unrecorded (the former rule): there most runs lose calls (fewer
# ops, ring drops); docs/reliability.md gives the counts.
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
PROG=$B/tests/e2e/cold_start
for f in "$R" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$PROG"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
tmp=$(mktemp -d /tmp/gp_cold_start.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
preload=$B/lib/libgpuphase.so
asan_opts=${ASAN_OPTIONS:-}
if [ -n "${GP_SAN:-}" ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload" # an instrumented library needs its runtime first
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}" # the program's leaks are not ours
fi
# Under TSan a reported race makes the program exit 66, a failure below;
# stacks are off there: the eight threads exit before the process, and a
# thread that called unw_backtrace crashes in TSan's thread finalizer, with
# or without gpuphase (docs/reliability.md, Sanitizers).
tsan_opts=${TSAN_OPTIONS:-exitcode=66}
stacks=${GPUPHASE_STACKS:-sync}
[ "${GP_SAN:-}" = tsan ] && stacks=off

runs=${COLD_START_RUNS:-20}
bad=0
for run in $(seq 1 "$runs"); do
	rm -f "$tmp"/t.*
	(cd "$tmp" && ASAN_OPTIONS="$asan_opts" TSAN_OPTIONS="$tsan_opts" LD_PRELOAD="$preload" \
		LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		SIMCUDA_CONFIG="$S/tests/e2e/cold_start.simcuda" SIMCUDA_TRUTH="$tmp/t.truth" \
		GPUPHASE_OUTPUT="$tmp/t.gpht" GPUPHASE_STACKS="$stacks" timeout 60 "$PROG" >"$tmp/t.out" 2>&1)
	rc=$?
	if [ "$rc" != 0 ]; then
		echo "FAIL: run $run: program exited $rc: $(tail -3 "$tmp/t.out")"
		bad=$((bad + 1))
		continue
	fi
	if ! "$R" --format json "$tmp/t.gpht" >"$tmp/t.json" 2>"$tmp/t.err"; then
		echo "FAIL: run $run: gpuphase-report failed: $(cat "$tmp/t.err")"
		bad=$((bad + 1))
		continue
	fi
	python3 - "$tmp/t.truth" "$tmp/t.json" "$run" <<'PY' || bad=$((bad + 1))
import collections, json, sys
truth, report, run = sys.argv[1], sys.argv[2], sys.argv[3]
kinds = collections.Counter(json.loads(line)["type"] for line in open(truth))
want = kinds["kernel"] + kinds["memset"]
rep = json.load(open(report))
s = rep["summary"]
ops = {o["name"]: o["count"] for o in rep["operators"]}
problems = []
if (kinds["kernel"], kinds["memset"]) != (400, 8):
    problems.append("truth holds %d kernels and %d memsets, the program makes 400 and 8" % (kinds["kernel"], kinds["memset"]))
if s["ops"] != want or s["ops_joined"] != want:
    problems.append("report holds %d ops (%d joined) of the truth's %d" % (s["ops"], s["ops_joined"], want))
if ops.get("cs_kernel") != kinds["kernel"] or ops.get("memset") != kinds["memset"]:
    problems.append("operators %s, truth %d kernels and %d memsets" % (ops, kinds["kernel"], kinds["memset"]))
if s["dropped_records"] or s.get("startup_lost"):
    problems.append("lost: dropped %s, start-up losses %s" % (s["dropped"], s.get("startup_lost", 0)))
if problems:
    print("FAIL: run %s: %s" % (run, "; ".join(problems)))
    sys.exit(1)
PY
done
echo "cold start: $((runs - bad)) of $runs runs held all 408 ops with nothing lost"
[ "$bad" = 0 ] || exit 1
echo "PASS: test_cold_start"
