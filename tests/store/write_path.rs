//! The write path of votes from the web, over HTTP: the answer to a vote is
//! built on the connection once the writer has committed (no worker waits
//! through the fsync), so these tests hold the database's write lock from
//! outside to stall the writer and watch what clients get meanwhile:
//! - a full writer queue answers 503 with `Retry-After` at once, and the
//!   queued votes are answered (200) once the writer can commit;
//! - a vote whose client hung up while it waited is committed all the same,
//!   and the client can come back and vote again on a keep-alive connection;
//! - the writer's poll cache notices a poll closed by `pollctl` (another
//!   process): the next vote is refused, also when it was already queued
//!   (the refusal is then built after the commit).
//!
//! The server runs in process (the daemon's wiring, with a small writer
//! queue), so the queue's size is known.

use crate::common::machine;

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::path::PathBuf;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use anonpoll::api::{Api, Worker};

use anonpoll::client::TrustedProxies;
use anonpoll::day::Day;
use anonpoll::domain::{Ballot, NewPoll};
use anonpoll::error::Error;
use anonpoll::http::Request;
use anonpoll::media::Limits;

use anonpoll::secret::{AdminToken, PollId};
use anonpoll::server::{Server, ServerConfig, Shutdown};
use anonpoll::store::{Store, WriterConfig};
use anonpoll::web::Web;
use anonpoll::web::uploads::Uploads;
use serde_json::json;

/// Writes the writer queue holds beyond the one it is committing.
const QUEUE: usize = 2;

fn new_poll() -> NewPoll {
    NewPoll::from_json(&json!({
        "title": "Write path", "lang": "en", "expiryDays": 7, "resultsPublic": true,
        "questions": [{"label": "Q1", "options": ["a", "b", "c"]}, {"label": "Q2", "options": ["x", "y"]}]
    }))
    .unwrap()
}

struct Polld {
    _dir: tempfile::TempDir,
    db: PathBuf,
    addr: SocketAddr,
    poll: String,
    stop: Shutdown,
    thread: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
}

impl Drop for Polld {
    fn drop(&mut self) {
        self.stop.trigger();
        if let Some(t) = self.thread.take() {
            t.join().unwrap().unwrap();
        }
    }
}

/// polld's wiring (see `daemon.rs`) with a writer that commits one write at
/// a time and queues [`QUEUE`] more.
fn start() -> Polld {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.sqlite3");
    let config = WriterConfig {
        queue_capacity: QUEUE,
        max_batch: 1,
        busy_timeout: Duration::from_secs(30),
        ..WriterConfig::default()
    };
    let store = Store::open_db(&db, &anonpoll::store::Keys::at(&db.with_extension("keys")), config).unwrap();
    let app = crate::common::in_process::unthrottled_app(store);
    let created =
        app.session().unwrap().create(IpAddr::V4(Ipv4Addr::LOCALHOST), &new_poll(), &[], Day::today()).unwrap();
    let uploads = Uploads::new(Limits::default(), 1 << 20, 1 << 20).unwrap();
    let web = Web::new(app.clone(), uploads).unwrap();
    let api = Api::new(app.clone()).unwrap();
    let server = Server::bind("127.0.0.1:0", ServerConfig::new(4, TrustedProxies::loopback(), 64 * 1024)).unwrap();
    let addr = server.address().tcp().unwrap();
    let stop = server.shutdown_handle();
    let thread = std::thread::spawn(move || {
        server.run(move || {
            let mut api = api.worker()?;
            let mut pages = web.worker()?;
            Ok(move |req: &Request| if Worker::owns(&req.path) { api.handle(req) } else { pages.handle(req) })
        })
    });
    Polld { _dir: dir, db, addr, poll: created.poll.id.to_string(), stop, thread: Some(thread) }
}

/// Holds the database's write lock, as another process's long write would:
/// the writer thread waits for it with the queued writes.
struct WriteLock(rusqlite::Connection);

impl WriteLock {
    fn take(db: &PathBuf) -> WriteLock {
        let conn = rusqlite::Connection::open(db).unwrap();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        WriteLock(conn)
    }

    fn release(self) {
        self.0.execute_batch("ROLLBACK").unwrap();
    }
}

