//! Test media: multipart bodies and pictures carrying identifying metadata
//! (EXIF with GPS text, PNG text chunks, comments), made in the test so each
//! carries its own marker.

use std::io::Cursor;

pub const BOUNDARY: &str = "----anonpollTestBoundary7MA4YWxkTrZu0gW";

/// A file part: field name, the client's file name and type (both must be
/// ignored by the server), bytes.
pub struct File<'a>(pub &'a str, pub &'a str, pub &'a str, pub &'a [u8]);

pub fn multipart(texts: &[(&str, &str)], files: &[File]) -> Vec<u8> {
    let mut b = Vec::new();
    for (name, value) in texts {
        b.extend_from_slice(
            format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
        );
        b.extend_from_slice(value.as_bytes());
        b.extend_from_slice(b"\r\n");
    }
    for File(name, filename, ctype, bytes) in files {
        b.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\nContent-Type: {ctype}\r\n\r\n"
            )
            .as_bytes(),
        );
        b.extend_from_slice(bytes);
        b.extend_from_slice(b"\r\n");
    }
    b.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    b
}

/// The `Content-Type` of [`multipart`] bodies.
pub fn multipart_type() -> String {
    format!("multipart/form-data; boundary={BOUNDARY}")
}

// ---------------------------------------------------------------------------
// Test files carrying identifying metadata
// ---------------------------------------------------------------------------

/// A small photo-like picture (smooth gradients, so it survives re-encoding).
pub fn picture(w: u32, h: u32) -> image::RgbImage {
    image::RgbImage::from_fn(w, h, |x, y| image::Rgb([(x * 255 / w) as u8, (y * 255 / h) as u8, 128]))
}

/// A JPEG with an EXIF block (camera description and GPS text) and a comment,
/// each carrying `marker`.
pub fn jpeg_with_exif(marker: &str) -> Vec<u8> {
    let mut plain = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut plain, 90).encode_image(&picture(64, 48)).unwrap();
    // A minimal big-endian TIFF with one ImageDescription (ASCII) entry.
    let text = format!("{marker} GPSLatitude 47.3769 N GPSLongitude 8.5417 E Canon EOS");
    let mut tiff = b"MM\x00\x2a\x00\x00\x00\x08\x00\x01".to_vec();
    tiff.extend_from_slice(&[0x01, 0x0e, 0x00, 0x02]);
    tiff.extend_from_slice(&((text.len() + 1) as u32).to_be_bytes());
    tiff.extend_from_slice(&26u32.to_be_bytes());
    tiff.extend_from_slice(&0u32.to_be_bytes());
    tiff.extend_from_slice(text.as_bytes());
    tiff.push(0);
    let mut app1 = b"Exif\x00\x00".to_vec();
    app1.extend_from_slice(&tiff);
    let mut out = plain[..2].to_vec();
    out.extend_from_slice(&[0xff, 0xe1]);
    out.extend_from_slice(&((app1.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(&app1);
    let comment = format!("comment {marker}");
    out.extend_from_slice(&[0xff, 0xfe]);
    out.extend_from_slice(&((comment.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(comment.as_bytes());
    out.extend_from_slice(&plain[2..]);
    out
}

pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// A PNG with a `tEXt` chunk carrying `marker`, and `tail` appended after
/// its end (a polyglot when the tail is, say, HTML).
pub fn png_with_text(marker: &str, tail: &[u8]) -> Vec<u8> {
    let mut plain = Vec::new();
    picture(40, 30).write_to(&mut Cursor::new(&mut plain), image::ImageFormat::Png).unwrap();
    let mut chunk_body = b"tEXt".to_vec();
    chunk_body.extend_from_slice(b"Comment\x00");
    chunk_body.extend_from_slice(format!("GPS 47.3769,8.5417 {marker}").as_bytes());
    let mut chunk = ((chunk_body.len() - 4) as u32).to_be_bytes().to_vec();
    chunk.extend_from_slice(&chunk_body);
    chunk.extend_from_slice(&crc32(&chunk_body).to_be_bytes());
    // After the signature (8) and IHDR (25 bytes).
    let mut out = plain[..33].to_vec();
    out.extend_from_slice(&chunk);
    out.extend_from_slice(&plain[33..]);
    out.extend_from_slice(tail);
    out
}

/// A picture of `w`×`h` noise: it does not compress, so its PNG is large.
pub fn noise_png(w: u32, h: u32) -> Vec<u8> {
    let mut state = 0x2545_f491_u32;
    let img = image::RgbImage::from_fn(w, h, |_, _| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let [a, b, c, _] = state.to_le_bytes();
        image::Rgb([a, b, c])
    });
    let mut out = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

/// The fields of a minimal valid creation form (one question, two answers,
/// English, 7 days) with its one-time code, a title and the poll picture's alt
/// text.
pub fn minimal_form<'a>(once: &'a str, title: &'a str, alt: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("once", once),
        ("title", title),
        ("lang", "en"),
        ("expiry", "7"),
        ("q0", "Q"),
        ("q0o0", "a"),
        ("q0o1", "b"),
        ("pm-alt", alt),
    ]
}

/// Creates a poll through the web form with a noise picture of `w` x `h`
/// pixels (hard to compress, so big) on the poll; the poll and the
/// picture's /media path.
pub fn big_noise_picture(server: &super::Server, (w, h): (u32, u32)) -> (super::Created, String) {
    let big = noise_png(w, h);
    let code = super::once(server);
    let resp = server
        .request("POST", "/")
        .xff(&super::Server::fresh_client_ip())
        .header("Content-Type", &multipart_type())
        .body(multipart(&minimal_form(&code, "Big", "Noise"), &[File("pm", "n.png", "image/png", &big)]))
        .send();
    assert_eq!(resp.status, 201, "{}", resp.describe());
    let poll = super::Created::from_page(&resp.text());
    let media = server.get(&format!("/api/polls/{}", poll.id)).json()["media"][0]["id"].as_str().unwrap().to_owned();
    (poll, format!("/media/{media}"))
}
