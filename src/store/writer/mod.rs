//! The writer: every write of a store goes through one thread per store,
//! which commits what is queued in groups. Engine-neutral: each engine's
//! thread (`sqlite::writer`, `postgres::writer`) opens the transaction,
//! hands the batch to [`Writer::apply_batch`] through the [`Rows`] seam,
//! commits, and answers.
//!
//! Why one thread and group commit: a success answer always means "on
//! disk", while a burst of votes costs one commit instead of one each.
//!
//! Votes are the hot path, so they are cheaper than other writes:
//! - the writer keeps each voted-on poll's state (closed, expiry, the layout
//!   of its ballots, its data key and its counts, opened) ([`cache`]), so a
//!   vote reads nothing and opens nothing, but the slot of an invite code it
//!   brings; on SQLite between batches, while no other process wrote, on
//!   PostgreSQL within a batch only (another node may write between);
//! - a vote is checked completely before its one `INSERT`, which is atomic
//!   by itself: it needs no savepoint, and it changes no other row. Its
//!   invite code is spent in the poll's sealed counts, not in a row of its
//!   own, so nothing outside the sealed values ties the code to the ballot
//!   (no transaction id, no place in a table);
//! - a poll's counts are one sealed value, updated in memory by each vote
//!   and written once per batch before the commit (and before any other
//!   kind of write, which might delete the poll they count). If that fails,
//!   the whole batch fails: no vote is acknowledged without its counts.
//!
//! Other writes each run in their own savepoint, so one failing write does
//! not undo the others of its batch ([`ops`]).
//!
//! A new ballot (or a changed one, [`amend`]) is stored staged, and every
//! poll with new ballots is mixed soon after ([`mix`]): its ballots
//! rewritten at new keys in an order that is not theirs, under a new data
//! key, so that neither where a row lies nor what the log kept of the
//! window before ties a ballot to when it came or to the code or form that
//! cast it, nor opens a changed ballot's old answers, once the old key is
//! gone.

mod amend;
mod cache;
mod cast;
mod inbox;
mod keywork;
pub(super) mod mix;
mod ops;
mod queue;
pub(super) mod upgrade;

use std::sync::Arc;

use anyhow::anyhow;

use crate::day::Day;
use crate::error::Error;
use crate::keyring::Keyring;

use cache::PollCache;
pub(super) use inbox::{Empty, Inbox};
pub use mix::MIX_EVERY;
pub use ops::MAX_INVITES;
pub(super) use queue::{Handle, Job, Op, Outcome};
pub use queue::{Rolled, WriterConfig};

use super::engine::{Rows, in_savepoint};
use super::seen::Seen;

/// What the writer knows between batches: the keys, the polls it counts,
/// and the polls it has yet to mix.
pub(in crate::store) struct Writer {
    keys: Arc<Keyring>,
    seen: Arc<Seen>,
    polls: PollCache,
    pub(super) fresh: mix::Fresh,
    /// Polls erased by the transaction being applied: no longer waiting for
    /// a mix once it commits.
    erased: Vec<String>,
    /// The day the key state moved to, to note in the database with the
    /// next transaction (`keywork` notes at most a day past the key file's
    /// before the file moves; this is the day it moved to).
    key_day: Option<Day>,
    /// `key_day` was written in the transaction being applied.
    key_day_written: bool,
}

impl Writer {
    pub(super) fn new(keys: Arc<Keyring>, seen: Arc<Seen>) -> Writer {
        Writer {
            keys,
            seen,
            polls: PollCache::default(),
            fresh: mix::Fresh::default(),
            erased: Vec::new(),
            key_day: None,
            key_day_written: false,
        }
    }

    /// Forgets every poll it remembers (another node or process may have
    /// changed them, or the transaction that counted them was rolled back).
    pub(in crate::store) fn forget_polls(&mut self) {
        self.polls.clear();
    }

