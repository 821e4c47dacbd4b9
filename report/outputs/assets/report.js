// report.js - the HTML export's page: reads the JSON in #gp-data and draws the
// operator table (sortable, filterable, sort state in aria-sort), the phase
// bars and the iteration chart (SVG with axes), and the op timeline (canvas,
// zoom and pan, launch->op links). No library, no network.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("gp-data").textContent);
  const C = { launch: "#e4a33a", queue: "#9b9b9b", execute: "#3a7be4", sync: "#d9534f" };
  const NS = "http://www.w3.org/2000/svg";
  const tip = document.getElementById("tip");
  function fmt(ns) {
    const a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
    if (a >= 1e6) return (ns / 1e6).toFixed(2) + " ms";
    if (a >= 1e3) return (ns / 1e3).toFixed(1) + " us";
    return Math.round(ns) + " ns";
  }
  function el(tag, attrs, parent, text) {
    const e = tag.startsWith("svg:") ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function showTip(ev, text) {
    tip.textContent = text;
    tip.style.display = "block";
    tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 8) + "px";
    tip.style.top = ev.clientY + 14 + "px";
  }
  function hideTip() { tip.style.display = "none"; }
  document.addEventListener("mousemove", function (ev) {
    const t = ev.target.closest && ev.target.closest("[data-tip]");
    if (t) showTip(ev, t.getAttribute("data-tip"));
    else if (ev.target.id !== "tl") hideTip();
  });
  function ticks(max, n) { // "nice" ticks from 0 to max
    if (!(max > 0)) return [0];
    const raw = max / n, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    const step = (m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10) * p, out = [];
    for (let v = 0; v <= max * 1.0001; v += step) out.push(v);
    return out;
  }

  // ---- operator table -------------------------------------------------------
  const cols = [
    ["name", "operator", "s"], ["count", "count", "n"], ["total", "total", "t"], ["launch", "launch", "t"],
    ["queue", "queue", "t"], ["execute", "execute", "t"], ["sync", "sync", "t"], ["p50", "exec p50", "t"],
    ["p95", "exec p95", "t"], ["max", "exec max", "t"], ["verdict", "verdict and advice", "v"]];
  let sortKey = "total", sortDir = -1, filter = "";
  const table = document.getElementById("ops"), thead = el("thead", {}, table), tbody = el("tbody", {}, table);
  const hr = el("tr", {}, thead);
  cols.forEach(function (c) {
    const th = el("th", { scope: "col", "aria-sort": c[0] === sortKey ? "descending" : "none", "data-key": c[0] }, hr);
    const b = el("button", { type: "button" }, th, c[1]);
    b.addEventListener("click", function () {
      sortDir = sortKey === c[0] ? -sortDir : (c[2] === "s" || c[2] === "v" ? 1 : -1);
      sortKey = c[0];
      renderTable();
    });
  });
  function renderTable() {
    hr.querySelectorAll("th").forEach(function (th) {
      th.setAttribute("aria-sort", th.dataset.key !== sortKey ? "none" : sortDir > 0 ? "ascending" : "descending");
    });
    const f = filter.toLowerCase();
    const rows = D.operators.filter(function (o) { return !f || o.name.toLowerCase().includes(f); });
    rows.sort(function (a, b) {
      const x = a[sortKey], y = b[sortKey];
      return (typeof x === "string" ? x.localeCompare(y) : x - y) * sortDir;
    });
    tbody.textContent = "";
    rows.forEach(function (o) {
      const tr = el("tr", {}, tbody);
      const share = function (v) { return o.total ? " (" + (100 * v / o.total).toFixed(1) + "%)" : ""; };
      tr.setAttribute("data-tip", o.long_name + "\ncount " + o.count + "\ntotal " + fmt(o.total) +
        "\nlaunch " + fmt(o.launch) + share(o.launch) + "\nqueue " + fmt(o.queue) + "\nexecute " + fmt(o.execute) +
        share(o.execute) + "\nsync " + fmt(o.sync) + share(o.sync) + "\nexecute p50 " + fmt(o.p50) + ", p95 " +
        fmt(o.p95) + ", max " + fmt(o.max));
      cols.forEach(function (c) {
        const td = el("td", {}, tr);
        if (c[2] === "s") td.textContent = o.name;
        else if (c[2] === "n") td.textContent = o.count;
        else if (c[2] === "t") td.textContent = fmt(o[c[0]]);
        else {
          td.className = "v v-" + o.verdict;
          el("b", {}, td, o.verdict);
          if (o.reason) td.appendChild(document.createTextNode(" (" + o.reason + ")"));
          if (o.advice) el("div", { class: "adv" }, td, o.advice);
          if (o.note) el("div", { class: "adv note" }, td, o.note);
        }
      });
    });
    document.getElementById("ops-count").textContent = rows.length + " of " + D.operators.length + " operators";
  }
  document.getElementById("filter").addEventListener("input", function (ev) { filter = ev.target.value; renderTable(); });
  renderTable();

  // ---- phase bars -----------------------------------------------------------
  (function () {
    const top = D.operators.slice().sort(function (a, b) { return b.total - a.total; }).slice(0, D.top);
    const svg = document.getElementById("phases"), left = 240, w = 620, bar = 18, gap = 6;
    const h = top.length * (bar + gap) + 50;
    svg.setAttribute("width", left + w + 40); svg.setAttribute("height", h);
    const max = Math.max.apply(null, top.map(function (o) { return o.launch + o.execute + o.sync; }).concat([1]));
    const tk = ticks(max, 6), xmax = tk[tk.length - 1] || max, sx = function (v) { return left + w * v / xmax; };
    const ax = el("svg:g", { class: "ax" }, svg), y0 = top.length * (bar + gap) + 4;
    el("svg:line", { x1: left, x2: left + w, y1: y0, y2: y0 }, ax);
    tk.forEach(function (v) {
      el("svg:line", { x1: sx(v), x2: sx(v), y1: y0, y2: y0 + 4 }, ax);
      el("svg:text", { x: sx(v), y: y0 + 16, "text-anchor": "middle" }, ax, fmt(v));
    });
    el("svg:text", { x: left + w / 2, y: y0 + 32, "text-anchor": "middle" }, ax, "time per operator (launch + execute + sync)");
    top.forEach(function (o, i) {
      const y = i * (bar + gap);
      el("svg:text", { x: left - 6, y: y + 13, "text-anchor": "end", "font-size": 12 }, svg,
        o.name.length > 34 ? o.name.slice(0, 33) + "\u2026" : o.name);
      let x = 0;
      ["launch", "execute", "sync"].forEach(function (k) {
        el("svg:rect", { x: sx(x), y: y, width: Math.max(0, sx(x + o[k]) - sx(x)), height: bar, fill: C[k],
          "data-tip": o.name + "\n" + k + " " + fmt(o[k]) + " (" + (o.total ? (100 * o[k] / o.total).toFixed(1) : 0) +
            "% of " + fmt(o.total) + ")\nverdict " + o.verdict }, svg);
        x += o[k];
      });
    });
  })();

  // ---- iteration chart ------------------------------------------------------
  function renderIters() {
    const svg = document.getElementById("iters");
    if (!svg) return;
    svg.textContent = "";
    const log = document.getElementById("logscale").checked, it = D.iterations;
    const left = 70, w = 820, h = 240, top = 10;
    svg.setAttribute("width", left + w + 20); svg.setAttribute("height", top + h + 50);
    // the scale comes from the complete iterations: an open last one (it ends
    // with the window) would flatten every other bar; it is clipped and marked
    const closed = it.filter(function (r) { return !r.open; }), scaleOn = closed.length ? closed : it;
    const max = Math.max.apply(null, scaleOn.map(function (r) { return Math.max(r.dur, r.launch + r.execute + r.sync); }).concat([1]));
    const min = Math.max(1, Math.min.apply(null, it.map(function (r) { return r.dur || max; }).concat([max])) / 2);
    let tk, sy;
    if (log) {
      const a = Math.floor(Math.log10(min)), b = Math.ceil(Math.log10(max));
      tk = []; for (let e = a; e <= b; e++) tk.push(Math.pow(10, e));
      sy = function (v) { return top + h - h * (Math.log10(Math.max(v, tk[0])) - a) / Math.max(1, b - a); };
    } else {
      tk = ticks(max, 5);
      const ymax = tk[tk.length - 1] || max;
      sy = function (v) { return top + h - h * v / ymax; };
    }
    const bw = w / Math.max(1, it.length), ax = el("svg:g", { class: "ax" }, svg);
    el("svg:line", { x1: left, x2: left, y1: top, y2: top + h }, ax);
    el("svg:line", { x1: left, x2: left + w, y1: top + h, y2: top + h }, ax);
    tk.forEach(function (v) {
      el("svg:line", { x1: left - 4, x2: left, y1: sy(v), y2: sy(v) }, ax);
      el("svg:text", { x: left - 6, y: sy(v) + 4, "text-anchor": "end" }, ax, fmt(v));
    });
    const step = Math.max(1, Math.ceil(it.length / 10));
    for (let i = 0; i < it.length; i += step)
      el("svg:text", { x: left + i * bw + bw / 2, y: top + h + 15, "text-anchor": "middle" }, ax, String(it[i].iter));
    el("svg:text", { x: left + w / 2, y: top + h + 32, "text-anchor": "middle" }, ax, "iteration");
    el("svg:text", { x: 12, y: top + h / 2, transform: "rotate(-90 12 " + (top + h / 2) + ")", "text-anchor": "middle" },
      ax, "time per iteration" + (log ? " (log)" : ""));
    it.forEach(function (r, i) {
      const x = left + i * bw, tipText = "iteration " + r.iter + (r.open ? " (open: ends with the window)" : "") +
        "\nduration " + fmt(r.dur) + (r.outlier ? "  OUTLIER" : "") + "\nops " + r.ops + "\nlaunch " + fmt(r.launch) +
        "\nqueue " + fmt(r.queue) + "\nexecute " + fmt(r.execute) + "\nsync " + fmt(r.sync);
      let base = 0;
      ["launch", "execute", "sync"].forEach(function (k) {
        const y1 = Math.max(top, sy(base)), y2 = Math.max(top, sy(base + r[k]));
        if (r[k] > 0) el("svg:rect", { x: x, y: Math.min(y1, y2), width: Math.max(bw - (bw > 3 ? 1 : 0), 0.5),
          height: Math.abs(y1 - y2), fill: C[k], "data-tip": tipText }, svg);
        base += r[k];
      });
      const clipped = r.dur > max * 1.0001 && !log;
      el("svg:circle", { cx: x + bw / 2, cy: clipped ? top + 3 : sy(r.dur), r: r.outlier ? 4 : 2.5,
        fill: r.outlier ? "red" : clipped ? "#fff" : "#111", stroke: clipped ? "#111" : "none",
        class: r.outlier ? "outlier" : clipped ? "clipped" : "iter", "data-tip": tipText + (clipped ? "\n(off the scale)" : "") }, svg);
    });
  }
  const ls = document.getElementById("logscale");
  if (ls) { ls.addEventListener("change", renderIters); renderIters(); }

  // ---- op timeline ----------------------------------------------------------
  (function () {
    const cv = document.getElementById("tl");
    if (!cv || !D.timeline) return;
    const T = D.timeline, lanes = T.lanes, lh = 22, lw = 170;
    const per = lanes.map(function () { return []; });
    T.ev.forEach(function (e, i) { per[e[0]].push(i); });
    // per lane, sorted by start; a host lane holds the launching calls of the ops
    per.forEach(function (a) { a.sort(function (x, y) { return T.ev[x][1] - T.ev[y][1]; }); });
    let v0 = T.t0, v1 = T.t1;
    const dpr = window.devicePixelRatio || 1;
    const W = Math.min(1200, document.body.clientWidth - 20), H = lanes.length * lh + 24;
    cv.width = W * dpr; cv.height = H * dpr; cv.style.width = W + "px"; cv.style.height = H + "px";
    const g = cv.getContext("2d");
    g.scale(dpr, dpr);
    const sx = function (t) { return lw + (W - lw) * (t - v0) / (v1 - v0); };
    const col = { kernel: C.execute, memcpy: "#5cb85c", memset: "#8e6cc0", call: C.launch };
    function draw() {
      g.clearRect(0, 0, W, H);
      g.font = "11px sans-serif";
      lanes.forEach(function (l, i) {
        g.fillStyle = i % 2 ? "#fafafa" : "#f0f0f0"; g.fillRect(0, i * lh, W, lh);
        g.fillStyle = "#222"; g.fillText(l.name.slice(0, 26), 4, i * lh + 15);
      });
      let shown = 0;
      per.forEach(function (a, li) {
        let lastX = -1;
        a.forEach(function (i) {
          const e = T.ev[i];
          if (e[2] < v0 || e[1] > v1) return;
          const x0 = Math.max(lw, sx(e[1])), x1 = Math.min(W, sx(e[2]));
          if (x1 < lastX + 0.5 && x1 - x0 < 0.5) return; // many ops in one pixel: drawn once
          lastX = x1; shown++;
          g.fillStyle = col[e[4]] || "#777";
          g.fillRect(x0, li * lh + 3, Math.max(1, x1 - x0), lh - 6);
        });
      });
      if (shown < 3000) { // launch -> op links when zoomed in enough to read them
        g.strokeStyle = "rgba(0,0,0,.35)"; g.beginPath();
        T.ev.forEach(function (e) {
          if (e[6] < 0 || e[1] > v1 || e[2] < v0) return;
          const c = T.ev[e[6]];
          g.moveTo(sx(c[1]), c[0] * lh + lh - 3); g.lineTo(sx(e[1]), e[0] * lh + 3);
        });
        g.stroke();
      }
      g.fillStyle = "#444"; g.strokeStyle = "#888";
      ticks(v1 - v0, 8).forEach(function (d) {
        const x = sx(v0 + d); if (x > W) return;
        g.beginPath(); g.moveTo(x, H - 24); g.lineTo(x, H - 19); g.stroke();
        g.fillText("+" + fmt(d * 1000), x - 10, H - 8);
      });
      g.fillText("from " + fmt(v0 * 1000), 4, H - 8);
    }
    function hit(ev) {
      const r = cv.getBoundingClientRect(), x = ev.clientX - r.left, li = Math.floor((ev.clientY - r.top) / lh);
      if (li < 0 || li >= lanes.length || x < lw) return -1;
      const t = v0 + (x - lw) * (v1 - v0) / (W - lw), slop = 2 * (v1 - v0) / (W - lw);
      const a = per[li];
      let lo = 0, hi = a.length;
      while (lo < hi) { const m = (lo + hi) >> 1; if (T.ev[a[m]][1] <= t + slop) lo = m + 1; else hi = m; }
      for (let k = lo - 1; k >= 0 && k >= lo - 64; k--) if (T.ev[a[k]][2] >= t - slop) return a[k];
      return -1;
    }
    let drag = null;
    cv.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, v0: v0, v1: v1 }; });
    window.addEventListener("mouseup", function () { drag = null; });
    cv.addEventListener("mousemove", function (ev) {
      if (drag) {
        const dt = (ev.clientX - drag.x) * (drag.v1 - drag.v0) / (W - lw);
        v0 = drag.v0 - dt; v1 = drag.v1 - dt; draw(); return;
      }
      const i = hit(ev);
      if (i < 0) { hideTip(); return; }
      const e = T.ev[i];
      showTip(ev, (e[4] === "call" ? "launch of " : "") + T.names[e[3]] + "\n" + lanes[e[0]].name +
        "\nstart +" + fmt((e[1] - T.t0) * 1000) + ", duration " + fmt((e[2] - e[1]) * 1000) +
        (e[5] ? "\ncorrelation " + e[5] : "") + (e[7] !== undefined ? "\nlaunch " + fmt(e[7]) + "\nqueue " + fmt(e[8]) +
        "\nexecute " + fmt(e[9]) : ""));
    });
    cv.addEventListener("mouseleave", hideTip);
    cv.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      const r = cv.getBoundingClientRect(), x = Math.max(lw, ev.clientX - r.left);
      const t = v0 + (x - lw) * (v1 - v0) / (W - lw), k = ev.deltaY > 0 ? 1.25 : 0.8;
      v0 = t - (t - v0) * k; v1 = t + (v1 - t) * k; draw();
    }, { passive: false });
    document.getElementById("tl-reset").addEventListener("click", function () { v0 = T.t0; v1 = T.t1; draw(); });
    document.getElementById("tl-zin").addEventListener("click", function () {
      const m = (v0 + v1) / 2, d = (v1 - v0) / 4; v0 = m - d; v1 = m + d; draw(); });
    draw();
  })();
})();
