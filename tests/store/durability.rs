//! An acknowledged write survives `kill -9` of polld.
//!
//! Eight client threads create polls through polld as fast as they can, four
//! more vote through polld's share page as people do (page, ballot code, form
//! POST), while a voter process (this test binary, re-executed) records
//! responses through the library's own [`anonpoll::store::Store`]. Both polld and the voter are
//! killed with SIGKILL in the middle of that load; polld is restarted on the
//! same data directory, and every write acknowledged before the kill must be
//! there, counted exactly once (in the rows and in every counter), in a
//! database that passes `PRAGMA integrity_check`. Three kill/restart cycles
//! in one test. The share page's votes take the deferred path (answered on
//! the connection after the commit).
//!
//! The voter is a process rather than a thread so that the kill hits the
//! writer thread that acknowledged the responses, as it hits polld's.

use crate::common;
use crate::common::machine;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// Client threads creating polls.
const CREATORS: usize = 8;
/// Client threads voting through the share page.
const HTTP_VOTERS: usize = 4;
/// Kill/restart cycles.
const CYCLES: u32 = 3;
/// How long each cycle's load runs in total.
const LOAD_TIME: Duration = Duration::from_millis(1500);
/// The ballot recorded for the voting poll (`valid_poll_json`: 3 + 2 options).
const BALLOT: [Option<usize>; 2] = [Some(0), Some(1)];
/// Per-request I/O timeout of the load clients.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);

/// Distinct X-Forwarded-For values (10.a.b.c), so the per-client creation
/// limit never applies (loopback is a trusted proxy by default).
static XFF_SEQ: AtomicU32 = AtomicU32::new(1);

fn next_xff() -> String {
    let n = XFF_SEQ.fetch_add(1, Ordering::Relaxed);
    format!("10.{}.{}.{}", (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff)
}

/// One `POST /api/polls` that never panics: `Ok(id)` only for a complete 201
/// whose body names the poll, `Err(reason)` for anything else (refused,
/// reset, cut short, other status).
fn try_create(addr: &str, body: &[u8]) -> Result<String, String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
    stream.set_read_timeout(Some(CLIENT_TIMEOUT)).map_err(|e| e.to_string())?;
    stream.set_write_timeout(Some(CLIENT_TIMEOUT)).map_err(|e| e.to_string())?;
    let mut req = format!(
        "POST /api/polls HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         X-Forwarded-For: {}\r\nContent-Length: {}\r\n\r\n",
        next_xff(),
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    stream.write_all(&req).map_err(|e| format!("write: {e}"))?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).map_err(|e| format!("read: {e}"))?;
    let head_end = find_bytes(&raw, b"\r\n\r\n").ok_or("no complete response head")? + 4;
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let status = head.split(' ').nth(1).unwrap_or("");
    if status != "201" {
        return Err(format!("status {status}"));
    }
    let len: usize = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("content-length")))
        .and_then(|(_, v)| v.trim().parse().ok())
        .ok_or("201 without Content-Length")?;
    let body = raw.get(head_end..head_end + len).ok_or("201 body cut short")?;
    let json: Value = serde_json::from_slice(body).map_err(|e| format!("201 body not JSON: {e}"))?;
    json["id"].as_str().map(str::to_owned).ok_or_else(|| "201 without id".to_string())
}

/// One request with `Connection: close`: the status and body of a complete
/// response, or why there was none. Never panics.
fn exchange(addr: &str, request: &[u8]) -> Result<(u16, Vec<u8>), String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
    stream.set_read_timeout(Some(CLIENT_TIMEOUT)).map_err(|e| e.to_string())?;
    stream.set_write_timeout(Some(CLIENT_TIMEOUT)).map_err(|e| e.to_string())?;
    stream.write_all(request).map_err(|e| format!("write: {e}"))?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).map_err(|e| format!("read: {e}"))?;
    let head_end = find_bytes(&raw, b"\r\n\r\n").ok_or("no complete response head")? + 4;
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let status: u16 = head.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or("no status")?;
    let len: usize = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("content-length")))
        .and_then(|(_, v)| v.trim().parse().ok())
        .ok_or("no Content-Length")?;
    let body = raw.get(head_end..head_end + len).ok_or("body cut short")?;
    Ok((status, body.to_vec()))
}

