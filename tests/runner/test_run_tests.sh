#!/usr/bin/env bash
# tests/runner/test_run_tests.sh — the test runner's own test: feeds
# tests/run-tests.sh fake shell tests whose honest count is known and checks
# its closing line, "test: N passed, N failed, N skipped, N retried":
#   pass       exit 0                                   1 passed
#   fail       exit 1                                   1 failed
#   skip       "SKIP: reason", exit 77                  1 skipped
#   parts      PART PASS, FAIL, SKIP, exit 1            1 passed 1 failed 1 skipped
#   parts_lie  PART PASS, FAIL, exit 0                  1 passed 2 failed (the exit lies)
#   parts_died PART PASS, then exit 2                   1 passed 1 failed (died outside)
#   parts_77   PART PASS, exit 77 (no part skipped)     1 passed 1 failed
#   maj_1of3   gp_majority: PASS FAIL FAIL              1 failed, retried
#   maj_2of3   gp_majority: FAIL PASS PASS              1 passed, retried
#   maj_2of2   gp_majority: PASS PASS (2 attempts)      1 passed, not retried
#   maj_nj     gp_majority: SKIP SKIP (not judged)      1 skipped, retried
#   gp_parts   gp_part_begin/end: PASS, FAIL, SKIP      1 passed 1 failed 1 skipped
# Then it checks that it can fail: copies of the runner broken in the ways
# this counting replaced (exit 77 as a pass, parts ignored, first success of
# a retry enough) must not give the same line. Run by make test (tests/module.mk).
# Environment: GP_SRC (source root; default: this file's tree).
set -u
S=${GP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

mkdir -p "$tmp/t"
fake() { printf '#!/usr/bin/env bash\n%s\n' "$2" >"$tmp/t/$1.sh"; chmod +x "$tmp/t/$1.sh"; }
fake pass 'exit 0'
fake fail 'echo "something is wrong"; exit 1'
fake skip 'echo "SKIP: no frobnicator on this host"; exit 77'
fake parts 'echo "PART a: PASS"; echo "PART b: FAIL off by 3"; echo "PART c: SKIP no reader"; exit 1'
fake parts_lie 'echo "PART a: PASS"; echo "PART b: FAIL off by 3"; exit 0'
fake parts_died 'echo "PART a: PASS"; exit 2'
fake parts_77 'echo "PART a: PASS"; echo "SKIP: nothing"; exit 77'
# An attempt's outcome comes from a list, one word per attempt.
maj() {
	fake "$1" ". \"$S/tests/e2e/counting.sh\"
outcomes=($2)
one() { case \${outcomes[\$((GP_ATTEMPT - 1))]} in pass) return 0 ;; skip) return 77 ;; *) return 1 ;; esac; }
gp_majority $1 one; rc=\$?
[ \$rc = 77 ] && echo \"SKIP: $1 not judged\"
exit \$rc"
}
maj maj_1of3 "pass fail fail"
maj maj_2of3 "fail pass pass"
maj maj_2of2 "pass pass fail"
maj maj_nj "skip skip pass"
fake gp_parts ". \"$S/tests/e2e/counting.sh\"
fails=0; fail() { echo \"FAIL: \$*\"; fails=\$((fails + 1)); }
gp_part_begin a; gp_part_end
gp_part_begin b; fail wrong; gp_part_end
gp_part_begin c; gp_part_end \"no frobnicator\"
[ \$fails = 0 ]"

order="pass fail skip parts parts_lie parts_died parts_77 maj_1of3 maj_2of3 maj_2of2 maj_nj gp_parts"
want="test: 8 passed, 8 failed, 4 skipped, 3 retried"

# run RUNNER: the closing line RUNNER gives for the fake tests.
run() {
	local r=$1 args=() n
	for n in $order; do args+=("$tmp/t/$n.sh"); done
	mkdir -p "$tmp/b"
	GP_BUILD=$tmp/b GP_SRC=$S GP_TEST_TIMEOUT=60 bash "$r" "${args[@]}" >"$tmp/out" 2>&1
	echo "rc $?" >>"$tmp/out"
	grep '^test: ' "$tmp/out" | tail -n 1
}

got=$(run "$S/tests/run-tests.sh")
[ "$got" = "$want" ] || { fail "closing line: got '$got', want '$want'"; sed 's/^/    /' "$tmp/out"; }
grep -q '^rc 1$' "$tmp/out" || fail "the runner did not exit 1 with failures: $(tail -n 1 "$tmp/out")"
# CI's parser: 'N passed, N failed' as the line's start after one word and a colon.
echo "$got" | grep -Eq '^[a-z]+: [0-9]+ passed, [0-9]+ failed(, |$)' || fail "closing line not in CI's form: '$got'"
grep -q 'SKIP: no frobnicator on this host' "$tmp/out" || fail "the runner did not show the skip's reason"
grep -q 'parts_lie.sh(exit 0)' "$tmp/out" || fail "the runner did not name the test whose exit lies"
grep -q 'attempts: maj_1of3 PASS,FAIL,FAIL;' "$tmp/out" || fail "the runner did not show the attempts"

# A runner with only passing tests exits 0.
order="pass maj_2of2"
got=$(run "$S/tests/run-tests.sh")
[ "$got" = "test: 2 passed, 0 failed, 0 skipped, 0 retried" ] || fail "all passing: got '$got'"
grep -q '^rc 0$' "$tmp/out" || fail "all passing: the runner did not exit 0"
order="pass fail skip parts parts_lie parts_died parts_77 maj_1of3 maj_2of3 maj_2of2 maj_nj gp_parts"

# Broken runners must be caught: each sed turns one honest rule off. A sed
# that no longer matches the runner is itself a failure (the mutation must bite).
mutant() { # NAME SED-SCRIPT [FILE]: the runner (or counting.sh) with SED-SCRIPT applied
	local f=${3:-tests/run-tests.sh}
	rm -rf "$tmp/m"; mkdir -p "$tmp/m/tests/e2e"
	cp "$S/tests/run-tests.sh" "$tmp/m/tests/run-tests.sh"; cp "$S/tests/e2e/counting.sh" "$tmp/m/tests/e2e/counting.sh"
	sed -i "$2" "$tmp/m/$f"
	cmp -s "$S/$f" "$tmp/m/$f" && { fail "mutant $1: the sed did not change $f"; return; }
	# The fake majority tests source counting.sh from GP_SRC: point them at the copy.
	local keep=$S; S=$tmp/m
	for n in maj_1of3 maj_2of3 maj_2of2 maj_nj gp_parts; do sed -i "s|$keep/tests/e2e/counting.sh|$S/tests/e2e/counting.sh|" "$tmp/t/$n.sh"; done
	got=$(run "$tmp/m/tests/run-tests.sh")
	for n in maj_1of3 maj_2of3 maj_2of2 maj_nj gp_parts; do sed -i "s|$S/tests/e2e/counting.sh|$keep/tests/e2e/counting.sh|" "$tmp/t/$n.sh"; done
	S=$keep
	[ "$got" = "$want" ] && fail "mutant $1 (broken runner) gave the honest line: this test cannot catch it"
	echo "ok   mutant $1 caught: $got"
}
mutant skip_as_pass 's/if \[ "\$rc" = 0 \]; then passed/if [ "$rc" = 0 ] || [ "$rc" = 77 ]; then passed/'
mutant parts_ignored 's/if grep -aq .\^PART .*; then/if false; then/'
mutant exit_unchecked 's/\[ -n "\$bad" \]/[ -n "" ]/'
mutant first_success 's/\[ "\$pass" -ge "\$need" \]/[ "$pass" -ge 1 ]/' tests/e2e/counting.sh
mutant unjudged_as_pass 's/77) nj=\$((nj + 1))/77) pass=$((pass + 1))/' tests/e2e/counting.sh
mutant no_retried 's/retried=\$((retried + 1))/:/'

[ "$fails" = 0 ] && echo "test_run_tests.sh: the runner counts honestly and its mutants are caught"
[ "$fails" = 0 ]
