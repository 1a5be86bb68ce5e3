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
//! - the writer keeps each voted-on poll's state (closed, expiry, the layout
//!   of its ballots, its data key and its counts, opened) between batches
//!   ([`cache`]), so a vote reads nothing and opens nothing. Every change to
//!   a poll goes through this thread, except another process's (`pollctl`):
//!   `PRAGMA data_version`, read once the write lock is held, reveals that,
//!   and the cache is dropped; it is also dropped by any other kind of write
//!   and by a failed batch;
//! - a vote is checked completely before its one `INSERT`, which is atomic by
//!   itself, so it needs no savepoint: a refused vote wrote nothing;
//! - a poll's counts are one sealed value, updated in memory by each vote
//!   and written once per batch before the commit (and before any other
//!   kind of write, which might delete the poll they count). If that fails,
//!   the whole batch fails: no vote is acknowledged without its counts. One
//!   value per poll, rewritten whole, is also what keeps any copy of the WAL
//!   from showing which options a commit counted.
//!
//! Other writes each run in their own savepoint, so one failing write does not
//! undo the others of its batch ([`ops`]).
//!
//! Ballots keep no order (sql/003_ballot_order.sql): each is stored under a
//! random key, but SQLite still lays out a page's new rows, and appends WAL
//! frames, in the order they come. So once the writer is idle after votes
//! (or at least every [`MIX_EVERY`] under steady load), it rewrites the rows
//! around each new ballot in key order and truncates the WAL, then clears
//! the WAL index in the `-shm` file ([`forget_frames`]): from then on, where a
//! ballot sits in the files follows its random key alone ([`mix`]).

mod cache;
mod inbox;
mod mix;
mod ops;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{SyncSender, TryRecvError, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use rusqlite::{Connection, TransactionBehavior};
use tokio::sync::oneshot;

use crate::day::Day;
use crate::domain::{Ballot, NewMedia, NewPoll, PollPatch};
use crate::error::Error;
use crate::keyring::Keyring;
use crate::secret::{InviteHash, MediaId, PollId, ReceiptHash, TokenHash};

use cache::PollCache;
pub(super) use inbox::{Empty, Inbox};
pub use mix::MIX_EVERY;
pub(super) use mix::{Fresh, STAGED};
pub use ops::MAX_INVITES;
pub(super) use ops::invite_mac;

use super::engine::{Rows, in_savepoint};

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
    /// Whether the writer thread asks to run [`WRITER_RAISE`] nice steps
    /// above the process (polld: yes, where allowed; tools: no).
    pub raise_priority: bool,
}

impl Default for WriterConfig {
    fn default() -> WriterConfig {
        WriterConfig {
            queue_capacity: 4096,
            max_batch: 512,
            busy_timeout: super::BUSY_TIMEOUT,
            mix_left_staged: true,
            raise_priority: false,
        }
    }
}

/// How far above the process's priority polld's writer runs, where the
/// kernel allows it (CAP_SYS_NICE, or an RLIMIT_NICE such as systemd's
/// `LimitNICE=-10`, which deploy/anonpoll.service sets). Every vote waits
/// for the writer's next batch, and a batch is short: run first, it keeps
/// votes from waiting behind the workers and I/O threads that render and
/// send a busy client's pages (issue 24, item 4: a small poll's vote under
/// the audit's load, polld on a core of its own, p99 2.4-3.0 ms with the
/// writer 10 steps above, 4.9-6.5 ms with it reniced back to the process's
/// priority: docs/RELIABILITY.md). At nice -10 a thread weighs about ten
/// times one at 0 in the kernel's table; the writer's batches are at most
/// [`WriterConfig::max_batch`] jobs, and its mix goes in short steps.
pub const WRITER_RAISE: i32 = 10;

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
        /// The vote form it came with (its key's day and nonce): spent in
        /// the ballot's transaction where the engine records spent forms
        /// (several nodes, [`Rows::records_forms`]).
        form: Option<(Day, [u8; 16])>,
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
    /// The day's key work: erases every poll expired by `day` or whose key
    /// is gone, re-wraps every other poll's key under its lease from `day`,
    /// and, once that is committed, moves the key state to `day`.
    Roll {
        day: Day,
    },
}

