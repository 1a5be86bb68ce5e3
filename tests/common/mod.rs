//! Test harness for the anonpoll integration tests.
//!
//! * [`Server`] starts a real `polld` on a random loopback port in its own
//!   temporary directory, drains its stderr/stdout into a shared buffer and
//!   kills it on drop.
//! * A deliberately small raw HTTP/1.1 client over [`TcpStream`] so tests
//!   control every byte that goes on the wire (`Connection: close`,
//!   Content-Length and chunked responses, case-insensitive header lookup).
//! * JSON builders (`valid_poll_json`), RFC 9457 problem assertions, date
//!   helpers, and a scanner over every `anonpoll.sqlite3*` file.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub mod hostile;
pub mod media;

/// Largest accepted JSON body (256 KiB).
pub const BODY_LIMIT: usize = 262_144;
/// File name of the database inside a test's data directory.
pub const DB_NAME: &str = "anonpoll.sqlite3";
/// How long a single HTTP exchange may take before the test fails.
pub const IO_TIMEOUT: Duration = Duration::from_secs(15);

static CLIENT_SEQ: AtomicU32 = AtomicU32::new(1);

// ---------------------------------------------------------------------------
// Server process
// ---------------------------------------------------------------------------

#[derive(Default)]
pub struct ServerBuilder {
    base_url: Option<String>,
    trusted_proxies: Vec<String>,
    dir: Option<tempfile::TempDir>,
    args: Vec<String>,
    polld_default_trust: bool,
}

impl ServerBuilder {
    /// Pass `--base-url URL`.
    pub fn base_url(mut self, url: &str) -> Self {
        self.base_url = Some(url.to_string());
        self
    }

    /// Pass `--trusted-proxy CIDR` (may be repeated).
    pub fn trusted_proxy(mut self, cidr: &str) -> Self {
        self.trusted_proxies.push(cidr.to_string());
        self
    }

    /// Trust no proxy, as polld does by default, instead of the harness's
    /// loopback.
    pub fn polld_default_trust(mut self) -> Self {
        self.polld_default_trust = true;
        self
    }

    /// Pass any other command-line argument to polld.
    pub fn arg(mut self, arg: &str) -> Self {
        self.args.push(arg.to_string());
        self
    }

    /// Reuse an existing data directory (e.g. to restart on the same DB).
    pub fn in_dir(mut self, dir: tempfile::TempDir) -> Self {
        self.dir = Some(dir);
        self
    }

    pub fn start(self) -> Server {
        let dir = self.dir.unwrap_or_else(|| tempfile::tempdir().expect("create tempdir"));
        let db = dir.path().join(DB_NAME);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_polld"));
        cmd.arg("--db").arg(&db).arg("--listen").arg("127.0.0.1:0");
        if let Some(url) = &self.base_url {
            cmd.arg("--base-url").arg(url);
        }
        for cidr in &self.trusted_proxies {
            cmd.arg("--trusted-proxy").arg(cidr);
        }
        // The tests' clients are told apart by X-Forwarded-For from loopback,
        // as behind the shipped Caddy (whose unit trusts loopback).
        if self.trusted_proxies.is_empty() && !self.polld_default_trust {
            cmd.args(["--trusted-proxy", "127.0.0.1/8", "--trusted-proxy", "::1/128"]);
        }
        cmd.args(&self.args);
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn polld");

        let logs: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel::<String>();

        let stderr = child.stderr.take().expect("piped stderr");
        let stderr_logs = Arc::clone(&logs);
        let stderr_thread = std::thread::spawn(move || {
            let mut reader = BufReader::new(stderr);
            let mut announced = false;
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        stderr_logs.lock().unwrap().extend_from_slice(&line);
                        if !announced {
                            let text = String::from_utf8_lossy(&line);
                            if let Some(pos) = text.find("polld: listening on ") {
                                let url = text[pos + "polld: listening on ".len()..].trim().to_string();
                                let _ = tx.send(url);
                                announced = true;
                            }
                        }
                    }
                }
            }
        });

        let stdout = child.stdout.take().expect("piped stdout");
        let stdout_logs = Arc::clone(&logs);
        let stdout_thread = std::thread::spawn(move || {
            let mut reader = stdout;
            let mut buf = [0u8; 4096];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => stdout_logs.lock().unwrap().extend_from_slice(&buf[..n]),
                }
            }
        });

        let listen_url = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(url) => url,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                let out = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
                panic!("polld did not announce its address within 20 s ({e}); output:\n{out}");
            }
        };
        let addr = listen_url
            .strip_prefix("http://")
            .unwrap_or_else(|| panic!("unexpected listen URL {listen_url:?}"))
            .trim_end_matches('/')
            .to_string();
        let base_url = self.base_url.clone().unwrap_or_else(|| format!("http://{addr}"));

        Server {
            child: Some(child),
            addr,
            listen_url,
            base_url,
            dir: Some(dir),
            logs,
            drains: vec![stderr_thread, stdout_thread],
        }
    }
}

