// pair.mjs signs browsers in to homed's web UI with pairings `waiter pair` made (Debian's
// chromium through playwright-core), and prints what it saw as JSON. Any expectation that fails
// throws: node exits 1 with the reason on stderr.
//
// usage: node pair.mjs BASE_URL PAIR_URL SHORT_CODE SHOTS_DIR
//   PAIR_URL (https://HOST:PORT/#pair=CODE) is opened at a phone viewport (390×844): signed in;
//   then again in a second phone browser: refused. SHORT_CODE, another pairing's typed form, is
//   typed into "Pairing code" at a desktop viewport (1280×800): signed in.
import { chromium } from "playwright-core";

const [base, pairURL, short, shots] = process.argv.slice(2);
const T = 15_000;
const phone = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };
const desktop = { viewport: { width: 1280, height: 800 } };
const out = {};

function expect(cond, what) {
  if (!cond) throw new Error(what);
}

async function open(browser, device) {
  const ctx = await browser.newContext(device);
  const page = await ctx.newPage();
  page.on("pageerror", (e) => { throw new Error(`page error: ${e.message}`); });
  return page;
}

async function signedIn(page, what) {
  await page.getByRole("textbox", { name: "Message" }).waitFor({ timeout: T }).catch(async (e) => {
    throw new Error(`${what}: no chat; the page says ${JSON.stringify(await page.locator("body").innerText())}: ${e.message}`);
  });
  return page.evaluate(async () => (await fetch("/api/v1/sessions")).status);
}

const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  // The link signs the phone in at once; the code leaves the address bar.
  const p1 = await open(browser, phone);
  await p1.goto(pairURL);
  out.link_sessions_status = await signedIn(p1, "the pairing link");
  expect(out.link_sessions_status === 200, `after pairing /api/v1/sessions answered ${out.link_sessions_status}`);
  out.link_url_after = p1.url();
  expect(!out.link_url_after.includes("pair="), `the code stayed in the address bar: ${out.link_url_after}`);
  await p1.screenshot({ path: `${shots}/web-paired-phone.png` });
  // A paired browser is a device, not the owner's token: it cannot pair another.
  out.browser_pairs_status = await p1.evaluate(async () => {
    const s = await (await fetch("/api/v1/web/session")).json();
    return (await fetch("/api/v1/web/pairings", { method: "POST", headers: { "X-CSRF-Token": s.csrf } })).status;
  });
  expect(out.browser_pairs_status === 403, `a paired browser made a pairing: ${out.browser_pairs_status}`);

  // The same link a second time, in another browser: refused on the sign-in page.
  const p2 = await open(browser, phone);
  await p2.goto(pairURL);
  const err = p2.locator("#pair-error");
  await p2.waitForFunction(() => document.getElementById("pair-error").textContent !== "", null, { timeout: T });
  out.reused_error = await err.textContent();
  expect(/used already/.test(out.reused_error), `the reused link: ${out.reused_error}`);
  expect(await p2.getByLabel("Pairing code").isVisible(), "no Pairing code field");
  out.reused_sessions_status = await p2.evaluate(async () => (await fetch("/api/v1/sessions")).status);
  expect(out.reused_sessions_status === 401, `the reused link signed in: ${out.reused_sessions_status}`);

  // The short code, typed (lower case, with a space) on a desktop.
  const d = await open(browser, desktop);
  await d.goto(base + "/");
  await d.getByLabel("Pairing code").fill("0000-0000");
  await d.getByRole("button", { name: "Pair" }).click();
  await d.waitForFunction(() => document.getElementById("pair-error").textContent !== "", null, { timeout: T });
  out.wrong_short_error = await d.locator("#pair-error").textContent();
  expect(/wrong or expired/.test(out.wrong_short_error), `a wrong short code: ${out.wrong_short_error}`);
  await d.getByLabel("Pairing code").fill(short.toLowerCase().replace("-", " "));
  await d.getByRole("button", { name: "Pair" }).click();
  out.short_sessions_status = await signedIn(d, "the short code");
  expect(out.short_sessions_status === 200, `after the short code /api/v1/sessions answered ${out.short_sessions_status}`);
  out.desktop_device = await d.evaluate(async () => (await (await fetch("/api/v1/web/session")).json()).device.name);
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(out) + "\n");
