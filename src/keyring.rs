//! The key state behind crypto-erasure: a forward-secure chain of day keys,
//! kept in one small file (`--keys`).
//!
//! Why: deleting rows erases a poll from the files polld writes, but not from
//! a backup, a replica or recycled WAL segments. So every byte of a poll is
//! sealed under the poll's own data key, and that key is stored only
//! wrapped under the key of one day (`store::seal`). This module holds the
//! day keys: `chain[d+1] = HKDF(chain[d], "next")`, `wrap[d] = HKDF(chain[d],
//! "wrap")`. A process holds `chain[today]` only: it derives any later day's
//! key, never an earlier one, so once the state has moved past a day, every
//! data key wrapped under that day is gone from every copy at once.
//!
//! Promises:
//! - the file is created once, with a fresh random chain and a random ring
//!   id that binds it to its database; it is never created over a database
//!   that already has one (that would lose every poll);
//! - it moves forward only ([`Keyring::advance`]), in place, under an
//!   exclusive lock: the new state goes to the file's other slot and is
//!   synced before the old slot is overwritten with zeros, so a crash at any
//!   point leaves a readable state no later than the database needs;
//! - a missing, truncated, foreign, corrupted or newer-version file is a
//!   [`KeyError`] naming the file; nothing is created or changed then;
//! - keys are zeroized in memory when replaced or dropped, and never logged
//!   (`Debug` shows the day only).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{PoisonError, RwLock};

use hkdf::Hkdf;
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::day::Day;
use crate::secret::random_bytes;

/// A 32-byte secret that is wiped from memory when dropped.
pub type SecretKey = Zeroizing<[u8; 32]>;

/// Identifies a key file and the database it belongs to.
pub type RingId = [u8; 16];

const MAGIC: &[u8; 8] = b"ANONKEYS";
const VERSION: u8 = 1;
const HEADER: usize = 32;
/// A slot: the day as `YYYY-MM-DD`, six zero bytes, the chain key, and a
/// check over the header and all of that.
const SLOT: usize = 64;
const SLOT_CHECK: usize = 48;
/// The whole file: a header and two slots.
pub const KEY_FILE_LEN: usize = HEADER + 2 * SLOT;

/// The lease's default length, in days (`--key-lease-days`): as long as
/// the backup rotation docs/OPERATIONS.md recommends.
pub const DEFAULT_LEASE_DAYS: u16 = 7;
/// The longest lease allowed: a poll lives at most 730 days anyway.
pub const MAX_LEASE_DAYS: u16 = 365;

/// Why a key file cannot be used. Each names the file.
#[derive(Debug)]
pub enum KeyError {
    /// No file, while the database already has polls sealed under one.
    Missing(PathBuf),
    /// Not the length of a key file.
    Truncated(PathBuf, u64),
    /// Not an anonpoll key file at all.
    NotAKeyFile(PathBuf),
    /// Written by a newer anonpoll.
    Version(PathBuf, u8),
    /// Neither slot holds a state that checks out.
    Corrupted(PathBuf),
    /// A key file of another database.
    WrongDatabase(PathBuf),
    /// Readable or writable by others than its owner (its mode).
    Exposed(PathBuf, u32),
    /// Behind the day the database's key state has reached: an old copy
    /// (restored from a backup, say).
    Behind { path: PathBuf, file: Day, database: Day },
    /// Reading, creating or writing it failed.
    Io(PathBuf, std::io::Error),
}

impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyError::Missing(p) => write!(
                f,
                "key file {} is missing, but the database holds polls sealed under it; without it they cannot \
                 be read. Restore the key file (copied from a live node, never from a backup) or point --keys \
                 at it; a new one is never created over an existing database",
                p.display()
            ),
            KeyError::Truncated(p, n) => write!(
                f,
                "key file {} is {n} bytes long, not {KEY_FILE_LEN}: it is truncated or not a key file",
                p.display()
            ),
            KeyError::NotAKeyFile(p) => write!(f, "{} is not an anonpoll key file", p.display()),
            KeyError::Version(p, v) => {
                write!(
                    f,
                    "key file {} has version {v}, newer than this anonpoll ({VERSION}): upgrade anonpoll",
                    p.display()
                )
            }
            KeyError::Corrupted(p) => {
                write!(f, "key file {} is corrupted: neither of its slots checks out", p.display())
            }
            KeyError::WrongDatabase(p) => write!(f, "key file {} belongs to another database", p.display()),
            KeyError::Exposed(p, mode) => write!(
                f,
                "key file {} has mode {mode:04o}: others than its owner can read it, and with it any copy of \
                 the database. Fix it with: chmod 600 {}",
                p.display(),
                p.display()
            ),
            KeyError::Behind { path, file, database } => write!(
                f,
                "key file {} is at {file}, but the database's key state has reached {database}: this is an old \
                 copy of the key file (from a backup?), and whoever kept it can read every backup it reaches. \
                 Use the current key file (on several nodes: copy it from a live node, docs/OPERATIONS.md); if \
                 this node was merely down, start it once with --accept-old-key-file",
                path.display()
            ),
            KeyError::Io(p, e) => write!(f, "key file {}: {e}", p.display()),
        }
    }
}

impl std::error::Error for KeyError {}

/// One step of the chain: what a day's state is.
struct Chain {
    day: Day,
    key: SecretKey,
    /// The wrap keys of `day ..= day + cached`, derived once per state.
    wraps: Vec<SecretKey>,
}

impl Chain {
    fn new(day: Day, key: SecretKey, cached: u16) -> Chain {
        let mut wraps = Vec::with_capacity(usize::from(cached) + 1);
        let mut k = key.clone();
        for _ in 0..=cached {
            wraps.push(expand(&k, b"anonpoll chain v1 wrap"));
            k = expand(&k, b"anonpoll chain v1 next");
        }
        Chain { day, key, wraps }
    }

    /// The chain key of `day` (not before this state's day).
    fn chain_key(&self, day: Day) -> Option<SecretKey> {
        let steps = day.days_since(self.day);
        if steps < 0 {
            return None;
        }
        let mut k = self.key.clone();
        for _ in 0..steps {
            k = expand(&k, b"anonpoll chain v1 next");
        }
        Some(k)
    }

    fn wrap_key(&self, day: Day) -> Option<SecretKey> {
        let steps = usize::try_from(day.days_since(self.day)).ok()?;
        match self.wraps.get(steps) {
            Some(k) => Some(k.clone()),
            None => self.chain_key(day).map(|k| expand(&k, b"anonpoll chain v1 wrap")),
        }
    }
}

/// HKDF-Expand with a 32-byte uniformly random key as the PRK.
fn expand(prk: &[u8; 32], info: &[u8]) -> SecretKey {
    let mut out = Zeroizing::new([0u8; 32]);
    // A 32-byte PRK is valid for SHA-256 and 32 bytes of output are well
    // within HKDF's bound: neither can fail.
    if let Ok(h) = Hkdf::<Sha256>::from_prk(prk) {
        let _ = h.expand(info, out.as_mut_slice());
    }
    out
}

/// The day keys of one database.
pub struct Keyring {
    path: PathBuf,
    ring: RingId,
    lease: u16,
    chain: RwLock<Chain>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Keyring({}, day {})", self.path.display(), self.day())
    }
}

