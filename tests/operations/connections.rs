//! Connection handling of polld under hostile or merely busy clients: a burst
//! of keep-alive connections, slow-loris clients, an oversized header, and
//! bodies declared larger than the limit that never arrive. None of them may
//! starve the worker pool, kill the process or blow up its memory.
//!
//! And the attacks of issue 13: floods of pipelining connections that never
//! read, from one address and from a hundred; a reader that stalls; slow
//! uploads; X-Forwarded-For from a peer nobody named.
//!
//! Every wait is bounded. The floods load the machine, so they run alone
//! (`alone()`); the other tests share it (`shared()`).

use crate::common;
use crate::common::machine::{alone, shared};

use std::io::{Read, Write};
use std::net::{IpAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::hostile::{connect_from, loopback};
use common::keepalive::{Conn, Failure, PROMPT, assert_probes_ok, get_api, probe, probes};
use common::media::{multipart, multipart_type};
use common::{Response, Server};

static XFF_SEQ: AtomicU32 = AtomicU32::new(1);

fn fresh_xff() -> String {
    let n = XFF_SEQ.fetch_add(1, Ordering::Relaxed);
    format!("10.77.{}.{}", (n >> 8) & 0xff, n & 0xff)
}

/// polld's process state from /proc (`None` once it is gone); 'Z' is dead.
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next())
}

fn alive(pid: u32) -> bool {
    process_state(pid).is_some_and(|s| s != 'Z' && s != 'X')
}

/// Resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    common::status_kib(pid, "VmRSS:").expect("VmRSS in /proc/PID/status")
}

// ---------------------------------------------------------------------------
// Burst of keep-alive connections
// ---------------------------------------------------------------------------

/// A connection and how its request went: time to a whole response, or why not.
type Exchange = (Conn, Result<(Duration, Response), Failure>);

/// Sends `request` on every connection at the same moment and reads one
/// response on each, up to `grace` (the verdict is against [`PROMPT`]).
fn round(conns: Vec<Conn>, request: &[u8], grace: Duration) -> Vec<Exchange> {
    let barrier = Arc::new(Barrier::new(conns.len()));
    let handles: Vec<_> = conns
        .into_iter()
        .map(|mut conn| {
            let barrier = barrier.clone();
            let request = request.to_vec();
            std::thread::spawn(move || {
                barrier.wait();
                let start = Instant::now();
                let result = conn.send(&request).and_then(|()| conn.response(start + grace));
                (conn, result.map(|r| (start.elapsed(), r)))
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().expect("burst thread panicked")).collect()
}

fn summarize(results: &[Exchange]) -> (usize, String) {
    let prompt =
        results.iter().filter(|(_, r)| matches!(r, Ok((t, resp)) if *t <= PROMPT && resp.status == 200)).count();
    let late: Vec<_> =
        results.iter().filter_map(|(_, r)| r.as_ref().ok()).filter(|(t, _)| *t > PROMPT).map(|(t, _)| *t).collect();
    let failures: Vec<_> = results.iter().filter_map(|(_, r)| r.as_ref().err()).collect();
    let statuses: Vec<u16> =
        results.iter().filter_map(|(_, r)| r.as_ref().ok()).map(|(_, r)| r.status).filter(|s| *s != 200).collect();
    let slowest = results.iter().filter_map(|(_, r)| r.as_ref().ok()).map(|(t, _)| *t).max();
    let text = format!(
        "{prompt}/{} answered 200 within {PROMPT:?} (slowest answer {slowest:?}); late answers: {late:?}; \
         non-200: {statuses:?}; no answer at all: {} {:?}",
        results.len(),
        failures.len(),
        &failures[..failures.len().min(3)]
    );
    (prompt, text)
}

/// Connections in the burst.
const BURST: usize = 64;
/// Fresh servers the burst is tried on: whether a burst starves depends on
/// thread scheduling (about 8 bursts in 10 did on tiny_http 0.12), so one
/// attempt could pass by luck; a fixed server passes all of them.
const BURST_ATTEMPTS: usize = 5;

#[test]
fn a_burst_of_64_keep_alive_connections_is_answered_promptly() {
    let _machine = shared();
    for attempt in 1..=BURST_ATTEMPTS {
        burst(attempt);
    }
}

fn burst(attempt: usize) {
    const N: usize = BURST;
    let server = Server::start();
    // All 64 connect at the same moment, from 64 threads.
    let barrier = Arc::new(Barrier::new(N));
    let connecting: Vec<_> = (0..N)
        .map(|_| {
            let (barrier, addr) = (barrier.clone(), server.addr.clone());
            std::thread::spawn(move || {
                barrier.wait();
                Conn::connect(&addr)
            })
        })
        .collect();
    let conns: Vec<Conn> = connecting
        .into_iter()
        .enumerate()
        .map(|(i, h)| {
            h.join().expect("connect thread panicked").unwrap_or_else(|f| panic!("connection {i} of {N}: {f}"))
        })
        .collect();
    // Every handshake is complete before the first byte of any request; give
    // the accept loop a moment to take them all from the backlog as well.
    std::thread::sleep(Duration::from_millis(100));

    let first = round(conns, &get_api(true), Duration::from_secs(6));
    let (prompt, text) = summarize(&first);
    eprintln!("burst {attempt}, first request: {text}");
    assert_eq!(prompt, N, "burst {attempt}/{BURST_ATTEMPTS}, first request: {text}");

    // Second request on every connection the server kept open.
    let open: Vec<Conn> =
        first.into_iter().filter_map(|(c, r)| r.ok().filter(|(_, resp)| !resp.closes()).map(|_| c)).collect();
    let still_open = open.len();
    let second = round(open, &get_api(true), Duration::from_secs(6));
    let (prompt, text) = summarize(&second);
    eprintln!("burst {attempt}, second request on the {still_open} connections still open: {text}");
    assert_eq!(prompt, still_open, "burst {attempt}/{BURST_ATTEMPTS}, second request: {text}");
}

// ---------------------------------------------------------------------------
// Slow clients
// ---------------------------------------------------------------------------

#[test]
fn fifty_slow_clients_do_not_block_a_normal_one() {
    let _machine = shared();
    const SLOW: usize = 50;
    let server = Server::start();
    // Half trickle a request head that never ends, one byte every 200 ms;
    // half connect and send nothing.
    let mut trickling = Vec::new();
    let mut silent = Vec::new();
    for i in 0..SLOW {
        let conn = Conn::connect(&server.addr).unwrap_or_else(|f| panic!("slow connection {i}: {f}"));
        if i % 2 == 0 { trickling.push(conn) } else { silent.push(conn) }
    }
    let head = format!("GET /api HTTP/1.1\r\nHost: polld\r\nX-Slow: {}", "a".repeat(1000)).into_bytes();
    let stop = Arc::new(AtomicBool::new(false));
    let trickler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let start = Instant::now();
            let mut sent = 0;
            let mut write_errors = 0;
            // Bounded: stops when told, at the end of the head, or after 20 s.
            while !stop.load(Ordering::SeqCst) && sent < head.len() && start.elapsed() < Duration::from_secs(20) {
                for conn in &mut trickling {
                    if conn.stream.write_all(&head[sent..=sent]).is_err() {
                        write_errors += 1;
                    }
                }
                sent += 1;
                std::thread::sleep(Duration::from_millis(200));
            }
            (sent, write_errors, trickling)
        })
    };
    // Let the slow clients settle in (a few bytes each).
    std::thread::sleep(Duration::from_millis(600));
    // Ten probes spread over 2 s, while the slow clients keep trickling.
    let results: Vec<_> = (0..10)
        .map(|_| {
            let r = probe(&server.addr, Instant::now() + PROMPT);
            std::thread::sleep(Duration::from_millis(200));
            r
        })
        .collect();
    stop.store(true, Ordering::SeqCst);
    let (sent, write_errors, trickling) = trickler.join().expect("trickler panicked");
    eprintln!(
        "slow clients: {} trickled {sent} bytes each ({write_errors} write errors), {} silent",
        trickling.len(),
        silent.len()
    );
    assert_probes_ok("with 50 slow clients connected", &results);
    drop((trickling, silent));
}

