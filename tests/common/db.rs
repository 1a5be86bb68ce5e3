//! Database scanners: raw-byte searches over every `anonpoll.sqlite3*` file
//! (main file, WAL, shared memory), or on PostgreSQL over the cluster's data
//! directory, WAL and archive, so a privacy test sees what is really on
//! disk, including freed pages and WAL frames no SQL query would return; the
//! database read in clear with its key file ([`audit`]) on either engine;
//! and a way to record a response through the library's own store.

use std::path::Path;

use super::{DB_NAME, contains_bytes};

/// Every file in `dir` whose name starts with `anonpoll.sqlite3`, with contents.
pub fn db_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read data dir") {
        let entry = entry.expect("dir entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(DB_NAME) && entry.file_type().map(|t| t.is_file()).unwrap_or(false) {
            // A file may vanish between listing and reading (WAL removed).
            if let Ok(bytes) = std::fs::read(entry.path()) {
                out.push((name, bytes));
            }
        }
    }
    assert!(out.iter().any(|(n, _)| n == DB_NAME), "no {DB_NAME} in {}", dir.display());
    out
}

/// Names of the database files that contain `needle`. On PostgreSQL
/// ([`super::on_postgres`]): every file of the test binary's cluster that
/// holds data (the data directory with its WAL in `pg_wal/`, and the WAL
/// archive), after a checkpoint has written what the server held in memory.
/// Not the server's log beside them: it quotes the text of failed
/// statements, which the harness's own psql calls make, and a log holds no
/// stored data (polld's statements carry their values as parameters,
/// which PostgreSQL does not log).
pub fn db_files_containing(dir: &Path, needle: &[u8]) -> Vec<String> {
    if super::on_postgres() {
        let cluster = super::PgCluster::shared().expect("the shared PostgreSQL cluster");
        cluster.checkpoint();
        // pg_wal/ (wal_dir) is inside the data directory.
        debug_assert!(cluster.wal_dir().starts_with(cluster.data_dir()));
        return [cluster.data_dir(), cluster.archive_dir()]
            .iter()
            .flat_map(|d| super::files_containing(d, needle))
            .map(|p| p.display().to_string())
            .collect();
    }
    db_files(dir).into_iter().filter(|(_, bytes)| contains_bytes(bytes, needle)).map(|(name, _)| name).collect()
}

/// Asserts that no database file contains `needle`.
pub fn assert_not_in_db(dir: &Path, needle: &[u8], what: &str) {
    let hits = db_files_containing(dir, needle);
    assert!(hits.is_empty(), "{what} ({:?}) found in database files {hits:?}", String::from_utf8_lossy(needle));
}

/// Asserts that some database file contains `needle` (sanity checks).
pub fn assert_in_db(dir: &Path, needle: &[u8], what: &str) {
    let hits = db_files_containing(dir, needle);
    assert!(
        !hits.is_empty(),
        "{what} ({:?}) expected in the database files but not found",
        String::from_utf8_lossy(needle)
    );
}

/// The key file polld creates beside the database in `dir` (its default).
pub fn keys_path(dir: &Path) -> std::path::PathBuf {
    dir.join(super::KEYS_NAME)
}

/// The database in `dir` opened with its key file, to be read in clear as
/// someone holding both would, on either engine: the library's
/// [`Audit`](anonpoll::store::audit::Audit) reads a SQLite file, so on
/// PostgreSQL it reads a copy of the sealed rows instead ([`Audited`]).
pub fn audit(dir: &Path) -> Audited {
    let keys = keys_path(dir);
    match super::pg_url(dir) {
        None => Audited {
            audit: anonpoll::store::audit::Audit::open(&dir.join(DB_NAME), &keys)
                .expect("open the database with its keys"),
            pg: None,
        },
        Some(url) => {
            let copy = tempfile::tempdir().expect("a directory for the copy");
            let at = copy.path().join(DB_NAME);
            copy_sealed_rows(&url, &at).unwrap_or_else(|e| panic!("cannot copy the sealed rows of {url}: {e:#}"));
            let audit = anonpoll::store::audit::Audit::open(&at, &keys).expect("open the copy with the key file");
            Audited { audit, pg: Some((url, copy)) }
        }
    }
}

/// A test's database opened to be read in clear ([`audit`]): the library's
/// audit on the SQLite file, or on PostgreSQL on a SQLite copy of the
/// database's sealed rows, byte for byte (both engines' sealed tables have
/// the same columns: sql/009_sealed.sql, sql/postgres/001_init.sql). So
/// every way of opening a row (data keys, documents, counts, ballots,
/// receipt keys, invite hashes) is the library's own on both engines, and a
/// test checks the same promise whichever engine stored the rows. The copy
/// is taken when opened: open it again after more writes.
pub struct Audited {
    audit: anonpoll::store::audit::Audit,
    /// The PostgreSQL database's URL, and the directory of its copy.
    pg: Option<(String, tempfile::TempDir)>,
}

impl std::ops::Deref for Audited {
    type Target = anonpoll::store::audit::Audit;

    fn deref(&self) -> &Self::Target {
        &self.audit
    }
}

