#!/usr/bin/env bash
# test_agent_prometheus.sh — `gpuphase agent` (docs/always-on.md) under a real
# Prometheus server (Debian's `prometheus`, started here on 127.0.0.1, scrape
# interval 1 s) and its promtool, on simcuda.
#
# Window files: when this tree's libgpuphase has no duty cycle
# (GPUPHASE_WINDOW=every=...), each window is a short trace recorded here
# (sync_bound for process A, launch_bound for process B) and put into a
# windows directory as w<SEQ>.gpht, and a stand-in process
# (agent_fake_capture.py) serves the control socket's duty-cycle `status`
# ("windows dir=DIR last=SEQ") for it; the test says so on its first line.
#   promtool   `promtool check metrics` accepts the agent's /metrics
#   query      Prometheus's query API returns, per (pid, operator), ops equal
#              to and launch/queue/execute/sync seconds within 1 % of the sum
#              of gpuphase-report's JSON over the same window files; reduced
#              window files are deleted
#   restart    the agent stopped, a window added, the agent started again:
#              the totals equal the reports of all windows (none counted twice)
#   two        processes A and B at once: each pid's series are its own
#              windows' reports (nothing mixed)
#   forget     a process that ends shows gpuphase_process_up 0, and its series
#              are dropped after --forget
#   top        --top 1: the operator with the most time keeps its series, the
#              others are operator="other" of their category, with their sums
#   server     when this tree's libgpuphase duty-cycles: the example server
#              under GPUPHASE_WINDOW=every=3s,duration=300ms answering a
#              client for >= 60 s (batches of requests, each without error),
#              Prometheus scraping the agent all along; its real windows
#              (kept) against the query API as above, none missed. Under a
#              sanitizer (GP_SAN) the short version: every=300ms, 3000 requests.
#              (SKIP where the library has none yet)
#   sites      the same windows' sync call sites: gpuphase_sync_seconds_total
#              and _waits_total per (pid, site) equal to the reports' (top
#              20 named, the rest site="other"), and every site named by a
#              function, none a bare address (each window's file names its
#              own stacks, the agent names them as the report does)
#   restart-server  the same server restarted (new pid, same control
#              directory) while the agent runs: the old pid's series kept
#              (process_up 0) when the new one starts, forgotten after
#              --forget; the new pid's totals are its own windows' reports
#              (control: with the old pid's windows added they must differ)
# Tamper control: the state file forged to say no window of A was reduced
# (last SEQ 0, totals kept) and A's windows put back: the agent adds them
# again and the comparisons (operators, call sites) must fail.
# Every wait is a bounded loop; only 127.0.0.1. Environment (make test):
# GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME; KEEP=1 keeps the files.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
AGENT=$B/bin/gpuphase-agent
REPORT=$B/bin/gpuphase-report
CHECK="python3 $S/tests/e2e/agent_check.py"
for f in "$AGENT" "$REPORT" "$B/bin/gpuphase" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" \
	"$B/examples/sync_bound" "$B/examples/launch_bound"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
	bash "$S/scripts/deps.sh" prometheus >/dev/null 2>&1
	if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
		echo "SKIP: Debian's prometheus (prometheus, promtool) is not installed: scripts/deps.sh prometheus"
		exit 77
	fi
fi
command -v python3 >/dev/null || { echo "SKIP: python3 is missing"; exit 77; }

tmp=$(mktemp -d /tmp/gp_agent.XXXXXX)
chmod 700 "$tmp"
pids=()
agent=""
cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ -n "${KEEP:-}" ]; then echo "files kept in $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
fails=0
part() { # NAME STATUS DETAIL
	echo "PART $1: $2 ${3:-}"
	[ "$2" = FAIL ] && fails=$((fails + 1))
}

duty=0
if grep -q "windows dir=" "$B/lib/libgpuphase.so"; then
	duty=1
	echo "note: this libgpuphase duty-cycles: the part 'server' runs the example server under it"
else
	echo "note: libgpuphase here has no duty cycle: windows are traces recorded here, the control socket a stand-in"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# record NAME PROGRAM: one short trace on simcuda, $tmp/NAME.gpht (under
