//! Hiding the order ballots came in: staging and the mix.
//!
//! A new ballot is stored *staged*, under a key starting with [`STAGED`], so
//! it lands with its poll's other new ballots at the end of the poll's rows
//! (a vote then touches one page instead of a random one). Once the writer
//! is idle after votes, or at least every [`MIX_EVERY`] under steady load,
//! the mix gives each staged ballot its final key (random, or its receipt's
//! settled key), seals it again for that place, and deletes and writes back
//! in key order the rows around it, so that where a ballot lies in the file
//! follows its random key alone.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use crate::error::Error;
use crate::keyring::Keyring;
use crate::secret::PollId;

use super::super::reader::corrupt_sealed;
use super::super::seal::DataKey;
use super::super::{data_key, fallback_key, place, rows};
use super::Writer;

/// Rows rewritten on each side of a new ballot: more than a page holds, so
/// the new ballot's page is rewritten whole.
const NEIGHBOURS: i64 = 100;
/// Rows the mix holds in memory at once (per kind: settled and staged), and
/// rewrites in one step (one transaction) at most: small, because the votes
/// queued behind a step wait for it (it was 1,000 rows in one transaction
/// for the whole mix before issue 24, item 4, then 250: under the audit's
/// load a step of 250 small ballots took 2.7 ms of the writer's time, 16
/// ms at the 99th percentile, which votes queued behind it waited for.
/// What smaller steps did to the small poll's p99 is within the noise on
/// tmpfs and about a fifth less on disk: docs/RELIABILITY.md).
pub(super) const MIX_CHUNK: usize = 100;
/// Bytes of sealed ballots one step rewrites, about: a poll's steps take
/// as many rows as this holds of its ballots, [`MIX_CHUNK`] at most. Each
/// moved ballot is opened and sealed again, so large ballots cost more a
/// row: 250 heavy ballots (20 rankings of 12, about 1.3 KB sealed) took 8
/// ms a step, 25 ms at the 99th percentile, under the audit's load, while
/// every other poll's votes waited behind them. At this budget a heavy
/// poll's step takes about 25 rows, a small poll's (about 200 bytes a
/// ballot) the whole chunk.
pub(super) const MIX_STEP_BYTES: usize = 32 * 1024;
/// Rows a step takes at least, however large a poll's ballots.
const MIX_MIN_ROWS: usize = 8;
/// Under steady load the writer is never idle; it mixes at least this often.
/// Short, because until the mix the WAL holds new ballots in commit order,
/// and because a mix of a minute's ballots (the interval was 60 s) left
/// polld's resident memory some 4 MiB higher for good (measured in
/// tests/soak.rs: docs/PERFORMANCE.md, "The mix's memory").
pub const MIX_EVERY: Duration = Duration::from_secs(10);
/// After a failed mix, the next is not tried before this.
pub(super) const MIX_RETRY: Duration = Duration::from_secs(60);
/// New ballots remembered before the writer mixes whatever the time.
pub(super) const MAX_FRESH: usize = 100_000;
/// The first byte of a staged ballot's key; a mixed ballot's key never
/// starts with it.
///
/// Why stage: a ballot stored at once at its random key lands on a random
/// page of its poll, so in a large poll every vote read a page from the
/// file and added a page to the WAL (measured: 3.1 page reads and 5.5 page
/// writes per vote at 1M stored responses, against 0.2 and 2.5 at 1k). A
/// staged ballot lands on the last page of its poll, which the batch's
/// other new ballots share; the mix moves it to its random key.
pub(in crate::store) const STAGED: u8 = 0xff;

/// Where the mix moves a staged ballot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Target {
    /// A fresh random key.
    Random,
    /// Its receipt's settled key.
    Settled([u8; 16]),
    /// A ballot a previous run left staged: whether it came with a receipt
    /// is not known any more, so it goes where a receipt still finds it
    /// (`fallback_key`, drawn under the poll's key).
    Fallback,
}

/// Per poll, each staged key and where the mix moves it.
type StagedKeys = BTreeMap<String, Vec<([u8; 16], Target)>>;

/// The keys of ballots stored since the last mix, by poll.
#[derive(Default)]
pub(in crate::store) struct Fresh {
    pub(super) keys: StagedKeys,
    pub count: usize,
    /// When the oldest of them was stored.
    pub(super) since: Option<Instant>,
    /// After a failed mix, the next is not tried before this.
    pub(super) not_before: Option<Instant>,
}

