//! Caddy running the shipped several-node Caddyfile
//! (deploy/several-nodes/Caddyfile, issue 23) in front of any number of
//! nodes, unchanged but for its environment: `ANONPOLL_DOMAIN` plain HTTP
//! on a free loopback port, `ANONPOLL_UPSTREAMS` the nodes, no admin
//! endpoint, a temporary HOME. Its output goes to a file ([`NodesFront::log`]).
//!
//! Caddy's `ip_hash` picks a node by the client's TCP address, so every
//! request a test sends from 127.0.0.1 meets the same node: [`curl_from`]
//! sends one from another loopback address (any of 127.0.0.0/8).

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{Request, skip_or_fail};

/// The shipped several-node Caddyfile.
pub const NODES_CADDYFILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/several-nodes/Caddyfile");

/// Whether `tool ARG` runs here; when not, a visible skip (a failure under
/// `CI=true`), `why` saying what it is for and how to get it.
#[track_caller]
pub fn tool_or_skip(tool: &str, arg: &str, why: &str) -> bool {
    let ok = Command::new(tool)
        .arg(arg)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skip_or_fail(tool, why);
    }
    ok
}

/// A Caddy with the several-node Caddyfile; killed on drop.
pub struct NodesFront {
    child: Child,
    /// `127.0.0.1:PORT`
    pub addr: String,
    home: tempfile::TempDir,
}

impl NodesFront {
    /// Caddy in front of `upstreams` (`HOST:PORT` each), once it accepts
    /// connections. Check [`tool_or_skip`]`("caddy", "version", …)` first.
    pub fn start(upstreams: &[&str]) -> NodesFront {
        let upstreams = upstreams.join(" ");
        // A free port may be taken before Caddy binds it: try again.
        for _ in 0..3 {
            let home = tempfile::tempdir().expect("tempdir");
            let port = TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
            let log = std::fs::File::create(home.path().join("caddy.log")).expect("create caddy.log");
            let child = Command::new("caddy")
                .args(["run", "--adapter", "caddyfile", "--config", NODES_CADDYFILE])
                .env("ANONPOLL_DOMAIN", format!("http://127.0.0.1:{port}"))
                .env("ANONPOLL_UPSTREAMS", &upstreams)
                .env("ANONPOLL_CADDY_ADMIN", "off")
                .env("HOME", home.path())
                .env("XDG_DATA_HOME", home.path().join("data"))
                .env("XDG_CONFIG_HOME", home.path().join("config"))
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("clone log"))
                .stderr(log)
                .spawn()
                .expect("spawn caddy");
            let mut front = NodesFront { child, addr: format!("127.0.0.1:{port}"), home };
            let deadline = Instant::now() + Duration::from_secs(10);
            while front.child.try_wait().expect("try_wait").is_none() && Instant::now() < deadline {
                if TcpStream::connect(&front.addr).is_ok() {
                    return front;
                }
                std::thread::sleep(Duration::from_millis(25));
            }
            eprintln!("Caddy did not start:\n{}", front.log());
        }
        panic!("Caddy did not start three times");
    }

    pub fn request(&self, method: &str, path: &str) -> Request {
        Request::new(&self.addr, method, path)
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Everything Caddy wrote so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.home.path().join("caddy.log")).unwrap_or_default()
    }
}

impl Drop for NodesFront {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET url` sent from the loopback address `from` (e.g. "127.0.0.7", so
/// `ip_hash` sees another client) with curl: (status, body).
pub fn curl_from(from: &str, url: &str) -> (u16, String) {
    curl_send_from(from, url, None)
}

/// [`curl_from`], or with `form` (URL-encoded) POSTed to `url`.
pub fn curl_send_from(from: &str, url: &str, form: Option<&str>) -> (u16, String) {
    let mut cmd = Command::new("curl");
    cmd.args(["-s", "--max-time", "15", "--interface", from, "-w", "\n%{http_code}"]);
    if let Some(body) = form {
        cmd.args(["-H", "Content-Type: application/x-www-form-urlencoded", "--data-binary", body]);
    }
    let out = cmd.arg(url).output().expect("run curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, status) = text.rsplit_once('\n').unwrap_or(("", &text));
    (status.trim().parse().unwrap_or(0), body.to_string())
}
