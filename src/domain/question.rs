//! The kinds of question and their rules: single and multiple choice,
//! ranking, a numeric scale, and a schedule (slots a voter can come to).
//!
//! Why here: a question's type decides which fields it has (options, bounds
//! on choices, the ends of a scale), what a ballot may answer
//! ([`super::ballot`]) and which counters the store keeps. The creation
//! body, the language versions and the OpenAPI document (`schema.rs`) all
//! read these rules from here.
//!
//! Promises: a parsed [`Question`] always holds the fields of its type and
//! no other (a multiple-choice question has both bounds, `1 ≤ minChoices ≤
//! maxChoices ≤ options`; a scale has `0 ≤ scaleMin < scaleMax ≤ 10` and no
//! options; a schedule's options are its slots, in time order
//! ([`super::schedule`])), so the accessors below never have to guess.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::schedule::{DateSlot, TimeZone, slot_options};
use super::{Errors, FieldError, FieldPath, Key, Label, OptionText, Problem, TextRule, field, object, options};

/// The ends of every scale: `0 ≤ scaleMin < scaleMax ≤ 10`.
pub const SCALE_FLOOR: u8 = 0;
pub const SCALE_CEILING: u8 = 10;

/// The fewest options a multiple-choice ballot may be asked to pick.
pub const MIN_CHOICES: u8 = 1;

/// A scale's end labels ("not at all", "very much"): short texts.
pub const END_LABEL: TextRule = TextRule { max_chars: 100 };

text_type!(EndLabel, END_LABEL, "The text shown at one end of a scale question.");

/// The kinds of question.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuestionKind {
    /// One option.
    Single,
    /// Between `minChoices` and `maxChoices` options.
    Multiple,
    /// Options put in order of preference (some or all).
    Ranked,
    /// One whole number from `scaleMin` to `scaleMax`.
    Scale,
    /// Per slot (a day, or a day and a time): yes, if need be, or no.
    Schedule,
}

impl QuestionKind {
    pub const ALL: [&'static str; 5] = ["single", "multiple", "ranked", "scale", "schedule"];
    pub const KINDS: [QuestionKind; 5] = [
        QuestionKind::Single,
        QuestionKind::Multiple,
        QuestionKind::Ranked,
        QuestionKind::Scale,
        QuestionKind::Schedule,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            QuestionKind::Single => "single",
            QuestionKind::Multiple => "multiple",
            QuestionKind::Ranked => "ranked",
            QuestionKind::Scale => "scale",
            QuestionKind::Schedule => "schedule",
        }
    }

    pub fn from_code(s: &str) -> Option<QuestionKind> {
        QuestionKind::KINDS.into_iter().find(|k| k.as_str() == s)
    }

    /// Whether questions of this kind list options (all but scales; a
    /// schedule's options are its slots).
    pub fn has_options(self) -> bool {
        self != QuestionKind::Scale
    }

    /// Whether its options are texts to translate (a schedule's slots are
    /// dates, the same in every language).
    pub fn has_option_texts(self) -> bool {
        self.has_options() && self != QuestionKind::Schedule
    }

    /// The creation fields a question of this kind may have beyond `type`,
    /// `label` and `required`.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            QuestionKind::Single | QuestionKind::Ranked => &["options"],
            QuestionKind::Multiple => &["options", "minChoices", "maxChoices"],
            QuestionKind::Scale => &["scaleMin", "scaleMax", "minLabel", "maxLabel"],
            QuestionKind::Schedule => &["options", "timeZone"],
        }
    }
}

/// A question as created. Fields of other kinds are absent (see the module
/// promises); the stored JSON and the API's are this struct's serde form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Question {
    #[serde(rename = "type")]
    pub kind: QuestionKind,
    pub label: Label,
    /// Empty for a scale.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<OptionText>,
    /// A ballot must answer it (stored polls from before have none: false).
    #[serde(default)]
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_choices: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_choices: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_min: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_max: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_label: Option<EndLabel>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_label: Option<EndLabel>,
    /// A schedule's: the IANA time zone its times are local to, if named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<TimeZone>,
}

impl Question {
    /// A single-choice question (tests and tools).
    pub fn single(label: Label, options: Vec<OptionText>) -> Question {
        Question {
            kind: QuestionKind::Single,
            label,
            options,
            required: false,
            min_choices: None,
            max_choices: None,
            scale_min: None,
            scale_max: None,
            min_label: None,
            max_label: None,
            time_zone: None,
        }
    }

