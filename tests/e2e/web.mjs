// End-to-end scenario in headless Chromium (driven by tests/browser.rs):
// create a poll in the form, vote on the share page, see the counts, manage
// the poll from the admin link (key in the fragment), in English and French;
// in German, a poll whose results show right after voting, with a closing
// day and shuffled options;
// in French, an invite-only poll: codes issued on the admin page as a sheet
// of cards, an invite link that fills the code field and leaves the
// address bar, a vote, the same link refused;
// in English, receipts: one's own response seen, changed and withdrawn;
// axe-core on every page; screenshots at 360 px and 1280 px. In English, the
// poll gets a picture and its question a sound and a video: they are chosen
// before a failed send, must be held through it, and must really load and
// play under the pages' CSP.
// Usage: node web.mjs <base-url> <screenshot-dir> [<picture> <sound> <video>]
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { launch, check, axe, screenshots, openPage as open, run } from "./lib.mjs";

const base = process.argv[2];
const shots = process.argv[3] || "screenshots";
const [picture, sound, video] = process.argv.slice(4);
mkdirSync(shots, { recursive: true });
const browser = await launch();

/** axe-core, and screenshots at 360 and 1280 px. */
async function audit(page, name) {
  await axe(page, name);
  await screenshots(page, shots, name);
}

/** The language switcher as drawn: each entry's box and text style, and the header's height. */
async function switcher(page) {
  return page.evaluate(() => {
    const header = document.querySelector("header.site").getBoundingClientRect();
    const items = Array.from(document.querySelectorAll("nav.langs li")).map((li) => {
      const el = li.querySelector("a, button");
      const r = el.getBoundingClientRect();
      const s = getComputedStyle(el);
      return [Math.round(r.left), Math.round(r.top - header.top), Math.round(r.width), Math.round(r.height), s.fontSize,
        s.fontWeight, s.lineHeight, s.color, s.textDecorationLine, s.textUnderlineOffset, s.backgroundColor, s.borderTopWidth];
    });
    return { header: Math.round(header.height), items };
  });
}

/** Per question with a file on a results page (public or admin): whether
 *  its figure sits between the question's heading and its first table. */
async function figuresInPlace(page) {
  return page.evaluate(() => Array.from(document.querySelectorAll("section.results figure.media")).map((fig) => {
    const f = fig.getBoundingClientRect();
    let heading = fig.previousElementSibling;
    while (heading && !heading.matches(".question")) heading = heading.previousElementSibling;
    let next = fig.nextElementSibling;
    while (next && !next.querySelector("table")) next = next.nextElementSibling;
    if (!heading || !next) return { heading: !!heading, table: !!next };
    const h = heading.getBoundingClientRect();
    const table = next.querySelector("table");
    const tr = table.getBoundingClientRect();
    const q = heading.id.replace("-heading", "");
    return { q, ok: h.bottom <= f.top && f.bottom <= tr.top && table.id.startsWith(q) };
  }));
}

/** The creation form's settings are folded under "Settings": a person opens them. */
async function openSettings(page) {
  if (!(await page.isVisible("#f-lang"))) await page.click("#f-settings > summary");
}

const openPage = (lang) => open(browser, lang);

