//! The store: every byte anonpoll keeps, on SQLite (the embedded default)
//! or PostgreSQL (several nodes), behind one [`Store`]. All SQL of anonpoll
//! lives in this module's engine folders.
//!
//! The shape, bottom up (no module imports one above it):
//! - [`seal`], `vocab`, `keys`, `rows`, `seen`: the vocabulary:
//!   the cipher and places, the rows as stored, the keys and names of rows,
//!   the plaintext layouts, what this process has seen;
//! - `engine`: the seam, three traits (`Rows`, `ReadConn`, `Engine`);
//! - `open`, `writer`, `reader`, `check`: the logic, written once above the
//!   seam: the writer's batches, the vote, the mix, the day's key work, the
//!   upgrade; reads; the integrity check;
//! - `sqlite`, `postgres`: each engine's SQL, connections and writer
//!   thread, and what only it needs (SQLite: its log's truncation and
//!   index, the upgrade from before sealing; PostgreSQL: its pool,
//!   reconnection, the batch's locks and spent forms);
//! - this module: the [`Store`] the application uses, which opens one.
//!
//! Which promise each engine keeps how (docs/PRIVACY.md has the full
//! account, per engine):
//!
//! | promise | both engines, by the store's design | SQLite adds | PostgreSQL adds |
//! |---|---|---|---|
//! | every byte of a poll sealed under a key that ceases to exist | `seal`, `keys`, `writer::keywork` | | |
//! | no order of arrival at rest; no code or form paired with its ballot | staging and `writer::mix` (new keys, new data key, random order); codes spent in the sealed counts | the log truncated and its index cleared after a mix | forms' nonces stored only as keyed hashes of the day's form key |
//! | a withdrawn or changed ballot gone from every copy within the lease | a change is stored as a vote (`writer::amend`), and the poll's next mix re-keys it | the row zeroed, the log truncated after it | |
//! | tampering noticed | `rows::State` (version, digest), `seen`, `check` | | |
//! | one bad row never stops the key chain | `writer::keywork` sets it aside | | |

pub mod audit;
mod binding;
mod check;
mod engine;
mod keys;
mod open;
mod postgres;
mod reader;
mod rows;
pub mod seal;
mod seen;
mod sqlite;
mod vocab;
mod writer;

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;

use crate::day::Day;
use crate::domain::{Ballot, NewMedia, NewPoll, PollPatch, Question, Tallies};
use crate::error::Error;
use crate::keyring::Keyring;
use crate::secret::{InviteHash, MediaId, PollId, ReceiptHash, TokenHash};

pub use binding::{KEYS_DIR_SUFFIX, Keys};
pub use check::PollCheck;
pub use engine::{Health, Stats};
pub use keys::receipt_tag;
pub use postgres::{is_url, shown};
pub use reader::{Due, MEMO_SWEEP, MEMO_TTL, MediaBlob, Reader, STREAM_MMAP};
pub use writer::{MAX_INVITES, MIX_EVERY, Rolled, WriterConfig};

use engine::Engine;
use seen::Seen;

/// A handle on the database: cheap to clone, shared by all threads.
#[derive(Clone)]
pub struct Store {
    engine: Arc<dyn Engine>,
    writer: writer::Handle,
    keys: Arc<Keyring>,
    seen: Arc<Seen>,
}

/// What a sweep (or polld's day change) did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepReport {
    /// Polls erased: expired, or leased until a day whose key is gone.
    pub polls_erased: u64,
    /// Live polls whose data key was wrapped again under a later lease.
    pub polls_rewrapped: u64,
    /// Polls set aside: their row could not be read (named on stderr and
    /// by `pollctl check`); erased once nothing could open them.
    pub polls_set_aside: Vec<String>,
    /// The key state's day afterwards.
    pub key_day: Day,
}

/// What a vote brings besides its ballot: an invite code's hash, a
/// receipt's hash, and its vote form's day and the keyed hash of its nonce.
pub type VoteProofs = (Option<InviteHash>, Option<ReceiptHash>, Option<(Day, [u8; 16])>);

/// `tallies` with `ballot` counted on `day`, as the writer counts it: the
/// results a voter sees on the page that answers their vote, read before
/// the ballot is stored.
pub fn count_ballot(tallies: &mut Tallies, questions: &[Question], ballot: &Ballot, day: Day) -> Result<(), Error> {
    rows::tally(tallies, &rows::Layout::of(questions), ballot, Some(day), 1)
}

impl Store {
    /// Opens (creating if needed) the SQLite database at `path`, with its
    /// key file at the default place ([`Keys::apart_from`]).
    pub fn open(path: &Path) -> anyhow::Result<Store> {
        Store::open_db(path, &Keys::apart_from(path), WriterConfig::default())
    }

