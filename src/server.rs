//! The connection layer: accepts HTTP/1.1 connections, turns each request
//! into an [`crate::http::Request`], calls the handler, and writes its
//! [`crate::http::Response`].
//!
//! Connections are served by hyper on a tokio runtime of one thread per
//! core: an idle or slow connection costs a few kilobytes and no thread, so
//! no connection waits behind another (see docs/HTTP-LAYER.md for why
//! tiny_http was replaced). Handlers stay plain synchronous functions, and
//! run on the thread that read their request, once the gate lets them in
//! (`gate.rs`: fair between clients, quiet ones first; free when nobody
//! waits), with a handler state lent for the request (`handlers.rs`: a read
//! connection, say). No request is handed to another thread and back,
//! which cost a third of polld's CPU (docs/DECISIONS.md, "The request
//! path"), but those that wait on something else than the CPU
//! ([`ServerConfig::inline`] says which: a write that waits for its commit
//! on its thread, an upload, every request on a remote database): they run
//! on threads of their own (`anonpoll-wait`), behind a gate of their own.
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
//!   newcomers at a time; more are closed at once). Requests waiting at
//!   the gate are capped, in all and per client, and past the cap the
//!   answer is 503 at once;
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
//! - a panicking handler answers 500, and its state is dropped for a fresh
//!   one;
//! - a deferred response ([`Response::after`]) is completed on the
//!   connection task once its write is committed, without a thread; how many
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
//!   connections are closed.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use anyhow::anyhow;
use bytes::BytesMut;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use crate::client::{ClientGroup, TrustedProxies, client_ip};
use crate::error::Error;
use crate::http::{Body, Method, Request, Response};

mod body;
mod crowd;
mod gate;
mod handlers;
mod listener;
mod stall;
use crate::keyed::Occupancy;
use body::{OutBody, to_hyper};
use crowd::Crowd;
pub use gate::{BUSY_FROM, FORGOTTEN_WITHIN, HALF_LIFE};
use gate::{Gate, Pool, Refused};
use handlers::{Handler, Handlers};
pub use listener::Address;
use listener::{Accepting, Listener, Peer, Stream};
use stall::StallGuard;

/// Headers every response carries unless the handler set its own value.
/// (Lower case: hyper sends every name so, and takes these without a copy.)
const BASELINE_HEADERS: [(&str, &str); 5] = [
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("cache-control", "no-store"),
    ("content-security-policy", "default-src 'none'; frame-ancestors 'none'"),
    ("cross-origin-resource-policy", "same-origin"),
];

#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Requests handled at once on the threads that may wait: those not
    /// [`ServerConfig::inline`], and all when [`ServerConfig::blocking`].
    pub workers: usize,
    /// Whether every handler waits on the network (a PostgreSQL database):
    /// all then run on the threads that may wait, `workers` at once.
    pub blocking: bool,
    /// Whether a request may run on the thread that read it (method, path):
    /// its handler never waits long on anything but the CPU (a page, a read
    /// of a local database, a vote whose commit its answer waits for on the
    /// connection). Any other (one that waits on the writer's commit on its
    /// thread, say) runs on a thread that may wait, `workers` at once.
    pub inline: fn(Method, &str) -> bool,
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
            blocking: false,
            inline: reads_inline,
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

/// Threads a core for busy clients' requests while others are about: a
/// few, since the kernel shares a core by the summed weights of its
/// threads, and 24 at nice 10 outweigh two at nice 0.
const BUSY_PER_CORE: usize = 2;

/// How much lower the busy clients' threads run than the process: at nice
/// 10 a thread weighs about a tenth of one at nice 0 (the kernel's table),
/// so the threads that read every client's requests get the CPU first, and
/// the busy ones share what is left; alone, they have every core.
pub const BUSY_NICE: i32 = 10;

/// Lowers this thread's priority by `by` nice steps (any thread may lower
/// its own; raising it back needs a privilege polld may not have, hence
/// threads of their own). A refusal (a sandbox without setpriority) leaves
/// it as it was: everything works, only without the others' head start.
fn lower_own_priority(by: i32) {
    static SAID: AtomicBool = AtomicBool::new(false);
    crate::priority::shift_own_or_say(by, &SAID, |e| {
        format!("polld: cannot lower the busy clients' threads' priority ({e}); other clients get no head start")
    });
}

/// The default [`ServerConfig::inline`]: requests that only read.
pub fn reads_inline(method: Method, _path: &str) -> bool {
    matches!(method, Method::Get | Method::Head | Method::Options)
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
const _: () = assert!(CONN_BUF < crate::http::STREAM_PIECE);

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
    listener: Listener,
    address: Address,
    config: ServerConfig,
    shutdown: Shutdown,
}

