#!/usr/bin/env bash
# bench_rel_long.sh — the long-run check (docs/reliability.md §7),
# a benchmark (make bench), not a unit test: it takes ~30 s of two cores.
# 4 threads x 12.5M hooked cudaMemsetAsync calls = 50M records produced
# (hook-only, simcuda at zero cost) under a time window (delay=2s,
# duration=10s) and a size cap (GPUPHASE_MAX_BYTES=64M). VmRSS of the process
# is sampled every 0.25 s.
# Prints (bench lines):
#   rel_long_calls            calls made (records produced)
#   rel_long_rss_growth       peak RSS after the first 3 s minus peak RSS in
#                             the first 3 s (warm-up), KiB; must be <= 4096
#   rel_long_peak_rss         peak RSS profiled, KiB, floor = the bare run's
#   rel_long_trace_bytes      trace size; must be <= the cap and, the cap
#                             being reached inside the window, > cap - 4 MiB
# Exits 1 when a bound is broken.
. "$(dirname "$0")/rel_common.sh"
T=4; K=${REL_LONG_K:-12500000}; cap=$((64 << 20))
cfg=(GPUPHASE_CUPTI=0 GPUPHASE_STACKS=off GPUPHASE_OUTPUT=long.gpht GPUPHASE_WINDOW=delay=2s,duration=10s
     GPUPHASE_MAX_BYTES=64M SIMCUDA_API_NS=0 SIMCUDA_LAUNCH_NS=0 SIMCUDA_LAUNCH_LATENCY_NS=0)
a=$(rel_dir bare); rel_run "$a" bare "${cfg[@]}" -- "$REL_PROG" load $T $((K / 10))
hb=$(sed -n 's/^hwm_kb //p' "$a/.out")

d=$(rel_dir long)
pre=$REL_LIB; [ -n "${GP_SAN:-}" ] && [ -n "${GP_SAN_RUNTIME:-}" ] && pre="$GP_SAN_RUNTIME:$pre"
(cd "$d" && exec env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$REL_B/simcuda" LD_PRELOAD="$pre" "${cfg[@]}" \
   "$REL_PROG" load $T $K >"$d/.out" 2>"$d/.err") &
pid=$!
t0=$(date +%s%N)
while kill -0 "$pid" 2>/dev/null; do
  r=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$pid/status" 2>/dev/null)
  [ -n "$r" ] && echo "$((($(date +%s%N) - t0) / 1000000)) $r" >>"$d/rss"
  sleep 0.25
done
wait "$pid"; rc=$?
[ "$rc" = 0 ] || rel_fail "the profiled run failed: rc $rc $(head -c 300 "$d/.err")"
read -r early late <<<"$(awk '$1 <= 3000 { if ($2 > e) e = $2 } $1 > 3000 { if ($2 > l) l = $2 } END { print e + 0, l + 0 }' "$d/rss")"
hp=$(sed -n 's/^hwm_kb //p' "$d/.out")
size=$(stat -c %s "$d/long.gpht" 2>/dev/null || echo 0)
growth=$((late > early ? late - early : 0))
echo "bench: rel_long_calls $((T * K)) calls"
echo "bench: rel_long_rss_growth $growth KiB"
echo "bench: rel_long_rss_warmup_peak $early KiB"
echo "bench: rel_long_peak_rss ${hp:-0} KiB floor=${hb:-0}"
echo "bench: rel_long_trace_bytes $size bytes"
[ "$early" -gt 0 ] && [ "$late" -gt 0 ]; rel_check $? "no RSS samples (early $early, late $late KiB)"
[ "$growth" -le 4096 ]; rel_check $? "RSS grew by $growth KiB after warm-up (early peak $early, late peak $late KiB)"
[ "$size" -le "$cap" ] && [ "$size" -gt $((cap - (4 << 20))) ]
rel_check $? "trace of $size bytes, expected just under the 64 MiB cap"
grep -q "size cap stopped capture early" <("$REL_REPORT" "$d/long.gpht" 2>/dev/null)
rel_check $? "the report does not say the size cap stopped capture"
rel_done
