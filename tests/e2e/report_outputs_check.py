#!/usr/bin/env python3
"""report_outputs_check.py — structural checks of gpuphase-report's outputs,
called by tests/e2e/test_report_outputs.sh for every trace it produces:

  report_outputs_check.py json   REPORT.json NTRACES [REPORT.txt]
  report_outputs_check.py chrome TRACE.json REPORT.json
  report_outputs_check.py html   PAGE.html REPORT.json
  report_outputs_check.py csv    REPORT.csv REPORT.json

json: strict JSON (NaN / Infinity rejected), schema 2, every field that
docs/report-json.md documents as always present, with its type, and the
identities the docs state (total = launch + execute + sync, coverage in
[0, 1], shares in [0, 1], one analyses item per trace, stage shares summing
to at most 1, a graph's node counts summing to its kernels, ...). With the
text report: the analyses name the same stages, drifting / long-tail
operators, outlier iterations and graphs as the text sections.
chrome: every event has ph / ts / pid / tid; X events have dur >= 0; flow
starts and finishes pair up one to one; host threads and GPU streams are on
different processes; every GPU thread is named "stream N"; one GPU event per
op with GPU times; NVTX B/E balance per thread.
html: self-contained, one section per analysis that has content.
csv: the documented header, one row per JSON operator, same numbers.
Prints one line per failed check; exit status 1 if any failed.
"""
import csv
import json
import re
import sys

fails = 0


def check(ok, what):
    global fails
    if not ok:
        print("FAIL " + what)
        fails += 1
    return ok


def strict_load(path):
    def bad(name):
        raise ValueError("not JSON: " + name)
    with open(path) as f:
        return json.load(f, parse_constant=bad)


INT = "integer"
NUM = "number"


def is_type(v, t):
    if t == INT:
        return isinstance(v, int) and not isinstance(v, bool)
    if t == NUM:
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    return isinstance(v, t)


def fields(obj, spec, where):
    """spec: {name: type or (type, None) for nullable}"""
    if not check(isinstance(obj, dict), "%s is an object" % where):
        return False
    ok = True
    for k, t in spec.items():
        nullable = isinstance(t, tuple)
        t = t[0] if nullable else t
        if not check(k in obj, "%s has %s" % (where, k)):
            ok = False
            continue
        v = obj[k]
        if nullable and v is None:
            continue
        ok &= check(is_type(v, t), "%s.%s is %s (got %r)" % (where, k, getattr(t, "__name__", t), v))
    return ok


SUMMARY = {k: INT for k in (
    "wall_ns", "gpu_busy_ns", "gpu_idle_ns", "gpu_busy_sum_ns", "host_api_ns", "launch_ns", "queue_ns",
    "execute_ns", "sync_ns", "total_ns", "sync_unattributed_ns", "sync_unattributed_calls", "covered_ns",
    "unattributed_ns", "records", "dropped_records", "ops", "ops_joined", "ops_no_api", "ops_no_gpu",
    "ops_end_missing", "hooks_unjoined", "api_unjoined", "launches_captured", "truncated_bytes",
    "gpu_busy_late_intervals")}
SUMMARY.update({"join_coverage": NUM, "complete": bool, "cupti_unavailable": bool, "dropped": dict,
                "sync_calls": list, "verdict": str, "verdict_reason": str, "advice": str})
OPERATOR = {k: INT for k in (
    "count", "launch_ns", "queue_ns", "execute_ns", "sync_ns", "total_ns", "execute_mean_ns", "execute_p50_ns",
    "execute_p95_ns", "execute_p99_ns", "execute_max_ns", "sync_calls", "no_api", "no_gpu")}
OPERATOR.update({"name": str, "long_name": str, "launch_share": NUM, "execute_share": NUM, "sync_share": NUM,
                 "verdict": str, "verdict_reason": str, "advice": str})
VERDICTS = {"sync-bound", "launch-bound", "compute-bound", "transfer-bound", "balanced", "minor", "none"}
ITER = {"iter": INT, "start_ns": INT, "duration_ns": INT, "ops": INT, "launch_ns": INT, "queue_ns": INT,
        "execute_ns": INT, "sync_ns": INT, "outlier": bool, "open": bool}
