//! The single writer thread and its group commit.
//!
//! Request threads hand their writes to this thread through a bounded queue.
//! The thread takes everything queued (up to a batch limit), applies the
//! writes inside one transaction, commits once (one fsync with
//! `synchronous=FULL`) and only then answers each waiting request. So a
//! success answer always means "on disk", while a burst of votes costs one
//! fsync instead of one each. A full queue is answered at once with 503
//! rather than letting memory grow.
//!
//! A waiting request is either a thread blocked in [`Handle::submit`] or, for
//! votes from the web, a connection task awaiting a oneshot
//! ([`Handle::submit_later`]): then no thread waits through the fsync, and a
//! commit group can hold as many votes as the queue.
//!
//! Votes are the hot path, so they are cheaper than other writes:
//! - the writer keeps each voted-on poll's state (closed, expiry, questions)
//!   between batches, so a vote reads nothing and parses no JSON. Every change
//!   to a poll goes through this thread, except another process's (`pollctl`):
//!   `PRAGMA data_version`, read once the write lock is held, reveals that,
//!   and the cache is dropped; it is also dropped by any other kind of write
//!   and by a failed batch;
//! - a vote is checked completely before its one `INSERT`, which is atomic by
//!   itself, so it needs no savepoint: a refused vote wrote nothing;
//! - the counters of a batch's votes are added up in memory and written once
//!   per counter row before the commit (and before any other kind of write,
//!   which might delete the poll they count). If that fails, the whole batch
//!   fails: no vote is acknowledged without its counters.
//!
//! Other writes each run in their own savepoint, so one failing write does not
//! undo the others of its batch.
//!
//! Ballots keep no order (sql/003_ballot_order.sql): each is stored under a
//! random key, but SQLite still lays out a page's new rows, and appends WAL
//! frames, in the order they come. So once the writer is idle after votes
//! (or at least every [`MIX_EVERY`] under steady load), it rewrites the rows
//! around each new ballot in key order and truncates the WAL: from then on,
//! where a ballot sits in the files follows its random key alone.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use tokio::sync::oneshot;

use super::visibility_columns;
use crate::day::Day;
use crate::domain::settings::deadline_passed;
use crate::domain::{Ballot, Counter, DuplicateCheck, FieldError, Key, NewMedia, NewPoll, PollPatch, Problem};
use crate::error::Error;
use crate::error::{InviteRefusal, ReceiptRefusal};
use crate::secret::{InviteHash, ReceiptHash};
use crate::secret::{MediaId, PollId, TokenHash};

/// Tuning of the writer thread.
#[derive(Clone, Copy, Debug)]
pub struct WriterConfig {
    /// Writes waiting beyond this many are refused with 503.
    pub queue_capacity: usize,
    /// Most writes committed in one transaction.
    pub max_batch: usize,
    /// How long every connection of the store waits for another process's lock.
    pub busy_timeout: Duration,
    /// Whether the writer looks, when it starts, for ballots a previous run
    /// left staged, and mixes them (a scan of all ballots: polld does it,
    /// the short-lived `pollctl` leaves it to polld).
    pub mix_left_staged: bool,
}

impl Default for WriterConfig {
    fn default() -> WriterConfig {
        WriterConfig { queue_capacity: 4096, max_batch: 512, busy_timeout: super::BUSY_TIMEOUT, mix_left_staged: true }
    }
}

pub(super) enum Op {
    Create {
        id: PollId,
        token: TokenHash,
        poll: NewPoll,
        media: Vec<NewMedia>,
        today: Day,
    },
    /// Attaches media to a live poll, replacing what its slot held.
    AttachMedia {
        id: PollId,
        media: NewMedia,
        today: Day,
    },
    DetachMedia {
        id: PollId,
        media: MediaId,
        today: Day,
    },
    Patch {
        id: PollId,
        patch: PollPatch,
        today: Day,
    },
    Delete {
        id: PollId,
    },
    Cast {
        id: PollId,
        ballot: Ballot,
        /// The invite code's hash, on a poll that takes votes by invite.
        invite: Option<InviteHash>,
        /// The hash of the receipt the voter gets, on a poll with
        /// `voteChanges`: the ballot's key derives from it.
        receipt: Option<ReceiptHash>,
        today: Day,
    },
    /// Replaces (`Some`) or withdraws (`None`) the ballot that came with a
    /// receipt, counters and all.
    Amend {
        id: PollId,
        receipt: ReceiptHash,
        ballot: Option<Ballot>,
        today: Day,
    },
    /// Stores the hashes of new invite codes of a live poll.
    IssueInvites {
        id: PollId,
        hashes: Vec<InviteHash>,
        today: Day,
    },
    Sweep {
        as_of: Day,
    },
}

pub(super) enum Outcome {
    Done,
    /// A ballot changed or withdrawn: its old answers are in the WAL until
    /// the next checkpoint, which the writer owes from then on.
    Amended,
    Swept(u64),
    /// A poll's invite codes after issuing: issued, used.
    Invites(u64, u64),
}

struct Job {
    op: Op,
    reply: Reply,
}

/// Who waits for a write's result.
enum Reply {
    /// A thread blocked in [`Handle::submit`].
    Wait(SyncSender<Result<Outcome, Error>>),
    /// A connection task awaiting the commit ([`Handle::submit_later`]).
    Later(oneshot::Sender<Result<(), Error>>),
}

impl Reply {
    fn send(self, result: Result<Outcome, Error>) {
        // A requester that gave up (e.g. a client that hung up) is no reason
        // to stop: its write is committed all the same.
        match self {
            Reply::Wait(tx) => {
                let _ = tx.send(result);
            }
            Reply::Later(tx) => {
                let _ = tx.send(result.map(|_| ()));
            }
        }
    }
}

#[derive(Clone)]
pub(super) struct Handle {
    inner: Arc<Inner>,
}

struct Inner {
    tx: Option<SyncSender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing the queue lets the thread finish what is queued and stop.
        drop(self.tx.take());
        if let Some(t) = self.thread.take()
            && t.join().is_err()
        {
            eprintln!("anonpoll: the writer thread panicked");
        }
    }
}

