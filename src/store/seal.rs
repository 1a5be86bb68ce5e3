//! Sealing a poll's bytes under its own data key, whatever engine holds them.
//!
//! Why: every byte of a poll (its text, settings, ballots, counts, media,
//! invite and receipt hashes) is stored only as ciphertext under a random
//! key of the poll's own ([`DataKey`]), which is itself stored only wrapped
//! under a day key of the [`Keyring`](crate::keyring::Keyring). Once the key
//! state has moved past that day, every copy of the poll (a backup, an old
//! WAL, a replica) is noise.
//!
//! Promises:
//! - XChaCha20-Poly1305 (RustCrypto) with a fresh random 192-bit nonce per
//!   ciphertext, so random nonces are safe at any volume;
//! - each ciphertext is bound to its place ([`Place`]: the poll, the table,
//!   the row's key and the column) as associated data: moved to another
//!   row, column or poll, it fails to open;
//! - lengths are padded to [`bucket`]s before sealing, so a ciphertext's
//!   length tells its content's length only to within 1/8;
//! - hashes that someone holding a code or a receipt could look up
//!   ([`DataKey::mac`], [`MacKey`]) are keyed under a key of the poll: an
//!   old copy cannot be checked against a code someone kept once that key
//!   is gone;
//! - keys are zeroized in memory when dropped; failures to open are errors,
//!   never a panic.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use zeroize::Zeroizing;

use std::sync::{Mutex, PoisonError};

use crate::day::Day;
use crate::keyring::{RingId, SecretKey};
use crate::secret::random_bytes;

/// Nonce and tag added to every sealed plaintext.
pub const OVERHEAD: usize = NONCE + TAG;
const NONCE: usize = 24;
const TAG: usize = 16;
/// Where a sealed value's nonce ends (it comes first) and how long its tag
/// is (it comes last).
pub const NONCE_LEN: usize = NONCE;
pub const TAG_LEN: usize = TAG;

/// Where a ciphertext lives; its associated data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Polls,
    Ballots,
    Media,
}

impl Table {
    fn tag(self) -> &'static [u8] {
        match self {
            Table::Polls => b"polls",
            Table::Ballots => b"ballots",
            Table::Media => b"media",
        }
    }
}

/// The place a ciphertext is bound to: poll, table, row key, column.
pub struct Place(Vec<u8>);

impl Place {
    pub fn new(table: Table, poll: &str, row: &[u8], column: &str) -> Place {
        let mut v = Vec::with_capacity(48 + row.len());
        v.extend_from_slice(b"anonpoll sealed v1\0");
        for part in [table.tag(), poll.as_bytes(), row, column.as_bytes()] {
            // Length-prefixed, so no two places share their bytes.
            v.extend_from_slice(&(part.len() as u32).to_le_bytes());
            v.extend_from_slice(part);
        }
        Place(v)
    }

    /// The same place, one piece of a value stored in `count` pieces.
    fn piece(&self, index: u32, count: u32) -> Vec<u8> {
        let mut v = self.0.clone();
        v.extend_from_slice(&index.to_le_bytes());
        v.extend_from_slice(&count.to_le_bytes());
        v
    }
}

/// A ciphertext that does not open: the wrong key or place, or damage.
#[derive(Debug)]
pub struct Unsealed;

impl std::fmt::Display for Unsealed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a sealed value does not open with its key at its place")
    }
}

impl std::error::Error for Unsealed {}

fn cipher(key: &[u8; 32]) -> XChaCha20Poly1305 {
    // A 32-byte key is the only length there is: this cannot fail.
    XChaCha20Poly1305::new_from_slice(key).unwrap_or_else(|_| unreachable!("XChaCha20-Poly1305 takes 32-byte keys"))
}

fn seal_with(key: &[u8; 32], aad: &[u8], plaintext: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut nonce = [0u8; NONCE];
    random_bytes(&mut nonce)?;
    let sealed = cipher(key)
        .encrypt(&XNonce::from(nonce), Payload { msg: plaintext, aad })
        .map_err(|_| anyhow::anyhow!("sealing failed"))?;
    let mut out = Vec::with_capacity(NONCE + sealed.len());
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&sealed);
    Ok(out)
}

