//! The published OpenAPI `NewPoll` schema and `NewPoll::from_json` agree:
//! on the near-valid bodies of the strategies in `properties.rs`, on every
//! combination of the fields a rule between fields relates, and on the
//! deliberate gaps, pinned. A part of `tests/properties/parsers.rs` of its own, so
//! that the schema's verdicts (one `python3` with `jsonschema_rs` per batch)
//! sit apart from the parser properties.

use super::*;

/// The verdicts of the published `#/components/schemas/NewPoll` (the document
/// `GET /api` serves, its `$ref`s resolved inside it) on `bodies`: valid, and
/// the first errors. Draft 2020-12 with formats, by `jsonschema_rs` (the
/// Python binding of the Rust `jsonschema` crate, which `.ci/run` installs
/// with the OpenAPI tools) in one `python3` process for all of them, through
/// `tests/tools/schema_verdicts.py`; `None` when that is not installed.
fn schema_verdicts(bodies: &[Value]) -> Option<Vec<(bool, Vec<String>)>> {
    let doc = schema::openapi("https://polls.example.org", 10, anonpoll::app::NETWORK_VOTES_PER_DAY);
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": "#/components/schemas/NewPoll",
        "components": doc["components"],
    });
    let dir = tempfile::tempdir().unwrap();
    let (schema_file, bodies_file) = (dir.path().join("schema.json"), dir.path().join("bodies.jsonl"));
    std::fs::write(&schema_file, root.to_string()).unwrap();
    std::fs::write(&bodies_file, bodies.iter().map(|b| format!("{b}\n")).collect::<String>()).unwrap();
    let out = std::process::Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tools/schema_verdicts.py"))
        .args([&schema_file, &bodies_file])
        .output()
        .ok()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("No module named 'jsonschema_rs'") {
        return None;
    }
    assert!(out.status.success(), "schema_verdicts.py failed: {stderr}");
    let verdicts: Vec<(bool, Vec<String>)> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(verdicts.len(), bodies.len(), "one verdict per body");
    Some(verdicts)
}

/// [`schema_verdicts`], or a visible skip (a failure under `CI=true`).
fn verdicts_or_skip(bodies: &[Value]) -> Option<Vec<(bool, Vec<String>)>> {
    let verdicts = schema_verdicts(bodies);
    if verdicts.is_none() {
        common::skip_or_fail(
            "python3 with jsonschema_rs",
            "the published schema's verdicts; .ci/run installs it (or: pip install jsonschema_rs)",
        );
    }
    verdicts
}

/// Characters on which JSON Schema (ECMA-262 regular expressions) and Rust
/// (`char::is_whitespace`, the Unicode `White_Space` property) disagree about
/// what "blank" means. U+FEFF is `\s` in ECMA-262 but not Unicode white space;
/// the server now trims it too (domain.rs `is_blank`), so the list is empty;
/// it stays as the place to name such a character should one appear.
const WHITESPACE_GAP: [char; 0] = [];

/// Within the generator's domain, a body is schema-valid exactly when the
/// server accepts it. Two deliberate gaps are kept out of the domain:
/// - options must differ after trimming (the server) while `uniqueItems`
///   compares them as sent (JSON Schema cannot express "after trimming"),
///   so generated options differ in their first character;
/// - [`WHITESPACE_GAP`].
///
/// The rules between fields (`resultsPublic` against `resultsVisibility`, a
/// question's `minChoices`, `maxChoices` and `scaleMax` against its other
/// fields) are inside the domain: the schema states them (`dependentSchemas`,
/// issue 24), and `cross_field_rules_agree_between_schema_and_validator`
/// goes through every combination of their values.
///
/// Numbers: `expiryDays: 7.0` is the integer 7 for both (pinned by
/// `known_gaps_between_schema_and_validator`); the generator sends integers.
/// The bodies are generated first and judged by the schema in one batch
/// (`PROPTEST_CASES` of them, 1024 by default).
#[test]
fn schema_and_validator_agree() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(1024);
    let strategy = near_valid_poll(true).prop_map(outside_known_gaps);
    let mut runner = TestRunner::default();
    let bodies: Vec<Value> = (0..cases).map(|_| strategy.new_tree(&mut runner).unwrap().current()).collect();
    let Some(verdicts) = verdicts_or_skip(&bodies) else { return };
    let disagreements: Vec<String> = bodies
        .iter()
        .zip(&verdicts)
        .filter_map(|(v, (schema_ok, why))| {
            let server = NewPoll::from_json(v);
            (*schema_ok != server.is_ok())
                .then(|| format!("schema says {schema_ok} ({why:?}), server says {:?} for {v}", server.err()))
        })
        .collect();
    assert!(
        disagreements.is_empty(),
        "{} of {cases} bodies judged differently; first: {}",
        disagreements.len(),
        disagreements[0]
    );
}