impl Handle {
    pub(super) fn start(conn: Connection, config: WriterConfig) -> anyhow::Result<Handle> {
        let (tx, rx) = sync_channel(config.queue_capacity.max(1));
        let thread = std::thread::Builder::new().name("anonpoll-writer".into()).spawn(move || run(conn, rx, config))?;
        Ok(Handle { inner: Arc::new(Inner { tx: Some(tx), thread: Some(thread) }) })
    }

    /// Queues `op` and waits until it is committed (or refused).
    pub(super) fn submit(&self, op: Op) -> Result<Outcome, Error> {
        let (reply, answer) = sync_channel(1);
        self.enqueue(Job { op, reply: Reply::Wait(reply) })?;
        answer.recv().map_err(|_| Error::internal(anyhow!("writer thread dropped a write")))?
    }

    /// Queues `op` without waiting: the receiver gets the result once the
    /// write is committed (or refused). A full queue is refused at once.
    pub(super) fn submit_later(&self, op: Op) -> Result<oneshot::Receiver<Result<(), Error>>, Error> {
        let (reply, answer) = oneshot::channel();
        self.enqueue(Job { op, reply: Reply::Later(reply) })?;
        Ok(answer)
    }

    fn enqueue(&self, job: Job) -> Result<(), Error> {
        let Some(tx) = &self.inner.tx else {
            return Err(Error::internal(anyhow!("writer is shut down")));
        };
        match tx.try_send(job) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => {
                Err(Error::Unavailable { reason: "Too many writes are waiting.", retry_after_secs: 1 })
            }
            Err(TrySendError::Disconnected(_)) => Err(Error::internal(anyhow!("writer thread has stopped"))),
        }
    }
}

