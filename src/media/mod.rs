//! The upload sanitizer: turns the bytes a voter's browser sent into bytes we are
//! willing to store and serve, or says why not.
//!
//! Promises, for every input (see the per-format modules for the details):
//! - the type is decided from the content only (magic bytes, then a full parse of the
//!   format), never from a file name or a client's Content-Type;
//! - the byte limit of the kind is checked on the raw input before any parse, and image
//!   dimensions are checked from the header before any pixel is decoded;
//! - what comes out carries no metadata that could identify a person, a device or a
//!   place (EXIF, XMP, IPTC, GPS, comments, tags, titles, dates), and no bytes that the
//!   format does not account for (polyglot tails are dropped or refused);
//! - it never panics and never trusts a length field without checking it.
//!
//! Storage, HTTP and serving live elsewhere; this module only works on byte slices.
//!
//! Where things are: `sniff` (magic bytes → which parser), `image` (JPEG, PNG, WebP:
//! decode and re-encode), `gif` (frame-by-frame rewrite), `mp3` (frame walk), `ogg`
//! (page rewrite), `isobmff` (MP4/M4A, in place), `webm` (in place), `bytes` (checked
//! reads). Each module's documentation says what it guarantees and what it refuses.

mod bytes;
mod gif;
mod image;
mod isobmff;
mod mp3;
mod ogg;
mod sniff;
mod webm;

#[cfg(test)]
mod tests;

use std::fmt;

/// The three kinds of media a poll may carry; each has its own byte limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Image,
    Audio,
    Video,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Image => "image",
            Kind::Audio => "audio",
            Kind::Video => "video",
        }
    }

    // Named as the web layer asked; returns an Option, so it is not `FromStr`.
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(s: &str) -> Option<Kind> {
        match s {
            "image" => Some(Kind::Image),
            "audio" => Some(Kind::Audio),
            "video" => Some(Kind::Video),
            _ => None,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

const MIB: usize = 1024 * 1024;

/// How much an upload may weigh, per kind, and how many pixels an image may have.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub image_bytes: usize,
    pub audio_bytes: usize,
    pub video_bytes: usize,
    /// Width × height of an image (or of a GIF's screen) checked before decoding.
    pub max_pixels: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { image_bytes: 10 * MIB, audio_bytes: 20 * MIB, video_bytes: 50 * MIB, max_pixels: 40_000_000 }
    }
}

impl Limits {
    /// The largest byte limit: what the HTTP layer may read before calling `sanitize`.
    pub fn largest(&self) -> usize {
        self.image_bytes.max(self.audio_bytes).max(self.video_bytes)
    }

    fn bytes_for(&self, kind: Kind) -> usize {
        match kind {
            Kind::Image => self.image_bytes,
            Kind::Audio => self.audio_bytes,
            Kind::Video => self.video_bytes,
        }
    }

    fn check_size(&self, kind: Kind, len: usize) -> Result<(), Rejection> {
        let limit = self.bytes_for(kind);
        if len > limit { Err(Rejection::TooLarge { kind, limit }) } else { Ok(()) }
    }
}

/// What is stored and served: metadata-free bytes whose type the server chose.
#[derive(Debug)]
pub struct Clean {
    pub kind: Kind,
    pub mime: &'static str,
    pub bytes: Vec<u8>,
    pub width: Option<u32>,
    pub height: Option<u32>,
}

/// Why an upload was refused. No free text: the web layer translates each case into en/fr/de/it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    Empty,
    /// Not one of the allowed formats by content (incl. SVG, HTML, PDF, HEIC, ...).
    UnsupportedType,
    /// Bytes over the kind's limit.
    TooLarge {
        kind: Kind,
        limit: usize,
    },
    /// Decompression-bomb guard, checked from the header before decoding.
    TooManyPixels {
        limit: u64,
    },
    /// Truncated, fails the full parse, or polyglot trailing data that cannot be dropped safely.
    Corrupt {
        kind: Kind,
    },
    /// A container we take holding a codec we do not (MP4 with HEVC, Ogg with FLAC, AVI, ...).
    UnsupportedCodec {
        kind: Kind,
    },
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::Empty => f.write_str("the upload is empty"),
            Rejection::UnsupportedType => f.write_str("the upload is not an allowed image, audio or video format"),
            Rejection::TooLarge { kind, limit } => write!(f, "the {kind} is larger than the limit of {limit} bytes"),
            Rejection::TooManyPixels { limit } => write!(f, "the image has more than {limit} pixels"),
            Rejection::Corrupt { kind } => write!(f, "the {kind} is truncated or damaged"),
            Rejection::UnsupportedCodec { kind } => write!(f, "the {kind} uses a codec that is not allowed"),
        }
    }
}

impl std::error::Error for Rejection {}

/// Decides the type from content, fully parses, strips metadata. Never panics on any input.
pub fn sanitize(input: &[u8], limits: &Limits) -> Result<Clean, Rejection> {
    if input.is_empty() {
        return Err(Rejection::Empty);
    }
    let format = sniff::sniff(input)?;
    limits.check_size(format.kind_hint(), input.len())?;
    let clean = match format {
        sniff::Format::Jpeg | sniff::Format::Png | sniff::Format::Webp => image::sanitize(format, input, limits)?,
        sniff::Format::Gif => gif::sanitize(input, limits)?,
        sniff::Format::IsoBmff { .. } => isobmff::sanitize(input, format.kind_hint())?,
        sniff::Format::Mp3 => mp3::sanitize(input)?,
        sniff::Format::Ogg => ogg::sanitize(input)?,
        sniff::Format::Webm => webm::sanitize(input)?,
    };
    // A container's kind is only known after the parse (an MP4 without video is audio).
    limits.check_size(clean.kind, input.len())?;
    Ok(clean)
}
