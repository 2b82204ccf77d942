// sw.js: the web UI's service worker. It keeps the app shell (page, style, scripts, icons) so the
// UI opens without the network; the shell is fetched fresh when online (network first) and the
// API (/api, /v1) never passes through the cache.
const CACHE = "hologram-shell-v2";
const SHELL = ["/", "/app.css", "/app.js", "/api.js", "/md.js", "/ui.js", "/i18n.js", "/theme.js", "/memory.js", "/starmap.js", "/admin.js", "/icon.svg", "/icon.png", "/manifest.webmanifest"];

self.addEventListener("install", (e) => {
  e.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (e) => {
  e.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

self.addEventListener("fetch", (e) => {
  const url = new URL(e.request.url);
  if (e.request.method !== "GET" || url.origin !== location.origin ||
      url.pathname.startsWith("/api/") || url.pathname.startsWith("/v1/")) {
    return; // the network, untouched
  }
  const key = e.request.mode === "navigate" ? "/" : e.request;
  e.respondWith(fetch(e.request).then((res) => {
    if (res.ok) {
      const copy = res.clone();
      caches.open(CACHE).then((c) => c.put(key, copy));
    }
    return res;
  }).catch(() => caches.match(key).then((hit) => hit || Response.error())));
});
