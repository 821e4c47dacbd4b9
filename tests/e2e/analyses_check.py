#!/usr/bin/env python3
"""analyses_check.py — checks the report's analyses sections (stages, trends,
host conditions, stability) against simcuda's ground truth (SIMCUDA_TRUTH
JSONL). Called by tests/e2e/test_analyses_e2e.sh:

  analyses_check.py graphs TRUTH REPORT.txt REPORT.json
  analyses_check.py run    TRUTH REPORT.txt HOOK_RECORDS [REPORT.json]
  analyses_check.py host   REPORT.txt
  analyses_check.py window TRUTH REPORT.txt SKIP

Every expected number is derived here from the truth file (or from the
scenario program's construction, stated where used); tolerances: durations
within 1 % plus the report's print rounding, counts exact. Prints one line per
check; exit status 1 if any failed.
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


UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def ns(text):
    """'45.4us' -> 45400.0"""
    m = re.fullmatch(r"(-?[0-9.]+)(ns|us|ms|s)", text)
    if not m:
        raise ValueError("not a duration: " + text)
    return float(m.group(1)) * UNIT[m.group(2)]


def close(got, want, rel=0.01, printed=None):
    """got within rel of want, plus half a unit of the printed last digit"""
    slack = 0.0
    if printed:
        m = re.fullmatch(r"-?[0-9]+(?:\.([0-9]+))?(ns|us|ms|s)", printed)
        dec = len(m.group(1) or "")
        slack = 0.5 * 10 ** (-dec) * UNIT[m.group(2)]
    return abs(got - want) <= rel * abs(want) + slack


def truth(path):
    return [json.loads(line) for line in open(path) if line.strip()]


def plain(mangled):
    """_Z9layer_addPji -> layer_add (same rule as simcuda's plain names)"""
    m = re.match(r"_Z(\d+)", mangled)
    return mangled[len(m.group(0)):len(m.group(0)) + int(m.group(1))] if m else mangled


def section(text, title):
    """lines of a report section (title line up to the next blank line)"""
    lines = text.splitlines()
    try:
        i = lines.index(title)
    except ValueError:
        return []
    out = []
    for line in lines[i + 1:]:
        if not line.strip():
            break
        out.append(line)
    return out


def graphs(truth_path, txt_path, json_path):
    t = truth(truth_path)
    txt = open(txt_path).read()
    rep = json.load(open(json_path))
    gk = [e for e in t if e["type"] == "kernel" and "graph" in e]
    launches = [e for e in t if e["type"] == "api" and e["name"].startswith("cudaGraphLaunch")]
    sec = section(txt, "CUDA graphs")
    check(len(sec) > 0, "report has a CUDA graphs section")
    if not sec:
        return
    # the summary takes two lines (160 columns): graph ids and counts, then times
    m = re.match(r"\s+graph (\d+) \(instantiated as graph (\d+)\): (\d+) launches, (\d+) nodes, (\d+) kernels;\s+"
                 r"cudaGraphLaunch host time (\S+) \((\S+) per launch, charged once per launch\); "
                 r"GPU time (\S+) \((\S+) per launch\)", " ".join(sec[:2]))
    check(m is not None, "graph summary lines parse: " + " ".join(sec[:2]).strip()[:100])
    if not m:
        return
    orig = {e["graph_orig"] for e in gk}
    execg = {e["graph"] for e in gk}
    corrs = {e["corr"] for e in gk}
    nodes = {e["node_orig"] for e in gk}
    check(len(orig) == 1 and int(m.group(1)) in orig, "captured graph id %s (truth %s)" % (m.group(1), orig))
    check(int(m.group(2)) in execg, "instantiated graph id %s (truth %s)" % (m.group(2), execg))
    check(int(m.group(3)) == len(corrs) == len(launches),
          "launches %s = distinct launch correlation ids %d = cudaGraphLaunch calls %d"
          % (m.group(3), len(corrs), len(launches)))
    check(int(m.group(4)) == len(nodes), "nodes %s (truth %d)" % (m.group(4), len(nodes)))
    check(int(m.group(5)) == len(gk), "kernels %s (truth %d)" % (m.group(5), len(gk)))
    host = sum(e["end"] - e["start"] for e in launches)
    check(close(ns(m.group(6)), host, printed=m.group(6)),
          "cudaGraphLaunch host time %s = truth sum of launch calls %.1fus (once per launch)" % (m.group(6), host / 1e3))
    gpu = sum(e["end"] - e["start"] for e in gk)
    check(close(ns(m.group(8)), gpu, printed=m.group(8)), "graph GPU time %s (truth %.1fus)" % (m.group(8), gpu / 1e3))
    # nodes: the program captures layer_add, layer_mul, layer_xor under NVTX
    # ranges layer0, layer1, layer2 (examples/graph_replay.cu)
    want_nvtx = {"layer_add": "layer0", "layer_mul": "layer1", "layer_xor": "layer2"}
    rows = {}
    for line in sec[3:]:
        f = line.split()
        if len(f) >= 8 and f[0].isdigit():
            rows[int(f[0])] = f
    check(set(rows) == nodes, "node rows %s = captured node ids %s" % (sorted(rows), sorted(nodes)))
    for node in sorted(nodes):
        ks = [e for e in gk if e["node_orig"] == node]
        f = rows.get(node)
        if not f:
            continue
        name = plain(ks[0]["name"])
        check(f[1] == name, "node %d kernel %s (truth %s)" % (node, f[1], name))
        check(f[2] == want_nvtx.get(name), "node %d captured under NVTX %s (program: %s)" % (node, f[2], want_nvtx.get(name)))
        check("main" in f[3], "node %d call site %s is in main()" % (node, f[3]))
        check(int(f[-3]) == len(ks), "node %d count %s (truth %d)" % (node, f[-3], len(ks)))
        ex = sum(e["end"] - e["start"] for e in ks)
        check(close(ns(f[-2]), ex, printed=f[-2]), "node %d execute %s (truth %.1fus)" % (node, f[-2], ex / 1e3))
    # the main table charges the launch once per launch: the graph kernels'
    # launch sum equals the cudaGraphLaunch calls' time (with CUPTI's own
    # cost in them: launch_raw_ns where the report took it out of launch)
    names = {plain(e["name"]) for e in gk}
    launch = sum(o.get("launch_raw_ns", o["launch_ns"]) for o in rep["operators"] if o["name"] in names)
    check(close(launch, host), "operator table: graph kernels' launch %.1fus = cudaGraphLaunch time %.1fus"
          % (launch / 1e3, host / 1e3))
    # the same graph in --format json (docs/report-json.md cuda_graphs[])
    jg = rep.get("analyses", [{}])[0].get("cuda_graphs", [])
    check(len(jg) == 1, "json: one captured graph (got %d)" % len(jg))
    if jg:
        g = jg[0]
        check(g["graph"] in orig and g["exec_graph"] in execg, "json: graph ids %s/%s" % (g["graph"], g["exec_graph"]))
        check((g["launches"], g["nodes"], g["kernels"]) == (len(launches), len(nodes), len(gk)),
              "json: launches/nodes/kernels %s (truth %s)" % ((g["launches"], g["nodes"], g["kernels"]),
                                                              (len(launches), len(nodes), len(gk))))
        check(close(g["launch_host_ns"], host), "json: cudaGraphLaunch host time %d (truth %d)" % (g["launch_host_ns"], host))
        check(close(g["gpu_ns"], gpu), "json: graph GPU time %d (truth %d)" % (g["gpu_ns"], gpu))
        for n in g["node_items"]:
            ks = [e for e in gk if e["node_orig"] == n["node"]]
            name = plain(ks[0]["name"]) if ks else None
            check(ks and n["kernel"] == name and n["nvtx"] == want_nvtx.get(name) and n["count"] == len(ks)
                  and close(n["execute_ns"], sum(e["end"] - e["start"] for e in ks))
                  and "main" in (n["callsite"] or ""),
                  "json: node %d %s under %s, %d calls (truth %s, %d)" % (n["node"], n["kernel"], n["nvtx"], n["count"],
                                                                          name, len(ks)))


def fit_slope(ys):
    n = len(ys)
    mx = (n - 1) / 2.0
    my = sum(ys) / n
    sxy = sum((i - mx) * (y - my) for i, y in enumerate(ys))
    sxx = sum((i - mx) ** 2 for i in range(n))
    return sxy / sxx


def nearest_rank(vals, q):
    v = sorted(vals)
    import math
    return v[max(0, min(len(v) - 1, math.ceil(q * len(v)) - 1))]


def run(truth_path, txt_path, hook_records, json_path=None):
    t = truth(truth_path)
    txt = open(txt_path).read()
    ks = [e for e in t if e["type"] == "kernel"]
    api = {e["corr"]: e for e in t if e["type"] == "api"}
    byname = {}
    for e in sorted(ks, key=lambda e: e["start"]):
        byname.setdefault(plain(e["name"]), []).append(e)
    tr = section(txt, "Trends")
    # drift: drift_k only, slope from the truth's execute times in order
    drift = [l for l in tr if re.match(r"\s+\S+: \S+ per call", l)]
    check(len(drift) == 1 and drift[0].split(":")[0].strip() == "drift_k",
          "drifting: exactly drift_k (got %s)" % [l.split(":")[0].strip() for l in drift])
    if drift:
        m = re.match(r"\s+drift_k: (\S+) per call", drift[0])
        want = fit_slope([e["end"] - e["start"] for e in byname["drift_k"]])
        check(m and close(ns(m.group(1)), want, 0.02, m.group(1)),
              "drift_k slope %s per call (truth fit %.1fns)" % (m.group(1) if m else "?", want))
    tails = [l for l in tr if " p99 " in l]
    check(len(tails) == 1 and tails[0].strip().startswith("tail_k:"),
          "long tail: exactly tail_k (got %s)" % [l.strip()[:20] for l in tails])
    if tails:
        m = re.search(r"p99 (\S+) vs p50 (\S+)", tails[0])
        ex = [e["end"] - e["start"] for e in byname["tail_k"]]
        p99, p50 = nearest_rank(ex, 0.99), nearest_rank(ex, 0.5)
        check(m and close(ns(m.group(1)), p99, printed=m.group(1)) and close(ns(m.group(2)), p50, printed=m.group(2)),
              "tail_k p99 %s p50 %s (truth %.1fus, %.1fus)" % (m.group(1), m.group(2), p99 / 1e3, p50 / 1e3))
    # outliers: the iterations whose tail_k ran the big grid are explained by
    # tail_k; iteration number = device syncs finished before its launch call
    syncs = sorted(e["end"] for e in t if e["type"] == "api" and e["name"] == "cudaDeviceSynchronize")
    big = [e for e in byname["tail_k"] if e["end"] - e["start"] > 10 * p50]
    check(len(big) == 2, "truth: two big tail_k calls (program: TAIL_A, TAIL_B)")
    for e in big:
        it = sum(1 for s in syncs if s <= api[e["api_corr"]]["start"])
        line = [l for l in tr if re.match(r"\s+iteration %d: " % it, l)]
        check(len(line) == 1 and "slow: tail_k +" in line[0],
              "outlier iteration %d explained by tail_k first (%s)" % (it, line[0].strip()[:90] if line else "missing"))
    # warm-up: the iterations that ran warm_k (the program's first WARM ones)
    st = section(txt, "Stages")
    names = [l.split()[0] for l in st if not l.strip().startswith("window")]
    check(names[-4:] == ["load", "warm-up", "steady", "tear-down"] and names[0] == "start-up",
          "stages start-up, load, warm-up, steady, tear-down (got %s)" % names)
    wl = [l for l in st if l.split()[0] == "warm-up"]
    nwarm = len(byname["warm_k"])
    check(wl and "(%d iterations)" % nwarm in wl[0], "warm-up = %d iterations (%s)" % (nwarm, wl[0].strip() if wl else "-"))
    # load: first CUDA call -> first kernel launch call, dominated by copies or allocations
    # the program's first CUDA call is its first cudaMalloc (the library's own
    # queries during its start, inside that call, are not traced: activity is
    # enabled after them)
    first_api = min(e["start"] for e in t if e["type"] == "api" and e["name"] == "cudaMalloc")
    first_k = min(api[e["api_corr"]]["start"] for e in ks)
    ll = [l for l in st if l.split()[0] == "load"]
    if ll:
        f = ll[0].split()
        check(close(ns(f[1]), first_k - first_api, 0.02, f[1]),
              "load %s (truth %.2fms)" % (f[1], (first_k - first_api) / 1e6))
        dom = ll[0].split("dominated by: ")[1]
        check(dom.startswith("memcpy HtoD") or dom.startswith("cudaMalloc"),
              "load dominated by host-to-device copies or allocations: " + dom)
    win = [l for l in st if l.strip().startswith("window")]
    check(win and all(s in win[0] for s in ("load", "warm-up", "steady", "tear-down")),
          "window (whole run) covered load, warm-up, steady, tear-down")
    # self-overhead: hooked calls = hook records in the trace
    hs = section(txt, "Host conditions")
    so = [l for l in hs if "self-overhead" in l]
    m = re.search(r"= (\d+) hooked calls x (\d+)ns", so[0]) if so else None
    check(m and int(m.group(1)) == int(hook_records) and int(m.group(2)) > 0,
          "self-overhead from %s hooked calls (trace has %s hook records) x measured cost"
          % (m.group(1) if m else "?", hook_records))
    if not json_path:
        return
    # the same analyses in --format json (docs/report-json.md analyses[])
    a = json.load(open(json_path))["analyses"][0]
    jd = a["trends"]["drifting"]
    want = fit_slope([e["end"] - e["start"] for e in byname["drift_k"]])
    check(len(jd) == 1 and jd[0]["name"] == "drift_k" and close(jd[0]["slope_ns_per_call"], want, 0.02),
          "json: drift_k slope %s (truth fit %.1fns)" % (jd[0]["slope_ns_per_call"] if jd else "?", want))
    jt = a["trends"]["long_tail"]
    ex = [e["end"] - e["start"] for e in byname["tail_k"]]
    p99, p50 = nearest_rank(ex, 0.99), nearest_rank(ex, 0.5)
    check(len(jt) == 1 and jt[0]["name"] == "tail_k" and close(jt[0]["execute_p99_ns"], p99)
          and close(jt[0]["execute_p50_ns"], p50), "json: tail_k p99/p50 (truth %d/%d)" % (p99, p50))
    jo = {o["iter"]: o for o in a["trends"]["outlier_iterations"]}
    for e in big:
        it = sum(1 for s in syncs if s <= api[e["api_corr"]]["start"])
        o = jo.get(it)
        check(o is not None and o["slow_operators"] and o["slow_operators"][0]["name"] == "tail_k",
              "json: outlier iteration %d explained by tail_k first" % it)
    js = {i["name"]: i for i in a["stages"]["items"]}
    check(js.get("warm-up", {}).get("count") == nwarm and a["stages"]["settled_after_iterations"] == nwarm,
          "json: warm-up = %d iterations" % nwarm)
    check("load" in js and close(js["load"]["time_ns"], first_k - first_api, 0.02),
          "json: load %s ns (truth %d)" % (js.get("load", {}).get("time_ns"), first_k - first_api))
    so = a["host_conditions"]["self_overhead"]
    check(so["hooked_calls"] == int(hook_records), "json: %d hooked calls (trace has %s)" % (so["hooked_calls"], hook_records))


def host(txt_path):
    txt = open(txt_path).read()
    hs = section(txt, "Host conditions")
    m = re.search(r"host CPU busy: mean ([0-9.]+)%", "\n".join(hs))
    check(m and float(m.group(1)) > 50.0, "busy host (competing spinners): mean %s%% > 50%%" % (m.group(1) if m else "?"))
    flagged = [l for l in hs if "launch numbers taken while the host was > 50% busy" in l]
    check(len(flagged) >= 1, "launch numbers flagged as taken on a busy host (%d operators)" % len(flagged))


def window(truth_path, txt_path, skip):
    """GPUPHASE_WINDOW=skip=SKIP,iters=...: the stages are taken over the
    window only (what came before it is not captured, and said so); the big
    tail_k inside the window is still explained"""
    t = truth(truth_path)
    txt = open(txt_path).read()
    st = section(txt, "Stages")
    names = [l.split()[0] for l in st if not l.strip().startswith(("window", "over the", "not captured"))]
    check(names[:1] == ["steady"] and not {"before", "load", "start-up"} & set(names),
          "windowed stages: steady, ... over the window only (got %s)" % names)
    nc = [l for l in st if l.strip().startswith("not captured:")]
    check(nc and "before the first window (the run up to iteration %s" % skip in nc[0],
          "not captured: the run before the window, up to iteration " + skip)
    win = [l for l in st if l.strip().startswith("window")]
    check(win and "capture began at iteration %s of the run" % skip in win[0], "window line names iteration " + skip)
    api = {e["corr"]: e for e in t if e["type"] == "api"}
    syncs = sorted(e["end"] for e in t if e["type"] == "api" and e["name"] == "cudaDeviceSynchronize")
    tails = [e for e in t if e["type"] == "kernel" and plain(e["name"]) == "tail_k"]
    small = min(e["end"] - e["start"] for e in tails)
    tr = section(txt, "Trends")
    # the window holds iterations skip .. skip + 10 (the capture starts at the
    # skip-th mark and stops at the (skip + 10)-th)
    for e in tails:
        if e["end"] - e["start"] <= 10 * small:
            continue
        it = sum(1 for s in syncs if s <= api[e["api_corr"]]["start"])
        inside = int(skip) <= it <= int(skip) + 10
        line = [l for l in tr if re.match(r"\s+iteration %d: " % it, l)]
        if inside:
            check(len(line) == 1 and "slow: tail_k +" in line[0], "tail_k iteration %d (in the window) explained" % it)
        else:
            check(not line, "tail_k iteration %d (outside the window) not explained" % it)
    listed = [int(re.match(r"\s+iteration (\d+)", l).group(1)) for l in tr if re.match(r"\s+iteration \d+: ", l)]
    check(all(int(skip) <= i <= int(skip) + 10 for i in listed), "explained outliers all in the window: %s" % listed)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "graphs" and len(sys.argv) == 5:
        graphs(*sys.argv[2:])
    elif mode == "run" and len(sys.argv) in (5, 6):
        run(*sys.argv[2:])
    elif mode == "window" and len(sys.argv) == 5:
        window(*sys.argv[2:])
    elif mode == "host" and len(sys.argv) == 3:
        host(sys.argv[2])
    else:
        print(__doc__)
        sys.exit(2)
    sys.exit(1 if fails else 0)