    /// The engine committed the transaction it last applied writes in: the
    /// versions of counts written there are now seen.
    pub(in crate::store) fn committed(&mut self) {
        self.seen.committed();
        if std::mem::take(&mut self.key_day_written) {
            self.key_day = None;
        }
        for poll in std::mem::take(&mut self.erased) {
            self.fresh.mixed(&poll, None);
        }
    }

    /// The engine rolled back the transaction it last applied writes in:
    /// nothing counted or written there is kept.
    pub(in crate::store) fn rolled_back(&mut self) {
        self.seen.rolled_back();
        self.polls.clear();
        self.erased.clear();
        self.key_day_written = false;
    }

    /// Whether a day of the key state waits to be noted in the database
    /// (the engine's thread commits an empty batch for it before it stops).
    pub(in crate::store) fn key_day_pending(&self) -> bool {
        self.key_day.is_some()
    }

    /// Drops what it remembers if the database changed under another
    /// connection since (`version`: SQLite's `data_version`).
    pub(in crate::store) fn check_version(&mut self, version: i64) {
        self.polls.check_version(version);
    }

    /// After a batch: moves the key state to the day of a committed
    /// [`Op::Roll`] (a failure is that job's result: its polls were
    /// re-wrapped, and the old state can still read them), and tells
    /// readers which data keys went.
    pub(in crate::store) fn advance_keys(&mut self, batch: &[Job], results: &mut [Result<Outcome, Error>]) {
        for (job, result) in batch.iter().zip(results.iter_mut()) {
            if let (Op::Roll { day }, Ok(Outcome::Rolled(_))) = (&job.op, &result) {
                match self.keys.advance(*day) {
                    Ok(_) => self.key_day = Some(*day),
                    Err(e) => {
                        eprintln!("anonpoll: {e}");
                        *result = Err(Error::internal(anyhow!("the key state could not move to {day}: {e}")));
                    }
                }
            }
        }
        // An erased poll's key and the key state's old keys are gone: no
        // reader keeps a copy. (Whether or not the job succeeded: a reader
        // that drops a key still good only unwraps it again.) A change keeps
        // its poll's key until the poll's mix, which tells the readers then.
        for job in batch {
            if let Op::Delete { id } = &job.op {
                self.seen.forget_key(id.as_str());
            }
        }
        if batch.iter().any(|j| matches!(j.op, Op::Roll { .. })) {
            self.seen.forget_keys();
        }
    }

