# rel_common.sh — sourced by tests/reliability/test_rel_*.sh (not a test).
#
# Runs programs in a clean environment (no inherited GPUPHASE_*/SIMCUDA_*),
# simcuda first on LD_LIBRARY_PATH, bare or with libgpuphase.so preloaded or
# injected (the sanitizer runtime first when the library is instrumented),
# under a timeout (a hang is a failure, never a wait). Each run leaves in its
# directory .out, .err and .rc. Checks call rel_fail with a message; the test
# ends with rel_done, which exits 1 if anything failed. A case this machine
# cannot run (no root, no tmpfs, a sanitizer build) calls rel_skip NAME REASON
# instead of passing unsaid: the test is then counted in parts
# (tests/run-tests.sh): one part per skipped case, and rel_done's part, named
# after the test, for every check that ran.
#
# Environment (set by make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME.
set -u
REL_B=$(cd "${GP_BUILD:-build}" && pwd)
REL_S=$(cd "${GP_SRC:-.}" && pwd)
REL_LIB=$REL_B/lib/libgpuphase.so
REL_PROG=$REL_B/tests/rel/rel_prog
REL_REPORT=$REL_B/bin/gpuphase-report
REL_DUMP=$REL_B/bin/gpuphase-dump
REL_TMP=$(mktemp -d /tmp/rel-XXXXXX)
REL_FAILS=0
REL_CHECKS=0
trap 'rm -rf "$REL_TMP"' EXIT
ulimit -S -c 0 # crash tests leave no cores behind (soft: the core case raises it)

for f in "$REL_LIB" "$REL_PROG" "$REL_REPORT" "$REL_DUMP"; do
  [ -e "$f" ] || { echo "FAIL: $f is not built"; exit 1; }
done

rel_fail() { echo "FAIL: $*"; REL_FAILS=$((REL_FAILS + 1)); }
rel_ok() { REL_CHECKS=$((REL_CHECKS + 1)); }
rel_check() { # rel_check COND-STATUS MESSAGE: COND-STATUS is $? of a test
  if [ "$1" = 0 ]; then rel_ok; else rel_fail "$2"; fi
}
rel_skip() { # rel_skip NAME REASON: the case NAME cannot run here
  echo "PART $1: SKIP $2"
}
rel_done() {
  local t; t=$(basename "$0" .sh)
  echo "$(basename "$0"): $REL_CHECKS checks passed, $REL_FAILS failed"
  if [ "$REL_FAILS" = 0 ]; then echo "PART $t: PASS $REL_CHECKS checks"; exit 0; fi
  echo "PART $t: FAIL $REL_FAILS of $((REL_CHECKS + REL_FAILS)) checks"; exit 1
}

# REL_EXITING_THREADS: extra settings for a profiled run whose CUDA-calling
# threads exit before the process does. Empty, except under TSan, where it is
# GPUPHASE_STACKS=off: a thread that called unw_backtrace (stacks are on at
# synchronizing calls by default) leaves libunwind's trace-cache key
# destructor, which, like TSan's own thread finalizer, waits for the last
# destructor round and then runs after TSan has destroyed the thread's state,
# crashing in TSan's pthread_mutex_lock interceptor. A ten-line program with
# no gpuphase code (a thread calling unw_backtrace once, built with
# -fsanitize=thread) crashes the same way; without TSan there is no crash.
# Stack capture under TSan stays covered by tests/e2e/test_preload_sanitizer.sh
# (GPUPHASE_STACKS=all). docs/reliability.md, Sanitizers.
REL_EXITING_THREADS=()
if [ "${GP_SAN:-}" = tsan ]; then
  REL_EXITING_THREADS=(GPUPHASE_STACKS=off)
  echo "note: under TSan, runs whose threads exit have GPUPHASE_STACKS=off (libunwind's thread-exit destructor crashes inside TSan)"
fi

# A fresh directory under the test's temp dir.
rel_dir() { local d; d=$(mktemp -d "$REL_TMP/${1:-run}-XXXX"); echo "$d"; }

