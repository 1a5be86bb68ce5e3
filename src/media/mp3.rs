//! MP3: keep the MPEG audio frames and nothing else.
//!
//! Exists because MP3 metadata lives outside the audio stream: ID3v2 tags before it
//! (possibly several, possibly with a footer), ID3v1, APEv2 and Lyrics3 after it, and
//! sometimes junk between frames. Rather than recognise every tag, we walk the frame
//! headers (with the bitrate and sample-rate tables of MPEG-1/2/2.5 Layer III) and copy
//! only whole, valid frames; whatever is not a frame is dropped.
//!
//! Promises: the output is a run of Layer III frames sharing the first frame's version
//! and sample rate, at least `MIN_FRAMES` of them; leading ID3v2 tags (and zero padding)
//! must be well formed and are skipped; after the first frame, bytes that are not a
//! frame are skipped until two consecutive valid frames are found again, so tags and
//! polyglot tails at the end vanish. A partial last frame is dropped.
//! Refused: no valid frame where the audio should start (`Corrupt`), free-format
//! bitrate (`Corrupt`), Layer I/II, ADTS AAC or FLAC behind an ID3 tag (`UnsupportedCodec`).
//! Not promised: the first frame may be a Xing/LAME "Info" frame, which names the encoder
//! and its version; it is kept because players need it to seek.

use super::{Clean, Kind, Rejection};

const CORRUPT: Rejection = Rejection::Corrupt { kind: Kind::Audio };
const UNSUPPORTED: Rejection = Rejection::UnsupportedCodec { kind: Kind::Audio };
const MIN_FRAMES: usize = 3;

const BITRATES_V1: [u32; 15] = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const BITRATES_V2: [u32; 15] = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];

#[derive(Clone, Copy, PartialEq, Eq)]
struct Frame {
    /// Version and sample-rate bits: must not change within a stream.
    stream: u8,
    len: usize,
}

pub fn sanitize(input: &[u8]) -> Result<Clean, Rejection> {
    // Tags at the end are cut before the walk: a frame whose header claims a larger
    // bitrate would otherwise swallow them as if they were audio.
    let input = strip_trailing_tags(input);
    let mut pos = skip_id3v2(input)?;
    while input.get(pos) == Some(&0) {
        pos += 1;
    }
    let rest = input.get(pos..).unwrap_or(&[]);
    let first = match frame_at(rest) {
        Some(frame) => frame,
        None if rest.starts_with(b"fLaC") || is_adts_or_other_layer(rest) => return Err(UNSUPPORTED),
        None => return Err(CORRUPT),
    };
    let mut out = Vec::with_capacity(input.len() - pos);
    let mut frames = 0;
    while pos < input.len() {
        match frame_at(&input[pos..]).filter(|f| f.stream == first.stream) {
            Some(frame) => match input.get(pos..pos + frame.len) {
                Some(bytes) => {
                    out.extend_from_slice(bytes);
                    frames += 1;
                    pos += frame.len;
                }
                None => break,
            },
            None => match resync(input, pos + 1, first.stream) {
                Some(next) => pos = next,
                None => break,
            },
        }
    }
    if frames < MIN_FRAMES {
        return Err(CORRUPT);
    }
    Ok(Clean { kind: Kind::Audio, mime: "audio/mpeg", bytes: out, width: None, height: None })
}

