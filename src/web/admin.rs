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

use std::net::IpAddr;

use maud::{Markup, html};

use super::WebWorker;
use super::ballot::Verdict;
use super::form::{Form, Problems, problem_text};
use super::layout::{Ctx, lang_attr, message_page, notice, page, poll_subtitle, respond};
use super::media::figure;
use super::parts::facts::facts;
use super::parts::fields::{error_summary, link_field};
use super::parts::media_field::{SlotField, alt_text, media_fieldset};
use super::parts::qr::qr_svg;
use super::parts::results_view::results_section;
use super::parts::settings::{self, SettingsDraft};
use super::parts::token::{presented_token, token_form};
use super::uploads::{SlotDraft, Uploads, message as upload_message};
use crate::app::{Access, INVITES_PER_CALL, InviteStatus, Issued, Links, check_token};
use crate::client::ClientGroup;
use crate::day::Day;
use crate::domain::results::Results;
use crate::domain::{
    DuplicateCheck, EXPIRY_DAYS, ExpiryDays, FieldError, Key, Lang, LanguageVersion, NewMedia, Poll, PollPatch,
    Problem, QuestionTexts, Seg, Slot, check_alt,
};
use crate::error::Error;
use crate::http::{Request, Response};
use crate::secret::MediaId;

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

/// A language version as typed in its form.
struct VersionDraft {
    lang: Lang,
    title: String,
    questions: Vec<QuestionTexts>,
}

impl VersionDraft {
    fn from_form(form: &Form, poll: &Poll, lang: Lang) -> VersionDraft {
        VersionDraft {
            lang,
            title: form.text("vt"),
            questions: poll
                .questions
                .iter()
                .enumerate()
                .map(|(i, q)| QuestionTexts {
                    label: form.text(&format!("vq{i}")),
                    options: (0..q.options.len()).map(|j| form.text(&format!("vq{i}o{j}"))).collect(),
                    min_label: form.text(&format!("vq{i}min")),
                    max_label: form.text(&format!("vq{i}max")),
                })
                .collect(),
        }
    }
}

/// What the dashboard shows above its sections, after an action.
struct View {
    notice: Option<(&'static str, String)>,
    /// A language version's form as sent, when it is shown again with a problem.
    draft: Option<VersionDraft>,
    problems: Problems,
    /// The media form as sent, when it is shown again with a problem.
    media: Option<(String, SlotDraft)>,
    /// The settings form as sent, when it is shown again with a problem.
    settings: Option<SettingsDraft>,
    /// The number of codes asked for, when it is shown again with a problem.
    invites_count: Option<String>,
    /// The invite form's one-time code.
    invites_once: String,
    status: u16,
}

impl View {
    fn done(&mut self, text: String) {
        self.notice = Some(("ok", text));
    }

    fn refused(&mut self) {
        self.status = 422;
    }
}

/// The admin media form's file field (`f-am`, `f-am-alt`).
const MEDIA_FIELD: &str = "am";

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
            _ => return Err(bad()),
        })
    }
}

/// `poll` or `q{i}` (a question of the poll) from the media form's `slot`.
fn parse_slot(value: Option<&str>, questions: usize) -> Option<Slot> {
    match value? {
        "poll" => Some(Slot::Poll),
        q => q.strip_prefix('q')?.parse::<usize>().ok().filter(|&i| i < questions).map(Slot::Question),
    }
}

