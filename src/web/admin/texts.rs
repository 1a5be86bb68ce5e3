//! The admin page's title and questions: their texts fixed at any time (a
//! typo), and while nobody has answered, questions and answers added or
//! removed.
//!
//! Why a module of its own: it is one action of the page, with its folded
//! section, the form as typed (kept through the buttons that add or remove
//! a row, which work without script: each is a submit button that brings
//! the form back changed) and the mapping of the API's problems back to
//! its fields. Promises: the change is the API's own PATCH (`title` and
//! the whole `questions` list, built as the API's JSON and checked by
//! `PollPatch::from_json`, then by the store's writer, which alone decides
//! whether the poll has responses), so the page can do nothing the API
//! would refuse. A question keeps its type and settings (its row says
//! which question it continues, `eq{i}from`); a new question takes one
//! answer. Nothing typed is ever left out: a blank field is a problem at
//! that field, and a row goes only with its remove button.

use maud::{Markup, html};
use serde_json::{Value, json};

use super::{Done, View, fold, hidden_token};
use crate::day::Day;
use crate::domain::{FieldError, Key, LABEL, OPTION, OPTIONS, Poll, PollPatch, QUESTIONS, QuestionKind, Seg, TITLE};
use crate::error::Error;
use crate::web::WebWorker;
use crate::web::form::{Form, Problems, problem_text};
use crate::web::layout::Ctx;
use crate::web::parts::fields::{errors_of, text_field};

/// What the form's buttons ask for (`action=texts-…`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    Save,
    /// A blank answer at the end of question row `i`.
    AddOption(usize),
    /// Answer `j` of question row `i` taken out.
    RemoveOption(usize, usize),
    /// A new question (one answer, two blank options) at the end.
    AddQuestion,
    RemoveQuestion(usize),
}

impl Step {
    pub(super) fn parse(action: &str) -> Option<Step> {
        let number = |s: &str| s.parse::<usize>().ok();
        Some(match action.strip_prefix("texts-")? {
            "save" => Step::Save,
            "add-question" => Step::AddQuestion,
            rest => match rest.split_once(':') {
                Some(("add-option", i)) => Step::AddOption(number(i)?),
                Some(("remove-question", i)) => Step::RemoveQuestion(number(i)?),
                Some(("remove-option", at)) => {
                    let (i, j) = at.split_once(':')?;
                    Step::RemoveOption(number(i)?, number(j)?)
                }
                _ => return None,
            },
        })
    }
}

/// The form as typed: the title, and per row the question it continues
/// (`None`: a new one) with its texts.
#[derive(Clone, Debug)]
pub(super) struct TextsDraft {
    title: String,
    rows: Vec<Row>,
    /// A row or an answer was added or removed (`ereshaped`, carried
    /// through the form's round trips): the questions are no longer the
    /// ones the language versions were written for, even where their shape
    /// happens to be the same (a question removed and another added), so
    /// saving removes the versions, as the page says.
    reshaped: bool,
}

#[derive(Clone, Debug)]
struct Row {
    from: Option<usize>,
    label: String,
    options: Vec<String>,
    low: String,
    high: String,
}

impl TextsDraft {
    fn from_poll(poll: &Poll) -> TextsDraft {
        let text = |l: &Option<crate::domain::EndLabel>| l.as_ref().map(|l| l.to_string()).unwrap_or_default();
        TextsDraft {
            title: poll.title.to_string(),
            rows: poll
                .questions
                .iter()
                .enumerate()
                .map(|(i, q)| Row {
                    from: Some(i),
                    label: q.label.to_string(),
                    options: q.options.iter().map(|o| o.to_string()).collect(),
                    low: text(&q.min_label),
                    high: text(&q.max_label),
                })
                .collect(),
            reshaped: false,
        }
    }