    /// For tools working beside a busy polld (`pollctl`): waits up to a
    /// minute for locks instead of five seconds, since a cron sweep or an
    /// export may wait, while a web request should not; and leaves the mix
    /// to polld.
    pub fn open_patient(db: &Path, keys: &Keys) -> anyhow::Result<Store> {
        let config =
            WriterConfig { busy_timeout: std::time::Duration::from_secs(60), mix: false, ..WriterConfig::default() };
        Store::open_db(db, keys, config)
    }

    /// Opens `db`: a `postgresql://` URL or a SQLite file, with its key file
    /// (created with the database; refused when it is not the database's,
    /// is missing for a database that holds polls, is readable by others,
    /// or is an old copy: `crate::keyring::KeyError`, nothing touched),
    /// upgrades it, and starts its writer. A folder, database or key file it
    /// creates is private to the service's user.
    pub fn open_db(db: &Path, keys: &Keys, config: WriterConfig) -> anyhow::Result<Store> {
        let seen = Arc::new(Seen::default());
        let opened = match db.to_str().filter(|d| is_url(d)) {
            Some(url) => postgres::open(url, keys, config, seen.clone())?,
            None => sqlite::open(db, keys, config, seen.clone())?,
        };
        Ok(Store { engine: opened.engine, writer: opened.writer, keys: opened.keys, seen })
    }

    /// Whether this store records spent vote forms in the database
    /// (PostgreSQL, which several nodes may share).
    pub fn records_forms(&self) -> bool {
        self.engine.records_forms()
    }

    /// The key state this store reads and writes with.
    pub fn keys(&self) -> &Arc<Keyring> {
        &self.keys
    }

    /// The SQLite file, or `None` on PostgreSQL.
    pub fn path(&self) -> Option<&Path> {
        self.engine.path()
    }

    /// A new read connection, meant to be owned by one worker thread. On
    /// PostgreSQL it connects at its first read, and again after the
    /// database was away.
    pub fn reader(&self) -> anyhow::Result<Reader> {
        Ok(Reader::new(self.engine.reader()?, self.keys.clone(), self.seen.clone()))
    }

    /// Drops, from every reader's memo of data keys, each key remembered
    /// for [`MEMO_TTL`] or longer, whether or not its reader reads again.
    /// polld's janitor calls it every [`MEMO_SWEEP`], so that on a quiet
    /// server too no key stays in memory past the sum of the two.
    pub fn expire_key_memos(&self) {
        self.seen.expire_keys(std::time::Instant::now());
    }

    /// Stores a new poll with its media, in one transaction.
    pub fn create_poll(
        &self,
        id: &PollId,
        token: &TokenHash,
        poll: &NewPoll,
        media: &[NewMedia],
        today: Day,
    ) -> Result<(), Error> {
        let (id, token, poll, media) = (id.clone(), token.clone(), poll.clone(), media.to_vec());
        self.writer.submit(writer::Op::Create { id, token, poll, media, today })?;
        Ok(())
    }

    /// Attaches media to a live poll, erasing what its slot held before.
    pub fn attach_media(&self, id: &PollId, media: NewMedia, today: Day) -> Result<(), Error> {
        self.writer.submit(writer::Op::AttachMedia { id: id.clone(), media, today })?;
        Ok(())
    }

    /// Erases one media item of a live poll; `Error::NotFound` if it has none such.
    pub fn detach_media(&self, id: &PollId, media: &MediaId, today: Day) -> Result<(), Error> {
        self.writer.submit(writer::Op::DetachMedia { id: id.clone(), media: media.clone(), today })?;
        Ok(())
    }

    /// Applies a validated patch; `Error::NotFound` if the poll is gone.
    pub fn patch_poll(&self, id: &PollId, patch: &PollPatch, today: Day) -> Result<(), Error> {
        self.writer.submit(writer::Op::Patch { id: id.clone(), patch: patch.clone(), today })?;
        Ok(())
    }

    /// Erases a poll and everything that belongs to it.
    pub fn delete_poll(&self, id: &PollId) -> Result<(), Error> {
        self.writer.submit(writer::Op::Delete { id: id.clone() })?;
        Ok(())
    }

    /// Records one response cast `today`: a ballot already checked against
    /// the poll's questions, which never change. `Error::NotFound` for an
    /// unknown or expired poll, `Error::Closed` for a closed one (both
    /// decided at the commit).
    pub fn cast(&self, id: &PollId, ballot: Ballot, today: Day) -> Result<(), Error> {
        self.writer.submit(writer::Op::Cast {
            id: id.clone(),
            ballot,
            invite: None,
            receipt: None,
            form: None,
            read_at: None,
            today,
        })?;
        Ok(())
    }

