//! The HTTP vocabulary the handlers speak: a fully read [`Request`] and a
//! [`Response`] value. Handlers are plain functions from one to the other;
//! only `server.rs` knows which HTTP implementation carries them.
//!
//! A response may be *deferred* ([`Response::after`]): the handler queued
//! work (a write) and returns at once, and the response is built when the
//! work is done ([`Pending`]). The connection layer awaits the commit without holding
//! a worker thread, so many requests can wait for one group commit while the
//! workers serve others.

use std::net::IpAddr;

use serde::Serialize;

use crate::error::{AuthFailure, Error};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
    Options,
    Other,
}

impl Method {
    pub fn parse(s: &str) -> Method {
        match s {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "PATCH" => Method::Patch,
            "DELETE" => Method::Delete,
            "OPTIONS" => Method::Options,
            _ => Method::Other,
        }
    }
}

/// The body as the connection layer delivered it: read whole within the
/// limit, or refused unread because it declared (or grew) past the limit.
#[derive(Debug)]
pub enum Body {
    /// Shared, not copied: a multipart form hands slices of it to its files.
    Bytes(bytes::Bytes),
    TooLarge {
        limit: usize,
    },
}

#[derive(Debug)]
pub struct Request {
    pub method: Method,
    /// The path without the query string, not percent-decoded.
    pub path: String,
    pub query: Option<String>,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// The client's address (see `client.rs`). Never stored or logged.
    pub client: IpAddr,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The media type of the body, lower case, without parameters.
    pub fn media_type(&self) -> Option<String> {
        self.header("content-type").map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
    }

    /// The body bytes, or 413.
    pub fn body_bytes(&self) -> Result<&[u8], Error> {
        self.body_shared().map(|b| &b[..])
    }

    /// The body as a shared buffer (cloning it copies nothing), or 413.
    pub fn body_shared(&self) -> Result<&bytes::Bytes, Error> {
        match &self.body {
            Body::Bytes(b) => Ok(b),
            Body::TooLarge { limit } => Err(Error::TooLarge { limit: *limit }),
        }
    }

    /// The Bearer token of the `Authorization` header (RFC 6750 section 2.1).
    pub fn bearer(&self) -> Result<&str, AuthFailure> {
        let value = self.header("authorization").ok_or(AuthFailure::Missing)?;
        let (scheme, token) = value.trim().split_once(' ').ok_or(AuthFailure::Malformed)?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(AuthFailure::Malformed);
        }
        let token = token.trim();
        // RFC 6750 b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
        let body = token.trim_end_matches('=');
        let b64token = |b: u8| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b);
        if body.is_empty() || !body.bytes().all(b64token) {
            return Err(AuthFailure::Malformed);
        }
        Ok(token)
    }

    /// The value of query parameter `name`, if present (no percent-decoding:
    /// only used for simple codes such as `lang`).
    pub fn query_param(&self, name: &str) -> Option<&str> {
        self.query.as_deref()?.split('&').find_map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (k == name).then_some(v)
        })
    }
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// When set, the response is still to be built (see [`Deferred`]); the
    /// fields above are a placeholder.
    deferred: Option<Deferred>,
    /// Held until the body has been sent: e.g. a share of a memory budget.
    pub lease: Option<Lease>,
    /// A body shared with other responses (one copy of a file for every
    /// reader of it); sent instead of `body` when set.
    pub shared_body: Option<bytes::Bytes>,
    /// A body sent piece by piece as the client takes it; sent instead of
    /// `body` and `shared_body` when set.
    pub stream: Option<Streamed>,
}

/// A body read as it is sent: its first bytes, read by the handler, and a
/// source of the rest that the connection layer asks for one piece at a
/// time, each once the piece before has (almost) left, so that a response
/// holds a piece or two whatever the body's length and its client's pace.
pub struct Streamed {
    /// Every byte of the body: `first` and all that `rest` yields. The
    /// client is told this length; a body that ends short of it is cut.
    pub len: u64,
    pub first: bytes::Bytes,
    pub rest: Box<dyn BodySource>,
}

impl std::fmt::Debug for Streamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Streamed({} bytes)", self.len)
    }
}

/// The rest of a [`Streamed`] body.
pub trait BodySource: Send + 'static {
    /// The next bytes, or `None` at the end. An error ends the body short
    /// of its length: the connection is closed, so the client sees a
    /// truncated answer, never a complete-looking one. It may block (a
    /// database read): the connection layer calls it off its async threads.
    fn next(&mut self) -> Option<Result<bytes::Bytes, Error>>;
}

/// Something a response keeps alive until its body is sent or dropped.
pub struct Lease(pub Box<dyn Send + Sync + 'static>);

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Lease")
    }
}

/// The largest piece a streamed body ([`Streamed`]) gives at a time: the
/// media's sealed pieces (`store::seal::PIECE`). The connection layer keeps
/// its buffer below it, so that an answer holds about two pieces.
pub const STREAM_PIECE: usize = 64 * 1024;

/// Pieces of streamed bodies read at once, server-wide (each on a blocking
/// thread: the connection layer runs them, the media pages size their
/// reading sessions by them).
pub const STREAM_READS: usize = 4;

/// Work finishing elsewhere (e.g. a write queued for the store's group
/// commit) whose outcome a deferred response waits for. The store's
/// [`PendingWrite`](crate::store::PendingWrite) is one; this layer needs to
/// know nothing else of it.
pub trait Pending: Send + 'static {
    /// Waits without holding a thread (on the connection layer's runtime).
    fn wait(self: Box<Self>) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), Error>> + Send>>;
    /// Blocks the calling thread; must not be called on an async runtime's thread.
    fn wait_blocking(self: Box<Self>) -> Result<(), Error>;
}

