#!/usr/bin/env bash
# test_window_unopened.sh — what a user asked for and did not get is said,
# with why (docs/configuration.md "Capture window", docs/metrics.md §6, §20),
# through `gpuphase record` on simcuda:
#   iters     tests/e2e/window_unopened (200 iterations whose only waits are
#             blocking copies and cudaFree) with -w skip=20,iters=10 and the
#             default marker `sync`: exit 0, and record's stderr, the text
#             report and JSON summary.window_empty all say the window never
#             opened, that `sync` saw no synchronize call, the 200 blocking
#             copies and the marker that would work (kernel:step_k, the most
#             launched kernel). Following that advice (-m kernel:step_k)
#             captures 10 iterations and says nothing of the kind (control:
#             the line is not printed whatever the trace).
#   skip      counters_run (14 synchronizes) with skip=50: the marker counted
#             14 iterations, a smaller skip= would open it
#   time      -w delay=3s on a run that ends at once: never opened, the
#             program ended before delay=
#   late      -w delay=300ms on a run whose CUDA work ends at once, then
#             sleeps 900 ms: the window opened and held no CUDA call (the
#             report, and record's summary line from the trace)
#   counters  --counters top=2 (no from=) on counters_run (36 launches, fewer
#             than the default warm-up of 100): record's stderr, the
#             Roofline section and JSON roofline.status say no launch was
#             sampled, why, and what to write; top=2,warmup=20 samples
#             (control: the same words are absent when counters came)
# Tamper control: each "said" check is also run on a whole-run trace of the
# same program, which must not say it.
# Environment (make test): GP_BUILD, GP_SRC.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
G=$B/bin/gpuphase
R=$B/bin/gpuphase-report
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for f in "$G" "$R" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/tests/e2e/window_unopened" \
	"$B/tests/e2e/counters_run"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
if [ -n "${GP_SAN:-}" ]; then
	echo "SKIP: gpuphase record sets LD_PRELOAD itself (no sanitizer runtime before the library)"
	exit 77
fi
tmp=$(mktemp -d /tmp/gp_window_unopened.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
U=$B/tests/e2e/window_unopened

# rec NAME [RECORD OPTIONS...] -- PROGRAM...: trace, stderr, text and JSON in $tmp/NAME.*
rec() {
	local name=$1
	shift
	timeout 120 "$G" record -o "$tmp/$name.gpht" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
		{ fail "$name: record returned $? ($(tail -3 "$tmp/$name.err"))"; return 1; }
	"$R" "$tmp/$name.gpht" >"$tmp/$name.txt" 2>>"$tmp/$name.rerr" &&
		"$R" --format json "$tmp/$name.gpht" >"$tmp/$name.json" 2>>"$tmp/$name.rerr" ||
		{ fail "$name: gpuphase-report failed: $(cat "$tmp/$name.rerr")"; return 1; }
}
# said NAME TEXT: record's stderr, the text report and JSON summary.window_empty hold TEXT
said() {
	grep -qF -- "$2" "$tmp/$1.err" || fail "$1: record did not say '$2': $(cat "$tmp/$1.err")"
	grep -qF -- "$2" "$tmp/$1.txt" || fail "$1: the report did not say '$2'"
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["summary"].get("window_empty") or ""
sys.exit(0 if sys.argv[2] in s else 1)' "$tmp/$1.json" "$2" || fail "$1: JSON summary.window_empty lacks '$2'"
}
# silent NAME: no window line anywhere (the control)
silent() {
	grep -q 'window never opened\|NOTHING CAPTURED\|held no CUDA call' "$tmp/$1.err" "$tmp/$1.txt" &&
		fail "$1: says the window held nothing, yet it captured"
	python3 -c 'import json, sys
sys.exit(1 if "window_empty" in json.load(open(sys.argv[1]))["summary"] else 0)' "$tmp/$1.json" ||
		fail "$1: JSON has window_empty, yet it captured"
}
ops() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["summary"]["ops"])' "$tmp/$1.json"; }

