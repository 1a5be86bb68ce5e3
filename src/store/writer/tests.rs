//! Tests of the writer's batch path and its mix: batches mixing every kind
//! of vote and other writes, replayed through [`Writer::apply_batch`]
//! directly (on SQLite) so that a batch's make-up does not depend on
//! timing; the poll cache against changes made by another connection; the
//! mix under a new data key; codes spent in the counts; the digest and
//! version that notice tampering.

use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use serde_json::json;

use super::cache::CACHE_POLLS;
use super::*;
use crate::domain::{Ballot, NewPoll, PollPatch};
use crate::secret::{AdminToken, InviteCode, PollId, Receipt};
use crate::store::Keys;
use crate::store::keys::{receipt_tag, settled_key, staged_key};
use crate::store::rows::Groups;
use crate::store::seen::Seen;
use crate::store::sqlite::SqliteRows;
use crate::store::sqlite::testing::{SCHEMA_VERSION, connect, migrate, open_keys};
use crate::store::testkit::{DataDir, assert_counts_match, data_dir, doc_of, image_of, tallies_of};
use crate::store::vocab::STAGED;

fn new_poll() -> NewPoll {
    NewPoll::from_json(&json!({
        "title": "Writer test", "lang": "en", "expiryDays": 7,
        "questions": [{"label": "Q1", "options": ["a", "b", "c"]}, {"label": "Q2", "options": ["x", "y"]}]
    }))
    .unwrap()
}

/// A migrated database with its key file, and the writer's own kind of
/// connection to it.
fn setup() -> (DataDir, Connection, Arc<Keyring>) {
    let dir = data_dir();
    let path = dir.path().join("w.sqlite3");
    migrate(&path, Duration::from_secs(5), SCHEMA_VERSION).unwrap();
    let conn = connect(&path, OpenFlags::SQLITE_OPEN_READ_WRITE, Duration::from_secs(5)).unwrap();
    let keys = open_keys(&conn, &Keys::apart_from(&path), Day::today()).unwrap();
    (dir, conn, Arc::new(keys))
}

/// A batch in one transaction, as SQLite's writer thread commits it.
fn commit(w: &mut Writer, conn: &mut Connection, batch: &[Job]) -> (Vec<Result<Outcome, Error>>, bool) {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).unwrap();
    let version: i64 = tx.query_row("PRAGMA data_version", [], |r| r.get(0)).unwrap();
    w.check_version(version);
    match w.apply_batch(&mut SqliteRows(&tx), batch, &[]) {
        Ok(out) => {
            tx.commit().unwrap();
            w.committed();
            out
        }
        Err(BatchFailed(e)) => {
            drop(tx);
            w.rolled_back();
            (batch.iter().map(|_| Err(batch_error(&e))).collect(), false)
        }
    }
}

/// Mixes `poll` in a transaction of its own.
fn mix_now(w: &mut Writer, conn: &mut Connection, poll: &PollId) -> Result<(), Error> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).unwrap();
    let out = w.mix(&mut SqliteRows(&tx), poll.as_str(), Day::today());
    if out.is_ok() {
        tx.commit().unwrap();
    }
    w.mixed(poll.as_str(), out.is_ok().then_some(Duration::ZERO));
    out
}

/// A new database with one new poll, the writer's connection to it and
/// the writer: where most tests here start.
struct Started {
    _dir: DataDir,
    conn: Connection,
    today: Day,
    id: PollId,
    w: Writer,
}

fn started() -> Started {
    let (_dir, mut conn, keys) = setup();
    let today = Day::today();
    let id = PollId::generate().unwrap();
    let mut w = Writer::new(keys, Arc::new(Seen::default()));
    let (results, _) = commit(&mut w, &mut conn, &[create(&id, today)]);
    assert!(results[0].is_ok());
    Started { _dir, conn, today, id, w }
}

/// A job nobody waits for, for the inbox's tests.
pub(super) fn job_for_inbox(roll: bool) -> Job {
    job(if roll { Op::Roll { day: Day::today() } } else { Op::Delete { id: PollId::generate().unwrap() } })
}

fn job(op: Op) -> Job {
    // Nobody waits: `commit` returns the results and the test reads them.
    Job::unanswered(op)
}

fn create(id: &PollId, today: Day) -> Job {
    job(Op::Create {
        id: id.clone(),
        token: AdminToken::generate().unwrap().hash(),
        poll: new_poll(),
        media: Vec::new(),
        today,
    })
}

fn ballot(choices: &[Option<usize>]) -> Ballot {
    // Ballots are checked against the questions before they are queued
    // (`Ballot::new`, tested in `domain`); the writer only sees valid ones.
    Ballot::of_choices(&new_poll().questions, choices).unwrap()
}

fn cast(id: &PollId, choices: &[Option<usize>], today: Day) -> Job {
    job(Op::Cast {
        id: id.clone(),
        ballot: ballot(choices),
        invite: None,
        receipt: None,
        form: None,
        read_at: None,
        today,
    })
}

/// A vote read against the poll's questions as they were after `read_at`
/// changes of their structure.
fn cast_read_at(id: &PollId, choices: &[Option<usize>], read_at: u32, today: Day) -> Job {
    let mut cast = cast(id, choices, today);
    if let Op::Cast { read_at: at, .. } = &mut cast.op {
        *at = Some(read_at);
    }
    cast
}