    /// [`Store::cast`] without waiting: the vote is queued (or refused at
    /// once with 503 when the queue is full) and the returned
    /// [`PendingWrite`] delivers its result after the commit. The web's vote
    /// handler uses it so that no worker thread waits through the fsync.
    /// An invite-only poll's vote brings its code's hash: the code is
    /// spent with the ballot (`Error::InviteRefused` if it is unknown or
    /// used). A ballot with a receipt carries the receipt's tag, which finds
    /// it again ([`Store::amend`]). The vote form's day and mark, where
    /// given, are spent in the ballot's transaction on an engine shared by
    /// several nodes (`Error::FormSpent` if another node took them first).
    /// `then` learns whether the ballot was stored before the
    /// [`PendingWrite`] does, and even if nobody waits for it any more.
    pub fn cast_later(
        &self,
        id: &PollId,
        ballot: Ballot,
        proofs: VoteProofs,
        today: Day,
        then: Option<Settle>,
    ) -> Result<PendingWrite, Error> {
        self.cast_read_at(id, (ballot, None), proofs, today, then)
    }

    /// [`Store::cast_later`] for a ballot read against the poll's questions
    /// as they were after `read_at` changes of their structure
    /// ([`crate::domain::Poll::restructured`], where known): refused with
    /// `Error::PollChanged` if they have changed since (only possible while
    /// the poll has no ballot), decided in the ballot's transaction.
    pub fn cast_read_at(
        &self,
        id: &PollId,
        (ballot, read_at): (Ballot, Option<u32>),
        (invite, receipt, form): VoteProofs,
        today: Day,
        then: Option<Settle>,
    ) -> Result<PendingWrite, Error> {
        let op = writer::Op::Cast { id: id.clone(), ballot, invite, receipt, form, read_at, today };
        self.writer.submit_later(op, then).map(PendingWrite)
    }

    /// Replaces (`Some`) or withdraws (`None`) the ballot that came with
    /// `receipt`, with its counters, while the poll is open; the poll's next
    /// mix gives it a new data key, and the old answers are then left only
    /// under the old key, which dies with its lease: `Error::Closed`,
    /// `Error::NotFound` (poll gone) or `Error::ReceiptRefused` (no such
    /// ballot, or changes turned off) otherwise. The new ballot was checked
    /// against the poll's questions.
    pub fn amend(&self, id: &PollId, receipt: ReceiptHash, ballot: Option<Ballot>, today: Day) -> Result<(), Error> {
        self.writer.submit(writer::Op::Amend { id: id.clone(), receipt, ballot, today })?;
        Ok(())
    }

    /// Stores the hashes of new invite codes of a live poll; answers the
    /// poll's codes then (issued, used). At most [`MAX_INVITES`] per poll
    /// (`Error::Invalid` at `count` beyond).
    pub fn issue_invites(&self, id: &PollId, hashes: Vec<InviteHash>, today: Day) -> Result<(u64, u64), Error> {
        match self.writer.submit(writer::Op::IssueInvites { id: id.clone(), hashes, today })? {
            writer::Outcome::Invites(issued, used) => Ok((issued, used)),
            _ => Err(Error::internal(anyhow::anyhow!("issuing invites answered no counts"))),
        }
    }

    /// Convenience for tools and tests: [`Store::cast`] today, by id text,
    /// with the ballot checked against the poll first.
    pub fn record_response(&self, id: &str, choices: &[Option<usize>]) -> anyhow::Result<()> {
        let id = PollId::parse(id).context("malformed poll id")?;
        let today = Day::today();
        let poll = self.reader()?.poll(&id, today)?.context("no such poll")?;
        let ballot = Ballot::of_choices(&poll.questions, choices).map_err(|p| anyhow::anyhow!("{p}"))?;
        self.cast(&id, ballot, today).map_err(|e| anyhow::anyhow!("{e}"))
    }

    /// The day's key work, as of `day` (`pollctl sweep`, and polld at its
    /// start and at each day change): erases every poll that has expired
    /// by then (`expires_on <= day`) and every poll whose key is gone,
    /// re-wraps every other poll's data key under its lease from `day`, sets
    /// aside any whose row cannot be read, notes the day in the database,
    /// and then moves the key state to `day`, so that no key of an earlier
    /// day exists any more. Idempotent.
    pub fn sweep(&self, day: Day) -> Result<SweepReport, Error> {
        match self.writer.submit(writer::Op::Roll { day })? {
            writer::Outcome::Rolled(done) => Ok(SweepReport {
                polls_erased: done.erased,
                polls_rewrapped: done.rewrapped,
                polls_set_aside: done.set_aside,
                key_day: self.keys.day(),
            }),
            _ => Err(Error::internal(anyhow::anyhow!("the day's key work answered no report"))),
        }
    }

