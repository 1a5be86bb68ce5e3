//! Media on the pages, and `/media/{id}`, where their cleaned bytes are served.
//!
//! Promises of `/media/{id}`:
//! - only media of a live poll are served; an erased or expired poll's media
//!   answer 404 at once, like the poll;
//! - the type is the one the server chose from the content, with `nosniff`, a
//!   `sandbox` CSP (a file opened on its own can run nothing) and
//!   `Cross-Origin-Resource-Policy: same-origin`;
//! - byte ranges (one per request) for seeking in audio and video, read
//!   straight from the database without loading the whole file, in one
//!   transaction with the item's listing; a range is answered with at most
//!   [`CHUNK`] bytes;
//! - caching is keyed by the content hash (`ETag`), `private` (no shared
//!   cache keeps a file) and `no-cache` (a browser asks before each use and
//!   gets a bodiless 304), so an erased or replaced file is never shown from
//!   a cache;
//! - bounded: at most [`MEDIA_BYTES_IN_FLIGHT`] bytes of media are being sent
//!   at once across all requests (503 past it), and HEAD reads no bytes.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use maud::{Markup, html};

use super::layout::Ctx;
use crate::app::{Links, Session};
use crate::day::Day;
use crate::domain::{Lang, MediaItem};
use crate::error::Error;
use crate::http::{Method, Request, Response};
use crate::media::Kind;
use crate::secret::MediaId;

/// Largest part of a file sent for an open-ended range request.
pub const CHUNK: u64 = 4 * 1024 * 1024;

/// The path of `/media/{id}` requests, if `path` is one.
pub fn route(path: &str) -> Option<&str> {
    path.strip_prefix("/media/").filter(|id| !id.is_empty() && !id.contains('/'))
}

/// The reference of a `/held/{reference}` request, if `path` is one.
pub fn held_route(path: &str) -> Option<&str> {
    path.strip_prefix("/held/")
}

/// Answers `GET`/`HEAD /held/{reference}`: the cleaned bytes of a picture
/// held for a form (`uploads.rs`), for its thumbnail on that form.
///
/// Promises: pictures only, and only while held (a sound, a video, an
/// unknown, malformed, expired or released reference: the same bare 404,
/// so nothing tells a guess apart); the reference is a 128-bit capability
/// that is never logged; `no-store` (a thumbnail outlives nothing), the type
/// the server chose from the content with `nosniff`, a `sandbox` CSP and
/// `Cross-Origin-Resource-Policy: same-origin`, as for `/media/`.
/// The body is a copy of the held bytes, so it takes its share of the
/// media budget like a `/media/` answer (503 when none is left).
pub fn serve_held(uploads: &super::uploads::Uploads, budget: &MediaBudget, req: &Request, reference: &str) -> Response {
    let head = match req.method {
        Method::Get => false,
        Method::Head => true,
        _ => return plain(405, "Method not allowed.").with_header("Allow", "GET, HEAD"),
    };
    let Some(clean) = uploads.held_picture(reference) else { return plain(404, "No such file.") };
    let r = file_headers(Response::new(200).with_header("Content-Type", clean.mime))
        .with_header("Cache-Control", "no-store");
    if head {
        return r.with_header("Content-Length", clean.bytes.len().to_string());
    }
    let Some(share) = budget.take(clean.bytes.len()) else { return busy() };
    let mut r = r.with_body(clean.bytes.clone());
    r.lease = Some(crate::http::Lease(Box::new(share)));
    r
}

/// The headers every file answer carries: the type as the server chose it
/// from the content, and nothing that lets the file act as a page.
fn file_headers(r: Response) -> Response {
    r.with_header("X-Content-Type-Options", "nosniff")
        .with_header("Content-Security-Policy", "sandbox; default-src 'none'")
        .with_header("Cross-Origin-Resource-Policy", "same-origin")
        .with_header("Referrer-Policy", "no-referrer")
}

/// The answer when the media budget is spent.
fn busy() -> Response {
    plain(503, "Too many files are being sent; try again in a moment.").with_header("Retry-After", "5")
}

