//! The keys of a poll's rows, and the names derived from them: a poll's
//! data key unwrapped through the key state, the keys a ballot is stored
//! under (random, or found again from a voter's receipt), and the digest
//! of a poll's ballots that its counts carry.
//!
//! Why in one place: every engine stores a ballot under one of these keys,
//! the writer gives them, the mix moves them, and a receipt finds them;
//! each of those would otherwise derive them on its own.
//!
//! Promises:
//! - a ballot's key tells nothing without the key it is sealed under but
//!   its group's number (`rows::Groups`): a staged one is [`STAGED`] and a
//!   keyed hash of its tag under the poll's data key, or random; a settled
//!   one is its group's number and a keyed hash of its tag under the
//!   group's key, or random;
//! - the poll's data key changes at every mix (`writer::mix`), and so does
//!   the key of every group the mix rewrites, and with them the keys of
//!   the receipts' ballots: the keys of a copy made before tell nothing
//!   once those keys are gone. What carries a receipt from one key to the
//!   next is its tag ([`receipt_tag`]), sealed inside its ballot;
//! - the digest of a poll's ballots ([`Digest`]) changes with any ballot
//!   row added, removed, or put back as it was: the counts carry it, so a
//!   copy with a ballot row deleted or reverted does not match its counts.

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::day::Day;
use crate::error::Error;
use crate::keyring::Keyring;
use crate::secret::ReceiptHash;

use super::seal::{DataKey, MacKey, NONCE_LEN, TAG_LEN};
use super::vocab::STAGED;

/// Poll `id`'s data key, wrapped under the key of `key_day`. `NotFound` if
/// that day's key is gone (the poll is erased, in this copy too); an
/// internal error if it does not open (damage, or a foreign key file).
pub(super) fn data_key(keys: &Keyring, id: &str, key_day: Day, wrapped: &[u8]) -> Result<DataKey, Error> {
    let wrap = keys.wrap_key(key_day).ok_or(Error::NotFound)?;
    DataKey::unwrap(wrapped, &wrap, &keys.ring(), id, key_day)
        .map_err(|e| Error::internal(anyhow::anyhow!("the data key of a poll: {e}")))
}

/// The tag a ballot cast with receipt `r` carries, sealed inside it: a
/// hash of the receipt's hash under a label of its own. The mix, which
/// never sees a receipt, draws the ballot's next key from it
/// (`settled_key`), and so does the receipt's holder.
pub fn receipt_tag(r: &ReceiptHash) -> [u8; 16] {
    let digest = Sha256::new().chain_update(b"anonpoll receipt tag v2\0").chain_update(r.0).finalize();
    let mut tag = [0u8; 16];
    tag.copy_from_slice(&digest[..16]);
    tag
}

/// Where a ballot of tag `tag` waits for the mix: [`STAGED`] and 15 bytes
/// of a keyed hash of the tag.
pub(super) fn staged_key(key: &DataKey, tag: &[u8; 16]) -> [u8; 16] {
    let mut staged = [STAGED; 16];
    staged[1..].copy_from_slice(&key.mac(b"receipt staged v2", &[tag])[..15]);
    staged
}

/// Where the mix puts a ballot of tag `tag` in group `group`, whose key is
/// `key`: the group's number, then a keyed hash of the tag.
pub(super) fn settled_key(key: &DataKey, group: usize, tag: &[u8; 16]) -> [u8; 16] {
    let mut out = group_prefix(group);
    out[2..].copy_from_slice(&key.mac(b"receipt settled v3", &[tag])[..14]);
    out
}

/// A random key for a ballot without a tag: staged, or settled in
/// `group`.
pub(super) fn random_key(group: Option<usize>) -> Result<[u8; 16], Error> {
    let mut key = [0u8; 16];
    crate::secret::random_bytes(&mut key).map_err(Error::internal)?;
    match group {
        None => key[0] = STAGED,
        Some(g) => key[..2].copy_from_slice(&group_prefix(g)[..2]),
    }
    Ok(key)
}

