//! The SQLite store. All SQL of anonpoll lives in this module.
//!
//! Promises:
//! - every byte of a poll is stored sealed under the poll's own data key
//!   ([`seal`], `rows`), itself stored only wrapped under a day key of the
//!   [`Keyring`]; what stays readable is the poll's id, its creation and
//!   expiry days, the day its key is leased until, row counts and sizes
//!   rounded up to buckets (docs/PRIVACY.md, section 8);
//! - every connection runs with `secure_delete=ON`, WAL, `synchronous=FULL`,
//!   foreign keys and a busy timeout, so an acknowledged write survives a
//!   crash and deleted rows are overwritten, not merely unlinked;
//! - all writes go through one writer thread (`writer`) that commits what is
//!   queued in one transaction (group commit) and checkpoints the WAL with
//!   TRUNCATE after any erasure, so no byte of an erased poll stays on disk;
//! - reads use per-thread [`Reader`] connections with cached statements and
//!   never wait on the writer (WAL);
//! - an expired poll is invisible to every read, whether or not a sweep has
//!   erased it yet: a poll lives while `today < expires_on`; and a poll whose
//!   key's lease day is gone from the key state reads as erased.

pub mod audit;
mod engine;
mod legacy;
mod postgres;
mod reader;
mod rows;
pub mod seal;
mod sqlite;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::day::Day;
use crate::domain::{Ballot, NewMedia, NewPoll, PollPatch};
use crate::error::Error;
use crate::keyring::{KeyError, Keyring, RingId};
use crate::secret::{InviteHash, MediaId, PollId, ReceiptHash, TokenHash};

pub(crate) use postgres::is_transient as is_transient_pg;
pub use postgres::is_url;
pub use reader::{Due, MediaBlob, Reader};
pub use writer::{MAX_INVITES, MIX_EVERY, WRITER_RAISE, WriterConfig};

use engine::Rows;
use seal::{DataKey, Place, Table};

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
    ("009_sealed.sql", include_str!("../../sql/009_sealed.sql")),
    ("010_drop_cleartext.sql", include_str!("../../sql/010_drop_cleartext.sql")),
];

/// The migration that adds the sealed tables: after it, the upgrade's
/// encryption pass ([`legacy`]) moves every poll into them, and only then
/// do the next migrations run (the one after drops the cleartext tables).
const SEALED_VERSION: i64 = 9;

/// The schema version this binary writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// How long a connection waits for a lock held by another connection before
/// giving up with SQLITE_BUSY (answered 503 by polld).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Where each sealed value lives (its associated data).
pub(crate) mod place {
    use super::{Place, Table};

    pub fn body(poll: &str) -> Place {
        Place::new(Table::Polls, poll, b"", "body")
    }

    pub fn tallies(poll: &str) -> Place {
        Place::new(Table::Polls, poll, b"", "tallies")
    }

    pub fn ballot(poll: &str, key: &[u8]) -> Place {
        Place::new(Table::Ballots, poll, key, "sealed")
    }

    pub fn media(poll: &str, media: &str) -> Place {
        Place::new(Table::Media, poll, media.as_bytes(), "bytes")
    }
}

fn corrupt(what: &str) -> Error {
    Error::internal(anyhow::anyhow!("stored {what} is malformed"))
}

/// Poll `id`'s data key, wrapped under the key of `key_day`. `NotFound` if
/// that day's key is gone (the poll is erased, in this copy too); an
/// internal error if it does not open (damage, or a foreign key file).
fn data_key(keys: &Keyring, id: &str, key_day: Day, wrapped: &[u8]) -> Result<DataKey, Error> {
    let wrap = keys.wrap_key(key_day).ok_or(Error::NotFound)?;
    DataKey::unwrap(wrapped, &wrap, &keys.ring(), id, key_day)
        .map_err(|e| Error::internal(anyhow::anyhow!("the data key of a poll: {e}")))
}

/// The keys a ballot cast with a receipt can have. Each is drawn from the
/// receipt's hash keyed under the poll's data key, with a purpose of its
/// own, so a receipt finds its ballot with one primary-key lookup and
/// ballots need no second index (whose pages would keep the order of
/// arrival the mix hides); the staged key tells nothing of the settled one,
/// so leftover WAL frames of a vote do not point at the ballot's final row;
/// and without the poll's key, no copy of the database can be searched
/// for a receipt someone kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceiptKeys {
    /// Until the writer's mix: `writer::STAGED` and 15 bytes of a keyed hash.
    pub staged: [u8; 16],
    /// After the mix.
    pub settled: [u8; 16],
    /// Where a ballot goes that the mix could not place by its receipt: one
    /// a crashed run left staged, or one staged in a backup
    /// (`fallback_key`).
    pub fallback: [u8; 16],
}

