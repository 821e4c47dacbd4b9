#!/usr/bin/env bash
# test_report_cli.sh — gpuphase-report as a command: output formats and their
# options, bad input (corrupt, truncated, empty, foreign, missing files, bad
# options: one clear message naming the file/option, documented exit status,
# no crash), diff and its --fail-above gate, the Chrome-trace / SQLite / HTML
# exports, and merging several traces with stragglers. Traces come from the
# sync_bound example run under libgpuphase.so on simcuda.
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME.
set -u
B=${GP_BUILD:?GP_BUILD not set}
S=${GP_SRC:?GP_SRC not set}
R=$B/bin/gpuphase-report
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for f in "$R" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13" "$B/examples/sync_bound"; do
	[ -e "$f" ] || { echo "FAIL: $f is missing (not built?)"; exit 1; }
done
tmp=$(mktemp -d /tmp/gp_report_cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
preload=$B/lib/libgpuphase.so
asan_opts=${ASAN_OPTIONS:-}
if [ "${GP_SAN:-}" = asan ] && [ -n "${GP_SAN_RUNTIME:-}" ]; then
	preload="$GP_SAN_RUNTIME:$preload"
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}"
fi
# trace NAME COSTMODEL [ENV...]: run sync_bound into $tmp/NAME.gpht
trace() {
	local name=$1 model=$2
	shift 2
	(cd "$tmp" && env "$@" ASAN_OPTIONS="$asan_opts" LD_PRELOAD="$preload" \
		LD_LIBRARY_PATH="$B/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" SIMCUDA_CONFIG="$model" \
		GPUPHASE_OUTPUT="$tmp/$name.gpht" "$B/examples/sync_bound" >/dev/null 2>&1) || fail "$name: sync_bound failed"
}
# expect RC DESCRIPTION CMD...: run, check the exit status, keep stdout/stderr
expect() {
	local want=$1 what=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ "$rc" = "$want" ] || fail "$what: exit $rc, expected $want (stderr: $(head -3 "$tmp/err"))"
	grep -q "AddressSanitizer\|runtime error" "$tmp/err" && fail "$what: sanitizer report: $(head -5 "$tmp/err")"
}
py() { python3 - "$@"; }

trace base "$S/examples/sync_bound.simcuda"
sed 's/^kernel step_kernel exec_ns=300000/kernel step_kernel exec_ns=3000000/' "$S/examples/sync_bound.simcuda" >"$tmp/slow.simcuda"
trace slow "$tmp/slow.simcuda"
T=$tmp/base.gpht

# --- formats ----------------------------------------------------------------
expect 0 "text" "$R" "$T"
grep -q "^step_kernel .* sync-bound" "$tmp/out" || fail "text: no step_kernel row with its verdict"
grep -q "verdict (whole run): sync-bound" "$tmp/out" || fail "text: no whole-run verdict"
expect 0 "json" "$R" --format json "$T"
cp "$tmp/out" "$tmp/base.json"
py "$tmp/base.json" <<'PY' || fail "json: schema check"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "gpuphase-report" and d["schema_version"] == 2
for k in ("wall_ns", "gpu_busy_ns", "unattributed_ns", "dropped_records", "join_coverage"):
    assert k in d["summary"], k
ops = d["operators"]
assert ops, "no operators"
for o in ops:
    for k in ("name", "count", "launch_ns", "queue_ns", "execute_ns", "sync_ns", "total_ns", "verdict"):
        assert k in o, k
    assert o["total_ns"] == o["launch_ns"] + o["execute_ns"] + o["sync_ns"]
tot = [o["total_ns"] for o in ops]
assert tot == sorted(tot, reverse=True), "not sorted by total"
s = d["summary"]
assert s["launch_ns"] == sum(o["launch_ns"] for o in ops)
assert s["sync_ns"] == sum(o["sync_ns"] for o in ops)
assert 0 <= s["join_coverage"] <= 1
assert s["gpu_busy_ns"] <= s["wall_ns"]
PY
expect 0 "json --top 1" "$R" --format json --top 1 "$T"
py "$tmp/out" <<'PY' || fail "--top 1 gives one operator"
import json, sys; sys.exit(0 if len(json.load(open(sys.argv[1]))["operators"]) == 1 else 1)
PY
expect 0 "json --filter" "$R" --format json --filter '^memcpy' --sort name "$T"
py "$tmp/out" <<'PY' || fail "--filter/--sort name"
import json, sys
names = [o["name"] for o in json.load(open(sys.argv[1]))["operators"]]
sys.exit(0 if names and all(n.startswith("memcpy") for n in names) and names == sorted(names) else 1)
PY
expect 0 "csv" "$R" --format csv "$T"
head -1 "$tmp/out" | grep -q "^operator,long_name,count,total_ns" || fail "csv: header"
[ "$(($(wc -l <"$tmp/out") - 1))" = "$(py "$tmp/base.json" <<<'import json,sys; print(len(json.load(open(sys.argv[1]))["operators"]))')" ] ||
	fail "csv: one row per operator"
