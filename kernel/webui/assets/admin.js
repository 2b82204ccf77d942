// admin.js: the Plugins page (state, tools, logs; restart, enable, disable) and Settings
// (language, theme, providers with Test, embedding models; app.js keeps the devices).
import * as api from "./api.js";
import { t, setLang, current } from "./i18n.js";
import { $, el, btn, guard, when } from "./ui.js";

const enc = encodeURIComponent;

// ---- plugins ---------------------------------------------------------------------------------

export async function showPlugins() {
  const { plugins } = await api.json("GET", "/api/v1/plugins");
  plugins.sort((a, b) => a.name.localeCompare(b.name));
  const ul = $("plugin-list");
  if (!plugins.length) { ul.replaceChildren(el("li", "note", t("No plugins."))); return; }
  ul.replaceChildren(...plugins.map(pluginView));
}

function pluginView(p) {
  const li = el("li", "item plugin");
  li.dataset.name = p.name;
  li.setAttribute("aria-label", p.name);
  const head = el("div", "item-head");
  const state = el("span", "badge", p.state);
  state.dataset.state = p.state;
  head.append(el("h3", "", p.name), state);
  li.append(head);
  li.append(el("p", "note", [p.kind, p.builtin ? "built-in" : "", p.pid ? "pid " + p.pid : "", `${t("restarts")} ${p.restarts}`].filter(Boolean).join(" · ")));
  if (p.last_error) li.append(el("p", "error", p.last_error));
  if (p.tools.length) {
    const tools = el("p", "note");
    tools.textContent = `${t("Tools")}: ${p.tools.join(", ")}`;
    li.append(tools);
  }
  const row = el("div", "actions");
  const act = (action) => async () => {
    const out = await api.json("POST", `/api/v1/plugins/${enc(p.name)}/${action}`);
    li.replaceWith(pluginView(out));
  };
  if (p.state !== "disabled") row.append(btn("Restart", "", act("restart"), p.name));
  row.append(p.state === "disabled" ? btn("Enable", "plain", act("enable"), p.name) : btn("Disable", "plain", act("disable"), p.name));
  const logs = el("pre", "logs");
  logs.hidden = true;
  logs.tabIndex = 0;
  logs.setAttribute("aria-label", `${t("Logs")} ${p.name}`);
  row.append(btn("Logs", "plain", async () => {
    if (!logs.hidden) { logs.hidden = true; return; }
    const { lines } = await api.json("GET", `/api/v1/plugins/${enc(p.name)}/logs?n=50`);
    logs.textContent = lines.map((l) => `${when(l.time)}  ${l.line}`).join("\n") || "—";
    logs.hidden = false;
  }, p.name));
  li.append(row, logs);
  return li;
}

// ---- settings --------------------------------------------------------------------------------

export async function showSettings() {
  $("set-lang").value = current();
  $("set-theme").value = localStorage.getItem("theme") || "system";
  await Promise.all([loadProviders(), loadModels()]);
}

$("set-lang").addEventListener("change", () => setLang($("set-lang").value));
$("set-theme").addEventListener("change", () => {
  const v = $("set-theme").value;
  localStorage.setItem("theme", v);
  if (v === "system") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = v;
});

async function loadProviders() {
  const { providers } = await api.json("GET", "/api/v1/providers");
  const ul = $("provider-list");
  if (!providers.length) { ul.replaceChildren(el("li", "note", t("No providers."))); return; }
  ul.replaceChildren(...providers.map((p) => {
    const li = el("li", "item provider");
    li.setAttribute("aria-label", p.name);
    li.append(el("h3", "", p.name), el("p", "note", `${p.model} · ${p.base_url}${p.has_key ? " · key ✓" : ""} · priority ${p.priority}`));
    const result = el("p", "note result");
    result.setAttribute("role", "status");
    const row = el("div", "actions");
    row.append(btn("Test", "", () => test({ name: p.name, base_url: p.base_url, model: p.model, proxy: p.proxy, keep_key: true }, result), p.name),
      btn("Remove", "danger", async () => {
        if (!confirm(`${t("Remove")} ${p.name}?`)) return;
        await api.json("DELETE", `/api/v1/providers/${enc(p.name)}`);
        await loadProviders();
      }, p.name));
    li.append(row, result);
    return li;
  }));
}

async function test(cfg, out) {
  out.textContent = t("Testing…");
  out.dataset.ok = "";
  const r = await api.json("POST", "/api/v1/providers/test", cfg);
  out.dataset.ok = String(r.ok);
  const ms = Math.round(r.latency / 1e6);
  out.textContent = r.ok ? `OK · ${r.model || cfg.model} · ${ms} ms${r.reply ? " · “" + r.reply + "”" : ""}${r.models?.length ? " · " + r.models.length + " models" : ""}`
    : `✗ ${r.error}`;
}

const form = () => ({ name: $("prov-name").value.trim(), base_url: $("prov-url").value.trim(), model: $("prov-model").value.trim(),
  api_key: $("prov-key").value });
$("prov-test").addEventListener("click", () => guard(() => test(form(), $("prov-result"))));
$("provider-form").addEventListener("submit", (e) => {
  e.preventDefault();
  guard(async () => {
    await api.json("POST", "/api/v1/providers", form());
    $("provider-form").reset();
    $("prov-result").textContent = t("Saved.");
    await loadProviders();
  });
});

async function loadModels() {
  const [st, { models }] = await Promise.all([api.json("GET", "/api/v1/embedding"), api.json("GET", "/api/v1/embedding/models")]);
  $("model-status").textContent = st.mode === "dense" ? `dense · ${st.model}` : `${t("Sparse (BM25) only")}${st.reason ? " · " + st.reason : ""}`;
  $("model-list").replaceChildren(...models.map((m) => {
    const li = el("li", "item");
    li.append(el("h3", "", m.id), el("p", "note", [m.description, m.kind, m.dim ? m.dim + " dims" : "", m.size ? Math.round(m.size / 1048576) + " MB" : "",
      m.installed ? "installed" : ""].filter(Boolean).join(" · ")));
    const row = el("div", "actions");
    if (m.active) row.append(el("span", "badge", t("In use")));
    else if (m.installed) row.append(btn("Use", "plain", async () => { await api.json("POST", `/api/v1/embedding/models/${enc(m.id)}/use`); await loadModels(); }, m.id));
    if (row.childElementCount) li.append(row);
    return li;
  }));
}
