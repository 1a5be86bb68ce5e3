// The web flows of issue 25, in headless Chromium (driven by
// tests/browser.rs): nothing a person can lose, nothing that leaves them
// stuck. Each part fails on the pages as they were before its fix:
// 1. "Your poll is ready" keeps the admin link: no language switcher, the
//    poll opens in a new tab, a warning before leaving while the link is
//    neither copied nor kept, and (opt-in) the link kept in this browser,
//    listed on the home page with a Forget button; nothing sent, no cookie.
// 2. After a vote the share page puts one's response first and folds the
//    form behind "Answer again"; every receipt is kept, one per ballot.
// 3. The invite sheet's way back keeps the key; a reload of the sheet is
//    said calmly, with the same way back; the sheet promises no CSV.
// 4. An invite-only poll's created page speaks of codes and offers "Next:
//    issue invite codes", which opens the dashboard with the key.
// 5. A refused vote names the question (no "Question 2" the page never
//    shows), marks it (its own error text, aria-invalid), and a summary
//    linking to it takes the focus; a multiple-choice box beyond the
//    maximum is stopped before sending.
// 6. The ranking changes only what the voter touches, and says every change.
// 10. A 0–10 scale at 360 px: segments no smaller than the 2.75 rem targets.
// 13. Head-to-head at 360 px (cards) is explained as cards, wider as a table.
// 11. Creation messages say what is wrong: no "from 3 to 3", a scale's end
//     told against its start (and outlined, in line with it), an empty form
//     not told of the most questions it may have.
// 14. The smaller things: "account" said once on the home page (and in the
//     footer); no "Most votes" on a tie of all; "First choices" on one line
//     at 1280 px; long question titles inside their box at 360 px; a Copy
//     button for the receipt; a way to the poll after withdrawing; "1,000"
//     in the invite count's error as in its hint.
// 7. "Results not visible yet" leads to the poll (to vote, or to wait).
// 8. A poll closed before its closing day does not say it "closes on" it.
// 12. The admin page shows the share link's QR code too.
// 9. The withdraw warning speaks of what will happen, and of invite codes
//    only on a poll that takes them.
// Issue 37: the creator sees the results live on the admin page whatever
// the poll's visibility (private here), without a reload; the admin page
// fixes the title and questions (texts only once a poll has responses) and
// the share page says so; after an action neither a reload nor Back sends
// a form again or repeats it (with and without script).
// Issue 37: switching language mid-vote keeps the choices, with script and
// without (languageKeepsChoices).
// Issue 37: the creation form sent again by Back makes no second poll and
// says so, in English and French (sentAgainByBack).
// Issue 37: a voter back at an afterVote poll finds its results
// (returningVoterResults).
// axe on every new state, screenshots at 360 and 1280 px.
// Usage: node flows.mjs <base-url> <screenshot-dir>
import { mkdirSync } from "node:fs";
import { launch, check, axe, screenshots, openPage as open, run } from "./lib.mjs";

const base = process.argv[2];
const shots = process.argv[3] || "screenshots";
mkdirSync(shots, { recursive: true });
const browser = await launch();
const openPage = (lang, options) => open(browser, lang, options);

async function audit(page, name) {
  await axe(page, name);
  await screenshots(page, shots, name);
}

/** A poll made through the API: { id, adminToken, … }. Each from a client
 *  of its own (polld trusts X-Forwarded-For from loopback in the tests), so
 *  the creation limit, which the browser's own forms share, is not reached. */
let clients = 0;
async function apiPoll(body) {
  clients += 1;
  const r = await fetch(`${base}/api/polls`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Forwarded-For": `10.25.${clients}.1` },
    body: JSON.stringify({ lang: "en", expiryDays: 30, ...body }),
  });
  return r.json();
}

/** Fills and sends the creation form; leaves the page on "Your poll is ready". */
async function create(page, lang, title, { invite = false } = {}) {
  await page.goto(`${base}/?lang=${lang}`);
  await page.fill("#f-title", title);
  await page.fill("#f-q0", "Who?");
  await page.fill("#f-q0o0", "Ada");
  await page.fill("#f-q0o1", "Bea");
  if (invite) {
    if (!(await page.isVisible("#f-duplicate-invite"))) await page.click("#f-settings > summary");
    await page.check("#f-duplicate-invite");
  }
  await page.click("button.primary[value=create]");
  await page.waitForSelector("#link-admin");
}

/** Clicks `selector` and says whether the page asked before leaving
 *  (the dialog is dismissed: the page stays). */
async function asksBeforeLeaving(page, selector) {
  let asked = false;
  const onDialog = async (d) => { asked = d.type() === "beforeunload"; await d.dismiss(); };
  page.on("dialog", onDialog);
  await page.click(selector, { noWaitAfter: true });
  await page.waitForTimeout(700);
  page.off("dialog", onDialog);
  return asked;
}

