//! Tests of the writer's batch path: one batch mixing every kind of vote and
//! other writes, replayed through [`commit`] directly so that the batch's
//! make-up does not depend on timing; and the poll cache against changes
//! made by another connection.

use super::*;
use crate::domain::NewPoll;
use crate::secret::AdminToken;
use rusqlite::OpenFlags;
use serde_json::json;

fn new_poll() -> NewPoll {
    NewPoll::from_json(&json!({
        "title": "Writer test", "lang": "en", "expiryDays": 7,
        "questions": [{"label": "Q1", "options": ["a", "b", "c"]}, {"label": "Q2", "options": ["x", "y"]}]
    }))
    .unwrap()
}

/// A migrated database and the writer's own kind of connection to it.
fn setup() -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.sqlite3");
    super::super::migrate(&path, Duration::from_secs(5)).unwrap();
    let conn = super::super::connect(&path, OpenFlags::SQLITE_OPEN_READ_WRITE, Duration::from_secs(5)).unwrap();
    (dir, conn)
}

/// A new database with one new poll, the writer's connection to it and
/// the writer's state: where most tests here start.
struct Started {
    _dir: tempfile::TempDir,
    conn: Connection,
    today: Day,
    id: PollId,
    polls: PollCache,
    fresh: Fresh,
}

fn started() -> Started {
    let (_dir, mut conn) = setup();
    let today = Day::today();
    let id = PollId::generate().unwrap();
    let (mut polls, mut fresh) = (PollCache::default(), Fresh::default());
    let (results, _) = commit(&mut conn, &[create(&id, today)], &mut polls, &mut fresh);
    assert!(results[0].is_ok());
    Started { _dir, conn, today, id, polls, fresh }
}

