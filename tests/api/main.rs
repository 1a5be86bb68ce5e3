//! The interfaces programs build on, black-box: the polld JSON API over raw
//! HTTP/1.1 (one module per resource or concern), media over HTTP (`media`,
//! `media_streams`) and `pollctl` as a process (`pollctl`).
//!
//! What belongs here: a test that drives a real polld (or pollctl) the way
//! an API client or an operator's script does and judges the answer. Pages
//! go to tests/web, the data rules to tests/privacy, the store's own
//! promises to tests/store, deployment and load to tests/operations.
//! The whole binary also runs on PostgreSQL (scripts/test's second pass).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod bodies;
mod concurrency;
mod create;
mod delete;
mod edits;
mod health;
mod invites;
mod lifecycle;
mod media;
mod media_streams;
mod methods;
mod openapi;
mod patch;
mod pollctl;
mod question_types;
mod rate_limit;
mod read;
mod results;
mod schedule;
mod settings;
mod validation;
mod vote_changes;

use common::{Response, assert_422, assert_problem};

/// Asserts a 401 with a `Bearer` challenge, naming `invalid_token` when a
/// token was sent but is not this poll's (shared by results, patch, delete).
fn assert_401(resp: &Response, invalid_token: bool) {
    assert_problem(resp, 401);
    let www =
        resp.header("www-authenticate").unwrap_or_else(|| panic!("401 without WWW-Authenticate: {}", resp.describe()));
    assert!(www.starts_with("Bearer"), "WWW-Authenticate {www:?}");
    if invalid_token {
        assert!(www.contains("error=\"invalid_token\""), "WWW-Authenticate lacks error=\"invalid_token\": {www:?}");
    }
}

/// A 422's errors as `(field, message)` pairs, in order (shared by
/// question_types and validation).
fn errors(resp: &Response) -> Vec<(String, String)> {
    assert_422(resp);
    resp.json()["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["field"].as_str().unwrap().to_owned(), e["message"].as_str().unwrap().to_owned()))
        .collect()
}
