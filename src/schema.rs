//! The OpenAPI 3.1 document served at `GET /api`.
//!
//! Every bound in it comes from the rule values in [`crate::domain`], the same
//! values the validators use, so the document cannot promise what the server
//! does not do. `docs/API.md` is generated from this document too (the
//! unit test `api_reference_is_current` checks it and, with `UPDATE_DOCS=1`,
//! rewrites it), so the reference cannot drift either.

use serde_json::{Value, json};

use crate::app::INVITES_PER_CALL;
use crate::domain::question::{END_LABEL, MIN_CHOICES, SCALE_CEILING, SCALE_FLOOR};
use crate::domain::{
    DuplicateCheck, EXPIRY_DAYS, LABEL, Lang, MAX_JSON_BODY, NewPoll, OPTION, OPTIONS, PollPatch, QUESTIONS,
    QuestionKind, ResultsVisibility, TITLE,
};
use crate::secret::{INVITE_CODE_LEN, POLL_ID_LEN, TOKEN_LEN};
use crate::store::MAX_INVITES;

mod markdown;
mod results;
mod rules;

pub use markdown::markdown;

fn lang_schema(description: &str) -> Value {
    json!({"type": "string", "enum": Lang::codes(), "description": description})
}

fn expiry_schema(description: &str) -> Value {
    json!({"type": "integer", "enum": EXPIRY_DAYS, "description": description})
}

const DAY_PATTERN: &str = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$";

fn day_schema(description: &str) -> Value {
    json!({"type": "string", "format": "date", "pattern": DAY_PATTERN, "description": description})
}

/// A slot as sent and stored: a day, or a day and a time on the 24-hour
/// clock, months, days, hours and minutes within their ranges (the server
/// also checks that the day exists, 2027-02-30 does not, and the slots'
/// order: the document's description lists both among the rules no schema
/// states).
pub(super) const SLOT_PATTERN: &str =
    "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(T([01][0-9]|2[0-3]):[0-5][0-9])?$";

/// A schedule question's options: its slots.
fn slots_schema() -> Value {
    json!({
        "type": "array",
        "minItems": crate::domain::schedule::SLOTS.min,
        "maxItems": crate::domain::schedule::SLOTS.max,
        "uniqueItems": true,
        "description": "The slots, in time order, each once: a day (`YYYY-MM-DD`) or a day and a local time (`YYYY-MM-DDTHH:MM`, 24-hour clock).",
        "items": {"type": "string", "pattern": SLOT_PATTERN, "examples": ["2027-01-14", "2027-01-14T18:30"]},
    })
}

fn options_schema() -> Value {
    let option = OPTION.schema(
        "An answer option. Options of one question must differ, compared in NFC after trimming, and must not \
         look alike: two options with the same Unicode TS #39 confusable skeleton are refused as duplicates, \
         such as \"Pizza\" beside the same word with a Cyrillic Р (U+0420) for its P, or \"Yes\" beside \
         \"Yes\" with a zero-width space (U+200B) inside. Case still tells options apart (\"Yes\" and \
         \"yes\"), except where two letters look alike (\"I\" and \"l\").",
    );
    json!({
        "type": "array",
        "minItems": OPTIONS.min,
        "maxItems": OPTIONS.max,
        "uniqueItems": true,
        "items": option,
    })
}

/// A language version's options: as many as the poll's question has, so
/// none for a scale (an empty list, or left out) and otherwise the bounds of
/// [`options_schema`]. `not` rules out the counts in between (one option),
/// which generators read as a plain list of strings.
fn version_options_schema() -> Value {
    let mut s = options_schema();
    s["minItems"] = json!(0);
    s["not"] = json!({"minItems": 1, "maxItems": OPTIONS.min - 1});
    s["description"] = json!(format!(
        "The options in this language, in the poll's order: exactly as many as the poll's question has \
         ({}–{}); none (an empty list, or left out) for a scale or a schedule question.",
        OPTIONS.min, OPTIONS.max
    ));
    s
}

/// The name of the component of a question of `kind`: as created
/// (`SingleQuestion`) or as the poll answer lists it (`PollSingleQuestion`).
fn question_component(kind: QuestionKind, answer: bool) -> String {
    let name = match kind {
        QuestionKind::Single => "SingleQuestion",
        QuestionKind::Multiple => "MultipleQuestion",
        QuestionKind::Ranked => "RankedQuestion",
        QuestionKind::Scale => "ScaleQuestion",
        QuestionKind::Schedule => "ScheduleQuestion",
    };
    if answer { format!("Poll{name}") } else { name.to_owned() }
}

fn schema_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// What a question of `kind` asks of a voter, for its schema's description.
fn kind_description(kind: QuestionKind) -> String {
    match kind {
        QuestionKind::Single => "A single-choice question: a voter picks one option. `type` may be left out (it defaults to `single`).".to_owned(),
        QuestionKind::Multiple => format!(
            "A multiple-choice question: a voter who answers picks between `minChoices` and `maxChoices` options: \
             1 ≤ `minChoices` ≤ `maxChoices` ≤ the number of options ({}–{}), as `dependentSchemas` states; a \
             value that breaks it is refused (422) at its own field with \"must be a whole number from A to B\".",
            OPTIONS.min, OPTIONS.max
        ),
        QuestionKind::Ranked => "A ranking question: a voter puts at least one and at most all of the options in order of preference (1 = first); options left unranked count as ranked below every ranked one, tied with each other. Results rank the options by the Schulze method.".to_owned(),
        QuestionKind::Scale => format!(
            "A scale question: a voter picks one whole number from `scaleMin` to `scaleMax`. It has no options. \
             {SCALE_FLOOR} ≤ `scaleMin` < `scaleMax` ≤ {SCALE_CEILING}, as `dependentSchemas` states; a `scaleMax` \
             not above `scaleMin` is refused (422) at `scaleMax` with \"must be a whole number from A to B\"."
        ),
        QuestionKind::Schedule => format!(
            "A scheduling question (\"when can you come?\"): its options are slots, each a day (`2027-01-14`) or a \
             day with a local time on the 24-hour clock (`2027-01-14T18:30`), {}–{} of them, in time order, each once \
             (a whole day comes before the times of that day). A voter answers each slot yes, if need be, or no; a \
             slot left out is no. `timeZone` optionally names the IANA time zone the times are local to; the server \
             converts nothing. The slots are the same in every language: a language version gives no options for \
             this question. Results list per slot its yes, if-need-be and no, the best slots (most yes, then most \
             if need be) marked.",
            crate::domain::schedule::SLOTS.min,
            crate::domain::schedule::SLOTS.max
        ),
    }
}

