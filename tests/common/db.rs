//! Database scanners: raw-byte searches over every `anonpoll.sqlite3*` file
//! (main file, WAL, shared memory), or on PostgreSQL over the cluster's data
//! directory, WAL and archive, so a privacy test sees what is really on
//! disk, including freed pages and WAL frames no SQL query would return; the
//! database read in clear with its key file ([`audit`], [`KeyedAudit`]) on
//! either engine;
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
/// someone holding both would, on either engine: the library's own
/// [`Audit`](anonpoll::store::audit::Audit), on the SQLite file or the
/// PostgreSQL database named beside it. So every way of opening a row
/// (data keys, documents, counts, ballots, receipt keys, invite hashes) is
/// the library's own on both engines, and a test checks the same promise
/// whichever engine stored the rows.
pub fn audit(dir: &Path) -> Audit {
    let keys = keys_path(dir);
    let db = match super::pg_url(dir) {
        Some(url) => std::path::PathBuf::from(url),
        None => dir.join(DB_NAME),
    };
    Audit::open(&db, &keys).expect("open the database with its keys")
}

pub use anonpoll::store::audit::{Audit, SealedAt};

/// One data key of a poll as a version of its `sealed_polls` row holds it
/// (the live row, a dead version, a copy's): the day of the wrap key it is
/// wrapped under, the wrapped key, the document sealed under that key, and
/// the ballot groups sealed under it (their keys open the settled ballots).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct StoredKey {
    pub key_day: String,
    pub wrapped: Vec<u8>,
    pub body: Vec<u8>,
    pub groups: Option<Vec<u8>>,
}

/// Poll `poll`'s live row's key in the database of the test directory
/// `dir`, on either engine.
pub fn stored_key(dir: &Path, poll: &str) -> StoredKey {
    StoredKey {
        key_day: db_texts(dir, "SELECT key_day FROM sealed_polls WHERE id = ?1", &[poll]).remove(0),
        wrapped: db_blob(dir, "SELECT data_key FROM sealed_polls WHERE id = ?1", &[poll]),
        body: db_blob(dir, "SELECT body FROM sealed_polls WHERE id = ?1", &[poll]),
        groups: db_blobs(
            dir,
            "SELECT ballot_groups FROM sealed_polls WHERE id = ?1 AND ballot_groups IS NOT NULL",
            &[poll],
        )
        .pop(),
    }
}

/// Poll `poll` of the database in `dir` opened with a key file and one
/// [`StoredKey`] of it, found anywhere: a sealed value found in raw bytes
/// (a dead row version, a copy) opens exactly as the store opens it, and
/// only with what the key file still derives.
pub struct KeyedAudit {
    audit: Audit,
    poll: String,
    key: (anonpoll::day::Day, Vec<u8>, Option<Vec<u8>>),
}

impl KeyedAudit {
    /// `None` when `key` does not unwrap with the key file at `keys` (the
    /// day of its wrap key is behind the key state: the key is gone) or
    /// does not open its document.
    pub fn open(dir: &Path, keys: &Path, poll: &str, key: &StoredKey) -> Option<KeyedAudit> {
        let db = match super::pg_url(dir) {
            Some(url) => std::path::PathBuf::from(url),
            None => dir.join(DB_NAME),
        };
        let audit = Audit::open(&db, keys).expect("open the database with the key file");
        let day = anonpoll::day::Day::parse(&key.key_day).expect("a key day");
        audit.opens(poll, (day, &key.wrapped, None), SealedAt::Body, &key.body)?;
        Some(KeyedAudit { audit, poll: poll.to_owned(), key: (day, key.wrapped.clone(), key.groups.clone()) })
    }

    /// The answers (`[a,b,c]`, as [`Audit::ballots`] gives them) of the
    /// sealed ballot value `sealed` stored at row key `row_key`, if it opens
    /// with this key.
    pub fn ballot(&self, row_key: &[u8], sealed: &[u8]) -> Option<String> {
        let (day, wrapped, groups) = &self.key;
        self.audit.open_ballot(&self.poll, (*day, wrapped, groups.as_deref()), row_key, sealed).map(|b| b.choices)
    }

    /// What an invite code's row is keyed by (the code's hash keyed under
    /// the poll's invite key, which outlives its data keys).
    pub fn invite_mac(&self, code: &str) -> Vec<u8> {
        let hash = anonpoll::secret::InviteCode::parse(code).expect("an invite code").hash();
        self.audit.invite_mac(&self.poll, &hash).expect("the poll's key").to_vec()
    }
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

/// Waits (up to 15 s) until the writer has mixed every ballot of the
/// database of `dir` (none is left at a staged key, whose first byte is
/// 0xff) and, on SQLite, truncated its WAL after.
pub fn wait_for_mix(dir: &Path) {
    wait_for_mix_of(dir, None);
}

/// [`wait_for_mix`] of one poll's ballots only.
pub fn wait_for_mix_of(dir: &Path, poll: Option<&str>) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let keys = match poll {
            Some(poll) => db_blobs(dir, "SELECT id FROM sealed_ballots WHERE poll_id = ?1", &[poll]),
            None => db_blobs(dir, "SELECT id FROM sealed_ballots WHERE poll_id <> ?1", &[""]),
        };
        let wal = dir.join(format!("{DB_NAME}-wal"));
        let wal_empty = super::on_postgres() || std::fs::metadata(&wal).map_or(true, |m| m.len() == 0);
        if keys.iter().all(|k| k.first() != Some(&0xff)) && wal_empty {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "the writer did not mix within 15 s");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
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
    let keys = anonpoll::store::Keys::for_db(at, args.get(3).map(Path::new), None, false)?;
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

/// [`db_exec`] with a bytes value as `?1` and a text as `?2` (a sealed value
/// put back at its place, as someone who can write to the database could).
pub fn db_exec_bytes(dir: &Path, sql: &str, bytes: &[u8], text: &str) -> usize {
    let changed = match Live::open(dir) {
        Live::Sqlite(conn) => conn.execute(sql, rusqlite::params![bytes, text]).map_err(|e| e.to_string()),
        Live::Pg(mut pg) => {
            pg.execute(&numbered_for_pg(sql), &[&bytes, &text]).map(|n| n as usize).map_err(|e| e.to_string())
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
/// tests/privacy/erasure.rs checks on either engine), and a test checks only that
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
                "BEGIN; LOCK TABLE sealed_polls, sealed_ballots, poll_codes, redeemed_forms IN EXCLUSIVE MODE",
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
