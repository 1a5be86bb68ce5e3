//! The row operations ([`Rows`]) in SQLite: every statement cached on its
//! connection, a range of a media item read from its BLOB in place.
//!
//! Ballots lie in key order (`sealed_ballots` is a `WITHOUT ROWID` table
//! keyed by poll and key), so a mix writes them back in key order: where a
//! row lies, and where within its page, then follows its random key alone.

use rusqlite::{Connection, OptionalExtension, params};

use crate::day::Day;
use crate::error::Error;

use super::super::engine::Rows;
use super::super::vocab::{
    BallotRow, CodeRow, Cols, DueRow, FORMAT, LeaseRow, NewPollRow, PollWith, ResealedRow, STAGED, corrupt,
};

/// A SQLite connection (or a transaction on it) seen as [`Rows`].
pub(in crate::store) struct SqliteRows<'a>(pub &'a Connection);

fn count(n: i64) -> Result<u64, Error> {
    u64::try_from(n).map_err(|_| corrupt("counter"))
}

impl Rows for SqliteRows<'_> {
    fn poll(&mut self, id: &str, live_on: Option<Day>, cols: Cols) -> Result<Option<PollWith>, Error> {
        let live = if live_on.is_some() { " AND expires_on > ?2" } else { "" };
        let body = if cols.body() { "body" } else { "NULL" };
        let tallies = if cols.tallies() { "tallies" } else { "NULL" };
        let sql = format!(
            "SELECT created_on, expires_on, key_day, data_key, {body}, {tallies} FROM sealed_polls WHERE id = ?1{live}"
        );
        let read = |r: &rusqlite::Row| {
            Ok((
                (r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?),
                r.get::<_, Vec<u8>>(3)?,
                r.get::<_, Option<Vec<u8>>>(4)?,
                r.get::<_, Option<Vec<u8>>>(5)?,
            ))
        };
        let mut stmt = self.0.prepare_cached(&sql)?;
        let row = match live_on {
            Some(day) => stmt.query_row(params![id, day.to_string()], read),
            None => stmt.query_row(params![id], read),
        }
        .optional()?;
        row.map(|((c, e, k), w, b, t)| PollWith::read((&c, &e, &k), w, b, t)).transpose()
    }

    fn insert_poll(&mut self, p: &NewPollRow) -> Result<(), Error> {
        self.0
            .prepare_cached(
                "INSERT INTO sealed_polls (id, created_on, expires_on, key_day, data_key, body, tallies, format)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                p.id,
                p.created_on.to_string(),
                p.expires_on.to_string(),
                p.key_day.to_string(),
                p.data_key,
                p.body,
                p.tallies,
                FORMAT
            ])?;
        Ok(())
    }

    fn set_body(&mut self, id: &str, sealed: &[u8]) -> Result<(), Error> {
        self.0.prepare_cached("UPDATE sealed_polls SET body = ?2 WHERE id = ?1")?.execute(params![id, sealed])?;
        Ok(())
    }

    fn set_tallies(&mut self, id: &str, sealed: &[u8]) -> Result<(), Error> {
        self.0.prepare_cached("UPDATE sealed_polls SET tallies = ?2 WHERE id = ?1")?.execute(params![id, sealed])?;
        Ok(())
    }

    fn set_key(&mut self, id: &str, expires_on: Option<Day>, key_day: Day, wrapped: &[u8]) -> Result<(), Error> {
        match expires_on {
            Some(e) => self
                .0
                .prepare_cached("UPDATE sealed_polls SET expires_on = ?2, key_day = ?3, data_key = ?4 WHERE id = ?1")?
                .execute(params![id, e.to_string(), key_day.to_string(), wrapped])?,
            None => self
                .0
                .prepare_cached("UPDATE sealed_polls SET key_day = ?2, data_key = ?3 WHERE id = ?1")?
                .execute(params![id, key_day.to_string(), wrapped])?,
        };
        Ok(())
    }

    fn reseal_poll(&mut self, id: &str, row: &ResealedRow) -> Result<(), Error> {
        self.0
            .prepare_cached(
                "UPDATE sealed_polls SET key_day = ?2, data_key = ?3, body = ?4, tallies = ?5, format = ?6,
                 old_tags = coalesce(?7, old_tags), ballot_groups = ?8 WHERE id = ?1",
            )?
            .execute(params![
                id,
                row.key_day.to_string(),
                row.data_key,
                row.body,
                row.tallies,
                FORMAT,
                row.old_tags,
                row.groups
            ])?;
        Ok(())
    }

    fn delete_poll(&mut self, id: &str) -> Result<u64, Error> {
        Ok(self.0.prepare_cached("DELETE FROM sealed_polls WHERE id = ?1")?.execute(params![id])? as u64)
    }

    fn delete_expired(&mut self, day: Day) -> Result<u64, Error> {
        Ok(self
            .0
            .prepare_cached("DELETE FROM sealed_polls WHERE expires_on <= ?1")?
            .execute(params![day.to_string()])? as u64)
    }

    fn leases(&mut self) -> Result<Vec<LeaseRow>, Error> {
        let mut stmt =
            self.0.prepare("SELECT id, expires_on, key_day, data_key, old_tags FROM sealed_polls ORDER BY id")?;
        let rows = stmt.query_map([], |r| {
            Ok(LeaseRow {
                id: r.get(0)?,
                expires_on: r.get(1)?,
                key_day: r.get(2)?,
                data_key: r.get(3)?,
                old_tags: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn poll_ids(&mut self) -> Result<Vec<String>, Error> {
        let mut stmt = self.0.prepare("SELECT id FROM sealed_polls ORDER BY id")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn format_of(&mut self, id: &str) -> Result<Option<i64>, Error> {
        Ok(self
            .0
            .prepare_cached("SELECT format FROM sealed_polls WHERE id = ?1")?
            .query_row(params![id], |r| r.get(0))
            .optional()?)
    }

    fn key_day(&mut self, id: &str) -> Result<Option<String>, Error> {
        Ok(self
            .0
            .prepare_cached("SELECT key_day FROM sealed_polls WHERE id = ?1")?
            .query_row(params![id], |r| r.get(0))
            .optional()?)
    }

    fn polls_of_format(&mut self, format: i64) -> Result<Vec<String>, Error> {
        let has_format: bool = self.0.query_row(
            "SELECT EXISTS (SELECT 1 FROM pragma_table_info('sealed_polls') WHERE name = 'format')",
            [],
            |r| r.get(0),
        )?;
        if !has_format {
            return Ok(Vec::new());
        }
        let mut stmt = self.0.prepare("SELECT id FROM sealed_polls WHERE format = ?1 ORDER BY id")?;
        let rows = stmt.query_map(params![format], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn ballot(&mut self, poll: &str, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        Ok(self
            .0
            .prepare_cached("SELECT sealed FROM sealed_ballots WHERE poll_id = ?1 AND id = ?2")?
            .query_row(params![poll, key], |r| r.get(0))
            .optional()?)
    }

    fn ballots(&mut self, poll: &str) -> Result<Vec<BallotRow>, Error> {
        let mut stmt = self.0.prepare_cached("SELECT id, sealed FROM sealed_ballots WHERE poll_id = ?1 ORDER BY id")?;
        let rows = stmt.query_map(params![poll], |r| Ok(BallotRow { key: r.get(0)?, sealed: r.get(1)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn ballots_between(&mut self, poll: &str, lo: &[u8; 16], hi: &[u8; 16]) -> Result<Vec<BallotRow>, Error> {
        let mut stmt = self.0.prepare_cached(
            "SELECT id, sealed FROM sealed_ballots WHERE poll_id = ?1 AND id BETWEEN ?2 AND ?3 ORDER BY id",
        )?;
        let rows =
            stmt.query_map(params![poll, &lo[..], &hi[..]], |r| Ok(BallotRow { key: r.get(0)?, sealed: r.get(1)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn delete_ballots_between(&mut self, poll: &str, lo: &[u8; 16], hi: &[u8; 16]) -> Result<u64, Error> {
        Ok(self
            .0
            .prepare_cached("DELETE FROM sealed_ballots WHERE poll_id = ?1 AND id BETWEEN ?2 AND ?3")?
            .execute(params![poll, &lo[..], &hi[..]])? as u64)
    }

    fn groups(&mut self, id: &str) -> Result<Option<Vec<u8>>, Error> {
        Ok(self
            .0
            .prepare_cached("SELECT ballot_groups FROM sealed_polls WHERE id = ?1")?
            .query_row(params![id], |r| r.get(0))
            .optional()?
            .flatten())
    }

    fn set_groups(&mut self, id: &str, sealed: &[u8]) -> Result<(), Error> {
        self.0
            .prepare_cached("UPDATE sealed_polls SET ballot_groups = ?2 WHERE id = ?1")?
            .execute(params![id, sealed])?;
        Ok(())
    }

    fn insert_ballot(&mut self, poll: &str, key: &[u8], sealed: Vec<u8>) -> Result<(), Error> {
        self.0
            .prepare_cached("INSERT INTO sealed_ballots (poll_id, id, sealed) VALUES (?1, ?2, ?3)")?
            .execute(params![poll, key, sealed])?;
        Ok(())
    }

    fn insert_ballots(&mut self, poll: &str, mut rows: Vec<BallotRow>) -> Result<(), Error> {
        // In key order: each page is filled in the order its rows lie, so
        // not even a page's cells keep the order of anything but the keys.
        rows.sort_by(|a, b| a.key.cmp(&b.key));
        let mut insert =
            self.0.prepare_cached("INSERT INTO sealed_ballots (poll_id, id, sealed) VALUES (?1, ?2, ?3)")?;
        for row in rows {
            insert.execute(params![poll, row.key, row.sealed])?;
        }
        Ok(())
    }

    fn delete_ballot(&mut self, poll: &str, key: &[u8]) -> Result<u64, Error> {
        Ok(self
            .0
            .prepare_cached("DELETE FROM sealed_ballots WHERE poll_id = ?1 AND id = ?2")?
            .execute(params![poll, key])? as u64)
    }

    fn staged_polls(&mut self) -> Result<Vec<String>, Error> {
        // Polls first, then a seek into each one's rows from the staged
        // keys on: a few pages per poll instead of reading every ballot.
        let mut stmt = self.0.prepare(
            "SELECT p.id FROM sealed_polls p
             WHERE EXISTS (SELECT 1 FROM sealed_ballots r WHERE r.poll_id = p.id AND r.id >= ?1)",
        )?;
        let rows = stmt.query_map(params![&[STAGED][..]], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn insert_codes(&mut self, poll: &str, rows: &[CodeRow]) -> Result<(), Error> {
        let mut insert = self.0.prepare_cached("INSERT INTO poll_codes (poll_id, mac, slot) VALUES (?1, ?2, ?3)")?;
        for row in rows {
            insert.execute(params![poll, &row.mac[..], row.slot])?;
        }
        Ok(())
    }

    fn code_slot(&mut self, poll: &str, mac: &[u8; 32]) -> Result<Option<u32>, Error> {
        Ok(self
            .0
            .prepare_cached("SELECT slot FROM poll_codes WHERE poll_id = ?1 AND mac = ?2")?
            .query_row(params![poll, &mac[..]], |r| r.get(0))
            .optional()?)
    }

    fn codes_issued(&mut self, poll: &str) -> Result<u64, Error> {
        let n: i64 = self
            .0
            .prepare_cached("SELECT count(*) FROM poll_codes WHERE poll_id = ?1")?
            .query_row(params![poll], |r| r.get(0))?;
        count(n)
    }

    fn codes(&mut self, poll: &str) -> Result<Vec<CodeRow>, Error> {
        let mut stmt = self.0.prepare_cached("SELECT mac, slot FROM poll_codes WHERE poll_id = ?1 ORDER BY mac")?;
        let rows = stmt.query_map(params![poll], |r| Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, u32>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (mac, slot) = row?;
            out.push(CodeRow { mac: <[u8; 32]>::try_from(mac.as_slice()).map_err(|_| corrupt("code row"))?, slot });
        }
        Ok(out)
    }

    fn format_one_codes(&mut self, poll: &str) -> Result<Vec<([u8; 32], bool)>, Error> {
        let mut stmt = self.0.prepare_cached("SELECT code_mac, used FROM sealed_invites WHERE poll_id = ?1")?;
        let rows = stmt.query_map(params![poll], |r| Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, bool>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (mac, used) = row?;
            out.push((<[u8; 32]>::try_from(mac.as_slice()).map_err(|_| corrupt("invite row"))?, used));
        }
        Ok(out)
    }

    fn delete_format_one_codes(&mut self, poll: &str) -> Result<(), Error> {
        self.0.prepare_cached("DELETE FROM sealed_invites WHERE poll_id = ?1")?.execute(params![poll])?;
        Ok(())
    }

    fn insert_media(&mut self, id: &str, poll: &str, sealed: &[u8]) -> Result<(), Error> {
        self.0
            .prepare_cached("INSERT INTO sealed_media (id, poll_id, bytes) VALUES (?1, ?2, ?3)")?
            .execute(params![id, poll, sealed])?;
        Ok(())
    }

    fn delete_media(&mut self, id: &str, poll: Option<&str>) -> Result<u64, Error> {
        let n = match poll {
            Some(p) => self
                .0
                .prepare_cached("DELETE FROM sealed_media WHERE id = ?1 AND poll_id = ?2")?
                .execute(params![id, p])?,
            None => self.0.prepare_cached("DELETE FROM sealed_media WHERE id = ?1")?.execute(params![id])?,
        };
        Ok(n as u64)
    }

    fn media_poll(&mut self, id: &str) -> Result<Option<String>, Error> {
        Ok(self
            .0
            .prepare_cached("SELECT poll_id FROM sealed_media WHERE id = ?1")?
            .query_row(params![id], |r| r.get(0))
            .optional()?)
    }

    fn media_spans(&mut self, id: &str, spans: &[(usize, usize)]) -> Result<Vec<Vec<u8>>, Error> {
        let Some(rowid) = self
            .0
            .prepare_cached("SELECT rowid FROM sealed_media WHERE id = ?1")?
            .query_row(params![id], |r| r.get::<_, i64>(0))
            .optional()?
        else {
            return Err(corrupt("media row"));
        };
        let handle = self.0.blob_open(rusqlite::MAIN_DB, "sealed_media", "bytes", rowid, true)?;
        let mut out = Vec::with_capacity(spans.len());
        for &(start, len) in spans {
            let mut bytes = vec![0u8; len];
            handle.read_at_exact(&mut bytes, start)?;
            out.push(bytes);
        }
        Ok(out)
    }

    fn due(&mut self, as_of: Day) -> Result<Vec<DueRow>, Error> {
        let mut stmt = self.0.prepare(
            "SELECT p.expires_on, count(*),
                    sum((SELECT count(*) FROM sealed_ballots r WHERE r.poll_id = p.id)),
                    sum((SELECT count(*) FROM sealed_media m WHERE m.poll_id = p.id)),
                    sum((SELECT coalesce(sum(length(m.bytes)), 0) FROM sealed_media m WHERE m.poll_id = p.id))
             FROM sealed_polls p WHERE p.expires_on <= ?1 GROUP BY p.expires_on ORDER BY p.expires_on",
        )?;
        let rows = stmt.query_map(params![as_of.to_string()], |r| {
            Ok(DueRow {
                expires_on: r.get(0)?,
                polls: r.get(1)?,
                ballots: r.get(2)?,
                media: r.get(3)?,
                media_bytes: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn keyring_ring(&mut self) -> Result<Option<[u8; 16]>, Error> {
        let ring: Option<Vec<u8>> =
            self.0.prepare_cached("SELECT ring FROM keyring")?.query_row([], |r| r.get(0)).optional()?;
        ring.map(|r| <[u8; 16]>::try_from(r.as_slice()).map_err(|_| corrupt("key ring id"))).transpose()
    }

    fn note_key_day(&mut self, day: Day) -> Result<(), Error> {
        self.0
            .prepare_cached("UPDATE keyring SET day = ?1 WHERE day IS NULL OR day < ?1")?
            .execute(params![day.to_string()])?;
        Ok(())
    }

    fn ping(&mut self) -> Result<(), Error> {
        self.0.prepare_cached("SELECT 1")?.query_row([], |_| Ok(()))?;
        Ok(())
    }

    fn exec(&mut self, sql: &'static str) -> Result<(), Error> {
        self.0.execute_batch(sql)?;
        Ok(())
    }

    fn rolled_back(&mut self) -> bool {
        self.0.is_autocommit()
    }
}
