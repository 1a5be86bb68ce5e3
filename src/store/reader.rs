//! Read connections: one per worker thread, with cached statements. In WAL
//! mode a reader sees the last committed state and never waits on the writer.

use std::collections::BTreeMap;

use anyhow::anyhow;
use rusqlite::{Connection, OptionalExtension, params};

use crate::day::Day;
use crate::domain::settings::deadline_passed;
use crate::domain::{
    Ballot, DuplicateCheck, Lang, LanguageVersion, MediaItem, Poll, Question, QuestionKind, Slot, Tallies, Title,
};
use crate::error::Error;
use crate::secret::{MediaId, PollId, ReceiptHash, TokenHash};

pub struct Reader {
    pub(super) conn: Connection,
}

impl Reader {
    pub(super) fn new(conn: Connection) -> Reader {
        Reader { conn }
    }

    /// The poll if it exists and is live on `today`.
    pub fn poll(&mut self, id: &PollId, today: Day) -> Result<Option<Poll>, Error> {
        let tx = self.conn.transaction()?;
        let poll = read_poll(&tx, id, today)?;
        tx.finish()?;
        Ok(poll)
    }

    /// The counters of a poll already read with [`Reader::poll`].
    pub fn tallies(&mut self, poll: &Poll) -> Result<Tallies, Error> {
        let tx = self.conn.transaction()?;
        let tallies = read_tallies(&tx, poll)?;
        tx.finish()?;
        Ok(tallies)
    }

    /// The live poll and its counters, read in one transaction (one snapshot,
    /// and half the cost of starting read transactions).
    pub fn poll_with_tallies(&mut self, id: &PollId, today: Day) -> Result<Option<(Poll, Tallies)>, Error> {
        let tx = self.conn.transaction()?;
        let Some(poll) = read_poll(&tx, id, today)? else { return Ok(None) };
        let tallies = read_tallies(&tx, &poll)?;
        tx.finish()?;
        Ok(Some((poll, tallies)))
    }
}

/// A poll's media, listed without their bytes.
pub(super) const MEDIA_OF_POLL: &str =
    "SELECT id, question, kind, mime, size, sha256, alt, width, height FROM media WHERE poll_id = ?1";

fn read_poll(tx: &Connection, id: &PollId, today: Day) -> Result<Option<Poll>, Error> {
    let row = tx
        .prepare_cached(
            "SELECT token_sha256, title, lang, results_public, closed, created_on, expires_on, questions,
                    results_after, closes_on, shuffle_options, duplicate_check, vote_changes
             FROM polls WHERE id = ?1 AND expires_on > ?2",
        )?
        .query_row(params![id.as_str(), today.to_string()], |r| {
            Ok((
                r.get::<_, Vec<u8>>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, bool>(3)?,
                r.get::<_, bool>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, String>(7)?,
                (
                    r.get::<_, Option<String>>(8)?,
                    r.get::<_, Option<String>>(9)?,
                    r.get::<_, bool>(10)?,
                    r.get::<_, String>(11)?,
                    r.get::<_, bool>(12)?,
                ),
            ))
        })
        .optional()?;
    let Some((token, title, lang, results_public, closed, created_on, expires_on, questions, settings)) = row else {
        return Ok(None);
    };
    let mut translations = BTreeMap::new();
    {
        let mut stmt = tx.prepare_cached("SELECT lang, body FROM translations WHERE poll_id = ?1")?;
        let rows = stmt.query_map(params![id.as_str()], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (code, body) = row?;
            let lang = Lang::from_code(&code).ok_or_else(|| corrupt("translation language"))?;
            let version: LanguageVersion = serde_json::from_str(&body).map_err(Error::internal)?;
            translations.insert(lang, version);
        }
    }
    let media = {
        let mut stmt = tx.prepare_cached(MEDIA_OF_POLL)?;
        let rows = stmt.query_map(params![id.as_str()], media_item)?;
        let mut media = rows.collect::<Result<Result<Vec<MediaItem>, Error>, _>>()??;
        // Sorted here, not with ORDER BY: an ORDER BY on an expression made
        // SQLite prepare this statement again at every step (measured: 21 µs
        // instead of 7 µs per poll read).
        media.sort_by_key(|m| m.slot);
        media
    };
    let questions: Vec<Question> = serde_json::from_str(&questions).map_err(Error::internal)?;
    let (results_after, closes_on, shuffle_options, duplicate_check, vote_changes) = settings;
    let closes_on = closes_on.map(|d| Day::parse(&d).ok_or_else(|| corrupt("closes_on"))).transpose()?;
    Ok(Some(Poll {
        id: id.clone(),
        token_hash: TokenHash::from_slice(&token).ok_or_else(|| corrupt("token hash"))?,
        title: serde_json::from_value::<Title>(serde_json::Value::String(title)).map_err(Error::internal)?,
        lang: Lang::from_code(&lang).ok_or_else(|| corrupt("poll language"))?,
        visibility: super::visibility_from(results_public, results_after.as_deref())
            .ok_or_else(|| corrupt("results_after"))?,
        closed: closed || deadline_passed(closes_on, today),
        closes_on,
        shuffle_options,
        duplicate_check: DuplicateCheck::from_code(&duplicate_check).ok_or_else(|| corrupt("duplicate_check"))?,
        vote_changes,
        created_on: Day::parse(&created_on).ok_or_else(|| corrupt("created_on"))?,
        expires_on: Day::parse(&expires_on).ok_or_else(|| corrupt("expires_on"))?,
        questions,
        translations,
        media,
    }))
}

