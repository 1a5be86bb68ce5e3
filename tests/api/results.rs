//! `GET /api/polls/{id}/results`: public results are open, private ones need
//! the poll's own bearer token (401 otherwise), counts and status.

use serde_json::json;

use crate::assert_401;
use crate::common::*;

#[test]
fn public_results_need_no_token() {
    let server = Server::start();
    let poll = server.create_public();
    let resp = server.get(&poll.results_path());
    resp.assert_status(200);
    assert_eq!(resp.json()["id"], poll.id.as_str());
}

#[test]
fn private_results_without_token_are_401() {
    let server = Server::start();
    let poll = server.create_default();
    assert_401(&server.get(&poll.results_path()), false);
}

#[test]
fn private_results_with_wrong_token_are_401_invalid_token() {
    let server = Server::start();
    let poll = server.create_default();
    let mut wrong = poll.token.clone();
    let last = if wrong.ends_with('A') { "B" } else { "A" };
    wrong.replace_range(42.., last);
    for token in [wrong.as_str(), "x", &"A".repeat(43), &poll.token[..42]] {
        assert_401(&server.get_auth(&poll.results_path(), token), true);
    }
}

#[test]
fn another_polls_token_is_401_invalid_token() {
    let server = Server::start();
    let poll = server.create_default();
    let other = server.create_default();
    assert_401(&server.get_auth(&poll.results_path(), &other.token), true);
}

#[test]
fn non_bearer_schemes_are_401() {
    let server = Server::start();
    let poll = server.create_default();
    for value in [
        format!("Basic {}", poll.token),
        format!("Token {}", poll.token),
        poll.token.clone(),
        "Bearer".to_string(),
        "Bearer ".to_string(),
    ] {
        let resp = server.request("GET", &poll.results_path()).header("Authorization", &value).send();
        assert_problem(&resp, 401);
        assert!(resp.has_header("www-authenticate"), "{}", resp.describe());
    }
}

#[test]
fn correct_token_reads_private_results() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server.get_auth(&poll.results_path(), &poll.token);
    resp.assert_status(200);
    assert_eq!(resp.media_type().as_deref(), Some("application/json"));
}

#[test]
fn bearer_scheme_is_case_insensitive() {
    // RFC 9110 §11.1: the auth scheme is case-insensitive.
    let server = Server::start();
    let poll = server.create_default();
    let resp =
        server.request("GET", &poll.results_path()).header("Authorization", &format!("bearer {}", poll.token)).send();
    resp.assert_status(200);
}

#[test]
fn token_in_query_string_does_not_authenticate() {
    let server = Server::start();
    let poll = server.create_default();
    for q in ["access_token", "token", "adminToken"] {
        let resp = server.get(&format!("{}?{q}={}", poll.results_path(), poll.token));
        assert_eq!(resp.status, 401, "{}", resp.describe());
    }
}

#[test]
fn results_of_a_poll_without_votes() {
    let server = Server::start();
    let poll = server.create_default();
    let r = server.get_auth(&poll.results_path(), &poll.token).json();
    assert_eq!(r["id"], poll.id.as_str());
    assert_eq!(r["status"], "open");
    assert_eq!(r["totalResponses"], 0);
    assert_eq!(r["responsesByDay"], json!([]));
    let qs = r["questions"].as_array().expect("questions");
    assert_eq!(qs.len(), 2);
    assert_eq!(qs[0]["label"], "Where shall we eat?");
    assert_eq!(qs[0]["type"], "single");
    assert_eq!(qs[0]["answered"], 0);
    let labels: Vec<&str> = qs[0]["options"].as_array().unwrap().iter().map(|o| o["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["Pizza", "Sushi", "Salad"]);
    for q in qs {
        for o in q["options"].as_array().unwrap() {
            assert_eq!(o["count"], 0);
            assert_eq!(o["percent"].as_f64(), Some(0.0));
        }
    }
}

#[test]
fn results_show_closed_status() {
    let server = Server::start();
    let poll = server.create_public();
    server.patch_json(&poll.id, &poll.token, &json!({"closed": true})).assert_status(200);
    assert_eq!(server.get(&poll.results_path()).json()["status"], "closed");
}
