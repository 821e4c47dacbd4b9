#!/usr/bin/env bash
# test_cli_install.sh — `make install PREFIX=...` puts gpuphase where users
# expect it, and the installed command works from there. Specification:
# PREFIX/bin/gpuphase, gpuphase-report and gpuphase-agent, PREFIX/lib/libgpuphase.so,
# PREFIX/share/man/man1/gpuphase.1 and PREFIX/share/doc/gpuphase/ (README.md,
# troubleshooting.md, configuration.md) and PREFIX/share/gpuphase/categories.tsv
# (the report's default category table) exist; the installed gpuphase finds
# the installed library (../lib) and report tool (next to it): it records a
# CUDA program on simcuda and reports on the trace without any build tree
# path in its environment. DESTDIR is honoured (staged installs).
set -u
. "$(dirname "$0")/cli_common.sh"
require "$G" "$B/bin/gpuphase-report" "$B/lib/libgpuphase.so" "$B/tests/cli_app_shared"
unset MAKEFLAGS MFLAGS MAKELEVEL
# make test has built everything: install only (-o all), and never run the
# toolchain with the sanitizer runtime preloaded.
mk() { env -u LD_PRELOAD -u ASAN_OPTIONS make -o all -C "$S" --no-print-directory -s B="$rel" SAN="${GP_SAN:-}" "$@"; }
rel=$(realpath --relative-to="$S" "$B")
prefix=$tmp/prefix
mk PREFIX="$prefix" install >"$tmp/make.log" 2>&1 \
	|| { fail "make install failed: $(tail -n 5 "$tmp/make.log")"; finish; exit 1; }
for f in bin/gpuphase bin/gpuphase-report bin/gpuphase-agent lib/libgpuphase.so share/man/man1/gpuphase.1 \
	 share/doc/gpuphase/README.md share/doc/gpuphase/troubleshooting.md share/doc/gpuphase/configuration.md \
	 share/gpuphase/categories.tsv; do
	[ -s "$prefix/$f" ] || fail "make install did not install $f"
done
[ -x "$prefix/bin/gpuphase" ] || fail "installed gpuphase is not executable"

"$prefix/bin/gpuphase" --version | grep -q '^gpuphase ' || fail "installed gpuphase --version"
"$prefix/bin/gpuphase" agent --help | grep -q '^usage: gpuphase agent' || fail "installed gpuphase agent --help"
cd "$tmp" || exit 1
"$prefix/bin/gpuphase" record -o "$tmp/inst.gpht" -- "$B/tests/cli_app_shared" 0 3 >/dev/null 2>"$tmp/e"; rc=$?
[ "$rc" = 0 ] || fail "installed record exit $rc: $(cat "$tmp/e")"
grep -Eq "$summary_re" "$tmp/e" || fail "installed record: no summary: $(cat "$tmp/e")"
grep -q "LD_PRELOAD=$prefix/lib/libgpuphase.so\|$prefix/lib/libgpuphase.so" <("$prefix/bin/gpuphase" record -q -o "$tmp/e2.gpht" -- env 2>/dev/null) \
	|| fail "installed record does not preload the installed library"
"$prefix/bin/gpuphase" report "$tmp/inst.gpht" >"$tmp/r" 2>&1 || fail "installed report failed: $(head -n 3 "$tmp/r")"
grep -q 'cli_scale' "$tmp/r" || fail "installed report does not name the kernels: $(head -n 20 "$tmp/r")"

mk PREFIX=/opt/gp DESTDIR="$tmp/stage" install \
	>"$tmp/make2.log" 2>&1 || fail "make install DESTDIR=... failed: $(tail -n 5 "$tmp/make2.log")"
[ -x "$tmp/stage/opt/gp/bin/gpuphase" ] || fail "DESTDIR staging: no $tmp/stage/opt/gp/bin/gpuphase"

finish
