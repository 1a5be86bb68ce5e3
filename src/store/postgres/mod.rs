//! The PostgreSQL engine: several nodes on one database. Its migrations
//! (`sql/postgres/`), its connections ([`link`]: each comes back by itself
//! after the database was away), its row operations ([`rows`]) and its
//! writer thread ([`writer`]).
//!
//! Promises (docs/PRIVACY.md, "Several nodes on PostgreSQL"):
//! - the same sealed rows as SQLite, mixed the same way (`writer::mix`):
//!   every copy PostgreSQL makes (WAL, archive, standby, base backup) is
//!   noise once the key state has moved past the lease of the data key it
//!   was sealed under, and no row's `xmin` or `ctid` ties a ballot to when
//!   it came, or to the code or form that cast it, once its poll is mixed;
//! - votes keep their group commit: one writer thread per node takes what
//!   is queued, and writes the batch's ballots in one multi-row statement,
//!   in shuffled order, in one transaction, answering only after the commit;
//! - a database that is unreachable, shutting down or read-only (a standby
//!   not yet promoted) is answered 503 with Retry-After, never a 500, and
//!   each connection reconnects at its next use, with backoff, without a
//!   restart of polld;
//! - the password never shows: not in a log line ([`shown`]), and it may
//!   come from a file instead of the URL (`POLL_DB_PASSWORD_FILE`,
//!   [`config`]).

mod link;
mod rows;
mod writer;

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, anyhow, bail};
use postgres::NoTls;

use crate::day::Day;
use crate::error::Error;
use crate::keyring::Keyring;

use super::Opened;
use super::binding::{Keys, bind};
use super::engine::{Engine, Health, ReadConn, Rows, Stats};
use super::seen::Seen;
use super::vocab::{FORMAT, KeyringRow};
use super::writer::upgrade;
use super::writer::{Handle, WriterConfig};

use link::{CONNECT_TIMEOUT, Link, Pool, PoolRead};

/// The migrations, in order. Append-only: a released file is never edited.
const MIGRATIONS: &[(&str, &str)] = &[
    ("001_init.sql", include_str!("../../../sql/postgres/001_init.sql")),
    ("002_format_two.sql", include_str!("../../../sql/postgres/002_format_two.sql")),
    ("003_drop_format_one_codes.sql", include_str!("../../../sql/postgres/003_drop_format_one_codes.sql")),
];

/// The migration after which the format pass runs (`writer::upgrade`).
const FORMAT_TWO_VERSION: i64 = 2;

/// The schema version this binary writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The advisory lock nodes take to migrate one at a time ("anonpoll" in
/// ASCII, as a number).
const MIGRATION_LOCK: i64 = 0x616e_6f6e_706f_6c6c;

/// The environment variable naming a file that holds the database
/// password (systemd's `LoadCredential=` puts one in
/// `$CREDENTIALS_DIRECTORY`).
pub const PASSWORD_FILE_VAR: &str = "POLL_DB_PASSWORD_FILE";

/// Whether `db` names a PostgreSQL database rather than a SQLite file.
pub fn is_url(db: &str) -> bool {
    db.starts_with("postgresql://") || db.starts_with("postgres://")
}

/// `db` as it may be shown in a log line: a PostgreSQL URL loses any
/// password, in its user part or its query (`?password=`).
pub fn shown(db: &Path) -> String {
    let Some(url) = db.to_str().filter(|d| is_url(d)) else { return db.display().to_string() };
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (rest, query) = rest.split_once('?').map_or((rest, None), |(r, q)| (r, Some(q)));
    let rest = match rest.rsplit_once('@') {
        Some((user, host)) => format!("{}@{host}", user.split_once(':').map_or(user, |(u, _)| u)),
        None => rest.to_owned(),
    };
    let query = query
        .map(|q| {
            q.split('&').filter(|p| !p.to_ascii_lowercase().starts_with("password=")).collect::<Vec<_>>().join("&")
        })
        .filter(|q| !q.is_empty())
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    format!("{scheme}://{rest}{query}")
}

/// Whether a PostgreSQL error means "the database is away or busy": the
/// connection broke, the server is shutting down or starting, it is a
/// standby that takes no writes, it ran out of room, or another node's
/// transaction got in the way. All answered 503; the rest is a bug.
fn is_transient(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.code().map(|c| c.code()) {
        Some(code) => {
            code.starts_with("08")
                || code.starts_with("53")
                || code.starts_with("57P")
                || matches!(code, "25006" | "40001" | "40P01" | "55P03" | "58030")
        }
        // No server error: the connection failed underneath (refused,
        // reset, timed out, or a server that takes no writes when the URL
        // asks for one that does). Anything else (a value that does not
        // convert, say) is a bug: 500.
        None => std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>()),
    }
}

/// PostgreSQL: a database that is away, starting, shutting down, read-only
/// (a standby not yet promoted), full, or in another node's way is a 503;
/// anything else is a bug (internal, details to stderr only).
impl From<postgres::Error> for Error {
    fn from(e: postgres::Error) -> Error {
        if is_transient(&e) {
            eprintln!("anonpoll: PostgreSQL: {e}");
            Error::Unavailable { reason: "The database cannot be reached; nothing was written.", retry_after_secs: 5 }
        } else {
            Error::Internal(e.into())
        }
    }
}

