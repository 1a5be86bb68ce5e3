//! Validated domain types and the rules that define them.
//!
//! Every bound of the API lives here once, as a constant or a rule value. The
//! validators below and the OpenAPI document (`schema.rs`) are both built from
//! these values, so the published schema and what the server accepts cannot
//! drift apart. Request bodies are parsed into these types at the edge; the
//! rest of the code never re-checks them.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::error::FieldError;

/// Bounds of one kind of user text: at most `max_chars` Unicode scalar values,
/// at least one non-space character, no control characters. Stored trimmed.
#[derive(Clone, Copy, Debug)]
pub struct TextRule {
    pub max_chars: usize,
}

pub const TITLE: TextRule = TextRule { max_chars: 200 };
pub const LABEL: TextRule = TextRule { max_chars: 500 };
pub const OPTION: TextRule = TextRule { max_chars: 200 };

/// Bounds of a list.
#[derive(Clone, Copy, Debug)]
pub struct CountRule {
    pub min: usize,
    pub max: usize,
}

pub const QUESTIONS: CountRule = CountRule { min: 1, max: 20 };
pub const OPTIONS: CountRule = CountRule { min: 2, max: 12 };

/// The only allowed lifetimes of a poll, in days.
pub const EXPIRY_DAYS: [u16; 5] = [7, 30, 90, 365, 730];

/// Largest accepted JSON request body.
pub const MAX_JSON_BODY: usize = 256 * 1024;

/// What counts as blank around a text: Unicode white space plus U+FEFF (the
/// zero-width no-break space), which ECMA-262's `\s` (used by the schema's
/// pattern) counts as blank too, so schema and validator agree.
fn is_blank(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

/// The control characters refused in texts, as an ECMA-262 character class body.
const CONTROL_CLASS: &str = "\\u0000-\\u001F\\u007F-\\u009F";

impl TextRule {
    /// Checks `v` and returns the trimmed text.
    pub fn check(&self, v: &Value) -> Result<String, String> {
        let Some(s) = v.as_str() else {
            return Err("must be a string".into());
        };
        if s.chars().count() > self.max_chars {
            return Err(format!("must be at most {} characters", self.max_chars));
        }
        if s.chars().any(char::is_control) {
            return Err("must not contain control characters (such as line breaks or tabs)".into());
        }
        let t = s.trim_matches(is_blank);
        if t.is_empty() {
            return Err("must not be empty".into());
        }
        Ok(t.to_owned())
    }

    /// The JSON Schema of a text under this rule.
    pub fn schema(&self, description: &str) -> Value {
        json!({
            "type": "string",
            "minLength": 1,
            "maxLength": self.max_chars,
            "pattern": format!("^[^{CONTROL_CLASS}]*[^\\s{CONTROL_CLASS}][^{CONTROL_CLASS}]*$"),
            "description": format!("{description} At most {} characters, not blank, no control characters; surrounding spaces are trimmed.", self.max_chars),
        })
    }
}

impl CountRule {
    pub fn check(&self, len: usize) -> Result<(), String> {
        if len < self.min || len > self.max {
            Err(format!("must have between {} and {} items", self.min, self.max))
        } else {
            Ok(())
        }
    }
}

macro_rules! text_type {
    ($name:ident, $rule:expr, $doc:literal) => {
        #[doc = $doc]
        #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn parse(v: &Value) -> Result<$name, String> {
                $rule.check(v).map($name)
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

text_type!(Title, TITLE, "A poll's title (or a language version's).");
text_type!(Label, LABEL, "A question's text.");
text_type!(OptionText, OPTION, "One answer option of a question.");

/// The languages of polls and of the interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    En,
    Fr,
    De,
    It,
}

impl Lang {
    pub const ALL: [Lang; 4] = [Lang::En, Lang::Fr, Lang::De, Lang::It];

    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Fr => "fr",
            Lang::De => "de",
            Lang::It => "it",
        }
    }

    pub fn from_code(s: &str) -> Option<Lang> {
        Lang::ALL.into_iter().find(|l| l.code() == s)
    }

    pub fn codes() -> Vec<&'static str> {
        Lang::ALL.iter().map(|l| l.code()).collect()
    }

    fn parse(v: &Value) -> Result<Lang, String> {
        v.as_str().and_then(Lang::from_code).ok_or_else(|| format!("must be one of {}", Lang::codes().join(", ")))
    }
}

