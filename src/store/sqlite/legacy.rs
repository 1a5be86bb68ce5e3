//! The upgrade's encryption pass: moves each poll of a database from before
//! encryption (schema 8) into the sealed tables of `sql/009_sealed.sql`.
//!
//! Why a pass in code: sealing needs the keyring, which SQL cannot reach.
//! Promises:
//! - one poll per transaction: each poll is read whole from the cleartext
//!   tables, written sealed, and deleted from the cleartext tables
//!   (`secure_delete` zeroes what it frees) in the same commit, so an
//!   interrupted pass loses nothing and resumes where it stopped;
//! - it runs only at schema 9: once every poll is sealed the next migration
//!   drops the cleartext tables, so it can never run twice;
//! - what a poll was stays what it is: its settings, texts, media, ballots
//!   (under the keys they had, so receipts given before still open them:
//!   [`receipt_keys`]), invite codes (their stored SHA-256 keyed under the
//!   poll's key, which a code's hash still finds) and its counts, recounted
//!   from the ballots.

use anyhow::{Context, anyhow};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::day::Day;
use crate::domain::{Ballot, DuplicateCheck, Lang, LanguageVersion, Question, ResultsVisibility, Title};
use crate::keyring::Keyring;
use crate::secret::{InviteHash, TokenHash};

use super::super::keys::before_sealing_fallback;
use super::super::rows::{self, Doc, DocMedia, Layout, ballot_width};
use super::super::seal::{DataKey, bucket, padded};
use super::super::vocab::{STAGED, place};
use super::SEALED_VERSION;

/// Whether polls are left in the cleartext tables.
pub(in crate::store) fn pending(conn: &Connection) -> rusqlite::Result<bool> {
    let has_table: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'polls')",
        [],
        |r| r.get(0),
    )?;
    Ok(has_table && conn.query_row("SELECT EXISTS (SELECT 1 FROM polls)", [], |r| r.get(0))?)
}

/// Seals at most `limit` polls left in the cleartext tables (each in its own
/// transaction); the number sealed or erased.
pub(in crate::store) fn seal_all(conn: &Connection, keys: &Keyring, today: Day, limit: usize) -> anyhow::Result<usize> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version != SEALED_VERSION {
        return Ok(0);
    }
    let mut done = 0;
    while done < limit {
        let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        let id: Option<String> = tx.query_row("SELECT id FROM polls LIMIT 1", [], |r| r.get(0)).optional()?;
        let Some(id) = id else { break };
        seal_one(&tx, keys, &id, today).with_context(|| format!("sealing poll {id} during the upgrade"))?;
        tx.execute("DELETE FROM polls WHERE id = ?1", params![id])?;
        tx.commit()?;
        done += 1;
    }
    if done > 0 {
        eprintln!("anonpoll: sealed {done} poll(s) under their own keys (upgrade to schema {})", SEALED_VERSION + 1);
    }
    Ok(done)
}

/// How `polls` stored a [`ResultsVisibility`] (sql/004_poll_settings.sql).
fn visibility(public: bool, after: Option<&str>) -> Option<ResultsVisibility> {
    match (public, after) {
        (true, None) => Some(ResultsVisibility::Public),
        (false, None) => Some(ResultsVisibility::Private),
        (false, Some("vote")) => Some(ResultsVisibility::AfterVote),
        (false, Some("close")) => Some(ResultsVisibility::AfterClose),
        _ => None,
    }
}

fn bad(what: &str) -> anyhow::Error {
    anyhow!("the stored {what} is malformed")
}

