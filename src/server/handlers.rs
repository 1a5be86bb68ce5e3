//! The request handlers' states, lent to whichever thread runs a request.
//!
//! Why: a handler owns state that is costly to make and must not be shared
//! (a read connection to the database, with its prepared statements and
//! its memo of keys). Requests run on the connection threads (`server.rs`)
//! or, when they wait, on the threads for that (`anonpoll-wait`); no thread is a
//! request's own. So each request takes a state from this pool and gives it
//! back; the pool makes one when none is free, and keeps as many as ever
//! ran at once (the gate's permits bound that, `gate.rs`).
//!
//! Promises:
//! - a state serves one request at a time;
//! - a handler that panics answers 500, and its state is dropped (the next
//!   request gets a fresh one);
//! - each request's CPU time in its handler is measured (this thread's
//!   clock), for the gate to count against its client.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use anyhow::anyhow;

use crate::error::Error;
use crate::http::{Request, Response};

/// A request handler, as `make` makes them.
pub type Handler = Box<dyn FnMut(&Request) -> Response + Send>;

/// Makes a handler's state: once per state, and again after a panic.
pub type Make = Box<dyn Fn() -> anyhow::Result<Handler> + Send + Sync>;

pub struct Handlers {
    make: Make,
    idle: Mutex<Vec<Handler>>,
}

impl Handlers {
    /// A pool that makes its first state now (so that a broken setup fails
    /// the start, not the first request).
    pub fn new(make: Make) -> anyhow::Result<Handlers> {
        let first = make()?;
        Ok(Handlers { make, idle: Mutex::new(vec![first]) })
    }

    /// Answers `request` with a state of the pool, on this thread; with the
    /// CPU time it took.
    pub fn answer(&self, request: &Request) -> (Response, Duration) {
        let started = thread_cpu();
        let taken = self.idle.lock().unwrap_or_else(PoisonError::into_inner).pop();
        let handler = match taken {
            Some(h) => Ok(h),
            None => (self.make)(),
        };
        let response = match handler {
            Ok(mut handler) => match catch_unwind(AssertUnwindSafe(|| handler(request))) {
                Ok(response) => {
                    self.idle.lock().unwrap_or_else(PoisonError::into_inner).push(handler);
                    response
                }
                Err(_) => {
                    eprintln!("anonpoll: a request handler panicked; its state is dropped");
                    Response::from_error(&Error::internal(anyhow!("handler panicked")))
                }
            },
            Err(e) => {
                eprintln!("anonpoll: cannot make a request handler: {e:#}");
                Response::from_error(&Error::Unavailable { reason: "The server is busy.", retry_after_secs: 1 })
            }
        };
        (response, thread_cpu().saturating_sub(started))
    }

    /// States waiting for a request.
    #[cfg(test)]
    pub fn idle(&self) -> usize {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

/// The CPU time this thread has used.
fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(u64::try_from(t.tv_sec).unwrap_or(0), u32::try_from(t.tv_nsec).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::{Body, Method};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn request(path: &str) -> Request {
        Request {
            method: Method::Get,
            path: path.into(),
            query: None,
            headers: Vec::new(),
            body: Body::Bytes(bytes::Bytes::new()),
            client: "192.0.2.1".parse().unwrap(),
        }
    }

    #[test]
    fn states_are_reused_a_panic_drops_one_and_cpu_time_is_measured() {
        let made = Arc::new(AtomicUsize::new(0));
        let handlers = {
            let made = made.clone();
            Handlers::new(Box::new(move || {
                let me = made.fetch_add(1, Ordering::SeqCst);
                Ok(Box::new(move |req: &Request| {
                    if req.path == "/panic" {
                        panic!("boom");
                    }
                    if req.path == "/spin" {
                        let until = thread_cpu() + Duration::from_millis(20);
                        while thread_cpu() < until {}
                    }
                    Response::new(200).with_body(format!("state {me}").into_bytes())
                }) as Handler)
            }))
            .unwrap()
        };
        assert_eq!(made.load(Ordering::SeqCst), 1, "the first state is made at start");
        let (r, _) = handlers.answer(&request("/"));
        assert_eq!((r.status, &r.body[..]), (200, &b"state 0"[..]), "and used");
        assert_eq!(handlers.answer(&request("/")).0.body, b"state 0", "again");
        let (r, _) = handlers.answer(&request("/panic"));
        assert_eq!(r.status, 500);
        assert_eq!(handlers.idle(), 0, "the panicked state is dropped");
        assert_eq!(handlers.answer(&request("/")).0.body, b"state 1", "a fresh one");
        let (_, cpu) = handlers.answer(&request("/spin"));
        assert!(cpu >= Duration::from_millis(20), "{cpu:?}");
    }
}