    /// How many options a ballot may pick: one for single choice, the
    /// question's bounds for multiple choice; for a ranking, 1 to all.
    pub fn choice_bounds(&self) -> (usize, usize) {
        let n = self.options.len();
        match self.kind {
            QuestionKind::Multiple => (
                self.min_choices.map_or(usize::from(MIN_CHOICES), usize::from),
                self.max_choices.map_or(n, usize::from),
            ),
            QuestionKind::Ranked => (1, n),
            QuestionKind::Single | QuestionKind::Scale | QuestionKind::Schedule => (1, 1),
        }
    }

    pub fn texts(&self) -> super::Texts<'_> {
        super::Texts {
            label: &self.label,
            options: &self.options,
            min_label: self.min_label.as_ref(),
            max_label: self.max_label.as_ref(),
        }
    }

    /// The ends of a scale (inclusive); `None` for other kinds.
    pub fn scale(&self) -> Option<(u8, u8)> {
        self.scale_min.zip(self.scale_max).filter(|_| self.kind == QuestionKind::Scale)
    }

    /// How many counters of `option_tallies` the question has: one per
    /// option, per value of its scale, or two per slot of a schedule (yes
    /// and if need be: [`super::Availability::counter`]).
    pub fn counters(&self) -> usize {
        match self.scale() {
            Some((lo, hi)) => usize::from(hi.saturating_sub(lo)) + 1,
            None if self.kind == QuestionKind::Schedule => 2 * self.options.len(),
            None => self.options.len(),
        }
    }

    /// A schedule's slots, in order; empty for other kinds. Its options
    /// were checked as slots when it was created.
    pub fn slots(&self) -> Vec<DateSlot> {
        if self.kind != QuestionKind::Schedule {
            return Vec::new();
        }
        self.options.iter().filter_map(|o| DateSlot::parse(o.as_str())).collect()
    }
}

/// A whole number in `lo..=hi`, written as one (`3`, not `3.0`).
fn small_int(v: &Value, lo: u8, hi: u8) -> Result<u8, Problem> {
    super::whole_number(v)
        .and_then(|n| u8::try_from(n).ok())
        .filter(|n| (lo..=hi).contains(n))
        .ok_or(Problem::IntegerRange { min: usize::from(lo), max: usize::from(hi) })
}

/// Every key a question object may have, whatever its type.
pub const QUESTION_FIELDS: [&str; 11] = [
    "type",
    "label",
    "options",
    "required",
    "minChoices",
    "maxChoices",
    "scaleMin",
    "scaleMax",
    "minLabel",
    "maxLabel",
    "timeZone",
];

