//! Several polld nodes on one PostgreSQL database (issue 23): what a person
//! running anonpoll on two machines relies on.
//!
//! - a vote form fetched from one node counts when sent to the other, and a
//!   form sent to both counts once (its nonce is spent in the ballot's
//!   transaction, on whichever node);
//! - counts stay exact when votes pour into both nodes at once (each batch
//!   locks its polls' rows and reads their counts afresh);
//! - a node killed with -9 loses only votes it had not acknowledged;
//! - a node whose database goes away answers 503 with Retry-After (never a
//!   500) and recovers by itself when it comes back;
//! - with a synchronous standby, stopping the primary and promoting the
//!   standby loses no acknowledged vote, and the nodes answer 503 meanwhile
//!   and recover by themselves (their URL names both servers);
//! - no copy PostgreSQL makes (data directory, WAL, WAL archive, standby,
//!   base backup) holds a poll's title, question, option or a client's
//!   address, in clear.
//!
//! Each test starts its own throwaway cluster (tests/common/pg.rs); without
//! PostgreSQL they skip visibly, and fail under `CI=true`.

use crate::common;
use crate::common::machine;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

/// Two nodes on `url`, sharing one key file's state: the first node creates
/// it, the second gets a copy (as docs/OPERATIONS.md says: copied from a live
/// node, never from a backup).
fn two_nodes(url: &str, dir: &Path) -> (Server, Server) {
    let (keys_a, keys_b) = (dir.join("a.keys"), dir.join("b.keys"));
    let a = Server::builder().database(url, &keys_a).start();
    std::fs::copy(&keys_a, &keys_b).expect("copy the key file to the second node");
    let b = Server::builder().database(url, &keys_b).start();
    (a, b)
}

fn poll_body(title: &str) -> Value {
    json!({
        "title": title,
        "lang": "en",
        "expiryDays": 7,
        "resultsVisibility": "public",
        "questions": [{"label": format!("{title} question"), "options": [format!("{title} yes"), format!("{title} no")]}]
    })
}

/// The total of votes the results of `poll` count, read from `node`.
fn total(node: &Server, poll: &str) -> u64 {
    let r = node.get(&format!("/api/polls/{poll}/results")).json();
    r["totalResponses"].as_u64().unwrap_or_else(|| panic!("no total in {r}"))
}

/// A vote form of `poll` fetched from `from`, as `client`.
fn form_from(from: &Server, poll: &str, client: &str) -> String {
    let page = from.request("GET", &format!("/p/{poll}")).xff(client).send();
    assert_eq!(page.status, 200, "share page: {}", from.logs());
    ballot_code(&page.text()).expect("a vote form")
}

/// Sends the form `ballot` for option `choice` of `poll` to `to`.
fn send_form(to: &Server, poll: &str, ballot: &str, choice: usize, client: &str) -> Response {
    let body = format!("q0={choice}&ballot={ballot}");
    to.request("POST", &format!("/p/{poll}"))
        .xff(client)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(body.into_bytes())
        .send()
}

fn counted(resp: &Response) -> bool {
    resp.status == 200 && resp.text().contains("name=\"ballot\"").not()
}

trait Not {
    fn not(self) -> bool;
}

impl Not for bool {
    fn not(self) -> bool {
        !self
    }
}

