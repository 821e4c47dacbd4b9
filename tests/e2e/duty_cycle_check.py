#!/usr/bin/env python3
"""duty_cycle_check.py — each duty-cycled window's report against simcuda's truth.

Usage: duty_cycle_check.py TRUTH REPORT.json... [--period-ns P] [--shift-ns N]

Each REPORT.json is one window file's report (gpuphase-report --format json),
read alone. For each, its one capture window [start, stop] (summary.windows,
trace clock = the truth's host clock) and its operators' counts are checked
against the truth's ops, by the launching call's host times:
  * every op whose launching call lies wholly inside the window is counted
    (the report's count per operator is at least that many), and
  * no op is counted whose launching call lies wholly outside the time in
    which CUPTI was being switched on, on, or being switched off for this
    window (simcuda's record of each switch, the truth's cupti_kind lines;
    docs/metrics.md §6 says a call made while CUPTI is turned on or off is
    in the report when CUPTI recorded it).
So ops inside windows are exact, and ops between windows never appear.
P is the duty cycle's period (default 300 ms). --shift-ns moves every window by N ns before
checking (the tamper control: a report checked against the wrong time must
fail). At least 3 windows must hold ops (a run that never exercised the
duty cycle fails). Exit 0 when all passes, 1 otherwise, one line per window.
"""
import json
import re
import sys


def short(name):
    """The report's operator name for a truth op's name."""
    m = re.match(r"_Z(\d+)", name)
    if m:
        n = int(m.group(1))
        start = m.end()
        return name[start:start + n]
    if name.startswith("memcpy"):
        return "memcpy " + name[len("memcpy"):]
    if name.startswith("memset"):
        return "memset"
    return name


def load_truth(path):
    api = {}
    ops = []
    switches = []
    for line in open(path):
        d = json.loads(line)
        t = d["type"]
        if t == "cupti_kind":
            switches.append(d["t"])
        elif t == "api":
            api[d["corr"]] = (d["start"], d["end"])
        elif t in ("kernel", "memcpy", "memset"):
            ops.append((short(d.get("name", t)), d["api_corr"]))
    out = []
    for name, corr in ops:
        if corr in api:
            out.append((name, api[corr][0], api[corr][1]))
    return out, sorted(switches)


def switching_span(switches, w0, w1, period):
    """From the first CUPTI switch flipped for this window (before its start
    mark) to the last (after its stop mark): the time in which some record
    kind was on. Switches are searched within half a period of the edges,
    where no other window's lie."""
    before = [t for t in switches if w0 - period // 2 <= t <= w0]
    after = [t for t in switches if w1 <= t <= w1 + period // 2]
    return (before[0] if before else w0), (after[-1] if after else w1)


def check(truth, path, shift, period):
    truth_ops, switches = truth
    rep = json.load(open(path))
    wins = rep["summary"].get("windows") or []
    if len(wins) != 1:
        return "%s: %d capture windows, expected exactly 1" % (path, len(wins)), 0
    w0, w1 = wins[0]["start_ns"] + shift, wins[0]["stop_ns"] + shift
    on0, on1 = switching_span(switches, w0, w1, period)
    inside, edge = {}, {}
    for name, s, e in truth_ops:
        if s >= w0 and e <= w1:
            inside[name] = inside.get(name, 0) + 1
        elif s <= on1 and e >= on0:
            edge[name] = edge.get(name, 0) + 1
    got = {o["name"]: o["count"] for o in rep["operators"]}
    bad = []
    for name in sorted(set(inside) | set(edge) | set(got)):
        lo, hi, n = inside.get(name, 0), inside.get(name, 0) + edge.get(name, 0), got.get(name, 0)
        if not lo <= n <= hi:
            bad.append("%s %d (truth: %d inside, %d on an edge)" % (name, n, lo, hi - lo))
    if bad:
        return "%s: %s" % (path, "; ".join(bad)), 0
    return None, sum(inside.values())


def main(argv):
    shift = 0
    period = 300000000
    for opt in ("--shift-ns", "--period-ns"):
        if opt in argv:
            i = argv.index(opt)
            if opt == "--shift-ns":
                shift = int(argv[i + 1])
            else:
                period = int(argv[i + 1])
            argv = argv[:i] + argv[i + 2:]
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    truth = load_truth(argv[1])
    fails = busy = 0
    for path in argv[2:]:
        why, ops = check(truth, path, shift, period)
        if why:
            fails += 1
            print("FAIL " + why)
        else:
            busy += ops > 0
            print("ok %s (%d ops inside)" % (path, ops))
    if busy < 3:
        fails += 1
        print("FAIL only %d windows held ops: the run did not exercise the duty cycle" % busy)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
