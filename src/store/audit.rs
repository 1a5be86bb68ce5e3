//! Reading a database as someone holding it and its key file would: what
//! each sealed row holds in clear, and where a receipt's or an invite code's
//! row is. For the privacy tests (which look for the order of arrival in the
//! raw files, as an attacker with the files and the keys would) and for
//! operators checking a copy.
//!
//! It opens the key file read-only and never moves the key state; its one
//! change, [`Audit::edit_document`], exists for tests of states no front end
//! can make.

use std::path::Path;

use anyhow::Context;
use rusqlite::{Connection, OpenFlags, params};

use crate::day::Day;
use crate::keyring::Keyring;
use crate::secret::{InviteHash, PollId, ReceiptHash};

use super::reader::open_doc;
use super::rows::{self, Doc};
use super::seal::DataKey;
use super::{ReceiptKeys, data_key, place, receipt_keys};

/// A database and its key file, opened to be read in clear.
pub struct Audit {
    conn: Connection,
    keys: Keyring,
}

/// One stored ballot: its key, its sealed bytes as they lie in the file,
/// and what they hold.
#[derive(Clone, Debug)]
pub struct SealedBallot {
    pub key: Vec<u8>,
    pub sealed: Vec<u8>,
    pub day: Day,
    /// The answers' stored form (`Ballot::to_stored`).
    pub choices: String,
}

impl Audit {
    pub fn open(db: &Path, keys: &Path) -> anyhow::Result<Audit> {
        let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_WRITE)
            .with_context(|| format!("cannot open {}", db.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        let keys = Keyring::open(keys, crate::keyring::DEFAULT_LEASE_DAYS)?;
        if let Some(ring) = super::stored_ring(&conn)? {
            keys.check_ring(&ring)?;
        }
        Ok(Audit { conn, keys })
    }

    fn key(&self, poll: &str) -> anyhow::Result<(DataKey, Doc)> {
        let (day, wrapped, body): (String, Vec<u8>, Vec<u8>) = self
            .conn
            .query_row("SELECT key_day, data_key, body FROM sealed_polls WHERE id = ?1", [poll], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .with_context(|| format!("no poll {poll}"))?;
        let day = Day::parse(&day).context("a stored key day is malformed")?;
        let key = data_key(&self.keys, poll, day, &wrapped).map_err(|e| anyhow::anyhow!("poll {poll}: {e}"))?;
        let doc = open_doc(&key, poll, &body).map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok((key, doc))
    }

    /// Every ballot of `poll`, in key order.
    pub fn ballots(&self, poll: &str) -> anyhow::Result<Vec<SealedBallot>> {
        let (key, doc) = self.key(poll)?;
        let mut stmt = self.conn.prepare("SELECT id, sealed FROM sealed_ballots WHERE poll_id = ?1 ORDER BY id")?;
        let rows = stmt.query_map([poll], |r| Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, Vec<u8>>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (k, sealed) = row?;
            let plain = key.open(&place::ballot(poll, &k), &sealed).map_err(|e| anyhow::anyhow!("{e}"))?;
            let (day, ballot) = rows::ballot_from(&doc.questions, &plain).map_err(|e| anyhow::anyhow!("{e}"))?;
            out.push(SealedBallot { key: k, sealed, day, choices: ballot.to_stored() });
        }
        Ok(out)
    }

    /// `poll`'s document (every setting and text, its language versions and
    /// media listing, the admin token's hash) as the JSON sealed in it.
    pub fn document(&self, poll: &str) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(self.key(poll)?.1)?)
    }

    /// `poll`'s counts: total, by day, per option.
    pub fn tallies(&self, poll: &str) -> anyhow::Result<crate::domain::Tallies> {
        let (key, doc) = self.key(poll)?;
        let sealed: Vec<u8> =
            self.conn.query_row("SELECT tallies FROM sealed_polls WHERE id = ?1", [poll], |r| r.get(0))?;
        super::reader::open_tallies(&key, poll, &rows::Layout::of(&doc.questions), &sealed)
            .map_err(|e| anyhow::anyhow!("{e}"))
    }

    /// The keys the ballot cast with the receipt hashed `receipt` can have.
    pub fn receipt_keys(&self, poll: &str, receipt: &ReceiptHash) -> anyhow::Result<ReceiptKeys> {
        Ok(receipt_keys(&self.key(poll)?.0, receipt))
    }

    /// What `poll`'s invite row of the code hashed `code` is keyed by.
    pub fn invite_mac(&self, poll: &str, code: &InviteHash) -> anyhow::Result<[u8; 32]> {
        Ok(super::writer::invite_mac(&self.key(poll)?.0, code))
    }

    /// `poll`'s invite rows: each code's keyed hash, and whether it voted.
    pub fn invites(&self, poll: &str) -> anyhow::Result<Vec<(Vec<u8>, bool)>> {
        let mut stmt = self.conn.prepare("SELECT code_mac, used FROM sealed_invites WHERE poll_id = ?1")?;
        let rows = stmt.query_map([poll], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The connection, to hold a transaction around edits (as another
    /// process holding the write lock would).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Rewrites `poll`'s sealed document as `edit` changes its JSON, past
    /// every front end's rules: for tests of states no front end can make
    /// (a deadline of today) or of another process's change (closing a poll
    /// while polld's writer has votes queued). A running polld notices at
    /// its next write.
    pub fn edit_document(&self, poll: &str, edit: impl FnOnce(&mut serde_json::Value)) -> anyhow::Result<()> {
        let (key, doc) = self.key(poll)?;
        let mut json = serde_json::to_value(doc)?;
        edit(&mut json);
        let doc: Doc = serde_json::from_value(json).context("the edited document does not read back")?;
        let id = PollId::parse(poll).context("not a poll id")?;
        let sealed = key.seal(&place::body(id.as_str()), &doc.to_bytes().map_err(|e| anyhow::anyhow!("{e}"))?)?;
        self.conn.execute("UPDATE sealed_polls SET body = ?2 WHERE id = ?1", params![poll, sealed])?;
        Ok(())
    }
}
