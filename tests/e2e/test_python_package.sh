#!/usr/bin/env bash
# test_python_package.sh — the Python package (python/gpuphase) without Dask:
# its partial() and merge() steps run gpuphase-report as a user's paths
# demand. Specification:
#  * a trace or .gpp path that starts with "-" is a path, never an option:
#    partial("-r0.gpht") and merge(["-p.gpp"]) give the report
#    gpuphase-report gives of that trace (the same operators and sums);
#  * every failure is a GpuphaseError, never a bare OSError or
#    JSONDecodeError: a tool that does not exist, a tool that writes no
#    partial results, a tool that prints no JSON.
# The trace comes from the sync_bound example under libgpuphase.so on
# simcuda. Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
for f in "$R" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/sync_bound"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
tmp=$(mktemp -d /tmp/gp_pypkg.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
preload=$B/lib/libgpuphase.so
asan_opts=${ASAN_OPTIONS:-}
if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload"
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}"
fi
(cd "$tmp" && env ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" SIMCUDA_CONFIG="$S/examples/sync_bound.simcuda" \
	LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" GPUPHASE_OUTPUT="$tmp/-r0.gpht" \
	"$B/examples/sync_bound" >/dev/null 2>&1) || { echo "FAIL: sync_bound failed"; exit 1; }
"$R" --format json -- "$tmp/-r0.gpht" >"$tmp/one.json" 2>"$tmp/one.err" ||
	{ echo "FAIL: the one-process report: $(head -3 "$tmp/one.err")"; exit 1; }
printf '#!/bin/sh\necho "not a report"\n' >"$tmp/prints-text"
printf '#!/bin/sh\nexit 0\n' >"$tmp/writes-nothing"
chmod +x "$tmp/prints-text" "$tmp/writes-nothing"

cd "$tmp" || exit 1
PYTHONPATH=$S/python python3 - "$R" "$tmp" <<'PY'
import json, os, sys
import gpuphase

R, tmp = sys.argv[1], sys.argv[2]
fails = 0


def fail(msg):
    global fails
    fails += 1
    print("FAIL:", msg)


def ops(rep):
    return [(o["name"], o["count"], o["total_ns"]) for o in rep["operators"]]


one = json.load(open(os.path.join(tmp, "one.json")))
# paths that start with "-", relative to the working directory
try:
    part = gpuphase.partial("-r0.gpht", tool=R)
    with open("-p.gpp", "wb") as f:
        f.write(part)
    for what, parts in (("bytes", [part]), ("a -p.gpp path", ["-p.gpp"])):
        rep = gpuphase.merge(parts, tool=R)
        if not rep["operators"] or ops(rep) != ops(one):
            fail("merge of %s: operators differ from the one-process report" % what)
except Exception as e:  # the check must name any failure, not stop at it
    fail("a trace path starting with '-': %s: %s" % (type(e).__name__, e))

# every failure a GpuphaseError
cases = (
    ("no such tool", lambda: gpuphase.partial("-r0.gpht", tool=os.path.join(tmp, "no-such-tool"))),
    ("no such tool (merge)", lambda: gpuphase.merge([b"x"], tool=os.path.join(tmp, "no-such-tool"))),
    ("a tool writing no partial results", lambda: gpuphase.partial("-r0.gpht", tool=os.path.join(tmp, "writes-nothing"))),
    ("a tool printing no JSON", lambda: gpuphase.merge(["-p.gpp"], tool=os.path.join(tmp, "prints-text"))),
    ("a missing trace", lambda: gpuphase.partial("missing.gpht", tool=R)),
)
for what, call in cases:
    try:
        call()
        fail("%s: no error" % what)
    except gpuphase.GpuphaseError as e:
        print("%s: GpuphaseError: %s" % (what, str(e).splitlines()[0] if str(e) else ""))
    except Exception as e:
        fail("%s: %s instead of GpuphaseError: %s" % (what, type(e).__name__, e))
sys.exit(1 if fails else 0)
PY
rc=$?
[ "$rc" = 0 ] && echo "test_python_package: paths starting with '-' read as paths; every failure a GpuphaseError"
exit "$rc"
