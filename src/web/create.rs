//! `/`: the creation form and the page shown once after creation.
//!
//! The form works without script: it shows a fixed set of rows (blank ones
//! are ignored), and its "add", "remove" and "move up" buttons are submit
//! buttons that return the form with the change made and everything typed
//! kept. The draft is turned into the API's JSON body and validated by
//! `NewPoll::from_json`, so the form and the API obey the same rules; the
//! resulting field paths are mapped back to the rows the person typed in.
//!
//! Three files: the draft and its problems (`draft.rs`), the
//! form drawn from it (`view.rs`), and here the requests and the pages
//! shown after sending.

mod draft;
mod view;

use maud::html;

pub use draft::Draft;
use draft::{DraftQuestion, media_problems, problems, schedule_problems};
use view::form_body;

use super::WebWorker;
use super::ballot::Verdict;
use super::device;
use super::errors::with_headers;
use super::form::{Form, Problems};
use super::layout::{Ctx, lang_attr, page, poll_subtitle, respond};
use super::media::figure;
use super::parts::facts::facts;
use super::parts::fields::link_field;
use super::parts::qr::qr_svg;

use super::uploads::Uploads;
use crate::app::{Created, Links};
use crate::client::ClientGroup;
use crate::day::Day;
use crate::domain::{DuplicateCheck, NewPoll, Slot};
use crate::error::Error;
use crate::http::{Request, Response};
use crate::secret::PollId;

pub fn form_page(ctx: &Ctx, draft: &Draft, uploads: &Uploads) -> Response {
    respond(200, ctx.lang, page(ctx, ctx.t.create_title, form_body(ctx, draft, &Problems::default(), None, uploads)))
}

fn form_response(
    ctx: &Ctx,
    status: u16,
    draft: &Draft,
    problems: &Problems,
    focus: Option<&str>,
    uploads: &Uploads,
) -> Response {
    respond(status, ctx.lang, page(ctx, ctx.t.create_title, form_body(ctx, draft, problems, focus, uploads)))
}

/// The pseudo poll id the creation form's one-time codes are issued for
/// (ballot codes of real polls can never match it: ids are random).
const CREATE_FORM: &str = "CreationFormOnce";

fn form_key() -> Result<PollId, Error> {
    PollId::parse(CREATE_FORM).ok_or_else(|| Error::internal(anyhow::anyhow!("bad form key")))
}

/// A fresh one-time code for a creation form.
pub fn fresh_once(w: &WebWorker, today: Day) -> Result<String, Error> {
    w.web.ballots.issue(&form_key()?, today).map_err(Error::internal)
}

pub fn post(w: &mut WebWorker, req: &Request, form: &Form, today: Day) -> Result<Response, Error> {
    let ctx = w.ctx(req, None);
    let uploads = &w.web.uploads;
    let mut draft = Draft::from_form(form);
    let action = form.get("action").unwrap_or("create");
    // A reload of "Your poll is ready" sends the form again with its used
    // code: answered before anything else is read, so a file sent along is
    // not staged, and held files (released once the poll was made) are not
    // reported as lost on a form that says the poll was not created.
    if action == "create" && w.web.ballots.check(&form_key()?, &draft.once, today) == Verdict::Used {
        return Ok(already_created(&ctx, form));
    }
    draft.read_media(uploads, form, ClientGroup::of(req.client));
    if action != "create" {
        let before = draft.held_references();
        // "Create another poll" on the page above: what was typed, with a
        // code of its own (the form brought none).
        let focus = if action == AGAIN {
            draft.once = fresh_once(w, today)?;
            Some("f-title".to_owned())
        } else {
            draft.edit(action)
        };
        // A file removed, or removed with its question, is forgotten now.
        let after = draft.held_references();
        uploads.release(before.iter().filter(|r| !after.contains(r)).map(String::as_str));
        // A file refused while the form was being edited is reported now.
        let mut p = Problems::default();
        let (_, origins) = draft.to_json();
        media_problems(&ctx, &draft, &origins, &mut p);
        p.fields.retain(|f| !f.id.ends_with("-alt"));
        let status = if p.is_empty() { 200 } else { 422 };
        return Ok(form_response(&ctx, status, &draft, &p, focus.as_deref(), uploads));
    }
    let (body, origins) = draft.to_json();
    let (poll, mut p) = match NewPoll::from_json(&body) {
        Ok(poll) => (Some(poll), Problems::default()),
        Err(errors) => (None, problems(&ctx, &errors, &origins)),
    };
    let media = media_problems(&ctx, &draft, &origins, &mut p);
    schedule_problems(&ctx, &draft, &origins, &mut p);
    let poll = match poll {
        Some(poll) if p.is_empty() => poll,
        _ => {
            if draft.questions.is_empty() {
                draft.questions.push(DraftQuestion::blank());
            }
            return Ok(form_response(&ctx, 422, &draft, &p, None, uploads));
        }
    };
    // Sent once only: a reload of the page shown after creation sends the
    // form again, and must not create a second poll.
    match w.web.ballots.redeem(&form_key()?, &draft.once, today) {
        Verdict::Valid => {}
        Verdict::Used | Verdict::Reserved => return Ok(already_created(&ctx, form)),
        Verdict::Invalid => {
            draft.once = fresh_once(w, today)?;
            let mut p = Problems::default();
            p.general.push(ctx.t.err_create_expired.to_owned());
            return Ok(form_response(&ctx, 409, &draft, &p, None, uploads));
        }
    }
    // From here on the code is used up: a form shown again needs a new one.
    draft.once = fresh_once(w, today)?;
    match w.session.create(req.client, &poll, &media, today) {
        Ok(created) => {
            uploads.release(draft.held_references().iter().map(String::as_str));
            Ok(created_page(&ctx, w.session.links(), &created, today))
        }
        // Rules of the day (a closing day after today): the form comes back.
        Err(Error::Invalid(errors)) => {
            let p = problems(&ctx, &errors, &origins);
            Ok(form_response(&ctx, 422, &draft, &p, None, uploads))
        }
        // Worth another try later: the form comes back as typed.
        Err(e @ (Error::RateLimited(_) | Error::Unavailable { .. })) => {
            let mut p = Problems::default();
            p.general.push(match &e {
                Error::RateLimited(rl) => (ctx.t.err_rate_limited)(rl.retry_after_secs.div_ceil(60)),
                _ => ctx.t.err_unavailable.to_owned(),
            });
            Ok(with_headers(form_response(&ctx, e.status(), &draft, &p, None, uploads), &e))
        }
        Err(e) => Err(e),
    }
}

