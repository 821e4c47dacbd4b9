"""agent_check.py — the agent's series against the reports of the same
window files (tests/e2e/test_agent_prometheus.sh).

  agent_check.py expect REPORT PID:FILE... > expect.json
      every window file reported alone by gpuphase-report (JSON), summed per
      (pid, operator): ops and the launch, queue, execute and sync seconds
  agent_check.py prom URL [PID] > got.json
      the same from the Prometheus query API at URL (instant queries of
      gpuphase_ops_total and gpuphase_phase_seconds_total), of PID only if
      given
  agent_check.py compare expect.json got.json
      exit 0 when every (pid, operator) of either side is on the other, ops
      equal, seconds within 1 %; else one line per difference and exit 1
  agent_check.py value URL PROMQL
      print the query's single value (nothing when it has none)
  agent_check.py sites-expect REPORT PID:FILE... > expect.json
      the report's sync call sites of every window file, summed per
      (pid, site): waits and blocked seconds
  agent_check.py sites-prom URL [PID] > got.json
      the same from gpuphase_sync_waits_total and gpuphase_sync_seconds_total
      (or, with URL a file of /metrics text, from that text)
  agent_check.py sites-compare expect.json got.json TOP
      exit 0 when, per pid, got has at most TOP named sites, each equal to
      the expected one (waits equal, seconds within 1 %), and site="other"
      holds the sum of every expected site got does not name; else one line
      per difference and exit 1
"""
import json
import subprocess
import sys
import urllib.parse
import urllib.request

PHASES = ("launch", "queue", "execute", "sync")


def expect(report, pairs):
    out = {}
    for pair in pairs:
        pid, path = pair.split(":", 1)
        doc = json.loads(subprocess.run([report, "--format", "json", path], check=True,
                                        capture_output=True, timeout=120).stdout)
        for op in doc["operators"]:
            e = out.setdefault("%s|%s" % (pid, op["name"]), {"ops": 0, **{p: 0.0 for p in PHASES}})
            e["ops"] += op["count"]
            for p in PHASES:
                e[p] += op[p + "_ns"] / 1e9
    return out


def query(url, promql):
    q = url.rstrip("/") + "/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(q, timeout=10) as r:
        doc = json.load(r)
    if doc.get("status") != "success":
        raise SystemExit("query %s: %s" % (promql, doc))
    return doc["data"]["result"]


def prom(url, pid=None):
    sel = '{pid="%s"}' % pid if pid else ""
    out = {}
    for s in query(url, "gpuphase_ops_total" + sel):
        k = "%s|%s" % (s["metric"]["pid"], s["metric"]["operator"])
        out.setdefault(k, {})["ops"] = int(float(s["value"][1]))
    for s in query(url, "gpuphase_phase_seconds_total" + sel):
        k = "%s|%s" % (s["metric"]["pid"], s["metric"]["operator"])
        out.setdefault(k, {})[s["metric"]["phase"]] = float(s["value"][1])
    return out


def parse_metrics(text):
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, rest = line.split("{", 1) if "{" in line else (line.split(" ")[0], "} " + line.split(" ")[1])
        labels, value = rest.rsplit("} ", 1)
        lab = {}
        for part in labels.split('",'):
            if "=" in part:
                k, v = part.split("=", 1)
                lab[k] = v.strip('"')
        if name not in ("gpuphase_ops_total", "gpuphase_phase_seconds_total"):
            continue
        k = "%s|%s" % (lab["pid"], lab["operator"])
        if name == "gpuphase_ops_total":
            out.setdefault(k, {})["ops"] = int(float(value))
        else:
            out.setdefault(k, {})[lab["phase"]] = float(value)
    return out


def compare(a, b):
    bad = []
    for k in sorted(set(a) | set(b)):
        if k not in a or k not in b:
            bad.append("%s: only in %s" % (k, "expected" if k in a else "got"))
            continue
        if a[k].get("ops") != b[k].get("ops"):
            bad.append("%s: ops expected %s, got %s" % (k, a[k].get("ops"), b[k].get("ops")))
        for p in PHASES:
            x, y = a[k].get(p), b[k].get(p)
            if x is None or y is None or abs(x - y) > 0.01 * max(abs(x), abs(y)) + 1e-9:
                bad.append("%s: %s expected %s s, got %s s" % (k, p, x, y))
    for line in bad:
        print(line)
    return 1 if bad else 0


