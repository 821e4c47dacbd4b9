#!/usr/bin/env bash
# test_rel_host.sh — host safety (docs/reliability.md §1): every
# example, the example server with its client, and rel_prog run once bare and
# once under the profiler (LD_PRELOAD, then CUDA_INJECTION64_PATH). Exit
# status, stdout and every file the program writes must be byte-identical;
# stderr may differ only by lines starting "gpuphase: " (event timings and
# the server's pid are normalised: they differ between any two runs). Each
# profiled run must also have written a readable trace, so a library that
# silently did nothing cannot pass.
. "$(dirname "$0")/rel_common.sh"

check_prog() { # label simcuda-config -- cmd...
  local label=$1 cfg=$2; shift 3
  local a b load
  a=$(rel_dir bare); rel_run "$a" bare ${cfg:+SIMCUDA_CONFIG=$cfg} -- "$@"
  [ "$(cat "$a/.rc")" != 124 ] || rel_fail "$label: timed out without the profiler"
  for load in pre inject; do
    b=$(rel_dir "$load"); rel_run "$b" "$load" ${cfg:+SIMCUDA_CONFIG=$cfg} -- "$@"
    rel_same "$a" "$b" "$label ($load)"
    [ "$(rel_ntraces "$b")" = 1 ]
    rel_check $? "$label ($load): expected one trace, found $(rel_ntraces "$b")"
    "$REL_DUMP" "$b"/*.gpht >/dev/null 2>&1
    rel_check $? "$label ($load): the trace does not read back"
  done
}

for ex in compute_bound launch_bound sync_bound; do
  check_prog "$ex" "$REL_S/examples/$ex.simcuda" -- "$REL_B/examples/$ex"
done
check_prog "rel_prog basic (exit 7)" "" -- "$REL_PROG" basic 200 7

# The server: start it (socket s.sock in its working directory), drive it
# with the client (run from a separate directory: its files are not the
# server's), stop it with --quit. The client prints latencies, so only its
# request/error counts and exit status are compared.
if [ -x "$REL_B/examples/server" ] && [ -x "$REL_B/examples/server_client" ]; then
  srv_run() { # dir load
    local d=$1 load=$2 pid i c
    c=$(rel_dir client)
    rel_run "$d" "$load" SIMCUDA_CONFIG="$REL_S/examples/server/server.simcuda" -- "$REL_B/examples/server" s.sock &
    pid=$!
    for i in $(seq 100); do [ -S "$d/s.sock" ] && break; sleep 0.1; done
    "$REL_B/examples/server_client" "$d/s.sock" -n 40 >"$c/out" 2>&1; echo $? >"$d.client_rc"
    sed -E 's/mean .*//' "$c/out" >"$d.client_out"
    "$REL_B/examples/server_client" "$d/s.sock" -n 0 --quit >/dev/null 2>&1
    wait "$pid"
    rm -f "$d/s.sock"
  }
  a=$(rel_dir srvbare); srv_run "$a" bare
  [ "$(cat "$a.client_rc")" = 0 ] || rel_fail "server: the client failed without the profiler"
  for load in pre inject; do
    b=$(rel_dir "srv$load"); srv_run "$b" "$load"
    rel_same "$a" "$b" "server ($load)"
    cmp -s "$a.client_out" "$b.client_out"
    rel_check $? "server ($load): the client's counts differ: $(cat "$b.client_out")"
    [ "$(cat "$b.client_rc")" = 0 ]
    rel_check $? "server ($load): the client failed"
    [ "$(rel_ntraces "$b")" = 1 ]
    rel_check $? "server ($load): expected one trace, found $(rel_ntraces "$b")"
  done
else
  rel_fail "examples/server is not built"
fi
rel_done
