#!/usr/bin/env bash
# tests/gpu/test_gpukit_selftest.sh — `make test` shell test: the kit's checks
# (tests/gpu/gpukit.py) PASS on agreeing synthetic runs and FAIL on each kind
# of disagreement (execute vs events off by 2 %, coverage 99.9 %, drops,
# changed stdout / exit status, missing or garbage report, missing kernels,
# hooked "hidden" launches, a window one step too long, a graph launch
# charged per node or a replayed kernel not attributed to its node, a duty
# cycle's ratio over its limit or a duty run without windows (server and
# launch_bound rows), no thread started by CUDA's initialisation). Exit 0 = pass.
set -u
src=${GP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
exec "${PYTHON:-python3}" "$src/tests/gpu/gpukit.py" selftest
