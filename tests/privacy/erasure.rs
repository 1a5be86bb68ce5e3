//! Erasure that survives copies (issue 22), end to end: polld over HTTP and
//! pollctl as a process. Every byte of a poll is sealed under a key that
//! ceases to exist, so a backup or an old WAL kept aside does not open a
//! deleted poll once the key state has moved past its lease, nor an expired
//! one from the day after its last day; a node down for 40 days loses no
//! live poll; a bad key file is a clear error that touches nothing.

use crate::common;

use common::media::*;
use common::*;
use serde_json::json;

/// The lease polld and pollctl use here (the default).
const LEASE: i64 = 7;

fn markers(tag: &str) -> [String; 6] {
    ["Title", "Label", "Option", "TrTitle", "TrOption", "Alt"].map(|m| unique_marker(&format!("{m}{tag}")))
}

/// A poll through the web form with a picture, then a French version and two
/// votes; every text carries a marker. Returns the poll and the markers.
fn marked_poll(server: &Server, tag: &str, expiry: u32) -> (Created, [String; 6], Vec<u8>) {
    let m = markers(tag);
    let picture = noise_png(40, 30);
    let code = once(server);
    let expiry = expiry.to_string();
    let resp = server
        .request("POST", "/")
        .xff(&Server::fresh_client_ip())
        .header("Content-Type", &multipart_type())
        .body(multipart(
            &[
                ("once", &code),
                ("title", &m[0]),
                ("lang", "en"),
                ("expiry", &expiry),
                ("results", "private"),
                ("q0", &m[1]),
                ("q0o0", &m[2]),
                ("q0o1", "Other"),
                ("pm-alt", &m[5]),
            ],
            &[File("pm", "picture.png", "image/png", &picture)],
        ))
        .send();
    assert_eq!(resp.status, 201, "{}", resp.describe());
    let poll = Created::from_page(&resp.text());
    let fr = json!({"title": m[3], "questions": [{"label": "Choisissez", "options": [m[4], "Autre"]}]});
    server.patch_json(&poll.id, &poll.token, &json!({"translations": {"fr": fr}})).assert_status(200);
    for choice in [0, 1] {
        server.vote(&poll.id, &[Some(choice)], &Server::fresh_client_ip()).unwrap();
    }
    (poll, m, picture)
}

/// A copy of the database kept aside: on SQLite a file (`pollctl backup`'s,
/// or the database and its old WAL copied as they lay), on PostgreSQL
/// `pg_dump`'s output restored into a database of its own (its copies
/// made by replication and archiving are tests/operations/several_nodes.rs's).
enum Copy {
    File(std::path::PathBuf),
    Pg(PgDb),
}

impl Copy {
    /// A copy of the live database of `server`, as it is now.
    fn of(server: &Server) -> Copy {
        let Some(url) = pg_url(server.dir()) else {
            let to = server.dir().join(format!("backup{}.sqlite3", next_seq()));
            pollctl_ok(&server.db_path(), &["backup", to.to_str().unwrap()]);
            return Copy::File(to);
        };
        let copy = PgCluster::shared_db().expect("the shared PostgreSQL cluster");
        let name = url.rsplit('/').next().unwrap();
        let port = copy.cluster.port().to_string();
        let dump = std::process::Command::new(pg_bin().expect("PostgreSQL's programs").join("pg_dump"))
            .args(["-h", "127.0.0.1", "-p", &port, "-U", "postgres", "--no-owner", name])
            .output()
            .unwrap();
        assert!(dump.status.success(), "pg_dump: {}", String::from_utf8_lossy(&dump.stderr));
        copy.psql(&String::from_utf8(dump.stdout).unwrap());
        Copy::Pg(copy)
    }

    /// The copy's bytes, to be searched: a file's; none for a PostgreSQL
    /// copy, whose files are the shared cluster's that
    /// [`assert_not_in_db`] scans whole (a dump's text would show bytes in
    /// hex).
    fn bytes(&self) -> Vec<u8> {
        match self {
            Copy::File(path) => std::fs::read(path).unwrap(),
            Copy::Pg(_) => Vec::new(),
        }
    }
}

