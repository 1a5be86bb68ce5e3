//! A voter's change or withdrawal of the ballot their receipt finds.
//!
//! Done in place, at the cost of a vote: the ballot's row is deleted, and
//! a changed ballot is stored again staged, as a new vote is, under the
//! receipt's own tag ([`Tag::Receipt`], which also replaces a tag of
//! format 1); the counts move by exactly the old ballot's and the new
//! one's. The poll then waits for its mix like a poll with a new vote
//! ([`super::mix`]), and that mix is what puts the old answers out of
//! reach: they stay only in what the files kept of the window (a dead row,
//! a log record), sealed under the data key or the group key the mix
//! replaces (a settled ballot's group is marked for it), which dies with
//! its lease. A change costs one poll's mix later, not a whole poll's
//! rewrite now: a voter with a receipt cannot make the writer rewrite a
//! large poll at will (the mix's cooling bounds how often it runs).

use crate::day::Day;
use crate::domain::Ballot;
use crate::error::{Error, ReceiptRefusal};
use crate::keyring::Keyring;
use crate::secret::ReceiptHash;

use super::super::engine::Rows;
use super::super::keys::{data_key, receipt_tag, staged_key};
use super::super::open::{BallotKeys, open_doc, open_groups, open_state_in_tx};
use super::super::rows::{self, Layout, Tag};
use super::super::seen::Seen;
use super::super::vocab::{BallotRow, Cols, place};
use super::cache::write_state;

/// Replaces (`Some`) or withdraws the ballot of poll `id` that came with
/// `receipt`, while the poll is open and takes changes. A changed ballot
/// keeps its day (it was cast then); a withdrawn one leaves its day's count
/// and the total, and a day whose count falls to zero goes, so that a
/// withdrawn ballot leaves nothing behind, not even the day it was cast.
pub(super) fn amend(
    tx: &mut dyn Rows,
    keys: &Keyring,
    seen: &Seen,
    id: &str,
    receipt: &ReceiptHash,
    new: Option<&Ballot>,
    today: Day,
) -> Result<(), Error> {
    let began = std::time::Instant::now();
    let Some(found) = tx.poll(id, Some(today), Cols::BodyTallies)? else { return Err(Error::NotFound) };
    let key = data_key(keys, id, found.row.key_day, &found.row.data_key)?;
    let doc = open_doc(&key, id, found.body()?)?;
    if doc.is_closed(today) {
        return Err(Error::Closed);
    }
    if !doc.vote_changes {
        return Err(Error::ReceiptRefused(ReceiptRefusal::ChangesOff));
    }
    let layout = Layout::of(&doc.questions);
    let mut state = open_state_in_tx(&key, (seen, began), id, &layout, found.tallies()?)?;
    let mut groups = open_groups(&key, id, tx.groups(id)?.as_deref())?;
    let opener = BallotKeys::new(&key, &groups);
    let mut row = None;
    for at in opener.of_receipt(&groups, &doc, receipt) {
        if let Some(sealed) = tx.ballot(id, &at)? {
            row = Some(BallotRow { key: at.to_vec(), sealed });
            break;
        }
    }
    let Some(row) = row else { return Err(Error::ReceiptRefused(ReceiptRefusal::Unknown)) };
    let old = opener.open(id, &doc.questions, &row)?;
    if tx.delete_ballot(id, &row.key)? != 1 {
        return Err(Error::internal(anyhow::anyhow!("a receipt's ballot row could not be deleted")));
    }
    state.digest.count(&row.key, &row.sealed, false);
    if let Some(g) = groups.of_key(&row.key) {
        // Settled: its group's key still opens the old answers in what the
        // files kept, so that group is rewritten at the poll's next mix.
        let group = &mut groups.groups[g];
        group.digest.count(&row.key, &row.sealed, false);
        group.count = group.count.saturating_sub(1);
        group.dirty = true;
        let sealed = key.seal(&place::groups(id), &groups.to_bytes()).map_err(Error::internal)?;
        tx.set_groups(id, &sealed)?;
    }
    match new {
        Some(ballot) => {
            rows::tally(&mut state.tallies, &layout, &old.ballot, None, -1)?;
            rows::tally(&mut state.tallies, &layout, ballot, None, 1)?;
            let tag = Tag::Receipt(receipt_tag(receipt));
            let at = staged_key(&key, tag.bytes());
            let plain = rows::ballot_bytes(&layout, old.day, ballot, Some(&tag))?;
            let sealed = key.seal(&place::ballot(id, &at), &plain).map_err(Error::internal)?;
            state.digest.count(&at, &sealed, true);
            tx.insert_ballot(id, &at, sealed)?;
            // Written now, inside this write's savepoint: an engine that
            // holds ballots for the batch would otherwise write it even if
            // the savepoint is rolled back.
            tx.finish_batch()?;
        }
        None => rows::tally(&mut state.tallies, &layout, &old.ballot, Some(old.day), -1)?,
    }
    write_state(tx, seen, id, &key, &mut state)
}
