//! A poll's settled ballots lie in groups, each sealed under a key of its
//! own; the keys, with each group's count and digest, are one sealed value
//! of the poll ([`Groups`]), sealed under the poll's data key.
//!
//! Why groups: the mix (`writer::mix`) must leave nothing at rest that
//! tells a new ballot from the others (on PostgreSQL every row keeps the
//! transaction that wrote it), and must put what the files kept of the
//! window under a key that dies. Rewriting the whole poll at each mix does
//! both, at a cost that grows with the poll: 60-75 ms of the writer per
//! vote on a poll of 10,000 ballots voted on once a second
//! (bench/results/2026-12-05-issue36-whole-mix). A mix rewrites only the groups its
//! new ballots go to, under new group keys: a new ballot is then one of
//! its group's ballots (all written by one transaction), and the mix costs
//! a group's size per new ballot at most, whatever the poll's size.
//!
//! A poll has `2^bits` groups, `bits` growing with its ballots so that a
//! group holds [`GROUP`] to twice as many ballots on average (one group,
//! the whole poll, below twice [`GROUP`]). A ballot with a tag (a receipt)
//! lies in the group its tag's first bits name, so that a receipt finds
//! its ballot with one lookup; others go to a group drawn at random.
//!
//! Layout of the value: the format byte, `bits`, then per group its key
//! (32 bytes, zeros while it has none), the digest of its rows (as
//! `keys::Digest`), its count (u32) and whether a change took a ballot
//! out of it since its last rewrite (its key then still opens the old
//! answers in what the files kept, so the next mix rewrites it).

use crate::error::Error;

use super::super::keys::Digest;
use super::super::seal::DataKey;
use super::corrupt;

/// The ballots a group holds on average, at least: the smallest set a new
/// ballot is hidden in once its poll has more than twice as many.
pub const GROUP: u64 = 256;

/// The most groups a poll has (2^15: a group's number fits two bytes of a
/// ballot's key, below the staged byte).
pub const MAX_BITS: u8 = 15;

const FORMAT: u8 = 1;
const ENTRY: usize = 32 + Digest::LEN + 4 + 1;

/// One group of a poll's settled ballots.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    /// The key its ballots are sealed under; `None` before it has any.
    pub key: Option<[u8; 32]>,
    /// The digest of its rows (the poll's counts carry the digest of all).
    pub digest: Digest,
    pub count: u32,
    /// A ballot was taken out since its last rewrite.
    pub dirty: bool,
}

impl Group {
    pub fn data_key(&self) -> Option<DataKey> {
        self.key.as_ref().map(DataKey::import)
    }
}

/// A poll's groups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Groups {
    pub bits: u8,
    pub groups: Vec<Group>,
}

impl Default for Groups {
    fn default() -> Groups {
        Groups { bits: 0, groups: vec![Group::default()] }
    }
}

impl Groups {
    /// Empty groups, `2^bits` of them.
    pub fn with_bits(bits: u8) -> Groups {
        Groups { bits, groups: vec![Group::default(); 1 << bits] }
    }

    /// The bits a poll of `ballots` settled ballots has groups for: each
    /// holding [`GROUP`] to twice as many on average.
    pub fn bits_for(ballots: u64) -> u8 {
        let groups = (ballots / GROUP).max(1);
        (groups.ilog2() as u8).min(MAX_BITS)
    }

    /// The group a ballot of tag `tag` lies in.
    pub fn of_tag(&self, tag: &[u8; 16]) -> usize {
        if self.bits == 0 {
            return 0;
        }
        usize::from(u16::from_be_bytes([tag[0], tag[1]]) >> (16 - self.bits))
    }

    /// The group a key of a settled ballot names (its first two bytes).
    pub fn of_key(&self, key: &[u8]) -> Option<usize> {
        let n = usize::from(u16::from_be_bytes([*key.first()?, *key.get(1)?]));
        (n < self.groups.len()).then_some(n)
    }

    /// The first and last possible keys of group `g`'s ballots.
    pub fn range(g: usize) -> ([u8; 16], [u8; 16]) {
        let prefix = u16::try_from(g).unwrap_or(u16::MAX).to_be_bytes();
        let mut lo = [0u8; 16];
        let mut hi = [0xffu8; 16];
        lo[..2].copy_from_slice(&prefix);
        hi[..2].copy_from_slice(&prefix);
        (lo, hi)
    }

    /// The sum of every group's digest: the poll's settled ballots'.
    pub fn digest(&self) -> Digest {
        let mut d = Digest::default();
        for g in &self.groups {
            d.merge(&g.digest, true);
        }
        d
    }

    pub fn count(&self) -> u64 {
        self.groups.iter().map(|g| u64::from(g.count)).sum()
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(2 + self.groups.len() * ENTRY);
        out.push(FORMAT);
        out.push(self.bits);
        for g in &self.groups {
            out.extend_from_slice(g.key.as_ref().unwrap_or(&[0; 32]));
            out.extend_from_slice(&g.digest.to_bytes());
            out.extend_from_slice(&g.count.to_le_bytes());
            out.push(u8::from(g.dirty));
        }
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Groups, Error> {
        let bad = || corrupt("ballot groups");
        let (&[FORMAT, bits], rest) = bytes.split_first_chunk::<2>().ok_or_else(bad)? else { return Err(bad()) };
        if bits > MAX_BITS || rest.len() != ENTRY << bits {
            return Err(bad());
        }
        let groups = rest
            .chunks_exact(ENTRY)
            .map(|e| {
                let key: [u8; 32] = e[..32].try_into().map_err(|_| bad())?;
                let digest: [u8; 32] = e[32..64].try_into().map_err(|_| bad())?;
                let count = u32::from_le_bytes(e[64..68].try_into().map_err(|_| bad())?);
                let dirty = match e[68] {
                    0 => false,
                    1 => true,
                    _ => return Err(bad()),
                };
                Ok(Group { key: (key != [0; 32]).then_some(key), digest: Digest::from_bytes(&digest), count, dirty })
            })
            .collect::<Result<_, Error>>()?;
        Ok(Groups { bits, groups })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_grow_with_the_poll_and_round_trip() {
        assert_eq!(Groups::bits_for(0), 0);
        assert_eq!(Groups::bits_for(511), 0);
        assert_eq!(Groups::bits_for(512), 1);
        assert_eq!(Groups::bits_for(10_000), 5, "39 groups of 256 round down to 32");
        assert_eq!(Groups::bits_for(u64::MAX), MAX_BITS);
        let mut g = Groups::with_bits(3);
        assert_eq!(g.groups.len(), 8);
        g.groups[5] = Group { key: Some([7; 32]), digest: Digest::of([(&b"k"[..], &b"v"[..])]), count: 3, dirty: true };
        assert_eq!(Groups::from_bytes(&g.to_bytes()).unwrap(), g);
        assert!(Groups::from_bytes(&g.to_bytes()[..40]).is_err());
        // A tag's first bits name its group; a key's first two bytes.
        assert_eq!(g.of_tag(&[0b1010_0000; 16]), 0b101);
        let (lo, hi) = Groups::range(5);
        assert_eq!((g.of_key(&lo), g.of_key(&hi)), (Some(5), Some(5)));
        assert_eq!(g.of_key(&[0xff; 16]), None, "a staged key names no group");
        assert_eq!(Groups::default().of_tag(&[0xff; 16]), 0);
    }
}
