//! The admin page's settings: who sees the results and when, the closing
//! day, shuffling, the duplicate check and vote changes.
//!
//! Why a module of its own: it is one action of the page, with its folded
//! section and its form. Promise: the form is read by the same
//! [`SettingsDraft`] as the creation form's settings and saved through the
//! API's own PATCH rules; a refusal shows the form again as sent, each
//! problem at its field.

use maud::{Markup, html};

use super::{Done, View, fold, hidden_token};
use crate::day::Day;
use crate::domain::{Poll, PollPatch};
use crate::error::Error;
use crate::web::WebWorker;
use crate::web::form::{Form, problem_text};
use crate::web::layout::Ctx;
use crate::web::parts::settings::{SettingsDraft, field_of, fields};

/// The folded section with the settings form: the draft sent when it was
/// refused (and then open), else the poll's settings.
pub(super) fn section(ctx: &Ctx, poll: &Poll, token: &str, view: &View) -> Markup {
    let t = ctx.t;
    let content = html! {
        form method="post" action=(ctx.action()) {
            (hidden_token(token))
            (fields(ctx, "a", view.settings.as_ref().unwrap_or(&SettingsDraft::from_poll(poll)), &view.problems))
            button.secondary type="submit" name="action" value="settings" { (t.settings_save) }
        }
    };
    fold("settings", t.settings_heading, view.settings.is_some(), content)
}

/// Saves the settings form through the API's own PATCH rules, or shows it
/// again with its problems.
pub(super) fn save(
    w: &mut WebWorker,
    ctx: &Ctx,
    form: &Form,
    poll: &Poll,
    today: Day,
    view: &mut View,
) -> Result<(), Error> {
    let draft = SettingsDraft::from_form(form);
    let mut body = serde_json::json!({});
    draft.add_to(&mut body, true);
    let result =
        PollPatch::from_json(&body).map_err(Error::Invalid).and_then(|patch| w.session.patch(poll, &patch, today));
    match result {
        Ok(_) => view.did(Done::Settings),
        Err(Error::Invalid(errors)) => {
            view.refused();
            for e in &errors {
                let message = problem_text(ctx.t, &e.problem);
                match field_of(ctx, "a", e) {
                    Some((id, name)) => view.problems.field(id, name, message),
                    None => view.problems.general.push(message),
                }
            }
            view.settings = Some(draft);
        }
        Err(e) => return Err(e),
    }
    Ok(())
}