/// `pollctl --db COPY --keys KEYS show ID --token T`.
fn show(copy: &Copy, keys: &std::path::Path, poll: &Created) -> std::process::Output {
    let db: std::ffi::OsString = match copy {
        Copy::File(path) => path.into(),
        Copy::Pg(db) => db.url().into(),
    };
    std::process::Command::new(env!("CARGO_BIN_EXE_pollctl"))
        .arg("--db")
        .arg(db)
        .arg("--keys")
        .arg(keys)
        .args(["show", &poll.id, "--token", &poll.token])
        .env_remove("POLL_ADMIN_TOKEN")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn total(server: &Server, poll: &Created) -> u64 {
    let r = server.get_auth(&poll.results_path(), &poll.token);
    r.assert_status(200);
    r.json()["totalResponses"].as_u64().unwrap()
}

#[test]
fn no_copy_opens_a_deleted_or_expired_poll_once_its_key_is_gone() {
    let server = Server::start();
    let (kept, kept_markers, _) = marked_poll(&server, "kept", 30);
    let (deleted, deleted_markers, picture) = marked_poll(&server, "deleted", 30);
    let (expiring, _, _) = marked_poll(&server, "expiring", 7);
    let data = server.dir().to_path_buf();
    let keys = keys_path(&data);

    // While the polls live: no marker, and no picture's bytes, in any byte of
    // the database, its WAL, its index or a backup.
    let backup = Copy::of(&server);
    let copy = backup.bytes();
    for needle in kept_markers.iter().map(|m| m.as_bytes()).chain(deleted_markers.iter().map(|m| m.as_bytes())) {
        assert_not_in_db(&data, needle, "a marker");
        assert!(!contains_bytes(&copy, needle), "{} in the backup", String::from_utf8_lossy(needle));
    }
    let middle = &picture[picture.len() / 2..picture.len() / 2 + 64];
    assert_not_in_db(&data, middle, "the picture");
    assert!(!contains_bytes(&copy, middle), "the picture in the backup");
    // SQLite's old WAL, kept aside before the delete (as a replica or a
    // crash dump would keep it); PostgreSQL's WAL and archive are scanned by
    // tests/operations/several_nodes.rs.
    let mut copies = vec![("the backup", backup)];
    let aside = tempfile::tempdir().unwrap();
    if !on_postgres() {
        for (name, bytes) in db_files(&data) {
            std::fs::write(aside.path().join(name), bytes).unwrap();
        }
        copies.push(("the old WAL", Copy::File(aside.path().join(DB_NAME))));
    }
    server.delete(&deleted.id, &deleted.token).assert_status(204);

    // Within the lease, the backup with the live key file opens it...
    let within = show(&copies[0].1, &keys, &deleted);
    assert!(within.status.success(), "{}", String::from_utf8_lossy(&within.stderr));
    // ...then the key state moves past the lease (the drill: as cron would
    // on that day).
    let after = date_from_today(LEASE + 1);
    let out = pollctl_ok(&server.db_path(), &["--json", "sweep", "--as-of", &after]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["keyDay"], after.as_str(), "{report}");
    assert!(report["pollsRewrapped"].as_u64().unwrap() >= 1, "{report}");
    let advanced = data.join("advanced.keys");
    std::fs::copy(&keys, &advanced).unwrap();

    for (what, copy) in &copies {
        for poll in [&deleted, &expiring] {
            let out = show(copy, &advanced, poll);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(3), "{what}, poll {}: {stderr}", poll.id);
            assert!(stderr.contains("erased") && stderr.contains(&poll.id), "{what}: {stderr}");
            assert!(!stderr.contains("panicked"), "{stderr}");
        }
    }
    // The live poll in the live database: still open, counts exact.
    let out = pollctl_ok(&server.db_path(), &["--json", "results", &kept.id, "--token", &kept.token]);
    let results: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(results["totalResponses"], 2);
    assert_eq!(total(&server, &kept), 2, "polld reads it too");
    drop(server);
}