fn cast_with(
    id: &PollId,
    choices: &[Option<usize>],
    (invite, receipt): (Option<&InviteCode>, Option<&Receipt>),
) -> Job {
    job(Op::Cast {
        id: id.clone(),
        ballot: ballot(choices),
        invite: invite.map(InviteCode::hash),
        receipt: receipt.map(Receipt::hash),
        form: None,
        read_at: None,
        today: Day::today(),
    })
}

fn patch(id: &PollId, body: serde_json::Value, today: Day) -> Job {
    job(Op::Patch { id: id.clone(), patch: PollPatch::from_json(&body).unwrap(), today })
}

fn kind(r: &Result<Outcome, Error>) -> &'static str {
    match r {
        Ok(_) => "ok",
        Err(Error::NotFound) => "not found",
        Err(Error::Closed) => "closed",
        Err(Error::Invalid(_)) => "invalid",
        Err(Error::InviteRefused(_)) => "invite refused",
        Err(_) => "other error",
    }
}

#[test]
fn counters_stay_exact_when_a_batch_mixes_valid_refused_and_other_writes() {
    let (_dir, mut conn, keys) = setup();
    let today = Day::today();
    let later = today.plus_days(30); // past every poll's expiry
    let [open, closed, doomed, unknown] = [(); 4].map(|()| PollId::generate().unwrap());
    let mut w = Writer::new(keys.clone(), Arc::new(Seen::default()));
    let setup = [create(&open, today), create(&closed, today), create(&doomed, today)];
    let (results, _) = commit(&mut w, &mut conn, &setup);
    assert!(results.iter().all(Result::is_ok));
    let (results, _) = commit(&mut w, &mut conn, &[patch(&closed, json!({"closed": true}), today)]);
    assert!(results.iter().all(Result::is_ok));
    // A vote first, so that the cache knows `open` before the batch.
    let (results, _) = commit(&mut w, &mut conn, &[cast(&open, &[Some(0), None], today)]);
    assert_eq!(kind(&results[0]), "ok");

    let batch = [
        cast(&open, &[Some(0), Some(1)], today),
        cast(&closed, &[Some(1), None], today),
        cast(&open, &[Some(1), Some(0)], later), // the poll has expired by then
        cast(&unknown, &[Some(0), None], today),
        cast(&doomed, &[Some(2), Some(1)], today),
        cast(&doomed, &[Some(2), None], today),
        // Counted votes of a poll deleted later in the same batch: the
        // delete must meet (and erase) their counters.
        job(Op::Delete { id: doomed.clone() }),
        cast(&doomed, &[Some(0), None], today),
        cast(&open, &[Some(2), Some(1)], today),
        // Closing a poll within the batch refuses its later votes.
        patch(&open, json!({"closed": true}), today),
        cast(&open, &[Some(0), Some(0)], today),
        patch(&open, json!({"closed": false}), today),
        cast(&open, &[None, Some(0)], today),
        cast(&closed, &[Some(0), None], today),
    ];
    let (results, erased) = commit(&mut w, &mut conn, &batch);
    let kinds: Vec<&str> = results.iter().map(kind).collect();
    assert_eq!(
        kinds,
        [
            "ok",
            "closed",
            "not found",
            "not found",
            "ok",
            "ok",
            "ok",
            "not found",
            "ok",
            "ok",
            "closed",
            "ok",
            "ok",
            "closed"
        ]
    );
    assert!(erased, "the delete erased a poll");
    // 1 before the batch, 3 in it.
    assert_eq!(assert_counts_match(&conn, &keys, &open), 4);
    assert_eq!(assert_counts_match(&conn, &keys, &closed), 0);
    let left: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM sealed_polls WHERE id = ?1)
                  + (SELECT count(*) FROM sealed_ballots WHERE poll_id = ?1)",
            [doomed.as_str()],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(left, 0, "nothing of the deleted poll is left");
    assert_eq!(tallies_of(&conn, &keys, &open).votes, [vec![2, 0, 1], vec![1, 2]]);
}

#[test]
fn a_batch_whose_counters_cannot_be_written_fails_as_a_whole() {
    let Started { _dir, mut conn, today, id, mut w } = started();
    // Counts of this poll can no longer be written (the votes themselves can).
    conn.execute_batch(
        "CREATE TRIGGER no_counting BEFORE UPDATE OF tallies ON sealed_polls BEGIN SELECT RAISE(ABORT, 'refused'); END;",
    )
    .unwrap();
    let batch = [cast(&id, &[Some(0), None], today), cast(&id, &[Some(1), Some(1)], today)];
    let (results, _) = commit(&mut w, &mut conn, &batch);
    assert!(results.iter().all(Result::is_err), "no vote is acknowledged without its counts");
    let rows: i64 = conn.query_row("SELECT count(*) FROM sealed_ballots", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, 0, "the batch's votes were rolled back");
    conn.execute_batch("DROP TRIGGER no_counting").unwrap();
    let (results, _) = commit(&mut w, &mut conn, &batch);
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(assert_counts_match(&conn, &w.keys, &id), 2, "the failed batch left nothing counted in memory");
}

