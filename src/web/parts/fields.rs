//! Form fields shared by the creation form and the admin page: a text
//! field with its label, hint and errors, the error summary above a form,
//! and a read-only link with its copy button.
//!
//! Promises: every field says its problems at itself (its own error text,
//! `aria-invalid`, `aria-describedby`) and in the summary, which links to
//! it and takes the focus.

use maud::{Markup, html};

use crate::web::form::Problems;
use crate::web::layout::Ctx;

/// `aria-describedby` for a field with a hint and maybe errors.
pub fn described(id: &str, hint: bool, errors: &[&str]) -> Option<String> {
    let mut ids = Vec::new();
    if hint {
        ids.push(format!("{id}-hint"));
    }
    if !errors.is_empty() {
        ids.push(format!("{id}-error"));
    }
    (!ids.is_empty()).then(|| ids.join(" "))
}

pub fn errors_of(id: &str, errors: &[&str]) -> Markup {
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
pub fn text_field(
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