struct Answer {
    status: u16,
    head: String,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Reads one response (with a Content-Length body) from a keep-alive stream.
fn read_answer(s: &mut TcpStream) -> Answer {
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&raw[..end]).into_owned();
            let len: usize = head
                .lines()
                .find_map(|l| l.split_once(':').filter(|(k, _)| k.trim().eq_ignore_ascii_case("content-length")))
                .map(|(_, v)| v.trim().parse().unwrap())
                .unwrap_or(0);
            while raw.len() < end + 4 + len {
                let n = s.read(&mut buf).unwrap();
                assert!(n > 0, "connection closed mid-body");
                raw.extend_from_slice(&buf[..n]);
            }
            let status = head.split(' ').nth(1).unwrap().parse().unwrap();
            let body = String::from_utf8_lossy(&raw[end + 4..end + 4 + len]).into_owned();
            return Answer { status, head, body };
        }
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "connection closed before a response head");
        raw.extend_from_slice(&buf[..n]);
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s
}

fn get(s: &mut TcpStream, path: &str) -> Answer {
    write!(s, "GET {path} HTTP/1.1\r\nHost: polls.test\r\n\r\n").unwrap();
    read_answer(s)
}

/// A fresh one-time ballot code from the share page.
fn ballot(addr: SocketAddr, poll: &str) -> String {
    let page = get(&mut connect(addr), &format!("/p/{poll}"));
    assert_eq!(page.status, 200);
    let code = page.body.split("name=\"ballot\"").nth(1).and_then(|r| r.split("value=\"").nth(1)).unwrap();
    code.split('"').next().unwrap().to_owned()
}