/// A poll erased in a batch that is then rolled back as a whole keeps
/// waiting for its mix: its staged ballots are still there.
#[test]
fn an_erasure_undone_with_its_batch_leaves_the_poll_waiting_for_its_mix() {
    let Started { _dir, mut conn, today, id, mut w } = started();
    let (results, _) = commit(&mut w, &mut conn, &[cast(&id, &[Some(0), None], today)]);
    assert!(results[0].is_ok());
    assert_eq!(w.fresh.waiting(), [id.as_str().to_owned()]);
    let other = PollId::generate().unwrap();
    assert!(commit(&mut w, &mut conn, &[create(&other, today)]).0[0].is_ok());
    conn.execute_batch(&format!(
        "CREATE TRIGGER no_counting BEFORE UPDATE OF tallies ON sealed_polls WHEN NEW.id = '{}'
         BEGIN SELECT RAISE(ABORT, 'refused'); END;",
        other.as_str()
    ))
    .unwrap();
    let batch = [job(Op::Delete { id: id.clone() }), cast(&other, &[Some(1), None], today)];
    let (results, _) = commit(&mut w, &mut conn, &batch);
    assert!(results.iter().all(Result::is_err), "the batch failed as a whole");
    assert!(w.fresh.waiting().contains(&id.as_str().to_owned()), "the poll still waits for its mix");
    conn.execute_batch("DROP TRIGGER no_counting").unwrap();
    let (results, _) = commit(&mut w, &mut conn, &[job(Op::Delete { id: id.clone() })]);
    assert!(results[0].is_ok());
    assert!(!w.fresh.waiting().contains(&id.as_str().to_owned()), "erased: it waits for nothing");
}

#[test]
fn the_poll_cache_notices_changes_made_by_another_connection() {
    let Started { _dir, mut conn, today, id, mut w } = started();
    let (results, _) = commit(&mut w, &mut conn, &[cast(&id, &[Some(0), None], today)]);
    assert_eq!(kind(&results[0]), "ok");
    assert_eq!(w.polls.len(), 1, "the vote filled the cache");
    // Another process (pollctl) closes the poll: a writer of its own.
    let mut other = Connection::open(conn.path().unwrap()).unwrap();
    let mut pollctl = Writer::new(w.keys.clone(), Arc::new(Seen::default()));
    let (r, _) = commit(&mut pollctl, &mut other, &[patch(&id, json!({"closed": true}), today)]);
    assert!(r[0].is_ok());
    let (results, _) = commit(&mut w, &mut conn, &[cast(&id, &[Some(1), None], today)]);
    assert_eq!(kind(&results[0]), "closed");
    // ...then shortens its life to end today.
    let (r, _) = commit(&mut pollctl, &mut other, &[patch(&id, json!({"closed": false}), today)]);
    assert!(r[0].is_ok());
    other.execute("UPDATE sealed_polls SET expires_on = ?2 WHERE id = ?1", [id.as_str(), &today.to_string()]).unwrap();
    let (results, _) = commit(&mut w, &mut conn, &[cast(&id, &[Some(1), None], today)]);
    assert_eq!(kind(&results[0]), "not found");
    other.execute("DELETE FROM sealed_polls WHERE id = ?1", [id.as_str()]).unwrap();
    let (results, _) = commit(&mut w, &mut conn, &[cast(&id, &[Some(1), None], today.previous())]);
    assert_eq!(kind(&results[0]), "not found");
}

#[test]
fn the_poll_cache_stays_bounded_and_loses_no_count() {
    let (_dir, mut conn, keys) = setup();
    let today = Day::today();
    let mut w = Writer::new(keys.clone(), Arc::new(Seen::default()));
    let ids: Vec<PollId> = (0..CACHE_POLLS + 3).map(|_| PollId::generate().unwrap()).collect();
    let creates: Vec<Job> = ids.iter().map(|id| create(id, today)).collect();
    for chunk in creates.chunks(500) {
        assert!(commit(&mut w, &mut conn, chunk).0.iter().all(Result::is_ok));
    }
    // One batch voting in more polls than the cache holds: it starts over
    // within the batch, after writing what it counted.
    let votes: Vec<Job> = ids.iter().map(|id| cast(id, &[Some(0), None], today)).collect();
    assert!(commit(&mut w, &mut conn, &votes).0.iter().all(Result::is_ok));
    assert!(w.polls.len() <= CACHE_POLLS, "{} polls remembered", w.polls.len());
    for id in ids.iter().step_by(97) {
        assert_eq!(assert_counts_match(&conn, &keys, id), 1);
    }
}

#[test]
fn votes_stop_on_the_closing_day_and_reopening_past_it_clears_it() {
    let Started { _dir, mut conn, today, id, mut w } = started();
    let closes = today.plus_days(2);
    let set = patch(&id, json!({"closesOn": closes.to_string()}), today);
    let (r, _) = commit(&mut w, &mut conn, &[set]);
    assert!(r[0].is_ok());
    // The day before: counted; on the day and after: refused, by the
    // writer itself (the cache remembers the poll from the first vote).
    let batch = [
        cast(&id, &[Some(0), None], today.plus_days(1)),
        cast(&id, &[Some(0), None], closes),
        cast(&id, &[Some(1), None], closes.plus_days(1)),
    ];
    let (r, _) = commit(&mut w, &mut conn, &batch);
    assert_eq!(r.iter().map(kind).collect::<Vec<_>>(), ["ok", "closed", "closed"]);
    // Reopened on its closing day: the day is removed and votes count again.
    let (r, _) = commit(&mut w, &mut conn, &[patch(&id, json!({"closed": false}), closes)]);
    assert!(r[0].is_ok());
    assert_eq!(doc_of(&conn, &w.keys, &id).closes_on, None);
    let (r, _) = commit(&mut w, &mut conn, &[cast(&id, &[Some(1), None], closes)]);
    assert_eq!(kind(&r[0]), "ok");
    assert_eq!(assert_counts_match(&conn, &w.keys, &id), 2);
}