/// A poll lifetime that is one of [`EXPIRY_DAYS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpiryDays(u16);

impl ExpiryDays {
    pub fn get(self) -> u16 {
        self.0
    }

    fn parse(v: &Value) -> Result<ExpiryDays, String> {
        // JSON Schema counts 7.0 as the integer 7, so the server does too.
        v.as_i64()
            .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 1e6).map(|f| f as i64))
            .ok_or(())
            .and_then(|n| ExpiryDays::try_from(n).map_err(|_| ()))
            .map_err(|()| format!("must be one of {}", expiry_list()))
    }
}

fn expiry_list() -> String {
    EXPIRY_DAYS.map(|d| d.to_string()).join(", ")
}

impl TryFrom<i64> for ExpiryDays {
    type Error = String;
    fn try_from(n: i64) -> Result<ExpiryDays, String> {
        EXPIRY_DAYS
            .into_iter()
            .find(|&d| i64::from(d) == n)
            .map(ExpiryDays)
            .ok_or_else(|| format!("must be one of {}", expiry_list()))
    }
}

/// The kinds of question. Only single choice exists today.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuestionKind {
    Single,
}

impl QuestionKind {
    pub const ALL: [&'static str; 1] = ["single"];

    pub fn as_str(self) -> &'static str {
        match self {
            QuestionKind::Single => "single",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    #[serde(rename = "type")]
    pub kind: QuestionKind,
    pub label: Label,
    pub options: Vec<OptionText>,
}

/// A poll as submitted for creation, fully validated.
#[derive(Clone, Debug)]
pub struct NewPoll {
    pub title: Title,
    pub lang: Lang,
    pub expiry: ExpiryDays,
    pub results_public: bool,
    pub questions: Vec<Question>,
}

/// One language version of a poll: the same structure in another language.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LanguageVersion {
    pub title: Title,
    pub questions: Vec<VersionQuestion>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionQuestion {
    pub label: Label,
    pub options: Vec<OptionText>,
}

/// A validated PATCH: each key is optional, at least one is present.
#[derive(Clone, Debug, Default)]
pub struct PollPatch {
    pub closed: Option<bool>,
    pub expiry: Option<ExpiryDays>,
    /// `None` removes that language version.
    pub translations: BTreeMap<Lang, Option<LanguageVersion>>,
}

/// The structure of an existing poll that a language version must match.
pub struct Shape<'a> {
    pub lang: Lang,
    pub questions: &'a [Question],
}

/// Collects field errors while a body is walked, so a client sees them all at once.
#[derive(Default)]
struct Errors(Vec<FieldError>);

impl Errors {
    fn push(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError::new(field, message));
    }

    /// Records `r`'s error under `field` and returns its value, if any.
    fn take<T>(&mut self, field: impl Into<String>, r: Result<T, String>) -> Option<T> {
        r.map_err(|m| self.push(field, m)).ok()
    }

    fn finish<T>(self, value: Option<T>) -> Result<T, Vec<FieldError>> {
        match value {
            Some(v) if self.0.is_empty() => Ok(v),
            _ if self.0.is_empty() => Err(vec![FieldError::new("", "invalid body")]),
            _ => Err(self.0),
        }
    }
}

fn join(prefix: &str, field: &str) -> String {
    if prefix.is_empty() { field.to_owned() } else { format!("{prefix}.{field}") }
}

/// Checks that `v` is an object with only `allowed` keys and all `required` ones.
fn object<'a>(
    v: &'a Value,
    at: &str,
    allowed: &[&str],
    required: &[&str],
    errs: &mut Errors,
) -> Option<&'a Map<String, Value>> {
    let Some(obj) = v.as_object() else {
        errs.push(at, "must be an object");
        return None;
    };
    for key in obj.keys() {
        if !allowed.contains(&key.as_str()) {
            errs.push(join(at, key), format!("unknown field; allowed: {}", allowed.join(", ")));
        }
    }
    for key in required {
        if !obj.contains_key(*key) {
            errs.push(join(at, key), "is required");
        }
    }
    Some(obj)
}

