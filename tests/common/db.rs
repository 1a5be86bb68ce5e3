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
/// holds data (the data directory's subdirectories, its WAL in `pg_wal/`
/// among them, and the WAL archive), after a checkpoint has written what the server held in memory.
/// Not the server's log beside them: it quotes the text of failed
/// statements, which the harness's own psql calls make, and a log holds no
/// stored data (polld's statements carry their values as parameters,
/// which PostgreSQL does not log).
pub fn db_files_containing(dir: &Path, needle: &[u8]) -> Vec<String> {
    if super::on_postgres() {
        let cluster = super::PgCluster::shared().expect("the shared PostgreSQL cluster");
        cluster.checkpoint();
        // pg_wal/ (wal_dir) is inside the data directory. The files at the
        // data directory's top are configuration and the postmaster's pid
        // file (which name 127.0.0.1, the address it listens on): no data.
        debug_assert!(cluster.wal_dir().starts_with(cluster.data_dir()));
        let subdirs = std::fs::read_dir(cluster.data_dir())
            .expect("read the data directory")
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path());
        return subdirs
            .chain([cluster.archive_dir()])
            .flat_map(|d| super::files_containing(&d, needle))
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

/// A connection to the PostgreSQL database at `url`.
fn pg_client(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"))
}

/// The live database of the test directory `dir`, on its engine: SQLite's
/// file (busy timeout 5 s), or the PostgreSQL database named beside it.
enum Live {
    Sqlite(rusqlite::Connection),
    Pg(postgres::Client),
}

impl Live {
    fn open(dir: &Path) -> Live {
        match super::pg_url(dir) {
            Some(url) => Live::Pg(pg_client(&url)),
            None => {
                let path = dir.join(DB_NAME);
                assert!(path.exists(), "no database at {}", path.display());
                let conn = rusqlite::Connection::open(&path).expect("open the database with rusqlite");
                conn.busy_timeout(std::time::Duration::from_secs(5)).expect("busy_timeout");
                Live::Sqlite(conn)
            }
        }
    }
}

/// `sql` as PostgreSQL numbers its parameters: the tests write SQLite's
/// `?1`, `?2`; PostgreSQL's are `$1`, `$2`.
fn numbered_for_pg(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        let numbered = c == '?' && chars.peek().is_some_and(char::is_ascii_digit);
        out.push(if numbered { '$' } else { c });
    }
    out
}

fn pg_params<'a>(params: &'a [&'a str]) -> Vec<&'a (dyn postgres::types::ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn postgres::types::ToSql + Sync)).collect()
}

/// Runs one SQL statement (SQLite's dialect, which PostgreSQL shares for
/// the tests' plain updates; text parameters `?1`…) on the live database
/// of the test directory `dir`, on either engine; returns the rows changed.
pub fn db_exec(dir: &Path, sql: &str, params: &[&str]) -> usize {
    let changed = match Live::open(dir) {
        Live::Sqlite(conn) => conn.execute(sql, rusqlite::params_from_iter(params)).map_err(|e| e.to_string()),
        Live::Pg(mut pg) => {
            pg.execute(&numbered_for_pg(sql), &pg_params(params)).map(|n| n as usize).map_err(|e| e.to_string())
        }
    };
    changed.unwrap_or_else(|e| panic!("sql {sql:?} failed: {e}"))
}

/// The first row of a query whose columns are all whole numbers (counts,
/// sums; NULL reads 0), on either engine, as [`db_exec`] runs it.
pub fn db_ints(dir: &Path, sql: &str, params: &[&str]) -> Vec<i64> {
    let row = match Live::open(dir) {
        Live::Sqlite(conn) => conn
            .query_row(sql, rusqlite::params_from_iter(params), |r| {
                (0..r.as_ref().column_count()).map(|i| Ok(r.get::<_, Option<i64>>(i)?.unwrap_or(0))).collect()
            })
            .map_err(|e| e.to_string()),
        Live::Pg(mut pg) => {
            pg.query_one(&numbered_for_pg(sql), &pg_params(params)).map_err(|e| e.to_string()).and_then(|r| {
                use postgres::types::Type;
                (0..r.len())
                    .map(|i| {
                        let n = match *r.columns()[i].type_() {
                            Type::INT8 => r.try_get::<_, Option<i64>>(i),
                            Type::INT4 => r.try_get::<_, Option<i32>>(i).map(|n| n.map(i64::from)),
                            Type::INT2 => r.try_get::<_, Option<i16>>(i).map(|n| n.map(i64::from)),
                            ref other => return Err(format!("column {i} is {other}, not a whole number")),
                        };
                        n.map(Option::unwrap_or_default).map_err(|e| e.to_string())
                    })
                    .collect()
            })
        }
    };
    row.unwrap_or_else(|e| panic!("sql {sql:?} failed: {e}"))
}