STAGE = {"name": str, "start_ns": INT, "end_ns": INT, "time_ns": INT, "share": NUM, "count": INT,
         "dominant_operator": (dict, None), "dominant_call": (dict, None), "dominated_by": str,
         "window_ns": INT, "window_share": NUM, "covered": bool}
HOST = {"sampled": bool, "samples": INT, "busy_threshold_pct": NUM, "busy_launch_operators": list,
        "self_overhead": dict}
HOST_SAMPLED = {"host_cpu_busy_mean_pct": NUM, "host_cpu_busy_max_pct": NUM, "process_cpu_mean_pct": NUM,
                "busy_time_share": NUM}
OVERHEAD = {"hooked_calls": INT, "hook_cost_ns": (INT, None), "cupti_buffer_ns": INT, "estimate_ns": (NUM, None),
            "window_share": (NUM, None), "warning": bool, "warn_above_pct": NUM, "dropped_records": INT}
DRIFT = {"name": str, "calls": INT, "slope_ns_per_call": NUM, "drift": NUM, "fitted_first_ns": NUM,
         "fitted_last_ns": NUM, "r2": NUM}
TAIL = {"name": str, "calls": INT, "execute_p50_ns": INT, "execute_p99_ns": INT, "ratio": NUM}
OUTLIER = {"iter": INT, "duration_ns": INT, "over_p50_ns": INT, "slow_operators": list, "unexplained_ns": INT}
SLOW = {"name": str, "ns": INT, "usual_ns": INT, "excess_ns": INT}
GRAPH = {"graph": INT, "exec_graph": INT, "launches": INT, "nodes": INT, "kernels": INT, "launch_host_ns": INT,
         "launch_host_per_launch_ns": INT, "gpu_ns": INT, "gpu_per_launch_ns": INT, "node_items": list}
NODE = {"node": INT, "kernel": str, "captured": bool, "nvtx": (str, None), "callsite": (str, None),
        "thread": (INT, None), "count": INT, "execute_ns": INT}


def in01(v, where, eps=1e-6):
    check(-eps <= v <= 1 + eps, "%s = %r is in [0, 1]" % (where, v))


def section(text, title):
    lines = text.splitlines()
    if title not in lines:
        return []
    out = []
    for line in lines[lines.index(title) + 1:]:
        if not line.strip():
            break
        out.append(line)
    return out


def check_summary(s, where, merged=False):
    if not fields(s, SUMMARY, where):
        return
    check(s["total_ns"] == s["launch_ns"] + s["execute_ns"] + s["sync_ns"], where + ": total = launch + execute + sync")
    in01(s["join_coverage"], where + ".join_coverage")
    check(s["dropped_records"] == sum(s["dropped"].get(k, 0) for k in ("ring", "cupti", "write")),
          where + ": dropped_records = ring + cupti + write")
    if not merged:  # merged traces: sums over traces, each with its own wall
        check(s["covered_ns"] + s["unattributed_ns"] == s["wall_ns"] or s["wall_ns"] == 0,
              where + ": covered + unattributed = wall")
    check(s["verdict"] in VERDICTS, where + ": verdict %r" % s["verdict"])


