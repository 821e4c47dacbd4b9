#!/usr/bin/env python3
"""export_readers_check.py — read gpuphase's exports the way their users' tools do.

  export_readers_check.py sqlite DB REPORT.json [CHROME.json [DUMP]]   nsys's stats reports
                                                    (nsys_stats.sql, stdlib sqlite3): the
                                                    report's numbers; NVTX ranges = the Chrome
                                                    trace's; pageable copies = gpuphase-dump's
  export_readers_check.py duckdb DB REPORT.json [CHROME.json [DUMP]]   the same in DuckDB's
                                                    sqlite reader (needs duckdb)
  export_readers_check.py pandas DB                 pandas.read_sql on every table (needs pandas)
  export_readers_check.py chrome TRACE.json REPORT.json   strict JSON, Kineto categories and args,
                                                    flows bound and forward, every track named
  export_readers_check.py hta TRACE.json REPORT.json      HTA's TraceAnalysis lists the report's kernels
  export_readers_check.py pftrace TRACE.pftrace REPORT.json   the protobuf decoded field by field (stdlib)
  export_readers_check.py perfetto TRACE.pftrace REPORT.json  Perfetto's trace_processor (needs perfetto
                                                    and its trace_processor_shell download)

REPORT.json is `gpuphase-report --format json` of the same trace: the
exports must give the same kernels, counts and times as the report.
Exit 0 = all checks passed, 1 = a check failed, 77 = the reader is not
importable (the caller decides whether that is a skip).
"""
import json
import math
import re
import sys

# nsys's stats reports (cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum,
# cuda_gpu_mem_size_sum, nvtx_sum) are in nsys_stats.sql, checked by
# nsys_stats_check.py; the kernel summary in the shape pandas users write it:
KERN_SUM = """
SELECT s.value AS name, COUNT(*) AS instances, SUM(k."end" - k."start") AS total
FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS s ON k.shortName = s.id
GROUP BY k.shortName, s.value ORDER BY total DESC"""
KERN_DEMANGLED = """
SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
LEFT JOIN StringIds AS s ON k.demangledName = s.id WHERE s.value IS NULL"""
TID_TABLES = ("CUPTI_ACTIVITY_KIND_RUNTIME", "GPUPHASE_OPS", "GPUPHASE_SYNCS", "GPUPHASE_MARKERS", "ThreadNames")
PID_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
              "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")

fails = 0


def check(ok, what):
    global fails
    if not ok:
        fails += 1
    print(("ok   " if ok else "FAIL ") + what)


def report_ops(rep_path):
    rep = json.load(open(rep_path))
    return {o["name"]: o for o in rep["operators"]}, rep


def kernel_ops(ops):
    return {n: o for n, o in ops.items() if not n.startswith(("memcpy ", "memset"))}