/// New ballots wait with a staged key; the mix gives every ballot of the
/// poll a new key (never a staged one; for a receipt's ballot, the one its
/// tag finds under the new data key), seals it again under a new data key,
/// and keeps every ballot and count. The old data key opens none of the
/// rows afterwards, and the new one none of those before.
#[test]
fn the_mix_moves_every_ballot_to_a_new_key_under_a_new_data_key() {
    let Started { _dir, mut conn, today, id, mut w } = started();
    let receipts: Vec<Receipt> = (0..10).map(|_| Receipt::generate().unwrap()).collect();
    let mut batch: Vec<Job> = (0..30).map(|i| cast(&id, &[Some(i % 3), Some(i % 2)], today)).collect();
    batch.extend(receipts.iter().map(|r| cast_with(&id, &[Some(1), None], (None, Some(r)))));
    assert!(commit(&mut w, &mut conn, &batch).0.iter().all(Result::is_ok));
    assert_eq!(w.fresh.waiting(), vec![id.as_str().to_owned()], "the poll waits for its mix");
    let before = image_of(&conn, &w.keys, &id);
    assert!(before.ballots.iter().all(|(k, _)| k[0] == STAGED), "every new ballot is staged");
    let receipt_staged: Vec<[u8; 16]> =
        receipts.iter().map(|r| staged_key(&before.key, &receipt_tag(&r.hash()))).collect();
    assert!(receipt_staged.iter().all(|k| before.ballots.iter().any(|(b, _)| b[..] == k[..])));

    mix_now(&mut w, &mut conn, &id).unwrap();
    assert!(w.fresh.waiting().is_empty());
    let after = image_of(&conn, &w.keys, &id);
    assert_eq!(after.ballots.len(), 40);
    assert!(after.ballots.iter().all(|(k, _)| k[0] != STAGED), "none left staged");
    let old: std::collections::BTreeSet<&Vec<u8>> = before.ballots.iter().map(|(k, _)| k).collect();
    assert!(after.ballots.iter().all(|(k, _)| !old.contains(k)), "every ballot moved");
    for r in &receipts {
        let at = after.settled_key(&receipt_tag(&r.hash())).unwrap();
        assert!(
            after.ballots.iter().any(|(k, s)| k[..] == at[..] && s.tag.is_some()),
            "a receipt's ballot where its tag says"
        );
    }
    let sealed_now: Vec<(Vec<u8>, Vec<u8>)> = conn
        .prepare("SELECT id, sealed FROM sealed_ballots")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (k, s) in &sealed_now {
        let place = crate::store::vocab::place::ballot(id.as_str(), k);
        assert!(before.key.open(&place, s).is_err(), "the old data key opens a row after the mix");
        assert!(after.key_at(k).unwrap().open(&place, s).is_ok(), "its group's key opens it");
    }
    assert!(after.state.version > before.state.version);
    assert_eq!(after.state.tallies, before.state.tallies, "the same counts");
    assert_eq!(assert_counts_match(&conn, &w.keys, &id), 40);
    let wrapped = |c: &Connection| -> Vec<u8> {
        c.query_row("SELECT data_key FROM sealed_polls WHERE id = ?1", [id.as_str()], |r| r.get(0)).unwrap()
    };
    let rewrapped = wrapped(&conn);
    mix_now(&mut w, &mut conn, &id).unwrap();
    assert_ne!(wrapped(&conn), rewrapped, "each mix takes a new data key");
}

