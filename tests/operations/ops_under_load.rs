//! Operations during load: `pollctl sweep`, `pollctl backup` and
//! `pollctl export` run over and over while clients create, read and manage
//! polls through polld and voters record responses.
//!
//! Proves: no failed request (every API call answers 2xx, every vote is
//! acknowledged), no lost vote (each poll's results count exactly the
//! acknowledged responses, in the API, in the responses table and in the
//! final export), every backup passes `PRAGMA integrity_check` and holds
//! every poll acknowledged before it started, and sweeps erase only expired
//! polls.

use crate::common;
use crate::common::machine;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

/// How long the load runs.
const LOAD: Duration = Duration::from_secs(15);
const CREATORS: usize = 3;
const VOTERS: usize = 2;
const VOTING_POLLS: usize = 3;

fn pollctl(db: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pollctl")).args(db_args(db)).args(args).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

fn integrity(db: &Path) -> String {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    conn.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0)).unwrap()
}

fn poll_ids(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut stmt = conn.prepare("SELECT id FROM sealed_polls").unwrap();
    stmt.query_map([], |r| r.get::<_, String>(0)).unwrap().map(Result::unwrap).collect()
}

#[derive(Default)]
struct Tally {
    requests: AtomicU64,
    failures: Mutex<Vec<String>>,
}

impl Tally {
    fn check(&self, resp: &Response) -> bool {
        self.requests.fetch_add(1, Ordering::Relaxed);
        if (200..300).contains(&resp.status) {
            true
        } else {
            self.failures.lock().unwrap().push(resp.describe());
            false
        }
    }
}

