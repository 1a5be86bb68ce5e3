//! The mix: a poll's ballots rewritten at new keys, in an order that is not
//! theirs, under a new data key; the same step changes or withdraws a
//! ballot, and brings a poll of format 1 to format 2 (`upgrade`).
//!
//! Why, on every engine: a new ballot is stored staged, with its poll's
//! other new ones, in the order it came; on PostgreSQL every row also
//! carries the transaction that wrote it (`xmin`) and its place (`ctid`),
//! and its log (the WAL, its archive, every standby) keeps each commit, its
//! time and its rows, for as long as anyone keeps them. A stored ballot
//! therefore tells when it came, and which code or form was spent in its
//! commit, to whoever holds the files and a key file, on any engine whose
//! files keep history. The mix ends that, the same way everywhere:
//!
//! - every ballot of the poll is deleted and written anew in one
//!   transaction (one `xmin` for all), at a new key each, in random order
//!   (or, where rows lie in key order, in the order of their random keys):
//!   nothing of where or when a row was written is left to tell them apart;
//! - under a new data key: the old one is wrapped nowhere any more, and
//!   dies with the lease it was wrapped under (`keys`, the day's key work).
//!   Every copy of what came before (a dead row, a log record, an archived
//!   segment, a standby's page, a backup) was sealed under the old key, and
//!   is noise once that lease has passed. A withdrawn ballot and a changed
//!   ballot's old answers go the same way: they are mixed with the change.
//!
//! So the window in which the files tie a ballot to when it came, or to its
//! code or form, runs from the vote to the poll's next mix, and what a copy
//! kept of it opens only until the old key's lease has passed
//! (docs/PRIVACY.md, "The window").
//!
//! When: a poll with new ballots is mixed once the writer is idle
//! ([`IDLE`]), or at the latest [`MIX_EVERY`] after its oldest new ballot
//! under steady load; but a poll's next mix waits [`COOL`] times as long as
//! its last one took, and at least [`MIN_GAP`], so that mixing one poll
//! takes at most a tenth of the writer's time, however large the poll and
//! however its votes trickle in. A change or withdrawal mixes its poll at
//! once.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;

use crate::day::Day;
use crate::domain::Ballot;
use crate::error::{Error, ReceiptRefusal};
use crate::keyring::Keyring;
use crate::secret::ReceiptHash;

use super::super::engine::Rows;
use super::super::keys::{Digest, data_key, random_key, settled_key};
use super::super::open::{check_digest, corrupt_sealed, open_doc, open_state, receipt_keys};
use super::super::rows::{self, Doc, Layout, State, Stored};
use super::super::seal::DataKey;
use super::super::seen::Seen;
use super::super::vocab::{BallotRow, Cols, PollRow, ResealedRow, place};

/// Under steady load the writer is never idle; it mixes a poll with new
/// ballots at least this often.
pub const MIX_EVERY: Duration = Duration::from_secs(10);
/// How long without a write makes the writer idle, the moment to mix.
pub(in crate::store) const IDLE: Duration = Duration::from_millis(250);
/// After a poll's mix, the next waits at least this many times as long as
/// it took: a tenth of the writer's time at most.
pub(super) const COOL: u32 = 9;
/// After a poll's mix, the next waits at least this long (a poll whose
/// votes trickle in is mixed once a second, not after each vote).
pub(super) const MIN_GAP: Duration = Duration::from_secs(1);
/// After a failed mix, the poll's next is not tried before this.
pub(super) const MIX_RETRY: Duration = Duration::from_secs(60);
/// New ballots remembered before the writer mixes whatever the time.
pub(super) const MAX_FRESH: usize = 100_000;
/// Polls whose last mix's length is remembered, at most.
const COSTS: usize = 10_000;

/// The polls with ballots stored since their last mix, and when each was
/// mixed last.
#[derive(Default)]
pub(in crate::store) struct Fresh {
    /// Each poll to mix, with when its oldest new ballot came.
    polls: BTreeMap<String, Instant>,
    /// New ballots since the polls' last mixes.
    count: usize,
    /// Each poll's last mix: when it ended, and how long it took.
    last: HashMap<String, (Instant, Duration)>,
    /// Polls whose mix failed: not tried again before this.
    retry: HashMap<String, Instant>,
    /// Whether ballots a previous run left staged are still to be looked for.
    pub(in crate::store) look_for_left: bool,
}

impl Fresh {
    /// A ballot of `poll` was stored.
    pub fn add(&mut self, poll: &str) {
        self.count += 1;
        if !self.polls.contains_key(poll) {
            self.polls.insert(poll.to_owned(), Instant::now());
        }
    }

    /// Whether any poll waits for its mix (the writer then wakes when idle).
    pub fn pending(&self) -> bool {
        !self.polls.is_empty() || self.look_for_left
    }

