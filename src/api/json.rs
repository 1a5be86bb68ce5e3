//! The JSON representations of the API: the public poll, the creation
//! answer and the results. `pollctl` prints the same documents (`show`,
//! `results`, `export --format json`), so they are built here once; the
//! OpenAPI document (`schema.rs`) describes exactly these shapes.

use serde_json::{Value, json};

use crate::app::{Created, InviteStatus, Issued, Links};
use crate::domain::results::{QuestionFigures, Results};
use crate::domain::{MediaItem, Poll, Question};

/// `open` or `closed`.
pub fn status(poll: &Poll) -> &'static str {
    if poll.closed { "closed" } else { "open" }
}

/// The public poll: everything but the token.
pub fn poll(poll: &Poll, links: &Links) -> Value {
    json!({
        "id": poll.id.as_str(),
        "title": poll.title,
        "lang": poll.lang,
        "status": status(poll),
        "resultsPublic": poll.results_public(),
        "resultsVisibility": poll.visibility,
        "closesOn": poll.closes_on.map(|d| d.to_string()),
        "shuffleOptions": poll.shuffle_options,
        "duplicateCheck": poll.duplicate_check,
        "voteChanges": poll.vote_changes,
        "createdOn": poll.created_on.to_string(),
        "expiresOn": poll.expires_on.to_string(),
        "editedOn": poll.edited_on.map(|d| d.to_string()),
        "questions": poll.questions,
        "translations": poll.translations.iter().map(|(l, v)| (l.code().to_owned(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "media": poll.media.iter().map(|m| media(m, links)).collect::<Vec<_>>(),
        "shareUrl": links.share(&poll.id),
    })
}

/// The answer to a creation: the only document that holds the admin token.
pub fn created(created: &Created, links: &Links) -> Value {
    let id = &created.poll.id;
    json!({
        "id": id.as_str(),
        "adminToken": created.token.expose(),
        "shareUrl": links.share(id),
        "adminUrl": links.admin(id, &created.token),
        "resultsUrl": links.results(id),
        "expiresOn": created.poll.expires_on.to_string(),
        "poll": poll(&created.poll, links),
    })
}

/// Invite codes just issued, with the link that carries each (in the
/// fragment, which browsers never send) and the poll's counts.
pub fn issued(poll: &Poll, issued: &Issued, links: &Links) -> Value {
    json!({
        "invites": issued.codes.iter().map(|c| json!({"code": c.expose(), "url": links.invite(&poll.id, c)})).collect::<Vec<_>>(),
        "issued": issued.status.issued,
        "used": issued.status.used,
    })
}

/// How many invite codes a poll has, and how many were used.
pub fn invite_status(status: &InviteStatus) -> Value {
    json!({"issued": status.issued, "used": status.used})
}

/// One media item of the public poll.
fn media(m: &MediaItem, links: &Links) -> Value {
    json!({
        "id": m.id.as_str(),
        "url": links.media(&m.id),
        "kind": m.kind,
        "mimeType": m.mime,
        "bytes": m.size,
        "question": m.slot.question(),
        "alt": m.alt,
        "width": m.width,
        "height": m.height,
    })
}

/// One question's results, by its type: options with counts (single,
/// multiple) or first choices plus pairwise counts and the Schulze ranking
/// (ranked), the distribution, mean and median (scale), or per slot its
/// yes, if-need-be and no with the best slots marked (schedule).
fn question_results(q: &Question, figures: &QuestionFigures) -> Value {
    let mut v = json!({"label": q.label, "type": q.kind, "answered": figures.answered});
    let label = |i: &usize| q.options.get(*i).map_or(Value::Null, |o| json!(o));
    // Per option, the count under its name: first choices for a ranking.
    let options = |count: &str| -> Value {
        q.options
            .iter()
            .zip(&figures.options)
            .map(|(o, f)| json!({"label": o, count: f.count, "percent": f.percent}))
            .collect()
    };
    if let Some(ranked) = &figures.ranked {
        v["options"] = options("firstChoices");
        v["pairwise"] = json!(ranked.pairwise);
        v["ranking"] = ranked
            .places()
            .into_iter()
            .map(|(place, options)| json!({"place": place, "options": options.iter().map(label).collect::<Vec<_>>()}))
            .collect();
        v["method"] = json!("schulze");
    } else if let Some(schedule) = &figures.schedule {
        let slots = q.slots();
        let name = |j: &usize| slots.get(*j).map_or(Value::Null, |s| json!(s.to_string()));
        v["slots"] = schedule
            .slots
            .iter()
            .enumerate()
            .map(|(j, f)| json!({"slot": name(&j), "yes": f.yes, "ifNeedBe": f.if_need_be, "no": f.no, "best": f.best}))
            .collect();
        v["bestFirst"] = schedule.order.iter().map(name).collect();
        if let Some(zone) = &q.time_zone {
            v["timeZone"] = json!(zone);
        }
    } else if let Some(scale) = &figures.scale {
        v["distribution"] =
            scale.distribution.iter().map(|(value, count)| json!({"value": value, "count": count})).collect();
        v["mean"] = json!(scale.mean);
        v["median"] = json!(scale.median);
    } else {
        v["options"] = options("count");
    }
    v
}

/// A poll's results, labelled in the poll's own language.
pub fn results(poll: &Poll, results: &Results) -> Value {
    let questions: Vec<Value> =
        poll.questions.iter().zip(&results.questions).map(|(q, figures)| question_results(q, figures)).collect();
    json!({
        "id": poll.id.as_str(),
        "status": status(poll),
        "totalResponses": results.total,
        "questions": questions,
        "responsesByDay": results.by_day.iter().map(|(d, n)| json!({"date": d.to_string(), "count": n})).collect::<Vec<_>>(),
    })
}
