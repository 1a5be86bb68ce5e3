//! Media on the pages, and `/media/{id}`, where their cleaned bytes are served.
//!
//! Promises of `/media/{id}`:
//! - only media of a live poll are served; an erased or expired poll's media
//!   answer 404 at once, like the poll;
//! - the type is the one the server chose from the content, with `nosniff`, a
//!   `sandbox` CSP (a file opened on its own can run nothing) and
//!   `Cross-Origin-Resource-Policy: same-origin`;
//! - byte ranges (one per request) for seeking in audio and video, read
//!   straight from the database without loading the whole file; a range is
//!   answered with at most [`CHUNK`] bytes;
//! - caching is keyed by the content hash (`ETag`), `private` (no shared
//!   cache keeps a file) and `no-cache` (a browser asks before each use and
//!   gets a bodiless 304), so an erased or replaced file is never shown from
//!   a cache;
//! - streamed: an answer of more than [`WHOLE`] bytes is
//!   sent piece by piece ([`PIECE`], the sealed pieces of the store) as its
//!   client takes them. The worker reads the first piece with the item's
//!   listing; each later piece is read when the connection asks for it, in
//!   a short read transaction of its own that checks again that the poll
//!   is live and the item the same (its hash): once the poll is erased or
//!   expired, or the item replaced, the answer is cut short of its
//!   `Content-Length`, so no byte read after an erasure is sent and no
//!   answer mixes two files. A response holds about two pieces whatever
//!   the file's size and however slowly its client reads;
//! - bounded: an answer holds at most [`STREAM_HOLD`] bytes (two pieces),
//!   taken from a budget of [`MEDIA_BYTES_IN_FLIGHT`] bytes, of which one
//!   client group may hold [`MEDIA_PIECES_PER_GROUP`] pieces, so
//!   [`ANSWERS_PER_GROUP`] answers at once: 503 past either. HEAD reads no
//!   bytes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;

use maud::{Markup, html};

use super::layout::Ctx;
use crate::app::{App, Links, Session};
use crate::client::ClientGroup;
use crate::day::Day;
use crate::domain::{Lang, MediaItem};
use crate::error::Error;
use crate::http::{BodySource, Method, Request, Response, Streamed};
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

/// The piece a stream reads at a time: one sealed piece of the store, as
/// the connection layer expects of a streamed body.
pub const PIECE: usize = crate::store::seal::PIECE;
const _: () = assert!(PIECE == crate::http::STREAM_PIECE);

/// Answers up to this size are read whole by the worker and sent as one
/// body; longer ones are streamed. Either way an answer holds at most
/// [`STREAM_HOLD`] bytes.
pub const WHOLE: usize = STREAM_HOLD;

/// What a streamed answer holds of the budget: the piece hyper is writing
/// and the one being read for it (hyper asks for the next only once its
/// buffer is nearly empty, see `server/body.rs`).
pub const STREAM_HOLD: usize = 2 * PIECE;

/// Bytes that media answers may hold at once, across all requests: 2,048
/// answers, more than the connections polld admits by default (1,000), so
/// memory is bounded by whichever is lower.
pub const MEDIA_BYTES_IN_FLIGHT: usize = 256 * 1024 * 1024;

/// The part of [`MEDIA_BYTES_IN_FLIGHT`] one client group (an IPv4 address
/// or IPv6 /64) may hold, in pieces: 32 MiB, an eighth, so [`ANSWERS_PER_GROUP`]
/// answers at once: a class behind one address loading a page of
/// pictures over a slow uplink (40 browsers, 6 connections each) is served,
/// and spending the whole budget takes 8 groups with 256 slow answers each,
/// more connections than polld admits.
pub const MEDIA_PIECES_PER_GROUP: u32 = 512;

/// Answers being sent that one client group may have at once.
pub const ANSWERS_PER_GROUP: usize = MEDIA_PIECES_PER_GROUP as usize * PIECE / STREAM_HOLD;

/// Read sessions kept for streams between their reads: as many as the
/// connection layer reads pieces at once (`server/body.rs`), so that each
/// read finds one (on SQLite a session maps the file: opening one per
/// piece would cost a connection and a map each time).
const IDLE_STREAM_SESSIONS: usize = crate::http::STREAM_READS;

/// The process-wide budget of media bytes held by answers, each client
/// group's share of it, and the read sessions of streams.
#[derive(Clone)]
pub struct MediaBudget(Arc<BudgetState>);

struct BudgetState {
    used: AtomicUsize,
    groups: Arc<crate::keyed::Occupancy>,
    /// Sessions that streams read their pieces with, one read at a time.
    sessions: Mutex<Vec<Session>>,
}

/// What one answer holds of the budget, given back when dropped.
struct Hold {
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
            groups: crate::keyed::Occupancy::new(MEDIA_PIECES_PER_GROUP)?,
            sessions: Mutex::new(Vec::new()),
        })))
    }

    /// `n` bytes for an answer to `client`: within its group's share and
    /// the global budget, or `None`.
    fn take(&self, n: usize, client: ClientGroup) -> Option<Hold> {
        let mut group = Vec::new();
        for _ in 0..n.div_ceil(PIECE) {
            group.push(self.0.groups.try_take(client)?);
        }
        let state = &self.0;
        let mut used = state.used.load(Ordering::Acquire);
        loop {
            if used.saturating_add(n) > MEDIA_BYTES_IN_FLIGHT {
                return None;
            }
            match state.used.compare_exchange_weak(used, used + n, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(Hold { _global: Share(state.clone(), n), _group: group }),
                Err(now) => used = now,
            }
        }
    }

    /// Runs `f` with a read session of the streams' (kept or new).
    fn with_session<T>(&self, app: &Arc<App>, f: impl FnOnce(&mut Session) -> Result<T, Error>) -> Result<T, Error> {
        let kept = self.0.sessions.lock().unwrap_or_else(PoisonError::into_inner).pop();
        let mut session = match kept {
            Some(s) => s,
            None => app.session().map_err(Error::internal)?.for_media_streams()?,
        };
        let out = f(&mut session);
        // A session whose read failed inside is not kept: the next read
        // opens a fresh one.
        if matches!(out, Err(Error::Internal(_))) {
            return out;
        }
        let mut kept = self.0.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() < IDLE_STREAM_SESSIONS {
            kept.push(session);
        }
        out
    }
}

