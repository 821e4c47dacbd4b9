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
pageable copies, implicit syncs of cudaFree & co.) is split over the ops it
waited for: the waited op and the earlier ops of its scope ending inside the
wait (docs/metrics.md §3); a queue-full wait is the waited op's sync; a wait begins at its call's entry (CUPTI's own time there,
simcuda's `overhead` lines, counts in it) and an explicit sync is the whole
call (docs/metrics.md §3, "CUPTI's own cost"), except a full queue's wait,
which the report takes from CUPTI's COMMAND_BUFFER_FULL record (the truth
line, ending at the freed op's end) or, without CUPTI's overhead records,
infers from the queue's level (from the call's entry after CUPTI's cost to
the freed op's end).
A host function's run on its stream (the truth's `hostfn` lines) is an op
too, "host callback FUNCTION" (docs/metrics.md §3, host callbacks): its run
on the host's clock is its execute, it has no launch or queue, it is never
GPU busy, and a wait for it is split like any other. The function each call
enqueued is the program's: the calling script names it (HOSTFN_NAMES=
"cudaLaunchHostFunc=f,cudaStreamAddCallback=g"), required when the truth has
such lines, since under the library simcuda is handed its trampoline.
The truth's run holds the trampoline around the function too, and a
callback thread the host held off the CPU there (162 us once, after the
trampoline's last clock read): with HOSTFN_RUNS=FILE (the program's own
clock reads in its functions, a JSON line {"start", "end"} each, every one
inside a hostfn interval) an expectation with those runs in place of the
truth's is taken beside the others (execute, and a wait that ends with a
run), printed as an allowance.

