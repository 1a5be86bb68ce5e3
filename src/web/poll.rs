//! `/p/{id}`: the share page, where people answer a poll, and the vote.
//!
//! A vote is counted only with a valid one-time ballot token (`ballot.rs`)
//! and within the per-client throttle (`throttle.rs`). Whatever goes wrong,
//! the person sees why, and, when it makes sense to try again, the form comes
//! back with their choices kept and a fresh token: no vote is lost silently.

use maud::{Markup, html};

use super::ballot::Verdict;
use super::errors::{self, with_headers};
use super::form::{Form, problem_text};
use super::layout::{Ctx, lang_attr, notice, page, respond};
use super::media::figure;
use super::{Web, WebWorker};
use crate::app::Links;
use crate::day::Day;
use crate::domain::settings::deadline_passed;
use crate::domain::{Poll, ResultsVisibility, Slot};
use crate::error::Error;
use crate::http::{Request, Response};

pub fn share_page(w: &mut WebWorker, req: &Request, poll: &Poll, today: Day) -> Result<Response, Error> {
    let ctx = w.ctx(req, Some(poll.lang));
    let blank = vec![None; poll.questions.len()];
    share_response(&w.web, &ctx, poll, today, 200, &blank, None)
}

/// The share page with `choices` selected and an optional message. It needs
/// only what all workers share, so answers built after a commit use it too.
fn share_response(
    web: &Web,
    ctx: &Ctx,
    poll: &Poll,
    today: Day,
    status: u16,
    choices: &[Option<usize>],
    message: Option<&str>,
) -> Result<Response, Error> {
    let t = ctx.t;
    let (content_lang, title, questions) = poll.version(ctx.lang);
    let clang = lang_attr(content_lang, ctx.lang);
    let token = if poll.closed { None } else { Some(web.ballots.issue(&poll.id, today).map_err(Error::internal)?) };
    let body = html! {
        h1 lang=[clang] { (title) }
        (facts(ctx, poll, today))
        @if let Some(m) = poll.media_at(Slot::Poll) { (figure(ctx, m, poll.lang)) }
        @if let Some(m) = message { (notice("error", m)) }
        @if let Some(token) = token {
            p.notice.info id="already-voted" data-poll=(poll.id) role="status" hidden { (t.already_voted) }
            p.lead { (t.vote_intro) }
            form.vote method="post" action=(ctx.action()) {
                input type="hidden" name="ballot" value=(token);
                @for (i, (label, options)) in questions.iter().enumerate() {
                    fieldset.question {
                        legend lang=[clang] { (label.as_str()) }
                        @if let Some(m) = poll.media_at(Slot::Question(i)) { (figure(ctx, m, poll.lang)) }
                        @for j in option_order(options.len(), poll.shuffle_options) {
                            @let o = &options[j];
                            div.choice {
                                input type="radio" id=(format!("q{i}-{j}")) name=(format!("q{i}")) value=(j)
                                    checked[choices.get(i).copied().flatten() == Some(j)];
                                label for=(format!("q{i}-{j}")) lang=[clang] { (o.as_str()) }
                            }
                        }
                    }
                }
                div.submit { button.primary type="submit" { (t.vote_submit) } }
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
            p.hint.results-when { (super::settings::visibility_text(t, poll)) }
        }
    };
    Ok(respond(status, ctx.lang, page(ctx, title.as_str(), body)))
}

/// The order in which the share page lists `n` options: as written, or
/// (`shuffleOptions`) a fresh random order at every page view. The values
/// sent stay the options' indices, so the order changes nothing else.
fn option_order(n: usize, shuffle: bool) -> Vec<usize> {
    use rand::seq::SliceRandom;
    let mut order: Vec<usize> = (0..n).collect();
    if shuffle {
        order.shuffle(&mut rand::rng());
    }
    order
}

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
            @if let Some(closes) = &closes {
                " · "
                time.closes datetime=(closes) {
                    @if deadline_passed(poll.closes_on, today) { ((t.closed_on)(&t.day(closes))) } @else { ((t.closes_on)(&t.day(closes))) }
                }
            }
            " · "
            time datetime=(expires) { ((t.erased_on)(&t.day(&expires))) }
        }
    }
}

/// The field names of the vote form besides the answers (`docs/WEB.md`).
const VOTE_FIELDS: [&str; 1] = ["ballot"];

/// Why a vote form cannot be read as a ballot.
enum BadVote {
    /// A value no form of ours sends (an option that does not exist).
    Malformed,
    /// A question answered twice, or a field that is no question of this
    /// poll: the form was changed, and the voter should look again.
    Changed,
}

/// Reads `q{i}` for every question: `None` for unanswered. Every field must
/// be one the vote form has, and a question takes at most one answer.
fn choices(form: &Form, poll: &Poll) -> Result<Vec<Option<usize>>, BadVote> {
    let mut seen = vec![false; poll.questions.len()];
    for name in form.names() {
        if VOTE_FIELDS.contains(&name) {
            continue;
        }
        let question = name.strip_prefix('q').and_then(|i| i.parse::<usize>().ok()).filter(|i| *i < seen.len());
        match question {
            Some(i) if !seen[i] => seen[i] = true,
            _ => return Err(BadVote::Changed),
        }
    }
    poll.questions
        .iter()
        .enumerate()
        .map(|(i, q)| match form.get(&format!("q{i}")).map(str::trim) {
            None | Some("") => Ok(None),
            Some(v) => v.parse::<usize>().ok().filter(|&j| j < q.options.len()).map(Some).ok_or(BadVote::Malformed),
        })
        .collect()
}

