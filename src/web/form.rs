//! Form bodies and the errors shown next to form fields.
//!
//! Why here: every page form is `application/x-www-form-urlencoded` (or
//! `multipart/form-data` where it carries files, see `multipart.rs`) and every
//! validation rule lives once in `domain.rs`, which reports problems as field
//! paths (`questions[2].options[1]`) with English messages. This module reads
//! form bodies, and turns those messages into the reader's language; the
//! pages map the paths to their own fields.

use crate::domain::{OPTIONS, QUESTIONS};
use crate::error::Error;
use crate::http::Request;
use crate::i18n::Catalogue;

/// Why a form body could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum FormError {
    TooLarge,
    /// Neither `application/x-www-form-urlencoded` nor `multipart/form-data`.
    WrongType,
    /// A multipart body that could not be split.
    Malformed,
}

/// The decoded name/value pairs of a form body, in order, with an index of
/// each name's first value (a form is looked up hundreds of times; scanning
/// a large hostile body for each lookup would cost a request seconds).
pub struct Form(Vec<(String, String)>, std::collections::HashMap<String, usize>, Vec<(String, bytes::Bytes)>);

fn index(pairs: &[(String, String)]) -> std::collections::HashMap<String, usize> {
    let mut first = std::collections::HashMap::with_capacity(pairs.len());
    for (i, (k, _)) in pairs.iter().enumerate() {
        first.entry(k.clone()).or_insert(i);
    }
    first
}

impl Form {
    /// Reads a urlencoded or multipart body; `upload_limit` bounds the latter
    /// (the connection layer has already bounded what it read).
    pub fn parse(req: &Request, upload_limit: usize) -> Result<Form, FormError> {
        let bytes = match req.body_shared() {
            Ok(b) => b,
            Err(Error::TooLarge { .. }) => return Err(FormError::TooLarge),
            Err(_) => return Err(FormError::WrongType),
        };
        match req.media_type().as_deref() {
            // Only multipart bodies may use the upload limit; a urlencoded
            // body admitted under it (e.g. behind a second Content-Type)
            // would cost many times its size once split into pairs.
            Some("application/x-www-form-urlencoded") if bytes.len() > crate::domain::MAX_JSON_BODY => {
                return Err(FormError::TooLarge);
            }
            Some("application/x-www-form-urlencoded") => {}
            Some("multipart/form-data") => {
                let content_type = req.header("content-type").unwrap_or("");
                let limits = crate::multipart::Limits::new(upload_limit);
                let parts = crate::multipart::parse(content_type, bytes.clone(), &limits).map_err(|e| match e {
                    crate::multipart::MultipartError::TooLarge => FormError::TooLarge,
                    _ => FormError::Malformed,
                })?;
                let first = index(&parts.texts);
                return Ok(Form(parts.texts, first, parts.files));
            }
            // An empty body needs no type (e.g. a bare POST from a tool).
            None if bytes.is_empty() => {}
            _ => return Err(FormError::WrongType),
        }
        let pairs: Vec<(String, String)> =
            form_urlencoded::parse(bytes).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        let first = index(&pairs);
        Ok(Form(pairs, first, Vec::new()))
    }

    #[cfg(test)]
    pub fn from_pairs(pairs: &[(&str, &str)]) -> Form {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let first = index(&pairs);
        Form(pairs, first, Vec::new())
    }

    /// The first file sent under `name`, if one was chosen.
    pub fn file(&self, name: &str) -> Option<&[u8]> {
        self.2.iter().find(|(k, _)| k == name).map(|(_, b)| &b[..])
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.1.get(name).and_then(|&i| self.0.get(i)).map(|(_, v)| v.as_str())
    }

    /// The first value of `name`, or "".
    pub fn text(&self, name: &str) -> String {
        self.get(name).unwrap_or("").to_owned()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }
}

/// Problems to show on a form: per field (by HTML id, with the field's name
/// for the summary at the top) and for the form as a whole.
#[derive(Default, Debug)]
pub struct Problems {
    pub fields: Vec<FieldProblem>,
    pub general: Vec<String>,
}

#[derive(Debug)]
pub struct FieldProblem {
    pub id: String,
    pub name: String,
    pub message: String,
}

impl Problems {
    pub fn field(&mut self, id: impl Into<String>, name: impl Into<String>, message: impl Into<String>) {
        self.fields.push(FieldProblem { id: id.into(), name: name.into(), message: message.into() });
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.general.is_empty()
    }

    /// The messages for the field with HTML id `id`.
    pub fn of(&self, id: &str) -> Vec<&str> {
        self.fields.iter().filter(|f| f.id == id).map(|f| f.message.as_str()).collect()
    }
}

