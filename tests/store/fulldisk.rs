//! A full disk: polld's database on a 2 MiB tmpfs that fills up.
//!
//! Proves that writes then fail with 503 and a clear problem document (not
//! 500, no crash), reads keep working, the database passes
//! `PRAGMA integrity_check`, every acknowledged poll is still there, and
//! writes succeed again once space is freed.
//!
//! Mounting needs root. Without it the test is skipped with a notice, except
//! under `CI=true`, where it fails. The tmpfs is unmounted at the end, even
//! when the test fails (a Drop guard).

use crate::common;
use crate::common::machine;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::{Value, json};

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A mounted tmpfs, unmounted (and its mount point removed) on drop.
struct Tmpfs {
    dir: PathBuf,
    _parent: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Result<Tmpfs, String> {
        let parent = tempfile::tempdir().map_err(|e| e.to_string())?;
        let dir = parent.path().join("disk");
        std::fs::create_dir(&dir).map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700"), "tmpfs"])
            .arg(&dir)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!("mount failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        Ok(Tmpfs { dir, _parent: parent })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let ok = Command::new("umount").arg(&self.dir).status().is_ok_and(|s| s.success());
        if !ok {
            // Something still holds a file: detach it lazily rather than leak a mount.
            let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
        }
    }
}

/// Writes zeros into `path` until the file system refuses; returns the bytes written.
fn fill(path: &Path) -> u64 {
    let mut f = std::fs::File::create(path).unwrap();
    let chunk = vec![0u8; 16 * 1024];
    let mut written = 0u64;
    loop {
        match f.write(&chunk) {
            Ok(0) => break,
            Ok(n) => written += n as u64,
            Err(_) => break,
        }
    }
    // Squeeze out the last partial block.
    while f.write(&[0u8; 512]).is_ok_and(|n| n > 0) {
        written += 512;
    }
    let _ = f.sync_all();
    written
}

/// A creation body of roughly 30 KB: 20 questions of 12 long options.
fn big_poll(n: usize) -> Value {
    let questions: Vec<Value> = (0..20)
        .map(|q| {
            json!({
                "label": format!("Question {q} of poll {n}: {}", "q".repeat(300)),
                "options": (0..12).map(|o| format!("{o} {}", "o".repeat(100))).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({"title": format!("Filler poll {n}"), "lang": "en", "expiryDays": 7, "questions": questions})
}

fn integrity(db: &Path) -> String {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    conn.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0)).unwrap()
}

fn assert_full(resp: &Response, what: &str) {
    let problem = assert_problem(resp, 503);
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("Storage is full"), "{what}: unclear 503 detail {detail:?}");
    assert!(resp.has_header("retry-after"), "{what}: 503 without Retry-After: {}", resp.describe());
}

#[test]
fn a_full_disk_refuses_writes_with_503_and_recovers() {
    let _machine = machine::shared();
    if !is_root() && !in_ci() {
        common::skip_or_fail("root", "the full-disk test mounts a tmpfs");
        return;
    }
    let disk = match Tmpfs::mount("2m") {
        Ok(d) => d,
        Err(e) if !in_ci() => {
            common::skip_or_fail("a tmpfs mount", &format!("the full-disk test cannot mount one: {e}"));
            return;
        }
        Err(e) => panic!("CI=true and the tmpfs cannot be mounted: {e}"),
    };
    let server = Server::builder().in_dir(tempfile::tempdir_in(&disk.dir).unwrap()).start();

    // Acknowledged before the disk fills: they must survive all that follows.
    let mut acked: Vec<Created> = (0..3).map(|_| server.create_public()).collect();
    server.record(&acked[0].id, &[Some(0), Some(1)]).unwrap();

    // Fill what is left, then keep creating polls until storage refuses:
    // SQLite may still have room in pages and WAL frames it already owns.
    let filler = disk.dir.join("filler");
    let filled = fill(&filler);
    let mut first_refusal = None;
    for n in 0..400 {
        let resp = server.post_json("/api/polls", &big_poll(n));
        match resp.status {
            201 => acked.push(Created::from_response(&resp)),
            _ => {
                first_refusal = Some(resp);
                break;
            }
        }
    }
    let refused = first_refusal.expect("400 big creations on a full 2 MiB disk were all accepted");
    assert_full(&refused, "creation on a full disk");
    eprintln!("filler took {filled} bytes; {} polls acknowledged before the first 503", acked.len());

    // Every kind of write is refused the same way, repeatedly, and polld lives on.
    for n in 0..5 {
        assert_full(&server.post_json("/api/polls", &big_poll(1000 + n)), "repeated creation");
    }
    let a = &acked[1];
    let long_translation = json!({"translations": {"fr": {
        "title": "t".repeat(200),
        "questions": [{"label": "l".repeat(500), "options": ["x".repeat(200), "y".repeat(200), "z".repeat(200)]},
                      {"label": "m".repeat(500), "options": ["x".repeat(200), "y".repeat(200)]}]}}});
    let patched = server.patch_json(&a.id, &a.token, &long_translation);
    if patched.status != 200 {
        assert_full(&patched, "PATCH on a full disk");
    }
    let vote = server.record(&acked[2].id, &[Some(1), None]);
    if let Err(e) = &vote {
        assert!(e.to_string().contains("Storage is full"), "a vote on a full disk: {e}");
    }

    // Reads keep working.
    for c in &acked {
        server.get(&c.path()).assert_status(200);
    }
    let results = server.get(&acked[0].results_path());
    results.assert_status(200);
    assert_eq!(results.json()["totalResponses"], 1);
    server.get("/api").assert_status(200);
    assert_eq!(integrity(&server.db_path()), "ok", "integrity_check on a full disk");

    // Space returns: writes succeed again, without restarting polld.
    std::fs::remove_file(&filler).unwrap();
    let again = server.create_public();
    acked.push(again.clone());
    server.patch_json(&again.id, &again.token, &json!({"closed": true})).assert_status(200);
    server.record(&acked[0].id, &[Some(2), Some(0)]).unwrap();
    let gone = acked.remove(1);
    server.delete(&gone.id, &gone.token).assert_status(204);
    server.get(&gone.path()).assert_status(404);

    // Nothing acknowledged was lost, nothing is corrupted, nothing crashed.
    for c in &acked {
        server.get(&c.path()).assert_status(200);
    }
    assert_eq!(server.get(&acked[0].results_path()).json()["totalResponses"], 2);
    assert_eq!(integrity(&server.db_path()), "ok", "integrity_check after recovery");
    let logs = server.logs();
    assert!(!logs.contains("panicked"), "polld panicked:\n{logs}");
    assert!(!logs.contains("internal error"), "polld answered 500 somewhere:\n{logs}");
    drop(server);
    drop(disk);
}
