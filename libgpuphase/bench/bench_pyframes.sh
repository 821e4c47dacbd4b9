#!/usr/bin/env bash
# bench_pyframes.sh — what a captured stack costs a Python program at a sync:
# the same ctypes loop of blocking calls (bench_pyframes.py) with
# GPUPHASE_STACKS=off and =sync (native unwind + the Python frames read in
# place, libgpuphase/pyframes.c), on simcuda; prints the added ns per call,
# and the Python frames' own cost per stack as the library times it.
# Run by make bench (GP_BUILD, GP_SRC set). Measured for python3 (3.9+:
# pyframes_sync_call, pyframes_read) and, as pyframes_*_py3.9 / _py3.10,
# for the first CPython 3.9 and 3.10 found in GP_PYTHONS (space-separated
# paths), on PATH (python3.9, python3.10) or in pyenv; "skipped" where none.
set -u
B=${GP_BUILD:?GP_BUILD unset}; S=${GP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d /tmp/gp_bpy.XXXXXX); trap 'rm -rf "$tmp"' EXIT
cc -shared -fPIC -O2 -I"${CUDA_HOME:-/usr/local/cuda}/include" "$S/tests/e2e/pyframes/cslib.c" \
  -o "$tmp/libcslib.so" -L"$B/simcuda" -lcudart || exit 1

pyver() { "$1" -c 'import ctypes, sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null; }

run() { # python stacks-setting
  (cd "$tmp" && rm -f t.gpht && LD_LIBRARY_PATH=$B/simcuda LD_PRELOAD=$B/lib/libgpuphase.so GPUPHASE_STACKS=$2 \
     GPUPHASE_OUTPUT=t.gpht "$1" "$S/libgpuphase/bench/bench_pyframes.py" "$tmp/libcslib.so" 20000 2>/dev/null)
}

bench_one() { # python name-suffix
  local py=$1 sfx=$2 ver a b ns off=1e18 on=1e18
  ver=$(pyver "$py")
  # alternate, best of 3 each: the machine is shared and the sync itself costs µs
  for _ in 1 2 3; do
    if ! a=$(run "$py" off) || ! b=$(run "$py" sync); then echo "bench: pyframes ($py) failed"; return 1; fi
    off=$(awk -v x="$off" -v y="$a" 'BEGIN { print (y < x ? y : x) }')
    on=$(awk -v x="$on" -v y="$b" 'BEGIN { print (y < x ? y : x) }')
  done
  awk -v a="$off" -v b="$on" -v n="pyframes_sync_call$sfx" -v v="$ver" 'BEGIN {
    printf "bench: %s %.1f ns stacks_off=%.1f added=%.1f ns (CPython %s: native unwind + 8 Python frames)\n",
           n, b, a, b - a, v }'
  # the Python frames alone, timed inside the library (GPUPHASE_LOG=debug)
  (cd "$tmp" && rm -f t.gpht && LD_LIBRARY_PATH=$B/simcuda LD_PRELOAD=$B/lib/libgpuphase.so GPUPHASE_STACKS=sync \
     GPUPHASE_LOG=debug GPUPHASE_OUTPUT=t.gpht "$py" "$S/libgpuphase/bench/bench_pyframes.py" "$tmp/libcslib.so" 20000 \
     2>"$tmp/err" >/dev/null)
  ns=$(sed -n 's/.*Python frames read at [0-9]* stack captures, \([0-9]*\) ns each.*/\1/p' "$tmp/err")
  echo "bench: pyframes_read$sfx ${ns:-?} ns per stack (CPython $ver: 8+ Python frames, names cached)"
}

rc=0
if py=$(command -v python3) && v=$(pyver "$py") && [ "${v#3.}" -ge 9 ] 2>/dev/null; then
  bench_one "$py" "" || rc=1
else
  echo "bench: pyframes skipped (no python3 3.9+ with ctypes)"
fi
for want in 3.9 3.10; do
  found=""
  # shellcheck disable=SC2086
  for p in ${GP_PYTHONS:-} "python$want" /root/.pyenv/versions/"$want".*/bin/python3 \
           "$HOME"/.pyenv/versions/"$want".*/bin/python3; do
    p=$(command -v "$p" 2>/dev/null) || continue
    [ "$(pyver "$p")" = "$want" ] && { found=$p; break; }
  done
  if [ -n "$found" ]; then bench_one "$found" "_py$want" || rc=1
  else echo "bench: pyframes_read_py$want skipped (no CPython $want found: GP_PYTHONS, PATH, pyenv)"; fi
done
exit $rc
