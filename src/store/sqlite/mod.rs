//! The SQLite engine: one file (the embedded default), its migrations
//! (`sql/`), its connections, its writer thread ([`writer`]) and the
//! upgrade of a database from before sealing ([`legacy`]).
//!
//! Promises:
//! - every connection runs with `secure_delete=ON`, WAL,
//!   `synchronous=FULL`, foreign keys and a busy timeout, so an
//!   acknowledged write survives a crash and deleted rows are overwritten,
//!   not merely unlinked;
//! - after any erasure, change of a ballot or mix, the writer truncates the
//!   WAL and clears its index (`writer`), so no byte of what went is left in
//!   the live files, and nothing there keeps the order of commits;
//! - reads use per-thread connections with cached statements and never wait
//!   on the writer (WAL);
//! - a database, key file or folder it creates is private (0600, 0700).

mod backup;
pub(in crate::store) mod legacy;
mod rows;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::day::Day;
use crate::error::Error;
use crate::keyring::Keyring;

use super::binding::{Keys, bind};
use super::engine::{Engine, Health, ReadConn, Rows, Stats};
use super::seen::Seen;
use super::vocab::{FORMAT, KeyringRow};
use super::writer::{Handle, WriterConfig};
use super::{Opened, writer::upgrade};

pub(super) use rows::SqliteRows;

/// The migrations, in order. Append-only: a released file is never edited.
pub(in crate::store) const MIGRATIONS: &[(&str, &str)] = &[
    ("001_init.sql", include_str!("../../../sql/001_init.sql")),
    ("002_media.sql", include_str!("../../../sql/002_media.sql")),
    ("003_ballot_order.sql", include_str!("../../../sql/003_ballot_order.sql")),
    ("004_poll_settings.sql", include_str!("../../../sql/004_poll_settings.sql")),
    ("005_question_types.sql", include_str!("../../../sql/005_question_types.sql")),
    ("006_staged_keys.sql", include_str!("../../../sql/006_staged_keys.sql")),
    ("007_invites.sql", include_str!("../../../sql/007_invites.sql")),
    ("008_receipts.sql", include_str!("../../../sql/008_receipts.sql")),
    ("009_sealed.sql", include_str!("../../../sql/009_sealed.sql")),
    ("010_drop_cleartext.sql", include_str!("../../../sql/010_drop_cleartext.sql")),
    ("011_format_two.sql", include_str!("../../../sql/011_format_two.sql")),
    ("012_drop_format_one_codes.sql", include_str!("../../../sql/012_drop_format_one_codes.sql")),
];

/// The migration that adds the sealed tables: after it, the upgrade's
/// encryption pass ([`legacy`]) moves every poll into them, and only then
/// do the next migrations run (the one after drops the cleartext tables).
pub(in crate::store) const SEALED_VERSION: i64 = 9;

/// The migration that adds format 2's tables: after it, the format pass
/// (`writer::upgrade`) brings every poll to format 2, then the next drops
/// format 1's invite rows.
pub(in crate::store) const FORMAT_TWO_VERSION: i64 = 11;

/// The schema version this binary writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Creates `path` empty with mode 0600, where SQLite would create it 0644,
/// readable by every local user. An existing file is left alone: an error
/// only if `must_be_new`.
fn private_file(path: &Path, must_be_new: bool) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && !must_be_new => Ok(()),
        other => other.map(drop),
    }
}

/// Opens a connection with the pragmas every connection must have.
pub(in crate::store) fn connect(path: &Path, flags: OpenFlags, busy: Duration) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(busy)?;
    conn.execute_batch(
        "PRAGMA secure_delete = ON;
         PRAGMA foreign_keys = ON;
         PRAGMA synchronous = FULL;
         PRAGMA trusted_schema = OFF;",
    )?;
    Ok(conn)
}