/// Parses a list of option texts at `at`, distinct after trimming.
fn options(v: &Value, at: &str, errs: &mut Errors) -> Option<Vec<OptionText>> {
    let Some(items) = v.as_array() else {
        errs.push(at, "must be an array of strings");
        return None;
    };
    errs.take(at, OPTIONS.check(items.len()))?;
    let mut out: Vec<OptionText> = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let field = format!("{at}[{i}]");
        match errs.take(field.clone(), OptionText::parse(item)) {
            Some(o) if out.contains(&o) => {
                errs.push(field, "duplicates another option of this question");
                ok = false;
            }
            Some(o) => out.push(o),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

/// Parses the `questions` array; `with_type` says whether items carry `type`
/// (polls) or not (language versions).
fn question_list<T>(
    v: &Value,
    at: &str,
    errs: &mut Errors,
    mut item: impl FnMut(&Value, &str, &mut Errors) -> Option<T>,
) -> Option<Vec<T>> {
    let Some(items) = v.as_array() else {
        errs.push(at, "must be an array of questions");
        return None;
    };
    errs.take(at, QUESTIONS.check(items.len()))?;
    let parsed: Vec<Option<T>> = items.iter().enumerate().map(|(i, q)| item(q, &format!("{at}[{i}]"), errs)).collect();
    parsed.into_iter().collect()
}

fn question(v: &Value, at: &str, errs: &mut Errors) -> Option<Question> {
    let obj = object(v, at, &["type", "label", "options"], &["label", "options"], errs)?;
    let kind = match obj.get("type") {
        None => Some(QuestionKind::Single),
        Some(Value::String(s)) if s == "single" => Some(QuestionKind::Single),
        Some(_) => {
            errs.push(join(at, "type"), format!("must be one of {}", QuestionKind::ALL.join(", ")));
            None
        }
    };
    let label = obj.get("label").and_then(|l| errs.take(join(at, "label"), Label::parse(l)));
    let opts = obj.get("options").and_then(|o| options(o, &join(at, "options"), errs));
    Some(Question { kind: kind?, label: label?, options: opts? })
}

fn version_question(v: &Value, at: &str, errs: &mut Errors) -> Option<VersionQuestion> {
    let obj = object(v, at, &["label", "options"], &["label", "options"], errs)?;
    let label = obj.get("label").and_then(|l| errs.take(join(at, "label"), Label::parse(l)));
    let opts = obj.get("options").and_then(|o| options(o, &join(at, "options"), errs));
    Some(VersionQuestion { label: label?, options: opts? })
}

impl NewPoll {
    pub const FIELDS: [&'static str; 5] = ["title", "lang", "expiryDays", "resultsPublic", "questions"];
    pub const REQUIRED: [&'static str; 4] = ["title", "lang", "expiryDays", "questions"];

    /// Validates a creation body, reporting every invalid field.
    pub fn from_json(v: &Value) -> Result<NewPoll, Vec<FieldError>> {
        let mut errs = Errors::default();
        let parsed = NewPoll::walk(v, &mut errs);
        errs.finish(parsed)
    }

    fn walk(v: &Value, errs: &mut Errors) -> Option<NewPoll> {
        let obj = object(v, "", &NewPoll::FIELDS, &NewPoll::REQUIRED, errs)?;
        let title = obj.get("title").and_then(|t| errs.take("title", Title::parse(t)));
        let lang = obj.get("lang").and_then(|l| errs.take("lang", Lang::parse(l)));
        let expiry = obj.get("expiryDays").and_then(|e| errs.take("expiryDays", ExpiryDays::parse(e)));
        let results_public = match obj.get("resultsPublic") {
            None => Some(false),
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => {
                errs.push("resultsPublic", "must be true or false");
                None
            }
        };
        let questions = obj.get("questions").and_then(|q| question_list(q, "questions", errs, question));
        Some(NewPoll {
            title: title?,
            lang: lang?,
            expiry: expiry?,
            results_public: results_public?,
            questions: questions?,
        })
    }
}

impl LanguageVersion {
    fn walk(v: &Value, at: &str, errs: &mut Errors) -> Option<LanguageVersion> {
        let obj = object(v, at, &["title", "questions"], &["title", "questions"], errs)?;
        let title = obj.get("title").and_then(|t| errs.take(join(at, "title"), Title::parse(t)));
        let questions =
            obj.get("questions").and_then(|q| question_list(q, &join(at, "questions"), errs, version_question));
        Some(LanguageVersion { title: title?, questions: questions? })
    }

    /// Errors where this version's structure differs from the poll's.
    fn mismatches(&self, questions: &[Question], at: &str) -> Vec<FieldError> {
        if self.questions.len() != questions.len() {
            return vec![FieldError::new(
                join(at, "questions"),
                format!("must have exactly {} questions, like the poll", questions.len()),
            )];
        }
        self.questions
            .iter()
            .zip(questions)
            .enumerate()
            .filter(|(_, (mine, theirs))| mine.options.len() != theirs.options.len())
            .map(|(i, (_, theirs))| {
                FieldError::new(
                    format!("{at}.questions[{i}].options"),
                    format!("must have exactly {} options, like the poll's question", theirs.options.len()),
                )
            })
            .collect()
    }
}

impl PollPatch {
    pub const FIELDS: [&'static str; 3] = ["closed", "expiryDays", "translations"];

    /// Validates a PATCH body on its own (types, bounds, languages).
    pub fn from_json(v: &Value) -> Result<PollPatch, Vec<FieldError>> {
        let mut errs = Errors::default();
        let parsed = PollPatch::walk(v, &mut errs);
        errs.finish(parsed)
    }

    fn walk(v: &Value, errs: &mut Errors) -> Option<PollPatch> {
        let obj = object(v, "", &PollPatch::FIELDS, &[], errs)?;
        if !obj.keys().any(|k| PollPatch::FIELDS.contains(&k.as_str())) {
            errs.push("", format!("must contain at least one of {}", PollPatch::FIELDS.join(", ")));
            return None;
        }
        let closed = match obj.get("closed") {
            None => Some(None),
            Some(Value::Bool(b)) => Some(Some(*b)),
            Some(_) => {
                errs.push("closed", "must be true or false");
                None
            }
        };
        let expiry = match obj.get("expiryDays") {
            None => Some(None),
            Some(e) => errs.take("expiryDays", ExpiryDays::parse(e)).map(Some),
        };
        let translations = match obj.get("translations") {
            None => Some(BTreeMap::new()),
            Some(t) => PollPatch::translations(t, errs),
        };
        Some(PollPatch { closed: closed?, expiry: expiry?, translations: translations? })
    }

    fn translations(v: &Value, errs: &mut Errors) -> Option<BTreeMap<Lang, Option<LanguageVersion>>> {
        let Some(obj) = v.as_object() else {
            errs.push("translations", "must be an object keyed by language code");
            return None;
        };
        if obj.is_empty() {
            errs.push("translations", "must name at least one language");
            return None;
        }
        let mut out = BTreeMap::new();
        let mut ok = true;
        for (code, body) in obj {
            let at = format!("translations.{code}");
            let Some(lang) = Lang::from_code(code) else {
                errs.push(at, format!("unknown language; use one of {}", Lang::codes().join(", ")));
                ok = false;
                continue;
            };
            if body.is_null() {
                out.insert(lang, None);
            } else if let Some(version) = LanguageVersion::walk(body, &at, errs) {
                out.insert(lang, Some(version));
            } else {
                ok = false;
            }
        }
        ok.then_some(out)
    }

    /// Checks the patch against the poll it applies to: a language version must
    /// not be in the poll's own language and must match its structure exactly.
    pub fn check_against(&self, shape: &Shape<'_>) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        for (lang, version) in &self.translations {
            let at = format!("translations.{}", lang.code());
            if *lang == shape.lang {
                errors.push(FieldError::new(at, "is the poll's own language; its text cannot be replaced"));
                continue;
            }
            if let Some(v) = version {
                errors.extend(v.mismatches(shape.questions, &at));
            }
        }
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poll() -> Value {
        json!({
            "title": "  Lunch?  ",
            "lang": "en",
            "expiryDays": 7,
            "resultsPublic": true,
            "questions": [{"type": "single", "label": "Where", "options": ["Pizza", "Sushi"]}]
        })
    }

    fn fields(errs: &[FieldError]) -> Vec<&str> {
        errs.iter().map(|e| e.field.as_str()).collect()
    }

    #[test]
    fn valid_poll_is_parsed_and_trimmed() {
        let p = NewPoll::from_json(&poll()).unwrap();
        assert_eq!(p.title.as_str(), "Lunch?");
        assert_eq!(p.expiry.get(), 7);
        assert!(p.results_public);
        assert_eq!(p.questions[0].options.len(), 2);
    }

    #[test]
    fn every_invalid_field_is_reported_with_its_path() {
        let mut v = poll();
        v["title"] = json!("");
        v["lang"] = json!("es");
        v["expiryDays"] = json!(8);
        v["resultsPublic"] = json!("yes");
        v["questions"][0]["options"] = json!(["A", " A "]);
        v["extra"] = json!(1);
        let errs = NewPoll::from_json(&v).unwrap_err();
        assert_eq!(fields(&errs), ["extra", "title", "lang", "expiryDays", "resultsPublic", "questions[0].options[1]"]);
    }

    #[test]
    fn bounds_are_enforced_at_their_edges() {
        let mut v = poll();
        v["title"] = json!("x".repeat(200));
        assert!(NewPoll::from_json(&v).is_ok());
        v["title"] = json!("x".repeat(201));
        assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), ["title"]);
        v["title"] = json!("a\nb");
        assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), ["title"]);

        let mut v = poll();
        let opts: Vec<String> = (0..12).map(|i| format!("o{i}")).collect();
        v["questions"][0]["options"] = json!(opts);
        assert!(NewPoll::from_json(&v).is_ok());
        let opts: Vec<String> = (0..13).map(|i| format!("o{i}")).collect();
        v["questions"][0]["options"] = json!(opts);
        assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), ["questions[0].options"]);

        let mut v = poll();
        let q = v["questions"][0].clone();
        v["questions"] = json!(vec![q.clone(); 20]);
        assert!(NewPoll::from_json(&v).is_ok());
        v["questions"] = json!(vec![q; 21]);
        assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), ["questions"]);
        v["questions"] = json!([]);
        assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), ["questions"]);
    }

    #[test]
    fn non_objects_are_refused() {
        for v in [json!(null), json!([]), json!("x"), json!(3)] {
            assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), [""]);
        }
        let mut v = poll();
        v["questions"] = json!([1]);
        assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), ["questions[0]"]);
    }

    #[test]
    fn patch_needs_a_known_key_and_checks_structure() {
        assert!(PollPatch::from_json(&json!({})).is_err());
        assert!(PollPatch::from_json(&json!({"closed": "no"})).is_err());
        assert!(PollPatch::from_json(&json!({"foo": 1})).is_err());
        let p = PollPatch::from_json(&json!({"closed": false, "expiryDays": 30})).unwrap();
        assert_eq!(p.closed, Some(false));
        assert_eq!(p.expiry.map(ExpiryDays::get), Some(30));

        let base = NewPoll::from_json(&poll()).unwrap();
        let shape = Shape { lang: Lang::En, questions: &base.questions };
        let ok = json!({"translations": {"fr": {"title": "Déjeuner ?", "questions": [{"label": "Où", "options": ["Pizza", "Sushis"]}]}, "de": null}});
        let p = PollPatch::from_json(&ok).unwrap();
        assert!(p.check_against(&shape).is_ok());
        assert_eq!(p.translations.get(&Lang::De), Some(&None));

        let own = json!({"translations": {"en": null}});
        assert!(PollPatch::from_json(&own).unwrap().check_against(&shape).is_err());
        let short = json!({"translations": {"it": {"title": "Pranzo", "questions": [{"label": "Dove", "options": ["Pizza", "Sushi", "Kebab"]}]}}});
        let errs = PollPatch::from_json(&short).unwrap().check_against(&shape).unwrap_err();
        assert_eq!(fields(&errs), ["translations.it.questions[0].options"]);
        assert!(PollPatch::from_json(&json!({"translations": {"es": null}})).is_err());
        assert!(PollPatch::from_json(&json!({"translations": {}})).is_err());
    }
}