/// One vote as a person casts it: the share page, its ballot code, the form.
/// `Ok` only for the thank-you page.
fn try_vote(addr: &str, poll: &str) -> Result<(), String> {
    let xff = next_xff();
    let get = format!("GET /p/{poll} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nX-Forwarded-For: {xff}\r\n\r\n");
    let (status, page) = exchange(addr, get.as_bytes())?;
    if status != 200 {
        return Err(format!("share page: status {status}"));
    }
    let ballot = ballot_code(&String::from_utf8_lossy(&page)).ok_or("no ballot code")?;
    let mut form = form_urlencoded::Serializer::new(String::new());
    for (q, choice) in BALLOT.iter().enumerate() {
        if let Some(o) = choice {
            form.append_pair(&format!("q{q}"), &o.to_string());
        }
    }
    let body = form.append_pair("ballot", &ballot).finish();
    let post = format!(
        "POST /p/{poll} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nX-Forwarded-For: {xff}\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    match exchange(addr, post.as_bytes())? {
        (200, _) => Ok(()),
        (status, _) => Err(format!("vote: status {status}")),
    }
}

/// What one cycle's load achieved.
#[derive(Debug, Default)]
struct Load {
    created: Vec<String>,
    create_failures: usize,
    first_create_failure: Option<String>,
    /// Failed creations that ended before the kill began, by reason.
    failures_before_kill: std::collections::BTreeMap<String, usize>,
    votes_ok: u64,
    votes_failed: u64,
    /// Votes through polld's share page that got the thank-you page.
    http_votes_ok: u64,
    http_votes_failed: u64,
    first_vote_failure: Option<String>,
}

/// Runs the load for [`LOAD_TIME`] and SIGKILLs polld `kill_after` into it.
/// Returns what was acknowledged and how polld ended.
fn load_and_kill(server: Server, vote_poll: &str, kill_after: Duration) -> (Load, tempfile::TempDir) {
    let addr = server.addr.clone();
    let db = server.db_path();
    let stop = Arc::new(AtomicBool::new(false));
    let killed = Arc::new(AtomicBool::new(false));
    let load = Arc::new(Mutex::new(Load::default()));
    let body = serde_json::to_vec(&valid_poll_json()).unwrap();

    let mut threads = Vec::new();
    for _ in 0..CREATORS {
        let (addr, stop, load, body) = (addr.clone(), stop.clone(), load.clone(), body.clone());
        let killed = killed.clone();
        threads.push(std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let result = try_create(&addr, &body);
                let mut load = load.lock().unwrap();
                match result {
                    Ok(id) => load.created.push(id),
                    Err(e) => {
                        load.create_failures += 1;
                        if !killed.load(Ordering::SeqCst) {
                            *load.failures_before_kill.entry(e.clone()).or_default() += 1;
                        }
                        load.first_create_failure.get_or_insert(e);
                        drop(load);
                        // polld is gone or refusing: do not spin.
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
            }
        }));
    }
    for _ in 0..HTTP_VOTERS {
        let (addr, stop, load, poll) = (addr.clone(), stop.clone(), load.clone(), vote_poll.to_owned());
        threads.push(std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let ok = try_vote(&addr, &poll).is_ok();
                let mut load = load.lock().unwrap();
                if ok {
                    load.http_votes_ok += 1;
                } else {
                    load.http_votes_failed += 1;
                    drop(load);
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }));
    }
    let (mut voter, voter_reader) = spawn_voter(&db, vote_poll);
    let start = Instant::now();
    std::thread::sleep(kill_after);
    let pid = server.pid();
    // Failures seen from here on may be the kill's doing.
    killed.store(true, Ordering::SeqCst);
    let kill = Command::new("kill").arg("-KILL").arg(pid.to_string()).status().expect("run kill");
    assert!(kill.success(), "kill -KILL {pid} failed");
    // The voter writes to SQLite itself: kill it too (`Child::kill` is SIGKILL).
    voter.kill().expect("SIGKILL the voter");
    let voter_status = voter.wait().expect("reap the voter");
    assert_eq!(voter_status.signal(), Some(9), "the voter process ended before the kill: {voter_status:?}");
    let votes = voter_reader.join().expect("voter reader panicked");
    // The load keeps hammering the dead server for the rest of the window.
    std::thread::sleep(LOAD_TIME.saturating_sub(start.elapsed()).max(Duration::from_millis(100)));
    stop.store(true, Ordering::SeqCst);
    for t in threads {
        t.join().expect("load thread panicked");
    }

    let mut server = server;
    // polld is already dead: this only reaps it (a signal to a zombie is a no-op).
    let status = server.terminate();
    assert_eq!(status.signal(), Some(9), "polld did not die of SIGKILL but {status:?}; logs:\n{}", server.logs());
    // The child is reaped already, so this only hands back the data directory.
    let dir = server.into_dir();
    let mut load = Arc::try_unwrap(load).expect("load threads joined").into_inner().unwrap();
    load.votes_ok = votes.acked;
    load.votes_failed = votes.failed;
    load.first_vote_failure = votes.first_failure;
    (load, dir)
}

