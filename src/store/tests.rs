//! Store-level tests: migrations, group commit, counters and erasure.

use std::path::Path;

use rusqlite::Connection;
use serde_json::json;

use super::*;
use crate::domain::NewPoll;
use crate::secret::AdminToken;
use crate::store::seal::DataKey;
use crate::store::sqlite::testing::{MIGRATIONS, SCHEMA_VERSION};
use crate::store::testkit::{
    DataDir, assert_counts_match, ballot_keys, ballots_of, conn_of, data_dir, image_of, in_files, move_ballot,
    wait_for_mix,
};

fn new_poll() -> NewPoll {
    NewPoll::from_json(&json!({
        "title": "Store marker title",
        "lang": "en",
        "expiryDays": 7,
        "questions": [
            {"label": "Q1", "options": ["a", "b", "c"]},
            {"label": "Q2", "options": ["x", "y"]}
        ]
    }))
    .unwrap()
}

/// A ballot of [`new_poll`], checked as the application checks it.
fn ballot(choices: &[Option<usize>]) -> crate::domain::Ballot {
    crate::domain::Ballot::of_choices(&new_poll().questions, choices).unwrap()
}

fn setup() -> (DataDir, Store, PollId) {
    let dir = data_dir();
    let store = Store::open(&dir.path().join("t.sqlite3")).unwrap();
    let id = PollId::generate().unwrap();
    let token = AdminToken::generate().unwrap();
    store.create_poll(&id, &token.hash(), &new_poll(), &[], Day::today()).unwrap();
    (dir, store, id)
}

#[test]
fn votes_update_counters_in_the_same_transaction() {
    let (_dir, store, id) = setup();
    let today = Day::today();
    store.cast(&id, ballot(&[Some(0), Some(1)]), today).unwrap();
    store.cast(&id, ballot(&[Some(0), None]), today).unwrap();
    store.cast(&id, ballot(&[Some(2), Some(1)]), today).unwrap();
    let mut r = store.reader().unwrap();
    let poll = r.poll(&id, today).unwrap().unwrap();
    let t = r.tallies(&poll).unwrap();
    assert_eq!(t.total, 3);
    assert_eq!(t.votes, vec![vec![2, 0, 1], vec![0, 2]]);
    assert_eq!(t.by_day, vec![(today, 3)]);
    // Counts agree with the stored ballots, which are those their digest counted.
    assert_eq!(assert_counts_match(&conn_of(&store), store.keys(), &id), 3);
}

#[test]
fn bad_ballots_closed_and_unknown_polls_are_refused() {
    let (_dir, store, id) = setup();
    let today = Day::today();
    // Ballots that do not fit the poll cannot be made at all (`Ballot::new`).
    let other = PollId::generate().unwrap();
    assert!(matches!(store.cast(&other, ballot(&[Some(0), None]), today), Err(Error::NotFound)));
    let close = PollPatch::from_json(&json!({"closed": true})).unwrap();
    store.patch_poll(&id, &close, today).unwrap();
    assert!(matches!(store.cast(&id, ballot(&[Some(0), None]), today), Err(Error::Closed)));
    let mut r = store.reader().unwrap();
    let poll = r.poll(&id, today).unwrap().unwrap();
    assert!(poll.closed);
    assert_eq!(r.tallies(&poll).unwrap().total, 0);
}

#[test]
fn expired_polls_are_invisible_and_swept_on_their_expiry_day() {
    let (_dir, store, id) = setup();
    let today = Day::today();
    let expires = today.plus_days(7);
    let mut r = store.reader().unwrap();
    assert!(r.poll(&id, expires.previous()).unwrap().is_some());
    assert!(r.poll(&id, expires).unwrap().is_none());
    assert_eq!(store.sweep(expires.previous()).unwrap().polls_erased, 0);
    assert!(r.poll(&id, expires.previous()).unwrap().is_some(), "readable on its last day");
    assert_eq!(store.sweep(expires).unwrap().polls_erased, 1);
    assert!(r.poll(&id, today).unwrap().is_none());
}

#[test]
fn concurrent_votes_are_all_counted() {
    let (_dir, store, id) = setup();
    let today = Day::today();
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let store = store.clone();
            let id = id.clone();
            std::thread::spawn(move || {
                for _ in 0..50 {
                    store.cast(&id, ballot(&[Some(1), Some(0)]), today).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut r = store.reader().unwrap();
    let poll = r.poll(&id, today).unwrap().unwrap();
    assert_eq!(r.tallies(&poll).unwrap().votes, vec![vec![0, 400, 0], vec![400, 0]]);
}

#[test]
fn delete_leaves_no_byte_of_the_poll_in_any_file() {
    let (dir, store, id) = setup();
    let today = Day::today();
    let fr = PollPatch::from_json(&json!({"translations": {"fr": {"title": "Titre marqueur", "questions": [
        {"label": "Q1", "options": ["a", "b", "c"]}, {"label": "Q2", "options": ["x", "y"]}]}}}))
    .unwrap();
    store.patch_poll(&id, &fr, today).unwrap();
    store.cast(&id, ballot(&[Some(0), Some(1)]), today).unwrap();
    let reader = store.reader().unwrap(); // an idle reader must not keep the bytes alive
    store.delete_poll(&id).unwrap();
    drop(reader);
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        for marker in ["Store marker title", "Titre marqueur", id.as_str()] {
            assert!(!bytes.windows(marker.len()).any(|w| w == marker.as_bytes()), "{marker} survived");
        }
    }
    assert!(matches!(store.delete_poll(&id), Err(Error::NotFound)));
}

#[test]
fn opening_truncates_a_wal_left_by_a_crash_after_an_erasure() {
    let dir = data_dir();
    let path = dir.path().join("t.sqlite3");
    drop(Store::open(&path).unwrap());
    // A process that erased a poll and died before its checkpoint: the WAL
    // still holds the poll's pages. (Leaking the connection skips the
    // checkpoint SQLite would run on close, as a crash does.)
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("PRAGMA secure_delete = ON; PRAGMA wal_autocheckpoint = 0;").unwrap();
    // (A cleartext marker in a row of the store's, as a poll's bytes were
    // before they were sealed.)
    conn.execute(
        "INSERT INTO sealed_polls (id, created_on, expires_on, key_day, data_key, body, tallies)
         VALUES ('crashcrashcrash1', '2026-01-01', '2099-01-01', '2026-01-01', x'', CAST('Crash marker title' AS BLOB), x'')",
        [],
    )
    .unwrap();
    conn.execute("DELETE FROM sealed_polls WHERE id = 'crashcrashcrash1'", []).unwrap();
    std::mem::forget(conn);
    let wal = std::fs::read(dir.path().join("t.sqlite3-wal")).unwrap();
    assert!(wal.windows(18).any(|w| w == b"Crash marker title"), "the set-up must leave the marker in the WAL");
    let store = Store::open(&path).unwrap();
    store.health().unwrap(); // a round trip: the writer has started
    drop(store);
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(!bytes.windows(18).any(|w| w == b"Crash marker title"), "an erased title survived a restart");
    }
}

#[test]
fn newer_schema_is_refused() {
    let dir = data_dir();
    let path = dir.path().join("t.sqlite3");
    drop(Store::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
    drop(conn);
    let err = Store::open(&path).err().unwrap().to_string();
    assert!(err.contains("newer"), "{err}");
}

#[test]
fn migrations_match_the_sql_folder() {
    let mut files: Vec<String> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/sql"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sql"))
        .collect();
    files.sort();
    let listed: Vec<&str> = MIGRATIONS.iter().map(|(n, _)| *n).collect();
    assert_eq!(files, listed);
    for (i, name) in listed.iter().enumerate() {
        assert!(name.starts_with(&format!("{:03}_", i + 1)), "{name} is out of order");
    }
}

