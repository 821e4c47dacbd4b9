#!/usr/bin/env bash
# tests/gpu/duty_serve.sh — one timed run of the example inference server for
# the GPU kit's duty-cycle row (tests/gpu/run.sh step 8, gpukit.py duty):
#
#   duty_serve.sh SERVER CLIENT REQUESTS [NAME=VALUE...]
#
# Starts SERVER on a socket in the current folder with the NAME=VALUE
# variables (only the server gets them: the library under test is never in
# this shell or in the client), waits for its "listening" line (bounded),
# warms it with 50 requests (first kernels, first window), then times
# CLIENT -n REQUESTS from its first request to its last reply and prints
# "timing: serve REQUESTS requests MS" to stderr, asks the server to quit and
# waits for it. Exit: 0 when the client got every reply right and the server
# exited 0; else the first non-zero status (the reason on stderr).
set -u
[ $# -ge 3 ] || { echo "usage: duty_serve.sh SERVER CLIENT REQUESTS [NAME=VALUE...]" >&2; exit 2; }
server=$1 client=$2 n=$3
shift 3
# the socket in a short folder of its own: a Unix socket's path is at most
# 107 bytes, which a run folder deep in a result tree can pass
sockdir=$(mktemp -d /tmp/gpkit-srv.XXXXXX) || exit 1
trap 'rm -rf "$sockdir"' EXIT
sock=$sockdir/srv.sock
env "$@" "$server" "$sock" >server.out 2>server.err &
srv=$!
for _ in $(seq 1 600); do
	grep -q listening server.err 2>/dev/null && break
	kill -0 "$srv" 2>/dev/null || break
	sleep 0.05
done
grep -q listening server.err || { echo "duty_serve: the server did not start: $(tail -2 server.err)" >&2; kill "$srv" 2>/dev/null; exit 1; }
rc=0
"$client" "$sock" -n 50 >/dev/null || rc=$?
if [ "$rc" = 0 ]; then
	t0=$(date +%s%N)
	"$client" "$sock" -n "$n" >client.out || rc=$?
	t1=$(date +%s%N)
fi
"$client" "$sock" -n 0 --quit >/dev/null 2>&1
wait "$srv"
src=$?
[ "$rc" = 0 ] && [ "$src" != 0 ] && { echo "duty_serve: the server exited $src: $(tail -2 server.err)" >&2; rc=$src; }
[ "$rc" = 0 ] || { echo "duty_serve: the client failed ($rc): $(cat client.out 2>/dev/null)" >&2; exit "$rc"; }
echo "timing: serve $n requests $(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e6 }')" >&2
