//! Poll ids, admin tokens and the hashing that keeps tokens out of storage.
//!
//! Promises: ids carry 96 random bits and tokens 256, both from the operating
//! system's CSPRNG; a token is only ever stored as its SHA-256 and compared in
//! constant time.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::TryRng as _;
use rand::rngs::SysRng;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Length of a poll id: 12 random bytes in base64url.
pub const POLL_ID_LEN: usize = 16;
/// Length of an admin token: 32 random bytes in base64url.
pub const TOKEN_LEN: usize = 43;

/// Fills `buf` from the OS CSPRNG. Failing to get randomness is not something a
/// poll service can work around, so the caller gets an error to answer 500 with.
pub fn random_bytes(buf: &mut [u8]) -> anyhow::Result<()> {
    SysRng.try_fill_bytes(buf).map_err(|e| anyhow::anyhow!("OS random generator failed: {e}"))
}

fn is_url_safe(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A poll's public identifier (unguessable, URL-safe).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PollId(String);

/// 96 random bits in base64url: the shape of every public identifier.
fn random_id() -> anyhow::Result<String> {
    let mut b = [0u8; 12];
    random_bytes(&mut b)?;
    Ok(URL_SAFE_NO_PAD.encode(b))
}

fn is_id(s: &str) -> bool {
    s.len() == POLL_ID_LEN && is_url_safe(s)
}

impl PollId {
    pub fn generate() -> anyhow::Result<PollId> {
        Ok(PollId(random_id()?))
    }

    /// Accepts only the shape [`PollId::generate`] produces.
    pub fn parse(s: &str) -> Option<PollId> {
        is_id(s).then(|| PollId(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for PollId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A media item's public identifier: random like a poll id, and unrelated to
/// its poll's id or its content, so a media URL tells nothing of either.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MediaId(String);

impl MediaId {
    pub fn generate() -> anyhow::Result<MediaId> {
        Ok(MediaId(random_id()?))
    }

    pub fn parse(s: &str) -> Option<MediaId> {
        is_id(s).then(|| MediaId(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A freshly generated admin token. Its text leaves the process exactly once,
/// in the creation response; `Debug` never shows it.
pub struct AdminToken(String);

impl AdminToken {
    pub fn generate() -> anyhow::Result<AdminToken> {
        let mut b = [0u8; 32];
        random_bytes(&mut b)?;
        Ok(AdminToken(URL_SAFE_NO_PAD.encode(b)))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn hash(&self) -> TokenHash {
        TokenHash::of(&self.0)
    }
}

impl std::fmt::Debug for AdminToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AdminToken(<redacted>)")
    }
}

/// SHA-256 of an admin token: the only form in which a token is stored.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenHash(pub [u8; 32]);

impl TokenHash {
    pub fn of(token: &str) -> TokenHash {
        TokenHash(Sha256::digest(token.as_bytes()).into())
    }

    pub fn from_slice(b: &[u8]) -> Option<TokenHash> {
        <[u8; 32]>::try_from(b).ok().map(TokenHash)
    }

    /// Constant-time check of a presented token against this stored hash.
    /// Hashing first makes the comparison length-independent as well.
    pub fn matches(&self, presented: &str) -> bool {
        let candidate = TokenHash::of(presented);
        bool::from(self.0.ct_eq(&candidate.0))
    }
}

impl std::fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenHash(..)")
    }
}

/// Lower-case hexadecimal of `bytes` (ETags of content hashes).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_tokens_have_their_shape_and_differ() {
        let a = PollId::generate().unwrap();
        let b = PollId::generate().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), POLL_ID_LEN);
        assert!(PollId::parse(a.as_str()).is_some());
        assert!(PollId::parse("short").is_none());
        assert!(PollId::parse("abcdefghijklmno/").is_none());
        let t = AdminToken::generate().unwrap();
        assert_eq!(t.expose().len(), TOKEN_LEN);
        assert!(!format!("{t:?}").contains(t.expose()));
    }

    #[test]
    fn token_hash_matches_only_its_token() {
        let t = AdminToken::generate().unwrap();
        let h = t.hash();
        assert!(h.matches(t.expose()));
        assert!(!h.matches(""));
        assert!(!h.matches(&t.expose()[1..]));
        let other = AdminToken::generate().unwrap();
        assert!(!h.matches(other.expose()));
        assert_eq!(h.0, <[u8; 32]>::from(Sha256::digest(t.expose().as_bytes())));
    }
}