async function scenario(lang, texts) {
  const { context, page, errors } = await openPage(lang);

  await page.goto(`${base}/?lang=${lang}`);
  await audit(page, `${lang}-create`);
  const withMedia = lang === "en" && picture;
  // One slot per question: the video goes with a second question, added first.
  if (withMedia && video) await Promise.all([page.waitForNavigation(), page.click("button[value=add-question]")]);
  await page.fill("#f-title", texts.title);
  await openSettings(page);
  await page.selectOption("#f-lang", lang);
  await page.check("#f-results-public");
  await page.selectOption("#f-expiry", "90");
  await page.fill("#f-q0", texts.question);
  await page.fill("#f-q0o0", texts.a);
  await page.fill("#f-q0o1", texts.b);
  if (withMedia) {
    // The file fields are folded in <details>; a person opens them.
    await page.click("details.media-slot:has(#f-pm) > summary");
    await page.setInputFiles("#f-pm", picture);
    await page.fill("#f-pm-alt", "A colour gradient");
    if (sound) {
      await page.click("details.media-slot:has(#f-q0m) > summary");
      await page.setInputFiles("#f-q0m", sound);
    }
    if (video) {
      await page.fill("#f-q1", "Which clip?");
      await page.fill("#f-q1o0", "This one");
      await page.fill("#f-q1o1", "Another");
      await page.click("details.media-slot:has(#f-q1m) > summary");
      await page.setInputFiles("#f-q1m", video);
    }
  }
  // Enter in a field does not send the form (a page that navigated away
  // has lost the mark set here); only the submit button does.
  await page.evaluate(() => { window.stillHere = true; });
  for (const field of ["#f-title", "#f-q0o1", "#f-results-public"]) {
    await page.press(field, "Enter");
    await page.waitForTimeout(300);
    check(await page.evaluate(() => window.stillHere === true) && !(await page.isVisible("#link-admin")),
      `${lang}: Enter in ${field} does not create the poll`);
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
  // A reload of "Your poll is ready" sends the form again: said calmly.
  await page.reload();
  const again = await page.textContent("h1");
  check(!(await page.isVisible("#link-admin")) && again === texts.createdAgain, `${lang}: a reload says the poll was already created (${again})`);
  await audit(page, `${lang}-created-again`);

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
  const links = await switcher(page);
  await audit(page, `${lang}-share`);
  await page.check("label:has-text('" + texts.b + "')");
  await page.click("form.vote button[type=submit]");
  await page.waitForSelector("#voted");
  await audit(page, `${lang}-thanks`);
  await page.goto(share);
  // With a receipt kept (the default), the notice that offers one's
  // response says so instead of "already voted".
  check(await page.isVisible("#receipt-remembered") && !(await page.isVisible("#already-voted")), `${lang}: after voting the share page offers the kept receipt`);

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
  if (withMedia) {
    const placed = await figuresInPlace(page);
    check(placed.length === (video ? 2 : 1) && placed.every((p) => p.ok),
      `${lang}: on the results each question's file is between its heading and its answers (${JSON.stringify(placed)})`);
  }
  await audit(page, `${lang}-results`);

  await page.goto(admin);
  await page.waitForSelector("#status-heading");
  check(!page.url().includes("#"), `${lang}: the key left the address bar`);
  // Unlocked, the switcher's entries are buttons (they post the key along):
  // drawn exactly as the links of a page without the key.
  const buttons = await switcher(page);
  check(JSON.stringify(buttons) === JSON.stringify(links), `${lang}: the switcher's buttons look like its links (${JSON.stringify(buttons)} vs ${JSON.stringify(links)})`);
  const expiry = await page.inputValue("#a-expiry");
  check(expiry === "90", `${lang}: the erase-date choice is the poll's own (${expiry})`);
  // The file section names each thing once (no summary "File" above a field labelled "File").
  await page.click("#media-section > summary");
  const names = await page.locator("#media-section .fold-body").locator("h2, h3, summary, legend, label")
    .evaluateAll((els) => els.filter((e) => e.offsetParent !== null).map((e) => e.innerText.trim()));
  check(names.length >= 3 && new Set(names).size === names.length, `${lang}: the file section says each name once (${names})`);
  if (withMedia) {
    const placed = await figuresInPlace(page);
    check(placed.length === (video ? 2 : 1) && placed.every((p) => p.ok),
      `${lang}: on the admin page each question's file is between its heading and its answers (${JSON.stringify(placed)})`);
  }
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
  await openSettings(page);
  await page.check("#f-results-aftervote");
  const closes = new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10);
  await page.fill("#f-closes-on", closes);
  await page.check("#f-shuffle");
  check(await page.isChecked("#f-vote-changes"), `${lang}: voters may change their response by default`);
  await page.fill("#f-q0", "Wohin?");
  // Three answers to start; Enter in the last adds a fourth.
  for (const [i, o] of ["Pizza", "Sushi", "Salat", "Suppe"].entries()) {
    if (i === 3) await page.press("#f-q0o2", "Enter");
    await page.fill(`#f-q0o${i}`, o);
  }
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
  // With receipts (the default), the vote is answered with the receipt and
  // a link to the results, which the voter follows.
  await page.waitForSelector("#receipt");
  check(await page.isVisible("#voted"), `${lang}: the vote is confirmed with its receipt`);
  await Promise.all([page.waitForNavigation(), page.click("a.button[href*='/results?voted=']")]);
  check(page.url().includes("/results?voted="), `${lang}: the voter lands on the results (${page.url()})`);
  const total = await page.locator("table.tally tbody td.num >> nth=0").allInnerTexts();
  check((await page.locator("table.tally").count()) > 0, `${lang}: the results are shown after voting (${total})`);
  await audit(page, `${lang}-after-vote`);
  check(errors.length === 0, `${lang}: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();
}

// An invite-only poll in French: the admin issues codes and gets a sheet of
// cards; a card's link opens the share page with the code filled in and the
// fragment gone from the address; the code votes once.
async function inviteScenario(lang) {
  const { context, page, errors } = await openPage(lang);
  await page.goto(`${base}/?lang=${lang}`);
  await page.fill("#f-title", "Assemblée du club");
  await openSettings(page);
  await page.selectOption("#f-lang", lang);
  await page.check("#f-results-public");
  await page.check("#f-duplicate-invite");
  await page.fill("#f-q0", "Nouveau local ?");
  await page.fill("#f-q0o0", "Oui");
  await page.fill("#f-q0o1", "Non");
  await page.click("button.primary[value=create]");
  await page.waitForSelector("#link-admin");
  const admin = await page.inputValue("#link-admin");
  // The key prompt is open, and the admin link is pasted into the address
  // bar: only the fragment changes, and the page must take the key from it.
  await page.goto(admin.split("#")[0]);
  check(await page.isVisible("form[data-token-form] input[name=token]"), `${lang}: the key prompt without the key`);
  await page.goto(admin);
  const unlocked = await page.waitForSelector("#invites-heading", { timeout: 5000 }).then(() => true, () => false);
  check(unlocked && !page.url().includes("#"), `${lang}: the admin link pasted on the key prompt opens the dashboard (${page.url().includes("#") ? "key left in the address" : "address clean"})`);
  if (!unlocked) await page.reload(); // a load reads the fragment
  await page.waitForSelector("#invites-heading");
  check(await page.isChecked("#a-duplicate-invite"), `${lang}: the admin page shows the duplicate check`);
  await audit(page, `${lang}-admin-invites`);
  await page.fill("#a-invites-count", "4");
  await Promise.all([page.waitForNavigation(), page.click("button[value=invites]")]);
  const cards = page.locator("ul.cards li.card");
  check((await cards.count()) === 4, `${lang}: a sheet of 4 cards`);
  check(await page.isVisible("button[data-print]"), `${lang}: the print button is shown with script`);
  // One path per code, one "M" per run of dark modules (as many runs as
  // there were rects before the path).
  const runs = await page.locator("li.card svg.qr path").evaluateAll((ps) => ps.map((p) => (p.getAttribute("d").match(/M/g) || []).length));
  check(runs.length === 4 && runs.every((n) => n > 100), `${lang}: each card has a QR code (${runs})`);
  await audit(page, `${lang}-invite-cards`);
  await page.emulateMedia({ media: "print" });
  check(!(await page.isVisible("header.site")) && !(await page.isVisible(".sheet-intro")), `${lang}: printed, only the cards`);
  await page.screenshot({ path: join(shots, `${lang}-invite-cards-print.png`), fullPage: true });
  await page.emulateMedia({ media: "screen" });
  const link = await page.locator("li.card dd.url >> nth=0").innerText();
  const code = await page.locator("li.card dd.code >> nth=0").innerText();
  check(link.endsWith(`#invite=${code}`), `${lang}: the card's link carries its code in the fragment`);

  await page.goto(link);
  await page.waitForSelector("#invite");
  check((await page.inputValue("#invite")) === code, `${lang}: the invite link fills the code field`);
  check(!page.url().includes("#") && !page.url().includes(code), `${lang}: the code left the address bar (${page.url()})`);
  // Switching language sends the vote form along: the code with it.
  await Promise.all([page.waitForNavigation(), page.click('nav.langs button[lang="de"]')]);
  await page.waitForSelector("#invite");
  check((await page.inputValue("#invite")) === code, `${lang}: the code survives a switch of language`);
  check(!page.url().includes("#"), `${lang}: no fragment after the switch (${page.url()})`);
  await audit(page, `${lang}-share-invite`);
  await page.check("form.vote input[type=radio] >> nth=0");
  await page.click("form.vote button[type=submit]");
  await page.waitForSelector("#voted");
  check(true, `${lang}: voted with the invite code`);
  // The same link again: the code is used.
  await page.goto(link);
  // After a vote the form is folded behind "Answer again" (issue 25).
  await page.click("#answer-again");
  await page.waitForSelector("#invite");
  await page.check("form.vote input[type=radio] >> nth=1");
  await page.click("form.vote button[type=submit]");
  await page.waitForSelector(".notice.error");
  check(await page.isChecked("form.vote input[type=radio] >> nth=1"), `${lang}: refused, the choice is kept`);
  check((await page.inputValue("#invite")) === "", `${lang}: the refused code is not put back`);
  check((await page.getAttribute("#invite", "aria-invalid")) === "true", `${lang}: the code field is marked invalid`);
  await audit(page, `${lang}-invite-refused`);
  check(errors.length === 0, `${lang}: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();
}

// The site header in every language: one line at 1280 px (as high as the
// English one), and at 360 px it wraps between its parts, never inside an
// entry, and nothing scrolls sideways.
async function headerScenario() {
  const measure = (page) => page.evaluate(() => {
    const header = document.querySelector("header.site");
    const entries = Array.from(header.querySelectorAll(".brand, nav a, nav button")).map((el) => {
      const lh = parseFloat(getComputedStyle(el).lineHeight) || 20;
      return { text: el.textContent.trim(), oneLine: el.getBoundingClientRect().height < 2 * lh };
    });
    // On one line, the room left between the brand and the menu.
    const room = Math.round(header.querySelector("nav.main").getBoundingClientRect().left - header.querySelector(".brand").getBoundingClientRect().right);
    return { height: Math.round(header.getBoundingClientRect().height), entries, room, width: document.documentElement.scrollWidth };
  });
  const { context, page } = await openPage("en");
  const heights = {};
  const room = {};
  for (const lang of ["en", "fr", "de", "it"]) {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${base}/?lang=${lang}`);
    ({ height: heights[lang], room: room[lang] } = await measure(page));
    await page.locator("header.site").screenshot({ path: join(shots, `${lang}-header-1280.png`) });
    await page.setViewportSize({ width: 360, height: 800 });
    const narrow = await measure(page);
    await page.locator("header.site").screenshot({ path: join(shots, `${lang}-header-360.png`) });
    const broken = narrow.entries.filter((e) => !e.oneLine).map((e) => e.text);
    check(narrow.width <= 360 && broken.length === 0, `header ${lang} at 360 px: no sideways scroll (${narrow.width}), no entry on two lines (${broken})`);
  }
  check(["fr", "de", "it"].every((l) => heights[l] === heights.en), `header: one line at 1280 px in every language (heights ${JSON.stringify(heights)}, room ${JSON.stringify(room)})`);
  await context.close();
}