pub fn vote(w: &mut WebWorker, req: &Request, form: &Form, poll: &Poll, today: Day) -> Result<Response, Error> {
    let ctx = w.ctx(req, Some(poll.lang));
    let t = ctx.t;
    let choices = match choices(form, poll) {
        Ok(choices) => choices,
        Err(BadVote::Malformed) => {
            return Err(Error::Malformed("The vote form holds an answer its poll does not have.".into()));
        }
        // Nothing is kept of a changed form: the voter answers afresh.
        Err(BadVote::Changed) => {
            return share_response(&w.web, &ctx, poll, today, 422, &[], Some(t.err_vote_form));
        }
    };
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
        Verdict::Used => return Ok(used_page(&ctx, poll)),
        Verdict::Invalid if poll.closed => return share_response(&w.web, &ctx, poll, today, 409, &[], None),
        Verdict::Invalid => {
            return share_response(&w.web, &ctx, poll, today, 409, &choices, Some(t.err_ballot_expired));
        }
    }
    let admitted = match w.session.admit_vote(req.client, poll, choices.clone(), today) {
        Ok(admitted) => admitted,
        Err(Error::Closed) => return share_response(&w.web, &ctx, poll, today, 409, &[], None),
        Err(Error::Invalid(errors)) => {
            let text = errors.first().map_or_else(|| t.err_no_answer.to_owned(), |e| problem_text(t, &e.problem));
            return share_response(&w.web, &ctx, poll, today, 422, &choices, Some(&text));
        }
        Err(e @ Error::VotesThrottled { .. }) => {
            let r = share_response(&w.web, &ctx, poll, today, 429, &choices, Some(t.err_throttled))?;
            return Ok(with_headers(r, &e));
        }
        Err(e) => return Err(e),
    };
    // Redeem only now, so a refused attempt leaves the form usable; two
    // concurrent sends of one form still count once (redeem is atomic).
    if w.web.ballots.redeem(&poll.id, token, today) != Verdict::Valid {
        return Ok(used_page(&ctx, poll));
    }
    // The answer waits for the commit on the connection, not on this worker.
    let pending = w.web.app.cast(admitted);
    let (web, poll, path) = (w.web.clone(), poll.clone(), req.path.clone());
    let (choice, page_choice) = (super::lang::negotiate(req, Some(poll.lang)), super::lang::negotiate(req, None));
    let ballot = token.to_owned();
    let answer = move |result: Result<(), Error>| {
        let ctx = Ctx::new(choice, &path);
        // Not stored: the form may be sent again, and its token must not
        // show afterVote results as if the vote counted.
        if result.is_err() {
            web.ballots.unredeem(&poll.id, &ballot);
        }
        let r = match result {
            // The results this voter may now see, at an address that a
            // reload does not send the vote again to.
            Ok(()) if poll.visibility == ResultsVisibility::AfterVote => Ok(after_vote_redirect(&ctx, &poll, &ballot)),
            Ok(()) => Ok(thanks_page(&ctx, &poll)),
            Err(Error::Closed) => {
                share_response(&web, &ctx, &Poll { closed: true, ..poll.clone() }, today, 409, &[], None)
            }
            Err(Error::NotFound) => Ok(errors::page(&Ctx::new(page_choice, &path), &Error::NotFound)),
            // The vote is not stored: the form comes back with the choices.
            Err(e) => {
                if let Error::Internal(cause) = &e {
                    eprintln!("anonpoll: internal error: {cause:#}");
                }
                share_response(&web, &ctx, &poll, today, e.status().max(500), &choices, Some(t.err_vote_not_saved))
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

/// `303` to the results a voter on an `afterVote` poll may see, carrying
/// the form token just redeemed (docs/WEB.md).
fn after_vote_redirect(ctx: &Ctx, poll: &Poll, ballot: &str) -> Response {
    let mut to = super::results::after_vote_path(poll, ballot);
    if ctx.explicit {
        to = format!("{to}&lang={}", ctx.lang.code());
    }
    Response::new(303).with_header("Location", to)
}

fn thanks_page(ctx: &Ctx, poll: &Poll) -> Response {
    let t = ctx.t;
    let body = html! {
        h1 { (t.thanks_title) }
        // The script notes the vote in localStorage, with the day the poll is
        // erased so the note can be dropped then.
        p.notice.ok role="status" id="voted" data-poll=(poll.id) data-until=(poll.expires_on.to_string()) { (t.thanks_text) }
        @if poll.results_open_to_all() {
            p { a.button href=(ctx.href(&Links::results_path(&poll.id))) { (t.see_results) } }
        } @else if poll.visibility == ResultsVisibility::AfterClose {
            p { (super::settings::visibility_text(t, poll)) }
        } @else {
            p { (t.thanks_private) }
        }
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
