//! The admin page's open/closed switch: closing a poll (it takes no more
//! responses) and reopening it.
//!
//! Why a module of its own: it is one action of the page, with its section
//! of the dashboard (never folded: it is the admin's most common action)
//! and its form. Promise: the change goes through the API's own PATCH
//! rules (`closed`), so the page can do nothing the API would refuse.

use maud::{Markup, html};

use super::{Done, View, change, hidden_token};
use crate::day::Day;
use crate::domain::{Poll, PollPatch};
use crate::error::Error;
use crate::web::WebWorker;
use crate::web::layout::Ctx;

/// The section with the one button that fits: close an open poll, reopen
/// a closed one.
pub(super) fn section(ctx: &Ctx, poll: &Poll, token: &str) -> Markup {
    let t = ctx.t;
    html! {
        section.status-row aria-labelledby="status-heading" {
            h2 id="status-heading" { (t.status_heading) }
            form method="post" action=(ctx.action()) {
                (hidden_token(token))
                @if poll.closed {
                    button.primary type="submit" name="action" value="reopen" { (t.reopen_poll) }
                } @else {
                    button.primary type="submit" name="action" value="close" { (t.close_poll) }
                }
            }
        }
    }
}

/// Closes the poll (`closed`) or reopens it, and says so in `view`.
pub(super) fn set_closed(
    w: &mut WebWorker,
    ctx: &Ctx,
    poll: &Poll,
    closed: bool,
    today: Day,
    view: &mut View,
) -> Result<(), Error> {
    let done = if closed { Done::Closed } else { Done::Reopened };
    let patch = PollPatch { closed: Some(closed), ..PollPatch::default() };
    change(w, ctx, poll, &patch, today, view, done).map(drop)
}