/// A vote with an invite code changes no row of the code: the code's
/// row (its hash and slot) is the same bytes before and after, and the
/// code is spent in the poll's sealed counts, where a second vote with it
/// is refused and a vote refused for another reason leaves it unspent.
#[test]
fn a_vote_spends_its_code_in_the_counts_and_changes_no_code_row() {
    let Started { _dir, mut conn, today, id, mut w } = started();
    let (r, _) = commit(&mut w, &mut conn, &[patch(&id, json!({"duplicateCheck": "invite"}), today)]);
    assert!(r[0].is_ok());
    let codes: Vec<InviteCode> = (0..5).map(|_| InviteCode::generate().unwrap()).collect();
    let issue = job(Op::IssueInvites { id: id.clone(), hashes: codes.iter().map(InviteCode::hash).collect(), today });
    let (r, _) = commit(&mut w, &mut conn, &[issue]);
    assert!(matches!(r[0], Ok(Outcome::Invites(5, 0))));
    let rows = |c: &Connection| -> Vec<(Vec<u8>, i64)> {
        c.prepare("SELECT mac, slot FROM poll_codes ORDER BY mac")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let before = rows(&conn);
    assert_eq!(before.len(), 5);
    let batch = [
        cast_with(&id, &[Some(0), None], (Some(&codes[0]), None)),
        cast_with(&id, &[Some(1), None], (Some(&codes[0]), None)),
        cast_with(&id, &[Some(2), None], (Some(&codes[3]), None)),
        cast_with(&id, &[Some(2), None], (Some(&InviteCode::generate().unwrap()), None)),
        cast_with(&id, &[Some(2), None], (None, None)),
    ];
    let (r, _) = commit(&mut w, &mut conn, &batch);
    assert_eq!(
        r.iter().map(kind).collect::<Vec<_>>(),
        ["ok", "invite refused", "ok", "invite refused", "invite refused"]
    );
    assert_eq!(rows(&conn), before, "no code's row changed");
    let state = image_of(&conn, &w.keys, &id).state;
    assert_eq!(state.spent_count(), 2);
    assert_eq!(assert_counts_match(&conn, &w.keys, &id), 2);
    mix_now(&mut w, &mut conn, &id).unwrap();
    assert_eq!(rows(&conn), before, "nor did the mix");
    let (r, _) = commit(&mut w, &mut conn, &[cast_with(&id, &[Some(0), None], (Some(&codes[3]), None))]);
    assert_eq!(kind(&r[0]), "invite refused", "spent, after the mix too");
    assert_eq!(image_of(&conn, &w.keys, &id).state.spent_count(), 2);
}

/// Tampering with the rows behind the store's back is noticed: counts put
/// back at their place (an older version, under the same data key) fail a
/// read in a process that has seen a later one, and `pollctl check` names
/// the poll, since their digest is not that of the ballot rows; a ballot
/// row deleted likewise fails the export and the check.
#[test]
fn rolled_back_counts_and_a_deleted_ballot_row_are_noticed() {
    let dir = data_dir();
    let path = dir.path().join("t.sqlite3");
    // No mix, so that the counts of before stay under the same data key.
    let unmixed = WriterConfig { mix: false, ..WriterConfig::default() };
    let store = crate::store::Store::open_db(&path, &Keys::apart_from(&path), unmixed).unwrap();
    let today = Day::today();
    let id = PollId::generate().unwrap();
    store.create_poll(&id, &AdminToken::generate().unwrap().hash(), &new_poll(), &[], today).unwrap();
    for i in 0..5 {
        store.cast(&id, ballot(&[Some(i % 3), None]), today).unwrap();
    }
    assert!(store.check_polls().unwrap().is_empty(), "an untouched poll checks out");
    let conn = crate::store::testkit::conn_of(&store);
    let counts = || -> Vec<u8> {
        conn.query_row("SELECT tallies FROM sealed_polls WHERE id = ?1", [id.as_str()], |r| r.get(0)).unwrap()
    };
    let older = counts();
    store.cast(&id, ballot(&[Some(1), Some(1)]), today).unwrap();
    let mut r = store.reader().unwrap();
    let poll = r.poll(&id, today).unwrap().unwrap();
    assert_eq!(r.tallies(&poll).unwrap().total, 6);
    conn.execute("UPDATE sealed_polls SET tallies = ?2 WHERE id = ?1", rusqlite::params![id.as_str(), older]).unwrap();
    let read = r.tallies(&poll);
    assert!(read.is_err(), "counts put back at their place were read as current: {read:?}");
    let found = store.check_polls().unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].poll, id.as_str());
    assert!(found[0].problem.contains("do not match"), "{}", found[0].problem);

    // A ballot row deleted: the export and the check refuse the poll.
    let id2 = PollId::generate().unwrap();
    store.create_poll(&id2, &AdminToken::generate().unwrap().hash(), &new_poll(), &[], today).unwrap();
    for i in 0..4 {
        store.cast(&id2, ballot(&[Some(i % 3), None]), today).unwrap();
    }
    let poll2 = r.poll(&id2, today).unwrap().unwrap();
    assert_eq!(r.ballots(&poll2).unwrap().len(), 4);
    conn.execute("DELETE FROM sealed_ballots WHERE poll_id = ?1 AND id = (SELECT min(id) FROM sealed_ballots WHERE poll_id = ?1)", [id2.as_str()]).unwrap();
    assert!(r.ballots(&poll2).is_err(), "the export read a ballot set that is not the counted one");
    let found = store.check_polls().unwrap();
    assert!(found.iter().any(|f| f.poll == id2.as_str() && f.problem.contains("do not match")), "{found:?}");
}

/// The check a receipt-derived key must pass: without the receipt and the
/// poll's key no byte of it can be checked against the others, so the file
/// does not tell which ballots came with a receipt.
#[test]
fn receipt_keys_cannot_be_told_from_random_ones() {
    let poll_key = crate::store::seal::DataKey::generate().unwrap();
    let other_key = crate::store::seal::DataKey::generate().unwrap();
    let receipts: Vec<Receipt> = (0..512).map(|_| Receipt::generate().unwrap()).collect();
    let tags: Vec<[u8; 16]> = receipts.iter().map(|r| receipt_tag(&r.hash())).collect();
    let settled: Vec<[u8; 16]> = tags.iter().map(|t| settled_key(&poll_key, 5, t)).collect();
    let random = crate::store::keys::random_key(Some(5)).unwrap();
    assert!(settled.iter().all(|k| k[..2] == random[..2]), "a group's number, then keyed-hash output as random");
    for ((r, t), k) in receipts.iter().zip(&tags).zip(&settled) {
        // Nothing of the staged key stays in the key a ballot settles at.
        assert!(!staged_key(&poll_key, t)[1..].windows(6).any(|w| k[2..].windows(6).any(|v| v == w)));
        // Keyed under the group: another key gives other keys, and none of
        // the receipt's hash or tag shows in them.
        assert_ne!(settled_key(&other_key, 5, t), *k);
        assert!(!k.windows(8).any(|w| r.hash().0.windows(8).any(|v| v == w) || t.windows(8).any(|v| v == w)));
    }
}

