//! Tests of the upgrade from format 1 to format 2 (`writer::upgrade`): a
//! database as the last release wrote it, built row by row, then opened by
//! this one.

use rusqlite::{Connection, params};
use serde_json::json;

use super::*;
use crate::domain::{NewPoll, PollPatch};
use crate::keyring::Keyring;
use crate::secret::{AdminToken, InviteCode, MediaId, Receipt};
use crate::store::rows::Tag;
use crate::store::seal::{self, DataKey, Place};
use crate::store::sqlite::SqliteRows;
use crate::store::sqlite::testing::{FORMAT_TWO_VERSION, SCHEMA_VERSION, connect, migrate, open_keys};
use crate::store::testkit::{data_dir, image_of, key_of};
use crate::store::vocab::place;

const BUSY: std::time::Duration = std::time::Duration::from_secs(5);

fn poll_json(changes: bool) -> NewPoll {
    NewPoll::from_json(&json!({
        "title": "Format one", "lang": "en", "expiryDays": 30, "voteChanges": changes,
        "questions": [
            {"label": "Q1", "options": ["a", "b", "c"]},
            {"type": "ranked", "label": "Q2", "options": ["x", "y", "z"]}
        ]
    }))
    .unwrap()
}

fn a_ballot(poll: &NewPoll, first: usize) -> Ballot {
    Ballot::new(&poll.questions, vec![Some(crate::domain::Answer::Choice(first)), None]).unwrap()
}

/// A poll as format 1 wrote it, in a database at schema `FORMAT_TWO_VERSION`
/// (011 applied, the pass not run): its own data key, its ballots at the
/// keys given (format 1's plaintext), its codes with a `used` flag.
struct FormatOne {
    id: PollId,
    key: DataKey,
}

impl FormatOne {
    /// Under `key` (drawn when `None`).
    fn write(
        conn: &Connection,
        keys: &Keyring,
        (poll, key): (NewPoll, Option<DataKey>),
        doc_edit: impl FnOnce(&mut rows::Doc),
        ballots: &[([u8; 16], Ballot)],
        codes: &[(&InviteCode, bool)],
    ) -> FormatOne {
        let today = Day::today();
        let id = PollId::generate().unwrap();
        let key = key.unwrap_or_else(|| DataKey::generate().unwrap());
        let expires = today.plus_days(30);
        let key_day = keys.lease_day(expires.previous(), today);
        let wrapped = key.wrap(&keys.wrap_key(key_day).unwrap(), &keys.ring(), id.as_str(), key_day).unwrap();
        let mut doc = rows::Doc::new(&AdminToken::generate().unwrap().hash(), &poll, Vec::new()).unwrap();
        doc.invite_key = None;
        doc_edit(&mut doc);
        let layout = rows::Layout::of(&poll.questions);
        let mut tallies = rows::empty_tallies(&layout);
        for (_, b) in ballots {
            rows::tally(&mut tallies, &layout, b, Some(today), 1).unwrap();
        }
        conn.execute(
            "INSERT INTO sealed_polls (id, created_on, expires_on, key_day, data_key, body, tallies)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                id.as_str(),
                today.to_string(),
                expires.to_string(),
                key_day.to_string(),
                wrapped,
                key.seal(&place::body(id.as_str()), &doc.to_bytes().unwrap()).unwrap(),
                key.seal(&place::tallies(id.as_str()), &rows::tallies_bytes(&tallies).unwrap()).unwrap()
            ],
        )
        .unwrap();
        for (k, b) in ballots {
            let mut plain = today.to_string().into_bytes();
            plain.extend_from_slice(b.to_stored().as_bytes());
            let plain = seal::padded(plain, rows::ballot_width(&poll.questions), b' ');
            conn.execute(
                "INSERT INTO sealed_ballots (poll_id, id, sealed) VALUES (?1, ?2, ?3)",
                params![id.as_str(), &k[..], key.seal(&place::ballot(id.as_str(), k), &plain).unwrap()],
            )
            .unwrap();
        }
        for (c, used) in codes {
            conn.execute(
                "INSERT INTO sealed_invites (poll_id, code_mac, used) VALUES (?1, ?2, ?3)",
                params![id.as_str(), &key.mac(b"invite", &[&c.hash().0])[..], used],
            )
            .unwrap();
        }
        FormatOne { id, key }
    }
}

