// app.js: the web UI (docs/web.md). Sign-in with the token (or /#token=…), then the newest chat:
// sessions, streaming Markdown replies, tool calls inline with their state, Stop, history paged
// with before=ID, drafts kept per chat; the Memory, Star map, Plugins and Settings pages
// (memory.js, starmap.js, admin.js); Settings lists the signed-in devices too.
import * as api from "./api.js";
import { render } from "./md.js";
import * as i18n from "./i18n.js";
import * as ui from "./ui.js";
import * as memory from "./memory.js";
import * as starmap from "./starmap.js";
import * as admin from "./admin.js";

const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
const PAGE = 50;
const desktopEnter = () => !matchMedia("(pointer: coarse)").matches;

const state = { sessions: [], current: null, oldest: 0, turn: null, abort: null, tools: new Map(), device: null, credential: "", pending: [] };

// ---- sign-in -------------------------------------------------------------------------------

function showSignIn(message) {
  $("app").hidden = true;
  $("signin").hidden = false;
  $("signin-error").textContent = message || "";
  $("pair-error").textContent = "";
  $("token").focus();
}

async function signIn(token) {
  const s = await api.signIn(token);
  api.setCSRF(s.csrf);
  state.device = s.device;
  await start();
}

// pairWith signs in with a pairing code: the link's (#pair=…) or the short form typed.
async function pairWith(code) {
  const s = await api.pair(code);
  api.setCSRF(s.csrf);
  state.device = s.device;
  await start();
}

$("pair-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  $("pair-button").disabled = true;
  try {
    await pairWith($("pair-code").value.trim());
    $("pair-code").value = "";
  } catch (err) {
    showSignIn();
    $("pair-error").textContent = err.message;
    $("pair-code").focus();
  } finally {
    $("pair-button").disabled = false;
  }
});

$("signin-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  $("signin-button").disabled = true;
  try {
    await signIn($("token").value.trim());
    $("token").value = "";
  } catch (err) {
    showSignIn(err instanceof api.SignedOut ? "Wrong token." : err.message);
  } finally {
    $("signin-button").disabled = false;
  }
});

// guard runs fn, sending the UI to sign-in when the session is gone.
async function guard(fn) {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof api.SignedOut) showSignIn(err.message);
    else if (err.name !== "AbortError") notice(err.message);
    return undefined;
  }
}

function notice(text) {
  const n = el("p", "notice", text);
  n.setAttribute("role", "alert");
  $("message-list").append(n);
  scrollDown();
}

// ---- navigation ----------------------------------------------------------------------------

const views = ["chat", "memory", "starmap", "plugins", "settings"];
const shows = { memory: memory.show, starmap: starmap.show, plugins: admin.showPlugins,
  settings: () => Promise.all([admin.showSettings(), loadDevices()]) };

