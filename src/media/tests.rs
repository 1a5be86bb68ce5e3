//! Tests over the real files in `tests/fixtures/media/` (see its README for how they
//! were made): each carries a marker string, GPS coordinates and camera names, and each
//! check below first asserts that the raw fixture does contain what the sanitized output
//! must not, so a test cannot pass by testing nothing.

use super::*;

macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/media/", $name)).as_slice()
    };
}

pub(super) const MARKER: &[u8] = b"ANONPOLL-SECRET-MARKER";

/// Every fixture, with the kind and mime its clean version must have.
pub(super) fn fixtures() -> Vec<(&'static str, &'static [u8], Kind, &'static str)> {
    vec![
        ("photo.jpg", fixture!("photo.jpg"), Kind::Image, "image/jpeg"),
        ("image.png", fixture!("image.png"), Kind::Image, "image/png"),
        ("image.webp", fixture!("image.webp"), Kind::Image, "image/webp"),
        ("anim.gif", fixture!("anim.gif"), Kind::Image, "image/gif"),
        ("sound.mp3", fixture!("sound.mp3"), Kind::Audio, "audio/mpeg"),
        ("voice.opus", fixture!("voice.opus"), Kind::Audio, "audio/ogg"),
        ("sound.ogg", fixture!("sound.ogg"), Kind::Audio, "audio/ogg"),
        ("sound.m4a", fixture!("sound.m4a"), Kind::Audio, "audio/mp4"),
        ("clip.mp4", fixture!("clip.mp4"), Kind::Video, "video/mp4"),
        ("clip.webm", fixture!("clip.webm"), Kind::Video, "video/webm"),
        ("live.webm", fixture!("live.webm"), Kind::Video, "video/webm"),
        ("sound.webm", fixture!("sound.webm"), Kind::Audio, "audio/webm"),
    ]
}

/// exiftool writes GPSLatitude 47°22'… as big-endian rationals 47/1, 22/1.
const GPS_RATIONALS_BE: &[u8] = &[0, 0, 0, 47, 0, 0, 0, 1, 0, 0, 0, 22, 0, 0, 0, 1];

/// Strings that betray a person, place or device, as they appear in raw files.
/// (`GPS` and `TAG` are short but appear in no clean output of our fixtures.)
const TELLTALES: &[&[u8]] = &[
    MARKER,
    GPS_RATIONALS_BE,
    b"+47.3769",
    b"+008.5417",
    b"47.3769",
    b"AnonCam",
    b"Exif\0\0",
    b"http://ns.adobe.com/xap",
    b"ID3",
    b"TAG",
    b"GPS",
];

pub(super) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn found_in(bytes: &[u8]) -> Vec<String> {
    TELLTALES.iter().filter(|t| contains(bytes, t)).map(|t| String::from_utf8_lossy(t).into_owned()).collect()
}

fn clean(name: &str, raw: &[u8]) -> Clean {
    match sanitize(raw, &Limits::default()) {
        Ok(clean) => clean,
        Err(e) => panic!("{name}: {e}"),
    }
}

fn assert_stripped(name: &str, raw: &[u8], must_have_been_there: &[&[u8]]) {
    for t in must_have_been_there {
        assert!(
            contains(raw, t),
            "{name}: the fixture lacks {:?}, the test would prove nothing",
            String::from_utf8_lossy(t)
        );
    }
    let out = clean(name, raw);
    assert_eq!(found_in(&out.bytes), Vec::<String>::new(), "{name}: metadata left in the output");
}

fn assert_idempotent(name: &str, raw: &[u8], kind: Kind, mime: &str) {
    let first = clean(name, raw);
    assert_eq!((first.kind, first.mime), (kind, mime), "{name}");
    let second = clean(name, &first.bytes);
    assert_eq!((second.kind, second.mime, second.width, second.height), (kind, mime, first.width, first.height));
}

#[test]
fn jpeg_loses_exif_gps_xmp_comment_and_camera() {
    let raw = fixture!("photo.jpg");
    assert_stripped(
        "photo.jpg",
        raw,
        &[MARKER, GPS_RATIONALS_BE, b"AnonCamMake", b"Exif\0\0", b"http://ns.adobe.com/xap"],
    );
}

