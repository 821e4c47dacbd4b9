#!/usr/bin/env bash
# test_cli_grammar.sh — `gpuphase record` and libgpuphase read one grammar
# for the GPUPHASE_* values (the command links the library's config.c).
# For each option value in the list below — tricky ones, several of which the
# two used to judge differently — it asks both:
#  * the library: the value in its variable, the library preloaded into a
#    small CUDA program on simcuda; refused = the one diagnostic line
#    "gpuphase: GPUPHASE_X='v': accepted: ..." on stderr;
#  * the command: `gpuphase record OPTION VALUE -- the same program`; refused
#    = exit 2 and "gpuphase: record: OPTION 'v': accepted: ..." with the
#    library's accepted text; accepted = it ran the program, and then the
#    library inside must not have refused the value either;
# and fails on any disagreement, and on a verdict other than the one listed.
# Then every option gpuphase-report's help lists (one option table,
# report/options.c, is compiled into both programs): `gpuphase report` and
# `gpuphase attach` take it and its values, `record --report=` passes it on.
set -u
. "$(dirname "$0")/cli_common.sh"
APP=$B/tests/cli_app_shared
require "$G" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$APP"
LIB=$(realpath "$B/lib/libgpuphase.so")
long_dir=/tmp/$(printf 'd%.0s' $(seq 1 80))     # 85 bytes: over the 80-byte limit
long_window="iters=1,skip=$(printf '0%.0s' $(seq 1 300))1"   # fits the library's 512 bytes
n=0

# expect option variable value ("ok" or "bad")
case_() {
	local want=$1 opt=$2 var=$3 val=$4 lib_v cli_v acc
	n=$((n + 1))
	# the library alone
	local def_out=GPUPHASE_OUTPUT="$tmp/lib-%p.gpht"
	[ "$var" = GPUPHASE_OUTPUT ] && def_out=GP_UNUSED=1
	env "$def_out" "$var=$val" LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$LIB" \
		"$APP" 0 1 >/dev/null 2>"$tmp/lib.err"
	if grep -qF "gpuphase: $var='" "$tmp/lib.err"; then lib_v=bad; else lib_v=ok; fi
	# the command (which preloads the same library into the same program)
	local out=(-o "$tmp/cli-%p.gpht")
	[ "$opt" = --output ] && out=()
	"$G" record -q "${out[@]}" "$opt" "$val" -- "$APP" 0 1 >/dev/null 2>"$tmp/cli.err"
	local rc=$?
	if [ "$rc" = 2 ] && grep -qF -- "gpuphase: record: $opt '" "$tmp/cli.err"; then
		cli_v=bad
		acc=$(sed -n "s/^gpuphase: $var='.*': //p" "$tmp/lib.err" | head -1)
		[ -n "$acc" ] && ! grep -qF -- "$acc" "$tmp/cli.err" &&
			fail "$opt '$val': the command's message is not the library's ($acc): $(cat "$tmp/cli.err")"
	else
		cli_v=ok
		grep -qF "gpuphase: $var='" "$tmp/cli.err" &&
			fail "$opt '$val': the command accepted it, the library inside refused it: $(cat "$tmp/cli.err")"
		[ "$rc" = 0 ] || fail "$opt '$val': record exit $rc: $(cat "$tmp/cli.err")"
	fi
	[ "$lib_v" = "$cli_v" ] || fail "$opt '$val': library says $lib_v, command says $cli_v"
	[ "$lib_v" = "$want" ] || fail "$opt '$val': library says $lib_v, want $want"
	rm -f "$tmp"/lib-*.gpht "$tmp"/cli-*.gpht
}

