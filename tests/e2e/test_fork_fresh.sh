#!/usr/bin/env bash
# test_fork_fresh.sh — a child forked before its parent started capture is
# profiled like a fresh process (docs/configuration.md, the output
# paragraph; docs/always-on.md, "Limits of the duty cycle"), on simcuda.
# tests/e2e/fork_fresh.cu forks two children before any CUDA call; child 0
# launches and synchronizes K0 kernels, child 1 K1, the parent waits.
#   plain        one trace per child named by its own %p, none for the
#                parent; each with CUPTI's kernel records (K0 and K1 of
#                them, execute times: not hook-only, no FORKED_CHILD
#                status) and its report equal to simcuda's truth for that
#                child (report_truth_check.py; SIMCUDA_TRUTH with %p)
#   duty         GPUPHASE_WINDOW=every=300ms,duration=100ms: each child
#                answers `gpuphase trigger PID --status` on its own control
#                socket with its own pid and its own windows directory; after
#                exit each directory holds windows w1.. that report alone and
#                agree with that child's truth (duty_cycle_check.py); the
#                sockets are removed at exit; nothing of the parent's
#   delay        the parent sleeps 1 s before it forks; with
#                GPUPHASE_WINDOW=delay=500ms,duration=10s each child's window
#                opens 0.49..1.4 s after the child's fork (its delay counts
#                from its fork, as from an exec'ed process's load; counted
#                from the parent's load it would open at its start)
#   collide      GPUPHASE_OUTPUT without %p: one child writes the trace, the
#                other says one line ("cannot write trace ... exists") and
#                runs unprofiled: both finish their work, the program exits 0
#   started      the parent launches before it forks (its capture has
#                started): the children stay inert, the parent's trace holds
#                its own one kernel; with GPUPHASE_FOLLOW_FORK=1 each child
#                writes a hook-only trace (FORKED_CHILD status, no kernel
#                records)
# Tamper controls: each child's report checked against the other child's
# truth must fail (the per-child comparison can tell them apart); run with
# the library of a build whose fork children all go inert, "plain", "duty"
# and "collide" fail (no child trace, no child socket, no line) and
# "started" passes.
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME; KEEP=1
# keeps the files.
set -u
tmp_name=gp_fork_fresh # B S R CHECK fail tmp preload asan_opts:
# shellcheck source=tests/e2e/report_common.sh
. "${GP_SRC:?GP_SRC not set}/tests/e2e/report_common.sh"
# shellcheck source=tests/e2e/counting.sh
. "$S/tests/e2e/counting.sh"
D=$B/bin/gpuphase-dump
G=$B/bin/gpuphase
P=$B/tests/e2e/fork_fresh
for f in "$R" "$D" "$G" "$P" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
prog="" # a program still running at exit is stopped
trap '[ -n "$prog" ] && kill "$prog" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
K0=20
K1=35

# launch NAME [ENV...] -- ARGS...: fork_fresh under the library in the
# background, stdout/stderr into NAME.out/.err; sets prog (its pid, which
# is the parent's: env execs)
launch() {
	local name=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" LD_LIBRARY_PATH="$B/simcuda" \
		SIMCUDA_CONFIG="$S/tests/e2e/fork_fresh.simcuda" SIMCUDA_TRUTH="$tmp/$name-%p.truth" \
		GPUPHASE_OUTPUT="$tmp/$name-%p.gpht" GPUPHASE_CONTROL_DIR="$tmp/ctl-$name" "${envs[@]}" \
		"$P" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	prog=$!
}

# finish NAME: waits for the program; sets parent, c0, c1 from its line
finish() {
	local name=$1 rc
	wait "$prog"
	rc=$?
	prog=""
	read -r parent c0 c1 <<<"$(sed -n 's/^fork_fresh: parent \([0-9]*\) children \([0-9]*\) \([0-9]*\)$/\1 \2 \3/p' \
		"$tmp/$name.out")"
	if [ "$rc" != 0 ] || [ -z "$c1" ]; then
		fail "$name: program failed ($rc): $(tail -3 "$tmp/$name.err")"
		return 1
	fi
}

