//! SQLite's writer thread: the batches of the shared [`Writer`] in one
//! `IMMEDIATE` transaction each, the mix of a poll in one of its own, and
//! what only SQLite's files need after them.
//!
//! SQLite's own steps, and why:
//! - after an erasure (answered only once it is done), a changed or
//!   withdrawn ballot, or a mix, the WAL is truncated, so that no byte of
//!   what went and no frame in commit order survives in the live files;
//! - after a mix the WAL index (`-shm`) is made to forget the frames it
//!   listed ([`forget_frames`]), which a truncation leaves behind;
//! - another process (`pollctl`) may write between batches: `PRAGMA
//!   data_version`, read once the write lock is held, reveals it, and the
//!   writer's memory of polls is dropped.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::{Connection, TransactionBehavior};

use crate::day::Day;
use crate::error::Error;
use crate::keyring::Keyring;

use super::super::engine::Rows;
use super::super::seen::Seen;
use super::super::writer::mix::IDLE;
use super::super::writer::{BatchFailed, Empty, Inbox, Job, Outcome, Writer, WriterConfig, batch_error};
use super::SqliteRows;

/// What the writer owes besides the writes themselves, done between
/// batches.
struct Chores {
    busy: Duration,
    /// After an erasure, a changed ballot or a mix the WAL must be
    /// truncated; if readers kept it busy, this is retried when the queue is
    /// idle, or within a second under load.
    checkpoint_owed: bool,
    last_try: Instant,
}

