//! The SQLite store. All SQL of anonpoll lives in this module.
//!
//! Promises:
//! - every connection runs with `secure_delete=ON`, WAL, `synchronous=FULL`,
//!   foreign keys and a busy timeout, so an acknowledged write survives a
//!   crash and deleted rows are overwritten, not merely unlinked;
//! - all writes go through one writer thread ([`writer`]) that commits what is
//!   queued in one transaction (group commit) and checkpoints the WAL with
//!   TRUNCATE after any erasure, so no byte of an erased poll stays on disk;
//! - reads use per-thread [`Reader`] connections with cached statements and
//!   never wait on the writer (WAL);
//! - an expired poll is invisible to every read, whether or not a sweep has
//!   erased it yet: a poll lives while `today < expires_on`.

mod reader;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use rusqlite::{Connection, OpenFlags, params};

use crate::day::Day;
use crate::domain::{Ballot, NewMedia, NewPoll, PollPatch, ResultsVisibility};
use crate::error::Error;
use crate::secret::{InviteHash, MediaId, PollId, ReceiptHash, TokenHash};

pub use reader::{MediaBlob, Reader};
pub use writer::{MAX_INVITES, ReceiptKeys, WriterConfig, receipt_keys};

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

/// The migrations, in order. Append-only: a released file is never edited.
const MIGRATIONS: &[(&str, &str)] = &[
    ("001_init.sql", include_str!("../../sql/001_init.sql")),
    ("002_media.sql", include_str!("../../sql/002_media.sql")),
    ("003_ballot_order.sql", include_str!("../../sql/003_ballot_order.sql")),
    ("004_poll_settings.sql", include_str!("../../sql/004_poll_settings.sql")),
    ("005_question_types.sql", include_str!("../../sql/005_question_types.sql")),
    ("006_staged_keys.sql", include_str!("../../sql/006_staged_keys.sql")),
    ("007_invites.sql", include_str!("../../sql/007_invites.sql")),
    ("008_receipts.sql", include_str!("../../sql/008_receipts.sql")),
];

/// How `polls` stores a [`ResultsVisibility`] (sql/004_poll_settings.sql):
/// `results_public`, and `results_after` for the modes between.
fn visibility_columns(v: ResultsVisibility) -> (bool, Option<&'static str>) {
    match v {
        ResultsVisibility::Public => (true, None),
        ResultsVisibility::Private => (false, None),
        ResultsVisibility::AfterVote => (false, Some("vote")),
        ResultsVisibility::AfterClose => (false, Some("close")),
    }
}

/// The visibility stored as [`visibility_columns`] wrote it; `None` for a
/// pair it never writes.
fn visibility_from(public: bool, after: Option<&str>) -> Option<ResultsVisibility> {
    ResultsVisibility::ALL.into_iter().find(|v| visibility_columns(*v) == (public, after))
}

