#!/usr/bin/env bash
# tests/gpu/test_gpu_counters_sim.sh — `make test` shell test: the GPU kit's
# counters check (tests/gpu/counters_kit.sh) rehearsed on simcuda, so the
# script that will run on a GPU keeps working. Results:
# $GP_BUILD/gpu-results/counters-sim.
set -u
src=${GP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${GP_BUILD:-$src/build}
rm -rf "$build/gpu-results/counters-sim"
exec bash "$src/tests/gpu/counters_kit.sh" --sim "$build/gpu-results/counters-sim"
