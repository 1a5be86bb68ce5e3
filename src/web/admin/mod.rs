//! `/p/{id}/admin`: managing a poll with its admin key.
//!
//! The key never travels in a URL the server sees: the admin link carries it
//! after `#`, the page's form takes it in a password field (filled by the
//! script from the fragment, or pasted), and every action form carries it
//! back as a hidden field of a POST body. Every action checks it again
//! (constant time) and goes through the application layer with the API's
//! own validation, so the page can do nothing the API would refuse.
//!
//! Invite codes are issued here too. They exist only in the answer to the
//! POST that issued them (a sheet of cards to print, or a CSV file): never
//! in a URL the server sees (the invite link carries the code after `#`),
//! never in a log, never again on a later page.
//!
//! One module per action of the page, each holding its section of the
//! dashboard and what its form does: `status.rs` (close, reopen),
//! `expiry.rs`, `settings.rs`, `texts.rs` (the title and questions),
//! `versions.rs` (language versions), `media.rs`, `invites.rs` and
//! `delete.rs`. Here: the key prompt, the action a form asks for (read
//! once, then dispatched), what every action shares (the [`View`] it
//! reports to, a change through the API's PATCH rules), the dashboard that
//! puts the sections together, and what answers an action that did what it
//! said: a redirect to this page by a `GET` (`?done=`), never the
//! dashboard itself, so that a reload or Back sends no form again
//! (Post/Redirect/Get; docs/WEB.md, "The admin page after an action").

mod delete;
mod expiry;
mod invites;
mod media;
mod settings;
mod status;
mod texts;
mod versions;

use maud::{Markup, html};

use super::WebWorker;
use super::form::{Form, Problems, problem_text};
use super::layout::{Ctx, lang_attr, notice, page, poll_subtitle, respond};
use super::parts::facts::facts;
use super::parts::fields::{error_summary, link_field};
use super::parts::qr::qr_svg;
use super::parts::results_view::results_section;
use super::parts::settings::{SettingsDraft, visibility_text};
use super::parts::token::{presented_token, token_form, token_form_with};
use super::uploads::SlotDraft;
use crate::app::{Access, InviteStatus, Links, check_token};
use crate::day::Day;
use crate::domain::results::Results;
use crate::domain::{Lang, Poll, PollPatch};
use crate::error::Error;
use crate::http::{Request, Response};
use crate::i18n::Catalogue;
use crate::secret::MediaId;
use versions::VersionDraft;

/// The key prompt, shown before anything else.
pub fn prompt(ctx: &Ctx, poll: &Poll, status: u16, error: Option<&str>) -> Response {
    let t = ctx.t;
    let (content_lang, title, _) = poll.version(ctx.lang);
    let body = html! {
        h1 { (t.admin_title) }
        (poll_subtitle(title.as_str(), lang_attr(content_lang, ctx.lang)))
        p { (t.admin_intro) }
        (token_form(ctx, t.token_open_admin, error, true))
    };
    respond(status, ctx.lang, page(ctx, t.admin_title, body))
}

/// `GET /p/{id}/admin`: the key prompt, and after an action (`?done=`, the
/// address an action redirects to) what it did. The key is in no address
/// the server sees, so this page cannot show the dashboard itself: the
/// script opens it with the key it holds (the link's fragment, or this
/// tab's storage since the key was last sent), posting `done` along so
/// that the dashboard says what was done; without script the admin gives
/// the key again.
pub fn get(ctx: &Ctx, poll: &Poll, done: Option<&str>) -> Response {
    let t = ctx.t;
    let Some(done) = done.and_then(Done::parse) else { return prompt(ctx, poll, 200, None) };
    let (content_lang, title, _) = poll.version(ctx.lang);
    let body = html! {
        h1 { (t.admin_title) }
        (poll_subtitle(title.as_str(), lang_attr(content_lang, ctx.lang)))
        (notice("ok", &done.text(t, poll)))
        p { (t.admin_done_again) }
        (token_form_with(ctx, t.token_open_admin, None, true, &[("done", &done.code())]))
    };
    respond(200, ctx.lang, page(ctx, t.admin_title, body))
}

/// What an action did, named by the address it redirects to (`?done=`)
/// and said by the page that answers there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Done {
    Closed,
    Reopened,
    Expiry,
    Settings,
    VersionSaved(Lang),
    VersionRemoved(Lang),
    MediaAttached,
    MediaRemoved,
    /// The title and questions changed.
    Texts,
    /// The questions changed structure, and the language versions went.
    TextsVersionsDropped,
    /// Invite codes were issued, and shown once (a reload of their sheet
    /// comes here).
    Invites,
}

