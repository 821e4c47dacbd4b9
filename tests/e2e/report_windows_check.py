#!/usr/bin/env python3
"""report_windows_check.py — the stages of a windowed capture against
simcuda's truth (docs/metrics.md §15, "In a windowed capture"): the stages
are taken over the capture windows only.

usage: report_windows_check.py TRUTH.jsonl REPORT.json REPORT.txt [warm=KERNEL] [export=SQLITE]

Checks, with the windows the report found (summary.windows):
  * the listed stages' times add up to the window wall (each stage's time is
    its part inside the windows), their shares to 1; none is "before
    window" or has no captured time;
  * not_captured: between_ns = the gaps between the windows, before_ns = the
    time from the traced start to the first window;
  * the text says "over the ... capture window(s) only" and "not captured:";
  * every window lies where CUPTI really collected: its start mark after
    simcuda's truth says CUPTI's kinds were all on, its stop mark before one
    went off (report_truth_check.capture_rules, from the truth's cupti_kind
    lines: windows shifted outward are refused);
  * each stage's dominant operator and its launch + execute = the truth's:
    the operator with the most launch + execute among the captured calls
    that began in the stage (launch as report_truth_check.py defines it;
    captured as it defines it too: a call made during full collection must
    be in the trace, one that overlaps CUPTI switching on or off may be or
    not, so the truth with and without those calls is accepted, and the
    operator's time anywhere between);
  * export=SQLITE (`gpuphase export sqlite` of the same trace): call by
    call, each call CUPTI had to hold has its runtime record (where CUPTI
    wrote one), each of its ops and each of its waits there, and no call
    made while every CUPTI switch was off is there;
  * warm=KERNEL: the warm-up stage is the captured part of the run up to the
    end of the last iteration that ran KERNEL (the truth's synchronize that
    ended it), within 20 us, and counts the captured iterations that ran it.
Exit 0 when everything agrees, 1 otherwise (one MISMATCH line each).
Python 3 standard library only.
"""
import json
import re
import sqlite3
import subprocess
import sys

import report_truth_check  # (this directory)

REL, ABS_NS = 0.01, 2000
BLOCKING = {"cudaMemcpy", "cudaMemset", "cudaMemcpy2D", "cudaMemcpy3D", "cudaMemcpyPeer",
            "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaMemset2D", "cudaMemset3D"}