impl Keyring {
    /// Reads the key file at `path`; refuses one that others than its
    /// owner may read or write.
    pub fn open(path: &Path, lease: u16) -> Result<Keyring, KeyError> {
        let mut file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(KeyError::Missing(path.to_owned())),
            Err(e) => return Err(KeyError::Io(path.to_owned(), e)),
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = file.metadata().map_err(|e| KeyError::Io(path.to_owned(), e))?.permissions().mode() & 0o7777;
            if mode & 0o077 != 0 {
                return Err(KeyError::Exposed(path.to_owned(), mode));
            }
        }
        let (ring, day, key) = read_state(&mut file, path)?;
        Ok(Keyring { path: path.to_owned(), ring, lease, chain: RwLock::new(Chain::new(day, key, lease + 2)) })
    }

    /// Creates a key file at `path` with a fresh random chain starting
    /// `today`; fails if the file exists. Readable by its owner only.
    pub fn create(path: &Path, lease: u16, today: Day) -> Result<Keyring, KeyError> {
        let io = |e| KeyError::Io(path.to_owned(), e);
        let mut ring = [0u8; 16];
        let mut key = Zeroizing::new([0u8; 32]);
        random_bytes(&mut ring).map_err(|e| io(std::io::Error::other(e.to_string())))?;
        random_bytes(key.as_mut_slice()).map_err(|e| io(std::io::Error::other(e.to_string())))?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            create_private_dir(dir).map_err(io)?;
        }
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(path).map_err(io)?;
        let mut bytes = Zeroizing::new([0u8; KEY_FILE_LEN]);
        bytes[..HEADER].copy_from_slice(&header(&ring));
        let slot = slot_bytes(&bytes[..HEADER], today, &key);
        bytes[HEADER..HEADER + SLOT].copy_from_slice(slot.as_slice());
        file.write_all(bytes.as_slice()).and_then(|()| file.sync_all()).map_err(io)?;
        sync_dir(path).map_err(io)?;
        Ok(Keyring { path: path.to_owned(), ring, lease, chain: RwLock::new(Chain::new(today, key, lease + 2)) })
    }

    /// The file this keyring reads and advances.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The id that binds the key file to its database.
    pub fn ring(&self) -> RingId {
        self.ring
    }

    /// Fails with [`KeyError::WrongDatabase`] unless `ring` is this file's.
    pub fn check_ring(&self, ring: &RingId) -> Result<(), KeyError> {
        if subtle::ConstantTimeEq::ct_eq(&self.ring[..], &ring[..]).into() {
            Ok(())
        } else {
            Err(KeyError::WrongDatabase(self.path.clone()))
        }
    }

    /// The lease, in days.
    pub fn lease(&self) -> u16 {
        self.lease
    }

    /// The day of the chain state held: no key of an earlier day exists here.
    pub fn day(&self) -> Day {
        self.chain.read().unwrap_or_else(PoisonError::into_inner).day
    }

    /// The day under whose key a poll whose last live day is `last_live`
    /// is wrapped `today`: the lease `min(last_live, today + L)`, but never
    /// a day whose key is already gone here.
    pub fn lease_day(&self, last_live: Day, today: Day) -> Day {
        std::cmp::max(self.day(), std::cmp::min(last_live, today.plus_days(self.lease)))
    }

    /// The key that wraps data keys leased until `day`; `None` once the
    /// state has moved past it (those data keys are erased).
    pub fn wrap_key(&self, day: Day) -> Option<SecretKey> {
        self.chain.read().unwrap_or_else(PoisonError::into_inner).wrap_key(day)
    }

    /// The key of `day` for one purpose other than wrapping (`label`: e.g.
    /// the vote forms' tokens), derived from that day's chain key; `None`
    /// for a day before the state.
    pub fn day_key(&self, day: Day, label: &[u8]) -> Option<SecretKey> {
        let chain = self.chain.read().unwrap_or_else(PoisonError::into_inner).chain_key(day)?;
        let mut info = b"anonpoll chain v1 purpose ".to_vec();
        info.extend_from_slice(label);
        Some(expand(&chain, &info))
    }

    /// Moves the state forward to `to`, in memory and in the file, and
    /// forgets every earlier key. Call it only once nothing stored needs a
    /// key before `to` (every live poll re-wrapped). Never moves back: a
    /// `to` at or before the state is nothing to do, and a file another
    /// process moved further is left as it is. True if the state moved.
    pub fn advance(&self, to: Day) -> Result<bool, KeyError> {
        let io = |e| KeyError::Io(self.path.clone(), e);
        let mut chain = self.chain.write().unwrap_or_else(PoisonError::into_inner);
        if to <= chain.day {
            return Ok(false);
        }
        let Some(key) = chain.chain_key(to) else { return Ok(false) };
        let mut file = OpenOptions::new().read(true).write(true).open(&self.path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound { KeyError::Missing(self.path.clone()) } else { io(e) }
        })?;
        // Another process (pollctl beside polld) may advance the same file.
        file.lock().map_err(io)?;
        let bytes = read_bytes(&mut file, &self.path)?;
        let (ring, slots) = parse(&bytes, &self.path)?;
        self.check_ring(&ring)?;
        let current =
            slots.iter().enumerate().filter_map(|(i, s)| s.as_ref().map(|(d, _)| (i, *d))).max_by_key(|x| x.1);
        let Some((current, file_day)) = current else { return Err(KeyError::Corrupted(self.path.clone())) };
        if file_day < to {
            let other = 1 - current;
            let slot = slot_bytes(&bytes[..HEADER], to, &key);
            write_at(&mut file, HEADER + other * SLOT, slot.as_slice()).map_err(io)?;
            file.sync_all().map_err(io)?;
            write_at(&mut file, HEADER + current * SLOT, &[0u8; SLOT]).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        let _ = file.unlock();
        let cached = self.lease + 2;
        // The old chain key and wrap keys are zeroized as they drop here.
        *chain = Chain::new(to, key, cached);
        Ok(true)
    }
}

