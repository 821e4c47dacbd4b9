#!/usr/bin/env python3
"""report_truth_check.py — compares a `gpuphase-report --format json` report
with simcuda's ground truth (SIMCUDA_TRUTH JSON Lines, docs/simcuda.md).

The expected value of every phase is computed here from the truth with the
definitions of docs/metrics.md (launch, queue, execute, sync per op, summed
per operator name), independently of the report's code; a cudaGraphLaunch
call's time is the launch of the first of its kernels only. A copy whose
call returned after its own transfer ended (a blocking copy or set, or an
async copy on pageable memory) has launch = call − own transfer − its wait
for earlier work; a launch's wait on a full queue is not launch either.
Every truth `sync` line with a `waited_corr` (explicit syncs, blocking and
pageable copies, implicit syncs of cudaFree & co., queue-full waits) is the
waited op's sync; a wait begins at its call's entry (CUPTI's own time there,
simcuda's `overhead` lines, counts in it) and an explicit sync is the whole
call (docs/metrics.md §3, "CUPTI's own cost"), except a full queue's wait,
which the report takes from CUPTI's COMMAND_BUFFER_FULL record: the truth
line itself. When the report took CUPTI's own cost out of the phases (its
summary has `cupti_cost` with a source), the truth's phases are taken
without that cost too: a call's `overhead` lines leave its launch, and a
wait that begins at the call's entry begins after them. With the source
`calibration` (a per-call estimate, not the call's own record) each call's
launch and each such wait may differ from the truth by CALIB_SLACK_NS, plus
the call's CUPTI time beyond the shortest of its name's calls (a spin
preempted on a loaded host, which no estimate can know); an op that ended
during such a stretch may be charged up to the stretch as sync (the report
sees the call begin to wait while it still ran).
The library's own calibration calls (kernel GP_CALIB_KERNEL) are no
program's op: they are left out of the truth. With CHECK_RAW=1 only launch
is compared: the report's `launch_raw_ns` (launch with CUPTI's cost left
in) against the truth's launch with it. With QUEUE_SLACK_NS (GPU
timestamps off the host clock), a synchronize or a blocking copy with nothing
outstanding may be charged to an op that ended less than that before the
call, or during CUPTI's time in it, before simcuda looked (a copy's launch
then loses as much). An implicit synchronization
that the truth says did not wait, although an op ended inside the call (its
thread held off the CPU before it looked), may be charged to that op.
Each operator's
phase sums, and the sums over all operators, must agree within the larger
of REL (default 1 %) and ABS_NS (default 2 us), plus the allowances above,
which add up when several apply to one sum. GPU busy must equal the
union of the truth's op intervals per device, summed (same tolerance). A
report made with --group-by stream is checked per stream ("device D stream
S": the device of each stream id is read from those names; stream ids are
unique across devices in simcuda), so that a wait charged to the right
kernel on the wrong device shows; STREAM_REPORT=JSON (such a report of the
same trace) gives a kernel-grouped report's check the devices for GPU busy. Verdicts are checked when
given as NAME=VERDICT (NAME '*' = whole run); NAME@L/E/S checks the report's
per-call means of launch / execute / sync against nominal values in us
(same tolerance, per call).

usage: report_truth_check.py TRUTH.jsonl REPORT.json [NAME=VERDICT|NAME@L/E/S ...]
Exit 0 when everything agrees; 1 with one line per disagreement otherwise.
Python 3 standard library only.
"""
import bisect
import json
import os
import subprocess
import sys