#[test]
fn jpeg_is_turned_upright_by_its_exif_orientation() {
    // The fixture is 64×48 with Orientation=6 (rotate 90° clockwise to display).
    let out = clean("photo.jpg", fixture!("photo.jpg"));
    assert_eq!((out.width, out.height), (Some(48), Some(64)));
}

#[test]
fn png_loses_text_exif_and_xmp() {
    let raw = fixture!("image.png");
    assert_stripped("image.png", raw, &[MARKER, GPS_RATIONALS_BE, b"AnonCamMake", b"http://ns.adobe.com/xap"]);
    let out = clean("image.png", raw);
    for chunk in [b"tEXt", b"iTXt", b"zTXt", b"eXIf"] {
        assert!(!contains(&out.bytes, chunk), "{}", String::from_utf8_lossy(chunk));
    }
}

#[test]
fn webp_loses_exif_and_xmp_chunks() {
    let raw = fixture!("image.webp");
    assert_stripped("image.webp", raw, &[MARKER, GPS_RATIONALS_BE, b"AnonCamMake", b"EXIF", b"XMP "]);
    let out = clean("image.webp", raw);
    assert!(!contains(&out.bytes, b"EXIF") && !contains(&out.bytes, b"XMP "));
}

#[test]
fn gif_loses_comment_and_xmp_but_keeps_its_frames() {
    let raw = fixture!("anim.gif");
    assert_stripped("anim.gif", raw, &[MARKER, b"http://ns.adobe.com/xap"]);
    let out = clean("anim.gif", raw);
    let count = |bytes: &[u8]| {
        let mut d = ::gif::DecodeOptions::new().read_info(bytes).unwrap();
        let mut n = 0;
        while d.read_next_frame().unwrap().is_some() {
            n += 1;
        }
        n
    };
    assert_eq!(count(raw), 3);
    assert_eq!(count(&out.bytes), 3);
}

#[test]
fn every_fixture_comes_out_clean_and_sanitizing_again_changes_nothing_of_note() {
    for (name, raw, kind, mime) in fixtures() {
        assert!(contains(raw, MARKER), "{name}");
        assert_eq!(found_in(&clean(name, raw).bytes), Vec::<String>::new(), "{name}");
        assert_idempotent(name, raw, kind, mime);
    }
}

#[test]
fn images_keep_their_dimensions() {
    for (name, raw, kind, _) in fixtures() {
        if kind != Kind::Image || name == "photo.jpg" {
            continue;
        }
        let out = clean(name, raw);
        let decoded = ::image::load_from_memory(&out.bytes).unwrap();
        let original = ::image::load_from_memory(raw).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (original.width(), original.height()), "{name}");
        assert_eq!((out.width, out.height), (Some(original.width()), Some(original.height())), "{name}");
    }
}

#[test]
fn empty_and_foreign_types_are_refused() {
    let limits = Limits::default();
    assert_eq!(sanitize(b"", &limits).unwrap_err(), Rejection::Empty);
    for bad in [
        &b"<!DOCTYPE html><html><body>hi</body></html>"[..],
        b"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><script>alert(1)</script></svg>",
        b"%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n",
        b"\x00\x00\x00\x1cftypheic\x00\x00\x00\x00mif1heicmiaf",
    ] {
        assert_eq!(sanitize(bad, &limits).unwrap_err(), Rejection::UnsupportedType);
    }
}

#[test]
fn every_truncation_of_every_fixture_is_refused_or_clean_never_a_panic() {
    for (name, raw, kind, _) in fixtures() {
        let step = (raw.len() / 200).max(1);
        for cut in (1..raw.len()).step_by(step) {
            match sanitize(&raw[..cut], &Limits::default()) {
                Ok(out) => assert!(!contains(&out.bytes, MARKER), "{name} cut at {cut}"),
                // A WebM cut before its Tracks cannot know it was audio.
                Err(Rejection::Corrupt { kind: k }) => {
                    assert!(k == kind || name.ends_with(".webm"), "{name} cut at {cut}: {k:?}")
                }
                Err(Rejection::UnsupportedType) => {}
                Err(e) => panic!("{name} cut at {cut}: unexpected {e:?}"),
            }
        }
    }
}

