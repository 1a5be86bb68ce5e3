//! A deliberately small raw HTTP/1.1 client over [`TcpStream`] (or a Unix
//! socket, for an address `unix:PATH`, as polld's `--listen`), so tests
//! control every byte that goes on the wire: one request per connection
//! (`Connection: close`), Content-Length and chunked responses, `HEAD`,
//! interim 1xx answers skipped, case-insensitive header lookup. A server that
//! answers early (413) and closes is read, not treated as a failed write.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;

use serde_json::Value;

use super::{IO_TIMEOUT, find_bytes};

pub struct Request {
    addr: String,
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
}

impl Request {
    pub fn new(addr: &str, method: &str, path: &str) -> Request {
        Request {
            addr: addr.to_string(),
            method: method.to_string(),
            path: path.to_string(),
            headers: Vec::new(),
            body: None,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    pub fn bearer(self, token: &str) -> Self {
        self.header("Authorization", &format!("Bearer {token}"))
    }

    pub fn xff(self, value: &str) -> Self {
        self.header("X-Forwarded-For", value)
    }

    pub fn body(mut self, body: Vec<u8>) -> Self {
        self.body = Some(body);
        self
    }

    /// A form's fields as a browser sends them: the body urlencoded, with
    /// `Content-Type: application/x-www-form-urlencoded`.
    pub fn form<K: AsRef<str>, V: AsRef<str>>(self, fields: &[(K, V)]) -> Self {
        let mut body = form_urlencoded::Serializer::new(String::new());
        for (name, value) in fields {
            body.append_pair(name.as_ref(), value.as_ref());
        }
        self.header("Content-Type", "application/x-www-form-urlencoded").body(body.finish().into_bytes())
    }

    /// JSON body with `Content-Type: application/json` (unless one was set).
    pub fn json(mut self, value: &Value) -> Self {
        if !self.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type")) {
            self = self.header("Content-Type", "application/json");
        }
        self.body(serde_json::to_vec(value).expect("serialize json"))
    }

    /// The exact bytes this request puts on the wire.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n", self.method, self.path, self.addr)
            .into_bytes();
        let has = |name: &str| self.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
        for (k, v) in &self.headers {
            out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
        }
        if let Some(body) = &self.body
            && !has("content-length")
            && !has("transfer-encoding")
        {
            out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        if let Some(body) = &self.body {
            out.extend_from_slice(body);
        }
        out
    }

    pub fn send(self) -> Response {
        let bytes = self.to_bytes();
        let head_only = self.method.eq_ignore_ascii_case("HEAD");
        let mut resp = exchange(&self.addr, &bytes, head_only);
        resp.request = format!("{} {}", self.method, self.path);
        resp
    }
}

/// Send arbitrary bytes and read one response.
pub fn send_raw(addr: &str, bytes: &[u8]) -> Response {
    exchange(addr, bytes, false)
}

fn exchange(addr: &str, bytes: &[u8], head_only: bool) -> Response {
    let mut stream: Box<dyn Duplex> = match addr.strip_prefix("unix:") {
        Some(path) => {
            let stream =
                std::os::unix::net::UnixStream::connect(path).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
            stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
            stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
            Box::new(stream)
        }
        None => {
            let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
            stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
            stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
            stream.set_nodelay(true).unwrap();
            Box::new(stream)
        }
    };
    // A server may answer (e.g. 413) and close before reading everything we
    // send; a failed write is not an error as long as a response arrives.
    let write_error = stream.write_all(bytes).and_then(|_| stream.flush()).err();
    let mut conn = Conn { stream, buf: Vec::new(), eof: false };
    match read_response(&mut conn, head_only) {
        Ok(resp) => resp,
        Err(e) => panic!(
            "reading response failed: {e} (write error: {write_error:?}); request head: {:?}; received so far: {:?}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(300)]),
            String::from_utf8_lossy(&conn.buf[..conn.buf.len().min(2000)])
        ),
    }
}

/// A connection of either kind.
trait Duplex: Read + Write {}
impl<T: Read + Write> Duplex for T {}

struct Conn {
    stream: Box<dyn Duplex>,
    buf: Vec<u8>,
    eof: bool,
}

impl Conn {
    /// Read more bytes; Ok(false) on EOF (or reset after data).
    fn fill(&mut self) -> Result<bool, String> {
        if self.eof {
            return Ok(false);
        }
        let mut chunk = [0u8; 16384];
        match self.stream.read(&mut chunk) {
            Ok(0) => {
                self.eof = true;
                Ok(false)
            }
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(true)
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => Ok(true),
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::TimedOut => {
                Err(format!("timed out after {IO_TIMEOUT:?}"))
            }
            Err(e) => {
                // Connection reset after the server answered early: treat as EOF.
                self.eof = true;
                if self.buf.is_empty() { Err(format!("read error: {e}")) } else { Ok(false) }
            }
        }
    }

