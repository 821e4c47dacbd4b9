#!/usr/bin/env python3
"""whatif_check.py — checks of the what-if analysis's JSON (test_whatif_e2e.sh).

  whatif_check.py replay JSON...           every trace's replay gives back its
                                           measured wall within 1 %
  whatif_check.py pair A.json B.json TOL   A's --whatif prediction of the saving
                                           against the measured A - B, within
                                           TOL (a fraction of the real saving); both
                                           walls from the first launch on
  whatif_check.py advice A.json B.json TOL CHANGE TARGET
                                           A's run advice (summary.advice) names
                                           TARGET first ("move the TARGET ..."),
                                           as the change CHANGE, and its priced
                                           saving is within TOL of the measured
                                           A - B (walls as for pair)
  whatif_check.py gpubound JSON YES        JSON's remove_queue_waits item: with
                                           YES 1, it saves under 5 % of the
                                           window and says the GPU is the
                                           bottleneck; with 0, neither
  whatif_check.py long JSON OPS            a run of OPS ops, longer than the
                                           graph keeps: replayed as a prefix
                                           (within 1 %), its savings scaled
                                           to the whole window
"""
import json
import sys


def whatif(path):
    with open(path) as f:
        doc = json.load(f)
    for an in doc.get("analyses", []):
        if "whatif" in an:
            return an["whatif"]
    raise SystemExit(f"{path}: no analyses item with a whatif member")


def long_run(path, nops):
    with open(path) as f:
        ops = json.load(f)["summary"]["ops"]
    w = whatif(path)
    why = []
    if ops < nops:
        why.append(f"the trace holds {ops} ops, not {nops}")
    if w is None or not w["replay_ok"]:
        why.append("not replayed")
    else:
        if not w["truncated"] or w["ops"] >= ops:
            why.append(f"the graph holds {w['ops']} of {ops} ops and is not a prefix")
        if w["replay_error_pct"] > 1.0:
            why.append(f"replayed {w['replay_error_pct']:.3f} % off")
        if w["window_ns"] <= w["measured_wall_ns"] or not w["whatif"]:
            why.append("no saving scaled from the prefix to the window")
    for x in why:
        print(f"FAIL: {path}: {x}")
    if not why:
        print(f"long: {ops} ops, a prefix of {w['ops']} ops replayed "
              f"({w['replay_error_pct']:.3f} % off), {len(w['whatif'])} what-ifs scaled to the window")
    return 1 if why else 0


def gpu_bound(path, yes):
    w = whatif(path)
    items = [x for x in (w or {}).get("whatif", []) if x["change"] == "remove_queue_waits"]
    if not items:
        print(f"FAIL: {path}: no remove_queue_waits item (no launch waited on a full queue?)")
        return 1
    it = items[0]
    small = it["saving_ns"] * 100 < 5 * w["window_ns"]
    said = "the GPU is the bottleneck" in it["assumptions"]
    print(f"remove_queue_waits: saves {100 * it['saving_ns'] / w['window_ns']:.1f} % of the window; "
          f"\"{it['assumptions']}\"")
    if said != small:
        print(f"FAIL: {path}: the statement does not follow the saving")
        return 1
    if small != yes:
        print(f"FAIL: {path}: expected the GPU {'' if yes else 'not '}to be the bottleneck")
        return 1
    return 0


def real_saving(a, b):
    """A - B, each wall from its program's first launch on: the set-up
    before it is not what changed."""
    return (a["measured_wall_ns"] - a["first_launch_ns"]) - (b["measured_wall_ns"] - b["first_launch_ns"])


def run_advice(a_path, b_path, tol, change, target):
    with open(a_path) as f:
        summary = json.load(f)["summary"]
    text, ch = summary.get("advice") or "", summary.get("advice_change") or {}
    real = real_saving(whatif(a_path), whatif(b_path))
    pred = ch.get("saving_ns", 0)
    err = abs(pred - real) / real if real > 0 else float("inf")
    print(f"advice: \"{text}\"")
    print(f"advice {ch.get('change')} {ch.get('target')}: priced saving {pred / 1e6:.3f} ms, "
          f"real {real / 1e6:.3f} ms ({100 * err:.1f} % off, tolerance {100 * tol:.0f} %)")
    bad = 0
    if not text.startswith(f"move the {target} ") or ch.get("change") != change or ch.get("target") != target:
        print(f"FAIL: {a_path}: the run's advice does not name the {target} first ({change})")
        bad = 1
    if err > tol:
        print(f"FAIL: {a_path}: the advice's price is more than {100 * tol:.0f} % off the real saving")
        bad = 1
    return bad


def main():
    if sys.argv[1] == "replay":
        bad = 0
        for p in sys.argv[2:]:
            w = whatif(p)
            if w is None:
                continue
            if not w["replay_ok"] or w["replay_error_pct"] > 1.0:
                print(f"FAIL: {p}: replayed {w['replayed_wall_ns']} ns, measured {w['measured_wall_ns']} ns "
                      f"({w['replay_error_pct']:.3f} % off)")
                bad += 1
        return 1 if bad else 0
    if sys.argv[1] == "advice":
        return run_advice(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5], sys.argv[6])
    if sys.argv[1] == "gpubound":
        return gpu_bound(sys.argv[2], sys.argv[3] == "1")
    if sys.argv[1] == "long":
        return long_run(sys.argv[2], int(sys.argv[3]))
    a, b, tol = whatif(sys.argv[2]), whatif(sys.argv[3]), float(sys.argv[4])
    user = [x for x in a["whatif"] if x["user"]]
    if not user:
        print(f"FAIL: {sys.argv[2]}: no --whatif item")
        return 1
    pred = user[0]["saving_ns"]
    real = real_saving(a, b)
    err = abs(pred - real) / real if real > 0 else float("inf")
    print(f"{user[0]['change']} {user[0]['target'] or ''}: predicted saving {pred / 1e6:.3f} ms, "
          f"real {real / 1e6:.3f} ms ({100 * err:.1f} % off, tolerance {100 * tol:.0f} %)")
    return 0 if err <= tol else 1


if __name__ == "__main__":
    sys.exit(main())
