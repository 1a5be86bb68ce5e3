//! `/`: the creation form and the page shown once after creation.
//!
//! The form works without script: it shows a fixed set of rows (blank ones
//! are ignored), and its "add", "remove" and "move up" buttons are submit
//! buttons that return the form with the change made and everything typed
//! kept. The draft is turned into the API's JSON body and validated by
//! `NewPoll::from_json`, so the form and the API obey the same rules; the
//! resulting field paths are mapped back to the rows the person typed in.

use maud::{Markup, html};
use serde_json::{Value, json};

use super::WebWorker;
use super::ballot::Verdict;
use super::errors::with_headers;
use super::form::{Form, Problems, problem_text};
use super::layout::{Ctx, message_page, notice, page, respond};
use super::settings::{self, SettingsDraft};
use super::uploads::{SlotDraft, Uploads, human_size, kind_name, message as upload_message, mib};
use crate::app::{Created, Links};
use crate::client::ClientGroup;
use crate::day::Day;
use crate::domain::{
    EXPIRY_DAYS, FieldError, Key, Lang, NewMedia, NewPoll, OPTIONS, Problem, QUESTIONS, Seg, Slot, check_alt,
};
use crate::error::Error;
use crate::http::{Request, Response};
use crate::i18n::endonym;
use crate::secret::{MediaId, PollId};

/// Rows shown on a blank form.
const START_QUESTIONS: usize = 2;
const START_OPTIONS: usize = 4;
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

#[derive(Clone, Debug, Default)]
pub struct DraftQuestion {
    pub label: String,
    pub options: Vec<String>,
    pub media: SlotDraft,
}

impl DraftQuestion {
    fn blank() -> DraftQuestion {
        DraftQuestion { label: String::new(), options: vec![String::new(); START_OPTIONS], media: SlotDraft::default() }
    }

    /// A row with nothing typed and no file is left out; a row with only a
    /// file is not, so that its missing label is pointed out.
    fn is_blank(&self) -> bool {
        self.label.trim().is_empty() && self.options.iter().all(|o| o.trim().is_empty()) && self.media.is_empty()
    }
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
    /// `shuffle`), `q{i}` and `q{i}o{j}`.
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
            .map(|i| DraftQuestion {
                label: form.text(&format!("q{i}")),
                options: (0..cols[i]).map(|j| form.text(&format!("q{i}o{j}"))).collect(),
                media: SlotDraft::default(),
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
            let kept: Vec<usize> = (0..q.options.len()).filter(|&j| !q.options[j].trim().is_empty()).collect();
            questions.push(json!({
                "label": q.label,
                "options": kept.iter().map(|&j| q.options[j].as_str()).collect::<Vec<_>>(),
            }));
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
            Field::Setting(_) => t.field_results.to_owned(),
            Field::Questions => t.questions_heading.to_owned(),
            Field::QuestionSet(i) | Field::Question(i) => (t.question_legend)(i + 1),
            Field::Option(i, j) => format!("{}, {}", (t.question_legend)(i + 1), (t.field_option)(j + 1)),
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
            [K(key @ (Key::ResultsPublic | Key::ResultsVisibility | Key::ClosesOn | Key::ShuffleOptions))] => {
                Some(Field::Setting(*key))
            }
            [K(Key::Questions)] => Some(Field::Questions),
            [K(Key::Questions), Index(i), rest @ ..] => {
                let o = origins.get(*i)?;
                Some(match rest {
                    [K(Key::Label)] => Field::Question(o.row),
                    [K(Key::Options), Index(j)] => match o.options.get(*j) {
                        Some(&j) => Field::Option(o.row, j),
                        None => Field::QuestionSet(o.row),
                    },
                    _ => Field::QuestionSet(o.row),
                })
            }
            _ => None,
        }
    }
}

impl Problems {
    fn at(&mut self, t: &crate::i18n::Catalogue, field: Field, message: String) {
        self.field(field.id(), field.name(t), message);
    }
}