fn open_with(key: &[u8; 32], aad: &[u8], sealed: &[u8]) -> Result<Zeroizing<Vec<u8>>, Unsealed> {
    if sealed.len() < OVERHEAD {
        return Err(Unsealed);
    }
    let (nonce, body) = sealed.split_at(NONCE);
    let nonce = XNonce::try_from(nonce).map_err(|_| Unsealed)?;
    cipher(key).decrypt(&nonce, Payload { msg: body, aad }).map(Zeroizing::new).map_err(|_| Unsealed)
}

/// A poll's own random key. Everything of the poll is sealed under it.
pub struct DataKey {
    key: SecretKey,
    /// Each purpose's HMAC, keyed once (HKDF and the key schedule are 6 of
    /// the 8 SHA-256 blocks of a short [`DataKey::mac`]; a vote with a
    /// receipt takes three): it lives as long as the key, which the writer
    /// keeps for the polls it counts. At most one per purpose, and the
    /// purposes are the store's own constants.
    macs: Mutex<Vec<(&'static [u8], Hmac<Sha256>)>>,
}

impl DataKey {
    fn new(key: SecretKey) -> DataKey {
        DataKey { key, macs: Mutex::new(Vec::new()) }
    }

    pub fn generate() -> anyhow::Result<DataKey> {
        let mut key = Zeroizing::new([0u8; 32]);
        random_bytes(key.as_mut_slice())?;
        Ok(DataKey::new(key))
    }

    /// The key's bytes, to be kept inside another sealed value (a media
    /// item's key in its poll's document).
    pub fn export(&self) -> SecretKey {
        self.key.clone()
    }

    /// A key [`DataKey::export`] gave.
    pub fn import(key: &[u8; 32]) -> DataKey {
        DataKey::new(Zeroizing::new(*key))
    }

    /// The key of one `purpose`'s keyed hashes ([`DataKey::mac`]), to be
    /// kept where it must outlive this data key: the hashes made with it
    /// stay the same, and it tells nothing of this key.
    pub fn mac_key(&self, purpose: &[u8]) -> MacKey {
        MacKey(self.subkey(purpose))
    }

    fn wrap_aad(ring: &RingId, poll: &str, day: Day) -> Vec<u8> {
        let mut aad = b"anonpoll data key v1\0".to_vec();
        aad.extend_from_slice(ring);
        aad.extend_from_slice(poll.as_bytes());
        aad.push(0);
        aad.extend_from_slice(day.to_string().as_bytes());
        aad
    }

    /// This key sealed under `wrap` (the wrap key of `day`), bound to the
    /// key file's ring, the poll and the day.
    pub fn wrap(&self, wrap: &SecretKey, ring: &RingId, poll: &str, day: Day) -> anyhow::Result<Vec<u8>> {
        seal_with(wrap, &DataKey::wrap_aad(ring, poll, day), self.key.as_slice())
    }

    /// The key [`DataKey::wrap`] sealed.
    pub fn unwrap(wrapped: &[u8], wrap: &SecretKey, ring: &RingId, poll: &str, day: Day) -> Result<DataKey, Unsealed> {
        let plain = open_with(wrap, &DataKey::wrap_aad(ring, poll, day), wrapped)?;
        let key: [u8; 32] = plain.as_slice().try_into().map_err(|_| Unsealed)?;
        Ok(DataKey::new(Zeroizing::new(key)))
    }

    /// `plaintext` sealed at `place`.
    pub fn seal(&self, place: &Place, plaintext: &[u8]) -> anyhow::Result<Vec<u8>> {
        seal_with(&self.key, &place.0, plaintext)
    }

    /// What [`DataKey::seal`] sealed at `place`.
    pub fn open(&self, place: &Place, sealed: &[u8]) -> Result<Zeroizing<Vec<u8>>, Unsealed> {
        open_with(&self.key, &place.0, sealed)
    }

    /// A hash of `input` keyed under this poll's key for one `purpose`:
    /// HMAC-SHA256 under HKDF(data key, purpose).
    pub fn mac(&self, purpose: &'static [u8], input: &[&[u8]]) -> [u8; 32] {
        let mut mac = {
            // Each use is a lookup or a push: the list stays consistent.
            let mut macs = self.macs.lock().unwrap_or_else(PoisonError::into_inner);
            match macs.iter().find(|(p, _)| *p == purpose) {
                Some((_, keyed)) => keyed.clone(),
                None => {
                    let keyed = self.keyed_mac(purpose);
                    macs.push((purpose, keyed.clone()));
                    keyed
                }
            }
        };
        for part in input {
            mac.update(part);
        }
        mac.finalize().into_bytes().into()
    }