fn read_tallies(tx: &Connection, poll: &Poll) -> Result<Tallies, Error> {
    let mut votes: Vec<Vec<u64>> = poll.questions.iter().map(|q| vec![0; q.counters()]).collect();
    let total: i64 = tx
        .prepare_cached("SELECT total_responses FROM polls WHERE id = ?1")?
        .query_row(params![poll.id.as_str()], |r| r.get(0))
        .optional()?
        .unwrap_or(0);
    let total = count(total)?;
    let index = |n: i64| usize::try_from(n).ok();
    {
        let mut stmt = tx.prepare_cached("SELECT question, option, votes FROM option_tallies WHERE poll_id = ?1")?;
        let rows = stmt.query_map(params![poll.id.as_str()], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
        })?;
        // A scale counts by value: its counters start at scaleMin.
        let first = |q: usize| poll.questions.get(q).and_then(|q| q.scale()).map_or(0, |(lo, _)| usize::from(lo));
        for row in rows {
            let (q, o, n) = row?;
            let slot = index(q)
                .zip(index(o))
                .and_then(|(q, o)| votes.get_mut(q).and_then(|v| v.get_mut(o.checked_sub(first(q))?)))
                .ok_or_else(|| corrupt("tally index"))?;
            *slot = count(n)?;
        }
    }
    // Ballots that answered: counted for multiple choice; for the others
    // each answer adds exactly one to one counter (a ranking's first choice).
    let mut answered: Vec<u64> = votes.iter().map(|v| v.iter().sum()).collect();
    let mut pairwise: Vec<Vec<Vec<u64>>> =
        poll.questions
            .iter()
            .map(|q| {
                if q.kind == QuestionKind::Ranked {
                    vec![vec![0; q.options.len()]; q.options.len()]
                } else {
                    Vec::new()
                }
            })
            .collect();
    if poll.questions.iter().any(|q| q.kind == QuestionKind::Multiple) {
        answered
            .iter_mut()
            .zip(&poll.questions)
            .filter(|(_, q)| q.kind == QuestionKind::Multiple)
            .for_each(|(a, _)| *a = 0);
        let mut stmt = tx.prepare_cached("SELECT question, ballots FROM answer_tallies WHERE poll_id = ?1")?;
        let rows = stmt.query_map(params![poll.id.as_str()], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?;
        for row in rows {
            let (q, n) = row?;
            let slot = index(q).and_then(|q| answered.get_mut(q)).ok_or_else(|| corrupt("answer tally"))?;
            *slot = count(n)?;
        }
    }
    if poll.questions.iter().any(|q| q.kind == QuestionKind::Ranked) {
        let mut stmt =
            tx.prepare_cached("SELECT question, above, below, ballots FROM pair_tallies WHERE poll_id = ?1")?;
        let rows = stmt.query_map(params![poll.id.as_str()], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?, r.get::<_, i64>(3)?))
        })?;
        for row in rows {
            let (q, above, below, n) = row?;
            let slot = index(q)
                .and_then(|q| pairwise.get_mut(q))
                .and_then(|m| m.get_mut(index(above)?))
                .and_then(|r| r.get_mut(index(below)?))
                .ok_or_else(|| corrupt("pair tally"))?;
            *slot = count(n)?;
        }
    }
    let mut by_day = Vec::new();
    {
        let mut stmt = tx.prepare_cached("SELECT day, responses FROM daily_tallies WHERE poll_id = ?1 ORDER BY day")?;
        let rows = stmt.query_map(params![poll.id.as_str()], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
        for row in rows {
            let (day, n) = row?;
            by_day.push((Day::parse(&day).ok_or_else(|| corrupt("tally day"))?, count(n)?));
        }
    }
    Ok(Tallies { total, votes, answered, pairwise, by_day })
}