echo "--- iters: skip=20,iters=10, the only waits blocking copies and cudaFree"
if rec iters -w skip=20,iters=10 -- "$U" 200; then
	grep -q 'NOTHING CAPTURED: capture window never opened' "$tmp/iters.txt" || fail "iters: no NOTHING CAPTURED line"
	said iters 'capture window never opened (GPUPHASE_WINDOW=skip=20,iters=10)'
	said iters 'the marker `sync` saw no cudaDeviceSynchronize/cudaStreamSynchronize call'
	said iters '200 blocking copies/memsets, 201 implicit syncs'
	said iters "GPUPHASE_ITER_MARKER='kernel:step_k' (the most launched kernel, 200 launches)"
	[ "$(ops iters)" = 0 ] || fail "iters: $(ops iters) ops in a window that never opened"
fi
echo "--- iters with the advised marker: 10 iterations captured, nothing said"
if rec advised -w skip=20,iters=10 -m kernel:step_k -- "$U" 200; then
	silent advised
	n=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(o["count"] for o in d["operators"] if o["name"] == "step_k"))' "$tmp/advised.json")
	[ "$n" = 10 ] || fail "advised: $n step_k launches captured, want the 10 iterations'"
fi
echo "--- control: the whole run of the same program"
rec whole -- "$U" 200 && silent whole

echo "--- skip: more iterations skipped than the run has"
if rec skip -w skip=50,iters=5 -- "$B/tests/e2e/counters_run"; then
	said skip 'the marker `sync` counted 14 iterations, the window starts after 50'
	said skip 'a skip= below 14 would open it'
fi

echo "--- time: the program ends before delay="
if rec time -w delay=3s,duration=1s -- "$U" 20; then
	said time 'capture window never opened (GPUPHASE_WINDOW=delay=3.000s,...): the program ended'
	said time 'before delay=3.000 s; its last CUDA call seen was at'
fi
echo "--- late: the window opens after the program's last CUDA call"
if rec late -w delay=300ms,duration=2s -- "$U" 20 900; then
	said late 'the capture window opened but held no CUDA call'
	grep -q 'gpuphase: trace .*; NOTHING CAPTURED: the capture window opened but held no CUDA call' "$tmp/late.err" ||
		fail "late: record's summary line does not say it"
	grep -q 'never opened' "$tmp/late.err" && fail "late: record says never opened; it opened"
fi

echo "--- counters: top=2 without from= on a run shorter than the warm-up"
if rec ctr --counters top=2 -- env SIMCUDA_CONFIG="$S/tests/e2e/counters_run.simcuda" "$B/tests/e2e/counters_run"; then
	why='sampled no launch: the run made 36 launches, fewer than the warm-up of 100 that ranks the kernels; write warmup= below 36 or kernel=GLOB'
	grep -qF -- "$why" "$tmp/ctr.err" || fail "counters: record did not say why: $(cat "$tmp/ctr.err")"
	sed -n '/^Roofline/,/^$/p' "$tmp/ctr.txt" | grep -qF -- "$why" || fail "counters: no Roofline line saying why"
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["analyses"][0]["roofline"]
sys.exit(0 if r["available"] is False and sys.argv[2] in r["status"] else 1)' "$tmp/ctr.json" "$why" ||
		fail "counters: JSON roofline does not say why"
fi
echo "--- counters control: top=2,warmup=20 samples the top kernels"
if rec ctr2 --counters top=2,warmup=20 -- env SIMCUDA_CONFIG="$S/tests/e2e/counters_run.simcuda" \
	"$B/tests/e2e/counters_run"; then
	grep -q 'sampled no launch' "$tmp/ctr2.err" "$tmp/ctr2.txt" && fail "counters control: says nothing was sampled"
	grep -q 'launches replayed for their counters' "$tmp/ctr2.txt" || fail "counters control: nothing replayed"
fi

[ "$fails" = 0 ] && echo "PASS" || { echo "$fails failure(s)"; exit 1; }