/// A `domain.rs` validation message in the reader's language. `path` tells
/// which list a count message is about.
pub fn localize(t: &Catalogue, path: &str, message: &str) -> String {
    if let Some(rest) = message.strip_prefix("must be at most ")
        && let Some(n) = rest.split(' ').next().and_then(|n| n.parse().ok())
    {
        return (t.err_too_long)(n);
    }
    if message.contains("control characters") {
        return t.err_control.to_owned();
    }
    if message == "must not be empty" || message == "is required" || message == "must be a string" {
        return t.err_required.to_owned();
    }
    if message.starts_with("must have between") {
        return if path.ends_with("options") {
            (t.err_options_count)(OPTIONS.min, OPTIONS.max)
        } else {
            (t.err_questions_count)(QUESTIONS.min, QUESTIONS.max)
        };
    }
    if message.starts_with("duplicates another option") {
        return t.err_duplicate.to_owned();
    }
    if message.starts_with("must be one of") || message == "must be true or false" {
        return t.err_choice.to_owned();
    }
    t.err_generic.to_owned()
}

/// A `questions[3].options[1].rest` path split into its indexes.
#[derive(Debug, PartialEq, Eq)]
pub enum PathPart<'a> {
    Question(usize, &'a str),
    Other(&'a str),
}

/// Splits `questions[i]…` off `path`; `rest` keeps what follows `]`
/// (such as `.label`, `.options[2]`, or "").
pub fn question_path(path: &str) -> PathPart<'_> {
    let parsed = path.strip_prefix("questions[").and_then(|rest| {
        let (n, rest) = rest.split_once(']')?;
        Some((n.parse().ok()?, rest))
    });
    match parsed {
        Some((i, rest)) => PathPart::Question(i, rest),
        None => PathPart::Other(path),
    }
}

/// `.options[j]` → `Some(j)`.
pub fn option_index(rest: &str) -> Option<usize> {
    rest.strip_prefix(".options[")?.strip_suffix(']')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Lang, NewPoll};
    use crate::i18n::catalogue;
    use serde_json::json;

    /// Every message `domain.rs` produces for a creation body maps to a
    /// specific text: a reworded domain message fails here, not in front of
    /// a reader as a vague "not valid".
    #[test]
    fn every_domain_message_has_a_specific_translation() {
        let en = catalogue(Lang::En);
        let q = |label: serde_json::Value, options: serde_json::Value| json!({"label": label, "options": options});
        let bodies = [
            json!({"title": "x".repeat(201), "lang": "en", "expiryDays": 7, "questions": [q(json!("a"), json!(["a", "b"]))]}),
            json!({"title": "a\tb", "lang": "en", "expiryDays": 7, "questions": [q(json!("a"), json!(["a", "b"]))]}),
            json!({"title": " ", "lang": "xx", "expiryDays": 8, "resultsPublic": "yes", "questions": []}),
            json!({"title": "t", "lang": "en", "expiryDays": 7, "questions": [q(json!("a"), json!(["a"]))]}),
            json!({"title": "t", "lang": "en", "expiryDays": 7, "questions": [q(json!(""), json!(["a", "a"]))]}),
            json!({"lang": "en", "expiryDays": 7, "questions": [q(json!("a"), json!(["a", "b"]))]}),
        ];
        let mut seen = 0;
        for body in bodies {
            for e in NewPoll::from_json(&body).unwrap_err() {
                let text = localize(en, &e.field, &e.message);
                assert_ne!(text, en.err_generic, "{} {}", e.field, e.message);
                seen += 1;
            }
        }
        assert!(seen >= 9, "{seen}");
        assert_eq!(
            localize(en, "questions[0].options", "must have between 2 and 12 items"),
            (en.err_options_count)(2, 12)
        );
        assert_eq!(localize(en, "questions", "must have between 1 and 20 items"), (en.err_questions_count)(1, 20));
    }

    #[test]
    fn question_paths_split() {
        assert_eq!(question_path("questions[3].options[1]"), PathPart::Question(3, ".options[1]"));
        assert_eq!(question_path("questions[0]"), PathPart::Question(0, ""));
        assert_eq!(question_path("title"), PathPart::Other("title"));
        assert_eq!(question_path("questions[x]"), PathPart::Other("questions[x]"));
        assert_eq!(option_index(".options[11]"), Some(11));
        assert_eq!(option_index(".options"), None);
        assert_eq!(option_index(".label"), None);
        let f = Form::from_pairs(&[("a", "1"), ("a", "2")]);
        assert_eq!(f.get("a"), Some("1"));
        assert_eq!(f.text("b"), "");
    }
}
