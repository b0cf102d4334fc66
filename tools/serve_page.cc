#include "tools/serve_page.h"

namespace hdrf::tools {
namespace {

const char kPage[] = R"HTML(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hdrf queues</title>
<style>
:root { --bg:#0e1318; --panel:#151c24; --head:#19212b; --line:#243040; --text:#dbe2ea; --muted:#8796a8;
        --accent:#4fb8ff; --good:#47c97a; --warn:#f0a030; --bad:#ff6b6b; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text);
       font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; }
header { position: sticky; top: 0; z-index: 3; display: flex; align-items: center; gap: 18px;
         padding: 10px 20px; background: #111820; border-bottom: 1px solid var(--line); }
h1 { margin: 0; font-size: 16px; font-weight: 650; letter-spacing: .01em; }
h1 .db { color: var(--muted); font-weight: 400; margin-left: 6px; font-size: 13px; }
.stats { color: var(--muted); display: flex; gap: 14px; flex-wrap: wrap; }
.stats b { color: var(--text); font-weight: 600; }
.spacer { flex: 1; }
#status { color: var(--muted); white-space: nowrap; }
#status::before { content: "\25CF"; margin-right: 6px; color: var(--muted); }
#status.live::before { color: var(--good); }
#status.stale::before { color: var(--warn); }
#status.down::before { color: var(--bad); }
.banner { display: none; padding: 8px 20px; background: #33260f; color: #ffd089; border-bottom: 1px solid #4a3716; }
main { padding: 14px 20px 24px; }
h2 { margin: 10px 0 8px; font-size: 11px; font-weight: 650; color: var(--muted);
     text-transform: uppercase; letter-spacing: .09em; }
h2 .note { text-transform: none; letter-spacing: 0; font-weight: 400; margin-left: 8px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr)); gap: 10px; margin-bottom: 16px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 9px 12px 8px; }
.card .top { display: flex; align-items: baseline; gap: 8px; }
.card .nm { font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.card .v { margin-left: auto; font-variant-numeric: tabular-nums; font-weight: 600; }
.card .sub { color: var(--muted); font-size: 11px; }
.card .foot { display: flex; gap: 8px; color: var(--muted); font-size: 11px; white-space: nowrap; }
.card .foot span:first-child { overflow: hidden; text-overflow: ellipsis; }
.card .foot span:last-child { margin-left: auto; }
.card svg { display: block; width: 100%; height: 40px; margin-top: 5px; }
.tablewrap { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; overflow: auto; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; text-align: right; white-space: nowrap; border-bottom: 1px solid #1c2530; }
th { position: sticky; top: 0; background: var(--head); color: var(--muted); font-weight: 600; font-size: 12px; }
th.l, td.l { text-align: left; }
tbody tr:hover td { background: #1a2330; }
td.name { font-weight: 500; }
td.leaf { font-weight: 400; }
.tog { display: inline-block; width: 16px; color: var(--muted); cursor: pointer; user-select: none; }
.bar { display: inline-block; width: 56px; height: 6px; margin-right: 7px; vertical-align: middle;
       background: #243041; border-radius: 3px; overflow: hidden; }
.bar i { display: block; height: 100%; background: var(--accent); }
.dim { color: var(--muted); }
.yes { color: var(--bad); font-weight: 600; }
.st-closed { color: var(--bad); } .st-closing { color: var(--warn); }
form { display: flex; gap: 8px; }
input { background: #0f151c; color: var(--text); border: 1px solid var(--line); border-radius: 6px; padding: 5px 8px; width: 260px; }
button { background: #1f3144; color: var(--text); border: 1px solid #2d4760; border-radius: 6px; padding: 5px 12px; cursor: pointer; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px;
      margin: 8px 0 0; white-space: pre-wrap; min-height: 1em; }
pre:empty { display: none; }
.legend { color: var(--muted); margin: 0 0 8px; max-width: 1100px; font-size: 12px; }
.legend b { color: var(--text); font-weight: 600; }
</style>
</head>
<body>
<header>
  <h1>hdrf<span class="db" id="db"></span></h1>
  <div class="stats" id="stats"></div>
  <div class="spacer"></div>
  <div id="status">connecting&hellip;</div>
</header>
<div class="banner" id="banner"></div>
<main>
  <h2>Top-level queues <span class="note">usage share over time (solid), H-DRF share (dashed)</span><span class="note" id="cardnote"></span></h2>
  <div class="cards" id="cards"></div>
  <h2>Queue tree <span class="note" id="treenote"></span></h2>
  <p class="legend"><b>Usage</b>: the plain usage share, max over resources of allocated / cluster.
  <b>Share</b>: the H-DRF share s(U) of docs/spec.md &sect;4: the queue's non-blocked children are rescaled to
  M&middot;weight, M the smallest key among them, so a non-blocked child that holds nothing makes it 0.
  <b>Key</b>: share / weight; among siblings the non-blocked one with the smallest key is served next.
  Hover a Share or Key cell for why it has its value.</p>
  <div class="tablewrap"><table id="tree"><thead></thead><tbody></tbody></table></div>
  <h2>Explain a job</h2>
  <form id="exform"><input id="job" placeholder="job name" autocomplete="off"><button>Explain</button></form>
  <pre id="exout"></pre>
</main>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const COLORS = ["#4fb8ff", "#47c97a", "#f0a030", "#c38bff", "#ff7a90", "#3fd0c9", "#e8d44d", "#9aa8ff"];
// Small trees come whole each refresh with every queue open; larger ones
// level by level: root's children and the children of each open queue, at
// most LEVEL_LIMIT per parent (docs/tools.md "hdrf serve").
const WHOLE_TREE_MAX = 100, LEVEL_LIMIT = 200, CARDS_MAX = 24, URL_MAX = 4000;
const expanded = new Set(["root"]);
let rows = new Map(), kids = new Map(), whole = null, firstDraw = true, last = null;
let samples = [], lastSampleMs = -1, timer = null, busy = false, again = false, chased = 0, firstViewLogged = false;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function pct(x) {
  if (x === null || x === undefined) return "\u2013";
  const p = x * 100;
  if (p === 0) return "0%";
  if (p < 0.01) return "<0.01%";
  return (p >= 100 ? p.toFixed(0) : p >= 10 ? p.toFixed(1) : p >= 1 ? p.toFixed(2) : p.toFixed(3)) + "%";
}
function num3(x) {
  if (x === 0) return "0";
  const a = Math.abs(x);
  return a >= 1e-3 && a < 1e4 ? String(Number(x.toPrecision(3))) : x.toExponential(2);
}
const byName = (a, b) => a.name.localeCompare(b.name, "en", { numeric: true });
function shortName(r) { const i = r.lastIndexOf("/"); return i < 0 ? r : r.slice(i + 1); }
function fmtInt(n) { return Number(n).toLocaleString("en-US"); }
function clock(ms) { return new Date(ms).toLocaleTimeString("en-GB"); }
async function getJson(url) {
  const r = await fetch(url, { cache: "no-store" });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) { const e = new Error(url + ": HTTP " + r.status); e.status = r.status; e.body = body; throw e; }
  return body;
}
function holdsNothing(q) { return Object.values(q.allocated).every((v) => v === 0); }

// Why a queue's Share is what it is (the cell's title).
function shareWhy(q) {
  const u = " (usage share " + pct(q.usage_share) + ")";
  if (q.share === 0) {
    if (holdsNothing(q)) return "0: " + q.path + " holds nothing";
    if (q.zero_child)
      return "0 because " + q.zero_child + (q.zero_child_empty ? " holds nothing" : " has share 0") +
          " and is not blocked: under Dynamic H-DRF a non-blocked child that holds nothing pulls its siblings'" +
          " rescaled shares, and so this queue's share, to 0 (M = 0)" + u;
    if (q.leaf)
      return "0 because a job of " + q.path + " that holds nothing is not blocked (" +
          fmtInt(q.jobs.Inqueue + q.jobs.Pending) + " waiting): jobs count like a parent's children, so M = 0" + u;
    return "0: every resource it holds is saturated, and s(U) leaves saturated resources out" + u;
  }
  return "s(U) = " + num3(q.share) + ": the dominant share of its rescaled vector, non-blocked children counted" +
      " at M\u00b7weight (M: the smallest key among them), blocked ones as they are" + u;
}
function keyWhy(q) {
  if (q.parent === null) return "root has no siblings: its key orders nothing";
  return "key = share / weight = " + num3(q.share) + " / " + q.weight + " = " + num3(q.key) +
      "; among the children of " + q.parent + " the non-blocked one with the smallest key is served next" +
      (q.blocked ? "; " + q.name + " is blocked, so not a candidate now" : "");
}

function drawHeader(d) {
  $("db").textContent = d.db;
  document.title = "hdrf \u00b7 " + d.db;
  const s = $("stats");
  s.replaceChildren();
  const add = (label, value) => { const e = el("span", "", label + " "); e.appendChild(el("b", "", value)); s.appendChild(e); };
  add("last_seq", fmtInt(d.last_seq));
  add("jobs", fmtInt(d.job_count));
  add("queues", fmtInt(d.queue_count));
  if (d.cluster_human) add("cluster", d.resources.map((r) => shortName(r) + " " + d.cluster_human[r]).join(" \u00b7 "));
  const st = $("status"), b = $("banner");
  if (d.refresh_error) {
    st.className = "stale";
    st.textContent = "state of " + clock(d.refreshed_ms);
    b.style.display = "block";
    b.textContent = "The store could not be read again: " + d.refresh_error +
        ". Showing the state recovered at " + clock(d.refreshed_ms) + ".";
  } else {
    st.className = "live";
    st.textContent = "live \u00b7 " + clock(d.time_ms) + " \u00b7 " + d.source;
    b.style.display = "none";
  }
}

function sparkline(points, key, color, ymax) {
  const NS = "http://www.w3.org/2000/svg", W = 220, H = 40;
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  svg.setAttribute("preserveAspectRatio", "none");
  const base = document.createElementNS(NS, "line");
  base.setAttribute("x1", 0); base.setAttribute("x2", W); base.setAttribute("y1", H - 0.5); base.setAttribute("y2", H - 0.5);
  base.setAttribute("stroke", "#243040");
  svg.appendChild(base);
  const line = (field, dash, width, area) => {
    const pts = [];
    const n = points.length;
    points.forEach((p, i) => {
      if (!p) return;
      const x = n < 2 ? W : (i / (n - 1)) * W;
      const y = H - 2 - (Math.min(p[field], ymax) / ymax) * (H - 4);
      pts.push(x.toFixed(1) + "," + y.toFixed(1));
    });
    if (pts.length === 1) pts.unshift("0," + pts[0].split(",")[1]);
    const pl = document.createElementNS(NS, "polyline");
    pl.setAttribute("points", pts.join(" "));
    pl.setAttribute("fill", "none");
    pl.setAttribute("stroke", color);
    pl.setAttribute("stroke-width", width);
    pl.setAttribute("vector-effect", "non-scaling-stroke");
    if (dash) { pl.setAttribute("stroke-dasharray", "3 3"); pl.setAttribute("opacity", "0.7"); }
    if (area && pts.length) {
      const fill = document.createElementNS(NS, "polygon");
      fill.setAttribute("points", "0," + H + " " + pts.join(" ") + " " + pts[pts.length - 1].split(",")[0] + "," + H);
      fill.setAttribute("fill", color);
      fill.setAttribute("opacity", "0.12");
      svg.appendChild(fill);
    }
    svg.appendChild(pl);
  };
  line("usage_share", false, 1.6, true);
  line("share", true, 1.2, false);
  return svg;
}

function drawCards() {
  const all = (kids.get("root") || []).slice();
  const tops = all.sort((a, b) => (b.usage_share || 0) - (a.usage_share || 0)).slice(0, CARDS_MAX).sort(byName);
  let ymax = 0.01;
  for (const s of samples) for (const k in s.queues) ymax = Math.max(ymax, s.queues[k].usage_share, s.queues[k].share);
  const cards = $("cards");
  cards.replaceChildren();
  tops.forEach((q, i) => {
    const c = el("div", "card");
    const top = el("div", "top");
    top.appendChild(el("span", "nm", q.name));
    top.appendChild(el("span", "sub", "w " + q.weight));
    top.appendChild(el("span", "v", pct(q.usage_share)));
    c.appendChild(top);
    const pts = samples.map((s) => s.queues[q.path] || null);
    c.appendChild(sparkline(pts, q.path, COLORS[i % COLORS.length], ymax));
    const running = q.jobs.Running, waiting = q.jobs.Inqueue + q.jobs.Pending;
    const foot = el("div", "foot");
    foot.appendChild(el("span", "", fmtInt(running) + " run \u00b7 " + fmtInt(waiting) + " wait" +
        (q.blocked ? " \u00b7 blocked" : "")));
    foot.appendChild(el("span", "", "share " + num3(q.share)));
    c.appendChild(foot);
    c.title = q.path + ": usage share " + pct(q.usage_share) + ", H-DRF share " + num3(q.share) + ", key " + num3(q.key);
    cards.appendChild(c);
  });
  if (!tops.length) cards.appendChild(el("div", "dim", "no queues under root"));
  $("cardnote").textContent = all.length > tops.length ? "the " + tops.length + " largest of " + all.length : "";
}

// #open=PATH,PATH (each percent-encoded) opens those queues: a link to a
// view, kept up to date as queues are opened and closed.
function readHash() {
  const m = location.hash.match(/^#open=(.*)$/);
  if (m) for (const p of m[1].split(",")) if (p) expanded.add(decodeURIComponent(p));
}
function writeHash() {
  if (whole) return;
  const open = [...expanded].filter((p) => p !== "root").map(encodeURIComponent);
  history.replaceState(null, "", open.length ? "#open=" + open.join(",") : location.pathname);
}

function toggle(q) {
  if (expanded.has(q.path)) expanded.delete(q.path); else expanded.add(q.path);
  writeHash();
  drawTree(last);
  if (!whole && expanded.has(q.path)) refresh();  // fetch the level just opened
}

function queueRow(d, q) {
  const tr = el("tr");
  const name = el("td", "l name" + (q.leaf ? " leaf" : ""));
  name.style.paddingLeft = (10 + 18 * q.depth) + "px";
  const tog = el("span", "tog", q.leaf ? "" : expanded.has(q.path) ? "\u25BE" : "\u25B8");
  if (!q.leaf) tog.onclick = () => toggle(q);
  name.appendChild(tog);
  name.appendChild(document.createTextNode(q.name));
  name.title = q.path;
  tr.appendChild(name);
  tr.appendChild(el("td", "", String(q.weight)));
  tr.appendChild(el("td", "l st-" + q.state, q.state));
  for (const r of d.resources) {
    const td = el("td", q.allocated[r] === 0 ? "dim" : "", q.allocated_human[r]);
    td.title = r + " " + q.allocated[r] + (d.units[r] ? " " + d.units[r] : "");
    tr.appendChild(td);
  }
  const u = el("td", "l");
  const bar = el("span", "bar"), fill = el("i");
  fill.style.width = Math.min(100, (q.usage_share || 0) * 100).toFixed(1) + "%";
  bar.appendChild(fill);
  u.appendChild(bar);
  u.appendChild(document.createTextNode(pct(q.usage_share)));
  u.title = "max over resources of allocated / cluster: " + pct(q.usage_share);
  tr.appendChild(u);
  const sh = el("td", "", num3(q.share));
  sh.title = shareWhy(q);
  tr.appendChild(sh);
  const k = el("td", "", num3(q.key));
  k.title = keyWhy(q);
  tr.appendChild(k);
  tr.appendChild(el("td", q.blocked ? "l yes" : "l dim", q.blocked ? "yes" : "no"));
  const w = el("td", "", fmtInt(q.jobs.Inqueue + q.jobs.Pending));
  w.title = q.jobs.Inqueue + " Inqueue, " + q.jobs.Pending + " Pending, " + q.jobs.Unknown + " Unknown";
  tr.appendChild(w);
  tr.appendChild(el("td", "", fmtInt(q.jobs.Running)));
  return tr;
}

function noteRow(d, depth, text) {
  const tr = el("tr");
  const td = el("td", "l dim", text);
  td.colSpan = 9 + d.resources.length;
  td.style.paddingLeft = (28 + 18 * depth) + "px";
  tr.appendChild(td);
  return tr;
}

function drawTree(d) {
  const thead = $("tree").tHead;
  thead.replaceChildren();
  const hr = el("tr");
  hr.appendChild(el("th", "l", "Queue"));
  for (const h of ["Weight", "State"]) hr.appendChild(el("th", h === "State" ? "l" : "", h));
  for (const r of d.resources) { const th = el("th", "", shortName(r)); th.title = r + " allocated"; hr.appendChild(th); }
  const tips = {
    Usage: "plain usage share: max over resources of allocated / cluster",
    Share: "H-DRF share s(U) (spec \u00a74): non-blocked children rescaled to M\u00b7weight, so one that holds nothing makes it 0; hover a cell for why",
    Key: "share / weight: among siblings the non-blocked one with the smallest key is served next",
    Blocked: "every child blocked (spec \u00a74)", Waiting: "Inqueue + Pending jobs", Running: "jobs with a task allocated" };
  for (const h of ["Usage", "Share", "Key", "Blocked", "Waiting", "Running"]) {
    const th = el("th", h === "Usage" || h === "Blocked" ? "l" : "", h);
    th.title = tips[h];
    hr.appendChild(th);
  }
  thead.appendChild(hr);
  const body = document.createElement("tbody");
  let shown = 0;
  const walk = (q) => {
    body.appendChild(queueRow(d, q));
    ++shown;
    if (q.leaf || !expanded.has(q.path)) return;
    const list = (kids.get(q.path) || []).slice().sort(byName);
    for (const c of list) walk(c);
    if (!list.length) body.appendChild(noteRow(d, q.depth + 1, "loading\u2026"));
    else if (q.children > list.length)
      body.appendChild(noteRow(d, q.depth + 1, "\u2026 and " + fmtInt(q.children - list.length) +
          " more child queues (the first " + list.length + " by path are shown)"));
  };
  const root = rows.get("root");
  if (root) walk(root);
  $("tree").replaceChild(body, $("tree").tBodies[0]);
  $("treenote").textContent = shown + " of " + fmtInt(d.queue_count) + " queues shown \u00b7 click \u25B8 to open a queue";
}

// Is `path` on screen: every queue above it open?
function onScreen(path) {
  let q = rows.get(path);
  while (q && q.parent !== null) {
    if (!expanded.has(q.parent)) return false;
    q = rows.get(q.parent);
  }
  return !!q;
}

// The URLs of one refresh: the whole tree, or root's level and the level
// of each open queue on screen, a few per URL.
function treeUrls() {
  if (whole) return ["/api/queues"];
  const base = "/api/queues?depth=1&limit=" + LEVEL_LIMIT;
  const urls = [];
  let url = base + "&under=root";
  for (const p of expanded) {
    // Before the first answer, every queue the link opens.
    if (p === "root" || (rows.size && (!onScreen(p) || rows.get(p).leaf))) continue;
    const part = "&under=" + encodeURIComponent(p);
    if (url.length + part.length > URL_MAX) { urls.push(url); url = base; }
    url += part;
  }
  if (url !== base) urls.push(url);
  return urls;
}

async function fetchTree() {
  for (let tries = 0; ; ++tries) {
    try {
      return await Promise.all(treeUrls().map(getJson));
    } catch (e) {
      // An open queue that is gone: forget it and ask again.
      const m = e.body && typeof e.body.error === "string" && e.body.error.match(/^no queue (.*)$/);
      if (e.status !== 404 || !m || tries > 3) throw e;
      expanded.delete(m[1]);
    }
  }
}

async function refresh() {
  if (busy) { again = true; return; }
  busy = true;
  clearTimeout(timer);
  try {
    const since = lastSampleMs >= 0 ? "?since=" + lastSampleMs : "";
    const [parts, h] = await Promise.all([fetchTree(), getJson("/api/history" + since)]);
    const d = parts[0];
    if (whole === null) {
      whole = d.queue_count <= WHOLE_TREE_MAX;
      if (whole) { busy = false; return refresh(); }  // a small tree: take it whole from now on
    }
    rows = new Map();
    kids = new Map();
    for (const part of parts) for (const q of part.queues) rows.set(q.path, q);
    for (const q of rows.values()) {
      if (q.parent === null) continue;
      if (!kids.has(q.parent)) kids.set(q.parent, []);
      kids.get(q.parent).push(q);
    }
    if (firstDraw && whole) for (const q of rows.values()) if (!q.leaf) expanded.add(q.path);
    firstDraw = false;
    // An open queue that came on screen with this answer (a link opening a
    // path deep down): fetch its level now rather than a refresh later.
    const chase = !whole && chased < 16 && [...expanded].some((p) => onScreen(p) && rows.get(p).children > 0 && !kids.has(p));
    chased = chase ? chased + 1 : 0;
    if (chase) again = true;
    for (const s of h.samples) samples.push(s);
    if (samples.length > h.capacity) samples.splice(0, samples.length - h.capacity);
    if (samples.length) lastSampleMs = samples[samples.length - 1].time_ms;
    last = d;
    drawHeader(d);
    drawCards();
    drawTree(d);
    // When the first full view was drawn (its console line carries the
    // browser's wall-clock time in Chromium's log; the tests read it).
    if (!firstViewLogged && !again) {
      firstViewLogged = true;
      console.log("hdrf serve: first view of " + rows.size + " queues drawn");
    }
  } catch (e) {
    $("status").className = "down";
    $("status").textContent = "no answer from hdrf serve \u00b7 retrying";
  }
  busy = false;
  if (again) { again = false; return refresh(); }
  timer = setTimeout(refresh, 1000);
}

console.log("hdrf serve: page started");
readHash();
$("exform").onsubmit = async (ev) => {
  ev.preventDefault();
  const name = $("job").value.trim();
  const out = $("exout");
  if (!name) return;
  try {
    const r = await fetch("/api/jobs/" + encodeURIComponent(name) + "/explain", { cache: "no-store" });
    const e = await r.json();
    if (!r.ok) { out.textContent = e.error || ("HTTP " + r.status); return; }
    const lines = ["job " + e.job + " in " + e.queue + ": key " + num3(e.key) + ", " +
        (e.blocked ? "blocked" : "not blocked") + ", " + (e.schedulable ? "one more task fits" : "no task fits") +
        (e.next ? ", NEXT to run" : "")];
    for (const b of e.blocked_by) lines.push("  blocked by: " + b);
    for (const u of e.unfit_because) lines.push("  does not fit: " + u);
    for (const lv of e.levels) {
      lines.push("  among the children of " + lv.parent + ":");
      for (const s of lv.siblings) lines.push("    " + (s.on_path ? "* " : "  ") + s.name + "  key " + num3(s.key) + (s.blocked ? " (blocked)" : ""));
    }
    out.textContent = lines.join("\n");
  } catch (err) {
    out.textContent = String(err);
  }
};

refresh();
</script>
</body>
</html>
)HTML";

}  // namespace

const char* ServePageHtml() { return kPage; }

}  // namespace hdrf::tools