// ---- Counters against a recount of the stored ballots. ----

mod recount {
    use super::*;
    use crate::domain::{Answer, Ballot, Counter, Question, Tallies};
    use proptest::prelude::*;

    /// A poll with one question of each type, their sizes drawn by the
    /// property (options 2–6, a multiple's bounds, a scale's ends).
    fn poll_of(sizes: (usize, usize, usize, (u8, u8)), bounds: (usize, usize)) -> NewPoll {
        let opts = |n: usize| (0..n).map(|i| format!("o{i}")).collect::<Vec<_>>();
        let (single, multiple, ranked, (lo, hi)) = sizes;
        NewPoll::from_json(&json!({
            "title": "Recount", "lang": "en", "expiryDays": 7,
            "questions": [
                {"label": "S", "options": opts(single)},
                {"type": "multiple", "label": "M", "options": opts(multiple), "minChoices": bounds.0, "maxChoices": bounds.1},
                {"type": "ranked", "label": "R", "options": opts(ranked)},
                {"type": "scale", "label": "V", "scaleMin": lo, "scaleMax": hi},
                {"type": "schedule", "label": "D", "options": (1..=ranked).map(|d| format!("2027-03-{d:02}T18:30")).collect::<Vec<_>>()}
            ]
        }))
        .unwrap()
    }

