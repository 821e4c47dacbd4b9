#!/usr/bin/env bash
# test_export_formats.sh — the exports read the way their tools read them,
# with nothing but Python's standard library, on committed corpus traces
# (tests/corpus/traces: one process, several streams, graphs, hook-only,
# synchronous copies, two traces merged):
#   sqlite        nsys stats' kernel, API and memory-time summary queries
#                 (StringIds joins, ENUM_CUDA_MEMCPY_OPER) give the report's
#                 kernels, counts and times; globalTid/globalPid encoding
#   perfetto      the protobuf decoded field by field: every packet, track
#                 and slice well formed, kernels as in the report, flows
#                 from calls to ops, at most half the chrome-trace's size
#                 (and `protoc --decode_raw` reads it, where protoc is)
#   chrome-trace  strict JSON (no NaN, valid UTF-8), Kineto categories and
#                 args, every ac2g flow bound and never ending before it
#                 starts, every track named
# tests/e2e/test_export_readers.sh opens the same files in DuckDB, pandas,
# HTA and Perfetto. Environment (make test): GP_BUILD, GP_SRC.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
T=$S/tests/corpus/traces
CHECK="python3 $S/tests/e2e/export_readers_check.py"
fails=0 pfails=0 # pfails: of them, protoc's
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
[ -x "$R" ] || { echo "FAIL: $R is missing (not built?)"; exit 1; }
tmp=$(mktemp -d /tmp/gp_exports.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

for name in sync_bound multistream graphs hookonly analyses kit_nvtx.nvtx "merged:sync_bound_b+sync_bound_c"; do
	case $name in
	merged:*) n=merged; set -- --merge "$T/sync_bound_b.gpht" "$T/sync_bound_c.gpht" ;; # two runs, not one job: --merge insists
	*) n=$name; set -- "$T/$name.gpht" ;;
	esac
	"$R" --format json "$@" >"$tmp/$n.json" 2>"$tmp/$n.err" &&
		"$R" --export sqlite "$tmp/$n.db" --export chrome-trace "$tmp/$n.ct.json" \
			--export perfetto "$tmp/$n.pftrace" "$@" >/dev/null 2>>"$tmp/$n.err" ||
		{ fail "$n: report/export failed: $(cat "$tmp/$n.err")"; continue; }
	echo "--- $n"
	$CHECK sqlite "$tmp/$n.db" "$tmp/$n.json" | grep -v '^ok' || true
	$CHECK sqlite "$tmp/$n.db" "$tmp/$n.json" >/dev/null || fail "$n: sqlite"
	$CHECK chrome "$tmp/$n.ct.json" "$tmp/$n.json" | grep -v '^ok' || true
	$CHECK chrome "$tmp/$n.ct.json" "$tmp/$n.json" >/dev/null || fail "$n: chrome-trace"
	$CHECK pftrace "$tmp/$n.pftrace" "$tmp/$n.json" | grep -v '^ok' || true
	$CHECK pftrace "$tmp/$n.pftrace" "$tmp/$n.json" >/dev/null || fail "$n: perfetto"
	pb=$(stat -c %s "$tmp/$n.pftrace") js=$(stat -c %s "$tmp/$n.ct.json")
	[ $((pb * 2)) -le "$js" ] || fail "$n: perfetto is $pb bytes, chrome-trace $js: not compact"
	if command -v protoc >/dev/null; then
		protoc --decode_raw <"$tmp/$n.pftrace" >"$tmp/$n.raw" 2>"$tmp/$n.rawerr" ||
			{ fail "$n: protoc --decode_raw refuses the perfetto export: $(head -2 "$tmp/$n.rawerr")"; pfails=$((pfails + 1)); }
	fi
done

# Two counted parts (tests/run-tests.sh): protoc's own decoding of the
# perfetto exports (skipped, with the reason, without protoc) and the rest.
if ! command -v protoc >/dev/null; then
	echo "PART protoc_decode_raw: SKIP protoc not installed: the perfetto export was decoded by the checker only"
elif [ "$pfails" = 0 ]; then echo "PART protoc_decode_raw: PASS"
else echo "PART protoc_decode_raw: FAIL $pfails export(s) refused"; fi
[ "$fails" = "$pfails" ] && echo "PART formats: PASS" || echo "PART formats: FAIL $((fails - pfails)) check(s) failed, above"
[ "$fails" = 0 ] && echo "test_export_formats.sh: all checks passed"
[ "$fails" = 0 ]
