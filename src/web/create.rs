//! `/`: the creation form and the page shown once after creation.
//!
//! The form works without script: it shows a fixed set of rows (blank ones
//! are ignored), and its "add", "remove" and "move up" buttons are submit
//! buttons that return the form with the change made and everything typed
//! kept. The draft is turned into the API's JSON body and validated by
//! `NewPoll::from_json`, so the form and the API obey the same rules; the
//! resulting field paths are mapped back to the rows the person typed in.

use maud::{Markup, html};
use serde_json::{Map, Value, json};

use super::WebWorker;
use super::ballot::Verdict;
use super::device;
use super::errors::with_headers;
use super::form::{Form, Problems, problem_text};
use super::layout::{Ctx, notice, page, respond};
use super::settings::{self, SettingsDraft};
use super::uploads::{SlotDraft, Uploads, human_size, kind_name, message as upload_message, mib};
use crate::app::{Created, Links};
use crate::client::ClientGroup;
use crate::day::Day;
use crate::domain::question::{END_LABEL, SCALE_CEILING, SCALE_FLOOR};
use crate::domain::{
    DuplicateCheck, EXPIRY_DAYS, FieldError, Key, Lang, NewMedia, NewPoll, OPTIONS, Problem, QUESTIONS, QuestionKind,
    Seg, Slot, check_alt,
};
use crate::error::Error;
use crate::http::{Request, Response};
use crate::i18n::endonym;
use crate::secret::{MediaId, PollId};

/// The name suffixes of a question row's type fields: `q{i}{suffix}`, with
/// the HTML id `f-q{i}-{suffix}` (docs/WEB.md).
const TYPE: &str = "type";
const REQUIRED: &str = "required";
const MIN_CHOICES: &str = "min";
const MAX_CHOICES: &str = "max";
const SCALE_MIN: &str = "from";
const SCALE_MAX: &str = "to";
const MIN_LABEL: &str = "low";
const MAX_LABEL: &str = "high";

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
    pub media: SlotDraft,
}

/// The ends a new scale row offers (a common five-point scale).
const DEFAULT_SCALE: (u8, u8) = (1, 5);

impl DraftQuestion {
    fn blank() -> DraftQuestion {
        DraftQuestion {
            kind: QuestionKind::Single.as_str().to_owned(),
            options: vec![String::new(); START_OPTIONS],
            scale_min: DEFAULT_SCALE.0.to_string(),
            scale_max: DEFAULT_SCALE.1.to_string(),
            ..DraftQuestion::default()
        }
    }

