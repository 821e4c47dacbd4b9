#!/usr/bin/env bash
# test_cli_static.sh — `gpuphase record` on a program statically linked to
# the CUDA runtime. Specification: the warning "statically linked to the CUDA
# runtime ... injection only; launch-phase hooks lost" comes before the program
# runs (also for a stripped copy), never for the same source built with
# -cudart shared or for a script; the exit status passes through; and the
# trace, when CUDA could start, is injection-only: a GP_REC_STATUS
# HOOKS_ABSENT record and no hook records. Where the static runtime finds no
# CUDA driver (simcuda provides the runtime as a shared library only, so a
# static cudart on a machine without a GPU has nothing to talk to) the
# program reports the missing driver and no trace is written — and the
# summary line must say so.
set -u
. "$(dirname "$0")/cli_common.sh"
require "$G" "$B/lib/libgpuphase.so" "$B/tests/cli_app_static" "$B/tests/cli_app_shared" "$B/bin/gpuphase-dump"

warn='statically linked to the CUDA runtime (cudart): injection only; launch-phase hooks lost'

"$G" record -o "$tmp/st.gpht" -- "$B/tests/cli_app_static" 4 3 >"$tmp/out" 2>"$tmp/err"; rc=$?
[ "$rc" = 4 ] || fail "static app exit 4: record returned $rc"
grep -qF "$warn" "$tmp/err" || fail "no static-cudart warning: $(cat "$tmp/err")"
# Injection only: LD_PRELOAD is left as it was (a preloaded library would
# take its hooks, which never fire, for working ones); CUDA_INJECTION64_PATH
# names the library. The shared build gets both.
LIB=$(realpath "$B/lib/libgpuphase.so")
CLI_APP_SHOW_ENV=1 "$G" record -q -o "$tmp/e1.gpht" -- "$B/tests/cli_app_static" 0 0 >"$tmp/env_st" 2>/dev/null
grep -qxF "LD_PRELOAD=${LD_PRELOAD:-(unset)}" "$tmp/env_st" || fail "static app: LD_PRELOAD changed: $(cat "$tmp/env_st")"
grep -qxF "CUDA_INJECTION64_PATH=$LIB" "$tmp/env_st" || fail "static app: no injection: $(cat "$tmp/env_st")"
CLI_APP_SHOW_ENV=1 "$G" record -q -o "$tmp/e2.gpht" -- "$B/tests/cli_app_shared" 0 0 >"$tmp/env_sh" 2>/dev/null
grep -qxF "LD_PRELOAD=${LD_PRELOAD:+$LD_PRELOAD:}$LIB" "$tmp/env_sh" || fail "shared app: not preloaded: $(cat "$tmp/env_sh")"
grep -qxF "CUDA_INJECTION64_PATH=$LIB" "$tmp/env_sh" || fail "shared app: no injection: $(cat "$tmp/env_sh")"
w=$(grep -nF "$warn" "$tmp/err" | head -n 1 | cut -d: -f1)
a=$(grep -n '^cli_app' "$tmp/err" | head -n 1 | cut -d: -f1)
[ -z "$a" ] || [ "$w" -lt "$a" ] || fail "warning printed after the program's own output"

if [ -s "$tmp/st.gpht" ]; then
	"$B/bin/gpuphase-dump" "$tmp/st.gpht" >"$tmp/dump" 2>&1 || fail "gpuphase-dump failed on the static trace"
	grep -q '^status kind=4 ' "$tmp/dump" || fail "static trace lacks the HOOKS_ABSENT (injection-only) status"
	grep -q '^hook_api ' "$tmp/dump" && fail "static trace holds hook records: hooks cannot see a static cudart"
	grep -q '^kernel ' "$tmp/dump" || fail "static trace holds no kernels: CUPTI injection saw nothing"
else
	grep -q 'no trace written .*statically linked CUDA runtime loads the injection library only once the CUDA driver starts' "$tmp/err" \
		|| fail "no trace and no 'no trace written' line that explains why: $(cat "$tmp/err")"
	grep -q '^cli_app: cudaMalloc: ' "$tmp/err" || fail "no trace although CUDA started: $(cat "$tmp/err")"
fi

strip -o "$tmp/stripped" "$B/tests/cli_app_static" || fail "strip failed"
"$G" record -o "$tmp/st2.gpht" -- "$tmp/stripped" 0 1 >/dev/null 2>"$tmp/err"
grep -qF "$warn" "$tmp/err" || fail "stripped static app: no warning"

"$G" record -o "$tmp/sh.gpht" -- "$B/tests/cli_app_shared" 0 1 >/dev/null 2>"$tmp/err"
grep -q 'statically linked' "$tmp/err" && fail "shared-cudart app got the static warning"
printf '#!/bin/sh\nexit 0\n' >"$tmp/script"; chmod +x "$tmp/script"
"$G" record -o "$tmp/sc.gpht" -- "$tmp/script" 2>"$tmp/err"
grep -q 'warning' "$tmp/err" && fail "a script got a warning: $(cat "$tmp/err")"

finish