/// A key starting with group `group`'s number (two bytes, big-endian; a
/// group's number is below 2^15, so never [`STAGED`]).
fn group_prefix(group: usize) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..2].copy_from_slice(&u16::try_from(group).unwrap_or(u16::MAX >> 1).to_be_bytes());
    out
}

/// A settled key drawn from `input`: the first 16 bytes of the keyed hash
/// of (round, input) for the first round whose first byte is not
/// [`STAGED`]. All of it is keyed-hash output, so it is as random as one
/// from the random source.
fn drawn(mac: impl Fn(&[&[u8]]) -> [u8; 32], input: &[u8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    for round in 0..=u8::MAX {
        out.copy_from_slice(&mac(&[&[round], input])[..16]);
        if out[0] != STAGED {
            break;
        }
    }
    out
}

/// The hashes that gave a receipt's ballot its keys before receipt tags
/// existed (format 1: keyed under the poll's data key of then), kept in the
/// poll's document by the upgrade: the upgrade made each such ballot's key
/// of then its tag, so these find the tag from the receipt.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct FormatOneReceipts {
    staged: HexKey,
    settled: HexKey,
    fallback: HexKey,
}

impl FormatOneReceipts {
    /// The hash keys of format 1 under the data key `key`.
    pub(super) fn of(key: &DataKey) -> FormatOneReceipts {
        let take = |purpose: &[u8]| HexKey(key.mac_key(purpose).bytes().to_owned().into());
        FormatOneReceipts {
            staged: take(b"receipt staged"),
            settled: take(b"receipt settled"),
            fallback: take(b"ballot fallback"),
        }
    }

    /// The keys a ballot of receipt `r` could have had in format 1: staged,
    /// settled, and where the mix put it when it did not know of a receipt.
    fn keys(&self, r: &ReceiptHash) -> [[u8; 16]; 3] {
        let (staged_key, settled, fallback) = (self.staged.mac_key(), self.settled.mac_key(), self.fallback.mac_key());
        let mut staged = [STAGED; 16];
        staged[1..].copy_from_slice(&staged_key.mac(&[&r.0])[..15]);
        [staged, drawn(|input| settled.mac(input), &r.0), drawn(|input| fallback.mac(input), &staged)]
    }
}

/// The keys a ballot cast with a receipt had before encryption (schema 8),
/// drawn from the receipt's hash alone: staged, settled and fallback.
pub(super) fn before_sealing_keys(r: &ReceiptHash) -> [[u8; 16]; 3] {
    let mut staged = [STAGED; 16];
    staged[1..].copy_from_slice(&r.0[..15]);
    let settled = drawn_unkeyed(b"anonpoll settled ballot key\0", &r.0);
    [staged, settled, before_sealing_fallback(&staged)]
}

/// Where schema 8 put a staged ballot whose receipt it did not know.
pub(super) fn before_sealing_fallback(staged: &[u8; 16]) -> [u8; 16] {
    drawn_unkeyed(b"anonpoll fallback ballot key\0", staged)
}

fn drawn_unkeyed(label: &[u8], input: &[u8]) -> [u8; 16] {
    drawn(
        |parts| Sha256::new().chain_update(label).chain_update(parts[0]).chain_update(parts[1]).finalize().into(),
        input,
    )
}

/// Every tag the ballot of receipt `r` may carry: its own, and on a poll
/// that had ballots before receipt tags, the keys such a ballot had then
/// (under `format_one`'s hashes, or before sealing when `before_sealing`).
pub(super) fn receipt_tags(
    r: &ReceiptHash,
    format_one: Option<&FormatOneReceipts>,
    before_sealing: bool,
) -> Vec<[u8; 16]> {
    let mut tags = vec![receipt_tag(r)];
    if let Some(old) = format_one {
        tags.extend(old.keys(r));
    }
    if before_sealing {
        tags.extend(before_sealing_keys(r));
    }
    tags
}

