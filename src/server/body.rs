//! Response bodies as hyper sends them: whole (a page, a JSON document, a
//! small file), or streamed ([`Streamed`]): a large media file sent piece
//! by piece as its client takes it.
//!
//! Why a module of its own: a streamed body reads the database while it is
//! sent, so it must never block the connection layer's async threads, never
//! hold a database connection between pieces, and never be read ahead of
//! its client; what that takes (a blocking read per piece, a few at a time)
//! is kept apart from the connection handling in `server.rs`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use http_body_util::Full;
use tokio::sync::Semaphore;

use crate::error::Error;
use crate::http::{BodySource, Response, Streamed};

/// A body that holds a lease (e.g. on a memory budget) until it is dropped.
struct Leased {
    body: Bytes,
    _lease: crate::http::Lease,
}

impl AsRef<[u8]> for Leased {
    fn as_ref(&self) -> &[u8] {
        &self.body
    }
}

/// Pieces of streamed bodies being read at once, across all responses
/// ([`crate::http::STREAM_READS`]). Each is a short read on a thread of
/// tokio's blocking pool (not on the I/O threads, which must never wait for
/// a database), a pool of this many threads (`server.rs`), and waiting
/// streams take their turn first come, first served, so a slow client holds
/// no thread and no database connection between its pieces.
pub(crate) use crate::http::STREAM_READS;

static STREAM_READ_SLOTS: Semaphore = Semaphore::const_new(STREAM_READS);

/// How long the next piece of a streamed answer may take, waiting for a
/// read slot included, before the answer is cut short.
const PIECE_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// A response body as hyper sends it: whole, or streamed ([`Streamed`]).
pub(super) enum OutBody {
    Whole(Full<Bytes>),
    Stream(Box<Streaming>),
}

/// A [`Streamed`] body being sent. hyper asks for the next frame only once
/// its write buffer is nearly empty (under `max_buf_size`, `CONN_BUF` in server.rs, 16 KiB), so the
/// next piece is read only when the client has taken the one before, and a
/// response holds about two pieces at most, whatever its length.
pub(super) struct Streaming {
    /// Bytes still to send.
    left: u64,
    first: Option<Bytes>,
    /// The source of the rest, while no read is under way.
    source: Option<Box<dyn BodySource>>,
    reading: Option<Pin<Box<dyn Future<Output = PieceRead> + Send>>>,
    _lease: Option<crate::http::Lease>,
}

/// A read's outcome with its source handed back; `None` if the read task
/// itself failed (a panic).
type PieceRead = Option<(Box<dyn BodySource>, Option<Result<Bytes, Error>>)>;

/// The error that ends a streamed body short of its length: hyper then
/// closes the connection, so the client sees a cut answer.
fn cut() -> std::io::Error {
    std::io::Error::other("the body's source ended before its length")
}

impl Streaming {
    fn new(stream: Streamed, lease: Option<crate::http::Lease>) -> Streaming {
        Streaming {
            left: stream.len,
            first: Some(stream.first),
            source: Some(stream.rest),
            reading: None,
            _lease: lease,
        }
    }

    fn send(&mut self, bytes: Bytes) -> Poll<Option<Result<hyper::body::Frame<Bytes>, std::io::Error>>> {
        match self.left.checked_sub(bytes.len() as u64) {
            Some(left) => {
                self.left = left;
                Poll::Ready(Some(Ok(hyper::body::Frame::data(bytes))))
            }
            // More than announced: never sent (the client would read it as
            // the next answer).
            None => {
                self.left = 0;
                Poll::Ready(Some(Err(cut())))
            }
        }
    }

