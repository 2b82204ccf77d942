// starmap.js: the star map, drawn in a canvas from the layout the kernel's starmap package
// computes (GET /api/v1/memory/starmap: the desktop's Worlds layout and palette, fetched once per
// load; issue 28 measured this against server-rendered frames). Pan by dragging, zoom with the
// wheel, a pinch or the buttons, tap a star to open its facts; search highlights and centres,
// the kind filter dims the others, the scope filter reloads. window.starmapStats holds the
// timings the E2E test reports.
import * as api from "./api.js";
import { t } from "./i18n.js";
import { $, el, guard } from "./ui.js";

const cache = new Map(); // scope → Promise<scene>

// scene fetches (once) the laid-out graph of a scope ("" all).
export function scene(scope) {
  if (!cache.has(scope)) {
    const p = api.json("GET", "/api/v1/memory/starmap" + (scope ? "?scope=" + encodeURIComponent(scope) : ""));
    p.catch(() => cache.delete(scope));
    cache.set(scope, p);
  }
  return cache.get(scope);
}

export function invalidate() { cache.clear(); }

// A page opened on the star map asks for its layout at once, beside the sign-in check.
if (location.hash.startsWith("#starmap")) scene("").catch(() => { /* show() asks again */ });

const stats = (window.starmapStats = { frames: 0 });
const sky = $("sky");
const ctx = sky.getContext("2d", { alpha: false });
let sc = null; // the scene drawn
let grid = null; // hit-test buckets
let view = { cx: 0, cy: 0, zoom: 1, fit: 1 }; // sky point at the centre; pixels per sky unit
let selected = -1, matches = new Set(), kindFilter = -1, queued = 0, settle = 0;
// The last full frame and its view: while the user drags, wheels or pinches, frames are that
// image moved and scaled (the desktop draws aliased while dragging); a full frame follows
// when the view rests.
const last = document.createElement("canvas");
let lastView = null;
let openFacts = () => {};

// onTap sets what a tapped star opens (the entity sheet, by entity id).
export function onTap(fn) { openFacts = fn; }

export async function show() {
  const scope = $("sky-scope").value;
  stats.start = performance.now();
  $("sky-status").textContent = t("Loading the star map…");
  const s = await scene(scope);
  stats.fetched = performance.now();
  if (s !== sc) load(s);
  resize();
  draw();
  stats.firstFrame = performance.now();
  $("sky-status").textContent = `${sc.id.length} ${t("stars")}`;
}

function load(s) {
  sc = s;
  selected = -1;
  matches = new Set();
  const kinds = $("sky-kind");
  const keep = kinds.value;
  kinds.replaceChildren(kinds.firstElementChild, ...s.kinds.map((k, i) => { const o = el("option", "", k || "—"); o.value = String(i); return o; }));
  kinds.value = s.kinds[Number(keep)] !== undefined ? keep : "";
  kindFilter = kinds.value === "" ? -1 : Number(kinds.value);
  index();
  fitView();
}

// index buckets the stars in a grid of about 4 stars a cell, for hit-testing.
function index() {
  const n = sc.id.length, r = Math.max(sc.radius, 1);
  const side = Math.max(1, Math.ceil(Math.sqrt(n / 4)));
  grid = { side, cell: (2 * r) / side, r, cells: new Map() };
  for (let i = 0; i < n; i++) {
    const k = cellOf(sc.x[i], sc.y[i]);
    let c = grid.cells.get(k);
    if (!c) grid.cells.set(k, (c = []));
    c.push(i);
  }
}

const clampCell = (v) => Math.min(grid.side - 1, Math.max(0, Math.floor((v + grid.r) / grid.cell)));
const cellOf = (x, y) => clampCell(y) * grid.side + clampCell(x);

