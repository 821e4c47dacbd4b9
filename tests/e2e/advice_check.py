#!/usr/bin/env python3
"""advice_check.py — the whole run's advice agrees with the what-if
(docs/metrics.md §5, "The whole run's advice"). Used by
test_report_advice.sh: `advice_check.py REPORT.json [EXPECT]`, EXPECT one of
`change=KIND:TARGET` (the priced change must be that one) or `gpu` (the
GPU must be named the bottleneck). Exit 0 when the report agrees, 1 with
the reason otherwise."""
import json
import sys

WAITS = {"hoist_implicit_sync", "remove_sync", "remove_sync_site", "remove_empty_waits"}


def check(d, expect):
    s = d["summary"]
    w = d["analyses"][0]["whatif"]
    items = [i for i in w["whatif"] if not i["user"]]
    real = [i for i in items if i["change"] != "scale_kernel" and w["window_ns"] > 0 and
            100.0 * i["saving_ns"] / w["window_ns"] >= 1.0]
    best = max(real, key=lambda i: i["saving_ns"]) if real else None
    ch = s["advice_change"]
    if best is None:
        if ch is not None:
            return "advice_change given with no real change priced"
    else:
        if ch is None:
            return "no advice_change although the what-if prices %s" % best["change"]
        if ch["saving_ns"] != best["saving_ns"] or ch["change"] not in {i["change"] for i in real
                                                                        if i["saving_ns"] == best["saving_ns"]}:
            return "advice_change %s (%d ns) is not the largest real saving %s (%d ns)" % (
                ch["change"], ch["saving_ns"], best["change"], best["saving_ns"])
    wait = max([i["saving_ns"] for i in items if i["change"] in WAITS] or [0])
    busy = 100.0 * (s["sync_ns"] - s["sync_unattributed_ns"]) / s["sync_ns"] if s["sync_ns"] else 0.0
    gpu = s["verdict"] == "sync-bound" and w["window_ns"] > 0 and 100.0 * wait / w["window_ns"] < 5.0 and busy >= 90.0
    if s["gpu_bottleneck"] != gpu:
        return "gpu_bottleneck %s, the what-if says %s (waits save %d of %d ns, GPU busy %.1f%% of the waits)" % (
            s["gpu_bottleneck"], gpu, wait, w["window_ns"], busy)
    adv = s["advice"]
    if gpu and (not adv.startswith("the GPU is the bottleneck") or "remove sync points" in adv):
        return "GPU-bound run advised: %s" % adv
    if not gpu and ch is not None:
        pct = "-%.1f%%" % (100.0 * ch["saving_ns"] / ch["window_ns"])
        if pct not in adv or (ch["target"] and ch["target"] not in adv):
            return "advice does not price its change (%s, %s): %s" % (pct, ch["target"], adv)
    if expect == "gpu" and not gpu:
        return "expected the GPU named the bottleneck: %s" % adv
    if expect.startswith("change="):
        kind, _, target = expect[7:].partition(":")
        if ch is None or ch["change"] != kind or ch["target"] != target:
            return "expected %s %s first: %s" % (kind, target, adv)
    return None


def main():
    with open(sys.argv[1]) as f:
        d = json.load(f)
    why = check(d, sys.argv[2] if len(sys.argv) > 2 else "")
    if why:
        print("advice_check: %s: %s" % (sys.argv[1], why))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