// ---------------------------------------------------------------------------
// Oversized header
// ---------------------------------------------------------------------------

#[test]
fn a_one_mebibyte_header_is_refused_without_hurting_the_server() {
    let _machine = shared();
    let server = Server::start();
    let pid = server.pid();
    // Warm up, so the baseline includes the first request's allocations.
    assert_probes_ok("before the oversized header", &probes(&server.addr, 2));
    let rss_before = rss_kib(pid);

    let mut conn = Conn::connect(&server.addr).unwrap_or_else(|f| panic!("{f}"));
    let mut request = b"GET /api HTTP/1.1\r\nHost: polld\r\nConnection: close\r\nX-Big: ".to_vec();
    request.resize(request.len() + 1024 * 1024, b'a');
    request.extend_from_slice(b"\r\n\r\n");
    // Write from another thread: the server may answer and close early, and
    // the answer must still be read.
    let mut writer = conn.stream.try_clone().unwrap();
    let write_thread = std::thread::spawn(move || writer.write_all(&request).map_err(|e| e.to_string()));
    let start = Instant::now();
    let outcome = conn.response(start + Duration::from_secs(5));
    let elapsed = start.elapsed();
    let write_result = write_thread.join().expect("writer panicked");
    let rss_after = rss_kib(pid);
    eprintln!(
        "oversized header: {:?} after {elapsed:?} (write: {write_result:?}); VmRSS {rss_before} KiB -> {rss_after} KiB",
        outcome.as_ref().map(|r| r.status)
    );

    match &outcome {
        Ok(r) => assert!(
            [400, 413, 431].contains(&r.status),
            "a 1 MiB header must be refused with 431/400/413, got {} after {elapsed:?}",
            r.status
        ),
        Err(Failure::Closed { .. }) => {}
        Err(f) => panic!("a 1 MiB header was neither refused nor cut off within 5 s: {f}"),
    }
    assert!(alive(pid), "polld died after the oversized header (state {:?})", process_state(pid));
    assert!(
        rss_after < rss_before + 100 * 1024,
        "polld's VmRSS grew from {rss_before} KiB to {rss_after} KiB after one 1 MiB header"
    );
    assert_probes_ok("after the oversized header", &probes(&server.addr, 3));
}

