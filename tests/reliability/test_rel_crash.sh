#!/usr/bin/env bash
# test_rel_crash.sh — the program dies mid-run, or the file cannot grow
# (docs/reliability.md §4).
#
# Crashes: rel_prog makes N calls, sleeps, makes calls without pause for D ms,
# prints the trace-clock time T to stderr and dies by SIGSEGV, abort(),
# SIGKILL, or its own SIGSEGV handler (which _exits 42). Under the profiler:
#  - exit status / signal, stdout and stderr (less gpuphase: lines) equal the
#    bare run's: the library installs no signal handler and changes nothing;
#  - the trace reads back to its end without error (readable up to the last
#    whole block), the report says it was cut off (exit 3, "truncated") and
#    what was lost: the flush interval's records and the hooked launches
#    whose GPU records CUPTI had not delivered, by count; except after the
#    handler's _exit, which the library interposes: that trace is finished
#    as at exit() (footer, report exit 0, every async set's GPU record);
#  - the hook records form a gap-free prefix of the calls made (consecutive
#    op ids, all calls of the first phase among them), and the last one
#    ended at most GPUPHASE_FLUSH_MS + REL_SLACK_MS before T: the loss is
#    bounded by the flush interval (REL_SLACK_MS, default 300 ms, absorbs a
#    noisy shared machine; the measured windows are printed).
# File limits, for real: `ulimit -f` (RLIMIT_FSIZE, SIGXFSZ at its default
# action) and a full tmpfs (ENOSPC, when we may mount one), and the
# GPUPHASE_MAX_BYTES cap: the program is unaffected, the trace stays within
# the limit, ends with a footer, and the report says why capture ended.
. "$(dirname "$0")/rel_common.sh"
flush=20
slack=${REL_SLACK_MS:-300}

