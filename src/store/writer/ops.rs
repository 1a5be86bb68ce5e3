//! Every write but a vote, each applied in its own savepoint of a batch:
//! creating a poll, changing it, its media and invite codes, a voter's
//! change or withdrawal, erasing it, and the day's key work.
//!
//! Each opens what it needs of the poll (its data key through the keyring,
//! its document), changes it, and seals it again under the same data key;
//! a poll's key is wrapped under the day of its lease
//! ([`Keyring::lease_day`]), and re-wrapped when its expiry moves.

use anyhow::anyhow;

use crate::day::Day;
use crate::domain::{Ballot, FieldError, Key, NewMedia, Problem};
use crate::error::{Error, ReceiptRefusal};
use crate::keyring::Keyring;
use crate::secret::{InviteHash, PollId, ReceiptHash};

use super::super::engine::{Cols, NewRow, Rows};
use super::super::reader::{open_doc, open_tallies};
use super::super::rows::{self, Doc, DocMedia, Layout};
use super::super::seal::{DataKey, bucket, padded};
use super::super::{data_key, place, receipt_row};
use super::cache::write_tallies;
use super::{Op, Outcome};

/// The most invite codes one poll may have.
pub const MAX_INVITES: u64 = 10_000;

/// A live poll opened for a change: its row, key and document.
struct Opened {
    key: DataKey,
    doc: Doc,
}

fn open_live(tx: &mut dyn Rows, keys: &Keyring, id: &PollId, today: Day) -> Result<Opened, Error> {
    let Some((row, blobs)) = tx.poll(id.as_str(), Some(today), Cols::Body)? else { return Err(Error::NotFound) };
    let key = row.key(keys, id.as_str())?;
    let doc = open_doc(&key, id.as_str(), &blobs[0])?;
    Ok(Opened { key, doc })
}

fn write_doc(tx: &mut dyn Rows, id: &PollId, key: &DataKey, doc: &Doc) -> Result<(), Error> {
    let sealed = key.seal(&place::body(id.as_str()), &doc.to_bytes()?).map_err(Error::internal)?;
    tx.set_body(id.as_str(), &sealed)
}

/// `key` wrapped for poll `id` under the lease of a poll alive until
/// `expires_on`, from `today`: the day chosen and the wrapped key.
fn wrap(keys: &Keyring, key: &DataKey, id: &str, expires_on: Day, today: Day) -> Result<(Day, Vec<u8>), Error> {
    let day = keys.lease_day(expires_on.previous(), today);
    let wrap = keys.wrap_key(day).ok_or_else(|| Error::internal(anyhow!("no key for the lease day {day}")))?;
    Ok((day, key.wrap(&wrap, &keys.ring(), id, day).map_err(Error::internal)?))
}

