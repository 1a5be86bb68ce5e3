//! A newcomer's first run: the README's walkthrough, run as written, and
//! what polld leaves on disk when it starts.
//!
//! * The README's `sh` blocks run in order, with `sh -e`, against a real
//!   polld: curl through the API and the share page's vote form, then
//!   pollctl on the same poll, then the DELETE. Only the base address and
//!   the way pollctl is run (the test's binary instead of `cargo run`) are
//!   put in; anything else that stops working fails here.
//! * polld creates its data folder private to its user (0700) and its
//!   database 0600, and on a busy port fails before it creates either.

use crate::common;
use crate::common::machine;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

/// The README's fenced `sh` blocks, in order.
fn readme_shell_blocks() -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in readme.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    assert!(current.is_none(), "an unclosed sh block in the README");
    blocks
}

/// The walkthrough's last line: the files it wrote into the checkout.
const CLEANUP: &str = "rm -f poll.json results.csv codes.tsv fr.json backup-$ID.sqlite3";

/// `text` with `from` replaced by `to`, which must occur exactly once.
fn put_in(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "the README's walkthrough should have `{from}` once");
    text.replacen(from, to, 1)
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode() & 0o777
}

#[test]
fn the_readme_walkthrough_runs_as_written() {
    let _machine = machine::shared();
    if !Command::new("curl").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return skip_or_fail("curl", "the README's walkthrough uses it; Debian: apt-get install curl");
    }
    let server = Server::start();
    let blocks = readme_shell_blocks();
    assert!(blocks.len() >= 3, "the walkthrough's curl, pollctl and delete blocks: {blocks:?}");
    let script = blocks.join("\n");
    let script = put_in(&script, "BASE=http://127.0.0.1:8080\n", &format!("BASE={}\n", server.base_url));
    let script =
        put_in(&script, "cargo run -q --release --bin pollctl --", &format!("'{}'", env!("CARGO_BIN_EXE_pollctl")));
    // The walkthrough ends by removing the files it wrote; the test keeps
    // them to look at, and checks that the line names every one of them.
    let script = put_in(&script, CLEANUP, ":");
    let work = tempfile::tempdir().unwrap();
    let out = Command::new("sh")
        .args(["-e", "-c", &script])
        .current_dir(work.path())
        .env("POLL_DB", server.db_path())
        .env("POLL_KEYS", keys_path(server.dir()))
        .env_remove("POLL_ADMIN_TOKEN")
        .env_remove("POLL_BASE_URL")
        .env_remove("POLL_LISTEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the walkthrough stopped ({}):\n{stdout}\n--- stderr:\n{stderr}", out.status);
    let has = |what: &str| assert!(stdout.contains(what), "no {what:?} in the walkthrough's output:\n{stdout}");

    let poll = std::fs::read_to_string(work.path().join("poll.json")).unwrap();
    let id = serde_json::from_str::<serde_json::Value>(&poll).unwrap()["id"].as_str().unwrap().to_owned();
    let mut written: Vec<String> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    let mut named: Vec<String> = CLEANUP.split_whitespace().skip(2).map(|f| f.replace("$ID", &id)).collect();
    named.sort();
    assert_eq!(written, named, "the walkthrough's last line removes exactly the files it wrote");
    // The vote through the share page's form counted, and every result shows it.
    has("<h1>Thank you!");
    has("\"totalResponses\":1");
    assert!(
        stdout.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["Sushi", "1", "100.0", "%"]),
        "pollctl results shows the vote:\n{stdout}"
    );
    let csv = std::fs::read_to_string(work.path().join("results.csv")).unwrap();
    assert!(csv.contains("1,Pick one,1,Sushi,1,100.0"), "{csv}");
    // The dry run as of a far day lists the poll with its vote; it erased nothing.
    has("dry run, nothing erased: a sweep as of 2099-12-31 would erase 1 poll(s) with 1 response(s)");
    has(&format!("share page: http://127.0.0.1:8080/p/{id}"));
    // The files the walkthrough writes: a private backup, three invite codes.
    assert_eq!(mode(&work.path().join(format!("backup-{id}.sqlite3"))), 0o600);
    let codes = std::fs::read_to_string(work.path().join("codes.tsv")).unwrap();
    assert_eq!(codes.lines().count(), 3, "{codes}");
    assert!(codes.lines().all(|l| l.contains(&format!("\thttp://127.0.0.1:8080/p/{id}#invite="))), "{codes}");
    // The end: the DELETE erased it.
    has("HTTP/1.1 204");
    server.get(&format!("/api/polls/{id}")).assert_status(404);
}

/// polld on its defaults creates its data folder, database and key file
/// private to its user, the key file in a folder of its own beside the
/// data folder (`data-keys/`), so that a backup of the data folder does not
/// take it along; the data folder holds no key.
#[test]
fn polld_creates_its_data_folder_and_database_private() {
    let _machine = machine::shared();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let db = data.join("anonpoll.sqlite3");
    let mut polld = Command::new(env!("CARGO_BIN_EXE_polld"))
        .arg("--db")
        .arg(&db)
        .args(["--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = polld.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("polld: listening on") {
                let _ = tx.send(());
            }
        }
    });
    let started = rx.recv_timeout(Duration::from_secs(20));
    let modes = started.is_ok().then(|| {
        let wal = ["-wal", "-shm"].map(|end| data.join(format!("anonpoll.sqlite3{end}")));
        let keys = dir.path().join("data-keys");
        (
            (mode(&data), mode(&db), wal.iter().filter(|p| p.exists()).map(|p| mode(p)).collect::<Vec<_>>()),
            (mode(&keys), mode(&keys.join("anonpoll.keys"))),
        )
    });
    let _ = polld.kill();
    let _ = polld.wait();
    let ((data_mode, db_mode, wal_modes), (keys_dir, key_file)) =
        modes.expect("polld did not announce its address within 20 s");
    assert_eq!(data_mode, 0o700, "the data folder");
    assert_eq!(db_mode, 0o600, "the database");
    assert_eq!((keys_dir, key_file), (0o700, 0o600), "the key file's folder and the key file, apart from the data");
    let in_data: Vec<String> =
        std::fs::read_dir(&data).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(
        in_data.iter().all(|n| n.starts_with("anonpoll.sqlite3")),
        "the data folder holds only the database: {in_data:?}"
    );
    let octal: Vec<String> = wal_modes.iter().map(|m| format!("{m:o}")).collect();
    assert!(wal_modes.iter().all(|m| *m == 0o600), "the WAL and shared-memory files: {octal:?}");
}

#[test]
fn polld_on_a_busy_port_fails_before_creating_its_database() {
    let _machine = machine::shared();
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = Command::new(env!("CARGO_BIN_EXE_polld"))
        .arg("--db")
        .arg(data.join("anonpoll.sqlite3"))
        .arg("--listen")
        .arg(busy.local_addr().unwrap().to_string())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot listen on"), "{stderr}");
    assert!(!data.exists(), "polld created {} before failing to listen", data.display());
}
