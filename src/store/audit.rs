//! Reading a database as someone holding it and its key file would, on
//! either engine: what each sealed row holds in clear, where a receipt's
//! or an invite code's row is, and whether a sealed value found anywhere
//! (a dead row version, a log record, a copy) opens with a given wrapped
//! key. For the privacy tests (which play that attacker) and for operators
//! checking a copy.
//!
//! It opens the key file read-only and never moves the key state; its one
//! change, [`Audit::edit_document`], exists for tests of states no front end
//! can make.

use std::path::Path;

use anyhow::Context;

use crate::day::Day;
use crate::error::Error;
use crate::keyring::Keyring;
use crate::secret::{InviteHash, PollId, ReceiptHash};

use super::engine::{ReadConn, Rows};
use super::keys::data_key;
use super::open::{BallotKeys, open_doc, open_groups, open_state};
use super::rows::{self, Doc, Groups, Layout, State};
use super::seal::DataKey;
use super::seen::Seen;
use super::vocab::{Cols, STAGED, place};

/// A database and its key file, opened to be read in clear.
pub struct Audit {
    conn: std::cell::RefCell<Box<dyn ReadConn>>,
    keys: Keyring,
}

/// One stored ballot: its key, its sealed bytes as they lie in the
/// database, and what they hold.
#[derive(Clone, Debug)]
pub struct SealedBallot {
    pub key: Vec<u8>,
    pub sealed: Vec<u8>,
    pub day: Day,
    /// The answers' stored form (`Ballot::to_stored`).
    pub choices: String,
    /// The tag it carries (`rows::Tag`): drawn from its receipt, or the
    /// key it had in format 1; none without a receipt.
    pub tag: Option<[u8; 16]>,
    /// Whether that tag is format 1's row key.
    pub tag_of_format_one: bool,
}

/// One invite code's row, and whether the poll's counts say it voted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeSeen {
    pub mac: [u8; 32],
    pub slot: u32,
    pub used: bool,
}

