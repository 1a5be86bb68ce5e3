//! `/p/{id}/results`: counts and shares per answer, and responses per day.
//!
//! Charts are decoration: every number is in a table (caption, header cells),
//! so screen readers and text browsers get the same information; the bars are
//! SVG rectangles sized by attributes, which the strict CSP allows (no inline
//! style). Private results need the admin key, sent in a POST body, never in
//! a URL. A voter back at an `afterVote` poll brings the receipt of their
//! ballot in a POST body (`receipt`), as on the ballot page.

use maud::html;

use super::WebWorker;
use super::ballot::Verdict;
use super::form::Form;
use super::layout::{Ctx, lang_attr, page, respond};
use super::media::figure;
use super::parts::facts::facts;
use super::parts::paths::VOTED;
use super::parts::results_view::results_section;
use super::parts::token::{presented_token, token_form};
use crate::app::{Access, Links};
use crate::day::Day;
use crate::domain::results::Results;
use crate::domain::{Poll, ResultsVisibility, Slot};
use crate::error::{AuthFailure, Error, ReceiptRefusal};
use crate::http::{Request, Response};

pub fn get(w: &mut WebWorker, req: &Request, poll: &Poll, today: Day) -> Result<Response, Error> {
    // A form token already redeemed for this poll shows its bearer voted
    // (today or yesterday: the token keys live that long, `ballot.rs`).
    let voted = req.query_param(VOTED).filter(|b| w.web.ballots.check(&poll.id, b, today) == Verdict::Used);
    let access = if voted.is_some() { Access::Voter } else { Access::Anyone };
    show(w, req, poll, (access, voted), today)
}

pub fn post(w: &mut WebWorker, req: &Request, form: &Form, poll: &Poll, today: Day) -> Result<Response, Error> {
    // Only where being a voter opens them: elsewhere a receipt proves nothing.
    if poll.visibility == ResultsVisibility::AfterVote
        && let Some(receipt) = form.get("receipt").map(str::trim).filter(|r| !r.is_empty())
    {
        return voter(w, req, poll, receipt, today);
    }
    let access = presented_token(form).map_or(Access::Anyone, Access::Token);
    show(w, req, poll, (access, None), today)
}

/// The results of an `afterVote` poll for a voter with their receipt; the
/// prompt again, with the reason at the receipt's field, if it opens no
/// ballot of the poll. The language switcher posts the receipt along.
fn voter(w: &mut WebWorker, req: &Request, poll: &Poll, receipt: &str, today: Day) -> Result<Response, Error> {
    let ctx = w.ctx(req, Some(poll.lang));
    let t = ctx.t;
    let refused = match w.session.voter_results(poll, receipt) {
        Ok(results) => {
            let ctx = Ctx { secret: Some(("receipt", receipt.to_owned())), ..ctx };
            return Ok(results_page(&ctx, (poll, today), &results, true));
        }
        Err(Error::ReceiptRefused(ReceiptRefusal::NotAReceipt)) => t.err_receipt_not_a_receipt,
        Err(Error::ReceiptRefused(ReceiptRefusal::Unknown)) => t.err_receipt_unknown,
        Err(Error::ReceiptRefused(ReceiptRefusal::ChangesOff)) => t.err_receipt_changes_off,
        Err(e) => return Err(e),
    };
    let withheld = super::errors::withheld_text(t, &Error::ResultsWithheld(crate::error::Withheld::UntilVote));
    Ok(prompt(&ctx, poll, 403, (t.withheld_title, &withheld), None, (receipt, Some(refused))))
}

/// The results for a reader presenting `access` (and, for a voter, the
/// redeemed form token that shows it), or the key prompt.
fn show(
    w: &mut WebWorker,
    req: &Request,
    poll: &Poll,
    (access, voted): (Access, Option<&str>),
    today: Day,
) -> Result<Response, Error> {
    let ctx = w.ctx(req, Some(poll.lang));
    let t = ctx.t;
    match w.session.results(poll, access) {
        Ok(results) => {
            // Results unlocked with the key: the language switcher must post
            // it along, or it would lock the page again.
            let secret = match access {
                Access::Token(token) if !poll.results_open_to_all() => Some(("token", token.to_owned())),
                _ => None,
            };
            let voter = matches!(access, Access::Voter) && poll.visibility == ResultsVisibility::AfterVote;
            // The switcher keeps the voter's token, or the results would hide.
            let keep = voted.filter(|_| voter).map(|b| (VOTED, b.to_owned()));
            Ok(results_page(&Ctx { secret, keep, ..ctx }, (poll, today), &results, voter))
        }
        Err(Error::Unauthorized(AuthFailure::Missing)) => {
            Ok(prompt(&ctx, poll, 200, (t.private_results_title, t.private_results_text), None, NO_RECEIPT))
        }
        // A wrong key: the prompt again, saying why as it did before (for
        // results not yet visible, when they will be).
        Err(Error::Unauthorized(_)) => match w.session.results(poll, Access::Anyone) {
            Err(e @ Error::ResultsWithheld(_)) => {
                let text = super::errors::withheld_text(t, &e);
                Ok(prompt(&ctx, poll, 403, (t.withheld_title, &text), Some(t.err_bad_token), NO_RECEIPT))
            }
            _ => Ok(prompt(
                &ctx,
                poll,
                403,
                (t.private_results_title, t.private_results_text),
                Some(t.err_bad_token),
                NO_RECEIPT,
            )),
        },
        // Not visible yet: why, and when; the admin may still unlock them.
        Err(e @ Error::ResultsWithheld(_)) => {
            let text = super::errors::withheld_text(t, &e);
            Ok(prompt(&ctx, poll, 200, (t.withheld_title, &text), None, NO_RECEIPT))
        }
        Err(e) => Err(e),
    }
}

