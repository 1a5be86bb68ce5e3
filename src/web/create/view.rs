//! The creation form drawn from a `Draft`: its rows of questions with the
//! fields of each type, the folded settings, and the problems at their
//! fields and in the summary.
//!
//! Promises: the form works without script (every structural button is a
//! submit button); field names and ids are a documented interface
//! (`docs/WEB.md`); the script only shows and hides what the types need.

use maud::{Markup, html};

use super::draft::{
    Draft, DraftQuestion, MAX_CHOICES, MAX_LABEL, MIN_CHOICES, MIN_LABEL, REQUIRED, SCALE_MAX, SCALE_MIN, TIME_ZONE,
    TIMES, TYPE, media_prefix,
};
use crate::domain::question::{END_LABEL, SCALE_CEILING, SCALE_FLOOR};
use crate::domain::{EXPIRY_DAYS, Lang, OPTIONS, QUESTIONS, QuestionKind};
use crate::i18n::endonym;
use crate::web::device;
use crate::web::form::Problems;
use crate::web::layout::Ctx;
use crate::web::parts::fields::{described, error_summary, errors_of, text_field};
use crate::web::parts::media_field::{SlotField, media_fieldset};
use crate::web::parts::settings;
use crate::web::uploads::Uploads;

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

/// A schedule's slots: per row a date field and an optional time field
/// (the browser's own pickers), the times every date gets, the time zone.
fn schedule_fields(ctx: &Ctx, i: usize, q: &DraftQuestion, p: &Problems, focus: Option<&str>) -> Markup {
    let t = ctx.t;
    let hint_id = format!("f-q{i}-slots-hint");
    html! {
        fieldset.kind-group data-kinds="schedule" {
            legend { (t.field_slots) }
            p.hint id=(hint_id) { (t.field_slots_hint) }
            ol.slot-rows {
                @for (j, day) in q.slot_days.iter().enumerate() {
                    @let (day_id, time_id) = (format!("f-q{i}d{j}"), format!("f-q{i}t{j}"));
                    @let errors = p.of(&day_id);
                    li.slot-row {
                        div.field {
                            label for=(day_id) { ((t.field_slot_day)(j + 1)) }
                            (errors_of(&day_id, &errors))
                            input type="date" id=(day_id) name=(format!("q{i}d{j}")) value=(day)
                                aria-invalid=[(!errors.is_empty()).then_some("true")]
                                aria-describedby=(described_by(&hint_id, &day_id, &errors))
                                autofocus[focus == Some(day_id.as_str())];
                        }
                        div.field {
                            label for=(time_id) { ((t.field_slot_time)(j + 1)) }
                            input type="time" id=(time_id) name=(format!("q{i}t{j}"))
                                value=(q.slot_times.get(j).map_or("", String::as_str));
                        }
                    }
                }
            }
            @if q.slot_days.len() < OPTIONS.max {
                button.secondary type="submit" name="action" value=(format!("add-slot-{i}")) formnovalidate { (t.add_slot) }
            }
            (text_field(&format!("f-q{i}-{TIMES}"), &format!("q{i}{TIMES}"), t.field_times, &q.times, Some(t.field_times_hint), 200, p, focus))
            (text_field(&format!("f-q{i}-{TIME_ZONE}"), &format!("q{i}{TIME_ZONE}"), t.field_time_zone, &q.time_zone, Some(t.field_time_zone_hint), crate::domain::TimeZone::MAX_CHARS, p, focus))
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

/// Whether the creation form's "Settings" are shown unfolded: when one of
/// their fields has a problem, or the poll's file is kept.
fn settings_open(draft: &Draft, p: &Problems) -> bool {
    let inside = |id: &str| id != "f-title" && id != "f-questions" && !id.starts_with("f-q");
    !draft.media.is_empty() || p.fields.iter().any(|f| inside(&f.id))
}

pub(super) fn form_body(ctx: &Ctx, draft: &Draft, p: &Problems, focus: Option<&str>, uploads: &Uploads) -> Markup {
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
            // A text field, not a hidden one: Back to this page after it was
            // sent fetches it again with a fresh code, and a browser puts
            // back a text field's value when it differs from the page's
            // (the script makes it so, app.js): the used code comes back,
            // and sending the form again is answered "already sent".
            input type="text" name="once" value=(draft.once) hidden data-once;
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
                        (schedule_fields(ctx, i, q, p, focus))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::NewPoll;
    use crate::web::create::draft::problems;
    use crate::web::form::Form;
    use crate::web::lang::Choice;

    fn uploads() -> Uploads {
        Uploads::new(crate::media::Limits::default(), 1 << 20, 1 << 20).unwrap()
    }

    /// The page in English, as a reader who asked for nothing sees it.
    const EN: Choice = Choice { lang: Lang::En, explicit: false };

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
        let p = problems(&Ctx::new(EN, "/"), &errors, &origins);
        let found: Vec<(&str, &str)> = p.fields.iter().map(|f| (f.id.as_str(), f.name.as_str())).collect();
        for (id, name) in [
            ("f-q1-min", "Question 2, At least (answers)"),
            ("f-q1-max", "Question 2, At most (answers)"),
            ("f-q2-to", "Question 3, the scale’s highest value (To)"),
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
        let ctx = Ctx::new(EN, "/");
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
        let html = form_body(&Ctx::new(EN, "/"), &d, &Problems::default(), None, &uploads()).into_string();
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
        let ctx = Ctx::new(Choice { lang: Lang::Fr, explicit: false }, "/");
        let mut p = Problems::default();
        p.field("f-title", ctx.t.field_title, "Obligatoire.");
        p.field("f-q0o1", (ctx.t.field_option)(2), "Trop long.");
        let html = form_body(&ctx, &Draft::blank(Lang::Fr), &p, None, &uploads()).into_string();
        assert!(html.contains("</a>\u{202F}: Obligatoire."), "{html}");
        // No text of the page puts a plain space before a colon.
        assert!(!html.contains(" :") && !html.contains("&nbsp;:"), "{html}");
    }
}
