#!/usr/bin/env bash
# bench/duty_cycle_cost.sh [REQUESTS] [RUNS] [ROUNDS] [EVERY] — what duty-cycled
# capture costs (docs/always-on.md "Cost"; target: duty/bare <= 1.01 of
# wall at the default duty cycle), on the two programs the target names,
# both on simcuda:
#  * server: the example server answering REQUESTS requests (default
#    15000, ~4.5 s) from server_client, timed from the client's first
#    request to its last reply (after 50 warm-up requests, so the
#    library's start-up and first window are behind it). Also the server's
#    CPU time (user + sys, all its threads, from /proc/PID/stat) over the
#    same interval ("steady") and over its whole life ("total");
#  * launch_bound: `launch_bound ROUNDS` (default 40: 120,000 launches,
#    ~3-5 s): its launch loop as simcuda's timeline measures it (the
#    program's event-timed "launch_loop": the steady part, what the target
#    is about), and the whole process, start-up included, wall and CPU.
# Modes, interleaved run by run (bare, inert, duty, full, bare, ...) so
# drift in the host's load falls on all alike, RUNS times each (default 5):
#   bare   no library
#   inert  the library preloaded with GPUPHASE_DISABLE=1 (every hook calls
#          straight through): a control that separates the cost of the
#          capture from the effect of preloading anything at all
#   duty   GPUPHASE_WINDOW=every=EVERY (default 1s; the default duty
#          cycle, a 60th of each period: 16.7 ms windows at 1s), its files
#          written and rotated. A longer EVERY spreads the fixed cost of
#          each window (CUPTI on and off, the flush, the file) thinner; the
#          runs must then be longer than a few periods (REQUESTS, ROUNDS)
#   full   GPUPHASE_WINDOW=all (every call captured), for scale
# Prints "bench:" lines: each mode's median wall and CPU, and each mode's
# ratio of medians to bare (and duty's to inert). Wall is what the target
# judges; CPU time is steadier on a shared machine and counts the
# library's own threads, which wall hides when a core is free.
# Environment: GP_BUILD (default build/).
set -eu
S=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${GP_BUILD:-$S/build}" && pwd)
N=${1:-15000}
RUNS=${2:-5}
ROUNDS=${3:-40}
EVERY=${4:-1s}
for f in "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/server" "$B/examples/server_client" \
	"$B/examples/launch_bound"; do
	[ -e "$f" ] || { echo "bench: $f missing (make first)" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/gp_duty_cost.XXXXXX)
srv=""
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
TICK_MS=$(echo "1000 / $(getconf CLK_TCK)" | bc)
MODES="bare inert duty full"

# mode_env MODE NAME: the environment words of MODE (one per line) for a
# run whose files are named NAME
mode_env() {
	case $1 in
	inert) printf '%s\n' LD_PRELOAD="$B/lib/libgpuphase.so" GPUPHASE_DISABLE=1 ;;
	duty) printf '%s\n' LD_PRELOAD="$B/lib/libgpuphase.so" GPUPHASE_WINDOW=every="$EVERY" \
		GPUPHASE_OUTPUT="$tmp/$2.gpht" GPUPHASE_CONTROL_DIR="$tmp/ctl" ;;
	full) printf '%s\n' LD_PRELOAD="$B/lib/libgpuphase.so" GPUPHASE_WINDOW=all \
		GPUPHASE_OUTPUT="$tmp/$2.gpht" GPUPHASE_CONTROL_DIR="$tmp/ctl" ;;
	esac
}

