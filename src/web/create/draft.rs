//! The creation form as typed (`Draft`), read from the form, turned into
//! the API's JSON body, edited by the form's structural buttons, and the
//! domain's problems mapped back to the fields the person typed in.
//!
//! Why a module of its own: this is the creation page's model, tested
//! without any markup; `view.rs` draws it and `create.rs` handles the
//! requests.

use serde_json::{Map, Value, json};

use crate::client::ClientGroup;
use crate::domain::{FieldError, Key, Lang, NewMedia, OPTIONS, Problem, QUESTIONS, QuestionKind, Seg, Slot, check_alt};
use crate::secret::MediaId;
use crate::web::form::{Form, Problems, problem_text};
use crate::web::layout::Ctx;
use crate::web::parts::media_field::alt_text;
use crate::web::parts::settings::{self, SettingsDraft};
use crate::web::uploads::{SlotDraft, Uploads, message as upload_message};

/// The name suffixes of a question row's type fields: `q{i}{suffix}`, with
/// the HTML id `f-q{i}-{suffix}` (docs/WEB.md).
pub(super) const TYPE: &str = "type";
pub(super) const REQUIRED: &str = "required";
pub(super) const MIN_CHOICES: &str = "min";
pub(super) const MAX_CHOICES: &str = "max";
pub(super) const SCALE_MIN: &str = "from";
pub(super) const SCALE_MAX: &str = "to";
pub(super) const MIN_LABEL: &str = "low";
pub(super) const MAX_LABEL: &str = "high";
/// A schedule's shared times (`18:00, 20:30`) and its time zone.
pub(super) const TIMES: &str = "times";
pub(super) const TIME_ZONE: &str = "tz";

/// The form field of a question's API key, for the keys that have one of
/// their own (the label and options have theirs).
fn suffix(key: Key) -> Option<&'static str> {
    Some(match key {
        Key::Type => TYPE,
        Key::Required => REQUIRED,
        Key::MinChoices => MIN_CHOICES,
        Key::MaxChoices => MAX_CHOICES,
        Key::ScaleMin => SCALE_MIN,
        Key::ScaleMax => SCALE_MAX,
        Key::MinLabel => MIN_LABEL,
        Key::MaxLabel => MAX_LABEL,
        Key::TimeZone => TIME_ZONE,
        _ => return None,
    })
}

/// Rows shown on a blank form.
const START_QUESTIONS: usize = 1;
const START_OPTIONS: usize = 3;
const DEFAULT_EXPIRY: &str = "30";

/// The form as typed, kept verbatim so it can be shown again.
#[derive(Clone, Debug, Default)]
pub struct Draft {
    /// The form's one-time code: a reload that sends the form again must not
    /// create a second poll (see `post`).
    pub once: String,
    pub title: String,
    pub lang: String,
    pub expiry: String,
    /// Who sees the results, the closing day, shuffled options.
    pub settings: SettingsDraft,
    /// The poll's own picture, sound or video.
    pub media: SlotDraft,
    pub questions: Vec<DraftQuestion>,
}

/// A question row as typed. Every field of every type is kept, so that a
/// person who switches the type and back finds what they typed; only the
/// fields of the chosen type go into the API body.
#[derive(Clone, Debug, Default)]
pub struct DraftQuestion {
    pub label: String,
    /// The type's API code (`single`, …), as sent; empty means single.
    pub kind: String,
    pub required: bool,
    pub options: Vec<String>,
    /// Multiple choice: blank means the API's default.
    pub min_choices: String,
    pub max_choices: String,
    /// Scale: the two ends and their optional labels.
    pub scale_min: String,
    pub scale_max: String,
    pub min_label: String,
    pub max_label: String,
    /// Schedule: per row a day (`q{i}d{j}`, as a date field sends it) and
    /// an optional time (`q{i}t{j}`); times every day without its own gets
    /// (`q{i}times`); the time zone (`q{i}tz`).
    pub slot_days: Vec<String>,
    pub slot_times: Vec<String>,
    pub times: String,
    pub time_zone: String,
    pub media: SlotDraft,
}

/// The ends a new scale row offers (a common five-point scale).
const DEFAULT_SCALE: (u8, u8) = (1, 5);

impl DraftQuestion {
    pub(super) fn blank() -> DraftQuestion {
        DraftQuestion {
            kind: QuestionKind::Single.as_str().to_owned(),
            options: vec![String::new(); START_OPTIONS],
            scale_min: DEFAULT_SCALE.0.to_string(),
            scale_max: DEFAULT_SCALE.1.to_string(),
            slot_days: vec![String::new(); START_OPTIONS],
            slot_times: vec![String::new(); START_OPTIONS],
            ..DraftQuestion::default()
        }
    }