W="--window GPUPHASE_WINDOW"
case_ bad  $W 'duration=.5s'            # command accepted it, library refused: "no trace written"
case_ ok   $W 'duration=0.5s'
case_ ok   $W 'duration=2.'
case_ bad  $W 'duration=1e3ms'          # library took the exponent, the command did not
case_ bad  $W 'duration=0x10'           # library took hex
case_ bad  $W 'duration=9inf'
case_ ok   $W 'duration=1min'
case_ ok   $W 'delay=0,duration=1ms'
case_ bad  $W 'duration=0'
case_ bad  $W 'skip=99999999999999999999,iters=1'   # command accepted, library: out of range
case_ ok   $W 'iters=1,'
case_ ok   $W "$long_window"            # command refused over 255 bytes, library took it
case_ bad  $W 'delay=1s,iters=3'
case_ bad  $W 'skip=2'
case_ bad  $W 'iters=0'
case_ ok   $W 'skip=0,iters=1,repeat=2'
case_ bad  $W 'skip=x'
case_ ok   $W trigger
case_ bad  $W ''
case_ ok   --ring-records GPUPHASE_RING_RECORDS 0000000000064   # command refused 12+ digits
case_ bad  --ring-records GPUPHASE_RING_RECORDS 96
case_ ok   --max-size GPUPHASE_MAX_BYTES 1M
case_ ok   --max-size GPUPHASE_MAX_BYTES 4k
case_ bad  --max-size GPUPHASE_MAX_BYTES 1m                    # command converted it, library refuses
case_ bad  --max-size GPUPHASE_MAX_BYTES 99999999999G          # command overflowed, library refuses
case_ bad  --max-size GPUPHASE_MAX_BYTES 12Q
case_ bad  --output GPUPHASE_OUTPUT "$tmp/t-%q.gpht"            # command accepted, library: bad escape
case_ ok   --output GPUPHASE_OUTPUT "$tmp/t-%p-%%.gpht"
case_ bad  --cupti-lib GPUPHASE_CUPTI_LIB ''                    # command accepted, library refuses
case_ bad  --marker GPUPHASE_ITER_MARKER 'kernel:'
case_ ok   --marker GPUPHASE_ITER_MARKER 'kernel:cli_*'
case_ bad  --stacks GPUPHASE_STACKS ALL
case_ ok   --stack-depth GPUPHASE_STACK_DEPTH 08
case_ bad  --flush-ms GPUPHASE_FLUSH_MS +5
case_ bad  --log GPUPHASE_LOG 'info:'
case_ ok   --log GPUPHASE_LOG "error:$tmp/log.txt"
case_ bad  --control-dir GPUPHASE_CONTROL_DIR "$long_dir"
case_ ok   --control-dir GPUPHASE_CONTROL_DIR "$tmp"
case_ bad  --counters GPUPHASE_COUNTERS 'top=0'
case_ bad  --counters GPUPHASE_COUNTERS 'samples=2'                  # options without a selection
case_ ok   --counters GPUPHASE_COUNTERS 'samples=2,kernel=cli_*;k<int, float>'
case_ ok   --counters GPUPHASE_COUNTERS 'top=3,warmup=5'

echo "test_cli_grammar: $n values compared"

# gpuphase-report's options as its help lists them: "  -o, --output FILE" lines,
# "[--top N]" in stability's usage, and "--export FORMAT OUT" (two values).
# Printed as "OPTION NVALUES", one a line.
R=$B/bin/gpuphase-report
require "$R"
report_options() {
	{ "$R" --help; "$R" --help=diff; "$R" --help=export; "$R" stability --help; } 2>&1 |
		grep -oE '^  (-[a-z], )?--[a-z-]+( [^ ])?|\[--[a-z-]+( [^]])?|--export FORMAT OUT' |
		sed -E 's/^  (-[a-z], )?//; s/^\[//' |
		awk '$1 == "--export" && NF == 3 { print "--export 2"; next } { print $1, (NF > 1 ? 1 : 0) }' |
		sort -u | awk '{ if ($1 == last) next; last = $1; print }'
}
mkdir -p "$tmp/none"
nopt=0
while read -r opt nval; do
	nopt=$((nopt + 1))
	vals=()
	for ((k = 0; k < nval; k++)); do vals+=(1); done
	# report: the values are the option's, not traces, so no trace is named
	if [ "$nval" -gt 0 ]; then
		(cd "$tmp/none" && "$G" report "$opt" "${vals[@]}") >/dev/null 2>"$tmp/rep.err"
		grep -qF 'no trace named and no *.gpht' "$tmp/rep.err" ||
			fail "gpuphase report $opt ${vals[*]}: a value taken for a trace: $(head -2 "$tmp/rep.err")"
	fi
	# attach: its own -o and --help aside, a report option is accepted before
	# it looks for the process (which does not exist: exit 1, not a usage error)
	case $opt in --output | --help) continue ;; esac
	"$G" attach 2147483646 "$opt" "${vals[@]}" >/dev/null 2>"$tmp/att.err"
	rc=$?
	{ [ "$rc" = 1 ] && grep -qF 'no process 2147483646' "$tmp/att.err"; } ||
		fail "gpuphase attach PID $opt ${vals[*]}: exit $rc: $(head -2 "$tmp/att.err")"
done < <(report_options)
[ "$nopt" -ge 20 ] || fail "only $nopt options read from gpuphase-report's help: $(report_options | tr '\n' ' ')"
grep -q '^--partial 0$' < <(report_options) || fail "--partial not in gpuphase-report's help"
# report --partial: -o's value is not a trace; record --report= passes --partial on
(cd "$tmp/none" && "$G" report --partial -o p.gpp) >/dev/null 2>"$tmp/rep.err"
grep -qF 'no trace named and no *.gpht' "$tmp/rep.err" || fail "report --partial -o p.gpp: $(head -2 "$tmp/rep.err")"
"$G" record -q -o "$tmp/part.gpht" --report="--partial -o $tmp/rec.gpp" -- "$APP" 0 1 >/dev/null 2>"$tmp/rec.err" ||
	fail "record --report='--partial -o F.gpp': $(head -3 "$tmp/rec.err")"
[ -s "$tmp/rec.gpp" ] || fail "record --report='--partial -o F.gpp' wrote no partial results: $(head -3 "$tmp/rec.err")"
"$G" report --partial -o "$tmp/rep.gpp" "$tmp/part.gpht" >/dev/null 2>"$tmp/rep.err" && [ -s "$tmp/rep.gpp" ] ||
	fail "report --partial -o F.gpp TRACE: $(head -3 "$tmp/rep.err")"
echo "test_cli_grammar: $nopt report options checked"
finish
