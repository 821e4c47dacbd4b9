#!/usr/bin/env bash
# test_report_partial.sh — partial results (docs/partial-format.md): the
# report merged from `gpuphase-report --partial` files is the report one
# process gives on the traces, byte for byte, in every format, with the same
# messages and exit status:
#   - every run of the report corpus (tests/corpus: its expected outputs),
#     each trace through its own partial, all traces in one partial, a
#     partial of partials, and partials mixed with traces;
#   - ranks of one job recorded on simcuda (RANK / WORLD_SIZE), with
#     --group-by callsite and a --whatif; two ranks as two hosts (clock
#     pairs an hour apart, NCCL collectives: "Across ranks" from partials);
# and what a reader of these files must refuse: damaged, cut, foreign or
# future files, options that contradict the partials', outputs over inputs
# or traces; an analysis missing from a partial is named, never silent.
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
C=$S/tests/corpus
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for f in "$R" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/sync_bound"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
tmp=$(mktemp -d /tmp/gp_partial.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
preload=$B/lib/libgpuphase.so
asan_opts=${ASAN_OPTIONS:-}
if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload"
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}"
fi
# expect RC DESCRIPTION CMD...: run, check the exit status, keep stdout/stderr
expect() {
	local want=$1 what=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ "$rc" = "$want" ] || fail "$what: exit $rc, expected $want (stderr: $(head -3 "$tmp/err"))"
	grep -q "AddressSanitizer\|runtime error" "$tmp/err" && fail "$what: sanitizer report: $(head -5 "$tmp/err")"
}
# the options of a run that shape the aggregates (and --allow-truncated)
shaping() {
	local out=() a
	set -- $1
	while [ $# -gt 0 ]; do
		a=$1
		shift
		case $a in
		--group-by | --outlier-factor | --whatif) out+=("$a" "$1"); shift ;;
		--allow-truncated) out+=("$a") ;;
		esac
	done
	echo "${out[@]}"
}
# same NAME FMT OPTS INPUTS: the report of INPUTS (partials) against the
# corpus's expected NAME.FMT and NAME.FMT.err (stderr and exit status)
same() {
	local name=$1 fmt=$2 opts=$3 rc=0
	shift 3
	# shellcheck disable=SC2086
	(cd "$C/traces" && "$R" $opts --format "$fmt" "$@" >"$tmp/got" 2>"$tmp/got.err") || rc=$?
	echo "exit $rc" >>"$tmp/got.err"
	cmp -s "$tmp/got" "$C/expected/$name.$fmt" || { fail "$name.$fmt ($*) differs"; diff "$C/expected/$name.$fmt" "$tmp/got" | head -6; }
	cmp -s "$tmp/got.err" "$C/expected/$name.$fmt.err" ||
		{ fail "$name.$fmt.err ($*) differs"; diff "$C/expected/$name.$fmt.err" "$tmp/got.err" | head -6; }
}

