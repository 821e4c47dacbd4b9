#!/usr/bin/env bash
# tests/e2e/test_pyframes.sh [3.X] — Python call sites: a Python program
# calls a CUDA library through ctypes on simcuda and waits at two known
# lines; the report must name both `app.py:LINE (function)`, for every
# CPython whose frame layout gpuphase knows (3.9 - 3.13). A Python whose
# layout it does not know (3.8 and older, 3.14+, where found) must run
# unaffected, say once that it falls back, and still give native call sites.
# For each known one, lines.py's 13 call sites must also be named at the
# line CPython itself gives each frame (f_lineno).
#
# Interpreters: the paths in GP_PYTHONS (space-separated: builds of your
# own), then python3 and python3.X on PATH and pyenv's versions.
# Without an argument: every one found except 3.9 and 3.10, and the phases
# (forward / backward / optimizer) with a 3.11+ one; fails if a Python was
# found but no 3.11+ one was read. With 3.X (test_pyframes_py39.sh,
# _py310.sh): only that version; exit 77 (skipped, never passed) where none
# is found.
set -u
B=${GP_BUILD:?GP_BUILD unset}; S=${GP_SRC:?GP_SRC unset}
fail() { echo "FAIL: $*"; exit 1; }
preload=$B/lib/libgpuphase.so
if [ -n "${GP_SAN:-}" ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then # an instrumented library in a plain python
  preload="$GP_SAN_RUNTIME:$preload"
  export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" # the interpreter's leaks are not ours
fi
tmp=$(mktemp -d /tmp/gp_pyf.XXXXXX); trap 'rm -rf "$tmp"' EXIT
cc -shared -fPIC -O1 -I"${CUDA_HOME:-/usr/local/cuda}/include" "$S/tests/e2e/pyframes/cslib.c" \
  -o "$tmp/libcslib.so" -L"$B/simcuda" -lcudart || fail "cannot build the ctypes library"

only=${1:-}
pys=""
# shellcheck disable=SC2086
for p in ${GP_PYTHONS:-} /usr/bin/python3 /usr/bin/python3.11 python3 python3.9 python3.10 python3.11 python3.12 \
         python3.13 python3.14 /root/.pyenv/versions/3.*/bin/python3 "$HOME"/.pyenv/versions/3.*/bin/python3; do
  p=$(command -v "$p" 2>/dev/null) || continue
  r=$("$p" -c 'import ctypes, os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null) || continue
  case " $pys " in *" $r "*) continue ;; esac
  ver=$("$r" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  if [ -n "$only" ]; then [ "$ver" = "$only" ] || continue
  else case "$ver" in 3.9|3.10) continue ;; esac # their own tests: test_pyframes_3.9.sh, _3.10.sh
  fi
  pys="$pys $r"
done
if [ -z "$pys" ]; then
  [ -n "$only" ] && { echo "SKIP: no CPython $only with ctypes found (GP_PYTHONS, PATH, pyenv)"; exit 77; }
  echo "SKIP: no python3 with ctypes here, other than any 3.9 / 3.10 (test_pyframes_py39.sh, _py310.sh)"; exit 77
fi

known=0; i=0
for py in $pys; do
  ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  i=$((i + 1)); d=$tmp/$i-$ver; mkdir -p "$d"
  (cd "$d" && LD_LIBRARY_PATH=$B/simcuda LD_PRELOAD=$preload GPUPHASE_LOG=info \
     GPUPHASE_OUTPUT=t.gpht "$py" "$S/tests/e2e/pyframes/app.py" "$tmp/libcslib.so" >out 2>err) ||
    { cat "$d/err"; fail "python $ver: profiled run failed"; }
  "$B/bin/gpuphase-report" "$d/t.gpht" >"$d/report.txt" 2>&1 || fail "python $ver: report failed"
  "$B/bin/gpuphase-report" --format json "$d/t.gpht" >"$d/report.json" 2>&1 || fail "python $ver: json report failed"
  sites=$(grep -A4 "Sync call sites" "$d/report.txt")
  case "$ver" in
    3.9|3.10|3.11|3.12|3.13) ;; # layouts known to libgpuphase/pyframes.c
    *)
      [ "$(grep -c 'native frames only' "$d/err")" = 1 ] || { cat "$d/err"; fail "python $ver: no single fallback line"; }
      echo "$sites" | grep -q "cs_wait" || { cat "$d/report.txt" "$d/err"; fail "python $ver: no native call site"; }
      echo "ok: python $ver ($py): layout unknown, said once, native call sites ($(echo "$sites" | sed -n 2p | awk '{print $1}'))"
      continue
      ;;
  esac
  if grep -q 'native frames only' "$d/err"; then # a free-threaded build, say
    echo "python $ver ($py): not read here (fallback said): $(grep 'native frames only' "$d/err")"; continue
  fi
  echo "$sites" | grep -q 'app.py:12 (forward_wait)' || { echo "$sites"; cat "$d/err"; fail "python $ver: line 12 not named"; }
  echo "$sites" | grep -q 'app.py:17 (step_wait)' || { echo "$sites"; fail "python $ver: line 17 not named"; }
  grep -q '"stack": \[.*app.py:21 (<module>).*cs_wait' "$d/report.json" ||
    { grep -m3 stack "$d/report.json"; fail "python $ver: full stack not in the JSON"; }
  "$B/bin/gpuphase-report" --export html "$d/r.html" "$d/t.gpht" >/dev/null 2>&1 || fail "python $ver: html failed"
  grep -A1 '<tr title="[^"]*app.py:17 (step_wait)$' "$d/r.html" | grep -q 'app.py:22 (&lt;module&gt;)$' ||
    fail "python $ver: no stack tooltip in the HTML"
  echo "ok: python $ver ($py): app.py:12 (forward_wait) and app.py:17 (step_wait) named"
  # every site of lines.py: the innermost frame's line is CPython's own
  (cd "$d" && rm -f t.gpht && LD_LIBRARY_PATH=$B/simcuda LD_PRELOAD=$preload GPUPHASE_OUTPUT=t.gpht \
     "$py" "$S/tests/e2e/pyframes/lines.py" "$tmp/libcslib.so" >lines.txt 2>err) ||
    { cat "$d/err"; fail "python $ver: lines.py run failed"; }
  "$B/bin/gpuphase-report" --format json "$d/t.gpht" >"$d/lines.json" 2>&1 || fail "python $ver: lines report failed"
  "$py" - "$d/lines.txt" "$d/lines.json" <<'EOF' || fail "python $ver: a line differs from CPython's"