pub(super) fn run(mut conn: Connection, keys: Arc<Keyring>, seen: Arc<Seen>, mut rx: Inbox, config: WriterConfig) {
    let max_batch = config.max_batch.max(1);
    let mut w = Writer::new(keys, seen);
    // Ballots a previous run left staged are looked for at the first idle
    // moment: the look reads every poll's last page, which a busy start
    // need not wait for.
    w.fresh.look_for_left = config.mix;
    let mut chores = Chores {
        busy: config.busy_timeout,
        // Truncate the WAL once at start: a crash after an erasure and
        // before its checkpoint must not leave the erased rows in the WAL
        // until the next one.
        checkpoint_owed: !checkpoint(&conn, config.busy_timeout),
        last_try: Instant::now(),
    };
    loop {
        let wait = (chores.checkpoint_owed || (config.mix && w.fresh.pending())).then_some(IDLE);
        let first = match rx.recv(wait) {
            Ok(job) => job,
            Err(Empty::Timeout) => {
                // Idle: the moment to mix, and to truncate an owed WAL.
                if config.mix && std::mem::take(&mut w.fresh.look_for_left) {
                    match SqliteRows(&conn).staged_polls() {
                        Ok(polls) => w.fresh.add_left(polls),
                        Err(e) => eprintln!("anonpoll: could not look for ballots left unmixed: {e}"),
                    }
                }
                if config.mix
                    && let Some(poll) = w.fresh.next(Instant::now(), true)
                {
                    mix(&mut w, &mut conn, &mut chores, &poll);
                    continue;
                }
                if chores.checkpoint_owed {
                    chores.checkpoint_owed = !checkpoint(&conn, chores.busy);
                }
                continue;
            }
            Err(Empty::Closed) => break,
        };
        let batch = rx.batch(first, max_batch);
        let (results, erased) = commit(&mut w, &mut conn, &batch);
        after_commit(&mut w, &conn, &mut chores, batch, results, erased);
        // Under load, a poll whose mix is overdue is mixed after a batch.
        if config.mix
            && let Some(poll) = w.fresh.next(Instant::now(), false)
        {
            mix(&mut w, &mut conn, &mut chores, &poll);
        }
        // Retry an owed checkpoint at most once a second under load: each
        // try may hold the write lock for up to CHECKPOINT_WAIT.
        if chores.checkpoint_owed && chores.last_try.elapsed() >= Duration::from_secs(1) {
            chores.checkpoint_owed = !checkpoint(&conn, chores.busy);
            chores.last_try = Instant::now();
        }
    }
    // Stopping: every poll with new ballots is mixed now, so that none is
    // left in the order they came until the next start.
    if config.mix {
        for poll in w.fresh.drain() {
            mix(&mut w, &mut conn, &mut chores, &poll);
        }
    }
    // The day the key state moved to, noted before the store closes (a
    // `pollctl sweep` writes nothing after its day's work).
    if w.key_day_pending() {
        commit(&mut w, &mut conn, &[]);
    }
    let give_up = Instant::now() + FINAL_CHECKPOINT_TRIES;
    while chores.checkpoint_owed {
        chores.checkpoint_owed = !checkpoint(&conn, chores.busy);
        if chores.checkpoint_owed && Instant::now() > give_up {
            eprintln!(
                "anonpoll: could not truncate the WAL after an erasure: readers kept it busy; \
                 the next erasure or `pollctl sweep` will retry"
            );
            break;
        }
        if chores.checkpoint_owed {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Applies a batch in one transaction. Returns each job's result and
/// whether anything was erased.
fn commit(w: &mut Writer, conn: &mut Connection, batch: &[Job]) -> (Vec<Result<Outcome, Error>>, bool) {
    try_commit(w, conn, batch).unwrap_or_else(|BatchFailed(err)| {
        // The transaction was rolled back: nothing of the batch is
        // written, and the cache may hold what it had counted.
        w.rolled_back();
        (batch.iter().map(|_| Err(batch_error(&err))).collect(), false)
    })
}

fn try_commit(
    w: &mut Writer,
    conn: &mut Connection,
    batch: &[Job],
) -> Result<(Vec<Result<Outcome, Error>>, bool), BatchFailed> {
    let failed = |e: Error| BatchFailed::new(batch.len(), e);
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| failed(e.into()))?;
    // With the write lock held, nobody else can commit until we do: if
    // another process committed since our last batch, forget what we know.
    let version: i64 = tx.query_row("PRAGMA data_version", [], |r| r.get(0)).map_err(|e| failed(e.into()))?;
    w.check_version(version);
    let out = w.apply_batch(&mut SqliteRows(&tx), batch, &[])?;
    tx.commit().map_err(|e| failed(e.into()))?;
    w.committed();
    Ok(out)
}

/// After a batch's commit: its answers, then the chores. An erasure's
/// answer waits for the WAL's truncation (so a deleted poll is gone from
/// every file when its DELETE is answered); nothing else waits for one.
fn after_commit(
    w: &mut Writer,
    conn: &Connection,
    chores: &mut Chores,
    batch: Vec<Job>,
    mut results: Vec<Result<Outcome, Error>>,
    erased: bool,
) {
    if erased {
        chores.checkpoint_owed = !checkpoint(conn, chores.busy);
        chores.last_try = Instant::now();
    }
    // A change's old answers leave the WAL at the next idle moment, or
    // within a second under load: not a checkpoint per change, which would
    // hold the write lock for every one.
    chores.checkpoint_owed |= results.iter().any(|r| matches!(r, Ok(Outcome::Amended)));
    // The key state moves only once the re-wrapped keys are committed.
    w.advance_keys(&batch, &mut results);
    for (job, result) in batch.into_iter().zip(results) {
        job.answer(result);
    }
}

/// Mixes `poll` in a transaction of its own, then truncates the WAL and
/// makes its index forget the frames.
fn mix(w: &mut Writer, conn: &mut Connection, chores: &mut Chores, poll: &str) {
    let started = Instant::now();
    let mixed = (|| -> Result<(), Error> {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        w.mix(&mut SqliteRows(&tx), poll, Day::today())?;
        tx.commit()?;
        Ok(())
    })();
    match mixed {
        Ok(()) => w.mixed(poll, Some(started.elapsed())),
        Err(e) => {
            eprintln!("anonpoll: could not mix the ballots of a poll (will retry): {e}");
            w.mixed(poll, None);
        }
    }
    chores.checkpoint_owed = !settle(conn, chores.busy);
}

/// `PRAGMA wal_checkpoint(TRUNCATE)`: copies the WAL into the database and
/// empties the WAL file, so erased rows survive in neither. True on success.
///
/// While it waits for readers to move to the newest snapshot, a TRUNCATE
/// checkpoint holds the write lock, so it waits only briefly: writers (of this
/// process or another) must not queue behind it. Callers retry later.
pub(super) fn checkpoint(conn: &Connection, busy: Duration) -> bool {
    let _ = conn.busy_timeout(CHECKPOINT_WAIT);
    let done = match conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get::<_, i64>(0)) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => {
            if e.sqlite_error_code() != Some(rusqlite::ErrorCode::DatabaseBusy) {
                eprintln!("anonpoll: WAL checkpoint failed: {e}");
            }
            false
        }
    };
    let _ = conn.busy_timeout(busy);
    done
}

