//! Tests of crypto-erasure at the store's level: what a copy holds, what the
//! key state opens, the daily re-wrap, bad key files, and the upgrade that
//! seals a database from before encryption.

use std::collections::BTreeMap;

use proptest::prelude::*;
use rusqlite::{Connection, params};
use serde_json::json;

use std::path::Path;

use super::*;
use crate::domain::{NewPoll, Slot};
use crate::secret::{AdminToken, InviteCode, Receipt};
use crate::store::seal::{DataKey, Place};
use crate::store::sqlite::testing::{
    FORMAT_TWO_VERSION, SCHEMA_VERSION, SEALED_VERSION, connect, legacy, migrate, open_keys,
};
use crate::store::testkit::{data_dir, key_of};
use crate::store::vocab::place;

const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

fn poll_json(title: &str, expiry: u16) -> NewPoll {
    NewPoll::from_json(&json!({
        "title": title, "lang": "en", "expiryDays": expiry,
        "questions": [
            {"label": "Q1 label marker", "options": ["option marker a", "b", "c"]},
            {"type": "ranked", "label": "Q2", "options": ["x", "y", "z"]}
        ]
    }))
    .unwrap()
}

fn a_ballot(poll: &NewPoll, first: usize) -> Ballot {
    Ballot::new(&poll.questions, vec![Some(crate::domain::Answer::Choice(first)), None]).unwrap()
}

fn create(store: &Store, poll: &NewPoll, today: Day) -> PollId {
    let id = PollId::generate().unwrap();
    store.create_poll(&id, &AdminToken::generate().unwrap().hash(), poll, &[], today).unwrap();
    id
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect()
}

fn holds(bytes: &[u8], marker: &str) -> bool {
    bytes.windows(marker.len()).any(|w| w == marker.as_bytes())
}