impl Audited {
    /// [`Audit::edit_document`](anonpoll::store::audit::Audit::edit_document)
    /// on the database itself: on PostgreSQL, the copy's edited row is
    /// written back.
    pub fn edit_document(&self, poll: &str, edit: impl FnOnce(&mut serde_json::Value)) -> anyhow::Result<()> {
        self.audit.edit_document(poll, edit)?;
        if let Some((url, _)) = &self.pg {
            let body: Vec<u8> =
                self.audit
                    .connection()
                    .query_row("SELECT body FROM sealed_polls WHERE id = ?1", [poll], |r| r.get(0))?;
            let mut pg = postgres::Client::connect(url, postgres::NoTls)?;
            let n = pg.execute("UPDATE sealed_polls SET body = $2 WHERE id = $1", &[&poll, &body])?;
            anyhow::ensure!(n == 1, "poll {poll} is not in {url}");
        }
        Ok(())
    }
}

/// Copies the rows [`Audit`](anonpoll::store::audit::Audit) reads (the key
/// ring's id, every poll's sealed row, its ballots and invite rows) from
/// the PostgreSQL database at `url` into a new SQLite file at `at`.
fn copy_sealed_rows(url: &str, at: &Path) -> anyhow::Result<()> {
    let mut pg = postgres::Client::connect(url, postgres::NoTls)?;
    let mut lite = rusqlite::Connection::open(at)?;
    lite.execute_batch(
        "CREATE TABLE keyring (ring BLOB NOT NULL);
         CREATE TABLE sealed_polls (id TEXT PRIMARY KEY, key_day TEXT NOT NULL, data_key BLOB NOT NULL,
                                    body BLOB NOT NULL, tallies BLOB NOT NULL);
         CREATE TABLE sealed_ballots (poll_id TEXT NOT NULL, id BLOB NOT NULL, sealed BLOB NOT NULL,
                                      PRIMARY KEY (poll_id, id));
         CREATE TABLE sealed_invites (poll_id TEXT NOT NULL, code_mac BLOB NOT NULL, used INTEGER NOT NULL,
                                      PRIMARY KEY (poll_id, code_mac));",
    )?;
    // One snapshot, so the copy is one state of the database.
    let mut snap =
        pg.build_transaction().isolation_level(postgres::IsolationLevel::RepeatableRead).read_only(true).start()?;
    let tx = lite.transaction()?;
    for r in snap.query("SELECT ring FROM keyring", &[])? {
        tx.execute("INSERT INTO keyring VALUES (?1)", [r.try_get::<_, Vec<u8>>(0)?])?;
    }
    for r in snap.query("SELECT id, key_day, data_key, body, tallies FROM sealed_polls", &[])? {
        let (id, day): (String, String) = (r.try_get(0)?, r.try_get(1)?);
        let (key, body, tallies): (Vec<u8>, Vec<u8>, Vec<u8>) = (r.try_get(2)?, r.try_get(3)?, r.try_get(4)?);
        tx.execute(
            "INSERT INTO sealed_polls VALUES (?1, ?2, ?3, ?4, ?5)",
            rusqlite::params![id, day, key, body, tallies],
        )?;
    }
    for r in snap.query("SELECT poll_id, id, sealed FROM sealed_ballots", &[])? {
        let (poll, id, sealed): (String, Vec<u8>, Vec<u8>) = (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
        tx.execute("INSERT INTO sealed_ballots VALUES (?1, ?2, ?3)", rusqlite::params![poll, id, sealed])?;
    }
    for r in snap.query("SELECT poll_id, code_mac, used FROM sealed_invites", &[])? {
        let (poll, mac, used): (String, Vec<u8>, bool) = (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
        tx.execute("INSERT INTO sealed_invites VALUES (?1, ?2, ?3)", rusqlite::params![poll, mac, used])?;
    }
    snap.commit()?;
    tx.commit()?;
    Ok(())
}

/// The page numbers SQLite's WAL index (a `-shm` file's bytes) lists for
/// the frames of the WAL's last generation, in commit order: the first
/// block's 4,062 after its 136-byte header, 4,096 in each later block
/// (each block 32 KiB); zeros are empty slots.
pub fn wal_index_pages(shm: &[u8]) -> Vec<u32> {
    const BLOCK: usize = 32 * 1024;
    let mut pages = Vec::new();
    for (block, at) in (0..shm.len()).step_by(BLOCK).enumerate() {
        let (start, n) = if block == 0 { (at + 136, 4062) } else { (at, 4096) };
        for i in 0..n {
            let p = start + 4 * i;
            if let Some(w) = shm.get(p..p + 4) {
                let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                if v != 0 {
                    pages.push(v);
                }
            }
        }
    }
    pages
}

/// Record one response through the library's store, as the share page would.
pub fn record_response(db: &Path, poll_id: &str, choices: &[Option<usize>]) -> anyhow::Result<()> {
    open_store(db)?.record_response(poll_id, choices)
}

/// The store a test keeps at `db` (on PostgreSQL, the database named
/// beside it: [`super::db_args`]), opened through the library.
pub fn open_store(db: &Path) -> anyhow::Result<anonpoll::store::Store> {
    let args = super::db_args(db);
    let at = Path::new(&args[1]);
    let keys = anonpoll::store::Keys::for_db(at, args.get(3).map(Path::new), anonpoll::keyring::DEFAULT_LEASE_DAYS)?;
    anonpoll::store::Store::open_db(at, &keys, anonpoll::store::WriterConfig::default())
}
