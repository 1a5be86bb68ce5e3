//! The connection layer: accepts HTTP/1.1 connections and runs a fixed pool of
//! worker threads that turn each request into an [`http::Request`], call the
//! handler, and write its [`http::Response`].
//!
//! Promises:
//! - a body is read only up to the limit; a declared or actual larger body is
//!   handed to the handler as `Body::TooLarge` without being read whole;
//! - a panicking handler answers 500 and its worker carries on with a fresh
//!   handler (and so fresh per-worker state);
//! - every response carries the baseline security headers and never a cookie;
//! - the client address is resolved once (see `client.rs`) and never logged;
//! - on shutdown, workers finish the request in hand and stop.
//!
//! This is the only module that knows the HTTP implementation (tiny_http).

use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, anyhow};

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
    pub workers: usize,
    pub trusted: TrustedProxies,
    pub max_body: usize,
}

/// Stops a running server from any thread (e.g. a signal handler).
#[derive(Clone)]
pub struct Shutdown {
    stop: Arc<AtomicBool>,
    http: Arc<tiny_http::Server>,
    workers: usize,
}

impl Shutdown {
    pub fn trigger(&self) {
        self.stop.store(true, Ordering::SeqCst);
        for _ in 0..self.workers {
            self.http.unblock();
        }
    }
}

pub struct Server {
    http: Arc<tiny_http::Server>,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    config: ServerConfig,
}

impl Server {
    pub fn bind(listen: &str, config: ServerConfig) -> anyhow::Result<Server> {
        let http = tiny_http::Server::http(listen).map_err(|e| anyhow!("cannot listen on {listen}: {e}"))?;
        let addr = http.server_addr().to_ip().with_context(|| format!("{listen} is not an IP address"))?;
        Ok(Server { http: Arc::new(http), addr, stop: Arc::new(AtomicBool::new(false)), config })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn shutdown_handle(&self) -> Shutdown {
        Shutdown { stop: self.stop.clone(), http: self.http.clone(), workers: self.config.workers.max(1) }
    }

    /// Serves until [`Shutdown::trigger`]. `make_handler` is called once per
    /// worker (and again after a panic) so each worker owns its state.
    pub fn run<F, H>(self, make_handler: F) -> anyhow::Result<()>
    where
        F: Fn() -> anyhow::Result<H> + Send + Sync + 'static,
        H: FnMut(&Request) -> Response,
    {
        let make_handler = Arc::new(make_handler);
        let config = Arc::new(self.config.clone());
        let mut threads = Vec::new();
        for i in 0..self.config.workers.max(1) {
            let http = self.http.clone();
            let stop = self.stop.clone();
            let make = make_handler.clone();
            let config = config.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("anonpoll-worker-{i}"))
                    .spawn(move || worker(&http, &stop, &config, &*make))?,
            );
        }
        let mut failed = None;
        for t in threads {
            match t.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => failed = Some(e),
                Err(_) => failed = Some(anyhow!("a worker thread panicked")),
            }
        }
        failed.map_or(Ok(()), Err)
    }
}

fn worker<F, H>(http: &tiny_http::Server, stop: &AtomicBool, config: &ServerConfig, make: &F) -> anyhow::Result<()>
where
    F: Fn() -> anyhow::Result<H>,
    H: FnMut(&Request) -> Response,
{
    let mut handler = make()?;
    while !stop.load(Ordering::SeqCst) {
        let mut rq = match http.recv_timeout(Duration::from_millis(500)) {
            Ok(Some(rq)) => rq,
            Ok(None) => continue,
            Err(_) => break,
        };
        let Some(request) = read_request(&mut rq, config) else {
            continue;
        };
        let response = match catch_unwind(AssertUnwindSafe(|| handler(&request))) {
            Ok(r) => r,
            Err(_) => {
                // The panic message went to stderr through the default hook.
                // Start over with fresh state, since the old may be half-changed.
                handler = make()?;
                Response::from_error(&Error::internal(anyhow!("a request handler panicked")))
            }
        };
        send(rq, response);
    }
    Ok(())
}

/// Builds the handler's request, reading at most `max_body` bytes of body.
/// `None` if the client went away while sending the body.
fn read_request(rq: &mut tiny_http::Request, config: &ServerConfig) -> Option<Request> {
    let peer = rq.remote_addr().map_or(IpAddr::V4(Ipv4Addr::LOCALHOST), SocketAddr::ip);
    let headers: Vec<(String, String)> = rq
        .headers()
        .iter()
        .map(|h| (h.field.as_str().as_str().to_ascii_lowercase(), h.value.as_str().to_owned()))
        .collect();
    let forwarded: Vec<&str> =
        headers.iter().filter(|(n, _)| n == "x-forwarded-for").map(|(_, v)| v.as_str()).collect();
    let forwarded = (!forwarded.is_empty()).then(|| forwarded.join(","));
    let client = client_ip(peer, forwarded.as_deref(), &config.trusted);
    let (path, query) = match rq.url().split_once('?') {
        Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
        None => (rq.url().to_owned(), None),
    };
    let method = Method::parse(rq.method().as_str());
    let body = if rq.body_length().is_some_and(|n| n > config.max_body) {
        Body::TooLarge { limit: config.max_body }
    } else {
        let mut buf = Vec::new();
        let limit = u64::try_from(config.max_body).unwrap_or(u64::MAX).saturating_add(1);
        match rq.as_reader().take(limit).read_to_end(&mut buf) {
            Ok(_) if buf.len() > config.max_body => Body::TooLarge { limit: config.max_body },
            Ok(_) => Body::Bytes(buf),
            Err(_) => return None,
        }
    };
    Some(Request { method, path, query, headers, body, client })
}

fn send(rq: tiny_http::Request, mut response: Response) {
    for (name, value) in BASELINE_HEADERS {
        if response.header(name).is_none() {
            response.headers.push((name.to_owned(), value.to_owned()));
        }
    }
    // Defence in depth: no code path sets a cookie, and none may slip through.
    response.headers.retain(|(n, _)| !n.eq_ignore_ascii_case("set-cookie"));
    let headers: Vec<tiny_http::Header> = response
        .headers
        .iter()
        .filter_map(|(n, v)| tiny_http::Header::from_bytes(n.as_bytes(), v.as_bytes()).ok())
        .collect();
    let len = response.body.len();
    let reply = tiny_http::Response::new(
        tiny_http::StatusCode(response.status),
        headers,
        std::io::Cursor::new(response.body),
        Some(len),
        None,
    );
    // A client that hung up needs no answer.
    let _ = rq.respond(reply);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
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
        let config = ServerConfig { workers: 1, trusted: TrustedProxies::loopback(), max_body: 1024 };
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
            assert!(ok.contains("X-Content-Type-Options: nosniff"), "{ok}");
        }
        stop.trigger();
        t.join().unwrap().unwrap();
    }
}