/// What a caller may tell the client about its budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quota {
    pub limit: u32,
    pub window_secs: u64,
    pub remaining: u32,
    /// Seconds until the oldest counted event leaves the window.
    pub reset_secs: u64,
}

impl Quota {
    /// `RateLimit-Policy` and `RateLimit` header values
    /// (draft-ietf-httpapi-ratelimit-headers).
    pub fn headers(&self) -> [(&'static str, String); 2] {
        [
            ("RateLimit-Policy", format!("\"creations\";q={};w={}", self.limit, self.window_secs)),
            ("RateLimit", format!("\"creations\";r={};t={}", self.remaining, self.reset_secs)),
        ]
    }
}

/// A response to complete once pending work is done: what to wait for and
/// how to answer its result. Building the answer must be cheap (it runs on
/// the connection layer's I/O threads).
pub struct Deferred {
    pending: Box<dyn Pending>,
    finish: Box<dyn FnOnce(Result<(), Error>) -> Response + Send>,
}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Deferred")
    }
}

impl Deferred {
    /// Waits for the pending work and builds the answer (for async callers).
    pub async fn resolve(self) -> Response {
        let result = self.pending.wait().await;
        (self.finish)(result)
    }

    /// Blocks the calling thread until the pending work is done, then builds
    /// the answer. Must not be called on an async runtime's thread.
    pub fn resolve_blocking(self) -> Response {
        let result = self.pending.wait_blocking();
        (self.finish)(result)
    }
}

impl Response {
    pub fn new(status: u16) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            deferred: None,
            lease: None,
            shared_body: None,
            stream: None,
        }
    }

    /// A response built by `finish` once `pending` delivers its result.
    pub fn after(
        pending: impl Pending,
        finish: impl FnOnce(Result<(), Error>) -> Response + Send + 'static,
    ) -> Response {
        Response {
            deferred: Some(Deferred { pending: Box::new(pending), finish: Box::new(finish) }),
            ..Response::new(500)
        }
    }

    /// The pending part of a deferred response, leaving the placeholder.
    pub fn take_deferred(&mut self) -> Option<Deferred> {
        self.deferred.take()
    }

    /// The final response, waiting for a commit if it is deferred (for
    /// in-process callers on plain threads; the server awaits instead).
    pub fn settle(mut self) -> Response {
        match self.take_deferred() {
            Some(d) => d.resolve_blocking(),
            None => self,
        }
    }

    pub fn json(status: u16, value: &impl Serialize) -> Response {
        match serde_json::to_vec(value) {
            Ok(body) => Response::new(status).with_header("Content-Type", "application/json").with_body(body),
            Err(e) => Response::from_error(&Error::internal(e)),
        }
    }

    pub fn with_header(mut self, name: &str, value: impl Into<String>) -> Response {
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    pub fn with_body(mut self, body: Vec<u8>) -> Response {
        self.body = body;
        self
    }

    /// A body shared with other responses, not copied (see `shared_body`).
    pub fn with_shared_body(mut self, body: bytes::Bytes) -> Response {
        self.shared_body = Some(body);
        self
    }

    /// A body sent as the client takes it (see [`Streamed`]).
    pub fn with_stream(mut self, stream: Streamed) -> Response {
        self.stream = Some(stream);
        self
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The problem document for `err`, with the headers its status calls for.
    /// Internal causes go to stderr here, and only here.
    pub fn from_error(err: &Error) -> Response {
        if let Error::Internal(cause) = err {
            eprintln!("anonpoll: internal error: {cause:#}");
        }
        let problem = err.to_problem();
        let body = serde_json::to_vec(&problem).unwrap_or_else(|_| b"{}".to_vec());
        let mut r = Response::new(err.status()).with_header("Content-Type", "application/problem+json").with_body(body);
        match err {
            Error::Unauthorized(AuthFailure::Missing) => {
                r = r.with_header("WWW-Authenticate", "Bearer realm=\"anonpoll\"");
            }
            Error::Unauthorized(AuthFailure::Malformed) => {
                r = r.with_header("WWW-Authenticate", "Bearer realm=\"anonpoll\", error=\"invalid_request\"");
            }
            Error::Unauthorized(AuthFailure::InvalidToken) => {
                r = r.with_header(
                    "WWW-Authenticate",
                    "Bearer realm=\"anonpoll\", error=\"invalid_token\", error_description=\"The token is not this poll's admin token.\"",
                );
            }
            Error::MethodNotAllowed(allowed) => r = r.with_header("Allow", allowed.join(", ")),
            Error::UnsupportedMediaType { accepted } => r = r.with_header("Accept", accepted.join(", ")),
            Error::TooLarge { .. } => r = r.with_header("Connection", "close"),
            Error::RateLimited(rl) => {
                let quota = Quota {
                    limit: rl.limit,
                    window_secs: rl.window_secs,
                    remaining: 0,
                    reset_secs: rl.retry_after_secs,
                };
                for (name, value) in quota.headers() {
                    r = r.with_header(name, value);
                }
            }
            _ => {}
        }
        if let Some(secs) = err.retry_after_secs() {
            r = r.with_header("Retry-After", secs.to_string());
        }
        r
    }
}

impl From<Error> for Response {
    fn from(e: Error) -> Response {
        Response::from_error(&e)
    }
}