/// A poll as stored. The token is only present as its hash.
#[derive(Clone, Debug)]
pub struct Poll {
    pub id: crate::secret::PollId,
    pub token_hash: crate::secret::TokenHash,
    pub title: Title,
    pub lang: Lang,
    pub results_public: bool,
    pub closed: bool,
    pub created_on: crate::day::Day,
    pub expires_on: crate::day::Day,
    pub questions: Vec<Question>,
    pub translations: BTreeMap<Lang, LanguageVersion>,
    /// Media attached through the web form, poll's own first, then by question.
    pub media: Vec<MediaItem>,
}

impl Poll {
    pub fn shape(&self) -> Shape<'_> {
        Shape { lang: self.lang, questions: &self.questions }
    }

    /// The media item shown at `slot`, if any.
    pub fn media_at(&self, slot: Slot) -> Option<&MediaItem> {
        self.media.iter().find(|m| m.slot == slot)
    }

    /// The poll's text in `lang`: its language version if one exists, else
    /// the original.
    pub fn version(&self, lang: Lang) -> (Lang, &Title, Vec<(&Label, &[OptionText])>) {
        match self.translations.get(&lang) {
            Some(v) if lang != self.lang => {
                (lang, &v.title, v.questions.iter().map(|q| (&q.label, q.options.as_slice())).collect())
            }
            _ => (self.lang, &self.title, self.questions.iter().map(|q| (&q.label, q.options.as_slice())).collect()),
        }
    }
}