async function item1() {
  const { context, page, errors } = await openPage("en");
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  await page.goto(`${base}/?lang=en`);
  check(!(await page.isVisible("#my-polls")), "1: the home page lists no kept poll before one is kept");
  await create(page, "en", "Board election");
  const admin = await page.inputValue("#link-admin");
  const id = new URL(admin).pathname.split("/")[2];
  check((await page.locator("nav.langs").count()) === 0, "1: the created page has no language switcher");
  const opener = page.locator(`a[href="/p/${id}"]`);
  check((await opener.getAttribute("target")) === "_blank", "1: \"Open the poll\" opens in a new tab");
  check(await page.isVisible("#keep-admin") && !(await page.isChecked("#keep-admin")),
    "1: keeping the admin link in this browser is offered, off by default");
  await audit(page, "en-created-keep");
  check(await asksBeforeLeaving(page, "a.brand") && await page.isVisible("#link-admin"),
    "1: leaving before the admin link is copied or kept asks first");
  // Kept: nothing asks, and the home page lists it.
  await page.check("#keep-admin");
  const kept = await page.evaluate((k) => localStorage.getItem(k), `anonpoll:admin:${id}`);
  check(kept && kept.split(" ")[1] === admin && kept.endsWith(" Board election"), `1: the admin link is kept in localStorage (${kept})`);
  check(!(await asksBeforeLeaving(page, "a.brand")), "1: once kept, leaving does not ask");
  await page.waitForSelector("#f-title");
  check(await page.isVisible("#my-polls"), "1: the home page lists the kept poll");
  const href = await page.getAttribute("#my-polls-list a", "href");
  check(href === admin, `1: the list links to the admin link (${href})`);
  await audit(page, "en-my-polls");
  await page.setViewportSize({ width: 360, height: 800 });
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  check(wide <= 360, `1: the list fits 360 px (${wide})`);
  await page.setViewportSize({ width: 1280, height: 800 });
  await Promise.all([page.waitForSelector("#status-heading"), page.click("#my-polls-list a")]);
  check(!page.url().includes("#"), "1: the kept link opens the dashboard, and the key leaves the address bar");
  await page.goto(`${base}/?lang=fr`);
  check(await page.isVisible("#my-polls") && (await page.textContent("#my-polls h2")) === "Vos sondages sur cet appareil",
    "1: the list in French");
  await audit(page, "fr-my-polls");
  await page.click("#my-polls-list button");
  check(!(await page.isVisible("#my-polls")), "1: Forget empties the list");
  const gone = await page.evaluate((k) => localStorage.getItem(k), `anonpoll:admin:${id}`);
  check(gone === null, "1: Forget empties the storage");
  // Copied: nothing asks either.
  await create(page, "en", "Second poll");
  await page.click("button[data-copy=link-admin]");
  check(!(await asksBeforeLeaving(page, "a.brand")), "1: once the admin link is copied, leaving does not ask");
  check((await context.cookies()).length === 0, "1: no cookie");
  check(errors.length === 0, `1: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();
}

async function item2() {
  const created = await apiPoll({
    title: "Club outing", resultsVisibility: "public",
    questions: [{ type: "single", label: "Where?", options: ["Park", "Lake"], required: true }],
  });
  const share = `${base}/p/${created.id}`;
  const { context, page, errors } = await openPage("en");
  await page.goto(`${base}/?lang=en`);
  const legend = await page.locator("fieldset.choices:has(#f-duplicate-network) legend").innerText();
  check(legend !== "One response per person", `2: the duplicate check is not called "One response per person" (${legend})`);
  await page.goto(share);
  const plainText = await page.textContent("#own-ballot-link");
  check(!plainText.includes("See or change my response"), `2: before a vote, no "See or change my response" (${plainText.trim()})`);
  await page.check("#q0-0");
  await page.click("form.vote button[type=submit]");
  await page.waitForSelector("#receipt");
  const first = (await page.textContent("#receipt")).trim();
  check(await page.isVisible("#receipt-kept"), "2: with script, the receipt page says this browser keeps the receipt");
  await page.goto(share);
  check(await page.isVisible("#receipt-remembered a.button") && !(await page.isVisible("form.vote")),
    "2: after a vote, one's response is the main action and the form is folded");
  check(await page.isVisible("#answer-again") && !(await page.isVisible("#own-ballot-link")),
    "2: \"Answer again\" unfolds it; the receipt-typing link is gone");
  await audit(page, "en-share-after-vote");
  await page.click("#answer-again");
  check(await page.isVisible("form.vote"), "2: \"Answer again\" shows the form");
  const focused = await page.evaluate(() => document.activeElement && document.activeElement.closest("form.vote") !== null);
  check(focused, "2: focus goes into the form");
  await page.check("#q0-1");
  await page.click("form.vote button[type=submit]");
  await page.waitForSelector("#receipt");
  const second = (await page.textContent("#receipt")).trim();
  const kept = await page.evaluate((k) => localStorage.getItem(k), `anonpoll:receipt:${created.id}`);
  check(kept && kept.includes(first) && kept.includes(second), `2: both receipts are kept (${kept})`);
  await page.goto(share);
  const links = await page.locator("#receipt-remembered [data-receipt-links] a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
  check(links.length === 2 && links[0].endsWith(`#receipt=${first}`) && links[1].endsWith(`#receipt=${second}`),
    `2: one link per ballot (${links})`);
  const names = await page.locator("#receipt-remembered [data-receipt-links] a").allInnerTexts();
  const start = (r) => r.replace(/[^0-9A-Za-z]/g, "").slice(0, 4);
  check(names.length === 2 && names[0].includes(`(receipt ${start(first)}…)`) && names[1].includes(`(receipt ${start(second)}…)`),
    `37.10: each link names its receipt's start (${names.join(" | ")})`);
  await audit(page, "en-share-two-receipts");
  await Promise.all([page.waitForSelector("form.own-ballot"), page.click("#receipt-remembered [data-receipt-links] a >> nth=0")]);
  check(await page.isChecked("#q0-0"), "2: the first link opens the first ballot");
  await Promise.all([page.waitForNavigation(), page.click("button[value=confirm-withdraw]")]);
  await Promise.all([page.waitForNavigation(), page.click("button[value=withdraw]")]);
  await page.waitForSelector("#withdrawn");
  const left = await page.evaluate((k) => localStorage.getItem(k), `anonpoll:receipt:${created.id}`);
  check(left && !left.includes(first) && left.includes(second), `2: withdrawing one ballot forgets only its receipt (${left})`);
  await page.goto(share);
  check(await page.isVisible("#receipt-remembered a[data-receipt-open]") && !(await page.isVisible("form.vote")),
    "2: the other ballot is still offered");
  check(errors.length === 0, `2: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();
}

async function item3and4() {
  const { context, page, errors } = await openPage("en");
  page.on("dialog", (d) => d.accept());
  await create(page, "en", "Works council", { invite: true });
  const hint = await page.textContent("#link-share-hint");
  check(/invite code/i.test(hint), `4: the created page of an invite-only poll speaks of codes (${hint})`);
  await audit(page, "en-created-invite");
  // The admin link neither copied nor kept: the page says so in words, the
  // link focused, and no browser dialog; pressed again, it goes on.
  await page.setViewportSize({ width: 360, height: 800 });
  let dialogs = 0;
  const countDialogs = () => { dialogs += 1; };
  page.on("dialog", countDialogs);
  await page.click("button:has-text('Next: issue invite codes')");
  await page.waitForTimeout(500);
  check(await page.isVisible("#save-first") && dialogs === 0
    && await page.evaluate(() => document.activeElement && document.activeElement.id === "link-admin"),
    `37.1: "Next" first says why, with the admin link focused, and no "Leave site?" (${dialogs} dialogs)`);
  await audit(page, "en-created-save-first");
  await Promise.all([page.waitForNavigation(), page.click("button:has-text('Next: issue invite codes')")]);
  page.off("dialog", countDialogs);
  check(dialogs === 0, `37.1: pressed again it goes on without a dialog (${dialogs})`);
  check(await page.isVisible("#a-invites-count"), "4: \"Next: issue invite codes\" opens the dashboard at the codes");
  const atCodes = await page.evaluate(() => {
    const field = document.getElementById("a-invites-count");
    const r = field.getBoundingClientRect();
    return document.activeElement === field && r.top >= 0 && r.bottom <= window.innerHeight;
  });
  check(atCodes, "37.1: the number of codes has the focus and is on screen at 360 px");
  await page.setViewportSize({ width: 1280, height: 800 });
  check(await page.isVisible("#links-heading ~ .share-block svg.qr"), "12: the admin page shows the share link's QR code");
  await audit(page, "en-admin-qr");
  await page.fill("#a-invites-count", "2");
  await Promise.all([page.waitForNavigation(), page.click("button[value=invites]")]);
  const intro = await page.textContent(".sheet-intro");
  check(!intro.includes("CSV"), "3: the sheet promises no CSV it does not offer");
  await Promise.all([page.waitForNavigation(), page.click(".sheet-intro .row-actions >> text=Back to managing the poll")]);
  check(await page.isVisible("#status-heading"), "3: the sheet's way back keeps the key");
  await page.fill("#a-invites-count", "2");
  await Promise.all([page.waitForNavigation(), page.click("button[value=invites]")]);
  // A reload of the sheet (issue 37) loads the dashboard by GET instead of
  // sending the form again: it says calmly why the codes are not shown.
  await page.reload();
  await page.waitForSelector("#status-heading");
  const said = await page.textContent(".notice.ok");
  check(/cannot be shown again/.test(said) && (await page.locator("ul.cards").count()) === 0,
    `3: a reload of the sheet is said calmly, on the dashboard (${said})`);
  await audit(page, "en-invites-reloaded");
  check(errors.length === 0, `3/4: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();
}

async function item5() {
  const created = await apiPoll({
    title: "Snack day", resultsVisibility: "public",
    questions: [
      { type: "single", label: "Where?", options: ["Park", "Lake"] },
      { type: "multiple", label: "Which snacks?", options: ["Nuts", "Fruit", "Cake"], maxChoices: 2 },
    ],
  });
  const share = `${base}/p/${created.id}`;
  const { context, page, errors } = await openPage("en");
  await page.goto(share);
  await page.check("#q1-0");
  await page.check("#q1-1");
  await page.click("#q1-2");
  check(!(await page.isChecked("#q1-2")) && await page.isVisible("#q1-set [data-max-live]"),
    "5: a third box on a two-at-most question is stopped at once, and the question says why");
  const note = await page.locator("#q1-set [data-max-live]");
  const hint = (await page.textContent("#q1-hint")).trim();
  const noteText = (await note.textContent()).trim();
  check(!(await note.evaluate((el) => el.classList.contains("field-error"))) && noteText.includes("2") && hint === "Choose up to 2 answers.",
    `5: the note is not an error and agrees with the hint (hint "${hint}", note "${noteText}")`);
  await page.click("#q1-1");
  check(!(await note.isVisible()), "5: once a box is free again the note is gone");
  await page.check("#q1-1");
  // Sent anyway (as without script): the server refuses it.
  await page.evaluate(() => { document.getElementById("q1-2").checked = true; });
  await Promise.all([page.waitForNavigation(), page.click("form.vote button[type=submit]")]);
  const summary = await page.textContent(".error-summary");
  check(summary.includes("Which snacks?") && !/Question \d/.test(summary), `5: the summary names the question by its text (${summary.trim()})`);
  check((await page.getAttribute(".error-summary a", "href")) === "#q1-set", "5: the summary links to the question");
  const focused = await page.evaluate(() => document.activeElement && document.activeElement.classList.contains("error-summary"));
  check(focused, "5: focus is on the summary");
  check(await page.isVisible("#q1-error") && (await page.getAttribute("#q1-0", "aria-invalid")) === "true"
    && (await page.getAttribute("#q0-0", "aria-invalid")) === null, "5: the question has its own error text and is marked invalid, the other not");
  check(await page.isChecked("#q1-0") && await page.isChecked("#q1-2"), "5: what was entered is kept");
  await audit(page, "en-vote-refused");
  await page.goto(`${share}?lang=de`);
  await page.evaluate(() => ["q1-0", "q1-1", "q1-2"].forEach((id) => { document.getElementById(id).checked = true; }));
  await Promise.all([page.waitForNavigation(), page.click("form.vote button[type=submit]")]);
  check(!/Frage \d/.test(await page.textContent(".error-summary")), "5: in German too, no question number");
  await audit(page, "de-vote-refused");
  check(errors.length === 0, `5: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();
}

async function item7to9() {
  const { context, page, errors } = await openPage("en");
  const q = [{ type: "single", label: "Where?", options: ["Park", "Lake"] }];
  const afterVote = await apiPoll({ title: "Seven", resultsVisibility: "afterVote", questions: q });
  await page.goto(`${base}/p/${afterVote.id}/results`);
  const way = page.locator("main a.button");
  check((await way.getAttribute("href")) === `/p/${afterVote.id}` && (await way.innerText()).includes("Answer the poll"),
    "7: hidden results until a vote lead to the poll, to vote");
  await audit(page, "en-withheld-vote");
  const afterClose = await apiPoll({ title: "Seven b", resultsVisibility: "afterClose", questions: q });
  await page.goto(`${base}/p/${afterClose.id}/results?lang=it`);
  check((await page.locator("main a.button").innerText()) === "Vai al sondaggio", "7: results after closing lead to the poll (Italian)");
  await audit(page, "it-withheld-close");

  const closes = new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10);
  const early = await apiPoll({ title: "Eight", closesOn: closes, questions: q });
  const patched = await fetch(`${base}/api/polls/${early.id}`, {
    method: "PATCH",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${early.adminToken}` },
    body: JSON.stringify({ closed: true }),
  });
  check(patched.ok, `8: closed through the API (${patched.status})`);
  await page.goto(`${base}/p/${early.id}`);
  const meta = await page.textContent("p.meta");
  check(meta.includes("Closed") && !meta.includes("closes on"), `8: a poll closed early does not say it closes later (${meta.trim()})`);
  await audit(page, "en-closed-early");
  await page.goto(`${base}/p/${early.id}?lang=fr`);
  check(!(await page.textContent("p.meta")).includes("Fin du vote"), "8: in French either");
  await audit(page, "fr-closed-early");

  const plain = await apiPoll({ title: "Nine", questions: q });
  await page.goto(`${base}/p/${plain.id}`);
  await page.check("#q0-0");
  await page.click("form.vote button[type=submit]");
  await page.waitForSelector("#receipt-link");
  await Promise.all([page.waitForSelector("form.own-ballot"), page.click("#receipt-link")]);
  const hint = await page.textContent("#withdraw-hint");
  check(/will/.test(hint) && !/invite/i.test(hint), `9: without codes the warning says what will happen, and nothing of codes (${hint})`);
  await Promise.all([page.waitForNavigation(), page.click("button[value=confirm-withdraw]")]);
  const asked = await page.textContent("main .notice");
  check(/will/.test(asked) && !/invite/i.test(asked), `9: the page that asks says the same (${asked})`);
  await audit(page, "en-confirm-withdraw");

  const coded = await apiPoll({ title: "Nine b", duplicateCheck: "invite", questions: q });
  const issued = await fetch(`${base}/api/polls/${coded.id}/invites`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${coded.adminToken}` },
    body: JSON.stringify({ count: 1 }),
  }).then((r) => r.json());
  await page.goto(issued.invites[0].url);
  await page.waitForSelector("#invite");
  check(await page.isVisible("#invite-hint [data-script-only]"), "9: with script, the hint says an invite link fills the code in");
  await page.check("#q0-1");
  await page.click("form.vote button[type=submit]");
  await page.waitForSelector("#receipt-link");
  await Promise.all([page.waitForSelector("form.own-ballot"), page.click("#receipt-link")]);
  const codeHint = await page.textContent("#withdraw-hint");
  check(/invite code/i.test(codeHint), `9: with codes the warning says the code stays used (${codeHint})`);
  check(errors.length === 0, `7-9: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();
}