function route() {
  let view = (location.hash.replace(/^#/, "") || "chat").split("/")[0];
  if (!views.includes(view)) view = "chat";
  for (const a of document.querySelectorAll("#tabs a")) {
    if (a.dataset.view === view) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  for (const v of views) $("view-" + v).hidden = v !== view;
  if (view !== "memory" && view !== "starmap") memory.closeEntity();
  document.getElementById("toast")?.replaceChildren();
  document.body.dataset.view = view;
  if (shows[view]) ui.guard(shows[view]);
}
addEventListener("hashchange", route);

// ---- sessions ------------------------------------------------------------------------------

async function loadSessions() {
  const { sessions } = await api.json("GET", "/api/v1/sessions");
  state.sessions = sessions.sort((a, b) => new Date(b.updated) - new Date(a.updated));
  const ul = $("session-list");
  ul.replaceChildren(...state.sessions.map((s) => {
    const li = el("li");
    const b = el("button", "session", s.title || s.id);
    b.type = "button";
    if (state.current && s.id === state.current.id) b.setAttribute("aria-current", "true");
    b.addEventListener("click", () => { closeDrawer(); guard(() => openSession(s)); });
    li.append(b);
    return li;
  }));
}

async function openSession(s) {
  saveDraft();
  state.current = s;
  state.tools.clear();
  $("chat-title").textContent = s.title || s.id;
  $("message-list").replaceChildren();
  $("delete-session").disabled = s.id === "main";
  showAloud();
  $("message").value = localStorage.getItem("draft:" + s.id) || "";
  grow();
  for (const b of document.querySelectorAll("#session-list .session")) {
    if (b.textContent === (s.title || s.id)) b.setAttribute("aria-current", "true");
    else b.removeAttribute("aria-current");
  }
  const page = await loadHistory(0);
  showMessages(page.messages, false);
  scrollDown();
  $("message").focus({ preventScroll: true });
}

async function loadHistory(before) {
  const q = new URLSearchParams({ page: "1", limit: String(PAGE) });
  if (before) q.set("before", String(before));
  const page = await api.json("GET", `/api/v1/sessions/${encodeURIComponent(state.current.id)}/history?${q}`);
  if (page.messages.length) state.oldest = page.messages[0].id;
  $("older").hidden = !page.more;
  return page;
}

$("older").addEventListener("click", () => guard(async () => {
  const box = $("messages");
  const from = box.scrollHeight - box.scrollTop;
  const page = await loadHistory(state.oldest);
  showMessages(page.messages, true);
  box.scrollTop = box.scrollHeight - from;
}));

$("new-session").addEventListener("click", () => guard(async () => {
  const s = await api.json("POST", "/api/v1/sessions", {});
  await loadSessions();
  closeDrawer();
  await openSession(s);
}));

$("rename-session").addEventListener("click", () => guard(async () => {
  const title = prompt("New name of this chat", state.current.title || "");
  if (title === null || !title.trim()) return;
  state.current = await api.json("PATCH", `/api/v1/sessions/${encodeURIComponent(state.current.id)}`, { title: title.trim() });
  $("chat-title").textContent = state.current.title;
  await loadSessions();
}));

$("delete-session").addEventListener("click", () => guard(async () => {
  if (!confirm(`Delete the chat “${state.current.title || state.current.id}”? Its messages stay in memory.`)) return;
  await api.json("DELETE", `/api/v1/sessions/${encodeURIComponent(state.current.id)}`);
  localStorage.removeItem("draft:" + state.current.id);
  state.current = null;
  await loadSessions();
  await openSession(state.sessions[0] || { id: "main", title: "main" });
}));

const closeDrawer = () => { $("sessions").classList.remove("open"); $("toggle-sessions").setAttribute("aria-expanded", "false"); };
$("toggle-sessions").addEventListener("click", () => {
  const open = $("sessions").classList.toggle("open");
  $("toggle-sessions").setAttribute("aria-expanded", String(open));
});

// ---- messages ------------------------------------------------------------------------------

function bubble(role) {
  const b = el("article", "msg " + role);
  b.setAttribute("aria-label", role === "user" ? "You" : "Assistant");
  return b;
}

function toolView(call) {
  const d = el("details", "tool");
  const s = el("summary");
  s.append(el("span", "tool-name", call.name), el("span", "tool-state"));
  const args = el("pre", "tool-args", call.arguments || "");
  const result = el("pre", "tool-result");
  result.hidden = true;
  d.append(s, args, result);
  const v = { node: d, setState(status, text) {
    d.dataset.state = status;
    s.lastChild.textContent = status;
    if (text) { result.textContent = text; result.hidden = false; }
  } };
  v.setState(call.status || "running", call.result);
  state.tools.set(call.id, v);
  return v;
}

// showMessages renders history messages, appended or (older pages) prepended.
function showMessages(msgs, prepend) {
  const frag = document.createDocumentFragment();
  for (const m of msgs) {
    if (m.role === "user") {
      const b = bubble("user");
      b.textContent = m.content;
      if (m.blocks?.length) b.append(attachmentChips(m.blocks.map((x) => x.name || x.kind)));
      frag.append(b);
    } else if (m.role === "assistant") {
      for (const c of m.tool_calls || []) frag.append(toolView({ ...c, status: "running" }).node);
      if (m.content) {
        const b = bubble("assistant");
        b.innerHTML = render(m.content);
        addSpeak(b);
        frag.append(b);
      }
    } else if (m.role === "tool") {
      const v = state.tools.get(m.tool_call_id);
      if (v) v.setState(m.tool_status || "ok", m.content);
    }
  }
  if (prepend) $("message-list").prepend(frag);
  else $("message-list").append(frag);
}

// ---- reading replies aloud ----------------------------------------------------------------

const SPEAKER = '<svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true"><path d="M4 9h4l5-4v14l-5-4H4z" fill="currentColor"/>' +
  '<path d="M16 9a4 4 0 0 1 0 6M18.5 6.5a7.5 7.5 0 0 1 0 11" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round"/></svg>';

// addSpeak gives a finished reply its speaker button: the kernel speaks the text as shown (the
// Markdown rendered, so no markup is read out), POST /api/v1/speech, and the browser plays it.
function addSpeak(b) {
  const text = b.textContent.trim();
  if (!text || b.querySelector("button.speak")) return null;
  const btn = el("button", "speak");
  btn.type = "button";
  btn.innerHTML = SPEAKER;
  label(btn, "Read aloud");
  btn.onclick = () => speak(btn, text);
  b.append(btn);
  return btn;
}

// Read replies aloud is a choice per chat, kept on this device: each reply that finishes is
// spoken as if its speaker button were pressed.
const aloudKey = (id) => "aloud:" + id;
const readsAloud = (id) => localStorage.getItem(aloudKey(id)) === "1";

function showAloud() {
  const on = !!state.current && readsAloud(state.current.id);
  const b = $("read-aloud");
  b.setAttribute("aria-pressed", String(on));
  b.classList.toggle("on", on);
}

$("read-aloud").innerHTML = SPEAKER;
$("read-aloud").addEventListener("click", () => {
  if (!state.current) return;
  if (readsAloud(state.current.id)) {
    localStorage.removeItem(aloudKey(state.current.id));
    stopSpeaking();
  } else localStorage.setItem(aloudKey(state.current.id), "1");
  showAloud();
});

let playing = null; // {audio, url, btn}: the reply being read

function stopSpeaking() {
  if (!playing) return;
  const { audio, url, btn } = playing;
  playing = null;
  audio.pause();
  URL.revokeObjectURL(url);
  btn.classList.remove("playing");
  label(btn, "Read aloud");
}

// label names an icon button (its tooltip and its accessible name).
function label(b, text) {
  b.title = i18n.t(text);
  b.setAttribute("aria-label", b.title);
}

// speak reads text aloud; a second press (or another reply's button) stops it.
async function speak(btn, text) {
  const again = playing?.btn === btn;
  stopSpeaking();
  if (again) return;
  btn.disabled = true;
  try {
    const res = await api.request("POST", "/api/v1/speech", { text });
    const url = URL.createObjectURL(await res.blob());
    const audio = new Audio(url);
    playing = { audio, url, btn };
    btn.classList.add("playing");
    label(btn, "Stop reading");
    audio.onended = audio.onerror = () => { if (playing?.audio === audio) stopSpeaking(); };
    await audio.play();
  } catch (err) {
    if (playing?.btn === btn) stopSpeaking();
    if (err instanceof api.SignedOut) { showSignIn(err.message); return; }
    notice(i18n.t("Could not read the reply aloud:") + " " + err.message);
  } finally {
    btn.disabled = false;
  }
}

function scrollDown() { const box = $("messages"); box.scrollTop = box.scrollHeight; }

// ---- approvals -----------------------------------------------------------------------------

// answerApproval answers with this device's approval credential, asking the kernel for one
// first (and again when a restarted kernel no longer knows it).
async function answerApproval(id, approve) {
  for (let attempt = 0; ; attempt++) {
    if (!state.credential) {
      const name = "web: " + (state.device ? state.device.name : "browser");
      state.credential = (await api.json("POST", "/api/v1/approvals/credential", { client: name.slice(0, 64) })).credential;
    }
    try {
      const res = await api.request("POST", `/api/v1/approvals/${encodeURIComponent(id)}`, { approve }, undefined,
        { "X-Hologram-Approval-Credential": state.credential });
      return await res.json();
    } catch (err) {
      if (attempt > 0 || !(err instanceof api.APIError) || err.status !== 403 || !/credential/.test(err.message)) throw err;
      state.credential = "";
    }
  }
}

const approvalWords = { approved: "Approved.", denied: "Denied.", expired: "Expired: no answer in time, so denied.", cancelled: "Cancelled." };

// showApproval shows an approval request as a card with Approve and Deny, or updates its card.
function showApproval(ap) {
  let card = document.querySelector(`article.approval[data-id="${CSS.escape(ap.id)}"]`);
  if (!card) {
    card = approvalView(ap);
    $("message-list").append(card);
    scrollDown();
  }
  if (ap.state && ap.state !== "pending") settle(card, ap.state);
}

function settle(card, st) {
  card.dataset.state = st;
  card.querySelector("[role=status]").textContent = approvalWords[st] || st;
  card.querySelector(".approval-actions").hidden = true;
}

function approvalView(ap) {
  const card = el("article", "approval");
  card.dataset.id = ap.id;
  card.setAttribute("aria-label", "Approval: " + ap.title);
  card.append(el("h3", "", ap.title));
  if (ap.detail) card.append(el("pre", "", ap.detail));
  const row = el("div", "approval-actions");
  const status = el("p", "note");
  status.setAttribute("role", "status");
  const yes = el("button", "", "Approve");
  const no = el("button", "deny", "Deny");
  for (const [b, approve] of [[yes, true], [no, false]]) {
    b.type = "button";
    b.addEventListener("click", () => guard(async () => {
      yes.disabled = no.disabled = true;
      try {
        const out = await answerApproval(ap.id, approve);
        settle(card, out.state || (approve ? "approved" : "denied"));
      } catch (err) {
        yes.disabled = no.disabled = false;
        throw err;
      }
    }));
  }
  row.append(yes, no);
  card.append(row, status);
  return card;
}

// ---- attachments ---------------------------------------------------------------------------
// Files come from the + button (on a phone its picker offers the camera), a paste, or a drop on
// the chat. Text files go as text and small images and audio as data inside the chat request;
// a video, or an image or audio file over INLINE_BYTES, streams ahead to /api/v1/uploads (up to
// the kernel's max_upload_bytes, checked before a byte is sent) and the message names it. The
// kernel's other limits apply: at most 16 per message, 32 MiB for what is not a video.

const MAX_ATTACHMENTS = 16;
const MAX_ATTACHMENT_BYTES = 32 << 20; // the API's limit per attachment (client.MaxAttachmentBytes)
const INLINE_BYTES = 1 << 20; // larger images and audio are uploaded (client.InlineBytes)
const textTypes = /^(text\/|application\/(json|xml|x-yaml|toml|x-sh|javascript))/;
const textNames = /\.(md|txt|json|csv|log|ya?ml|toml|go|py|js|ts|sh|c|h|rs|java|html|css|xml|ini|conf)$/i;
const videoNames = /\.(mp4|m4v|webm|mkv|mov|avi)$/i;

function addFiles(files) {
  for (const f of files) {
    if (state.pending.length >= MAX_ATTACHMENTS) { notice(`At most ${MAX_ATTACHMENTS} attachments per message.`); break; }
    const kind = f.type.startsWith("image/") ? "image" : f.type.startsWith("audio/") ? "audio"
      : f.type.startsWith("video/") || (!f.type && videoNames.test(f.name)) ? "video" // its keyframes are read like photos
      : textTypes.test(f.type) || textNames.test(f.name) ? "text" : "";
    if (!kind) { notice(`${f.name}: only text files, images, audio and video can be attached.`); continue; }
    if (kind !== "video" && f.size > MAX_ATTACHMENT_BYTES) { notice(`${f.name}: ${Math.ceil(f.size / 1048576)} MiB, at most ${MAX_ATTACHMENT_BYTES / 1048576} MiB per attachment (only a video may be larger).`); continue; }
    state.pending.push({ file: f, kind });
  }
  showPending();
}

const streamed = (p) => p.kind === "video" || (p.kind !== "text" && p.file.size > INLINE_BYTES);

function showPending() {
  const ul = $("attachments");
  ul.hidden = state.pending.length === 0;
  ul.replaceChildren(...state.pending.map((p, i) => {
    const li = el("li", "chip");
    li.append(el("span", "", `${p.file.name || "pasted " + p.kind} (${size(p.file.size)})`));
    const x = el("button", "remove", "×");
    x.type = "button";
    x.setAttribute("aria-label", "Remove " + (p.file.name || "attachment"));
    x.addEventListener("click", () => { state.pending.splice(i, 1); showPending(); });
    li.append(x);
    return li;
  }));
}

const size = (n) => n < 1024 ? n + " B" : n < 1 << 20 ? (n / 1024).toFixed(0) + " KB" : (n / 1048576).toFixed(1) + " MB";

// encode turns a pending file into the chat request's attachment: text, base64 data, or (for a
// streamed one) the upload that took it.
async function encode(p, onProgress) {
  const name = p.file.name || (p.kind === "image" ? "pasted.png" : "pasted");
  if (p.kind === "text") return { kind: "text", name, text: await p.file.text() };
  if (streamed(p)) {
    const u = await api.upload(p.file, name, onProgress && ((sent, total) => onProgress(name, sent, total)));
    return { kind: p.kind, name, mime: p.file.type || u.mime, upload: u.id };
  }
  const bytes = new Uint8Array(await p.file.arrayBuffer());
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { kind: p.kind, name, mime: p.file.type, data: btoa(bin) };
}

// tooLarge says which streamed file the kernel's upload limit refuses, before any is sent.
async function tooLarge(pending) {
  const up = pending.filter(streamed);
  if (!up.length) return "";
  const st = await api.json("GET", "/api/v1/status");
  const max = st.max_upload_bytes || 0;
  const big = up.find((p) => p.file.size > max);
  if (!big) return "";
  return max ? `${big.file.name}: ${size(big.file.size)} (${big.file.size} bytes), more than the kernel's upload limit (${size(max)}; [api] max_upload_bytes).`
    : `${big.file.name}: this kernel takes no uploads (it is older than this page): update it.`;
}

$("attach").addEventListener("click", () => $("file").click());
$("file").addEventListener("change", () => { addFiles($("file").files); $("file").value = ""; });
$("message").addEventListener("paste", (e) => {
  const files = [...(e.clipboardData?.files || [])];
  if (files.length) { e.preventDefault(); addFiles(files); }
});
$("chat").addEventListener("dragover", (e) => { if (e.dataTransfer?.types.includes("Files")) { e.preventDefault(); $("chat").classList.add("drop"); } });
$("chat").addEventListener("dragleave", () => $("chat").classList.remove("drop"));
$("chat").addEventListener("drop", (e) => {
  $("chat").classList.remove("drop");
  if (e.dataTransfer?.files.length) { e.preventDefault(); addFiles(e.dataTransfer.files); }
});

// ---- voice messages ------------------------------------------------------------------------
// The microphone button records with MediaRecorder (Opus in WebM where the browser has it); a
// second press stops and sends the recording as an audio attachment: without typed text the
// kernel makes its transcript the message (and says so when it has no speech model).

let recorder = null;

async function toggleRecording() {
  if (recorder) { recorder.stop(); return; }
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  } catch (err) {
    notice("The microphone is not available: " + err.message);
    return;
  }
  const chunks = [];
  const type = ["audio/webm;codecs=opus", "audio/ogg;codecs=opus", "audio/mp4"].find((t) => MediaRecorder.isTypeSupported(t));
  const rec = new MediaRecorder(stream, type ? { mimeType: type } : {});
  rec.ondataavailable = (e) => { if (e.data.size) chunks.push(e.data); };
  rec.onstop = () => {
    stream.getTracks().forEach((t) => t.stop());
    recorder = null;
    $("mic").classList.remove("recording");
    $("mic").setAttribute("aria-pressed", "false");
    const mime = (rec.mimeType || "audio/webm").split(";")[0];
    const blob = new Blob(chunks, { type: mime });
    if (!blob.size) { notice("Nothing was recorded."); return; }
    const ext = mime.includes("ogg") ? "ogg" : mime.includes("mp4") ? "m4a" : "webm";
    const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, "-");
    addFiles([new File([blob], `voice-${stamp}.${ext}`, { type: mime })]);
    if (!$("message").value.trim()) send();
  };
  rec.start();
  recorder = rec;
  $("mic").classList.add("recording");
  $("mic").setAttribute("aria-pressed", "true");
}

if (navigator.mediaDevices?.getUserMedia && window.MediaRecorder) {
  $("mic").hidden = false;
  $("mic").addEventListener("click", toggleRecording);
}

function attachmentChips(names) {
  const row = el("div", "sent-attachments");
  for (const n of names) row.append(el("span", "chip", n));
  return row;
}

// ---- sending -------------------------------------------------------------------------------

function busy(on) {
  $("stop").hidden = !on;
  $("send").disabled = on;
}

async function send() {
  const text = $("message").value;
  const voice = state.pending.some((p) => p.kind === "audio"); // a voice message may go alone
  if ((!text.trim() && !voice) || state.abort) return;
  const s = state.current;
  let attachments = [];
  busy(true);
  // A streamed file's progress shows under the messages while it goes ("Uploading clip.mp4: 45 %").
  const progress = el("p", "note uploading");
  progress.setAttribute("role", "status");
  const shown = {};
  const onProgress = (name, sent, total) => {
    shown[name] = Math.floor(100 * sent / Math.max(total, 1));
    progress.textContent = Object.entries(shown).map(([n, pc]) => `Uploading ${n}: ${pc} %`).join(" · ");
    if (!progress.isConnected) { $("message-list").append(progress); scrollDown(); }
  };
  try {
    const refused = await tooLarge(state.pending);
    if (refused) { notice("Not sent: " + refused); return; }
    attachments = await Promise.all(state.pending.map((p) => encode(p, onProgress)));
  } catch (err) {
    if (err instanceof api.SignedOut) { showSignIn(err.message); return; }
    notice("Could not send an attachment: " + err.message);
    return;
  } finally {
    progress.remove();
    busy(false);
  }
  const mine = bubble("user");
  mine.textContent = text;
  if (attachments.length) mine.append(attachmentChips(attachments.map((a) => a.name)));
  $("message-list").append(mine);
  $("message").value = "";
  state.pending = [];
  showPending();
  localStorage.removeItem("draft:" + s.id);
  grow();
  let reply = null, raw = "", frame = 0, done = false;
  // paint draws the reply now; a frame still asked for is cancelled, so that it cannot paint
  // again later (over the speaker button a finished reply gets).
  const paint = () => {
    if (frame) cancelAnimationFrame(frame);
    frame = 0;
    if (reply) { reply.innerHTML = render(raw); scrollDown(); }
  };
  const ensureReply = () => {
    if (!reply) { reply = bubble("assistant"); reply.classList.add("streaming"); $("message-list").append(reply); }
    return reply;
  };
  state.abort = new AbortController();
  busy(true);
  scrollDown();
  try {
    const body = { session: s.id, input: text, channel: "web" };
    if (attachments.length) body.attachments = attachments;
    await api.stream(body, (type, ev) => {
      switch (type) {
      case "turn": state.turn = ev.turn_id; break;
      case "delta":
        ensureReply(); raw += ev.text;
        if (!frame) frame = requestAnimationFrame(paint);
        break;
      case "tool_call": {
        const v = toolView(ev.tool);
        if (reply && !raw) { reply.remove(); reply = null; }
        $("message-list").append(v.node);
        reply = null; raw = "";
        scrollDown();
        break;
      }
      case "tool_result": {
        const v = state.tools.get(ev.tool.id) || toolView(ev.tool);
        v.setState(ev.tool.status, ev.tool.result);
        break;
      }
      case "approval": // asked (pending), then again once answered, expired or cancelled
        showApproval(ev.approval);
        break;
      case "final":
        ensureReply(); raw = ev.text || raw; paint(); done = true;
        break;
      case "error":
        notice(ev.text);
        break;
      case "transcript": // what the voice message said, in place of its name
        mine.replaceChildren(document.createTextNode(ev.text));
        if (attachments.length) mine.append(attachmentChips(attachments.map((a) => a.name)));
        break;
      case "notice": // the kernel's note on the message (a voice message left untranscribed…)
        $("message-list").append(el("p", "note", ev.text));
        scrollDown();
        break;
      }
    }, state.abort.signal);
  } catch (err) {
    if (err instanceof api.SignedOut) { showSignIn(err.message); return; }
    if (err.name === "AbortError") {
      const n = el("p", "note", "Stopped.");
      $("message-list").append(n);
    } else notice(err.message);
  } finally {
    if (frame) paint();
    if (reply) reply.classList.remove("streaming");
    if (reply && done) { // after the last paint, which would wipe the button
      const btn = addSpeak(reply);
      if (btn && readsAloud(s.id) && state.current?.id === s.id) btn.click();
    }
    state.abort = null; state.turn = null;
    busy(false);
  }
  guard(loadSessions);
}

$("composer").addEventListener("submit", (e) => { e.preventDefault(); send(); });
$("message").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing && desktopEnter()) { e.preventDefault(); send(); }
});
$("message").addEventListener("input", () => { grow(); saveDraft(); });
// Stop cancels the turn (when the kernel has named it) and stops reading its stream at once;
// closing the stream cancels a turn the kernel still runs, too.
$("stop").addEventListener("click", () => {
  if (state.turn) api.request("POST", `/api/v1/turns/${encodeURIComponent(state.turn)}/cancel`).catch(() => { /* already over */ });
  if (state.abort) state.abort.abort();
});

