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
//! - no data key outlives its poll here: a remembered key goes when the
//!   writer erases or re-keys any poll, and after [`MEMO_TTL`] in any case.

mod media;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::day::Day;
use crate::domain::{Ballot, Poll, Tallies};
use crate::error::Error;
use crate::keyring::Keyring;
use crate::secret::{PollId, ReceiptHash};

use super::engine::{ReadConn, Rows};
use super::keys::data_key;
use super::open::{check_digest, corrupt_sealed, open_doc, open_state, receipt_keys};
use super::rows::{self, Layout, State};
use super::seal::DataKey;
use super::seen::Seen;
use super::vocab::{Cols, PollRow, corrupt, place};

pub use media::{MediaBlob, STREAM_MMAP};

pub struct Reader {
    conn: Box<dyn ReadConn>,
    keys: Arc<Keyring>,
    seen: Arc<Seen>,
    memo: KeyMemo,
    /// The sealed counts read with the last poll this reader read, for the
    /// [`Reader::tallies_as_read`] that usually follows (a results page): one
    /// statement instead of two, and counts from the same snapshot as the
    /// poll. Taken by that call, replaced by the next read, and not used
    /// once older than [`KEPT_TALLIES`].
    last_tallies: Option<(String, PollRow, Vec<u8>, Instant)>,
}

// (`last_tallies`' instant is when that read began: the counts kept are
// checked as of then.)

/// Data keys this reader unwrapped, by poll, with the wrapped key and day
/// they came from. A poll is read again and again (its share page, its
/// JSON, its results), and unwrapping its key was a tenth of a poll read's
/// instructions (docs/PERFORMANCE.md). An entry serves only while the row
/// holds the same wrapped key under the same day and the keyring still has
/// that day's wrap key; all go when the writer erases or re-keys a poll
/// (`Seen::forget_keys`), and each after [`MEMO_TTL`]. Bounded by
/// [`MEMO_POLLS`]; keys are zeroized as entries drop.
#[derive(Default)]
struct KeyMemo {
    keys: HashMap<String, (Day, Vec<u8>, DataKey, Instant)>,
    /// The writer's key epoch when this memo was last emptied.
    epoch: u64,
}

/// How long the counts read with a poll serve a following
/// [`Reader::tallies_as_read`].
const KEPT_TALLIES: Duration = Duration::from_secs(1);

/// Most data keys one reader remembers; past it the memo starts over.
const MEMO_POLLS: usize = 256;

/// How long a remembered data key serves at most.
pub const MEMO_TTL: Duration = Duration::from_secs(60);

/// Whether `e` says a poll's key is gone (its row is then erased).
fn is_erased(e: &Error) -> bool {
    matches!(e, Error::NotFound)
}