#[test]
fn a_jpeg_with_a_zip_or_html_tail_comes_out_without_it() {
    let mut polyglot = fixture!("photo.jpg").to_vec();
    polyglot.extend_from_slice(b"PK\x03\x04\x14\x00\x00\x00\x08\x00secret.txt<html><script>alert(1)</script></html>");
    let out = clean("polyglot", &polyglot);
    assert_eq!(out.mime, "image/jpeg");
    assert!(!contains(&out.bytes, b"PK\x03\x04") && !contains(&out.bytes, b"<script>"));
    assert_eq!(out.bytes.last_chunk::<2>(), Some(&[0xFF, 0xD9]));
}

/// A PNG signature and IHDR claiming 100000×100000, followed by a tiny IDAT.
fn png_bomb() -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = out.len();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let crc = crc32(&out[start..]);
        out.extend_from_slice(&crc.to_be_bytes());
    }
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
            }
        }
        !crc
    }
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&100_000u32.to_be_bytes());
    ihdr.extend_from_slice(&100_000u32.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"IDAT", &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]);
    chunk(&mut png, b"IEND", &[]);
    png
}

#[test]
fn a_png_claiming_ten_billion_pixels_is_refused_from_its_header() {
    let started = std::time::Instant::now();
    assert_eq!(
        sanitize(&png_bomb(), &Limits::default()).unwrap_err(),
        Rejection::TooManyPixels { limit: Limits::default().max_pixels }
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
}

#[test]
fn the_pixel_limit_is_configurable() {
    let limits = Limits { max_pixels: 100, ..Limits::default() };
    for (name, raw, kind, _) in fixtures() {
        if kind == Kind::Image {
            assert_eq!(sanitize(raw, &limits).unwrap_err(), Rejection::TooManyPixels { limit: 100 }, "{name}");
        }
    }
}

#[test]
fn over_size_uploads_are_refused_per_kind() {
    let limits = Limits { image_bytes: 1000, audio_bytes: 1000, video_bytes: 1000, max_pixels: 40_000_000 };
    for (name, raw, kind, mime) in fixtures() {
        assert!(raw.len() > 1000, "{name} is too small for this test");
        // Before the parse, a WebM's kind is not known: the video limit applies first.
        let kind = if mime == "audio/webm" { Kind::Video } else { kind };
        assert_eq!(sanitize(raw, &limits).unwrap_err(), Rejection::TooLarge { kind, limit: 1000 }, "{name}");
    }
    // Once parsed, an audio-only WebM meets the audio limit.
    let audio_only = Limits { video_bytes: 1 << 20, ..limits };
    assert_eq!(
        sanitize(fixture!("sound.webm"), &audio_only).unwrap_err(),
        Rejection::TooLarge { kind: Kind::Audio, limit: 1000 }
    );
    let generous = Limits { image_bytes: 1 << 20, ..limits };
    assert!(sanitize(fixture!("photo.jpg"), &generous).is_ok());
}

#[test]
fn kind_names_round_trip_and_limits_have_the_documented_defaults() {
    for kind in [Kind::Image, Kind::Audio, Kind::Video] {
        assert_eq!(Kind::from_str(kind.as_str()), Some(kind));
    }
    assert_eq!(Kind::from_str("Image"), None);
    assert_eq!(serde_json::to_string(&Kind::Video).unwrap(), "\"video\"");
    let limits = Limits::default();
    assert_eq!((limits.image_bytes, limits.audio_bytes, limits.video_bytes), (10 << 20, 20 << 20, 50 << 20));
    assert_eq!((limits.max_pixels, limits.largest()), (40_000_000, 50 << 20));
    assert_eq!(
        Rejection::TooLarge { kind: Kind::Audio, limit: 5 }.to_string(),
        "the audio is larger than the limit of 5 bytes"
    );
}

/// Sanitizes the file `$MEDIA_PROBE` and prints the verdict (writing the clean bytes to
/// `$MEDIA_PROBE_OUT` if set): for trying real files by hand, e.g.
/// `MEDIA_PROBE=a.mov cargo test --lib media::tests::probe -- --ignored --nocapture`.
#[test]
#[ignore]
fn probe() {
    let path = std::env::var("MEDIA_PROBE").unwrap();
    let raw = std::fs::read(&path).unwrap();
    let out = sanitize(&raw, &Limits::default());
    if let (Ok(clean), Ok(to)) = (&out, std::env::var("MEDIA_PROBE_OUT")) {
        std::fs::write(to, &clean.bytes).unwrap();
    }
    println!("{path}: {:?}", out.map(|c| (c.kind, c.mime, c.bytes.len(), c.width, c.height)));
}

/// Writes every fixture's clean version to `$MEDIA_DUMP_DIR`, for checking by hand with
/// ffprobe/exiftool: `MEDIA_DUMP_DIR=/tmp/out cargo test --lib media::tests::dump -- --ignored`.
#[test]
#[ignore]
fn dump() {
    let dir = std::env::var("MEDIA_DUMP_DIR").unwrap();
    for (name, raw, _, _) in fixtures() {
        std::fs::write(format!("{dir}/{name}"), clean(name, raw).bytes).unwrap();
    }
}

fn replace_all(bytes: &[u8], from: &[u8], to: &[u8], skip: usize) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let mut out = bytes.to_vec();
    let mut i = skip;
    let mut hits = 0;
    while i + from.len() <= out.len() {
        if &out[i..i + from.len()] == from {
            out[i..i + from.len()].copy_from_slice(to);
            hits += 1;
        }
        i += 1;
    }
    assert!(hits > 0, "{:?} not found", String::from_utf8_lossy(from));
    out
}

