//! Property tests for every parser and validator of the JSON API.
//!
//! Each entry point gets arbitrary input (arbitrary JSON, arbitrary strings)
//! and near-valid input (the right shape with values at and around every
//! bound), and must never panic: it answers `Ok` or a non-empty list of typed
//! errors. What is accepted must satisfy the documented bounds and survive a
//! round trip. Last, the published OpenAPI `NewPoll` schema and
//! `NewPoll::from_json` must agree on every generated body
//! (`tests/properties/schema.rs`; see `schema_and_validator_agree` for the
//! deliberate gaps and why they exist).
//!
//! The web-form parsers (form-urlencoded, multipart, Accept-Language) get
//! their properties with the web pages.
//!
//! Case counts are proptest's default (256) unless `PROPTEST_CASES` is set.

use crate::common;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use anonpoll::client::{TrustedProxies, client_ip, parse_net};
use anonpoll::day::Day;
use anonpoll::domain::question::{END_LABEL, SCALE_CEILING, SCALE_FLOOR};
use anonpoll::domain::schedule::SLOTS;
use anonpoll::domain::{
    DuplicateCheck, EXPIRY_DAYS, LABEL, NewPoll, OPTION, OPTIONS, PollPatch, QUESTIONS, Question, QuestionKind,
    ResultsVisibility, TITLE,
};
use anonpoll::error::{AuthFailure, FieldError};
use anonpoll::http::{Body, Method, Request};
use anonpoll::schema;
use anonpoll::secret::{POLL_ID_LEN, PollId};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

/// Arbitrary JSON, a few levels deep, with keys that sometimes hit the API's.
fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        prop_oneof![Just(7.0), Just(-0.0), Just(1e300), any::<f64>().prop_filter("finite", |f| f.is_finite())]
            .prop_map(Value::from),
        prop_oneof![Just(7i64), Just(30), Just(90), Just(365), Just(730), Just(0), Just(-7)].prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        arb_text(0..8).prop_map(Value::String),
        prop::sample::select(vec!["en", "fr", "de", "it", "single", "", " ", "EN"]).prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((arb_key(), inner), 0..8).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "title", "lang", "expiryDays", "resultsPublic", "questions", "type", "label", "options", "closed",
            "translations", "en", "fr", "de", "it",
        ])
        .prop_map(String::from),
        1 => any::<String>(),
    ]
}

/// Characters that matter to the text rules: plain letters, ASCII and Unicode
/// spaces, control characters (C0, DEL, C1), a zero-width no-break space,
/// non-BMP and combining characters.
fn arb_char() -> impl Strategy<Value = char> {
    prop_oneof![
        6 => prop::char::range('a', 'z'),
        2 => Just(' '),
        1 => prop::sample::select(vec!['\u{a0}', '\u{2003}', '\u{3000}', '\u{2028}', '\u{1680}']),
        1 => prop::sample::select(vec!['\n', '\t', '\r', '\0', '\u{7f}', '\u{85}', '\u{9f}', '\u{1b}']),
        1 => prop::sample::select(vec!['é', '\u{301}', '😀', '中', '\u{200b}', '\u{feff}', '"', '\\']),
    ]
}

fn arb_text(len: std::ops::Range<usize>) -> impl Strategy<Value = String> {
    prop::collection::vec(arb_char(), len).prop_map(String::from_iter)
}

/// Texts for a rule with bound `max`: mostly plain valid ones, then texts
/// of every kind of character, then texts within two characters of `max`.
fn text_near(max: usize) -> impl Strategy<Value = String> {
    prop_oneof![
        20 => "[A-Za-z0-9][A-Za-z0-9 ?'-]{0,24}",
        3 => arb_text(0..12),
        1 => (max - 2..=max + 2).prop_flat_map(|n| prop::collection::vec(prop::char::range('a', 'z'), n))
            .prop_map(String::from_iter),
        1 => (max - 2..=max + 2).prop_flat_map(|n| {
            // Padding spaces count towards the limit, although they are trimmed.
            prop::collection::vec(prop::sample::select(vec![' ', 'x', '😀']), n)
        })
        .prop_map(String::from_iter),
    ]
}

/// A value that is usually of the expected kind and sometimes not.
fn or_junk<S: Strategy<Value = Value> + 'static>(good: S) -> BoxedStrategy<Value> {
    prop_oneof![40 => good, 1 => arb_json()].boxed()
}