/// The two gates requests pass, by where they run.
#[derive(Clone)]
struct Gates {
    /// Requests that run on the thread that read them.
    inline: Arc<Gate>,
    /// Requests that run on a thread that may wait.
    blocking: Arc<Gate>,
}

/// What every connection task shares.
struct Shared {
    /// Who runs next (fair between clients, quiet ones first).
    gates: Gates,
    /// Where the requests that wait run (its blocking threads).
    waiting: tokio::runtime::Handle,
    /// Where a busy client's requests run while others are about.
    busy: tokio::runtime::Handle,
    handlers: Arc<Handlers>,
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
    /// Listens on `listen`: `HOST:PORT`, or `unix:PATH` (`listener.rs`).
    pub fn bind(listen: &str, config: ServerConfig) -> anyhow::Result<Server> {
        let (listener, address) = Listener::bind(listen)?;
        Ok(Server { listener, address, config, shutdown: Shutdown { notify: Arc::new(Notify::new()) } })
    }

    /// Where the server listens.
    pub fn address(&self) -> &Address {
        &self.address
    }

    pub fn shutdown_handle(&self) -> Shutdown {
        self.shutdown.clone()
    }

    /// Serves until [`Shutdown::trigger`]. `make_handler` makes a handler's
    /// state (its own read connection, say): once at start, then whenever
    /// more requests run at once than states exist, and again after a panic
    /// (`server/handlers.rs`).
    pub fn run<F, H>(self, make_handler: F) -> anyhow::Result<()>
    where
        F: Fn() -> anyhow::Result<H> + Send + Sync + 'static,
        H: FnMut(&Request) -> Response + Send + 'static,
    {
        let handlers = Arc::new(Handlers::new(Box::new(move || Ok(Box::new(make_handler()?) as Handler)))?);
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        // Fair between clients: a quarter of each queue at
        // most per client group, the groups served in turn (gate.rs). One
        // gate for the requests that run on the threads that read them, one
        // per core; one for those that block, `workers` at once.
        // A busy client's requests run apart, on BUSY_PER_CORE threads a
        // core at a lower priority, while other clients are about.
        let apart = BUSY_PER_CORE * cores;
        // Waiting requests: 64 per `--workers` (2,048 at the default), a
        // quarter of them per client group, so that a class behind one
        // address can send 200 at once; the connection cap bounds them too.
        let capacity = 64 * self.config.workers.max(4);
        let gates = {
            let gate = |permits: usize| Gate::new(permits, apart, capacity, capacity / 4);
            Gates { inline: gate(cores)?, blocking: gate(self.config.workers.max(1))? }
        };
        let uploads = self.config.uploads.map_or(0, |u| u.concurrent);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cores)
            // The blocking threads read the pieces of streamed bodies, at
            // most STREAM_READS at once (body.rs). Left to tokio's default
            // (512), a piece read that ends while the next is queued starts
            // another thread: 14-16 of them for 32 slow readers, each
            // keeping what its allocator freed.
            .max_blocking_threads(body::STREAM_READS)
            .thread_name("anonpoll-io")
            .enable_all()
            .build()?;
        // The requests that wait (not `inline`, uploads, every request on a
        // remote database) run on threads of their own, so that they
        // neither take the piece reads' threads nor make tokio start more
        // of them. Only its blocking pool is used: nothing drives it.
        let waiting = tokio::runtime::Builder::new_current_thread()
            .max_blocking_threads(self.config.workers.max(1) + uploads)
            .thread_name("anonpoll-wait")
            .build()?;
        // A busy client's requests, while others are about: apart, on
        // threads that lower their own priority as they start, so that the
        // kernel gives the other clients' threads the CPU first.
        let busy = tokio::runtime::Builder::new_current_thread()
            .max_blocking_threads(apart)
            .thread_name("anonpoll-busy")
            .on_thread_start(|| lower_own_priority(BUSY_NICE))
            .build()?;
        let shared = Arc::new(Shared {
            gates: gates.clone(),
            waiting: waiting.handle().clone(),
            busy: busy.handle().clone(),
            handlers,
            config: self.config.clone(),
            upload_slots: Arc::new(Semaphore::new(uploads)),
            upload_memory: Arc::new(Budget::new(self.config.uploads.map_or(0, |u| u.memory))),
            uploaders: Occupancy::new(self.config.uploads.map_or(1, |u| u.per_client))?,
            connections: Crowd::new(self.config.max_connections_per_client, self.config.max_connections)?,
            warned_forwarded: AtomicBool::new(false),
        });
        // An idle server forgets its clients' CPU time all the same.
        runtime.spawn(Gate::sweep_for_ever([gates.inline.clone(), gates.blocking.clone()]));
        let served = runtime
            .block_on(async { accept_loop(self.listener.into_async()?, shared, self.shutdown.notify.clone()).await });
        if let Address::Unix(path) = &self.address {
            let _ = std::fs::remove_file(path);
        }
        gates.inline.close();
        gates.blocking.close();
        // Connections still open after the grace period are dropped here.
        runtime.shutdown_timeout(Duration::from_secs(1));
        waiting.shutdown_timeout(Duration::from_secs(1));
        busy.shutdown_timeout(Duration::from_secs(1));
        served
    }
}

