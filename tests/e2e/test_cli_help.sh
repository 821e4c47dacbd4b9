#!/usr/bin/env bash
# test_cli_help.sh — the `gpuphase` command's help, version and usage errors.
# Specification: every verb answers --help with its own usage page (exit 0);
# `gpuphase help VERB` prints the same page; every long option that record
# and trigger accept (read from their getopt tables in cli/*.c, so the check
# cannot drift) is documented in their --help page and in the man page;
# report/diff/export --help include gpuphase-report's own option list; bad
# usage gives exit 2 and one "gpuphase:" line naming the problem.
# Environment: GP_BUILD, GP_SRC (set by make test).
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
G=$B/bin/gpuphase
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

[ -x "$G" ] || { echo "FAIL: $G not built"; exit 1; }

# Top level.
"$G" --help >"$tmp/top" 2>&1 || fail "gpuphase --help exit $?"
for v in record trigger report diff export help; do
	grep -q "^  $v " "$tmp/top" || fail "gpuphase --help does not list '$v'"
done
"$G" >/dev/null 2>&1; [ $? = 2 ] || fail "gpuphase without a command should exit 2"
out=$("$G" --version) || fail "--version exit $?"
echo "$out" | grep -Eq '^gpuphase [0-9]+\.[0-9]+\.[0-9]+$' || fail "--version printed '$out'"

# Every verb's page.
for v in record trigger report diff export help; do
	"$G" "$v" --help >"$tmp/$v" 2>"$tmp/$v.err"; rc=$?
	[ "$rc" = 0 ] || fail "gpuphase $v --help exit $rc: $(cat "$tmp/$v.err")"
	head -n 1 "$tmp/$v" | grep -q "^usage: gpuphase $v" || fail "gpuphase $v --help: first line '$(head -n 1 "$tmp/$v")'"
	"$G" help "$v" >"$tmp/$v.2" 2>&1 || fail "gpuphase help $v exit $?"
	cmp -s "$tmp/$v" "$tmp/$v.2" || fail "gpuphase help $v differs from gpuphase $v --help"
done
"$G" record -h | cmp -s - "$tmp/record" || fail "record -h differs from --help"

# Every long option of record and trigger is documented (help and man page).
opts_of() { # the long option names in the getopt table of a source file
	sed -n '/struct option longopts\[\]/,/NULL, 0, NULL, 0/p' "$1" | grep -o '{ "[a-z-]*"' | sed 's/{ "//; s/"//'
}
for pair in record:cli/record.c trigger:cli/trigger.c; do
	v=${pair%%:*}; src=$S/${pair#*:}
	n=0
	for o in $(opts_of "$src"); do
		n=$((n + 1))
		grep -q -- "--$o\b" "$tmp/$v" || fail "gpuphase $v --help does not document --$o"
		man_o=$(echo "$o" | sed 's/-/\\\\-/g')
		grep -q -- "\\\\-\\\\-$man_o" "$S/cli/gpuphase.1" || fail "cli/gpuphase.1 does not document $v --$o"
	done
	[ "$n" -ge 5 ] || fail "found only $n options in $src: the option table parse broke"
done

# report stability (reached through `gpuphase report`): named in the top help,
# the report page and the man page, with every option the report's option
# table (report/options.c) gives its command line (S).
grep -q "report stability" "$tmp/top" || fail "gpuphase --help does not mention 'report stability'"
grep -q "gpuphase report stability" "$tmp/report" || fail "gpuphase report --help does not describe 'report stability'"
grep -q 'gpuphase report stability' "$S/cli/gpuphase.1" || fail "cli/gpuphase.1 does not describe 'report stability'"
n=0
for o in $(grep -E '^\s*\{ "[a-z-]+",.*[ |]S \},' "$S/report/options.c" | grep -o '{ "[a-z-]*"' | sed 's/{ "//; s/"//'); do
	n=$((n + 1))
	[ "$o" = help ] && continue
	grep -q -- "--$o\b" "$tmp/report" || fail "gpuphase report --help does not document stability --$o"
	man_o=$(echo "$o" | sed 's/-/\\\\-/g')
	grep -q -- "\\\\-\\\\-$man_o" "$S/cli/gpuphase.1" || fail "cli/gpuphase.1 does not document stability --$o"
done
[ "$n" -ge 4 ] || fail "found only $n options of report stability: the option table parse broke"

# report, diff, export: our page plus gpuphase-report's options.
if [ -x "$B/bin/gpuphase-report" ]; then
	for v in report diff export; do
		grep -q "not found next to gpuphase" "$tmp/$v" && fail "gpuphase $v --help did not find gpuphase-report"
		[ "$(wc -l <"$tmp/$v")" -gt 12 ] || fail "gpuphase $v --help is too short to list the report options"
	done
else
	fail "$B/bin/gpuphase-report not built"
fi

# Usage errors: exit 2, one clear line.
check_usage() { # expected-substring, args...
	local want=$1; shift
	"$G" "$@" >"$tmp/o" 2>"$tmp/e"; local rc=$?
	[ "$rc" = 2 ] || fail "gpuphase $* exit $rc (want 2)"
	grep -q -- "$want" "$tmp/e" || fail "gpuphase $*: stderr lacks '$want': $(cat "$tmp/e")"
	[ -s "$tmp/o" ] && fail "gpuphase $*: printed on stdout: $(cat "$tmp/o")"
	return 0
}
check_usage "not a gpuphase command" frobnicate
check_usage "unknown option '--bogus'" record --bogus -- true
check_usage "no command to run" record
check_usage "--window 'skip=x'" record -w skip=x -- true
check_usage "--window 'delay=1s,iters=3'" record -w delay=1s,iters=3 -- true
check_usage "--marker 'nvtx:'" record -m nvtx: -- true
check_usage "--stacks 'some'" record -s some -- true
check_usage "--max-size '12Q'" record --max-size 12Q -- true
check_usage "give its PID" trigger
check_usage "not a process id" trigger 12ab --iters 5
check_usage "exactly one of" trigger 1
check_usage "exactly one of" trigger 1 --iters 5 --seconds 2
check_usage "--iters '0'" trigger 1 --iters 0
check_usage "--seconds 'x'" trigger 1 --seconds x
check_usage "no help for 'nope'" help nope

[ "$fails" = 0 ] && echo "test_cli_help: all checks passed"
[ "$fails" = 0 ]