/// Every sealed value of a database, with the place it was sealed at.
fn sealed_values(conn: &Connection) -> Vec<(String, Place, Vec<u8>)> {
    let mut out = Vec::new();
    let polls: Vec<(String, Vec<u8>, Vec<u8>)> = conn
        .prepare("SELECT id, body, tallies FROM sealed_polls")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (id, body, tallies) in polls {
        out.push((id.clone(), place::body(&id), body));
        out.push((id.clone(), place::tallies(&id), tallies));
    }
    let ballots: Vec<(String, Vec<u8>, Vec<u8>)> = conn
        .prepare("SELECT poll_id, id, sealed FROM sealed_ballots")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (poll, key, sealed) in ballots {
        out.push((poll.clone(), place::ballot(&poll, &key), sealed));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// No sealed value opens anywhere but where it was sealed: not in
    /// another row, column or poll, not under another poll's key.
    #[test]
    fn no_sealed_value_opens_in_another_row_column_or_poll(votes in prop::collection::vec((0usize..2, 0usize..3), 1..12)) {
        let dir = data_dir();
        let store = Store::open(&dir.path().join("t.sqlite3")).unwrap();
        let today = Day::today();
        let poll = poll_json("Places", 30);
        let ids = [create(&store, &poll, today), create(&store, &poll, today)];
        for (which, first) in &votes {
            store.cast(&ids[*which], a_ballot(&poll, *first), today).unwrap();
        }
        let conn = Connection::open(store.path().unwrap()).unwrap();
        let keys: BTreeMap<String, DataKey> =
            ids.iter().map(|id| (id.as_str().to_owned(), key_of(&conn, store.keys(), id))).collect();
        let values = sealed_values(&conn);
        prop_assert!(values.len() >= 4 + votes.len());
        for (i, (poll, place, sealed)) in values.iter().enumerate() {
            prop_assert!(keys[poll].open(place, sealed).is_ok(), "opens where it was sealed");
            for (j, (other_poll, other_place, _)) in values.iter().enumerate() {
                if i == j {
                    continue;
                }
                for key in keys.values() {
                    prop_assert!(key.open(other_place, sealed).is_err(), "a value of {poll} opened at a place of {other_poll}");
                }
            }
            let elsewhere = keys.iter().find(|(p, _)| *p != poll).map(|(_, k)| k).unwrap();
            prop_assert!(elsewhere.open(place, sealed).is_err(), "opened under another poll's key");
        }
    }
}

/// While polls live, no byte of their text, options, labels, language
/// versions or media (nor a receipt's or code's plain hash) is in any file
/// or in a backup.
#[test]
fn no_marker_is_in_any_file_or_backup_of_live_polls() {
    let dir = data_dir();
    let store = Store::open(&dir.path().join("t.sqlite3")).unwrap();
    let today = Day::today();
    let poll = poll_json("Title marker zq", 30);
    let id = create(&store, &poll, today);
    let fr = PollPatch::from_json(&json!({"translations": {"fr": {"title": "Titre marqueur zq", "questions": [
        {"label": "Question marqueur", "options": ["choix marqueur", "b", "c"]}, {"label": "Q2", "options": ["x", "y", "z"]}]}}}))
    .unwrap();
    store.patch_poll(&id, &fr, today).unwrap();
    let picture = std::sync::Arc::new(crate::media::Clean {
        kind: crate::media::Kind::Image,
        mime: "image/png",
        bytes: b"\x89PNG picture bytes marker zq".repeat(5000),
        width: Some(1),
        height: Some(1),
    });
    let media = NewMedia {
        id: MediaId::generate().unwrap(),
        slot: Slot::Poll,
        clean: picture.clone(),
        alt: "Alt marker zq".into(),
    };
    store.attach_media(&id, media.clone(), today).unwrap();
    let receipt = Receipt::generate().unwrap();
    let code = InviteCode::generate().unwrap();
    store.issue_invites(&id, vec![code.hash()], today).unwrap();
    store
        .cast_later(&id, a_ballot(&poll, 1), (Some(code.hash()), Some(receipt.hash()), None), today, None)
        .unwrap()
        .committed_blocking()
        .unwrap();
    let backup = dir.path().join("copy.sqlite3");
    store.backup(&backup).unwrap();
    // And readable all the while.
    let mut r = store.reader().unwrap();
    let read = r.poll(&id, today).unwrap().unwrap();
    assert_eq!(read.title.as_str(), "Title marker zq");
    let (_, bytes) = r.media(&media.id, today, |b| Some((0, b.item.size as usize))).unwrap().unwrap();
    assert_eq!(bytes, picture.bytes);
    let (_, range) = r.media(&media.id, today, |_| Some((70_000, 1000))).unwrap().unwrap();
    assert_eq!(range, picture.bytes[70_000..71_000]);
    for (name, bytes) in files(&dir.path()) {
        for marker in [
            "Title marker zq",
            "Q1 label marker",
            "option marker a",
            "Titre marqueur zq",
            "Question marqueur",
            "choix marqueur",
            "picture bytes marker",
            "Alt marker zq",
        ] {
            assert!(!holds(&bytes, marker), "{marker} in {name}");
        }
        for hash in [receipt.hash().0, code.hash().0] {
            assert!(!bytes.windows(16).any(|w| w == &hash[..16]), "a plain hash in {name}");
        }
    }
}

/// The lease: once the key state has moved past a deleted poll's lease, no
/// copy of it opens, not even with the current key file; live polls still
/// open, were re-wrapped, and count exactly.
#[test]
fn an_old_copy_does_not_open_a_deleted_or_expired_poll_once_its_key_is_gone() {
    let dir = data_dir();
    let path = dir.path().join("t.sqlite3");
    let store = Store::open(&path).unwrap();
    let today = Day::today();
    let lease = store.keys().lease();
    let long = poll_json("Kept", 365);
    let short = poll_json("Short", 7);
    let [kept, deleted, expiring] =
        [create(&store, &long, today), create(&store, &long, today), create(&store, &short, today)];
    for (id, poll) in [(&kept, &long), (&deleted, &long), (&expiring, &short)] {
        for i in 0..3 {
            store.cast(id, a_ballot(poll, i), today).unwrap();
        }
    }
    let backup = dir.path().join("old.sqlite3");
    store.backup(&backup).unwrap();
    store.delete_poll(&deleted).unwrap();

    // Within the lease, the old copy still opens the deleted poll...
    let within = today.plus_days(lease);
    store.sweep(within).unwrap();
    let copy_within = |keys: &Keys| {
        let copy = Store::open_patient(&backup, keys).unwrap();
        let mut r = copy.reader().unwrap();
        (r.poll(&deleted, within).unwrap().is_some(), r.erased(&deleted).unwrap())
    };
    assert_eq!(copy_within(&Keys::apart_from(&path)), (true, false), "up to L days, a restored backup still opens");
    // ...from the day after its lease, never again.
    let after = within.next();
    let report = store.sweep(after).unwrap();
    assert_eq!(report.key_day, after);
    assert!(report.polls_rewrapped >= 1, "{report:?}");
    let copy = Store::open_patient(&backup, &Keys::apart_from(&path)).unwrap();
    let mut r = copy.reader().unwrap();
    assert!(r.poll(&deleted, after).unwrap().is_none());
    assert!(r.erased(&deleted).unwrap(), "its row is there, its key is not");
    // The expired poll: unreadable from the day after its last day, in the
    // copy as in the live database (where the sweep erased it).
    assert!(r.poll(&expiring, today).unwrap().is_none(), "{} is past the expiry day {}", after, today.plus_days(7));
    assert!(r.erased(&expiring).unwrap());
    drop(r);
    drop(copy);
    // The live poll: re-wrapped under a later day, counts exact.
    let mut r = store.reader().unwrap();
    let poll = r.poll(&kept, after).unwrap().expect("a live poll still opens");
    assert_eq!(r.tallies(&poll).unwrap().total, 3);
    let conn = Connection::open(&path).unwrap();
    let key_day: String =
        conn.query_row("SELECT key_day FROM sealed_polls WHERE id = ?1", [kept.as_str()], |x| x.get(0)).unwrap();
    assert_eq!(Day::parse(&key_day).unwrap(), after.plus_days(lease), "re-wrapped under today + L");
    assert!(r.poll(&expiring, after).unwrap().is_none());
    let left: i64 = conn.query_row("SELECT count(*) FROM sealed_polls", [], |x| x.get(0)).unwrap();
    assert_eq!(left, 1, "the sweep erased the expired poll");
    // A shortened poll moves its lease at once.
    let patch = PollPatch::from_json(&json!({"expiryDays": 7})).unwrap();
    store.patch_poll(&kept, &patch, after).unwrap();
    let key_day: String =
        conn.query_row("SELECT key_day FROM sealed_polls WHERE id = ?1", [kept.as_str()], |x| x.get(0)).unwrap();
    assert_eq!(Day::parse(&key_day).unwrap(), after.plus_days(6), "its last day, before the lease's end");
}

/// A node down for 40 days (L = 7) re-wraps from its old key state before
/// moving it, and loses no live poll.
#[test]
fn a_store_down_for_forty_days_rewraps_and_loses_no_live_poll() {
    let dir = data_dir();
    let store = Store::open(&dir.path().join("t.sqlite3")).unwrap();
    let today = Day::today();
    let poll = poll_json("Long", 365);
    let ids: Vec<PollId> = (0..5).map(|_| create(&store, &poll, today)).collect();
    for (i, id) in ids.iter().enumerate() {
        for _ in 0..=i {
            store.cast(id, a_ballot(&poll, i % 3), today).unwrap();
        }
    }
    let back = today.plus_days(40);
    let report = store.sweep(back).unwrap().key_day;
    assert_eq!(report, back);
    let mut r = store.reader().unwrap();
    for (i, id) in ids.iter().enumerate() {
        let p = r.poll(id, back).unwrap().expect("every live poll survives");
        assert_eq!(r.tallies(&p).unwrap().total, i as u64 + 1);
    }
}

/// polld without cron: the janitor's day change alone keeps every live poll
/// readable across three times the lease, day after day.
#[test]
fn day_changes_alone_keep_every_live_poll_readable() {
    let dir = data_dir();
    let store = Store::open(&dir.path().join("t.sqlite3")).unwrap();
    let today = Day::today();
    let poll = poll_json("Daily", 365);
    let id = create(&store, &poll, today);
    store.cast(&id, a_ballot(&poll, 2), today).unwrap();
    let lease = store.keys().lease();
    let mut r = store.reader().unwrap();
    for n in 1..=3 * lease {
        let day = today.plus_days(n);
        store.sweep(day).unwrap();
        assert_eq!(store.keys().day(), day);
        let p = r.poll(&id, day).unwrap().unwrap_or_else(|| panic!("lost on day {n}"));
        assert_eq!(r.tallies(&p).unwrap().votes[0], vec![0, 0, 1]);
        assert!(store.keys().wrap_key(day.previous()).is_none(), "yesterday's key is gone");
    }
    // Without the day changes the same poll would be gone: its lease ran out.
    let dir2 = data_dir();
    let other = Store::open(&dir2.path().join("t.sqlite3")).unwrap();
    let id2 = create(&other, &poll, today);
    other.keys().advance(today.plus_days(lease + 1)).unwrap();
    assert!(other.reader().unwrap().poll(&id2, today).unwrap().is_none(), "the lease is what keeps it");
}

/// A reader remembers the data keys it unwrapped (`KeyMemo`), but never
/// past the keyring: once the day of a poll's lease is gone, the same
/// reader that opened it a moment ago reads it as erased, and a poll
/// re-wrapped meanwhile is read with its new wrapping.
#[test]
fn a_reader_remembers_no_key_the_keyring_has_lost() {
    let dir = data_dir();
    let store = Store::open(&dir.path().join("t.sqlite3")).unwrap();
    let today = Day::today();
    let poll = poll_json("Remembered", 365);
    let (kept, lost) = (create(&store, &poll, today), create(&store, &poll, today));
    let mut r = store.reader().unwrap();
    for id in [&kept, &lost] {
        let p = r.poll(id, today).unwrap().expect("live");
        assert_eq!(r.tallies(&p).unwrap().votes[0], vec![0, 0, 0]);
    }
    // The next day's key work re-wraps both; the memo must not serve the
    // old wrapping, or the check below would still pass on a stale key.
    let next = today.plus_days(1);
    store.sweep(next).unwrap();
    assert_eq!(r.poll(&kept, next).unwrap().expect("re-wrapped, still live").title.as_str(), "Remembered");
    // Past the lease without re-wrapping: both keys are gone.
    store.keys().advance(next.plus_days(store.keys().lease() + 1)).unwrap();
    assert!(r.poll(&lost, next).unwrap().is_none(), "a remembered key outlived its day");
    assert!(r.poll_with_tallies(&kept, next).unwrap().is_none(), "a remembered key outlived its day");
}

/// A reader forgets exactly the keys that went, at once and without
/// reading anything (a worker thread may serve nothing for hours): a
/// mixed poll's old key and a deleted poll's key go from its memo as the
/// writer commits, while it keeps the other polls' (on a busy node a mix
/// is never far, and a memo emptied by each would hardly serve); the day's
/// key work moves the key state, and every key goes.
#[test]
fn a_reader_forgets_the_key_of_a_mixed_or_deleted_poll_only() {
    let dir = data_dir();
    let store = Store::open(&dir.path().join("t.sqlite3")).unwrap();
    let today = Day::today();
    let poll = poll_json("Remembered apart", 30);
    let (mixed, deleted, kept) =
        (create(&store, &poll, today), create(&store, &poll, today), create(&store, &poll, today));
    let sorted = |ids: &[&PollId]| {
        let mut ids: Vec<String> = ids.iter().map(|id| id.as_str().to_owned()).collect();
        ids.sort();
        ids
    };
    let mut r = store.reader().unwrap();
    for id in [&mixed, &deleted, &kept] {
        r.poll(id, today).unwrap().expect("live");
    }
    // From here on the reader is idle: `remembered` only looks at its memo.
    let r = r;
    assert_eq!(r.remembered(), sorted(&[&mixed, &deleted, &kept]));
    store.delete_poll(&deleted).unwrap();
    assert_eq!(r.remembered(), sorted(&[&mixed, &kept]), "a deleted poll's key goes as its DELETE is answered");
    // A vote: its poll is mixed under a new data key soon after.
    store.cast(&mixed, a_ballot(&poll, 0), today).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while r.remembered().contains(&mixed.as_str().to_owned()) {
        assert!(std::time::Instant::now() < deadline, "the mix did not take its poll's old key from an idle reader");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(r.remembered(), sorted(&[&kept]), "the other polls' keys stay");
    store.sweep(today).unwrap();
    assert!(r.remembered().is_empty(), "the key state moved: every key goes");
    let mut r = r;
    r.poll(&mixed, today).unwrap().expect("live, under its new key");
    assert!(r.poll(&kept, today).unwrap().is_some());
    assert_eq!(r.remembered(), sorted(&[&mixed, &kept]));
}

/// polld's janitor expires remembered keys on a quiet server too: an entry
/// older than `MEMO_TTL` goes at its call, from every reader's memo, with
/// no read; a younger one stays.
#[test]
fn remembered_keys_expire_at_the_janitors_call_without_a_read() {
    let dir = data_dir();
    let store = Store::open(&dir.path().join("t.sqlite3")).unwrap();
    let today = Day::today();
    let poll = poll_json("Remembered briefly", 30);
    let id = create(&store, &poll, today);
    let (mut r, mut other) = (store.reader().unwrap(), store.reader().unwrap());
    r.poll(&id, today).unwrap().expect("live");
    other.poll(&id, today).unwrap().expect("live");
    let (r, other) = (r, other);
    store.expire_key_memos();
    assert_eq!(r.remembered(), vec![id.as_str().to_owned()], "younger than the TTL: kept");
    let ttl = crate::store::MEMO_TTL;
    store.seen.expire_keys(std::time::Instant::now() + ttl - std::time::Duration::from_secs(5));
    assert_eq!(other.remembered(), vec![id.as_str().to_owned()], "still younger than the TTL: kept");
    store.seen.expire_keys(std::time::Instant::now() + ttl);
    assert!(r.remembered().is_empty(), "an entry older than the TTL outlived the janitor's call");
    assert!(other.remembered().is_empty(), "every reader's memo expires");
}

/// The race of a read with a forget: a read that found the poll's row
/// before the writer erased the poll, or moved the key state, unwraps the
/// old key after the writer has emptied the memos. That key serves the
/// read, but stays in no memo (else an idle reader would keep it).
#[test]
fn a_key_unwrapped_across_a_forget_is_not_remembered() {
    let dir = data_dir();
    let store = Store::open(&dir.path().join("t.sqlite3")).unwrap();
    let today = Day::today();
    let poll = poll_json("Raced", 30);
    let (deleted, rolled) = (create(&store, &poll, today), create(&store, &poll, today));
    // With nothing forgotten in between, the same path remembers the key.
    let mut calm = store.reader().unwrap();
    calm.unwrap_across(&rolled, today, || {}).unwrap();
    assert_eq!(calm.remembered(), vec![rolled.as_str().to_owned()]);
    drop(calm);
    let mut r = store.reader().unwrap();
    // The row read, then the poll deleted, then its (old) key unwrapped.
    r.unwrap_across(&deleted, today, || store.delete_poll(&deleted).unwrap()).unwrap();
    assert!(r.remembered().is_empty(), "a deleted poll's key, unwrapped from a row read before, was remembered");
    // The same across the day's key work (every key goes).
    r.unwrap_across(&rolled, today, || drop(store.sweep(today).unwrap())).unwrap();
    assert!(r.remembered().is_empty(), "a key unwrapped from a row read before the key work was remembered");
    assert!(r.poll(&deleted, today).unwrap().is_none());
}

/// A missing, truncated, foreign or damaged key file: a clear error naming
/// it, and nothing touched (database and key file byte for byte).
#[test]
fn a_bad_key_file_is_a_clear_error_and_touches_nothing() {
    let dir = data_dir();
    let path = dir.path().join("t.sqlite3");
    let store = Store::open(&path).unwrap();
    create(&store, &poll_json("Touch nothing", 30), Day::today());
    drop(store);
    let keys = Keys::apart_from(&path);
    let good = std::fs::read(&keys.path).unwrap();
    let db = std::fs::read(&path).unwrap();
    let other_dir = data_dir();
    drop(Store::open(&other_dir.path().join("o.sqlite3")).unwrap());
    let foreign = std::fs::read(Keys::apart_from(&other_dir.path().join("o.sqlite3")).path).unwrap();
    let mut flipped = good.clone();
    for b in &mut flipped[40..] {
        *b ^= 0x55;
    }
    let mut newer = good.clone();
    newer[8] = 9;
    for (what, content, expect) in [
        ("missing", None, "is missing"),
        ("truncated", Some(good[..100].to_vec()), "truncated"),
        ("foreign", Some(foreign), "another database"),
        ("damaged", Some(flipped), "corrupted"),
        ("newer", Some(newer), "newer than this anonpoll"),
    ] {
        match &content {
            Some(c) => write_private(&keys.path, c),
            None => std::fs::remove_file(&keys.path).unwrap(),
        }
        let err = Store::open(&path).err().unwrap_or_else(|| panic!("{what} key file accepted"));
        let text = format!("{err:#}");
        assert!(text.contains(expect) && text.contains("t.keys"), "{what}: {text}");
        assert!(err.chain().any(|c| c.is::<crate::keyring::KeyError>()), "{what}: typed for pollctl's exit code");
        assert_eq!(std::fs::read(&keys.path).ok(), content, "{what}: the key file untouched (never created anew)");
        assert_eq!(std::fs::read(&path).unwrap(), db, "{what}: the database untouched");
        write_private(&keys.path, &good);
    }
    drop(Store::open(&path).unwrap());
}

/// Writes a key file as its owner alone may read it (as one is made).
fn write_private(path: &Path, content: &[u8]) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, content).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// A database of schema 8 (before encryption): sealed in place at the first
/// open, resumably, with everything it held; receipts given before still
/// open their ballots, codes still vote once; no cleartext is left.
#[test]
fn a_database_from_before_encryption_is_sealed_in_place() {
    let dir = data_dir();
    let path = dir.path().join("t.sqlite3");
    migrate(&path, BUSY_TIMEOUT, 8).unwrap();
    let today = Day::today();
    let conn = Connection::open(&path).unwrap();
    let questions = r#"[{"type":"single","label":"Old label marker","options":["Old option marker","b","c"]},{"type":"single","label":"Q2","options":["x","y"]}]"#;
    let token = AdminToken::generate().unwrap();
    let receipt = Receipt::generate().unwrap();
    let code = InviteCode::generate().unwrap();
    let legacy_keys = crate::store::keys::before_sealing_keys(&receipt.hash());
    let polls = ["OLDPOLL000000001", "OLDPOLL000000002", "OLDPOLL000000003"];
    for (n, id) in polls.iter().enumerate() {
        conn.execute(
            "INSERT INTO polls (id, token_sha256, title, lang, results_public, created_on, expires_on, questions,
                                total_responses, duplicate_check, vote_changes, closes_on)
             VALUES (?1, ?2, ?3, 'en', 0, ?4, ?5, ?6, 2, 'invite', 1, ?7)",
            params![
                id,
                &token.hash().0[..],
                format!("Old title marker {n}"),
                today.previous().to_string(),
                today.plus_days(30).to_string(),
                questions,
                today.plus_days(20).to_string()
            ],
        )
        .unwrap();
        conn.execute("INSERT INTO translations (poll_id, lang, body) VALUES (?1, 'fr', ?2)", params![
            id,
            r#"{"title":"Vieux titre marqueur","questions":[{"label":"l","options":["a","b","c"]},{"label":"m","options":["x","y"]}]}"#
        ])
        .unwrap();
        conn.execute(
            "INSERT INTO responses (poll_id, id, cast_on, choices) VALUES (?1, ?2, ?3, '[0,1]')",
            params![id, &legacy_keys[1][..], today.previous().to_string()],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO responses (poll_id, id, cast_on, choices) VALUES (?1, ?2, ?3, '[2,null]')",
            params![id, &[0x42u8; 16][..], today.to_string()],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO invites (poll_id, code_sha256, used) VALUES (?1, ?2, 0)",
            params![id, &code.hash().0[..]],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO media (id, poll_id, question, kind, mime, size, sha256, alt, bytes)
             VALUES (?1, ?2, NULL, 'image', 'image/png', 22, zeroblob(32), 'Old alt marker', CAST('Old media bytes marker' AS BLOB))",
            params![format!("OLDMEDIA0000000{n}"), id],
        )
        .unwrap();
    }
    drop(conn);
    // Interrupted after one poll: the next open goes on from there.
    {
        migrate(&path, BUSY_TIMEOUT, SEALED_VERSION).unwrap();
        let conn = connect(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE, BUSY_TIMEOUT).unwrap();
        let keys = open_keys(&conn, &Keys::apart_from(&path), today).unwrap();
        assert_eq!(legacy::seal_all(&conn, &keys, today, 1).unwrap(), 1);
        assert!(legacy::pending(&conn).unwrap());
        assert!(migrate(&path, BUSY_TIMEOUT, SCHEMA_VERSION).is_err(), "010 refuses to drop unsealed polls");
        let _ = FORMAT_TWO_VERSION;
    }
    let store = Store::open(&path).unwrap();
    let conn = Connection::open(&path).unwrap();
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let mut r = store.reader().unwrap();
    for id in polls {
        let id = PollId::parse(id).unwrap();
        let poll = r.poll(&id, today).unwrap().expect("every poll kept");
        assert!(poll.title.as_str().starts_with("Old title marker"));
        assert_eq!(poll.closes_on, Some(today.plus_days(20)));
        assert!(poll.vote_changes && poll.duplicate_check == crate::domain::DuplicateCheck::Invite);
        assert_eq!(poll.translations.len(), 1);
        assert_eq!(poll.media.len(), 1);
        let (_, bytes) = r.media(&poll.media[0].id, today, |b| Some((0, b.item.size as usize))).unwrap().unwrap();
        assert_eq!(bytes, b"Old media bytes marker");
        let t = r.tallies(&poll).unwrap();
        assert_eq!(
            (t.total, t.votes[0].clone(), t.by_day.clone()),
            (2, vec![1, 0, 1], vec![(today.previous(), 1), (today, 1)])
        );
        let b = r.own_ballot(&poll, &receipt.hash()).unwrap();
        assert_eq!(b.map(|b| b.to_stored()), Some("[0,1]".to_owned()), "a receipt from before opens its ballot");
        store.amend(&id, receipt.hash(), None, today).unwrap();
        assert_eq!(r.tallies(&poll).unwrap().total, 1);
        assert_eq!(r.invite_counts(&poll).unwrap(), (1, 0));
        let ballot = Ballot::of_choices(&poll.questions, &[Some(1), None]).unwrap();
        store
            .cast_later(&id, ballot.clone(), (Some(code.hash()), None, None), today, None)
            .unwrap()
            .committed_blocking()
            .unwrap();
        assert!(
            store
                .cast_later(&id, ballot, (Some(code.hash()), None, None), today, None)
                .unwrap()
                .committed_blocking()
                .is_err()
        );
    }
    drop(r);
    drop(store);
    for (name, bytes) in files(&dir.path()) {
        for marker in [
            "Old title marker",
            "Old label marker",
            "Old option marker",
            "Vieux titre marqueur",
            "Old alt marker",
            "Old media bytes marker",
        ] {
            assert!(!holds(&bytes, marker), "{marker} survived the upgrade in {name}");
        }
        assert!(!bytes.windows(32).any(|w| w == code.hash().0), "a code's plain hash survived in {name}");
    }
}

