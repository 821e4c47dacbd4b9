#!/usr/bin/env bash
# tests/run-tests.sh — runs every test program given on the command line and
# adds up the results, so `make test` ends with one honest closing line:
#   "test: N passed, N failed"
#
# A test program is either a Criterion binary (its "Synthesis:" line is parsed)
# or any other executable (a shell test): exit 0 counts as one pass, anything
# else as one failure, except exit 77: skipped (an external reader or the
# package index it comes from is out of reach), counted apart, never passed. A Criterion binary that crashes or prints no synthesis
# counts as a failure too; a Criterion test that skips itself prints a line
# "SKIP: suite::test: reason" to stderr, counted as skipped (Criterion's
# synthesis leaves skipped tests out). Each program runs with a timeout.
#
# Environment (set by the Makefile): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME.
set -u
timeout_s=${GP_TEST_TIMEOUT:-900}
passed=0; failed=0; skipped=0; failed_names=""; skipped_names=""
log_dir=${GP_BUILD:-build}/test-logs
mkdir -p "$log_dir"

for t in "$@"; do
  name=$(basename "$t")
  log="$log_dir/$name.log"
  echo "=== $name"
  start=$(date +%s)
  if [ -x "$t" ] && head -c 4 "$t" | grep -q ELF; then
    timeout -k 10 "$timeout_s" "$t" --jobs "${GP_TEST_JOBS:-2}" >"$log" 2>&1; rc=$?
    syn=$(grep -a "Synthesis:" "$log" | tail -n 1)
    if [ -n "$syn" ]; then
      p=$(echo "$syn" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
      f=$(echo "$syn" | sed -n 's/.*Failing: \([0-9]*\).*/\1/p')
      c=$(echo "$syn" | sed -n 's/.*Crashing: \([0-9]*\).*/\1/p')
      passed=$((passed + ${p:-0})); nf=$(( ${f:-0} + ${c:-0} ))
      [ "$rc" != 0 ] && [ "$nf" = 0 ] && nf=1
      failed=$((failed + nf))
      [ "$nf" != 0 ] && failed_names="$failed_names $name"
      ns=$(grep -ac "^SKIP: " "$log")
      if [ "$ns" != 0 ]; then
        skipped=$((skipped + ns)); skipped_names="$skipped_names $name($ns)"
        grep -a "^SKIP: " "$log" | sed 's/^/    /'
      fi
    else
      failed=$((failed + 1)); failed_names="$failed_names $name"
      echo "    (no Criterion synthesis line; exit status $rc)"
    fi
  else
    timeout -k 10 "$timeout_s" bash -c '"$0"' "$t" >"$log" 2>&1; rc=$?
    if [ "$rc" = 0 ]; then passed=$((passed + 1))
    elif [ "$rc" = 77 ]; then skipped=$((skipped + 1)); skipped_names="$skipped_names $name"
    else failed=$((failed + 1)); failed_names="$failed_names $name"; fi
    syn="exit status $rc"
  fi
  echo "    $syn  ($(( $(date +%s) - start )) s, log: $log)"
  if echo " $failed_names " | grep -q " $name "; then
    echo "---- last lines of $log:"; tail -n 40 "$log" | sed 's/^/    /'
  fi
done

[ -n "$failed_names" ] && echo "failed:$failed_names"
[ -n "$skipped_names" ] && echo "skipped:$skipped_names"
echo "test: $passed passed, $failed failed${skipped_names:+, $skipped skipped}"
[ "$failed" = 0 ]
