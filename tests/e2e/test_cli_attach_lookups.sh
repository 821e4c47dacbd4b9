#!/usr/bin/env bash
# test_cli_attach_lookups.sh — `gpuphase attach` and the runtime functions a
# program looks up itself: tests/e2e/attach_lookups, started without
# gpuphase on simcuda, launches one kernel per way of reaching
# cudaLaunchKernel (its import, dlsym, dlvsym, dlsym(RTLD_DEFAULT), a pointer
# taken at start-up, a pointer taken while attached). Specification:
#  * while attached, the runtime's exports of the hooked functions point at
#    gpuphase's hooks, so every lookup made meanwhile returns the hook: the
#    launches through them are in the trace with their hook records;
#  * a pointer taken before the attach still reaches the runtime directly:
#    its launches are in the trace from CUPTI alone, with the truth's timing;
#    the report joins them (coverage 100 %), counts them (ops_no_hook) and
#    says why; the trace header says what was hooked (attach_hooks);
#  * attach_lookups_check.py holds each capture against simcuda's truth:
#    every kernel of the window, no more, each the truth's own;
#  * a pointer taken while attached keeps working after the detach (the hook
#    passes through) and is hooked again by the next attach; after each
#    detach the runtime's symbol table is as in its file again, so dlsym
#    returns the runtime's own function;
#  * the program runs its iterations back to back (LOOKUPS_PAUSE_US=0), so
#    that an attach's patch spans several of them: the window opens only at
#    an iteration boundary after the whole patch (GOT entries and exports),
#    so no captured iteration looked its pointers up before the exports
#    were redirected (counting markers during the patch failed this test
#    two runs in three);
#  * the program sees 0 failed calls throughout; each stop is short (as in
#    test_cli_attach.sh: its own work under 50 ms, all of it under 1 s).
set -u
. "$(dirname "$0")/cli_common.sh"
P=$B/tests/e2e/attach_lookups
require "$G" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$P" "$B/bin/gpuphase-dump" \
	"$B/bin/gpuphase-report"
unset SIMCUDA_CONFIG

