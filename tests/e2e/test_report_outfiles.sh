#!/usr/bin/env bash
# test_report_outfiles.sh — no output of gpuphase-report (-o FILE, --export
# FORMAT OUT) ever loses or corrupts a file (docs/cli.md "Output files"):
#   - never onto a gpuphase trace or an input of the run (swapped arguments,
#     `-o d.gpht d.gpht`), never through a symlink, never replacing a
#     non-regular file or a file unlike what we would write: refused in one
#     line, exit 2, the file untouched;
#   - written to a temporary file beside OUT and renamed: mode 0600, no
#     temporary left behind, a failed run leaves the old OUT as it was;
#   - the same file may be rewritten by the same command (report -o twice).
# Traces come from the committed corpus (no program is run).
# Environment (make test): GP_BUILD, GP_SRC.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
G=$B/bin/gpuphase
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d /tmp/gp_outfiles.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp "$S/tests/corpus/traces/sync_bound.gpht" "$tmp/a.gpht"
cp "$S/tests/corpus/traces/sync_bound_b.gpht" "$tmp/b.gpht"
sum_a=$(sha256sum <"$tmp/a.gpht")
sum_b=$(sha256sum <"$tmp/b.gpht")
cd "$tmp" || exit 1

# refused RC? WHAT -- CMD...: exit 2, one line on stderr, no file changed.
refused() {
	local what=$1
	shift
	"$@" >out.txt 2>err.txt
	local rc=$?
	[ $rc -eq 2 ] || fail "$what: exit $rc, wanted 2 ($(head -c 300 err.txt))"
	[ "$(grep -c . err.txt)" -eq 1 ] || fail "$what: not one line on stderr: $(cat err.txt)"
	[ "$(sha256sum <a.gpht)" = "$sum_a" ] || fail "$what: a.gpht changed"
	[ "$(sha256sum <b.gpht)" = "$sum_b" ] || fail "$what: b.gpht changed"
	ls -a | grep -q '^\..*\.[A-Za-z0-9]\{6\}$' && fail "$what: a temporary file was left: $(ls -a)"
}

# 1. swapped arguments: the trace named as OUT
refused "export html a.gpht b.gpht" "$G" export html a.gpht b.gpht
grep -q "a.gpht: is a gpuphase trace" err.txt || fail "swapped export: $(cat err.txt)"
refused "export chrome-trace onto a trace" "$R" --export chrome-trace b.gpht a.gpht
refused "export sqlite onto a trace" "$R" --export sqlite a.gpht b.gpht
# 2. the output is an input of the run (even under another name)
ln a.gpht hard.gpht
refused "report -o input" "$R" --format json -o a.gpht a.gpht
grep -q "input of this run\|gpuphase trace" err.txt || fail "-o input: $(cat err.txt)"
cp a.gpht renamed.txt
refused "report -o input (renamed)" "$R" -o renamed.txt renamed.txt
grep -q "input of this run" err.txt || fail "-o renamed input: $(cat err.txt)"
rm -f hard.gpht renamed.txt
# 3. a symlink at OUT: never written through
echo "precious" >victim.txt
for fmt in "-o link.txt" "--export html link.txt" "--export chrome-trace link.txt" "--export sqlite link.txt"; do
	ln -sf victim.txt link.txt
	# shellcheck disable=SC2086
	refused "symlink ($fmt)" "$R" $fmt a.gpht
	[ "$(cat victim.txt)" = precious ] || fail "symlink ($fmt): written through"
	[ -L link.txt ] || fail "symlink ($fmt): link replaced"
	grep -q "symbolic link" err.txt || fail "symlink ($fmt): $(cat err.txt)"
done
rm -f link.txt
# 4. non-regular files: a directory, a FIFO, a device
mkdir adir
mkfifo afifo
refused "-o directory" "$R" -o adir a.gpht
refused "--export sqlite FIFO" timeout 10 "$R" --export sqlite afifo a.gpht
[ -p afifo ] || fail "the FIFO was replaced"
refused "--export sqlite /dev/null" "$R" --export sqlite /dev/null a.gpht
[ -c /dev/null ] || fail "/dev/null is no longer a device"
# 5. a file that is not what we would write
printf 'ELF\0\1\2binary' >prog
refused "-o binary" "$R" -o prog a.gpht
echo "notes" >notes.txt
refused "--export sqlite over text" "$R" --export sqlite notes.txt a.gpht
refused "--export html over text" "$R" --export html notes.txt a.gpht
refused "--format json -o over text" "$R" --format json -o notes.txt a.gpht
[ "$(cat notes.txt)" = notes ] || fail "notes.txt changed"
# 6. two outputs of one run on the same file
refused "two exports on one file" "$R" --export html o.html --export html ./o.html a.gpht
[ -e o.html ] && fail "two exports: o.html written"

# 7. what is written: mode 0600, rewritten by the same command, no temp left
for i in 1 2; do
	"$R" -o rep.txt a.gpht 2>err.txt || fail "report -o rep.txt (run $i): $(cat err.txt)"
	"$R" --format json -o rep.json a.gpht 2>err.txt || fail "report -o rep.json (run $i): $(cat err.txt)"
	"$R" --export html r.html --export chrome-trace r.json --export sqlite r.db a.gpht 2>err.txt ||
		fail "exports (run $i): $(cat err.txt)"
done
for f in rep.txt rep.json r.html r.json r.db; do
	[ -s "$f" ] || fail "$f: empty or missing"
	[ "$(stat -c %a "$f")" = 600 ] || fail "$f: mode $(stat -c %a "$f"), wanted 600"
done
head -c 16 r.db | grep -q "SQLite format 3" || fail "r.db is not an SQLite database"
"$R" a.gpht | cmp -s - rep.txt || fail "report -o differs from stdout"
ls -a | grep -q '^\..*\.[A-Za-z0-9]\{6\}$' && fail "a temporary file was left: $(ls -a)"
# 8. a failed run leaves the old output as it was
cp rep.txt rep.keep
printf 'GPHTRACEbroken' >bad.gpht
"$R" -o rep.txt bad.gpht >/dev/null 2>&1 && fail "a corrupt trace was accepted"
cmp -s rep.txt rep.keep || fail "a failed run changed rep.txt"
cp r.html r.keep
"$R" --export html r.html bad.gpht >/dev/null 2>&1
cmp -s r.html r.keep || fail "a failed run changed r.html"
ls -a | grep -q '^\..*\.[A-Za-z0-9]\{6\}$' && fail "a failed run left a temporary file: $(ls -a)"

if [ $fails -ne 0 ]; then
	echo "test_report_outfiles.sh: $fails failure(s)"
	exit 1
fi
echo "test_report_outfiles.sh: all passed"