    /// The poll to mix now, if any: the one waiting longest among those
    /// whose mix may run (`idle`: the writer has nothing else to do; else
    /// only those overdue), and whose cooling after its last mix is over.
    pub fn next(&self, now: Instant, idle: bool) -> Option<String> {
        let overdue_all = self.count >= MAX_FRESH;
        self.polls
            .iter()
            .filter(|(_, since)| idle || overdue_all || now.saturating_duration_since(**since) >= MIX_EVERY)
            .filter(|(poll, _)| self.retry.get(*poll).is_none_or(|t| now >= *t))
            .filter(|(poll, _)| {
                self.last.get(*poll).is_none_or(|(end, took)| now >= *end + (*took * COOL).max(MIN_GAP))
            })
            .min_by_key(|(_, since)| **since)
            .map(|(poll, _)| poll.clone())
    }

    /// `poll` was mixed (or erased, or mixed by a change: `took` is then
    /// `None`): its new ballots are placed.
    pub fn mixed(&mut self, poll: &str, took: Option<Duration>) {
        if self.polls.remove(poll).is_some() && self.polls.is_empty() {
            self.count = 0;
        }
        self.retry.remove(poll);
        if let Some(took) = took {
            if self.last.len() >= COSTS {
                self.last.clear();
            }
            self.last.insert(poll.to_owned(), (Instant::now(), took));
        }
    }

    /// `poll`'s mix failed: tried again after [`MIX_RETRY`].
    pub fn failed(&mut self, poll: &str) {
        self.retry.insert(poll.to_owned(), Instant::now() + MIX_RETRY);
    }

    /// Every poll waiting for its mix, now, whatever its cooling: for a
    /// writer that stops.
    pub fn drain(&mut self) -> Vec<String> {
        self.count = 0;
        self.retry.clear();
        std::mem::take(&mut self.polls).into_keys().collect()
    }

    /// Adds the polls a previous run left with staged ballots.
    pub fn add_left(&mut self, polls: Vec<String>) {
        for poll in polls {
            self.add(&poll);
        }
    }

    #[cfg(test)]
    pub fn waiting(&self) -> Vec<String> {
        self.polls.keys().cloned().collect()
    }
}

/// A poll opened whole: its row, key, document, counts, and every ballot.
pub(in crate::store) struct Image {
    pub(in crate::store) row: PollRow,
    pub(in crate::store) key: DataKey,
    pub(in crate::store) doc: Doc,
    pub(in crate::store) layout: Layout,
    pub(in crate::store) state: State,
    /// Each ballot as stored: its key, and what it holds.
    pub(in crate::store) ballots: Vec<(Vec<u8>, Stored)>,
}

/// Opens poll `id` whole, and checks its ballot rows against the digest
/// its counts carry. `None` if the poll is gone, expired by `live_on`
/// (when given), or its key is.
pub(in crate::store) fn open_image(
    tx: &mut dyn Rows,
    keys: &Keyring,
    seen: &Seen,
    id: &str,
    live_on: Option<Day>,
) -> Result<Option<Image>, Error> {
    let Some(found) = tx.poll(id, live_on, Cols::BodyTallies)? else { return Ok(None) };
    let key = match data_key(keys, id, found.row.key_day, &found.row.data_key) {
        Ok(k) => k,
        Err(Error::NotFound) => return Ok(None),
        Err(e) => return Err(e),
    };
    let doc = open_doc(&key, id, found.body()?)?;
    let layout = Layout::of(&doc.questions);
    let state = open_state(&key, (seen, std::time::Instant::now()), id, &layout, found.tallies()?)?;
    let rows = tx.ballots(id)?;
    check_digest(id, &state, &rows)?;
    let mut ballots = Vec::with_capacity(rows.len());
    for row in rows {
        let plain = key.open(&place::ballot(id, &row.key), &row.sealed).map_err(|e| corrupt_sealed("ballot", e))?;
        ballots.push((row.key, rows::ballot_from(&doc.questions, &plain)?));
    }
    Ok(Some(Image { row: found.row, key, doc, layout, state, ballots }))
}

/// Mixes poll `id` in the transaction `tx` holds open, if it still exists
/// and lives on `today`: every ballot to a new key, under a new data key.
pub(in crate::store) fn mix(tx: &mut dyn Rows, keys: &Keyring, seen: &Seen, id: &str, today: Day) -> Result<(), Error> {
    let Some(mut image) = open_image(tx, keys, seen, id, Some(today))? else { return Ok(()) };
    write_image(tx, keys, seen, id, &mut image, today)
}

