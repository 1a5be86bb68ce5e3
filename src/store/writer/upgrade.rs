//! The upgrade of a poll from format 1 to format 2 (`vocab::FORMAT`), run by
//! each engine at its start, one poll per transaction, before it serves:
//! the poll is mixed as [`super::mix`] mixes, and on the way
//!
//! - its invite codes' rows lose their `used` flag: each gets a slot, and
//!   the codes that voted are bits of the poll's sealed counts, so that no
//!   row of a code ever changes when it votes; the codes' hashes stay as
//!   they were, under a key the document now keeps (the data key's hash
//!   key of format 1, taken out of it);
//! - every ballot gets a tag: the key it had, which a receipt given before
//!   still finds through the hashes of format 1, kept in the document
//!   ([`Tag::FormatOne`]); a poll that takes no receipts any more keeps
//!   none (the mix drops them, [`write_whole`]), and a receipt that is used
//!   gives its ballot a tag of its own (`amend`);
//! - every media item gets a key of its own, and its bytes are sealed again
//!   under it, so that the poll's data key can change at each mix without
//!   sealing every file again;
//! - the counts get their version, the digest of the new ballot rows and
//!   the bitmap of spent codes.
//!
//! Everything the poll was before is then sealed under its old data key
//! only, which dies with its lease: the upgrade is also what ends, for
//! every poll, what the files kept of format 1 (a code row's `xmin` beside
//! its ballot's on PostgreSQL), but for the keys of format 1 that
//! ballots keep as tags while their receipts may still be used.
//!
//! Each poll's step re-reads its format under the lock of its transaction:
//! several processes may run the pass at once (nodes starting together,
//! `pollctl` beside polld), and a poll already moved is left alone.
//!
//! A poll the pass cannot move (its key does not open, a row is damaged) is
//! left as it is and named, and so is every value of format 1 it needs: the
//! migration that drops format 1's invite rows waits until no poll of
//! format 1 is left (the day's key work erases one whose key is gone; a
//! damaged one is named by `pollctl check` until someone repairs or deletes
//! it). A failure of the database itself stops the start instead.

use crate::day::Day;
use crate::error::Error;
use crate::keyring::Keyring;

use super::super::engine::Rows;
use super::super::keys::{FormatOneReceipts, HexKey, data_key};
use super::super::open::Image;
use super::super::open::{corrupt_sealed, open_doc};
use super::super::rows::{self, Groups, Layout, State, Stored, Tag};
use super::super::seal::{DataKey, piece_span};
use super::super::seen::Seen;
use super::super::vocab::{CodeRow, Cols, FORMAT, place};
use super::mix::write_whole;

/// What the pass does with one poll: brings it to format 2 in a
/// transaction `step` opens (locking the poll's row), gives it to
/// [`upgrade_poll`] and commits. Returns how many polls it moved and how
/// many it left; `Err` only when the database itself failed.
pub(in crate::store) fn pass(
    polls: &[String],
    seen: &Seen,
    mut step: impl FnMut(&str) -> Result<bool, Error>,
) -> anyhow::Result<(usize, usize)> {
    let (mut moved, mut left) = (0, 0);
    for id in polls {
        match step(id) {
            Ok(done) => {
                seen.committed();
                moved += usize::from(done);
            }
            Err(e @ Error::Unavailable { .. }) => {
                seen.rolled_back();
                anyhow::bail!("the format pass could not go on: {e}");
            }
            Err(e) => {
                seen.rolled_back();
                left += 1;
                eprintln!(
                    "anonpoll: poll {id} cannot be brought to format {FORMAT} and is left as it is: {e:#}; \
                     format 1's tables stay until no such poll is left (docs/OPERATIONS.md, \"A poll set aside\")"
                );
            }
        }
    }
    if moved > 0 {
        eprintln!("anonpoll: {moved} poll(s) brought to format {FORMAT} under new data keys");
    }
    Ok((moved, left))
}