/// Attaches the file of the admin media form, sent by `client`; a problem goes to `view`.
fn attach(
    w: &WebWorker,
    ctx: &Ctx,
    (form, client): (&Form, IpAddr),
    poll: &Poll,
    today: Day,
    view: &mut View,
) -> Result<(), Error> {
    let t = ctx.t;
    let uploads = &w.web.uploads;
    let draft = SlotDraft::read(uploads, form, MEDIA_FIELD, ClientGroup::of(client));
    let slot_value = form.text("slot");
    let Some(slot) = parse_slot(Some(&slot_value), poll.questions.len()) else {
        view.problems.general.push(t.bad_form.to_owned());
        view.refused();
        return Ok(());
    };
    let file_id = format!("f-{MEDIA_FIELD}");
    let name = format!("{}, {}", t.media_heading, t.media_file);
    if let Some(e) = &draft.error {
        view.problems.field(file_id.clone(), name.clone(), upload_message(t, e));
    }
    let staged = match (&draft.staged, &draft.error) {
        (Some(s), None) => s.clone(),
        (None, None) => {
            view.problems.field(file_id, name, t.err_media_empty.to_owned());
            view.media = Some((slot_value, draft));
            view.refused();
            return Ok(());
        }
        _ => {
            view.media = Some((slot_value, draft));
            view.refused();
            return Ok(());
        }
    };
    let alt = match check_alt(staged.clean.kind, &draft.alt) {
        Ok(alt) => alt,
        Err(problem) => {
            let name = format!("{}, {}", t.media_heading, t.media_alt);
            view.problems.field(format!("f-{MEDIA_FIELD}-alt"), name, alt_text(t, &problem));
            view.media = Some((slot_value, draft));
            view.refused();
            return Ok(());
        }
    };
    let media = NewMedia { id: MediaId::generate()?, slot, clean: staged.clean.clone(), alt };
    w.web.app.attach_media(poll, media, today)?;
    uploads.release([staged.reference.as_str()]);
    view.done(t.media_attached.to_owned());
    Ok(())
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
        notice: None,
        draft: None,
        problems: Problems::default(),
        media: None,
        settings: None,
        invites_count: None,
        invites_once: w.web.invite_forms.issue(&poll.id, today).map_err(Error::internal)?,
        status: 200,
    };
    match AdminAction::parse(form, &poll)? {
        AdminAction::Open => {}
        AdminAction::Close => {
            let patch = PollPatch { closed: Some(true), ..PollPatch::default() };
            change(w, &ctx, &poll, &patch, today, &mut view, t.closed_done.to_owned())?;
        }
        AdminAction::Reopen => {
            let patch = PollPatch { closed: Some(false), ..PollPatch::default() };
            change(w, &ctx, &poll, &patch, today, &mut view, t.reopened_done.to_owned())?;
        }
        AdminAction::Expiry => match ExpiryDays::from_text(&form.text("expiry")) {
            Ok(days) => {
                let patch = PollPatch { expiry: Some(days), ..PollPatch::default() };
                let updated = change(w, &ctx, &poll, &patch, today, &mut view, String::new())?;
                if let Some(updated) = updated {
                    view.done((t.expiry_done)(&t.day(&updated.expires_on.to_string())));
                }
            }
            Err(problem) => {
                view.problems.field("a-expiry", t.expiry_label, problem_text(t, &problem));
                view.refused();
            }
        },
        AdminAction::Settings => save_settings(w, &ctx, form, &poll, today, &mut view)?,
        AdminAction::VersionSave(lang) => save_version(w, &ctx, form, &poll, lang, today, &mut view)?,
        AdminAction::VersionRemove(lang) => {
            let patch = PollPatch { translations: [(lang, None)].into(), ..PollPatch::default() };
            change(w, &ctx, &poll, &patch, today, &mut view, (t.version_removed)(t.lang_name(lang)))?;
        }
        AdminAction::MediaDrop => {
            if let Some(r) = form.get(&format!("{MEDIA_FIELD}-held")) {
                w.web.uploads.release([r]);
            }
        }
        AdminAction::MediaAttach => attach(w, &ctx, (form, req.client), &poll, today, &mut view)?,
        AdminAction::MediaRemove(media) => match w.web.app.detach_media(&poll, &media, today) {
            Ok(()) => view.done(t.media_removed.to_owned()),
            // Already gone (a second click): the page shows the truth.
            Err(Error::NotFound) => {}
            Err(e) => return Err(e),
        },
        AdminAction::Delete => return Ok(confirm_delete(&ctx, &poll, &token)),
        AdminAction::DeleteConfirmed => {
            return match w.web.app.delete(&poll) {
                Ok(()) | Err(Error::NotFound) => Ok(message_page(&ctx, 200, t.deleted_title, t.deleted_text)),
                Err(e) => Err(e),
            };
        }
        action @ (AdminAction::InvitesSheet | AdminAction::InvitesCsv) => {
            let csv = action == AdminAction::InvitesCsv;
            // Sent once: a second send (a reload of the sheet) issues nothing.
            let once = form.get("once").unwrap_or("").trim();
            match w.web.invite_forms.redeem(&poll.id, once, today) {
                Verdict::Valid => {}
                Verdict::Used | Verdict::Reserved => return Ok(invites_sent(&ctx, &poll, &token)),
                Verdict::Invalid => {
                    view.refused();
                    view.problems.general.push(t.err_invites_expired.to_owned());
                }
            }
            let issued = if view.status == 200 {
                let issued = issue_invites(w, &ctx, form, (&poll, &token), today, &mut view)?;
                if issued.is_none() {
                    // Refused (a count out of range): the form may be sent again.
                    w.web.invite_forms.settle(&poll.id, once, false);
                }
                issued
            } else {
                None
            };
            if let Some(issued) = issued {
                let links = w.session.links();
                return if csv {
                    invites_csv(&poll, &issued, links)
                } else {
                    Ok(invites_sheet(&ctx, &poll, &issued, links))
                };
            }
        }
    }
    // Show the poll as it is now.
    let poll = w.session.reload(&poll, today)?;
    let results = w.session.results(&poll, Access::Token(&token))?;
    let invites = w.session.invite_status(&poll, &token)?;
    let body = dashboard(&ctx, (&poll, today), (&results, invites), &token, &view, w);
    let ctx = Ctx { secret: Some(("token", token.clone())), ..ctx };
    Ok(respond(view.status, ctx.lang, page(&ctx, t.admin_title, body)))
}

