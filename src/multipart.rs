//! `multipart/form-data` bodies, the only way media reaches the service (the
//! web forms; the JSON API takes none).
//!
//! Why here: the connection layer has already read the whole body, within the
//! upload limit, into memory; this module splits it into text fields and
//! files with `multer` (a maintained parser, the one axum and Rocket use).
//! multer is asynchronous, but over a body already in memory every future it
//! returns is ready at once, so it is driven here by polling, with no
//! executor and no thread.
//!
//! Promises:
//! - bounded: the whole body, each field, the number of parts and each text
//!   field's length are limited; past a bound the answer is an error, never
//!   an allocation that grows with the input;
//! - a file part's client-sent type and file name are dropped here: the type
//!   of an upload is decided by its content alone (`media::sanitize`), and a
//!   file name may carry a person's name;
//! - never panics on any input (see the property test and the fuzz target).

use std::convert::Infallible;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;

/// Bounds of one multipart body.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The whole body.
    pub total: usize,
    /// Parts (text fields and files together).
    pub parts: usize,
    /// One text field, in bytes.
    pub text: usize,
}

impl Limits {
    pub fn new(total: usize) -> Limits {
        Limits { total, parts: 512, text: 16 * 1024 }
    }
}

/// Why a body could not be split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultipartError {
    /// Not `multipart/form-data`, or no boundary.
    NotMultipart,
    TooLarge,
    TooManyParts,
    /// A text field longer than [`Limits::text`].
    TextTooLong,
    Malformed,
}

/// A body split into its parts, in order.
#[derive(Debug, Default)]
pub struct Parts {
    /// Text fields: name and value.
    pub texts: Vec<(String, String)>,
    /// Files the person chose, by field name. A file input left empty is sent
    /// by browsers as an empty part with an empty file name: it is left out.
    pub files: Vec<(String, Bytes)>,
}

/// Splits `body`, sent with the `Content-Type` header value `content_type`.
pub fn parse(content_type: &str, body: Bytes, limits: &Limits) -> Result<Parts, MultipartError> {
    let media_type = content_type.split(';').next().unwrap_or("").trim();
    if !media_type.eq_ignore_ascii_case("multipart/form-data") {
        return Err(MultipartError::NotMultipart);
    }
    let boundary = multer::parse_boundary(content_type).map_err(|_| MultipartError::NotMultipart)?;
    if body.len() > limits.total {
        return Err(MultipartError::TooLarge);
    }
    let total = limits.total as u64;
    let constraints =
        multer::Constraints::new().size_limit(multer::SizeLimit::new().whole_stream(total).per_field(total));
    let stream = futures_util::stream::iter([Ok::<Bytes, Infallible>(body)]);
    let mut multipart = multer::Multipart::with_constraints(stream, boundary, constraints);
    let mut parts = Parts::default();
    let mut count = 0usize;
    loop {
        let field = match ready(multipart.next_field())? {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return Err(classify(&e)),
        };
        count += 1;
        if count > limits.parts {
            return Err(MultipartError::TooManyParts);
        }
        let name = field.name().unwrap_or("").to_owned();
        // A file part is one that names a file (even an empty name).
        let is_file = field.file_name().is_some();
        let bytes = match ready(field.bytes())? {
            Ok(b) => b,
            Err(e) => return Err(classify(&e)),
        };
        if is_file {
            if !bytes.is_empty() {
                parts.files.push((name, bytes));
            }
        } else {
            if bytes.len() > limits.text {
                return Err(MultipartError::TextTooLong);
            }
            let text = String::from_utf8(bytes.to_vec()).map_err(|_| MultipartError::Malformed)?;
            parts.texts.push((name, text));
        }
    }
    Ok(parts)
}