/// Removes ID3v1, Lyrics3 v2, APEv2 and footer-marked ID3v2 tags from the end, in any
/// order and number.
fn strip_trailing_tags(mut input: &[u8]) -> &[u8] {
    loop {
        let len = input.len();
        let tail = |n: usize| input.get(len.saturating_sub(n)..).filter(|_| len >= n).unwrap_or(&[]);
        let cut = if tail(128).starts_with(b"TAG") {
            128
        } else if tail(9) == b"LYRICS200" {
            // Six ASCII digits give the size of the lyrics block before them.
            let digits = tail(15).get(..6).unwrap_or(&[]);
            let size = std::str::from_utf8(digits).ok().and_then(|d| d.parse::<usize>().ok());
            match size {
                Some(size) if size + 15 <= len => size + 15,
                _ => return input,
            }
        } else if tail(32).starts_with(b"APETAGEX") {
            // The footer's size counts items and footer; a flag says a header precedes.
            let footer = tail(32);
            let size = footer.get(12..16).and_then(|b| b.first_chunk::<4>()).map(|b| u32::from_le_bytes(*b));
            let has_header = footer.get(23).is_some_and(|f| f & 0x80 != 0);
            match size.and_then(|s| usize::try_from(s).ok()) {
                Some(size) if size + if has_header { 32 } else { 0 } <= len => size + if has_header { 32 } else { 0 },
                _ => return input,
            }
        } else if tail(10).starts_with(b"3DI") {
            let footer = tail(10);
            let size =
                footer.get(6..10).unwrap_or(&[]).iter().fold(0usize, |acc, &b| (acc << 7) | usize::from(b & 0x7F));
            match size + 20 {
                total if total <= len => total,
                _ => return input,
            }
        } else {
            return input;
        };
        input = input.get(..len - cut).unwrap_or(&[]);
    }
}

/// Skips every ID3v2 tag at the start; the tag header must be sane.
fn skip_id3v2(input: &[u8]) -> Result<usize, Rejection> {
    let mut pos = 0;
    while let Some(tag) = input.get(pos..).filter(|t| t.starts_with(b"ID3")) {
        let header = tag.get(..10).ok_or(CORRUPT)?;
        let (version, flags, size) = (header[3], header[5], &header[6..10]);
        if !(2..=4).contains(&version) || size.iter().any(|b| b & 0x80 != 0) {
            return Err(CORRUPT);
        }
        let size = size.iter().fold(0usize, |acc, &b| (acc << 7) | usize::from(b));
        let footer = if flags & 0x10 != 0 { 10 } else { 0 };
        pos += 10 + size + footer;
        if pos > input.len() {
            return Err(CORRUPT);
        }
    }
    Ok(pos)
}

/// Finds the next position where two valid frames of the same stream follow each
/// other (or one valid frame ends the file); one frame alone is too easy to fake.
fn resync(input: &[u8], from: usize, stream: u8) -> Option<usize> {
    (from..input.len()).find(|&pos| {
        let Some(frame) = frame_at(&input[pos..]).filter(|f| f.stream == stream) else {
            return false;
        };
        let next = pos + frame.len;
        next == input.len() || input.get(next..).and_then(frame_at).is_some_and(|f| f.stream == stream)
    })
}

/// Parses an MPEG audio Layer III frame header at the start of `bytes`.
fn frame_at(bytes: &[u8]) -> Option<Frame> {
    let &[b0, b1, b2, b3] = bytes.first_chunk::<4>()?;
    if b0 != 0xFF || b1 & 0xE0 != 0xE0 {
        return None;
    }
    let version = (b1 >> 3) & 0b11; // 0: MPEG-2.5, 1: reserved, 2: MPEG-2, 3: MPEG-1
    let layer = (b1 >> 1) & 0b11; // 1: Layer III
    let bitrate_index = usize::from(b2 >> 4);
    let rate_index = usize::from((b2 >> 2) & 0b11);
    let padding = usize::from((b2 >> 1) & 1);
    if version == 1 || layer != 1 || bitrate_index == 0 || bitrate_index == 15 || rate_index == 3 || b3 & 0b11 == 2 {
        return None;
    }
    let base_rate = [44_100, 48_000, 32_000][rate_index];
    let (sample_rate, bitrate, per_frame) = match version {
        3 => (base_rate, BITRATES_V1[bitrate_index], 144_000),
        2 => (base_rate / 2, BITRATES_V2[bitrate_index], 72_000),
        _ => (base_rate / 4, BITRATES_V2[bitrate_index], 72_000),
    };
    let len = usize::try_from(per_frame * bitrate / sample_rate).ok()? + padding;
    Some(Frame { stream: (version << 2) | rate_index as u8, len })
}

/// An ADTS AAC stream (layer bits 00) or MPEG Layer I/II: known, but not taken.
fn is_adts_or_other_layer(bytes: &[u8]) -> bool {
    matches!(bytes, [0xFF, b, ..] if b & 0xE0 == 0xE0 && (b >> 1) & 0b11 != 1)
}
