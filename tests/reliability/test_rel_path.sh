#!/usr/bin/env bash
# test_rel_path.sh — the output path (docs/reliability.md §3):
# GPUPHASE_OUTPUT naming a directory, an existing file, a pre-placed symlink
# (to an existing file, and dangling), a directory of the path that is another
# user's symbolic link, a FIFO, an unwritable directory (as an
# unprivileged user: root ignores permissions), a read-only file system (a
# ro tmpfs, when this machine lets us mount one) — each refused with one
# gpuphase: line, nothing written through the link, nothing overwritten, the
# program unaffected. Then AT_SECURE: a set-user-ID copy of rel_prog (owned
# by nobody, run by root, so the kernel sets AT_SECURE) loading the library
# through CUDA_INJECTION64_PATH (the dynamic loader ignores LD_PRELOAD paths
# for secure programs, so injection is the way the library can get in): it
# must stay inert (no trace, no output) while the same program without the
# set-user-ID bit writes a trace.
. "$(dirname "$0")/rel_common.sh"

a=$(rel_dir bare); rel_run "$a" bare -- "$REL_PROG" basic 20 0

refused() { # dir label: exactly one gpuphase: line saying why, program unaffected
  local b=$1 label=$2
  rel_same "$a" "$b" "$label"
  [ "$(grep -ac '^gpuphase: ' "$b/.err")" = 1 ] && grep -aq "^gpuphase: cannot write trace" "$b/.err"
  rel_check $? "$label: expected one 'cannot write trace' line, got: $(head -c 300 "$b/.err")"
}

b=$(rel_dir dir); mkdir "$b/out.gpht"
rel_run "$b" pre GPUPHASE_OUTPUT=out.gpht -- "$REL_PROG" basic 20 0
refused "$b" "output is a directory"
[ -z "$(ls -A "$b/out.gpht")" ]; rel_check $? "output is a directory: something was written inside it"

b=$(rel_dir exists); printf 'precious\n' >"$b/out.gpht"
rel_run "$b" pre GPUPHASE_OUTPUT=out.gpht -- "$REL_PROG" basic 20 0
refused "$b" "output exists"
[ "$(cat "$b/out.gpht")" = precious ]; rel_check $? "output exists: the file was overwritten"

b=$(rel_dir link); printf 'precious\n' >"$REL_TMP/target-file"; ln -s "$REL_TMP/target-file" "$b/out.gpht"
rel_run "$b" pre GPUPHASE_OUTPUT=out.gpht -- "$REL_PROG" basic 20 0
refused "$b" "output is a symlink to a file"
[ "$(cat "$REL_TMP/target-file")" = precious ]; rel_check $? "symlink: written through the link"

b=$(rel_dir dangling); ln -s "$REL_TMP/not-there" "$b/out.gpht"
rel_run "$b" pre GPUPHASE_OUTPUT=out.gpht -- "$REL_PROG" basic 20 0
refused "$b" "output is a dangling symlink"
[ ! -e "$REL_TMP/not-there" ]; rel_check $? "dangling symlink: its target was created"

b=$(rel_dir fifo); mkfifo "$b/out.gpht"
REL_TIMEOUT=30 rel_run "$b" pre GPUPHASE_OUTPUT=out.gpht -- "$REL_PROG" basic 20 0
refused "$b" "output is a FIFO (must not block)"

b=$(rel_dir missing)
rel_run "$b" pre GPUPHASE_OUTPUT=no/such/dir/out.gpht -- "$REL_PROG" basic 20 0
refused "$b" "output directory missing"

# Unwritable directory, as nobody (root bypasses permission bits).
if command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
  u=$(rel_dir unwritable); chmod 755 "$REL_TMP" "$u"; mkdir "$u/ro"; chmod 555 "$u/ro"
  ub=$(rel_dir nobodybare); chmod 777 "$ub"
  rel_run "$ub" bare -- setpriv --reuid=65534 --regid=65534 --clear-groups "$REL_PROG" basic 20 0
  chmod 777 "$u"
  rel_run "$u" pre GPUPHASE_OUTPUT=ro/out.gpht -- setpriv --reuid=65534 --regid=65534 --clear-groups "$REL_PROG" basic 20 0
  [ "$(cat "$ub/.rc")" = "$(cat "$u/.rc")" ] && cmp -s "$ub/.out" "$u/.out"
  rel_check $? "unwritable directory: the program's exit status or stdout changed"
  [ "$(grep -ac '^gpuphase: cannot write trace' "$u/.err")" = 1 ] && [ -z "$(ls -A "$u/ro")" ]
  rel_check $? "unwritable directory: expected one refusal and no file: $(head -c 300 "$u/.err")"
else
  rel_skip unwritable_dir "setpriv cannot drop to uid 65534 here"
fi