#[test]
fn a_form_from_one_node_counts_on_the_other_once_and_counts_stay_exact_under_load() {
    let _machine = machine::shared();
    let Some(cluster) = PgCluster::start() else { return };
    cluster.create_db("nodes");
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_nodes(&cluster.url("nodes"), dir.path());
    let poll = a.create_poll(&poll_body("Shared"));

    // Fetched from A, sent to B: counts.
    let ballot = form_from(&a, &poll.id, "198.51.100.1");
    let first = send_form(&b, &poll.id, &ballot, 0, "198.51.100.1");
    assert!(counted(&first), "a form from the other node must count: {} {}", first.status, first.text());
    // The same form again, to A (the node that issued it) and to B: once.
    let again_a = send_form(&a, &poll.id, &ballot, 1, "198.51.100.1");
    let again_b = send_form(&b, &poll.id, &ballot, 1, "198.51.100.1");
    assert_eq!(
        total(&a, &poll.id),
        1,
        "a form sent to two nodes counts once ({} / {})",
        again_a.status,
        again_b.status
    );
    assert!(
        again_a.text().contains("already") || again_a.status == 409,
        "A says the form was used: {}",
        again_a.status
    );

    // Votes into both nodes at once, forms fetched from either.
    const VOTES: usize = 2_000;
    let next = AtomicUsize::new(0);
    let ok = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for t in 0..16 {
            let (a, b, next, ok, id) = (&a, &b, &next, &ok, &poll.id);
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= VOTES {
                        break;
                    }
                    // Clients told apart by address, so no throttle holds them.
                    let client = format!("10.{}.{}.{}", t, (i >> 8) & 255, i & 255);
                    let (from, to) = if i % 3 == 0 {
                        (a, b)
                    } else if i % 3 == 1 {
                        (b, a)
                    } else {
                        (a, a)
                    };
                    let ballot = form_from(from, id, &client);
                    let resp = send_form(to, id, &ballot, i % 2, &client);
                    assert!(counted(&resp), "vote {i}: {} {}", resp.status, resp.text());
                    ok.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    assert_eq!(ok.load(Ordering::Relaxed), VOTES);
    assert_eq!(total(&a, &poll.id), VOTES as u64 + 1, "read from A");
    assert_eq!(total(&b, &poll.id), VOTES as u64 + 1, "read from B");
    let r = b.get(&format!("/api/polls/{}/results", poll.id)).json();
    let counts: u64 =
        r["questions"][0]["options"].as_array().unwrap().iter().map(|o| o["count"].as_u64().unwrap()).sum();
    assert_eq!(counts, VOTES as u64 + 1, "the options' counts add up: {r}");
}

#[test]
fn healthz_is_ok_while_the_database_answers_and_503_while_it_does_not() {
    let _machine = machine::shared();
    let Some(cluster) = PgCluster::start() else { return };
    cluster.create_db("health");
    let dir = tempfile::tempdir().unwrap();
    let node = Server::builder().database(&cluster.url("health"), &dir.path().join("keys")).start();
    let ok = node.get("/healthz");
    assert_eq!((ok.status, ok.text()), (200, format!("ok\nkey state: {}\n", today())));
    cluster.stop();
    let down = node.get("/healthz");
    assert_eq!(down.status, 503, "{}", down.text());
    assert!(down.header("retry-after").is_some(), "503 says when to retry");
    let page = node.get("/api/polls/AAAAAAAAAAAAAAAA");
    assert_eq!(page.status, 503, "a read while the database is away: {}", page.text());
    let create = node.post_json("/api/polls", &poll_body("Away"));
    assert_eq!(create.status, 503, "a write while the database is away: {}", create.text());
    assert!(!node.logs().contains("panicked"), "{}", node.logs());
    cluster.start_again();
    let deadline = Instant::now() + Duration::from_secs(20);
    while node.get("/healthz").status != 200 {
        assert!(Instant::now() < deadline, "the node did not recover by itself: {}", node.logs());
        std::thread::sleep(Duration::from_millis(200));
    }
    let back = node.post_json("/api/polls", &poll_body("Back"));
    assert_eq!(back.status, 201, "writes work again without a restart: {}", node.logs());
}

#[test]
fn a_node_killed_with_9_loses_only_votes_it_had_not_acknowledged() {
    let _machine = machine::shared();
    let Some(cluster) = PgCluster::start() else { return };
    cluster.create_db("kill");
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_nodes(&cluster.url("kill"), dir.path());
    let poll = a.create_poll(&poll_body("Killed"));
    let acked = AtomicUsize::new(0);
    let unknown = AtomicUsize::new(0);
    let killed = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for t in 0..8 {
            let (a, b, acked, unknown, killed, id) = (&a, &b, &acked, &unknown, &killed, &poll.id);
            s.spawn(move || {
                for i in 0..150 {
                    let client = format!("10.9.{t}.{i}");
                    let to = if t % 2 == 0 { a } else { b };
                    // A killed node refuses connections: the harness's
                    // client panics then, which here means "no answer".
                    let page = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        to.request("GET", &format!("/p/{id}")).xff(&client).send()
                    }));
                    let Some(ballot) = page.ok().filter(|p| p.status == 200).and_then(|p| ballot_code(&p.text()))
                    else {
                        continue;
                    };
                    let resp = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        send_form(to, id, &ballot, i % 2, &client)
                    }));
                    if resp.as_ref().is_ok_and(counted) {
                        acked.fetch_add(1, Ordering::Relaxed);
                    } else if killed.load(Ordering::Relaxed) {
                        // Sent, no answer: stored or not, nobody was told.
                        unknown.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
        std::thread::sleep(Duration::from_millis(1500));
        killed.store(true, Ordering::Relaxed);
        let _ = std::process::Command::new("kill").args(["-9", &a.pid().to_string()]).status();
    });
    let (acked, unknown) = (acked.load(Ordering::Relaxed) as u64, unknown.load(Ordering::Relaxed) as u64);
    let counted = total(&b, &poll.id);
    assert!(acked > 100, "the test voted ({acked})");
    assert!(
        counted >= acked && counted <= acked + unknown,
        "every acknowledged vote counted, none twice: {counted} counted, {acked} acknowledged, {unknown} unanswered"
    );
}

