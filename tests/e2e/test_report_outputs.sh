#!/usr/bin/env bash
# test_report_outputs.sh — gpuphase-report's machine-readable outputs stay
# valid for every kind of trace the tests produce. Each example program and
# e2e scenario runs under the profiler on simcuda (whole run, a skip/iters
# window, hook-only capture, graphs with NVTX and stacks); then for each trace
# tests/e2e/report_outputs_check.py checks:
#   --format json   strict JSON, schema 2, every documented field and type,
#                   the analyses (stages, host conditions, trends, CUDA
#                   graphs) consistent with themselves and with the text
#                   report's sections (docs/report-json.md)
#   --format csv    the documented header, one row per JSON operator
#   chrome-trace    ph/ts/pid/tid on every event, flows paired, host threads
#                   and GPU streams on separate tracks, one event per GPU op
#   html            self-contained, a section per analysis with content
# plus markdown and every --group-by, a truncated trace (--allow-truncated)
# and two traces merged (one analyses item each). The numbers themselves are
# checked against simcuda's ground truth by test_report_e2e.sh and
# test_analyses_e2e.sh; this test is about the outputs' shape.
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
CHECK="python3 $S/tests/e2e/report_outputs_check.py"
fails=0
checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for f in "$R" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/graph_replay" \
	"$B/tests/e2e/analyses_run" "$B/tests/e2e/report_multistream"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
tmp=$(mktemp -d /tmp/gp_outputs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

preload=$B/lib/libgpuphase.so
asan_opts=${ASAN_OPTIONS:-}
if [ -n "${GP_SAN:-}" ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload"
	[ "$GP_SAN" = asan ] && asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}" # the programs' leaks are not ours
fi

# trace NAME PROGRAM COSTMODEL [ENV...]: $tmp/NAME.gpht
trace() {
	local name=$1 prog=$2 model=$3
	shift 3
	(cd "$tmp" && env "$@" ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" \
		LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" SIMCUDA_CONFIG="$model" \
		GPUPHASE_OUTPUT="$tmp/$name.gpht" "$prog" >"$tmp/$name.out" 2>&1) ||
		{ fail "$name: program failed: $(tail -3 "$tmp/$name.out")"; return 1; }
}

# outputs NAME [REPORT OPTIONS...]: every output of $tmp/NAME.gpht, checked
outputs() {
	local name=$1 t=$tmp/$1.gpht
	shift
	local n=$tmp/$name
	checks=$((checks + 1))
	if ! "$R" "$@" --format json "$t" >"$n.json" 2>"$n.err" || ! "$R" "$@" "$t" >"$n.txt" 2>>"$n.err" ||
		! "$R" "$@" --format csv "$t" >"$n.csv" 2>>"$n.err" ||
		! "$R" "$@" --format markdown "$t" >"$n.md" 2>>"$n.err" ||
		! "$R" "$@" --export chrome-trace "$n.ct.json" --export html "$n.html" "$t" 2>>"$n.err"; then
		fail "$name: gpuphase-report failed: $(head -3 "$n.err")"
		return
	fi
	local out
	out=$($CHECK json "$n.json" 1 "$n.txt"; $CHECK csv "$n.csv" "$n.json"; $CHECK chrome "$n.ct.json" "$n.json";
		$CHECK html "$n.html" "$n.json") || { fail "$name $*: outputs"; echo "$out" | head -20; return; }
	grep -q '^## Operators' "$n.md" || fail "$name: markdown has no operator table"
	echo "ok   $name $*"
}

trace compute_bound "$B/examples/compute_bound" "$S/examples/compute_bound.simcuda" && outputs compute_bound
trace launch_bound "$B/examples/launch_bound" "$S/examples/launch_bound.simcuda" && outputs launch_bound
trace sync_bound "$B/examples/sync_bound" "$S/examples/sync_bound.simcuda" GPUPHASE_STACKS=sync && {
	outputs sync_bound
	outputs sync_bound --group-by callsite
}
trace graphs "$B/examples/graph_replay" "$S/examples/graph_replay.simcuda" GPUPHASE_STACKS=launch \
	NVTX_INJECTION64_PATH="$B/lib/libgpuphase.so" && {
	outputs graphs
	python3 - "$tmp/graphs.json" <<'PY' || fail "graphs: json has no captured graph"
import json, sys
g = json.load(open(sys.argv[1]))["analyses"][0]["cuda_graphs"]
assert len(g) == 1 and g[0]["launches"] > 0 and all(n["captured"] and n["nvtx"] for n in g[0]["node_items"]), g
PY
	# gpuphase-dump prints the graph records' fields by kind: the captured
	# nodes, their clones and the per-kernel ids agree with the report
	checks=$((checks + 1))
	if "$B/bin/gpuphase-dump" "$tmp/graphs.gpht" >"$tmp/graphs.dump" 2>&1; then
		python3 - "$tmp/graphs.dump" "$tmp/graphs.json" <<'PY' && echo "ok   gpuphase-dump graph records" ||
import json, re, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("graph_node ")]
g = json.load(open(sys.argv[2]))["analyses"][0]["cuda_graphs"][0]
cap = [re.fullmatch(r"graph_node kind=captured graph=(\d+) node=(\d+) op=(\d+) tid=(\d+) ts=(\d+)\n", l) for l in lines
       if "kind=captured" in l]
clo = [re.fullmatch(r"graph_node kind=cloned graph=(\d+) node=(\d+) from_graph=(\d+) from_node=(\d+)\n", l) for l in lines
       if "kind=cloned" in l]
ops = [re.fullmatch(r"graph_node kind=op graph=(\d+) node=(\d+) corr=(\d+)\n", l) for l in lines if "kind=op" in l]
assert all(cap) and all(clo) and all(ops), "a graph_node line does not parse"
assert len(cap) + len(clo) + len(ops) == len(lines), "graph_node lines of unknown kind"
nodes = {n["node"]: n for n in g["node_items"]}
assert {int(m[2]) for m in cap} == set(nodes) and all(int(m[1]) == g["graph"] for m in cap), "captured nodes"
assert all(int(m[4]) == nodes[int(m[2])]["thread"] and int(m[3]) > 0 for m in cap), "capturing thread / op id"
assert {int(m[4]) for m in clo} == set(nodes) and all(int(m[3]) == g["graph"] for m in clo), "cloned from"
assert len(ops) == g["kernels"] and all(int(m[1]) == g["exec_graph"] for m in ops), "per-kernel graph ids"
assert len({int(m[3]) for m in ops}) == g["launches"], "launch correlation ids"
PY
			fail "gpuphase-dump: graph records disagree with the report (see above)"
	else
		fail "gpuphase-dump failed: $(tail -2 "$tmp/graphs.dump")"
	fi
	cp "$tmp/graphs.gpht" "$tmp/graphs_nvtx.gpht"
	outputs graphs_nvtx --group-by nvtx --top 2
}
trace multistream "$B/tests/e2e/report_multistream" "$S/tests/e2e/report_multistream.simcuda" &&
	outputs multistream --group-by stream
