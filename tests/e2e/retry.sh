# tests/e2e/retry.sh — sourced by the shell tests whose checks compare host
# timings with a truth and may therefore be retried: the one retry rule.
#
#   gp_majority [-n N] NAME CMD [ARG...]
#
# runs CMD up to N times (default 3, N odd) and succeeds only when a majority
# of the attempts succeeded: best of 3 stops as soon as 2 passed or 2 failed.
# A first success is not enough: 1 of 3 is a failure, whatever the reason the
# other attempts failed. Each attempt runs with GP_ATTEMPT=k (1..N) in its
# environment (for per-attempt file names) and prints, at the start of a line,
#   ATTEMPT NAME k/N: PASS|FAIL
# which tests/run-tests.sh reads: it shows them and counts NAME as retried
# when one of its attempts failed. NAME is one word (no spaces or colons).
# A majority needs at least N/2+1 runs even when the first passes.
# Returns 0 (majority passed) or 1; the caller reports the failure its own way.
# Never widen a tolerance to make the majority: a check that fails on most
# attempts is wrong or its tolerance was already too tight to mean anything.

gp_majority() {
	local n=3 name k pass=0 fail=0 need
	if [ "${1:-}" = -n ]; then n=$2; shift 2; fi
	name=$1; shift
	need=$((n / 2 + 1))
	for k in $(seq "$n"); do
		if GP_ATTEMPT=$k "$@"; then
			pass=$((pass + 1)); echo "ATTEMPT $name $k/$n: PASS"
		else
			fail=$((fail + 1)); echo "ATTEMPT $name $k/$n: FAIL"
		fi
		[ "$pass" -ge "$need" ] && { echo "majority $name: $pass of $k attempts passed"; return 0; }
		[ "$fail" -ge "$need" ] && { echo "majority $name: $fail of $k attempts failed"; return 1; }
	done
	return 1 # not reached: N odd
}