#[test]
fn mp4_loses_tags_location_xmp_device_and_dates_but_keeps_every_offset() {
    for name in ["clip.mp4", "sound.m4a"] {
        let raw = fixtures().into_iter().find(|f| f.0 == name).unwrap().1;
        assert_stripped(name, raw, &[MARKER, b"+47.3769", b"http://ns.adobe.com/xap", b"\xa9xyz", b"uuid", b"ilst"]);
        let out = clean(name, raw);
        assert_eq!(out.bytes.len(), raw.len(), "{name}: boxes must keep their sizes");
        for gone in [&b"\xa9xyz"[..], b"loci", b"uuid", b"udta", b"ilst", b"keys", b"SoundHandler"] {
            assert!(!contains(&out.bytes, gone), "{name}: {}", String::from_utf8_lossy(gone));
        }
        // mdat is untouched: every sample offset still points at the same bytes.
        let mdat = raw.windows(4).position(|w| w == b"mdat").unwrap();
        assert_eq!(out.bytes[mdat..], raw[mdat..], "{name}");
        // mvhd's creation and modification times are zero.
        let mvhd = raw.windows(4).position(|w| w == b"mvhd").unwrap() + 4;
        assert_ne!(raw[mvhd + 4..mvhd + 12], [0; 8], "{name}: the fixture has no date");
        assert_eq!(out.bytes[mvhd + 4..mvhd + 12], [0; 8], "{name}");
    }
    let video = clean("clip.mp4", fixture!("clip.mp4"));
    assert_eq!((video.width, video.height), (Some(64), Some(48)));
}

#[test]
fn mp4_with_hevc_video_is_an_unsupported_codec() {
    let hevc = replace_all(fixture!("clip.mp4"), b"avc1", b"hvc1", 32);
    assert_eq!(sanitize(&hevc, &Limits::default()).unwrap_err(), Rejection::UnsupportedCodec { kind: Kind::Video });
    let opus_in_m4a = replace_all(fixture!("sound.m4a"), b"mp4a", b"Opus", 32);
    assert_eq!(
        sanitize(&opus_in_m4a, &Limits::default()).unwrap_err(),
        Rejection::UnsupportedCodec { kind: Kind::Audio }
    );
}