REL, ABS_NS = 0.01, 2000
# GPU timestamps off the host clock (simcuda's cupti_clock_offset_ns) move
# every op's queue by that much (allowed per op), and every wait that ends
# at a GPU timestamp (implicit syncs, blocking and pageable copies, full
# queues: allowed per such wait on sync, and on the blocked call's launch)
QUEUE_SLACK_NS = float(os.environ.get("QUEUE_SLACK_NS", 0))
# with CUPTI's cost taken out by the calibration's per-call estimate
CALIB_SLACK_NS = float(os.environ.get("CALIB_SLACK_NS", 0))
CALIB_KERNEL = "gpuphase_calibrate"  # collector/gp_format.h GP_CALIB_KERNEL
NOMINAL_REL = float(os.environ.get("NOMINAL_REL", REL))
NOMINAL_ABS_NS = float(os.environ.get("NOMINAL_ABS_NS", ABS_NS))
IMPLICIT = {"free", "free_host", "host_alloc"}
IMPLICIT_CALLS = {"cudaFree", "cudaFreeHost", "cudaMallocHost", "cudaHostAlloc"}
EXPLICIT = {"device", "stream", "event"}
BLOCKING = {"cudaMemcpy", "cudaMemset", "cudaMemcpy2D", "cudaMemcpy3D", "cudaMemcpyPeer",
            "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaMemset2D", "cudaMemset3D"}


def demangle(names):
    """Short names the report shows: demangled, argument list and return type dropped."""
    out = {}
    try:
        res = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
        full = res.stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        full = list(names)
    for m, f in zip(names, full):
        depth, cut = 0, len(f)
        for i, ch in enumerate(f):
            if ch == "<":
                depth += 1
            elif ch == ">" and depth:
                depth -= 1
            elif ch == "(" and depth == 0 and i > 0:
                cut = i
                break
        head, depth, begin = f[:cut], 0, 0
        for i, ch in enumerate(head):
            if ch == "<":
                depth += 1
            elif ch == ">" and depth:
                depth -= 1
            elif ch == " " and depth == 0:
                begin = i + 1
        out[m] = head[begin:]
    return out


# In a windowed capture, which calls the report must hold, which it may
# hold, and whether its windows lie where CUPTI really collected
# (docs/metrics.md §6). All from simcuda's own account of CUPTI, never from
# what the product says it captured: the truth's "cupti_kind" lines (each
# activity kind, and each cbid's API records, switched on or off at t) and
# each call's "rec" (the instant after CUPTI's last look at its switches for
# the call; docs/simcuda.md "Ground truth").
#   full collection: every kind the run ever enabled is on, and every
#     per-cbid API switch that was on at either end of such a stretch (one
#     switched on late or off early counts; the calibration's brief switches
#     of its own calls, undone inside the stretch, do not);
#   held: a call whose span start..rec lies inside one stretch of full
#     collection: it must be in the report, whole (its API record, its op,
#     its waits);
#   absent: a call during which no switch was on: not in the report;
#   optional: any other call (it overlaps a switching, or CUPTI looked at
#     its switches for it after one went off: its API record may be lost, its
#     op then timed from its hook): in the report or not, whole or in part.
#     Each operator's count and phases must lie between the expectation
#     without them and the one with them (tolerances on both sides).
#   refusals: a window edge outside full collection (a start mark before
#     CUPTI's kinds were all on, a stop mark after one went off) or a window
#     across a stretch with nothing on: the product claimed a capture CUPTI
#     did not make.
# Without any "cupti_kind" line (CUPTI never switched: hook-only capture)
# the windows' own edges decide: held inside a window, optional across an
# edge.
def full_collection(truth):
    """From the truth's cupti_kind lines: (full, anyon, kinds, cbids, lines):
    the stretches [from, to) of full collection and those with any switch
    on (to = inf when never switched off), the kinds and per-cbid switches
    full collection needs, the number of lines."""
    sw = sorted((t for t in truth if t["type"] == "cupti_kind"), key=lambda t: t["t"])
    kinds = {t["kind"] for t in sw if "cbid" not in t and t["on"]}
    cbids = {(t["kind"], t["cbid"]) for t in sw if "cbid" in t}
    kind_on, sel, seg = {}, {}, []  # seg: (from, kinds all on, cbids on, anything on)
    for t in sw:
        if "cbid" in t:
            sel[(t["kind"], t["cbid"])] = 1 if t["on"] else 2
        else:
            kind_on[t["kind"]] = t["on"]
            if t["kind"] in ("RUNTIME", "DRIVER"):  # the kind overrides the cbids' switches
                sel = {k: v for k, v in sel.items() if k[0] != t["kind"]}
        eff = frozenset(k for k in cbids if sel.get(k) == 1 or (not sel.get(k) and kind_on.get(k[0])))
        row = (t["t"], all(kind_on.get(k) for k in kinds), eff, any(kind_on.values()) or bool(eff))
        if seg and seg[-1][0] == t["t"]:
            seg[-1] = row  # switches at one instant: the state after the last
        else:
            seg.append(row)
    INF = float("inf")
    bounds = [(r[0], seg[i + 1][0] if i + 1 < len(seg) else INF) for i, r in enumerate(seg)]

    def stretches(pred):
        out = []
        for (a, b), r in zip(bounds, seg):
            if not pred(r):
                continue
            if out and out[-1][1] == a:
                out[-1][1] = b
                out[-1][3] = r
            else:
                out.append([a, b, r, r])
        return out

    kcbids = set()
    for a, b, first, last in stretches(lambda r: r[1]):
        kcbids |= first[2] | last[2]
    full = [(a, b) for a, b, _, _ in stretches(lambda r: r[1] and kcbids <= r[2])]
    anyon = [(a, b) for a, b, _, _ in stretches(lambda r: r[3])]
    return full, anyon, kinds, kcbids, len(sw)


