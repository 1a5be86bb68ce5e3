//! WebM (EBML/Matroska with DocType `webm`): clean in place, same length.
//!
//! Exists for the same reason as `isobmff`: we do not re-mux video. An element we do not
//! want becomes an EBML `Void` element (ID 0xEC) of exactly the same total size with a
//! zeroed payload, so `SeekHead` and `Cues` positions stay valid.
//!
//! Promises, on success:
//! - the file is an EBML header with DocType `webm` followed by one `Segment` that runs
//!   to the end of the file (trailing bytes after a sized Segment are `Corrupt`); every
//!   element lies inside its parent;
//! - unknown sizes, as browsers' MediaRecorder writes them, are handled for `Segment`
//!   (ends at the end of the file) and `Cluster` (ends where an element of Segment level
//!   begins); any other element of unknown size is `Corrupt`;
//! - `Tags`, `Attachments`, `Chapters`, `CRC-32` and unknown Segment-level elements
//!   become `Void`, as do the `SeekHead` entries pointing at them; in `Info` only the timestamp scale and duration are kept (`Title`,
//!   `DateUTC`, file names and UIDs become `Void`), `MuxingApp`/`WritingApp` keep their
//!   place with a zeroed payload; in each `TrackEntry` only technical fields are kept
//!   (`Name`, `CodecName` and unknown ones become `Void`); in a `Cluster` only timestamps
//!   and blocks are kept; existing `Void` payloads are zeroed;
//! - a Vorbis track's comment header, inside its `CodecPrivate`, is blanked in place;
//! - video tracks are `V_VP8`, `V_VP9` or `V_AV1` and audio tracks `A_OPUS` or
//!   `A_VORBIS`; anything else, including subtitle tracks, is `UnsupportedCodec`;
//!   Matroska (`.mkv`) is `UnsupportedCodec` too.
//!
//! Not promised: block payloads (the coded frames) are kept as they are.
//! A file with a video track is `Kind::Video` (`video/webm`), else `Kind::Audio` (`audio/webm`).

use super::bytes::{u8_at, zero};
use super::{Clean, Kind, Rejection};

const EBML: u32 = 0x1A45_DFA3;
const DOC_TYPE: u32 = 0x4282;
const SEGMENT: u32 = 0x1853_8067;
const SEEK_HEAD: u32 = 0x114D_9B74;
const INFO: u32 = 0x1549_A966;
const TRACKS: u32 = 0x1654_AE6B;
const CLUSTER: u32 = 0x1F43_B675;
const CUES: u32 = 0x1C53_BB6B;
const TAGS: u32 = 0x1254_C367;
const ATTACHMENTS: u32 = 0x1941_A469;
const CHAPTERS: u32 = 0x1043_A770;
const VOID: u32 = 0xEC;
const SEEK: u32 = 0x4DBB;
const SEEK_ID: u32 = 0x53AB;
const TRACK_ENTRY: u32 = 0xAE;
const TRACK_TYPE: u32 = 0x83;
const CODEC_ID: u32 = 0x86;
const CODEC_PRIVATE: u32 = 0x63A2;
const VIDEO: u32 = 0xE0;
const PIXEL_WIDTH: u32 = 0xB0;
const PIXEL_HEIGHT: u32 = 0xBA;
const MUXING_APP: u32 = 0x4D80;
const WRITING_APP: u32 = 0x5741;

/// Elements that may follow a Cluster at Segment level: where an unknown-size Cluster ends.
const SEGMENT_LEVEL: &[u32] = &[SEEK_HEAD, INFO, TRACKS, CLUSTER, CUES, TAGS, ATTACHMENTS, CHAPTERS, EBML];
/// Info: timestamp scale and duration.
const INFO_KEEP: &[u32] = &[0x2A_D7B1, 0x4489];
/// TrackEntry: numbers, flags, language, codec and its set-up, video/audio parameters.
const TRACK_KEEP: &[u32] = &[
    0xD7,
    0x73C5,
    TRACK_TYPE,
    0xB9,
    0x88,
    0x55AA,
    0x55AB,
    0x55AC,
    0x55AD,
    0x55AE,
    0x9C,
    0x23_E383,
    0x23_4E7A,
    0x23_314F,
    0x55EE,
    0x22_B59C,
    0x22_B59D,
    CODEC_ID,
    CODEC_PRIVATE,
    0x56AA,
    0x56BB,
    VIDEO,
    0xE1,
    0x6D80,
    0x6DE7,
    0x6DF8,
    0xAA,
    0x6FAB,
    0x41E4,
];
/// Cluster: timestamp, position, previous size, silent tracks, blocks.
const CLUSTER_KEEP: &[u32] = &[0xE7, 0xA7, 0xAB, 0x5854, 0xA3, 0xA0, 0xAF];