fn header(ring: &RingId) -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[..8].copy_from_slice(MAGIC);
    h[8] = VERSION;
    h[9..25].copy_from_slice(ring);
    h
}

fn slot_bytes(header: &[u8], day: Day, key: &[u8; 32]) -> Zeroizing<[u8; SLOT]> {
    let mut slot = Zeroizing::new([0u8; SLOT]);
    slot[..10].copy_from_slice(day.to_string().as_bytes());
    slot[16..48].copy_from_slice(key);
    let check = slot_check(header, &slot[..SLOT_CHECK]);
    slot[SLOT_CHECK..].copy_from_slice(&check);
    slot
}

fn slot_check(header: &[u8], body: &[u8]) -> [u8; SLOT - SLOT_CHECK] {
    let digest = Sha256::new().chain_update(b"anonpoll key slot\0").chain_update(header).chain_update(body).finalize();
    let mut out = [0u8; SLOT - SLOT_CHECK];
    out.copy_from_slice(&digest[..SLOT - SLOT_CHECK]);
    out
}

type Slot = Option<(Day, SecretKey)>;

fn read_bytes(file: &mut File, path: &Path) -> Result<Zeroizing<Vec<u8>>, KeyError> {
    let io = |e| KeyError::Io(path.to_owned(), e);
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    let mut bytes = Zeroizing::new(Vec::with_capacity(KEY_FILE_LEN));
    // One byte more than a key file: a longer file is refused, not cut.
    file.take(KEY_FILE_LEN as u64 + 1).read_to_end(&mut bytes).map_err(io)?;
    Ok(bytes)
}

/// The header's ring and the two slots (each `None` if it does not check out).
fn parse(bytes: &[u8], path: &Path) -> Result<(RingId, [Slot; 2]), KeyError> {
    if bytes.len() >= 8 && &bytes[..8] != MAGIC {
        return Err(KeyError::NotAKeyFile(path.to_owned()));
    }
    if bytes.len() != KEY_FILE_LEN {
        return Err(KeyError::Truncated(path.to_owned(), bytes.len() as u64));
    }
    if bytes[8] != VERSION {
        return Err(KeyError::Version(path.to_owned(), bytes[8]));
    }
    let mut ring = [0u8; 16];
    ring.copy_from_slice(&bytes[9..25]);
    let slot = |i: usize| -> Slot {
        let s = &bytes[HEADER + i * SLOT..HEADER + (i + 1) * SLOT];
        let check = slot_check(&bytes[..HEADER], &s[..SLOT_CHECK]);
        if !bool::from(subtle::ConstantTimeEq::ct_eq(&check[..], &s[SLOT_CHECK..])) {
            return None;
        }
        let day = std::str::from_utf8(&s[..10]).ok().and_then(Day::parse)?;
        let mut key = Zeroizing::new([0u8; 32]);
        key.copy_from_slice(&s[16..48]);
        Some((day, key))
    };
    Ok((ring, [slot(0), slot(1)]))
}

