#!/usr/bin/env python3
"""attach_lookups_check.py — checks one `gpuphase attach` trace of
tests/e2e/attach_lookups against simcuda's ground truth.

    attach_lookups_check.py DUMP TRUTH REPORT_JSON --iters N
                            --hooked lk_a,lk_b --unhooked lk_c

DUMP: `gpuphase-dump TRACE`; TRUTH: the SIMCUDA_TRUTH file of the run;
REPORT_JSON: `gpuphase-report --format json TRACE`. Checks, for every kernel
named in --hooked and --unhooked:
  * the trace holds exactly N of it, and the truth holds exactly N launches
    of it whose call began inside the capture window (none missed, none
    invented);
  * each one is the truth's own (same correlation id and name, the same
    duration) with its CUPTI runtime API record, also the truth's (CUPTI
    timing present); the API records are the truth's shifted by one
    constant, the CUPTI clock offset the library measured (50 us of
    measurement error allowed against its status record), the GPU records
    by that plus simcuda's GPU clock skew (cupti_clock_offset_ns, 1 us,
    and 1 ppm drift by default: 0..20 us here);
  * --hooked: every one joined to a gpuphase hook record (external
    correlation -> hook_api); --unhooked: none is (the pointer was taken
    before the attach: CUPTI only);
and that the report joins every op (join_coverage 1.0) and counts the
unhooked ones in summary.ops_no_hook. Prints one line per kernel; exit 1
with the reasons on failure.
"""
import argparse
import json
import re
import sys

TOL_NS = 1000          # between two shifts of one constant offset
OFFSET_TOL_NS = 50000  # the measured offset against the status record's
GPU_SKEW_MAX_NS = 20000


def kv(line):
    return dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("truth")
    ap.add_argument("report")
    ap.add_argument("--iters", type=int, required=True)
    ap.add_argument("--hooked", default="")
    ap.add_argument("--unhooked", default="")
    a = ap.parse_args()
    hooked = [k for k in a.hooked.split(",") if k]
    unhooked = [k for k in a.unhooked.split(",") if k]
    errs = []

    strings, kernels, rt_api, ext, hook_ops = {}, [], {}, {}, set()
    win_on = win_off = None
    offset = 0
    for line in open(a.dump):
        t = line.split(" ", 1)[0]
        if t == "string":
            m = re.match(r'string id=(\d+) len=\d+ text="(.*)"$', line.rstrip("\n"))
            if m:
                strings[int(m.group(1))] = m.group(2)
        elif t == "kernel":
            kernels.append(kv(line))
        elif t == "runtime_api":
            d = kv(line)
            rt_api[int(d["corr"])] = d
        elif t == "extcorr":
            d = kv(line)
            if d["kind"] == "5":
                ext[int(d["corr"])] = int(d["ext_id"])
        elif t == "hook_api":
            hook_ops.add(int(kv(line)["corr"]))
        elif t == "window":
            d = kv(line)
            if d["kind"] == "1" and win_on is None:
                win_on = int(d["ts"])
            elif d["kind"] == "2":
                win_off = int(d["ts"])
        elif t == "status":
            d = kv(line)
            if d["kind"] == "3":  # GP_STATUS_CLOCK_CALIBRATED: value = offset added to CUPTI times
                offset = int(d["value"])
    if win_on is None or win_off is None:
        sys.exit("no complete capture window in the trace")

    truth_api, truth_k = {}, {}
    for line in open(a.truth):
        e = json.loads(line)
        if e["type"] == "api":
            truth_api[e["corr"]] = e
        elif e["type"] == "kernel":
            truth_k[e["corr"]] = e

    def which(name):
        for k in hooked + unhooked:
            if k in name:
                return k
        return None

    # the truth: launches of each kernel whose call began inside the window
    want = {k: 0 for k in hooked + unhooked}
    for corr, e in truth_k.items():
        k = which(e["name"])
        api = truth_api.get(e["api_corr"])
        if k and api and win_on <= api["start"] + offset < win_off:
            want[k] += 1

    got, api_shifts, gpu_shifts = {k: 0 for k in hooked + unhooked}, [], []
    with_hook = {k: 0 for k in hooked + unhooked}
    for d in kernels:
        name = strings.get(int(d["name"]), "?")
        k = which(name)
        if not k:
            continue
        got[k] += 1
        corr = int(d["corr"])
        tk = truth_k.get(corr)
        if not tk or which(tk["name"]) != k:
            errs.append("%s corr %d: not the truth's kernel (%s)" % (k, corr, tk and tk["name"]))
            continue
        shift = int(d["start"]) - tk["start"]
        gpu_shifts.append(shift)
        if abs(int(d["end"]) - tk["end"] - shift) > TOL_NS:
            errs.append("%s corr %d: GPU time %s-%s, truth %d-%d" % (k, corr, d["start"], d["end"], tk["start"], tk["end"]))
        api, tapi = rt_api.get(corr), truth_api.get(tk["api_corr"])
        if not api or not tapi:
            errs.append("%s corr %d: no CUPTI runtime API record" % (k, corr))
        elif abs(int(api["dur_ns"]) - (tapi["end"] - tapi["start"])) > TOL_NS:
            errs.append("%s corr %d: API duration %s, truth %d" % (k, corr, api["dur_ns"], tapi["end"] - tapi["start"]))
        else:
            api_shifts.append(int(api["start"]) - tapi["start"])
        if ext.get(corr) in hook_ops:
            with_hook[k] += 1

    for k in hooked + unhooked:
        print("%-11s trace %3d  truth %3d  with a hook %3d  (%s)" %
              (k, got[k], want[k], with_hook[k], "hooked" if k in hooked else "CUPTI only"))
        if got[k] != a.iters or want[k] != a.iters:
            errs.append("%s: %d in the trace, %d in the truth's window, want %d" % (k, got[k], want[k], a.iters))
        if k in hooked and with_hook[k] != got[k]:
            errs.append("%s: %d of %d without a hook record" % (k, got[k] - with_hook[k], got[k]))
        if k in unhooked and with_hook[k]:
            errs.append("%s: %d joined to a hook record, want none" % (k, with_hook[k]))

    if not api_shifts or not gpu_shifts:
        errs.append("no kernel matched the truth")
    elif max(api_shifts) - min(api_shifts) > TOL_NS or abs(api_shifts[0] - offset) > OFFSET_TOL_NS:
        errs.append("CUPTI API times are not the truth's shifted by one offset: %d..%d, offset %d" %
                    (min(api_shifts), max(api_shifts), offset))
    elif max(gpu_shifts) - min(gpu_shifts) > TOL_NS or \
            not 0 <= gpu_shifts[0] - api_shifts[0] <= GPU_SKEW_MAX_NS:
        errs.append("CUPTI GPU times are not the truth's shifted by the offset and the GPU skew: %d..%d, API %d" %
                    (min(gpu_shifts), max(gpu_shifts), api_shifts[0]))
    s = json.load(open(a.report))["summary"]
    if s.get("join_coverage") != 1.0:
        errs.append("report join_coverage %s, want 1.0" % s.get("join_coverage"))
    if s.get("ops_no_hook") != a.iters * len(unhooked):
        errs.append("report ops_no_hook %s, want %d" % (s.get("ops_no_hook"), a.iters * len(unhooked)))
    if errs:
        sys.exit("\n".join(errs[:20]))


if __name__ == "__main__":
    main()
