//! The row operations ([`Rows`]) in PostgreSQL's SQL, each statement
//! prepared once per connection.
//!
//! Ballots: a vote's ballot is held back until [`Rows::finish_batch`], and
//! a batch's ballots go in one statement, in random order (one `xmin` for
//! the batch, and no order of arrival in the heap, the index or the WAL);
//! a mix's too ([`Rows::replace_ballots`]).

use postgres::types::ToSql;
use postgres::{GenericClient, Statement};
use rand::seq::SliceRandom;

use crate::day::Day;
use crate::error::Error;

use super::super::engine::Rows;
use super::super::vocab::{
    BallotRow, CodeRow, Cols, DueRow, FORMAT, LeaseRow, NewPollRow, PollWith, ResealedRow, STAGED, corrupt,
};
use super::link::Stmts;

/// A connection (or a transaction on it) seen as [`Rows`].
pub(super) struct PgRows<'a, C: GenericClient> {
    c: &'a mut C,
    statements: &'a mut Stmts,
    held: Vec<(String, Vec<u8>, Vec<u8>)>,
    /// Savepoints open now.
    savepoints: usize,
    /// Whether a statement failed outside any savepoint (the transaction
    /// is then aborted, whatever follows).
    pub(super) aborted: bool,
}

impl<'a, C: GenericClient> PgRows<'a, C> {
    pub(super) fn new(c: &'a mut C, statements: &'a mut Stmts) -> PgRows<'a, C> {
        PgRows { c, statements, held: Vec::new(), savepoints: 0, aborted: false }
    }

    fn statement(&mut self, sql: &'static str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.c.prepare(sql)?;
        self.statements.insert(sql, s.clone());
        Ok(s)
    }

    /// Notes a failed statement: outside a savepoint it aborts the
    /// transaction.
    fn checked<T>(&mut self, r: Result<T, postgres::Error>) -> Result<T, Error> {
        if r.is_err() && self.savepoints == 0 {
            self.aborted = true;
        }
        Ok(r?)
    }

    pub(super) fn query(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<postgres::Row>, Error> {
        let r = self.statement(sql).and_then(|s| self.c.query(&s, params));
        self.checked(r)
    }

    fn opt(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<Option<postgres::Row>, Error> {
        let r = self.statement(sql).and_then(|s| self.c.query_opt(&s, params));
        self.checked(r)
    }

    pub(super) fn execute(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, Error> {
        let r = self.statement(sql).and_then(|s| self.c.execute(&s, params));
        self.checked(r)
    }

    /// Writes `rows` of `poll`'s ballots in one statement, in random order.
    fn insert_shuffled(&mut self, mut rows: Vec<(String, Vec<u8>, Vec<u8>)>) -> Result<(), Error> {
        if rows.is_empty() {
            return Ok(());
        }
        // The order they came in is what must not be kept: not in the heap,
        // not in the WAL, not in the index.
        rows.shuffle(&mut rand::rng());
        let mut polls = Vec::with_capacity(rows.len());
        let mut keys = Vec::with_capacity(rows.len());
        let mut sealed = Vec::with_capacity(rows.len());
        for (p, k, s) in rows {
            polls.push(p);
            keys.push(k);
            sealed.push(s);
        }
        self.execute(
            "INSERT INTO sealed_ballots (poll_id, id, sealed)
             SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[])",
            &[&polls, &keys, &sealed],
        )?;
        Ok(())
    }
}

fn count(n: i64) -> Result<u64, Error> {
    u64::try_from(n).map_err(|_| corrupt("counter"))
}

/// The select of a poll row with `cols`, live on `$2` or regardless.
fn poll_sql(cols: Cols, live: bool) -> &'static str {
    match (cols.body(), cols.tallies(), live) {
        (false, false, true) => {
            "SELECT created_on, expires_on, key_day, data_key, NULL::bytea, NULL::bytea FROM sealed_polls \
             WHERE id = $1 AND expires_on > $2"
        }
        (true, false, true) => {
            "SELECT created_on, expires_on, key_day, data_key, body, NULL::bytea FROM sealed_polls \
             WHERE id = $1 AND expires_on > $2"
        }
        (false, true, true) => {
            "SELECT created_on, expires_on, key_day, data_key, NULL::bytea, tallies FROM sealed_polls \
             WHERE id = $1 AND expires_on > $2"
        }
        (true, true, true) => {
            "SELECT created_on, expires_on, key_day, data_key, body, tallies FROM sealed_polls \
             WHERE id = $1 AND expires_on > $2"
        }
        (false, false, false) => {
            "SELECT created_on, expires_on, key_day, data_key, NULL::bytea, NULL::bytea FROM sealed_polls WHERE id = $1"
        }
        (true, false, false) => {
            "SELECT created_on, expires_on, key_day, data_key, body, NULL::bytea FROM sealed_polls WHERE id = $1"
        }
        (false, true, false) => {
            "SELECT created_on, expires_on, key_day, data_key, NULL::bytea, tallies FROM sealed_polls WHERE id = $1"
        }
        (true, true, false) => {
            "SELECT created_on, expires_on, key_day, data_key, body, tallies FROM sealed_polls WHERE id = $1"
        }
    }
}

