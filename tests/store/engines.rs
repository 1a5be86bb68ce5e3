//! The store's promises on both engines (issue 23: one suite, not a copy):
//! each test below is one body run against a SQLite file and against a
//! PostgreSQL database, through the library's public store API, and must
//! give the same answers on both.
//!
//! What only one engine has is tested where it lives: SQLite's mix, WAL
//! truncation and file scans in src/store's unit tests and tests/privacy/rules.rs;
//! PostgreSQL's several nodes, failover and scans of its copies in
//! tests/operations/several_nodes.rs. Without PostgreSQL the PostgreSQL half skips
//! visibly (and fails under `CI=true`).

use crate::common;
use crate::common::machine;

use std::collections::BTreeMap;

use anonpoll::day::Day;
use anonpoll::domain::{Ballot, NewPoll, PollPatch};
use anonpoll::error::Error;
use anonpoll::secret::{AdminToken, InviteCode, PollId, Receipt};
use anonpoll::store::{Keys, Store, WriterConfig};
use serde_json::{Value, json};

use common::PgCluster;

/// One store of each engine, each in a place of its own; the SQLite one
/// first. The PostgreSQL one is missing after a visible skip.
fn engines() -> Vec<(&'static str, Store, tempfile::TempDir, Option<common::PgDb>)> {
    let mut out = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::at(&dir.path().join("keys").join("s.keys"));
    let sqlite = Store::open_db(&dir.path().join("s.sqlite3"), &keys, WriterConfig::default()).unwrap();
    out.push(("sqlite", sqlite, dir, None));
    if let Some(db) = PgCluster::shared_db() {
        let dir = tempfile::tempdir().unwrap();
        let keys = Keys::at(&dir.path().join("pg.keys"));
        let store = Store::open_db(std::path::Path::new(&db.url()), &keys, WriterConfig::default()).unwrap();
        out.push(("postgres", store, dir, Some(db)));
    }
    out
}

fn new_poll(extra: Value) -> NewPoll {
    let mut v = json!({
        "title": "Engines",
        "lang": "en",
        "expiryDays": 7,
        "questions": [
            {"label": "Q1", "options": ["a", "b", "c"]},
            {"label": "Q2", "options": ["x", "y"]}
        ]
    });
    if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
        v.extend(extra.clone());
    }
    NewPoll::from_json(&v).unwrap()
}

fn create(store: &Store, poll: &NewPoll) -> (PollId, AdminToken) {
    let id = PollId::generate().unwrap();
    let token = AdminToken::generate().unwrap();
    store.create_poll(&id, &token.hash(), poll, &[], Day::today()).unwrap();
    (id, token)
}

fn ballot(poll: &NewPoll, choices: &[Option<usize>]) -> Ballot {
    Ballot::of_choices(&poll.questions, choices).unwrap()
}

/// Total and per-option counts of the first question.
fn counts(store: &Store, id: &PollId) -> (u64, Vec<u64>) {
    let mut r = store.reader().unwrap();
    let poll = r.poll(id, Day::today()).unwrap().expect("the poll is live");
    let t = r.tallies(&poll).unwrap();
    (t.total, t.votes[0].clone())
}

/// The writer sleeps until a job comes (src/store/writer/inbox.rs): a vote
/// queued long after it fell asleep is answered, and dropping the store
/// wakes it to stop. Each step has a deadline, so a lost wake fails here
/// instead of hanging the suite.
#[test]
fn a_sleeping_writer_wakes_for_a_vote_and_to_stop() {
    let _machine = machine::shared();
    let poll = new_poll(json!({}));
    for (engine, store, dir, db) in engines() {
        let (id, _) = create(&store, &poll);
        let b = ballot(&poll, &[Some(0), Some(1)]);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _kept = (dir, db);
            // Past the writer's idle chores (250 ms each): it sleeps untimed.
            std::thread::sleep(std::time::Duration::from_millis(1500));
            tx.send(store.cast(&id, b, Day::today()).is_ok()).unwrap();
            // Past the mix of that ballot: asleep untimed again.
            std::thread::sleep(std::time::Duration::from_millis(1500));
            drop(store);
            tx.send(true).unwrap();
        });
        let deadline = std::time::Duration::from_secs(30);
        assert_eq!(rx.recv_timeout(deadline), Ok(true), "{engine}: the vote was answered");
        assert_eq!(rx.recv_timeout(deadline), Ok(true), "{engine}: the store closed");
    }
}

