//! The shipped several-node deployment (deploy/several-nodes/, issue 23):
//! its Caddyfile adapts and validates, is the top-level Caddyfile but for
//! the reverse_proxy block, and does what its comments promise with a real
//! Caddy in front of two stand-in nodes: a client stays on one node, a node
//! whose `GET /healthz` fails is left until it passes again, a GET whose
//! connection is refused is retried on the other node (once the health
//! check has seen its own node down), a POST that reached
//! a node is never sent again (a GET is: the control that shows the count
//! can see a retry), and a POST to a node that just died arrives whole at
//! most once (on Caddy 2.6 it gets 502: 2.6 cannot resend a body). The nodes are small TCP servers of this file rather than
//! polld, so each can be made to drop a request or refuse connections at a
//! chosen moment. The shipped systemd units (the polld@ template and
//! deploy/anonpoll.service, the Debian package's) pass `systemd-analyze
//! verify`.
//!
//! Without `caddy` (or `systemd-analyze`) on PATH the tests print a notice
//! and pass, except with `CI=true`, where they fail. Every wait is bounded.

use crate::common;
use crate::common::machine;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

const TOP_CADDYFILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/Caddyfile");
const NODE_UNIT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/several-nodes/polld@.service");
const SINGLE_UNIT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/anonpoll.service");

#[track_caller]
fn have_caddy() -> bool {
    tool_or_skip("caddy", "version", "the several-node Caddyfile's tests; .ci/run installs Debian's caddy")
}