impl Fresh {
    pub fn add(&mut self, poll: &PollId, key: [u8; 16], to: Option<[u8; 16]>) {
        self.add_key(poll.as_str(), key, to.map_or(Target::Random, Target::Settled));
    }

    fn add_key(&mut self, poll: &str, key: [u8; 16], to: Target) {
        self.keys.entry(poll.to_owned()).or_default().push((key, to));
        self.count += 1;
        self.since.get_or_insert_with(Instant::now);
    }

    /// Adds the ballots a previous run staged and did not mix (it crashed
    /// before its next idle moment), to be mixed like new ones. A failed
    /// look is reported; those ballots then stay where they are.
    pub fn find_left_staged(&mut self, conn: &Connection) {
        if let Err(e) = self.add_left_staged(conn) {
            eprintln!("anonpoll: could not look for ballots left unmixed (they stay where they are): {e}");
        }
    }

    fn add_left_staged(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        let known: std::collections::BTreeSet<(String, [u8; 16])> =
            self.keys.iter().flat_map(|(p, ks)| ks.iter().map(move |(k, _)| (p.clone(), *k))).collect();
        // Polls first, then a seek into each one's rows from the staged
        // keys on: a few pages per poll instead of reading every ballot.
        let mut stmt = conn.prepare(
            "SELECT r.poll_id, r.id FROM sealed_polls p CROSS JOIN sealed_ballots r ON r.poll_id = p.id AND r.id >= ?1",
        )?;
        let mut rows = stmt.query(params![&[STAGED][..]])?;
        while let Some(r) = rows.next()? {
            let (poll, id): (String, Vec<u8>) = (r.get(0)?, r.get(1)?);
            if let Ok(key) = <[u8; 16]>::try_from(id.as_slice())
                && !known.contains(&(poll.clone(), key))
            {
                self.add_key(&poll, key, Target::Fallback);
            }
        }
        Ok(())
    }

    /// Whether there are ballots to mix, and a mix may be tried now.
    pub fn waiting(&self) -> bool {
        self.waiting_at(Instant::now())
    }

    fn waiting_at(&self, now: Instant) -> bool {
        self.count > 0 && self.not_before.is_none_or(|t| now >= t)
    }

    /// Whether mixing cannot wait for an idle moment any longer.
    pub fn overdue(&self) -> bool {
        self.overdue_at(Instant::now())
    }

    pub(super) fn overdue_at(&self, now: Instant) -> bool {
        self.waiting_at(now)
            && (self.count >= MAX_FRESH || self.since.is_some_and(|t| now.saturating_duration_since(t) >= MIX_EVERY))
    }
}

impl Writer {
    /// Mixes to the end: finishes the mix under way, if any, then mixes
    /// every ballot staged so far (once, even if a failed mix's pause is not
    /// over). On failure the keys left are kept, to be tried again after
    /// [`MIX_RETRY`]. The caller then truncates the WAL.
    pub(super) fn mix(&mut self, conn: &mut Connection) {
        self.mix_in_chunks(conn, MIX_CHUNK);
    }

    pub(super) fn mix_in_chunks(&mut self, conn: &mut Connection, chunk: usize) {
        while !self.mix_step(conn) {}
        if self.fresh.count > 0 {
            self.start_mix(chunk);
            while !self.mix_step(conn) {}
        }
    }

    /// Begins a mix of every ballot staged so far, done by [`Writer::mix_step`]
    /// one transaction at a time; ballots staged meanwhile wait for the next.
    pub(super) fn start_mix(&mut self, chunk: usize) {
        let fresh = std::mem::take(&mut self.fresh);
        self.mixing = Some(Mixing { polls: fresh.keys, current: None, chunk: chunk.max(1) });
    }

    /// Whether a mix is under way.
    pub(super) fn mixing(&self) -> bool {
        self.mixing.is_some()
    }