/// Brings poll `id` from format 1 to 2 in the transaction `tx` holds open,
/// with its row locked; `false` if it is not of format 1 (any more). A poll
/// whose key is gone is erased (nothing could read it).
pub(in crate::store) fn upgrade_poll(
    tx: &mut dyn Rows,
    keys: &Keyring,
    seen: &Seen,
    id: &str,
    today: Day,
) -> Result<bool, Error> {
    if tx.format_of(id)? != Some(FORMAT - 1) {
        return Ok(false);
    }
    let Some(found) = tx.poll(id, None, Cols::BodyTallies)? else { return Ok(false) };
    let key = match data_key(keys, id, found.row.key_day, &found.row.data_key) {
        Ok(k) => k,
        Err(Error::NotFound) => {
            tx.delete_poll(id)?;
            return Ok(true);
        }
        Err(e) => return Err(e),
    };
    let mut doc = open_doc(&key, id, found.body()?)?;
    let layout = Layout::of(&doc.questions);
    let counts = key.open(&place::tallies(id), found.tallies()?).map_err(|e| corrupt_sealed("counts", e))?;
    let mut state = State { tallies: rows::tallies_from(&layout, &counts)?, ..State::new(&layout) };

    // Codes: a slot each (in the order of their hashes, which is random),
    // the voted ones' bits set.
    let mut codes = tx.format_one_codes(id)?;
    codes.sort();
    state.hold_codes(codes.len() as u64);
    let mut rows = Vec::with_capacity(codes.len());
    for (slot, (mac, used)) in codes.into_iter().enumerate() {
        let slot = u32::try_from(slot).map_err(|_| Error::internal(anyhow::anyhow!("invite slot")))?;
        if used {
            state.set_spent(slot, true)?;
        }
        rows.push(CodeRow { mac, slot });
    }
    doc.invite_key = Some(HexKey(key.mac_key(b"invite").bytes().to_owned().into()));

    // Ballots: each one's key of then becomes its tag (dropped at once by
    // `write_whole` if the poll takes no receipts).
    let mut ballots = Vec::new();
    for row in tx.ballots(id)? {
        let plain = key.open(&place::ballot(id, &row.key), &row.sealed).map_err(|e| corrupt_sealed("ballot", e))?;
        let (day, ballot) = rows::ballot_from_v1(&doc.questions, &plain)?;
        let tag: [u8; 16] = row
            .key
            .as_slice()
            .try_into()
            .map_err(|_| Error::internal(anyhow::anyhow!("a ballot key is not 16 bytes")))?;
        ballots.push((row.key, Stored { day, ballot, tag: Some(Tag::FormatOne(tag)) }));
    }
    if !ballots.is_empty() {
        doc.format_one_receipts = Some(FormatOneReceipts::of(&key));
    }

    // Media: a key of its own each.
    for item in doc.media.iter_mut().filter(|m| m.key.is_none()) {
        let padded = usize::try_from(item.padded).map_err(|_| Error::internal(anyhow::anyhow!("media size")))?;
        let at = place::media(id, &item.id);
        let spans: Vec<(usize, usize)> =
            (0..padded.div_ceil(super::super::seal::PIECE).max(1)).map(|i| piece_span(padded, i)).collect();
        let mut plain = zeroize::Zeroizing::new(Vec::with_capacity(padded));
        for (i, sealed) in tx.media_spans(&item.id, &spans)?.into_iter().enumerate() {
            plain.extend_from_slice(&key.open_piece(&at, padded, i, &sealed).map_err(|e| corrupt_sealed("media", e))?);
        }
        let own = HexKey::generate()?;
        let sealed = own.data_key().seal_pieces(&at, &plain).map_err(Error::internal)?;
        tx.delete_media(&item.id, Some(id))?;
        tx.insert_media(&item.id, id, &sealed)?;
        item.key = Some(own);
    }

    let groups = Groups::default();
    let mut image = Image { row: found.row, key: DataKey::import(&key.export()), doc, layout, state, groups, ballots };
    write_whole(tx, keys, seen, id, &mut image, today)?;
    tx.insert_codes(id, &rows)?;
    tx.delete_format_one_codes(id)?;
    Ok(true)
}