expect 0 "markdown" "$R" --format markdown "$T"
grep -q "^| operator | count |" "$tmp/out" || fail "markdown: table header"
expect 0 "group-by stream" "$R" --group-by stream --format json "$T"
grep -q '"name": "device 0 stream' "$tmp/out" || fail "group-by stream: names"
expect 0 "group-by callsite" "$R" --group-by callsite "$T"
expect 0 "thresholds" "$R" --format json --thresholds sync=95,launch=20,execute=95 "$T"
py "$tmp/out" <<'PY' || fail "--thresholds changes the verdict"
import json, sys
ops = {o["name"]: o for o in json.load(open(sys.argv[1]))["operators"]}
sys.exit(0 if ops["step_kernel"]["verdict"] != "sync-bound" else 1)
PY

# --- bad input ---------------------------------------------------------------
expect 2 "missing file" "$R" "$tmp/nope.gpht"
grep -q "$tmp/nope.gpht" "$tmp/err" || fail "missing file: message does not name the file"
: >"$tmp/empty.gpht"
expect 2 "empty file" "$R" "$tmp/empty.gpht"
grep -q "empty.gpht" "$tmp/err" || fail "empty file: message does not name the file"
cp /bin/sh "$tmp/foreign.gpht"
expect 2 "foreign file" "$R" "$tmp/foreign.gpht"
grep -q "foreign.gpht" "$tmp/err" || fail "foreign file: message does not name the file"
size=$(stat -c %s "$T")
cp "$T" "$tmp/corrupt.gpht"
printf '\xde\xad\xbe\xef\xde\xad\xbe\xef' | dd of="$tmp/corrupt.gpht" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
expect 2 "corrupt file" "$R" "$tmp/corrupt.gpht"
grep -q "corrupt.gpht" "$tmp/err" || fail "corrupt file: message does not name the file"
head -c $((size - 7)) "$T" >"$tmp/cut.gpht"
expect 3 "truncated file" "$R" "$tmp/cut.gpht"
grep -q "cut.gpht: truncated" "$tmp/err" || fail "truncated: message"
grep -q "^step_kernel" "$tmp/out" || fail "truncated: the report of the data before the cut is missing"
expect 0 "truncated --allow-truncated" "$R" --allow-truncated "$tmp/cut.gpht"
expect 2 "bad --format" "$R" --format yaml "$T"
grep -q -- "--format: 'yaml'" "$tmp/err" || fail "bad --format: message"
expect 2 "bad --filter" "$R" --filter '(' "$T"
expect 2 "bad --thresholds" "$R" --thresholds sync=abc "$T"
# one number parser for every command line: a value refused by one (nan,
# inf, a negative) is refused by all, and one taken by one is taken by all
for v in nan inf -inf -1 0 1e400; do
	expect 2 "--outlier-factor $v" "$R" --outlier-factor "$v" "$T"
	grep -q -- "--outlier-factor: '$v'" "$tmp/err" || fail "--outlier-factor $v: message"
	rm -f "$tmp/of.gpp"
	expect 2 "--outlier-factor $v --partial" "$R" --partial --outlier-factor "$v" -o "$tmp/of.gpp" "$T"
	[ -e "$tmp/of.gpp" ] && fail "--outlier-factor $v --partial: wrote a partial result"
done
for v in nan inf -1; do
	expect 2 "--straggler-pct $v" "$R" --straggler-pct "$v" "$T"
	expect 2 "--fail-above $v" "$R" diff --fail-above "$v" "$T" "$T"
	expect 2 "--thresholds sync=$v" "$R" --thresholds "sync=$v" "$T"
	expect 2 "stability --cv-pct $v" "$R" stability --cv-pct "$v" "$T" "$T"
done
expect 0 "--outlier-factor 1.25" "$R" --outlier-factor 1.25 "$T"
expect 0 "--outlier-factor 1.25 --partial" "$R" --partial --outlier-factor 1.25 -o "$tmp/of.gpp" "$T"
expect 0 "--outlier-factor 1.25 --merge" "$R" --merge --outlier-factor 1.25 "$tmp/of.gpp"
expect 2 "no trace" "$R"
expect 2 "bad export format" "$R" --export pdf "$tmp/x.pdf" "$T"
expect 0 "help" "$R" --help
grep -q "usage: gpuphase-report" "$tmp/out" || fail "help text"

# --- diff ---------------------------------------------------------------------
expect 0 "diff same" "$R" diff --fail-above 5 "$T" "$T"
expect 1 "diff regression gate" "$R" diff --fail-above 10 "$T" "$tmp/slow.gpht"
grep -q "REGRESSED" "$tmp/out" || fail "diff: gate line"
grep -q "^step_kernel" "$tmp/out" || fail "diff: per-operator row"
expect 0 "diff improvement" "$R" diff --fail-above 10 --top 1 "$tmp/slow.gpht" "$T"
expect 0 "diff json" "$R" diff --format json "$T" "$tmp/slow.gpht"
py "$tmp/out" <<'PY' || fail "diff json deltas"
import json, sys
d = json.load(open(sys.argv[1]))
ops = {o["name"]: o for o in d["operators"]}
k = ops["step_kernel"]
assert k["delta_execute_ns"] > 0 and k["new_total_ns"] > k["base_total_ns"]
PY
expect 2 "diff one file" "$R" diff "$T"