impl<C: GenericClient> Rows for PgRows<'_, C> {
    fn poll(&mut self, id: &str, live_on: Option<Day>, cols: Cols) -> Result<Option<PollWith>, Error> {
        let row = match live_on {
            Some(day) => self.opt(poll_sql(cols, true), &[&id, &day.to_string()])?,
            None => self.opt(poll_sql(cols, false), &[&id])?,
        };
        let Some(row) = row else { return Ok(None) };
        let days: (&str, &str, &str) = (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
        PollWith::read(days, row.try_get(3)?, row.try_get(4)?, row.try_get(5)?).map(Some)
    }

    fn insert_poll(&mut self, p: &NewPollRow) -> Result<(), Error> {
        self.execute(
            "INSERT INTO sealed_polls (id, created_on, expires_on, key_day, data_key, body, tallies, format)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                &p.id,
                &p.created_on.to_string(),
                &p.expires_on.to_string(),
                &p.key_day.to_string(),
                &p.data_key,
                &p.body,
                &p.tallies,
                &(FORMAT as i32),
            ],
        )?;
        Ok(())
    }

    fn set_body(&mut self, id: &str, sealed: &[u8]) -> Result<(), Error> {
        self.execute("UPDATE sealed_polls SET body = $2 WHERE id = $1", &[&id, &sealed])?;
        Ok(())
    }

    fn set_tallies(&mut self, id: &str, sealed: &[u8]) -> Result<(), Error> {
        self.execute("UPDATE sealed_polls SET tallies = $2 WHERE id = $1", &[&id, &sealed])?;
        Ok(())
    }

    fn set_key(&mut self, id: &str, expires_on: Option<Day>, key_day: Day, wrapped: &[u8]) -> Result<(), Error> {
        match expires_on {
            Some(e) => self.execute(
                "UPDATE sealed_polls SET expires_on = $2, key_day = $3, data_key = $4 WHERE id = $1",
                &[&id, &e.to_string(), &key_day.to_string(), &wrapped],
            )?,
            None => self.execute(
                "UPDATE sealed_polls SET key_day = $2, data_key = $3 WHERE id = $1",
                &[&id, &key_day.to_string(), &wrapped],
            )?,
        };
        Ok(())
    }

    fn reseal_poll(&mut self, id: &str, row: &ResealedRow) -> Result<(), Error> {
        self.execute(
            "UPDATE sealed_polls SET key_day = $2, data_key = $3, body = $4, tallies = $5, format = $6,
             old_tags = coalesce($7, old_tags), ballot_groups = $8 WHERE id = $1",
            &[
                &id,
                &row.key_day.to_string(),
                &row.data_key,
                &row.body,
                &row.tallies,
                &(FORMAT as i32),
                &row.old_tags,
                &row.groups,
            ],
        )?;
        Ok(())
    }

    fn delete_poll(&mut self, id: &str) -> Result<u64, Error> {
        self.execute("DELETE FROM sealed_polls WHERE id = $1", &[&id])
    }

    fn delete_expired(&mut self, day: Day) -> Result<u64, Error> {
        let n = self.execute("DELETE FROM sealed_polls WHERE expires_on <= $1", &[&day.to_string()])?;
        // Spent forms of days before yesterday can no longer be sent (their
        // key is gone): nothing needs them.
        self.execute("DELETE FROM redeemed_forms WHERE day < $1", &[&day.previous().to_string()])?;
        Ok(n)
    }

    fn leases(&mut self) -> Result<Vec<LeaseRow>, Error> {
        // Locked in id order, as every batch locks: the day's key work of
        // one node and the votes of another wait for each other rather
        // than deadlock.
        let rows = self.query(
            "SELECT id, expires_on, key_day, data_key, old_tags FROM sealed_polls ORDER BY id FOR UPDATE",
            &[],
        )?;
        rows.into_iter()
            .map(|r| {
                Ok(LeaseRow {
                    id: r.try_get(0)?,
                    expires_on: r.try_get(1)?,
                    key_day: r.try_get(2)?,
                    data_key: r.try_get(3)?,
                    old_tags: r.try_get(4)?,
                })
            })
            .collect::<Result<_, postgres::Error>>()
            .map_err(Error::from)
    }

    fn key_day(&mut self, id: &str) -> Result<Option<String>, Error> {
        Ok(self.opt("SELECT key_day FROM sealed_polls WHERE id = $1", &[&id])?.map(|r| r.try_get(0)).transpose()?)
    }

    fn poll_ids(&mut self) -> Result<Vec<String>, Error> {
        let rows = self.query("SELECT id FROM sealed_polls ORDER BY id", &[])?;
        Ok(rows.into_iter().map(|r| r.try_get(0)).collect::<Result<_, postgres::Error>>()?)
    }

    fn format_of(&mut self, id: &str) -> Result<Option<i64>, Error> {
        let row = self.opt("SELECT format FROM sealed_polls WHERE id = $1", &[&id])?;
        Ok(row.map(|r| r.try_get::<_, i32>(0)).transpose()?.map(i64::from))
    }

    fn polls_of_format(&mut self, format: i64) -> Result<Vec<String>, Error> {
        let rows = self.query("SELECT id FROM sealed_polls WHERE format = $1 ORDER BY id", &[&(format as i32)])?;
        Ok(rows.into_iter().map(|r| r.try_get(0)).collect::<Result<_, postgres::Error>>()?)
    }

    fn ballot(&mut self, poll: &str, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        Ok(self
            .opt("SELECT sealed FROM sealed_ballots WHERE poll_id = $1 AND id = $2", &[&poll, &key])?
            .map(|r| r.try_get(0))
            .transpose()?)
    }

    fn ballots(&mut self, poll: &str) -> Result<Vec<BallotRow>, Error> {
        let rows = self.query("SELECT id, sealed FROM sealed_ballots WHERE poll_id = $1 ORDER BY id", &[&poll])?;
        Ok(rows
            .into_iter()
            .map(|r| Ok(BallotRow { key: r.try_get(0)?, sealed: r.try_get(1)? }))
            .collect::<Result<_, postgres::Error>>()?)
    }

    fn insert_ballot(&mut self, poll: &str, key: &[u8], sealed: Vec<u8>) -> Result<(), Error> {
        self.held.push((poll.to_owned(), key.to_vec(), sealed));
        Ok(())
    }

    fn ballots_between(&mut self, poll: &str, lo: &[u8; 16], hi: &[u8; 16]) -> Result<Vec<BallotRow>, Error> {
        self.finish_batch()?;
        let rows = self.query(
            "SELECT id, sealed FROM sealed_ballots WHERE poll_id = $1 AND id BETWEEN $2 AND $3 ORDER BY id",
            &[&poll, &&lo[..], &&hi[..]],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| Ok(BallotRow { key: r.try_get(0)?, sealed: r.try_get(1)? }))
            .collect::<Result<_, postgres::Error>>()?)
    }

    fn delete_ballots_between(&mut self, poll: &str, lo: &[u8; 16], hi: &[u8; 16]) -> Result<u64, Error> {
        self.finish_batch()?;
        self.execute(
            "DELETE FROM sealed_ballots WHERE poll_id = $1 AND id BETWEEN $2 AND $3",
            &[&poll, &&lo[..], &&hi[..]],
        )
    }

    fn insert_ballots(&mut self, poll: &str, rows: Vec<BallotRow>) -> Result<(), Error> {
        self.finish_batch()?;
        self.insert_shuffled(rows.into_iter().map(|r| (poll.to_owned(), r.key, r.sealed)).collect())
    }

    fn groups(&mut self, id: &str) -> Result<Option<Vec<u8>>, Error> {
        let row = self.opt("SELECT ballot_groups FROM sealed_polls WHERE id = $1", &[&id])?;
        Ok(row.map(|r| r.try_get::<_, Option<Vec<u8>>>(0)).transpose()?.flatten())
    }

    fn set_groups(&mut self, id: &str, sealed: &[u8]) -> Result<(), Error> {
        self.execute("UPDATE sealed_polls SET ballot_groups = $2 WHERE id = $1", &[&id, &sealed])?;
        Ok(())
    }

    fn delete_ballot(&mut self, poll: &str, key: &[u8]) -> Result<u64, Error> {
        self.execute("DELETE FROM sealed_ballots WHERE poll_id = $1 AND id = $2", &[&poll, &key])
    }

    fn staged_polls(&mut self) -> Result<Vec<String>, Error> {
        let rows = self.query("SELECT DISTINCT poll_id FROM sealed_ballots WHERE id >= $1", &[&&[STAGED][..]])?;
        Ok(rows.into_iter().map(|r| r.try_get(0)).collect::<Result<_, postgres::Error>>()?)
    }

    fn insert_codes(&mut self, poll: &str, rows: &[CodeRow]) -> Result<(), Error> {
        let macs: Vec<&[u8]> = rows.iter().map(|r| &r.mac[..]).collect();
        let slots: Vec<i32> = rows.iter().map(|r| r.slot as i32).collect();
        self.execute(
            "INSERT INTO poll_codes (poll_id, mac, slot) SELECT $1, * FROM unnest($2::bytea[], $3::int[])",
            &[&poll, &macs, &slots],
        )?;
        Ok(())
    }

    fn code_slot(&mut self, poll: &str, mac: &[u8; 32]) -> Result<Option<u32>, Error> {
        let row = self.opt("SELECT slot FROM poll_codes WHERE poll_id = $1 AND mac = $2", &[&poll, &&mac[..]])?;
        row.map(|r| u32::try_from(r.try_get::<_, i32>(0)?).map_err(|_| corrupt("invite slot"))).transpose()
    }

    fn codes_issued(&mut self, poll: &str) -> Result<u64, Error> {
        let r = self
            .opt("SELECT count(*) FROM poll_codes WHERE poll_id = $1", &[&poll])?
            .ok_or_else(|| corrupt("invite count"))?;
        count(r.try_get(0)?)
    }

    fn codes(&mut self, poll: &str) -> Result<Vec<CodeRow>, Error> {
        let rows = self.query("SELECT mac, slot FROM poll_codes WHERE poll_id = $1 ORDER BY mac", &[&poll])?;
        rows.into_iter()
            .map(|r| {
                let mac: Vec<u8> = r.try_get(0)?;
                let slot: i32 = r.try_get(1)?;
                Ok(CodeRow {
                    mac: <[u8; 32]>::try_from(mac.as_slice()).map_err(|_| corrupt("code row"))?,
                    slot: u32::try_from(slot).map_err(|_| corrupt("code row"))?,
                })
            })
            .collect()
    }

    fn format_one_codes(&mut self, poll: &str) -> Result<Vec<([u8; 32], bool)>, Error> {
        let rows = self.query("SELECT code_mac, used FROM sealed_invites WHERE poll_id = $1", &[&poll])?;
        rows.into_iter()
            .map(|r| {
                let mac: Vec<u8> = r.try_get(0)?;
                Ok((<[u8; 32]>::try_from(mac.as_slice()).map_err(|_| corrupt("invite row"))?, r.try_get(1)?))
            })
            .collect()
    }

    fn delete_format_one_codes(&mut self, poll: &str) -> Result<(), Error> {
        self.execute("DELETE FROM sealed_invites WHERE poll_id = $1", &[&poll])?;
        Ok(())
    }

    fn insert_media(&mut self, id: &str, poll: &str, sealed: &[u8]) -> Result<(), Error> {
        self.execute("INSERT INTO sealed_media (id, poll_id, bytes) VALUES ($1, $2, $3)", &[&id, &poll, &sealed])?;
        Ok(())
    }

    fn delete_media(&mut self, id: &str, poll: Option<&str>) -> Result<u64, Error> {
        match poll {
            Some(p) => self.execute("DELETE FROM sealed_media WHERE id = $1 AND poll_id = $2", &[&id, &p]),
            None => self.execute("DELETE FROM sealed_media WHERE id = $1", &[&id]),
        }
    }

    fn media_poll(&mut self, id: &str) -> Result<Option<String>, Error> {
        Ok(self.opt("SELECT poll_id FROM sealed_media WHERE id = $1", &[&id])?.map(|r| r.try_get(0)).transpose()?)
    }

    fn media_spans(&mut self, id: &str, spans: &[(usize, usize)]) -> Result<Vec<Vec<u8>>, Error> {
        // The value is stored EXTERNAL (uncompressed): substring reads only
        // the chunks that hold the span.
        let mut out = Vec::with_capacity(spans.len());
        for &(start, len) in spans {
            let from = i32::try_from(start + 1).map_err(|_| corrupt("media offset"))?;
            let len = i32::try_from(len).map_err(|_| corrupt("media span"))?;
            let row = self
                .opt("SELECT substring(bytes FROM $2 FOR $3) FROM sealed_media WHERE id = $1", &[&id, &from, &len])?
                .ok_or_else(|| corrupt("media row"))?;
            let bytes: Vec<u8> = row.try_get(0)?;
            if bytes.len() != len as usize {
                return Err(corrupt("media span"));
            }
            out.push(bytes);
        }
        Ok(out)
    }

    fn due(&mut self, as_of: Day) -> Result<Vec<DueRow>, Error> {
        let rows = self.query(
            "SELECT p.expires_on, count(*)::bigint,
                    coalesce(sum((SELECT count(*) FROM sealed_ballots r WHERE r.poll_id = p.id)), 0)::bigint,
                    coalesce(sum((SELECT count(*) FROM sealed_media m WHERE m.poll_id = p.id)), 0)::bigint,
                    coalesce(sum((SELECT coalesce(sum(length(m.bytes)), 0) FROM sealed_media m
                                  WHERE m.poll_id = p.id)), 0)::bigint
             FROM sealed_polls p WHERE p.expires_on <= $1 GROUP BY p.expires_on ORDER BY p.expires_on",
            &[&as_of.to_string()],
        )?;
        rows.into_iter()
            .map(|r| {
                Ok(DueRow {
                    expires_on: r.try_get(0)?,
                    polls: r.try_get(1)?,
                    ballots: r.try_get(2)?,
                    media: r.try_get(3)?,
                    media_bytes: r.try_get(4)?,
                })
            })
            .collect::<Result<_, postgres::Error>>()
            .map_err(Error::from)
    }

    fn keyring_ring(&mut self) -> Result<Option<[u8; 16]>, Error> {
        let ring: Option<Vec<u8>> = self.opt("SELECT ring FROM keyring", &[])?.map(|r| r.try_get(0)).transpose()?;
        ring.map(|r| <[u8; 16]>::try_from(r.as_slice()).map_err(|_| corrupt("key ring id"))).transpose()
    }

    fn note_key_day(&mut self, day: Day) -> Result<(), Error> {
        self.execute("UPDATE keyring SET day = $1 WHERE day IS NULL OR day < $1", &[&day.to_string()])?;
        Ok(())
    }

    fn ping(&mut self) -> Result<(), Error> {
        self.query("SELECT 1", &[])?;
        Ok(())
    }

    fn exec(&mut self, sql: &'static str) -> Result<(), Error> {
        let r = self.c.batch_execute(sql);
        if r.is_ok() {
            if sql.starts_with("SAVEPOINT") {
                self.savepoints += 1;
            } else if sql.starts_with("RELEASE") {
                self.savepoints = self.savepoints.saturating_sub(1);
            }
        }
        self.checked(r)
    }

    fn rolled_back(&mut self) -> bool {
        self.aborted
    }

    fn finish_batch(&mut self) -> Result<(), Error> {
        let held = std::mem::take(&mut self.held);
        self.insert_shuffled(held)
    }
}