    /// The chosen type; `None` for a value no form of ours sends (the API's
    /// check then reports it at the type field).
    pub(super) fn kind(&self) -> Option<QuestionKind> {
        match self.kind.trim() {
            "" => Some(QuestionKind::Single),
            code => QuestionKind::from_code(code),
        }
    }

    /// A row with nothing typed in the fields of its type and no file is
    /// left out; a row with only a file is not, so that its missing label is
    /// pointed out. Selects and the checkbox always hold a value, so they
    /// make no row.
    fn is_blank(&self) -> bool {
        let typed = |s: &String| !s.trim().is_empty();
        let kind = self.kind().unwrap_or(QuestionKind::Single);
        let options = kind.has_options() && self.options.iter().any(typed);
        let choices = kind == QuestionKind::Multiple && (typed(&self.min_choices) || typed(&self.max_choices));
        let labels = kind == QuestionKind::Scale && (typed(&self.min_label) || typed(&self.max_label));
        let slots = kind == QuestionKind::Schedule && self.slot_days.iter().any(typed);
        !typed(&self.label) && !options && !choices && !labels && !slots && self.media.is_empty()
    }

    /// This row's question in the API's JSON, and which options went in.
    fn to_json(&self) -> (Value, Vec<usize>) {
        let mut q = Map::new();
        q.insert("label".into(), json!(self.label));
        let kind = self.kind();
        match kind {
            // Single is the API's default: a single-choice body stays as it
            // always was.
            Some(QuestionKind::Single) => {}
            Some(k) => {
                q.insert("type".into(), json!(k.as_str()));
            }
            None => {
                q.insert("type".into(), json!(self.kind));
            }
        }
        if self.required {
            q.insert("required".into(), json!(true));
        }
        let kind = kind.unwrap_or(QuestionKind::Single);
        let mut kept = Vec::new();
        if kind == QuestionKind::Schedule {
            let (slots, rows) = self.slots();
            q.insert("options".into(), json!(slots));
            kept = rows;
            if !self.time_zone.trim().is_empty() {
                q.insert(Key::TimeZone.name().into(), json!(self.time_zone));
            }
        } else if kind.has_options() {
            kept = (0..self.options.len()).filter(|&j| !self.options[j].trim().is_empty()).collect();
            q.insert("options".into(), json!(kept.iter().map(|&j| self.options[j].as_str()).collect::<Vec<_>>()));
        }
        let mut put = |key: Key, value: &str, optional: bool| {
            if !(optional && value.trim().is_empty()) {
                q.insert(key.name().into(), number_or_text(value));
            }
        };
        if kind == QuestionKind::Multiple {
            put(Key::MinChoices, &self.min_choices, true);
            put(Key::MaxChoices, &self.max_choices, true);
        }
        if kind == QuestionKind::Scale {
            put(Key::ScaleMin, &self.scale_min, false);
            put(Key::ScaleMax, &self.scale_max, false);
            // End labels are texts: a number typed there stays a text.
            for (key, label) in [(Key::MinLabel, &self.min_label), (Key::MaxLabel, &self.max_label)] {
                if !label.trim().is_empty() {
                    q.insert(key.name().into(), json!(label));
                }
            }
        }
        (Value::Object(q), kept)
    }
}

impl DraftQuestion {
    /// The rows' slots in time order, with the row each came from: a row's
    /// day with its own time, else with each shared time, else the whole
    /// day. Rows without a day are left out; the API checks the rest (a
    /// day typed as text that is no date comes back at its row).
    fn slots(&self) -> (Vec<String>, Vec<usize>) {
        let shared: Vec<String> = shared_times(&self.times).into_iter().flatten().collect();
        let mut slots: Vec<(String, usize)> = Vec::new();
        for (j, day) in self.slot_days.iter().enumerate() {
            let day = day.trim();
            if day.is_empty() {
                continue;
            }
            match self.slot_times.get(j).map(|t| t.trim()).filter(|t| !t.is_empty()) {
                // A time field may send seconds (`18:30:00`); slots have none.
                Some(time) => slots.push((format!("{day}T{}", time.get(..5).unwrap_or(time)), j)),
                None if shared.is_empty() => slots.push((day.to_owned(), j)),
                None => slots.extend(shared.iter().map(|t| (format!("{day}T{t}"), j))),
            }
        }
        // Slots are listed in time order, which their one spelling sorts
        // by; the form need not be filled in order.
        slots.sort();
        slots.into_iter().unzip()
    }
}

