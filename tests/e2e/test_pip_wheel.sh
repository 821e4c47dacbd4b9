#!/usr/bin/env bash
# test_pip_wheel.sh — `pip install .` of the repository gives a working
# gpuphase. Specification:
#  * `pip wheel .` at the repository root (build isolation, as `pip install .`
#    does it) builds one platform wheel (linux_*) holding
#    gpuphase/bin/gpuphase and gpuphase/bin/gpuphase-report (executable),
#    gpuphase/lib/libgpuphase.so and the Python package (python/gpuphase);
#  * installed with no index into a fresh venv in a temp dir, the venv's
#    `gpuphase`, run from a directory outside the source tree with nothing of
#    the build tree in its environment but simcuda's folder, preloads the
#    library installed in the venv, records an example on simcuda, and its
#    `gpuphase report` names the example's kernel; the venv's
#    `gpuphase-report` and the package's report tool are the wheel's;
#  * CUPTI from a pip-installed CUDA: when the loader finds no
#    libcupti.so.13 (ld.so --inhibit-cache, no library path), the installed
#    library loads site-packages/nvidia/cu13/lib/libcupti.so.13 (simcuda's
#    CUPTI standing in for the nvidia-cuda-cupti wheel's) and subscribes;
#    control: without that file the same start is hook-only.
# The wheel build reuses make's build ($GP_BUILD: make finds it up to date);
# under a sanitizer build it makes its own plain one in $GP_BUILD/wheel.
# Exits 77 only when venv or pip cannot work here (no venv module, or the
# build backend meson-python not to be had from the index or pip's cache).
set -u
. "$(dirname "$0")/cli_common.sh"
require "$B/simcuda/libcudart.so.13" "$B/simcuda/libcupti.so.13" "$B/examples/sync_bound"
# the wheel's programs are never instrumented (under a sanitizer the wheel
# is built plain, below), but the example runs on this build's simcuda,
# which is: cli_common.sh's ASan runtime preload stays, and the wheel's
# gpuphase record appends its library after it
unset MAKEFLAGS MFLAGS MAKELEVEL
make_dir=$B
[ -z "${GP_SAN:-}" ] || make_dir=$B/wheel

venv=$tmp/venv
python3 -m venv "$venv" >"$tmp/venv.log" 2>&1 || { echo "SKIP: python3 -m venv failed: $(tail -n 2 "$tmp/venv.log")"; exit 77; }
t0=$(date +%s)
env -u LD_LIBRARY_PATH "$venv/bin/pip" wheel --no-deps --disable-pip-version-check -w "$tmp/dist" \
	-Csetup-args=-Dmake_build_dir="$make_dir" "$S" >"$tmp/wheel.log" 2>&1 || {
	if grep -Eq 'No matching distribution found for meson|Could not find a version that satisfies the requirement meson' "$tmp/wheel.log"; then
		echo "SKIP: pip cannot get the build backend meson-python (no index, nothing cached)"; exit 77
	fi
	fail "pip wheel failed: $(tail -n 15 "$tmp/wheel.log")"; finish; exit 1; }
echo "pip wheel took $(($(date +%s) - t0)) s"
wheels=("$tmp"/dist/gpuphase-*.whl)
[ "${#wheels[@]}" = 1 ] && [ -f "${wheels[0]}" ] || { fail "not one gpuphase wheel: $(ls "$tmp/dist")"; finish; exit 1; }
whl=${wheels[0]}
case $(basename "$whl") in
gpuphase-*-linux_*.whl) ;;
*) fail "not a platform wheel (linux_*): $(basename "$whl")" ;;
esac
"$venv/bin/python" - "$whl" <<'PY' || fail "wheel contents"
import stat, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = set(z.namelist())
for n in ("gpuphase/bin/gpuphase", "gpuphase/bin/gpuphase-report", "gpuphase/lib/libgpuphase.so",
          "gpuphase/__init__.py", "gpuphase/_commands.py"):
    if n not in names:
        sys.exit(f"wheel lacks {n}: {sorted(names)}")
for n in ("gpuphase/bin/gpuphase", "gpuphase/bin/gpuphase-report"):
    if not (z.getinfo(n).external_attr >> 16) & stat.S_IXUSR:
        sys.exit(f"{n} is not executable in the wheel")
PY
env -u LD_LIBRARY_PATH "$venv/bin/pip" install --no-index --disable-pip-version-check "$whl" >"$tmp/install.log" 2>&1 \
	|| { fail "pip install of the wheel failed: $(tail -n 5 "$tmp/install.log")"; finish; exit 1; }
