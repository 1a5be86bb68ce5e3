//! What can be wrong with a request's input, as typed values.
//!
//! Why: validation happens once, in `domain`, but its findings are shown by
//! three front ends in their own words: the JSON API (the English messages
//! and field paths of its 422 documents, a published interface), the web
//! pages (the reader's language, next to the form field that holds the text)
//! and `pollctl` (English lines). Each front end matches on these enums; no
//! code compares or parses a message string.
//!
//! Promises: [`Problem`]'s `Display` is the API's message, word for word as
//! documented in `docs/API.md`; [`FieldPath`]'s `Display` is the API's field
//! path (`questions[2].options[0]`, `translations.fr.title`).

use std::fmt;

use serde::{Serialize, Serializer};

use super::{Lang, QuestionKind};
use crate::day::Day;

/// The field names the validators know. A name a client sent that is none
/// of these is kept as text ([`Seg::Name`]) so it can be reported back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    Title,
    Lang,
    ExpiryDays,
    ResultsPublic,
    ResultsVisibility,
    ClosesOn,
    ShuffleOptions,
    Questions,
    Type,
    Label,
    Options,
    Closed,
    Translations,
    /// A media item's slot (web form only).
    Media,
    /// A ballot's answers (web form only).
    Choices,
    Required,
    MinChoices,
    MaxChoices,
    ScaleMin,
    ScaleMax,
    MinLabel,
    MaxLabel,
    DuplicateCheck,
    VoteChanges,
    /// A voter's receipt (web form only).
    Receipt,
    /// The number of invite codes to issue.
    Count,
    /// A schedule question's time zone.
    TimeZone,
}

impl Key {
    pub fn name(self) -> &'static str {
        match self {
            Key::Title => "title",
            Key::Lang => "lang",
            Key::ExpiryDays => "expiryDays",
            Key::ResultsPublic => "resultsPublic",
            Key::ResultsVisibility => "resultsVisibility",
            Key::ClosesOn => "closesOn",
            Key::ShuffleOptions => "shuffleOptions",
            Key::Questions => "questions",
            Key::Type => "type",
            Key::Label => "label",
            Key::Options => "options",
            Key::Closed => "closed",
            Key::Translations => "translations",
            Key::Media => "media",
            Key::Choices => "choices",
            Key::Required => "required",
            Key::MinChoices => "minChoices",
            Key::MaxChoices => "maxChoices",
            Key::ScaleMin => "scaleMin",
            Key::ScaleMax => "scaleMax",
            Key::MinLabel => "minLabel",
            Key::MaxLabel => "maxLabel",
            Key::DuplicateCheck => "duplicateCheck",
            Key::VoteChanges => "voteChanges",
            Key::Receipt => "receipt",
            Key::Count => "count",
            Key::TimeZone => "timeZone",
        }
    }
}

/// One step of a field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(Key),
    /// An item of a list.
    Index(usize),
    /// A language version under `translations`.
    Lang(Lang),
    /// A name sent by the client that no validator knows (an unknown field,
    /// an unknown language code).
    Name(String),
}

/// Where in a request a problem is: empty for the body as a whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldPath(Vec<Seg>);

impl FieldPath {
    pub fn root() -> FieldPath {
        FieldPath(Vec::new())
    }

    fn with(&self, seg: Seg) -> FieldPath {
        let mut segs = self.0.clone();
        segs.push(seg);
        FieldPath(segs)
    }

    pub fn key(&self, key: Key) -> FieldPath {
        self.with(Seg::Key(key))
    }

    pub fn index(&self, i: usize) -> FieldPath {
        self.with(Seg::Index(i))
    }

    pub fn lang(&self, lang: Lang) -> FieldPath {
        self.with(Seg::Lang(lang))
    }

    pub fn name(&self, name: &str) -> FieldPath {
        self.with(Seg::Name(name.to_owned()))
    }

    /// The steps, for front ends to match on (`[Seg::Key(Key::Title)]`, …).
    pub fn segs(&self) -> &[Seg] {
        &self.0
    }
}