/// Brings the database at `path` to schema version `upto` (at most
/// [`SCHEMA_VERSION`]), creating it if needed. Refuses a database written
/// by a newer anonpoll, and any migration past a pass's gate while that
/// pass has work left. An up-to-date database is only read here, so
/// opening one never waits for the write lock that a busy polld holds
/// most of the time under load.
pub(in crate::store) fn migrate(path: &Path, busy: Duration, upto: i64) -> anyhow::Result<()> {
    let mut conn = connect(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE, busy)
        .with_context(|| format!("cannot open database {}", path.display()))?;
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            bail!("database {} cannot use WAL mode (got {mode})", path.display());
        }
    }
    let version = |c: &Connection| -> rusqlite::Result<i64> { c.query_row("PRAGMA user_version", [], |r| r.get(0)) };
    let newer = |v: i64| {
        anyhow::anyhow!(
            "database {} has schema version {v}, newer than this anonpoll ({SCHEMA_VERSION}); \
             refusing to touch it: upgrade anonpoll",
            path.display()
        )
    };
    match version(&conn)? {
        v if v > SCHEMA_VERSION => return Err(newer(v)),
        v if v >= upto => return Ok(()),
        _ => {}
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // Read again under the write lock: another process may have migrated.
    let current = version(&tx)?;
    if current > SCHEMA_VERSION {
        return Err(newer(current));
    }
    for (i, (name, sql)) in MIGRATIONS.iter().enumerate().take(usize::try_from(upto)?).skip(usize::try_from(current)?) {
        if i as i64 == SEALED_VERSION && legacy::pending(&tx)? {
            bail!("migration {name} needs every poll sealed first; the encryption pass has not finished");
        }
        if i as i64 == FORMAT_TWO_VERSION && SqliteRows(&tx).polls_of_format(FORMAT - 1).is_ok_and(|p| !p.is_empty()) {
            // A poll the format pass could not move keeps format 1's rows;
            // the schema waits here (the pass named it, and tries again at
            // each start).
            break;
        }
        tx.execute_batch(sql).with_context(|| format!("migration {name} failed"))?;
        tx.pragma_update(None, "user_version", i as i64 + 1)?;
    }
    tx.commit()?;
    Ok(())
}

/// The `keyring` row, as stored (before migration 011 it has the ring only).
fn keyring_row(conn: &Connection) -> anyhow::Result<KeyringRow> {
    let has_day: bool =
        conn.query_row("SELECT EXISTS (SELECT 1 FROM pragma_table_info('keyring') WHERE name = 'day')", [], |r| {
            r.get(0)
        })?;
    let sql =
        if has_day { "SELECT ring, day, lease_days FROM keyring" } else { "SELECT ring, NULL, NULL FROM keyring" };
    let row: Option<(Vec<u8>, Option<String>, Option<i64>)> =
        conn.query_row(sql, [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).optional()?;
    let Some((ring, day, lease)) = row else { return Ok(KeyringRow::default()) };
    Ok(KeyringRow {
        ring: Some(
            <[u8; 16]>::try_from(ring.as_slice())
                .map_err(|_| anyhow::anyhow!("the stored key ring id is malformed"))?,
        ),
        day: day.map(|d| Day::parse(&d).context("the stored key day is malformed")).transpose()?,
        lease_days: lease.map(u16::try_from).transpose().context("the stored lease is malformed")?,
    })
}

/// Opens the key file for the database (`binding::bind`) and binds the two.
pub(in crate::store) fn open_keys(conn: &Connection, keys: &Keys, today: Day) -> anyhow::Result<Keyring> {
    let stored = keyring_row(conn)?;
    let (keyring, row) = bind(keys, stored, today)?;
    if stored.ring.is_none() {
        // A key file made just now, or one a crash left unbound: the
        // database has nothing sealed yet.
        conn.execute(
            "INSERT INTO keyring (ring) SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM keyring)",
            params![&keyring.ring()[..]],
        )?;
        if let Some(ring) = keyring_row(conn)?.ring {
            keyring.check_ring(&ring)?;
        }
    }
    note_keyring(conn, &row)?;
    Ok(keyring)
}

/// Stores the key state's day and lease, once migration 011 made room.
fn note_keyring(conn: &Connection, row: &KeyringRow) -> anyhow::Result<()> {
    let has_day: bool =
        conn.query_row("SELECT EXISTS (SELECT 1 FROM pragma_table_info('keyring') WHERE name = 'day')", [], |r| {
            r.get(0)
        })?;
    if has_day {
        conn.execute(
            "UPDATE keyring SET day = ?1, lease_days = ?2",
            params![row.day.map(|d| d.to_string()), row.lease_days.map(i64::from)],
        )?;
    }
    Ok(())
}

/// SQLite: a full disk or a lock held too long is a 503 (nothing was
/// written); anything else is a bug (internal, details to stderr only).
impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Error {
        use rusqlite::ErrorCode;
        match e.sqlite_error_code() {
            Some(ErrorCode::DiskFull) => {
                Error::Unavailable { reason: "Storage is full; nothing was written.", retry_after_secs: 30 }
            }
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
                Error::Unavailable { reason: "Storage is busy; nothing was written.", retry_after_secs: 1 }
            }
            _ => Error::Internal(e.into()),
        }
    }
}

/// A SQLite database file.
struct Sqlite {
    path: PathBuf,
    busy: Duration,
}