#[test]
fn mp4_with_trailing_junk_or_a_broken_box_is_corrupt() {
    let mut junk = fixture!("clip.mp4").to_vec();
    junk.extend_from_slice(b"<html><script>alert(1)</script></html>");
    assert_eq!(sanitize(&junk, &Limits::default()).unwrap_err(), Rejection::Corrupt { kind: Kind::Video });
    let mut zip = fixture!("sound.m4a").to_vec();
    zip.extend_from_slice(b"PK\x03\x04\x14\x00\x00\x00");
    assert_eq!(sanitize(&zip, &Limits::default()).unwrap_err(), Rejection::Corrupt { kind: Kind::Audio });
    // No moov at all.
    let no_moov = replace_all(fixture!("clip.mp4"), b"moov", b"junk", 0);
    assert!(matches!(sanitize(&no_moov, &Limits::default()), Err(Rejection::Corrupt { .. })));
}

#[test]
fn mp4_track_other_than_audio_or_video_is_dropped_with_its_samples() {
    // Relabel the audio track as timed metadata (as GoPro GPS or Apple mebx tracks are).
    let raw = replace_all(fixture!("clip.mp4"), b"soun", b"meta", 32);
    let out = clean("relabelled", &raw);
    assert_eq!((out.kind, out.bytes.len()), (Kind::Video, raw.len()));
    assert!(!contains(&out.bytes, b"mp4a"), "the dropped track's sample entry is gone");
    let nonzero = |b: &[u8]| b.iter().filter(|&&x| x != 0).count();
    let mdat = raw.windows(4).position(|w| w == b"mdat").unwrap();
    assert!(nonzero(&out.bytes[mdat..]) < nonzero(&raw[mdat..]), "its samples are zeroed");
    assert_eq!(clean("again", &out.bytes).kind, Kind::Video);
}

#[test]
fn mp3_keeps_only_frames_dropping_id3v2_id3v1_ape_and_lyrics() {
    let raw = fixture!("sound.mp3");
    assert_stripped("sound.mp3", raw, &[MARKER, b"ID3", b"TAG", b"+47.3769"]);
    // Two more ID3v2 tags in front (one with a footer) and APEv2 + Lyrics3 behind.
    let mut tags = b"ID3\x04\x00\x10\x00\x00\x00\x0aTIT2ANONPO3DI\x04\x00\x10\x00\x00\x00\x0a".to_vec();
    tags.extend_from_slice(b"ID3\x03\x00\x00\x00\x00\x00\x04TPE1");
    let mut dressed = tags.clone();
    dressed.extend_from_slice(raw);
    dressed.extend_from_slice(b"APETAGEX\xd0\x07\x00\x00Artist\x00ANONPOLL-SECRET-MARKER APETAGEX");
    dressed.extend_from_slice(b"LYRICSBEGININDANONPOLL-SECRET-MARKER000035LYRICS200<html>");
    let out = clean("dressed", &dressed);
    assert_eq!(out.bytes, clean("sound.mp3", raw).bytes);
    for gone in [&b"ID3"[..], b"3DI", b"TAG", b"APETAGEX", b"LYRICS", b"<html>", MARKER] {
        assert!(!contains(&out.bytes, gone), "{}", String::from_utf8_lossy(gone));
    }
    assert_eq!(out.bytes[0], 0xFF);
}

#[test]
fn mp3_with_too_few_frames_or_a_broken_id3_header_is_corrupt() {
    let raw = fixture!("sound.mp3");
    let out = clean("sound.mp3", raw).bytes;
    assert_eq!(sanitize(&out[..300], &Limits::default()).unwrap_err(), Rejection::Corrupt { kind: Kind::Audio });
    assert_eq!(
        sanitize(b"ID3\x09\x00\x00\x00\x00\x00\x00\xFF\xFB", &Limits::default()).unwrap_err(),
        Rejection::Corrupt { kind: Kind::Audio }
    );
    // ADTS AAC behind an ID3 tag: a codec we know but do not take.
    assert_eq!(
        sanitize(b"ID3\x03\x00\x00\x00\x00\x00\x00\xFF\xF1\x50\x80\x02\x1F\xFC", &Limits::default()).unwrap_err(),
        Rejection::UnsupportedCodec { kind: Kind::Audio }
    );
}

