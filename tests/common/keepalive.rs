//! A keep-alive HTTP/1.1 client for the connection tests: it never panics
//! and never waits past a deadline, so a test against a misbehaving server
//! fails with what it saw instead of hanging. Probes (a fresh connection,
//! one `GET /api`) measure what a well-behaved client gets meanwhile.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::{Response, find_bytes, parse_head};

/// The answer time every well-behaved client is promised.
pub const PROMPT: Duration = Duration::from_secs(2);

#[derive(Debug)]
pub enum Failure {
    /// Nothing (or not a whole response) before the deadline.
    Timeout { received: usize },
    /// The server closed (or reset) the connection before a whole response.
    Closed { received: usize },
    /// Anything else: connect error, garbage on the wire.
    Other(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Timeout { received } => write!(f, "no whole response in time ({received} bytes received)"),
            Failure::Closed { received } => write!(f, "connection closed after {received} bytes"),
            Failure::Other(e) => write!(f, "{e}"),
        }
    }
}

pub struct Conn {
    pub stream: TcpStream,
    pub buf: Vec<u8>,
}

pub fn get_api(keep_alive: bool) -> Vec<u8> {
    let connection = if keep_alive { "" } else { "Connection: close\r\n" };
    format!("GET /api HTTP/1.1\r\nHost: polld\r\n{connection}\r\n").into_bytes()
}

impl Conn {
    pub fn connect(addr: &str) -> Result<Conn, Failure> {
        let addr = addr.parse().map_err(|e| Failure::Other(format!("bad address {addr}: {e}")))?;
        let stream = TcpStream::connect_timeout(&addr, PROMPT).map_err(|e| Failure::Other(format!("connect: {e}")))?;
        stream.set_nodelay(true).map_err(|e| Failure::Other(e.to_string()))?;
        stream.set_write_timeout(Some(Duration::from_secs(5))).map_err(|e| Failure::Other(e.to_string()))?;
        Ok(Conn { stream, buf: Vec::new() })
    }

    pub fn send(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        self.stream.write_all(bytes).map_err(|e| Failure::Other(format!("write: {e}")))
    }

    /// Reads more bytes; `Ok(false)` on EOF or reset.
    pub fn fill(&mut self, deadline: Instant) -> Result<bool, Failure> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Failure::Timeout { received: self.buf.len() });
        }
        self.stream.set_read_timeout(Some(left)).map_err(|e| Failure::Other(e.to_string()))?;
        let mut chunk = [0u8; 65536];
        match self.stream.read(&mut chunk) {
            Ok(0) => Ok(false),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(true)
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => Ok(true),
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::TimedOut => {
                Err(Failure::Timeout { received: self.buf.len() })
            }
            Err(_) => Ok(false),
        }
    }

    /// One whole response (status line, headers, Content-Length body).
    pub fn response(&mut self, deadline: Instant) -> Result<Response, Failure> {
        let head_end = loop {
            if let Some(pos) = find_bytes(&self.buf, b"\r\n\r\n") {
                break pos + 4;
            }
            if !self.fill(deadline)? {
                return Err(Failure::Closed { received: self.buf.len() });
            }
        };
        let mut resp = parse_head(&self.buf[..head_end - 4]).map_err(Failure::Other)?;
        let len = match resp.header("content-length") {
            Some(v) => v.parse::<usize>().map_err(|_| Failure::Other(format!("bad Content-Length {v:?}")))?,
            None if resp.header("transfer-encoding").is_some() => {
                return Err(Failure::Other("chunked responses are not expected from polld".into()));
            }
            None => 0,
        };
        while self.buf.len() < head_end + len {
            if !self.fill(deadline)? {
                return Err(Failure::Closed { received: self.buf.len() });
            }
        }
        resp.body = self.buf[head_end..head_end + len].to_vec();
        self.buf.drain(..head_end + len);
        Ok(resp)
    }
}

/// A fresh connection, one `GET /api`, answered 200 by `deadline`.
pub fn probe(addr: &str, deadline: Instant) -> Result<Duration, String> {
    let start = Instant::now();
    let mut conn = Conn::connect(addr).map_err(|f| format!("{f}"))?;
    conn.send(&get_api(false)).map_err(|f| format!("{f}"))?;
    match conn.response(deadline) {
        Ok(r) if r.status == 200 && !r.body.is_empty() => Ok(start.elapsed()),
        Ok(r) => Err(format!("status {} with {} body bytes", r.status, r.body.len())),
        Err(f) => Err(format!("{f} after {:?}", start.elapsed())),
    }
}

/// `n` probes in a row, each with its own [`PROMPT`] deadline.
pub fn probes(addr: &str, n: usize) -> Vec<Result<Duration, String>> {
    (0..n).map(|_| probe(addr, Instant::now() + PROMPT)).collect()
}

pub fn assert_probes_ok(what: &str, results: &[Result<Duration, String>]) {
    let ok = results.iter().filter(|r| r.is_ok()).count();
    let slowest = results.iter().filter_map(|r| r.as_ref().ok()).max();
    eprintln!("{what}: {ok}/{} probes answered within {PROMPT:?} (slowest {slowest:?}): {results:?}", results.len());
    assert_eq!(ok, results.len(), "{what}: probes not answered within {PROMPT:?}: {results:?}");
}