fn run(mut conn: Connection, rx: Receiver<Job>, config: WriterConfig) {
    let (max_batch, busy) = (config.max_batch.max(1), config.busy_timeout);
    // After an erasure the WAL must be truncated; if readers kept it busy, retry
    // when the queue is idle.
    // Truncate the WAL once at start: a crash after an erasure and before its
    // checkpoint must not leave the erased rows in the WAL until the next one.
    let mut checkpoint_owed = !checkpoint(&conn, busy);
    let mut last_try = std::time::Instant::now();
    let mut polls = PollCache::default();
    let mut fresh = Fresh::default();
    // Ballots a previous run left staged are looked for at the first idle
    // moment (or when a mix is overdue): the look reads every poll's last
    // page, which a busy start need not wait for.
    let mut look_for_left = config.mix_left_staged;
    loop {
        // Anything staged keeps the writer waking: a mix that failed is
        // retried at an idle moment once its pause is over, not at the next
        // write, which may be hours away.
        let first = if checkpoint_owed || fresh.count > 0 || look_for_left {
            match rx.recv_timeout(Duration::from_millis(250)) {
                Ok(job) => job,
                Err(RecvTimeoutError::Timeout) => {
                    if std::mem::take(&mut look_for_left) {
                        fresh.find_left_staged(&conn);
                    }
                    // Idle: the moment to hide the order of new ballots.
                    if fresh.waiting() {
                        // The WAL holds the votes' frames in commit order,
                        // and now the mix's: it is truncated either way.
                        fresh.mix(&mut conn);
                        checkpoint_owed = true;
                    }
                    if checkpoint_owed {
                        checkpoint_owed = !checkpoint(&conn, busy);
                    }
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        } else {
            match rx.recv() {
                Ok(job) => job,
                Err(_) => break,
            }
        };
        let mut batch = vec![first];
        while batch.len() < max_batch {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let (results, erased) = commit(&mut conn, &batch, &mut polls, &mut fresh);
        // A change's old answers leave the WAL at the next idle moment, or
        // within a second under load: not a checkpoint per change, which
        // would hold the write lock for every one.
        checkpoint_owed |= results.iter().any(|r| matches!(r, Ok(Outcome::Amended)));
        if fresh.overdue() {
            if std::mem::take(&mut look_for_left) {
                fresh.find_left_staged(&conn);
            }
            fresh.mix(&mut conn);
            checkpoint_owed = true;
        }
        // Retry an owed checkpoint at most once a second under load: each try
        // may hold the write lock for up to CHECKPOINT_WAIT.
        if erased || (checkpoint_owed && last_try.elapsed() >= Duration::from_secs(1)) {
            checkpoint_owed = !checkpoint(&conn, busy);
            last_try = std::time::Instant::now();
        }
        for (job, result) in batch.into_iter().zip(results) {
            job.reply.send(result);
        }
    }
    if fresh.count > 0 {
        fresh.mix(&mut conn);
        checkpoint_owed = true;
    }
    let give_up = std::time::Instant::now() + FINAL_CHECKPOINT_TRIES;
    while checkpoint_owed {
        checkpoint_owed = !checkpoint(&conn, busy);
        if checkpoint_owed && std::time::Instant::now() > give_up {
            eprintln!(
                "anonpoll: could not truncate the WAL after an erasure: readers kept it busy; \
                 the next erasure or `pollctl sweep` will retry"
            );
            break;
        }
        if checkpoint_owed {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
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

/// How long one checkpoint attempt may wait for readers.
const CHECKPOINT_WAIT: Duration = Duration::from_millis(100);

/// How long a stopping writer keeps trying to truncate the WAL after an
/// erasure (e.g. `pollctl sweep` beside a busy polld).
const FINAL_CHECKPOINT_TRIES: Duration = Duration::from_secs(30);

/// The error every job of a failed batch gets. Storage-level causes (full,
/// busy) keep their 503 meaning; anything else is internal.
fn batch_error(e: &rusqlite::Error) -> Error {
    match Error::from(clone_sqlite_error(e)) {
        Error::Internal(_) => Error::internal(anyhow!("write batch failed: {e}")),
        other => other,
    }
}

fn clone_sqlite_error(e: &rusqlite::Error) -> rusqlite::Error {
    match e {
        rusqlite::Error::SqliteFailure(code, msg) => rusqlite::Error::SqliteFailure(*code, msg.clone()),
        other => rusqlite::Error::ToSqlConversionFailure(other.to_string().into()),
    }
}

/// Applies a batch in one transaction. Returns each job's result and whether
/// anything was erased.
fn commit(
    conn: &mut Connection,
    batch: &[Job],
    polls: &mut PollCache,
    fresh: &mut Fresh,
) -> (Vec<Result<Outcome, Error>>, bool) {
    try_commit(conn, batch, polls, fresh).unwrap_or_else(|BatchFailed(err)| {
        // The transaction was rolled back: nothing of the batch is written,
        // and the cache may hold what it had written.
        polls.clear();
        (batch.iter().map(|_| Err(for_each_job(&err))).collect(), false)
    })
}

/// A batch that failed as a whole, with the error each of its jobs gets.
struct BatchFailed(Error);

impl BatchFailed {
    fn sqlite(len: usize, e: &rusqlite::Error) -> BatchFailed {
        eprintln!("anonpoll: write batch of {len} failed: {e}");
        BatchFailed(batch_error(e))
    }
}

/// A copy of a batch-level error for each job (storage full or busy keep
/// their 503).
fn for_each_job(err: &Error) -> Error {
    match err {
        Error::Unavailable { reason, retry_after_secs } => {
            Error::Unavailable { reason, retry_after_secs: *retry_after_secs }
        }
        other => Error::internal(anyhow!("write batch failed: {other}")),
    }
}

fn try_commit(
    conn: &mut Connection,
    batch: &[Job],
    polls: &mut PollCache,
    fresh: &mut Fresh,
) -> Result<(Vec<Result<Outcome, Error>>, bool), BatchFailed> {
    let failed = |e: &rusqlite::Error| BatchFailed::sqlite(batch.len(), e);
    let mut tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| failed(&e))?;
    // With the write lock held, nobody else can commit until we do: if
    // another process committed since our last batch, forget what we know.
    let version: i64 = tx.query_row("PRAGMA data_version", [], |r| r.get(0)).map_err(|e| failed(&e))?;
    polls.check_version(version);
    let mut counts = Counts::default();
    let mut results = Vec::with_capacity(batch.len());
    let mut erased = false;
    for job in batch {
        let result = match &job.op {
            Op::Cast { id, ballot, invite, receipt, today } => {
                cast(&tx, polls, &mut counts, fresh, (id, ballot, *invite, *receipt), *today)
            }
            op => {
                // Other writes may change or delete a poll just counted: the
                // counters go first, and the cache is rebuilt from the table.
                counts.flush(&tx).map_err(|e| failed(&e))?;
                polls.clear();
                let sp = tx.savepoint().map_err(|e| failed(&e))?;
                match apply(&sp, op) {
                    Ok((outcome, e)) => match sp.commit() {
                        Ok(()) => {
                            erased |= e;
                            Ok(outcome)
                        }
                        Err(err) => Err(Error::from(err)),
                    },
                    // Dropping the savepoint rolls this job back alone...
                    Err(err) => Err(err),
                }
            }
        };
        // ...unless SQLite rolled the whole transaction back (it does on
        // SQLITE_FULL, IOERR or NOMEM). Then every job of the batch is undone;
        // going on would start autocommit writes outside the transaction and
        // report them as failed.
        if let Err(err) = &result
            && tx.is_autocommit()
        {
            eprintln!("anonpoll: a write batch of {} was rolled back by SQLite: {err}", batch.len());
            let reason = match err {
                Error::Unavailable { reason, .. } => *reason,
                _ => "Storage refused the write; nothing was written.",
            };
            return Err(BatchFailed(Error::Unavailable { reason, retry_after_secs: 5 }));
        }
        results.push(result);
    }
    counts.flush(&tx).map_err(|e| failed(&e))?;
    tx.commit().map_err(|e| failed(&e))?;
    Ok((results, erased))
}

/// Records one vote: every check first, then its writes (the ballot's
/// `INSERT`, and for a vote with an invite code the code's `used` flag, the
/// two in a savepoint), so a refused or failed vote wrote nothing; then its
/// counters in memory until the batch's [`Counts::flush`]. The ballot was
/// checked against the poll's questions before it was queued (they never
/// change); what may have changed since is whether the poll is open and
/// whether it takes votes by invite, so that is checked here.
fn cast(
    tx: &Transaction,
    polls: &mut PollCache,
    counts: &mut Counts,
    fresh: &mut Fresh,
    (id, ballot, invite, receipt): (&PollId, &Ballot, Option<InviteHash>, Option<ReceiptHash>),
    today: Day,
) -> Result<Outcome, Error> {
    let poll = polls.get(tx, id)?.filter(|p| today < p.expires_on).ok_or(Error::NotFound)?;
    if poll.closed || deadline_passed(poll.closes_on, today) {
        return Err(Error::Closed);
    }
    // The poll may have turned invite-only since the vote was admitted.
    if poll.invite_only && invite.is_none() {
        return Err(Error::InviteRefused(InviteRefusal::Missing));
    }
    let invite_only = poll.invite_only;
    let day = today.to_string();
    let choices_json = ballot.to_stored();
    // Staged: the key puts the ballot among its poll's other new ones, at
    // the end of the poll's rows, until the mix gives it its random place
    // (see `mix`). A ballot with a receipt takes both keys from the
    // receipt's hash (`receipt_keys`), so the receipt finds it without an
    // index.
    let (key, settle_at) = match receipt {
        Some(r) => {
            let keys = receipt_keys(&r);
            (keys.staged, Some(keys.settled))
        }
        None => {
            let mut key = [0u8; 16];
            crate::secret::random_bytes(&mut key).map_err(Error::internal)?;
            key[0] = STAGED;
            (key, None)
        }
    };
    let insert = |tx: &Transaction| -> Result<(), Error> {
        tx.prepare_cached("INSERT INTO responses (poll_id, id, cast_on, choices) VALUES (?1, ?2, ?3, ?4)")?
            .execute(params![id.as_str(), &key[..], day, choices_json])?;
        Ok(())
    };
    match invite {
        None => insert(tx)?,
        Some(code) => {
            // The code is spent with its ballot or not at all. A code that
            // came with a vote is spent even if the poll has meanwhile left
            // invite mode, so that it cannot vote again if the mode returns.
            tx.execute_batch("SAVEPOINT invite_vote")?;
            let spent = tx
                .prepare_cached("UPDATE invites SET used = 1 WHERE poll_id = ?1 AND code_sha256 = ?2 AND used = 0")?
                .execute(params![id.as_str(), &code.0[..]])
                .map_err(Error::from)
                .and_then(|n| {
                    if n == 0 && invite_only {
                        Err(Error::InviteRefused(InviteRefusal::UnknownOrUsed))
                    } else {
                        insert(tx)
                    }
                });
            match spent {
                Ok(()) => tx.execute_batch("RELEASE invite_vote")?,
                Err(e) => {
                    // If SQLite rolled the whole transaction back, this
                    // fails too, and `try_commit` fails the batch.
                    let _ = tx.execute_batch("ROLLBACK TO invite_vote; RELEASE invite_vote");
                    return Err(e);
                }
            }
        }
    }
    // A key of a batch that then fails is mixed for nothing, harmlessly.
    fresh.add(id, key, settle_at);
    counts.add(id, day, ballot);
    Ok(Outcome::Done)
}

/// Rows rewritten on each side of a new ballot: more than a page holds, so
/// the new ballot's page is rewritten whole.
const NEIGHBOURS: i64 = 100;
/// Rows the mix holds in memory at once (per kind: settled and staged).
const MIX_CHUNK: usize = 1000;
/// Under steady load the writer is never idle; it mixes at least this often.
/// Short, because until the mix the WAL holds new ballots in commit order,
/// and because a mix of a minute's ballots (the interval was 60 s) left
/// polld's resident memory some 4 MiB higher for good (measured in
/// tests/soak.rs: docs/PERFORMANCE.md, "The mix's memory").
pub const MIX_EVERY: Duration = Duration::from_secs(10);
/// After a failed mix, the next is not tried before this.
const MIX_RETRY: Duration = Duration::from_secs(60);
/// New ballots remembered before the writer mixes whatever the time.
const MAX_FRESH: usize = 100_000;
/// The first byte of a staged ballot's key; a mixed ballot's key never
/// starts with it.
///
/// Why stage: a ballot stored at once at its random key lands on a random
/// page of its poll, so in a large poll every vote read a page from the
/// file and added a page to the WAL (measured: 3.1 page reads and 5.5 page
/// writes per vote at 1M stored responses, against 0.2 and 2.5 at 1k). A
/// staged ballot lands on the last page of its poll, which the batch's
/// other new ballots share; the mix moves it to its random key.
pub(super) const STAGED: u8 = 0xff;

/// Per poll, each staged key and the key the mix moves it to: a receipt's
/// settled key, or `None` for a random one.
type StagedKeys = BTreeMap<String, Vec<([u8; 16], Option<[u8; 16]>)>>;

/// The keys of ballots stored since the last mix, by poll.
#[derive(Default)]
struct Fresh {
    keys: StagedKeys,
    count: usize,
    /// When the oldest of them was stored.
    since: Option<Instant>,
    /// After a failed mix, the next is not tried before this.
    not_before: Option<Instant>,
}

impl Fresh {
    fn add(&mut self, poll: &PollId, key: [u8; 16], to: Option<[u8; 16]>) {
        self.add_key(poll.as_str(), key, to);
    }

    fn add_key(&mut self, poll: &str, key: [u8; 16], to: Option<[u8; 16]>) {
        self.keys.entry(poll.to_owned()).or_default().push((key, to));
        self.count += 1;
        self.since.get_or_insert_with(Instant::now);
    }

    /// Adds the ballots a previous run staged and did not mix (it crashed
    /// before its next idle moment), to be mixed like new ones. A failed
    /// look is reported; those ballots then stay where they are.
    fn find_left_staged(&mut self, conn: &Connection) {
        if let Err(e) = self.add_left_staged(conn) {
            eprintln!("anonpoll: could not look for ballots left unmixed (they stay where they are): {e}");
        }
    }

    fn add_left_staged(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        let known: std::collections::BTreeSet<(String, [u8; 16])> =
            self.keys.iter().flat_map(|(p, ks)| ks.iter().map(move |(k, _)| (p.clone(), *k))).collect();
        // Polls first, then a seek into each one's rows from the staged
        // keys on: a few pages per poll instead of reading every ballot.
        let mut stmt = conn
            .prepare("SELECT r.poll_id, r.id FROM polls p CROSS JOIN responses r ON r.poll_id = p.id AND r.id >= ?1")?;
        let mut rows = stmt.query(params![&[STAGED][..]])?;
        while let Some(r) = rows.next()? {
            let (poll, id): (String, Vec<u8>) = (r.get(0)?, r.get(1)?);
            if let Ok(key) = <[u8; 16]>::try_from(id.as_slice())
                && !known.contains(&(poll.clone(), key))
            {
                // Whether it came with a receipt is not known any more: it
                // goes where a receipt still finds it (`fallback_key`).
                self.add_key(&poll, key, Some(fallback_key(&key)));
            }
        }
        Ok(())
    }

    /// Whether there are ballots to mix, and a mix may be tried now.
    fn waiting(&self) -> bool {
        self.waiting_at(Instant::now())
    }

    fn waiting_at(&self, now: Instant) -> bool {
        self.count > 0 && self.not_before.is_none_or(|t| now >= t)
    }

    /// Whether mixing cannot wait for an idle moment any longer.
    fn overdue(&self) -> bool {
        self.overdue_at(Instant::now())
    }

    fn overdue_at(&self, now: Instant) -> bool {
        self.waiting_at(now)
            && (self.count >= MAX_FRESH || self.since.is_some_and(|t| now.saturating_duration_since(t) >= MIX_EVERY))
    }

    /// Moves every staged ballot to a random key and rewrites the rows
    /// around it in key order, in one transaction, then forgets the keys;
    /// on failure keeps them and tries again after [`MIX_RETRY`]. The
    /// caller then truncates the WAL.
    fn mix(&mut self, conn: &mut Connection) {
        self.mix_in_chunks(conn, MIX_CHUNK);
    }

    fn mix_in_chunks(&mut self, conn: &mut Connection, chunk: usize) {
        match mix(conn, &self.keys, chunk) {
            Ok(()) => *self = Fresh::default(),
            Err(e) => {
                eprintln!("anonpoll: could not rewrite new ballots in random order (will retry): {e}");
                self.not_before = Some(Instant::now() + MIX_RETRY);
            }
        }
    }
}

/// The keys a ballot cast with a receipt can have. Each is drawn from the
/// receipt's hash under a label of its own, so a receipt finds its ballot
/// with one primary-key lookup and ballots need no second index (whose
/// pages would keep the order of arrival the mix hides); and the staged
/// key tells nothing of the settled one, so leftover WAL frames of a vote
/// (in commit order, beside an invite code's spending) do not point at the
/// ballot's final row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceiptKeys {
    /// Until the writer's mix: [`STAGED`] and 15 bytes of the hash.
    pub staged: [u8; 16],
    /// After the mix.
    pub settled: [u8; 16],
    /// Where a ballot goes that the mix could not place by its receipt: one
    /// a crashed run left staged (its receipt is not known any more), or one
    /// staged in a backup. Drawn from the whole staged key ([`fallback_key`]).
    pub fallback: [u8; 16],
}

/// The keys of the ballot cast with the receipt hashed `r`.
pub fn receipt_keys(r: &ReceiptHash) -> ReceiptKeys {
    let mut staged = [STAGED; 16];
    staged[1..].copy_from_slice(&r.0[..15]);
    ReceiptKeys { staged, settled: drawn_key(b"anonpoll settled ballot key\0", &r.0), fallback: fallback_key(&staged) }
}

/// The key a staged ballot settles at when the mix does not know whether
/// it came with a receipt: drawn from the whole staged key, so a receipt
/// can still work it out, and nothing else can.
pub(super) fn fallback_key(staged: &[u8; 16]) -> [u8; 16] {
    drawn_key(b"anonpoll fallback ballot key\0", staged)
}

/// A settled key drawn from `input` under `label`: the first 16 bytes of
/// SHA-256(label, round, input) for the first round whose first byte is not
/// [`STAGED`]. All of it is hash output, so without `input` a key is as
/// random as one from [`mixed_key`]: no byte of it can be checked against
/// the others (an earlier draft took the first byte from the other 15,
/// which let anyone holding the file pick out every ballot cast with a
/// receipt).
fn drawn_key(label: &[u8], input: &[u8]) -> [u8; 16] {
    use sha2::{Digest, Sha256};
    let mut key = [0u8; 16];
    for round in 0..=u8::MAX {
        let digest = Sha256::new().chain_update(label).chain_update([round]).chain_update(input).finalize();
        key.copy_from_slice(&digest[..16]);
        if key[0] != STAGED {
            break;
        }
    }
    key
}

/// A random key that is not a staged one.
pub(super) fn mixed_key() -> rusqlite::Result<[u8; 16]> {
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
    day: String,
    choices: String,
}

impl Stored {
    fn read(r: &rusqlite::Row, to: Option<Vec<u8>>) -> rusqlite::Result<Stored> {
        let key: Vec<u8> = r.get(0)?;
        Ok(Stored { to: to.unwrap_or_else(|| key.clone()), key, day: r.get(1)?, choices: r.get(2)? })
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

/// Gives each staged ballot of `fresh` a random key, and deletes and writes
/// back, in key order, the rows around each new key (or a whole poll where
/// those would cover it). The keys are random, so the rows' new places (in
/// their pages, and the pages' order) say nothing about when each was cast;
/// secure_delete zeroes what the deletes free.
///
/// It goes through the keys in order, `chunk` rows at a time (deleted, then
/// written back in key order), so its memory stays small whatever the size
/// of the poll; chunk after chunk in key order is still key order.
fn mix(conn: &mut Connection, fresh: &StagedKeys, chunk: usize) -> rusqlite::Result<()> {
    let chunk = chunk.max(1);
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for (poll, keys) in fresh {
        // Each staged key, by the key it gets.
        let moves: BTreeMap<[u8; 16], [u8; 16]> =
            keys.iter().map(|(k, to)| Ok((to.map_or_else(mixed_key, Ok)?, *k))).collect::<rusqlite::Result<_>>()?;
        for span in spans(&tx, poll, &moves)? {
            rewrite(&tx, poll, &span, &moves, chunk)?;
        }
    }
    tx.commit()
}

/// What the mix of `moves` rewrites in `poll`, in key order and apart:
/// around each new key, the [`NEIGHBOURS`] settled rows below it and those
/// at or above it; or everything below the staged keys, where those
/// neighbourhoods would cover the poll anyway.
fn spans(tx: &Transaction, poll: &str, moves: &BTreeMap<[u8; 16], [u8; 16]>) -> rusqlite::Result<Vec<Span>> {
    let staged = vec![STAGED];
    let stored: i64 = tx
        .prepare_cached("SELECT total_responses FROM polls WHERE id = ?1")?
        .query_row([poll], |r| r.get(0))
        .optional()?
        .unwrap_or(0);
    if moves.len() as i64 * (2 * NEIGHBOURS + 1) >= stored {
        return Ok(vec![Span { from: Vec::new(), to: staged }]);
    }
    let mut below = tx
        .prepare_cached("SELECT id FROM responses WHERE poll_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT 1 OFFSET ?3")?;
    let mut above = tx.prepare_cached(
        "SELECT id FROM responses WHERE poll_id = ?1 AND id >= ?2 AND id < ?3 ORDER BY id LIMIT 1 OFFSET ?4",
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

/// Rewrites `span` of `poll` in key order, at most `chunk` settled and
/// `chunk` staged rows at a time.
fn rewrite(
    tx: &Transaction,
    poll: &str,
    span: &Span,
    moves: &BTreeMap<[u8; 16], [u8; 16]>,
    chunk: usize,
) -> rusqlite::Result<()> {
    use std::ops::Bound::{Excluded, Included};
    let mut in_order = tx.prepare_cached(
        "SELECT id, cast_on, choices FROM responses WHERE poll_id = ?1 AND id >= ?2 AND id < ?3 ORDER BY id LIMIT ?4",
    )?;
    let mut one = tx.prepare_cached("SELECT id, cast_on, choices FROM responses WHERE poll_id = ?1 AND id = ?2")?;
    let mut delete = tx.prepare_cached("DELETE FROM responses WHERE poll_id = ?1 AND id = ?2")?;
    let mut insert =
        tx.prepare_cached("INSERT INTO responses (poll_id, id, cast_on, choices) VALUES (?1, ?2, ?3, ?4)")?;
    let mut from = span.from.clone();
    while from < span.to {
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
        for row in &rows {
            insert.execute(params![poll, row.to, row.day, row.choices])?;
        }
        from = end;
    }
    Ok(())
}

/// The counter increments of a batch's votes, summed per counter row.
#[derive(Default)]
struct Counts {
    options: BTreeMap<(String, usize, usize), i64>,
    answered: BTreeMap<(String, usize), i64>,
    pairs: BTreeMap<(String, usize, usize, usize), i64>,
    days: BTreeMap<(String, String), i64>,
    totals: BTreeMap<String, i64>,
}

impl Counts {
    /// Counts a new ballot cast on `day`.
    fn add(&mut self, id: &PollId, day: String, ballot: &Ballot) {
        self.answers(id, ballot, 1);
        self.ballot_on(id, day, 1);
    }

    /// Adds `by` (1, or -1 for a ballot taken back) to the counters of
    /// `ballot`'s answers.
    fn answers(&mut self, id: &PollId, ballot: &Ballot, by: i64) {
        let poll = || id.as_str().to_owned();
        for counter in ballot.counters() {
            match counter {
                Counter::Option { question, option } => {
                    *self.options.entry((poll(), question, option)).or_default() += by
                }
                Counter::Answered { question } => *self.answered.entry((poll(), question)).or_default() += by,
                Counter::Pair { question, above, below } => {
                    *self.pairs.entry((poll(), question, above, below)).or_default() += by;
                }
            }
        }
    }

    /// Adds `by` to the ballots of `day` and to the poll's total.
    fn ballot_on(&mut self, id: &PollId, day: String, by: i64) {
        *self.days.entry((id.as_str().to_owned(), day)).or_default() += by;
        *self.totals.entry(id.as_str().to_owned()).or_default() += by;
    }

    fn is_empty(&self) -> bool {
        self.options.is_empty()
            && self.answered.is_empty()
            && self.pairs.is_empty()
            && self.days.is_empty()
            && self.totals.is_empty()
    }

    /// Writes and forgets the sums: one statement per counter row.
    fn flush(&mut self, tx: &Connection) -> rusqlite::Result<()> {
        if self.is_empty() {
            return Ok(());
        }
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO option_tallies (poll_id, question, option, votes) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (poll_id, question, option) DO UPDATE SET votes = votes + excluded.votes",
            )?;
            for ((id, q, o), n) in &self.options {
                stmt.execute(params![id, *q as i64, *o as i64, n])?;
            }
        }
        if !self.answered.is_empty() {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO answer_tallies (poll_id, question, ballots) VALUES (?1, ?2, ?3)
                 ON CONFLICT (poll_id, question) DO UPDATE SET ballots = ballots + excluded.ballots",
            )?;
            for ((id, q), n) in &self.answered {
                stmt.execute(params![id, *q as i64, n])?;
            }
        }
        if !self.pairs.is_empty() {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO pair_tallies (poll_id, question, above, below, ballots) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (poll_id, question, above, below) DO UPDATE SET ballots = ballots + excluded.ballots",
            )?;
            for ((id, q, above, below), n) in &self.pairs {
                stmt.execute(params![id, *q as i64, *above as i64, *below as i64, n])?;
            }
        }
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO daily_tallies (poll_id, day, responses) VALUES (?1, ?2, ?3)
                 ON CONFLICT (poll_id, day) DO UPDATE SET responses = responses + excluded.responses",
            )?;
            for ((id, day), n) in &self.days {
                stmt.execute(params![id, day, n])?;
            }
        }
        {
            let mut stmt =
                tx.prepare_cached("UPDATE polls SET total_responses = total_responses + ?2 WHERE id = ?1")?;
            for (id, n) in &self.totals {
                stmt.execute(params![id, n])?;
            }
        }
        *self = Counts::default();
        Ok(())
    }
}

/// What a vote needs to know of its poll.
struct PollState {
    closed: bool,
    /// `duplicateCheck: invite`: a vote must bring an unused code.
    invite_only: bool,
    expires_on: Day,
    closes_on: Option<Day>,
}

/// The writer's memory of polls between batches (see the module docs for
/// when it is dropped). Bounded in entries; past the bound it starts over.
#[derive(Default)]
struct PollCache {
    polls: HashMap<String, PollState>,
    data_version: Option<i64>,
}

/// Most polls the writer remembers.
const CACHE_POLLS: usize = 10_000;

impl PollCache {
    fn clear(&mut self) {
        self.polls.clear();
    }

    /// Drops everything if the database changed under another connection.
    fn check_version(&mut self, version: i64) {
        if self.data_version != Some(version) {
            self.clear();
            self.data_version = Some(version);
        }
    }

    /// The poll `id` (expired or not), if it exists.
    fn get(&mut self, tx: &Connection, id: &PollId) -> Result<Option<&PollState>, Error> {
        if !self.polls.contains_key(id.as_str()) {
            let row = tx
                .prepare_cached("SELECT closed, expires_on, closes_on, duplicate_check FROM polls WHERE id = ?1")?
                .query_row(params![id.as_str()], |r| {
                    Ok((
                        r.get::<_, bool>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, Option<String>>(2)?,
                        r.get::<_, String>(3)? == DuplicateCheck::Invite.as_str(),
                    ))
                })
                .optional()?;
            // An unknown poll is not remembered: votes for it are rare (the
            // page handler looked the poll up first).
            let Some((closed, expires_on, closes_on, invite_only)) = row else { return Ok(None) };
            let day = |s: &str| Day::parse(s).ok_or_else(|| Error::internal(anyhow!("a stored day is malformed")));
            let expires_on = day(&expires_on)?;
            let closes_on = closes_on.as_deref().map(day).transpose()?;
            if self.polls.len() >= CACHE_POLLS {
                self.clear();
            }
            self.polls.insert(id.as_str().to_owned(), PollState { closed, invite_only, expires_on, closes_on });
        }
        Ok(self.polls.get(id.as_str()))
    }
}

/// The poll's number of questions, if it is live on `today`.
fn live_poll(tx: &Connection, id: &PollId, today: Day) -> Result<Option<usize>, Error> {
    let row = tx
        .prepare_cached("SELECT json_array_length(questions) FROM polls WHERE id = ?1 AND expires_on > ?2")?
        .query_row(params![id.as_str(), today.to_string()], |r| r.get::<_, i64>(0))
        .optional()?;
    row.map(|n| usize::try_from(n).map_err(Error::internal)).transpose()
}

/// Applies one write. Returns its outcome and whether it erased data.
fn apply(tx: &Connection, op: &Op) -> Result<(Outcome, bool), Error> {
    match op {
        Op::Create { id, token, poll, media, today } => {
            let questions = serde_json::to_string(&poll.questions).map_err(Error::internal)?;
            let (public, after) = visibility_columns(poll.visibility);
            tx.prepare_cached(
                "INSERT INTO polls (id, token_sha256, title, lang, results_public, created_on, expires_on, questions,
                                    results_after, closes_on, shuffle_options, duplicate_check, vote_changes)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )?
            .execute(params![
                id.as_str(),
                &token.0[..],
                poll.title.as_str(),
                poll.lang.code(),
                public,
                today.to_string(),
                today.plus_days(poll.expiry.get()).to_string(),
                questions,
                after,
                poll.closes_on.map(|d| d.to_string()),
                poll.shuffle_options,
                poll.duplicate_check.as_str(),
                poll.vote_changes,
            ])?;
            for m in media {
                insert_media(tx, id, m, poll.questions.len())?;
            }
            Ok((Outcome::Done, false))
        }
        Op::AttachMedia { id, media, today } => {
            let Some(questions) = live_poll(tx, id, *today)? else {
                return Err(Error::NotFound);
            };
            // The slot's old item, if any, is erased (secure_delete, then the
            // WAL checkpoint the `true` below asks for).
            let replaced = tx
                .prepare_cached("DELETE FROM media WHERE poll_id = ?1 AND question IS ?2")?
                .execute(params![id.as_str(), media.slot.question().map(|q| q as i64)])?;
            insert_media(tx, id, media, questions)?;
            Ok((Outcome::Done, replaced > 0))
        }
        Op::DetachMedia { id, media, today } => {
            if live_poll(tx, id, *today)?.is_none() {
                return Err(Error::NotFound);
            }
            let n = tx
                .prepare_cached("DELETE FROM media WHERE poll_id = ?1 AND id = ?2")?
                .execute(params![id.as_str(), media.as_str()])?;
            if n == 0 {
                return Err(Error::NotFound);
            }
            Ok((Outcome::Done, true))
        }
        // The patch was checked against the poll's shape (language and
        // questions, which never change) before it was queued.
        Op::Patch { id, patch, today } => {
            if live_poll(tx, id, *today)?.is_none() {
                return Err(Error::NotFound);
            }
            if let Some(closed) = patch.closed {
                tx.prepare_cached("UPDATE polls SET closed = ?2 WHERE id = ?1")?
                    .execute(params![id.as_str(), closed])?;
            }
            // Reopening a poll past its deadline removes the deadline, or it
            // would stay closed (docs/DECISIONS.md). Only a reopening that
            // names no deadline needs to read the stored one.
            let reopens_past = patch.closed == Some(false) && patch.closes_on.is_none() && {
                let closes_on: Option<String> = tx
                    .prepare_cached("SELECT closes_on FROM polls WHERE id = ?1")?
                    .query_row(params![id.as_str()], |r| r.get(0))?;
                patch.reopens_past(closes_on.as_deref().and_then(Day::parse), *today)
            };
            let deadline = if reopens_past { Some(None) } else { patch.closes_on };
            if let Some(day) = deadline {
                tx.prepare_cached("UPDATE polls SET closes_on = ?2 WHERE id = ?1")?
                    .execute(params![id.as_str(), day.map(|d| d.to_string())])?;
            }
            if let Some(v) = patch.visibility {
                let (public, after) = visibility_columns(v);
                tx.prepare_cached("UPDATE polls SET results_public = ?2, results_after = ?3 WHERE id = ?1")?
                    .execute(params![id.as_str(), public, after])?;
            }
            if let Some(shuffle) = patch.shuffle_options {
                tx.prepare_cached("UPDATE polls SET shuffle_options = ?2 WHERE id = ?1")?
                    .execute(params![id.as_str(), shuffle])?;
            }
            if let Some(check) = patch.duplicate_check {
                tx.prepare_cached("UPDATE polls SET duplicate_check = ?2 WHERE id = ?1")?
                    .execute(params![id.as_str(), check.as_str()])?;
            }
            if let Some(changes) = patch.vote_changes {
                tx.prepare_cached("UPDATE polls SET vote_changes = ?2 WHERE id = ?1")?
                    .execute(params![id.as_str(), changes])?;
            }
            if let Some(days) = patch.expiry {
                tx.prepare_cached("UPDATE polls SET expires_on = ?2 WHERE id = ?1")?
                    .execute(params![id.as_str(), today.plus_days(days.get()).to_string()])?;
            }
            let mut erased = false;
            for (lang, version) in &patch.translations {
                match version {
                    Some(v) => {
                        let body = serde_json::to_string(v).map_err(Error::internal)?;
                        tx.prepare_cached(
                            "INSERT INTO translations (poll_id, lang, body) VALUES (?1, ?2, ?3)
                             ON CONFLICT (poll_id, lang) DO UPDATE SET body = excluded.body",
                        )?
                        .execute(params![id.as_str(), lang.code(), body])?;
                        erased = true; // a replaced version's old text is erased too
                    }
                    None => {
                        tx.prepare_cached("DELETE FROM translations WHERE poll_id = ?1 AND lang = ?2")?
                            .execute(params![id.as_str(), lang.code()])?;
                        erased = true;
                    }
                }
            }
            Ok((Outcome::Done, erased))
        }
        Op::Delete { id } => {
            let n = tx.prepare_cached("DELETE FROM polls WHERE id = ?1")?.execute(params![id.as_str()])?;
            if n == 0 {
                return Err(Error::NotFound);
            }
            Ok((Outcome::Done, true))
        }
        // Votes take the cheaper path of `cast`.
        Op::Cast { .. } => Err(Error::internal(anyhow!("a vote reached the savepoint path"))),
        Op::Amend { id, receipt, ballot, today } => amend(tx, id, receipt, ballot.as_ref(), *today),
        Op::IssueInvites { id, hashes, today } => {
            if live_poll(tx, id, *today)?.is_none() {
                return Err(Error::NotFound);
            }
            let (issued, _) = invite_counts(tx, id)?;
            let after = issued + hashes.len() as u64;
            if after > MAX_INVITES {
                return Err(Error::Invalid(vec![FieldError::new(
                    Key::Count,
                    Problem::TooManyInvites { issued, max: MAX_INVITES },
                )]));
            }
            let mut insert = tx.prepare_cached("INSERT INTO invites (poll_id, code_sha256) VALUES (?1, ?2)")?;
            for h in hashes {
                insert.execute(params![id.as_str(), &h.0[..]])?;
            }
            let (issued, used) = invite_counts(tx, id)?;
            Ok((Outcome::Invites(issued, used), false))
        }
        Op::Sweep { as_of } => {
            let n =
                tx.prepare_cached("DELETE FROM polls WHERE expires_on <= ?1")?.execute(params![as_of.to_string()])?;
            Ok((Outcome::Swept(n as u64), n > 0))
        }
    }
}

/// The most invite codes one poll may have.
pub const MAX_INVITES: u64 = 10_000;

/// Replaces (`new` is `Some`) or withdraws the ballot of `id` that came with
/// `receipt`, while the poll is open and takes changes. The counters move
/// by exactly the old ballot's and the new one's; a changed ballot keeps its
/// day (it was cast then), a withdrawn one leaves its day's count and the
/// total. Counter rows that fall to zero go, so that a withdrawn ballot
/// leaves nothing behind, not even the day it was cast. The old answers are
/// truncated out of the WAL soon after ([`Outcome::Amended`]).
fn amend(
    tx: &Connection,
    id: &PollId,
    receipt: &ReceiptHash,
    new: Option<&Ballot>,
    today: Day,
) -> Result<(Outcome, bool), Error> {
    let poll = tx
        .prepare_cached(
            "SELECT closed, closes_on, vote_changes, questions FROM polls WHERE id = ?1 AND expires_on > ?2",
        )?
        .query_row(params![id.as_str(), today.to_string()], |r| {
            Ok((r.get::<_, bool>(0)?, r.get::<_, Option<String>>(1)?, r.get::<_, bool>(2)?, r.get::<_, String>(3)?))
        })
        .optional()?;
    let Some((closed, closes_on, vote_changes, questions)) = poll else {
        return Err(Error::NotFound);
    };
    let closes_on = closes_on
        .map(|d| Day::parse(&d).ok_or_else(|| Error::internal(anyhow!("a stored day is malformed"))))
        .transpose()?;
    if closed || deadline_passed(closes_on, today) {
        return Err(Error::Closed);
    }
    if !vote_changes {
        return Err(Error::ReceiptRefused(ReceiptRefusal::ChangesOff));
    }
    let Some((key, day, choices)) = super::receipt_row(tx, id.as_str(), receipt)? else {
        return Err(Error::ReceiptRefused(ReceiptRefusal::Unknown));
    };
    let questions: Vec<crate::domain::Question> = serde_json::from_str(&questions).map_err(Error::internal)?;
    let old = Ballot::from_stored(&questions, &choices)
        .ok_or_else(|| Error::internal(anyhow!("a stored ballot does not fit its poll")))?;
    let mut counts = Counts::default();
    counts.answers(id, &old, -1);
    match new {
        Some(ballot) => {
            counts.answers(id, ballot, 1);
            tx.prepare_cached("UPDATE responses SET choices = ?3 WHERE poll_id = ?1 AND id = ?2")?.execute(params![
                id.as_str(),
                key,
                ballot.to_stored()
            ])?;
        }
        None => {
            counts.ballot_on(id, day, -1);
            tx.prepare_cached("DELETE FROM responses WHERE poll_id = ?1 AND id = ?2")?
                .execute(params![id.as_str(), key])?;
        }
    }
    counts.flush(tx)?;
    for emptied in [
        "DELETE FROM option_tallies WHERE poll_id = ?1 AND votes = 0",
        "DELETE FROM answer_tallies WHERE poll_id = ?1 AND ballots = 0",
        "DELETE FROM pair_tallies WHERE poll_id = ?1 AND ballots = 0",
        "DELETE FROM daily_tallies WHERE poll_id = ?1 AND responses = 0",
    ] {
        tx.prepare_cached(emptied)?.execute(params![id.as_str()])?;
    }
    Ok((Outcome::Amended, false))
}

/// A poll's invite codes: issued, and used.
pub(super) fn invite_counts(tx: &Connection, id: &PollId) -> Result<(u64, u64), Error> {
    let (issued, used): (i64, i64) = tx
        .prepare_cached("SELECT count(*), coalesce(sum(used), 0) FROM invites WHERE poll_id = ?1")?
        .query_row(params![id.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok((u64::try_from(issued).unwrap_or(0), u64::try_from(used).unwrap_or(0)))
}

/// Stores one cleaned media item of poll `id`, which has `questions` questions.
fn insert_media(tx: &Connection, id: &PollId, m: &NewMedia, questions: usize) -> Result<(), Error> {
    if m.slot.question().is_some_and(|q| q >= questions) {
        return Err(Error::Invalid(vec![FieldError::new(Key::Media, Problem::NoSuchQuestion)]));
    }
    let sha: [u8; 32] = <sha2::Sha256 as sha2::Digest>::digest(&m.clean.bytes).into();
    tx.prepare_cached(
        "INSERT INTO media (id, poll_id, question, kind, mime, size, sha256, alt, width, height, bytes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(params![
        m.id.as_str(),
        id.as_str(),
        m.slot.question().map(|q| q as i64),
        m.clean.kind.as_str(),
        m.clean.mime,
        m.clean.bytes.len() as i64,
        &sha[..],
        m.alt,
        m.clean.width,
        m.clean.height,
        &m.clean.bytes,
    ])?;
    Ok(())
}

#[cfg(test)]
mod tests;
