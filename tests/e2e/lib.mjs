// The set-up web.mjs and design.mjs share: Debian's Chromium launched
// headless with no background traffic, the list of failed checks, axe-core
// evaluated into a page, screenshots at given widths, a fresh context per
// language, and the probe for words broken mid-word and sideways scrolling.
import { chromium } from "playwright-core";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** Chromium, headless, without sandbox, GPU, QUIC or any background request.
 *  playwright-core gives every launch a fresh, throw-away user-data dir. */
export function launch() {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/** The checks that failed, in order. */
export const failures = [];

/** Records one check, and prints it in TAP-like form. */
export function check(cond, what) {
  if (!cond) failures.push(what);
  console.log(`${cond ? "ok" : "FAIL"} - ${what}`);
}

/** axe-core on the whole page (WCAG 2.2 A and AA, and best practice): 0 violations.
 *  Evaluated through the DevTools protocol: the page's CSP (rightly) forbids
 *  inline scripts, and the test must not weaken it. */
export async function axe(page, name) {
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => await window.axe.run(document, {
    runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"] },
  }));
  const v = result.violations;
  check(v.length === 0, `axe ${name}: ${v.length} violations` +
    (v.length ? " " + JSON.stringify(v.map((x) => ({ id: x.id, nodes: x.nodes.map((n) => n.target).slice(0, 3) }))) : ""));
}

/** Full-page screenshots `<dir>/<name>-<width>.png` at each width; the page is left at 1280 px. */
export async function screenshots(page, dir, name, widths = [360, 1280]) {
  for (const width of widths) {
    await page.setViewportSize({ width, height: 800 });
    await page.screenshot({ path: join(dir, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** A fresh browser context in `lang`, with the script errors it logs;
 *  `options` go to the context (`{ javaScriptEnabled: false }`). */
export async function openPage(browser, lang, options = {}) {
  const context = await browser.newContext({ locale: lang, viewport: { width: 1280, height: 800 }, ...options });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // A 4xx page a scenario asks for (the form with errors) is logged by the
  // browser as a failed load; only script errors and CSP refusals count.
  page.on("console", (m) => { if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text()); });
  return { context, page, errors };
}

/** Words drawn on two lines (a break inside a word), and whether the page scrolls sideways. */
export async function layoutProblems(page) {
  return page.evaluate(() => {
    const broken = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || el.closest("script, style, .visually-hidden, [hidden], dd.url, option, select")) continue;
      if (!el.getClientRects().length) continue;
      const re = /[^\s\u00A0\u202F\-\u2010\u2011]{2,}/g; // a break after a hyphen is no mid-word break
      let m;
      while ((m = re.exec(n.data))) {
        if (/[/@]|^https?:/.test(m[0])) continue;
        range.setStart(n, m.index);
        range.setEnd(n, m.index + m[0].length);
        const tops = new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (tops.size > 1) broken.push(m[0]);
      }
    }
    // A table's own scroll box counts as sideways scrolling too.
    const scrolled = Array.from(document.querySelectorAll(".table-wrap"))
      .filter((w) => w.getClientRects().length && w.scrollWidth > w.clientWidth + 1)
      .map((w) => (w.querySelector("table") || w).id || w.className);
    return { broken, scrolled, sideways: document.documentElement.scrollWidth > window.innerWidth + 1 };
  });
}

/** Closes the browser, prints the tally and exits 1 if any check failed. */
export async function finish(browser) {
  await browser.close();
  console.log(failures.length ? `${failures.length} failed` : "all passed");
  process.exit(failures.length ? 1 : 0);
}

/** Runs `body`, recording a thrown error as a failure, then finishes. */
export async function run(browser, body) {
  try {
    await body();
  } catch (e) {
    failures.push(String(e && e.stack || e));
    console.log("FAIL - " + e);
  }
  await finish(browser);
}