def check_analyses(a, d, where):
    if not fields(a, {"path": str, "stages": dict, "host_conditions": dict, "trends": dict, "cuda_graphs": list},
                  where):
        return
    st = a["stages"]
    if fields(st, {"named_by": str, "traced_ns": INT, "settled_after_iterations": INT, "items": list,
                   "window": dict}, where + ".stages"):
        check(st["named_by"] in ("run", "nvtx"), where + ".stages.named_by %r" % st["named_by"])
        total = 0.0
        for i, it in enumerate(st["items"]):
            w = "%s.stages.items[%d]" % (where, i)
            if not fields(it, STAGE, w):
                continue
            check(it["start_ns"] <= it["end_ns"], w + ": start <= end")
            in01(it["share"], w + ".share")
            in01(it["window_share"], w + ".window_share")
            for k in ("dominant_operator", "dominant_call"):
                if it[k] is not None:
                    fields(it[k], {"name": str, "ns": INT}, w + "." + k)
            total += it["share"]
            if st["named_by"] == "run":
                check(it["time_ns"] == it["end_ns"] - it["start_ns"], w + ": time = end - start")
        if st["named_by"] == "run":
            check(total <= 1 + 1e-4, where + ".stages: shares sum to %.4f <= 1" % total)
            starts = [it.get("start_ns", 0) for it in st["items"]]
            check(starts == sorted(starts), where + ".stages: items in time order")
        win = st["window"]
        if fields(win, {"wall_ns": INT, "covered": list, "began_at_iteration": (INT, None)}, where + ".stages.window"):
            names = [it.get("name") for it in st["items"]]
            check(set(win["covered"]) <= set(names), where + ".stages.window.covered names stages")
            check(win["covered"] == [it["name"] for it in st["items"] if it.get("covered")],
                  where + ".stages.window.covered = the items with covered true")
    h = a["host_conditions"]
    if fields(h, HOST, where + ".host_conditions"):
        if h["sampled"]:
            fields(h, HOST_SAMPLED, where + ".host_conditions")
            in01(h.get("busy_time_share", 0), where + ".host_conditions.busy_time_share")
        for i, o in enumerate(h["busy_launch_operators"]):
            w = "%s.host_conditions.busy_launch_operators[%d]" % (where, i)
            if fields(o, {"name": str, "launch_calls": INT, "launch_calls_busy": INT, "launch_ns": INT,
                          "launch_busy_ns": INT}, w):
                check(o["launch_calls_busy"] <= o["launch_calls"] and 2 * o["launch_busy_ns"] >= o["launch_ns"],
                      w + ": busy calls <= calls, busy launch >= half")
        so = h["self_overhead"]
        if fields(so, OVERHEAD, where + ".host_conditions.self_overhead"):
            if so["hook_cost_ns"] is not None:
                want = (so["hooked_calls"] * so["hook_cost_ns"] + so["cupti_buffer_ns"] +
                        so.get("cupti_in_calls_ns", so.get("cupti_instrumentation_ns", 0)) +
                        so.get("calibration_ns", 0))
                check(so["estimate_ns"] is not None and abs(so["estimate_ns"] - want) <= 1e-5 * want + 1,
                      where + ": self-overhead estimate = hooked calls x hook cost + CUPTI time")
    tr = a["trends"]
    if fields(tr, {"thresholds": dict, "drifting": list, "long_tail": list, "outlier_iterations": list},
              where + ".trends"):
        for i, o in enumerate(tr["drifting"]):
            w = "%s.trends.drifting[%d]" % (where, i)
            if fields(o, DRIFT, w):
                check(o["r2"] >= tr["thresholds"].get("drift_min_r2", 0) - 1e-9, w + ": r2 above the threshold")
        for i, o in enumerate(tr["long_tail"]):
            w = "%s.trends.long_tail[%d]" % (where, i)
            if fields(o, TAIL, w):
                check(o["execute_p99_ns"] >= o["execute_p50_ns"], w + ": p99 >= p50")
        for i, o in enumerate(tr["outlier_iterations"]):
            w = "%s.trends.outlier_iterations[%d]" % (where, i)
            if fields(o, OUTLIER, w):
                for j, so in enumerate(o["slow_operators"]):
                    if fields(so, SLOW, "%s.slow_operators[%d]" % (w, j)):
                        check(so["excess_ns"] == so["ns"] - so["usual_ns"], w + ": excess = ns - usual")
                check(len(o["slow_operators"]) <= 3, w + ": at most 3 slow operators")
    for i, g in enumerate(a["cuda_graphs"]):
        w = "%s.cuda_graphs[%d]" % (where, i)
        if not fields(g, GRAPH, w):
            continue
        ok = all(fields(n, NODE, "%s.node_items[%d]" % (w, j)) for j, n in enumerate(g["node_items"]))
        check(len(g["node_items"]) == g["nodes"], w + ": node_items = nodes")
        if ok:
            check(sum(n["count"] for n in g["node_items"]) == g["kernels"], w + ": node counts sum to kernels")
            check(sum(n["execute_ns"] for n in g["node_items"]) == g["gpu_ns"], w + ": node execute sums to gpu_ns")


