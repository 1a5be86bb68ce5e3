//! Tests of the writer's batch path: one batch mixing every kind of vote and
//! other writes, replayed through [`Writer::commit`] directly so that the
//! batch's make-up does not depend on timing; the poll cache against
//! changes made by another connection; staging and the mix.

use super::cache::CACHE_POLLS;
use super::mix::{MAX_FRESH, MIX_RETRY, Target, mixed_key};
use super::*;
use crate::domain::{Answer, NewPoll};
use crate::secret::AdminToken;
use crate::store::receipt_keys;
use crate::store::testkit::{assert_counts_match, ballots_of, doc_of, move_ballot, tallies_of};
use rusqlite::{OpenFlags, params};
use serde_json::json;
use std::collections::BTreeSet;
use std::time::Instant;

fn new_poll() -> NewPoll {
    NewPoll::from_json(&json!({
        "title": "Writer test", "lang": "en", "expiryDays": 7,
        "questions": [{"label": "Q1", "options": ["a", "b", "c"]}, {"label": "Q2", "options": ["x", "y"]}]
    }))
    .unwrap()
}

/// A migrated database with its key file, and the writer's own kind of
/// connection to it.
fn setup() -> (tempfile::TempDir, Connection, Arc<Keyring>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.sqlite3");
    super::super::migrate(&path, Duration::from_secs(5), super::super::SCHEMA_VERSION).unwrap();
    let conn = super::super::connect(&path, OpenFlags::SQLITE_OPEN_READ_WRITE, Duration::from_secs(5)).unwrap();
    let keys = super::super::open_keys(&conn, &super::super::Keys::beside(&path), Day::today()).unwrap();
    (dir, conn, Arc::new(keys))
}

/// A new database with one new poll, the writer's connection to it and
/// the writer: where most tests here start.
struct Started {
    _dir: tempfile::TempDir,
    conn: Connection,
    today: Day,
    id: PollId,
    w: Writer,
}

fn started() -> Started {
    let (_dir, mut conn, keys) = setup();
    let today = Day::today();
    let id = PollId::generate().unwrap();
    let mut w = Writer::new(keys);
    let (results, _) = w.commit(&mut conn, &[create(&id, today)]);
    assert!(results[0].is_ok());
    Started { _dir, conn, today, id, w }
}

/// A job nobody waits for, for the inbox's tests.
pub(super) fn job_for_inbox() -> Job {
    job(Op::Delete { id: PollId::generate().unwrap() })
}

fn job(op: Op) -> Job {
    // Nobody waits: `commit` returns the results and the test reads them.
    let (reply, _) = sync_channel(1);
    Job { op, reply: Reply::Wait(reply), then: None }
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

fn cast(id: &PollId, choices: &[Option<usize>], today: Day) -> Job {
    // Ballots are checked against the questions before they are queued
    // (`Ballot::new`, tested in `domain`); the writer only sees valid ones.
    let ballot = Ballot::of_choices(&new_poll().questions, choices).unwrap();
    job(Op::Cast { id: id.clone(), ballot, invite: None, receipt: None, form: None, today })
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
        Err(_) => "other error",
    }
}

#[test]
fn counters_stay_exact_when_a_batch_mixes_valid_refused_and_other_writes() {
    let (_dir, mut conn, keys) = setup();
    let today = Day::today();
    let later = today.plus_days(30); // past every poll's expiry
    let [open, closed, doomed, unknown] = [(); 4].map(|()| PollId::generate().unwrap());
    let mut w = Writer::new(keys.clone());
    let setup = [create(&open, today), create(&closed, today), create(&doomed, today)];
    let (results, _) = w.commit(&mut conn, &setup);
    assert!(results.iter().all(Result::is_ok));
    let (results, _) = w.commit(&mut conn, &[patch(&closed, json!({"closed": true}), today)]);
    assert!(results.iter().all(Result::is_ok));
    // A vote first, so that the cache knows `open` before the batch.
    let (results, _) = w.commit(&mut conn, &[cast(&open, &[Some(0), None], today)]);
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
    let (results, erased) = w.commit(&mut conn, &batch);
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
    let (_dir, mut conn, keys) = setup();
    let today = Day::today();
    let id = PollId::generate().unwrap();
    let mut w = Writer::new(keys.clone());
    let (results, _) = w.commit(&mut conn, &[create(&id, today)]);
    assert!(results[0].is_ok());
    // Counts of this poll can no longer be written (the votes themselves can).
    conn.execute_batch(
        "CREATE TRIGGER no_counting BEFORE UPDATE OF tallies ON sealed_polls BEGIN SELECT RAISE(ABORT, 'refused'); END;",
    )
    .unwrap();
    let batch = [cast(&id, &[Some(0), None], today), cast(&id, &[Some(1), Some(1)], today)];
    let (results, _) = w.commit(&mut conn, &batch);
    assert!(results.iter().all(Result::is_err), "no vote is acknowledged without its counts");
    let rows: i64 = conn.query_row("SELECT count(*) FROM sealed_ballots", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, 0, "the batch's votes were rolled back");
    conn.execute_batch("DROP TRIGGER no_counting").unwrap();
    let (results, _) = w.commit(&mut conn, &batch);
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(assert_counts_match(&conn, &keys, &id), 2, "the failed batch left nothing counted in memory");
}