# kernels TRACE: CUPTI kernel records in TRACE
kernels() { "$D" "$1" | awk '$1 == "kernel"' | wc -l; }

# --- plain: one full capture per child -----------------------------------------
gp_part_begin plain
launch plain -- $K0 $K1
if finish plain; then
	traces=$(cd "$tmp" && ls plain-*.gpht 2>/dev/null | tr '\n' ' ')
	[ "$traces" = "plain-$c0.gpht plain-$c1.gpht " ] || [ "$traces" = "plain-$c1.gpht plain-$c0.gpht " ] ||
		fail "plain: traces '$traces', expected one per child (plain-$c0.gpht plain-$c1.gpht), none for the parent $parent"
	for i in 0 1; do
		c=$c0 k=$K0
		[ $i = 1 ] && c=$c1 k=$K1
		tr=$tmp/plain-$c.gpht
		[ -e "$tr" ] || continue
		"$D" "$tr" >"$tr.dump" 2>&1 || { fail "plain: child $i: $tr does not read"; continue; }
		grep -q "^# pid=$c\$" "$tr.dump" || fail "plain: child $i: header pid is not $c"
		grep -q '^# cupti=off$' "$tr.dump" && fail "plain: child $i: CUPTI off (hook-only)"
		grep -q '^status kind=5 ' "$tr.dump" && fail "plain: child $i: marked a hook-only fork child"
		grep -q '^# end complete=1' "$tr.dump" || fail "plain: child $i: no footer (not finished at exit)"
		n=$(awk '$1 == "kernel"' "$tr.dump" | wc -l)
		[ "$n" = "$k" ] || fail "plain: child $i: $n CUPTI kernel records, expected $k"
		"$R" --format json "$tr" >"$tmp/plain-$c.json" 2>"$tmp/plain-$c.rerr" ||
			{ fail "plain: child $i: report failed: $(head -2 "$tmp/plain-$c.rerr")"; continue; }
		python3 - "$tmp/plain-$c.json" "$k" <<'PY' || fail "plain: child $i: report's ff_kernel is not $k launches with execute times"
import json, sys
ops = [o for o in json.load(open(sys.argv[1]))["operators"] if o["name"] == "ff_kernel"]
k = int(sys.argv[2])
print("ff_kernel:", [(o["count"], o["execute_ns"]) for o in ops])
sys.exit(0 if len(ops) == 1 and ops[0]["count"] == k and ops[0]["execute_ns"] >= k * 20000 else 1)
PY
		$CHECK "$tmp/plain-$c.truth" "$tmp/plain-$c.json" \
			>"$tmp/plain-$c.check" 2>&1 ||
			fail "plain: child $i: report disagrees with its truth: $(grep -m3 MISMATCH "$tmp/plain-$c.check")"
		echo "plain: child $i (pid $c): $n kernel records, report equals its truth"
	done
	[ -e "$tmp/plain-$parent.truth" ] && fail "plain: the parent $parent started CUDA"
	# tamper: each child's report against the other child's truth
	if [ -e "$tmp/plain-$c0.json" ] && [ -e "$tmp/plain-$c1.json" ]; then
		for pair in "$c0 $c1" "$c1 $c0"; do
			read -r a b <<<"$pair"
			if $CHECK "$tmp/plain-$a.truth" "$tmp/plain-$b.json" \
				>/dev/null 2>&1; then
				fail "tamper: the report of $b passed against the truth of $a"
			else
				echo "tamper: the report of $b against the truth of $a refused"
			fi
		done
	fi
fi
gp_part_end

