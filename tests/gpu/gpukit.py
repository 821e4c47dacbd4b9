#!/usr/bin/env python3
"""gpukit.py — the checks of the real-GPU validation kit (tests/gpu/run.sh).

run.sh runs the programs and leaves one folder per run (stdout, stderr, rc,
wall_ns, report.json from `gpuphase-report --format json`, dumpstats.json
from `gpuphase-dump | gpukit.py dumpstats`); this script compares them and
appends one row per check to the summary file (TSV: check, status, number,
detail), printing the same row. `table` prints the summary and exits 1 if any
check FAILed. `selftest` shows on synthetic inputs that each check can fail.

Python 3 standard library only. Called by run.sh, one process per check,
single-threaded. A missing or malformed input is a FAIL of that check naming
the file, never a traceback.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

# ---------------------------------------------------------------- inputs


class KitError(Exception):
    """An input a check needs is missing or malformed: the check FAILs."""


def read_text(path):
    try:
        with open(path, "r", errors="replace") as f:
            return f.read()
    except OSError as e:
        raise KitError("%s: %s" % (path, e.strerror))


class Run:
    """One program run left by run.sh's run_prog (and report_of)."""

    def __init__(self, d):
        self.dir = d
        self.name = os.path.basename(d.rstrip("/"))
        if not os.path.isdir(d):
            raise KitError("%s: run folder missing (the step did not run)" % d)
        self.stdout = read_text(os.path.join(d, "stdout"))
        self.stderr = read_text(os.path.join(d, "stderr"))
        try:
            self.rc = int(read_text(os.path.join(d, "rc")).strip())
            self.wall_ns = int(read_text(os.path.join(d, "wall_ns")).strip())
        except ValueError:
            raise KitError("%s: malformed rc or wall_ns" % d)
        self._report = None
        self._dump = None

    def tail(self, n=3):
        lines = [l for l in self.stderr.splitlines() if l.strip()]
        return " | ".join(lines[-n:])[:300]

    def report(self):
        """The parsed report.json (KitError naming the reason if absent)."""
        if self._report is None:
            p = os.path.join(self.dir, "report.json")
            if not os.path.exists(p) or os.path.getsize(p) == 0:
                why = ""
                ep = os.path.join(self.dir, "report.err")
                if os.path.exists(ep):
                    why = read_text(ep).strip().splitlines()
                    why = why[-1] if why else ""
                raise KitError("%s: no JSON report%s" % (self.name, (": " + why) if why else ""))
            try:
                self._report = json.loads(read_text(p))
            except ValueError as e:
                raise KitError("%s: report.json is not JSON (%s)" % (self.name, e))
            if not isinstance(self._report, dict):
                raise KitError("%s: report.json is not an object" % self.name)
        return self._report

    def dump(self):
        """dumpstats.json (see dumpstats()); {} if the dump was not made."""
        if self._dump is None:
            p = os.path.join(self.dir, "dumpstats.json")
            try:
                self._dump = json.loads(read_text(p)) if os.path.exists(p) else {}
            except ValueError:
                self._dump = {}
        return self._dump

    def timings(self):
        """The program's own CUDA-event timings: stderr lines 'timing: <what> <ms>'."""
        out = []
        for line in self.stderr.splitlines():
            m = re.match(r"^timing:\s+(.+?)\s+([0-9.eE+-]+)\s*$", line)
            if m:
                try:
                    out.append((m.group(1), float(m.group(2))))
                except ValueError:
                    pass
        return out


def summary_of(rep):
    s = rep.get("summary")
    if not isinstance(s, dict):
        raise KitError("report has no 'summary' object")
    return s


def operators(rep):
    ops = rep.get("operators")
    if not isinstance(ops, list):
        raise KitError("report has no 'operators' array")
    return [o for o in ops if isinstance(o, dict)]


def num(o, key, default=None):
    v = o.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        if default is not None:
            return default
        raise KitError("report field '%s' missing or not a number (%r)" % (key, v))
    return v


def coverage(rep):
    """join_coverage as a fraction (the report may give 0..1 or a percentage)."""
    v = num(summary_of(rep), "join_coverage")
    return v / 100.0 if v > 1.0 + 1e-9 else v


def drops(rep):
    return int(num(summary_of(rep), "dropped_records"))


COPY_RE = re.compile(r"(^\[)|memcpy|memset|^copy|^set\b", re.I)


def is_kernel(op):
    """Kernel operators (not copies/sets): the report's 'kind' when it has one."""
    k = op.get("kind") or op.get("type")
    if isinstance(k, str):
        return k.lower() == "kernel"
    return not COPY_RE.search(str(op.get("name", "")))


def short_name(name):
    """'void ns::foo<int>(float*, int)' -> 'foo'; '_Z3fooPf' -> 'foo'."""
    m = re.match(r"^_Z(\d+)(\w+)", name)
    if m:
        n = int(m.group(1))
        return m.group(2)[:n]
    s = name.split("(")[0].strip()
    s = re.sub(r"<.*>$", "", s)
    s = s.split(" ")[-1]
    return s.split("::")[-1]


def matching(ops, kernel):
    """Operators whose name is or contains the kernel name `kernel`."""
    return [o for o in ops if kernel == short_name(str(o.get("name", "")))
            or kernel in str(o.get("name", ""))]


# ---------------------------------------------------------------- results


class Result:
    """Collects sub-check failures of one summary row."""

    def __init__(self, check):
        self.check = check
        self.fails = []
        self.notes = []
        self.number = "-"

    def need(self, ok, why):
        if not ok:
            self.fails.append(why)
        return ok

    def emit(self, summary, status=None):
        if status is None:
            status = "FAIL" if self.fails else "PASS"
        detail = "; ".join(self.fails + self.notes)
        row = "\t".join(x.replace("\t", " ").replace("\n", " ")
                        for x in (self.check, status, self.number, detail))
        if summary:
            with open(summary, "a") as f:
                f.write(row + "\n")
        print("gpu-kit: %s  %s  %s%s" % (status, self.check, self.number,
                                           ("  (" + detail + ")") if detail else ""))
        return status


def same_as_bare(res, bare, run):
    """Exit status and stdout of a profiled run equal the bare run's."""
    if not res.need(bare.rc == 0, "bare run failed: rc=%d: %s" % (bare.rc, bare.tail())):
        return False
    ok = res.need(run.rc == bare.rc, "exit status %d under gpuphase, %d bare: %s"
                  % (run.rc, bare.rc, run.tail()))
    ok = res.need(run.stdout == bare.stdout, "stdout differs from the bare run (%d vs %d bytes)"
                  % (len(run.stdout), len(bare.stdout))) and ok
    return ok


# ---------------------------------------------------------------- checks


# What each example's "timing: <what> <ms>" line brackets with its CUDA events
# (read from examples/*.cu): ("events", I, J, K) = from the program's I-th to
# its J-th cudaEventRecord call (0-based); ("pairs", [(I, J), ...], K) = the
# sum of several such brackets (one event pair around each kernel launch).
# K, if set, names the kernel that alone fills the bracket(s), so that on a
# GPU the report's execute_ns summed over K must equal the events as well.
# A program not listed is compared as ("exec", what): its timing line names a
# kernel and brackets only that kernel's launches.
CB_KERNELS = 5  # examples/compute_bound.cu KERNELS: start k = record 2k, stop k = 2k+1, end = 10
TIMING_SPECS = {
    "compute_bound": {"kernels": ("pairs", [(2 * k, 2 * k + 1) for k in range(CB_KERNELS)], "heavy_lcg"),
                      "bracket": ("events", 0, 2 * CB_KERNELS - 1, None),
                      "total": ("events", 0, 2 * CB_KERNELS, None)},
    "launch_bound": {"launch_loop": ("events", 0, 1, None)},
    "sync_bound": {"steps": ("events", 0, 1, None)},
    "graph_replay": {"replays": ("events", 0, 1, None)},
}
EVENT_RECORD_RE = re.compile(r"^cudaEventRecord(_ptsz)?(_v\d+)?$")


def event_times(dump):
    """GPU time of each cudaEventRecord call, from the trace alone: an event
    completes when the call has returned and all work enqueued on the stream
    before the call has finished (the examples use one stream), so
    t = max(call end, end of every op whose launching API call started
    before it). Returns the list in call order, or None without the detail."""
    rt, ops, names = dump.get("rt"), dump.get("ops"), dump.get("rt_names")
    if rt is None or ops is None or names is None:
        return None
    launch_start = {corr: start for _api, start, _dur, corr in rt}
    recs = sorted((start, start + dur) for api, start, dur, _c in rt
                  if EVENT_RECORD_RE.match(names.get(str(api), "")))
    # ops by launch time; an op without its API record counts from its GPU start
    lops = sorted((launch_start.get(corr, a), b) for corr, a, b in ops)
    out, i, done = [], 0, 0
    for start, end in recs:
        while i < len(lops) and lops[i][0] < start:
            done = max(done, lops[i][1])
            i += 1
        out.append(max(end, done))
    return out


def events_vs_trace(program, ops, dump, timings, sim):
    """Compare each event timing with the same bracket measured in the trace
    (TIMING_SPECS). Returns (worst relative deviation or None,
    [(what, event ms, trace ms, how)], [what could not be compared])."""
    kops = [o for o in ops if is_kernel(o)]
    spec = TIMING_SPECS.get(program, {})
    evt = event_times(dump)
    pairs, unmatched = [], []
    for what, ms in timings:
        how = spec.get(what) or ("exec", what)
        if how[0] in ("events", "pairs"):
            if how[0] == "events":
                _, i, j, k = how
                brackets = [(i, j)]
                label = "events %d..%d" % (i, j)
            else:
                _, brackets, k = how
                label = "%d event pairs" % len(brackets)
            need = max(max(i, j) for i, j in brackets) + 1
            if evt is None or len(evt) < need:
                unmatched.append("%s (%s cudaEventRecord calls in the trace, need %d)"
                                 % (what, "no" if evt is None else len(evt), need))
                continue
            pairs.append((what, ms, sum(evt[j] - evt[i] for i, j in brackets) / 1e6, label))
            if not k:
                continue
            if sim:
                # simcuda's GPU waits for a descheduled host, so back-to-back
                # launches need not stay back to back on a loaded CI box.
                continue
            how = ("exec", k)
        m = matching(kops, how[1])
        if not m:
            unmatched.append(what)
            continue
        pairs.append((what, ms, sum(num(o, "execute_ns") for o in m) / 1e6, "execute " + how[1]))
    worst = max((abs(tr - ms) / ms if ms > 0 else (0.0 if tr == 0 else float("inf"))
                 for _, ms, tr, _ in pairs), default=None)
    return worst, pairs, unmatched


def agree(ms, tr, tol, abs_ms):
    """Event time ms and trace time tr agree: within tol relative, plus abs_ms
    for what an event bracket holds that no record does (the GPU processing
    the event itself, ~us)."""
    return abs(tr - ms) <= tol * ms + abs_ms