async function item6() {
  const created = await apiPoll({
    title: "Outing", questions: [{ type: "ranked", label: "Where, in order?", options: ["Park", "Beach", "Lake"] }],
  });
  const { context, page, errors } = await openPage("en");
  await page.goto(`${base}/p/${created.id}`);
  const ranks = () => page.evaluate(() => ["q0r0", "q0r1", "q0r2"].map((id) => document.getElementById(id).value).join());
  await page.click("li.rank-row:has(#q0r1) button[data-move=up]");
  check((await ranks()) === ",1,", `6: moving Beach up ranks Beach alone, not Park (${await ranks()})`);
  check((await page.textContent("#q0-live")).includes("Beach"), "6: the move is announced");
  await page.selectOption("#q0r2", "3");
  check((await ranks()) === ",1,3", `6: choosing 3 in Lake's menu gives rank 3 (${await ranks()})`);
  await page.selectOption("#q0r2", "1");
  const said = await page.textContent("#q0-live");
  check((await ranks()) === ",3,1", `6: choosing a rank another holds swaps the two (${await ranks()})`);
  check(said.includes("Lake") && said.includes("Beach"), `6: both changes are announced (${said})`);
  const order = await page.locator("ol.ranking label").allInnerTexts();
  check(order.join() === "Lake,Beach,Park", `6: the rows follow the ranks (${order})`);
  await page.click("li.rank-row:has(#q0r1) button[data-move=down]");
  check((await ranks()) === ",,1", `6: moving the last ranked option down takes it out of the ranking (${await ranks()})`);
  await audit(page, "en-ranking-moved");
  check(errors.length === 0, `6: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();
}

async function item10and13() {
  const created = await apiPoll({
    title: "Ten", resultsVisibility: "public",
    questions: [
      { type: "scale", label: "How much?", scaleMin: 0, scaleMax: 10 },
      { type: "ranked", label: "Order?", options: ["Park", "Beach", "Lake"] },
    ],
  });
  const { context, page, errors } = await openPage("en");
  await page.setViewportSize({ width: 360, height: 800 });
  await page.goto(`${base}/p/${created.id}`);
  const target = await page.evaluate(() => parseFloat(getComputedStyle(document.documentElement).fontSize) * 2.75);
  const sizes = await page.locator("#q0-set .scale-value label").evaluateAll((ls) => ls.map((l) => {
    const r = l.getBoundingClientRect();
    return [Math.round(r.width), Math.round(r.height)];
  }));
  check(sizes.length === 11 && sizes.every(([w, h]) => w >= target - 0.5 && h >= target - 0.5),
    `10: at 360 px every segment of a 0–10 scale is at least 2.75 rem (${Math.round(target)} px): ${JSON.stringify(sizes)}`);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  check(wide <= 360, `10: the page fits 360 px (${wide})`);
  await page.screenshot({ path: `${shots}/en-scale-360.png`, fullPage: true });
  await page.goto(`${base}/p/${created.id}?lang=de`);
  await page.screenshot({ path: `${shots}/de-scale-360.png`, fullPage: true });
  await page.goto(`${base}/p/${created.id}`);
  await page.check("#q0-7");
  await page.selectOption("#q1r1", "1");
  await page.click("form.vote button[type=submit]");
  await page.waitForSelector("#voted");
  await page.goto(`${base}/p/${created.id}/results`);
  await page.click("details.pairwise summary");
  const narrow = await page.locator("details.pairwise p.hint:visible").allInnerTexts();
  check(narrow.length === 1 && !/row|column/i.test(narrow[0]) && /card/i.test(narrow[0]), `13: at 360 px the head-to-head is explained as cards (${narrow})`);
  await page.setViewportSize({ width: 1280, height: 800 });
  const broad = await page.locator("details.pairwise p.hint:visible").allInnerTexts();
  check(broad.length === 1 && /row/.test(broad[0]), `13: wider, as a table (${broad})`);
  await audit(page, "en-pairwise");
  check(errors.length === 0, `10/13: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();
}

async function item11() {
  const { context, page, errors } = await openPage("en");
  await page.goto(`${base}/?lang=en`);
  await page.fill("#f-title", "Empty");
  await page.click("button.primary[value=create]");
  await page.waitForSelector(".error-summary");
  const empty = await page.textContent(".error-summary");
  check(!/no more than|at most/i.test(empty), `11: an empty form is not told of the most questions (${empty.trim()})`);
  await page.fill("#f-q0", "How good?");
  await page.selectOption("#f-q0-type", "scale");
  await page.selectOption("#f-q0-from", "5");
  await page.selectOption("#f-q0-to", "3");
  await page.click("button.primary[value=create]");
  await page.waitForSelector("#f-q0-to-error");
  const said = await page.textContent("#f-q0-to-error");
  check(/5/.test(said) && !/6 to 10/.test(said), `11: a scale's end is told against its start (${said.trim()})`);
  const [from, to] = await Promise.all(["#f-q0-from", "#f-q0-to"].map((sel) => page.locator(sel).boundingBox()));
  check(from && to && Math.abs(from.y - to.y) < 1, `11: From and To stay in line (${from && from.y}, ${to && to.y})`);
  const outline = await page.locator("#f-q0-to").evaluate((el) => getComputedStyle(el).borderTopWidth);
  check(outline === "2px", `11: To is outlined as invalid (${outline})`);
  await audit(page, "en-create-scale-error");
  // "From 3 to 3": a multiple-choice bound with one possible value.
  await page.selectOption("#f-q0-type", "multiple");
  await page.fill("#f-q0o0", "A");
  await page.fill("#f-q0o1", "B");
  await page.fill("#f-q0o2", "C");
  await page.fill("#f-q0-min", "3");
  await page.fill("#f-q0-max", "1");
  await page.click("button.primary[value=create]");
  await page.waitForSelector(".error-summary");
  const bounds = await page.textContent(".error-summary");
  check(!/from (\d+) to \1\b/.test(bounds), `11: no "from 3 to 3" (${bounds.trim()})`);
  check(errors.length === 0, `11: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();
}

async function item14() {
  const { context, page, errors } = await openPage("en");
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  await page.goto(`${base}/?lang=en`);
  const accounts = await page.evaluate(() => (document.querySelector("main").innerText.match(/account/gi) || []).length);
  check(accounts <= 1, `14: "account" at most once in the home page's content (${accounts})`);
  const long = "Which of the Donaudampfschifffahrtsgesellschaftskapitänsmützenhersteller should supply us?";
  const created = await apiPoll({
    title: "Fourteen", resultsVisibility: "public",
    questions: [
      { type: "single", label: long, options: ["Ada", "Bea", "Cy"] },
      { type: "ranked", label: "Order?", options: ["Park", "Beach"] },
    ],
  });
  const share = `${base}/p/${created.id}`;
  await page.setViewportSize({ width: 360, height: 800 });
  await page.goto(share);
  const inside = await page.evaluate(() => {
    const set = document.getElementById("q0-set").getBoundingClientRect();
    const legend = document.querySelector("#q0-set legend").getBoundingClientRect();
    return legend.right <= set.right + 0.5 && set.right <= window.innerWidth;
  });
  check(inside, "14: a long question title stays inside its box at 360 px");
  await page.setViewportSize({ width: 1280, height: 800 });
  for (const j of [0, 1, 2]) {
    if (await page.isVisible("#answer-again")) await page.click("#answer-again");
    await page.check(`#q0-${j}`);
    await page.click("form.vote button[type=submit]");
    await page.waitForSelector("#receipt");
    await page.goto(share);
  }
  await page.goto(share + "/results");
  check((await page.locator("#result-q0 .lead-mark").count()) === 0, "14: a tie of all answers marks none \"Most votes\"");
  const heading = await page.locator("#result-q1 thead th.num >> nth=0").evaluate((th) => {
    const range = document.createRange();
    range.selectNodeContents(th);
    return { text: th.innerText, lines: new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top))).size };
  }).catch(() => null);
  check(heading && heading.lines <= 1, `14: "First choices" on one line at 1280 px (${JSON.stringify(heading)})`);
  await page.goto(share);
  await page.click("#answer-again");
  await page.check("#q0-1");
  await page.click("form.vote button[type=submit]");
  await page.waitForSelector("#receipt");
  check(await page.isVisible("button[data-copy=receipt]"), "14: the receipt has a Copy button");
  await page.click("button[data-copy=receipt]");
  const copied = await page.evaluate(() => navigator.clipboard.readText()).catch(() => "");
  check(copied === (await page.textContent("#receipt")).trim(), `14: Copy copies the receipt (${copied})`);
  await Promise.all([page.waitForSelector("form.own-ballot"), page.click("#receipt-link")]);
  await Promise.all([page.waitForNavigation(), page.click("button[value=confirm-withdraw]")]);
  await Promise.all([page.waitForNavigation(), page.click("button[value=withdraw]")]);
  const back = await page.getAttribute("main a.button", "href").catch((e) => String(e));
  check(back && back.split("?")[0] === `/p/${created.id}`, `14: after withdrawing, a button back to the poll (${back}, ${page.url()})`);
  await audit(page, "en-withdrawn");
  await page.goto(`${share}?lang=de`);
  check(!(await page.textContent("body")).includes("nach allen geordneten"), "14: German rank hint reads well");
  await page.goto(`${base}/p/${created.id}/admin#${created.adminToken}`);
  await page.waitForSelector("#status-heading");
  await page.click("#invites-section > summary");
  await page.fill("#a-invites-count", "5000");
  await Promise.all([page.waitForNavigation(), page.click("button[value=invites]")]);
  const said = await page.textContent("#a-invites-count-error");
  check(said.includes("1,000") && !said.includes("1000"), `14: the count's error writes 1,000 as its hint does (${said})`);
  check(errors.length === 0, `14: no script or console errors ${JSON.stringify(errors)}`);
  await context.close();
}