#[test]
fn promoting_a_synchronous_standby_loses_no_acknowledged_vote_and_the_nodes_recover_by_themselves() {
    let _machine = machine::shared();
    let Some(primary) = PgCluster::start() else { return };
    primary.create_db("failover");
    let standby = primary.synchronous_standby();
    // Both servers in the nodes' URL; only the one that takes writes is
    // used: after the promotion, that is the former standby.
    let url = format!(
        "postgresql://postgres@127.0.0.1:{},127.0.0.1:{}/failover?target_session_attrs=read-write",
        primary.port(),
        standby.port()
    );
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_nodes(&url, dir.path());
    let poll = a.create_poll(&poll_body("Failover"));
    let mut acked = 0;
    for i in 0..40 {
        let node = if i % 2 == 0 { &a } else { &b };
        let client = format!("10.7.0.{i}");
        if counted(&send_form(node, &poll.id, &form_from(node, &poll.id, &client), i % 2, &client)) {
            acked += 1;
        }
    }
    assert_eq!(acked, 40);
    primary.kill();
    // Meanwhile: 503 with Retry-After, never a 500.
    let during = a.get(&format!("/api/polls/{}", poll.id));
    assert_eq!(during.status, 503, "{}", during.text());
    assert!(during.header("retry-after").is_some());
    assert_eq!(b.get("/healthz").status, 503);
    standby.promote();
    let deadline = Instant::now() + Duration::from_secs(30);
    for node in [&a, &b] {
        while node.get("/healthz").status != 200 {
            assert!(Instant::now() < deadline, "a node did not recover: {}", node.logs());
            std::thread::sleep(Duration::from_millis(250));
        }
    }
    assert_eq!(total(&a, &poll.id), acked, "no acknowledged vote lost");
    // Writes too, through each node's writer, without a restart.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut i = 0;
    for node in [&a, &b] {
        loop {
            i += 1;
            let client = format!("10.7.1.{i}");
            if counted(&send_form(node, &poll.id, &form_from(node, &poll.id, &client), 0, &client)) {
                break;
            }
            assert!(Instant::now() < deadline, "votes did not go on: {}", node.logs());
            std::thread::sleep(Duration::from_millis(250));
        }
    }
    assert_eq!(total(&b, &poll.id), acked + 2);
}

