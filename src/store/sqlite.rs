//! The row operations ([`Rows`]) in SQLite: every statement cached on its
//! connection, a range of a media item read from its BLOB in place.
//!
//! Ballots go in at once, one `INSERT` each: the writer's mix rewrites them
//! in key order afterwards (`writer/mix.rs`), which is how SQLite hides
//! the order they came in.

use rusqlite::{Connection, OptionalExtension, params};

use crate::day::Day;
use crate::error::Error;

use super::corrupt;
use super::engine::{BallotRows, Cols, DueRow, Lease, NewRow, RowWith, Rows, day_column, row_with};

/// A SQLite connection (or a transaction on it) seen as [`Rows`].
pub(super) struct Lite<'a>(pub &'a Connection);

fn count(n: i64) -> Result<u64, Error> {
    u64::try_from(n).map_err(|_| corrupt("counter"))
}

impl Rows for Lite<'_> {
    fn poll(&mut self, id: &str, live_on: Option<Day>, cols: Cols) -> Result<Option<RowWith>, Error> {
        let live = if live_on.is_some() { " AND expires_on > ?2" } else { "" };
        let sql = format!(
            "SELECT created_on, expires_on, key_day, data_key{} FROM sealed_polls WHERE id = ?1{live}",
            cols.sql()
        );
        let n = cols.count();
        let read = |r: &rusqlite::Row| {
            let mut blobs = Vec::with_capacity(n);
            for i in 0..n {
                blobs.push(r.get::<_, Vec<u8>>(4 + i)?);
            }
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, Vec<u8>>(3)?, blobs))
        };
        let mut stmt = self.0.prepare_cached(&sql)?;
        let row = match live_on {
            Some(day) => stmt.query_row(params![id, day.to_string()], read),
            None => stmt.query_row(params![id], read),
        }
        .optional()?;
        row.map(|(c, e, k, w, b)| row_with(&c, &e, &k, w, b)).transpose()
    }

    fn insert_poll(&mut self, p: &NewRow) -> Result<(), Error> {
        self.0
            .prepare_cached(
                "INSERT INTO sealed_polls (id, created_on, expires_on, key_day, data_key, body, tallies)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                p.id,
                p.created_on.to_string(),
                p.expires_on.to_string(),
                p.key_day.to_string(),
                p.data_key,
                p.body,
                p.tallies
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

    fn set_lease(&mut self, id: &str, expires_on: Option<Day>, key_day: Day, wrapped: &[u8]) -> Result<(), Error> {
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

    fn delete_poll(&mut self, id: &str) -> Result<u64, Error> {
        Ok(self.0.prepare_cached("DELETE FROM sealed_polls WHERE id = ?1")?.execute(params![id])? as u64)
    }

    fn delete_expired(&mut self, day: Day) -> Result<u64, Error> {
        Ok(self
            .0
            .prepare_cached("DELETE FROM sealed_polls WHERE expires_on <= ?1")?
            .execute(params![day.to_string()])? as u64)
    }

    fn leases(&mut self) -> Result<Vec<Lease>, Error> {
        let rows: Vec<(String, String, String, Vec<u8>)> = self
            .0
            .prepare("SELECT id, expires_on, key_day, data_key FROM sealed_polls ORDER BY id")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<Result<_, _>>()?;
        rows.into_iter()
            .map(|(id, e, k, w)| Ok((id, day_column(&e, "expires_on")?, day_column(&k, "key_day")?, w)))
            .collect()
    }

    fn key_day(&mut self, id: &str) -> Result<Option<String>, Error> {
        Ok(self
            .0
            .prepare_cached("SELECT key_day FROM sealed_polls WHERE id = ?1")?
            .query_row(params![id], |r| r.get(0))
            .optional()?)
    }

    fn ballot(&mut self, poll: &str, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        Ok(self
            .0
            .prepare_cached("SELECT sealed FROM sealed_ballots WHERE poll_id = ?1 AND id = ?2")?
            .query_row(params![poll, key], |r| r.get(0))
            .optional()?)
    }

    fn ballots(&mut self, poll: &str) -> Result<BallotRows, Error> {
        let mut stmt = self.0.prepare_cached("SELECT id, sealed FROM sealed_ballots WHERE poll_id = ?1 ORDER BY id")?;
        let rows = stmt.query_map(params![poll], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn insert_ballot(&mut self, poll: &str, key: &[u8], sealed: Vec<u8>) -> Result<(), Error> {
        self.0
            .prepare_cached("INSERT INTO sealed_ballots (poll_id, id, sealed) VALUES (?1, ?2, ?3)")?
            .execute(params![poll, key, sealed])?;
        Ok(())
    }

    fn update_ballot(&mut self, poll: &str, key: &[u8], sealed: &[u8]) -> Result<(), Error> {
        self.0
            .prepare_cached("UPDATE sealed_ballots SET sealed = ?3 WHERE poll_id = ?1 AND id = ?2")?
            .execute(params![poll, key, sealed])?;
        Ok(())
    }

    fn delete_ballot(&mut self, poll: &str, key: &[u8]) -> Result<(), Error> {
        self.0
            .prepare_cached("DELETE FROM sealed_ballots WHERE poll_id = ?1 AND id = ?2")?
            .execute(params![poll, key])?;
        Ok(())
    }

    fn insert_invite(&mut self, poll: &str, mac: &[u8]) -> Result<(), Error> {
        self.0
            .prepare_cached("INSERT INTO sealed_invites (poll_id, code_mac) VALUES (?1, ?2)")?
            .execute(params![poll, mac])?;
        Ok(())
    }

    fn spend_invite(&mut self, poll: &str, mac: &[u8]) -> Result<u64, Error> {
        Ok(self
            .0
            .prepare_cached("UPDATE sealed_invites SET used = 1 WHERE poll_id = ?1 AND code_mac = ?2 AND used = 0")?
            .execute(params![poll, mac])? as u64)
    }

    fn invite_counts(&mut self, poll: &str) -> Result<(u64, u64), Error> {
        let (issued, used): (i64, i64) = self
            .0
            .prepare_cached("SELECT count(*), coalesce(sum(used), 0) FROM sealed_invites WHERE poll_id = ?1")?
            .query_row(params![poll], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok((count(issued)?, count(used)?))
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
            Ok((r.get::<_, String>(0)?, [r.get::<_, i64>(1)?, r.get(2)?, r.get(3)?, r.get(4)?]))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
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