/// The `action` of "Create another poll" on the page that answers a form
/// sent again: the form comes back as typed, with a fresh code.
const AGAIN: &str = "again";

/// The creation form sent again with a used code: Back to the form and
/// sending it (the script keeps the used code with the page, `view.rs`), or
/// a reload of "Your poll is ready". Nothing went wrong, so the page says so
/// calmly, and honestly: the links cannot be shown again (the key is kept
/// only as a keyed fingerprint, and the share link needs the poll's id,
/// which only the links carried); the saved admin link leads back, and with
/// script "Your polls on this device" lists it if it was kept there. Still
/// 409: this request created nothing. "Create another poll" sends what was
/// typed back (not the used code, nor held files, which went with the
/// poll) for a form with a code of its own: a second poll is a choice.
fn already_created(ctx: &Ctx, form: &Form) -> Response {
    let t = ctx.t;
    let typed = form.pairs().filter(|(name, _)| !matches!(*name, "once" | "action") && !name.ends_with("-held"));
    let body = html! {
        h1 { (t.create_sent_title) }
        @for text in t.create_sent_text { p { (text) } }
        (device::my_polls(ctx))
        form.again method="post" action=(ctx.action()) {
            @for (name, value) in typed { input type="hidden" name=(name) value=(value); }
            p.hint id="again-hint" { (t.create_another_hint) }
            div.submit {
                button.primary type="submit" name="action" value=(AGAIN) aria-describedby="again-hint" { (t.create_another) }
            }
        }
    };
    respond(409, ctx.lang, page(ctx, t.create_sent_title, body))
}

/// "Your poll is ready", shown this once: it offers nothing but ways that
/// keep the admin link. No language switcher (its links lead to
/// the blank form), the poll opens in a new tab, the script warns before
/// the page is left while the admin link has not been copied or kept, and
/// offers to keep it in this browser. An invite-only poll's next step,
/// issuing codes, is a form that carries the key.
fn created_page(ctx: &Ctx, links: &Links, created: &Created, today: Day) -> Response {
    let ctx = &ctx.shown_once();
    let t = ctx.t;
    let poll = &created.poll;
    let id = &poll.id;
    let share = links.share(id);
    let admin = links.admin(id, &created.token);
    let invite_only = poll.duplicate_check == DuplicateCheck::Invite;
    let share_hint = if invite_only { t.created_share_hint_invite } else { t.created_share_hint };
    let expires = poll.expires_on.to_string();
    let (content_lang, title, _) = poll.version(ctx.lang);
    let mode = match poll.duplicate_check {
        DuplicateCheck::Network => (t.duplicate_network)(ctx.network_day),
        DuplicateCheck::Invite => t.duplicate_invite.to_owned(),
        DuplicateCheck::None => t.duplicate_none.to_owned(),
    };
    // What was made, said back: the title, its days, its picture, the rule
    // on repeated responses; then the two links to keep, and nothing else.
    let body = html! {
        h1 { (t.created_title) }
        (poll_subtitle(title.as_str(), lang_attr(content_lang, ctx.lang)))
        (facts(ctx, poll, today))
        p.meta.mode { (t.field_duplicate) (t.colon) (mode) }
        @if let Some(m) = poll.media_at(Slot::Poll) { (figure(ctx, m, poll.lang)) }
        // The share link first, with its QR code (drawn here, as SVG: no
        // request anywhere) for a phone or a projected slide.
        div.share-block {
            div.share-link { (link_field(ctx, "link-share", t.created_share, share_hint, &share)) }
            (qr_svg(&share, t.share_qr))
        }
        div.warning id="created-warning" role="note" aria-labelledby="warn-title" {
            h2 id="warn-title" { (t.created_warning_title) }
            p { (t.created_warning) }
            (link_field(ctx, "link-admin", t.created_admin, t.created_admin_hint, &admin))
            (device::keep_admin(ctx, id.as_str(), poll.title.as_str(), &expires, &admin))
            @if invite_only { p.notice.error id="save-first" role="alert" hidden { (t.created_save_first) } }
        }
        div.row-actions {
            @if invite_only {
                // A POST carrying the key: the dashboard opens with its
                // invite section unfolded (it is, on an invite-only poll).
                // The dashboard opens with the number of codes focused. With
                // the admin link neither copied nor kept, the script first
                // says so here (once) rather than the browser's bare "Leave site?".
                form method="post" action=(format!("{}/admin?lang={}", Links::share_path(id), ctx.lang.code())) data-next-invites {
                    input type="hidden" name="token" value=(created.token.expose());
                    input type="hidden" name="next" value="invites";
                    button.primary type="submit" { (t.created_next_invites) }
                }
            }
            a.button.secondary[invite_only] href=(Links::share_path(id)) target="_blank" rel="noopener" {
                (t.open_poll) span.visually-hidden { " " (t.opens_new_tab) }
            }
        }
    };
    respond(201, ctx.lang, page(ctx, t.created_title, body))
}
