#!/usr/bin/env bash
# tests/gpu/test_gpu_kit_sim.sh — `make test` shell test: runs the real-GPU
# validation kit in --sim mode (tests/gpu/run.sh --sim) against simcuda, so
# CI keeps the script itself working. Exit 0 when no check that ran failed;
# hardware-only checks are SKIP (sim). Results: $GP_BUILD/gpu-results/sim-make-test.
set -u
src=${GP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${GP_BUILD:-$src/build}
exec bash "$src/tests/gpu/run.sh" --sim "$build/gpu-results/sim-make-test"