# A directory of the path that is another user's symbolic link: refused
# (root's trace never lands where nobody's link points), one line, nothing
# written through the link; a link of root's own is followed (control).
if [ "$(id -u)" = 0 ]; then
  for path in link/out.gpht ABS/link/sub/out.gpht; do
    b=$(rel_dir dirlink); mkdir -p "$b/real/sub"; ln -s "$b/real" "$b/link"; chown -h 65534:65534 "$b/link"
    out=${path/ABS/$b}
    rel_run "$b" pre GPUPHASE_OUTPUT="$out" -- "$REL_PROG" basic 20 0
    rel_same "$a" "$b" "another user's symlinked directory ($path)"
    [ "$(grep -ac '^gpuphase: ' "$b/.err")" = 1 ] &&
      grep -aq "^gpuphase: GPUPHASE_OUTPUT='$out': .*(Too many levels of symbolic links)" "$b/.err"
    rel_check $? "another user's symlinked directory ($path): expected one refusal, got: $(head -c 300 "$b/.err")"
    [ -z "$(find "$b/real" -type f)" ]; rel_check $? "another user's symlinked directory ($path): written through the link"
  done
  b=$(rel_dir rootlink); mkdir "$b/real"; ln -s "$b/real" "$b/link"
  rel_run "$b" pre GPUPHASE_OUTPUT=link/out.gpht -- "$REL_PROG" basic 20 0
  [ -s "$b/real/out.gpht" ] && ! grep -aq '^gpuphase: ' "$b/.err"
  rel_check $? "root's own symlinked directory: no trace through it: $(head -c 300 "$b/.err")"
else
  rel_skip symlinked_dir "it needs root (to make a symbolic link owned by another user)"
fi

# Read-only file system.
ro=$(rel_dir rofs); mkdir "$ro/mnt"
if mount -t tmpfs -o ro,size=1m tmpfs "$ro/mnt" 2>/dev/null; then
  rel_run "$ro" pre GPUPHASE_OUTPUT=mnt/out.gpht -- "$REL_PROG" basic 20 0
  umount "$ro/mnt"
  refused "$ro" "read-only file system"
  grep -aq "Read-only file system" "$ro/.err"; rel_check $? "read-only fs: the message does not say why: $(cat "$ro/.err")"
else
  rel_skip readonly_fs "cannot mount a tmpfs here (not root or no CAP_SYS_ADMIN)"
fi

# The trigger socket's directory (GPUPHASE_WINDOW=trigger): a pre-placed
# symlink to a directory, a world-writable directory, a directory owned by
# someone else — each refused with one line; no socket appears in it or
# through the link; the program unaffected.
ctl_case() { # label setup-fn
  local label=$1 c; c=$(rel_dir ctl); chmod 755 "$c"
  "$2" "$c"
  rel_run "$c" pre GPUPHASE_WINDOW=trigger GPUPHASE_CONTROL_DIR="$c/ctl" -- "$REL_PROG" basic 20 0
  rel_same "$a" "$c" "control dir: $label"
  grep -aq "^gpuphase: trigger: .* must be a directory owned by uid" "$c/.err"
  rel_check $? "control dir: $label: not refused: $(head -c 300 "$c/.err")"
  [ -z "$(find "$c" -type s)" ]; rel_check $? "control dir: $label: a socket was created: $(find "$c" -type s)"
}
ctl_link() { mkdir -m 700 "$1/real"; ln -s "$1/real" "$1/ctl"; }
ctl_open() { mkdir "$1/ctl"; chmod 777 "$1/ctl"; }
ctl_other() { mkdir -m 700 "$1/ctl"; chown 65534 "$1/ctl"; }
ctl_case "a symlink to a directory" ctl_link
ctl_case "mode 0777" ctl_open
if [ "$(id -u)" = 0 ]; then ctl_case "owned by nobody" ctl_other; fi

# AT_SECURE. A copy of rel_prog with an absolute RUNPATH to simcuda (secure
# programs ignore LD_LIBRARY_PATH), set-user-ID to nobody, in a directory
# anyone may write to (so only the library's own check can stop a trace).
if [ -n "${GP_SAN:-}" ]; then
  rel_skip at_secure "not under $GP_SAN: a secure program ignores LD_PRELOAD, so the sanitizer runtime the instrumented library needs cannot be preloaded"
elif [ "$(id -u)" = 0 ] && [ -x "$REL_B/tests/rel/rel_prog_rpath" ]; then
  s=$(rel_dir secure); chmod 1777 "$s"; chmod 755 "$REL_TMP"
  cp "$REL_B/tests/rel/rel_prog_rpath" "$s/prog"; chown 65534 "$s/prog"
  rel_run "$s" inject GPUPHASE_OUTPUT="$s/plain.gpht" -- "$s/prog" basic 20 0
  [ "$(cat "$s/.rc")" = 0 ] && [ -e "$s/plain.gpht" ]
  rel_check $? "AT_SECURE control: without the set-user-ID bit the injected library should trace: rc $(cat "$s/.rc") $(head -c 300 "$s/.err")"
  chmod 4755 "$s/prog"
  t=$(rel_dir secure2); chmod 1777 "$t"
  rel_run "$t" inject GPUPHASE_OUTPUT="$t/secure.gpht" GPUPHASE_LOG=debug -- "$s/prog" basic 20 0
  [ "$(cat "$t/.rc")" = 0 ] && grep -q "basic 20 done" "$t/.out"
  rel_check $? "AT_SECURE: the set-user-ID program did not run normally: rc $(cat "$t/.rc") $(head -c 300 "$t/.err")"
  [ ! -e "$t/secure.gpht" ] && ! grep -aq '^gpuphase: ' "$t/.err"
  rel_check $? "AT_SECURE: the library was not inert: $(ls "$t") $(head -c 300 "$t/.err")"
elif [ "$(id -u)" != 0 ]; then
  rel_skip at_secure "it needs root (to make a set-user-ID copy owned by nobody)"
else
  rel_fail "AT_SECURE case: $REL_B/tests/rel/rel_prog_rpath is not built"
fi
rel_done