# --- exports --------------------------------------------------------------------
expect 0 "chrome export" "$R" --export chrome-trace "$tmp/t.json" "$T"
py "$tmp/t.json" "$tmp/base.json" <<'PY' || fail "chrome trace content"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
rep = json.load(open(sys.argv[2]))
ops = sum(o["count"] for o in rep["operators"])
gpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
api = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")]
s = [e for e in ev if e.get("ph") == "s"]
f = [e for e in ev if e.get("ph") == "f"]
assert len(gpu) == ops, (len(gpu), ops)
assert api and len(s) == len(f) == ops, (len(s), len(f))
assert {e["id"] for e in s} == {e["id"] for e in f}
assert all(e["pid"] != api[0]["pid"] for e in gpu), "GPU ops on the host track"
assert any(e.get("cat") == "gpuphase_sync" for e in ev)
assert any(e.get("name") == "process_name" for e in ev)
PY
expect 0 "sqlite export" "$R" --export sqlite "$tmp/t.db" "$T"
py "$tmp/t.db" "$tmp/base.json" <<'PY' || fail "sqlite content vs the report"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rep = {o["name"]: o for o in json.load(open(sys.argv[2]))["operators"]}
rows = db.execute("SELECT name, count, launch_ns, queue_ns, execute_ns, sync_ns, total_ns FROM GPUPHASE_OPERATOR_SUMMARY").fetchall()
assert rows
for name, n, l, q, e, s, t in rows:
    o = rep[name]
    assert (n, l, q, e, s, t) == (o["count"], o["launch_ns"], o["queue_ns"], o["execute_ns"], o["sync_ns"], o["total_ns"]), (name, (n, l, q, e, s, t), o)
for table in ("StringIds", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "GPUPHASE_SYNCS", "GPUPHASE_ITERATIONS"):
    assert db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] > 0, table
PY
expect 0 "html export" "$R" --export html "$tmp/t.html" "$T"
grep -q "<svg" "$tmp/t.html" || fail "html: no inline SVG"
grep -q "step_kernel" "$tmp/t.html" || fail "html: no operator"
grep -qiE "<script[^>]* src=|<link|src=['\"]http" "$tmp/t.html" && fail "html: not self-contained"
expect 2 "export to an unwritable path" "$R" --export html /nonexistent/dir/x.html "$T"
grep -q "/nonexistent/dir/x.html" "$tmp/err" || fail "unwritable export: message does not name the file"

# --- several traces ---------------------------------------------------------------
# two runs that are not one job (no rank variables, no job id): one report
# after the other, never merged
expect 0 "not one job" "$R" "$T" "$tmp/slow.gpht"
[ "$(grep -c '^gpuphase report: ' "$tmp/out")" = 2 ] || fail "not one job: not two reports"
grep -q "inputs .*merged" "$tmp/out" && fail "not one job: merged"
expect 2 "not one job: export refused" "$R" --export html "$tmp/two.html" "$T" "$tmp/slow.gpht"
# ranks of one job (RANK / WORLD_SIZE in the environment) merge by themselves
trace rank0 "$S/examples/sync_bound.simcuda" RANK=0 WORLD_SIZE=2
trace rank1 "$tmp/slow.simcuda" RANK=1 WORLD_SIZE=2
expect 0 "one job" "$R" --format json "$tmp/rank0.gpht" "$tmp/rank1.gpht"
py "$tmp/out" <<'PY' || fail "one job: not merged as ranks, or idle > devices x wall"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
print("ranks", len(d["ranks"]), "wall", s["wall_ns"], "idle", s["gpu_idle_ns"])
assert len(d["ranks"]) == 2
assert s["gpu_idle_ns"] <= 2 * s["wall_ns"]
PY
expect 0 "merge" "$R" --format json --merge "$T" "$tmp/slow.gpht"
py "$tmp/out" "$tmp/base.json" <<'PY' || fail "merged report and stragglers"
import json, sys
d = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
assert len(d["ranks"]) == 2
assert d["summary"]["ops"] == 2 * b["summary"]["ops"]
st = [r["straggler"] for r in d["ranks"]]
assert st == [False, True], st
PY
expect 0 "merge text" "$R" --merge "$T" "$tmp/slow.gpht"
grep -q "slow.gpht.*<- straggler" "$tmp/out" || fail "merge text: straggler not named"

[ "$fails" = 0 ] && echo "test_report_cli.sh: all checks passed"
[ "$fails" = 0 ]
