#!/usr/bin/env bash
# test_pip_wheel.sh — `pip install .` of the repository gives a working
# gpuphase. Specification:
#  * `pip wheel .` at the repository root (build isolation, as `pip install .`
#    does it) builds one platform wheel (linux_*) holding
#    gpuphase/bin/gpuphase, gpuphase/bin/gpuphase-report and
#    gpuphase/bin/gpuphase-agent (executable),
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
#  * the agent: the venv's `gpuphase agent` (the wheel's gpuphase-agent)
#    reduces a window recorded by the venv's gpuphase, served by a stand-in
#    control socket: its --once series equal the window's report, and it
#    serves them at 127.0.0.1:PORT/metrics (urllib); libmicrohttpd is the
#    system's, as for make's build (README.md "Set up and test").
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
for n in ("gpuphase/bin/gpuphase", "gpuphase/bin/gpuphase-report", "gpuphase/bin/gpuphase-agent",
          "gpuphase/lib/libgpuphase.so", "gpuphase/__init__.py", "gpuphase/_commands.py"):
    if n not in names:
        sys.exit(f"wheel lacks {n}: {sorted(names)}")
for n in ("gpuphase/bin/gpuphase", "gpuphase/bin/gpuphase-report", "gpuphase/bin/gpuphase-agent"):
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

# The agent: the venv's `gpuphase agent` runs the wheel's gpuphase-agent.
# The trace just recorded is put in a windows directory as a closed window
# of a stand-in duty-cycled process (agent_fake_capture.py, its control
# socket); --once reduces it through the agent's report library: its
# series equal the venv's gpuphase-report of the same file (ops exact,
# seconds within 1 %; control: the report counted twice must differ). Then
# it serves /metrics on 127.0.0.1 (Python's urllib).
[ -x "$site/gpuphase/bin/gpuphase-agent" ] || fail "the venv has no $site/gpuphase/bin/gpuphase-agent"
run gpuphase agent --help 2>&1 | grep -q -- '--listen ADDR:PORT' || fail "venv gpuphase agent --help: $(run gpuphase agent --help 2>&1 | head -n 3)"
mkdir -m 700 "$tmp/ctl" "$tmp/win"
cp sb.gpht "$tmp/win/w00000001.gpht" && echo 1 >"$tmp/last"
python3 "$S/tests/e2e/agent_fake_capture.py" "$tmp/ctl" "$tmp/win" "$tmp/last" 60 &
fake=$!
for _ in $(seq 1 40); do [ -S "$tmp/ctl/$fake.sock" ] && break; sleep 0.25; done
cp "$tmp/win/w00000001.gpht" "$tmp/window.gpht"
run python3 "$S/tests/e2e/agent_check.py" expect "$venv/bin/gpuphase-report" "$fake:$tmp/window.gpht" >"$tmp/agent_exp.json" \
	|| fail "gpuphase-report of the window failed"
run gpuphase agent --once --control-dir "$tmp/ctl" >"$tmp/once.prom" 2>"$tmp/once.err" \
	|| fail "venv gpuphase agent --once failed: $(tail -n 3 "$tmp/once.err")"
"$venv/bin/python" - "$tmp/once.prom" "$tmp/agent_exp.json" "$S/tests/e2e" "$fake" >"$tmp/agent_cmp" <<'PY' \
	|| fail "venv agent --once: its series are not the window's report: $(head -n 5 "$tmp/agent_cmp")"
import json, sys
sys.path.insert(0, sys.argv[3])
from agent_check import parse_metrics, compare
got, exp = parse_metrics(open(sys.argv[1]).read()), json.load(open(sys.argv[2]))
if not any(k == sys.argv[4] + "|step_kernel" for k in exp):
    sys.exit(print("the report of the window has no step_kernel: %s" % sorted(exp)) or 1)
twice = {k: {f: 2 * v for f, v in e.items()} for k, e in exp.items()}
if compare(twice, got) == 0:
    sys.exit(print("control: the window's report counted twice compares equal too") or 1)
sys.exit(compare(exp, got))
PY
[ ! -e "$tmp/win/w00000001.gpht" ] || fail "the venv agent left the reduced window in place"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# (not through run: a function in the background is a subshell, whose pid
# is not the agent's; env execs the venv's gpuphase, which execs the agent)
env PATH="$venv/bin:/usr/bin:/bin" SIMCUDA_CONFIG="$S/examples/sync_bound.simcuda" \
	gpuphase agent --listen "127.0.0.1:$port" --control-dir "$tmp/ctl" --interval 0.2 >"$tmp/agent.out" 2>&1 &
agent=$!
served=0
for _ in $(seq 1 40); do
	"$venv/bin/python" -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1], timeout=2).read())' \
		"http://127.0.0.1:$port/metrics" >"$tmp/scrape.prom" 2>/dev/null &&
		grep '^gpuphase_ops_total{' "$tmp/scrape.prom" | grep -F "pid=\"$fake\"" | grep -qF 'operator="step_kernel"' &&
		{ served=1; break; }
	sleep 0.25
done
[ "$served" = 1 ] || fail "the venv agent does not serve step_kernel at 127.0.0.1:$port/metrics: $(cat "$tmp/agent.out")"
kill "$agent" "$fake" 2>/dev/null
wait "$agent" "$fake" 2>/dev/null
# nothing of the test left running (an agent outliving it once polled its
# control directory for hours)
# (read from /proc, not with procps's pgrep: not on every Debian machine,
# and it waits for ever on a futex under the sanitizer's runtime this script
# exports; the scan runs without it too)
if left=$(env -u LD_PRELOAD python3 - "$tmp/ctl" <<'PY'
import os, sys
want = ["--control-dir", sys.argv[1]]
left = []
for pid in (p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()):
    try:
        argv = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace").split("\0")
    except OSError:
        continue  # gone meanwhile
    if any(argv[i:i + 2] == want for i in range(len(argv))):
        left.append(pid)
print(" ".join(left))
sys.exit(0 if left else 1)
PY
); then
	fail "the venv agent still runs after the test stopped it: $left"
	kill $left 2>/dev/null
fi

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
