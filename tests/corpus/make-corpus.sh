#!/usr/bin/env bash
# tests/corpus/make-corpus.sh — (re)build the report corpus: traces recorded
# from every example, the server, the e2e scenarios and the GPU kit's --sim
# runs on simcuda, plus cut and merged ones, and the outputs today's
# gpuphase-report gives for each (text, markdown, csv, json, group-bys,
# chrome-trace, sqlite, html, diff, stability).
#
#   make-corpus.sh traces   record the traces into tests/corpus/traces/
#   make-corpus.sh outputs  write tests/corpus/expected/ from the traces with
#                           the report built in $GP_BUILD (default build/)
#   make-corpus.sh into DIR     the same outputs into DIR (what the test does)
#   make-corpus.sh into-full DIR  ... keeping chrome-trace, SQL and HTML as
#                           files (to see what changed between two builds)
#   make-corpus.sh runs     the list of report runs, NAME|OPTIONS|TRACES a line
#                           (tests/e2e/test_report_partial.sh replays them)
#
# The traces are committed: a trace holds host-measured times, so a
# re-recorded one differs; the outputs are a pure function of the traces and
# the report's code. tests/corpus/test_report_corpus.sh recomputes every
# output and requires it byte-identical to expected/: a change of the report
# that is meant to change an output regenerates expected/ in the same commit
# and says why in its message.
set -eu
S=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${GP_BUILD:-$S/build}" && pwd)
C=$S/tests/corpus
R=$B/bin/gpuphase-report

