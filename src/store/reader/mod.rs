//! Read connections: one per worker thread, engine-neutral above the
//! [`ReadConn`] seam. On SQLite a reader sees the last committed state and
//! never waits on the writer (WAL); on PostgreSQL it borrows a connection
//! of the node's pool for each read. Every value a reader returns was
//! opened from its sealed form here, with the poll's data key unwrapped
//! through the keyring (or remembered from an earlier unwrap: [`KeyMemo`]).
//!
//! Promises:
//! - an expired poll, or one whose key is gone, reads as no poll;
//! - counts older than a version this process has read or written fail
//!   the read (`Seen`): a sealed value put back at its place is noticed;
//! - reads of a poll's whole ballot set (the export, a recount) check it
//!   against the digest its counts carry: a ballot row deleted, added or
//!   put back fails them;
//! - no data key outlives what it opens here: a remembered key goes from
//!   the memo as the writer erases its poll or gives it a new data key,
//!   every one after the day's key work, whether or not this reader reads
//!   again, and each after [`MEMO_TTL`] (within [`MEMO_SWEEP`] more on
//!   polld, whose janitor expires them) in any case; a read that is using
//!   one keeps it until it ends.

mod media;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::day::Day;
use crate::domain::{Ballot, Poll, Tallies};
use crate::error::Error;
use crate::keyring::Keyring;
use crate::secret::{PollId, ReceiptHash};

use super::engine::{ReadConn, Rows};
use super::keys::data_key;
use super::open::{BallotKeys, check_digest, open_doc, open_groups, open_state};
use super::rows::{Layout, State};
use super::seal::DataKey;
use super::seen::{Seen, lock};
use super::vocab::{BallotRow, Cols, PollRow, corrupt};

pub use media::{MediaBlob, STREAM_MMAP};

pub struct Reader {
    conn: Box<dyn ReadConn>,
    keys: Arc<Keyring>,
    seen: Arc<Seen>,
    /// Shared with `seen`, through which the writer and polld's janitor
    /// take keys out of it.
    memo: Arc<Mutex<KeyMemo>>,
    /// The sealed counts read with the last poll this reader read, for the
    /// [`Reader::tallies_as_read`] that usually follows (a results page): one
    /// statement instead of two, and counts from the same snapshot as the
    /// poll. Taken by that call, replaced by the next read, and not used
    /// once older than [`KEPT_TALLIES`].
    last_tallies: Option<(String, PollRow, Vec<u8>, Began)>,
}

/// When a read began: the instant, for `Seen::check` (the counts kept in
/// `last_tallies` are checked as of then), and how many keys `Seen` had
/// forgotten, for `Seen::remember`. Both are taken before the read's
/// first statement.
#[derive(Clone, Copy)]
struct Began {
    at: Instant,
    forgets: u64,
}

/// Data keys this reader unwrapped, by poll, with the wrapped key and day
/// they came from. A poll is read again and again (its share page, its
/// JSON, its results), and unwrapping its key was a tenth of a poll read's
/// instructions (docs/PERFORMANCE.md).
///
/// An entry serves only while the row holds the same wrapped key under the
/// same day and the keyring still has that day's wrap key, and for
/// [`MEMO_TTL`] at most. It is registered with the store's `Seen`, so that
/// entries go without waiting for this reader's next read (a worker thread
/// may serve nothing for hours): the writer removes a poll's as it commits
/// its erasure or its new data key (`Seen::forget_key`: a mix, a deletion;
/// tests `a_reader_forgets_the_key_of_a_mixed_or_deleted_poll_only`,
/// `seen::tests::a_forgotten_key_leaves_every_memo_at_once`), every one
/// after the day's key work (`Seen::forget_keys`), and polld's janitor
/// drops each older than [`MEMO_TTL`] every [`MEMO_SWEEP`]
/// (`Store::expire_key_memos`; `remembered_keys_expire_at_the_janitors_call_without_a_read`).
/// A key unwrapped by a read that began before such a forget serves that
/// read and is not remembered (`Seen::remember`;
/// `a_key_unwrapped_across_a_forget_is_not_remembered`).
///
/// Keys are held as `Arc`s: a read clones one out and uses it without the
/// lock, so the lock is held for a map lookup only, and a key removed
/// meanwhile lives until that read ends. Bounded by [`MEMO_POLLS`]; keys
/// are zeroized as their last reference drops (`DataKey`).
#[derive(Default)]
pub(super) struct KeyMemo {
    keys: HashMap<String, Remembered>,
}

