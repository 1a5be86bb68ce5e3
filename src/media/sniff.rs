//! Magic-byte recognition against the allow-list.
//!
//! Exists so that the type of an upload is decided by its first bytes and nothing
//! else. It only picks which parser will look at the file; a match here is not a
//! verdict, since every format is then fully parsed. Anything not on the list (HTML,
//! SVG, PDF, HEIC/AVIF, ZIP, ...) is `UnsupportedType`; a few well-known containers
//! whose codecs we do not take (AVI, WAV, Matroska) are `UnsupportedCodec`, which
//! tells the voter more.

use super::{Kind, Rejection};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Jpeg,
    Png,
    Gif,
    Webp,
    Mp3,
    Ogg,
    /// MP4 / M4A / QuickTime: `audio` when the brand says M4A, a hint only.
    IsoBmff {
        audio: bool,
    },
    /// EBML with DocType `webm` is checked by the parser, which knows where the field is.
    Webm,
}

impl Format {
    /// The kind whose byte limit applies before parsing. An MP4 or WebM may turn out
    /// to be audio only; the limit is checked again once the parse has decided.
    pub fn kind_hint(self) -> Kind {
        match self {
            Format::Jpeg | Format::Png | Format::Gif | Format::Webp => Kind::Image,
            Format::Mp3 | Format::Ogg | Format::IsoBmff { audio: true } => Kind::Audio,
            Format::IsoBmff { audio: false } | Format::Webm => Kind::Video,
        }
    }
}

/// Brands of ISO BMFF files that are still images (HEIF, AVIF) or otherwise not
/// MP4 video/audio; checked on the major brand.
const IMAGE_BRANDS: &[&[u8; 4]] =
    &[b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1", b"avif", b"avis", b"crx ", b"jp2 "];
const AUDIO_BRANDS: &[&[u8; 4]] = &[b"M4A ", b"M4B ", b"M4P ", b"F4A ", b"F4B "];

pub fn sniff(input: &[u8]) -> Result<Format, Rejection> {
    let at = |range: std::ops::Range<usize>| input.get(range).unwrap_or(&[]);
    if input.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Ok(Format::Jpeg);
    }
    if input.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Ok(Format::Png);
    }
    if input.starts_with(b"GIF87a") || input.starts_with(b"GIF89a") {
        return Ok(Format::Gif);
    }
    if input.starts_with(b"RIFF") {
        return match at(8..12) {
            b"WEBP" => Ok(Format::Webp),
            b"AVI " => Err(Rejection::UnsupportedCodec { kind: Kind::Video }),
            b"WAVE" => Err(Rejection::UnsupportedCodec { kind: Kind::Audio }),
            _ => Err(Rejection::UnsupportedType),
        };
    }
    if input.starts_with(b"OggS") {
        return Ok(Format::Ogg);
    }
    if input.starts_with(&[0x1A, 0x45, 0xDF, 0xA3]) {
        return Ok(Format::Webm);
    }
    if at(4..8) == b"ftyp" {
        let major = at(8..12);
        if IMAGE_BRANDS.iter().any(|b| b.as_slice() == major) {
            return Err(Rejection::UnsupportedType);
        }
        return Ok(Format::IsoBmff { audio: AUDIO_BRANDS.iter().any(|b| b.as_slice() == major) });
    }
    if input.starts_with(b"ID3") || is_mpeg_audio_sync(input) {
        return Ok(Format::Mp3);
    }
    Err(Rejection::UnsupportedType)
}

/// An MPEG audio frame header begins with 11 set bits and a non-reserved layer; the
/// MP3 parser checks the rest.
fn is_mpeg_audio_sync(input: &[u8]) -> bool {
    match input {
        [0xFF, b, ..] => b & 0xE0 == 0xE0 && b & 0x06 != 0,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_on_the_list() {
        for bad in [
            &b"<!DOCTYPE html><html></html>"[..],
            b"<?xml version=\"1.0\"?><svg xmlns=\"http://www.w3.org/2000/svg\"/>",
            b"<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>",
            b"%PDF-1.7\n",
            b"PK\x03\x04zipzip",
            b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic",
            b"\x00\x00\x00\x18ftypavif\x00\x00\x00\x00mif1avif",
            b"RIFF\x00\x00\x00\x00XXXX",
            b"x",
        ] {
            assert_eq!(sniff(bad), Err(Rejection::UnsupportedType), "{bad:?}");
        }
        assert_eq!(sniff(b"RIFF\0\0\0\0AVI LIST"), Err(Rejection::UnsupportedCodec { kind: Kind::Video }));
    }

    #[test]
    fn recognises_the_allowed_magic() {
        assert_eq!(sniff(b"\xFF\xD8\xFF\xE0"), Ok(Format::Jpeg));
        assert_eq!(sniff(b"\x00\x00\x00\x18ftypM4A \x00\x00"), Ok(Format::IsoBmff { audio: true }));
        assert_eq!(sniff(b"\x00\x00\x00\x18ftypisom\x00\x00"), Ok(Format::IsoBmff { audio: false }));
        assert_eq!(sniff(b"\xFF\xFB\x90\x00"), Ok(Format::Mp3));
        assert_eq!(sniff(b"ID3\x04\x00"), Ok(Format::Mp3));
    }
}
