#!/usr/bin/env bash
# test_rel_badinput.sh — bad input to gpuphase-report (docs/reliability.md
# §6). A small real trace (rel_prog under the preload)
# is cut at every byte and has every bit of it flipped, in process through
# the fuzz harness (tests/fuzz/fuzz_trace.c: reader, both analysis passes,
# writers; ASan+UBSan under make asan): no crash, no hang, no sanitizer
# report. Then the report binary itself, on one input of each kind —
# zero-length, a directory, /dev/zero, /dev/null, another program's file, a
# text file, a wrong version, a corrupt block, cut mid-header, cut mid-data —
# must exit with the documented status (2 unreadable/corrupt, 3 truncated
# but reported), print one clear line naming the file and the problem, and
# finish within the timeout.
. "$(dirname "$0")/rel_common.sh"
REPLAY=$REL_B/tests/fuzz_replay
[ -x "$REPLAY" ] || { echo "FAIL: $REPLAY is not built"; exit 1; }

d=$(rel_dir trace); rel_run "$d" pre GPUPHASE_OUTPUT=t.gpht -- "$REL_PROG" basic 12 0
tr=$d/t.gpht
[ -s "$tr" ] || { echo "FAIL: no trace to corrupt"; exit 1; }
size=$(stat -c %s "$tr")
timeout 600 "$REPLAY" --truncate "$tr" >"$d/trunc.log" 2>&1
rel_check $? "truncation at every byte of a $size-byte trace: $(tail -3 "$d/trunc.log")"
# Every bit of the file; under a sanitizer (~3 ms an input) the first 1 KiB
# (header, first block header and the start of its payload).
flip=$size; [ -n "${GP_SAN:-}" ] && flip=1024
timeout 600 "$REPLAY" --bitflip "$tr" "$flip" >"$d/flip.log" 2>&1
rel_check $? "bit flips of a $size-byte trace: $(tail -3 "$d/flip.log")"
echo "$(cat "$d/trunc.log") (every byte); $(cat "$d/flip.log") (every bit of the first $flip bytes)"

rep() { # expected-status label file [grep pattern for the message]
  local want=$1 label=$2 f=$3 pat=${4:-}
  timeout 30 "$REL_REPORT" "$f" >"$d/rep.out" 2>"$d/rep.err"; local rc=$?
  [ "$rc" = "$want" ]; rel_check $? "$label: exit status $rc, expected $want: $(head -c 200 "$d/rep.err")"
  grep -aqF "$f" "$d/rep.err"; rel_check $? "$label: the message does not name the file: $(head -c 200 "$d/rep.err")"
  [ -z "$pat" ] || { grep -aqiE "$pat" "$d/rep.err"; rel_check $? "$label: the message does not say '$pat': $(head -c 200 "$d/rep.err")"; }
}
: >"$d/empty.gpht";                           rep 2 "zero-length" "$d/empty.gpht" "empty"
mkdir "$d/dir.gpht";                          rep 2 "a directory" "$d/dir.gpht" "directory"
rep 2 "/dev/zero" /dev/zero "not a regular file"
rep 2 "/dev/null" /dev/null "not a regular file"
cp "$REL_PROG" "$d/elf";                      rep 2 "another program's file (ELF)" "$d/elf" "not a gpuphase trace"
printf 'hello\n' >"$d/text";                  rep 2 "a text file" "$d/text" "not a gpuphase trace"
rep 2 "no such file" "$d/missing.gpht" "cannot open"
cp "$tr" "$d/ver.gpht"; printf '\x63' | dd of="$d/ver.gpht" bs=1 seek=8 conv=notrunc 2>/dev/null
rep 2 "wrong version" "$d/ver.gpht" "version"
hl=$(od -An -tu4 -j20 -N4 "$tr" | tr -d ' ')
cp "$tr" "$d/blk.gpht"; printf '\xff' | dd of="$d/blk.gpht" bs=1 seek=$((hl + 40)) conv=notrunc 2>/dev/null
rep 2 "corrupt first block" "$d/blk.gpht" "checksum|corrupt"
head -c 40 "$tr" >"$d/cut-header.gpht";     rep 2 "cut inside the header" "$d/cut-header.gpht" "truncated header"
head -c $((size - 20)) "$tr" >"$d/cut-data.gpht"; rep 3 "cut inside the data" "$d/cut-data.gpht" "truncated"
grep -q "the trace has no footer" "$d/rep.out"; rel_check $? "cut inside the data: the report itself does not say it was cut off"
rel_done
