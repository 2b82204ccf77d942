// pages.mjs drives the web UI's Memory, Star map, Plugins and Settings pages in Debian's chromium
// (playwright-core, one browser) at both viewports, as a person would, checks every view in light
// and dark with axe-core, measures the star map, and prints what it found as JSON. Any failed
// expectation throws: node exits 1 with the reason on stderr.
//
// usage: node pages.mjs BASE_URL TOKEN SHOTS_DIR ENTITY SOURCE_TEXT PLUGIN PROVIDER
//   ENTITY names a seeded entity with facts, one of them learnt from a chat message holding
//   SOURCE_TEXT; PLUGIN is a running plugin (restarted); PROVIDER a configured provider (tested).
//   SHOTS_DIR receives web-memory-SIZE.png, web-starmap-SIZE.png and starmap-canvas-SIZE.png
//   (the labelled element alone, whose colours the Go test counts).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { chromium } from "playwright-core";

const [base, token, shots, entity, sourceText, plugin, provider] = process.argv.slice(2);
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const T = 20_000;
const sizes = {
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
  desktop: { viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false, deviceScaleFactor: 1 },
};
const out = {};
let size = "";

function expect(cond, what) {
  if (!cond) throw new Error(`${size}: ${what}`);
}

// axe runs axe-core on the page as it is and returns its critical and serious violations.
async function axe(page, what) {
  await page.evaluate(axeSource); // page.evaluate is not subject to the page's CSP
  const res = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.filter((v) => v.impact === "critical" || v.impact === "serious")
      .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ") + ": " + n.failureSummary) }));
  });
  return res.map((v) => ({ view: what, ...v }));
}

const frame = (page, after) => page.waitForFunction((n) => window.starmapStats.frames > n, after, { timeout: T });

