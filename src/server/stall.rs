//! A connection's stream with a send timeout of its own.
//!
//! Why: a client that sends requests and never reads the answers would
//! hold its connection, its slot and the answer's memory for ever.
//!
//! Promises: a write waits at most `limit` for the client to take a byte;
//! then it fails, and hyper drops the connection.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::listener::Stream;

/// A connection's stream whose writes fail with `TimedOut` once the client
/// has taken no byte for `limit`: a reply waits that long for a reader that
/// stopped reading, then hyper drops the connection (and its slots).
pub(super) struct StallGuard {
    stream: Stream,
    limit: Duration,
    /// Running while the last write attempt could not make progress.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Whether a write is waiting for the client now (seen from outside).
    pub(super) stalled_now: Arc<AtomicBool>,
}

impl StallGuard {
    pub(super) fn new(stream: Stream, limit: Duration) -> StallGuard {
        StallGuard { stream, limit, stalled: None, stalled_now: Arc::new(AtomicBool::new(false)) }
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