for kind in segv abort kill handler; do
  a=$(rel_dir "bare$kind"); rel_run "$a" bare -- "$REL_PROG" crash "$kind" 48 300 300
  b=$(rel_dir "pre$kind"); rel_run "$b" pre GPUPHASE_FLUSH_MS=$flush -- "$REL_PROG" crash "$kind" 48 300 300
  rel_same "$a" "$b" "crash $kind"
  case $kind in segv) want=139 ;; abort) want=134 ;; kill) want=137 ;; handler) want=42 ;; esac
  if [ -z "${GP_SAN:-}" ]; then # (under ASan its own SIGSEGV handler decides, in both runs)
    [ "$(cat "$b/.rc")" = "$want" ]; rel_check $? "crash $kind: exit status $(cat "$b/.rc"), expected $want"
  fi
  tr=$(ls "$b"/*.gpht 2>/dev/null | head -1)
  [ -n "$tr" ] || { rel_fail "crash $kind: no trace"; continue; }
  "$REL_DUMP" "$tr" >"$b/dump" 2>"$b/dump.err"
  rel_check $? "crash $kind: the trace does not read back: $(cat "$b/dump.err")"
  T=$(sed -n 's/^timing: crash_at_raw_ns //p' "$b/.err")
  # Op ids come in per-thread blocks of 64 from one process-wide counter
  # (another library thread may take blocks in between): within this
  # single-threaded program they must increase by 1, except from the end of
  # one block (id % 64 == 0) to the start of another (id % 64 == 1).
  read -r n holes gap <<<"$(awk -v T="$T" '$1 == "hook_api" {
      for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      n++; c = v["corr"] + 0
      if (n == 1 ? c % 64 != 1 : (c != prev + 1 && !(prev % 64 == 0 && c % 64 == 1 && c > prev))) holes++
      prev = c
      e = v["start"] + v["dur_ns"]; if (e > last) last = e }
      END { printf "%d %d %.1f\n", n, holes, (T - last) / 1e6 }' "$b/dump")"
  [ "$holes" = 0 ]
  rel_check $? "crash $kind: $holes holes in the hook records' op ids: not a clean prefix"
  [ "$n" -ge 52 ]; rel_check $? "crash $kind: only $n hook records: the first phase (52 calls) is not all there"
  awk -v g="$gap" -v b=$((flush + slack)) 'BEGIN { exit !(g >= 0 && g <= b) }'
  rel_check $? "crash $kind: the last record ended $gap ms before the crash (bound $flush + $slack ms)"
  echo "crash $kind: $n hook records kept, last ended $gap ms before the crash (GPUPHASE_FLUSH_MS=$flush)"
  "$REL_REPORT" "$tr" >"$b/rep" 2>"$b/rep.err"; rc=$?
  if [ "$kind" = handler ]; then
    # _exit from the program's handler finishes the trace as exit() from a
    # handler does (libgpuphase/exitpath.c): footer, report exit 0, and
    # every async set kept has its GPU record (the fault was outside CUDA:
    # the exit path synchronized and flushed CUPTI)
    grep -q '^# end complete=1' "$b/dump" && [ "$rc" = 0 ] && ! grep -q truncated "$b/rep.err"
    rel_check $? "crash handler: _exit should finish the trace (footer, report exit 0): rc $rc $(head -c 300 "$b/rep.err")"
    sets=$(awk '$1 == "hook_api" && $2 == "class=5"' "$b/dump" | wc -l)
    got=$(awk '$1 == "memset"' "$b/dump" | wc -l)
    [ "$sets" -ge 1 ] && [ "$got" = "$sets" ]
    rel_check $? "crash handler: $got GPU records for $sets async sets: the exit path lost some"
    echo "crash handler: after _exit, $got of $sets async sets with their GPU records (report exit $rc)"
    continue
  fi
  [ "$rc" = 3 ] && grep -q "truncated" "$b/rep.err"
  rel_check $? "crash $kind: the report should exit 3 and say truncated: rc $rc $(head -c 300 "$b/rep.err")"
  # ... and says in its notes what the death cost: the flush interval's
  # records and the launches whose GPU records CUPTI still held (at most the
  # hooked calls kept; none when the drain's periodic CUPTI flush came after
  # the last of them ended, as it can when the program's own handler runs
  # long before dying: how many is bounded by "crash loss" below).
  lost=$(sed -n 's/.*the program died (crash or kill).*lost: .*GPUPHASE_FLUSH_MS=\([0-9]*\) ms.*(\([0-9]*\) hooked launches never joined).*/\1 \2/p' "$b/rep")
  read -r lflush lunjoined <<<"${lost:-x 0}"
  [ "$lflush" = "$flush" ] && [ "$lunjoined" -ge 0 ] && [ "$lunjoined" -le "$n" ]
  rel_check $? "crash $kind: the report should say the program died and what was lost (flush $flush ms, 0..$n launches): $(grep 'no footer' "$b/rep")"
  # the HTML page says it first, in the same words (the old page had it
  # only in its text-report block at the bottom)
  "$REL_REPORT" "$tr" --export html "$b/rep.html" >/dev/null 2>&1
  grep -q "^<p class='warn'[^>]*><b>Incomplete trace.</b> the trace has no footer: the program died (crash or kill).*lost: .*GPUPHASE_FLUSH_MS=$flush ms.*($lunjoined hooked launches never joined)" "$b/rep.html" &&
    [ "$(grep -n "class='warn'" "$b/rep.html" | cut -d: -f1)" -lt "$(grep -n '<h2>' "$b/rep.html" | head -1 | cut -d: -f1)" ]
  rel_check $? "crash $kind: the HTML page should open with what was kept and lost: $(grep -c "class='warn'" "$b/rep.html" 2>/dev/null) banners"
done

# What CUPTI held at the crash: the library asks CUPTI for its completed
# buffers every 200 ms (lib.c, GP_LIB_FLUSH_EVERY_MS), so the GPU records
# lost are at most those of the calls of the last 200 ms + the flush
# interval + REL_SLACK_MS. A 1.5 s burst of async sets before a SIGSEGV,
# CUPTI without API records (GPUPHASE_CUPTI=activity: simcuda then hands
# back nothing early for a full host buffer): the sets whose GPU record is
# missing must be at most those started in that last stretch. Before the
# periodic flush simcuda's CUPTI held each record 1 s after its op ended
# (cupti_delivery_delay_ns): 61,477 of 73,392 sets lost (84 %).
period=200
b=$(rel_dir "prelong"); rel_run "$b" pre GPUPHASE_FLUSH_MS=$flush GPUPHASE_CUPTI=activity -- "$REL_PROG" crash segv 48 300 1500
tr=$(ls "$b"/*.gpht 2>/dev/null | head -1)
if [ -z "$tr" ]; then
  rel_fail "crash loss: no trace"
else
  "$REL_DUMP" "$tr" >"$b/dump" 2>/dev/null
  T=$(sed -n 's/^timing: crash_at_raw_ns //p' "$b/.err")
  # class 5: cudaMemsetAsync (gp_format.h GP_API_MEMSET_ASYNC)
  read -r calls recent ops <<<"$(awk -v T="$T" -v w=$(((period + flush + slack) * 1000000)) '
      $1 == "hook_api" && $2 == "class=5" { n++; split($6, kv, "="); if (kv[2] + 0 >= T - w) r++ }
      $1 == "memset" { m++ } END { printf "%d %d %d\n", n, r, m }' "$b/dump")"
  lost=$((calls - ops))
  [ "$calls" -gt $((recent * 2)) ] && [ "$lost" -ge 0 ] && [ "$lost" -le "$recent" ]
  rel_check $? "crash loss: $lost of $calls async sets lost their GPU records; at most the $recent of the last $((period + flush + slack)) ms may"
  echo "crash loss: $lost of $calls async sets lost their GPU records (the last $((period + flush + slack)) ms held $recent)"
fi

# Core dumps: with `ulimit -c unlimited` (core_pattern permitting), SIGSEGV
# and abort() dump core with and without the profiler (the wait status's
# core flag, read by a small python waiter, and a core file in the working
# directory). Not under sanitizers (their handlers exit instead).
if [ -z "${GP_SAN:-}" ] && command -v python3 >/dev/null && [ "$(cat /proc/sys/kernel/core_pattern)" = core ]; then
  waiter='import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, st = os.waitpid(pid, 0)
print("signal", os.WTERMSIG(st) if os.WIFSIGNALED(st) else -1, "core", int(os.WCOREDUMP(st)))'
  for kind in segv abort; do
    a=$(rel_dir corebare); rel_run "$a" bare -- bash -c 'ulimit -c unlimited; exec python3 -c "$0" "$@"' "$waiter" "$REL_PROG" crash $kind 16 50 20
    b=$(rel_dir core); rel_run "$b" pre -- bash -c 'ulimit -c unlimited; exec python3 -c "$0" "$@"' "$waiter" "$REL_PROG" crash $kind 16 50 20
    ca=$(ls "$a" | grep -c '^core'); cb=$(ls "$b" | grep -c '^core')
    rm -f "$a"/core* "$b"/core*
    rel_same "$a" "$b" "core $kind" # the waiter's "signal N core F" line included
    if grep -q "core 1" "$a/.out" && [ "$ca" -ge 1 ]; then
      [ "$cb" -ge 1 ]; rel_check $? "core $kind: no core file under the profiler"
    else
      rel_skip "core_$kind" "this machine does not let the bare run dump core ($(tail -1 "$a/.out")): only the status was compared"
    fi
  done
else
  rel_skip core_dump "sanitizer build, no python3, or core_pattern is not 'core'"
fi

# RLIMIT_FSIZE for real: the shell sets the limit for the program (and for
# the trace); SIGXFSZ stays at its default action (terminate).
# Under TSan through prlimit (same limit, soft and hard): bash and dash
# crash with the TSan runtime preloaded, even bare.
fsz=(bash -c 'ulimit -f 48; exec "$0" "$@"')
[ "${GP_SAN:-}" = tsan ] && fsz=(prlimit --fsize=49152)
a=$(rel_dir fszbare); rel_run "$a" bare -- "${fsz[@]}" "$REL_PROG" threads 1 1 20000
b=$(rel_dir fszpre); rel_run "$b" pre "${REL_EXITING_THREADS[@]}" -- "${fsz[@]}" "$REL_PROG" threads 1 1 20000
rel_same "$a" "$b" "ulimit -f 48"
tr=$(ls "$b"/*.gpht 2>/dev/null | head -1)
if [ -n "$tr" ]; then
  [ "$(stat -c %s "$tr")" -le $((48 * 1024)) ]; rel_check $? "ulimit -f: trace of $(stat -c %s "$tr") bytes > 48 KiB"
  "$REL_REPORT" "$tr" >"$b/rep" 2>"$b/rep.err"; rc=$?
  [ "$rc" = 0 ] && grep -q "file size limit" "$b/rep"
  rel_check $? "ulimit -f: the report (rc $rc) should say the file size limit ended capture: $(grep -i 'capture\|footer' "$b/rep" | head -3)"
else
  rel_fail "ulimit -f: no trace"
fi

# ENOSPC for real: a 64 KiB tmpfs.
e=$(rel_dir enospc); mkdir "$e/mnt"
if mount -t tmpfs -o size=64k tmpfs "$e/mnt" 2>/dev/null; then
  rel_run "$e" pre GPUPHASE_OUTPUT=mnt/t.gpht "${REL_EXITING_THREADS[@]}" -- "$REL_PROG" threads 1 1 20000
  cp "$e/mnt/t.gpht" "$e/t.gpht" 2>/dev/null; umount "$e/mnt"
  [ "$(cat "$e/.rc")" = 0 ] && grep -q "threads 1 x 1 x 20000 done" "$e/.out"
  rel_check $? "ENOSPC: the program was affected: rc $(cat "$e/.rc")"
  "$REL_REPORT" "$e/t.gpht" >"$e/rep" 2>"$e/rep.err"; rc=$?
  [ "$rc" = 0 ] && grep -q "disk is full" "$e/rep"
  rel_check $? "ENOSPC: the report (rc $rc) should say the disk was full: $(head -c 300 "$e/rep.err")"
else
  rel_skip real_enospc "cannot mount a tmpfs here (test_rel_faults injects ENOSPC)"
fi

# GPUPHASE_MAX_BYTES.
a=$(rel_dir capbare); rel_run "$a" bare -- "$REL_PROG" threads 1 1 20000
b=$(rel_dir cappre); rel_run "$b" pre GPUPHASE_MAX_BYTES=40k "${REL_EXITING_THREADS[@]}" -- "$REL_PROG" threads 1 1 20000
rel_same "$a" "$b" "GPUPHASE_MAX_BYTES=40k"
tr=$(ls "$b"/*.gpht 2>/dev/null | head -1)
if [ -n "$tr" ]; then
  [ "$(stat -c %s "$tr")" -le 40960 ]; rel_check $? "size cap: trace of $(stat -c %s "$tr") bytes > 40 KiB"
  "$REL_REPORT" "$tr" >"$b/rep" 2>"$b/rep.err"; rc=$?
  [ "$rc" = 0 ] && grep -q "size cap stopped capture early" "$b/rep"
  rel_check $? "size cap: the report (rc $rc) should say the cap stopped capture"
else
  rel_fail "size cap: no trace"
fi
rel_done
