//! `/p/{id}/ballot`: a voter's own ballot, found with the receipt they got
//! after voting: see it, change it, or withdraw it, while the
//! poll is open and lets voters change their ballots (`voteChanges`).
//!
//! Promises:
//! - the receipt travels only in POST bodies (the field `receipt`) and in
//!   URL fragments, which browsers never send: never in a query string, a
//!   `Location` or a log. The language switcher of these pages posts it
//!   along in a form (as it does the admin key);
//! - the page works without script: the receipt is typed; with script it is
//!   taken from the link's fragment (`#receipt=…`) or from this browser's
//!   `localStorage`, and sent by itself;
//! - a change is read exactly like a vote (`parts::vote_form::answers`) and checked by
//!   the same rules; a refused change comes back with what was entered;
//! - everything goes through the application layer (`Session::own_ballot`,
//!   `change_ballot`, `withdraw_ballot`).

use maud::html;

use super::WebWorker;
use super::errors::with_headers;
use super::form::Form;
use super::layout::{Ctx, lang_attr, notice, page, poll_subtitle, respond};
use super::parts::facts::facts;
use super::parts::results_view::results_section;
use super::parts::vote_form::{BadVote, Entered, answers, problem_summary, question_fieldset};
use crate::app::Access;
use crate::day::Day;
use crate::domain::Poll;
use crate::error::{Error, ReceiptRefusal};
use crate::http::{Request, Response};

/// The form's fields besides the answers (`docs/WEB.md`).
const FIELDS: [&str; 2] = ["receipt", "action"];

/// `GET`: the receipt prompt.
pub fn get(w: &mut WebWorker, req: &Request, poll: &Poll) -> Result<Response, Error> {
    let ctx = w.ctx(req, Some(poll.lang));
    if let Some(r) = refused_outright(&ctx, poll) {
        return Ok(r);
    }
    Ok(prompt(&ctx, poll, 200, "", None))
}

/// `POST`: show (`action` absent or `show`), `change` or `withdraw`.
pub fn post(w: &mut WebWorker, req: &Request, form: &Form, poll: &Poll, today: Day) -> Result<Response, Error> {
    let ctx = w.ctx(req, Some(poll.lang));
    let t = ctx.t;
    if let Some(r) = refused_outright(&ctx, poll) {
        return Ok(r);
    }
    let typed = form.text("receipt");
    // The receipt is looked up first: nothing of the ballot, nor of what
    // was entered, is shown to someone without a valid one.
    let (receipt, stored) = match w.session.own_ballot(poll, &typed) {
        Ok(found) => found,
        Err(e) => return refusal(&ctx, poll, &typed, e),
    };
    let receipt = receipt.expose();
    let ctx = Ctx { secret: Some(("receipt", receipt.clone())), ..ctx };
    match form.get("action").map(str::trim).unwrap_or("show") {
        "change" => {
            let (answers, entered) = match answers(form, poll, &FIELDS) {
                Ok(read) => read,
                Err(BadVote::Malformed) => {
                    return Err(Error::Malformed("The ballot form holds an answer its poll does not have.".into()));
                }
                Err(BadVote::Changed) => {
                    let shown = Entered::from_ballot(&stored);
                    return ballot_page(w, &ctx, poll, today, 422, &shown, Some(("error", t.err_vote_form)));
                }
                Err(BadVote::Rule(problem, entered)) => {
                    let (entered, text) = entered.refused(t, &problem);
                    let message = text.as_deref().map(|text| ("error", text));
                    return ballot_page(w, &ctx, poll, today, 422, &entered, message);
                }
            };
            match w.session.change_ballot(req.client, poll, &receipt, answers, today) {
                Ok(now) => {
                    let shown = Entered::from_ballot(&now);
                    ballot_page(w, &ctx, poll, today, 200, &shown, Some(("ok", t.own_ballot_changed)))
                }
                Err(Error::Invalid(errors)) => {
                    let (entered, text) = match errors.first() {
                        Some(e) => entered.refused(t, &e.problem),
                        None => (entered, Some(t.err_no_answer.to_owned())),
                    };
                    let message = text.as_deref().map(|text| ("error", text));
                    ballot_page(w, &ctx, poll, today, 422, &entered, message)
                }
                // Too many changes from this network: the changes stay on
                // the page, to send again later.
                Err(e @ Error::VotesThrottled { .. }) => {
                    let r = ballot_page(w, &ctx, poll, today, 429, &entered, Some(("error", t.err_throttled)))?;
                    Ok(with_headers(r, &e))
                }
                Err(e) => refusal(&Ctx { secret: None, ..ctx }, poll, &typed, e),
            }
        }
        // The ballot page's button asks first: a withdrawal cannot be undone.
        "confirm-withdraw" => Ok(confirm_page(&ctx, poll)),
        "withdraw" => match w.session.withdraw_ballot(req.client, poll, &receipt, today) {
            Ok(hash) => {
                // The vote's form no longer opens `afterVote` results.
                w.web.ballots.withdrawn(&hash);
                Ok(withdrawn_page(&Ctx { secret: None, ..ctx }, poll, &receipt))
            }
            Err(e @ Error::VotesThrottled { .. }) => {
                let shown = Entered::from_ballot(&stored);
                let r = ballot_page(w, &ctx, poll, today, 429, &shown, Some(("error", t.err_throttled)))?;
                Ok(with_headers(r, &e))
            }
            Err(e) => refusal(&Ctx { secret: None, ..ctx }, poll, &typed, e),
        },
        // `show`, and anything else a changed form may send.
        _ => ballot_page(w, &ctx, poll, today, 200, &Entered::from_ballot(&stored), None),
    }
}

