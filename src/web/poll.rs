//! `/p/{id}`: the share page, where people answer a poll, and the vote.
//!
//! A vote is counted only with a valid one-time ballot token (`ballot.rs`)
//! and within the per-client limits (`app/throttle.rs`). Whatever goes
//! wrong, the person sees why, and, when it makes sense to try again, the
//! form comes back with their choices kept and a fresh token: no vote is
//! lost silently. Switching language sends the form along and gets it back
//! as entered, counting nothing, so no choice is lost either (without
//! script too).

use maud::{Markup, html};

use super::ballot::Verdict;
use super::errors::{self, with_headers};
use super::form::Form;
use super::layout::{Ctx, lang_attr, notice, page, poll_subtitle, respond};
use super::media::figure;
use super::parts::facts::facts;
use super::parts::paths::{after_vote_path, own_ballot_path};
use super::parts::results_view::results_section;
use super::parts::settings::visibility_text;
use super::parts::vote_form::{BadVote, Entered, answers, problem_summary, question_fieldset};
use super::{Web, WebWorker};
use crate::app::Links;
use crate::day::Day;
use crate::domain::results::Results;
use crate::domain::{DuplicateCheck, Poll, ResultsVisibility, Slot};
use crate::error::{Error, InviteRefusal};
use crate::http::{Request, Response};
use crate::secret::Receipt;
use crate::store::Settle;

pub fn share_page(w: &mut WebWorker, req: &Request, poll: &Poll, today: Day) -> Result<Response, Error> {
    let ctx = w.ctx(req, Some(poll.lang));
    share_response(&w.web, &ctx, poll, today, 200, &Entered::default(), None)
}

/// The share page with what was `entered` and an optional message. It needs
/// only what all workers share, so answers built after a commit use it too.
fn share_response(
    web: &Web,
    ctx: &Ctx,
    poll: &Poll,
    today: Day,
    status: u16,
    entered: &Entered,
    message: Option<&str>,
) -> Result<Response, Error> {
    let t = ctx.t;
    let (content_lang, title, questions) = poll.version(ctx.lang);
    let clang = lang_attr(content_lang, ctx.lang);
    let token = if poll.closed { None } else { Some(web.ballots.issue(&poll.id, today).map_err(Error::internal)?) };
    // With the vote form on the page, switching language sends it along
    // (keeping the choices, without script too; `vote` answers the switch).
    let switching;
    let ctx = if token.is_some() {
        switching = ctx.switching_with(VOTE_FORM);
        &switching
    } else {
        ctx
    };
    let body = html! {
        h1 lang=[clang] { (title) }
        (facts(ctx, poll, today))
        @if let Some(m) = poll.media_at(Slot::Poll) { (figure(ctx, m, poll.lang)) }
        @if let Some(m) = message { (notice("error", m)) }
        (problem_summary(ctx, clang, &questions, entered))
        @if let Some(token) = token {
            p.notice.info id="already-voted" data-poll=(poll.id) data-until=(poll.expires_on.to_string()) role="status" hidden { (t.already_voted) }
            @if poll.vote_changes {
                // Shown by the script when this browser keeps a receipt for
                // the poll: the ballot page then opens with it by itself;
                // with several (one per ballot), a link to each.
                div.notice.info.receipt-remembered id="receipt-remembered" data-poll=(poll.id) data-until=(poll.expires_on.to_string()) role="status" hidden {
                    p { (t.receipt_remembered) }
                    p.actions {
                        a.button href=(ctx.href(&own_ballot_path(&poll.id))) data-receipt-open { (t.receipt_open) }
                        span data-receipt-links data-nth=((t.receipt_open_nth)(987_654, "{r}").replace("987654", "{n}")) hidden {}
                        " "
                        button.secondary type="button" data-forget-receipt { (t.receipt_forget) }
                    }
                }
            }
            // After a vote from this browser the script folds the form
            // behind this button: one's own response comes first, and a
            // second vote is a choice, not the page's main action.
            // Not where a second response from this network is refused anyway.
            @if !(poll.duplicate_check == DuplicateCheck::Network && web.app.one_response_a_day_per_network()) {
                p.answer-again { button.secondary type="button" id="answer-again" hidden { (t.answer_again) } }
            }
            div id="answer-form" {
            p.lead { (t.vote_intro) }
            form.vote id=(VOTE_FORM) method="post" action=(ctx.action()) {
                input type="hidden" name="ballot" value=(token);
                // The structure of the questions this form shows: a vote
                // read against another one is answered afresh (issue 37).
                input type="hidden" name="rev" value=(poll.restructured);
                @if poll.duplicate_check == DuplicateCheck::Invite {
                    // Filled from an invite link's `#invite=` by the script;
                    // typed from the invitation otherwise.
                    div.field.invite {
                        label for="invite" { (t.invite_label) }
                        p.hint id="invite-hint" { (t.invite_hint) span data-script-only hidden { " " (t.invite_hint_link) } }
                        @if let Some(e) = entered.invite_error { p.field-error id="invite-error" { (e) } }
                        input type="text" id="invite" name="invite" value=(entered.invite) required autocomplete="off"
                            spellcheck="false" autocapitalize="characters"
                            aria-invalid=[entered.invite_error.map(|_| "true")]
                            aria-describedby=(if entered.invite_error.is_some() { "invite-hint invite-error" } else { "invite-hint" });
                    }
                }
                @for (i, (q, texts)) in poll.questions.iter().zip(&questions).enumerate() {
                    (question_fieldset(ctx, poll, clang, i, q, texts, entered))
                }
                div.submit { button.primary type="submit" { (t.vote_submit) } }
            }
            }
        } @else {
            div.notice.closed role="status" {
                h2 { (t.closed_title) }
                p { (t.closed_text) }
            }
        }
        @if poll.results_open_to_all() {
            p { a href=(ctx.href(&Links::results_path(&poll.id))) { (t.see_results) } }
        } @else if matches!(poll.visibility, ResultsVisibility::AfterVote | ResultsVisibility::AfterClose) {
            p.hint.results-when { (visibility_text(t, poll)) }
            @if poll.visibility == ResultsVisibility::AfterVote { (voter_results(ctx, poll)) }
        }
        @if poll.vote_changes && !poll.closed {
            // For a voter without script, or on another device: the receipt
            // is typed on that page.
            p.hint.own-ballot id="own-ballot-link" { a href=(ctx.href(&own_ballot_path(&poll.id))) { (t.receipt_have) } }
        }
    };
    Ok(respond(status, ctx.lang, page(ctx, title.as_str(), body)))
}