# ASan the runtime first, as for every uninstrumented program; gpuphase
# record appends its library after it)
record() {
	local pre=
	[ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ] && pre=$GP_SAN_RUNTIME
	LD_PRELOAD=$pre ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
	LD_LIBRARY_PATH=$B/simcuda SIMCUDA_CONFIG=$S/examples/$2.simcuda \
		"$B/bin/gpuphase" record -o "$tmp/$1.gpht" -- "$B/examples/$2" >"$tmp/$1.out" 2>&1 ||
		{ echo "FAIL: recording $1 ($2) failed:"; cat "$tmp/$1.out"; exit 1; }
}
# window DIR SEQ TRACE: a closed window appears (copied, then renamed, as the library does)
window() {
	cp "$3" "$1/w$(printf %08d "$2").gpht.part" && mv "$1/w$(printf %08d "$2").gpht.part" "$1/w$(printf %08d "$2").gpht"
}
# until TRIES CMD...: run CMD every 0.5 s until it succeeds, TRIES times at most
until_ok() {
	local n=$1
	shift
	for _ in $(seq 1 "$n"); do "$@" && return 0; sleep 0.5; done
	return 1
}
metric() { curl -s --max-time 5 "http://127.0.0.1:$aport/metrics" | grep -F "$1" | awk '{print $NF}' | head -1; }
start_agent() {
	"$AGENT" --listen "127.0.0.1:$aport" --control-dir "$ctl" --interval 0.5 --forget 4 "$@" \
		>>"$tmp/agent.out" 2>&1 &
	agent=$!
	until_ok 40 curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$aport/metrics" ||
		{ echo "FAIL: the agent does not serve /metrics:"; cat "$tmp/agent.out"; exit 1; }
}

for i in 1 2 3 4; do record a$i sync_bound; done
for i in 1 2; do record b$i launch_bound; done
ctl=$tmp/ctl
mkdir -m 700 "$ctl" "$tmp/wa" "$tmp/wb"
echo 0 >"$tmp/lasta"
echo 0 >"$tmp/lastb"
python3 "$S/tests/e2e/agent_fake_capture.py" "$ctl" "$tmp/wa" "$tmp/lasta" 120 &
pa=$!
pids+=("$pa")
python3 "$S/tests/e2e/agent_fake_capture.py" "$ctl" "$tmp/wb" "$tmp/lastb" 120 &
pb=$!
pids+=("$pb")
until_ok 20 test -S "$ctl/$pa.sock" -a -S "$ctl/$pb.sock" || { echo "FAIL: stand-in sockets never appeared"; exit 1; }

aport=$(free_port)
pport=$(free_port)
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gpuphase
    static_configs:
      - targets: ['127.0.0.1:$aport']
EOF
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
	--web.listen-address="127.0.0.1:$pport" --log.level=warn >"$tmp/prometheus.out" 2>&1 &
pids+=("$!")
purl=http://127.0.0.1:$pport
until_ok 60 curl -sf --max-time 2 -o /dev/null "$purl/-/ready" ||
	{ echo "FAIL: prometheus did not start:"; tail -5 "$tmp/prometheus.out"; exit 1; }