#[test]
fn sweep_backup_and_export_during_load_lose_nothing() {
    let _machine = machine::alone();
    let server = Arc::new(Server::start());
    let db = server.db_path();
    let work = tempfile::tempdir().unwrap();

    // Polls that receive votes, and polls that are due for the sweep.
    let voting: Vec<Created> = (0..VOTING_POLLS).map(|_| server.create_public()).collect();
    let doomed: Vec<Created> = (0..20).map(|_| server.create_default()).collect();
    for d in &doomed {
        server.exec_sql("UPDATE sealed_polls SET expires_on = ?1 WHERE id = ?2", [today(), d.id.clone()]);
    }

    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Tally::default());
    let created: Arc<Mutex<Vec<Created>>> = Arc::new(Mutex::new(Vec::new()));
    let votes: Arc<Mutex<HashMap<String, u64>>> = Arc::new(Mutex::new(HashMap::new()));
    let vote_failures: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    let mut threads = Vec::new();

    for t in 0..CREATORS {
        let (server, stop, tally, created) = (server.clone(), stop.clone(), tally.clone(), created.clone());
        threads.push(std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let mut body = valid_poll_json();
                body["title"] = json!(format!("Load poll {t}-{n}"));
                body["resultsPublic"] = json!(n.is_multiple_of(2));
                let resp = server.post_json("/api/polls", &body);
                if !tally.check(&resp) {
                    continue;
                }
                let c = Created::from_response(&resp);
                tally.check(&server.get(&c.path()));
                tally.check(&server.get_auth(&c.results_path(), &c.token));
                if n.is_multiple_of(3) {
                    tally.check(&server.patch_json(
                        &c.id,
                        &c.token,
                        &json!({"closed": true, "translations": {"fr": valid_translation()}}),
                    ));
                }
                if n.is_multiple_of(5) {
                    tally.check(&server.delete(&c.id, &c.token));
                    continue;
                }
                created.lock().unwrap().push(c);
            }
        }));
    }

    for v in 0..VOTERS {
        let (server, stop, votes, failures) = (server.clone(), stop.clone(), votes.clone(), vote_failures.clone());
        let ids: Vec<String> = voting.iter().map(|c| c.id.clone()).collect();
        threads.push(std::thread::spawn(move || {
            let mut n = v;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let id = &ids[n % ids.len()];
                let ballot = [Some(n % 3), if n.is_multiple_of(4) { None } else { Some(n % 2) }];
                // Votes as people cast them: through polld's share page, each
                // from its own client address so the vote throttle stays out.
                let xff = format!("10.{}.{}.{}", v, (n >> 8) & 0xff, n & 0xff);
                match server.vote(id, &ballot, &xff) {
                    Ok(()) => *votes.lock().unwrap().entry(id.clone()).or_default() += 1,
                    Err(e) => failures.lock().unwrap().push(format!("vote on {id}: {e}")),
                }
            }
        }));
    }

    // The operator, meanwhile, runs every operation again and again.
    let started = Instant::now();
    let mut backups: Vec<(PathBuf, Vec<String>)> = Vec::new();
    let mut rounds = 0;
    let mut erased = 0u64;
    while started.elapsed() < LOAD {
        rounds += 1;
        let (ok, out) = pollctl(&db, &["--json", "sweep"]);
        assert!(ok, "pollctl sweep failed under load: {out}");
        erased += serde_json::from_str::<Value>(&out).unwrap()["pollsErased"].as_u64().unwrap();

        let before: Vec<String> = created.lock().unwrap().iter().map(|c| c.id.clone()).collect();
        let file = work.path().join(format!("backup-{rounds}.sqlite3"));
        let (ok, out) = pollctl(&db, &["backup", file.to_str().unwrap()]);
        assert!(ok, "pollctl backup failed under load: {out}");
        backups.push((file, before));

        let v = &voting[rounds % voting.len()];
        for format in ["json", "csv"] {
            let out_file = work.path().join(format!("export-{rounds}.{format}"));
            let (ok, out) = pollctl(
                &db,
                &["export", &v.id, "--format", format, "--token", &v.token, "--output", out_file.to_str().unwrap()],
            );
            assert!(ok, "pollctl export --format {format} failed under load: {out}");
            assert!(std::fs::metadata(&out_file).unwrap().len() > 0);
        }
        let (ok, out) = pollctl(&db, &["check"]);
        assert!(ok, "pollctl check failed under load: {out}");
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().expect("a load thread panicked");
    }

    // No failed request, no failed vote.
    let failures = tally.failures.lock().unwrap();
    let requests = tally.requests.load(Ordering::Relaxed);
    assert!(failures.is_empty(), "{} of {requests} API calls failed; first: {}", failures.len(), failures[0]);
    let vote_failures = vote_failures.lock().unwrap();
    assert!(vote_failures.is_empty(), "{} votes failed; first: {}", vote_failures.len(), vote_failures[0]);
    let votes = votes.lock().unwrap();
    let total_votes: u64 = votes.values().sum();
    assert!(requests > 100 && total_votes > 100, "too little load: {requests} requests, {total_votes} votes");
    assert!(rounds >= 3, "only {rounds} rounds of operations");

    // No lost vote: the API, the responses table and the export agree with
    // what was acknowledged.
    let conn = server.sql();
    for c in &voting {
        let acked = votes.get(&c.id).copied().unwrap_or(0);
        let results = server.get(&c.results_path());
        results.assert_status(200);
        let results = results.json();
        assert_eq!(results["totalResponses"].as_u64(), Some(acked), "poll {}: API total", c.id);
        let stored: i64 =
            conn.query_row("SELECT count(*) FROM sealed_ballots WHERE poll_id = ?1", [&c.id], |r| r.get(0)).unwrap();
        assert_eq!(stored as u64, acked, "poll {}: stored responses", c.id);
        let first_q: u64 =
            results["questions"][0]["options"].as_array().unwrap().iter().map(|o| o["count"].as_u64().unwrap()).sum();
        assert_eq!(first_q, acked, "poll {}: every ballot answers question 1", c.id);
        let (ok, out) = pollctl(&db, &["export", &c.id, "--format", "json", "--token", &c.token]);
        assert!(ok, "{out}");
        assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["totalResponses"].as_u64(), Some(acked));
    }

    // Every acknowledged, undeleted poll is there; the doomed ones are gone.
    for c in created.lock().unwrap().iter() {
        server.get(&c.path()).assert_status(200);
    }
    assert_eq!(erased, doomed.len() as u64, "sweeps erased {erased} polls, expected exactly the expired ones");
    let remaining = poll_ids(&db);
    assert!(doomed.iter().all(|d| !remaining.contains(&d.id)), "an expired poll survived the sweeps");

    // Every backup is sound and holds what was acknowledged before it began.
    for (file, before) in &backups {
        assert_eq!(integrity(file), "ok", "backup {} is damaged", file.display());
        let ids = poll_ids(file);
        for id in before {
            assert!(ids.contains(id), "backup {} lacks poll {id}, acknowledged before it began", file.display());
        }
    }
    assert_eq!(integrity(&db), "ok");
    eprintln!(
        "{rounds} rounds of sweep+backup+export+check; {requests} API calls, {total_votes} votes, all acknowledged and counted"
    );
}
