//! Opening a poll's sealed values, for the reader and the writer alike:
//! its document, its counts (checked against the versions this process
//! has seen), its ballot groups and ballots (checked against the digest
//! its counts carry), the whole poll at once ([`Image`]), and the keys a
//! receipt's ballot can have.
//!
//! Why below both: the reader and the writer open the same values the same
//! way; kept here, neither imports the other.

use std::time::Instant;

use crate::error::Error;
use crate::secret::ReceiptHash;

use crate::day::Day;
use crate::keyring::Keyring;

use super::engine::Rows;
use super::keys::{Digest, data_key, receipt_tags, settled_key, staged_key};
use super::rows::{self, Doc, Groups, Layout, State, Stored};
use super::seal::{DataKey, Unsealed};
use super::seen::Seen;
use super::vocab::{BallotRow, Cols, PollRow, STAGED, place};

/// Opens a poll's sealed document.
pub(super) fn open_doc(key: &DataKey, id: &str, body: &[u8]) -> Result<Doc, Error> {
    let plain = key.open(&place::body(id), body).map_err(|e| corrupt_sealed("poll document", e))?;
    Doc::from_bytes(&plain)
}

/// Opens a poll's sealed counts read by a read that began at `began`, and
/// notes their version (an error if a later one was seen before that read
/// began: [`Seen::check`]). `began` must be taken before the read of
/// `sealed` starts, or before the snapshot it is read in starts: an engine
/// fixes a snapshot at its first read, so an instant taken after it may
/// follow a newer version's commit, and these counts would look put back.
pub(super) fn open_state(
    key: &DataKey,
    (seen, began): (&Seen, Instant),
    id: &str,
    layout: &Layout,
    sealed: &[u8],
) -> Result<State, Error> {
    let state = unseal_state(key, id, layout, sealed)?;
    seen.check(id, state.version, began)?;
    Ok(state)
}

/// As [`open_state`], for counts read inside the writer's open
/// transaction, which may hold versions that transaction wrote: their
/// version is noted once it commits ([`Seen::check_in_tx`]).
pub(super) fn open_state_in_tx(
    key: &DataKey,
    (seen, began): (&Seen, Instant),
    id: &str,
    layout: &Layout,
    sealed: &[u8],
) -> Result<State, Error> {
    let state = unseal_state(key, id, layout, sealed)?;
    seen.check_in_tx(id, state.version, began)?;
    Ok(state)
}

fn unseal_state(key: &DataKey, id: &str, layout: &Layout, sealed: &[u8]) -> Result<State, Error> {
    let plain = key.open(&place::tallies(id), sealed).map_err(|e| corrupt_sealed("counts", e))?;
    rows::state_from(layout, &plain)
}

/// A sealed value that did not open, as an internal error.
pub(super) fn corrupt_sealed(what: &str, e: Unsealed) -> Error {
    Error::internal(anyhow::anyhow!("{what}: {e}"))
}

/// An error unless `rows` are the ballots `digest` counted (the counts'
/// digest of all of a poll's ballots, or a group's of its own).
pub(super) fn check_digest(id: &str, digest: Digest, rows: &[BallotRow]) -> Result<(), Error> {
    let found = Digest::of(rows.iter().map(|r| (r.key.as_slice(), r.sealed.as_slice())));
    if found != digest {
        eprintln!(
            "anonpoll: poll {id}'s {} ballot rows are not the ones its counts were written with: a row was \
             deleted, added or put back as it was before (pollctl check)",
            rows.len()
        );
        return Err(Error::internal(anyhow::anyhow!("a poll's ballots do not match its counts")));
    }
    Ok(())
}

/// Opens a poll's sealed ballot groups; a poll never mixed has one group,
/// empty.
pub(super) fn open_groups(key: &DataKey, id: &str, sealed: Option<&[u8]>) -> Result<Groups, Error> {
    match sealed {
        None => Ok(Groups::default()),
        Some(sealed) => {
            let plain = key.open(&place::groups(id), sealed).map_err(|e| corrupt_sealed("ballot groups", e))?;
            Groups::from_bytes(&plain)
        }
    }
}

/// The keys that open a poll's ballots: its data key for a staged one,
/// its group's key for a settled one.
pub(super) struct BallotKeys<'a> {
    poll: &'a DataKey,
    groups: Vec<Option<DataKey>>,
}

