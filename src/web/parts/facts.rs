//! A poll's facts line (open or closed, its closing day, its erase day, and
//! the day its texts were last edited, if they were), shown under the title
//! on the share, results, own-ballot and admin pages.
//!
//! Promises: one wording of these days everywhere; a poll closed by its
//! admin before its closing day no longer says it "closes on" that day; a
//! poll whose title or questions changed after creation says so, to the
//! day, wherever voters read it.

use maud::{Markup, html};

use crate::day::Day;
use crate::domain::Poll;
use crate::domain::settings::deadline_passed;
use crate::web::layout::Ctx;

/// Status, closing day and erase day of a poll.
pub fn facts(ctx: &Ctx, poll: &Poll, today: Day) -> Markup {
    let t = ctx.t;
    let expires = poll.expires_on.to_string();
    let closes = poll.closes_on.map(|d| d.to_string());
    html! {
        p.meta {
            span class=(if poll.closed { "status closed" } else { "status open" }) {
                (if poll.closed { t.status_closed } else { t.status_open })
            }
            // A poll closed by its admin before its closing day no longer
            // "closes on" it: the status says it all.
            @if let Some(closes) = closes.as_ref().filter(|_| !poll.closed || deadline_passed(poll.closes_on, today)) {
                " · "
                time.closes datetime=(closes) {
                    @if deadline_passed(poll.closes_on, today) { ((t.closed_on)(&t.day(closes))) } @else { ((t.closes_on)(&t.day(closes))) }
                }
            }
            " · "
            time datetime=(expires) { ((t.erased_on)(&t.day(&expires))) }
            @if let Some(edited) = poll.edited_on.map(|d| d.to_string()) {
                " · "
                time.edited datetime=(edited) { ((t.edited_on)(&t.day(&edited))) }
            }
        }
    }
}