/// Opens (creating if needed) the database at `path` with its key file,
/// upgrades it (sealing every poll of a database from before sealing,
/// then bringing every poll to format 2, each pass resumable) and starts
/// the writer.
pub(super) fn open(path: &Path, keys: &Keys, config: WriterConfig, seen: Arc<Seen>) -> anyhow::Result<Opened> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::keyring::create_private_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    private_file(path, false).with_context(|| format!("cannot create database {}", path.display()))?;
    let busy = config.busy_timeout;
    let today = Day::today();
    migrate(path, busy, SEALED_VERSION)?;
    let mut conn = connect(path, OpenFlags::SQLITE_OPEN_READ_WRITE, busy)?;
    let keyring = Arc::new(open_keys(&conn, keys, today)?);
    legacy::seal_all(&conn, &keyring, today, usize::MAX)?;
    migrate(path, busy, FORMAT_TWO_VERSION)?;
    note_keyring(&conn, &keyring_row_after(&conn, &keyring)?)?;
    format_two(&mut conn, &keyring, &seen, today)?;
    migrate(path, busy, SCHEMA_VERSION)?;
    let engine = Arc::new(Sqlite { path: path.to_owned(), busy });
    let writer = Handle::spawn(config, {
        let (keys, seen) = (keyring.clone(), seen.clone());
        move |rx| writer::run(conn, keys, seen, rx, config)
    })?;
    Ok(Opened { engine, writer, keys: keyring })
}

/// The keyring row once 011 made room for the day and lease: the bound
/// key state's, unless the database has a later day already.
fn keyring_row_after(conn: &Connection, keyring: &Keyring) -> anyhow::Result<KeyringRow> {
    let stored = keyring_row(conn)?;
    Ok(KeyringRow {
        ring: Some(keyring.ring()),
        day: Some(stored.day.map_or(keyring.day(), |d| d.max(keyring.day()))),
        lease_days: Some(stored.lease_days.unwrap_or(keyring.lease())),
    })
}

/// The format pass (`writer::upgrade::pass`): every poll of format 1 to
/// format 2, one per `IMMEDIATE` transaction.
fn format_two(conn: &mut Connection, keys: &Keyring, seen: &Seen, today: Day) -> anyhow::Result<()> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version != FORMAT_TWO_VERSION {
        return Ok(());
    }
    let old = SqliteRows(conn).polls_of_format(FORMAT - 1)?;
    let (moved, _) = upgrade::pass(&old, seen, |id| {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let done = upgrade::upgrade_poll(&mut SqliteRows(&tx), keys, seen, id, today)?;
        tx.commit()?;
        Ok(done)
    })?;
    if moved > 0 {
        writer::checkpoint(conn, Duration::from_secs(5));
    }
    Ok(())
}

/// A reader's connection: SQLite's own, one per worker.
struct SqliteReadConn(Connection);

impl ReadConn for SqliteReadConn {
    fn once(&mut self, f: &mut dyn FnMut(&mut dyn Rows) -> Result<(), Error>) -> Result<(), Error> {
        f(&mut SqliteRows(&self.0))
    }

    fn snapshot(&mut self, f: &mut dyn FnMut(&mut dyn Rows) -> Result<(), Error>) -> Result<(), Error> {
        let tx = self.0.transaction()?;
        f(&mut SqliteRows(&tx))?;
        tx.finish()?;
        Ok(())
    }

    fn for_media_streams(&mut self) -> Result<(), Error> {
        self.0.pragma_update(None, "mmap_size", super::STREAM_MMAP)?;
        Ok(())
    }
}

/// A connection to the SQLite file at `path` for the audit (which may edit
/// a document).
pub(super) fn audit_conn(path: &Path) -> anyhow::Result<Box<dyn ReadConn>> {
    Ok(Box::new(SqliteReadConn(connect(path, OpenFlags::SQLITE_OPEN_READ_WRITE, Duration::from_secs(10))?)))
}

impl Engine for Sqlite {
    fn reader(&self) -> anyhow::Result<Box<dyn ReadConn>> {
        let conn = connect(&self.path, OpenFlags::SQLITE_OPEN_READ_WRITE, self.busy)?;
        conn.pragma_update(None, "query_only", true)?;
        Ok(Box::new(SqliteReadConn(conn)))
    }

    fn stats(&self, today: Day) -> anyhow::Result<Stats> {
        backup::stats(&connect(&self.path, OpenFlags::SQLITE_OPEN_READ_ONLY, self.busy)?, today)
    }

    fn health(&self) -> anyhow::Result<Health> {
        let conn = connect(&self.path, OpenFlags::SQLITE_OPEN_READ_ONLY, self.busy)?;
        let mut stmt = conn.prepare("PRAGMA integrity_check")?;
        let lines: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        Ok(Health { integrity: lines.join("\n"), schema_version: version, binary_schema_version: SCHEMA_VERSION })
    }

    fn backup(&self, target: &Path, copy: &mut dyn FnMut(&mut dyn Rows) -> Result<(), Error>) -> anyhow::Result<()> {
        backup::backup(&self.path, self.busy, target, copy)
    }

    fn records_forms(&self) -> bool {
        false
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.path)
    }
}

#[cfg(test)]
pub(super) mod testing {
    //! What the store's own tests need of this engine's insides.
    pub(in crate::store) use super::{
        FORMAT_TWO_VERSION, MIGRATIONS, SCHEMA_VERSION, SEALED_VERSION, connect, legacy, migrate, open_keys,
    };
}