/// A voter's way back to the results of an `afterVote` poll, with the
/// proof of a vote that they hold (the server keeps none it could look up
/// by who they are). With script, shown when this browser has one: a kept
/// receipt, which the form posts to the results page, or else, on the day
/// of the vote, the form code of the vote (`localStorage`, with the vote
/// note), in the link a voter is sent on after voting. Without script, a
/// link to the results page, where a receipt is typed (on a poll that
/// gives receipts).
fn voter_results(ctx: &Ctx, poll: &Poll) -> Markup {
    let t = ctx.t;
    let results = Links::results_path(&poll.id);
    html! {
        div.voter-results id="voter-results" data-poll=(poll.id) hidden {
            form method="post" action=(format!("{results}?lang={}", ctx.lang.code())) data-voter-receipt hidden {
                input type="hidden" name="receipt" value="";
                button.secondary type="submit" { (t.see_results) }
            }
            a.button.secondary data-voter-link=(ctx.href_with(&after_vote_path(poll, "{code}"))) hidden { (t.see_results) }
        }
        @if poll.vote_changes {
            p.hint id="voter-results-typed" { a href=(ctx.href(&results)) { (t.voter_results_link) } }
        }
    }
}

/// The vote form's id: the language switcher's buttons send it along.
const VOTE_FORM: &str = "vote-form";

/// The field names of the vote form besides the answers (`docs/WEB.md`):
/// `lang` is sent by a language switcher's button, which asks for the form
/// again in that language, as entered, and votes nothing; `rev` says which
/// structure of the questions the form shows.
const VOTE_FIELDS: [&str; 4] = ["ballot", "invite", "lang", "rev"];