/// The times typed for every day (`18:00, 20:30`; `18h30` and `9:00`
/// too), each as `HH:MM`, or `None` for a piece that is no time.
pub(super) fn shared_times(text: &str) -> Vec<Option<String>> {
    text.split([',', ';'])
        .map(|piece| piece.chars().filter(|c| !c.is_whitespace()).collect::<String>())
        .filter(|piece| !piece.is_empty())
        .map(|piece| {
            // "18 h 30", as French writes it, is 18:30 too.
            let piece = piece.to_ascii_lowercase().replace(['h', '.'], ":");
            let (h, m) = piece.split_once(':').unwrap_or((&piece, ""));
            let m = if m.is_empty() { "00" } else { m };
            let ok = |s: &str, max: u8| {
                (1..=2).contains(&s.len())
                    && s.bytes().all(|b| b.is_ascii_digit())
                    && s.parse::<u8>().is_ok_and(|n| n <= max)
            };
            (ok(h, 23) && m.len() == 2 && ok(m, 59)).then(|| format!("{:02}:{m}", h.parse::<u8>().unwrap_or(0)))
        })
        .collect()
}

/// A number field's value as the API would get it from a client: a whole
/// number when it is one, else the text, so the API's check names the field.
fn number_or_text(value: &str) -> Value {
    value.trim().parse::<i64>().map_or_else(|_| json!(value), |n| json!(n))
}

/// The field name of the poll's file ("pm") or question `i`'s ("q{i}m").
pub(super) fn media_prefix(row: Option<usize>) -> String {
    row.map_or_else(|| "pm".to_owned(), |i| format!("q{i}m"))
}

/// Where a JSON question and its options came from in the form.
pub(super) struct Origin {
    pub(super) row: usize,
    pub(super) options: Vec<usize>,
    /// The options are a schedule's slots: each from a day field's row.
    pub(super) slots: bool,
}

impl Draft {
    pub fn blank(lang: Lang) -> Draft {
        Draft {
            once: String::new(),
            title: String::new(),
            lang: lang.code().to_owned(),
            expiry: DEFAULT_EXPIRY.to_owned(),
            settings: SettingsDraft::default(),
            media: SlotDraft::default(),
            questions: vec![DraftQuestion::blank(); START_QUESTIONS],
        }
    }

    /// Reads `title`, `lang`, `expiry`, the settings (`results`, `closes`,
    /// `shuffle`), `q{i}` and `q{i}o{j}`, and per question the fields of
    /// the types (`q{i}{suffix}`, see [`QUESTION_FIELDS`]).
    /// Rows beyond the limits are ignored: the form never offers them.
    pub fn from_form(form: &Form) -> Draft {
        let (mut rows, mut cols) = (0usize, vec![0usize; QUESTIONS.max]);
        let mut slot_rows = [0usize; QUESTIONS.max];
        for name in form.names() {
            let Some(rest) = name.strip_prefix('q') else { continue };
            // A schedule's day and time rows: `q{i}d{j}`, `q{i}t{j}`.
            if let Some((qi, sj)) = rest.split_once(['d', 't'])
                && let (Ok(qi), Ok(sj)) = (qi.parse::<usize>(), sj.parse::<usize>())
                && qi < QUESTIONS.max
                && sj < OPTIONS.max
            {
                rows = rows.max(qi + 1);
                slot_rows[qi] = slot_rows[qi].max(sj + 1);
                continue;
            }
            let (qi, oi) = match rest.split_once('o') {
                Some((q, o)) => (q.parse::<usize>().ok(), o.parse::<usize>().ok().map(Some)),
                None => (rest.parse::<usize>().ok(), Some(None)),
            };
            let (Some(qi), Some(oi)) = (qi, oi) else { continue };
            if qi >= QUESTIONS.max {
                continue;
            }
            rows = rows.max(qi + 1);
            if let Some(oi) = oi.filter(|&o| o < OPTIONS.max) {
                cols[qi] = cols[qi].max(oi + 1);
            }
        }
        let questions = (0..rows)
            .map(|i| {
                let field = |suffix: &str| form.text(&format!("q{i}{suffix}"));
                DraftQuestion {
                    label: field(""),
                    kind: field(TYPE),
                    required: !field(REQUIRED).is_empty(),
                    options: (0..cols[i]).map(|j| form.text(&format!("q{i}o{j}"))).collect(),
                    min_choices: field(MIN_CHOICES),
                    max_choices: field(MAX_CHOICES),
                    scale_min: field(SCALE_MIN),
                    scale_max: field(SCALE_MAX),
                    min_label: field(MIN_LABEL),
                    max_label: field(MAX_LABEL),
                    slot_days: (0..slot_rows[i]).map(|j| form.text(&format!("q{i}d{j}"))).collect(),
                    slot_times: (0..slot_rows[i]).map(|j| form.text(&format!("q{i}t{j}"))).collect(),
                    times: field(TIMES),
                    time_zone: field(TIME_ZONE),
                    media: SlotDraft::default(),
                }
            })
            .collect();
        Draft {
            once: form.text("once"),
            title: form.text("title"),
            lang: form.text("lang"),
            expiry: form.text("expiry"),
            settings: SettingsDraft::from_form(form),
            media: SlotDraft::default(),
            questions,
        }
    }

