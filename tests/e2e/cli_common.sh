# cli_common.sh — sourced by the tests/e2e/test_cli_*.sh shell tests: paths,
# the simcuda environment, sanitizer set-up, and fail/require helpers.
# Environment (set by make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME.
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
G=$B/bin/gpuphase
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# A component the test needs: missing is a failure, never a skip.
require() { for f in "$@"; do [ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }; done; }
finish() { [ "$fails" = 0 ] && echo "$(basename "$0"): all checks passed"; [ "$fails" = 0 ]; }
tmp=$(mktemp -d /tmp/gp_cli_test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Programs run on simcuda: its folder first on the library path.
export LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Under SAN=asan libgpuphase.so is instrumented: the ASan runtime must be
# preloaded first into the uninstrumented programs; gpuphase record appends
# its library after it. Leak reports of the programs are not ours.
if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	export LD_PRELOAD="$GP_SAN_RUNTIME"
	export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi

# The summary line of gpuphase record: "gpuphase: trace FILE, X MiB, R records, D dropped".
summary_re='^gpuphase: trace (.+), ([0-9]+\.[0-9][0-9]) MiB, ([0-9]+) records, ([0-9]+) dropped$'

# await_pid FILE NAME: the pid a program prints as "NAME: pid N ..." on the
# stderr it writes to FILE, waited for up to 30 s (empty if it never came).
await_pid() {
	local p=""
	for _ in $(seq 1 600); do
		p=$(sed -n "s/^$2: pid \([0-9]*\) .*/\1/p" "$1")
		[ -n "$p" ] && break
		sleep 0.05
	done
	echo "$p"
}
