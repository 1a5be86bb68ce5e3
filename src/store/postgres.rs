//! The PostgreSQL engine: the row operations ([`Rows`]) in PostgreSQL's
//! SQL, its migrations, its connections (which come back by themselves
//! after the database was away) and its writer thread.
//!
//! Promises (issue 23; docs/PRIVACY.md, section 9):
//! - the same sealed rows as SQLite ([`super::engine`]): no byte of a poll
//!   is stored in clear, so every copy PostgreSQL makes (WAL, archive,
//!   standby, base backup) is noise once the key state has moved past the
//!   poll's lease;
//! - votes keep their group commit: one writer thread per node takes what is
//!   queued, and writes the batch's ballots in one multi-row statement,
//!   in shuffled order, in one transaction (one transaction id, one commit
//!   time for the batch), answering only after the commit;
//! - several nodes may write at once: each batch locks the rows of the polls
//!   it touches, in id order, before reading them, and reads them afresh
//!   (a poll's counts are one sealed value, so a node must never write
//!   counts it read before another node's commit); a deadlock or
//!   serialization failure between nodes retries the batch;
//! - a database that is unreachable, shutting down or read-only (a standby
//!   not yet promoted) is answered 503 with Retry-After, never a 500, and
//!   each connection reconnects at its next use, with backoff, without a
//!   restart of polld.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use postgres::types::ToSql;
use postgres::{GenericClient, IsolationLevel, NoTls, Statement};

use crate::day::Day;
use crate::error::Error;
use crate::keyring::{Keyring, RingId};

use super::engine::{BallotRows, Cols, DueRow, Lease, NewRow, RowWith, Rows, day_column, row_with};
use super::writer::{BatchFailed, FormState, Inbox, Job, Op, Writer, WriterConfig, batch_error};
use super::{Keys, corrupt};

/// The migrations, in order. Append-only: a released file is never edited.
const MIGRATIONS: &[(&str, &str)] = &[("001_init.sql", include_str!("../../sql/postgres/001_init.sql"))];

/// The schema version this binary writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The advisory lock nodes take to migrate one at a time ("anonpoll" in
/// ASCII, as a number).
const MIGRATION_LOCK: i64 = 0x616e_6f6e_706f_6c6c;

/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Longest wait between two connection attempts of one connection.
const MAX_BACKOFF: Duration = Duration::from_secs(4);

/// Whether `db` names a PostgreSQL database rather than a SQLite file.
pub fn is_url(db: &str) -> bool {
    db.starts_with("postgresql://") || db.starts_with("postgres://")
}

/// The error a request gets while the database cannot be reached.
fn unreachable() -> Error {
    Error::Unavailable { reason: "The database cannot be reached; try again shortly.", retry_after_secs: 5 }
}