/// Moves a generated body out of the known gaps: [`WHITESPACE_GAP`]
/// characters become `x`, and non-integer numbers become `null`.
fn outside_known_gaps(v: Value) -> Value {
    match v {
        Value::String(s) => {
            Value::String(s.chars().map(|c| if WHITESPACE_GAP.contains(&c) { 'x' } else { c }).collect())
        }
        Value::Number(n) if n.is_f64() => Value::Null,
        Value::Array(a) => Value::Array(a.into_iter().map(outside_known_gaps).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, x)| (k, outside_known_gaps(x))).collect()),
        other => other,
    }
}

/// Moves a generated body's questions into the rules between their fields,
/// so that more of them are accepted where accepted questions of every kind
/// are counted (`generators_reach_both_sides_of_every_validator`); both the
/// schema (`dependentSchemas`) and the server state these rules:
/// - a multiple-choice question's `minChoices ≤ maxChoices ≤` its number of
///   options;
/// - a scale's `scaleMin < scaleMax`.
///
/// Only values within their own bounds (and a list of options of an
/// accepted length) are moved, to the nearest value within the rule; any
/// other is refused as it is.
fn within_cross_field_rules(mut v: Value) -> Value {
    let Some(questions) = v.get_mut("questions").and_then(Value::as_array_mut) else { return v };
    for q in questions.iter_mut().filter_map(Value::as_object_mut) {
        let int = |q: &Map<String, Value>, key: &str, lo: i64, hi: i64| {
            q.get(key).and_then(Value::as_i64).filter(|n| (lo..=hi).contains(n))
        };
        let options = q.get("options").and_then(Value::as_array).map(|a| a.len());
        if let Some(n) = options.filter(|n| (OPTIONS.min..=OPTIONS.max).contains(n)).map(|n| n as i64) {
            let max_ok = OPTIONS.max as i64;
            let min = int(q, "minChoices", 1, max_ok).map(|m| m.min(n));
            if let Some(m) = min {
                q.insert("minChoices".into(), json!(m));
            }
            if let Some(m) = int(q, "maxChoices", 1, max_ok) {
                q.insert("maxChoices".into(), json!(m.clamp(min.unwrap_or(1), n)));
            }
        }
        let (floor, ceiling) = (i64::from(SCALE_FLOOR), i64::from(SCALE_CEILING));
        if let (Some(lo), Some(hi)) = (int(q, "scaleMin", floor, ceiling - 1), int(q, "scaleMax", floor + 1, ceiling))
            && hi <= lo
        {
            q.insert("scaleMin".into(), json!(hi - 1));
        }
    }
    v
}

fn valid_body() -> Value {
    json!({
        "title": "Lunch", "lang": "en", "expiryDays": 7,
        "questions": [{"label": "Where", "options": ["Pizza", "Sushi"]}]
    })
}