/// A database at 011 with its key file, ready for [`FormatOne::write`].
fn format_one_db(dir: &crate::store::testkit::DataDir) -> (std::path::PathBuf, Connection, Keyring) {
    let path = dir.path().join("t.sqlite3");
    migrate(&path, BUSY, FORMAT_TWO_VERSION).unwrap();
    let conn = connect(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE, BUSY).unwrap();
    let keys = open_keys(&conn, &Keys::apart_from(&path), Day::today()).unwrap();
    (path, conn, keys)
}

/// A ballot key of format 1 that is not staged.
fn row_key(i: u8) -> [u8; 16] {
    let mut k = [0u8; 16];
    crate::secret::random_bytes(&mut k).unwrap();
    k[0] = i % 0xf0;
    k
}

fn schema_of(conn: &Connection) -> (i64, i64) {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    let tables: i64 =
        conn.query_row("SELECT count(*) FROM sqlite_master WHERE name = 'sealed_invites'", [], |r| r.get(0)).unwrap();
    (version, tables)
}

/// A database of format 1 (schema 10, as the last release wrote it): each
/// poll is brought to format 2 at the first open. A receipt given then
/// still finds its ballot (through the hashes of format 1 the document now
/// keeps), a code that voted then stays spent and the others still vote
/// once, its media opens under a key of its own, and every value of before
/// is left only under the old data key.
#[test]
fn a_database_of_format_one_is_brought_to_format_two() {
    let dir = data_dir();
    let (path, conn, keys) = format_one_db(&dir);
    let today = Day::today();
    let poll = poll_json(true);
    let picture = b"format one media bytes".repeat(10);
    let media_id = MediaId::generate().unwrap();
    let padded_len = seal::bucket(picture.len());
    let receipt = Receipt::generate().unwrap();
    let key = DataKey::generate().unwrap();
    let then = {
        let mut out = [0u8; 16];
        for round in 0..=u8::MAX {
            out.copy_from_slice(&key.mac(b"receipt settled", &[&[round], &receipt.hash().0])[..16]);
            if out[0] != 0xff {
                break;
            }
        }
        out
    };
    let codes: Vec<InviteCode> = (0..3).map(|_| InviteCode::generate().unwrap()).collect();
    let (mine, other) = (a_ballot(&poll, 0), a_ballot(&poll, 2));
    let media = serde_json::from_value(json!({
        "id": media_id.as_str(), "question": null, "kind": "image", "mime": "image/png",
        "size": picture.len(), "padded": padded_len, "sha256": crate::secret::hex(&[0u8; 32]),
        "alt": "", "width": 1, "height": 1
    }))
    .unwrap();
    let f = FormatOne::write(
        &conn,
        &keys,
        (poll.clone(), Some(key)),
        |doc| {
            doc.duplicate_check = crate::domain::DuplicateCheck::Invite;
            doc.media.push(media);
        },
        &[(then, mine.clone()), ([0x21; 16], other.clone())],
        &codes.iter().enumerate().map(|(i, c)| (c, i == 0)).collect::<Vec<_>>(),
    );
    let sealed_media = f
        .key
        .seal_pieces(&place::media(f.id.as_str(), media_id.as_str()), &seal::padded(picture.clone(), padded_len, 0))
        .unwrap();
    conn.execute(
        "INSERT INTO sealed_media (id, poll_id, bytes) VALUES (?1, ?2, ?3)",
        params![media_id.as_str(), f.id.as_str(), sealed_media],
    )
    .unwrap();
    let old_values: Vec<(Place, Vec<u8>)> = vec![(place::ballot(f.id.as_str(), &then), {
        conn.query_row("SELECT sealed FROM sealed_ballots WHERE id = ?1", [&then[..]], |r| r.get(0)).unwrap()
    })];
    drop(conn);
    drop(keys);

    let store = Store::open(&path).unwrap();
    let conn = Connection::open(&path).unwrap();
    assert_eq!(schema_of(&conn), (SCHEMA_VERSION, 0), "format 1's invite rows are gone");
    let format: i64 = conn.query_row("SELECT format FROM sealed_polls", [], |r| r.get(0)).unwrap();
    assert_eq!(format, 2);
    let id = &f.id;
    let mut r = store.reader().unwrap();
    let read = r.poll(id, today).unwrap().expect("the poll is kept");
    assert_eq!(r.tallies(&read).unwrap().total, 2);
    assert_eq!(r.own_ballot(&read, &receipt.hash()).unwrap(), Some(mine.clone()), "a receipt of format 1 finds it");
    assert_eq!(r.invite_counts(&read).unwrap(), (3, 1), "the code that voted stays spent");
    let (_, bytes) = r.media(&media_id, today, |b| Some((0, b.item.size as usize))).unwrap().unwrap();
    assert_eq!(bytes, picture);
    let vote = |code: &InviteCode| {
        store
            .cast_later(id, a_ballot(&poll, 1), (Some(code.hash()), None, None), today, None)
            .unwrap()
            .committed_blocking()
    };
    assert!(vote(&codes[0]).is_err(), "spent before the upgrade");
    vote(&codes[1]).unwrap();
    assert!(vote(&codes[1]).is_err(), "spent once");
    store.amend(id, receipt.hash(), Some(a_ballot(&poll, 1)), today).unwrap();
    assert_eq!(r.own_ballot(&read, &receipt.hash()).unwrap(), Some(a_ballot(&poll, 1)));
    let now = key_of(&conn, store.keys(), id);
    for (at, sealed) in &old_values {
        assert!(now.open(at, sealed).is_err(), "a value of format 1 opens under the poll's key now");
    }
}