/// Whether a PostgreSQL error means "the database is away or busy": the
/// connection broke, the server is shutting down or starting, it is a
/// standby that takes no writes, it ran out of room, or another node's
/// transaction got in the way. All answered 503; the rest is a bug.
pub(crate) fn is_transient(e: &postgres::Error) -> bool {
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

/// Whether another node's transaction got in the way (the batch may run again).
fn is_conflict(e: &postgres::Error) -> bool {
    matches!(e.code().map(|c| c.code()), Some("40001" | "40P01"))
}

/// One connection to the database, made again at its next use after it
/// broke, no sooner than its backoff allows; with its prepared statements.
pub(super) struct Link {
    config: Arc<postgres::Config>,
    client: Option<postgres::Client>,
    statements: HashMap<&'static str, Statement>,
    next_try: Instant,
    backoff: Duration,
}

impl Link {
    pub(super) fn new(config: Arc<postgres::Config>) -> Link {
        Link { config, client: None, statements: HashMap::new(), next_try: Instant::now(), backoff: Duration::ZERO }
    }

    /// The connection, made now if needed. 503 while the database is away.
    fn client(&mut self) -> Result<&mut postgres::Client, Error> {
        if self.client.as_ref().is_some_and(|c| c.is_closed()) {
            self.drop_client();
        }
        if self.client.is_none() {
            if Instant::now() < self.next_try {
                return Err(unreachable());
            }
            match self.config.connect(NoTls) {
                Ok(c) => {
                    self.client = Some(c);
                    self.backoff = Duration::ZERO;
                }
                Err(e) => {
                    self.backoff = (self.backoff * 2).clamp(Duration::from_millis(250), MAX_BACKOFF);
                    self.next_try = Instant::now() + self.backoff;
                    let cause = std::error::Error::source(&e).map(|c| format!(": {c}")).unwrap_or_default();
                    eprintln!("anonpoll: cannot connect to PostgreSQL: {e}{cause}");
                    return Err(unreachable());
                }
            }
        }
        self.client.as_mut().ok_or_else(unreachable)
    }

    /// Waits out the backoff before the next connection attempt (the
    /// writer, whose queue would otherwise fail at once while it lasts).
    fn wait_for_retry(&self) {
        let now = Instant::now();
        if self.client.is_none() && self.next_try > now {
            std::thread::sleep(self.next_try - now);
        }
    }

    fn drop_client(&mut self) {
        self.client = None;
        self.statements.clear();
    }

    /// Runs `f` on the connection; an error that says the connection is
    /// gone drops it, so the next use connects again.
    fn with<T>(&mut self, f: impl FnOnce(&mut postgres::Client, &mut Stmts) -> Result<T, Error>) -> Result<T, Error> {
        self.client()?;
        let Link { client, statements, .. } = self;
        let client = client.as_mut().ok_or_else(unreachable)?;
        let result = f(client, statements);
        if matches!(result, Err(Error::Unavailable { .. })) || client.is_closed() {
            self.drop_client();
        }
        result
    }

    /// One read, or a few that need not agree.
    pub(super) fn once<T>(&mut self, f: impl FnOnce(&mut dyn Rows) -> Result<T, Error>) -> Result<T, Error> {
        self.with(|client, statements| {
            f(&mut PgRows { c: client, statements, held: Vec::new(), savepoints: 0, aborted: false })
        })
    }

    /// Reads that see one snapshot.
    pub(super) fn snapshot<T>(&mut self, f: impl FnOnce(&mut dyn Rows) -> Result<T, Error>) -> Result<T, Error> {
        self.with(|client, statements| {
            let mut tx =
                client.build_transaction().isolation_level(IsolationLevel::RepeatableRead).read_only(true).start()?;
            let out = f(&mut PgRows { c: &mut tx, statements, held: Vec::new(), savepoints: 0, aborted: false })?;
            tx.commit()?;
            Ok(out)
        })
    }
}

/// Read connections one node keeps at most. polld's worker threads (32 by
/// default, each with an API and a page session) share them: a read holds
/// one for its few statements only, and PostgreSQL's default of 100
/// connections then serves several nodes (each node: these and its writer).
pub const READ_CONNECTIONS: usize = 16;

/// How long a read waits for a free connection before answering 503.
const POOL_WAIT: Duration = Duration::from_secs(5);

/// A node's read connections, shared by all its readers (see
/// [`READ_CONNECTIONS`]). Connections are made as reads need them and kept.
pub(super) struct Pool {
    config: Arc<postgres::Config>,
    state: Mutex<PoolState>,
    freed: Condvar,
}

struct PoolState {
    idle: Vec<Link>,
    /// Connections lent out now.
    out: usize,
}

impl Pool {
    pub(super) fn new(config: Arc<postgres::Config>) -> Arc<Pool> {
        Arc::new(Pool { config, state: Mutex::new(PoolState { idle: Vec::new(), out: 0 }), freed: Condvar::new() })
    }

    fn take(&self) -> Result<Link, Error> {
        let deadline = Instant::now() + POOL_WAIT;
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(link) = state.idle.pop() {
                state.out += 1;
                return Ok(link);
            }
            if state.out < READ_CONNECTIONS {
                state.out += 1;
                return Ok(Link::new(self.config.clone()));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::Unavailable { reason: "The database is busy; try again.", retry_after_secs: 1 });
            }
            state = self.freed.wait_timeout(state, deadline - now).unwrap_or_else(PoisonError::into_inner).0;
        }
    }

    fn give_back(&self, link: Link) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.out = state.out.saturating_sub(1);
        state.idle.push(link);
        drop(state);
        self.freed.notify_one();
    }

    /// Runs `f` on a connection of the pool.
    fn with<T>(&self, f: impl FnOnce(&mut Link) -> Result<T, Error>) -> Result<T, Error> {
        let mut link = self.take()?;
        let out = f(&mut link);
        self.give_back(link);
        out
    }

    /// One read, or a few that need not agree.
    pub(super) fn once<T>(&self, f: impl FnOnce(&mut dyn Rows) -> Result<T, Error>) -> Result<T, Error> {
        self.with(|link| link.once(f))
    }

    /// Reads that see one snapshot.
    pub(super) fn snapshot<T>(&self, f: impl FnOnce(&mut dyn Rows) -> Result<T, Error>) -> Result<T, Error> {
        self.with(|link| link.snapshot(f))
    }
}