def check_text(a, text):
    """the analyses name what the text sections name (single trace)"""
    st = section(text, "Stages")
    names = [l.split()[0] for l in st if l.startswith("  ") and not l.strip().startswith(("window", "stages named"))]
    jn = [it["name"].split()[0] for it in a["stages"]["items"]]
    check(names == jn, "stages: text %s = json %s" % (names, jn))
    tr = section(text, "Trends")
    drift = [l.split(":")[0].strip() for l in tr if re.match(r"\s{4}\S.*: \S+ per call \(", l)]
    check(drift == [o["name"] for o in a["trends"]["drifting"]], "drifting: text %s = json" % drift)
    tails = [l.split(": p99")[0].strip() for l in tr if ": p99 " in l]
    check(tails == [o["name"] for o in a["trends"]["long_tail"]], "long tail: text %s = json" % tails)
    its = [int(m.group(1)) for m in (re.match(r"\s+iteration (-?\d+): ", l) for l in tr) if m]
    check(its == [o["iter"] for o in a["trends"]["outlier_iterations"]], "outliers: text %s = json" % its)
    gl = [l for l in section(text, "CUDA graphs") if re.match(r"\s+graph \d+ ", l)]
    check(len(gl) == len(a["cuda_graphs"]), "graphs: text %d = json %d" % (len(gl), len(a["cuda_graphs"])))
    for line, g in zip(gl, a["cuda_graphs"]):
        m = re.match(r"\s+graph (\d+) \(instantiated as graph (\d+)\): (\d+) launches, (\d+) nodes, (\d+) kernels", line)
        check(m and tuple(int(x) for x in m.groups()) ==
              (g["graph"], g["exec_graph"], g["launches"], g["nodes"], g["kernels"]), "graph line = json: " + line[:80])
    hs = section(text, "Host conditions")
    flagged = [re.match(r"\s+warning: (.*): launch numbers taken", l).group(1) for l in hs
               if re.match(r"\s+warning: .*: launch numbers taken", l)]
    check(flagged == [o["name"] for o in a["host_conditions"]["busy_launch_operators"]],
          "busy-host operators: text %s = json" % flagged)
    m = re.search(r"= (\d+) hooked calls x (\d+)ns", "\n".join(hs))
    so = a["host_conditions"]["self_overhead"]
    if m:
        check((int(m.group(1)), int(m.group(2))) == (so["hooked_calls"], so["hook_cost_ns"]),
              "self-overhead inputs: text %s = json" % (m.groups(),))