async function creatorSeesResultsLive() {
  const created = await apiPoll({
    title: "Private live", resultsVisibility: "private",
    questions: [{ type: "single", label: "Which?", options: ["Ada", "Bea"] }],
  });
  const { context, page, errors } = await openPage("en");
  await page.goto(`${base}/p/${created.id}/admin#${created.adminToken}`);
  await page.waitForSelector("#links-heading");
  check(await page.isVisible("[data-live-admin] .results-live"), "37: the admin page says its results update themselves");
  // A voter elsewhere, without the key.
  const voter = await browser.newContext({ locale: "en" });
  const other = await voter.newPage();
  await other.goto(`${base}/p/${created.id}`);
  await other.check("#q0-1");
  await Promise.all([other.waitForNavigation(), other.click("form.vote button[type=submit]")]);
  await voter.close();
  const updated = await page.waitForFunction(() => {
    const cells = document.querySelectorAll("#result-q0 tbody td.num:nth-child(2)");
    return cells.length === 2 && cells[1].textContent.trim() === "1";
  }, null, { timeout: 25000 }).then(() => true, () => false);
  check(updated, "37: a vote shows on the open admin page of a private poll without a reload");
  check(await page.isVisible("#links-heading"), "37: the dashboard is still there after the refresh");
  await audit(page, "en-admin-live");
  check(errors.length === 0, `37: no script errors (${errors.join("; ")})`);
  await context.close();
}

