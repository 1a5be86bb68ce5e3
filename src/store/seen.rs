//! What this process has seen of the polls it serves, shared by its writer
//! and its readers: the latest version of each poll's counts, and the data
//! keys its readers remember.
//!
//! Why: a poll's sealed counts carry a version that grows with every write
//! (`rows::State`). Someone who can write to the database could put an
//! older sealed value back at its place; it would open, since it was
//! sealed there. Remembering the latest version read or written, a read
//! of an older one fails instead ([`Seen::check`]). And each reader keeps
//! the data keys it unwrapped in a memo (`reader::KeyMemo`) registered
//! here, so that the writer takes them out itself, at once, whether or not
//! the reader ever reads again: when it erases a poll or gives it a new
//! data key, [`Seen::forget_key`] removes that poll's key from every memo;
//! when the key state moves (the day's key work), [`Seen::forget_keys`]
//! empties them all; and [`Seen::expire_keys`] (polld's janitor, through
//! `Store::expire_key_memos`) drops every entry older than
//! `reader::MEMO_TTL`. Only the poll's own key goes on a mix or an
//! erasure: a busy node mixes all the time, and every reader starting over
//! at each mix would unwrap nearly every key it reads.
//!
//! A read that found a poll's row before a forget may unwrap the old key
//! after the writer emptied the memos: [`Seen::remember`] keeps it out of
//! the memo then (see there).
//!
//! Promises: bounded (past [`MAX_POLLS`] it starts over: a version not
//! remembered is only not checked; a memo is held weakly, and a dropped
//! reader's goes from the list at the next registration or forget); a
//! reader pays one atomic load per read and one uncontended lock per key
//! it looks up; nothing here is written anywhere.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Instant;

use crate::error::Error;

use super::reader::KeyMemo;

/// Most polls whose versions one process remembers.
pub const MAX_POLLS: usize = 100_000;

#[derive(Default)]
pub struct Seen {
    /// Per poll, the latest version of its counts seen, and when it was
    /// seen (a read that had read it, or a commit that had written it).
    versions: Mutex<HashMap<String, (u64, Instant)>>,
    /// Versions the writer has written in a transaction not committed yet.
    staged: Mutex<Vec<(String, u64)>>,
    /// Every live reader's memo of data keys (and some dropped ones', until
    /// the next pruning).
    memos: Mutex<Vec<Weak<Mutex<KeyMemo>>>>,
    /// How many times a key (or every key) was forgotten: moved before the
    /// memos are emptied, so that an unwrap that began before cannot put
    /// its key back after ([`Seen::remember`]).
    forgets: AtomicU64,
}