/// Replaces (`Some`) or withdraws the ballot of `id` that came with
/// `receipt`, while the poll is open and takes changes, and mixes the poll
/// with it: the counts move by exactly the old ballot's and the new one's;
/// a changed ballot keeps its day (it was cast then) and its tag; a
/// withdrawn one leaves its day's count and the total, and a day whose
/// count falls to zero goes, so that a withdrawn ballot leaves nothing
/// behind, not even the day it was cast. The old answers are left only
/// under the old data key.
pub(super) fn amend(
    tx: &mut dyn Rows,
    keys: &Keyring,
    seen: &Seen,
    id: &str,
    receipt: &ReceiptHash,
    new: Option<&Ballot>,
    today: Day,
) -> Result<(), Error> {
    let Some(mut image) = open_image(tx, keys, seen, id, Some(today))? else { return Err(Error::NotFound) };
    if image.doc.is_closed(today) {
        return Err(Error::Closed);
    }
    if !image.doc.vote_changes {
        return Err(Error::ReceiptRefused(ReceiptRefusal::ChangesOff));
    }
    let wanted = receipt_keys(&image.key, &image.doc, receipt);
    let Some(at) = image.ballots.iter().position(|(key, _)| wanted.iter().any(|w| w[..] == key[..])) else {
        return Err(Error::ReceiptRefused(ReceiptRefusal::Unknown));
    };
    let Image { layout, state, ballots, .. } = &mut image;
    let old = &mut ballots[at].1;
    match new {
        Some(ballot) => {
            rows::tally(&mut state.tallies, layout, &old.ballot, None, -1)?;
            rows::tally(&mut state.tallies, layout, ballot, None, 1)?;
            old.ballot = ballot.clone();
        }
        None => {
            rows::tally(&mut state.tallies, layout, &old.ballot, Some(old.day), -1)?;
            ballots.remove(at);
        }
    }
    write_image(tx, keys, seen, id, &mut image, today)
}

/// Writes `image` back whole under a new data key: its ballots at new keys
/// in random order, its document and counts (one version on, the digest of
/// the new rows), its key wrapped under its lease from `today`.
pub(super) fn write_image(
    tx: &mut dyn Rows,
    keys: &Keyring,
    seen: &Seen,
    id: &str,
    image: &mut Image,
    today: Day,
) -> Result<(), Error> {
    let key = DataKey::generate().map_err(Error::internal)?;
    let mut rows = Vec::with_capacity(image.ballots.len());
    let mut taken = std::collections::HashSet::with_capacity(image.ballots.len());
    for (_, stored) in &image.ballots {
        let at = match &stored.tag {
            Some(tag) => settled_key(&key, tag),
            None => random_key(false)?,
        };
        // Two ballots of one tag (one receipt) cannot be: a receipt casts
        // one ballot. A collision of random keys is as unlikely; either
        // would lose a ballot, so it fails the mix instead.
        if !taken.insert(at) {
            return Err(Error::internal(anyhow::anyhow!("two ballots would share a key")));
        }
        let plain = rows::ballot_bytes(&image.layout, stored.day, &stored.ballot, stored.tag.as_ref())?;
        let sealed = key.seal(&place::ballot(id, &at), &plain).map_err(Error::internal)?;
        rows.push(BallotRow { key: at.to_vec(), sealed });
    }
    rows.shuffle(&mut rand::rng());
    image.state.digest = Digest::of(rows.iter().map(|r| (r.key.as_slice(), r.sealed.as_slice())));
    image.state.version += 1;
    let (key_day, wrapped) = super::ops::wrap(keys, &key, id, image.row.expires_on, today)?;
    let body = key.seal(&place::body(id), &image.doc.to_bytes()?).map_err(Error::internal)?;
    let tallies = key.seal(&place::tallies(id), &rows::state_bytes(&image.state)?).map_err(Error::internal)?;
    tx.replace_ballots(id, rows)?;
    tx.reseal_poll(id, &ResealedRow { key_day, data_key: &wrapped, body: &body, tallies: &tallies })?;
    seen.stage(id, image.state.version);
    image.key = key;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poll_is_mixed_when_idle_or_overdue_and_cools_after_its_mix() {
        let mut f = Fresh::default();
        let t0 = Instant::now();
        assert_eq!(f.next(t0, true), None);
        f.add("a");
        assert_eq!(f.next(t0, false), None, "not overdue under load");
        assert_eq!(f.next(t0, true), Some("a".into()), "idle");
        assert_eq!(f.next(Instant::now() + MIX_EVERY, false), Some("a".into()), "overdue");
        f.mixed("a", Some(Duration::from_secs(1)));
        assert!(!f.pending());
        f.add("a");
        let now = Instant::now();
        assert_eq!(f.next(now + Duration::from_secs(8), true), None, "cooling: nine times its last mix");
        assert_eq!(f.next(now + Duration::from_secs(10), true), Some("a".into()));
        f.mixed("a", Some(Duration::from_millis(1)));
        f.add("a");
        let now = Instant::now();
        assert_eq!(f.next(now + Duration::from_millis(500), true), None, "a second at least");
        assert_eq!(f.next(now + MIN_GAP, true), Some("a".into()));
        f.failed("a");
        assert_eq!(f.next(now + Duration::from_secs(5), true), None, "a failed mix waits");
        assert_eq!(f.next(now + MIX_RETRY + Duration::from_secs(1), true), Some("a".into()));
        // The one waiting longest goes first.
        let mut g = Fresh::default();
        g.add("late");
        std::thread::sleep(Duration::from_millis(2));
        g.add("later");
        g.mixed("late", None);
        g.add("late");
        assert_eq!(g.next(Instant::now(), true), Some("later".into()));
    }
}