/// Watches a multipart body as it arrives for the first file part with
/// content, so that the connection layer takes an upload slot only then: a
/// creation form without a file (or with empty file inputs, which browsers
/// send as empty file parts) never needs one.
///
/// Only an upgrade depends on it: until it says a file has begun, the body is
/// held to the small limits of a form without files, so a body that fools it
/// (a file part it does not see) gets no more room than any form.
#[derive(Debug)]
pub struct FileWatch {
    /// `--` and the boundary.
    delimiter: Vec<u8>,
    /// Where to look next; everything before has been read.
    pos: usize,
}

impl FileWatch {
    /// A watch for bodies sent with the `Content-Type` value `content_type`;
    /// `None` if it names no boundary.
    pub fn new(content_type: &str) -> Option<FileWatch> {
        let boundary = multer::parse_boundary(content_type).ok()?;
        Some(FileWatch { delimiter: [b"--", boundary.as_bytes()].concat(), pos: 0 })
    }

    /// Whether `body` (all of it received so far) has begun a file part's
    /// content: a part whose headers name a `filename`, followed by at
    /// least one byte that is not the next delimiter.
    pub fn file_begun(&mut self, body: &[u8]) -> bool {
        loop {
            let Some(at) = find(&body[self.pos..], &self.delimiter).map(|d| self.pos + d) else {
                // A delimiter may be cut at the end: look there again.
                self.pos = self.pos.max(body.len().saturating_sub(self.delimiter.len()));
                return false;
            };
            let after = at + self.delimiter.len();
            let Some(end) = find(&body[after..], b"\r\n\r\n").map(|h| after + h) else {
                self.pos = at;
                return false;
            };
            let content = end + 4;
            let names_file = body[after..end].windows(9).any(|w| w.eq_ignore_ascii_case(b"filename="));
            if names_file {
                let rest = &body[content..];
                let close = [&b"\r\n"[..], &self.delimiter].concat();
                if rest.starts_with(&close) {
                    // An empty file input: nothing to upload.
                    self.pos = content;
                    continue;
                }
                if close.starts_with(rest) {
                    self.pos = at;
                    return false;
                }
                return true;
            }
            self.pos = content;
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn classify(e: &multer::Error) -> MultipartError {
    match e {
        multer::Error::StreamSizeExceeded { .. } | multer::Error::FieldSizeExceeded { .. } => MultipartError::TooLarge,
        _ => MultipartError::Malformed,
    }
}

/// Runs a future that can only be ready: multer's futures over an in-memory
/// stream never wait. Polls a bounded number of times so that a future that
/// does wait (a bug, not an input) is an error rather than a spinning worker.
fn ready<F: Future>(future: F) -> Result<F::Output, MultipartError> {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..64 {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return Ok(v);
        }
    }
    eprintln!("anonpoll: the multipart parser did not finish over an in-memory body");
    Err(MultipartError::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CT: &str = "multipart/form-data; boundary=XyZ";

    fn body(parts: &[(&str, Option<&str>, &[u8])]) -> Bytes {
        let mut b = Vec::new();
        for (name, file, data) in parts {
            b.extend_from_slice(b"--XyZ\r\n");
            match file {
                Some(f) => b.extend_from_slice(
                    format!(
                        "Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\nContent-Type: image/png\r\n\r\n"
                    )
                    .as_bytes(),
                ),
                None => b.extend_from_slice(format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes()),
            }
            b.extend_from_slice(data);
            b.extend_from_slice(b"\r\n");
        }
        b.extend_from_slice(b"--XyZ--\r\n");
        Bytes::from(b)
    }

    #[test]
    fn splits_texts_and_files_and_drops_empty_file_inputs() {
        let b = body(&[
            ("title", None, "Déjeuner ?".as_bytes()),
            ("pm", Some("holiday GPS.jpg"), b"\xff\xd8\xff binary \r\n--Xy not a boundary"),
            ("q0m", Some(""), b""),
            ("q0", None, b"Where?"),
        ]);
        let parts = parse(CT, b, &Limits::new(1 << 20)).unwrap();
        assert_eq!(parts.texts, vec![("title".into(), "Déjeuner ?".into()), ("q0".into(), "Where?".into())]);
        assert_eq!(parts.files.len(), 1);
        assert_eq!(parts.files[0].0, "pm");
        assert_eq!(&parts.files[0].1[..], b"\xff\xd8\xff binary \r\n--Xy not a boundary");
    }

    #[test]
    fn every_bound_holds() {
        let big = vec![b'a'; 2000];
        let b = body(&[("pm", Some("x"), &big)]);
        assert_eq!(parse(CT, b.clone(), &Limits::new(1000)).unwrap_err(), MultipartError::TooLarge);
        let limits = Limits { total: 1 << 20, parts: 3, text: 100 };
        assert_eq!(parse(CT, body(&[("t", None, &big)]), &limits).unwrap_err(), MultipartError::TextTooLong);
        let many: Vec<(&str, Option<&str>, &[u8])> = (0..4).map(|_| ("a", None, &b"1"[..])).collect();
        assert_eq!(parse(CT, body(&many), &limits).unwrap_err(), MultipartError::TooManyParts);
    }

    #[test]
    fn refuses_other_types_and_broken_bodies() {
        let b = body(&[("a", None, b"1")]);
        assert_eq!(
            parse("application/json", b.clone(), &Limits::new(1 << 20)).unwrap_err(),
            MultipartError::NotMultipart
        );
        assert_eq!(
            parse("multipart/form-data", b.clone(), &Limits::new(1 << 20)).unwrap_err(),
            MultipartError::NotMultipart
        );
        let truncated = b.slice(..b.len() - 12);
        assert_eq!(parse(CT, truncated, &Limits::new(1 << 20)).unwrap_err(), MultipartError::Malformed);
        let bad_utf8 = body(&[("a", None, b"\xff\xfe")]);
        assert_eq!(parse(CT, bad_utf8, &Limits::new(1 << 20)).unwrap_err(), MultipartError::Malformed);
    }

    #[test]
    fn a_file_is_seen_once_its_content_begins_and_empty_file_inputs_are_not() {
        let texts = body(&[("title", None, b"A poll"), ("q0m", Some(""), b""), ("q0", None, b"Q")]);
        let mut watch = FileWatch::new(CT).unwrap();
        for cut in 0..=texts.len() {
            assert!(!watch.file_begun(&texts[..cut]), "no file in {:?}", &texts[..cut]);
        }
        let with_file = body(&[("title", None, b"A poll"), ("pm", Some("a.png"), b"\x89PNG")]);
        let start = find(&with_file, b"\x89PNG").unwrap();
        let mut watch = FileWatch::new(CT).unwrap();
        for cut in 0..=with_file.len() {
            assert_eq!(watch.file_begun(&with_file[..cut]), cut > start, "cut at {cut}");
        }
        // Fed whole, or with a file part named in upper case.
        let upper = String::from_utf8_lossy(&with_file).replace("filename", "FILENAME");
        assert!(FileWatch::new(CT).unwrap().file_begun(upper.as_bytes()));
        assert!(FileWatch::new("multipart/form-data").is_none(), "no boundary");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// Arbitrary bytes, and valid bodies cut or altered anywhere, never
        /// panic and never yield more than the bounds allow.
        #[test]
        fn never_panics(junk in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
                        cut in 0usize..400, flip in 0usize..400, byte in proptest::prelude::any::<u8>()) {
            let limits = Limits { total: 4096, parts: 4, text: 64 };
            if let Ok(p) = parse(CT, Bytes::from(junk.clone()), &limits) {
                proptest::prop_assert!(p.texts.len() + p.files.len() <= 4);
            }
            let mut valid = body(&[("t", None, b"hello"), ("f", Some("a.png"), &junk)]).to_vec();
            if flip < valid.len() { valid[flip] = byte; }
            valid.truncate(cut.max(1).min(valid.len()));
            if let Ok(p) = parse(CT, Bytes::from(valid), &limits) {
                proptest::prop_assert!(p.texts.iter().all(|(_, v)| v.len() <= 64));
            }
        }
    }
}