    /// The chosen type; `None` for a value no form of ours sends (the API's
    /// check then reports it at the type field).
    fn kind(&self) -> Option<QuestionKind> {
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
        !typed(&self.label) && !options && !choices && !labels && self.media.is_empty()
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
        if kind.has_options() {
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

/// A number field's value as the API would get it from a client: a whole
/// number when it is one, else the text, so the API's check names the field.
fn number_or_text(value: &str) -> Value {
    value.trim().parse::<i64>().map_or_else(|_| json!(value), |n| json!(n))
}

/// The field name of the poll's file ("pm") or question `i`'s ("q{i}m").
fn media_prefix(row: Option<usize>) -> String {
    row.map_or_else(|| "pm".to_owned(), |i| format!("q{i}m"))
}

/// Where a JSON question and its options came from in the form.
struct Origin {
    row: usize,
    options: Vec<usize>,
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
        for name in form.names() {
            let Some(rest) = name.strip_prefix('q') else { continue };
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
    fn held_references(&self) -> Vec<String> {
        std::iter::once(&self.media)
            .chain(self.questions.iter().map(|q| &q.media))
            .filter_map(|m| m.staged.as_ref().map(|s| s.reference.clone()))
            .collect()
    }

    /// The API body for this draft, and where each question came from.
    /// Blank questions and blank answers are left out.
    fn to_json(&self) -> (Value, Vec<Origin>) {
        let mut origins = Vec::new();
        let mut questions = Vec::new();
        for (row, q) in self.questions.iter().enumerate().filter(|(_, q)| !q.is_blank()) {
            let (question, kept) = q.to_json();
            questions.push(question);
            origins.push(Origin { row, options: kept });
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
    fn edit(&mut self, action: &str) -> Option<String> {
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
        Key::ScaleMin => t.field_scale_min,
        Key::ScaleMax => t.field_scale_max,
        Key::MinLabel => t.field_min_label,
        Key::MaxLabel => t.field_max_label,
        _ => t.field_type,
    }
}

impl Problems {
    fn at(&mut self, t: &crate::i18n::Catalogue, field: Field, message: String) {
        self.field(field.id(), field.name(t), message);
    }
}

/// Maps the domain's problems to this form's fields.
fn problems(ctx: &Ctx, errors: &[FieldError], origins: &[Origin]) -> Problems {
    let t = ctx.t;
    let mut p = Problems::default();
    for e in errors {
        let message = match (&e.problem, Field::of(e, origins)) {
            // Said by what is wrong (issue 25): an empty form is not told
            // of the most it may have.
            (Problem::Count { list: crate::domain::List::Questions, min, max }, _) => {
                if origins.len() < *min {
                    t.err_questions_none.to_owned()
                } else {
                    (t.err_questions_many)(*max)
                }
            }
            // A scale's end at or below its start: said against the start.
            (Problem::IntegerRange { min, .. }, Some(Field::Detail(_, Key::ScaleMax))) => {
                (t.err_scale_to_above)(u8::try_from(min.saturating_sub(1)).unwrap_or(u8::MAX))
            }
            _ => problem_text(t, &e.problem),
        };
        match Field::of(e, origins) {
            Some(field) => p.at(ctx.t, field, message),
            None => p.general.push(message),
        }
    }
    p
}

/// Problems with the files of a draft: uploads refused or lost, and images
/// without their required alt text. Also the media to store, by slot, when
/// there is no problem. `origins` maps the poll's questions to form rows.
fn media_problems(ctx: &Ctx, draft: &Draft, origins: &[Origin], p: &mut Problems) -> Vec<NewMedia> {
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

/// A problem with an alt text or caption, in the reader's words.
pub fn alt_text(t: &crate::i18n::Catalogue, problem: &Problem) -> String {
    match problem {
        Problem::Required => t.err_alt_required.to_owned(),
        other => problem_text(t, other),
    }
}

pub fn form_page(ctx: &Ctx, draft: &Draft, uploads: &Uploads) -> Response {
    respond(200, ctx.lang, page(ctx, ctx.t.create_title, form_body(ctx, draft, &Problems::default(), None, uploads)))
}

fn form_response(
    ctx: &Ctx,
    status: u16,
    draft: &Draft,
    problems: &Problems,
    focus: Option<&str>,
    uploads: &Uploads,
) -> Response {
    respond(status, ctx.lang, page(ctx, ctx.t.create_title, form_body(ctx, draft, problems, focus, uploads)))
}

/// Which file field of a form, and the summary it is folded under. `None`
/// shows it as is: a section that holds only this field (the admin page's)
/// already says what it is, and a summary saying it again ("File" above a
/// field labelled "File") would only repeat it.
pub struct SlotField<'a> {
    pub prefix: &'a str,
    pub legend: Option<&'a str>,
}

/// A form's file field named `prefix`, with the file it holds, if any. Its
/// field ids are `f-{prefix}` and `f-{prefix}-alt`.
pub fn media_fieldset(
    ctx: &Ctx,
    field: SlotField,
    m: &SlotDraft,
    p: &Problems,
    focus: Option<&str>,
    uploads: &Uploads,
) -> Markup {
    let SlotField { prefix, legend } = field;
    let t = ctx.t;
    let id = format!("f-{prefix}");
    let errors = p.of(&id);
    let limits = &uploads.limits;
    let hint = (t.media_file_hint)(mib(limits.image_bytes), mib(limits.audio_bytes), mib(limits.video_bytes));
    // Folded away unless it holds something: a form of twenty questions
    // stays readable. `<details>` needs no script.
    let open = m.staged.is_some() || !errors.is_empty() || !m.alt.is_empty() || !p.of(&format!("{id}-alt")).is_empty();
    let fields = html! {
            div.media-fields {
                @if let Some(staged) = &m.staged {
                    // The file kept from an earlier send, as a card: what it
                    // is and a way to remove it. (The browser's own field
                    // below says "No file chosen": it only offers another.)
                    @let clean = &staged.clean;
                    div.held-file id=(format!("{id}-held")) {
                        // A picture shows itself (decorative: the text beside
                        // it says what it is); a sound or video, its glyph.
                        @if clean.kind == crate::media::Kind::Image {
                            img.held-thumb src=(format!("/held/{}", staged.reference)) alt="" decoding="async";
                        } @else {
                            (kind_glyph(clean.kind))
                        }
                        p {
                            strong { (t.media_kept) } br;
                            span.held-what id=(format!("{id}-held-what")) {
                                (kind_name(t, clean.kind))
                                @if let (Some(w), Some(h)) = (clean.width, clean.height) { " · " (w) "\u{A0}×\u{A0}" (h) }
                                " · " (human_size(clean.bytes.len()))
                            }
                        }
                        button.secondary.remove type="submit" name="action" value=(format!("media-drop-{prefix}")) formnovalidate
                            aria-describedby=(format!("{id}-held-what")) { (t.media_drop) }
                    }
                    input type="hidden" name=(format!("{prefix}-held")) value=(staged.reference);
                }
                div.field {
                    label for=(id) { @if m.staged.is_some() { (t.media_replace) } @else { (t.media_file) } }
                    p.hint id=(format!("{id}-hint")) { (hint) }
                    (errors_of(&id, &errors))
                    input type="file" id=(id) name=(prefix) accept=(ACCEPT)
                        aria-invalid=[(!errors.is_empty()).then_some("true")]
                        aria-describedby=[described(&id, true, &errors)]
                        autofocus[focus == Some(id.as_str())];
                }
                (text_field(&format!("{id}-alt"), &format!("{prefix}-alt"), t.media_alt, &m.alt, Some(t.media_alt_hint), crate::domain::ALT.max_chars, p, focus))
            }
    };
    match legend {
        Some(legend) => html! { details.media-slot open[open] { summary { (legend) } (fields) } },
        None => fields,
    }
}

/// A small drawing of a file's kind (picture, sound, video), beside the
/// kept file's name; decoration only.
fn kind_glyph(kind: crate::media::Kind) -> Markup {
    use crate::media::Kind;
    let d = match kind {
        Kind::Image => "M4 6h24v20H4z M8 22l6-8 5 6 3-4 4 6z",
        Kind::Audio => "M12 8v13a3 3 0 1 1-2-2.8V8l12-3v13a3 3 0 1 1-2-2.8V8.5z",
        Kind::Video => "M4 8h17v16H4z M21 14l7-4v12l-7-4z",
    };
    html! {
        svg.kind-glyph viewBox="0 0 32 32" aria-hidden="true" focusable="false" {
            path d=(d) {}
        }
    }
}

/// What the file pickers offer; the server still decides by content alone.
const ACCEPT: &str = "image/jpeg,image/png,image/webp,image/gif,audio/mpeg,audio/ogg,audio/mp4,audio/webm,\
                      video/mp4,video/webm,.mp3,.ogg,.opus,.m4a,.mp4,.webm";

/// `aria-describedby` for a field with a hint and maybe errors.
pub(super) fn described(id: &str, hint: bool, errors: &[&str]) -> Option<String> {
    let mut ids = Vec::new();
    if hint {
        ids.push(format!("{id}-hint"));
    }
    if !errors.is_empty() {
        ids.push(format!("{id}-error"));
    }
    (!ids.is_empty()).then(|| ids.join(" "))
}

pub(super) fn errors_of(id: &str, errors: &[&str]) -> Markup {
    html! {
        @if !errors.is_empty() {
            p.field-error id=(format!("{id}-error")) {
                @for (i, e) in errors.iter().enumerate() {
                    @if i > 0 { " " }
                    (e)
                }
            }
        }
    }
}

/// A text input with its label, hint and errors.
// Each argument is one attribute of the field; a struct would only rename them.
#[allow(clippy::too_many_arguments)]
fn text_field(
    id: &str,
    name: &str,
    label: &str,
    value: &str,
    hint: Option<&str>,
    max: usize,
    p: &Problems,
    focus: Option<&str>,
) -> Markup {
    let errors = p.of(id);
    html! {
        div.field {
            label for=(id) { (label) }
            @if let Some(h) = hint { p.hint id=(format!("{id}-hint")) { (h) } }
            (errors_of(id, &errors))
            input type="text" id=(id) name=(name) value=(value) maxlength=(max)
                aria-invalid=[(!errors.is_empty()).then_some("true")]
                aria-describedby=[described(id, hint.is_some(), &errors)]
                autofocus[focus == Some(id)];
        }
    }
}

/// The types whose questions list options (`data-kinds`: the script shows
/// a group only for the types it names; without script all are shown, and
/// the server reads only the fields of the chosen type).
const WITH_OPTIONS: &str = "single multiple ranked";

/// A question row's field `f-q{i}-{suffix}` (named `q{i}{suffix}`): its
/// id, name and the problems at it.
fn detail<'a>(i: usize, suffix: &str, p: &'a Problems) -> (String, String, Vec<&'a str>) {
    let id = format!("f-q{i}-{suffix}");
    let errors = p.of(&id);
    (id, format!("q{i}{suffix}"), errors)
}

/// The type select and the "required" box of question row `i`.
fn type_fields(ctx: &Ctx, i: usize, q: &DraftQuestion, p: &Problems, focus: Option<&str>) -> Markup {
    let t = ctx.t;
    let (id, name, errors) = detail(i, TYPE, p);
    let (req_id, req_name, _) = detail(i, REQUIRED, p);
    let chosen = q.kind();
    html! {
        div.field.kind {
            label for=(id) { (t.field_type) }
            (errors_of(&id, &errors))
            select id=(id) name=(name) data-kind
                aria-invalid=[(!errors.is_empty()).then_some("true")]
                aria-describedby=[described(&id, false, &errors)]
                autofocus[focus == Some(id.as_str())] {
                @for (kind, label) in QuestionKind::KINDS.iter().zip(t.type_names) {
                    option value=(kind.as_str()) selected[chosen == Some(*kind)] { (label) }
                }
            }
        }
        div.field.check {
            input type="checkbox" id=(req_id) name=(req_name) value="1" checked[q.required];
            label for=(req_id) { (t.field_required) }
        }
    }
}

/// How many answers a multiple-choice question takes (blank: the API's
/// defaults, which the hint states).
fn choice_fields(ctx: &Ctx, i: usize, q: &DraftQuestion, p: &Problems, focus: Option<&str>) -> Markup {
    let t = ctx.t;
    let hint_id = format!("f-q{i}-choices-hint");
    let max = OPTIONS.max;
    html! {
        fieldset.kind-group data-kinds="multiple" {
            legend { (t.type_names[1]) }
            p.hint id=(hint_id) { (t.field_choices_hint) }
            div.pair {
                @for (suffix, label, value) in [(MIN_CHOICES, t.field_min_choices, &q.min_choices), (MAX_CHOICES, t.field_max_choices, &q.max_choices)] {
                    @let (id, name, errors) = detail(i, suffix, p);
                    div.field {
                        label for=(id) { (label) }
                        (errors_of(&id, &errors))
                        input type="number" id=(id) name=(name) value=(value) min="1" max=(max) step="1" inputmode="numeric"
                            aria-invalid=[(!errors.is_empty()).then_some("true")]
                            aria-describedby=(described_by(&hint_id, &id, &errors))
                            autofocus[focus == Some(id.as_str())];
                    }
                }
            }
        }
    }
}

/// The ends of a scale and their optional labels.
fn scale_fields(ctx: &Ctx, i: usize, q: &DraftQuestion, p: &Problems, focus: Option<&str>) -> Markup {
    let t = ctx.t;
    let ends = [
        (SCALE_MIN, t.field_scale_min, &q.scale_min, SCALE_FLOOR..=SCALE_CEILING - 1),
        (SCALE_MAX, t.field_scale_max, &q.scale_max, SCALE_FLOOR + 1..=SCALE_CEILING),
    ];
    html! {
        fieldset.kind-group data-kinds="scale" {
            legend { (t.type_names[3]) }
            div.pair {
                @for (suffix, label, value, values) in ends {
                    @let (id, name, errors) = detail(i, suffix, p);
                    // The error under its select, so both ends stay in line.
                    div.field {
                        label for=(id) { (label) }
                        select id=(id) name=(name)
                            aria-invalid=[(!errors.is_empty()).then_some("true")]
                            aria-describedby=[described(&id, false, &errors)]
                            autofocus[focus == Some(id.as_str())] {
                            @for v in values {
                                option value=(v) selected[value.trim() == v.to_string()] { (v) }
                            }
                        }
                        (errors_of(&id, &errors))
                    }
                }
            }
            (text_field(&format!("f-q{i}-{MIN_LABEL}"), &format!("q{i}{MIN_LABEL}"), t.field_min_label, &q.min_label, None, END_LABEL.max_chars, p, focus))
            (text_field(&format!("f-q{i}-{MAX_LABEL}"), &format!("q{i}{MAX_LABEL}"), t.field_max_label, &q.max_label, None, END_LABEL.max_chars, p, focus))
        }
    }
}

/// `aria-describedby` for a field described by a shared hint and its own
/// errors.
fn described_by(hint_id: &str, id: &str, errors: &[&str]) -> String {
    if errors.is_empty() { hint_id.to_owned() } else { format!("{hint_id} {id}-error") }
}

fn summary(ctx: &Ctx, p: &Problems) -> Markup {
    error_summary(ctx, ctx.t.errors_heading, p)
}

/// The list of a form's problems, above the form: a heading, then one line
/// per problem; a field's problem links to the field by its name (short,
/// calm links), the message after it in plain text, joined as the
/// language joins a label and its text.
pub fn error_summary(ctx: &Ctx, heading: &str, p: &Problems) -> Markup {
    let t = ctx.t;
    html! {
        @if !p.is_empty() {
            div.error-summary role="alert" tabindex="-1" data-focus aria-labelledby="error-summary-heading" {
                h2 id="error-summary-heading" { (heading) }
                ul {
                    @for g in &p.general { li { (g) } }
                    @for f in &p.fields { li { a href=(format!("#{}", f.id)) { (f.name) } (t.colon) (f.message) } }
                }
            }
        }
    }
}

/// Whether the creation form's "Settings" are shown unfolded: when one of
/// their fields has a problem, or the poll's file is kept.
fn settings_open(draft: &Draft, p: &Problems) -> bool {
    let inside = |id: &str| id != "f-title" && id != "f-questions" && !id.starts_with("f-q");
    !draft.media.is_empty() || p.fields.iter().any(|f| inside(&f.id))
}

fn form_body(ctx: &Ctx, draft: &Draft, p: &Problems, focus: Option<&str>, uploads: &Uploads) -> Markup {
    let t = ctx.t;
    let qerrors = p.of("f-questions");
    html! {
        h1 { (t.create_title) }
        p.tagline { (t.tagline) }
        p.lead { (t.create_intro) }
        (device::my_polls(ctx))
        (summary(ctx, p))
        form.create method="post" action=(ctx.action()) enctype="multipart/form-data" novalidate {
            // The first submit button is the one Enter triggers: creating, not
            // adding a row. It is hidden; the visible one is at the end.
            button type="submit" name="action" value="create" hidden { (t.submit_create) }
            input type="hidden" name="once" value=(draft.once);
            (text_field("f-title", "title", t.field_title, &draft.title, Some(t.field_title_hint), crate::domain::TITLE.max_chars, p, focus))
            section.questions id="f-questions" aria-labelledby="f-questions-heading" tabindex="-1" {
                h2 id="f-questions-heading" { (t.questions_heading) }
                p.hint { (t.questions_hint) }
                (errors_of("f-questions", &qerrors))
                @for (i, q) in draft.questions.iter().enumerate() {
                    @let set_id = format!("f-q{i}-set");
                    fieldset.question id=(set_id) tabindex="-1" {
                        legend { ((t.question_legend)(i + 1)) }
                        (errors_of(&set_id, &p.of(&set_id)))
                        (text_field(&format!("f-q{i}"), &format!("q{i}"), t.field_question, &q.label, None, crate::domain::LABEL.max_chars, p, focus))
                        (type_fields(ctx, i, q, p, focus))
                        div data-kinds=(WITH_OPTIONS) {
                            // With script: a remove button per answer, and
                            // Enter in an answer goes to the next one (adding
                            // it at the end); the labels' wording for new
                            // rows comes along ({n}: the answer's number).
                            ol.options data-options=(i) data-max=(OPTIONS.max)
                                data-label=(numbered(t.field_option)) data-remove=(numbered(t.remove_option)) {
                                @for (j, o) in q.options.iter().enumerate() {
                                    li.option-row {
                                        (text_field(&format!("f-q{i}o{j}"), &format!("q{i}o{j}"), &(t.field_option)(j + 1), o, None, crate::domain::OPTION.max_chars, p, focus))
                                        button.remove-option type="button" data-remove-option hidden aria-label=((t.remove_option)(j + 1)) { "×" }
                                    }
                                }
                            }
                        }
                        (choice_fields(ctx, i, q, p, focus))
                        (scale_fields(ctx, i, q, p, focus))
                        (media_fieldset(ctx, SlotField { prefix: &media_prefix(Some(i)), legend: Some(t.media_question_legend) }, &q.media, p, focus, uploads))
                        div.row-actions {
                            @if q.options.len() < OPTIONS.max {
                                button.secondary type="submit" name="action" value=(format!("add-option-{i}")) formnovalidate data-kinds=(WITH_OPTIONS) { (t.add_option) }
                            }
                            @if i > 0 {
                                button.secondary type="submit" name="action" value=(format!("up-{i}")) formnovalidate { (t.move_up) }
                            }
                            @if draft.questions.len() > 1 {
                                button.secondary.danger type="submit" name="action" value=(format!("remove-question-{i}")) formnovalidate { (t.remove_question) }
                            }
                        }
                    }
                }
                @if draft.questions.len() < QUESTIONS.max {
                    button.secondary type="submit" name="action" value="add-question" formnovalidate { (t.add_question) }
                }
            }
            // The rest has good defaults: folded under "Settings", opened
            // when something in it needs a look (a problem, a kept file).
            details.settings.fold id="f-settings" open[settings_open(draft, p)] {
                summary { h2 id="f-settings-heading" { (t.settings_heading) } }
                div.fold-body {
                    div.field {
                        label for="f-lang" { (t.field_lang) }
                        p.hint id="f-lang-hint" { (t.field_lang_hint) }
                        (errors_of("f-lang", &p.of("f-lang")))
                        select id="f-lang" name="lang" aria-describedby="f-lang-hint" {
                            @for l in Lang::ALL {
                                option value=(l.code()) lang=(l.code()) selected[draft.lang == l.code()] { (endonym(l)) }
                            }
                        }
                    }
                    div.field {
                        label for="f-expiry" { (t.field_expiry) }
                        p.hint id="f-expiry-hint" { (t.field_expiry_hint) }
                        (errors_of("f-expiry", &p.of("f-expiry")))
                        select id="f-expiry" name="expiry" aria-describedby="f-expiry-hint" {
                            @for d in EXPIRY_DAYS {
                                option value=(d) selected[draft.expiry == d.to_string()] { ((t.expiry_option)(d)) }
                            }
                        }
                    }
                    (settings::fields(ctx, "f", &draft.settings, p))
                    (media_fieldset(ctx, SlotField { prefix: &media_prefix(None), legend: Some(t.media_poll_legend) }, &draft.media, p, focus, uploads))
                }
            }
            div.submit {
                button.primary type="submit" name="action" value="create" { (t.submit_create) }
            }
        }
    }
}

/// A numbered text of the catalogue as a template for the script, with
/// `{n}` where the number goes.
fn numbered(text: fn(usize) -> String) -> String {
    text(987_654).replace("987654", "{n}")
}

/// The pseudo poll id the creation form's one-time codes are issued for
/// (ballot codes of real polls can never match it: ids are random).
const CREATE_FORM: &str = "CreationFormOnce";

fn form_key() -> Result<PollId, Error> {
    PollId::parse(CREATE_FORM).ok_or_else(|| Error::internal(anyhow::anyhow!("bad form key")))
}

/// A fresh one-time code for a creation form.
pub fn fresh_once(w: &WebWorker, today: Day) -> Result<String, Error> {
    w.web.ballots.issue(&form_key()?, today).map_err(Error::internal)
}

pub fn post(w: &mut WebWorker, req: &Request, form: &Form, today: Day) -> Result<Response, Error> {
    let ctx = w.ctx(req, None);
    let uploads = &w.web.uploads;
    let mut draft = Draft::from_form(form);
    let action = form.get("action").unwrap_or("create");
    // A reload of "Your poll is ready" sends the form again with its used
    // code: answered before anything else is read, so a file sent along is
    // not staged, and held files (released once the poll was made) are not
    // reported as lost on a form that says the poll was not created.
    if action == "create" && w.web.ballots.check(&form_key()?, &draft.once, today) == Verdict::Used {
        return Ok(already_created(&ctx));
    }
    draft.read_media(uploads, form, ClientGroup::of(req.client));
    if action != "create" {
        let before = draft.held_references();
        let focus = draft.edit(action);
        // A file removed, or removed with its question, is forgotten now.
        let after = draft.held_references();
        uploads.release(before.iter().filter(|r| !after.contains(r)).map(String::as_str));
        // A file refused while the form was being edited is reported now.
        let mut p = Problems::default();
        let (_, origins) = draft.to_json();
        media_problems(&ctx, &draft, &origins, &mut p);
        p.fields.retain(|f| !f.id.ends_with("-alt"));
        let status = if p.is_empty() { 200 } else { 422 };
        return Ok(form_response(&ctx, status, &draft, &p, focus.as_deref(), uploads));
    }
    let (body, origins) = draft.to_json();
    let (poll, mut p) = match NewPoll::from_json(&body) {
        Ok(poll) => (Some(poll), Problems::default()),
        Err(errors) => (None, problems(&ctx, &errors, &origins)),
    };
    let media = media_problems(&ctx, &draft, &origins, &mut p);
    let poll = match poll {
        Some(poll) if p.is_empty() => poll,
        _ => {
            if draft.questions.is_empty() {
                draft.questions.push(DraftQuestion::blank());
            }
            return Ok(form_response(&ctx, 422, &draft, &p, None, uploads));
        }
    };
    // Sent once only: a reload of the page shown after creation sends the
    // form again, and must not create a second poll.
    match w.web.ballots.redeem(&form_key()?, &draft.once, today) {
        Verdict::Valid => {}
        Verdict::Used | Verdict::Reserved => return Ok(already_created(&ctx)),
        Verdict::Invalid => {
            draft.once = fresh_once(w, today)?;
            let mut p = Problems::default();
            p.general.push(ctx.t.err_create_expired.to_owned());
            return Ok(form_response(&ctx, 409, &draft, &p, None, uploads));
        }
    }
    // From here on the code is used up: a form shown again needs a new one.
    draft.once = fresh_once(w, today)?;
    match w.session.create(req.client, &poll, &media, today) {
        Ok(created) => {
            uploads.release(draft.held_references().iter().map(String::as_str));
            Ok(created_page(&ctx, w.session.links(), &created))
        }
        // Rules of the day (a closing day after today): the form comes back.
        Err(Error::Invalid(errors)) => {
            let p = problems(&ctx, &errors, &origins);
            Ok(form_response(&ctx, 422, &draft, &p, None, uploads))
        }
        // Worth another try later: the form comes back as typed.
        Err(e @ (Error::RateLimited(_) | Error::Unavailable { .. })) => {
            let mut p = Problems::default();
            p.general.push(match &e {
                Error::RateLimited(rl) => (ctx.t.err_rate_limited)(rl.retry_after_secs.div_ceil(60)),
                _ => ctx.t.err_unavailable.to_owned(),
            });
            Ok(with_headers(form_response(&ctx, e.status(), &draft, &p, None, uploads), &e))
        }
        Err(e) => Err(e),
    }
}

/// A read-only link with a label, a hint and a copy button (shown by script).
pub fn link_field(ctx: &Ctx, id: &str, label: &str, hint: &str, url: &str) -> Markup {
    html! {
        div.field.link {
            label for=(id) { (label) }
            p.hint id=(format!("{id}-hint")) { (hint) }
            div.copy-row {
                input type="text" id=(id) value=(url) readonly aria-describedby=(format!("{id}-hint")) spellcheck="false";
                button.secondary type="button" data-copy=(id) data-copied=(ctx.t.copied) hidden { (ctx.t.copy) }
            }
        }
    }
}

/// The creation form sent again with a used code: a reload of "Your poll is
/// ready" posts it a second time. Nothing went wrong, so the page says so
/// calmly, and honestly: the links cannot be shown again (the key is kept
/// only as a keyed fingerprint, and the share link needs the poll's id, which
/// only the links carried); the saved admin link, or the browser's history,
/// leads back. Still 409: this request created nothing.
fn already_created(ctx: &Ctx) -> Response {
    let t = ctx.t;
    let body = html! {
        h1 { (t.create_sent_title) }
        @for text in t.create_sent_text { p { (text) } }
        p { a href=(ctx.href("/")) { (t.back_home) } }
    };
    respond(409, ctx.lang, page(ctx, t.create_sent_title, body))
}

/// "Your poll is ready", shown this once: it offers nothing but ways that
/// keep the admin link (issue 25). No language switcher (its links lead to
/// the blank form), the poll opens in a new tab, the script warns before
/// the page is left while the admin link has not been copied or kept, and
/// offers to keep it in this browser. An invite-only poll's next step,
/// issuing codes, is a form that carries the key.
fn created_page(ctx: &Ctx, links: &Links, created: &Created) -> Response {
    let ctx = &ctx.shown_once();
    let t = ctx.t;
    let poll = &created.poll;
    let id = &poll.id;
    let share = links.share(id);
    let results = links.results(id);
    let admin = links.admin(id, &created.token);
    let results_hint = settings::visibility_text(t, poll);
    let invite_only = poll.duplicate_check == DuplicateCheck::Invite;
    let share_hint = if invite_only { t.created_share_hint_invite } else { t.created_share_hint };
    let expires = poll.expires_on.to_string();
    let body = html! {
        h1 { (t.created_title) }
        (notice("ok", t.created_intro))
        p.meta { ((t.erased_on)(&t.day(&expires))) }
        // The share link first, with its QR code (drawn here, as SVG: no
        // request anywhere) for a phone or a projected slide.
        div.share-block {
            div.share-link { (link_field(ctx, "link-share", t.created_share, share_hint, &share)) }
            (super::admin::qr_svg(&share, t.share_qr))
        }
        (link_field(ctx, "link-results", t.created_results, &results_hint, &results))
        div.warning id="created-warning" role="note" aria-labelledby="warn-title" {
            h2 id="warn-title" { (t.created_warning_title) }
            p { (t.created_warning) }
            (link_field(ctx, "link-admin", t.created_admin, t.created_admin_hint, &admin))
            (device::keep_admin(ctx, id.as_str(), poll.title.as_str(), &expires, &admin))
        }
        div.row-actions {
            @if invite_only {
                // A POST carrying the key: the dashboard opens with its
                // invite section unfolded (it is, on an invite-only poll).
                form method="post" action=(format!("{}/admin?lang={}", Links::share_path(id), ctx.lang.code())) {
                    input type="hidden" name="token" value=(created.token.expose());
                    button.primary type="submit" { (t.created_next_invites) }
                }
            }
            a.button.secondary[invite_only] href=(Links::share_path(id)) target="_blank" rel="noopener" {
                (t.open_poll) span.visually-hidden { " " (t.opens_new_tab) }
            }
        }
    };
    respond(201, ctx.lang, page(ctx, t.created_title, body))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    fn uploads() -> Uploads {
        Uploads::new(crate::media::Limits::default(), 1 << 20, 1 << 20).unwrap()
    }

    fn en() -> Ctx<'static> {
        Ctx::new(super::super::lang::Choice { lang: Lang::En, explicit: false }, "/")
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
    fn problems_of_type_fields_map_back_to_those_fields() {
        let form = Form::from_pairs(&[
            ("title", "T"),
            ("lang", "en"),
            ("expiry", "7"),
            ("q0", ""),
            ("q1", "Toppings?"),
            ("q1type", "multiple"),
            ("q1o0", "Ham"),
            ("q1o1", "Egg"),
            ("q1min", "3"),
            ("q1max", "two"),
            ("q2", "How good?"),
            ("q2type", "scale"),
            ("q2from", "5"),
            ("q2to", "5"),
            ("q2low", &"x".repeat(END_LABEL.max_chars + 1)),
            ("q3", "Odd"),
            ("q3type", "bogus"),
            ("q3o0", "a"),
            ("q3o1", "b"),
        ]);
        let (body, origins) = Draft::from_form(&form).to_json();
        let errors = NewPoll::from_json(&body).unwrap_err();
        let p = problems(&en(), &errors, &origins);
        let found: Vec<(&str, &str)> = p.fields.iter().map(|f| (f.id.as_str(), f.name.as_str())).collect();
        for (id, name) in [
            ("f-q1-min", "Question 2, At least (answers)"),
            ("f-q1-max", "Question 2, At most (answers)"),
            ("f-q2-to", "Question 3, To"),
            ("f-q2-low", "Question 3, Label at the low end (optional)"),
            ("f-q3-type", "Question 4, Type of question"),
        ] {
            assert!(found.contains(&(id, name)), "{id} not in {found:?}");
        }
        assert!(p.general.is_empty(), "{p:?}");
        let t = crate::i18n::catalogue(Lang::En);
        let at = |id: &str| p.of(id).join(" ");
        assert_eq!(at("f-q1-min"), (t.err_range)(1, 2));
        assert_eq!(at("f-q2-to"), (t.err_scale_to_above)(5));
        assert_eq!(at("f-q2-low"), (t.err_too_long)(END_LABEL.max_chars));
        assert_eq!(at("f-q3-type"), t.err_choice);
        // Each message sits at its field in the page, which points to it.
        let ctx = en();
        let html = form_body(&ctx, &Draft::from_form(&form), &p, None, &uploads()).into_string();
        for id in ["f-q1-min", "f-q1-max", "f-q2-to", "f-q2-low", "f-q3-type"] {
            assert!(html.contains(&format!(r#"id="{id}-error""#)), "{id}");
            assert!(html.contains(&format!(r##"href="#{id}""##)), "{id}");
        }
    }

    #[test]
    fn the_form_offers_every_type_with_its_fields_marked_for_the_script() {
        let mut d = Draft::blank(Lang::En);
        d.questions.push(DraftQuestion::blank());
        d.questions[1].kind = "scale".into();
        d.questions[1].required = true;
        let html = form_body(&en(), &d, &Problems::default(), None, &uploads()).into_string();
        for name in ["q0type", "q0required", "q0min", "q0max", "q0from", "q0to", "q0low", "q0high", "q1o2"] {
            assert!(html.contains(&format!(r#"name="{name}""#)), "{name}");
        }
        assert!(html.contains(r#"<option value="scale" selected>Scale</option>"#), "{html}");
        assert!(html.contains(r#"id="f-q1-required" name="q1required" value="1" checked"#), "{html}");
        assert!(html.contains(r#"<option value="5" selected>5</option>"#));
        assert_eq!(html.matches(r#"data-kinds="scale""#).count(), 2);
        assert_eq!(html.matches(r#"data-kinds="multiple""#).count(), 2);
        assert!(html.contains(r#"aria-describedby="f-q0-choices-hint""#));
    }

    #[test]
    fn the_french_problem_list_puts_a_narrow_space_before_its_colons() {
        let ctx = Ctx::new(super::super::lang::Choice { lang: Lang::Fr, explicit: false }, "/");
        let mut p = Problems::default();
        p.field("f-title", ctx.t.field_title, "Obligatoire.");
        p.field("f-q0o1", (ctx.t.field_option)(2), "Trop long.");
        let html = form_body(&ctx, &Draft::blank(Lang::Fr), &p, None, &uploads()).into_string();
        assert!(html.contains("</a>\u{202F}: Obligatoire."), "{html}");
        // No text of the page puts a plain space before a colon.
        assert!(!html.contains(" :") && !html.contains("&nbsp;:"), "{html}");
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
