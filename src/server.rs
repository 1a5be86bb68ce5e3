//! The connection layer: accepts HTTP/1.1 connections and runs a fixed pool of
//! worker threads that turn each request into an [`http::Request`], call the
//! handler, and write its [`http::Response`].
//!
//! Connections are served by hyper on a small tokio runtime: an idle or slow
//! connection costs a few kilobytes and no thread, so no connection waits
//! behind another (see docs/HTTP-LAYER.md for why tiny_http was replaced).
//! Handlers stay plain synchronous functions: each runs on one of a fixed set
//! of worker threads, each worker owning its state (e.g. a read connection).
//!
//! Promises:
//! - request heads are bounded (size, count, and a read timeout); bodies are
//!   read only up to the limit, within a timeout; a declared or actual larger
//!   body is handed to the handler as `Body::TooLarge` without being read;
//! - open connections are capped; work waiting for a worker is capped, and
//!   past the cap the answer is 503 at once;
//! - a panicking handler answers 500 and its worker carries on with a fresh
//!   handler (and so fresh per-worker state);
//! - a deferred response ([`Response::after_commit`]) is completed on the
//!   connection task once its write is committed, without a worker; how many
//!   can wait is bounded by the writer's queue and the connection cap;
//! - every response carries the baseline security headers and never a cookie;
//! - the client address is resolved once (see `client.rs`) and never logged;
//! - on shutdown, the listener closes, requests in flight are answered, idle
//!   connections are closed, and the workers stop.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context, anyhow};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{Notify, Semaphore, oneshot};

use crate::client::{TrustedProxies, client_ip};
use crate::error::Error;
use crate::http::{Body, Method, Request, Response};

/// Headers every response carries unless the handler set its own value.
const BASELINE_HEADERS: [(&str, &str); 5] = [
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-store"),
    ("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
];

#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Threads running handlers.
    pub workers: usize,
    pub trusted: TrustedProxies,
    /// Largest request body read.
    pub max_body: usize,
    /// Open connections beyond this are closed at once.
    pub max_connections: usize,
    /// Time a client has to send a request head (also bounds idle keep-alive).
    pub header_timeout: Duration,
    /// Time a client has to send a request body.
    pub body_timeout: Duration,
    /// Paths that take `multipart/form-data` bodies with files, and their
    /// larger limits. Any other body keeps `max_body`.
    pub uploads: Option<UploadRoute>,
}

/// Where uploads are accepted, and how large and slow they may be.
#[derive(Clone, Copy, Debug)]
pub struct UploadRoute {
    pub accepts: fn(&str) -> bool,
    pub max_body: usize,
    pub body_timeout: Duration,
    /// Upload requests in progress at once; more get 503 without being read.
    pub concurrent: usize,
}

impl ServerConfig {
    pub fn new(workers: usize, trusted: TrustedProxies, max_body: usize) -> ServerConfig {
        ServerConfig {
            workers,
            trusted,
            max_body,
            max_connections: 1000,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(20),
            uploads: None,
        }
    }
}

/// Largest request head (request line and headers) accepted; hyper answers
/// 431 past it. hyper's minimum is 8 KiB.
const MAX_HEAD: usize = 16 * 1024;

/// Stops a running server from any thread (e.g. a signal handler).
#[derive(Clone)]
pub struct Shutdown {
    notify: Arc<Notify>,
}

impl Shutdown {
    pub fn trigger(&self) {
        // notify_one keeps a permit if the server is not waiting yet.
        self.notify.notify_one();
    }
}

pub struct Server {
    listener: std::net::TcpListener,
    addr: SocketAddr,
    config: ServerConfig,
    shutdown: Shutdown,
}

/// One request waiting for a worker.
struct Job {
    request: Request,
    reply: oneshot::Sender<Response>,
}

/// What every connection task shares.
struct Shared {
    jobs: SyncSender<Job>,
    config: ServerConfig,
    /// Upload bodies being read or handled; each may hold `max_body` of
    /// memory, so they are few.
    upload_slots: Arc<Semaphore>,
}

