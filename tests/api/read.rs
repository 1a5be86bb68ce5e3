//! `GET /api/polls/{id}`: public fields only, never the token, 404 for
//! unknown or malformed ids.

use crate::common::*;

#[test]
fn get_poll_returns_public_fields() {
    let server = Server::start();
    let poll = server.create_default();
    let resp = server.get(&poll.path());
    resp.assert_status(200);
    assert_eq!(resp.media_type().as_deref(), Some("application/json"));
    let p = resp.json();
    for key in [
        "id",
        "title",
        "lang",
        "status",
        "resultsPublic",
        "createdOn",
        "expiresOn",
        "questions",
        "translations",
        "media",
        "shareUrl",
    ] {
        assert!(p.get(key).is_some(), "{key} missing from {p}");
    }
    assert_eq!(p["status"], "open");
    assert_eq!(p["questions"][0]["type"], "single");
}

#[test]
fn get_poll_never_reveals_token_or_hash() {
    let server = Server::start();
    let poll = server.create_default();
    let text = server.get(&poll.path()).text();
    let hash = sha256(poll.token.as_bytes());
    for needle in
        [poll.token.clone(), hex(&hash), hex(&hash).to_uppercase(), "adminToken".to_string(), "token".to_string()]
    {
        assert!(!text.contains(&needle), "{needle:?} in public poll: {text}");
    }
}

#[test]
fn unknown_poll_is_404() {
    let server = Server::start();
    server.create_default();
    for path in ["/api/polls/AAAAAAAAAAAAAAAA", "/api/polls/AAAAAAAAAAAAAAAA/results"] {
        assert_problem(&server.get(path), 404);
    }
}

#[test]
fn malformed_ids_are_404() {
    let server = Server::start();
    let poll = server.create_default();
    let long = format!("{}x", poll.id);
    let short = &poll.id[..15];
    for id in ["abc", long.as_str(), short, "..%2F..%2Fetc", "%00", "AAAAAAAA%27%20OR%201=1", "AAAAAAAAAAAAAAA%21"] {
        let resp = server.get(&format!("/api/polls/{id}"));
        assert_problem(&resp, 404);
        let resp = server.get_auth(&format!("/api/polls/{id}/results"), &poll.token);
        assert_problem(&resp, 404);
    }
}
