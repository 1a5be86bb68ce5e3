//! Test helpers of the store's own tests: reading sealed rows back in clear
//! with a store's keys, writing rows as another process would, and
//! recounting a poll's ballots.

use rusqlite::{Connection, params};

use crate::day::Day;
use crate::domain::{Ballot, Tallies};
use crate::keyring::Keyring;
use crate::secret::PollId;

use super::rows::{self, Doc, Layout};
use super::seal::DataKey;
use super::{data_key, place};

pub fn key_of(conn: &Connection, keys: &Keyring, id: &PollId) -> DataKey {
    let (day, wrapped): (String, Vec<u8>) = conn
        .query_row("SELECT key_day, data_key FROM sealed_polls WHERE id = ?1", [id.as_str()], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    data_key(keys, id.as_str(), Day::parse(&day).unwrap(), &wrapped).unwrap()
}

pub fn doc_of(conn: &Connection, keys: &Keyring, id: &PollId) -> Doc {
    let body: Vec<u8> =
        conn.query_row("SELECT body FROM sealed_polls WHERE id = ?1", [id.as_str()], |r| r.get(0)).unwrap();
    super::reader::open_doc(&key_of(conn, keys, id), id.as_str(), &body).unwrap()
}

pub fn tallies_of(conn: &Connection, keys: &Keyring, id: &PollId) -> Tallies {
    let sealed: Vec<u8> =
        conn.query_row("SELECT tallies FROM sealed_polls WHERE id = ?1", [id.as_str()], |r| r.get(0)).unwrap();
    let layout = Layout::of(&doc_of(conn, keys, id).questions);
    super::reader::open_tallies(&key_of(conn, keys, id), id.as_str(), &layout, &sealed).unwrap()
}

/// Every ballot of `id` in key order: its key, day and answers.
pub fn ballots_of(conn: &Connection, keys: &Keyring, id: &PollId) -> Vec<(Vec<u8>, Day, Ballot)> {
    let key = key_of(conn, keys, id);
    let questions = doc_of(conn, keys, id).questions;
    let mut stmt = conn.prepare("SELECT id, sealed FROM sealed_ballots WHERE poll_id = ?1 ORDER BY id").unwrap();
    stmt.query_map([id.as_str()], |r| Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, Vec<u8>>(1)?)))
        .unwrap()
        .map(|row| {
            let (k, sealed) = row.unwrap();
            let plain = key.open(&place::ballot(id.as_str(), &k), &sealed).unwrap();
            let (day, ballot) = rows::ballot_from(&questions, &plain).unwrap();
            (k, day, ballot)
        })
        .collect()
}

/// The counts a recount of `ballots` gives.
pub fn recount(layout: &Layout, ballots: &[(Day, Ballot)]) -> Tallies {
    let mut t = rows::empty_tallies(layout);
    for (day, b) in ballots {
        rows::tally(&mut t, layout, b, Some(*day), 1).unwrap();
    }
    t
}

/// Asserts that `id`'s stored counts are a recount of its stored ballots;
/// returns how many there are.
pub fn assert_counts_match(conn: &Connection, keys: &Keyring, id: &PollId) -> usize {
    let ballots: Vec<(Day, Ballot)> = ballots_of(conn, keys, id).into_iter().map(|(_, d, b)| (d, b)).collect();
    let layout = Layout::of(&doc_of(conn, keys, id).questions);
    assert_eq!(tallies_of(conn, keys, id), recount(&layout, &ballots), "counts vs the stored ballots of {id}");
    ballots.len()
}

/// Stores `ballot` at `key`, sealed, as a write of the store's own would
/// (no counts: for tests that place rows).
pub fn put_ballot(conn: &Connection, keys: &Keyring, id: &PollId, key: &[u8; 16], ballot: &Ballot, day: Day) {
    let layout = Layout::of(&doc_of(conn, keys, id).questions);
    let sealed = key_of(conn, keys, id)
        .seal(&place::ballot(id.as_str(), key), &rows::ballot_bytes(&layout, day, ballot).unwrap())
        .unwrap();
    conn.execute(
        "INSERT INTO sealed_ballots (poll_id, id, sealed) VALUES (?1, ?2, ?3)",
        params![id.as_str(), &key[..], sealed],
    )
    .unwrap();
}

/// Moves ballot `from` of `id` to `to`, sealed again for its new place.
pub fn move_ballot(conn: &Connection, keys: &Keyring, id: &PollId, from: &[u8], to: &[u8; 16]) {
    let key = key_of(conn, keys, id);
    let sealed: Vec<u8> = conn
        .query_row(
            "SELECT sealed FROM sealed_ballots WHERE poll_id = ?1 AND id = ?2",
            params![id.as_str(), from],
            |r| r.get(0),
        )
        .unwrap();
    let plain = key.open(&place::ballot(id.as_str(), from), &sealed).unwrap();
    let sealed = key.seal(&place::ballot(id.as_str(), to), &plain).unwrap();
    conn.execute(
        "UPDATE sealed_ballots SET id = ?3, sealed = ?4 WHERE poll_id = ?1 AND id = ?2",
        params![id.as_str(), from, &to[..], sealed],
    )
    .unwrap();
}
