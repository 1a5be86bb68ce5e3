//! The rules between fields of a poll that JSON Schema 2020-12 can state,
//! written as `dependentSchemas` of the object whose fields they relate (a
//! creation body, and the poll answer, which keeps them), and the list of
//! those it cannot state.
//!
//! Why `dependentSchemas`: the OpenAPI document must state every rule it can
//! (a schema-valid body the server refuses is a lie) and still work
//! in the outside tools tests/operations/openapi_tools.rs runs. Three other forms were tried
//! and each broke one of them (schemathesis 4.32.5, openapi-python-client
//! 0.29.1, openapi-typescript 7.13.0):
//! - `if`/`then`: schemathesis turns it into `anyOf` with `not` and gives up
//!   on POST /api/polls (Schema Error);
//! - `anyOf` on the object itself: openapi-python-client writes Python with a
//!   syntax error, and openapi-typescript's types refuse a plain body (TS2375).
//!
//! A `dependentSchemas` subschema applies only when its field is present,
//! which is when these rules apply; the client generators ignore the keyword
//! (their output is the same byte for byte), and schemathesis generates from
//! it and keeps only bodies the whole schema accepts. JSON Schema cannot
//! compare two values, but each field here takes few: a rule is one `anyOf`
//! branch per value of the field it hangs on, `const` beside the bounds that
//! value sets on the others (no `if` and no `not`).

use serde_json::{Value, json};

use crate::domain::question::{MIN_CHOICES, SCALE_CEILING, SCALE_FLOOR};
use crate::domain::{OPTIONS, QuestionKind, ResultsVisibility};

/// `NewPoll`'s and `Poll`'s rule: `resultsPublic`, when given, is true
/// exactly when `resultsVisibility` (if given too) is `public`.
pub(super) fn new_poll() -> Value {
    let codes = |public: bool| -> Vec<&str> {
        ResultsVisibility::ALL.iter().filter(|v| v.is_public() == public).map(|v| v.as_str()).collect()
    };
    let branch = |public: bool| json!({"properties": {"resultsPublic": {"const": public}, "resultsVisibility": {"enum": codes(public)}}});
    json!({
        "resultsPublic": {
            "description": "`resultsPublic` agrees with `resultsVisibility`: true exactly when it is `public`.",
            "anyOf": [branch(true), branch(false)],
        }
    })
}

/// A question's rules (new, or as the poll answer lists it), for the kinds
/// that have any: a scale's
/// `scaleMin` < `scaleMax`; a multiple-choice question's `minChoices` ≤
/// `maxChoices` and neither above the number of options (a field left out
/// is no bound: `minChoices` defaults to 1, `maxChoices` to the number of
/// options).
pub(super) fn question(kind: QuestionKind) -> Option<Value> {
    match kind {
        QuestionKind::Scale => Some(json!({
            "scaleMin": {
                "description": "`scaleMax` is above `scaleMin`.",
                "anyOf": (SCALE_FLOOR..SCALE_CEILING)
                    .map(|k| json!({"properties": {"scaleMin": {"const": k}, "scaleMax": {"minimum": k + 1}}}))
                    .collect::<Vec<_>>(),
            }
        })),
        QuestionKind::Multiple => {
            let values = || usize::from(MIN_CHOICES)..=OPTIONS.max;
            Some(json!({
                "minChoices": {
                    "description": "`minChoices` is at most `maxChoices` and at most the number of options.",
                    "anyOf": values()
                        .map(|k| json!({"properties": {
                            "minChoices": {"const": k}, "maxChoices": {"minimum": k}, "options": {"minItems": k}
                        }}))
                        .collect::<Vec<_>>(),
                },
                "maxChoices": {
                    "description": "`maxChoices` is at most the number of options.",
                    "anyOf": values()
                        .map(|k| json!({"properties": {"maxChoices": {"const": k}, "options": {"minItems": k}}}))
                        .collect::<Vec<_>>(),
                }
            }))
        }
        QuestionKind::Single | QuestionKind::Ranked | QuestionKind::Schedule => None,
    }
}

/// The document description's paragraph on rules between fields: which the
/// schemas state, and what the server checks that no schema here states.
pub(super) fn description(max_invites: u64) -> String {
    format!(
        "Rules between fields that JSON Schema can state are in the schemas, as `dependentSchemas` (one \
         `anyOf` branch per value): `resultsPublic` beside `resultsVisibility` is true exactly when it is \
         `public`; a scale's `scaleMax` is above its `scaleMin`; `minChoices` ≤ `maxChoices` ≤ the number of \
         options. The server also checks what no schema here states, each refused with 422 at its field: \
         a schedule's slots are days and times that exist, in time order; its `timeZone` is a name of the IANA \
         database; options of one question differ after NFC and trimming and do not look alike (their Unicode TS #39 \
         confusable skeletons differ); no character of a text carries more than {max_marks} combining marks; a \
         text is within its length bound in NFC too; `closesOn` lies after the day of the request and \
         before the poll's expiry; a language version has the poll's structure (questions, options, end \
         labels) and is not in the poll's own language; a poll has at most {max_invites} invite codes in all; \
         an integer is written as one (`5`, not `5.0` or `5e0`, which JSON Schema's data model cannot tell \
         apart).",
        max_marks = crate::domain::MAX_MARKS
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::schema::openapi;

    /// Each rule has one branch for every value its field may take on its
    /// own (an integer's `minimum` to `maximum`, a boolean's two), in order,
    /// and none for any other: a bound changed in the domain cannot leave a
    /// value outside its rule.
    #[test]
    fn every_value_of_a_rules_field_has_its_branch() {
        let doc = openapi("https://polls.example.org", 10, crate::app::NETWORK_VOTES_PER_DAY);
        let schemas = &doc["components"]["schemas"];
        let mut rules = 0;
        for (name, schema) in schemas.as_object().into_iter().flatten() {
            for (field, rule) in schema["dependentSchemas"].as_object().into_iter().flatten() {
                let own = &schema["properties"][field];
                let expected: Vec<_> = match own["type"].as_str() {
                    Some("integer") => {
                        let (lo, hi) = (own["minimum"].as_u64().unwrap(), own["maximum"].as_u64().unwrap());
                        (lo..=hi).map(|k| json!(k)).collect()
                    }
                    Some("boolean") => vec![json!(true), json!(false)],
                    other => panic!("{name}.{field}: a rule on a field of type {other:?}"),
                };
                let consts: Vec<_> =
                    rule["anyOf"].as_array().unwrap().iter().map(|b| b["properties"][field]["const"].clone()).collect();
                assert_eq!(consts, expected, "{name}.{field}");
                rules += 1;
            }
        }
        // resultsPublic; scaleMin; minChoices and maxChoices: each in the
        // creation body and in the poll answer.
        assert_eq!(rules, 8);
    }
}