    /// Reads the files of the form: new uploads are cleaned and held, held
    /// ones are found again by their reference. Rows are found from their
    /// fields, so a question with only a file counts as a row.
    pub fn read_media(&mut self, uploads: &Uploads, form: &Form, client: ClientGroup) {
        self.media = SlotDraft::read(uploads, form, &media_prefix(None), client);
        let rows_with_media = (0..QUESTIONS.max)
            .filter(|&i| {
                let prefix = media_prefix(Some(i));
                form.file(&prefix).is_some() || form.get(&format!("{prefix}-held")).is_some_and(|r| !r.is_empty())
            })
            .max()
            .map_or(0, |i| i + 1);
        while self.questions.len() < rows_with_media {
            self.questions.push(DraftQuestion { options: Vec::new(), ..DraftQuestion::blank() });
        }
        for (i, q) in self.questions.iter_mut().enumerate() {
            q.media = SlotDraft::read(uploads, form, &media_prefix(Some(i)), client);
        }
    }

    /// The held references of every slot (to forget them once stored).
    pub(super) fn held_references(&self) -> Vec<String> {
        std::iter::once(&self.media)
            .chain(self.questions.iter().map(|q| &q.media))
            .filter_map(|m| m.staged.as_ref().map(|s| s.reference.clone()))
            .collect()
    }

    /// The API body for this draft, and where each question came from.
    /// Blank questions and blank answers are left out.
    pub(super) fn to_json(&self) -> (Value, Vec<Origin>) {
        let mut origins = Vec::new();
        let mut questions = Vec::new();
        for (row, q) in self.questions.iter().enumerate().filter(|(_, q)| !q.is_blank()) {
            let (question, kept) = q.to_json();
            questions.push(question);
            origins.push(Origin { row, options: kept, slots: q.kind() == Some(QuestionKind::Schedule) });
        }
        let expiry = self.expiry.trim().parse::<i64>().map_or_else(|_| json!(self.expiry), |n| json!(n));
        let mut body = json!({
            "title": self.title,
            "lang": self.lang,
            "expiryDays": expiry,
            "questions": questions,
        });
        self.settings.add_to(&mut body, false);
        (body, origins)
    }

    /// Applies a structural button (`add-question`, `add-option-{i}`,
    /// `remove-question-{i}`, `up-{i}`); returns the id of the field to focus.
    pub(super) fn edit(&mut self, action: &str) -> Option<String> {
        let index = |prefix: &str| action.strip_prefix(prefix).and_then(|n| n.parse::<usize>().ok());
        if action == "add-question" && self.questions.len() < QUESTIONS.max {
            self.questions.push(DraftQuestion::blank());
            return Some(format!("f-q{}", self.questions.len() - 1));
        }
        if let Some(i) = index("add-option-")
            && let Some(q) = self.questions.get_mut(i)
            && q.options.len() < OPTIONS.max
        {
            q.options.push(String::new());
            return Some(format!("f-q{i}o{}", q.options.len() - 1));
        }
        if let Some(i) = index("add-slot-")
            && let Some(q) = self.questions.get_mut(i)
            && q.slot_days.len() < OPTIONS.max
        {
            q.slot_days.push(String::new());
            q.slot_times.resize(q.slot_days.len(), String::new());
            return Some(format!("f-q{i}d{}", q.slot_days.len() - 1));
        }
        if let Some(i) = index("remove-question-")
            && i < self.questions.len()
        {
            self.questions.remove(i);
            if self.questions.is_empty() {
                self.questions.push(DraftQuestion::blank());
            }
            return Some(format!("f-q{}", i.min(self.questions.len() - 1)));
        }
        if action == "media-drop-pm" {
            self.media = SlotDraft { alt: self.media.alt.clone(), ..SlotDraft::default() };
            return Some("f-pm".to_owned());
        }
        if let Some(i) =
            action.strip_prefix("media-drop-q").and_then(|r| r.strip_suffix('m')).and_then(|n| n.parse::<usize>().ok())
            && let Some(q) = self.questions.get_mut(i)
        {
            q.media = SlotDraft { alt: q.media.alt.clone(), ..SlotDraft::default() };
            return Some(format!("f-q{i}m"));
        }
        if let Some(i) = index("up-")
            && i > 0
            && i < self.questions.len()
        {
            self.questions.swap(i - 1, i);
            return Some(format!("f-q{}", i - 1));
        }
        None
    }
}