/// The known gaps, pinned so that a change on either side is noticed (and
/// the documentation updated).
#[test]
fn known_gaps_between_schema_and_validator() {
    let base = valid_body();
    if verdicts_or_skip(std::slice::from_ref(&base)).is_none() {
        return;
    }
    let schema_ok = |v: &Value| schema_verdicts(std::slice::from_ref(v)).unwrap()[0].0;
    assert!(schema_ok(&base) && NewPoll::from_json(&base).is_ok());

    // Options equal after trimming: unique for the schema, duplicates for the server.
    let mut v = base.clone();
    v["questions"][0]["options"] = json!(["Pizza", " Pizza"]);
    assert!(schema_ok(&v), "uniqueItems compares options as sent");
    assert!(NewPoll::from_json(&v).is_err(), "the server compares options after trimming");

    // U+FEFF alone: blank for ECMA-262 `\s`; the server trims it as well.
    let mut v = base.clone();
    v["title"] = json!("\u{feff}");
    let (s, r) = (schema_ok(&v), NewPoll::from_json(&v).is_ok());
    assert!(!s && !r, "U+FEFF title: schema {s}, server {r}: both must refuse it");

    // A closing day is a day for the schema; after today and not after the
    // expiry only for the server (the date of the request).
    let mut v = base.clone();
    v["closesOn"] = json!("2000-01-01");
    assert!(schema_ok(&v) && NewPoll::from_json(&v).is_ok(), "the day's place is checked at creation, not parsing");

    // Every question type is accepted by both, `type` left out being single.
    let mut v = base.clone();
    v["questions"] = json!([
        {"label": "Where", "options": ["Pizza", "Sushi"]},
        {"type": "single", "label": "When", "options": ["Noon", "One"], "required": true},
        {"type": "multiple", "label": "What", "options": ["A", "B", "C"], "minChoices": 2, "maxChoices": 3},
        {"type": "multiple", "label": "Which", "options": ["A", "B"]},
        {"type": "ranked", "label": "Rank", "options": ["A", "B", "C"]},
        {"type": "scale", "label": "How", "scaleMin": 0, "scaleMax": 10, "minLabel": "bad", "maxLabel": "good"},
        {"type": "scale", "label": "How much", "scaleMin": 1, "scaleMax": 2},
    ]);
    assert!(schema_ok(&v) && NewPoll::from_json(&v).is_ok(), "every type: {v}");

    // A whole number written as a float is the integer to JSON Schema's
    // data model, which cannot tell 7.0 from 7; the server takes only the
    // canonical 7 (issue 24), as the document's description says.
    let mut v = base;
    v["expiryDays"] = json!(7.0);
    let (s, r) = (schema_ok(&v), NewPoll::from_json(&v).is_ok());
    assert!(s && !r, "expiryDays 7.0: schema {s}, server {r}: the schema's model takes it, the server does not");
}

/// The rules between fields the schema states (`dependentSchemas`, issue
/// 24), over every combination of their values, each field also left out:
/// `resultsPublic` beside `resultsVisibility`; a scale's `scaleMin` and
/// `scaleMax`; a multiple-choice question's `minChoices` and `maxChoices`
/// beside 2 to 12 options. The schema and the server give the same verdict
/// on each body, and both sides of every rule are reached.
#[test]
fn cross_field_rules_agree_between_schema_and_validator() {
    let base = valid_body();
    let mut bodies = Vec::new();
    let mut with = |change: &dyn Fn(&mut Value)| {
        let mut v = base.clone();
        change(&mut v);
        bodies.push(v);
    };
    let visibilities: Vec<Option<&str>> =
        std::iter::once(None).chain(ResultsVisibility::codes().into_iter().map(Some)).collect();
    for public in [None, Some(true), Some(false)] {
        for visibility in &visibilities {
            with(&|v| {
                if let Some(p) = public {
                    v["resultsPublic"] = json!(p);
                }
                if let Some(r) = visibility {
                    v["resultsVisibility"] = json!(r);
                }
            });
        }
    }
    for lo in SCALE_FLOOR..SCALE_CEILING {
        for hi in SCALE_FLOOR + 1..=SCALE_CEILING {
            with(&|v| v["questions"] = json!([{"type": "scale", "label": "Q", "scaleMin": lo, "scaleMax": hi}]));
        }
    }
    let choices: Vec<Option<usize>> = std::iter::once(None).chain((1..=OPTIONS.max).map(Some)).collect();
    for n in OPTIONS.min..=OPTIONS.max {
        for min in &choices {
            for max in &choices {
                with(&|v| {
                    let options: Vec<String> = (0..n).map(|i| format!("Option {i}")).collect();
                    let mut q = json!({"type": "multiple", "label": "Q", "options": options});
                    if let Some(m) = min {
                        q["minChoices"] = json!(m);
                    }
                    if let Some(m) = max {
                        q["maxChoices"] = json!(m);
                    }
                    v["questions"] = json!([q]);
                });
            }
        }
    }
    let Some(verdicts) = verdicts_or_skip(&bodies) else { return };
    let mut refused = 0;
    for (v, (schema_ok, why)) in bodies.iter().zip(&verdicts) {
        let server = NewPoll::from_json(v);
        assert_eq!(*schema_ok, server.is_ok(), "schema {schema_ok} ({why:?}), server {:?}: {v}", server.err());
        refused += usize::from(!schema_ok);
    }
    eprintln!("{} bodies, {refused} refused by both", bodies.len());
    // Refused: 4 visibility pairs (true beside three others, false beside
    // `public`); 45 scales (scaleMax at or below scaleMin); per number of
    // options n, 169 - (2n + 1 + n(n+1)/2) of the 13 x 13 choice pairs.
    let multiple: usize = (OPTIONS.min..=OPTIONS.max).map(|n| 169 - (2 * n + 1 + n * (n + 1) / 2)).sum();
    assert_eq!(refused, 4 + 45 + multiple, "of {} bodies", bodies.len());
}

