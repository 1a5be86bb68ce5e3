//! The admin-key form, and reading the key from it: the key prompt of the
//! admin page and of private results.
//!
//! Promises: the key travels only in POST bodies (a password field, filled
//! by the script from the URL fragment or pasted), never in a URL the
//! server sees.

use maud::{Markup, html};

use crate::web::form::Form;
use crate::web::layout::{Ctx, notice};

/// The admin key from a form: the `token` field, or the part after `#` when
/// someone pasted the whole admin link.
pub fn presented_token(form: &Form) -> Option<&str> {
    let raw = form.get("token")?.trim();
    let token = raw.rsplit_once('#').map_or(raw, |(_, t)| t).trim();
    (!token.is_empty()).then_some(token)
}

/// The admin-key form; the script fills it from the URL fragment and sends it.
/// `main`: its button is the page's main action (the admin prompt, private
/// results); not on hidden results, whose main way is to the poll.
pub fn token_form(ctx: &Ctx, submit: &str, error: Option<&str>, main: bool) -> Markup {
    token_form_with(ctx, submit, error, main, &[])
}

/// [`token_form`] with hidden fields that go along with the key (`done`:
/// what the action before it did, for the page it opens to say).
pub fn token_form_with(ctx: &Ctx, submit: &str, error: Option<&str>, main: bool, hidden: &[(&str, &str)]) -> Markup {
    let t = ctx.t;
    html! {
        @if let Some(e) = error { (notice("error", e)) }
        form.token method="post" action=(ctx.action()) data-token-form {
            @for (name, value) in hidden { input type="hidden" name=(name) value=(value); }
            div.field {
                label for="token" { (t.token_label) }
                p.hint id="token-hint" { (t.token_hint) }
                input type="password" id="token" name="token" required autocomplete="off" spellcheck="false"
                    aria-describedby="token-hint" aria-invalid=[error.map(|_| "true")];
            }
            div.submit { button type="submit" class=(if main { "primary" } else { "secondary" }) { (submit) } }
        }
    }
}