function resize() {
  const dpr = window.devicePixelRatio || 1;
  const w = sky.clientWidth, h = sky.clientHeight;
  if (sky.width !== Math.round(w * dpr) || sky.height !== Math.round(h * dpr)) {
    sky.width = Math.round(w * dpr);
    sky.height = Math.round(h * dpr);
  }
  const fit = (0.45 * Math.min(w, h)) / Math.max(sc ? sc.radius : 1, 1e-9);
  if (view.fit !== fit) { view.zoom *= fit / view.fit; view.fit = fit; }
}

function fitView() {
  const w = sky.clientWidth || 1, h = sky.clientHeight || 1;
  view.fit = (0.45 * Math.min(w, h)) / Math.max(sc.radius, 1e-9);
  view = { cx: 0, cy: 0, zoom: view.fit, fit: view.fit };
}

// the same radius as the desktop (starmap.StarRadius)
const scale = () => Math.min(8, Math.max(0.5, Math.sqrt(view.zoom / view.fit)));
const radius = (m, s) => (1.5 + 1.3 * Math.log1p(m)) * s;
const bright = (m) => 0.45 + 0.55 * Math.min(1, Math.log1p(m) / Math.log1p(200));

function toPx(i, w, h) { return [(sc.x[i] - view.cx) * view.zoom + w / 2, (sc.y[i] - view.cy) * view.zoom + h / 2]; }

export function draw() {
  if (!sc) return;
  clearTimeout(settle);
  const t0 = performance.now();
  const part = {};
  const dpr = window.devicePixelRatio || 1;
  const w = sky.width / dpr, h = sky.height / dpr;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const bg = ctx.createRadialGradient(w / 2, h / 2, 0, w / 2, h / 2, Math.max(w, h) * 0.75);
  bg.addColorStop(0, "#1b2046");
  bg.addColorStop(1, "#070914");
  ctx.fillStyle = bg;
  ctx.fillRect(0, 0, w, h);
  const n = sc.id.length, px = new Float32Array(2 * n), s = scale();
  for (let i = 0; i < n; i++) { const p = toPx(i, w, h); px[2 * i] = p[0]; px[2 * i + 1] = p[1]; }
  const dim = (i) => kindFilter >= 0 && sc.kind[i] !== kindFilter;
  // Edges: one path per relation class (bright) and one for the dimmed.
  const e = sc.edges;
  ctx.lineWidth = Math.min(1.5, 0.6 * s);
  for (let c = 0; c < sc.relation_colors.length; c++) {
    for (const faint of [false, true]) {
      ctx.beginPath();
      let any = false;
      for (let k = 0; k < e.length; k += 3) {
        if (e[k + 2] !== c || (dim(e[k]) || dim(e[k + 1])) !== faint) continue;
        const a = e[k], b = e[k + 1];
        const ax = px[2 * a], ay = px[2 * a + 1], bx = px[2 * b], by = px[2 * b + 1];
        if ((ax < 0 && bx < 0) || (ay < 0 && by < 0) || (ax > w && bx > w) || (ay > h && by > h)) continue;
        ctx.moveTo(ax, ay);
        ctx.lineTo(bx, by);
        any = true;
      }
      if (!any) continue;
      ctx.strokeStyle = sc.relation_colors[c];
      ctx.globalAlpha = faint ? 0.06 : c === 0 ? 0.22 : 0.4;
      ctx.stroke();
    }
  }
  part.edges = performance.now() - t0;
  // Stars: glows, then by kind and brightness band, one path each.
  ctx.globalAlpha = 1;
  for (let i = 0; i < n; i++) {
    if (!(sc.flags[i] & 4) || dim(i)) continue;
    const x = px[2 * i], y = px[2 * i + 1], r = radius(sc.mentions[i], s) * 4;
    if (x < -r || y < -r || x > w + r || y > h + r) continue;
    const g = ctx.createRadialGradient(x, y, 0, x, y, r);
    g.addColorStop(0, sc.kind_colors[sc.kind[i]] + "88");
    g.addColorStop(1, sc.kind_colors[sc.kind[i]] + "00");
    ctx.fillStyle = g;
    ctx.fillRect(x - r, y - r, 2 * r, 2 * r);
  }
  const bands = 4;
  for (let k = 0; k < sc.kinds.length; k++) {
    for (let band = 0; band < bands + 1; band++) {
      ctx.beginPath();
      let any = false;
      for (let i = 0; i < n; i++) {
        if (sc.kind[i] !== k) continue;
        const d = dim(i);
        const b = d ? bands : Math.min(bands - 1, Math.floor(((bright(sc.mentions[i]) - 0.45) / 0.55) * bands));
        if (b !== band) continue;
        const x = px[2 * i], y = px[2 * i + 1], r = radius(sc.mentions[i], s);
        if (x < -r || y < -r || x > w + r || y > h + r) continue;
        ctx.moveTo(x + r, y);
        ctx.arc(x, y, r, 0, 2 * Math.PI);
        any = true;
      }
      if (!any) continue;
      ctx.fillStyle = sc.kind_colors[k];
      ctx.globalAlpha = band === bands ? 0.15 : 0.5 + (0.5 * (band + 1)) / bands;
      ctx.fill();
    }
  }
  ctx.globalAlpha = 1;
  // Rings: pinned stars, search matches, the selected star.
  const ring = (i, color, width, pad) => {
    const r = radius(sc.mentions[i], s) + pad;
    ctx.beginPath();
    ctx.arc(px[2 * i], px[2 * i + 1], r, 0, 2 * Math.PI);
    ctx.strokeStyle = color;
    ctx.lineWidth = width;
    ctx.stroke();
  };
  for (let i = 0; i < n; i++) if (sc.flags[i] & 1 && !dim(i)) ring(i, "#ffffffaa", 1, 2);
  for (const i of matches) ring(i, "#ffe680", 2, 4);
  if (selected >= 0) ring(selected, "#ffffff", 2.5, 5);
  part.stars = performance.now() - t0 - part.edges;
  labels(px, w, h, s, dim);
  part.labels = performance.now() - t0 - part.edges - part.stars;
  if (last.width !== sky.width || last.height !== sky.height) { last.width = sky.width; last.height = sky.height; }
  last.getContext("2d").drawImage(sky, 0, 0);
  lastView = { ...view };
  stats.frames++;
  stats.lastFrame = performance.now();
  stats.drawMs = stats.lastFrame - t0;
  stats.parts = part;
  stats.full = (stats.full || 0) + 1;
}