/// Statements prepared on one connection, by their text.
type Stmts = HashMap<&'static str, Statement>;

/// A connection (or a transaction on it) seen as [`Rows`]. Ballots are held
/// back until [`Rows::finish_batch`] and then written in shuffled order in
/// one statement.
struct PgRows<'a, C: GenericClient> {
    c: &'a mut C,
    statements: &'a mut Stmts,
    held: Vec<(String, Vec<u8>, Vec<u8>)>,
    /// Savepoints open now.
    savepoints: usize,
    /// Whether a statement failed outside any savepoint (the transaction
    /// is then aborted, whatever follows).
    aborted: bool,
}

impl<C: GenericClient> PgRows<'_, C> {
    fn statement(&mut self, sql: &'static str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.c.prepare(sql)?;
        self.statements.insert(sql, s.clone());
        Ok(s)
    }

    /// Notes a failed statement: outside a savepoint it aborts the
    /// transaction.
    fn checked<T>(&mut self, r: Result<T, postgres::Error>) -> Result<T, Error> {
        if r.is_err() && self.savepoints == 0 {
            self.aborted = true;
        }
        Ok(r?)
    }

    fn query(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<postgres::Row>, Error> {
        let r = self.statement(sql).and_then(|s| self.c.query(&s, params));
        self.checked(r)
    }

    fn opt(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<Option<postgres::Row>, Error> {
        let r = self.statement(sql).and_then(|s| self.c.query_opt(&s, params));
        self.checked(r)
    }

    fn execute(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, Error> {
        let r = self.statement(sql).and_then(|s| self.c.execute(&s, params));
        self.checked(r)
    }
}

fn count(n: i64) -> Result<u64, Error> {
    u64::try_from(n).map_err(|_| corrupt("counter"))
}

/// The select of a poll row with `cols`, live on `$2` or regardless.
fn poll_sql(cols: Cols, live: bool) -> &'static str {
    match (cols, live) {
        (Cols::None, true) => {
            "SELECT created_on, expires_on, key_day, data_key FROM sealed_polls WHERE id = $1 AND expires_on > $2"
        }
        (Cols::Body, true) => {
            "SELECT created_on, expires_on, key_day, data_key, body FROM sealed_polls WHERE id = $1 AND expires_on > $2"
        }
        (Cols::Tallies, true) => {
            "SELECT created_on, expires_on, key_day, data_key, tallies FROM sealed_polls \
             WHERE id = $1 AND expires_on > $2"
        }
        (Cols::BodyTallies, true) => {
            "SELECT created_on, expires_on, key_day, data_key, body, tallies FROM sealed_polls \
             WHERE id = $1 AND expires_on > $2"
        }
        (Cols::None, false) => "SELECT created_on, expires_on, key_day, data_key FROM sealed_polls WHERE id = $1",
        (Cols::Body, false) => "SELECT created_on, expires_on, key_day, data_key, body FROM sealed_polls WHERE id = $1",
        (Cols::Tallies, false) => {
            "SELECT created_on, expires_on, key_day, data_key, tallies FROM sealed_polls WHERE id = $1"
        }
        (Cols::BodyTallies, false) => {
            "SELECT created_on, expires_on, key_day, data_key, body, tallies FROM sealed_polls WHERE id = $1"
        }
    }
}

impl<C: GenericClient> Rows for PgRows<'_, C> {
    fn poll(&mut self, id: &str, live_on: Option<Day>, cols: Cols) -> Result<Option<RowWith>, Error> {
        let row = match live_on {
            Some(day) => self.opt(poll_sql(cols, true), &[&id, &day.to_string()])?,
            None => self.opt(poll_sql(cols, false), &[&id])?,
        };
        let Some(row) = row else { return Ok(None) };
        let mut blobs = Vec::with_capacity(cols.count());
        for i in 0..cols.count() {
            blobs.push(row.try_get::<_, Vec<u8>>(4 + i)?);
        }
        row_with(row.try_get(0)?, row.try_get(1)?, row.try_get(2)?, row.try_get(3)?, blobs).map(Some)
    }

    fn insert_poll(&mut self, p: &NewRow) -> Result<(), Error> {
        self.execute(
            "INSERT INTO sealed_polls (id, created_on, expires_on, key_day, data_key, body, tallies)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                &p.id,
                &p.created_on.to_string(),
                &p.expires_on.to_string(),
                &p.key_day.to_string(),
                &p.data_key,
                &p.body,
                &p.tallies,
            ],
        )?;
        Ok(())
    }

    fn set_body(&mut self, id: &str, sealed: &[u8]) -> Result<(), Error> {
        self.execute("UPDATE sealed_polls SET body = $2 WHERE id = $1", &[&id, &sealed])?;
        Ok(())
    }

    fn set_tallies(&mut self, id: &str, sealed: &[u8]) -> Result<(), Error> {
        self.execute("UPDATE sealed_polls SET tallies = $2 WHERE id = $1", &[&id, &sealed])?;
        Ok(())
    }

    fn set_lease(&mut self, id: &str, expires_on: Option<Day>, key_day: Day, wrapped: &[u8]) -> Result<(), Error> {
        match expires_on {
            Some(e) => self.execute(
                "UPDATE sealed_polls SET expires_on = $2, key_day = $3, data_key = $4 WHERE id = $1",
                &[&id, &e.to_string(), &key_day.to_string(), &wrapped],
            )?,
            None => self.execute(
                "UPDATE sealed_polls SET key_day = $2, data_key = $3 WHERE id = $1",
                &[&id, &key_day.to_string(), &wrapped],
            )?,
        };
        Ok(())
    }

    fn delete_poll(&mut self, id: &str) -> Result<u64, Error> {
        self.execute("DELETE FROM sealed_polls WHERE id = $1", &[&id])
    }

    fn delete_expired(&mut self, day: Day) -> Result<u64, Error> {
        let n = self.execute("DELETE FROM sealed_polls WHERE expires_on <= $1", &[&day.to_string()])?;
        // Spent forms of days before yesterday can no longer be sent (their
        // key is gone): nothing needs them.
        self.execute("DELETE FROM redeemed_forms WHERE day < $1", &[&day.previous().to_string()])?;
        Ok(n)
    }

    fn leases(&mut self) -> Result<Vec<Lease>, Error> {
        // Locked in id order, as every batch locks: the day's key work of
        // one node and the votes of another wait for each other rather
        // than deadlock.
        let rows =
            self.query("SELECT id, expires_on, key_day, data_key FROM sealed_polls ORDER BY id FOR UPDATE", &[])?;
        rows.into_iter()
            .map(|r| {
                Ok((
                    r.try_get(0)?,
                    day_column(r.try_get(1)?, "expires_on")?,
                    day_column(r.try_get(2)?, "key_day")?,
                    r.try_get(3)?,
                ))
            })
            .collect()
    }

    fn key_day(&mut self, id: &str) -> Result<Option<String>, Error> {
        Ok(self.opt("SELECT key_day FROM sealed_polls WHERE id = $1", &[&id])?.map(|r| r.try_get(0)).transpose()?)
    }

    fn ballot(&mut self, poll: &str, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        Ok(self
            .opt("SELECT sealed FROM sealed_ballots WHERE poll_id = $1 AND id = $2", &[&poll, &key])?
            .map(|r| r.try_get(0))
            .transpose()?)
    }

    fn ballots(&mut self, poll: &str) -> Result<BallotRows, Error> {
        let rows = self.query("SELECT id, sealed FROM sealed_ballots WHERE poll_id = $1 ORDER BY id", &[&poll])?;
        Ok(rows.into_iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect::<Result<_, postgres::Error>>()?)
    }

    fn insert_ballot(&mut self, poll: &str, key: &[u8], sealed: Vec<u8>) -> Result<(), Error> {
        self.held.push((poll.to_owned(), key.to_vec(), sealed));
        Ok(())
    }

    fn update_ballot(&mut self, poll: &str, key: &[u8], sealed: &[u8]) -> Result<(), Error> {
        self.execute("UPDATE sealed_ballots SET sealed = $3 WHERE poll_id = $1 AND id = $2", &[&poll, &key, &sealed])?;
        Ok(())
    }

    fn delete_ballot(&mut self, poll: &str, key: &[u8]) -> Result<(), Error> {
        self.execute("DELETE FROM sealed_ballots WHERE poll_id = $1 AND id = $2", &[&poll, &key])?;
        Ok(())
    }

    fn insert_invite(&mut self, poll: &str, mac: &[u8]) -> Result<(), Error> {
        self.execute("INSERT INTO sealed_invites (poll_id, code_mac) VALUES ($1, $2)", &[&poll, &mac])?;
        Ok(())
    }

    fn spend_invite(&mut self, poll: &str, mac: &[u8]) -> Result<u64, Error> {
        self.execute(
            "UPDATE sealed_invites SET used = true WHERE poll_id = $1 AND code_mac = $2 AND NOT used",
            &[&poll, &mac],
        )
    }

    fn invite_counts(&mut self, poll: &str) -> Result<(u64, u64), Error> {
        let r = self
            .opt("SELECT count(*), count(*) FILTER (WHERE used) FROM sealed_invites WHERE poll_id = $1", &[&poll])?
            .ok_or_else(|| corrupt("invite count"))?;
        Ok((count(r.try_get(0)?)?, count(r.try_get(1)?)?))
    }

    fn insert_media(&mut self, id: &str, poll: &str, sealed: &[u8]) -> Result<(), Error> {
        self.execute("INSERT INTO sealed_media (id, poll_id, bytes) VALUES ($1, $2, $3)", &[&id, &poll, &sealed])?;
        Ok(())
    }

    fn delete_media(&mut self, id: &str, poll: Option<&str>) -> Result<u64, Error> {
        match poll {
            Some(p) => self.execute("DELETE FROM sealed_media WHERE id = $1 AND poll_id = $2", &[&id, &p]),
            None => self.execute("DELETE FROM sealed_media WHERE id = $1", &[&id]),
        }
    }

    fn media_poll(&mut self, id: &str) -> Result<Option<String>, Error> {
        Ok(self.opt("SELECT poll_id FROM sealed_media WHERE id = $1", &[&id])?.map(|r| r.try_get(0)).transpose()?)
    }

    fn media_spans(&mut self, id: &str, spans: &[(usize, usize)]) -> Result<Vec<Vec<u8>>, Error> {
        // The value is stored EXTERNAL (uncompressed): substring reads only
        // the chunks that hold the span.
        let mut out = Vec::with_capacity(spans.len());
        for &(start, len) in spans {
            let from = i32::try_from(start + 1).map_err(|_| corrupt("media offset"))?;
            let len = i32::try_from(len).map_err(|_| corrupt("media span"))?;
            let row = self
                .opt("SELECT substring(bytes FROM $2 FOR $3) FROM sealed_media WHERE id = $1", &[&id, &from, &len])?
                .ok_or_else(|| corrupt("media row"))?;
            let bytes: Vec<u8> = row.try_get(0)?;
            if bytes.len() != len as usize {
                return Err(corrupt("media span"));
            }
            out.push(bytes);
        }
        Ok(out)
    }

    fn due(&mut self, as_of: Day) -> Result<Vec<DueRow>, Error> {
        let rows = self.query(
            "SELECT p.expires_on, count(*)::bigint,
                    coalesce(sum((SELECT count(*) FROM sealed_ballots r WHERE r.poll_id = p.id)), 0)::bigint,
                    coalesce(sum((SELECT count(*) FROM sealed_media m WHERE m.poll_id = p.id)), 0)::bigint,
                    coalesce(sum((SELECT coalesce(sum(length(m.bytes)), 0) FROM sealed_media m
                                  WHERE m.poll_id = p.id)), 0)::bigint
             FROM sealed_polls p WHERE p.expires_on <= $1 GROUP BY p.expires_on ORDER BY p.expires_on",
            &[&as_of.to_string()],
        )?;
        rows.into_iter()
            .map(|r| Ok((r.try_get(0)?, [r.try_get(1)?, r.try_get(2)?, r.try_get(3)?, r.try_get(4)?])))
            .collect::<Result<_, postgres::Error>>()
            .map_err(Error::from)
    }

    fn records_forms(&self) -> bool {
        true
    }

    fn redeem_form(&mut self, day: Day, nonce: &[u8; 16]) -> Result<bool, Error> {
        let n = self.execute(
            "INSERT INTO redeemed_forms (day, nonce) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[&day.to_string(), &&nonce[..]],
        )?;
        Ok(n == 1)
    }

    fn ping(&mut self) -> Result<(), Error> {
        self.query("SELECT 1", &[])?;
        Ok(())
    }

    fn exec(&mut self, sql: &'static str) -> Result<(), Error> {
        let r = self.c.batch_execute(sql);
        if r.is_ok() {
            if sql.starts_with("SAVEPOINT") {
                self.savepoints += 1;
            } else if sql.starts_with("RELEASE") {
                self.savepoints = self.savepoints.saturating_sub(1);
            }
        }
        self.checked(r)
    }

    fn rolled_back(&mut self) -> bool {
        self.aborted
    }

    fn finish_batch(&mut self) -> Result<(), Error> {
        if self.held.is_empty() {
            return Ok(());
        }
        let mut held = std::mem::take(&mut self.held);
        // The order they came in is what must not be kept: not in the heap,
        // not in the WAL, not in the index.
        rand::seq::SliceRandom::shuffle(held.as_mut_slice(), &mut rand::rng());
        let mut polls = Vec::with_capacity(held.len());
        let mut keys = Vec::with_capacity(held.len());
        let mut sealed = Vec::with_capacity(held.len());
        for (p, k, s) in held {
            polls.push(p);
            keys.push(k);
            sealed.push(s);
        }
        self.execute(
            "INSERT INTO sealed_ballots (poll_id, id, sealed)
             SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[])",
            &[&polls, &keys, &sealed],
        )?;
        Ok(())
    }
}