/// The digest of a poll's ballot rows: the sum, modulo 2^256, of a hash of
/// each row's key and the nonce and tag of its sealed value (which the
/// cipher binds to the rest of it). Kept in the poll's sealed counts and
/// moved with every row written or deleted, it matches the rows only as
/// they were written: a row deleted, added or put back as it was before
/// changes the sum. A sum rather than a hash of the sorted rows, so that one
/// row's change moves it without reading the others.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Digest([u64; 4]);

impl Digest {
    pub const LEN: usize = 32;

    /// Counts the row of `key` holding `sealed` in (`add`) or out.
    pub fn count(&mut self, key: &[u8], sealed: &[u8], add: bool) {
        self.merge(&Digest(row_term(key, sealed)), add);
    }

    pub fn to_bytes(self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (chunk, limb) in out.chunks_exact_mut(8).zip(self.0) {
            chunk.copy_from_slice(&limb.to_le_bytes());
        }
        out
    }

    pub fn from_bytes(bytes: &[u8; 32]) -> Digest {
        let mut limbs = [0u64; 4];
        for (limb, chunk) in limbs.iter_mut().zip(bytes.chunks_exact(8)) {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            *limb = u64::from_le_bytes(b);
        }
        Digest(limbs)
    }

    /// The part of a sealed value a digest counts (its nonce and its tag),
    /// which counts as the whole value does.
    pub fn ends(sealed: &[u8]) -> [u8; NONCE_LEN + TAG_LEN] {
        let mut out = [0u8; NONCE_LEN + TAG_LEN];
        let nonce = &sealed[..sealed.len().min(NONCE_LEN)];
        let tag = &sealed[sealed.len().saturating_sub(TAG_LEN)..];
        out[..nonce.len()].copy_from_slice(nonce);
        out[NONCE_LEN..NONCE_LEN + tag.len()].copy_from_slice(tag);
        out
    }

    /// Adds (`add`) or takes out the rows another digest counted.
    pub fn merge(&mut self, other: &Digest, add: bool) {
        let mut carry = false;
        for (limb, t) in self.0.iter_mut().zip(other.0) {
            let (a, c1) = if add { limb.overflowing_add(t) } else { limb.overflowing_sub(t) };
            let (b, c2) = if add { a.overflowing_add(u64::from(carry)) } else { a.overflowing_sub(u64::from(carry)) };
            *limb = b;
            carry = c1 || c2;
        }
    }

    /// The digest of `rows` (key, sealed).
    pub fn of<'a>(rows: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> Digest {
        let mut d = Digest::default();
        for (key, sealed) in rows {
            d.count(key, sealed, true);
        }
        d
    }
}

/// One row's term of a [`Digest`], as four limbs.
fn row_term(key: &[u8], sealed: &[u8]) -> [u64; 4] {
    let digest = Sha256::new()
        .chain_update(b"anonpoll ballot row v2\0")
        .chain_update((key.len() as u32).to_le_bytes())
        .chain_update(key)
        .chain_update(Digest::ends(sealed))
        .finalize();
    let mut limbs = [0u64; 4];
    for (limb, chunk) in limbs.iter_mut().zip(digest.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(chunk);
        *limb = u64::from_le_bytes(b);
    }
    limbs
}

/// A key kept inside a sealed value (a poll's document): a media item's
/// data key, the invite codes' hash key. Written as hex; zeroized when
/// dropped.
#[derive(Clone)]
pub(crate) struct HexKey(pub crate::keyring::SecretKey);

impl HexKey {
    pub fn generate() -> Result<HexKey, Error> {
        let mut key = zeroize::Zeroizing::new([0u8; 32]);
        crate::secret::random_bytes(key.as_mut_slice()).map_err(Error::internal)?;
        Ok(HexKey(key))
    }

    pub fn mac_key(&self) -> MacKey {
        MacKey::from_bytes(&self.0)
    }

