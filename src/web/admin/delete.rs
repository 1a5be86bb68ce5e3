//! The admin page's deletion: a poll and everything of it erased for good,
//! after the admin confirms it on a page of its own.
//!
//! Why a module of its own: it is one action of the page, with its folded
//! section, its confirmation page and the deletion itself. Promises:
//! nothing is erased without the confirmation; a second confirmation (the
//! poll already gone) answers the same page as the first.

use maud::{Markup, html};

use super::{fold, hidden_token};
use crate::domain::Poll;
use crate::error::Error;
use crate::http::Response;
use crate::web::WebWorker;
use crate::web::layout::{Ctx, gone_page, lang_attr, page, poll_subtitle, respond};

/// The folded section with the button that asks for the confirmation.
pub(super) fn section(ctx: &Ctx, token: &str) -> Markup {
    let t = ctx.t;
    let content = html! {
        p { (t.delete_text) }
        form method="post" action=(ctx.action()) {
            (hidden_token(token))
            button.danger type="submit" name="action" value="delete" { (t.delete_button) }
        }
    };
    fold("delete", t.delete_heading, false, content)
}

/// The page that asks to confirm the deletion, or go back to the dashboard.
pub(super) fn confirm(ctx: &Ctx, poll: &Poll, token: &str) -> Response {
    let t = ctx.t;
    let (content_lang, title, _) = poll.version(ctx.lang);
    let body = html! {
        h1 { (t.delete_confirm_title) }
        (poll_subtitle(title.as_str(), lang_attr(content_lang, ctx.lang)))
        p { (t.delete_confirm_text) }
        div.row-actions {
            form method="post" action=(ctx.action()) {
                (hidden_token(token))
                button.danger type="submit" name="action" value="delete-confirmed" { (t.delete_confirm_button) }
            }
            form method="post" action=(ctx.action()) {
                (hidden_token(token))
                button.secondary type="submit" name="action" value="open" { (t.delete_cancel) }
            }
        }
    };
    respond(200, ctx.lang, page(ctx, t.delete_confirm_title, body))
}

/// Erases the poll, once confirmed, and says so.
pub(super) fn confirmed(w: &WebWorker, ctx: &Ctx, poll: &Poll) -> Result<Response, Error> {
    let t = ctx.t;
    match w.web.app.delete(poll) {
        Ok(()) | Err(Error::NotFound) => {
            Ok(gone_page(ctx, 200, t.deleted_title, t.deleted_text, Some(poll.id.as_str())))
        }
        Err(e) => Err(e),
    }
}