pub fn vote(w: &mut WebWorker, req: &Request, form: &Form, poll: &Poll, today: Day) -> Result<Response, Error> {
    let ctx = w.ctx(req, Some(poll.lang));
    let t = ctx.t;
    // A form that shows questions whose structure has changed since (only
    // possible while the poll had no ballot): its answers' indexes would
    // mean other answers now, so the voter answers the questions as they
    // are. A form without the field (not one of ours) is read as it is.
    let read_at = form.get("rev").map(|r| r.trim().parse::<u32>().ok());
    if read_at.is_some_and(|r| r != Some(poll.restructured)) {
        return share_response(&w.web, &ctx, poll, today, 409, &Entered::default(), Some(t.err_poll_changed));
    }
    // A language switch: the page again in the language of the address it
    // was sent to (the button's `formaction`), with what was entered, and
    // nothing counted, checked or spent (the form's code stays unused).
    let switch = form.get("lang").is_some();
    let (answers, mut entered) = match answers(form, poll, &VOTE_FIELDS) {
        Ok(read) => read,
        Err(BadVote::Malformed) => {
            return Err(Error::Malformed("The vote form holds an answer its poll does not have.".into()));
        }
        // Nothing is kept of a changed form: the voter answers afresh.
        Err(BadVote::Changed) => {
            return share_response(&w.web, &ctx, poll, today, 422, &Entered::default(), Some(t.err_vote_form));
        }
        Err(BadVote::Rule(_, mut entered)) if switch => {
            entered.invite = form.text("invite");
            return share_response(&w.web, &ctx, poll, today, 200, &entered, None);
        }
        Err(BadVote::Rule(problem, mut entered)) => {
            entered.invite = form.text("invite");
            let (entered, message) = entered.refused(t, &problem);
            return share_response(&w.web, &ctx, poll, today, 422, &entered, message.as_deref());
        }
    };
    entered.invite = form.text("invite");
    if switch {
        return share_response(&w.web, &ctx, poll, today, 200, &entered, None);
    }
    // The one-time form token is looked at first (without using it up), so
    // a replayed form costs the client nothing of its vote budget.
    // Trimmed as the ballot box reads it: the token goes into a Location.
    let token = form.get("ballot").unwrap_or("").trim();
    match w.web.ballots.check(&poll.id, token, today) {
        Verdict::Valid => {}
        // Sent twice: an afterVote voter still gets to the results.
        Verdict::Used if poll.visibility == ResultsVisibility::AfterVote => {
            return Ok(after_vote_redirect(&ctx, poll, token));
        }
        Verdict::Used | Verdict::Reserved => return Ok(used_page(&ctx, poll)),
        Verdict::Invalid if poll.closed => {
            return share_response(&w.web, &ctx, poll, today, 409, &Entered::default(), None);
        }
        Verdict::Invalid => {
            return share_response(&w.web, &ctx, poll, today, 409, &entered, Some(t.err_ballot_expired));
        }
    }
    let admitted = match w.session.admit_vote(req.client, poll, answers, form.get("invite"), today) {
        Ok(admitted) => admitted,
        Err(Error::Closed) => return share_response(&w.web, &ctx, poll, today, 409, &Entered::default(), None),
        Err(Error::Invalid(errors)) => {
            let Some(e) = errors.first() else {
                return share_response(&w.web, &ctx, poll, today, 422, &entered, Some(t.err_no_answer));
            };
            let (entered, message) = entered.clone().refused(t, &e.problem);
            return share_response(&w.web, &ctx, poll, today, 422, &entered, message.as_deref());
        }
        // The choices stay; the code is not echoed back.
        Err(Error::InviteRefused(refusal)) => {
            let (text, at_field) = refusal_texts(t, refusal);
            return share_response(&w.web, &ctx, poll, today, 403, &entered.code_refused(at_field), Some(text));
        }
        Err(e @ (Error::VotesThrottled { .. } | Error::VotesPaced | Error::VotedFromNetwork { .. })) => {
            let text = errors::too_many_text(&ctx, &e);
            let r = share_response(&w.web, &ctx, poll, today, 429, &entered, Some(&text))?;
            return Ok(with_headers(r, &e));
        }
        Err(e) => return Err(e),
    };
    // Reserved only now, so a refused attempt leaves the form usable; two
    // concurrent sends of one form still count once (reserving is atomic).
    match w.web.ballots.reserve(&poll.id, token, today) {
        Verdict::Valid => {}
        // The first send is still being stored: this one is not counted.
        _ => return Ok(used_page(&ctx, poll)),
    }
    // Where several nodes share the database, the form is spent there too,
    // with its ballot: sent to two nodes, it counts once.
    let form = if w.web.shared_store() { w.web.ballots.form_of(&poll.id, token) } else { None };
    let admitted = admitted.with_form(form);
    // Checked again by the writer, where a change of the questions that
    // came meanwhile refuses it (`Error::PollChanged`).
    let admitted = match read_at.flatten() {
        Some(at) => admitted.read_at(at),
        None => admitted,
    };
    // Taken before the ballot goes to the writer: shown once, on the page
    // that answers this vote, and kept nowhere here.
    let receipt = admitted.receipt().map(Receipt::expose);
    // The token counts (and opens afterVote results) once the ballot is
    // committed, and is free again if it is not: settled by the writer, so
    // a client that hangs up meanwhile changes nothing.
    let settle = {
        let (web, id, token) = (w.web.clone(), poll.id.clone(), token.to_owned());
        let receipt = admitted.receipt().map(Receipt::hash);
        Settle::new(move |stored| web.ballots.settle_with(&id, &token, stored, receipt.as_ref()))
    };
    // The answer waits for the commit on the connection, not on this worker.
    // The results this voter may see once the vote is stored, read here, on
    // this worker's thread, with the ballot counted: the page that answers
    // the vote shows them. A read that fails costs the page its results,
    // not the vote. (An `afterVote` poll without receipts answers with a
    // redirect to its results page instead.)
    let shown = poll.results_open_to_all() || (poll.visibility == ResultsVisibility::AfterVote && receipt.is_some());
    let results = shown
        .then(|| w.session.results_with(poll, &admitted))
        .and_then(|read| read.map_err(|e| eprintln!("anonpoll: results with a vote: {e}")).ok());
    let pending = w.web.app.cast(admitted, Some(settle));
    let (web, poll, path) = (w.web.clone(), poll.clone(), req.path.clone());
    let (choice, page_choice) = (super::lang::negotiate(req, Some(poll.lang)), super::lang::negotiate(req, None));
    let ballot = token.to_owned();
    let network_day = ctx.network_day;
    let answer = move |result: Result<(), Error>| {
        let ctx = Ctx { network_day, ..Ctx::new(choice, &path) };
        let r = match result {
            // The results this voter may now see, at an address that a
            // reload does not send the vote again to.
            // With a receipt, the page that shows it answers instead, with a
            // link to those results: a redirect would lose the receipt.
            Ok(()) if poll.visibility == ResultsVisibility::AfterVote && receipt.is_none() => {
                Ok(after_vote_redirect(&ctx, &poll, &ballot))
            }
            // Results the voter may now see are shown on this page, above
            // the receipt: where a voter expects them.
            Ok(()) => Ok(thanks_page(&ctx, &poll, receipt.as_deref(), &ballot, results.as_ref())),
            Err(Error::Closed) => share_response(
                &web,
                &ctx,
                &Poll { closed: true, ..poll.clone() },
                today,
                409,
                &Entered::default(),
                None,
            ),
            Err(Error::NotFound) => Ok(errors::page(&Ctx::new(page_choice, &path), &Error::NotFound)),
            // Another node stored this form's vote first.
            Err(Error::FormSpent) => Ok(used_page(&ctx, &poll)),
            // The questions changed structure while the vote was on its way
            // (only while the poll had no ballot): shown as they are now.
            Err(Error::PollChanged) => web
                .app
                .session()
                .map_err(Error::internal)
                .and_then(|mut now| now.poll(poll.id.as_str(), today))
                .and_then(|now| {
                    share_response(&web, &ctx, &now, today, 409, &Entered::default(), Some(t.err_poll_changed))
                }),
            // Decided in the ballot's transaction: unknown or spent meanwhile,
            // or the poll turned invite-only since the form was read (then
            // the form comes back with its code field).
            Err(Error::InviteRefused(refusal)) => {
                let (text, at_field) = refusal_texts(t, refusal);
                let poll = Poll { duplicate_check: DuplicateCheck::Invite, ..poll.clone() };
                share_response(&web, &ctx, &poll, today, 403, &entered.code_refused(at_field), Some(text))
            }
            // The vote is not stored: the form comes back with the choices.
            Err(e) => {
                if let Error::Internal(cause) = &e {
                    eprintln!("anonpoll: internal error: {cause:#}");
                }
                share_response(&web, &ctx, &poll, today, e.status().max(500), &entered, Some(t.err_vote_not_saved))
                    .map(|r| with_headers(r, &e))
            }
        };
        r.unwrap_or_else(|e| errors::page(&Ctx::new(page_choice, &path), &e))
    };
    Ok(match pending {
        Ok(pending) => Response::after(pending, answer),
        Err(e) => answer(Err(e)),
    })
}

