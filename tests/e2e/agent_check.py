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
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main()