#[derive(Clone, Copy)]
struct Element {
    id: u32,
    start: usize,
    body: usize,
    /// `None` for an unknown size.
    end: Option<usize>,
}

#[derive(Default)]
struct Track {
    kind: u64,
    codec: Vec<u8>,
    private: Option<(usize, usize)>,
    width: Option<u32>,
    height: Option<u32>,
}

struct Walker {
    out: Vec<u8>,
    corrupt: Rejection,
    tracks: Vec<Track>,
}

pub fn sanitize(input: &[u8]) -> Result<Clean, Rejection> {
    let mut w = Walker { out: input.to_vec(), corrupt: Rejection::Corrupt { kind: Kind::Video }, tracks: Vec::new() };
    let len = input.len();
    let header = w.element(0, len)?;
    let header_end = header.end.filter(|_| header.id == EBML).ok_or(w.corrupt.clone())?;
    w.check_doc_type(header.body, header_end)?;
    let segment = w.element(header_end, len)?;
    if segment.id != SEGMENT || segment.end.is_some_and(|end| end != len) {
        return Err(w.corrupt);
    }
    w.segment(segment.body, len)?;

    let kind = if w.tracks.iter().any(|t| t.kind == 1) { Kind::Video } else { Kind::Audio };
    let unsupported = Rejection::UnsupportedCodec { kind };
    if w.tracks.is_empty() {
        return Err(Rejection::Corrupt { kind });
    }
    let (mut width, mut height) = (None, None);
    for track in &w.tracks {
        match (track.kind, track.codec.as_slice()) {
            (1, b"V_VP8" | b"V_VP9" | b"V_AV1") => {
                if width.is_none() {
                    (width, height) = (track.width, track.height);
                }
            }
            (2, b"A_OPUS") => {}
            (2, b"A_VORBIS") => {
                let (start, end) = track.private.ok_or(Rejection::Corrupt { kind })?;
                blank_vorbis_comment(&mut w.out, start, end).ok_or(Rejection::Corrupt { kind })?;
            }
            _ => return Err(unsupported),
        }
    }
    let mime = if kind == Kind::Video { "video/webm" } else { "audio/webm" };
    Ok(Clean { kind, mime, bytes: w.out, width, height })
}

impl Walker {
    /// Reads an element header at `pos`; a known-size element must end by `limit`.
    fn element(&self, pos: usize, limit: usize) -> Result<Element, Rejection> {
        let parsed = (|| {
            let (id, id_len) = vint(&self.out, pos, 4)?;
            // IDs are kept with their length marker, as the specification writes them.
            let id = (id | (1 << (7 * id_len))) as u32;
            let (size, size_len) = vint(&self.out, pos + id_len, 8)?;
            let body = pos + id_len + size_len;
            let end = if size == (1 << (7 * size_len)) - 1 {
                None
            } else {
                Some(body.checked_add(usize::try_from(size).ok()?).filter(|&e| e <= limit)?)
            };
            (body <= limit).then_some(Element { id, start: pos, body, end })
        })();
        parsed.ok_or(self.corrupt.clone())
    }

    fn known_end(&self, e: Element) -> Result<usize, Rejection> {
        e.end.ok_or(self.corrupt.clone())
    }

