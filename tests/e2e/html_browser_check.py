#!/usr/bin/env python3
"""html_browser_check.py PAGE.html REPORT.json [SHOT_PREFIX]

Loads gpuphase's HTML export in headless Chromium through its WebDriver
(selenium + Debian's chromedriver): no console errors; the answer opens the
page (wall, GPU busy, the run's verdict and advice as the JSON report gives
them, the top what-ifs with saving bars on the largest one's scale) before
the tables, in the first screen; the pageable-copy note sits in the advice
column of each operator that has one; the operator table
sorts (aria-sort follows) and filters; a phase bar's tooltip shows its
numbers; the iteration chart has axes and switches to log scale; the op
timeline zooms. With SHOT_PREFIX, saves PREFIX-{page,answer,table,
iterations,timeline}.png. Exit 0 pass, 1 fail, 77 when selenium or Chromium is missing.
"""
import json
import os
import shutil
import sys

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
except ImportError:
    print("SKIP: selenium is not installed")
    sys.exit(77)

page, rep_path = sys.argv[1], sys.argv[2]
shots = sys.argv[3] if len(sys.argv) > 3 else None
chromium = shutil.which("chromium") or shutil.which("chromium-browser")
driver_bin = shutil.which("chromedriver")
if not chromium or not driver_bin:
    print("SKIP: chromium / chromedriver not installed (scripts/deps.sh browser)")
    sys.exit(77)
rep = json.load(open(rep_path))
fails = 0


def check(ok, what):
    global fails
    fails += not ok
    print(("ok   " if ok else "FAIL ") + what)


def check_answer(drv, rep):
    """The answer: first, and the JSON report's own verdict, advice and what-ifs."""
    ans = drv.find_elements(By.ID, "answer")
    check(len(ans) == 1, "the answer is on the page")
    if not ans:
        return
    first = drv.execute_script("const a = arguments[0], t = document.getElementById('ops');"
                               "return !!(a.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING) &&"
                               " a.getBoundingClientRect().bottom <= window.innerHeight", ans[0])
    check(first, "the answer comes before the tables, whole in the first screen")
    s, text = rep["summary"], ans[0].text
    check("wall " in text and "GPU busy " in text and f"{s['verdict']} ({s['verdict_reason']})" in text,
          f"the answer gives the wall, GPU busy and the verdict {s['verdict']} ({s['verdict_reason']})")
    adv = [p.text for p in ans[0].find_elements(By.CSS_SELECTOR, "p.advice")]
    check(adv == (["advice: " + s["advice"]] if s["advice"] else []), f"the answer's advice is the report's ({adv[:1]})")
    w = (rep.get("analyses") or [{}])[0].get("whatif") or {}
    items = w.get("whatif") or []
    rows = ans[0].find_elements(By.CSS_SELECTOR, "#answer-whatif tr td.bar span")
    want = items[:3] if items and items[0]["saving_ns"] else []
    check(len(rows) == len(want), f"the answer lists the top {len(want)} what-ifs ({len(rows)})")
    if want and len(rows) == len(want):
        widths = [drv.execute_script("return arguments[0].getBoundingClientRect().width", r) for r in rows]
        top = want[0]["saving_ns"]
        check(all(abs(wd - widths[0] * i["saving_ns"] / top) <= 1.5 for wd, i in zip(widths, want)),
              f"what-if bars on the largest saving's scale ({[round(x) for x in widths]})")


def check_notes(drv, rep):
    """Each operator's pageable-copy note in its advice column."""
    want = {o["name"]: o["pageable_copies"] for o in rep["operators"] if o.get("pageable_copies")}
    for tr in drv.find_elements(By.CSS_SELECTOR, "#ops tbody tr"):
        tds = tr.find_elements(By.TAG_NAME, "td")
        name, note = tds[0].text, tds[-1].find_elements(By.CSS_SELECTOR, ".note")
        if name in want:
            check(len(note) == 1 and f"{want[name]} of " in note[0].text and "pageable host memory" in note[0].text,
                  f"{name}: the pageable-copy note in the advice column")
        elif note:
            check(False, f"{name}: a pageable-copy note without pageable copies")
    if want:
        print(f"ok   pageable-copy notes: {len(want)} operator(s)")


opts = webdriver.ChromeOptions()
opts.binary_location = chromium
for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1300,900"):
    opts.add_argument(a)
opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
drv = webdriver.Chrome(service=Service(driver_bin), options=opts)
try:
    drv.get("file://" + os.path.abspath(page))
    ms = drv.execute_script("const t = performance.getEntriesByType('navigation')[0];"
                            "return t ? t.loadEventEnd - t.startTime : -1")
    limit = float(os.environ.get("GP_HTML_LOAD_MS", "5000"))
    check(0 <= ms <= limit, f"page loads and draws in {ms:.0f} ms (limit {limit:.0f})")
    errors = [e for e in drv.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    check(not errors, f"no console errors ({errors[:2]})")
    check_answer(drv, rep)
    check_notes(drv, rep)
    if shots and drv.find_elements(By.ID, "answer"):
        drv.find_element(By.ID, "answer").screenshot(shots + "-answer.png")
    rows = drv.find_elements(By.CSS_SELECTOR, "#ops tbody tr")
    check(len(rows) == len(rep["operators"]), f"table: one row per operator ({len(rows)})")
    total_th = drv.find_element(By.CSS_SELECTOR, "#ops th[data-key=total]")
    check(total_th.get_attribute("aria-sort") == "descending", "table: sorted by total, aria-sort descending")
    count_th = drv.find_element(By.CSS_SELECTOR, "#ops th[data-key=count]")
    count_th.find_element(By.TAG_NAME, "button").click()
    counts = [int(r.find_elements(By.TAG_NAME, "td")[1].text) for r in drv.find_elements(By.CSS_SELECTOR, "#ops tbody tr")]
    check(counts == sorted(counts, reverse=True) and count_th.get_attribute("aria-sort") == "descending"
          and total_th.get_attribute("aria-sort") == "none", "table: click 'count' sorts by count, aria-sort moves")
    count_th.find_element(By.TAG_NAME, "button").click()
    counts = [int(r.find_elements(By.TAG_NAME, "td")[1].text) for r in drv.find_elements(By.CSS_SELECTOR, "#ops tbody tr")]
    check(counts == sorted(counts) and count_th.get_attribute("aria-sort") == "ascending", "table: second click ascends")
    name = rep["operators"][0]["name"]
    flt = drv.find_element(By.ID, "filter")
    flt.send_keys(name)
    shown = [r.find_elements(By.TAG_NAME, "td")[0].text for r in drv.find_elements(By.CSS_SELECTOR, "#ops tbody tr")]
    want = [o["name"] for o in rep["operators"] if name.lower() in o["name"].lower()]
    check(sorted(shown) == sorted(want), f"table: filter '{name}' shows {len(shown)} rows")
    verdict = drv.find_element(By.CSS_SELECTOR, "#ops tbody tr td.v").text
    check(rep["operators"][0]["verdict"] in verdict, "table: the verdict beside the operator")
    if shots:
        drv.find_element(By.ID, "ops").screenshot(shots + "-table.png")
    flt.clear()
    flt.send_keys("\b")
    bar = drv.find_elements(By.CSS_SELECTOR, "#phases rect")
    check(len(bar) >= 3, f"phase bars drawn ({len(bar)} rects)")
    ticks = drv.find_elements(By.CSS_SELECTOR, "#phases .ax text")
    check(len(ticks) >= 3, f"phase bars have a labelled axis ({len(ticks)} labels)")
    ActionChains(drv).move_to_element(bar[1]).perform()
    tip = drv.find_element(By.ID, "tip")
    check(tip.is_displayed() and "execute" in tip.text and rep["operators"][0]["name"] in tip.text,
          f"hovering a bar shows its tooltip ({tip.text!r})")
    if rep["iterations"]["count"] if isinstance(rep.get("iterations"), dict) else rep.get("iterations"):
        dots = drv.find_elements(By.CSS_SELECTOR, "#iters circle")
        out = drv.find_elements(By.CSS_SELECTOR, "#iters circle.outlier")
        check(len(dots) > 0, f"iteration chart: {len(dots)} iterations, {len(out)} outliers marked")
        check(len(drv.find_elements(By.CSS_SELECTOR, "#iters .ax text")) >= 4, "iteration chart has axes")
        if shots:
            drv.execute_script("document.getElementById('iters').scrollIntoView()")
            drv.find_element(By.ID, "iters").screenshot(shots + "-iterations.png")
        drv.find_element(By.ID, "logscale").click()
        check(any("(log)" in t.text for t in drv.find_elements(By.CSS_SELECTOR, "#iters .ax text")),
              "iteration chart switches to log scale")
        drv.find_element(By.ID, "logscale").click()
    stages = drv.find_elements(By.CSS_SELECTOR, "svg.stages rect")
    if stages:
        drv.execute_script("arguments[0].scrollIntoView()", stages[0])
        ActionChains(drv).move_to_element(stages[0]).perform()
        check(tip.is_displayed() and "traced time" in tip.text, f"stages timeline: a stage's tooltip ({tip.text!r})")
        check(len(drv.find_elements(By.CSS_SELECTOR, "svg.stages text")) >= len(stages) + 6,
              "stages timeline: labelled lanes and a time axis")
        if shots:
            drv.find_element(By.CSS_SELECTOR, "svg.stages").screenshot(shots + "-stages.png")
    tl = drv.find_elements(By.ID, "tl")
    if tl:
        drv.find_element(By.ID, "tl-zin").click()
        drv.find_element(By.ID, "tl-zin").click()
        errors = [e for e in drv.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        check(not errors, f"timeline zooms without errors ({errors[:1]})")
        if shots:
            tl[0].screenshot(shots + "-timeline.png")
            drv.find_element(By.ID, "tl-reset").click()
    if shots:
        drv.save_screenshot(shots + "-page.png")
finally:
    drv.quit()
print("html_browser_check: " + ("all checks passed" if not fails else f"{fails} checks failed"))
sys.exit(1 if fails else 0)
