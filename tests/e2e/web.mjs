// End-to-end scenario in headless Chromium (driven by tests/browser.rs):
// create a poll in the form, vote on the share page, see the counts, manage
// the poll from the admin link (key in the fragment), in English and French;
// in German, a poll whose results show right after voting, with a closing
// day and shuffled options;
// axe-core on every page; screenshots at 360 px and 1280 px. In English, the
// poll gets a picture and its question a sound and a video: they are chosen
// before a failed send, must be held through it, and must really load and
// play under the pages' CSP.
// Usage: node web.mjs <base-url> <screenshot-dir> [<picture> <sound> <video>]
import { chromium } from "playwright-core";
import { readFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";

const base = process.argv[2];
const shots = process.argv[3] || "screenshots";
const [picture, sound, video] = process.argv.slice(4);
mkdirSync(shots, { recursive: true });
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  // playwright-core gives every launch a fresh, throw-away user-data dir.
});
const failures = [];
function check(cond, what) {
  if (!cond) failures.push(what);
  console.log(`${cond ? "ok" : "FAIL"} - ${what}`);
}

async function audit(page, name) {
  // Evaluated through the DevTools protocol: the page's CSP (rightly) forbids
  // inline scripts, and the test must not weaken it.
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => await window.axe.run(document, {
    runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"] },
  }));
  const v = result.violations;
  check(v.length === 0, `axe ${name}: ${v.length} violations` +
    (v.length ? " " + JSON.stringify(v.map((x) => ({ id: x.id, nodes: x.nodes.map((n) => n.target).slice(0, 3) }))) : ""));
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    await page.screenshot({ path: join(shots, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** A fresh browser context in `lang`, with the script errors it logs. */
async function openPage(lang) {
  const context = await browser.newContext({ locale: lang, viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // A 4xx page the scenario asks for (the form with errors) is logged by the
  // browser as a failed load; only script errors and CSP refusals count.
  page.on("console", (m) => { if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text()); });
  return { context, page, errors };
}

async function scenario(lang, texts) {
  const { context, page, errors } = await openPage(lang);

  await page.goto(`${base}/?lang=${lang}`);
  await audit(page, `${lang}-create`);
  await page.fill("#f-title", texts.title);
  await page.selectOption("#f-lang", lang);
  await page.check("#f-results-public");
  await page.fill("#f-q0", texts.question);
  await page.fill("#f-q0o0", texts.a);
  await page.fill("#f-q0o1", texts.b);
  const withMedia = lang === "en" && picture;
  if (withMedia) {
    // The file fields are folded in <details>; a person opens them.
    await page.click("details.media-slot >> nth=0 >> summary");
    await page.setInputFiles("#f-pm", picture);
    await page.fill("#f-pm-alt", "A colour gradient");
    if (sound) {
      await page.click("details.media-slot >> nth=1 >> summary");
      await page.setInputFiles("#f-q0m", sound);
    }
    // One slot per question: the video goes with a second question.
    if (video) {
      await page.fill("#f-q1", "Which clip?");
      await page.fill("#f-q1o0", "This one");
      await page.fill("#f-q1o1", "Another");
      await page.click("details.media-slot >> nth=2 >> summary");
      await page.setInputFiles("#f-q1m", video);
    }
  }
  // Submit with an empty title first: errors shown, input kept.
  await page.fill("#f-title", "");
  await page.click("button.primary[value=create]");
  check(await page.isVisible(".error-summary"), `${lang}: error summary shown`);
  check((await page.inputValue("#f-q0o1")) === texts.b, `${lang}: input kept after an error`);
  if (withMedia) {
    check(await page.isVisible("#f-pm-held"), `${lang}: the chosen picture is held through the failed send`);
    if (sound) check(await page.isVisible("#f-q0m-held"), `${lang}: the chosen sound is held too`);
  }
  await audit(page, `${lang}-create-errors`);
  await page.fill("#f-title", texts.title);
  await page.click("button.primary[value=create]");
  await page.waitForSelector("#link-admin");
  await audit(page, `${lang}-created`);
  const share = await page.inputValue("#link-share");
  const admin = await page.inputValue("#link-admin");
  check(admin.includes("#"), `${lang}: admin link carries the key in the fragment`);

  await page.goto(share);
  check((await page.getAttribute("html", "lang")) === lang, `${lang}: share page in ${lang}`);
  if (withMedia) {
    const img = await page.evaluate(async () => {
      const i = document.querySelector("figure.media img");
      if (!i) return null;
      i.scrollIntoView();
      for (let n = 0; n < 50 && !(i.complete && i.naturalWidth); n++) await new Promise((r) => setTimeout(r, 100));
      return { width: i.naturalWidth, alt: i.alt };
    });
    check(img && img.width === 64 && img.alt === "A colour gradient", `${lang}: the picture loads under the CSP (${JSON.stringify(img)})`);
    for (const [tag, file] of [["audio", sound], ["video", video]]) {
      if (!file) continue;
      const duration = await page.evaluate((tag) => new Promise((done) => {
        const el = document.querySelector(`figure.media ${tag}`);
        if (!el) return done("missing");
        if (el.readyState >= 1) return done(el.duration);
        el.addEventListener("loadedmetadata", () => done(el.duration));
        el.addEventListener("error", () => done(`error ${el.error && el.error.code}`));
        el.load();
        setTimeout(() => done(`timeout, readyState ${el.readyState}`), 8000);
      }), tag);
      check(typeof duration === "number" && duration > 0, `${lang}: the ${tag} loads and has a duration (${duration})`);
    }
  }
  check(!(await page.isVisible("#already-voted")), `${lang}: no "already voted" before voting`);
  await audit(page, `${lang}-share`);
  await page.check("label:has-text('" + texts.b + "')");
  await page.click("form.vote button[type=submit]");
  await page.waitForSelector("#voted");
  await audit(page, `${lang}-thanks`);
  await page.goto(share);
  check(await page.isVisible("#already-voted"), `${lang}: "already voted" after voting`);

  await page.goto(share + "/results");
  const cells = await page.locator("table.tally tbody tr").nth(1).locator("td").allInnerTexts();
  check(cells[0] === "1", `${lang}: results count the vote (${cells})`);
  // The chart is really drawn: at the middle of the 100 % bar the browser
  // hits the bar's fill (not a clipped-away shape), and the 0 % bar has none.
  const bars = await page.locator("table.tally tbody tr svg.share-bar").evaluateAll((svgs) =>
    svgs.map((svg) => {
      svg.scrollIntoView();
      const fill = svg.querySelector(".fill").getBoundingClientRect();
      const track = svg.querySelector(".track").getBoundingClientRect();
      const hit = document.elementFromPoint(track.x + track.width * 0.5, track.y + track.height * 0.5);
      return { painted: hit ? hit.getAttribute("class") : null, share: fill.width / Math.max(track.width, 1) };
    }),
  );
  check(bars.length >= 2, `${lang}: one bar per option (${JSON.stringify(bars)})`);
  check(bars[1].painted === "fill" && bars[1].share > 0.95, `${lang}: the 100 % bar is drawn full (${JSON.stringify(bars)})`);
  check(bars[0].painted === "track" && bars[0].share < 0.05, `${lang}: the 0 % bar is drawn empty (${JSON.stringify(bars)})`);
  await audit(page, `${lang}-results`);

  await page.goto(admin);
  await page.waitForSelector("#status-heading");
  check(!page.url().includes("#"), `${lang}: the key left the address bar`);
  await audit(page, `${lang}-admin`);
  // Switching language keeps the dashboard unlocked (the key is posted along).
  const other = lang === "en" ? "de" : "en";
  await Promise.all([page.waitForNavigation(), page.click(`nav.langs button[lang=${other}]`)]);
  check(await page.isVisible("#status-heading"), `${lang}: the dashboard survives a language switch`);
  check((await page.getAttribute("html", "lang")) === other, `${lang}: the dashboard is now in ${other}`);
  await Promise.all([page.waitForNavigation(), page.click(`nav.langs button[lang=${lang}]`)]);
  await page.click("button[value=close]");
  await page.waitForSelector("button[value=reopen]");
  check(true, `${lang}: closed from the admin page`);
  await page.goto(share);
  check(await page.isVisible(".notice.closed"), `${lang}: share page says closed`);
  await audit(page, `${lang}-closed`);

  await page.goto(`${base}/privacy?lang=${lang}`);
  await audit(page, `${lang}-privacy`);
  check(errors.length === 0, `${lang}: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();
}

// Settings in German: results shown right after voting, a closing day,
// shuffled options; the voter lands on the results, and they see nothing
// before voting.
async function settingsScenario(lang) {
  const { context, page, errors } = await openPage(lang);
  await page.goto(`${base}/?lang=${lang}`);
  await page.fill("#f-title", "Mittagessen");
  await page.check("#f-results-aftervote");
  const closes = new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10);
  await page.fill("#f-closes-on", closes);
  await page.check("#f-shuffle");
  await page.fill("#f-q0", "Wohin?");
  for (const [i, o] of ["Pizza", "Sushi", "Salat", "Suppe"].entries()) await page.fill(`#f-q0o${i}`, o);
  await page.click("button.primary[value=create]");
  await page.waitForSelector("#link-admin");
  const share = await page.inputValue("#link-share");
  await page.goto(share + "/results");
  check((await page.locator("table.tally").count()) === 0, `${lang}: no results before voting`);
  await audit(page, `${lang}-withheld`);
  await page.goto(share);
  check(await page.isVisible("time.closes"), `${lang}: the share page names the closing day`);
  await audit(page, `${lang}-share-settings`);
  // Keyboard only: Tab to the first option (whichever the shuffle put first), Space, Enter.
  await page.focus("form.vote input[type=radio] >> nth=0");
  await page.keyboard.press("Space");
  await page.keyboard.press("Enter");
  await page.waitForSelector("#voted");
  check(page.url().includes("/results?voted="), `${lang}: the voter lands on the results (${page.url()})`);
  const total = await page.locator("table.tally tbody td.num >> nth=0").allInnerTexts();
  check((await page.locator("table.tally").count()) > 0, `${lang}: the results are shown after voting (${total})`);
  await audit(page, `${lang}-after-vote`);
  check(errors.length === 0, `${lang}: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();
}

try {
  await settingsScenario("de");
  await scenario("en", { title: "Team lunch", question: "Where shall we eat?", a: "Pizza", b: "Sushi" });
  await scenario("fr", { title: "Déjeuner d’équipe", question: "Où mangeons-nous ?", a: "Crêperie", b: "Brasserie" });
} catch (e) {
  failures.push(String(e && e.stack || e));
  console.log("FAIL - " + e);
} finally {
  await browser.close();
}
console.log(failures.length ? `${failures.length} failed` : "all passed");
process.exit(failures.length ? 1 : 0);