Nothing else is passed in by the calling script: every correction is derived
here, with its sign, from the truth and the report's own stated figures,
and printed with its source:
 * GPU timestamps are read as the report must read them, per device (the
   truth's `stream` lines give each op's device), by metrics.md §2 "The
   GPU's clock" applied to the truth (clock_truth): a device with copies
   that bound the offset from below is followed, its GPU times on the
   host's clock up to the least wake-up of such a copy per segment late
   (an allowance, printed); any other device is corrected by the least its
   bounds demand (usually nothing), its GPU times expected with simcuda's
   shift (the truth's `gpu_clock` line) less that, with their sign. Queue,
   execute, GPU busy and every wait that ends at a GPU timestamp follow.
   The report's own statement (`summary.gpu_clock[]`) is only held against
   the truth: a bound that leaves out the truth's offset, a device not
   followed or not corrected as the truth demands, is refused.
 * The mode and the source of CUPTI's cost come from the truth too
   (`cupti_kind`, `cupti_config`, `overhead` lines, the calibration's
   kernel): a report that says CUPTI was unavailable when it collected, or
   names another source of its cost, is refused.
 * CUPTI's own time: with the source `records` the truth's `overhead`
   lines leave each call's launch, and a wait that begins at the call's
   entry begins after them; with `calibration` the report's per-call
   estimate (its summary's figures, applied by metrics.md §3's rule to the
   truth's calls) takes their place, so a call whose CUPTI time ran long on
   a loaded host keeps the excess in its launch or wait on both sides, and
   a synchronize whose waited op (the truth's) ended before that estimate
   did, after CUPTI's time in the call (it ran short of the estimate,
   which includes the writing of the call's records after its end), had
   by that rule nothing outstanding: each such call is printed with the
   truth's figures. The figures themselves are held to simcuda's timeline by
   test_report_cupti_cost.sh (what the calibration measures: its own calls'
   periods with each layer traced and not), every calibrated capture there.
 * What no trace can tell (each printed as an allowance with the truth's
   figure): a synchronize, blocking copy or implicit sync with nothing
   outstanding in the truth while an op's end, as the report reads it,
   lies inside the call after CUPTI's (estimated) time in it — the report
   may charge it to that op as sync, out of the copy's launch; and, with
   the calibration, a call whose CUPTI time ran past the estimate, an op
   ending in between; without CUPTI's overhead records, a launch with no
   wait in the truth that began (after the estimate) on a full launch
   queue (as many ops pending as ever at a launch's entry on its device),
   an op of the queue ending inside it (a thread held off the CPU looks
   like one that waited). Such a wait is split as metrics.md §3 splits
   one: that op and the earlier ops of its scope ending inside it, each up
   to its end, that op also the rest.
The library's own calibration calls (kernel GP_CALIB_KERNEL) are no
program's op: they are left out of the truth. With CHECK_RAW=1 only launch
is compared: the report's `launch_raw_ns` (launch with CUPTI's cost left
in) against the truth's launch with it.
Each operator's phase sums, and the sums over all operators, must agree
within the larger of REL (1 %) and ABS_NS (2 us), plus the allowances
above. GPU busy must equal the union of the truth's op intervals per device,
summed (same tolerance). Every operator's verdict must be one that
docs/metrics.md §5's rule gives on the truth's sums anywhere in the
accepted intervals (the thresholds the report states). A report made with
--group-by stream is checked per stream ("device D stream S": the device of
each stream id is read from those names; stream ids are unique across
devices in simcuda), so that a wait charged to the right kernel on the wrong
device shows; STREAM_REPORT=JSON (such a report of the same trace) gives a
kernel-grouped report's check the devices for GPU busy. Verdicts are also
checked when given as NAME=VERDICT (NAME '*' = whole run); NAME@L/E/S checks
the report's per-call means of launch / execute / sync against nominal
values in us (same tolerance, per call).

Tamper controls: once the honest report agrees, the check is fed copies of
it altered just past what it accepts (half a base tolerance past each
interval's end: 1.5 x max(1 %, 2 us) from the truth where no allowance
applies): a phase moved to another, one op dropped, launch raised, the
dominant operator renamed, a verdict changed. Every one must be refused, and
with the check disabled every one is shown accepted (the control can fail).
--no-tamper skips them (a report altered on purpose by a test).

usage: report_truth_check.py [--no-tamper] TRUTH.jsonl REPORT.json [NAME=VERDICT|NAME@L/E/S ...]
Exit 0 when everything agrees and every tamper is refused; 1 with one line
per disagreement (MISMATCH) or accepted tamper (ACCEPTED) otherwise.
Python 3 standard library only.
"""
import bisect
import copy
import heapq
import json
import re
import os
import subprocess
import sys

REL, ABS_NS = 0.01, 2000
CALIB_KERNEL = "gpuphase_calibrate"  # trace/gp_format.h GP_CALIB_KERNEL
NOMINAL_REL, NOMINAL_ABS_NS = REL, ABS_NS
IMPLICIT = {"free", "free_host", "host_alloc"}
# the calls a full launch queue blocks whose waits the report infers
# (report/core/queue_full.c: kernel and graph launches, async copies and sets)
QUEUED_CALL = re.compile(r"^(cudaLaunch(?!HostFunc)|__cudaLaunch|cudaGraphLaunch"
                         r"|cudaMemcpy\w*Async|cudaMemset\w*Async)")
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


def gpu_clock(truth):
    """simcuda's conversion of GPU timestamps (its truth's gpu_clock lines,
    docs/simcuda.md): t -> the shift CUPTI's records carry at host time t.
    Without such a line the records are on the host clock (shift 0)."""
    lines = sorted((t for t in truth if t["type"] == "gpu_clock"), key=lambda t: t["origin"])

    def shift(t):
        c = None
        for x in lines:
            if c is None or x["origin"] <= t:
                c = x
        if c is None:
            return 0
        return c["offset_ns"] + round((t - c["origin"]) * c["drift_ppm"] / 1e6)

    return shift, lines


def clock_truth(truth, dev_of, shift, in_trace=lambda call: True):
    """What the report must take out of each device's GPU times, from the
    truth alone, by docs/metrics.md §2 "The GPU's clock": device ->
    (mode, figure, detail).
      "follow": the device has copies that bound the offset from below (a
        blocking copy device to host, or host to device from pinned memory;
        an async copy to pageable host memory that returned after its
        transfer); the report then follows the offset from them, its GPU
        times on the host's clock up to a copy's wake-up late: figure = per
        2^24 ns segment the least wake (the call's end less its op's end) of
        such a copy there, as {segment: ns} with the largest under None;
    only the calls in_trace(call) count (a windowed capture: the calls held
    in its windows);
        A copy's point is dropped as the report drops it: its lower bound
        more than 10 us below zero, or below another point moved by 10 ppm of
        the time between them (a copy whose call returned late);
      "fixed": otherwise the least correction its bounds demand: the lower
        bound when positive (from such copies, and device synchronizes in a
        one-device run: an op's delivered end less the end of the first
        synchronize begun after its call), the upper one when negative (an
        op's delivered start less its call's start), else 0: figure = that
        offset."""
    api = {t["corr"]: t for t in truth if t["type"] == "api" and in_trace(t)}
    ops = [t for t in truth if t["type"] in ("kernel", "memcpy", "memset") and t.get("api_corr") in api]
    devs = {dev_of.get(o["stream"], 0) for o in ops}
    segs = {}
    for o in ops:
        a = api.get(o.get("api_corr"))
        if o["type"] != "memcpy" or not a:
            continue
        n, kind, pg = a["name"], o.get("kind"), o.get("pageable")
        bounding = (n in BLOCKING and (kind == "DtoH" or (kind == "HtoD" and pg == 0))) or \
            (n.startswith("cudaMemcpyAsync") and kind == "DtoH" and pg == 1 and a["end"] >= o["end"] - 10000)
        wake = a["end"] - o["end"]
        if not bounding or wake < 0:
            continue
        d = dev_of.get(o["stream"], 0)
        low = shift(o["end"]) - wake  # the lower bound this copy gives (delivered end less call end)
        key = (d, o["end"] // SEGMENT_NS)
        if key not in segs or low > segs[key][1]:
            segs[key] = (o["end"], low, wake)  # per segment the tightest: its point
    # points the report drops (metrics.md §2): more than 10 us below zero, or
    # below another point moved by a drift of 10 ppm of the time between them
    lo = {}
    for (d, g), (t, low, w) in segs.items():
        lo[d] = max(lo.get(d, -10 ** 18), low)
    kept = {}
    for (d, g), (t, low, w) in segs.items():
        if low < -10000 or any(l2 - 1e-5 * abs(t2 - t) > low for (d2, _), (t2, l2, _) in segs.items() if d2 == d):
            continue
        kept[(d, g)] = w
    out = {}
    for (d, g), w in kept.items():
        m = out.setdefault(d, ("follow", {None: 0}, "copies"))[1]
        m[g] = w
        m[None] = max(m[None], w)
    if len(devs) == 1:
        d = next(iter(devs))
        joined = sorted((api[o["api_corr"]]["end"], o["end"] + shift(o["end"])) for o in ops if o.get("api_corr") in api)
        ends = [e for e, _ in joined]
        best, pre = -10 ** 18, []
        for _, x in joined:
            best = max(best, x)
            pre.append(best)
        for t in truth:
            if t["type"] == "api" and t["name"] == "cudaDeviceSynchronize":
                k = bisect.bisect_right(ends, t["start"]) - 1
                if k >= 0:
                    lo[d] = max(lo.get(d, -10 ** 18), pre[k] - t["end"])  # (a bound, never a point)
    hi = {}
    for o in ops:
        a = api.get(o.get("api_corr"))
        if a:
            d = dev_of.get(o["stream"], 0)
            hi[d] = min(hi.get(d, 10 ** 18), o["start"] + shift(o["start"]) - a["start"])
    for d in devs:
        if d in out:
            continue
        l, h = lo.get(d), hi.get(d)
        fig = l if l is not None and l > 0 else h if h is not None and h < 0 else 0
        out[d] = ("fixed", fig, f"bounds {l if l is not None else 'none'}..{h if h is not None else 'none'}")
    return out


SEGMENT_NS = 1 << 24  # docs/metrics.md §2 "The GPU's clock": the report's segments of GPU time


def calib_cost(report, truth):
    """With the calibration as the source of CUPTI's cost, the cost the
    report takes out of each traced call by its documented rule
    (docs/metrics.md §3): runtime_ns for the runtime record, driver_ns for
    a driver record nested in it (simcuda's truth: the call's
    cupti_write_drv), launch_ns once for a kernel launch (cudaLaunch*,
    __cudaLaunch*, not cudaLaunchHostFunc nor a graph launch); at most the
    call's length. The report's own figures, applied to the truth's calls:
    what the calibration measured is held to the truth separately
    (test_report_cupti_cost.sh)."""
    k = report["summary"].get("cupti_cost", {}).get("calibration", {})
    rt = k.get("runtime_ns", 0) if k.get("api") else 0
    drv = k.get("driver_ns", 0) if k.get("api") else 0
    la = k.get("launch_ns", 0) if k.get("launch") else 0
    out = {}
    for t in truth:
        if t["type"] != "api" or not (t.get("cupti_write_rt") or t.get("cupti_write_drv")):
            continue
        n = t["name"]
        launch = (n.startswith("cudaLaunch") or n.startswith("__cudaLaunch")) and not n.startswith("cudaLaunchHostFunc")
        c = (rt if t.get("cupti_write_rt") else 0) + (drv if t.get("cupti_write_drv") else 0) + (la if launch else 0)
        out[t["corr"]] = min(c, t["end"] - t["start"])
    return out


def rule(s, l, e, tot, run_total, th):
    """docs/metrics.md §5 on one operator's sums."""
    if not tot:
        return "none"
    if run_total and 100.0 * tot / run_total < th["min"]:
        return "minor"
    if 100.0 * s / tot > th["sync"]:
        return "sync-bound"
    if 100.0 * l / tot > th["launch"]:
        return "launch-bound"
    if 100.0 * e / tot > th["execute"]:
        return "compute-bound"
    return "balanced"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    tamper = "--no-tamper" not in sys.argv
    if len(args) < 2:
        print(__doc__)
        return 2
    truth = [json.loads(l) for l in open(args[0]) if l.strip()]
    report = json.load(open(args[1]))
    specs = args[2:]
    wins = [(w["start_ns"], w["stop_ns"]) for w in report["summary"].get("windows", [])]

    # how the report must judge the capture, from the truth, never from the
    # report: CUPTI collecting at all (simcuda's cupti_kind lines), and the
    # source of CUPTI's cost (its cupti_config line, its overhead lines, the
    # library's calibration kernel)
    mode_bad = []
    cfg = next((t for t in truth if t["type"] == "cupti_config"), None)
    collected = any(t["type"] == "cupti_kind" and t.get("on") for t in truth)
    hook_claim = bool(report["summary"].get("cupti_unavailable"))
    if cfg is not None and hook_claim == collected:
        mode_bad.append("the report says CUPTI was " + ("unavailable" if hook_claim else "available") +
                        ", the truth that it " + ("collected" if collected else "never collected"))
    if hook_claim and not wins and not mode_bad:
        return hook_only(truth, report, specs)
    held, optional, refusals = capture_rules(truth, wins) if wins else (None, None, [])

    # CUPTI's own time inside each call (simcuda's overhead lines), when the
    # report took it out of the phases (docs/metrics.md §3)
    source = report["summary"].get("cupti_cost", {}).get("source", "none")
    if cfg is not None and not mode_bad:
        own_k = any(t["type"] == "kernel" and t["name"] == CALIB_KERNEL for t in truth)
        spent = any(t["type"] == "overhead" for t in truth)
        want_src = ("records" if spent else "none") if cfg["overhead_records"] else \
            ("calibration" if own_k else "none")
        print(f"CUPTI's cost: source {source} (the truth: overhead records "
              f"{'possible' if cfg['overhead_records'] else 'off'}, CUPTI time {'spent' if spent else 'none'}, "
              f"calibration {'ran' if own_k else 'did not run'}: {want_src})")
        if source != want_src:
            mode_bad.append(f"cupti_cost.source {source}, the truth gives {want_src}")
    raw = os.environ.get("CHECK_RAW") == "1"
    net = source in ("records", "calibration") and not raw
    if raw:  # the report's launch with CUPTI's cost left in
        for o in report["operators"]:
            o["launch_ns"] = o.get("launch_raw_ns", o["launch_ns"])
    actual = {}  # api corr -> CUPTI's time in the call (the truth's overhead lines)
    looked = {}  # api corr -> when simcuda looked at the GPU: after CUPTI's time in the call
    for t in truth:
        if t["type"] == "overhead":
            looked[t["api_corr"]] = max(looked.get(t["api_corr"], 0), t["end"])
            actual[t["api_corr"]] = actual.get(t["api_corr"], 0) + t["end"] - t["start"]
    allowances = []  # (what, size, source) printed once
    cupti = {}
    est = {}  # with the calibration: api corr -> the report's estimate where it is not the truth's time
    if net and source == "calibration":
        cupti = calib_cost(report, truth)
        k = report["summary"]["cupti_cost"].get("calibration", {})
        diffs = [cupti.get(c, 0) - d for c, d in actual.items()]
        print(f"calibration: the report takes runtime {k.get('runtime_ns')} / driver {k.get('driver_ns')} / launch "
              f"{k.get('launch_ns')} ns out of a call (its summary); the truth's CUPTI time differs from that by "
              f"{min(diffs, default=0):+d}..{max(diffs, default=0):+d} ns a call: expected per call, with its sign")
        est = cupti
    elif net:
        cupti = dict(actual)
    names = demangle(sorted({t["name"] for t in truth if t["type"] == "kernel"}))

    # GPU timestamps as the report reads them: simcuda's conversion (the
    # truth's gpu_clock) less the offset the report took out (its summary)
    shift, clock_lines = gpu_clock(truth)

    # CUPTI's COMMAND_BUFFER_FULL records come with its overhead records;
    # without them (the calibration's case) the report infers full queues
    inferred_queue = source == "calibration"

    # stream id -> device (the truth's stream lines; else "device D stream
    # S" operator names)
    dev_of = {t["stream"]: t["device"] for t in truth if t["type"] == "stream"}
    for src in (report, json.load(open(os.environ["STREAM_REPORT"])) if os.environ.get("STREAM_REPORT") else None):
        for op in (src or {}).get("operators", []):
            f = op["name"].split()
            if len(f) == 4 and f[0] == "device" and f[2] == "stream":
                dev_of.setdefault(int(f[3]), int(f[1]))
    by_stream = report.get("group_by") == "stream"

    gpu_ops = [t for t in truth if t["type"] in ("kernel", "memcpy", "memset")]
    # host functions run on their streams (the truth's hostfn lines): ops on
    # the host's clock, no launch or queue, named "host callback FUNCTION"
    # (docs/metrics.md §3, host callbacks); which function each call enqueued
    # is the program's (HOSTFN_NAMES="call=function,...": under the library
    # simcuda sees only its trampoline)
    fn_of = dict(x.split("=", 1) for x in os.environ.get("HOSTFN_NAMES", "").split(",") if "=" in x)
    host_fns = []
    for t in truth:
        if t["type"] == "hostfn":
            call = t["call"].removesuffix("_ptsz")
            if call not in fn_of:
                print(f"FAIL: the truth has a host function enqueued by {call}; HOSTFN_NAMES names none for it")
                return 1
            host_fns.append(dict(t, name="host callback " + fn_of[call], call_corr=t["corr"]))
    # HOSTFN_RUNS=FILE: the program's own clock reads of its functions' runs
    # (a line {"start", "end"} each, the truth's clock), each inside a
    # hostfn interval, which also holds the profiler's work around the
    # function (its trampoline) and a thread held off the CPU there: a
    # report may give a run anything from the program's run to the truth's
    # (an expectation with the program's runs in place of the truth's, the
    # "prog" variant below: execute, and a wait that ends with the run)
    runs_path = os.environ.get("HOSTFN_RUNS")
    if runs_path:
        runs = [json.loads(l) for l in open(runs_path) if l.strip()]
        for r in runs:
            t = next((t for t in host_fns if t["start"] <= r["start"] <= r["end"] <= t["end"]), None)
            if t is None:
                print(f"FAIL: HOSTFN_RUNS: the program's run {r['start']}..{r['end']} lies in no hostfn interval "
                      f"of the truth (another clock?)")
                return 1
            t["run"] = (r["start"], r["end"])
        if len(runs) != len(host_fns):
            print(f"FAIL: HOSTFN_RUNS: {len(runs)} runs of the program's functions, {len(host_fns)} in the truth")
            return 1
    # per device, what the report must have taken out of its GPU times: from
    # the truth by metrics.md §2's rule (clock_truth), never from the report,
    # whose statement (summary.gpu_clock[]) is only held against it
    # (a windowed capture: the calls its windows hold; a device whose only
    # bounding copies are optional calls at an edge may be either: there the
    # report's statement chooses, said below)
    modes = clock_truth(truth, dev_of, shift, (lambda t: held(t)) if wins else (lambda t: True))
    if wins:
        either = clock_truth(truth, dev_of, shift, lambda t: held(t) or optional(t))
        for d, m in either.items():
            e = next((x for x in report["summary"].get("gpu_clock") or [] if x.get("device", 0) == d), {})
            if m[0] == "follow" and modes.get(d, ("fixed",))[0] != "follow" and e.get("from", {}).get("points"):
                print(f"GPU clock, device {d}: only optional calls at the windows' edges bound the offset; the "
                      f"report followed it from them")
                modes[d] = m
    bounds_bad = []  # statements that disagree with the truth
    c = clock_lines[-1] if clock_lines else {"offset_ns": 0, "drift_ppm": 0}
    if clock_lines:
        print(f"GPU clock: simcuda shifts GPU timestamps by {c['offset_ns']:+d} ns + {c['drift_ppm']} ppm "
              f"(truth gpu_clock)")
    stated = {e.get("device", 0): e for e in report["summary"].get("gpu_clock") or []}
    for d, (mode, fig, detail) in sorted(modes.items()):
        e = stated.get(d, {})
        sh = [shift(o[x]) for o in gpu_ops for x in ("start", "end") if dev_of.get(o["stream"], 0) == d]
        lo, hi = e.get("lo_ns"), e.get("hi_ns")
        if sh and ((lo is not None and lo > max(sh)) or (hi is not None and hi < min(sh))):
            bounds_bad.append(f"GPU clock, device {d}: the report's bound {lo}..{hi} leaves out the truth's "
                              f"offset {min(sh)}..{max(sh)}")
        if mode == "follow":
            print(f"GPU clock, device {d}: the truth has copies that bound the offset: GPU times expected on the "
                  f"host's clock, up to the least wake-up of such a copy per segment late (allowance: up to "
                  f"{fig[None]} ns an op, the truth's call ends less its ops' ends)")
            if not (e.get("applied") and e.get("from", {}).get("points")):
                bounds_bad.append(f"GPU clock, device {d}: the truth's copies bound the offset, the report did not "
                                  f"follow it (applied {e.get('applied')}, points {e.get('from', {}).get('points')})")
        else:
            print(f"GPU clock, device {d}: no copy bounds the offset ({detail}): the report must take out "
                  f"{fig:+d} ns; every GPU time expected with simcuda's shift less that")
            if fig and not e.get("applied"):
                bounds_bad.append(f"GPU clock, device {d}: the truth's bounds demand {fig:+d} ns taken out, the "
                                  f"report took none")

    def gpu(t, dev, far):
        """A GPU-side truth time t as the report reads it (far: at the far
        end of the tracking residual)."""
        mode, fig, _ = modes.get(dev, ("fixed", 0, ""))
        if mode == "follow":
            return t + (fig.get(t // SEGMENT_NS, fig[None]) if far else 0)
        return t + shift(t) - fig

    why = {}  # the allowances by reason: the largest over the expectations
    late = [0]  # launch the optional calls may have from their hooks beyond the truth's (the largest)

    def expect(with_optional, far=False, prog=False):
        """The operators the truth expects: without or with the optional calls."""
        own = {t["corr"] for t in truth if t["type"] == "kernel" and t["name"] == CALIB_KERNEL}

        def captured(t):
            if not wins or held(t):
                return True
            return with_optional and optional(t)

        apis = {t["corr"]: t for t in truth if t["type"] == "api" and captured(t) and t["corr"] not in own}
        ops = [dict(t, start=gpu(t["start"], dev_of.get(t["stream"], 0), far),
                    end=gpu(t["end"], dev_of.get(t["stream"], 0), far)) for t in gpu_ops
               if (not wins or t.get("api_corr") in apis) and t.get("name") != CALIB_KERNEL]
        ops += [dict(t, start=t["run"][0], end=t["run"][1]) if prog and "run" in t else t
                for t in host_fns if not wins or t["call_corr"] in apis]
        syncs = {}
        for t in truth:
            if t["type"] == "sync" and (not wins or t["api_corr"] in apis):
                syncs[(t["api_corr"], t["start"], t["end"])] = t  # the truth may repeat a line
        syncs = list(syncs.values())
        own_block = {}
        waited = {}
        qfull = {}  # waited corr -> its waits on a full queue (left out of the verdict's sync)
        maybe = {}  # op corr -> sync the report may charge it (a wait it cannot tell from none)
        maybe_launch = {}  # api corr -> launch the report may move to such a wait
        mine = {}  # reason -> [calls, ns, largest], merged into why (the largest of the expectations)

        def may(reason, o, lo, upto, call=None, kind="device"):
            """A wait from lo to upto that the report may see, ending with
            op o's end or after it: split as metrics.md §3 splits a wait
            (split below), over o and the ops of its scope (o's stream for a
            stream or event wait, else its device) enqueued before lo and
            ending in between, each up to its end, o also the rest. The
            call's launch may lose all of it."""
            ns = upto - lo
            dev = dev_of.get(o["stream"], 0)
            cands = [x for x in ops if x is not o and lo < x["end"] <= o["end"] and x["end"] <= upto
                     and dev_of.get(x["stream"], 0) == dev
                     and (kind not in ("stream", "event") or x["stream"] == o["stream"])
                     and (call is None or x.get("api_corr") != call)
                     and apis.get(x.get("api_corr"), {"end": 0})["end"] <= lo]
            at = lo
            cands = sorted(cands, key=lambda x: x["end"])[-7:] + [o]
            for i, x in enumerate(cands):
                e = upto if i + 1 == len(cands) else min(max(x["end"], at), upto)
                maybe[x["corr"]] = maybe.get(x["corr"], 0) + e - at
                at = e
            if call is not None:
                maybe_launch[call] = maybe_launch.get(call, 0) + ns
            r = mine.setdefault(reason, [0, 0, 0])
            r[0] += 1
            r[1] += ns
            r[2] = max(r[2], ns)
        ends = {t["corr"]: t["end"] for t in ops}
        host_ends = {t["corr"]: t["end"] for t in gpu_ops + host_fns}
        # a wait names the correlation id it waited for; the kernels of one
        # graph launch share it: the last-finishing is the one waited for
        last_of = {}
        for o in ops:
            f = last_of.get(o["corr"])
            if f is None or o["end"] > f["end"]:
                last_of[o["corr"]] = o
        share = {}  # id(op) -> its parts of the waits (metrics.md §3, the split)

        def split(s, last):
            """metrics.md §3: a wait is split over the ops it waited for,
            the truth's waited op (last) and the ops of its scope (its
            stream for a stream or event wait, else its device) enqueued
            before the wait and ending inside it, as the report reads their
            ends: each the part from the previous one's end to its own, the
            last also the rest; the report keeps the 8 latest-ending, the
            first kept charged from the wait's start."""
            dev = dev_of.get(last["stream"], 0)
            cands = [o for o in ops if o is not last and s["start"] < o["end"] <= last["end"]
                     and o["end"] <= s["end"] and dev_of.get(o["stream"], 0) == dev
                     and (s["kind"] not in ("stream", "event") or o["stream"] == last["stream"])
                     and o.get("api_corr") != s["api_corr"]
                     and apis.get(o.get("api_corr"), {"end": 0})["end"] <= s["start"]]
            cands = sorted(cands, key=lambda o: o["end"])[-7:] + [last]
            at = s["start"]
            for i, o in enumerate(cands):
                e = s["end"] if i + 1 == len(cands) else min(max(o["end"], at), s["end"])
                share[id(o)] = share.get(id(o), 0) + e - at
                at = e
        first_wait = {}
        for s in syncs:
            first_wait[s["api_corr"]] = min(first_wait.get(s["api_corr"], s["start"]), s["start"])
        unattributed = 0
        for s in syncs:
            w = s["waited_corr"]
            if s["kind"] == "queue_full" and w in ends and not inferred_queue:
                # a full queue's wait is CUPTI's COMMAND_BUFFER_FULL record, on
                # the host clock: it ends when the op it waited for ended, as
                # the GPU's timestamp reads, or with the record (the truth line
                # ends when the host thread woke, later on a loaded host; the
                # rest is the call's own time)
                s = dict(s, end=max(s["start"], min(s["end"], ends[w])))
            elif s["kind"] == "queue_full" and w in ends and s["api_corr"] in apis:
                # without CUPTI's overhead records (the calibration's case)
                # the report infers the wait from the queue's level: from the
                # call's entry after CUPTI's cost to the GPU's end of the op
                # that freed the slot (metrics.md §3)
                a = apis[s["api_corr"]]
                w0 = a["start"] + cupti.get(a["corr"], 0) if s["start"] == first_wait[a["corr"]] else s["start"]
                s = dict(s, start=w0, end=max(w0, min(ends[w], a["end"])))
            elif s["kind"] in IMPLICIT and w in ends:
                # metrics.md §3: an implicit sync's wait ends when the op it
                # waited for ended, as the GPU's timestamp reads
                s = dict(s, end=max(s["start"], min(s["end"] + ends[w] - host_ends[w], ends[w])))
            elif s["kind"] not in EXPLICIT and w in ends:
                # a blocking or pageable copy's wait ends at the GPU timestamp
                # of the work it followed
                s = dict(s, end=max(s["start"], s["end"] + ends[w] - host_ends[w]))
            # metrics.md §3: a wait begins at the call's entry (CUPTI's own
            # time there, simcuda's overhead lines, and the runtime's entry
            # precede the truth line); an explicit sync is the whole call
            api = apis.get(s["api_corr"])
            # (a full queue's wait is CUPTI's COMMAND_BUFFER_FULL record: the
            # truth line's own start; a call may wait more than once)
            if api and s["kind"] != "queue_full" and s["start"] == first_wait[s["api_corr"]]:
                # (with the calibration the report starts it after its
                # estimate of that time, whether CUPTI took less or more)
                w0 = api["start"] + cupti.get(api["corr"], 0)
                s = dict(s, start=w0 if est else min(s["start"], w0))
                if s["end"] < s["start"]:
                    s = dict(s, end=s["start"])
                if s["kind"] in EXPLICIT:
                    s = dict(s, end=max(s["end"], api["end"]))
            if est and api and s["kind"] in EXPLICIT and w in last_of and last_of[w]["end"] <= s["start"]:
                # the calibration's estimate of CUPTI's time in the call is
                # its whole cost, its writing of the call's records after
                # api_end included (simcuda's cupti_write_*), so it can run
                # past CUPTI's time inside the call (the truth's overhead
                # lines): an op that ended in between was outstanding when
                # simcuda looked (the truth's waited op) but ended before the
                # wait as metrics.md §3 places it, at the call's entry plus
                # the estimate, and every op of its scope with it. By that
                # rule no op is a candidate: the wait had nothing
                # outstanding, charged to no op
                o = last_of[w]
                if with_optional and not far:
                    early.append(f"call {api['corr']} ({api['name']}): the truth's waited op {w} ended "
                                 f"{o['end'] - api['start']} ns into the call, after CUPTI's time in it "
                                 f"(overhead lines end at {looked.get(api['corr'], api['start']) - api['start']} "
                                 f"ns; records written after the end: {api.get('cupti_write_rt', 0)} + "
                                 f"{api.get('cupti_write_drv', 0)} ns) and before the report's estimate "
                                 f"({cupti.get(api['corr'], 0)} ns): its wait of {s['end'] - s['start']} ns "
                                 f"from the estimate on is expected with nothing outstanding")
                w = 0
            if s["kind"] in EXPLICIT and not w and api:
                unattributed += s["end"] - s["start"]
                # nothing outstanding when simcuda looked (the call's entry,
                # or after CUPTI's time in it), but an op whose end, as the
                # report reads it, lies after the call's entry: the report
                # sees the call wait for it
                seen = max(api["start"], looked.get(api["corr"], 0))
                near = [o for o in ops if api["start"] + cupti.get(api["corr"], 0) < o["end"]
                        and host_ends[o["corr"]] <= seen]
                if near:
                    o = max(near, key=lambda o: o["end"])
                    may("a synchronize with nothing outstanding in the truth, beside an op's end", o,
                        s["start"], s["end"], kind=s["kind"])
            if s["kind"] in ("memcpy", "memset", "pageable_copy", "queue_full"):
                own_block[s["api_corr"]] = own_block.get(s["api_corr"], 0) + s["end"] - s["start"]
            if w and s["kind"] == "queue_full":
                waited[w] = waited.get(w, 0) + s["end"] - s["start"]
                qfull[w] = qfull.get(w, 0) + s["end"] - s["start"]
            elif w and w in last_of:
                split(s, last_of[w])
        # an implicit synchronization that did not wait (the device was idle
        # when simcuda looked, after CUPTI's time), yet an op ended inside the
        # call, as the report reads its end: only a host thread held off the
        # CPU between the call's entry and that look does this in the truth
        # (an op still running then would have been waited for), or an op
        # whose end the residual clock offset moves into the call. From the
        # call's timestamps it is a wait for that op, and the report may read
        # it so, up to the op's end (no profiler can tell)
        for a in apis.values():
            if a["name"] not in IMPLICIT_CALLS or a["corr"] in first_wait:
                continue
            w0 = a["start"] + cupti.get(a["corr"], 0)
            ended_in = [o for o in ops if w0 < o["end"] <= a["end"]]
            if ended_in:
                o = max(ended_in, key=lambda o: o["end"])
                may("an implicit sync that did not wait in the truth, an op ending inside it", o, w0, o["end"])
        # a blocking copy with nothing outstanding, but an op whose end as the
        # report reads it lies after the call's entry: the report may charge
        # that op a wait out of the copy's launch
        for a in apis.values():
            if a["name"] not in BLOCKING or a["corr"] in first_wait:
                continue
            w0 = a["start"] + cupti.get(a["corr"], 0)
            seen = max(a["start"], looked.get(a["corr"], 0))
            near = [o for o in ops if w0 < o["end"] and host_ends[o["corr"]] <= seen
                    and apis.get(o.get("api_corr"), {"end": 0})["end"] <= a["start"]]
            if near:
                o = max(near, key=lambda o: o["end"])
                may("a blocking copy with nothing outstanding in the truth, beside an op's end", o, w0, o["end"],
                    a["corr"])
        # with the calibration, a call whose CUPTI time ran past the estimate
        # (a spin preempted on a loaded host): an op that ended in between
        # was still running where the report starts the call, so the report
        # may see the call wait for it (a pageable copy, a synchronize), up to
        # that op's end
        if est:
            for c, d in actual.items():
                a = apis.get(c)
                if not a or d <= est.get(c, 0) or c in first_wait:
                    continue
                lo, hi = a["start"] + est.get(c, 0), a["start"] + d
                ended = [o for o in ops if lo < o["end"] and host_ends[o["corr"]] <= hi
                         and o.get("api_corr") != c]
                if ended:
                    o = max(ended, key=lambda o: o["end"])
                    may("a call whose CUPTI time ran past the calibration's estimate (truth's overhead lines), "
                        "an op ending in between", o, lo, o["end"], c)
        # without CUPTI's overhead records the report infers a full launch
        # queue's wait from the queue's level (metrics.md §3, "A full launch
        # queue"): a launch that began (after the estimate of CUPTI's time)
        # with its device's queue full and one of its ops ending inside the
        # call waited for the first of them to end. A launch the host held
        # off the CPU at such a moment has no wait in the truth (the slot
        # freed before simcuda looked), and the same timestamps: the report
        # may read a wait from the estimate to that op's end (no profiler
        # can tell them apart without CUPTI's COMMAND_BUFFER_FULL records).
        # Full, here, from the truth: as many ops pending at the call's
        # entry as at any launch's entry on that device (the queue's depth
        # as the truth shows it); a wait the report infers at a lower level
        # (a queue still growing) has no allowance
        if inferred_queue:
            dev_call = {}  # api corr -> its op's device
            enq = []  # (api end, GPU end, device, op index): the ops the queue holds
            for i, o in enumerate(ops):
                if o.get("type") in ("kernel", "memcpy", "memset") and o.get("api_corr") in apis:
                    d = dev_call[o["api_corr"]] = dev_of.get(o["stream"], 0)
                    enq.append((apis[o["api_corr"]]["end"], o["end"], d, i))
            enq.sort()
            calls = sorted((a["start"] + cupti.get(a["corr"], 0), a["corr"]) for a in apis.values()
                           if QUEUED_CALL.match(a["name"]) and a["corr"] in dev_call)
            pending, k, seen = {}, 0, []  # device -> heap of (GPU end, op index); per call its level
            for a0, c in calls:
                while k < len(enq) and enq[k][0] <= a0:
                    heapq.heappush(pending.setdefault(enq[k][2], []), (enq[k][1], enq[k][3]))
                    k += 1
                h = pending.setdefault(dev_call[c], [])
                while h and h[0][0] <= a0:
                    heapq.heappop(h)
                seen.append((a0, c, dev_call[c], len(h), h[0] if h else None))
            depth = {}
            for _, _, d, n, _ in seen:
                depth[d] = max(depth.get(d, 0), n)
            for a0, c, d, n, first in seen:
                if c not in first_wait and n >= 64 and n >= depth[d] and first and first[0] <= apis[c]["end"]:
                    o = ops[first[1]]
                    may("a launch held off the CPU while the launch queue was full (no wait in the truth), an "
                        "op of the queue ending inside it", o, a0, o["end"], c)
        # a cudaGraphLaunch's host time is the launch of the first op (by GPU
        # start) of that launch only: its other nodes have launch 0
        first_of = {}
        for o in ops:
            api = apis.get(o.get("api_corr"))
            if api and api["name"].startswith("cudaGraphLaunch"):
                f = first_of.get(api["corr"])
                if f is None or o["start"] < f["start"]:
                    first_of[api["corr"]] = o
        want = {}
        late_here = [0]
        for o in ops:
            name = names[o["name"]] if o["type"] == "kernel" else o["name"] if o["type"] == "hostfn" else (
                "memcpy " + o.get("kind", "") if o["type"] == "memcpy" else "memset")
            if by_stream:
                name = f"device {dev_of.get(o['stream'], 0)} stream {o['stream']}"
            g = want.setdefault(name, {"count": 0, "launch_ns": 0, "queue_ns": 0, "execute_ns": 0, "sync_ns": 0,
                                       "qfull_ns": 0, "maybe_sync": 0, "maybe_launch": 0})
            api = apis.get(o.get("api_corr"))
            ex = o["end"] - o["start"]
            g["count"] += 1
            g["execute_ns"] += ex
            if api:
                launch = api["end"] - api["start"] - cupti.get(api["corr"], 0)
                blocking = api["name"] in BLOCKING or (
                    o["type"] == "memcpy" and "Async" in api["name"] and api["end"] >= host_ends[o["corr"]])
                if blocking:
                    launch -= ex
                launch -= own_block.get(api["corr"], 0)
                if api["corr"] in first_of and first_of[api["corr"]] is not o:
                    launch = 0
                elif wins and not held(api):
                    # an optional call may have lost its API record: its op
                    # is then timed from its hook, which returns after
                    # CUPTI's last look for it (the truth's rec)
                    late_here[0] += api.get("rec", api["end"]) - api["end"]
                    launch += api.get("rec", api["end"]) - api["end"]
                g["launch_ns"] += max(0, launch)
                g["queue_ns"] += max(0, o["start"] - api["end"])
                g["maybe_launch"] += maybe_launch.get(api["corr"], 0)
            g["sync_ns"] += share.get(id(o), 0)
            if last_of.get(o["corr"]) is o:
                g["sync_ns"] += waited.get(o["corr"], 0)
                g["qfull_ns"] += qfull.get(o["corr"], 0)
            g["maybe_sync"] += maybe.get(o["corr"], 0)
        for reason, r in mine.items():
            if r[1] > why.get(reason, [0, 0, 0])[1]:
                why[reason] = r
        late[0] = max(late[0], late_here[0])
        return want, ops, unattributed

    early = []  # waits whose truth's waited op ended inside the calibration's estimate (derivations)
    want_lo, ops_lo, _ = expect(False)
    want, ops, unattributed = expect(True)
    for line in early:
        print("calibration: " + line)
    tracking = any(m[0] == "follow" for m in modes.values())
    # with the report following the offset, the same at the far end of its
    # residual: any value between the two is accepted
    (want_r, ops_r, _), (want_lo_r, ops_lo_r, _) = (expect(True, True), expect(False, True)) if tracking else \
        ((want, ops, 0), (want_lo, ops_lo, 0))
    # the program's own runs of its host functions (HOSTFN_RUNS), or none
    want_p, ops_p, _ = expect(True, False, True) if any("run" in t for t in host_fns) else (want, ops, 0)
    nopt = sum(1 for t in truth if t["type"] == "api" and wins and optional(t))
    if late[0]:
        allowances.append(("the optional calls' launch up to their truth rec, beyond their ends (timed from a "
                           "hook when CUPTI's record was lost)", late[0],
                           "the truth's rec: CUPTI's last look at its switches for each call"))
    for reason, (n, ns, most) in sorted(why.items()):
        allowances.append((f"sync the report may charge (and launch it may lose) for {n} calls, up to {most} ns "
                           f"a call, split over the ops ending in each wait as metrics.md §3 splits one", ns, reason))
    slack = [(t["end"] - t["start"]) - (t["run"][1] - t["run"][0]) for t in host_fns if "run" in t]
    if slack:
        allowances.append((f"host functions' runs as the program's own clock reads had them (an expectation "
                           f"beside the truth's: execute, and a wait ending with a run), {len(slack)} runs, up to "
                           f"{max(slack)} ns a run shorter: the profiler's trampoline around the function, a "
                           f"thread held off the CPU there", sum(slack),
                           "HOSTFN_RUNS: the program's clock reads in its functions"))
    for what, size, src in allowances:
        print(f"allowance: {what}: {size:.0f} ns in all (from {src})")

    keys = ("launch_ns",) if raw else ("launch_ns", "queue_ns", "execute_ns", "sync_ns")
    zero = {k: 0 for k in next(iter(want.values()), {"count": 0})}

    def base(wv):
        return max(REL * abs(wv), ABS_NS)

    widen = [0.0]  # the tamper controls' own control: intervals this many base tolerances wider

    def interval(ws, k):
        """The values the check accepts for sum k: from the least to the
        largest of the expectations ws (without and with the optional calls,
        at either end of the clock's residual), each with its tolerance and
        what the report may charge on top (maybe_sync) or move out
        (maybe_launch)."""
        lo = min(x[k] - (1 + widen[0]) * base(x[k]) - (x["maybe_launch"] if k == "launch_ns" else 0) for x in ws)
        hi = max(x[k] + (1 + widen[0]) * base(x[k]) + (x["maybe_sync"] if k == "sync_ns" else 0) for x in ws)
        return lo, hi

    def totals(ws):
        t = {k: sum(w[k] for w in ws.values()) for k in zero}
        return t

    tw_all = totals(want)
    # --filter and --top: the report lists only what they let through (its
    # JSON says which); the summary stays the whole run's
    flt = report.get("filter")
    top = report.get("top", 0)
    if flt:
        pat = re.compile(flt)
        print(f"filter {flt!r}: the truth's operators whose name it matches")
        want, want_lo, want_r, want_lo_r, want_p = ({n: w for n, w in v.items() if pat.search(n)}
                                                    for v in (want, want_lo, want_r, want_lo_r, want_p))
    variants = (want, want_lo, want_r, want_lo_r, want_p)

    def group(name):
        return [v.get(name, zero) for v in variants]
    tws = [totals(v) for v in variants]
    tw = tws[0]
    th = report.get("thresholds", {})
    th = {"sync": th.get("sync_pct", 30), "launch": th.get("launch_pct", 20), "execute": th.get("execute_pct", 80),
          "min": th.get("min_pct", 1)}
    run_total = tw_all["launch_ns"] + tw_all["execute_ns"] + tw_all["sync_ns"] + unattributed

    def verdicts(ws):
        """Every verdict the rule (metrics.md §5) gives on the truth's sums
        anywhere within the check's intervals (extremes and middle)."""
        w = ws[0]
        iv = {k: interval(ws, k) for k in ("launch_ns", "execute_ns", "sync_ns")}
        out = set()
        pts = lambda k: (iv[k][0], w[k], iv[k][1])
        for l in pts("launch_ns"):
            for e in pts("execute_ns"):
                for s in pts("sync_ns"):
                    l_, e_, s_ = max(0, l), max(0, e), max(0, s)
                    sq = max(0, s_ - w["qfull_ns"])
                    out.add(rule(sq, l_, e_, l_ + e_ + sq, run_total, th))
        return out

    def compare(rep, quiet=False):
        """The disagreements of report `rep` with the truth (one line each)."""
        got = {o["name"]: o for o in rep["operators"]}
        bad = []
        for name in sorted(set(want) | set(want_lo)):
            ws = group(name)
            w, wl = ws[0], ws[1]
            g = got.get(name)
            if not g:
                if wl["count"] and not (top and len(got) >= top):
                    bad.append(f"{name}: in the truth ({wl['count']} ops) but not in the report")
                continue
            if not wl["count"] <= g["count"] <= w["count"]:
                bad.append(f"{name}: count {g['count']} != truth {w['count']}" +
                           (f" (without the optional calls {wl['count']})"
                            if wl["count"] != w["count"] else ""))
            for k in keys:
                lo, hi = interval(ws, k)
                if not lo <= g[k] <= hi:
                    bad.append(f"{name}: {k} {g[k]} != truth {w[k]} (diff {g[k] - w[k]:+d} ns; accepted "
                               f"{lo:.0f}..{hi:.0f})" +
                               (f" (without the optional calls {wl[k]})" if wl[k] != w[k] else ""))
            if not raw and "verdict" in g and w["count"]:
                allowed = verdicts(ws)
                gv = g["verdict"]
                # a copy transfers (metrics.md §5): the rule's compute-bound
                # is transfer-bound for the copies' and sets' operators
                copy = name.startswith(("memcpy", "memset"))
                if copy and gv == "compute-bound":
                    bad.append(f"{name}: a copy called compute-bound")
                if copy and gv == "transfer-bound":
                    gv = "compute-bound"
                if gv not in allowed:
                    bad.append(f"{name}: verdict {g['verdict']}, expected {' or '.join(sorted(allowed))} by the "
                               f"truth's sums")
            if not quiet:
                print(f"{name}: count {g['count']}; " + ", ".join(f"{k} {g[k]} (truth {w[k]})" for k in keys) +
                      (f"; verdict {g.get('verdict')}" if "verdict" in g else ""))
        for name in got:
            if name not in want:
                bad.append(f"{name}: in the report but not in the truth")
        if top and not raw:
            # --top N lists the N largest by total (launch + execute + sync):
            # no operator left out may be certainly larger than one listed
            tk = ("launch_ns", "execute_ns", "sync_ns")

            def span(name):
                iv = [interval(group(name), k) for k in tk]
                return sum(a for a, _ in iv), sum(b for _, b in iv)
            listed = [n for n in got if n in want]
            if len(got) < min(top, len(want)):
                bad.append(f"--top {top}: {len(got)} operators listed of {len(want)}")
            for u in (n for n in want if n not in got):
                ulo = span(u)[0]
                for n in listed:
                    if span(n)[1] < ulo:
                        bad.append(f"--top {top}: {u} (truth total at least {ulo:.0f} ns) left out, {n} listed")
                        break
        tg = {k: sum(o[k] for o in rep["operators"]) for k in keys}
        for k in (keys if not top else ()):
            # each expectation's sums with its own allowances, as each
            # operator's interval takes them (an allowance found at one end
            # of the clock's residual only is that variant's)
            tots = [{"count": 0, k: t[k], "maybe_sync": sum(w["maybe_sync"] for w in v.values()),
                     "maybe_launch": sum(w["maybe_launch"] for w in v.values())} for t, v in zip(tws, variants)]
            lo, hi = interval(tots, k)
            if not lo <= tg[k] <= hi:
                bad.append(f"all operators: {k} {tg[k]} != truth {tw[k]} (accepted {lo:.0f}..{hi:.0f})")
        gb = rep["summary"]["gpu_busy_ns"]
        if not between(gb, min(busies), max(busies)):
            bad.append(f"gpu_busy_ns {gb} != truth union {busy}")
        if wins:
            wall = sum(b - a for a, b in wins)
            s = rep["summary"]
            if s["wall_ns"] != wall:
                bad.append(f"wall_ns {s['wall_ns']} != sum of the capture windows {wall}")
            if s["gpu_idle_ns"] > wall:
                bad.append(f"gpu_idle_ns {s['gpu_idle_ns']} > wall {wall}")
            empty = [i["iter"] for i in rep.get("iterations", {}).get("items", []) if not i.get("ops")]
            if empty:
                bad.append(f"iterations without ops listed in a windowed capture: {empty[:5]}")
            # every runtime record CUPTI wrote for a call it had to hold is in
            # the report: host_api_ns, their plain sum (metrics.md §6), is at
            # least the held calls' and at most that plus the optional calls'
            # (exact: the records carry the truth's own start and end)
            own_calls = {t["api_corr"] for t in truth if t["type"] == "kernel" and t["name"] == CALIB_KERNEL}
            rt = [t for t in truth if t["type"] == "api" and t.get("cupti_write_rt") and t["corr"] not in own_calls]
            if rt and "host_api_ns" in s:
                lo = sum(t["end"] - t["start"] for t in rt if held(t))
                hi = lo + sum(t["end"] - t["start"] for t in rt if optional(t))
                if not quiet:
                    print(f"host_api_ns {s['host_api_ns']} (truth: held calls' runtime records {lo}, with the "
                          f"optional {hi})")
                if not lo <= s["host_api_ns"] <= hi:
                    bad.append(f"host_api_ns {s['host_api_ns']} outside the runtime records of the held calls {lo}"
                               f"..{hi} (with the optional calls): " +
                               ("a held call's API record is missing" if s["host_api_ns"] < lo
                                else "records beyond them"))
        for spec in specs:
            if "@" in spec:
                name, nums = spec.split("@", 1)
                g = got.get(name)
                if not g:
                    bad.append(f"{name}: not in the report")
                    continue
                for k, us in zip(("launch_ns", "execute_ns", "sync_ns"), nums.split("/")):
                    mean = g[k] / g["count"]
                    if not quiet:
                        print(f"{name}: {k} per call {mean / 1e3:.1f} us (nominal {us} us)")
                    if abs(mean - float(us) * 1e3) > max(NOMINAL_REL * float(us) * 1e3, NOMINAL_ABS_NS):
                        bad.append(f"{name}: {k} per call {mean / 1e3:.1f} us != nominal {us} us")
                continue
            name, verdict = spec.split("=", 1)
            v = rep["summary"]["verdict"] if name == "*" else got.get(name, {}).get("verdict")
            if v != verdict:
                bad.append(f"{name}: verdict {v}, expected {verdict}")
        return bad

    def between(gv, x, y):
        """Anywhere from one expectation to another (optional calls, the
        clock's residual), with the tolerance."""
        lo, hi = min(x, y), max(x, y)
        return lo - base(lo) <= gv <= hi + base(hi)

    def union(ops):
        """GPU busy = union of the op intervals of each device, summed (a
        host function runs on the host: never GPU busy)."""
        ops = [o for o in ops if o["type"] != "hostfn"]
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

    busies = [union(x) for x in (ops, ops_lo, ops_r, ops_lo_r, ops_p)]
    busy = busies[0]
    nopt and print(f"{nopt} calls at the windows' edges may or may not be in the trace (optional)")
    bad = mode_bad + list(refusals) + bounds_bad + compare(report)
    print(f"gpu_busy_ns {report['summary']['gpu_busy_ns']} (truth union {busy}, plain sum "
          f"{sum(o['end'] - o['start'] for o in ops if o['type'] != 'hostfn')})")
    if wins:
        s = report["summary"]
        print(f"windows {len(wins)}: wall_ns {s['wall_ns']} (sum of windows {sum(b - a for a, b in wins)}), "
              f"idle {s['gpu_idle_ns']}")
    for b in bad:
        print("MISMATCH " + b)
    if bad or not tamper:
        return 1 if bad else 0
    return tamper_controls(report, want, group, keys, base, interval, verdicts, compare, widen)


def hooked_op(name):
    """A call the library's hooks make an op of (docs/metrics.md §1): a
    launch, copy, set or graph launch."""
    return ((name.startswith("cudaLaunch") or name.startswith("__cudaLaunch"))
            and not name.startswith("cudaLaunchHostFunc")) or name.startswith(("cudaGraphLaunch", "cudaMemcpy",
                                                                               "cudaMemset"))


EXPLICIT_SYNC_CALLS = ("cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize",
                       "cudaEventSynchronize")


def hook_only(truth, report, specs):
    """A hook-only capture (docs/metrics.md §1): one op per hooked launch,
    copy, set or graph-launch call, named by the API function, with launch =
    the hook's time around the call; explicit synchronizes are sync with
    nothing outstanding. The hook's time is the call as the program sees it:
    the truth's interval plus simcuda's own time in the call outside it (the
    truth's "outside" lines, per function). No queue, execute or sync."""
    outside = {t["name"]: t for t in truth if t["type"] == "outside"}  # cumulative: the last line counts
    calls = {}
    for t in truth:
        if t["type"] == "api":
            c = calls.setdefault(t["name"], [0, 0])
            c[0] += 1
            c[1] += t["end"] - t["start"]
    want = {n: {"count": c, "launch_ns": ns + outside.get(n, {}).get("ns", 0)} for n, (c, ns) in calls.items()
            if hooked_op(n)}
    sync = sum(calls.get(n, [0, 0])[1] + outside.get(n, {}).get("ns", 0)
               for n in calls if n.startswith(EXPLICIT_SYNC_CALLS))
    nsync = sum(calls[n][0] for n in calls if n.startswith(EXPLICIT_SYNC_CALLS))
    print(f"hook-only: each hooked call's launch is its truth interval plus simcuda's own time in it "
          f"(the truth's outside lines: {sum(o['ns'] for o in outside.values())} ns in "
          f"{sum(o['calls'] for o in outside.values())} calls)")
    # the hook's own time inside the interval it measures (its clock reads,
    # the call into the runtime and back, a first call's cold code before
    # simcuda's first clock read and after its last): at most what the
    # library measured a hook to cost (the report's self-overhead), a call,
    # one-sided
    so = next((a.get("host_conditions", {}).get("self_overhead") for a in report.get("analyses", [])
               if a.get("host_conditions", {}).get("self_overhead")), None)
    hook = so["hook_cost_ns"] if so else 0
    print(f"allowance: the hook's own time in each hooked call it times: up to {hook} ns a call (from the "
          f"report's self-overhead: hook_cost_ns, the library's measurement of its hooks)")

    def base(v):
        return max(REL * abs(v), ABS_NS)

    widen = [0.0]  # the tamper controls' own control

    def interval(w, k):
        b = (1 + widen[0]) * base(w[k])
        return w[k] - b, w[k] + b + (hook * w["count"] if k == "launch_ns" else 0)

    def compare(rep, quiet=False):
        bad = []
        got = {o["name"]: o for o in rep["operators"]}
        for name in sorted(set(want) | set(got)):
            w, g = want.get(name), got.get(name)
            if not g:
                bad.append(f"{name}: in the truth ({w['count']} calls) but not in the report")
                continue
            if not w:
                bad.append(f"{name}: in the report but not in the truth")
                continue
            if g["count"] != w["count"]:
                bad.append(f"{name}: count {g['count']} != truth {w['count']}")
            lo, hi = interval(w, "launch_ns")
            if not lo <= g["launch_ns"] <= hi:
                bad.append(f"{name}: launch_ns {g['launch_ns']} != truth {w['launch_ns']} "
                           f"(diff {g['launch_ns'] - w['launch_ns']:+d} ns)")
            for k in ("queue_ns", "execute_ns", "sync_ns"):
                if g[k]:
                    bad.append(f"{name}: {k} {g[k]} in a hook-only capture")
            if not quiet:
                print(f"{name}: count {g['count']} (truth {w['count']}); launch_ns {g['launch_ns']} "
                      f"(truth {w['launch_ns']})")
        s = rep["summary"]
        if not quiet:
            print(f"sync with nothing outstanding: {s['sync_unattributed_calls']} calls, "
                  f"{s['sync_unattributed_ns']} ns (truth: {nsync} explicit synchronizes, {sync} ns)")
        if s["sync_unattributed_calls"] != nsync or not (sync - base(sync) <= s["sync_unattributed_ns"] <=
                                                         sync + base(sync) + hook * nsync):
            bad.append(f"sync_unattributed: {s['sync_unattributed_calls']} calls {s['sync_unattributed_ns']} ns != "
                       f"truth {nsync} calls {sync} ns")
        for spec in specs:
            name, verdict = spec.split("=", 1)
            v = s["verdict"] if name == "*" else got.get(name, {}).get("verdict")
            if v != verdict:
                bad.append(f"{name}: verdict {v}, expected {verdict}")
        return bad

    bad = compare(report)
    for b in bad:
        print("MISMATCH " + b)
    if bad or "--no-tamper" in sys.argv:
        return 1 if bad else 0
    # tamper controls: launch raised past the tolerance, an op dropped, the
    # operator renamed, a wait left out
    ops = [o for o in report["operators"] if o["name"] in want]
    if not ops:
        print("tamper: no operator to alter")
        return 1
    dom = max(ops, key=lambda o: o["launch_ns"])
    tampers = []

    def alt(desc, fn):
        r = copy.deepcopy(report)
        fn(next(o for o in r["operators"] if o["name"] == dom["name"]), r)
        tampers.append((desc, r))
    w = want[dom["name"]]
    v = int(interval(w, "launch_ns")[1] + 0.5 * base(w["launch_ns"])) + 1
    alt(f"{dom['name']}: launch set half a base tolerance past what is accepted ({v - w['launch_ns']:+d} ns from "
        f"the truth's)", lambda o, r: o.__setitem__("launch_ns", v))
    alt(f"{dom['name']}: one op dropped", lambda o, r: o.__setitem__("count", o["count"] - 1))
    alt(f"{dom['name']}: renamed", lambda o, r: o.__setitem__("name", o["name"] + "_renamed"))
    alt("one synchronize left out", lambda o, r: r["summary"].__setitem__(
        "sync_unattributed_calls", r["summary"]["sync_unattributed_calls"] - 1))
    accepted = [desc for desc, r in tampers if not compare(r, quiet=True)]
    for desc, r in tampers:
        print(f"tamper: {desc}: {'ACCEPTED' if desc in accepted else 'refused'}")
    widen[0] = 1.0  # the launch tamper sits half a base tolerance past its edge: accepted one wider
    edge_ok = not compare(tampers[0][1], quiet=True)
    widen[0] = 0.0
    if not edge_ok:
        print(f"tamper: {tampers[0][0]}: refused even with the interval a base tolerance wider: not by its edge")
    print(f"tamper: {len(tampers) - len(accepted)} of {len(tampers)} refused; with the interval a base tolerance "
          f"wider, the launch tamper {'accepted' if edge_ok else 'still refused'}")
    return 1 if accepted or not edge_ok else 0


def tamper_controls(report, want, group, keys, base, interval, verdicts, compare, widen):
    """Feeds the check the honest report altered just beyond what it
    accepts: a value set half a base tolerance (max(REL, ABS_NS) of the
    truth's value, so 1.5 x that tolerance from the truth where no allowance
    applies) past the end of its accepted interval — the dominant
    operator's largest phase lowered into its smallest, and on the operator
    with the most of each: launch raised and lowered, queue raised, sync
    raised —, one op dropped, the dominant operator renamed, a verdict
    changed to one the truth's sums do not give. Every one must be refused.
    The control of the control: with every interval widened by one base
    tolerance (widen), each edge tamper must then be accepted, which shows
    that its refusal came from that interval's edge and nothing else; a
    tamper that cannot be placed (the edge below zero) is said."""
    ops = [o for o in report["operators"] if o["name"] in want and o["count"]]
    if not ops:
        print("tamper: no operator to alter")
        return 1
    dom = max(ops, key=lambda o: sum(o[k] for k in keys))
    tampers = []  # (desc, report, at an interval's edge)

    def op(r, name):
        return next(x for x in r["operators"] if x["name"] == name)

    def altered(desc, fn, edge=False):
        r = copy.deepcopy(report)
        fn(r)
        tampers.append((desc, r, edge))

    def wants(o):
        return group(o["name"])

    def past(o, k, up):
        """Half a base tolerance past the end of k's accepted interval."""
        ws = wants(o)
        w = ws[0]
        lo, hi = interval(ws, k)
        extra = 0.5 * base(w[k])
        return int(hi + extra) + 1 if up else int(lo - extra) - 1

    def shown(o, k, v):
        w = wants(o)[0][k]
        return f"{v - w:+d} ns from the truth's {w} ({100.0 * (v - w) / max(1, w):+.2f} %)"

    def set_to(name, k, v):
        def fn(r):
            op(r, name)[k] = v
        return fn

    if len(keys) > 1:
        # the dominant operator's largest phase lowered past its interval,
        # the difference moved to its smallest
        phases = ("launch_ns", "execute_ns", "sync_ns")
        src = max(phases, key=lambda k: dom[k])
        dst = min((k for k in phases if k != src), key=lambda k: dom[k])
        v = past(dom, src, False)
        if v >= 0:
            def move(r, src=src, dst=dst, v=v):
                o = op(r, dom["name"])
                o[dst] += o[src] - v
                o[src] = v
            # (both sides move: not an edge tamper of one interval)
            altered(f"{dom['name']}: {src} moved to {dst}: {shown(dom, src, v)}", move)
        else:
            print(f"tamper: {dom['name']}: {src} cannot be lowered past its interval (below zero)")
    # one op dropped from the operator with the most ops, with its mean phases
    many = max(ops, key=lambda o: o["count"])

    def drop(r):
        o = op(r, many["name"])
        for k in keys:
            o[k] -= o[k] // o["count"]
        o["count"] -= 1
    altered(f"{many['name']}: one of its {many['count']} ops dropped", drop)
    # each phase pushed past its interval on the operator with the most of it
    for k, up in (("launch_ns", True), ("launch_ns", False), ("queue_ns", True), ("sync_ns", True)):
        if k not in keys:
            continue
        o = max(ops, key=lambda x: x[k])
        v = past(o, k, up)
        if v < 0:
            print(f"tamper: {o['name']}: {k} cannot be lowered past its interval (below zero)")
            continue
        altered(f"{o['name']}: {k} {'raised' if up else 'lowered'}: {shown(o, k, v)}", set_to(o["name"], k, v), True)

    def rename(r):
        op(r, dom["name"])["name"] += "_renamed"
    altered(f"{dom['name']}: the dominant operator renamed", rename)
    if "verdict" in dom and len(keys) > 1:
        allowed = verdicts(wants(dom))
        other = next((v for v in ("compute-bound", "balanced", "sync-bound", "launch-bound", "minor")
                      if v not in allowed), None)
        if other:
            def verdict(r):
                op(r, dom["name"])["verdict"] = other
            altered(f"{dom['name']}: verdict {dom['verdict']} changed to {other} (the truth's sums give "
                    f"{' or '.join(sorted(allowed))})", verdict)

    accepted = [desc for desc, r, _ in tampers if not compare(r, quiet=True)]
    for desc, r, _ in tampers:
        print(f"tamper: {desc}: {'ACCEPTED' if desc in accepted else 'refused'}")
    # the control of the control: every interval one base tolerance wider
    widen[0] = 1.0
    try:
        still = [desc for desc, r, edge in tampers if edge and compare(r, quiet=True)]
    finally:
        widen[0] = 0.0
    nedge = sum(1 for t in tampers if t[2])
    for desc in still:
        print(f"tamper: {desc}: refused even with the intervals a base tolerance wider: not by its edge")
    print(f"tamper: {len(tampers) - len(accepted)} of {len(tampers)} refused; with the intervals a base tolerance "
          f"wider, {nedge - len(still)} of the {nedge} at an edge accepted")
    return 1 if accepted or still else 0


if __name__ == "__main__":
    sys.exit(main())
