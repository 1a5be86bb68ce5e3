//! Byte-level helpers shared by the HTTP client, the database scanners and
//! the privacy tests: substring search in raw bytes, unique markers to
//! search for, and the encodings a secret might leak in (hex, SHA-256,
//! base64url).

use std::sync::atomic::{AtomicU32, Ordering};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

static SEQ: AtomicU32 = AtomicU32::new(1);

/// A number no other call in this test process returns.
pub(crate) fn next_seq() -> u32 {
    SEQ.fetch_add(1, Ordering::Relaxed)
}

/// Index of the first occurrence of `needle` in `hay`.
pub fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    if hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

pub fn contains_bytes(hay: &[u8], needle: &[u8]) -> bool {
    find_bytes(hay, needle).is_some()
}

/// A marker unlikely to occur anywhere by chance.
pub fn unique_marker(tag: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let n = next_seq();
    format!("ZQX{tag}marker{nanos:x}q{n}W")
}

pub fn sha256(bytes: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).to_vec()
}

pub fn hex(bytes: &[u8]) -> String {
    anonpoll::secret::hex(bytes)
}

/// Decode base64url without padding (the adminToken alphabet); `None` for
/// anything else, including padding and non-canonical trailing bits.
pub fn base64url_decode(s: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(s).ok()
}