    fn poll_next(
        &mut self,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, std::io::Error>>> {
        if let Some(first) = self.first.take().filter(|b| !b.is_empty()) {
            return self.send(first);
        }
        if self.left == 0 {
            return Poll::Ready(None);
        }
        let reading = match &mut self.reading {
            Some(reading) => reading,
            None => {
                let Some(mut source) = self.source.take() else { return Poll::Ready(Some(Err(cut()))) };
                self.reading.insert(Box::pin(async move {
                    // A read that waits too long (a database unreachable
                    // without a reset) cuts its answer instead of holding
                    // it open; its slot stays taken until the read ends.
                    let read = async move {
                        let permit = STREAM_READ_SLOTS.acquire().await.ok()?;
                        tokio::task::spawn_blocking(move || {
                            let _permit = permit;
                            let next = source.next();
                            (source, next)
                        })
                        .await
                        .ok()
                    };
                    tokio::time::timeout(PIECE_READ_TIMEOUT, read).await.ok().flatten()
                }))
            }
        };
        let read = std::task::ready!(reading.as_mut().poll(cx));
        self.reading = None;
        match read {
            Some((source, Some(Ok(bytes)))) if !bytes.is_empty() => {
                self.source = Some(source);
                self.send(bytes)
            }
            Some((_, Some(Err(e)))) => {
                if let Error::Internal(cause) = &e {
                    eprintln!("anonpoll: internal error: {cause:#}");
                }
                self.left = 0;
                Poll::Ready(Some(Err(cut())))
            }
            // Ended (or gave nothing) before its length, or the read failed.
            _ => {
                self.left = 0;
                Poll::Ready(Some(Err(cut())))
            }
        }
    }
}

impl hyper::body::Body for OutBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, std::io::Error>>> {
        match self.get_mut() {
            OutBody::Whole(full) => Pin::new(full).poll_frame(cx).map_err(|never| match never {}),
            OutBody::Stream(s) => s.poll_next(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            OutBody::Whole(full) => full.is_end_stream(),
            OutBody::Stream(s) => s.left == 0 && s.first.as_ref().is_none_or(Bytes::is_empty),
        }
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match self {
            OutBody::Whole(full) => full.size_hint(),
            // Asked before the first frame: the whole length, which hyper
            // sends as Content-Length.
            OutBody::Stream(s) => hyper::body::SizeHint::with_exact(s.left),
        }
    }
}

pub(super) fn to_hyper(mut response: Response) -> hyper::Response<OutBody> {
    use hyper::header::{HeaderName, HeaderValue, SET_COOKIE};
    let body = match (response.stream.take(), response.shared_body.take()) {
        // The lease is given back once hyper has sent (or dropped) the body.
        (Some(stream), _) => OutBody::Stream(Box::new(Streaming::new(stream, response.lease.take()))),
        (None, shared) => {
            let body = shared.unwrap_or_else(|| Bytes::from(std::mem::take(&mut response.body)));
            OutBody::Whole(Full::new(match response.lease.take() {
                Some(lease) => Bytes::from_owner(Leased { body, _lease: lease }),
                None => body,
            }))
        }
    };
    let mut out = hyper::Response::new(body);
    *out.status_mut() = hyper::StatusCode::from_u16(response.status).unwrap_or_else(|_| {
        eprintln!("anonpoll: a handler answered status {}", response.status);
        hyper::StatusCode::INTERNAL_SERVER_ERROR
    });
    let headers = out.headers_mut();
    // The handler's headers move in without a copy of their values (a
    // known name is not allocated either).
    for (name, value) in std::mem::take(&mut response.headers) {
        match (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_maybe_shared(Bytes::from(value))) {
            (Ok(name), Ok(value)) => {
                headers.append(name, value);
            }
            // Never half an answer: a header that cannot be sent fails it.
            _ => {
                eprintln!("anonpoll: could not build a response: the header {name} cannot be sent");
                let mut failed = hyper::Response::new(OutBody::Whole(Full::new(Bytes::new())));
                *failed.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
                return failed;
            }
        }
    }
    for (name, value) in super::BASELINE_HEADERS {
        if !headers.contains_key(name) {
            headers.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
        }
    }
    // Defence in depth: no code path sets a cookie, and none may slip through.
    headers.remove(SET_COOKIE);
    out
}
