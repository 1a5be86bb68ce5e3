//! The connection layer: accepts HTTP/1.1 connections and runs a fixed pool of
//! worker threads that turn each request into an [`crate::http::Request`], call the
//! handler, and write its [`crate::http::Response`].
//!
//! Connections are served by hyper on a small tokio runtime: an idle or slow
//! connection costs a few kilobytes and no thread, so no connection waits
//! behind another (see docs/HTTP-LAYER.md for why tiny_http was replaced).
//! Handlers stay plain synchronous functions: each runs on one of a fixed set
//! of worker threads, each worker owning its state (e.g. a read connection),
//! the quiet clients' and the busy clients' apart (`workers.rs`).
//!
//! Promises:
//! - request heads are bounded (size, count, and a read timeout); bodies are
//!   read only up to the limit, within a timeout; a declared or actual larger
//!   body is handed to the handler as `Body::TooLarge` without being read;
//! - open connections are capped in all; the per-client cap (the TCP peer,
//!   unless it is a trusted proxy) applies only under pressure, once the
//!   open connections near the cap: then a client at its cap gets no more,
//!   and the heaviest client's connections beyond it are shut down, idle
//!   ones at once, busy ones after their answer; so an idle server serves a
//!   whole class behind one address. A newcomer that finds every slot held
//!   waits a little for one a shed connection gives back (a few such
//!   newcomers at a time; more are closed at once). Work waiting for a worker is capped,
//!   and past the cap the answer is 503 at once;
//! - a reply waits at most `send_timeout` for a client that reads none of
//!   it, then the connection is dropped; a connection is answered at most
//!   [`MAX_REQUESTS_PER_CONNECTION`] times, so pipelining cannot queue
//!   unbounded work behind one connection;
//! - a form body to an upload path is read like any body (small, within
//!   `body_timeout`) until a file part's content begins; only then does it
//!   take an upload slot (at most `per_client` per client), the larger
//!   limits, and a minimum rate after a head start; the bytes of all
//!   uploads in memory share one budget, taken as they arrive, so a slow
//!   upload holds little of it and a form without a file none;
//! - a panicking handler answers 500 and its worker carries on with a fresh
//!   handler (and so fresh per-worker state);
//! - a deferred response ([`Response::after`]) is completed on the
//!   connection task once its write is committed, without a worker; how many
//!   can wait is bounded by the writer's queue and the connection cap;
//! - a streamed body (a large media file, [`crate::http::Streamed`]) is read
//!   a piece at a time as hyper asks for it, once the piece before has
//!   nearly left, each read on one of a few blocking threads
//!   (`body.rs`): a slow client costs a piece or two of memory and holds
//!   no thread or database connection; a source that fails or ends early
//!   cuts the connection, so the client never takes a short body for whole;
//! - every response carries the baseline security headers and never a cookie;
//! - the client address is resolved once (see `client.rs`) and never logged;
//! - on shutdown, the listener closes, requests in flight are answered, idle
//!   connections are closed, and the workers stop.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use anyhow::{Context, anyhow};
use bytes::BytesMut;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, oneshot};

use crate::client::{ClientGroup, TrustedProxies, client_ip};
use crate::error::Error;
use crate::fairq;
use crate::http::{Body, Method, Request, Response};

mod body;
mod workers;
use crate::keyed::Occupancy;
pub(crate) use body::STREAM_READS;
use body::{OutBody, to_hyper};
use workers::Job;

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
    /// Open connections one client may hold once the open connections near
    /// `max_connections` (trusted proxies: no cap).
    pub max_connections_per_client: u32,
    /// How long a reply waits for a client that reads none of it.
    pub send_timeout: Duration,
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
    /// Largest form body with files.
    pub max_body: usize,
    /// Largest form body before a file part begins (a form without files).
    pub form_max: usize,
    /// Time a body has from the start of its first file part.
    pub body_timeout: Duration,
    /// Bodies whose files are arriving at once; more get 503 when their
    /// first file part begins.
    pub concurrent: usize,
    /// Of those, how many one client may have.
    pub per_client: u32,
    /// Bytes of all upload bodies in memory at once, taken as they arrive.
    pub memory: usize,
    pub min_rate: MinRate,
}

