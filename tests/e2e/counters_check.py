#!/usr/bin/env python3
"""counters_check.py — checks the report's copy-bandwidth and roofline
analyses against simcuda's ground truth (SIMCUDA_TRUTH JSONL). Called by
tests/e2e/test_counters_e2e.sh:

  counters_check.py copies TRUTH REPORT.json
  counters_check.py replay TRUTH REPORT.json N
  counters_check.py roofline COSTMODEL REPORT.json SAMPLES

copies: for every copy kind (and sets) the truth holds, the report's
achieved_gbps = the truth's bytes / GPU time (within 1 %: CUPTI's clock
drift and the JSON's 6 significant digits), its count and bytes exact, and
share_of_peak = achieved x traffic / the H200 row's peak (PCIe 5.0 x16
63 GB/s each way; device memory 4800 GB/s, twice the bytes for a
device-to-device copy).
replay: N launches replayed for counters in the truth, the report's
ops_replayed and replayed_ns equal to them, and every kernel operator's
count and execute time those of its launches that were not replayed: a
replayed launch is in no phase sum.
roofline: every kernel of the cost model has SAMPLES samples, its
achieved GB/s and GFLOP/s within 5 % of the model's bytes and FLOPs over
its time, the bound the model makes (memory / compute when within 60 % of
that roof, else latency) in the roofline and on its operator, and the
verdict's advice saying it.
Prints one line per check; exit status 1 if any failed.
"""
import json
import re
import sys

fails = 0