/// After a mix: truncates the WAL, then makes the WAL index in the `-shm`
/// file forget the frames it listed ([`forget_frames`]). True on success;
/// otherwise the caller owes a checkpoint and the index is cleared at the
/// next mix.
fn settle(conn: &Connection, busy: Duration) -> bool {
    if !checkpoint(conn, busy) {
        return false;
    }
    if let Err(e) = forget_frames(conn) {
        eprintln!("anonpoll: could not clear the WAL index: {e}");
    }
    checkpoint(conn, busy)
}

/// The WAL index (`-shm`) lists, for every frame of the WAL's last
/// generation, the page it holds, in commit order; a TRUNCATE checkpoint
/// empties the WAL but leaves that list, which then tells which pages each
/// commit touched until the next write. SQLite zeroes an index block when
/// the first frame of a new generation goes into it: so one small write
/// (page 1) starts a generation and clears the first block, and the blocks
/// beyond (used only by a generation of more than 4,062 frames, dead now
/// that the WAL is empty) are zeroed here while the write lock is held, so
/// no writer is using them.
pub(super) fn forget_frames(conn: &Connection) -> anyhow::Result<()> {
    // Writing the schema's version (unchanged) writes page 1: a frame
    // whatever the page holds (an UPDATE that changes nothing writes none).
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    conn.execute_batch(&format!("BEGIN IMMEDIATE; PRAGMA user_version = {version}; COMMIT"))?;
    let Some(path) = conn.path().filter(|p| !p.is_empty()).map(|p| format!("{p}-shm")) else { return Ok(()) };
    // Hold the write lock: no frame can be appended meanwhile.
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let zeroed = (|| -> std::io::Result<()> {
        let len = std::fs::metadata(&path)?.len();
        if len > SHM_BLOCK {
            use std::io::{Seek, SeekFrom, Write};
            let mut shm = std::fs::OpenOptions::new().write(true).open(&path)?;
            shm.seek(SeekFrom::Start(SHM_BLOCK))?;
            let zeros = vec![0u8; (len - SHM_BLOCK) as usize];
            shm.write_all(&zeros)?;
        }
        Ok(())
    })();
    conn.execute_batch("COMMIT")?;
    zeroed.map_err(Into::into)
}

/// The size of one block of SQLite's WAL index (32 KiB: 4,096 page numbers
/// and their hash table; the first block starts with the header).
const SHM_BLOCK: u64 = 32 * 1024;

/// How long one checkpoint attempt may wait for readers.
const CHECKPOINT_WAIT: Duration = Duration::from_millis(100);

/// How long a stopping writer keeps trying to truncate the WAL after an
/// erasure (e.g. `pollctl sweep` beside a busy polld).
const FINAL_CHECKPOINT_TRIES: Duration = Duration::from_secs(30);