/// The first column of every row of a query of bytes values, on either
/// engine, as [`db_exec`] runs it.
pub fn db_blobs(dir: &Path, sql: &str, params: &[&str]) -> Vec<Vec<u8>> {
    let values = match Live::open(dir) {
        Live::Sqlite(conn) => conn
            .prepare(sql)
            .and_then(|mut stmt| stmt.query_map(rusqlite::params_from_iter(params), |r| r.get(0))?.collect())
            .map_err(|e| e.to_string()),
        Live::Pg(mut pg) => pg
            .query(&numbered_for_pg(sql), &pg_params(params))
            .and_then(|rows| rows.iter().map(|r| r.try_get(0)).collect())
            .map_err(|e| e.to_string()),
    };
    values.unwrap_or_else(|e| panic!("sql {sql:?} failed: {e}"))
}

/// The one bytes value a query returns, on either engine, as [`db_exec`]
/// runs it.
pub fn db_blob(dir: &Path, sql: &str, params: &[&str]) -> Vec<u8> {
    let mut values = db_blobs(dir, sql, params);
    assert_eq!(values.len(), 1, "sql {sql:?}: one row expected");
    values.remove(0)
}

/// The first row of a query whose columns are all text, on either engine,
/// as [`db_exec`] runs it.
pub fn db_texts(dir: &Path, sql: &str, params: &[&str]) -> Vec<String> {
    let row = match Live::open(dir) {
        Live::Sqlite(conn) => conn
            .query_row(sql, rusqlite::params_from_iter(params), |r| {
                (0..r.as_ref().column_count()).map(|i| r.get(i)).collect()
            })
            .map_err(|e| e.to_string()),
        Live::Pg(mut pg) => pg
            .query_one(&numbered_for_pg(sql), &pg_params(params))
            .and_then(|r| (0..r.len()).map(|i| r.try_get(i)).collect())
            .map_err(|e| e.to_string()),
    };
    row.unwrap_or_else(|e| panic!("sql {sql:?} failed: {e}"))
}

/// Every column of every table of the database of the test directory
/// `dir`, as (table, column, declared type), on either engine (SQLite's
/// `sqlite_master` and `pragma_table_info`, PostgreSQL's
/// `information_schema`), in table order.
pub fn db_columns(dir: &Path) -> Vec<(String, String, String)> {
    match Live::open(dir) {
        Live::Sqlite(conn) => {
            let mut stmt = conn
                .prepare(
                    "SELECT m.name, c.name, c.type FROM sqlite_master m, pragma_table_info(m.name) c
                     WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, c.cid",
                )
                .expect("list the columns");
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .and_then(Iterator::collect)
                .expect("list the columns")
        }
        Live::Pg(mut pg) => pg
            .query(
                "SELECT table_name::text, column_name::text, data_type::text FROM information_schema.columns
                 WHERE table_schema = 'public' ORDER BY table_name, ordinal_position",
                &[],
            )
            .expect("list the columns")
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect(),
    }
}

/// Every value of every table of the database of the test directory `dir`,
/// as (`table.column`, value), on either engine: on PostgreSQL text as
/// text, whole numbers and booleans as integers, bytes as a blob, and any
/// other type as its text (so a timestamp column would show its time).
pub fn db_values(dir: &Path) -> Vec<(String, rusqlite::types::Value)> {
    use rusqlite::types::Value;
    let columns = db_columns(dir);
    let mut out = Vec::new();
    match Live::open(dir) {
        Live::Sqlite(conn) => {
            for (table, column, _) in &columns {
                let mut stmt = conn.prepare(&format!("SELECT \"{column}\" FROM \"{table}\"")).expect("read a column");
                let values: Vec<Value> =
                    stmt.query_map([], |r| r.get(0)).and_then(Iterator::collect).expect("read a column");
                out.extend(values.into_iter().map(|v| (format!("{table}.{column}"), v)));
            }
        }
        Live::Pg(mut pg) => {
            for (table, column, kind) in &columns {
                let (cast, read): (&str, fn(&postgres::Row) -> Value) = match kind.as_str() {
                    "bytea" => ("", |r| r.get::<_, Option<Vec<u8>>>(0).map_or(Value::Null, Value::Blob)),
                    "smallint" | "integer" | "bigint" => {
                        ("::bigint", |r| r.get::<_, Option<i64>>(0).map_or(Value::Null, Value::Integer))
                    }
                    "boolean" => ("::int::bigint", |r| r.get::<_, Option<i64>>(0).map_or(Value::Null, Value::Integer)),
                    _ => ("::text", |r| r.get::<_, Option<String>>(0).map_or(Value::Null, Value::Text)),
                };
                let rows = pg
                    .query(&format!("SELECT \"{column}\"{cast} FROM \"{table}\""), &[])
                    .unwrap_or_else(|e| panic!("read {table}.{column}: {e}"));
                out.extend(rows.iter().map(|r| (format!("{table}.{column}"), read(r))));
            }
        }
    }
    out
}

