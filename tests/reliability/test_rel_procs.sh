#!/usr/bin/env bash
# test_rel_procs.sh — process life under the profiler (docs/reliability.md
# §5): fork without exec (the child makes CUDA calls and
# leaves through exit(), so atexit handlers run), fork + exec, posix_spawn,
# waves of short-lived threads, pthread_cancel of threads inside hooked calls,
# exit() while threads are inside hooked calls, dlclose of a cudart plugin,
# and GPUPHASE_FOLLOW_FORK=1. Every run has a timeout (a deadlock fails the
# test instead of hanging it) and must match the bare run (exit status,
# stdout, files, stderr less gpuphase: lines). Record counts are exact:
# rel_prog's calls are known (rp_calls(n): n memsets, one sync per 16; plus
# one sync at warm-up), so a duplicate, a record from the wrong process or a
# lost record shows up as a wrong count.
. "$(dirname "$0")/rel_common.sh"
export REL_TIMEOUT=60
N=40                       # calls per phase
MS=$N                      # memsets (class 5) per phase
SY=$((N / 16))             # device syncs (class 6) per phase

trace_of_pid() { ls "$1"/*-"$2".gpht 2>/dev/null | head -1; }

check_counts() { # label trace memsets syncs
  local label=$1 tr=$2 m=$3 s=$4 gm gs
  "$REL_DUMP" "$tr" >"$tr.dump" 2>&1 || { rel_fail "$label: trace does not read: $(tail -1 "$tr.dump")"; return; }
  grep -q "^# end complete=1" "$tr.dump"; rel_check $? "$label: no footer (not stopped cleanly)"
  gm=$(awk '$1 == "hook_api" && $2 == "class=5"' "$tr.dump" | wc -l)
  gs=$(awk '$1 == "hook_api" && $2 == "class=6"' "$tr.dump" | wc -l)
  [ "$gm" = "$m" ] && [ "$gs" = "$s" ]
  rel_check $? "$label: $gm memset / $gs sync hook records, expected $m / $s"
  local ntid; ntid=$(awk '$1 == "hook_api" { print $5 }' "$tr.dump" | sort -u | wc -l)
  [ "$ntid" = 1 ]; rel_check $? "$label: hook records from $ntid threads, expected 1 (the main thread)"
}

# fork without exec: the child is inert (no file, no records), the parent's
# trace holds exactly its own 2N calls.
a=$(rel_dir forkbare); rel_run "$a" bare -- "$REL_PROG" fork $N
b=$(rel_dir fork); rel_run "$b" pre -- "$REL_PROG" fork $N
rel_same "$a" "$b" "fork"
[ "$(rel_ntraces "$b")" = 1 ]; rel_check $? "fork: $(rel_ntraces "$b") traces, expected 1 (the child stays inert)"
tr=$(ls "$b"/*.gpht 2>/dev/null | head -1)
[ -n "$tr" ] && check_counts "fork parent" "$tr" $((2 * MS)) $((2 * SY + 1))

# fork + exec, posix_spawn: the new program gets its own trace.
for mode in forkexec spawn; do
  a=$(rel_dir "${mode}bare"); rel_run "$a" bare -- "$REL_PROG" $mode $N
  b=$(rel_dir "$mode"); rel_run "$b" pre -- "$REL_PROG" $mode $N
  rel_same "$a" "$b" "$mode"
  [ "$(rel_ntraces "$b")" = 2 ]; rel_check $? "$mode: $(rel_ntraces "$b") traces, expected 2"
  for tr in "$b"/*.gpht; do
    [ -e "$tr" ] || continue
    if "$REL_DUMP" "$tr" 2>/dev/null | grep -q '^# cmdline=.* basic '; then
      check_counts "$mode child" "$tr" $((MS + 1)) $((SY + 1)) # + basic's one erroring call
    else
      check_counts "$mode parent" "$tr" $((2 * MS)) $((2 * SY + 1))
    fi
  done
done

# GPUPHASE_FOLLOW_FORK=1: the child writes its own trace with its own calls.
# Not under TSan: the child of a multi-threaded fork must start the writer
# thread, which TSan does not support (it dies, "starting new threads after
# multi-threaded fork is not supported"; with die_after_fork=0 it aborts on
# "dup thread with used id", its thread registry still holding the parent's
# threads). docs/reliability.md, Sanitizers.
if [ "${GP_SAN:-}" = tsan ]; then
  rel_skip follow_fork "not under TSan (TSan cannot start threads in the child of a multi-threaded fork)"
else
  b=$(rel_dir follow); rel_run "$b" pre GPUPHASE_FOLLOW_FORK=1 -- "$REL_PROG" fork $N
  a=$(rel_dir followbare); rel_run "$a" bare -- "$REL_PROG" fork $N
  rel_same "$a" "$b" "fork (GPUPHASE_FOLLOW_FORK=1)"
  [ "$(rel_ntraces "$b")" = 2 ]; rel_check $? "follow fork: $(rel_ntraces "$b") traces, expected 2"
  for tr in "$b"/*.gpht; do
    [ -e "$tr" ] || continue
    pid=$("$REL_DUMP" "$tr" 2>/dev/null | sed -n 's/^# pid=//p')
    if "$REL_DUMP" "$tr" 2>/dev/null | grep -q "^status kind=5"; then
      check_counts "follow-fork child $pid" "$tr" $MS $SY
    else
      check_counts "follow-fork parent $pid" "$tr" $((2 * MS)) $((2 * SY + 1))
    fi
  done
fi

# Short-lived threads: 25 waves x 16 threads x 40 calls. Each thread makes
# its own ring; rings of exited threads are drained and freed.
W=25; T=16
a=$(rel_dir thrbare); rel_run "$a" bare -- "$REL_PROG" threads $W $T $N
b=$(rel_dir thr); rel_run "$b" pre "${REL_EXITING_THREADS[@]}" -- "$REL_PROG" threads $W $T $N
rel_same "$a" "$b" "threads"
tr=$(ls "$b"/*.gpht 2>/dev/null | head -1)
if [ -n "$tr" ]; then
  "$REL_DUMP" "$tr" >"$tr.dump" 2>&1; rel_check $? "threads: trace does not read"
  gm=$(awk '$1 == "hook_api" && $2 == "class=5"' "$tr.dump" | wc -l)
  # drops counted on the worker threads' own rings (other rings, e.g. the
  # one CUPTI's delivery thread fills, do not hold hook records); a DROPS
  # record carries the ring's cumulative count, so the largest one per tid
  dr=$(awk '$1 == "hook_api" && $2 == "class=5" { w[$5] = 1 }
            $1 == "drops" { v = substr($5, 9) + 0; if (v > d[$3]) d[$3] = v }
            END { for (t in d) if (w[t]) s += d[t]; print s + 0 }' "$tr.dump")
  dall=$(sed -n 's/.* dropped_ring=\([0-9]*\).*/\1/p' "$tr.dump")
  nt=$(awk '$1 == "hook_api" && $2 == "class=5" { print $5 }' "$tr.dump" | sort -u | wc -l)
  [ $((gm + dr)) = $((W * T * MS)) ]
  rel_check $? "threads: $gm memset records + $dr dropped on the workers' rings != $((W * T * MS)) calls"
  echo "threads: $gm memset records from $nt threads, $dr dropped on their rings, $dall dropped in all rings"
else
  rel_fail "threads: no trace"
fi

# pthread_cancel: 20 rounds of 8 threads cancelled while looping on hooked
# calls (a cancelled thread dies wherever it is, even inside a hook).
a=$(rel_dir cancelbare); rel_run "$a" bare -- "$REL_PROG" cancel 8
b=$(rel_dir cancel); rel_run "$b" pre "${REL_EXITING_THREADS[@]}" -- "$REL_PROG" cancel 8
rel_same "$a" "$b" "pthread_cancel"
tr=$(ls "$b"/*.gpht 2>/dev/null | head -1)
if [ -n "$tr" ]; then
  "$REL_DUMP" "$tr" >"$tr.dump" 2>&1; rel_check $? "cancel: trace does not read"
  grep -q "^# end complete=1" "$tr.dump"; rel_check $? "cancel: no footer"
else
  rel_fail "cancel: no trace"
fi
# exit() while 8 threads are inside hooked calls (the library's atexit path
# flushes and stops the collector while they keep calling): no hang, no
# crash, exit status 0, a complete trace. 10 runs.
for i in 1 2 3 4 5 6 7 8 9 10; do
  a=$(rel_dir exitbare); rel_run "$a" bare -- "$REL_PROG" exitrace 8
  b=$(rel_dir exit); rel_run "$b" pre -- "$REL_PROG" exitrace 8
  rel_same "$a" "$b" "exit with busy threads (run $i)"
  tr=$(ls "$b"/*.gpht 2>/dev/null | head -1)
  [ -n "$tr" ] && "$REL_DUMP" "$tr" 2>/dev/null | grep -q "^# end complete=1"
  rel_check $? "exit with busy threads (run $i): no complete trace"
done

# dlclose of the library's users: a plugin using cudart, dlopened RTLD_LOCAL
# and dlclosed 10 times by a host without CUDA (bare, cudart is unloaded and
# reloaded each round): same behaviour, exact counts (10 x 50 memsets, 10 syncs).
a=$(rel_dir dlbare); rel_run "$a" bare -- "$REL_B/tests/rel/rel_dlmain" "$REL_B/tests/rel/librel_dl.so" 10
b=$(rel_dir dl); rel_run "$b" pre -- "$REL_B/tests/rel/rel_dlmain" "$REL_B/tests/rel/librel_dl.so" 10
rel_same "$a" "$b" "dlopen/dlclose x10"
tr=$(ls "$b"/*.gpht 2>/dev/null | head -1)
if [ -n "$tr" ]; then
  check_counts "dlclose" "$tr" 500 10
  echo "dlclose: $(grep -a 'cudart unloaded' "$a/.err") without the profiler, $(grep -a 'cudart unloaded' "$b/.err") with it"
else
  rel_fail "dlclose: no trace"
fi
rel_done