impl Reader {
    pub(super) fn new(conn: Box<dyn ReadConn>, keys: Arc<Keyring>, seen: Arc<Seen>) -> Reader {
        Reader { conn, keys, seen, memo: KeyMemo::default(), last_tallies: None }
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

    /// Reads in one snapshot (see [`ReadConn::snapshot`]).
    fn snapshot<T>(&mut self, f: impl FnOnce(&mut dyn Rows, &Keyring, &Seen) -> Result<T, Error>) -> Result<T, Error> {
        let (keys, seen) = (self.keys.clone(), self.seen.clone());
        let mut f = Some(f);
        let mut out = None;
        self.conn.snapshot(&mut |rows| {
            if let Some(f) = f.take() {
                out = Some(f(rows, &keys, &seen)?);
            }
            Ok(())
        })?;
        out.ok_or_else(|| Error::internal(anyhow::anyhow!("a read did not run")))
    }

    /// The data key of poll `id` stored as `row`: remembered, or unwrapped
    /// (see [`KeyMemo`]).
    fn key(&mut self, id: &str, row: &PollRow) -> Result<&DataKey, Error> {
        let epoch = self.seen.key_epoch();
        if self.memo.epoch != epoch || self.memo.keys.len() >= MEMO_POLLS {
            self.memo.keys.clear();
            self.memo.epoch = epoch;
        }
        let same = self.memo.keys.get(id).is_some_and(|(day, wrapped, _, at)| {
            *day == row.key_day
                && *wrapped == row.data_key
                && at.elapsed() < MEMO_TTL
                && self.keys.wrap_key(row.key_day).is_some()
        });
        if !same {
            self.memo.keys.remove(id);
            let key = data_key(&self.keys, id, row.key_day, &row.data_key)?;
            self.memo.keys.insert(id.to_owned(), (row.key_day, row.data_key.clone(), key, Instant::now()));
        }
        self.memo.keys.get(id).map(|(_, _, key, _)| key).ok_or_else(|| Error::internal(anyhow::anyhow!("the key memo")))
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
        let kept =
            self.last_tallies.take().filter(|(id, _, _, at)| id == poll.id.as_str() && at.elapsed() < KEPT_TALLIES);
        Ok(self.counts(poll, kept.map(|(_, row, sealed, began)| (row, sealed, began)))?.tallies)
    }

    /// The sealed counts of `poll`, as `kept` (by a read that began then)
    /// or read now.
    fn counts(&mut self, poll: &Poll, kept: Option<(PollRow, Vec<u8>, Instant)>) -> Result<State, Error> {
        let layout = Layout::of(&poll.questions);
        let (row, sealed, began) = match kept {
            Some(kept) => kept,
            None => {
                let began = Instant::now();
                // The poll was read live: its creation day finds its row whatever today is.
                let found = self.once(|r| r.poll(poll.id.as_str(), Some(poll.created_on), Cols::Tallies))?;
                let Some(found) = found else { return Ok(State::new(&layout)) };
                let sealed = found.tallies()?.to_vec();
                (found.row, sealed, began)
            }
        };
        let seen = self.seen.clone();
        let key = match self.key(poll.id.as_str(), &row) {
            Ok(k) => k,
            Err(e) if is_erased(&e) => return Ok(State::new(&layout)),
            Err(e) => return Err(e),
        };
        open_state(key, (&seen, began), poll.id.as_str(), &layout, &sealed)
    }

    /// The live poll and its counters, read in one statement (one snapshot).
    pub fn poll_with_tallies(&mut self, id: &PollId, today: Day) -> Result<Option<(Poll, Tallies)>, Error> {
        Ok(self.read(id, today, true)?.map(|(p, t)| (p, t.unwrap_or_default())))
    }

    fn read(&mut self, id: &PollId, today: Day, with_tallies: bool) -> Result<Option<(Poll, Option<Tallies>)>, Error> {
        self.last_tallies = None;
        let began = Instant::now();
        let Some(found) = self.once(|r| r.poll(id.as_str(), Some(today), Cols::BodyTallies))? else {
            // Gone or expired: its key, if remembered, goes too.
            self.memo.keys.remove(id.as_str());
            return Ok(None);
        };
        let seen = self.seen.clone();
        let key = match self.key(id.as_str(), &found.row) {
            Ok(k) => k,
            // Its key is gone: erased, whatever the row says.
            Err(e) if is_erased(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        let doc = open_doc(key, id.as_str(), found.body()?)?;
        let poll = doc.into_poll(id, found.row.created_on, found.row.expires_on, today)?;
        if with_tallies {
            let state = open_state(key, (&seen, began), id.as_str(), &Layout::of(&poll.questions), found.tallies()?)?;
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
            let began = Instant::now();
            let state =
                open_state(&key, (seen, began), poll.id.as_str(), &Layout::of(&poll.questions), found.tallies()?)?;
            let rows = tx.ballots(poll.id.as_str())?;
            check_digest(poll.id.as_str(), &state, &rows)?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let plain = key
                    .open(&place::ballot(poll.id.as_str(), &row.key), &row.sealed)
                    .map_err(|e| corrupt_sealed("ballot", e))?;
                let stored = rows::ballot_from(&poll.questions, &plain)?;
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
            for at in receipt_keys(&key, &doc, receipt) {
                if let Some(sealed) = tx.ballot(poll.id.as_str(), &at)? {
                    let plain = key
                        .open(&place::ballot(poll.id.as_str(), &at), &sealed)
                        .map_err(|e| corrupt_sealed("ballot", e))?;
                    return Ok(Some(rows::ballot_from(&doc.questions, &plain)?.ballot));
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
