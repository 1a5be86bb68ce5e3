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
//!   at once across all requests, one client group at most
//!   [`MEDIA_MIB_PER_GROUP`] MiB of it (503 past either); responses that
//!   send the same bytes at the same time share one copy (a file read slowly
//!   by many holds it once), and HEAD reads no bytes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use bytes::Bytes;

use maud::{Markup, html};

use super::layout::Ctx;
use crate::app::{Links, Session};
use crate::client::ClientGroup;
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
/// The body is the held bytes themselves, not a copy: it costs no memory
/// beyond what the staging area holds already, so it takes nothing of the
/// media budget.
pub fn serve_held(uploads: &super::uploads::Uploads, req: &Request, reference: &str) -> Response {
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
    r.with_shared_body(Bytes::from_owner(HeldBytes(clean)))
}

/// A held picture's bytes as a response body, without a copy.
struct HeldBytes(Arc<crate::media::Clean>);

impl AsRef<[u8]> for HeldBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0.bytes
    }
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

/// Bytes of media being sent at once, across all requests: a copy read for
/// a GET is held until every response that sends it has been written,
/// however slowly its clients read.
pub const MEDIA_BYTES_IN_FLIGHT: usize = 256 * 1024 * 1024;

/// The part of [`MEDIA_BYTES_IN_FLIGHT`] one client group (an IPv4 address
/// or IPv6 /64) may hold with the copies its requests read, in MiB: a
/// quarter, so that slow readers behind a few addresses leave the rest to
/// everyone else. Counted in whole MiB.
pub const MEDIA_MIB_PER_GROUP: u32 = 64;

const MIB: usize = 1024 * 1024;

/// The process-wide budget of media bytes being sent, each client group's
/// share of it, and the copies being sent, so that the readers of one file
/// (or one range of it) share one copy instead of each holding their own.
#[derive(Clone)]
pub struct MediaBudget(Arc<BudgetState>);

struct BudgetState {
    used: AtomicUsize,
    groups: Arc<crate::keyed::Occupancy>,
    /// Copies being sent, by media id, then by item hash and range. A
    /// request holds its file's lock while it looks for a copy and reads one,
    /// so that readers of a file arriving together make one copy, not one
    /// each; other files are not held up.
    sending: Mutex<HashMap<String, Arc<Mutex<Copies>>>>,
}

/// The copies of one file being sent, by item hash and range; an entry
/// lives as long as a response still holds its copy.
type Copies = HashMap<([u8; 32], u64, usize), Weak<Sending>>;

/// One copy of (part of) a file being sent, and what it holds of the budget.
struct Sending {
    bytes: Bytes,
    _global: Share,
    _group: Vec<crate::keyed::Held>,
}

/// A share of the global budget, given back when dropped.
struct Share(Arc<BudgetState>, usize);

impl Drop for Share {
    fn drop(&mut self) {
        self.0.used.fetch_sub(self.1, Ordering::AcqRel);
    }
}

impl MediaBudget {
    pub fn new() -> anyhow::Result<MediaBudget> {
        Ok(MediaBudget(Arc::new(BudgetState {
            used: AtomicUsize::new(0),
            groups: crate::keyed::Occupancy::new(MEDIA_MIB_PER_GROUP)?,
            sending: Mutex::new(HashMap::new()),
        })))
    }

    /// A copy of `n` bytes for `client`: within its group's share and the
    /// global budget, or `None`.
    fn take(&self, n: usize, client: ClientGroup) -> Option<(Share, Vec<crate::keyed::Held>)> {
        let mut group = Vec::new();
        for _ in 0..n.div_ceil(MIB) {
            group.push(self.0.groups.try_take(client)?);
        }
        let state = &self.0;
        let mut used = state.used.load(Ordering::Acquire);
        loop {
            if used.saturating_add(n) > MEDIA_BYTES_IN_FLIGHT {
                return None;
            }
            match state.used.compare_exchange_weak(used, used + n, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some((Share(state.clone(), n), group)),
                Err(now) => used = now,
            }
        }
    }

    /// The copies of the file `id` being sent, to be locked while a request
    /// looks for one and reads its own.
    fn copies_of(&self, id: &str) -> Arc<Mutex<Copies>> {
        let mut files = self.0.sending.lock().unwrap_or_else(PoisonError::into_inner);
        // Forget files nobody holds or sends (one being read is locked: kept).
        files.retain(|_, f| {
            Arc::strong_count(f) > 1 || f.try_lock().map_or(true, |c| c.values().any(|w| w.strong_count() > 0))
        });
        files.entry(id.to_owned()).or_default().clone()
    }
}

