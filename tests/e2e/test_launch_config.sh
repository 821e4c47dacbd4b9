#!/usr/bin/env bash
# test_launch_config.sh — kernel launch configurations end to end on simcuda
# (tests/e2e/launch_config.cu, launch_config.simcuda): the grid, block,
# registers per thread and shared memory CUPTI's kernel records carry reach
# the trace (interned GP_REC_LAUNCH_CFG records, a kernel record refers to
# one by id), the report's JSON per operator (launch_config, the one-block
# kernel said to leave the GPU mostly idle, the two-configuration kernel
# counted as such), its text, every kernel row of the SQLite export and
# every kernel event's args in the Chrome trace. Tamper control: the same
# program with LC_FORGE=1 launches lc_tiny with 2 blocks, and the check
# must refuse that recording.
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME; KEEP=1
# keeps the files.
set -u
tmp_name=gp_launch_config
# shellcheck source=tests/e2e/report_common.sh
. "${GP_SRC:?GP_SRC not set}/tests/e2e/report_common.sh"
for f in "$R" "$B/bin/gpuphase-dump" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/tests/e2e/launch_config"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done

# one NAME ENV...: record, dump, report (text, JSON), export (SQLite, Chrome)
one() {
	local name=$1
	shift
	(cd "$tmp" && env "$@" ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" LD_LIBRARY_PATH="$B/simcuda" \
		SIMCUDA_CONFIG="$S/tests/e2e/launch_config.simcuda" GPUPHASE_OUTPUT="$tmp/$name.gpht" \
		"$B/tests/e2e/launch_config" >"$tmp/$name.out" 2>&1) ||
		{ echo "$name: program failed: $(tail -2 "$tmp/$name.out")"; return 1; }
	"$B/bin/gpuphase-dump" "$tmp/$name.gpht" >"$tmp/$name.dump" 2>"$tmp/$name.err" &&
		"$R" "$tmp/$name.gpht" >"$tmp/$name.txt" 2>>"$tmp/$name.err" &&
		"$R" --format json "$tmp/$name.gpht" >"$tmp/$name.json" 2>>"$tmp/$name.err" &&
		"$R" --export sqlite "$tmp/$name.db" --export chrome-trace "$tmp/$name.chrome.json" \
			"$tmp/$name.gpht" >/dev/null 2>>"$tmp/$name.err" ||
		{ echo "$name: report failed: $(head -2 "$tmp/$name.err")"; return 1; }
}

# check NAME: every output against the program's configurations; prints
# what differs, exits 1 if anything does
check() {
	python3 - "$tmp/$1" <<'PY'
import json, sqlite3, sys
base = sys.argv[1]
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)
# name: (grid, block, regs, static, dynamic, launches, others, idle)
WANT = {
    "lc_tiny": ((1, 1, 1), (64, 1, 1), 32, 0, 0, 10, 0, True),
    "lc_wide": ((264, 2, 1), (128, 2, 1), 96, 4096, 1024, 10, 0, False),
    "lc_mixed": ((4, 1, 1), (32, 1, 1), 32, 0, 0, 5, 3, True),
}
ROWS = {"lc_tiny": [WANT["lc_tiny"][:5]] * 10, "lc_wide": [WANT["lc_wide"][:5]] * 10,
        "lc_mixed": [((4, 1, 1), (32, 1, 1), 32, 0, 0)] * 5 + [((8, 1, 1), (32, 1, 1), 32, 0, 0)] * 3}
# the trace: one interned record per distinct configuration, every kernel refers to one
dump = open(base + ".dump").read().splitlines()
cfgs = {l.split()[1]: l for l in dump if l.startswith("launch_cfg ")}
want(len(cfgs) == 4, f"trace: {len(cfgs)} launch_cfg records, the program has 4 configurations")
for l in dump:
    if l.startswith("kernel ") and "cfg=" not in l:
        want(False, f"trace: a kernel without its configuration: {l}")
        break
# JSON per operator
rep = json.load(open(base + ".json"))
ops = {o["name"]: o for o in rep["operators"]}
for n, (grid, block, regs, st, dyn, nl, no, idle) in WANT.items():
    c = ops.get(n, {}).get("launch_config")
    if not c:
        want(False, f"json: {n} has no launch_config")
        continue
    got = (tuple(c["grid"]), tuple(c["block"]), c["registers_per_thread"], c["static_shared_memory"],
           c["dynamic_shared_memory"], c["launches"], c["other_launches"], c["leaves_gpu_idle"])
    want(got == (grid, block, regs, st, dyn, nl, no, idle), f"json: {n}: {got}, the program's {WANT[n]}")
    want(c["device_sms"] == 132, f"json: {n}: device_sms {c['device_sms']}, simcuda has 132")
# text: the idle kernels named, the wide one not
txt = open(base + ".txt").read()
for n, w in WANT.items():
    line = next((l for l in txt.splitlines() if l.strip().startswith(n + ": grid")), None)
    want(line is not None, f"text: no launch configuration line for {n}")
    if line:
        want(("leaves the GPU mostly idle" in line) == w[7], f"text: {line.strip()}")
# SQLite: every kernel row, nsys's columns
db = sqlite3.connect(base + ".db")
q = ("SELECT s.value, k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ, k.registersPerThread,"
     " k.staticSharedMemory, k.dynamicSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL k"
     " JOIN StringIds s ON k.shortName = s.id ORDER BY k.start")
got = {}
for r in db.execute(q):
    got.setdefault(r[0], []).append(((r[1], r[2], r[3]), (r[4], r[5], r[6]), r[7], r[8], r[9]))
for n, rows in ROWS.items():
    want(got.get(n) == rows, f"sqlite: {n}: {got.get(n)}")
# Chrome trace: every kernel event's args, Kineto's names
ev = json.load(open(base + ".chrome.json"))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
got = {}
for e in ev:
    if e.get("cat") == "kernel" and e.get("ph") == "X":
        a = e["args"]
        got.setdefault(e["name"], []).append((tuple(a.get("grid", ())), tuple(a.get("block", ())),
                                              a.get("registers per thread"), a.get("shared memory")))
for n, rows in ROWS.items():
    exp = [(g, b, r, st + dyn) for g, b, r, st, dyn in rows]
    want(got.get(n) == exp, f"chrome: {n}: {got.get(n)}")
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
}

if one good; then
	check good || fail "the launch configurations differ from the program's"
else
	fail "good run"
fi
# tamper control: lc_tiny launched with 2 blocks must be refused
if one forged LC_FORGE=1; then
	check forged >"$tmp/forged.check" && fail "tamper control: a 2-block lc_tiny passed the check"
	grep -q "lc_tiny" "$tmp/forged.check" || fail "tamper control: refused, but not for lc_tiny: $(cat "$tmp/forged.check")"
else
	fail "forged run"
fi
[ "$fails" -eq 0 ] && echo "PASS: test_launch_config"
exit $((fails > 0))
