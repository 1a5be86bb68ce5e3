//! What this process has seen of the polls it serves, shared by its writer
//! and its readers: the latest version of each poll's counts, and how many
//! times it has erased or re-keyed anything.
//!
//! Why: a poll's sealed counts carry a version that grows with every write
//! (`rows::State`). Someone who can write to the database could put an
//! older sealed value back at its place; it would open, since it was
//! sealed there. Remembering the latest version read or written, a read
//! of an older one fails instead ([`Seen::check`]). And a reader keeps the
//! data keys it unwrapped (`reader`'s memo): when the writer erases a poll
//! or gives it a new data key, [`Seen::forget_keys`] tells every reader to
//! drop what it keeps, so that no key outlives its poll in this process's
//! memory for longer than a read takes.
//!
//! Promises: bounded (past [`MAX_POLLS`] it starts over: a version not
//! remembered is only not checked); nothing here is written anywhere.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use crate::error::Error;

/// Most polls whose versions one process remembers.
pub const MAX_POLLS: usize = 100_000;

#[derive(Default)]
pub struct Seen {
    /// Per poll, the latest version of its counts seen, and when it was
    /// seen (a read that had read it, or a commit that had written it).
    versions: Mutex<HashMap<String, (u64, Instant)>>,
    /// Versions the writer has written in a transaction not committed yet.
    staged: Mutex<Vec<(String, u64)>>,
    /// Grows each time a poll was erased or given a new data key.
    key_epoch: AtomicU64,
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
                eprintln!(
                    "anonpoll: poll {id}'s counts read at version {version}, but version {seen} was read or \
                     written before that read began: an older value was put back in the database (pollctl check)"
                );
                Err(Error::internal(anyhow::anyhow!("the counts of a poll were rolled back")))
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

    /// The writer's transaction was rolled back: its versions never were.
    pub fn rolled_back(&self) {
        self.staged.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }

    /// Forgets poll `id` (erased: its versions start anew if an id is ever
    /// reused, which random ids make moot).
    pub fn forget(&self, id: &str) {
        self.versions.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
    }

    /// Tells readers that a data key they may keep is gone.
    pub fn forget_keys(&self) {
        self.key_epoch.fetch_add(1, Ordering::Release);
    }

    /// The count [`Seen::forget_keys`] moves.
    pub fn key_epoch(&self) -> u64 {
        self.key_epoch.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let e = seen.key_epoch();
        seen.forget_keys();
        assert_eq!(seen.key_epoch(), e + 1);
    }
}
