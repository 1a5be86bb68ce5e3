//! The writer's queue: the writes request threads hand to the one writer
//! thread of a store, and how each is answered.
//!
//! A waiting request is either a thread blocked in [`Handle::submit`] or,
//! for votes from the web, a connection task awaiting a oneshot
//! ([`Handle::submit_later`]): then no thread waits through the fsync, and
//! a commit group can hold as many votes as the queue. A full queue is
//! answered at once with 503 rather than letting memory grow.

use std::sync::Arc;
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::anyhow;
use tokio::sync::oneshot;

use crate::day::Day;
use crate::domain::{Ballot, NewMedia, NewPoll, PollPatch};
use crate::error::Error;
use crate::secret::{InviteHash, MediaId, PollId, ReceiptHash, TokenHash};

use super::inbox::{self, Inbox};
use crate::store::Settle;

/// Tuning of the writer thread.
#[derive(Clone, Copy, Debug)]
pub struct WriterConfig {
    /// Writes waiting beyond this many are refused with 503.
    pub queue_capacity: usize,
    /// Most writes committed in one transaction.
    pub max_batch: usize,
    /// How long every connection of the store waits for another process's lock.
    pub busy_timeout: Duration,
    /// Whether the writer mixes: looks, when it starts, for ballots a
    /// previous run left staged, and mixes every poll with new ballots
    /// (polld). The short-lived `pollctl` leaves that to polld.
    pub mix: bool,
    /// Run on the writer thread as it starts (polld: its priority).
    pub on_start: Option<fn()>,
}

impl Default for WriterConfig {
    fn default() -> WriterConfig {
        WriterConfig {
            queue_capacity: 4096,
            max_batch: 512,
            busy_timeout: Duration::from_secs(5),
            mix: true,
            on_start: None,
        }
    }
}

pub(in crate::store) enum Op {
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
        /// `voteChanges`: the ballot carries its tag.
        receipt: Option<ReceiptHash>,
        /// The vote form it came with (its key's day and the keyed hash of
        /// its nonce): spent in the ballot's transaction where the engine
        /// records spent forms (several nodes).
        form: Option<(Day, [u8; 16])>,
        /// How many times the poll's questions had changed structure when
        /// the ballot was read against them, if known: a ballot read
        /// against other questions is refused.
        read_at: Option<u32>,
        today: Day,
    },
    /// Replaces (`Some`) or withdraws (`None`) the ballot that came with a
    /// receipt, counters and all, under a new data key.
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
    /// sets aside any whose key does not open, and, once that is
    /// committed, moves the key state to `day`.
    Roll {
        day: Day,
    },
}

impl Op {
    /// The poll a write changes, if it is one poll that exists already.
    pub(in crate::store) fn poll(&self) -> Option<&PollId> {
        match self {
            Op::Cast { id, .. }
            | Op::Amend { id, .. }
            | Op::Patch { id, .. }
            | Op::AttachMedia { id, .. }
            | Op::DetachMedia { id, .. }
            | Op::Delete { id }
            | Op::IssueInvites { id, .. } => Some(id),
            Op::Create { .. } | Op::Roll { .. } => None,
        }
    }
}

pub(in crate::store) enum Outcome {
    Done,
    /// A ballot changed or withdrawn: its old answers are in the log until
    /// the next checkpoint, which the writer owes from then on.
    Amended,
    /// What a [`Op::Roll`] did.
    Rolled(Rolled),
    /// A poll's invite codes after issuing: issued, used.
    Invites(u64, u64),
}

/// What the day's key work did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rolled {
    /// Polls erased: expired, or leased until a day whose key is gone.
    pub erased: u64,
    /// Live polls whose data key was wrapped again under a later lease.
    pub rewrapped: u64,
    /// Polls set aside because their row could not be read (a key that
    /// does not open, a malformed day): named, left as they are, and erased
    /// once the key state has moved past their key's day.
    pub set_aside: Vec<String>,
}

pub(in crate::store) struct Job {
    pub(in crate::store) op: Op,
    reply: Reply,
    /// Run with the outcome before the reply is sent, whoever still waits.
    then: Option<Settle>,
}

impl Job {
    /// Answers whoever waits, after running the job's settle hook.
    pub(in crate::store) fn answer(self, result: Result<Outcome, Error>) {
        if let Some(then) = self.then {
            then.run(result.is_ok());
        }
        self.reply.send(result);
    }

    /// A job nobody waits for (tests).
    #[cfg(test)]
    pub(in crate::store) fn unanswered(op: Op) -> Job {
        let (reply, _) = sync_channel(1);
        Job { op, reply: Reply::Wait(reply), then: None }
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

/// The request threads' end of the queue: cheap to clone. The last one
/// dropped closes the queue and waits for the writer to finish what is
/// queued.
#[derive(Clone)]
pub(in crate::store) struct Handle {
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
    /// Starts the writer thread `run` of an engine, fed by the queue.
    pub(in crate::store) fn spawn(
        config: WriterConfig,
        run: impl FnOnce(Inbox) + Send + 'static,
    ) -> anyhow::Result<Handle> {
        let (tx, rx) = sync_channel(config.queue_capacity.max(1));
        let thread = std::thread::Builder::new().name("anonpoll-writer".into()).spawn(move || {
            if let Some(on_start) = config.on_start {
                on_start();
            }
            run(Inbox::new(rx))
        })?;
        Ok(Handle { inner: Arc::new(Inner { tx: Some(tx), thread: Some(thread) }) })
    }

    /// Queues `op` and waits until it is committed (or refused).
    pub(in crate::store) fn submit(&self, op: Op) -> Result<Outcome, Error> {
        let (reply, answer) = sync_channel(1);
        self.enqueue(Job { op, reply: Reply::Wait(reply), then: None })?;
        answer.recv().map_err(|_| Error::internal(anyhow!("writer thread dropped a write")))?
    }

    /// Queues `op` without waiting: the receiver gets the result once the
    /// write is committed (or refused). A full queue is refused at once.
    /// `then` runs on the writer thread with the outcome (stored or not)
    /// before the receiver hears it, even if the receiver is gone; a write
    /// refused at once runs it (not stored) when it is dropped.
    pub(in crate::store) fn submit_later(
        &self,
        op: Op,
        then: Option<Settle>,
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