// quick draws the last full frame moved and scaled to the current view, and asks for a full
// frame once the view rests.
function quick() {
  if (!lastView) { draw(); return; }
  const t0 = performance.now();
  const dpr = window.devicePixelRatio || 1;
  const w = sky.width / dpr, h = sky.height / dpr, k = view.zoom / lastView.zoom;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.globalAlpha = 1;
  ctx.fillStyle = "#0b0e22";
  ctx.fillRect(0, 0, w, h);
  ctx.drawImage(last, (w / 2) * (1 - k) + (lastView.cx - view.cx) * view.zoom, (h / 2) * (1 - k) + (lastView.cy - view.cy) * view.zoom, w * k, h * k);
  stats.frames++;
  stats.lastFrame = performance.now();
  stats.quickMs = stats.lastFrame - t0;
  if (stats.moveAt !== undefined) { (stats.panLatency ||= []).push(stats.lastFrame - stats.moveAt); stats.moveAt = undefined; }
  clearTimeout(settle);
  settle = setTimeout(draw, 150);
}

// labels draws names without overlap: the selected star, matches, hubs, then by size, while
// they are large enough to read.
function labels(px, w, h, s, dim) {
  const order = [];
  for (let i = 0; i < sc.id.length; i++) {
    const x = px[2 * i], y = px[2 * i + 1];
    if (x < 0 || y < 0 || x > w || y > h || dim(i)) continue;
    const r = radius(sc.mentions[i], s);
    const pri = i === selected ? 1e9 : matches.has(i) ? 1e8 : (sc.flags[i] & 2 ? 1e4 : 0) + r;
    if (pri >= 1e4 || r * 1.8 >= 11) order.push([pri, i]);
  }
  order.sort((a, b) => b[0] - a[0]);
  const taken = [[0, h - 30, 140, h]]; // the star count in the corner
  ctx.textBaseline = "middle";
  let drawn = 0;
  for (const [, i] of order) {
    if (drawn >= 200) break;
    const size = Math.round(Math.min(16, Math.max(sc.flags[i] & 2 ? 13 : 11, radius(sc.mentions[i], s) * 1.8)));
    ctx.font = `${size}px system-ui, "Noto Sans", "Noto Sans CJK SC", sans-serif`;
    const text = sc.label[i], tw = ctx.measureText(text).width;
    const x = px[2 * i] + radius(sc.mentions[i], s) + 4, y = px[2 * i + 1];
    const box = [x - 2, y - size / 2 - 1, x + tw + 2, y + size / 2 + 1];
    if (taken.some((b) => box[0] < b[2] && box[2] > b[0] && box[1] < b[3] && box[3] > b[1])) continue;
    taken.push(box);
    ctx.fillStyle = "#070914bb";
    ctx.fillRect(box[0], box[1], box[2] - box[0], box[3] - box[1]);
    ctx.fillStyle = i === selected || matches.has(i) ? "#fff3b0" : "#e8eaf6";
    ctx.fillText(text, x, y);
    drawn++;
  }
}

