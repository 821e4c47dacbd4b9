"""nsys_stats_check.py — nsys's stats reports (nsys_stats.sql) run on gpuphase's
SQLite export, compared with what gpuphase-report says of the same trace.

Used by export_readers_check.py (modes sqlite and duckdb): check_stats(run,
rep, reader, check, chrome=..., dump=...) where run(sql) returns (column
names, rows) on the export, rep is `gpuphase-report --format json`, check
the caller's pass/fail recorder. Counts must be exact; times equal in ns
(the export and the report hold the same integers) except the NVTX ranges
read back from the Chrome trace, whose microseconds with three decimals
are rounded back to ns.
"""
import json
import os
import re

STATS_SQL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nsys_stats.sql")

# each report's columns as NVIDIA documents them
NS_STATS = ["Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)"]
COLUMNS = {
    "cuda_gpu_kern_sum": ["Time (%)", "Total Time (ns)", "Instances"] + NS_STATS + ["Name"],
    "cuda_api_sum": ["Time (%)", "Total Time (ns)", "Num Calls"] + NS_STATS + ["Name"],
    "cuda_gpu_mem_time_sum": ["Time (%)", "Total Time (ns)", "Count"] + NS_STATS + ["Operation"],
    "cuda_gpu_mem_size_sum": ["Total (MB)", "Count", "Avg (MB)", "Med (MB)", "Min (MB)", "Max (MB)",
                              "StdDev (MB)", "Operation"],
    "nvtx_sum": ["Time (%)", "Total Time (ns)", "Instances"] + NS_STATS + ["Style", "Range"],
}
# ENUM_CUDA_MEMCPY_OPER's labels of the copy kinds the report names
COPY_LABEL = {"HtoD": "Host-to-Device", "DtoH": "Device-to-Host", "HtoA": "Host-to-Array",
              "AtoH": "Array-to-Host", "AtoA": "Array-to-Array", "AtoD": "Array-to-Device",
              "DtoA": "Device-to-Array", "DtoD": "Device-to-Device", "HtoH": "Host-to-Host",
              "PtoP": "Peer-to-Peer"}
# CUpti_ActivityMemcpyKind -> which side is device memory (3) or array (4);
# a host side is Pageable (1) or Unknown (0)
DEVICE_SIDES = {1: (None, 3), 2: (3, None), 3: (None, 4), 4: (4, None), 5: (4, 4), 6: (4, 3), 7: (3, 4),
                8: (3, 3), 9: (None, None), 10: (3, 3)}