#[test]
fn the_poll_cache_notices_changes_made_by_another_connection() {
    let (dir, mut conn, keys) = setup();
    let today = Day::today();
    let id = PollId::generate().unwrap();
    let mut w = Writer::new(keys.clone());
    let (results, _) = w.commit(&mut conn, &[create(&id, today)]);
    assert!(results[0].is_ok());
    let (results, _) = w.commit(&mut conn, &[cast(&id, &[Some(0), None], today)]);
    assert_eq!(kind(&results[0]), "ok");
    assert_eq!(w.polls.len(), 1, "the vote filled the cache");
    // Another process (pollctl) closes the poll: a writer of its own.
    let mut other = Connection::open(dir.path().join("w.sqlite3")).unwrap();
    let mut pollctl = Writer::new(keys.clone());
    let (r, _) = pollctl.commit(&mut other, &[patch(&id, json!({"closed": true}), today)]);
    assert!(r[0].is_ok());
    let (results, _) = w.commit(&mut conn, &[cast(&id, &[Some(1), None], today)]);
    assert_eq!(kind(&results[0]), "closed");
    // ...then shortens its life to end today.
    let (r, _) = pollctl.commit(&mut other, &[patch(&id, json!({"closed": false}), today)]);
    assert!(r[0].is_ok());
    other.execute("UPDATE sealed_polls SET expires_on = ?2 WHERE id = ?1", [id.as_str(), &today.to_string()]).unwrap();
    let (results, _) = w.commit(&mut conn, &[cast(&id, &[Some(1), None], today)]);
    assert_eq!(kind(&results[0]), "not found");
    other.execute("DELETE FROM sealed_polls WHERE id = ?1", [id.as_str()]).unwrap();
    let (results, _) = w.commit(&mut conn, &[cast(&id, &[Some(1), None], today.previous())]);
    assert_eq!(kind(&results[0]), "not found");
}

#[test]
fn the_poll_cache_stays_bounded_and_loses_no_count() {
    let (_dir, mut conn, keys) = setup();
    let today = Day::today();
    let mut w = Writer::new(keys.clone());
    let ids: Vec<PollId> = (0..CACHE_POLLS + 3).map(|_| PollId::generate().unwrap()).collect();
    let creates: Vec<Job> = ids.iter().map(|id| create(id, today)).collect();
    for chunk in creates.chunks(500) {
        assert!(w.commit(&mut conn, chunk).0.iter().all(Result::is_ok));
    }
    // One batch voting in more polls than the cache holds: it starts over
    // within the batch, after writing what it counted.
    let votes: Vec<Job> = ids.iter().map(|id| cast(id, &[Some(0), None], today)).collect();
    assert!(w.commit(&mut conn, &votes).0.iter().all(Result::is_ok));
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
    let (r, _) = w.commit(&mut conn, &[set]);
    assert!(r[0].is_ok());
    // The day before: counted; on the day and after: refused, by the
    // writer itself (the cache remembers the poll from the first vote).
    let batch = [
        cast(&id, &[Some(0), None], today.plus_days(1)),
        cast(&id, &[Some(0), None], closes),
        cast(&id, &[Some(1), None], closes.plus_days(1)),
    ];
    let (r, _) = w.commit(&mut conn, &batch);
    assert_eq!(r.iter().map(kind).collect::<Vec<_>>(), ["ok", "closed", "closed"]);
    // Reopened on its closing day: the day is removed and votes count again.
    let (r, _) = w.commit(&mut conn, &[patch(&id, json!({"closed": false}), closes)]);
    assert!(r[0].is_ok());
    assert_eq!(doc_of(&conn, &w.keys, &id).closes_on, None);
    let (r, _) = w.commit(&mut conn, &[cast(&id, &[Some(1), None], closes)]);
    assert_eq!(kind(&r[0]), "ok");
    assert_eq!(assert_counts_match(&conn, &w.keys, &id), 2);
}

