//! The one seam between the store's engine-neutral logic (sealing, the
//! writer's batches and mix, the reader, the day's key work) and each
//! engine ([`super::sqlite`], [`super::postgres`]).
//!
//! Three traits, each named for who uses it:
//! - [`Rows`]: the row operations, inside whatever transaction the caller
//!   opened (or none, for a single read). The logic above is written once
//!   against it.
//! - [`ReadConn`]: a [`Reader`](super::Reader)'s connection: one read, or a
//!   few in one snapshot.
//! - [`Engine`]: what the [`Store`](super::Store) asks of an engine besides
//!   its writer thread: read connections, figures, checks, a backup.
//!
//! Why named operations rather than SQL passed through: the engines differ
//! in placeholders, types and what is cheap (SQLite reads a range of a blob
//! in place; PostgreSQL writes a batch of ballots in one statement), and a
//! named operation lets each do it its own way.
//!
//! Promise: nothing here decides anything. Checks (is the poll live, is the
//! code right, is the ballot well-formed) happen above; an engine only
//! moves bytes, and orders rows only as its storage needs (the ballots a
//! mix writes go in a random order, or in key order where the key decides
//! where a row lies).

use std::path::Path;

use crate::day::Day;
use crate::error::Error;

use super::vocab::{BallotRow, CodeRow, Cols, DueRow, LeaseRow, NewPollRow, PollWith, ResealedRow};

/// The row operations of one engine.
pub(super) trait Rows {
    /// Poll `id`'s row with the columns `cols`; only if it is live on
    /// `live_on` (`live_on < expires_on`) when that is given.
    fn poll(&mut self, id: &str, live_on: Option<Day>, cols: Cols) -> Result<Option<PollWith>, Error>;
    fn insert_poll(&mut self, row: &NewPollRow) -> Result<(), Error>;
    fn set_body(&mut self, id: &str, sealed: &[u8]) -> Result<(), Error>;
    fn set_tallies(&mut self, id: &str, sealed: &[u8]) -> Result<(), Error>;
    /// Poll `id`'s sealed ballot groups (`rows::Groups`), if it has them.
    fn groups(&mut self, id: &str) -> Result<Option<Vec<u8>>, Error>;
    fn set_groups(&mut self, id: &str, sealed: &[u8]) -> Result<(), Error>;
    /// Stores a poll's key wrapped anew (and, when given, a new expiry day).
    fn set_key(&mut self, id: &str, expires_on: Option<Day>, key_day: Day, wrapped: &[u8]) -> Result<(), Error>;
    /// Rewrites a poll's row whole under a new data key, at format
    /// [`FORMAT`](super::vocab::FORMAT).
    fn reseal_poll(&mut self, id: &str, row: &ResealedRow) -> Result<(), Error>;
    /// Erases a poll with all its rows; how many polls went (0 or 1).
    fn delete_poll(&mut self, id: &str) -> Result<u64, Error>;
    /// Erases every poll expired by `day`; how many went.
    fn delete_expired(&mut self, day: Day) -> Result<u64, Error>;
    /// Every poll's lease, as stored, in id order, for the day's key work
    /// (an engine with several writers locks the rows, in that order).
    fn leases(&mut self) -> Result<Vec<LeaseRow>, Error>;
    /// Every poll's id, in id order: a plain read, nothing locked.
    fn poll_ids(&mut self) -> Result<Vec<String>, Error>;
    /// Poll `id`'s key day as stored, expired or not.
    fn key_day(&mut self, id: &str) -> Result<Option<String>, Error>;
    /// The polls whose sealed values have format `format`, in id order.
    fn polls_of_format(&mut self, format: i64) -> Result<Vec<String>, Error>;
    /// The format of poll `id`'s sealed values, if it exists.
    fn format_of(&mut self, id: &str) -> Result<Option<i64>, Error>;

    fn ballot(&mut self, poll: &str, key: &[u8]) -> Result<Option<Vec<u8>>, Error>;
    /// Every ballot of `poll`, in key order.
    fn ballots(&mut self, poll: &str) -> Result<Vec<BallotRow>, Error>;
    /// Stores a new ballot. An engine may hold it until
    /// [`Rows::finish_batch`] (within the same transaction).
    fn insert_ballot(&mut self, poll: &str, key: &[u8], sealed: Vec<u8>) -> Result<(), Error>;
    /// The ballots of `poll` whose keys lie from `lo` to `hi` (both
    /// included), in key order.
    fn ballots_between(&mut self, poll: &str, lo: &[u8; 16], hi: &[u8; 16]) -> Result<Vec<BallotRow>, Error>;
    /// Deletes the ballots of `poll` whose keys lie from `lo` to `hi`; how
    /// many went.
    fn delete_ballots_between(&mut self, poll: &str, lo: &[u8; 16], hi: &[u8; 16]) -> Result<u64, Error>;
    /// Stores `rows` of `poll` at once (the mix: in random order; an engine
    /// whose rows lie in key order may write them in key order).
    fn insert_ballots(&mut self, poll: &str, rows: Vec<BallotRow>) -> Result<(), Error>;
    /// Deletes one ballot of `poll`; how many went (0 or 1).
    fn delete_ballot(&mut self, poll: &str, key: &[u8]) -> Result<u64, Error>;
    /// The polls holding staged ballots (a run that stopped before its mix).
    fn staged_polls(&mut self) -> Result<Vec<String>, Error>;