/// The connection settings of a `postgresql://` URL, with the store's
/// connect timeout unless the URL sets one.
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
    Ok(Arc::new(config))
}

/// Brings the database to [`SCHEMA_VERSION`], one node at a time, and
/// refuses a database written by a newer anonpoll.
pub(super) fn migrate(client: &mut postgres::Client) -> anyhow::Result<()> {
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
    for (i, (name, sql)) in MIGRATIONS.iter().enumerate().skip(usize::try_from(version)?) {
        tx.batch_execute(sql).with_context(|| format!("migration postgres/{name} failed"))?;
        tx.execute("UPDATE anonpoll_schema SET version = $1", &[&(i as i64 + 1)])?;
    }
    tx.commit()?;
    Ok(())
}

/// The schema version as stored.
pub(super) fn schema_version(client: &mut postgres::Client) -> anyhow::Result<i64> {
    Ok(client.query_one("SELECT version FROM anonpoll_schema", &[])?.try_get(0)?)
}

/// Opens the key file and binds it to the database, as for SQLite
/// (`super::open_keys`): the ring id is stored once, by whichever node
/// comes first, and every node's key file must carry it.
pub(super) fn open_keys(client: &mut postgres::Client, keys: &Keys, today: Day) -> anyhow::Result<Keyring> {
    let stored = |c: &mut postgres::Client| -> anyhow::Result<Option<RingId>> {
        let ring: Option<Vec<u8>> = c.query_opt("SELECT ring FROM keyring", &[])?.map(|r| r.try_get(0)).transpose()?;
        ring.map(|r| RingId::try_from(r.as_slice()).map_err(|_| anyhow!("the stored key ring id is malformed")))
            .transpose()
    };
    let ring = stored(client)?;
    let keyring = super::keyring_for(keys, ring.as_ref(), today)?;
    if ring.is_none() {
        let mut tx = client.transaction()?;
        tx.execute("LOCK TABLE keyring IN EXCLUSIVE MODE", &[])?;
        tx.execute(
            "INSERT INTO keyring (ring) SELECT $1 WHERE NOT EXISTS (SELECT 1 FROM keyring)",
            &[&&keyring.ring()[..]],
        )?;
        tx.commit()?;
        if let Some(r) = stored(client)? {
            keyring.check_ring(&r)?;
        }
    }
    Ok(keyring)
}