/// One remembered key, with the wrapped key and day it came from and when
/// it was unwrapped.
struct Remembered {
    day: Day,
    wrapped: Vec<u8>,
    key: Arc<DataKey>,
    at: Instant,
}

impl KeyMemo {
    /// Poll `id`'s key if it was unwrapped from `row`'s wrapped key and day
    /// less than [`MEMO_TTL`] before `now`.
    fn get(&self, id: &str, row: &PollRow, now: Instant) -> Option<Arc<DataKey>> {
        self.keys
            .get(id)
            .filter(|r| {
                r.day == row.key_day && r.wrapped == row.data_key && now.saturating_duration_since(r.at) < MEMO_TTL
            })
            .map(|r| r.key.clone())
    }

    /// Remembers poll `id`'s `key`, unwrapped from `row` at `at`; past
    /// [`MEMO_POLLS`] the memo starts over.
    fn insert(&mut self, id: &str, row: &PollRow, key: Arc<DataKey>, at: Instant) {
        if self.keys.len() >= MEMO_POLLS && !self.keys.contains_key(id) {
            self.keys.clear();
        }
        self.keys.insert(id.to_owned(), Remembered { day: row.key_day, wrapped: row.data_key.clone(), key, at });
    }

    /// Drops poll `id`'s key.
    pub(super) fn forget(&mut self, id: &str) {
        self.keys.remove(id);
    }

    /// Drops every key.
    pub(super) fn clear(&mut self) {
        self.keys.clear();
    }

    /// Drops each key remembered for [`MEMO_TTL`] or longer as of `now`.
    pub(super) fn expire(&mut self, now: Instant) {
        self.keys.retain(|_, r| now.saturating_duration_since(r.at) < MEMO_TTL);
    }

    /// The polls whose key is remembered, in id order.
    #[cfg(test)]
    pub(super) fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.keys.keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Remembers a fresh random key for poll `id`, as unwrapped at `at`.
    #[cfg(test)]
    pub(super) fn insert_for_tests(&mut self, id: &str, at: Instant) {
        let key = Arc::new(DataKey::generate().unwrap_or_else(|e| panic!("a random key: {e}")));
        let today = Day::today();
        let row = PollRow { created_on: today, expires_on: today, key_day: today, data_key: vec![1; 8] };
        self.insert(id, &row, key, at);
    }
}

/// How long the counts read with a poll serve a following
/// [`Reader::tallies_as_read`].
const KEPT_TALLIES: Duration = Duration::from_secs(1);

/// Most data keys one reader remembers; past it the memo starts over.
const MEMO_POLLS: usize = 256;

/// How long a remembered data key serves at most.
pub const MEMO_TTL: Duration = Duration::from_secs(60);

/// How often polld's janitor drops the remembered keys older than
/// [`MEMO_TTL`] (`Store::expire_key_memos`): an idle reader's key stays in
/// memory for at most the sum of the two.
pub const MEMO_SWEEP: Duration = Duration::from_secs(10);

/// Whether `e` says a poll's key is gone (its row is then erased).
fn is_erased(e: &Error) -> bool {
    matches!(e, Error::NotFound)
}

impl Reader {
    pub(super) fn new(conn: Box<dyn ReadConn>, keys: Arc<Keyring>, seen: Arc<Seen>) -> Reader {
        let memo = Arc::new(Mutex::new(KeyMemo::default()));
        seen.register(&memo);
        Reader { conn, keys, seen, memo, last_tallies: None }
    }

    /// Taken before a read's first statement (see [`Began`]).
    fn began(&self) -> Began {
        Began { at: Instant::now(), forgets: self.seen.forgets() }
    }