// Issue 37, defect 2: a poll deleted on its admin page, or not found at its
// admin address, leaves "Your polls on this device".
async function goneLeavesTheList() {
  const { context, page, errors } = await openPage("en");
  await create(page, "en", "Soon deleted");
  await page.check("#keep-admin");
  const admin = await page.inputValue("#link-admin");
  await page.goto(`${base}/?lang=en`);
  check((await page.locator("#my-polls-list li").count()) === 1, "37.2: the kept poll is listed");
  await page.goto(admin);
  await page.waitForSelector("#delete-heading");
  await page.click("#delete-heading");
  await Promise.all([page.waitForNavigation(), page.click("button[value=delete]")]);
  await Promise.all([page.waitForNavigation(), page.click("button[value=delete-confirmed]")]);
  await page.goto(`${base}/?lang=en`);
  check(!(await page.isVisible("#my-polls")), "37.2: a poll deleted here is no longer listed");
  // One erased elsewhere (or expired): its admin address answers 404 and
  // the entry goes.
  await page.evaluate((b) => localStorage.setItem("anonpoll:admin:AAAAAAAAAAAAAAAAAAAAAA",
    `2099-01-01 ${b}/p/AAAAAAAAAAAAAAAAAAAAAA/admin#k Gone elsewhere`), base);
  await page.goto(`${base}/?lang=en`);
  check(await page.isVisible("#my-polls"), "37.2: an entry for a poll erased elsewhere is listed at first");
  await page.goto(`${base}/p/AAAAAAAAAAAAAAAAAAAAAA/admin#k`);
  await page.goto(`${base}/?lang=en`);
  check(!(await page.isVisible("#my-polls")), "37.2: once its admin address said 'not found', it is no longer listed");
  check(errors.length === 0, `37.2: no script errors (${errors.join("; ")})`);
  await context.close();
}