/// Parses one question of a creation body.
pub(super) fn question(v: &Value, at: &FieldPath, errs: &mut Errors) -> Option<Question> {
    let obj = object(v, at, &QUESTION_FIELDS, &[Key::Label], errs)?;
    let kind = match obj.get("type") {
        None => Some(QuestionKind::Single),
        Some(t) => {
            let k = t.as_str().and_then(QuestionKind::from_code);
            if k.is_none() {
                errs.push(at.key(Key::Type), Problem::NotOneOf(super::Choices::QuestionType));
            }
            k
        }
    };
    let label = field(obj, at, Key::Label).and_then(|(l, p)| errs.take(p, Label::parse(l)));
    let required = super::boolean_at(obj, at, Key::Required, errs);
    let kind = kind?;
    // Fields of other kinds are refused by name, so a client learns that a
    // scale has no options rather than that options are wrong.
    let mut ok = true;
    for name in &QUESTION_FIELDS[4..] {
        if obj.contains_key(*name) && !kind.fields().contains(name) {
            errs.push(at.name(name), Problem::NotForType { kind });
            ok = false;
        }
    }
    if obj.contains_key("options") && !kind.has_options() {
        errs.push(at.key(Key::Options), Problem::NotForType { kind });
        ok = false;
    }
    // Before the options, which may end the walk: a client hears of both.
    let time_zone = match field(obj, at, Key::TimeZone) {
        Some((v, p)) if kind == QuestionKind::Schedule => errs.take(p, TimeZone::parse(v)).map(Some),
        _ => Some(None),
    };
    let mut q = Question::single(label?, Vec::new());
    // Not ended here on a bad zone: the options' problems are heard too.
    ok &= time_zone.is_some();
    q.time_zone = time_zone.flatten();
    q.kind = kind;
    q.required = required?.unwrap_or(false);
    if kind.has_options() {
        let Some((o, p)) = field(obj, at, Key::Options) else {
            errs.push(at.key(Key::Options), Problem::Required);
            return None;
        };
        q.options = if kind == QuestionKind::Schedule { slot_options(o, &p, errs)? } else { options(o, &p, errs)? };
    }
    if kind == QuestionKind::Multiple {
        let n = u8::try_from(q.options.len()).unwrap_or(u8::MAX);
        let min = match field(obj, at, Key::MinChoices) {
            None => Some(MIN_CHOICES),
            Some((v, p)) => errs.take(p, small_int(v, MIN_CHOICES, n)),
        };
        let max = match (field(obj, at, Key::MaxChoices), min) {
            (None, _) => Some(n),
            (Some((v, p)), Some(min)) => errs.take(p, small_int(v, min, n)),
            (Some((v, p)), None) => errs.take(p, small_int(v, MIN_CHOICES, n)),
        };
        q.min_choices = Some(min?);
        q.max_choices = Some(max?);
    }
    if kind == QuestionKind::Scale {
        let end = |key: Key, lo: u8, hi: u8, errs: &mut Errors| match field(obj, at, key) {
            None => {
                errs.push(at.key(key), Problem::Required);
                None
            }
            Some((v, p)) => errs.take(p, small_int(v, lo, hi)),
        };
        let lo = end(Key::ScaleMin, SCALE_FLOOR, SCALE_CEILING - 1, errs);
        let hi = end(Key::ScaleMax, lo.map_or(SCALE_FLOOR + 1, |l| l + 1), SCALE_CEILING, errs);
        let min_label = end_label(obj, at, Key::MinLabel, errs);
        let max_label = end_label(obj, at, Key::MaxLabel, errs);
        q.scale_min = Some(lo?);
        q.scale_max = Some(hi?);
        q.min_label = min_label?;
        q.max_label = max_label?;
    }
    ok.then_some(q)
}

/// An optional end label at `key`: `Some(None)` when absent.
fn end_label(obj: &Map<String, Value>, at: &FieldPath, key: Key, errs: &mut Errors) -> Option<Option<EndLabel>> {
    match field(obj, at, key) {
        None => Some(None),
        Some((v, p)) => errs.take(p, EndLabel::parse(v)).map(Some),
    }
}

/// One question of a language version: every text of the question in
/// another language. Its shape is checked against the poll's question
/// (`LanguageVersion::mismatches`), not here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionQuestion {
    pub label: Label,
    /// Empty for a scale and a schedule (and then left out, as in
    /// [`Question`]): a schedule's slots are the poll's in every language.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<OptionText>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_label: Option<EndLabel>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_label: Option<EndLabel>,
}

impl VersionQuestion {
    pub fn texts(&self) -> super::Texts<'_> {
        super::Texts {
            label: &self.label,
            options: &self.options,
            min_label: self.min_label.as_ref(),
            max_label: self.max_label.as_ref(),
        }
    }
}

pub const VERSION_QUESTION_FIELDS: [&str; 4] = ["label", "options", "minLabel", "maxLabel"];

pub(super) fn version_question(v: &Value, at: &FieldPath, errs: &mut Errors) -> Option<VersionQuestion> {
    let obj = object(v, at, &VERSION_QUESTION_FIELDS, &[Key::Label], errs)?;
    let label = field(obj, at, Key::Label).and_then(|(l, p)| errs.take(p, Label::parse(l)));
    let opts = match field(obj, at, Key::Options) {
        None => Some(Vec::new()),
        // An empty list is a scale's or a schedule's (checked against the
        // poll later).
        Some((Value::Array(a), _)) if a.is_empty() => Some(Vec::new()),
        Some((o, p)) => options(o, &p, errs),
    };
    let min_label = end_label(obj, at, Key::MinLabel, errs);
    let max_label = end_label(obj, at, Key::MaxLabel, errs);
    Some(VersionQuestion { label: label?, options: opts?, min_label: min_label?, max_label: max_label? })
}