fn arb_options(distinct_after_trim: bool) -> BoxedStrategy<Value> {
    let count =
        prop_oneof![1 => 0..OPTIONS.min, 8 => OPTIONS.min..=OPTIONS.max, 1 => OPTIONS.max + 1..=OPTIONS.max + 2];
    count
        .prop_flat_map(move |n| prop::collection::vec(or_junk(text_near(OPTION.max_chars).prop_map(Value::from)), n))
        .prop_map(move |mut items| {
            if distinct_after_trim {
                // Make option texts differ (after trimming) by prefixing their
                // index, unless they are blank, where the prefix would hide
                // the blank-ness the test is after.
                for (i, item) in items.iter_mut().enumerate() {
                    if let Value::String(s) = item
                        && !blank_trim(s).is_empty()
                        && s.chars().count() < OPTION.max_chars - 2
                    {
                        *s = format!("{i}{}", blank_trim(s));
                    }
                }
            }
            Value::Array(items)
        })
        .boxed()
}

/// A schedule's slots: mostly valid (days in order, some with a time),
/// sometimes spoilt where the schema and the server both see it (a repeat,
/// a month that does not exist, a number). A day that does not exist or
/// slots out of order are gaps the schema cannot state: not made here
/// (the validator's own tests hold them).
fn arb_slots() -> BoxedStrategy<Value> {
    let count = prop_oneof![1 => 0..SLOTS.min, 8 => SLOTS.min..=SLOTS.max, 1 => SLOTS.max + 1..=SLOTS.max + 2];
    let slot = (1u32..3, prop::option::weighted(0.5, (0u32..24, 0u32..60)));
    (count.prop_flat_map(move |n| prop::collection::vec(slot.clone(), n)), 0u32..12, 0u32..30)
        .prop_map(|(steps, start, spoil)| {
            let mut day = start;
            let mut items: Vec<Value> = steps
                .into_iter()
                .map(|(step, time)| {
                    // A later day each time (28 days a month here).
                    day += step;
                    let ymd = format!("2027-{:02}-{:02}", 1 + day / 28, 1 + day % 28);
                    Value::from(time.map_or(ymd.clone(), |(h, m)| format!("{ymd}T{h:02}:{m:02}")))
                })
                .collect();
            match (spoil, items.len()) {
                (0, n) if n > 1 => items[n - 1] = items[0].clone(),
                (1, n) if n > 0 => items[n - 1] = Value::from("2027-13-01"),
                (2, n) if n > 0 => items[0] = Value::from(7),
                _ => {}
            }
            Value::Array(items)
        })
        .boxed()
}

/// A whole number at and around `lo..=hi`: mostly inside, sometimes one or
/// two outside, now and then junk (a string, a fraction is made `null` by
/// [`outside_known_gaps`] where it matters).
fn int_near(lo: i64, hi: i64) -> BoxedStrategy<Value> {
    or_junk(
        prop_oneof![
            8 => lo..=hi,
            1 => prop::sample::select(vec![lo - 2, lo - 1, lo, hi, hi + 1, hi + 2]),
        ]
        .prop_map(Value::from),
    )
}

