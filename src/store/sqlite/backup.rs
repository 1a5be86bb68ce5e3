//! What `pollctl` asks of a SQLite file besides its polls: figures, and a
//! consistent copy of it.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use rusqlite::{Connection, OpenFlags, params};

use crate::day::Day;
use crate::error::Error;

use super::super::engine::{Rows, Stats};
use super::{SqliteRows, connect, private_file, writer};

/// Operator-level figures: nothing about any single poll.
pub(super) fn stats(conn: &Connection, today: Day) -> anyhow::Result<Stats> {
    let count = |sql: &str| -> anyhow::Result<u64> {
        let n: i64 = conn.query_row(sql, params![today.to_string()], |r| r.get(0))?;
        Ok(u64::try_from(n)?)
    };
    let live = count("SELECT count(*) FROM sealed_polls WHERE expires_on > ?1")?;
    let expired = count("SELECT count(*) FROM sealed_polls WHERE expires_on <= ?1")?;
    let responses: i64 = conn.query_row("SELECT count(*) FROM sealed_ballots", [], |r| r.get(0))?;
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    Ok(Stats {
        live_polls: live,
        expired_polls: expired,
        responses: u64::try_from(responses)?,
        database_bytes: u64::try_from(pages * page_size)?,
    })
}

/// Writes a consistent, compacted copy of the database at `path` to
/// `target` (which must not exist) while the service keeps running,
/// private to the user running the backup (0600). `copy` then runs in one
/// transaction on the copy (the store mixes there the polls whose newest
/// ballots are still staged, so that the copy does not keep them together
/// as the poll's latest for as long as it is kept), and the copy is
/// compacted again so that no page of before is left in it. If any step
/// after the copy's file was created fails, the copy goes (its log files
/// too): a copy whose mix failed holds its newest ballots in the order
/// they came.
pub(super) fn backup(
    path: &Path,
    busy: Duration,
    target: &Path,
    copy: &mut dyn FnMut(&mut dyn Rows) -> Result<(), Error>,
) -> anyhow::Result<()> {
    // Created empty here, where it must be new (VACUUM INTO fills an empty
    // file, and would create one with the default mode 0644).
    match private_file(target, true) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            bail!("{} already exists; refusing to overwrite it", target.display())
        }
        other => other.with_context(|| format!("cannot create {}", target.display()))?,
    }
    // Every connection to the copy is closed when `fill` returns, so that
    // none writes to it (or its log) after it was removed.
    fill(path, busy, target, copy).map_err(|e| match remove_copy(target) {
        Ok(()) => e.context(format!("the backup failed; its partial copy {} was removed", target.display())),
        Err(gone) => e.context(format!(
            "the backup failed, and its partial copy {} could not be removed ({gone}): remove it, it may \
             hold ballots in the order they came",
            target.display()
        )),
    })
}

/// The steps of [`backup`] once `target` exists, empty.
fn fill(
    path: &Path,
    busy: Duration,
    target: &Path,
    copy: &mut dyn FnMut(&mut dyn Rows) -> Result<(), Error>,
) -> anyhow::Result<()> {
    let conn = connect(path, OpenFlags::SQLITE_OPEN_READ_WRITE, busy)?;
    let to = target.to_str().context("the backup path must be valid UTF-8")?;
    conn.execute("VACUUM INTO ?1", params![to])?;
    drop(conn);
    let mut copied = connect(target, OpenFlags::SQLITE_OPEN_READ_WRITE, busy)?;
    let tx = copied.transaction()?;
    let staged = SqliteRows(&tx).staged_polls()?;
    copy(&mut SqliteRows(&tx)).map_err(|e| anyhow::anyhow!("mixing the copy's new ballots: {e}"))?;
    tx.commit()?;
    if !staged.is_empty() {
        copied.execute_batch("VACUUM")?;
        writer::checkpoint(&copied, busy);
    }
    Ok(())
}

/// Removes the copy at `target` and whatever log files SQLite kept beside it.
fn remove_copy(target: &Path) -> std::io::Result<()> {
    // The logs first: a log left beside no database would be taken for
    // the log of the next file of that name.
    for suffix in ["-journal", "-wal", "-shm", ""] {
        let mut file = target.as_os_str().to_owned();
        file.push(suffix);
        match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use crate::store::testkit::data_dir;

    /// A backup whose in-copy mix fails leaves no copy behind: its file
    /// would hold the newest ballots unmixed.
    #[test]
    fn a_failed_mix_in_the_copy_leaves_no_copy() {
        let dir = data_dir();
        let store = Store::open(&dir.path().join("t.sqlite3")).unwrap();
        let target = dir.path().join("backup.sqlite3");
        let failing = &mut |_: &mut dyn Rows| Err(Error::internal(anyhow::anyhow!("a test's mix that fails")));
        let err = backup(store.path().unwrap(), Duration::from_secs(5), &target, failing).unwrap_err();
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.iter().all(|name| !name.to_string_lossy().starts_with("backup")), "{left:?}");
        let err = format!("{err:#}");
        assert!(err.contains("was removed") && err.contains("mixing the copy's new ballots"), "{err}");
        // The same backup that succeeds leaves its copy.
        backup(store.path().unwrap(), Duration::from_secs(5), &target, &mut |_| Ok(())).unwrap();
        assert!(target.exists());
    }
}
