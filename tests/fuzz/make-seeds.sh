#!/usr/bin/env bash
# tests/fuzz/make-seeds.sh OUTDIR — the fuzz seed corpus: small real traces of
# rel_prog (tests/reliability/rel_prog.c) on simcuda under libgpuphase.so, one
# per capture shape (CUPTI on / hook-only, stacks, several threads, a size
# cap, a SIGKILL mid-run), each under 64 KiB, and the partial results
# (docs/partial-format.md) of two of them. Called by `make fuzz` (through
# the seeds stamp) and by tests/fuzz/test_fuzz_regress.sh.
set -eu
out=$1
B=$(cd "${GP_BUILD:-build}" && pwd)
mkdir -p "$out"
work=$(mktemp -d /tmp/gpseeds-XXXXXX)
trap 'rm -rf "$work"' EXIT
seed() { # name [VAR=VALUE...] -- args
  local name=$1; shift
  local -a envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  local d="$work/$name"; mkdir -p "$d"
  local pre="$B/lib/libgpuphase.so"
  [ -n "${GP_SAN:-}" ] && [ -n "${GP_SAN_RUNTIME:-}" ] && pre="$GP_SAN_RUNTIME:$pre"
  (cd "$d" && timeout 60 env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$B/simcuda" LD_PRELOAD="$pre" \
     ASAN_OPTIONS=detect_leaks=0 GPUPHASE_OUTPUT=seed.gpht "${envs[@]}" "$B/tests/rel/rel_prog" "$@" \
     >/dev/null 2>&1) 2>/dev/null || true # (the shell's "Killed" note for the SIGKILL seed)
  if [ -f "$d/seed.gpht" ] && [ "$(stat -c %s "$d/seed.gpht")" -le 65536 ]; then
    cp "$d/seed.gpht" "$out/$name.gpht"
  else
    echo "make-seeds: $name: no trace under 64 KiB" >&2
    return 1
  fi
}
seed basic -- basic 12 0
seed hookonly GPUPHASE_CUPTI=0 -- basic 12 0
seed stacks GPUPHASE_STACKS=all -- basic 6 0
seed threads -- threads 2 3 8
seed capped GPUPHASE_MAX_BYTES=12k -- threads 1 1 400
seed killed GPUPHASE_FLUSH_MS=5 -- crash kill 10 100 20
for name in basic stacks; do
  "$B/bin/gpuphase-report" --partial -o "$out/$name.gpp" "$out/$name.gpht" 2>/dev/null ||
    { echo "make-seeds: $name: no partial results" >&2; exit 1; }
done
ls "$out"/*.gpht | wc -l | sed 's/^/make-seeds: traces: /'
