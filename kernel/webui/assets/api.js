// api.js: the kernel's /api/v1 as the web UI calls it: same origin, the device session cookie,
// and the CSRF token on writes. A 401 raises SignedOut, which sends the UI to sign-in.

export class SignedOut extends Error {}

export class APIError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

let csrf = "";

export function setCSRF(token) { csrf = token || ""; }

async function failure(res) {
  let msg = res.statusText || "HTTP " + res.status;
  try { msg = (await res.json()).error.message || msg; } catch { /* not JSON */ }
  return res.status === 401 ? new SignedOut(msg) : new APIError(res.status, msg);
}

// request sends one API request and returns the Response (ok) or throws.
export async function request(method, path, body, signal, extra) {
  const headers = { ...extra };
  if (method !== "GET" && method !== "HEAD") headers["X-CSRF-Token"] = csrf;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin", signal });
  if (!res.ok) throw await failure(res);
  return res;
}

export async function json(method, path, body) {
  const res = await request(method, path, body);
  return res.status === 204 ? null : res.json();
}

// upload streams a file to POST /api/v1/uploads (a video, or an image or audio file too large to
// go inside the chat request as base64) and answers the stored upload, {id, kind, size…}, that a
// chat attachment names as {upload: id}. onProgress(sent, total) follows the bytes (XHR: fetch
// cannot report an upload's progress); signal aborts it.
export function upload(file, name, onProgress, signal) {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open("POST", "/api/v1/uploads?name=" + encodeURIComponent(name));
    x.setRequestHeader("Content-Type", file.type || "application/octet-stream");
    x.setRequestHeader("X-CSRF-Token", csrf);
    x.withCredentials = true;
    if (onProgress) x.upload.onprogress = (e) => onProgress(e.loaded, e.total || file.size);
    x.onload = () => {
      let body = null;
      try { body = JSON.parse(x.responseText); } catch { /* not JSON */ }
      if (x.status >= 200 && x.status < 300 && body) { resolve(body); return; }
      const msg = body?.error?.message || x.statusText || "HTTP " + x.status;
      reject(x.status === 401 ? new SignedOut(msg) : new APIError(x.status, msg));
    };
    x.onerror = () => reject(new APIError(0, `uploading ${name} failed: the connection was lost`));
    x.onabort = () => reject(new DOMException("upload aborted", "AbortError"));
    if (signal) signal.addEventListener("abort", () => x.abort(), { once: true });
    x.send(file);
  });
}

// signIn trades the token for a device session; it answers {device, csrf}.
export async function signIn(token) {
  const res = await fetch("/api/v1/web/session", { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token }), credentials: "same-origin" });
  if (!res.ok) throw await failure(res);
  return res.json();
}

// pair trades a pairing code (the link's, or its typed short form) for a device session.
export async function pair(code) {
  const res = await fetch("/api/v1/web/pair", { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ code }), credentials: "same-origin" });
  if (!res.ok) throw await failure(res);
  return res.json();
}

// stream posts a chat turn and calls onEvent(type, data) for each server-sent event.
export async function stream(body, onEvent, signal) {
  const res = await request("POST", "/api/v1/chat", body, signal);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let type = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) type = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) onEvent(type, JSON.parse(data.join("\n")));
    }
  }
}
