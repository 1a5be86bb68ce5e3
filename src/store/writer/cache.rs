//! The writer's memory of the polls it counts: what a vote needs of its
//! poll (open, invite-only, expiry, the layout of its ballots, the key of
//! its invite codes' hashes), the poll's data key and its counts, opened
//! once and kept between batches. Counts changed by a batch's votes are
//! sealed and written once per poll before the batch commits
//! ([`PollCache::flush`]).
//!
//! Bounded: past [`CACHE_POLLS`] polls it starts over (after a flush, so
//! nothing counted is lost). Keys are zeroized as entries drop.

use std::collections::HashMap;

use anyhow::anyhow;

use crate::day::Day;
use crate::domain::settings::deadline_passed;
use crate::domain::{Ballot, DuplicateCheck};
use crate::error::Error;
use crate::keyring::Keyring;
use crate::secret::{InviteHash, PollId};

use super::super::engine::Rows;
use super::super::keys::data_key;
use super::super::open::{open_doc, open_state_in_tx};
use super::super::rows::{self, Layout, State};
use super::super::seal::{DataKey, MacKey};
use super::super::seen::Seen;
use super::super::vocab::{Cols, place};

/// What a vote needs to know of its poll.
pub(in crate::store) struct PollState {
    pub expires_on: Day,
    pub key: DataKey,
    closed: bool,
    closes_on: Option<Day>,
    /// `duplicateCheck: invite`: a vote must bring an unused code.
    pub invite_only: bool,
    invite_key: Option<MacKey>,
    pub layout: Layout,
    /// How many times its questions changed structure (a vote read
    /// against another structure is refused).
    pub restructured: u32,
    pub state: State,
    /// Counted since the last flush.
    dirty: bool,
}

impl PollState {
    pub fn is_closed(&self, today: Day) -> bool {
        self.closed || deadline_passed(self.closes_on, today)
    }

    /// The stored hash of invite code `code`.
    pub fn invite_mac(&self, code: &InviteHash) -> Result<[u8; 32], Error> {
        let key = self.invite_key.as_ref().ok_or_else(|| Error::internal(anyhow!("a poll without an invite key")))?;
        Ok(key.mac(&[&code.0]))
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

    /// Forgets one poll (given a new data key, or erased). Callers flush
    /// first.
    pub fn forget(&mut self, id: &str) {
        self.polls.remove(id);
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
    pub fn get(
        &mut self,
        tx: &mut dyn Rows,
        keys: &Keyring,
        seen: &Seen,
        id: &PollId,
    ) -> Result<Option<&mut PollState>, Error> {
        if !self.polls.contains_key(id.as_str()) {
            // An unknown poll is not remembered: votes for it are rare (the
            // page handler looked the poll up first).
            let Some(state) = load(tx, keys, seen, id)? else { return Ok(None) };
            if self.polls.len() >= CACHE_POLLS {
                // Nothing is dirty here between batches; within one, the
                // flush below keeps every count.
                self.flush(tx, seen)?;
                self.clear();
            }
            self.polls.insert(id.as_str().to_owned(), state);
        }
        Ok(self.polls.get_mut(id.as_str()))
    }

    /// Adds `by` (1, or -1 to take it back) for `ballot` cast on `day`, stored
    /// at `key` as `sealed`, to the counts of poll `id`, which
    /// [`PollCache::get`] loaded.
    pub fn count(
        &mut self,
        id: &PollId,
        (ballot, day): (&Ballot, Day),
        (key, sealed): (&[u8], &[u8]),
        by: i64,
    ) -> Result<(), Error> {
        let state =
            self.polls.get_mut(id.as_str()).ok_or_else(|| Error::internal(anyhow!("counted an unknown poll")))?;
        rows::tally(&mut state.state.tallies, &state.layout, ballot, Some(day), by)?;
        state.state.digest.count(key, sealed, by > 0);
        state.dirty = true;
        Ok(())
    }

    /// Seals and writes the counts of every poll counted since the last
    /// flush: one statement per poll.
    pub fn flush(&mut self, tx: &mut dyn Rows, seen: &Seen) -> Result<(), Error> {
        for (id, state) in self.polls.iter_mut().filter(|(_, s)| s.dirty) {
            write_state(tx, seen, id, &state.key, &mut state.state)?;
            state.dirty = false;
        }
        Ok(())
    }
}

/// Writes `state` as poll `id`'s counts, one version on, sealed under `key`.
pub(in crate::store) fn write_state(
    tx: &mut dyn Rows,
    seen: &Seen,
    id: &str,
    key: &DataKey,
    state: &mut State,
) -> Result<(), Error> {
    state.version += 1;
    let sealed = key.seal(&place::tallies(id), &rows::state_bytes(state)?).map_err(Error::internal)?;
    tx.set_tallies(id, &sealed)?;
    seen.stage(id, state.version);
    Ok(())
}

fn load(tx: &mut dyn Rows, keys: &Keyring, seen: &Seen, id: &PollId) -> Result<Option<PollState>, Error> {
    // Before the read, as `open_state` wants (see `mix::open_image`).
    let began = std::time::Instant::now();
    let Some(found) = tx.poll(id.as_str(), None, Cols::BodyTallies)? else { return Ok(None) };
    let key = match data_key(keys, id.as_str(), found.row.key_day, &found.row.data_key) {
        Ok(k) => k,
        // Its key is gone: the poll is erased, whatever its row says.
        Err(Error::NotFound) => return Ok(None),
        Err(e) => return Err(e),
    };
    let doc = open_doc(&key, id.as_str(), found.body()?)?;
    let layout = Layout::of(&doc.questions);
    let state = open_state_in_tx(&key, (seen, began), id.as_str(), &layout, found.tallies()?)?;
    Ok(Some(PollState {
        expires_on: found.row.expires_on,
        key,
        closed: doc.closed,
        closes_on: doc.closes_on,
        invite_only: doc.duplicate_check == DuplicateCheck::Invite,
        invite_key: doc.invite_key.as_ref().map(|k| k.mac_key()),
        layout,
        restructured: doc.restructured,
        state,
        dirty: false,
    }))
}
