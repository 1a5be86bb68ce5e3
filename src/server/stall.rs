//! A connection's stream with a send timeout of its own.
//!
//! Why: a client that sends requests and never reads the answers would
//! hold its connection, its slot and the answer's memory for ever.
//!
//! Promises: a write waits at most `limit` for the client to take a byte;
//! then it fails, and hyper drops the connection. A connection the server
//! closes (after its last answer: `Connection: close`) is closed gently: its
//! sending side first, then what the client still sends is read and thrown
//! away for at most [`LINGER`] ([`LINGER_BYTES`]) before the socket closes.
//! Closed at once with unread bytes (pipelined requests past the last one
//! answered), the socket would be reset, and a reset makes the client's
//! system throw away the answers it has not read yet.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

use super::listener::Stream;

/// A connection's stream whose writes fail with `TimedOut` once the client
/// has taken no byte for `limit`: a reply waits that long for a reader that
/// stopped reading, then hyper drops the connection (and its slots).
pub(super) struct StallGuard {
    stream: Gentle,
    limit: Duration,
    /// Running while the last write attempt could not make progress.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Whether a write is waiting for the client now (seen from outside).
    pub(super) stalled_now: Arc<AtomicBool>,
}

impl StallGuard {
    pub(super) fn new(stream: Stream, limit: Duration) -> StallGuard {
        StallGuard {
            stream: Gentle { stream: Some(stream), shut: false },
            limit,
            stalled: None,
            stalled_now: Arc::new(AtomicBool::new(false)),
        }
    }

    /// What a write attempt that returned `poll` means, given the stall so
    /// far. Only bytes taken count as progress: a flush that is ready at
    /// once (as a socket's always is) must not restart the clock.
    fn watch<T>(
        &mut self,
        cx: &mut TaskContext<'_>,
        poll: Poll<std::io::Result<T>>,
        took: bool,
    ) -> Poll<std::io::Result<T>> {
        if poll.is_ready() {
            if took {
                self.stalled = None;
                self.stalled_now.store(false, Ordering::Relaxed);
            }
            return poll;
        }
        self.stalled_now.store(true, Ordering::Relaxed);
        let limit = self.limit;
        let timer = self.stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => {
                Poll::Ready(Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "the client stopped reading")))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for StallGuard {
    fn poll_read(self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for StallGuard {
    fn poll_write(self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_write(cx, buf);
        let took = matches!(poll, Poll::Ready(Ok(n)) if n > 0);
        this.watch(cx, poll, took)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        let took = matches!(poll, Poll::Ready(Ok(n)) if n > 0);
        this.watch(cx, poll, took)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_flush(cx);
        this.watch(cx, poll, false)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_shutdown(cx);
        this.watch(cx, poll, false)
    }
}

/// How long a connection the server closed reads what the client still
/// sends, at most, before its socket closes.
pub(super) const LINGER: Duration = Duration::from_secs(2);

/// How many bytes a closed connection reads and throws away at most.
pub(super) const LINGER_BYTES: usize = 64 * 1024;

/// The socket, closed gently once its sending side was shut.
struct Gentle {
    /// Taken only when it is dropped.
    stream: Option<Stream>,
    /// Whether its sending side was shut (the server closed the connection).
    shut: bool,
}

impl Gentle {
    fn stream(&mut self) -> std::io::Result<Pin<&mut Stream>> {
        match self.stream.as_mut() {
            Some(s) => Ok(Pin::new(s)),
            None => Err(std::io::Error::new(std::io::ErrorKind::NotConnected, "the connection is closed")),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.as_ref().is_some_and(AsyncWrite::is_write_vectored)
    }
}

impl AsyncRead for Gentle {
    fn poll_read(self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut().stream() {
            Ok(s) => s.poll_read(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

impl AsyncWrite for Gentle {
    fn poll_write(self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        match self.get_mut().stream() {
            Ok(s) => s.poll_write(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut().stream() {
            Ok(s) => s.poll_write_vectored(cx, bufs),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn is_write_vectored(&self) -> bool {
        Gentle::is_write_vectored(self)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut().stream() {
            Ok(s) => s.poll_flush(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let poll = match this.stream() {
            Ok(s) => s.poll_shutdown(cx),
            Err(e) => return Poll::Ready(Err(e)),
        };
        if matches!(poll, Poll::Ready(Ok(()))) {
            this.shut = true;
        }
        poll
    }
}

impl Drop for Gentle {
    fn drop(&mut self) {
        let Some(mut stream) = self.stream.take() else { return };
        if !self.shut {
            return;
        }
        // On the runtime, which drops connections; elsewhere it just closes.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let mut buf = [0u8; 4096];
                let mut read = 0;
                let _ = tokio::time::timeout(LINGER, async {
                    while read < LINGER_BYTES {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => read += n,
                        }
                    }
                })
                .await;
            });
        }
    }
}
