//! `DELETE /api/polls/{id}`: the token, 204, the poll gone and others kept.

use serde_json::json;

use crate::assert_401;
use crate::common::*;

#[test]
fn delete_requires_the_polls_token() {
    let server = Server::start();
    let poll = server.create_default();
    let other = server.create_default();
    assert_401(&server.request("DELETE", &poll.path()).send(), false);
    assert_401(&server.delete(&poll.id, "nope"), true);
    assert_401(&server.delete(&poll.id, &other.token), true);
    let resp = server.request("DELETE", &poll.path()).header("Authorization", &format!("Basic {}", poll.token)).send();
    assert_problem(&resp, 401);
    server.get(&poll.path()).assert_status(200);
}

#[test]
fn delete_returns_204_and_poll_is_gone() {
    let server = Server::start();
    let poll = server.create_public();
    let resp = server.delete(&poll.id, &poll.token);
    resp.assert_status(204);
    assert!(resp.body.is_empty(), "204 with a body: {}", resp.describe());
    assert!(resp.header("content-length").is_none_or(|v| v == "0"), "{}", resp.describe());
    assert_problem(&server.get(&poll.path()), 404);
    assert_problem(&server.get(&poll.results_path()), 404);
    assert_problem(&server.get_auth(&poll.results_path(), &poll.token), 404);
    assert_problem(&server.patch_json(&poll.id, &poll.token, &json!({"closed": true})), 404);
    assert_problem(&server.delete(&poll.id, &poll.token), 404);
}

#[test]
fn delete_leaves_other_polls_alone() {
    let server = Server::start();
    let a = server.create_default();
    let b = server.create_default();
    server.delete(&a.id, &a.token).assert_status(204);
    server.get(&b.path()).assert_status(200);
    server.get_auth(&b.results_path(), &b.token).assert_status(200);
}

#[test]
fn delete_unknown_poll_is_404() {
    let server = Server::start();
    let poll = server.create_default();
    assert_problem(&server.delete("AAAAAAAAAAAAAAAA", &poll.token), 404);
}