// ---------------------------------------------------------------------------
// The voter: a separate process, so that SIGKILL hits its writer thread too
// ---------------------------------------------------------------------------

/// Environment of the voter process (this test binary, re-executed).
const VOTER_DB: &str = "ANONPOLL_TEST_VOTER_DB";
const VOTER_POLL: &str = "ANONPOLL_TEST_VOTER_POLL";
/// The voter stops by itself after this long, should nobody kill it.
const VOTER_MAX_LIFE: Duration = Duration::from_secs(10);

/// Not a test: the body of the voter process started by [`spawn_voter`]. It
/// records responses through `anonpoll::store::Store::record_response` until
/// it is killed, and prints `ack` on stdout after each acknowledged one.
#[test]
#[ignore = "helper process of acknowledged_writes_survive_kill_9"]
fn voter_process() {
    let _machine = machine::alone();
    let (Ok(db), Ok(id)) = (std::env::var(VOTER_DB), std::env::var(VOTER_POLL)) else {
        panic!("run only by acknowledged_writes_survive_kill_9 (needs {VOTER_DB} and {VOTER_POLL})");
    };
    let store = common::open_store(Path::new(&db)).expect("voter: open the store");
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready").and_then(|()| out.flush()).expect("voter: stdout");
    let start = Instant::now();
    while start.elapsed() < VOTER_MAX_LIFE {
        let line = match store.record_response(&id, &BALLOT) {
            Ok(()) => "ack".to_string(),
            Err(e) => format!("fail {e}"),
        };
        writeln!(out, "{line}").and_then(|()| out.flush()).expect("voter: stdout");
    }
}

#[derive(Debug, Default)]
struct Votes {
    acked: u64,
    failed: u64,
    first_failure: Option<String>,
}

/// Starts the voter process; waits until its first response is answered
/// (polld's writer, busy with the load, may keep the write lock from it for a
/// while), so that the kill always comes in the middle of its votes. The
/// thread counts the complete `ack` lines it printed, until it dies.
fn spawn_voter(db: &Path, poll: &str) -> (std::process::Child, std::thread::JoinHandle<Votes>) {
    let mut child = Command::new(std::env::current_exe().expect("test binary path"))
        .args([
            &common::libtest_name(module_path!(), "voter_process"),
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
            "--quiet",
        ])
        .env(VOTER_DB, db)
        .env(VOTER_POLL, poll)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the voter process");
    let mut lines = BufReader::new(child.stdout.take().expect("voter stdout"));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (first_tx, first_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut votes = Votes::default();
        let mut ready = Some(ready_tx);
        let mut first = Some(first_tx);
        let mut line = String::new();
        // Ends at EOF, when the voter is dead. A line cut by the kill
        // (no newline) is not an acknowledgement.
        while lines.read_line(&mut line).is_ok_and(|n| n > 0) {
            match line.strip_suffix('\n') {
                Some("ready") => {
                    if let Some(tx) = ready.take() {
                        let _ = tx.send(());
                    }
                }
                Some("ack") => votes.acked += 1,
                Some(other) if other.starts_with("fail ") => {
                    votes.failed += 1;
                    votes.first_failure.get_or_insert_with(|| other.to_string());
                }
                _ => {}
            }
            if votes.acked + votes.failed > 0
                && let Some(tx) = first.take()
            {
                let _ = tx.send(());
            }
            line.clear();
        }
        votes
    });
    if ready_rx.recv_timeout(Duration::from_secs(10)).is_err() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the voter process did not open the store within 10 s");
    }
    if first_rx.recv_timeout(Duration::from_secs(10)).is_err() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the voter process had no response answered within 10 s of opening the store");
    }
    (child, reader)
}

fn integrity_check(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).expect("open db");
    conn.busy_timeout(Duration::from_secs(5)).unwrap();
    let rows: Vec<String> = conn
        .prepare("PRAGMA integrity_check")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    rows.join("; ")
}

/// GETs every id from 8 threads; returns the ids that did not answer 200.
fn missing_polls(server: &Server, ids: &[String]) -> Vec<(String, u16)> {
    let chunk = ids.len().div_ceil(8).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = ids
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .filter_map(|id| {
                            let resp = server.get(&format!("/api/polls/{id}"));
                            (resp.status != 200).then(|| (id.clone(), resp.status))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("checker panicked")).collect()
    })
}