/// The keys of the ballot cast with the receipt hashed `r` in the poll
/// whose data key is `key`.
pub(crate) fn receipt_keys(key: &DataKey, r: &ReceiptHash) -> ReceiptKeys {
    let mut staged = [writer::STAGED; 16];
    staged[1..].copy_from_slice(&key.mac(b"receipt staged", &[&r.0])[..15]);
    ReceiptKeys { staged, settled: drawn_key(key, b"receipt settled", &r.0), fallback: fallback_key(key, &staged) }
}

/// The key a staged ballot settles at when the mix does not know whether
/// it came with a receipt: drawn from the whole staged key, so a receipt
/// can still work it out, and nothing else can.
pub(crate) fn fallback_key(key: &DataKey, staged: &[u8; 16]) -> [u8; 16] {
    drawn_key(key, b"ballot fallback", staged)
}

/// A settled key drawn from `input`: the first 16 bytes of the keyed hash
/// of (round, input) for the first round whose first byte is not
/// [`writer::STAGED`]. All of it is keyed-hash output, so a key is as
/// random as one from the random source: no byte of it can be checked
/// against the others.
fn drawn_key(key: &DataKey, purpose: &'static [u8], input: &[u8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    for round in 0..=u8::MAX {
        out.copy_from_slice(&key.mac(purpose, &[&[round], input])[..16]);
        if out[0] != writer::STAGED {
            break;
        }
    }
    out
}

/// The ballot a receipt opens, as found.
pub(crate) struct Found {
    pub key: Vec<u8>,
    pub day: Day,
    pub ballot: Ballot,
}

/// The ballot row a receipt opens in `poll`, at whichever of the receipt's
/// keys it has now (and, for a poll from before encryption, the keys its
/// receipts gave then).
fn receipt_row(
    tx: &mut dyn Rows,
    poll: &str,
    key: &DataKey,
    doc: &rows::Doc,
    receipt: &ReceiptHash,
) -> Result<Option<Found>, Error> {
    let k = receipt_keys(key, receipt);
    let mut candidates = vec![k.staged, k.settled, k.fallback];
    if doc.legacy_receipts {
        candidates.extend(legacy::receipt_keys(receipt));
    }
    for id in candidates {
        if let Some(sealed) = tx.ballot(poll, &id)? {
            let plain =
                key.open(&place::ballot(poll, &id), &sealed).map_err(|e| reader::corrupt_sealed("ballot", e))?;
            let (day, ballot) = rows::ballot_from(&doc.questions, &plain)?;
            return Ok(Some(Found { key: id.to_vec(), day, ballot }));
        }
    }
    Ok(None)
}

/// A read connection of either engine.
pub(in crate::store) enum Conn {
    Sqlite(Connection),
    Pg(Arc<postgres::Pool>),
}

impl Conn {
    /// The SQLite connection underneath, for tests that look at the rows.
    #[cfg(test)]
    pub(super) fn sqlite(&self) -> &Connection {
        match self {
            Conn::Sqlite(c) => c,
            Conn::Pg(_) => panic!("a SQLite test on a PostgreSQL store"),
        }
    }

    /// One read (or a few that need not agree with each other).
    fn once<T>(&mut self, f: impl FnOnce(&mut dyn Rows) -> Result<T, Error>) -> Result<T, Error> {
        match self {
            Conn::Sqlite(c) => f(&mut sqlite::Lite(c)),
            Conn::Pg(pool) => pool.once(f),
        }
    }

    /// Reads that see one snapshot of the database.
    fn snapshot<T>(&mut self, f: impl FnOnce(&mut dyn Rows) -> Result<T, Error>) -> Result<T, Error> {
        match self {
            Conn::Sqlite(c) => {
                let tx = c.transaction()?;
                let out = f(&mut sqlite::Lite(&tx))?;
                tx.finish()?;
                Ok(out)
            }
            Conn::Pg(pool) => pool.snapshot(f),
        }
    }
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

/// Brings the database at `path` to schema version `upto` (at most
/// [`SCHEMA_VERSION`]), creating it if needed. Refuses a database written
/// by a newer anonpoll, and any migration past [`SEALED_VERSION`] while
/// polls are left in the cleartext tables. An up-to-date database is only
/// read here, so opening one never waits for the write lock that a busy
/// polld holds most of the time under load.
fn migrate(path: &Path, busy: Duration, upto: i64) -> anyhow::Result<()> {
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
        tx.execute_batch(sql).with_context(|| format!("migration {name} failed"))?;
        tx.pragma_update(None, "user_version", i as i64 + 1)?;
    }
    tx.commit()?;
    Ok(())
}

