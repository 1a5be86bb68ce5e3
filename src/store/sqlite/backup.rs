//! What `pollctl` asks of a SQLite file besides its polls: figures, and a
//! consistent copy of it.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use rusqlite::{Connection, OpenFlags, params};

use crate::day::Day;
use crate::error::Error;

use super::super::engine::{Rows, Stats};
use super::{Lite, connect, private_file, writer};

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
/// compacted again so that no page of before is left in it.
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
    let conn = connect(path, OpenFlags::SQLITE_OPEN_READ_WRITE, busy)?;
    let to = target.to_str().context("the backup path must be valid UTF-8")?;
    conn.execute("VACUUM INTO ?1", params![to])?;
    drop(conn);
    let mut copied = connect(target, OpenFlags::SQLITE_OPEN_READ_WRITE, busy)?;
    let tx = copied.transaction()?;
    let staged = Lite(&tx).staged_polls()?;
    copy(&mut Lite(&tx)).map_err(|e| anyhow::anyhow!("mixing the copy's new ballots: {e}"))?;
    tx.commit()?;
    if !staged.is_empty() {
        copied.execute_batch("VACUUM")?;
        writer::checkpoint(&copied, busy);
    }
    Ok(())
}
