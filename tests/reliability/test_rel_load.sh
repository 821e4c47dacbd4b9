#!/usr/bin/env bash
# test_rel_load.sh — load (docs/reliability.md §7): 64 threads x K
# hooked cudaMemsetAsync calls each on simcuda at zero simulated cost
# (SIMCUDA_*_NS=0), hook-only (GPUPHASE_CUPTI=0, GPUPHASE_STACKS=off) with
# small rings (GPUPHASE_RING_RECORDS=256), so rings overflow and drop.
# Scale: K = REL_LOAD_K (default 20000: 1.28M calls, 1/50 of the specified
# 64 x 1M, to fit CI time on 2 cores; REL_LOAD_K=1000000 runs the full size).
# Checks:
#  - per thread: calls made (rel_prog prints "tid TID K") == hook records
#    with that tid + the ring's drop count (largest cumulative GP_REC_DROPS
#    for that tid), exactly;
#  - the footer's ring drops == the report header's "dropped" and its
#    "ring N" note;
#  - peak RSS (VmHWM) under the profiler exceeds the bare run's by at most
#    REL_RSS_BOUND_KB (default 32768: 64 rings x 8 KiB + the writer's block,
#    scratch and output buffers of ~4 MiB + code and TLS, with room for
#    allocator noise), and does not grow with the number of records: the run
#    at K/4 has the same peak within 4 MiB.
. "$(dirname "$0")/rel_common.sh"
K=${REL_LOAD_K:-20000}
T=64
bound=${REL_RSS_BOUND_KB:-32768}
export REL_TIMEOUT=300
cfg=(GPUPHASE_CUPTI=0 GPUPHASE_STACKS=off GPUPHASE_RING_RECORDS=256 GPUPHASE_OUTPUT=load.gpht
     SIMCUDA_API_NS=0 SIMCUDA_LAUNCH_NS=0 SIMCUDA_LAUNCH_LATENCY_NS=0 SIMCUDA_SYNC_NS=0)

a=$(rel_dir bare); rel_run "$a" bare "${cfg[@]}" -- "$REL_PROG" load $T $K
b=$(rel_dir pre);  rel_run "$b" pre "${cfg[@]}" -- "$REL_PROG" load $T $K
q=$(rel_dir quarter); rel_run "$q" pre "${cfg[@]}" -- "$REL_PROG" load $T $((K / 4))
for x in "$a" "$b" "$q"; do
  [ "$(cat "$x/.rc")" = 0 ] || rel_fail "load run in $x failed: rc $(cat "$x/.rc") $(head -c 300 "$x/.err")"
done
[ -s "$b/load.gpht" ] || { rel_fail "no trace"; rel_done; }
"$REL_DUMP" "$b/load.gpht" >"$b/dump" 2>"$b/dump.err"; rel_check $? "trace does not read: $(cat "$b/dump.err")"

# per-thread accounting
awk -v K=$K '
  FNR == NR { if ($1 == "tid") { want["tid=" $2] = $3 }; next }
  $1 == "hook_api" { got[$5]++ }
  $1 == "drops" { v = substr($5, 9) + 0; if (v > drop[$3]) drop[$3] = v }
  END {
    bad = 0; n = 0
    for (t in want) { n++; if (got[t] + drop[t] != want[t]) { bad++; if (bad < 5) printf "%s: %d written, %d read + %d dropped\n", t, want[t], got[t], drop[t] } }
    for (t in got) { r += got[t]; d += drop[t] }
    printf "threads %d, mismatches %d, read %d, dropped %d\n", n, bad, r, d
    exit bad != 0 || n != 64 }' "$b/.out" "$b/dump" >"$b/acct"
rel_check $? "written != read + dropped: $(cat "$b/acct" | tr '\n' ' ')"
echo "load: $T threads x $K calls: $(tail -1 "$b/acct")"

# drops reach the report header
fdrop=$(sed -n 's/.* dropped_ring=\([0-9]*\).*/\1/p' "$b/dump")
"$REL_REPORT" "$b/load.gpht" >"$b/rep" 2>"$b/rep.err"
grep -q "records, .*, $fdrop dropped" "$b/rep" && grep -q "(ring $fdrop," "$b/rep"
rel_check $? "the report header does not show the $fdrop ring drops: $(grep -i drop "$b/rep" | head -3 | tr '\n' ' ')"
[ "${fdrop:-0}" -gt 0 ]; rel_check $? "small rings should have dropped something (the drop path was not exercised)"

# memory (not under sanitizers: ASan's shadow and quarantine dominate RSS)
hb=$(sed -n 's/^hwm_kb //p' "$a/.out"); hp=$(sed -n 's/^hwm_kb //p' "$b/.out"); hq=$(sed -n 's/^hwm_kb //p' "$q/.out")
if [ -z "${GP_SAN:-}" ]; then
  [ $((hp - hb)) -le "$bound" ]; rel_check $? "peak RSS grew by $((hp - hb)) KiB under the profiler (bound $bound KiB)"
  d=$((hp - hq)); [ ${d#-} -le 4096 ]; rel_check $? "peak RSS depends on the record count: $hq KiB at K/4, $hp KiB at K"
fi
echo "load: peak RSS bare $hb KiB, profiled $hp KiB (K/4: $hq KiB), trace $(stat -c %s "$b/load.gpht") bytes"
rel_done