trace run "$B/tests/e2e/analyses_run" "$S/tests/e2e/analyses_run.simcuda" \
	CUDA_INJECTION64_PATH="$B/lib/libgpuphase.so" && {
	outputs run
	python3 - "$tmp/run.json" <<'PY' || fail "run: json lacks the trends the scenario builds (drift_k, tail_k)"
import json, sys
t = json.load(open(sys.argv[1]))["analyses"][0]["trends"]
assert [o["name"] for o in t["drifting"]] == ["drift_k"], t["drifting"]
assert [o["name"] for o in t["long_tail"]] == ["tail_k"], t["long_tail"]
PY
}
trace window "$B/tests/e2e/analyses_run" "$S/tests/e2e/analyses_run.simcuda" GPUPHASE_WINDOW=skip=10,iters=10 &&
	outputs window
trace hookonly "$B/examples/sync_bound" "$S/examples/sync_bound.simcuda" GPUPHASE_CUPTI=0 && outputs hookonly

# a trace cut in the middle: the report of what is there is still valid JSON
if [ -e "$tmp/run.gpht" ]; then
	checks=$((checks + 1))
	head -c $(($(stat -c %s "$tmp/run.gpht") / 2)) "$tmp/run.gpht" >"$tmp/cut.gpht"
	"$R" --allow-truncated --format json "$tmp/cut.gpht" >"$tmp/cut.json" 2>"$tmp/cut.err" &&
		"$R" --allow-truncated "$tmp/cut.gpht" >"$tmp/cut.txt" 2>>"$tmp/cut.err" &&
		$CHECK json "$tmp/cut.json" 1 "$tmp/cut.txt" &&
		python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["summary"]["complete"])' "$tmp/cut.json" &&
		echo "ok   truncated trace (--allow-truncated)" || fail "truncated trace: $(head -3 "$tmp/cut.err")"
fi
# two traces merged: one analyses item per trace
if [ -e "$tmp/run.gpht" ] && [ -e "$tmp/graphs.gpht" ]; then
	checks=$((checks + 1))
	"$R" --format json --merge "$tmp/run.gpht" "$tmp/graphs.gpht" >"$tmp/merged.json" 2>"$tmp/merged.err" &&
		$CHECK json "$tmp/merged.json" 2 &&
		"$R" --merge --export html "$tmp/merged.html" "$tmp/run.gpht" "$tmp/graphs.gpht" 2>>"$tmp/merged.err" &&
		grep -q "<h2>CUDA graphs &mdash; $tmp/graphs.gpht" "$tmp/merged.html" &&
		"$R" --merge "$tmp/run.gpht" "$tmp/graphs.gpht" >"$tmp/merged.txt" 2>>"$tmp/merged.err" &&
		grep -q "^Analyses of trace 2: $tmp/graphs.gpht" "$tmp/merged.txt" &&
		echo "ok   two traces merged" || fail "merged: $(head -3 "$tmp/merged.err")"
fi

[ "$fails" = 0 ] && echo "test_report_outputs.sh: all $checks traces' outputs valid" ||
	echo "test_report_outputs.sh: $fails failed"
[ "$fails" = 0 ]
