#!/usr/bin/env python3
"""multinode_check.py — the cross-rank report against simcuda's ground truth
(tests/e2e/test_multinode.sh). Every expected number comes from the truth
files of the ranks (their own clocks, shifted back by the shift the test gave
clockshift.so) or from the shifts themselves.

  multinode_check.py job REPORT.json SHIFT_RAW SHIFT_REALTIME TRUTH0 TRUTH1 ... [--lost R:N,N,...]...
      rank r's truth is TRUTHr; rank 0 runs unshifted, every other rank with
      CLOCK_MONOTONIC_RAW + SHIFT_RAW and CLOCK_REALTIME + SHIFT_REALTIME (ns);
      --lost R:N,... says rank R's trace lacks its NCCL kernels at those
      places (0-based, tests/e2e/trace_reorder --drop-kernels): those
      collectives are left out of the truth's comparisons
  multinode_check.py chrome EXPORT.json SHIFT_REALTIME
      the chrome-trace export of the same traces: rank 1's collectives on rank
      0's time line, lined up on the clock pairs alone
  multinode_check.py sqlite EXPORT.sqlite SHIFT_REALTIME
      the same of the SQLite export, read as an nsys user would (the kernel
      table, its names in StringIds, the process of each from TRACES)

Tolerances (stated in docs/metrics.md §9 and the test):
  offset after refinement       within 20 us of the true raw-clock offset
                                 less the collectives' true median end
                                 disagreement; and, when most collectives
                                 really ended together (within 20 us), within
                                 20 us of the true offset, the residual
                                 reduced by the refinement
  offset from the pairs alone   within 20 us of (raw shift - wall-clock shift):
                                 the pairs carry the hosts' wall-clock error
  residual p50                  within 20 us of the truth's, before and after
  collective wait per rank      within 2% + 100 us of the truth
  iteration skew p50            within 20 us + 10% of the truth
Exit status: 0 all agree; 1 a mismatch; 2 the report agrees with the truth
but the run's collectives did not end together (a stalled host), so the
offset's recovery could not be checked.
"""
import json
import sys

fails = 0


def fail(msg):
    global fails
    fails += 1
    print("MISMATCH: " + msg)


def ok(msg):
    print("ok   " + msg)


def truth(path, shift):
    ev = [json.loads(l) for l in open(path) if l.strip()]
    coll = sorted((e["start"] - shift, e["end"] - shift) for e in ev
                  if e["type"] == "kernel" and "ncclDevKernel" in e["name"])
    syncs = sorted(e["end"] - shift for e in ev if e["type"] == "sync" and e["kind"] == "device")
    return coll, syncs


