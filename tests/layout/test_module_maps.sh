#!/usr/bin/env bash
# test_module_maps.sh — each component's module map (the list of its files in
# a header's opening comment) against the files that are really there, so a
# map cannot drift from the code. Specification:
#  * a map is the block of a header's opening comment that starts at a given
#    line and ends at the next empty comment line (" *"); its entries are the
#    lines whose first word is a file name ending in .c; a .c name anywhere
#    else in the block (a continuation line: "its stubs in x.c") covers that
#    file too, but is no entry;
#  * every file of the component is covered by the map, else the part fails
#    naming the file missing from the map; every entry names a file that
#    exists, else the part fails naming the entry with no file;
#  * maps checked: libgpuphase/gp_lib.h ("Module map") against
#    libgpuphase/*.c; simcuda/sim_internal.h ("simcuda's files", both
#    libraries and the truth reader) against simcuda/*.c. collector/ has no module map (gp_collector_int.h names the
#    files that share its internals, not the component's files), so it is not
#    checked here;
#  * tamper control: the check run on a temporary copy of gp_lib.h with one
#    map line removed fails and names that file; on a copy with an entry for
#    a file that does not exist, it fails and names the entry.
set -u
S=${GP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
rc=0

# map_check HEADER START_TEXT DIR GLOB [EXCLUDED...]: prints one line per
# problem ("missing from the map: F", "map entry with no file: F",
# "excluded file absent: F") and returns 1 when there is any.
map_check()
{
	local header=$1 start=$2 dir=$3 glob=$4 bad=0 f
	shift 4
	local block
	block=$(awk -v start="$start" 'index($0, start) { on = 1; next } on && /^ \*$/ { exit } on' "$header")
	if [ -z "$block" ]; then
		echo "no map found in $header (after a line with \"$start\")"
		return 1
	fi
	local entries covered
	entries=$(printf '%s\n' "$block" | awk '{ w = $2 } w ~ /^[A-Za-z0-9_]+\.c$/ { print w }' | sort -u)
	covered=$(printf '%s\n' "$block" | grep -oE '(^|[^/A-Za-z0-9_.])[A-Za-z0-9_]+\.c\b' |
		sed -E 's/^[^A-Za-z0-9_]//' | sort -u)
	local files
	files=$(cd "$dir" && ls -1 $glob 2>/dev/null | sort -u)
	for f in "$@"; do
		if ! printf '%s\n' "$files" | grep -qxF "$f"; then
			echo "excluded file absent: $dir/$f"
			bad=1
		fi
		files=$(printf '%s\n' "$files" | grep -vxF "$f")
	done
	for f in $files; do
		printf '%s\n' "$covered" | grep -qxF "$f" || { echo "missing from the map in $header: $dir/$f"; bad=1; }
	done
	for f in $entries; do
		[ -e "$dir/$f" ] || { echo "map entry with no file in $header: $f"; bad=1; }
	done
	return $bad
}

part()
{
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		echo "PART $name: PASS"
	else
		echo "PART $name: FAIL $(printf '%s' "$out" | tr '\n' ';')"
		rc=1
	fi
}

part libgpuphase map_check "$S/libgpuphase/gp_lib.h" "Module map" "$S/libgpuphase" '*.c'
part simcuda map_check "$S/simcuda/sim_internal.h" "simcuda's files" "$S/simcuda" '*.c'

# Tamper control: the check on copies of libgpuphase's map, one line taken
# out, one entry added for a file that does not exist; each must fail and
# name the file.
tamper()
{
	local map=$S/libgpuphase/gp_lib.h out
	mkdir -p "$tmp/lib"
	cp "$S"/libgpuphase/*.c "$tmp/lib/"
	grep -q '^ \*   hostload\.c ' "$map" || { echo "gp_lib.h's map has no hostload.c line to remove"; return 1; }
	grep -v '^ \*   hostload\.c ' "$map" >"$tmp/removed.h"
	if out=$(map_check "$tmp/removed.h" "Module map" "$tmp/lib" '*.c'); then
		echo "a map without hostload.c passed"
		return 1
	fi
	case $out in
	*"missing from the map"*hostload.c*) ;;
	*) echo "a map without hostload.c failed without naming it: $out"; return 1 ;;
	esac
	awk '/^ \*   hostload\.c / { print " *   ghost.c     a module with no file" } { print }' "$map" >"$tmp/added.h"
	if out=$(map_check "$tmp/added.h" "Module map" "$tmp/lib" '*.c'); then
		echo "a map with an entry for ghost.c passed"
		return 1
	fi
	case $out in
	*"map entry with no file"*ghost.c*) ;;
	*) echo "a map with ghost.c failed without naming it: $out"; return 1 ;;
	esac
	return 0
}
part tamper_control tamper

exit $rc