impl From<Key> for FieldPath {
    fn from(key: Key) -> FieldPath {
        FieldPath(vec![Seg::Key(key)])
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            let dot = if i == 0 { "" } else { "." };
            match seg {
                Seg::Key(k) => write!(f, "{dot}{}", k.name())?,
                Seg::Lang(l) => write!(f, "{dot}{}", l.code())?,
                Seg::Name(n) => write!(f, "{dot}{n}")?,
                Seg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// Which list a count is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum List {
    Questions,
    Options,
}

/// Which closed set a value must come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choices {
    Lang,
    ExpiryDays,
    QuestionType,
    ResultsVisibility,
    DuplicateCheck,
}

/// What is wrong with one field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A required field is missing (or, on a form, left blank).
    Required,
    NotAString,
    NotAnObject,
    NotAStringList,
    NotAQuestionList,
    NotABoolean,
    /// Blank after trimming.
    Blank,
    /// Not blank, yet made only of characters that show nothing
    /// ([`super::is_invisible`]).
    Invisible,
    TooLong {
        max: usize,
    },
    ControlCharacter,
    /// U+2028 LINE SEPARATOR or U+2029 PARAGRAPH SEPARATOR.
    LineSeparator,
    /// A bidirectional embedding, override or isolate control.
    BidiControl,
    /// More combining marks on one character than `max`.
    TooManyMarks {
        max: usize,
    },
    Count {
        list: List,
        min: usize,
        max: usize,
    },
    /// The same text (after NFC and trimming) as an earlier option of the
    /// question, `option` (0-based; 1-based in the message).
    DuplicateOption {
        option: usize,
    },
    /// Another text that looks the same as an earlier option of the
    /// question, `option` (0-based): their confusable skeletons
    /// ([`super::skeleton`]) are equal.
    LookalikeOption {
        option: usize,
    },
    NotOneOf(Choices),
    UnknownField {
        allowed: &'static [&'static str],
    },
    UnknownLanguage,
    /// A PATCH that names none of its fields.
    NothingToChange {
        fields: &'static [&'static str],
    },
    NotKeyedByLanguage,
    NoLanguage,
    /// A language version in the poll's own language.
    OwnLanguage,
    QuestionsUnlikePoll {
        expected: usize,
    },
    OptionsUnlikePoll {
        expected: usize,
    },
    /// A body that failed without a more precise finding (not expected).
    InvalidBody,
    /// A media item for a question the poll does not have.
    NoSuchQuestion,
    /// A ballot of the wrong length for its poll.
    BallotLength {
        expected: usize,
    },
    /// A ballot that chose an option its question does not have (1-based in the message).
    NoSuchOption {
        question: usize,
        option: usize,
    },
    /// A ballot that answers nothing.
    EmptyBallot,
    /// `resultsPublic` says otherwise than `resultsVisibility`.
    DisagreesWithVisibility,
    /// Not a `YYYY-MM-DD` calendar day.
    NotADay,
    /// A deadline on or before the day of the request.
    NotAfterToday {
        today: Day,
    },
    /// A deadline after the poll's expiry.
    AfterExpiry {
        expires_on: Day,
    },
    /// A new expiry before the poll's deadline.
    ExpiresBeforeDeadline {
        closes_on: Day,
    },
    /// Not a whole number in `min..=max`.
    IntegerRange {
        min: usize,
        max: usize,
    },
    /// A field that questions of this type do not have.
    NotForType {
        kind: QuestionKind,
    },
    /// A language version gives a scale's end label the poll's question
    /// does not have, or leaves out one it has.
    EndLabelUnlikePoll {
        expected: bool,
    },
    /// An answer of another type than its question's (0-based question).
    WrongAnswerKind {
        question: usize,
        kind: QuestionKind,
    },
    /// Too few or too many options picked.
    ChoiceCount {
        question: usize,
        min: usize,
        max: usize,
    },
    /// An option picked or ranked twice.
    RepeatedChoice {
        question: usize,
    },
    /// Two options with the same rank.
    RepeatedRank {
        question: usize,
    },
    /// Ranks that do not run 1, 2, 3… without a gap.
    RankGap {
        question: usize,
    },
    /// A value outside the question's scale.
    OffScale {
        question: usize,
        min: u8,
        max: u8,
    },
    /// A required question left out.
    Unanswered {
        question: usize,
    },
    /// A schedule question's option that is not a slot (`YYYY-MM-DD` or
    /// `YYYY-MM-DDTHH:MM`).
    NotASlot,
    /// A slot not after the one before it (`previous`, as written).
    SlotOutOfOrder {
        previous: String,
    },
    /// A time zone the IANA database does not name.
    UnknownTimeZone,
    /// More invite codes than a poll may have.
    TooManyInvites {
        issued: u64,
        max: u64,
    },
    /// What a ballot's meaning rests on (the questions, their types, their
    /// options, bounds, ends and whether they must be answered), changed
    /// on a poll that has responses: only texts may change then.
    FixedByResponses,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Required => f.write_str("is required"),
            Problem::NotAString => f.write_str("must be a string"),
            Problem::NotAnObject => f.write_str("must be an object"),
            Problem::NotAStringList => f.write_str("must be an array of strings"),
            Problem::NotAQuestionList => f.write_str("must be an array of questions"),
            Problem::NotABoolean => f.write_str("must be true or false"),
            Problem::Blank => f.write_str("must not be empty"),
            Problem::Invisible => f.write_str("must contain a visible character (it has only invisible ones)"),
            Problem::TooLong { max } => write!(f, "must be at most {max} characters"),
            Problem::ControlCharacter => {
                f.write_str("must not contain control characters (such as line breaks or tabs)")
            }
            Problem::BidiControl => {
                f.write_str("must not contain bidirectional control characters (U+202A to U+202E, U+2066 to U+2069)")
            }
            Problem::LineSeparator => {
                f.write_str("must not contain line or paragraph separators (U+2028, U+2029): a text is one line")
            }
            Problem::TooManyMarks { max } => {
                write!(f, "must not stack more than {max} combining marks on one character")
            }
            Problem::Count { min, max, .. } => write!(f, "must have between {min} and {max} items"),
            Problem::DuplicateOption { option } => {
                write!(f, "duplicates another option of this question (option {})", option + 1)
            }
            Problem::LookalikeOption { option } => write!(
                f,
                "duplicates another option of this question: it looks the same as option {}, though written with \
                 other characters",
                option + 1
            ),
            Problem::NotOneOf(c) => write!(f, "must be one of {}", c.values().join(", ")),
            Problem::UnknownField { allowed } => write!(f, "unknown field; allowed: {}", allowed.join(", ")),
            Problem::UnknownLanguage => write!(f, "unknown language; use one of {}", Lang::codes().join(", ")),
            Problem::NothingToChange { fields } => write!(f, "must contain at least one of {}", fields.join(", ")),
            Problem::NotKeyedByLanguage => f.write_str("must be an object keyed by language code"),
            Problem::NoLanguage => f.write_str("must name at least one language"),
            Problem::OwnLanguage => f.write_str("is the poll's own language; its text cannot be replaced"),
            Problem::QuestionsUnlikePoll { expected } => {
                write!(f, "must have exactly {expected} questions, like the poll")
            }
            Problem::OptionsUnlikePoll { expected } => {
                write!(f, "must have exactly {expected} options, like the poll's question")
            }
            Problem::InvalidBody => f.write_str("invalid body"),
            Problem::NoSuchQuestion => f.write_str("belongs to no question of this poll"),
            Problem::BallotLength { expected } => write!(f, "a ballot must have {expected} answers"),
            Problem::NoSuchOption { question, option } => {
                write!(f, "question {} has no option {}", question + 1, option + 1)
            }
            Problem::EmptyBallot => f.write_str("a ballot must answer at least one question"),
            Problem::DisagreesWithVisibility => {
                f.write_str("must agree with resultsVisibility (true exactly when it is public)")
            }
            Problem::NotADay => f.write_str("must be a day, written YYYY-MM-DD"),
            Problem::NotAfterToday { today } => write!(f, "must be after today ({today})"),
            Problem::AfterExpiry { expires_on } => {
                write!(f, "must be before the day the poll expires ({expires_on})")
            }
            Problem::ExpiresBeforeDeadline { closes_on } => write!(
                f,
                "would make the poll expire before its deadline ({closes_on}); move or remove closesOn as well"
            ),
            Problem::IntegerRange { min, max } => write!(f, "must be a whole number from {min} to {max}"),
            Problem::NotForType { kind } => write!(f, "is not a field of {} questions", kind.as_str()),
            Problem::EndLabelUnlikePoll { expected: true } => f.write_str("is required, like the poll's question"),
            Problem::EndLabelUnlikePoll { expected: false } => {
                f.write_str("must be left out: the poll's question has none")
            }
            Problem::WrongAnswerKind { question, kind } => {
                write!(f, "question {} takes a {} answer", question + 1, kind.as_str())
            }
            Problem::ChoiceCount { question, min, max } if min == max => {
                write!(f, "question {} takes exactly {min} choices", question + 1)
            }
            Problem::ChoiceCount { question, min, max } => {
                write!(f, "question {} takes between {min} and {max} choices", question + 1)
            }
            Problem::RepeatedChoice { question } => write!(f, "question {} names an option twice", question + 1),
            Problem::RepeatedRank { question } => {
                write!(f, "question {} gives two options the same rank", question + 1)
            }
            Problem::RankGap { question } => {
                write!(f, "question {}: ranks must run 1, 2, 3 and so on without a gap", question + 1)
            }
            Problem::OffScale { question, min, max } => {
                write!(f, "question {} takes a whole number from {min} to {max}", question + 1)
            }
            Problem::Unanswered { question } => write!(f, "question {} must be answered", question + 1),
            Problem::NotASlot => f.write_str(
                "must be a day (YYYY-MM-DD) or a day and a time (YYYY-MM-DDTHH:MM, 24-hour clock) that exists",
            ),
            Problem::SlotOutOfOrder { previous } => {
                write!(f, "must come after the slot before it ({previous}): slots are listed in time order, each once")
            }
            Problem::UnknownTimeZone => {
                f.write_str("must be a time zone of the IANA database, such as Europe/Paris or America/New_York")
            }
            Problem::TooManyInvites { issued, max } => {
                write!(f, "would give the poll more than {max} invite codes (it has {issued})")
            }
            Problem::FixedByResponses => f.write_str(
                "cannot change: the poll has responses, so only its texts can (the title, labels, options and \
                 scale end labels)",
            ),
        }
    }
}