/// New ballots wait on their poll's last page with a staged key; the mix
/// gives each a random key (never a staged one), seals it again for its new
/// place and keeps every ballot; a writer that starts finds ballots a
/// previous run left staged.
#[test]
fn ballots_are_staged_until_the_mix_moves_them_to_random_keys() {
    let Started { _dir, mut conn, today, id, mut w } = started();
    let batch: Vec<Job> = (0..40).map(|i| cast(&id, &[Some(i % 3), Some(i % 2)], today)).collect();
    let (results, _) = w.commit(&mut conn, &batch);
    assert!(results.iter().all(|r| r.is_ok()));
    let stored = |conn: &Connection, w: &Writer| -> (Vec<Vec<u8>>, Vec<String>) {
        let rows = ballots_of(conn, &w.keys, &id);
        let mut choices: Vec<String> = rows.iter().map(|(_, _, b)| b.to_stored()).collect();
        choices.sort();
        (rows.into_iter().map(|(k, _, _)| k).collect(), choices)
    };
    let (keys, before) = stored(&conn, &w);
    assert_eq!(before.len(), 40);
    assert!(keys.iter().all(|k| k[0] == STAGED), "new ballots are staged");
    assert_eq!(w.fresh.count, 40);

    // A writer that starts now (as after a crash) finds them all, and one
    // that knows them adds none twice.
    let mut left = Fresh::default();
    left.find_left_staged(&conn);
    assert_eq!(left.count, 40);
    w.fresh.find_left_staged(&conn);
    assert_eq!(w.fresh.count, 40);

    w.mix(&mut conn);
    assert_eq!(w.fresh.count, 0, "the mix succeeded");
    let (after, choices) = stored(&conn, &w);
    assert_eq!(after.len(), 40);
    assert!(after.iter().all(|k| k[0] != STAGED), "every ballot has left the staging keys");
    assert_eq!(choices, before, "every ballot is kept as it was, and opens at its new place");
    let mut none = Fresh::default();
    none.find_left_staged(&conn);
    assert_eq!(none.count, 0);
    assert_eq!(assert_counts_match(&conn, &w.keys, &id), 40);
}

/// Ballots a crashed run left staged go where a receipt still finds them
/// (the fallback key, keyed under the poll's key).
#[test]
fn ballots_left_staged_settle_where_their_receipt_finds_them() {
    let Started { _dir, mut conn, today, id, mut w } = started();
    let receipt = crate::secret::Receipt::generate().unwrap();
    let ballot = Ballot::of_choices(&new_poll().questions, &[Some(2), Some(1)]).unwrap();
    let (r, _) = w.commit(
        &mut conn,
        &[job(Op::Cast {
            id: id.clone(),
            ballot: ballot.clone(),
            invite: None,
            receipt: Some(receipt.hash()),
            form: None,
            today,
        })],
    );
    assert!(r[0].is_ok());
    // The writer dies before its mix; the next one finds the ballot.
    let mut next = Writer::new(w.keys.clone());
    next.fresh.find_left_staged(&conn);
    assert_eq!(next.fresh.keys[id.as_str()][0].1, Target::Fallback);
    next.mix(&mut conn);
    let k = receipt_keys(&crate::store::testkit::key_of(&conn, &w.keys, &id), &receipt.hash());
    let rows = ballots_of(&conn, &w.keys, &id);
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].0.as_slice(), &rows[0].2), (&k.fallback[..], &ballot));
}

/// In a poll larger than the rows around a new ballot, the mix rewrites
/// only those (the neighbourhood path): every ballot is kept once, none is
/// left staged, and a staged key another connection already moved is
/// skipped without harm.
#[test]
fn the_mix_of_a_few_new_ballots_in_a_large_poll_keeps_every_ballot() {
    let Started { _dir, mut conn, today, id, mut w } = started();
    let batch: Vec<Job> = (0..500).map(|i| cast(&id, &[Some(i % 3), Some(i % 2)], today)).collect();
    let (results, _) = w.commit(&mut conn, &batch);
    assert!(results.iter().all(|r| r.is_ok()));
    w.mix(&mut conn);
    assert_eq!(w.fresh.count, 0);
    // Two new ballots, 2 × 201 rows around them: fewer than the poll's 502.
    let (results, _) = w.commit(&mut conn, &[cast(&id, &[Some(2), Some(1)], today)]);
    assert!(results[0].is_ok());
    let (results, _) = w.commit(&mut conn, &[cast(&id, &[Some(1), None], today)]);
    assert!(results[0].is_ok());
    let moved = w.fresh.keys[id.as_str()][1].0;
    move_ballot(&conn, &w.keys, &id, &moved, &mixed_key().unwrap());
    let keys = w.keys.clone();
    let stored = |conn: &Connection| -> Vec<String> {
        let mut v: Vec<String> = ballots_of(conn, &keys, &id).iter().map(|(_, _, b)| b.to_stored()).collect();
        v.sort();
        v
    };
    let before = stored(&conn);
    assert_eq!(before.len(), 502);
    w.mix(&mut conn);
    assert_eq!(w.fresh.count, 0, "the mix succeeded");
    assert_eq!(stored(&conn), before, "every ballot once, as it was");
    let staged: i64 = conn
        .query_row("SELECT count(*) FROM sealed_ballots WHERE id >= ?1", params![&[STAGED][..]], |r| r.get(0))
        .unwrap();
    assert_eq!(staged, 0);
}