// Issue 37, defect 8: switching language mid-vote keeps the choices made,
// with script and without: the languages are buttons of the vote form,
// which the server answers with the form again, in the new language, as
// entered; nothing is counted and the form's code stays unspent.
async function languageKeepsChoices() {
  for (const javaScriptEnabled of [true, false]) {
    const how = javaScriptEnabled ? "with script" : "without script";
    const created = await apiPoll({
      title: "Languages",
      questions: [
        { type: "single", label: "Where?", options: ["Park", "Lake"] },
        { type: "multiple", label: "What?", options: ["Nuts", "Fruit", "Cake"], maxChoices: 2 },
        { type: "ranked", label: "Order?", options: ["Chess", "Go"] },
      ],
    });
    const { context, page, errors } = await openPage("en", { javaScriptEnabled });
    await page.goto(`${base}/p/${created.id}`);
    await page.check("#q0-1");
    await page.check("#q1-0");
    await page.check("#q1-2");
    await page.selectOption("#q2r1", "1");
    await Promise.all([page.waitForNavigation(), page.click("nav.langs button[lang=fr]")]);
    const kept = await page.evaluate(() => [
      document.documentElement.lang, document.getElementById("q0-1").checked, document.getElementById("q1-0").checked,
      document.getElementById("q1-1").checked, document.getElementById("q1-2").checked, document.getElementById("q2r1").value]);
    check(JSON.stringify(kept) === JSON.stringify(["fr", true, true, false, true, "1"]),
      `37.8 ${how}: switching to French keeps the choices (${JSON.stringify(kept)})`);
    const total = async () => (await (await fetch(`${base}/api/polls/${created.id}/results`,
      { headers: { Authorization: `Bearer ${created.adminToken}` } })).json()).totalResponses;
    check(await total() === 0, `37.8 ${how}: the switch counted nothing`);
    if (javaScriptEnabled) await audit(page, "fr-vote-after-switch");
    else await screenshots(page, shots, "fr-vote-after-switch-noscript");
    await Promise.all([page.waitForNavigation(), page.click("form.vote button[type=submit]")]);
    check(await total() === 1, `37.8 ${how}: sent after the switch, the form votes once`);
    check(errors.length === 0, `37.8 ${how}: no script errors (${errors.join("; ")})`);
    await context.close();
  }
}

// Issue 37: the creation form sent again by Back makes no second poll. Back
// fetches the form afresh (a new code) but the browser puts back its used
// code (the script makes the field's value its own), so the server answers
// "already sent", in the reader's language, linking the poll where this
// browser keeps it, and "Create another poll" brings what was typed back
// with a code of its own.
async function sentAgainByBack() {
  for (const [lang, keep, heading, another] of [
    ["en", true, "This form was already sent", "Create another poll"],
    ["fr", false, "Ce formulaire a déjà été envoyé", "Créer un autre sondage"],
  ]) {
    const { context, page, errors } = await openPage(lang);
    const title = `Back and again ${lang}`;
    await create(page, lang, title);
    const admin = await page.inputValue("#link-admin");
    // Kept, nothing asks before leaving; else "Leave site?" is answered.
    if (keep) await page.check("#keep-admin");
    else page.once("dialog", (d) => d.accept());
    await page.goBack();
    await page.waitForSelector("#f-title");
    check((await page.inputValue("#f-title")) === title, `37.1 ${lang}: Back shows the form as it was sent`);
    await Promise.all([page.waitForNavigation(), page.click("button.primary[value=create]")]);
    const said = (await page.textContent("h1")).trim();
    check(said === heading && !(await page.isVisible("#link-admin")),
      `37.1 ${lang}: sent again after Back, no second poll, and the page says so (${said})`);
    const listed = await page.locator("#my-polls-list a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    check(keep ? listed.length === 1 && listed[0] === admin : !(await page.isVisible("#my-polls")),
      `37.1 ${lang}: the poll is linked where this browser keeps it, and only then (${listed})`);
    await audit(page, `${lang}-create-sent-again`);
    const button = page.locator("button[value=again]");
    check((await button.innerText()).trim() === another, `37.1 ${lang}: "${another}" is offered`);
    await Promise.all([page.waitForNavigation(), button.click()]);
    check((await page.inputValue("#f-title")) === title && (await page.inputValue("#f-q0o1")) === "Bea",
      `37.1 ${lang}: "${another}" brings back what was typed`);
    await page.fill("#f-title", `Another ${lang}`);
    await page.click("button.primary[value=create]");
    await page.waitForSelector("#link-admin");
    check((await page.inputValue("#link-admin")) !== admin, `37.1 ${lang}: a second poll, when asked for`);
    check(errors.length === 0, `37.1 ${lang}: no script errors (${errors.join("; ")})`);
    await context.close();
  }
}

// Issue 37: a voter back at an afterVote poll's share page finds its
// results, with the proof this browser keeps: a receipt (posted to the
// results page, in no address), or, on the day of the vote, the vote's form
// code; a browser without either is offered the receipt typed (no script).
async function returningVoterResults() {
  const question = [{ type: "single", label: "Where?", options: ["Park", "Lake"] }];
  const poll = await apiPoll({ title: "After the vote", resultsVisibility: "afterVote", questions: question });
  const share = `${base}/p/${poll.id}`;
  const { context, page, errors } = await openPage("en");
  await page.goto(share);
  check(!(await page.isVisible("#voter-results")), "37.3: before a vote, no way to the results is offered");
  await page.check("#q0-0");
  await page.click("form.vote button[type=submit]");
  await page.waitForSelector("#receipt");
  const receipt = (await page.textContent("#receipt")).trim();
  await page.goto(share);
  check(await page.isVisible("#voter-results button") && !(await page.isVisible("#voter-results-typed")),
    "37.3: back on the share page, the voter is offered the results");
  await audit(page, "en-share-voter-results");
  await Promise.all([page.waitForNavigation(), page.click("#voter-results button")]);
  check(await page.isVisible("#result-q0") && !page.url().includes(receipt.slice(0, 4)),
    `37.3: the kept receipt opens the results, and is in no address (${page.url()})`);
  await audit(page, "en-results-by-receipt");
  await Promise.all([page.waitForNavigation(), page.click("nav.langs button[lang=de]")]);
  check((await page.getAttribute("html", "lang")) === "de" && await page.isVisible("#result-q0"),
    "37.3: the results stay open in another language");
  // A poll without receipts: the vote's form code, on the day of the vote.
  const plain = await apiPoll({ title: "No receipts", resultsVisibility: "afterVote", voteChanges: false, questions: question });
  await page.goto(`${base}/p/${plain.id}`);
  await page.check("#q0-1");
  await Promise.all([page.waitForNavigation(), page.click("form.vote button[type=submit]")]);
  await page.waitForSelector("#result-q0");
  const note = await page.evaluate((k) => localStorage.getItem(k), `anonpoll:voted:${plain.id}`);
  check(note && note.split(" ").length === 3, `37.3: the vote note keeps the day and the form code (${note})`);
  await page.goto(`${base}/p/${plain.id}`);
  check(await page.isVisible("#voter-results a") && !(await page.isVisible("#voter-results-typed")),
    "37.3: without a receipt, the vote's form code leads back on its day");
  await Promise.all([page.waitForNavigation(), page.click("#voter-results a")]);
  check(await page.isVisible("#result-q0"), "37.3: and opens the results");
  check((await context.cookies()).length === 0, "37.3: no cookie");
  check(errors.length === 0, `37.3: no script errors (${errors.join("; ")})`);
  await context.close();
  // Another browser, without script: the link for a receipt typed.
  const other = await openPage("en", { javaScriptEnabled: false });
  await other.page.goto(share);
  check(await other.page.isVisible("#voter-results-typed a") && !(await other.page.isVisible("#voter-results")),
    "37.3: without script or a kept proof, the way to type the receipt");
  await Promise.all([other.page.waitForNavigation(), other.page.click("#voter-results-typed a")]);
  await other.page.fill("#voter-receipt", receipt.toLowerCase());
  await screenshots(other.page, shots, "en-results-receipt-prompt-noscript");
  await Promise.all([other.page.waitForNavigation(), other.page.click("form.voter-receipt button")]);
  check(await other.page.isVisible("#result-q0"), "37.3: the typed receipt opens the results");
  await other.context.close();
  // The prompt with its receipt field, checked by axe (which needs script).
  const third = await openPage("en");
  await third.page.goto(`${share}/results`);
  await audit(third.page, "en-results-receipt-prompt");
  await third.context.close();
}