/// The near-valid generators must produce both accepted and refused bodies
/// in good measure, or the properties above would test only one side.
#[test]
fn generators_reach_both_sides_of_every_validator() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let sample = |runner: &mut TestRunner, strategy: &BoxedStrategy<Value>, ok: &dyn Fn(&Value) -> bool| {
        let n = 2000;
        let accepted = (0..n).filter(|_| ok(&strategy.new_tree(runner).unwrap().current())).count();
        (accepted, n)
    };
    let polls = near_valid_poll(true).prop_map(outside_known_gaps).boxed();
    let (a, n) = sample(&mut runner, &polls, &|v| NewPoll::from_json(v).is_ok());
    eprintln!("near-valid polls: {a} of {n} accepted");
    assert!(a * 20 >= n && a * 20 <= n * 19, "near-valid polls: {a} of {n} accepted");
    let bodies: Vec<Value> = (0..n).map(|_| polls.new_tree(&mut runner).unwrap().current()).collect();
    if let Some(verdicts) = verdicts_or_skip(&bodies) {
        let schema = verdicts.iter().filter(|(ok, _)| *ok).count();
        assert!(schema * 20 >= n, "schema-valid polls: {schema} of {n}");
    }
    // Every question type is accepted now and then, multiple-choice and
    // scale questions with their optional fields too.
    let mut kinds: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    let polls = polls.prop_map(within_cross_field_rules).boxed();
    for _ in 0..n {
        if let Ok(p) = NewPoll::from_json(&polls.new_tree(&mut runner).unwrap().current()) {
            for q in &p.questions {
                *kinds.entry(q.kind.as_str()).or_default() += 1;
                if q.required {
                    *kinds.entry("required").or_default() += 1;
                }
                if q.min_label.is_some() {
                    *kinds.entry("minLabel").or_default() += 1;
                }
                if q.min_choices.is_some_and(|m| m > 1) {
                    *kinds.entry("minChoices > 1").or_default() += 1;
                }
            }
        }
    }
    eprintln!("accepted questions: {kinds:?}");
    for kind in QuestionKind::ALL.iter().chain(&["required", "minLabel", "minChoices > 1"]) {
        assert!(kinds.get(kind).copied().unwrap_or(0) >= 10, "accepted {kind} questions: {kinds:?}");
    }
    let patches = near_valid_patch().boxed();
    let (a, n) = sample(&mut runner, &patches, &|v| PollPatch::from_json(v).is_ok());
    eprintln!("near-valid patches: {a} of {n} accepted");
    assert!(a * 20 >= n && a * 20 <= n * 19, "near-valid patches: {a} of {n} accepted");
}