/// A field of the creation form, as problems point at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Title,
    Lang,
    Expiry,
    /// One of the settings, by its API key.
    Setting(Key),
    Questions,
    /// A question row as a whole (its options, for a count problem).
    QuestionSet(usize),
    /// A question row's text.
    Question(usize),
    Option(usize, usize),
    /// A schedule row's day field.
    SlotDay(usize, usize),
    /// A schedule's shared times.
    Times(usize),
    /// One of a question row's type fields, by its API key (see [`suffix`]).
    Detail(usize, Key),
    /// The file of the poll (`None`) or of a question row.
    Media(Option<usize>),
    MediaAlt(Option<usize>),
}

impl Field {
    /// The HTML id of the field.
    fn id(self) -> String {
        match self {
            Field::Title => "f-title".into(),
            Field::Lang => "f-lang".into(),
            Field::Expiry => "f-expiry".into(),
            Field::Setting(key) => settings::field_id("f", key).unwrap_or_else(|| "f-results-private".into()),
            Field::Questions => "f-questions".into(),
            Field::QuestionSet(i) => format!("f-q{i}-set"),
            Field::Question(i) => format!("f-q{i}"),
            Field::Option(i, j) => format!("f-q{i}o{j}"),
            Field::SlotDay(i, j) => format!("f-q{i}d{j}"),
            Field::Times(i) => format!("f-q{i}-{TIMES}"),
            Field::Detail(i, key) => format!("f-q{i}-{}", suffix(key).unwrap_or(TYPE)),
            Field::Media(row) => format!("f-{}", media_prefix(row)),
            Field::MediaAlt(row) => format!("f-{}-alt", media_prefix(row)),
        }
    }

    /// The field's name in the problem summary.
    fn name(self, t: &crate::i18n::Catalogue) -> String {
        match self {
            Field::Title => t.field_title.to_owned(),
            Field::Lang => t.field_lang.to_owned(),
            Field::Expiry => t.field_expiry.to_owned(),
            Field::Setting(Key::ClosesOn) => t.field_closes_on.to_owned(),
            Field::Setting(Key::ShuffleOptions) => t.field_shuffle.to_owned(),
            Field::Setting(Key::DuplicateCheck) => t.field_duplicate.to_owned(),
            Field::Setting(_) => t.field_results.to_owned(),
            Field::Questions => t.questions_heading.to_owned(),
            Field::QuestionSet(i) | Field::Question(i) => (t.question_legend)(i + 1),
            Field::Option(i, j) => format!("{}, {}", (t.question_legend)(i + 1), (t.field_option)(j + 1)),
            Field::SlotDay(i, j) => format!("{}, {}", (t.question_legend)(i + 1), (t.field_slot_day)(j + 1)),
            Field::Times(i) => format!("{}, {}", (t.question_legend)(i + 1), t.field_times),
            Field::Detail(i, key) => format!("{}, {}", (t.question_legend)(i + 1), detail_name(t, key)),
            Field::Media(None) => format!("{}, {}", t.media_poll_legend, t.media_file),
            Field::MediaAlt(None) => format!("{}, {}", t.media_poll_legend, t.media_alt),
            Field::Media(Some(i)) => format!("{}, {}", (t.question_legend)(i + 1), t.media_file),
            Field::MediaAlt(Some(i)) => format!("{}, {}", (t.question_legend)(i + 1), t.media_alt),
        }
    }