    /// Index just past the first occurrence of `pat`, reading as needed.
    fn find(&mut self, pat: &[u8], from: usize) -> Result<usize, String> {
        loop {
            if let Some(pos) = find_bytes(&self.buf[from.min(self.buf.len())..], pat) {
                return Ok(from + pos + pat.len());
            }
            if !self.fill()? {
                return Err(format!("connection closed before {:?} was seen", String::from_utf8_lossy(pat)));
            }
        }
    }

    fn ensure(&mut self, len: usize) -> Result<(), String> {
        while self.buf.len() < len {
            if !self.fill()? {
                return Err(format!("connection closed after {} of {} bytes", self.buf.len(), len));
            }
        }
        Ok(())
    }
}

fn read_response(conn: &mut Conn, head_only: bool) -> Result<Response, String> {
    loop {
        let head_end = conn.find(b"\r\n\r\n", 0)?;
        let mut resp = parse_head(&conn.buf[..head_end - 4])?;
        conn.buf.drain(..head_end);
        if (100..200).contains(&resp.status) {
            continue; // 100 Continue and friends
        }
        let status = resp.status;
        if head_only || status == 204 || status == 304 {
            return Ok(resp);
        }
        let chunked =
            resp.header("transfer-encoding").map(|v| v.to_ascii_lowercase().contains("chunked")).unwrap_or(false);
        if chunked {
            let mut body = Vec::new();
            loop {
                let line_end = conn.find(b"\r\n", 0)?;
                let size_line = String::from_utf8_lossy(&conn.buf[..line_end - 2]).into_owned();
                let size_hex = size_line.split(';').next().unwrap_or("").trim();
                let size =
                    usize::from_str_radix(size_hex, 16).map_err(|_| format!("bad chunk size line {size_line:?}"))?;
                conn.buf.drain(..line_end);
                if size == 0 {
                    // Trailers (if any) end with an empty line.
                    loop {
                        let end = conn.find(b"\r\n", 0)?;
                        let empty = end == 2;
                        conn.buf.drain(..end);
                        if empty {
                            break;
                        }
                    }
                    break;
                }
                conn.ensure(size + 2)?;
                body.extend_from_slice(&conn.buf[..size]);
                conn.buf.drain(..size + 2);
            }
            resp.body = body;
        } else if let Some(len) = resp.header("content-length") {
            let len: usize = len.parse().map_err(|_| format!("bad Content-Length {len:?}"))?;
            conn.ensure(len)?;
            resp.body = conn.buf[..len].to_vec();
        } else {
            while conn.fill()? {}
            resp.body = std::mem::take(&mut conn.buf);
        }
        return Ok(resp);
    }
}

/// A response's head (status line and header lines, without the blank
/// line that ends it), as a [`Response`] with no body yet.
pub fn parse_head(head: &[u8]) -> Result<Response, String> {
    let head = String::from_utf8_lossy(head);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default().to_string();
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    if !version.starts_with("HTTP/1.") {
        return Err(format!("bad status line {status_line:?}"));
    }
    let status: u16 =
        parts.next().and_then(|s| s.parse().ok()).ok_or_else(|| format!("bad status line {status_line:?}"))?;
    let reason = parts.next().unwrap_or_default().to_string();
    let mut headers = Vec::new();
    for line in lines {
        let (k, v) = line.split_once(':').ok_or_else(|| format!("bad header line {line:?}"))?;
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok(Response { request: String::new(), status, reason, headers, body: Vec::new() })
}

#[derive(Debug, Clone)]
pub struct Response {
    /// "METHOD /path" of the request, for messages.
    pub request: String,
    pub status: u16,
    pub reason: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// First value of a header (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn header_all(&self, name: &str) -> Vec<&str> {
        self.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect()
    }

    pub fn has_header(&self, name: &str) -> bool {
        self.header(name).is_some()
    }

    /// Whether the server said it closes the connection after this answer.
    pub fn closes(&self) -> bool {
        self.header("connection").is_some_and(|v| v.to_ascii_lowercase().contains("close"))
    }

    /// Media type of Content-Type, lower-cased, without parameters.
    pub fn media_type(&self) -> Option<String> {
        self.header("content-type").map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.describe()))
    }

    /// Human-readable summary for assertion messages.
    pub fn describe(&self) -> String {
        let mut out = format!("[{}] -> {} {}\n", self.request, self.status, self.reason);
        for (k, v) in &self.headers {
            out.push_str(&format!("  {k}: {v}\n"));
        }
        let text = self.text();
        let cut: String = text.chars().take(2000).collect();
        out.push_str(&format!("  body: {cut}"));
        out
    }

    pub fn assert_status(&self, status: u16) -> &Self {
        assert_eq!(self.status, status, "unexpected status: {}", self.describe());
        self
    }

    pub fn assert_no_cookie(&self) {
        assert!(
            !self.has_header("set-cookie") && !self.has_header("set-cookie2"),
            "response sets a cookie: {}",
            self.describe()
        );
    }
}