// The privacy page's table at 360 px in every language: stacked, no
// sideways scroll, no word broken across lines, still a table for
// assistive technology (each cell named by its column header).
async function privacyScenario() {
  const { context, page } = await openPage("en");
  await page.setViewportSize({ width: 360, height: 800 });
  for (const lang of ["en", "fr", "de", "it"]) {
    await page.goto(`${base}/privacy?lang=${lang}`);
    const seen = await page.evaluate(() => {
      const table = document.querySelector("table.kept");
      const wrap = table.closest(".table-wrap");
      const broken = [];
      const walker = document.createTreeWalker(table.tBodies[0], NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        // A word, or the part of one up to a hyphen (a line may end there).
        const re = /[^\s\-\u2010]+[\-\u2010]?/g;
        for (let m = re.exec(node.data); m; m = re.exec(node.data)) {
          const range = document.createRange();
          range.setStart(node, m.index);
          range.setEnd(node, m.index + m[0].length);
          // A word on two lines has a box on each.
          const lines = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top)));
          if (lines.size > 1) broken.push(m[0]);
        }
      }
      return { page: document.documentElement.scrollWidth, wrap: wrap.scrollWidth - wrap.clientWidth, broken };
    });
    check(seen.page <= 360 && seen.wrap <= 0 && seen.broken.length === 0,
      `privacy ${lang} at 360 px: no sideways scroll (${seen.page}, ${seen.wrap}), no word broken (${seen.broken})`);
    // The accessibility tree as Chromium exposes it.
    const tree = await page.locator("table.kept").ariaSnapshot();
    const has = (role) => new RegExp(`^\\s*- ${role}\\b`, "m").test(tree);
    check(has("table") && has("row") && has("columnheader") && has("rowheader") && has("cell"),
      `privacy ${lang} at 360 px: still a table for assistive technology (${tree.split("\n").slice(0, 4).join(" / ")})`);
    await page.screenshot({ path: join(shots, `${lang}-privacy-360.png`), fullPage: true });
  }
  await context.close();
}