/// Maps the domain's problems to this form's fields.
fn problems(ctx: &Ctx, errors: &[FieldError], origins: &[Origin]) -> Problems {
    let mut p = Problems::default();
    for e in errors {
        let message = problem_text(ctx.t, &e.problem);
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

/// Which file field of a form, under which heading; `unfolded` shows it
/// open even when it holds nothing.
pub struct SlotField<'a> {
    pub prefix: &'a str,
    pub legend: &'a str,
    pub unfolded: bool,
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
    let SlotField { prefix, legend, unfolded } = field;
    let t = ctx.t;
    let id = format!("f-{prefix}");
    let errors = p.of(&id);
    let limits = &uploads.limits;
    let hint = (t.media_file_hint)(mib(limits.image_bytes), mib(limits.audio_bytes), mib(limits.video_bytes));
    // Folded away unless it holds something: a form of twenty questions
    // stays readable. `<details>` needs no script.
    let open = unfolded
        || m.staged.is_some()
        || !errors.is_empty()
        || !m.alt.is_empty()
        || !p.of(&format!("{id}-alt")).is_empty();
    html! {
        details.media-slot open[open] {
            summary { (legend) }
            div.media-fields {
                @if let Some(staged) = &m.staged {
                    p.held id=(format!("{id}-held")) {
                        ((t.media_held)(kind_name(t, staged.clean.kind), &human_size(staged.clean.bytes.len())))
                    }
                    input type="hidden" name=(format!("{prefix}-held")) value=(staged.reference);
                    button.secondary type="submit" name="action" value=(format!("media-drop-{prefix}")) formnovalidate { (t.media_drop) }
                }
                div.field {
                    label for=(id) { (t.media_file) }
                    p.hint id=(format!("{id}-hint")) { (hint) }
                    (errors_of(&id, &errors))
                    input type="file" id=(id) name=(prefix) accept=(ACCEPT)
                        aria-invalid=[(!errors.is_empty()).then_some("true")]
                        aria-describedby=[described(&id, true, &errors)]
                        autofocus[focus == Some(id.as_str())];
                }
                (text_field(&format!("{id}-alt"), &format!("{prefix}-alt"), t.media_alt, &m.alt, Some(t.media_alt_hint), crate::domain::ALT.max_chars, p, focus))
            }
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

fn summary(ctx: &Ctx, p: &Problems) -> Markup {
    html! {
        @if !p.is_empty() {
            div.error-summary role="alert" tabindex="-1" data-focus {
                h2 { (ctx.t.errors_heading) }
                ul {
                    @for g in &p.general { li { (g) } }
                    @for f in &p.fields { li { a href=(format!("#{}", f.id)) { (f.name) ": " (f.message) } } }
                }
            }
        }
    }
}

fn form_body(ctx: &Ctx, draft: &Draft, p: &Problems, focus: Option<&str>, uploads: &Uploads) -> Markup {
    let t = ctx.t;
    let qerrors = p.of("f-questions");
    html! {
        h1 { (t.create_title) }
        p.lead { (t.create_intro) }
        (summary(ctx, p))
        form.create method="post" action=(ctx.action()) enctype="multipart/form-data" novalidate {
            // The first submit button is the one Enter triggers: creating, not
            // adding a row. It is hidden; the visible one is at the end.
            button type="submit" name="action" value="create" hidden { (t.submit_create) }
            input type="hidden" name="once" value=(draft.once);
            (text_field("f-title", "title", t.field_title, &draft.title, Some(t.field_title_hint), crate::domain::TITLE.max_chars, p, focus))
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
            (media_fieldset(ctx, SlotField { prefix: &media_prefix(None), legend: t.media_poll_legend, unfolded: false }, &draft.media, p, focus, uploads))
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
                        ol.options {
                            @for (j, o) in q.options.iter().enumerate() {
                                li { (text_field(&format!("f-q{i}o{j}"), &format!("q{i}o{j}"), &(t.field_option)(j + 1), o, None, crate::domain::OPTION.max_chars, p, focus)) }
                            }
                        }
                        (media_fieldset(ctx, SlotField { prefix: &media_prefix(Some(i)), legend: t.media_question_legend, unfolded: false }, &q.media, p, focus, uploads))
                        div.row-actions {
                            @if q.options.len() < OPTIONS.max {
                                button.secondary type="submit" name="action" value=(format!("add-option-{i}")) formnovalidate { (t.add_option) }
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
            div.submit {
                button.primary type="submit" name="action" value="create" { (t.submit_create) }
            }
        }
    }
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
    draft.read_media(uploads, form, ClientGroup::of(req.client));
    let action = form.get("action").unwrap_or("create");
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
        Verdict::Used => return Ok(message_page(&ctx, 409, ctx.t.error_title, ctx.t.err_create_sent)),
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

fn created_page(ctx: &Ctx, links: &Links, created: &Created) -> Response {
    let t = ctx.t;
    let poll = &created.poll;
    let id = &poll.id;
    let share = links.share(id);
    let results = links.results(id);
    let admin = links.admin(id, &created.token);
    let results_hint = settings::visibility_text(t, poll);
    let body = html! {
        h1 { (t.created_title) }
        (notice("ok", t.created_intro))
        p.meta { ((t.erased_on)(&t.day(&poll.expires_on.to_string()))) }
        (link_field(ctx, "link-share", t.created_share, t.created_share_hint, &share))
        (link_field(ctx, "link-results", t.created_results, &results_hint, &results))
        div.warning role="note" aria-labelledby="warn-title" {
            h2 id="warn-title" { (t.created_warning_title) }
            p { (t.created_warning) }
            (link_field(ctx, "link-admin", t.created_admin, t.created_admin_hint, &admin))
        }
        p { a.button href=(Links::share_path(id)) { (t.open_poll) } }
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
        let ctx = Ctx::new(super::super::lang::Choice { lang: Lang::En, explicit: false }, "/");
        let p = problems(&ctx, &errors, &origins);
        assert_eq!(p.fields.len(), 1, "{p:?}");
        assert_eq!(p.fields[0].id, "f-q1o2");
        assert_eq!(p.fields[0].name, "Question 2, Answer 3");
    }

    #[test]
    fn structural_buttons_edit_the_draft_within_limits() {
        let mut d = Draft::blank(Lang::En);
        assert_eq!(d.edit("add-question").as_deref(), Some("f-q2"));
        assert_eq!(d.edit("add-option-0").as_deref(), Some("f-q0o4"));
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