def check_sql(run, rep_path, reader, chrome=None, dump=None):
    """run(sql) -> (column names, rows) on the export."""
    import nsys_stats_check
    ops, rep = report_ops(rep_path)
    nsys_stats_check.check_stats(run, rep_path, reader, check, chrome=chrome, dump=dump)

    def execute(q):
        return run(q)[1]
    check(execute(KERN_DEMANGLED)[0][0] == 0, f"{reader}: every demangledName is a StringIds id")
    names = {r[0] for r in execute("SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r"
                                   " JOIN StringIds AS s ON s.id = r.nameId")}
    bogus = [n for n in names if n in ("cudaMemcpyPeerAsync", "cudaGraphLaunch")] if "graph" not in rep_path else []
    check(not bogus, f"{reader}: API names are the calls made (no {bogus})")
    # one process per trace: globalTid >> 24 is the globalPid's pid in every table
    pids = {r[0] for r in execute("SELECT globalPid >> 24 FROM TRACES")}
    for t in TID_TABLES:
        got = {r[0] for r in execute(f"SELECT DISTINCT globalTid >> 24 FROM {t} WHERE globalTid IS NOT NULL")}
        check(got <= pids, f"{reader}: {t}.globalTid carries the traced pid ({sorted(got)} in {sorted(pids)})")
    for t in PID_TABLES:
        got = {r[0] for r in execute(f"SELECT DISTINCT globalPid >> 24 FROM {t}")}
        check(got <= pids, f"{reader}: {t}.globalPid is pid << 24")
    tids_api = {r[0] for r in execute("SELECT DISTINCT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME")}
    tids_ops = {r[0] for r in execute("SELECT DISTINCT globalTid FROM GPUPHASE_OPS WHERE globalTid IS NOT NULL")}
    check(tids_ops <= tids_api, f"{reader}: the launching threads of GPUPHASE_OPS are threads of CUPTI_ACTIVITY_KIND_RUNTIME")
    # one thread, one globalTid: a launch call and its op name the same thread
    odd = execute("SELECT COUNT(*) FROM GPUPHASE_OPS o JOIN TRACES t ON t.rank = o.rank"
                  " JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = o.correlationId"
                  " AND r.globalTid >> 24 = t.globalPid >> 24 AND r.start = o.api_start"
                  " WHERE o.globalTid IS NOT NULL AND r.globalTid != o.globalTid")[0][0]
    check(odd == 0, f"{reader}: a launching call and its op carry the same globalTid ({odd} differ)")
    summ = {r[0]: r[1] for r in execute("SELECT name, execute_ns FROM GPUPHASE_OPERATOR_SUMMARY")}
    check(all(summ.get(n) == o["execute_ns"] for n, o in ops.items()), f"{reader}: GPUPHASE_OPERATOR_SUMMARY beside them")


def run_on(con):
    """(column names, rows) of a query, on a sqlite3 or DuckDB connection."""
    def run(q):
        cur = con.execute(q)
        cols = [d[0] for d in cur.description]
        return cols, cur.fetchall()
    return run


def mode_sqlite(db, rep, chrome=None, dump=None):
    import sqlite3
    check_sql(run_on(sqlite3.connect(db)), rep, "sqlite3", chrome, dump)


def mode_duckdb(db, rep, chrome=None, dump=None):
    try:
        import duckdb
    except ImportError:
        sys.exit(77)
    con = duckdb.connect()
    try:
        # DuckDB's sqlite reader, from the package index (duckdb-extension-
        # sqlite-scanner, pinned with duckdb by scripts/deps.sh readers)
        import pathlib
        import duckdb_extension_sqlite_scanner as ext
        path = pathlib.Path(ext.__file__).parent / "extensions" / f"v{duckdb.__version__}" / "sqlite_scanner.duckdb_extension"
        con.execute(f"LOAD '{path}'")
    except Exception as e:
        try:  # else DuckDB's own download, where its host can be reached
            con.execute("INSTALL sqlite; LOAD sqlite;")
        except Exception as e2:
            print(f"SKIP duckdb: no sqlite reader extension: packaged one: {str(e).splitlines()[0][:100]}; "
                  f"download: {str(e2).splitlines()[0][:100]}")
            sys.exit(77)
    con.execute(f"ATTACH '{db}' AS g (TYPE sqlite); USE g;")
    check_sql(run_on(con), rep, "duckdb", chrome, dump)


def mode_pandas(db):
    try:
        import pandas
    except ImportError:
        sys.exit(77)
    import sqlite3
    con = sqlite3.connect(db)
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")]
    for t in tables:
        df = pandas.read_sql(f"SELECT * FROM {t}", con)
        check(df is not None, f"pandas: read_sql {t} ({len(df)} rows)")
    k = pandas.read_sql(KERN_SUM, con)
    check(list(k.columns) == ["name", "instances", "total"], "pandas: kernel summary frame")


def strict_json(path):
    def bad_const(c):
        raise ValueError("not JSON: " + c)
    raw = open(path, "rb").read()
    raw.decode("utf-8")  # strict: a stray byte raises
    return json.loads(raw, parse_constant=bad_const)


