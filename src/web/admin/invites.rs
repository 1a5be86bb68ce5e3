//! The admin page's invite codes: how many the poll has and how many cast
//! a vote, and new ones issued as a sheet of cards to print or a CSV file.
//!
//! Why a module of its own: it is one action of the page, with its folded
//! section, the two answers that carry the codes, and the page for a form
//! sent again. Promises: the codes exist only in the answer to the POST
//! that issued them (never in a URL the server sees, a log, or a later
//! page); one form issues at most once, so a reload of the sheet issues
//! nothing; the number asked for is read as people write it and checked by
//! the API's own rule.

use maud::{Markup, html};

use super::{View, fold, hidden_token};
use crate::app::{INVITES_PER_CALL, InviteStatus, Issued, Links};
use crate::day::Day;
use crate::domain::{DuplicateCheck, FieldError, Key, Poll, Problem};
use crate::error::Error;
use crate::http::Response;
use crate::web::WebWorker;
use crate::web::ballot::Verdict;
use crate::web::form::{Form, problem_text};
use crate::web::layout::{Ctx, lang_attr, notice, page, poll_subtitle, respond};
use crate::web::parts::qr::qr_svg;

/// The folded section: open when the poll takes invite codes (then they
/// are the admin's daily work) or when the number asked for was refused.
pub(super) fn section(ctx: &Ctx, poll: &Poll, status: InviteStatus, token: &str, view: &View) -> Markup {
    let open = poll.duplicate_check == DuplicateCheck::Invite || view.invites_count.is_some();
    fold("invites", ctx.t.invites_heading, open, invites_section(ctx, poll, status, token, view))
}