/// One question of `kind`: as sent on creation (`answer` false: texts with
/// their rules, defaults) or as the poll answer lists it (`answer` true:
/// `type`, `required` and a multiple-choice question's bounds always
/// present). Fields of other types are refused ("is not a field of X
/// questions"), hence `additionalProperties: false`.
fn question_schema(kind: QuestionKind, answer: bool) -> Value {
    let text = |rule: crate::domain::TextRule, description: &str| {
        if answer { json!({"type": "string", "description": description}) } else { rule.schema(description) }
    };
    let mut type_schema = json!({"type": "string", "const": kind.as_str(), "description": "The question's type."});
    let mut required = vec!["label"];
    if kind != QuestionKind::Single || answer {
        required.insert(0, "type");
    } else {
        type_schema["default"] = json!("single");
    }
    let mut properties = serde_json::Map::new();
    properties.insert("type".into(), type_schema);
    properties.insert("label".into(), text(LABEL, "The question."));
    properties.insert(
        "required".into(),
        json!({
            "type": "boolean",
            "default": false,
            "description": "true: a ballot that leaves this question out is refused. Default false: it may be left out."
        }),
    );
    if answer {
        required.push("required");
    }
    if kind.has_options() {
        required.push("options");
        let options = match (answer, kind) {
            (true, QuestionKind::Schedule) => {
                json!({"type": "array", "items": {"type": "string", "pattern": SLOT_PATTERN}, "description": "The slots, in time order."})
            }
            (true, _) => {
                json!({"type": "array", "items": {"type": "string"}, "description": "The options, in the order they were created."})
            }
            (false, QuestionKind::Schedule) => slots_schema(),
            (false, _) => options_schema(),
        };
        properties.insert("options".into(), options);
    }
    let choices =
        |what: &str| json!({"type": "integer", "minimum": MIN_CHOICES, "maximum": OPTIONS.max, "description": what});
    match kind {
        QuestionKind::Multiple => {
            let mut min = choices("Fewest options a voter who answers picks. Default 1; at most `maxChoices`.");
            let max = choices(
                "Most options a voter picks. Default: the number of options; at least `minChoices`, at most the number of options.",
            );
            if !answer {
                min["default"] = json!(1);
            } else {
                required.extend(["minChoices", "maxChoices"]);
            }
            properties.insert("minChoices".into(), min);
            properties.insert("maxChoices".into(), max);
        }
        QuestionKind::Scale => {
            required.extend(["scaleMin", "scaleMax"]);
            properties.insert(
                "scaleMin".into(),
                json!({
                    "type": "integer", "minimum": SCALE_FLOOR, "maximum": SCALE_CEILING - 1,
                    "description": "The lowest value of the scale; below `scaleMax`."
                }),
            );
            properties.insert(
                "scaleMax".into(),
                json!({
                    "type": "integer", "minimum": SCALE_FLOOR + 1, "maximum": SCALE_CEILING,
                    "description": "The highest value of the scale; above `scaleMin`."
                }),
            );
            let end = |which: &str| {
                if answer {
                    json!({"type": "string", "description": format!("The text shown at the {which} end; absent when there is none.")})
                } else {
                    END_LABEL
                        .schema(&format!("Optional: the text shown at the {which} end (for example \"not at all\")."))
                }
            };
            properties.insert("minLabel".into(), end("low"));
            properties.insert("maxLabel".into(), end("high"));
        }
        QuestionKind::Schedule => {
            properties.insert(
                "timeZone".into(),
                json!({
                    "type": "string",
                    "maxLength": crate::domain::TimeZone::MAX_CHARS,
                    "description": "Optional: the IANA time zone the slots' times are local to (`Europe/Paris`), in any letter case; the poll answer gives it as the database spells it, and leaves it out when none was named. An unknown name is refused (422).",
                    "examples": ["Europe/Paris"]
                }),
            );
        }
        QuestionKind::Single | QuestionKind::Ranked => {}
    }
    let mut schema = json!({
        "type": "object",
        "additionalProperties": false,
        "description": kind_description(kind),
        "required": required,
        "properties": properties,
    });
    // The same rules bind what is sent and what the poll answer lists, so
    // schemathesis's response check holds the server to them as well.
    if let Some(dependent) = rules::question(kind) {
        schema["dependentSchemas"] = dependent;
    }
    schema
}

/// `oneOf` the four question schemas; `discriminator` where `type` is
/// always present (the poll answer), not on creation, where it may be left
/// out for a single-choice question.
fn question_union(answer: bool, description: &str) -> Value {
    let names: Vec<String> = QuestionKind::KINDS.iter().map(|k| question_component(*k, answer)).collect();
    let mut v = json!({"description": description, "oneOf": names.iter().map(|n| schema_ref(n)).collect::<Vec<_>>()});
    if answer {
        let mapping: serde_json::Map<String, Value> = QuestionKind::KINDS
            .iter()
            .zip(&names)
            .map(|(k, n)| (k.as_str().to_owned(), json!(format!("#/components/schemas/{n}"))))
            .collect();
        v["discriminator"] = json!({"propertyName": "type", "mapping": mapping});
    }
    v
}