/// The page for a poll that takes no receipt at all now (closed: 409, or
/// without `voteChanges`: 403), as the application decides.
fn refused_outright(ctx: &Ctx, poll: &Poll) -> Option<Response> {
    crate::app::receipts_open(poll)
        .err()
        .map(|e| refusal(ctx, poll, "", e).unwrap_or_else(|e| super::errors::page(ctx, &e)))
}

/// What a refused receipt (or a failed write) shows: the prompt again with
/// the reason at the field, or a page saying why.
fn refusal(ctx: &Ctx, poll: &Poll, typed: &str, e: Error) -> Result<Response, Error> {
    let t = ctx.t;
    match e {
        Error::ReceiptRefused(ReceiptRefusal::NotAReceipt) => {
            Ok(prompt(ctx, poll, 403, typed, Some(t.err_receipt_not_a_receipt)))
        }
        Error::ReceiptRefused(ReceiptRefusal::Unknown) => {
            Ok(prompt(ctx, poll, 403, typed, Some(t.err_receipt_unknown)))
        }
        Error::ReceiptRefused(ReceiptRefusal::ChangesOff) => {
            Ok(message(ctx, poll, 403, t.error_title, t.err_receipt_changes_off))
        }
        Error::Closed => Ok(message(ctx, poll, 409, t.closed_title, t.err_receipt_closed)),
        e => Err(e),
    }
}

/// A heading, the poll's title and a text.
fn message(ctx: &Ctx, poll: &Poll, status: u16, heading: &str, text: &str) -> Response {
    let (content_lang, title, _) = poll.version(ctx.lang);
    let body = html! {
        h1 { (heading) }
        (poll_subtitle(title.as_str(), lang_attr(content_lang, ctx.lang)))
        (notice("error", text))
        p { a.button href=(ctx.href(&crate::app::Links::share_path(&poll.id))) { (ctx.t.withheld_open_poll) } }
    };
    respond(status, ctx.lang, page(ctx, heading, body))
}

/// The receipt form. `typed` is given back after a refusal (a typo can be
/// fixed); `error` is said at the field. The script fills and sends the
/// form by itself only on a fresh prompt (`data-auto`), so a refused
/// receipt is never sent again in a loop.
fn prompt(ctx: &Ctx, poll: &Poll, status: u16, typed: &str, error: Option<&str>) -> Response {
    let t = ctx.t;
    let (content_lang, title, _) = poll.version(ctx.lang);
    let body = html! {
        h1 { (t.own_ballot_title) }
        (poll_subtitle(title.as_str(), lang_attr(content_lang, ctx.lang)))
        p.lead { (t.own_ballot_prompt) }
        form.receipt method="post" action=(ctx.action()) data-receipt-form data-poll=(poll.id)
            data-auto=[error.is_none().then_some("1")] data-refused=[error.map(|_| "1")] {
            div.field {
                label for="receipt" { (t.receipt_label) }
                @if let Some(e) = error { p.field-error id="receipt-error" { (e) } }
                input type="text" id="receipt" name="receipt" value=(typed) required autocomplete="off"
                    spellcheck="false" autocapitalize="characters"
                    aria-invalid=[error.map(|_| "true")] aria-describedby=[error.map(|_| "receipt-error")];
            }
            div.submit { button.primary type="submit" name="action" value="show" { (t.own_ballot_show) } }
        }
    };
    respond(status, ctx.lang, page(ctx, t.own_ballot_title, body))
}