    /// One step of the mix under way: at most `chunk` settled and `chunk`
    /// staged rows rewritten (fewer for large ballots: [`MIX_STEP_BYTES`]),
    /// in one transaction. True once the mix is over
    /// (or there is none); a failed step ends it, and its ballots not yet
    /// placed are staged again, to be tried after [`MIX_RETRY`].
    pub(super) fn mix_step(&mut self, conn: &mut Connection) -> bool {
        let Some(mixing) = self.mixing.as_mut() else { return true };
        match mixing.step(conn, &self.keys) {
            Ok(false) => false,
            Ok(true) => {
                self.mixing = None;
                true
            }
            Err(e) => {
                eprintln!("anonpoll: could not rewrite new ballots in random order (will retry): {e}");
                if let Some(left) = self.mixing.take() {
                    // Those already moved are skipped when tried again.
                    for (poll, keys) in left.current.map(|c| (c.poll, c.keys)).into_iter().chain(left.polls) {
                        for (key, to) in keys {
                            self.fresh.add_key(&poll, key, to);
                        }
                    }
                }
                self.fresh.not_before = Some(Instant::now() + MIX_RETRY);
                true
            }
        }
    }
}

/// A mix under way. It is done in steps of one transaction each, and the
/// writer serves what is queued between steps: a mix of a heavy poll's ten
/// seconds of ballots no longer holds every other poll's votes for its whole
/// length (issue 24, item 4). Chunk after chunk in key order is still key
/// order, and ballots staged meanwhile are left for the next mix, so where
/// a ballot lies once the mix is over follows its random key alone, as with
/// one transaction. Only the WAL between steps shows more, and it is
/// truncated when the mix is over, as before.
pub(in crate::store) struct Mixing {
    /// Polls not begun yet, with their staged keys.
    polls: StagedKeys,
    /// The poll being mixed.
    current: Option<PollMix>,
    chunk: usize,
}

/// Where the mix of one poll is.
struct PollMix {
    poll: String,
    key: DataKey,
    /// Its staged keys, given back if the mix fails.
    keys: Vec<([u8; 16], Target)>,
    /// Each staged key, by the key it gets.
    moves: BTreeMap<[u8; 16], [u8; 16]>,
    /// What is left to rewrite, in key order; the first one from its `from`.
    spans: std::collections::VecDeque<Span>,
    /// Rows a step of this poll rewrites ([`MIX_STEP_BYTES`] of its ballots).
    rows: usize,
}

impl Mixing {
    /// Rewrites the next chunk, beginning the next poll where one is done.
    /// True once nothing is left.
    fn step(&mut self, conn: &mut Connection, keyring: &Keyring) -> Result<bool, Error> {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        loop {
            let current = match self.current.as_mut() {
                Some(current) => current,
                None => {
                    let Some((poll, keys)) = self.polls.pop_first() else {
                        tx.commit()?;
                        return Ok(true);
                    };
                    match begin(&tx, keyring, poll, keys, self.chunk)? {
                        Some(begun) => self.current.insert(begun),
                        // A poll erased since, or whose key is gone, has nothing to mix.
                        None => continue,
                    }
                }
            };
            let Some(span) = current.spans.front_mut() else {
                self.current = None;
                continue;
            };
            span.from = rewrite_chunk(&tx, (&current.poll, &current.key), span, &current.moves, current.rows)?;
            if span.from >= span.to {
                current.spans.pop_front();
            }
            tx.commit()?;
            return Ok(false);
        }
    }
}

/// Draws the new keys of `poll`'s staged ballots and finds the spans their
/// mix rewrites, `chunk` rows a step at most; `None` if the poll is gone.
fn begin(
    tx: &Transaction,
    keyring: &Keyring,
    poll: String,
    keys: Vec<([u8; 16], Target)>,
    chunk: usize,
) -> Result<Option<PollMix>, Error> {
    let Some((key, stored)) = poll_key(tx, keyring, &poll)? else { return Ok(None) };
    let moves: BTreeMap<[u8; 16], [u8; 16]> = keys
        .iter()
        .map(|(k, to)| {
            let to = match to {
                Target::Random => mixed_key()?,
                Target::Settled(to) => *to,
                Target::Fallback => fallback_key(&key, k),
            };
            Ok((to, *k))
        })
        .collect::<Result<_, Error>>()?;
    let spans = spans(tx, &poll, stored, &moves)?.into();
    // The size of this poll's ballots, from a few of them (one poll's are
    // alike: the same questions).
    let sample: Option<f64> = tx
        .prepare_cached(
            "SELECT avg(length(sealed)) FROM (SELECT sealed FROM sealed_ballots WHERE poll_id = ?1 LIMIT 16)",
        )?
        .query_row([&poll], |r| r.get(0))?;
    let rows = step_rows(sample.unwrap_or(0.0), chunk);
    Ok(Some(PollMix { poll, key, keys, moves, spans, rows }))
}