fn problem_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    })
}

fn with_links(mut response: Value, links: Value) -> Value {
    response["links"] = links;
    response
}

fn json_response(description: &str, schema_ref: &str) -> Value {
    json!({
        "description": description,
        "headers": {"Cache-Control": {"$ref": "#/components/headers/CacheControl"}},
        "content": {"application/json": {"schema": {"$ref": schema_ref}}}
    })
}

/// OpenAPI links from a response to the operations on the same poll, so
/// clients (and schemathesis's stateful tests) can follow create → read →
/// patch → results → delete.
fn poll_links(id_from: &str, ops: &[(&str, &str)]) -> Value {
    let mut links = serde_json::Map::new();
    for (name, op) in ops {
        links.insert((*name).to_owned(), json!({"operationId": op, "parameters": {"path.id": id_from}}));
    }
    Value::Object(links)
}

fn id_param() -> Value {
    json!({
        "name": "id",
        "in": "path",
        "required": true,
        "description": "The poll id returned at creation.",
        "schema": {"type": "string", "pattern": format!("^[A-Za-z0-9_-]{{{POLL_ID_LEN}}}$")}
    })
}

fn visibility_schema() -> Value {
    json!({
        "type": "string",
        "enum": ResultsVisibility::codes(),
        "description": "Who reads the results without the admin token: `public` anyone, always; `afterVote` each voter, on the page they get right after voting; `afterClose` anyone, once the poll is closed (by its admin or its `closesOn` day); `private` nobody. Default: `private` (or what `resultsPublic` says)."
    })
}

/// `closesOn`; `nullable` in a PATCH, where null removes it.
fn closes_on_schema(nullable: bool) -> Value {
    let rule = "The day voting ends (UTC, `YYYY-MM-DD`): from that day the poll takes no votes and reads `closed`; its results stay readable (per `resultsVisibility`) until it expires. Must be after today and before the day the poll expires (on that day it is erased). A PATCH may send the poll's own closing day back unchanged, even once passed.";
    if nullable {
        json!({"type": ["string", "null"], "format": "date", "pattern": DAY_PATTERN, "description": format!("{rule} null removes it.")})
    } else {
        json!({"type": "string", "format": "date", "pattern": DAY_PATTERN, "description": rule})
    }
}

fn shuffle_schema() -> Value {
    json!({"type": "boolean", "default": false, "description": "true: the share page lists each question's options in a fresh random order at every view (against order bias); a schedule's slots stay in time order. Results keep the creation order (a schedule's list its slots best first)."})
}

fn vote_changes_schema(patch: bool) -> Value {
    let mut s = json!({"type": "boolean", "description": "true: each voter gets a receipt (a random code shown once, stored only as a hash with the ballot) with which, while the poll is open, they can see, change or withdraw their own ballot on the web page `/p/{id}/ballot`; the counters follow exactly. false: no receipt is given, and receipts given before no longer open ballots. No API endpoint takes receipts, as none takes votes."});
    if !patch {
        s["default"] = json!(true);
    }
    s
}

/// What each duplicate check does, in the order of [`DuplicateCheck::ALL`];
/// `network`'s in the votes a day this server takes from one network
/// (`per_day`, polld's `--network-votes-per-day`; 0: no such rule).
fn duplicate_check_mode(check: DuplicateCheck, per_day: u32) -> String {
    match check {
        DuplicateCheck::Network => {
            let network = "one network (an IPv4 address or IPv6 /64, in polld's memory as a keyed hash, nothing stored)";
            let flag = "polld's `--network-votes-per-day`";
            let rule = match per_day {
                0 => format!("a short-lived limit on repeats from {network}; no daily limit ({flag} is 0)"),
                1 => format!("one vote a day ({flag}) from {network} and a short-lived limit on repeats"),
                n => format!("{n} votes a day ({flag}) from {network} and a short-lived limit on repeats"),
            };
            format!(
                "`network` (default): {rule}; right for an open link. Where many people share one connection, \
                 `invite` or `none`"
            )
        }
        DuplicateCheck::Invite => "`invite`: one vote per invite code the admin issues (`POST /api/polls/{id}/invites`); \
             a vote without an unused code of the poll is refused. Only the codes' SHA-256 hashes are stored, and \
             nothing pairs a code with the ballot it cast"
            .to_owned(),
        DuplicateCheck::None => "`none`: no duplicate check, only limits against floods: one network may send ten times the `network` limit (a room of people behind one address), and its ballots to `none` polls may add 20,000 counted answers a second in all (a single choice or a scale value counts 1, a multiple-choice answer 1 and each box ticked, a ranking of n options up to n(n-1)/2 + 1), so that a poll of many large rankings cannot take the server from the others; past either, 429".to_owned(),
    }
}

/// `duplicateCheck`; `patch`: as a PATCH key (no default applies).
fn duplicate_check_schema(patch: bool, per_day: u32) -> Value {
    let modes: Vec<String> = DuplicateCheck::ALL.iter().map(|c| duplicate_check_mode(*c, per_day)).collect();
    let mut s = json!({
        "type": "string",
        "enum": DuplicateCheck::codes(),
        "description": format!(
            "How the poll holds back a second vote from one person. {}.{}",
            modes.join("; "),
            if patch { " A change applies to the votes that come after it; codes already issued stay valid." } else { "" }
        ),
    });
    if !patch {
        s["default"] = json!(DuplicateCheck::default().as_str());
    }
    s
}

/// An invite code as the API shows it: groups of four letters.
fn invite_code_pattern() -> String {
    let group = "[0-9A-HJKMNP-TV-Z]{4}";
    let groups = [group; INVITE_CODE_LEN / 4];
    format!("^{}$", groups.join("-"))
}