/// Where a language version's question differs in shape from the poll's.
pub(super) fn version_mismatches(
    mine: &VersionQuestion,
    theirs: &Question,
    at: &FieldPath,
) -> Vec<(FieldPath, Problem)> {
    let mut out = Vec::new();
    // A schedule's slots are dates, the same in every language: a version
    // gives none, as for a scale.
    let expected = if theirs.kind.has_option_texts() { theirs.options.len() } else { 0 };
    if mine.options.len() != expected {
        out.push((at.key(Key::Options), Problem::OptionsUnlikePoll { expected }));
    }
    for (key, m, t) in
        [(Key::MinLabel, &mine.min_label, &theirs.min_label), (Key::MaxLabel, &mine.max_label, &theirs.max_label)]
    {
        if m.is_some() != t.is_some() {
            out.push((at.key(key), Problem::EndLabelUnlikePoll { expected: t.is_some() }));
        }
    }
    out
}

/// Where `new` differs from `old` in what a ballot's meaning rests on, each
/// at its field of `new` with [`Problem::FixedByResponses`]: the number of
/// questions, and per question its type, number of options (a schedule's
/// slots and time zone themselves), choice bounds, scale ends, whether it
/// must be answered and which end labels it has
/// (a language version must have the same ones). Empty when only texts
/// differ: the title, labels, options' and end labels' texts. A ballot
/// stores option indexes, so a change of texts keeps its meaning; any
/// other change would not, nor fit the counts (`store::rows::Layout`).
pub fn structure_changes(old: &[Question], new: &[Question]) -> Vec<FieldError> {
    let list = FieldPath::from(Key::Questions);
    let fixed = |path: FieldPath| FieldError::new(path, Problem::FixedByResponses);
    if old.len() != new.len() {
        return vec![fixed(list)];
    }
    let mut out = Vec::new();
    for (i, (o, n)) in old.iter().zip(new).enumerate() {
        let at = list.index(i);
        if o.kind != n.kind {
            // The type decides every other field: one problem says it all.
            out.push(fixed(at.key(Key::Type)));
            continue;
        }
        // A schedule's slots and zone are what its answers mean, not texts
        // ("yes" to the 14th is not a yes to the 15th).
        let slots_moved = !o.kind.has_option_texts() && o.options != n.options;
        let differs = [
            (Key::Options, o.options.len() != n.options.len() || slots_moved),
            (Key::TimeZone, o.time_zone != n.time_zone),
            (Key::Required, o.required != n.required),
            (Key::MinChoices, o.min_choices != n.min_choices),
            (Key::MaxChoices, o.max_choices != n.max_choices),
            (Key::ScaleMin, o.scale_min != n.scale_min),
            (Key::ScaleMax, o.scale_max != n.scale_max),
            (Key::MinLabel, o.min_label.is_some() != n.min_label.is_some()),
            (Key::MaxLabel, o.max_label.is_some() != n.max_label.is_some()),
        ];
        out.extend(differs.into_iter().filter(|(_, d)| *d).map(|(key, _)| fixed(at.key(key))));
    }
    out
}