impl Reader {
    /// A poll's invite codes: how many were issued, and how many were used.
    pub fn invite_counts(&mut self, poll: &Poll) -> Result<(u64, u64), Error> {
        super::writer::invite_counts(&self.conn, &poll.id)
    }

    /// Every stored ballot of `poll`, shuffled (ballots not yet mixed still
    /// stand together at the end of the store's order), without the day it
    /// was cast. For the admin's ballot export and for recounts.
    pub fn ballots(&mut self, poll: &Poll) -> Result<Vec<Ballot>, Error> {
        let tx = self.conn.transaction()?;
        let mut out = Vec::new();
        {
            let mut stmt = tx.prepare_cached("SELECT choices FROM responses WHERE poll_id = ?1 ORDER BY id")?;
            let rows = stmt.query_map(params![poll.id.as_str()], |r| r.get::<_, String>(0))?;
            for row in rows {
                out.push(Ballot::from_stored(&poll.questions, &row?).ok_or_else(|| corrupt("ballot"))?);
            }
        }
        tx.finish()?;
        rand::seq::SliceRandom::shuffle(out.as_mut_slice(), &mut rand::rng());
        Ok(out)
    }

    /// The ballot of `poll` that came with the receipt hashed `receipt`,
    /// if it is still stored.
    pub fn own_ballot(&mut self, poll: &Poll, receipt: &ReceiptHash) -> Result<Option<Ballot>, Error> {
        let stored = super::receipt_row(&self.conn, poll.id.as_str(), receipt)?;
        stored.map(|(_, _, s)| Ballot::from_stored(&poll.questions, &s).ok_or_else(|| corrupt("ballot"))).transpose()
    }
}

/// A media item ready to be served: what it is, and until when its poll lives.
#[derive(Debug)]
pub struct MediaBlob {
    pub item: MediaItem,
    pub expires_on: Day,
}