/// Rows a step takes of ballots of `size` bytes each: what
/// [`MIX_STEP_BYTES`] holds, between [`MIX_MIN_ROWS`] and `chunk`.
fn step_rows(size: f64, chunk: usize) -> usize {
    if size < 1.0 {
        return chunk;
    }
    // A float to an integer saturates; the size is a row's length.
    let fit = (MIX_STEP_BYTES as f64 / size) as usize;
    fit.clamp(MIX_MIN_ROWS.min(chunk), chunk)
}

/// A random key that is not a staged one.
pub(in crate::store) fn mixed_key() -> rusqlite::Result<[u8; 16]> {
    let mut key = [0u8; 16];
    crate::secret::random_bytes(&mut key).map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
    // One value of 256 is taken by staging; the first byte stays uniform
    // over the others.
    while key[0] == STAGED {
        let mut b = [0u8; 1];
        crate::secret::random_bytes(&mut b).map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
        key[0] = b[0];
    }
    Ok(key)
}

/// A ballot row as the mix read it: the key it has, the key it gets, and
/// what it holds.
struct Stored {
    key: Vec<u8>,
    to: Vec<u8>,
    sealed: Vec<u8>,
}

impl Stored {
    fn read(r: &rusqlite::Row, to: Option<Vec<u8>>) -> rusqlite::Result<Stored> {
        let key: Vec<u8> = r.get(0)?;
        Ok(Stored { to: to.unwrap_or_else(|| key.clone()), key, sealed: r.get(1)? })
    }
}

/// The first key after `key` (keys compare as byte strings): `key` and a 0.
fn after(key: &[u8]) -> Vec<u8> {
    let mut next = key.to_vec();
    next.push(0);
    next
}

/// The keys `[from, to)` of a poll that the mix rewrites: every settled
/// ballot in them, and every staged one whose new key falls in them.
struct Span {
    from: Vec<u8>,
    to: Vec<u8>,
}

/// Poll `poll`'s data key and how many ballots it holds, if it is stored
/// and its key exists.
fn poll_key(tx: &Transaction, keyring: &Keyring, poll: &str) -> Result<Option<(DataKey, u64)>, Error> {
    let row = tx
        .prepare_cached("SELECT key_day, data_key, tallies FROM sealed_polls WHERE id = ?1")?
        .query_row([poll], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?, r.get::<_, Vec<u8>>(2)?)))
        .optional()?;
    let Some((day, wrapped, tallies)) = row else { return Ok(None) };
    let day = crate::day::Day::parse(&day).ok_or_else(|| super::super::corrupt("key_day"))?;
    let key = match data_key(keyring, poll, day, &wrapped) {
        Ok(k) => k,
        Err(Error::NotFound) => return Ok(None),
        Err(e) => return Err(e),
    };
    let plain = key.open(&place::tallies(poll), &tallies).map_err(|e| corrupt_sealed("counts", e))?;
    Ok(Some((key, rows::tallies_total(&plain)?)))
}

/// What the mix of `moves` rewrites in `poll`, in key order and apart:
/// around each new key, the [`NEIGHBOURS`] settled rows below it and those
/// at or above it; or everything below the staged keys, where those
/// neighbourhoods would cover the poll anyway.
fn spans(
    tx: &Transaction,
    poll: &str,
    stored: u64,
    moves: &BTreeMap<[u8; 16], [u8; 16]>,
) -> rusqlite::Result<Vec<Span>> {
    let staged = vec![STAGED];
    if moves.len() as u64 * (2 * NEIGHBOURS as u64 + 1) >= stored {
        return Ok(vec![Span { from: Vec::new(), to: staged }]);
    }
    let mut below = tx.prepare_cached(
        "SELECT id FROM sealed_ballots WHERE poll_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT 1 OFFSET ?3",
    )?;
    let mut above = tx.prepare_cached(
        "SELECT id FROM sealed_ballots WHERE poll_id = ?1 AND id >= ?2 AND id < ?3 ORDER BY id LIMIT 1 OFFSET ?4",
    )?;
    let mut spans: Vec<Span> = Vec::new();
    for to in moves.keys() {
        let from: Vec<u8> =
            below.query_row(params![poll, &to[..], NEIGHBOURS - 1], |r| r.get(0)).optional()?.unwrap_or_default();
        let end = match above
            .query_row(params![poll, &to[..], staged, NEIGHBOURS - 1], |r| r.get::<_, Vec<u8>>(0))
            .optional()?
        {
            Some(last) => after(&last),
            None => staged.clone(),
        };
        match spans.last_mut() {
            // New keys come in order: a span can only reach into the last.
            Some(last) if from <= last.to => last.to = std::cmp::max(std::mem::take(&mut last.to), end),
            _ => spans.push(Span { from, to: end }),
        }
    }
    Ok(spans)
}

