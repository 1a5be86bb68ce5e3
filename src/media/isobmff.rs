//! MP4 / M4A / QuickTime (ISO base media file format): clean in place, same length.
//!
//! Exists because re-muxing video is beyond what we want to carry, and because the box
//! structure lets us neutralise metadata without moving a single sample: a box we do
//! not want becomes a `free` box of the same size with a zeroed payload, so every chunk
//! offset (`stco`/`co64`, `trun`) stays valid without being rewritten.
//!
//! Promises, on success:
//! - the file is a tree of well-formed boxes: `ftyp` first, one `moov`, at least one
//!   `mdat`; no box runs past its parent or the file, and nothing follows the last
//!   top-level box (trailing bytes are refused as `Corrupt`, not dropped: a tail that
//!   parses as a box header could not be told apart from a truncated file);
//! - `udta`, `meta` (iTunes tags, Apple `keys` such as make/model/location), `uuid`
//!   (XMP lives there), `XMP_`, `loci`, every `©xxx` box, `prft` (wall-clock time) and
//!   any box we do not know inside `moov`/`trak`/`mdia`/`minf`/`dinf`, or at top level,
//!   become zeroed `free` boxes; existing `free`/`skip`/`wide` payloads are zeroed;
//! - creation and modification times in `mvhd`, `tkhd` and `mdhd` are zeroed (we keep
//!   no date at all) and handler names (`hdlr`) are blanked, since cameras and phones
//!   put device names there;
//! - a video track must be H.264 (`avc1`/`avc3`) and an audio track AAC (`mp4a`), else
//!   `UnsupportedCodec` (an iPhone's HEVC `hvc1` is refused this way);
//! - any other track (timed metadata such as GoPro GPS or Apple `mebx`, timecode,
//!   text) is dropped: its `trak` becomes `free` and its samples are zeroed in `mdat`.
//!   In a fragmented file we cannot find those samples cheaply, so there it is refused;
//! - data references must be self-contained (no URL or path pointing elsewhere).
//!
//! Not promised: the H.264 bitstream itself is kept as is (encoder SEI strings such as
//! x264's settings remain), as are unreferenced bytes inside `mdat`.
//! A file with a video track is `Kind::Video` (`video/mp4`), else `Kind::Audio` (`audio/mp4`).

use super::bytes::{be_u16, be_u32, be_u64, fourcc, u8_at, zero};
use super::{Clean, Kind, Rejection};

/// Boxes that only ever hold descriptive metadata, wherever they appear.
const METADATA: &[&[u8; 4]] = &[
    b"udta", b"meta", b"uuid", b"XMP_", b"loci", b"prft", b"keys", b"ilst", b"cprt", b"auth", b"titl", b"dscp",
    b"gnre", b"perf", b"albm", b"yrrc", b"kywd", b"rtng", b"clsf", b"name", b"smta", b"GPMF",
];

#[derive(Clone, Copy)]
struct Header {
    typ: [u8; 4],
    start: usize,
    body: usize,
    end: usize,
}

#[derive(Default)]
struct Track {
    start: usize,
    end: usize,
    handler: Option<[u8; 4]>,
    entries: Vec<[u8; 4]>,
    stbl: Option<(usize, usize)>,
    width: Option<u32>,
    height: Option<u32>,
}

struct Walker {
    out: Vec<u8>,
    corrupt: Rejection,
    tracks: Vec<Track>,
    moov: bool,
    /// Payload ranges of the `mdat` boxes: every sample must lie in one.
    mdats: Vec<(usize, usize)>,
    fragmented: bool,
}

/// What to do with a child box, decided by its parent and its type.
enum Action {
    Keep,
    Recurse,
    Free,
    ZeroPayload,
    Times,
    Handler,
    SampleDescriptions,
    DataReferences,
    Track,
}