/// A mix rewrites the groups its new ballots go to, not the whole poll:
/// on a poll of 3,000 ballots (8 groups of about 375), one new ballot with
/// a receipt moves its group's ballots to new keys under a new group key,
/// and leaves every other group's rows as they were, byte for byte. A
/// withdrawal of a settled ballot marks its group, and the next mix
/// rewrites that group, so that no key of the poll opens the old answers.
/// Crossing a size where the poll's groups split mixes it whole.
#[test]
fn a_mix_rewrites_the_groups_its_new_ballots_go_to() {
    let Started { _dir, mut conn, today, id, mut w } = started();
    let rows = |c: &Connection| -> std::collections::BTreeMap<Vec<u8>, Vec<u8>> {
        c.prepare("SELECT id, sealed FROM sealed_ballots")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    for _ in 0..6 {
        let batch: Vec<Job> = (0..500).map(|i| cast(&id, &[Some(i % 3), Some(i % 2)], today)).collect();
        assert!(commit(&mut w, &mut conn, &batch).0.iter().all(Result::is_ok));
    }
    mix_now(&mut w, &mut conn, &id).unwrap();
    let first = image_of(&conn, &w.keys, &id);
    assert_eq!((first.groups.bits, first.ballots.len()), (3, 3000));
    assert!(
        first.groups.groups.iter().all(|g| (250..500).contains(&g.count)),
        "{:?}",
        first.groups.groups.iter().map(|g| g.count).collect::<Vec<_>>()
    );
    let before = rows(&conn);

    let receipt = Receipt::generate().unwrap();
    assert!(commit(&mut w, &mut conn, &[cast_with(&id, &[Some(1), None], (None, Some(&receipt)))]).0[0].is_ok());
    mix_now(&mut w, &mut conn, &id).unwrap();
    let after = image_of(&conn, &w.keys, &id);
    let now = rows(&conn);
    let g = after.groups.of_tag(&receipt_tag(&receipt.hash()));
    let (lo, hi) = Groups::range(g);
    let in_group = |k: &Vec<u8>| k[..] >= lo[..] && k[..] <= hi[..];
    assert!(now.iter().filter(|(k, _)| !in_group(k)).all(|(k, s)| before.get(k) == Some(s)), "other groups untouched");
    assert_eq!(now.iter().filter(|(k, _)| !in_group(k)).count() + after.groups.groups[g].count as usize, 3001);
    assert!(now.iter().filter(|(k, _)| in_group(k)).all(|(k, _)| !before.contains_key(k)), "its group moved whole");
    assert_ne!(after.groups.groups[g].key, first.groups.groups[g].key, "under a new group key");
    assert!(after.settled_key(&receipt_tag(&receipt.hash())).is_some_and(|at| now.contains_key(at.as_slice())));
    assert_eq!(assert_counts_match(&conn, &w.keys, &id), 3001);

    // A withdrawal of a settled ballot: its group is rewritten at the next
    // mix, and nothing of the poll opens the old value.
    let at = after.settled_key(&receipt_tag(&receipt.hash())).unwrap();
    let old_value = now[&at.to_vec()].clone();
    let withdraw = job(Op::Amend { id: id.clone(), receipt: receipt.hash(), ballot: None, today });
    assert!(commit(&mut w, &mut conn, &[withdraw]).0[0].is_ok());
    assert!(image_of(&conn, &w.keys, &id).groups.groups[g].dirty, "its group waits for the mix");
    assert_eq!(w.fresh.waiting(), [id.as_str().to_owned()]);
    mix_now(&mut w, &mut conn, &id).unwrap();
    let last = image_of(&conn, &w.keys, &id);
    assert!(!last.groups.groups[g].dirty);
    let place = crate::store::vocab::place::ballot(id.as_str(), &at);
    assert!(after.key_at(&at).unwrap().open(&place, &old_value).is_ok(), "the test can fail");
    let keys_now: Vec<_> = last.groups.groups.iter().filter_map(|g| g.data_key()).collect();
    assert!(keys_now.iter().all(|k| k.open(&place, &old_value).is_err()), "no key of the poll opens it");
    assert_eq!(assert_counts_match(&conn, &w.keys, &id), 3000);

    // 1,100 more: 4,100 ballots ask for 16 groups, and the poll is mixed whole.
    let receipts: Vec<Receipt> = (0..10).map(|_| Receipt::generate().unwrap()).collect();
    for _ in 0..2 {
        let batch: Vec<Job> = (0..545).map(|i| cast(&id, &[Some(i % 3), None], today)).collect();
        assert!(commit(&mut w, &mut conn, &batch).0.iter().all(Result::is_ok));
    }
    let batch: Vec<Job> = receipts.iter().map(|r| cast_with(&id, &[Some(0), None], (None, Some(r)))).collect();
    assert!(commit(&mut w, &mut conn, &batch).0.iter().all(Result::is_ok));
    let before = rows(&conn);
    mix_now(&mut w, &mut conn, &id).unwrap();
    let split = image_of(&conn, &w.keys, &id);
    assert_eq!((split.groups.bits, split.ballots.len()), (4, 4100));
    assert!(rows(&conn).keys().all(|k| !before.contains_key(k)), "every ballot moved");
    assert_eq!(assert_counts_match(&conn, &w.keys, &id), 4100);

    // Back below 4,096 (8 groups' worth), the poll keeps its 16 groups: a
    // poll whose size hovers at a bound is not rewritten whole each time.
    for r in &receipts[..6] {
        let withdraw = job(Op::Amend { id: id.clone(), receipt: r.hash(), ballot: None, today });
        assert!(commit(&mut w, &mut conn, &[withdraw]).0[0].is_ok());
    }
    let before = rows(&conn);
    mix_now(&mut w, &mut conn, &id).unwrap();
    let shrunk = image_of(&conn, &w.keys, &id);
    assert_eq!((shrunk.groups.bits, shrunk.ballots.len()), (4, 4094));
    let kept = rows(&conn).iter().filter(|(k, s)| before.get(*k) == Some(s)).count();
    assert!(kept > 4094 / 2, "only the withdrawals' groups were rewritten: {kept} rows kept");
    assert_eq!(assert_counts_match(&conn, &w.keys, &id), 4094);
}

/// A group whose rows are not those its digest counted (a row deleted or
/// put back) is not mixed: the mix fails and names the poll, and the
/// ballots staged meanwhile stay as they are.
#[test]
fn a_mix_refuses_a_group_whose_rows_were_tampered_with() {
    let Started { _dir, mut conn, today, id, mut w } = started();
    let batch: Vec<Job> = (0..40).map(|i| cast(&id, &[Some(i % 3), None], today)).collect();
    assert!(commit(&mut w, &mut conn, &batch).0.iter().all(Result::is_ok));
    mix_now(&mut w, &mut conn, &id).unwrap();
    let key: Vec<u8> = conn.query_row("SELECT id FROM sealed_ballots LIMIT 1", [], |r| r.get(0)).unwrap();
    conn.execute("DELETE FROM sealed_ballots WHERE id = ?1", [&key]).unwrap();
    assert!(commit(&mut w, &mut conn, &[cast(&id, &[Some(0), None], today)]).0[0].is_ok());
    assert!(mix_now(&mut w, &mut conn, &id).is_err(), "a group missing a row is not mixed");
    let staged: i64 =
        conn.query_row("SELECT count(*) FROM sealed_ballots WHERE id >= X'ff'", [], |r| r.get(0)).unwrap();
    assert_eq!(staged, 1, "the new ballot waits, staged");
}

/// One batch in which the cache starts over twice with poll `p` counted in
/// each part: `p` is written (flush), read back (uncommitted), written,
/// read back, written.
fn batch_that_reads_its_own_writes(p: &PollId, fillers: &[PollId], today: Day) -> Vec<Job> {
    let mut b = vec![cast(p, &[Some(0), None], today)];
    // p + 1,999 fillers fill the cache; the 2,000th filler starts it over
    // (p written at v+1), then p is read back.
    b.extend(fillers[..CACHE_POLLS].iter().map(|f| cast(f, &[Some(0), None], today)));
    b.push(cast(p, &[Some(1), None], today));
    // {filler 2000, p} + 1,998 more = 2,000; the next starts it over again
    // (p written at v+2), then p is read back at v+2 (not committed).
    b.extend(
        fillers[CACHE_POLLS..].iter().chain(&fillers[..CACHE_POLLS - 1]).map(|f| cast(f, &[Some(0), None], today)),
    );
    b.push(cast(p, &[Some(2), None], today));
    b
}

/// Poll `p` and enough others to make the writer's cache start over, and a
/// reader's own connection.
#[allow(clippy::type_complexity)]
fn many_polls() -> (DataDir, Connection, Arc<Keyring>, Arc<Seen>, Writer, PollId, Vec<PollId>, Connection) {
    let (dir, mut conn, keys) = setup();
    let today = Day::today();
    let seen = Arc::new(Seen::default());
    let mut w = Writer::new(keys.clone(), seen.clone());
    let p = PollId::generate().unwrap();
    let fillers: Vec<PollId> = (0..CACHE_POLLS + 1).map(|_| PollId::generate().unwrap()).collect();
    let creates: Vec<Job> = std::iter::once(&p).chain(&fillers).map(|id| create(id, today)).collect();
    for chunk in creates.chunks(500) {
        assert!(commit(&mut w, &mut conn, chunk).0.iter().all(Result::is_ok));
    }
    w.forget_polls();
    let path = dir.path().join("w.sqlite3");
    let reader = connect(&path, OpenFlags::SQLITE_OPEN_READ_ONLY, Duration::from_secs(5)).unwrap();
    (dir, conn, keys, seen, w, p, fillers, reader)
}

/// A reader's read of `p` (a committed snapshot), checked against the
/// process's `seen` as every reader's is.
fn reader_reads(reader: &Connection, keys: &Keyring, seen: &Seen, p: &PollId) -> Result<u64, Error> {
    // As a reader's `open_state` does: the instant before its snapshot.
    let began = std::time::Instant::now();
    let tx = reader.unchecked_transaction().unwrap();
    let version = image_of(&tx, keys, p).state.version;
    drop(tx);
    seen.check(p.as_str(), version, began).map(|()| version)
}

/// The writer reads, inside its transaction, counts it wrote there and has
/// not committed: noted as seen only once committed, so a reader of the
/// committed counts meanwhile is not refused as if they were put back
/// (every such read failed before: a vote's page or results answered 500).
#[test]
fn a_reader_of_committed_counts_is_not_refused_during_the_writers_batch() {
    let (_dir, mut conn, keys, seen, mut w, p, fillers, reader) = many_polls();
    let today = Day::today();
    reader_reads(&reader, &keys, &seen, &p).unwrap();
    let batch = batch_that_reads_its_own_writes(&p, &fillers, today);
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).unwrap();
    let (results, _) = w.apply_batch(&mut SqliteRows(&tx), &batch, &[]).ok().unwrap();
    assert!(results.iter().all(Result::is_ok));
    // The batch is applied, not committed: a reader that begins now reads v0.
    let during = reader_reads(&reader, &keys, &seen, &p);
    assert!(during.is_ok(), "a reader of committed counts was refused during the writer's batch: {during:?}");
    tx.commit().unwrap();
    w.committed();
    let after = reader_reads(&reader, &keys, &seen, &p).unwrap();
    assert!(after > during.unwrap(), "the batch's counts are read after its commit");
}