    pub fn data_key(&self) -> DataKey {
        DataKey::import(&self.0)
    }
}

impl std::fmt::Debug for HexKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HexKey(..)")
    }
}

impl Serialize for HexKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::secret::hex(self.0.as_slice()))
    }
}

impl<'de> Deserialize<'de> for HexKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<HexKey, D::Error> {
        let text = zeroize::Zeroizing::new(String::deserialize(d)?);
        unhex32(&text).map(HexKey).ok_or_else(|| serde::de::Error::custom("a key is not 64 hex digits"))
    }
}

/// 64 hex digits as 32 bytes.
pub(crate) fn unhex32(s: &str) -> Option<zeroize::Zeroizing<[u8; 32]>> {
    if s.len() != 64 {
        return None;
    }
    let mut out = zeroize::Zeroizing::new([0u8; 32]);
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_moves_with_each_row_and_comes_back_when_it_is_taken_out() {
        let rows: Vec<(Vec<u8>, Vec<u8>)> = (0..50u8).map(|i| (vec![i; 16], vec![i.wrapping_mul(7); 80])).collect();
        let all = Digest::of(rows.iter().map(|(k, s)| (k.as_slice(), s.as_slice())));
        let mut d = all;
        d.count(&rows[3].0, &rows[3].1, false);
        assert_ne!(d, all, "a row taken out");
        assert_eq!(d, Digest::of(rows.iter().enumerate().filter(|(i, _)| *i != 3).map(|(_, (k, s))| (&k[..], &s[..]))));
        d.count(&rows[3].0, &rows[3].1, true);
        assert_eq!(d, all, "and put back");
        // The same bytes under another key, or another sealed value's
        // nonce or tag, count differently.
        let mut moved = all;
        moved.count(&rows[3].0, &rows[3].1, false);
        moved.count(&rows[4].0, &rows[3].1, true);
        assert_ne!(moved, all);
        let mut reverted = rows[5].1.clone();
        reverted[0] ^= 1;
        let mut r = all;
        r.count(&rows[5].0, &rows[5].1, false);
        r.count(&rows[5].0, &reverted, true);
        assert_ne!(r, all);
        assert_eq!(Digest::from_bytes(&all.to_bytes()), all);
        // Counting out of the empty set and back in wraps around exactly.
        let mut z = Digest::default();
        z.count(b"k", b"v", false);
        z.count(b"k", b"v", true);
        assert_eq!(z, Digest::default());
    }

    #[test]
    fn receipt_keys_follow_the_data_key_and_the_tag_alone() {
        let r = ReceiptHash([9; 32]);
        let (k1, k2) = (DataKey::generate().unwrap(), DataKey::generate().unwrap());
        let tag = receipt_tag(&r);
        assert_ne!(
            settled_key(&k1, 3, &tag),
            settled_key(&k2, 3, &tag),
            "a new group key moves every receipt's ballot"
        );
        assert_eq!(settled_key(&k1, 3, &tag), settled_key(&DataKey::import(&k1.export()), 3, &tag));
        assert_eq!(staged_key(&k1, &tag)[0], STAGED);
        assert_eq!(settled_key(&k1, 0x7fff, &tag)[..2], [0x7f, 0xff], "its group's number first");
        assert_eq!(random_key(Some(0x7fff)).unwrap()[..2], [0x7f, 0xff]);
        assert_eq!(random_key(None).unwrap()[0], STAGED);
        // Format 1's keys, kept as hash keys, give what the data key gave.
        let old = FormatOneReceipts::of(&k1);
        let [staged, settled, _] = old.keys(&r);
        assert_eq!(staged[1..], k1.mac(b"receipt staged", &[&r.0])[..15]);
        assert_eq!(settled, drawn(|input| k1.mac(b"receipt settled", input), &r.0));
        assert_eq!(receipt_tags(&r, Some(&old), true).len(), 7);
    }
}
