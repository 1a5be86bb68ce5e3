// Drives every endpoint of a live polld through openapi-fetch, typed by
// the `paths` and `components` that openapi-typescript generated from its
// `GET /api` document (into ./api.d.ts, next to this file when
// tests/operations/openapi_tools.rs compiles it). tsc type-checks this file against those
// types first (a document that generates the wrong types fails there), then
// node runs the output: `node drive_typescript.js BASE_URL`.
//
// Bodies are built and answers read only through the generated types; each
// typed annotation below (`const poll: Poll = ...`) is a compile-time check
// that the document gives that operation and status the expected schema.
//
// Extending: every API addition (question types, result modes, invites, ...)
// adds or widens a step below and lists it in STEPS, in the same change. A
// step takes the shared State and records what later steps need on it.

import createClient from "openapi-fetch";
import type { components, paths } from "./api.js";

// No @types/node: the only Node globals used are declared here.
declare const process: { argv: string[]; exitCode?: number };

type Schemas = components["schemas"];
type Problem = Schemas["Problem"];
type ValidationProblem = Schemas["ValidationProblem"];
type Poll = Schemas["Poll"];
type CreatedPoll = Schemas["CreatedPoll"];
type Results = Schemas["Results"];
type NewPoll = Schemas["NewPoll"];
type PollPatch = Schemas["PollPatch"];
type LanguageVersion = Schemas["LanguageVersion"];
type Question = Schemas["Question"];
type PollQuestion = Schemas["PollQuestion"];
type QuestionResults = Schemas["QuestionResults"];
type ScheduleQuestion = Schemas["ScheduleQuestion"];
type PollScheduleQuestion = Schemas["PollScheduleQuestion"];
type ScheduleResults = Schemas["ScheduleResults"];
type IssuedInvites = Schemas["IssuedInvites"];
type InviteStatus = Schemas["InviteStatus"];

function check(cond: boolean, what: string, got?: unknown): asserts cond {
  if (!cond) throw new Error(`${what}; got: ${JSON.stringify(got)}`);
}

/** The answer has `status` and a body; returns the body. */
function expect<T>(what: string, r: { data?: unknown; error?: unknown; response: Response }, status: number, body: T | undefined): T {
  check(r.response.status === status, `${what}: status ${status}`, { status: r.response.status, data: r.data, error: r.error });
  check(body !== undefined && body !== null, `${what}: a body`, r);
  console.log(`ok  ${what}: ${status}`);
  return body;
}

function problem(what: string, p: Problem, status: number): void {
  check(p.status === status && typeof p.title === "string" && typeof p.type === "string", `${what}: a Problem`, p);
}