    /// A valid answer (or none) to `q`, from `seed`'s random numbers.
    fn answer(q: &Question, seed: &[u32]) -> Option<Answer> {
        let pick = |k: usize, m: usize| seed[k % seed.len()] as usize % m;
        if pick(0, 5) == 0 {
            return None;
        }
        let n = q.options.len();
        // A random permutation of the options, from the seed.
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            order.swap(i, pick(i + 1, i + 1));
        }
        Some(match q.kind {
            crate::domain::QuestionKind::Single => Answer::Choice(pick(1, n)),
            crate::domain::QuestionKind::Multiple => {
                let (min, max) = q.choice_bounds();
                let mut chosen = order[..min + pick(2, max - min + 1)].to_vec();
                chosen.sort_unstable();
                Answer::Choices(chosen)
            }
            crate::domain::QuestionKind::Ranked => {
                let k = 1 + pick(3, n);
                let mut ranks = vec![None; n];
                for (rank, &o) in order[..k].iter().enumerate() {
                    ranks[o] = u8::try_from(rank + 1).ok();
                }
                Answer::Ranks(ranks)
            }
            crate::domain::QuestionKind::Scale => {
                let (lo, hi) = q.scale().unwrap();
                Answer::Value(lo + u8::try_from(pick(4, usize::from(hi - lo) + 1)).unwrap())
            }
            crate::domain::QuestionKind::Schedule => {
                Answer::Availability((0..n).map(|j| crate::domain::Availability::ALL[pick(5 + j, 3)]).collect())
            }
        })
    }

    /// The counts of `ballots`, summed independently of the store's own
    /// arithmetic, in the reader's shape.
    fn recount(questions: &[Question], ballots: &[Ballot], by_day: Vec<(Day, u64)>) -> Tallies {
        let mut t = Tallies {
            total: ballots.len() as u64,
            votes: questions.iter().map(|q| vec![0; q.counters()]).collect(),
            answered: vec![0; questions.len()],
            pairwise: questions
                .iter()
                .map(|q| {
                    if q.kind == crate::domain::QuestionKind::Ranked {
                        vec![vec![0; q.options.len()]; q.options.len()]
                    } else {
                        Vec::new()
                    }
                })
                .collect(),
            by_day,
        };
        for b in ballots {
            for (i, a) in b.answers().iter().enumerate() {
                t.answered[i] += u64::from(a.is_some());
            }
            for c in b.counters() {
                match c {
                    Counter::Option { question, option } => {
                        let first = questions[question].scale().map_or(0, |(lo, _)| usize::from(lo));
                        t.votes[question][option - first] += 1;
                    }
                    Counter::Answered { .. } => {}
                    Counter::Pair { question, above, below } => t.pairwise[question][above][below] += 1,
                }
            }
        }
        t
    }

    /// The store holds exactly `ballots` (all cast `today`) for poll `id`,
    /// in any order, and its counters are a recount of them.
    fn stored_and_counted(store: &Store, id: &PollId, ballots: &[Ballot], today: Day) -> Result<(), TestCaseError> {
        let mut r = store.reader().unwrap();
        let poll = r.poll(id, today).unwrap().unwrap();
        let sorted = |b: &[Ballot]| {
            let mut v: Vec<String> = b.iter().map(Ballot::to_stored).collect();
            v.sort();
            v
        };
        prop_assert_eq!(sorted(ballots), sorted(&r.ballots(&poll).unwrap()));
        let by_day = if ballots.is_empty() { Vec::new() } else { vec![(today, ballots.len() as u64)] };
        prop_assert_eq!(r.tallies(&poll).unwrap(), recount(&poll.questions, ballots, by_day));
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Random ballots of every type, cast in group commits of random
        /// sizes: the counters the store keeps equal a recount of the
        /// ballots it stored, and those are the ballots cast.
        #[test]
        fn counters_equal_a_recount_of_the_stored_ballots(
            single in 2usize..=6, multiple in 2usize..=6, ranked in 2usize..=6,
            lo in 0u8..=9, span in 1u8..=10, min_frac in 0usize..=100, max_frac in 0usize..=100,
            seeds in prop::collection::vec(prop::collection::vec(any::<u32>(), 5), 1..60),
            batch in 1usize..=16,
        ) {
            let hi = (lo + span).min(10);
            let min = 1 + min_frac * (multiple - 1) / 100;
            let max = min + max_frac * (multiple - min) / 100;
            let poll = poll_of((single, multiple, ranked, (lo, hi)), (min, max));
            let qs = &poll.questions;
            let ballots: Vec<Ballot> = seeds
                .iter()
                .map(|seed| {
                    let mut answers: Vec<Option<Answer>> =
                        qs.iter().enumerate().map(|(i, q)| answer(q, &seed[i..])).collect();
                    if answers.iter().all(Option::is_none) {
                        answers[0] = Some(Answer::Choice(0));
                    }
                    Ballot::new(qs, answers).unwrap()
                })
                .collect();

            let dir = data_dir();
            let store = Store::open(&dir.path().join("t.sqlite3")).unwrap();
            let id = PollId::generate().unwrap();
            let today = Day::today();
            store.create_poll(&id, &AdminToken::generate().unwrap().hash(), &poll, &[], today).unwrap();
            // Queued without waiting, `batch` at a time, so the writer sums
            // several ballots per commit as it does under load.
            for chunk in ballots.chunks(batch) {
                let pending: Vec<PendingWrite> =
                    chunk.iter().map(|b| store.cast_later(&id, b.clone(), (None, None, None), today, None).unwrap()).collect();
                for p in pending {
                    p.committed_blocking().unwrap();
                }
            }
            stored_and_counted(&store, &id, &ballots, today)?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Ballots of every type cast with receipts, then changed (to
        /// another random ballot) or withdrawn through their receipts in a
        /// random order: the counters equal a recount of the ballots that
        /// should be left, and those are the ones stored. Withdrawing every
        /// ballot leaves no counter row, not even the day's.
        #[test]
        fn changed_and_withdrawn_ballots_move_the_counters_exactly(
            single in 2usize..=5, multiple in 2usize..=5, ranked in 2usize..=5, lo in 0u8..=9,
            seeds in prop::collection::vec(prop::collection::vec(any::<u32>(), 5), 1..24),
            edits in prop::collection::vec((any::<usize>(), any::<bool>(), prop::collection::vec(any::<u32>(), 5)), 0..40),
            withdraw_all in any::<bool>(),
        ) {
            use crate::secret::Receipt;
            let poll = poll_of((single, multiple, ranked, (lo, (lo + 1).clamp(3, 10))), (1, multiple));
            let qs = poll.questions.clone();
            let make = |seed: &[u32]| {
                let mut answers: Vec<Option<Answer>> =
                    qs.iter().enumerate().map(|(i, q)| answer(q, &seed[i..])).collect();
                if answers.iter().all(Option::is_none) {
                    answers[0] = Some(Answer::Choice(0));
                }
                Ballot::new(&qs, answers).unwrap()
            };
            let dir = data_dir();
            let store = Store::open(&dir.path().join("t.sqlite3")).unwrap();
            let id = PollId::generate().unwrap();
            let today = Day::today();
            store.create_poll(&id, &AdminToken::generate().unwrap().hash(), &poll, &[], today).unwrap();
            // What should be stored: per receipt, its ballot or None once withdrawn.
            let mut held: Vec<(Receipt, Option<Ballot>)> = Vec::new();
            for seed in &seeds {
                let (receipt, ballot) = (Receipt::generate().unwrap(), make(seed));
                store.cast_later(&id, ballot.clone(), (None, Some(receipt.hash()), None), today, None).unwrap()
                    .committed_blocking().unwrap();
                held.push((receipt, Some(ballot)));
            }
            let mut edits = edits;
            if withdraw_all {
                edits = (0..held.len()).map(|i| (i, false, vec![0; 5])).collect();
            }
            for (pick, change, seed) in &edits {
                let n = held.len();
                let (receipt, now) = &mut held[pick % n];
                let new = change.then(|| make(seed));
                let result = store.amend(&id, receipt.hash(), new.clone(), today);
                if now.is_none() {
                    prop_assert!(matches!(result, Err(Error::ReceiptRefused(crate::error::ReceiptRefusal::Unknown))), "{result:?}");
                } else {
                    prop_assert!(result.is_ok(), "{result:?}");
                    *now = new;
                }
            }
            let left: Vec<Ballot> = held.iter().filter_map(|(_, b)| b.clone()).collect();
            stored_and_counted(&store, &id, &left, today)?;
            let mut r = store.reader().unwrap();
            let stored_poll = r.poll(&id, today).unwrap().unwrap();
            for (receipt, now) in &held {
                prop_assert_eq!(r.own_ballot(&stored_poll, &receipt.hash()).unwrap(), now.clone());
            }
            // With no ballot left, not even the day they were cast is kept.
            if left.is_empty() {
                prop_assert_eq!(r.tallies(&stored_poll).unwrap(), crate::store::rows::empty_tallies(&crate::store::rows::Layout::of(&qs)));
            }
        }
    }
}

// ---- Staged keys: never in a backup. ----

/// Moves every settled ballot of `id` back to a staged key, as if the
/// writer had not mixed yet (it does 250 ms after going idle).
fn restage(store: &Store, id: &PollId) {
    let conn = conn_of(store);
    for (key, _, _) in ballots_of(&conn, store.keys(), id) {
        if key[0] != vocab::STAGED {
            let mut staged = [vocab::STAGED; 16];
            staged[1..].copy_from_slice(&key[1..]);
            move_ballot(&conn, store.keys(), id, &key, &staged);
        }
    }
}

#[test]
fn a_backup_holds_no_staged_ballot() {
    let (dir, store, id) = setup();
    for choices in [[Some(0), Some(1)], [Some(2), None], [None, Some(0)]] {
        store.cast(&id, ballot(&choices), Day::today()).unwrap();
    }
    wait_for_mix(store.path().unwrap());
    restage(&store, &id);
    assert_eq!(ballot_keys(store.path().unwrap()).iter().filter(|k| k[0] == 0xff).count(), 3, "the set-up stages them");
    let copy = dir.path().join("backup.sqlite3");
    store.backup(&copy).unwrap();
    let keys = ballot_keys(&copy);
    assert_eq!(keys.len(), 3, "every ballot is in the backup");
    assert!(keys.iter().all(|k| k[0] != 0xff && k.len() == 16), "{keys:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&copy).unwrap().permissions().mode() & 0o777, 0o600, "owner only");
    }
    // The copy opens with the live key file, every ballot counted.
    let keys_file = store.keys().path().to_owned();
    drop(store);
    let restored = Store::open_db(&copy, &Keys::at(&keys_file), WriterConfig::default()).unwrap();
    let mut r = restored.reader().unwrap();
    let poll = r.poll(&id, Day::today()).unwrap().unwrap();
    assert_eq!(r.ballots(&poll).unwrap().len(), 3);
    assert_eq!(r.tallies(&poll).unwrap().total, 3);
}

/// A backup is never written into the key file's folder: it would go
/// wherever that folder goes.
#[test]
fn a_backup_is_refused_beside_the_key_file() {
    let (_dir, store, _) = setup();
    let keys_dir = store.keys().path().parent().unwrap().to_owned();
    let err = store.backup(&keys_dir.join("backup.sqlite3")).unwrap_err().to_string();
    assert!(err.contains("key file's folder"), "{err}");
    assert!(!keys_dir.join("backup.sqlite3").exists());
    std::fs::create_dir(keys_dir.join("sub")).unwrap();
    let err = store.backup(&keys_dir.join("sub").join("backup.sqlite3")).unwrap_err().to_string();
    assert!(err.contains("key file's folder"), "{err}");
    // Nor through `..`, whatever the spelling.
    let around = keys_dir.parent().unwrap().join("data").join("..").join(keys_dir.file_name().unwrap());
    let err = store.backup(&around.join("backup.sqlite3")).unwrap_err().to_string();
    assert!(err.contains("key file's folder"), "{err}");
    assert!(!keys_dir.join("backup.sqlite3").exists());
    // A folder that does not exist is a clear error, not a refusal.
    let err = format!("{:#}", store.backup(&dir_beside(&keys_dir, "missing").join("backup.sqlite3")).unwrap_err());
    assert!(err.contains("must exist"), "{err}");
}

/// The folder `name` beside `dir`.
fn dir_beside(dir: &Path, name: &str) -> std::path::PathBuf {
    dir.parent().unwrap().join(name)
}

/// `path` (which exists) spelled relative to the current folder, which
/// a test must not change (tests run on threads of one process).
fn relative_to_cwd(path: &Path) -> std::path::PathBuf {
    let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
    let mut rel: std::path::PathBuf = cwd.components().skip(1).map(|_| "..").collect();
    rel.push(path.canonicalize().unwrap().strip_prefix("/").unwrap());
    rel
}

/// Where a backup is refused: the key file's folder and below, however
/// either path is spelled (relative, with `..`, through a symbolic link),
/// and only there. A key file named without a folder is in the current one.
#[test]
fn a_backup_is_refused_in_the_key_files_folder_however_it_is_spelled() {
    let dir = tempfile::tempdir().unwrap();
    let (data, keys_dir) = (dir.path().join("data"), dir.path().join("data-keys"));
    std::fs::create_dir_all(keys_dir.join("sub")).unwrap();
    std::fs::create_dir(&data).unwrap();
    let keys = keys_dir.join("anonpoll.keys");
    let refused = |keys: &Path, target: &Path| beside_keys(keys, target).unwrap();

    assert!(!refused(&keys, &data.join("b.sqlite3")), "the data folder beside it");
    assert!(!refused(&data.join("anonpoll.keys"), &keys_dir.join("b.sqlite3")), "a name that only begins alike");
    assert!(refused(&keys, &keys_dir.join("b.sqlite3")));
    assert!(refused(&keys, &keys_dir.join("sub").join("b.sqlite3")), "below it");
    assert!(refused(&keys, &data.join("..").join("data-keys").join("b.sqlite3")), "through ..");
    assert!(refused(&keys, &keys_dir.join("sub").join("..").join("b.sqlite3")));
    // Relative paths, from the current folder.
    let (rel_keys, rel_data) = (relative_to_cwd(&keys_dir).join("anonpoll.keys"), relative_to_cwd(&data));
    assert!(rel_keys.is_relative());
    assert!(!refused(&rel_keys, &rel_data.join("b.sqlite3")));
    assert!(refused(&rel_keys, &rel_data.join("..").join("data-keys").join("b.sqlite3")));
    assert!(refused(&keys, &relative_to_cwd(&keys_dir).join("b.sqlite3")));
    // A key file named without a folder lies in the current folder: a
    // backup elsewhere is fine, one in the current folder is not.
    assert!(!refused(Path::new("anonpoll.keys"), &data.join("b.sqlite3")));
    assert!(!refused(Path::new("anonpoll.keys"), &rel_data.join("b.sqlite3")));
    assert!(refused(Path::new("anonpoll.keys"), Path::new("b.sqlite3")));
    assert!(refused(Path::new("./anonpoll.keys"), Path::new("b.sqlite3")));
    // Symbolic links, on either side.
    #[cfg(unix)]
    {
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&keys_dir, &link).unwrap();
        assert!(refused(&keys, &link.join("b.sqlite3")), "a link to the key file's folder");
        assert!(refused(&link.join("anonpoll.keys"), &keys_dir.join("sub").join("b.sqlite3")), "keys through a link");
        assert!(!refused(&link.join("anonpoll.keys"), &data.join("b.sqlite3")));
    }
    // A folder that does not exist: no answer, but why.
    let err = format!("{:#}", beside_keys(&keys, &dir.path().join("missing").join("b.sqlite3")).unwrap_err());
    assert!(err.contains("must exist") && err.contains("missing"), "{err}");
}