record_traces() {
	local t=$C/traces tmp
	rm -rf "$t" && mkdir -p "$t"
	tmp=$(mktemp -d /tmp/gp_corpus.XXXXXX)
	# rec NAME PROGRAM COSTMODEL [ENV...] [-- ARGS...]
	rec() {
		local name=$1 prog=$2 model=$3
		shift 3
		local envs=() args=()
		while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
		[ $# -gt 0 ] && shift && args=("$@")
		(cd "$tmp" && env "${envs[@]}" LD_PRELOAD="$B/lib/libgpuphase.so" LD_LIBRARY_PATH="$B/simcuda" \
			SIMCUDA_CONFIG="$model" GPUPHASE_OUTPUT="$t/$name.gpht" "$prog" "${args[@]}" >/dev/null 2>&1)
		echo "corpus: $name.gpht"
	}
	local E=$B/examples X=$S/examples T=$B/tests/e2e Y=$S/tests/e2e
	rec compute_bound "$E/compute_bound" "$X/compute_bound.simcuda"
	rec launch_bound "$E/launch_bound" "$X/launch_bound.simcuda"
	rec sync_bound "$E/sync_bound" "$X/sync_bound.simcuda" GPUPHASE_STACKS=sync
	rec sync_bound_b "$E/sync_bound" "$X/sync_bound.simcuda" GPUPHASE_STACKS=sync
	rec sync_bound_c "$E/sync_bound" "$X/sync_bound.simcuda" GPUPHASE_STACKS=sync
	rec sync_stacks_all "$E/sync_bound" "$X/sync_bound.simcuda" GPUPHASE_STACKS=all
	rec hookonly "$E/sync_bound" "$X/sync_bound.simcuda" GPUPHASE_CUPTI=0
	rec graphs "$E/graph_replay" "$X/graph_replay.simcuda" GPUPHASE_STACKS=launch \
		NVTX_INJECTION64_PATH="$B/lib/libgpuphase.so"
	rec injection "$E/launch_bound" "$X/launch_bound.simcuda" CUDA_INJECTION64_PATH="$B/lib/libgpuphase.so"
	rec multistream "$T/report_multistream" "$Y/report_multistream.simcuda"
	rec rule_of_thumb "$T/report_rule_of_thumb" "$Y/report_rule_of_thumb.simcuda"
	rec analyses "$T/analyses_run" "$Y/analyses_run.simcuda" CUDA_INJECTION64_PATH="$B/lib/libgpuphase.so"
	rec analyses_slow "$T/analyses_run" "$Y/analyses_run_slow.simcuda" CUDA_INJECTION64_PATH="$B/lib/libgpuphase.so"
	rec window_iters "$T/analyses_run" "$Y/analyses_run.simcuda" GPUPHASE_WINDOW=skip=10,iters=10
	rec counters "$T/counters_run" "$Y/counters_run.simcuda" GPUPHASE_COUNTERS='kernel=stream_k;fma_k;tiny_k' \
		GPUPHASE_STACKS=off # no call stacks: its outputs never depend on the program file
	rec window_repeat "$T/analyses_run" "$Y/analyses_run.simcuda" GPUPHASE_WINDOW=skip=5,iters=5,repeat=3
	rec marker_kernel "$E/sync_bound" "$X/sync_bound.simcuda" GPUPHASE_WINDOW=skip=3,iters=20 \
		GPUPHASE_ITER_MARKER='kernel:step_*'
	# the server, captured by iterations while a client sends requests
	local sock=$tmp/srv.sock
	(cd "$tmp" && LD_PRELOAD="$B/lib/libgpuphase.so" LD_LIBRARY_PATH="$B/simcuda" \
		SIMCUDA_CONFIG="$S/examples/server/server.simcuda" GPUPHASE_WINDOW=skip=100,iters=60 \
		GPUPHASE_OUTPUT="$t/server.gpht" "$B/examples/server" "$sock" >/dev/null 2>&1) &
	local srv=$! i
	for i in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	"$B/examples/server_client" "$sock" -n 400 >/dev/null 2>&1
	"$B/examples/server_client" "$sock" -n 0 --quit >/dev/null 2>&1 || true
	wait "$srv" || true
	echo "corpus: server.gpht"
	# the GPU kit's simulated runs: every trace it kept
	if bash "$S/tests/gpu/run.sh" --sim "$tmp/kit" >/dev/null 2>&1; then :; fi
	local f n
	for f in "$tmp"/kit/runs/*/trace-*.gpht; do
		[ -e "$f" ] || continue
		n=kit_$(basename "$(dirname "$f")")
		[ -e "$t/$n.gpht" ] && continue
		case $n in
		kit_storm.*) # 1,000,000 launches: its first 400 kB, cut (no footer)
			head -c 400000 "$f" >"$t/cut_storm.gpht" && echo "corpus: cut_storm.gpht" ;;
		*) cp "$f" "$t/$n.gpht" && echo "corpus: $n.gpht" ;;
		esac
	done
	# a trace cut in the middle (no footer) and one cut to its first blocks
	head -c $(($(stat -c %s "$t/analyses.gpht") / 2)) "$t/analyses.gpht" >"$t/cut_half.gpht"
	head -c $(($(stat -c %s "$t/graphs.gpht") * 2 / 3)) "$t/graphs.gpht" >"$t/cut_graphs.gpht"
	chmod 0644 "$t"/*.gpht
	rm -rf "$tmp"
	ls -la "$t"
}

# The list of report runs: NAME|OPTIONS|TRACES (relative to traces/).
runs() {
	local f n
	for f in "$C"/traces/*.gpht; do
		n=$(basename "$f" .gpht)
		case $n in cut_*) echo "$n|--allow-truncated|$n.gpht"; continue ;; esac
		echo "$n||$n.gpht"
	done
	echo "sync_bound.callsite|--group-by callsite|sync_bound.gpht"
	echo "sync_bound.stream|--group-by stream --sort sync|sync_bound.gpht"
	echo "graphs.nvtx|--group-by nvtx --top 2|graphs.gpht"
	echo "multistream.stream|--group-by stream|multistream.gpht"
	echo "analyses.filter|--filter _k\$ --sort execute|analyses.gpht"
	echo "analyses.thresholds|--thresholds sync=10,launch=5,execute=60 --outlier-factor 1.2|analyses.gpht"
	echo "merged2|--merge --straggler-pct 5|analyses.gpht graphs.gpht"
	echo "merged3|--merge --top 4|sync_bound.gpht sync_bound_b.gpht sync_bound_c.gpht"
}

# outputs_of NAME OPTIONS TRACES OUTDIR: every output of one report run, run
# from traces/ so that the names printed are the same anywhere.
outputs_of() {
	local name=$1 opts=$2 traces=$3 o=$4 rc
	# shellcheck disable=SC2086
	(
		cd "$C/traces"
		for fmt in text markdown csv json; do
			rc=0
			"$R" $opts --format $fmt $traces >"$o/$name.$fmt" 2>"$o/$name.$fmt.err" || rc=$?
			echo "exit $rc" >>"$o/$name.$fmt.err"
		done
		rc=0
		"$R" $opts --export chrome-trace "$o/$name.chrome.json" --export sqlite "$o/$name.sqlite" \
			--export html "$o/$name.html" --export perfetto "$o/$name.pftrace" $traces >/dev/null 2>"$o/$name.export.err" || rc=$?
		echo "exit $rc" >>"$o/$name.export.err"
		sed -i "s|$o/|OUT/|g" "$o/$name.export.err" # the output folder differs from run to run
		# the SQLite file as its SQL text: the same rows in the same order
		if [ -e "$o/$name.sqlite" ]; then
			sqlite3 "$o/$name.sqlite" .dump >"$o/$name.sqlite.sql" && rm -f "$o/$name.sqlite"
		fi
	)
}

# write_outputs OUTDIR: the outputs of every run, diffs and stability
write_outputs() {
	local o=$1 line name opts traces rc
	mkdir -p "$o"
	while IFS='|' read -r name opts traces; do
		outputs_of "$name" "$opts" "$traces" "$o"
	done < <(runs)
	(
		cd "$C/traces"
		for pair in "sync_bound sync_bound_b" "launch_bound injection" "analyses analyses_slow"; do
			set -- $pair
			for fmt in text json; do
				rc=0
				"$R" diff --format $fmt --fail-above 5 "$1.gpht" "$2.gpht" >"$o/diff.$1.$2.$fmt" 2>&1 || rc=$?
				echo "exit $rc" >>"$o/diff.$1.$2.$fmt"
			done
		done
		rc=0
		"$R" stability sync_bound.gpht sync_bound_b.gpht sync_bound_c.gpht >"$o/stability.text" 2>&1 || rc=$?
		echo "exit $rc" >>"$o/stability.text"
		rc=0
		"$R" stability --top 2 --cv-pct 1 --phase sync --group-by callsite sync_bound.gpht sync_bound_b.gpht \
			sync_bound_c.gpht sync_stacks_all.gpht >"$o/stability.callsite.text" 2>&1 || rc=$?
		echo "exit $rc" >>"$o/stability.callsite.text"
	)
}

# summarise DIR: the large, machine-read outputs (chrome-trace, Perfetto, SQLite, HTML)
# are kept as SHA-256 sums in DIR/SHA256SUMS; the rest stay as files, so a
# change to a report shows as a readable diff.
summarise() {
	(cd "$1" && sha256sum -- *.chrome.json *.pftrace *.sqlite.sql *.html >SHA256SUMS &&
		rm -f -- *.chrome.json *.pftrace *.sqlite.sql *.html)
}

case ${1:-} in
traces) record_traces ;;
outputs) rm -rf "$C/expected" && write_outputs "$C/expected" && summarise "$C/expected" && du -sh "$C/expected" ;;
into) write_outputs "${2:?make-corpus.sh into DIR}" && summarise "$2" ;;
into-full) write_outputs "${2:?make-corpus.sh into-full DIR}" ;;
runs) runs ;;
*) echo "usage: make-corpus.sh traces|outputs|into DIR|into-full DIR|runs" >&2; exit 2 ;;
esac