interface State {
  base: string;
  api: ReturnType<typeof createClient<paths>>;
  polls: Map<string, CreatedPoll>;
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const WRONG = bearer("A".repeat(43));

function newPoll(title: string, resultsPublic: boolean): NewPoll {
  return {
    title,
    lang: "en",
    expiryDays: 7,
    resultsPublic,
    questions: [
      { type: "single", label: "Pick one", options: ["Pizza", "Sushi", "Salad"] },
      { label: "And to drink?", options: ["Water", "Juice"] },
    ],
  };
}

function admin(s: State, name: string) {
  const created = s.polls.get(name);
  check(created !== undefined, `poll ${name} was created`);
  return { id: created.id, headers: bearer(created.adminToken), created };
}

async function stepDocument(s: State): Promise<void> {
  const r = await s.api.GET("/api");
  expect("GET /api", r, 200, r.data);
}

async function stepCreate(s: State): Promise<void> {
  for (const [name, resultsPublic] of [["private", false], ["public", true]] as const) {
    const r = await s.api.POST("/api/polls", { body: newPoll(`Lunch (${name})`, resultsPublic) });
    const created: CreatedPoll = expect(`create ${name} poll`, r, 201, r.data);
    check(created.adminToken.length === 43, "adminToken has 43 characters", created.adminToken);
    check(created.poll.id === created.id && created.poll.resultsPublic === resultsPublic, "created.poll", created.poll);
    check(created.expiresOn > created.poll.createdOn, "expiresOn after createdOn", created);
    s.polls.set(name, created);
  }
}

async function stepCreateInvalid(s: State): Promise<void> {
  const bad: NewPoll = { ...newPoll("Too few options", false), questions: [{ label: "Only one", options: ["Lonely"] }] };
  const r = await s.api.POST("/api/polls", { body: bad });
  const p: ValidationProblem = expect("create invalid", r, 422, r.error as ValidationProblem | undefined);
  problem("create invalid", p, 422);
  check(p.errors.some((e) => e.field.includes("options")), "the error names the options field", p.errors);
}

async function stepRead(s: State): Promise<void> {
  const { id } = admin(s, "private");
  const r = await s.api.GET("/api/polls/{id}", { params: { path: { id } } });
  const poll: Poll = expect("read poll", r, 200, r.data);
  check(poll.title === "Lunch (private)" && poll.status === "open", "title and status as created", poll);
  const first = poll.questions[0];
  check(first?.type === "single" && first.options.join() === "Pizza,Sushi,Salad", "options as created", poll.questions);
  check(first.required === false, "required filled in (false)", first);
  check(poll.media.length === 0, "no media through the API", poll.media);
  check(poll.voteChanges === true, "voteChanges true when not sent", poll.voteChanges);
}

async function stepResults(s: State): Promise<void> {
  const { id, headers } = admin(s, "private");
  const path = { params: { path: { id } } };
  let r = await s.api.GET("/api/polls/{id}/results", path);
  problem("private results without token", expect("private results without token", r, 401, r.error), 401);
  r = await s.api.GET("/api/polls/{id}/results", { ...path, headers: WRONG });
  problem("private results, wrong token", expect("private results, wrong token", r, 401, r.error), 401);
  r = await s.api.GET("/api/polls/{id}/results", { ...path, headers });
  const results: Results = expect("private results", r, 200, r.data);
  check(results.totalResponses === 0 && results.questions.length === 2, "empty results of both questions", results);
  const first = results.questions[0];
  check(first?.type === "single" && first.options.map((o) => o.label).join() === "Pizza,Sushi,Salad", "option labels", results);
  const pub = admin(s, "public");
  r = await s.api.GET("/api/polls/{id}/results", { params: { path: { id: pub.id } } });
  expect("public results without token", r, 200, r.data);
}

/** One question of each type: created, read back typed, results per type. */
async function stepQuestionTypes(s: State): Promise<void> {
  const questions: Question[] = [
    { label: "Lunch?", options: ["Pizza", "Sushi"] },
    { type: "multiple", label: "Toppings", options: ["Cheese", "Olives", "Basil"], maxChoices: 2, required: true },
    { type: "ranked", label: "Rank the days", options: ["Mon", "Tue", "Wed"] },
    { type: "scale", label: "How hungry?", scaleMin: 0, scaleMax: 10, minLabel: "Not at all", maxLabel: "Starving" },
  ];
  const r = await s.api.POST("/api/polls", { body: { ...newPoll("Every type", true), questions } });
  const created: CreatedPoll = expect("create a poll of every type", r, 201, r.data);
  s.polls.set("every type", created);
  const { id, headers } = admin(s, "every type");
  const path = { params: { path: { id } } };
  const g = await s.api.GET("/api/polls/{id}", path);
  const poll: Poll = expect("read the poll of every type", g, 200, g.data);
  const [single, multiple, ranked, scale]: (PollQuestion | undefined)[] = poll.questions;
  check(single?.type === "single" && single.required === false && single.options.join() === "Pizza,Sushi", "single", single);
  check(multiple?.type === "multiple" && multiple.required, "multiple, required", multiple);
  check(multiple.minChoices === 1 && multiple.maxChoices === 2, "multiple: minChoices filled in", multiple);
  check(ranked?.type === "ranked" && ranked.options.join() === "Mon,Tue,Wed", "ranked", ranked);
  check(scale?.type === "scale" && scale.scaleMin === 0 && scale.scaleMax === 10, "scale ends", scale);
  check(scale.minLabel === "Not at all" && scale.maxLabel === "Starving" && !("options" in scale), "scale labels", scale);

  const res = await s.api.GET("/api/polls/{id}/results", path);
  const results: Results = expect("results of every type", res, 200, res.data);
  const [rs, rm, rr, rsc]: (QuestionResults | undefined)[] = results.questions;
  for (const [q, kind] of [[rs, "single"], [rm, "multiple"]] as const) {
    check(q?.type === kind && q.answered === 0, `${kind} results`, q);
    check(q.options.every((o) => o.count === 0 && o.percent === 0), `${kind}: zero counts`, q);
  }
  check(rr?.type === "ranked" && rr.method === "schulze", "ranked results", rr);
  check(rr.options.map((o) => o.firstChoices).join() === "0,0,0", "ranked: no first choices", rr);
  check(JSON.stringify(rr.pairwise) === "[[0,0,0],[0,0,0],[0,0,0]]", "ranked: pairwise all zeros", rr.pairwise);
  check(rr.ranking.length === 1 && rr.ranking[0]?.place === 1 && rr.ranking[0].options.join() === "Mon,Tue,Wed", "tied", rr);
  check(rsc?.type === "scale" && rsc.mean === null && rsc.median === null, "scale: no mean or median", rsc);
  check(rsc.distribution.map((d) => `${d.value}:${d.count}`).join() === [...Array(11).keys()].map((v) => `${v}:0`).join(), "0..10", rsc);

  const french: LanguageVersion = {
    title: "Tous les types",
    questions: [
      { label: "Déjeuner ?", options: ["Pizza", "Sushi"] },
      { label: "Garnitures", options: ["Fromage", "Olives", "Basilic"] },
      { label: "Classez les jours", options: ["Lun", "Mar", "Mer"] },
      { label: "Quelle faim ?", minLabel: "Pas du tout", maxLabel: "Affamé" },
    ],
  };
  const p = await s.api.PATCH("/api/polls/{id}", { ...path, headers, body: { translations: { fr: french } } });
  const updated: Poll = expect("French version with a scale's end labels", p, 200, p.data);
  check(updated.translations["fr"]?.questions[3]?.minLabel === "Pas du tout", "French end labels", updated.translations);
  const { maxLabel: _dropped, ...noHigh } = french.questions[3] ?? { label: "" };
  const bad = await s.api.PATCH("/api/polls/{id}", {
    ...path,
    headers,
    body: { translations: { fr: { ...french, questions: [...french.questions.slice(0, 3), noHigh] } } },
  });
  const v: ValidationProblem = expect("French version without the high end's label", bad, 422, bad.error as ValidationProblem | undefined);
  check(v.errors.map((e) => e.field).join() === "translations.fr.questions[3].maxLabel", "names maxLabel", v.errors);
}

/**
 * Votes as a person does (the API has no vote endpoint): the share page's
 * form, with its one-time ballot code and `fields` (docs/WEB.md).
 */
async function voteOnSharePage(s: State, id: string, fields: Record<string, string>): Promise<void> {
  const page = await fetch(`${s.base}/p/${id}`);
  const code = /name="ballot"[^>]*value="([^"]+)"/.exec(await page.text())?.[1];
  check(page.status === 200 && code !== undefined, "a share page with a vote form", page.status);
  const body = new URLSearchParams({ ...fields, ballot: code });
  const resp = await fetch(`${s.base}/p/${id}`, { method: "POST", body });
  check(resp.status === 200, "the vote is taken", resp.status);
}