/// A batch rolled back after reading its own writes leaves nothing noted:
/// the poll's committed counts are read, voted on and mixed as before
/// (before, the poll was refused until the process restarted).
#[test]
fn a_rolled_back_batch_leaves_its_polls_readable() {
    let (_dir, mut conn, keys, seen, mut w, p, fillers, reader) = many_polls();
    let today = Day::today();
    let batch = batch_that_reads_its_own_writes(&p, &fillers, today);
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).unwrap();
    let (results, _) = w.apply_batch(&mut SqliteRows(&tx), &batch, &[]).ok().unwrap();
    assert!(results.iter().all(Result::is_ok));
    drop(tx); // rolled back, as on SQLITE_FULL or a failed commit
    w.rolled_back();
    let read = reader_reads(&reader, &keys, &seen, &p);
    let (vote, _) = commit(&mut w, &mut conn, &[cast(&p, &[Some(0), None], today)]);
    let mixed = mix_now(&mut w, &mut conn, &p);
    assert!(read.is_ok(), "a reader refused after a rolled-back batch: {read:?}");
    assert!(vote[0].is_ok(), "a vote refused after a rolled-back batch: {}", kind(&vote[0]));
    assert!(mixed.is_ok(), "the mix refused after a rolled-back batch: {mixed:?}");
}