pub struct Server {
    child: Option<Child>,
    /// `127.0.0.1:PORT`
    pub addr: String,
    /// URL announced on stderr.
    pub listen_url: String,
    /// Base URL the server should use in links.
    pub base_url: String,
    dir: Option<tempfile::TempDir>,
    logs: Arc<Mutex<Vec<u8>>>,
    drains: Vec<JoinHandle<()>>,
}

impl Server {
    pub fn builder() -> ServerBuilder {
        ServerBuilder::default()
    }

    /// Start with all defaults in a fresh tempdir.
    pub fn start() -> Server {
        ServerBuilder::default().start()
    }

    pub fn dir(&self) -> &Path {
        self.dir.as_ref().expect("server dir").path()
    }

    pub fn db_path(&self) -> PathBuf {
        self.dir().join(DB_NAME)
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running child").id()
    }

    /// Everything polld wrote to stderr and stdout so far (lossy UTF-8).
    pub fn logs(&self) -> String {
        String::from_utf8_lossy(&self.logs.lock().unwrap()).into_owned()
    }

    /// Raw bytes of everything polld wrote to stderr and stdout so far.
    pub fn log_bytes(&self) -> Vec<u8> {
        self.logs.lock().unwrap().clone()
    }

    /// Send SIGTERM, wait (≤ 10 s) for the exit, collect the remaining output.
    pub fn terminate(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("server already stopped");
        let status = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().expect("run kill");
        assert!(status.success(), "kill -TERM failed");
        let deadline = Instant::now() + Duration::from_secs(10);
        let exit = loop {
            if let Some(exit) = child.try_wait().expect("try_wait") {
                break exit;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("polld did not exit within 10 s of SIGTERM; output:\n{}", self.logs());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        for handle in self.drains.drain(..) {
            let _ = handle.join();
        }
        exit
    }

    /// Stop the server (SIGTERM) and hand back its data directory.
    pub fn into_dir(mut self) -> tempfile::TempDir {
        if self.child.is_some() {
            self.terminate();
        }
        self.dir.take().expect("server dir")
    }

    /// A new, distinct fake client address for X-Forwarded-For, so helpers
    /// never run into the per-client creation limit by accident.
    pub fn fresh_client_ip() -> String {
        let n = CLIENT_SEQ.fetch_add(1, Ordering::Relaxed);
        format!("198.18.{}.{}", (n / 250) % 250, n % 250 + 1)
    }

    // ----- HTTP helpers -----------------------------------------------------

    pub fn request(&self, method: &str, path: &str) -> Request {
        Request::new(&self.addr, method, path)
    }

    pub fn get(&self, path: &str) -> Response {
        self.request("GET", path).send()
    }

    pub fn get_auth(&self, path: &str, token: &str) -> Response {
        self.request("GET", path).bearer(token).send()
    }

    /// POST a JSON value with `Content-Type: application/json` from a fresh
    /// fake client address.
    pub fn post_json(&self, path: &str, body: &Value) -> Response {
        self.request("POST", path).xff(&Self::fresh_client_ip()).json(body).send()
    }

    /// POST raw bytes with the given content type from a fresh client address.
    pub fn post_bytes(&self, path: &str, content_type: Option<&str>, body: &[u8]) -> Response {
        let mut req = self.request("POST", path).xff(&Self::fresh_client_ip()).body(body.to_vec());
        if let Some(ct) = content_type {
            req = req.header("Content-Type", ct);
        }
        req.send()
    }

    /// POST /api/polls from a given X-Forwarded-For value.
    pub fn create_from(&self, xff: &str, body: &Value) -> Response {
        self.request("POST", "/api/polls").xff(xff).json(body).send()
    }

    pub fn patch_json(&self, id: &str, token: &str, body: &Value) -> Response {
        self.request("PATCH", &format!("/api/polls/{id}")).bearer(token).json(body).send()
    }

    pub fn delete(&self, id: &str, token: &str) -> Response {
        self.request("DELETE", &format!("/api/polls/{id}")).bearer(token).send()
    }

    /// Create a poll; asserts 201 and returns its id, token and body.
    pub fn create_poll(&self, body: &Value) -> Created {
        let resp = self.post_json("/api/polls", body);
        assert_eq!(resp.status, 201, "poll creation failed: {}", resp.describe());
        Created::from_response(&resp)
    }

    pub fn create_default(&self) -> Created {
        self.create_poll(&valid_poll_json())
    }

    pub fn create_public(&self) -> Created {
        let mut body = valid_poll_json();
        body["resultsPublic"] = json!(true);
        self.create_poll(&body)
    }

    /// A rusqlite connection on the live database (busy_timeout 5 s).
    pub fn sql(&self) -> rusqlite::Connection {
        let conn = rusqlite::Connection::open(self.db_path()).expect("open db with rusqlite");
        conn.busy_timeout(Duration::from_secs(5)).expect("busy_timeout");
        conn
    }

    /// Run one SQL statement on the live database; returns changed rows.
    pub fn exec_sql(&self, sql: &str, params: impl rusqlite::Params) -> usize {
        let conn = self.sql();
        conn.execute(sql, params).unwrap_or_else(|e| panic!("sql {sql:?} failed: {e}"))
    }

    /// Cast one vote as a person does, over HTTP: load the share page from
    /// client `xff`, take its one-time ballot code, post the form. `Ok` only
    /// for the thank-you page (200); `Err` with the status and text otherwise.
    pub fn vote(&self, poll_id: &str, choices: &[Option<usize>], xff: &str) -> Result<(), String> {
        let path = format!("/p/{poll_id}");
        let page = self.request("GET", &path).xff(xff).send();
        if page.status != 200 {
            return Err(format!("share page: {}", page.status));
        }
        let ballot = ballot_code(&page.text()).ok_or_else(|| "no ballot code on the share page".to_string())?;
        let mut form = form_urlencoded::Serializer::new(String::new());
        for (q, choice) in choices.iter().enumerate() {
            if let Some(o) = choice {
                form.append_pair(&format!("q{q}"), &o.to_string());
            }
        }
        form.append_pair("ballot", &ballot);
        let resp = self
            .request("POST", &path)
            .xff(xff)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form.finish().into_bytes())
            .send();
        if resp.status == 200 { Ok(()) } else { Err(format!("{}: {}", resp.status, resp.text())) }
    }

    /// Record one response through the library's store, as the share page would.
    pub fn record(&self, poll_id: &str, choices: &[Option<usize>]) -> anyhow::Result<()> {
        record_response(&self.db_path(), poll_id, choices)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The value of the first `name="…" value="…"` or `id="…" value="…"` input.
pub fn input_value(html: &str, attr: &str) -> String {
    let start = html.find(attr).unwrap_or_else(|| panic!("no {attr} in page:\n{html}"));
    let rest = &html[start..];
    let v = rest.find("value=\"").expect("value attribute") + 7;
    let end = rest[v..].find('"').expect("end of value");
    rest[v..v + end].replace("&amp;", "&")
}

/// The one-time code of a fresh creation form.
pub fn once(server: &Server) -> String {
    input_value(&server.get("/").text(), "name=\"once\"")
}

/// The one-time ballot code of a share page, if it has a vote form.
pub fn ballot_code(html: &str) -> Option<String> {
    html.split("name=\"ballot\"")
        .nth(1)
        .and_then(|rest| rest.split("value=\"").nth(1))
        .and_then(|rest| rest.split('"').next())
        .map(str::to_owned)
}

pub fn record_response(db: &Path, poll_id: &str, choices: &[Option<usize>]) -> anyhow::Result<()> {
    let store = anonpoll::store::Store::open(db)?;
    store.record_response(poll_id, choices)
}

/// The useful parts of a 201 creation response.
#[derive(Debug, Clone)]
pub struct Created {
    pub id: String,
    pub token: String,
    pub body: Value,
}

impl Created {
    pub fn from_response(resp: &Response) -> Created {
        let body = resp.json();
        let id = body["id"].as_str().unwrap_or_else(|| panic!("no id in {body}")).to_string();
        let token = body["adminToken"].as_str().unwrap_or_else(|| panic!("no adminToken in {body}")).to_string();
        Created { id, token, body }
    }

    pub fn path(&self) -> String {
        format!("/api/polls/{}", self.id)
    }

    pub fn results_path(&self) -> String {
        format!("/api/polls/{}/results", self.id)
    }
}

// ---------------------------------------------------------------------------
// Raw HTTP/1.1 client
// ---------------------------------------------------------------------------

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
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    stream.set_nodelay(true).unwrap();
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

struct Conn {
    stream: TcpStream,
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
        let head = String::from_utf8_lossy(&conn.buf[..head_end - 4]).into_owned();
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
        conn.buf.drain(..head_end);
        if (100..200).contains(&status) {
            continue; // 100 Continue and friends
        }
        let mut resp = Response { request: String::new(), status, reason, headers, body: Vec::new() };
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

pub fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    if hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

pub fn contains_bytes(hay: &[u8], needle: &[u8]) -> bool {
    find_bytes(hay, needle).is_some()
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

// ---------------------------------------------------------------------------
// Problem details (RFC 9457)
// ---------------------------------------------------------------------------

/// Asserts status, `application/problem+json` and `{type, title, status, detail}`.
pub fn assert_problem(resp: &Response, status: u16) -> Value {
    assert_eq!(resp.status, status, "unexpected status: {}", resp.describe());
    assert_eq!(
        resp.media_type().as_deref(),
        Some("application/problem+json"),
        "error must be application/problem+json: {}",
        resp.describe()
    );
    let body = resp.json();
    assert!(body.is_object(), "problem body not an object: {}", resp.describe());
    assert!(body["type"].is_string(), "problem without type: {}", resp.describe());
    assert!(body["title"].is_string(), "problem without title: {}", resp.describe());
    assert_eq!(body["status"].as_u64(), Some(u64::from(status)), "problem.status mismatch: {}", resp.describe());
    assert!(body["detail"].is_string(), "problem without detail: {}", resp.describe());
    body
}

/// Asserts a 422 problem with a non-empty `errors: [{field, message}]`;
/// returns the list of fields.
pub fn assert_422(resp: &Response) -> Vec<String> {
    let body = assert_problem(resp, 422);
    let errors = body["errors"].as_array().unwrap_or_else(|| panic!("422 without errors array: {}", resp.describe()));
    assert!(!errors.is_empty(), "422 with empty errors: {}", resp.describe());
    errors
        .iter()
        .map(|e| {
            assert!(e["message"].is_string(), "error without message: {}", resp.describe());
            e["field"].as_str().unwrap_or_else(|| panic!("error without field: {}", resp.describe())).to_string()
        })
        .collect()
}

/// Asserts a 422 that names exactly `field` among its errors.
pub fn assert_422_field(resp: &Response, field: &str) {
    let fields = assert_422(resp);
    assert!(
        fields.iter().any(|f| f == field),
        "expected an error for field {field:?}, got {fields:?}: {}",
        resp.describe()
    );
}

/// Asserts a 422 naming `prefix` or a sub-path of it (`prefix.x`, `prefix[n]`).
pub fn assert_422_field_prefix(resp: &Response, prefix: &str) {
    let fields = assert_422(resp);
    assert!(
        fields.iter().any(|f| f == prefix
            || f.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))),
        "expected an error under {prefix:?}, got {fields:?}: {}",
        resp.describe()
    );
}

// ---------------------------------------------------------------------------
// JSON builders
// ---------------------------------------------------------------------------

/// A valid poll creation body: two questions, private results.
pub fn valid_poll_json() -> Value {
    json!({
        "title": "Team lunch",
        "lang": "en",
        "expiryDays": 30,
        "resultsPublic": false,
        "questions": [
            {"type": "single", "label": "Where shall we eat?", "options": ["Pizza", "Sushi", "Salad"]},
            {"type": "single", "label": "Which day?", "options": ["Monday", "Friday"]}
        ]
    })
}

/// `n` valid questions with `options` options each.
pub fn questions(n: usize, options: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| {
                json!({
                    "type": "single",
                    "label": format!("Question {i}"),
                    "options": (0..options).map(|j| format!("Option {j}")).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

/// A translation matching `valid_poll_json()` (2 questions: 3 + 2 options).
pub fn valid_translation() -> Value {
    json!({
        "title": "Déjeuner d'équipe",
        "questions": [
            {"label": "Où mangeons-nous ?", "options": ["Pizza", "Sushis", "Salade"]},
            {"label": "Quel jour ?", "options": ["Lundi", "Vendredi"]}
        ]
    })
}

/// Copy of `v` with the JSON pointer `ptr` set to `value` (parent must exist).
pub fn with(mut v: Value, ptr: &str, value: Value) -> Value {
    let (parent, key) = ptr.rsplit_once('/').expect("pointer");
    let target =
        if parent.is_empty() { &mut v } else { v.pointer_mut(parent).unwrap_or_else(|| panic!("no parent {parent}")) };
    match target {
        Value::Object(map) => {
            map.insert(key.to_string(), value);
        }
        Value::Array(items) => {
            let idx: usize = key.parse().expect("array index");
            if idx == items.len() {
                items.push(value);
            } else {
                items[idx] = value;
            }
        }
        other => panic!("cannot set {ptr} in {other}"),
    }
    v
}

/// Copy of `v` with the key at JSON pointer `ptr` removed.
pub fn without(mut v: Value, ptr: &str) -> Value {
    let (parent, key) = ptr.rsplit_once('/').expect("pointer");
    let target =
        if parent.is_empty() { &mut v } else { v.pointer_mut(parent).unwrap_or_else(|| panic!("no parent {parent}")) };
    match target {
        Value::Object(map) => {
            map.remove(key).unwrap_or_else(|| panic!("no key {ptr}"));
        }
        Value::Array(items) => {
            items.remove(key.parse::<usize>().expect("array index"));
        }
        other => panic!("cannot remove {ptr} from {other}"),
    }
    v
}

/// Walk every string in a JSON value, calling `f(path, string)`.
pub fn walk_strings(v: &Value, path: &str, f: &mut dyn FnMut(&str, &str)) {
    match v {
        Value::String(s) => f(path, s),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk_strings(item, &format!("{path}[{i}]"), f);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                walk_strings(item, &format!("{path}.{k}"), f);
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------
// Identifiers and dates
// ---------------------------------------------------------------------------

pub fn is_url_safe(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Exactly `YYYY-MM-DD` (digits and dashes; month 01–12, day 01–31).
pub fn is_ymd(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    if ![0, 1, 2, 3, 5, 6, 8, 9].iter().all(|&i| b[i].is_ascii_digit()) {
        return false;
    }
    let month: u32 = s[5..7].parse().unwrap();
    let day: u32 = s[8..10].parse().unwrap();
    (1..=12).contains(&month) && (1..=31).contains(&day)
}

/// True if `s` contains a `YYYY-MM-DD` substring anywhere.
pub fn contains_ymd(s: &str) -> bool {
    s.char_indices().any(|(i, _)| s.get(i..i + 10).is_some_and(is_ymd))
}

/// True if `s` contains something shaped like a time of day (`HH:MM`).
pub fn contains_time_of_day(s: &str) -> bool {
    let b = s.as_bytes();
    b.windows(5).any(|w| {
        w[0].is_ascii_digit() && w[1].is_ascii_digit() && w[2] == b':' && w[3].is_ascii_digit() && w[4].is_ascii_digit()
    })
}

/// UTC date `days` from today as `YYYY-MM-DD`.
pub fn date_from_today(days: i64) -> String {
    let day = time::OffsetDateTime::now_utc().date() + time::Duration::days(days);
    let format = time::macros::format_description!("[year]-[month]-[day]");
    day.format(&format).expect("a date formats")
}

pub fn today() -> String {
    date_from_today(0)
}

// ---------------------------------------------------------------------------
// Database files
// ---------------------------------------------------------------------------

/// Every file in `dir` whose name starts with `anonpoll.sqlite3`, with contents.
pub fn db_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read data dir") {
        let entry = entry.expect("dir entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(DB_NAME) && entry.file_type().map(|t| t.is_file()).unwrap_or(false) {
            // A file may vanish between listing and reading (WAL removed).
            if let Ok(bytes) = std::fs::read(entry.path()) {
                out.push((name, bytes));
            }
        }
    }
    assert!(out.iter().any(|(n, _)| n == DB_NAME), "no {DB_NAME} in {}", dir.display());
    out
}

/// Names of the database files that contain `needle`.
pub fn db_files_containing(dir: &Path, needle: &[u8]) -> Vec<String> {
    db_files(dir).into_iter().filter(|(_, bytes)| contains_bytes(bytes, needle)).map(|(name, _)| name).collect()
}

/// Asserts that no database file contains `needle`.
pub fn assert_not_in_db(dir: &Path, needle: &[u8], what: &str) {
    let hits = db_files_containing(dir, needle);
    assert!(hits.is_empty(), "{what} ({:?}) found in database files {hits:?}", String::from_utf8_lossy(needle));
}

/// Asserts that some database file contains `needle` (sanity checks).
pub fn assert_in_db(dir: &Path, needle: &[u8], what: &str) {
    let hits = db_files_containing(dir, needle);
    assert!(
        !hits.is_empty(),
        "{what} ({:?}) expected in the database files but not found",
        String::from_utf8_lossy(needle)
    );
}

/// A marker unlikely to occur anywhere by chance.
pub fn unique_marker(tag: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let n = CLIENT_SEQ.fetch_add(1, Ordering::Relaxed);
    format!("ZQX{tag}marker{nanos:x}q{n}W")
}

pub fn sha256(bytes: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).to_vec()
}

pub fn hex(bytes: &[u8]) -> String {
    anonpoll::secret::hex(bytes)
}

/// Decode base64url without padding (the adminToken alphabet).
pub fn base64url_decode(s: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(s).ok()
}

// ---------------------------------------------------------------------------
// Missing tools: one way for every test that needs an outside tool.
// ---------------------------------------------------------------------------

/// For a test whose outside tool is missing: returns (the caller then
/// returns, skipping) after a notice written straight to the process's
/// stderr, which libtest does not capture even when the test passes; under
/// `CI=true`, where `.ci/run` must have installed the tool, it panics.
pub fn skip_or_fail(tool: &str, why: &str) {
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{tool} is missing and CI=true: {why}");
    let _ = writeln!(
        std::io::stderr(),
        "NOTICE: {tool} is missing; this test is SKIPPED ({why}); with CI=true it fails instead"
    );
}
