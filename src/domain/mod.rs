//! Validated domain types and the rules that define them.
//!
//! Every bound of the API lives here once, as a constant or a rule value. The
//! validators below and the OpenAPI document (`schema.rs`) are both built from
//! these values, so the published schema and what the server accepts cannot
//! drift apart. Request bodies are parsed into these types at the edge; the
//! rest of the code never re-checks them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

pub mod problem;
pub mod results;
pub mod schulze;
pub mod settings;

pub use problem::{Choices, FieldError, FieldPath, Key, List, Problem, Seg};
pub use settings::{DuplicateCheck, ResultsVisibility};

use crate::day::Day;

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
    pub list: List,
}

pub const QUESTIONS: CountRule = CountRule { min: 1, max: 20, list: List::Questions };
pub const OPTIONS: CountRule = CountRule { min: 2, max: 12, list: List::Options };

/// The only allowed lifetimes of a poll, in days.
pub const EXPIRY_DAYS: [u16; 5] = [7, 30, 90, 365, 730];

/// Largest accepted JSON request body.
pub const MAX_JSON_BODY: usize = 256 * 1024;

/// What is trimmed around a text: Unicode white space plus U+FEFF (the
/// zero-width no-break space), which ECMA-262's `\s` (used by the schema's
/// pattern) counts as blank too, so schema and validator agree.
fn is_blank(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

/// The control characters refused in texts, as an ECMA-262 character class body.
const CONTROL_CLASS: &str = "\\u0000-\\u001F\\u007F-\\u009F";

/// The bidirectional embedding, override and isolate controls refused in
/// texts: they can make a poll's text read differently from what is stored.
const BIDI: [(char, char); 2] = [('\u{202a}', '\u{202e}'), ('\u{2066}', '\u{2069}')];

/// Characters that draw a blank yet have no Unicode property saying so
/// (they are symbols, `So`): U+2800 BRAILLE PATTERN BLANK and U+1D159
/// MUSICAL SYMBOL NULL NOTEHEAD. The only two named in the audit that
/// [`is_invisible`]'s properties do not cover.
const BLANK_GLYPHS: [char; 2] = ['\u{2800}', '\u{1d159}'];

/// Whether `c` shows nothing by itself: white space, a default-ignorable
/// code point (Unicode's `Default_Ignorable_Code_Point`: U+200B, U+3164,
/// the tag characters U+E0000–U+E0FFF…), a format character (general
/// category `Cf`: U+FFF9, U+1D173, U+1BCA0, U+13430…) or a blank glyph. The
/// properties come from ICU4X's compiled Unicode data, so a new Unicode
/// version updates them with the crate rather than by hand. A text made only
/// of these is [`Problem::Invisible`]; inside a text they are kept, since
/// there they carry meaning (emoji sequences, right-to-left marks).
pub fn is_invisible(c: char) -> bool {
    use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory};
    use icu_properties::{CodePointMapData, CodePointSetData};
    is_blank(c)
        || BLANK_GLYPHS.contains(&c)
        || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || CodePointMapData::<GeneralCategory>::new().get(c) == GeneralCategory::Format
}

/// The invisible characters of [`is_invisible`] other than white space
/// (the schema's `\s` stands for that), as sorted, merged ranges.
fn invisible_ranges() -> Vec<(u32, u32)> {
    use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory};
    use icu_properties::{CodePointMapData, CodePointSetData};
    let mut all: Vec<(u32, u32)> = CodePointSetData::new::<DefaultIgnorableCodePoint>()
        .iter_ranges()
        .chain(CodePointMapData::<GeneralCategory>::new().iter_ranges_for_value(GeneralCategory::Format))
        .map(|r| (*r.start(), *r.end()))
        .chain(BLANK_GLYPHS.iter().map(|&c| (u32::from(c), u32::from(c))))
        .collect();
    all.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(all.len());
    for (lo, hi) in all {
        match merged.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    merged
}