/** A schedule question: created with a time zone, read back typed, voted on through the share page, results typed per slot. */
async function stepSchedule(s: State): Promise<void> {
  const slots = ["2027-01-14", "2027-01-14T18:30", "2027-01-15T09:00"];
  const zoned: ScheduleQuestion = { type: "schedule", label: "When?", options: slots, timeZone: "europe/paris" };
  const plain: ScheduleQuestion = { type: "schedule", label: "Which day?", options: ["2027-02-01", "2027-02-02"], required: true };
  const body: NewPoll = { ...newPoll("When shall we meet?", true), duplicateCheck: "none" };
  body.questions = [{ label: "Lunch?", options: ["Pizza", "Sushi"] }, zoned, plain];
  const r = await s.api.POST("/api/polls", { body });
  const created: CreatedPoll = expect("create a schedule poll", r, 201, r.data);
  s.polls.set("schedule", created);
  const path = { params: { path: { id: created.id } } };
  const g = await s.api.GET("/api/polls/{id}", path);
  const poll: Poll = expect("read the schedule poll", g, 200, g.data);
  const [, when, day]: (PollQuestion | undefined)[] = poll.questions;
  check(when?.type === "schedule" && when.options.join() === slots.join() && !when.required, "slots as created", when);
  const zone: PollScheduleQuestion = when;
  check(zone.timeZone === "Europe/Paris", "the zone as the database spells it", zone);
  check(day?.type === "schedule" && day.required && !("timeZone" in day), "no zone made up", day);

  const refused: [string[], string | undefined, string][] = [
    [["2027-01-15", "2027-01-14"], undefined, "options[1]"],
    [slots, "Mars/Base", "timeZone"],
  ];
  for (const [options, timeZone, where] of refused) {
    const question: ScheduleQuestion = { type: "schedule", label: "When?", options, ...(timeZone ? { timeZone } : {}) };
    const bad = await s.api.POST("/api/polls", { body: { ...newPoll("Refused", true), questions: [question] } });
    const v: ValidationProblem = expect(`bad ${where}`, bad, 422, bad.error as ValidationProblem | undefined);
    check(v.errors.map((e) => e.field).join() === `questions[0].${where}`, `names ${where}`, v.errors);
  }

  // Yes, if need be, yes; a slot left out is no.
  await voteOnSharePage(s, created.id, { q1s0: "yes", q1s1: "ifneedbe", q1s2: "yes", q2s0: "no" });
  await voteOnSharePage(s, created.id, { q1s1: "yes", q1s2: "yes", q2s1: "ifneedbe" });
  const res = await s.api.GET("/api/polls/{id}/results", path);
  const results: Results = expect("results of the schedule poll", res, 200, res.data);
  const [, rw, rd]: (QuestionResults | undefined)[] = results.questions;
  check(rw?.type === "schedule" && rw.answered === 2 && rw.timeZone === "Europe/Paris", "typed schedule results", rw);
  const figures: ScheduleResults = rw;
  const got = figures.slots.map((x) => `${x.slot} ${x.yes} ${x.ifNeedBe} ${x.no} ${x.best}`);
  const want = [`${slots[0]} 1 0 1 false`, `${slots[1]} 1 1 0 false`, `${slots[2]} 2 0 0 true`];
  check(got.join() === want.join(), "yes, if need be, no and best per slot", got);
  check(figures.bestFirst.join() === [slots[2], slots[1], slots[0]].join(), "best first", figures.bestFirst);
  check(rd?.type === "schedule" && rd.timeZone === undefined, "no zone in the results", rd);
  check(rd.slots.map((x) => `${x.yes} ${x.ifNeedBe} ${x.no} ${x.best}`).join() === "0 0 2 false,0 1 1 true", "day", rd);
}