def p50(v):
    v = sorted(v)
    return v[(len(v) + 1) // 2 - 1] if v else 0


def job(report, s_raw, s_rt, truths, lost):
    d = json.load(open(report))
    cr = d.get("job_analyses", {}).get("crossrank")
    if not cr:
        fail("no job_analyses.crossrank in the report")
        return
    ranks = cr["ranks"]
    n = len(truths)
    if len(ranks) != n:
        fail("%d ranks in the report, %d traces" % (len(ranks), n))
        return
    by = {int(r["rank"]): r for r in ranks}
    tr = [truth(truths[r], 0 if r == 0 else s_raw) for r in range(n)]
    ref = ranks[cr["reference"]]
    if ref["rank"] != "0":
        fail("reference is rank %s, not 0" % ref["rank"])
    # How far each rank's collectives really ended from rank 0's (true
    # time): multirank makes them end together, but a host stalled for
    # milliseconds can make one end late. The report can only be as right as
    # the collectives are together: its offset must be what they say (the
    # true offset less their median disagreement), and equal the true one
    # when most of them ended together.
    together = True
    for r in range(1, n):
        x = by[r]
        e = [a[1] - b[1] for i, (a, b) in enumerate(zip(tr[0][0], tr[r][0])) if i not in lost]
        med = p50(e)
        near = sum(1 for v in e if abs(v - med) <= 20000)
        got = x["raw_offset_ns"]
        (ok if abs(got - (s_raw - med)) <= 20000 else fail)(
            "rank %d: raw clock offset %d ns = the true %d less the collectives' median disagreement %d ns, "
            "to %d ns (refined on %d collectives)" % (r, got, s_raw, med, got - (s_raw - med), x["collectives_matched"]))
        e2 = x["raw_offset_pairs_ns"] - (s_raw - s_rt)
        (ok if abs(e2) <= 20000 else fail)("rank %d: from the clock pairs alone %d ns: off by the wall-clock shift "
                                           "%d ns to %d ns" % (r, x["raw_offset_pairs_ns"], s_rt, e2))
        before, after = x["residual_pairs_p50_ns"], x["residual_p50_ns"]
        want_before = p50([abs(v - s_rt) for v in e])
        want_after = p50([abs(v - med) for v in e])
        if before is None or after is None or abs(before - want_before) > 20000 or abs(after - want_after) > 20000:
            fail("rank %d: residual p50 %s ns before refinement, %s after; the truth says %d and %d"
                 % (r, before, after, want_before, want_after))
        else:
            ok("rank %d: residual p50 %d ns on the pairs alone, %d ns refined (truth %d, %d)"
               % (r, before, after, want_before, want_after))
        if 2 * near < len(e):
            together = False
            print("note: rank %d: only %d of %d collectives ended within 20 us of rank 0's (a stalled host): the "
                  "offset cannot be recovered from this run" % (r, near, len(e)))
            continue
        (ok if abs(got - s_raw) <= 20000 else fail)("rank %d: the true offset recovered to %d ns (%d of %d collectives "
                                                   "ended together)" % (r, got - s_raw, near, len(e)))
        if not x["refined"] or not after < before:
            fail("rank %d: refined %s, residual %s ns after vs %s before: the refinement should reduce it"
                 % (r, x["refined"], after, before))
    # collective wait: per matching collective, the time each kernel ran
    # before the last rank's started
    k = min(len(t[0]) for t in tr)
    want = [0] * n
    last = [0] * n
    for i in range(k):
        if i in lost:
            continue
        starts = [tr[r][0][i][0] for r in range(n)]
        latest = max(starts)
        last[starts.index(latest)] += 1
        for r in range(n):
            s, e = tr[r][0][i]
            want[r] += min(max(0, latest - s), e - s)
    for r in range(n):
        got = by[r]["collective_wait_ns"]
        (ok if abs(got - want[r]) <= 0.02 * want[r] + 100000 else fail)(
            "rank %d: collective wait %d ns, truth %d ns over %d collectives" % (r, got, want[r], k))
    slow = last.index(max(last))
    if by[slow]["collectives_last"] < 0.9 * last[slow]:
        fail("rank %d arrives last in %d collectives (truth), the report says %d"
             % (slow, last[slow], by[slow]["collectives_last"]))
    # iteration skew: the spread of each iteration's end (the sync that ends it)
    m = min(len(t[1]) for t in tr)
    spreads = [max(tr[r][1][i] for r in range(n)) - min(tr[r][1][i] for r in range(n)) for i in range(m)]
    got, want = cr["iteration_skew"]["spread_p50_ns"], p50(spreads)
    (ok if abs(got - want) <= 20000 + 0.1 * want else fail)(
        "iteration end spread p50 %d ns, truth %d ns (%d iterations)" % (got, want, m))
    # the slower rank is the straggler, as before
    strag = [i for i, r in enumerate(d["ranks"]) if r["straggler"]]
    paths = [r["path"] for r in d["ranks"]]
    if [by[r]["path"] for r in range(n) if r == slow] != [paths[i] for i in strag]:
        fail("stragglers %s, want the slow rank %d only" % ([paths[i] for i in strag], slow))
    else:
        ok("rank %d, the slower one, is the one straggler" % slow)
    return together


def chrome(export, s_rt):
    d = json.load(open(export))
    ends = {}
    for e in d["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "kernel" and e["name"].startswith("ncclDevKernel"):
            ends.setdefault(e["pid"] // 1000, []).append(e["ts"] + e["dur"])
    if sorted(ends) != [0, 1]:
        fail("chrome export: NCCL kernels on traces %s, want 0 and 1" % sorted(ends))
        return
    a, b = sorted(ends[0]), sorted(ends[1])
    gap = p50([y - x for x, y in zip(a, b)]) * 1000  # us -> ns
    (ok if abs(gap - s_rt) <= 20000 else fail)(
        "chrome export: rank 1's collectives end %.0f ns after rank 0's on one time line (the wall-clock shift %d)"
        % (gap, s_rt))


def sqlite(export, s_rt):
    import sqlite3
    db = sqlite3.connect(export)
    ends = {}
    for rank, end in db.execute(
            "SELECT t.rank, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON k.shortName = s.id "
            "JOIN TRACES t ON k.globalPid = t.globalPid WHERE s.value LIKE 'ncclDevKernel%'"):
        ends.setdefault(rank, []).append(end)
    if sorted(ends) != [0, 1]:
        fail("sqlite export: NCCL kernels on traces %s, want 0 and 1" % sorted(ends))
        return
    a, b = sorted(ends[0]), sorted(ends[1])
    gap = p50([y - x for x, y in zip(a, b)])
    (ok if abs(gap - s_rt) <= 20000 else fail)(
        "sqlite export: rank 1's collectives end %.0f ns after rank 0's on one time line (the wall-clock shift %d)"
        % (gap, s_rt))


if __name__ == "__main__":
    if len(sys.argv) >= 6 and sys.argv[1] == "job":
        args, lost = sys.argv[5:], set()
        while "--lost" in args:  # lost on either of two ranks: compared on neither
            at = args.index("--lost")
            lost |= {int(n) for n in args[at + 1].split(":", 1)[1].split(",")}
            del args[at:at + 2]
        if job(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), args, lost) is False and not fails:
            sys.exit(2)
    elif len(sys.argv) == 4 and sys.argv[1] == "chrome":
        chrome(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) == 4 and sys.argv[1] == "sqlite":
        sqlite(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(__doc__)
    sys.exit(1 if fails else 0)