/// One poll whose wrapped key does not open (a flipped bit, a row restored
/// from another installation) or whose key day lies beyond any lease does
/// not stop the day's key work for the others: it is set aside, named, and
/// the key state moves on; once its key day is gone, it is erased.
#[test]
fn a_damaged_poll_row_is_set_aside_and_the_key_state_moves_on() {
    let dir = data_dir();
    let path = dir.path().join("t.sqlite3");
    let store = Store::open(&path).unwrap();
    let today = Day::today();
    let poll = poll_json("Rows", 365);
    let [good, flipped, far] = [(); 3].map(|()| create(&store, &poll, today));
    store.cast(&good, a_ballot(&poll, 1), today).unwrap();
    let conn = Connection::open(&path).unwrap();
    conn.busy_timeout(BUSY_TIMEOUT).unwrap();
    let mut wrapped: Vec<u8> =
        conn.query_row("SELECT data_key FROM sealed_polls WHERE id = ?1", [flipped.as_str()], |r| r.get(0)).unwrap();
    wrapped[30] ^= 1;
    conn.execute("UPDATE sealed_polls SET data_key = ?2 WHERE id = ?1", params![flipped.as_str(), wrapped]).unwrap();
    conn.execute("UPDATE sealed_polls SET key_day = '9999-12-31' WHERE id = ?1", [far.as_str()]).unwrap();
    let next = today.next();
    let report = store.sweep(next).unwrap();
    assert_eq!(report.key_day, next, "the key state moved on");
    let mut aside = report.polls_set_aside.clone();
    aside.sort();
    let mut expected = vec![flipped.as_str().to_owned(), far.as_str().to_owned()];
    expected.sort();
    assert_eq!(aside, expected);
    let mut r = store.reader().unwrap();
    let p = r.poll(&good, next).unwrap().expect("the good poll is unharmed");
    assert_eq!(r.tallies(&p).unwrap().total, 1);
    // pollctl check names them.
    let named: Vec<String> = store.check_polls().unwrap().into_iter().map(|c| c.poll).collect();
    assert!(named.contains(&flipped.as_str().to_owned()), "{named:?}");
    // Once the key state is past the damaged row's key day, it is erased.
    let key_day: String =
        conn.query_row("SELECT key_day FROM sealed_polls WHERE id = ?1", [flipped.as_str()], |r| r.get(0)).unwrap();
    let beyond = Day::parse(&key_day).unwrap().next();
    let report = store.sweep(beyond).unwrap();
    assert_eq!(report.key_day, beyond);
    let report = store.sweep(beyond.next()).unwrap();
    assert!(!report.polls_set_aside.contains(&flipped.as_str().to_owned()), "{report:?}");
    let left: i64 =
        conn.query_row("SELECT count(*) FROM sealed_polls WHERE id = ?1", [flipped.as_str()], |r| r.get(0)).unwrap();
    assert_eq!(left, 0, "erased once nothing could open it");
    assert!(r.poll(&good, beyond).unwrap().is_some(), "the good poll still opens");
}

