//! The writer's memory of the polls it counts: what a vote needs of its
//! poll (open, invite-only, expiry, the layout of its ballots), the poll's
//! data key and its counts, opened once and kept between batches. Counts
//! changed by a batch's votes are sealed and written once per poll before
//! the batch commits ([`PollCache::flush`]).
//!
//! Bounded: past [`CACHE_POLLS`] polls it starts over (after a flush, so
//! nothing counted is lost). Keys are zeroized as entries drop.

use std::collections::HashMap;

use anyhow::anyhow;

use crate::day::Day;
use crate::domain::settings::deadline_passed;
use crate::domain::{Ballot, DuplicateCheck, Tallies};
use crate::error::Error;
use crate::keyring::Keyring;
use crate::secret::PollId;

use super::super::engine::{Cols, Rows};
use super::super::reader::{open_doc, open_tallies};
use super::super::rows::{self, Layout};
use super::super::seal::DataKey;
use super::super::{data_key, place};

/// What a vote needs to know of its poll.
pub(in crate::store) struct PollState {
    pub expires_on: Day,
    pub key: DataKey,
    closed: bool,
    closes_on: Option<Day>,
    /// `duplicateCheck: invite`: a vote must bring an unused code.
    pub invite_only: bool,
    pub layout: Layout,
    tallies: Tallies,
    /// Counted since the last flush.
    dirty: bool,
}

impl PollState {
    pub fn is_closed(&self, today: Day) -> bool {
        self.closed || deadline_passed(self.closes_on, today)
    }
}

/// The writer's memory of polls between batches (see the writer's docs for
/// when it is dropped).
#[derive(Default)]
pub(in crate::store) struct PollCache {
    polls: HashMap<String, PollState>,
    data_version: Option<i64>,
}

/// Most polls the writer remembers.
pub(in crate::store) const CACHE_POLLS: usize = 2_000;

impl PollCache {
    /// Forgets everything. Counted-but-unflushed counts are lost: callers
    /// flush first, or clear because the transaction was rolled back.
    pub fn clear(&mut self) {
        self.polls.clear();
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.polls.len()
    }

    /// Drops everything if the database changed under another connection.
    pub fn check_version(&mut self, version: i64) {
        if self.data_version != Some(version) {
            self.clear();
            self.data_version = Some(version);
        }
    }

    /// The poll `id` (expired or not), if it exists and its key does.
    pub fn get(&mut self, tx: &mut dyn Rows, keys: &Keyring, id: &PollId) -> Result<Option<&PollState>, Error> {
        if !self.polls.contains_key(id.as_str()) {
            // An unknown poll is not remembered: votes for it are rare (the
            // page handler looked the poll up first).
            let Some(state) = load(tx, keys, id)? else { return Ok(None) };
            if self.polls.len() >= CACHE_POLLS {
                // Nothing is dirty here between batches; within one, the
                // flush below keeps every count.
                self.flush(tx)?;
                self.clear();
            }
            self.polls.insert(id.as_str().to_owned(), state);
        }
        Ok(self.polls.get(id.as_str()))
    }

    /// Adds `by` (1, or -1 to take it back) for `ballot` cast on `day` to
    /// the counts of poll `id`, which [`PollCache::get`] loaded.
    pub fn count(&mut self, id: &PollId, ballot: &Ballot, day: Day, by: i64) -> Result<(), Error> {
        let state =
            self.polls.get_mut(id.as_str()).ok_or_else(|| Error::internal(anyhow!("counted an unknown poll")))?;
        rows::tally(&mut state.tallies, &state.layout, ballot, Some(day), by)?;
        state.dirty = true;
        Ok(())
    }

    /// Seals and writes the counts of every poll counted since the last
    /// flush: one statement per poll.
    pub fn flush(&mut self, tx: &mut dyn Rows) -> Result<(), Error> {
        for (id, state) in self.polls.iter_mut().filter(|(_, s)| s.dirty) {
            write_tallies(tx, id, &state.key, &state.tallies)?;
            state.dirty = false;
        }
        Ok(())
    }
}

/// Seals `tallies` and stores them as poll `id`'s counts.
pub(in crate::store) fn write_tallies(
    tx: &mut dyn Rows,
    id: &str,
    key: &DataKey,
    tallies: &Tallies,
) -> Result<(), Error> {
    let sealed = key.seal(&place::tallies(id), &rows::tallies_bytes(tallies)?).map_err(Error::internal)?;
    tx.set_tallies(id, &sealed)
}

fn load(tx: &mut dyn Rows, keys: &Keyring, id: &PollId) -> Result<Option<PollState>, Error> {
    let Some((row, blobs)) = tx.poll(id.as_str(), None, Cols::BodyTallies)? else { return Ok(None) };
    let key = match data_key(keys, id.as_str(), row.key_day, &row.data_key) {
        Ok(k) => k,
        // Its key is gone: the poll is erased, whatever its row says.
        Err(Error::NotFound) => return Ok(None),
        Err(e) => return Err(e),
    };
    let [body, tallies] = <[Vec<u8>; 2]>::try_from(blobs).map_err(|_| super::super::corrupt("poll row"))?;
    let doc = open_doc(&key, id.as_str(), &body)?;
    let layout = Layout::of(&doc.questions);
    let tallies = open_tallies(&key, id.as_str(), &layout, &tallies)?;
    Ok(Some(PollState {
        expires_on: row.expires_on,
        key,
        closed: doc.closed,
        closes_on: doc.closes_on,
        invite_only: doc.duplicate_check == DuplicateCheck::Invite,
        layout,
        tallies,
        dirty: false,
    }))
}