pub fn sanitize(input: &[u8], hint: Kind) -> Result<Clean, Rejection> {
    let mut walker = Walker {
        out: input.to_vec(),
        corrupt: Rejection::Corrupt { kind: hint },
        tracks: Vec::new(),
        moov: false,
        mdats: Vec::new(),
        fragmented: false,
    };
    walker.top_level()?;
    if !walker.moov || walker.mdats.is_empty() {
        return Err(walker.corrupt);
    }
    let kind = if walker.tracks.iter().any(|t| t.handler == Some(*b"vide")) { Kind::Video } else { Kind::Audio };
    let corrupt = Rejection::Corrupt { kind };
    let unsupported = Rejection::UnsupportedCodec { kind };
    let mut kept = 0;
    let (mut width, mut height) = (None, None);
    for track in &walker.tracks {
        let allowed: &[&[u8; 4]] = match track.handler.as_ref() {
            Some(b"vide") => &[b"avc1", b"avc3"],
            Some(b"soun") => &[b"mp4a"],
            Some(_) => {
                if walker.fragmented {
                    return Err(unsupported);
                }
                let (start, end) = track.stbl.ok_or(corrupt.clone())?;
                let (out, mdats) = (&mut walker.out, &walker.mdats);
                let zeroed = for_each_sample(out, start, end, |buf, from, to| {
                    let inside = in_mdat(mdats, from, to);
                    if inside {
                        zero(buf, from, to);
                    }
                    inside
                });
                zeroed.ok_or(corrupt.clone())?;
                to_free(out, track.start, track.end);
                continue;
            }
            None => return Err(corrupt),
        };
        if track.entries.is_empty() || !track.entries.iter().all(|e| allowed.contains(&e)) {
            return Err(unsupported);
        }
        if let Some((start, end)) = track.stbl
            && !walker.fragmented
        {
            let mdats = &walker.mdats;
            for_each_sample(&mut walker.out, start, end, |_, from, to| in_mdat(mdats, from, to))
                .ok_or(corrupt.clone())?;
        }
        if track.handler == Some(*b"vide") && width.is_none() {
            (width, height) = (track.width, track.height);
        }
        kept += 1;
    }
    if kept == 0 {
        return Err(corrupt);
    }
    let mime = if kind == Kind::Video { "video/mp4" } else { "audio/mp4" };
    Ok(Clean { kind, mime, bytes: walker.out, width, height })
}

impl Walker {
    fn top_level(&mut self) -> Result<(), Rejection> {
        let len = self.out.len();
        let mut pos = 0;
        while pos < len {
            let b = self.header(pos, len, true)?;
            match &b.typ {
                b"ftyp" if pos == 0 => {}
                _ if pos == 0 => return Err(self.corrupt.clone()),
                b"ftyp" => return Err(self.corrupt.clone()),
                b"moov" if !self.moov => {
                    self.moov = true;
                    self.children(b, None)?;
                }
                b"mdat" => self.mdats.push((b.body, b.end)),
                b"moof" => {
                    self.fragmented = true;
                    self.children(b, None)?;
                }
                b"free" | b"skip" | b"wide" => zero(&mut self.out, b.body, b.end),
                b"styp" | b"sidx" | b"ssix" | b"mfra" => {}
                b"moov" => return Err(self.corrupt.clone()),
                _ => to_free(&mut self.out, b.start, b.end),
            }
            pos = b.end;
        }
        Ok(())
    }

    /// Reads a box header at `pos`; the box must end by `end`. Size 0 ("to the end of
    /// the file") is only meaningful at top level.
    fn header(&self, pos: usize, end: usize, top: bool) -> Result<Header, Rejection> {
        let buf = &self.out;
        let parsed = (|| {
            let size = be_u32(buf, pos)?;
            let typ = fourcc(buf, pos + 4)?;
            let (size, header_len) = match size {
                1 => (usize::try_from(be_u64(buf, pos + 8)?).ok()?, 16),
                0 if top => (end.checked_sub(pos)?, 8),
                0 => return None,
                n => (usize::try_from(n).ok()?, 8),
            };
            let box_end = pos.checked_add(size)?;
            (size >= header_len && box_end <= end).then_some(Header {
                typ,
                start: pos,
                body: pos + header_len,
                end: box_end,
            })
        })();
        parsed.ok_or(self.corrupt.clone())
    }