fn send_vote(s: &mut TcpStream, poll: &str, ballot: &str) {
    let body = format!("q0=1&q1=0&ballot={ballot}");
    write!(
        s,
        "POST /p/{poll} HTTP/1.1\r\nHost: polls.test\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
}

fn total_responses(addr: SocketAddr, poll: &str) -> u64 {
    let r = get(&mut connect(addr), &format!("/api/polls/{poll}/results"));
    assert_eq!(r.status, 200, "{}", r.body);
    serde_json::from_str::<serde_json::Value>(&r.body).unwrap()["totalResponses"].as_u64().unwrap()
}

#[test]
fn a_full_writer_queue_answers_503_with_retry_after_and_queued_votes_are_answered_after_the_commit() {
    let _machine = machine::shared();
    let polld = start();
    let (addr, poll) = (polld.addr, polld.poll.clone());
    const VOTES: usize = 6;
    let ballots: Vec<String> = (0..VOTES).map(|_| ballot(addr, &poll)).collect();
    let lock = WriteLock::take(&polld.db);
    let (tx, rx) = mpsc::channel();
    let clients: Vec<_> = ballots
        .into_iter()
        .map(|b| {
            let (tx, poll) = (tx.clone(), poll.clone());
            std::thread::spawn(move || {
                let mut s = connect(addr);
                send_vote(&mut s, &poll, &b);
                let _ = tx.send(read_answer(&mut s));
            })
        })
        .collect();
    drop(tx);
    // One write is being committed (stalled), QUEUE wait: the others are
    // refused at once, while the lock is still held.
    let mut early = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while early.len() < VOTES - 1 - QUEUE {
        let left = deadline.saturating_duration_since(Instant::now());
        early.push(rx.recv_timeout(left).expect("refusals come at once, while the writer is stalled"));
    }
    // Anything else that arrives within a moment must be a refusal too.
    while let Ok(a) = rx.recv_timeout(Duration::from_millis(500)) {
        early.push(a);
    }
    for a in &early {
        assert_eq!(a.status, 503, "nothing is acknowledged while the writer cannot commit: {}", a.head);
        assert_eq!(a.header("retry-after"), Some("1"), "{}", a.head);
        assert!(a.body.contains("name=\"ballot\""), "the form comes back to send again");
    }
    lock.release();
    let late: Vec<Answer> = rx.iter().collect();
    for c in clients {
        c.join().unwrap();
    }
    assert_eq!(early.len() + late.len(), VOTES);
    assert!(!late.is_empty());
    for a in &late {
        assert_eq!(a.status, 200, "a queued vote is answered once committed: {}", a.head);
    }
    assert_eq!(total_responses(addr, &poll), late.len() as u64, "acknowledged votes = stored votes");
}

#[test]
fn a_vote_whose_client_hung_up_is_committed_and_the_client_can_vote_again() {
    let _machine = machine::shared();
    let polld = start();
    let (addr, poll) = (polld.addr, polld.poll.clone());
    let (first, second, third) = (ballot(addr, &poll), ballot(addr, &poll), ballot(addr, &poll));
    let lock = WriteLock::take(&polld.db);
    {
        let mut s = connect(addr);
        send_vote(&mut s, &poll, &first);
        // Long enough for a worker to queue the vote; then hang up.
        std::thread::sleep(Duration::from_millis(500));
    }
    lock.release();
    // The client comes back on one keep-alive connection: two votes in a row,
    // then the results, all answered on that connection.
    let mut s = connect(addr);
    send_vote(&mut s, &poll, &second);
    let a = read_answer(&mut s);
    assert_eq!(a.status, 200, "{}", a.head);
    send_vote(&mut s, &poll, &third);
    let a = read_answer(&mut s);
    assert_eq!(a.status, 200, "{}", a.head);
    let results = get(&mut s, &format!("/api/polls/{poll}/results"));
    let total = serde_json::from_str::<serde_json::Value>(&results.body).unwrap()["totalResponses"].as_u64();
    assert_eq!(total, Some(3), "the vote of the client that hung up is counted once");
    // The used ballot stays used.
    send_vote(&mut s, &poll, &first);
    assert_eq!(read_answer(&mut s).status, 409);
}

/// A ballot of [`new_poll`], checked as polld checks a vote before queueing it.
fn checked(choices: &[Option<usize>]) -> Ballot {
    Ballot::of_choices(&new_poll().questions, choices).unwrap()
}

#[test]
fn a_poll_closed_by_pollctl_refuses_the_next_vote() {
    let _machine = machine::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.sqlite3");
    let store =
        Store::open_db(&db, &anonpoll::store::Keys::at(&db.with_extension("keys")), Default::default()).unwrap();
    let id = PollId::generate().unwrap();
    let token = AdminToken::generate().unwrap();
    let today = Day::today();
    store.create_poll(&id, &token.hash(), &new_poll(), &[], today).unwrap();
    // A vote first: the writer now knows the poll as open.
    store.cast(&id, checked(&[Some(0), None]), today).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pollctl"))
        .arg("--db")
        .arg(&db)
        .arg("--keys")
        .arg(db.with_extension("keys"))
        .args(["close", id.as_str(), "--token", token.expose()])
        .env_remove("POLL_ADMIN_TOKEN")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(matches!(store.cast(&id, checked(&[Some(1), None]), today), Err(Error::Closed)));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pollctl"))
        .arg("--db")
        .arg(&db)
        .arg("--keys")
        .arg(db.with_extension("keys"))
        .args(["delete", id.as_str(), "--token", token.expose()])
        .env_remove("POLL_ADMIN_TOKEN")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(matches!(store.cast(&id, checked(&[Some(1), None]), today), Err(Error::NotFound)));
}

#[test]
fn a_vote_queued_while_another_process_closes_the_poll_is_refused_after_the_commit() {
    let _machine = machine::shared();
    let polld = start();
    let (addr, poll) = (polld.addr, polld.poll.clone());
    let (first, second) = (ballot(addr, &poll), ballot(addr, &poll));
    // A first vote: the writer now knows the poll as open.
    let mut s = connect(addr);
    send_vote(&mut s, &poll, &first);
    assert_eq!(read_answer(&mut s).status, 200);
    // The next vote passes the page's checks (the poll is open) and waits in
    // the queue while another process closes the poll and commits.
    // (It reads and seals the poll's document with the key file, as a
    // pollctl of the same installation would.)
    let audit = anonpoll::store::audit::Audit::open(&polld.db, &polld.db.with_extension("keys")).unwrap();
    let closed = audit.edited_document(&poll, |doc| doc["closed"] = serde_json::json!(true)).unwrap();
    let other = rusqlite::Connection::open(&polld.db).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut s = connect(addr);
    send_vote(&mut s, &poll, &second);
    std::thread::sleep(Duration::from_millis(500));
    other.execute("UPDATE sealed_polls SET body = ?2 WHERE id = ?1", rusqlite::params![poll, closed]).unwrap();
    other.execute_batch("COMMIT").unwrap();
    let a = read_answer(&mut s);
    assert_eq!(a.status, 409, "{}", a.head);
    assert!(a.body.contains("notice closed"), "the answer shows the poll as closed");
    assert!(!a.body.contains("name=\"ballot\""), "no form to send again");
    assert_eq!(total_responses(addr, &poll), 1, "the refused vote was not stored");
}