/// Builds the whole document. `base_url` is this deployment's public
/// address; `network_votes_per_day` what it takes from one network a day on
/// a `network` poll.
pub fn openapi(base_url: &str, creations_per_hour: u32, network_votes_per_day: u32) -> Value {
    let example_body = json!({
        "title": "Where shall we have lunch?",
        "lang": "en",
        "expiryDays": 7,
        "resultsPublic": true,
        "questions": [{"type": "single", "label": "Pick one", "options": ["Pizza", "Sushi", "Salad"]}]
    });
    let curl =
        format!("curl -sS -X POST '{base_url}/api/polls' -H 'Content-Type: application/json' -d '{}'", example_body);
    json!({
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
        "info": {
            "title": "anonpoll API",
            "version": env!("CARGO_PKG_VERSION"),
            "summary": "Anonymous polls: no accounts, no cookies, no stored IP addresses.",
            "description": format!(
                "Create a poll, read it and its results, and manage it with the admin token returned once at \
                 creation. Votes are cast only on the poll's share page; no endpoint accepts them. Polls and all \
                 their responses are erased for good when they expire or are deleted. Dates are calendar days \
                 (UTC, `YYYY-MM-DD`); a poll is available until the day before `expiresOn` and erased on that day.\n\n\
                 Example:\n\n    {curl}\n\nErrors are RFC 9457 problem documents; validation errors (422) list \
                 each invalid field in `errors`, every problem of the body at once. At most {creations_per_hour} \
                 polls may be created per hour from one client.\n\n{}",
                rules::description(MAX_INVITES)
            ),
            "x-example": {"request": curl, "body": example_body},
        },
        "servers": [{"url": base_url}],
        "security": [],
        "paths": {
            "/api": {
                "get": {
                    "operationId": "getApiSchema",
                    "summary": "This document.",
                    "responses": {"200": {"description": "The OpenAPI document.", "content": {"application/json": {"schema": {"type": "object"}}}}}
                }
            },
            "/api/polls": {
                "post": {
                    "operationId": "createPoll",
                    "summary": "Create a poll. Returns its admin token, once.",
                    "requestBody": {
                        "required": true,
                        "description": format!("At most {MAX_JSON_BODY} bytes."),
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewPoll"}, "example": example_body}}
                    },
                    "responses": {
                        "201": {
                            "description": "Created. Keep `adminToken`: it is shown only now and cannot be recovered.",
                            "headers": {
                                "Location": {"description": "The new poll's API address.", "schema": {"type": "string"}},
                                "Cache-Control": {"$ref": "#/components/headers/CacheControl"},
                                "RateLimit-Policy": {"$ref": "#/components/headers/RateLimitPolicy"},
                                "RateLimit": {"$ref": "#/components/headers/RateLimit"}
                            },
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CreatedPoll"}}},
                            "links": poll_links("$response.body#/id", &[
                                ("GetPoll", "getPoll"), ("GetResults", "getResults"),
                                ("UpdatePoll", "updatePoll"), ("DeletePoll", "deletePoll"),
                                ("IssueInvites", "issueInvites"), ("GetInvites", "getInvites"),
                            ])
                        },
                        "400": problem_response("The body is not valid JSON."),
                        "413": problem_response("The body is larger than the limit."),
                        "415": problem_response("The body is not sent as application/json."),
                        "422": {
                            "description": "A field is invalid; `errors` lists each one.",
                            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/ValidationProblem"}}}
                        },
                        "429": {
                            "description": "Too many polls created from this client in the last hour.",
                            "headers": {
                                "Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer", "minimum": 1}},
                                "RateLimit-Policy": {"$ref": "#/components/headers/RateLimitPolicy"},
                                "RateLimit": {"$ref": "#/components/headers/RateLimit"}
                            },
                            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
                        },
                        "503": problem_response("Storage cannot take writes right now; retry later.")
                    }
                }
            },
            "/api/polls/{id}": {
                "parameters": [id_param()],
                "get": {
                    "operationId": "getPoll",
                    "summary": "The public poll with its language versions.",
                    "responses": {
                        "200": with_links(json_response("The poll.", "#/components/schemas/Poll"),
                            poll_links("$request.path.id", &[("GetResults", "getResults")])),
                        "404": problem_response("No such poll, or it expired or was deleted.")
                    }
                },
                "patch": {
                    "operationId": "updatePoll",
                    "summary": "Close or reopen, change the expiry and settings, set or remove language versions, fix the title and questions.",
                    "description": "Keys may be combined; the change applies entirely or not at all. The title and questions may be fixed at any time, in their texts only once the poll has responses (see `PollPatch`).",
                    "security": [{"adminToken": []}],
                    // One media type only: generators turn a schema listed
                    // under two into a broken union (openapi-python-client
                    // 0.29.1 writes code that does not import). The other
                    // accepted type is said in words, so the document stays
                    // true and generated clients work.
                    "requestBody": {
                        "required": true,
                        "description": format!(
                            "A JSON merge patch (RFC 7396) of the poll: `null` removes a language version. \
                             `Content-Type: application/merge-patch+json` is accepted too, with the same body. \
                             At most {MAX_JSON_BODY} bytes."
                        ),
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PollPatch"}}}
                    },
                    "responses": {
                        "200": with_links(json_response("The updated poll.", "#/components/schemas/Poll"),
                            poll_links("$request.path.id", &[
                                ("GetPoll", "getPoll"), ("GetResults", "getResults"), ("DeletePoll", "deletePoll"),
                            ])),
                        "400": problem_response("The body is not valid JSON."),
                        "401": problem_response("Missing or wrong admin token."),
                        "404": problem_response("No such poll, or it expired or was deleted."),
                        "413": problem_response("The body is larger than the limit."),
                        "415": problem_response("The body is not sent as JSON."),
                        "409": {
                            "description": "`/api#problem-poll-has-responses`: the poll has responses, and `questions` would change more than their texts; `errors` names each field that would change (message: \"cannot change: the poll has responses, …\"). Nothing was changed.",
                            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/ValidationProblem"}}}
                        },
                        "422": {
                            "description": "A field is invalid; `errors` lists each one. Nothing was changed.",
                            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/ValidationProblem"}}}
                        },
                        "503": problem_response("Storage cannot take writes right now; retry later.")
                    }
                },
                "delete": {
                    "operationId": "deletePoll",
                    "summary": "Erase the poll and all its responses, for good.",
                    "security": [{"adminToken": []}],
                    "responses": {
                        "204": {"description": "Erased.", "links": poll_links("$request.path.id", &[("GetPoll", "getPoll")])},
                        "401": problem_response("Missing or wrong admin token."),
                        "404": problem_response("No such poll, or it expired or was deleted."),
                        "503": problem_response("Storage cannot take writes right now; retry later.")
                    }
                }
            },
            "/api/polls/{id}/results": {
                "parameters": [id_param()],
                "get": {
                    "operationId": "getResults",
                    "summary": "Counts per option and statistics. Needs the admin token unless the poll's `resultsVisibility` lets anyone read them now.",
                    "description": "Who reads the results without the token: anyone for `public`; anyone once the poll is closed for `afterClose`; nobody for `afterVote` (voters see them on the share page right after voting) and `private`. The token always reads them.",
                    "security": [{}, {"adminToken": []}],
                    "responses": {
                        "200": json_response("The results.", "#/components/schemas/Results"),
                        "401": problem_response("The results are private: missing or wrong admin token."),
                        "403": problem_response("Not visible yet (`afterVote`, or `afterClose` before the poll closes); `detail` says when. The admin token reads them."),
                        "404": problem_response("No such poll, or it expired or was deleted.")
                    }
                }
            },
            "/api/polls/{id}/invites": {
                "parameters": [id_param()],
                "post": {
                    "operationId": "issueInvites",
                    "summary": "Issue invite codes: each casts one vote on a poll whose `duplicateCheck` is `invite`. The codes are in this answer only.",
                    "description": format!(
                        "Only the codes' SHA-256 hashes are stored: a lost code cannot be shown again (issue another). \
                         Codes may be issued whatever the poll's `duplicateCheck`; they are asked for only while it is \
                         `invite`. A voter types the code into the share page, or opens its `url`, which carries it in \
                         the fragment (`#invite=CODE`), never sent to a server. {INVITES_PER_CALL} codes at most per \
                         call, {MAX_INVITES} per poll. No endpoint casts a vote: an unknown or used code is refused \
                         on the share page (403, `/api#problem-invite-refused`)."
                    ),
                    "security": [{"adminToken": []}],
                    "requestBody": {
                        "required": true,
                        "description": format!("At most {MAX_JSON_BODY} bytes."),
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/InviteRequest"}, "example": {"count": 30}}}
                    },
                    "responses": {
                        "201": with_links(json_response("Issued. Keep the codes: they are shown only now.", "#/components/schemas/IssuedInvites"),
                            poll_links("$request.path.id", &[("GetInvites", "getInvites"), ("GetPoll", "getPoll")])),
                        "400": problem_response("The body is not valid JSON."),
                        "401": problem_response("Missing or wrong admin token."),
                        "404": problem_response("No such poll, or it expired or was deleted."),
                        "413": problem_response("The body is larger than the limit."),
                        "415": problem_response("The body is not sent as application/json."),
                        "422": {
                            "description": format!(
                                "`count` is missing, not a whole number from 1 to {INVITES_PER_CALL} written as one (`5`, not `5.0`), or would give the poll more than \
                                 {MAX_INVITES} codes; or the body has another field. `errors` lists each. No code was issued."
                            ),
                            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/ValidationProblem"}}}
                        },
                        "503": problem_response("Storage cannot take writes right now; retry later.")
                    }
                },
                "get": {
                    "operationId": "getInvites",
                    "summary": "How many invite codes the poll has, and how many have cast a vote.",
                    "description": "Counts only: which codes were used is not told (and nothing stored tells which ballot a code cast).",
                    "security": [{"adminToken": []}],
                    "responses": {
                        "200": json_response("The counts.", "#/components/schemas/InviteStatus"),
                        "401": problem_response("Missing or wrong admin token."),
                        "404": problem_response("No such poll, or it expired or was deleted.")
                    }
                }
            }
        },
        "components": {
            "securitySchemes": {
                "adminToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": format!("The poll's `adminToken` ({TOKEN_LEN} characters, base64url), returned once at creation.")
                }
            },
            "headers": {
                "CacheControl": {"description": "Responses are never stored by caches.", "schema": {"type": "string", "const": "no-store"}},
                "RateLimitPolicy": {"description": "The creation quota, e.g. `\"creations\";q=10;w=3600`.", "schema": {"type": "string"}},
                "RateLimit": {"description": "What is left of it, e.g. `\"creations\";r=9;t=3600`.", "schema": {"type": "string"}}
            },
            "schemas": schemas(network_votes_per_day),
        }
    })
}