fn seal_one(tx: &Connection, keys: &Keyring, id: &str, today: Day) -> anyhow::Result<()> {
    type PollColumns = (
        Vec<u8>,
        String,
        String,
        bool,
        bool,
        String,
        String,
        String,
        Option<String>,
        Option<String>,
        bool,
        String,
        bool,
    );
    let p: PollColumns = tx.query_row(
        "SELECT token_sha256, title, lang, results_public, closed, created_on, expires_on, questions,
                results_after, closes_on, shuffle_options, duplicate_check, vote_changes
         FROM polls WHERE id = ?1",
        params![id],
        |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
                r.get(9)?,
                r.get(10)?,
                r.get(11)?,
                r.get(12)?,
            ))
        },
    )?;
    let (
        token,
        title,
        lang,
        public,
        closed,
        created_on,
        expires_on,
        questions,
        after,
        closes_on,
        shuffle,
        check,
        changes,
    ) = p;
    let day = |s: &str| Day::parse(s).ok_or_else(|| bad("day"));
    let (created_on, expires_on) = (day(&created_on)?, day(&expires_on)?);
    if expires_on <= today {
        // Expired: nothing to keep. The caller's delete erases it.
        return Ok(());
    }
    let questions: Vec<Question> = serde_json::from_str(&questions)?;
    let mut translations = std::collections::BTreeMap::new();
    {
        let mut stmt = tx.prepare("SELECT lang, body FROM translations WHERE poll_id = ?1")?;
        for row in stmt.query_map(params![id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))? {
            let (code, body) = row?;
            let version: LanguageVersion = serde_json::from_str(&body)?;
            translations.insert(Lang::from_code(&code).ok_or_else(|| bad("language"))?, version);
        }
    }
    let key = DataKey::generate()?;
    let mut doc = Doc::legacy(
        &TokenHash::from_slice(&token).ok_or_else(|| bad("token hash"))?,
        serde_json::from_value::<Title>(serde_json::Value::String(title))?,
        Lang::from_code(&lang).ok_or_else(|| bad("language"))?,
        visibility(public, after.as_deref()).ok_or_else(|| bad("visibility"))?,
        questions.clone(),
    );
    doc.closed = closed;
    doc.closes_on = closes_on.as_deref().map(day).transpose()?;
    doc.shuffle = shuffle;
    doc.duplicate_check = DuplicateCheck::from_code(&check).ok_or_else(|| bad("duplicate check"))?;
    doc.vote_changes = changes;
    doc.translations = translations;

    // Media: listed in the document, bytes padded and sealed in pieces.
    type MediaColumns = (String, Option<i64>, String, String, Vec<u8>, String, Option<u32>, Option<u32>, Vec<u8>);
    let media: Vec<MediaColumns> = tx
        .prepare("SELECT id, question, kind, mime, sha256, alt, width, height, bytes FROM media WHERE poll_id = ?1")?
        .query_map(params![id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?))
        })?
        .collect::<Result<_, _>>()?;
    for (media_id, question, kind, mime, sha, alt, width, height, bytes) in &media {
        doc.media.push(DocMedia {
            id: media_id.clone(),
            question: question.map(usize::try_from).transpose()?,
            kind: kind.clone(),
            mime: mime.clone(),
            size: bytes.len() as u64,
            padded: bucket(bytes.len()) as u64,
            sha256: crate::secret::hex(sha),
            alt: alt.clone(),
            width: *width,
            height: *height,
            key: None,
        });
    }

    // Ballots, recounted; staged ones moved where their receipts find them.
    let layout = Layout::of(&questions);
    let mut tallies = rows::empty_tallies(&layout);
    let ballots: Vec<(Vec<u8>, String, String)> = tx
        .prepare("SELECT id, cast_on, choices FROM responses WHERE poll_id = ?1 ORDER BY id")?
        .query_map(params![id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;

    let (key_day, wrapped) = {
        let d = keys.lease_day(expires_on.previous(), today);
        let w = keys.wrap_key(d).ok_or_else(|| anyhow!("no key for the lease day {d}"))?;
        (d, key.wrap(&w, &keys.ring(), id, d)?)
    };
    let mut sealed_ballots = Vec::with_capacity(ballots.len());
    for (k, cast_on, choices) in &ballots {
        let cast_on = day(cast_on)?;
        let ballot = Ballot::from_stored(&questions, choices).ok_or_else(|| bad("ballot"))?;
        rows::tally(&mut tallies, &layout, &ballot, Some(cast_on), 1).map_err(|e| anyhow!("{e}"))?;
        let mut k = <[u8; 16]>::try_from(k.as_slice()).map_err(|_| bad("ballot key"))?;
        if k[0] == STAGED {
            k = before_sealing_fallback(&k);
        }
        // Format 1: the day and the answers, padded (the format pass that
        // follows gives each ballot its tag).
        let mut plain = cast_on.to_string().into_bytes();
        plain.extend_from_slice(ballot.to_stored().as_bytes());
        let plain = padded(plain, ballot_width(&questions), b' ');
        sealed_ballots.push((k, key.seal(&place::ballot(id, &k), &plain)?));
    }
    let body = key.seal(&place::body(id), &doc.to_bytes().map_err(|e| anyhow!("{e}"))?)?;
    let tallies = key.seal(&place::tallies(id), &rows::tallies_bytes(&tallies).map_err(|e| anyhow!("{e}"))?)?;
    tx.execute(
        "INSERT INTO sealed_polls (id, created_on, expires_on, key_day, data_key, body, tallies)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![id, created_on.to_string(), expires_on.to_string(), key_day.to_string(), wrapped, body, tallies],
    )?;
    // In key order: the rows' places follow their random keys alone.
    sealed_ballots.sort_by_key(|b| b.0);
    for (k, sealed) in sealed_ballots {
        tx.execute(
            "INSERT INTO sealed_ballots (poll_id, id, sealed) VALUES (?1, ?2, ?3)",
            params![id, &k[..], sealed],
        )?;
    }
    for (media_id, _, _, _, _, _, _, _, bytes) in media {
        let plain = padded(bytes.clone(), bucket(bytes.len()), 0);
        let sealed = key.seal_pieces(&place::media(id, &media_id), &plain)?;
        tx.execute("INSERT INTO sealed_media (id, poll_id, bytes) VALUES (?1, ?2, ?3)", params![media_id, id, sealed])?;
    }
    let invites: Vec<(Vec<u8>, bool)> = tx
        .prepare("SELECT code_sha256, used FROM invites WHERE poll_id = ?1")?
        .query_map(params![id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut macs: Vec<([u8; 32], bool)> = invites
        .iter()
        .map(|(sha, used)| {
            let hash = InviteHash(<[u8; 32]>::try_from(sha.as_slice()).map_err(|_| bad("invite hash"))?);
            Ok((key.mac(b"invite", &[&hash.0]), *used))
        })
        .collect::<anyhow::Result<_>>()?;
    macs.sort();
    for (mac, used) in macs {
        tx.execute(
            "INSERT INTO sealed_invites (poll_id, code_mac, used) VALUES (?1, ?2, ?3)",
            params![id, &mac[..], used],
        )?;
    }
    Ok(())
}
