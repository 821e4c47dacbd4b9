#!/usr/bin/env bash
# test_duty_cycle.sh — duty-cycled capture (docs/always-on.md) on simcuda:
# the example server under GPUPHASE_WINDOW=every=300ms,duration=100ms while
# a client sends ~2 s of requests.
#   files    several <output>.windows/w<SEQ>.gpht, numbered 1.. without a
#            gap, each reported alone by gpuphase-report (text and JSON),
#            each with exactly one capture window; no .part left after exit
#   truth    each window's operator counts against simcuda's truth
#            (duty_cycle_check.py): every op whose launching call lies wholly
#            inside the window is counted, none whose call lies outside it;
#            at least 3 windows hold ops
#   marks    between windows no iteration mark is written but the last:
#            each file holds at most one iteration mark before its window's
#            start mark, of the iteration the start mark names (gpuphase-dump)
#   status   the control socket's `status` answer keeps its first line and
#            adds "windows dir=DIR last=SEQ", SEQ a closed window on disk
#   keep     GPUPHASE_WINDOW_KEEP_BYTES=1200k: the directory stays within
#            the cap, each window file within a quarter of it, and the
#            windows left are the newest, up to the last window opened (the
#            library's log), the oldest deleted first, at least one deleted
# Tamper controls: the truth check on the same reports with every window
# moved by one period (300 ms) must fail; the keep check must fail on the
# same directory with its newest window deleted instead of the oldest; the
# marks check must fail on a window's dump with a second mark added before
# its start.
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME; KEEP=1
# keeps the files.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for f in "$R" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/server" \
	"$B/examples/server_client"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
tmp=$(mktemp -d /tmp/gp_duty_cycle.XXXXXX)
srv=""
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	if [ -n "${KEEP:-}" ]; then echo "files kept in $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
. "$S/tests/e2e/duty_common.sh"
preload=$B/lib/libgpuphase.so
asan_opts=${ASAN_OPTIONS:-}
if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload"
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}"
fi

# serve NAME REQUESTS [ENV...]: the server under the duty cycle, a client
# sending REQUESTS requests, the control socket's status asked meanwhile
# (into NAME.status), then quit. Sets pid.
serve() {
	local name=$1 n=$2
	shift 2
	local sock=$tmp/$name.sock ctl=$tmp/ctl
	pid=""
	env ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" LD_LIBRARY_PATH="$B/simcuda" \
		SIMCUDA_CONFIG="$S/examples/server/server.simcuda" SIMCUDA_TRUTH="$tmp/$name.truth" \
		GPUPHASE_OUTPUT="$tmp/$name.gpht" GPUPHASE_WINDOW=every=300ms,duration=100ms \
		GPUPHASE_CONTROL_DIR="$ctl" GPUPHASE_LOG=info "$@" "$B/examples/server" "$sock" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	srv=$!
	for _ in $(seq 1 600); do
		pid=$(sed -n 's/^server: pid \([0-9]*\) listening.*/\1/p' "$tmp/$name.err")
		[ -n "$pid" ] && break
		kill -0 "$srv" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$pid" ] || { fail "$name: server did not start: $(tail -2 "$tmp/$name.err")"; return 1; }
	"$B/examples/server_client" "$sock" -n "$n" >"$tmp/$name.client" 2>&1 || fail "$name: client failed"
	python3 - "$ctl/$pid.sock" >"$tmp/$name.status" 2>&1 <<'EOF' || fail "$name: status request failed"
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"status\n")
out = b""
while True:
    b = s.recv(4096)
    if not b:
        break
    out += b
sys.stdout.write(out.decode())
EOF
	"$B/examples/server_client" "$sock" -n 0 --quit >/dev/null 2>&1
	wait "$srv"
	srv=""
}

# --- files, truth, status ----------------------------------------------------
serve run 9000
dir=$tmp/run.windows
windows_check run "$dir" "$tmp/run.truth" 5
head -1 "$tmp/run.status" | grep -q '^ok .* pid=[0-9]* marker=sync window=fixed$' ||
	fail "status: first line changed: $(head -1 "$tmp/run.status")"
last=$(sed -n "s|^windows dir=$dir last=\([0-9]*\)\$|\1|p" "$tmp/run.status")
if [ -z "$last" ] || [ "$last" -lt 1 ] || [ ! -e "$(printf '%s/w%08d.gpht' "$dir" "$last")" ]; then
	fail "status: no 'windows dir=$dir last=SEQ' line naming a closed window: $(cat "$tmp/run.status")"
else
	echo "status: $(sed -n 2p "$tmp/run.status")"
fi

# --- keep: the directory's cap -------------------------------------------------
# keep_check DIR CAP LAST: within the cap, each file within CAP/4, the
# windows kept a run of SEQs ending at LAST (the newest), some deleted
keep_check() {
	local d=$1 cap=$2 last=$3 total=0 seqs="" s prev="" sz
	for f in "$d"/w*.gpht; do
		[ -e "$f" ] || continue
		sz=$(stat -c %s "$f")
		total=$((total + sz))
		[ "$sz" -le $((cap / 4)) ] || { echo "$f: $sz bytes, over a quarter of the cap"; return 1; }
		s=$(basename "$f" .gpht)
		seqs="$seqs ${s#w}"
	done
	[ "$total" -le "$cap" ] || { echo "$total bytes in $d, over the cap of $cap"; return 1; }
	for s in $seqs; do
		s=$((10#$s))
		if [ -n "$prev" ] && [ "$s" -ne $((prev + 1)) ]; then
			echo "windows kept are not the newest run: $seqs"
			return 1
		fi
		prev=$s
	done
	[ "$prev" = "$last" ] || { echo "the newest window ($last) is not kept: $seqs"; return 1; }
	local first
	first=$(echo "$seqs" | awk '{print $1}')
	[ "$((10#$first))" -gt 1 ] || { echo "nothing was deleted: $seqs"; return 1; }
	echo "kept$seqs ($total bytes)"
}
cap=$((1200 * 1024))
serve keep 9000 GPUPHASE_WINDOW_KEEP_BYTES=1200k
opened=$(grep -c 'capture on' "$tmp/keep.err")
if out=$(keep_check "$tmp/keep.windows" "$cap" "$opened"); then
	echo "keep: $out"
else
	fail "keep: $out"
fi
ls "$tmp/keep.windows" | grep -q '\.part$' && fail "keep: a .part file is left after exit"
for f in "$tmp"/keep.windows/w*.gpht; do
	"$R" "$f" >/dev/null 2>"$f.err" || fail "keep: $f does not report alone: $(head -2 "$f.err")"
done
# tamper: the newest window deleted instead of the oldest
newest=$(ls "$tmp"/keep.windows/w*.gpht | tail -1)
rm -f "$newest"
if keep_check "$tmp/keep.windows" "$cap" "$opened" >/dev/null; then
	fail "tamper: a directory missing its newest window passed the keep check"
else
	echo "tamper: newest deleted instead of oldest refused"
fi

[ "$fails" = 0 ] && echo "PASS test_duty_cycle" && exit 0
echo "$fails failure(s)"
exit 1