/// A vote and a change of the questions' structure in one batch never both
/// pass: the writer counts the batch's votes before it applies the change,
/// and the change looks at the counts in its own savepoint, so a vote that
/// comes first refuses it (409, each field named); a change that comes
/// first makes the vote read against the old questions refused. A change
/// of texts only passes with votes, and keeps them and their counts.
#[test]
fn a_change_of_structure_and_a_vote_in_one_batch_never_both_pass() {
    let grown = json!({"questions": [
        {"label": "Q1", "options": ["a", "b", "c", "d"]}, {"label": "Q2", "options": ["x", "y"]}
    ]});
    // The vote first: the change is refused, nothing of it is kept.
    let mut s = started();
    let batch = [cast_read_at(&s.id, &[Some(0), None], 0, s.today), patch(&s.id, grown.clone(), s.today)];
    let (results, _) = commit(&mut s.w, &mut s.conn, &batch);
    assert_eq!(kind(&results[0]), "ok");
    match &results[1] {
        Err(Error::HasResponses(errors)) => {
            let at: Vec<String> = errors.iter().map(|e| format!("{}: {:?}", e.path, e.problem)).collect();
            assert_eq!(at, ["questions[0].options: FixedByResponses"]);
        }
        other => panic!("{:?}", other.as_ref().err()),
    }
    let doc = doc_of(&s.conn, &s.w.keys, &s.id);
    assert_eq!((doc.questions[0].options.len(), doc.restructured, doc.edited_on), (3, 0, None));
    assert_eq!(assert_counts_match(&s.conn, &s.w.keys, &s.id), 1);
    // Texts only: taken with the vote, which keeps its count.
    let texts = json!({"title": "Writer test, fixed", "questions": [
        {"label": "Q1 fixed", "options": ["A", "b", "c"]}, {"label": "Q2", "options": ["x", "y"]}
    ]});
    let (results, _) = commit(&mut s.w, &mut s.conn, &[patch(&s.id, texts, s.today)]);
    assert_eq!(kind(&results[0]), "ok");
    let doc = doc_of(&s.conn, &s.w.keys, &s.id);
    assert_eq!((doc.title.as_str(), doc.questions[0].options[0].as_str()), ("Writer test, fixed", "A"));
    assert_eq!((doc.restructured, doc.edited_on), (0, Some(s.today)));
    assert_eq!(tallies_of(&s.conn, &s.w.keys, &s.id).votes, [vec![1, 0, 0], vec![0, 0]]);

    // The change first: taken, the counts laid out anew, and the vote read
    // against the old questions refused; one read against the new ones counts.
    let mut s = started();
    let batch = [
        patch(&s.id, grown, s.today),
        cast_read_at(&s.id, &[Some(0), None], 0, s.today),
        cast_read_at(&s.id, &[Some(1), None], 1, s.today),
    ];
    let (results, _) = commit(&mut s.w, &mut s.conn, &batch);
    assert_eq!(kind(&results[0]), "ok");
    assert!(matches!(results[1], Err(Error::PollChanged)), "{:?}", results[1].as_ref().err());
    assert_eq!(kind(&results[2]), "ok");
    let doc = doc_of(&s.conn, &s.w.keys, &s.id);
    assert_eq!((doc.questions[0].options.len(), doc.restructured), (4, 1));
    assert_eq!(tallies_of(&s.conn, &s.w.keys, &s.id).votes, [vec![0, 1, 0, 0], vec![0, 0]]);
    assert_eq!(assert_counts_match(&s.conn, &s.w.keys, &s.id), 1);
}