function redraw(fast) {
  if (queued) cancelAnimationFrame(queued);
  queued = requestAnimationFrame(() => { queued = 0; if (fast) quick(); else draw(); });
}

// hit returns the star under the view pixel (x, y), -1 for none (the nearest within its radius
// and a finger's slop).
export function hit(x, y) {
  if (!sc) return -1;
  const w = sky.clientWidth, h = sky.clientHeight, s = scale();
  const slop = 8, reach = (radius(200, s) + slop) / view.zoom;
  const sx = (x - w / 2) / view.zoom + view.cx, sy = (y - h / 2) / view.zoom + view.cy;
  let best = -1, bestD = Infinity;
  for (let cy = clampCell(sy - reach); cy <= clampCell(sy + reach); cy++) {
    for (let cx = clampCell(sx - reach); cx <= clampCell(sx + reach); cx++) {
      for (const i of grid.cells.get(cy * grid.side + cx) || []) {
        const dx = (sc.x[i] - sx) * view.zoom, dy = (sc.y[i] - sy) * view.zoom, d = Math.hypot(dx, dy);
        if (d <= radius(sc.mentions[i], s) + slop && d < bestD) { best = i; bestD = d; }
      }
    }
  }
  return best;
}

// ---- interaction -----------------------------------------------------------------------------

const pointers = new Map();
let moved = 0, pinch = 0;