def check(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails += 1


def close(got, want, rel=0.01):
    return got is not None and abs(got - want) <= rel * abs(want)


def truth(path):
    return [json.loads(line) for line in open(path) if line.strip()]


def analysis(report, name):
    for item in report["analyses"]:
        if name in item:
            return item[name]
    return None


PEAK = {"HtoD": (63.0, 1), "DtoH": (63.0, 1), "DtoD": (4800.0, 2), "memset": (4800.0, 1)}


def copies(truth_path, report_path):
    ev = truth(truth_path)
    rep = json.load(open(report_path))
    rows = analysis(rep, "copy_bandwidth")
    check(rows is not None, "the report has a copy_bandwidth analysis")
    if rows is None:
        return
    want = {}
    for e in ev:
        if e["type"] not in ("memcpy", "memset"):
            continue
        k = e["kind"] if e["type"] == "memcpy" else "memset"
        w = want.setdefault(k, [0, 0, 0])
        w[0] += 1
        w[1] += e["bytes"]
        w[2] += e["end"] - e["start"]
    for k, (n, b, t) in sorted(want.items()):
        name = "memset" if k == "memset" else "memcpy " + k
        row = [r for r in rows if r["name"] == name]
        check(len(row) == 1, f"{name}: one row")
        if len(row) != 1:
            continue
        r = row[0]
        check(r["count"] == n and r["bytes"] == b, f"{name}: {r['count']} ops, {r['bytes']} bytes (truth {n}, {b})")
        g = b / t
        check(close(r["achieved_gbps"], g), f"{name}: achieved {r['achieved_gbps']} GB/s (truth {g:.4f})")
        peak, traffic = PEAK[k]
        check(r["link_peak_gbps"] == peak and r["traffic_per_byte"] == traffic and r["peak_source"] == "H200",
              f"{name}: link peak {r['link_peak_gbps']} GB/s x{r['traffic_per_byte']} from {r['peak_source']}")
        check(close(r["share_of_peak"], g * traffic / peak),
              f"{name}: share of peak {r['share_of_peak']} (truth {g * traffic / peak:.5f})")
    check(len(rows) == len(want), f"{len(rows)} rows for {len(want)} kinds in the truth")


def plain(mangled):
    """_Z8stream_kPKfPfi -> stream_k (simcuda's plain names)"""
    m = re.match(r"_Z(\d+)", mangled)
    return mangled[len(m.group(0)):len(m.group(0)) + int(m.group(1))] if m else mangled


def replay(truth_path, report_path, want):
    """want replayed launches (simcuda's truth says "replay"); none of them
    in any operator's count or execute time, all of them in ops_replayed"""
    ev = truth(truth_path)
    rep = json.load(open(report_path))
    kernels = [e for e in ev if e["type"] == "kernel"]
    replayed = [e for e in kernels if e.get("replay", 0) > 0]
    check(len(replayed) == want, f"{len(replayed)} launches replayed in the truth (want {want})")
    s = rep["summary"]
    check(s.get("ops_replayed") == len(replayed),
          f"summary ops_replayed {s.get('ops_replayed')} = the truth's {len(replayed)}")
    rns = sum(e["end"] - e["start"] for e in replayed)
    check(close(s.get("replayed_ns", 0), rns), f"summary replayed_ns {s.get('replayed_ns')} (truth {rns})")
    ops = {o["name"]: o for o in rep["operators"]}
    for name in sorted({plain(e["name"]) for e in kernels}):
        mine = [e for e in kernels if plain(e["name"]) == name and not e.get("replay")]
        o = ops.get(name)
        check(o is not None, f"{name}: an operator")
        if o is None:
            continue
        ex = sum(e["end"] - e["start"] for e in mine)
        check(o["count"] == len(mine), f"{name}: count {o['count']} = its launches not replayed ({len(mine)})")
        check(close(o["execute_ns"], ex), f"{name}: execute {o['execute_ns']} ns = theirs ({ex} ns)")
    tot = sum(o["execute_ns"] for o in rep["operators"])
    check(close(s["execute_ns"], tot), f"summary execute {s['execute_ns']} = the operators' sum {tot}")


def model(path):
    """the cost model's kernel work and device peaks"""
    peaks = {"peak_gflops": 66900.0, "peak_gbps": 4800.0}
    kern = {}
    for line in open(path):
        w = line.split("#")[0].split()
        if len(w) == 2 and w[0] in peaks:
            peaks[w[0]] = float(w[1])
        elif len(w) > 2 and w[0] == "kernel":
            kern[w[1]] = {k: float(v) for k, v in (x.split("=") for x in w[2:])}
    return peaks, kern


def roofline(model_path, report_path, samples):
    """every sampled kernel's achieved rates within 5 % of the cost model's
    work / time, its bound the one the model makes (a roof within 60 %)"""
    peaks, kern = model(model_path)
    rep = json.load(open(report_path))
    roof = analysis(rep, "roofline")
    check(roof is not None and roof["available"], "the report has counters")
    if not roof:
        return
    d = roof["devices"][0]
    check(d["peak_source"] == "counters" and close(d["peak_gbps"], peaks["peak_gbps"], 1e-6) and
          close(d["peak_fp32_gflops"], peaks["peak_gflops"], 1e-6),
          f"device peaks {d['peak_gbps']} GB/s, {d['peak_fp32_gflops']} GFLOP/s from the counters")
    ops = {o["name"]: o for o in rep["operators"]}
    for o in roof["operators"]:
        k = kern[o["name"]]
        t = k["exec_ns"]
        gbps = k.get("bytes", 0) / t
        gflops = (k.get("flops", 0) + k.get("flops_fp64", 0) + k.get("flops_fp16", 0)) / t
        mem, comp = gbps / peaks["peak_gbps"], k.get("flops", 0) / t / peaks["peak_gflops"]
        want = "memory" if mem >= 0.6 and mem >= comp else "compute" if comp >= 0.6 else "latency"
        n = o["name"]
        check(o["samples"] == samples and len(o["replayed_ops"]) == samples,
              f"{n}: {o['samples']} samples, replayed ops {o['replayed_ops']}")
        check(close(o["achieved_gbps"], gbps, 0.05) if gbps else o["achieved_gbps"] < 1,
              f"{n}: achieved {o['achieved_gbps']} GB/s, model {gbps:.3f}")
        check(close(o["achieved_gflops"], gflops, 0.05) if gflops else o["achieved_gflops"] < 1,
              f"{n}: achieved {o['achieved_gflops']} GFLOP/s, model {gflops:.3f}")
        check(o["bound"] == want, f"{n}: {o['bound']}-bound, the model makes it {want}-bound")
        op = ops.get(n)
        check(op is not None and op.get("bound") == want, f"{n}: the operator table says bound {op and op.get('bound')}")
        # a latency-bound kernel whose grid cannot fill the device: that named as its cause
        lc = op.get("launch_config") if op else None
        idle = want == "latency" and lc is not None and lc["blocks"] < lc["device_sms"]
        check((o.get("small_grid") is not None) == idle, f"{n}: small_grid {o.get('small_grid')}, launch_config {lc}")
        if n == "tiny_k":  # <<<1, 1>>> on simcuda's 132 SMs
            check(o.get("small_grid") == {"blocks": 1, "device_sms": 132}, f"{n}: small_grid {o.get('small_grid')}")
        if op and op["verdict"] == "compute-bound":
            check(op["advice"].startswith(want + "-bound by its counters" if want != "latency" else "near neither roof"),
                  f"{n}: the verdict's advice uses it: {op['advice']}")
    check(len(roof["operators"]) == len(kern), f"{len(roof['operators'])} kernels with counters, {len(kern)} in the model")


if __name__ == "__main__":
    if sys.argv[1] == "copies":
        copies(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "replay":
        replay(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "roofline":
        roofline(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        print("usage: counters_check.py copies TRUTH REPORT.json | replay TRUTH REPORT.json N | roofline MODEL REPORT.json N")
        sys.exit(2)
    sys.exit(1 if fails else 0)