import json, sys
want = set(open(sys.argv[1]).read().split("\n")) - {""}
got = set(s["stack"][0] for s in json.load(open(sys.argv[2]))["sync_callsites"])
for name in sorted(want ^ got):
    print("  %s: %s" % ("CPython's, not read" if name in want else "read, not CPython's", name))
print("ok: lines.py: %d of %d sites, each at CPython's own line" % (len(want & got), len(want)))
sys.exit(want != got or len(want) < 13)
EOF
  known=$((known + 1))
  case "$ver" in 3.9|3.10) ;; *) known_py=$py ;; esac # phases need co_qualname (3.11+)
done
[ "$known" -gt 0 ] || fail "no Python with a known frame layout was tried"
[ -n "$only" ] && exit 0
[ -n "${known_py:-}" ] || fail "no CPython 3.11+ tried: the phases need one"

# Framework phases from the Python frames: forward() / backward() /
# Optimizer.step(), 200 blocking copies each (phases.py).
d=$tmp/phases; mkdir -p "$d"
(cd "$d" && LD_LIBRARY_PATH=$B/simcuda LD_PRELOAD=$preload GPUPHASE_OUTPUT=t.gpht \
   "$known_py" "$S/tests/e2e/pyframes/phases.py" "$tmp/libcslib.so" >out 2>err) || { cat "$d/err"; fail "phases run failed"; }
"$B/bin/gpuphase-report" --group-by phase --format json "$d/t.gpht" >"$d/r.json" || fail "phases report failed"
# An op whose stack did not reach it (the report joins a hook's stack only
# when the hook record precedes CUPTI's; a few may not) is "(no phase)":
# never in another phase, so each phase has at most 200 and most of them.
for ph in forward backward optimizer; do
  n=$(grep -o "\"name\": \"$ph\", [^{]*\"count\": [0-9]*" "$d/r.json" | head -1 | grep -o '[0-9]*$')
  [ -n "$n" ] && [ "$n" -le 200 ] && [ "$n" -ge 150 ] ||
    { grep -o '"name": "[^"]*", [^{]*"count": [0-9]*' "$d/r.json"; fail "phase $ph: ${n:-no} ops, not 150..200"; }
  echo "ok: --group-by phase: $ph: $n of 200 copies"
done
