// The design of issue 16, checked in headless Chromium (driven by
// tests/browser.rs, like web.mjs): in en, fr, de and it, every page this
// pass touched is audited with axe-core in light and dark mode
// (`prefers-color-scheme`), screenshotted at 360 and 1280 px in both, and
// checked for sideways scrolling and words broken mid-word at 360 px. Then:
// - the home page has the mark and the one-line promise;
// - the problem list is calm (a heading, normal-weight links by name) and,
//   in French, no text puts a plain space before ":" (or none at all);
// - a kept file shows as a card with its thumbnail and a remove button, which removes it;
// - "Your poll is ready" has the share link's QR code (SVG) and a Copy button;
// - public results: whole percentages, the leading answer marked in words,
//   and a live refresh that shows a new vote without a reload;
// - the admin page starts with the results, above the links, the rest folded;
// - the creation form: Enter in an answer goes to the next (adding one),
//   each answer has a remove button; the header stays one line at 1280 px;
// - the invite sheet prints only its cards, three a row, black on white
//   (in every language);
// - three states of issue 25 in every language: results not visible yet
//   (the way to the poll), a refused vote (the question named and marked),
//   the invite sheet after a reload (nothing issued; since issue 37 the
//   dashboard, loaded by GET, says the codes cannot be shown again).
// Usage: node design.mjs <base-url> <screenshot-dir> [<picture>]
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { launch, check, axe, openPage as open, layoutProblems, run } from "./lib.mjs";

const base = process.argv[2];
const shots = process.argv[3] || "screenshots";
const picture = process.argv[4];
mkdirSync(shots, { recursive: true });
const browser = await launch();