fn read_state(file: &mut File, path: &Path) -> Result<(RingId, Day, SecretKey), KeyError> {
    let bytes = read_bytes(file, path)?;
    let (ring, [a, b]) = parse(&bytes, path)?;
    let latest = match (a, b) {
        (Some(a), Some(b)) => Some(if b.0 > a.0 { b } else { a }),
        (a, b) => a.or(b),
    };
    let (day, key) = latest.ok_or_else(|| KeyError::Corrupted(path.to_owned()))?;
    Ok((ring, day, key))
}

fn write_at(file: &mut File, offset: usize, bytes: &[u8]) -> std::io::Result<()> {
    file.seek(SeekFrom::Start(offset as u64))?;
    file.write_all(bytes)
}

/// Creates `dir` (and its parents) readable by its owner only.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Makes a new file's directory entry durable.
fn sync_dir(path: &Path) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> Day {
        Day::parse(s).unwrap()
    }

    #[test]
    fn the_chain_derives_later_days_and_never_earlier_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k");
        let ring = Keyring::create(&path, 7, day("2026-01-10")).unwrap();
        let w12 = ring.wrap_key(day("2026-01-12")).unwrap();
        let far = ring.wrap_key(day("2026-03-01")).unwrap();
        assert!(ring.wrap_key(day("2026-01-09")).is_none());
        assert_ne!(*w12, *ring.wrap_key(day("2026-01-13")).unwrap());
        assert!(ring.advance(day("2026-01-12")).unwrap());
        assert_eq!(*ring.wrap_key(day("2026-01-12")).unwrap(), *w12, "the same key after advancing");
        assert_eq!(*ring.wrap_key(day("2026-03-01")).unwrap(), *far, "beyond the cache too");
        assert!(ring.wrap_key(day("2026-01-11")).is_none(), "gone after advancing");
        // Reopened from the file: the same state.
        let again = Keyring::open(&path, 7).unwrap();
        assert_eq!(again.day(), day("2026-01-12"));
        assert_eq!(*again.wrap_key(day("2026-01-12")).unwrap(), *w12);
        assert_eq!(again.ring(), ring.ring());
        // Never back.
        assert!(!again.advance(day("2026-01-11")).unwrap());
        assert_eq!(Keyring::open(&path, 7).unwrap().day(), day("2026-01-12"));
        // Purposes other than wrapping get keys of their own.
        let form = again.day_key(day("2026-01-12"), b"form").unwrap();
        assert_ne!(*form, *w12);
        assert!(again.day_key(day("2026-01-11"), b"form").is_none());
    }

    #[test]
    fn the_file_holds_only_the_current_chain_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k");
        let ring = Keyring::create(&path, 7, day("2026-01-10")).unwrap();
        let old = ring.chain.read().unwrap().key.clone();
        ring.advance(day("2026-01-11")).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), KEY_FILE_LEN);
        assert!(!bytes.windows(32).any(|w| w == &old[..]), "the old chain key is overwritten");
        let new = ring.chain.read().unwrap().key.clone();
        assert!(bytes.windows(32).any(|w| w == &new[..]));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
    }

    #[test]
    fn a_bad_file_is_a_clear_error_and_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k");
        assert!(matches!(Keyring::open(&path, 7), Err(KeyError::Missing(_))));
        let good = Keyring::create(&path, 7, day("2026-01-10")).unwrap();
        assert!(matches!(Keyring::create(&path, 7, day("2026-01-10")), Err(KeyError::Io(..))), "never over a file");
        let bytes = std::fs::read(&path).unwrap();
        let case = |name: &str, content: &[u8]| {
            use std::os::unix::fs::PermissionsExt;
            let p = dir.path().join(name);
            std::fs::write(&p, content).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
            let err = Keyring::open(&p, 7).unwrap_err();
            assert!(err.to_string().contains(&p.display().to_string()), "{err} names the file");
            assert_eq!(std::fs::read(&p).unwrap(), content, "untouched");
            err
        };
        assert!(matches!(case("short", &bytes[..100]), KeyError::Truncated(..)));
        assert!(matches!(case("empty", b""), KeyError::Truncated(..)));
        assert!(matches!(
            case("other", b"#!/bin/sh\necho this is not a key file at all, but it is long enough"),
            KeyError::NotAKeyFile(..)
        ));
        let mut v2 = bytes.clone();
        v2[8] = 2;
        assert!(matches!(case("v2", &v2), KeyError::Version(_, 2)));
        let mut flipped = bytes.clone();
        flipped[HEADER + 20] ^= 1;
        assert!(matches!(case("flipped", &flipped), KeyError::Corrupted(..)));
        let other = Keyring::create(&dir.path().join("k2"), 7, day("2026-01-10")).unwrap();
        assert!(matches!(good.check_ring(&other.ring()), Err(KeyError::WrongDatabase(_))));
        good.check_ring(&good.ring()).unwrap();
        // A key file that others may read is refused, and left as it is.
        use std::os::unix::fs::PermissionsExt;
        for mode in [0o640, 0o604, 0o660] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let err = Keyring::open(&path, 7).unwrap_err();
            assert!(matches!(err, KeyError::Exposed(_, m) if m == mode), "{mode:o}: {err}");
            assert!(err.to_string().contains("chmod 600"), "{err}");
            assert_eq!(std::fs::read(&path).unwrap(), bytes, "untouched");
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        Keyring::open(&path, 7).unwrap();
    }

    #[test]
    fn a_crash_while_advancing_leaves_a_usable_state() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k");
        let ring = Keyring::create(&path, 7, day("2026-01-10")).unwrap();
        let w10 = ring.wrap_key(day("2026-01-10")).unwrap();
        let w11 = ring.wrap_key(day("2026-01-11")).unwrap();
        let before = std::fs::read(&path).unwrap();
        ring.advance(day("2026-01-11")).unwrap();
        let after = std::fs::read(&path).unwrap();
        // Crash after the new slot was written, before the old was zeroed:
        // both slots valid, the later wins.
        let mut both = after.clone();
        both[HEADER..HEADER + SLOT].copy_from_slice(&before[HEADER..HEADER + SLOT]);
        std::fs::write(&path, &both).unwrap();
        assert_eq!(Keyring::open(&path, 7).unwrap().day(), day("2026-01-11"));
        // Crash while the new slot was half written: the old one stands.
        let mut torn = before.clone();
        torn[HEADER + SLOT..HEADER + SLOT + 20].copy_from_slice(&after[HEADER + SLOT..HEADER + SLOT + 20]);
        std::fs::write(&path, &torn).unwrap();
        let back = Keyring::open(&path, 7).unwrap();
        assert_eq!(back.day(), day("2026-01-10"));
        assert_eq!(*back.wrap_key(day("2026-01-10")).unwrap(), *w10);
        assert_eq!(*back.wrap_key(day("2026-01-11")).unwrap(), *w11);
    }

    #[test]
    fn the_lease_is_bounded_by_the_last_live_day_and_the_state() {
        let dir = tempfile::tempdir().unwrap();
        let ring = Keyring::create(&dir.path().join("k"), 7, day("2026-01-10")).unwrap();
        let today = day("2026-01-10");
        assert_eq!(ring.lease_day(day("2026-06-01"), today), day("2026-01-17"));
        assert_eq!(ring.lease_day(day("2026-01-12"), today), day("2026-01-12"));
        // A keyring moved ahead of the clock (a drill) never leases a gone day.
        ring.advance(day("2026-02-01")).unwrap();
        assert_eq!(ring.lease_day(day("2026-01-12"), today), day("2026-02-01"));
    }
}
