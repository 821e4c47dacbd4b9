#!/usr/bin/env bash
# tests/gpu/counters_kit.sh — the GPU kit's hardware-counters check, on its
# own (docs/gpu-validation.md "Counters"):
#
#   tests/gpu/counters_kit.sh [--sim] RESULT_DIR
#
# Runs examples/gpu/counters_kernels (a copy kernel of known bytes, an FMA
# loop of known FLOPs) under libgpuphase with
# GPUPHASE_COUNTERS=samples=2,skip=1,kernel=copy_k;fma_k, and checks the
# report's roofline against the program's own arithmetic (its stdout line):
#   counters/copy_read    copy_k's DRAM bytes read per sample within 5 %
#   counters/copy_write   copy_k's DRAM bytes written per sample within 5 %
#   counters/fma_flops    fma_k's FP32 FLOPs per sample within 5 %
#   counters/bounds       copy_k memory-bound, fma_k compute-bound
#   counters/left_out     the 4 replayed launches in no operator's count
# One line per check (PASS / FAIL / SKIP, the number), everything else in
# RESULT_DIR; exit 1 if a check that ran failed. On a GPU it builds the
# program with nvcc -arch=native; --sim runs the make-built one on simcuda
# with tests/gpu/counters_kit.simcuda (the same arithmetic as cost model).
# A machine where profiling is restricted to admin users
# (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) gives SKIP with the reason.
 # Environment: GP_BUILD, GP_SRC, CUDA_HOME, PYTHON, GP_SAN / GP_SAN_RUNTIME
# (sanitizer builds; all optional).
set -u
SIM=0
RD=""
for a in "$@"; do
	case $a in
	--sim) SIM=1 ;;
	-*) echo "counters_kit.sh: unknown option '$a' (accepted: --sim)" >&2; exit 2 ;;
	*) RD=$a ;;
	esac
done
[ -n "$RD" ] || { echo "usage: counters_kit.sh [--sim] RESULT_DIR" >&2; exit 2; }
SRC=${GP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
B=${GP_BUILD:-$SRC/build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
PYTHON=${PYTHON:-python3}
mkdir -p "$RD" || exit 2
fails=0
say() { echo "$1  $2  $3${4:+  ($4)}" | tee -a "$RD/counters.txt"; [ "$1" = FAIL ] && fails=$((fails + 1)); return 0; }

prog=$B/examples/gpu/counters_kernels
envs=()
if [ "$SIM" = 1 ]; then
	envs=(LD_LIBRARY_PATH="$B/simcuda" SIMCUDA_CONFIG="$SRC/tests/gpu/counters_kit.simcuda" SIMCUDA_TRUTH="$RD/truth.jsonl")
else
	prog=$RD/counters_kernels
	if ! "$CUDA_HOME/bin/nvcc" -O2 -arch=native -cudart shared -o "$prog" "$SRC/examples/gpu/counters_kernels.cu" \
		>"$RD/nvcc.log" 2>&1 && ! "$CUDA_HOME/bin/nvcc" -O2 -cudart shared -o "$prog" \
		"$SRC/examples/gpu/counters_kernels.cu" >>"$RD/nvcc.log" 2>&1; then
		say FAIL counters/build - "nvcc failed: $RD/nvcc.log"
		exit 1
	fi
	envs=(LD_LIBRARY_PATH="$CUDA_HOME/lib64:$CUDA_HOME/extras/CUPTI/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
fi
[ -x "$prog" ] || { say FAIL counters/build - "$prog missing (make all)"; exit 1; }
preload=$B/lib/libgpuphase.so
if [ -n "${GP_SAN:-}" ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then # an instrumented library
	preload="$GP_SAN_RUNTIME:$preload"
	envs+=(ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}")
fi
env "${envs[@]}" LD_PRELOAD="$preload" GPUPHASE_OUTPUT="$RD/trace.gpht" GPUPHASE_LOG=info \
	GPUPHASE_COUNTERS='samples=2,skip=1,kernel=copy_k;fma_k' timeout 300 "$prog" >"$RD/stdout" 2>"$RD/stderr"
rc=$?
if [ "$rc" != 0 ]; then
	say FAIL counters/run "$rc" "the program failed: $(tail -2 "$RD/stderr")"
	exit 1
fi
"$B/bin/gpuphase-report" --format json "$RD/trace.gpht" >"$RD/report.json" 2>"$RD/report.err" &&
	"$B/bin/gpuphase-report" "$RD/trace.gpht" >"$RD/report.txt" 2>>"$RD/report.err" ||
	{ say FAIL counters/report - "gpuphase-report failed: $(cat "$RD/report.err")"; exit 1; }
$PYTHON - "$RD/stdout" "$RD/report.json" >>"$RD/counters.txt" <<'PYEOF'
import json, re, sys
want = dict(re.findall(r"(\w+)=(\d+)", open(sys.argv[1]).read()))
rep = json.load(open(sys.argv[2]))
roof = next((a["roofline"] for a in rep["analyses"] if "roofline" in a), None)
out = []
def row(st, name, num, why=""):
    out.append((st, name, num, why))
if not roof or not roof["available"]:
    why = roof and roof["status"] or "no counters in the trace"
    st = "SKIP" if "INSUFFICIENT_PRIVILEGES" in why else "FAIL"
    for c in ("copy_read", "copy_write", "fma_flops", "bounds", "left_out"):
        row(st, "counters/" + c, "-", why)
else:
    ops = {o["name"]: o for o in roof["operators"]}
    def per(name, key):
        o = ops.get(name)
        return o[key] / o["samples"] if o and o["samples"] else None
    for c, name, key, w in (("copy_read", "copy_k", "dram_bytes_read", "dram_bytes_read"),
                            ("copy_write", "copy_k", "dram_bytes_write", "dram_bytes_write"),
                            ("fma_flops", "fma_k", "flops_fp32", "flops_fp32")):
        got, exp = per(name, key), float(want[w])
        err = abs(got - exp) / exp if got is not None else None
        row("PASS" if err is not None and err <= 0.05 else "FAIL", "counters/" + c,
            "%.4g" % got if got is not None else "-",
            "want %.4g, %s" % (exp, "off %.2f %%" % (100 * err) if err is not None else "no sample"))
    b = (ops.get("copy_k", {}).get("bound"), ops.get("fma_k", {}).get("bound"))
    row("PASS" if b == ("memory", "compute") else "FAIL", "counters/bounds", "%s/%s" % b,
        "want memory/compute")
    counts = {o["name"]: o["count"] for o in rep["operators"]}
    left = rep["summary"].get("ops_replayed", 0)
    ok = left == 4 and counts.get("copy_k") == 2 and counts.get("fma_k") == 2
    row("PASS" if ok else "FAIL", "counters/left_out", str(left),
        "replayed launches; operators copy_k %s, fma_k %s of 4 launches each" % (counts.get("copy_k"), counts.get("fma_k")))
for r in out:
    print("%s  %s  %s%s" % (r[0], r[1], r[2], "  (%s)" % r[3] if r[3] else ""))
PYEOF
cat "$RD/counters.txt"
grep -q '^FAIL' "$RD/counters.txt" && fails=$((fails + 1))
exit $((fails > 0))