/// Applies one write. Returns its outcome and whether it erased data.
pub(super) fn apply(tx: &mut dyn Rows, keys: &Keyring, op: &Op) -> Result<(Outcome, bool), Error> {
    match op {
        Op::Create { id, token, poll, media, today } => {
            let key = DataKey::generate().map_err(Error::internal)?;
            let expires_on = today.plus_days(poll.expiry.get());
            let (key_day, wrapped) = wrap(keys, &key, id.as_str(), expires_on, *today)?;
            for m in media {
                check_slot(m, poll.questions.len())?;
            }
            let doc = Doc::new(token, poll, media);
            let body = key.seal(&place::body(id.as_str()), &doc.to_bytes()?).map_err(Error::internal)?;
            let tallies = rows::empty_tallies(&Layout::of(&poll.questions));
            let tallies =
                key.seal(&place::tallies(id.as_str()), &rows::tallies_bytes(&tallies)?).map_err(Error::internal)?;
            tx.insert_poll(&NewRow {
                id: id.as_str(),
                created_on: *today,
                expires_on,
                key_day,
                data_key: &wrapped,
                body: &body,
                tallies: &tallies,
            })?;
            for m in media {
                insert_media(tx, id, &key, m)?;
            }
            Ok((Outcome::Done, false))
        }
        Op::AttachMedia { id, media, today } => {
            let mut p = open_live(tx, keys, id, *today)?;
            check_slot(media, p.doc.questions.len())?;
            // The slot's old item, if any, is erased (secure_delete, then the
            // WAL checkpoint the `true` below asks for).
            let slot = media.slot.question();
            let old: Vec<String> = p.doc.media.iter().filter(|m| m.slot() == slot).map(|m| m.id.clone()).collect();
            for old_id in &old {
                tx.delete_media(old_id, None)?;
            }
            p.doc.media.retain(|m| m.slot() != slot);
            p.doc.media.push(DocMedia::new(media));
            insert_media(tx, id, &p.key, media)?;
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
        // The patch was checked against the poll's shape (language and
        // questions, which never change) before it was queued.
        Op::Patch { id, patch, today } => {
            let mut p = open_live(tx, keys, id, *today)?;
            let erased = p.doc.apply(patch, *today);
            write_doc(tx, id, &p.key, &p.doc)?;
            if let Some(days) = patch.expiry {
                // A new last day moves the lease: a shortened poll's key is
                // wrapped under an earlier day at once.
                let expires_on = today.plus_days(days.get());
                let (key_day, wrapped) = wrap(keys, &p.key, id.as_str(), expires_on, *today)?;
                tx.set_lease(id.as_str(), Some(expires_on), key_day, &wrapped)?;
            }
            Ok((Outcome::Done, erased))
        }
        Op::Delete { id } => {
            let n = tx.delete_poll(id.as_str())?;
            if n == 0 {
                return Err(Error::NotFound);
            }
            Ok((Outcome::Done, true))
        }
        // Votes take the cheaper path of `Writer::cast`.
        Op::Cast { .. } => Err(Error::internal(anyhow!("a vote reached the savepoint path"))),
        Op::Amend { id, receipt, ballot, today } => amend(tx, keys, id, receipt, ballot.as_ref(), *today),
        Op::IssueInvites { id, hashes, today } => {
            let p = open_live(tx, keys, id, *today)?;
            let (issued, _) = tx.invite_counts(id.as_str())?;
            let after = issued + hashes.len() as u64;
            if after > MAX_INVITES {
                return Err(Error::Invalid(vec![FieldError::new(
                    Key::Count,
                    Problem::TooManyInvites { issued, max: MAX_INVITES },
                )]));
            }
            for h in hashes {
                tx.insert_invite(id.as_str(), &invite_mac(&p.key, h))?;
            }
            let (issued, used) = tx.invite_counts(id.as_str())?;
            Ok((Outcome::Invites(issued, used), false))
        }
        Op::Roll { day } => roll(tx, keys, *day),
    }
}

/// How an invite code's hash is stored: keyed under its poll's key, so a
/// copy of the database cannot be checked against a code someone kept.
pub(in crate::store) fn invite_mac(key: &DataKey, code: &InviteHash) -> [u8; 32] {
    key.mac(b"invite", &[&code.0])
}

fn check_slot(m: &NewMedia, questions: usize) -> Result<(), Error> {
    if m.slot.question().is_some_and(|q| q >= questions) {
        return Err(Error::Invalid(vec![FieldError::new(Key::Media, Problem::NoSuchQuestion)]));
    }
    Ok(())
}

/// Stores one cleaned media item of poll `id`: its bytes padded to their
/// bucket and sealed in pieces (its listing is in the poll's document).
fn insert_media(tx: &mut dyn Rows, id: &PollId, key: &DataKey, m: &NewMedia) -> Result<(), Error> {
    let plain = padded(m.clean.bytes.clone(), bucket(m.clean.bytes.len()), 0);
    let sealed = key.seal_pieces(&place::media(id.as_str(), m.id.as_str()), &plain).map_err(Error::internal)?;
    tx.insert_media(m.id.as_str(), id.as_str(), &sealed)
}

/// Replaces (`new` is `Some`) or withdraws the ballot of `id` that came with
/// `receipt`, while the poll is open and takes changes. The counts move
/// by exactly the old ballot's and the new one's; a changed ballot keeps its
/// day (it was cast then) and its length (every ballot of a poll has one),
/// so it is rewritten in place; a withdrawn one leaves its day's count and
/// the total, and a day whose count falls to zero goes, so that a withdrawn
/// ballot leaves nothing behind, not even the day it was cast. The old
/// answers are truncated out of the WAL soon after ([`Outcome::Amended`]).
fn amend(
    tx: &mut dyn Rows,
    keys: &Keyring,
    id: &PollId,
    receipt: &ReceiptHash,
    new: Option<&Ballot>,
    today: Day,
) -> Result<(Outcome, bool), Error> {
    let Some((row, blobs)) = tx.poll(id.as_str(), Some(today), Cols::BodyTallies)? else {
        return Err(Error::NotFound);
    };
    let key = row.key(keys, id.as_str())?;
    let doc = open_doc(&key, id.as_str(), &blobs[0])?;
    if doc.is_closed(today) {
        return Err(Error::Closed);
    }
    if !doc.vote_changes {
        return Err(Error::ReceiptRefused(ReceiptRefusal::ChangesOff));
    }
    let Some(found) = receipt_row(tx, id.as_str(), &key, &doc, receipt)? else {
        return Err(Error::ReceiptRefused(ReceiptRefusal::Unknown));
    };
    let layout = Layout::of(&doc.questions);
    let mut tallies = open_tallies(&key, id.as_str(), &layout, &blobs[1])?;
    match new {
        Some(ballot) => {
            rows::tally(&mut tallies, &layout, &found.ballot, None, -1)?;
            rows::tally(&mut tallies, &layout, ballot, None, 1)?;
            let plain = rows::ballot_bytes(&layout, found.day, ballot)?;
            let sealed = key.seal(&place::ballot(id.as_str(), &found.key), &plain).map_err(Error::internal)?;
            tx.update_ballot(id.as_str(), &found.key, &sealed)?;
        }
        None => {
            rows::tally(&mut tallies, &layout, &found.ballot, Some(found.day), -1)?;
            tx.delete_ballot(id.as_str(), &found.key)?;
        }
    }
    write_tallies(tx, id.as_str(), &key, &tallies)?;
    Ok((Outcome::Amended, false))
}

/// The day's key work for `day`: erases every poll that has expired by
/// then, and every poll whose key is gone already (unreadable in any case);
/// re-wraps each other poll's data key under its lease from `day`. The
/// writer moves the key state to `day` once this is committed: only then
/// can no stored key need an earlier day.
fn roll(tx: &mut dyn Rows, keys: &Keyring, day: Day) -> Result<(Outcome, bool), Error> {
    let mut erased = tx.delete_expired(day)?;
    let mut rewrapped = 0;
    for (id, expires_on, key_day, wrapped) in tx.leases()? {
        let key = match data_key(keys, &id, key_day, &wrapped) {
            Ok(k) => k,
            Err(Error::NotFound) => {
                // Leased until a day whose key is gone: nobody can read it.
                erased += tx.delete_poll(&id)?;
                continue;
            }
            Err(e) => return Err(e),
        };
        let target = keys.lease_day(expires_on.previous(), day);
        if target != key_day {
            let (key_day, wrapped) = wrap(keys, &key, &id, expires_on, day)?;
            tx.set_lease(&id, None, key_day, &wrapped)?;
            rewrapped += 1;
        }
    }
    // Re-wrapped keys replace old ones in place: the WAL is truncated after.
    Ok((Outcome::Rolled { erased, rewrapped }, true))
}
