#!/usr/bin/env bash
# test_cli_attach.sh — `gpuphase attach` against the example inference server
# (examples/server) started WITHOUT gpuphase, on simcuda. Specification:
#  * while clients keep sending requests, attach --iters 20 exits 0 and its
#    trace holds every request kernel exactly 20 times, CUPTI timing (kernel
#    and memcpy records), and the report joins 100 % of the operations;
#  * attach/detach four times in a row: each time the server is left with
#    the threads, descriptors and signal dispositions it had; the clients
#    see 0 errors over the whole run and the server still answers after;
#  * the stop of the target thread is reported and is short: printed with
#    the attach's own work in it (CPU time of the stopped thread and of the
#    command; the rest is waiting for a CPU on a loaded machine), which must
#    stay under 50 ms (the aim is a few ms), the whole stop under 1 s;
#  * after the detach attach prints the report of the trace on stdout with
#    the report options given (--format json --top 2; none: the text report;
#    record's spelling --report='--format csv'; --no-report: nothing), and
#    -o keeps the trace; a report option gpuphase report does not have is a
#    usage error (exit 2) before the process is touched;
#  * refusals, one line each, exit 1, target untouched: a second attach
#    while one runs, a process without CUDA, a static-cudart process, a
#    process whose CUPTI another tool holds, no permission (as nobody), no
#    such process, a process another tracer holds ("already traced", not
#    "no permission"), a process started under gpuphase record (its LD_PRELOAD
#    found past 64 KiB of environment); another variable merely naming
#    libgpuphase.so.old is no refusal, nor another user's socket bound to the
#    session's abstract name; a target killed during the capture:
#    reported, exit 1.
set -u
. "$(dirname "$0")/cli_common.sh"
require "$G" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/server" \
	"$B/examples/server_client" "$B/bin/gpuphase-dump" "$B/bin/gpuphase-report" "$B/tests/cli_app_static"
export SIMCUDA_CONFIG=$S/examples/server/server.simcuda
chmod 755 "$tmp"

start_server() { # $1 socket, $2 stderr file, then env(1) arguments (VAR=VALUE: added last to its environment); prints the pid
	: >"$2"
	env "${@:3}" "$B/examples/server" "$1" >/dev/null 2>"$2" &
	await_pid "$2" server
}
# What attach must leave as it was: threads, signal dispositions and mask,
# descriptors (with fds=1: only while no client is connected). Signals 32
# and 33 are glibc's own (SIGCANCEL, SIGSETXID): its first pthread_create in
# a single-threaded process installs their handlers, for good.
state() { # $1 pid [fds]
	echo "threads $(ls "/proc/$1/task" | wc -l)"
	[ -n "${2:-}" ] && echo "fds $(ls "/proc/$1/fd" | wc -l)"
	grep -E '^Sig(Blk|Ign|Cgt)' "/proc/$1/status" |
		python3 -c 'import sys
for l in sys.stdin:
    k, v = l.split(":"); print(k, hex(int(v, 16) & ~(3 << 31)))'
}

# The server's GOT entries of the runtime functions: all into libgpuphase.so
# (want=patched) or none (want=restored).
got() { # $1 pid, $2 want
	readelf -rW "$B/examples/server" | awk '$3 ~ /JUMP_SLOT|GLOB_DAT/ && $5 ~ /^_*cuda/ { print $1 }' |
		python3 -c '
import sys
pid, want = sys.argv[1], sys.argv[2]
maps = [l.split() for l in open("/proc/%s/maps" % pid)]
exe = next(m for m in maps if len(m) > 5 and m[5].endswith("/examples/server"))
base = int(exe[0].split("-")[0], 16) - int(exe[2], 16)
lib = [tuple(int(x, 16) for x in m[0].split("-")) for m in maps if len(m) > 5 and m[5].endswith("libgpuphase.so")]
mem = open("/proc/%s/mem" % pid, "rb")
ours = 0
offs = [int(l, 16) for l in sys.stdin if l.strip()]
for off in offs:
    mem.seek(base + off)
    v = int.from_bytes(mem.read(8), "little")
    ours += any(lo <= v < hi for lo, hi in lib)
if want == "restored" and ours:
    sys.exit("%d GOT entries still point into libgpuphase.so" % ours)
if want == "patched" and ours == 0:
    sys.exit("no GOT entry points into libgpuphase.so of %d" % len(offs))
' "$1" "$2"
}

