#!/usr/bin/env bash
# scripts/deps.sh — make sure the Debian packages gpuphase builds against are present.
#
# Called by the Makefile before the first build (through a stamp file) and by
# .ci/run. As root, missing packages are installed with apt-get; otherwise the
# exact apt-get line is printed and the script fails, so nothing is ever
# "installed by hand" without the project knowing.
#
# Usage: scripts/deps.sh [core|fuzz|browser|cross-aarch64|prometheus|readers [VENV]|dask [VENV]]
#
# `prometheus` adds Debian's Prometheus server and promtool, which
# tests/e2e/test_agent_prometheus.sh starts against `gpuphase agent`.
#
# `browser` adds headless Chromium and its WebDriver (the HTML page test).
#
# `cross-aarch64` adds Debian's aarch64 cross compiler and C library, for
# `make cross-aarch64` (the aarch64 code of `gpuphase attach` compiled, not
# run: there is no aarch64 machine here). Optional: make test does not use it.
#
# `readers` is the external readers the export tests open the exports with
# (DuckDB, pandas, HTA, Perfetto's trace_processor, selenium): Python
# packages from the package index, installed into a scratch virtual
# environment VENV (default build/readers-venv), never into the system. It
# exits 77 when the index cannot be reached, so the tests can SKIP.
#
# `dask` is the same for the Python package's test (python/, Dask and pandas;
# setuptools and wheel to install the package without the index): VENV default
# build/dask-venv.
set -u
group=${1:-core}
# sqlite3 (the CLI): the report corpus compares SQLite exports as their .dump;
# protobuf-compiler: protoc --decode_raw reads the Perfetto export in make test;
# python3-venv: the scratch environment of the exports' external readers;
# libmicrohttpd-dev: gpuphase-agent's HTTP server (/metrics);
# gdb, libc6-dbg: test_exit_under_lock stops the program inside each lock the
# exit path met (malloc's arena lock needs glibc's symbols)
core_pkgs="libmicrohttpd-dev libcriterion-dev uthash-dev libunwind-dev libdw-dev libsqlite3-dev liblz4-dev pkg-config python3 python3-venv sqlite3 protobuf-compiler gdb libc6-dbg"
browser_pkgs="chromium chromium-driver"
fuzz_pkgs="clang libclang-rt-dev"
prometheus_pkgs="prometheus"
cross_aarch64_pkgs="gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
# duckdb pinned with its sqlite reader extension packaged on the index
# (DuckDB's own INSTALL downloads it from a host outside the index)
readers_py="duckdb==1.5.5 duckdb-extension-sqlite-scanner==1.5.5 pandas HolisticTraceAnalysis perfetto selenium"
dask_py="dask[distributed] pandas setuptools wheel"
if [ "$group" = dask ]; then
  venv=${2:-build/dask-venv}
  if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import dask.distributed, pandas, setuptools, wheel" 2>/dev/null; then
    exit 0
  fi
  python3 -m venv "$venv" 2>/dev/null || { echo "deps.sh: python3 -m venv failed (python3-venv missing?)" >&2; exit 77; }
  "$venv/bin/pip" install -q --disable-pip-version-check --timeout 20 $dask_py >"$venv.log" 2>&1 || {
    echo "deps.sh: pip could not install all of: $dask_py (see $venv.log)" >&2; exit 77; }
  exit 0
fi
if [ "$group" = readers ]; then
  venv=${2:-build/readers-venv}
  if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import duckdb, duckdb_extension_sqlite_scanner, pandas, hta, perfetto, selenium" 2>/dev/null; then
    exit 0
  fi
  python3 -m venv "$venv" 2>/dev/null || { echo "deps.sh: python3 -m venv failed (python3-venv missing?)" >&2; exit 77; }
  "$venv/bin/pip" install -q --disable-pip-version-check --timeout 20 $readers_py >"$venv.log" 2>&1 || {
    # the index is out of reach (or one package is): whatever did install stays, the tests check imports
    echo "deps.sh: pip could not install all of: $readers_py (see $venv.log)" >&2; exit 77; }
  exit 0
fi
case "$group" in
  core) pkgs=$core_pkgs ;;
  fuzz) pkgs="$core_pkgs $fuzz_pkgs" ;;
  browser) pkgs="$core_pkgs $browser_pkgs" ;;
  cross-aarch64) pkgs=$cross_aarch64_pkgs ;;
  prometheus) pkgs=$prometheus_pkgs ;;
  *) echo "deps.sh: unknown group '$group' (core|fuzz|browser|cross-aarch64|prometheus|readers|dask)" >&2; exit 2 ;;
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