# rel_run DIR LOAD [VAR=VALUE...] -- CMD ARGS...
#   LOAD: bare | pre (LD_PRELOAD) | inject (CUDA_INJECTION64_PATH)
#   REL_TIMEOUT (default 60 s) bounds the run.
rel_run() {
  local dir=$1 load=$2; shift 2
  local -a envs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  local san_pre=""
  if [ -n "${GP_SAN:-}" ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then san_pre=$GP_SAN_RUNTIME; fi
  local -a le=()
  case "$load" in
    bare) [ -n "$san_pre" ] && le+=("LD_PRELOAD=$san_pre") ;; # simcuda is instrumented too
    pre) le+=("LD_PRELOAD=${san_pre:+$san_pre:}$REL_LIB") ;;
    inject) le+=("CUDA_INJECTION64_PATH=$REL_LIB"); [ -n "$san_pre" ] && le+=("LD_PRELOAD=$san_pre") ;;
    *) echo "rel_run: bad load $load" >&2; return 2 ;;
  esac
  (cd "$dir" && timeout -k 5 "${REL_TIMEOUT:-60}" env -i PATH=/usr/bin:/bin HOME="$dir" \
     LD_LIBRARY_PATH="$REL_B/simcuda" ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 \
     UBSAN_OPTIONS=print_stacktrace=1 "${le[@]}" "${envs[@]}" "$@" >"$dir/.out" 2>"$dir/.err") 2>/dev/null
  echo $? >"$dir/.rc"
  # Under TSan every run, bare or profiled, must be free of reports (a race
  # in both runs would otherwise compare equal).
  if [ "${GP_SAN:-}" = tsan ] && grep -aq 'WARNING: ThreadSanitizer' "$dir/.err"; then
    rel_fail "ThreadSanitizer report in $(basename "$dir") ($load): $(grep -a '^SUMMARY: ThreadSanitizer' "$dir/.err" | sort -u | head -3 | tr '\n' ' ')"
  fi
}

# stderr with the library's lines removed and run-dependent numbers
# normalised (the examples print event timings; the server prints its pid).
rel_err_norm() {
  if [ -n "${GP_SAN:-}" ]; then # a sanitizer's own crash report: pids and addresses differ
    grep -av '^gpuphase: ' "$1/.err" | sed -E 's/^(timing: [^0-9]*)[0-9.]+/\1N/; s/pid [0-9]+/pid N/g;
      s/==[0-9]+==/==N==/g; s/0x[0-9a-f]+/0xN/g; s/\+0x[0-9a-f]+\)/+N)/g; s/ T[0-9]+\)$/ TN)/'
  else
    grep -av '^gpuphase: ' "$1/.err" | sed -E 's/^(timing: [^0-9]*)[0-9.]+/\1N/; s/pid [0-9]+/pid N/g'
  fi
}

# The program's own files in DIR (not the trace, not our capture files).
rel_files() { (cd "$1" && find . -type f ! -name '*.gpht' ! -name '.out' ! -name '.err' ! -name '.rc' | sort); }

# rel_same BARE PRE LABEL: exit status, stdout, files byte-identical; stderr
# identical once the gpuphase: lines are removed (and numbers normalised).
rel_same() {
  local a=$1 b=$2 what=$3
  [ "$(cat "$a/.rc")" = "$(cat "$b/.rc")" ]
  rel_check $? "$what: exit status $(cat "$b/.rc") under the profiler, $(cat "$a/.rc") without"
  cmp -s "$a/.out" "$b/.out"
  rel_check $? "$what: stdout differs: $(diff "$a/.out" "$b/.out" | head -5 | tr '\n' '|')"
  [ "$(rel_files "$a")" = "$(rel_files "$b")" ]
  rel_check $? "$what: the program's files differ: [$(rel_files "$a" | tr '\n' ' ')] vs [$(rel_files "$b" | tr '\n' ' ')]"
  local f
  for f in $(rel_files "$a"); do
    cmp -s "$a/$f" "$b/$f" || rel_fail "$what: file $f differs"
  done
  diff <(rel_err_norm "$a") <(rel_err_norm "$b") >/dev/null
  rel_check $? "$what: stderr differs beyond gpuphase: lines: $(diff <(rel_err_norm "$a") <(rel_err_norm "$b") | head -5 | tr '\n' '|')"
}

# Number of trace files in DIR.
# rel_ntraces DIR: trace files written there (a duty cycle's windows, in
# <trace>.windows/, count each).
rel_ntraces() { find "$1" -maxdepth 2 -name '*.gpht' \( ! -path "$1/*/*" -o -path "$1/*.windows/*" \) | wc -l; }

# rel_count TRACE: gpuphase-dump summary "TYPE COUNT" per record type.
rel_types() { "$REL_DUMP" "$1" 2>/dev/null | grep -v '^#' | awk '{c[$1]++} END {for (k in c) print k, c[k]}'; }

# rel_hooks TRACE API_CLASS: hook records of that class (enum gp_api_class).
rel_hooks() { "$REL_DUMP" "$1" 2>/dev/null | awk -v c="class=$2" '$1 == "hook_api" && $2 == c' | wc -l; }