#[test]
fn a_poll_reads_back_as_created_and_its_votes_count_exactly_under_concurrent_casts() {
    let _machine = machine::shared();
    for (engine, store, _dir, _db) in engines() {
        let poll = new_poll(json!({}));
        let (id, _) = create(&store, &poll);
        let today = Day::today();
        let read = store.reader().unwrap().poll(&id, today).unwrap().expect("created");
        assert_eq!(read.title.as_str(), "Engines", "{engine}");
        assert_eq!(read.questions.len(), 2, "{engine}");
        // 600 votes queued at once from 6 threads: group commits.
        std::thread::scope(|s| {
            for t in 0..6 {
                let (store, id, poll) = (&store, &id, &poll);
                s.spawn(move || {
                    let pending: Vec<_> = (0..100)
                        .map(|i| {
                            let b = ballot(poll, &[Some((t + i) % 3), None]);
                            store.cast_later(id, b, (None, None, None), today, None).unwrap()
                        })
                        .collect();
                    for p in pending {
                        p.committed_blocking().unwrap();
                    }
                });
            }
        });
        let (total, per_option) = counts(&store, &id);
        assert_eq!(total, 600, "{engine}");
        assert_eq!(per_option, vec![200, 200, 200], "{engine}");
        let mut r = store.reader().unwrap();
        let p = r.poll(&id, today).unwrap().unwrap();
        let ballots = r.ballots(&p).unwrap();
        assert_eq!(ballots.len(), 600, "{engine}: every ballot stored");
        let mut recount = BTreeMap::new();
        for b in &ballots {
            *recount.entry(b.to_stored()).or_insert(0) += 1;
        }
        assert_eq!(recount.values().sum::<u64>(), 600, "{engine}");
        assert_eq!(store.stats(today).unwrap().responses, 600, "{engine}");
    }
}

#[test]
fn an_invite_code_votes_once_and_a_closed_poll_takes_no_vote() {
    let _machine = machine::shared();
    for (engine, store, _dir, _db) in engines() {
        let poll = new_poll(json!({"duplicateCheck": "invite"}));
        let (id, _) = create(&store, &poll);
        let today = Day::today();
        let codes: Vec<InviteCode> = (0..3).map(|_| InviteCode::generate().unwrap()).collect();
        assert_eq!(store.issue_invites(&id, codes.iter().map(InviteCode::hash).collect(), today).unwrap(), (3, 0));
        let vote = |code: Option<&InviteCode>| {
            store
                .cast_later(&id, ballot(&poll, &[Some(0), None]), (code.map(InviteCode::hash), None, None), today, None)
                .unwrap()
                .committed_blocking()
        };
        vote(Some(&codes[0])).unwrap();
        assert!(matches!(vote(Some(&codes[0])), Err(Error::InviteRefused(_))), "{engine}: a used code");
        assert!(matches!(vote(None), Err(Error::InviteRefused(_))), "{engine}: no code");
        assert!(
            matches!(vote(Some(&InviteCode::generate().unwrap())), Err(Error::InviteRefused(_))),
            "{engine}: an unknown code"
        );
        vote(Some(&codes[1])).unwrap();
        let mut r = store.reader().unwrap();
        let p = r.poll(&id, today).unwrap().unwrap();
        assert_eq!(r.invite_counts(&p).unwrap(), (3, 2), "{engine}");
        assert_eq!(counts(&store, &id).0, 2, "{engine}: refused votes count nothing");
        // Closed: no vote.
        store.patch_poll(&id, &PollPatch::from_json(&json!({"closed": true})).unwrap(), today).unwrap();
        assert!(matches!(vote(Some(&codes[2])), Err(Error::Closed)), "{engine}");
        assert_eq!(counts(&store, &id).0, 2, "{engine}");
    }
}

#[test]
fn a_receipt_finds_its_ballot_to_change_or_withdraw_it_and_the_counts_follow() {
    let _machine = machine::shared();
    for (engine, store, _dir, _db) in engines() {
        let poll = new_poll(json!({"voteChanges": true}));
        let (id, _) = create(&store, &poll);
        let today = Day::today();
        let receipt = Receipt::generate().unwrap();
        store
            .cast_later(&id, ballot(&poll, &[Some(0), Some(1)]), (None, Some(receipt.hash()), None), today, None)
            .unwrap()
            .committed_blocking()
            .unwrap();
        store.cast(&id, ballot(&poll, &[Some(2), None]), today).unwrap();
        assert_eq!(counts(&store, &id), (2, vec![1, 0, 1]), "{engine}");
        let mut r = store.reader().unwrap();
        let p = r.poll(&id, today).unwrap().unwrap();
        let own = r.own_ballot(&p, &receipt.hash()).unwrap().expect("the receipt opens its ballot");
        assert_eq!(own, ballot(&poll, &[Some(0), Some(1)]), "{engine}");
        store.amend(&id, receipt.hash(), Some(ballot(&poll, &[Some(1), None])), today).unwrap();
        assert_eq!(counts(&store, &id), (2, vec![0, 1, 1]), "{engine}: changed");
        store.amend(&id, receipt.hash(), None, today).unwrap();
        assert_eq!(counts(&store, &id), (1, vec![0, 0, 1]), "{engine}: withdrawn");
        let p = r.poll(&id, today).unwrap().unwrap();
        assert_eq!(r.own_ballot(&p, &receipt.hash()).unwrap(), None, "{engine}: gone");
        assert!(
            matches!(store.amend(&id, receipt.hash(), None, today), Err(Error::ReceiptRefused(_))),
            "{engine}: a withdrawn receipt opens nothing"
        );
        let stranger = Receipt::generate().unwrap();
        assert!(matches!(store.amend(&id, stranger.hash(), None, today), Err(Error::ReceiptRefused(_))), "{engine}");
    }
}

