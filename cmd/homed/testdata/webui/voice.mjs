// voice.mjs records a voice message in homed's web UI, as a person would, in Debian's chromium
// (playwright-core) whose fake microphone plays WAV: it signs in, presses the microphone
// button, waits, presses it again (the recording is sent alone) and prints, as JSON, the
// recording's name, the text its bubble shows and the notes the chat shows. Any expectation that fails throws.
//
// usage: node voice.mjs BASE_URL TOKEN WAV SHOT
import { chromium } from "playwright-core";

const [base, token, wav, shot] = process.argv.slice(2);
const T = 15_000;
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
    `--use-file-for-fake-audio-capture=${wav}`],
});
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
  await ctx.grantPermissions(["microphone"], { origin: base });
  const page = await ctx.newPage();
  page.on("pageerror", (e) => { throw new Error(`page error: ${e.message}`); });
  await page.goto(base + "/");
  await page.getByLabel("Token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("textbox", { name: "Message" }).waitFor({ timeout: T });
  const mic = page.getByRole("button", { name: "Record a voice message" });
  await mic.click();
  await page.waitForFunction(() => document.getElementById("mic").getAttribute("aria-pressed") === "true", null, { timeout: T });
  await page.waitForTimeout(3000); // the fake microphone plays the WAV
  await mic.click();
  // Sent alone: a bubble with the recording's chip, then the turn ends.
  const chip = page.locator("#message-list .sent-attachments .chip").last();
  await chip.waitFor({ timeout: T });
  await page.waitForFunction(() => !document.getElementById("send").disabled && document.getElementById("stop").hidden, null, { timeout: 30_000 });
  const out = {
    recording: (await chip.textContent()).trim(),
    notes: await page.locator("#message-list p.note").allTextContents(),
    pressed: await mic.getAttribute("aria-pressed"),
    // the user bubble's own text (before the chip): the transcript once the kernel sent it
    said: await page.locator("#message-list article.msg.user").last().evaluate(
      (n) => (n.firstChild && n.firstChild.nodeType === Node.TEXT_NODE ? n.firstChild.textContent : "")),
  };
  await page.screenshot({ path: shot });
  process.stdout.write(JSON.stringify(out) + "\n");
} finally {
  await browser.close();
}