pub(super) enum Outcome {
    Done,
    /// A ballot changed or withdrawn: its old answers are in the WAL until
    /// the next checkpoint, which the writer owes from then on.
    Amended,
    /// Polls erased and polls re-wrapped by a [`Op::Roll`].
    Rolled {
        erased: u64,
        rewrapped: u64,
    },
    /// A poll's invite codes after issuing: issued, used.
    Invites(u64, u64),
}

pub(in crate::store) struct Job {
    pub(in crate::store) op: Op,
    reply: Reply,
    /// Run with the outcome before the reply is sent, whoever still waits.
    then: Option<super::Settle>,
}

impl Job {
    /// Answers whoever waits, after running the job's settle hook.
    pub(in crate::store) fn answer(self, result: Result<Outcome, Error>) {
        if let Some(then) = self.then {
            then.run(result.is_ok());
        }
        self.reply.send(result);
    }
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

impl Inner {
    fn wake(&self) {
        if let Some(t) = &self.thread {
            inbox::wake(t.thread());
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing the queue lets the thread finish what is queued and stop.
        drop(self.tx.take());
        self.wake();
        if let Some(t) = self.thread.take()
            && t.join().is_err()
        {
            eprintln!("anonpoll: the writer thread panicked");
        }
    }
}

impl Handle {
    pub(super) fn start(conn: Connection, keys: Arc<Keyring>, config: WriterConfig) -> anyhow::Result<Handle> {
        Handle::spawn(config, move |rx| run(conn, keys, rx, config))
    }

    /// Starts the writer thread `run` of an engine, fed by the queue.
    pub(super) fn spawn(config: WriterConfig, run: impl FnOnce(Inbox) + Send + 'static) -> anyhow::Result<Handle> {
        let (tx, rx) = sync_channel(config.queue_capacity.max(1));
        let thread = std::thread::Builder::new().name("anonpoll-writer".into()).spawn(move || {
            if config.raise_priority {
                // Said once per process, however many stores it opens.
                static SAID: AtomicBool = AtomicBool::new(false);
                crate::priority::shift_own_or_say(-WRITER_RAISE, &SAID, |e| {
                    format!(
                        "polld: cannot run the writer above the other threads ({e}); under a busy client's load \
                         votes wait longer. Allow it with LimitNICE=-{WRITER_RAISE} in the systemd unit \
                         (deploy/anonpoll.service) or CAP_SYS_NICE"
                    )
                });
            }
            run(Inbox::new(rx))
        })?;
        Ok(Handle { inner: Arc::new(Inner { tx: Some(tx), thread: Some(thread) }) })
    }

    /// Queues `op` and waits until it is committed (or refused).
    pub(super) fn submit(&self, op: Op) -> Result<Outcome, Error> {
        let (reply, answer) = sync_channel(1);
        self.enqueue(Job { op, reply: Reply::Wait(reply), then: None })?;
        answer.recv().map_err(|_| Error::internal(anyhow!("writer thread dropped a write")))?
    }

    /// Queues `op` without waiting: the receiver gets the result once the
    /// write is committed (or refused). A full queue is refused at once.
    /// `then` runs on the writer thread with the outcome (stored or not)
    /// before the receiver hears it, even if the receiver is gone; a write
    /// refused at once runs it (not stored) when it is dropped.
    pub(super) fn submit_later(
        &self,
        op: Op,
        then: Option<super::Settle>,
    ) -> Result<oneshot::Receiver<Result<(), Error>>, Error> {
        let (reply, answer) = oneshot::channel();
        self.enqueue(Job { op, reply: Reply::Later(reply), then })?;
        Ok(answer)
    }