/// `pollctl` on the database at `url` with the key file `keys`.
fn pollctl_at(url: &str, keys: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_pollctl"))
        .args(["--db", url, "--keys"])
        .arg(keys)
        .args(args)
        .env_remove("POLL_ADMIN_TOKEN")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_copy_made_before_a_poll_was_deleted_does_not_open_it_once_the_lease_has_passed() {
    let _machine = machine::shared();
    let Some(primary) = PgCluster::start() else { return };
    primary.create_db("lease");
    let copy = primary.standby();
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("a.keys");
    let url = primary.url("lease");
    let node = Server::builder().database(&url, &keys).start();
    let poll = node.create_poll(&poll_body("Leased"));
    let client = "10.6.0.1";
    assert!(counted(&send_form(&node, &poll.id, &form_from(&node, &poll.id, client), 0, client)));
    // The copy: everything so far, then cut off (a backup, a stolen standby).
    primary.wait_replicated(&copy);
    copy.promote();
    assert_eq!(node.delete(&poll.id, &poll.token).status, 204);
    drop(node);
    // In the copy the poll opens, with today's key file: within the lease.
    let show = pollctl_at(&copy.url("lease"), &keys, &["show", &poll.id, "--token", &poll.token]);
    assert!(
        show.status.success(),
        "within the lease the copy still opens it: {}",
        String::from_utf8_lossy(&show.stderr)
    );
    // The key state moves past the lease (8 days on, as polld does at its
    // day changes; the sweep runs on the live database).
    let later = date_from_today(8);
    let sweep = pollctl_at(&url, &keys, &["sweep", "--as-of", &later]);
    assert!(sweep.status.success(), "{}", String::from_utf8_lossy(&sweep.stderr));
    // The copy still holds the poll's row, sealed...
    assert_eq!(copy.psql("lease", &format!("SELECT count(*) FROM sealed_polls WHERE id = '{}'", poll.id)), "1");
    // ...and no key opens it any more.
    let show = pollctl_at(&copy.url("lease"), &keys, &["show", &poll.id, "--token", &poll.token]);
    assert!(
        !show.status.success(),
        "the copy must not open the deleted poll: {}",
        String::from_utf8_lossy(&show.stdout)
    );
    let said = String::from_utf8_lossy(&show.stderr).to_lowercase();
    assert!(said.contains("erased"), "pollctl says the poll is erased in this copy: {said}");
}

#[test]
fn behind_caddy_forms_fetched_through_one_node_count_through_the_other_once() {
    let _machine = machine::shared();
    if !tool_or_skip("caddy", "version", "two nodes behind the shipped Caddyfile (Debian: caddy)")
        || !tool_or_skip("curl", "--version", "requests from many loopback addresses (Debian: curl)")
    {
        return;
    }
    let Some(cluster) = PgCluster::start() else { return };
    cluster.create_db("front");
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_nodes(&cluster.url("front"), dir.path());
    let front = NodesFront::start(&[&a.addr, &b.addr]);
    let poll = a.create_poll(&poll_body("Fronted"));
    let share = front.url(&format!("/p/{}", poll.id));
    // 20 client addresses, which ip_hash spreads over both nodes; each form
    // is fetched from one address and sent from the next, so about half
    // cross from one node to the other.
    let addresses: Vec<String> = (10..30).map(|i| format!("127.0.0.{i}")).collect();
    const VOTES: usize = 200;
    let next = AtomicUsize::new(0);
    let forms = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..8 {
            let (next, forms, addresses, share) = (&next, &forms, &addresses, &share);
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= VOTES {
                        break;
                    }
                    let (from, to) = (&addresses[i % 20], &addresses[(i + 1) % 20]);
                    let (status, page) = curl_send_from(from, share, None);
                    assert_eq!(status, 200, "share page through Caddy");
                    let ballot = ballot_code(&page).unwrap();
                    let (status, answer) = curl_send_from(to, share, Some(&format!("q0={}&ballot={ballot}", i % 2)));
                    assert_eq!(status, 200, "vote {i} through Caddy: {answer}");
                    assert!(!answer.contains("name=\"ballot\""), "vote {i} was not counted: {answer}");
                    forms.lock().unwrap().push(ballot);
                }
            });
        }
    });
    assert_eq!(total(&a, &poll.id), VOTES as u64, "every vote counted, through either node");
    // A counted form sent again, from every address (so through both nodes):
    // counted no more.
    let ballot = forms.lock().unwrap()[0].clone();
    for from in &addresses[..4] {
        let (status, _) = curl_send_from(from, &share, Some(&format!("q0=0&ballot={ballot}")));
        assert!(status == 200 || status == 409, "{status}");
    }
    assert_eq!(total(&b, &poll.id), VOTES as u64, "a form sent again counts once: {}", front.log());
}