/// The mix in chunks (7 rows here, [`MIX_CHUNK`] in polld), over a whole
/// poll and then around a few new ballots, so that chunks end on settled
/// rows, on staged ones and on spans: every ballot is kept once and
/// counted, and none is left staged. (That the files keep no cast order,
/// with polld's chunks, is tested in tests/privacy.rs.)
#[test]
fn the_mix_in_small_chunks_keeps_every_ballot() {
    const N: usize = 500;
    let (_dir, mut conn, keys) = setup();
    let today = Day::today();
    let id = PollId::generate().unwrap();
    let digits = |i: usize| [i / 100 % 10, i / 10 % 10, i % 10];
    let question = json!({"label": "q", "options": (0..10).map(|o| o.to_string()).collect::<Vec<_>>()});
    let poll = NewPoll::from_json(&json!({
        "title": "Chunks", "lang": "en", "expiryDays": 7, "questions": [question, question, question]
    }))
    .unwrap();
    let vote = |i: usize| {
        let ballot = Ballot::of_choices(&poll.questions, &digits(i).map(Some)).unwrap();
        job(Op::Cast { id: id.clone(), ballot, invite: None, receipt: None, form: None, today })
    };
    let mut w = Writer::new(keys.clone());
    let create = job(Op::Create {
        id: id.clone(),
        token: AdminToken::generate().unwrap().hash(),
        poll: poll.clone(),
        media: Vec::new(),
        today,
    });
    let (results, _) = w.commit(&mut conn, &[create]);
    assert!(results[0].is_ok());
    for batch in (0..N).collect::<Vec<_>>().chunks(10) {
        let jobs: Vec<Job> = batch.iter().map(|&i| vote(i)).collect();
        let (results, _) = w.commit(&mut conn, &jobs);
        assert!(results.iter().all(|r| r.is_ok()));
    }
    w.mix_in_chunks(&mut conn, 7);
    assert_eq!(w.fresh.count, 0, "the whole-poll mix succeeded");
    // Two more: 2 × 201 rows around them, fewer than the poll's, in chunks.
    for i in [N, N + 1] {
        let (results, _) = w.commit(&mut conn, &[vote(i)]);
        assert!(results[0].is_ok());
    }
    w.mix_in_chunks(&mut conn, 7);
    assert_eq!(w.fresh.count, 0, "the neighbourhood mix succeeded");

    let mut stored: Vec<String> = ballots_of(&conn, &keys, &id).iter().map(|(_, _, b)| b.to_stored()).collect();
    stored.sort();
    let mut expected: Vec<String> = (0..N + 2).map(|i| format!("{:?}", digits(i)).replace(' ', "")).collect();
    expected.sort();
    assert_eq!(stored, expected, "every ballot once, as it was");
    assert_eq!(assert_counts_match(&conn, &keys, &id), N + 2);
    let staged: i64 = conn
        .query_row("SELECT count(*) FROM sealed_ballots WHERE id >= ?1", params![&[STAGED][..]], |r| r.get(0))
        .unwrap();
    assert_eq!(staged, 0);
}