// ---------------------------------------------------------------------------
// Bodies declared larger than the limit
// ---------------------------------------------------------------------------

/// Opens a `POST /api/polls` declaring `declared` body bytes and sending four.
fn declare_body(addr: &str, declared: u64) -> Conn {
    let mut conn = Conn::connect(addr).unwrap_or_else(|f| panic!("{f}"));
    let head = format!(
        "POST /api/polls HTTP/1.1\r\nHost: polld\r\nContent-Type: application/json\r\nX-Forwarded-For: {}\r\n\
         Content-Length: {declared}\r\n\r\n{{\"ti",
        fresh_xff()
    );
    conn.send(head.as_bytes()).unwrap_or_else(|f| panic!("{f}"));
    conn
}

#[test]
fn a_huge_declared_body_gets_413_and_the_server_survives() {
    let _machine = shared();
    let server = Server::start();
    let pid = server.pid();
    let start = Instant::now();
    // The connection stays open, without another byte, to the end of the test.
    let mut conn = declare_body(&server.addr, 99_999_999_999_999);
    let outcome = conn.response(start + PROMPT);
    eprintln!("huge declared body: {:?} after {:?}", outcome.as_ref().map(|r| r.status), start.elapsed());
    match &outcome {
        Ok(r) => assert_eq!(r.status, 413, "Content-Length 99999999999999 must get 413"),
        Err(f) => panic!("no answer to Content-Length 99999999999999 within {PROMPT:?}: {f}"),
    }

    std::thread::sleep(Duration::from_secs(1));
    let state = process_state(pid);
    let logs = server.logs();
    let tail: String = logs
        .lines()
        .filter(|l| l.contains("panicked") || l.contains("alloc") || l.contains("abort") || l.contains("overflow"))
        .take(3)
        .collect::<Vec<_>>()
        .join(" | ");
    eprintln!("huge declared body: polld state 1 s later: {state:?}; polld said: {tail}");
    assert!(alive(pid), "polld is dead 1 s after a 413 for a huge declared body (state {state:?}); logs: {tail}");
    assert_probes_ok("while the huge-body connection is held open", &probes(&server.addr, 5));
    drop(conn);
}

#[test]
fn bodies_declared_too_large_and_never_sent_do_not_pin_workers() {
    let _machine = shared();
    // Twice the default worker count (8), each declaring 1 MiB (over the
    // 256 KiB limit, small enough to allocate) and then sending nothing more.
    const HOLDERS: usize = 16;
    let server = Server::start();
    // Spaced 20 ms apart so that this tests the worker pool alone (a burst
    // of connections is the test above).
    let mut held: Vec<Conn> = (0..HOLDERS)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(20));
            declare_body(&server.addr, 1024 * 1024)
        })
        .collect();
    let deadline = Instant::now() + PROMPT;
    let answers: Vec<Result<u16, String>> =
        held.iter_mut().map(|c| c.response(deadline).map(|r| r.status).map_err(|f| f.to_string())).collect();
    let got_413 = answers.iter().filter(|a| matches!(a, Ok(413))).count();
    eprintln!("declared-but-unsent bodies: {got_413}/{HOLDERS} got 413 within {PROMPT:?}: {answers:?}");
    let results = probes(&server.addr, 5);
    let ok = results.iter().filter(|r| r.is_ok()).count();
    eprintln!("declared-but-unsent bodies held open: then {ok}/5 fresh GET /api answered within {PROMPT:?}");
    assert_eq!(got_413, HOLDERS, "every too-large declared body must get 413 within {PROMPT:?}: {answers:?}");
    assert_probes_ok("while 16 too-large-body connections are held open", &results);
    drop(held);
}

// ---------------------------------------------------------------------------
// Floods that never read (issue 13, item 1)
// ---------------------------------------------------------------------------

/// `per_address` connections from each of `addresses`, each sending
/// `pipelined` requests for `path` at once and then reading nothing.
fn flood(addr: &str, addresses: &[IpAddr], per_address: usize, pipelined: usize, path: &str) -> Vec<TcpStream> {
    let burst = format!("GET {path} HTTP/1.1\r\nHost: polld\r\n\r\n").repeat(pipelined).into_bytes();
    let mut held = Vec::new();
    for &from in addresses {
        for _ in 0..per_address {
            let Ok(mut stream) = connect_from(from, addr) else { continue };
            // A refused connection resets; a stalled one stops taking bytes.
            let _ = stream.set_write_timeout(Some(Duration::from_millis(200)));
            let _ = stream.write_all(&burst);
            held.push(stream);
        }
    }
    held
}

/// How many of `streams` the server kept: those it answered something on
/// (a refused one was closed before reading a request, so it has nothing).
fn answered(streams: &mut [TcpStream]) -> usize {
    streams
        .iter_mut()
        .map(|s| {
            let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
            let mut byte = [0u8; 1];
            matches!(s.read(&mut byte), Ok(1))
        })
        .filter(|answered| *answered)
        .count()
}

