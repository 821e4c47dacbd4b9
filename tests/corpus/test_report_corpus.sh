#!/usr/bin/env bash
# tests/corpus/test_report_corpus.sh — the report's outputs stay byte-identical
# on a fixed corpus of traces (tests/corpus/traces/: every example, the
# server, the e2e scenarios, the GPU kit's simulated runs, cut and merged
# traces). Every output that tests/corpus/make-corpus.sh writes — text,
# markdown, csv and json reports with several option sets, chrome-trace, perfetto,
# SQLite (as its .dump), HTML, diff and stability, with their stderr and exit
# status — is recomputed with the report in $GP_BUILD and compared with
# tests/corpus/expected/. A change meant to alter an output regenerates
# expected/ (make-corpus.sh outputs) in the same commit and says why.
# Environment (make test): GP_BUILD, GP_SRC.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
E=$S/tests/corpus/expected
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is missing (scripts/deps.sh core installs it)"; exit 1; }
tmp=$(mktemp -d /tmp/gp_corpus.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
GP_BUILD=$B bash "$S/tests/corpus/make-corpus.sh" into "$tmp" || { echo "FAIL: make-corpus.sh into failed"; exit 1; }
fails=0
n=0
for f in "$E"/* "$tmp"/*; do
	b=$(basename "$f")
	[ "$b" = SHA256SUMS ] && continue
	[ "${f%/*}" = "$tmp" ] && [ -e "$E/$b" ] && continue
	n=$((n + 1))
	if [ ! -e "$E/$b" ]; then
		echo "FAIL: $b: an output the corpus does not expect"; fails=$((fails + 1))
	elif [ ! -e "$tmp/$b" ]; then
		echo "FAIL: $b: expected output not produced"; fails=$((fails + 1))
	elif ! cmp -s "$E/$b" "$tmp/$b"; then
		echo "FAIL: $b differs"; fails=$((fails + 1))
		[ "$fails" -le 5 ] && diff "$E/$b" "$tmp/$b" | head -8
	fi
done
while read -r sum b; do
	n=$((n + 1))
	got=$(grep -F "  $b" "$tmp/SHA256SUMS" | awk '{print $1}')
	[ "$got" = "$sum" ] || { echo "FAIL: $b: sha256 ${got:-missing}, expected $sum"; fails=$((fails + 1)); }
done <"$E/SHA256SUMS"
[ "$(wc -l <"$tmp/SHA256SUMS")" = "$(wc -l <"$E/SHA256SUMS")" ] ||
	{ echo "FAIL: SHA256SUMS lists $(wc -l <"$tmp/SHA256SUMS") files, expected $(wc -l <"$E/SHA256SUMS")"; fails=$((fails + 1)); }
traces=$(ls "$S/tests/corpus/traces" | wc -l)
if [ "$fails" = 0 ]; then
	echo "test_report_corpus.sh: $n outputs of $traces traces byte-identical"
else
	echo "test_report_corpus.sh: $fails of $n outputs differ (make-corpus.sh into-full DIR shows them whole)"
fi
[ "$fails" = 0 ]