#[test]
fn ogg_opus_and_vorbis_get_an_empty_comment_header_and_the_same_audio() {
    for (name, raw, magic) in
        [("voice.opus", fixture!("voice.opus"), &b"OpusTags"[..]), ("sound.ogg", fixture!("sound.ogg"), b"\x03vorbis")]
    {
        assert_stripped(name, raw, &[MARKER, b"+47.3769", b"Lavf"]);
        let out = clean(name, raw).bytes;
        assert!(!contains(&out, b"Lavf") && !contains(&out, b"libopus") && !contains(&out, b"Xiph"), "{name}: vendor");
        let mut empty = magic.to_vec();
        empty.extend_from_slice(b"\x08\x00\x00\x00anonpoll\x00\x00\x00\x00");
        assert!(contains(&out, &empty), "{name}");
        // The last page (audio) is copied as is apart from its sequence number and CRC.
        let last = |b: &[u8]| b.len() - b.windows(4).rev().position(|w| w == b"OggS").unwrap() - 4;
        let (a, b) = (&raw[last(raw)..], &out[last(&out)..]);
        assert_eq!((a.len(), &a[..18], &a[26..]), (b.len(), &b[..18], &b[26..]), "{name}");
    }
}

#[test]
fn ogg_drops_a_polyglot_tail_and_refuses_a_cut_page() {
    let raw = fixture!("voice.opus");
    let mut tail = raw.to_vec();
    tail.extend_from_slice(b"<html><script>alert(1)</script></html>");
    assert_eq!(clean("tail", &tail).bytes, clean("voice.opus", raw).bytes);
    let last_page = raw.len() - raw.windows(4).rev().position(|w| w == b"OggS").unwrap() - 4;
    let mut cut_page = raw.to_vec();
    cut_page.extend_from_slice(&raw[last_page..raw.len() - 10]);
    assert_eq!(sanitize(&cut_page, &Limits::default()).unwrap_err(), Rejection::Corrupt { kind: Kind::Audio });
    let mut flipped = raw.to_vec();
    let n = flipped.len();
    flipped[n - 5] ^= 1;
    assert_eq!(sanitize(&flipped, &Limits::default()).unwrap_err(), Rejection::Corrupt { kind: Kind::Audio });
}

/// EBML IDs followed by the first byte of a size, as they appear in our fixtures.
const DATE_UTC: &[u8] = &[0x44, 0x61, 0x88];
const TAGS: &[u8] = &[0x12, 0x54, 0xC3, 0x67];

#[test]
fn webm_loses_tags_title_date_apps_and_track_names_keeping_its_length() {
    for name in ["clip.webm", "live.webm", "sound.webm"] {
        let raw = fixtures().into_iter().find(|f| f.0 == name).unwrap().1;
        assert_stripped(name, raw, &[MARKER, DATE_UTC, TAGS, b"Lavf"]);
        let out = clean(name, raw);
        assert_eq!(out.bytes.len(), raw.len(), "{name}: Void keeps every position");
        for gone in [DATE_UTC, TAGS, b"Lavf", b"Lavc", b"Xiph", b"encoder="] {
            assert!(!contains(&out.bytes, gone), "{name}: {gone:x?}");
        }
    }
    let video = clean("clip.webm", fixture!("clip.webm"));
    assert_eq!((video.width, video.height), (Some(64), Some(48)));
}

