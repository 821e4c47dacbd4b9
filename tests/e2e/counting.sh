# tests/e2e/counting.sh — sourced by the shell tests that count in parts or
# retry checks that compare host timings with a truth: the one retry rule
# (gp_majority) and one counted part (gp_part_begin / gp_part_end), in the
# line formats tests/run-tests.sh reads.
#
#   gp_majority [-n N] NAME CMD [ARG...]
#
# runs CMD up to N times (default 3, N odd) and succeeds only when a majority
# of the attempts succeeded: best of 3 stops as soon as 2 passed or 2 failed.
# A first success is not enough: 1 of 3 is a failure, whatever the reason the
# other attempts failed, and a majority needs at least N/2+1 runs even when
# the first passes. Each attempt runs with GP_ATTEMPT=k (1..N) in its
# environment (for per-attempt file names) and prints, at the start of a line,
#   ATTEMPT NAME k/N: PASS|FAIL|SKIP
# which tests/run-tests.sh reads: it shows them and counts NAME as retried
# when one of its attempts did not pass. NAME is one word (no spaces or colons).
#
# CMD exits 0 (passed), 77 (this attempt could not be judged, e.g. simcuda's
# own truth shows the host stretched the very times the check compares; CMD
# says why), or anything else (failed). An attempt not judged is not a pass:
# it stops counting towards the majority. Returns 0 when a majority passed;
# 1 when one failed, or when no majority passed and any attempt failed (a
# failure is never hidden behind attempts not judged); 77 when no majority
# passed and no attempt failed, so the check could not be judged here: the
# caller reports it as skipped with the reason, never as passed.
# Never widen a tolerance to make the majority: a check that fails on most
# attempts is wrong or its tolerance was already too tight to mean anything.

gp_majority() {
	local n=3 name k rc pass=0 fail=0 nj=0 need
	if [ "${1:-}" = -n ]; then n=$2; shift 2; fi
	name=$1; shift
	need=$((n / 2 + 1))
	for k in $(seq "$n"); do
		GP_ATTEMPT=$k "$@"; rc=$?
		case $rc in
			0) pass=$((pass + 1)); echo "ATTEMPT $name $k/$n: PASS" ;;
			77) nj=$((nj + 1)); echo "ATTEMPT $name $k/$n: SKIP" ;;
			*) fail=$((fail + 1)); echo "ATTEMPT $name $k/$n: FAIL" ;;
		esac
		if [ "$pass" -ge "$need" ]; then
			echo "majority $name: $pass of $k attempts passed"; return 0
		fi
		if [ "$fail" -ge "$need" ] || { [ $((pass + n - k)) -lt "$need" ] && [ "$fail" -gt 0 ]; }; then
			echo "majority $name: no majority passed: $pass passed, $fail failed, $nj not judged of $k attempts"
			return 1
		fi
		if [ $((pass + n - k)) -lt "$need" ]; then
			echo "majority $name: not judged: $pass passed, $nj not judged of $k attempts"
			return 77
		fi
	done
	return 1 # not reached
}

# gp_part_begin NAME ... gp_part_end [SKIP-REASON]: one counted part,
#   PART NAME: PASS | FAIL <n> check(s) failed, above | SKIP SKIP-REASON
# failed when the test's failure counter, $fails (its fail() adds one), grew
# in between; else skipped when SKIP-REASON is given; else passed.
gp_part_begin() { gp_part=$1; gp_part_fails0=${fails:-0}; }
gp_part_end() {
	if [ "${fails:-0}" != "$gp_part_fails0" ]; then
		echo "PART $gp_part: FAIL $((fails - gp_part_fails0)) check(s) failed, above"
	elif [ -n "${1:-}" ]; then echo "PART $gp_part: SKIP $1"
	else echo "PART $gp_part: PASS"; fi
}