    /// The form's fields: rows while `eq{i}` is sent, answers while
    /// `eq{i}o{j}` is (bounded by the API's own limits, one more, so that
    /// a form too long is refused by the API's words rather than cut).
    fn from_form(form: &Form, poll: &Poll) -> TextsDraft {
        let rows = (0..=QUESTIONS.max)
            .map_while(|i| {
                let label = form.get(&format!("eq{i}"))?.to_owned();
                let from =
                    form.get(&format!("eq{i}from")).and_then(|f| f.parse().ok()).filter(|&f| f < poll.questions.len());
                let options =
                    (0..=OPTIONS.max).map_while(|j| form.get(&format!("eq{i}o{j}")).map(str::to_owned)).collect();
                Some(Row {
                    from,
                    label,
                    options,
                    low: form.text(&format!("eq{i}low")),
                    high: form.text(&format!("eq{i}high")),
                })
            })
            .collect();
        TextsDraft { title: form.text("et"), rows, reshaped: form.get("ereshaped").is_some() }
    }

    /// The kind of question row `i` (a new row: one answer).
    fn kind(&self, poll: &Poll, i: usize) -> QuestionKind {
        self.rows[i].from.and_then(|f| poll.questions.get(f)).map_or(QuestionKind::Single, |q| q.kind)
    }

    /// Applies a button other than Save; the id of the field to focus.
    fn step(&mut self, step: Step) -> Option<String> {
        let focus = self.reshape(step);
        self.reshaped |= focus.is_some();
        focus
    }

    fn reshape(&mut self, step: Step) -> Option<String> {
        match step {
            Step::Save => None,
            Step::AddOption(i) => {
                let row = self.rows.get_mut(i).filter(|r| r.options.len() < OPTIONS.max)?;
                row.options.push(String::new());
                Some(format!("a-eq{i}o{}", row.options.len() - 1))
            }
            Step::RemoveOption(i, j) => {
                let row = self.rows.get_mut(i).filter(|r| j < r.options.len() && r.options.len() > OPTIONS.min)?;
                row.options.remove(j);
                Some(format!("a-eq{i}o{}", j.min(row.options.len() - 1)))
            }
            Step::AddQuestion if self.rows.len() < QUESTIONS.max => {
                let blank = || String::new();
                self.rows.push(Row {
                    from: None,
                    label: blank(),
                    options: vec![blank(), blank()],
                    low: blank(),
                    high: blank(),
                });
                Some(format!("a-eq{}", self.rows.len() - 1))
            }
            Step::AddQuestion => None,
            Step::RemoveQuestion(i) if i < self.rows.len() && self.rows.len() > QUESTIONS.min => {
                self.rows.remove(i);
                Some(format!("a-eq{}", i.min(self.rows.len() - 1)))
            }
            Step::RemoveQuestion(_) => None,
        }
    }

    /// The PATCH body: the title and every question as on creation, each
    /// row from the question it continues with its texts replaced. A
    /// multiple-choice question that took all of its answers still takes
    /// all; a bound beyond the answers left comes down to them. Reshaped,
    /// it removes the language versions too.
    fn body(&self, poll: &Poll) -> Value {
        let questions: Vec<Value> = self
            .rows
            .iter()
            .map(|row| {
                let from = row.from.and_then(|f| poll.questions.get(f));
                let mut q =
                    from.and_then(|q| serde_json::to_value(q).ok()).unwrap_or_else(|| json!({"type": "single"}));
                q["label"] = json!(row.label);
                let kind = from.map_or(QuestionKind::Single, |q| q.kind);
                // A schedule's slots (and zone) stay as they are: they are
                // what its answers mean, not texts to fix.
                if kind.has_option_texts() {
                    q["options"] = json!(row.options);
                }
                if let (Some(orig), Some(obj)) = (from.filter(|q| q.kind == QuestionKind::Multiple), q.as_object_mut())
                {
                    let n = row.options.len();
                    let all = orig.max_choices.is_none_or(|m| usize::from(m) == orig.options.len());
                    let max = if all { n } else { orig.max_choices.map_or(n, usize::from).min(n) };
                    let min = orig.min_choices.map_or(1, usize::from).min(max);
                    obj.insert("minChoices".into(), json!(min));
                    obj.insert("maxChoices".into(), json!(max));
                }
                if kind == QuestionKind::Scale
                    && let Some(obj) = q.as_object_mut()
                {
                    for (key, text) in [("minLabel", &row.low), ("maxLabel", &row.high)] {
                        if text.trim().is_empty() {
                            obj.remove(key);
                        } else {
                            obj.insert(key.into(), json!(text));
                        }
                    }
                }
                q
            })
            .collect();
        let mut body = json!({"title": self.title, "questions": questions});
        if self.reshaped && !poll.translations.is_empty() {
            let gone: serde_json::Map<String, Value> =
                poll.translations.keys().map(|l| (l.code().to_owned(), Value::Null)).collect();
            body["translations"] = Value::Object(gone);
        }
        body
    }
}