def sites_expect(report, pairs):
    out = {}
    for pair in pairs:
        pid, path = pair.split(":", 1)
        doc = json.loads(subprocess.run([report, "--format", "json", path], check=True,
                                        capture_output=True, timeout=120).stdout)
        for c in doc["sync_callsites"]:
            e = out.setdefault("%s|%s" % (pid, c["site"]), {"waits": 0, "sync": 0.0})
            e["waits"] += c["calls"]
            e["sync"] += c["blocked_ns"] / 1e9
    return out


def sites_prom(url, pid=None):
    out = {}
    if not url.startswith("http"):
        with open(url) as f:
            for line in f:
                for name, field in (("gpuphase_sync_waits_total{", "waits"), ("gpuphase_sync_seconds_total{", "sync")):
                    if line.startswith(name):
                        labels, value = line[len(name):].rsplit("} ", 1)
                        p = labels.split('pid="', 1)[1].split('"', 1)[0]
                        site = labels.split(',site="', 1)[1][:-1].replace('\\"', '"').replace("\\\\", "\\")
                        if pid is None or p == pid:
                            v = float(value)
                            out.setdefault("%s|%s" % (p, site), {})[field] = int(v) if field == "waits" else v
        return out
    sel = '{pid="%s"}' % pid if pid else ""
    for name, field in (("gpuphase_sync_waits_total", "waits"), ("gpuphase_sync_seconds_total", "sync")):
        for s in query(url, name + sel):
            v = float(s["value"][1])
            k = "%s|%s" % (s["metric"]["pid"], s["metric"]["site"])
            out.setdefault(k, {})[field] = int(v) if field == "waits" else v
    return out


def sites_compare(exp, got, top):
    bad = []
    folded = {}
    for k, v in exp.items():
        key = k if k in got and not k.endswith("|other") else k.split("|", 1)[0] + "|other"
        f = folded.setdefault(key, {"waits": 0, "sync": 0.0})
        f["waits"] += v["waits"]
        f["sync"] += v["sync"]
    pids = {k.split("|", 1)[0] for k in list(exp) + list(got)}
    for p in sorted(pids):
        named = [k for k in got if k.startswith(p + "|") and not k.endswith("|other")]
        if len(named) > top:
            bad.append("pid %s: %d named sites, more than --top %d" % (p, len(named), top))
    for k in sorted(set(folded) | set(got)):
        a, b = folded.get(k), got.get(k)
        if a is None or b is None:
            bad.append("%s: only in %s" % (k, "expected" if a else "got"))
        elif a["waits"] != b.get("waits") or b.get("sync") is None or \
                abs(a["sync"] - b["sync"]) > 0.01 * max(a["sync"], b["sync"]) + 1e-9:
            bad.append("%s: expected %s waits %.9f s, got %s" % (k, a["waits"], a["sync"], b))
    for line in bad:
        print(line)
    return 1 if bad else 0


def main():
    cmd = sys.argv[1]
    if cmd == "expect":
        json.dump(expect(sys.argv[2], sys.argv[3:]), sys.stdout)
    elif cmd == "prom":
        json.dump(prom(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None), sys.stdout)
    elif cmd == "compare":
        with open(sys.argv[2]) as f, open(sys.argv[3]) as g:
            sys.exit(compare(json.load(f), json.load(g)))
    elif cmd == "value":
        res = query(sys.argv[2], sys.argv[3])
        if len(res) == 1:
            print(res[0]["value"][1])
    elif cmd == "sites-expect":
        json.dump(sites_expect(sys.argv[2], sys.argv[3:]), sys.stdout)
    elif cmd == "sites-prom":
        json.dump(sites_prom(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None), sys.stdout)
    elif cmd == "sites-compare":
        with open(sys.argv[2]) as f, open(sys.argv[3]) as g:
            sys.exit(sites_compare(json.load(f), json.load(g), int(sys.argv[4])))
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main()