/// `caddy adapt` of `caddyfile` in a test environment, as JSON.
fn adapt(caddyfile: &str, env: &[(&str, &str)]) -> Value {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new("caddy");
    cmd.args(["adapt", "--adapter", "caddyfile", "--config", caddyfile]);
    cmd.env("ANONPOLL_DOMAIN", "http://127.0.0.1:8443").env("ANONPOLL_CADDY_ADMIN", "off").env("HOME", home.path());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "caddy adapt {caddyfile}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The reverse_proxy handler(s) anywhere in an adapted configuration.
fn proxies(config: &mut Value) -> Vec<&mut Value> {
    fn walk<'a>(v: &'a mut Value, out: &mut Vec<&'a mut Value>) {
        if v.get("handler").and_then(Value::as_str) == Some("reverse_proxy") {
            out.push(v);
            return;
        }
        match v {
            Value::Array(items) => items.iter_mut().for_each(|i| walk(i, out)),
            Value::Object(map) => map.values_mut().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(config, &mut out);
    out
}

#[test]
fn the_several_nodes_caddyfile_balances_checks_health_and_never_retries_a_post() {
    let _machine = machine::shared();
    if !have_caddy() {
        return;
    }
    let mut config = adapt(NODES_CADDYFILE, &[]);
    let proxy = proxies(&mut config);
    assert_eq!(proxy.len(), 1, "one reverse_proxy");
    let p = &proxy[0];
    let upstreams: Vec<&str> = p["upstreams"].as_array().unwrap().iter().map(|u| u["dial"].as_str().unwrap()).collect();
    assert_eq!(
        upstreams,
        ["unix//run/anonpoll-node1/polld.sock", "unix//run/anonpoll-node2/polld.sock"],
        "the sockets of polld@1 and polld@2 by default"
    );
    assert_eq!(p["load_balancing"]["selection_policy"]["policy"], "ip_hash", "a client stays on one node");
    assert!(p["load_balancing"]["try_duration"].as_u64().unwrap_or(0) > 0, "failed dials are retried");
    // Caddy 2.6 retries a request that reached a node only when it is a GET
    // or matches lb_retry_match: none may name POST (none is the default).
    let retry_match = p["load_balancing"].get("retry_match").cloned().unwrap_or(Value::Null);
    assert!(!retry_match.to_string().to_uppercase().contains("POST"), "POSTs retried: {retry_match}");
    assert!(p["load_balancing"].get("retries").is_none(), "lb_retries would retry by count");
    let active = &p["health_checks"]["active"];
    assert_eq!(active["uri"], "/healthz");
    assert_eq!(active["interval"], 2_000_000_000_u64, "health_interval 2s");
    assert!(active["timeout"].as_u64().is_some_and(|t| t > 0 && t <= 2_000_000_000));
    // Passive health with retries takes the living node out on Caddy 2.6
    // (see the Caddyfile and a_post_to_a_node_that_just_died_…).
    assert!(p["health_checks"].get("passive").is_none(), "passive health checks are back");

    // ANONPOLL_UPSTREAMS may name any number of nodes.
    let mut three = adapt(NODES_CADDYFILE, &[("ANONPOLL_UPSTREAMS", "10.0.0.1:8080 10.0.0.2:8080 10.0.0.3:8080")]);
    assert_eq!(proxies(&mut three)[0]["upstreams"].as_array().unwrap().len(), 3);

    let home = tempfile::tempdir().unwrap();
    let out = Command::new("caddy")
        .args(["validate", "--adapter", "caddyfile", "--config", NODES_CADDYFILE])
        .env("ANONPOLL_DOMAIN", "http://127.0.0.1:8443")
        .env("ANONPOLL_CADDY_ADMIN", "off")
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .output()
        .unwrap();
    assert!(out.status.success(), "caddy validate: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn the_several_nodes_caddyfile_is_the_shipped_one_but_for_its_proxy() {
    let _machine = machine::shared();
    if !have_caddy() {
        return;
    }
    let mut nodes = adapt(NODES_CADDYFILE, &[]);
    let mut top = adapt(TOP_CADDYFILE, &[]);
    for config in [&mut nodes, &mut top] {
        for proxy in proxies(config) {
            let map = proxy.as_object_mut().unwrap();
            for key in ["upstreams", "load_balancing", "health_checks"] {
                map.remove(key);
            }
        }
    }
    // Body limits, security headers, the log filter, timeouts, transport:
    // any difference would be a change made to one file only.
    assert_eq!(nodes, top, "deploy/several-nodes/Caddyfile drifted from the top-level Caddyfile");
}

#[test]
fn the_shipped_units_pass_systemd_analyze_verify() {
    let _machine = machine::shared();
    if !tool_or_skip("systemd-analyze", "--version", "checking the systemd units; .ci/run installs Debian's systemd") {
        return;
    }
    let node = std::fs::read_to_string(NODE_UNIT).unwrap();
    assert!(node.contains("POLL_LISTEN=unix:/run/anonpoll-node%i/polld.sock"));
    assert!(node.contains("POLL_DB=postgresql://"));
    assert!(node.contains("POLL_KEYS=/var/lib/anonpoll/node%i/"), "a key file per node");
    let single = std::fs::read_to_string(SINGLE_UNIT).unwrap();
    // The Debian package's unit: its binary where the package puts it, its
    // settings in the package's one file (scripts/test-deb verifies it
    // installed, with polld in place).
    assert!(single.contains("\nEnvironmentFile=/etc/anonpoll/anonpoll.env\n"), "anonpoll.service reads the settings");
    // (file name on disk, unit verified, polld's path in it, text): a
    // template is verified through an instance of it.
    for (file, unit, polld, text) in [
        ("polld@.service", "polld@1.service", "/usr/local/bin/polld", &node),
        ("anonpoll.service", "anonpoll.service", "/usr/bin/polld", &single),
    ] {
        // polld is not installed here: any executable stands in for it.
        assert!(text.contains(&format!("ExecStart={polld}\n")), "{file}");
        let text = text.replace(polld, "/bin/true");
        let (ok, warnings) = verify_unit(file, unit, &text);
        assert!(ok && warnings.trim().is_empty(), "{file}: {warnings}");
        // The control: a misspelt key is reported, so the check above can fail.
        let (_, warnings) = verify_unit(file, unit, &text.replace("KillSignal=", "KillSignall="));
        assert!(warnings.contains("KillSignall"), "systemd-analyze reports nothing for {file}: {warnings}");
    }
}

/// `systemd-analyze verify` of `unit`, with `text` written as `file` in a
/// directory of its own: (success, what it printed on stderr).
fn verify_unit(file: &str, unit: &str, text: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(file), text).unwrap();
    let out = Command::new("systemd-analyze").args(["verify", "--man=no"]).arg(dir.path().join(unit)).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

// ---------------------------------------------------------------------------
// Stand-in nodes and a real Caddy
// ---------------------------------------------------------------------------

/// What a stand-in node does with a request other than `GET /healthz`.
const ANSWER: u8 = 0;
/// Reads the whole request, then closes the connection without a word.
const DROP: u8 = 1;
/// Like ANSWER, but `GET /healthz` gets 503 (a node without its database).
const UNHEALTHY: u8 = 2;

/// A node: answers `GET /healthz` 200 (503 when UNHEALTHY) and anything
/// else with its name (ANSWER) or nothing (DROP), one request per
/// connection, and records each such request as "METHOD PATH" (with
/// " (cut off)" when its body did not arrive whole).
struct Node {
    addr: String,
    name: String,
    mode: Arc<AtomicU8>,
    seen: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl Node {
    fn start(name: &str, mode: u8) -> Node {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let mode = Arc::new(AtomicU8::new(mode));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (m, s, st, n) = (mode.clone(), seen.clone(), stop.clone(), name.to_string());
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (m, s, n) = (m.clone(), s.clone(), n.clone());
                std::thread::spawn(move || serve(conn, &m, &s, &n));
            }
            // The listener is dropped here: from now on dials are refused.
        });
        Node { addr, name: name.to_string(), mode, seen, stop, accept: Some(accept) }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }

    /// Closes the listening socket: connections are refused from now on.
    fn kill(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(&self.addr);
        if let Some(t) = self.accept.take() {
            t.join().unwrap();
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

fn serve(conn: TcpStream, mode: &AtomicU8, seen: &Mutex<Vec<String>>, name: &str) {
    conn.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
    let mut length = 0;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
            break;
        }
        if let Some((k, v)) = header.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    let complete = reader.read_exact(&mut body).is_ok();
    let mode = mode.load(Ordering::SeqCst);
    let (status, text) = if path == "/healthz" {
        if mode == UNHEALTHY { (503, "down") } else { (200, "ok") }
    } else {
        // A request whose body was cut off changes nothing on a node.
        let cut = if complete { "" } else { " (cut off)" };
        seen.lock().unwrap().push(format!("{method} {path}{cut}"));
        if !complete {
            return;
        }
        if mode == DROP {
            let _ = conn.shutdown(Shutdown::Both);
            return;
        }
        (200, name)
    };
    let mut conn = conn;
    let _ = write!(
        conn,
        "HTTP/1.1 {status} X\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
}

/// Caddy with the several-node Caddyfile in front of `nodes`.
fn front_of(nodes: &[&Node]) -> NodesFront {
    NodesFront::start(&nodes.iter().map(|n| n.addr.as_str()).collect::<Vec<_>>())
}

fn send(front: &NodesFront, method: &str) -> Response {
    let request = front.request(method, "/vote");
    if method == "POST" { request.body(b"choice=1".to_vec()) } else { request }.send()
}

/// Sends GETs until one is answered by `node`, for at most `within`.
fn wait_until_served_by(front: &NodesFront, node: &Node, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let r = send(front, "GET");
        if r.status == 200 && r.text() == node.name {
            return;
        }
        assert!(Instant::now() < deadline, "never served by {} within {within:?}: {}", node.name, front.log());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Which of `nodes` serves this test's client (all come from 127.0.0.1).
fn served_by<'a>(front: &NodesFront, nodes: [&'a Node; 2]) -> (&'a Node, &'a Node) {
    let r = send(front, "GET");
    assert_eq!(r.status, 200, "{}", r.describe());
    let name = r.text();
    if name == nodes[0].name { (nodes[0], nodes[1]) } else { (nodes[1], nodes[0]) }
}

#[test]
fn a_post_that_reached_a_node_is_never_sent_again() {
    let _machine = machine::shared();
    if !have_caddy() {
        return;
    }
    let (a, b) = (Node::start("a", DROP), Node::start("b", DROP));
    let front = front_of(&[&a, &b]);
    let r = send(&front, "POST");
    assert_eq!(r.status, 502, "the node dropped it: {}", r.describe());
    std::thread::sleep(Duration::from_millis(600));
    let seen = [a.seen(), b.seen()].concat();
    assert_eq!(seen, ["POST /vote"], "a POST that reached a node was sent again");
    drop(front);

    // The control: the same dropped request as a GET is sent again, every
    // 250 ms to the client's node (still healthy) until Caddy gives up
    // after lb_try_duration (5 s).
    let (a, b) = (Node::start("a", DROP), Node::start("b", DROP));
    let front = front_of(&[&a, &b]);
    assert_eq!(send(&front, "GET").status, 502);
    let seen = [a.seen(), b.seen()].concat();
    assert!(seen.len() >= 2 && seen.iter().all(|s| s == "GET /vote"), "the GET was not retried: {seen:?}");
}

/// Two answering nodes behind a front, the client's own node killed just
/// now (between two active health checks, which come every 2 s): Caddy
/// still picks it for the next request and its dial is refused, until the
/// next check sees it down. Returns the front, the living node, and the
/// dead one.
fn front_whose_node_just_died() -> (NodesFront, Node, Node) {
    let (a, b) = (Node::start("a", ANSWER), Node::start("b", ANSWER));
    let front = front_of(&[&a, &b]);
    let mine = served_by(&front, [&a, &b]).0.name.clone();
    for _ in 0..5 {
        assert_eq!(send(&front, "GET").text(), mine, "ip_hash keeps a client on one node");
    }
    let (mut dead, alive) = if mine == a.name { (a, b) } else { (b, a) };
    dead.kill();
    (front, alive, dead)
}

#[test]
fn a_get_to_a_node_that_just_died_is_retried_on_the_other() {
    let _machine = machine::shared();
    if !have_caddy() {
        return;
    }
    let (front, alive, _dead) = front_whose_node_just_died();
    let r = send(&front, "GET");
    assert_eq!((r.status, r.text()), (200, alive.name.clone()), "{}", front.log());
    assert_eq!(alive.seen(), ["GET /vote"]);
}

#[test]
fn a_post_to_a_node_that_just_died_is_never_duplicated() {
    let _machine = machine::shared();
    if !have_caddy() {
        return;
    }
    let (front, alive, _dead) = front_whose_node_just_died();
    let r = send(&front, "POST");
    std::thread::sleep(Duration::from_millis(300));
    let whole = |node: &Node| node.seen().iter().filter(|s| *s == "POST /vote").count();
    // Caddy 2.6 retries the refused dial until the health check sees the
    // node down, then cannot send the body again (caddyserver/caddy#5454):
    // 502, and the other node gets at most a request cut off. A Caddy that
    // can resend it answers 200 from the other node. Either way the POST
    // arrives whole at most once.
    match r.status {
        502 => assert_eq!(whole(&alive), 0, "a 502 POST arrived whole: {:?}", alive.seen()),
        200 => assert_eq!((r.text(), whole(&alive)), (alive.name.clone(), 1)),
        other => panic!("POST to a dead node answered {other}: {}", r.describe()),
    }
    eprintln!("POST to a node that just died: {}; the other node saw {:?}", r.status, alive.seen());
    // The dead node is out and the living one still in: the next POST goes
    // through (with passive health checks, the cut-off retry would have
    // taken the living node out too: 503 "no upstreams available").
    let r = send(&front, "POST");
    assert_eq!((r.status, r.text()), (200, alive.name.clone()), "{}", front.log());
}

#[test]
fn a_node_failing_its_health_check_is_left_until_it_passes() {
    let _machine = machine::shared();
    if !have_caddy() {
        return;
    }
    let (a, b) = (Node::start("a", ANSWER), Node::start("b", ANSWER));
    let front = front_of(&[&a, &b]);
    let (mine, other) = served_by(&front, [&a, &b]);
    // Its database stops answering: /healthz says 503, and within a check
    // interval or two the client is served by the other node.
    mine.mode.store(UNHEALTHY, Ordering::SeqCst);
    wait_until_served_by(&front, other, Duration::from_secs(6));
    // Back: the client returns to its own node (rendezvous hashing).
    mine.mode.store(ANSWER, Ordering::SeqCst);
    wait_until_served_by(&front, mine, Duration::from_secs(6));
}

#[test]
fn clients_are_spread_over_the_nodes_and_each_keeps_its_own() {
    let _machine = machine::shared();
    if !have_caddy()
        || !tool_or_skip("curl", "--version", "requests from other loopback addresses; .ci/run installs curl")
    {
        return;
    }
    let (a, b) = (Node::start("a", ANSWER), Node::start("b", ANSWER));
    let front = front_of(&[&a, &b]);
    let url = front.url("/vote");
    let clients: Vec<String> = (10..30).map(|i| format!("127.0.0.{i}")).collect();
    let first: Vec<String> = clients.iter().map(|c| curl_from(c, &url).1).collect();
    assert!(first.iter().all(|n| n == "a" || n == "b"), "{first:?}\n{}", front.log());
    assert!(
        first.contains(&"a".to_string()) && first.contains(&"b".to_string()),
        "20 clients all on one node: {first:?}"
    );
    let again: Vec<String> = clients.iter().map(|c| curl_from(c, &url).1).collect();
    assert_eq!(first, again, "a client moved to another node");
}
