//! Every write but a vote, each applied in its own savepoint of a batch:
//! creating a poll, changing it, its media and invite codes, a voter's
//! change or withdrawal ([`super::amend`]), erasing it, and the day's key
//! work ([`super::keywork`]).
//!
//! Each opens what it needs of the poll (its data key through the keyring,
//! its document), changes it, and seals it again under the same data key;
//! a poll's key is wrapped under the day of its lease
//! ([`Keyring::lease_day`]), and re-wrapped when its expiry moves.

use anyhow::anyhow;

use crate::day::Day;
use crate::domain::{FieldError, Key, NewMedia, Problem};
use crate::error::Error;
use crate::keyring::Keyring;
use crate::secret::PollId;

use super::super::engine::Rows;
use super::super::keys::{HexKey, data_key};
use super::super::open::{open_doc, open_state_in_tx};
use super::super::rows::{self, Doc, DocMedia, Layout, State};
use super::super::seal::{DataKey, bucket, padded};
use super::super::seen::Seen;
use super::super::vocab::{CodeRow, Cols, NewPollRow, place};
use super::cache::write_state;
use super::{Op, Outcome, amend, keywork};

/// The most invite codes one poll may have.
pub const MAX_INVITES: u64 = 10_000;

/// A live poll opened for a change: its key and document.
struct Opened {
    key: DataKey,
    doc: Doc,
}

fn open_live(tx: &mut dyn Rows, keys: &Keyring, id: &PollId, today: Day) -> Result<Opened, Error> {
    let Some(found) = tx.poll(id.as_str(), Some(today), Cols::Body)? else { return Err(Error::NotFound) };
    let key = data_key(keys, id.as_str(), found.row.key_day, &found.row.data_key)?;
    let doc = open_doc(&key, id.as_str(), found.body()?)?;
    Ok(Opened { key, doc })
}

fn write_doc(tx: &mut dyn Rows, id: &PollId, key: &DataKey, doc: &Doc) -> Result<(), Error> {
    let sealed = key.seal(&place::body(id.as_str()), &doc.to_bytes()?).map_err(Error::internal)?;
    tx.set_body(id.as_str(), &sealed)
}

/// `key` wrapped for poll `id` under the lease of a poll alive until
/// `expires_on`, from `today`: the day chosen and the wrapped key.
pub(super) fn wrap(
    keys: &Keyring,
    key: &DataKey,
    id: &str,
    expires_on: Day,
    today: Day,
) -> Result<(Day, Vec<u8>), Error> {
    let day = keys.lease_day(expires_on.previous(), today);
    let wrap = keys.wrap_key(day).ok_or_else(|| Error::internal(anyhow!("no key for the lease day {day}")))?;
    Ok((day, key.wrap(&wrap, &keys.ring(), id, day).map_err(Error::internal)?))
}

