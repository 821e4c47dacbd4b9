#!/usr/bin/env bash
# tests/run-tests.sh — runs every test program given on the command line and
# adds up the results, so `make test` ends with one honest closing line:
#   "test: N passed, N failed, N skipped, N retried"
# (always all four numbers; CI reads "N passed, N failed" from it).
#
# A test program is either a Criterion binary (its "Synthesis:" line is parsed)
# or any other executable (a shell test). A Criterion binary that crashes or
# prints no synthesis counts as a failure; a Criterion test that skips itself
# prints "SKIP: suite::test: reason" to stderr, counted as skipped (Criterion's
# synthesis leaves skipped tests out).
#
# A shell test without parts counts once: exit 0 one pass, exit 77 one skip
# (never a pass: it prints its reason on one line, "SKIP: reason", which the
# runner shows; every "not run", "not judged" or "cannot check" path is an
# exit 77, never an exit 0), anything else one failure.
#
# A shell test made of independent parts prints one line per part, at the
# start of a line, on stdout or stderr:
#   PART <name>: PASS [detail]
#   PART <name>: FAIL <reason>
#   PART <name>: SKIP <reason>
# and each part counts as one test (passed, failed, skipped). Its exit status
# must agree: 0 when no part failed and at least one passed, 77 when no part
# failed and at least one was skipped, another non-zero status when a part
# failed. A test that disagrees with its parts (FAIL printed but exit 0; every
# part passed but exit non-zero, e.g. a check outside the parts failed or the
# script died) counts one failure more, named "<test>(exit N)".
#
# A check allowed to retry (tests/e2e/counting.sh, gp_majority) passes only on a
# majority of its attempts, and prints one line per attempt:
#   ATTEMPT <name> <k>/<n>: PASS|FAIL|SKIP     (SKIP: that attempt not judged)
# The runner shows them per test and counts as "retried" every check (name)
# that had an attempt that did not pass (best of 3: PASS PASS is not retried;
# FAIL PASS PASS passed, retried; PASS FAIL FAIL failed, retried), whatever
# its outcome. The test itself turns the outcome into its exit status or PART.
#
# Each program runs with a timeout (GP_TEST_TIMEOUT, seconds). The runner's
# own test, tests/runner/test_run_tests.sh, holds it to these rules.
# Environment (set by the Makefile): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME.
set -u
timeout_s=${GP_TEST_TIMEOUT:-900}
passed=0; failed=0; skipped=0; retried=0
failed_names=""; skipped_names=""; retried_names=""
log_dir=${GP_BUILD:-build}/test-logs
mkdir -p "$log_dir"

# count_parts LOG RC NAME: adds the test's PART lines to the totals and
# checks its exit status against them; sets syn to the test's summary.
count_parts() {
  local log=$1 rc=$2 name=$3 np nf ns bad=""
  np=$(grep -ac '^PART [^:]*: PASS' "$log")
  nf=$(grep -ac '^PART [^:]*: FAIL' "$log")
  ns=$(grep -ac '^PART [^:]*: SKIP' "$log")
  passed=$((passed + np)); failed=$((failed + nf)); skipped=$((skipped + ns))
  if [ "$nf" != 0 ]; then
    failed_names="$failed_names $(grep -a '^PART [^:]*: FAIL' "$log" | sed "s/^PART \([^:]*\):.*/$name[\1]/" | tr '\n' ' ' | sed 's/ $//')"
    [ "$rc" = 0 ] || [ "$rc" = 77 ] && bad=1
  else
    case $rc in
      0) [ "$np" = 0 ] && bad=1 ;;
      77) [ "$ns" = 0 ] && bad=1 ;;
      *) bad=1 ;;
    esac
  fi
  if [ "$ns" != 0 ]; then
    skipped_names="$skipped_names $name($ns)"
    grep -a '^PART [^:]*: SKIP' "$log" | sed 's/^/    /'
  fi
  if [ -n "$bad" ]; then
    failed=$((failed + 1)); failed_names="$failed_names $name(exit $rc)"
  fi
  syn="parts: $np passed, $nf failed, $ns skipped; exit status $rc${bad:+ (disagrees with the parts)}"
}

# count_attempts LOG NAME: shows the test's ATTEMPT lines and counts as
# retried each check that had an attempt that did not pass.
count_attempts() {
  local log=$1 name=$2 line
  grep -aq '^ATTEMPT ' "$log" || return 0
  while read -r line; do
    retried=$((retried + 1)); retried_names="$retried_names $name[$line]"
  done < <(grep -a '^ATTEMPT [^ ]* [0-9]*/[0-9]*: \(FAIL\|SKIP\)' "$log" | awk '{ print $2 }' | sort -u)
  echo "    attempts:$(grep -a '^ATTEMPT ' "$log" |
    awk '{ sub(/^ATTEMPT /, ""); split($0, a, " "); k = a[1]; s[k] = s[k] (s[k] ? "," : "") $NF;
           if (!(k in o)) { o[k] = ++n; ks[n] = k } }
         END { for (i = 1; i <= n; i++) printf " %s %s;", ks[i], s[ks[i]] }')"
}

for t in "$@"; do
  name=$(basename "$t")
  log="$log_dir/$name.log"
  echo "=== $name"
  start=$(date +%s)
  nfail_before=$failed
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
    if grep -aq '^PART [^:]*: \(PASS\|FAIL\|SKIP\)' "$log"; then
      count_parts "$log" "$rc" "$name"
    else
      if [ "$rc" = 0 ]; then passed=$((passed + 1))
      elif [ "$rc" = 77 ]; then
        skipped=$((skipped + 1)); skipped_names="$skipped_names $name"
        why=$(grep -a '^SKIP' "$log" | tail -n 1); [ -n "$why" ] || why=$(grep -a . "$log" | tail -n 1)
        echo "    $why"
      else failed=$((failed + 1)); failed_names="$failed_names $name"; fi
      syn="exit status $rc"
    fi
    count_attempts "$log" "$name"
  fi
  echo "    $syn  ($(( $(date +%s) - start )) s, log: $log)"
  if [ "$failed" != "$nfail_before" ]; then
    echo "---- last lines of $log:"; tail -n 40 "$log" | sed 's/^/    /'
  fi
done

[ -n "$failed_names" ] && echo "failed:$failed_names"
[ -n "$skipped_names" ] && echo "skipped:$skipped_names"
[ -n "$retried_names" ] && echo "retried:$retried_names"
echo "test: $passed passed, $failed failed, $skipped skipped, $retried retried"
[ "$failed" = 0 ]
