//! A newcomer's first run: what polld leaves on disk when it starts. It
//! creates its data folder private to its user (0700) and its database
//! 0600, and on a busy port fails before it creates either.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode() & 0o777
}

#[test]
fn polld_creates_its_data_folder_and_database_private() {
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
        (mode(&data), mode(&db), wal.iter().filter(|p| p.exists()).map(|p| mode(p)).collect::<Vec<_>>())
    });
    let _ = polld.kill();
    let _ = polld.wait();
    let (data_mode, db_mode, wal_modes) = modes.expect("polld did not announce its address within 20 s");
    assert_eq!(data_mode, 0o700, "the data folder");
    assert_eq!(db_mode, 0o600, "the database");
    let octal: Vec<String> = wal_modes.iter().map(|m| format!("{m:o}")).collect();
    assert!(wal_modes.iter().all(|m| *m == 0o600), "the WAL and shared-memory files: {octal:?}");
}

#[test]
fn polld_on_a_busy_port_fails_before_creating_its_database() {
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
