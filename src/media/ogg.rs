//! Ogg Opus and Ogg Vorbis: replace the comment header, copy the audio pages.
//!
//! Exists because the tags of an Ogg stream (title, artist, location, encoder, cover
//! art) all live in one packet, the comment header. We rebuild the header pages with
//! the identification header as it was, an empty comment header (vendor `anonpoll`)
//! and, for Vorbis, the setup header; the audio pages follow byte for byte, with new
//! sequence numbers and checksums.
//!
//! Promises: every page up to the last is whole, has a correct CRC, version 0 and the
//! one serial number of the stream; the first page opens the stream (BOS) and holds the
//! identification header alone; the headers end on a page boundary, as both codec
//! specifications require, and at least one audio page follows. Bytes after the last
//! page that do not begin a page (a polyglot tail, a stray tag) are dropped; a page cut
//! short is `Corrupt`.
//! Refused as `UnsupportedCodec`: FLAC, Speex or any other codec in Ogg (Theora as a
//! video codec, the others as audio), and
//! multiplexed or chained streams (more than one serial number), which could carry a
//! second comment header.

use super::bytes::le_u32;
use super::{Clean, Kind, Rejection};

const CORRUPT: Rejection = Rejection::Corrupt { kind: Kind::Audio };
const UNSUPPORTED: Rejection = Rejection::UnsupportedCodec { kind: Kind::Audio };
const VENDOR: &[u8] = b"anonpoll";
const BOS: u8 = 0x02;
const CONTINUED: u8 = 0x01;

struct Page<'a> {
    header_type: u8,
    granule: u64,
    serial: u32,
    lacing: &'a [u8],
    body: &'a [u8],
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Codec {
    Opus,
    Vorbis,
}

pub fn sanitize(input: &[u8]) -> Result<Clean, Rejection> {
    let pages = pages(input)?;
    let first = pages.first().ok_or(CORRUPT)?;
    if first.header_type & BOS == 0 || pages.iter().skip(1).any(|p| p.header_type & BOS != 0) {
        return Err(if first.header_type & BOS == 0 { CORRUPT } else { UNSUPPORTED });
    }
    if pages.iter().any(|p| p.serial != first.serial) {
        return Err(UNSUPPORTED);
    }

    // The identification header is alone on the first page.
    let id_header = match first.lacing.last() {
        Some(&last) if last < 255 && first.lacing[..first.lacing.len() - 1].iter().all(|&l| l == 255) => first.body,
        _ => return Err(CORRUPT),
    };
    let codec = if id_header.starts_with(b"OpusHead") && id_header.len() >= 19 {
        Codec::Opus
    } else if id_header.starts_with(b"\x01vorbis") && id_header.len() >= 30 {
        Codec::Vorbis
    } else if id_header.starts_with(b"\x80theora") {
        return Err(Rejection::UnsupportedCodec { kind: Kind::Video });
    } else {
        return Err(UNSUPPORTED);
    };

    // The remaining headers, reassembled from the following pages up to a page boundary.
    let wanted = if codec == Codec::Opus { 1 } else { 2 };
    let mut headers: Vec<Vec<u8>> = Vec::new();
    let mut packet = Vec::new();
    let mut next_page = 1;
    while headers.len() < wanted {
        let page = pages.get(next_page).ok_or(CORRUPT)?;
        next_page += 1;
        let mut at = 0;
        for &lace in page.lacing {
            let segment = page.body.get(at..at + usize::from(lace)).ok_or(CORRUPT)?;
            packet.extend_from_slice(segment);
            at += usize::from(lace);
            if lace < 255 {
                if headers.len() == wanted {
                    // A packet after the last header on the same page: audio must start a page.
                    return Err(CORRUPT);
                }
                headers.push(std::mem::take(&mut packet));
            }
        }
    }
    if !packet.is_empty() {
        return Err(CORRUPT);
    }
    let comment = match codec {
        Codec::Opus if headers[0].starts_with(b"OpusTags") => empty_comment(b"OpusTags", false),
        Codec::Vorbis if headers[0].starts_with(b"\x03vorbis") && headers[1].starts_with(b"\x05vorbis") => {
            empty_comment(b"\x03vorbis", true)
        }
        _ => return Err(CORRUPT),
    };

    let audio = &pages[next_page..];
    if audio.is_empty() || audio[0].header_type & CONTINUED != 0 {
        return Err(CORRUPT);
    }
    let mut out = Vec::with_capacity(input.len());
    let mut sequence = 0u32;
    write_page(&mut out, BOS, 0, first.serial, &mut sequence, first.lacing, id_header);
    let mut header_packets = vec![comment];
    header_packets.extend(headers.into_iter().skip(1));
    paginate(&mut out, first.serial, &mut sequence, &header_packets);
    for page in audio {
        write_page(&mut out, page.header_type, page.granule, page.serial, &mut sequence, page.lacing, page.body);
    }
    Ok(Clean { kind: Kind::Audio, mime: "audio/ogg", bytes: out, width: None, height: None })
}