site=$("$venv/bin/python" -c 'import gpuphase, os; print(os.path.dirname(os.path.dirname(gpuphase.__file__)))')
lib=$site/gpuphase/lib/libgpuphase.so

# a user's shell: the venv's bin first in PATH, a directory of their own
mkdir -p "$tmp/work" && cd "$tmp/work" || exit 1
run() { env PATH="$venv/bin:/usr/bin:/bin" SIMCUDA_CONFIG="$S/examples/sync_bound.simcuda" "$@"; }
run gpuphase --version | grep -q '^gpuphase ' || fail "venv gpuphase --version"
run gpuphase record -q -o "$tmp/env.gpht" -- env 2>/dev/null | grep -q "^LD_PRELOAD=.*$lib" \
	|| fail "gpuphase record does not preload the venv's library $lib"
run gpuphase record -o sb.gpht -- "$B/examples/sync_bound" >/dev/null 2>"$tmp/rec.err" \
	|| fail "venv gpuphase record failed: $(tail -n 5 "$tmp/rec.err")"
grep -Eq "$summary_re" "$tmp/rec.err" || fail "venv record: no summary: $(cat "$tmp/rec.err")"
run gpuphase report sb.gpht >"$tmp/rep" 2>&1 || fail "venv gpuphase report failed: $(head -n 3 "$tmp/rep")"
grep -q '^step_kernel ' "$tmp/rep" || fail "venv report does not name step_kernel: $(head -n 20 "$tmp/rep")"
grep -q 'CUPTI was unavailable' "$tmp/rep" && fail "venv record was hook-only: $(head -n 20 "$tmp/rep")"
run gpuphase-report --top 1 sb.gpht 2>&1 | grep -q '^step_kernel ' || fail "venv gpuphase-report does not report"
run "$venv/bin/python" -c 'import gpuphase, sys; sys.exit(gpuphase._tool() != gpuphase._BUNDLED_REPORT)' \
	|| fail "the package's report tool is not the wheel's gpuphase-report"

# CUPTI from site-packages when the loader finds none. simcuda's cudart
# needs its CUPTI (DT_NEEDED), so no simulated program can lack one: the
# library is started by hand (InitializeInjection, as cuInit would) in a
# Python that the loader runs without its cache, so nothing finds the
# system's libcupti.so.13.
ldso=$(readelf -l "$venv/bin/python" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
pyexe=$("$venv/bin/python" -c 'import os, sys; print(os.path.realpath(sys.executable))')
inject() { env -u LD_LIBRARY_PATH GPUPHASE_LOG=info GPUPHASE_OUTPUT="$1" "$ldso" --inhibit-cache "$pyexe" \
	-c 'import ctypes, sys; sys.exit(ctypes.CDLL(sys.argv[1]).InitializeInjection() != 1)' "$lib" 2>&1; }
inject nocupti.gpht >"$tmp/inj0" || fail "InitializeInjection without CUPTI failed: $(cat "$tmp/inj0")"
grep -q 'cannot load libcupti.so.13: .*hook-only capture' "$tmp/inj0" \
	|| fail "control: with no CUPTI anywhere the library did not go hook-only: $(cat "$tmp/inj0")"
run gpuphase report nocupti.gpht 2>&1 | grep -q 'CUPTI was unavailable' || fail "control: the report does not say hook-only"
mkdir -p "$site/nvidia/cu13/lib" && cp "$B/simcuda/libcupti.so.13" "$site/nvidia/cu13/lib/"
inject wheelcupti.gpht >"$tmp/inj1" || fail "InitializeInjection with the wheel's CUPTI failed: $(cat "$tmp/inj1")"
grep -q "CUPTI from the nvidia-cuda-cupti wheel: $site/gpuphase/lib/../../nvidia/cu13/lib/libcupti.so.13" "$tmp/inj1" \
	|| fail "CUPTI in site-packages/nvidia/cu13/lib was not loaded: $(cat "$tmp/inj1")"
run gpuphase report wheelcupti.gpht >"$tmp/rep1" 2>&1
grep -q 'CUPTI was unavailable' "$tmp/rep1" && fail "the wheel's CUPTI loaded but the capture is hook-only: $(head -n 12 "$tmp/rep1")"
grep -Eq '^  cupti +lean' "$tmp/rep1" || fail "the wheel-CUPTI capture is not in CUPTI's lean mode: $(head -n 12 "$tmp/rep1")"

finish