/// The rest of a streamed media answer: read a piece at a time, each in a
/// read of its own that finds the item still live and the same.
struct Rest {
    budget: MediaBudget,
    app: Arc<App>,
    item: MediaItem,
    /// The next byte to send, and the end of the answer (exclusive).
    at: u64,
    end: u64,
}

impl BodySource for Rest {
    fn next(&mut self) -> Option<Result<Bytes, Error>> {
        if self.at >= self.end {
            return None;
        }
        // Up to the next piece's start: each read opens one sealed piece.
        let Some(n) = to_piece_end(self.at, self.end - self.at) else {
            return Some(Err(Error::internal(anyhow::anyhow!("piece size"))));
        };
        let (item, at) = (&self.item, self.at);
        let read = self.budget.with_session(&self.app, |s| s.media_more(item, at, n, Day::today()));
        Some(match read {
            Ok(Some(bytes)) => {
                self.at += n as u64;
                Ok(Bytes::from(bytes))
            }
            // Erased, expired or replaced since the answer began.
            Ok(None) => Err(Error::NotFound),
            Err(e) => Err(e),
        })
    }
}

/// What a request for a media item gets.
enum Plan {
    NotModified,
    Unsatisfiable,
    Busy,
    Send { status: u16, start: u64, len: u64 },
}

/// The bytes of an answer of `len` bytes from `start` that the worker
/// reads: all of a small one; of a streamed one, up to the next piece's
/// start.
fn first_part(start: u64, len: u64) -> Option<usize> {
    if len <= WHOLE as u64 {
        return usize::try_from(len).ok();
    }
    to_piece_end(start, len)
}

/// Of `len` bytes from `at`, those up to the next piece's start (so that a
/// read opens one sealed piece).
fn to_piece_end(at: u64, len: u64) -> Option<usize> {
    let piece = PIECE as u64;
    usize::try_from((piece - at % piece).min(len)).ok()
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
    let (mut plan, mut hold) = (Plan::NotModified, None);
    let read = session.media(&id, today, |blob| {
        plan = plan_for(req, &etag_of(&blob.item), blob.item.size);
        let Plan::Send { start, len, .. } = plan else { return None };
        if head {
            return None;
        }
        let first = first_part(start, len)?;
        let held = if first as u64 == len { first } else { STREAM_HOLD };
        match budget.take(held, client) {
            Some(h) => {
                hold = Some(h);
                Some((start, first))
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
                return Ok(r.with_header("Content-Length", len.to_string()));
            }
            let Some(hold) = hold else { return Ok(busy()) };
            let first = Bytes::from(body);
            let mut r = if first.len() as u64 == len {
                r.with_shared_body(first)
            } else {
                let at = start + first.len() as u64;
                let rest =
                    Rest { budget: budget.clone(), app: session.app().clone(), item: blob.item, at, end: start + len };
                r.with_stream(Streamed { len, first, rest: Box::new(rest) })
            };
            // Given back once the body is sent or dropped.
            r.lease = Some(crate::http::Lease(Box::new(hold)));
            r
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
    fn each_group_holds_at_most_its_share_of_streams() {
        let budget = MediaBudget::new().unwrap();
        let group = |n: u8| ClientGroup::of(std::net::IpAddr::from([192, 0, 2, n]));
        let mine: Vec<_> = (0..ANSWERS_PER_GROUP).map(|_| budget.take(STREAM_HOLD, group(1)).unwrap()).collect();
        assert_eq!(ANSWERS_PER_GROUP, 256);
        assert!(budget.take(STREAM_HOLD, group(1)).is_none(), "over the group's share");
        assert!(budget.take(1, group(1)).is_none(), "even a small answer");
        assert!(budget.take(STREAM_HOLD, group(2)).is_some(), "another group still streams");
        drop(mine);
        assert!(budget.take(WHOLE, group(1)).is_some(), "shares come back with the answers");
        assert_eq!(budget.0.used.load(Ordering::Acquire), 0, "every byte given back");
    }

    #[test]
    fn a_streamed_answer_reads_up_to_piece_starts() {
        let p = PIECE as u64;
        assert_eq!(first_part(0, WHOLE as u64), Some(WHOLE), "small enough to be read whole");
        assert_eq!(first_part(0, WHOLE as u64 + 1), Some(PIECE), "streamed");
        assert_eq!(first_part(0, 10 * p), Some(PIECE));
        assert_eq!(first_part(100, 10 * p), Some(PIECE - 100), "the rest is read piece by piece");
        assert_eq!(first_part(3 * p, 10 * p), Some(PIECE));
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
        // Eight groups at their share fill the budget; another finds it spent.
        let share = MEDIA_PIECES_PER_GROUP as usize * PIECE;
        let held: Vec<_> = (1..=8).map(|g| budget.take(share, group(g)).unwrap()).collect();
        assert!(budget.take(1, group(9)).is_none());
        drop(held);
        assert!(budget.take(share, group(9)).is_some());
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