    fn children(&mut self, parent: Header, mut track: Option<&mut Track>) -> Result<(), Rejection> {
        let mut pos = parent.body;
        while pos < parent.end {
            let b = self.header(pos, parent.end, false)?;
            match action(&parent.typ, &b.typ) {
                Action::Keep => {}
                Action::Recurse => self.children(b, track.as_deref_mut())?,
                Action::Free => to_free(&mut self.out, b.start, b.end),
                Action::ZeroPayload => zero(&mut self.out, b.body, b.end),
                Action::Times => self.zero_times(b, track.as_deref_mut())?,
                Action::Handler => {
                    // version/flags, pre_defined, handler_type, 3 × reserved, then the name.
                    let handler = fourcc(&self.out, b.body + 8).filter(|_| b.body + 24 <= b.end);
                    let handler = handler.ok_or(self.corrupt.clone())?;
                    if parent.typ == *b"mdia"
                        && let Some(t) = track.as_deref_mut()
                    {
                        t.handler = Some(handler);
                    }
                    zero(&mut self.out, b.body + 24, b.end);
                }
                Action::SampleDescriptions => {
                    let entries = self.entries(b)?;
                    if let Some(t) = track.as_deref_mut() {
                        t.entries = entries.iter().map(|e| e.typ).collect();
                    }
                }
                Action::DataReferences => {
                    // Flag 1 on an entry means "the data is in this file"; anything else
                    // names another file (a URL or a path, which may hold a user name).
                    for entry in self.entries(b)? {
                        let flags = be_u32(&self.out, entry.body).ok_or(self.corrupt.clone())?;
                        if flags & 1 == 0 {
                            return Err(self.corrupt.clone());
                        }
                    }
                }
                Action::Track => {
                    let mut t = Track { start: b.start, end: b.end, ..Track::default() };
                    self.children(b, Some(&mut t))?;
                    self.tracks.push(t);
                }
            }
            if b.typ == *b"stbl"
                && let Some(t) = track.as_deref_mut()
            {
                t.stbl = Some((b.body, b.end));
            }
            pos = b.end;
        }
        Ok(())
    }

    /// The entries of a full box holding a count and then boxes (`stsd`, `dref`).
    fn entries(&self, b: Header) -> Result<Vec<Header>, Rejection> {
        let count = be_u32(&self.out, b.body + 4).ok_or(self.corrupt.clone())?;
        let mut pos = b.body + 8;
        let mut entries = Vec::new();
        for _ in 0..count {
            let entry = self.header(pos, b.end, false)?;
            entries.push(entry);
            pos = entry.end;
        }
        Ok(entries)
    }

    /// `mvhd`, `tkhd`, `mdhd`: creation and modification times follow the version and
    /// flags, 32 bits each in version 0 and 64 in version 1.
    fn zero_times(&mut self, b: Header, track: Option<&mut Track>) -> Result<(), Rejection> {
        let version = u8_at(&self.out, b.body).ok_or(self.corrupt.clone())?;
        let times_end = b.body + if version == 1 { 20 } else { 12 };
        if version > 1 || times_end > b.end {
            return Err(self.corrupt.clone());
        }
        zero(&mut self.out, b.body + 4, times_end);
        if b.typ == *b"tkhd"
            && let Some(t) = track
        {
            // Width and height, 16.16 fixed point, end the box.
            let at = b.body + if version == 1 { 88 } else { 76 };
            if let (Some(w), Some(h)) = (be_u16(&self.out, at), be_u16(&self.out, at + 4))
                && at + 8 <= b.end
            {
                t.width = Some(u32::from(w));
                t.height = Some(u32::from(h));
            }
        }
        Ok(())
    }
}

fn action(parent: &[u8; 4], child: &[u8; 4]) -> Action {
    if METADATA.contains(&child) || child[0] == 0xA9 {
        return Action::Free;
    }
    match (parent, child) {
        (_, b"free" | b"skip" | b"wide") => Action::ZeroPayload,
        (b"moov", b"mvhd") | (b"trak", b"tkhd") | (b"mdia", b"mdhd") => Action::Times,
        (b"moov", b"trak") => Action::Track,
        (b"moov", b"mvex" | b"iods") => Action::Keep,
        (b"trak", b"edts" | b"tref" | b"tapt") => Action::Keep,
        (b"trak", b"mdia") | (b"mdia", b"minf") | (b"minf", b"stbl" | b"dinf") => Action::Recurse,
        (b"mdia" | b"minf", b"hdlr") => Action::Handler,
        (b"mdia", b"elng") => Action::Keep,
        (b"minf", b"vmhd" | b"smhd" | b"nmhd" | b"sthd" | b"gmhd") => Action::Keep,
        (b"dinf", b"dref") => Action::DataReferences,
        (b"stbl", b"stsd") => Action::SampleDescriptions,
        (b"moof", b"traf") => Action::Recurse,
        // Sample tables and fragment headers hold numbers only.
        (b"stbl" | b"moof" | b"traf", _) => Action::Keep,
        _ => Action::Free,
    }
}

