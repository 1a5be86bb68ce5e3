//! The day's key work for one day: erase what expired, re-wrap every other
//! poll's data key under its lease from that day, and note the day in the
//! database; the writer then moves the key state on (`Writer::advance_keys`),
//! after which no key of an earlier day exists.
//!
//! Promise: one poll never stops it. A row that cannot be read (a wrapped
//! key that does not open: a flipped bit, a row restored from another
//! installation; a day that does not parse, or lies where no lease can)
//! is set aside: named on stderr and in the outcome (and by `pollctl
//! check`), left as it is, and the work goes on for every other poll.
//! The key state still moves on; once it has passed such a row's key day,
//! nothing could open it anyway, and the day's work after erases it (a row
//! whose days do not parse stays set aside, named each day, until someone
//! deletes it: nothing can tell when it expires).
//!
//! The same pass drops what format 1 left in a poll that no longer needs
//! it: a poll whose ballots still carry their keys of format 1
//! (`rows::Tag::FormatOne`) is mixed without them once it takes no
//! receipts (closed, or changes turned off).

use crate::day::Day;
use crate::error::Error;
use crate::keyring::{Keyring, MAX_LEASE_DAYS};

use super::super::engine::{Rows, in_savepoint};
use super::super::keys::data_key;
use super::super::open::open_doc;
use super::super::seen::Seen;
use super::super::vocab::{Cols, LeaseRow};
use super::{Outcome, Rolled, mix, ops};

/// The day's key work for `day`. The outcome names the polls set aside.
pub(super) fn roll(tx: &mut dyn Rows, keys: &Keyring, seen: &Seen, day: Day) -> Result<(Outcome, bool), Error> {
    let mut done = Rolled { erased: tx.delete_expired(day)?, ..Rolled::default() };
    for lease in tx.leases()? {
        if lease.old_tags && drop_old_tags(tx, keys, seen, &lease.id, day) {
            done.rewrapped += 1;
            continue;
        }
        match rewrap(tx, keys, day, &lease)? {
            Ok(Step::Kept) => {}
            Ok(Step::Rewrapped) => done.rewrapped += 1,
            Ok(Step::Gone) => done.erased += tx.delete_poll(&lease.id)?,
            Err(why) => {
                eprintln!(
                    "anonpoll: poll {} set aside by the day's key work ({why}); the key state moves on without \
                     it, and it is erased once nothing could open it (docs/OPERATIONS.md, \"A poll set aside\")",
                    lease.id
                );
                done.set_aside.push(lease.id);
            }
        }
    }
    // Noted before the key file moves (after the commit): at most a day
    // past the file's own, so that a file that could not move, day after
    // day, is never taken for an old copy of itself (`binding`); the day
    // itself once the file has moved (`Writer::advance_keys`).
    tx.note_key_day(day.min(keys.day().plus_days(1)))?;
    // Re-wrapped keys replace old ones in place: the log is truncated after.
    Ok((Outcome::Rolled(done), true))
}

/// Mixes poll `id` without its tags of format 1 if it takes no receipts
/// any more; whether it did. A failure (named on stderr) leaves the poll
/// as it was, for the next day, and the key work goes on.
fn drop_old_tags(tx: &mut dyn Rows, keys: &Keyring, seen: &Seen, id: &str, day: Day) -> bool {
    let mark = seen.staged_mark();
    let mixed = in_savepoint(tx, |tx| {
        let Some(found) = tx.poll(id, Some(day), Cols::Body)? else { return Ok(false) };
        let key = data_key(keys, id, found.row.key_day, &found.row.data_key)?;
        let doc = open_doc(&key, id, found.body()?)?;
        if doc.vote_changes && !doc.is_closed(day) {
            return Ok(false);
        }
        mix::mix_whole(tx, keys, seen, id, day)?;
        Ok(true)
    });
    mixed.unwrap_or_else(|e| {
        seen.rolled_back_to(mark);
        eprintln!("anonpoll: poll {id} could not be mixed without its keys of format 1 (tried again tomorrow): {e}");
        false
    })
}

enum Step {
    Kept,
    Rewrapped,
    /// Leased until a day whose key is gone: nobody can read it.
    Gone,
}

/// One poll's part of the day's work: `Err` if the database failed (the
/// whole work fails then), `Ok(Err)` with why the poll is set aside.
fn rewrap(tx: &mut dyn Rows, keys: &Keyring, day: Day, lease: &LeaseRow) -> Result<Result<Step, String>, Error> {
    let parsed = Day::parse(&lease.expires_on).zip(Day::parse(&lease.key_day));
    let Some((expires_on, key_day)) = parsed else { return Ok(Err("a day of its row does not parse".into())) };
    // No lease reaches past a poll's last day, nor further than the
    // longest lease from today: a key day beyond both was not written by
    // anonpoll (and deriving its key would take a step per day).
    let furthest = std::cmp::max(expires_on, day.plus_days(MAX_LEASE_DAYS));
    if key_day > furthest {
        return Ok(Err(format!("its key day {key_day} lies beyond any lease")));
    }
    let key = match data_key(keys, &lease.id, key_day, &lease.data_key) {
        Ok(k) => k,
        Err(Error::NotFound) => return Ok(Ok(Step::Gone)),
        Err(e) => return Ok(Err(format!("its data key does not open: {e}"))),
    };
    let target = keys.lease_day(expires_on.previous(), day);
    if target == key_day {
        return Ok(Ok(Step::Kept));
    }
    let (key_day, wrapped) = ops::wrap(keys, &key, &lease.id, expires_on, day)?;
    tx.set_key(&lease.id, None, key_day, &wrapped)?;
    Ok(Ok(Step::Rewrapped))
}
