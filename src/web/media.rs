//! Media on the pages, and `/media/{id}`, where their cleaned bytes are served.
//!
//! Promises of `/media/{id}`:
//! - only media of a live poll are served; an erased or expired poll's media
//!   answer 404 at once, like the poll;
//! - the type is the one the server chose from the content, with `nosniff`, a
//!   `sandbox` CSP (a file opened on its own can run nothing) and
//!   `Cross-Origin-Resource-Policy: same-origin`;
//! - byte ranges (one per request) for seeking in audio and video, read
//!   straight from the database without loading the whole file; an
//!   open-ended range is answered in chunks of at most [`CHUNK`];
//! - caching is keyed by the content hash (`ETag`) and long, but `private`
//!   (no shared cache keeps it) and never beyond the poll's erasure day.

use maud::{Markup, html};

use super::layout::Ctx;
use crate::day::Day;
use crate::domain::{Lang, MediaItem};
use crate::error::Error;
use crate::http::{Method, Request, Response};
use crate::media::Kind;
use crate::secret::MediaId;
use crate::store::Reader;

/// Largest part of a file sent for an open-ended range request.
pub const CHUNK: u64 = 4 * 1024 * 1024;
/// The longest a browser is told to keep a file.
const MAX_AGE_CAP: i64 = 365 * 24 * 3600;

/// The path of `/media/{id}` requests, if `path` is one.
pub fn route(path: &str) -> Option<&str> {
    path.strip_prefix("/media/").filter(|id| !id.is_empty() && !id.contains('/'))
}

/// How a media item is shown on a page. `poll_lang` is the language of its
/// alt text or caption (the poll's own).
pub fn figure(ctx: &Ctx, m: &MediaItem, poll_lang: Lang) -> Markup {
    let src = crate::api::media_path(m);
    let lang = (poll_lang != ctx.lang).then_some(poll_lang.code());
    html! {
        figure.media lang=[lang] {
            @match m.kind {
                Kind::Image => {
                    img src=(src) alt=(m.alt) width=[m.width] height=[m.height] loading="lazy" decoding="async";
                }
                Kind::Audio => {
                    audio controls preload="metadata" src=(src) {
                        a href=(src) { (ctx.t.media_open) }
                    }
                }
                Kind::Video => {
                    video controls preload="metadata" src=(src) width=[m.width] height=[m.height] {
                        a href=(src) { (ctx.t.media_open) }
                    }
                }
            }
            @if m.kind != Kind::Image && !m.alt.is_empty() {
                figcaption { (m.alt) }
            }
        }
    }
}

/// Answers `GET`/`HEAD /media/{id}`.
pub fn serve(reader: &mut Reader, req: &Request, id: &str, today: Day) -> Result<Response, Error> {
    if !matches!(req.method, Method::Get | Method::Head) {
        return Ok(plain(405, "Method not allowed.").with_header("Allow", "GET, HEAD"));
    }
    let Some(id) = MediaId::parse(id) else { return Ok(plain(404, "No such file.")) };
    let Some(blob) = reader.media(&id, today)? else { return Ok(plain(404, "No such file.")) };
    let item = &blob.item;
    let etag = format!("\"{}\"", hex(&item.sha256));
    let size = item.size;
    let headers = |r: Response| {
        r.with_header("ETag", etag.as_str())
            .with_header("Cache-Control", cache_control(blob.expires_on, today))
            .with_header("Accept-Ranges", "bytes")
            .with_header("X-Content-Type-Options", "nosniff")
            .with_header("Content-Security-Policy", "sandbox; default-src 'none'")
            .with_header("Cross-Origin-Resource-Policy", "same-origin")
            .with_header("Referrer-Policy", "no-referrer")
    };
    if req.header("if-none-match").is_some_and(|v| etag_matches(v, &etag)) {
        return Ok(headers(Response::new(304)));
    }
    // A range applies only if the file is still the one the client has
    // (If-Range with our strong ETag); otherwise the whole file is sent.
    let range_applies = req.header("if-range").is_none_or(|v| v.trim() == etag);
    let range = req.header("range").filter(|_| range_applies).map(|v| parse_range(v, size));
    let (status, start, len) = match range {
        None | Some(Range::Ignored) => (200, 0, size),
        Some(Range::Unsatisfiable) => {
            return Ok(plain(416, "Range not satisfiable.").with_header("Content-Range", format!("bytes */{size}")));
        }
        Some(Range::Bytes { start, end, open }) => {
            let end = if open { end.min(start + CHUNK - 1) } else { end };
            (206, start, end - start + 1)
        }
    };
    let len_usize = usize::try_from(len).map_err(Error::internal)?;
    let body = reader.media_bytes(&blob, start, len_usize)?;
    let mut r = headers(Response::new(status).with_header("Content-Type", item.mime.as_str()).with_body(body));
    if status == 206 {
        r = r.with_header("Content-Range", format!("bytes {start}-{}/{size}", start + len - 1));
    }
    Ok(r)
}

