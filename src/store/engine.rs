//! The row operations every engine answers: the one seam between the
//! store's shared logic (sealing, the writer's batches, the reader, the
//! day's key work) and the SQL of each engine ([`super::sqlite`],
//! [`super::postgres`]).
//!
//! Why a trait of named operations rather than SQL strings passed through:
//! the two engines differ in placeholders, types and what is cheap (SQLite
//! reads a range of a blob in place; PostgreSQL writes a batch of ballots
//! in one statement), and a named operation lets each do it its own way
//! while the logic above is written once. Every operation takes and returns
//! only what is stored: sealed bytes, ids, and days as text
//! (`YYYY-MM-DD`, which sorts as the days do on both engines).
//!
//! Promise: nothing here decides anything. Checks (is the poll live, is
//! the invite code right, is the ballot well-formed) happen above; an
//! engine only moves bytes.

use crate::day::Day;
use crate::error::Error;

use super::corrupt;

/// A poll row as stored: its days and its wrapped data key.
pub(super) struct PollRow {
    pub created_on: Day,
    pub expires_on: Day,
    pub key_day: Day,
    pub data_key: Vec<u8>,
}

/// A poll row and the sealed columns asked for with it, in the order of
/// [`Cols`].
pub(super) type RowWith = (PollRow, Vec<Vec<u8>>);

/// Which sealed columns of a poll row a read wants besides its days and key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cols {
    None,
    Body,
    Tallies,
    BodyTallies,
}

impl Cols {
    /// The columns as a select list continuation (shared by both engines,
    /// whose column names are the same).
    pub(super) fn sql(self) -> &'static str {
        match self {
            Cols::None => "",
            Cols::Body => ", body",
            Cols::Tallies => ", tallies",
            Cols::BodyTallies => ", body, tallies",
        }
    }

    pub(super) fn count(self) -> usize {
        match self {
            Cols::None => 0,
            Cols::Body | Cols::Tallies => 1,
            Cols::BodyTallies => 2,
        }
    }
}

/// A new poll's row.
pub(super) struct NewRow<'a> {
    pub id: &'a str,
    pub created_on: Day,
    pub expires_on: Day,
    pub key_day: Day,
    pub data_key: &'a [u8],
    pub body: &'a [u8],
    pub tallies: &'a [u8],
}

/// A poll's lease as the day's key work reads it: id, expiry, key day,
/// wrapped key.
pub(super) type Lease = (String, Day, Day, Vec<u8>);

/// What a sweep as of some day erases, per expiry day: the day, and the
/// polls, ballots, media items and media bytes.
pub(super) type DueRow = (String, [i64; 4]);

/// Stored ballots of a poll: key and sealed bytes.
pub(super) type BallotRows = Vec<(Vec<u8>, Vec<u8>)>;

/// A stored day read back.
pub(super) fn day_column(s: &str, what: &str) -> Result<Day, Error> {
    Day::parse(s).ok_or_else(|| corrupt(what))
}

/// Builds a [`RowWith`] from the columns as read.
pub(super) fn row_with(
    created_on: &str,
    expires_on: &str,
    key_day: &str,
    data_key: Vec<u8>,
    blobs: Vec<Vec<u8>>,
) -> Result<RowWith, Error> {
    Ok((
        PollRow {
            created_on: day_column(created_on, "created_on")?,
            expires_on: day_column(expires_on, "expires_on")?,
            key_day: day_column(key_day, "key_day")?,
            data_key,
        },
        blobs,
    ))
}