/// Whether another node's transaction got in the way (the batch may run again).
fn is_conflict(e: &postgres::Error) -> bool {
    matches!(e.code().map(|c| c.code()), Some("40001" | "40P01"))
}

/// The answer when other nodes kept a batch from going through.
fn unavailable_busy() -> Error {
    Error::Unavailable { reason: "The database is busy; try again.", retry_after_secs: 1 }
}

/// The connection settings of a `postgresql://` URL, with the store's
/// connect timeout unless the URL sets one, and the password from the file
/// [`PASSWORD_FILE_VAR`] names, if it names one (libpq's `.pgpass` is not
/// read: the file is the one way besides the URL).
pub(super) fn config(url: &str) -> anyhow::Result<Arc<postgres::Config>> {
    let mut config: postgres::Config = url
        .parse()
        .map_err(|e| anyhow!("not a valid PostgreSQL URL ({e}); the form is postgresql://USER@HOST:PORT/DBNAME"))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name("anonpoll");
    }
    if let Some(file) = std::env::var_os(PASSWORD_FILE_VAR).filter(|f| !f.is_empty()) {
        let text = zeroize::Zeroizing::new(std::fs::read_to_string(&file).with_context(|| {
            format!("cannot read the password file {} ({PASSWORD_FILE_VAR})", Path::new(&file).display())
        })?);
        let password = text.trim_end_matches(['\n', '\r']);
        if password.is_empty() {
            bail!("the password file {} ({PASSWORD_FILE_VAR}) is empty", Path::new(&file).display());
        }
        config.password(password);
    }
    Ok(Arc::new(config))
}

/// Brings the database to schema version `upto`, one node at a time, and
/// refuses a database written by a newer anonpoll.
fn migrate(client: &mut postgres::Client, upto: i64) -> anyhow::Result<()> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS anonpoll_schema (version BIGINT NOT NULL)")?;
    let version: i64 = match tx.query_opt("SELECT version FROM anonpoll_schema", &[])? {
        Some(r) => r.try_get(0)?,
        None => {
            tx.execute("INSERT INTO anonpoll_schema (version) VALUES (0)", &[])?;
            0
        }
    };
    if version > SCHEMA_VERSION {
        bail!(
            "the database has schema version {version}, newer than this anonpoll ({SCHEMA_VERSION}); \
             refusing to touch it: upgrade anonpoll"
        );
    }
    for (i, (name, sql)) in MIGRATIONS.iter().enumerate().take(usize::try_from(upto)?).skip(usize::try_from(version)?) {
        if i as i64 == FORMAT_TWO_VERSION
            && tx.query_one("SELECT EXISTS (SELECT 1 FROM sealed_polls WHERE format = 1)", &[])?.try_get(0)?
        {
            // A poll the format pass could not move keeps format 1's rows;
            // the schema waits here (the pass named it, and tries again at
            // each start).
            break;
        }
        tx.batch_execute(sql).with_context(|| format!("migration postgres/{name} failed"))?;
        tx.execute("UPDATE anonpoll_schema SET version = $1", &[&(i as i64 + 1)])?;
    }
    tx.commit()?;
    Ok(())
}

/// The schema version as stored.
fn schema_version(client: &mut postgres::Client) -> anyhow::Result<i64> {
    Ok(client.query_one("SELECT version FROM anonpoll_schema", &[])?.try_get(0)?)
}