    fn check_doc_type(&self, start: usize, end: usize) -> Result<(), Rejection> {
        let mut pos = start;
        while pos < end {
            let e = self.element(pos, end)?;
            let e_end = self.known_end(e)?;
            if e.id == DOC_TYPE {
                let doc_type = self.out.get(e.body..e_end).ok_or(self.corrupt.clone())?;
                let doc_type = doc_type.split(|&b| b == 0).next().unwrap_or(&[]);
                return match doc_type {
                    b"webm" => Ok(()),
                    b"matroska" => Err(Rejection::UnsupportedCodec { kind: Kind::Video }),
                    _ => Err(Rejection::UnsupportedType),
                };
            }
            pos = e_end;
        }
        Err(self.corrupt.clone())
    }

    fn segment(&mut self, start: usize, end: usize) -> Result<(), Rejection> {
        let mut pos = start;
        while pos < end {
            let e = self.element(pos, end)?;
            if e.id == CLUSTER {
                pos = self.children(e, end, CLUSTER_KEEP)?;
                continue;
            }
            let e_end = self.known_end(e)?;
            match e.id {
                SEEK_HEAD => self.seek_head(e.body, e_end)?,
                CUES => {}
                INFO => {
                    self.children(e, e_end, INFO_KEEP)?;
                }
                TRACKS => {
                    self.tracks(e.body, e_end)?;
                    // From here on a damaged file is known to be audio or video.
                    let video = self.tracks.iter().any(|t| t.kind == 1);
                    self.corrupt = Rejection::Corrupt { kind: if video { Kind::Video } else { Kind::Audio } };
                }
                VOID => zero(&mut self.out, e.body, e_end),
                _ => to_void(&mut self.out, e.start, e_end),
            }
            pos = e_end;
        }
        Ok(())
    }

    /// Walks the children of `parent`, keeping those in `keep` and voiding the rest;
    /// returns where `parent` ends (for an unknown size: at the first Segment-level
    /// element, or `limit`).
    fn children(&mut self, parent: Element, limit: usize, keep: &[u32]) -> Result<usize, Rejection> {
        let end = parent.end.unwrap_or(limit);
        let mut pos = parent.body;
        while pos < end {
            let e = self.element(pos, end)?;
            if parent.end.is_none() && SEGMENT_LEVEL.contains(&e.id) {
                return Ok(pos);
            }
            let e_end = self.known_end(e)?;
            match e.id {
                MUXING_APP | WRITING_APP if parent.id == INFO => zero(&mut self.out, e.body, e_end),
                VOID => zero(&mut self.out, e.body, e_end),
                id if keep.contains(&id) => {}
                _ => to_void(&mut self.out, e.start, e_end),
            }
            pos = e_end;
        }
        Ok(end)
    }

    /// Seek entries pointing at what we voided would send a player to a Void: they go too.
    fn seek_head(&mut self, start: usize, end: usize) -> Result<(), Rejection> {
        let mut pos = start;
        while pos < end {
            let e = self.element(pos, end)?;
            let e_end = self.known_end(e)?;
            if e.id == SEEK {
                let mut p = e.body;
                while p < e_end {
                    let field = self.element(p, e_end)?;
                    let f_end = self.known_end(field)?;
                    let target = self.out.get(field.body..f_end).and_then(uint);
                    if field.id == SEEK_ID
                        && target.is_some_and(|id| [TAGS, ATTACHMENTS, CHAPTERS].map(u64::from).contains(&id))
                    {
                        to_void(&mut self.out, e.start, e_end);
                        break;
                    }
                    p = f_end;
                }
            }
            pos = e_end;
        }
        Ok(())
    }

    fn tracks(&mut self, start: usize, end: usize) -> Result<(), Rejection> {
        let mut pos = start;
        while pos < end {
            let e = self.element(pos, end)?;
            let e_end = self.known_end(e)?;
            if e.id == TRACK_ENTRY {
                self.children(e, e_end, TRACK_KEEP)?;
                let track = self.track(e.body, e_end)?;
                self.tracks.push(track);
            } else if e.id == VOID {
                zero(&mut self.out, e.body, e_end);
            } else {
                to_void(&mut self.out, e.start, e_end);
            }
            pos = e_end;
        }
        Ok(())
    }