# --- duty: each child duty-cycles on its own, with its own control socket --------
# ask PID: the socket's whole `status` reply (its second line names the
# windows) into duty-PID.status
ask() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"status\n")
sys.stdout.write(s.makefile().read())' "$tmp/ctl-duty/$1.sock" >"$tmp/duty-$1.status" 2>&1
}
gp_part_begin duty
launch duty GPUPHASE_WINDOW=every=300ms,duration=100ms -- 5 5 "$tmp/duty.release" 1500
# the children's sockets, and a closed window in each (the children run on
# until released; at most 30 s)
kids=""
for _ in $(seq 1 300); do
	kids=$(cd "$tmp/ctl-duty" 2>/dev/null && ls ./*.sock 2>/dev/null | sed 's|^\./||; s|\.sock$||' | sort -n | tr '\n' ' ')
	closed=0
	for k in $kids; do
		ask "$k" && grep -q ' last=[1-9][0-9]*$' "$tmp/duty-$k.status" && closed=$((closed + 1))
	done
	[ "$closed" = 2 ] && break
	kill -0 "$prog" 2>/dev/null || break
	sleep 0.1
done
# the command a person uses finds each child too (it checks that PID itself
# serves the socket)
for k in $kids; do
	"$G" trigger "$k" --status --control-dir "$tmp/ctl-duty" >"$tmp/duty-$k.cli" 2>&1 ||
		fail "duty: gpuphase trigger $k --status: $(cat "$tmp/duty-$k.cli")"
done
touch "$tmp/duty.release"
if finish duty; then
	[ "$kids" = "$(printf '%s\n' "$c0" "$c1" | sort -n | tr '\n' ' ')" ] ||
		fail "duty: control sockets of '$kids', expected the children's ($c0 $c1), none of the parent's ($parent)"
	for c in $c0 $c1; do
		st=$tmp/duty-$c.status
		dir=$tmp/duty-$c.windows
		[ -e "$st" ] || { fail "duty: child $c was never asked (no socket)"; continue; }
		grep -q "^ok .* pid=$c marker=sync window=fixed\$" "$st" ||
			fail "duty: child $c: status does not answer for itself: $(head -2 "$st")"
		last=$(sed -n "s|^windows dir=$dir last=\([0-9]*\)\$|\1|p" "$st")
		[ -n "$last" ] && [ "$last" -ge 1 ] ||
			fail "duty: child $c: no 'windows dir=$dir last=SEQ' naming its own closed window: $(cat "$st")"
		grep -q " pid=$c marker=sync window=fixed\$" "$tmp/duty-$c.cli" ||
			fail "duty: child $c: gpuphase trigger --status does not answer for it: $(cat "$tmp/duty-$c.cli")"
		echo "duty: child $c: $(tr '\n' '|' <"$st") gpuphase trigger: $(cat "$tmp/duty-$c.cli")"
		[ -e "$tmp/ctl-duty/$c.sock" ] && fail "duty: child $c: its socket is left after exit"
		files=$(ls "$dir"/w*.gpht 2>/dev/null)
		n=$(echo "$files" | grep -c .)
		[ "$n" -ge 3 ] || { fail "duty: child $c: $n window files in $dir, expected at least 3"; continue; }
		i=1
		for f in $files; do
			want=$(printf '%s/w%08d.gpht' "$dir" "$i")
			[ "$f" = "$want" ] || fail "duty: child $c: $f where $want was expected (SEQ from 1, no gap)"
			i=$((i + 1))
			"$R" --format json "$f" >"$f.json" 2>"$f.err" || fail "duty: child $c: $f does not report: $(head -2 "$f.err")"
		done
		# shellcheck disable=SC2046 # one argument per report
		python3 "$S/tests/e2e/duty_cycle_check.py" "$tmp/duty-$c.truth" $(ls "$dir"/w*.gpht.json) \
			>"$tmp/duty-$c.check" 2>&1 ||
			fail "duty: child $c: windows against its truth: $(grep FAIL "$tmp/duty-$c.check" | head -3)"
		echo "duty: child $c: $n windows, $(tail -1 "$tmp/duty-$c.check")"
	done
	left=$(cd "$tmp" && ls -d duty-"$parent".* 2>/dev/null)
	[ -z "$left" ] || fail "duty: files of the parent $parent: $left"
fi
gp_part_end

# --- delay: a child's clock origin is its fork -----------------------------------
gp_part_begin delay
touch "$tmp/delay.release"
launch delay FF_PARENT_SLEEP_MS=1000 GPUPHASE_WINDOW=delay=500ms,duration=10s -- 5 5 "$tmp/delay.release" 1500
if finish delay; then
	for c in $c0 $c1; do
		tr=$tmp/delay-$c.gpht
		[ -e "$tr" ] || { fail "delay: child $c: no trace"; continue; }
		forked=$(sed -n "s/^fork_fresh: child $c forked at \([0-9]*\)\$/\1/p" "$tmp/delay.out")
		ms=$("$D" "$tr" | awk -v t0="$forked" '$1 == "window" && $2 == "kind=1" && !on { on = substr($4, 4) }
			END { if (on && t0) printf "%d", (on - t0) / 1e6 }')
		[ -n "$ms" ] && [ "$ms" -ge 490 ] && [ "$ms" -le 1400 ] ||
			fail "delay: child $c: its window opened '${ms}' ms after its fork, expected 490..1400"
		echo "delay: child $c: window opened $ms ms after its fork"
	done
fi
gp_part_end

# --- collide: an output pattern without %p -------------------------------------
gp_part_begin collide
launch collide GPUPHASE_OUTPUT="$tmp/same.gpht" -- $K0 $K1
if finish collide; then
	grep -q "^fork_fresh: child $c0 launched $K0\$" "$tmp/collide.out" &&
		grep -q "^fork_fresh: child $c1 launched $K1\$" "$tmp/collide.out" ||
		fail "collide: the children's work changed: $(cat "$tmp/collide.out")"
	lines=$(grep -c '^gpuphase:' "$tmp/collide.err")
	[ "$lines" = 1 ] && grep -q "^gpuphase: cannot write trace $tmp/same.gpht: File exists; " "$tmp/collide.err" ||
		fail "collide: expected one 'cannot write trace ... File exists' line, got $lines: $(head -3 "$tmp/collide.err")"
	owner=$("$D" "$tmp/same.gpht" 2>/dev/null | sed -n 's/^# pid=//p')
	[ "$owner" = "$c0" ] || [ "$owner" = "$c1" ] || fail "collide: $tmp/same.gpht is not a child's trace (pid '$owner')"
	echo "collide: child $owner wrote the trace; the other said: $(grep '^gpuphase:' "$tmp/collide.err")"
fi
gp_part_end

# --- started: a parent that used CUDA before the fork keeps the old rule -------------
gp_part_begin started
launch started -- --parent-first $K0 $K1
if finish started; then
	traces=$(cd "$tmp" && ls started-*.gpht 2>/dev/null | tr '\n' ' ')
	[ "$traces" = "started-$parent.gpht " ] || fail "started: traces '$traces', expected the parent's only"
	[ -e "$tmp/started-$parent.gpht" ] && n=$(kernels "$tmp/started-$parent.gpht") &&
		{ [ "$n" = 1 ] || fail "started: the parent's trace holds $n kernels, expected its own 1"; }
fi
launch follow GPUPHASE_FOLLOW_FORK=1 -- --parent-first $K0 $K1
if finish follow; then
	for c in $c0 $c1; do
		tr=$tmp/follow-$c.gpht
		[ -e "$tr" ] || { fail "follow: child $c: no hook-only trace"; continue; }
		"$D" "$tr" >"$tr.dump" 2>&1
		grep -q '^status kind=5 ' "$tr.dump" || fail "follow: child $c: no FORKED_CHILD status"
		n=$(awk '$1 == "kernel"' "$tr.dump" | wc -l)
		[ "$n" = 0 ] || fail "follow: child $c: $n CUPTI kernel records in a hook-only trace"
	done
	echo "started: children inert; with GPUPHASE_FOLLOW_FORK=1 hook-only"
fi
gp_part_end

[ "$fails" = 0 ] && exit 0
echo "$fails failure(s)"
exit 1