fn lock_copies(copies: &Mutex<Copies>) -> std::sync::MutexGuard<'_, Copies> {
    copies.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A response body that is a shared copy: the copy (and its budget) lives
/// until the last response that sends it is written.
fn send_shared(r: Response, copy: Arc<Sending>) -> Response {
    let mut r = r.with_shared_body(copy.bytes.clone());
    r.lease = Some(crate::http::Lease(Box::new(copy)));
    r
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
    let client = ClientGroup::of(req.client);
    let file = budget.copies_of(id.as_str());
    let mut copies = lock_copies(&file);
    let (mut plan, mut share, mut copy) = (Plan::NotModified, None, None);
    let read = session.media(&id, today, |blob| {
        plan = plan_for(req, &etag_of(&blob.item), blob.item.size);
        let Plan::Send { start, len, .. } = plan else { return None };
        let len = usize::try_from(len).ok()?;
        if head {
            return None;
        }
        // Another response is sending these very bytes: share its copy.
        if let Some(c) = copies.get(&(blob.item.sha256, start, len)).and_then(Weak::upgrade) {
            copy = Some(c);
            return None;
        }
        match budget.take(len, client) {
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
            } else if let Some(copy) = copy {
                send_shared(r, copy)
            } else {
                let Some((global, group)) = share else { return Ok(busy()) };
                let copy = Arc::new(Sending { bytes: Bytes::from(body), _global: global, _group: group });
                copies.retain(|_, w| w.strong_count() > 0);
                copies.insert((item.sha256, start, copy.bytes.len()), Arc::downgrade(&copy));
                send_shared(r, copy)
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
    fn each_group_holds_at_most_its_share_and_copies_are_shared() {
        let budget = MediaBudget::new().unwrap();
        let group = |n: u8| ClientGroup::of(std::net::IpAddr::from([192, 0, 2, n]));
        let copy = |b: &MediaBudget, n: usize, g: u8| {
            b.take(n, group(g)).map(|(global, group)| {
                Arc::new(Sending { bytes: Bytes::from(vec![0; n]), _global: global, _group: group })
            })
        };
        // One group: 64 MiB in copies of 10 MiB is six of them.
        let mine: Vec<_> = (0..6).map(|_| copy(&budget, 10 * MIB, 1).unwrap()).collect();
        assert!(copy(&budget, 10 * MIB, 1).is_none(), "over the group's share");
        assert!(copy(&budget, 10 * MIB, 2).is_some(), "another group still gets its copy");
        drop(mine);
        assert!(copy(&budget, 10 * MIB, 1).is_some(), "shares come back with the copies");
        // A copy being sent is found by hash and range, and only while sent;
        // a file's entry is forgotten once nothing of it is held.
        let sha = [7; 32];
        let c = copy(&budget, MIB, 3).unwrap();
        lock_copies(&budget.copies_of("f")).insert((sha, 0, MIB), Arc::downgrade(&c));
        let found = |start, len| lock_copies(&budget.copies_of("f")).get(&(sha, start, len)).and_then(Weak::upgrade);
        assert!(found(0, MIB).is_some());
        assert!(found(1, MIB).is_none() && found(0, MIB - 1).is_none());
        drop(c);
        assert!(found(0, MIB).is_none(), "gone with its last response");
        drop(budget.copies_of("g"));
        assert_eq!(budget.0.sending.lock().unwrap().len(), 1, "only the file asked for last is listed");
        assert_eq!(budget.0.used.load(Ordering::Acquire), 0, "every byte given back");
    }

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
        let budget = MediaBudget::new().unwrap();
        let group = |n: u8| ClientGroup::of(std::net::IpAddr::from([192, 0, 2, n]));
        // Four groups at their share fill the budget; a fifth finds it spent.
        let held: Vec<_> = (1..=4).map(|g| budget.take(64 * MIB, group(g)).unwrap()).collect();
        assert!(budget.take(1, group(5)).is_none());
        drop(held);
        assert!(budget.take(64 * MIB, group(5)).is_some());
        assert_eq!(budget.0.used.load(Ordering::Acquire), 0);
    }

    #[test]
    fn only_single_segment_media_paths_route() {
        assert_eq!(route("/media/abc"), Some("abc"));
        assert_eq!(route("/media/"), None);
        assert_eq!(route("/media/a/b"), None);
        assert_eq!(route("/mediax"), None);
    }
}
