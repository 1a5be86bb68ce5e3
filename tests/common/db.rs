//! Database scanners: raw-byte searches over every `anonpoll.sqlite3*` file
//! (main file, WAL, shared memory), so a privacy test sees what is really on
//! disk, including freed pages and WAL frames no SQL query would return; and
//! a way to record a response through the library's own store.

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
/// ([`super::on_postgres`]): every file of the test binary's cluster (data
/// directory with its WAL, the WAL archive, the server log), after a
/// checkpoint has written what the server held in memory.
pub fn db_files_containing(dir: &Path, needle: &[u8]) -> Vec<String> {
    if super::on_postgres() {
        let cluster = super::PgCluster::shared().expect("the shared PostgreSQL cluster");
        cluster.checkpoint();
        return super::files_containing(cluster.dir(), needle).into_iter().map(|p| p.display().to_string()).collect();
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
/// someone holding both would.
pub fn audit(dir: &Path) -> anonpoll::store::audit::Audit {
    anonpoll::store::audit::Audit::open(&dir.join(DB_NAME), &keys_path(dir)).expect("open the database with its keys")
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