    /// The form field a problem of the creation body points at, given where
    /// each question of the body came from; `None` for the form as a whole.
    fn of(error: &FieldError, origins: &[Origin]) -> Option<Field> {
        use Seg::{Index, Key as K};
        match error.path.segs() {
            [K(Key::Title)] => Some(Field::Title),
            [K(Key::Lang)] => Some(Field::Lang),
            [K(Key::ExpiryDays)] => Some(Field::Expiry),
            [
                K(
                    key @ (Key::ResultsPublic
                    | Key::ResultsVisibility
                    | Key::ClosesOn
                    | Key::ShuffleOptions
                    | Key::DuplicateCheck),
                ),
            ] => Some(Field::Setting(*key)),
            [K(Key::Questions)] => Some(Field::Questions),
            [K(Key::Questions), Index(i), rest @ ..] => {
                let o = origins.get(*i)?;
                Some(match rest {
                    [K(Key::Label)] => Field::Question(o.row),
                    [K(Key::Options), Index(j)] => match o.options.get(*j) {
                        Some(&j) if o.slots => Field::SlotDay(o.row, j),
                        Some(&j) => Field::Option(o.row, j),
                        None => Field::QuestionSet(o.row),
                    },
                    [K(key)] if suffix(*key).is_some() => Field::Detail(o.row, *key),
                    _ => Field::QuestionSet(o.row),
                })
            }
            _ => None,
        }
    }
}

/// The label of a question's type field.
fn detail_name(t: &crate::i18n::Catalogue, key: Key) -> &'static str {
    match key {
        Key::Required => t.field_required,
        Key::MinChoices => t.field_min_choices,
        Key::MaxChoices => t.field_max_choices,
        Key::ScaleMin => t.field_scale_min_named,
        Key::ScaleMax => t.field_scale_max_named,
        Key::MinLabel => t.field_min_label,
        Key::MaxLabel => t.field_max_label,
        Key::TimeZone => t.field_time_zone,
        _ => t.field_type,
    }
}

impl Problems {
    fn at(&mut self, t: &crate::i18n::Catalogue, field: Field, message: String) {
        self.field(field.id(), field.name(t), message);
    }
}

/// `error`'s problem, an option it names counted as the form counts its
/// rows: blank rows are left out of the body, so the body's second option
/// may be the form's third answer.
fn form_numbers(error: &FieldError, origins: &[Origin]) -> Problem {
    let row = |option: usize| match error.path.segs() {
        [Seg::Key(Key::Questions), Seg::Index(i), ..] => {
            origins.get(*i).and_then(|o| o.options.get(option)).copied().unwrap_or(option)
        }
        _ => option,
    };
    match error.problem {
        Problem::DuplicateOption { option } => Problem::DuplicateOption { option: row(option) },
        Problem::LookalikeOption { option } => Problem::LookalikeOption { option: row(option) },
        ref other => other.clone(),
    }
}

/// Maps the domain's problems to this form's fields.
pub(super) fn problems(ctx: &Ctx, errors: &[FieldError], origins: &[Origin]) -> Problems {
    let t = ctx.t;
    let mut p = Problems::default();
    for e in errors {
        let message = match (&e.problem, Field::of(e, origins)) {
            // Said by what is wrong: an empty form is not told
            // of the most it may have.
            (Problem::Count { list: crate::domain::List::Questions, min, max }, _) => {
                if origins.len() < *min {
                    t.err_questions_none.to_owned()
                } else {
                    (t.err_questions_many)(*max)
                }
            }
            // A schedule's slots are counted as dates and times.
            (Problem::Count { list: crate::domain::List::Options, min, max }, Some(Field::QuestionSet(row)))
                if origins.iter().any(|o| o.row == row && o.slots) =>
            {
                (t.err_slots_count)(*min, *max)
            }
            // A scale's end at or below its start: said against the start.
            (Problem::IntegerRange { min, .. }, Some(Field::Detail(_, Key::ScaleMax))) => {
                (t.err_scale_to_above)(u8::try_from(min.saturating_sub(1)).unwrap_or(u8::MAX))
            }
            _ => problem_text(t, &form_numbers(e, origins)),
        };
        match Field::of(e, origins) {
            Some(field) => p.at(ctx.t, field, message),
            None => p.general.push(message),
        }
    }
    p
}

/// Problems the API cannot see: a schedule's shared times that are no
/// times, and a time typed without its date (the body leaves both out).
pub(super) fn schedule_problems(ctx: &Ctx, draft: &Draft, origins: &[Origin], p: &mut Problems) {
    for o in origins.iter().filter(|o| o.slots) {
        let Some(q) = draft.questions.get(o.row) else { continue };
        if shared_times(&q.times).iter().any(Option::is_none) {
            p.at(ctx.t, Field::Times(o.row), ctx.t.err_times.to_owned());
        }
        let typed = |s: Option<&String>| s.is_some_and(|s| !s.trim().is_empty());
        for j in (0..q.slot_times.len()).filter(|&j| typed(q.slot_times.get(j)) && !typed(q.slot_days.get(j))) {
            p.at(ctx.t, Field::SlotDay(o.row, j), ctx.t.err_not_a_slot.to_owned());
        }
    }
}