def check_example(a):
    res = Result(a.check)
    try:
        bare, run = Run(a.bare), Run(a.run)
        same_as_bare(res, bare, run)
        rep = run.report()
        ops = operators(rep)
        cov, dr = coverage(rep), drops(rep)
        res.need(abs(cov - 1.0) < 1e-9, "join coverage %.4f%%, expected 100%%" % (cov * 100))
        res.need(dr == 0, "%d dropped records" % dr)
        timings = run.timings()
        program = getattr(a, "program", None) or os.path.basename(a.run).split(".")[0]
        sim = getattr(a, "sim", False)
        abs_ms = getattr(a, "abs_us", 20.0) / 1e3
        worst, pairs, unmatched = events_vs_trace(program, ops, run.dump(), timings, sim)
        if res.need(timings, "the program printed no 'timing: <what> <ms>' line"):
            res.need(not unmatched, "timing lines not comparable with the trace: " + ", ".join(unmatched))
        off = [w for w, ms, tr, _ in pairs if not agree(ms, tr, a.tol, abs_ms)]
        res.need(not off, "events vs trace off by more than %.3g%% + %.0f us: %s"
                 % (a.tol * 100, abs_ms * 1e3, ", ".join(off)))
        if pairs:
            res.notes.append("; ".join("%s: events %.3f ms, trace %.3f ms (%s)" % (w, ms, tr, how)
                                       for w, ms, tr, how in pairs))
        res.number = "events-vs-trace %s, join %.2f%%, drops %d" % (
            ("%.3f%%" % (worst * 100)) if worst is not None else "n/a", cov * 100, dr)
    except KitError as e:
        res.fails.append(str(e))
    return res.emit(a.summary)


def records_per_s(run):
    """(records in the trace, records per second): over the program's own
    host-timed loop ('timing: storm_host_loop <ms>') when it prints one, where
    nearly every record is produced, else over the whole process."""
    recs = run.dump().get("records")
    loop = [ms for what, ms in run.timings() if what.endswith("host_loop")]
    secs = loop[0] / 1e3 if loop and loop[0] > 0 else run.wall_ns / 1e9
    if isinstance(recs, int) and secs > 0:
        return recs, recs / secs
    return None, None


def check_kernels(a):
    """Every launch of --kernel seen: count == --expect (or, with
    --allow-reported-drops, the shortfall is covered by reported drops)."""
    res = Result(a.check)
    try:
        bare, run = Run(a.bare), Run(a.run)
        same_as_bare(res, bare, run)
        rep = run.report()
        ops = [o for o in operators(rep) if is_kernel(o)]
        m = matching(ops, a.kernel)
        count = int(sum(num(o, "count") for o in m))
        dr = drops(rep)
        cov = coverage(rep)
        if dr == 0 or not a.allow_reported_drops:
            res.need(count == a.expect, "%d %s kernels in the report, %d launched%s" % (
                count, a.kernel, a.expect, (", %d records dropped" % dr) if dr else ""))
            if not a.allow_reported_drops:
                res.need(dr == 0, "%d dropped records" % dr)
        else:
            res.need(count <= a.expect <= count + dr,
                     "%d %s kernels + %d reported drops do not account for %d launches"
                     % (count, a.kernel, dr, a.expect))
            res.notes.append("%d records dropped at default settings (reported)" % dr)
        recs, rps = records_per_s(run)
        res.number = "%d/%d kernels, %d dropped, join %.2f%%" % (count, a.expect, dr, cov * 100)
        if rps:
            res.number += ", %.2fM rec/s" % (rps / 1e6)
            loops = ["%s %.1f ms" % (r.name, ms) for r in (bare, run) for what, ms in r.timings()
                     if what.endswith("host_loop")]
            res.notes.append("%d records; launch loop %s" % (recs, ", ".join(loops) or "?"))
    except KitError as e:
        res.fails.append(str(e))
    return res.emit(a.summary)


def check_hidden(a):
    """Launches no preload hook sees (cuBLAS, Triton): in the report, each op
    with a launch time from a CUPTI API record (100 % join, launch_ns > 0)."""
    res = Result(a.check)
    try:
        bare, run = Run(a.bare), Run(a.run)
        same_as_bare(res, bare, run)
        rep = run.report()
        kops = [o for o in operators(rep) if is_kernel(o)]
        m = matching(kops, a.kernel) if a.kernel else kops
        count = int(sum(num(o, "count") for o in m))
        if a.expect is not None:
            res.need(count == a.expect, "%d %s launches in the report, expected %d" % (
                count, a.kernel or "kernel", a.expect))
        if a.min_kernels is not None:
            res.need(count >= a.min_kernels, "%d kernels in the report, expected >= %d" % (
                count, a.min_kernels))
        no_launch = [str(o.get("name"))[:60] for o in m if num(o, "launch_ns") <= 0]
        res.need(not no_launch, "no launch time for: " + ", ".join(no_launch[:3]))
        cov, dr = coverage(rep), drops(rep)
        res.need(abs(cov - 1.0) < 1e-9, "join coverage %.4f%%, expected 100%%" % (cov * 100))
        res.need(dr == 0, "%d dropped records" % dr)
        hooked = run.dump().get("hook_launches")
        if a.expect_hooked is not None:
            if res.need(isinstance(hooked, int), "no hook-launch count from gpuphase-dump"):
                res.need(hooked == a.expect_hooked, "%d launches seen by preload hooks, expected %d"
                         % (hooked, a.expect_hooked))
        launch_us = sum(num(o, "launch_ns") for o in m) / max(count, 1) / 1e3
        res.number = "%d kernels, %d/%d ops with CUPTI launch (mean %.1f us), hooked %s" % (
            count, len(m) - len(no_launch), len(m), launch_us,
            hooked if isinstance(hooked, int) else "?")
    except KitError as e:
        res.fails.append(str(e))
    return res.emit(a.summary)


def check_nvtx(a):
    """Operators grouped by innermost NVTX range: exactly the expected
    range names with the expected kernel counts (--expect NAME=COUNT,...)."""
    res = Result(a.check)
    try:
        bare, run = Run(a.bare), Run(a.run)
        same_as_bare(res, bare, run)
        rep = run.report()
        ops = operators(rep)
        want = {}
        for item in a.expect.split(","):
            name, _, cnt = item.rpartition("=")
            want[name] = int(cnt)
        got = {}
        for o in ops:
            if is_kernel(o) and str(o.get("name")) in want:
                got[o["name"]] = got.get(o["name"], 0) + int(num(o, "count"))
        for name, cnt in sorted(want.items()):
            res.need(got.get(name) == cnt, "operator %s: %s kernels, expected %d"
                     % (name, got.get(name, "no"), cnt))
        cov, dr = coverage(rep), drops(rep)
        res.need(abs(cov - 1.0) < 1e-9, "join coverage %.4f%%, expected 100%%" % (cov * 100))
        res.need(dr == 0, "%d dropped records" % dr)
        res.number = ", ".join("%s %s" % (n, got.get(n, 0)) for n in sorted(want)) + \
            ", join %.2f%%" % (cov * 100)
    except (KitError, ValueError) as e:
        res.fails.append(str(e))
    return res.emit(a.summary)


GRAPH_LAUNCH_RE = re.compile(r"^cudaGraphLaunch(_ptsz)?(_v\d+)?$")


def check_graph(a):
    """examples/graph_replay: the program's stdout says how many replays of a
    graph of how many nodes it ran ("replays=R nodes=N"). The report must hold
    one captured graph with R launches, N nodes, R x N kernels, every node's
    kernel (--kernels) present R times and attributed to its capture-time
    node; join coverage 100 %, 0 drops; and the cudaGraphLaunch host cost
    charged once per launch: the graph's launch_host_ns and the launch time
    summed over its kernels' operators both equal the summed durations of
    the R cudaGraphLaunch calls in the trace (gpuphase-dump), not N times it."""
    res = Result(a.check)
    try:
        bare, run = Run(a.bare), Run(a.run)
        same_as_bare(res, bare, run)
        m = re.search(r"replays=(\d+) nodes=(\d+)", run.stdout)
        if not res.need(m, "the program's stdout has no 'replays=R nodes=N'"):
            raise KitError("cannot judge without the program's counts")
        replays, nnodes = int(m.group(1)), int(m.group(2))
        kernels = [k for k in a.kernels.split(",") if k]
        rep = run.report()
        cov, dr = coverage(rep), drops(rep)
        res.need(abs(cov - 1.0) < 1e-9, "join coverage %.4f%%, expected 100%%" % (cov * 100))
        res.need(dr == 0, "%d dropped records" % dr)
        an = rep.get("analyses")
        graphs = an[0].get("cuda_graphs") if isinstance(an, list) and an and isinstance(an[0], dict) else None
        if not res.need(isinstance(graphs, list) and len(graphs) == 1,
                        "expected one captured graph in analyses[0].cuda_graphs, got %r" % (
                            len(graphs) if isinstance(graphs, list) else graphs)):
            raise KitError("no graph to judge")
        g = graphs[0]
        res.need(num(g, "launches") == replays, "%s graph launches, the program made %d" % (g.get("launches"), replays))
        res.need(num(g, "nodes") == nnodes, "%s nodes, the program captured %d" % (g.get("nodes"), nnodes))
        res.need(num(g, "kernels") == replays * nnodes, "%s graph kernels, expected %d x %d" % (
            g.get("kernels"), replays, nnodes))
        items = [i for i in (g.get("node_items") or []) if isinstance(i, dict)]
        got = {}
        for i in items:
            k = short_name(str(i.get("kernel", "")))
            got[k] = got.get(k, 0) + 1
            res.need(i.get("captured") is True, "node %s (%s) not attributed to a capture-time node" % (
                i.get("node"), k))
            res.need(i.get("count") == replays, "node %s (%s) ran %s times, expected %d" % (
                i.get("node"), k, i.get("count"), replays))
        res.need(sorted(got) == sorted(kernels) and all(v == 1 for v in got.values()),
                 "node kernels %s, expected one node each of %s" % (got, ",".join(kernels)))
        dump = run.dump()
        rt, names = dump.get("rt"), dump.get("rt_names")
        if res.need(rt is not None and names is not None, "no per-record dump detail (dumpstats --ops)"):
            gl = [dur for api, _s, dur, _c in rt if GRAPH_LAUNCH_RE.match(names.get(str(api), ""))]
            res.need(len(gl) == replays, "%d cudaGraphLaunch calls in the trace, the program made %d" % (
                len(gl), replays))
            host = sum(gl)
            res.need(abs(num(g, "launch_host_ns") - host) <= len(gl),
                     "graph launch_host_ns %s, the cudaGraphLaunch calls took %d ns" % (g.get("launch_host_ns"), host))
            kops = [o for o in operators(rep) if is_kernel(o) and short_name(str(o.get("name", ""))) in kernels]
            # the calls' time holds CUPTI's own cost: compare launch with it
            # (launch_raw_ns where the report took that cost out of launch)
            charged = sum(num(o, "launch_raw_ns") if "launch_raw_ns" in o else num(o, "launch_ns") for o in kops)
            res.need(abs(charged - host) <= len(gl),
                     "launch time over the graph's kernels %d ns, cudaGraphLaunch calls %d ns (once per launch)"
                     % (charged, host))
            res.number = "%d launches x %d nodes, %d kernels, launch %.1f us per launch, join %.2f%%" % (
                num(g, "launches"), num(g, "nodes"), num(g, "kernels"), host / max(len(gl), 1) / 1e3, cov * 100)
    except KitError as e:
        res.fails.append(str(e))
    return res.emit(a.summary)


WRAPPER_FAILED = 3  # train_wrap.py's exit status when it cannot hook optimizer steps


