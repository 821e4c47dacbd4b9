#!/usr/bin/env bash
# test_simcuda_exports.sh — simcuda's libcudart.so.13 exports exactly the
# functions the installed toolkit's libcudart.so.13 does, each under the same
# version node (docs/simcuda.md "Runtime API coverage"), so no binary built
# against the real runtime stops at load time on a missing symbol; and a
# generated stub answers cudaErrorNotSupported with one log line.
# Environment: GP_BUILD (build dir), CUDA_HOME (toolkit; default /usr/local/cuda).
set -euo pipefail
B=${GP_BUILD:-build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
real=$CUDA_HOME/lib64/libcudart.so.13
sim=$B/simcuda/libcudart.so.13
list() { nm -D --defined-only --with-symbol-versions "$1" | awk '{print $3}' | sort; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
list "$real" > "$tmp/real"
list "$sim" > "$tmp/sim"
if ! diff -u "$tmp/real" "$tmp/sim"; then
	echo "FAIL: exported symbol@version lists differ (- real, + simcuda)"
	exit 1
fi
n=$(grep -c . "$tmp/real")
[ "$n" -gt 300 ] || { echo "FAIL: only $n exports read from $real"; exit 1; }
# Every binding is to the node, not a default-version-less symbol.
if grep -v '@@\?libcudart\.so\.13$' "$tmp/sim" | grep -v '^libcudart\.so\.13$'; then
	echo "FAIL: symbols above are not under libcudart.so.13"; exit 1
fi
echo "ok: $n exports, same names and version node"