def capture_rules(truth, wins):
    """Which calls of the truth a windowed capture holds: predicates
    held(call), optional(call), and refusals (a list of lines: windows
    outside CUPTI's real collection). report_windows_check.py uses them
    too."""
    full, anyon, kinds, kcbids, nsw = full_collection(truth)

    def span(t):
        return t["start"], t.get("rec", t["end"])

    if not nsw:
        print("capture: no CUPTI switches in the truth (hook-only): the windows' own edges decide")

        def held0(t):
            return any(a <= t["start"] and t["end"] <= b for a, b in wins)

        def optional0(t):
            return not held0(t) and any(t["start"] < b and a < t["end"] for a, b in wins)

        return held0, optional0, []

    def within(iv, x, y):
        return next(((a, b) for a, b in iv if a <= x and y <= b), None)

    def held(t):
        return within(full, *span(t)) is not None

    def absent(t):
        x, y = span(t)
        return not any(x <= b and a <= y for a, b in anyon)

    def optional(t):
        return not held(t) and not absent(t)

    def us(ns):
        return f"{ns / 1e3:.1f} us"

    print(f"capture: CUPTI collected fully in {len(full)} stretches (truth: {nsw} cupti_kind lines, "
          f"{len(kinds)} kinds, {len(kcbids)} per-cbid switches): " +
          ", ".join(f"{a}..{b}" for a, b in full[:6]) + (" ..." if len(full) > 6 else ""))
    calls = [t for t in truth if t["type"] == "api"]
    late = []
    for t in calls:
        if held(t):
            continue
        iv = within(full, t["start"], t["end"])
        if iv:
            late.append(span(t)[1] - iv[1])
    if late:
        print(f"capture: allowance: {len(late)} calls ended inside full collection but CUPTI looked at its "
              f"switches for them after one went off (truth rec, up to {us(max(late))} past the cupti_kind "
              f"off line): optional (an API record may be lost, the op then timed from its hook)")
    nopt = sum(1 for t in calls if optional(t)) - len(late)
    if nopt:
        print(f"capture: {nopt} calls overlap CUPTI switching on or off (truth cupti_kind lines): optional")
    refusals = []
    for k, (x, y) in enumerate(wins):
        if not within(full, x, x):
            on = min((a for a, b in full if a > x), default=None)
            refusals.append(f"window {k}: start mark {x} outside CUPTI's full collection" +
                            (f" ({us(on - x)} before its kinds were all on at {on})" if on is not None else ""))
        if not within(full, y, y):
            off = max((b for a, b in full if b < y), default=None)
            refusals.append(f"window {k}: stop mark {y} outside CUPTI's full collection" +
                            (f" ({us(y - off)} after a kind went off at {off})" if off is not None else ""))
        if not within(anyon, x, y):
            refusals.append(f"window {k}: {x}..{y} is not inside one stretch with a CUPTI switch on "
                            "(the truth's cupti_kind lines: everything was off within it)")
    return held, optional, refusals


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    truth = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    report = json.load(open(sys.argv[2]))
    wins = [(w["start_ns"], w["stop_ns"]) for w in report["summary"].get("windows", [])]

    held, optional, refusals = capture_rules(truth, wins) if wins else (None, None, [])

    # CUPTI's own time inside each call (simcuda's overhead lines), when the
    # report took it out of the phases (docs/metrics.md §3)
    source = report["summary"].get("cupti_cost", {}).get("source", "none")
    raw = os.environ.get("CHECK_RAW") == "1"
    net = source in ("records", "calibration") and not raw
    if raw:  # the report's launch with CUPTI's cost left in
        for o in report["operators"]:
            o["launch_ns"] = o.get("launch_raw_ns", o["launch_ns"])
    calib_slack = CALIB_SLACK_NS if source == "calibration" and not raw else 0
    cupti = {}
    looked = {}  # api corr -> when simcuda looked at the GPU: after CUPTI's time in the call
    for t in truth:
        if t["type"] == "overhead":
            looked[t["api_corr"]] = max(looked.get(t["api_corr"], 0), t["end"])
            if net:
                cupti[t["api_corr"]] = cupti.get(t["api_corr"], 0) + t["end"] - t["start"]
    names = demangle(sorted({t["name"] for t in truth if t["type"] == "kernel"}))

    # stream id -> device (from "device D stream S" operator names)
    dev_of = {}
    for src in (report, json.load(open(os.environ["STREAM_REPORT"])) if os.environ.get("STREAM_REPORT") else None):
        for op in (src or {}).get("operators", []):
            f = op["name"].split()
            if len(f) == 4 and f[0] == "device" and f[2] == "stream":
                dev_of[int(f[3])] = int(f[1])
    by_stream = report.get("group_by") == "stream"

    def expect(with_optional):
        """The operators the truth expects: without or with the optional calls."""
        own = {t["corr"] for t in truth if t["type"] == "kernel" and t["name"] == CALIB_KERNEL}
        def captured(t):
            if not wins or held(t):
                return True
            return with_optional and optional(t)

        apis = {t["corr"]: t for t in truth if t["type"] == "api" and captured(t) and t["corr"] not in own}
        ops = [t for t in truth if t["type"] in ("kernel", "memcpy", "memset") and (not wins or t.get("api_corr") in apis)
               and t.get("name") != CALIB_KERNEL]
        # with the calibration: how much longer CUPTI's time in each call was
        # than in the shortest call of its name (a preempted spin on a loaded
        # host), which no per-call estimate can know: allowed on top of
        # CALIB_SLACK_NS, in the phase that time went to
        stretch = {}
        if calib_slack:
            shortest = {}
            for c, d in cupti.items():
                a = apis.get(c)
                if a:
                    shortest[a["name"]] = min(shortest.get(a["name"], d), d)
            for c, d in cupti.items():
                a = apis.get(c)
                if a:
                    stretch[c] = d - shortest[a["name"]]
        syncs = {}
        for t in truth:
            if t["type"] == "sync" and (not wins or t["api_corr"] in apis):
                syncs[(t["api_corr"], t["start"], t["end"])] = t  # the truth may repeat a line
        syncs = list(syncs.values())
        own_block = {}
        waited = {}
        gpu_waits = {}  # waited corr -> number of waits ending at a GPU timestamp
        blocked_calls = {}  # api corr -> number of such waits inside the call
        maybe = {}  # op corr -> sync the report may charge it within the clock error
        est_waits = {}  # waited corr -> waits whose start the calibration estimated
        stretch_waits = {}  # waited corr -> the stretch of those waits' calls
        ends = {t["corr"]: t["end"] for t in truth if t["type"] in ("kernel", "memcpy", "memset")}
        first_wait = {}
        for s in syncs:
            first_wait[s["api_corr"]] = min(first_wait.get(s["api_corr"], s["start"]), s["start"])
        for s in syncs:
            if (s["kind"] in IMPLICIT or s["kind"] == "queue_full") and s["waited_corr"] in ends:
                # metrics.md §3: an implicit sync's or a full queue's wait ends
                # when the op it waited for ended (the truth line ends when the
                # host thread woke, later on a loaded host; the rest is the
                # call's own time)
                s = dict(s, end=max(s["start"], min(s["end"], ends[s["waited_corr"]])))
            # metrics.md §3: a wait begins at the call's entry (CUPTI's own
            # time there, simcuda's overhead lines, and the runtime's entry
            # precede the truth line); an explicit sync is the whole call
            api = apis.get(s["api_corr"])
            # (a full queue's wait is CUPTI's COMMAND_BUFFER_FULL record: the
            # truth line's own start; a call may wait more than once)
            if api and s["kind"] != "queue_full" and s["start"] == first_wait[s["api_corr"]]:
                s = dict(s, start=min(s["start"], api["start"] + cupti.get(api["corr"], 0)))
                if s["kind"] in EXPLICIT:
                    s = dict(s, end=max(s["end"], api["end"]))
            if s["kind"] in EXPLICIT and not s["waited_corr"] and api and QUEUE_SLACK_NS:
                # nothing outstanding, but an op ended within the clock error
                # before simcuda looked (the call's entry, or during CUPTI's
                # time in it: the truth line's start): the report may charge
                # the call to it
                seen = max(api["start"], looked.get(api["corr"], 0))
                near = [o for o in ops if api["start"] - QUEUE_SLACK_NS < o["end"] <= seen]
                if near:
                    o = max(near, key=lambda o: o["end"])
                    maybe[o["corr"]] = maybe.get(o["corr"], 0) + s["end"] - s["start"]
            if s["waited_corr"] and s["kind"] not in EXPLICIT:
                gpu_waits[s["waited_corr"]] = gpu_waits.get(s["waited_corr"], 0) + 1
                blocked_calls[s["api_corr"]] = blocked_calls.get(s["api_corr"], 0) + 1
            if s["waited_corr"] and calib_slack:
                est_waits[s["waited_corr"]] = est_waits.get(s["waited_corr"], 0) + 1
                stretch_waits[s["waited_corr"]] = stretch_waits.get(s["waited_corr"], 0) + stretch.get(s["api_corr"], 0)
            if s["kind"] in ("memcpy", "memset", "pageable_copy", "queue_full"):
                own_block[s["api_corr"]] = own_block.get(s["api_corr"], 0) + s["end"] - s["start"]
            if s["waited_corr"]:
                waited[s["waited_corr"]] = waited.get(s["waited_corr"], 0) + s["end"] - s["start"]
        # an implicit synchronization that did not wait (the device was idle
        # when simcuda looked, after CUPTI's time), yet an op ended inside the
        # call: only a host thread held off the CPU between the call's entry and
        # that look does this (an op still running then would have been waited
        # for). From the call's timestamps it is a wait for that op, and the
        # report may read it so, up to the op's end (no profiler can tell)
        for a in apis.values():
            if a["name"] not in IMPLICIT_CALLS or a["corr"] in first_wait:
                continue
            w0 = a["start"] + cupti.get(a["corr"], 0)
            ended_in = [o for o in ops if w0 < o["end"] <= a["end"]]
            if ended_in:
                # (a wait that ends at a GPU timestamp: up to the clock error more)
                o = max(ended_in, key=lambda o: o["end"])
                maybe[o["corr"]] = maybe.get(o["corr"], 0) + o["end"] - w0 + QUEUE_SLACK_NS
        # a blocking copy with nothing outstanding, but an op that ended within
        # the clock error before the call: the report may charge that op a wait
        # of up to the error, out of the copy's launch
        maybe_launch = {}  # api corr -> launch the report may move to such a wait
        if QUEUE_SLACK_NS:
            for a in apis.values():
                if a["name"] not in BLOCKING or a["corr"] in first_wait:
                    continue
                seen = max(a["start"], looked.get(a["corr"], 0))
                near = [o for o in ops if a["start"] - QUEUE_SLACK_NS < o["end"] <= seen
                        and apis.get(o.get("api_corr"), {"end": 0})["end"] <= a["start"]]
                if near:
                    o = max(near, key=lambda o: o["end"])
                    maybe[o["corr"]] = maybe.get(o["corr"], 0) + QUEUE_SLACK_NS
                    maybe_launch[a["corr"]] = maybe_launch.get(a["corr"], 0) + QUEUE_SLACK_NS
        # with the calibration, a call whose CUPTI time was stretched: an op that
        # ended during the stretch was still running where the estimate ends
        # CUPTI's time, so the report may see the call wait for it (a pageable
        # copy, a synchronize), up to the stretch
        if stretch:
            by_end = sorted(ops, key=lambda o: o["end"])
            ends_sorted = [o["end"] for o in by_end]
            for c, st in stretch.items():
                if st <= 0:
                    continue
                hi = apis[c]["start"] + cupti[c]
                k = bisect.bisect_right(ends_sorted, hi) - 1
                if k >= 0 and ends_sorted[k] > hi - st:
                    o = by_end[k]
                    maybe[o["corr"]] = maybe.get(o["corr"], 0) + st
        # a cudaGraphLaunch's host time is the launch of the first op (by GPU
        # start) of that launch only: its other nodes have launch 0
        first_of = {}
        for o in ops:
            api = apis.get(o.get("api_corr"))
            if api and api["name"].startswith("cudaGraphLaunch"):
                f = first_of.get(api["corr"])
                if f is None or o["start"] < f["start"]:
                    first_of[api["corr"]] = o
        # a wait names the correlation id it waited for; the kernels of one
        # graph launch share it, and the wait is charged to the last-finishing
        last_of = {}
        for o in ops:
            f = last_of.get(o["corr"])
            if f is None or o["end"] > f["end"]:
                last_of[o["corr"]] = o
        want = {}
        late = [0]  # launch the optional calls may have from their hooks beyond the truth's
        for o in ops:
            name = names[o["name"]] if o["type"] == "kernel" else (
                "memcpy " + o.get("kind", "") if o["type"] == "memcpy" else "memset")
            if by_stream:
                name = f"device {dev_of.get(o['stream'], 0)} stream {o['stream']}"
            g = want.setdefault(name, {"count": 0, "launch_ns": 0, "queue_ns": 0, "execute_ns": 0, "sync_ns": 0,
                                       "gpu_waits": 0, "blocked": 0, "maybe_sync": 0, "maybe_launch": 0,
                                       "est_calls": 0, "est_waits": 0, "stretch_calls": 0, "stretch_waits": 0})
            api = apis.get(o.get("api_corr"))
            ex = o["end"] - o["start"]
            g["count"] += 1
            g["execute_ns"] += ex
            if api:
                launch = api["end"] - api["start"] - cupti.get(api["corr"], 0)
                if wins and not held(api):
                    # an optional call may have lost its API record: its op
                    # is then timed from its hook, which returns after
                    # CUPTI's last look for it (the truth's rec)
                    late[0] += api.get("rec", api["end"]) - api["end"]
                    launch += api.get("rec", api["end"]) - api["end"]
                blocking = api["name"] in BLOCKING or (
                    o["type"] == "memcpy" and "Async" in api["name"] and api["end"] >= o["end"])
                if blocking:
                    launch -= ex
                launch -= own_block.get(api["corr"], 0)
                if api["corr"] in first_of and first_of[api["corr"]] is not o:
                    launch = 0
                elif calib_slack:
                    g["est_calls"] += 1
                    g["stretch_calls"] += stretch.get(api["corr"], 0)
                g["launch_ns"] += max(0, launch)
                g["queue_ns"] += max(0, o["start"] - api["end"])
                g["blocked"] += blocked_calls.get(api["corr"], 0)
                g["maybe_launch"] += maybe_launch.get(api["corr"], 0)
            if last_of.get(o["corr"]) is o:
                g["sync_ns"] += waited.get(o["corr"], 0)
                g["gpu_waits"] += gpu_waits.get(o["corr"], 0)
                g["est_waits"] += est_waits.get(o["corr"], 0)
                g["stretch_waits"] += stretch_waits.get(o["corr"], 0)
            g["maybe_sync"] += maybe.get(o["corr"], 0)
        if late[0]:
            print(f"capture: allowance: optional calls' launch up to their truth rec, {late[0]} ns beyond their "
                  "ends in all (timed from a hook when CUPTI's record was lost)")
        return want, ops

    want_lo, ops_lo = expect(False)
    want, ops = expect(True)
    got = {o["name"]: o for o in report["operators"]}
    bad = list(refusals)

    def close(a, b):
        return abs(a - b) <= max(REL * abs(b), ABS_NS)

    def accept(gv, wv, k, slack, maybe_sync, maybe_launch):
        """Within the tolerance and the slack of the truth, plus what the
        report may charge on top (maybe_sync: waits the truth has not) or
        move out (maybe_launch): the errors add up in one sum."""
        tol = max(REL * abs(wv), ABS_NS) + slack
        more = maybe_sync if k == "sync_ns" else 0
        less = maybe_launch if k == "launch_ns" else 0
        return wv - less - tol <= gv <= wv + more + tol

    def between(gv, x, y, slack):
        """Optional calls: anywhere from the expectation without them to the one with them."""
        lo, hi = min(x, y), max(x, y)
        return lo - max(REL * lo, ABS_NS) - slack <= gv <= hi + max(REL * hi, ABS_NS) + slack

    keys = ("launch_ns",) if raw else ("launch_ns", "queue_ns", "execute_ns", "sync_ns")
    tot_w, tot_wl, tot_g = ({k: 0 for k in keys} for _ in range(3))
    zero = {k: 0 for k in next(iter(want.values()), {"count": 0})}
    for name in sorted(set(want) | set(want_lo)):
        w, wl = want.get(name, zero), want_lo.get(name, zero)
        g = got.get(name)
        if not g:
            if wl["count"]:
                bad.append(f"{name}: in the truth ({wl['count']} ops) but not in the report")
            continue
        if not wl["count"] <= g["count"] <= w["count"]:
            bad.append(f"{name}: count {g['count']} != truth {w['count']}" +
                       (f" (without the optional calls {wl['count']})" if wl["count"] != w["count"] else ""))
        for k in keys:
            tot_w[k] += w[k]
            tot_wl[k] += wl[k]
            tot_g[k] += g[k]
            slack = QUEUE_SLACK_NS * {"queue_ns": w["count"], "sync_ns": w["gpu_waits"],
                                      "launch_ns": w["blocked"]}.get(k, 0)
            slack += calib_slack * {"sync_ns": w["est_waits"], "launch_ns": w["est_calls"]}.get(k, 0)
            slack += {"sync_ns": w["stretch_waits"], "launch_ns": w["stretch_calls"]}.get(k, 0)
            if not (accept(g[k], w[k], k, slack, w["maybe_sync"], w["maybe_launch"]) or
                    accept(g[k], wl[k], k, slack, wl["maybe_sync"], wl["maybe_launch"]) or
                    (wl[k] != w[k] and between(g[k], wl[k], w[k], slack))):
                bad.append(f"{name}: {k} {g[k]} != truth {w[k]} (diff {g[k] - w[k]:+d} ns)" +
                           (f" (without the optional calls {wl[k]})" if wl[k] != w[k] else ""))
        print(f"{name}: count {g['count']}; " + ", ".join(f"{k} {g[k]} (truth {w[k]})" for k in keys))
    for name in got:
        if name not in want:
            bad.append(f"{name}: in the report but not in the truth")
    nops = sum(w["count"] for w in want.values())
    nwaits = sum(w["gpu_waits"] for w in want.values())
    for k in keys:
        slack = QUEUE_SLACK_NS * {"queue_ns": nops, "sync_ns": nwaits, "launch_ns": nwaits}.get(k, 0)
        slack += calib_slack * sum(w[{"sync_ns": "est_waits"}.get(k, "est_calls")] for w in want.values()
                                   if k in ("sync_ns", "launch_ns"))
        slack += sum(w[{"sync_ns": "stretch_waits"}.get(k, "stretch_calls")] for w in want.values()
                     if k in ("sync_ns", "launch_ns"))
        maybe_all = sum(w["maybe_sync"] for w in want.values())
        maybe_less = sum(w["maybe_launch"] for w in want.values())
        if not (accept(tot_g[k], tot_w[k], k, slack, maybe_all, maybe_less) or
                accept(tot_g[k], tot_wl[k], k, slack, maybe_all, maybe_less) or
                (tot_wl[k] != tot_w[k] and between(tot_g[k], tot_wl[k], tot_w[k], slack))):
            bad.append(f"all operators: {k} {tot_g[k]} != truth {tot_w[k]}")

    def union(ops):
        """GPU busy = union of the op intervals of each device, summed."""
        busy = 0
        for d in sorted({dev_of.get(o["stream"], 0) for o in ops}):
            cur_s, cur_e = None, None
            for a, b in sorted((o["start"], o["end"]) for o in ops if dev_of.get(o["stream"], 0) == d):
                if cur_e is None or a > cur_e:
                    if cur_e is not None:
                        busy += cur_e - cur_s
                    cur_s, cur_e = a, b
                else:
                    cur_e = max(cur_e, b)
            if cur_e is not None:
                busy += cur_e - cur_s
        return busy

    busy, busy_lo = union(ops), union(ops_lo)
    gb = report["summary"]["gpu_busy_ns"]
    print(f"gpu_busy_ns {gb} (truth union {busy}, plain sum {sum(o['end'] - o['start'] for o in ops)})")
    if not (close(gb, busy) or close(gb, busy_lo) or between(gb, busy_lo, busy, 0)):
        bad.append(f"gpu_busy_ns {gb} != truth union {busy}")
    if wins:
        wall = sum(b - a for a, b in wins)
        s = report["summary"]
        print(f"windows {len(wins)}: wall_ns {s['wall_ns']} (sum of windows {wall}), idle {s['gpu_idle_ns']}")
        if s["wall_ns"] != wall:
            bad.append(f"wall_ns {s['wall_ns']} != sum of the capture windows {wall}")
        # every runtime record CUPTI wrote for a call it had to hold is in
        # the report: host_api_ns, their plain sum (metrics.md §6), is at
        # least the held calls' and at most that plus the optional calls'
        # (exact: the records carry the truth's own start and end)
        own_calls = {t["api_corr"] for t in truth if t["type"] == "kernel" and t["name"] == CALIB_KERNEL}
        rt = [t for t in truth if t["type"] == "api" and t.get("cupti_write_rt") and t["corr"] not in own_calls]
        if rt and "host_api_ns" in s:
            lo = sum(t["end"] - t["start"] for t in rt if held(t))
            hi = lo + sum(t["end"] - t["start"] for t in rt if optional(t))
            print(f"host_api_ns {s['host_api_ns']} (truth: held calls' runtime records {lo}, with the optional {hi})")
            if not lo <= s["host_api_ns"] <= hi:
                bad.append(f"host_api_ns {s['host_api_ns']} outside the runtime records of the held calls {lo}"
                           f"..{hi} (with the optional calls): " +
                           ("a held call's API record is missing" if s["host_api_ns"] < lo else "records beyond them"))
        if s["gpu_idle_ns"] > wall:
            bad.append(f"gpu_idle_ns {s['gpu_idle_ns']} > wall {wall}")
        empty = [i["iter"] for i in report.get("iterations", {}).get("items", []) if not i.get("ops")]
        if empty:
            bad.append(f"iterations without ops listed in a windowed capture: {empty[:5]}")
    for spec in sys.argv[3:]:
        if "@" in spec:
            name, nums = spec.split("@", 1)
            g = got.get(name)
            if not g:
                bad.append(f"{name}: not in the report")
                continue
            for k, us in zip(("launch_ns", "execute_ns", "sync_ns"), nums.split("/")):
                mean = g[k] / g["count"]
                print(f"{name}: {k} per call {mean / 1e3:.1f} us (nominal {us} us)")
                if abs(mean - float(us) * 1e3) > max(NOMINAL_REL * float(us) * 1e3, NOMINAL_ABS_NS):
                    bad.append(f"{name}: {k} per call {mean / 1e3:.1f} us != nominal {us} us")
            continue
        name, verdict = spec.split("=", 1)
        v = report["summary"]["verdict"] if name == "*" else got.get(name, {}).get("verdict")
        if v != verdict:
            bad.append(f"{name}: verdict {v}, expected {verdict}")
    for b in bad:
        print("MISMATCH " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