    /// One read through the connection (see [`ReadConn::once`]).
    fn once<T>(&mut self, f: impl FnOnce(&mut dyn Rows) -> Result<T, Error>) -> Result<T, Error> {
        let mut f = Some(f);
        let mut out = None;
        self.conn.once(&mut |rows| {
            if let Some(f) = f.take() {
                out = Some(f(rows)?);
            }
            Ok(())
        })?;
        out.ok_or_else(|| Error::internal(anyhow::anyhow!("a read did not run")))
    }

    /// Reads in one snapshot (see [`ReadConn::snapshot`]). `f` gets, with
    /// the keys, the instant the snapshot began as [`open_state`] wants it.
    fn snapshot<T>(
        &mut self,
        f: impl FnOnce(&mut dyn Rows, &Keyring, (&Seen, Instant)) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let (keys, seen) = (self.keys.clone(), self.seen.clone());
        // Taken before the snapshot exists: an engine fixes it at its first
        // read, and a version committed (and seen by another reader) after
        // that but before an instant taken later would make the counts this
        // snapshot reads look put back.
        let began = Instant::now();
        let mut f = Some(f);
        let mut out = None;
        self.conn.snapshot(&mut |rows| {
            if let Some(f) = f.take() {
                out = Some(f(rows, &keys, (&seen, began))?);
            }
            Ok(())
        })?;
        out.ok_or_else(|| Error::internal(anyhow::anyhow!("a read did not run")))
    }

    /// The data key of poll `id` stored as `row`, which a read that began
    /// with `since` forgotten keys ([`Began`]) found: remembered, or
    /// unwrapped (see [`KeyMemo`]).
    fn key(&self, id: &str, row: &PollRow, since: u64) -> Result<Arc<DataKey>, Error> {
        let now = Instant::now();
        // The keyring is asked outside the memo's lock: a remembered key of
        // a day whose wrap key is gone is unwrapped again below, which fails.
        let remembered = lock(&self.memo).get(id, row, now);
        if let Some(key) = remembered
            && self.keys.wrap_key(row.key_day).is_some()
        {
            return Ok(key);
        }
        let key = match data_key(&self.keys, id, row.key_day, &row.data_key) {
            Ok(key) => Arc::new(key),
            Err(e) => {
                lock(&self.memo).forget(id);
                return Err(e);
            }
        };
        self.seen.remember(&self.memo, since, |memo| memo.insert(id, row, key.clone(), now));
        Ok(key)
    }

    /// The polls whose key this reader remembers, in id order, as the memo
    /// holds them now: no read, nothing dropped on the way.
    #[cfg(test)]
    pub(super) fn remembered(&self) -> Vec<String> {
        lock(&self.memo).ids()
    }

    /// The path of a read of poll `id`'s key, with `between` run after the
    /// poll's row was read and before its key is looked up: a forget there
    /// is one that came in the middle of a read.
    #[cfg(test)]
    pub(super) fn unwrap_across(&mut self, id: &PollId, today: Day, between: impl FnOnce()) -> Result<(), Error> {
        let began = self.began();
        let found = self.once(|r| r.poll(id.as_str(), Some(today), Cols::Tallies))?.ok_or(Error::NotFound)?;
        between();
        self.key(id.as_str(), &found.row, began.forgets).map(drop)
    }

    /// The poll if it exists and is live on `today` (and its key exists).
    pub fn poll(&mut self, id: &PollId, today: Day) -> Result<Option<Poll>, Error> {
        Ok(self.read(id, today, false)?.map(|(p, _)| p))
    }

    /// The counters of a poll already read with [`Reader::poll`].
    pub fn tallies(&mut self, poll: &Poll) -> Result<Tallies, Error> {
        self.last_tallies = None;
        Ok(self.counts(poll, None)?.tallies)
    }