/** Axe in light and dark, screenshots at 360 and 1280 in both, layout at 360. */
async function audit(page, name) {
  // A ranking's duels table open, so that it is seen and probed too.
  await page.evaluate(() => document.querySelectorAll("details.pairwise").forEach((d) => { d.open = true; }));
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width: 1280, height: 800 });
    await axe(page, `${name} (${scheme})`);
    for (const width of [360, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      await page.screenshot({ path: join(shots, `design-${name}-${scheme}-${width}.png`), fullPage: true });
      if (width === 360 && scheme === "light") {
        const { broken, sideways, scrolled } = await layoutProblems(page);
        check(!sideways, `${name}: no sideways scrolling at 360 px`);
        check(scrolled.length === 0, `${name}: no table scrolls sideways at 360 px ${JSON.stringify(scrolled)}`);
        check(broken.length === 0, `${name}: no word broken mid-word at 360 px ${JSON.stringify(broken.slice(0, 5))}`);
      }
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** French typography on the page's text: no plain space, and no missing space, before : ; ? ! */
async function frenchColons(page, name) {
  const bad = await page.evaluate(() => {
    const texts = [document.body.innerText,
      ...Array.from(document.querySelectorAll("option")).map((o) => o.textContent)];
    const found = [];
    for (const t of texts) {
      for (const m of t.matchAll(/.{0,20}( [:;?!]|[\p{L})»][:;?!](?=\s|$))/gu)) found.push(m[0]);
    }
    return found;
  });
  check(bad.length === 0, `${name}: no plain or missing space before a colon (French) ${JSON.stringify(bad.slice(0, 5))}`);
}

const openPage = (lang) => open(browser, lang);

const TEXTS = {
  en: { title: "Team lunch", question: "Where shall we eat?", answers: ["Pizza", "Sushi", "Salad bar"] },
  fr: { title: "Déjeuner d’équipe", question: "Où mangeons-nous\u202F?", answers: ["Crêperie", "Brasserie", "Bistrot"] },
  de: { title: "Mittagessen im Team", question: "Wo essen wir?", answers: ["Pizzeria", "Biergarten", "Salatbar"] },
  it: { title: "Pranzo di squadra", question: "Dove mangiamo?", answers: ["Pizzeria", "Trattoria", "Insalateria"] },
};

async function scenario(lang) {
  const texts = TEXTS[lang];
  const { context, page, errors } = await openPage(lang);
  const fr = lang === "fr" ? frenchColons : async () => {};

  // Home: the mark and the promise.
  await page.goto(`${base}/?lang=${lang}`);
  check(await page.isVisible("a.brand svg.mark") && await page.isVisible("p.tagline"), `${lang}: the home page has the mark and the promise`);
  const header = await page.evaluate(() => Math.round(document.querySelector("header.site").getBoundingClientRect().height));
  check(header < 60, `${lang}: the header with its mark is one line at 1280 px (${header} px)`);
  await audit(page, `${lang}-home`);
  await fr(page, `${lang}-home`);

  // Answers: Enter goes to the next answer, and adds one after the last;
  // each answer has a remove button, and the ones below move up.
  await page.fill("#f-q0o0", "one");
  await page.press("#f-q0o0", "Enter");
  const focused = () => page.evaluate(() => document.activeElement && document.activeElement.id);
  check(await focused() === "f-q0o1", `${lang}: Enter in an answer goes to the next one`);
  await page.fill("#f-q0o1", "two");
  await page.press("#f-q0o1", "Enter");
  await page.fill("#f-q0o2", "three");
  const rows = await page.locator("#f-q0-set ol.options > li").count();
  await page.press(`#f-q0o${rows - 1}`, "Enter");
  const added = await focused();
  const addedLabel = await page.locator(`label[for=f-q0o${rows}]`).innerText().catch(() => "");
  check(added === `f-q0o${rows}` && addedLabel.includes(String(rows + 1)),
    `${lang}: Enter in the last answer adds one more, labelled (${added}, ${addedLabel})`);
  check(page.url().endsWith(`/?lang=${lang}`) && !(await page.isVisible(".error-summary")), `${lang}: Enter sent nothing`);
  await page.click("#f-q0-set li.option-row >> nth=1 >> button[data-remove-option]");
  const values = await page.evaluate(() => Array.from(document.querySelectorAll("#f-q0-set ol.options input")).map((i) => i.value));
  check(JSON.stringify(values.slice(0, 3)) === JSON.stringify(["one", "three", ""]) && values.length === rows &&
    await focused() === "f-q0o1",
    `${lang}: removing the second answer moves the others up (${JSON.stringify(values)})`);
  await page.reload();

  // A failed send with a picture: the calm problem list, the kept file.
  // One short screen: the title and one question with three answers, the
  // rest folded under "Settings".
  const form = await page.evaluate(() => ({
    questions: document.querySelectorAll("fieldset.question").length,
    answers: document.querySelectorAll("#f-q0-set ol.options > li").length,
    folded: !document.getElementById("f-settings").open && !!document.querySelector("#f-settings #f-lang") &&
      !!document.querySelector("#f-settings #f-expiry") && !!document.querySelector("#f-settings #f-pm"),
  }));
  check(form.questions === 1 && form.answers === 3 && form.folded,
    `${lang}: the form starts with one question of three answers, the settings folded (${JSON.stringify(form)})`);
  if (picture) {
    await page.click("#f-settings > summary");
    await page.click("details.media-slot >> nth=0 >> summary");
    await page.setInputFiles("#f-pm", picture);
  }
  await page.click("button.primary[value=create]");
  await page.waitForSelector(".error-summary");
  const summary = await page.evaluate(() => {
    const s = document.querySelector(".error-summary");
    const a = s.querySelector("a");
    return { heading: !!s.querySelector("h2"), weight: a ? parseInt(getComputedStyle(a).fontWeight, 10) : 0,
      link: a ? a.textContent.length : 0, line: a ? a.parentElement.textContent.length : 0 };
  });
  check(summary.heading && summary.weight < 600 && summary.link < summary.line,
    `${lang}: the problem list has a heading and normal-weight links by name (${JSON.stringify(summary)})`);
  await fr(page, `${lang}-problems`);
  if (picture) {
    check(await page.isVisible("#f-pm-held button[value=media-drop-pm]"), `${lang}: the kept picture shows as a card with a remove button`);
    const thumb = await page.evaluate(async () => {
      const img = document.querySelector("#f-pm-held img.held-thumb");
      if (!img) return null;
      await img.decode().catch(() => {});
      return { alt: img.getAttribute("alt"), width: img.naturalWidth, src: img.getAttribute("src") };
    });
    check(thumb && thumb.alt === "" && thumb.width > 0 && /^\/held\/[A-Za-z0-9_-]{22}$/.test(thumb.src),
      `${lang}: the kept picture's card shows its thumbnail, loaded under the CSP (${JSON.stringify(thumb)})`);
  }
  await audit(page, `${lang}-problems`);
  if (picture) {
    await page.click("#f-pm-held button[value=media-drop-pm]");
    await page.waitForLoadState();
    check(!(await page.isVisible("#f-pm-held")), `${lang}: the remove button removes the kept file`);
  }

  // Create: title, one question, three answers, public results, no duplicate check.
  await page.fill("#f-title", texts.title);
  if (!(await page.isVisible("#f-lang"))) await page.click("#f-settings > summary");
  await page.selectOption("#f-lang", lang);
  await page.check("#f-results-public");
  await page.check("#f-duplicate-none");
  await page.fill("#f-q0", texts.question);
  for (const [j, a] of texts.answers.entries()) await page.fill(`#f-q0o${j}`, a);
  await page.click("button.primary[value=create]");
  await page.waitForSelector("#link-admin");
  check(await page.isVisible(".share-block svg.qr") && await page.isVisible("button[data-copy=link-share]"),
    `${lang}: "Your poll is ready" has the share link's QR code and a Copy button`);
  check(await page.isVisible(".warning #link-admin"), `${lang}: the admin link sits in its "keep this" warning`);
  await audit(page, `${lang}-created`);
  await fr(page, `${lang}-created`);
  const share = await page.inputValue("#link-share");
  const admin = await page.inputValue("#link-admin");
  // Kept in this browser (issue 25): the home page lists it.
  await page.check("#keep-admin");
  await page.goto(`${base}/?lang=${lang}`);
  check(await page.isVisible("#my-polls-list a"), `${lang}: the home page lists the poll kept on this device`);
  await audit(page, `${lang}-home-my-polls`);
  await fr(page, `${lang}-home-my-polls`);

  // The share page and the admin key prompt wear the same header and colours.
  await page.goto(share);
  await audit(page, `${lang}-share`);
  await fr(page, `${lang}-share`);
  await page.goto(admin.split("#")[0]);
  await audit(page, `${lang}-admin-prompt`);
  await fr(page, `${lang}-admin-prompt`);

  // Two votes for the first answer, one for the second.
  for (const answer of [0, 0, 1]) {
    await page.goto(share);
    // After a vote the form is folded behind "Answer again" (issue 25).
    if (await page.isVisible("#answer-again")) await page.click("#answer-again");
    await page.check(`#q0-${answer}`);
    await Promise.all([page.waitForNavigation(), page.click("form.vote button[type=submit]")]);
  }
  await audit(page, `${lang}-thanks`);
  await page.goto(share);
  check(await page.isVisible("#answer-again") && !(await page.isVisible("form.vote")), `${lang}: after voting the form is folded`);
  await audit(page, `${lang}-share-after-vote`);
  await fr(page, `${lang}-share-after-vote`);

  // Public results: whole numbers, the leader marked, a live refresh.
  await page.goto(`${share}/results`);
  const shares = await page.locator("#result-q0 tbody td.num:nth-child(3)").allInnerTexts();
  check(shares.every((s) => !/[.,]\d/.test(s)) && shares.length === 3, `${lang}: whole-number shares (${shares})`);
  const leaders = await page.locator("#result-q0 tr.leading").count();
  const mark = await page.locator("#result-q0 tr.leading .lead-mark").first().innerText().catch(() => "");
  check(leaders === 1 && mark.length > 0, `${lang}: the leading answer is marked in words (${mark})`);
  // On a phone the mark stays one pill on one line (it wrapped in French).
  const viewport = page.viewportSize();
  await page.setViewportSize({ width: 360, height: 800 });
  const markLines = await page.locator("#result-q0 tr.leading .lead-mark").first().evaluate((el) => {
    const fontSize = parseFloat(getComputedStyle(el).fontSize);
    return el.getBoundingClientRect().height / fontSize;
  });
  check(markLines < 2, `${lang}: the mark is on one line at 360 px (${markLines.toFixed(2)} font sizes high)`);
  await page.setViewportSize(viewport);
  check(await page.isVisible(".results-live"), `${lang}: the page says it updates itself`);
  await audit(page, `${lang}-results`);
  await fr(page, `${lang}-results`);
  if (lang === "en") {
    const voter = await browser.newContext({ locale: lang });
    const other = await voter.newPage();
    await other.goto(share);
    await other.check("#q0-1");
    await Promise.all([other.waitForNavigation(), other.click("form.vote button[type=submit]")]);
    await voter.close();
    const updated = await page.waitForFunction(() => {
      const cells = document.querySelectorAll("#result-q0 tbody td.num:nth-child(2)");
      return cells.length === 3 && cells[1].textContent.trim() === "2";
    }, null, { timeout: 25000 }).then(() => true, () => false);
    check(updated, `${lang}: a new vote shows on the open results page without a reload`);
    const tie = await page.locator("#result-q0 tr.leading").count();
    check(tie === 2, `${lang}: a tie marks both leading answers (${tie})`);
  }

  // Admin: results first, then links; the rest folded.
  await page.goto(admin);
  await page.waitForSelector("#links-heading");
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: 800 });
    const pos = await page.evaluate(() => ({
      results: document.querySelector("section.results").getBoundingClientRect().top + scrollY,
      links: document.getElementById("links-heading").getBoundingClientRect().top + scrollY,
      folded: Array.from(document.querySelectorAll("details.fold")).filter((d) => !d.open).length,
    }));
    check(pos.results < pos.links && pos.results < 800 && pos.folded >= 4,
      `${lang}: at ${width} px the admin page starts with the results, above the links, the rest folded (${JSON.stringify(pos)})`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await audit(page, `${lang}-admin`);
  {
    // The invite sheet on paper: only the cards, three a row.
    await page.click("#invites-section > summary");
    await page.fill("#a-invites-count", "7");
    await Promise.all([page.waitForNavigation(), page.click("button[value=invites]")]);
    await page.emulateMedia({ media: "print", colorScheme: "dark" });
    const paper = await page.evaluate(() => ({
      header: getComputedStyle(document.querySelector("header.site")).display,
      intro: getComputedStyle(document.querySelector(".sheet-intro")).display,
      columns: getComputedStyle(document.querySelector("ul.cards")).gridTemplateColumns.split(" ").length,
      ink: getComputedStyle(document.querySelector("li.card dd.code")).color,
      paper: getComputedStyle(document.body).backgroundColor,
    }));
    check(paper.header === "none" && paper.intro === "none" && paper.columns === 3 && paper.ink === "rgb(0, 0, 0)" &&
      paper.paper === "rgb(255, 255, 255)", `${lang}: the invite sheet prints only its cards, three a row, black on white (${JSON.stringify(paper)})`);
    await page.emulateMedia({ media: "screen", colorScheme: "light" });
    await audit(page, `${lang}-invites-sheet`);
    await fr(page, `${lang}-invites-sheet`);
    await page.emulateMedia({ media: "print", colorScheme: "dark" });
    await page.setViewportSize({ width: 794, height: 1123 });
    await page.screenshot({ path: join(shots, `design-${lang}-invites-print.png`), fullPage: true });
    await page.pdf({ path: join(shots, `design-${lang}-invites.pdf`), format: "A4" }).catch(() => {});
    await page.emulateMedia({ media: "screen", colorScheme: "light" });
    await page.setViewportSize({ width: 1280, height: 800 });
    // A reload of the sheet (issue 37) sends no form: it loads the
    // dashboard by GET, which says calmly that the codes are not shown again.
    await page.reload();
    await page.waitForSelector("#status-heading");
    check(await page.isVisible(".notice.ok") && (await page.locator("ul.cards").count()) === 0,
      `${lang}: a reload of the invite sheet issues nothing and says so on the dashboard`);
    await audit(page, `${lang}-invites-reloaded`);
    await fr(page, `${lang}-invites-reloaded`);
    await page.goto(admin);
    await page.waitForSelector("#links-heading");
  }
  await fr(page, `${lang}-admin`);
  // Open every fold for a look at all of it.
  await page.evaluate(() => document.querySelectorAll("details.fold").forEach((d) => { d.open = true; }));
  await audit(page, `${lang}-admin-open`);
  await fr(page, `${lang}-admin-open`);

  await page.goto(`${base}/privacy?lang=${lang}`);
  await audit(page, `${lang}-privacy`);
  check(errors.length === 0, `${lang}: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();
}

const BALLOT = {
  en: { title: "Team day", q: ["Where?", "Snacks?", "Games?", "Fun?"], o: [["Park", "Lake"], ["Nuts", "Fruit", "Cake"], ["Chess", "Darts", "Go"]], ends: ["None", "Lots"] },
  fr: { title: "Journée d’équipe", q: ["Où\u202F?", "En-cas\u202F?", "Jeux\u202F?", "Plaisir\u202F?"], o: [["Parc", "Lac"], ["Noix", "Fruits", "Gâteau"], ["Échecs", "Fléchettes", "Go"]], ends: ["Aucun", "Beaucoup"] },
  de: { title: "Teamtag", q: ["Wohin?", "Snacks?", "Spiele?", "Spaß?"], o: [["Park", "See"], ["Nüsse", "Obst", "Kuchen"], ["Schach", "Darts", "Go"]], ends: ["Keiner", "Viel"] },
  it: { title: "Giornata di squadra", q: ["Dove?", "Spuntini?", "Giochi?", "Divertimento?"], o: [["Parco", "Lago"], ["Noci", "Frutta", "Torta"], ["Scacchi", "Freccette", "Go"]], ends: ["Nessuno", "Molto"] },
};

/** The drawn state of the answer row holding `#id` (a choice, rank row or scale segment). */
function rowState(page, id) {
  return page.evaluate((id) => {
    const input = document.getElementById(id);
    const row = input.closest(".choice, .rank-row") || document.querySelector(`label[for="${id}"]`);
    const s = getComputedStyle(row);
    const set = input.closest("fieldset").getBoundingClientRect();
    const r = row.getBoundingClientRect();
    return { shadow: s.boxShadow, outline: s.outlineStyle, outlineWidth: s.outlineWidth, weight: getComputedStyle(row.querySelector(".choice-text, label") || row).fontWeight,
      underline: s.textDecorationLine, width: Math.round(r.width), setWidth: Math.round(set.width), left: r.left, right: r.right, top: r.top, height: r.height };
  }, id);
}

/** Voting (issue 16): full-width answer rows whose label is the whole row,
 *  a chosen row set apart by more than colour (inset ring, bold text, the
 *  checked control), keyboard focus round the row; every type and "No
 *  answer"; then the thanks page with its receipt, and the own-ballot
 *  pages (prompt, ballot, changed, withdrawn): all audited in light and
 *  dark at 360 and 1280 px. */
async function ballotScenario(lang) {
  const b = BALLOT[lang];
  const fr = lang === "fr" ? frenchColons : async () => {};
  const created = await fetch(`${base}/api/polls`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      title: b.title, lang, expiryDays: 30, resultsVisibility: "afterVote",
      questions: [
        { type: "single", label: b.q[0], options: b.o[0] },
        { type: "multiple", label: b.q[1], options: b.o[1], required: true, maxChoices: 2 },
        { type: "ranked", label: b.q[2], options: b.o[2] },
        { type: "scale", label: b.q[3], scaleMin: 1, scaleMax: 5, minLabel: b.ends[0], maxLabel: b.ends[1] },
      ],
    }),
  }).then((r) => r.json());
  const share = `${base}/p/${created.id}`;
  const { context, page, errors } = await openPage(lang);
  // Before any vote the results are hidden (issue 25): why, when, and the
  // way to the poll, above the key form.
  await page.goto(`${share}/results`);
  check(await page.isVisible(`main a.button[href="/p/${created.id}"]`) && await page.isVisible("#token"),
    `${lang}: hidden results lead to the poll, with the key form below`);
  check((await page.locator("main button.primary").count()) === 0 && await page.isVisible("form.token button.secondary"),
    `${lang}: on hidden results the way to the poll is the one main button, the key form's is secondary`);
  await audit(page, `${lang}-withheld`);
  await fr(page, `${lang}-withheld`);
  await page.goto(share);
  await audit(page, `${lang}-vote`);
  await fr(page, `${lang}-vote`);
  // A refused vote (issue 25): three boxes on a two-at-most question, sent
  // as a page without script would; the summary names the question.
  await page.evaluate(() => ["q1-0", "q1-1", "q1-2"].forEach((id) => { document.getElementById(id).checked = true; }));
  await Promise.all([page.waitForNavigation(), page.click("form.vote button[type=submit]")]);
  const refused = await page.textContent(".error-summary").catch(() => "");
  check(refused.includes(b.q[1]) && await page.isVisible("#q1-error"), `${lang}: the refused vote names and marks its question (${refused.trim()})`);
  const borders = await page.evaluate(() => ["q0-set", "q1-set"].map((id) => getComputedStyle(document.getElementById(id)).borderTopColor));
  const errorColour = await page.evaluate(() => getComputedStyle(document.getElementById("q1-error")).color);
  check(borders[1] === errorColour && borders[0] !== errorColour,
    `${lang}: the refused question is outlined in the error colour, the other not (${borders}, ${errorColour})`);
  await audit(page, `${lang}-vote-refused`);
  await fr(page, `${lang}-vote-refused`);
  await page.goto(share);
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: 800 });
    const rows = await Promise.all(["q0-0", "q0-none", "q1-2", "q3-none"].map((id) => rowState(page, id)));
    check(rows.every((r) => r.width >= r.setWidth - 48), `${lang}: at ${width} px each answer row fills its question (${rows.map((r) => `${r.width}/${r.setWidth}`)})`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  // The row's far end, well away from the control, chooses the answer.
  const far = await rowState(page, "q0-0");
  await page.mouse.click(far.right - 12, far.top + far.height / 2);
  check(await page.isChecked("#q0-0"), `${lang}: a click at the row's far end chooses the answer`);
  const [chosen, other] = [await rowState(page, "q0-0"), await rowState(page, "q0-1")];
  check(chosen.shadow !== "none" && other.shadow === "none" && Number(chosen.weight) > Number(other.weight),
    `${lang}: the chosen row has a thicker border and bold text, the other not (${chosen.shadow} ${chosen.weight} / ${other.shadow} ${other.weight})`);
  // Keyboard: the arrow moves the choice, the focus ring goes round the row.
  await page.keyboard.press("ArrowDown");
  const focused = await rowState(page, "q0-1");
  check(await page.isChecked("#q0-1") && focused.outline === "solid" && parseFloat(focused.outlineWidth) >= 2,
    `${lang}: the focused row shows its focus ring (${focused.outline} ${focused.outlineWidth})`);
  await page.keyboard.press("ArrowDown");
  check(await page.isChecked("#q0-none") && (await rowState(page, "q0-none")).shadow !== "none",
    `${lang}: "No answer" is a row, chosen like the others`);
  await page.check("#q0-1");
  await page.check("#q1-0");
  await page.check("#q1-2");
  await page.selectOption("#q2r1", "1");
  await page.selectOption("#q2r0", "2");
  await page.check("#q3-4");
  const [multi, ranked, unranked, scale] = [await rowState(page, "q1-2"), await rowState(page, "q2r1"),
    await rowState(page, "q2r2"), await rowState(page, "q3-4")];
  check(multi.shadow !== "none" && ranked.shadow !== "none" && unranked.shadow === "none" && scale.underline.includes("underline"),
    `${lang}: chosen boxes, ranked rows and the chosen scale value are set apart (${[multi.shadow, ranked.shadow, unranked.shadow, scale.underline].join(" | ")})`);
  await page.mouse.move(0, 0);
  await audit(page, `${lang}-vote-chosen`);
  await Promise.all([page.waitForNavigation(), page.click("form.vote button[type=submit]")]);
  await page.waitForSelector("#receipt");
  const receipt = (await page.textContent("#receipt")).trim();
  await audit(page, `${lang}-receipt-thanks`);
  await fr(page, `${lang}-receipt-thanks`);
  check(errors.length === 0, `${lang}: no script or console errors on the vote ${JSON.stringify(errors)}`);
  await context.close();

  // The own ballot, in a fresh browser (nothing stored): the prompt, the
  // ballot as counted (the same rows), changed, withdrawn.
  const own = await openPage(lang);
  await own.page.goto(`${share}/ballot`);
  await audit(own.page, `${lang}-own-ballot-prompt`);
  await fr(own.page, `${lang}-own-ballot-prompt`);
  await own.page.fill("#receipt", receipt);
  await Promise.all([own.page.waitForNavigation(), own.page.click("button[value=show]")]);
  await own.page.waitForSelector("form.own-ballot");
  const shown = [await rowState(own.page, "q0-1"), await rowState(own.page, "q0-0"), await rowState(own.page, "q2r1")];
  check(shown[0].shadow !== "none" && shown[1].shadow === "none" && shown[2].shadow !== "none" && shown[0].width >= shown[0].setWidth - 48,
    `${lang}: the own ballot shows its answers in the same full-width rows, the chosen set apart`);
  await audit(own.page, `${lang}-own-ballot`);
  await fr(own.page, `${lang}-own-ballot`);
  await own.page.check("#q0-0");
  await Promise.all([own.page.waitForNavigation(), own.page.click("button[value=change]")]);
  check(await own.page.isVisible(".notice.ok") && await own.page.isChecked("#q0-0"), `${lang}: the own ballot is changed`);
  await audit(own.page, `${lang}-own-ballot-changed`);
  await fr(own.page, `${lang}-own-ballot-changed`);
  // The withdraw button asks first.
  await Promise.all([own.page.waitForNavigation(), own.page.click("button[value=confirm-withdraw]")]);
  await audit(own.page, `${lang}-own-ballot-confirm-withdraw`);
  await Promise.all([own.page.waitForNavigation(), own.page.click("button[value=withdraw]")]);
  await own.page.waitForSelector("#withdrawn");
  await audit(own.page, `${lang}-own-ballot-withdrawn`);
  await fr(own.page, `${lang}-own-ballot-withdrawn`);
  check(own.errors.length === 0, `${lang}: no script or console errors on the own ballot ${JSON.stringify(own.errors)}`);
  await own.context.close();
}

await run(browser, async () => {
  for (const lang of ["en", "fr", "de", "it"]) await ballotScenario(lang);
  for (const lang of ["en", "fr", "de", "it"]) await scenario(lang);
});