/// Where a sealed value lives, for [`Audit::opens`].
/// One version of a poll's key as its row holds it: the day of the wrap
/// key, the wrapped data key, and the ballot groups sealed under it (none
/// before the poll's first mix).
pub type PollKey<'a> = (Day, &'a [u8], Option<&'a [u8]>);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SealedAt<'a> {
    /// A ballot row's `sealed`, under its key.
    Ballot(&'a [u8]),
    /// The poll's document.
    Body,
    /// The poll's counts.
    Tallies,
}

impl Audit {
    /// `db`: a SQLite file or a `postgresql://` URL.
    pub fn open(db: &Path, keys: &Path) -> anyhow::Result<Audit> {
        let conn: Box<dyn ReadConn> = match db.to_str().filter(|d| super::is_url(d)) {
            Some(url) => super::postgres::audit_conn(url)?,
            None => super::sqlite::audit_conn(db).with_context(|| format!("cannot open {}", db.display()))?,
        };
        let keys = Keyring::open(keys, crate::keyring::DEFAULT_LEASE_DAYS)?;
        let audit = Audit { conn: std::cell::RefCell::new(conn), keys };
        if let Some(ring) = audit.run(|r| r.keyring_ring())? {
            audit.keys.check_ring(&ring)?;
        }
        Ok(audit)
    }

    fn run<T>(&self, f: impl FnOnce(&mut dyn Rows) -> Result<T, Error>) -> anyhow::Result<T> {
        let mut f = Some(f);
        let mut out = None;
        self.conn
            .borrow_mut()
            .snapshot(&mut |rows| {
                if let Some(f) = f.take() {
                    out = Some(f(rows)?);
                }
                Ok(())
            })
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        out.context("the read did not run")
    }

    /// `poll`'s data key, document, counts and ballot groups.
    fn opened_groups(&self, poll: &str) -> anyhow::Result<(DataKey, Doc, Groups)> {
        let (key, doc, _) = self.opened(poll)?;
        let sealed = self.run(|r| r.groups(poll))?;
        let groups = open_groups(&key, poll, sealed.as_deref()).map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok((key, doc, groups))
    }

    /// `poll`'s data key, document and counts.
    fn opened(&self, poll: &str) -> anyhow::Result<(DataKey, Doc, State)> {
        // Before the read, as `open_state` wants (moot with a `Seen` of its
        // own, but the rule is kept everywhere).
        let began = std::time::Instant::now();
        let found = self.run(|r| r.poll(poll, None, Cols::BodyTallies))?.with_context(|| format!("no poll {poll}"))?;
        let key = data_key(&self.keys, poll, found.row.key_day, &found.row.data_key)
            .map_err(|e| anyhow::anyhow!("poll {poll}: {e}"))?;
        let doc = open_doc(&key, poll, found.body().map_err(|e| anyhow::anyhow!("{e}"))?)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let layout = Layout::of(&doc.questions);
        let tallies = found.tallies().map_err(|e| anyhow::anyhow!("{e}"))?;
        let state =
            open_state(&key, (&Seen::default(), began), poll, &layout, tallies).map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok((key, doc, state))
    }

    /// Every ballot of `poll`, in key order.
    pub fn ballots(&self, poll: &str) -> anyhow::Result<Vec<SealedBallot>> {
        let (key, doc, groups) = self.opened_groups(poll)?;
        let opener = BallotKeys::new(&key, &groups);
        let mut out = Vec::new();
        for row in self.run(|r| r.ballots(poll))? {
            let stored = opener.open(poll, &doc.questions, &row).map_err(|e| anyhow::anyhow!("{e}"))?;
            out.push(SealedBallot {
                key: row.key,
                sealed: row.sealed,
                day: stored.day,
                choices: stored.ballot.to_stored(),
                tag: stored.tag.map(|t| *t.bytes()),
                tag_of_format_one: matches!(stored.tag, Some(rows::Tag::FormatOne(_))),
            });
        }
        Ok(out)
    }

    /// `poll`'s document (every setting and text, its language versions and
    /// media listing, the admin token's hash) as the JSON sealed in it.
    pub fn document(&self, poll: &str) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(self.opened(poll)?.1)?)
    }

    /// `poll`'s counts: total, by day, per option.
    pub fn tallies(&self, poll: &str) -> anyhow::Result<crate::domain::Tallies> {
        Ok(self.opened(poll)?.2.tallies)
    }

    /// The version of `poll`'s counts.
    pub fn counts_version(&self, poll: &str) -> anyhow::Result<u64> {
        Ok(self.opened(poll)?.2.version)
    }

    /// Every key the ballot cast with the receipt hashed `receipt` can have.
    pub fn receipt_keys(&self, poll: &str, receipt: &ReceiptHash) -> anyhow::Result<Vec<[u8; 16]>> {
        let (key, doc, groups) = self.opened_groups(poll)?;
        Ok(BallotKeys::new(&key, &groups).of_receipt(&groups, &doc, receipt))
    }

    /// What `poll`'s invite row of the code hashed `code` is keyed by.
    pub fn invite_mac(&self, poll: &str, code: &InviteHash) -> anyhow::Result<[u8; 32]> {
        self.opened(poll)?.1.invite_mac(code).map_err(|e| anyhow::anyhow!("{e}"))
    }

    /// `poll`'s invite rows, each with whether the counts say it voted.
    pub fn invites(&self, poll: &str) -> anyhow::Result<Vec<CodeSeen>> {
        let (_, _, state) = self.opened(poll)?;
        let rows = self.run(|r| r.codes(poll))?;
        Ok(rows.into_iter().map(|c| CodeSeen { used: state.is_spent(c.slot), mac: c.mac, slot: c.slot }).collect())
    }

    /// Whether `sealed`, found anywhere, opens as `poll`'s value `at` under
    /// the data key `wrapped` (wrapped under the day key of `key_day`) with
    /// this key file, a settled ballot under the key its group has in the
    /// ballot groups `groups` sealed with that data key (all three from one
    /// version of the poll's row): its plaintext if so. `None` when the key
    /// file no longer has that day's key, or the value does not open there.
    pub fn opens(&self, poll: &str, key: PollKey<'_>, at: SealedAt<'_>, sealed: &[u8]) -> Option<Vec<u8>> {
        let (key_day, wrapped, groups) = key;
        let key = data_key(&self.keys, poll, key_day, wrapped).ok()?;
        let (place, under) = match at {
            SealedAt::Ballot(row) if row.first() != Some(&STAGED) => {
                let groups = open_groups(&key, poll, groups).ok()?;
                let g = groups.of_key(row)?;
                (place::ballot(poll, row), groups.groups.get(g)?.data_key()?)
            }
            SealedAt::Ballot(row) => (place::ballot(poll, row), key),
            SealedAt::Body => (place::body(poll), key),
            SealedAt::Tallies => (place::tallies(poll), key),
        };
        under.open(&place, sealed).ok().map(|p| p.to_vec())
    }

    /// `poll`'s sealed document as `edit` changes its JSON, sealed for its
    /// place, not written: for a test that writes it in a transaction of
    /// its own (another process holding the write lock).
    pub fn edited_document(&self, poll: &str, edit: impl FnOnce(&mut serde_json::Value)) -> anyhow::Result<Vec<u8>> {
        let (key, doc, _) = self.opened(poll)?;
        let mut json = serde_json::to_value(doc)?;
        edit(&mut json);
        let doc: Doc = serde_json::from_value(json).context("the edited document does not read back")?;
        let id = PollId::parse(poll).context("not a poll id")?;
        key.seal(&place::body(id.as_str()), &doc.to_bytes().map_err(|e| anyhow::anyhow!("{e}"))?)
    }

    /// A ballot value found anywhere (a dead row version, a log record, a
    /// copy), opened as `poll`'s ballot at row key `row` under the poll key
    /// `key` ([`Audit::opens`]) with this key file, and read as
    /// [`Audit::ballots`] reads a row (the questions from the poll's
    /// current document). `None` when the key file no longer has that day's
    /// key, or the value does not open there.
    pub fn open_ballot(&self, poll: &str, key: PollKey<'_>, row: &[u8], sealed: &[u8]) -> Option<SealedBallot> {
        let plain = self.opens(poll, key, SealedAt::Ballot(row), sealed)?;
        let (_, doc, _) = self.opened(poll).ok()?;
        let stored = rows::ballot_from(&doc.questions, &plain).ok()?;
        Some(SealedBallot {
            key: row.to_vec(),
            sealed: sealed.to_vec(),
            day: stored.day,
            choices: stored.ballot.to_stored(),
            tag: stored.tag.map(|t| *t.bytes()),
            tag_of_format_one: matches!(stored.tag, Some(rows::Tag::FormatOne(_))),
        })
    }

    /// Rewrites `poll`'s sealed document as `edit` changes its JSON, past
    /// every front end's rules: for tests of states no front end can make
    /// (a deadline of today) or of another process's change (closing a poll
    /// while polld's writer has votes queued). A running polld notices at
    /// its next write.
    pub fn edit_document(&self, poll: &str, edit: impl FnOnce(&mut serde_json::Value)) -> anyhow::Result<()> {
        let sealed = self.edited_document(poll, edit)?;
        self.conn.borrow_mut().once(&mut |rows| rows.set_body(poll, &sealed)).map_err(|e| anyhow::anyhow!("{e}"))
    }
}