/// A receipt typed on the prompt, and why it was refused: none yet.
const NO_RECEIPT: (&str, Option<&str>) = ("", None);

/// Why the results are not shown (`heading`, `text`), and the key form
/// (`error`: why the key was refused). On an `afterVote` poll that gives
/// receipts, a voter's receipt form too (`receipt`: as typed, and why it
/// was refused).
fn prompt(
    ctx: &Ctx,
    poll: &Poll,
    status: u16,
    (heading, text): (&str, &str),
    error: Option<&str>,
    (typed, refused): (&str, Option<&str>),
) -> Response {
    let t = ctx.t;
    let (content_lang, title, _) = poll.version(ctx.lang);
    let body = html! {
        h1 lang=[lang_attr(content_lang, ctx.lang)] { (title) }
        h2 { (heading) }
        p { (text) }
        // Not visible yet: first the way to the poll, where a
        // voter sees them by voting or learns when they open; the key
        // form is for the poll's creator.
        @let withheld = heading == t.withheld_title;
        @if withheld {
            @let vote = poll.visibility == ResultsVisibility::AfterVote && !poll.closed;
            p { a.button href=(ctx.href(&Links::share_path(&poll.id))) { (if vote { t.withheld_vote } else { t.withheld_open_poll }) } }
            // A voter back later: the receipt shows that they voted.
            @if poll.visibility == ResultsVisibility::AfterVote && (poll.vote_changes || refused.is_some()) {
                form.voter-receipt method="post" action=(ctx.action()) {
                    div.field {
                        label for="voter-receipt" { (t.receipt_label) }
                        p.hint id="voter-receipt-hint" { (t.voter_results_hint) }
                        @if let Some(e) = refused { p.field-error id="voter-receipt-error" { (e) } }
                        input type="text" id="voter-receipt" name="receipt" value=(typed) required autocomplete="off"
                            spellcheck="false" autocapitalize="characters" aria-invalid=[refused.map(|_| "true")]
                            aria-describedby=(if refused.is_some() { "voter-receipt-hint voter-receipt-error" } else { "voter-receipt-hint" });
                    }
                    div.submit { button.secondary type="submit" { (t.token_show_results) } }
                }
            }
        }
        @if heading != t.private_results_title { p { (t.private_results_text) } }
        (token_form(ctx, t.token_show_results, error, !withheld))
    };
    respond(status, ctx.lang, page(ctx, heading, body))
}

/// The results page; `voter` when a voter was just sent here after voting.
fn results_page(ctx: &Ctx, (poll, today): (&Poll, Day), results: &Results, voter: bool) -> Response {
    let (content_lang, title, _) = poll.version(ctx.lang);
    let body = html! {
        h1 lang=[lang_attr(content_lang, ctx.lang)] { (title) }
        @if voter {
            // As on the thank-you page, the script notes the vote in
            // localStorage until the poll's erase day; with the form code
            // that opened these results (`data-code`), for the rest of the
            // day, so that the share page can lead back here.
            p.notice.ok role="status" id="voted" data-poll=(poll.id) data-until=(poll.expires_on.to_string())
                data-code=[ctx.keep.as_ref().filter(|(name, _)| *name == VOTED).map(|(_, code)| code.as_str())] { (ctx.t.voted_results) }
        }
        (facts(ctx, poll, today))
        @if let Some(m) = poll.media_at(Slot::Poll) { (figure(ctx, m, poll.lang)) }
        // Results anyone may see, of a poll still open: the script asks the
        // API for them every few seconds and redraws them when they change
        // (`data-live-results`); without script the page shows them as they were.
        @if poll.results_open_to_all() && !poll.closed && !voter {
            div.live data-live-results=(format!("/api/polls/{}/results", poll.id)) {
                p.results-live hidden { (ctx.t.results_live) }
                (results_section(ctx, poll, results, 2))
            }
        } @else {
            (results_section(ctx, poll, results, 2))
        }
        @if !poll.closed {
            p { a href=(ctx.href(&Links::share_path(&poll.id))) { (title) } }
        }
    };
    respond(200, ctx.lang, page(ctx, &format!("{} – {}", ctx.t.results_heading, title), body))
}
