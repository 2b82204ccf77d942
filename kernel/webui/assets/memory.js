// memory.js: the Memory page — cold-memory search with Forget, a chat's context window (each
// item's score and reason), the entities — and the entity sheet the star map opens too: an
// entity's facts with their validity and provenance (a source event opened in its context),
// edit, correct, pin, merge, forget.
import * as api from "./api.js";
import { t, apply } from "./i18n.js";
import { $, el, btn, guard, toast, when, clip } from "./ui.js";
import { scene, invalidate } from "./starmap.js";

const enc = encodeURIComponent;
let current = null; // the entity the sheet shows (client.EntityDetail)
let onChange = () => {};

// changed registers what to refresh when an entity changes (the star map redraws).
export function changed(fn) { onChange = fn; }

export async function show() {
  await Promise.all([loadSessions(), listEntities()]);
}

// ---- search ----------------------------------------------------------------------------------

$("mem-search-form").addEventListener("submit", (e) => {
  e.preventDefault();
  guard(search);
});

async function search() {
  const q = $("mem-q").value.trim();
  if (!q) return;
  const { hits } = await api.json("GET", "/api/v1/memory/search?" + new URLSearchParams({ q, k: "20" }));
  const ul = $("mem-hits");
  if (!hits.length) { ul.replaceChildren(el("li", "note", t("No results."))); return; }
  ul.replaceChildren(...hits.map((h) => {
    const li = el("li", "item");
    li.append(el("p", "item-text", clip(h.content, 400)),
      el("p", "note", `${h.role} · ${when(h.time)} · L${h.layer} · score ${h.score.toFixed(3)} · ${h.reason}`));
    const row = el("div", "actions");
    row.append(btn("Open source", "plain", () => openContext(h.id, li), "#" + h.id),
      btn("Forget", "danger", async () => {
        if (!confirm(t("Forget") + " #" + h.id + "?")) return;
        await api.json("POST", "/api/v1/memory/forget", { events: [h.id] });
        li.replaceChildren(el("p", "note", t("Forgotten.")));
      }, "#" + h.id));
    li.append(row);
    return li;
  }));
}

// openContext shows an event with its neighbours in its chat below host (toggles).
async function openContext(id, host) {
  const old = host.querySelector(".context");
  if (old) { old.remove(); return; }
  const { events } = await api.json("GET", `/api/v1/memory/events/${id}?radius=2`);
  const box = el("ol", "context");
  box.setAttribute("aria-label", "Event " + id + " in context");
  for (const ev of events) {
    const li = el("li", ev.id === id ? "focus" : "");
    li.append(el("span", "note", `${ev.role} · ${when(ev.time)} `), document.createTextNode(clip(ev.content, 300)));
    box.append(li);
  }
  host.append(box);
}

// ---- context window --------------------------------------------------------------------------

async function loadSessions() {
  const { sessions } = await api.json("GET", "/api/v1/sessions");
  sessions.sort((a, b) => new Date(b.updated) - new Date(a.updated));
  const sel = $("mem-session");
  const keep = sel.value;
  sel.replaceChildren(...sessions.map((s) => { const o = el("option", "", s.title || s.id); o.value = s.id; return o; }));
  if (keep && sessions.some((s) => s.id === keep)) sel.value = keep;
  await loadWindow();
}
$("mem-session").addEventListener("change", () => guard(loadWindow));

async function loadWindow() {
  const id = $("mem-session").value;
  if (!id) return;
  const w = await api.json("GET", "/api/v1/window?" + new URLSearchParams({ session: id }));
  $("mem-window-sum").textContent = `${w.used} / ${w.budget} ${t("tokens")} · ${w.items.length} items`;
  $("mem-window").replaceChildren(...w.items.map((it) => {
    const li = el("li", "item");
    li.append(el("p", "item-text", clip(it.content, 300)),
      el("p", "note", `${it.role} · ${it.source} · score ${it.score.toFixed(3)} · ${it.reason} · ${it.tokens} ${t("tokens")}`));
    return li;
  }));
}

// ---- entities --------------------------------------------------------------------------------

let filterTimer = 0;
$("mem-ent-q").addEventListener("input", () => {
  clearTimeout(filterTimer);
  filterTimer = setTimeout(() => guard(listEntities), 150);
});

// listEntities lists the entities whose name holds the filter (at most 60, the most mentioned).
async function listEntities() {
  const sc = await scene("");
  const q = $("mem-ent-q").value.trim().toLowerCase();
  const idx = [];
  for (let i = 0; i < sc.id.length; i++) if (!q || sc.label[i].toLowerCase().includes(q)) idx.push(i);
  idx.sort((a, b) => sc.mentions[b] - sc.mentions[a]);
  $("mem-ent-count").textContent = `${t("showing")} ${Math.min(idx.length, 60)} / ${idx.length}`;
  $("mem-entities").replaceChildren(...idx.slice(0, 60).map((i) => {
    const li = el("li");
    const b = btn(sc.label[i], "chip-button", () => openEntity(sc.id[i]));
    b.textContent = sc.label[i];
    b.title = sc.kinds[sc.kind[i]];
    li.append(b);
    return li;
  }));
}

// ---- the entity sheet ------------------------------------------------------------------------

export async function openEntity(id) {
  current = await api.json("GET", `/api/v1/memory/entities/${id}`);
  $("entity").hidden = false;
  document.body.classList.add("sheet-open");
  $("entity-form").hidden = $("merge-form").hidden = true;
  $("entity-error").textContent = "";
  fill();
  $("entity-close").focus({ preventScroll: true });
}