# cpu_ms PID: the process's user + sys time so far, all threads, in ms
cpu_ms() {
	local f
	f=$(cat "/proc/$1/stat") || return 1
	f=${f##*) } # fields from the state on: utime and stime are the 12th and 13th
	set -- $f
	echo $(((${12} + ${13}) * TICK_MS))
}

# server MODE I: one server run; prints "wall_ns steady_cpu_ms total_cpu_ms"
server() {
	local mode=$1 i=$2 sock=$tmp/s.$1.$2.sock pid=""
	local -a envs=(LD_LIBRARY_PATH="$B/simcuda" SIMCUDA_CONFIG="$S/examples/server/server.simcuda")
	mapfile -t -O 2 envs < <(mode_env "$mode" "s.$mode.$i")
	/usr/bin/time -f "%U %S" -o "$tmp/s.$mode.$i.cpu" env "${envs[@]}" "$B/examples/server" "$sock" \
		>/dev/null 2>"$tmp/s.$mode.$i.err" &
	srv=$!
	for _ in $(seq 1 600); do
		grep -q listening "$tmp/s.$mode.$i.err" 2>/dev/null && break
		sleep 0.05
	done
	pid=$(pgrep -P "$srv" | head -n 1)
	[ -n "$pid" ] || { echo "bench: the server of $mode run $i is not running" >&2; exit 1; }
	"$B/examples/server_client" "$sock" -n 50 >/dev/null # warm: first requests, first window
	local t0 t1 c0 c1
	c0=$(cpu_ms "$pid")
	t0=$(date +%s%N)
	"$B/examples/server_client" "$sock" -n "$N" >/dev/null
	t1=$(date +%s%N)
	c1=$(cpu_ms "$pid")
	"$B/examples/server_client" "$sock" -n 0 --quit >/dev/null
	wait "$srv" || true
	srv=""
	rm -rf "$tmp/s.$mode.$i.windows" "$tmp/s.$mode.$i.gpht"
	read -r user sys <"$tmp/s.$mode.$i.cpu"
	echo "$((t1 - t0)) $((c1 - c0)) $(echo "($user + $sys) * 1000 / 1" | bc)"
}

# launch MODE I: one launch_bound run; prints "wall_ns cpu_ms loop_ns"
launch() {
	local mode=$1 i=$2
	local -a envs=(LD_LIBRARY_PATH="$B/simcuda" SIMCUDA_CONFIG="$S/examples/launch_bound.simcuda")
	mapfile -t -O 2 envs < <(mode_env "$mode" "l.$mode.$i")
	local t0 t1
	t0=$(date +%s%N)
	/usr/bin/time -f "%U %S" -o "$tmp/l.$mode.$i.cpu" env "${envs[@]}" "$B/examples/launch_bound" "$ROUNDS" \
		>"$tmp/l.$mode.$i.out" 2>&1 || { echo "bench: launch_bound failed ($mode run $i)" >&2; cat "$tmp/l.$mode.$i.out" >&2; exit 1; }
	t1=$(date +%s%N)
	rm -rf "$tmp/l.$mode.$i.windows" "$tmp/l.$mode.$i.gpht"
	read -r user sys <"$tmp/l.$mode.$i.cpu"
	local loop
	loop=$(sed -n 's/^timing: launch_loop \([0-9.]*\)$/\1/p' "$tmp/l.$mode.$i.out")
	[ -n "$loop" ] || { echo "bench: launch_bound printed no launch_loop timing ($mode run $i)" >&2; exit 1; }
	echo "$((t1 - t0)) $(echo "($user + $sys) * 1000 / 1" | bc) $(echo "$loop * 1000000 / 1" | bc)"
}

# ratio A B: A / B to 4 places
ratio() { echo "scale=4; $1 / $2" | bc; }
ms() { echo "scale=3; $1 / 1000000" | bc; }
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "duty cycle: every=$EVERY; $N requests; launch_bound $ROUNDS rounds; $RUNS runs of each mode; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in $MODES; do : >"$tmp/server.$mode"; : >"$tmp/launch.$mode"; done
for i in $(seq 1 "$RUNS"); do
	for mode in $MODES; do
		read -r w c ct <<<"$(server "$mode" "$i")"
		echo "$w $c $ct" >>"$tmp/server.$mode"
		echo "run $i server $mode: wall $(ms "$w") ms, server CPU $c ms in the timed part, $ct ms in all"
		read -r w c l <<<"$(launch "$mode" "$i")"
		echo "$w $c $l" >>"$tmp/launch.$mode"
		echo "run $i launch_bound $mode: loop $(ms "$l") ms; whole run: wall $(ms "$w") ms, CPU $c ms"
	done
done
# col PROGRAM MODE K: the median of column K of that program's runs
col() { cut -d' ' -f"$3" <"$tmp/$1.$2" | median; }
# line PROGRAM WHAT K UNIT: one bench line per mode for column K
line() {
	local prog=$1 what=$2 k=$3 bare inert v extra
	bare=$(col "$prog" bare "$k")
	inert=$(col "$prog" inert "$k")
	for mode in $MODES; do
		v=$(col "$prog" "$mode" "$k")
		extra=""
		[ "$mode" = duty ] && extra=" duty/inert=$(ratio "$v" "$inert")"
		if [ "$what" = wall ] || [ "$what" = loop ]; then
			echo "bench: duty_cycle_${prog}_${mode}_$what $(ms "$v") ms ratio=$(ratio "$v" "$bare")$extra"
		else
			echo "bench: duty_cycle_${prog}_${mode}_$what $v ms ratio=$(ratio "$v" "$bare")$extra"
		fi
	done
}
line server wall 1
line server cpu_steady 2
line server cpu_total 3
line launch loop 3
line launch wall 1
line launch cpu 2