/// The folded section: open when the form comes back (a problem, a row
/// added or removed). `locked`: the poll has responses, so only texts may
/// change and the form offers no row to add or remove.
pub(super) fn section(ctx: &Ctx, poll: &Poll, locked: bool, token: &str, view: &View) -> Markup {
    let t = ctx.t;
    let draft = view.texts.clone().unwrap_or_else(|| TextsDraft::from_poll(poll));
    let p = &view.problems;
    let focus = view.texts_focus.as_deref();
    let content = html! {
        p { (if locked { t.edit_intro_locked } else { t.edit_intro_open }) " " (t.edit_shown) }
        @if !locked && !poll.translations.is_empty() { p.notice.info { (t.edit_versions_note) } }
        form method="post" action=(ctx.action()) {
            // The first submit button is the one Enter triggers: saving,
            // never adding or removing a row.
            button type="submit" name="action" value="texts-save" hidden { (t.edit_save) }
            (hidden_token(token))
            @if draft.reshaped { input type="hidden" name="ereshaped" value="1"; }
            (text_field("a-et", "et", t.field_title, &draft.title, None, TITLE.max_chars, p, focus))
            @for (i, row) in draft.rows.iter().enumerate() {
                (question_row(ctx, (&draft, i, row), poll, locked, p, focus))
            }
            div.row-actions {
                @if !locked && draft.rows.len() < QUESTIONS.max {
                    button.secondary type="submit" name="action" value="texts-add-question" { (t.add_question) }
                }
                button.primary type="submit" name="action" value="texts-save" { (t.edit_save) }
            }
        }
    };
    fold("edit", t.edit_heading, view.texts.is_some(), content)
}

/// One question's fieldset: its text, its answers or a scale's end labels,
/// and (while nobody has answered) its buttons.
fn question_row(
    ctx: &Ctx,
    (draft, i, row): (&TextsDraft, usize, &Row),
    poll: &Poll,
    locked: bool,
    p: &Problems,
    focus: Option<&str>,
) -> Markup {
    let t = ctx.t;
    let kind = draft.kind(poll, i);
    let set_id = format!("a-eq{i}-set");
    let kind_name = QuestionKind::KINDS.iter().position(|k| *k == kind).map_or("", |k| t.type_names[k]);
    html! {
        fieldset.question id=(set_id) tabindex="-1" {
            legend { ((t.question_legend)(i + 1)) }
            p.hint { (t.field_type) (t.colon) (kind_name) }
            (errors_of(&set_id, &p.of(&set_id)))
            input type="hidden" name=(format!("eq{i}from")) value=(row.from.map(|f| f.to_string()).unwrap_or_default());
            (text_field(&format!("a-eq{i}"), &format!("eq{i}"), t.field_question, &row.label, None, LABEL.max_chars, p, focus))
            @if kind == QuestionKind::Schedule {
                ul.slots-fixed {
                    @for slot in poll.questions.get(row.from.unwrap_or(usize::MAX)).map(|q| q.slots()).unwrap_or_default() {
                        li { (t.slot(&slot)) }
                    }
                }
            }
            @if kind.has_option_texts() {
                ol.options {
                    @for (j, o) in row.options.iter().enumerate() {
                        li.option-row {
                            (text_field(&format!("a-eq{i}o{j}"), &format!("eq{i}o{j}"), &(t.field_option)(j + 1), o, None, OPTION.max_chars, p, focus))
                            @if !locked && row.options.len() > OPTIONS.min {
                                button.remove-option type="submit" name="action" value=(format!("texts-remove-option:{i}:{j}"))
                                    aria-label=((t.remove_option)(j + 1)) { "×" }
                            }
                        }
                    }
                }
            }
            @if kind == QuestionKind::Scale {
                (text_field(&format!("a-eq{i}low"), &format!("eq{i}low"), t.field_min_label, &row.low, None, crate::domain::question::END_LABEL.max_chars, p, focus))
                (text_field(&format!("a-eq{i}high"), &format!("eq{i}high"), t.field_max_label, &row.high, None, crate::domain::question::END_LABEL.max_chars, p, focus))
            }
            @if !locked {
                div.row-actions {
                    @if kind.has_option_texts() && row.options.len() < OPTIONS.max {
                        button.secondary type="submit" name="action" value=(format!("texts-add-option:{i}")) { (t.add_option) }
                    }
                    @if draft.rows.len() > QUESTIONS.min {
                        button.secondary.danger type="submit" name="action" value=(format!("texts-remove-question:{i}")) { (t.remove_question) }
                    }
                }
            }
        }
    }
}

