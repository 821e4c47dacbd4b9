#!/usr/bin/env bash
# test_rel_env.sh — every GPUPHASE_* variable with empty, garbage, negative,
# overflowing and wrongly-suffixed values, and unknown GPUPHASE_* names
# (docs/reliability.md §2), under LD_PRELOAD, against a bare run:
#   R (rejected): exactly one stderr line from the library, naming the
#     variable and the value as given (control bytes shown as \xHH), no trace;
#   A (accepted): no library line at all, a trace is written;
#   W (unknown name): exactly one "unknown variable" line, a trace is written.
#   N (accepted, but nothing came of it in this program): a trace is written
#     and exactly one line says what was asked for and not got, and why
#     (counters asked of a program that launches no kernel).
# In every case the program's exit status, stdout, files and the rest of its
# stderr are byte-identical to the bare run. The expected outcome of each
# value comes from the grammar documented in docs/configuration.md.
. "$(dirname "$0")/rel_common.sh"

big=99999999999999999999999999   # overflows uint64
long=$(printf 'x%.0s' $(seq 5000))  # longer than any path buffer
nl=$'all\nforged: line'

cases=(
  # VAR|VALUE|EXPECT
  "GPUPHASE_DISABLE||R" "GPUPHASE_DISABLE|x!y|R" "GPUPHASE_DISABLE|-1|R" "GPUPHASE_DISABLE|$big|R" "GPUPHASE_DISABLE|1s|R"
  "GPUPHASE_DISABLE|0|A"
  "GPUPHASE_OUTPUT||R" "GPUPHASE_OUTPUT|$long|R" "GPUPHASE_OUTPUT|t-%n.gpht|R" "GPUPHASE_OUTPUT|t-%s.gpht|R"
  "GPUPHASE_OUTPUT|t-%5p.gpht|R" "GPUPHASE_OUTPUT|t-%|R" "GPUPHASE_OUTPUT|t-%x%x%x.gpht|R"
  "GPUPHASE_OUTPUT|-1.gpht|A" "GPUPHASE_OUTPUT|t-%p-%h-%r-%t-%%.gpht|A"
  "GPUPHASE_WINDOW||R" "GPUPHASE_WINDOW|x!y|R" "GPUPHASE_WINDOW|skip=-1,iters=2|R" "GPUPHASE_WINDOW|skip=$big,iters=1|R"
  "GPUPHASE_WINDOW|iters=0|R" "GPUPHASE_WINDOW|delay=1q,duration=1s|R" "GPUPHASE_WINDOW|delay=-1s,duration=1s|R"
  "GPUPHASE_WINDOW|delay=0,duration=1e400s|R" "GPUPHASE_WINDOW|skip=1,iters=2,iters=3|R" "GPUPHASE_WINDOW|$nl|R"
  "GPUPHASE_WINDOW|every=0|R" "GPUPHASE_WINDOW|every=-1s|R" "GPUPHASE_WINDOW|every=1s,duration=1s|R"
  "GPUPHASE_WINDOW|every=1s,duration=2s|R" "GPUPHASE_WINDOW|every=1s,every=2s|R" "GPUPHASE_WINDOW|every=60s|A"
  "GPUPHASE_WINDOW_KEEP_BYTES||R" "GPUPHASE_WINDOW_KEEP_BYTES|x!y|R" "GPUPHASE_WINDOW_KEEP_BYTES|-1|R"
  "GPUPHASE_WINDOW_KEEP_BYTES|$big|R" "GPUPHASE_WINDOW_KEEP_BYTES|1k|R" "GPUPHASE_WINDOW_KEEP_BYTES|10 M|R"
  "GPUPHASE_WINDOW_KEEP_BYTES|64k|A"
  "GPUPHASE_ITER_MARKER||R" "GPUPHASE_ITER_MARKER|x!y|R" "GPUPHASE_ITER_MARKER|-1|R" "GPUPHASE_ITER_MARKER|kernel:|R"
  "GPUPHASE_ITER_MARKER|nvtx:|R"
  "GPUPHASE_STACKS||R" "GPUPHASE_STACKS|x!y|R" "GPUPHASE_STACKS|-1|R"
  "GPUPHASE_STACK_DEPTH||R" "GPUPHASE_STACK_DEPTH|x!y|R" "GPUPHASE_STACK_DEPTH|-1|R" "GPUPHASE_STACK_DEPTH|$big|R"
  "GPUPHASE_STACK_DEPTH|65|R" "GPUPHASE_STACK_DEPTH|8k|R" "GPUPHASE_STACK_DEPTH| 8|R"
  "GPUPHASE_LOG||R" "GPUPHASE_LOG|x!y|R" "GPUPHASE_LOG|-1|R" "GPUPHASE_LOG|info:|R"
  "GPUPHASE_RING_RECORDS||R" "GPUPHASE_RING_RECORDS|x!y|R" "GPUPHASE_RING_RECORDS|-64|R" "GPUPHASE_RING_RECORDS|$big|R"
  "GPUPHASE_RING_RECORDS|1000|R" "GPUPHASE_RING_RECORDS|4294967296|R" "GPUPHASE_RING_RECORDS|64k|R"
  "GPUPHASE_RING_RECORDS|32|R" "GPUPHASE_RING_RECORDS|1024|A"
  "GPUPHASE_FLUSH_MS||R" "GPUPHASE_FLUSH_MS|x!y|R" "GPUPHASE_FLUSH_MS|-1|R" "GPUPHASE_FLUSH_MS|$big|R"
  "GPUPHASE_FLUSH_MS|0|R" "GPUPHASE_FLUSH_MS|60001|R" "GPUPHASE_FLUSH_MS|10ms|R" "GPUPHASE_FLUSH_MS|10|A"
  "GPUPHASE_MAX_BYTES||R" "GPUPHASE_MAX_BYTES|x!y|R" "GPUPHASE_MAX_BYTES|-1|R" "GPUPHASE_MAX_BYTES|$big|R"
  "GPUPHASE_MAX_BYTES|18446744073709551615G|R" "GPUPHASE_MAX_BYTES|10 M|R" "GPUPHASE_MAX_BYTES|1m|R"
  "GPUPHASE_MAX_BYTES|1KB|R" "GPUPHASE_MAX_BYTES|4M|A"
  "GPUPHASE_CUPTI||R" "GPUPHASE_CUPTI|x!y|R" "GPUPHASE_CUPTI|-1|R" "GPUPHASE_CUPTI|2|R"
  "GPUPHASE_CUPTI_LIB||R" "GPUPHASE_CUPTI_LIB|$long|R"
  "GPUPHASE_CUPTI_CALIBRATE||R" "GPUPHASE_CUPTI_CALIBRATE|x!y|R" "GPUPHASE_CUPTI_CALIBRATE|-1|R"
  "GPUPHASE_CUPTI_CALIBRATE|1|A"
  "GPUPHASE_CONTROL_DIR||R" "GPUPHASE_CONTROL_DIR|x!y|R" "GPUPHASE_CONTROL_DIR|relative/dir|R"
  "GPUPHASE_CONTROL_DIR|/$long|R"
  "GPUPHASE_FOLLOW_FORK||R" "GPUPHASE_FOLLOW_FORK|x!y|R" "GPUPHASE_FOLLOW_FORK|-1|R"
  "GPUPHASE_COUNTERS||R" "GPUPHASE_COUNTERS|x!y|R" "GPUPHASE_COUNTERS|-1|R" "GPUPHASE_COUNTERS|top=$big|R"
  "GPUPHASE_COUNTERS|kernel=$long|R" "GPUPHASE_COUNTERS|samples=1|R" "GPUPHASE_COUNTERS|top=2,kernel=k|R"
  "GPUPHASE_COUNTERS|samples=1,kernel=*|N"
  # unknown names: warned about, the library keeps working
  "GPUPHASE_WINDWO|all|W" "GPUPHASE_OUTPT|x.gpht|W" "GPUPHASE_FOO|1|W" "GPUPHASE_|1|W"
)

