//! Request bodies a test sends: valid JSON poll bodies to start from,
//! JSON-pointer edits to break them one field at a time, and the one-time
//! codes an HTML form needs (read from the page that carries the form).

use serde_json::{Value, json};

use super::Server;

/// A valid poll creation body: two questions, private results.
pub fn valid_poll_json() -> Value {
    json!({
        "title": "Team lunch",
        "lang": "en",
        "expiryDays": 30,
        "resultsPublic": false,
        "questions": [
            {"type": "single", "label": "Where shall we eat?", "options": ["Pizza", "Sushi", "Salad"]},
            {"type": "single", "label": "Which day?", "options": ["Monday", "Friday"]}
        ]
    })
}

/// `n` valid questions with `options` options each.
pub fn questions(n: usize, options: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| {
                json!({
                    "type": "single",
                    "label": format!("Question {i}"),
                    "options": (0..options).map(|j| format!("Option {j}")).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

/// A translation matching `valid_poll_json()` (2 questions: 3 + 2 options).
pub fn valid_translation() -> Value {
    json!({
        "title": "Déjeuner d'équipe",
        "questions": [
            {"label": "Où mangeons-nous ?", "options": ["Pizza", "Sushis", "Salade"]},
            {"label": "Quel jour ?", "options": ["Lundi", "Vendredi"]}
        ]
    })
}

/// Copy of `v` with the JSON pointer `ptr` set to `value` (parent must exist).
pub fn with(mut v: Value, ptr: &str, value: Value) -> Value {
    let (parent, key) = ptr.rsplit_once('/').expect("pointer");
    let target =
        if parent.is_empty() { &mut v } else { v.pointer_mut(parent).unwrap_or_else(|| panic!("no parent {parent}")) };
    match target {
        Value::Object(map) => {
            map.insert(key.to_string(), value);
        }
        Value::Array(items) => {
            let idx: usize = key.parse().expect("array index");
            if idx == items.len() {
                items.push(value);
            } else {
                items[idx] = value;
            }
        }
        other => panic!("cannot set {ptr} in {other}"),
    }
    v
}

/// Copy of `v` with the key at JSON pointer `ptr` removed.
pub fn without(mut v: Value, ptr: &str) -> Value {
    let (parent, key) = ptr.rsplit_once('/').expect("pointer");
    let target =
        if parent.is_empty() { &mut v } else { v.pointer_mut(parent).unwrap_or_else(|| panic!("no parent {parent}")) };
    match target {
        Value::Object(map) => {
            map.remove(key).unwrap_or_else(|| panic!("no key {ptr}"));
        }
        Value::Array(items) => {
            items.remove(key.parse::<usize>().expect("array index"));
        }
        other => panic!("cannot remove {ptr} from {other}"),
    }
    v
}

/// Walk every string in a JSON value, calling `f(path, string)`.
pub fn walk_strings(v: &Value, path: &str, f: &mut dyn FnMut(&str, &str)) {
    match v {
        Value::String(s) => f(path, s),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk_strings(item, &format!("{path}[{i}]"), f);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                walk_strings(item, &format!("{path}.{k}"), f);
            }
        }
        _ => {}
    }
}

/// The value of the first `value="…"` after `attr` (e.g. `name="once"` or
/// `id="…"`) in a page; panics if the page has no such input.
pub fn input_value(html: &str, attr: &str) -> String {
    let start = html.find(attr).unwrap_or_else(|| panic!("no {attr} in page:\n{html}"));
    let rest = &html[start..];
    let v = rest.find("value=\"").expect("value attribute") + 7;
    let end = rest[v..].find('"').expect("end of value");
    rest[v..v + end].replace("&amp;", "&")
}

/// The one-time code of a fresh creation form.
pub fn once(server: &Server) -> String {
    input_value(&server.get("/").text(), "name=\"once\"")
}

/// The one-time ballot code of a share page, if it has a vote form.
pub fn ballot_code(html: &str) -> Option<String> {
    html.split("name=\"ballot\"")
        .nth(1)
        .and_then(|rest| rest.split("value=\"").nth(1))
        .and_then(|rest| rest.split('"').next())
        .map(str::to_owned)
}