    /// Applies a batch inside the transaction `tx` holds open: each job's
    /// result, and whether anything was erased (the engine then owes its
    /// log a truncation, where it has one). The caller commits.
    pub(in crate::store) fn apply_batch(
        &mut self,
        tx: &mut dyn Rows,
        batch: &[Job],
        forms: &[FormState],
    ) -> Result<(Vec<Result<Outcome, Error>>, bool), BatchFailed> {
        let failed = |e: Error| BatchFailed::new(batch.len(), e);
        if let Some(day) = self.key_day {
            tx.note_key_day(day).map_err(failed)?;
            self.key_day_written = true;
        }
        let mut results = Vec::with_capacity(batch.len());
        let mut erased = false;
        for (i, job) in batch.iter().enumerate() {
            let result = match &job.op {
                Op::Cast { id, ballot, invite, receipt, read_at, today, .. } => {
                    match forms.get(i).copied().unwrap_or(FormState::Unchecked) {
                        FormState::Spent => Err(Error::FormSpent),
                        FormState::Unchecked | FormState::Taken => {
                            self.cast(tx, id, (ballot, *read_at), (*invite, *receipt), *today)
                        }
                    }
                }
                op => {
                    // Other writes may change, re-key or delete a poll just
                    // counted: the counts and held ballots go first, and the
                    // cache is rebuilt from the table.
                    self.polls.flush(tx, &self.seen).map_err(failed)?;
                    self.polls.clear();
                    // A savepoint: a failing job is rolled back alone.
                    let (keys, seen) = (&self.keys, &self.seen);
                    let mark = seen.staged_mark();
                    let applied = in_savepoint(tx, |tx| ops::apply(tx, keys, seen, op));
                    if applied.is_err() {
                        // Rolled back to its savepoint: what it read or
                        // wrote there was never committed.
                        seen.rolled_back_to(mark);
                    }
                    match (&applied, op) {
                        // A changed ballot waits for its poll's mix, as a
                        // new one does; an erased poll waits for nothing,
                        // once its erasure is committed.
                        (Ok(_), Op::Amend { id, .. }) => self.fresh.add(id.as_str()),
                        (Ok(_), Op::Delete { id }) => self.erased.push(id.as_str().to_owned()),
                        _ => {}
                    }
                    applied.map(|(outcome, e)| {
                        erased |= e;
                        outcome
                    })
                }
            };
            // ...unless the engine rolled the whole transaction back (SQLite
            // does on SQLITE_FULL, IOERR or NOMEM). Then every job of the
            // batch is undone; going on would start autocommit writes
            // outside the transaction and report them as failed.
            if let Err(err) = &result
                && tx.rolled_back()
            {
                eprintln!("anonpoll: a write batch of {} was rolled back by the database: {err}", batch.len());
                let reason = match err {
                    Error::Unavailable { reason, .. } => *reason,
                    _ => "Storage refused the write; nothing was written.",
                };
                return Err(BatchFailed(Error::Unavailable { reason, retry_after_secs: 5 }));
            }
            results.push(result);
        }
        self.polls.flush(tx, &self.seen).map_err(failed)?;
        tx.finish_batch().map_err(failed)?;
        Ok((results, erased))
    }

    /// Mixes `poll` in the transaction `tx` holds open ([`mix::mix`]); the
    /// caller commits, then tells [`Writer::mixed`] how it went.
    pub(in crate::store) fn mix(&mut self, tx: &mut dyn Rows, poll: &str, today: Day) -> Result<(), Error> {
        self.polls.forget(poll);
        mix::mix(tx, &self.keys, &self.seen, poll, today)
    }

    /// After [`Writer::mix`]'s transaction: committed (`Some` with how long
    /// it took) or not.
    pub(in crate::store) fn mixed(&mut self, poll: &str, took: Option<std::time::Duration>) {
        match took {
            Some(took) => {
                self.seen.committed();
                self.fresh.mixed(poll, Some(took));
                // The poll's old data key is gone from the database.
                self.seen.forget_key(poll);
            }
            None => {
                self.seen.rolled_back();
                self.fresh.failed(poll);
            }
        }
        self.polls.forget(poll);
    }
}

/// What an engine decided of a vote's form before its batch ran (several
/// nodes: the whole batch's forms spent in one statement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::store) enum FormState {
    /// Not looked at: the engine records no forms.
    Unchecked,
    /// Spent now, for this vote.
    Taken,
    /// Spent before (on any node, or by an earlier vote of this batch).
    Spent,
}

/// The error every job of a failed batch gets. Storage-level causes (full,
/// busy) keep their 503 meaning; anything else is internal.
pub(in crate::store) fn batch_error(e: &Error) -> Error {
    match e {
        Error::Unavailable { reason, retry_after_secs } => {
            Error::Unavailable { reason, retry_after_secs: *retry_after_secs }
        }
        other => Error::internal(anyhow!("write batch failed: {other}")),
    }
}

/// A batch that failed as a whole, with the error each of its jobs gets.
pub(in crate::store) struct BatchFailed(pub(in crate::store) Error);

impl BatchFailed {
    pub(in crate::store) fn new(len: usize, e: Error) -> BatchFailed {
        eprintln!("anonpoll: write batch of {len} failed: {e}");
        BatchFailed(e)
    }
}

/// [`cache::write_state`], for the store's test kit.
#[cfg(test)]
pub(in crate::store) use cache::write_state as write_state_for_tests;

#[cfg(test)]
mod tests;
