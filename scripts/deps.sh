#!/usr/bin/env bash
# scripts/deps.sh — make sure the Debian packages gpuphase builds against are present.
#
# Called by the Makefile before the first build (through a stamp file) and by
# .ci/run. As root, missing packages are installed with apt-get; otherwise the
# exact apt-get line is printed and the script fails, so nothing is ever
# "installed by hand" without the project knowing.
#
# Usage: scripts/deps.sh [core|fuzz]
set -u
group=${1:-core}
core_pkgs="libcriterion-dev uthash-dev libunwind-dev libdw-dev libsqlite3-dev liblz4-dev pkg-config python3"
fuzz_pkgs="clang libclang-rt-dev"
case "$group" in
  core) pkgs=$core_pkgs ;;
  fuzz) pkgs="$core_pkgs $fuzz_pkgs" ;;
  *) echo "deps.sh: unknown group '$group' (core|fuzz)" >&2; exit 2 ;;
esac

missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "deps.sh: installing missing Debian packages:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || { echo "deps.sh: apt-get update failed" >&2; exit 1; }
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
    echo "deps.sh: apt-get install failed for:$missing" >&2; exit 1; }
  exit 0
fi
echo "deps.sh: missing Debian packages:$missing" >&2
echo "deps.sh: run as root:  apt-get install -y$missing" >&2
exit 1