/// Applies one write. Returns its outcome and whether it erased data.
pub(super) fn apply(tx: &mut dyn Rows, keys: &Keyring, seen: &Seen, op: &Op) -> Result<(Outcome, bool), Error> {
    match op {
        Op::Create { id, token, poll, media, today } => {
            let key = DataKey::generate().map_err(Error::internal)?;
            let expires_on = today.plus_days(poll.expiry.get());
            let (key_day, wrapped) = wrap(keys, &key, id.as_str(), expires_on, *today)?;
            for m in media {
                check_slot(m, poll.questions.len())?;
            }
            let sealed: Vec<(DocMedia, Vec<u8>)> =
                media.iter().map(|m| seal_media(id, m)).collect::<Result<_, Error>>()?;
            let doc = Doc::new(token, poll, sealed.iter().map(|(listed, _)| listed.clone()).collect())?;
            let body = key.seal(&place::body(id.as_str()), &doc.to_bytes()?).map_err(Error::internal)?;
            let mut state = State::new(&Layout::of(&poll.questions));
            state.version = 1;
            let tallies =
                key.seal(&place::tallies(id.as_str()), &rows::state_bytes(&state)?).map_err(Error::internal)?;
            tx.insert_poll(&NewPollRow {
                id: id.as_str(),
                created_on: *today,
                expires_on,
                key_day,
                data_key: &wrapped,
                body: &body,
                tallies: &tallies,
            })?;
            for (m, (_, bytes)) in media.iter().zip(&sealed) {
                tx.insert_media(m.id.as_str(), id.as_str(), bytes)?;
            }
            Ok((Outcome::Done, false))
        }
        Op::AttachMedia { id, media, today } => {
            let mut p = open_live(tx, keys, id, *today)?;
            check_slot(media, p.doc.questions.len())?;
            // The slot's old item, if any, is erased (with the engine's log
            // truncated after, where it has one: the `true` below).
            let slot = media.slot.question();
            let old: Vec<String> = p.doc.media.iter().filter(|m| m.slot() == slot).map(|m| m.id.clone()).collect();
            for old_id in &old {
                tx.delete_media(old_id, None)?;
            }
            p.doc.media.retain(|m| m.slot() != slot);
            p.doc.media.push(insert_media(tx, id, media)?);
            write_doc(tx, id, &p.key, &p.doc)?;
            Ok((Outcome::Done, !old.is_empty()))
        }
        Op::DetachMedia { id, media, today } => {
            let mut p = open_live(tx, keys, id, *today)?;
            let before = p.doc.media.len();
            p.doc.media.retain(|m| m.id != media.as_str());
            if p.doc.media.len() == before {
                return Err(Error::NotFound);
            }
            tx.delete_media(media.as_str(), Some(id.as_str()))?;
            write_doc(tx, id, &p.key, &p.doc)?;
            Ok((Outcome::Done, true))
        }
        // The patch was checked against the poll's shape (its language, and
        // its questions as they were read) before it was queued; whether it
        // may change the questions' structure is decided here.
        Op::Patch { id, patch, today } => {
            let mut p = open_live(tx, keys, id, *today)?;
            let before = p.doc.questions.len();
            let changes = patch.restructures(&p.doc.questions);
            let relaid = if changes.is_empty() { None } else { Some(relaid_counts(tx, seen, id, &p, changes)?) };
            let mut erased = p.doc.apply(patch, *today);
            if let Some(mut state) = relaid {
                state.tallies = rows::empty_tallies(&Layout::of(&p.doc.questions));
                write_state(tx, seen, id.as_str(), &p.key, &mut state)?;
                // A question's file goes with its question. Where questions
                // were added or removed, a place no longer names the question
                // it held (the file of a removed first question would show
                // beside the next one): every question's file goes, the
                // poll's own stays. Otherwise each question keeps its place.
                let count = p.doc.questions.len();
                let moved = count != before || patch.reshaped;
                let gone: Vec<String> = p
                    .doc
                    .media
                    .iter()
                    .filter(|m| m.slot().is_some_and(|q| moved || q >= count))
                    .map(|m| m.id.clone())
                    .collect();
                for media in &gone {
                    tx.delete_media(media, Some(id.as_str()))?;
                }
                p.doc.media.retain(|m| !gone.contains(&m.id));
                erased |= !gone.is_empty();
            }
            write_doc(tx, id, &p.key, &p.doc)?;
            if let Some(days) = patch.expiry {
                // A new last day moves the lease: a shortened poll's key is
                // wrapped under an earlier day at once.
                let expires_on = today.plus_days(days.get());
                let (key_day, wrapped) = wrap(keys, &p.key, id.as_str(), expires_on, *today)?;
                tx.set_key(id.as_str(), Some(expires_on), key_day, &wrapped)?;
            }
            Ok((Outcome::Done, erased))
        }
        Op::Delete { id } => {
            let n = tx.delete_poll(id.as_str())?;
            if n == 0 {
                return Err(Error::NotFound);
            }
            seen.forget(id.as_str());
            Ok((Outcome::Done, true))
        }
        // Votes take the cheaper path of `Writer::cast`.
        Op::Cast { .. } => Err(Error::internal(anyhow!("a vote reached the savepoint path"))),
        Op::Amend { id, receipt, ballot, today } => {
            amend::amend(tx, keys, seen, id.as_str(), receipt, ballot.as_ref(), *today)?;
            Ok((Outcome::Amended, false))
        }
        Op::IssueInvites { id, hashes, today } => {
            // Before the read, as `open_state` wants (see `mix::open_image`).
            let began = std::time::Instant::now();
            let Some(found) = tx.poll(id.as_str(), Some(*today), Cols::BodyTallies)? else {
                return Err(Error::NotFound);
            };
            let key = data_key(keys, id.as_str(), found.row.key_day, &found.row.data_key)?;
            let doc = open_doc(&key, id.as_str(), found.body()?)?;
            let issued = tx.codes_issued(id.as_str())?;
            let after = issued + hashes.len() as u64;
            if after > MAX_INVITES {
                return Err(Error::Invalid(vec![FieldError::new(
                    Key::Count,
                    Problem::TooManyInvites { issued, max: MAX_INVITES },
                )]));
            }
            let mut rows = Vec::with_capacity(hashes.len());
            for (i, h) in hashes.iter().enumerate() {
                let slot = u32::try_from(issued + i as u64).map_err(|_| Error::internal(anyhow!("invite slot")))?;
                rows.push(CodeRow { mac: doc.invite_mac(h)?, slot });
            }
            tx.insert_codes(id.as_str(), &rows)?;
            // Room for the new codes' bits, so that a vote never changes the
            // counts' length.
            let mut state =
                open_state_in_tx(&key, (seen, began), id.as_str(), &Layout::of(&doc.questions), found.tallies()?)?;
            state.hold_codes(after);
            let used = state.spent_count();
            write_state(tx, seen, id.as_str(), &key, &mut state)?;
            Ok((Outcome::Invites(after, used), false))
        }
        Op::Roll { day } => keywork::roll(tx, keys, seen, *day),
    }
}