#[test]
fn deleting_or_expiring_erases_a_poll_and_the_day_s_key_work_leaves_no_key_to_its_copies() {
    let _machine = machine::shared();
    for (engine, store, _dir, _db) in engines() {
        let poll = new_poll(json!({}));
        let today = Day::today();
        let (deleted, _) = create(&store, &poll);
        let (kept, _) = create(&store, &poll);
        store.cast(&deleted, ballot(&poll, &[Some(0), None]), today).unwrap();
        store.cast(&kept, ballot(&poll, &[Some(1), None]), today).unwrap();
        store.delete_poll(&deleted).unwrap();
        assert!(matches!(store.delete_poll(&deleted), Err(Error::NotFound)), "{engine}: once");
        let mut r = store.reader().unwrap();
        assert!(r.poll(&deleted, today).unwrap().is_none(), "{engine}");
        assert!(!r.erased(&deleted).unwrap(), "{engine}: no row at all");
        assert!(matches!(store.cast(&deleted, ballot(&poll, &[Some(0), None]), today), Err(Error::NotFound)));
        // Due on its expiry day, with its one ballot; then erased by the sweep.
        let expiry = today.plus_days(7);
        let due = r.due_for_sweep(expiry).unwrap();
        assert_eq!(due.iter().map(|d| (d.polls, d.responses)).collect::<Vec<_>>(), vec![(1, 1)], "{engine}");
        let report = store.sweep(today.plus_days(1)).unwrap();
        assert_eq!((report.polls_erased, report.key_day), (0, today.plus_days(1)), "{engine}");
        assert!(r.poll(&kept, today.plus_days(1)).unwrap().is_some(), "{engine}: re-wrapped, still readable");
        let report = store.sweep(expiry).unwrap();
        assert_eq!(report.polls_erased, 1, "{engine}");
        assert!(r.poll(&kept, expiry).unwrap().is_none(), "{engine}");
        assert_eq!(store.stats(expiry).unwrap().live_polls, 0, "{engine}");
    }
}

#[test]
fn the_health_and_figures_of_a_store_tell_its_schema_and_nothing_of_any_poll() {
    let _machine = machine::shared();
    for (engine, store, _dir, _db) in engines() {
        let h = store.health().unwrap();
        assert_eq!(h.integrity, "ok", "{engine}");
        assert_eq!(h.schema_version, h.binary_schema_version, "{engine}");
        let (id, _) = create(&store, &new_poll(json!({})));
        store.reader().unwrap().ping().unwrap();
        let s = store.stats(Day::today()).unwrap();
        assert_eq!((s.live_polls, s.expired_polls, s.responses), (1, 0, 0), "{engine}");
        assert!(s.database_bytes > 0, "{engine}");
        assert_eq!(store.records_forms(), engine == "postgres", "{engine}: forms spent in the database");
        drop(id);
    }
}

#[test]
fn a_form_spent_in_the_database_counts_once_and_a_refused_vote_gives_it_back() {
    let _machine = machine::shared();
    for (engine, store, _dir, db) in engines() {
        let poll = new_poll(json!({}));
        let (id, _) = create(&store, &poll);
        let today = Day::today();
        let form = Some((today, [7u8; 16]));
        let cast = |f| store.cast_later(&id, ballot(&poll, &[Some(0), None]), (None, None, f), today, None).unwrap();
        // The same form twice at once: in one batch, or one after the other.
        let (a, b) = (cast(form), cast(form));
        let outcomes = [a.committed_blocking(), b.committed_blocking()];
        let stored = outcomes.iter().filter(|r| r.is_ok()).count();
        if engine == "postgres" {
            assert_eq!(stored, 1, "{engine}: {outcomes:?}");
            assert!(outcomes.iter().any(|r| matches!(r, Err(Error::FormSpent))), "{engine}: {outcomes:?}");
        } else {
            // SQLite is one node: its memory of forms decides (web/ballot.rs).
            assert_eq!(stored, 2, "{engine}: the store does not record forms");
        }
        // Refused at the commit (the poll closed meanwhile): the form is not spent.
        let other = Some((today, [8u8; 16]));
        let patch = |closed: bool| {
            store.patch_poll(&id, &PollPatch::from_json(&json!({"closed": closed})).unwrap(), today).unwrap()
        };
        patch(true);
        assert!(matches!(cast(other).committed_blocking(), Err(Error::Closed)), "{engine}");
        patch(false);
        cast(other).committed_blocking().unwrap_or_else(|e| panic!("{engine}: the form was given back: {e}"));
        assert_eq!(counts(&store, &id).0, stored as u64 + 1, "{engine}");
        // Spent forms are kept while their forms could still be sent (that
        // day and the next), then erased by the day's key work.
        if let Some(db) = &db {
            let spent = || db.psql("SELECT count(*) FROM redeemed_forms");
            assert_eq!(spent(), "2", "{engine}");
            store.sweep(today.plus_days(1)).unwrap();
            assert_eq!(spent(), "2", "{engine}: still needed the next day");
            store.sweep(today.plus_days(2)).unwrap();
            assert_eq!(spent(), "0", "{engine}: gone after");
        }
    }
}