/// A question of every type, with the fields of its type mostly and of
/// other types now and then, each at and around its bounds.
fn arb_question(distinct: bool) -> BoxedStrategy<Value> {
    let kind = prop::option::weighted(
        0.8,
        or_junk(
            prop_oneof![
                12 => Just("single"),
                6 => Just("multiple"),
                6 => Just("ranked"),
                6 => Just("scale"),
                4 => Just("schedule"),
                1 => prop::sample::select(vec!["Single", "", "rank", "choice"]),
            ]
            .prop_map(Value::from),
        ),
    );
    let max = OPTIONS.max as i64;
    let (floor, ceiling) = (i64::from(SCALE_FLOOR), i64::from(SCALE_CEILING));
    let end_label = || text_near(END_LABEL.max_chars).prop_map(Value::from);
    (
        kind,
        prop::option::weighted(0.99, or_junk(text_near(LABEL.max_chars).prop_map(Value::from))),
        arb_options(distinct),
        prop::option::weighted(0.3, or_junk(any::<bool>().prop_map(Value::Bool))),
        (int_near(1, max), int_near(1, max), int_near(floor, ceiling - 1), int_near(floor + 1, ceiling)),
        (prop::option::weighted(0.4, or_junk(end_label())), prop::option::weighted(0.4, or_junk(end_label()))),
        // Whether each group of fields is sent: mostly as its type has them.
        (
            prop::bool::weighted(0.99),
            prop::bool::weighted(0.02),
            any::<(bool, bool)>(),
            prop::option::weighted(0.03, any::<bool>()),
        ),
        prop::option::weighted(0.01, arb_json()),
        (
            arb_slots(),
            prop::option::weighted(
                0.3,
                // Names of the database only: an unknown one is a gap the schema
                // cannot state (the validator's own tests refuse it).
                prop::sample::select(vec!["Europe/Paris", "america/new_york", "UTC", "Asia/Tokyo"]),
            ),
        ),
    )
        .prop_map(
            |(
                kind,
                label,
                options,
                required,
                (min_c, max_c, lo, hi),
                (min_l, max_l),
                (own, other, (mn, mx), drop_end),
                extra,
                (slots, zone),
            )| {
                let t = kind.as_ref().map_or(Some("single"), Value::as_str);
                let mut m = Map::new();
                put(&mut m, "type", kind.clone());
                put(&mut m, "label", label);
                put(&mut m, "required", required);
                let has = |k: &str| t == Some(k);
                // The type's own fields (dropped 1 % of the time), or another
                // type's (2 %).
                if has("schedule") && own {
                    m.insert("options".into(), slots);
                } else if (t != Some("scale") && own) || (t == Some("scale") && other) {
                    m.insert("options".into(), options);
                }
                if has("schedule") || other {
                    put(&mut m, "timeZone", zone.map(Value::from));
                }
                if (has("multiple") && own) || (!has("multiple") && other) {
                    if mn {
                        m.insert("minChoices".into(), min_c);
                    }
                    if mx {
                        m.insert("maxChoices".into(), max_c);
                    }
                }
                // A scale's ends are required: one is left out 3 % of the time.
                if has("scale") || other {
                    if drop_end != Some(true) {
                        m.insert("scaleMin".into(), lo);
                    }
                    if drop_end != Some(false) {
                        m.insert("scaleMax".into(), hi);
                    }
                }
                if has("scale") || other {
                    put(&mut m, "minLabel", min_l);
                    put(&mut m, "maxLabel", max_l);
                }
                put(&mut m, "comment", extra);
                Value::Object(m)
            },
        )
        .boxed()
}

fn put(m: &mut Map<String, Value>, key: &str, v: Option<Value>) {
    if let Some(v) = v {
        m.insert(key.to_owned(), v);
    }
}

/// Creation bodies of the right shape, with values at and around the bounds
/// and an occasional wrong type, missing or unknown field.
fn near_valid_poll(distinct: bool) -> impl Strategy<Value = Value> {
    let questions = prop_oneof![1 => Just(0usize), 16 => QUESTIONS.min..=3, 1 => QUESTIONS.max - 1..=QUESTIONS.max + 1]
        .prop_flat_map(move |n| prop::collection::vec(prop_oneof![40 => arb_question(distinct), 1 => arb_json()], n))
        .prop_map(Value::Array);
    (
        prop::option::weighted(0.99, or_junk(text_near(TITLE.max_chars).prop_map(Value::from))),
        prop::option::weighted(
            0.99,
            or_junk(
                prop_oneof![
                    20 => prop::sample::select(vec!["en", "fr", "de", "it"]),
                    1 => prop::sample::select(vec!["es", "EN", "", "en "]),
                ]
                .prop_map(Value::from),
            ),
        ),
        prop::option::weighted(
            0.99,
            or_junk(
                prop_oneof![
                    20 => prop::sample::select(EXPIRY_DAYS.map(i64::from).to_vec()),
                    1 => prop::sample::select(vec![0i64, 8, -7, 731, 29, 31]),
                ]
                .prop_map(Value::from),
            ),
        ),
        prop::option::weighted(0.7, or_junk(any::<bool>().prop_map(Value::Bool))),
        prop::option::weighted(0.99, or_junk(questions)),
        prop::option::weighted(0.02, (arb_key(), arb_json())),
        prop::option::weighted(
            0.4,
            or_junk(
                prop_oneof![
                    20 => prop::sample::select(ResultsVisibility::codes()),
                    1 => prop::sample::select(vec!["Public", "after_vote", "", "never"]),
                ]
                .prop_map(Value::from),
            ),
        ),
        prop::option::weighted(0.3, or_junk(any::<bool>().prop_map(Value::Bool))),
        prop::option::weighted(
            0.4,
            or_junk(
                prop_oneof![
                    20 => prop::sample::select(DuplicateCheck::codes()),
                    1 => prop::sample::select(vec!["Network", "ip", "", "invite "]),
                ]
                .prop_map(Value::from),
            ),
        ),
        prop::option::weighted(0.3, or_junk(any::<bool>().prop_map(Value::Bool))),
    )
        .prop_map(
            |(title, lang, expiry, public, questions, extra, visibility, shuffle, duplicate_check, vote_changes)| {
                let mut m = Map::new();
                put(&mut m, "title", title);
                put(&mut m, "lang", lang);
                put(&mut m, "expiryDays", expiry);
                put(&mut m, "resultsPublic", public);
                put(&mut m, "resultsVisibility", visibility);
                put(&mut m, "shuffleOptions", shuffle);
                put(&mut m, "duplicateCheck", duplicate_check);
                put(&mut m, "voteChanges", vote_changes);
                put(&mut m, "questions", questions);
                if let Some((k, v)) = extra {
                    m.insert(k, v);
                }
                Value::Object(m)
            },
        )
}