/// Rewrites the next chunk of `span` of `poll` in key order, from
/// `span.from`: at most `chunk` settled and `chunk` staged rows. Answers
/// where the next chunk begins (`span.to` or beyond once the span is done).
fn rewrite_chunk(
    tx: &Transaction,
    (poll, key): (&str, &DataKey),
    span: &Span,
    moves: &BTreeMap<[u8; 16], [u8; 16]>,
    chunk: usize,
) -> Result<Vec<u8>, Error> {
    use std::ops::Bound::{Excluded, Included};
    let mut in_order = tx.prepare_cached(
        "SELECT id, sealed FROM sealed_ballots WHERE poll_id = ?1 AND id >= ?2 AND id < ?3 ORDER BY id LIMIT ?4",
    )?;
    let mut one = tx.prepare_cached("SELECT id, sealed FROM sealed_ballots WHERE poll_id = ?1 AND id = ?2")?;
    let mut delete = tx.prepare_cached("DELETE FROM sealed_ballots WHERE poll_id = ?1 AND id = ?2")?;
    let mut insert = tx.prepare_cached("INSERT INTO sealed_ballots (poll_id, id, sealed) VALUES (?1, ?2, ?3)")?;
    let from = span.from.clone();
    {
        let mut rows = in_order
            .query_map(params![poll, from, span.to, chunk as i64], |r| Stored::read(r, None))?
            .collect::<rusqlite::Result<Vec<Stored>>>()?;
        // The chunk ends after its last settled row, or with the span...
        let mut end = match rows.last() {
            Some(last) if rows.len() == chunk => after(&last.key),
            _ => span.to.clone(),
        };
        // ...or near its `chunk`th arriving staged ballot: after the last
        // settled row before it if there is one, so that the chunk's edge,
        // like a span's, falls after an old ballot (rows written back in
        // two passes over one page may leave the last one before the edge
        // out of place).
        let mut arriving: Vec<(&[u8; 16], &[u8; 16])> =
            moves.range::<[u8], _>((Included(&from[..]), Excluded(&end[..]))).take(chunk).collect();
        if arriving.len() == chunk
            && let Some((last, _)) = arriving.last()
        {
            end = match rows.iter().rev().find(|r| r.key.as_slice() < &last[..]) {
                Some(before) => after(&before.key),
                None => after(&last[..]),
            };
            rows.retain(|r| r.key < end);
            arriving.retain(|(to, _)| to[..] < end[..]);
        }
        let settled = rows.len();
        for (to, staged) in arriving {
            // A new key that a settled ballot has (a 128-bit collision)
            // would fail the whole mix: that one ballot stays staged, to
            // be placed at polld's next start.
            if rows[..settled].binary_search_by(|r| r.key.as_slice().cmp(&to[..])).is_ok() {
                continue;
            }
            // A staged key another connection already moved is skipped.
            if let Some(row) =
                one.query_row(params![poll, &staged[..]], |r| Stored::read(r, Some(to.to_vec()))).optional()?
            {
                rows.push(row);
            }
        }
        rows.sort_by(|a, b| a.to.cmp(&b.to));
        for row in &rows {
            delete.execute(params![poll, row.key])?;
        }
        for row in &mut rows {
            // A ballot's ciphertext is bound to its key: a moved one is
            // sealed again for its new place.
            if row.to != row.key {
                let plain =
                    key.open(&place::ballot(poll, &row.key), &row.sealed).map_err(|e| corrupt_sealed("ballot", e))?;
                row.sealed = key.seal(&place::ballot(poll, &row.to), &plain).map_err(Error::internal)?;
            }
            insert.execute(params![poll, row.to, row.sealed])?;
        }
        Ok(end)
    }
}