/// The schema version this binary writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// How long a connection waits for a lock held by another connection before
/// giving up with SQLITE_BUSY (answered 503 by polld).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The ballot row a receipt opens in `poll` (its key, day and choices), at
/// whichever of the receipt's keys it has now (`writer::receipt_keys`).
fn receipt_row(
    conn: &Connection,
    poll: &str,
    receipt: &ReceiptHash,
) -> rusqlite::Result<Option<(Vec<u8>, String, String)>> {
    use rusqlite::OptionalExtension;
    let k = writer::receipt_keys(receipt);
    conn.prepare_cached("SELECT id, cast_on, choices FROM responses WHERE poll_id = ?1 AND id IN (?2, ?3, ?4)")?
        .query_row(params![poll, &k.staged[..], &k.settled[..], &k.fallback[..]], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .optional()
}

/// Opens a connection with the pragmas every connection must have.
fn connect(path: &Path, flags: OpenFlags, busy: Duration) -> rusqlite::Result<Connection> {
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

/// Brings the database at `path` to [`SCHEMA_VERSION`], creating it if needed.
/// Refuses a database written by a newer anonpoll. An up-to-date database is
/// only read here, so opening one never waits for the write lock that a busy
/// polld holds most of the time under load.
fn migrate(path: &Path, busy: Duration) -> anyhow::Result<()> {
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
        v if v == SCHEMA_VERSION => return Ok(()),
        _ => {}
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // Read again under the write lock: another process may have migrated.
    let current = version(&tx)?;
    if current > SCHEMA_VERSION {
        return Err(newer(current));
    }
    for (i, (name, sql)) in MIGRATIONS.iter().enumerate().skip(usize::try_from(current)?) {
        tx.execute_batch(sql).with_context(|| format!("migration {name} failed"))?;
        tx.pragma_update(None, "user_version", i as i64 + 1)?;
    }
    tx.commit()?;
    Ok(())
}

/// A handle on the database: cheap to clone, shared by all threads.
#[derive(Clone)]
pub struct Store {
    path: Arc<PathBuf>,
    writer: writer::Handle,
    busy: Duration,
}

/// What a sweep did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepReport {
    pub polls_erased: u64,
}

impl Store {
    /// Opens (creating if needed) the database at `path`, runs migrations and
    /// starts the writer thread.
    pub fn open(path: &Path) -> anyhow::Result<Store> {
        Store::open_with(path, WriterConfig::default())
    }

    /// For tools working beside a busy polld (`pollctl`): waits up to a
    /// minute for locks instead of five seconds, since a cron sweep or an
    /// export may wait, while a web request should not.
    pub fn open_patient(path: &Path) -> anyhow::Result<Store> {
        let config =
            WriterConfig { busy_timeout: Duration::from_secs(60), mix_left_staged: false, ..WriterConfig::default() };
        Store::open_with(path, config)
    }

    /// A folder it creates is private to the service's user (0700), and so
    /// is a database it creates (0600; SQLite gives the `-wal` and `-shm`
    /// files the database's mode). Existing ones keep their modes.
    pub fn open_with(path: &Path, config: WriterConfig) -> anyhow::Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        private_file(path, false).with_context(|| format!("cannot create database {}", path.display()))?;
        let busy = config.busy_timeout;
        migrate(path, busy)?;
        let conn = connect(path, OpenFlags::SQLITE_OPEN_READ_WRITE, busy)?;
        let writer = writer::Handle::start(conn, config)?;
        Ok(Store { path: Arc::new(path.to_owned()), writer, busy })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A new read connection, meant to be owned by one worker thread.
    pub fn reader(&self) -> anyhow::Result<Reader> {
        let conn = connect(&self.path, OpenFlags::SQLITE_OPEN_READ_WRITE, self.busy)?;
        conn.pragma_update(None, "query_only", true)?;
        Ok(Reader::new(conn))
    }

    /// Stores a new poll with its media, in one transaction.
    pub fn create_poll(
        &self,
        id: &PollId,
        token: &TokenHash,
        poll: &NewPoll,
        media: &[NewMedia],
        today: Day,
    ) -> Result<(), Error> {
        let (id, token, poll, media) = (id.clone(), token.clone(), poll.clone(), media.to_vec());
        self.writer.submit(writer::Op::Create { id, token, poll, media, today })?;
        Ok(())
    }

    /// Attaches media to a live poll, erasing what its slot held before.
    pub fn attach_media(&self, id: &PollId, media: NewMedia, today: Day) -> Result<(), Error> {
        self.writer.submit(writer::Op::AttachMedia { id: id.clone(), media, today })?;
        Ok(())
    }

    /// Erases one media item of a live poll; `Error::NotFound` if it has none such.
    pub fn detach_media(&self, id: &PollId, media: &MediaId, today: Day) -> Result<(), Error> {
        self.writer.submit(writer::Op::DetachMedia { id: id.clone(), media: media.clone(), today })?;
        Ok(())
    }

    /// Applies a validated patch; `Error::NotFound` if the poll is gone.
    pub fn patch_poll(&self, id: &PollId, patch: &PollPatch, today: Day) -> Result<(), Error> {
        self.writer.submit(writer::Op::Patch { id: id.clone(), patch: patch.clone(), today })?;
        Ok(())
    }

    /// Erases a poll and everything that belongs to it.
    pub fn delete_poll(&self, id: &PollId) -> Result<(), Error> {
        self.writer.submit(writer::Op::Delete { id: id.clone() })?;
        Ok(())
    }

    /// Records one response cast `today`: a ballot already checked against
    /// the poll's questions, which never change. `Error::NotFound` for an
    /// unknown or expired poll, `Error::Closed` for a closed one (both
    /// decided at the commit).
    pub fn cast(&self, id: &PollId, ballot: Ballot, today: Day) -> Result<(), Error> {
        self.writer.submit(writer::Op::Cast { id: id.clone(), ballot, invite: None, receipt: None, today })?;
        Ok(())
    }

    /// [`Store::cast`] without waiting: the vote is queued (or refused at
    /// once with 503 when the queue is full) and the returned
    /// [`PendingWrite`] delivers its result after the commit. The web's vote
    /// handler uses it so that no worker thread waits through the fsync.
    /// An invite-only poll's vote brings its code's hash: the code is
    /// spent in the ballot's transaction (`Error::InviteRefused` if it is
    /// unknown or used). A ballot with a receipt is stored with the
    /// receipt's hash, which finds it again ([`Store::amend`]).
    pub fn cast_later(
        &self,
        id: &PollId,
        ballot: Ballot,
        (invite, receipt): (Option<InviteHash>, Option<ReceiptHash>),
        today: Day,
    ) -> Result<PendingWrite, Error> {
        self.writer.submit_later(writer::Op::Cast { id: id.clone(), ballot, invite, receipt, today }).map(PendingWrite)
    }

    /// Replaces (`Some`) or withdraws (`None`) the ballot that came with
    /// `receipt`, with its counters, while the poll is open:
    /// `Error::Closed`, `Error::NotFound` (poll gone) or
    /// `Error::ReceiptRefused` (no such ballot, or changes turned off)
    /// otherwise. The new ballot was checked against the poll's questions.
    pub fn amend(&self, id: &PollId, receipt: ReceiptHash, ballot: Option<Ballot>, today: Day) -> Result<(), Error> {
        self.writer.submit(writer::Op::Amend { id: id.clone(), receipt, ballot, today })?;
        Ok(())
    }

    /// Stores the hashes of new invite codes of a live poll; answers the
    /// poll's codes then (issued, used). At most [`MAX_INVITES`] per poll
    /// (`Error::Invalid` at `count` beyond).
    pub fn issue_invites(&self, id: &PollId, hashes: Vec<InviteHash>, today: Day) -> Result<(u64, u64), Error> {
        match self.writer.submit(writer::Op::IssueInvites { id: id.clone(), hashes, today })? {
            writer::Outcome::Invites(issued, used) => Ok((issued, used)),
            _ => Err(Error::internal(anyhow::anyhow!("issuing invites answered no counts"))),
        }
    }

    /// Convenience for tools and tests: [`Store::cast`] today, by id text,
    /// with the ballot checked against the poll first.
    pub fn record_response(&self, id: &str, choices: &[Option<usize>]) -> anyhow::Result<()> {
        let id = PollId::parse(id).context("malformed poll id")?;
        let today = Day::today();
        let poll = self.reader()?.poll(&id, today)?.context("no such poll")?;
        let ballot = Ballot::of_choices(&poll.questions, choices).map_err(|p| anyhow::anyhow!("{p}"))?;
        self.cast(&id, ballot, today).map_err(|e| anyhow::anyhow!("{e}"))
    }

    /// Erases every poll with `expires_on <= as_of`, then truncates the WAL.
    pub fn sweep(&self, as_of: Day) -> Result<SweepReport, Error> {
        match self.writer.submit(writer::Op::Sweep { as_of })? {
            writer::Outcome::Swept(n) => Ok(SweepReport { polls_erased: n }),
            writer::Outcome::Done | writer::Outcome::Amended | writer::Outcome::Invites(..) => {
                Ok(SweepReport { polls_erased: 0 })
            }
        }
    }
}

/// A write queued for the group commit, whose result arrives once it is on
/// disk (or refused). The store's own type: whoever waits for it (the HTTP
/// layer, a test) needs nothing but these two methods.
pub struct PendingWrite(tokio::sync::oneshot::Receiver<Result<(), Error>>);

impl PendingWrite {
    /// Waits for the commit without holding a thread.
    pub async fn committed(self) -> Result<(), Error> {
        self.0.await.unwrap_or_else(|_| Err(writer_gone()))
    }

    /// Blocks the calling thread until the commit; must not be called on an
    /// async runtime's thread.
    pub fn committed_blocking(self) -> Result<(), Error> {
        self.0.blocking_recv().unwrap_or_else(|_| Err(writer_gone()))
    }
}

/// A stored ballot key read back as the 16 bytes it is.
fn staged_key(id: &[u8]) -> anyhow::Result<[u8; 16]> {
    <[u8; 16]>::try_from(id).map_err(|_| anyhow::anyhow!("a ballot key is not 16 bytes"))
}

fn writer_gone() -> Error {
    Error::internal(anyhow::anyhow!("the writer dropped a queued write"))
}

#[cfg(test)]
mod tests;

/// Operator-level figures: nothing about any single poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    pub live_polls: u64,
    pub expired_polls: u64,
    pub responses: u64,
    pub database_bytes: u64,
}