/// Issues the number of codes the invite form asks for (as a sheet of
/// cards, or as CSV when `csv`), once per form: answers the codes, or the
/// page that says the form was sent already; `None` when the dashboard is
/// to be shown, with the problem (a form too old, a number refused) in
/// `view`.
pub(super) fn issue(
    w: &mut WebWorker,
    ctx: &Ctx,
    form: &Form,
    (poll, token): (&Poll, &str),
    today: Day,
    view: &mut View,
    csv: bool,
) -> Result<Option<Response>, Error> {
    let t = ctx.t;
    // Sent once: a second send (a reload of the sheet) issues nothing.
    let once = form.get("once").unwrap_or("").trim();
    match w.web.invite_forms.redeem(&poll.id, once, today) {
        Verdict::Valid => {}
        Verdict::Used | Verdict::Reserved => return Ok(Some(invites_sent(ctx, poll, token))),
        Verdict::Invalid => {
            view.refused();
            view.problems.general.push(t.err_invites_expired.to_owned());
            return Ok(None);
        }
    }
    let typed = form.text("count");
    let result = match whole_number(&typed) {
        Some(count) => w.session.issue_invites(poll, token, count, today),
        None => {
            let problem = Problem::IntegerRange { min: 1, max: INVITES_PER_CALL as usize };
            Err(Error::Invalid(vec![FieldError::new(Key::Count, problem)]))
        }
    };
    let issued = match result {
        Ok(issued) => issued,
        Err(Error::Invalid(errors)) => {
            view.refused();
            for e in &errors {
                view.problems.field(INVITES_COUNT_ID, t.invites_count_label, problem_text(t, &e.problem));
            }
            view.invites_count = Some(typed);
            // Refused (a count out of range): the form may be sent again.
            w.web.invite_forms.settle(&poll.id, once, false);
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let links = w.session.links();
    if csv { invites_csv(poll, &issued, links).map(Some) } else { Ok(Some(invites_sheet(ctx, poll, &issued, links))) }
}

/// The HTML id of the number of codes to issue.
const INVITES_COUNT_ID: &str = "a-invites-count";

/// A whole number as people write it, with digit groups marked the way of
/// any of the four languages ("1000", "1,000", "1.000", "1 000", "1’000"):
/// a mark must be followed by exactly three digits, so "1.5" is no number
/// (not 15).
fn whole_number(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = |g: &str| !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit());
    if digits(text) {
        return text.parse().ok();
    }
    let mut groups = text.split([',', '.', '\'', '’', ' ', '\u{A0}', '\u{202F}']);
    let first = groups.next().filter(|g| g.len() <= 3 && digits(g))?;
    let mut number = first.to_owned();
    for g in groups {
        if g.len() != 3 || !digits(g) {
            return None;
        }
        number.push_str(g);
    }
    number.parse().ok()
}

/// The invite codes section: how many there are, and the form to issue more.
fn invites_section(ctx: &Ctx, poll: &Poll, status: InviteStatus, token: &str, view: &View) -> Markup {
    let t = ctx.t;
    let errors = view.problems.of(INVITES_COUNT_ID);
    let hint_id = format!("{INVITES_COUNT_ID}-hint");
    let described = if errors.is_empty() { hint_id.clone() } else { format!("{hint_id} {INVITES_COUNT_ID}-error") };
    html! {
        div.invites {
            p { (t.invites_intro) }
            @if poll.duplicate_check != DuplicateCheck::Invite {
                p.notice.info { (t.invites_not_in_use) }
            }
            p #invites-status { ((t.invites_status)(status.issued, status.used)) }
            // `data-keep-key`: the script keeps the key in this tab's
            // sessionStorage for the sheet's way back (the sheet holds none).
            form method="post" action=(ctx.action()) novalidate data-keep-key=(poll.id) {
                (hidden_token(token))
                input type="hidden" name="once" value=(view.invites_once);
                div.field {
                    label for=(INVITES_COUNT_ID) { (t.invites_count_label) }
                    p.hint id=(hint_id) { (t.invites_count_hint) }
                    @if !errors.is_empty() {
                        p.field-error id=(format!("{INVITES_COUNT_ID}-error")) { @for e in &errors { (e) " " } }
                    }
                    input.count type="number" id=(INVITES_COUNT_ID) name="count" min="1" max=(INVITES_PER_CALL)
                        autofocus[view.focus_invites]
                        inputmode="numeric" value=(view.invites_count.as_deref().unwrap_or("10"))
                        aria-invalid=[(!errors.is_empty()).then_some("true")] aria-describedby=(described);
                }
                div.row-actions {
                    button.primary type="submit" name="action" value="invites" { (t.invites_issue) }
                    button.secondary type="submit" name="action" value="invites-csv" { (t.invites_issue_csv) }
                }
            }
        }
    }
}

/// The codes just issued as a page of cards to print (each with the poll's
/// title, the code, the invite link and its QR code). Shown this once.
fn invites_sheet(ctx: &Ctx, poll: &Poll, issued: &Issued, links: &Links) -> Response {
    let t = ctx.t;
    let (content_lang, title, _) = poll.version(ctx.lang);
    let clang = lang_attr(content_lang, ctx.lang);
    let card_text =
        if poll.duplicate_check == DuplicateCheck::Invite { t.invite_card_text } else { t.invite_card_text_open };
    let body = html! {
        // A reload of the sheet loads the admin page instead (the script
        // keeps this address in the history), which says why the codes
        // are not shown again: nothing is sent again.
        div.sheet-intro data-reload-as=(super::done_path(ctx, poll, super::Done::Invites)) {
            h1 { (t.invites_sheet_title) }
            (poll_subtitle(title.as_str(), clang))
            p.notice.error role="alert" { strong { (t.invites_once) } }
            p { ((t.invites_sheet_count)(issued.codes.len() as u64)) " " ((t.invites_status)(issued.status.issued, issued.status.used)) }
            p { (t.invites_print_hint) }
            div.row-actions {
                // Shown by the script; without it the browser's own Print does the same.
                button.primary type="button" data-print hidden { (t.print_button) }
                // The key is not on this page: a saved copy goes to whoever
                // prints the cards. The dashboard's script kept it in this
                // tab's sessionStorage when the form was sent; with it the
                // script fills this form and shows its button instead of
                // the link, which (without script) leads to the key prompt.
                form.inline.back-to-dashboard method="post" action=(ctx.action()) data-back-poll=(poll.id) hidden {
                    input type="hidden" name="token" value="";
                    button.secondary type="submit" { (t.invites_back) }
                }
                a.button.secondary data-back-link href=(ctx.href(&format!("{}/admin", Links::share_path(&poll.id)))) { (t.invites_back) }
            }
        }
        ul.cards {
            @for code in &issued.codes {
                @let url = links.invite(&poll.id, code);
                li.card {
                    p.card-title lang=[clang] { (title) }
                    p.card-text { (card_text) }
                    (qr_svg(&url, t.invite_qr))
                    dl {
                        dt { (t.invite_card_code) }
                        dd.code { (code.expose()) }
                        dt { (t.invite_card_link) }
                        dd.url { (url) }
                    }
                }
            }
        }
    };
    // No language switcher: switching would post again and lose the codes.
    respond(200, ctx.lang, page(&ctx.shown_once(), t.invites_sheet_title, body))
}

/// The dashboard again, for a page reached from it with the key in a POST
/// (the reload of the invite sheet, which shows no codes): a form carrying
/// the key. The page's one way on, so its main button.
fn back_to_dashboard(ctx: &Ctx, token: &str) -> Markup {
    html! {
        form.inline method="post" action=(ctx.action()) {
            (hidden_token(token))
            button.primary type="submit" { (ctx.t.invites_back) }
        }
    }
}

/// The invite form sent again (a reload of the sheet): nothing is issued,
/// and nothing went wrong, so the page says so calmly, with the way back
/// to the dashboard (the key came with the form). Still 409: this request
/// issued nothing.
fn invites_sent(ctx: &Ctx, poll: &Poll, token: &str) -> Response {
    let t = ctx.t;
    let (content_lang, title, _) = poll.version(ctx.lang);
    let body = html! {
        h1 { (t.invites_sent_title) }
        (poll_subtitle(title.as_str(), lang_attr(content_lang, ctx.lang)))
        (notice("info", t.err_invites_sent))
        (back_to_dashboard(ctx, token))
    };
    respond(409, ctx.lang, page(&ctx.shown_once(), t.invites_sent_title, body))
}

/// The codes just issued as CSV (`code,url`), to download: for mail merges
/// and printing elsewhere. Shown this once, like the sheet.
fn invites_csv(poll: &Poll, issued: &Issued, links: &Links) -> Result<Response, Error> {
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(["code", "url"]).map_err(Error::internal)?;
    for code in &issued.codes {
        out.write_record([code.expose(), links.invite(&poll.id, code)]).map_err(Error::internal)?;
    }
    let body = out.into_inner().map_err(|e| Error::internal(e.into_error()))?;
    Ok(Response::new(200)
        .with_header("Content-Type", "text/csv; charset=utf-8")
        .with_header("Content-Disposition", format!("attachment; filename=\"invites-{}.csv\"", poll.id))
        .with_header("Cache-Control", "no-store")
        .with_header("Content-Security-Policy", "default-src 'none'; sandbox")
        .with_header("Referrer-Policy", "no-referrer")
        .with_header("X-Content-Type-Options", "nosniff")
        .with_body(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_with_the_digit_groups_of_each_language() {
        for (text, n) in
            [("10", 10), (" 1000 ", 1000), ("1,000", 1000), ("1.000", 1000), ("1 000", 1000), ("1’000", 1000)]
        {
            assert_eq!(whole_number(text), Some(n), "{text:?}");
        }
        for text in ["", "1.5", "1,00", "ten", "-3", "1e3", "1 0", ",000", "10,000.5"] {
            assert_eq!(whole_number(text), None, "{text:?}");
        }
    }
}