fn arb_version() -> impl Strategy<Value = Value> {
    (
        prop::option::weighted(0.99, or_junk(text_near(TITLE.max_chars).prop_map(Value::from))),
        prop::option::weighted(
            0.99,
            or_junk(
                prop_oneof![1 => Just(0usize), 10 => 1usize..=2]
                    .prop_flat_map(|n| {
                        prop::collection::vec(
                            (
                                text_near(LABEL.max_chars),
                                prop::option::weighted(0.9, arb_options(true)),
                                prop::option::weighted(0.2, text_near(END_LABEL.max_chars)),
                                prop::option::weighted(0.2, text_near(END_LABEL.max_chars)),
                            )
                                .prop_map(|(l, o, lo, hi)| {
                                    let mut m = Map::new();
                                    m.insert("label".into(), Value::from(l));
                                    put(&mut m, "options", o);
                                    put(&mut m, "minLabel", lo.map(Value::from));
                                    put(&mut m, "maxLabel", hi.map(Value::from));
                                    Value::Object(m)
                                }),
                            n,
                        )
                    })
                    .prop_map(Value::Array),
            ),
        ),
    )
        .prop_map(|(title, questions)| {
            let mut m = Map::new();
            put(&mut m, "title", title);
            put(&mut m, "questions", questions);
            Value::Object(m)
        })
}

fn near_valid_patch() -> impl Strategy<Value = Value> {
    let translations = prop::collection::vec(
        (
            prop_oneof![10 => prop::sample::select(vec!["en", "fr", "de", "it"]), 1 => prop::sample::select(vec!["es", ""])],
            prop_oneof![3 => Just(Value::Null), 8 => arb_version().boxed(), 1 => arb_json()],
        ),
        0..=2usize,
    )
    .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()));
    (
        prop::option::weighted(0.5, or_junk(any::<bool>().prop_map(Value::Bool))),
        prop::option::weighted(
            0.5,
            or_junk(prop::sample::select(vec![7i64, 30, 90, 365, 730, 1]).prop_map(Value::from)),
        ),
        prop::option::weighted(0.5, or_junk(translations)),
        prop::option::weighted(0.02, (arb_key(), arb_json())),
        prop::option::weighted(
            0.3,
            or_junk(
                prop_oneof![
                    20 => prop::sample::select(DuplicateCheck::codes()),
                    1 => prop::sample::select(vec!["Network", "ip", "", "invite "]),
                ]
                .prop_map(Value::from),
            ),
        ),
        prop::option::weighted(0.3, or_junk(any::<bool>().prop_map(Value::Bool))),
    )
        .prop_map(|(closed, expiry, translations, extra, duplicate_check, vote_changes)| {
            let mut m = Map::new();
            put(&mut m, "closed", closed);
            put(&mut m, "expiryDays", expiry);
            put(&mut m, "duplicateCheck", duplicate_check);
            put(&mut m, "voteChanges", vote_changes);
            put(&mut m, "translations", translations);
            if let Some((k, v)) = extra {
                m.insert(k, v);
            }
            Value::Object(m)
        })
}

// ---------------------------------------------------------------------------
// Shared checks
// ---------------------------------------------------------------------------