/// The key file is checked, not trusted: one others can read is refused
/// with the command that fixes it; one behind the day the database's key
/// state has reached (an old copy, from a backup) is refused, or used with
/// a warning when the operator says so; one day behind (a node whose day's
/// work has not run yet) is taken.
#[test]
fn an_exposed_or_rolled_back_key_file_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = data_dir();
    let path = dir.path().join("t.sqlite3");
    let store = Store::open(&path).unwrap();
    let today = Day::today();
    create(&store, &poll_json("Checked", 365), today);
    let keys = store.keys().path().to_owned();
    let old_copy = std::fs::read(&keys).unwrap();
    store.sweep(today.plus_days(1)).unwrap();
    let one_day = std::fs::read(&keys).unwrap();
    store.sweep(today.plus_days(3)).unwrap();
    drop(store);
    let reopen = |accept: bool| {
        let k = Keys { path: keys.clone(), lease_days: None, accept_behind: accept };
        Store::open_db(&path, &k, WriterConfig::default())
    };
    // Readable by others.
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = format!("{:#}", reopen(false).err().expect("a 0644 key file is refused"));
    assert!(err.contains("chmod 600") && err.contains("0644"), "{err}");
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Rolled back three days: refused, unless told.
    let current = std::fs::read(&keys).unwrap();
    write_private(&keys, &old_copy);
    let err = reopen(false).err().expect("an old copy of the key file is refused");
    assert!(err.chain().any(|c| c.is::<crate::keyring::KeyError>()), "typed for pollctl's exit code");
    assert!(format!("{err:#}").contains("old"), "{err:#}");
    drop(reopen(true).expect("used when the operator says so"));
    // One day behind the database: taken.
    write_private(&keys, &current);
    drop(reopen(false).unwrap());
    let _ = one_day;
}