/// A memo, locked; a poisoned one is used as it is (each change to it is
/// one map operation: a panic leaves no half-done entry).
pub(super) fn lock(memo: &Mutex<KeyMemo>) -> MutexGuard<'_, KeyMemo> {
    memo.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Seen {
    /// Notes that a read that began at `began` found poll `id`'s counts at
    /// `version`. An error if a later version had been seen before that
    /// read began: every read that begins later sees every commit seen
    /// before, so an older value there was put back. (A read that began
    /// before a later version was committed may see the older one.)
    pub fn check(&self, id: &str, version: u64, began: Instant) -> Result<(), Error> {
        let mut versions = self.versions.lock().unwrap_or_else(PoisonError::into_inner);
        match versions.get_mut(id) {
            Some((seen, at)) if *seen > version && *at < began => {
                let seen = *seen;
                drop(versions);
                Err(put_back(id, version, seen))
            }
            Some(_) if version == 0 => Ok(()),
            Some((seen, at)) => {
                if version > *seen {
                    *seen = version;
                    *at = Instant::now();
                }
                Ok(())
            }
            None => {
                if versions.len() >= MAX_POLLS {
                    versions.clear();
                }
                versions.insert(id.to_owned(), (version, Instant::now()));
                Ok(())
            }
        }
    }

    /// As [`Seen::check`], for a read inside the writer's open transaction,
    /// which sees that transaction's own writes: refused the same way, but
    /// noted only once the transaction commits, as [`Seen::stage`] notes a
    /// write. Noted at once, a version that transaction wrote and read back
    /// (the writer's cache starting over within a batch, or another write
    /// after the batch's votes) would count as seen before it is committed:
    /// a reader that began after that read, in a snapshot without the
    /// commit, would be refused; after a rollback, every later read of the
    /// poll would be, the writer's too; and the commit, noting the
    /// transaction's earlier writes after that read, would call them put
    /// back.
    pub fn check_in_tx(&self, id: &str, version: u64, began: Instant) -> Result<(), Error> {
        let versions = self.versions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&(seen, at)) = versions.get(id)
            && seen > version
            && at < began
        {
            drop(versions);
            return Err(put_back(id, version, seen));
        }
        drop(versions);
        self.stage(id, version);
        Ok(())
    }

    /// Notes that the writer wrote poll `id`'s counts at `version`, in a
    /// transaction that [`Seen::committed`] or [`Seen::rolled_back`] ends.
    pub fn stage(&self, id: &str, version: u64) {
        self.staged.lock().unwrap_or_else(PoisonError::into_inner).push((id.to_owned(), version));
    }

    /// The writer's transaction committed: its versions are seen now.
    pub fn committed(&self) {
        let staged = std::mem::take(&mut *self.staged.lock().unwrap_or_else(PoisonError::into_inner));
        for (id, version) in staged {
            let _ = self.check(&id, version, Instant::now());
        }
    }

    /// How many versions the writer's transaction has staged so far: a
    /// mark for [`Seen::rolled_back_to`].
    pub fn staged_mark(&self) -> usize {
        self.staged.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// A savepoint of the writer's transaction was rolled back: the
    /// versions it staged since `mark` never were.
    pub fn rolled_back_to(&self, mark: usize) {
        self.staged.lock().unwrap_or_else(PoisonError::into_inner).truncate(mark);
    }

    /// The writer's transaction was rolled back: its versions never were.
    pub fn rolled_back(&self) {
        self.staged.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }

    /// Forgets poll `id` (erased: its versions start anew if an id is ever
    /// reused, which random ids make moot).
    pub fn forget(&self, id: &str) {
        self.versions.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
    }

    /// Registers a reader's memo of data keys, for the writer and the
    /// janitor to empty ([`Seen::forget_key`], [`Seen::expire_keys`]).
    pub(super) fn register(&self, memo: &Arc<Mutex<KeyMemo>>) {
        let mut memos = self.memos.lock().unwrap_or_else(PoisonError::into_inner);
        memos.retain(|m| m.strong_count() > 0);
        memos.push(Arc::downgrade(memo));
    }

    /// Runs `f` on every registered memo that lives, under its lock, and
    /// drops the dead ones from the list.
    fn each_memo(&self, mut f: impl FnMut(&mut KeyMemo)) {
        let mut memos = self.memos.lock().unwrap_or_else(PoisonError::into_inner);
        memos.retain(|m| match m.upgrade() {
            Some(memo) => {
                f(&mut lock(&memo));
                true
            }
            None => false,
        });
    }

    /// Removes poll `id`'s data key from every reader's memo (the poll was
    /// erased, or mixed under a new data key), zeroized as it drops. A read
    /// using it holds its own reference until it ends.
    pub fn forget_key(&self, id: &str) {
        self.forgets.fetch_add(1, Ordering::AcqRel);
        self.each_memo(|memo| memo.forget(id));
    }

    /// Empties every reader's memo (the key state moved: every key is
    /// wrapped anew, or gone).
    pub fn forget_keys(&self) {
        self.forgets.fetch_add(1, Ordering::AcqRel);
        self.each_memo(KeyMemo::clear);
    }

    /// Drops, from every reader's memo, each key remembered for
    /// `reader::MEMO_TTL` or longer as of `now`.
    pub fn expire_keys(&self, now: Instant) {
        self.each_memo(|memo| memo.expire(now));
    }

    /// How many times a key was forgotten so far: a reader takes it before
    /// it reads a row whose key it may unwrap, for [`Seen::remember`].
    pub fn forgets(&self) -> u64 {
        self.forgets.load(Ordering::Acquire)
    }

    /// Runs `insert` on `memo`, under its lock, only if no key was
    /// forgotten since [`Seen::forgets`] answered `since`.
    ///
    /// Why that is enough: a read that found a poll's row before the
    /// writer's commit took `since` before the commit, hence before the
    /// count moved. If this lock comes before the writer's of the same
    /// memo, the writer removes what is inserted here; if it comes after,
    /// the count had moved before the writer took that lock, so it is seen
    /// here and nothing is inserted. Any forget counts, not only one of
    /// this poll: the window is one read's (a mix in it costs one unwrap
    /// more at the next read, not a wrong key).
    pub(super) fn remember(&self, memo: &Mutex<KeyMemo>, since: u64, insert: impl FnOnce(&mut KeyMemo)) {
        let mut memo = lock(memo);
        if self.forgets.load(Ordering::Acquire) == since {
            insert(&mut memo);
        }
    }

    /// How many memos are registered, dead or alive.
    #[cfg(test)]
    fn registered(&self) -> usize {
        self.memos.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

/// The error of a read of poll `id`'s counts at `version` after `seen` was
/// seen, said on stderr too.
fn put_back(id: &str, version: u64, seen: u64) -> Error {
    eprintln!(
        "anonpoll: poll {id}'s counts read at version {version}, but version {seen} was read or \
         written before that read began: an older value was put back in the database (pollctl check)"
    );
    Error::internal(anyhow::anyhow!("the counts of a poll were rolled back"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::reader::MEMO_TTL;

    /// What a savepoint rolled back staged is never noted; what came before
    /// it in the transaction is, at the commit.
    #[test]
    fn versions_staged_in_a_rolled_back_savepoint_are_never_seen() {
        let seen = Seen::default();
        seen.stage("p", 5);
        let mark = seen.staged_mark();
        seen.stage("p", 6);
        seen.stage("q", 2);
        seen.rolled_back_to(mark);
        seen.committed();
        let later = Instant::now();
        assert!(seen.check("p", 5, later).is_ok(), "6 was never committed");
        assert!(seen.check("q", 1, later).is_ok(), "q's 2 neither");
        assert!(seen.check("p", 4, later).is_err(), "5 was");
    }

    #[test]
    fn an_older_version_than_one_seen_before_the_read_began_is_refused() {
        let seen = Seen::default();
        let early = Instant::now();
        seen.check("p", 3, early).unwrap();
        seen.check("p", 3, Instant::now()).unwrap();
        seen.check("p", 5, Instant::now()).unwrap();
        assert!(seen.check("p", 4, early).is_ok(), "a read that began before version 5 was seen");
        assert!(seen.check("p", 4, Instant::now()).is_err(), "put back");
        // The writer's versions count once committed, never if rolled back.
        seen.stage("q", 7);
        seen.rolled_back();
        seen.check("q", 2, Instant::now()).unwrap();
        seen.stage("q", 7);
        seen.committed();
        assert!(seen.check("q", 6, Instant::now()).is_err());
        seen.forget("p");
        seen.check("p", 1, Instant::now()).unwrap();
    }

    /// A memo with a key for each of `polls`, remembered at `at`.
    fn memo_of(seen: &Seen, polls: &[&str], at: Instant) -> Arc<Mutex<KeyMemo>> {
        let memo = Arc::new(Mutex::new(KeyMemo::default()));
        seen.register(&memo);
        for id in polls {
            seen.remember(&memo, seen.forgets(), |m| m.insert_for_tests(id, at));
        }
        memo
    }

    fn ids(memo: &Mutex<KeyMemo>) -> Vec<String> {
        lock(memo).ids()
    }

    #[test]
    fn a_forgotten_key_leaves_every_memo_at_once() {
        let seen = Seen::default();
        let now = Instant::now();
        let (one, two) = (memo_of(&seen, &["a", "b"], now), memo_of(&seen, &["a", "c"], now));
        seen.forget_key("a");
        assert_eq!(ids(&one), ["b"], "only the poll's own key goes");
        assert_eq!(ids(&two), ["c"]);
        seen.forget_key("nowhere");
        assert_eq!((ids(&one), ids(&two)), (vec!["b".to_owned()], vec!["c".to_owned()]));
        // The key state moved: every key, from every memo.
        seen.forget_keys();
        assert!(ids(&one).is_empty() && ids(&two).is_empty());
        // A dropped reader's memo leaves the list.
        drop(two);
        seen.forget_key("b");
        assert_eq!(seen.registered(), 1);
        drop(one);
        let _three = memo_of(&seen, &[], now);
        assert_eq!(seen.registered(), 1, "pruned at registration");
    }

    #[test]
    fn only_keys_older_than_the_ttl_expire() {
        let seen = Seen::default();
        let now = Instant::now();
        let second = std::time::Duration::from_secs(1);
        let memo = memo_of(&seen, &["old"], now);
        seen.remember(&memo, seen.forgets(), |m| m.insert_for_tests("young", now + 10 * second));
        seen.expire_keys(now + MEMO_TTL - second);
        assert_eq!(ids(&memo), ["old", "young"]);
        seen.expire_keys(now + MEMO_TTL);
        assert_eq!(ids(&memo), ["young"], "remembered for the TTL: gone");
        seen.expire_keys(now + MEMO_TTL + 10 * second);
        assert!(ids(&memo).is_empty());
    }

    #[test]
    fn a_key_unwrapped_across_a_forget_is_not_remembered() {
        let seen = Seen::default();
        let memo = memo_of(&seen, &[], Instant::now());
        let forgets: [&dyn Fn(&Seen); 2] = [&|s| s.forget_key("p"), &|s| s.forget_keys()];
        for forget in forgets {
            // The reader takes the count, reads the row; the writer forgets
            // the key (nothing to remove yet); the reader unwraps, inserts.
            let since = seen.forgets();
            forget(&seen);
            seen.remember(&memo, since, |m| m.insert_for_tests("p", Instant::now()));
            assert!(ids(&memo).is_empty(), "a key from before the forget was remembered");
        }
        // From after it, it is.
        seen.remember(&memo, seen.forgets(), |m| m.insert_for_tests("p", Instant::now()));
        assert_eq!(ids(&memo), ["p"]);
    }
}