/// A refusal is a non-empty list of errors, each with a message and a field
/// path that is empty (the whole body) or starts with a known key.
fn check_errors(errs: &[FieldError], input: &Value) -> Result<(), TestCaseError> {
    prop_assert!(!errs.is_empty(), "empty error list for {input}");
    for e in errs {
        prop_assert!(!e.problem.to_string().trim().is_empty(), "error without message for {input}: {e:?}");
    }
    Ok(())
}

/// The text rule as the documentation states it: at most `max` characters as
/// sent and in NFC, no control character nor line or paragraph separator,
/// not blank; stored in NFC, trimmed.
fn text_ok(s: &str, max: usize) -> bool {
    s.chars().count() <= max
        && nfc(s).chars().count() <= max
        && !s.chars().any(|c| c.is_control() || c == '\u{2028}' || c == '\u{2029}')
        && !blank_trim(s).is_empty()
}

/// `s` in Unicode Normalization Form C, as the server stores texts.
fn nfc(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    s.nfc().collect()
}

/// Trimming as the server does it: Unicode white space and U+FEFF (which
/// ECMA-262's `\s`, and so the schema, counts as blank too).
fn blank_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

fn check_text(stored: &str, sent: &Value, max: usize) -> Result<(), TestCaseError> {
    let sent = sent.as_str().expect("accepted text was a string");
    prop_assert!(text_ok(sent, max), "accepted {sent:?} against max {max}");
    let sent = nfc(sent);
    prop_assert_eq!(stored, blank_trim(&sent));
    Ok(())
}

fn check_accepted_poll(p: &NewPoll, v: &Value) -> Result<(), TestCaseError> {
    check_text(p.title.as_str(), &v["title"], TITLE.max_chars)?;
    prop_assert_eq!(p.lang.code(), v["lang"].as_str().unwrap());
    prop_assert!(EXPIRY_DAYS.contains(&p.expiry.get()));
    prop_assert_eq!(Some(i64::from(p.expiry.get())), v["expiryDays"].as_i64());
    // resultsVisibility when sent, else what resultsPublic says, else private.
    let visibility = match (v.get("resultsVisibility"), v.get("resultsPublic")) {
        (Some(vis), _) => ResultsVisibility::from_code(vis.as_str().unwrap()).unwrap(),
        (None, Some(Value::Bool(true))) => ResultsVisibility::Public,
        _ => ResultsVisibility::Private,
    };
    prop_assert_eq!(p.visibility, visibility);
    if let Some(public) = v.get("resultsPublic") {
        prop_assert_eq!(Some(p.visibility.is_public()), public.as_bool());
    }
    prop_assert_eq!(p.shuffle_options, v.get("shuffleOptions").is_some_and(|b| b.as_bool().unwrap()));
    // duplicateCheck as sent, else network.
    let check = v
        .get("duplicateCheck")
        .map_or(Some(DuplicateCheck::Network), |c| DuplicateCheck::from_code(c.as_str().unwrap()));
    prop_assert_eq!(Some(p.duplicate_check), check);
    // voteChanges as sent, else true.
    prop_assert_eq!(p.vote_changes, v.get("voteChanges").is_none_or(|b| b.as_bool().unwrap()));
    prop_assert!((QUESTIONS.min..=QUESTIONS.max).contains(&p.questions.len()));
    prop_assert_eq!(p.questions.len(), v["questions"].as_array().unwrap().len());
    for (q, sent) in p.questions.iter().zip(v["questions"].as_array().unwrap()) {
        check_accepted_question(q, sent)?;
    }
    // What was accepted, written back as JSON, is accepted again unchanged.
    let again = json!({
        "title": p.title, "lang": p.lang, "expiryDays": p.expiry.get(), "resultsPublic": p.visibility.is_public(),
        "resultsVisibility": p.visibility, "shuffleOptions": p.shuffle_options, "duplicateCheck": p.duplicate_check,
        "voteChanges": p.vote_changes, "questions": p.questions,
    });
    let q = NewPoll::from_json(&again).map_err(|e| TestCaseError::fail(format!("round trip refused: {e:?}")))?;
    prop_assert_eq!(q.title, p.title.clone());
    prop_assert_eq!(q.questions, p.questions.clone());
    prop_assert_eq!(
        (q.visibility, q.shuffle_options, q.duplicate_check, q.vote_changes),
        (p.visibility, p.shuffle_options, p.duplicate_check, p.vote_changes)
    );
    Ok(())
}