/// How a media item is shown on a page. `poll_lang` is the language of its
/// alt text or caption (the poll's own).
pub fn figure(ctx: &Ctx, m: &MediaItem, poll_lang: Lang) -> Markup {
    let src = Links::media_path(&m.id);
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

/// Bytes of media being sent at once, across all requests: a GET holds its
/// share until its body is written, however slowly the client reads.
pub const MEDIA_BYTES_IN_FLIGHT: usize = 256 * 1024 * 1024;

/// A process-wide budget of media bytes being sent.
#[derive(Clone, Default)]
pub struct MediaBudget(Arc<AtomicUsize>);

/// A share of the budget, given back when dropped.
struct Share(Arc<AtomicUsize>, usize);

impl Drop for Share {
    fn drop(&mut self) {
        self.0.fetch_sub(self.1, Ordering::AcqRel);
    }
}

impl MediaBudget {
    fn take(&self, n: usize) -> Option<Share> {
        let mut used = self.0.load(Ordering::Acquire);
        loop {
            if used.saturating_add(n) > MEDIA_BYTES_IN_FLIGHT {
                return None;
            }
            match self.0.compare_exchange_weak(used, used + n, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(Share(self.0.clone(), n)),
                Err(now) => used = now,
            }
        }
    }
}

/// What a request for a media item gets.
enum Plan {
    NotModified,
    Unsatisfiable,
    Busy,
    Send { status: u16, start: u64, len: u64 },
}

/// Answers `GET`/`HEAD /media/{id}`.
pub fn serve(
    session: &mut Session,
    budget: &MediaBudget,
    req: &Request,
    id: &str,
    today: Day,
) -> Result<Response, Error> {
    let head = match req.method {
        Method::Get => false,
        Method::Head => true,
        _ => return Ok(plain(405, "Method not allowed.").with_header("Allow", "GET, HEAD")),
    };
    let Some(id) = MediaId::parse(id) else { return Ok(plain(404, "No such file.")) };
    let (mut plan, mut share) = (Plan::NotModified, None);
    let read = session.media(&id, today, |blob| {
        plan = plan_for(req, &etag_of(&blob.item), blob.item.size);
        let Plan::Send { start, len, .. } = plan else { return None };
        let len = usize::try_from(len).ok()?;
        if head {
            return None;
        }
        match budget.take(len) {
            Some(s) => {
                share = Some(s);
                Some((start, len))
            }
            None => {
                plan = Plan::Busy;
                None
            }
        }
    })?;
    let Some((blob, body)) = read else { return Ok(plain(404, "No such file.")) };
    let item = &blob.item;
    let size = item.size;
    let headers = |r: Response| {
        file_headers(r)
            .with_header("ETag", etag_of(item))
            .with_header("Cache-Control", CACHE_CONTROL)
            .with_header("Accept-Ranges", "bytes")
    };
    Ok(match plan {
        Plan::NotModified => headers(Response::new(304)),
        Plan::Unsatisfiable => {
            plain(416, "Range not satisfiable.").with_header("Content-Range", format!("bytes */{size}"))
        }
        Plan::Busy => busy(),
        Plan::Send { status, start, len } => {
            let mut r = headers(Response::new(status).with_header("Content-Type", item.mime.as_str()));
            if status == 206 {
                r = r.with_header("Content-Range", format!("bytes {start}-{}/{size}", start + len - 1));
            }
            if head {
                r.with_header("Content-Length", len.to_string())
            } else {
                r.lease = share.map(|s| crate::http::Lease(Box::new(s)));
                r.with_body(body)
            }
        }
    })
}

/// The whole file, one range of it, or nothing new, for this request.
fn plan_for(req: &Request, etag: &str, size: u64) -> Plan {
    if req.header("if-none-match").is_some_and(|v| etag_matches(v, etag)) {
        return Plan::NotModified;
    }
    // A range applies only if the file is still the one the client has
    // (If-Range with our strong ETag); otherwise the whole file is sent.
    let range_applies = req.header("if-range").is_none_or(|v| v.trim() == etag);
    match req.header("range").filter(|_| range_applies).map(|v| parse_range(v, size)) {
        None | Some(Range::Ignored) => Plan::Send { status: 200, start: 0, len: size },
        Some(Range::Unsatisfiable) => Plan::Unsatisfiable,
        // At most CHUNK bytes per answer: a client asking for more gets
        // the first part and asks again (RFC 9110 allows a shorter 206).
        Some(Range::Bytes { start, end }) => Plan::Send { status: 206, start, len: (end - start + 1).min(CHUNK) },
    }
}

/// A short answer without a file (the connection layer adds `no-store`).
fn plain(status: u16, text: &str) -> Response {
    Response::new(status).with_header("Content-Type", "text/plain; charset=utf-8").with_body(text.as_bytes().to_vec())
}

/// Browsers may keep a file but must ask before each use (a 304 costs no
/// bytes): a file erased with its poll, or replaced, is then never shown
/// again from a cache, whatever its poll's expiry was or becomes. `private`
/// keeps shared caches out altogether.
const CACHE_CONTROL: &str = "private, no-cache";

/// The strong ETag of an item: its content's SHA-256.
fn etag_of(item: &MediaItem) -> String {
    format!("\"{}\"", crate::secret::hex(&item.sha256))
}

fn etag_matches(header: &str, etag: &str) -> bool {
    header.split(',').map(str::trim).any(|t| t == "*" || t == etag || t.strip_prefix("W/") == Some(etag))
}

#[derive(Debug, PartialEq, Eq)]
enum Range {
    /// Malformed, or several ranges: the whole file is sent (RFC 9110 allows it).
    Ignored,
    Unsatisfiable,
    /// Inclusive bounds within the file.
    Bytes {
        start: u64,
        end: u64,
    },
}

/// One `Range: bytes=…` range against a file of `size` bytes (RFC 9110 §14.1.2).
fn parse_range(header: &str, size: u64) -> Range {
    // The unit is case-insensitive (RFC 9110 §14.1).
    let header = header.trim();
    let Some(spec) = header.get(..6).filter(|u| u.eq_ignore_ascii_case("bytes=")).map(|_| &header[6..]) else {
        return Range::Ignored;
    };
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
        return Range::Bytes { start: size.saturating_sub(n), end: size - 1 };
    }
    let Some(start) = Some(first).filter(|s| digits(s)).and_then(|s| s.parse::<u64>().ok()) else {
        return Range::Ignored;
    };
    if start >= size {
        return Range::Unsatisfiable;
    }
    if last.is_empty() {
        return Range::Bytes { start, end: size - 1 };
    }
    match Some(last).filter(|s| digits(s)).and_then(|s| s.parse::<u64>().ok()) {
        Some(end) if end >= start => Range::Bytes { start, end: end.min(size - 1) },
        _ => Range::Ignored,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_follow_rfc_9110() {
        let b = |start, end| Range::Bytes { start, end };
        assert_eq!(parse_range("bytes=0-99", 1000), b(0, 99));
        assert_eq!(parse_range("Bytes=0-99", 1000), b(0, 99), "the unit is case-insensitive");
        assert_eq!(parse_range("bytes=500-", 1000), b(500, 999));
        assert_eq!(parse_range("bytes=-100", 1000), b(900, 999));
        assert_eq!(parse_range("bytes=-5000", 1000), b(0, 999));
        assert_eq!(parse_range("bytes=990-2000", 1000), b(990, 999));
        assert_eq!(parse_range("bytes=1000-", 1000), Range::Unsatisfiable);
        assert_eq!(parse_range("bytes=-0", 1000), Range::Unsatisfiable);
        for ignored in ["bytes=5-1", "bytes=0-1,5-6", "items=0-1", "bytes=a-b", "bytes=-", "bytes=+1-2", "bytes=1--2"] {
            assert_eq!(parse_range(ignored, 1000), Range::Ignored, "{ignored}");
        }
    }

    #[test]
    fn etags_match_as_rfc_9110_says() {
        assert!(etag_matches("W/\"ab\", \"cd\"", "\"ab\""));
        assert!(etag_matches("*", "\"ab\""));
        assert!(!etag_matches("\"abc\"", "\"ab\""));
    }

    #[test]
    fn the_media_budget_is_shared_and_given_back() {
        let budget = MediaBudget::default();
        let a = budget.take(MEDIA_BYTES_IN_FLIGHT - 10).unwrap();
        assert!(budget.take(11).is_none());
        let b = budget.take(10).unwrap();
        drop(a);
        assert!(budget.take(MEDIA_BYTES_IN_FLIGHT - 10).is_some());
        drop(b);
        assert_eq!(budget.0.load(Ordering::Acquire), 0);
    }

    #[test]
    fn only_single_segment_media_paths_route() {
        assert_eq!(route("/media/abc"), Some("abc"));
        assert_eq!(route("/media/"), None);
        assert_eq!(route("/media/a/b"), None);
        assert_eq!(route("/mediax"), None);
    }
}