/// A key file that could not move (its folder full or read-only, day after
/// day) is the one real key file, not an old copy: the database never notes
/// a day more than one past the file's, so the next start takes it.
#[test]
fn a_key_file_that_could_not_move_is_not_taken_for_an_old_copy() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data").join("t.sqlite3");
    let keys = dir.path().join("keys").join("t.keys");
    let store = Store::open_db(&db, &Keys::at(&keys), WriterConfig::default()).unwrap();
    let today = Day::today();
    let aside = dir.path().join("aside.keys");
    std::fs::rename(&keys, &aside).unwrap();
    std::fs::create_dir(&keys).unwrap();
    for d in 1..=3 {
        assert!(store.sweep(today.plus_days(d)).is_err(), "the key state cannot move");
    }
    drop(store);
    std::fs::remove_dir(&keys).unwrap();
    std::fs::rename(&aside, &keys).unwrap();
    let again = Store::open_db(&db, &Keys::at(&keys), WriterConfig::default());
    assert!(again.is_ok(), "the only key file there is, refused: {:?}", again.err());
}

/// The lease is stored once, in the database: a process opened without
/// `--key-lease-days` (the cron's `pollctl sweep`) wraps for polld's lease,
/// not the default.
#[test]
fn the_lease_is_the_databases_for_every_process() {
    let dir = data_dir();
    let path = dir.path().join("t.sqlite3");
    let keys = Keys::apart_from(&path);
    let polld = Store::open_db(&path, &Keys { lease_days: Some(3), ..keys.clone() }, WriterConfig::default()).unwrap();
    let today = Day::today();
    let id = create(&polld, &poll_json("Leased", 365), today);
    assert_eq!(polld.keys().lease(), 3);
    drop(polld);
    let cron = Store::open_patient(&path, &keys).unwrap();
    assert_eq!(cron.keys().lease(), 3, "the database's lease, not the default");
    cron.sweep(today.next()).unwrap();
    let conn = Connection::open(&path).unwrap();
    let key_day: String =
        conn.query_row("SELECT key_day FROM sealed_polls WHERE id = ?1", [id.as_str()], |r| r.get(0)).unwrap();
    assert_eq!(Day::parse(&key_day).unwrap(), today.next().plus_days(3));
}
