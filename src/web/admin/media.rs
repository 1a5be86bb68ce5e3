//! The admin page's media: pictures, sounds and videos attached to the
//! poll or to one of its questions, attached, replaced or removed.
//!
//! Why a module of its own: it is one action of the page, with its folded
//! section (the files the poll has, and the form that adds one) and the
//! handling of its three buttons. Promises: a file is cleaned by the
//! staging area (`web/uploads.rs`) before it is attached, and its alt text
//! checked by the domain's own rule; a refused form comes back with the
//! file it held, so it need not be chosen again.

use std::net::IpAddr;

use maud::{Markup, html};

use super::{Done, View, fold, hidden_token};
use crate::client::ClientGroup;
use crate::day::Day;
use crate::domain::{NewMedia, Poll, Slot, check_alt};
use crate::error::Error;
use crate::secret::MediaId;
use crate::web::WebWorker;
use crate::web::form::Form;
use crate::web::layout::Ctx;
use crate::web::media::figure;
use crate::web::parts::media_field::{SlotField, alt_text, media_fieldset};
use crate::web::uploads::{SlotDraft, Uploads, message as upload_message};

/// The admin media form's file field (`f-am`, `f-am-alt`).
const MEDIA_FIELD: &str = "am";

/// `poll` or `q{i}` (a question of the poll) from the media form's `slot`.
fn parse_slot(value: Option<&str>, questions: usize) -> Option<Slot> {
    match value? {
        "poll" => Some(Slot::Poll),
        q => q.strip_prefix('q')?.parse::<usize>().ok().filter(|&i| i < questions).map(Slot::Question),
    }
}

/// Attaches the file of the admin media form, sent by `client`; a problem goes to `view`.
pub(super) fn attach(
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
    view.did(Done::MediaAttached);
    Ok(())
}

/// Forgets the file the media form held (its "remove" button before the
/// form was sent).
pub(super) fn drop_held(w: &WebWorker, form: &Form) {
    if let Some(r) = form.get(&format!("{MEDIA_FIELD}-held")) {
        w.web.uploads.release([r]);
    }
}

/// Removes one file of the poll, and says so in `view`.
pub(super) fn remove(w: &WebWorker, poll: &Poll, media: &MediaId, today: Day, view: &mut View) -> Result<(), Error> {
    match w.web.app.detach_media(poll, media, today) {
        // Already gone (a second click): the same.
        Ok(()) | Err(Error::NotFound) => view.did(Done::MediaRemoved),
        Err(e) => return Err(e),
    }
    Ok(())
}

/// The folded section with the poll's files and the form that adds one,
/// open when that form comes back with a problem.
pub(super) fn section(ctx: &Ctx, poll: &Poll, token: &str, view: &View, uploads: &Uploads) -> Markup {
    fold("media", ctx.t.media_heading, view.media.is_some(), media_section(ctx, poll, token, view, uploads))
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