/// A node restarted after 40 days down re-wraps from its old state at its
/// start (simulated by the drill's `--as-of`) and loses no live poll.
#[test]
fn a_node_back_after_forty_days_loses_no_live_poll() {
    let mut server = Server::start();
    let polls: Vec<Created> =
        (0..3).map(|_| server.create_poll(&with(valid_poll_json(), "/expiryDays", json!(365)))).collect();
    for (i, poll) in polls.iter().enumerate() {
        for _ in 0..=i {
            server.record(&poll.id, &[Some(0), None]).unwrap();
        }
    }
    assert!(server.terminate().success());
    let dir = server.into_dir();
    let db = dir.path().join(DB_NAME);
    pollctl_ok(&db, &["sweep", "--as-of", &date_from_today(40)]);
    let server = Server::builder().in_dir(dir).start();
    for (i, poll) in polls.iter().enumerate() {
        assert_eq!(total(&server, poll), i as u64 + 1, "poll {i} after 40 days");
    }
}

/// A missing, truncated or foreign key file, one others can read, or an
/// old copy of it (restored from a backup: behind the day the database's
/// key state has reached): polld refuses to start and pollctl exits 6, each
/// naming the file (and for a readable one, the command that fixes it);
/// neither file is touched, and no key file is ever created over a
/// database that has polls. An old copy is taken when the operator says so
/// (`--accept-old-key-file`), with a warning.
#[test]
fn a_bad_key_file_stops_polld_and_pollctl_and_touches_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let mut server = Server::start();
    let poll = server.create_default();
    assert!(server.terminate().success());
    let dir = server.into_dir();
    let db = dir.path().join(DB_NAME);
    let keys = keys_path(dir.path());
    let old_copy = std::fs::read(&keys).unwrap();
    // Three days later (the key state moved on, the database noted it).
    pollctl_ok(&db, &["sweep", "--as-of", &date_from_today(3)]);
    let good = std::fs::read(&keys).unwrap();
    let other = Server::start();
    let foreign = std::fs::read(keys_path(other.dir())).unwrap();
    drop(other);
    let write = |content: &[u8], mode: u32| {
        std::fs::write(&keys, content).unwrap();
        std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    for (what, content, mode, says) in [
        ("missing", None, 0o600, "missing"),
        ("truncated", Some(good[..64].to_vec()), 0o600, "truncated"),
        ("foreign", Some(foreign), 0o600, "another database"),
        ("readable by others", Some(good.clone()), 0o644, "chmod 600"),
        ("an old copy", Some(old_copy.clone()), 0o600, "old copy"),
    ] {
        match &content {
            Some(c) => write(c, mode),
            None => std::fs::remove_file(&keys).unwrap(),
        }
        let before = db_state(dir.path());
        let out = output_of_refusal(
            std::process::Command::new(env!("CARGO_BIN_EXE_polld"))
                .args(db_args(&db))
                .args(["--listen", "127.0.0.1:0"]),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "polld started with a {what} key file");
        assert!(stderr.contains(&keys.display().to_string()) && !stderr.contains("panicked"), "{what}: {stderr}");
        assert!(stderr.contains(says), "{what}: {stderr}");
        let out = pollctl(&db, &["show", &poll.id, "--token", &poll.token]);
        assert_eq!(out.status.code(), Some(6), "{what}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(std::fs::read(&keys).ok(), content, "{what}: the key file untouched");
        assert!(db_state(dir.path()) == before, "{what}: the database untouched");
    }
    // The old copy, when the operator says the node was merely down.
    write(&old_copy, 0o600);
    let out = pollctl(&db, &["--accept-old-key-file", "show", &poll.id, "--token", &poll.token]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("used as told"), "a warning");
    write(&good, 0o600);
    let server = Server::builder().in_dir(dir).start();
    server.get(&poll.path()).assert_status(200);
}

/// One poll whose row cannot be read (its wrapped key damaged) does not
/// stop the day's key work for the others, nor polld: the sweep sets it
/// aside and names it, the key state moves on, polld starts and serves the
/// other polls, and `pollctl check` names it and exits 1.
#[test]
fn a_damaged_poll_row_stops_neither_the_key_work_nor_polld() {
    let mut server = Server::start();
    let good = server.create_default();
    let bad = server.create_default();
    server.vote(&good.id, &[Some(0)], &Server::fresh_client_ip()).unwrap();
    assert!(server.terminate().success());
    let dir = server.into_dir();
    let db = dir.path().join(DB_NAME);
    let mut wrapped = db_blob(dir.path(), "SELECT data_key FROM sealed_polls WHERE id = ?1", &[&bad.id]);
    wrapped[30] ^= 1;
    db_exec_bytes(dir.path(), "UPDATE sealed_polls SET data_key = ?1 WHERE id = ?2", &wrapped, &bad.id);
    let tomorrow = date_from_today(1);
    let out = pollctl(&db, &["--json", "sweep", "--as-of", &tomorrow]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["keyDay"], json!(tomorrow), "the key state moved on");
    assert_eq!(report["pollsSetAside"], json!([bad.id]));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&bad.id), "named on stderr");
    let check = pollctl(&db, &["--json", "check"]);
    assert_eq!(check.status.code(), Some(1));
    let found: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(found["pollsWithProblems"][0]["poll"], json!(bad.id), "{found}");
    let server = Server::builder().in_dir(dir).start();
    assert_eq!(server.get("/healthz").status, 200);
    assert_eq!(total(&server, &good), 1, "the other poll is served");
}