impl Server {
    pub fn bind(listen: &str, config: ServerConfig) -> anyhow::Result<Server> {
        let listener = std::net::TcpListener::bind(listen).with_context(|| format!("cannot listen on {listen}"))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        Ok(Server { listener, addr, config, shutdown: Shutdown { notify: Arc::new(Notify::new()) } })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn shutdown_handle(&self) -> Shutdown {
        self.shutdown.clone()
    }

    /// Serves until [`Shutdown::trigger`]. `make_handler` is called once per
    /// worker (and again after a panic) so each worker owns its state.
    pub fn run<F, H>(self, make_handler: F) -> anyhow::Result<()>
    where
        F: Fn() -> anyhow::Result<H> + Send + Sync + 'static,
        H: FnMut(&Request) -> Response,
    {
        let workers = self.config.workers.max(1);
        let (jobs, queue) = sync_channel::<Job>(workers * 64);
        let queue = Arc::new(Mutex::new(queue));
        let make_handler = Arc::new(make_handler);
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let mut threads = Vec::with_capacity(workers);
        for i in 0..workers {
            let queue = queue.clone();
            let make = make_handler.clone();
            let ready = ready_tx.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("anonpoll-worker-{i}"))
                    .spawn(move || worker(&queue, &*make, &ready))?,
            );
        }
        drop(ready_tx);
        // Refuse to serve at all if a worker cannot set up its state.
        for _ in 0..workers {
            ready_rx.recv().map_err(|_| anyhow!("a worker thread died while starting"))??;
        }

        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("anonpoll-io")
            .enable_all()
            .build()?;
        let uploads = self.config.uploads.map_or(0, |u| u.concurrent);
        let shared =
            Arc::new(Shared { jobs, config: self.config.clone(), upload_slots: Arc::new(Semaphore::new(uploads)) });
        let served = runtime.block_on(accept_loop(self.listener, shared, self.shutdown.notify.clone()));
        // Connections still open after the grace period are dropped here,
        // which drops the last job senders and lets the workers finish.
        runtime.shutdown_timeout(Duration::from_secs(1));
        for t in threads {
            if t.join().is_err() {
                eprintln!("anonpoll: a worker thread panicked outside a request");
            }
        }
        served
    }
}

fn worker<F, H>(queue: &Mutex<Receiver<Job>>, make: &F, ready: &std::sync::mpsc::Sender<anyhow::Result<()>>)
where
    F: Fn() -> anyhow::Result<H>,
    H: FnMut(&Request) -> Response,
{
    let mut handler = match make() {
        Ok(h) => {
            let _ = ready.send(Ok(()));
            h
        }
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    loop {
        // The lock is held only while waiting for the next job.
        let job = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok(job) = job else { return };
        let response = match catch_unwind(AssertUnwindSafe(|| handler(&job.request))) {
            Ok(r) => r,
            Err(_) => {
                // The panic message went to stderr through the default hook.
                // Start over with fresh state, since the old may be half-changed.
                match make() {
                    Ok(h) => handler = h,
                    Err(e) => eprintln!("anonpoll: cannot renew a worker after a panic: {e:#}"),
                }
                Response::from_error(&Error::internal(anyhow!("a request handler panicked")))
            }
        };
        // A client that hung up needs no answer.
        let _ = job.reply.send(response);
    }
}

async fn accept_loop(listener: std::net::TcpListener, shared: Arc<Shared>, stop: Arc<Notify>) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let slots = Arc::new(Semaphore::new(shared.config.max_connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(pair) => pair,
                    Err(e) => {
                        // Out of file descriptors or similar: back off, keep serving.
                        eprintln!("anonpoll: accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let Ok(slot) = slots.clone().try_acquire_owned() else {
                    drop(stream); // over the connection cap: close at once
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let header_timeout = shared.config.header_timeout;
                let shared = shared.clone();
                let service = service_fn(move |req| serve(req, peer, shared.clone()));
                let conn = http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(header_timeout)
                    .max_buf_size(MAX_HEAD.max(8192))
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(stream), service);
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    // Connection errors are the client's business (resets,
                    // timeouts, malformed heads, which hyper answers itself).
                    let _ = conn.await;
                    drop(slot);
                });
            }
            () = stop.notified() => break,
        }
    }
    drop(listener);
    if tokio::time::timeout(Duration::from_secs(10), graceful.shutdown()).await.is_err() {
        eprintln!("anonpoll: some connections did not finish within 10 s of shutdown");
    }
    Ok(())
}

