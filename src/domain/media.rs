//! A poll's media as the domain sees them: its slots, the text each needs,
//! and an item as listed or about to be stored.

use super::*;

/// Alt text of an image, or caption of audio or video: required for an
/// image (a picture without a text alternative shuts out blind voters),
/// optional otherwise.
pub const ALT: TextRule = TextRule { max_chars: 300 };

/// Where a media item belongs: to the poll itself, or to one of its questions.
/// A poll has at most one item per slot (a new one replaces the old).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Slot {
    Poll,
    Question(usize),
}

impl Slot {
    /// The slot for a stored `question` column (NULL: the poll's own).
    pub fn from_question(q: Option<i64>) -> Option<Slot> {
        match q {
            None => Some(Slot::Poll),
            Some(i) => usize::try_from(i).ok().filter(|&i| i < QUESTIONS.max).map(Slot::Question),
        }
    }

    pub fn question(self) -> Option<usize> {
        match self {
            Slot::Poll => None,
            Slot::Question(i) => Some(i),
        }
    }
}

/// Checks an alt text or caption for a media item of `kind`; returns it trimmed.
pub fn check_alt(kind: crate::media::Kind, text: &str) -> Result<String, Problem> {
    let trimmed = text.trim_matches(is_blank);
    if trimmed.is_empty() {
        return if kind == crate::media::Kind::Image { Err(Problem::Required) } else { Ok(String::new()) };
    }
    ALT.check_text(trimmed)
}

/// A media item of a poll, as listed; its bytes are read only when served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaItem {
    pub id: crate::secret::MediaId,
    pub slot: Slot,
    pub kind: crate::media::Kind,
    pub mime: String,
    pub size: u64,
    pub sha256: [u8; 32],
    pub alt: String,
    pub width: Option<u32>,
    pub height: Option<u32>,
}

/// A cleaned upload about to be stored with its poll.
#[derive(Clone, Debug)]
pub struct NewMedia {
    pub id: crate::secret::MediaId,
    pub slot: Slot,
    pub clean: std::sync::Arc<crate::media::Clean>,
    /// Checked with [`check_alt`].
    pub alt: String,
}