/// Where the key state is and how long a lease lasts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keys {
    /// The key file (`--keys`).
    pub path: PathBuf,
    /// Days a poll's data key is wrapped ahead at most (`--key-lease-days`).
    pub lease_days: u16,
}

impl Keys {
    /// The default: `anonpoll.keys` beside `anonpoll.sqlite3`, with the
    /// default lease.
    pub fn beside(db: &Path) -> Keys {
        Keys { path: db.with_extension("keys"), lease_days: crate::keyring::DEFAULT_LEASE_DAYS }
    }

    /// The key file for `--db db` and `--keys keys`: the one given, or for
    /// a SQLite file the one beside it. A PostgreSQL database has no "beside":
    /// every node must be given the key file (docs/OPERATIONS.md).
    pub fn for_db(db: &Path, keys: Option<&Path>, lease_days: u16) -> anyhow::Result<Keys> {
        match keys {
            Some(path) => Ok(Keys { path: path.to_owned(), lease_days }),
            None if db.to_str().is_some_and(is_url) => {
                bail!("a PostgreSQL database needs its key file named: give --keys FILE (or POLL_KEYS)")
            }
            None => Ok(Keys { lease_days, ..Keys::beside(db) }),
        }
    }
}

/// `db` as it may be shown in a log line: a PostgreSQL URL loses its
/// password, if it has one.
pub fn shown(db: &Path) -> String {
    match db.to_str().filter(|d| is_url(d)) {
        Some(url) => match (url.find("://"), url.rfind('@')) {
            (Some(scheme), Some(at)) if at > scheme => {
                let user = &url[scheme + 3..at];
                let user = user.split_once(':').map_or(user, |(u, _)| u);
                format!("{}{user}@{}", &url[..scheme + 3], &url[at + 1..])
            }
            _ => url.to_owned(),
        },
        None => db.display().to_string(),
    }
}

/// The ring id the database is bound to, if it has one yet.
fn stored_ring(conn: &Connection) -> anyhow::Result<Option<RingId>> {
    let ring: Option<Vec<u8>> = conn.query_row("SELECT ring FROM keyring", [], |r| r.get(0)).optional()?;
    ring.map(|r| <RingId>::try_from(r.as_slice()).map_err(|_| anyhow::anyhow!("the stored key ring id is malformed")))
        .transpose()
}

/// Opens the key file, or creates it for a database bound to no key ring
/// yet (`ring` is `None`), and checks it is the database's: a key file is
/// never created over a database that holds polls sealed under another.
fn keyring_for(keys: &Keys, ring: Option<&RingId>, today: Day) -> anyhow::Result<Keyring> {
    Ok(match (Keyring::open(&keys.path, keys.lease_days), ring) {
        (Ok(k), Some(ring)) => {
            k.check_ring(ring)?;
            k
        }
        (Ok(k), None) => k,
        (Err(KeyError::Missing(p)), Some(_)) => return Err(KeyError::Missing(p).into()),
        (Err(KeyError::Missing(_)), None) => match Keyring::create(&keys.path, keys.lease_days, today) {
            Ok(k) => k,
            // Another process made it meanwhile.
            Err(KeyError::Io(_, e)) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                Keyring::open(&keys.path, keys.lease_days)?
            }
            Err(e) => return Err(e.into()),
        },
        (Err(e), _) => return Err(e.into()),
    })
}

/// Opens the key file for the database (see [`keyring_for`]) and binds the
/// two.
fn open_keys(conn: &Connection, keys: &Keys, today: Day) -> anyhow::Result<Keyring> {
    let ring = stored_ring(conn)?;
    let keyring = keyring_for(keys, ring.as_ref(), today)?;
    if ring.is_none() {
        // A key file made just now, or one a crash left unbound: the
        // database has nothing sealed yet.
        conn.execute(
            "INSERT INTO keyring (ring) SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM keyring)",
            params![&keyring.ring()[..]],
        )?;
        if let Some(r) = stored_ring(conn)? {
            keyring.check_ring(&r)?;
        }
    }
    Ok(keyring)
}