    /// Reads the fields we check from an already cleaned TrackEntry.
    fn track(&self, start: usize, end: usize) -> Result<Track, Rejection> {
        let mut track = Track::default();
        let mut pos = start;
        while pos < end {
            let e = self.element(pos, end)?;
            let e_end = self.known_end(e)?;
            let body = self.out.get(e.body..e_end).ok_or(self.corrupt.clone())?;
            match e.id {
                TRACK_TYPE => track.kind = uint(body).ok_or(self.corrupt.clone())?,
                CODEC_ID => track.codec = body.split(|&b| b == 0).next().unwrap_or(&[]).to_vec(),
                CODEC_PRIVATE => track.private = Some((e.body, e_end)),
                VIDEO => {
                    let mut p = e.body;
                    while p < e_end {
                        let v = self.element(p, e_end)?;
                        let v_end = self.known_end(v)?;
                        let value = self.out.get(v.body..v_end).and_then(uint).and_then(|n| u32::try_from(n).ok());
                        match v.id {
                            PIXEL_WIDTH => track.width = value,
                            PIXEL_HEIGHT => track.height = value,
                            _ => {}
                        }
                        p = v_end;
                    }
                }
                _ => {}
            }
            pos = e_end;
        }
        Ok(track)
    }
}

/// Reads an EBML variable-length integer of at most `max_len` bytes at `pos`; returns
/// its value without the length marker, and its length.
fn vint(buf: &[u8], pos: usize, max_len: usize) -> Option<(u64, usize)> {
    let first = u8_at(buf, pos)?;
    let len = first.leading_zeros() as usize + 1;
    if len > max_len {
        return None;
    }
    let bytes = buf.get(pos..pos + len)?;
    let marker_cleared = u64::from(first) & ((1u64 << (8 - len)) - 1);
    Some((bytes[1..].iter().fold(marker_cleared, |acc, &b| (acc << 8) | u64::from(b)), len))
}

fn uint(body: &[u8]) -> Option<u64> {
    (body.len() <= 8).then(|| body.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
}

/// Overwrites `start..end` with a Void element of the same total size: ID 0xEC, a size
/// field as long as needed, zeroes.
fn to_void(buf: &mut [u8], start: usize, end: usize) {
    let total = end.saturating_sub(start);
    let Some(size_len) = (1..=8usize)
        .find(|&l| total.checked_sub(1 + l).is_some_and(|payload| (payload as u64) < (1u64 << (7 * l)) - 1))
    else {
        return zero(buf, start, end);
    };
    let payload = (total - 1 - size_len) as u64;
    zero(buf, start, end);
    if let Some(header) = buf.get_mut(start..start + 1 + size_len) {
        header[0] = 0xEC;
        let value = payload | (1u64 << (7 * size_len));
        for (i, byte) in header[1..].iter_mut().enumerate() {
            *byte = (value >> (8 * (size_len - 1 - i))) as u8;
        }
    }
}

/// A Vorbis `CodecPrivate` holds the three headers, Xiph-laced. The comment header is
/// rewritten in place to the same length: the vendor string absorbs the whole packet
/// (spaces), no comments, framing bit set.
fn blank_vorbis_comment(buf: &mut [u8], start: usize, end: usize) -> Option<()> {
    let private = buf.get(start..end)?;
    if *private.first()? != 2 {
        return None;
    }
    let mut pos = 1;
    let mut sizes = [0usize; 2];
    for size in &mut sizes {
        loop {
            let lace = *private.get(pos)?;
            pos += 1;
            *size += usize::from(lace);
            if lace < 255 {
                break;
            }
        }
    }
    let comment_start = start + pos + sizes[0];
    let comment = buf.get_mut(comment_start..comment_start + sizes[1])?;
    if !comment.starts_with(b"\x03vorbis") || comment.len() < 16 {
        return None;
    }
    let vendor_len = comment.len() - 16;
    comment[7..11].copy_from_slice(&(u32::try_from(vendor_len).ok()?).to_le_bytes());
    comment[11..11 + vendor_len].fill(b' ');
    comment[11 + vendor_len..15 + vendor_len].fill(0);
    comment[15 + vendor_len] = 1;
    Some(())
}