# The runtime's dynamic symbol table in the process against its file:
# want=restored (every entry as in the file) or want=patched (the hooked
# launch entry points into libgpuphase.so).
exports() { # $1 pid, $2 want
	python3 - "$1" "$2" "$B/simcuda/libcudart.so.13" <<'PY'
import os, struct, subprocess, sys
pid, want, path = sys.argv[1], sys.argv[2], os.path.realpath(sys.argv[3])
maps = [l.split() for l in open("/proc/%s/maps" % pid)]
base = min(int(m[0].split("-")[0], 16) - int(m[2], 16) for m in maps if len(m) > 5 and m[5] == path)
lib = [tuple(int(x, 16) for x in m[0].split("-")) for m in maps if len(m) > 5 and m[5].endswith("libgpuphase.so")]
dyn = subprocess.run(["readelf", "-dW", path], capture_output=True, text=True).stdout
symtab = next(int(l.split()[2], 16) for l in dyn.splitlines() if "(SYMTAB)" in l)
syms = {}
for l in subprocess.run(["readelf", "--dyn-syms", "-W", path], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if len(f) >= 8 and f[0].endswith(":") and f[0][:-1].isdigit():
        syms[int(f[0][:-1])] = (int(f[1], 16), f[7].split("@")[0])
mem = open("/proc/%s/mem" % pid, "rb")
changed, hooked = [], 0
for i, (val, name) in sorted(syms.items()):
    mem.seek(base + symtab + 24 * i + 8)
    v = struct.unpack("<Q", mem.read(8))[0]
    if v != val:
        changed.append(name)
        hooked += any(lo <= (base + v) % 2**64 < hi for lo, hi in lib)
if want == "restored" and changed:
    sys.exit("%d runtime exports still changed: %s" % (len(changed), " ".join(changed[:5])))
if want == "patched" and ("cudaLaunchKernel" not in changed or hooked != len(changed)):
    sys.exit("exports changed: %d (%d into libgpuphase.so), cudaLaunchKernel %s" %
             (len(changed), hooked, "changed" if "cudaLaunchKernel" in changed else "not changed"))
print("runtime exports %s: %d entries differ from the file" % (want, len(changed)))
PY
}

: >"$tmp/p.err"
LOOKUPS_PAUSE_US=0 SIMCUDA_TRUTH=$tmp/truth.jsonl "$P" >"$tmp/p.out" 2>"$tmp/p.err" &
prog=$!
pid=$(await_pid "$tmp/p.err" attach_lookups)
[ -n "$pid" ] || { fail "attach_lookups did not start: $(cat "$tmp/p.err")"; finish; exit 1; }
exports "$pid" restored || fail "before any attach: exports differ"

# Attach 1, long: while it captures, the program takes its kept pointer.
"$G" attach "$pid" --iters 1000000 -o "$tmp/a1.gpht" >/dev/null 2>"$tmp/a1.err" &
att=$!
for _ in $(seq 1 400); do grep -q capturing "$tmp/a1.err" && break; sleep 0.05; done
grep -q "runtime exports redirected" "$tmp/a1.err" || fail "attach 1: no exports redirected: $(cat "$tmp/a1.err")"
exports "$pid" patched || fail "attach 1: exports not patched while attached"
kill -USR1 "$pid"
for _ in $(seq 1 400); do grep -q "kept pointer taken" "$tmp/p.err" && break; sleep 0.05; done
grep -q "kept pointer taken (hook)" "$tmp/p.err" ||
	fail "dlsym while attached did not return the hook: $(grep kept "$tmp/p.err")"
kill -INT "$att"
wait "$att"; rc=$?
[ "$rc" = 0 ] || fail "attach 1 exit $rc: $(cat "$tmp/a1.err")"
grep -q "stopped early" "$tmp/a1.err" || fail "attach 1: $(cat "$tmp/a1.err")"
exports "$pid" restored || fail "after attach 1: exports not restored"

# Attaches 2 and 3: 20 iterations each, checked against the truth. The
# kept pointer (taken during attach 1) is the hook; the start-up one is not.
for k in 2 3; do
	timeout 120 "$G" attach "$pid" --iters 20 -o "$tmp/a$k.gpht" >/dev/null 2>"$tmp/a$k.err"; rc=$?
	[ "$rc" = 0 ] || { fail "attach $k exit $rc: $(cat "$tmp/a$k.err")"; continue; }
	stop=$(sed -n 's/.* stopped for \([0-9.]*\) ms (\([0-9.]*\) ms of work.*/\1 \2/p' "$tmp/a$k.err")
	echo "attach $k: target thread stopped for ${stop% *} ms (${stop#* } ms of work)"
	awk -v m="${stop% *}" -v w="${stop#* }" 'BEGIN { exit !(w < 50 && m < 1000) }' ||
		fail "attach $k: stop of $stop ms"

	exports "$pid" restored || fail "after attach $k: exports not restored"
done
kill -TERM "$pid"
wait "$prog"; rc=$?
[ "$rc" = 0 ] || fail "attach_lookups exit $rc: $(cat "$tmp/p.err")"
grep -q "errors 0 kept=hook late=runtime" "$tmp/p.out" ||
	fail "the program after the detaches: $(cat "$tmp/p.out") (want 0 errors, kept=hook, late=runtime)"
cat "$tmp/p.out"

for k in 2 3; do
	[ -s "$tmp/a$k.gpht" ] || continue
	"$B/bin/gpuphase-dump" "$tmp/a$k.gpht" >"$tmp/d$k" 2>&1 || { fail "attach $k: dump failed"; continue; }
	grep -q '^# attach_hooks=.*runtime exports; function pointers the program took before the attach are not hooked' \
		"$tmp/d$k" || fail "attach $k: no attach_hooks in the trace header"
	"$B/bin/gpuphase-report" --format json "$tmp/a$k.gpht" >"$tmp/r$k.json" 2>"$tmp/r$k.err" ||
		{ fail "attach $k: report failed: $(head -3 "$tmp/r$k.err")"; continue; }
	echo "attach $k:"
	python3 "$S/tests/e2e/attach_lookups_check.py" "$tmp/d$k" "$tmp/truth.jsonl" "$tmp/r$k.json" --iters 20 \
		--hooked lk_direct,lk_late,lk_vsym,lk_default,lk_kept --unhooked lk_early ||
		fail "attach $k: the trace against the truth (above)"
	"$B/bin/gpuphase-report" "$tmp/a$k.gpht" >"$tmp/r$k.txt" 2>&1
	grep -q "note: 20 ops were called through a function pointer the attach could not hook" "$tmp/r$k.txt" ||
		fail "attach $k: the report does not say why 20 ops have no hook: $(sed -n '/^Capture/,/^$/p' "$tmp/r$k.txt")"
done
finish