/// Someone who can write to the database puts older counts back at their
/// place, or deletes a ballot row: each still opens (sealed there), but
/// the running polld refuses counts older than ones it has read, and
/// `pollctl check` names the poll, its ballot rows not being those its
/// counts were written with.
#[test]
fn rolled_back_counts_and_a_deleted_ballot_row_are_found() {
    let server = Server::start();
    let poll = server.create_public();
    let ip = Server::fresh_client_ip();
    server.vote(&poll.id, &[Some(0), None], &ip).unwrap();
    wait_for_mix(server.dir());
    let older = db_blob(server.dir(), "SELECT tallies FROM sealed_polls WHERE id = ?1", &[&poll.id]);
    let key = db_blob(server.dir(), "SELECT data_key FROM sealed_polls WHERE id = ?1", &[&poll.id]);
    // A vote in the same window: the counts move on under the same data
    // key (the mix, which takes a new one, waits for the writer to idle).
    server.vote(&poll.id, &[Some(1), None], &ip).unwrap();
    let results = server.get(&poll.results_path());
    results.assert_status(200);
    if db_blob(server.dir(), "SELECT data_key FROM sealed_polls WHERE id = ?1", &[&poll.id]) == key {
        db_exec_bytes(server.dir(), "UPDATE sealed_polls SET tallies = ?1 WHERE id = ?2", &older, &poll.id);
        let read = server.get(&poll.results_path());
        assert_eq!(read.status, 500, "counts put back were served: {}", read.text());
        assert!(server.logs().contains("rolled back") || server.logs().contains("put back"), "{}", server.logs());
    } else {
        eprintln!("the mix ran between the votes: the counts put back would not open; the digest is checked below");
    }
    let check = pollctl(&server.db_path(), &["--json", "check"]);
    assert_eq!(check.status.code(), Some(1), "{}", String::from_utf8_lossy(&check.stdout));
    // A deleted ballot row, in another poll.
    let other = server.create_public();
    for i in 0..3 {
        server.vote(&other.id, &[Some(i % 2), None], &Server::fresh_client_ip()).unwrap();
    }
    wait_for_mix_of(server.dir(), Some(&other.id));
    let rows = db_blobs(server.dir(), "SELECT id FROM sealed_ballots WHERE poll_id = ?1", &[&other.id]);
    assert_eq!(rows.len(), 3);
    let first =
        db_exec_bytes(server.dir(), "DELETE FROM sealed_ballots WHERE id = ?1 AND poll_id = ?2", &rows[0], &other.id);
    assert_eq!(first, 1);
    let check = pollctl(&server.db_path(), &["--json", "check"]);
    assert_eq!(check.status.code(), Some(1));
    let found: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    let named: Vec<&str> =
        found["pollsWithProblems"].as_array().unwrap().iter().map(|p| p["poll"].as_str().unwrap()).collect();
    assert!(named.contains(&other.id.as_str()), "{found}");
}