/// Counters of a poll's responses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tallies {
    pub total: u64,
    /// votes[question][option]
    pub votes: Vec<Vec<u64>>,
    /// Responses per day, oldest first.
    pub by_day: Vec<(crate::day::Day, u64)>,
}

/// One person's answers: per question, the chosen option's index or `None`
/// when the question was left unanswered. At least one question is answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ballot(Vec<Option<usize>>);

impl Ballot {
    /// Checks `choices` against the poll's questions.
    pub fn new(questions: &[Question], choices: Vec<Option<usize>>) -> Result<Ballot, String> {
        if choices.len() != questions.len() {
            return Err(format!("a ballot must have {} answers", questions.len()));
        }
        for (i, (c, q)) in choices.iter().zip(questions).enumerate() {
            if let Some(o) = c
                && *o >= q.options.len()
            {
                return Err(format!("question {} has no option {}", i + 1, o + 1));
            }
        }
        if choices.iter().all(Option::is_none) {
            return Err("a ballot must answer at least one question".into());
        }
        Ok(Ballot(choices))
    }

    pub fn choices(&self) -> &[Option<usize>] {
        &self.0
    }
}

/// Alt text of an image, or caption of audio or video: required for an
/// image (a picture without a text alternative shuts out blind voters),
/// optional otherwise.
pub const ALT: TextRule = TextRule { max_chars: 300 };