function saveDraft() {
  if (!state.current) return;
  const v = $("message").value;
  if (v) localStorage.setItem("draft:" + state.current.id, v);
  else localStorage.removeItem("draft:" + state.current.id);
}

function grow() {
  const t = $("message");
  t.style.height = "auto";
  t.style.height = Math.min(t.scrollHeight, 200) + "px";
}

// ---- settings ------------------------------------------------------------------------------

async function loadDevices() {
  const { devices } = await api.json("GET", "/api/v1/web/devices");
  $("device-list").replaceChildren(...devices.map((d) => {
    const li = el("li", "device");
    const seen = new Date(d.last_seen).toLocaleString();
    li.append(el("span", "device-name", d.name + (d.current ? " (this device)" : "")), el("span", "hint", "last used " + seen));
    const b = el("button", "", "Revoke");
    b.type = "button";
    b.setAttribute("aria-label", "Revoke " + d.name);
    b.addEventListener("click", () => guard(async () => {
      await api.json("DELETE", `/api/v1/web/devices/${d.id}`);
      if (d.current) showSignIn("This device was signed out.");
      else await loadDevices();
    }));
    li.append(b);
    return li;
  }));
}

$("sign-out").addEventListener("click", () => guard(async () => {
  await api.json("DELETE", "/api/v1/web/session");
  showSignIn("Signed out.");
}));