/// A short answer without a file (the connection layer adds `no-store`).
fn plain(status: u16, text: &str) -> Response {
    Response::new(status).with_header("Content-Type", "text/plain; charset=utf-8").with_body(text.as_bytes().to_vec())
}

/// Long but private caching that ends with the poll: a browser may keep the
/// file until the day before its poll is erased (whatever the hour now), and
/// no shared cache may keep it.
fn cache_control(expires_on: Day, today: Day) -> String {
    let days = (expires_on.days_since(today) - 1).max(0);
    let max_age = (days * 86_400).min(MAX_AGE_CAP);
    format!("private, max-age={max_age}, immutable")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn etag_matches(header: &str, etag: &str) -> bool {
    header.split(',').map(str::trim).any(|t| t == "*" || t == etag || t.strip_prefix("W/") == Some(etag))
}

#[derive(Debug, PartialEq, Eq)]
enum Range {
    /// Malformed, or several ranges: the whole file is sent (RFC 9110 allows it).
    Ignored,
    Unsatisfiable,
    /// Inclusive bounds within the file; `open` when the client asked "to the end".
    Bytes {
        start: u64,
        end: u64,
        open: bool,
    },
}

/// One `Range: bytes=…` range against a file of `size` bytes (RFC 9110 §14.1.2).
fn parse_range(header: &str, size: u64) -> Range {
    let Some(spec) = header.trim().strip_prefix("bytes=") else { return Range::Ignored };
    if spec.contains(',') {
        return Range::Ignored;
    }
    let Some((first, last)) = spec.trim().split_once('-') else { return Range::Ignored };
    let (first, last) = (first.trim(), last.trim());
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if size == 0 {
        return Range::Unsatisfiable;
    }
    if first.is_empty() {
        // A suffix: the last N bytes.
        let Some(n) = Some(last).filter(|s| digits(s)).and_then(|s| s.parse::<u64>().ok()) else {
            return Range::Ignored;
        };
        if n == 0 {
            return Range::Unsatisfiable;
        }
        return Range::Bytes { start: size.saturating_sub(n), end: size - 1, open: false };
    }
    let Some(start) = Some(first).filter(|s| digits(s)).and_then(|s| s.parse::<u64>().ok()) else {
        return Range::Ignored;
    };
    if start >= size {
        return Range::Unsatisfiable;
    }
    if last.is_empty() {
        return Range::Bytes { start, end: size - 1, open: true };
    }
    match Some(last).filter(|s| digits(s)).and_then(|s| s.parse::<u64>().ok()) {
        Some(end) if end >= start => Range::Bytes { start, end: end.min(size - 1), open: false },
        _ => Range::Ignored,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_follow_rfc_9110() {
        let b = |start, end, open| Range::Bytes { start, end, open };
        assert_eq!(parse_range("bytes=0-99", 1000), b(0, 99, false));
        assert_eq!(parse_range("bytes=500-", 1000), b(500, 999, true));
        assert_eq!(parse_range("bytes=-100", 1000), b(900, 999, false));
        assert_eq!(parse_range("bytes=-5000", 1000), b(0, 999, false));
        assert_eq!(parse_range("bytes=990-2000", 1000), b(990, 999, false));
        assert_eq!(parse_range("bytes=1000-", 1000), Range::Unsatisfiable);
        assert_eq!(parse_range("bytes=-0", 1000), Range::Unsatisfiable);
        for ignored in ["bytes=5-1", "bytes=0-1,5-6", "items=0-1", "bytes=a-b", "bytes=-", "bytes=+1-2", "bytes=1--2"] {
            assert_eq!(parse_range(ignored, 1000), Range::Ignored, "{ignored}");
        }
    }

    #[test]
    fn caching_ends_with_the_poll_and_is_never_shared() {
        let today = Day::parse("2027-01-01").unwrap();
        assert_eq!(cache_control(Day::parse("2027-01-08").unwrap(), today), "private, max-age=518400, immutable");
        assert_eq!(cache_control(Day::parse("2029-01-01").unwrap(), today), "private, max-age=31536000, immutable");
        assert_eq!(cache_control(today.plus_days(1), today), "private, max-age=0, immutable");
        assert!(etag_matches("W/\"ab\", \"cd\"", "\"ab\""));
        assert!(!etag_matches("\"abc\"", "\"ab\""));
    }

    #[test]
    fn only_single_segment_media_paths_route() {
        assert_eq!(route("/media/abc"), Some("abc"));
        assert_eq!(route("/media/"), None);
        assert_eq!(route("/media/a/b"), None);
        assert_eq!(route("/mediax"), None);
    }
}