# three windows of A, two of B, the agent deleting what it reduced
for i in 1 2 3; do window "$tmp/wa" $i "$tmp/a$i.gpht"; done
echo 3 >"$tmp/lasta"
for i in 1 2; do window "$tmp/wb" $i "$tmp/b$i.gpht"; done
echo 2 >"$tmp/lastb"
start_agent
# prom_reduced PID N: Prometheus has scraped N reduced windows of PID
prom_reduced() { [ "$($CHECK value "$purl" "gpuphase_windows_reduced_total{pid=\"$1\"}")" = "$2" ]; }
until_ok 60 prom_reduced "$pa" 3 && until_ok 60 prom_reduced "$pb" 2 ||
	{ echo "FAIL: Prometheus never saw the windows reduced"; cat "$tmp/agent.out"; exit 1; }

curl -s --max-time 5 "http://127.0.0.1:$aport/metrics" >"$tmp/metrics.txt"
if promtool check metrics <"$tmp/metrics.txt" >"$tmp/promtool.out" 2>&1; then
	part promtool PASS "$(grep -vc '^#' "$tmp/metrics.txt") samples"
else
	part promtool FAIL "$(head -3 "$tmp/promtool.out" | tr '\n' ' ')"
fi

$CHECK expect "$REPORT" "$pa:$tmp/a1.gpht" "$pa:$tmp/a2.gpht" "$pa:$tmp/a3.gpht" \
	"$pb:$tmp/b1.gpht" "$pb:$tmp/b2.gpht" >"$tmp/expect1.json"
$CHECK prom "$purl" >"$tmp/got1.json"
left=$(ls "$tmp/wa" "$tmp/wb" | grep -c 'gpht$')
if ! $CHECK compare "$tmp/expect1.json" "$tmp/got1.json" >"$tmp/cmp1.out"; then
	part query FAIL "$(head -3 "$tmp/cmp1.out" | tr '\n' ' ')"
elif [ "$left" != 0 ]; then
	part query FAIL "$left reduced window files left (the agent deletes them)"
else
	part query PASS "$(python3 -c "import json; print(len(json.load(open('$tmp/expect1.json'))))") (pid, operator) series"
fi
# two processes: A's operators are sync_bound's, B's launch_bound's; the
# comparison above is per pid, so any mixing shows there; check it names both
if grep -q "\"$pa|step_kernel\"" "$tmp/got1.json" && grep -q "\"$pb|" "$tmp/got1.json" &&
	! grep -q "\"$pb|step_kernel\"" "$tmp/got1.json"; then
	part two PASS "pids $pa and $pb, each with its own operators"
else
	part two FAIL "series of $pa and $pb not separate: $(head -c 300 "$tmp/got1.json")"
fi

# restart: stop the agent, one more window of A, start it again
kill "$agent"
wait "$agent" 2>/dev/null
agent=""
window "$tmp/wa" 4 "$tmp/a4.gpht"
echo 4 >"$tmp/lasta"
start_agent
until_ok 60 prom_reduced "$pa" 4 || { echo "FAIL: the restarted agent's windows never reached Prometheus"; exit 1; }
sleep 2 # two more scrapes: a window counted twice would show by now
$CHECK expect "$REPORT" "$pa:$tmp/a1.gpht" "$pa:$tmp/a2.gpht" "$pa:$tmp/a3.gpht" "$pa:$tmp/a4.gpht" \
	"$pb:$tmp/b1.gpht" "$pb:$tmp/b2.gpht" >"$tmp/expect2.json"
$CHECK prom "$purl" >"$tmp/got2.json"
if $CHECK compare "$tmp/expect2.json" "$tmp/got2.json" >"$tmp/cmp2.out"; then
	part restart PASS "4 windows of $pa after a restart, each counted once"
else
	part restart FAIL "$(head -3 "$tmp/cmp2.out" | tr '\n' ' ')"
fi

# forget: B ends; up 0 at once, its series gone after --forget 4
kill "$pb"
wait "$pb" 2>/dev/null
b_down() { [ "$(metric "gpuphase_process_up{pid=\"$pb\"}")" = 0 ]; }
b_gone() { ! curl -s --max-time 5 "http://127.0.0.1:$aport/metrics" | grep -q "pid=\"$pb\""; }
if ! until_ok 20 b_down; then
	part forget FAIL "gpuphase_process_up of $pb never became 0"
elif ! until_ok 30 b_gone; then
	part forget FAIL "series of $pb still served well after --forget 4"
elif ! curl -s --max-time 5 "http://127.0.0.1:$aport/metrics" | grep -q "pid=\"$pa\""; then
	part forget FAIL "series of the live $pa were dropped too"
else
	part forget PASS "$pb down, then dropped; $pa kept"
fi

# top: a second control directory, one window of A, --top 1 --once
mkdir -m 700 "$tmp/ctl2" "$tmp/wt"
window "$tmp/wt" 1 "$tmp/a1.gpht"
echo 1 >"$tmp/lastt"
python3 "$S/tests/e2e/agent_fake_capture.py" "$tmp/ctl2" "$tmp/wt" "$tmp/lastt" 60 &
pt=$!
pids+=("$pt")
until_ok 20 test -S "$tmp/ctl2/$pt.sock" || { echo "FAIL: stand-in socket never appeared"; exit 1; }
"$AGENT" --once --top 1 --control-dir "$tmp/ctl2" >"$tmp/top.txt" 2>>"$tmp/agent.out"
$CHECK expect "$REPORT" "$pt:$tmp/a1.gpht" >"$tmp/top_expect.json"
if python3 - "$tmp/top.txt" "$tmp/top_expect.json" "$S/tests/e2e" "$pt" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[3])
from agent_check import parse_metrics, compare
got, exp, pid = parse_metrics(open(sys.argv[1]).read()), json.load(open(sys.argv[2])), sys.argv[4]
top = max(exp, key=lambda k: sum(exp[k][p] for p in ("launch", "queue", "execute", "sync")))
folded = {top: exp[top]}
for k, v in exp.items():
    if k != top:
        o = folded.setdefault(pid + "|other", {"ops": 0, "launch": 0, "queue": 0, "execute": 0, "sync": 0})
        for f in o:
            o[f] += v[f]
sys.exit(compare(folded, got) if len(exp) > 1 else 1)
EOF
then
	part top PASS "one named operator, the rest as other"
else
	part top FAIL "--top 1 did not fold the other operators into other"
fi
$CHECK sites-expect "$REPORT" "$pt:$tmp/a1.gpht" >"$tmp/top_sexp.json"
$CHECK sites-prom "$tmp/top.txt" >"$tmp/top_sites.json"
nsites=$(python3 -c "import json; print(len(json.load(open('$tmp/top_sexp.json'))))")
if [ "$nsites" -lt 2 ]; then
	part top-sites FAIL "sync_bound's window has $nsites sync call sites: nothing to fold"
elif $CHECK sites-compare "$tmp/top_sexp.json" "$tmp/top_sites.json" 1 >"$tmp/top_scmp.out" &&
	grep -q "$pt|other" "$tmp/top_sites.json"; then
	part top-sites PASS "--top 1: one named sync call site of $nsites, the rest as site=\"other\""
else
	part top-sites FAIL "$(head -3 "$tmp/top_scmp.out" | tr '\n' ' ')"
fi

# tamper control: A's windows back and the state forged to "none reduced"
kill "$agent"
wait "$agent" 2>/dev/null
agent=""
for i in 1 2 3 4; do window "$tmp/wa" $i "$tmp/a$i.gpht"; done
awk -F'\t' -v OFS='\t' -v p="$pa" '$1 == "P" && $2 == p { $4 = 0 } { print }' "$ctl/agent.state" >"$tmp/forged"
mv "$tmp/forged" "$ctl/agent.state"
"$AGENT" --once --control-dir "$ctl" >"$tmp/tampered.txt" 2>>"$tmp/agent.out"
python3 - "$tmp/tampered.txt" "$tmp/got3.json" "$S/tests/e2e" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[3])
from agent_check import parse_metrics
json.dump(parse_metrics(open(sys.argv[1]).read()), open(sys.argv[2], "w"))
EOF
python3 -c "
import json; e = json.load(open('$tmp/expect2.json'))
json.dump({k: v for k, v in e.items() if k.startswith('$pa|')}, open('$tmp/expect3.json', 'w'))"
if $CHECK compare "$tmp/expect3.json" "$tmp/got3.json" >"$tmp/cmp3.out"; then
	part tamper FAIL "windows added twice (forged state) still compared equal: the check cannot fail"
else
	part tamper PASS "forged state: $(head -1 "$tmp/cmp3.out")"
fi
$CHECK sites-expect "$REPORT" "$pa:$tmp/a1.gpht" "$pa:$tmp/a2.gpht" "$pa:$tmp/a3.gpht" "$pa:$tmp/a4.gpht" \
	>"$tmp/sexp3.json"
$CHECK sites-prom "$tmp/tampered.txt" "$pa" >"$tmp/sites3.json"
if $CHECK sites-compare "$tmp/sexp3.json" "$tmp/sites3.json" 20 >"$tmp/scmp3.out"; then
	part tamper-sites FAIL "call sites added twice (forged state) still compared equal: the check cannot fail"
else
	part tamper-sites PASS "forged state: $(head -1 "$tmp/scmp3.out")"
fi

# server: the example server under the library's own duty cycle, when this
# tree's libgpuphase has one: its real windows and control socket, scraped
if [ "$duty" = 1 ]; then
	ctl3=$tmp/ctl3
	mkdir -m 700 "$ctl3"
	"$AGENT" --listen "127.0.0.1:$aport" --control-dir "$ctl3" --interval 0.5 --keep-windows --forget 15 \
		>>"$tmp/agent.out" 2>&1 &
	agent=$!
	until_ok 40 curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$aport/metrics" ||
		{ echo "FAIL: the agent does not serve /metrics:"; cat "$tmp/agent.out"; exit 1; }
	preload=$B/lib/libgpuphase.so
	asan_opts=${ASAN_OPTIONS:-}
	if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
		preload="$GP_SAN_RUNTIME:$preload"
		asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}"
	fi
	# the plain build serves for >= 60 s (every=3s: ~20 windows); under a
	# sanitizer, whose slowdown would stretch that past any budget, a short
	# run (every=300ms, one batch of 3000 requests, ~1-2 s)
	if [ -z "${GP_SAN:-}" ]; then
		long_s=60 window=every=3s,duration=300ms min_windows=15
	else
		long_s=0 window=every=300ms,duration=100ms min_windows=3
	fi
	# serve N: start the example server (output srv-<pid>.gpht) in $ctl3; sp, spdir, srvproc
	serve() {
		: >"$tmp/srv$1.err"
		env ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" LD_LIBRARY_PATH="$B/simcuda" \
			SIMCUDA_CONFIG="$S/examples/server/server.simcuda" GPUPHASE_OUTPUT="$tmp/srv-%p.gpht" \
			GPUPHASE_WINDOW="$window" GPUPHASE_CONTROL_DIR="$ctl3" \
			"$B/examples/server" "$tmp/srv$1.sock" >"$tmp/srv$1.out" 2>"$tmp/srv$1.err" &
		srvproc=$!
		pids+=("$srvproc")
		srv_err=$tmp/srv$1.err
		srv_pid() { sp=$(sed -n 's/^server: pid \([0-9]*\) listening.*/\1/p' "$srv_err"); [ -n "$sp" ]; }
		until_ok 60 srv_pid || { echo "FAIL: the server did not start: $(tail -2 "$srv_err")"; exit 1; }
		spdir=$tmp/srv-$sp.windows
	}
	# client N SECONDS: batches of requests until SECONDS have passed (one
	# batch at least, 400 at most), each answered without error; then quit
	client() {
		local t0=$SECONDS batches=0 served=0
		while :; do
			timeout 120 "$B/examples/server_client" "$tmp/srv$1.sock" -n 3000 >"$tmp/client$1.out" 2>&1 ||
				{ part server FAIL "a client batch failed after $served requests: $(tail -2 "$tmp/client$1.out")"; break; }
			batches=$((batches + 1)) served=$((served + 3000))
			[ $((SECONDS - t0)) -ge "$2" ] || [ "$batches" -ge 400 ] && break
		done
		timeout 30 "$B/examples/server_client" "$tmp/srv$1.sock" -n 0 --quit >/dev/null 2>&1
		wait "$srvproc"
		served_s=$((SECONDS - t0))
		echo "$served requests in $served_s s" >"$tmp/client$1.sum"
	}
	up_is() { [ "$(metric "gpuphase_process_up{pid=\"$1\"}")" = "$2" ]; }
	agent_has() { curl -s --max-time 5 "http://127.0.0.1:$aport/metrics" | grep -q "pid=\"$1\""; }

	serve 1
	sp1=$sp dir1=$spdir
	client 1 "$long_s"
	nw1=$(ls "$dir1" | grep -c 'gpht$')
	if [ "$nw1" -lt "$min_windows" ]; then
		part server FAIL "$nw1 window files from $served_s s at $window"
	elif ! until_ok 60 prom_reduced "$sp1" "$nw1" || ! until_ok 20 up_is "$sp1" 0; then
		part server FAIL "Prometheus never saw $nw1 windows of $sp1 reduced, or the agent never saw it end"
	else
		# Prometheus's values now (the series go after --forget), the reports after
		$CHECK prom "$purl" "$sp1" >"$tmp/got4.json"
		$CHECK sites-prom "$purl" "$sp1" >"$tmp/sites4.json"
		scrapes=$($CHECK value "$purl" "count_over_time(gpuphase_process_up{pid=\"$sp1\"}[10m])")
		missed=$($CHECK value "$purl" "gpuphase_windows_missed_total{pid=\"$sp1\"}")
		# the same server restarted: a new pid in the same control directory
		serve 2
		sp2=$sp dir2=$spdir
		if [ "$sp2" = "$sp1" ] || ! up_is "$sp1" 0 || ! agent_has "$sp1"; then
			part restart-server FAIL "the old process $sp1 not kept (up 0) when $sp2 started"
			sp2=""
		fi
		client 2 0
		# shellcheck disable=SC2046 # one argument per window
		$CHECK expect "$REPORT" $(for f in "$dir1"/w*.gpht; do echo "$sp1:$f"; done) >"$tmp/expect4.json"
		# shellcheck disable=SC2046
		$CHECK sites-expect "$REPORT" $(for f in "$dir1"/w*.gpht; do echo "$sp1:$f"; done) >"$tmp/sexp4.json"
		if ! $CHECK compare "$tmp/expect4.json" "$tmp/got4.json" >"$tmp/cmp4.out"; then
			part server FAIL "$(head -3 "$tmp/cmp4.out" | tr '\n' ' ')"
		elif [ "$missed" != 0 ] || [ "${scrapes:-0}" -lt $((long_s / 2)) ]; then
			part server FAIL "windows missed: $missed; scrapes of $sp1 seen by Prometheus: ${scrapes:-none}"
		else
			part server PASS "$nw1 real windows of the example server ($(cat "$tmp/client1.sum"), $window, $scrapes scrapes), totals equal to their reports"
		fi
		bare=$(python3 -c "import json, re; print(' '.join(k for k in json.load(open('$tmp/sites4.json')) if re.fullmatch(r'\d+\|0x[0-9a-f]+( \(.*\+0x[0-9a-f]+\))?', k)))")
		if [ -n "$bare" ]; then
			part sites FAIL "call sites named by an address, not a function: $bare"
		elif $CHECK sites-compare "$tmp/sexp4.json" "$tmp/sites4.json" 20 >"$tmp/scmp4.out"; then
			part sites PASS "$(python3 -c "import json; print(len(json.load(open('$tmp/sites4.json'))))") sync call sites of $sp1 equal to the reports' (top 20, the rest other)"
		else
			part sites FAIL "$(head -3 "$tmp/scmp4.out" | tr '\n' ' ')"
		fi
		if [ -n "$sp2" ]; then
			nw2=$(ls "$dir2" | grep -c 'gpht$')
			if [ "$nw2" -lt 1 ] || ! until_ok 60 prom_reduced "$sp2" "$nw2"; then
				part restart-server FAIL "$nw2 windows of the restarted $sp2 never all reduced"
			elif ! until_ok 40 eval '! agent_has "$sp1"'; then
				part restart-server FAIL "the old process $sp1 not forgotten after --forget 15"
			else
				# shellcheck disable=SC2046
				$CHECK expect "$REPORT" $(for f in "$dir2"/w*.gpht; do echo "$sp2:$f"; done) >"$tmp/expect5.json"
				$CHECK prom "$purl" "$sp2" >"$tmp/got5.json"
				# control: the old process's windows counted under the new pid must not compare equal
				# shellcheck disable=SC2046
				$CHECK expect "$REPORT" $(for f in "$dir1"/w*.gpht "$dir2"/w*.gpht; do echo "$sp2:$f"; done) \
					>"$tmp/expect5_mixed.json"
				if $CHECK compare "$tmp/expect5_mixed.json" "$tmp/got5.json" >/dev/null; then
					part restart-server FAIL "the check cannot fail: $sp2 compared equal to $sp1's windows added to its own"
				elif $CHECK compare "$tmp/expect5.json" "$tmp/got5.json" >"$tmp/cmp5.out"; then
					part restart-server PASS "$sp1 kept (up 0) then forgotten; $sp2 from zero: its $nw2 windows only (with $sp1's added the comparison fails)"
				else
					part restart-server FAIL "$(head -3 "$tmp/cmp5.out" | tr '\n' ' ')"
				fi
			fi
		fi
	fi
	kill "$agent"
	wait "$agent" 2>/dev/null
	agent=""
else
	part server SKIP "this tree's libgpuphase has no duty cycle (GPUPHASE_WINDOW=every=...) yet"
fi

[ "$fails" = 0 ] && exit 0
exit 1