fn job(op: Op) -> Job {
    // Nobody waits: `commit` returns the results and the test reads them.
    let (reply, _) = sync_channel(1);
    Job { op, reply: Reply::Wait(reply) }
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
    job(Op::Cast { id: id.clone(), ballot, invite: None, receipt: None, today })
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

/// Every counter of `id` against a recount of its stored responses.
fn assert_counters_match_responses(conn: &Connection, id: &PollId) -> i64 {
    let rows: i64 =
        conn.query_row("SELECT count(*) FROM responses WHERE poll_id = ?1", [id.as_str()], |r| r.get(0)).unwrap();
    let total: i64 =
        conn.query_row("SELECT total_responses FROM polls WHERE id = ?1", [id.as_str()], |r| r.get(0)).unwrap();
    let by_day: i64 = conn
        .query_row("SELECT coalesce(sum(responses), 0) FROM daily_tallies WHERE poll_id = ?1", [id.as_str()], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!((total, by_day), (rows, rows), "total_responses and daily_tallies vs rows of {id}");
    let recount = |sql: &str| -> Vec<(i64, i64, i64)> {
        let mut stmt = conn.prepare(sql).unwrap();
        stmt.query_map([id.as_str()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
    };
    let counted =
        recount("SELECT question, option, votes FROM option_tallies WHERE poll_id = ?1 AND votes > 0 ORDER BY 1, 2");
    let stored = recount(
        "SELECT CAST(j.key AS INTEGER), j.value, count(*) FROM responses, json_each(responses.choices) AS j
         WHERE poll_id = ?1 AND j.value IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2",
    );
    assert_eq!(counted, stored, "option_tallies vs the stored ballots of {id}");
    rows
}

#[test]
fn counters_stay_exact_when_a_batch_mixes_valid_refused_and_other_writes() {
    let (_dir, mut conn) = setup();
    let today = Day::today();
    let later = today.plus_days(30); // past every poll's expiry
    let [open, closed, doomed, unknown] = [(); 4].map(|()| PollId::generate().unwrap());
    let mut polls = PollCache::default();
    let setup = [create(&open, today), create(&closed, today), create(&doomed, today)];
    let (results, _) = commit(&mut conn, &setup, &mut polls, &mut Fresh::default());
    assert!(results.iter().all(Result::is_ok));
    let (results, _) =
        commit(&mut conn, &[patch(&closed, json!({"closed": true}), today)], &mut polls, &mut Fresh::default());
    assert!(results.iter().all(Result::is_ok));
    // A vote first, so that the cache knows `open` before the batch.
    let (results, _) = commit(&mut conn, &[cast(&open, &[Some(0), None], today)], &mut polls, &mut Fresh::default());
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
    let (results, erased) = commit(&mut conn, &batch, &mut polls, &mut Fresh::default());
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
    assert_eq!(assert_counters_match_responses(&conn, &open), 4);
    assert_eq!(assert_counters_match_responses(&conn, &closed), 0);
    let left: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM option_tallies WHERE poll_id = ?1)
                  + (SELECT count(*) FROM daily_tallies WHERE poll_id = ?1)
                  + (SELECT count(*) FROM responses WHERE poll_id = ?1)",
            [doomed.as_str()],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(left, 0, "nothing of the deleted poll is left");
    let votes: Vec<(i64, i64, i64)> = {
        let mut stmt = conn
            .prepare("SELECT question, option, votes FROM option_tallies WHERE poll_id = ?1 ORDER BY 1, 2")
            .unwrap();
        stmt.query_map([open.as_str()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(votes, [(0, 0, 2), (0, 2, 1), (1, 0, 1), (1, 1, 2)]);
}

#[test]
fn a_batch_whose_counters_cannot_be_written_fails_as_a_whole() {
    let (_dir, mut conn) = setup();
    let today = Day::today();
    let id = PollId::generate().unwrap();
    let mut polls = PollCache::default();
    let (results, _) = commit(&mut conn, &[create(&id, today)], &mut polls, &mut Fresh::default());
    assert!(results[0].is_ok());
    // Counters of this poll can no longer be written (the votes themselves can).
    conn.execute_batch(
        "CREATE TRIGGER no_counting BEFORE INSERT ON daily_tallies BEGIN SELECT RAISE(ABORT, 'refused'); END;",
    )
    .unwrap();
    let batch = [cast(&id, &[Some(0), None], today), cast(&id, &[Some(1), Some(1)], today)];
    let (results, _) = commit(&mut conn, &batch, &mut polls, &mut Fresh::default());
    assert!(results.iter().all(Result::is_err), "no vote is acknowledged without its counters");
    let rows: i64 = conn.query_row("SELECT count(*) FROM responses", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, 0, "the batch's votes were rolled back");
    conn.execute_batch("DROP TRIGGER no_counting").unwrap();
    let (results, _) = commit(&mut conn, &batch, &mut polls, &mut Fresh::default());
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(assert_counters_match_responses(&conn, &id), 2);
}

#[test]
fn the_poll_cache_notices_changes_made_by_another_connection() {
    let (dir, mut conn) = setup();
    let today = Day::today();
    let id = PollId::generate().unwrap();
    let mut polls = PollCache::default();
    let (results, _) = commit(&mut conn, &[create(&id, today)], &mut polls, &mut Fresh::default());
    assert!(results[0].is_ok());
    let (results, _) = commit(&mut conn, &[cast(&id, &[Some(0), None], today)], &mut polls, &mut Fresh::default());
    assert_eq!(kind(&results[0]), "ok");
    assert!(polls.polls.contains_key(id.as_str()), "the vote filled the cache");
    // Another process (pollctl) closes the poll.
    let other = Connection::open(dir.path().join("w.sqlite3")).unwrap();
    other.execute("UPDATE polls SET closed = 1 WHERE id = ?1", [id.as_str()]).unwrap();
    let (results, _) = commit(&mut conn, &[cast(&id, &[Some(1), None], today)], &mut polls, &mut Fresh::default());
    assert_eq!(kind(&results[0]), "closed");
    // ...then shortens its life to end today.
    other
        .execute("UPDATE polls SET closed = 0, expires_on = ?2 WHERE id = ?1", [id.as_str(), &today.to_string()])
        .unwrap();
    let (results, _) = commit(&mut conn, &[cast(&id, &[Some(1), None], today)], &mut polls, &mut Fresh::default());
    assert_eq!(kind(&results[0]), "not found");
    other.execute("DELETE FROM polls WHERE id = ?1", [id.as_str()]).unwrap();
    let (results, _) =
        commit(&mut conn, &[cast(&id, &[Some(1), None], today.previous())], &mut polls, &mut Fresh::default());
    assert_eq!(kind(&results[0]), "not found");
}

#[test]
fn the_poll_cache_stays_bounded() {
    let (_dir, mut conn) = setup();
    let today = Day::today();
    let mut polls = PollCache::default();
    let ids: Vec<PollId> = (0..5).map(|_| PollId::generate().unwrap()).collect();
    let creates: Vec<Job> = ids.iter().map(|id| create(id, today)).collect();
    assert!(commit(&mut conn, &creates, &mut polls, &mut Fresh::default()).0.iter().all(Result::is_ok));
    let votes: Vec<Job> = ids.iter().map(|id| cast(id, &[Some(0), None], today)).collect();
    assert!(commit(&mut conn, &votes, &mut polls, &mut Fresh::default()).0.iter().all(Result::is_ok));
    assert_eq!(polls.polls.len(), 5);
    // Filled to the entry bound, the next poll starts it over.
    for i in 0..CACHE_POLLS - 5 {
        polls.polls.insert(
            format!("filler{i}"),
            PollState { closed: false, invite_only: false, expires_on: today, closes_on: None },
        );
    }
    let one = [cast(&ids[0], &[Some(1), None], today)];
    assert!(commit(&mut conn, &one, &mut polls, &mut Fresh::default()).0[0].is_ok());
    assert_eq!(polls.polls.len(), CACHE_POLLS, "already known: nothing is dropped");
    polls.polls.remove(ids[1].as_str());
    polls.polls.insert(
        "filler_again".into(),
        PollState { closed: false, invite_only: false, expires_on: today, closes_on: None },
    );
    let other = [cast(&ids[1], &[Some(1), None], today)];
    assert!(commit(&mut conn, &other, &mut polls, &mut Fresh::default()).0[0].is_ok());
    assert_eq!(polls.polls.len(), 1, "past the bound the cache starts over");
}

#[test]
fn votes_stop_on_the_closing_day_and_reopening_past_it_clears_it() {
    let Started { _dir, mut conn, today, id, mut polls, mut fresh } = started();
    let closes = today.plus_days(2);
    let set = patch(&id, json!({"closesOn": closes.to_string()}), today);
    let (r, _) = commit(&mut conn, &[set], &mut polls, &mut fresh);
    assert!(r[0].is_ok());
    // The day before: counted; on the day and after: refused, by the
    // writer itself (the cache remembers the poll from the first vote).
    let batch = [
        cast(&id, &[Some(0), None], today.plus_days(1)),
        cast(&id, &[Some(0), None], closes),
        cast(&id, &[Some(1), None], closes.plus_days(1)),
    ];
    let (r, _) = commit(&mut conn, &batch, &mut polls, &mut fresh);
    assert_eq!(r.iter().map(kind).collect::<Vec<_>>(), ["ok", "closed", "closed"]);
    // Reopened on its closing day: the day is removed and votes count again.
    let (r, _) = commit(&mut conn, &[patch(&id, json!({"closed": false}), closes)], &mut polls, &mut fresh);
    assert!(r[0].is_ok());
    let stored: Option<String> =
        conn.query_row("SELECT closes_on FROM polls WHERE id = ?1", [id.as_str()], |r| r.get(0)).unwrap();
    assert_eq!(stored, None);
    let (r, _) = commit(&mut conn, &[cast(&id, &[Some(1), None], closes)], &mut polls, &mut fresh);
    assert_eq!(kind(&r[0]), "ok");
    assert_eq!(assert_counters_match_responses(&conn, &id), 2);
}

/// New ballots wait on their poll's last page with a staged key; the mix
/// gives each a random key (never a staged one) and keeps every ballot; a
/// writer that starts finds ballots a previous run left staged.
#[test]
fn ballots_are_staged_until_the_mix_moves_them_to_random_keys() {
    let (dir, mut conn) = setup();
    let today = Day::today();
    let id = PollId::generate().unwrap();
    let mut polls = PollCache::default();
    let mut fresh = Fresh::default();
    let mut batch = vec![create(&id, today)];
    batch.extend((0..40).map(|i| cast(&id, &[Some(i % 3), Some(i % 2)], today)));
    let (results, _) = commit(&mut conn, &batch, &mut polls, &mut fresh);
    assert!(results.iter().all(|r| r.is_ok()));
    let keys = |conn: &Connection| -> Vec<Vec<u8>> {
        let mut stmt = conn.prepare("SELECT id FROM responses ORDER BY id").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    let choices = |conn: &Connection| -> Vec<String> {
        let mut stmt = conn.prepare("SELECT choices FROM responses ORDER BY choices").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    let before = choices(&conn);
    assert_eq!(before.len(), 40);
    assert!(keys(&conn).iter().all(|k| k[0] == STAGED), "new ballots are staged");
    assert_eq!(fresh.count, 40);

    // A writer that starts now (as after a crash) finds them all, and one
    // that knows them adds none twice.
    let mut left = Fresh::default();
    left.find_left_staged(&conn);
    assert_eq!((left.count, left.keys.get(id.as_str()).map(Vec::len)), (40, Some(40)));
    fresh.find_left_staged(&conn);
    assert_eq!(fresh.count, 40);

    fresh.mix(&mut conn);
    assert_eq!(fresh.count, 0, "the mix succeeded");
    let after = keys(&conn);
    assert_eq!(after.len(), 40);
    assert!(after.iter().all(|k| k[0] != STAGED), "every ballot has left the staging keys");
    assert_eq!(choices(&conn), before, "every ballot is kept as it was");
    let mut none = Fresh::default();
    none.find_left_staged(&conn);
    assert_eq!(none.count, 0);
    drop(dir);
}

/// In a poll larger than the rows around a new ballot, the mix rewrites
/// only those (the neighbourhood path): every ballot is kept once, none is
/// left staged, and a staged key another connection already moved is
/// skipped without harm.
#[test]
fn the_mix_of_a_few_new_ballots_in_a_large_poll_keeps_every_ballot() {
    let (_dir, mut conn) = setup();
    let today = Day::today();
    let id = PollId::generate().unwrap();
    let (mut polls, mut fresh) = (PollCache::default(), Fresh::default());
    let mut batch = vec![create(&id, today)];
    batch.extend((0..500).map(|i| cast(&id, &[Some(i % 3), Some(i % 2)], today)));
    let (results, _) = commit(&mut conn, &batch, &mut polls, &mut fresh);
    assert!(results.iter().all(|r| r.is_ok()));
    fresh.mix(&mut conn);
    assert_eq!(fresh.count, 0);
    // Two new ballots, 2 × 201 rows around them: fewer than the poll's 502.
    let (results, _) = commit(&mut conn, &[cast(&id, &[Some(2), Some(1)], today)], &mut polls, &mut fresh);
    assert!(results[0].is_ok());
    let (results, _) = commit(&mut conn, &[cast(&id, &[Some(1), None], today)], &mut polls, &mut fresh);
    assert!(results[0].is_ok());
    let moved = fresh.keys[id.as_str()][1].0;
    conn.execute("UPDATE responses SET id = ?2 WHERE id = ?1", params![&moved[..], &mixed_key().unwrap()[..]]).unwrap();
    let stored = |conn: &Connection| -> Vec<String> {
        let mut stmt = conn.prepare("SELECT choices FROM responses ORDER BY choices").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    let before = stored(&conn);
    assert_eq!(before.len(), 502);
    fresh.mix(&mut conn);
    assert_eq!(fresh.count, 0, "the mix succeeded");
    assert_eq!(stored(&conn), before, "every ballot once, as it was");
    let staged: i64 =
        conn.query_row("SELECT count(*) FROM responses WHERE id >= ?1", params![&[STAGED][..]], |r| r.get(0)).unwrap();
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
    let (_dir, mut conn) = setup();
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
        job(Op::Cast { id: id.clone(), ballot, invite: None, receipt: None, today })
    };
    let (mut polls, mut fresh) = (PollCache::default(), Fresh::default());
    let create = job(Op::Create {
        id: id.clone(),
        token: AdminToken::generate().unwrap().hash(),
        poll: poll.clone(),
        media: Vec::new(),
        today,
    });
    let (results, _) = commit(&mut conn, &[create], &mut polls, &mut fresh);
    assert!(results[0].is_ok());
    for batch in (0..N).collect::<Vec<_>>().chunks(10) {
        let jobs: Vec<Job> = batch.iter().map(|&i| vote(i)).collect();
        let (results, _) = commit(&mut conn, &jobs, &mut polls, &mut fresh);
        assert!(results.iter().all(|r| r.is_ok()));
    }
    fresh.mix_in_chunks(&mut conn, 7);
    assert_eq!(fresh.count, 0, "the whole-poll mix succeeded");
    // Two more: 2 × 201 rows around them, fewer than the poll's, in chunks.
    for i in [N, N + 1] {
        let (results, _) = commit(&mut conn, &[vote(i)], &mut polls, &mut fresh);
        assert!(results[0].is_ok());
    }
    fresh.mix_in_chunks(&mut conn, 7);
    assert_eq!(fresh.count, 0, "the neighbourhood mix succeeded");

    let mut stmt = conn.prepare("SELECT choices FROM responses ORDER BY choices").unwrap();
    let stored: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    let mut expected: Vec<String> = (0..N + 2).map(|i| format!("{:?}", digits(i)).replace(' ', "")).collect();
    expected.sort();
    assert_eq!(stored, expected, "every ballot once, as it was");
    assert_eq!(assert_counters_match_responses(&conn, &id), (N + 2) as i64);
    let staged: i64 =
        conn.query_row("SELECT count(*) FROM responses WHERE id >= ?1", params![&[STAGED][..]], |r| r.get(0)).unwrap();
    assert_eq!(staged, 0);
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
         CREATE TEMP TRIGGER rewrites_d AFTER DELETE ON main.responses
           BEGIN INSERT INTO rewrites (op, id) VALUES ('d', old.id); END;
         CREATE TEMP TRIGGER rewrites_i AFTER INSERT ON main.responses
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
    use std::collections::BTreeSet;
    let Started { _dir, mut conn, today, id, mut polls, mut fresh } = started();
    let keys = |conn: &Connection| -> Vec<Vec<u8>> {
        let mut stmt = conn.prepare("SELECT id FROM responses ORDER BY id").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    // Casts `n` ballots and mixes them in chunks of 7: the settled keys
    // before, the staged ones, and the rows the mix deleted and wrote.
    let mut round = |conn: &mut Connection, fresh: &mut Fresh, n: usize| {
        let settled = keys(conn);
        for batch in (0..n).collect::<Vec<_>>().chunks(100) {
            let jobs: Vec<Job> = batch.iter().map(|i| cast(&id, &[Some(i % 3), Some(i % 2)], today)).collect();
            let (results, _) = commit(conn, &jobs, &mut polls, fresh);
            assert!(results.iter().all(|r| r.is_ok()));
        }
        let staged: BTreeSet<Vec<u8>> = fresh.keys[id.as_str()].iter().map(|(k, _)| k.to_vec()).collect();
        conn.execute("DELETE FROM rewrites", []).unwrap();
        fresh.mix_in_chunks(conn, 7);
        assert_eq!(fresh.count, 0, "the mix succeeded");
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
    round(&mut conn, &mut fresh, 1500);

    // Three new ballots in 1,500: their neighbourhoods only.
    let (settled, staged, deleted, written) = round(&mut conn, &mut fresh, 3);
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
    let (settled, staged, deleted, written) = round(&mut conn, &mut fresh, 2000);
    let expected: BTreeSet<Vec<u8>> = settled.iter().cloned().chain(staged).collect();
    deleted_once(&deleted, &expected);
    assert!(in_key_order(&written));
    assert!(written == keys(&conn), "every ballot written back once, none left staged");
    assert_eq!(written.len(), 3503);
}

/// A ballot's settled or fallback key is hash output all through: without
/// the receipt (or the staged key) no byte of it can be checked against
/// the others, so the file does not tell which ballots came with a
/// receipt. The check below is the one an earlier draft let anyone make
/// (the first byte drawn from the other 15): it holds for 1 key in 256 by
/// chance, and held for all of them.
#[test]
fn receipt_keys_cannot_be_told_from_random_ones() {
    use sha2::{Digest, Sha256};
    let first_from_rest = |key: &[u8; 16]| {
        (0..=u8::MAX)
            .map(|round| Sha256::new().chain_update(&key[1..]).chain_update([round]).finalize()[0])
            .find(|&b| b != STAGED)
            == Some(key[0])
    };
    let keys: Vec<ReceiptKeys> =
        (0..512).map(|_| receipt_keys(&crate::secret::Receipt::generate().unwrap().hash())).collect();
    let settled: fn(&ReceiptKeys) -> [u8; 16] = |k| k.settled;
    let fallback: fn(&ReceiptKeys) -> [u8; 16] = |k| k.fallback;
    for (name, pick) in [("settled", settled), ("fallback", fallback)] {
        let told = keys.iter().filter(|k| first_from_rest(&pick(k))).count();
        assert!(told < 12, "{told} of 512 {name} keys give themselves away");
        assert!(keys.iter().all(|k| pick(k)[0] != STAGED), "{name} keys are never staged ones");
        // Nothing of the staged key stays in the key a ballot settles at.
        assert!(keys.iter().all(|k| pick(k)[1..] != k.staged[1..]), "{name} keys keep the staged key's bytes");
    }
}