    fn enqueue(&self, job: Job) -> Result<(), Error> {
        let Some(tx) = &self.inner.tx else {
            return Err(Error::internal(anyhow!("writer is shut down")));
        };
        match tx.try_send(job) {
            Ok(()) => {
                self.inner.wake();
                Ok(())
            }
            Err(TrySendError::Full(_)) => {
                Err(Error::Unavailable { reason: "Too many writes are waiting.", retry_after_secs: 1 })
            }
            Err(TrySendError::Disconnected(_)) => Err(Error::internal(anyhow!("writer thread has stopped"))),
        }
    }
}

/// What the writer knows between batches: the keys, the polls it counts,
/// and the ballots it has yet to mix.
pub(in crate::store) struct Writer {
    keys: Arc<Keyring>,
    /// Whether votes are stored under staged keys for the mix to move
    /// (SQLite), or at their settled keys at once (PostgreSQL, whose batches
    /// are written in shuffled order instead).
    staging: bool,
    polls: PollCache,
    fresh: Fresh,
    /// A mix under way, done a step at a time between batches.
    mixing: Option<mix::Mixing>,
}

impl Writer {
    pub(super) fn new(keys: Arc<Keyring>) -> Writer {
        Writer { keys, staging: true, polls: PollCache::default(), fresh: Fresh::default(), mixing: None }
    }

    /// A writer that stores ballots at their settled keys (no mix).
    pub(in crate::store) fn unstaged(keys: Arc<Keyring>) -> Writer {
        Writer { staging: false, ..Writer::new(keys) }
    }