def mode_chrome(path, rep_path):
    d = strict_json(path)
    ops, rep = report_ops(rep_path)
    ev = d["traceEvents"]
    check(isinstance(d.get("distributedInfo", {}).get("rank"), int), "chrome: distributedInfo has the rank")
    gpu = [e for e in ev if e["ph"] == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    api = [e for e in ev if e["ph"] == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")]
    check(all(all(k in e["args"] for k in ("correlation", "stream", "device", "External id")) for e in gpu),
          "chrome: every GPU op has args correlation/stream/device/External id")
    check(all(all(k in e["args"] for k in ("launch_ns", "queue_ns", "execute_ns")) for e in gpu),
          "chrome: every GPU op carries its phases")
    check(all("correlation" in e["args"] for e in api), "chrome: every CUDA call has args correlation")
    kern = {}
    for e in gpu:
        if e["cat"] == "kernel":
            c, t = kern.get(e["name"], (0, 0))
            kern[e["name"]] = (c + 1, t + e["dur"])
    want = {n: (o["count"] - o["no_gpu"], o["execute_ns"] / 1e3) for n, o in kernel_ops(ops).items() if o["count"] > o["no_gpu"]}
    same = kern.keys() == want.keys() and all(kern[n][0] == want[n][0] and abs(kern[n][1] - want[n][1]) <= 0.002 * kern[n][0]
                                              for n in want)
    check(same, "chrome: kernels, counts and times = the report's" + ("" if same else f": {kern} vs {want}"))
    # copies and sets under Kineto's names, ours in args gpuphase_name
    kineto = re.compile(r"^(Memcpy (HtoD|DtoH|HtoA|AtoH|AtoA|AtoD|DtoA|DtoD|HtoH|PtoP|Unknown) \(({m}) -> ({m})\)"
                        r"|Memset \(({m})\))$".format(m="Unknown|Pageable|Pinned|Device|Array|Managed"))
    mem = [e for e in gpu if e["cat"] != "kernel"]
    def kineto_kind(ours):  # "memcpy HtoD" -> "Memcpy HtoD", as Kineto's name begins
        return "Memcpy Unknown" if ours == "memcpy" else "M" + ours[1:]
    odd = [e["name"] for e in mem if not kineto.match(e["name"]) or
           e["name"].split(" (")[0] != kineto_kind(e["args"].get("gpuphase_name", "?"))]
    check(not odd, f"chrome: {len(mem)} copies and sets carry Kineto's names, ours in args ({odd[:3]} do not)")
    per = {}
    for e in mem:
        ours = e["args"].get("gpuphase_name", e["name"])
        c, t = per.get(ours, (0, 0))
        per[ours] = (c + 1, t + e["dur"])
    want_mem = {n: (o["count"] - o["no_gpu"], o["execute_ns"] / 1e3) for n, o in ops.items()
                if n.startswith(("memcpy", "memset")) and o["count"] > o["no_gpu"]}
    same = per.keys() == want_mem.keys() and all(per[n][0] == want_mem[n][0] and
                                                 abs(per[n][1] - want_mem[n][1]) <= 0.002 * per[n][0] for n in per)
    check(same, "chrome: copies and sets, counts and times = the report's" + ("" if same else f": {per} vs {want_mem}"))
    # flows: ac2g, one s and one f per id, f not before s, s inside a CUDA call on its thread, f inside an op
    s = {e["id"]: e for e in ev if e["ph"] == "s"}
    f = {e["id"]: e for e in ev if e["ph"] == "f"}
    check(s.keys() == f.keys() and all(e["cat"] == "ac2g" for e in list(s.values()) + list(f.values())),
          f"chrome: {len(s)} ac2g flows pair up")
    back = [i for i in s if i in f and f[i]["ts"] < s[i]["ts"]]
    check(not back, f"chrome: no flow ends before it starts ({len(back)} do)")
    slices = {}
    for e in ev:
        if e["ph"] == "X":
            slices.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))

    def inside(e):
        return any(a <= e["ts"] <= b for a, b in slices.get((e["pid"], e["tid"]), ()))
    unbound = [i for i in s if not inside(s[i]) or (i in f and not inside(f[i]))]
    check(not unbound, f"chrome: every flow starts inside its call and ends inside its op ({len(unbound)} do not)")
    named = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    tracks = {(e["pid"], e["tid"]) for e in ev if e["ph"] != "M"}
    check(tracks <= named, f"chrome: every track is named ({sorted(tracks - named)[:3]} are not)")
    if rep["summary"].get("ops"):
        check(sum(1 for e in gpu) == rep["summary"]["ops"] - rep["summary"]["ops_no_gpu"], "chrome: one event per op")