/// Every file under `dirs` holding `needle`.
fn hits(dirs: &[PathBuf], needle: &[u8]) -> Vec<PathBuf> {
    dirs.iter().flat_map(|d| files_containing(d, needle)).collect()
}

#[test]
fn no_copy_postgresql_makes_holds_a_poll_or_a_client_address_in_clear() {
    let _machine = machine::shared();
    let Some(primary) = PgCluster::builder().archive().start() else { return };
    primary.create_db("scan");
    let standby = primary.standby();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_nodes(&primary.url("scan"), dir.path());
    let marker = unique_marker("PGSCAN");
    let poll = a.create_poll(&poll_body(&marker));
    let client = "203.0.113.77";
    for node in [&a, &b] {
        assert!(counted(&send_form(node, &poll.id, &form_from(node, &poll.id, client), 0, client)));
    }
    assert_eq!(total(&a, &poll.id), 2);
    // Everything to disk, to the archive and to the standby.
    primary.checkpoint();
    primary.switch_wal();
    primary.wait_replicated(&standby);
    standby.checkpoint();
    let backup = dir.path().join("basebackup");
    primary.basebackup(&backup);
    let copies = vec![primary.data_dir(), primary.archive_dir(), standby.data_dir(), backup.clone()];
    // The scanner finds what is there: the poll's id is stored in clear.
    assert!(!hits(&copies, poll.id.as_bytes()).is_empty(), "the scan must see the files");
    for (what, needle) in [
        ("title", marker.clone()),
        ("question", format!("{marker} question")),
        ("option", format!("{marker} yes")),
        ("client address", client.to_string()),
    ] {
        let found = hits(&copies, needle.as_bytes());
        assert!(found.is_empty(), "the {what} is in clear in {found:?}");
    }
}

/// The script that does docs/OPERATIONS.md's steps.
const WALKTHROUGH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/several-nodes/try-on-one-machine.sh");

/// The command lines of the code blocks of docs/OPERATIONS.md's section
/// "Running several nodes".
fn documented_steps() -> Vec<String> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/OPERATIONS.md")).unwrap();
    let start = doc.find("\n## Running several nodes").expect("the section");
    let section = &doc[start + 1..];
    let section = section[3..].find("\n## ").map_or(section, |end| &section[..end + 3]);
    let mut lines = Vec::new();
    let mut inside = false;
    for line in section.lines().map(str::trim) {
        if line.starts_with("```") {
            inside = !inside;
        } else if inside && !line.is_empty() {
            lines.push(line.to_string());
        }
    }
    lines
}

