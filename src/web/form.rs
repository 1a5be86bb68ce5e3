//! Form bodies and the errors shown next to form fields.
//!
//! Why here: every page form is `application/x-www-form-urlencoded` (or
//! `multipart/form-data` where it carries files, see `multipart.rs`) and every
//! validation rule lives once in `domain`, which reports typed problems
//! ([`Problem`]) at typed field paths. This module reads form bodies and
//! says each problem in the reader's language; the pages map the paths to
//! their own fields.

use crate::domain::Problem;
use crate::error::Error;
use crate::http::Request;
use crate::i18n::Catalogue;

/// The media types a form body may have.
const FORM_TYPES: &[&str] = &["application/x-www-form-urlencoded", "multipart/form-data"];

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
    pub fn parse(req: &Request, upload_limit: usize) -> Result<Form, Error> {
        let bytes = req.body_shared()?;
        match req.media_type().as_deref() {
            // Only multipart bodies may use the upload limit; a urlencoded
            // body admitted under it (e.g. behind a second Content-Type)
            // would cost many times its size once split into pairs.
            Some("application/x-www-form-urlencoded") if bytes.len() > crate::domain::MAX_JSON_BODY => {
                return Err(Error::TooLarge { limit: crate::domain::MAX_JSON_BODY });
            }
            Some("application/x-www-form-urlencoded") => {}
            Some("multipart/form-data") => {
                let content_type = req.header("content-type").unwrap_or("");
                let limits = crate::multipart::Limits::new(upload_limit);
                let parts = crate::multipart::parse(content_type, bytes.clone(), &limits).map_err(|e| match e {
                    crate::multipart::MultipartError::TooLarge => Error::TooLarge { limit: upload_limit },
                    _ => Error::Malformed("The form body could not be read.".into()),
                })?;
                let first = index(&parts.texts);
                return Ok(Form(parts.texts, first, parts.files));
            }
            // An empty body needs no type (e.g. a bare POST from a tool).
            None if bytes.is_empty() => {}
            _ => return Err(Error::UnsupportedMediaType { accepted: FORM_TYPES }),
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

    /// Every value of `name`, in order (a group of checkboxes).
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> {
        self.0.iter().filter(move |(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }

    /// Every text field, name and value, in the order sent (not the files).
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
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

/// A ballot's problem at one question: the question's index and what is
/// wrong, said without its number (the vote form shows none; the summary
/// names the question by its text). `None` for any other problem.
pub fn vote_problem(t: &Catalogue, problem: &Problem) -> Option<(usize, String)> {
    Some(match problem {
        Problem::ChoiceCount { question, min, max } => (*question, (t.vote_err_choice_count)(*min, *max)),
        Problem::RepeatedRank { question } => (*question, t.vote_err_repeated_rank.to_owned()),
        Problem::RankGap { question } => (*question, t.vote_err_rank_gap.to_owned()),
        Problem::OffScale { question, min, max } => (*question, (t.vote_err_off_scale)(*min, *max)),
        Problem::Unanswered { question } => (*question, t.vote_err_unanswered.to_owned()),
        Problem::NoSuchOption { question, .. } => (*question, t.vote_err_no_such_option.to_owned()),
        _ => return None,
    })
}

/// A slot as written in a problem (`2027-01-14T18:30`), in the reader's
/// language.
fn slot_named(t: &Catalogue, slot: &str) -> String {
    crate::domain::DateSlot::parse(slot).map_or_else(|| slot.to_owned(), |s| t.slot(&s))
}

/// A validation problem in the reader's language.
pub fn problem_text(t: &Catalogue, problem: &Problem) -> String {
    match problem {
        Problem::TooLong { max } => (t.err_too_long)(*max),
        Problem::ControlCharacter => t.err_control.to_owned(),
        Problem::BidiControl => t.err_bidi.to_owned(),
        Problem::LineSeparator => t.err_separator.to_owned(),
        Problem::TooManyMarks { max } => (t.err_marks)(*max),
        Problem::Invisible => t.err_invisible.to_owned(),
        Problem::Required | Problem::Blank | Problem::NotAString => t.err_required.to_owned(),
        Problem::Count { list: crate::domain::List::Options, min, max } => (t.err_options_count)(*min, *max),
        Problem::Count { list: crate::domain::List::Questions, min, max } => (t.err_questions_count)(*min, *max),
        // The option named is counted as the form shows them; a page
        // whose form leaves rows out of the body renumbers it first
        // (`create::draft::problems`).
        Problem::DuplicateOption { option } => (t.err_duplicate)(option + 1),
        Problem::LookalikeOption { option } => (t.err_lookalike)(option + 1),
        Problem::NotOneOf(_) | Problem::NotABoolean => t.err_choice.to_owned(),
        Problem::EmptyBallot => t.err_no_answer.to_owned(),
        Problem::NotADay => t.err_not_a_day.to_owned(),
        Problem::NotAfterToday { .. } => t.err_deadline_not_after_today.to_owned(),
        Problem::AfterExpiry { expires_on } => (t.err_deadline_after_expiry)(&t.day(&expires_on.to_string())),
        Problem::ExpiresBeforeDeadline { closes_on } => {
            (t.err_expires_before_deadline)(&t.day(&closes_on.to_string()))
        }
        Problem::IntegerRange { min, max } => (t.err_range)(*min, *max),
        Problem::NotForType { .. } => t.err_not_for_type.to_owned(),
        Problem::ChoiceCount { question, min, max } => (t.err_choice_count)(question + 1, *min, *max),
        Problem::RepeatedRank { question } => (t.err_repeated_rank)(question + 1),
        Problem::RankGap { question } => (t.err_rank_gap)(question + 1),
        Problem::OffScale { question, min, max } => (t.err_off_scale)(question + 1, *min, *max),
        Problem::Unanswered { question } => (t.err_unanswered)(question + 1),
        Problem::NoSuchOption { question, .. } => (t.err_no_such_option)(question + 1),
        Problem::TooManyInvites { issued, max } => (t.err_too_many_invites)(*issued, *max),
        Problem::NotASlot => t.err_not_a_slot.to_owned(),
        Problem::SlotOutOfOrder { previous } => (t.err_slot_order)(&slot_named(t, previous)),
        Problem::UnknownTimeZone => t.err_time_zone.to_owned(),
        Problem::FixedByResponses => t.err_fixed_by_responses.to_owned(),
        // A translator left a scale's end label blank.
        Problem::EndLabelUnlikePoll { expected: true } => t.err_required.to_owned(),
        // No form of ours can send these: whoever built the request gets
        // the general words.
        Problem::NotAnObject
        | Problem::NotAStringList
        | Problem::NotAQuestionList
        | Problem::UnknownField { .. }
        | Problem::UnknownLanguage
        | Problem::NothingToChange { .. }
        | Problem::NotKeyedByLanguage
        | Problem::NoLanguage
        | Problem::OwnLanguage
        | Problem::QuestionsUnlikePoll { .. }
        | Problem::OptionsUnlikePoll { .. }
        | Problem::InvalidBody
        | Problem::NoSuchQuestion
        | Problem::BallotLength { .. }
        | Problem::WrongAnswerKind { .. }
        | Problem::RepeatedChoice { .. }
        // The admin form shows end-label fields exactly where the poll has them.
        | Problem::EndLabelUnlikePoll { expected: false }
        // The forms send only `resultsVisibility`, never both fields.
        | Problem::DisagreesWithVisibility => t.err_generic.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Lang, NewPoll};
    use crate::i18n::catalogue;
    use serde_json::json;

    /// Every problem a creation form can cause has a specific text in every
    /// language (the vague "not valid" is for requests no form sends).
    #[test]
    fn every_problem_of_a_form_has_a_specific_translation() {
        let q = |label: serde_json::Value, options: serde_json::Value| json!({"label": label, "options": options});
        let bodies = [
            json!({"title": "x".repeat(201), "lang": "en", "expiryDays": 7, "questions": [q(json!("a"), json!(["a", "b"]))]}),
            json!({"title": "a\tb", "lang": "en", "expiryDays": 7, "questions": [q(json!("a"), json!(["a", "b"]))]}),
            json!({"title": " ", "lang": "xx", "expiryDays": 8, "resultsPublic": "yes", "questions": []}),
            json!({"title": "t", "lang": "en", "expiryDays": 7, "questions": [q(json!("a"), json!(["a"]))]}),
            json!({"title": "t", "lang": "en", "expiryDays": 7, "questions": [q(json!(""), json!(["a", "a"]))]}),
            json!({"lang": "en", "expiryDays": 7, "questions": [q(json!("a"), json!(["a", "b"]))]}),
            json!({"title": "a\u{2028}b", "lang": "en", "expiryDays": 7, "questions": [q(json!("a\u{2029}"), json!(["Caf\u{e9}", "Cafe\u{301}"]))]}),
            json!({"title": format!("Z{}", "\u{351}".repeat(190)), "lang": "en", "expiryDays": 7, "questions": [q(json!("a"), json!(["Pizza", "\u{420}izza", "Ye\u{200b}s", "Yes"]))]}),
        ];
        for lang in Lang::ALL {
            let t = catalogue(lang);
            let mut seen = 0;
            for body in &bodies {
                for e in NewPoll::from_json(body).unwrap_err() {
                    assert_ne!(problem_text(t, &e.problem), t.err_generic, "{lang:?} {} {}", e.path, e.problem);
                    seen += 1;
                }
            }
            assert!(seen >= 15, "{seen}");
        }
        let en = catalogue(Lang::En);
        assert_eq!(problem_text(en, &Problem::DuplicateOption { option: 0 }), (en.err_duplicate)(1));
        assert_eq!(problem_text(en, &Problem::LookalikeOption { option: 2 }), (en.err_lookalike)(3));
        assert_eq!(problem_text(en, &Problem::TooManyMarks { max: 8 }), (en.err_marks)(8));
        assert_eq!(problem_text(en, &Problem::LineSeparator), en.err_separator);
        let options = Problem::Count { list: crate::domain::List::Options, min: 2, max: 12 };
        assert_eq!(problem_text(en, &options), (en.err_options_count)(2, 12));
        let questions = Problem::Count { list: crate::domain::List::Questions, min: 1, max: 20 };
        assert_eq!(problem_text(en, &questions), (en.err_questions_count)(1, 20));
    }

    /// The vote form's range problems and a blank end label of a scale's
    /// language version are said in the reader's words, not the vague ones.
    #[test]
    fn ballot_and_version_problems_have_their_own_words() {
        for lang in Lang::ALL {
            let t = catalogue(lang);
            for p in [
                Problem::NoSuchOption { question: 0, option: 7 },
                Problem::OffScale { question: 1, min: 1, max: 5 },
                Problem::RankGap { question: 2 },
                Problem::EndLabelUnlikePoll { expected: true },
            ] {
                assert_ne!(problem_text(t, &p), t.err_generic, "{lang:?} {p}");
            }
        }
        let en = catalogue(Lang::En);
        assert_eq!(problem_text(en, &Problem::EndLabelUnlikePoll { expected: true }), en.err_required);
    }

    #[test]
    fn forms_keep_the_first_value_of_a_name() {
        let f = Form::from_pairs(&[("a", "1"), ("a", "2")]);
        assert_eq!(f.get("a"), Some("1"));
        assert_eq!(f.text("b"), "");
    }
}
