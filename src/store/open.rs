//! Opening a poll's sealed values, for the reader and the writer alike:
//! its document, its counts (checked against the versions this process
//! has seen), its ballots (checked against the digest its counts carry),
//! and the keys a receipt's ballot can have.
//!
//! Why below both: the reader and the writer open the same values the same
//! way; kept here, neither imports the other.

use std::time::Instant;

use crate::error::Error;
use crate::secret::ReceiptHash;

use super::keys::{Digest, receipt_tags, settled_key, staged_key};
use super::rows::{self, Doc, Layout, State};
use super::seal::{DataKey, Unsealed};
use super::seen::Seen;
use super::vocab::{BallotRow, place};

/// Opens a poll's sealed document.
pub(super) fn open_doc(key: &DataKey, id: &str, body: &[u8]) -> Result<Doc, Error> {
    let plain = key.open(&place::body(id), body).map_err(|e| corrupt_sealed("poll document", e))?;
    Doc::from_bytes(&plain)
}

/// Opens a poll's sealed counts read by a read that began at `began`, and
/// notes their version (an error if a later one was seen before that read
/// began: [`Seen::check`]).
pub(super) fn open_state(
    key: &DataKey,
    (seen, began): (&Seen, Instant),
    id: &str,
    layout: &Layout,
    sealed: &[u8],
) -> Result<State, Error> {
    let plain = key.open(&place::tallies(id), sealed).map_err(|e| corrupt_sealed("counts", e))?;
    let state = rows::state_from(layout, &plain)?;
    seen.check(id, state.version, began)?;
    Ok(state)
}

/// A sealed value that did not open, as an internal error.
pub(super) fn corrupt_sealed(what: &str, e: Unsealed) -> Error {
    Error::internal(anyhow::anyhow!("{what}: {e}"))
}

/// An error unless `rows` are the ballots `state` counted.
pub(super) fn check_digest(id: &str, state: &State, rows: &[BallotRow]) -> Result<(), Error> {
    let found = Digest::of(rows.iter().map(|r| (r.key.as_slice(), r.sealed.as_slice())));
    if found != state.digest {
        eprintln!(
            "anonpoll: poll {id}'s {} ballot rows are not the ones its counts were written with: a row was \
             deleted, added or put back as it was before (pollctl check)",
            rows.len()
        );
        return Err(Error::internal(anyhow::anyhow!("a poll's ballots do not match its counts")));
    }
    Ok(())
}

/// Every key the ballot of `receipt` can have in a poll under `key`:
/// staged and settled, for each tag the receipt may have given it.
pub(super) fn receipt_keys(key: &DataKey, doc: &Doc, receipt: &ReceiptHash) -> Vec<[u8; 16]> {
    receipt_tags(receipt, doc.format_one_receipts.as_ref(), doc.legacy_receipts)
        .iter()
        .flat_map(|tag| [staged_key(key, tag), settled_key(key, tag)])
        .collect()
}
