//! The admin page's erase date: when the poll and everything of it is
//! erased for good, set as a lifetime counted from today.
//!
//! Why a module of its own: it is one action of the page, with its folded
//! section and its form. Promises: the choice offered first never brings
//! the erase day earlier than the admin had it ([`expiry_choice`]); the
//! change goes through the API's own PATCH rules (`expiryDays`).

use maud::{Markup, html};

use super::{Done, View, change, fold, hidden_token};
use crate::day::Day;
use crate::domain::{EXPIRY_DAYS, ExpiryDays, Poll, PollPatch};
use crate::error::Error;
use crate::web::WebWorker;
use crate::web::form::{Form, problem_text};
use crate::web::layout::Ctx;

/// The folded section with the choice of lifetimes, open when the choice
/// sent was refused.
pub(super) fn section(ctx: &Ctx, (poll, today): (&Poll, Day), token: &str, view: &View) -> Markup {
    let t = ctx.t;
    let expiry_errors = view.problems.of("a-expiry");
    let content = html! {
        form.inline method="post" action=(ctx.action()) {
            (hidden_token(token))
            div.field {
                label for="a-expiry" { (t.expiry_label) }
                @if !expiry_errors.is_empty() { p.field-error id="a-expiry-error" { @for e in &expiry_errors { (e) " " } } }
                select id="a-expiry" name="expiry" aria-describedby=[(!expiry_errors.is_empty()).then_some("a-expiry-error")] {
                    @let current = expiry_choice(poll, today);
                    @for d in EXPIRY_DAYS { option value=(d) selected[d == current] { ((t.expiry_option)(d)) } }
                }
            }
            button.secondary type="submit" name="action" value="expiry" { (t.expiry_submit) }
        }
    };
    fold("expiry", t.expiry_heading, !expiry_errors.is_empty(), content)
}

/// Sets the erase day from the form's `expiry` field (a lifetime in days
/// from today); a refused one goes to `view`.
pub(super) fn save(
    w: &mut WebWorker,
    ctx: &Ctx,
    form: &Form,
    (poll, today): (&Poll, Day),
    view: &mut View,
) -> Result<(), Error> {
    let t = ctx.t;
    match ExpiryDays::from_text(&form.text("expiry")) {
        Ok(days) => {
            let patch = PollPatch { expiry: Some(days), ..PollPatch::default() };
            change(w, ctx, poll, &patch, today, view, Done::Expiry)?;
        }
        Err(problem) => {
            view.problems.field("a-expiry", t.expiry_label, problem_text(t, &problem));
            view.refused();
        }
    }
    Ok(())
}

/// The erase-date choice the admin page preselects. The choices count from
/// the day the form is sent, so the one shown is the one that, sent as it
/// is, changes the erase day least and never brings it earlier (an erase
/// that comes sooner than the admin thought cannot be undone):
/// - the choice that keeps today's erase day exactly (the day the poll was
///   made or its erase day last changed, that is the lifetime chosen then);
/// - else the lifetime the poll was made with, when the erase day is still
///   the one it was made with (`created_on` + a choice): what the admin
///   chose, and since today is not before `created_on`, it only moves the
///   erase day later;
/// - else (the erase day was changed on an earlier day) the shortest
///   choice that reaches the current erase day, or the longest there is.
fn expiry_choice(poll: &Poll, today: Day) -> u16 {
    let reaches = |d: &&u16| today.plus_days(**d) >= poll.expires_on;
    EXPIRY_DAYS
        .iter()
        .find(|d| today.plus_days(**d) == poll.expires_on)
        .or_else(|| EXPIRY_DAYS.iter().find(|d| poll.created_on.plus_days(**d) == poll.expires_on))
        .or_else(|| EXPIRY_DAYS.iter().find(reaches))
        .or(EXPIRY_DAYS.last())
        .copied()
        .unwrap_or(30)
}