impl Done {
    fn code(self) -> String {
        match self {
            Done::Closed => "closed".into(),
            Done::Reopened => "reopened".into(),
            Done::Expiry => "expiry".into(),
            Done::Settings => "settings".into(),
            Done::VersionSaved(lang) => format!("version-saved-{}", lang.code()),
            Done::VersionRemoved(lang) => format!("version-removed-{}", lang.code()),
            Done::MediaAttached => "media-attached".into(),
            Done::MediaRemoved => "media-removed".into(),
            Done::Texts => "texts".into(),
            Done::TextsVersionsDropped => "texts-versions".into(),
            Done::Invites => "invites".into(),
        }
    }

    fn parse(code: &str) -> Option<Done> {
        let lang = |rest: &str| Lang::from_code(rest);
        Some(match code {
            "closed" => Done::Closed,
            "reopened" => Done::Reopened,
            "expiry" => Done::Expiry,
            "settings" => Done::Settings,
            "media-attached" => Done::MediaAttached,
            "media-removed" => Done::MediaRemoved,
            "texts" => Done::Texts,
            "texts-versions" => Done::TextsVersionsDropped,
            "invites" => Done::Invites,
            _ => match (code.strip_prefix("version-saved-"), code.strip_prefix("version-removed-")) {
                (Some(l), _) => Done::VersionSaved(lang(l)?),
                (_, Some(l)) => Done::VersionRemoved(lang(l)?),
                _ => return None,
            },
        })
    }

    /// What it says, of `poll` as it is now.
    fn text(self, t: &Catalogue, poll: &Poll) -> String {
        match self {
            Done::Closed => t.closed_done.to_owned(),
            Done::Reopened => t.reopened_done.to_owned(),
            Done::Expiry => (t.expiry_done)(&t.day(&poll.expires_on.to_string())),
            Done::Settings => t.settings_done.to_owned(),
            Done::VersionSaved(lang) => (t.version_saved)(t.lang_name(lang)),
            Done::VersionRemoved(lang) => (t.version_removed)(t.lang_name(lang)),
            Done::MediaAttached => t.media_attached.to_owned(),
            Done::MediaRemoved => t.media_removed.to_owned(),
            Done::Texts => t.edit_saved.to_owned(),
            Done::TextsVersionsDropped => t.edit_saved_versions_dropped.to_owned(),
            Done::Invites => t.invites_shown_done.to_owned(),
        }
    }
}

/// The answer to an action that did what it said: `303 See Other` to this
/// page again (`GET`, with what was done in `?done=`, never the key), so
/// that neither a reload nor Back sends the form again (docs/WEB.md,
/// "The admin page after an action").
fn after_action(ctx: &Ctx, poll: &Poll, done: Done) -> Response {
    Response::new(303).with_header("Location", done_path(ctx, poll, done)).with_header("Cache-Control", "no-store")
}

/// This page's address after an action that did `done`.
fn done_path(ctx: &Ctx, poll: &Poll, done: Done) -> String {
    ctx.href_with(&format!("{}?done={}", Links::admin_path(&poll.id), done.code()))
}

/// What the dashboard shows above its sections, after an action.
struct View {
    /// What the action did (on the dashboard opened after it: `done`).
    done: Option<Done>,
    /// A language version's form as sent, when it is shown again with a problem.
    draft: Option<VersionDraft>,
    problems: Problems,
    /// The media form as sent, when it is shown again with a problem.
    media: Option<(String, SlotDraft)>,
    /// The settings form as sent, when it is shown again with a problem.
    settings: Option<SettingsDraft>,
    /// The number of codes asked for, when it is shown again with a problem.
    invites_count: Option<String>,
    /// The title and questions as typed, when they come back (a problem, a
    /// row added or removed), and the field to focus then.
    texts: Option<texts::TextsDraft>,
    texts_focus: Option<String>,
    /// The invite form's one-time code.
    invites_once: String,
    /// Opened by the created page's "Next: issue invite codes": the
    /// number of codes takes the focus (and the page scrolls to it).
    focus_invites: bool,
    status: u16,
}

impl View {
    fn did(&mut self, done: Done) {
        self.done = Some(done);
    }

    fn refused(&mut self) {
        self.status = 422;
    }
}

/// What an admin form asks for, read once from its `action` field (and the
/// fields that say what it applies to).
#[derive(Debug, PartialEq, Eq)]
enum AdminAction {
    /// Show the dashboard: the key was just given, or a deletion cancelled.
    Open,
    Close,
    Reopen,
    /// Set the erase date from the `expiry` field.
    Expiry,
    /// Set who sees the results, the closing day and shuffling (`results`, `closes`, `shuffle`).
    Settings,
    VersionSave(Lang),
    VersionRemove(Lang),
    /// Forget the file held by the media form.
    MediaDrop,
    MediaAttach,
    MediaRemove(MediaId),
    /// Ask to confirm the deletion.
    Delete,
    DeleteConfirmed,
    /// Issue `count` invite codes and answer them as a sheet of cards.
    InvitesSheet,
    /// Issue `count` invite codes and answer them as a CSV file.
    InvitesCsv,
    /// The title and questions: save them, or add or remove a row (`texts-…`).
    Texts(texts::Step),
}

