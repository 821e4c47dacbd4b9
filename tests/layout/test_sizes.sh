#!/usr/bin/env bash
# test_sizes.sh — the size limits of the house rules (docs/CONTRIBUTING.md):
# no production source file over 1,000 lines, no function over 150 lines, so
# a file or a function that grows past them is split when it does, not found
# by a later review. Specification:
#  * production sources: the C and CUDA files git tracks (*.c, *.h, *.cu)
#    outside every tests/ directory (tests are long lists of cases by
#    nature); every component's, examples' and benchmarks' included;
#  * a file's size is its line count (wc -l); over 1,000 fails, naming the
#    file and its count;
#  * a function is what the house style writes: its body opens with a line
#    that is exactly "{" and closes at the next line that starts with "}"
#    (STYLE: function braces on their own lines, in column 0; inner braces
#    are indented). Its length is from the "{" line to the "}" line; over
#    150 fails, naming the file, the line of the "{" and the length;
#  * the largest file and the longest function are printed, so the margin
#    is seen in the log;
#  * tamper control: on a temporary tree, a file of 1,001 lines and a
#    function of 151 lines must each fail, named; a file of 1,000 lines
#    and a function of 150 must pass (the limits are inclusive).
set -u
S=${GP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
rc=0
MAX_FILE=1000
MAX_FUNC=150

# sizes_check DIR FILE...: prints one line per file or function over its
# limit, then the largest file and the longest function; returns 1 when any
# is over.
sizes_check()
{
	local dir=$1
	shift
	(cd "$dir" && awk -v max_file=$MAX_FILE -v max_func=$MAX_FUNC '
		FNR == 1 { if (prev != "") done(prev, lines); prev = FILENAME; open = 0 }
		{ lines = FNR }
		/^\{$/ { open = FNR }
		/^\}/ && open {
			len = FNR - open + 1
			if (len > max_func) { printf "function over %d lines: %s:%d (%d lines)\n", max_func, FILENAME, open, len; bad = 1 }
			if (len > best_func) { best_func = len; best_func_at = FILENAME ":" open }
			open = 0
		}
		function done(f, n) {
			if (n > max_file) { printf "file over %d lines: %s (%d lines)\n", max_file, f, n; bad = 1 }
			if (n > best_file) { best_file = n; best_file_at = f }
		}
		END {
			if (prev != "") done(prev, lines)
			printf "largest file: %s (%d lines); longest function: %s (%d lines)\n", best_file_at, best_file, best_func_at, best_func
			exit bad
		}' "$@")
}

part()
{
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		echo "PART $name: PASS $(printf '%s' "$out" | tr '\n' ';')"
	else
		echo "PART $name: FAIL $(printf '%s' "$out" | tr '\n' ';')"
		rc=1
	fi
}

cd "$S" || exit 1
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "SKIP: $S is not a git checkout: the production files are the tracked ones"
	exit 77
fi
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cu' | grep -vE '(^|/)tests/')
[ "${#files[@]}" -gt 100 ] || { echo "only ${#files[@]} production files found"; exit 1; }
echo "production sources: ${#files[@]} files"
part limits sizes_check "$S" "${files[@]}"

# Tamper control: the limits are inclusive and each excess is named.
tamper()
{
	local out
	mkdir -p "$tmp/t"
	# a function of N lines from "{" to "}", in a file of F lines in all
	mkfile() { # NAME FUNC_LINES FILE_LINES
		awk -v fl="$2" -v total="$3" 'BEGIN {
			print "static int f(void)"; print "{"
			for (i = 1; i <= fl - 2; i++) print "\t;"
			print "}"
			for (i = fl + 2; i <= total; i++) print "/* filler */"
		}' >"$tmp/t/$1"
	}
	mkfile at_limit.c 150 1000
	[ "$(wc -l <"$tmp/t/at_limit.c")" -eq 1000 ] || { echo "the at-limit file is not 1,000 lines"; return 1; }
	if ! out=$(sizes_check "$tmp/t" at_limit.c); then
		echo "a file of 1,000 lines with a function of 150 failed: $out"
		return 1
	fi
	case $out in *"at_limit.c (1000 lines)"*"at_limit.c:2 (150 lines)"*) ;;
	*) echo "the at-limit sizes were measured wrong: $out"; return 1 ;;
	esac
	mkfile long_file.c 10 1001
	mkfile long_func.c 151 200
	if out=$(sizes_check "$tmp/t" at_limit.c long_file.c long_func.c); then
		echo "a file of 1,001 lines and a function of 151 passed: $out"
		return 1
	fi
	case $out in *"file over 1000 lines: long_file.c (1001 lines)"*) ;;
	*) echo "the 1,001-line file was not named: $out"; return 1 ;;
	esac
	case $out in *"function over 150 lines: long_func.c:2 (151 lines)"*) ;;
	*) echo "the 151-line function was not named: $out"; return 1 ;;
	esac
	echo "1,000/150 pass; 1,001 and 151 fail, named"
}
part tamper_control tamper

exit $rc