/// An accepted question holds its type's fields and no other, within
/// their bounds (the cross-field ones included), with the defaults filled in.
fn check_accepted_question(q: &Question, sent: &Value) -> Result<(), TestCaseError> {
    let int = |key: &str| sent.get(key).and_then(|n| n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)));
    prop_assert_eq!(q.kind.as_str(), sent.get("type").map_or("single", |t| t.as_str().unwrap()));
    check_text(q.label.as_str(), &sent["label"], LABEL.max_chars)?;
    prop_assert_eq!(q.required, sent.get("required").is_some_and(|b| b.as_bool().unwrap()));
    for key in sent.as_object().unwrap().keys() {
        let common = ["type", "label", "required"].contains(&key.as_str());
        prop_assert!(common || q.kind.fields().contains(&key.as_str()), "{key} accepted on a {:?}: {sent}", q.kind);
    }
    if q.kind.has_options() {
        let bounds = if q.kind == QuestionKind::Schedule { SLOTS } else { OPTIONS };
        prop_assert!((bounds.min..=bounds.max).contains(&q.options.len()));
        let mut seen = std::collections::HashSet::new();
        for (o, so) in q.options.iter().zip(sent["options"].as_array().unwrap()) {
            check_text(o.as_str(), so, OPTION.max_chars)?;
            prop_assert!(seen.insert(o.as_str()), "duplicate option accepted: {sent}");
        }
    } else {
        prop_assert!(q.options.is_empty());
    }
    let n = q.options.len() as i64;
    match q.kind {
        QuestionKind::Multiple => {
            let (min, max) = (i64::from(q.min_choices.unwrap()), i64::from(q.max_choices.unwrap()));
            prop_assert!(1 <= min && min <= max && max <= n, "choices {min}..{max} of {n} accepted");
            prop_assert_eq!(min, int("minChoices").unwrap_or(1));
            prop_assert_eq!(max, int("maxChoices").unwrap_or(n));
        }
        QuestionKind::Scale => {
            let (lo, hi) = q.scale().unwrap();
            let ends = SCALE_FLOOR..=SCALE_CEILING;
            prop_assert!(ends.contains(&lo) && lo < hi && ends.contains(&hi), "scale {lo}..{hi} accepted");
            prop_assert_eq!((Some(i64::from(lo)), Some(i64::from(hi))), (int("scaleMin"), int("scaleMax")));
            for (key, label) in [("minLabel", &q.min_label), ("maxLabel", &q.max_label)] {
                match (label, sent.get(key)) {
                    (Some(l), Some(s)) => check_text(l.as_str(), s, END_LABEL.max_chars)?,
                    (None, None) => {}
                    (l, s) => prop_assert!(false, "{key}: stored {l:?}, sent {s:?}"),
                }
            }
        }
        QuestionKind::Schedule => {
            prop_assert_eq!((q.min_choices, q.max_choices, q.scale_min, q.scale_max), (None, None, None, None));
            // Slots, in time order, each once.
            let slots = q.slots();
            prop_assert_eq!(slots.len(), q.options.len(), "options that are no slots accepted: {}", sent);
            prop_assert!(slots.windows(2).all(|w| w[0] < w[1]), "slots out of order accepted: {}", sent);
        }
        QuestionKind::Single | QuestionKind::Ranked => {
            prop_assert_eq!((q.min_choices, q.max_choices, q.scale_min, q.scale_max), (None, None, None, None));
        }
    }
    Ok(())
}

