#!/usr/bin/env bash
# test_report_reading.sh — reading the report (docs/metrics.md §5, §7, §13):
#  * advice fits the operator: no copy is told to fuse kernels or use graphs,
#    a program that replays graphs is never told to use graphs, an operator
#    below 1 % of the run gets "minor" and no advice line;
#  * one unit per duration column of the operator and iteration tables;
#  * --top N limits every section (operators, iterations, outliers, ranks);
#  * per-subcommand --help lists only that subcommand's options; a bad
#    option is one line with the hint to --help.
# Traces come from the committed corpus.
set -u
. "$(dirname "$0")/cli_common.sh"
R=$B/bin/gpuphase-report
T=$S/tests/corpus/traces
require "$R" "$G"

# advice
"$R" "$T/sync_bound.gpht" >"$tmp/sb" 2>/dev/null
grep -E '^  memcpy.*: (launch|sync|compute)-bound' "$tmp/sb" | grep -E 'fuse|graph' &&
	fail "a copy was told to fuse kernels or use graphs"
grep -E '^memcpy HtoD .* minor$' "$tmp/sb" >/dev/null || fail "a single 14 us copy is not 'minor': $(grep HtoD "$tmp/sb")"
grep -qE '^  memcpy HtoD: [a-z-]+ \(' "$tmp/sb" && fail "a minor operator got a verdict line"
for g in graphs kit_graph_replay.preload; do
	"$R" "$T/$g.gpht" 2>/dev/null | grep -q "use CUDA graphs" && fail "$g: a graph-replaying program told to use graphs"
done
"$R" "$T/launch_bound.gpht" 2>/dev/null | grep -q "fuse kernels, use CUDA graphs" ||
	fail "launch_bound: a plain launch-bound kernel lost its advice"

# one unit per column: operator table of the server trace (ms and us values)
"$R" "$T/server.gpht" 2>/dev/null | awk '
  /^operator / { on = 1; next }
  on && NF == 0 { exit }
  on { n = split(substr($0, 30), f, " ")
       split("2 3 5 7 9 10 11 12 13 14", cols, " ")
       for (k in cols) { c = cols[k]; u = f[c]; sub(/^[-0-9.]+/, "", u); if (c in unit && unit[c] != u) bad = bad " col" c ":" unit[c] "/" u; unit[c] = u } }
  END { if (bad != "") { print bad; exit 1 } }' >"$tmp/units" || fail "mixed units in a column:$(cat "$tmp/units")"

# --top everywhere
"$R" --top 1 "$T/analyses.gpht" >"$tmp/top" 2>/dev/null
n_iter=$(awk '/^    iter /{on=1;next} on && /^ *[0-9]+ /{n++} on && !/^ *[0-9]+ /{exit} END{print n+0}' "$tmp/top")
[ "$n_iter" = 1 ] || fail "--top 1: $n_iter iteration rows"
n_out=$(grep -c '^    iteration [0-9]*:' "$tmp/top")
[ "$n_out" -le 1 ] || fail "--top 1: $n_out outlier iterations listed"
n_ops=$(awk '/^operator /{on=1;next} on && NF==0{exit} on{n++} END{print n+0}' "$tmp/top")
[ "$n_ops" = 1 ] || fail "--top 1: $n_ops operator rows"
# ... and the ranks of a merged report: the first N and every straggler
"$R" --merge --top 1 --straggler-pct 1000 "$T/sync_bound.gpht" "$T/sync_bound_b.gpht" "$T/sync_bound_c.gpht" \
	>"$tmp/ranks" 2>/dev/null
n_ranks=$(grep -c '^  .* wall .* busy .* GPU ' "$tmp/ranks")
[ "$n_ranks" = 1 ] || fail "--top 1: $n_ranks rank rows (want 1, no straggler)"
grep -q '^  (2 more ranks, none a straggler' "$tmp/ranks" || fail "--top 1: the omitted ranks are not counted"

# per-subcommand help, bad options
"$G" export --help >"$tmp/h" 2>&1
grep -q -- "--fail-above PCT\|--sort" "$tmp/h" && fail "export --help lists report/diff options"
"$G" diff --help >"$tmp/h" 2>&1
grep -q -- "--export\|--format text" "$tmp/h" && fail "diff --help lists report/export options"
grep -q -- "--min-delta" "$tmp/h" || fail "diff --help does not list --min-delta"
"$R" --bogus "$T/sync_bound.gpht" >/dev/null 2>"$tmp/e"
rc=$?
[ "$rc" = 2 ] || fail "bad option: exit $rc"
[ "$(grep -c . "$tmp/e")" = 1 ] && grep -q "unknown option '--bogus' (gpuphase-report --help" "$tmp/e" ||
	fail "bad option: not one line with the hint: $(cat "$tmp/e")"

finish