/// Figures for `pollctl stats`: live and expired polls, ballots, and the
/// database's size.
pub(super) fn stats(link: &mut Link, today: Day) -> Result<[i64; 4], Error> {
    link.with(|c, _| {
        let r = c.query_one(
            "SELECT (SELECT count(*) FROM sealed_polls WHERE expires_on > $1),
                    (SELECT count(*) FROM sealed_polls WHERE expires_on <= $1),
                    (SELECT count(*) FROM sealed_ballots),
                    pg_database_size(current_database())",
            &[&today.to_string()],
        )?;
        Ok([r.try_get(0)?, r.try_get(1)?, r.try_get(2)?, r.try_get(3)?])
    })
}

/// The writer thread of a node: takes what is queued, applies it in one
/// transaction with the rows of its polls locked, writes its ballots
/// shuffled, commits, answers.
pub(super) fn run(mut link: Link, keys: Arc<Keyring>, rx: Inbox, config: WriterConfig) {
    let max_batch = config.max_batch.max(1);
    let mut w = Writer::unstaged(keys);
    while let Ok(first) = rx.recv(None) {
        let mut batch = vec![first];
        while batch.len() < max_batch {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let mut results = commit(&mut link, &mut w, &batch);
        w.advance_keys(&batch, &mut results);
        for (job, result) in batch.into_iter().zip(results) {
            job.answer(result);
        }
    }
}

/// The polls a batch touches, each once, in id order: the order every node
/// locks them in.
fn polls_of(batch: &[Job]) -> Vec<String> {
    let mut ids: Vec<String> = batch
        .iter()
        .filter_map(|j| match &j.op {
            Op::Cast { id, .. }
            | Op::Amend { id, .. }
            | Op::Patch { id, .. }
            | Op::AttachMedia { id, .. }
            | Op::DetachMedia { id, .. }
            | Op::Delete { id }
            | Op::IssueInvites { id, .. } => Some(id.as_str().to_owned()),
            Op::Create { .. } | Op::Roll { .. } => None,
        })
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// Tries a batch up to three times when another node's transaction got in
/// its way; every other failure fails the batch at once.
fn commit(link: &mut Link, w: &mut Writer, batch: &[Job]) -> Vec<Result<super::writer::Outcome, Error>> {
    let polls = polls_of(batch);
    let mut attempt = 0;
    loop {
        attempt += 1;
        match try_commit(link, w, batch, &polls) {
            Ok(results) => return results,
            Err(Retry::Conflict) if attempt < 3 => continue,
            Err(Retry::Conflict) => {
                let e = Error::Unavailable { reason: "The database is busy; try again.", retry_after_secs: 1 };
                return batch.iter().map(|_| Err(batch_error(&e))).collect();
            }
            Err(Retry::No(BatchFailed(e))) => return batch.iter().map(|_| Err(batch_error(&e))).collect(),
        }
    }
}

enum Retry {
    Conflict,
    No(BatchFailed),
}

fn try_commit(
    link: &mut Link,
    w: &mut Writer,
    batch: &[Job],
    polls: &[String],
) -> Result<Vec<Result<super::writer::Outcome, Error>>, Retry> {
    // What this node remembers of a poll may be stale: another node may
    // have counted votes since.
    w.forget_polls();
    link.wait_for_retry();
    let mut conflict = false;
    let out = link.with(|client, statements| match apply(client, statements, w, batch, polls) {
        Ok(applied) => Ok(applied),
        Err(e) => {
            conflict = is_conflict(&e);
            Err(Error::from(e))
        }
    });
    match out {
        Ok(Ok(results)) => Ok(results),
        Ok(Err(failed)) => {
            w.forget_polls();
            Err(Retry::No(failed))
        }
        Err(_) if conflict => Err(Retry::Conflict),
        Err(e) => Err(Retry::No(BatchFailed::new(batch.len(), e))),
    }
}

/// Spends the forms of the batch's votes in one statement (a vote with an
/// invite code spends its own, in its savepoint with the code): each such
/// vote's form is [`FormState::Taken`] if this statement spent it, else
/// [`FormState::Spent`] (another node, or an earlier vote of this batch,
/// had it). One round trip per batch instead of one per vote.
fn spend_forms(
    tx: &mut postgres::Transaction,
    statements: &mut Stmts,
    batch: &[Job],
) -> Result<Vec<FormState>, postgres::Error> {
    let mut states = vec![FormState::Unchecked; batch.len()];
    let mut forms: Vec<(String, &[u8])> = batch
        .iter()
        .filter_map(|job| match &job.op {
            Op::Cast { form: Some((day, nonce)), invite: None, .. } => Some((day.to_string(), &nonce[..])),
            _ => None,
        })
        .collect();
    if forms.is_empty() {
        return Ok(states);
    }
    // Written in no order of arrival, as the ballots are.
    rand::seq::SliceRandom::shuffle(forms.as_mut_slice(), &mut rand::rng());
    let (days, nonces): (Vec<String>, Vec<&[u8]>) = forms.into_iter().unzip();
    const SPEND: &str = "INSERT INTO redeemed_forms (day, nonce) SELECT * FROM unnest($1::text[], $2::bytea[])
                         ON CONFLICT DO NOTHING RETURNING day, nonce";
    let statement = match statements.get(SPEND) {
        Some(s) => s.clone(),
        None => {
            let s = tx.prepare(SPEND)?;
            statements.insert(SPEND, s.clone());
            s
        }
    };
    let mut fresh = std::collections::HashSet::new();
    for row in tx.query(&statement, &[&days, &nonces])? {
        fresh.insert((row.try_get::<_, String>(0)?, row.try_get::<_, Vec<u8>>(1)?));
    }
    for (state, job) in states.iter_mut().zip(batch) {
        if let Op::Cast { form: Some((day, nonce)), invite: None, .. } = &job.op {
            *state = if fresh.remove(&(day.to_string(), nonce.to_vec())) { FormState::Taken } else { FormState::Spent };
        }
    }
    Ok(states)
}

/// One attempt at a batch: its polls locked in id order, applied, its
/// ballots written, committed.
fn apply(
    client: &mut postgres::Client,
    statements: &mut Stmts,
    w: &mut Writer,
    batch: &[Job],
    polls: &[String],
) -> Result<Result<Vec<Result<super::writer::Outcome, Error>>, BatchFailed>, postgres::Error> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT 1 FROM sealed_polls WHERE id = ANY($1) ORDER BY id FOR UPDATE", &[&polls])?;
    let forms = spend_forms(&mut tx, statements, batch)?;
    let mut rows = PgRows { c: &mut tx, statements, held: Vec::new(), savepoints: 0, aborted: false };
    let applied = w.apply_batch(&mut rows, batch, &forms);
    // A statement that failed outside a savepoint has aborted the
    // transaction: PostgreSQL would answer the COMMIT with a rollback, and
    // every job's success would be a lie.
    let aborted = rows.aborted;
    drop(rows);
    match applied {
        Ok(_) if aborted => Ok(Err(BatchFailed::new(
            batch.len(),
            Error::Unavailable { reason: "Storage refused the write; nothing was written.", retry_after_secs: 5 },
        ))),
        Ok((results, _erased)) => {
            // A form spent for a vote that was then refused (closed poll,
            // say) is given back: only a stored ballot spends its form.
            for ((job, state), result) in batch.iter().zip(&forms).zip(&results) {
                if let (Op::Cast { form: Some((day, nonce)), .. }, FormState::Taken, Err(_)) = (&job.op, state, result)
                {
                    tx.execute(
                        "DELETE FROM redeemed_forms WHERE day = $1 AND nonce = $2",
                        &[&day.to_string(), &&nonce[..]],
                    )?;
                }
            }
            tx.commit()?;
            Ok(Ok(results))
        }
        Err(failed) => Ok(Err(failed)),
    }
}