/// Probes (fresh connections from 127.0.0.1, one `GET /api` each) spread
/// over `span`, while a flood holds its connections; returns the waits.
fn probes_during(addr: &str, span: Duration, n: usize) -> Vec<Result<Duration, String>> {
    (0..n)
        .map(|_| {
            let r = probe(addr, Instant::now() + PROMPT);
            std::thread::sleep(span / n as u32);
            r
        })
        .collect()
}

fn waits(results: &[Result<Duration, String>]) -> String {
    let mut ok: Vec<Duration> = results.iter().filter_map(|r| r.as_ref().ok().copied()).collect();
    ok.sort();
    match (ok.first(), ok.get(ok.len() / 2), ok.last()) {
        (Some(min), Some(median), Some(max)) => format!("min {min:?}, median {median:?}, max {max:?}"),
        _ => "none answered".into(),
    }
}

#[test]
fn a_flood_from_one_address_leaves_other_clients_answered() {
    let _machine = alone();
    // The flood may fill the whole connection cap of 300 if nothing stops
    // it; 127.0.0.1 (the probes) and 127.0.5.1 (the flood) are two clients.
    let server = Server::builder().trusted_proxy("192.0.2.1/32").arg("--max-connections").arg("300").start();
    assert_probes_ok("before the flood", &probes(&server.addr, 2));
    let started = Instant::now();
    let mut flood = flood(&server.addr, &[loopback(0, 5, 1)], 320, 2000, "/api");
    eprintln!("one-address flood: {} connections opened in {:?}", flood.len(), started.elapsed());
    let results = probes_during(&server.addr, Duration::from_secs(3), 12);
    eprintln!("one-address flood: another client waited {}", waits(&results));
    let kept = answered(&mut flood);
    eprintln!("one-address flood: polld kept {kept} of its {} connections", flood.len());
    assert_probes_ok("during a flood of 320 pipelining connections from one address", &results);
    // The per-client cap of 8 applies once the open connections near the
    // cap (7/8 of 300): the flood gets at most that many, others the rest.
    assert!(kept <= 263, "one address holds {kept} connections, more than the pressure threshold allows");
    drop(flood);
}

#[test]
fn a_flood_from_a_hundred_addresses_leaves_other_clients_answered() {
    let _machine = alone();
    let server = Server::builder().trusted_proxy("192.0.2.1/32").arg("--max-connections").arg("900").start();
    assert_probes_ok("before the flood", &probes(&server.addr, 2));
    let addresses: Vec<IpAddr> = (1..=100).map(|i| loopback(0, 6, i)).collect();
    let started = Instant::now();
    let mut flood = flood(&server.addr, &addresses, 10, 100, "/api");
    eprintln!("hundred-address flood: {} connections opened in {:?}", flood.len(), started.elapsed());
    let results = probes_during(&server.addr, Duration::from_secs(3), 12);
    eprintln!("hundred-address flood: another client waited {}", waits(&results));
    let kept = answered(&mut flood);
    eprintln!("hundred-address flood: polld kept {kept} of its {} connections", flood.len());
    assert_probes_ok("during a flood of 1000 pipelining connections from 100 addresses", &results);
    // No bound on `kept` (answered anything): the per-client cap applies
    // only under pressure (from 7/8 of 900), and connections past it were
    // answered before they were shed. The verdict is the probes' above.
    drop(flood);
}