    /// Stores the rows of new invite codes.
    fn insert_codes(&mut self, poll: &str, rows: &[CodeRow]) -> Result<(), Error>;
    /// The slot of `poll`'s code hashed `mac`, if it has one.
    fn code_slot(&mut self, poll: &str, mac: &[u8; 32]) -> Result<Option<u32>, Error>;
    /// How many codes `poll` has.
    fn codes_issued(&mut self, poll: &str) -> Result<u64, Error>;
    /// Every code row of `poll` (the audit).
    fn codes(&mut self, poll: &str) -> Result<Vec<CodeRow>, Error>;
    /// Format 1's invite rows of `poll` (its code hashes and whether each
    /// voted), for the upgrade; they are deleted with
    /// [`Rows::delete_format_one_codes`].
    fn format_one_codes(&mut self, poll: &str) -> Result<Vec<([u8; 32], bool)>, Error>;
    fn delete_format_one_codes(&mut self, poll: &str) -> Result<(), Error>;

    fn insert_media(&mut self, id: &str, poll: &str, sealed: &[u8]) -> Result<(), Error>;
    /// Erases media item `id` (of `poll`, when given); how many went.
    fn delete_media(&mut self, id: &str, poll: Option<&str>) -> Result<u64, Error>;
    /// The poll media item `id` belongs to.
    fn media_poll(&mut self, id: &str) -> Result<Option<String>, Error>;
    /// The stored bytes of media item `id` at each (offset, length) span.
    fn media_spans(&mut self, id: &str, spans: &[(usize, usize)]) -> Result<Vec<Vec<u8>>, Error>;

    /// Per expiry day up to `as_of`, what a sweep would erase.
    fn due(&mut self, as_of: Day) -> Result<Vec<DueRow>, Error>;

    /// The id binding the key file to the database, if it has one yet.
    fn keyring_ring(&mut self) -> Result<Option<[u8; 16]>, Error>;

    /// Notes that the key state has moved to `day` (the furthest day of any
    /// node's), so that a key file behind it is noticed at its next use.
    fn note_key_day(&mut self, day: Day) -> Result<(), Error>;

    /// Whether the database answers (a trivial read).
    fn ping(&mut self) -> Result<(), Error>;

    /// Runs a statement both engines spell alike (savepoints).
    fn exec(&mut self, sql: &'static str) -> Result<(), Error>;

    /// Writes whatever the engine held back (ballots) before the commit, or
    /// before another write reads the rows.
    fn finish_batch(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// Whether the engine rolled the whole transaction back on its own
    /// (SQLite does on a full disk or an I/O error): going on would write
    /// outside it.
    fn rolled_back(&mut self) -> bool {
        false
    }
}

/// A savepoint around `f`: its writes stay only if it succeeds. For the
/// writes of a batch other than votes, so that one failing is undone
/// alone; a vote is checked whole before its one row goes in, and needs
/// none.
pub(super) fn in_savepoint<T>(
    rows: &mut dyn Rows,
    f: impl FnOnce(&mut dyn Rows) -> Result<T, Error>,
) -> Result<T, Error> {
    rows.finish_batch()?;
    rows.exec("SAVEPOINT op")?;
    match f(rows) {
        Ok(v) => {
            rows.finish_batch()?;
            rows.exec("RELEASE op")?;
            Ok(v)
        }
        Err(e) => {
            // If the engine rolled the whole transaction back, this fails
            // too, and the batch fails with it.
            let _ = rows.exec("ROLLBACK TO op");
            let _ = rows.exec("RELEASE op");
            Err(e)
        }
    }
}

/// A reader's connection.
pub(super) trait ReadConn: Send {
    /// One read, or a few that need not agree with each other.
    fn once(&mut self, f: &mut dyn FnMut(&mut dyn Rows) -> Result<(), Error>) -> Result<(), Error>;
    /// Reads that see one snapshot of the database.
    fn snapshot(&mut self, f: &mut dyn FnMut(&mut dyn Rows) -> Result<(), Error>) -> Result<(), Error>;
    /// Makes the connection fit for reading media a piece at a time.
    fn for_media_streams(&mut self) -> Result<(), Error> {
        Ok(())
    }
}

/// Operator-level figures: nothing about any single poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    pub live_polls: u64,
    pub expired_polls: u64,
    pub responses: u64,
    pub database_bytes: u64,
}

/// What an engine says of its database's health (`pollctl check`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Health {
    /// `ok`, or what the engine's own check found.
    pub integrity: String,
    pub schema_version: i64,
    pub binary_schema_version: i64,
}

/// What the store asks of an engine besides its writer thread.
pub(super) trait Engine: Send + Sync {
    /// A new read connection, for one worker thread.
    fn reader(&self) -> anyhow::Result<Box<dyn ReadConn>>;
    /// Figures for `pollctl stats`, as of `today`.
    fn stats(&self, today: Day) -> anyhow::Result<Stats>;
    /// The engine's own check of its files and its schema version.
    fn health(&self) -> anyhow::Result<Health>;
    /// Writes a consistent copy of the database to `target` (which must
    /// not exist yet), or says why this engine leaves that to its own tools.
    fn backup(&self, target: &Path, copy: &mut dyn FnMut(&mut dyn Rows) -> Result<(), Error>) -> anyhow::Result<()>;
    /// Whether spent vote forms are recorded in the database (several
    /// nodes: `postgres::writer` spends them with each batch).
    fn records_forms(&self) -> bool;
    /// The SQLite file, or `None`.
    fn path(&self) -> Option<&Path> {
        None
    }
}
