// ui.js: what the web UI's pages share: element helpers, a toast for errors, and guard, which
// runs an action and sends the UI to sign-in when the session is gone (app.js sets where).
import * as api from "./api.js";
import { t } from "./i18n.js";

export const $ = (id) => document.getElementById(id);

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// btn is a button labelled t(text) (aria-label adds the thing it acts on) running onClick guarded.
export function btn(text, cls, onClick, label) {
  const b = el("button", cls, t(text));
  b.type = "button";
  if (label) b.setAttribute("aria-label", t(text) + " " + label);
  b.addEventListener("click", () => guard(async () => {
    b.disabled = true;
    try { await onClick(b); } finally { b.disabled = false; }
  }));
  return b;
}

let signedOut = () => {};
export function onSignedOut(fn) { signedOut = fn; }

// toast shows a short message (an error: role alert) over the page for a few seconds.
export function toast(text, error = true) {
  let box = $("toast");
  if (!box) {
    box = el("div");
    box.id = "toast";
    document.body.append(box);
  }
  const n = el("p", error ? "error" : "note", text);
  if (error) n.setAttribute("role", "alert");
  else n.setAttribute("role", "status");
  box.append(n);
  setTimeout(() => n.remove(), 6000);
}

export async function guard(fn) {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof api.SignedOut) signedOut(err.message);
    else if (err.name !== "AbortError") toast(err.message);
    return undefined;
  }
}

export const when = (s) => s && !s.startsWith("0001-") ? new Date(s).toLocaleString() : "";
export const clip = (s, n) => (s && s.length > n ? s.slice(0, n - 1) + "…" : s || "");