/// What `pollctl check` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Health {
    pub integrity: String,
    pub schema_version: i64,
    pub binary_schema_version: i64,
}

impl Store {
    pub fn stats(&self, today: Day) -> anyhow::Result<Stats> {
        let conn = connect(&self.path, OpenFlags::SQLITE_OPEN_READ_ONLY, self.busy)?;
        let count = |sql: &str| -> anyhow::Result<u64> {
            let n: i64 = conn.query_row(sql, params![today.to_string()], |r| r.get(0))?;
            Ok(u64::try_from(n)?)
        };
        let live = count("SELECT count(*) FROM polls WHERE expires_on > ?1")?;
        let expired = count("SELECT count(*) FROM polls WHERE expires_on <= ?1")?;
        let responses: i64 = conn.query_row("SELECT count(*) FROM responses", [], |r| r.get(0))?;
        let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        Ok(Stats {
            live_polls: live,
            expired_polls: expired,
            responses: u64::try_from(responses)?,
            database_bytes: u64::try_from(pages * page_size)?,
        })
    }

    /// Writes a consistent, compacted copy of the live database to `target`
    /// (which must not exist), while the service keeps running.
    /// The copy is created private to the user running the backup (0600).
    pub fn backup(&self, target: &Path) -> anyhow::Result<()> {
        // Created empty here, where it must be new (VACUUM INTO fills an
        // empty file, and would create one with the default mode 0644).
        match private_file(target, true) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                bail!("{} already exists; refusing to overwrite it", target.display())
            }
            other => other.with_context(|| format!("cannot create {}", target.display()))?,
        }
        let conn = connect(&self.path, OpenFlags::SQLITE_OPEN_READ_WRITE, self.busy)?;
        let path = target.to_str().context("the backup path must be valid UTF-8")?;
        conn.execute("VACUUM INTO ?1", params![path])?;
        drop(conn);
        // Ballots cast since the writer's last mix are still staged (their
        // keys start with 0xff, writer.rs): in the copy they would stand
        // together as a poll's latest, for as long as the backup is kept.
        // The copy's get their keys here, where a receipt still finds them
        // (`writer::fallback_key`: which of them came with a receipt is not
        // known), and the copy is rewritten in key order.
        let mut copy = connect(target, OpenFlags::SQLITE_OPEN_READ_WRITE, self.busy)?;
        let tx = copy.transaction()?;
        let staged: Vec<(String, Vec<u8>)> = tx
            .prepare("SELECT poll_id, id FROM responses WHERE id >= ?1")?
            .query_map(params![&[writer::STAGED][..]], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (poll, id) in &staged {
            tx.execute(
                "UPDATE responses SET id = ?3 WHERE poll_id = ?1 AND id = ?2",
                params![poll, id, &writer::fallback_key(&staged_key(id)?)[..]],
            )?;
        }
        tx.commit()?;
        if !staged.is_empty() {
            copy.execute_batch("VACUUM")?;
        }
        Ok(())
    }

    /// `PRAGMA integrity_check` and the schema version.
    pub fn health(&self) -> anyhow::Result<Health> {
        let conn = connect(&self.path, OpenFlags::SQLITE_OPEN_READ_ONLY, self.busy)?;
        let mut stmt = conn.prepare("PRAGMA integrity_check")?;
        let lines: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        Ok(Health { integrity: lines.join("\n"), schema_version: version, binary_schema_version: SCHEMA_VERSION })
    }
}
