#!/usr/bin/env bash
# tests/e2e/test_native_names.sh — native call sites named offline from the
# files (report/core/symbolize.c, libdw): a program without exported symbols
# waits in a static function; the report names the function from .symtab,
# and native_app.c:LINE when it was built with -g. dladdr alone (the
# capture-time names) could only print an address there. The site is read
# from the operators grouped by call site (a blocking copy's op). Then the
# program's file replaced by a FIFO of the same name: the report must not
# open it for reading (that would wait for a writer for ever), must finish
# within 30 s and name the site as the capture did.
set -u
B=${GP_BUILD:?GP_BUILD unset}; S=${GP_SRC:?GP_SRC unset}
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d /tmp/gp_natn.XXXXXX); trap 'rm -rf "$tmp"' EXIT
ldconfig -p | grep -q 'libdw\.so\.1 ' || { echo "SKIP: libdw.so.1 not installed"; exit 77; }
preload=$B/lib/libgpuphase.so
if [ -n "${GP_SAN:-}" ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then # an instrumented library in a plain program
  preload="$GP_SAN_RUNTIME:$preload"
  export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" # the program's leaks are not ours
fi
inc=${CUDA_HOME:-/usr/local/cuda}/include
line=$(grep -n 'the wait \*/' "$S/tests/e2e/pyframes/native_app.c" | cut -d: -f1)
for g in g nog; do
  flags=-O1; [ "$g" = g ] && flags="-O1 -g"
  # shellcheck disable=SC2086
  cc $flags -I"$inc" "$S/tests/e2e/pyframes/native_app.c" -o "$tmp/app_$g" -L"$B/simcuda" -lcudart ||
    fail "cannot build the native program"
  nm -D "$tmp/app_$g" | grep -q na_static_wait && fail "na_static_wait is exported"
  (cd "$tmp" && LD_LIBRARY_PATH=$B/simcuda LD_PRELOAD=$preload GPUPHASE_OUTPUT=$g.gpht \
     "./app_$g" 2>"$g.err") || { cat "$tmp/$g.err"; fail "profiled run ($g) failed"; }
  "$B/bin/gpuphase-report" --group-by callsite --format json "$tmp/$g.gpht" >"$tmp/$g.txt" 2>&1 ||
    fail "report ($g) failed"
  site=$(grep -o '"name": "na_static_wait[^"]*"' "$tmp/$g.txt" | head -1)
  if [ "$g" = g ]; then
    echo "$site" | grep -q "na_static_wait (native_app.c:$line)" || { cat "$tmp/$g.txt"; fail "-g: no file:line"; }
  else
    echo "$site" | grep -q 'na_static_wait+0x[0-9a-f]* (.*app_nog)' || { cat "$tmp/$g.txt"; fail "no -g: no function"; }
  fi
  echo "ok: $g: $site"
done
# the module's file replaced by a FIFO: not a file to read (the capture's
# name is kept); a blocking open would hang here
rm -f "$tmp/app_nog"
mkfifo "$tmp/app_nog" || fail "mkfifo"
timeout 30 "$B/bin/gpuphase-report" --group-by callsite --format json "$tmp/nog.gpht" >"$tmp/fifo.txt" 2>&1
rc=$?
[ "$rc" = 124 ] && fail "the report hung on a module path that is now a FIFO"
[ "$rc" = 0 ] || { cat "$tmp/fifo.txt"; fail "report with a FIFO module failed ($rc)"; }
grep -q 'na_static_wait' "$tmp/fifo.txt" && fail "a function name read from a FIFO?"
echo "ok: the module's file replaced by a FIFO: the report finished (rc 0), the capture's names kept"