/// Does what the form's button asks: saves the texts through the API's
/// PATCH rules, or brings the form back with a row added or removed, or
/// with the problems at their fields.
pub(super) fn act(
    w: &mut WebWorker,
    ctx: &Ctx,
    form: &Form,
    (poll, step): (&Poll, Step),
    today: Day,
    view: &mut View,
) -> Result<(), Error> {
    let mut draft = TextsDraft::from_form(form, poll);
    if step != Step::Save {
        view.texts_focus = draft.step(step);
        view.texts = Some(draft);
        return Ok(());
    }
    let result = PollPatch::from_json(&draft.body(poll))
        .map_err(Error::Invalid)
        // Rows added or removed make a new structure, whatever its shape.
        .map(|patch| PollPatch { reshaped: draft.reshaped, ..patch })
        .and_then(|patch| w.session.patch(poll, &patch, today));
    match result {
        Ok(updated) => {
            let dropped = !poll.translations.is_empty() && updated.translations.is_empty();
            view.did(if dropped { Done::TextsVersionsDropped } else { Done::Texts });
        }
        // Refused by the API's rules, or (a vote came meanwhile) by the
        // responses: each problem at its field, the form as typed.
        Err(Error::Invalid(errors) | Error::HasResponses(errors)) => {
            view.refused();
            view.problems = problems(ctx, &errors);
            view.texts = Some(draft);
        }
        Err(e) => return Err(e),
    }
    Ok(())
}