/// The texts of one question as a form gives them (a language version on
/// the admin page); blank end labels are left out.
#[derive(Clone, Debug, Default)]
pub struct QuestionTexts {
    pub label: String,
    pub options: Vec<String>,
    pub min_label: String,
    pub max_label: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Lang, LanguageVersion, NewPoll, PollPatch, Shape};
    use serde_json::json;

    fn parse(questions: Value) -> Result<Vec<Question>, Vec<String>> {
        NewPoll::from_json(&json!({"title": "t", "lang": "en", "expiryDays": 7, "questions": questions}))
            .map(|p| p.questions)
            .map_err(|errs| errs.iter().map(|e| format!("{}: {}", e.path, e.problem)).collect())
    }

    #[test]
    fn each_type_gets_its_defaults_and_only_its_fields() {
        let qs = parse(json!([
            {"label": "a", "options": ["x", "y"]},
            {"type": "multiple", "label": "b", "options": ["x", "y", "z"]},
            {"type": "ranked", "label": "c", "options": ["x", "y"], "required": true},
            {"type": "scale", "label": "d", "scaleMin": 0, "scaleMax": 10, "maxLabel": " very "}
        ]))
        .unwrap();
        assert_eq!(qs[0].kind, QuestionKind::Single);
        assert_eq!((qs[1].min_choices, qs[1].max_choices), (Some(1), Some(3)));
        assert!(qs[2].required && !qs[0].required);
        assert_eq!(qs[3].scale(), Some((0, 10)));
        assert_eq!(qs[3].max_label.as_ref().map(EndLabel::as_str), Some("very"));
        assert_eq!(qs[3].counters(), 11);
        // The stored and answered form holds each type's fields only.
        let v = serde_json::to_value(&qs).unwrap();
        assert_eq!(v[0], json!({"type": "single", "label": "a", "options": ["x", "y"], "required": false}));
        assert_eq!(
            v[3],
            json!({"type": "scale", "label": "d", "required": false, "scaleMin": 0, "scaleMax": 10, "maxLabel": "very"})
        );
        let back: Vec<Question> = serde_json::from_value(v).unwrap();
        assert_eq!(back, qs);
        // A question stored before types existed reads as single, not required.
        let old: Question =
            serde_json::from_value(json!({"type": "single", "label": "a", "options": ["x", "y"]})).unwrap();
        assert!(!old.required);
    }

    #[test]
    fn bounds_and_fields_of_other_types_are_refused_by_name() {
        let errs = parse(json!([
            {"type": "multiple", "label": "b", "options": ["x", "y"], "minChoices": 3},
            {"type": "multiple", "label": "b", "options": ["x", "y", "z"], "minChoices": 2, "maxChoices": 1},
            {"type": "scale", "label": "d", "scaleMin": 5, "scaleMax": 5, "options": ["x", "y"]},
            {"type": "scale", "label": "d", "scaleMax": 11, "minLabel": ""},
            {"label": "a", "options": ["x", "y"], "minChoices": 1, "required": "yes"},
            {"type": "grid", "label": "a"}
        ]))
        .unwrap_err();
        assert_eq!(
            errs,
            [
                "questions[0].minChoices: must be a whole number from 1 to 2",
                "questions[1].maxChoices: must be a whole number from 2 to 3",
                "questions[2].options: is not a field of scale questions",
                "questions[2].scaleMax: must be a whole number from 6 to 10",
                "questions[3].scaleMin: is required",
                "questions[3].scaleMax: must be a whole number from 1 to 10",
                "questions[3].minLabel: must not be empty",
                "questions[4].required: must be true or false",
                "questions[4].minChoices: is not a field of single questions",
                "questions[5].type: must be one of single, multiple, ranked, scale, schedule",
            ]
        );
        assert_eq!(
            parse(json!([{"type": "ranked", "label": "c"}])).unwrap_err(),
            ["questions[0].options: is required"]
        );
    }

    #[test]
    fn a_language_version_of_a_scale_has_its_end_labels_exactly() {
        let poll = NewPoll::from_json(&json!({"title": "t", "lang": "en", "expiryDays": 7, "questions": [
            {"type": "scale", "label": "How?", "scaleMin": 1, "scaleMax": 5, "minLabel": "bad"}
        ]}))
        .unwrap();
        let today = crate::day::Day::parse("2026-03-10").unwrap();
        let shape =
            Shape { lang: Lang::En, questions: &poll.questions, expires_on: today.plus_days(7), closes_on: None };
        let check = |q: Value| {
            PollPatch::from_json(&json!({"translations": {"fr": {"title": "t", "questions": [q]}}}))
                .map_err(|e| e.iter().map(|e| e.path.to_string()).collect::<Vec<_>>())
                .and_then(|p| {
                    p.check_against(&shape, today)
                        .map_err(|e| e.iter().map(|e| format!("{}: {}", e.path, e.problem)).collect())
                })
        };
        assert!(check(json!({"label": "Comment ?", "minLabel": "mal"})).is_ok());
        assert!(check(json!({"label": "Comment ?", "options": [], "minLabel": "mal"})).is_ok());
        assert_eq!(
            check(json!({"label": "Comment ?", "maxLabel": "bien"})).unwrap_err(),
            [
                "translations.fr.questions[0].minLabel: is required, like the poll's question",
                "translations.fr.questions[0].maxLabel: must be left out: the poll's question has none"
            ]
        );
        assert_eq!(
            check(json!({"label": "Comment ?", "options": ["a", "b"], "minLabel": "mal"})).unwrap_err(),
            ["translations.fr.questions[0].options: must have exactly 0 options, like the poll's question"]
        );
        let v = LanguageVersion::from_json(
            &json!({"title": "t", "questions": [{"label": "Comment ?", "minLabel": "mal"}]}),
            Lang::Fr,
        )
        .unwrap();
        assert_eq!(serde_json::to_value(&v).unwrap()["questions"][0], json!({"label": "Comment ?", "minLabel": "mal"}));
    }
}