sock=$tmp/srv.sock
pid=$(start_server "$sock" "$tmp/srv.err")
[ -n "$pid" ] || { fail "server did not start: $(cat "$tmp/srv.err")"; finish; exit 1; }
"$B/examples/server_client" "$sock" -n 10 >/dev/null 2>&1 || fail "warm-up client failed"
state "$pid" fds >"$tmp/state0fd"
state "$pid" >"$tmp/state0"

# Clients that keep sending until told to stop.
(while [ ! -e "$tmp/stop_clients" ]; do
	"$B/examples/server_client" "$sock" -n 100 || echo "CLIENT FAILED"
done) >"$tmp/clients.out" 2>&1 &
clients=$!

# the report options of each round (see the top)
ropts1="--format json --top 2"
ropts2=""
ropts3="--report=--format csv"
ropts4="--no-report"
for k in 1 2 3 4; do
	eval "ropts=\$ropts$k"
	# shellcheck disable=SC2086 # word splitting wanted, except round 3's one word
	if [ "$k" = 3 ]; then set -- "$ropts"; else set -- $ropts; fi
	timeout 120 "$G" attach "$pid" --iters 20 -o "$tmp/a$k.gpht" "$@" >"$tmp/a$k.out" 2>"$tmp/a$k.err"; rc=$?
	[ "$rc" = 0 ] || { fail "attach $k exit $rc: $(cat "$tmp/a$k.err")"; continue; }
	stop=$(sed -n 's/.* stopped for \([0-9.]*\) ms (\([0-9.]*\) ms of work.*/\1 \2/p' "$tmp/a$k.err")
	set -- ${stop:-9999 9999}
	echo "attach $k: target thread stopped for $1 ms ($2 ms of work)"
	awk -v m="$1" -v w="$2" 'BEGIN { exit !(w < 50 && m < 1000) }' || fail "attach $k: stop of $1 ms ($2 ms of work)"
	grep -q "detached; trace $tmp/a$k.gpht" "$tmp/a$k.err" || fail "attach $k: no detach line: $(cat "$tmp/a$k.err")"
	grep -q "runtime entries patched" "$tmp/a$k.err" || fail "attach $k: nothing patched: $(cat "$tmp/a$k.err")"
	case $k in
	1) python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["trace"] and 1 <= len(d["operators"]) <= 2, len(d["operators"])' "$tmp/a1.out" ||
		fail "attach 1: no JSON report of at most 2 operators on stdout: $(head -c 300 "$tmp/a1.out")" ;;
	2) grep -q "^gpuphase report: $tmp/a2.gpht" "$tmp/a2.out" && grep -q "^srv_matmul " "$tmp/a2.out" ||
		fail "attach 2: no text report on stdout: $(head -5 "$tmp/a2.out")" ;;
	3) head -1 "$tmp/a3.out" | grep -q "," && grep -q "srv_matmul" "$tmp/a3.out" ||
		fail "attach 3: no CSV report on stdout: $(head -3 "$tmp/a3.out")" ;;
	4) [ -s "$tmp/a4.out" ] && fail "attach 4: --no-report printed: $(head -3 "$tmp/a4.out")" ;;
	esac
	state "$pid" >"$tmp/state$k"
	got "$pid" restored || fail "attach $k: GOT not restored"
	cmp -s "$tmp/state0" "$tmp/state$k" ||
		fail "attach $k: the server was not left as it was: $(diff "$tmp/state0" "$tmp/state$k" | tr '\n' ' ')"
	"$B/bin/gpuphase-dump" "$tmp/a$k.gpht" >"$tmp/d$k" 2>&1 || { fail "attach $k: dump failed"; continue; }
	for kn in srv_embed srv_matmul srv_relu srv_reduce; do
		ids=$(grep "^string .*text=\"[^\"]*$kn" "$tmp/d$k" | sed 's/^string id=\([0-9]*\) .*/\1/')
		n=0
		for id in $ids; do n=$((n + $(grep -Ec "^kernel .* name=$id( |\$)" "$tmp/d$k"))); done
		[ "$n" = 20 ] || fail "attach $k: $kn ran $n times in the trace, want 20"
	done
	grep -q '^memcpy ' "$tmp/d$k" || fail "attach $k: no CUPTI memcpy records"
	"$B/bin/gpuphase-report" --format json "$tmp/a$k.gpht" >"$tmp/r$k.json" 2>"$tmp/r$k.err" ||
		{ fail "attach $k: report failed: $(head -3 "$tmp/r$k.err")"; continue; }
	python3 - "$tmp/r$k.json" <<'PY' || fail "attach $k: report summary"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