/// The slowest a file may arrive: after `head_start`, it must keep up with
/// `bytes_per_sec` on average since its first file part began.
#[derive(Clone, Copy, Debug)]
pub struct MinRate {
    pub bytes_per_sec: u32,
    pub head_start: Duration,
}

impl ServerConfig {
    pub fn new(workers: usize, trusted: TrustedProxies, max_body: usize) -> ServerConfig {
        ServerConfig {
            workers,
            trusted,
            max_body,
            max_connections: 1000,
            max_connections_per_client: 8,
            send_timeout: Duration::from_secs(30),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(20),
            uploads: None,
        }
    }
}

/// Largest request head (request line and headers) accepted; hyper answers
/// 431 past it. hyper's minimum is 8 KiB.
const MAX_HEAD: usize = 16 * 1024;
/// hyper's buffer per connection (`max_buf_size`): a request head's bytes
/// while it is read, and the answer's queued bytes while it is written.
/// hyper asks a streamed body for its next piece only once the queue is
/// under this (`server/body.rs`), so a streamed media answer holds about
/// two pieces: this must stay below a piece, or the media budget, which
/// counts two pieces an answer, would count less than answers hold.
const CONN_BUF: usize = if MAX_HEAD > 8192 { MAX_HEAD } else { 8192 };
const _: () = assert!(CONN_BUF < crate::web::media::PIECE);

/// How long a busy connection that is shed under pressure has to finish its
/// answer before it is dropped.
const SHED_GRACE: Duration = Duration::from_secs(1);

/// How long a newcomer that finds every connection slot held waits for one.
/// Under pressure the connections beyond their client's cap are shed, and
/// each gives its slot back within [`SHED_GRACE`]; a newcomer closed at once
/// meanwhile would be refused for a flood that is already being cut back.
const SLOT_WAIT: Duration = Duration::from_millis(1500);
const _: () = assert!(SLOT_WAIT.as_millis() > SHED_GRACE.as_millis());

/// A new connection's place among the `--max-connections`.
enum Seat {
    Taken(OwnedSemaphorePermit),
    /// Every slot was held; the first permit is a place among the waiters.
    Waiting(OwnedSemaphorePermit, Arc<Semaphore>),
}

impl Seat {
    /// The connection's slot, or `None` if none came back within [`SLOT_WAIT`].
    async fn take(self) -> Option<OwnedSemaphorePermit> {
        match self {
            Seat::Taken(slot) => Some(slot),
            Seat::Waiting(_turn, slots) => tokio::time::timeout(SLOT_WAIT, slots.acquire_owned()).await.ok()?.ok(),
        }
    }
}

/// Requests answered on one connection before it is closed. hyper answers a
/// connection's requests one after another, so pipelined requests wait in
/// its read buffer (at most `MAX_HEAD`) and in the kernel's; this bounds
/// the work one connection can queue in all, whether or not its client reads.
pub const MAX_REQUESTS_PER_CONNECTION: u32 = 100;

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