/// Reads one request (within bounds), hands it to a worker, returns its answer.
async fn serve(
    req: hyper::Request<Incoming>,
    peer: SocketAddr,
    shared: Arc<Shared>,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let config = &shared.config;
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let forwarded: Vec<&str> =
        headers.iter().filter(|(n, _)| n == "x-forwarded-for").map(|(_, v)| v.as_str()).collect();
    let forwarded = (!forwarded.is_empty()).then(|| forwarded.join(","));
    let client = client_ip(peer.ip(), forwarded.as_deref(), &config.trusted);
    let method = Method::parse(req.method().as_str());
    let path = req.uri().path().to_owned();
    let query = req.uri().query().map(str::to_owned);
    let declared: Option<u64> =
        req.headers().get(hyper::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
    // Files come only as multipart bodies to the paths that take them, and
    // only a few at a time: each may hold up to the upload limit in memory.
    let upload = config.uploads.filter(|u| method == Method::Post && (u.accepts)(&path) && is_multipart(&headers));
    let _upload_slot = match upload {
        Some(_) => match shared.upload_slots.clone().try_acquire_owned() {
            Ok(slot) => Some(slot),
            Err(_) => {
                let busy = Error::Unavailable { reason: "Too many uploads are in progress.", retry_after_secs: 5 };
                return Ok(to_hyper(Response::from_error(&busy).with_header("Connection", "close")));
            }
        },
        None => None,
    };
    let (max_body, body_timeout) = match upload {
        Some(u) => (u.max_body, u.body_timeout),
        None => (config.max_body, config.body_timeout),
    };
    let body = if declared.is_some_and(|n| n > max_body as u64) {
        // Not read at all; hyper closes the connection after the answer.
        Body::TooLarge { limit: max_body }
    } else {
        let limited = Limited::new(req.into_body(), max_body);
        match tokio::time::timeout(body_timeout, limited.collect()).await {
            Ok(Ok(collected)) => Body::Bytes(collected.to_bytes()),
            Ok(Err(e)) if e.is::<LengthLimitError>() => Body::TooLarge { limit: max_body },
            Ok(Err(_)) => {
                return Ok(to_hyper(Response::from_error(&Error::Malformed("The body could not be read.".into()))));
            }
            Err(_) => return Ok(to_hyper(Response::from_error(&Error::RequestTimeout))),
        }
    };
    let request = Request { method, path, query, headers, body, client };
    let (reply, answer) = oneshot::channel();
    let mut response = match shared.jobs.try_send(Job { request, reply }) {
        Ok(()) => answer
            .await
            .unwrap_or_else(|_| Response::from_error(&Error::internal(anyhow!("a worker dropped a request")))),
        Err(TrySendError::Full(_)) => {
            Response::from_error(&Error::Unavailable { reason: "The server is busy.", retry_after_secs: 1 })
        }
        Err(TrySendError::Disconnected(_)) => {
            Response::from_error(&Error::Unavailable { reason: "The server is stopping.", retry_after_secs: 5 })
        }
    };
    // A write's answer waits for its commit here, on the connection, so the
    // worker is free at once and a commit group is not capped by the number
    // of workers. If the client hangs up, hyper drops this future; the write
    // is committed all the same.
    while let Some(pending) = response.take_deferred() {
        response = pending.resolve().await;
    }
    Ok(to_hyper(response))
}

/// Exactly one `Content-Type`, and it is multipart: a second header could
/// make the handler read the body as another type than the one it was
/// admitted as.
fn is_multipart(headers: &[(String, String)]) -> bool {
    let mut types = headers.iter().filter(|(n, _)| n == "content-type");
    match (types.next(), types.next()) {
        (Some((_, v)), None) => {
            v.split(';').next().is_some_and(|t| t.trim().eq_ignore_ascii_case("multipart/form-data"))
        }
        _ => false,
    }
}

/// A body that holds a lease (e.g. on a memory budget) until it is dropped.
struct Leased {
    body: Vec<u8>,
    _lease: crate::http::Lease,
}

impl AsRef<[u8]> for Leased {
    fn as_ref(&self) -> &[u8] {
        &self.body
    }
}

fn to_hyper(mut response: Response) -> hyper::Response<Full<Bytes>> {
    for (name, value) in BASELINE_HEADERS {
        if response.header(name).is_none() {
            response.headers.push((name.to_owned(), value.to_owned()));
        }
    }
    // Defence in depth: no code path sets a cookie, and none may slip through.
    response.headers.retain(|(n, _)| !n.eq_ignore_ascii_case("set-cookie"));
    let mut builder = hyper::Response::builder().status(response.status);
    for (name, value) in &response.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let body = match response.lease.take() {
        // The lease is given back once hyper has sent (or dropped) the body.
        Some(lease) => Bytes::from_owner(Leased { body: std::mem::take(&mut response.body), _lease: lease }),
        None => Bytes::from(std::mem::take(&mut response.body)),
    };
    builder.body(Full::new(body)).unwrap_or_else(|e| {
        eprintln!("anonpoll: could not build a response: {e}");
        let mut r = hyper::Response::new(Full::new(Bytes::new()));
        *r.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    fn get(addr: SocketAddr, path: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn a_panicking_handler_answers_500_and_the_server_keeps_serving() {
        let config = ServerConfig::new(1, TrustedProxies::loopback(), 1024);
        let server = Server::bind("127.0.0.1:0", config).unwrap();
        let addr = server.local_addr();
        let stop = server.shutdown_handle();
        let t = std::thread::spawn(move || {
            server.run(|| {
                Ok(|r: &Request| {
                    if r.path == "/boom" {
                        panic!("deliberate test panic");
                    }
                    Response::new(200).with_body(b"fine".to_vec())
                })
            })
        });
        let boom = get(addr, "/boom");
        assert!(boom.starts_with("HTTP/1.1 500"), "{boom}");
        assert!(boom.contains("application/problem+json"), "{boom}");
        assert!(!boom.contains("deliberate"), "panic text must not reach the client: {boom}");
        // The only worker survived the panic.
        for _ in 0..3 {
            let ok = get(addr, "/ok");
            assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
            assert!(ok.to_ascii_lowercase().contains("x-content-type-options: nosniff"), "{ok}");
        }
        stop.trigger();
        t.join().unwrap().unwrap();
    }

    #[test]
    fn a_worker_that_cannot_start_stops_the_server_at_once() {
        let server = Server::bind("127.0.0.1:0", ServerConfig::new(2, TrustedProxies::loopback(), 1024)).unwrap();
        let err =
            server.run(|| -> anyhow::Result<fn(&Request) -> Response> { Err(anyhow!("no database")) }).unwrap_err();
        assert!(err.to_string().contains("no database"), "{err}");
    }
}