if s.get("join_coverage") != 1.0:
    sys.exit("join_coverage %s, want 1.0" % s.get("join_coverage"))
PY
done

touch "$tmp/stop_clients"
wait "$clients"
grep -q "CLIENT FAILED" "$tmp/clients.out" && fail "a client failed while attached: $(grep -v ' 0 errors' "$tmp/clients.out" | head -3)"
nreq=$(grep -c ' 0 errors' "$tmp/clients.out")
[ "$nreq" -gt 0 ] || fail "no client run finished: $(head -3 "$tmp/clients.out")"
grep -v ' 0 errors' "$tmp/clients.out" | grep -q . && fail "client errors: $(grep -v ' 0 errors' "$tmp/clients.out" | head -3)"
echo "clients: $nreq runs of 100 requests, all with 0 errors"
"$B/examples/server_client" "$sock" -n 20 >"$tmp/after" 2>&1 || fail "server does not answer after the detaches"
state "$pid" fds >"$tmp/state9fd"
cmp -s "$tmp/state0fd" "$tmp/state9fd" ||
	fail "after the detaches: $(diff "$tmp/state0fd" "$tmp/state9fd" | tr '\n' ' ')"

# A time window: 0.3 s while a client sends.
"$B/examples/server_client" "$sock" -n 3000 >"$tmp/cd" 2>&1 &
cl=$!
timeout 120 "$G" attach "$pid" --duration 300ms -o "$tmp/dur.gpht" >/dev/null 2>"$tmp/dur.err" || fail "attach --duration: $(cat "$tmp/dur.err")"
wait "$cl" || fail "client during --duration: $(cat "$tmp/cd")"
"$B/bin/gpuphase-dump" "$tmp/dur.gpht" 2>/dev/null | grep -q '^kernel ' || fail "attach --duration: no kernels in the trace"
got "$pid" restored || fail "after --duration: GOT not restored"

# A report option gpuphase report does not have: usage, exit 2, untouched.
state "$pid" fds >"$tmp/s_bad0"
"$G" attach "$pid" --iters 5 -o "$tmp/bad.gpht" --formatt json >/dev/null 2>"$tmp/bad.err"; rc=$?
[ "$rc" = 2 ] || fail "unknown report option: exit $rc, want 2: $(cat "$tmp/bad.err")"
grep -q "unknown option '--formatt'" "$tmp/bad.err" || fail "unknown report option: $(cat "$tmp/bad.err")"
[ -e "$tmp/bad.gpht" ] && fail "unknown report option: a trace was written"
state "$pid" fds >"$tmp/s_bad1"
cmp -s "$tmp/s_bad0" "$tmp/s_bad1" || fail "unknown report option: the server changed"

# ---- refusals --------------------------------------------------------------
refuse() { # $1 what, $2 expected text, then the command
	local what=$1 want=$2
	shift 2
	"$@" >/dev/null 2>"$tmp/e"; local rc=$?
	[ "$rc" = 1 ] || fail "$what: exit $rc, want 1 ($(cat "$tmp/e"))"
	[ "$(wc -l <"$tmp/e")" = 1 ] || fail "$what: not one line: $(cat "$tmp/e")"
	grep -q "$want" "$tmp/e" || fail "$what: message was: $(cat "$tmp/e")"
	echo "$what: $(cat "$tmp/e")"
}

# A second attach while one runs (no load: the first waits for iterations).
"$G" attach "$pid" --iters 100000 -o "$tmp/long.gpht" >/dev/null 2>"$tmp/long.err" &
first=$!
for _ in $(seq 1 200); do grep -q capturing "$tmp/long.err" && break; sleep 0.05; done
got "$pid" patched || fail "while attached: GOT not patched"
refuse "second attach" "already attached by another gpuphase attach" "$G" attach "$pid" --iters 5 -o "$tmp/x.gpht"
kill -INT "$first"
wait "$first"; rc=$?
[ "$rc" = 0 ] || fail "interrupted attach exit $rc: $(cat "$tmp/long.err")"
grep -q "stopped early" "$tmp/long.err" || fail "interrupted attach: $(cat "$tmp/long.err")"
state "$pid" fds >"$tmp/state5"
cmp -s "$tmp/state0fd" "$tmp/state5" || fail "after the interrupted attach: $(diff "$tmp/state0" "$tmp/state5" | tr '\n' ' ')"

