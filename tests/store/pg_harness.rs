//! The PostgreSQL harness itself (tests/common/pg.rs), before any store
//! test leans on it: a cluster starts and answers SQL, a synchronous
//! standby streams and is promoted, WAL reaches the archive, a base backup
//! is taken, the raw-byte scan finds a marker in every copy (so a privacy
//! scan that finds nothing means something), and no server outlives its
//! test: not after a drop, not after a panic, not after the test process
//! ends with the shared cluster still running.
//!
//! Without PostgreSQL installed each test skips visibly (fails under
//! `CI=true`).

use crate::common;
use crate::common::machine;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;

/// Waits until no process works in `dir` and `dir` is gone.
fn assert_gone(dir: &Path, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = processes_in(dir);
        if left.is_empty() && !dir.exists() {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: processes {left:?} or the directory {} left behind", dir.display());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_primary_answers_sql_and_survives_a_kill() {
    let _machine = machine::shared();
    let Some(pg) = PgCluster::start() else { return };
    assert!(pg.data_dir().join("PG_VERSION").is_file());
    assert_eq!(pg.url("polls"), format!("postgresql://postgres@127.0.0.1:{}/polls", pg.port()));
    assert_eq!(pg.psql("postgres", "SHOW fsync"), "on", "fsync stays on by default");
    assert_eq!(pg.psql("postgres", "SHOW wal_level"), "replica");

    pg.create_db("polls");
    let out = pg.psql("polls", "CREATE TABLE t (id int PRIMARY KEY, v text);\nINSERT INTO t VALUES (1, 'a'), (2, 'b');\nSELECT id, v FROM t ORDER BY id");
    assert_eq!(out, "1|a\n2|b");
    let err = pg.try_psql("polls", "INSERT INTO t VALUES (1, 'again')").unwrap_err();
    assert!(err.contains("duplicate key"), "{err}");
    assert!(pg.try_psql("no_such_db", "SELECT 1").is_err());

    // A committed row survives SIGKILL of every server process.
    let before = processes_in(&pg.data_dir());
    assert!(before.len() >= 3, "a running server has a postmaster and its workers: {before:?}");
    pg.kill();
    assert!(processes_in(&pg.data_dir()).is_empty());
    assert!(pg.try_psql("polls", "SELECT 1").is_err(), "a killed server answers nothing");
    pg.start_again();
    assert_eq!(pg.psql("polls", "SELECT count(*) FROM t"), "2");

    pg.stop();
    assert!(processes_in(&pg.data_dir()).is_empty());
    pg.start_again();
    assert_eq!(pg.psql("polls", "SELECT v FROM t WHERE id = 2"), "b");
}

#[test]
fn a_synchronous_standby_streams_archives_backs_up_and_is_promoted() {
    let _machine = machine::shared();
    let Some(primary) = PgCluster::builder().archive().start() else { return };
    let started = Instant::now();
    let standby = primary.synchronous_standby();
    eprintln!("synchronous standby streaming after {:?}", started.elapsed());
    let state = primary.psql("postgres", "SELECT application_name, sync_state FROM pg_stat_replication");
    assert!(state.ends_with("|quorum"), "the standby confirms commits: {state}");
    assert_eq!(standby.psql("postgres", "SELECT pg_is_in_recovery()"), "t");

    let marker = unique_marker("pgharness");
    let never = unique_marker("pgnever");
    primary.create_db("polls");
    primary
        .psql("polls", &format!("CREATE TABLE t (id int PRIMARY KEY, v text);\nINSERT INTO t VALUES (1, '{marker}')"));
    primary.wait_replicated(&standby);
    assert_eq!(standby.psql("polls", "SELECT v FROM t"), marker);
    let refused = standby.try_psql("polls", "INSERT INTO t VALUES (2, 'x')").unwrap_err();
    assert!(refused.contains("read-only"), "{refused}");

    // Into every copy: data files, WAL, archive, standby, base backup.
    primary.checkpoint();
    let segment = primary.switch_wal();
    assert!(primary.archive_dir().join(&segment).is_file());
    primary.wait_replicated(&standby);
    standby.checkpoint();
    let backup = tempfile::tempdir().unwrap();
    let backup_dir = backup.path().join("base");
    primary.basebackup(&backup_dir);
    assert!(backup_dir.join("PG_VERSION").is_file());

    let under = |hits: &[PathBuf], dir: &Path| hits.iter().any(|p| p.starts_with(dir));
    let hits = files_containing(&primary.data_dir(), marker.as_bytes());
    assert!(under(&hits, &primary.data_dir().join("base")), "marker not in the primary's base/: {hits:?}");
    assert!(under(&hits, &primary.wal_dir()), "marker not in the primary's pg_wal/: {hits:?}");
    for (what, dir) in [
        ("the WAL archive", primary.archive_dir()),
        ("the standby's base/", standby.data_dir().join("base")),
        ("the standby's pg_wal/", standby.wal_dir()),
        ("the base backup", backup_dir.clone()),
    ] {
        assert!(!files_containing(&dir, marker.as_bytes()).is_empty(), "marker not found in {what}");
    }
    for dir in [primary.dir(), standby.dir(), backup.path()] {
        assert_eq!(files_containing(dir, never.as_bytes()), Vec::<PathBuf>::new(), "a marker never written");
    }

    // Failover: the primary dies, the standby takes over and writes.
    primary.kill();
    standby.promote();
    standby.psql("polls", "INSERT INTO t VALUES (2, 'after failover')");
    assert_eq!(standby.psql("polls", "SELECT count(*) FROM t"), "2");
    let segment = standby.switch_wal();
    assert!(standby.archive_dir().join(segment).is_file(), "the promoted standby archives into its own archive");
}

#[test]
fn drop_leaves_no_process_even_after_a_panic() {
    let _machine = machine::shared();
    let Some(primary) = PgCluster::builder().no_fsync().start() else { return };
    let standby = primary.standby();
    let dirs = [primary.dir().to_path_buf(), standby.dir().to_path_buf()];
    assert!(!processes_in(&dirs[0]).is_empty() && !processes_in(&dirs[1]).is_empty());
    drop(standby);
    drop(primary);
    for dir in &dirs {
        assert_gone(dir, "after drop");
    }

    let (tx, rx) = std::sync::mpsc::channel();
    let panicked = std::thread::spawn(move || {
        let primary = PgCluster::builder().no_fsync().start().unwrap();
        let standby = primary.standby();
        tx.send([primary.dir().to_path_buf(), standby.dir().to_path_buf()]).unwrap();
        panic!("a test fails while its clusters run");
    })
    .join();
    assert!(panicked.is_err());
    for dir in rx.recv().unwrap() {
        assert_gone(&dir, "after a panic");
    }
}

#[test]
fn shared_databases_are_separate_and_dropped() {
    let _machine = machine::shared();
    let Some(a) = PgCluster::shared_db() else { return };
    let b = PgCluster::shared_db().unwrap();
    assert!(std::ptr::eq(a.cluster, b.cluster), "one cluster per test binary");
    assert_ne!(a.name, b.name);
    assert_eq!(a.url(), a.cluster.url(&a.name));
    assert_eq!(a.cluster.psql("postgres", "SHOW fsync"), "off");
    a.psql("CREATE TABLE t (v text); INSERT INTO t VALUES ('a')");
    assert!(b.try_psql("SELECT * FROM t").is_err(), "b has no table of a's");
    let name = b.name.clone();
    let cluster = b.cluster;
    drop(b);
    let left = cluster.psql("postgres", &format!("SELECT count(*) FROM pg_database WHERE datname = '{name}'"));
    assert_eq!(left, "0", "a PgDb drops its database");
}

/// Run only as the child of the next test (by its environment variable):
/// starts the shared cluster, prints its directory and returns, leaving the
/// cluster to the end of the process.
#[test]
fn shared_cluster_child() {
    let _machine = machine::shared();
    if std::env::var_os("PG_HARNESS_CHILD").is_none() {
        return;
    }
    let db = PgCluster::shared_db().unwrap();
    db.psql("SELECT 1");
    assert!(!processes_in(db.cluster.dir()).is_empty());
    println!("SHARED_DIR={}", db.cluster.dir().display());
    std::mem::forget(db);
}

#[test]
fn the_shared_cluster_is_stopped_when_the_test_process_ends() {
    let _machine = machine::shared();
    if pg_bin().is_none() {
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &common::libtest_name(module_path!(), "shared_cluster_child"),
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("PG_HARNESS_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child failed: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // libtest prints the line after "test shared_cluster_child ... ".
    let dir = stdout
        .split_once("SHARED_DIR=")
        .and_then(|(_, rest)| rest.lines().next())
        .expect("the child names its cluster");
    assert_gone(Path::new(dir), "after the test process ended");
}