const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  for (const [name, device] of Object.entries(sizes)) {
    size = name;
    const phone = name === "phone";
    const o = (out[name] = { ms: {} });
    let mark = Date.now();
    const lap = (what) => { o.ms[what] = Date.now() - mark; mark = Date.now(); };
    const ctx = await browser.newContext({ ...device, colorScheme: "dark", serviceWorkers: "block" });
    const page = await ctx.newPage();
    page.on("pageerror", (e) => { throw new Error(`${size}: page error: ${e.message}`); });
    const seen = { dialogs: [], forget: [] }; // what a failed Forget step reports
    page.on("dialog", (d) => { seen.dialogs.push(d.message()); d.accept(); });
    page.on("request", (r) => { if (r.url().includes("/memory/forget")) seen.forget.push(`${r.method()} sent`); });
    page.on("response", (r) => { if (r.url().includes("/memory/forget")) seen.forget.push(`answered ${r.status()}`); });
    page.on("requestfailed", (r) => { if (r.url().includes("/memory/forget")) seen.forget.push(`failed ${r.failure()?.errorText}`); });
    await page.goto(base + "/#token=" + encodeURIComponent(token));
    await page.getByRole("textbox", { name: "Message" }).waitFor({ timeout: T });

    // Memory: a search of cold memory (the hits with score and reason; one forgotten), the
    // context window of a chat, an entity's facts with the source event opened, an edit.
    await page.getByRole("link", { name: "Memory" }).click();
    await page.getByRole("searchbox", { name: "Search memory" }).fill("nurse");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    const hit = page.locator("#mem-hits .item").first();
    await hit.waitFor({ timeout: T });
    o.hits = await page.locator("#mem-hits .item").count();
    o.hit = (await hit.textContent()).slice(0, 160);
    expect(o.hit.includes(sourceText) && /score \d/.test(o.hit), `the first hit: ${o.hit}`);
    await page.locator("#mem-window .item").first().waitFor({ timeout: T });
    o.window_items = await page.locator("#mem-window .item").count();
    o.window_item = (await page.locator("#mem-window .item").first().locator(".note").textContent()).trim();
    expect(/score [\d.]+ · \S/.test(o.window_item), `a window item: ${o.window_item}`);

    await page.getByRole("searchbox", { name: "Find an entity" }).fill(entity);
    await page.locator("#mem-entities button", { hasText: entity }).first().click();
    const sheet = page.getByRole("dialog", { name: entity });
    await sheet.locator("#entity-facts .fact").first().waitFor({ timeout: T });
    o.facts = await sheet.locator("#entity-facts .fact").count();
    await sheet.getByRole("button", { name: "Edit", exact: true }).click();
    await sheet.getByLabel("Notes").fill(`edited on the ${size}`);
    await sheet.getByRole("button", { name: "Save", exact: true }).click();
    await page.locator("#entity-text", { hasText: `edited on the ${size}` }).waitFor({ timeout: T });
    await sheet.locator("#entity-facts .fact").filter({ hasText: "nurse" }).getByRole("button", { name: /^Open source/ }).first().click();
    const source = sheet.locator(".context .focus");
    await source.waitFor({ timeout: T });
    o.source = (await source.textContent()).trim();
    expect(o.source.includes(sourceText), `the source event: ${o.source}`);
    await page.evaluate(() => { document.getElementById("view-memory").scrollTop = 0; });
    await page.screenshot({ path: `${shots}/web-memory-${size}.png` });
    lap("memory");
    o.axe = await axe(page, "memory");
    lap("axe");
    await sheet.getByRole("button", { name: "Close" }).click();
    // The new hits, not the last search's: those may hold the locker code too (a small store), and
    // a Forget pressed there is lost when the new list replaces them.
    const lastHits = await page.locator("#mem-hits .item").first().elementHandle();
    await page.getByRole("searchbox", { name: "Search memory" }).fill("locker code");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.waitForFunction((e) => !e.isConnected, lastHits, { timeout: T });
    await page.locator("#mem-hits .item", { hasText: "locker code" }).first().waitFor({ timeout: T });
    const errorsBefore = await page.locator("#toast .error").count();
    await page.locator("#mem-hits .item").first().getByRole("button", { name: /^Forget/ }).click();
    // An error the page shows instead of "Forgotten." is the failure's message.
    try {
      await page.waitForFunction((n) => document.querySelector("#mem-hits .item")?.textContent.includes("Forgotten.") ||
        document.querySelectorAll("#toast .error").length > n, errorsBefore, { timeout: T });
    } catch (err) {
      const first = await page.locator("#mem-hits .item").first().textContent().catch(() => "?");
      throw new Error(`${size}: no "Forgotten." in ${T / 1000} s: dialogs ${JSON.stringify(seen.dialogs)}, forget requests ` +
        `${JSON.stringify(seen.forget)}, the first hit now: ${first.slice(0, 200)} (${err.message})`);
    }
    const forgetError = await page.evaluate((n) => [...document.querySelectorAll("#toast .error")].slice(n).map((e) => e.textContent).join("; "), errorsBefore);
    expect(!forgetError, `Forget failed: ${forgetError}`);

    lap("forget");
    // The star map: drawn (the labelled canvas), a star found by search and tapped: its facts.
    const before = await page.evaluate(() => window.starmapStats.frames);
    await page.getByRole("link", { name: "Star map" }).click();
    await frame(page, before);
    const canvas = page.getByRole("img", { name: "Star map" });
    await canvas.screenshot({ path: `${shots}/starmap-canvas-${size}.png` });
    o.stars = await page.evaluate(() => document.getElementById("sky-status").textContent);
    await page.getByRole("searchbox", { name: "Search stars" }).fill(entity);
    await page.getByRole("searchbox", { name: "Search stars" }).press("Enter");
    await page.locator("#sky-matches button", { hasText: entity }).first().waitFor({ timeout: T });
    const box = await canvas.boundingBox();
    const at = { x: box.width / 2, y: box.height / 2 };
    await page.waitForTimeout(100);
    if (phone) await canvas.tap({ position: at });
    else await canvas.click({ position: at });
    await sheet.locator("#entity-facts .fact").first().waitFor({ timeout: T });
    o.tapped = (await page.locator("#entity-name").textContent()).trim();
    expect(o.tapped === entity, `the tapped star opened ${o.tapped}`);
    await page.waitForTimeout(100);
    await page.screenshot({ path: `${shots}/web-starmap-${size}.png` });
    lap("starmap");
    o.axe.push(...await axe(page, "starmap"));
    lap("axe");
    await sheet.getByRole("button", { name: "Close" }).click();

    // Plugins: one restarted (its pid changes), its logs shown.
    await page.getByRole("link", { name: "Plugins" }).click();
    const card = page.getByRole("listitem", { name: plugin, exact: true });
    await card.waitFor({ timeout: T });
    const pid = await card.locator(".note").first().textContent();
    await card.getByRole("button", { name: "Restart " + plugin }).click();
    await page.waitForFunction(([n, old]) => {
      const c = document.querySelector(`#plugin-list [data-name="${n}"] .note`);
      return c && c.textContent !== old;
    }, [plugin, pid], { timeout: T });
    o.restarted = { before: pid, after: await page.getByRole("listitem", { name: plugin, exact: true }).locator(".note").first().textContent() };
    await page.getByRole("listitem", { name: plugin, exact: true }).getByRole("button", { name: "Logs " + plugin }).click();
    await page.getByRole("listitem", { name: plugin, exact: true }).locator("pre.logs").waitFor({ timeout: T });

    lap("plugins");
    // Settings: the provider tested; the theme and language choices.
    await page.getByRole("link", { name: "Settings" }).click();
    const prov = page.getByRole("listitem", { name: provider, exact: true });
    await prov.getByRole("button", { name: "Test " + provider }).click();
    await page.waitForFunction((n) => /^(OK|✗)/.test(document.querySelector(`#provider-list [aria-label="${n}"] .result`)?.textContent || ""),
      provider, { timeout: T });
    o.tested = await prov.locator(".result").textContent();
    expect(o.tested.startsWith("OK"), `the provider test said ${o.tested}`);
    await page.getByLabel("Language").selectOption("zh");
    o.zh = await page.getByRole("link", { name: "星图" }).isVisible();
    await page.getByLabel("语言").selectOption("en");
    expect(o.zh && await page.getByRole("link", { name: "Star map" }).isVisible(), "the language did not switch to zh and back");

    lap("settings");
    // axe on every view in light and dark (the theme follows the system: emulated).
    for (const scheme of ["dark", "light"]) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const view of ["chat", "memory", "starmap", "plugins", "settings"]) {
        await page.getByRole("link", { name: { chat: "Chat", memory: "Memory", starmap: "Star map", plugins: "Plugins", settings: "Settings" }[view] }).click();
        await page.waitForTimeout(250);
        if (scheme === "dark" && (view === "memory" || view === "starmap")) continue; // checked above, with content
        o.axe.push(...await axe(page, `${view} ${scheme}`));
        if (view === "settings" && scheme === "light") await page.screenshot({ path: `${shots}/web-settings-light-${size}.png` });
      }
    }
    lap("axe_views");
    // The theme chosen in Settings wins over the system's.
    await page.getByLabel("Theme").selectOption("light");
    await page.emulateMedia({ colorScheme: "dark" });
    o.light_bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(o.light_bg === "rgb(244, 245, 251)", `Theme light, a dark system: the page is ${o.light_bg}`);
    await page.getByLabel("Theme").selectOption("system");
    o.axe_checked = 10;
    await ctx.close();
  }

  // The star map at 10k stars, 1280×800: a fresh page from load to the first drawn frame, then a
  // pan (drag) to its frame. Reported, never asserted.
  size = "perf";
  const ctx = await browser.newContext({ ...sizes.desktop, serviceWorkers: "block" });
  const page = await ctx.newPage();
  await page.goto(base + "/#token=" + encodeURIComponent(token));
  await page.getByRole("textbox", { name: "Message" }).waitFor({ timeout: T });
  const p = await ctx.newPage();
  await p.goto(base + "/#starmap");
  await p.waitForFunction(() => window.starmapStats.firstFrame > 0, null, { timeout: 60_000 });
  const s = await p.evaluate(() => window.starmapStats);
  out.perf = { stars: await p.evaluate(() => document.getElementById("sky-status").textContent),
    load_to_first_frame_ms: Math.round(s.firstFrame), fetch_ms: Math.round(s.fetched - s.start), draw_ms: Math.round(s.firstFrame - s.fetched) };
  // A drag of 10 moves: each move's latency to its frame (the last full frame moved).
  const c = await p.getByRole("img", { name: "Star map" }).boundingBox();
  const fulls = await p.evaluate(() => window.starmapStats.full);
  await p.mouse.move(c.x + 600, c.y + 350);
  await p.mouse.down();
  await p.mouse.move(c.x + 800, c.y + 450, { steps: 10 });
  await p.mouse.up();
  await p.waitForFunction(() => (window.starmapStats.panLatency || []).length >= 5, null, { timeout: T });
  const lat = await p.evaluate(() => window.starmapStats.panLatency);
  out.perf.pan_moves = lat.length;
  out.perf.pan_latency_ms = { mean: Math.round(lat.reduce((a, b) => a + b, 0) / lat.length), max: Math.round(Math.max(...lat)) };
  out.perf.pan_frame_draw_ms = await p.evaluate(() => Math.round(window.starmapStats.quickMs * 10) / 10);
  // The full frame once the view rests.
  await p.waitForFunction((k) => window.starmapStats.full > k, fulls, { timeout: T });
  out.perf.rest_frame_ms = await p.evaluate(() => Math.round(window.starmapStats.drawMs));
  out.perf.first_frame_parts = Object.fromEntries(Object.entries(s.parts).map(([k, v]) => [k, Math.round(v)]));
  await ctx.close();
  process.stdout.write(JSON.stringify(out) + "\n");
} catch (err) {
  for (const ctx of browser.contexts()) {
    for (const p of ctx.pages()) {
      const notes = await p.locator("#toast p, .error:not(:empty)").allTextContents().catch(() => []);
      if (notes.length) process.stderr.write(`${size}: the page ${p.url()} says: ${JSON.stringify(notes)}\n`);
      await p.screenshot({ path: `${shots}/failed-pages-${size}.png` }).catch(() => {});
    }
  }
  throw err;
} finally {
  await browser.close();
}