// ---- Invite codes. ----

#[test]
fn an_invite_code_casts_one_ballot_and_only_on_its_poll() {
    use crate::error::InviteRefusal;
    use crate::secret::InviteCode;
    let (dir, store, id) = setup();
    let today = Day::today();
    let invite_only = PollPatch::from_json(&json!({"duplicateCheck": "invite"})).unwrap();
    store.patch_poll(&id, &invite_only, today).unwrap();
    let codes: Vec<InviteCode> = (0..3).map(|_| InviteCode::generate().unwrap()).collect();
    let hashes = codes.iter().map(InviteCode::hash).collect();
    assert_eq!(store.issue_invites(&id, hashes, today).unwrap(), (3, 0));
    // Stored keyed under the poll's key: no code's plain hash is in any file.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        for c in &codes {
            assert!(!bytes.windows(32).any(|w| w == c.hash().0), "a code's plain hash is stored");
        }
    }
    let vote = |code: Option<&InviteCode>| {
        store
            .cast_later(&id, ballot(&[Some(0), None]), (code.map(InviteCode::hash), None, None), today, None)
            .unwrap()
            .committed_blocking()
    };
    assert!(vote(Some(&codes[0])).is_ok());
    assert!(matches!(vote(Some(&codes[0])), Err(Error::InviteRefused(InviteRefusal::UnknownOrUsed))));
    assert!(matches!(vote(Some(&InviteCode::generate().unwrap())), Err(Error::InviteRefused(_))));
    assert!(matches!(vote(None), Err(Error::InviteRefused(InviteRefusal::Missing))));
    assert!(vote(Some(&codes[2])).is_ok());
    let mut r = store.reader().unwrap();
    let poll = r.poll(&id, today).unwrap().unwrap();
    assert_eq!(poll.duplicate_check, crate::domain::DuplicateCheck::Invite);
    assert_eq!(r.invite_counts(&poll).unwrap(), (3, 2));
    assert_eq!(r.tallies(&poll).unwrap().total, 2, "refused votes wrote nothing");
    // A vote that brings a code spends it even if the poll has left invite
    // mode meanwhile: the code cannot vote again when the mode returns.
    let open = PollPatch::from_json(&json!({"duplicateCheck": "network"})).unwrap();
    store.patch_poll(&id, &open, today).unwrap();
    assert!(vote(Some(&codes[1])).is_ok());
    store.patch_poll(&id, &invite_only, today).unwrap();
    assert!(matches!(vote(Some(&codes[1])), Err(Error::InviteRefused(InviteRefusal::UnknownOrUsed))));
    let poll = r.poll(&id, today).unwrap().unwrap();
    assert_eq!(r.invite_counts(&poll).unwrap(), (3, 3));
    // Another poll does not take this poll's codes.
    let other = PollId::generate().unwrap();
    store.create_poll(&other, &AdminToken::generate().unwrap().hash(), &new_poll(), &[], today).unwrap();
    store.patch_poll(&other, &invite_only, today).unwrap();
    let on_other =
        store.cast_later(&other, ballot(&[Some(0), None]), (Some(codes[1].hash()), None, None), today, None).unwrap();
    assert!(matches!(on_other.committed_blocking(), Err(Error::InviteRefused(_))));
}