def check_json(path, ntraces, txt=None):
    d = strict_load(path)
    check(d.get("schema") == "gpuphase-report" and d.get("schema_version") == 2, "schema gpuphase-report version 2")
    fields(d, {"trace": dict, "group_by": str, "thresholds": dict, "summary": dict, "operators": list,
               "iterations": dict, "sync_callsites": list, "ranks": list, "analyses": list}, "report")
    check_summary(d.get("summary"), "summary", ntraces > 1)
    ops = d.get("operators", [])
    for i, o in enumerate(ops):
        w = "operators[%d]" % i
        if not fields(o, OPERATOR, w):
            continue
        check(o["total_ns"] == o["launch_ns"] + o["execute_ns"] + o["sync_ns"], w + ": total = launch + execute + sync")
        check(o["verdict"] in VERDICTS, w + ": verdict %r" % o["verdict"])
        for k in ("launch_share", "execute_share", "sync_share"):
            in01(o[k], w + "." + k)
    s = d.get("summary", {})
    if isinstance(s, dict) and "ops" in s:
        check(sum(o.get("count", 0) for o in ops) == s["ops"], "operators' counts sum to summary.ops")
        for k in ("launch_ns", "execute_ns", "sync_ns", "queue_ns"):
            check(sum(o.get(k, 0) for o in ops) == s[k], "operators' %s sum to the summary's" % k)
    it = d.get("iterations", {})
    if fields(it, {"count": INT, "duration_p50_ns": INT, "duration_p99_ns": INT, "outlier_factor": NUM,
                   "closed": INT, "items": list}, "iterations"):
        check(len(it["items"]) == it["count"], "iterations.items = count")
        check(it["closed"] == sum(1 for x in it["items"] if not x.get("open")), "iterations.closed = items not open")
        for i, x in enumerate(it["items"]):
            fields(x, ITER, "iterations.items[%d]" % i)
    for i, r in enumerate(d.get("ranks", [])):
        if fields(r, {"path": str, "busy_ns": INT, "straggler": bool, "summary": dict}, "ranks[%d]" % i):
            check_summary(r["summary"], "ranks[%d].summary" % i)
    an = d.get("analyses", [])
    check(len(an) == ntraces, "analyses: %d items for %d traces" % (len(an), ntraces))
    for i, a in enumerate(an):
        check_analyses(a, d, "analyses[%d]" % i)
    if ntraces > 1:
        check([a.get("path") for a in an] == [r.get("path") for r in d.get("ranks", [])],
              "analyses paths = ranks paths, in argument order")
    if txt:
        text = open(txt).read()
        # tables read in 160 columns (the operator table, iterations, graph nodes)
        lines = text.splitlines()
        if "Operators (by total, grouped by kernel)" in lines:
            i = lines.index("Operators (by total, grouped by kernel)") + 2
            table = []
            while i < len(lines) and lines[i].strip():
                table.append(lines[i])
                i += 1
            wide = [l for l in table if len(l) > 160]
            check(table and not wide, "operator table fits 160 columns (%d wider lines)" % len(wide))
        wide = [l for l in section(text, "CUDA graphs") if len(l) > 160]
        check(not wide, "CUDA graphs section fits 160 columns: %s" % wide[:1])
        if it.get("count") and not it.get("closed"):
            check(re.search(r"Iterations \(\d+\): no complete iteration", text) is not None,
                  "text says there is no complete iteration (json: closed 0)")
        elif it.get("count"):
            check(re.search(r"Iterations \(\d+\): duration p50 \S+, p99 \S+ over the %d complete ones" % it["closed"],
                            text) is not None, "text: p50 / p99 over the %d complete iterations" % it["closed"])
        if an and not fails:
            check_text(an[0], text)