/// The Ogg pages from the start of the input, stopping at the first byte that does not
/// begin a page.
fn pages(input: &[u8]) -> Result<Vec<Page<'_>>, Rejection> {
    let mut pages = Vec::new();
    let mut pos = 0;
    while input.get(pos..).is_some_and(|rest| rest.starts_with(b"OggS")) {
        let header = input.get(pos..pos + 27).ok_or(CORRUPT)?;
        let segments = usize::from(header[26]);
        let lacing = input.get(pos + 27..pos + 27 + segments).ok_or(CORRUPT)?;
        let body_len: usize = lacing.iter().map(|&l| usize::from(l)).sum();
        let end = pos + 27 + segments + body_len;
        let whole = input.get(pos..end).ok_or(CORRUPT)?;
        if header[4] != 0 || le_u32(header, 22) != Some(page_crc(whole)) {
            return Err(CORRUPT);
        }
        let granule = u64::from_le_bytes(*header[6..].first_chunk().ok_or(CORRUPT)?);
        let serial = le_u32(header, 14).ok_or(CORRUPT)?;
        pages.push(Page { header_type: header[5], granule, serial, lacing, body: &whole[27 + segments..] });
        pos = end;
    }
    Ok(pages)
}

fn empty_comment(magic: &[u8], framing_bit: bool) -> Vec<u8> {
    let mut packet = magic.to_vec();
    packet.extend_from_slice(&(VENDOR.len() as u32).to_le_bytes());
    packet.extend_from_slice(VENDOR);
    packet.extend_from_slice(&0u32.to_le_bytes());
    if framing_bit {
        packet.push(1);
    }
    packet
}

/// Lays header packets out on pages of at most 255 segments; the last page ends with
/// the last packet, so the audio pages that follow start on a fresh page.
fn paginate(out: &mut Vec<u8>, serial: u32, sequence: &mut u32, packets: &[Vec<u8>]) {
    let mut lacing = Vec::new();
    let mut body = Vec::new();
    let mut header_type = 0;
    let mut packet_ended = false;
    for packet in packets {
        let mut laces = vec![255u8; packet.len() / 255];
        laces.push((packet.len() % 255) as u8);
        let mut data = packet.as_slice();
        for (i, &lace) in laces.iter().enumerate() {
            if lacing.len() == 255 {
                let granule = if packet_ended { 0 } else { u64::MAX };
                write_page(out, header_type, granule, serial, sequence, &lacing, &body);
                header_type = if i == 0 { 0 } else { CONTINUED };
                packet_ended = false;
                lacing.clear();
                body.clear();
            }
            let (segment, rest) = data.split_at(usize::from(lace).min(data.len()));
            lacing.push(lace);
            body.extend_from_slice(segment);
            data = rest;
        }
        packet_ended = true;
    }
    if !lacing.is_empty() {
        write_page(out, header_type, 0, serial, sequence, &lacing, &body);
    }
}

