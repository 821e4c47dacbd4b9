#!/usr/bin/env bash
# test_cli_choose.sh — which trace `gpuphase report` reads and where `record`
# writes, decided by the command line alone (README "Output formats"):
#  * `report -o rep.txt` works every time: an existing output file is never
#    taken for a trace (the option grammar says rep.txt is -o's value);
#  * `report typo.gpht` fails on typo.gpht, without "reading the newest";
#  * with no trace named, the newest *.gpht of the current directory is
#    read, and said so; none there: exit 2, one line and the usage;
#  * `record -o myrun` writes myrun.gpht (like nsys adds .nsys-rep), the
#    summary line names it, and the bare `report` then finds it.
set -u
. "$(dirname "$0")/cli_common.sh"
require "$G" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/sync_bound" "$B/bin/gpuphase-report"
export SIMCUDA_CONFIG=$S/examples/sync_bound.simcuda
cd "$tmp" || exit 1

# empty directory: nothing to guess
"$G" report >out 2>err
rc=$?
[ "$rc" = 2 ] || fail "report in an empty directory: exit $rc, want 2"
grep -q "no trace named and no \*.gpht in the current directory" err || fail "empty dir: $(cat err)"

"$G" record -o myrun -- "$B/examples/sync_bound" >/dev/null 2>rec.err
rc=$?
[ "$rc" = 0 ] || fail "record -o myrun: exit $rc: $(cat rec.err)"
[ -f myrun.gpht ] || fail "record -o myrun did not write myrun.gpht: $(ls)"
[ -e myrun ] && fail "record -o myrun wrote myrun as well"
grep -Eq '^gpuphase: trace .*myrun\.gpht, ' rec.err || fail "the summary does not name myrun.gpht: $(cat rec.err)"

for i in 1 2; do
	"$G" report -o rep.txt >out 2>err
	rc=$?
	[ "$rc" = 0 ] || fail "report -o rep.txt (run $i): exit $rc: $(cat err)"
	grep -q "reading the newest, myrun.gpht" err || fail "report -o rep.txt (run $i): $(cat err)"
	grep -q "sync_bound\|operator" rep.txt || fail "rep.txt (run $i) is not a report: $(head -5 rep.txt)"
done
"$G" report --top 2 --format csv >out 2>err || fail "report --top 2 --format csv: $(cat err)"
grep -q "reading the newest, myrun.gpht" err || fail "options with values taken for traces: $(cat err)"

"$G" report typo.gpht >out 2>err
rc=$?
[ "$rc" = 2 ] || fail "report typo.gpht: exit $rc, want 2"
grep -q "reading the newest" err && fail "report typo.gpht guessed another trace: $(cat err)"
grep -q "typo.gpht" err || fail "report typo.gpht: the message does not name it: $(cat err)"

finish