def wrapper_failure(run):
    """The reason train_wrap.py itself failed in this run (it exits
    WRAPPER_FAILED with a 'train_wrap.py: ...' line), or None when the wrapper
    did its part and any failure is the training script's."""
    lines = [l for l in run.stderr.splitlines() if l.startswith("train_wrap.py:")]
    if run.rc == WRAPPER_FAILED and lines:
        return "%s: the kit's wrapper tests/gpu/train_wrap.py failed (exit %d), the training script did not run: %s" % (
            run.name, run.rc, lines[-1][:240])
    return None


def train_rc(res, run, what):
    """Require exit status 0 of a train.* run, naming a wrapper failure as such."""
    why = wrapper_failure(run)
    if why:
        return res.need(False, why)
    return res.need(run.rc == 0, "%s: exit status %d: %s" % (what, run.rc, run.tail()))


def load_steps(run):
    """The wrapper's steps.json: optimizer-step end times (CLOCK_MONOTONIC_RAW ns)."""
    p = os.path.join(run.dir, "steps.json")
    if not os.path.exists(p):
        why = wrapper_failure(run)
        raise KitError(why or "%s: train_wrap.py wrote no steps.json (exit %d: %s)" % (run.name, run.rc, run.tail()))
    try:
        st = json.loads(read_text(p))
    except ValueError:
        raise KitError("%s: malformed" % p)
    if not isinstance(st.get("step_end_ns"), list):
        raise KitError("%s: no step_end_ns list" % p)
    if not st["step_end_ns"] and st.get("exit") == 0:
        raise KitError("%s: train_wrap.py recorded no optimizer step (hook '%s' never ran)"
                       % (run.name, st.get("hook", "?")))
    return st


def mean_step_ms(st, idx):
    """Mean duration (ms) of the optimizer steps with 0-based indices idx
    (consecutive): from the end of step idx[0]-1 to the end of idx[-1]."""
    t = st["step_end_ns"]
    if not idx or idx[0] < 1 or idx[-1] >= len(t):
        raise KitError("only %d optimizer steps recorded, need steps %s..%s"
                       % (len(t), idx[0] if idx else "?", idx[-1] if idx else "?"))
    return (t[idx[-1]] - t[idx[0] - 1]) / len(idx) / 1e6


def captured_steps(run, st):
    """0-based indices of the optimizer steps that ended inside the run's
    capture window ([] if the trace has no single closed window)."""
    w = run.dump().get("windows") or []
    if len(w) != 1 or w[0].get("start") is None or w[0].get("stop") is None:
        return []
    return [i for i, x in enumerate(st["step_end_ns"]) if w[0]["start"] <= x <= w[0]["stop"]]


def window_exact(res, run, st, skip, iters):
    """The capture window holds exactly `iters` iterations: `iters` ITER marks
    and `iters` optimizer-step ends between its WINDOW start and stop, and no
    GPU op outside it."""
    d = run.dump()
    w = d.get("windows") or []
    if not res.need(d, "no statistics from gpuphase-dump"):
        return
    if not res.need(len(w) == 1 and w[0].get("start") is not None and w[0].get("stop") is not None,
                    "expected one closed capture window, trace has %s" % json.dumps(w)[:200]):
        return
    w0, w1 = w[0]["start"], w[0]["stop"]
    iters_in = sum(1 for x in d.get("iter_ts", []) if w0 <= x <= w1)
    steps_in = sum(1 for x in st["step_end_ns"] if w0 <= x <= w1)
    res.need(iters_in in (iters, iters + 1),
             "%d iteration marks inside the window, expected %d" % (iters_in, iters))
    res.need(steps_in == iters, "%d optimizer steps ended inside the window, expected %d"
             % (steps_in, iters))
    k0, k1 = d.get("op_first_start"), d.get("op_last_end")
    if isinstance(k0, int) and isinstance(k1, int):
        res.need(k0 >= w0, "a GPU op starts %.3f ms before the window" % ((w0 - k0) / 1e6))
    return steps_in


def check_train(a):
    runs = a.runs
    statuses = []
    bare = tp = None
    # train/window — preload, no NVTX
    res = Result("train/window")
    try:
        bare = Run(os.path.join(runs, "train.bare"))
        run = Run(os.path.join(runs, "train.preload"))
        # train.py prints its own timings on stdout: only the exit status is
        # compared strictly; the loss lines are compared as a note.
        train_rc(res, bare, "bare run failed")
        if wrapper_failure(run):
            train_rc(res, run, run.name)
        else:
            res.need(run.rc == bare.rc, "exit status %d under gpuphase, %d bare: %s"
                     % (run.rc, bare.rc, run.tail()))
        losses = [[l for l in r.stdout.splitlines() if l.startswith("step ")] for r in (bare, run)]
        res.notes.append("loss lines %s the bare run's" % ("equal" if losses[0] == losses[1] else "DIFFER from"))
        st = load_steps(run)
        rep = run.report()
        dr = drops(rep)
        res.need(dr == 0, "%d dropped records" % dr)
        window_exact(res, run, st, a.skip, a.iters)
        res.number = "%d ops, %d kernels in window, drops %d" % (
            len(operators(rep)), int(sum(num(o, "count") for o in operators(rep) if is_kernel(o))), dr)
    except KitError as e:
        res.fails.append(str(e))
    statuses.append(res.emit(a.summary))
    # train/nvtx — preload + NVTX injection, grouped by NVTX range
    res = Result("train/nvtx")
    try:
        run = Run(os.path.join(runs, "train.nvtx"))
        if bare is None:
            bare = Run(os.path.join(runs, "train.bare"))
        train_rc(res, run, "train.nvtx")
        rep = run.report()
        ops = operators(rep)
        aten = [o for o in ops if str(o.get("name", "")).startswith("aten::")]
        tot = sum(num(o, "total_ns") for o in ops) or 1
        share = sum(num(o, "total_ns") for o in aten) / tot
        res.need(aten, "no operator named aten::* (names: %s)" % ", ".join(
            str(o.get("name"))[:40] for o in ops[:5]))
        window_exact(res, run, load_steps(run), a.skip, a.iters)
        res.number = "%d aten:: operators, %.1f%% of total time" % (len(aten), share * 100)
    except KitError as e:
        res.fails.append(str(e))
    statuses.append(res.emit(a.summary))
    # overhead/train — step time in the window: bare, gpuphase, torch.profiler
    res = Result("overhead/train")
    try:
        bare = Run(os.path.join(runs, "train.bare"))
        gp = Run(os.path.join(runs, "train.preload"))
        tp = Run(os.path.join(runs, "train.torchprof"))
        for r in (bare, gp, tp):
            train_rc(res, r, r.name)
        sb, sg, stp = load_steps(bare), load_steps(gp), load_steps(tp)
        # gpuphase's window is counted in its iteration marks (syncs), which
        # may start before the loop; torch.profiler's in optimizer steps.
        # Each is compared with the same steps of the bare run.
        gi = captured_steps(gp, sg) or list(range(a.skip, a.skip + a.iters))
        ti = list(range(a.skip, a.skip + a.iters))
        mb = mean_step_ms(sb, ti)
        rg = mean_step_ms(sg, gi) / mean_step_ms(sb, gi)
        rt = mean_step_ms(stp, ti) / mb
        res.notes.append("gpuphase window = steps %d..%d, torch.profiler = steps %d..%d (0-based)"
                         % (gi[0], gi[-1], ti[0], ti[-1]))
        limit = getattr(a, "max", None) or TRAIN_OVERHEAD_MAX
        res.need(rg <= limit, "gpuphase step time x%.3f of bare, limit x%.3f (torch.profiler x%.3f)"
                 % (rg, limit, rt))
        res.number = "%.3f" % rg
        res.notes.append("step %.3f ms bare, x%.3f gpuphase (default CUPTI mode), x%.3f torch.profiler"
                         % (mb, rg, rt))
        full_dir = os.path.join(runs, "train.full")
        if os.path.isdir(full_dir):
            # the same window under GPUPHASE_CUPTI=full: what the mode saves
            try:
                fr = Run(full_dir)
                sf = load_steps(fr)
                fi = captured_steps(fr, sf) or gi
                res.notes.append("GPUPHASE_CUPTI=full x%.3f" % (mean_step_ms(sf, fi) / mean_step_ms(sb, fi)))
            except KitError as e:
                res.notes.append("GPUPHASE_CUPTI=full run not judged: %s" % e)
        res.notes.append("process wall: bare %.1f s, gpuphase %.1f s, torch.profiler %.1f s" % (
            bare.wall_ns / 1e9, gp.wall_ns / 1e9, tp.wall_ns / 1e9))
    except KitError as e:
        res.fails.append(str(e))
    statuses.append(res.emit(a.summary))
    return "FAIL" if "FAIL" in statuses else "PASS"


# Targets (docs/gpu-validation.md "Overhead"): the event-timed launch loop of
# launch_bound and train.py's step under the default CUPTI mode, against bare.
LAUNCH_OVERHEAD_MAX = 1.10
TRAIN_OVERHEAD_MAX = 1.05
ESTIMATE_BAND = (0.75, 1.25)  # the report's self-overhead estimate / measured added time

# The overhead matrix: each configuration of the capture, timed on
# launch_bound against bare in the same kit run (run.sh runs them in this
# order, rotated each repetition). name -> environment (NAME=value ...).
# "lean" is the default mode (GPUPHASE_CUPTI unset): overhead/launch_bound.
MATRIX = [
    ("hook", "GPUPHASE_CUPTI=0"),
    ("activity", "GPUPHASE_CUPTI=activity"),
    ("rt_needed", "GPUPHASE_CUPTI=activity,runtime=needed"),
    ("rt_all", "GPUPHASE_CUPTI=activity,runtime=all"),
    ("minimal", "GPUPHASE_CUPTI=minimal"),
    ("drv_all", "GPUPHASE_CUPTI=minimal,driver=all"),
    ("extcorr", "GPUPHASE_CUPTI=minimal,extcorr=all"),
    ("sync", "GPUPHASE_CUPTI=minimal,sync=1"),
    ("overhead", "GPUPHASE_CUPTI=minimal,overhead=1"),
    ("lean", ""),
    ("full", "GPUPHASE_CUPTI=full"),
    ("per_thread_off", "GPUPHASE_CUPTI=lean,per_thread=0"),
    ("per_thread_on", "GPUPHASE_CUPTI=lean,per_thread=1"),
    ("buffer_256k", "GPUPHASE_CUPTI=lean,buffer=256k"),
    ("buffer_16M", "GPUPHASE_CUPTI=lean,buffer=16M"),
    ("flush_10ms", "GPUPHASE_CUPTI=lean,flush=10ms"),
    ("stacks_off", "GPUPHASE_STACKS=off"),
    ("stacks_launch", "GPUPHASE_STACKS=launch"),
]
MATRIX_DEFAULT = "lean"
# configurations whose traces must join every op (the others record no API
# record or no CUPTI at all)
MATRIX_JOINS = {n for n, _ in MATRIX} - {"hook", "activity"}


def cupti_mode(rep):
    """The trace header's CUPTI mode (libgpuphase's GPUPHASE_CUPTI), or None."""
    h = rep.get("trace", {}).get("header") if isinstance(rep.get("trace"), dict) else None
    return h.get("cupti") if isinstance(h, dict) else None


