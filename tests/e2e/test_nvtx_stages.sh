#!/usr/bin/env bash
# test_nvtx_stages.sh — docs/metrics.md §15 "NVTX-named stages" on simcuda:
# examples/gpu/nvtx_ranges opens one top-level NVTX range "gp::step" per step
# (with nested gp::fill / gp::scale ranges inside). Recorded with --nvtx, the
# ground truth is the trace's own NVTX push/pop records, read back with
# gpuphase-dump and paired here independently of the report: the count of
# depth-0 ranges per name, the sum of their durations, and the share of the
# traced time they cover. The report must name its stages by those ranges
# exactly when they cover at least half of the traced time (and use at most 8
# names), with count = STEPS, time = the summed ranges (to the nanosecond),
# share = time / traced. Two runs: a long one (ranges cover most of the run:
# NVTX stages) and a short one (simcuda's start-up dominates: ordinary stages).
# Environment (make test): GP_BUILD, GP_SRC, GP_SAN, GP_SAN_RUNTIME.
set -u
. "${GP_SRC:?GP_SRC not set}/tests/e2e/cli_common.sh"
R=$B/bin/gpuphase-report
D=$B/bin/gpuphase-dump
X=$B/examples/gpu/nvtx_ranges
require "$G" "$R" "$D" "$X" "$B/lib/libgpuphase.so" "$B/simcuda/libcudart.so.13"

check() { # STEPS EXPECT(nvtx|run)
	local steps=$1 expect=$2 t=$tmp/s$1
	"$G" record -q --nvtx -o "$t.gpht" -- "$X" "$steps" >"$t.out" 2>"$t.err" \
		|| { fail "$steps steps: record failed: $(cat "$t.err")"; return; }
	grep -q "steps=$steps .* ok" "$t.out" || { fail "$steps steps: program output: $(cat "$t.out")"; return; }
	"$D" "$t.gpht" >"$t.dump" 2>&1 || { fail "$steps steps: gpuphase-dump failed"; return; }
	"$R" --format json "$t.gpht" >"$t.json" 2>"$t.rerr" || { fail "$steps steps: report json: $(cat "$t.rerr")"; return; }
	"$R" "$t.gpht" >"$t.txt" 2>>"$t.rerr" || { fail "$steps steps: report text: $(cat "$t.rerr")"; return; }
	python3 - "$t.dump" "$t.json" "$t.txt" "$steps" "$expect" <<'PY' || fail "$steps steps: see above"
import json, re, sys
dump, js, txt, steps, expect = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
strings, stack, ranges = {}, {}, {}
for line in open(dump):
    m = re.match(r'string id=(\d+) len=\d+ text="(.*)"$', line.rstrip("\n"))
    if m:
        strings[int(m.group(1))] = m.group(2)
        continue
    if not line.startswith("marker "):
        continue
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    kind, tid, ts, depth = int(f["kind"]), f["tid"], int(f["ts"]), int(f["id"])
    if kind == 1:                                   # push: id = nesting depth
        stack.setdefault(tid, []).append((depth, int(f["name"]), ts))
    elif kind == 2 and stack.get(tid):              # pop
        d, name, t0 = stack[tid].pop()
        if d == 0:
            r = ranges.setdefault(strings.get(name, "?"), [0, 0, None, None])
            r[0] += 1
            r[1] += ts - t0
            r[2] = t0 if r[2] is None else min(r[2], t0)
            r[3] = ts if r[3] is None else max(r[3], ts)
bad = []
if set(ranges) != {"gp::step"} or ranges["gp::step"][0] != steps:
    bad.append("trace: top-level ranges %s, expected %d x gp::step" % ({k: v[0] for k, v in ranges.items()}, steps))
st = json.load(open(js))["analyses"][0]["stages"]
traced = st["traced_ns"]
covered = sum(v[1] for v in ranges.values())
want = "nvtx" if covered >= 0.5 * traced and len(ranges) <= 8 else "run"
print("%d steps: top-level NVTX ranges cover %.1f%% of the traced %.2f ms -> stages named by %s (report: %s)"
      % (steps, 100.0 * covered / traced, traced / 1e6, want, st["named_by"]))
if want != expect:
    bad.append("the run did not come out as planned (%s stages expected by construction, coverage says %s)" % (expect, want))
if st["named_by"] != want:
    bad.append("report names stages by %s, the rule says %s" % (st["named_by"], want))
text = open(txt).read()
if want == "nvtx":
    items = st["items"]
    if [i["name"] for i in items] != ["gp::step"]:
        bad.append("stages %s, expected [gp::step]" % [i["name"] for i in items])
    else:
        i, r = items[0], ranges["gp::step"]
        if i["count"] != r[0] or i["time_ns"] != r[1] or i["start_ns"] != r[2] or i["end_ns"] != r[3]:
            bad.append("gp::step stage count/time/start/end %s/%s/%s/%s, trace ranges %s"
                       % (i["count"], i["time_ns"], i["start_ns"], i["end_ns"], r))
        if abs(i["share"] - r[1] / traced) > 1e-5:
            bad.append("share %s, expected %.6f" % (i["share"], r[1] / traced))
    if "stages named by the program's top-level NVTX ranges" not in text or \
       not re.search(r"\n  gp::step +\S+ +\S+ \(%d ranges\)" % steps, text):
        bad.append("text report lacks the NVTX stage lines")
else:
    names = [i["name"] for i in st["items"]]
    if "gp::step" in names or "steady" not in names or "NVTX ranges" in text.split("Stages", 1)[-1].split("\n\n")[0]:
        bad.append("ordinary stages expected, got %s" % names)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
}

check 4000 nvtx
check 5 run
finish