def short(names):
    """The report's short kernel names (demangled, no parameter list)."""
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                             check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        out = list(names)
    return {m: re.sub(r"^.* ", "", f.split("(")[0]) for m, f in zip(names, out)}


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    truth = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    report = json.load(open(sys.argv[2]))
    text = open(sys.argv[3]).read()
    opts = dict(a.split("=", 1) for a in sys.argv[4:])
    s = report["summary"]
    wins = [(w["start_ns"], w["stop_ns"]) for w in s.get("windows", [])]
    st = report["analyses"][0]["stages"]
    items = st["items"]
    bad = []

    def inside(a, b):
        return sum(max(0, min(b, y) - max(a, x)) for x, y in wins)

    if not wins:
        bad.append("no capture windows in the report")
    names = [i["name"] for i in items]
    print("windows", len(wins), "wall", s["wall_ns"], "stages", [(i["name"], i["time_ns"]) for i in items],
          "not captured", st["window"].get("not_captured"))
    if sum(i["time_ns"] for i in items) != s["wall_ns"]:
        bad.append(f"stage times add up to {sum(i['time_ns'] for i in items)}, window wall {s['wall_ns']}")
    if abs(sum(i["share"] for i in items) - 1) > 0.001 * len(items):
        bad.append(f"stage shares add up to {sum(i['share'] for i in items)}")
    if "before window" in names or any(i["time_ns"] <= 0 for i in items):
        bad.append(f"uncaptured stages listed: {names}")
    for i in items:
        if i["time_ns"] != inside(i["start_ns"], i["end_ns"]):
            bad.append(f"{i['name']}: time {i['time_ns']} != its part inside the windows "
                       f"{inside(i['start_ns'], i['end_ns'])}")
    nc = st["window"].get("not_captured") or {}
    gaps = sum(max(0, wins[k][0] - wins[k - 1][1]) for k in range(1, len(wins)))
    if st["window"].get("windows") != len(wins) or nc.get("between_ns") != gaps:
        bad.append(f"window: {st['window'].get('windows')} windows, between {nc.get('between_ns')}; "
                   f"expected {len(wins)}, {gaps}")
    t0 = min(i["start_ns"] for i in items) if items else 0
    if items and nc.get("before_ns") is not None and wins and nc["before_ns"] > wins[0][0] - 0:
        bad.append("before_ns larger than the first window's start")
    if not re.search(r"over the (\d+ )?capture windows? only", text) or "not captured:" not in text:
        bad.append("text: no 'over the capture window(s) only' / 'not captured:' line")
    # the windows where CUPTI really collected, and the dominant operators
    # against the truth over the calls the capture must hold (held) and may
    # hold (optional): report_truth_check.py's rules, from simcuda's record
    # of CUPTI's switches
    must, optional, refusals = report_truth_check.capture_rules(truth, wins)
    bad += refusals
    calls = [t for t in truth if t["type"] == "api"]
    held = {t["corr"] for t in calls if must(t)}
    maybe_held = held | {t["corr"] for t in calls if optional(t)}
    apis = {t["corr"]: t for t in calls if t["corr"] in maybe_held}
    ops = [t for t in truth if t["type"] in ("kernel", "memcpy", "memset") and t.get("api_corr") in apis]
    own_block = {}
    ends = {t["corr"]: t["end"] for t in truth if t["type"] in ("kernel", "memcpy", "memset")}
    for t in truth:
        if t["type"] == "sync" and t["kind"] in ("memcpy", "memset", "pageable_copy", "queue_full") \
                and t["api_corr"] in apis:
            end = t["end"]
            if t["kind"] == "queue_full" and t["waited_corr"] in ends:
                # a full queue's wait ends when the op that freed the slot
                # ended (report_truth_check.py, metrics.md §3)
                end = max(t["start"], min(end, ends[t["waited_corr"]]))
            own_block[t["api_corr"]] = own_block.get(t["api_corr"], 0) + end - t["start"]
    kn = short(sorted({o["name"] for o in ops if o["type"] == "kernel"}))
    per, per_lo = {}, {}  # (stage, operator) -> [launch + execute, ops]: with, without the optional calls
    for o in ops:
        a = apis[o["api_corr"]]
        name = kn[o["name"]] if o["type"] == "kernel" else (
            "memcpy " + o.get("kind", "") if o["type"] == "memcpy" else "memset")
        ex = o["end"] - o["start"]
        launch = a["end"] - a["start"] - (ex if a["name"] in BLOCKING or (
            o["type"] == "memcpy" and "Async" in a["name"] and a["end"] >= o["end"]) else 0)
        launch = max(0, launch - own_block.get(a["corr"], 0))
        if a["corr"] not in held:  # optional: maybe timed from its hook, which returns after the truth's rec
            launch += a.get("rec", a["end"]) - a["end"]
        for i in items:
            if i["start_ns"] <= a["start"] < i["end_ns"]:
                k = (i["name"], name)
                for p in (per, per_lo) if a["corr"] in held else (per,):
                    p[k] = p.get(k, [0, 0])
                    p[k][0] += launch + ex
                    p[k][1] += 1

    def dominant(p, stage):
        return max(((v[0], n, v[1]) for (sn, n), v in p.items() if sn == stage), default=None)

    def shown(w):
        return w and (w[1], w[0])

    def agrees(d, stage):
        """The report's dominant operator d of a stage: the truth's, with or
        without the optional calls, or the same operator with its time
        between the two."""
        wants = (dominant(per_lo, stage), dominant(per, stage))
        if not d:
            return any(w is None for w in wants)
        for w in wants:
            if w and d["name"] == w[1]:
                lo = per_lo.get((stage, w[1]), [0, 0])
                hi = per.get((stage, w[1]), [0, 0])
                tol = max(REL * hi[0], ABS_NS * max(hi[1], 1))
                if lo[0] - tol <= d["ns"] <= hi[0] + tol:
                    return True
        return False

    for i in items:
        want = dominant(per, i["name"])
        d = i["dominant_operator"]
        if not agrees(d, i["name"]):
            bad.append(f"{i['name']}: dominated by {d and (d['name'], d['ns'])}, truth {shown(want)} "
                       f"(without the optional calls {shown(dominant(per_lo, i['name']))})")
        elif d:
            print(f"{i['name']}: dominated by {d['name']} {d['ns']} (truth {want and want[0]})")
        else:
            print(f"{i['name']}: no operator (the truth has none there)")
    # export=SQLITE (gpuphase export sqlite of the same trace): call by call,
    # every held call is there whole: its runtime record (when CUPTI wrote
    # one), each of its ops, each of its waits; no call made while every
    # CUPTI switch was off is there
    if "export" in opts:
        db = sqlite3.connect(opts["export"])
        rt_rows = {c for (c,) in db.execute("SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME")}
        op_rows = {c for (c,) in db.execute("SELECT correlationId FROM GPUPHASE_OPS")}
        sync_rows = {c for (c,) in db.execute("SELECT correlationId FROM GPUPHASE_SYNCS")}
        ops_of, waits_of = {}, {}
        for t in truth:
            if t["type"] in ("kernel", "memcpy", "memset") and t.get("name") != report_truth_check.CALIB_KERNEL:
                ops_of.setdefault(t["api_corr"], []).append(t)
            elif t["type"] == "sync" and t["waited_corr"]:
                waits_of.setdefault(t["api_corr"], []).append(t)
        incomplete, extra, nheld = [], [], 0
        for t in calls:
            c = t["corr"]
            if t["corr"] in held:
                nheld += 1
                miss = ([f"runtime record"] if t.get("cupti_write_rt") and c not in rt_rows else []) + \
                       [f"{o['type']} {o['corr']}" for o in ops_of.get(c, [])
                        if o["corr"] not in op_rows and o["api_corr"] not in op_rows] + \
                       ([f"{len(waits_of[c])} waits"] if c in waits_of and c not in sync_rows else [])
                if miss:
                    incomplete.append(f"{t['name']} corr {c} at {t['start']}: no {', '.join(miss)}")
            elif t["corr"] not in maybe_held and (c in rt_rows or any(o["corr"] in op_rows for o in ops_of.get(c, []))):
                extra.append(f"{t['name']} corr {c} at {t['start']}")
        print(f"export: {nheld} held calls checked one by one, {len(incomplete)} incomplete, "
              f"{len(extra)} made with CUPTI off yet present")
        bad += [f"held call incomplete in the export: {m}" for m in incomplete[:10]]
        bad += [f"call made with every CUPTI switch off in the export: {m}" for m in extra[:10]]
    # warm-up
    if "warm" in opts:
        k = opts["warm"]
        syncs = sorted(t["end"] for t in truth if t["type"] == "api" and t["name"] == "cudaDeviceSynchronize")
        warm_calls = [t for t in truth if t["type"] == "api" and t["corr"] in
                      {o["api_corr"] for o in truth if o["type"] == "kernel" and re.search(k, o["name"])}]
        last = max(a["start"] for a in warm_calls)
        settle = min(e for e in syncs if e > last)  # the synchronize ending the last warm iteration
        want = inside(0, settle)
        got = next((i for i in items if i["name"] == "warm-up"), None)
        nwarm = sum(1 for a in warm_calls if inside(a["start"], a["start"] + 1))
        if want < 20000:
            if got:
                bad.append(f"warm-up {got['time_ns']} listed; the windows hold {want} ns of it")
        elif not got or abs(got["time_ns"] - want) > 20000:
            bad.append(f"warm-up {got and got['time_ns']} != the captured part of it {want} (within 20 us)")
        elif got["count"] != nwarm:
            bad.append(f"warm-up counts {got['count']} iterations, {nwarm} captured ran {k}")
        else:
            print(f"warm-up {got['time_ns']} (truth {want}), {got['count']} iterations")
    for b in bad:
        print("MISMATCH " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