async fn accept_loop(listener: Accepting, shared: Arc<Shared>, stop: Arc<Notify>) -> anyhow::Result<()> {
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
                let member = match peer {
                    Peer::Tcp(addr) if !shared.config.trusted.trusts(addr.ip()) => {
                        match shared.connections.admit(ClientGroup::of(addr.ip())) {
                            Some(member) => Some(member),
                            None => {
                                drop(stream); // under pressure, over this client's cap: close at once
                                continue;
                            }
                        }
                    }
                    _ => None,
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
                if let (Some(_), Stream::Tcp(tcp)) = (&member, &stream) {
                    cap_send_buffer(tcp);
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

/// Reads one request (within bounds), answers it once the gate lets it in.
async fn serve(
    req: hyper::Request<Incoming>,
    peer: Peer,
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
    // A socket's peer is the proxy in front (listener.rs); a TCP peer is
    // trusted as --trusted-proxy names it.
    let (peer_ip, trusted) = match peer {
        Peer::Tcp(addr) => (addr.ip(), config.trusted.trusts(addr.ip())),
        Peer::Unix => (IpAddr::V4(Ipv4Addr::LOCALHOST), true),
    };
    if forwarded.is_some() && !trusted && !shared.warned_forwarded.swap(true, Ordering::Relaxed) {
        // Once per start, and without the address: a proxy in front that is
        // not named would make every client one client for the limits.
        eprintln!(
            "polld: a request carried X-Forwarded-For from a peer that is not a trusted proxy, so the header \
             was ignored; if polld runs behind a proxy, name it with --trusted-proxy (POLL_TRUSTED_PROXIES)"
        );
    }
    let client = client_ip(peer_ip, forwarded.as_deref(), trusted);
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
    let group = ClientGroup::of(client);
    let inline = !config.blocking && (config.inline)(request.method, &request.path);
    let mut response = if upload.is_some() {
        // An upload's media are decoded: long work, on a thread that may wait,
        // bounded by the upload slots rather than a gate, so that it holds
        // none of the permits of the other requests; its CPU time counts
        // for its client all the same.
        let (response, cpu) = on_thread_of(&shared.waiting, &shared, request).await;
        if config.blocking { &shared.gates.blocking } else { &shared.gates.inline }.charge(group, cpu);
        response
    } else {
        let gate = if inline { &shared.gates.inline } else { &shared.gates.blocking };
        match gate.enter(group).await {
            Ok(permit) => {
                // On this thread, as it read the request; a busy client's
                // apart; else on a thread that may wait, which it holds
                // while it waits.
                let (response, cpu) = match (permit.pool(), inline) {
                    (Pool::Apart, _) => on_thread_of(&shared.busy, &shared, request).await,
                    (Pool::Main, true) => shared.handlers.answer(&request),
                    (Pool::Main, false) => on_thread_of(&shared.waiting, &shared, request).await,
                };
                permit.done(cpu);
                response
            }
            Err(Refused::Full) => {
                Response::from_error(&Error::Unavailable { reason: "The server is busy.", retry_after_secs: 1 })
            }
            Err(Refused::Closed) => {
                Response::from_error(&Error::Unavailable { reason: "The server is stopping.", retry_after_secs: 5 })
            }
        }
    };
    // A write's answer waits for its commit here, on the connection, so no
    // thread waits and a commit group is not capped by the number of
    // requests running. If the client hangs up, hyper drops this future;
    // the write is committed all the same.
    while let Some(pending) = response.take_deferred() {
        response = pending.resolve().await;
    }
    Ok(to_hyper(response))
}

/// Answers `request` on one of the blocking threads of `pool` (those for
/// requests that wait, or for busy clients); with its CPU time.
async fn on_thread_of(pool: &tokio::runtime::Handle, shared: &Arc<Shared>, request: Request) -> (Response, Duration) {
    let handlers = shared.handlers.clone();
    pool.spawn_blocking(move || handlers.answer(&request)).await.unwrap_or_else(|_| {
        (Response::from_error(&Error::internal(anyhow!("a blocking request was lost"))), Duration::ZERO)
    })
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
mod tests;