/// The components, each union followed by its members (so `docs/API.md`
/// reads them together).
fn schemas(per_day: u32) -> Value {
    let mut results_union = json!({
        "description": "The results of one question, by its `type`.",
        "oneOf": [schema_ref("ChoiceResults"), schema_ref("RankedResults"), schema_ref("ScaleResults"), schema_ref("ScheduleResults")],
    });
    results_union["discriminator"] = json!({"propertyName": "type", "mapping": {
        "single": "#/components/schemas/ChoiceResults",
        "multiple": "#/components/schemas/ChoiceResults",
        "ranked": "#/components/schemas/RankedResults",
        "scale": "#/components/schemas/ScaleResults",
        "schedule": "#/components/schemas/ScheduleResults",
    }});
    let members = |answer: bool| -> Vec<(String, Value)> {
        QuestionKind::KINDS.iter().map(|k| (question_component(*k, answer), question_schema(*k, answer))).collect()
    };
    let mut out = serde_json::Map::new();
    let Value::Object(base) = base_schemas(per_day) else { return Value::Null };
    for (name, schema) in base {
        let after: Vec<(String, Value)> = match name.as_str() {
            "Question" => members(false),
            "Poll" => {
                let mut v = vec![(
                    "PollQuestion".to_owned(),
                    question_union(
                        true,
                        "One question of the poll, by its `type`, with its defaults filled in (`required`; a multiple-choice question's `minChoices` and `maxChoices`).",
                    ),
                )];
                v.extend(members(true));
                v
            }
            "Results" => {
                let mut v = vec![("QuestionResults".to_owned(), results_union.clone())];
                v.extend(results::schemas().into_iter().map(|(n, s)| (n.to_owned(), s)));
                v
            }
            _ => Vec::new(),
        };
        out.insert(name, schema);
        out.extend(after);
    }
    Value::Object(out)
}