/// Several processes may run the pass at once (nodes starting together,
/// `pollctl` beside polld): each re-reads a poll's format under its lock,
/// and a poll already moved is left as it is.
#[test]
fn a_poll_already_upgraded_is_not_upgraded_again() {
    let dir = data_dir();
    let (_path, mut conn, keys) = format_one_db(&dir);
    let today = Day::today();
    let poll = poll_json(true);
    let codes: Vec<InviteCode> = (0..3).map(|_| InviteCode::generate().unwrap()).collect();
    let f = FormatOne::write(
        &conn,
        &keys,
        (poll.clone(), None),
        |doc| doc.duplicate_check = crate::domain::DuplicateCheck::Invite,
        &[],
        &codes.iter().map(|c| (c, false)).collect::<Vec<_>>(),
    );
    let seen = Seen::default();
    let upgrade = |conn: &mut Connection| {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).unwrap();
        let done = writer::upgrade::upgrade_poll(&mut SqliteRows(&tx), &keys, &seen, f.id.as_str(), today).unwrap();
        tx.commit().unwrap();
        seen.committed();
        done
    };
    assert!(upgrade(&mut conn), "the first moves it");
    let once = image_of(&conn, &keys, &f.id);
    assert!(!upgrade(&mut conn), "the second finds it moved");
    let twice = image_of(&conn, &keys, &f.id);
    assert_eq!(twice.state, once.state, "nothing changed: no count, no code");
    assert_eq!(twice.key.export(), once.key.export());
    assert_eq!(twice.state.tallies.total, 0);
    assert_eq!(twice.state.spent_count(), 0);
}

/// Counts of format 2 never pass for counts of format 1 (nor the reverse):
/// the reading of either fails on a value of the other.
#[test]
fn counts_of_one_format_are_not_read_as_the_other() {
    let poll = poll_json(true);
    let layout = rows::Layout::of(&poll.questions);
    let mut state = rows::State::new(&layout);
    state.version = 3;
    state.hold_codes(40);
    rows::tally(&mut state.tallies, &layout, &a_ballot(&poll, 1), Some(Day::today()), 1).unwrap();
    let two = rows::state_bytes(&state).unwrap();
    let one = rows::tallies_bytes(&state.tallies).unwrap();
    assert!(rows::tallies_from(&layout, &two).is_err(), "format 2 read as format 1");
    assert!(rows::state_from(&layout, &one).is_err(), "format 1 read as format 2");
    assert_eq!(rows::tallies_from(&layout, &one).unwrap(), state.tallies);
    assert_eq!(rows::state_from(&layout, &two).unwrap(), state);
    let mut longer = one.clone();
    longer.extend_from_slice(&[0, 0, 0, 1]);
    assert!(rows::tallies_from(&layout, &longer).is_err(), "bytes after the counts");
}