/// Whether erasing a poll overwrites its sealed bytes in every database
/// file. SQLite: yes (`secure_delete`, and the WAL truncated after every
/// erasure), so a test checks that they are gone. PostgreSQL keeps a
/// deleted row's bytes in its pages until vacuum and in its WAL and archive
/// until those are recycled: there a poll is erased with its key (what
/// tests/erasure.rs checks on either engine), and a test checks only that
/// nothing was ever in clear.
pub fn erasure_overwrites_sealed_bytes() -> bool {
    !super::on_postgres()
}

/// Sets the schema version the database of the test directory `dir` says
/// it has (SQLite's `user_version`, PostgreSQL's `anonpoll_schema`), as a
/// newer anonpoll would have left it.
pub fn set_schema_version(dir: &Path, version: i64) {
    match Live::open(dir) {
        Live::Sqlite(conn) => conn.pragma_update(None, "user_version", version).expect("set user_version"),
        Live::Pg(mut pg) => {
            let n = pg.execute("UPDATE anonpoll_schema SET version = $1", &[&version]).expect("set the schema version");
            assert_eq!(n, 1, "one anonpoll_schema row");
        }
    }
}

/// What the database of the test directory `dir` holds, to compare before
/// and after something that must not touch it: SQLite's main file, byte for
/// byte; on PostgreSQL every row of every table of the database, as text in
/// a fixed order (its files are the whole cluster's, changed by others).
pub fn db_state(dir: &Path) -> Vec<u8> {
    match Live::open(dir) {
        Live::Sqlite(_) => std::fs::read(dir.join(DB_NAME)).expect("read the database file"),
        Live::Pg(mut pg) => {
            let tables = pg
                .query(
                    "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
                    &[],
                )
                .expect("list the tables");
            let mut out = Vec::new();
            for t in tables {
                let name: String = t.get(0);
                let rows = pg
                    .query_one(
                        &format!("SELECT coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '') FROM \"{name}\" t"),
                        &[],
                    )
                    .unwrap_or_else(|e| panic!("read table {name}: {e}"));
                out.extend_from_slice(format!("{name}\n{}\n", rows.get::<_, String>(0)).as_bytes());
            }
            out
        }
    }
}

/// Another connection holding the write lock of the database of the test
/// directory `dir`, as a long write would: polld's writes wait (reads do
/// not) until [`WriteLock::release`]. SQLite: `BEGIN IMMEDIATE`; PostgreSQL:
/// every table a vote writes locked `EXCLUSIVE`, which lets reads through.
pub struct WriteLock(Live);

pub fn hold_write_lock(dir: &Path) -> WriteLock {
    let mut live = Live::open(dir);
    match &mut live {
        Live::Sqlite(conn) => conn.execute_batch("BEGIN IMMEDIATE").expect("take SQLite's write lock"),
        Live::Pg(pg) => pg
            .batch_execute(
                "BEGIN; LOCK TABLE sealed_polls, sealed_ballots, sealed_invites, redeemed_forms IN EXCLUSIVE MODE",
            )
            .expect("lock PostgreSQL's tables"),
    }
    WriteLock(live)
}

impl WriteLock {
    /// Gives the lock back, writing nothing.
    pub fn release(self) {
        match self.0 {
            Live::Sqlite(conn) => conn.execute_batch("ROLLBACK").expect("roll back"),
            Live::Pg(mut pg) => pg.batch_execute("ROLLBACK").expect("roll back"),
        }
    }
}
