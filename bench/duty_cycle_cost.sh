#!/usr/bin/env bash
# bench/duty_cycle_cost.sh [REQUESTS] [RUNS] — what duty-cycled capture
# costs (docs/always-on.md "Cost"): the example server on simcuda answering
# REQUESTS requests (default 15000, ~3.5 s) from server_client, timed from
# the client's first request to its last reply, RUNS times (default 5) each:
#   bare   no library
#   duty   GPUPHASE_WINDOW=every=1s (the default duty cycle, a 60th of each
#          period: 16.7 ms windows), its files written and rotated
#   full   GPUPHASE_WINDOW=all (every call captured), for scale
# Runs are interleaved (bare, duty, full, bare, ...) so drift in the host's
# load falls on all three alike. Prints "bench:" lines: each mode's median
# wall and median server CPU time (user + sys: steadier than wall on a
# shared machine), and duty/bare and full/bare as ratios of the medians. The
# target is duty/bare <= 1.01 of wall at the default duty cycle.
# launch_bound is not used: its whole run (~0.2 s on simcuda) is shorter
# than one period, so it would measure the library's start-up, not the
# duty cycle.
# Environment: GP_BUILD (default build/).
set -eu
S=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${GP_BUILD:-$S/build}" && pwd)
N=${1:-15000}
RUNS=${2:-5}
for f in "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/server" "$B/examples/server_client"; do
	[ -e "$f" ] || { echo "bench: $f missing (make first)" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/gp_duty_cost.XXXXXX)
srv=""
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT

# one MODE I: one server run; prints the client's wall in ns
one() {
	local mode=$1 i=$2 sock=$tmp/$1.$2.sock
	local -a envs=(LD_LIBRARY_PATH="$B/simcuda" SIMCUDA_CONFIG="$S/examples/server/server.simcuda")
	case $mode in
	duty) envs+=(LD_PRELOAD="$B/lib/libgpuphase.so" GPUPHASE_WINDOW=every=1s
		GPUPHASE_OUTPUT="$tmp/$mode.$i.gpht" GPUPHASE_CONTROL_DIR="$tmp/ctl") ;;
	full) envs+=(LD_PRELOAD="$B/lib/libgpuphase.so" GPUPHASE_WINDOW=all
		GPUPHASE_OUTPUT="$tmp/$mode.$i.gpht" GPUPHASE_CONTROL_DIR="$tmp/ctl") ;;
	esac
	/usr/bin/time -f "%U %S" -o "$tmp/$mode.$i.cpu" env "${envs[@]}" "$B/examples/server" "$sock" \
		>/dev/null 2>"$tmp/$mode.$i.err" &
	srv=$!
	for _ in $(seq 1 600); do
		grep -q listening "$tmp/$mode.$i.err" 2>/dev/null && break
		sleep 0.05
	done
	"$B/examples/server_client" "$sock" -n 50 >/dev/null # warm: first requests, first window
	local t0 t1
	t0=$(date +%s%N)
	"$B/examples/server_client" "$sock" -n "$N" >/dev/null
	t1=$(date +%s%N)
	"$B/examples/server_client" "$sock" -n 0 --quit >/dev/null
	wait "$srv" || true
	srv=""
	rm -rf "$tmp/$mode.$i.windows" "$tmp/$mode.$i.gpht"
	read -r user sys <"$tmp/$mode.$i.cpu"
	echo "$((t1 - t0)) $(echo "($user + $sys) * 1000" | bc)"
}

# ratio A B: A / B to 4 places
ratio() { echo "scale=4; $1 / $2" | bc; }

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

: >"$tmp/bare" >"$tmp/duty" >"$tmp/full"
for i in $(seq 1 "$RUNS"); do
	for mode in bare duty full; do
		read -r w c <<<"$(one "$mode" "$i")"
		echo "$w $c" >>"$tmp/$mode"
		echo "run $i $mode: wall $(echo "scale=3; $w / 1000000" | bc) ms, server CPU $c ms"
	done
done
for mode in bare duty full; do
	wall=$(cut -d' ' -f1 <"$tmp/$mode" | median)
	cpu=$(cut -d' ' -f2 <"$tmp/$mode" | median)
	eval "${mode}_wall=\$wall ${mode}_cpu=\$cpu"
done
# shellcheck disable=SC2154 # set by the eval above
{
	echo "bench: duty_cycle_server_bare_wall $(echo "scale=3; $bare_wall / 1000000" | bc) ms"
	echo "bench: duty_cycle_server_duty_wall $(echo "scale=3; $duty_wall / 1000000" | bc) ms" \
		"ratio=$(ratio "$duty_wall" "$bare_wall")"
	echo "bench: duty_cycle_server_full_wall $(echo "scale=3; $full_wall / 1000000" | bc) ms" \
		"ratio=$(ratio "$full_wall" "$bare_wall")"
	echo "bench: duty_cycle_server_bare_cpu $bare_cpu ms"
	echo "bench: duty_cycle_server_duty_cpu $duty_cpu ms ratio=$(ratio "$duty_cpu" "$bare_cpu")"
	echo "bench: duty_cycle_server_full_cpu $full_cpu ms ratio=$(ratio "$full_cpu" "$bare_cpu")"
}