// ---- start ---------------------------------------------------------------------------------

async function start() {
  $("signin").hidden = true;
  $("app").hidden = false;
  if (!location.hash || location.hash.startsWith("#token=") || location.hash.startsWith("#pair=")) history.replaceState(null, "", location.pathname + "#chat");
  route();
  await loadSessions();
  // #chat/ID opens that chat (a link to it); otherwise the newest opens.
  const link = location.hash.match(/^#chat\/(.+)$/);
  const linked = link && state.sessions.find((s) => s.id === decodeURIComponent(link[1]));
  await openSession(linked || state.sessions[0] || { id: "main", title: "main" });
}

async function boot() {
  const m = location.hash.match(/^#token=([^&]+)/);
  if (m) {
    const token = decodeURIComponent(m[1]);
    history.replaceState(null, "", location.pathname + "#chat"); // the token leaves the address bar at once
    try { await signIn(token); } catch (err) { showSignIn(err instanceof api.SignedOut ? "Wrong token." : err.message); }
    return;
  }
  const p = location.hash.match(/^#pair=([^&]+)/);
  if (p) {
    const code = decodeURIComponent(p[1]);
    history.replaceState(null, "", location.pathname + "#chat"); // a used code is worthless, but leaves anyway
    try {
      await pairWith(code);
    } catch (err) {
      showSignIn();
      $("pair-error").textContent = err.message;
    }
    return;
  }
  try {
    const s = await api.json("GET", "/api/v1/web/session");
    api.setCSRF(s.csrf);
    state.device = s.device;
    await start();
  } catch (err) {
    showSignIn(err instanceof api.SignedOut ? "" : err.message);
  }
}

i18n.init();
i18n.apply(document);
ui.onSignedOut(showSignIn);
starmap.onTap(memory.openEntity);
memory.changed(() => { if (!$("view-starmap").hidden) starmap.show(); });

if ("serviceWorker" in navigator && window.isSecureContext) {
  navigator.serviceWorker.register("/sw.js").catch(() => { /* the UI works without it */ });
}
boot();
