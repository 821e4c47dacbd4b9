#!/usr/bin/env bash
# test_fuzz_regress.sh — the fuzz harness as an ordinary test: every saved
# crash-regression input (tests/fuzz/regressions/) and the generated seed
# traces (tests/fuzz/make-seeds.sh) run through fuzz_replay, i.e. the reader,
# the report's two passes with the join and its writers; under make asan with
# ASan+UBSan. Fails on any crash, abort or sanitizer report, or an
# allocation above the bound below.
set -u
B=$(cd "${GP_BUILD:-build}" && pwd)
S=$(cd "${GP_SRC:-.}" && pwd)
seeds=$(mktemp -d /tmp/gpseed-XXXXXX)
trap 'rm -rf "$seeds"' EXIT
GP_BUILD=$B bash "$S/tests/fuzz/make-seeds.sh" "$seeds" || { echo "FAIL: could not make the seed traces"; exit 1; }
n=$(ls "$S/tests/fuzz/regressions" | wc -l)
[ "$n" -gt 0 ] || { echo "FAIL: tests/fuzz/regressions is empty"; exit 1; }
# A header or record that claims a huge count or length must not make the
# report allocate it: under ASan any single allocation over 256 MiB is an
# error; in the plain build the address space is capped at 2 GiB (ASan needs
# terabytes of it for its shadow, hence not both).
if [ -n "${GP_SAN:-}" ]; then
  ASAN_OPTIONS=detect_leaks=1:max_allocation_size_mb=256:allocator_may_return_null=0 \
    "$B/tests/fuzz_replay" "$S/tests/fuzz/regressions" "$seeds" || { echo "FAIL: replay"; exit 1; }
else
  (ulimit -v 2097152 && "$B/tests/fuzz_replay" "$S/tests/fuzz/regressions" "$seeds") || { echo "FAIL: replay"; exit 1; }
fi
echo "test_fuzz_regress: $n regression inputs and $(ls "$seeds" | wc -l) seeds replayed"
