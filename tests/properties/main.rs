//! Property tests: arbitrary and near-valid input to every parser and
//! validator of the JSON API (`parsers`, judged against the OpenAPI
//! document's schemas by `parsers::schema_agreement`) and of the web side
//! through the real page handler (`web`). Whatever arrives, the answer is a
//! clear refusal or a success, never a 500 or a panic.
//!
//! What belongs here: a proptest over an entry point. Case counts are
//! proptest's default (256) unless `PROPTEST_CASES` is set.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod parsers;
mod web;