/** The main-frame navigations of `page`: method, path and body, in order. */
function navigations(page) {
  const seen = [];
  page.on("request", (r) => {
    if (r.isNavigationRequest() && r.frame() === page.mainFrame()) {
      const url = new URL(r.url());
      seen.push({ method: r.method(), path: url.pathname + url.search, body: r.postData() || "" });
    }
  });
  return seen;
}

/** The admin actions among `navs`: POSTs with an `action` that changes something. */
function actionsSent(navs) {
  return navs.filter((n) => n.method === "POST" && /(^|&)action=(?!open(&|$))/.test(n.body)).map((n) => /action=([^&]*)/.exec(n.body)[1]);
}

async function inviteCounts(created) {
  const r = await fetch(`${base}/api/polls/${created.id}/invites`, { headers: { Authorization: `Bearer ${created.adminToken}` } });
  return r.json();
}

// Issue 37, part 2: after an action (close, settings, a language version,
// invite codes, the texts) neither a reload nor Back asks to send a form
// again, nor does the action again: the action is answered by a redirect
// to the admin page (a GET; the key in no address), whose script opens the
// dashboard with the key it kept in this tab, and every page of the admin
// address stays in the history as a GET. Without script the redirect leads
// to the key prompt saying what was done.
async function adminSurvivesBackAndReload() {
  const created = await apiPoll({
    title: "Back and reload", duplicateCheck: "invite",
    questions: [{ type: "single", label: "Which?", options: ["Ada", "Bea"] }],
  });
  const { context, page, errors } = await openPage("en");
  const dialogs = [];
  page.on("dialog", (d) => { dialogs.push(d.type()); d.dismiss(); });
  const navs = navigations(page);
  await page.goto(`${base}/p/${created.id}/admin#${created.adminToken}`);
  await page.waitForSelector("#status-heading");
  // Does an action, waits for the dashboard that says `done`, then reloads,
  // goes back and forward: the dashboard each time, nothing sent again.
  const survives = async (what, act, done, shot) => {
    const before = actionsSent(navs).length;
    await act();
    await page.waitForFunction((t) => (document.querySelector(".notice.ok") || {}).textContent?.includes(t) && document.querySelector("#status-heading"), done);
    const sent = actionsSent(navs).length - before;
    const url = page.url();
    check(!url.includes(created.adminToken) && !url.includes("done="), `37.2 ${what}: the address holds neither the key nor the action (${url})`);
    if (shot) await audit(page, shot);
    let moved = true;
    try {
      await page.reload();
      await page.waitForSelector("#status-heading");
      await page.goBack();
      await page.waitForSelector("#status-heading");
      await page.goForward();
      await page.waitForSelector("#status-heading");
    } catch (e) {
      moved = false;
      check(false, `37.2 ${what}: reload, Back and Forward (${String(e.message).split("\n")[0]})`);
    }
    const again = actionsSent(navs).length - before - sent;
    check(moved && sent === 1 && again === 0 && dialogs.length === 0,
      `37.2 ${what}: reload, Back and Forward show the dashboard, send nothing again, ask nothing (${sent} sent, ${again} again, dialogs ${dialogs})`);
    const resent = navs.slice(-6).filter((n) => n.method === "POST" && !/(^|&)token=/.test(n.body));
    check(resent.length === 0, `37.2 ${what}: every POST after it is the key opening the dashboard (${JSON.stringify(resent)})`);
  };
  await survives("close", () => page.click("button[value=close]"), "The poll is closed", "en-admin-after-close");
  check(await page.isVisible("button[value=reopen]"), "37.2: the poll stays closed, once");
  await survives("settings", async () => {
    await page.click("#settings-section > summary");
    await page.check("#a-results-public");
    await page.click("#settings-section button[value=settings]");
  }, "Settings saved");
  const fr = async () => {
    await page.click("#versions-section > summary");
    await page.click("details.version:has(input[name=vlang][value=fr]) > summary");
    await page.fill("#v-fr-t", "Retour et rechargement");
    await page.fill("#v-fr-q0", "Laquelle ?");
    await page.fill("#v-fr-q0o0", "Ada");
    await page.fill("#v-fr-q0o1", "Béa");
    await page.click("details.version:has(input[name=vlang][value=fr]) button[value=version-save]");
  };
  await survives("language version", fr, "The French version is saved");
  await survives("texts", async () => {
    await page.click("#edit-section > summary");
    await page.fill("#a-eq0o1", "Bea B.");
    await page.click("#edit-section button.primary[value=texts-save]");
  }, "Your changes are saved");
  // Invite codes: the sheet is the POST's answer (the codes exist only
  // there); a reload and Back show the dashboard instead, and issue nothing.
  // (Open already: the poll takes invite codes.)
  if (!(await page.isVisible("#a-invites-count"))) await page.click("#invites-section > summary");
  await page.fill("#a-invites-count", "3");
  await Promise.all([page.waitForNavigation(), page.click("button[value=invites]")]);
  check((await page.locator("ul.cards li.card").count()) === 3, "37.2: a sheet of 3 codes");
  await page.reload();
  await page.waitForSelector("#status-heading");
  await page.goBack();
  await page.waitForSelector("#status-heading");
  const counts = await inviteCounts(created);
  check(counts.issued === 3 && dialogs.length === 0 && actionsSent(navs).filter((a) => a === "invites").length === 1,
    `37.2 invite codes: a reload of the sheet and Back issue nothing (${JSON.stringify(counts)}, dialogs ${dialogs})`);
  const poll = await (await fetch(`${base}/api/polls/${created.id}`)).json();
  check(poll.status === "closed" && poll.resultsVisibility === "public" && poll.translations.fr && poll.questions[0].options[1] === "Bea B.",
    "37.2: each action done once, as asked");
  check(errors.length === 0, `37.2: no script errors (${errors.join("; ")})`);
  await context.close();

  // Without script: the action's answer is the key prompt by GET, saying
  // what was done; a reload of it sends nothing. A reload of the invite
  // sheet (the POST's own answer) sends the form again, which issues nothing.
  const plain = await browser.newContext({ locale: "fr", javaScriptEnabled: false });
  const p2 = await plain.newPage();
  const navs2 = navigations(p2);
  await p2.goto(`${base}/p/${created.id}/admin`);
  await p2.fill("#token", created.adminToken);
  await Promise.all([p2.waitForNavigation(), p2.click("form[data-token-form] button[type=submit]")]);
  await Promise.all([p2.waitForNavigation(), p2.click("button[value=reopen]")]);
  const said = await p2.textContent(".notice.ok");
  check(p2.url().includes("done=reopened") && !p2.url().includes(created.adminToken) && await p2.isVisible("#token"),
    `37.2 without script: the reopening answers the key prompt by GET, saying it (${said.trim()})`);
  await screenshots(p2, shots, "fr-admin-done-noscript");
  await p2.reload();
  check(actionsSent(navs2).length === 1 && (await (await fetch(`${base}/api/polls/${created.id}`)).json()).status === "open",
    `37.2 without script: its reload sends nothing (${JSON.stringify(actionsSent(navs2))})`);
  await p2.fill("#token", created.adminToken);
  await Promise.all([p2.waitForNavigation(), p2.click("form[data-token-form] button[type=submit]")]);
  await p2.fill("#a-invites-count", "2");
  await Promise.all([p2.waitForNavigation(), p2.click("button[value=invites]")]);
  await p2.reload().catch(() => {});
  const after = await inviteCounts(created);
  check(after.issued === 5, `37.2 without script: the sheet sent again issues nothing (${JSON.stringify(after)})`);
  await plain.close();
}