def self_overhead(rep):
    """The report's self_overhead object (analyses[].host_conditions), or None."""
    for an in rep.get("analyses") or []:
        hc = an.get("host_conditions") if isinstance(an, dict) else None
        if isinstance(hc, dict) and isinstance(hc.get("self_overhead"), dict):
            return hc["self_overhead"]
    return None


def loop_ms(run):
    """The program's own event-timed loop (sum of its 'timing:' lines, ms)."""
    t = run.timings()
    if not t:
        raise KitError("%s: no 'timing:' line (exit %d: %s)" % (run.name, run.rc, run.tail()))
    return sum(ms for _, ms in t)


def matrix_runs(runs, name):
    """The run folders mx.<name>.<rep>, rep = 1, 2, ... (as run.sh names them)."""
    out, i = [], 1
    while os.path.isdir(os.path.join(runs, "mx.%s.%d" % (name, i))):
        out.append(Run(os.path.join(runs, "mx.%s.%d" % (name, i))))
        i += 1
    return out


def check_matrix(a):
    """Rows overhead/matrix/<name> (number: median event-timed launch loop
    under that configuration / median bare), overhead/launch_bound (the
    default configuration, judged against --max) and overhead/estimate (the
    report's self_overhead.estimate_ns / the measured added time of the
    default configuration's launch loop, judged against ESTIMATE_BAND). In
    --sim the ratios are simcuda's cost model, printed, not judged (SKIP)."""
    statuses = []
    bare_ms = None
    try:
        bares = matrix_runs(a.runs, "bare")
        if not bares:
            raise KitError("no bare runs mx.bare.* in %s" % a.runs)
        bad = [r for r in bares if r.rc != 0]
        if bad:
            raise KitError("%s: exit status %d: %s" % (bad[0].name, bad[0].rc, bad[0].tail()))
        bare_ms = statistics.median(loop_ms(r) for r in bares)
    except KitError as e:
        res = Result("overhead/matrix")
        res.fails.append(str(e))
        return res.emit(a.summary)
    names = [n for n, _ in MATRIX]
    ratios = {}
    default_runs = []
    for name in names:
        res = Result("overhead/matrix/" + name)
        try:
            rs = matrix_runs(a.runs, name)
            if not rs:
                res.notes.append("not run (time budget)")
                statuses.append(res.emit(a.summary, "SKIP"))
                continue
            for r in rs:
                res.need(r.rc == 0, "%s: exit status %d: %s" % (r.name, r.rc, r.tail()))
            if res.fails:
                raise KitError("a run failed")
            ms = statistics.median(loop_ms(r) for r in rs)
            ratios[name] = ms / bare_ms
            res.number = "%.3f" % ratios[name]
            res.notes.append("launch loop %.2f -> %.2f ms (medians of %d and %d)" % (bare_ms, ms, len(bares), len(rs)))
            rep_run = next((r for r in rs if os.path.exists(os.path.join(r.dir, "report.json"))), None)
            if rep_run is not None and name in MATRIX_JOINS:
                rep = rep_run.report()
                cov = coverage(rep)
                res.need(abs(cov - 1.0) < 1e-9, "join coverage %.4f%%, expected 100%%" % (cov * 100))
                mode = cupti_mode(rep)
                if mode:
                    res.notes.append("cupti=%s" % mode)
            if name == MATRIX_DEFAULT:
                default_runs = rs
        except KitError as e:
            res.fails.append(str(e))
        statuses.append(res.emit(a.summary, "SKIP" if a.sim and not res.fails else None))
    # overhead/launch_bound: the default configuration
    res = Result("overhead/launch_bound")
    try:
        if MATRIX_DEFAULT not in ratios:
            raise KitError("the default configuration (%s) has no ratio" % MATRIX_DEFAULT)
        r = ratios[MATRIX_DEFAULT]
        res.number = "%.3f" % r
        res.notes.append("event-timed launch loop, default CUPTI mode (%s) vs bare, medians" % MATRIX_DEFAULT)
        if "full" in ratios:
            res.notes.append("full x%.3f, hook only x%.3f" % (ratios["full"], ratios.get("hook", float("nan"))))
        if a.sim:
            res.notes.append("sim: simulator timings, ratio not judged")
        else:
            res.need(r <= a.max, "event-timed launch loop x%.3f under gpuphase > x%.3g" % (r, a.max))
    except KitError as e:
        res.fails.append(str(e))
    statuses.append(res.emit(a.summary, "SKIP" if a.sim and not res.fails else None))
    # overhead/estimate: the report's self-overhead against the added time
    res = Result("overhead/estimate")
    try:
        ests, added = [], []
        for r in default_runs:
            if not os.path.exists(os.path.join(r.dir, "report.json")):
                continue
            so = self_overhead(r.report())
            est = so.get("estimate_ns") if isinstance(so, dict) else None
            if isinstance(est, (int, float)) and not isinstance(est, bool):
                ests.append(est)
                added.append((loop_ms(r) - bare_ms) * 1e6)
        if not ests:
            raise KitError("no self_overhead.estimate_ns in the default configuration's reports")
        e, m = statistics.median(ests), statistics.median(added)
        res.notes.append("estimate %.3f ms, measured added %.3f ms (launch loop, medians of %d)"
                         % (e / 1e6, m / 1e6, len(ests)))
        if m > 0:
            res.number = "%.3f" % (e / m)
        if a.sim:
            res.notes.append("sim: not judged")
        elif m <= 0:
            raise KitError("no measured added time (launch loop not slower than bare: %.0f ns)" % m)
        else:
            res.need(ESTIMATE_BAND[0] <= e / m <= ESTIMATE_BAND[1], "estimate / measured x%.3f outside %.2f..%.2f"
                     % (e / m, ESTIMATE_BAND[0], ESTIMATE_BAND[1]))
    except KitError as e:
        res.fails.append(str(e))
    statuses.append(res.emit(a.summary, "SKIP" if a.sim and not res.fails else None))
    return "FAIL" if "FAIL" in statuses else "PASS"


def print_matrix(_a):
    """run.sh reads the matrix from here: 'name [NAME=value ...]' per line."""
    for n, e in MATRIX:
        print(("%s %s" % (n, e)).rstrip())
    return 0


# ---------------------------------------------------------------- host waits

# examples/gpu/split_waits.cu: the kernel each scenario waits for.
SPLIT_KERNEL = {"step_sync": "spin_step", "pageable_copy": "spin_long", "free_after": "spin_long",
                "queue_deep": "spin_queue"}


def program_waits(run):
    """(total ns, timed blocking calls) the program measured itself: its
    'wait: <call> <calls> <ns>' lines, plus for queue_deep the time its
    launches spent blocked ('launch: <calls> <total ns> <base ns>': total
    minus calls x the median of its first launches)."""
    total, calls, seen = 0, 0, False
    for line in run.stderr.splitlines():
        p = line.split()
        try:
            if len(p) == 4 and p[0] == "wait:":
                calls += int(p[2])
                total += int(p[3])
                seen = True
            elif len(p) == 4 and p[0] == "launch:":
                total += max(0, int(p[2]) - int(p[1]) * int(p[3]))
        except ValueError:
            raise KitError("%s: malformed line %r" % (run.name, line))
    if not seen:
        raise KitError("%s: the program printed no 'wait:' line (exit %d: %s)" % (run.name, run.rc, run.tail()))
    return total, calls


def verdicts(rep):
    """{operator name: verdict} of the operators with a verdict other than
    minor/none, and '*' -> the run's."""
    out = {"*": summary_of(rep).get("verdict")}
    for o in operators(rep):
        v = o.get("verdict")
        if v and v not in ("minor", "none", ""):
            out[str(o.get("name"))] = v
    return out


def check_split(a):
    """One host-wait scenario of examples/gpu/split_waits: the report's sync
    charged to the kernel the program waited for equals the program's own
    CLOCK_MONOTONIC_RAW measurement within --tol + --abs-us per timed call;
    the verdicts equal those of the same program on simcuda (--ref), whose
    report agrees with simcuda's truth (--truth-rc: report_truth_check.py's
    exit status); join coverage 100 %, 0 drops. In --sim (loaded CI hosts
    deschedule simcuda's waiting threads, which the report rightly counts as
    the call's own host time) the sync may only be less than the program's
    measurement, and verdicts that differ are printed, not judged."""
    res = Result(a.check)
    try:
        run = Run(a.run)
        res.need(run.rc == 0, "exit status %d: %s" % (run.rc, run.tail()))
        res.need(("split_waits: %s ok" % a.scenario) in run.stdout, "stdout lacks 'split_waits: %s ok'" % a.scenario)
        rep = run.report()
        cov, dr = coverage(rep), drops(rep)
        res.need(abs(cov - 1.0) < 1e-9, "join coverage %.4f%%, expected 100%%" % (cov * 100))
        res.need(dr == 0, "%d dropped records" % dr)
        kname = SPLIT_KERNEL.get(a.scenario)
        if not kname:
            raise KitError("unknown scenario %s" % a.scenario)
        m = matching([o for o in operators(rep) if is_kernel(o)], kname)
        if not res.need(m, "no %s operator in the report" % kname):
            raise KitError("nothing to compare")
        sync = sum(num(o, "sync_ns") for o in m)
        waited, calls = program_waits(run)
        allow = a.tol * waited + a.abs_us * 1e3 * max(calls, 1)
        diff = sync - waited
        if a.sim:
            res.need(diff <= allow, "report's sync of %s %.3f ms > the program's own %.3f ms" % (
                kname, sync / 1e6, waited / 1e6))
        else:
            res.need(abs(diff) <= allow, "report's sync of %s %.3f ms, the program waited %.3f ms (off by %.3f ms > "
                     "%.3g%% + %.0f us x %d)" % (kname, sync / 1e6, waited / 1e6, diff / 1e6, a.tol * 100,
                                                 a.abs_us, max(calls, 1)))
        # the verdicts simcuda's truth gives for the same program
        ref = Run(a.ref)
        res.need(ref.rc == 0, "simcuda reference run: exit status %d: %s" % (ref.rc, ref.tail()))
        if a.truth_rc is not None:
            res.need(a.truth_rc == 0, "simcuda reference run: its report disagrees with simcuda's truth "
                     "(runs/%s/truth-check.txt)" % ref.name)
        want, got = verdicts(ref.report()), verdicts(rep)
        for name in sorted(set(want) | set(got)):
            why = "verdict of %s: %s, simcuda's truth gives %s" % (name, got.get(name), want.get(name))
            if a.sim and want.get(name) != got.get(name):
                res.notes.append(why + " (sim: a loaded host slows simcuda's launches; not judged)")
            else:
                res.need(want.get(name) == got.get(name), why)
        res.number = "sync %.3f ms vs waited %.3f ms (%+.2f%%), verdict %s" % (
            sync / 1e6, waited / 1e6, 100.0 * diff / waited if waited else 0.0, got.get("*"))
        res.notes.append("verdicts %s" % ", ".join("%s=%s" % kv for kv in sorted(got.items())))
    except KitError as e:
        res.fails.append(str(e))
    return res.emit(a.summary)


# ---------------------------------------------------------------- dump statistics

