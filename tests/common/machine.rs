//! One lock over the machine for the test binaries that hold several heavy
//! kinds of test (tests/operations, tests/store): a test whose verdict
//! depends on timing, or that loads both cores on its own, runs alone
//! ([`alone`]); every other test of those binaries takes [`shared`], so it
//! runs beside others but never beside a test that runs alone.
//!
//! A test that takes neither would break the promise of [`alone`]: in those
//! binaries every test takes one, first thing.

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

static MACHINE: RwLock<()> = RwLock::new(());

/// For a test that may run beside others.
pub fn shared() -> RwLockReadGuard<'static, ()> {
    MACHINE.read().unwrap_or_else(PoisonError::into_inner)
}

/// For a test that loads the machine or times answers: it runs alone.
pub fn alone() -> RwLockWriteGuard<'static, ()> {
    MACHINE.write().unwrap_or_else(PoisonError::into_inner)
}