    /// Forgets every poll it remembers (another node may have changed them).
    pub(in crate::store) fn forget_polls(&mut self) {
        self.polls.clear();
    }
}

fn run(mut conn: Connection, keys: Arc<Keyring>, rx: Inbox, config: WriterConfig) {
    let max_batch = config.max_batch.max(1);
    let mut w = Writer::new(keys);
    let mut chores = Chores {
        busy: config.busy_timeout,
        // Truncate the WAL once at start: a crash after an erasure and before
        // its checkpoint must not leave the erased rows in the WAL until the
        // next one.
        checkpoint_owed: !checkpoint(&conn, config.busy_timeout),
        last_try: Instant::now(),
        // Ballots a previous run left staged are looked for at the first idle
        // moment (or when a mix is overdue): the look reads every poll's last
        // page, which a busy start need not wait for.
        look_for_left: config.mix_left_staged,
    };
    loop {
        // While a mix is under way, each of its steps (one transaction) goes
        // after whatever is queued: a long mix no longer holds the votes of
        // every poll for its whole length (issue 24, item 4).
        let first = if w.mixing() {
            match rx.try_recv() {
                Ok(job) => job,
                Err(TryRecvError::Empty) => {
                    if w.mix_step(&mut conn) {
                        // The WAL holds the votes' frames in commit order,
                        // and the mix's: it is truncated either way.
                        chores.checkpoint_owed = !settle(&conn, chores.busy);
                    }
                    continue;
                }
                Err(TryRecvError::Disconnected) => break,
            }
        // Anything staged keeps the writer waking: a mix that failed is
        // retried at an idle moment once its pause is over, not at the next
        // write, which may be hours away.
        } else if chores.checkpoint_owed || w.fresh.count > 0 || chores.look_for_left {
            match rx.recv(Some(Duration::from_millis(250))) {
                Ok(job) => job,
                Err(Empty::Timeout) => {
                    if std::mem::take(&mut chores.look_for_left) {
                        w.fresh.find_left_staged(&conn);
                    }
                    // Idle: the moment to hide the order of new ballots.
                    if w.fresh.waiting() {
                        w.start_mix(mix::MIX_CHUNK);
                        continue;
                    }
                    if chores.checkpoint_owed {
                        chores.checkpoint_owed = !checkpoint(&conn, chores.busy);
                    }
                    continue;
                }
                Err(Empty::Closed) => break,
            }
        } else {
            match rx.recv(None) {
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
        let (results, erased) = w.commit(&mut conn, &batch);
        w.after_commit(&mut conn, &mut chores, batch, results, erased);
    }
    if w.mixing() || w.fresh.count > 0 {
        w.mix(&mut conn);
        chores.checkpoint_owed = !settle(&conn, chores.busy);
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

/// What the SQLite writer owes besides the writes themselves, done between
/// batches.
struct Chores {
    busy: Duration,
    /// After an erasure or a changed ballot the WAL must be truncated; if
    /// readers kept it busy, this is retried when the queue is idle, or
    /// within a second under load.
    checkpoint_owed: bool,
    last_try: Instant,
    /// Whether ballots a previous run left staged are still to be looked for.
    look_for_left: bool,
}

impl Writer {
    /// After a batch's commit: its answers, then the chores. An erasure's
    /// answer waits for the WAL's truncation (so a deleted poll is gone from
    /// every file when its DELETE is answered), but no answer waits for a
    /// step of the mix or an owed checkpoint: nobody's write needs them, and
    /// under load a step ran between every commit and its answers, so every
    /// vote waited for one (issue 24, item 4).
    fn after_commit(
        &mut self,
        conn: &mut Connection,
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
        // within a second under load: not a checkpoint per change, which
        // would hold the write lock for every one.
        chores.checkpoint_owed |= results.iter().any(|r| matches!(r, Ok(Outcome::Amended)));
        // The key state moves only once the re-wrapped keys are committed.
        self.advance_keys(&batch, &mut results);
        for (job, result) in batch.into_iter().zip(results) {
            job.answer(result);
        }
        // Under load, a step of the mix after each batch.
        if !self.mixing() && self.fresh.overdue() {
            if std::mem::take(&mut chores.look_for_left) {
                self.fresh.find_left_staged(conn);
            }
            self.start_mix(mix::MIX_CHUNK);
        }
        if self.mixing() && self.mix_step(conn) {
            chores.checkpoint_owed = !settle(conn, chores.busy);
        }
        // Retry an owed checkpoint at most once a second under load: each try
        // may hold the write lock for up to CHECKPOINT_WAIT.
        if chores.checkpoint_owed && chores.last_try.elapsed() >= Duration::from_secs(1) {
            chores.checkpoint_owed = !checkpoint(conn, chores.busy);
            chores.last_try = Instant::now();
        }
    }
}

impl Writer {
    /// After a committed [`Op::Roll`], moves the key state to its day. A
    /// failure is that job's result: its polls were re-wrapped, and the
    /// old state can still read them.
    pub(in crate::store) fn advance_keys(&self, batch: &[Job], results: &mut [Result<Outcome, Error>]) {
        for (job, result) in batch.iter().zip(results.iter_mut()) {
            if let (Op::Roll { day }, Ok(Outcome::Rolled { .. })) = (&job.op, &result)
                && let Err(e) = self.keys.advance(*day)
            {
                eprintln!("anonpoll: {e}");
                *result = Err(Error::internal(anyhow!("the key state could not move to {day}: {e}")));
            }
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
/// commit touched (which invite code's page beside which vote) until the
/// next write. SQLite zeroes an index block when the first frame of a new
/// generation goes into it: so one small write (page 1) starts a generation
/// and clears the first block, and the blocks beyond (used only by a generation
/// of more than 4,062 frames, dead now that the WAL is empty) are zeroed
/// here while the write lock is held, so no writer is using them.
fn forget_frames(conn: &Connection) -> anyhow::Result<()> {
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

/// What an engine decided of a vote's form before its batch ran (several
/// nodes: the whole batch's forms spent in one statement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::store) enum FormState {
    /// Not looked at: the vote spends its form itself, if the engine
    /// records forms.
    Unchecked,
    /// Spent now, for this vote.
    Taken,
    /// Spent before (on any node, or by an earlier vote of this batch).
    Spent,
}

/// The error every job of a failed batch gets. Storage-level causes (full,
/// busy) keep their 503 meaning; anything else is internal.
pub(in crate::store) fn batch_error(e: &Error) -> Error {
    match e {
        Error::Unavailable { reason, retry_after_secs } => {
            Error::Unavailable { reason, retry_after_secs: *retry_after_secs }
        }
        other => Error::internal(anyhow!("write batch failed: {other}")),
    }
}

/// A batch that failed as a whole, with the error each of its jobs gets.
pub(in crate::store) struct BatchFailed(pub(in crate::store) Error);

impl BatchFailed {
    pub(in crate::store) fn new(len: usize, e: Error) -> BatchFailed {
        eprintln!("anonpoll: write batch of {len} failed: {e}");
        BatchFailed(e)
    }
}

impl Writer {
    /// Applies a batch in one transaction. Returns each job's result and
    /// whether anything was erased.
    fn commit(&mut self, conn: &mut Connection, batch: &[Job]) -> (Vec<Result<Outcome, Error>>, bool) {
        self.try_commit(conn, batch).unwrap_or_else(|BatchFailed(err)| {
            // The transaction was rolled back: nothing of the batch is
            // written, and the cache may hold what it had counted.
            self.polls.clear();
            (batch.iter().map(|_| Err(batch_error(&err))).collect(), false)
        })
    }

    fn try_commit(
        &mut self,
        conn: &mut Connection,
        batch: &[Job],
    ) -> Result<(Vec<Result<Outcome, Error>>, bool), BatchFailed> {
        let failed = |e: Error| BatchFailed::new(batch.len(), e);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| failed(e.into()))?;
        // With the write lock held, nobody else can commit until we do: if
        // another process committed since our last batch, forget what we know.
        let version: i64 = tx.query_row("PRAGMA data_version", [], |r| r.get(0)).map_err(|e| failed(e.into()))?;
        self.polls.check_version(version);
        let out = self.apply_batch(&mut super::sqlite::Lite(&tx), batch, &[])?;
        tx.commit().map_err(|e| failed(e.into()))?;
        Ok(out)
    }

    /// Applies a batch inside the transaction `tx` holds open: each job's
    /// result, and whether anything was erased. The caller commits.
    pub(in crate::store) fn apply_batch(
        &mut self,
        tx: &mut dyn Rows,
        batch: &[Job],
        forms: &[FormState],
    ) -> Result<(Vec<Result<Outcome, Error>>, bool), BatchFailed> {
        let failed = |e: Error| BatchFailed::new(batch.len(), e);
        let mut results = Vec::with_capacity(batch.len());
        let mut erased = false;
        for (i, job) in batch.iter().enumerate() {
            let result = match &job.op {
                Op::Cast { id, ballot, invite, receipt, form, today } => {
                    match forms.get(i).copied().unwrap_or(FormState::Unchecked) {
                        FormState::Unchecked => self.cast(tx, (id, ballot, *invite, *receipt), *form, *today),
                        FormState::Taken => self.cast(tx, (id, ballot, *invite, *receipt), None, *today),
                        FormState::Spent => Err(Error::FormSpent),
                    }
                }
                op => {
                    // Other writes may change or delete a poll just counted:
                    // the counts go first, and the cache is rebuilt from the
                    // table.
                    self.polls.flush(tx).map_err(failed)?;
                    self.polls.clear();
                    // A savepoint: a failing job is rolled back alone.
                    let keys = &self.keys;
                    in_savepoint(tx, |tx| ops::apply(tx, keys, op)).map(|(outcome, e)| {
                        erased |= e;
                        outcome
                    })
                }
            };
            // ...unless the engine rolled the whole transaction back (SQLite
            // does on SQLITE_FULL, IOERR or NOMEM). Then every job of the
            // batch is undone; going on would start autocommit writes
            // outside the transaction and report them as failed.
            if let Err(err) = &result
                && tx.rolled_back()
            {
                eprintln!("anonpoll: a write batch of {} was rolled back by the database: {err}", batch.len());
                let reason = match err {
                    Error::Unavailable { reason, .. } => *reason,
                    _ => "Storage refused the write; nothing was written.",
                };
                return Err(BatchFailed(Error::Unavailable { reason, retry_after_secs: 5 }));
            }
            results.push(result);
        }
        self.polls.flush(tx).map_err(failed)?;
        tx.finish_batch().map_err(failed)?;
        Ok((results, erased))
    }

    /// Records one vote: every check first, then its writes (the ballot's
    /// `INSERT`, and for a vote with an invite code the code's `used` flag,
    /// the two in a savepoint), so a refused or failed vote wrote nothing;
    /// then its counts, in memory until the batch's flush. The ballot was
    /// checked against the poll's questions before it was queued (they never
    /// change); what may have changed since is whether the poll is open and
    /// whether it takes votes by invite, so that is checked here.
    fn cast(
        &mut self,
        tx: &mut dyn Rows,
        (id, ballot, invite, receipt): (&PollId, &Ballot, Option<InviteHash>, Option<ReceiptHash>),
        form: Option<(Day, [u8; 16])>,
        today: Day,
    ) -> Result<Outcome, Error> {
        let poll = self.polls.get(tx, &self.keys, id)?.filter(|p| today < p.expires_on).ok_or(Error::NotFound)?;
        if poll.is_closed(today) {
            return Err(Error::Closed);
        }
        // The poll may have turned invite-only since the vote was admitted.
        if poll.invite_only && invite.is_none() {
            return Err(Error::InviteRefused(crate::error::InviteRefusal::Missing));
        }
        // Staged: the key puts the ballot among its poll's other new ones, at
        // the end of the poll's rows, until the mix gives it its random place
        // (see `mix`). A ballot with a receipt takes both keys from the
        // receipt's keyed hash (`receipt_keys`), so the receipt finds it
        // without an index.
        let (key, settle_at) = match receipt {
            Some(r) => {
                let keys = super::receipt_keys(&poll.key, &r);
                (keys.staged, Some(keys.settled))
            }
            None => {
                let key = if self.staging {
                    let mut key = [0u8; 16];
                    crate::secret::random_bytes(&mut key).map_err(Error::internal)?;
                    key[0] = STAGED;
                    key
                } else {
                    mix::mixed_key().map_err(Error::from)?
                };
                (key, None)
            }
        };
        // Without a mix, a ballot goes straight to its settled key.
        let (key, settle_at) = match settle_at {
            Some(to) if !self.staging => (to, None),
            other => (key, other),
        };
        let plain = super::rows::ballot_bytes(&poll.layout, today, ballot)?;
        let sealed = poll.key.seal(&super::place::ballot(id.as_str(), &key), &plain).map_err(Error::internal)?;
        let code = invite.map(|code| invite_mac(&poll.key, &code));
        let invite_only = poll.invite_only;
        // Counted first (in memory), uncounted if the ballot is not stored:
        // no ballot is ever stored without its counts.
        self.polls.count(id, ballot, today, 1)?;
        let form = form.filter(|_| tx.records_forms());
        let stored = match (code, form) {
            (None, None) => tx.insert_ballot(id.as_str(), &key, sealed),
            // (A vote with a form and no code has its form spent with the
            // batch's others before the batch: `FormState::Taken`, form `None`
            // here.)
            // The form and the code are spent with their ballot or not at
            // all. A code that came with a vote is spent even if the poll
            // has meanwhile left invite mode, so that it cannot vote again
            // if the mode returns.
            (code, form) => in_savepoint(tx, |tx| {
                if let Some((day, nonce)) = form
                    && !tx.redeem_form(day, &nonce)?
                {
                    return Err(Error::FormSpent);
                }
                if let Some(code) = code {
                    let n = tx.spend_invite(id.as_str(), &code)?;
                    if n == 0 && invite_only {
                        return Err(Error::InviteRefused(crate::error::InviteRefusal::UnknownOrUsed));
                    }
                }
                tx.insert_ballot(id.as_str(), &key, sealed)
            }),
        };
        if let Err(e) = stored {
            self.polls.count(id, ballot, today, -1)?;
            return Err(e);
        }
        // A key of a batch that then fails is mixed for nothing, harmlessly.
        if self.staging {
            self.fresh.add(id, key, settle_at);
        }
        Ok(Outcome::Done)
    }
}

#[cfg(test)]
mod tests;
