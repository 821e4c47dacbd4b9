#!/usr/bin/env bash
# test_agent_listen.sh — `gpuphase agent --listen` (docs/always-on.md "The
# agent's address"): the address forms it serves on and the values it
# refuses. No capture is needed: an empty control directory's /metrics is
# the agent's own counters (gpuphase_agent_reduce_errors_total), which every
# scrape (Python's urllib) must return with status 200.
#   bad     each malformed value (bare IPv6, a name in brackets, no port, no address, port 0,
#           65536 or not a number, a bracket not closed) exits 2 before
#           anything else, with one line on stderr naming the value; the
#           control directory is not made; a name that does not resolve
#           exits 1 with one line naming it. Control: a good value run
#           through the same check is not refused.
#   ipv4    127.0.0.1:PORT serves /metrics
#   ipv6    [::1]:PORT serves /metrics over IPv6 loopback, and nothing
#           answers on 127.0.0.1:PORT (so the scrape did go over IPv6)
#   dual    [::]:PORT serves on [::1] and on 127.0.0.1 (dual stack)
#   name    localhost:PORT serves on 127.0.0.1 (a name's IPv4 address first)
#   busy    a port already bound: exit 1, "cannot listen on" naming it
# ipv6 and dual exit 77 (SKIP) where the machine has no IPv6 loopback; name
# where localhost has no IPv4 address. Tamper control of the scrape check:
# the same check against a port nobody serves must fail.
# Every wait is bounded. Environment (make test): GP_BUILD, GP_SRC.
set -u
B=${GP_BUILD:?GP_BUILD not set}
AGENT=$B/bin/gpuphase-agent
[ -x "$AGENT" ] || { echo "FAIL: $AGENT is missing (not built?)"; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3 is missing"; exit 77; }

tmp=$(mktemp -d /tmp/gp_agent_listen.XXXXXX)
agent=""
stop_agent() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	agent=""
}
trap 'stop_agent; rm -rf "$tmp"' EXIT
fails=0 skips=0
part() { # NAME STATUS DETAIL
	echo "PART $1: $2 ${3:-}"
	[ "$2" = FAIL ] && fails=$((fails + 1))
	[ "$2" = SKIP ] && skips=$((skips + 1))
}

# free_port FAMILY: a port free on that family's loopback (6: on :: too)
free_port() {
	python3 - "$1" <<'PY'
import socket, sys
if sys.argv[1] == "6":
    s = socket.socket(socket.AF_INET6)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::", 0))
else:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
PY
}
have_ipv6=1
python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null || have_ipv6=0

# scrape URL: /metrics answers 200 with the agent's own counter (Python's
# urllib: http://[::1]:PORT as any client writes it)
scrape() {
	python3 - "$1/metrics" "$tmp/body" <<'PY' || return 1
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=3) as r:
        sys.exit(r.status != 200 or open(sys.argv[2], "wb").write(r.read()) < 0)
except OSError:  # refused, reset, timed out, an HTTP error status
    sys.exit(1)