/// The `keyring` row, as stored.
fn keyring_row(c: &mut postgres::Client) -> anyhow::Result<KeyringRow> {
    let Some(r) = c.query_opt("SELECT ring, day, lease_days FROM keyring", &[])? else {
        return Ok(KeyringRow::default());
    };
    let (ring, day, lease): (Vec<u8>, Option<String>, Option<i32>) = (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
    Ok(KeyringRow {
        ring: Some(<[u8; 16]>::try_from(ring.as_slice()).map_err(|_| anyhow!("the stored key ring id is malformed"))?),
        day: day.map(|d| Day::parse(&d).context("the stored key day is malformed")).transpose()?,
        lease_days: lease.map(u16::try_from).transpose().context("the stored lease is malformed")?,
    })
}

/// Opens the key file and binds it to the database, as for SQLite
/// (`binding::bind`): the ring id is stored once, by whichever node comes
/// first, and every node's key file must carry it; the furthest day and the
/// lease are kept for every node.
fn open_keys(client: &mut postgres::Client, keys: &Keys, today: Day) -> anyhow::Result<Keyring> {
    let stored = keyring_row(client)?;
    let (keyring, row) = bind(keys, stored, today)?;
    let mut tx = client.transaction()?;
    tx.execute("LOCK TABLE keyring IN EXCLUSIVE MODE", &[])?;
    tx.execute(
        "INSERT INTO keyring (ring) SELECT $1 WHERE NOT EXISTS (SELECT 1 FROM keyring)",
        &[&&keyring.ring()[..]],
    )?;
    tx.execute(
        "UPDATE keyring SET day = greatest(coalesce(day, $1), $1), lease_days = $2",
        &[&row.day.map(|d| d.to_string()), &row.lease_days.map(i32::from)],
    )?;
    tx.commit()?;
    if let Some(ring) = keyring_row(client)?.ring {
        keyring.check_ring(&ring)?;
    }
    Ok(keyring)
}

/// Opens the PostgreSQL database at `url` with its key file (which, unlike
/// SQLite's, has no default place: give `--keys`), migrates it (one node at
/// a time, the format pass included) and starts this node's writer. The
/// database must be reachable now; afterwards it may come and go.
pub(super) fn open(url: &str, keys: &Keys, config: WriterConfig, seen: Arc<Seen>) -> anyhow::Result<Opened> {
    let pg = self::config(url)?;
    let mut client = pg.connect(NoTls).map_err(|e| anyhow!("cannot connect to the PostgreSQL database: {e}"))?;
    migrate(&mut client, FORMAT_TWO_VERSION)?;
    let keyring = Arc::new(open_keys(&mut client, keys, Day::today())?);
    format_two(&mut client, &keyring, &seen)?;
    migrate(&mut client, SCHEMA_VERSION)?;
    drop(client);
    let link = Link::new(pg.clone());
    let writer = Handle::spawn(config, {
        let (keys, seen) = (keyring.clone(), seen.clone());
        move |rx| writer::run(link, keys, seen, rx, config)
    })?;
    let engine = Arc::new(Postgres { config: pg.clone(), reads: Pool::new(pg) });
    Ok(Opened { engine, writer, keys: keyring })
}

/// The format pass on PostgreSQL: every poll of format 1 to format 2, one
/// per transaction, its row locked (another node may be doing the same).
fn format_two(client: &mut postgres::Client, keys: &Keyring, seen: &Seen) -> anyhow::Result<()> {
    if schema_version(client)? != FORMAT_TWO_VERSION {
        return Ok(());
    }
    let mut statements = link::Stmts::new();
    let old = rows::PgRows::new(client, &mut statements).polls_of_format(FORMAT - 1)?;
    upgrade::pass(&old, seen, |id| {
        let mut tx = client.transaction()?;
        tx.execute("SELECT 1 FROM sealed_polls WHERE id = $1 FOR UPDATE", &[&id])?;
        let mut statements = link::Stmts::new();
        let mut rows = rows::PgRows::new(&mut tx, &mut statements);
        let done = upgrade::upgrade_poll(&mut rows, keys, seen, id, Day::today());
        let aborted = rows.aborted;
        drop(rows);
        if aborted && done.is_ok() {
            return Err(Error::internal(anyhow!("a statement of the format pass failed")));
        }
        let done = done?;
        tx.commit()?;
        Ok(done)
    })?;
    Ok(())
}

/// A connection to the PostgreSQL database at `url` for the audit.
pub(super) fn audit_conn(url: &str) -> anyhow::Result<Box<dyn ReadConn>> {
    Ok(Box::new(PoolRead(Pool::new(config(url)?))))
}

/// A PostgreSQL database: its connection settings and this node's read
/// connections.
struct Postgres {
    config: Arc<postgres::Config>,
    reads: Arc<Pool>,
}

impl Engine for Postgres {
    fn reader(&self) -> anyhow::Result<Box<dyn ReadConn>> {
        Ok(Box::new(PoolRead(self.reads.clone())))
    }

    fn stats(&self, today: Day) -> anyhow::Result<Stats> {
        let mut client = self.config.connect(NoTls)?;
        let r = client.query_one(
            "SELECT (SELECT count(*) FROM sealed_polls WHERE expires_on > $1),
                    (SELECT count(*) FROM sealed_polls WHERE expires_on <= $1),
                    (SELECT count(*) FROM sealed_ballots),
                    pg_database_size(current_database())",
            &[&today.to_string()],
        )?;
        let n = |i: usize| -> anyhow::Result<u64> { Ok(u64::try_from(r.try_get::<_, i64>(i)?)?) };
        Ok(Stats { live_polls: n(0)?, expired_polls: n(1)?, responses: n(2)?, database_bytes: n(3)? })
    }

    fn health(&self) -> anyhow::Result<Health> {
        let mut client = self.config.connect(NoTls)?;
        // PostgreSQL checks its pages as it reads them (with data checksums
        // on); `amcheck` is the operator's deeper tool.
        client.simple_query("SELECT count(*) FROM sealed_polls")?;
        Ok(Health {
            integrity: "ok".into(),
            schema_version: schema_version(&mut client)?,
            binary_schema_version: SCHEMA_VERSION,
        })
    }

    fn backup(&self, _target: &Path, _copy: &mut dyn FnMut(&mut dyn Rows) -> Result<(), Error>) -> anyhow::Result<()> {
        bail!(
            "pollctl backup copies a SQLite file; back a PostgreSQL database up with pg_dump \
             (docs/OPERATIONS.md, \"Running several nodes\")"
        )
    }

    fn records_forms(&self) -> bool {
        true
    }
}