/// A vote's sender learns from the writer whether its
/// ballot was stored, even when nobody waits for the answer any more, and a
/// write refused before it was queued tells it "not stored".
#[test]
fn a_vote_is_settled_by_the_writer_whether_or_not_anyone_waits() {
    use crate::secret::InviteCode;
    use std::sync::mpsc::channel;
    let (_dir, store, id) = setup();
    let today = Day::today();
    let invite_only = PollPatch::from_json(&json!({"duplicateCheck": "invite"})).unwrap();
    store.patch_poll(&id, &invite_only, today).unwrap();
    let code = InviteCode::generate().unwrap();
    store.issue_invites(&id, vec![code.hash()], today).unwrap();
    let (tx, rx) = channel();
    let settle = || {
        let tx = tx.clone();
        Some(super::Settle::new(move |stored| tx.send(stored).unwrap()))
    };
    // The answer's receiver is dropped at once, as by a client that hung up.
    let send = |code: &InviteCode, then| {
        drop(store.cast_later(&id, ballot(&[Some(0), None]), (Some(code.hash()), None, None), today, then).unwrap());
    };
    send(&InviteCode::generate().unwrap(), settle());
    assert!(!rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap(), "a refused code: not stored");
    send(&code, settle());
    assert!(rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap(), "stored");
    send(&code, settle());
    assert!(!rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap(), "the code is spent");
    // Dropped unrun (never queued): not stored.
    drop(settle());
    assert!(!rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap());
    assert_eq!(
        store.reader().unwrap().tallies(&store.reader().unwrap().poll(&id, today).unwrap().unwrap()).unwrap().total,
        1
    );
}

