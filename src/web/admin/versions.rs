//! The admin page's language versions: a poll's title and questions in
//! another of the four languages, set or removed.
//!
//! Why a module of its own: it is one action of the page, with its folded
//! section (one form per language other than the poll's own) and the
//! mapping of the API's problems back to that form's fields. Promises: a
//! version is checked by `LanguageVersion::from_texts` and saved through
//! the API's own PATCH rules (`translations`); a refused one is shown again
//! as typed, each problem at its field, beside the original text.

use maud::{Markup, html};

use super::{Done, View, change, fold, hidden_token};
use crate::day::Day;
use crate::domain::{FieldError, Key, Lang, LanguageVersion, Poll, PollPatch, QuestionTexts, Seg};
use crate::error::Error;
use crate::web::WebWorker;
use crate::web::form::{Form, Problems, problem_text};
use crate::web::layout::Ctx;

/// A language version as typed in its form.
pub(super) struct VersionDraft {
    lang: Lang,
    title: String,
    questions: Vec<QuestionTexts>,
}

impl VersionDraft {
    fn from_form(form: &Form, poll: &Poll, lang: Lang) -> VersionDraft {
        VersionDraft {
            lang,
            title: form.text("vt"),
            questions: poll
                .questions
                .iter()
                .enumerate()
                .map(|(i, q)| QuestionTexts {
                    label: form.text(&format!("vq{i}")),
                    // A schedule's slots are the same in every language.
                    options: if q.kind.has_option_texts() {
                        (0..q.options.len()).map(|j| form.text(&format!("vq{i}o{j}"))).collect()
                    } else {
                        Vec::new()
                    },
                    min_label: form.text(&format!("vq{i}min")),
                    max_label: form.text(&format!("vq{i}max")),
                })
                .collect(),
        }
    }
}

/// The folded section with a form for each language but the poll's own,
/// open when a draft comes back with a problem.
pub(super) fn section(ctx: &Ctx, poll: &Poll, token: &str, view: &View) -> Markup {
    let t = ctx.t;
    let content = html! {
        p { (t.versions_intro) }
        @for lang in Lang::ALL.into_iter().filter(|l| *l != poll.lang) {
            (version_form(ctx, poll, lang, token, view))
        }
    };
    fold("versions", t.versions_heading, view.draft.is_some(), content)
}

/// Saves the language version typed in its form, or shows it again with
/// its problems.
pub(super) fn save(
    w: &mut WebWorker,
    ctx: &Ctx,
    form: &Form,
    poll: &Poll,
    lang: Lang,
    today: Day,
    view: &mut View,
) -> Result<(), Error> {
    let draft = VersionDraft::from_form(form, poll, lang);
    let version = LanguageVersion::from_texts(lang, &draft.title, &draft.questions);
    let result = match version {
        Ok(v) => {
            let patch = PollPatch { translations: [(lang, Some(v))].into(), ..PollPatch::default() };
            w.session.patch(poll, &patch, today).map(|_| ())
        }
        Err(errors) => Err(Error::Invalid(errors)),
    };
    match result {
        Ok(()) => view.did(Done::VersionSaved(lang)),
        Err(Error::Invalid(errors)) => {
            view.refused();
            view.problems = version_problems(ctx, lang, &errors);
            view.draft = Some(draft);
        }
        Err(e) => return Err(e),
    }
    Ok(())
}

/// Removes the language version `lang`, and says so in `view`.
pub(super) fn remove(
    w: &mut WebWorker,
    ctx: &Ctx,
    poll: &Poll,
    lang: Lang,
    today: Day,
    view: &mut View,
) -> Result<(), Error> {
    let patch = PollPatch { translations: [(lang, None)].into(), ..PollPatch::default() };
    change(w, ctx, poll, &patch, today, view, Done::VersionRemoved(lang)).map(drop)
}

/// Maps problems under `translations.{lang}` to the fields of that version's form.
fn version_problems(ctx: &Ctx, lang: Lang, errors: &[FieldError]) -> Problems {
    use Seg::{Index, Key as K};
    let t = ctx.t;
    let code = lang.code();
    let mut p = Problems::default();
    for e in errors {
        let msg = problem_text(t, &e.problem);
        let rest = match e.path.segs() {
            [K(Key::Translations), Seg::Lang(l), rest @ ..] if *l == lang => rest,
            _ => &[],
        };
        match rest {
            [K(Key::Title)] => p.field(format!("v-{code}-t"), t.version_title, msg),
            [K(Key::Questions), Index(i), K(Key::Label)] => {
                p.field(format!("v-{code}-q{i}"), (t.question_legend)(i + 1), msg)
            }
            [K(Key::Questions), Index(i), K(Key::Options), Index(j)] => p.field(
                format!("v-{code}-q{i}o{j}"),
                format!("{}, {}", (t.question_legend)(i + 1), (t.field_option)(j + 1)),
                msg,
            ),
            [K(Key::Questions), Index(i), K(end @ (Key::MinLabel | Key::MaxLabel))] => {
                let (suffix, name) =
                    if *end == Key::MinLabel { ("min", t.field_min_label) } else { ("max", t.field_max_label) };
                p.field(format!("v-{code}-q{i}{suffix}"), format!("{}, {name}", (t.question_legend)(i + 1)), msg)
            }
            _ => p.general.push(msg),
        }
    }
    p
}

/// One text field of a question in the language-version form.
#[derive(Clone, Copy)]
enum VersionText {
    Label,
    Option(usize),
    MinLabel,
    MaxLabel,
}