#[test]
fn every_command_of_the_walkthrough_is_in_the_script_the_next_test_runs() {
    let _machine = machine::shared();
    let script = std::fs::read_to_string(WALKTHROUGH).unwrap();
    let script: Vec<&str> = script.lines().map(str::trim).collect();
    let steps = documented_steps();
    assert!(steps.len() >= 12, "the section shows its commands: {steps:?}");
    for step in &steps {
        assert!(script.contains(&step.as_str()), "docs/OPERATIONS.md shows a command the script does not run: {step}");
    }
}

/// Stops what the walkthrough started, whatever happens to the test.
struct Walkthrough {
    env: Vec<(&'static str, String)>,
}

impl Walkthrough {
    fn run(&self, what: &str) -> std::process::Output {
        std::process::Command::new("sh")
            .arg(WALKTHROUGH)
            .arg(what)
            .envs(self.env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    }
}

impl Drop for Walkthrough {
    fn drop(&mut self) {
        let _ = self.run("stop");
    }
}

#[test]
fn the_walkthrough_goes_from_nothing_to_two_nodes_and_a_synchronous_standby_behind_caddy() {
    let _machine = machine::shared();
    if pg_bin().is_none() {
        skip_or_fail("postgresql", "the walkthrough of docs/OPERATIONS.md starts PostgreSQL (Debian: postgresql)");
        return;
    }
    if !tool_or_skip("caddy", "version", "the walkthrough puts Caddy in front (Debian: caddy)")
        || !tool_or_skip("curl", "--version", "the walkthrough's script checks with curl (Debian: curl)")
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("nodes");
    let front = free_port();
    let walk = Walkthrough {
        env: vec![
            ("WORK", work.display().to_string()),
            ("POLLD", env!("CARGO_BIN_EXE_polld").to_string()),
            ("PG_PRIMARY", free_port().to_string()),
            ("PG_STANDBY", free_port().to_string()),
            ("FRONT", front.to_string()),
            ("CADDY_ADMIN", free_port().to_string()),
        ],
    };
    let out = walk.run("start");
    let logs = || {
        ["node1.log", "node2.log", "caddy.log", "primary.log", "standby.log"]
            .iter()
            .map(|f| format!("--- {f}\n{}", std::fs::read_to_string(work.join(f)).unwrap_or_default()))
            .collect::<String>()
    };
    assert!(
        out.status.success(),
        "the walkthrough failed: {}{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        logs()
    );
    let first: Value = serde_json::from_slice(&std::fs::read(work.join("first-poll.json")).unwrap()).unwrap();
    let id = first["id"].as_str().expect("the first poll's id").to_string();
    assert!(first["shareUrl"].as_str().unwrap().starts_with(&format!("http://127.0.0.1:{front}/")), "{first}");
    // A person votes through the front.
    let front_addr = format!("127.0.0.1:{front}");
    let page = Request::new(&front_addr, "GET", &format!("/p/{id}")).send();
    assert_eq!(page.status, 200, "{}", logs());
    let ballot = ballot_code(&page.text()).unwrap();
    let vote = Request::new(&front_addr, "POST", &format!("/p/{id}"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!("q0=0&ballot={ballot}").into_bytes())
        .send();
    assert!(counted(&vote), "{} {}", vote.status, vote.text());
    let token = first["adminToken"].as_str().unwrap();
    let results = Request::new(&front_addr, "GET", &format!("/api/polls/{id}/results"))
        .header("Authorization", &format!("Bearer {token}"))
        .send()
        .json();
    assert_eq!(results["totalResponses"], 1, "{results}");
    // Both nodes answer, and the standby is one.
    for node in ["node1", "node2"] {
        let socket = format!("unix:{}", work.join(format!("{node}.sock")).display());
        assert_eq!(Request::new(&socket, "GET", "/healthz").send().status, 200, "{node}");
    }
    assert!(std::fs::read_to_string(work.join("standby").join("standby.signal")).is_ok(), "the standby is one");
    let out = walk.run("stop");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(processes_in(&work), Vec::<u32>::new(), "stop leaves no PostgreSQL process");
}