/// A poll the pass cannot move (here: a damaged ballot row) keeps what it
/// needs of format 1: it stays of format 1, the schema waits before the
/// migration that drops format 1's invite rows, `pollctl check` names it,
/// and the other polls are upgraded and served. Once it is gone, the next
/// start finishes the schema.
#[test]
fn a_poll_the_upgrade_cannot_move_keeps_its_codes_and_is_named() {
    let dir = data_dir();
    let (path, conn, keys) = format_one_db(&dir);
    let today = Day::today();
    let poll = poll_json(false);
    let codes: Vec<InviteCode> = (0..2).map(|_| InviteCode::generate().unwrap()).collect();
    let broken = FormatOne::write(
        &conn,
        &keys,
        (poll.clone(), None),
        |_| {},
        &[(row_key(1), a_ballot(&poll, 1))],
        &codes.iter().map(|c| (c, false)).collect::<Vec<_>>(),
    );
    conn.execute("UPDATE sealed_ballots SET sealed = zeroblob(80) WHERE poll_id = ?1", [broken.id.as_str()]).unwrap();
    let fine = FormatOne::write(&conn, &keys, (poll.clone(), None), |_| {}, &[(row_key(2), a_ballot(&poll, 2))], &[]);
    drop(conn);
    drop(keys);

    let store = Store::open(&path).unwrap();
    let conn = Connection::open(&path).unwrap();
    assert_eq!(schema_of(&conn), (FORMAT_TWO_VERSION, 1), "the schema waits, format 1's codes kept");
    let formats: Vec<(String, i64)> = conn
        .prepare("SELECT id, format FROM sealed_polls ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(formats.contains(&(broken.id.as_str().to_owned(), 1)));
    assert!(formats.contains(&(fine.id.as_str().to_owned(), 2)));
    let codes_kept: i64 = conn
        .query_row("SELECT count(*) FROM sealed_invites WHERE poll_id = ?1", [broken.id.as_str()], |r| r.get(0))
        .unwrap();
    assert_eq!(codes_kept, 2);
    let named: Vec<String> = store.check_polls().unwrap().into_iter().map(|c| c.poll).collect();
    assert_eq!(named, [broken.id.as_str().to_owned()]);
    store.cast(&fine.id, a_ballot(&poll, 0), today).unwrap();
    let mut r = store.reader().unwrap();
    let read = r.poll(&fine.id, today).unwrap().unwrap();
    assert_eq!(r.tallies(&read).unwrap().total, 2, "the other poll is served");
    drop(r);
    drop(store);

    // Deleted (or expired and erased): the next start finishes the schema.
    conn.execute("DELETE FROM sealed_polls WHERE id = ?1", [broken.id.as_str()]).unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(schema_of(&conn), (SCHEMA_VERSION, 0));
    drop(store);
}

/// A ballot of format 1 keeps, as its tag, the key its row had then, so that
/// a receipt of then still finds it; that key lay in clear in the files of
/// then (beside its code row's `xmin` on PostgreSQL). So it lasts only while
/// the poll takes receipts: a poll that takes none is upgraded without
/// them; a receipt that is used gives its ballot a tag of its own; and once
/// the poll is closed, the day's key work mixes it without them. After that
/// no key of then finds any ballot under the poll's key.
#[test]
fn keys_of_format_one_last_only_while_receipts_can_use_them() {
    let dir = data_dir();
    let (path, conn, keys) = format_one_db(&dir);
    let today = Day::today();
    let old_tags = |conn: &Connection, id: &PollId| -> bool {
        conn.query_row("SELECT old_tags FROM sealed_polls WHERE id = ?1", [id.as_str()], |r| r.get(0)).unwrap()
    };
    let found_by_old_keys = |conn: &Connection, keys: &Keyring, id: &PollId, old: &[[u8; 16]]| -> usize {
        let image = image_of(conn, keys, id);
        old.iter()
            .filter(|r| image.settled_key(r).is_some_and(|at| image.ballots.iter().any(|(k, _)| k[..] == at[..])))
            .count()
    };
    let tags = |conn: &Connection, keys: &Keyring, id: &PollId| -> (usize, usize) {
        let image = image_of(conn, keys, id);
        let one = image.ballots.iter().filter(|(_, s)| matches!(s.tag, Some(Tag::FormatOne(_)))).count();
        let own = image.ballots.iter().filter(|(_, s)| matches!(s.tag, Some(Tag::Receipt(_)))).count();
        (one, own)
    };
    // A receipt of format 1 finds the ballot settled at the key format 1's
    // hash key drew from it (the first that is not staged).
    let changes = poll_json(true);
    let key = DataKey::generate().unwrap();
    let receipt = Receipt::generate().unwrap();
    let then = {
        let mut out = [0u8; 16];
        for round in 0..=u8::MAX {
            out.copy_from_slice(&key.mac(b"receipt settled", &[&[round], &receipt.hash().0])[..16]);
            if out[0] != 0xff {
                break;
            }
        }
        out
    };
    let mut ballots: Vec<([u8; 16], Ballot)> =
        (0..20).map(|i| (row_key(i), a_ballot(&changes, usize::from(i % 3)))).collect();
    ballots.push((then, a_ballot(&changes, 0)));
    let old: Vec<[u8; 16]> = ballots.iter().map(|(k, _)| *k).collect();
    let open = FormatOne::write(&conn, &keys, (changes.clone(), Some(key)), |_| {}, &ballots, &[]);
    let no_changes = poll_json(false);
    let plain: Vec<([u8; 16], Ballot)> = (0..20).map(|i| (row_key(i), a_ballot(&no_changes, 1))).collect();
    let plain_old: Vec<[u8; 16]> = plain.iter().map(|(k, _)| *k).collect();
    let shut = FormatOne::write(&conn, &keys, (no_changes.clone(), None), |_| {}, &plain, &[]);
    drop(conn);
    drop(keys);

    let store = Store::open(&path).unwrap();
    let conn = Connection::open(&path).unwrap();
    let keys = store.keys();
    // A poll without receipts: no key of then is kept.
    assert_eq!(tags(&conn, keys, &shut.id), (0, 0));
    assert!(!old_tags(&conn, &shut.id));
    assert_eq!(found_by_old_keys(&conn, keys, &shut.id, &plain_old), 0);
    assert!(image_of(&conn, keys, &shut.id).doc.format_one_receipts.is_none());
    // A poll that takes receipts keeps them, and says so.
    assert_eq!(tags(&conn, keys, &open.id), (21, 0));
    assert!(old_tags(&conn, &open.id));
    assert_eq!(found_by_old_keys(&conn, keys, &open.id, &old), 21, "the test can fail");
    // A receipt that is used: its ballot gets a tag of its own.
    store.amend(&open.id, receipt.hash(), Some(a_ballot(&changes, 2)), today).unwrap();
    crate::store::testkit::wait_for_mix(&path);
    assert_eq!(tags(&conn, keys, &open.id), (20, 1));
    assert_eq!(found_by_old_keys(&conn, keys, &open.id, &old), 20, "the used one is found by its receipt only");
    // A poll reopened later still finds its ballots by receipt until closed.
    let close = PollPatch::from_json(&json!({"closed": true})).unwrap();
    store.patch_poll(&open.id, &close, today).unwrap();
    assert!(old_tags(&conn, &open.id), "not before the day's key work");
    store.sweep(today).unwrap();
    assert!(!old_tags(&conn, &open.id));
    assert_eq!(tags(&conn, keys, &open.id), (0, 1));
    assert_eq!(found_by_old_keys(&conn, keys, &open.id, &old), 0, "no key of then finds a ballot");
    assert!(image_of(&conn, keys, &open.id).doc.format_one_receipts.is_none());
    assert_eq!(crate::store::testkit::assert_counts_match(&conn, keys, &open.id), 21);
}