fn version_form(ctx: &Ctx, poll: &Poll, lang: Lang, token: &str, view: &View) -> Markup {
    let t = ctx.t;
    let code = lang.code();
    let existing = poll.translations.get(&lang);
    let draft = view.draft.as_ref().filter(|d| d.lang == lang);
    let title = draft.map(|d| d.title.clone()).or_else(|| existing.map(|v| v.title.to_string())).unwrap_or_default();
    // The text typed (a draft shown again) or stored for one field of
    // question `i`.
    let value = |i: usize, text: VersionText| -> String {
        if let Some(d) = draft {
            return d.questions.get(i).map_or(String::new(), |q| match text {
                VersionText::Label => q.label.clone(),
                VersionText::Option(j) => q.options.get(j).cloned().unwrap_or_default(),
                VersionText::MinLabel => q.min_label.clone(),
                VersionText::MaxLabel => q.max_label.clone(),
            });
        }
        existing.and_then(|v| v.questions.get(i)).map_or(String::new(), |q| match text {
            VersionText::Label => q.label.to_string(),
            VersionText::Option(j) => q.options.get(j).map(|o| o.to_string()).unwrap_or_default(),
            VersionText::MinLabel => q.min_label.as_ref().map(|l| l.to_string()).unwrap_or_default(),
            VersionText::MaxLabel => q.max_label.as_ref().map(|l| l.to_string()).unwrap_or_default(),
        })
    };
    let plang = poll.lang.code();
    let field = |id: String, name: String, label: String, value: String, original: &str| {
        let errors = view.problems.of(&id);
        let mut described = format!("{id}-orig");
        if !errors.is_empty() {
            described.push_str(&format!(" {id}-error"));
        }
        html! {
            div.field {
                label for=(id) { (label) }
                p.hint id=(format!("{id}-orig")) { ((t.original)("")) span lang=(plang) { (original) } }
                @if !errors.is_empty() { p.field-error id=(format!("{id}-error")) { @for e in &errors { (e) " " } } }
                input type="text" id=(id) name=(name) value=(value) lang=(code)
                    aria-invalid=[(!errors.is_empty()).then_some("true")] aria-describedby=(described);
            }
        }
    };
    let heading = (t.version_heading)(t.lang_name(lang));
    html! {
        details.version open[existing.is_some() || draft.is_some()] {
            summary { (heading) " · " (if existing.is_some() { t.version_exists } else { t.version_missing }) }
            form method="post" action=(ctx.action()) {
                (hidden_token(token))
                input type="hidden" name="vlang" value=(code);
                (field(format!("v-{code}-t"), "vt".into(), t.version_title.into(), title, poll.title.as_str()))
                @for (i, q) in poll.questions.iter().enumerate() {
                    fieldset.question {
                        legend { ((t.question_legend)(i + 1)) }
                        (field(format!("v-{code}-q{i}"), format!("vq{i}"), t.field_question.into(), value(i, VersionText::Label), q.label.as_str()))
                        @for (j, o) in q.options.iter().enumerate().filter(|_| q.kind.has_option_texts()) {
                            (field(format!("v-{code}-q{i}o{j}"), format!("vq{i}o{j}"), (t.field_option)(j + 1), value(i, VersionText::Option(j)), o.as_str()))
                        }
                        @if let Some(l) = &q.min_label {
                            (field(format!("v-{code}-q{i}min"), format!("vq{i}min"), t.field_min_label.into(), value(i, VersionText::MinLabel), l.as_str()))
                        }
                        @if let Some(l) = &q.max_label {
                            (field(format!("v-{code}-q{i}max"), format!("vq{i}max"), t.field_max_label.into(), value(i, VersionText::MaxLabel), l.as_str()))
                        }
                    }
                }
                div.row-actions {
                    button.primary type="submit" name="action" value="version-save" { (t.version_save) }
                    @if existing.is_some() {
                        button.danger type="submit" name="action" value="version-remove" formnovalidate { (t.version_remove) }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::lang::Choice;

    /// A language version typed on the admin page obeys the text rules of
    /// creation: a line separator in its title, an answer equal in NFC to
    /// another and one that looks like another are each shown at their own
    /// field, naming the answer they repeat, in the reader's language.
    #[test]
    fn a_versions_refused_texts_are_shown_at_their_fields() {
        let texts = QuestionTexts {
            label: "Où\u{2029}".into(),
            options: vec!["Caf\u{e9}".into(), "Cafe\u{301}".into(), "Pizza".into(), "\u{420}izza".into()],
            ..QuestionTexts::default()
        };
        let errors = LanguageVersion::from_texts(Lang::Fr, "D\u{e9}jeuner\u{2028}", &[texts]).unwrap_err();
        for lang in Lang::ALL {
            let ctx = Ctx::new(Choice { lang, explicit: false }, "/");
            let t = ctx.t;
            let p = version_problems(&ctx, Lang::Fr, &errors);
            let at: Vec<(&str, String)> = p.fields.iter().map(|f| (f.id.as_str(), f.message.clone())).collect();
            assert_eq!(
                at,
                [
                    ("v-fr-t", t.err_separator.to_owned()),
                    ("v-fr-q0", t.err_separator.to_owned()),
                    ("v-fr-q0o1", (t.err_duplicate)(1)),
                    ("v-fr-q0o3", (t.err_lookalike)(3)),
                ],
                "{lang:?}"
            );
            assert!(p.general.is_empty(), "{lang:?}: {:?}", p.general);
        }
    }
}