# --- the corpus: every run, from partials --------------------------------------
runs=0
while IFS='|' read -r name opts traces; do
	runs=$((runs + 1))
	p=$tmp/p/$name
	mkdir -p "$p"
	shp=$(shaping "$opts")
	gpps=() i=0
	for t in $traces; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		(cd "$C/traces" && "$R" --partial $shp -o "$p/$i.gpp" "$t" 2>"$p/$i.err") || fail "$name: --partial $t"
		gpps+=("$p/$i.gpp")
	done
	# shellcheck disable=SC2086
	(cd "$C/traces" && "$R" --partial $shp -o "$p/all.gpp" $traces 2>/dev/null) || fail "$name: --partial of all"
	for fmt in text markdown csv json; do
		same "$name" "$fmt" "$opts" "${gpps[@]}"
	done
	same "$name" text "$opts" "$p/all.gpp"
	same "$name" json "$opts" "$p/all.gpp"
	set -- $traces
	if [ $# -gt 1 ]; then # a partial of partials; a partial among traces
		# shellcheck disable=SC2086
		"$R" --partial $shp -o "$p/tree.gpp" "${gpps[@]}" 2>/dev/null || fail "$name: partial of partials"
		same "$name" json "$opts" "$p/tree.gpp"
		shift
		same "$name" text "$opts" "${gpps[0]}" "$@"
	fi
done < <(bash "$C/make-corpus.sh" runs)
[ "$runs" -gt 30 ] || fail "only $runs corpus runs"

# the same trace twice gives the same bytes (maps are written in key order)
(cd "$C/traces" && "$R" --partial -o "$tmp/d1.gpp" graphs.gpht 2>/dev/null && "$R" --partial -o "$tmp/d2.gpp" graphs.gpht 2>/dev/null)
cmp -s "$tmp/d1.gpp" "$tmp/d2.gpp" || fail "two partials of one trace differ"

# --- ranks of one job on simcuda --------------------------------------------------
# rank NAME COSTMODEL PROGRAM [ENV...]
rank() {
	local name=$1 model=$2 prog=$3
	shift 3
	(cd "$tmp" && env "$@" ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" GPUPHASE_STACKS=sync \
		LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" SIMCUDA_CONFIG="$model" \
		GPUPHASE_OUTPUT="$tmp/$name.gpht" "$prog" >/dev/null 2>&1) || fail "$name: $prog failed"
}
sed 's/^kernel step_kernel exec_ns=300000/kernel step_kernel exec_ns=900000/' "$S/examples/sync_bound.simcuda" >"$tmp/slow.simcuda"
rank r0 "$S/examples/sync_bound.simcuda" "$B/examples/sync_bound" RANK=0 WORLD_SIZE=4 SLURM_JOB_ID=77
rank r1 "$S/examples/sync_bound.simcuda" "$B/examples/sync_bound" RANK=1 WORLD_SIZE=4 SLURM_JOB_ID=77
rank r2 "$tmp/slow.simcuda" "$B/examples/sync_bound" RANK=2 WORLD_SIZE=4 SLURM_JOB_ID=77
rank r3 "$S/examples/launch_bound.simcuda" "$B/examples/launch_bound" RANK=3 WORLD_SIZE=4 SLURM_JOB_ID=77
ranks=("$tmp/r0.gpht" "$tmp/r1.gpht" "$tmp/r2.gpht" "$tmp/r3.gpht")
for variant in "" "--group-by callsite" "--whatif sync=cudaDeviceSynchronize" "--outlier-factor 1.1"; do
	rm -f "$tmp"/r*.gpp
	for k in 0 1 2 3; do
		# shellcheck disable=SC2086
		"$R" --partial $variant -o "$tmp/r$k.gpp" "$tmp/r$k.gpht" 2>/dev/null || fail "rank $k: --partial $variant"
	done
	for fmt in text markdown csv json; do
		# shellcheck disable=SC2086
		"$R" $variant --format $fmt "${ranks[@]}" >"$tmp/one.$fmt" 2>&1 || fail "ranks: one process $variant $fmt"
		# shellcheck disable=SC2086
		"$R" --straggler-pct 5 $variant --format $fmt "${ranks[@]}" >"$tmp/one5.$fmt" 2>&1
		"$R" --format $fmt "$tmp"/r*.gpp >"$tmp/merged.$fmt" 2>&1 || fail "ranks: merged $variant $fmt"
		"$R" --straggler-pct 5 --format $fmt "$tmp"/r*.gpp >"$tmp/merged5.$fmt" 2>&1
		cmp -s "$tmp/one.$fmt" "$tmp/merged.$fmt" || { fail "ranks $variant: $fmt differs"; diff "$tmp/one.$fmt" "$tmp/merged.$fmt" | head -6; }
		cmp -s "$tmp/one5.$fmt" "$tmp/merged5.$fmt" || fail "ranks $variant: $fmt --straggler-pct differs"
	done
	grep -q '"ranks": \[' "$tmp/merged.json" || fail "ranks $variant: not merged as one job"
done

# two hosts' ranks (tests/e2e/multirank, rank 1 under clockshift.so as if on
# another host: clock pairs an hour apart, NCCL collectives): the report's
# "Across ranks" (crossrank, merged from each trace's state) from partials
if [ -x "$B/tests/e2e/multirank" ] && [ -e "$B/tests/libclockshift.so" ]; then
	mr() { # mr R LD_PRELOAD ENV...
		local r=$1 pre=$2
		shift 2
		(cd "$tmp/mr" && env -u SLURM_JOB_ID -u GPUPHASE_OUTPUT "$@" ASAN_OPTIONS="$asan_opts" \
			LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
			SIMCUDA_CONFIG="$S/tests/e2e/multirank.simcuda" RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 \
			TORCHELASTIC_RUN_ID=pjob MR_RANK=$r MR_NRANKS=2 MR_SHM="$tmp/mr/shm" MR_ITERS=60 MR_PERIOD_US=8000 \
			MR_PRE_US=2000,3000 MR_POST_US=500,2000 MR_XFER_US=100 LD_PRELOAD="$pre" "$B/tests/e2e/multirank" \
			>"$tmp/mr/r$r.out" 2>&1)
	}
	mkdir -p "$tmp/mr"
	head -c 65536 /dev/zero >"$tmp/mr/shm"
	san_pre=
	[ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ] && san_pre="$GP_SAN_RUNTIME:"
	mr 0 "$san_pre$B/lib/libgpuphase.so" &
	p0=$!
	mr 1 "$san_pre$B/tests/libclockshift.so:$B/lib/libgpuphase.so" CLOCKSHIFT_RAW_NS=3600123456789 \
		CLOCKSHIFT_REALTIME_NS=2500000 CLOCKSHIFT_HOST=nodeB &
	p1=$!
	wait $p0 && wait $p1 || fail "multirank ranks failed: $(tail -3 "$tmp/mr/r0.out" "$tmp/mr/r1.out")"
	mrt=("$tmp/mr/gpuphase-pjob/gpuphase-pjob-r0.gpht" "$tmp/mr/gpuphase-pjob/gpuphase-pjob-r1.gpht")
	for k in 0 1; do
		"$R" --partial -o "$tmp/mr/r$k.gpp" "${mrt[$k]}" 2>/dev/null || fail "multirank rank $k: --partial"
	done
	for fmt in text markdown csv json; do
		"$R" --format $fmt "${mrt[@]}" >"$tmp/mr/one.$fmt" 2>&1
		"$R" --format $fmt "$tmp/mr/r0.gpp" "$tmp/mr/r1.gpp" >"$tmp/mr/merged.$fmt" 2>&1
		cmp -s "$tmp/mr/one.$fmt" "$tmp/mr/merged.$fmt" ||
			{ fail "two hosts: $fmt differs"; diff "$tmp/mr/one.$fmt" "$tmp/mr/merged.$fmt" | head -6; }
	done
	grep -q '^Across ranks' "$tmp/mr/merged.text" && grep -q '"crossrank"' "$tmp/mr/merged.json" ||
		fail "two hosts: no Across ranks section from partials"
else
	fail "tests/e2e/multirank or tests/libclockshift.so is missing (not built?)"
fi

# --- what a reader refuses --------------------------------------------------------
cp "$tmp/r0.gpp" "$tmp/good.gpp"
size=$(stat -c %s "$tmp/good.gpp")
# a flipped byte in the middle: the chunk's checksum
cp "$tmp/good.gpp" "$tmp/flip.gpp"
printf '\377' | dd of="$tmp/flip.gpp" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
expect 2 "damaged" "$R" "$tmp/flip.gpp"
grep -q "flip.gpp: not a readable gpuphase partial: damaged: the checksum of chunk" "$tmp/err" || fail "damaged: $(cat "$tmp/err")"
# cut at every 97th byte: never a crash, always one message and exit 2
for ((cut = 0; cut < size; cut += 97)); do
	head -c "$cut" "$tmp/good.gpp" >"$tmp/cut.gpp"
	"$R" "$tmp/cut.gpp" >/dev/null 2>"$tmp/err"
	rc=$?
	[ "$rc" = 2 ] || fail "cut at $cut: exit $rc"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "cut at $cut: $(cat "$tmp/err")"
	grep -q "AddressSanitizer\|runtime error" "$tmp/err" && fail "cut at $cut: sanitizer"
done
head -c $((size - 30)) "$tmp/good.gpp" >"$tmp/cut.gpp"
expect 2 "cut" "$R" "$tmp/cut.gpp"
grep -q "truncated\|more than the file holds" "$tmp/err" || fail "cut: $(cat "$tmp/err")"
# another version of the format
cp "$tmp/good.gpp" "$tmp/v9.gpp"
printf '\011' | dd of="$tmp/v9.gpp" bs=1 seek=8 conv=notrunc 2>/dev/null
expect 2 "version" "$R" "$tmp/v9.gpp"
grep -q "format version 9; this gpuphase-report reads version 5" "$tmp/err" || fail "version: $(cat "$tmp/err")"
# the version before operators counted their pageable copies: refused, not misread
cp "$tmp/good.gpp" "$tmp/v3.gpp"
printf '\003' | dd of="$tmp/v3.gpp" bs=1 seek=8 conv=notrunc 2>/dev/null
expect 2 "version 3" "$R" "$tmp/v3.gpp"
grep -q "format version 3; this gpuphase-report reads version 5 (make the partials" "$tmp/err" || fail "version 3: $(cat "$tmp/err")"
# the magic and nothing else; a text file named .gpp (the trace reader's turn)
printf 'GPHPARTL' >"$tmp/magic.gpp"
expect 2 "magic only" "$R" "$tmp/magic.gpp"
grep -q "shorter than its 16-byte header" "$tmp/err" || fail "magic only: $(cat "$tmp/err")"
echo "not a partial" >"$tmp/text.gpp"
expect 2 "foreign" "$R" "$tmp/text.gpp"
grep -q "text.gpp" "$tmp/err" || fail "foreign: the message does not name the file"
# options: --partial needs -o and takes no report option; partials made
# with other options; exports need records
expect 2 "--partial without -o" "$R" --partial "$tmp/r0.gpht"
expect 2 "--partial --format" "$R" --partial --format json -o "$tmp/x.gpp" "$tmp/r0.gpht"
grep -q "takes no --format" "$tmp/err" || fail "--partial --format: $(cat "$tmp/err")"
"$R" --partial --group-by callsite -o "$tmp/cs.gpp" "$tmp/r1.gpht" 2>/dev/null
expect 2 "mixed options" "$R" "$tmp/good.gpp" "$tmp/cs.gpp"
grep -q "made with different options" "$tmp/err" || fail "mixed options: $(cat "$tmp/err")"
expect 2 "contradicting --group-by" "$R" --group-by stream "$tmp/cs.gpp"
grep -q "group-by differs" "$tmp/err" || fail "contradicting --group-by: $(cat "$tmp/err")"
expect 0 "the same --group-by" "$R" --group-by callsite "$tmp/cs.gpp"
expect 2 "export" "$R" --export html "$tmp/x.html" "$tmp/good.gpp"
grep -q "needs the records" "$tmp/err" || fail "export: $(cat "$tmp/err")"
# outputs: never over a trace, an input, a symlink or a file of another kind
expect 2 "-o over a trace" "$R" --partial -o "$tmp/r1.gpht" "$tmp/r0.gpht"
expect 2 "-o over an input" "$R" --partial -o "$tmp/good.gpp" "$tmp/good.gpp"
echo "a report" >"$tmp/text.txt"
expect 2 "-o over text" "$R" --partial -o "$tmp/text.txt" "$tmp/r0.gpht"
ln -s "$tmp/good.gpp" "$tmp/link.gpp"
expect 2 "-o over a symlink" "$R" --partial -o "$tmp/link.gpp" "$tmp/r0.gpht"
expect 0 "-o over partial results" "$R" --partial -o "$tmp/cs.gpp" "$tmp/r0.gpht"
"$R" --partial -o "$tmp/tree2.gpp" "$tmp/r0.gpp" "$tmp/r1.gpp" 2>/dev/null || fail "a partial of two partials"
# diff takes one-trace partials
expect 0 "diff of partials" "$R" diff "$tmp/r0.gpp" "$tmp/r2.gpp"
"$R" diff "$tmp/r0.gpht" "$tmp/r2.gpht" >"$tmp/diff.one" 2>&1
cmp -s "$tmp/out" "$tmp/diff.one" || fail "diff of partials differs from diff of traces"
expect 2 "diff --partial" "$R" diff --partial -o "$tmp/d.gpp" "$tmp/r0.gpht" "$tmp/r2.gpht"
expect 2 "diff of a partial of two traces" "$R" diff "$tmp/cs.gpp" "$tmp/tree2.gpp"

# --- an analysis missing from a partial is named, not silently dropped -----------
python3 - "$tmp/good.gpp" "$tmp/nowhatif.gpp" <<'PY' || fail "could not drop an analysis from a partial"
import struct, sys
def crc32c(b, crc=0):
    crc ^= 0xffffffff
    for x in b:
        crc ^= x
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 if crc & 1 else 0)
    return crc ^ 0xffffffff