/// What every connection task shares.
struct Shared {
    jobs: fairq::Sender<Job>,
    config: ServerConfig,
    /// Upload bodies whose files are arriving.
    upload_slots: Arc<Semaphore>,
    /// Bytes of upload bodies in memory (read, or being handled).
    upload_memory: Arc<Budget>,
    /// Upload slots per client.
    uploaders: Arc<Occupancy>,
    /// Open connections per client.
    connections: Arc<Crowd>,
    /// Whether the "X-Forwarded-For from an untrusted peer" warning was given.
    warned_forwarded: AtomicBool,
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
        // Fair between clients (issue 24, item 4): a quarter of the queue at
        // most per client group, the groups served in turn (fairq.rs).
        let (jobs, threads) = workers::start(self.config.workers, make_handler)?;

        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            // The blocking threads read the pieces of streamed bodies, at
            // most STREAM_READS at once (body.rs). Left to tokio's default
            // (512), a piece read that ends while the next is queued starts
            // another thread: 14-16 of them for 32 slow readers, each
            // keeping what its allocator freed.
            .max_blocking_threads(body::STREAM_READS)
            .thread_name("anonpoll-io")
            .enable_all()
            .build()?;
        let uploads = self.config.uploads.map_or(0, |u| u.concurrent);
        let shared = Arc::new(Shared {
            jobs,
            config: self.config.clone(),
            upload_slots: Arc::new(Semaphore::new(uploads)),
            upload_memory: Arc::new(Budget::new(self.config.uploads.map_or(0, |u| u.memory))),
            uploaders: Occupancy::new(self.config.uploads.map_or(1, |u| u.per_client))?,
            connections: Crowd::new(self.config.max_connections_per_client, self.config.max_connections)?,
            warned_forwarded: AtomicBool::new(false),
        });
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

/// Open connections from direct clients, by client group, for the
/// per-client cap that applies only under pressure.
struct Crowd {
    /// Connections one client keeps under pressure.
    cap: usize,
    /// Open connections (all clients) from which the cap applies: seven
    /// eighths of `--max-connections`, so that the last eighth is left for
    /// newcomers while the excess is shed.
    pressure: usize,
    inner: Mutex<CrowdInner>,
}

struct CrowdInner {
    /// The in-memory key that names client groups (no address is kept).
    keys: crate::keyed::Generations<()>,
    open: usize,
    next: u64,
    /// Each client's connections, oldest first, with the signal that shuts
    /// one down.
    clients: std::collections::HashMap<crate::keyed::Key, Vec<(u64, Arc<Notify>)>>,
}

/// One open connection of a direct client; leaves the crowd when dropped.
struct Member {
    crowd: Arc<Crowd>,
    key: crate::keyed::Key,
    id: u64,
    shed: Arc<Notify>,
}

impl Crowd {
    fn new(cap: u32, max_connections: usize) -> anyhow::Result<Arc<Crowd>> {
        let keys = crate::keyed::Generations::new(Duration::MAX, std::time::Instant::now())?;
        Ok(Arc::new(Crowd {
            cap: cap as usize,
            pressure: max_connections.saturating_mul(7) / 8,
            inner: Mutex::new(CrowdInner { keys, open: 0, next: 0, clients: Default::default() }),
        }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CrowdInner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new connection from `client`, unless the server is under pressure
    /// and the client holds its cap already. Under pressure, the heaviest
    /// client's connections beyond the cap are told to shut down (an idle
    /// one closes at once, a busy one after its answer).
    fn admit(self: &Arc<Self>, client: ClientGroup) -> Option<Member> {
        let mut inner = self.lock();
        let key = inner.keys.current.key(&[client.as_bytes()]);
        if inner.open >= self.pressure {
            if inner.clients.get(&key).is_some_and(|c| c.len() >= self.cap) {
                return None;
            }
            // The heaviest first; every client's connections beyond the
            // cap go (a notice given twice counts once).
            let mut over: Vec<&Vec<(u64, Arc<Notify>)>> =
                inner.clients.values().filter(|c| c.len() > self.cap).collect();
            over.sort_by_key(|c| std::cmp::Reverse(c.len()));
            for (_, shed) in over.into_iter().flat_map(|c| c.iter().skip(self.cap)) {
                shed.notify_one();
            }
        }
        let (id, shed) = (inner.next, Arc::new(Notify::new()));
        inner.next += 1;
        inner.open += 1;
        inner.clients.entry(key).or_default().push((id, shed.clone()));
        Some(Member { crowd: self.clone(), key, id, shed })
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let mut inner = self.crowd.lock();
        inner.open = inner.open.saturating_sub(1);
        if let Some(conns) = inner.clients.get_mut(&self.key) {
            conns.retain(|(id, _)| *id != self.id);
            if conns.is_empty() {
                inner.clients.remove(&self.key);
            }
        }
    }
}

async fn accept_loop(listener: std::net::TcpListener, shared: Arc<Shared>, stop: Arc<Notify>) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let max = shared.config.max_connections.max(1);
    let slots = Arc::new(Semaphore::new(max));
    // Newcomers waiting for a slot: as many as the eighth of the cap that
    // pressure keeps for newcomers (one at least).
    let waiting = Arc::new(Semaphore::new((max / 8).max(1)));
    // Tells every connection to finish its answer and close, at shutdown.
    let (stopping, _) = tokio::sync::watch::channel(false);
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
                // A trusted proxy's connections carry many clients, who are
                // told apart only by their requests' headers: no cap per peer.
                // Admitting first also sheds, under pressure, the heaviest
                // clients' connections beyond their cap.
                let member = if shared.config.trusted.trusts(peer.ip()) {
                    None
                } else {
                    match shared.connections.admit(ClientGroup::of(peer.ip())) {
                        Some(member) => Some(member),
                        None => {
                            drop(stream); // under pressure, over this client's cap: close at once
                            continue;
                        }
                    }
                };
                let seat = match slots.clone().try_acquire_owned() {
                    Ok(slot) => Seat::Taken(slot),
                    // Every slot is held: the newcomer waits for one that a
                    // shed connection gives back, unless enough wait already.
                    Err(_) => match waiting.clone().try_acquire_owned() {
                        Ok(turn) => Seat::Waiting(turn, slots.clone()),
                        Err(_) => {
                            drop(stream); // over the connection cap: close at once
                            continue;
                        }
                    },
                };
                let _ = stream.set_nodelay(true);
                if member.is_some() {
                    cap_send_buffer(&stream);
                }
                let header_timeout = shared.config.header_timeout;
                let stream = StallGuard::new(stream, shared.config.send_timeout);
                let stalled = stream.stalled_now.clone();
                let shared = shared.clone();
                let answered = Arc::new(AtomicU32::new(0));
                let service = service_fn(move |req| {
                    let last = answered.fetch_add(1, Ordering::Relaxed) + 1 >= MAX_REQUESTS_PER_CONNECTION;
                    let reply = serve(req, peer, shared.clone());
                    async move {
                        let mut response = reply.await?;
                        if last {
                            // hyper closes the connection after this answer.
                            response
                                .headers_mut()
                                .insert(hyper::header::CONNECTION, hyper::header::HeaderValue::from_static("close"));
                        }
                        Ok::<_, Infallible>(response)
                    }
                });
                let conn = http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(header_timeout)
                    .max_buf_size(CONN_BUF)
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(stream), service);
                let mut stopping = stopping.subscribe();
                tokio::spawn(async move {
                    let Some(slot) = seat.take().await else {
                        return; // no slot came back in time: the connection closes unanswered
                    };
                    let mut conn = std::pin::pin!(conn);
                    let shed = member.as_ref().map(|m| m.shed.clone());
                    let shed = async move {
                        match shed {
                            Some(shed) => shed.notified().await,
                            None => std::future::pending().await,
                        }
                    };
                    // Connection errors are the client's business (resets,
                    // timeouts, malformed heads, which hyper answers itself).
                    tokio::select! {
                        _ = conn.as_mut() => {}
                        // Shed under pressure: an idle connection closes at
                        // once, one whose client reads nothing is dropped, a
                        // busy one has SHED_GRACE to finish its answer.
                        () = shed => {
                            if !stalled.load(Ordering::Relaxed) {
                                conn.as_mut().graceful_shutdown();
                                let _ = tokio::time::timeout(SHED_GRACE, conn).await;
                            }
                        }
                        // Sent once, at shutdown (or the sender is gone).
                        _ = stopping.changed() => {
                            conn.as_mut().graceful_shutdown();
                            let _ = conn.await;
                        }
                    }
                    drop((slot, member));
                });
            }
            () = stop.notified() => break,
        }
    }
    drop(listener);
    let _ = stopping.send(true);
    // Every connection has closed once every slot is back.
    if tokio::time::timeout(Duration::from_secs(10), slots.acquire_many(max as u32)).await.is_err() {
        eprintln!("anonpoll: some connections did not finish within 10 s of shutdown");
    }
    Ok(())
}

