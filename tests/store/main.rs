//! The store under stress and on both engines: `engines` (one body run on
//! SQLite and on PostgreSQL through the library's store API), `durability`
//! (an acknowledged write survives `kill -9`), `fulldisk`, `write_path`
//! (the writer stalled from outside) and `pg_harness` (the PostgreSQL test
//! harness itself, before any test leans on it).
//!
//! What belongs here: a test of what the store promises whatever the front
//! end. Every test takes the machine lock first (tests/common/machine.rs):
//! `durability` runs alone.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod durability;
mod engines;
mod fulldisk;
mod pg_harness;
mod write_path;