    /// The HMAC of `purpose`, keyed with HKDF(data key, purpose).
    fn keyed_mac(&self, purpose: &[u8]) -> Hmac<Sha256> {
        hmac_with(&self.subkey(purpose))
    }

    /// HKDF(data key, purpose): the key of one purpose's hashes.
    fn subkey(&self, purpose: &[u8]) -> SecretKey {
        let mut sub = Zeroizing::new([0u8; 32]);
        let mut info = b"anonpoll mac v1 ".to_vec();
        info.extend_from_slice(purpose);
        // 32 uniformly random bytes are a valid PRK; 32 bytes of output
        // are within HKDF's bound.
        if let Ok(h) = Hkdf::<Sha256>::from_prk(self.key.as_slice()) {
            let _ = h.expand(&info, sub.as_mut_slice());
        }
        sub
    }

    /// A value of `len` bytes (already padded) sealed in pieces of
    /// [`PIECE`] bytes, each bound to its place, its index and the count,
    /// so that a range can be opened without the rest, and no piece can be
    /// dropped, moved or repeated.
    pub fn seal_pieces(&self, place: &Place, plaintext: &[u8]) -> anyhow::Result<Vec<u8>> {
        let count = plaintext.len().div_ceil(PIECE).max(1);
        let count32 = u32::try_from(count)?;
        let mut out = Vec::with_capacity(plaintext.len() + count * OVERHEAD);
        for (i, piece) in plaintext.chunks(PIECE).enumerate() {
            out.extend(seal_with(&self.key, &place.piece(i as u32, count32), piece)?);
        }
        if plaintext.is_empty() {
            out.extend(seal_with(&self.key, &place.piece(0, 1), &[])?);
        }
        Ok(out)
    }

    /// Piece `index` of a value of `padded` bytes sealed by
    /// [`DataKey::seal_pieces`], from the `sealed` bytes of that piece
    /// ([`piece_span`] says where they lie).
    pub fn open_piece(
        &self,
        place: &Place,
        padded: usize,
        index: usize,
        sealed: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>, Unsealed> {
        let count = u32::try_from(padded.div_ceil(PIECE).max(1)).map_err(|_| Unsealed)?;
        let index = u32::try_from(index).map_err(|_| Unsealed)?;
        if index >= count {
            return Err(Unsealed);
        }
        open_with(&self.key, &place.piece(index, count), sealed)
    }
}

fn hmac_with(key: &[u8; 32]) -> Hmac<Sha256> {
    <Hmac<Sha256> as hmac::KeyInit>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"))
}

/// A key of keyed hashes that must outlive the data key it began under:
/// an invite code's hash (`sealed` invite rows are never rewritten when
/// the poll's data key changes), or the hashes that found a ballot of a
/// receipt before the poll's data key changed. Kept sealed in the poll's
/// document; zeroized when dropped.
#[derive(Clone)]
pub struct MacKey(SecretKey);

impl MacKey {
    pub fn generate() -> anyhow::Result<MacKey> {
        let mut key = Zeroizing::new([0u8; 32]);
        random_bytes(key.as_mut_slice())?;
        Ok(MacKey(key))
    }

    pub fn from_bytes(key: &[u8; 32]) -> MacKey {
        MacKey(Zeroizing::new(*key))
    }

    pub fn bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// HMAC-SHA256 of the concatenated `input` under this key.
    pub fn mac(&self, input: &[&[u8]]) -> [u8; 32] {
        let mut mac = hmac_with(&self.0);
        for part in input {
            mac.update(part);
        }
        mac.finalize().into_bytes().into()
    }
}

impl std::fmt::Debug for MacKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MacKey(..)")
    }
}

/// The plaintext length of each piece of a value sealed in pieces.
pub const PIECE: usize = 64 * 1024;

/// Where piece `index` of a value of `padded` plaintext bytes lies in its
/// sealed bytes: offset and length.
pub fn piece_span(padded: usize, index: usize) -> (usize, usize) {
    let start = index * PIECE;
    let len = padded.saturating_sub(start).min(PIECE);
    (index * (PIECE + OVERHEAD), len + OVERHEAD)
}