/// Turns the box at `start..end` into a `free` box of the same size with a zeroed
/// payload. The size field (and a 64-bit size, if any) is kept, so the layout holds.
fn to_free(buf: &mut [u8], start: usize, end: usize) {
    if let Some(typ) = buf.get_mut(start + 4..start + 8) {
        typ.copy_from_slice(b"free");
    }
    let large = be_u32(buf, start) == Some(1);
    zero(buf, start + if large { 16 } else { 8 }, end);
}

fn in_mdat(mdats: &[(usize, usize)], from: usize, to: usize) -> bool {
    mdats.iter().any(|&(start, end)| start <= from && to <= end)
}

/// Calls `f(buf, start, end)` for the byte range of every sample of the track whose
/// `stbl` payload is `start..end`; `None` if a table is missing, malformed, or a sample
/// lies outside the file, or `f` returns false.
fn for_each_sample(
    buf: &mut [u8],
    start: usize,
    end: usize,
    mut f: impl FnMut(&mut [u8], usize, usize) -> bool,
) -> Option<()> {
    let (mut stsz, mut stsc, mut offsets) = (None, None, None);
    let mut pos = start;
    while pos < end {
        let size = usize::try_from(be_u32(buf, pos)?).ok()?;
        let typ = fourcc(buf, pos + 4)?;
        let box_end = pos.checked_add(size).filter(|&e| e <= end && size >= 8)?;
        match &typ {
            b"stsz" => stsz = Some((pos + 8, box_end)),
            b"stsc" => stsc = Some((pos + 8, box_end)),
            b"stco" => offsets = Some((pos + 8, box_end, 4)),
            b"co64" => offsets = Some((pos + 8, box_end, 8)),
            _ => {}
        }
        pos = box_end;
    }
    let (sz, sz_end) = stsz?;
    let (sc, sc_end) = stsc?;
    let (co, co_end, width) = offsets?;
    let constant = be_u32(buf, sz + 4)?;
    let sample_count = usize::try_from(be_u32(buf, sz + 8)?).ok()?;
    // Every sample takes at least a byte of the file, which bounds the loop below.
    if sample_count > buf.len() || (constant == 0 && sz + 12 + 4 * sample_count > sz_end) {
        return None;
    }
    let chunk_count = usize::try_from(be_u32(buf, co + 4)?).ok()?;
    if co + 8 + width * chunk_count > co_end {
        return None;
    }
    let stsc_count = usize::try_from(be_u32(buf, sc + 4)?).ok()?;
    if sc + 8 + 12 * stsc_count > sc_end {
        return None;
    }
    let mut sample = 0usize;
    let mut run = 0usize;
    for chunk in 0..chunk_count {
        // The stsc run that covers this chunk (first_chunk is 1-based).
        while run + 1 < stsc_count && usize::try_from(be_u32(buf, sc + 8 + 12 * (run + 1))?).ok()? <= chunk + 1 {
            run += 1;
        }
        let per_chunk = usize::try_from(be_u32(buf, sc + 8 + 12 * run + 4)?).ok()?;
        let mut offset = if width == 4 {
            usize::try_from(be_u32(buf, co + 8 + 4 * chunk)?).ok()?
        } else {
            usize::try_from(be_u64(buf, co + 8 + 8 * chunk)?).ok()?
        };
        for _ in 0..per_chunk {
            if sample >= sample_count {
                break;
            }
            let size = if constant != 0 { constant } else { be_u32(buf, sz + 12 + 4 * sample)? };
            let to = offset.checked_add(usize::try_from(size).ok()?).filter(|&t| t <= buf.len())?;
            if !f(buf, offset, to) {
                return None;
            }
            offset = to;
            sample += 1;
        }
    }
    Some(())
}
