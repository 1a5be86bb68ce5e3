//! The store's shared vocabulary: the rows every engine reads and writes,
//! named, and where each sealed value lives.
//!
//! Why a leaf: both engines ([`super::sqlite`], [`super::postgres`]) and
//! the engine-neutral logic above them (the writer, the reader, the day's
//! key work) speak of the same rows; kept here, below all of them, none of
//! those modules needs another to say what a row is. This module imports
//! nothing of the store but [`super::seal`]'s place type.
//!
//! Promise: a row here holds only what is stored: ids, days as text
//! (`YYYY-MM-DD`, which sorts as the days do on both engines) or parsed,
//! and sealed bytes. Nothing here opens or decides anything.

use crate::day::Day;
use crate::error::Error;

use super::seal::{Place, Table};

/// The first byte of a staged ballot's key; a settled ballot's key never
/// starts with it.
///
/// Why stage: a ballot stored at once at a random key lands on a random
/// page of its poll, so in a large poll every vote read a page from the
/// file and added a page to the log (measured on SQLite: 3.1 page reads and
/// 5.5 page writes per vote at 1M stored responses, against 0.2 and 2.5 at
/// 1k). A staged ballot lands with its poll's other new ones, at the end of
/// the poll's keys; the mix (`writer::mix`) gives it its settled key.
pub(crate) const STAGED: u8 = 0xff;

/// The first and last keys a staged ballot can have.
pub(crate) const STAGED_KEYS: ([u8; 16], [u8; 16]) = {
    let mut lo = [0u8; 16];
    lo[0] = STAGED;
    (lo, [STAGED; 16])
};

/// The format of a poll's sealed values as this binary writes them. 1: the
/// layouts of `sql/009_sealed.sql`; 2: ballots carry a receipt tag, the
/// counts a version, a digest of the ballots and the spent invite codes,
/// media and invite codes keys of their own (`rows`). A poll of format 1 is
/// brought to 2 by the upgrade's pass (`writer::upgrade`) before the store
/// serves it.
pub(crate) const FORMAT: i64 = 2;

pub(super) fn corrupt(what: &str) -> Error {
    Error::internal(anyhow::anyhow!("stored {what} is malformed"))
}

/// A stored day read back.
pub(super) fn day_column(s: &str, what: &str) -> Result<Day, Error> {
    Day::parse(s).ok_or_else(|| corrupt(what))
}

/// Where each sealed value lives (its associated data).
pub(crate) mod place {
    use super::{Place, Table};

    pub fn body(poll: &str) -> Place {
        Place::new(Table::Polls, poll, b"", "body")
    }

    pub fn tallies(poll: &str) -> Place {
        Place::new(Table::Polls, poll, b"", "tallies")
    }

    pub fn groups(poll: &str) -> Place {
        Place::new(Table::Polls, poll, b"", "groups")
    }

    pub fn ballot(poll: &str, key: &[u8]) -> Place {
        Place::new(Table::Ballots, poll, key, "sealed")
    }

    pub fn media(poll: &str, media: &str) -> Place {
        Place::new(Table::Media, poll, media.as_bytes(), "bytes")
    }
}

/// A poll row as stored: its days and its wrapped data key.
#[derive(Clone, Debug)]
pub(super) struct PollRow {
    pub created_on: Day,
    pub expires_on: Day,
    pub key_day: Day,
    pub data_key: Vec<u8>,
}

/// Which sealed columns of a poll row a read wants besides its days and key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cols {
    Body,
    Tallies,
    BodyTallies,
}

impl Cols {
    pub(super) fn body(self) -> bool {
        matches!(self, Cols::Body | Cols::BodyTallies)
    }

    pub(super) fn tallies(self) -> bool {
        matches!(self, Cols::Tallies | Cols::BodyTallies)
    }
}

/// A poll row with the sealed columns a read asked for ([`Cols`]).
pub(super) struct PollWith {
    pub row: PollRow,
    pub body: Option<Vec<u8>>,
    pub tallies: Option<Vec<u8>>,
}

impl PollWith {
    /// Builds one from the columns as read (`body` and `tallies` as asked).
    pub(super) fn read(
        (created_on, expires_on, key_day): (&str, &str, &str),
        data_key: Vec<u8>,
        body: Option<Vec<u8>>,
        tallies: Option<Vec<u8>>,
    ) -> Result<PollWith, Error> {
        Ok(PollWith {
            row: PollRow {
                created_on: day_column(created_on, "created_on")?,
                expires_on: day_column(expires_on, "expires_on")?,
                key_day: day_column(key_day, "key_day")?,
                data_key,
            },
            body,
            tallies,
        })
    }

    /// The sealed document, which the read asked for.
    pub(super) fn body(&self) -> Result<&[u8], Error> {
        self.body.as_deref().ok_or_else(|| corrupt("poll row"))
    }

    /// The sealed counts, which the read asked for.
    pub(super) fn tallies(&self) -> Result<&[u8], Error> {
        self.tallies.as_deref().ok_or_else(|| corrupt("poll row"))
    }
}

/// A new poll's row.
pub(super) struct NewPollRow<'a> {
    pub id: &'a str,
    pub created_on: Day,
    pub expires_on: Day,
    pub key_day: Day,
    pub data_key: &'a [u8],
    pub body: &'a [u8],
    pub tallies: &'a [u8],
}

/// A poll's row rewritten whole under a new data key (the mix, a changed or
/// withdrawn ballot, the upgrade): the key, its day, and every sealed
/// column.
pub(super) struct ResealedRow<'a> {
    pub key_day: Day,
    pub data_key: &'a [u8],
    pub body: &'a [u8],
    pub tallies: &'a [u8],
    /// The ballot groups (`rows::Groups`).
    pub groups: &'a [u8],
    /// Whether a ballot still carries a tag of format 1 (`rows::Tag`);
    /// `None`: as before.
    pub old_tags: Option<bool>,
}

/// A poll's lease as the day's key work reads it, as stored: the key work
/// parses each row itself, so that one malformed row is set aside rather
/// than failing every poll's.
pub(super) struct LeaseRow {
    pub id: String,
    pub expires_on: String,
    pub key_day: String,
    pub data_key: Vec<u8>,
    /// Whether a ballot still carries a tag of format 1 (`rows::Tag`).
    pub old_tags: bool,
}

/// What a sweep as of some day erases, for one expiry day.
pub(super) struct DueRow {
    pub expires_on: String,
    pub polls: i64,
    pub ballots: i64,
    pub media: i64,
    pub media_bytes: i64,
}

/// A stored ballot: its key within its poll and its sealed bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct BallotRow {
    pub key: Vec<u8>,
    pub sealed: Vec<u8>,
}

/// An invite code's row: its hash keyed under the poll's invite key, and
/// its place in the poll's bitmap of spent codes (sealed in the counts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct CodeRow {
    pub mac: [u8; 32],
    pub slot: u32,
}

/// What the `keyring` table holds: the id binding the key file to the
/// database, the furthest day any key state has moved to, and the lease.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct KeyringRow {
    pub ring: Option<[u8; 16]>,
    pub day: Option<Day>,
    pub lease_days: Option<u16>,
}