    /// The counters of `poll` as they were when this reader just read it
    /// (a results page: the counts of the same snapshot as the poll, with
    /// no second statement), or read now if it read something else since.
    pub fn tallies_as_read(&mut self, poll: &Poll) -> Result<Tallies, Error> {
        let kept = self
            .last_tallies
            .take()
            .filter(|(id, _, _, began)| id == poll.id.as_str() && began.at.elapsed() < KEPT_TALLIES);
        Ok(self.counts(poll, kept.map(|(_, row, sealed, began)| (row, sealed, began)))?.tallies)
    }

    /// The sealed counts of `poll`, as `kept` (by a read that began then)
    /// or read now.
    fn counts(&mut self, poll: &Poll, kept: Option<(PollRow, Vec<u8>, Began)>) -> Result<State, Error> {
        let layout = Layout::of(&poll.questions);
        let (row, sealed, began) = match kept {
            Some(kept) => kept,
            None => {
                let began = self.began();
                // The poll was read live: its creation day finds its row whatever today is.
                let found = self.once(|r| r.poll(poll.id.as_str(), Some(poll.created_on), Cols::Tallies))?;
                let Some(found) = found else { return Ok(State::new(&layout)) };
                let sealed = found.tallies()?.to_vec();
                (found.row, sealed, began)
            }
        };
        let key = match self.key(poll.id.as_str(), &row, began.forgets) {
            Ok(k) => k,
            Err(e) if is_erased(&e) => return Ok(State::new(&layout)),
            Err(e) => return Err(e),
        };
        open_state(&key, (&self.seen, began.at), poll.id.as_str(), &layout, &sealed)
    }

    /// The live poll and its counters, read in one statement (one snapshot).
    pub fn poll_with_tallies(&mut self, id: &PollId, today: Day) -> Result<Option<(Poll, Tallies)>, Error> {
        Ok(self.read(id, today, true)?.map(|(p, t)| (p, t.unwrap_or_default())))
    }