def reports():
    """The queries of nsys_stats.sql, by report name."""
    parts = re.split(r"^-- report: (\S+)\n", open(STATS_SQL).read(), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def operation(op_name):
    """nsys's memory operation of a report operator name, or None."""
    if op_name.startswith("memset"):
        return "[CUDA memset]"
    if op_name.startswith("memcpy "):
        label = COPY_LABEL.get(op_name.split()[1])
        return f"[CUDA memcpy {label}]" if label else None
    return None


def gpu_count(o):
    return o["count"] - o["no_gpu"]


def nvtx_from_chrome(path):
    """(style, name) -> (count, total ns) of the NVTX ranges in a Chrome
    trace: B/E paired per thread, b/e per id; and the number of marks and of
    ranges left open."""
    ev = json.load(open(path))["traceEvents"]
    stacks, opened, out = {}, {}, {}
    marks = sum(1 for e in ev if e.get("cat") == "nvtx" and e["ph"] == "i")

    def add(style, name, t0, t1):
        c, t = out.get((style, name), (0, 0))
        out[(style, name)] = (c + 1, t + round((t1 - t0) * 1000))
    for e in ev:
        if e.get("cat") != "nvtx":
            continue
        key = (e["pid"], e["tid"])
        if e["ph"] == "B":
            stacks.setdefault(key, []).append((e["name"], e["ts"]))
        elif e["ph"] == "E" and stacks.get(key):
            name, t0 = stacks[key].pop()
            add("PushPop", name, t0, e["ts"])
        elif e["ph"] == "b":
            opened[e["id"]] = (e["name"], e["ts"])
        elif e["ph"] == "e" and e["id"] in opened:
            name, t0 = opened.pop(e["id"])
            add("StartEnd", name, t0, e["ts"])
    return out, marks, sum(len(v) for v in stacks.values()) + len(opened)


def pageable_in_dump(path):
    """Copies whose trace record says a pageable host side (GP_COPYF_PAGEABLE)."""
    n = 0
    for line in open(path):
        if line.startswith("memcpy "):
            m = re.search(r"\bflags=(0x[0-9a-f]+|\d+)", line)
            n += bool(m and int(m.group(1), 0) & 0x20)
    return n


def check_stats(run, rep_path, reader, check, chrome=None, dump=None):
    rep = json.load(open(rep_path))
    ops = {o["name"]: o for o in rep["operators"]}
    q = reports()
    out = {}
    for name, sql in q.items():
        try:
            cols, rows = run(sql)
        except Exception as e:  # a table or column nsys's query reads is missing
            check(False, f"{reader}: {name} runs: {str(e).splitlines()[0][:200]}")
            cols, rows = COLUMNS[name], []
        check(cols == COLUMNS[name], f"{reader}: {name} has nsys's columns" + ("" if cols == COLUMNS[name] else f": {cols}"))
        out[name] = [dict(zip(cols, r)) for r in rows]
        mn, md, mx = (next(c for c in cols if c.startswith(p)) for p in ("Min", "Med", "Max"))
        bad = [r for r in out[name] if not r[mn] <= r[md] <= r[mx]]
        check(not bad, f"{reader}: {name}: {len(rows)} rows, each with min <= median <= max ({len(bad)} not)")

    kern = {r["Name"]: (r["Instances"], r["Total Time (ns)"], r["Max (ns)"]) for r in out["cuda_gpu_kern_sum"]}
    want = {n: (gpu_count(o), o["execute_ns"], o["execute_max_ns"]) for n, o in ops.items()
            if not n.startswith(("memcpy", "memset")) and gpu_count(o) > 0}
    check(kern == want, f"{reader}: cuda_gpu_kern_sum = the report's kernels (instances, total, max)"
          + ("" if kern == want else f": {sorted(kern.items())[:3]} vs {sorted(want.items())[:3]}"))

    api = {r["Name"]: (r["Num Calls"], r["Total Time (ns)"]) for r in out["cuda_api_sum"]}
    runtime_ns = sum(t for n, (c, t) in api.items() if n.startswith(("cuda", "__cuda")))
    if not rep.get("ranks"):  # one trace: the report's host time in CUDA calls is the runtime calls' sum
        check(runtime_ns == rep["summary"]["host_api_ns"],
              f"{reader}: cuda_api_sum's runtime calls = the report's host_api_ns ({runtime_ns} vs {rep['summary']['host_api_ns']})")

    mem = {r["Operation"]: (r["Count"], r["Total Time (ns)"]) for r in out["cuda_gpu_mem_time_sum"]}
    want_mem = {}
    for n, o in ops.items():
        label = operation(n)
        if label and gpu_count(o) > 0:
            c, t = want_mem.get(label, (0, 0))
            want_mem[label] = (c + gpu_count(o), t + o["execute_ns"])
    check(mem == want_mem, f"{reader}: cuda_gpu_mem_time_sum = the report's copies and sets"
          + ("" if mem == want_mem else f": {mem} vs {want_mem}"))

    size = {r["Operation"]: (r["Count"], round(r["Total (MB)"] * 1e6)) for r in out["cuda_gpu_mem_size_sum"]}
    want_size = {}
    for a in rep.get("analyses", []):
        for b in a.get("copy_bandwidth") or []:
            label = operation(b["name"])
            c, t = want_size.get(label, (0, 0))
            want_size[label] = (c + b["count"], t + b["bytes"])
    if want_size or size:
        check(size == want_size, f"{reader}: cuda_gpu_mem_size_sum = the report's copy_bandwidth (count, bytes)"
              + ("" if size == want_size else f": {size} vs {want_size}"))

    nvtx = {(r["Style"], r["Range"]): (r["Instances"], r["Total Time (ns)"]) for r in out["nvtx_sum"]}
    if chrome:
        want_nvtx, marks, still_open = nvtx_from_chrome(chrome)
        check(nvtx == want_nvtx, f"{reader}: nvtx_sum = the NVTX ranges of the Chrome trace ({len(nvtx)} ranges)"
              + ("" if nvtx == want_nvtx else f": {sorted(nvtx.items())[:3]} vs {sorted(want_nvtx.items())[:3]}"))
        try:
            got = run('SELECT SUM(CASE WHEN eventType = 34 THEN 1 ELSE 0 END),'
                      ' SUM(CASE WHEN eventType IN (59, 60) AND "end" IS NULL THEN 1 ELSE 0 END) FROM NVTX_EVENTS')[1][0]
            got = tuple(int(x or 0) for x in got)
        except Exception as e:
            got = str(e).splitlines()[0][:100]
        check(got == (marks, still_open), f"{reader}: NVTX_EVENTS has the Chrome trace's marks and open ranges "
              f"({got} vs {(marks, still_open)})")

    # what the trace knows of each copy's memory: the copy kind's sides, the pageable bit
    cols, rows = run("SELECT copyKind, srcKind, dstKind, COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY"
                     " GROUP BY copyKind, srcKind, dstKind")
    wrong = [r for r in rows if r[0] in DEVICE_SIDES and not all(
        (k == want if want is not None else k in (0, 1)) for k, want in zip(r[1:3], DEVICE_SIDES[r[0]]))]
    check(not wrong, f"{reader}: CUPTI_ACTIVITY_KIND_MEMCPY srcKind/dstKind agree with copyKind ({wrong[:3]} do not)")
    if dump:
        pageable = sum(r[3] for r in rows if 1 in (r[1], r[2]))
        want_p = pageable_in_dump(dump)
        check(pageable == want_p, f"{reader}: {pageable} copies with a Pageable side, as the trace's records say ({want_p})")