#[test]
fn a_poll_has_at_most_ten_thousand_invite_codes() {
    use crate::secret::InviteCode;
    let (_dir, store, id) = setup();
    let today = Day::today();
    let batch = |n: usize| (0..n).map(|_| InviteCode::generate().unwrap().hash()).collect::<Vec<_>>();
    for _ in 0..9 {
        store.issue_invites(&id, batch(1000), today).unwrap();
    }
    assert_eq!(store.issue_invites(&id, batch(999), today).unwrap(), (9999, 0));
    let refused = store.issue_invites(&id, batch(2), today);
    assert!(
        matches!(&refused, Err(Error::Invalid(e)) if e[0].problem == crate::domain::Problem::TooManyInvites { issued: 9999, max: 10_000 }),
        "{refused:?}"
    );
    assert_eq!(store.issue_invites(&id, batch(1), today).unwrap(), (10_000, 0));
}

// ---- Receipts. ----

/// Every key a receipt can give its ballot in poll `id` of `store` now.
fn keys_of(store: &Store, id: &PollId, receipt: &crate::secret::Receipt) -> Vec<[u8; 16]> {
    image_of(&conn_of(store), store.keys(), id).receipt_keys(&receipt.hash())
}

/// Whether any file of `dir` holds one of `keys`.
fn keys_in_files(dir: &Path, keys: &[[u8; 16]]) -> bool {
    in_files(dir, &keys.iter().map(|k| &k[..]).collect::<Vec<_>>())
}

#[test]
fn a_receipt_opens_its_ballot_until_the_poll_closes_or_changes_are_turned_off() {
    use crate::error::ReceiptRefusal;
    use crate::secret::Receipt;
    let (dir, store, id) = setup();
    let today = Day::today();
    let receipt = Receipt::generate().unwrap();
    let cast = |b: &[Option<usize>], receipt: Option<&Receipt>| {
        store
            .cast_later(&id, ballot(b), (None, receipt.map(Receipt::hash), None), today, None)
            .unwrap()
            .committed_blocking()
    };
    cast(&[Some(0), Some(1)], Some(&receipt)).unwrap();
    cast(&[Some(2), None], None).unwrap();
    let mut r = store.reader().unwrap();
    let poll = r.poll(&id, today).unwrap().unwrap();
    assert!(poll.vote_changes, "on by default");
    assert_eq!(r.own_ballot(&poll, &receipt.hash()).unwrap(), Some(ballot(&[Some(0), Some(1)])));
    assert_eq!(r.own_ballot(&poll, &Receipt::generate().unwrap().hash()).unwrap(), None);
    wait_for_mix(&dir.path().join("t.sqlite3"));
    let k = keys_of(&store, &id, &receipt);
    // The ballot's key comes from the receipt (so the scans below look for
    // the right bytes).
    assert!(keys_in_files(&dir.path(), &k));
    assert_eq!(r.own_ballot(&poll, &receipt.hash()).unwrap(), Some(ballot(&[Some(0), Some(1)])), "after the mix");

    store.amend(&id, receipt.hash(), Some(ballot(&[Some(1), None])), today).unwrap();
    assert_eq!(r.tallies(&poll).unwrap().votes, vec![vec![0, 1, 1], vec![0, 0]]);
    assert_eq!(r.own_ballot(&poll, &receipt.hash()).unwrap(), Some(ballot(&[Some(1), None])), "found after the change");
    let patch = |body: serde_json::Value| store.patch_poll(&id, &PollPatch::from_json(&body).unwrap(), today);
    patch(json!({"voteChanges": false})).unwrap();
    assert!(!r.poll(&id, today).unwrap().unwrap().vote_changes);
    let refused = store.amend(&id, receipt.hash(), None, today);
    assert!(matches!(refused, Err(Error::ReceiptRefused(ReceiptRefusal::ChangesOff))), "{refused:?}");
    patch(json!({"voteChanges": true, "closed": true})).unwrap();
    assert!(matches!(store.amend(&id, receipt.hash(), None, today), Err(Error::Closed)));
    patch(json!({"closed": false})).unwrap();
    assert_eq!(r.tallies(&poll).unwrap().total, 2, "refused changes wrote nothing");

    // A ballot cast yesterday and withdrawn today leaves yesterday's count.
    let yesterday = today.previous();
    let early = Receipt::generate().unwrap();
    store
        .cast_later(&id, ballot(&[Some(0), None]), (None, Some(early.hash()), None), yesterday, None)
        .unwrap()
        .committed_blocking()
        .unwrap();
    store.amend(&id, early.hash(), Some(ballot(&[Some(2), None])), today).unwrap();
    assert_eq!(r.tallies(&poll).unwrap().by_day, vec![(yesterday, 1), (today, 2)], "a change keeps its day");
    store.amend(&id, early.hash(), None, today).unwrap();
    assert_eq!(r.tallies(&poll).unwrap().by_day, vec![(today, 2)], "a withdrawal takes its own day's count");

    // Withdrawn: the ballot and its keys leave every file.
    let k = keys_of(&store, &id, &receipt);
    store.amend(&id, receipt.hash(), None, today).unwrap();
    let t = r.tallies(&poll).unwrap();
    assert_eq!((t.total, t.votes.clone(), t.by_day.clone()), (1, vec![vec![0, 0, 1], vec![0, 0]], vec![(today, 1)]));
    assert!(matches!(
        store.amend(&id, receipt.hash(), None, today),
        Err(Error::ReceiptRefused(ReceiptRefusal::Unknown))
    ));
    drop(r);
    // The writer truncates the WAL at its next idle moment.
    crate::store::testkit::wait_for_empty_wal(&dir.path().join("t.sqlite3"));
    assert!(!keys_in_files(&dir.path(), &k), "a withdrawn ballot's key survived");
}