impl<'a> BallotKeys<'a> {
    pub(super) fn new(poll: &'a DataKey, groups: &Groups) -> BallotKeys<'a> {
        BallotKeys { poll, groups: groups.groups.iter().map(rows::Group::data_key).collect() }
    }

    /// The key of group `g`, if it has one.
    pub(super) fn group(&self, g: usize) -> Option<&DataKey> {
        self.groups.get(g).and_then(Option::as_ref)
    }

    /// Opens the ballot of poll `id` stored as `row`.
    pub(super) fn open(
        &self,
        id: &str,
        questions: &[crate::domain::Question],
        row: &BallotRow,
    ) -> Result<Stored, Error> {
        let key = match row.key.first() {
            Some(&STAGED) => Some(self.poll),
            _ => row.key.get(..2).and_then(|p| self.group(usize::from(u16::from_be_bytes([p[0], p[1]])))),
        };
        let key = key.ok_or_else(|| Error::internal(anyhow::anyhow!("a ballot lies in no group of its poll")))?;
        let plain = key.open(&place::ballot(id, &row.key), &row.sealed).map_err(|e| corrupt_sealed("ballot", e))?;
        rows::ballot_from(questions, &plain)
    }

    /// Every key the ballot of `receipt` can have: staged and settled, for
    /// each tag the receipt may have given it.
    pub(super) fn of_receipt(&self, groups: &Groups, doc: &Doc, receipt: &ReceiptHash) -> Vec<[u8; 16]> {
        let mut out = Vec::new();
        for tag in receipt_tags(receipt, doc.format_one_receipts.as_ref(), doc.legacy_receipts) {
            out.push(staged_key(self.poll, &tag));
            let g = groups.of_tag(&tag);
            if let Some(key) = self.group(g) {
                out.push(settled_key(key, g, &tag));
            }
        }
        out
    }
}

/// A poll opened whole: its row, key, document, counts, ballot groups, and
/// every ballot.
pub(in crate::store) struct Image {
    pub(in crate::store) row: PollRow,
    pub(in crate::store) key: DataKey,
    pub(in crate::store) doc: Doc,
    pub(in crate::store) layout: Layout,
    pub(in crate::store) state: State,
    pub(in crate::store) groups: Groups,
    /// Each ballot as stored: its key, and what it holds.
    pub(in crate::store) ballots: Vec<(Vec<u8>, Stored)>,
}

impl Image {
    /// Every key the ballot of `receipt` can have in this poll now.
    #[cfg(test)]
    pub(in crate::store) fn receipt_keys(&self, receipt: &ReceiptHash) -> Vec<[u8; 16]> {
        BallotKeys::new(&self.key, &self.groups).of_receipt(&self.groups, &self.doc, receipt)
    }

    /// Where a settled ballot of tag `tag` lies, if its group has a key.
    #[cfg(test)]
    pub(in crate::store) fn settled_key(&self, tag: &[u8; 16]) -> Option<[u8; 16]> {
        let g = self.groups.of_tag(tag);
        self.groups.groups.get(g)?.data_key().map(|k| settled_key(&k, g, tag))
    }

    /// The key a row of this poll at `at` is sealed under: the data key
    /// while staged, its group's once settled.
    #[cfg(test)]
    pub(in crate::store) fn key_at(&self, at: &[u8]) -> Option<DataKey> {
        if at.first() == Some(&STAGED) {
            return Some(DataKey::import(&self.key.export()));
        }
        self.groups.groups.get(self.groups.of_key(at)?)?.data_key()
    }
}

/// Opens poll `id` whole, and checks its ballot rows against the digest
/// its counts carry. Read by the writer, in its open transaction
/// ([`open_state_in_tx`]; `pollctl check` gives each poll a `Seen` of its
/// own). `None` if the poll is gone, expired by `live_on`
/// (when given), or its key is.
pub(in crate::store) fn open_image(
    tx: &mut dyn Rows,
    keys: &Keyring,
    seen: &Seen,
    id: &str,
    live_on: Option<Day>,
) -> Result<Option<Image>, Error> {
    // Before the read, as `open_state` wants: a later instant could find a
    // version seen meanwhile (by another node) and call these counts put back.
    let began = Instant::now();
    let Some(found) = tx.poll(id, live_on, Cols::BodyTallies)? else { return Ok(None) };
    let key = match data_key(keys, id, found.row.key_day, &found.row.data_key) {
        Ok(k) => k,
        Err(Error::NotFound) => return Ok(None),
        Err(e) => return Err(e),
    };
    let doc = open_doc(&key, id, found.body()?)?;
    let layout = Layout::of(&doc.questions);
    let state = open_state_in_tx(&key, (seen, began), id, &layout, found.tallies()?)?;
    let groups = open_groups(&key, id, tx.groups(id)?.as_deref())?;
    let rows = tx.ballots(id)?;
    check_digest(id, state.digest, &rows)?;
    let opener = BallotKeys::new(&key, &groups);
    let ballots = rows
        .into_iter()
        .map(|row| Ok((opener.open(id, &doc.questions, &row)?, row.key)))
        .map(|r: Result<_, Error>| r.map(|(stored, key)| (key, stored)))
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(Some(Image { row: found.row, key, doc, layout, state, groups, ballots }))
}
