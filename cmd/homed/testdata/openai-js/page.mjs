// page.mjs opens PAGE_URL in Debian's chromium (playwright-core, executablePath
// /usr/bin/chromium), where the page's script calls homed's /v1/chat/completions with fetch, and
// prints what the page saw: {status, reply} or {error} (a CORS refusal is a TypeError in fetch).
//
// usage: node page.mjs PAGE_URL
import { chromium } from "playwright-core";

const [url] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  const page = await browser.newPage();
  await page.goto(url);
  const result = await page.waitForFunction(() => window.result, null, { timeout: 30_000 });
  process.stdout.write(JSON.stringify(await result.jsonValue()) + "\n");
} finally {
  await browser.close();
}