/// The voter's ballot in the vote form's fields, ready to change, the
/// withdraw button, and the results when this voter may see them.
fn ballot_page(
    w: &mut WebWorker,
    ctx: &Ctx,
    poll: &Poll,
    today: Day,
    status: u16,
    entered: &Entered,
    message: Option<(&str, &str)>,
) -> Result<Response, Error> {
    let t = ctx.t;
    let receipt = ctx.secret("receipt").unwrap_or_default();
    let (content_lang, title, questions) = poll.version(ctx.lang);
    let clang = lang_attr(content_lang, ctx.lang);
    // The results this voter may read, as the application decides.
    let results = match w.session.results(poll, Access::Voter) {
        Ok(results) => Some(results),
        Err(Error::ResultsWithheld(_) | Error::Unauthorized(_)) => None,
        Err(e) => return Err(e),
    };
    let body = html! {
        h1 { (t.own_ballot_title) }
        (poll_subtitle(title.as_str(), clang))
        (facts(ctx, poll, today))
        @if let Some((kind, text)) = message { (notice(kind, text)) }
        (problem_summary(ctx, clang, &questions, entered))
        p.lead { (t.own_ballot_intro) }
        form.vote.own-ballot method="post" action=(ctx.action()) {
            input type="hidden" name="receipt" value=(receipt);
            @for (i, (q, texts)) in poll.questions.iter().zip(&questions).enumerate() {
                (question_fieldset(ctx, poll, clang, i, q, texts, entered))
            }
            div.submit { button.primary type="submit" name="action" value="change" { (t.own_ballot_change) } }
        }
        form.withdraw method="post" action=(ctx.action()) {
            input type="hidden" name="receipt" value=(receipt);
            p.hint id="withdraw-hint" { (withdraw_hint(t, poll)) }
            button.secondary.danger type="submit" name="action" value="confirm-withdraw" aria-describedby="withdraw-hint" {
                (t.own_ballot_withdraw)
            }
        }
        @if let Some(results) = &results { (results_section(ctx, poll, results, 2)) }
    };
    Ok(respond(status, ctx.lang, page(ctx, t.own_ballot_title, body)))
}

/// What withdrawing will do, before it is done; the invite code's fate only
/// on a poll that takes codes.
fn withdraw_hint(t: &crate::i18n::Catalogue, poll: &Poll) -> String {
    if poll.duplicate_check == crate::domain::DuplicateCheck::Invite {
        format!("{} {}", t.own_ballot_withdraw_hint, t.own_ballot_withdraw_code)
    } else {
        t.own_ballot_withdraw_hint.to_owned()
    }
}

/// Asks before a withdrawal: what it does, the button that does it (the
/// form's `action=withdraw`), and the way back to the ballot.
fn confirm_page(ctx: &Ctx, poll: &Poll) -> Response {
    let t = ctx.t;
    let receipt = ctx.secret("receipt").unwrap_or_default();
    let (content_lang, title, _) = poll.version(ctx.lang);
    let body = html! {
        h1 { (t.own_ballot_withdraw) }
        (poll_subtitle(title.as_str(), lang_attr(content_lang, ctx.lang)))
        (notice("info", &withdraw_hint(t, poll)))
        form.withdraw-confirm method="post" action=(ctx.action()) {
            input type="hidden" name="receipt" value=(receipt);
            div.submit {
                button.danger type="submit" name="action" value="withdraw" { (t.own_ballot_withdraw) }
                " "
                button.secondary type="submit" name="action" value="show" { (t.own_ballot_show) }
            }
        }
    };
    respond(200, ctx.lang, page(ctx, t.own_ballot_withdraw, body))
}

/// After a withdrawal. The script forgets this browser's receipt and vote
/// note for the poll (`data-forget-poll`): that receipt
/// (`data-forget-receipt`; withdrawn, it opens nothing any more), and the
/// note when it kept no other.
fn withdrawn_page(ctx: &Ctx, poll: &Poll, receipt: &str) -> Response {
    let t = ctx.t;
    let (content_lang, title, _) = poll.version(ctx.lang);
    let body = html! {
        h1 { (t.own_ballot_withdrawn_title) }
        (poll_subtitle(title.as_str(), lang_attr(content_lang, ctx.lang)))
        p.notice.ok role="status" id="withdrawn" data-forget-poll=(poll.id) data-forget-receipt=(receipt) { (t.own_ballot_withdrawn_text) }
        p { a.button href=(ctx.href(&crate::app::Links::share_path(&poll.id))) { (t.withheld_open_poll) } }
    };
    respond(200, ctx.lang, page(ctx, t.own_ballot_withdrawn_title, body))
}