# A tracer already holds the server's threads (a racing attach, a
# debugger): "already traced", naming it, not "no permission". The holder
# seizes every thread without stopping any; its exit lets them go.
python3 - "$pid" "$tmp/held" "$tmp/held.go" <<'PY' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
for tid in os.listdir("/proc/%s/task" % sys.argv[1]):
    if libc.ptrace(0x4206, int(tid), None, None):  # PTRACE_SEIZE
        sys.exit("seize %s: errno %d" % (tid, ctypes.get_errno()))
open(sys.argv[2], "w").write(str(os.getpid()))
for _ in range(600):
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.05)
PY
holder=$!
for _ in $(seq 1 200); do [ -s "$tmp/held" ] && break; sleep 0.05; done
refuse "already traced" "process $pid is already traced (thread [0-9]* by process $holder, python3)" \
	"$G" attach "$pid" --iters 5 -o "$tmp/x.gpht"
touch "$tmp/held.go"
wait "$holder" || fail "the tracer holding the server failed"
"$B/examples/server_client" "$sock" -n 5 >/dev/null 2>&1 || fail "server does not answer after the tracer let go"

# Anyone may bind an abstract socket name: nobody squatting the session's
# name "@gpuphase-attach.PID" must not block root's attach (the name counts
# only when the target holds it).
nobody_py=""
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	for c in "$(command -v python3)" /usr/bin/python3; do # a python nobody may run (not root's pyenv shim)
		setpriv --reuid nobody --regid nogroup --clear-groups "$c" -c pass 2>/dev/null && { nobody_py=$c; break; }
	done
	[ -n "$nobody_py" ] || echo "squatted session name: case not run (no python3 that nobody may run)"
fi
if [ -n "$nobody_py" ]; then
	mkdir -m 777 "$tmp/sq" # where nobody may write
	setpriv --reuid nobody --regid nogroup --clear-groups "$nobody_py" - "$pid" "$tmp/sq/bound" "$tmp/sq/go" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0gpuphase-attach.%s" % sys.argv[1])
open(sys.argv[2], "w").write("bound")
for _ in range(600):
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.05)
PY
	squat=$!
	for _ in $(seq 1 200); do [ -s "$tmp/sq/bound" ] && break; sleep 0.05; done
	[ -s "$tmp/sq/bound" ] || fail "squatter: nobody could not bind the session's name"
	timeout 60 "$G" attach "$pid" --duration 100ms -o "$tmp/squat.gpht" --no-report >/dev/null 2>"$tmp/squat.err" ||
		fail "attach while nobody holds the session's socket name: $(cat "$tmp/squat.err")"
	touch "$tmp/sq/go"
	wait "$squat" || fail "the squatter failed"
	got "$pid" restored || fail "after the squatted attach: GOT not restored"
fi

# No permission: nobody may not trace root's server.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	refuse "no permission" "no permission to trace process $pid" \
		setpriv --reuid nobody --regid nogroup --clear-groups "$G" attach "$pid" --iters 5 -o /tmp/never.gpht
fi

# A process without CUDA.
sleep 30 &
plain=$!
refuse "no CUDA" "process $plain does not use CUDA" "$G" attach "$plain" --iters 5 -o "$tmp/x.gpht"
kill "$plain"; wait "$plain" 2>/dev/null
refuse "no process" "no process $plain" "$G" attach "$plain" --iters 5 -o "$tmp/x.gpht"

# A static-cudart process, held stopped at its exec by a tracer (it would
# exit at once here: no driver for a static cudart on simcuda).
python3 - "$B/tests/cli_app_static" "$tmp/static.pid" "$tmp/static.go" <<'PY' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
    libc.ptrace(0, 0, None, None)  # PTRACE_TRACEME: stop at exec
    os.execv(sys.argv[1], [sys.argv[1]])