/// The API's problems at the form's fields: rows are never left out, so
/// `questions[k]` is row `k`.
fn problems(ctx: &Ctx, errors: &[FieldError]) -> Problems {
    use Seg::{Index, Key as K};
    let t = ctx.t;
    let mut p = Problems::default();
    for e in errors {
        let message = problem_text(t, &e.problem);
        let q = |i: &usize| (t.question_legend)(i + 1);
        match e.path.segs() {
            [K(Key::Title)] => p.field("a-et", t.field_title, message),
            [K(Key::Questions), Index(i), K(Key::Label)] => p.field(format!("a-eq{i}"), q(i), message),
            [K(Key::Questions), Index(i), K(Key::Options), Index(j)] => {
                p.field(format!("a-eq{i}o{j}"), format!("{}, {}", q(i), (t.field_option)(j + 1)), message)
            }
            [K(Key::Questions), Index(i), K(end @ (Key::MinLabel | Key::MaxLabel))] => {
                let (suffix, name) =
                    if *end == Key::MinLabel { ("low", t.field_min_label) } else { ("high", t.field_max_label) };
                p.field(format!("a-eq{i}{suffix}"), format!("{}, {name}", q(i)), message)
            }
            // The number of answers, a bound, the type: the question's.
            [K(Key::Questions), Index(i), ..] => p.field(format!("a-eq{i}-set"), q(i), message),
            _ => p.general.push(message),
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Lang, NewPoll};
    use crate::web::lang::Choice;

    fn poll() -> Poll {
        let new = NewPoll::from_json(&json!({"title": "Lunch", "lang": "en", "expiryDays": 7, "questions": [
            {"type": "multiple", "label": "What", "options": ["a", "b", "c"]},
            {"type": "multiple", "label": "Which", "options": ["a", "b", "c"], "minChoices": 2, "maxChoices": 2},
            {"type": "scale", "label": "How", "scaleMin": 1, "scaleMax": 5, "minLabel": "bad"}
        ]}))
        .unwrap();
        let day = Day::parse("2026-12-05").unwrap();
        Poll {
            id: crate::secret::PollId::parse("AAAAAAAAAAAAAAAA").unwrap(),
            token_hash: crate::secret::TokenHash([0; 32]),
            title: new.title,
            lang: new.lang,
            visibility: new.visibility,
            closed: false,
            closes_on: None,
            shuffle_options: false,
            duplicate_check: new.duplicate_check,
            vote_changes: true,
            created_on: day,
            expires_on: day.plus_days(7),
            edited_on: None,
            restructured: 0,
            questions: new.questions,
            translations: Default::default(),
            media: Vec::new(),
        }
    }

    /// The buttons parse from their values, and a bad value is none.
    #[test]
    fn steps_read_as_the_buttons_write_them() {
        assert_eq!(Step::parse("texts-save"), Some(Step::Save));
        assert_eq!(Step::parse("texts-add-option:2"), Some(Step::AddOption(2)));
        assert_eq!(Step::parse("texts-remove-option:1:0"), Some(Step::RemoveOption(1, 0)));
        assert_eq!(Step::parse("texts-remove-question:0"), Some(Step::RemoveQuestion(0)));
        assert_eq!(Step::parse("texts-add-question"), Some(Step::AddQuestion));
        for bad in ["texts-", "texts-add-option", "texts-remove-option:1", "texts-add-option:x", "save"] {
            assert_eq!(Step::parse(bad), None, "{bad}");
        }
    }

    /// A row keeps its question's type and settings; a multiple-choice
    /// question that took all its answers still does, a narrower bound
    /// comes down to the answers left; a blank end label is left out, and
    /// a new row is a one-answer question. The body is what the API parses.
    #[test]
    fn the_body_keeps_each_questions_settings() {
        let poll = poll();
        let mut d = TextsDraft::from_poll(&poll);
        d.rows[0].options.push("d".into());
        d.rows[1].options.truncate(2);
        d.rows[1].options[1] = "B".into();
        d.rows[2].low = " ".into();
        d.rows[2].high = "good".into();
        assert_eq!(d.step(Step::AddQuestion).as_deref(), Some("a-eq3"));
        d.rows[3].label = "New".into();
        d.rows[3].options = vec!["x".into(), "y".into()];
        let patch = PollPatch::from_json(&d.body(&poll)).unwrap();
        let qs = patch.questions.unwrap();
        assert_eq!((qs[0].min_choices, qs[0].max_choices, qs[0].options.len()), (Some(1), Some(4), 4));
        assert_eq!((qs[1].min_choices, qs[1].max_choices, qs[1].options[1].as_str()), (Some(2), Some(2), "B"));
        assert_eq!((qs[2].min_label.as_ref(), qs[2].max_label.as_ref().map(|l| l.as_str())), (None, Some("good")));
        assert_eq!((qs[3].kind, qs[3].label.as_str()), (QuestionKind::Single, "New"));
        // A removed answer takes its field's focus to the next one.
        assert_eq!(d.step(Step::RemoveOption(0, 3)).as_deref(), Some("a-eq0o2"));
        assert_eq!(d.step(Step::RemoveOption(1, 0)), None, "two answers at least");
    }

    /// Each problem of the API shows at the field that holds its text, in
    /// the reader's language.
    #[test]
    fn the_apis_problems_show_at_their_fields() {
        let poll = poll();
        let mut d = TextsDraft::from_poll(&poll);
        d.title = " ".into();
        d.rows[0].options[2] = "b".into();
        let errors = PollPatch::from_json(&d.body(&poll)).unwrap_err();
        let fixed = crate::domain::structure_changes(&poll.questions, &poll.questions[..1]);
        for lang in Lang::ALL {
            let ctx = Ctx::new(Choice { lang, explicit: false }, "/");
            let p = problems(&ctx, &errors);
            let at: Vec<&str> = p.fields.iter().map(|f| f.id.as_str()).collect();
            assert_eq!(at, ["a-et", "a-eq0o2"], "{lang:?}");
            let p = problems(&ctx, &fixed);
            assert_eq!(p.general, [ctx.t.err_fixed_by_responses], "{lang:?}");
        }
    }
}