#[test]
fn webm_clusters_of_unknown_size_as_mediarecorder_writes_them_are_handled() {
    // Give every Cluster of live.webm (its Segment already has an unknown size) an
    // unknown size too: the same-length all-ones size field.
    let mut raw = fixture!("live.webm").to_vec();
    let mut patched = 0;
    for i in 0..raw.len() - 6 {
        if raw[i..i + 4] == [0x1F, 0x43, 0xB6, 0x75] {
            let len = raw[i + 4].leading_zeros() as usize + 1;
            raw[i + 4] |= 0xFF >> len;
            raw[i + 5..i + 4 + len].fill(0xFF);
            patched += 1;
        }
    }
    assert!(patched >= 1);
    let out = clean("unknown-size clusters", &raw);
    assert_eq!((out.kind, out.bytes.len()), (Kind::Video, raw.len()));
    assert!(!contains(&out.bytes, MARKER));
    // Junk after the last unknown-size Cluster is either refused or voided, never kept.
    raw.extend_from_slice(b"\xEC\x90<html>ANONPOLL!!");
    match sanitize(&raw, &Limits::default()) {
        Ok(out) => assert!(!contains(&out.bytes, b"<html>")),
        Err(e) => assert_eq!(e, Rejection::Corrupt { kind: Kind::Video }),
    }
}

#[test]
fn webm_with_other_codecs_or_doc_types_is_refused() {
    let limits = Limits::default();
    let h264 = replace_all(fixture!("clip.webm"), b"V_VP8", b"V_MS8", 0);
    assert_eq!(sanitize(&h264, &limits).unwrap_err(), Rejection::UnsupportedCodec { kind: Kind::Video });
    let flac = replace_all(fixture!("sound.webm"), b"A_VORBIS", b"A_FLACXX", 0);
    assert_eq!(sanitize(&flac, &limits).unwrap_err(), Rejection::UnsupportedCodec { kind: Kind::Audio });
    let other = replace_all(fixture!("clip.webm"), b"webm", b"wxyz", 0);
    assert_eq!(sanitize(&other, &limits).unwrap_err(), Rejection::UnsupportedType);
    let mut junk = fixture!("clip.webm").to_vec();
    junk.extend_from_slice(b"PK\x03\x04");
    assert_eq!(sanitize(&junk, &limits).unwrap_err(), Rejection::Corrupt { kind: Kind::Video });
}

/// A fixed-seed generator (`rand`'s StdRng), so a failure replays exactly.
type Rng = rand::rngs::StdRng;

/// A number in `0..n` (0 for an empty range).
fn below(rng: &mut Rng, n: usize) -> usize {
    use rand::RngExt;
    rng.random_range(0..n.max(1))
}

fn byte(rng: &mut Rng) -> u8 {
    use rand::RngExt;
    rng.random()
}

fn mutate(raw: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut bytes = raw.to_vec();
    for _ in 0..1 + below(rng, 4) {
        let at = below(rng, bytes.len());
        match below(rng, 6) {
            0 | 1 => bytes[at] ^= 1 << below(rng, 8),
            2 => bytes[at] = byte(rng),
            3 => bytes.truncate(at.max(1)),
            4 => {
                let run: Vec<u8> = (0..1 + below(rng, 8)).map(|_| byte(rng)).collect();
                bytes.splice(at..at, run);
            }
            _ => {
                // Lengths and sizes are where parsers break: put 0x00 or 0xFF at a random place.
                bytes[at] = if below(rng, 2) == 0 { 0 } else { 0xFF };
            }
        }
    }
    bytes
}

#[test]
fn mutated_fixtures_never_panic_and_never_come_out_with_the_marker() {
    // MEDIA_MUTATION_ROUNDS=20000 for a longer run by hand.
    let default = if cfg!(debug_assertions) { 150 } else { 1500 };
    let rounds = std::env::var("MEDIA_MUTATION_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(default);
    let mut rng = <Rng as rand::SeedableRng>::seed_from_u64(0x5EED_A110_C0FF_EE00);
    let mut accepted = 0;
    for (name, raw, _, _) in fixtures() {
        for round in 0..rounds {
            let input = mutate(raw, &mut rng);
            if let Ok(out) = sanitize(&input, &Limits::default()) {
                accepted += 1;
                assert!(!contains(&out.bytes, MARKER), "{name}, round {round}: the marker survived");
                // What we serve must itself pass, without a panic either.
                let _ = sanitize(&out.bytes, &Limits::default());
            }
        }
    }
    // Most single mutations of a container are still acceptable files: if nothing is, the
    // test checks nothing.
    assert!(accepted > rounds, "only {accepted} mutations accepted");
}