    /// Figures for `pollctl stats`: nothing about any single poll.
    pub fn stats(&self, today: Day) -> anyhow::Result<Stats> {
        self.engine.stats(today)
    }

    /// The engine's own check of its files, and the schema version.
    pub fn health(&self) -> anyhow::Result<Health> {
        self.engine.health()
    }

    /// Every poll opened and recounted as `pollctl check` does: each one
    /// whose row cannot be read, whose ballots are not those its counts
    /// were written with, or whose counts are not a recount of its ballots.
    pub fn check_polls(&self) -> anyhow::Result<Vec<PollCheck>> {
        check::check_all(&mut *self.engine.reader()?, &self.keys)
    }

    /// Writes a consistent, compacted copy of the database to `target`
    /// (which must not exist, and not lie in the key file's folder: a copy
    /// beside the key file would go wherever that folder goes) while the
    /// service keeps running. The copy's polls with ballots not yet mixed
    /// are mixed in the copy, so that it holds none in the order they came.
    pub fn backup(&self, target: &Path) -> anyhow::Result<()> {
        if beside_keys(self.keys.path(), target)? {
            anyhow::bail!(
                "refusing to write a backup to {}, in the key file's folder ({}): a backup must never travel \
                 with the key file (docs/OPERATIONS.md, \"Backups\")",
                target.display(),
                folder_of(self.keys.path()).display()
            );
        }
        let (keys, seen) = (self.keys.clone(), Seen::default());
        let today = Day::today();
        self.engine.backup(target, &mut |copy| {
            for poll in copy.staged_polls()? {
                writer::mix::mix(copy, &keys, &seen, &poll, today)?;
            }
            Ok(())
        })
    }
}

/// The folder a file path names its file in; an empty one is the current
/// folder.
fn folder_of(file: &Path) -> &Path {
    file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Whether a file at `target` would lie in the folder of the key file at
/// `keys`, or below it. Both folders are compared as they are on disk
/// (canonical: no `.` or `..`, no symbolic link, relative paths from the
/// current folder), so that no spelling of the key file's folder gets
/// past. The key file's folder exists (the key file was opened); the
/// target's must too, or no backup could be written there anyway.
fn beside_keys(keys: &Path, target: &Path) -> anyhow::Result<bool> {
    let keys_dir = folder_of(keys);
    let keys_dir =
        keys_dir.canonicalize().with_context(|| format!("cannot find the key file's folder {}", keys_dir.display()))?;
    let target_dir = folder_of(target);
    let target_dir = target_dir
        .canonicalize()
        .with_context(|| format!("cannot write a backup into {}: the folder must exist", target_dir.display()))?;
    Ok(target_dir.starts_with(&keys_dir))
}

/// What a queued vote's sender does once the writer knows whether the ballot
/// was stored, on the writer's thread, before the answer goes out and whether
/// or not anyone still waits for it: a client that hung up must not leave a
/// vote form half spent. Runs exactly once; dropped unrun (the write was
/// refused before it was queued, or the writer stopped), it runs with "not
/// stored".
pub struct Settle(Option<Box<dyn FnOnce(bool) + Send>>);

impl Settle {
    pub fn new(f: impl FnOnce(bool) + Send + 'static) -> Settle {
        Settle(Some(Box::new(f)))
    }

    /// Runs it now (the writer does, once it knows).
    pub fn run(mut self, stored: bool) {
        if let Some(f) = self.0.take() {
            f(stored);
        }
    }
}

impl Drop for Settle {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f(false);
        }
    }
}

/// A write queued for the group commit, whose result arrives once it is on
/// disk (or refused). The store's own type: whoever waits for it (the HTTP
/// layer, a test) needs nothing but these two methods.
pub struct PendingWrite(tokio::sync::oneshot::Receiver<Result<(), Error>>);

impl PendingWrite {
    /// Waits for the commit without holding a thread.
    pub async fn committed(self) -> Result<(), Error> {
        self.0.await.unwrap_or_else(|_| Err(writer_gone()))
    }

    /// Blocks the calling thread until the commit; must not be called on an
    /// async runtime's thread.
    pub fn committed_blocking(self) -> Result<(), Error> {
        self.0.blocking_recv().unwrap_or_else(|_| Err(writer_gone()))
    }
}

fn writer_gone() -> Error {
    Error::internal(anyhow::anyhow!("the writer dropped a queued write"))
}

/// What an engine's `open` gives the store.
pub(crate) struct Opened {
    engine: Arc<dyn Engine>,
    writer: writer::Handle,
    keys: Arc<Keyring>,
}

#[cfg(test)]
mod erasure_tests;
#[cfg(test)]
mod testkit;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod upgrade_tests;