sky.addEventListener("pointerdown", (e) => {
  sky.setPointerCapture(e.pointerId);
  pointers.set(e.pointerId, [e.offsetX, e.offsetY]);
  moved = 0;
  if (pointers.size === 2) { const [a, b] = [...pointers.values()]; pinch = Math.hypot(a[0] - b[0], a[1] - b[1]); }
});
sky.addEventListener("pointermove", (e) => {
  const p = pointers.get(e.pointerId);
  if (!p) return;
  const dx = e.offsetX - p[0], dy = e.offsetY - p[1];
  pointers.set(e.pointerId, [e.offsetX, e.offsetY]);
  if (pointers.size === 2) {
    const [a, b] = [...pointers.values()], d = Math.hypot(a[0] - b[0], a[1] - b[1]);
    if (pinch > 0) zoomAt((a[0] + b[0]) / 2, (a[1] + b[1]) / 2, d / pinch);
    pinch = d;
    moved = 99;
    return;
  }
  moved += Math.abs(dx) + Math.abs(dy);
  stats.moveAt ??= performance.now();
  view.cx -= dx / view.zoom;
  view.cy -= dy / view.zoom;
  redraw(true);
});
const release = (e) => {
  const tap = pointers.size === 1 && moved < 8 && e.type === "pointerup";
  pointers.delete(e.pointerId);
  if (pointers.size < 2) pinch = 0;
  if (tap) select(hit(e.offsetX, e.offsetY), true);
};
sky.addEventListener("pointerup", release);
sky.addEventListener("pointercancel", release);
sky.addEventListener("wheel", (e) => {
  e.preventDefault();
  zoomAt(e.offsetX, e.offsetY, Math.exp(-e.deltaY * 0.0015));
}, { passive: false });
sky.addEventListener("keydown", (e) => {
  const step = 60 / view.zoom;
  const keys = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
  if (keys[e.key]) { view.cx += keys[e.key][0]; view.cy += keys[e.key][1]; redraw(); e.preventDefault(); }
  else if (e.key === "+" || e.key === "=") zoomAt(sky.clientWidth / 2, sky.clientHeight / 2, 1.4);
  else if (e.key === "-") zoomAt(sky.clientWidth / 2, sky.clientHeight / 2, 1 / 1.4);
});

function zoomAt(x, y, f, fast = true) {
  const w = sky.clientWidth, h = sky.clientHeight;
  const z = Math.min(view.fit * 400, Math.max(view.fit * 0.2, view.zoom * f));
  const sx = (x - w / 2) / view.zoom + view.cx, sy = (y - h / 2) / view.zoom + view.cy;
  view.zoom = z;
  view.cx = sx - (x - w / 2) / z;
  view.cy = sy - (y - h / 2) / z;
  redraw(fast);
}

// select marks star i (-1: none); open shows its facts.
function select(i, open) {
  selected = i;
  redraw();
  if (i >= 0 && open) guard(() => openFacts(sc.id[i]));
}

// centre brings star i to the middle, zoomed in enough to read its neighbourhood.
function centre(i) {
  view.cx = sc.x[i];
  view.cy = sc.y[i];
  view.zoom = Math.max(view.zoom, view.fit * 6);
  select(i, false);
}

$("sky-in").addEventListener("click", () => zoomAt(sky.clientWidth / 2, sky.clientHeight / 2, 1.5, false));
$("sky-out").addEventListener("click", () => zoomAt(sky.clientWidth / 2, sky.clientHeight / 2, 1 / 1.5, false));
$("sky-fit").addEventListener("click", () => { fitView(); redraw(); });
$("sky-kind").addEventListener("change", () => { kindFilter = $("sky-kind").value === "" ? -1 : Number($("sky-kind").value); redraw(); });
$("sky-scope").addEventListener("change", () => guard(show));
new ResizeObserver(() => { if (sc && !$("view-starmap").hidden && sky.clientWidth) { resize(); redraw(); } }).observe(sky);

let searchTimer = 0;
$("sky-q").addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(search, 120); });
$("sky-q").addEventListener("keydown", (e) => {
  if (e.key === "Enter") { e.preventDefault(); search(); const first = [...matches][0]; if (first !== undefined) centre(first); }
});

function search() {
  const q = $("sky-q").value.trim().toLowerCase();
  matches = new Set();
  if (q && sc) for (let i = 0; i < sc.id.length && matches.size < 50; i++) if (sc.label[i].toLowerCase().includes(q)) matches.add(i);
  const ul = $("sky-matches");
  ul.hidden = matches.size === 0;
  ul.replaceChildren(...[...matches].slice(0, 12).map((i) => {
    const li = el("li");
    const b = el("button", "chip-button", sc.label[i]);
    b.type = "button";
    b.addEventListener("click", () => centre(i));
    li.append(b);
    return li;
  }));
  redraw();
}