/** Presses Tab until the focused element matches `selector` (keyboard only). */
async function tabTo(page, selector, what) {
  for (let n = 0; n < 30; n++) {
    if (await page.evaluate((sel) => document.activeElement && document.activeElement.matches(sel), selector)) return true;
    await page.keyboard.press("Tab");
  }
  check(false, `Tab reaches ${what || selector}`);
  return false;
}

// One question of each type, made in the form (the script shows each
// type's fields), answered with the keyboard only (the ranking through its
// move buttons), and read back on the results page.
async function typesScenario(lang) {
  const { context, page, errors } = await openPage(lang);
  await page.goto(`${base}/?lang=${lang}`);
  for (let i = 0; i < 3; i++) await Promise.all([page.waitForNavigation(), page.click("button[value=add-question]")]);
  await page.fill("#f-title", "Team day");
  await openSettings(page);
  await page.check("#f-results-public");
  check(!(await page.isVisible("#f-q0-min")) && !(await page.isVisible("#f-q0-from")), "types: a single-choice row shows no fields of other types");
  const rows = [
    ["single", "Where shall we go?", ["Park", "Lake"]],
    ["multiple", "Which snacks?", ["Nuts", "Fruit", "Cake"]],
    ["ranked", "Which games, in order?", ["Chess", "Darts", "Go"]],
    ["scale", "How much fun will it be?", []],
  ];
  for (const [i, [kind, label, options]] of rows.entries()) {
    await page.fill(`#f-q${i}`, label);
    await page.selectOption(`#f-q${i}-type`, kind);
    for (const [j, o] of options.entries()) await page.fill(`#f-q${i}o${j}`, o);
  }
  check(await page.isVisible("#f-q1-max"), "types: a multiple-choice row shows its bounds");
  check(!(await page.isVisible("#f-q3o0")) && await page.isVisible("#f-q3-from"), "types: a scale row shows its ends and no options");
  await page.fill("#f-q1-max", "2");
  await page.check("#f-q3-required");
  // The longest scale: eleven segments must still fit a phone.
  await page.selectOption("#f-q3-from", "0");
  await page.selectOption("#f-q3-to", "10");
  await page.fill("#f-q3-low", "No fun");
  await page.fill("#f-q3-high", "Great fun");
  await audit(page, `${lang}-types-create`);
  await page.click("button.primary[value=create]");
  await page.waitForSelector("#link-share");
  const share = await page.inputValue("#link-share");

  // Every request the vote page makes (the ranking's live region once
  // passed for the live results' address: a request every 10 s).
  const asked = [];
  const note = (req) => asked.push(req.url());
  page.on("request", note);
  await page.goto(share);
  await page.waitForTimeout(500);
  page.off("request", note);
  const extra = asked.filter((u) => u !== share && !/\/static\//.test(u));
  check(extra.length === 0, `types: the vote page asks for nothing but itself and its files (${JSON.stringify(extra)})`);
  check(await page.locator("button[data-move]").first().isVisible(), "types: the ranking has move buttons with script");
  await page.focus("#q0-0");
  await page.keyboard.press("ArrowDown"); // Lake
  await tabTo(page, "#q1-0", "the first checkbox");
  await page.keyboard.press("Space"); // Nuts
  await tabTo(page, "#q1-2", "the third checkbox");
  await page.keyboard.press("Space"); // Cake
  // Go up once: ranked first (it was unranked: it joins the ranking after
  // its last rank), nothing else changes; then Chess up: ranked second.
  const goUp = "li.rank-row:has(#q2r2) button[data-move=up]";
  await tabTo(page, goUp, "Go's move-up button");
  const name = await page.evaluate(() => document.activeElement.textContent.trim());
  check(name.includes("Move up") && name.includes("Go"), `types: the move button is named for its option (${name})`);
  await page.keyboard.press("Enter");
  const focused = await page.evaluate(() => document.activeElement.getAttribute("data-move"));
  check(focused === "down", `types: focus stays on the row when its up button is used up (${focused})`);
  const alone = await page.evaluate(() => ["q2r0", "q2r1", "q2r2"].map((id) => document.getElementById(id).value));
  check(JSON.stringify(alone) === JSON.stringify(["", "", "1"]), `types: moving Go up ranks Go alone (${alone})`);
  await tabTo(page, "li.rank-row:has(#q2r0) button[data-move=up]", "Chess's move-up button");
  await page.keyboard.press("Enter");
  const ranks = await page.evaluate(() => ["q2r0", "q2r1", "q2r2"].map((id) => document.getElementById(id).value));
  check(JSON.stringify(ranks) === JSON.stringify(["2", "", "1"]), `types: the selects follow the rows (${ranks})`);
  const order = await page.locator("ol.ranking label").allInnerTexts();
  check(order.join() === "Go,Chess,Darts", `types: the rows are in the order of the ranking (${order})`);
  const said = await page.textContent("#q2-live");
  check(said.includes("Chess") && said.includes("2"), `types: the move is announced (${said})`);
  await tabTo(page, "#q3-0", "the scale");
  for (let n = 0; n < 4; n++) await page.keyboard.press("ArrowRight");
  check(await page.isChecked("#q3-4"), "types: arrows pick a value on the scale");
  await page.setViewportSize({ width: 360, height: 800 });
  const shareWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  const segment = await page.locator("label[for=q3-10]").boundingBox();
  check(shareWidth <= 360 && segment && segment.width >= 24 && segment.height >= 24,
    `types: the share page fits 360 px with targets of 24 px or more (${shareWidth}, ${JSON.stringify(segment)})`);
  await page.setViewportSize({ width: 1280, height: 800 });
  await audit(page, `${lang}-types-share`);
  await page.focus("#q3-4");
  await page.keyboard.press("Enter");
  await page.waitForSelector("#voted");

  await page.goto(share + "/results");
  const cells = async (id) => page.locator(`#${id} tbody tr`).evaluateAll((trs) =>
    trs.map((tr) => Array.from(tr.children).map((c) => c.innerText.trim())));
  const single = await cells("result-q0");
  check(single[1][1] === "1" && single[0][1] === "0", `types: single choice counted (${JSON.stringify(single)})`);
  const multiple = await cells("result-q1");
  check(multiple.map((r) => r[1]).join() === "1,0,1", `types: multiple choice counted (${JSON.stringify(multiple)})`);
  const ranking = await cells("result-q2-ranking");
  check(ranking[0][0] === "1st" && ranking[0][1] === "Go" && ranking[1][1] === "Chess", `types: the ranking's places (${JSON.stringify(ranking)})`);
  const scale = await cells("result-q3");
  check(scale.map((r) => r[1]).join() === "0,0,0,0,1,0,0,0,0,0,0", `types: the scale's histogram (${JSON.stringify(scale)})`);
  const summary = await page.textContent("#result-q3-summary");
  check(/Mean: 4\b/.test(summary) && /Median: 4\b/.test(summary), `types: mean and median (${summary})`);
  await page.click("details.pairwise summary");
  await page.setViewportSize({ width: 360, height: 800 });
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  check(wide <= 360, `types: the results page fits 360 px (${wide})`);
  await page.setViewportSize({ width: 1280, height: 800 });
  await audit(page, `${lang}-types-results`);
  check(errors.length === 0, `types: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();
  await typesWithoutScript(share);
}

// Without script every field of the creation form is there, and a ranking
// is answered with its selects alone.
async function typesWithoutScript(share) {
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 360, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${base}/?lang=en`);
  check(await page.isVisible("#f-q0-min") && await page.isVisible("#f-q0-from") && await page.isVisible("#f-q0o0"),
    "no script: the creation form shows the fields of every type");
  await page.screenshot({ path: join(shots, "en-types-create-noscript-360.png"), fullPage: true });
  await page.goto(share);
  check(!(await page.locator("button[data-move]").first().isVisible()), "no script: no move buttons");
  // A chosen answer is taken back with the keyboard: "No answer" is the
  // last radio of the optional single choice.
  await page.focus("#q0-0");
  await page.keyboard.press("Space");
  check(await page.isChecked("#q0-0"), "no script: Park chosen");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  check(await page.isChecked("#q0-none") && !(await page.isChecked("#q0-0")) && !(await page.isChecked("#q0-1")),
    "no script: the arrows reach \"No answer\", which clears the choice");
  await page.selectOption("#q2r1", "1");
  await page.selectOption("#q2r0", "2");
  await page.check("#q3-7");
  await page.screenshot({ path: join(shots, "en-types-share-noscript-360.png"), fullPage: true });
  await page.click("form.vote button[type=submit]");
  await page.waitForSelector("#voted");
  await page.goto(share + "/results");
  const single = await page.locator("#result-q0 tbody td.num:nth-child(2)").allInnerTexts();
  check(single.join() === "0,1", `no script: the answer taken back counts nothing (${single})`);
  const firsts = await page.locator("#result-q2 tbody tr td.num >> nth=2").innerText();
  check(firsts === "1", `no script: the ranking sent with selects counts (Darts first: ${firsts})`);
  await context.close();
}

// Receipts (issue 15), in English: vote and get a receipt; the share page
// then offers one's response; it opens by itself, is changed (in another
// language too) and withdrawn; the receipt's link opens it in a fresh
// browser and leaves the address bar; a wrong receipt is said at its field.
async function receiptScenario(lang) {
  const created = await fetch(`${base}/api/polls`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      title: "Team day", lang, expiryDays: 30, resultsVisibility: "afterVote",
      questions: [
        { type: "single", label: "Where?", options: ["Park", "Lake"] },
        { type: "multiple", label: "Snacks?", options: ["Nuts", "Fruit", "Cake"], required: true, maxChoices: 2 },
        { type: "ranked", label: "Games?", options: ["Chess", "Darts", "Go"] },
        { type: "scale", label: "Fun?", required: true, scaleMin: 1, scaleMax: 5, minLabel: "None", maxLabel: "Lots" },
      ],
    }),
  }).then((r) => r.json());
  const share = `${base}/p/${created.id}`;
  const counts = async () => {
    const r = await fetch(`${base}/api/polls/${created.id}/results`, { headers: { Authorization: `Bearer ${created.adminToken || created.token}` } });
    const j = await r.json();
    return { total: j.totalResponses, q0: (j.questions || [])[0] && j.questions[0].options.map((o) => o.count).join() };
  };
  const vote = async (page) => {
    await page.goto(share);
    await page.check("#q0-1");
    await page.check("#q1-0");
    await page.selectOption("#q2r1", "1");
    await page.check("#q3-4");
    await page.click("form.vote button[type=submit]");
    await page.waitForSelector("#receipt");
  };

  const { context, page, errors } = await openPage(lang);
  await page.goto(share);
  check(!(await page.isVisible("#receipt-remembered")) && await page.isVisible("#own-ballot-link"),
    `receipts: before voting, only the plain link to one's response`);
  await vote(page);
  const receipt = (await page.textContent("#receipt")).trim();
  check(/^([0-9A-Z]{4}-){5}[0-9A-Z]{4}$/.test(receipt), `receipts: the thanks page shows the receipt (${receipt})`);
  const link = await page.getAttribute("#receipt-link", "href");
  check(link === `/p/${created.id}/ballot#receipt=${receipt}`, `receipts: the link carries it in the fragment (${link})`);
  const kept = await page.evaluate((id) => localStorage.getItem(`anonpoll:receipt:${id}`), created.id);
  check(kept && kept.endsWith(" " + receipt), `receipts: kept in localStorage (${kept})`);
  const cookies = await context.cookies();
  check(cookies.length === 0, `receipts: no cookie (${JSON.stringify(cookies)})`);
  check(await page.isVisible("a.button[href*='/results?voted=']"), "receipts: afterVote, a way to the results");
  await audit(page, `${lang}-receipt-thanks`);

  await page.goto(share);
  check(await page.isVisible("#receipt-remembered") && !(await page.isVisible("#already-voted")),
    "receipts: the share page offers one's response");
  await audit(page, `${lang}-receipt-remembered`);
  // The kept receipt follows the poll's erase day as it is now.
  await page.evaluate(([id, r]) => localStorage.setItem(`anonpoll:receipt:${id}`, `2099-12-31 ${r}`), [created.id, receipt]);
  await page.reload();
  const refreshed = await page.evaluate((id) => localStorage.getItem(`anonpoll:receipt:${id}`), created.id);
  check(refreshed === `${created.expiresOn} ${receipt}`, `receipts: kept until the poll's erase day (${refreshed})`);
  await Promise.all([page.waitForURL(/\/ballot/), page.click("#receipt-remembered a")]);
  await page.waitForSelector("form.own-ballot");
  check(await page.isChecked("#q0-1") && await page.isChecked("#q1-0") && await page.isChecked("#q3-4"),
    "receipts: the ballot page opens by itself with the response as counted");
  check(await page.isVisible("#result-q0"), "receipts: afterVote, the ballot page shows the results");
  await audit(page, `${lang}-own-ballot`);
  // Back from the ballot page leaves it (the prompt sent itself while
  // loading, so its entry was replaced): no loop back into the ballot.
  await page.goBack();
  await page.waitForTimeout(500);
  check(!page.url().endsWith("/ballot") && !(await page.isVisible("form.own-ballot")),
    `receipts: Back leaves the ballot page (${page.url()})`);
  // A new visit opens it by itself again.
  await Promise.all([page.waitForURL(/\/ballot/), page.click("#receipt-remembered a")]);
  await page.waitForSelector("form.own-ballot");

  await page.check("#q0-0");
  await Promise.all([page.waitForNavigation(), page.click("button[value=change]")]);
  check(await page.isVisible(".notice.ok") && await page.isChecked("#q0-0"), "receipts: the change is saved and shown");
  const afterChange = await counts();
  check(afterChange.q0 === "1,0", `receipts: the counters follow the change (${JSON.stringify(afterChange)})`);
  await audit(page, `${lang}-own-ballot-changed`);
  // The language switcher posts the receipt along.
  await Promise.all([page.waitForNavigation(), page.click("nav.langs button[lang=de]")]);
  check((await page.getAttribute("html", "lang")) === "de" && await page.isChecked("#q0-0"),
    "receipts: the ballot page survives a language switch");
  check(!page.url().includes("receipt") && !page.url().includes(receipt), `receipts: the receipt is in no address (${page.url()})`);
  await Promise.all([page.waitForNavigation(), page.click(`nav.langs button[lang=${lang}]`)]);

  // The withdraw button asks first; going back from there withdraws nothing.
  await Promise.all([page.waitForNavigation(), page.click("button[value=confirm-withdraw]")]);
  check(await page.isVisible("button[value=withdraw]") && !(await page.isVisible("#withdrawn")),
    "withdrawing asks first");
  check((await counts()).total === 1, "receipts: asking to withdraw withdraws nothing");
  await Promise.all([page.waitForNavigation(), page.click("button[value=withdraw]")]);
  await page.waitForSelector("#withdrawn");
  const gone = await page.evaluate((id) => localStorage.getItem(`anonpoll:receipt:${id}`), created.id);
  check(gone === null, "receipts: withdrawn, the browser forgets the receipt");
  const afterWithdraw = await counts();
  check(afterWithdraw.total === 0, `receipts: the counters lose the ballot (${JSON.stringify(afterWithdraw)})`);
  await audit(page, `${lang}-own-ballot-withdrawn`);
  await page.goto(share);
  check(!(await page.isVisible("#receipt-remembered")), "receipts: nothing remembered after withdrawing");

  // Forget: the notice goes, and the storage with it.
  await vote(page);
  await page.goto(share);
  await page.click("[data-forget-receipt]");
  check(!(await page.isVisible("#receipt-remembered")), "receipts: forgotten on request");
  const forgotten = await page.evaluate((id) => localStorage.getItem(`anonpoll:receipt:${id}`), created.id);
  check(forgotten === null, "receipts: forgetting empties the storage");
  check(errors.length === 0, `receipts: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();

  // The receipt's link in a fresh browser (nothing stored).
  const voter = await openPage(lang);
  await vote(voter.page);
  const fresh = await voter.page.getAttribute("#receipt-link", "href");
  await voter.context.close();
  const other = await openPage(lang);
  await other.page.goto(base + fresh);
  await other.page.waitForSelector("form.own-ballot");
  check(!other.page.url().includes("#") && !other.page.url().includes("receipt"),
    `receipts: the link opens the ballot and leaves the address bar (${other.page.url()})`);
  check(await other.page.isChecked("#q3-4"), "receipts: the link opens that response");
  // A fresh prompt, and a wrong receipt said at the field, not sent again.
  await other.page.goto(`${share}/ballot`);
  check(await other.page.isVisible("input#receipt"), "receipts: without a stored receipt, the prompt");
  await audit(other.page, `${lang}-own-ballot-prompt`);
  await other.page.fill("#receipt", "0000-0000-0000-0000-0000-0000");
  await Promise.all([other.page.waitForNavigation(), other.page.click("button[value=show]")]);
  await other.page.waitForTimeout(500);
  check(await other.page.isVisible("#receipt-error") && (await other.page.getAttribute("#receipt", "aria-invalid")) === "true",
    "receipts: an unknown receipt is refused at its field");
  await audit(other.page, `${lang}-own-ballot-refused`);
  check(other.errors.length === 0, `receipts: no script or console errors ${JSON.stringify(other.errors)}`);
  await other.context.close();

  // Without script: the receipt is typed.
  const noscript = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 360, height: 800 } });
  const np = await noscript.newPage();
  await np.goto(share);
  check(await np.isVisible("#own-ballot-link"), "no script: the share page links to one's response");
  await np.check("#q1-2");
  await np.check("#q3-2");
  await np.click("form.vote button[type=submit]");
  await np.waitForSelector("#receipt");
  const typed = (await np.textContent("#receipt")).trim();
  await np.goto(`${share}/ballot`);
  await np.fill("#receipt", typed.toLowerCase());
  await np.click("button[value=show]");
  await np.waitForSelector("form.own-ballot");
  check(await np.isChecked("#q1-2") && await np.isChecked("#q3-2"), "no script: the typed receipt opens the response");
  await np.screenshot({ path: join(shots, `${lang}-own-ballot-noscript-360.png`), fullPage: true });
  await noscript.close();
}

await run(browser, async () => {
  await receiptScenario("en");
  await headerScenario();
  await privacyScenario();
  await typesScenario("en");
  await settingsScenario("de");
  await inviteScenario("fr");
  await scenario("en", { title: "Team lunch", question: "Where shall we eat?", a: "Pizza", b: "Sushi",
    createdAgain: "This form was already sent" });
  await scenario("fr", { title: "Déjeuner d’équipe", question: "Où mangeons-nous ?", a: "Crêperie", b: "Brasserie",
    createdAgain: "Ce formulaire a déjà été envoyé" });
});