    fn read(&mut self, id: &PollId, today: Day, with_tallies: bool) -> Result<Option<(Poll, Option<Tallies>)>, Error> {
        self.last_tallies = None;
        let began = self.began();
        let Some(found) = self.once(|r| r.poll(id.as_str(), Some(today), Cols::BodyTallies))? else {
            // Gone or expired: its key, if remembered, goes too.
            lock(&self.memo).forget(id.as_str());
            return Ok(None);
        };
        let key = match self.key(id.as_str(), &found.row, began.forgets) {
            Ok(k) => k,
            // Its key is gone: erased, whatever the row says.
            Err(e) if is_erased(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        let doc = open_doc(&key, id.as_str(), found.body()?)?;
        let poll = doc.into_poll(id, found.row.created_on, found.row.expires_on, today)?;
        if with_tallies {
            let layout = Layout::of(&poll.questions);
            let state = open_state(&key, (&self.seen, began.at), id.as_str(), &layout, found.tallies()?)?;
            return Ok(Some((poll, Some(state.tallies))));
        }
        let sealed = found.tallies()?.to_vec();
        self.last_tallies = Some((id.as_str().to_owned(), found.row, sealed, began));
        Ok(Some((poll, None)))
    }

    /// Whether a poll that does not read as live has a row whose key is
    /// gone (erased in this copy, or expired), rather than no row at all:
    /// `pollctl` says so instead of "no such poll".
    pub fn erased(&mut self, id: &PollId) -> Result<bool, Error> {
        let row = self.once(|r| r.key_day(id.as_str()))?;
        Ok(row.and_then(|d| Day::parse(&d)).is_some_and(|d| self.keys.wrap_key(d).is_none()))
    }

    /// Whether the database answers now, through this reader's connection
    /// (`GET /healthz`).
    pub fn ping(&mut self) -> Result<(), Error> {
        self.once(|r| r.ping())
    }

    /// A poll's invite codes: how many were issued (its rows), and how many
    /// were used (the bits its sealed counts keep).
    pub fn invite_counts(&mut self, poll: &Poll) -> Result<(u64, u64), Error> {
        let issued = self.once(|r| r.codes_issued(poll.id.as_str()))?;
        Ok((issued, self.counts(poll, None)?.spent_count()))
    }

    /// Every stored ballot of `poll`, shuffled, without the day it was
    /// cast. For the admin's ballot export and for recounts.
    pub fn ballots(&mut self, poll: &Poll) -> Result<Vec<Ballot>, Error> {
        let mut out: Vec<Ballot> = self.ballots_with_days(poll, Day::today())?.into_iter().map(|(_, b)| b).collect();
        rand::seq::SliceRandom::shuffle(out.as_mut_slice(), &mut rand::rng());
        Ok(out)
    }

    /// Every stored ballot of `poll` with its day, in key order, checked
    /// against the digest its counts carry.
    pub(super) fn ballots_with_days(&mut self, poll: &Poll, today: Day) -> Result<Vec<(Day, Ballot)>, Error> {
        self.snapshot(|tx, keys, seen| {
            let live_on = std::cmp::min(today, poll.created_on);
            let Some(found) = tx.poll(poll.id.as_str(), Some(live_on), Cols::Tallies)? else {
                return Ok(Vec::new());
            };
            let key = data_key(keys, poll.id.as_str(), found.row.key_day, &found.row.data_key)?;
            let state = open_state(&key, seen, poll.id.as_str(), &Layout::of(&poll.questions), found.tallies()?)?;
            let groups = open_groups(&key, poll.id.as_str(), tx.groups(poll.id.as_str())?.as_deref())?;
            let rows = tx.ballots(poll.id.as_str())?;
            check_digest(poll.id.as_str(), state.digest, &rows)?;
            let opener = BallotKeys::new(&key, &groups);
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let stored = opener.open(poll.id.as_str(), &poll.questions, &row)?;
                out.push((stored.day, stored.ballot));
            }
            Ok(out)
        })
    }

    /// The ballot of `poll` that came with the receipt hashed `receipt`,
    /// if it is still stored.
    pub fn own_ballot(&mut self, poll: &Poll, receipt: &ReceiptHash) -> Result<Option<Ballot>, Error> {
        self.snapshot(|tx, keys, _| {
            let Some(found) = tx.poll(poll.id.as_str(), Some(poll.created_on), Cols::Body)? else {
                return Ok(None);
            };
            let key = data_key(keys, poll.id.as_str(), found.row.key_day, &found.row.data_key)?;
            let doc = open_doc(&key, poll.id.as_str(), found.body()?)?;
            let groups = open_groups(&key, poll.id.as_str(), tx.groups(poll.id.as_str())?.as_deref())?;
            let opener = BallotKeys::new(&key, &groups);
            for at in opener.of_receipt(&groups, &doc, receipt) {
                if let Some(sealed) = tx.ballot(poll.id.as_str(), &at)? {
                    let row = BallotRow { key: at.to_vec(), sealed };
                    return Ok(Some(opener.open(poll.id.as_str(), &doc.questions, &row)?.ballot));
                }
            }
            Ok(None)
        })
    }
}

/// What a sweep as of some day would erase, for one expiry day: counts only,
/// so that `pollctl sweep --dry-run` tells nothing about any single poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Due {
    pub expires_on: Day,
    pub polls: u64,
    pub responses: u64,
    pub media: u64,
    pub media_bytes: u64,
}

impl Reader {
    /// Per expiry day, in order, the polls that a sweep as of `as_of` erases
    /// (`expires_on <= as_of`, the sweep's own rule), with their stored
    /// responses and media (the bytes they take as stored: sealed, padded).
    /// Reads only.
    pub fn due_for_sweep(&mut self, as_of: Day) -> Result<Vec<Due>, Error> {
        let rows = self.once(|r| r.due(as_of))?;
        let count = |n: i64| u64::try_from(n).map_err(|_| corrupt("counter"));
        rows.into_iter()
            .map(|row| {
                Ok(Due {
                    expires_on: Day::parse(&row.expires_on).ok_or_else(|| corrupt("expires_on"))?,
                    polls: count(row.polls)?,
                    responses: count(row.ballots)?,
                    media: count(row.media)?,
                    media_bytes: count(row.media_bytes)?,
                })
            })
            .collect()
    }
}
