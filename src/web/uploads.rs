//! Files people attach on the web forms, from the request to the store.
//!
//! Why a staging area: the creation form works without script, so adding a
//! question, a validation error or a missing alt text sends the page back to
//! the browser, which forgets every file chosen in it. Each good upload is
//! therefore cleaned once and held here, in memory only, under a random
//! one-time reference that the form carries in a hidden field; sending the
//! form again reuses it. Nothing is written to disk before the poll exists.
//!
//! Promises:
//! - an upload is cleaned (`media::sanitize`: type by content, full parse,
//!   metadata stripped) before it is held or stored; the client's file name
//!   and type never get here (`multipart.rs` drops them);
//! - bounded: at most [`CONCURRENT`] uploads are cleaned at once (decoding
//!   an image takes memory), the staging area holds at most
//!   `staging_bytes`, one client (IPv4 address or IPv6 /64) at most a
//!   [`PER_CLIENT`] share of it, and an entry is forgotten after
//!   [`STAGING_TTL`] or as soon as it is replaced or removed; the space
//!   is checked before the costly cleaning;
//! - the client is known only as an HMAC of its address group with an
//!   in-memory key of the hour (`keyed.rs`), as for the creation limit;
//! - a reference names one cleaned file and nothing else; it is 128 random
//!   bits, and is forgotten once its poll is created.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::client::ClientGroup;
use crate::i18n::Catalogue;
use crate::keyed::{Generations, Key};
use crate::media::{Clean, Kind, Limits, Rejection};

/// Uploads cleaned at the same time; more wait for none and get "busy".
pub const CONCURRENT: usize = 2;
/// How long a cleaned upload is held for a form that is being filled in.
pub const STAGING_TTL: Duration = Duration::from_secs(3600);
/// The share of the staging area one client may fill: one full form's worth
/// at the default sizes, so that nobody can lock everyone else out.
pub const PER_CLIENT: usize = 4;

/// Why an upload was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UploadError {
    Rejected(Rejection),
    /// Too many uploads are being cleaned right now.
    Busy,
    /// The staging area is full.
    Full,
    /// This client holds its whole share of the staging area.
    Quota,
    /// The form refers to a held file that is no longer held (expired, or
    /// the server restarted).
    Lost,
}

/// A cleaned upload held for a form, by reference.
#[derive(Clone, Debug)]
pub struct Staged {
    pub reference: String,
    pub clean: Arc<Clean>,
}

struct Entry {
    clean: Arc<Clean>,
    since: Instant,
    owner: Key,
}

/// The staging area and the keys that tell its clients apart.
struct Held {
    entries: HashMap<String, Entry>,
    owners: Generations<()>,
}

impl Held {
    fn forget_old(&mut self) {
        self.entries.retain(|_, e| e.since.elapsed() < STAGING_TTL);
        self.owners.rotate(Instant::now());
    }

    fn bytes(&self) -> usize {
        self.entries.values().map(|e| e.clean.bytes.len()).sum()
    }

    /// Bytes held for `client`, whichever generation keyed them.
    fn bytes_of(&self, client: ClientGroup) -> usize {
        let keys: Vec<Key> = std::iter::once(&self.owners.current)
            .chain(self.owners.previous.as_ref())
            .map(|g| g.key(&[client.as_bytes()]))
            .collect();
        self.entries.values().filter(|e| keys.contains(&e.owner)).map(|e| e.clean.bytes.len()).sum()
    }
}

pub struct Uploads {
    pub limits: Limits,
    /// Largest multipart body read (the sum of a form's files and fields).
    pub body_limit: usize,
    staging_bytes: usize,
    held: Mutex<Held>,
    cleaning: AtomicUsize,
}

/// Releases a cleaning slot when dropped, even if cleaning panicked.
struct Slot<'a>(&'a AtomicUsize);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Uploads {
    pub fn new(limits: Limits, body_limit: usize, staging_bytes: usize) -> anyhow::Result<Uploads> {
        let held = Held { entries: HashMap::new(), owners: Generations::new(STAGING_TTL, Instant::now())? };
        Ok(Uploads { limits, body_limit, staging_bytes, held: Mutex::new(held), cleaning: AtomicUsize::new(0) })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.forget_old();
        held
    }

    /// Whether `n` more bytes fit for `client`: within its share of the
    /// staging area ([`UploadError::Quota`] if not) and within the whole
    /// area ([`UploadError::Full`] if not).
    fn check_space(&self, held: &Held, client: ClientGroup, n: usize) -> Result<(), UploadError> {
        if held.bytes_of(client).saturating_add(n) > self.staging_bytes / PER_CLIENT {
            return Err(UploadError::Quota);
        }
        if held.bytes().saturating_add(n) > self.staging_bytes {
            return Err(UploadError::Full);
        }
        Ok(())
    }