/// Applies `patch`; on success says `done` (unless empty) and answers the
/// poll as it is now; a refused patch is shown on the page instead.
fn change(
    w: &mut WebWorker,
    ctx: &Ctx,
    poll: &Poll,
    patch: &PollPatch,
    today: Day,
    view: &mut View,
    done: String,
) -> Result<Option<Poll>, Error> {
    match w.session.patch(poll, patch, today) {
        Ok(updated) => {
            if !done.is_empty() {
                view.done(done);
            }
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

/// Saves the settings form through the API's own PATCH rules, or shows it
/// again with its problems.
fn save_settings(
    w: &mut WebWorker,
    ctx: &Ctx,
    form: &Form,
    poll: &Poll,
    today: Day,
    view: &mut View,
) -> Result<(), Error> {
    let draft = SettingsDraft::from_form(form);
    let mut body = serde_json::json!({});
    draft.add_to(&mut body, true);
    let result =
        PollPatch::from_json(&body).map_err(Error::Invalid).and_then(|patch| w.session.patch(poll, &patch, today));
    match result {
        Ok(_) => view.done(ctx.t.settings_done.to_owned()),
        Err(Error::Invalid(errors)) => {
            view.refused();
            for e in &errors {
                let message = problem_text(ctx.t, &e.problem);
                match settings::field_of(ctx, "a", e) {
                    Some((id, name)) => view.problems.field(id, name, message),
                    None => view.problems.general.push(message),
                }
            }
            view.settings = Some(draft);
        }
        Err(e) => return Err(e),
    }
    Ok(())
}

/// Saves the language version typed in its form, or shows it again with
/// its problems.
fn save_version(
    w: &mut WebWorker,
    ctx: &Ctx,
    form: &Form,
    poll: &Poll,
    lang: Lang,
    today: Day,
    view: &mut View,
) -> Result<(), Error> {
    let draft = VersionDraft::from_form(form, poll, lang);
    let version = LanguageVersion::from_texts(lang, &draft.title, &draft.questions);
    let result = match version {
        Ok(v) => {
            let patch = PollPatch { translations: [(lang, Some(v))].into(), ..PollPatch::default() };
            w.session.patch(poll, &patch, today).map(|_| ())
        }
        Err(errors) => Err(Error::Invalid(errors)),
    };
    match result {
        Ok(()) => view.done((ctx.t.version_saved)(ctx.t.lang_name(lang))),
        Err(Error::Invalid(errors)) => {
            view.refused();
            view.problems = version_problems(ctx, lang, &errors);
            view.draft = Some(draft);
        }
        Err(e) => return Err(e),
    }
    Ok(())
}

/// Maps problems under `translations.{lang}` to the fields of that version's form.
fn version_problems(ctx: &Ctx, lang: Lang, errors: &[FieldError]) -> Problems {
    use Seg::{Index, Key as K};
    let t = ctx.t;
    let code = lang.code();
    let mut p = Problems::default();
    for e in errors {
        let msg = problem_text(t, &e.problem);
        let rest = match e.path.segs() {
            [K(Key::Translations), Seg::Lang(l), rest @ ..] if *l == lang => rest,
            _ => &[],
        };
        match rest {
            [K(Key::Title)] => p.field(format!("v-{code}-t"), t.version_title, msg),
            [K(Key::Questions), Index(i), K(Key::Label)] => {
                p.field(format!("v-{code}-q{i}"), (t.question_legend)(i + 1), msg)
            }
            [K(Key::Questions), Index(i), K(Key::Options), Index(j)] => p.field(
                format!("v-{code}-q{i}o{j}"),
                format!("{}, {}", (t.question_legend)(i + 1), (t.field_option)(j + 1)),
                msg,
            ),
            [K(Key::Questions), Index(i), K(end @ (Key::MinLabel | Key::MaxLabel))] => {
                let (suffix, name) =
                    if *end == Key::MinLabel { ("min", t.field_min_label) } else { ("max", t.field_max_label) };
                p.field(format!("v-{code}-q{i}{suffix}"), format!("{}, {name}", (t.question_legend)(i + 1)), msg)
            }
            _ => p.general.push(msg),
        }
    }
    p
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
        @if let Some((kind, text)) = &view.notice { (notice(kind, text)) }
        (error_summary(ctx, t.problems_heading, &view.problems))
        // Results first: what the admin comes back for. Then the links,
        // the open/closed switch, and the rest folded (opened when the
        // page comes back with a problem or a draft in it).
        (results_section(ctx, poll, results, 2))
        section aria-labelledby="links-heading" {
            h2 id="links-heading" { (t.links_heading) }
            // With its QR code, as on "Your poll is ready": the
            // admin comes back here to show the poll on a slide or a sheet.
            @let share = links.share(id);
            div.share-block {
                div.share-link { (link_field(ctx, "link-share", t.created_share, t.created_share_hint, &share)) }
                (qr_svg(&share, t.share_qr))
            }
            (link_field(ctx, "link-results", t.created_results, &settings::visibility_text(t, poll), &links.results(id)))
        }
        section.status-row aria-labelledby="status-heading" {
            h2 id="status-heading" { (t.status_heading) }
            form method="post" action=(ctx.action()) {
                (hidden_token(token))
                @if poll.closed {
                    button.primary type="submit" name="action" value="reopen" { (t.reopen_poll) }
                } @else {
                    button.primary type="submit" name="action" value="close" { (t.close_poll) }
                }
            }
        }
        @let expiry_errors = view.problems.of("a-expiry");
        (fold("expiry", t.expiry_heading, !expiry_errors.is_empty(), html! {
            form.inline method="post" action=(ctx.action()) {
                (hidden_token(token))
                div.field {
                    label for="a-expiry" { (t.expiry_label) }
                    @if !expiry_errors.is_empty() { p.field-error id="a-expiry-error" { @for e in &expiry_errors { (e) " " } } }
                    select id="a-expiry" name="expiry" aria-describedby=[(!expiry_errors.is_empty()).then_some("a-expiry-error")] {
                        @let current = expiry_choice(poll, today);
                        @for d in EXPIRY_DAYS { option value=(d) selected[d == current] { ((t.expiry_option)(d)) } }
                    }
                }
                button.secondary type="submit" name="action" value="expiry" { (t.expiry_submit) }
            }
        }))
        (fold("settings", t.settings_heading, view.settings.is_some(), html! {
            form method="post" action=(ctx.action()) {
                (hidden_token(token))
                (settings::fields(ctx, "a", view.settings.as_ref().unwrap_or(&SettingsDraft::from_poll(poll)), &view.problems))
                button.secondary type="submit" name="action" value="settings" { (t.settings_save) }
            }
        }))
        // Open when the poll takes invite codes: then they are the admin's daily work.
        (fold("invites", t.invites_heading,
            poll.duplicate_check == DuplicateCheck::Invite || view.invites_count.is_some(),
            invites_section(ctx, poll, invites, token, view)))
        (fold("media", t.media_heading, view.media.is_some(), media_section(ctx, poll, token, view, uploads)))
        (fold("versions", t.versions_heading, view.draft.is_some(), html! {
            p { (t.versions_intro) }
            @for lang in Lang::ALL.into_iter().filter(|l| *l != poll.lang) {
                (version_form(ctx, poll, lang, token, view))
            }
        }))
        (fold("delete", t.delete_heading, false, html! {
            p { (t.delete_text) }
            form method="post" action=(ctx.action()) {
                (hidden_token(token))
                button.danger type="submit" name="action" value="delete" { (t.delete_button) }
            }
        }))
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

/// The erase-date choice the admin page preselects. The choices count from
/// the day the form is sent, so the one shown is the one that, sent as it
/// is, changes the erase day least and never brings it earlier (an erase
/// that comes sooner than the admin thought cannot be undone):
/// - the choice that keeps today's erase day exactly (the day the poll was
///   made or its erase day last changed, that is the lifetime chosen then);
/// - else the lifetime the poll was made with, when the erase day is still
///   the one it was made with (`created_on` + a choice): what the admin
///   chose, and since today is not before `created_on`, it only moves the
///   erase day later;
/// - else (the erase day was changed on an earlier day) the shortest
///   choice that reaches the current erase day, or the longest there is.
fn expiry_choice(poll: &Poll, today: Day) -> u16 {
    let reaches = |d: &&u16| today.plus_days(**d) >= poll.expires_on;
    EXPIRY_DAYS
        .iter()
        .find(|d| today.plus_days(**d) == poll.expires_on)
        .or_else(|| EXPIRY_DAYS.iter().find(|d| poll.created_on.plus_days(**d) == poll.expires_on))
        .or_else(|| EXPIRY_DAYS.iter().find(reaches))
        .or(EXPIRY_DAYS.last())
        .copied()
        .unwrap_or(30)
}

fn media_section(ctx: &Ctx, poll: &Poll, token: &str, view: &View, uploads: &Uploads) -> Markup {
    let t = ctx.t;
    let (chosen, draft) = match &view.media {
        Some((slot, draft)) => (slot.as_str(), draft.clone()),
        None => ("poll", SlotDraft::default()),
    };
    let slot_name = |slot: Slot| match slot {
        Slot::Poll => t.media_slot_poll.to_owned(),
        Slot::Question(i) => (t.question_legend)(i + 1),
    };
    html! {
        div.media-admin {
            p { (t.media_intro) }
            @if poll.media.is_empty() {
                p { (t.media_none) }
            } @else {
                ul.media-list {
                    @for m in &poll.media {
                        li {
                            p.meta { strong { (slot_name(m.slot)) } }
                            (figure(ctx, m, poll.lang))
                            form method="post" action=(ctx.action()) {
                                (hidden_token(token))
                                input type="hidden" name="media" value=(m.id.as_str());
                                button.danger type="submit" name="action" value="media-remove" { (t.media_remove) }
                            }
                        }
                    }
                }
            }
            form method="post" action=(ctx.action()) enctype="multipart/form-data" novalidate {
                (hidden_token(token))
                div.field {
                    label for="a-slot" { (t.media_slot) }
                    select id="a-slot" name="slot" {
                        option value="poll" selected[chosen == "poll"] { (t.media_slot_poll) }
                        @for (i, q) in poll.questions.iter().enumerate() {
                            @let value = format!("q{i}");
                            option value=(value) selected[chosen == value] { ((t.question_legend)(i + 1)) (t.colon) (q.label.as_str()) }
                        }
                    }
                }
                (media_fieldset(ctx, SlotField { prefix: MEDIA_FIELD, legend: None }, &draft, &view.problems, None, uploads))
                button.primary type="submit" name="action" value="media-attach" { (t.media_attach) }
            }
        }
    }
}

/// One text field of a question in the language-version form.
#[derive(Clone, Copy)]
enum VersionText {
    Label,
    Option(usize),
    MinLabel,
    MaxLabel,
}

fn version_form(ctx: &Ctx, poll: &Poll, lang: Lang, token: &str, view: &View) -> Markup {
    let t = ctx.t;
    let code = lang.code();
    let existing = poll.translations.get(&lang);
    let draft = view.draft.as_ref().filter(|d| d.lang == lang);
    let title = draft.map(|d| d.title.clone()).or_else(|| existing.map(|v| v.title.to_string())).unwrap_or_default();
    // The text typed (a draft shown again) or stored for one field of
    // question `i`.
    let value = |i: usize, text: VersionText| -> String {
        if let Some(d) = draft {
            return d.questions.get(i).map_or(String::new(), |q| match text {
                VersionText::Label => q.label.clone(),
                VersionText::Option(j) => q.options.get(j).cloned().unwrap_or_default(),
                VersionText::MinLabel => q.min_label.clone(),
                VersionText::MaxLabel => q.max_label.clone(),
            });
        }
        existing.and_then(|v| v.questions.get(i)).map_or(String::new(), |q| match text {
            VersionText::Label => q.label.to_string(),
            VersionText::Option(j) => q.options.get(j).map(|o| o.to_string()).unwrap_or_default(),
            VersionText::MinLabel => q.min_label.as_ref().map(|l| l.to_string()).unwrap_or_default(),
            VersionText::MaxLabel => q.max_label.as_ref().map(|l| l.to_string()).unwrap_or_default(),
        })
    };
    let plang = poll.lang.code();
    let field = |id: String, name: String, label: String, value: String, original: &str| {
        let errors = view.problems.of(&id);
        let mut described = format!("{id}-orig");
        if !errors.is_empty() {
            described.push_str(&format!(" {id}-error"));
        }
        html! {
            div.field {
                label for=(id) { (label) }
                p.hint id=(format!("{id}-orig")) { ((t.original)("")) span lang=(plang) { (original) } }
                @if !errors.is_empty() { p.field-error id=(format!("{id}-error")) { @for e in &errors { (e) " " } } }
                input type="text" id=(id) name=(name) value=(value) lang=(code)
                    aria-invalid=[(!errors.is_empty()).then_some("true")] aria-describedby=(described);
            }
        }
    };
    let heading = (t.version_heading)(t.lang_name(lang));
    html! {
        details.version open[existing.is_some() || draft.is_some()] {
            summary { (heading) " · " (if existing.is_some() { t.version_exists } else { t.version_missing }) }
            form method="post" action=(ctx.action()) {
                (hidden_token(token))
                input type="hidden" name="vlang" value=(code);
                (field(format!("v-{code}-t"), "vt".into(), t.version_title.into(), title, poll.title.as_str()))
                @for (i, q) in poll.questions.iter().enumerate() {
                    fieldset.question {
                        legend { ((t.question_legend)(i + 1)) }
                        (field(format!("v-{code}-q{i}"), format!("vq{i}"), t.field_question.into(), value(i, VersionText::Label), q.label.as_str()))
                        @for (j, o) in q.options.iter().enumerate() {
                            (field(format!("v-{code}-q{i}o{j}"), format!("vq{i}o{j}"), (t.field_option)(j + 1), value(i, VersionText::Option(j)), o.as_str()))
                        }
                        @if let Some(l) = &q.min_label {
                            (field(format!("v-{code}-q{i}min"), format!("vq{i}min"), t.field_min_label.into(), value(i, VersionText::MinLabel), l.as_str()))
                        }
                        @if let Some(l) = &q.max_label {
                            (field(format!("v-{code}-q{i}max"), format!("vq{i}max"), t.field_max_label.into(), value(i, VersionText::MaxLabel), l.as_str()))
                        }
                    }
                }
                div.row-actions {
                    button.primary type="submit" name="action" value="version-save" { (t.version_save) }
                    @if existing.is_some() {
                        button.danger type="submit" name="action" value="version-remove" formnovalidate { (t.version_remove) }
                    }
                }
            }
        }
    }
}

fn confirm_delete(ctx: &Ctx, poll: &Poll, token: &str) -> Response {
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

/// The HTML id of the number of codes to issue.
const INVITES_COUNT_ID: &str = "a-invites-count";

/// Issues the number of codes the form asks for; a problem with the number
/// goes to `view` (and `None` is answered).
fn issue_invites(
    w: &mut WebWorker,
    ctx: &Ctx,
    form: &Form,
    (poll, token): (&Poll, &str),
    today: Day,
    view: &mut View,
) -> Result<Option<Issued>, Error> {
    let t = ctx.t;
    let typed = form.text("count");
    let result = match whole_number(&typed) {
        Some(count) => w.session.issue_invites(poll, token, count, today),
        None => {
            let problem = Problem::IntegerRange { min: 1, max: INVITES_PER_CALL as usize };
            Err(Error::Invalid(vec![FieldError::new(Key::Count, problem)]))
        }
    };
    match result {
        Ok(issued) => Ok(Some(issued)),
        Err(Error::Invalid(errors)) => {
            view.refused();
            for e in &errors {
                view.problems.field(INVITES_COUNT_ID, t.invites_count_label, problem_text(t, &e.problem));
            }
            view.invites_count = Some(typed);
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

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
    let body = html! {
        div.sheet-intro {
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
                    p.card-text { (t.invite_card_text) }
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

    /// A language version typed on the admin page obeys the text rules of
    /// creation: a line separator in its title, an answer equal in NFC to
    /// another and one that looks like another are each shown at their own
    /// field, naming the answer they repeat, in the reader's language.
    #[test]
    fn a_versions_refused_texts_are_shown_at_their_fields() {
        use crate::domain::QuestionTexts;
        use crate::web::lang::Choice;
        let texts = QuestionTexts {
            label: "Où\u{2029}".into(),
            options: vec!["Caf\u{e9}".into(), "Cafe\u{301}".into(), "Pizza".into(), "\u{420}izza".into()],
            ..QuestionTexts::default()
        };
        let errors = LanguageVersion::from_texts(Lang::Fr, "D\u{e9}jeuner\u{2028}", &[texts]).unwrap_err();
        for lang in Lang::ALL {
            let ctx = Ctx::new(Choice { lang, explicit: false }, "/");
            let t = ctx.t;
            let p = version_problems(&ctx, Lang::Fr, &errors);
            let at: Vec<(&str, String)> = p.fields.iter().map(|f| (f.id.as_str(), f.message.clone())).collect();
            assert_eq!(
                at,
                [
                    ("v-fr-t", t.err_separator.to_owned()),
                    ("v-fr-q0", t.err_separator.to_owned()),
                    ("v-fr-q0o1", (t.err_duplicate)(1)),
                    ("v-fr-q0o3", (t.err_lookalike)(3)),
                ],
                "{lang:?}"
            );
            assert!(p.general.is_empty(), "{lang:?}: {:?}", p.general);
        }
    }
}