def check_chrome(path, rep_path):
    d = strict_load(path)
    rep = strict_load(rep_path)
    ev = d.get("traceEvents")
    if not check(isinstance(ev, list) and ev, "traceEvents is a non-empty list"):
        return
    bad = [e for e in ev if not all(k in e for k in ("ph", "ts", "pid", "tid"))]
    check(not bad, "every event has ph/ts/pid/tid (%d lack one, e.g. %s)" % (len(bad), bad[:1]))
    bad = [e for e in ev if not (is_type(e.get("ts"), NUM) and is_type(e.get("pid"), INT) and is_type(e.get("tid"), INT))]
    check(not bad, "ts numeric, pid and tid integers (%d not, e.g. %s)" % (len(bad), bad[:1]))
    check(all(is_type(e.get("dur"), NUM) and e["dur"] >= 0 for e in ev if e["ph"] == "X"), "X events have dur >= 0")
    s = [e["id"] for e in ev if e["ph"] == "s"]
    f = [e["id"] for e in ev if e["ph"] == "f"]
    check(len(s) == len(set(s)) and len(f) == len(set(f)) and set(s) == set(f),
          "flow s/f pair up one to one (%d s, %d f)" % (len(s), len(f)))
    gpu = [e for e in ev if e["ph"] == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    host = [e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver", "gpuphase_sync", "nvtx", "iteration")]
    gpids = {e["pid"] for e in gpu}
    hpids = {e["pid"] for e in host}
    check(not (gpids & hpids), "host threads and GPU streams on different processes (%s vs %s)" % (hpids, gpids))
    fl = {e["id"]: e for e in ev if e["ph"] == "f"}
    check(all(e["pid"] in gpids for e in fl.values()), "flows finish on GPU tracks")
    check(all(e["pid"] in hpids for e in ev if e["ph"] == "s"), "flows start on host tracks")
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    streams = {(e["pid"], e["tid"]) for e in gpu}
    check(all(names.get(k) == "stream %d" % k[1] for k in streams), "every GPU thread is named 'stream N'")
    pnames = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    check((gpids | hpids) <= pnames, "every process is named")
    sm = rep["summary"]
    check(len(gpu) == sm["ops"] - sm["ops_no_gpu"], "one GPU event per op with GPU times (%d vs %d)"
          % (len(gpu), sm["ops"] - sm["ops_no_gpu"]))
    depth = {}
    for e in ev:
        if e["ph"] in ("B", "E"):
            k = (e["pid"], e["tid"])
            depth[k] = depth.get(k, 0) + (1 if e["ph"] == "B" else -1)
    check(all(v >= 0 for v in depth.values()), "NVTX: no thread ends more ranges than it began")


def check_html(path, rep_path):
    h = open(path).read()
    rep = strict_load(rep_path)
    check(not re.search(r"<script[^>]*\ssrc=|<link|src=['\"]?http|url\(", h, re.I), "html is self-contained")
    check(h.count("<svg") == h.count("</svg>") and h.count("<pre>") == h.count("</pre>"), "html: balanced svg/pre")
    m = re.search(r"<script type='application/json' id='gp-data'>(.*?)</script>", h, re.S)
    if check(m is not None, "html: the page's data travel as JSON"):
        data = json.loads(m.group(1))
        check([o["name"] for o in data["operators"]] == [o["name"] for o in rep["operators"]],
              "html: one table row per JSON operator, same order")
    for a in rep["analyses"]:
        check(("<h2>Stages" in h) == bool(a["stages"]["items"]), "html: a Stages section iff stages")
        check("<h2>Host conditions and self-overhead" in h, "html: a host conditions section")
        check("<h2>Trends" in h, "html: a Trends section")
        check(("<h2>CUDA graphs" in h) == bool(a["cuda_graphs"]), "html: a CUDA graphs section iff graphs")
        for g in a["cuda_graphs"]:
            for n in g["node_items"]:
                check(n["kernel"] in h, "html names graph node kernel " + n["kernel"])


def check_csv(path, rep_path):
    rep = strict_load(rep_path)
    rows = list(csv.reader(open(path, newline="")))
    head = ("operator,long_name,count,total_ns,launch_ns,queue_ns,execute_ns,sync_ns,launch_share,execute_share,"
            "sync_share,execute_mean_ns,execute_p50_ns,execute_p95_ns,execute_p99_ns,execute_max_ns,no_api,no_gpu,"
            "verdict").split(",")
    check(rows and rows[0] == head, "csv header as documented")
    check(len(rows) - 1 == len(rep["operators"]), "csv: one row per operator")
    for r, o in zip(rows[1:], rep["operators"]):
        got = dict(zip(head, r))
        check(got["operator"] == o["name"] and all(int(got[k]) == o[k] for k in
              ("count", "total_ns", "launch_ns", "queue_ns", "execute_ns", "sync_ns")) and got["verdict"] == o["verdict"],
              "csv row = json operator " + o["name"])


if __name__ == "__main__":
    mode, args = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 2 else ("", [])
    try:
        if mode == "json" and len(args) in (2, 3):
            check_json(args[0], int(args[1]), args[2] if len(args) == 3 else None)
        elif mode == "chrome" and len(args) == 2:
            check_chrome(*args)
        elif mode == "html" and len(args) == 2:
            check_html(*args)
        elif mode == "csv" and len(args) == 2:
            check_csv(*args)
        else:
            print(__doc__)
            sys.exit(2)
    except (ValueError, KeyError, TypeError, OSError) as e:
        check(False, "%s %s: %s: %s" % (mode, args[0], type(e).__name__, e))
    sys.exit(1 if fails else 0)