impl Reader {
    /// The media item `id` if its poll is live on `today`, with the bytes
    /// `pick` asks for (offset and length, within the item's size). Both
    /// are read in one transaction, so the bytes are this item's even if it
    /// is replaced or erased meanwhile; and straight from the BLOB, so a
    /// range of a large video never loads the rest of it.
    pub fn media(
        &mut self,
        id: &MediaId,
        today: Day,
        pick: impl FnOnce(&MediaBlob) -> Option<(u64, usize)>,
    ) -> Result<Option<(MediaBlob, Vec<u8>)>, Error> {
        let tx = self.conn.transaction()?;
        let row = tx
            .prepare_cached(
                "SELECT m.id, m.question, m.kind, m.mime, m.size, m.sha256, m.alt, m.width, m.height,
                        m.rowid, p.expires_on
                 FROM media m JOIN polls p ON p.id = m.poll_id
                 WHERE m.id = ?1 AND p.expires_on > ?2",
            )?
            .query_row(params![id.as_str(), today.to_string()], |r| {
                Ok((media_item(r)?, r.get::<_, i64>(9)?, r.get::<_, String>(10)?))
            })
            .optional()?;
        let Some((item, rowid, expires_on)) = row else { return Ok(None) };
        let blob = MediaBlob { item: item?, expires_on: Day::parse(&expires_on).ok_or_else(|| corrupt("expires_on"))? };
        let mut bytes = Vec::new();
        if let Some((offset, len)) = pick(&blob) {
            let handle = tx.blob_open(rusqlite::MAIN_DB, "media", "bytes", rowid, true)?;
            let offset = usize::try_from(offset).map_err(|_| corrupt("media offset"))?;
            bytes = vec![0u8; len];
            handle.read_at_exact(&mut bytes, offset)?;
        }
        tx.finish()?;
        Ok(Some((blob, bytes)))
    }
}

/// A `media` row's listing columns, in the order both queries select them.
fn media_item(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<MediaItem, Error>> {
    let id: String = r.get(0)?;
    let question: Option<i64> = r.get(1)?;
    let kind: String = r.get(2)?;
    let mime: String = r.get(3)?;
    let size: i64 = r.get(4)?;
    let sha: Vec<u8> = r.get(5)?;
    let alt: String = r.get(6)?;
    let width: Option<u32> = r.get(7)?;
    let height: Option<u32> = r.get(8)?;
    let item = (|| {
        Ok(MediaItem {
            id: MediaId::parse(&id).ok_or_else(|| corrupt("media id"))?,
            slot: Slot::from_question(question).ok_or_else(|| corrupt("media slot"))?,
            kind: crate::media::Kind::from_str(&kind).ok_or_else(|| corrupt("media kind"))?,
            mime,
            size: count(size)?,
            sha256: <[u8; 32]>::try_from(sha.as_slice()).map_err(|_| corrupt("media hash"))?,
            alt,
            width,
            height,
        })
    })();
    Ok(item)
}

fn count(n: i64) -> Result<u64, Error> {
    u64::try_from(n).map_err(|_| corrupt("counter"))
}

fn corrupt(what: &str) -> Error {
    Error::internal(anyhow!("stored {what} is malformed"))
}

/// What a sweep as of some day would erase, for one expiry day: counts only,
/// so that `pollctl sweep --dry-run` tells nothing about any single poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Due {
    pub expires_on: Day,
    pub polls: u64,
    pub responses: u64,
    pub media: u64,
    pub media_bytes: u64,
}

impl Reader {
    /// Per expiry day, in order, the polls that a sweep as of `as_of` erases
    /// (`expires_on <= as_of`, the sweep's own rule), with their stored
    /// responses and media. Reads only.
    pub fn due_for_sweep(&mut self, as_of: Day) -> Result<Vec<Due>, Error> {
        let mut stmt = self.conn.prepare(
            "SELECT p.expires_on, count(*),
                    sum((SELECT count(*) FROM responses r WHERE r.poll_id = p.id)),
                    sum((SELECT count(*) FROM media m WHERE m.poll_id = p.id)),
                    sum((SELECT coalesce(sum(m.size), 0) FROM media m WHERE m.poll_id = p.id))
             FROM polls p WHERE p.expires_on <= ?1 GROUP BY p.expires_on ORDER BY p.expires_on",
        )?;
        let rows = stmt.query_map(params![as_of.to_string()], |r| {
            Ok((r.get::<_, String>(0)?, [r.get::<_, i64>(1)?, r.get(2)?, r.get(3)?, r.get(4)?]))
        })?;
        let mut due = Vec::new();
        for row in rows {
            let (day, [polls, responses, media, media_bytes]) = row?;
            due.push(Due {
                expires_on: Day::parse(&day).ok_or_else(|| corrupt("expires_on"))?,
                polls: count(polls)?,
                responses: count(responses)?,
                media: count(media)?,
                media_bytes: count(media_bytes)?,
            });
        }
        Ok(due)
    }
}