#[test]
fn a_reader_that_stalls_is_cut_off_and_its_connections_come_back() {
    let _machine = shared();
    let server = Server::builder()
        .trusted_proxy("192.0.2.1/32")
        .arg("--send-timeout-secs")
        .arg("2")
        .arg("--max-connections-per-client")
        .arg("2")
        // The per-client cap applies under pressure, from 7/8 of this.
        .arg("--max-connections")
        .arg("3")
        .start();
    let stalled_client = loopback(0, 7, 1);
    let mut stalled = flood(&server.addr, &[stalled_client], 2, 300, "/api");
    assert_eq!(stalled.len(), 2);
    // A third connection of the same client is over its cap: closed unanswered.
    let mut third = connect_from(stalled_client, &server.addr).expect("connect");
    third.set_read_timeout(Some(PROMPT)).unwrap();
    let _ = third.write_all(&get_api(false));
    let mut buf = [0u8; 64];
    let third_got = third.read(&mut buf);
    assert!(matches!(third_got, Ok(0) | Err(_)), "a third connection of one client was served: {third_got:?}");
    // Within the send timeout (2 s) and some slack, the stalled connections
    // are dropped, and the client may connect again.
    let start = Instant::now();
    let back = loop {
        let mut again = connect_from(stalled_client, &server.addr).expect("connect");
        again.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
        let _ = again.write_all(&get_api(false));
        if matches!(again.read(&mut buf), Ok(n) if n > 0) {
            break Some(start.elapsed());
        }
        if start.elapsed() > Duration::from_secs(8) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    eprintln!("stalled reader: its client could connect again after {back:?}");
    assert!(back.is_some(), "the stalled connections still held the client's slots after 8 s");
    // What the stalled connections got before they were cut: far fewer than
    // the 300 requests each sent, then the end of the stream.
    for s in &mut stalled {
        s.set_read_timeout(Some(PROMPT)).unwrap();
        let mut got = Vec::new();
        let end = s.read_to_end(&mut got);
        let answers = got.windows(12).filter(|w| w == b"HTTP/1.1 200").count();
        eprintln!("stalled reader: {answers} answers, then {end:?}");
        assert!(answers < 300, "a stalled connection was answered all {answers} requests");
    }
}

/// polld closes a connection after its hundredth answer while the client
/// still sends (pipelined requests past it): gently, its sending side
/// first, reading and throwing away what comes for a while. Closed at once,
/// the socket would be reset, and the client's system would throw away the
/// answers it had not read yet: here the client reads only half a second
/// after it sent, when polld has long answered and closed.
#[test]
fn a_client_that_reads_late_still_gets_every_answer_of_a_closed_connection() {
    let _machine = shared();
    let server = Server::start();
    let mut conn = Conn::connect(&server.addr).unwrap_or_else(|f| panic!("{f}"));
    conn.send(&b"GET /api/polls/AAAAAAAAAAAAAAAA HTTP/1.1\r\nHost: polld\r\n\r\n".repeat(150)).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut answers = 0;
    while conn.response(deadline).is_ok() {
        answers += 1;
    }
    assert_eq!(answers, 100, "every answer before the close reached the client");
}

#[test]
fn pipelined_requests_are_answered_at_most_a_hundred_per_connection() {
    let _machine = shared();
    let server = Server::start();
    let mut conn = Conn::connect(&server.addr).unwrap_or_else(|f| panic!("{f}"));
    conn.send(&b"GET /api/polls/AAAAAAAAAAAAAAAA HTTP/1.1\r\nHost: polld\r\n\r\n".repeat(150)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut answers = 0;
    let mut closing = false;
    while let Ok(r) = conn.response(deadline) {
        answers += 1;
        closing = r.closes();
    }
    eprintln!("150 pipelined requests: {answers} answered, the last saying close: {closing}");
    assert_eq!(answers, 100, "answers on one connection");
    assert!(closing, "the 100th answer must say Connection: close");
}

// ---------------------------------------------------------------------------
// Forwarding headers from a peer nobody named (issue 13, item 2)
// ---------------------------------------------------------------------------

#[test]
fn x_forwarded_for_is_not_believed_by_default_and_is_warned_about_once() {
    let _machine = shared();
    let server = Server::builder().polld_default_trust().start();
    let mut created = 0;
    let mut refused = 0;
    for i in 0..12 {
        let resp = server.create_from(&format!("198.51.100.{}", 100 + i), &common::valid_poll_json());
        match resp.status {
            201 => created += 1,
            429 => refused += 1,
            _ => panic!("creation {i}: {}", resp.describe()),
        }
    }
    eprintln!("12 creations, each with its own X-Forwarded-For, from one peer: {created} created, {refused} refused");
    assert_eq!((created, refused), (10, 2), "one peer is one client, whatever X-Forwarded-For says");
    let logs = server.logs();
    let warnings = logs.lines().filter(|l| l.contains("X-Forwarded-For")).collect::<Vec<_>>();
    assert_eq!(warnings.len(), 1, "one warning per start: {logs}");
    assert!(warnings[0].contains("--trusted-proxy"), "the warning names the option: {}", warnings[0]);
    assert!(!logs.contains("198.51.100"), "a forwarded address reached the log: {logs}");
    assert!(!warnings[0].contains("127.0.0.1"), "the peer's address is in the warning: {}", warnings[0]);
    // The shipped settings (the Debian package's /etc/anonpoll/anonpoll.env,
    // which its unit reads) trust no TCP peer: Caddy reaches polld over a
    // Unix socket, so no local process can forge a client over loopback.
    let settings = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/anonpoll.env")).unwrap();
    assert!(
        settings.lines().any(|l| l.trim() == "POLL_LISTEN=unix:/run/anonpoll/polld.sock"),
        "deploy/anonpoll.env listens on its socket"
    );
    assert!(
        !settings.lines().any(|l| l.trim_start().starts_with("POLL_TRUSTED_PROXIES=")),
        "deploy/anonpoll.env trusts no TCP peer"
    );
    let unit = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/anonpoll.service")).unwrap();
    assert!(
        !unit.lines().any(|l| l.starts_with("Environment=POLL_")),
        "deploy/anonpoll.service takes every setting from deploy/anonpoll.env"
    );
}

// ---------------------------------------------------------------------------
// Slow uploads (issue 13, item 4)
// ---------------------------------------------------------------------------

/// A connection from `from` that has sent the head of a form of
/// `declared` bytes and, if `file` is set, the start of a file part.
fn begin_upload(addr: &str, from: IpAddr, declared: usize, file: bool) -> Conn {
    let stream = connect_from(from, addr).expect("connect");
    stream.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut conn = Conn { stream, buf: Vec::new() };
    let head = format!(
        "POST / HTTP/1.1\r\nHost: polld\r\nContent-Type: {}\r\nContent-Length: {declared}\r\n\r\n",
        multipart_type()
    );
    conn.send(head.as_bytes()).unwrap();
    let mut body = multipart(&[("title", "A poll")], &[]);
    body.truncate(body.len() - format!("--{}--\r\n", common::media::BOUNDARY).len());
    if file {
        let part = format!(
            "--{}\r\nContent-Disposition: form-data; name=\"pm\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n\x01",
            common::media::BOUNDARY
        );
        body.extend_from_slice(part.as_bytes());
    }
    conn.send(&body).unwrap();
    conn
}

/// Issue 24, item 3: four clients uploading slowly (20 KiB/s each, above the
/// minimum rate) held the 4 upload slots, and every other web creation got
/// 503 (12 of 12 over 36 s). Now a form takes a slot only once a file part's
/// content begins, there are 16 slots, one per client: forms without files
/// and another client's upload are taken while the four go on; a client's
/// second upload and a file trickled below the minimum rate are not.
#[test]
fn slow_uploads_cannot_hold_every_upload_slot() {
    let _machine = shared();
    let server = Server::start();
    let declared = 2_000_000;
    // Four slow uploaders, one per address, each 20 KiB/s after its file began.
    let stop = Arc::new(AtomicBool::new(false));
    let slow: Vec<_> = (1..=4)
        .map(|n| {
            let mut conn = begin_upload(&server.addr, loopback(0, 24, n), declared, true);
            let stop = stop.clone();
            std::thread::spawn(move || {
                let chunk = vec![b'x'; 2048];
                let mut sent = 0usize;
                while !stop.load(Ordering::Relaxed) && sent + chunk.len() < declared / 2 {
                    if conn.send(&chunk).is_err() {
                        return Err(format!("cut after {sent} bytes: {:?}", conn.response(Instant::now() + PROMPT)));
                    }
                    sent += chunk.len();
                    std::thread::sleep(Duration::from_millis(100));
                }
                // Still uploading: nothing answered yet.
                match conn.response(Instant::now() + Duration::from_millis(100)) {
                    Err(Failure::Timeout { .. }) => Ok(sent),
                    other => Err(format!("answered while uploading: {other:?}")),
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(2));
    // A client's second upload: refused at once, its one slot is taken.
    let mut second = begin_upload(&server.addr, loopback(0, 24, 1), declared, true);
    let second = second.response(Instant::now() + PROMPT).map(|r| r.status);
    // Four connections of one client that send forms without a file
    // (trickled): no slot, so none is refused as busy.
    let mut formless: Vec<Conn> =
        (0..4).map(|_| begin_upload(&server.addr, loopback(0, 24, 9), declared, false)).collect();
    let formless: Vec<String> =
        formless.iter_mut().map(|c| format!("{:?}", c.response(Instant::now() + Duration::from_millis(300)))).collect();
    // Creation forms from others while the four upload: taken (whatever they
    // then say of the form), never 503.
    let forms: Vec<u16> = (0..6)
        .map(|_| {
            let form = multipart(&[("title", "A poll"), ("q0", "Q"), ("q0o0", "A"), ("q0o1", "B")], &[]);
            let resp = server.request("POST", "/").header("Content-Type", &multipart_type()).body(form).send();
            resp.status
        })
        .collect();
    // Another client's whole upload with a file: a slot is left for it.
    let picture = common::media::png_with_text("slot", b"");
    let form = multipart(&[("title", "")], &[common::media::File("pm", "p.png", "image/png", &picture)]);
    let other = server.request("POST", "/").header("Content-Type", &multipart_type()).body(form).send();
    // A file trickled at one byte a second is cut after its 10 s head start.
    let trickled = Instant::now();
    let mut trickle = begin_upload(&server.addr, loopback(0, 24, 5), declared, true);
    let cut = loop {
        if let Ok(r) = trickle.response(Instant::now() + Duration::from_secs(1)) {
            break Some((r.status, trickled.elapsed()));
        }
        if trickled.elapsed() > Duration::from_secs(16) {
            break None;
        }
        let _ = trickle.stream.write_all(b"-");
    };
    stop.store(true, Ordering::Relaxed);
    let slow: Vec<Result<usize, String>> = slow.into_iter().map(|t| t.join().unwrap()).collect();
    eprintln!(
        "slow uploads: four at 20 KiB/s {slow:?}; second upload of one of them {second:?}; \
         formless forms {formless:?}; others' forms {forms:?}; another's upload {}; trickled file {cut:?}",
        other.status
    );
    assert!(slow.iter().all(Result::is_ok), "the four slow uploads go on: {slow:?}");
    assert!(matches!(second, Ok(503)), "one upload slot per client: {second:?}");
    assert!(formless.iter().all(|r| r.contains("Timeout")), "forms without files wait for no slot: {formless:?}");
    assert!(forms.iter().all(|&s| s != 503), "others' creation forms are not refused as busy: {forms:?}");
    assert_ne!(other.status, 503, "an upload slot is left for another client: {}", other.describe());
    assert!(matches!(cut, Some((408, t)) if t < Duration::from_secs(14)), "a trickled file was not cut: {cut:?}");
}

/// `n` keep-alive connections from `from`, each answered one `GET /api`;
/// the statuses (0: no answer in time).
fn keep_alive_round(conns: &mut [Conn]) -> Vec<u16> {
    for c in conns.iter_mut() {
        let _ = c.send(&get_api(true));
    }
    conns.iter_mut().map(|c| c.response(Instant::now() + Duration::from_secs(6)).map_or(0, |r| r.status)).collect()
}

fn open_from(addr: &str, from: IpAddr, n: usize) -> Vec<Conn> {
    (0..n)
        .map(|_| {
            let stream = connect_from(from, addr).expect("connect");
            stream.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
            Conn { stream, buf: Vec::new() }
        })
        .collect()
}

/// Whether the server has closed `conn` (EOF or reset within `wait`).
fn closed(conn: &mut Conn, wait: Duration) -> bool {
    !matches!(conn.fill(Instant::now() + wait), Err(Failure::Timeout { .. }) | Ok(true))
}

/// Issue 24, item 8 (direct mode): the per-client cap of 8 reset 56 of 64
/// keep-alive connections of a class behind one address. Now it applies
/// only under pressure: on an idle server all 64 are served, twice; once
/// the open connections near --max-connections, the heaviest client's
/// idle connections beyond 8 are shut down first and newcomers are served.
#[test]
fn a_class_behind_one_address_is_served_and_shed_only_under_pressure() {
    let _machine = shared();
    let server = Server::builder().trusted_proxy("192.0.2.1/32").arg("--max-connections").arg("80").start();
    let class = loopback(0, 30, 1);
    let mut conns = open_from(&server.addr, class, 64);
    std::thread::sleep(Duration::from_millis(200));
    let first = keep_alive_round(&mut conns);
    let second = keep_alive_round(&mut conns);
    let served = |r: &[u16]| r.iter().filter(|&&s| s == 200).count();
    eprintln!("one address: {} of 64 served, then {} of 64 again", served(&first), served(&second));
    assert_eq!((served(&first), served(&second)), (64, 64), "an idle server serves the whole class");
    // Pressure: newcomers from two addresses take the open connections to
    // 76 of 80 (7/8 is 70); under pressure each may hold 8.
    let mut newcomers = open_from(&server.addr, loopback(0, 30, 2), 6);
    newcomers.extend(open_from(&server.addr, loopback(0, 30, 3), 6));
    std::thread::sleep(Duration::from_millis(300));
    let theirs = keep_alive_round(&mut newcomers);
    let shed = conns.iter_mut().map(|c| closed(c, Duration::from_millis(300))).filter(|&c| c).count();
    eprintln!(
        "under pressure: newcomers {} of 12 served; {shed} of the class's 64 idle connections shut",
        served(&theirs)
    );
    assert_eq!(served(&theirs), 12, "newcomers are served: {theirs:?}");
    assert_eq!(shed, 56, "the heaviest client keeps its 8");
    let kept = keep_alive_round(&mut conns).into_iter().filter(|&s| s == 200).count();
    assert_eq!(kept, 8, "its 8 remaining connections still answer");
}

/// CI, 2026-11-27: during the hundred-address flood a probe was closed
/// unanswered. Every slot was held, partly by connections already told to
/// shut (busy ones have a second to finish), and a newcomer was closed at
/// once. Now it waits for a slot that a shed connection gives back.
#[test]
fn a_newcomer_waits_for_a_slot_that_a_shed_connection_gives_back() {
    let _machine = shared();
    // 16 slots; the per-client cap of 8 applies from 14 open.
    let server = Server::builder().trusted_proxy("192.0.2.1/32").arg("--max-connections").arg("16").start();
    // 14 busy connections of one client: form bodies half sent.
    let mut heavy: Vec<Conn> = (0..14).map(|_| begin_upload(&server.addr, loopback(0, 31, 1), 20_000, false)).collect();
    std::thread::sleep(Duration::from_millis(200));
    // Another client's two take the last slots; admitting them tells the
    // heavy client's 6 beyond its cap to shut, after their answer or 1 s.
    let _other = open_from(&server.addr, loopback(0, 31, 2), 2);
    std::thread::sleep(Duration::from_millis(100));
    let newcomer = probe(&server.addr, Instant::now() + PROMPT);
    eprintln!("a newcomer while every slot is held: {newcomer:?}");
    assert!(newcomer.is_ok(), "a newcomer was refused while shed connections held the slots: {newcomer:?}");
    let shed = heavy.iter_mut().map(|c| closed(c, Duration::from_millis(300))).filter(|&c| c).count();
    assert_eq!(shed, 6, "the heavy client keeps its 8 busy connections");
    // Admitting, shedding and waiting name clients by a keyed group in
    // memory: no address of theirs in polld's files or its log (whose first
    // line names the address polld listens on, 127.0.0.1, the newcomer's).
    drop((heavy, _other));
    for address in ["127.0.31.1", "127.0.31.2", "127.0.0.1"] {
        common::assert_not_in_db(server.dir(), address.as_bytes(), "a client address");
    }
    for address in ["127.0.31.1", "127.0.31.2"] {
        assert!(!server.logs().contains(address), "{address} in polld's log: {}", server.logs());
    }
}

/// polld's worker threads whose name starts with `prefix`: (CPU time in
/// nanoseconds, nice value) each, from /proc/PID/task. The CPU time is the
/// scheduler's own (`schedstat`): the tick-sampled utime misses short
/// bursts after an idle CPU.
fn workers_of(pid: u32, prefix: &str) -> Vec<(u64, i32)> {
    let mut found = Vec::new();
    for task in common::threads_named(pid, prefix) {
        let (Ok(stat), Ok(sched)) =
            (std::fs::read_to_string(task.join("stat")), std::fs::read_to_string(task.join("schedstat")))
        else {
            continue;
        };
        // Fields after the name: the state is field 3, nice field 19.
        let nice = stat[stat.rfind(')').unwrap() + 2..].split_whitespace().nth(16).unwrap().parse().unwrap();
        found.push((sched.split_whitespace().next().unwrap().parse().unwrap(), nice));
    }
    found
}

/// Issue 24, item 4: polld's writer, whose next batch every vote waits
/// for, runs 10 nice steps above the request threads where the kernel
/// allows it (root, CAP_SYS_NICE, or an RLIMIT_NICE such as systemd's
/// `LimitNICE=-10` in deploy/anonpoll.service), and says once on stderr
/// that it cannot where not; polld takes votes either way. (How much sooner a
/// quiet vote is answered is measured by `httpload fair`,
/// docs/RELIABILITY.md, not here.)
#[test]
fn the_writer_runs_above_the_request_threads_where_the_kernel_allows_it() {
    let _machine = shared();
    let server = Server::start();
    let pid = server.pid();
    // A vote first: the threads are up once it is answered.
    let poll = server.create_poll(&common::valid_poll_json());
    server.vote(&poll.id, &[Some(0)], "198.51.100.80").unwrap();
    let writer = workers_of(pid, "anonpoll-writer");
    let requests = workers_of(pid, "anonpoll-io");
    assert_eq!(writer.len(), 1, "one writer thread: {writer:?}");
    let nice = requests[0].1;
    // What this machine allows this user (polld's limits are ours): tried on
    // a thread of the test.
    let allowed =
        std::thread::spawn(|| anonpoll::priority::shift_own(-anonpoll::daemon::WRITER_RAISE).is_ok()).join().unwrap();
    // The warning is read from polld's stderr as it comes: wait for it a little.
    let says = || server.logs().matches("cannot run the writer above").count();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !allowed && says() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let says = says();
    if allowed {
        assert_eq!(
            writer[0].1,
            (nice - anonpoll::daemon::WRITER_RAISE).max(-20),
            "the writer 10 above the request threads at {nice}"
        );
        assert_eq!(says, 0, "nothing to say: {}", server.logs());
    } else {
        eprintln!("this machine refuses a higher priority: polld's writer stays at the process's");
        assert_eq!(writer[0].1, nice, "a refused raise leaves the writer as it was");
        assert_eq!(says, 1, "said once: {}", server.logs());
    }
    // The shipped units allow it.
    for unit in ["deploy/anonpoll.service", "deploy/several-nodes/polld@.service"] {
        let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(unit)).unwrap();
        let want = format!("LimitNICE=-{}", anonpoll::daemon::WRITER_RAISE);
        assert!(text.lines().any(|l| l.trim() == want), "{unit} sets {want}");
    }
}

/// The shipped setup (issue 38): polld listens on a Unix socket for the
/// proxy in front. Whoever may open the socket names the client, so
/// per-client limits hold per forwarded address; the socket is made 0660
/// and removed when polld stops; without a public base URL polld refuses
/// to start (it cannot tell it from a socket).
#[test]
fn over_a_unix_socket_the_proxy_names_clients_and_the_socket_is_owner_and_group_only() {
    let _machine = shared();
    let mut server =
        Server::builder().unix_socket().base_url("https://polls.example.org").arg("--create-limit").arg("2").start();
    assert!(server.addr.starts_with("unix:"), "{}", server.addr);
    let socket = std::path::PathBuf::from(server.addr.trim_start_matches("unix:"));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777, 0o660);
    let poll = common::valid_poll_json();
    server.create_from("198.51.100.41", &poll).assert_status(201);
    server.create_from("198.51.100.41", &poll).assert_status(201);
    server.create_from("198.51.100.41", &poll).assert_status(429);
    // Another forwarded address is another client.
    server.create_from("198.51.100.42", &poll).assert_status(201);
    // A request without a forwarded address is one local client.
    let bare = || server.request("POST", "/api/polls").json(&poll).send();
    bare().assert_status(201);
    bare().assert_status(201);
    bare().assert_status(429);
    // Links name the public address, not the socket.
    let created = server.create_from("198.51.100.43", &poll);
    assert!(created.text().contains("https://polls.example.org/p/"), "{}", created.text());
    assert!(server.terminate().success());
    assert!(!socket.exists(), "the socket file is removed at stop");

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_polld"))
        .args(["--listen", &format!("unix:{}", socket.display()), "--db"])
        .arg(server.dir().join("other.sqlite3"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs --base-url"), "{err}");
}