    /// Cleans one file uploaded by `client` and holds it for the form.
    pub fn take(&self, bytes: &[u8], client: ClientGroup) -> Result<Staged, UploadError> {
        // The space first (the cleaned file is about the size of the
        // upload): cleaning costs time and memory, and is not spent on a
        // refusal.
        self.check_space(&self.lock(), client, bytes.len())?;
        if self.cleaning.fetch_add(1, Ordering::AcqRel) >= CONCURRENT {
            self.cleaning.fetch_sub(1, Ordering::AcqRel);
            return Err(UploadError::Busy);
        }
        let slot = Slot(&self.cleaning);
        let clean = crate::media::sanitize(bytes, &self.limits).map_err(UploadError::Rejected)?;
        drop(slot);
        self.hold(Arc::new(clean), client)
    }

    fn hold(&self, clean: Arc<Clean>, client: ClientGroup) -> Result<Staged, UploadError> {
        let mut raw = [0u8; 16];
        crate::secret::random_bytes(&mut raw).map_err(|_| UploadError::Busy)?;
        let reference = URL_SAFE_NO_PAD.encode(raw);
        let mut held = self.lock();
        self.check_space(&held, client, clean.bytes.len())?;
        let owner = held.owners.current.key(&[client.as_bytes()]);
        held.entries.insert(reference.clone(), Entry { clean: clean.clone(), since: Instant::now(), owner });
        Ok(Staged { reference, clean })
    }

    /// The file held under `reference`.
    pub fn held(&self, reference: &str) -> Result<Staged, UploadError> {
        self.lock()
            .entries
            .get(reference)
            .map(|e| Staged { reference: reference.to_owned(), clean: e.clean.clone() })
            .ok_or(UploadError::Lost)
    }

    /// The cleaned picture held under `reference`, for its thumbnail on the
    /// form (`GET /held/{reference}`): pictures only (a held sound or video
    /// is never served), and only for a reference of the shape
    /// `Uploads::hold` makes, so that nothing else is even looked up.
    pub fn held_picture(&self, reference: &str) -> Option<Arc<Clean>> {
        if !is_reference(reference) {
            return None;
        }
        self.lock().entries.get(reference).filter(|e| e.clean.kind == Kind::Image).map(|e| e.clean.clone())
    }

    /// Forgets held files once they are stored or no longer wanted.
    pub fn release<'a>(&self, references: impl IntoIterator<Item = &'a str>) {
        let mut held = self.lock();
        for r in references {
            held.entries.remove(r);
        }
    }

    /// Forgets expired entries and keys on a quiet server too (a timer calls it).
    pub fn tick(&self) {
        drop(self.lock());
    }

    /// Bytes held right now (for tests and the operator's view).
    pub fn held_bytes(&self) -> usize {
        self.lock().bytes()
    }
}

/// Whether `s` has the shape of a reference: 16 random bytes in URL-safe
/// base64 without padding (22 characters).
pub fn is_reference(s: &str) -> bool {
    s.len() == 22 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// What a form's slot (the poll's, or one question's) ends up holding.
#[derive(Clone, Debug, Default)]
pub struct SlotDraft {
    pub staged: Option<Staged>,
    pub alt: String,
    /// A problem with the file (shown next to the file field).
    pub error: Option<UploadError>,
}

impl SlotDraft {
    /// Reads one slot of `form` (fields `{prefix}`, `{prefix}-held`,
    /// `{prefix}-alt`): a newly chosen file replaces the held one, which is
    /// then forgotten.
    pub fn read(uploads: &Uploads, form: &super::form::Form, prefix: &str, client: ClientGroup) -> SlotDraft {
        let alt = form.text(&format!("{prefix}-alt"));
        if let Some(bytes) = form.file(prefix) {
            return match uploads.take(bytes, client) {
                Ok(s) => {
                    if let Some(old) = form.get(&format!("{prefix}-held")) {
                        uploads.release([old]);
                    }
                    SlotDraft { staged: Some(s), alt, error: None }
                }
                Err(e) => {
                    // A bad new file leaves the previously held one in place.
                    let previous = form.get(&format!("{prefix}-held")).and_then(|r| uploads.held(r).ok());
                    SlotDraft { staged: previous, alt, error: Some(e) }
                }
            };
        }
        match form.get(&format!("{prefix}-held")).filter(|r| !r.is_empty()) {
            None => SlotDraft { staged: None, alt, error: None },
            Some(r) => match uploads.held(r) {
                Ok(s) => SlotDraft { staged: Some(s), alt, error: None },
                Err(e) => SlotDraft { staged: None, alt, error: Some(e) },
            },
        }
    }

    pub fn is_empty(&self) -> bool {
        self.staged.is_none() && self.error.is_none()
    }
}

/// The kind's name in the reader's language.
pub fn kind_name(t: &Catalogue, kind: Kind) -> &'static str {
    match kind {
        Kind::Image => t.media_kind_names[0],
        Kind::Audio => t.media_kind_names[1],
        Kind::Video => t.media_kind_names[2],
    }
}