fn base_schemas(per_day: u32) -> Value {
    json!({
        "NewPoll": {
            "type": "object",
            "additionalProperties": false,
            "required": NewPoll::REQUIRED,
            "properties": {
                "title": TITLE.schema("The poll's title."),
                "lang": lang_schema("The language the poll is written in."),
                "expiryDays": expiry_schema("Days until the poll and its responses are erased."),
                "resultsPublic": {"type": "boolean", "default": false, "description": "true: anyone may read the results; false: only with the admin token. The same as `resultsVisibility` `public` / `private`; a body that gives both must make them agree (true exactly when it is `public`, as `dependentSchemas` states)."},
                "resultsVisibility": visibility_schema(),
                "closesOn": closes_on_schema(false),
                "shuffleOptions": shuffle_schema(),
                "duplicateCheck": duplicate_check_schema(false, per_day),
                "voteChanges": vote_changes_schema(false),
                "questions": {
                    "type": "array",
                    "minItems": QUESTIONS.min,
                    "maxItems": QUESTIONS.max,
                    "items": {"$ref": "#/components/schemas/Question"}
                }
            },
            "dependentSchemas": rules::new_poll(),
        },
        "Question": question_union(false, &format!(
            "One question of a new poll, by its `type` ({}; default `single`). Every type has `label` and \
             `required`; `single`, `multiple` and `ranked` have `options`; `scale` has `scaleMin`, `scaleMax` and \
             optional `minLabel`, `maxLabel`; `schedule` has `options` (its slots) and an optional `timeZone`. A \
             field of another type is refused (\"is not a field of X questions\").",
            QuestionKind::ALL.join(", ")
        )),
        "LanguageVersion": {
            "type": "object",
            "additionalProperties": false,
            "required": ["title", "questions"],
            "description": "The poll in another language: exactly as many questions as the poll, in the same order, each with exactly as many options (none for a scale or a schedule, whose slots are the same in every language) and the same end labels (a scale's `minLabel`, `maxLabel`) as the poll's question.",
            "properties": {
                "title": TITLE.schema("The title in this language."),
                "questions": {
                    "type": "array",
                    "minItems": QUESTIONS.min,
                    "maxItems": QUESTIONS.max,
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["label"],
                        "description": "Every text of the poll's question at the same place, in this language. `minLabel` and `maxLabel` must be given exactly when the poll's (scale) question has them; a scale's and a schedule's `options` are none (its slots are the same in every language).",
                        "properties": {
                            "label": LABEL.schema("The question in this language."),
                            "options": version_options_schema(),
                            "minLabel": END_LABEL.schema("The low end's text of a scale question, in this language."),
                            "maxLabel": END_LABEL.schema("The high end's text of a scale question, in this language.")
                        }
                    }
                }
            }
        },
        "PollPatch": {
            "type": "object",
            "additionalProperties": false,
            "minProperties": 1,
            "properties": {
                "closed": {"type": "boolean", "description": "true closes the poll (it accepts no more responses); false reopens it."},
                "expiryDays": expiry_schema("New lifetime, counted from today. Must not end before the poll's `closesOn` (unless the same PATCH moves or removes it)."),
                "resultsVisibility": visibility_schema(),
                "closesOn": closes_on_schema(true),
                "shuffleOptions": shuffle_schema(),
                "duplicateCheck": duplicate_check_schema(true, per_day),
                "voteChanges": vote_changes_schema(true),
                "translations": {
                    "type": "object",
                    "minProperties": 1,
                    "description": "Language versions to set, or null to remove one. The poll's own language cannot be a key. Checked against the questions this PATCH gives, if it gives any.",
                    "propertyNames": {"enum": Lang::codes()},
                    "additionalProperties": {"oneOf": [{"$ref": "#/components/schemas/LanguageVersion"}, {"type": "null"}]}
                },
                "title": TITLE.schema("The poll's title, in its own language: fixed at any time. A new title sets `editedOn`."),
                "questions": {
                    "type": "array",
                    "minItems": QUESTIONS.min,
                    "maxItems": QUESTIONS.max,
                    "items": {"$ref": "#/components/schemas/Question"},
                    "description": "The poll's whole list of questions in its own language, each as on creation; it replaces the list, and a change sets `editedOn`. Once the poll has responses only texts may differ from the poll's (the labels, the options' texts, a scale's end labels): the number of questions and, per question, its `type`, number of options, `minChoices`, `maxChoices`, `scaleMin`, `scaleMax`, `required` and which end labels it has must stay (409 `poll-has-responses` otherwise), and responses keep their meaning, since they record options by position; language versions stay. While it has none, any list is taken, validated as on creation: if its structure differs, the counts start again in the new layout, the language versions are removed (they were written for other questions) unless this PATCH gives new ones, and the media of questions no longer there are erased; the others keep their places. Whether the poll has responses is decided with the change, in one transaction: a vote cannot come in between."
                }
            },
            "x-fields": PollPatch::FIELDS,
        },
        "Poll": {
            "type": "object",
            "required": ["id", "title", "lang", "status", "resultsPublic", "resultsVisibility", "closesOn", "shuffleOptions", "duplicateCheck", "voteChanges", "createdOn", "expiresOn", "editedOn", "questions", "translations", "media", "shareUrl"],
            "properties": {
                "id": {"type": "string"},
                "title": {"type": "string"},
                "lang": lang_schema("The poll's own language."),
                "status": {"type": "string", "enum": ["open", "closed"], "description": "closed: closed by its admin, or its `closesOn` day has come."},
                "resultsPublic": {"type": "boolean", "description": "true exactly when `resultsVisibility` is `public`."},
                "resultsVisibility": {"type": "string", "enum": ResultsVisibility::codes()},
                "closesOn": {"type": ["string", "null"], "format": "date", "description": "Day voting ends (UTC), or null."},
                "shuffleOptions": {"type": "boolean"},
                "duplicateCheck": {"type": "string", "enum": DuplicateCheck::codes(), "description": "How the poll holds back a second vote: `network`, `invite` (one vote per invite code) or `none`."},
                "voteChanges": {"type": "boolean", "description": "Whether voters get receipts with which to change or withdraw their ballot while the poll is open."},
                "createdOn": day_schema("Day of creation (UTC)."),
                "expiresOn": day_schema("Day the poll is erased (UTC); it is available until the day before."),
                "editedOn": {"type": ["string", "null"], "format": "date", "pattern": DAY_PATTERN, "description": "The last day (UTC) its title or questions changed after creation (a PATCH of `title` or `questions`, or the admin page); null if they never did. The share page says so: \"Edited on …\"."},
                "questions": {"type": "array", "items": {"$ref": "#/components/schemas/PollQuestion"}},
                "translations": {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/LanguageVersion"}},
                "media": {"type": "array", "items": {"$ref": "#/components/schemas/Media"}, "description": "Media attached through the web form (the API accepts none): the poll's own first, then by question."},
                "shareUrl": {"type": "string", "format": "uri"}
            },
            "dependentSchemas": rules::new_poll(),
        },
        "Media": {
            "type": "object",
            "required": ["id", "url", "kind", "mimeType", "bytes", "question", "alt", "width", "height"],
            "additionalProperties": false,
            "properties": {
                "id": {"type": "string"},
                "url": {"type": "string", "format": "uri", "description": "Where the cleaned file is served (GET, with byte ranges)."},
                "kind": {"type": "string", "enum": ["image", "audio", "video"]},
                "mimeType": {"type": "string", "description": "Chosen by the server from the content, never from the upload."},
                "bytes": {"type": "integer", "minimum": 1},
                "question": {"type": ["integer", "null"], "minimum": 0, "description": "Index of the question it illustrates; null for the poll itself."},
                "alt": {"type": "string", "description": "Alt text of an image (always present) or caption of audio and video (may be empty)."},
                "width": {"type": ["integer", "null"]},
                "height": {"type": ["integer", "null"]}
            }
        },
        "CreatedPoll": {
            "type": "object",
            "required": ["id", "adminToken", "shareUrl", "adminUrl", "resultsUrl", "expiresOn", "poll"],
            "properties": {
                "id": {"type": "string"},
                "adminToken": {"type": "string", "minLength": TOKEN_LEN, "maxLength": TOKEN_LEN, "description": "Shown only once."},
                "shareUrl": {"type": "string", "format": "uri"},
                "adminUrl": {"type": "string", "format": "uri", "description": "The admin page; the token is in the fragment, which browsers never send to a server."},
                "resultsUrl": {"type": "string", "format": "uri"},
                "expiresOn": day_schema("Day the poll is erased."),
                "poll": {"$ref": "#/components/schemas/Poll"}
            }
        },
        "Results": {
            "type": "object",
            "required": ["id", "status", "totalResponses", "questions", "responsesByDay"],
            "properties": {
                "id": {"type": "string"},
                "status": {"type": "string", "enum": ["open", "closed"]},
                "totalResponses": {"type": "integer", "minimum": 0},
                "questions": {"type": "array", "items": {"$ref": "#/components/schemas/QuestionResults"}},
                "responsesByDay": {
                    "type": "array",
                    "items": {"type": "object", "required": ["date", "count"], "properties": {"date": day_schema("A day."), "count": {"type": "integer", "minimum": 0}}}
                }
            }
        },
        "InviteRequest": {
            "type": "object",
            "additionalProperties": false,
            "required": ["count"],
            "properties": {
                "count": {"type": "integer", "minimum": 1, "maximum": INVITES_PER_CALL, "description": format!("How many codes to issue; the poll may have at most {MAX_INVITES} in all.")}
            }
        },
        "IssuedInvites": {
            "type": "object",
            "required": ["invites", "issued", "used"],
            "properties": {
                "invites": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": INVITES_PER_CALL,
                    "description": "The new codes, in no particular order.",
                    "items": {
                        "type": "object",
                        "required": ["code", "url"],
                        "properties": {
                            "code": {"type": "string", "pattern": invite_code_pattern(), "description": format!("{INVITE_CODE_LEN} letters of Crockford's base 32 in groups of four. A voter may type it in either case, with or without the hyphens (O reads as 0, I and L as 1).")},
                            "url": {"type": "string", "format": "uri", "description": "The share page with the code in the fragment (`#invite=CODE`): the page fills in the code, and browsers never send the fragment."}
                        }
                    }
                },
                "issued": {"type": "integer", "minimum": 1, "maximum": MAX_INVITES, "description": "The poll's codes now, these included."},
                "used": {"type": "integer", "minimum": 0, "maximum": MAX_INVITES, "description": "The poll's codes that have cast a vote."}
            }
        },
        "InviteStatus": {
            "type": "object",
            "required": ["issued", "used"],
            "properties": {
                "issued": {"type": "integer", "minimum": 0, "maximum": MAX_INVITES, "description": "The poll's invite codes."},
                "used": {"type": "integer", "minimum": 0, "maximum": MAX_INVITES, "description": "Those that have cast a vote."}
            }
        },
        "Problem": {
            "type": "object",
            "description": "RFC 9457 problem details.",
            "required": ["type", "title", "status", "detail"],
            "properties": {
                "type": {"type": "string", "format": "uri-reference"},
                "title": {"type": "string"},
                "status": {"type": "integer"},
                "detail": {"type": "string"}
            }
        },
        // Both parts inside `allOf`: generators (openapi-python-client)
        // read a lone `$ref` in allOf with sibling properties as the
        // referenced schema alone, and drop `errors`.
        "ValidationProblem": {
            "description": "A problem document that lists each field at fault: each invalid one (422), or each that the poll's responses keep from changing (409).",
            "allOf": [{"$ref": "#/components/schemas/Problem"}, {
            "type": "object",
            "required": ["errors"],
            "properties": {
                "errors": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["field", "message"],
                        "properties": {
                            "field": {"type": "string", "description": "Path of the field, e.g. `questions[0].options[1]`; empty for the whole body."},
                            "message": {"type": "string"}
                        }
                    }
                }
            }
            }]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "https://polls.example.org";

    #[test]
    fn document_bounds_come_from_the_domain_rules() {
        let doc = openapi(BASE, 10, crate::app::NETWORK_VOTES_PER_DAY);
        let s = &doc["components"]["schemas"];
        assert_eq!(s["NewPoll"]["properties"]["title"]["maxLength"], TITLE.max_chars);
        assert_eq!(s["NewPoll"]["properties"]["questions"]["maxItems"], QUESTIONS.max);
        for kind in ["SingleQuestion", "MultipleQuestion", "RankedQuestion"] {
            assert_eq!(s[kind]["properties"]["options"]["maxItems"], OPTIONS.max);
            assert_eq!(s[kind]["properties"]["options"]["minItems"], OPTIONS.min);
        }
        assert_eq!(s["ScaleQuestion"]["properties"]["label"]["maxLength"], LABEL.max_chars);
        assert_eq!(s["MultipleQuestion"]["properties"]["maxChoices"]["maximum"], OPTIONS.max);
        assert_eq!(s["ScaleQuestion"]["properties"]["scaleMin"]["minimum"], SCALE_FLOOR);
        assert_eq!(s["ScaleQuestion"]["properties"]["scaleMax"]["maximum"], SCALE_CEILING);
        assert_eq!(s["ScaleQuestion"]["properties"]["minLabel"]["maxLength"], END_LABEL.max_chars);
        assert_eq!(s["Question"]["oneOf"].as_array().map(Vec::len), Some(QuestionKind::ALL.len()));
        // Every component a `$ref` names exists.
        let text = doc.to_string();
        for r in text.split("\"#/components/schemas/").skip(1) {
            let name = r.split('"').next().unwrap_or_default();
            assert!(s.get(name).is_some(), "dangling $ref to {name}");
        }
        assert_eq!(s["NewPoll"]["properties"]["expiryDays"]["enum"], json!(EXPIRY_DAYS));
        assert_eq!(s["NewPoll"]["properties"]["lang"]["enum"], json!(["en", "fr", "de", "it"]));
        assert!(doc["info"]["x-example"]["request"].as_str().unwrap().starts_with("curl "));
        for (schema, default) in [("NewPoll", json!("network")), ("PollPatch", Value::Null)] {
            let d = &s[schema]["properties"]["duplicateCheck"];
            assert_eq!(d["enum"], json!(DuplicateCheck::codes()), "{schema}");
            assert_eq!(d["default"], default, "{schema}");
        }
        assert_eq!(s["Poll"]["properties"]["duplicateCheck"]["enum"], json!(["network", "invite", "none"]));
        assert!(s["Poll"]["required"].as_array().unwrap().contains(&json!("duplicateCheck")));
        assert_eq!(s["InviteRequest"]["properties"]["count"]["maximum"], INVITES_PER_CALL);
        assert_eq!(s["IssuedInvites"]["properties"]["issued"]["maximum"], MAX_INVITES);
    }

    /// The published code pattern takes exactly what the server prints:
    /// its class, expanded, is the alphabet codes are drawn from, and every
    /// group of a printed code is four of its letters.
    #[test]
    fn invite_code_pattern_matches_issued_codes() {
        let pattern = invite_code_pattern();
        let class = pattern.split('[').nth(1).and_then(|r| r.split(']').next()).unwrap();
        let c: Vec<char> = class.chars().collect();
        let (mut letters, mut i) = (String::new(), 0);
        while i < c.len() {
            if i + 2 < c.len() && c[i + 1] == '-' {
                letters.extend(c[i]..=c[i + 2]);
                i += 3;
            } else {
                letters.push(c[i]);
                i += 1;
            }
        }
        assert_eq!(letters, "0123456789ABCDEFGHJKMNPQRSTVWXYZ");
        assert_eq!(pattern, format!("^{}$", vec![format!("[{class}]{{4}}"); INVITE_CODE_LEN / 4].join("-")));
        for _ in 0..50 {
            let code = crate::secret::InviteCode::generate().unwrap().expose();
            let groups: Vec<&str> = code.split('-').collect();
            assert_eq!(groups.len(), INVITE_CODE_LEN / 4, "{code}");
            assert!(groups.iter().all(|g| g.len() == 4 && g.chars().all(|ch| letters.contains(ch))), "{code}");
        }
    }
}
