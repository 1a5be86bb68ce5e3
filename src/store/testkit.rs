//! Test helpers of the store's own tests: reading sealed rows back in clear
//! with a store's keys (through the same code the store opens them with),
//! writing rows as another process would, and recounting a poll's ballots.

use rusqlite::{Connection, params};

use crate::day::Day;
use crate::domain::{Ballot, Tallies};
use crate::keyring::Keyring;
use crate::secret::PollId;

use super::open::{Image, open_image};
use super::rows::{self, Doc, Layout, State};
use super::seal::DataKey;
use super::seen::Seen;
use super::sqlite::SqliteRows;
use super::vocab::place;

/// A connection of a test's own to `store`'s file, as another process has.
pub fn conn_of(store: &super::Store) -> Connection {
    let conn = Connection::open(store.path().unwrap()).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
    conn
}

/// Poll `id` opened whole (its ballot rows checked against its counts'
/// digest).
pub fn image_of(conn: &Connection, keys: &Keyring, id: &PollId) -> Image {
    open_image(&mut SqliteRows(conn), keys, &Seen::default(), id.as_str(), None).unwrap().unwrap()
}

pub fn key_of(conn: &Connection, keys: &Keyring, id: &PollId) -> DataKey {
    image_of(conn, keys, id).key
}

pub fn doc_of(conn: &Connection, keys: &Keyring, id: &PollId) -> Doc {
    image_of(conn, keys, id).doc
}

pub fn state_of(conn: &Connection, keys: &Keyring, id: &PollId) -> State {
    image_of(conn, keys, id).state
}

pub fn tallies_of(conn: &Connection, keys: &Keyring, id: &PollId) -> Tallies {
    state_of(conn, keys, id).tallies
}

/// Every ballot of `id` in key order: its key, day and answers.
pub fn ballots_of(conn: &Connection, keys: &Keyring, id: &PollId) -> Vec<(Vec<u8>, Day, Ballot)> {
    image_of(conn, keys, id).ballots.into_iter().map(|(k, s)| (k, s.day, s.ballot)).collect()
}

/// The counts a recount of `ballots` gives.
pub fn recount(layout: &Layout, ballots: &[(Day, Ballot)]) -> Tallies {
    let mut t = rows::empty_tallies(layout);
    for (day, b) in ballots {
        rows::tally(&mut t, layout, b, Some(*day), 1).unwrap();
    }
    t
}

/// Asserts that `id`'s stored counts are a recount of its stored ballots,
/// which are those its digest counted; returns how many there are.
pub fn assert_counts_match(conn: &Connection, keys: &Keyring, id: &PollId) -> usize {
    let image = image_of(conn, keys, id);
    let ballots: Vec<(Day, Ballot)> = image.ballots.iter().map(|(_, s)| (s.day, s.ballot.clone())).collect();
    assert_eq!(image.state.tallies, recount(&image.layout, &ballots), "counts vs the stored ballots of {id}");
    ballots.len()
}

/// Moves ballot `from` of `id` to `to`, sealed again for its new place, as
/// another process would, keeping the counts' digest right (so that what
/// is tested is where the row lies, not the digest).
pub fn move_ballot(conn: &Connection, keys: &Keyring, id: &PollId, from: &[u8], to: &[u8; 16]) {
    let mut image = image_of(conn, keys, id);
    let sealed: Vec<u8> = conn
        .query_row(
            "SELECT sealed FROM sealed_ballots WHERE poll_id = ?1 AND id = ?2",
            params![id.as_str(), from],
            |r| r.get(0),
        )
        .unwrap();
    let plain = image.key_at(from).unwrap().open(&place::ballot(id.as_str(), from), &sealed).unwrap();
    let moved = image.key_at(to).expect("a key where it goes").seal(&place::ballot(id.as_str(), to), &plain).unwrap();
    conn.execute(
        "UPDATE sealed_ballots SET id = ?3, sealed = ?4 WHERE poll_id = ?1 AND id = ?2",
        params![id.as_str(), from, &to[..], moved],
    )
    .unwrap();
    // The groups' counts and digests follow, as the writer keeps them.
    for (at, value, add) in [(from, &sealed, false), (&to[..], &moved, true)] {
        if let Some(g) = image.groups.of_key(at) {
            let group = &mut image.groups.groups[g];
            group.digest.count(at, value, add);
            group.count = if add { group.count + 1 } else { group.count - 1 };
        }
    }
    let groups = image.key.seal(&place::groups(id.as_str()), &image.groups.to_bytes()).unwrap();
    conn.execute("UPDATE sealed_polls SET ballot_groups = ?2 WHERE id = ?1", params![id.as_str(), groups]).unwrap();
    let mut state = image.state;
    state.digest.count(from, &sealed, false);
    state.digest.count(to, &moved, true);
    write_state(conn, &image.key, id, &mut state);
}

/// Writes `state` as `id`'s counts, one version on, as the writer would.
pub fn write_state(conn: &Connection, key: &DataKey, id: &PollId, state: &mut State) {
    super::writer::write_state_for_tests(&mut SqliteRows(conn), &Seen::default(), id.as_str(), key, state).unwrap();
}

/// Every key of a stored ballot, in key order, in the SQLite file `path`.
pub fn ballot_keys(path: &std::path::Path) -> Vec<Vec<u8>> {
    let conn = Connection::open(path).unwrap();
    let mut stmt = conn.prepare("SELECT id FROM sealed_ballots ORDER BY id").unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

/// Whether any byte sequence of `needles` lies in any file of `dir`.
pub fn in_files(dir: &std::path::Path, needles: &[&[u8]]) -> bool {
    std::fs::read_dir(dir).unwrap().any(|e| {
        let bytes = std::fs::read(e.unwrap().path()).unwrap();
        needles.iter().any(|n| bytes.windows(n.len()).any(|w| w == *n))
    })
}

/// Waits (up to 10 s) until the WAL of the SQLite file `db` is empty.
pub fn wait_for_empty_wal(db: &std::path::Path) {
    let wal = db.with_extension(format!("{}-wal", db.extension().and_then(|e| e.to_str()).unwrap_or("")));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::fs::metadata(&wal).map_or(0, |m| m.len()) > 0 {
        assert!(std::time::Instant::now() < deadline, "the writer did not truncate the WAL");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Waits (up to 10 s) until no ballot of the SQLite file `db` is staged:
/// the writer's mix has run.
pub fn wait_for_mix(db: &std::path::Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while ballot_keys(db).iter().any(|k| k[0] == super::vocab::STAGED) {
        assert!(std::time::Instant::now() < deadline, "the writer did not mix");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    wait_for_empty_wal(db);
}

/// A test's data folder, inside a temporary folder that also holds the
/// default key folder beside it (`data/` and `data-keys/`): both go when
/// it drops, and a scan of the data folder sees the database's files only.
pub struct DataDir(tempfile::TempDir);

impl DataDir {
    pub fn path(&self) -> std::path::PathBuf {
        self.0.path().join("data")
    }
}

pub fn data_dir() -> DataDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    DataDir(dir)
}