def dumpstats(inp, out, ops=False):
    """Statistics of `gpuphase-dump FILE` text (stdin) as JSON (stdout):
    records (slots read), types {type: count}, hook_launches (hook records of
    class LAUNCH), windows [{start, stop}] (stop None while open), iter_ts,
    op_first_start / op_last_end (GPU ops), complete, dropped_ring,
    dropped_cupti, status_kinds."""
    st = {"records": 0, "types": {}, "hook_launches": 0, "windows": [], "iter_ts": [],
          "op_first_start": None, "op_last_end": None, "complete": None,
          "dropped_ring": None, "dropped_cupti": None, "status_kinds": []}
    st["_strings"], st["_kernels"], st["groups"] = {}, {}, {}
    if ops:
        # Per-record detail for the event comparisons of small programs:
        # runtime API calls [api, start, dur, corr], GPU ops [corr, start, end]
        # (memcpy: the runtime corr), runtime API names {api id: name id}.
        st["_rt_names"], st["rt"], st["ops"] = {}, [], []
    for line in inp:
        parse_dump_line(line, st)
    if ops:
        st["rt_names"] = {k: st["_strings"].get(v, "") for k, v in st.pop("_rt_names").items()}
    # Kernel groups are keyed by name id while reading (a string may come
    # after its first use when rings interleave); resolve them now.
    for nid, g in st.pop("_kernels").items():
        name = st["_strings"].get(nid, "name#%s" % nid)
        group_add(st["groups"], "kernel:" + short_name(name), g["count"], g["first_start"],
                  g["last_end"], g["exec_ns"])
    del st["_strings"]
    json.dump(st, out)
    out.write("\n")
    return 0


COPY_KINDS = {1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA",
              8: "DtoD", 9: "HtoH", 10: "PtoP"}  # CUpti_ActivityMemcpyKind


def group_add(groups, key, count, a, b, exec_ns):
    """Fold ops into groups[key] = {count, first_start, last_end, exec_ns}."""
    g = groups.get(key)
    if g is None:
        groups[key] = {"count": count, "first_start": a, "last_end": b, "exec_ns": exec_ns}
        return
    g["count"] += count
    g["first_start"] = min(g["first_start"], a)
    g["last_end"] = max(g["last_end"], b)
    g["exec_ns"] += exec_ns