// Issue 37, part 1: the admin page fixes the title and questions. On a
// poll with a response only texts (no row to add or remove), and the
// share page then says on which day the poll was edited; on one without,
// answers and questions are added and removed (without script too, each
// button a round trip that keeps what was typed).
async function adminFixesTexts() {
  const created = await apiPoll({
    title: "Fix me", resultsVisibility: "public",
    questions: [{ type: "single", label: "Wich one?", options: ["Ada", "Bea"] }],
  });
  const voter = await browser.newContext({ locale: "en" });
  const v = await voter.newPage();
  await v.goto(`${base}/p/${created.id}`);
  await v.check("#q0-1");
  await Promise.all([v.waitForNavigation(), v.click("form.vote button[type=submit]")]);
  await voter.close();
  const { context, page, errors } = await openPage("fr");
  await page.goto(`${base}/p/${created.id}/admin?lang=fr#${created.adminToken}`);
  await page.waitForSelector("#status-heading");
  await page.click("#edit-section > summary");
  check(!(await page.isVisible("button[value=texts-add-question]")) && (await page.locator("button.remove-option").count()) === 0,
    "37.1: with a response the form offers texts only");
  await audit(page, "fr-admin-texts-locked");
  await page.fill("#a-eq0", "Which one?");
  await page.click("#edit-section button.primary[value=texts-save]");
  await page.waitForFunction(() => (document.querySelector(".notice.ok") || {}).textContent?.includes("Vos modifications"));
  await page.goto(`${base}/p/${created.id}?lang=fr`);
  const note = await page.textContent("time.edited");
  check(/^Modifié le \d/.test(note) && !/\d:\d/.test(note), `37.1: the share page says on which day the poll was edited (${note})`);
  check((await page.textContent("main")).includes("Which one?"), "37.1: the share page shows the fixed question");
  await audit(page, "fr-share-edited");
  const results = await (await fetch(`${base}/api/polls/${created.id}/results`)).json();
  check(results.totalResponses === 1 && results.questions[0].label === "Which one?" && results.questions[0].options[1].count === 1,
    "37.1: the response keeps its meaning under the fixed texts");
  await context.close();

  // Without a response, in English, without script: add an answer, remove it, add a question.
  const fresh = await apiPoll({ title: "Draft", questions: [{ type: "single", label: "When?", options: ["Mon", "Tue"] }] });
  const plain = await browser.newContext({ locale: "en", javaScriptEnabled: false });
  const p2 = await plain.newPage();
  await p2.goto(`${base}/p/${fresh.id}/admin`);
  await p2.fill("#token", fresh.adminToken);
  await Promise.all([p2.waitForNavigation(), p2.click("form[data-token-form] button[type=submit]")]);
  await p2.click("#edit-section > summary");
  await Promise.all([p2.waitForNavigation(), p2.click("button[value='texts-add-option:0']")]);
  const focused = await p2.evaluate(() => document.activeElement && document.activeElement.id);
  check(focused === "a-eq0o2" && await p2.isVisible("#edit-section[open]"), `37.1: "Add an answer" brings the form back, the new answer focused (${focused})`);
  await p2.fill("#a-eq0o2", "Wed");
  await Promise.all([p2.waitForNavigation(), p2.click("button[value=texts-add-question]")]);
  await p2.fill("#a-eq1", "Where?");
  await p2.fill("#a-eq1o0", "Here");
  await p2.fill("#a-eq1o1", "There");
  await screenshots(p2, shots, "en-admin-texts-open");
  await Promise.all([p2.waitForNavigation(), p2.click("#edit-section button.primary[value=texts-save]")]);
  const saved = await (await fetch(`${base}/api/polls/${fresh.id}`)).json();
  check(JSON.stringify(saved.questions.map((q) => q.options)) === JSON.stringify([["Mon", "Tue", "Wed"], ["Here", "There"]]),
    `37.1: answers and questions added without script (${JSON.stringify(saved.questions.map((q) => q.options))})`);
  check(errors.length === 0, `37.1: no script errors (${errors.join("; ")})`);
  await plain.close();
}

// Each part on its own: one that throws is a failure, and the others still
// run. ONLY=item5 runs one part (while working on it).
const items = { item1, item2, item3and4, item5, item6, item7to9, item10and13, item11, item14, creatorSeesResultsLive, goneLeavesTheList, languageKeepsChoices, sentAgainByBack, returningVoterResults, adminSurvivesBackAndReload, adminFixesTexts };
await run(browser, async () => {
  for (const [name, item] of Object.entries(items)) {
    if (process.env.ONLY && process.env.ONLY !== name) continue;
    try {
      await item();
    } catch (e) {
      check(false, `${name} threw: ${String(e && e.message || e).split("\n")[0]}`);
    }
  }
});