/// The row operations of one engine, inside whatever transaction the
/// caller opened (or none, for a single read).
pub(super) trait Rows {
    /// Poll `id`'s row with the columns `cols`; only if it is live on
    /// `live_on` (`today < expires_on`) when that is given.
    fn poll(&mut self, id: &str, live_on: Option<Day>, cols: Cols) -> Result<Option<RowWith>, Error>;
    fn insert_poll(&mut self, row: &NewRow) -> Result<(), Error>;
    fn set_body(&mut self, id: &str, sealed: &[u8]) -> Result<(), Error>;
    fn set_tallies(&mut self, id: &str, sealed: &[u8]) -> Result<(), Error>;
    /// Stores a new lease (and, when given, a new expiry day).
    fn set_lease(&mut self, id: &str, expires_on: Option<Day>, key_day: Day, wrapped: &[u8]) -> Result<(), Error>;
    /// Erases a poll with all its rows; how many polls went (0 or 1).
    fn delete_poll(&mut self, id: &str) -> Result<u64, Error>;
    /// Erases every poll expired by `day`; how many went.
    fn delete_expired(&mut self, day: Day) -> Result<u64, Error>;
    /// Every poll's lease, in id order.
    fn leases(&mut self) -> Result<Vec<Lease>, Error>;
    /// Poll `id`'s key day as stored, expired or not.
    fn key_day(&mut self, id: &str) -> Result<Option<String>, Error>;

    fn ballot(&mut self, poll: &str, key: &[u8]) -> Result<Option<Vec<u8>>, Error>;
    /// Every ballot of `poll` (key, sealed), in key order.
    fn ballots(&mut self, poll: &str) -> Result<BallotRows, Error>;
    /// Stores a new ballot. An engine may hold it until
    /// [`Rows::finish_batch`] (within the same transaction).
    fn insert_ballot(&mut self, poll: &str, key: &[u8], sealed: Vec<u8>) -> Result<(), Error>;
    fn update_ballot(&mut self, poll: &str, key: &[u8], sealed: &[u8]) -> Result<(), Error>;
    fn delete_ballot(&mut self, poll: &str, key: &[u8]) -> Result<(), Error>;

    fn insert_invite(&mut self, poll: &str, mac: &[u8]) -> Result<(), Error>;
    /// Marks an unused code used; how many rows changed (0 or 1).
    fn spend_invite(&mut self, poll: &str, mac: &[u8]) -> Result<u64, Error>;
    /// A poll's invite codes: issued, used.
    fn invite_counts(&mut self, poll: &str) -> Result<(u64, u64), Error>;

    fn insert_media(&mut self, id: &str, poll: &str, sealed: &[u8]) -> Result<(), Error>;
    /// Erases media item `id` (of `poll`, when given); how many went.
    fn delete_media(&mut self, id: &str, poll: Option<&str>) -> Result<u64, Error>;
    /// The poll media item `id` belongs to.
    fn media_poll(&mut self, id: &str) -> Result<Option<String>, Error>;
    /// The stored bytes of media item `id` at each (offset, length) span.
    fn media_spans(&mut self, id: &str, spans: &[(usize, usize)]) -> Result<Vec<Vec<u8>>, Error>;

    /// Per expiry day up to `as_of`, what a sweep would erase.
    fn due(&mut self, as_of: Day) -> Result<Vec<DueRow>, Error>;

    /// Whether this engine records spent vote forms (several nodes share it,
    /// so a node's memory of the forms it took is not enough).
    fn records_forms(&self) -> bool {
        false
    }

    /// Records a vote form (its key's day and nonce) as spent; false if it
    /// was spent already, on any node.
    fn redeem_form(&mut self, _day: Day, _nonce: &[u8; 16]) -> Result<bool, Error> {
        Ok(true)
    }

    /// Whether the database answers (a trivial read).
    fn ping(&mut self) -> Result<(), Error>;

    /// Runs a statement both engines spell alike (savepoints).
    fn exec(&mut self, sql: &'static str) -> Result<(), Error>;

    /// Writes whatever the engine held back (ballots) before the commit.
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

/// A savepoint around `f`: its writes stay only if it succeeds.
pub(super) fn in_savepoint<T>(
    rows: &mut dyn Rows,
    f: impl FnOnce(&mut dyn Rows) -> Result<T, Error>,
) -> Result<T, Error> {
    rows.exec("SAVEPOINT op")?;
    match f(rows) {
        Ok(v) => {
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
