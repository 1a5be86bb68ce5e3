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

/// The letters of invite codes and receipts: Crockford's base 32 (no I, L, O or U, so a
/// code read aloud or typed from paper is not mistaken).
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A code that people read, type and paste: `$len` random letters of
/// [`CROCKFORD`], shown in groups of four, read back whatever the case,
/// spaces, hyphens (and the typographic dashes and invisible characters a
/// code pasted from a word processor brings), with O, I and L read as 0, 1
/// and 1. Its `Debug` never shows it.
macro_rules! crockford_code {
    ($(#[$doc:meta])* $name:ident, $len:expr) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq)]
        pub struct $name(String);

        impl $name {
            pub fn generate() -> anyhow::Result<$name> {
                crockford_generate($len).map($name)
            }

            /// The code as a person may type or paste it.
            pub fn parse(s: &str) -> Option<$name> {
                crockford_parse(s, $len).map($name)
            }

            /// The code as shown and printed: groups of four, `7K3M-…`.
            pub fn expose(&self) -> String {
                grouped(&self.0)
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(concat!(stringify!($name), "(<redacted>)"))
            }
        }
    };
}

/// Letters of an invite code: 20 of 32, 100 random bits.
pub const INVITE_CODE_LEN: usize = 20;

crockford_code!(
    /// An invite code: one ballot on one poll (`duplicateCheck: invite`). Its
    /// text is shown once, to the admin who issues it; only its hash is stored.
    InviteCode,
    INVITE_CODE_LEN
);

impl InviteCode {
    pub fn hash(&self) -> InviteHash {
        InviteHash(Sha256::digest(self.0.as_bytes()).into())
    }
}

/// Letters of a receipt: 24 of 32, 120 random bits. Longer than an invite
/// code, so that one typed into the other's field is told apart by shape.
pub const RECEIPT_LEN: usize = 24;

crockford_code!(
    /// A voter's receipt: lets its holder see, change or withdraw the one
    /// ballot it came with while the poll is open (`voteChanges`). Random, and
    /// never derived from anything else (an invite code above all: whoever
    /// handed out codes must not be able to read ballots). Shown once, to the
    /// voter; only its hash is stored, as the ballot's key.
    Receipt,
    RECEIPT_LEN
);

impl Receipt {
    /// SHA-256 of the receipt under a label of its own, so that no stored
    /// receipt hash can ever equal another kind of stored hash.
    pub fn hash(&self) -> ReceiptHash {
        let mut h = Sha256::new();
        h.update(b"anonpoll receipt\0");
        h.update(self.0.as_bytes());
        ReceiptHash(h.finalize().into())
    }
}

/// `len` random letters of [`CROCKFORD`].
fn crockford_generate(len: usize) -> anyhow::Result<String> {
    let mut b = vec![0u8; len];
    random_bytes(&mut b)?;
    Ok(b.iter().map(|x| char::from(CROCKFORD[usize::from(x & 31)])).collect())
}

/// A code of `len` letters of [`CROCKFORD`] as a person may type it (see
/// [`crockford_code`]), in its canonical form.
fn crockford_parse(s: &str, len: usize) -> Option<String> {
    let ignored = |c: char| {
        c.is_whitespace()
            || matches!(c, '-' | '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{00ad}' | '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}')
    };
    let code: String = s
        .chars()
        .filter(|c| !ignored(*c))
        .map(|c| match c.to_ascii_uppercase() {
            'O' => '0',
            'I' | 'L' => '1',
            c => c,
        })
        .collect();
    (code.len() == len && code.bytes().all(|b| CROCKFORD.contains(&b))).then_some(code)
}

/// Groups of four letters joined by hyphens.
fn grouped(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    chars.chunks(4).map(|c| c.iter().collect::<String>()).collect::<Vec<_>>().join("-")
}

/// The stored form of a [`Receipt`]. 120 random bits: it cannot be turned
/// back.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ReceiptHash(pub [u8; 32]);

impl std::fmt::Debug for ReceiptHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReceiptHash(..)")
    }
}

/// SHA-256 of an invite code: the only form in which a code is stored. The
/// code has 100 random bits, so the hash cannot be turned back.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct InviteHash(pub [u8; 32]);

impl std::fmt::Debug for InviteHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InviteHash(..)")
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
    fn invite_codes_read_back_as_people_type_them() {
        let code = InviteCode::generate().unwrap();
        let printed = code.expose();
        assert_eq!(printed.len(), INVITE_CODE_LEN + 4);
        assert_eq!(InviteCode::parse(&printed), Some(code.clone()));
        assert_eq!(InviteCode::parse(&printed.to_lowercase().replace('-', " ")), Some(code.clone()));
        // Pasted from a word processor: en dashes, a soft hyphen, a zero-width space.
        let pasted = format!("{}\u{ad}\u{200b}", printed.replace('-', "\u{2013}"));
        assert_eq!(InviteCode::parse(&pasted), Some(code.clone()));
        assert_eq!(
            InviteCode::parse("oooo-iiii-llll-0000-1111").map(|c| c.expose()),
            Some("0000-1111-1111-0000-1111".into())
        );
        for bad in ["", "ABCD", "UUUU-UUUU-UUUU-UUUU-UUUU", "0000-0000-0000-0000-00000", "ÄÄÄÄ-0000-0000-0000-0000"]
        {
            assert_eq!(InviteCode::parse(bad), None, "{bad}");
        }
        assert_eq!(code.hash(), InviteCode::parse(&printed).unwrap().hash());
        assert_ne!(code.hash(), InviteCode::generate().unwrap().hash());
    }

    #[test]
    fn receipts_read_back_and_are_told_apart_from_invite_codes() {
        let receipt = Receipt::generate().unwrap();
        let shown = receipt.expose();
        assert_eq!(shown.len(), RECEIPT_LEN + 5);
        assert_eq!(Receipt::parse(&shown), Some(receipt.clone()));
        assert_eq!(Receipt::parse(&format!(" {} ", shown.to_lowercase())), Some(receipt.clone()));
        // One kind of code is never read as the other.
        let invite = InviteCode::generate().unwrap();
        assert_eq!(Receipt::parse(&invite.expose()), None);
        assert_eq!(InviteCode::parse(&shown), None);
        // The stored hash is labelled: not the plain SHA-256 an invite code gets.
        assert_ne!(receipt.hash().0, <[u8; 32]>::from(Sha256::digest(receipt.0.as_bytes())));
        assert_eq!(receipt.hash(), Receipt::parse(&shown).unwrap().hash());
        assert_ne!(receipt.hash(), Receipt::generate().unwrap().hash());
        assert!(!format!("{receipt:?}").contains(&receipt.0));
    }

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
