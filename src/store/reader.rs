//! Read connections: one per worker thread, with cached statements. In WAL
//! mode a reader sees the last committed state and never waits on the writer.

use std::collections::BTreeMap;

use anyhow::anyhow;
use rusqlite::{Connection, OptionalExtension, params};

use crate::day::Day;
use crate::domain::{Lang, LanguageVersion, Poll, Question, Tallies, Title};
use crate::error::Error;
use crate::secret::{PollId, TokenHash};

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

fn read_poll(tx: &Connection, id: &PollId, today: Day) -> Result<Option<Poll>, Error> {
    let row = tx
        .prepare_cached(
            "SELECT token_sha256, title, lang, results_public, closed, created_on, expires_on, questions
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
            ))
        })
        .optional()?;
    let Some((token, title, lang, results_public, closed, created_on, expires_on, questions)) = row else {
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
    let questions: Vec<Question> = serde_json::from_str(&questions).map_err(Error::internal)?;
    Ok(Some(Poll {
        id: id.clone(),
        token_hash: TokenHash::from_slice(&token).ok_or_else(|| corrupt("token hash"))?,
        title: serde_json::from_value::<Title>(serde_json::Value::String(title)).map_err(Error::internal)?,
        lang: Lang::from_code(&lang).ok_or_else(|| corrupt("poll language"))?,
        results_public,
        closed,
        created_on: Day::parse(&created_on).ok_or_else(|| corrupt("created_on"))?,
        expires_on: Day::parse(&expires_on).ok_or_else(|| corrupt("expires_on"))?,
        questions,
        translations,
    }))
}

fn read_tallies(tx: &Connection, poll: &Poll) -> Result<Tallies, Error> {
    let mut votes: Vec<Vec<u64>> = poll.questions.iter().map(|q| vec![0; q.options.len()]).collect();
    let total: i64 = tx
        .prepare_cached("SELECT total_responses FROM polls WHERE id = ?1")?
        .query_row(params![poll.id.as_str()], |r| r.get(0))
        .optional()?
        .unwrap_or(0);
    let total = count(total)?;
    {
        let mut stmt = tx.prepare_cached("SELECT question, option, votes FROM option_tallies WHERE poll_id = ?1")?;
        let rows = stmt.query_map(params![poll.id.as_str()], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
        })?;
        for row in rows {
            let (q, o, n) = row?;
            let slot = usize::try_from(q)
                .ok()
                .zip(usize::try_from(o).ok())
                .and_then(|(q, o)| votes.get_mut(q).and_then(|v| v.get_mut(o)))
                .ok_or_else(|| corrupt("tally index"))?;
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
    Ok(Tallies { total, votes, by_day })
}

fn count(n: i64) -> Result<u64, Error> {
    u64::try_from(n).map_err(|_| corrupt("counter"))
}

fn corrupt(what: &str) -> Error {
    Error::internal(anyhow!("stored {what} is malformed"))
}