fn write_page(
    out: &mut Vec<u8>,
    header_type: u8,
    granule: u64,
    serial: u32,
    sequence: &mut u32,
    lacing: &[u8],
    body: &[u8],
) {
    let start = out.len();
    out.extend_from_slice(b"OggS\0");
    out.push(header_type);
    out.extend_from_slice(&granule.to_le_bytes());
    out.extend_from_slice(&serial.to_le_bytes());
    out.extend_from_slice(&sequence.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.push(lacing.len() as u8);
    out.extend_from_slice(lacing);
    out.extend_from_slice(body);
    let crc = page_crc(&out[start..]);
    out[start + 22..start + 26].copy_from_slice(&crc.to_le_bytes());
    *sequence = sequence.wrapping_add(1);
}

/// The Ogg checksum: CRC-32, polynomial 0x04C11DB7, not reflected, initial value 0,
/// computed with the checksum field taken as zero.
fn page_crc(page: &[u8]) -> u32 {
    page.iter().enumerate().fold(0u32, |crc, (i, &byte)| {
        let byte = if (22..26).contains(&i) { 0 } else { byte };
        (crc << 8) ^ CRC_TABLE[usize::from((crc >> 24) as u8 ^ byte)]
    })
}

const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u32) << 24;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000_0000 != 0 { (crc << 1) ^ 0x04C1_1DB7 } else { crc << 1 };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(id_header: &[u8], serial_of_second: u32) -> Vec<u8> {
        let mut out = Vec::new();
        let mut seq = 0;
        write_page(&mut out, BOS, 0, 7, &mut seq, &[id_header.len() as u8], id_header);
        let tags = empty_comment(b"OpusTags", false);
        write_page(&mut out, 0, 0, serial_of_second, &mut seq, &[tags.len() as u8], &tags);
        write_page(&mut out, 0, 960, 7, &mut seq, &[3], b"\xfc\xff\xfe");
        out
    }

    #[test]
    fn a_minimal_opus_stream_passes_and_other_codecs_do_not() {
        let head = b"OpusHead\x01\x01\x38\x01\x80\xbb\x00\x00\x00\x00\x00";
        let clean = sanitize(&stream(head, 7)).unwrap();
        assert_eq!(clean.bytes, stream(head, 7), "already clean, so unchanged");
        assert_eq!(sanitize(&stream(head, 8)).unwrap_err(), UNSUPPORTED, "two serials");
        for other in [&b"\x7fFLAC\x01\x00\x00\x01fLaC\x00\x00\x00\x22"[..], b"Speex   1.2"] {
            assert_eq!(sanitize(&stream(other, 7)).unwrap_err(), UNSUPPORTED);
        }
        let theora = stream(b"\x80theora\x03\x02\x01", 7);
        assert_eq!(sanitize(&theora).unwrap_err(), Rejection::UnsupportedCodec { kind: Kind::Video });
    }

    #[test]
    fn the_checksum_is_the_ogg_one() {
        // CRC of a page as written by libogg (the first page of voice.opus).
        let raw = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/media/voice.opus"));
        let first = &raw[..27 + 1 + usize::from(raw[27])];
        assert_eq!(le_u32(first, 22), Some(page_crc(first)));
    }

    #[test]
    fn long_header_packets_span_pages_with_the_continuation_flag() {
        let big = vec![7u8; 300 * 255];
        let mut out = Vec::new();
        let mut seq = 0;
        paginate(&mut out, 1, &mut seq, &[empty_comment(b"OpusTags", false), big]);
        let parsed = pages(&out).unwrap();
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[1].header_type, CONTINUED);
        assert_eq!(parsed.iter().map(|p| p.body.len()).sum::<usize>(), 300 * 255 + 24);
        assert_eq!((parsed[0].granule, parsed[1].granule), (0, 0));
    }
}