/// Issue 24, item 4: the mix goes a chunk per transaction, and the writer
/// commits other work between its steps. Votes on the poll being mixed and
/// on another, and the erasure of a third poll that was waiting to be
/// mixed, all land between steps: every ballot is kept once and counted,
/// the mix places every ballot it began with and leaves those cast
/// meanwhile staged for the next one, which places them too.
#[test]
fn the_mix_goes_step_by_step_and_other_writes_go_between_its_steps() {
    let Started { _dir, mut conn, today, id, mut w } = started();
    let other = PollId::generate().unwrap();
    let erased = PollId::generate().unwrap();
    for p in [&other, &erased] {
        let (r, _) = w.commit(&mut conn, &[create(p, today)]);
        assert!(r[0].is_ok());
    }
    let votes =
        |p: &PollId, n: usize| -> Vec<Job> { (0..n).map(|i| cast(p, &[Some(i % 3), Some(i % 2)], today)).collect() };
    for p in [&id, &other, &erased] {
        let (r, _) = w.commit(&mut conn, &votes(p, 60));
        assert!(r.iter().all(|r| r.is_ok()));
    }
    assert_eq!(w.fresh.count, 180);
    w.start_mix(7);
    assert_eq!(w.fresh.count, 0, "the mix took every staged ballot");
    let mut steps = 0;
    let mut during = 0;
    while !w.mix_step(&mut conn) {
        steps += 1;
        if steps % 5 == 0 {
            let (r, _) =
                w.commit(&mut conn, &[cast(&id, &[Some(0), None], today), cast(&other, &[Some(1), None], today)]);
            assert!(r.iter().all(|r| r.is_ok()));
            during += 1;
        }
        if steps == 3 {
            let (r, _) = w.commit(&mut conn, &[job(Op::Delete { id: erased.clone() })]);
            assert!(r[0].is_ok());
        }
    }
    assert!(steps > 10, "a chunk per step: {steps} steps");
    assert!(during > 0);
    assert_eq!(w.fresh.count, 2 * during, "the ballots cast meanwhile wait for the next mix");
    let staged = |conn: &Connection| -> i64 {
        conn.query_row("SELECT count(*) FROM sealed_ballots WHERE id >= ?1", params![&[STAGED][..]], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(staged(&conn), 2 * during as i64, "only those are still staged");
    assert_eq!(assert_counts_match(&conn, &w.keys, &id), 60 + during);
    assert_eq!(assert_counts_match(&conn, &w.keys, &other), 60 + during);
    let left: i64 = conn
        .query_row("SELECT count(*) FROM sealed_ballots WHERE poll_id = ?1", [erased.as_str()], |r| r.get(0))
        .unwrap();
    assert_eq!(left, 0, "the mix wrote nothing back for an erased poll");
    w.mix(&mut conn);
    assert_eq!(staged(&conn), 0);
    assert_eq!(assert_counts_match(&conn, &w.keys, &id), 60 + during);
}

/// Issue 24, item 4: a batch's answers go out as soon as it is committed.
/// Under load the writer takes a step of the mix after every batch; when
/// that step came between the commit and the answers, every vote waited for
/// one. Here a mix is under way when a vote's batch commits: at the moment
/// its answer goes out (its settle hook, which runs just before), no step
/// has run yet, and right after, one has.
#[test]
fn a_batch_is_answered_before_the_mix_step_that_follows_it() {
    let Started { _dir, mut conn, today, id, mut w } = started();
    let votes: Vec<Job> = (0..60).map(|i| cast(&id, &[Some(i % 3), None], today)).collect();
    assert!(w.commit(&mut conn, &votes).0.iter().all(|r| r.is_ok()));
    w.start_mix(7);
    let staged = |conn: &Connection| -> i64 {
        conn.query_row("SELECT count(*) FROM sealed_ballots WHERE id >= ?1", params![&[STAGED][..]], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(staged(&conn), 60);
    let reader =
        super::super::connect(&_dir.path().join("w.sqlite3"), OpenFlags::SQLITE_OPEN_READ_ONLY, Duration::from_secs(5))
            .unwrap();
    let (seen_tx, seen) = std::sync::mpsc::channel();
    let mut vote = cast(&id, &[Some(1), None], today);
    vote.then = Some(crate::store::Settle::new(move |stored| {
        seen_tx.send((stored, staged(&reader))).unwrap();
    }));
    let batch = vec![vote];
    let (results, erased) = w.commit(&mut conn, &batch);
    let mut chores =
        Chores { busy: Duration::from_secs(5), checkpoint_owed: false, last_try: Instant::now(), look_for_left: false };
    w.after_commit(&mut conn, &mut chores, batch, results, erased);
    let (stored, at_answer) = seen.recv().unwrap();
    assert!(stored);
    assert_eq!(at_answer, 61, "the vote was answered before any step of the mix");
    let after = staged(&conn);
    assert!(after < 61, "a step of the mix followed the answer: {after} rows still staged");
    assert!(w.mixing(), "one step, not the whole mix");
}

/// Issue 24, item 4: a step of the mix rewrites about [`super::mix::MIX_STEP_BYTES`]
/// of a poll's ballots, not a fixed number of rows: 250 ballots of 20
/// rankings of 12 (the audit's heavy poll) took 8 ms a step under load,
/// which every other poll's votes waited behind. Here 300 of them are
/// mixed in many small steps, and a small poll's ballots still in steps of
/// the whole chunk ([`super::mix::MIX_CHUNK`] rows).
#[test]
fn a_heavy_polls_mix_steps_are_bounded_by_bytes_not_rows() {
    let Started { _dir, mut conn, today, id: small, mut w } = started();
    let heavy_poll = NewPoll::from_json(&json!({
        "title": "Heavy", "lang": "en", "expiryDays": 7, "duplicateCheck": "none",
        "questions": (0..20).map(|q| json!({"type": "ranked", "label": format!("Rank {q}"),
            "options": (0..12).map(|o| format!("Option {o}")).collect::<Vec<_>>()})).collect::<Vec<_>>()
    }))
    .unwrap();
    let heavy = PollId::generate().unwrap();
    let questions = heavy_poll.questions.clone();
    let (r, _) = w.commit(
        &mut conn,
        &[job(Op::Create {
            id: heavy.clone(),
            token: AdminToken::generate().unwrap().hash(),
            poll: heavy_poll,
            media: Vec::new(),
            today,
        })],
    );
    assert!(r[0].is_ok());
    let ranked = |i: usize| -> Ballot {
        let answers = (0..20)
            .map(|q| Some(Answer::Ranks((0..12).map(|o| Some(((o + i + q) % 12 + 1) as u8)).collect())))
            .collect();
        Ballot::new(&questions, answers).unwrap()
    };
    let votes: Vec<Job> = (0..300)
        .map(|i| job(Op::Cast { id: heavy.clone(), ballot: ranked(i), invite: None, receipt: None, form: None, today }))
        .collect();
    assert!(w.commit(&mut conn, &votes).0.iter().all(Result::is_ok));
    let size: f64 = conn
        .query_row("SELECT avg(length(sealed)) FROM sealed_ballots WHERE poll_id = ?1", [heavy.as_str()], |r| r.get(0))
        .unwrap();
    let mut steps = 0;
    w.start_mix(super::mix::MIX_CHUNK);
    while !w.mix_step(&mut conn) {
        steps += 1;
    }
    let bytes = 300.0 * size;
    assert!(size > 1000.0, "heavy ballots: {size} bytes each");
    // MIX_STEP_BYTES a step, or up to a ballot more (the last step returns
    // true and is not counted above).
    let budget = super::mix::MIX_STEP_BYTES as f64;
    assert!(
        (steps + 1) as f64 >= bytes / (budget + size),
        "{steps} steps for {bytes} bytes of ballots: a step rewrites {budget} bytes of them or so"
    );
    assert_eq!(assert_counts_match(&conn, &w.keys, &heavy), 300);
    // The small poll's 300 ballots: steps of MIX_CHUNK rows (and one more
    // where a step ends the poll).
    let votes: Vec<Job> = (0..300).map(|i| cast(&small, &[Some(i % 3), Some(i % 2)], today)).collect();
    assert!(w.commit(&mut conn, &votes).0.iter().all(Result::is_ok));
    let mut small_steps = 0;
    w.start_mix(super::mix::MIX_CHUNK);
    while !w.mix_step(&mut conn) {
        small_steps += 1;
    }
    let most = 300usize.div_ceil(super::mix::MIX_CHUNK) + 1;
    assert!(small_steps <= most, "small ballots go {} rows a step: {small_steps} steps", super::mix::MIX_CHUNK);
    assert_eq!(assert_counts_match(&conn, &w.keys, &small), 300);
}

/// Under steady load the writer is never idle; a mix is overdue once the
/// oldest new ballot has waited [`MIX_EVERY`] (or too many wait), not
/// before, and not while a failed mix's pause lasts.
#[test]
fn a_mix_is_overdue_after_mix_every_under_steady_load() {
    let mut fresh = Fresh::default();
    let now = Instant::now();
    assert!(!fresh.overdue_at(now + MIX_EVERY), "nothing to mix");
    let poll = PollId::generate().unwrap();
    fresh.add(&poll, [STAGED; 16], None);
    assert_eq!(fresh.keys[poll.as_str()][0].1, Target::Random);
    let since = fresh.since.unwrap();
    assert!(!fresh.overdue_at(since), "the first ballot has just come");
    assert!(!fresh.overdue_at(since + MIX_EVERY / 2));
    assert!(fresh.overdue_at(since + MIX_EVERY));
    fresh.not_before = Some(since + MIX_EVERY + MIX_RETRY);
    assert!(!fresh.overdue_at(since + MIX_EVERY), "a failed mix waits for its pause");
    assert!(fresh.overdue_at(since + MIX_EVERY + MIX_RETRY));
    fresh.not_before = None;
    fresh.count = MAX_FRESH;
    assert!(fresh.overdue_at(since), "too many wait");
}

/// Every row the mix deletes and writes back, in order, as temporary
/// triggers log them (`d` or `i`, and the key).
fn log_rewrites(conn: &Connection) {
    conn.execute_batch(
        "CREATE TEMP TABLE rewrites (n INTEGER PRIMARY KEY, op TEXT NOT NULL, id BLOB NOT NULL);
         CREATE TEMP TRIGGER rewrites_d AFTER DELETE ON main.sealed_ballots
           BEGIN INSERT INTO rewrites (op, id) VALUES ('d', old.id); END;
         CREATE TEMP TRIGGER rewrites_i AFTER INSERT ON main.sealed_ballots
           BEGIN INSERT INTO rewrites (op, id) VALUES ('i', new.id); END;",
    )
    .unwrap();
}

fn logged(conn: &Connection, op: &str) -> Vec<Vec<u8>> {
    let mut stmt = conn.prepare("SELECT id FROM rewrites WHERE op = ?1 ORDER BY n").unwrap();
    stmt.query_map([op], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

/// What the chunks add up to, exactly: around a few new ballots, the 100
/// settled rows on each side of each new key and the staged rows, each
/// deleted once, and everything written back in key order; with more new
/// ballots than old in every chunk (chunks that end on both limits), the
/// whole poll, likewise.
#[test]
fn the_mix_rewrites_exactly_the_rows_around_new_ballots_once_in_key_order() {
    let Started { _dir, mut conn, today, id, mut w } = started();
    let keys = |conn: &Connection| -> Vec<Vec<u8>> {
        let mut stmt = conn.prepare("SELECT id FROM sealed_ballots ORDER BY id").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    // Casts `n` ballots and mixes them in chunks of 7: the settled keys
    // before, the staged ones, and the rows the mix deleted and wrote.
    let round = |conn: &mut Connection, w: &mut Writer, n: usize| {
        let settled = keys(conn);
        for batch in (0..n).collect::<Vec<_>>().chunks(100) {
            let jobs: Vec<Job> = batch.iter().map(|i| cast(&id, &[Some(i % 3), Some(i % 2)], today)).collect();
            let (results, _) = w.commit(conn, &jobs);
            assert!(results.iter().all(|r| r.is_ok()));
        }
        let staged: BTreeSet<Vec<u8>> = w.fresh.keys[id.as_str()].iter().map(|(k, _)| k.to_vec()).collect();
        conn.execute("DELETE FROM rewrites", []).unwrap();
        w.mix_in_chunks(conn, 7);
        assert_eq!(w.fresh.count, 0, "the mix succeeded");
        (settled, staged, logged(conn, "d"), logged(conn, "i"))
    };
    let in_key_order = |written: &[Vec<u8>]| written.windows(2).all(|w| w[0] < w[1]);
    let deleted_once = |deleted: &[Vec<u8>], expected: &BTreeSet<Vec<u8>>| {
        let once: BTreeSet<Vec<u8>> = deleted.iter().cloned().collect();
        assert!(
            deleted.len() == expected.len() && &once == expected,
            "{} rows deleted ({} distinct), {} expected: {} of those not deleted, {} others deleted",
            deleted.len(),
            once.len(),
            expected.len(),
            expected.difference(&once).count(),
            once.difference(expected).count()
        );
    };
    log_rewrites(&conn);
    round(&mut conn, &mut w, 1500);

    // Three new ballots in 1,500: their neighbourhoods only.
    let (settled, staged, deleted, written) = round(&mut conn, &mut w, 3);
    let new: Vec<&Vec<u8>> = written.iter().filter(|k| settled.binary_search(k).is_err()).collect();
    assert_eq!(new.len(), 3, "each new ballot written once");
    let mut expected = staged;
    for key in &new {
        let at = settled.partition_point(|k| k < *key);
        expected.extend(settled[at.saturating_sub(100)..(at + 100).min(settled.len())].iter().cloned());
    }
    deleted_once(&deleted, &expected);
    assert!(expected.len() < 3 + 600 + 1, "{} rows: the neighbourhoods, not the poll", expected.len());
    assert_eq!(written.len(), deleted.len());
    assert!(in_key_order(&written), "written back in key order, across chunks and spans");

    // 2,000 new ballots in 1,503: the whole poll, new ones in every chunk.
    let (settled, staged, deleted, written) = round(&mut conn, &mut w, 2000);
    let expected: BTreeSet<Vec<u8>> = settled.iter().cloned().chain(staged).collect();
    deleted_once(&deleted, &expected);
    assert!(in_key_order(&written));
    assert!(written == keys(&conn), "every ballot written back once, none left staged");
    assert_eq!(written.len(), 3503);
}

/// A ballot's settled or fallback key is keyed-hash output all through:
/// without the receipt (or the staged key) and the poll's key no byte of it
/// can be checked against the others, so the file does not tell which
/// ballots came with a receipt. The check below is the one an earlier draft
/// let anyone make (the first byte drawn from the other 15): it holds for 1
/// key in 256 by chance, and held for all of them.
#[test]
fn receipt_keys_cannot_be_told_from_random_ones() {
    use sha2::{Digest, Sha256};
    let first_from_rest = |key: &[u8; 16]| {
        (0..=u8::MAX)
            .map(|round| Sha256::new().chain_update(&key[1..]).chain_update([round]).finalize()[0])
            .find(|&b| b != STAGED)
            == Some(key[0])
    };
    let poll_key = crate::store::seal::DataKey::generate().unwrap();
    let other_key = crate::store::seal::DataKey::generate().unwrap();
    let receipts: Vec<crate::secret::Receipt> = (0..512).map(|_| crate::secret::Receipt::generate().unwrap()).collect();
    let keys: Vec<crate::store::ReceiptKeys> = receipts.iter().map(|r| receipt_keys(&poll_key, &r.hash())).collect();
    let settled: fn(&crate::store::ReceiptKeys) -> [u8; 16] = |k| k.settled;
    let fallback: fn(&crate::store::ReceiptKeys) -> [u8; 16] = |k| k.fallback;
    for (name, pick) in [("settled", settled), ("fallback", fallback)] {
        let told = keys.iter().filter(|k| first_from_rest(&pick(k))).count();
        assert!(told < 12, "{told} of 512 {name} keys give themselves away");
        assert!(keys.iter().all(|k| pick(k)[0] != STAGED), "{name} keys are never staged ones");
        // Nothing of the staged key stays in the key a ballot settles at.
        assert!(keys.iter().all(|k| pick(k)[1..] != k.staged[1..]), "{name} keys keep the staged key's bytes");
    }
    // Keyed under the poll: the same receipt gives other keys in another
    // poll, and none of the receipt's hash shows in them.
    for (r, k) in receipts.iter().zip(&keys) {
        let there = receipt_keys(&other_key, &r.hash());
        assert!(there.staged != k.staged && there.settled != k.settled);
        assert!(!k.staged.windows(8).any(|w| r.hash().0.windows(8).any(|v| v == w)));
    }
}

/// After a mix the WAL index in the `-shm` file lists no page the votes
/// touched: only the one small write that started a new generation.
#[test]
fn after_a_mix_the_wal_index_lists_no_frame_of_the_votes() {
    let Started { _dir, mut conn, today, id, mut w } = started();
    for _ in 0..30 {
        let jobs: Vec<Job> = (0..3).map(|i| cast(&id, &[Some(i % 3), None], today)).collect();
        assert!(w.commit(&mut conn, &jobs).0.iter().all(Result::is_ok));
    }
    let shm = format!("{}-shm", conn.path().unwrap());
    let listed = |shm: &[u8]| -> Vec<u32> {
        // Page numbers of frames: the first block after its 136-byte
        // header, 4,062 of them; other blocks from their start, 4,096.
        let mut pages = Vec::new();
        for (block, at) in (0..shm.len()).step_by(32 * 1024).enumerate() {
            let (start, n) = if block == 0 { (at + 136, 4062) } else { (at, 4096) };
            for i in 0..n {
                let p = start + 4 * i;
                if p + 4 <= shm.len() {
                    let v = u32::from_le_bytes([shm[p], shm[p + 1], shm[p + 2], shm[p + 3]]);
                    if v != 0 {
                        pages.push(v);
                    }
                }
            }
        }
        pages
    };
    assert!(listed(&std::fs::read(&shm).unwrap()).len() >= 30, "the set-up leaves the votes' frames listed");
    w.mix(&mut conn);
    assert!(settle(&conn, Duration::from_secs(5)));
    let after = listed(&std::fs::read(&shm).unwrap());
    assert!(after.len() <= 1, "the index still lists {} frames: {after:?}", after.len());
    // A generation of more than one block (4,062 frames): the blocks
    // beyond the first are cleared too.
    conn.execute_batch("PRAGMA synchronous = OFF; PRAGMA wal_autocheckpoint = 0").unwrap();
    for _ in 0..2500 {
        assert!(w.commit(&mut conn, &[cast(&id, &[Some(1), None], today)]).0.iter().all(Result::is_ok));
    }
    let many = std::fs::read(&shm).unwrap();
    assert!(many.len() > 32 * 1024 && listed(&many).len() > 4062, "the set-up fills a second block");
    w.mix(&mut conn);
    assert!(settle(&conn, Duration::from_secs(5)));
    let after = listed(&std::fs::read(&shm).unwrap());
    assert!(after.len() <= 1, "the index still lists {} frames", after.len());
}