fn in_ranges(c: char, ranges: &[(char, char)]) -> bool {
    ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// One character of a schema pattern's class: `\uXXXX` in the Basic
/// Multilingual Plane; beyond it the character itself, which ECMA-262 (in
/// Unicode mode, as JSON Schema validators run patterns) and Python's `re`
/// both read as one code point, where each spells an escape its own way.
fn class_char(c: u32) -> String {
    match char::from_u32(c) {
        Some(ch) if c > 0xffff => ch.to_string(),
        _ => format!("\\u{c:04X}"),
    }
}

/// An ECMA-262 character class body for `ranges`.
fn class(ranges: impl IntoIterator<Item = (u32, u32)>) -> String {
    ranges
        .into_iter()
        .map(|(lo, hi)| if lo == hi { class_char(lo) } else { format!("{}-{}", class_char(lo), class_char(hi)) })
        .collect()
}

impl TextRule {
    /// Checks `v` and returns the trimmed text.
    pub fn check(&self, v: &Value) -> Result<String, Problem> {
        let Some(s) = v.as_str() else {
            return Err(Problem::NotAString);
        };
        self.check_text(s)
    }

    /// [`TextRule::check`] for a text that is known to be one (a form field).
    pub fn check_text(&self, s: &str) -> Result<String, Problem> {
        if s.chars().count() > self.max_chars {
            return Err(Problem::TooLong { max: self.max_chars });
        }
        if s.chars().any(char::is_control) {
            return Err(Problem::ControlCharacter);
        }
        if s.chars().any(|c| in_ranges(c, &BIDI)) {
            return Err(Problem::BidiControl);
        }
        let t = s.trim_matches(is_blank);
        if t.is_empty() {
            return Err(Problem::Blank);
        }
        if t.chars().all(is_invisible) {
            return Err(Problem::Invisible);
        }
        Ok(t.to_owned())
    }

    /// The JSON Schema of a text under this rule.
    pub fn schema(&self, description: &str) -> Value {
        let bidi = class(BIDI.iter().map(|&(lo, hi)| (u32::from(lo), u32::from(hi))));
        // The Basic Multilingual Plane only: an astral character in a class
        // breaks regex engines that do not run in Unicode mode (Spectral's
        // JavaScript does not); the astral invisibles are named in words.
        let ignorable =
            class(invisible_ranges().into_iter().filter(|&(lo, _)| lo <= 0xffff).map(|(lo, hi)| (lo, hi.min(0xffff))));
        let allowed = format!("[^{CONTROL_CLASS}{bidi}]");
        let visible = format!("[^\\s{CONTROL_CLASS}{ignorable}]");
        json!({
            "type": "string",
            "minLength": 1,
            "maxLength": self.max_chars,
            "pattern": format!("^{allowed}*{visible}{allowed}*$"),
            "description": format!("{description} At most {} characters, not blank and not made only of invisible characters (spaces, default-ignorable code points such as U+200B, format characters such as U+FFF9 and blank glyphs such as U+2800; beyond the Basic Multilingual Plane, which the pattern does not name, the tags U+E0000–U+E0FFF, U+1D173–U+1D17A, U+13430–U+1343F, U+1BCA0–U+1BCA3 and the like, refused all the same), no control characters and no bidirectional controls (U+202A–U+202E, U+2066–U+2069); surrounding spaces are trimmed.", self.max_chars),
        })
    }
}

impl CountRule {
    pub fn check(&self, len: usize) -> Result<(), Problem> {
        if len < self.min || len > self.max {
            Err(Problem::Count { list: self.list, min: self.min, max: self.max })
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
            pub fn parse(v: &Value) -> Result<$name, Problem> {
                $rule.check(v).map($name)
            }
            /// Parses a text typed in a form field.
            pub fn from_text(s: &str) -> Result<$name, Problem> {
                $rule.check_text(s).map($name)
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

text_type!(Title, TITLE, "A poll's title (or a language version's).");
text_type!(Label, LABEL, "A question's text.");
text_type!(OptionText, OPTION, "One answer option of a question.");

pub mod ballot;
pub mod question;

pub use ballot::{Answer, Ballot, Counter};
pub use question::{EndLabel, Question, QuestionKind, QuestionTexts, VersionQuestion};
use question::{question, version_question};

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

    fn parse(v: &Value) -> Result<Lang, Problem> {
        v.as_str().and_then(Lang::from_code).ok_or(Problem::NotOneOf(Choices::Lang))
    }
}

/// A JSON number written as a whole number: `7`, never `7.0` or `7e0`.
/// JSON Schema's data model cannot tell those apart, but a number has one
/// canonical form here, as every other field does (issue 24): the others
/// are refused like any malformed value, and the schema's descriptions say
/// so.
pub fn whole_number(v: &Value) -> Option<i64> {
    v.as_i64()
}

/// A number sent by a form of ours (an option's index, a rank, a scale's
/// value), in the one form the form writes: ASCII digits without a sign,
/// spaces or leading zeros (`0` itself aside). `+1`, `01` and ` 1` parse as
/// numbers in Rust but are refused, so one answer has one spelling.
pub fn form_number(text: &str) -> Option<usize> {
    let canonical =
        !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) && (text == "0" || !text.starts_with('0'));
    canonical.then(|| text.parse().ok()).flatten()
}

/// A poll lifetime that is one of [`EXPIRY_DAYS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpiryDays(u16);

impl ExpiryDays {
    pub fn get(self) -> u16 {
        self.0
    }

    fn parse(v: &Value) -> Result<ExpiryDays, Problem> {
        whole_number(v).ok_or(Problem::NotOneOf(Choices::ExpiryDays)).and_then(ExpiryDays::try_from)
    }

    /// Parses a number of days typed or chosen in a form.
    pub fn from_text(s: &str) -> Result<ExpiryDays, Problem> {
        form_number(s)
            .and_then(|n| i64::try_from(n).ok())
            .ok_or(Problem::NotOneOf(Choices::ExpiryDays))
            .and_then(ExpiryDays::try_from)
    }
}

impl TryFrom<i64> for ExpiryDays {
    type Error = Problem;
    fn try_from(n: i64) -> Result<ExpiryDays, Problem> {
        EXPIRY_DAYS
            .into_iter()
            .find(|&d| i64::from(d) == n)
            .map(ExpiryDays)
            .ok_or(Problem::NotOneOf(Choices::ExpiryDays))
    }
}

/// A poll as submitted for creation, fully validated.
#[derive(Clone, Debug)]
pub struct NewPoll {
    pub title: Title,
    pub lang: Lang,
    pub expiry: ExpiryDays,
    pub visibility: ResultsVisibility,
    /// The day voting ends, if any (checked by [`NewPoll::check_on`]).
    pub closes_on: Option<Day>,
    pub shuffle_options: bool,
    pub duplicate_check: DuplicateCheck,
    /// Whether a voter gets a receipt with which to change or withdraw
    /// their own ballot while the poll is open (`voteChanges`, default true).
    pub vote_changes: bool,
    pub questions: Vec<Question>,
}

/// One language version of a poll: the same structure in another language.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LanguageVersion {
    pub title: Title,
    pub questions: Vec<VersionQuestion>,
}

/// A validated PATCH: each key is optional, at least one is present.
#[derive(Clone, Debug, Default)]
pub struct PollPatch {
    pub closed: Option<bool>,
    pub expiry: Option<ExpiryDays>,
    pub visibility: Option<ResultsVisibility>,
    /// `Some(None)` removes the deadline.
    pub closes_on: Option<Option<Day>>,
    pub shuffle_options: Option<bool>,
    pub duplicate_check: Option<DuplicateCheck>,
    pub vote_changes: Option<bool>,
    /// `None` removes that language version.
    pub translations: BTreeMap<Lang, Option<LanguageVersion>>,
}

/// The structure of an existing poll that a language version must match.
pub struct Shape<'a> {
    pub lang: Lang,
    pub questions: &'a [Question],
    pub expires_on: Day,
    pub closes_on: Option<Day>,
}

/// Collects field errors while a body is walked, so a client sees them all at once.
#[derive(Default)]
struct Errors(Vec<FieldError>);

impl Errors {
    fn push(&mut self, path: FieldPath, problem: Problem) {
        self.0.push(FieldError { path, problem });
    }

    /// Records `r`'s problem at `path` and returns its value, if any.
    fn take<T>(&mut self, path: FieldPath, r: Result<T, Problem>) -> Option<T> {
        r.map_err(|p| self.push(path, p)).ok()
    }

    fn finish<T>(self, value: Option<T>) -> Result<T, Vec<FieldError>> {
        match value {
            Some(v) if self.0.is_empty() => Ok(v),
            _ if self.0.is_empty() => Err(vec![FieldError::new(FieldPath::root(), Problem::InvalidBody)]),
            _ => Err(self.0),
        }
    }
}

/// Checks that `v` is an object with only `allowed` keys and all `required` ones.
fn object<'a>(
    v: &'a Value,
    at: &FieldPath,
    allowed: &'static [&'static str],
    required: &[Key],
    errs: &mut Errors,
) -> Option<&'a Map<String, Value>> {
    let Some(obj) = v.as_object() else {
        errs.push(at.clone(), Problem::NotAnObject);
        return None;
    };
    for key in obj.keys() {
        if !allowed.contains(&key.as_str()) {
            errs.push(at.name(key), Problem::UnknownField { allowed });
        }
    }
    for key in required {
        if !obj.contains_key(key.name()) {
            errs.push(at.key(*key), Problem::Required);
        }
    }
    Some(obj)
}

