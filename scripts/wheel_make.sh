#!/usr/bin/env bash
# scripts/wheel_make.sh — the wheel build's one step (meson.build runs it):
# make the four files the wheel ships and copy them where meson installs
# them from.
#
# Usage: wheel_make.sh SRC MAKE_BUILD_DIR OUTDIR PYTHON
#
# CUDA headers: $CUDA_HOME (/usr/local/cuda when unset), else the CUDA header wheels
# in PYTHON's site-packages (nvidia/cu13: nvidia-cuda-runtime,
# nvidia-cuda-cupti, nvidia-cuda-profiler-api, nvidia-nvtx; the build front
# end installs them when there is no toolkit, scripts/wheel_backend.py).
# Without nvcc (the wheels' case) libgpuphase is built without its
# calibration kernel, as the Makefile does whenever nvcc fails.
# Runs once per build, single threaded; make -j as many CPUs as there are.
set -eu
src=$1 bdir=$2 out=$3 python=$4

cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/cuda_runtime_api.h" ]; then
  cuda=$("$python" -c '
import os, sys
for p in sys.path:
    d = os.path.join(p, "nvidia", "cu13")
    if os.path.isfile(os.path.join(d, "include", "cuda_runtime_api.h")):
        print(d)
        break
')
fi
if [ -z "$cuda" ]; then
  echo "wheel_make.sh: no CUDA headers: no toolkit in ${CUDA_HOME:-/usr/local/cuda}, and no nvidia-cuda-runtime wheel in $python's site-packages" >&2
  exit 1
fi
echo "wheel_make.sh: CUDA headers from $cuda; make build in $bdir"

make -C "$src" -j"$(nproc)" B="$bdir" CUDA_HOME="$cuda" \
  "$bdir/bin/gpuphase" "$bdir/bin/gpuphase-report" "$bdir/bin/gpuphase-agent" "$bdir/lib/libgpuphase.so"
cp -f "$bdir/bin/gpuphase" "$bdir/bin/gpuphase-report" "$bdir/bin/gpuphase-agent" "$bdir/lib/libgpuphase.so" "$out/"
