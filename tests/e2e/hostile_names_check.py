#!/usr/bin/env python3
"""hostile_names_check.py DIR — tests/e2e/test_report_hostile.sh's judge.

DIR holds the report of a trace whose names are hostile (terminal escapes,
newlines, | ` < > ' " &, a C1 control, bytes that are not UTF-8) in every
format: h.text h.markdown h.csv h.json h.html h.ct.json h.db. Every output
must be valid UTF-8 with no raw control character (C0 but newline, DEL, C1)
and no line a name forged; the text and markdown reports must carry the
escaped name in every section that names operators (so the check reached
them); CSV rows keep their width; JSON, the Chrome trace and SQLite (read
with Python's sqlite3 and its default text factory) hold the names as the
JSON report decodes them. Prints one FAIL line per finding; exit 1 on any.
"""
import csv
import io
import json
import re
import sqlite3
import sys

D = sys.argv[1]
fails = []


def check(ok, what):
    if not ok:
        fails.append(what)


# The names as written into the trace (tests/e2e/test_report_hostile.sh),
# decoded as the JSON report stores them (a stray byte as U+FFFD).
NAMES = [b"warm\x1b[31m\nFORGED: warm", b"step|`x`|<script>alert(1)</script>",
         b"drift\xff\xfe\r\nverdict (whole run): forged", b"tail\xc2\x9b31m\tX'\"&"]
DECODED = [n.decode("utf-8", "replace") for n in NAMES]
# What a forged line would start with (after indentation and list/table marks).
FORGED = ("FORGED", "forged", "verdict (whole run): forged", "warning: forged", "  forged")
CTL = re.compile("[\x00-\x08\x0a-\x1f\x7f\x80-\x9f]")
# The one escaping rule (report/util/fmt.h gp_fmt_name) applied to the first name.
WARM = "warm\\x1b[31m\\nFORGED: warm"


def text_of(path, allow_tab=False):
    raw = open(path, "rb").read()
    try:
        t = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        check(False, "%s: not valid UTF-8 (%s)" % (path, e))
        return ""
    for line in t.split("\n"):
        bad = CTL.search(line.replace("\t", "") if allow_tab else line)
        check(not bad, "%s: raw control character %r in line %r" % (path, bad and bad.group(0), line[:120]))
        check(not line.lstrip(" -|#*").startswith(FORGED), "%s: forged line %r" % (path, line[:120]))
    return t


HEADINGS = ("Operators", "Verdicts", "Sync call sites", "Iterations", "Stages", "Host conditions", "Trends",
            "What-if", "Copy bandwidth", "Capture", "Window")


def sections(t):
    """heading -> body of a text or markdown report"""
    out, cur = {}, None
    for line in t.split("\n"):
        h = line.lstrip("# ")
        top = [x for x in HEADINGS if h.startswith(x) and line[:1] in ("#", x[0])]
        if top:
            cur = top[0]
            out.setdefault(cur, "")
        elif cur:
            out[cur] += line + "\n"
    return out


for fmt in ("text", "markdown"):
    t = text_of("%s/h.%s" % (D, fmt))
    sec = sections(t)
    for name in ("Operators", "Verdicts", "Stages", "Host conditions", "Trends", "What-if"):
        body = sec.get(name, "")
        check(WARM in body, "%s: section %s does not name the hostile kernel escaped (%r)" % (fmt, name, body[:200]))
    check("critical path: cudaMalloc\\x1b]0;title\\x07\\nwarning: forged" in t,
          "%s: the critical path does not name the hostile call escaped" % fmt)
    check("site\\n  forged site" in t, "%s: the sync call site is not escaped" % fmt)
    check("GPU\\x1b[2J\\nforged device" in t, "%s: the device name is not escaped" % fmt)
    check(("\\x9b" not in t) and ("\\u009b31m" in t), "%s: the C1 control is not written as \\u009b" % fmt)
    if fmt == "markdown":
        check("step\\|\\`x\\`\\|" in t, "markdown: | and ` in a name are not escaped")

# CSV as RFC 4180: a quoted field keeps its newlines, so judge the rows
raw = open(D + "/h.csv", "rb").read()
try:
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
except UnicodeDecodeError as e:
    rows = []
    check(False, "csv: not valid UTF-8 (%s)" % e)
check(rows and all(len(r) == len(rows[0]) for r in rows), "csv: rows of different widths")
for r in rows:
    for cell in r:
        bad = CTL.search(cell.replace("\n", "").replace("\r", ""))
        check(not bad, "csv: raw control character %r in %r" % (bad and bad.group(0), cell[:80]))
    check(not r[0].startswith(FORGED), "csv: forged row %r" % r[:3])
check(sorted(r[0] for r in rows[1:] if r[0].startswith(("warm", "step", "drift", "tail"))) ==
      sorted(n.replace("\x1b", "\\x1b").replace("\x9b", "\\u009b").replace("\t", "\\t") for n in DECODED),
      "csv: the operator names are not the escaped hostile names: %r" % [r[0] for r in rows[1:]])

j = json.loads(text_of(D + "/h.json"))
ops = {o["name"] for o in j["operators"]}
for n in DECODED:
    check(n in ops, "json: operator %r missing (names: %r)" % (n, sorted(ops)))

h = text_of(D + "/h.html", allow_tab=True)
check("<script>alert" not in h, "html: a name's <script> reached the page raw")
check("&lt;script&gt;alert" in h, "html: the <script> name is not in the page escaped")
check("X'\"&" not in h and "X'\"" not in h, "html: a name's quotes reached the page raw")

ct = json.loads(text_of(D + "/h.ct.json"))
ctn = {e.get("name") for e in ct["traceEvents"]}
for n in DECODED:
    check(n in ctn, "chrome-trace: name %r missing" % n)

db = sqlite3.connect(D + "/h.db")
for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')").fetchall():
    try:
        db.execute('SELECT * FROM "%s"' % t).fetchall()
    except Exception as e:  # noqa: BLE001 -- any failure to read is the finding
        check(False, "sqlite: %s cannot be read with Python's sqlite3: %s" % (t, e))
try:
    names = {r[0] for r in db.execute("SELECT DISTINCT name FROM GPUPHASE_OPS")}
    for n in DECODED:
        check(n in names, "sqlite: GPUPHASE_OPS name %r is not the JSON's" % n)
except Exception as e:  # noqa: BLE001
    check(False, "sqlite: GPUPHASE_OPS: %s" % e)

for f in fails:
    print("FAIL: " + f)
print("hostile_names_check: %d findings" % len(fails))
sys.exit(1 if fails else 0)