/// The value of `key` in `obj`, with its path.
fn field<'a>(obj: &'a Map<String, Value>, at: &FieldPath, key: Key) -> Option<(&'a Value, FieldPath)> {
    obj.get(key.name()).map(|v| (v, at.key(key)))
}

/// Parses a list of option texts at `at`, distinct after trimming.
fn options(v: &Value, at: &FieldPath, errs: &mut Errors) -> Option<Vec<OptionText>> {
    let Some(items) = v.as_array() else {
        errs.push(at.clone(), Problem::NotAStringList);
        return None;
    };
    errs.take(at.clone(), OPTIONS.check(items.len()))?;
    let mut out: Vec<OptionText> = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        match errs.take(at.index(i), OptionText::parse(item)) {
            Some(o) if out.contains(&o) => {
                errs.push(at.index(i), Problem::DuplicateOption);
                ok = false;
            }
            Some(o) => out.push(o),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

/// Parses the `questions` array at `at`, each item with `item`.
fn question_list<T>(
    v: &Value,
    at: &FieldPath,
    errs: &mut Errors,
    mut item: impl FnMut(&Value, &FieldPath, &mut Errors) -> Option<T>,
) -> Option<Vec<T>> {
    let Some(items) = v.as_array() else {
        errs.push(at.clone(), Problem::NotAQuestionList);
        return None;
    };
    errs.take(at.clone(), QUESTIONS.check(items.len()))?;
    let parsed: Vec<Option<T>> = items.iter().enumerate().map(|(i, q)| item(q, &at.index(i), errs)).collect();
    parsed.into_iter().collect()
}

/// `true`/`false` at `key`, or `default` when absent.
fn boolean(obj: &Map<String, Value>, key: Key, errs: &mut Errors) -> Option<Option<bool>> {
    boolean_at(obj, &FieldPath::root(), key, errs)
}

/// [`boolean`] in the object at `at`.
fn boolean_at(obj: &Map<String, Value>, at: &FieldPath, key: Key, errs: &mut Errors) -> Option<Option<bool>> {
    match obj.get(key.name()) {
        None => Some(None),
        Some(Value::Bool(b)) => Some(Some(*b)),
        Some(_) => {
            errs.push(at.key(key), Problem::NotABoolean);
            None
        }
    }
}

impl NewPoll {
    pub const FIELDS: [&'static str; 10] = [
        "title",
        "lang",
        "expiryDays",
        "resultsPublic",
        "resultsVisibility",
        "closesOn",
        "shuffleOptions",
        "duplicateCheck",
        "voteChanges",
        "questions",
    ];
    pub const REQUIRED: [&'static str; 4] = ["title", "lang", "expiryDays", "questions"];
    const REQUIRED_KEYS: [Key; 4] = [Key::Title, Key::Lang, Key::ExpiryDays, Key::Questions];

    /// Validates a creation body, reporting every invalid field.
    pub fn from_json(v: &Value) -> Result<NewPoll, Vec<FieldError>> {
        let mut errs = Errors::default();
        let parsed = NewPoll::walk(v, &mut errs, None);
        errs.finish(parsed)
    }

    /// [`NewPoll::from_json`] with the rules of the day of creation too
    /// ([`NewPoll::check_on`]), so that a body's answer lists every problem
    /// at once: a deadline in the past beside a blank title, say.
    pub fn from_json_on(v: &Value, today: Day) -> Result<NewPoll, Vec<FieldError>> {
        let mut errs = Errors::default();
        let parsed = NewPoll::walk(v, &mut errs, Some(today));
        errs.finish(parsed)
    }

    fn walk(v: &Value, errs: &mut Errors, today: Option<Day>) -> Option<NewPoll> {
        let root = FieldPath::root();
        let obj = object(v, &root, &NewPoll::FIELDS, &NewPoll::REQUIRED_KEYS, errs)?;
        let title = field(obj, &root, Key::Title).and_then(|(t, p)| errs.take(p, Title::parse(t)));
        let lang = field(obj, &root, Key::Lang).and_then(|(l, p)| errs.take(p, Lang::parse(l)));
        let expiry = field(obj, &root, Key::ExpiryDays).and_then(|(e, p)| errs.take(p, ExpiryDays::parse(e)));
        let visibility = settings::visibility(obj, true, errs);
        let closes_on = settings::closes_on(obj, false, errs);
        let shuffle = boolean(obj, Key::ShuffleOptions, errs);
        let duplicate_check = settings::duplicate_check(obj, errs);
        let vote_changes = boolean(obj, Key::VoteChanges, errs);
        let questions = field(obj, &root, Key::Questions).and_then(|(q, p)| question_list(q, &p, errs, question));
        let deadline = closes_on.flatten().flatten().zip(expiry).zip(today);
        if let Some(((day, expiry), today)) = deadline
            && let Err(p) = settings::check_deadline(day, today, today.plus_days(expiry.get()))
        {
            errs.push(Key::ClosesOn.into(), p);
            return None;
        }
        Some(NewPoll {
            title: title?,
            lang: lang?,
            expiry: expiry?,
            visibility: visibility?.unwrap_or_default(),
            closes_on: closes_on?.flatten(),
            shuffle_options: shuffle?.unwrap_or(false),
            duplicate_check: duplicate_check?.unwrap_or_default(),
            vote_changes: vote_changes?.unwrap_or(true),
            questions: questions?,
        })
    }

    /// The rules that depend on the day of creation: a deadline lies after
    /// `today` and before the day the poll will expire.
    pub fn check_on(&self, today: Day) -> Result<(), Vec<FieldError>> {
        match self.closes_on {
            Some(day) => settings::check_deadline(day, today, today.plus_days(self.expiry.get()))
                .map_err(|p| vec![FieldError::new(Key::ClosesOn, p)]),
            None => Ok(()),
        }
    }
}

impl LanguageVersion {
    fn walk(v: &Value, at: &FieldPath, errs: &mut Errors) -> Option<LanguageVersion> {
        let obj = object(v, at, &["title", "questions"], &[Key::Title, Key::Questions], errs)?;
        let title = field(obj, at, Key::Title).and_then(|(t, p)| errs.take(p, Title::parse(t)));
        let questions = field(obj, at, Key::Questions).and_then(|(q, p)| question_list(q, &p, errs, version_question));
        Some(LanguageVersion { title: title?, questions: questions? })
    }

    /// Validates one language version given as JSON (as `pollctl` reads it
    /// from a file), reporting paths under `translations.{lang}`.
    pub fn from_json(v: &Value, lang: Lang) -> Result<LanguageVersion, Vec<FieldError>> {
        let mut errs = Errors::default();
        let parsed = LanguageVersion::walk(v, &FieldPath::from(Key::Translations).lang(lang), &mut errs);
        errs.finish(parsed)
    }

    /// Validates one language version typed in a form: a title, and per
    /// question its label and options. Paths are under `translations.{lang}`,
    /// as for the API.
    pub fn from_texts(
        lang: Lang,
        title: &str,
        questions: &[QuestionTexts],
    ) -> Result<LanguageVersion, Vec<FieldError>> {
        let mut errs = Errors::default();
        let at = FieldPath::from(Key::Translations).lang(lang);
        let title = errs.take(at.key(Key::Title), Title::from_text(title));
        let list = at.key(Key::Questions);
        let mut parsed = Vec::with_capacity(questions.len());
        for (i, texts) in questions.iter().enumerate() {
            let q = list.index(i);
            let label = errs.take(q.key(Key::Label), Label::from_text(&texts.label));
            // A blank end label is one left out (the form always has the field).
            let mut end = |key: Key, text: &str| match text.trim_matches(is_blank) {
                "" => Some(None),
                t => errs.take(q.key(key), EndLabel::from_text(t)).map(Some),
            };
            let ends = end(Key::MinLabel, &texts.min_label).zip(end(Key::MaxLabel, &texts.max_label));
            let opts: Vec<Option<OptionText>> = texts
                .options
                .iter()
                .enumerate()
                .map(|(j, o)| errs.take(q.key(Key::Options).index(j), OptionText::from_text(o)))
                .collect();
            let opts: Option<Vec<OptionText>> = opts.into_iter().collect();
            if let Some(opts) = &opts {
                for (j, o) in opts.iter().enumerate() {
                    if opts[..j].contains(o) {
                        errs.push(q.key(Key::Options).index(j), Problem::DuplicateOption);
                    }
                }
            }
            parsed.push(label.zip(opts).zip(ends).map(|((label, options), (min_label, max_label))| VersionQuestion {
                label,
                options,
                min_label,
                max_label,
            }));
        }
        let parsed: Option<Vec<VersionQuestion>> = parsed.into_iter().collect();
        let version = title.zip(parsed).map(|(title, questions)| LanguageVersion { title, questions });
        errs.finish(version)
    }

    /// Errors where this version's structure differs from the poll's.
    fn mismatches(&self, questions: &[Question], at: &FieldPath) -> Vec<FieldError> {
        let list = at.key(Key::Questions);
        if self.questions.len() != questions.len() {
            return vec![FieldError::new(list, Problem::QuestionsUnlikePoll { expected: questions.len() })];
        }
        self.questions
            .iter()
            .zip(questions)
            .enumerate()
            .flat_map(|(i, (mine, theirs))| question::version_mismatches(mine, theirs, &list.index(i)))
            .map(|(path, problem)| FieldError::new(path, problem))
            .collect()
    }
}

impl PollPatch {
    pub const FIELDS: [&'static str; 8] = [
        "closed",
        "expiryDays",
        "resultsVisibility",
        "closesOn",
        "shuffleOptions",
        "duplicateCheck",
        "voteChanges",
        "translations",
    ];

    /// Validates a PATCH body on its own (types, bounds, languages).
    pub fn from_json(v: &Value) -> Result<PollPatch, Vec<FieldError>> {
        let mut errs = Errors::default();
        let parsed = PollPatch::walk(v, &mut errs);
        errs.finish(parsed)
    }

    /// True when the patch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.closed.is_none()
            && self.expiry.is_none()
            && self.visibility.is_none()
            && self.closes_on.is_none()
            && self.shuffle_options.is_none()
            && self.duplicate_check.is_none()
            && self.vote_changes.is_none()
            && self.translations.is_empty()
    }

    fn walk(v: &Value, errs: &mut Errors) -> Option<PollPatch> {
        let root = FieldPath::root();
        let obj = object(v, &root, &PollPatch::FIELDS, &[], errs)?;
        if !obj.keys().any(|k| PollPatch::FIELDS.contains(&k.as_str())) {
            errs.push(root, Problem::NothingToChange { fields: &PollPatch::FIELDS });
            return None;
        }
        let closed = boolean(obj, Key::Closed, errs);
        let expiry = match field(obj, &root, Key::ExpiryDays) {
            None => Some(None),
            Some((e, p)) => errs.take(p, ExpiryDays::parse(e)).map(Some),
        };
        let translations = match obj.get(Key::Translations.name()) {
            None => Some(BTreeMap::new()),
            Some(t) => PollPatch::translations(t, errs),
        };
        let visibility = settings::visibility(obj, false, errs);
        let closes_on = settings::closes_on(obj, true, errs);
        let shuffle_options = boolean(obj, Key::ShuffleOptions, errs);
        let duplicate_check = settings::duplicate_check(obj, errs);
        let vote_changes = boolean(obj, Key::VoteChanges, errs);
        Some(PollPatch {
            closed: closed?,
            expiry: expiry?,
            visibility: visibility?,
            closes_on: closes_on?,
            shuffle_options: shuffle_options?,
            duplicate_check: duplicate_check?,
            vote_changes: vote_changes?,
            translations: translations?,
        })
    }

    fn translations(v: &Value, errs: &mut Errors) -> Option<BTreeMap<Lang, Option<LanguageVersion>>> {
        let at = FieldPath::from(Key::Translations);
        let Some(obj) = v.as_object() else {
            errs.push(at, Problem::NotKeyedByLanguage);
            return None;
        };
        if obj.is_empty() {
            errs.push(at, Problem::NoLanguage);
            return None;
        }
        let mut out = BTreeMap::new();
        let mut ok = true;
        for (code, body) in obj {
            let Some(lang) = Lang::from_code(code) else {
                errs.push(at.name(code), Problem::UnknownLanguage);
                ok = false;
                continue;
            };
            if body.is_null() {
                out.insert(lang, None);
            } else if let Some(version) = LanguageVersion::walk(body, &at.lang(lang), errs) {
                out.insert(lang, Some(version));
            } else {
                ok = false;
            }
        }
        ok.then_some(out)
    }

    /// Checks the patch against the poll it applies to on `today`: a
    /// language version must not be in the poll's own language and must
    /// match its structure exactly; a deadline lies after today and not
    /// after the poll's expiry (as the patch leaves it).
    pub fn check_against(&self, shape: &Shape<'_>, today: Day) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        let expires_on = self.expiry.map_or(shape.expires_on, |d| today.plus_days(d.get()));
        match self.closes_on {
            Some(Some(day)) => {
                // The poll's own day sent back unchanged (a form that shows
                // it, a client that read the poll) may have passed: only the
                // expiry still bounds it.
                let check = if Some(day) == shape.closes_on {
                    settings::check_before_expiry(day, expires_on)
                } else {
                    settings::check_deadline(day, today, expires_on)
                };
                if let Err(p) = check {
                    errors.push(FieldError::new(Key::ClosesOn, p));
                }
            }
            Some(None) => {}
            // A deadline that stays must still come before the new expiry;
            // one already passed is removed by reopening (see `reopens`).
            None => {
                if let Some(day) = shape.closes_on
                    && day >= expires_on
                    && !self.reopens_past(shape.closes_on, today)
                {
                    errors.push(FieldError::new(Key::ExpiryDays, Problem::ExpiresBeforeDeadline { closes_on: day }));
                }
            }
        }
        for (lang, version) in &self.translations {
            let at = FieldPath::from(Key::Translations).lang(*lang);
            if *lang == shape.lang {
                errors.push(FieldError::new(at, Problem::OwnLanguage));
                continue;
            }
            if let Some(v) = version {
                errors.extend(v.mismatches(shape.questions, &at));
            }
        }
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }

    /// Whether this patch reopens a poll whose deadline (`closes_on`) has
    /// passed on `today` without naming a new one: reopening then removes
    /// the passed deadline (docs/DECISIONS.md), or the poll would stay closed.
    pub fn reopens_past(&self, closes_on: Option<Day>, today: Day) -> bool {
        self.closed == Some(false) && self.closes_on.is_none() && settings::deadline_passed(closes_on, today)
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

    fn fields(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(|e| e.path.to_string()).collect()
    }

    #[test]
    fn valid_poll_is_parsed_and_trimmed() {
        let p = NewPoll::from_json(&poll()).unwrap();
        assert_eq!(p.title.as_str(), "Lunch?");
        assert_eq!(p.expiry.get(), 7);
        assert_eq!(p.visibility, ResultsVisibility::Public);
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
    fn invisible_titles_are_refused_and_so_are_bidi_controls() {
        for blank in ["", " \u{feff}\u{3000}"] {
            assert_eq!(Title::from_text(blank), Err(Problem::Blank), "{blank:?}");
        }
        for invisible in
            ["\u{200b}", "\u{2060}\u{200b} \u{feff}", " \u{200d}\u{fe0f} ", "\u{3164}", "\u{e0020}\u{2800}"]
        {
            assert_eq!(Title::from_text(invisible), Err(Problem::Invisible), "{invisible:?}");
        }
        for bidi in ["abc\u{202e}def", "\u{2066}x\u{2069}", "x\u{202a}"] {
            assert_eq!(Title::from_text(bidi), Err(Problem::BidiControl), "{bidi:?}");
        }
        // Invisible characters inside a text carry meaning (emoji variation
        // selectors, joiners, marks in right-to-left text): kept.
        assert_eq!(
            Title::from_text(" I \u{2764}\u{fe0f} it ").map(|t| t.to_string()),
            Ok("I \u{2764}\u{fe0f} it".into())
        );
        assert_eq!(Title::from_text("\u{200f}שלום").map(|t| t.to_string()), Ok("\u{200f}שלום".into()));
    }

    /// The schema's class of invisible characters is the validator's set:
    /// every code point refused as invisible (white space aside: `\s` in the
    /// pattern) is in one of its ranges, and nothing visible is.
    #[test]
    fn the_schema_pattern_names_exactly_the_invisible_characters() {
        let ranges = invisible_ranges();
        for c in (0..=0x10ffff_u32).filter_map(char::from_u32) {
            if u32::from(c) > 0xffff {
                continue;
            }
            let listed = ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&u32::from(c)));
            assert!(!listed || is_invisible(c), "{:04X} is visible", u32::from(c));
            assert!(listed || is_blank(c) || !is_invisible(c), "{:04X} is left out", u32::from(c));
        }
        let pattern = TITLE.schema("")["pattern"].as_str().unwrap_or_default().to_owned();
        // Within the BMP as \uXXXX; nothing beyond it (see TextRule::schema).
        assert!(pattern.chars().all(|c| u32::from(c) <= 0xffff), "{pattern}");
        assert!(pattern.contains("\\u2800") && pattern.contains("\\uFFF0-\\uFFFB"), "{pattern}");
        assert!(!pattern.contains("\\u{"), "{pattern}");
    }

    #[test]
    fn form_texts_of_a_language_version_are_checked_like_json() {
        let texts = |label: &str, options: &[&str]| QuestionTexts {
            label: label.into(),
            options: options.iter().map(|o| (*o).to_owned()).collect(),
            ..QuestionTexts::default()
        };
        let qs = vec![texts("Où", &["Ici", " Ici "]), texts("", &[])];
        let errs = LanguageVersion::from_texts(Lang::Fr, "x".repeat(201).as_str(), &qs).unwrap_err();
        assert_eq!(
            fields(&errs),
            ["translations.fr.title", "translations.fr.questions[0].options[1]", "translations.fr.questions[1].label"]
        );
        let ok = vec![texts("Où", &["Ici", "Là"])];
        let v = LanguageVersion::from_texts(Lang::Fr, " Déjeuner ", &ok).unwrap();
        assert_eq!(v.title.as_str(), "Déjeuner");
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
        let today = Day::parse("2026-03-10").unwrap();
        let shape =
            Shape { lang: Lang::En, questions: &base.questions, expires_on: today.plus_days(7), closes_on: None };
        let ok = json!({"translations": {"fr": {"title": "Déjeuner ?", "questions": [{"label": "Où", "options": ["Pizza", "Sushis"]}]}, "de": null}});
        let p = PollPatch::from_json(&ok).unwrap();
        assert!(p.check_against(&shape, today).is_ok());
        assert_eq!(p.translations.get(&Lang::De), Some(&None));

        let own = json!({"translations": {"en": null}});
        assert!(PollPatch::from_json(&own).unwrap().check_against(&shape, today).is_err());
        let short = json!({"translations": {"it": {"title": "Pranzo", "questions": [{"label": "Dove", "options": ["Pizza", "Sushi", "Kebab"]}]}}});
        let errs = PollPatch::from_json(&short).unwrap().check_against(&shape, today).unwrap_err();
        assert_eq!(fields(&errs), ["translations.it.questions[0].options"]);
        assert!(PollPatch::from_json(&json!({"translations": {"es": null}})).is_err());
        assert!(PollPatch::from_json(&json!({"translations": {}})).is_err());
    }

    #[test]
    fn a_patch_keeps_the_closing_day_between_today_and_expiry() {
        let day = |s: &str| Day::parse(s).unwrap();
        let base = NewPoll::from_json(&poll()).unwrap();
        let today = day("2026-03-10");
        let shape = Shape {
            lang: Lang::En,
            questions: &base.questions,
            expires_on: day("2026-04-09"),
            closes_on: Some(day("2026-03-20")),
        };
        let check = |body: Value| PollPatch::from_json(&body).unwrap().check_against(&shape, today);
        assert!(check(json!({"closesOn": "2026-04-08"})).is_ok());
        assert_eq!(fields(&check(json!({"closesOn": "2026-04-09"})).unwrap_err()), ["closesOn"]);
        assert!(check(json!({"closesOn": null})).is_ok());
        assert_eq!(fields(&check(json!({"closesOn": "2026-03-10"})).unwrap_err()), ["closesOn"]);
        assert_eq!(fields(&check(json!({"closesOn": "2026-04-10"})).unwrap_err()), ["closesOn"]);
        // Seven days from today ends before the closing day on the 20th...
        let errs = check(json!({"expiryDays": 7})).unwrap_err();
        assert_eq!(errs[0].problem, Problem::ExpiresBeforeDeadline { closes_on: day("2026-03-20") });
        // ...unless the same patch moves or removes it.
        assert!(check(json!({"expiryDays": 7, "closesOn": "2026-03-16"})).is_ok());
        assert!(check(json!({"expiryDays": 7, "closesOn": null})).is_ok());
        // A new expiry is checked against a new closing day.
        assert_eq!(fields(&check(json!({"expiryDays": 7, "closesOn": "2026-03-17"})).unwrap_err()), ["closesOn"]);
        // The poll's own day sent back unchanged passes, even once passed.
        let past = Shape { closes_on: Some(day("2026-03-05")), ..shape };
        let patch = PollPatch::from_json(&json!({"closesOn": "2026-03-05", "resultsVisibility": "public"})).unwrap();
        assert!(patch.check_against(&past, today).is_ok());
        let other = PollPatch::from_json(&json!({"closesOn": "2026-03-06"})).unwrap();
        assert!(other.check_against(&past, today).is_err());

        // Reopening a poll past its closing day removes that day.
        let reopen = PollPatch::from_json(&json!({"closed": false})).unwrap();
        assert!(reopen.reopens_past(Some(today), today));
        assert!(!reopen.reopens_past(Some(day("2026-03-11")), today));
        assert!(
            !PollPatch::from_json(&json!({"closed": false, "closesOn": "2026-03-12"}))
                .unwrap()
                .reopens_past(Some(today), today)
        );
    }

    #[test]
    fn settings_default_as_the_specification_had_them() {
        let p = NewPoll::from_json(
            &json!({"title": "t", "lang": "en", "expiryDays": 7, "questions": [{"label": "q", "options": ["a", "b"]}]}),
        )
        .unwrap();
        assert_eq!((p.visibility, p.closes_on, p.shuffle_options), (ResultsVisibility::Private, None, false));
        let mut v = poll();
        v["closesOn"] = json!("2026-03-12");
        v["shuffleOptions"] = json!(true);
        v["resultsVisibility"] = json!("afterClose");
        v["resultsPublic"] = json!(false);
        let p = NewPoll::from_json(&v).unwrap();
        assert_eq!(
            (p.visibility, p.closes_on, p.shuffle_options),
            (ResultsVisibility::AfterClose, Day::parse("2026-03-12"), true)
        );
        let today = Day::parse("2026-03-10").unwrap();
        assert!(p.check_on(today).is_ok());
        assert_eq!(fields(&p.check_on(Day::parse("2026-03-12").unwrap()).unwrap_err()), ["closesOn"]);
        v["shuffleOptions"] = json!("yes");
        v["closesOn"] = json!(null);
        assert_eq!(fields(&NewPoll::from_json(&v).unwrap_err()), ["closesOn", "shuffleOptions"]);
    }
}

/// A poll as stored. The token is only present as its hash.
#[derive(Clone, Debug)]
pub struct Poll {
    pub id: crate::secret::PollId,
    pub token_hash: crate::secret::TokenHash,
    pub title: Title,
    pub lang: Lang,
    pub visibility: ResultsVisibility,
    /// Whether the poll takes no votes today: closed by its admin, or its
    /// deadline has come.
    pub closed: bool,
    /// The day voting ends, if the poll has a deadline.
    pub closes_on: Option<Day>,
    pub shuffle_options: bool,
    pub duplicate_check: DuplicateCheck,
    /// Voters get receipts to change or withdraw their ballot.
    pub vote_changes: bool,
    pub created_on: crate::day::Day,
    pub expires_on: crate::day::Day,
    pub questions: Vec<Question>,
    pub translations: BTreeMap<Lang, LanguageVersion>,
    /// Media attached through the web form, poll's own first, then by question.
    pub media: Vec<MediaItem>,
}

impl Poll {
    pub fn shape(&self) -> Shape<'_> {
        Shape { lang: self.lang, questions: &self.questions, expires_on: self.expires_on, closes_on: self.closes_on }
    }

    /// The specification's `resultsPublic`: anyone may read the results, always.
    pub fn results_public(&self) -> bool {
        self.visibility.is_public()
    }

    /// Whether anyone may read the results now: public ones, and those
    /// shown once the poll is closed, when it is.
    pub fn results_open_to_all(&self) -> bool {
        match self.visibility {
            ResultsVisibility::Public => true,
            ResultsVisibility::AfterClose => self.closed,
            ResultsVisibility::AfterVote | ResultsVisibility::Private => false,
        }
    }

    /// The media item shown at `slot`, if any.
    pub fn media_at(&self, slot: Slot) -> Option<&MediaItem> {
        self.media.iter().find(|m| m.slot == slot)
    }

    /// The poll's text in `lang`: its language version if one exists, else
    /// the original.
    pub fn version(&self, lang: Lang) -> (Lang, &Title, Vec<Texts<'_>>) {
        match self.translations.get(&lang) {
            Some(v) if lang != self.lang => (lang, &v.title, v.questions.iter().map(VersionQuestion::texts).collect()),
            _ => (self.lang, &self.title, self.questions.iter().map(Question::texts).collect()),
        }
    }
}

/// The texts of one question in one language.
#[derive(Clone, Copy, Debug)]
pub struct Texts<'a> {
    pub label: &'a Label,
    pub options: &'a [OptionText],
    pub min_label: Option<&'a EndLabel>,
    pub max_label: Option<&'a EndLabel>,
}

/// Counters of a poll's responses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tallies {
    pub total: u64,
    /// Per question, its `option_tallies`: per option (single, multiple),
    /// first choices per option (ranked), or per value from `scaleMin` up
    /// (scale).
    pub votes: Vec<Vec<u64>>,
    /// Ballots that answered each question.
    pub answered: Vec<u64>,
    /// Per question, `pairwise[i][j]`: ballots ranking option i above j
    /// (empty for questions that are not ranked).
    pub pairwise: Vec<Vec<Vec<u64>>>,
    /// Responses per day, oldest first.
    pub by_day: Vec<(crate::day::Day, u64)>,
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
pub fn check_alt(kind: crate::media::Kind, text: &str) -> Result<String, Problem> {
    let trimmed = text.trim_matches(is_blank);
    if trimmed.is_empty() {
        return if kind == crate::media::Kind::Image { Err(Problem::Required) } else { Ok(String::new()) };
    }
    ALT.check_text(trimmed)
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
