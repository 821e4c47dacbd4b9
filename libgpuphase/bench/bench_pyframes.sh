#!/usr/bin/env bash
# bench_pyframes.sh — what a captured stack costs a Python program at a sync:
# the same ctypes loop of blocking calls (bench_pyframes.py) with
# GPUPHASE_STACKS=off and =sync (native unwind + the Python frames read in
# place, libgpuphase/pyframes.c), on simcuda; prints the added ns per call.
# Run by make bench (GP_BUILD, GP_SRC set); skipped without a CPython 3.11+.
set -u
B=${GP_BUILD:?GP_BUILD unset}; S=${GP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
py=$(command -v python3) || { echo "bench: pyframes skipped (no python3)"; exit 0; }
"$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "bench: pyframes skipped (python3 < 3.11)"; exit 0; }
tmp=$(mktemp -d /tmp/gp_bpy.XXXXXX); trap 'rm -rf "$tmp"' EXIT
cc -shared -fPIC -O2 -I"${CUDA_HOME:-/usr/local/cuda}/include" "$S/tests/e2e/pyframes/cslib.c" \
  -o "$tmp/libcslib.so" -L"$B/simcuda" -lcudart || exit 1
run() {
  (cd "$tmp" && rm -f t.gpht && LD_LIBRARY_PATH=$B/simcuda LD_PRELOAD=$B/lib/libgpuphase.so GPUPHASE_STACKS=$1 \
     GPUPHASE_OUTPUT=t.gpht "$py" "$S/libgpuphase/bench/bench_pyframes.py" "$tmp/libcslib.so" 20000 2>/dev/null)
}
# alternate, best of 3 each: the machine is shared and the sync itself costs µs
off=1e18; on=1e18
for _ in 1 2 3; do
  a=$(run off) && b=$(run sync) || { echo "bench: pyframes failed"; exit 1; }
  off=$(awk -v x="$off" -v y="$a" 'BEGIN { print (y < x ? y : x) }')
  on=$(awk -v x="$on" -v y="$b" 'BEGIN { print (y < x ? y : x) }')
done
awk -v a="$off" -v b="$on" 'BEGIN { printf "bench: pyframes_sync_call %.1f ns stacks_off=%.1f added=%.1f ns (native unwind + 8 Python frames)\n", b, a, b - a }'
# the Python frames alone, timed inside the library (GPUPHASE_LOG=debug)
(cd "$tmp" && rm -f t.gpht && LD_LIBRARY_PATH=$B/simcuda LD_PRELOAD=$B/lib/libgpuphase.so GPUPHASE_STACKS=sync \
   GPUPHASE_LOG=debug GPUPHASE_OUTPUT=t.gpht "$py" "$S/libgpuphase/bench/bench_pyframes.py" "$tmp/libcslib.so" 20000 \
   2>"$tmp/err" >/dev/null)
ns=$(sed -n 's/.*Python frames read at [0-9]* stack captures, \([0-9]*\) ns each.*/\1/p' "$tmp/err")
echo "bench: pyframes_read ${ns:-?} ns per stack (8+ Python frames, names cached)"
