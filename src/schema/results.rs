//! The results' schemas, one per kind of question (`ChoiceResults`,
//! `RankedResults`, `ScaleResults`, `ScheduleResults`): the shapes
//! `api::json::results` builds, described for the OpenAPI document.
//!
//! Why apart: the document's own module (`schema.rs`) holds the creation
//! and poll schemas and the paths; the results are a family of their own.

use serde_json::{Value, json};

use super::SLOT_PATTERN;
use crate::domain::question::{SCALE_CEILING, SCALE_FLOOR};

/// Per option, in the poll's order: its label, `count_key` (what
/// `description` says) and that count as a percent of `answered`.
fn option_results(count_key: &str, description: &str) -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert("label".into(), json!({"type": "string"}));
    properties.insert(count_key.into(), json!({"type": "integer", "minimum": 0, "description": description}));
    properties.insert("percent".into(), json!({"type": "number", "minimum": 0, "maximum": 100, "description": format!("`{count_key}` as a share of `answered`, in percent, one decimal (0 when nobody answered).")}));
    json!({
        "type": "array",
        "description": "Per option, in the poll's order.",
        "items": {"type": "object", "required": ["label", count_key, "percent"], "properties": properties}
    })
}

/// The results of one question, by type (see `QuestionResults`).
pub(super) fn schemas() -> Vec<(&'static str, Value)> {
    let base = |types: &[&str], extra: &[&str], description: &str, properties: Value| {
        let mut required = vec!["label", "type", "answered"];
        required.extend_from_slice(extra);
        let mut props = json!({
            "label": {"type": "string", "description": "The question, in the poll's own language."},
            "type": {"type": "string", "enum": types},
            "answered": {"type": "integer", "minimum": 0, "description": "Responses that answered this question."}
        });
        if let (Some(p), Some(extra)) = (props.as_object_mut(), properties.as_object()) {
            p.extend(extra.clone());
        }
        json!({"type": "object", "description": description, "required": required, "properties": props})
    };
    let choice = base(
        &["single", "multiple"],
        &["options"],
        "Results of a single- or multiple-choice question: how many responses chose each option. For a multiple-choice question the percents may add up to more than 100 (a voter picks several).",
        json!({
            "options": option_results("count", "Responses that chose this option.")
        }),
    );
    let ranked = base(
        &["ranked"],
        &["options", "pairwise", "ranking", "method"],
        "Results of a ranking question: first preferences per option, the pairwise counts and the ranking they give by the Schulze method.",
        json!({
            "options": option_results("firstChoices", "Responses that ranked this option first."),
            "pairwise": {
                "type": "array",
                "description": "n×n, options in the poll's order: `pairwise[i][j]` is the number of responses that rank option i above option j (an unranked option counts as below every ranked one). The diagonal is 0.",
                "items": {"type": "array", "items": {"type": "integer", "minimum": 0}}
            },
            "ranking": {
                "type": "array",
                "description": "Places, best first, by the Schulze method. Options tied share a place, and the next place is numbered after them (two options sharing place 1 are followed by place 3).",
                "items": {
                    "type": "object",
                    "required": ["place", "options"],
                    "properties": {
                        "place": {"type": "integer", "minimum": 1},
                        "options": {"type": "array", "minItems": 1, "items": {"type": "string"}, "description": "Labels of the options at this place."}
                    }
                }
            },
            "method": {"type": "string", "const": "schulze", "description": "How `ranking` is computed."}
        }),
    );
    let scale = base(
        &["scale"],
        &["distribution", "mean", "median"],
        "Results of a scale question: how many responses gave each value, their mean and median.",
        json!({
            "distribution": {
                "type": "array",
                "description": "Every value from `scaleMin` to `scaleMax`, in order, with how many responses gave it.",
                "items": {
                    "type": "object",
                    "required": ["value", "count"],
                    "properties": {
                        "value": {"type": "integer", "minimum": SCALE_FLOOR, "maximum": SCALE_CEILING},
                        "count": {"type": "integer", "minimum": 0}
                    }
                }
            },
            "mean": {"type": ["number", "null"], "description": "Mean of the values given, two decimals; null when nobody answered."},
            "median": {"type": ["number", "null"], "description": "Middle value (the mean of the two middle ones for an even count); null when nobody answered."}
        }),
    );
    let schedule = base(
        &["schedule"],
        &["slots", "bestFirst"],
        "Results of a scheduling question: per slot how many responses said yes, if need be and no (a response that answered the question and left a slot out said no), the best slots marked.",
        json!({
            "slots": {
                "type": "array",
                "description": "Per slot, in the question's (time) order.",
                "items": {
                    "type": "object",
                    "required": ["slot", "yes", "ifNeedBe", "no", "best"],
                    "properties": {
                        "slot": {"type": "string", "pattern": SLOT_PATTERN, "description": "The slot, as created."},
                        "yes": {"type": "integer", "minimum": 0},
                        "ifNeedBe": {"type": "integer", "minimum": 0},
                        "no": {"type": "integer", "minimum": 0, "description": "`answered` less `yes` and `ifNeedBe`."},
                        "best": {"type": "boolean", "description": "Among the best slots: none has more yes, nor as many yes and more if need be; false for every slot while nobody can come to any."}
                    }
                }
            },
            "bestFirst": {
                "type": "array",
                "items": {"type": "string", "pattern": SLOT_PATTERN},
                "description": "Every slot, best first: most yes, then most if need be, then the earlier slot."
            },
            "timeZone": {"type": "string", "description": "The question's time zone, when it names one."}
        }),
    );
    vec![("ChoiceResults", choice), ("RankedResults", ranked), ("ScaleResults", scale), ("ScheduleResults", schedule)]
}