/// Where a store's database is.
enum At {
    File(PathBuf),
    Pg(PgAt),
}

/// A PostgreSQL database: its connection settings and this node's read
/// connections.
struct PgAt {
    config: Arc<::postgres::Config>,
    reads: Arc<postgres::Pool>,
}

/// A handle on the database: cheap to clone, shared by all threads.
#[derive(Clone)]
pub struct Store {
    at: Arc<At>,
    writer: writer::Handle,
    busy: Duration,
    keys: Arc<Keyring>,
}

/// What a sweep (or polld's day change) did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepReport {
    /// Polls erased: expired, or leased until a day whose key is gone.
    pub polls_erased: u64,
    /// Live polls whose data key was wrapped again under a later lease.
    pub polls_rewrapped: u64,
    /// The key state's day afterwards.
    pub key_day: Day,
}

impl Store {
    /// Opens (creating if needed) the database at `path`, runs migrations and
    /// starts the writer thread.
    /// With its key file beside it ([`Keys::beside`]).
    pub fn open(path: &Path) -> anyhow::Result<Store> {
        Store::open_with(path, &Keys::beside(path), WriterConfig::default())
    }

    /// For tools working beside a busy polld (`pollctl`): waits up to a
    /// minute for locks instead of five seconds, since a cron sweep or an
    /// export may wait, while a web request should not.
    pub fn open_patient(path: &Path, keys: &Keys) -> anyhow::Result<Store> {
        let config =
            WriterConfig { busy_timeout: Duration::from_secs(60), mix_left_staged: false, ..WriterConfig::default() };
        Store::open_db(path, keys, config)
    }