function fill() {
  const e = current.entity;
  $("entity-name").textContent = e.name;
  $("entity-meta").textContent = `${e.kind || "—"} · ${e.scope} · mentions ${e.mentions}${e.pinned ? " · pinned" : ""} · ${when(e.updated)}`;
  $("entity-text").textContent = e.text || "";
  $("entity-pin").textContent = t(e.pinned ? "Unpin" : "Pin");
  const facts = current.triples.slice().sort((a, b) => Number(!!a.superseded_by) - Number(!!b.superseded_by) || b.id - a.id);
  $("entity-facts").replaceChildren(...(facts.length ? facts.map(factView) : [el("li", "note", t("No facts."))]));
}

function factView(f) {
  const li = el("li", "item fact");
  const ended = !!f.superseded_by || (f.valid_to && !f.valid_to.startsWith("0001-") && new Date(f.valid_to) < new Date());
  li.dataset.state = f.superseded_by ? "superseded" : ended ? "ended" : "current";
  li.append(el("p", "item-text", `${f.subject_name} — ${f.predicate} — ${f.object_name}`));
  const valid = [when(f.valid_from) && `${t("from")} ${when(f.valid_from)}`, when(f.valid_to) && `${t("until")} ${when(f.valid_to)}`].filter(Boolean).join(" ");
  li.append(el("p", "note", [t(li.dataset.state), valid, f.scope, f.origin, f.pinned ? "pinned" : "",
    `${t("source events")}: ${f.sources.length}`].filter(Boolean).join(" · ")));
  const row = el("div", "actions");
  const what = `${f.predicate} ${f.object_name}`;
  for (const src of f.sources.slice(0, 3)) row.append(btn("Open source", "plain", () => openContext(src, li), `#${src}`));
  if (!f.superseded_by) {
    row.append(btn("Correct", "plain", async () => {
      const object = prompt(`${f.subject_name} — ${f.predicate} —`, f.object_name);
      if (object === null || !object.trim()) return;
      await api.json("PUT", `/api/v1/memory/triples/${f.id}`, { subject: f.subject_name, predicate: f.predicate, object: object.trim() });
      await refresh();
    }, what));
  }
  row.append(btn(f.pinned ? "Unpin" : "Pin", "plain", async () => {
    await api.json("POST", "/api/v1/memory/pin", { kind: "triple", id: f.id, pinned: !f.pinned });
    await refresh();
  }, what));
  li.append(row);
  return li;
}

async function refresh() {
  current = await api.json("GET", `/api/v1/memory/entities/${current.entity.id}`);
  fill();
  invalidate();
  onChange();
}

export function closeEntity() {
  $("entity").hidden = true;
  document.body.classList.remove("sheet-open");
  current = null;
}
$("entity-close").addEventListener("click", closeEntity);
addEventListener("keydown", (e) => { if (e.key === "Escape" && !$("entity").hidden) $("entity-close").click(); });

$("entity-edit").addEventListener("click", () => {
  const e = current.entity;
  $("ent-name").value = e.name;
  $("ent-kind").value = e.kind || "";
  $("ent-text").value = e.text || "";
  $("merge-form").hidden = true;
  $("entity-form").hidden = false;
  $("ent-name").focus();
});
$("ent-cancel").addEventListener("click", () => { $("entity-form").hidden = true; });
$("entity-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  guard(async () => {
    const e = current.entity;
    await api.json("PUT", `/api/v1/memory/entities/${e.id}`, { name: $("ent-name").value.trim(), kind: $("ent-kind").value.trim(),
      text: $("ent-text").value, scope: e.scope });
    $("entity-form").hidden = true;
    await refresh();
    await listEntities();
  });
});

$("entity-pin").addEventListener("click", () => guard(async () => {
  await api.json("POST", "/api/v1/memory/pin", { kind: "entity", id: current.entity.id, pinned: !current.entity.pinned });
  await refresh();
}));

$("entity-merge").addEventListener("click", () => guard(async () => {
  const sc = await scene("");
  const dl = $("merge-names");
  if (!dl.childElementCount) dl.replaceChildren(...sc.label.slice(0, 2000).map((n) => { const o = el("option"); o.value = n; return o; }));
  $("entity-form").hidden = true;
  $("merge-form").hidden = false;
  $("merge-name").focus();
}));
$("merge-cancel").addEventListener("click", () => { $("merge-form").hidden = true; });
$("merge-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  guard(async () => {
    const name = $("merge-name").value.trim().toLowerCase();
    const sc = await scene("");
    const i = sc.label.findIndex((l, k) => l.toLowerCase() === name && sc.id[k] !== current.entity.id);
    if (i < 0) { $("entity-error").textContent = `No other entity is called “${$("merge-name").value}”.`; return; }
    await api.json("POST", `/api/v1/memory/entities/${current.entity.id}/merge`, { from: sc.id[i] });
    $("merge-form").hidden = true;
    await refresh();
    toast(t("Merged."), false);
  });
});

$("entity-forget").addEventListener("click", () => guard(async () => {
  const e = current.entity;
  if (!confirm(`${t("Forget")} “${e.name}”?`)) return;
  await api.json("DELETE", `/api/v1/memory/entities/${e.id}`);
  closeEntity();
  invalidate();
  onChange();
  await listEntities();
}));

apply($("entity"));