/** A day `days` from today (UTC), as the API writes days. */
function dayFromToday(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

async function stepSettings(s: State): Promise<void> {
  const closesOn = dayFromToday(3);
  const body: NewPoll = { ...newPoll("Lunch (after vote)", false), resultsVisibility: "afterVote", closesOn, shuffleOptions: true };
  delete body.resultsPublic;
  const r = await s.api.POST("/api/polls", { body });
  const created: CreatedPoll = expect("create afterVote poll", r, 201, r.data);
  s.polls.set("after vote", created);
  const poll: Poll = created.poll;
  check(poll.resultsVisibility === "afterVote" && !poll.resultsPublic, "visibility as sent", poll);
  check(poll.closesOn === closesOn && poll.shuffleOptions, "closesOn and shuffleOptions as sent", poll);
  const { id, headers } = admin(s, "after vote");
  const path = { params: { path: { id } } };
  const withheld = await s.api.GET("/api/polls/{id}/results", path);
  problem("withheld results", expect("withheld results", withheld, 403, withheld.error), 403);
  const mine = await s.api.GET("/api/polls/{id}/results", { ...path, headers });
  expect("results with the token", mine, 200, mine.data);
  const change: PollPatch = { closesOn: null, resultsVisibility: "afterClose" };
  const p = await s.api.PATCH("/api/polls/{id}", { ...path, headers, body: change });
  const updated: Poll = expect("patch settings", p, 200, p.data);
  check(updated.closesOn === null && updated.resultsVisibility === "afterClose", "settings changed", updated);
}

/** duplicateCheck and voteChanges, and invite codes issued and counted through the typed client. */
async function stepInvites(s: State): Promise<void> {
  const body: NewPoll = { ...newPoll("Works council", false), duplicateCheck: "invite", voteChanges: false };
  const r = await s.api.POST("/api/polls", { body });
  const created: CreatedPoll = expect("create invite-only poll", r, 201, r.data);
  s.polls.set("invite", created);
  check(created.poll.duplicateCheck === "invite", "duplicateCheck as sent", created.poll);
  check(created.poll.voteChanges === false, "voteChanges as sent", created.poll);
  const { id, headers } = admin(s, "invite");
  const path = { params: { path: { id } } };
  const none = await s.api.POST("/api/polls/{id}/invites", { ...path, body: { count: 3 } });
  problem("invites without token", expect("invites without token", none, 401, none.error), 401);
  const i = await s.api.POST("/api/polls/{id}/invites", { ...path, headers, body: { count: 3 } });
  const issued: IssuedInvites = expect("issue 3 invites", i, 201, i.data);
  check(issued.invites.length === 3 && issued.issued === 3 && issued.used === 0, "3 issued, none used", issued);
  const shape = /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){4}$/;
  for (const { code, url } of issued.invites) {
    check(shape.test(code), "code shape", code);
    check(url === `${created.shareUrl}#invite=${code}`, "the url carries the code in the fragment", { url, code });
  }
  check(new Set(issued.invites.map((v) => v.code)).size === 3, "codes differ", issued.invites);
  const tooMany = await s.api.POST("/api/polls/{id}/invites", { ...path, headers, body: { count: 1001 } });
  problem("1001 invites", expect("1001 invites", tooMany, 422, tooMany.error), 422);
  const g = await s.api.GET("/api/polls/{id}/invites", { ...path, headers });
  const status: InviteStatus = expect("invite status", g, 200, g.data);
  check(status.issued === 3 && status.used === 0, "status counts", status);
  const p = await s.api.PATCH("/api/polls/{id}", { ...path, headers, body: { duplicateCheck: "none" } });
  const poll: Poll = expect("patch duplicateCheck", p, 200, p.data);
  check(poll.duplicateCheck === "none", "duplicateCheck changed", poll);
  check(poll.voteChanges === false, "voteChanges kept by a PATCH without it", poll);
  const v = await s.api.PATCH("/api/polls/{id}", { ...path, headers, body: { voteChanges: true } });
  const changed: Poll = expect("patch voteChanges", v, 200, v.data);
  check(changed.voteChanges === true && changed.duplicateCheck === "none", "voteChanges changed", changed);
  const bad = await s.api.PATCH("/api/polls/{id}", { ...path, headers, body: { voteChanges: "no" as unknown as boolean } });
  const refused: ValidationProblem = expect("patch voteChanges \"no\"", bad, 422, bad.error as ValidationProblem | undefined);
  check(refused.errors.map((e) => e.field).join() === "voteChanges", "the 422 names voteChanges", refused.errors);
}