/// Reads one request (within bounds), hands it to a worker, returns its answer.
async fn serve(
    req: hyper::Request<Incoming>,
    peer: SocketAddr,
    shared: Arc<Shared>,
) -> Result<hyper::Response<OutBody>, Infallible> {
    let config = &shared.config;
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let forwarded: Vec<&str> =
        headers.iter().filter(|(n, _)| n == "x-forwarded-for").map(|(_, v)| v.as_str()).collect();
    let forwarded = (!forwarded.is_empty()).then(|| forwarded.join(","));
    if forwarded.is_some()
        && !config.trusted.trusts(peer.ip())
        && !shared.warned_forwarded.swap(true, Ordering::Relaxed)
    {
        // Once per start, and without the address: a proxy in front that is
        // not named would make every client one client for the limits.
        eprintln!(
            "polld: a request carried X-Forwarded-For from a peer that is not a trusted proxy, so the header \
             was ignored; if polld runs behind a proxy, name it with --trusted-proxy (POLL_TRUSTED_PROXIES)"
        );
    }
    let client = client_ip(peer.ip(), forwarded.as_deref(), &config.trusted);
    let method = Method::parse(req.method().as_str());
    let path = req.uri().path().to_owned();
    let query = req.uri().query().map(str::to_owned);
    let declared: Option<u64> =
        req.headers().get(hyper::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
    // Files come only as multipart bodies to the paths that take them, and
    // only a few at a time; a form is read as any body until a file begins.
    let upload = config.uploads.filter(|u| method == Method::Post && (u.accepts)(&path) && is_multipart(&headers));
    let watch = upload.and_then(|u| {
        let content_type = headers.iter().find(|(n, _)| n == "content-type").map(|(_, v)| v.as_str())?;
        crate::multipart::FileWatch::new(content_type).map(|w| (u, w))
    });
    let largest = upload.map_or(config.max_body, |u| u.max_body);
    // What the body holds of the upload budget; given back with the request.
    let mut _held = None;
    let body = if declared.is_some_and(|n| n > largest as u64) {
        // Not read at all; hyper closes the connection after the answer.
        Body::TooLarge { limit: largest }
    } else {
        let read = match watch {
            Some((route, watch)) => {
                let mut upload = UploadRead::new(&shared, route, watch, ClientGroup::of(client));
                let read = read_body(req.into_body(), route.form_max, config.body_timeout, Some(&mut upload)).await;
                _held = Some(upload.memory);
                read
            }
            None => read_body(req.into_body(), config.max_body, config.body_timeout, None).await,
        };
        match read {
            Ok(body) => body,
            Err(e) => return Ok(to_hyper(Response::from_error(&e).with_header("Connection", "close"))),
        }
    };
    let request = Request { method, path, query, headers, body, client };
    let (reply, answer) = oneshot::channel();
    let mut response = match shared.jobs.try_send(ClientGroup::of(client), Job { request, reply }) {
        Ok(()) => answer
            .await
            .unwrap_or_else(|_| Response::from_error(&Error::internal(anyhow!("a worker dropped a request")))),
        Err(fairq::TrySendError::Full(_)) => {
            Response::from_error(&Error::Unavailable { reason: "The server is busy.", retry_after_secs: 1 })
        }
        Err(fairq::TrySendError::Disconnected(_)) => {
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

/// The kernel's send buffer of a direct client's connection. Left to grow,
/// it takes megabytes of answers from a client that pipelines requests and
/// never reads, and a hundred such clients exhaust the machine's socket
/// memory; capped, such a client stalls after a few answers and the send
/// timeout cuts it. Trusted proxies (a Caddy on loopback) keep the default.
const SEND_BUFFER: u32 = 64 * 1024;

fn cap_send_buffer(stream: &tokio::net::TcpStream) {
    use std::os::fd::AsFd;
    // A second descriptor of the same socket: the option is the socket's.
    if let Ok(fd) = stream.as_fd().try_clone_to_owned() {
        let _ = tokio::net::TcpSocket::from_std_stream(std::net::TcpStream::from(fd)).set_send_buffer_size(SEND_BUFFER);
    }
}

/// Bytes of memory shared by the upload bodies, taken as they arrive.
struct Budget {
    max: usize,
    used: std::sync::atomic::AtomicUsize,
}

impl Budget {
    fn new(max: usize) -> Budget {
        Budget { max, used: std::sync::atomic::AtomicUsize::new(0) }
    }
}

/// Bytes one body holds of a [`Budget`]; given back when dropped.
struct Reserved {
    budget: Arc<Budget>,
    bytes: usize,
}

impl Reserved {
    /// `n` more bytes, if the budget has them.
    fn grow(&mut self, n: usize) -> bool {
        let taken = self.budget.used.fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
            used.checked_add(n).filter(|&total| total <= self.budget.max)
        });
        if taken.is_ok() {
            self.bytes += n;
        }
        taken.is_ok()
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// A form body to an upload path as it is read: until a file part's content
/// begins it is held to the limits of any form; from then on it holds an
/// upload slot (given back once the body is read) and takes its bytes from
/// the upload budget (given back with the request).
struct UploadRead {
    route: UploadRoute,
    watch: crate::multipart::FileWatch,
    client: ClientGroup,
    per_client: Arc<Occupancy>,
    slots: Arc<Semaphore>,
    /// Held while the files arrive.
    slot: Option<(crate::keyed::Held, OwnedSemaphorePermit)>,
    memory: Reserved,
    /// When the first file part began.
    since: Option<tokio::time::Instant>,
}

impl UploadRead {
    fn new(shared: &Shared, route: UploadRoute, watch: crate::multipart::FileWatch, client: ClientGroup) -> Self {
        UploadRead {
            route,
            watch,
            client,
            per_client: shared.uploaders.clone(),
            slots: shared.upload_slots.clone(),
            slot: None,
            memory: Reserved { budget: shared.upload_memory.clone(), bytes: 0 },
            since: None,
        }
    }

    /// Notes the body so far; the first time a file has begun, takes a slot
    /// (the client's own share first, so that its refusal costs no shared
    /// slot). 503 when none is free.
    fn arrived(&mut self, body: &[u8]) -> Result<(), Error> {
        if self.since.is_none() && self.watch.file_begun(body) {
            let slot = self
                .per_client
                .try_take(self.client)
                .and_then(|mine| self.slots.clone().try_acquire_owned().ok().map(|slot| (mine, slot)));
            if slot.is_none() {
                return Err(busy_uploading());
            }
            self.slot = slot;
            self.since = Some(tokio::time::Instant::now());
        }
        if self.since.is_some() && body.len() > self.memory.bytes && !self.memory.grow(body.len() - self.memory.bytes) {
            return Err(busy_uploading());
        }
        Ok(())
    }
}

fn busy_uploading() -> Error {
    Error::Unavailable { reason: "Too many uploads are in progress.", retry_after_secs: 5 }
}

/// Reads a body up to `max` bytes within `timeout`. A body to an upload path
/// (`upload`) gets the upload limits once its first file begins, and must
/// then arrive no slower than the minimum rate. Larger is
/// [`Body::TooLarge`] (read no further).
async fn read_body(
    body: Incoming,
    max: usize,
    timeout: Duration,
    mut upload: Option<&mut UploadRead>,
) -> Result<Body, Error> {
    let start = tokio::time::Instant::now();
    let mut body = body;
    let mut bytes = BytesMut::new();
    loop {
        // By when the next frame must come: within the body's time while
        // no file has begun; after, within the upload's time, and no later
        // than the moment the bytes so far no longer keep up with the
        // minimum rate.
        let until = match upload.as_deref() {
            Some(UploadRead { route, since: Some(since), .. }) => {
                let rate = route.min_rate;
                let due = rate.head_start
                    + Duration::from_secs_f64(bytes.len() as f64 / f64::from(rate.bytes_per_sec.max(1)));
                *since + route.body_timeout.min(due)
            }
            _ => start + timeout,
        };
        match tokio::time::timeout_at(until, body.frame()).await {
            Err(_) => return Err(Error::RequestTimeout),
            Ok(None) => {
                if let Some(upload) = upload.as_deref_mut() {
                    // The files have arrived: the slot is free for others.
                    upload.slot = None;
                }
                return Ok(Body::Bytes(bytes.freeze()));
            }
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    let largest = upload.as_deref().map_or(max, |u| u.route.max_body.max(max));
                    if bytes.len() + data.len() > largest {
                        return Ok(Body::TooLarge { limit: largest });
                    }
                    bytes.extend_from_slice(&data);
                    if let Some(upload) = upload.as_deref_mut() {
                        upload.arrived(&bytes)?;
                    }
                    // A form that has not begun a file keeps a form's limit.
                    let form_limit = upload.as_deref().is_none_or(|u| u.since.is_none());
                    if form_limit && bytes.len() > max {
                        return Ok(Body::TooLarge { limit: max });
                    }
                }
            }
            Ok(Some(Err(_))) => return Err(Error::Malformed("The body could not be read.".into())),
        }
    }
}

/// A connection's stream whose writes fail with `TimedOut` once the client
/// has taken no byte for `limit`: a reply waits that long for a reader that
/// stopped reading, then hyper drops the connection (and its slots).
struct StallGuard {
    stream: tokio::net::TcpStream,
    limit: Duration,
    /// Running while the last write attempt could not make progress.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Whether a write is waiting for the client now (seen from outside).
    stalled_now: Arc<AtomicBool>,
}

impl StallGuard {
    fn new(stream: tokio::net::TcpStream, limit: Duration) -> StallGuard {
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