fn request_with(headers: Vec<(String, String)>) -> Request {
    Request {
        method: Method::Get,
        path: "/api/polls/x".into(),
        query: None,
        headers,
        body: Body::Bytes(Default::default()),
        client: IpAddr::V4(Ipv4Addr::LOCALHOST),
    }
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

proptest! {
    #[test]
    fn new_poll_never_panics_on_arbitrary_json(v in arb_json()) {
        match NewPoll::from_json(&v) {
            Ok(p) => check_accepted_poll(&p, &v)?,
            Err(errs) => check_errors(&errs, &v)?,
        }
    }

    #[test]
    fn new_poll_checks_every_bound(v in near_valid_poll(false)) {
        match NewPoll::from_json(&v) {
            Ok(p) => check_accepted_poll(&p, &v)?,
            Err(errs) => check_errors(&errs, &v)?,
        }
    }

    #[test]
    fn poll_patch_never_panics(v in prop_oneof![arb_json(), near_valid_patch()]) {
        match PollPatch::from_json(&v) {
            Ok(p) => {
                let obj = v.as_object().expect("an accepted patch is an object");
                prop_assert!(!obj.is_empty());
                prop_assert!(obj.keys().all(|k| PollPatch::FIELDS.contains(&k.as_str())));
                prop_assert_eq!(p.closed, obj.get("closed").map(|b| b.as_bool().unwrap()));
                prop_assert_eq!(p.duplicate_check, obj.get("duplicateCheck").map(|c| DuplicateCheck::from_code(c.as_str().unwrap()).unwrap()));
                prop_assert_eq!(p.vote_changes, obj.get("voteChanges").map(|b| b.as_bool().unwrap()));
                prop_assert_eq!(p.expiry.map(|e| i64::from(e.get())), obj.get("expiryDays").map(|e| e.as_i64().or_else(|| e.as_f64().map(|f| f as i64)).unwrap()));
                if let Some(t) = obj.get("translations") {
                    let t = t.as_object().unwrap();
                    prop_assert_eq!(p.translations.len(), t.len());
                    for (lang, version) in &p.translations {
                        let sent = &t[lang.code()];
                        match version {
                            None => prop_assert!(sent.is_null()),
                            Some(ver) => {
                                check_text(ver.title.as_str(), &sent["title"], TITLE.max_chars)?;
                                prop_assert!((QUESTIONS.min..=QUESTIONS.max).contains(&ver.questions.len()));
                                // No options (a scale's, checked against the poll later) or 2 to 12.
                                for (q, sq) in ver.questions.iter().zip(sent["questions"].as_array().unwrap()) {
                                    prop_assert!(q.options.is_empty() || (OPTIONS.min..=OPTIONS.max).contains(&q.options.len()));
                                    prop_assert_eq!(q.options.len(), sq.get("options").map_or(0, |o| o.as_array().unwrap().len()));
                                    for (key, label) in [("minLabel", &q.min_label), ("maxLabel", &q.max_label)] {
                                        match (label, sq.get(key)) {
                                            (Some(l), Some(s)) => check_text(l.as_str(), s, END_LABEL.max_chars)?,
                                            (None, None) => {}
                                            (l, s) => prop_assert!(false, "{key}: stored {l:?}, sent {s:?}"),
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            Err(errs) => check_errors(&errs, &v)?,
        }
    }

    #[test]
    fn bearer_never_panics_and_returns_a_clean_token(value in prop_oneof![
        any::<String>(),
        "[ \t]{0,2}(Bearer|bearer|BEARER|Basic|Token|)[ \t]{0,3}[A-Za-z0-9_~+/=. \t-]{0,50}",
    ]) {
        let req = request_with(vec![("authorization".into(), value.clone())]);
        match req.bearer() {
            Ok(token) => {
                prop_assert!(!token.is_empty());
                prop_assert!(!token.contains(' '));
                prop_assert_eq!(token, token.trim());
                prop_assert!(value.contains(token));
                let scheme = value.trim().split_once(' ').unwrap().0;
                prop_assert!(scheme.eq_ignore_ascii_case("bearer"), "scheme {scheme:?} accepted");
            }
            Err(f) => prop_assert!(f == AuthFailure::Malformed, "{f:?} for a present header"),
        }
    }

    #[test]
    fn bearer_accepts_every_well_formed_token(
        scheme in "[Bb][Ee][Aa][Rr][Ee][Rr]",
        token in "[A-Za-z0-9_-]{1,64}",
        pad in " {0,3}",
        name in prop::sample::select(vec!["authorization", "Authorization", "AUTHORIZATION"]),
    ) {
        let req = request_with(vec![(name.into(), format!("{pad}{scheme} {token}{pad}"))]);
        prop_assert_eq!(req.bearer(), Ok(token.as_str()));
        let none = request_with(vec![]);
        prop_assert_eq!(none.bearer(), Err(AuthFailure::Missing));
    }

    #[test]
    fn poll_id_parse_accepts_exactly_its_shape(s in prop_oneof![
        any::<String>(),
        "[A-Za-z0-9_-]{15,17}",
        "[A-Za-z0-9_./%+=-]{16}",
        prop::collection::vec(prop_oneof![prop::char::range('a', 'z'), Just('é')], 15..=16).prop_map(String::from_iter),
    ]) {
        let shaped = s.len() == POLL_ID_LEN
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        match PollId::parse(&s) {
            Some(id) => {
                prop_assert!(shaped, "{s:?} accepted");
                prop_assert_eq!(id.as_str(), s.as_str());
            }
            None => prop_assert!(!shaped, "{s:?} refused"),
        }
    }

    #[test]
    fn generated_ids_parse(_n in 0u8..16) {
        let id = PollId::generate().unwrap();
        prop_assert_eq!(PollId::parse(id.as_str()), Some(id.clone()));
    }

    #[test]
    fn parse_net_never_panics_and_round_trips(s in prop_oneof![
        any::<String>(),
        "[ ]?[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}(/[0-9]{1,2})?[ ]?",
        "[0-9a-fA-F:]{2,20}(/[0-9]{1,3})?",
        "::ffff:[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}",
    ]) {
        match parse_net(&s) {
            Ok(net) => {
                let again = parse_net(&net.to_string()).expect("a parsed network prints parseably");
                prop_assert_eq!(again, net);
                prop_assert!(net.contains(&net.addr()));
            }
            Err(m) => prop_assert!(m.contains("not an IP address or CIDR")),
        }
    }

    #[test]
    fn client_ip_is_the_peer_or_the_last_forwarded_entry(
        peer in prop_oneof![
            any::<[u8; 4]>().prop_map(|b| IpAddr::V4(Ipv4Addr::from(b))),
            any::<[u8; 16]>().prop_map(|b| IpAddr::V6(Ipv6Addr::from(b))),
            Just(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            Just(IpAddr::V6(Ipv6Addr::LOCALHOST)),
            any::<[u8; 4]>().prop_map(|b| IpAddr::V6(Ipv4Addr::from(b).to_ipv6_mapped())),
        ],
        xff in prop::option::of(prop_oneof![
            any::<String>(),
            "([0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}(:[0-9]{1,5})?|\\[[0-9a-f:]{2,12}\\](:[0-9]{1,5})?|[0-9a-f:]{2,20}|unknown|)( ?, ?[0-9.]{1,15}){0,3}",
        ]),
        trust_all in any::<bool>(),
    ) {
        let trusted = if trust_all {
            TrustedProxies::new(vec![parse_net("0.0.0.0/0").unwrap(), parse_net("::/0").unwrap()])
        } else {
            TrustedProxies::loopback()
        };
        let canonical = |ip: IpAddr| match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        let got = client_ip(peer, xff.as_deref(), trusted.trusts(peer));
        // Never an IPv4-mapped IPv6 address: those count as the IPv4 they carry.
        prop_assert_eq!(got, canonical(got));
        if !trusted.trusts(peer) {
            prop_assert_eq!(got, canonical(peer));
        } else if got != canonical(peer) {
            let last = xff.as_deref().unwrap().rsplit(',').next().unwrap().trim();
            let named = IpAddr::from_str(last).ok()
                .or_else(|| last.strip_prefix('[').and_then(|r| r.split(']').next()).and_then(|a| IpAddr::from_str(a).ok()))
                .or_else(|| last.rsplit_once(':').and_then(|(a, _)| IpAddr::from_str(a).ok()));
            prop_assert_eq!(Some(got), named.map(canonical), "{:?} from {:?}", got, xff);
        }
    }

    #[test]
    fn day_parse_never_panics_and_round_trips(s in prop_oneof![
        any::<String>(),
        "[+-]?[0-9]{1,5}-[0-9]{1,2}-[0-9]{1,2}",
        "[0-9]{4}-[0-9]{2}-[0-9]{2}",
        "[0-9 +-]{10}",
    ]) {
        if let Some(d) = Day::parse(&s) {
            prop_assert_eq!(d.to_string(), s);
        }
    }

    #[test]
    fn every_calendar_day_parses(y in 1000i32..=9999, m in 1u8..=12, d in 1u8..=31) {
        let s = format!("{y:04}-{m:02}-{d:02}");
        let days_in_month = match m {
            2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        match Day::parse(&s) {
            Some(day) => {
                prop_assert!(d <= days_in_month, "{s} accepted");
                prop_assert_eq!(day.to_string(), s.clone());
                prop_assert!(day.previous() < day);
                prop_assert_eq!(day.previous().plus_days(1), day);
            }
            None => prop_assert!(d > days_in_month, "{s} refused"),
        }
    }
}

// ---------------------------------------------------------------------------
// The published schema and the validator agree: tests/properties/schema.rs
// ---------------------------------------------------------------------------

#[path = "schema.rs"]
mod schema_agreement;