impl AdminAction {
    fn parse(form: &Form, poll: &Poll) -> Result<AdminAction, Error> {
        let bad = || Error::Malformed("The admin form was not one this page sends.".into());
        let lang = || form.get("vlang").and_then(Lang::from_code).ok_or_else(bad);
        Ok(match form.get("action").unwrap_or("") {
            "" | "open" => AdminAction::Open,
            "close" => AdminAction::Close,
            "reopen" => AdminAction::Reopen,
            "expiry" => AdminAction::Expiry,
            "settings" => AdminAction::Settings,
            // The page offers no form for the poll's own language.
            "version-save" => AdminAction::VersionSave(Some(lang()?).filter(|l| *l != poll.lang).ok_or_else(bad)?),
            "version-remove" => AdminAction::VersionRemove(lang()?),
            "media-drop-am" => AdminAction::MediaDrop,
            "media-attach" => AdminAction::MediaAttach,
            "media-remove" => AdminAction::MediaRemove(form.get("media").and_then(MediaId::parse).ok_or_else(bad)?),
            "delete" => AdminAction::Delete,
            "delete-confirmed" => AdminAction::DeleteConfirmed,
            "invites" => AdminAction::InvitesSheet,
            "invites-csv" => AdminAction::InvitesCsv,
            other => AdminAction::Texts(texts::Step::parse(other).ok_or_else(bad)?),
        })
    }
}

pub fn post(w: &mut WebWorker, req: &Request, form: &Form, poll: Poll, today: Day) -> Result<Response, Error> {
    let ctx = w.ctx(req, Some(poll.lang));
    let t = ctx.t;
    let Some(token) = presented_token(form) else { return Ok(prompt(&ctx, &poll, 200, None)) };
    if check_token(&poll, token).is_err() {
        return Ok(prompt(&ctx, &poll, 403, Some(t.err_bad_token)));
    }
    let token = token.to_owned();
    let mut view = View {
        done: None,
        draft: None,
        problems: Problems::default(),
        media: None,
        settings: None,
        invites_count: None,
        texts: None,
        texts_focus: None,
        invites_once: w.web.invite_forms.issue(&poll.id, today).map_err(Error::internal)?,
        focus_invites: false,
        status: 200,
    };
    let action = AdminAction::parse(form, &poll)?;
    let open = action == AdminAction::Open;
    match action {
        AdminAction::Open => {
            view.focus_invites = form.get("next") == Some("invites");
            view.done = form.get("done").and_then(Done::parse);
        }
        AdminAction::Close => status::set_closed(w, &ctx, &poll, true, today, &mut view)?,
        AdminAction::Reopen => status::set_closed(w, &ctx, &poll, false, today, &mut view)?,
        AdminAction::Expiry => expiry::save(w, &ctx, form, (&poll, today), &mut view)?,
        AdminAction::Settings => settings::save(w, &ctx, form, &poll, today, &mut view)?,
        AdminAction::Texts(step) => texts::act(w, &ctx, form, (&poll, step), today, &mut view)?,
        AdminAction::VersionSave(lang) => versions::save(w, &ctx, form, &poll, lang, today, &mut view)?,
        AdminAction::VersionRemove(lang) => versions::remove(w, &ctx, &poll, lang, today, &mut view)?,
        AdminAction::MediaDrop => media::drop_held(w, form),
        AdminAction::MediaAttach => media::attach(w, &ctx, (form, req.client), &poll, today, &mut view)?,
        AdminAction::MediaRemove(media) => media::remove(w, &poll, &media, today, &mut view)?,
        AdminAction::Delete => return Ok(delete::confirm(&ctx, &poll, &token)),
        AdminAction::DeleteConfirmed => return delete::confirmed(w, &ctx, &poll),
        action @ (AdminAction::InvitesSheet | AdminAction::InvitesCsv) => {
            let csv = action == AdminAction::InvitesCsv;
            if let Some(answer) = invites::issue(w, &ctx, form, (&poll, &token), today, &mut view, csv)? {
                return Ok(answer);
            }
        }
    }
    // Done: the page again, by a GET (a refused form comes back as sent,
    // with its problems: sending it again changes nothing either).
    if let (Some(done), false) = (view.done, open) {
        return Ok(after_action(&ctx, &poll, done));
    }
    // Show the poll as it is now.
    let poll = w.session.reload(&poll, today)?;
    let results = w.session.results(&poll, Access::Token(&token))?;
    let invites = w.session.invite_status(&poll, &token)?;
    let body = dashboard(&ctx, (&poll, today), (&results, invites), &token, &view, w);
    let ctx = Ctx { secret: Some(("token", token.clone())), ..ctx };
    Ok(respond(view.status, ctx.lang, page(&ctx, t.admin_title, body)))
}