/// A change or withdrawal mixes its poll under a new data key: every
/// ballot gets a new key and a new ciphertext, the old ones leave every
/// file, and the old sealed values (which a copy made before would hold)
/// do not open under the poll's key now. Every ballot of a poll still has
/// one length.
#[test]
fn a_change_is_stored_as_a_vote_and_mixed_under_a_new_key() {
    use crate::secret::Receipt;
    let (dir, store, id) = setup();
    let today = Day::today();
    let receipts: Vec<Receipt> = (0..60).map(|_| Receipt::generate().unwrap()).collect();
    for (i, r) in receipts.iter().enumerate() {
        let b = if i % 2 == 0 { ballot(&[Some(0), None]) } else { ballot(&[Some(2), Some(1)]) };
        store.cast_later(&id, b, (None, Some(r.hash()), None), today, None).unwrap().committed_blocking().unwrap();
    }
    wait_for_mix(&dir.path().join("t.sqlite3"));
    let conn = conn_of(&store);
    let before = image_of(&conn, store.keys(), &id);
    let rows_before: Vec<(Vec<u8>, Vec<u8>)> = conn
        .prepare("SELECT id, sealed FROM sealed_ballots ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // Narrow ballots made wide and wide ones narrow, and one withdrawn.
    for (i, r) in receipts.iter().enumerate().take(20) {
        let b = if i % 2 == 0 { ballot(&[Some(2), Some(1)]) } else { ballot(&[None, Some(0)]) };
        store.amend(&id, r.hash(), Some(b), today).unwrap();
    }
    store.amend(&id, receipts[59].hash(), None, today).unwrap();
    // Changed in place, as a vote is stored: the old answers stay under the
    // poll's key until its next mix, which follows as a vote's does.
    let now = image_of(&conn, store.keys(), &id);
    assert_eq!(now.key.export(), before.key.export(), "the change itself did not rewrite the poll");
    assert_eq!(now.ballots.iter().filter(|(k, _)| k[0] == 0xff).count(), 20, "the changed ballots wait staged");
    wait_for_mix(&dir.path().join("t.sqlite3"));
    crate::store::testkit::wait_for_empty_wal(&dir.path().join("t.sqlite3"));
    let after = image_of(&conn, store.keys(), &id);
    assert_eq!(after.ballots.len(), 59);
    assert_eq!(assert_counts_match(&conn, store.keys(), &id), 59);
    let place = |key: &[u8]| vocab::place::ballot(id.as_str(), key);
    for (key, sealed) in &rows_before {
        assert!(!in_files(&dir.path(), &[sealed]), "a ballot's old ciphertext survived the change");
        let now = [Some(DataKey::import(&after.key.export())), after.key_at(key)];
        assert!(now.iter().flatten().all(|k| k.open(&place(key), sealed).is_err()), "a key of now opens an old value");
        assert!(
            before.key_at(key).unwrap().open(&place(key), sealed).is_ok(),
            "the old key opened it (the test can fail)"
        );
    }
    let old_keys: std::collections::BTreeSet<&Vec<u8>> = rows_before.iter().map(|(k, _)| k).collect();
    assert!(after.ballots.iter().all(|(k, _)| !old_keys.contains(k)), "every ballot moved");
    let lens: std::collections::BTreeSet<usize> = conn
        .prepare("SELECT length(sealed) FROM sealed_ballots")
        .unwrap()
        .query_map([], |r| r.get::<_, i64>(0))
        .unwrap()
        .map(|n| n.unwrap() as usize)
        .collect();
    assert_eq!(lens.len(), 1, "one length per poll: {lens:?}");
    let mut r = store.reader().unwrap();
    let poll = r.poll(&id, today).unwrap().unwrap();
    assert_eq!(r.own_ballot(&poll, &receipts[0].hash()).unwrap(), Some(ballot(&[Some(2), Some(1)])));
    assert_eq!(r.own_ballot(&poll, &receipts[59].hash()).unwrap(), None);
}

#[test]
fn deleting_a_poll_erases_its_receipt_keys_from_every_file() {
    use crate::secret::Receipt;
    let (dir, store, id) = setup();
    let today = Day::today();
    let receipts: Vec<Receipt> = (0..5).map(|_| Receipt::generate().unwrap()).collect();
    for receipt in &receipts {
        store
            .cast_later(&id, ballot(&[Some(0), Some(1)]), (None, Some(receipt.hash()), None), today, None)
            .unwrap()
            .committed_blocking()
            .unwrap();
    }
    // As a poll deleted days after its votes: mixed to their settled keys.
    wait_for_mix(&dir.path().join("t.sqlite3"));
    let keys: Vec<Vec<[u8; 16]>> = receipts.iter().map(|r| keys_of(&store, &id, r)).collect();
    let settled = ballot_keys(store.path().unwrap());
    assert!(keys.iter().all(|k| k.iter().any(|k| settled.contains(&k.to_vec()))), "every ballot settled");
    assert!(keys.iter().all(|k| keys_in_files(&dir.path(), k)));
    store.delete_poll(&id).unwrap();
    for k in &keys {
        assert!(!keys_in_files(&dir.path(), k), "a receipt's ballot key survived its poll");
    }
}

#[test]
fn a_receipt_finds_its_ballot_staged_mixed_and_in_a_backup() {
    use crate::secret::Receipt;
    let (dir, store, id) = setup();
    let today = Day::today();
    let receipt = Receipt::generate().unwrap();
    let tag = keys::receipt_tag(&receipt.hash());
    let conn = conn_of(&store);
    let theirs = Some(ballot(&[Some(2), Some(0)]));
    let mut r = store.reader().unwrap();
    let poll = r.poll(&id, today).unwrap().unwrap();
    // Cast staged, found there; the writer's mix (250 ms after going idle,
    // as after a vote) settles it in its group, where its tag finds it.
    store
        .cast_later(&id, ballot(&[Some(2), Some(0)]), (None, Some(receipt.hash()), None), today, None)
        .unwrap()
        .committed_blocking()
        .unwrap();
    let key = image_of(&conn, store.keys(), &id).key;
    let staged = keys::staged_key(&key, &tag);
    assert_eq!(ballot_keys(store.path().unwrap()), [staged.to_vec()], "staged, where its tag says");
    assert_eq!(r.own_ballot(&poll, &receipt.hash()).unwrap(), theirs, "found staged");
    wait_for_mix(&dir.path().join("t.sqlite3"));
    let image = image_of(&conn, store.keys(), &id);
    let settled = image.settled_key(&tag).expect("its group has a key");
    assert_eq!(ballot_keys(store.path().unwrap()), [settled.to_vec()]);
    assert!(settled[0] != 0xff && !settled.windows(8).any(|w| staged.windows(8).any(|v| v == w)));
    assert_eq!(r.own_ballot(&poll, &receipt.hash()).unwrap(), theirs, "found settled");
    let mut elsewhere = settled;
    elsewhere[15] ^= 1;
    move_ballot(&conn, store.keys(), &id, &settled, &elsewhere);
    assert_eq!(r.own_ballot(&poll, &receipt.hash()).unwrap(), None, "not found elsewhere");
    move_ballot(&conn, store.keys(), &id, &elsewhere, &settled);
    store.amend(&id, receipt.hash(), Some(ballot(&[Some(1), None])), today).unwrap();
    wait_for_mix(&dir.path().join("t.sqlite3"));
    // A backup of a staged receipt ballot: the copy mixes it, where the
    // receipt still finds it.
    let now = image_of(&conn, store.keys(), &id);
    let at = now.settled_key(&tag).expect("its group has a key");
    move_ballot(&conn, store.keys(), &id, &at, &keys::staged_key(&now.key, &tag));
    drop(conn);
    let copy = dir.path().join("backup.sqlite3");
    store.backup(&copy).unwrap();
    assert!(ballot_keys(&copy).iter().all(|k| k[0] != 0xff), "nothing staged in the copy");
    drop(r);
    let keys_file = store.keys().path().to_owned();
    drop(store);
    let restored = Store::open_patient(&copy, &Keys::at(&keys_file)).unwrap();
    let mut r = restored.reader().unwrap();
    assert_eq!(r.own_ballot(&poll, &receipt.hash()).unwrap(), Some(ballot(&[Some(1), None])));
}

#[test]
fn counts_as_read_come_from_the_polls_own_snapshot_and_tallies_from_now() {
    let (_dir, store, id) = setup();
    let today = Day::today();
    store.cast(&id, ballot(&[Some(0), None]), today).unwrap();
    let mut r = store.reader().unwrap();
    let poll = r.poll(&id, today).unwrap().unwrap();
    store.cast(&id, ballot(&[Some(1), None]), today).unwrap();
    assert_eq!(r.tallies_as_read(&poll).unwrap().total, 1, "the counts read with the poll");
    assert_eq!(r.tallies_as_read(&poll).unwrap().total, 2, "used once: then read now");
    let poll = r.poll(&id, today).unwrap().unwrap();
    store.cast(&id, ballot(&[Some(2), None]), today).unwrap();
    assert_eq!(r.tallies(&poll).unwrap().total, 3, "tallies reads now");
    assert_eq!(r.tallies_as_read(&poll).unwrap().total, 3, "and drops what was kept");
}

// ---- Versions seen, and snapshots that began before them. ----

/// A read connection whose snapshot, once its first read has fixed it,
/// runs `between` before the reads of the snapshot's owner: what a vote
/// committed (and read by another worker) at that moment looks like.
struct LateSnapshot {
    inner: Box<dyn engine::ReadConn>,
    between: Box<dyn FnMut() + Send>,
}

impl engine::ReadConn for LateSnapshot {
    fn once(&mut self, f: &mut dyn FnMut(&mut dyn engine::Rows) -> Result<(), Error>) -> Result<(), Error> {
        self.inner.once(f)
    }

    fn snapshot(&mut self, f: &mut dyn FnMut(&mut dyn engine::Rows) -> Result<(), Error>) -> Result<(), Error> {
        let between = &mut self.between;
        self.inner.snapshot(&mut |rows| {
            rows.leases()?;
            between();
            f(rows)
        })
    }
}

/// An export reads a poll's counts and ballots in one snapshot. A vote
/// committed after that snapshot was fixed, and read by another reader,
/// is a newer version the export cannot see: its older counts are the
/// snapshot's own, not counts put back. (The instant the export's read
/// began must come before its snapshot, not after its first read.)
#[test]
fn an_export_is_not_a_rollback_when_a_newer_vote_was_seen_during_its_snapshot() {
    let (_dir, store, id) = setup();
    let today = Day::today();
    store.cast(&id, ballot(&[Some(0), None]), today).unwrap();
    let poll = store.reader().unwrap().poll(&id, today).unwrap().unwrap();
    let (other, voted) = (store.clone(), id.clone());
    let between = Box::new(move || {
        other.cast(&voted, ballot(&[Some(1), None]), today).unwrap();
        let mut r = other.reader().unwrap();
        let p = r.poll(&voted, today).unwrap().unwrap();
        assert_eq!(r.tallies(&p).unwrap().total, 2, "the newer version, seen by another reader");
    });
    let conn = LateSnapshot { inner: store.engine.reader().unwrap(), between };
    let mut r = Reader::new(Box::new(conn), store.keys.clone(), store.seen.clone());
    let ballots = r.ballots_with_days(&poll, today).expect("the snapshot's own counts are no rollback");
    assert_eq!(ballots.len(), 1, "the ballots of the snapshot");
    // (That a read beginning after the newer version was seen refuses
    // older counts is `writer::tests::rolled_back_counts_and_a_deleted_ballot_row_are_noticed`.)
}