/// The counts of the live poll `p` (poll `id`), to start again in the
/// layout of a patch that changes the questions' structure (`changes`, at
/// each field it changes): only if the poll has no response, or
/// `Error::HasResponses`. Read in the change's own transaction, where no
/// ballot can come between this look and the change (the writer counts
/// its batch's votes before other writes, and on PostgreSQL the poll's row
/// is locked for the batch). The invite codes' bits and the digest stay:
/// a code stays spent when its ballot was withdrawn.
fn relaid_counts(
    tx: &mut dyn Rows,
    seen: &Seen,
    id: &PollId,
    p: &Opened,
    changes: Vec<FieldError>,
) -> Result<State, Error> {
    // Before the read, as `open_state` wants (see `mix::open_image`).
    let began = std::time::Instant::now();
    let Some(found) = tx.poll(id.as_str(), None, Cols::Tallies)? else { return Err(Error::NotFound) };
    let layout = Layout::of(&p.doc.questions);
    let state = open_state_in_tx(&p.key, (seen, began), id.as_str(), &layout, found.tallies()?)?;
    if state.tallies.total > 0 {
        return Err(Error::HasResponses(changes));
    }
    Ok(state)
}

fn check_slot(m: &NewMedia, questions: usize) -> Result<(), Error> {
    if m.slot.question().is_some_and(|q| q >= questions) {
        return Err(Error::Invalid(vec![FieldError::new(Key::Media, Problem::NoSuchQuestion)]));
    }
    Ok(())
}

/// One cleaned media item of poll `id`, its bytes padded to their bucket
/// and sealed in pieces under a key of its own: its listing for the poll's
/// document, which keeps that key, and the sealed bytes.
fn seal_media(id: &PollId, m: &NewMedia) -> Result<(DocMedia, Vec<u8>), Error> {
    let key = HexKey::generate()?;
    let plain = padded(m.clean.bytes.clone(), bucket(m.clean.bytes.len()), 0);
    let sealed =
        key.data_key().seal_pieces(&place::media(id.as_str(), m.id.as_str()), &plain).map_err(Error::internal)?;
    Ok((DocMedia::new(m, key), sealed))
}

/// Stores one cleaned media item of poll `id` ([`seal_media`]); answers
/// its listing.
fn insert_media(tx: &mut dyn Rows, id: &PollId, m: &NewMedia) -> Result<DocMedia, Error> {
    let (listed, sealed) = seal_media(id, m)?;
    tx.insert_media(m.id.as_str(), id.as_str(), &sealed)?;
    Ok(listed)
}
