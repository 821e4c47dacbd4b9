#!/usr/bin/env bash
# tests/e2e/test_pyframes_fallback.sh — the Python version detection of
# libgpuphase/pyframes.c without any Python: a native program that exports
# what a CPython exports (pyframes/fake_python.c) says it is
#   - 3.14 (Py_Version) and 3.8 (Py_GetVersion): layouts gpuphase does not
#     know: the run is unaffected, one log line says "native frames only",
#     the call sites are the native ones;
#   - something that is no version: the same, said as such;
#   - 3.9 / 3.10 (Py_GetVersion) with a hand-made PyFrameObject chain: the
#     frames are read and named from that version's line table
#     (fake.py:44 / fake.py:42), the <module> frame that has not started
#     gets its first line, and the walk stops at an object that is not a
#     frame.
set -u
B=${GP_BUILD:?GP_BUILD unset}; S=${GP_SRC:?GP_SRC unset}
fail() { echo "FAIL: $*"; exit 1; }
preload=$B/lib/libgpuphase.so
if [ -n "${GP_SAN:-}" ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then # an instrumented library in a plain program
  preload="$GP_SAN_RUNTIME:$preload"
  export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi
tmp=$(mktemp -d /tmp/gp_pyfb.XXXXXX); trap 'rm -rf "$tmp"' EXIT
inc=${CUDA_HOME:-/usr/local/cuda}/include
cc -std=c11 -O1 -rdynamic -I"$inc" "$S/tests/e2e/pyframes/fake_python.c" -o "$tmp/fake_getversion" \
  -L"$B/simcuda" -lcudart || fail "cannot build the fake interpreter"
cc -std=c11 -O1 -rdynamic -DFAKE_PY_VERSION=0x030e00f0UL -I"$inc" "$S/tests/e2e/pyframes/fake_python.c" \
  -o "$tmp/fake_pyversion" -L"$B/simcuda" -lcudart || fail "cannot build the fake interpreter (Py_Version)"

run() { # name program version-string -> $tmp/name/{err,report.txt,report.json}
  local d=$tmp/$1; mkdir -p "$d"
  (cd "$d" && LD_LIBRARY_PATH=$B/simcuda LD_PRELOAD=$preload GPUPHASE_LOG=info GPUPHASE_OUTPUT=t.gpht \
     timeout 120 "$tmp/$2" "$3" >out 2>err) || { cat "$d/err"; fail "$1: profiled run failed"; }
  grep -q '^done$' "$d/out" || fail "$1: the program did not finish"
  "$B/bin/gpuphase-report" "$d/t.gpht" >"$d/report.txt" 2>&1 || fail "$1: report failed"
  "$B/bin/gpuphase-report" --format json "$d/t.gpht" >"$d/report.json" 2>&1 || fail "$1: json report failed"
}

fallback() { # name program version-string expected-log-text
  run "$1" "$2" "$3"
  local d=$tmp/$1
  [ "$(grep -c 'native frames only' "$d/err")" = 1 ] || { cat "$d/err"; fail "$1: not one fallback line"; }
  grep -q "$4" "$d/err" || { cat "$d/err"; fail "$1: the fallback line does not say '$4'"; }
  grep -A4 "Sync call sites" "$d/report.txt" | grep -q 'main' ||
    { cat "$d/report.txt"; fail "$1: no native call site"; }
  grep -q 'fake\.py' "$d/report.json" && fail "$1: Python frames read from a layout not known"
  echo "ok: $1: $(grep 'native frames only' "$d/err" | sed 's/^gpuphase: //')"
}
fallback py314 fake_pyversion "" "Python 3.14: frame layout not known"
fallback py38 fake_getversion "3.8.18 (fake)" "Python 3.8: frame layout not known"
fallback noversion fake_getversion "fake" "Python whose version cannot be read"

for v in 3.9:44 3.10:42; do
  ver=${v%:*}; line=${v#*:}
  run "py$ver" fake_getversion "$ver.99 (fake)"
  d=$tmp/py$ver
  grep -q "Python $ver: Python frames in call stacks" "$d/err" || { cat "$d/err"; fail "$ver: not detected"; }
  grep -q 'native frames only' "$d/err" && { cat "$d/err"; fail "$ver: fell back"; }
  grep -A4 "Sync call sites" "$d/report.txt" | grep -q "fake.py:$line (fake_fn)" ||
    { cat "$d/report.txt"; fail "$ver: fake.py:$line (fake_fn) not named"; }
  # innermost first: the two frames, then native ones (main), nothing from
  # the object that is not a frame
  grep -q "\"stack\": \[\"fake.py:$line (fake_fn)\", \"fake.py:1 (<module>)\", \"[^\"f][^\"]*\"" \
    "$d/report.json" || { grep -m3 '"stack"' "$d/report.json"; fail "$ver: stack not fake_fn, <module>, native"; }
  echo "ok: python $ver (fake): fake.py:$line (fake_fn) then fake.py:1 (<module>), walk stopped at a non-frame"
done
