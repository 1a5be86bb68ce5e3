//! `/p/{id}/results`: counts and shares per answer, and responses per day.
//!
//! Charts are decoration: every number is in a table (caption, header cells),
//! so screen readers and text browsers get the same information; the bars are
//! SVG rectangles sized by attributes, which the strict CSP allows (no inline
//! style). Private results need the admin key, sent in a POST body, never in
//! a URL.

use maud::{Markup, html};

use super::WebWorker;
use super::form::Form;
use super::layout::{Ctx, lang_attr, notice, page, respond};
use super::media::figure;
use super::poll::facts;
use crate::api::percent;
use crate::domain::{Poll, Slot, Tallies};
use crate::error::Error;
use crate::http::{Request, Response};

pub fn get(w: &mut WebWorker, req: &Request, poll: &Poll) -> Result<Response, Error> {
    let ctx = w.ctx(req, Some(poll.lang));
    if !poll.results_public {
        return Ok(prompt(&ctx, poll, 200, None));
    }
    let tallies = w.reader.tallies(poll)?;
    Ok(results_page(&ctx, poll, &tallies))
}

pub fn post(w: &mut WebWorker, req: &Request, form: &Form, poll: &Poll) -> Result<Response, Error> {
    let ctx = w.ctx(req, Some(poll.lang));
    match presented_token(form) {
        Some(token) if poll.token_hash.matches(token) => {
            let tallies = w.reader.tallies(poll)?;
            // Private results were unlocked with the key: the language
            // switcher must post it along, or it would lock the page again.
            let key = (!poll.results_public).then(|| token.to_owned());
            Ok(results_page(&Ctx { key, ..ctx }, poll, &tallies))
        }
        Some(_) => Ok(prompt(&ctx, poll, 403, Some(ctx.t.err_bad_token))),
        None if poll.results_public => {
            let tallies = w.reader.tallies(poll)?;
            Ok(results_page(&ctx, poll, &tallies))
        }
        None => Ok(prompt(&ctx, poll, 200, None)),
    }
}

/// The admin key from a form: the `token` field, or the part after `#` when
/// someone pasted the whole admin link.
pub fn presented_token(form: &Form) -> Option<&str> {
    let raw = form.get("token")?.trim();
    let token = raw.rsplit_once('#').map_or(raw, |(_, t)| t).trim();
    (!token.is_empty()).then_some(token)
}

fn prompt(ctx: &Ctx, poll: &Poll, status: u16, error: Option<&str>) -> Response {
    let t = ctx.t;
    let (content_lang, title, _) = poll.version(ctx.lang);
    let body = html! {
        h1 lang=[lang_attr(content_lang, ctx.lang)] { (title) }
        h2 { (t.private_results_title) }
        p { (t.private_results_text) }
        (token_form(ctx, t.token_show_results, error))
    };
    respond(status, ctx.lang, page(ctx, t.private_results_title, body))
}

/// The admin-key form; the script fills it from the URL fragment and sends it.
pub fn token_form(ctx: &Ctx, submit: &str, error: Option<&str>) -> Markup {
    let t = ctx.t;
    html! {
        @if let Some(e) = error { (notice("error", e)) }
        form.token method="post" action=(ctx.action()) data-token-form {
            div.field {
                label for="token" { (t.token_label) }
                p.hint id="token-hint" { (t.token_hint) }
                input type="password" id="token" name="token" required autocomplete="off" spellcheck="false"
                    aria-describedby="token-hint" aria-invalid=[error.map(|_| "true")];
            }
            div.submit { button.primary type="submit" { (submit) } }
        }
    }
}

fn results_page(ctx: &Ctx, poll: &Poll, tallies: &Tallies) -> Response {
    let (content_lang, title, _) = poll.version(ctx.lang);
    let body = html! {
        h1 lang=[lang_attr(content_lang, ctx.lang)] { (title) }
        (facts(ctx, poll))
        @if let Some(m) = poll.media_at(Slot::Poll) { (figure(ctx, m, poll.lang)) }
        (results_section(ctx, poll, tallies, 2))
        @if !poll.closed {
            p { a href=(ctx.href(&format!("/p/{}", poll.id))) { (title) } }
        }
    };
    respond(200, ctx.lang, page(ctx, &format!("{} – {}", ctx.t.results_heading, title), body))
}

/// The results as tables with bars; `level` is the heading level to use.
pub fn results_section(ctx: &Ctx, poll: &Poll, tallies: &Tallies, level: u8) -> Markup {
    let t = ctx.t;
    let (content_lang, _, questions) = poll.version(ctx.lang);
    let clang = lang_attr(content_lang, ctx.lang);
    let max_day = tallies.by_day.iter().map(|(_, n)| *n).max().unwrap_or(0);
    html! {
        section.results aria-labelledby="results-heading" {
            @if level == 2 { h2 id="results-heading" { (t.results_heading) } } @else { h3 id="results-heading" { (t.results_heading) } }
            p.total { strong { ((t.responses_total)(tallies.total)) } }
            @for (i, ((label, options), votes)) in questions.iter().zip(&tallies.votes).enumerate() {
                @let answered: u64 = votes.iter().sum();
                div.table-wrap {
                    table.tally id=(format!("result-q{i}")) {
                        caption { span lang=[clang] { (label.as_str()) } span.answered { ((t.answered)(answered)) } }
                        thead { tr { th scope="col" { (t.col_answer) } th scope="col" .num { (t.col_votes) } th scope="col" .num { (t.col_share) } } }
                        tbody {
                            @for (o, &n) in options.iter().zip(votes) {
                                @let pct = percent(n, answered);
                                tr {
                                    th scope="row" {
                                        span lang=[clang] { (o.as_str()) }
                                        (bar(pct))
                                    }
                                    td.num { (n) }
                                    td.num { ((t.percent)(pct)) }
                                }
                            }
                        }
                    }
                }
                // After its table, whose caption names the question.
                @if let Some(m) = poll.media_at(Slot::Question(i)) { (figure(ctx, m, poll.lang)) }
            }
            @if level == 2 { h2 { (t.by_day_heading) } } @else { h3 { (t.by_day_heading) } }
            @if tallies.by_day.is_empty() {
                p { (t.no_responses) }
            } @else {
                div.table-wrap {
                    table.tally.by-day {
                        caption.visually-hidden { (t.by_day_heading) }
                        thead { tr { th scope="col" { (t.col_day) } th scope="col" .num { (t.col_responses) } } }
                        tbody {
                            @for (day, n) in &tallies.by_day {
                                @let d = day.to_string();
                                tr {
                                    th scope="row" { time datetime=(d) { (t.day(&d)) } (bar(percent(*n, max_day))) }
                                    td.num { (n) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A bar of `pct` percent; hidden from assistive technology, which reads the
/// numbers in the table instead.
fn bar(pct: f64) -> Markup {
    let width = format!("{:.1}", pct.clamp(0.0, 100.0));
    html! {
        svg.share-bar viewBox="0 0 100 6" preserveAspectRatio="none" aria-hidden="true" focusable="false" {
            rect.track x="0" y="0" width="100" height="6" {}
            rect.fill x="0" y="0" width=(width) height="6" {}
        }
    }
}