#[test]
fn acknowledged_writes_survive_kill_9() {
    let _machine = machine::alone();
    let test_start = Instant::now();
    let mut server = Server::start();
    let vote_poll = server.create_default();

    let mut acknowledged: Vec<String> = Vec::new();
    let mut votes_acknowledged: u64 = 0;
    // Responses on disk before the cycle: the base each cycle's count adds to.
    let mut votes_stored: u64 = 0;
    let mut report = Vec::new();

    for cycle in 0..CYCLES {
        // Kill at a different point of the load each time: 0.8 s, 1.1 s, 1.4 s.
        let kill_after = Duration::from_millis(800 + 300 * u64::from(cycle));
        let (load, dir) = load_and_kill(server, &vote_poll.id, kill_after);

        assert!(
            !load.created.is_empty(),
            "cycle {cycle}: no poll creation was acknowledged before the kill (first failure: {:?})",
            load.first_create_failure
        );
        assert!(
            load.votes_ok > 0,
            "cycle {cycle}: no response was recorded (first failure: {:?})",
            load.first_vote_failure
        );
        assert!(load.create_failures > 0, "cycle {cycle}: no creation failed, so the load did not run into the kill");
        assert!(load.http_votes_ok > 0, "cycle {cycle}: no vote through the share page was acknowledged");
        acknowledged.extend(load.created.iter().cloned());
        let acked = load.votes_ok + load.http_votes_ok;
        votes_acknowledged += acked;
        // Each voter (the voter process and every share-page voter) has at
        // most one vote in flight, so at most that many can be committed
        // without having been acknowledged when the kill comes.
        let votes_expected = votes_stored + acked..=votes_stored + acked + 1 + HTTP_VOTERS as u64;

        server = Server::builder().in_dir(dir).start();

        let missing = missing_polls(&server, &acknowledged);
        assert!(
            missing.is_empty(),
            "cycle {cycle}: {} of {} acknowledged polls are gone after kill -9, e.g. {:?}",
            missing.len(),
            acknowledged.len(),
            &missing[..missing.len().min(5)]
        );

        let results = server.get_auth(&vote_poll.results_path(), &vote_poll.token);
        results.assert_status(200);
        let total = results.json()["totalResponses"].as_u64().expect("totalResponses");
        assert!(
            votes_expected.contains(&total),
            "cycle {cycle}: totalResponses is {total} after kill -9; expected {votes_expected:?} \
             ({votes_stored} before the cycle + {acked} acknowledged in it, + at most one in flight per voter)"
        );
        // The sealed ballots and counts, read with the key file.
        let audit = audit(server.dir());
        let ballots = audit.ballots(&vote_poll.id).expect("read the ballots");
        let rows = ballots.len() as u64;
        assert_eq!(rows, total, "cycle {cycle}: stored ballots vs totalResponses ({votes_expected:?} expected)");
        // The counts are written once per batch: after a kill they must
        // still agree with the ballots, one for one.
        let tallies = audit.tallies(&vote_poll.id).expect("read the counts");
        assert_eq!(tallies.total, rows, "cycle {cycle}: the total vs the stored ballots");
        assert_eq!(tallies.by_day.iter().map(|(_, n)| n).sum::<u64>(), rows, "cycle {cycle}: counts by day");
        let mut recount = tallies.votes.iter().map(|v| vec![0u64; v.len()]).collect::<Vec<_>>();
        for b in &ballots {
            let answers: Vec<Option<usize>> = serde_json::from_str(&b.choices).expect("single choices");
            for (q, a) in answers.iter().enumerate() {
                if let Some(o) = a {
                    recount[q][*o] += 1;
                }
            }
        }
        assert_eq!(tallies.votes, recount, "cycle {cycle}: the counts vs the stored ballots");
        let in_flight = total - votes_stored - acked;
        votes_stored = total;

        let integrity = integrity_check(&server.db_path());
        assert_eq!(integrity, "ok", "cycle {cycle}: PRAGMA integrity_check after kill -9");

        report.push(format!(
            "cycle {cycle}: killed at {kill_after:?}; {} polls acknowledged ({} creations failed, first: {:?}; \
             before the kill: {:?}); \
             {} responses acknowledged through the store ({} failed, first: {:?}), {} through the share page \
             ({} failed), and {in_flight} committed unacknowledged; all present after restart",
            load.created.len(),
            load.create_failures,
            load.first_create_failure,
            load.failures_before_kill,
            load.votes_ok,
            load.votes_failed,
            load.first_vote_failure,
            load.http_votes_ok,
            load.http_votes_failed,
        ));
    }
    eprintln!(
        "{}\ntotal: {} polls, {} responses acknowledged, {votes_stored} stored, {:?}",
        report.join("\n"),
        acknowledged.len(),
        votes_acknowledged,
        test_start.elapsed()
    );
}