/// The length a value of `n` bytes is padded to before it is sealed: the
/// smallest `m * 2^k >= n` with `m` in 8..=15, and at least 64. A sealed
/// length tells its content's only to within one eighth.
pub fn bucket(n: usize) -> usize {
    let n = n.max(64);
    let k = (usize::BITS - n.leading_zeros()).saturating_sub(4);
    let unit = 1usize << k;
    n.div_ceil(unit) * unit
}

/// `bytes` padded with `fill` to `len` (which is at least its length).
pub fn padded(mut bytes: Vec<u8>, len: usize, fill: u8) -> Vec<u8> {
    if bytes.len() < len {
        bytes.resize(len, fill);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_round_up_by_at_most_an_eighth() {
        assert_eq!(bucket(0), 64);
        assert_eq!(bucket(64), 64);
        assert_eq!(bucket(65), 72);
        let mut last = 0;
        for n in 1..200_000 {
            let b = bucket(n);
            assert!(b >= n && b >= last, "{n}");
            assert!(n < 64 || (b - n) * 8 <= n, "{n} -> {b}");
            last = b;
        }
        // Few distinct lengths: 3 bits of mantissa.
        let distinct: std::collections::BTreeSet<usize> = (1..1_000_000).map(bucket).collect();
        assert!(distinct.len() < 130, "{}", distinct.len());
    }

    #[test]
    fn a_sealed_value_opens_only_at_its_place_and_under_its_key() {
        let k = DataKey::generate().unwrap();
        let other = DataKey::generate().unwrap();
        let here = Place::new(Table::Ballots, "POLL", b"row-key", "sealed");
        let sealed = k.seal(&here, b"secret ballot").unwrap();
        assert_eq!(sealed.len(), 13 + OVERHEAD);
        assert_eq!(k.open(&here, &sealed).unwrap().as_slice(), b"secret ballot");
        assert!(!sealed.windows(6).any(|w| w == b"secret"));
        for elsewhere in [
            Place::new(Table::Polls, "POLL", b"row-key", "sealed"),
            Place::new(Table::Ballots, "POLM", b"row-key", "sealed"),
            Place::new(Table::Ballots, "POLL", b"row-kez", "sealed"),
            Place::new(Table::Ballots, "POLL", b"row-key", "tallies"),
            // The length prefixes keep shifted boundaries apart.
            Place::new(Table::Ballots, "POL", b"Lrow-key", "sealed"),
        ] {
            assert!(k.open(&elsewhere, &sealed).is_err());
        }
        assert!(other.open(&here, &sealed).is_err());
        let mut flipped = sealed.clone();
        flipped[30] ^= 1;
        assert!(k.open(&here, &flipped).is_err());
        assert!(k.open(&here, &sealed[..10]).is_err());
        assert_ne!(sealed, k.seal(&here, b"secret ballot").unwrap(), "fresh nonce each time");
    }

    #[test]
    fn a_data_key_unwraps_only_with_its_day_key_ring_and_poll() {
        let dir = tempfile::tempdir().unwrap();
        let ring =
            crate::keyring::Keyring::create(&dir.path().join("k"), 7, Day::parse("2026-01-10").unwrap()).unwrap();
        let d = Day::parse("2026-01-12").unwrap();
        let w = ring.wrap_key(d).unwrap();
        let k = DataKey::generate().unwrap();
        let wrapped = k.wrap(&w, &ring.ring(), "POLL", d).unwrap();
        let back = DataKey::unwrap(&wrapped, &w, &ring.ring(), "POLL", d).unwrap();
        let place = Place::new(Table::Polls, "POLL", b"", "body");
        assert_eq!(back.open(&place, &k.seal(&place, b"x").unwrap()).unwrap().as_slice(), b"x");
        let w2 = ring.wrap_key(d.next()).unwrap();
        assert!(DataKey::unwrap(&wrapped, &w2, &ring.ring(), "POLL", d).is_err());
        assert!(DataKey::unwrap(&wrapped, &w, &[0; 16], "POLL", d).is_err());
        assert!(DataKey::unwrap(&wrapped, &w, &ring.ring(), "POLM", d).is_err());
        assert!(DataKey::unwrap(&wrapped, &w, &ring.ring(), "POLL", d.next()).is_err());
    }

    #[test]
    fn pieces_open_one_by_one_and_only_in_their_place() {
        let k = DataKey::generate().unwrap();
        let place = Place::new(Table::Media, "POLL", b"MEDIA", "bytes");
        let plain: Vec<u8> = (0..(2 * PIECE + 1000)).map(|i| (i % 251) as u8).collect();
        let sealed = k.seal_pieces(&place, &plain).unwrap();
        assert_eq!(sealed.len(), plain.len() + 3 * OVERHEAD);
        for i in 0..3 {
            let (off, len) = piece_span(plain.len(), i);
            let piece = k.open_piece(&place, plain.len(), i, &sealed[off..off + len]).unwrap();
            assert_eq!(piece.as_slice(), &plain[i * PIECE..(i * PIECE + PIECE).min(plain.len())]);
        }
        let (off0, len0) = piece_span(plain.len(), 0);
        assert!(k.open_piece(&place, plain.len(), 1, &sealed[off0..off0 + len0]).is_err(), "moved piece");
        assert!(k.open_piece(&place, 2 * PIECE, 0, &sealed[off0..off0 + len0]).is_err(), "shortened value");
        assert!(k.open_piece(&place, plain.len(), 3, &sealed[off0..off0 + len0]).is_err());
    }

    #[test]
    fn macs_are_keyed_per_poll_and_purpose() {
        let a = DataKey::generate().unwrap();
        let b = DataKey::generate().unwrap();
        assert_eq!(a.mac(b"invite", &[b"code"]), a.mac(b"invite", &[b"code"]));
        assert_ne!(a.mac(b"invite", &[b"code"]), b.mac(b"invite", &[b"code"]));
        assert_ne!(a.mac(b"invite", &[b"code"]), a.mac(b"receipt", &[b"code"]));
    }

    /// The keyed HMAC kept per purpose gives what HKDF then HMAC from the
    /// key itself give, on the first use and every later one, whatever the
    /// order of purposes: what was stored before the cache still matches.
    #[test]
    fn a_kept_mac_gives_what_a_fresh_one_gives() {
        let raw = [7u8; 32];
        let key = DataKey::new(Zeroizing::new(raw));
        let fresh = |purpose: &[u8], input: &[&[u8]]| -> [u8; 32] {
            let mut sub = [0u8; 32];
            let info = [b"anonpoll mac v1 ".as_slice(), purpose].concat();
            Hkdf::<Sha256>::from_prk(&raw).unwrap().expand(&info, &mut sub).unwrap();
            let mut mac = <Hmac<Sha256> as hmac::KeyInit>::new_from_slice(&sub).unwrap();
            for part in input {
                mac.update(part);
            }
            mac.finalize().into_bytes().into()
        };
        for (purpose, input) in [
            (b"invite".as_slice(), [b"a".as_slice(), b"b"]),
            (b"receipt staged", [b"r1", b""]),
            (b"invite", [b"c", b"d"]),
            (b"receipt staged", [b"r2", b"x"]),
        ] {
            let purpose: &'static [u8] = if purpose == b"invite" { b"invite" } else { b"receipt staged" };
            assert_eq!(key.mac(purpose, &input), fresh(purpose, &input));
        }
        assert_eq!(key.macs.lock().unwrap().len(), 2, "one keyed HMAC per purpose");
    }

    /// A purpose's key taken out of the data key hashes as the data key
    /// does for that purpose, and as nothing else: hashes stored before it
    /// was taken out are still found with it.
    #[test]
    fn a_mac_key_taken_out_hashes_as_its_data_key_did() {
        let key = DataKey::generate().unwrap();
        let invite = key.mac_key(b"invite");
        assert_eq!(invite.mac(&[b"code"]), key.mac(b"invite", &[b"code"]));
        assert_ne!(invite.mac(&[b"code"]), key.mac(b"receipt staged", &[b"code"]));
        let back = MacKey::from_bytes(invite.bytes());
        assert_eq!(back.mac(&[b"co", b"de"]), invite.mac(&[b"code"]));
        assert_ne!(MacKey::generate().unwrap().mac(&[b"code"]), invite.mac(&[b"code"]));
        let moved = DataKey::import(&key.export());
        let place = Place::new(Table::Ballots, "P", b"k", "sealed");
        assert_eq!(moved.open(&place, &key.seal(&place, b"x").unwrap()).unwrap().as_slice(), b"x");
    }
}