async function stepPatch(s: State): Promise<void> {
  const { id, headers, created } = admin(s, "private");
  const patch = (body: PollPatch, h: Record<string, string> = headers) =>
    s.api.PATCH("/api/polls/{id}", { params: { path: { id } }, headers: h, body });

  let r = await patch({ closed: true }, {});
  problem("patch without token", expect("patch without token", r, 401, r.error), 401);
  r = await patch({ closed: true });
  let poll: Poll = expect("close", r, 200, r.data);
  check(poll.status === "closed", "closed", poll.status);

  r = await patch({ closed: false, expiryDays: 30 });
  poll = expect("reopen+expiry", r, 200, r.data);
  check(poll.status === "open" && poll.expiresOn > created.expiresOn, "reopened, later expiry", poll);

  const french: LanguageVersion = {
    title: "Déjeuner",
    questions: [
      { label: "Choisissez", options: ["Pizza", "Sushi", "Salade"] },
      { label: "Et à boire ?", options: ["Eau", "Jus"] },
    ],
  };
  r = await patch({ translations: { fr: french } });
  poll = expect("set French version", r, 200, r.data);
  check(poll.translations["fr"]?.title === "Déjeuner", "French version stored", poll.translations);

  r = await patch({ translations: { fr: null } });
  poll = expect("remove French version", r, 200, r.data);
  check(!("fr" in poll.translations), "French version removed", poll.translations);

  r = await patch({ translations: { de: { title: "Mittag", questions: french.questions.slice(0, 1) } } });
  const p: ValidationProblem = expect("version with too few questions", r, 422, r.error as ValidationProblem | undefined);
  problem("version with too few questions", p, 422);
}