/// One invalid field: where, and what is wrong. Serialized as the API's
/// `{"field": "questions[0].label", "message": "must not be empty"}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub path: FieldPath,
    pub problem: Problem,
}

impl FieldError {
    pub fn new(path: impl Into<FieldPath>, problem: Problem) -> FieldError {
        FieldError { path: path.into(), problem }
    }
}

impl Serialize for FieldError {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("FieldError", 2)?;
        st.serialize_field("field", &self.path.to_string())?;
        st.serialize_field("message", &self.problem.to_string())?;
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_as_the_api_writes_them() {
        let q = FieldPath::root().key(Key::Questions).index(2).key(Key::Options).index(0);
        assert_eq!(q.to_string(), "questions[2].options[0]");
        let v = FieldPath::from(Key::Translations).lang(Lang::Fr).key(Key::Questions).index(1).key(Key::Label);
        assert_eq!(v.to_string(), "translations.fr.questions[1].label");
        assert_eq!(FieldPath::root().to_string(), "");
        assert_eq!(FieldPath::root().name("extra").to_string(), "extra");
        assert_eq!(FieldPath::from(Key::Translations).name("es").to_string(), "translations.es");
    }

    #[test]
    fn messages_are_the_documented_ones() {
        let e = FieldError::new(Key::ExpiryDays, Problem::NotOneOf(Choices::ExpiryDays));
        assert_eq!(
            serde_json::to_value(&e).ok(),
            Some(serde_json::json!({"field": "expiryDays", "message": "must be one of 7, 30, 90, 365, 730"}))
        );
        assert_eq!(Problem::TooLong { max: 200 }.to_string(), "must be at most 200 characters");
        assert_eq!(
            Problem::Count { list: List::Options, min: 2, max: 12 }.to_string(),
            "must have between 2 and 12 items"
        );
        assert_eq!(Problem::NoSuchOption { question: 0, option: 4 }.to_string(), "question 1 has no option 5");
    }
}