/// Bytes as whole mebibytes, rounded down (limits are whole MiB by default).
pub fn mib(bytes: usize) -> u64 {
    (bytes / (1024 * 1024)) as u64
}

/// The message for an upload problem, in the reader's language.
pub fn message(t: &Catalogue, e: &UploadError) -> String {
    match e {
        UploadError::Busy => t.err_media_busy.to_owned(),
        UploadError::Full => t.err_media_full.to_owned(),
        UploadError::Quota => t.err_media_quota.to_owned(),
        UploadError::Lost => t.err_media_lost.to_owned(),
        UploadError::Rejected(r) => match r {
            Rejection::Empty => t.err_media_empty.to_owned(),
            Rejection::UnsupportedType => t.err_media_type.to_owned(),
            Rejection::TooLarge { kind, limit } => (t.err_media_too_large)(kind_name(t, *kind), mib(*limit)),
            Rejection::TooManyPixels { limit } => (t.err_media_pixels)(limit / 1_000_000),
            Rejection::Corrupt { .. } => t.err_media_corrupt.to_owned(),
            Rejection::UnsupportedCodec { .. } => t.err_media_codec.to_owned(),
        },
    }
}

/// A size for people: "120 kB", "3.4 MB".
pub fn human_size(bytes: usize) -> String {
    if bytes < 1000 * 1000 { format!("{} kB", bytes.div_ceil(1000)) } else { format!("{:.1} MB", bytes as f64 / 1e6) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(n: usize) -> Arc<Clean> {
        Arc::new(Clean { kind: Kind::Image, mime: "image/png", bytes: vec![7; n], width: Some(1), height: Some(1) })
    }

    fn client(n: u8) -> ClientGroup {
        ClientGroup::of(std::net::IpAddr::from([192, 0, 2, n]))
    }

    #[test]
    fn held_files_are_bounded_per_client_and_in_all_and_released() {
        let u = Uploads::new(Limits::default(), 1 << 20, 400).unwrap();
        let a = u.hold(clean(60), client(1)).unwrap();
        assert_eq!(u.held(&a.reference).unwrap().clean.bytes.len(), 60);
        assert_eq!(u.hold(clean(60), client(1)).unwrap_err(), UploadError::Quota, "over one client's share");
        assert_eq!(u.held("not-a-reference").unwrap_err(), UploadError::Lost);
        for n in 2..=6 {
            u.hold(clean(60), client(n)).unwrap();
        }
        assert_eq!(u.hold(clean(60), client(7)).unwrap_err(), UploadError::Full, "over the whole area");
        u.release([a.reference.as_str()]);
        assert_eq!(u.held(&a.reference).unwrap_err(), UploadError::Lost);
        assert_eq!(u.held_bytes(), 300);
        let b = u.hold(clean(60), client(1)).unwrap();
        assert_ne!(a.reference, b.reference);
        assert_eq!(b.reference.len(), 22);
        assert!(is_reference(&b.reference));
    }

    #[test]
    fn only_held_pictures_are_served_by_reference() {
        let u = Uploads::new(Limits::default(), 1 << 20, 1 << 20).unwrap();
        let picture = u.hold(clean(10), client(1)).unwrap();
        let sound =
            Arc::new(Clean { kind: Kind::Audio, mime: "audio/ogg", bytes: vec![1; 10], width: None, height: None });
        let sound = u.hold(sound, client(1)).unwrap();
        assert_eq!(u.held_picture(&picture.reference).unwrap().bytes.len(), 10);
        assert!(u.held_picture(&sound.reference).is_none(), "a sound is no picture");
        for bad in ["", "short", "../../etc/passwd", &format!("{}=", picture.reference), &picture.reference[..21]] {
            assert!(!is_reference(bad) && u.held_picture(bad).is_none(), "{bad}");
        }
        u.release([picture.reference.as_str()]);
        assert!(u.held_picture(&picture.reference).is_none(), "released");
    }

    #[test]
    fn bad_uploads_are_refused_before_being_held() {
        let u = Uploads::new(Limits::default(), 1 << 20, 1 << 20).unwrap();
        let e = u.take(b"<html><script>alert(1)</script></html>", client(1)).unwrap_err();
        assert_eq!(e, UploadError::Rejected(Rejection::UnsupportedType));
        assert_eq!(u.held_bytes(), 0);
        assert_eq!(u.cleaning.load(Ordering::Acquire), 0, "the cleaning slot is given back");
    }
}
