// Issue 37, scheduling ("when can you come?"), in headless Chromium (driven
// by tests/browser.rs): in each of the four languages a schedule is made in
// the creation form (the browser's date and time pickers, the same times
// on every date, a time zone), answered on the share page by tap and by
// keyboard, and read best first on the page after the vote; then answered
// without script, and seen in the dark. axe on every state, screenshots at
// 360 and 1280 px.
// Usage: node schedule.mjs <base-url> <screenshot-dir>
import { mkdirSync } from "node:fs";
import { launch, check, axe, screenshots, openPage, run } from "./lib.mjs";

const base = process.argv[2];
const shots = process.argv[3] || "screenshots";
mkdirSync(shots, { recursive: true });
const browser = await launch();

async function audit(page, name) {
  await axe(page, name);
  await screenshots(page, shots, name);
}

const ZONES = { en: "Europe/London", fr: "europe/paris", de: "Europe/Berlin", it: "Europe/Rome" };
const BEST = { en: "Best date", fr: "Meilleure date", de: "Bester Termin", it: "Data migliore" };

/** Makes a schedule in the creation form in `lang`; returns the share URL. */
async function make(page, lang) {
  await page.goto(`${base}/?lang=${lang}`);
  await page.fill("#f-title", `Dinner ${lang}`);
  await page.fill("#f-q0", "?");
  await page.selectOption("#f-q0-type", "schedule");
  check(await page.isVisible("[data-kinds=schedule]"), `${lang}: the schedule's fields show once chosen`);
  check(!(await page.isVisible("#f-q0o0")), `${lang}: the answers' text fields are hidden for a schedule`);
  // The second date first: the form puts the slots in order.
  await page.fill("#f-q0d0", "2027-06-12");
  await page.fill("#f-q0d1", "2027-06-11");
  await page.fill("#f-q0t1", "09:30");
  await page.fill("#f-q0-times", lang === "fr" ? "18 h 00, 20 h 00" : "18:00, 20:00");
  await page.fill("#f-q0-tz", ZONES[lang]);
  await page.check("#f-q0-required");
  await audit(page, `schedule-${lang}-create`);
  await page.click("button.primary[value=create]");
  await page.waitForSelector("#link-share");
  return page.inputValue("#link-share");
}

async function inEachLanguage() {
  for (const lang of ["en", "fr", "de", "it"]) {
    const { context, page, errors } = await openPage(browser, lang);
    const share = await make(page, lang);
    await page.goto(share);
    const slots = await page.locator(".slot").count();
    check(slots === 3, `${lang}: three slots (one with its own time, two with the shared times): ${slots}`);
    const days = await page.locator(".slot-day-name").allTextContents();
    check(days.length === 2 && days[0].includes("2027") && days[0] !== days[1], `${lang}: two days, in order: ${days}`);
    check((await page.textContent(".time-zone")).includes("Europe/"), `${lang}: the time zone is named`);
    await audit(page, `schedule-${lang}-vote`);
    // By tap: yes on the first slot, if need be on the second; by keyboard
    // on the third: the arrow moves within its three answers.
    await page.check("#q0s0-yes");
    await page.check("#q0s1-ifneedbe");
    await page.focus("#q0s2-yes");
    await page.keyboard.press("ArrowRight");
    const third = await page.evaluate(() => document.querySelector("input[name=q0s2]:checked")?.value);
    check(third === "ifneedbe", `${lang}: the arrow key moves the third slot's answer (${third})`);
    await Promise.all([page.waitForNavigation(), page.click("form.vote button[type=submit]")]);
    // The web form's default: results after voting, shown on this page.
    const rows = await page.locator("#result-q0 tbody tr").count();
    check(rows === 3, `${lang}: the results list the three slots (${rows})`);
    const first = await page.textContent("#result-q0 tbody tr:first-child th");
    check(first.includes(BEST[lang]), `${lang}: the best slot comes first, marked "${BEST[lang]}": ${first}`);
    await audit(page, `schedule-${lang}-after`);
    check(errors.length === 0, `${lang}: no script errors (${errors.join("; ")})`);
    await context.close();
  }
}

/** Without script, in German: answered and counted all the same. */
async function withoutScript() {
  const made = await fetch(`${base}/api/polls`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Forwarded-For": "10.37.0.1" },
    body: JSON.stringify({
      title: "Ohne Skript", lang: "de", expiryDays: 30, resultsVisibility: "public",
      questions: [{ type: "schedule", label: "Wann?", options: ["2027-06-11", "2027-06-12T18:00"] }],
    }),
  }).then((r) => r.json());
  const context = await browser.newContext({ locale: "de", javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${base}/p/${made.id}`);
  await page.check("#q0s1-yes");
  await Promise.all([page.waitForNavigation(), page.click("form.vote button[type=submit]")]);
  const cells = await page.locator("#result-q0 tbody tr:first-child td").allTextContents();
  check(JSON.stringify(cells) === JSON.stringify(["1", "0", "0"]), `de, no script: the slot answered yes is first (${cells})`);
  // axe runs as a script in the page: without script, the pictures only
  // (the same markup is audited with script above).
  await screenshots(page, shots, "schedule-de-noscript-after");
  await context.close();
  // The same page in the dark.
  const dark = await browser.newContext({ locale: "de", colorScheme: "dark" });
  const night = await dark.newPage();
  await night.goto(`${base}/p/${made.id}`);
  // "No answer" takes the optional schedule back; a slot's answer, "No answer".
  await night.check("#q0s0-ifneedbe");
  await night.check("#q0-none");
  check(await night.evaluate(() => !document.querySelector(".slot input:checked")), "de: 'Keine Antwort' clears the slots");
  await night.check("#q0s1-yes");
  check(!(await night.isChecked("#q0-none")), "de: a slot's answer clears 'Keine Antwort'");
  await night.check("#q0s0-ifneedbe");
  await audit(night, "schedule-de-dark-vote");
  await dark.close();
}

await run(browser, async () => {
  for (const [name, item] of Object.entries({ inEachLanguage, withoutScript })) {
    if (process.env.ONLY && process.env.ONLY !== name) continue;
    try {
      await item();
    } catch (e) {
      check(false, `${name} threw: ${String(e && e.message || e).split("\n")[0]}`);
    }
  }
});