/// Applies `patch`; on success notes `done` and answers the poll as it is
/// now; a refused patch is shown on the page instead.
fn change(
    w: &mut WebWorker,
    ctx: &Ctx,
    poll: &Poll,
    patch: &PollPatch,
    today: Day,
    view: &mut View,
    done: Done,
) -> Result<Option<Poll>, Error> {
    match w.session.patch(poll, patch, today) {
        Ok(updated) => {
            view.did(done);
            Ok(Some(updated))
        }
        Err(Error::Invalid(errors)) => {
            view.refused();
            for e in &errors {
                view.problems.general.push(problem_text(ctx.t, &e.problem));
            }
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

fn hidden_token(token: &str) -> Markup {
    html! { input type="hidden" name="token" value=(token); }
}

fn dashboard(
    ctx: &Ctx,
    (poll, today): (&Poll, Day),
    (results, invites): (&Results, InviteStatus),
    token: &str,
    view: &View,
    w: &WebWorker,
) -> Markup {
    let (links, uploads) = (w.session.links(), &w.web.uploads);
    let t = ctx.t;
    let (content_lang, title, _) = poll.version(ctx.lang);
    let id = &poll.id;
    html! {
        h1 { (t.admin_title) }
        (poll_subtitle(title.as_str(), lang_attr(content_lang, ctx.lang)))
        (facts(ctx, poll, today))
        @if let Some(done) = view.done { (notice("ok", &done.text(t, poll))) }
        (error_summary(ctx, t.problems_heading, &view.problems))
        // Results first: what the admin comes back for. Then the links,
        // the open/closed switch, and the rest folded (opened when the
        // page comes back with a problem or a draft in it).
        // Live whatever the poll's visibility: the script asks the API with
        // the key (a Bearer header, never a URL) and redraws on a change.
        @if poll.closed {
            (results_section(ctx, poll, results, 2))
        } @else {
            div.live data-live-results=(format!("/api/polls/{}/results", poll.id)) data-live-admin {
                p.results-live hidden { (t.results_live) }
                (results_section(ctx, poll, results, 2))
            }
        }
        section aria-labelledby="links-heading" {
            h2 id="links-heading" { (t.links_heading) }
            // With its QR code, as on "Your poll is ready": the
            // admin comes back here to show the poll on a slide or a sheet.
            @let share = links.share(id);
            div.share-block {
                div.share-link { (link_field(ctx, "link-share", t.created_share, t.created_share_hint, &share)) }
                (qr_svg(&share, t.share_qr))
            }
            (link_field(ctx, "link-results", t.created_results, &visibility_text(t, poll), &links.results(id)))
        }
        (status::section(ctx, poll, token))
        (expiry::section(ctx, (poll, today), token, view))
        (settings::section(ctx, poll, token, view))
        (texts::section(ctx, poll, results.total > 0, token, view))
        (invites::section(ctx, poll, invites, token, view))
        (media::section(ctx, poll, token, view, uploads))
        (versions::section(ctx, poll, token, view))
        (delete::section(ctx, token))
    }
}

/// A folded section of the admin page: its heading is the `<summary>`
/// (so the outline still lists it), its content shown on demand (no script
/// needed). Its heading's id is `{id}-heading`.
fn fold(id: &str, heading: &str, open: bool, content: Markup) -> Markup {
    html! {
        details.fold id=(format!("{id}-section")) open[open] {
            summary { h2 id=(format!("{id}-heading")) { (heading) } }
            div.fold-body { (content) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `done` reads back as the action it names, and nothing else
    /// reads as one (the page then shows the plain prompt).
    #[test]
    fn every_done_reads_back_from_its_address() {
        let mut all = vec![
            Done::Closed,
            Done::Reopened,
            Done::Expiry,
            Done::Settings,
            Done::MediaAttached,
            Done::MediaRemoved,
            Done::Texts,
            Done::TextsVersionsDropped,
            Done::Invites,
        ];
        all.extend(Lang::ALL.into_iter().flat_map(|l| [Done::VersionSaved(l), Done::VersionRemoved(l)]));
        for done in all {
            assert_eq!(Done::parse(&done.code()), Some(done), "{}", done.code());
            assert!(done.code().bytes().all(|b| b.is_ascii_lowercase() || b == b'-'), "fits an address as it is");
        }
        for other in ["", "close", "version-saved-", "version-saved-es", "texts ", "CLOSED"] {
            assert_eq!(Done::parse(other), None, "{other:?}");
        }
    }
}