# Every variable of the table must appear above (docs/configuration.md lists them).
for v in $(grep -o '^| `GPUPHASE_[A-Z_]*`' "$REL_S/docs/configuration.md" | tr -d '|` '); do
  printf '%s\n' "${cases[@]}" | grep -q "^$v|" || rel_fail "$v (docs/configuration.md) has no case here"
done

a=$(rel_dir bare); rel_run "$a" bare -- "$REL_PROG" basic 20 0
for c in "${cases[@]}"; do
  var=${c%%|*}; rest=${c#*|}; val=${rest%|*}; exp=${rest##*|}
  label="$var='${val:0:40}'"
  b=$(rel_dir env); rel_run "$b" pre "$var=$val" -- "$REL_PROG" basic 20 0
  rel_same "$a" "$b" "$label"
  nlib=$(grep -ac '^gpuphase: ' "$b/.err")
  ntr=$(rel_ntraces "$b")
  case "$exp" in
    R)
      [ "$nlib" = 1 ] && [ "$ntr" = 0 ]
      rel_check $? "$label: expected one gpuphase: line and no trace, got $nlib line(s), $ntr trace(s): $(head -c 300 "$b/.err")"
      grep -aq "^gpuphase: $var='" "$b/.err"
      rel_check $? "$label: the message does not name the variable: $(head -c 300 "$b/.err")"
      if [ ${#val} -lt 100 ] && [ "$val" = "$(printf '%s' "$val" | tr -d '\n')" ]; then
        grep -aqF "$var='$val'" "$b/.err"
        rel_check $? "$label: the message does not show the value: $(head -c 300 "$b/.err")"
      fi ;;
    A)
      [ "$nlib" = 0 ] && [ "$ntr" = 1 ]
      rel_check $? "$label: expected no gpuphase: line and a trace, got $nlib line(s), $ntr trace(s): $(head -c 300 "$b/.err")" ;;
    N)
      [ "$nlib" = 1 ] && [ "$ntr" = 1 ] && grep -aqF "gpuphase: counters unavailable: $var=$val sampled no launch: no launched kernel was selected" "$b/.err"
      rel_check $? "$label: expected one line saying no counters were sampled, and why, and a trace, got $nlib line(s), $ntr trace(s): $(head -c 300 "$b/.err")" ;;
    W)
      [ "$nlib" = 1 ] && [ "$ntr" = 1 ] && grep -aq "^gpuphase: unknown variable $var ignored" "$b/.err"
      rel_check $? "$label: expected one 'unknown variable' line and a trace, got $nlib line(s), $ntr trace(s): $(head -c 300 "$b/.err")" ;;
  esac
done
# the documented specifiers expand (pid, host, rank, time, percent)
b=$(rel_dir spec); rel_run "$b" pre "GPUPHASE_OUTPUT=t-%p-%h-%r-%t-%%.gpht" RANK=5 -- "$REL_PROG" basic 5 0
ls "$b" | grep -Eq "^t-[0-9]+-$(hostname)-5-[0-9]{8}T[0-9]{6}Z-%\.gpht$"
rel_check $? "output pattern specifiers: got $(ls "$b" | grep gpht)"
rel_done