d = open(sys.argv[1], "rb").read()
out, off = bytearray(d[:16]), 16
while off < len(d):
    tag, crc, n = struct.unpack_from("<IIQ", d, off)
    body = d[off + 16: off + 16 + n]
    off += 16 + n
    if tag == struct.unpack("<I", b"TRCE")[0]:
        # the analyses are the trace's last bytes: u64 count, then name, u64 length, bytes
        # (found from the end: the offset from which they parse to the chunk's end)
        i, end = None, len(body)
        for k in range(len(body) - 8, 0, -1):  # find the count by parsing forward from each candidate
            cnt = struct.unpack_from("<Q", body, k)[0]
            if not 1 <= cnt <= 16: continue
            p, ents = k + 8, []
            try:
                for _ in range(cnt):
                    ln = struct.unpack_from("<I", body, p)[0]; name = body[p + 4:p + 4 + ln]; p += 4 + ln
                    sz = struct.unpack_from("<Q", body, p)[0]; p += 8 + sz
                    ents.append((name, k))
            except (struct.error, OverflowError):
                continue
            if p == end and all(e[0].isascii() and e[0] for e in ents) and b"whatif" in [e[0] for e in ents]:
                i = k; break
        assert i is not None
        cnt = struct.unpack_from("<Q", body, i)[0]
        p, keep = i + 8, []
        for _ in range(cnt):
            s0 = p
            ln = struct.unpack_from("<I", body, p)[0]; name = body[p + 4:p + 4 + ln]; p += 4 + ln
            sz = struct.unpack_from("<Q", body, p)[0]; p += 8 + sz
            if name != b"whatif": keep.append(body[s0:p])
        body = body[:i] + struct.pack("<Q", len(keep)) + b"".join(keep)
    out += struct.pack("<IIQ", tag, crc32c(body), len(body)) + body
open(sys.argv[2], "wb").write(out)
PY
expect 0 "an analysis left out" "$R" "$tmp/nowhatif.gpp"
grep -q "^Left out" "$tmp/out" && grep -q "not in the partial results this report was merged from: whatif" "$tmp/out" ||
	fail "left out: not said in the text report"
grep -q "What-if" "$tmp/out" && fail "left out: the what-if section is still there"
expect 0 "an analysis left out (json)" "$R" --format json "$tmp/nowhatif.gpp"
grep -q '"partial_left_out": \["whatif"\]' "$tmp/out" || fail "left out: not said in the json report"

echo "test_report_partial: $runs corpus runs, 4 ranks x 4 option sets and 2 hosts' ranks byte-identical from partials; $fails failures"
[ "$fails" = 0 ]