def mode_hta(path, rep_path):
    try:
        from hta.trace_analysis import TraceAnalysis
    except ImportError as e:
        print(f"SKIP hta: {e}")
        sys.exit(77)
    import os
    import shutil
    import tempfile
    ops, rep = report_ops(rep_path)
    d = tempfile.mkdtemp(prefix="gp_hta.")
    try:
        shutil.copy(path, os.path.join(d, "rank0.json"))
        ta = TraceAnalysis(trace_dir=d)
        sym = ta.t.symbol_table.get_sym_table()
        df = ta.t.get_trace(0)
        names = df["name"].map(lambda i: sym[i])
        cats = df["cat"].map(lambda i: sym[i])
        k = df[cats == "kernel"]
        kn = names[cats == "kernel"]
        got = {}
        for n, dur in zip(kn, k["dur"]):
            c, t = got.get(n, (0, 0))
            got[n] = (c + 1, t + dur)
        want = {n: (o["count"] - o["no_gpu"], o["execute_ns"] / 1e3) for n, o in kernel_ops(ops).items() if o["count"] > o["no_gpu"]}
        # HTA puts every event on whole microseconds, start rounded up and end
        # down (trace_parser.py): each kernel of the export so rounded, its
        # time within 2 us of the report's
        trace = json.load(open(path))
        rounded = {}
        for e in trace["traceEvents"]:
            if e.get("cat") == "kernel" and e.get("ph") == "X":
                c, t = rounded.get(e["name"], (0, 0))
                rounded[e["name"]] = (c + 1, t + math.floor(e["ts"] + e["dur"]) - math.ceil(e["ts"]))
        same = got == rounded and got.keys() == want.keys() and all(
            got[n][0] == want[n][0] and want[n][1] - 2 * got[n][0] < got[n][1] <= want[n][1] for n in want)
        check(same, "hta: TraceAnalysis lists the report's kernels with the same counts and times (on HTA's whole us)"
              + ("" if same else f": {sorted(got.items())[:3]} vs {sorted(rounded.items())[:3]}, report {sorted(want.items())[:3]}"))
        bd = ta.get_gpu_kernel_breakdown(visualize=False)
        kt = bd[1] if isinstance(bd, tuple) else bd
        hta_names = set(kt["name"]) if "name" in kt else set()
        check(set(want) <= hta_names, f"hta: get_gpu_kernel_breakdown names every kernel ({len(hta_names)} names)")
        mem_events = [e for e in trace["traceEvents"] if e.get("cat") in ("gpu_memcpy", "gpu_memset")]
        for ok, what in hta_memory(ta, ops, hta_kept(trace["traceEvents"], mem_events)):
            check(ok, what)
        # control: the same trace with the copies and sets under gpuphase's
        # former names ("memcpy HtoD", the name in args) must fail those checks
        for e in mem_events:
            e["name"] = e["args"].get("gpuphase_name", e["name"])
        forged = os.path.join(d, "former")
        os.mkdir(forged)
        json.dump(trace, open(os.path.join(forged, "rank0.json"), "w"))
        res = hta_memory(TraceAnalysis(trace_dir=forged), ops, hta_kept(trace["traceEvents"], mem_events))
        if res:
            check(not all(ok for ok, _ in res), "hta: control: under the former names the copies fail those checks ("
                  + "; ".join(w for ok, w in res if not ok)[:200] + ")")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def hta_kept(events, gpu_events):
    """The GPU events HTA analyses (Trace._filter_irrelevant_gpu_kernels):
    with two or more ProfilerStep slices, those whose launching CPU event
    (same correlation) starts before the last step does."""
    steps = [e["ts"] for e in events if e.get("ph") == "X" and e["name"].startswith("ProfilerStep")]
    if len(steps) < 2:
        return gpu_events
    last = max(steps)
    launched = {e["args"]["correlation"] for e in events if e.get("ph") == "X" and e["ts"] < last and
                e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset") and "correlation" in e.get("args", {})}
    return [e for e in gpu_events if e["args"]["correlation"] in launched]


def hta_memory(ta, ops, events):
    """(ok, what) of HTA's kernel-type and temporal breakdowns against the
    report's copies and sets: memory, not computation, with their time;
    none when there are none. HTA puts each event on whole microseconds,
    start rounded up and end down (trace_parser.py), so each op loses less
    than 2 us: exactly that rounding of the trace's own copy and set events
    (`events`: those HTA keeps, hta_kept), and no more than the report's time."""
    mem = [o for n, o in ops.items() if n.startswith(("memcpy", "memset")) and o["count"] > o["no_gpu"]]
    n = sum(o["count"] - o["no_gpu"] for o in mem)
    if not n:
        return []
    mem_us = sum(o["execute_ns"] for o in mem) / 1e3
    by_type, by_kernel = ta.get_gpu_kernel_breakdown(visualize=False)
    got = float(by_type[by_type["kernel_type"] == "MEMORY"]["sum"].sum())
    rounded = sum(math.floor(e["ts"] + e["dur"]) - math.ceil(e["ts"]) for e in events)
    named = by_kernel[by_kernel["name"].str.startswith(("Memcpy", "Memset", "memcpy", "memset"))]
    as_compute = sorted(set(named[named["kernel_type"] != "MEMORY"]["name"]))
    tb = ta.get_temporal_breakdown(visualize=False)
    non_compute = float(tb["non_compute_time(us)"].iloc[0])
    return [
        (got == rounded and 0 < got <= mem_us,
         f"hta: get_gpu_kernel_breakdown's MEMORY = the {len(events)} copies and sets it keeps on whole microseconds "
         f"({got:.0f} us vs {rounded} us; the report: {mem_us:.1f} us in {n} ops)"),
        (not as_compute, f"hta: no copy or set counted as computation ({as_compute[:3]} are)"),
        (0 < non_compute <= mem_us, f"hta: get_temporal_breakdown's non-compute time is the copies' and sets' "
                                        f"({non_compute:.0f} us, > 0 and <= {mem_us:.1f} us)"),
    ]


def pb_fields(buf):
    """(field, wire type, value) of one protobuf message; raises on a malformed one."""
    i, n = 0, len(buf)

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            if i >= n or shift > 63:
                raise ValueError("truncated varint")
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v
    while i < n:
        key = varint()
        f, wt = key >> 3, key & 7
        if wt == 0:
            yield f, wt, varint()
        elif wt == 1:
            yield f, wt, int.from_bytes(buf[i:i + 8], "little")
            i += 8
        elif wt == 2:
            ln = varint()
            if i + ln > n:
                raise ValueError("length past the end")
            yield f, wt, buf[i:i + ln]
            i += ln
        elif wt == 5:
            yield f, wt, int.from_bytes(buf[i:i + 4], "little")
            i += 4
        else:
            raise ValueError(f"wire type {wt}")


def mode_pftrace(path, rep_path):
    """Decode Perfetto's Trace by its published field numbers (trace_packet.proto,
    track_event.proto, track_descriptor.proto, interned_data.proto)."""
    ops, rep = report_ops(rep_path)
    data = open(path, "rb").read()
    names, cats, tracks, parents = {}, {}, {}, {}
    open_slices, kern = {}, {}
    flows_out, flows_in = set(), set()
    packets = begins = ends = 0
    for f, wt, pkt in pb_fields(data):
        assert f == 1 and wt == 2, "Trace holds only packets (field 1)"
        packets += 1
        fields = list(pb_fields(pkt))
        ts = next((v for ff, _, v in fields if ff == 8), None)
        for ff, _, v in fields:
            if ff == 12:  # interned_data
                for g, _, item in pb_fields(v):
                    kv = {h: x for h, _, x in pb_fields(item)}
                    if g == 2:
                        names[kv[1]] = kv[2].decode("utf-8")
                    elif g == 1:
                        cats[kv[1]] = kv[2].decode("utf-8")
            elif ff == 60:  # track_descriptor
                kv = {h: x for h, _, x in pb_fields(v)}
                nm = kv.get(2)
                for sub in (3, 4):
                    if sub in kv:
                        sk = {h: x for h, _, x in pb_fields(kv[sub])}
                        nm = sk.get(6 if sub == 3 else 5)
                tracks[kv[1]] = nm.decode("utf-8") if nm is not None else None
                parents[kv[1]] = kv.get(5)
        for ff, _, v in fields:
            if ff != 11:
                continue
            ev = list(pb_fields(v))
            kv = {h: x for h, _, x in ev}
            typ, track = kv.get(9), kv.get(11)
            assert track in tracks, f"event on an undescribed track {track}"
            if typ == 1:
                begins += 1
                name = names[kv[10]]
                cat = cats.get(kv.get(3))
                open_slices.setdefault(track, []).append((ts, name, cat))
                flows_out.update(x for h, _, x in ev if h == 47 and cat == "cuda_api")
                flows_in.update(x for h, _, x in ev if h in (47, 48) and cat != "cuda_api")
            elif typ == 2:
                ends += 1
                t0, name, cat = open_slices[track].pop()
                assert ts >= t0, "a slice ends before it begins"
                if cat == "kernel":
                    c, t = kern.get(name, (0, 0))
                    kern[name] = (c + 1, t + ts - t0)
    check(packets > 0 and begins == ends, f"pftrace: {packets} packets decode, {begins} slices begin and end")
    check(all(v is not None and v != "" for v in tracks.values()), f"pftrace: all {len(tracks)} tracks are named")
    want = {n: (o["count"] - o["no_gpu"], o["execute_ns"]) for n, o in kernel_ops(ops).items() if o["count"] > o["no_gpu"]}
    check(kern == want, "pftrace: kernels, counts and times (ns) = the report's"
          + ("" if kern == want else f": {sorted(kern.items())[:3]} vs {sorted(want.items())[:3]}"))
    check(flows_in <= flows_out, f"pftrace: every op's flow starts at a CUDA call ({len(flows_in - flows_out)} do not)")


def mode_perfetto(path, rep_path):
    try:
        from perfetto.trace_processor import TraceProcessor
    except ImportError:
        sys.exit(77)
    ops, rep = report_ops(rep_path)
    try:
        tp = TraceProcessor(trace=path)
    except Exception as e:  # the shell binary is downloaded on first use
        print(f"SKIP perfetto: trace_processor_shell cannot be fetched here ({str(e).splitlines()[0][:120]})")
        sys.exit(77)
    q = tp.query("SELECT s.name AS name, COUNT(*) AS n, SUM(s.dur) AS total FROM slice s "
                 "WHERE s.category = 'kernel' GROUP BY s.name")
    kern = {r.name: (r.n, r.total) for r in q}
    want = {n: (o["count"] - o["no_gpu"], o["execute_ns"]) for n, o in kernel_ops(ops).items() if o["count"] > o["no_gpu"]}
    check(kern == want, "perfetto: trace_processor's kernel slices = the report's")
    nflow = next(iter(tp.query("SELECT COUNT(*) AS n FROM flow"))).n
    check(nflow > 0, f"perfetto: {nflow} flows")
    stats = [r for r in tp.query("SELECT name, value FROM stats WHERE severity IN ('error', 'data_loss') AND value > 0")]
    check(not stats, f"perfetto: no import errors ({[(r.name, r.value) for r in stats][:4]})")


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "sqlite":
        mode_sqlite(*args)
    elif mode == "duckdb":
        mode_duckdb(*args)
    elif mode == "pandas":
        mode_pandas(*args)
    elif mode == "chrome":
        mode_chrome(*args)
    elif mode == "hta":
        mode_hta(*args)
    elif mode == "pftrace":
        mode_pftrace(*args)
    elif mode == "perfetto":
        mode_perfetto(*args)
    else:
        print(__doc__)
        sys.exit(2)
    print(f"{mode}: {'all checks passed' if not fails else f'{fails} checks failed'}")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
