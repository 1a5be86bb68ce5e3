//! From an [`Error`] to a page: one function for every web handler.
//!
//! Why: a person who mistyped a link, sent a form twice or hit a full disk
//! must read what happened in their language, and a client's mistake must
//! never look like a server failure (a 500). Each error gets the status the
//! API would give it (a wrong admin key is 403 here: a page cannot answer
//! with a Bearer challenge), the headers that go with that status, and a
//! text from the page's catalogue. Internal causes go to stderr, here only.

use super::layout::{Ctx, message_page};
use crate::error::{AuthFailure, Error, InviteRefusal, ReceiptRefusal, Withheld};
use crate::http::Response;
use crate::i18n::Catalogue;

/// The page for `e`, in `ctx`'s language.
pub fn page(ctx: &Ctx, e: &Error) -> Response {
    let t = ctx.t;
    let (rate_limited, withheld_words, too_many);
    let (status, title, text): (u16, &str, &str) = match e {
        Error::NotFound => (404, t.not_found_title, t.not_found_text),
        Error::Malformed(_) | Error::Invalid(_) => (400, t.error_title, t.bad_form),
        Error::UnsupportedMediaType { .. } => (415, t.error_title, t.bad_form),
        Error::TooLarge { .. } => (413, t.error_title, t.too_large),
        Error::MethodNotAllowed(_) => (405, t.error_title, t.method_not_allowed),
        Error::Unauthorized(AuthFailure::InvalidToken | AuthFailure::Malformed) => {
            (403, t.error_title, t.err_bad_token)
        }
        Error::Unauthorized(AuthFailure::Missing) => (403, t.error_title, t.private_results_text),
        Error::ResultsWithheld(_) => {
            withheld_words = withheld_text(t, e);
            (403, t.withheld_title, withheld_words.as_str())
        }
        Error::InviteRefused(InviteRefusal::Missing) => (403, t.error_title, t.err_invite_missing),
        Error::InviteRefused(InviteRefusal::NotACode) => (403, t.error_title, t.err_invite_not_a_code),
        Error::InviteRefused(InviteRefusal::UnknownOrUsed) => (403, t.error_title, t.err_invite_refused),
        Error::ReceiptRefused(ReceiptRefusal::NotAReceipt) => (403, t.error_title, t.err_receipt_not_a_receipt),
        Error::ReceiptRefused(ReceiptRefusal::Unknown) => (403, t.error_title, t.err_receipt_unknown),
        Error::ReceiptRefused(ReceiptRefusal::ChangesOff) => (403, t.error_title, t.err_receipt_changes_off),
        Error::Closed => (409, t.closed_title, t.closed_text),
        Error::FormSpent => (409, t.thanks_title, t.err_ballot_used),
        Error::HasResponses(_) => (409, t.error_title, t.err_fixed_by_responses),
        Error::PollChanged => (409, t.error_title, t.err_poll_changed),
        Error::RequestTimeout => (408, t.error_title, t.bad_form),
        Error::RateLimited(rl) => {
            rate_limited = (t.err_rate_limited)(rl.retry_after_secs.div_ceil(60));
            (429, t.error_title, rate_limited.as_str())
        }
        Error::VotesThrottled { .. } | Error::VotesPaced | Error::VotedFromNetwork { .. } => {
            too_many = too_many_text(ctx, e);
            (429, t.error_title, too_many.as_str())
        }
        Error::Unavailable { .. } => (503, t.error_title, t.err_unavailable),
        Error::Internal(cause) => {
            eprintln!("anonpoll: internal error: {cause:#}");
            (500, t.error_title, t.error_text)
        }
    };
    let r = message_page(ctx, status, title, text);
    with_headers(r, e)
}

/// Why votes from the reader's network are held back for now: the throttle
/// (minutes), the pace of `none` polls (a second) or the day rule (in this
/// server's number).
pub fn too_many_text(ctx: &Ctx, e: &Error) -> String {
    let t = ctx.t;
    match e {
        Error::VotesPaced => t.err_paced.to_owned(),
        Error::VotedFromNetwork { .. } => (t.err_voted_from_network)(ctx.network_day),
        _ => t.err_throttled.to_owned(),
    }
}

/// Why results are withheld, and until when, in the reader's language.
pub fn withheld_text(t: &Catalogue, e: &Error) -> String {
    match e {
        Error::ResultsWithheld(Withheld::UntilVote) => t.withheld_after_vote.to_owned(),
        Error::ResultsWithheld(Withheld::UntilClose { closes_on: Some(day) }) => {
            (t.withheld_after_close_on)(&t.day(&day.to_string()))
        }
        _ => t.withheld_after_close.to_owned(),
    }
}

/// The headers an error's status calls for (the same as the API's).
pub fn with_headers(r: Response, e: &Error) -> Response {
    let r = match e.retry_after_secs() {
        Some(secs) => r.with_header("Retry-After", secs.to_string()),
        None => r,
    };
    match e {
        Error::MethodNotAllowed(allowed) => r.with_header("Allow", allowed.join(", ")),
        Error::TooLarge { .. } => r.with_header("Connection", "close"),
        _ => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Lang;
    use crate::error::RateLimited;
    use crate::web::lang::Choice;

    #[test]
    fn a_clients_mistake_is_never_a_server_error() {
        let ctx = Ctx::new(Choice { lang: Lang::De, explicit: false }, "/p/x");
        let cases = [
            (Error::NotFound, 404),
            (Error::Malformed("x".into()), 400),
            (Error::TooLarge { limit: 1 }, 413),
            (Error::UnsupportedMediaType { accepted: &["application/x-www-form-urlencoded"] }, 415),
            (Error::MethodNotAllowed(&["GET"]), 405),
            (Error::Unauthorized(AuthFailure::InvalidToken), 403),
            (Error::Closed, 409),
            (Error::ResultsWithheld(Withheld::UntilVote), 403),
            (Error::ResultsWithheld(Withheld::UntilClose { closes_on: crate::day::Day::parse("2026-01-02") }), 403),
            (Error::RateLimited(RateLimited { limit: 1, window_secs: 60, retry_after_secs: 61 }), 429),
            (Error::VotesThrottled { retry_after_secs: 5 }, 429),
            (Error::VotesPaced, 429),
            (Error::Unavailable { reason: "x", retry_after_secs: 1 }, 503),
        ];
        for (e, status) in cases {
            let r = page(&ctx, &e);
            assert_eq!(r.status, status, "{e}");
            assert_eq!(r.header("Content-Language"), Some("de"));
        }
        assert_eq!(
            page(&ctx, &Error::Unavailable { reason: "x", retry_after_secs: 7 }).header("Retry-After"),
            Some("7")
        );
        assert_eq!(page(&ctx, &Error::MethodNotAllowed(&["GET", "HEAD"])).header("Allow"), Some("GET, HEAD"));
        let internal = page(&ctx, &Error::internal(anyhow::anyhow!("secret cause")));
        assert_eq!(internal.status, 500);
        assert!(!String::from_utf8_lossy(&internal.body).contains("secret cause"));
    }
}