PY
	grep -q '^gpuphase_agent_reduce_errors_total 0$' "$tmp/body"
}
# serve VALUE URL: start the agent on VALUE and wait (<= 10 s) until URL scrapes
serve() {
	mkdir -p "$tmp/ctl"
	"$AGENT" --listen "$1" --control-dir "$tmp/ctl" --interval 0.2 >"$tmp/agent.out" 2>&1 &
	agent=$!
	for _ in $(seq 1 50); do
		scrape "$2" && return 0
		kill -0 "$agent" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

# --- bad: malformed values, each one line naming the value
# refused VALUE RC [SECONDS]: the agent exits RC within SECONDS (default 3),
# one stderr line naming VALUE, no control directory made
refused() {
	local ctl=$tmp/bad.ctl rc
	rm -rf "$ctl"
	timeout "${3:-3}" "$AGENT" --listen "$1" --control-dir "$ctl" >"$tmp/bad.out" 2>"$tmp/bad.err"
	rc=$?
	[ "$rc" = "$2" ] || { echo "--listen '$1' exited $rc, not $2: $(cat "$tmp/bad.err")"; return 1; }
	[ "$(wc -l <"$tmp/bad.err")" = 1 ] || { echo "--listen '$1': not one line: $(cat "$tmp/bad.err")"; return 1; }
	grep -qF -- "--listen $1: " "$tmp/bad.err" || { echo "--listen '$1': the line does not name it: $(cat "$tmp/bad.err")"; return 1; }
	[ "$2" != 2 ] || [ ! -e "$ctl" ] || { echo "--listen '$1': the control directory was made before the value was checked"; return 1; }
	[ ! -s "$tmp/bad.out" ] || { echo "--listen '$1': wrote to stdout"; return 1; }
}
bad=""
for v in '::1:9466' '[::1]9466' '[::1' '127.0.0.1' ':9466' '[]:9466' '127.0.0.1:0' '127.0.0.1:65536' \
	'127.0.0.1:http' '[::1]:' '127.0.0.1:+80' '[localhost]:9466'; do
	why=$(refused "$v" 2) || bad="$bad$why; "
done
# a name that does not resolve: the resolver may wait for an unreachable
# name server (a sandboxed CI), so one try of 1 s each (glibc's RES_OPTIONS)
# and a bound that covers its search list
why=$(RES_OPTIONS="timeout:1 attempts:1" refused 'no-such-host.invalid:9466' 1 30) || bad="$bad$why; "
# control: the check does not refuse a good value (it serves, so it times out)
port=$(free_port 4)
if refused "127.0.0.1:$port" 2 >/dev/null; then
	part bad FAIL "control: the refusal check passed a good value (127.0.0.1:$port)"
elif [ -n "$bad" ]; then
	part bad FAIL "$bad"
else
	part bad PASS "13 values refused, each on one line naming it; control: a good value is not"
fi

# --- ipv4
port=$(free_port 4)
if serve "127.0.0.1:$port" "http://127.0.0.1:$port"; then
	if scrape "http://127.0.0.1:$(free_port 4)"; then
		part ipv4 FAIL "control: the scrape check passed on a port nobody serves"
	else
		part ipv4 PASS "scraped on 127.0.0.1:$port; control: a port nobody serves fails the check"
	fi
else
	part ipv4 FAIL "127.0.0.1:$port not scraped: $(cat "$tmp/agent.out")"
fi
stop_agent

# --- ipv6 and dual
if [ "$have_ipv6" = 0 ]; then
	part ipv6 SKIP "no IPv6 loopback here (cannot bind ::1)"
	part dual SKIP "no IPv6 loopback here (cannot bind ::1)"
else
	port=$(free_port 6)
	if ! serve "[::1]:$port" "http://[::1]:$port"; then
		part ipv6 FAIL "[::1]:$port not scraped: $(cat "$tmp/agent.out")"
	elif scrape "http://127.0.0.1:$port"; then
		part ipv6 FAIL "[::1]:$port also answers on 127.0.0.1: not an IPv6-only bind"
	elif ! grep -qF "serving http://[::1]:$port/metrics" "$tmp/agent.out"; then
		part ipv6 FAIL "the agent does not say it serves [::1]:$port: $(cat "$tmp/agent.out")"
	else
		part ipv6 PASS "scraped on [::1]:$port, not on 127.0.0.1:$port"
	fi
	stop_agent
	port=$(free_port 6)
	if ! serve "[::]:$port" "http://[::1]:$port"; then
		part dual FAIL "[::]:$port not scraped on [::1]: $(cat "$tmp/agent.out")"
	elif ! scrape "http://127.0.0.1:$port"; then
		part dual FAIL "[::]:$port not scraped on 127.0.0.1 (not dual stack)"
	else
		part dual PASS "[::]:$port scraped on [::1] and on 127.0.0.1"
	fi
	stop_agent
fi

# --- name
if ! python3 -c 'import socket; socket.getaddrinfo("localhost", 1, socket.AF_INET)' 2>/dev/null; then
	part name SKIP "localhost has no IPv4 address here"
else
	port=$(free_port 4)
	if serve "localhost:$port" "http://127.0.0.1:$port" &&
		grep -qF "serving http://127.0.0.1:$port/metrics" "$tmp/agent.out"; then
		part name PASS "localhost:$port served on 127.0.0.1"
	else
		part name FAIL "localhost:$port not served on 127.0.0.1: $(cat "$tmp/agent.out")"
	fi
	stop_agent
fi

# --- busy: the port of a running agent
port=$(free_port 4)
if ! serve "127.0.0.1:$port" "http://127.0.0.1:$port"; then
	part busy FAIL "the first agent on 127.0.0.1:$port does not serve: $(cat "$tmp/agent.out")"
else
	timeout 10 "$AGENT" --listen "127.0.0.1:$port" --control-dir "$tmp/ctl2" >/dev/null 2>"$tmp/busy.err"
	rc=$?
	if [ "$rc" = 1 ] && grep -qF "gpuphase agent: cannot listen on 127.0.0.1:$port" "$tmp/busy.err"; then
		part busy PASS "a second agent on 127.0.0.1:$port exits 1 naming it"
	else
		part busy FAIL "a second agent on 127.0.0.1:$port exited $rc: $(cat "$tmp/busy.err")"
	fi
fi
stop_agent

[ "$fails" = 0 ] || exit 1
[ "$skips" = 0 ] || exit 77
exit 0
