//! The data rules, each as a test that fails on a breach, on the engine the
//! run names (scripts/test runs this binary on SQLite, then on PostgreSQL):
//! `rules` holds no cookies, no client IP, dates to the day, tokens stored
//! hashed, erasure down to the bytes of every file; `erasure` holds the
//! erasure that survives copies (keys, leases, backups, old WAL).
//!
//! What belongs here: a test that reads what anonpoll leaves behind (files,
//! logs, headers, a cluster's heap and WAL) to catch a broken promise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod erasure;
mod rules;
