//! Methods the API does not allow (405 with `Allow`), and no endpoint that
//! takes votes: votes go only through the share page.

use serde_json::json;

use crate::common::*;

#[test]
fn collection_allows_only_post() {
    let server = Server::start();
    for method in ["PUT", "GET", "DELETE", "PATCH"] {
        let resp = server.request(method, "/api/polls").json(&valid_poll_json()).send();
        assert_problem(&resp, 405);
        let allow = resp.header("allow").unwrap_or_default();
        assert!(allow.contains("POST"), "Allow {allow:?}: {}", resp.describe());
        assert!(!allow.contains("GET"), "polls must not be listable: {allow:?}");
    }
}

#[test]
fn poll_resource_rejects_post_and_put() {
    let server = Server::start();
    let poll = server.create_default();
    for method in ["POST", "PUT"] {
        let resp = server.request(method, &poll.path()).bearer(&poll.token).json(&json!({"closed": true})).send();
        assert!(resp.status == 405 || resp.status == 404, "{}", resp.describe());
        if resp.status == 405 {
            let allow = resp.header("allow").unwrap_or_default();
            for m in ["GET", "PATCH", "DELETE"] {
                assert!(allow.contains(m), "Allow {allow:?} lacks {m}");
            }
        }
    }
    assert_eq!(server.get(&poll.path()).json()["status"], "open");
}

#[test]
fn no_endpoint_accepts_votes() {
    let server = Server::start();
    let poll = server.create_public();
    let vote = json!({"choices": [0, 1], "answers": [0, 1]});
    for (method, path) in [
        ("POST", poll.results_path()),
        ("PUT", poll.results_path()),
        ("PATCH", poll.results_path()),
        ("POST", format!("{}/votes", poll.path())),
        ("POST", format!("{}/responses", poll.path())),
        ("POST", format!("{}/vote", poll.path())),
    ] {
        let resp = server.request(method, &path).json(&vote).send();
        assert!(resp.status == 405 || resp.status == 404, "{}", resp.describe());
        if resp.status == 405 {
            assert!(resp.has_header("allow"), "405 without Allow: {}", resp.describe());
        }
    }
    let r = server.get(&poll.results_path()).json();
    assert_eq!(r["totalResponses"], 0);
}