/// What the page and the code field say of a refused invite code.
fn refusal_texts(t: &crate::i18n::Catalogue, refusal: InviteRefusal) -> (&'static str, &'static str) {
    match refusal {
        InviteRefusal::Missing => (t.err_invite_missing, t.invite_field_missing),
        InviteRefusal::NotACode => (t.err_invite_not_a_code, t.invite_field_not_a_code),
        InviteRefusal::UnknownOrUsed => (t.err_invite_refused, t.invite_field_refused),
    }
}

/// `303` to the results a voter on an `afterVote` poll may see, carrying
/// the form token just redeemed (docs/WEB.md).
fn after_vote_redirect(ctx: &Ctx, poll: &Poll, ballot: &str) -> Response {
    Response::new(303).with_header("Location", ctx.href_with(&after_vote_path(poll, ballot)))
}

/// After a vote: thanks, the poll's title, the receipt when the poll gives
/// one, and where the results are. `ballot` is the form token just redeemed
/// (the way to an `afterVote` poll's results).
fn thanks_page(ctx: &Ctx, poll: &Poll, receipt: Option<&str>, ballot: &str, results: Option<&Results>) -> Response {
    let t = ctx.t;
    let (content_lang, title, _) = poll.version(ctx.lang);
    let body = html! {
        h1 { (t.thanks_title) }
        (poll_subtitle(title.as_str(), lang_attr(content_lang, ctx.lang)))
        // The script notes the vote in localStorage, with the day the poll is
        // erased so the note can be dropped then.
        p.notice.ok role="status" id="voted" data-poll=(poll.id) data-until=(poll.expires_on.to_string()) { (t.thanks_text) }
        @if let Some(results) = results { (results_section(ctx, poll, results, 2)) }
        @if let Some(receipt) = receipt {
            // The script keeps the receipt in localStorage for this poll,
            // until its erase day. It is in no query string: the link
            // carries it in the fragment, which browsers never send.
            section.receipt aria-labelledby="receipt-heading" data-receipt-poll=(poll.id)
                data-until=(poll.expires_on.to_string()) {
                h2 id="receipt-heading" { (t.receipt_heading) }
                p { (t.receipt_text) span id="receipt-kept" hidden { " " (t.receipt_kept) } }
                p.receipt-code {
                    code id="receipt" { (receipt) }
                    button.secondary type="button" data-copy="receipt" data-copied=(t.copied) hidden { (t.copy) }
                }
                p { a id="receipt-link" href=(format!("{}#receipt={receipt}", own_ballot_path(&poll.id))) { (t.receipt_link) } }
            }
        }
        // The results' own page too: it updates itself, and its address
        // can be opened again without sending the vote again.
        @if poll.visibility == ResultsVisibility::AfterVote {
            p { a.button href=(ctx.href_with(&after_vote_path(poll, ballot))) { (t.see_results) } }
        } @else if poll.results_open_to_all() {
            p { a.button href=(ctx.href(&Links::results_path(&poll.id))) { (t.see_results) } }
        } @else if poll.visibility == ResultsVisibility::AfterClose {
            p { (visibility_text(t, poll)) }
        } @else {
            p { (t.thanks_private) }
        }
    };
    // A page that shows a receipt has no language switcher: its links would
    // leave for a page without it, and it is shown only this once.
    let once;
    let ctx = if receipt.is_some() {
        once = ctx.shown_once();
        &once
    } else {
        ctx
    };
    respond(200, ctx.lang, page(ctx, t.thanks_title, body))
}

fn used_page(ctx: &Ctx, poll: &Poll) -> Response {
    let t = ctx.t;
    let body = html! {
        h1 { (t.thanks_title) }
        (notice("info", t.err_ballot_used))
        @if poll.results_open_to_all() {
            p { a href=(ctx.href(&Links::results_path(&poll.id))) { (t.see_results) } }
        }
    };
    respond(409, ctx.lang, page(ctx, t.thanks_title, body))
}