os.waitpid(pid, 0)
open(sys.argv[2], "w").write(str(pid))
for _ in range(600):
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.05)
os.kill(pid, 9)
os.waitpid(pid, 0)
PY
holder=$!
for _ in $(seq 1 200); do [ -s "$tmp/static.pid" ] && break; sleep 0.05; done
spid=$(cat "$tmp/static.pid" 2>/dev/null)
refuse "static cudart" "CUDA runtime linked statically" "$G" attach "${spid:-0}" --iters 5 -o "$tmp/x.gpht"
touch "$tmp/static.go"
wait "$holder"

# Another tool holds CUPTI (simcuda: a foreign subscriber): refused by the
# library before it patches anything; the server is left as it was.
sock2=$tmp/srv2.sock
pid2=$(SIMCUDA_FOREIGN_SUBSCRIBER=1 start_server "$sock2" "$tmp/srv2.err")
if [ -n "$pid2" ]; then
	"$B/examples/server_client" "$sock2" -n 5 >/dev/null 2>&1 || fail "server 2 warm-up failed"
	state "$pid2" fds >"$tmp/s2a"
	refuse "CUPTI held" "another tool holds CUPTI" "$G" attach "$pid2" --iters 5 -o "$tmp/x.gpht"
	state "$pid2" fds >"$tmp/s2b"
	cmp -s "$tmp/s2a" "$tmp/s2b" || fail "CUPTI held: server changed: $(diff "$tmp/s2a" "$tmp/s2b" | tr '\n' ' ')"
	"$B/examples/server_client" "$sock2" -n 5 >/dev/null 2>&1 || fail "server 2 does not answer after the refusal"
	[ -e "$tmp/x.gpht" ] && fail "CUPTI held: a trace was written"
else
	fail "server 2 did not start: $(cat "$tmp/srv2.err")"
fi
kill "$pid2" 2>/dev/null

# "Already runs under gpuphase" is the library named as a whole element of
# LD_PRELOAD or CUDA_INJECTION64_PATH, read from the whole environment:
# another variable merely holding the name is no sign (a second attach, the
# library mapped by the first, goes ahead), and a LD_PRELOAD past 64 KiB of
# environment is still found.
pid4=$(start_server "$tmp/srv4.sock" "$tmp/srv4.err" GP_NOTE=/opt/libgpuphase.so.old)
for k in 1 2; do
	timeout 60 "$G" attach "$pid4" --duration 100ms -o "$tmp/n$k.gpht" --no-report >/dev/null 2>"$tmp/n$k.err" ||
		fail "attach $k to a server with libgpuphase.so.old in its environment: $(cat "$tmp/n$k.err")"
done
kill "$pid4" 2>/dev/null
big=$(head -c 70000 /dev/zero | tr '\0' x)
pid5=$(start_server "$tmp/srv5.sock" "$tmp/srv5.err" -u LD_PRELOAD GP_BIG="$big" GPUPHASE_OUTPUT="$tmp/rec5.gpht" \
	LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$B/lib/libgpuphase.so")
grep -qz '^GP_BIG=' "/proc/$pid5/environ" && [ "$(tr '\0' '\n' <"/proc/$pid5/environ" | grep -n '^LD_PRELOAD=' |
	cut -d: -f1)" -gt "$(tr '\0' '\n' <"/proc/$pid5/environ" | grep -n '^GP_BIG=' | cut -d: -f1)" ] ||
	fail "server 5: LD_PRELOAD is not after the 70 KiB variable in its environment"

if [ -n "$pid5" ]; then
	refuse "started under gpuphase" "process $pid5 already runs under gpuphase" \
		"$G" attach "$pid5" --iters 5 -o "$tmp/x.gpht"
	kill "$pid5" 2>/dev/null
else
	fail "server 5 did not start: $(cat "$tmp/srv5.err")"
fi

# The target dies during the capture: reported, exit 1.
pid3=$(start_server "$tmp/srv3.sock" "$tmp/srv3.err")
"$G" attach "$pid3" --iters 100000 -o "$tmp/y.gpht" >/dev/null 2>"$tmp/die.err" &
att=$!
for _ in $(seq 1 200); do grep -q capturing "$tmp/die.err" && break; sleep 0.05; done
kill -9 "$pid3"
wait "$att"; rc=$?
[ "$rc" = 1 ] || fail "target killed during attach: exit $rc: $(cat "$tmp/die.err")"
grep -q "exited during the capture" "$tmp/die.err" || fail "target killed: message was: $(cat "$tmp/die.err")"

"$B/examples/server_client" "$sock" -n 0 --quit >/dev/null 2>&1
wait
finish