def unescape_dump(text):
    """gpuphase-dump writes bytes < 0x20, '"', '\\' and >= 0x7f as \\xNN."""
    return re.sub(r"\\x([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def kv(line):
    """'kernel dev=0 start=5 ...' -> {'dev': '0', 'start': '5', ...}."""
    d = {}
    for tok in line.split(" ")[1:]:
        k, sep, v = tok.partition("=")
        if sep:
            d[k] = v
    return d


GP_API_LAUNCH = 1          # enum gp_api_class (trace/gp_format.h)
GP_WIN_START, GP_WIN_STOP, GP_WIN_END_EARLY = 1, 2, 3


def parse_dump_line(line, st):
    """Fold one line of gpuphase-dump (trace/dump.c) into st."""
    line = line.rstrip("\n")
    if not line:
        return
    if line.startswith("#"):
        if line.startswith("# end "):
            d = kv(line[1:].strip())
            for k in ("records", "dropped_ring", "dropped_cupti", "complete"):
                if d.get(k, "").isdigit():
                    st[k] = int(d[k])
        return
    typ = line.split(" ", 1)[0]
    st["types"][typ] = st["types"].get(typ, 0) + 1
    if typ == "runtime_api" and "rt" in st:
        d = kv(line)
        st["rt"].append([int(d["api"]), int(d["start"]), int(d["dur_ns"]), int(d["corr"])])
        return
    if typ == "api_name" and "rt" in st:
        d = kv(line)
        if d.get("domain") == "3":  # GP_REC_RUNTIME_API
            st["_rt_names"][d.get("api")] = d.get("name")
        return
    if typ == "extcorr" or typ == "runtime_api" or typ == "driver_api" or typ == "api_name":
        return
    if typ == "string":
        m = re.match(r'^string id=(\d+) len=\d+ text="(.*)"$', line)
        if m:
            st["_strings"][m.group(1)] = unescape_dump(m.group(2))
        return
    if typ == "kernel":
        d = kv(line)
        a, b = int(d.get("start", 0)), int(d.get("end", 0))
        g = st["_kernels"].get(d.get("name"))
        if g is None:
            g = st["_kernels"][d.get("name")] = {"count": 0, "first_start": a, "last_end": b, "exec_ns": 0}
        g["count"] += 1
        g["first_start"] = min(g["first_start"], a)
        g["last_end"] = max(g["last_end"], b)
        g["exec_ns"] += max(0, b - a)
        if "ops" in st:
            st["ops"].append([int(d.get("corr", 0)), a, b])
    elif typ in ("memcpy", "memset"):
        d = kv(line)
        a = int(d.get("start", 0))
        dur = int(d.get("dur_ns", 0))
        b = a + dur
        if "ops" in st:
            st["ops"].append([int(d.get("rt_corr", 0)), a, b])
        if typ == "memcpy":
            kind = COPY_KINDS.get(int(d.get("kind", 0)), "kind%s" % d.get("kind"))
            group_add(st["groups"], "memcpy:" + kind, 1, a, b, dur)
            group_add(st["groups"], "memcpy:%s:%s" % (kind, d.get("bytes")), 1, a, b, dur)
        else:
            group_add(st["groups"], "memset", 1, a, b, dur)
            group_add(st["groups"], "memset:%s" % d.get("bytes"), 1, a, b, dur)
    else:
        if typ == "hook_api":
            if kv(line).get("class") == str(GP_API_LAUNCH):
                st["hook_launches"] += 1
        elif typ == "iter":
            st["iter_ts"].append(int(kv(line).get("ts", 0)))
        elif typ == "window":
            d = kv(line)
            kind, ts = int(d.get("kind", 0)), int(d.get("ts", 0))
            if kind == GP_WIN_START:
                st["windows"].append({"start": ts, "stop": None})
            elif kind in (GP_WIN_STOP, GP_WIN_END_EARLY) and st["windows"] and \
                    st["windows"][-1]["stop"] is None:
                st["windows"][-1]["stop"] = ts
                st["windows"][-1]["early"] = kind == GP_WIN_END_EARLY
        elif typ == "status":
            st["status_kinds"].append(int(kv(line).get("kind", 0)))
        return
    if a and (st["op_first_start"] is None or a < st["op_first_start"]):
        st["op_first_start"] = a
    if b and (st["op_last_end"] is None or b > st["op_last_end"]):
        st["op_last_end"] = b


# ---------------------------------------------------------------- table

def table(a):
    rows = []
    try:
        with open(a.summary) as f:
            for line in f:
                p = line.rstrip("\n").split("\t")
                if len(p) >= 3:
                    rows.append((p + [""])[:4])
    except OSError as e:
        print("gpukit: %s: %s" % (a.summary, e.strerror), file=sys.stderr)
        return 1
    w = max([len(r[0]) for r in rows] + [5])
    print()
    print("gpuphase GPU validation kit — summary (%s)" % a.mode)
    print("%-*s  %-6s %s" % (w, "check", "status", "number"))
    print("%s  %s %s" % ("-" * w, "-" * 6, "-" * 40))
    for c, s, n, d in rows:
        extra = ("   [" + d[:110] + ("..." if len(d) > 110 else "") + "]") if d and s != "PASS" else ""
        print("%-*s  %-6s %s%s" % (w, c, s, n, extra))
    counts = {k: sum(1 for r in rows if r[1] == k) for k in ("PASS", "FAIL", "SKIP")}
    print("%d PASS, %d FAIL, %d SKIP" % (counts["PASS"], counts["FAIL"], counts["SKIP"]))
    return 1 if counts["FAIL"] or not rows else 0


# ---------------------------------------------------------------- self-test

STUB_OPTIMIZER = """
_post = []
if HAS_GLOBAL:
    def register_optimizer_step_post_hook(hook):
        _post.append(hook)


class Optimizer:
    # like torch: the base __init__ wraps step so that hooks run after it
    def __init__(self, params):
        self._hooks = []
        inner = self.step

        def step(*a, **kw):
            r = inner(*a, **kw)
            for h in _post + self._hooks:
                h(self, a, kw)
            return r
        self.step = step

    if HAS_INSTANCE:
        def register_step_post_hook(self, hook):
            self._hooks.append(hook)


class SGD(Optimizer):
    def __init__(self, params):
        super().__init__(params)

    def step(self):
        return None
"""


def train_wrap_stub(tmp, variant, want_how, steps=7):
    """Run tests/gpu/train_wrap.py on a tiny script stepping an optimizer
    `steps` times, against a stub torch package of the given variant:
    "global" (the global hook in torch.optim.optimizer, whose name the
    package deletes as PyTorch 2.11 does), "instance" (only the per-instance
    hook), "step" (neither), "none" (no torch.optim.Optimizer). Returns what
    went wrong, or None."""
    root = os.path.join(tmp, "stub-" + variant)
    pkg = os.path.join(root, "torch", "optim")
    os.makedirs(pkg)
    with open(os.path.join(root, "torch", "__init__.py"), "w") as f:
        f.write("from . import optim\n")
    with open(os.path.join(pkg, "__init__.py"), "w") as f:
        if variant != "none":
            f.write("from .optimizer import Optimizer, SGD\ndel optimizer  # as torch 2.11: no attribute\n")
    with open(os.path.join(pkg, "optimizer.py"), "w") as f:
        f.write("HAS_GLOBAL = %s\nHAS_INSTANCE = %s\n" % (variant == "global", variant in ("global", "instance")))
        f.write(STUB_OPTIMIZER)
    script = os.path.join(root, "train.py")
    with open(script, "w") as f:
        f.write("import torch\nopt = torch.optim.SGD([])\nfor i in range(%d):\n    opt.step()\n"
                "print('step %%4d  loss 1.0' %% i)\n" % steps)
    run_dir = os.path.join(root, "train.bare")
    os.makedirs(run_dir)
    env = dict(os.environ, PYTHONPATH=root)
    wrap = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_wrap.py")
    try:
        p = subprocess.run([sys.executable, wrap, "--", script], cwd=run_dir, env=env, timeout=60,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    except (OSError, subprocess.SubprocessError) as e:
        return "could not run: %s" % e
    for fn, txt in (("stdout", p.stdout), ("stderr", p.stderr), ("rc", "%d\n" % p.returncode),
                    ("wall_ns", "1\n")):
        with open(os.path.join(run_dir, fn), "w") as f:
            f.write(txt)
    run = Run(run_dir)
    if want_how is None:
        why = wrapper_failure(run)
        if p.returncode != WRAPPER_FAILED or not why or "cannot hook optimizer steps" not in why:
            return "expected a reported wrapper failure, got exit %d: %s" % (p.returncode, run.tail())
        res = Result("selftest/train_wrap-none")
        train_rc(res, run, run.name)
        if not res.fails or "train_wrap.py failed" not in res.fails[0]:
            return "the kit did not name the wrapper: %s" % res.fails
        return None
    if p.returncode != 0:
        return "exit %d: %s" % (p.returncode, run.tail())
    try:
        st = load_steps(run)
    except KitError as e:
        return str(e)
    if st.get("hook") != want_how or len(st["step_end_ns"]) != steps:
        return "hook %r with %d steps recorded, expected %r with %d" % (
            st.get("hook"), len(st["step_end_ns"]), want_how, steps)
    if st["step_end_ns"] != sorted(st["step_end_ns"]):
        return "step times not increasing"
    return None


def selftest(_a):
    """Each check on synthetic runs: agreeing inputs PASS, each kind of
    disagreement FAILs. Returns 0 if every case came out as expected."""
    tmp = tempfile.mkdtemp(prefix="gpukit-selftest-")
    summary = os.path.join(tmp, "summary.tsv")

    def mk(name, rc=0, out="result 42\n", err="timing: kern 10.000\n", report=None, dump=None,
           wall_ns=1_000_000_000, steps=None):
        d = os.path.join(tmp, name)
        os.makedirs(d, exist_ok=True)
        for fn, txt in (("stdout", out), ("stderr", err), ("rc", "%d\n" % rc),
                        ("wall_ns", "%d\n" % wall_ns)):
            with open(os.path.join(d, fn), "w") as f:
                f.write(txt)
        if report is not None:
            with open(os.path.join(d, "report.json"), "w") as f:
                f.write(report if isinstance(report, str) else json.dumps(report))
        if dump is not None:
            with open(os.path.join(d, "dumpstats.json"), "w") as f:
                json.dump(dump, f)
        if steps is not None:
            with open(os.path.join(d, "steps.json"), "w") as f:
                json.dump({"step_end_ns": steps}, f)
        return d

    def rep(exec_ms=10.0, cov=1.0, dr=0, count=5, name="void kern(float*)", launch_ns=1000):
        return {"operators": [
            {"name": name, "count": count, "launch_ns": launch_ns, "queue_ns": 0,
             "execute_ns": int(exec_ms * 1e6), "sync_ns": 0, "total_ns": int(exec_ms * 1e6) + launch_ns,
             "verdict": "compute-bound"},
            {"name": "[memcpy HtoD]", "count": 1, "launch_ns": 10, "queue_ns": 0,
             "execute_ns": 999999, "sync_ns": 0, "total_ns": 1000009, "verdict": ""}],
            "summary": {"wall_ns": 1, "gpu_busy_ns": 1, "unattributed_ns": 0,
                        "dropped_records": dr, "join_coverage": cov}}

    def evdump(last_end):
        """Two cudaEventRecord calls (api 135) around ops launched in between;
        the second returns before the last op ends at last_end."""
        return {"rt_names": {"135": "cudaEventRecord", "7": "cudaLaunchKernel"},
                "rt": [[135, 1000, 500, 1], [7, 2000, 100, 2], [7, 3000, 100, 3], [135, 4000, 500, 4]],
                "ops": [[2, 2500, 30_000_000], [3, 30_000_000, last_end]]}

    def cbrun(name, lead_end, launch_lat, dur=10_000_000, events_scale=1.0, sim=False):
        """A compute_bound-like run: lead_in (GPU busy until lead_end), then
        per kernel k: cudaEventRecord(start k), launch, cudaEventRecord(stop k);
        a final event. Kernel k starts 1 us after the later of the previous
        kernel's end and its launch call's end + launch_lat. Its timing lines
        are what the events measure (x events_scale); the report's heavy_lcg
        execute sum is 5 x dur."""
        rt, ops, ev = [], [], []
        h, corr, gpu = 1000, 1, lead_end
        rt.append([7, h, 100, corr])
        ops.append([corr, 1500, lead_end])
        for _k in range(CB_KERNELS):
            h += 200
            corr += 1
            rt.append([135, h, 100, corr])
            ev.append(max(h + 100, gpu))  # start k: after the stream's work so far
            h += 200
            corr += 1
            rt.append([7, h, 100, corr])
            start = max(gpu, h + 100 + launch_lat) + 1000
            gpu = start + dur
            ops.append([corr, start, gpu])
            h += 200
            corr += 1
            rt.append([135, h, 100, corr])
            ev.append(max(h + 100, gpu))  # stop k: after kernel k
        h = gpu + 5_000_000
        corr += 1
        rt.append([135, h, 100, corr])
        ev.append(h + 100)
        kern = sum(ev[2 * k + 1] - ev[2 * k] for k in range(CB_KERNELS))
        err = "".join("timing: %s %.6f\n" % (w, v * events_scale / 1e6) for w, v in (
            ("kernels", kern), ("bracket", ev[9] - ev[0]), ("total", ev[10] - ev[0])))
        dump = {"rt_names": {"135": "cudaEventRecord", "7": "cudaLaunchKernel"}, "rt": rt, "ops": ops}
        return dict(run=mk(name, err=err, report=rep(CB_KERNELS * dur / 1e6, name="heavy_lcg", count=5),
                           dump=dump), tol=0.01, program="compute_bound", sim=sim)

    def grep_(launches=4, nodes=3, count=4, captured=True, kernels=("ka", "kb", "kc"), host=400,
              charged=(400, 0, 0), cov=1.0):
        """A graph_replay-like report: `launches` replays of a graph of
        `nodes` nodes, the cudaGraphLaunch cost `host` ns, `charged` the launch
        time on each node's kernel operator."""
        r = rep(cov=cov)
        r["operators"] = [{"name": k, "count": count, "launch_ns": c, "queue_ns": 0, "execute_ns": 10,
                           "sync_ns": 0, "total_ns": 10 + c, "verdict": ""} for k, c in zip(kernels, charged)]
        r["analyses"] = [{"cuda_graphs": [{"graph": 1, "exec_graph": 2, "launches": launches, "nodes": nodes,
                                           "kernels": launches * nodes, "launch_host_ns": host,
                                           "node_items": [{"node": 100 + i, "kernel": k, "captured": captured,
                                                           "count": count} for i, k in enumerate(kernels)]}]}]
        return r

    def gdump(n=4, each=100):
        return {"rt_names": {"300": "cudaGraphLaunch"}, "rt": [[300, 1000 * i, each, i + 1] for i in range(n)],
                "ops": []}

    gout = "graph_replay: n=8 replays=4 nodes=3 checksum=0\n"
    gbare = mk("gbare", out=gout)
    ns = argparse.Namespace
    bare = mk("bare")
    cases = [
        ("agree", "PASS", check_example, dict(run=mk("a", report=rep(10.05)), tol=0.01)),
        ("exec 2% off", "FAIL", check_example, dict(run=mk("b", report=rep(10.2)), tol=0.01)),
        ("coverage 99.9%", "FAIL", check_example, dict(run=mk("c", report=rep(cov=0.999)), tol=0.01)),
        ("coverage as percent", "PASS", check_example, dict(run=mk("c2", report=rep(cov=100)), tol=0.01)),
        ("drops", "FAIL", check_example, dict(run=mk("d", report=rep(dr=3)), tol=0.01)),
        ("stdout differs", "FAIL", check_example, dict(run=mk("e", out="result 43\n", report=rep()), tol=0.01)),
        ("exit status differs", "FAIL", check_example, dict(run=mk("f", rc=1, report=rep()), tol=0.01)),
        ("no report", "FAIL", check_example, dict(run=mk("g"), tol=0.01)),
        ("garbage report", "FAIL", check_example, dict(run=mk("h", report="{oops"), tol=0.01)),
        ("no timing line", "FAIL", check_example, dict(run=mk("i", err="", report=rep()), tol=0.01)),
        ("unknown timing name", "FAIL", check_example,
         dict(run=mk("j", err="timing: other 10.0\n", report=rep()), tol=0.01)),
        ("events agree", "PASS", check_example,
         dict(run=mk("s1", err="timing: launch_loop 60.3\n", report=rep(), dump=evdump(60_000_000)),
              tol=0.01, program="launch_bound")),
        ("events 5% off", "FAIL", check_example,
         dict(run=mk("s2", err="timing: launch_loop 60.3\n", report=rep(), dump=evdump(57_000_000)),
              tol=0.01, program="launch_bound")),
        ("no event records", "FAIL", check_example,
         dict(run=mk("s3", err="timing: launch_loop 60.3\n", report=rep(), dump={"groups": {}}),
              tol=0.01, program="launch_bound")),
        ("per-kernel events = execute", "PASS", check_example, cbrun("s4", 1_000_000, 5_000)),
        ("first kernel waits for its launch", "FAIL", check_example, cbrun("s5", 0, 600_000)),
        ("execute not judged in sim", "PASS", check_example, cbrun("s6", 0, 600_000, sim=True)),
        ("per-kernel events vs trace 3% off", "FAIL", check_example,
         cbrun("s7", 1_000_000, 5_000, events_scale=1.03, sim=True)),
        ("compute_bound old bracket only", "FAIL", check_example,
         dict(run=mk("s8", err="timing: kernels 60.3\n", report=rep(50.0, name="heavy_lcg"),
                     dump=evdump(60_000_000)), tol=0.01, program="compute_bound")),
        ("nvtx names", "PASS", check_nvtx,
         dict(run=mk("v1", report=rep(name="gp::fill", count=50)), expect="gp::fill=50")),
        ("nvtx count off", "FAIL", check_nvtx,
         dict(run=mk("v2", report=rep(name="gp::fill", count=49)), expect="gp::fill=50")),
        ("nvtx name missing", "FAIL", check_nvtx,
         dict(run=mk("v3", report=rep(name="fill_k", count=50)), expect="gp::fill=50")),
        ("all kernels", "PASS", check_kernels,
         dict(run=mk("k", report=rep(count=5)), kernel="kern", expect=5, allow_reported_drops=False)),
        ("a kernel missing", "FAIL", check_kernels,
         dict(run=mk("l", report=rep(count=4)), kernel="kern", expect=5, allow_reported_drops=False)),
        ("missing but reported", "PASS", check_kernels,
         dict(run=mk("m", report=rep(count=4, dr=7)), kernel="kern", expect=5, allow_reported_drops=True)),
        ("all there, other records dropped", "PASS", check_kernels,
         dict(run=mk("n2", report=rep(count=5, dr=7)), kernel="kern", expect=5, allow_reported_drops=True)),
        ("too many kernels", "FAIL", check_kernels,
         dict(run=mk("n3", report=rep(count=6, dr=7)), kernel="kern", expect=5, allow_reported_drops=True)),
        ("missing, too few drops", "FAIL", check_kernels,
         dict(run=mk("n", report=rep(count=3, dr=1)), kernel="kern", expect=5, allow_reported_drops=True)),
        ("hidden ok", "PASS", check_hidden,
         dict(run=mk("o", report=rep(count=21), dump={"hook_launches": 0}), kernel=None, expect=None,
              min_kernels=21, expect_hooked=0)),
        ("hidden without launch", "FAIL", check_hidden,
         dict(run=mk("p", report=rep(count=21, launch_ns=0), dump={"hook_launches": 0}), kernel=None,
              expect=None, min_kernels=21, expect_hooked=0)),
        ("hidden seen by hooks", "FAIL", check_hidden,
         dict(run=mk("q", report=rep(count=21), dump={"hook_launches": 21}), kernel=None, expect=None,
              min_kernels=21, expect_hooked=0)),
    ]
    thr = "cuda_threads: before %d after %d\n"
    cases += [
        ("threads added", "PASS", check_threads, dict(run=mk("t1", out=thr % (1, 4)))),
        ("no thread added", "FAIL", check_threads, dict(run=mk("t2", out=thr % (1, 1)))),
        ("threads fewer", "FAIL", check_threads, dict(run=mk("t3", out=thr % (3, 2)))),
        ("threads no line", "FAIL", check_threads, dict(run=mk("t4", out="result 42\n"))),
        ("threads program failed", "FAIL", check_threads, dict(run=mk("t5", rc=1, out=thr % (1, 4)))),
    ]
    gk = "ka,kb,kc"
    cases += [
        ("graph ok", "PASS", check_graph,
         dict(run=mk("g1", out=gout, report=grep_(), dump=gdump()), kernels=gk, bare=gbare)),
        ("graph launch per node", "FAIL", check_graph,
         dict(run=mk("g2", out=gout, report=grep_(charged=(400, 400, 400)), dump=gdump()), kernels=gk,
              bare=gbare)),
        ("graph launch cost wrong", "FAIL", check_graph,
         dict(run=mk("g3", out=gout, report=grep_(host=1200), dump=gdump()), kernels=gk, bare=gbare)),
        ("graph node not captured", "FAIL", check_graph,
         dict(run=mk("g4", out=gout, report=grep_(captured=False), dump=gdump()), kernels=gk, bare=gbare)),
        ("graph node kernel missing", "FAIL", check_graph,
         dict(run=mk("g5", out=gout, report=grep_(kernels=("ka", "kb", "kb")), dump=gdump()), kernels=gk,
              bare=gbare)),
        ("graph replays short", "FAIL", check_graph,
         dict(run=mk("g6", out=gout, report=grep_(launches=3, count=3), dump=gdump(3)), kernels=gk, bare=gbare)),
        ("graph coverage", "FAIL", check_graph,
         dict(run=mk("g7", out=gout, report=grep_(cov=0.99), dump=gdump()), kernels=gk, bare=gbare)),
        ("graph no analyses", "FAIL", check_graph,
         dict(run=mk("g8", out=gout, report=rep(), dump=gdump()), kernels=gk, bare=gbare)),
    ]
    bad = 0
    for what, want, fn, kw in cases:
        kw = dict(kw)
        a = ns(check="selftest/" + what, summary=summary, bare=kw.pop("bare", bare), **kw)
        got = fn(a)
        if got != want:
            print("selftest: %s: got %s, expected %s" % (what, got, want))
            bad += 1
    # the overhead matrix: medians against bare, the default's limit, the estimate
    def rows_since(before):
        return {r.split("\t")[0]: r.split("\t")[1] for r in open(summary).read().splitlines()[before:]}

    def matrix_case(what, lean_ms, est_ms, cov=1.0, sim=False):
        od = os.path.join(tmp, "mx-" + what.replace(" ", "_"))
        for i in (1, 2, 3):
            for name, ms in (("bare", 10.0), ("lean", lean_ms), ("full", 15.0)):
                d = os.path.join(od, "mx.%s.%d" % (name, i))
                os.makedirs(d)
                r = rep(cov=cov)
                r["trace"] = {"header": {"cupti": "lean" if name == "lean" else "full"}}
                r["analyses"] = [{"host_conditions": {"self_overhead": {"estimate_ns": est_ms * 1e6}}}]
                for fn, txt in (("stdout", ""), ("stderr", "timing: launch_loop %.3f\n" % (ms + 0.01 * i)),
                                ("rc", "0"), ("wall_ns", "1000000000"), ("report.json", json.dumps(r))):
                    with open(os.path.join(d, fn), "w") as f:
                        f.write(txt)
        before = open(summary).read().count("\n")
        check_matrix(ns(summary=summary, runs=od, max=LAUNCH_OVERHEAD_MAX, sim=sim))
        return rows_since(before)

    nmatrix = 0
    for what, lean_ms, est_ms, cov, sim, want in (
            ("matrix x1.05", 10.5, 0.5, 1.0, False,
             {"overhead/launch_bound": "PASS", "overhead/estimate": "PASS", "overhead/matrix/lean": "PASS",
              "overhead/matrix/full": "PASS", "overhead/matrix/hook": "SKIP"}),
            ("matrix x1.2", 12.0, 2.0, 1.0, False, {"overhead/launch_bound": "FAIL", "overhead/estimate": "PASS"}),
            ("estimate x2", 10.5, 1.0, 1.0, False, {"overhead/launch_bound": "PASS", "overhead/estimate": "FAIL"}),
            ("estimate x0.5", 10.5, 0.25, 1.0, False, {"overhead/estimate": "FAIL"}),
            ("matrix coverage", 10.5, 0.5, 0.99, False, {"overhead/matrix/lean": "FAIL"}),
            ("matrix in sim", 12.0, 2.0, 1.0, True, {"overhead/launch_bound": "SKIP", "overhead/estimate": "SKIP",
                                                     "overhead/matrix/lean": "SKIP"})):
        nmatrix += 1
        got = matrix_case(what, lean_ms, est_ms, cov, sim)
        for row, st in want.items():
            if got.get(row) != st:
                print("selftest: %s: %s %s, expected %s" % (what, row, got.get(row), st))
                bad += 1

    # the duty cycle's cost (both rows): medians against bare, the limit, the windows written
    duty_timing = {"overhead/duty": "timing: serve 90000 requests %.3f\n",
                   "overhead/duty_launch": "timing: launch_loop %.3f\n"}

    def duty_case(row, what, duty_ms, windows, sim=False, rc=0):
        od = os.path.join(tmp, "duty-" + (row + " " + what).replace(" ", "_").replace("/", "_"))
        prefix = DUTY_ROWS[row][0]
        for i in (1, 2, 3):
            for mode, ms in (("bare", 8000.0), ("every", duty_ms)):
                d = os.path.join(od, "%s.%s.%d" % (prefix, mode, i))
                os.makedirs(d)
                files = [("stdout", ""), ("stderr", duty_timing[row] % (ms + i)),
                         ("rc", str(rc if mode == "every" else 0)), ("wall_ns", "1")]
                if mode == "every":
                    files.append(("windows", "%d\n" % windows))
                for fn, txt in files:
                    with open(os.path.join(d, fn), "w") as f:
                        f.write(txt)
        before = open(summary).read().count("\n")
        check_duty(ns(check=row, summary=summary, runs=od, window="every=1s", seconds=8.0, max=1.01, sim=sim))
        return rows_since(before).get(row)

    duty_cases = [(row,) + c for row in sorted(DUTY_ROWS) for c in (
        ("x1.005", 8040.0, 8, False, 0, "PASS"), ("x1.05", 8400.0, 8, False, 0, "FAIL"),
        ("no windows", 8040.0, 0, False, 0, "FAIL"), ("run failed", 8040.0, 8, False, 1, "FAIL"),
        ("in sim", 8400.0, 8, True, 0, "SKIP"), ("sim no windows", 8040.0, 1, True, 0, "FAIL"))]
    for row, what, duty_ms, windows, sim, rc, want in duty_cases:
        got = duty_case(row, what, duty_ms, windows, sim, rc)
        if got != want:
            print("selftest: %s %s: %s, expected %s" % (row, what, got, want))
            bad += 1

    # host waits: the report's sync against the program's own clock, the
    # verdicts against simcuda's
    def split_case(what, scenario, err, sync_ms, verdict="sync-bound", ref_verdict="sync-bound", truth_rc=0,
                   sim=False, want="PASS"):
        kern = SPLIT_KERNEL[scenario]
        r = rep(name=kern, count=10)
        r["operators"][0]["sync_ns"] = int(sync_ms * 1e6)
        r["operators"][0]["verdict"] = verdict
        r["summary"]["verdict"] = verdict
        rr = rep(name=kern, count=10)
        rr["operators"][0]["verdict"] = ref_verdict
        rr["summary"]["verdict"] = ref_verdict
        run = mk("sp-" + what.replace(" ", "_"), out="split_waits: %s ok\n" % scenario, err=err, report=r)
        ref = mk("sp-ref-" + what.replace(" ", "_"), out="split_waits: %s ok\n" % scenario, err=err, report=rr)
        got = check_split(ns(check="selftest/" + what, summary=summary, scenario=scenario, run=run, ref=ref,
                             truth_rc=truth_rc, tol=0.02, abs_us=20.0, sim=sim))
        if got != want:
            print("selftest: %s: got %s, expected %s" % (what, got, want))
            return 1
        return 0

    sync20 = "wait: cudaDeviceSynchronize 20 40000000\n"
    queue = "launch: 100 1000000 5000\nwait: cudaDeviceSynchronize 1 100000\n"  # 0.5 + 0.1 ms waited
    split_cases = (
        ("split agrees", "step_sync", sync20, 40.3, {}),
        ("split sync 5% short", "step_sync", sync20, 38.0, {"want": "FAIL"}),
        ("split sync 5% long", "step_sync", sync20, 42.0, {"want": "FAIL"}),
        ("split verdict differs", "step_sync", sync20, 40.0, {"verdict": "compute-bound", "want": "FAIL"}),
        ("split truth disagrees", "step_sync", sync20, 40.0, {"truth_rc": 1, "want": "FAIL"}),
        ("split no wait line", "step_sync", "", 40.0, {"want": "FAIL"}),
        ("split queue blocked time", "queue_deep", queue, 0.6, {}),
        ("split queue waits as launch", "queue_deep", queue, 0.1, {"want": "FAIL"}),
        ("split sim: less sync is fine", "free_after", "wait: cudaFree 10 50000000\n", 45.0, {"sim": True}),
        ("split sim: more sync is not", "free_after", "wait: cudaFree 10 50000000\n", 52.0,
         {"sim": True, "want": "FAIL"}),
        ("split sim: verdicts printed", "free_after", "wait: cudaFree 10 50000000\n", 49.9,
         {"sim": True, "verdict": "balanced"}),
    )
    for what, sc, err, sync_ms, kw in split_cases:
        bad += split_case(what, sc, err, sync_ms, **kw)
    # train: window, NVTX names, overhead against torch.profiler
    def train_runs(name, gp_factor, tp_factor, win_stop, aten=True):
        rd = os.path.join(tmp, name)
        steps = {"bare": 1.0, "preload": gp_factor, "nvtx": gp_factor, "torchprof": tp_factor}
        for mode, f in steps.items():
            t = [int(1e9 + i * f * 1e6) for i in range(1, 51)]  # 50 steps, 1 ms each x f
            # one iteration mark (loss.item() sync) just after each step
            w = {"windows": [{"start": t[19] + 10, "stop": win_stop(t)}], "iter_ts": [x + 5 for x in t]}
            opname = "aten::addmm" if (aten and mode == "nvtx") else "sgemm_kernel"
            d = os.path.join(rd, "train." + mode)
            os.makedirs(d)
            for fn, txt in (("stdout", "step    0  loss 2.3\n"), ("stderr", ""), ("rc", "0"),
                            ("wall_ns", "5000000000"), ("steps.json", json.dumps({"step_end_ns": t})),
                            ("dumpstats.json", json.dumps(w)),
                            ("report.json", json.dumps(rep(name=opname)))):
                with open(os.path.join(d, fn), "w") as f:
                    f.write(txt)
        return rd

    for what, gpf, tpf, stop, aten, want in (
            ("train ok", 1.05, 1.5, lambda t: t[29] + 10, True, {"PASS"}),
            ("train window long", 1.05, 1.5, lambda t: t[30] + 10, True, {"FAIL"}),
            ("train no aten", 1.05, 1.5, lambda t: t[29] + 10, False, {"FAIL"}),
            ("train slower than torch", 1.9, 1.5, lambda t: t[29] + 10, True, {"FAIL"})):
        rd = train_runs(what.replace(" ", "_"), gpf, tpf, stop, aten)
        before = open(summary).read().count("\n")
        check_train(ns(summary=summary, runs=rd, skip=20, iters=10))
        rows = open(summary).read().splitlines()[before:]
        got = {r.split("\t")[1] for r in rows}
        if ("FAIL" in got) != ("FAIL" in want):
            print("selftest: %s: got %s, expected %s" % (what, sorted(got), sorted(want)))
            bad += 1
    # train_wrap.py against stub `torch` packages (no PyTorch here): every
    # way of hooking optimizer steps records each step; with none it says so
    # and the kit reports the wrapper, not the training script.
    nstub = 0
    for variant, want_how in (("global", "global"), ("instance", "instance"), ("step", "step"), ("none", None)):
        nstub += 1
        why = train_wrap_stub(tmp, variant, want_how)
        if why:
            print("selftest: train_wrap.py with a %s stub torch: %s" % (variant, why))
            bad += 1
    # window exactness
    st = list(range(1_000, 40_000, 1_000))  # 39 step ends, 1 us apart
    win = {"windows": [{"start": 20_500, "stop": 30_500}], "iter_ts": list(range(20_500, 30_600, 1_000)),
           "op_first_start": 20_600, "op_last_end": 30_400, "records": 10}
    r = Result("selftest/window")
    window_exact(r, type("R", (), {"dump": lambda self: win})(), {"step_end_ns": st}, 20, 10)
    if r.fails:
        print("selftest: exact window: unexpected failures: %s" % r.fails)
        bad += 1
    win2 = dict(win, windows=[{"start": 20_500, "stop": 31_500}])
    r = Result("selftest/window-long")
    window_exact(r, type("R", (), {"dump": lambda self: win2})(), {"step_end_ns": st}, 20, 10)
    if not r.fails:
        print("selftest: a window one step too long was not caught")
        bad += 1
    print("selftest: %d cases, %d wrong" % (len(cases) + 6 + nstub + nmatrix + len(split_cases) + len(duty_cases),
                                             bad))
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


# The duty cycle's rows (run.sh step 8): row -> (the run folders' prefix, what
# the program's 'timing:' line times).
DUTY_ROWS = {"overhead/duty": ("duty", "client time"),
             "overhead/duty_launch": ("duty_launch", "launch loop")}


def duty_runs(runs, prefix, mode):
    """The run folders <prefix>.<mode>.<rep>, rep = 1, 2, ... (run.sh step 8)."""
    out, i = [], 1
    while os.path.isdir(os.path.join(runs, "%s.%s.%d" % (prefix, mode, i))):
        out.append(Run(os.path.join(runs, "%s.%s.%d" % (prefix, mode, i))))
        i += 1
    return out


def check_duty(a):
    """Row --check of DUTY_ROWS: overhead/duty (number: median client time
    of the example server under duty-cycled capture / median bare) or
    overhead/duty_launch (the same for launch_bound's event-timed launch
    loop). Every run must have exited 0 (the server: served every request),
    every duty run must have written windows (at least one per two periods),
    the bare median must span --seconds / 2 at least; the ratio is judged
    against --max, except in --sim (simcuda's timings on a shared host:
    printed, not judged, SKIP)."""
    prefix, what = DUTY_ROWS[a.check]
    res = Result(a.check)
    try:
        bares, duties = duty_runs(a.runs, prefix, "bare"), duty_runs(a.runs, prefix, "every")
        if not bares or not duties:
            raise KitError("no runs %s.bare.* / %s.every.* in %s" % (prefix, prefix, a.runs))
        for r in bares + duties:
            res.need(r.rc == 0, "%s: exit status %d: %s" % (r.name, r.rc, r.tail()))
        if res.fails:
            raise KitError("a run failed")
        bare_ms = statistics.median(loop_ms(r) for r in bares)
        duty_ms = statistics.median(loop_ms(r) for r in duties)
        period_s = parse_period(a.window)
        for r in duties:
            try:
                w = int(read_text(os.path.join(r.dir, "windows")).strip())
            except (OSError, ValueError):
                w = 0
            need_w = max(1, int(loop_ms(r) / 1000.0 / period_s / 2))
            res.need(w >= need_w, "%s: %d window files in %.1f s at %s, expected >= %d"
                     % (r.name, w, loop_ms(r) / 1000.0, a.window, need_w))
        res.need(bare_ms >= a.seconds * 1000.0 / 2, "bare run %.0f ms, under half the %g s asked: too few periods"
                 % (bare_ms, a.seconds))
        ratio = duty_ms / bare_ms
        res.number = "%.4f" % ratio
        res.notes.append("%s %.1f -> %.1f ms (medians of %d and %d), GPUPHASE_WINDOW=%s"
                         % (what, bare_ms, duty_ms, len(bares), len(duties), a.window))
        if a.sim:
            res.notes.append("sim: simulator timings, ratio not judged")
        else:
            res.need(ratio <= a.max, "x%.4f under duty-cycled capture > x%.4g" % (ratio, a.max))
    except KitError as e:
        res.fails.append(str(e))
    return res.emit(a.summary, "SKIP" if a.sim and not res.fails else None)


def check_threads(a):
    """Row --check (cuda/threads; number: the threads CUDA added). The run of
    examples/gpu/cuda_threads exited 0 and its stdout line "cuda_threads:
    before B after A" says the process had more threads after cudaFree(0)
    than before any CUDA call: CUDA's initialisation starts threads (what
    simcuda's driver thread imitates). Judged alike in --sim, on simcuda."""
    res = Result(a.check)
    try:
        run = Run(a.run)
        if not res.need(run.rc == 0, "exit status %d: %s" % (run.rc, run.tail())):
            raise KitError("the program failed")
        m = re.search(r"^cuda_threads: before (\d+) after (\d+)$", run.stdout, re.M)
        if not m:
            raise KitError("no 'cuda_threads: before B after A' line on stdout: %r" % run.stdout[-200:])
        before, after = int(m.group(1)), int(m.group(2))
        res.number = str(after - before)
        res.notes.append("threads %d before any CUDA call, %d after cudaFree(0)" % (before, after))
        res.need(after > before, "no thread started by CUDA's initialisation")
    except KitError as e:
        res.fails.append(str(e))
    return res.emit(a.summary)


def parse_period(window):
    """every=DUR's seconds from a GPUPHASE_WINDOW value (ms, s, m suffixes)."""
    m = re.search(r"every=([0-9.]+)(ms|s|m)?", window)
    if not m:
        raise KitError("no every= in %r" % window)
    return float(m.group(1)) * {"ms": 1e-3, "s": 1.0, "m": 60.0, None: 1.0}[m.group(2)]


# ---------------------------------------------------------------- main

def main(argv):
    ap = argparse.ArgumentParser(prog="gpukit.py", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p, check=True):
        if check:
            p.add_argument("--check", required=True)
        p.add_argument("--summary", required=True)

    p = sub.add_parser("example")
    common(p)
    p.add_argument("--bare", required=True)
    p.add_argument("--run", required=True)
    p.add_argument("--tol", type=float, default=0.01)
    p.add_argument("--program", help="key of TIMING_SPECS (default: the run folder's first dotted part)")
    p.add_argument("--abs-us", type=float, default=20.0,
                   help="absolute allowance beside --tol, microseconds (default 20)")
    p.add_argument("--sim", action="store_true")
    p.set_defaults(fn=check_example)
    p = sub.add_parser("kernels")
    common(p)
    p.add_argument("--bare", required=True)
    p.add_argument("--run", required=True)
    p.add_argument("--kernel", required=True)
    p.add_argument("--expect", type=int, required=True)
    p.add_argument("--allow-reported-drops", action="store_true")
    p.set_defaults(fn=check_kernels)
    p = sub.add_parser("hidden")
    common(p)
    p.add_argument("--bare", required=True)
    p.add_argument("--run", required=True)
    p.add_argument("--kernel")
    p.add_argument("--expect", type=int)
    p.add_argument("--min-kernels", type=int)
    p.add_argument("--expect-hooked", type=int)
    p.set_defaults(fn=check_hidden)
    p = sub.add_parser("nvtx")
    common(p)
    p.add_argument("--bare", required=True)
    p.add_argument("--run", required=True)
    p.add_argument("--expect", required=True, help="NAME=COUNT,... kernels per NVTX range")
    p.set_defaults(fn=check_nvtx)
    p = sub.add_parser("graph")
    common(p)
    p.add_argument("--bare", required=True)
    p.add_argument("--run", required=True)
    p.add_argument("--kernels", required=True, help="K1,K2,...: the kernel of each captured node")
    p.set_defaults(fn=check_graph)
    p = sub.add_parser("train")
    common(p, check=False)
    p.add_argument("--runs", required=True)
    p.add_argument("--skip", type=int, required=True)
    p.add_argument("--iters", type=int, required=True)
    p.add_argument("--max", type=float, default=TRAIN_OVERHEAD_MAX,
                   help="limit of the step-time ratio (default %.2f)" % TRAIN_OVERHEAD_MAX)
    p.set_defaults(fn=check_train)
    p = sub.add_parser("matrix")
    common(p, check=False)
    p.add_argument("--runs", required=True)
    p.add_argument("--max", type=float, default=LAUNCH_OVERHEAD_MAX,
                   help="limit of overhead/launch_bound (default %.2f)" % LAUNCH_OVERHEAD_MAX)
    p.add_argument("--sim", action="store_true")
    p.set_defaults(fn=check_matrix)
    p = sub.add_parser("duty")
    common(p, check=False)
    p.add_argument("--check", choices=sorted(DUTY_ROWS), default="overhead/duty")
    p.add_argument("--runs", required=True)
    p.add_argument("--window", required=True, help="the GPUPHASE_WINDOW value of the duty runs")
    p.add_argument("--seconds", type=float, required=True, help="the length a run was sized to")
    p.add_argument("--max", type=float, default=1.01, help="limit of the ratio (default 1.01)")
    p.add_argument("--sim", action="store_true")
    p.set_defaults(fn=check_duty)
    p = sub.add_parser("threads")
    common(p)
    p.add_argument("--run", required=True, help="the run of examples/gpu/cuda_threads")
    p.set_defaults(fn=check_threads)
    p = sub.add_parser("matrix-env", help="print the matrix: one 'name env...' line per configuration")
    p.set_defaults(fn=print_matrix)
    p = sub.add_parser("split")
    common(p)
    p.add_argument("--scenario", required=True)
    p.add_argument("--run", required=True, help="the run under gpuphase (on the GPU)")
    p.add_argument("--ref", required=True, help="the same program under gpuphase on simcuda")
    p.add_argument("--truth-rc", type=int, help="report_truth_check.py's exit status for --ref")
    p.add_argument("--tol", type=float, default=0.02)
    p.add_argument("--abs-us", type=float, default=20.0)
    p.add_argument("--sim", action="store_true")
    p.set_defaults(fn=check_split)
    p = sub.add_parser("dumpstats")
    p.add_argument("--ops", action="store_true", help="keep per-record detail (small traces only)")
    p.set_defaults(fn=lambda a: dumpstats(sys.stdin, sys.stdout, a.ops))
    p = sub.add_parser("table")
    p.add_argument("summary")
    p.add_argument("--mode", default="?")
    p.set_defaults(fn=table)
    p = sub.add_parser("selftest")
    p.set_defaults(fn=selftest)
    a = ap.parse_args(argv)
    r = a.fn(a)
    if a.cmd in ("table", "selftest", "dumpstats", "matrix-env"):
        return r
    return 0  # checks report through the summary file


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