/// Problems with the files of a draft: uploads refused or lost, and images
/// without their required alt text. Also the media to store, by slot, when
/// there is no problem. `origins` maps the poll's questions to form rows.
pub(super) fn media_problems(ctx: &Ctx, draft: &Draft, origins: &[Origin], p: &mut Problems) -> Vec<NewMedia> {
    let mut slots: Vec<(Option<usize>, Slot, &SlotDraft)> = vec![(None, Slot::Poll, &draft.media)];
    for (k, o) in origins.iter().enumerate() {
        if let Some(q) = draft.questions.get(o.row) {
            slots.push((Some(o.row), Slot::Question(k), &q.media));
        }
    }
    let mut media = Vec::new();
    for (row, slot, m) in slots {
        if let Some(e) = &m.error {
            p.at(ctx.t, Field::Media(row), upload_message(ctx.t, e));
        }
        let Some(staged) = &m.staged else { continue };
        match check_alt(staged.clean.kind, &m.alt) {
            Ok(alt) => match MediaId::generate() {
                Ok(mid) => media.push(NewMedia { id: mid, slot, clean: staged.clean.clone(), alt }),
                Err(_) => p.general.push(ctx.t.err_unavailable.to_owned()),
            },
            Err(problem) => p.at(ctx.t, Field::MediaAlt(row), alt_text(ctx.t, &problem)),
        }
    }
    media
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::NewPoll;
    use crate::web::lang::Choice;

    #[test]
    fn blank_rows_are_left_out_and_errors_map_back_to_their_rows() {
        let form = Form::from_pairs(&[
            ("title", "T"),
            ("lang", "en"),
            ("expiry", "7"),
            ("results", "public"),
            ("q0", ""),
            ("q0o0", ""),
            ("q1", "Where?"),
            ("q1o0", ""),
            ("q1o1", "Here"),
            ("q1o2", "Here"),
        ]);
        let draft = Draft::from_form(&form);
        assert_eq!(draft.questions.len(), 2);
        let (body, origins) = draft.to_json();
        assert_eq!(body["questions"], json!([{"label": "Where?", "options": ["Here", "Here"]}]));
        assert_eq!(body["resultsVisibility"], json!("public"));
        let errors = NewPoll::from_json(&body).unwrap_err();
        let p = problems(&en(), &errors, &origins);
        assert_eq!(p.fields.len(), 1, "{p:?}");
        assert_eq!(p.fields[0].id, "f-q1o2");
        assert_eq!(p.fields[0].name, "Question 2, Answer 3");
        // The answer it repeats is named as the form numbers it (the body
        // left the blank row out: there it is the first option).
        assert_eq!(p.fields[0].message, "This answer is the same as answer 2 of this question.");
    }

    /// An answer that looks like another (a Cyrillic Р for a Latin P, a
    /// zero-width space) is refused at its own field, naming the answer it
    /// looks like by its row in the form, in every language.
    #[test]
    fn an_answer_that_looks_like_another_is_refused_at_its_field_naming_the_other() {
        let form = Form::from_pairs(&[
            ("title", "T"),
            ("lang", "en"),
            ("expiry", "7"),
            ("q0", "Lunch?"),
            ("q0o0", ""),
            ("q0o1", "Pizza"),
            ("q0o2", "Yes"),
            ("q0o3", "\u{420}izza"),
            ("q0o4", "Ye\u{200b}s"),
        ]);
        let (body, origins) = Draft::from_form(&form).to_json();
        let errors = NewPoll::from_json(&body).unwrap_err();
        for lang in Lang::ALL {
            let ctx = Ctx::new(Choice { lang, explicit: false }, "/");
            let p = problems(&ctx, &errors, &origins);
            let at: Vec<(&str, String)> = p.fields.iter().map(|f| (f.id.as_str(), f.message.clone())).collect();
            assert_eq!(at, [("f-q0o3", (ctx.t.err_lookalike)(2)), ("f-q0o4", (ctx.t.err_lookalike)(3))], "{lang:?}");
        }
        let p = problems(&en(), &errors, &origins);
        assert!(p.fields[0].message.starts_with("This answer looks the same as answer 2 of this question"), "{p:?}");
        assert_eq!(p.fields[0].name, "Question 1, Answer 4");
    }

    fn en() -> Ctx<'static> {
        Ctx::new(Choice { lang: Lang::En, explicit: false }, "/")
    }

    #[test]
    fn each_type_sends_only_its_own_fields() {
        let form = Form::from_pairs(&[
            ("title", "T"),
            ("lang", "en"),
            ("expiry", "7"),
            ("q0", "Lunch?"),
            ("q0type", "single"),
            ("q0o0", "A"),
            ("q0o1", "B"),
            ("q0min", "2"),
            ("q0from", "1"),
            ("q0to", "5"),
            ("q0low", "never"),
            ("q1", "Toppings?"),
            ("q1type", "multiple"),
            ("q1required", "1"),
            ("q1o0", "Ham"),
            ("q1o1", ""),
            ("q1o2", "Egg"),
            ("q1o3", "Olive"),
            ("q1min", " 2 "),
            ("q1max", ""),
            ("q1from", "1"),
            ("q1to", "5"),
            ("q2", "Order?"),
            ("q2type", "ranked"),
            ("q2o0", "X"),
            ("q2o1", "Y"),
            ("q2max", "1"),
            ("q3", "How good?"),
            ("q3type", "scale"),
            ("q3required", "1"),
            ("q3o0", "left over from another type"),
            ("q3min", "1"),
            ("q3from", "0"),
            ("q3to", "10"),
            ("q3low", "bad"),
            ("q3high", " "),
            // A scale row with only its selects set is blank: no row.
            ("q4", ""),
            ("q4type", "scale"),
            ("q4from", "1"),
            ("q4to", "5"),
            ("q4o0", "ignored too"),
        ]);
        let draft = Draft::from_form(&form);
        let (body, origins) = draft.to_json();
        assert_eq!(
            body["questions"],
            json!([
                {"label": "Lunch?", "options": ["A", "B"]},
                {"label": "Toppings?", "type": "multiple", "required": true, "options": ["Ham", "Egg", "Olive"], "minChoices": 2},
                {"label": "Order?", "type": "ranked", "options": ["X", "Y"]},
                {"label": "How good?", "type": "scale", "required": true, "scaleMin": 0, "scaleMax": 10, "minLabel": "bad"},
            ])
        );
        assert_eq!(origins.iter().map(|o| o.row).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(origins[1].options, [0, 2, 3]);
        assert!(origins[3].options.is_empty());
        let poll = NewPoll::from_json(&body).map_err(|e| format!("{e:?}"));
        let kinds =
            poll.map(|p| p.questions.iter().map(|q| (q.kind, q.required, q.choice_bounds())).collect::<Vec<_>>());
        assert_eq!(
            kinds,
            Ok(vec![
                (QuestionKind::Single, false, (1, 1)),
                (QuestionKind::Multiple, true, (2, 3)),
                (QuestionKind::Ranked, false, (1, 2)),
                (QuestionKind::Scale, true, (1, 1)),
            ])
        );
    }

    #[test]
    fn a_blank_form_starts_every_row_as_single_choice_on_a_five_point_scale() {
        let d = Draft::blank(Lang::En);
        assert!(d.questions.iter().all(|q| q.kind == "single" && q.scale_min == "1" && q.scale_max == "5"));
        let (body, _) = d.to_json();
        assert_eq!(body["questions"], json!([]));
    }

    #[test]
    fn structural_buttons_edit_the_draft_within_limits() {
        let mut d = Draft::blank(Lang::En);
        assert_eq!((d.questions.len(), d.questions[0].options.len()), (1, 3), "one question of three answers to start");
        d.questions.push(DraftQuestion::blank());
        assert_eq!(d.edit("add-question").as_deref(), Some("f-q2"));
        assert_eq!(d.edit("add-option-0").as_deref(), Some("f-q0o3"));
        d.questions[2].label = "third".into();
        assert_eq!(d.edit("up-2").as_deref(), Some("f-q1"));
        assert_eq!(d.questions[1].label, "third");
        assert_eq!(d.edit("remove-question-1").as_deref(), Some("f-q1"));
        assert_eq!(d.questions.len(), 2);
        assert_eq!(d.edit("up-0"), None);
        assert_eq!(d.edit("add-option-99"), None);
        assert_eq!(d.edit("bogus"), None);
        for _ in 0..30 {
            d.edit("add-question");
            d.edit("add-option-0");
        }
        assert_eq!(d.questions.len(), QUESTIONS.max);
        assert_eq!(d.questions[0].options.len(), OPTIONS.max);
    }
}