async function stepDelete(s: State): Promise<void> {
  for (const name of s.polls.keys()) {
    const { id, headers } = admin(s, name);
    const path = { params: { path: { id } } };
    let d = await s.api.DELETE("/api/polls/{id}", { ...path, headers: WRONG });
    problem(`delete ${name}, wrong token`, expect(`delete ${name}, wrong token`, d, 401, d.error), 401);
    d = await s.api.DELETE("/api/polls/{id}", { ...path, headers });
    check(d.response.status === 204 && d.error === undefined, `delete ${name}: 204`, d.response.status);
    console.log(`ok  delete ${name}: 204`);
    const g = await s.api.GET("/api/polls/{id}", path);
    problem(`read ${name} after delete`, expect(`read ${name} after delete`, g, 404, g.error), 404);
    const res = await s.api.GET("/api/polls/{id}/results", { ...path, headers });
    problem(`results of ${name} after delete`, expect(`results of ${name} after delete`, res, 404, res.error), 404);
    const p = await s.api.PATCH("/api/polls/{id}", { ...path, headers, body: { closed: true } });
    problem(`patch ${name} after delete`, expect(`patch ${name} after delete`, p, 404, p.error), 404);
    d = await s.api.DELETE("/api/polls/{id}", { ...path, headers });
    problem(`delete ${name} again`, expect(`delete ${name} again`, d, 404, d.error), 404);
  }
}

const STEPS: ((s: State) => Promise<void>)[] = [
  stepDocument,
  stepCreate,
  stepCreateInvalid,
  stepRead,
  stepResults,
  stepQuestionTypes,
  stepSchedule,
  stepSettings,
  stepInvites,
  stepPatch,
  stepDelete,
];

async function main(): Promise<void> {
  const base = process.argv[2];
  check(base !== undefined, "usage: node drive_typescript.js BASE_URL");
  const state: State = { base, api: createClient<paths>({ baseUrl: base }), polls: new Map() };
  for (const step of STEPS) await step(state);
  console.log(`typescript client: ${STEPS.length} steps passed`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