/// Where a media item belongs: to the poll itself, or to one of its questions.
/// A poll has at most one item per slot (a new one replaces the old).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Slot {
    Poll,
    Question(usize),
}

impl Slot {
    /// The slot for a stored `question` column (NULL: the poll's own).
    pub fn from_question(q: Option<i64>) -> Option<Slot> {
        match q {
            None => Some(Slot::Poll),
            Some(i) => usize::try_from(i).ok().filter(|&i| i < QUESTIONS.max).map(Slot::Question),
        }
    }

    pub fn question(self) -> Option<usize> {
        match self {
            Slot::Poll => None,
            Slot::Question(i) => Some(i),
        }
    }
}

/// Checks an alt text or caption for a media item of `kind`; returns it trimmed.
pub fn check_alt(kind: crate::media::Kind, text: &str) -> Result<String, String> {
    let trimmed = text.trim_matches(is_blank);
    if trimmed.is_empty() {
        return if kind == crate::media::Kind::Image { Err("is required".into()) } else { Ok(String::new()) };
    }
    ALT.check(&Value::String(trimmed.to_owned()))
}

/// A media item of a poll, as listed; its bytes are read only when served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaItem {
    pub id: crate::secret::MediaId,
    pub slot: Slot,
    pub kind: crate::media::Kind,
    pub mime: String,
    pub size: u64,
    pub sha256: [u8; 32],
    pub alt: String,
    pub width: Option<u32>,
    pub height: Option<u32>,
}

/// A cleaned upload about to be stored with its poll.
#[derive(Clone, Debug)]
pub struct NewMedia {
    pub id: crate::secret::MediaId,
    pub slot: Slot,
    pub clean: std::sync::Arc<crate::media::Clean>,
    /// Checked with [`check_alt`].
    pub alt: String,
}