    /// Opens the database and its key file (creating both for a new
    /// database), upgrades an older database (sealing every poll it holds,
    /// resumably) and starts the writer. A key file that is missing for a
    /// database that has polls, or that is not this database's, is a
    /// [`KeyError`] and nothing is touched.
    ///
    /// A folder it creates is private to the service's user (0700), and so
    /// are a database and a key file it creates (0600; SQLite gives the
    /// `-wal` and `-shm` files the database's mode). Existing ones keep
    /// their modes.
    pub fn open_with(path: &Path, keys: &Keys, config: WriterConfig) -> anyhow::Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::keyring::create_private_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        private_file(path, false).with_context(|| format!("cannot create database {}", path.display()))?;
        let busy = config.busy_timeout;
        migrate(path, busy, SEALED_VERSION)?;
        let conn = connect(path, OpenFlags::SQLITE_OPEN_READ_WRITE, busy)?;
        let keyring = Arc::new(open_keys(&conn, keys, Day::today())?);
        legacy::seal_all(&conn, &keyring, Day::today(), usize::MAX)?;
        migrate(path, busy, SCHEMA_VERSION)?;
        let writer = writer::Handle::start(conn, keyring.clone(), config)?;
        Ok(Store { at: Arc::new(At::File(path.to_owned())), writer, busy, keys: keyring })
    }

    /// Opens the PostgreSQL database at `url` (`postgresql://USER@HOST:PORT/DBNAME`)
    /// with its key file (which, unlike SQLite's, has no default place: give
    /// `--keys`), migrates it (one node at a time) and starts this node's
    /// writer. The database must be reachable now; afterwards it may come
    /// and go.
    pub fn open_url(url: &str, keys: &Keys, config: WriterConfig) -> anyhow::Result<Store> {
        let pg = postgres::config(url)?;
        let mut client = pg
            .connect(::postgres::NoTls)
            .map_err(|e| anyhow::anyhow!("cannot connect to the PostgreSQL database: {e}"))?;
        postgres::migrate(&mut client)?;
        let keyring = Arc::new(postgres::open_keys(&mut client, keys, Day::today())?);
        drop(client);
        let link = postgres::Link::new(pg.clone());
        let writer = writer::Handle::spawn(config, {
            let keyring = keyring.clone();
            move |rx| postgres::run(link, keyring, rx, config)
        })?;
        let reads = postgres::Pool::new(pg.clone());
        Ok(Store { at: Arc::new(At::Pg(PgAt { config: pg, reads })), writer, busy: config.busy_timeout, keys: keyring })
    }

    /// Opens `db`: a `postgresql://` URL ([`Store::open_url`]) or a SQLite
    /// file ([`Store::open_with`]).
    pub fn open_db(db: &Path, keys: &Keys, config: WriterConfig) -> anyhow::Result<Store> {
        match db.to_str().filter(|d| is_url(d)) {
            Some(url) => Store::open_url(url, keys, config),
            None => Store::open_with(db, keys, config),
        }
    }

    /// Whether this store records spent vote forms in the database
    /// (PostgreSQL, which several nodes may share).
    pub fn records_forms(&self) -> bool {
        matches!(&*self.at, At::Pg(_))
    }

    /// The key state this store reads and writes with.
    pub fn keys(&self) -> &Arc<Keyring> {
        &self.keys
    }

    /// The SQLite file, or `None` on PostgreSQL.
    pub fn path(&self) -> Option<&Path> {
        match &*self.at {
            At::File(p) => Some(p),
            At::Pg(_) => None,
        }
    }

    /// A new read connection, meant to be owned by one worker thread. On
    /// PostgreSQL it connects at its first read, and again after the
    /// database was away.
    pub fn reader(&self) -> anyhow::Result<Reader> {
        match &*self.at {
            At::File(path) => {
                let conn = connect(path, OpenFlags::SQLITE_OPEN_READ_WRITE, self.busy)?;
                conn.pragma_update(None, "query_only", true)?;
                Ok(Reader::new(Conn::Sqlite(conn), self.keys.clone()))
            }
            At::Pg(pg) => Ok(Reader::new(Conn::Pg(pg.reads.clone()), self.keys.clone())),
        }
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
        self.writer.submit(writer::Op::Cast {
            id: id.clone(),
            ballot,
            invite: None,
            receipt: None,
            form: None,
            today,
        })?;
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
    /// The vote form's day and nonce, where given, are spent in the
    /// ballot's transaction on an engine shared by several nodes
    /// (`Error::FormSpent` if another node took them first).
    /// `then` learns whether the ballot was stored before the
    /// [`PendingWrite`] does, and even if nobody waits for it any more.
    pub fn cast_later(
        &self,
        id: &PollId,
        ballot: Ballot,
        (invite, receipt, form): VoteProofs,
        today: Day,
        then: Option<Settle>,
    ) -> Result<PendingWrite, Error> {
        self.writer
            .submit_later(writer::Op::Cast { id: id.clone(), ballot, invite, receipt, form, today }, then)
            .map(PendingWrite)
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

    /// The day's key work, as of `day` (`pollctl sweep`, and polld at its
    /// start and at each day change): erases every poll that has expired
    /// by then (`expires_on <= day`) and every poll whose key is gone,
    /// re-wraps every other poll's data key under its lease from `day`,
    /// truncates the WAL, and then moves the key state to `day`, so that
    /// no key of an earlier day exists any more. Idempotent.
    pub fn sweep(&self, day: Day) -> Result<SweepReport, Error> {
        match self.writer.submit(writer::Op::Roll { day })? {
            writer::Outcome::Rolled { erased, rewrapped } => {
                Ok(SweepReport { polls_erased: erased, polls_rewrapped: rewrapped, key_day: self.keys.day() })
            }
            _ => Err(Error::internal(anyhow::anyhow!("the day's key work answered no report"))),
        }
    }
}

/// What a vote brings besides its ballot: an invite code's hash, a
/// receipt's hash, and its vote form's day and nonce.
pub type VoteProofs = (Option<InviteHash>, Option<ReceiptHash>, Option<(Day, [u8; 16])>);

/// What a queued vote's sender does once the writer knows whether the ballot
/// was stored, on the writer's thread, before the answer goes out and whether
/// or not anyone still waits for it: a client that hung up must not leave a
/// vote form half spent (issue 24, item 2). Runs exactly once; dropped
/// unrun (the write was refused before it was queued, or the writer
/// stopped), it runs with "not stored".
pub struct Settle(Option<Box<dyn FnOnce(bool) + Send>>);

impl Settle {
    pub fn new(f: impl FnOnce(bool) + Send + 'static) -> Settle {
        Settle(Some(Box::new(f)))
    }

    fn run(mut self, stored: bool) {
        if let Some(f) = self.0.take() {
            f(stored);
        }
    }
}

impl Drop for Settle {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f(false);
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
mod erasure_tests;
#[cfg(test)]
mod testkit;
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
        let path = match &*self.at {
            At::File(p) => p,
            At::Pg(pg) => {
                let [live, expired, responses, bytes] =
                    postgres::stats(&mut postgres::Link::new(pg.config.clone()), today)?;
                return Ok(Stats {
                    live_polls: u64::try_from(live)?,
                    expired_polls: u64::try_from(expired)?,
                    responses: u64::try_from(responses)?,
                    database_bytes: u64::try_from(bytes)?,
                });
            }
        };
        let conn = connect(path, OpenFlags::SQLITE_OPEN_READ_ONLY, self.busy)?;
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

    /// Writes a consistent, compacted copy of the live database to `target`
    /// (which must not exist), while the service keeps running.
    /// The copy is created private to the user running the backup (0600).
    pub fn backup(&self, target: &Path) -> anyhow::Result<()> {
        let At::File(path) = &*self.at else {
            bail!(
                "pollctl backup copies a SQLite file; back a PostgreSQL database up with pg_dump \
                 (docs/OPERATIONS.md, \"Running several nodes\")"
            )
        };
        // Created empty here, where it must be new (VACUUM INTO fills an
        // empty file, and would create one with the default mode 0644).
        match private_file(target, true) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                bail!("{} already exists; refusing to overwrite it", target.display())
            }
            other => other.with_context(|| format!("cannot create {}", target.display()))?,
        }
        let conn = connect(path, OpenFlags::SQLITE_OPEN_READ_WRITE, self.busy)?;
        let path = target.to_str().context("the backup path must be valid UTF-8")?;
        conn.execute("VACUUM INTO ?1", params![path])?;
        drop(conn);
        // Ballots cast since the writer's last mix are still staged (their
        // keys start with 0xff, writer.rs): in the copy they would stand
        // together as a poll's latest, for as long as the backup is kept.
        // The copy's get their keys here, where a receipt still finds them
        // (`fallback_key`: which of them came with a receipt is not known),
        // sealed again for their new places, and the copy is rewritten in
        // key order.
        let mut copy = connect(target, OpenFlags::SQLITE_OPEN_READ_WRITE, self.busy)?;
        let tx = copy.transaction()?;
        // Poll, key, sealed ballot, and the poll's key day and wrapped key.
        type StagedRow = (String, Vec<u8>, Vec<u8>, String, Vec<u8>);
        let staged: Vec<StagedRow> = tx
            .prepare(
                "SELECT b.poll_id, b.id, b.sealed, p.key_day, p.data_key
                 FROM sealed_ballots b JOIN sealed_polls p ON p.id = b.poll_id WHERE b.id >= ?1",
            )?
            .query_map(params![&[writer::STAGED][..]], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?
            .collect::<Result<_, _>>()?;
        for (poll, id, sealed, key_day, wrapped) in &staged {
            let day = Day::parse(key_day).context("a stored key day is malformed")?;
            let key = match data_key(&self.keys, poll, day, wrapped) {
                Ok(k) => k,
                // Its key is gone: the ballot is noise; it goes.
                Err(Error::NotFound) => {
                    tx.execute("DELETE FROM sealed_ballots WHERE poll_id = ?1 AND id = ?2", params![poll, id])?;
                    continue;
                }
                Err(e) => bail!("{e}"),
            };
            let to = fallback_key(&key, &staged_key(id)?);
            let plain = key.open(&place::ballot(poll, id), sealed).map_err(|e| anyhow::anyhow!("a ballot: {e}"))?;
            let resealed = key.seal(&place::ballot(poll, &to), &plain)?;
            tx.execute("DELETE FROM sealed_ballots WHERE poll_id = ?1 AND id = ?2", params![poll, id])?;
            tx.execute(
                "INSERT INTO sealed_ballots (poll_id, id, sealed) VALUES (?1, ?2, ?3)",
                params![poll, &to[..], resealed],
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
        let path = match &*self.at {
            At::File(p) => p,
            At::Pg(pg) => {
                let mut client = pg.config.connect(::postgres::NoTls)?;
                // PostgreSQL checks its pages as it reads them (with data
                // checksums on); `amcheck` is the operator's deeper tool.
                client.simple_query("SELECT count(*) FROM sealed_polls")?;
                return Ok(Health {
                    integrity: "ok".into(),
                    schema_version: postgres::schema_version(&mut client)?,
                    binary_schema_version: postgres::SCHEMA_VERSION,
                });
            }
        };
        let conn = connect(path, OpenFlags::SQLITE_OPEN_READ_ONLY, self.busy)?;
        let mut stmt = conn.prepare("PRAGMA integrity_check")?;
        let lines: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        Ok(Health { integrity: lines.join("\n"), schema_version: version, binary_schema_version: SCHEMA_VERSION })
    }
}
